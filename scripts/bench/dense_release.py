#!/usr/bin/env python3
"""The obvious numpy/scipy implementation of exact posterior sample paths on a grid, for
side-by-side timing with `gpdp release` (scripts/bench/scaling.py runs both).

    OPENBLAS_NUM_THREADS=1 python3 scripts/bench/dense_release.py DATA.csv DIM GRID KERNEL LENGTHSCALE RIDGE SCALE

DIM 1 (domain [0,1], GRID points) or 2 ([0,1]^2, GRID x GRID points), KERNEL exponential or
matern32, one draw: mean = K(Q,X)(K + r^2 I)^-1 y, C = s^2 (K(Q,Q) - K(Q,X)(K + r^2 I)^-1 K(X,Q)) + j I,
f = mean + chol(C) z, j = s^2 max(1e-10, 100 m u). Prints wall seconds and peak RSS."""
import resource
import sys
import time

import numpy as np
from scipy.linalg import cho_factor, cho_solve, cholesky, solve_triangular
from scipy.spatial.distance import cdist


def kernel(name, ell):
    if name == "exponential":
        return lambda a, b: np.exp(-cdist(a, b) / ell)
    if name == "matern32":
        def k(a, b):
            t = np.sqrt(3.0) * cdist(a, b) / ell
            return (1.0 + t) * np.exp(-t)
        return k
    raise SystemExit(f"unknown kernel {name}")


def main():
    path, dim, grid, name = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    ell, r, s = float(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7])
    t0 = time.perf_counter()
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    x, y = data[:, :dim], data[:, dim]
    axis = np.linspace(0.0, 1.0, grid)
    if dim == 1:
        q = axis[:, None]
    else:
        q = np.stack(np.meshgrid(axis, axis, indexing="xy"), axis=-1).reshape(-1, 2)
    k = kernel(name, ell)
    fac = cho_factor(k(x, x) + r * r * np.eye(len(x)), lower=True)
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
