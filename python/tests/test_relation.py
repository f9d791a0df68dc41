"""The neighbouring relation from Python: `relation="change-response"` in
`account`, `calibrate` and `Mechanism`, against the CLI and against an
independent numpy/scipy evaluation of the closed form
(docs/proofs/change-response.md); misuse refused with a clear message."""

import csv
import pathlib

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

import gpdp
from conftest import cli_json

DATA = pathlib.Path(__file__).resolve().parents[2] / "crates" / "gpdp" / "tests" / "data"
MODEL = dict(kernel="exponential", lengthscale=0.14, domain="box:0,1,0,1", ridge=5.7063, scale=0.12)
DELTA = 400 ** -1.1


def sensors():
    with open(DATA / "change_response_sensors400.csv") as f:
        return np.array([[float(v) for v in r] for r in list(csv.reader(f))[1:]])


def reference_epsilon(X, ridge, scale, delta, M=1.0):
    """μ² = 4M²·max_i [K A⁻¹]_ii / (r²σ²) with η = 0, then the analytic
    Gaussian mechanism's ε(δ), both by numpy/scipy."""
    d = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    K = np.exp(-d / 0.14)
    H = K @ np.linalg.inv(K + ridge**2 * np.eye(len(X)))
    mu = 2 * M * np.sqrt(np.max(np.diag(H)) / (ridge**2 * scale**2))
    f = lambda e: norm.cdf(mu / 2 - e / mu) - np.exp(e) * norm.cdf(-mu / 2 - e / mu) - delta
    return brentq(f, 0, 50, xtol=1e-14)


def test_account_with_covariates_matches_numpy_scipy_and_the_cli():
    X = sensors()
    r = gpdp.account(**MODEL, delta=DELTA, relation="change-response", covariates=X)
    want = reference_epsilon(X, 5.7063, 0.12, DELTA)
    assert r.epsilon == pytest.approx(want, rel=1e-6)
    assert r.epsilon <= 1.32
    assert r.neighbouring_relation == "change-one-response, covariates public"
    assert r.gaussian["covariates"] == 400 and r.gaussian["mu"] > 0
    cli = cli_json("account", "--relation", "change-response", "--covariates", str(DATA / "change_response_sensors400.csv"),
                   "--kernel", "exponential", "--lengthscale", "0.14", "--domain", "box:0,1,0,1", "--ridge", "5.7063",
                   "--scale", "0.12", "--delta", repr(DELTA))
    assert cli["epsilon"] == r.epsilon
    free = gpdp.account(**MODEL, n=400, delta=DELTA, relation="change-response")
    assert r.epsilon <= free.epsilon <= 1.32 and free.gaussian["covariates"] is None
    replace = gpdp.account(**MODEL, n=400, delta=DELTA)
    assert replace.neighbouring_relation == "replace-one, n public" and replace.gaussian is None
    assert replace.epsilon > 3 * r.epsilon


def test_calibrate_and_mechanism_under_change_response():
    X = sensors()
    c = gpdp.calibrate(solve="ridge", target_epsilon=1.0, delta=DELTA, kernel="exponential", lengthscale=0.14,
                       domain="box:0,1,0,1", scale=0.12, relation="change-response", covariates=X)
    assert c.report.epsilon <= 1.0 < c.permissive_epsilon
    again = gpdp.account(**{**MODEL, "ridge": c.value}, delta=DELTA, relation="change-response", covariates=X)
    assert again.epsilon == c.report.epsilon
    m = gpdp.Mechanism(kernel="exponential", lengthscale=0.14, domain="box:0,1,0,1", scale=0.12, ridge=c.value,
                       delta=DELTA, response_bound=1.0, relation="change-response", covariates=X)
    assert m.neighbouring_relation == "change-one-response, covariates public"
    assert m.epsilon == c.report.epsilon
    y = np.clip(X[:, 0] - X[:, 1], -1, 1)
    rel = m.release(X, y, grid="6x6", seed=1)
    assert rel.report["neighbouring_relation"] == "change-one-response, covariates public"
    assert "protects each reading" in rel.report["statement"]
    # Other covariates than the declared ones are refused, naming the row.
    moved = X.copy()
    moved[6, 0] = min(1.0, moved[6, 0] + 0.01)
    with pytest.raises(gpdp.GpdpError, match="row 7"):
        m.release(moved, y, grid="4x4", seed=1)
    # Without covariates: the bound for any covariates; any data are accepted.
    free = gpdp.Mechanism(kernel="exponential", lengthscale=0.14, domain="box:0,1,0,1", scale=0.12, ridge=c.value,
                          delta=DELTA, response_bound=1.0, relation="change-response", n=400)
    assert free.epsilon >= m.epsilon
    assert free.release(moved, y, grid="4x4", seed=1).paths.shape == (1, 16)


def test_misuse_is_refused_clearly():
    X = sensors()
    with pytest.raises(gpdp.GpdpError, match="only with relation"):
        gpdp.account(**MODEL, delta=DELTA, covariates=X)
    with pytest.raises(gpdp.GpdpError, match="expected replace-one or change-response"):
        gpdp.account(**MODEL, n=400, delta=DELTA, relation="swap")
    with pytest.raises(gpdp.GpdpError, match="400 rows"):
        gpdp.account(**MODEL, n=300, delta=DELTA, relation="change-response", covariates=X)
    outside = X.copy()
    outside[2, 1] = 1.5
    with pytest.raises(gpdp.GpdpError, match="outside the domain"):
        gpdp.account(**MODEL, delta=DELTA, relation="change-response", covariates=outside)
    with pytest.raises(gpdp.GpdpError, match="1-D"):
        gpdp.account(**MODEL, delta=DELTA, relation="change-response", covariates=X[:, 0])
    with pytest.raises(gpdp.GpdpError, match="change-response"):
        gpdp.Mechanism(kernel="exponential", lengthscale=0.14, domain="box:0,1,0,1", scale=0.12, ridge=5.0,
                       delta=DELTA, response_bound=1.0, covariates=X)


def test_data_free_noise_is_accounted_exactly():
    m = gpdp.Mechanism(kernel="exponential", lengthscale=0.3, domain="interval:0,1", n=5, ridge=1.0, scale=0.0,
                       gp_noise=0.5, delta=1e-3, response_bound=1.0)
    assert m.privacy.gaussian is not None
    assert m.privacy.neighbouring_relation == "replace-one, n public"
    rdp = gpdp.Mechanism(kernel="exponential", lengthscale=0.3, domain="interval:0,1", n=5, ridge=1.0, scale=1e-9,
                         gp_noise=0.5, delta=1e-3, response_bound=1.0)
    assert m.epsilon < rdp.epsilon
    X = np.array([0.1, 0.3, 0.35, 0.6, 0.9])
    rel = m.release(X, np.array([0.5, -0.2, 1.0, 0.9, -1.0]), grid="20", seed=1)
    assert rel.paths.shape == (1, 20)
    c = gpdp.calibrate(solve="gp-noise", target_epsilon=5.0, delta=1e-3, kernel="exponential", lengthscale=0.3,
                       domain="interval:0,1", n=5, ridge=1.0, scale=0.0)
    assert c.report.epsilon <= 5.0 < c.permissive_epsilon
    assert gpdp.account(kernel="exponential", lengthscale=0.3, domain="interval:0,1", n=5, ridge=1.0, scale=0.0,
                        gp_noise=c.value, delta=1e-3).epsilon == c.report.epsilon
