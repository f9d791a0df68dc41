"""`gpdp.plan` against `gpdp plan` (issue 26): the same proxy arrays give the
same fitted hyperparameters, the same ridge, ε, RMSE and IoU per target ε,
the same assessment and the same printed table; the saved plan.json is one
`gpdp release --plan` accepts; the warnings the CLI prints are issued."""

import csv
import json
import math
import re
import warnings

import numpy as np
import pytest

import gpdp
from conftest import REPO, run_cli

PROXY = REPO / "examples" / "last-year.csv"
DOMAIN = "box:500000,510000,180000,190000"
# The same inputs for both front ends (the CLI's flags, the Python keywords).
FLAGS = ["--x", "easting,northing", "--y", "pm25", "--domain", DOMAIN, "--n", "300", "--delta", "1e-5",
         "--epsilons", "1,3,10", "--response-range", "0,40", "--threshold", "25", "--units", "µg/m³", "--quiet"]
KEYWORDS = dict(domain=((500000, 510000), (180000, 190000)), n=300, delta=1e-5, epsilons=[1, 3, 10],
                response_range=(0, 40), threshold=25, units="µg/m³")
# Both run the library's code on the same doubles with the same seed; the
# numbers agree to this relative tolerance (in practice they are identical).
RTOL = 1e-9


def read_proxy(path=PROXY):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    X = np.array([[float(r["easting"]), float(r["northing"])] for r in rows])
    y = np.array([float(r["pm25"]) for r in rows])
    return X, y


def assert_same(a, b, path="plan"):
    """Equal JSON trees, floats to RTOL."""
    if isinstance(a, float) or isinstance(b, float):
        assert math.isclose(a, b, rel_tol=RTOL, abs_tol=1e-300), f"{path}: {a} != {b}"
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), f"{path}: keys {sorted(a)} != {sorted(b)}"
        for k in a:
            assert_same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{path}: {len(a)} != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The CLI's plan.json and stdout, and gpdp.plan's Plan with its warnings."""
    out = tmp_path_factory.mktemp("cli") / "plan"
    stdout = run_cli("plan", "--proxy", str(PROXY), *FLAGS, "--out", str(out))
    cli = json.loads((out / "plan.json").read_text())
    X, y = read_proxy()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        py = gpdp.plan(X, y, **KEYWORDS)
    return cli, stdout, py, [w for w in caught if issubclass(w.category, gpdp.PlanWarning)], out


def test_plan_fits_the_same_hyperparameters_as_the_cli(both):
    cli, _, py, _, _ = both
    h = cli["fit"]["hyper"]
    assert py.kernel == "matern32"
    assert math.isclose(py.lengthscale, h["lengthscale"], rel_tol=RTOL)
    assert math.isclose(py.scale, h["scale"], rel_tol=RTOL)
    assert math.isclose(py.noise, h["noise"], rel_tol=RTOL)
    assert math.isclose(py.fitted_ridge, cli["fitted_ridge"], rel_tol=RTOL)
    assert math.isclose(py.log_marginal_likelihood, cli["fit"]["log_marginal_likelihood"], rel_tol=RTOL)
    # What the fit found on this proxy (examples/last-year.csv): ℓ ≈ 453 m, σ ≈ 6.34 µg/m³ (data units).
    assert 440 < py.lengthscale < 470 and 6.0 < py.scale < 6.6
    assert math.isclose(py.fitted_ridge, py.noise / py.scale, rel_tol=1e-12)


def test_plan_rows_equal_the_clis_per_epsilon_numbers(both):
    cli, _, py, _, _ = both
    u = cli["utility"]
    assert py.epsilons == [1.0, 3.0, 10.0]
    assert len(py.rows) == 3
    for row, p in zip(py.rows, u["points"]):
        assert row["target_epsilon"] == p["target_epsilon"]
        assert row["ridge_is_fitted"] is p["ridge_is_fitted"] is False
        for key, ref in [("epsilon", p["epsilon"]), ("ridge", p["ridge"]),
                         ("holdout_rmse_mean", p["holdout_rmse"]["mean"]), ("holdout_rmse_sd", p["holdout_rmse"]["sd"]),
                         ("iou_mean", p["excursion_iou"]["mean"]), ("iou_sd", p["excursion_iou"]["sd"]),
                         ("nonprivate_rmse_mean", u["baseline_rmse"]["mean"]), ("nonprivate_iou_mean", u["baseline_iou"]["mean"]),
                         ("constant_rmse_mean", u["constant_rmse"]["mean"]), ("constant_iou_mean", u["constant_iou"]["mean"])]:
            assert math.isclose(row[key], ref, rel_tol=RTOL, abs_tol=1e-300), (row["target_epsilon"], key, row[key], ref)
        # The calibrated release meets its target and the ridge shrinks as ε grows.
        assert row["epsilon"] <= row["target_epsilon"] * (1 + 1e-12)
    ridges = [r["ridge"] for r in py.rows]
    assert ridges[0] > ridges[1] > ridges[2] > py.fitted_ridge


def test_plan_to_dict_is_the_clis_plan_json(both):
    cli, _, py, _, _ = both
    d = py.to_dict()
    # Only what names the proxy differs: the CLI hashes its file, gpdp.plan its arrays.
    assert cli["proxy"].endswith("last-year.csv") and d["proxy"] == "numpy arrays (gpdp.plan)"
    assert len(d["proxy_sha256"]) == 64 and d["proxy_sha256"] != cli["proxy_sha256"]
    for k in ("proxy", "proxy_sha256"):
        del d[k], cli[k]
    # The record fingerprints (parsed numbers) are the CLI's exactly.
    assert d["proxy_record_fingerprints"] == cli["proxy_record_fingerprints"]
    assert len(d["proxy_record_fingerprints"]) == 600
    assert_same(d, cli)
    assert json.loads(py.to_json()) == py.to_dict()


def test_plan_prints_the_clis_table_and_assessment(both):
    cli, stdout, py, caught, _ = both
    # `gpdp plan` prints the table, then two lines about its files.
    assert str(py) == py.summary() == "\n".join(stdout.rstrip("\n").split("\n")[:-2])
    assert "within 10% of non-private: RMSE from none of the planned ε; IoU from none of the planned ε" in str(py)
    a = cli["assessment"]
    assert py.rmse_epsilon is a["rmse_epsilon"] is None and py.iou_epsilon is a["iou_epsilon"] is None
    # On this proxy every planned ε is no better than the constant map: the CLI's warning.
    assert py.warnings == a["warnings"] and len(py.warnings) == 1
    assert "no better than a constant map's (6.3902 µg/m³" in py.warnings[0]
    assert [str(w.message) for w in caught] == py.warnings
    # The range's middle (20) is near the proxy's median: no centre warning.
    assert not any("median response" in w for w in py.warnings)
    assert py.notes == ["1 of the 600 proxy responses lie outside the response range and are clipped, as a release would clip them"]


def test_a_saved_plan_is_accepted_by_gpdp_release(both, tmp_path):
    _, _, py, _, cli_out = both
    path = tmp_path / "plan.json"
    py.save(path)
    assert json.loads(path.read_text()) == py.to_dict()
    with pytest.raises(gpdp.ParameterError, match="exists; pass overwrite=True"):
        py.save(path)
    py.save(path, overwrite=True)
    # Plan.load reads it back, and reads the CLI's.
    assert gpdp.Plan.load(path).to_dict() == py.to_dict()
    assert gpdp.Plan.load(cli_out / "plan.json").lengthscale == pytest.approx(py.lengthscale, rel=RTOL)
    out = tmp_path / "release"
    run_cli("release", "--plan", str(path), "--target-epsilon", "1", "--data", str(REPO / "examples" / "readings.csv"),
            "--x", "easting,northing", "--y", "pm25", "--grid", "10", "--seed", "1", "--out", str(out))
    report = json.loads((out / "report.json").read_text())
    assert report["hyperparameter_source"]["source"] == "plan"
    assert report["hyperparameter_source"]["proxy"] == "numpy arrays (gpdp.plan)"
    comp = report["privacy"]["components"][0]
    assert comp["kernel"] == "matern32"
    assert comp["ridge"] == pytest.approx(py.rows[0]["ridge"], rel=RTOL)  # n = 300, as planned
    assert report["privacy"]["epsilon"] <= 1.0
    # In Python the plan's spec builds the same release (the ridge calibrated for ε = 1 at n = 300).
    m = gpdp.Mechanism(n=300, **py.spec, target_epsilon=1.0)
    assert m.ridge == pytest.approx(py.rows[0]["ridge"], rel=RTOL) and m.epsilon <= 1.0
    # The proxy's own records are refused, by their fingerprints (there is no file hash to match).
    with pytest.raises(AssertionError, match="600 of the 600 records of --data .* are records of the proxy"):
        run_cli("release", "--plan", str(path), "--target-epsilon", "1", "--data", str(PROXY),
                "--x", "easting,northing", "--y", "pm25", "--grid", "10", "--seed", "1", "--out", str(tmp_path / "r2"))


# A cheap plan (the warning below does not depend on the fit's effort).
QUICK = dict(domain=DOMAIN, n=300, delta=1e-5, epsilons=[3], threshold=25, restarts=1, reps=1, grid=8)


def test_a_range_centred_far_from_the_data_warns():
    X, y = read_proxy()
    median = float(np.median(y))
    assert abs(median - 40) > 80 / 2 / 3  # the warning's condition: farther than a third of the half-width
    with pytest.warns(gpdp.PlanWarning) as w:  # every PlanWarning, so that none is re-emitted
        p = gpdp.plan(X, y, response_range=(0, 80), units="µg/m³", **QUICK)
    msgs = [str(x.message) for x in w if issubclass(x.category, gpdp.PlanWarning)]
    assert msgs == p.warnings
    assert re.match(rf"the proxy's median response {median:.4f} µg/m³ is far from the middle of the response range \[0, 80\], "
                    r"the prior mean the private map shrinks towards \(40 µg/m³\)", p.warnings[0]), p.warnings[0]
    # It suggests a range centred on the median that keeps the end nearer to it (0).
    assert f"e.g. --response-range 0.0000,{2 * median:.4f}" in p.warnings[0]
    # Not stored in plan.json, as the CLI prints it only.
    assert "median response" not in json.dumps(p.to_dict(), ensure_ascii=False)


def test_plan_keywords_are_checked():
    X, y = read_proxy()
    with pytest.raises(gpdp.ParameterError, match="response_range/response_bound: required"):
        gpdp.plan(X, y, **QUICK)
    with pytest.raises(gpdp.ParameterError, match="not both"):
        gpdp.plan(X, y, response_range=(0, 40), response_bound=40, **QUICK)
    with pytest.raises(gpdp.ParameterError, match="response_bound: -1"):
        gpdp.plan(X, y, response_bound=-1, **QUICK)
    with pytest.raises(gpdp.ParameterError, match="response_range"):
        gpdp.plan(X, y, response_range=(40, 0), **QUICK)
    with pytest.raises(gpdp.ParameterError, match=r"epsilons: every target ε must be finite and > 0"):
        gpdp.plan(X, y, response_range=(0, 40), **dict(QUICK, epsilons=[1, 0]))
    with pytest.raises(gpdp.ParameterError, match=r"within: 1.5: the fraction must lie in \(0, 1\)"):
        gpdp.plan(X, y, response_range=(0, 40), within=1.5, **QUICK)
    with pytest.raises(gpdp.ParameterError, match=r"scale_bounds: \(2, 1\): need 0 < lo ≤ hi"):
        gpdp.plan(X, y, response_range=(0, 40), scale_bounds=(2, 1), **QUICK)
    with pytest.raises(gpdp.ParameterError, match="units: the unit label is empty"):
        gpdp.plan(X, y, response_range=(0, 40), units=" ", **QUICK)
    with pytest.raises(gpdp.DataError, match=r"X: 600 of the 600 proxy records lie outside the domain box:0,1,0,1"):
        gpdp.plan(X, y, response_range=(0, 40), **dict(QUICK, domain=((0, 1), (0, 1))))
    with pytest.raises(gpdp.DataError, match="X: the proxy has 2-D covariates but the domain interval:0,1 is 1-D"):
        gpdp.plan(X, y, response_range=(0, 40), **dict(QUICK, domain=(0, 1)))
    with pytest.raises(gpdp.DataError, match="y: every one of the 600 proxy responses lies outside the response range"):
        gpdp.plan(X, y, response_range=(100, 200), **QUICK)
    with pytest.raises(gpdp.DataError, match="cannot read /nonexistent/plan.json"):
        gpdp.Plan.load("/nonexistent/plan.json")


def test_loading_something_else_than_a_plan_is_refused(tmp_path):
    bad = tmp_path / "not-a-plan.json"
    bad.write_text("{}")
    with pytest.raises(gpdp.DataError, match=r"path: .*not-a-plan.json is not a plan.json of `gpdp plan`: missing field `version`"):
        gpdp.Plan.load(bad)
