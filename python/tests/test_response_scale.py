"""The responses' scale is a required public choice (issue 22, item 15), the
operator is warned when responses were clipped, and Lemma B.8's condition
B ≤ M_Y is checked from public inputs only (item 1)."""

import json
import warnings

import numpy as np
import pytest

import gpdp

BASE = dict(kernel="matern32", lengthscale=0.3, domain="interval:0,1", n=40, ridge=1.0, scale=1.0, delta=1e-5)
RNG = np.random.default_rng(22)
X = RNG.uniform(0, 1, 40)
PM = 2.0 + 62.0 * RNG.uniform(0, 1, 40)  # readings in µg/m³, 2–64
Q = np.linspace(0, 1, 7)


def test_a_mechanism_needs_the_response_scale():
    with pytest.raises(gpdp.ParameterError) as e:
        gpdp.Mechanism(**BASE)
    assert "response_range" in str(e.value) and "response_bound" in str(e.value)
    with pytest.raises(gpdp.ParameterError) as e:
        gpdp.Mechanism(**BASE, response_range=(2, 64), response_bound=1.0)
    assert "response_range" in str(e.value) and "response_bound" in str(e.value)


def test_with_a_response_range_values_are_in_data_units():
    lo, hi = 2.0, 64.0
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    kw = dict(BASE, scale=15.0)  # σ in µg/m³ under both flags (issue 40)
    ranged = gpdp.Mechanism(**kw, draws=2, response_range=(lo, hi), units="µg/m³")
    bound = gpdp.Mechanism(**kw, draws=2, response_bound=half)
    assert ranged.epsilon == bound.epsilon  # the range is the bound M_Y = half-width, centred
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpdp.ClippingWarning)  # nothing is clipped: no warning
        a = ranged.release(X, PM, Q, seed=9)
        b = bound.release(X, PM - mid, Q, seed=9)
    # The same draw, shifted back to data units: v ↦ mid + v.
    np.testing.assert_allclose(a.paths, mid + b.paths, rtol=1e-12, atol=1e-12)
    assert a.paths.mean() > 10.0  # near the readings (2–64)
    assert a.report["data_policy"]["response_range"] == {"lo": lo, "hi": hi}
    assert a.report["data_policy"]["scale_meaning"]["sigma_unit"] == 1.0
    assert a.report["data_policy"]["scale_meaning"]["prior_mean"] == mid
    pa = ranged.sample_path(X, PM, seed=4)
    pb = bound.sample_path(X, PM - mid, seed=4)
    np.testing.assert_allclose(pa(Q), mid + pb(Q), rtol=1e-12, atol=1e-12)


def test_clipped_responses_warn_the_operator_and_stay_out_of_the_report():
    m = gpdp.Mechanism(**BASE, response_range=(0.0, 40.0))
    k = int(np.sum(PM > 40.0))
    assert 5 < k < 40
    with pytest.warns(gpdp.ClippingWarning, match=rf"^{k} of 40 responses \(\d+%\) were clipped to the response range \[0, 40\]") as w:
        rel = m.release(X, PM, Q, seed=1)
    (msg,) = [str(x.message) for x in w if issubclass(x.category, gpdp.ClippingWarning)]
    assert "never in .report" in msg and "set response_range" in msg
    assert issubclass(gpdp.ClippingWarning, UserWarning)
    assert rel.diagnostics["policy"]["responses_clipped"] == k
    assert "clipped" not in json.dumps(rel.report)
    with pytest.warns(gpdp.ClippingWarning, match=rf"^{k} of 40 responses"):
        m.sample_path(X, PM, seed=1)
    # One clipped response of 40 (2.5%): the short form, naming ±M_Y.
    one = gpdp.Mechanism(**BASE, response_bound=1.0)
    y = np.where(np.arange(40) == 3, 1.5, 0.2)
    with pytest.warns(gpdp.ClippingWarning, match=r"^1 of 40 responses \(2%\) were clipped to \[-1, 1\] \(response_bound=1\)") as w:
        one.release(X, y, Q, seed=1)
    (msg,) = [str(x.message) for x in w if issubclass(x.category, gpdp.ClippingWarning)]
    assert "set response_range" not in msg


# Lemma B.8 (issue 22, item 1): exponential ℓ = 0.5 on [0, 1], f* = 1.5·k(·, 0.5);
# D and its replace-one neighbour D' (last row (0.5, 1.5) = f*(0.5)).
B8 = dict(kernel="exponential", lengthscale=0.5, domain="interval:0,1", n=3, ridge=1.0, scale=1.0, delta=1e-5,
          sensitivity="rkhs", rkhs_norm=1.5, assume_rkhs_responses=True)
X_B8 = np.array([0.1, 0.9, 0.0])
Y_B8 = np.array([0.6739934461758323, 0.6739934461758323, 0.5518191617571635])
X_B8N = np.array([0.1, 0.9, 0.5])
Y_B8N = np.array([0.6739934461758323, 0.6739934461758323, 1.5])


def test_b8_with_b_above_m_y_is_refused_up_front_for_both_neighbours():
    with pytest.raises(gpdp.ParameterError, match="B.8") as e:
        gpdp.Mechanism(**B8, response_bound=1.0)
    assert "1.5" in str(e.value)


def test_b8_with_b_within_m_y_releases_both_neighbours():
    m = gpdp.Mechanism(**B8, response_bound=1.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpdp.ClippingWarning)
        a = m.release(X_B8, Y_B8, [0.25, 0.75], seed=3)
        b = m.release(X_B8N, Y_B8N, [0.25, 0.75], seed=3)
    assert a.paths.shape == b.paths.shape == (1, 2)
    assert np.all(np.isfinite(a.paths)) and np.all(np.isfinite(b.paths))
    assert a.report["privacy"] == b.report["privacy"]
