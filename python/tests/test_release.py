"""`Mechanism.release` against `gpdp release` (same seed ⇒ identical paths and
reports), the generator's privacy flag, and the data checks."""

import csv
import json

import numpy as np
import pytest

import gpdp
from conftest import run_cli

RNG = np.random.default_rng(3)
X1 = RNG.uniform(0, 1, 12)
Y1 = np.clip(np.sin(6 * X1) + 0.1 * RNG.standard_normal(12), -1, 1)
Q1 = np.linspace(0, 1, 9)

X2 = RNG.uniform(0, 1, (30, 2))
Y2 = np.clip(X2[:, 0] - X2[:, 1], -1, 1)
Q2 = RNG.uniform(0, 1, (7, 2))


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in rows:
            w.writerow([repr(float(v)) for v in r])


def cli_release(tmp_path, X, y, Q, flags):
    X = X.reshape(len(X), -1)
    Q = Q.reshape(len(Q), -1)
    names = ["x"] if X.shape[1] == 1 else [f"x{i + 1}" for i in range(X.shape[1])]
    write_csv(tmp_path / "data.csv", names + ["y"], np.column_stack([X, y]))
    write_csv(tmp_path / "at.csv", names, Q)
    out = tmp_path / "out"
    run_cli("release", "--data", str(tmp_path / "data.csv"), "--at", str(tmp_path / "at.csv"), "--out", str(out), "--x", ",".join(names), *flags)
    with open(out / "paths.csv") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    paths = np.array([[float(r[header.index(h)]) for r in body] for h in header if h.startswith("path_")])
    report = json.loads((out / "report.json").read_text())
    return paths, report


MODELS = [
    (dict(kernel="exponential", lengthscale=1.0, domain="interval:0,1", ridge=1.0, scale=5.0, draws=3, delta=0.05, response_bound=1.0), X1, Y1, Q1),
    (dict(kernel="matern32", lengthscale=0.4, domain="box:0,1,0,1", ridge=2.0, scale=1.0, draws=2, delta=1e-5, response_bound=1.0), X2, Y2, Q2),
    (dict(kernel="squared-exponential", lengthscale=0.3, domain="interval:0,1", scale=1.0, draws=1, delta=1e-3, target_epsilon=2.0, response_bound=1.0), X1, Y1, Q1),
]


@pytest.mark.parametrize("model,X,y,Q", MODELS, ids=["exp-1d", "matern32-2d", "calibrated"])
def test_seeded_release_equals_the_cli(tmp_path, model, X, y, Q):
    m = gpdp.Mechanism(n=len(y), **model)
    rel = m.release(X, y, Q, seed=42)
    flags = []
    for k, v in model.items():
        flags += [f"--{k.replace('_', '-')}", str(v)]
    paths, report = cli_release(tmp_path, X, y, Q, flags + ["--seed", "42"])
    assert rel.paths.shape == (model["draws"], len(Q))
    np.testing.assert_array_equal(rel.paths, paths)  # bit for bit
    py = rel.report
    for k, v in py.items():
        assert report[k] == v, k
    assert py["private"] is False and rel.private is False
    assert np.allclose(rel.query.reshape(len(Q), -1), Q.reshape(len(Q), -1))


def test_os_seeded_releases_are_private_and_differ():
    m = gpdp.Mechanism(n=12, **MODELS[0][0])
    a, b = m.release(X1, Y1, Q1), m.release(X1, Y1, Q1)
    assert a.private and a.report["private"] is True
    assert not np.array_equal(a.paths, b.paths)
    with pytest.warns(UserWarning, match="seed=7 makes the draws reproducible: this is NOT a private release"):
        c = m.release(X1, Y1, Q1, seed=7)
    d = m.release(X1, Y1, Q1, seed=7)
    np.testing.assert_array_equal(c.paths, d.paths)
    assert c.report["warning"] and not c.private


def test_grid_queries_and_the_mechanism_attributes():
    m = gpdp.Mechanism(n=30, **MODELS[1][0])
    rel = m.release(X2, Y2, grid="4x3", seed=1)
    assert rel.paths.shape == (2, 12) and rel.query.shape == (12, 2)
    assert rel.report["query"]["kind"] == "grid"
    assert m.epsilon == m.privacy.epsilon == rel.privacy.epsilon
    assert (m.ridge, m.scale, m.draws) == (2.0, 1.0, 2)
    cal = gpdp.Mechanism(n=12, **MODELS[2][0])
    assert cal.calibration["target_epsilon"] == 2.0 and cal.epsilon <= 2.0
    assert abs(cal.ridge - gpdp.calibrate(solve="ridge", target_epsilon=2.0, delta=1e-3, n=12, kernel="squared-exponential", lengthscale=0.3, domain="interval:0,1", scale=1.0).value) < 1e-12


def test_the_data_policy_and_bad_data_raise_clear_errors():
    model = MODELS[0][0]
    m = gpdp.Mechanism(n=12, on_unbounded="reject", **model)
    with pytest.raises(gpdp.DataError, match=r"data row 5: response y = 3 exceeds the response bound M_Y = 1"):
        m.release(X1, np.where(np.arange(12) == 4, 3.0, Y1), Q1, seed=1)
    clip = gpdp.Mechanism(n=12, **model)
    with pytest.warns(gpdp.ClippingWarning, match=r"^1 of 12 responses \(8%\) were clipped"):
        rel = clip.release(X1, np.where(np.arange(12) == 4, 3.0, Y1), Q1, seed=1)
    # How many values were clipped is an operator diagnostic, not published.
    assert "clipped" not in json.dumps(rel.report) and "policy" in rel.diagnostics
    assert rel.diagnostics["policy"]["responses_clipped"] == 1
    with pytest.raises(gpdp.DataError, match=r"data row 1: covariate \[2.0\] lies outside the declared domain"):
        clip.release(np.where(np.arange(12) == 0, 2.0, X1), Y1, Q1, seed=1)
    with pytest.raises(gpdp.ParameterError, match="11 covariate rows but 12 responses"):
        clip.release(X1[:11], Y1, Q1, seed=1)
    with pytest.raises(gpdp.DataError, match="accounted for n = 12"):
        clip.release(X1[:11], Y1[:11], Q1, seed=1)
    with pytest.raises(gpdp.ParameterError, match="X: expected an array of shape"):
        clip.release(np.zeros((12, 1, 1)), Y1, Q1, seed=1)
    with pytest.raises(gpdp.ParameterError, match="query/grid"):
        clip.release(X1, Y1, seed=1)
    with pytest.raises(gpdp.ParameterError, match="scale: inf: must be a finite number"):
        gpdp.Mechanism(n=12, **dict(model, scale=float("inf")))
    with pytest.raises(gpdp.BudgetExceededError, match="refusing to release"):
        gpdp.Mechanism(n=12, max_epsilon=0.5, **model)
    with pytest.raises(gpdp.ParameterError, match="ridge: give either ridge or target_epsilon"):
        gpdp.Mechanism(n=12, target_epsilon=2.0, **model)
