"""`account`, `account_batch` and `calibrate` against the CLI (identical
reports, field by field) and their errors."""

import math

import numpy as np
import pytest

import gpdp
from conftest import cli_json

FIG3 = dict(kernel="exponential", lengthscale=1.0, domain="interval:0,1", n=10, ridge=1.0, scale=5.0)


def flags(d):
    """Python keywords → CLI flags."""
    out = []
    for k, v in d.items():
        out += [f"--{k.replace('_', '-')}", "inf" if v == math.inf else str(v)]
    return out


CASES = [
    dict(FIG3, draws=3, delta=0.05),
    dict(FIG3, draws=1, delta=0.05, bound="joint"),
    dict(FIG3, draws=2, epsilon=4.0),
    dict(FIG3, draws=10, delta=1e-5, bound="paper", conversion="paper"),
    dict(FIG3, scale=math.inf, delta=0.05),
    dict(FIG3, scale=math.inf, delta=0.05, conversion="pld"),
    dict(kernel="matern32", lengthscale=0.3, domain="box:0,1,0,1", n=400, ridge=2.0, scale=0.5, gp_noise=0.1, delta=1e-5),
    dict(kernel="squared-exponential", lengthscale=0.2, domain="box:0,1,0,1", n=100, ridge=3.0, scale=1.0, response_bound=2.0, delta=1e-6),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items() if k not in FIG3 or c[k] != FIG3[k]))
def test_account_equals_the_cli(case):
    py = gpdp.account(**case).to_dict()
    assert py == cli_json("account", *flags(case))


def test_report_attributes_match_its_dict():
    r = gpdp.account(**FIG3, draws=3, delta=0.05)
    d = r.to_dict()
    for k in ["epsilon", "delta", "alpha", "alpha_max", "rdp"]:
        assert getattr(r, k) == d[k]
    assert r.conversion == "improved" and r.components == d["components"]
    # The Figure 3 setting's tight bound (docs/accountant.md): ε = 5.97 at L = 3.
    assert abs(r.epsilon - 5.969237) < 1e-5
    assert "epsilon=" in repr(r)


def test_account_batch_equals_row_by_row_account():
    ridge = np.linspace(0.6, 2.0, 7)
    draws = np.array([1, 2, 3, 1, 2, 3, 10])
    out = gpdp.account_batch(kernel="exponential", lengthscale=1.0, domain="interval:0,1", n=10, ridge=ridge, scale=5.0, draws=draws, delta=0.05)
    for i in range(len(ridge)):
        r = gpdp.account(**dict(FIG3, ridge=float(ridge[i]), draws=int(draws[i]), delta=0.05))
        assert out["epsilon"][i] == r.epsilon and out["alpha"][i] == r.alpha and out["rdp"][i] == r.rdp
        assert out["ridge"][i] == ridge[i] and out["draws"][i] == draws[i]
    assert out["conversion"].tolist() == ["improved"] * 7
    assert out["epsilon"].dtype == np.float64


def test_account_batch_mixes_string_columns_and_epsilon_questions():
    out = gpdp.account_batch(
        kernel=["exponential", "matern32"], lengthscale=[1.0, 0.5], domain="interval:0,1", n=[10, 20], ridge=1.0, scale=5.0, epsilon=[3.0, 6.0]
    )
    r = gpdp.account(kernel="matern32", lengthscale=0.5, domain="interval:0,1", n=20, ridge=1.0, scale=5.0, epsilon=6.0)
    assert out["delta"][1] == r.delta and out["kernel"].tolist() == ["exponential", "matern32"]


def test_account_batch_errors_name_the_column_or_row():
    with pytest.raises(gpdp.ParameterError, match="ridge: has 3 rows but n has 2"):
        gpdp.account_batch(**dict(FIG3, n=[10, 11], ridge=[1.0, 1.1, 1.2]), delta=0.05)
    with pytest.raises(gpdp.ParameterError, match="sigma: unknown column"):
        gpdp.account_batch(**FIG3, delta=0.05, sigma=1.0)
    with pytest.raises(gpdp.ParameterError, match=r"row 1: .*ridge r \(-1\)"):
        gpdp.account_batch(**dict(FIG3, ridge=[1.0, -1.0]), delta=0.05)
    with pytest.raises(gpdp.ParameterError, match=r"row 0: n: row 0: expected a whole number"):
        gpdp.account_batch(**dict(FIG3, n=[2.5]), delta=0.05)


def test_bad_inputs_raise_clear_value_errors():
    with pytest.raises(gpdp.ParameterError, match="kernel.*one of exponential"):
        gpdp.account(**dict(FIG3, kernel="laplacian-ish"), delta=0.05)
    with pytest.raises(gpdp.ParameterError, match="lengthscale: required — the lengthscale ℓ of the matern32 kernel"):
        gpdp.account(kernel="matern32", domain="interval:0,1", n=10, ridge=1.0, scale=1.0, delta=0.05)
    with pytest.raises(gpdp.ParameterError, match="give exactly one of delta"):
        gpdp.account(**FIG3, delta=0.05, epsilon=1.0)
    with pytest.raises(gpdp.ParameterError, match="ridge r"):
        gpdp.account(**dict(FIG3, ridge=0.0), delta=0.05)
    with pytest.raises(gpdp.ParameterError, match="domain"):
        gpdp.account(**dict(FIG3, domain="interval:1,0"), delta=0.05)
    with pytest.raises(gpdp.GpdpError):
        gpdp.account(**FIG3, delta=1.5)
    # Every gpdp error is a ValueError.
    with pytest.raises(ValueError):
        gpdp.account(**FIG3, delta=0.0)


@pytest.mark.parametrize(
    "case",
    [
        dict(solve="ridge", target_epsilon=3.0, delta=0.05, kernel="exponential", lengthscale=1.0, domain="interval:0,1", n=10, scale=5.0),
        dict(solve="scale", target_epsilon=2.0, delta=1e-5, kernel="matern52", lengthscale=0.3, domain="box:0,1,0,1", n=200, ridge=4.0),
        dict(solve="draws", target_epsilon=8.0, delta=0.05, kernel="exponential", lengthscale=1.0, domain="interval:0,1", n=10, ridge=1.0, scale=5.0),
        dict(solve="ridge", target_epsilon=3.0, delta=0.05, kernel="exponential", lengthscale=1.0, domain="interval:0,1", n=10, scale=5.0, bound="joint"),
    ],
    ids=["ridge", "scale", "draws", "joint"],
)
def test_calibrate_equals_the_cli(case):
    c = gpdp.calibrate(**case)
    assert c.to_dict() == cli_json("calibrate", *flags(case))
    assert c.report.epsilon <= case["target_epsilon"] and c.solve == case["solve"]
    if case["solve"] != "draws":
        assert c.permissive_epsilon > case["target_epsilon"]


def test_calibrate_refuses_draws_when_solving_for_them():
    with pytest.raises(gpdp.ParameterError, match="draws: is what solve"):
        gpdp.calibrate(solve="draws", target_epsilon=8.0, delta=0.05, draws=2, **FIG3)
