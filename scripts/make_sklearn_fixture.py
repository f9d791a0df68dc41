#!/usr/bin/env python3
"""Write the scikit-learn reference fixture for the GP posterior.

Output: crates/gpdp/tests/data/sklearn_posterior.csv (path relative to the
repository root), columns

    case,kernel,lengthscale,ridge,role,x1,x2,y,mean,variance

For every case, training inputs are uniform in [0,1]^d (d = 1 or 2), responses
uniform in [-1,1], and query inputs uniform in [0,1]^d. Each case is fitted with

    GaussianProcessRegressor(kernel=K(length_scale=ell, length_scale_bounds="fixed"),
                             alpha=r**2, optimizer=None, normalize_y=False)

where K is Matern(nu=0.5) ("exponential"), Matern(nu=1.5) ("matern32"),
Matern(nu=2.5) ("matern52") or RBF ("squared-exponential"); all have unit
amplitude, k(x,x) = 1. Rows with role=train hold the training points (mean and
variance empty); rows with role=query hold the query points with sklearn's
posterior mean and latent posterior variance (std**2 from
predict(return_std=True); it does not include the ridge/noise r^2). x2 is
empty for 1-D cases. Floats are written with repr() (round-trip precision).

The output is deterministic: one fixed numpy seed (SEED below) drives all the
random draws.

Re-run (from the repository root):

    python3 -m venv /work/venv
    /work/venv/bin/pip install numpy scipy scikit-learn
    /work/venv/bin/python scripts/make_sklearn_fixture.py

The committed fixture was produced with scikit-learn 1.9.1, numpy 2.4.6,
scipy 1.17.1 (Python 3.11.7); the script prints the versions it ran with.
"""

import csv
import os
import sys

import numpy as np
import scipy
import sklearn
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, Matern

SEED = 20240611

# (case name, kernel name, dimension, lengthscale, ridge r, n_train, n_query)
CASES = [
    ("exponential-1d-a", "exponential", 1, 0.2, 0.1, 25, 15),
    ("exponential-1d-b", "exponential", 1, 1.0, 1.0, 30, 15),
    ("exponential-2d-a", "exponential", 2, 0.5, 0.5, 40, 15),
    ("exponential-2d-b", "exponential", 2, 1.0, 0.1, 20, 15),
    ("matern32-1d", "matern32", 1, 0.5, 0.5, 30, 15),
    ("matern32-2d", "matern32", 2, 0.2, 1.0, 25, 15),
    ("matern52-2d-a", "matern52", 2, 0.5, 0.1, 35, 15),
    ("matern52-1d", "matern52", 1, 1.0, 0.5, 20, 15),
    ("squared-exponential-1d", "squared-exponential", 1, 0.2, 0.5, 30, 15),
    ("squared-exponential-2d", "squared-exponential", 2, 0.5, 1.0, 25, 15),
]

HEADER = ["case", "kernel", "lengthscale", "ridge", "role", "x1", "x2", "y", "mean", "variance"]


def make_kernel(name, ell):
    if name == "exponential":
        return Matern(length_scale=ell, length_scale_bounds="fixed", nu=0.5)
    if name == "matern32":
        return Matern(length_scale=ell, length_scale_bounds="fixed", nu=1.5)
    if name == "matern52":
        return Matern(length_scale=ell, length_scale_bounds="fixed", nu=2.5)
    if name == "squared-exponential":
        return RBF(length_scale=ell, length_scale_bounds="fixed")
    raise ValueError(name)


def fmt(v):
    return repr(float(v))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_path = os.path.join(
        here, os.pardir, "crates", "gpdp", "tests", "data", "sklearn_posterior.csv"
    )
    out_path = os.path.normpath(out_path)

    print(
        f"python {sys.version.split()[0]}, scikit-learn {sklearn.__version__}, "
        f"numpy {np.__version__}, scipy {scipy.__version__}"
    )

    rng = np.random.default_rng(SEED)
    rows = []
    for case, kname, dim, ell, r, n_train, n_query in CASES:
        x_train = rng.uniform(0.0, 1.0, size=(n_train, dim))
        y_train = rng.uniform(-1.0, 1.0, size=n_train)
        x_query = rng.uniform(0.0, 1.0, size=(n_query, dim))

        kernel = make_kernel(kname, ell)
        gpr = GaussianProcessRegressor(
            kernel=kernel, alpha=r**2, optimizer=None, normalize_y=False
        )
        gpr.fit(x_train, y_train)
        mean, std = gpr.predict(x_query, return_std=True)
        var = std**2

        # Independent check of sklearn with a plain dense solve.
        k_xx = kernel(x_train) + r**2 * np.eye(n_train)
        k_qx = kernel(x_query, x_train)
        mean_chk = k_qx @ np.linalg.solve(k_xx, y_train)
        var_chk = 1.0 - np.einsum("ij,ji->i", k_qx, np.linalg.solve(k_xx, k_qx.T))
        err_m = np.max(np.abs(mean - mean_chk))
        err_v = np.max(np.abs(var - var_chk))
        print(
            f"{case:24s} {kname:20s} d={dim} ell={ell} r={r} n={n_train} q={n_query} "
            f"|mean-check|={err_m:.1e} |var-check|={err_v:.1e} min var={var.min():.3e}"
        )
        assert err_m < 1e-8 and err_v < 1e-8, case

        common = [case, kname, fmt(ell), fmt(r)]
        for i in range(n_train):
            x2 = fmt(x_train[i, 1]) if dim == 2 else ""
            rows.append(common + ["train", fmt(x_train[i, 0]), x2, fmt(y_train[i]), "", ""])
        for i in range(n_query):
            x2 = fmt(x_query[i, 1]) if dim == 2 else ""
            rows.append(
                common + ["query", fmt(x_query[i, 0]), x2, "", fmt(mean[i]), fmt(var[i])]
            )

    with open(out_path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(HEADER)
        w.writerows(rows)
    print(f"wrote {len(rows)} rows, {len(CASES)} cases to {out_path}")


if __name__ == "__main__":
    main()
