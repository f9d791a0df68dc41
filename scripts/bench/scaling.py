#!/usr/bin/env python3
"""Issue 11's scaling table: `gpdp release` on each size, side by side with the obvious
numpy/scipy implementation (scripts/bench/dense_release.py) where that fits in memory.

    python3 scripts/bench/scaling.py [--gpdp target/release/gpdp] [--threads 1|2] [--skip-numpy]

Both run as separate processes under the same thread count (RAYON_NUM_THREADS for gpdp,
OPENBLAS_NUM_THREADS for numpy); wall time and peak RSS from /usr/bin/time. Synthetic data
(seeded), seeded releases (--seed; NOT private — timing only). Prints a markdown table."""
import argparse
import math
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# (label, dim, n, grid, kernel, lengthscale, ridge, scale, extra gpdp flags, numpy feasible)
ROWS = [
    ("1-D Matérn-3/2, n = 10³, m = 10⁴", 1, 1_000, 10_000, "matern32", 0.05, 3.0, 1.0, [], True),
    ("1-D Matérn-3/2, n = 10⁴, m = 10⁵", 1, 10_000, 100_000, "matern32", 0.05, 3.0, 1.0, [], False),
    ("1-D Matérn-3/2, n = 10⁵, m = 10⁶", 1, 100_000, 1_000_000, "matern32", 0.05, 3.0, 1.0, [], False),
    ("2-D exp, 120 × 120, 400 off-lattice sensors (dense)", 2, 400, 120, "exponential", 0.14, 5.7, 0.12, [], True),
    ("2-D exp, 60 × 60, 400 sensors, --snap grid", 2, 400, 60, "exponential", 0.14, 5.7, 0.12, ["--snap", "grid"], True),
    ("2-D exp, 500 × 500, 2 000 sensors, --snap grid", 2, 2_000, 500, "exponential", 0.1, 3.0, 1.0, ["--snap", "grid"], False),
    ("2-D exp, 1000 × 1000, 10⁴ sensors, --snap grid", 2, 10_000, 1000, "exponential", 0.1, 3.0, 1.0, ["--snap", "grid"], False),
]


def write_data(path, dim, n, seed):
    rng = random.Random(seed)
    with open(path, "w") as f:
        f.write("x,y\n" if dim == 1 else "x1,x2,y\n")
        for _ in range(n):
            p = [rng.random() for _ in range(dim)]
            v = math.sin(5 * p[0]) * (math.cos(4 * p[1]) if dim == 2 else 1.0) + rng.gauss(0, 0.2)
            f.write(",".join(f"{c:.9f}" for c in p) + f",{max(-1.0, min(1.0, v)):.6f}\n")


def timed(cmd, env):
    out = subprocess.run(["/usr/bin/time", "-f", "TIME %e %M"] + cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    line = [l for l in out.stderr.splitlines() if l.startswith("TIME ")][-1].split()
    return float(line[1]), float(line[2]) / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpdp", default=os.path.join(HERE, "..", "..", "target", "release", "gpdp"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--skip-numpy", action="store_true")
    a = ap.parse_args()
    env = dict(os.environ, RAYON_NUM_THREADS=str(a.threads), OPENBLAS_NUM_THREADS=str(a.threads),
               OMP_NUM_THREADS=str(a.threads), MKL_NUM_THREADS=str(a.threads))
    print(f"threads: {a.threads} (RAYON_NUM_THREADS for gpdp, OPENBLAS_NUM_THREADS for numpy)\n")
    print("| case | m | gpdp sampler | gpdp wall | gpdp peak | numpy wall | numpy peak | time ratio | memory ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, dim, n, grid, kern, ell, r, s, extra, feasible) in enumerate(ROWS):
            data = os.path.join(tmp, f"d{i}.csv")
            write_data(data, dim, n, seed=i + 1)
            out = os.path.join(tmp, f"o{i}")
            domain = "interval:0,1" if dim == 1 else "box:0,1,0,1"
            cmd = [a.gpdp, "release", "--response-bound", "1", "--data", data, "--kernel", kern, "--lengthscale", str(ell), "--domain",
                   domain, "--ridge", str(r), "--scale", str(s), "--delta", "1e-5", "--grid", str(grid), "--out",
                   out, "--seed", "1", "--quiet"] + extra
            g_wall, g_peak = timed(cmd, env)
            import json
            with open(os.path.join(out, "report.json")) as f:
                method = json.load(f)["sampler"]["method"]
            m = grid if dim == 1 else grid * grid
            if feasible and not a.skip_numpy:
                np_cmd = [sys.executable, os.path.join(HERE, "dense_release.py"), data, str(dim), str(grid), kern,
                          str(ell), str(r), str(s)]
                n_wall, n_peak = timed(np_cmd, env)
                row = f"{n_wall:.2f} s | {n_peak:.0f} MB | {g_wall / n_wall:.2g} | {g_peak / n_peak:.2g}"
            else:
                need = 8.0 * m * m / 2**30
                row = f"— (needs the {m} × {m} covariance, {need:.0f} GiB) | | | "
            print(f"| {label} | {m} | {method} | {g_wall:.2f} s | {g_peak:.0f} MB | {row} |", flush=True)


if __name__ == "__main__":
    main()
