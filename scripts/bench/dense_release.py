#!/usr/bin/env python3
"""The obvious numpy/scipy implementation of one exact posterior sample path on a grid, for
side-by-side timing with `gpdp release --sampler dense` (issue 11).

    OPENBLAS_NUM_THREADS=1 python3 scripts/bench/dense_release.py DATA.csv GRID LENGTHSCALE RIDGE SCALE

Exponential kernel on [0,1]^2, GRID x GRID query points (end points included), one draw:
mean = K(Q,X) (K + r^2 I)^-1 y, C = s^2 (K(Q,Q) - K(Q,X)(K + r^2 I)^-1 K(X,Q)) + j I, f = mean + chol(C) z.
Prints wall seconds and peak RSS (MB)."""
import resource
import sys
import time

import numpy as np
from scipy.linalg import cho_factor, cho_solve, cholesky, solve_triangular
from scipy.spatial.distance import cdist


def main():
    path, grid, ell, r, s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
    t0 = time.perf_counter()
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    x, y = data[:, :2], data[:, 2]
    axis = np.linspace(0.0, 1.0, grid)
    q = np.stack(np.meshgrid(axis, axis, indexing="xy"), axis=-1).reshape(-1, 2)
    k = lambda a, b: np.exp(-cdist(a, b) / ell)
    a = k(x, x) + r * r * np.eye(len(x))
    fac = cho_factor(a, lower=True)
    kqx = k(q, x)
    mean = kqx @ cho_solve(fac, y)
    v = solve_triangular(fac[0], kqx.T, lower=True)
    del kqx
    c = k(q, q)
    c -= v.T @ v
    c *= s * s
    m = len(q)
    c[np.diag_indices(m)] += s * s * max(1e-10, 100 * m * np.finfo(float).eps)
    lc = cholesky(c, lower=True, overwrite_a=True, check_finite=False)
    f = mean + lc @ np.random.default_rng(1).standard_normal(m)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"numpy: m = {m}, n = {len(x)}: wall {wall:.2f} s, peak {peak:.0f} MB, f[0] = {f[0]:.4f}")


if __name__ == "__main__":
    main()
