#!/usr/bin/env python3
"""Write the numpy/scipy reference fixture for the change-one-response accountant.

Output: crates/gpdp/tests/data/change_response.csv (relative to the repository
root), one row per case:

    case,kernel,lengthscale,ridge,scale,gp_noise,response_bound,draws,delta,covariates,mu,mu_free,epsilon,epsilon_free

and the covariates of each case in crates/gpdp/tests/data/change_response_<case>.csv
(columns x1,x2). For each case, independently of gpdp's code:

* K = k(X, X) with scipy's cdist and the kernel's closed form (unit variance);
* s_i = [K A^-1 (s^2 q I + eta^2 A)^-1]_ii with A = K + qI, q = ridge^2, from
  numpy's symmetric eigendecomposition K = U diag(lam) U^T:
  s_i = sum_j F(lam_j) U_ij^2, F(l) = l / ((l + q)(s^2 q + eta^2 (l + q)));
* mu = sqrt(L * 4 M^2 * max_i s_i); mu_free = sqrt(L) 2M / (r sqrt(1+q) sqrt(s^2+eta^2));
* epsilon(delta) of the Gaussian mechanism (Balle & Wang 2018, Thm 8):
  the root in eps of Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) = delta,
  with scipy.stats.norm (log-space for the second term) and brentq at xtol 1e-14.

Deterministic: numpy's default_rng with the SEED below.

Re-run (from the repository root):

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy scipy
    /tmp/venv/bin/python scripts/make_change_response_fixture.py
"""

import csv
import math
import os

import numpy as np
from scipy.optimize import brentq
from scipy.spatial.distance import cdist
from scipy.stats import norm

SEED = 20261202
OUT = "crates/gpdp/tests/data"


def gram(kind, ell, x):
    d = cdist(x, x) / ell
    if kind == "exponential":
        return np.exp(-d)
    if kind == "matern32":
        return (1 + math.sqrt(3) * d) * np.exp(-math.sqrt(3) * d)
    if kind == "squared-exponential":
        return np.exp(-0.5 * d * d)
    raise ValueError(kind)


def gaussian_delta(mu, eps):
    # Phi(a) - exp(eps + log Phi(b)), b = -mu/2 - eps/mu.
    a = mu / 2 - eps / mu
    b = -mu / 2 - eps / mu
    return norm.cdf(a) - math.exp(eps + norm.logcdf(b))


def gaussian_epsilon(mu, delta):
    if gaussian_delta(mu, 0.0) <= delta:
        return 0.0
    hi = 1.0
    while gaussian_delta(mu, hi) > delta:
        hi *= 2
    return brentq(lambda e: gaussian_delta(mu, e) - delta, 0.0, hi, xtol=1e-14, rtol=1e-15)


def case_row(name, kind, ell, r, s, eta, m, draws, delta, x):
    q = r * r
    lam, u = np.linalg.eigh(gram(kind, ell, x))
    lam = np.clip(lam, 0.0, None)  # roundoff-level negative eigenvalues of a PSD matrix
    f = lam / ((lam + q) * (s * s * q + eta * eta * (lam + q)))
    sdiag = (u * u) @ f
    mu = math.sqrt(draws * 4 * m * m * sdiag.max())
    mu_free = math.sqrt(draws) * 2 * m / (r * math.sqrt(1 + q) * math.sqrt(s * s + eta * eta))
    return {
        "case": name,
        "kernel": kind,
        "lengthscale": repr(ell),
        "ridge": repr(r),
        "scale": repr(s),
        "gp_noise": repr(eta),
        "response_bound": repr(m),
        "draws": draws,
        "delta": repr(delta),
        "covariates": len(x),
        "mu": repr(mu),
        "mu_free": repr(mu_free),
        "epsilon": repr(gaussian_epsilon(mu, delta)),
        "epsilon_free": repr(gaussian_epsilon(mu_free, delta)),
    }


def main():
    rng = np.random.default_rng(SEED)
    cases = [
        # The setting: 400 uniform sensors on [0,1]^2.
        ("sensors400", "exponential", 0.14, 5.7063, 0.12, 0.0, 1.0, 1, 400.0 ** -1.1, rng.uniform(size=(400, 2))),
        ("matern_noise", "matern32", 0.3, 0.7, 1.0, 0.4, 1.0, 3, 1e-5, rng.uniform(size=(150, 2))),
        (
            "clustered_se",
            "squared-exponential",
            0.5,
            0.2,
            2.0,
            0.0,
            2.5,
            2,
            1e-3,
            np.repeat(rng.uniform(size=(6, 2)), 20, axis=0) + rng.normal(scale=1e-3, size=(120, 2)),
        ),
    ]
    rows = []
    for name, kind, ell, r, s, eta, m, draws, delta, x in cases:
        with open(os.path.join(OUT, f"change_response_{name}.csv"), "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["x1", "x2"])
            for p in x:
                w.writerow([repr(float(p[0])), repr(float(p[1]))])
        rows.append(case_row(name, kind, ell, r, s, eta, m, draws, delta, x))
    with open(os.path.join(OUT, "change_response.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    for r in rows:
        print(r["case"], "mu", r["mu"], "eps", r["epsilon"], "eps_free", r["epsilon_free"])


if __name__ == "__main__":
    main()
