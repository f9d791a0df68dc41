"""ThompsonSampler: the same choices as `gpdp thompson` under the same seed,
ask/tell, the budget, and clear errors."""

import csv
import subprocess

import numpy as np
import pytest

import gpdp
from conftest import REPO, run_cli

EX = REPO / "examples" / "thompson"
OBJECTIVE = EX / "objective.sh"
MODEL = dict(kernel="matern52", lengthscale=0.2, domain="interval:0,1", scale=0.3, delta=1e-5, response_range=(0, 1))


def trials():
    with open(EX / "trials.csv") as f:
        rows = list(csv.DictReader(f))
    return np.array([float(r["dose"]) for r in rows]), np.array([float(r["response"]) for r in rows])


def observe(x: float) -> float:
    out = subprocess.run(["sh", str(OBJECTIVE), repr(float(x))], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[0])


def test_the_python_loop_makes_the_same_choices_as_the_cli_under_the_same_seed(tmp_path):
    out = tmp_path / "ts"
    run_cli(
        "thompson", "--data", str(EX / "trials.csv"), "--x", "dose", "--y", "response", "--response-range", "0,1",
        "--kernel", "matern52", "--lengthscale", "0.2", "--domain", "interval:0,1", "--scale", "0.3",
        "--target-epsilon", "2", "--delta", "1e-5", "--grid", "101", "--rounds", "6",
        "--objective", f"sh {OBJECTIVE}", "--out", str(out), "--seed", "4",
    )
    with open(out / "choices.csv") as f:
        cli_rows = list(csv.DictReader(f))
    X, y = trials()
    cand = np.linspace(0, 1, 101)
    with pytest.warns(UserWarning, match="NOT a private"):
        ts = gpdp.ThompsonSampler(X, y, cand, target_epsilon=2, rounds=6, seed=4, **MODEL)
    assert ts.private is False and ts.records == 12 and ts.epsilon == 0.0
    for row in cli_rows:
        x = ts.ask()
        assert x.shape == (1, 1)
        # The CLI writes the candidate as Rust prints it; the grid is the same.
        assert x[0, 0] == pytest.approx(float(row["dose"]), abs=1e-12)
        assert ts.epsilon == pytest.approx(float(row["epsilon_so_far"]), rel=1e-15)
        ts.tell(x[0], observe(x[0, 0]))
    assert ts.records == 18 and len(ts.rounds) == 6
    assert ts.rounds[-1]["records"] == 17
    assert ts.epsilon <= 2.0
    # The budget (the target) allows no seventh round: refused before any draw.
    assert ts.rounds_allowed() == 0
    with pytest.raises(gpdp.GpdpError, match="above its budget"):
        ts.ask()
    assert len(ts.rounds) == 6


def test_batches_tell_arrays_and_a_private_loop_is_the_default():
    X, y = trials()
    ts = gpdp.ThompsonSampler(X, y, np.linspace(0, 1, 51), batch=3, ridge=2.0, **MODEL)
    assert ts.private is True and ts.ridge == 2.0
    xs = ts.ask()
    assert xs.shape == (3, 1)
    ts.tell(xs, np.array([0.4, 0.5, 0.6]))
    assert ts.records == 15
    assert 0 < ts.epsilon < np.inf
    assert "ThompsonSampler(records=15, rounds=1" in repr(ts)


def test_bad_inputs_get_clear_errors():
    X, y = trials()
    with pytest.raises(gpdp.GpdpError, match="candidate 2"):
        gpdp.ThompsonSampler(X, y, [0.5, 1.5], ridge=2.0, **MODEL)
    with pytest.raises(gpdp.GpdpError, match="2-dimensional"):
        gpdp.ThompsonSampler(X, y, np.zeros((4, 2)), ridge=2.0, **MODEL)
    with pytest.raises(gpdp.ParameterError, match="rounds"):
        gpdp.ThompsonSampler(X, y, [0.5], target_epsilon=1.0, **MODEL)
    with pytest.raises(gpdp.GpdpError, match="ridge"):
        gpdp.ThompsonSampler(X, y, [0.5], target_epsilon=1.0, rounds=3, ridge=2.0, **MODEL)
    ts = gpdp.ThompsonSampler(X, y, [0.2, 0.5], ridge=2.0, **MODEL)
    with pytest.raises(gpdp.GpdpError, match="non-finite"):
        ts.tell([0.5], float("nan"))
    with pytest.raises(gpdp.GpdpError, match="not a finite point of the domain"):
        ts.tell([1.5], 0.3)
    with pytest.raises(gpdp.ParameterError, match="2-D point for a 1-D domain"):
        ts.tell([0.1, 0.2], 0.3)
    assert ts.records == 12
