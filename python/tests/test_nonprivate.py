"""`gpdp.nonprivate.posterior` with a response range (issue 26): responses
clipped and centred as a release treats them (σ in data units, issue 40),
the mean and variance returned in data units, the units carried on the result — checked
against the posterior computed directly with numpy."""

import numpy as np
import pytest

import gpdp
from gpdp.nonprivate import Posterior, posterior

RNG = np.random.default_rng(2026)
X = RNG.uniform(0, 1, (35, 2))
PM = 5.0 + 50.0 * RNG.uniform(0, 1, 35)  # µg/m³, 5–55: some above the range's top, 40
Q = RNG.uniform(0, 1, (12, 2))
ELL, RIDGE, SCALE = 0.3, 0.6, 0.8
LO, HI = 0.0, 40.0


def direct(X, y, Q):
    """The GP posterior under the exponential kernel exp(−‖x − x'‖/ℓ), prior
    GP(0, σ²k) and noise variance r²σ²: mean k_Q (K + r²I)⁻¹ y and variance
    σ²(k(q, q) − k_Q (K + r²I)⁻¹ k_Qᵀ), in numpy."""
    d = lambda A, B: np.sqrt(((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))
    K = np.exp(-d(X, X) / ELL)
    Kq = np.exp(-d(Q, X) / ELL)
    A = K + RIDGE**2 * np.eye(len(X))
    mean = Kq @ np.linalg.solve(A, y)
    var = SCALE**2 * (1.0 - np.einsum("ij,ji->i", Kq, np.linalg.solve(A, Kq.T)))
    return mean, var


def test_a_response_range_maps_and_clips_as_a_release_and_returns_data_units():
    assert (PM > HI).sum() >= 5  # clipping matters here
    res = posterior(X, PM, Q, kernel="exponential", lengthscale=ELL, ridge=RIDGE, scale=SCALE,
                    response_range=(LO, HI), units="µg/m³")
    mid, half = (LO + HI) / 2, (HI - LO) / 2
    internal = np.clip(PM - mid, -half, half)
    m0, v0 = direct(X, internal, Q)
    np.testing.assert_allclose(res.mean, mid + m0, rtol=0, atol=1e-9)
    np.testing.assert_allclose(res.variance, v0, rtol=1e-9, atol=0)
    assert res.units == "µg/m³" and res.response_range == (0.0, 40.0)
    # In data units: near the readings, never beyond the range's top (the responses were clipped to it).
    assert 10 < res.mean.mean() < 40 and res.mean.max() <= HI
    # Backwards compatible: a 2-tuple (mean, variance).
    mean, var = res
    assert isinstance(res, tuple) and len(res) == 2 and mean is res.mean and var is res.variance
    assert isinstance(res, Posterior)


def test_without_a_range_the_responses_are_used_as_given():
    y = np.sin(4 * X[:, 0])
    res = posterior(X, y, Q, kernel="exponential", lengthscale=ELL, ridge=RIDGE, scale=SCALE)
    m0, v0 = direct(X, y, Q)
    np.testing.assert_allclose(res.mean, m0, rtol=0, atol=1e-9)
    np.testing.assert_allclose(res.variance, v0, rtol=1e-9, atol=0)
    assert res.units is None and res.response_range is None
    # A range centred on 0 containing every response changes nothing; one centred on 1 shifts
    # the prior mean to 1.
    r = posterior(X, y, Q, kernel="exponential", lengthscale=ELL, ridge=RIDGE, scale=SCALE, response_range=(-2, 2))
    np.testing.assert_allclose(r.mean, m0, rtol=0, atol=1e-9)
    np.testing.assert_allclose(r.variance, v0, rtol=1e-9, atol=0)
    s = posterior(X, y, Q, kernel="exponential", lengthscale=ELL, ridge=RIDGE, scale=SCALE, response_range=(-1, 3))
    m2, _ = direct(X, y - 1, Q)
    np.testing.assert_allclose(s.mean, 1 + m2, rtol=0, atol=1e-9)


def test_bad_ranges_and_units_are_refused():
    kw = dict(kernel="exponential", lengthscale=ELL, ridge=RIDGE, scale=SCALE)
    with pytest.raises(gpdp.ParameterError, match="response_range: .*finite LO < HI"):
        posterior(X, PM, Q, response_range=(40, 0), **kw)
    with pytest.raises(gpdp.ParameterError, match="response_range: expected \\(lo, hi\\), two numbers; got 3"):
        posterior(X, PM, Q, response_range=(0, 1, 2), **kw)
    with pytest.raises(gpdp.ParameterError, match="units: the unit label is empty"):
        posterior(X, PM, Q, response_range=(0, 40), units="  ", **kw)
    with pytest.raises(gpdp.ParameterError, match="units: .*control character"):
        posterior(X, PM, Q, units="µg\n", **kw)
