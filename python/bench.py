#!/usr/bin/env python3
"""Overhead of the Python package (measured figures in the repository README).

    python python/bench.py [--cli target/release/gpdp]

* `account`: one call from Python (the Figure 3 setting, tight bound), mean
  over 20 000 calls;
* `account_batch` on 10⁵ rows (ridge varies per row), best of 3;
* the same 10⁵ rows through the CLI's `gpdp account --batch` (CSV in and
  out), for comparison;
* `Mechanism.release` of one path at 1000 points (n = 400, 2-D) against
  scikit-learn's `GaussianProcessRegressor.sample_y` with the same fixed
  kernel (not private; OPENBLAS_NUM_THREADS=1 is set for both).
"""

import argparse
import os
import subprocess
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import gpdp  # noqa: E402

FIG3 = dict(kernel="exponential", lengthscale=1.0, domain="interval:0,1", n=10, ridge=1.0, scale=5.0, delta=0.05)


def best(f, k=3):
    ts = []
    for _ in range(k):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return min(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "gpdp"))
    a = ap.parse_args()
    n = 20_000
    t = time.perf_counter()
    for _ in range(n):
        gpdp.account(**FIG3)
    print(f"account: {(time.perf_counter() - t) / n * 1e6:.2f} µs per call")

    rows = 100_000
    ridge = np.linspace(0.5, 2.0, rows)
    kw = dict(FIG3)
    kw.pop("ridge")
    tb = best(lambda: gpdp.account_batch(ridge=ridge, **kw))
    print(f"account_batch: {rows} rows in {tb:.3f} s ({tb / rows * 1e6:.2f} µs per row)")
    with tempfile.TemporaryDirectory() as d:
        csv = os.path.join(d, "b.csv")
        np.savetxt(csv, ridge, header="ridge", comments="", fmt="%.17g")
        args = [a.cli, "account", "--batch", csv, "--out", os.path.join(d, "o.csv"), "--force"]
        for k, v in kw.items():
            args += [f"--{k.replace('_', '-')}", str(v)]
        tc = best(lambda: subprocess.run(args, check=True, capture_output=True))
    print(f"gpdp account --batch (CLI, CSV in and out): {rows} rows in {tc:.3f} s")

    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (400, 2))
    y = np.clip(np.sin(4 * X[:, 0]) * np.cos(3 * X[:, 1]), -1, 1)
    Q = rng.uniform(0, 1, (1000, 2))
    m = gpdp.Mechanism(kernel="matern32", lengthscale=0.2, domain="box:0,1,0,1", n=400, ridge=3.0, scale=1.0, delta=1e-5, response_bound=1.0)
    tg = best(lambda: m.release(X, y, Q))
    k = ConstantKernel(1.0, "fixed") * Matern(0.2, "fixed", nu=1.5)
    gp = GaussianProcessRegressor(k, alpha=9.0, optimizer=None)
    ts = best(lambda: gp.fit(X, y).sample_y(Q, 1, random_state=0))
    print(f"release of 1 path at 1000 points (n = 400): gpdp {tg * 1e3:.1f} ms, scikit-learn sample_y {ts * 1e3:.1f} ms (ratio {ts / tg:.1f}×)")


if __name__ == "__main__":
    main()
