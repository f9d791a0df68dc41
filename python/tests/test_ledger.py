"""The ledger is the CLI's file: budgets and releases recorded from Python are
what `gpdp ledger show` lists, and a release beyond the budget is refused
before it draws."""

import json

import numpy as np
import pytest

import gpdp
from conftest import run_cli

MODEL = dict(kernel="exponential", lengthscale=1.0, domain="interval:0,1", ridge=1.0, scale=5.0, delta=0.05, response_bound=1.0)
X = np.linspace(0.05, 0.95, 10)
Y = np.sin(4 * X)


def test_python_and_cli_share_the_ledger(tmp_path):
    path = tmp_path / "ledger.sqlite"
    led = gpdp.Ledger(path)
    b = led.init("sensors", 5.5, 0.05)
    assert (b["epsilon"], b["delta"], b["conversion"]) == (5.5, 0.05, "improved")
    assert repr(led) == f"gpdp.Ledger({str(path)!r}, datasets=['sensors'])".replace("'", '"')
    m = gpdp.Mechanism(n=10, **MODEL)
    rel = led.release("sensors", m, X, Y, [0.2, 0.8], seed=3)
    assert rel.paths.shape == (1, 2)
    entries = led.entries("sensors")
    assert len(entries) == 1 and entries[0]["status"] == "committed" and len(entries[0]["files_hash"]) == 64
    assert entries[0]["epsilon"] == pytest.approx(m.epsilon, rel=1e-12)
    shown = json.loads(run_cli("ledger", "show", "--ledger", str(path), "--dataset", "sensors", "--json"))
    spent = entries[0]["composed_epsilon"]
    assert shown == [
        {"budget": led.budget("sensors"), "spent_epsilon": spent, "remaining_epsilon": max(0.0, 5.5 - spent), "releases": entries}
    ]
    # A second release composes with the first (as L = 2 draws: ε = 4.91 — the
    # curves this gpdp recorded compose with the order optimised continuously,
    # within 1e-6 of the accountant); a third would need about 5.97 > 5.5.
    r2 = led.reserve("sensors", m)
    two = gpdp.account(n=10, **dict(MODEL, draws=2)).epsilon
    assert two * (1 - 1e-9) <= r2["composed_epsilon"] <= two * (1 + 1e-6) and r2["epsilon"] == pytest.approx(m.epsilon, rel=1e-12)
    led.commit(r2["id"], "0" * 64, "elsewhere")
    with pytest.raises(gpdp.BudgetExceededError, match="5.5"):
        led.release("sensors", m, X, Y, [0.5], seed=4)
    assert len(led.entries("sensors")) == 2  # nothing recorded for the refused one
    with pytest.raises(gpdp.ParameterError, match="already has a budget"):
        led.init("sensors", 10.0, 0.05)
    with pytest.raises(gpdp.GpdpError, match="no budget|unknown|not"):
        led.reserve("other", m)


def test_a_refused_dataset_consumes_no_budget(tmp_path):
    # Issue 22, item 8: the data checks run before the reservation.
    led = gpdp.Ledger(tmp_path / "ledger.sqlite")
    led.init("sensors", 5.5, 0.05)
    reject = gpdp.Mechanism(n=10, on_unbounded="reject", **MODEL)
    with pytest.raises(gpdp.DataError, match="data row 3: response y = 2 exceeds"):
        led.release("sensors", reject, X, np.where(np.arange(10) == 2, 2.0, Y), [0.5], seed=1)
    with pytest.raises(gpdp.DataError, match="data row 1: covariate .* outside the declared domain"):
        led.release("sensors", reject, np.where(np.arange(10) == 0, 1.5, X), Y, [0.5], seed=1)
    with pytest.raises(gpdp.DataError, match="accounted for n = 10"):
        led.release("sensors", reject, X[:9], Y[:9], [0.5], seed=1)
    with pytest.raises(gpdp.DataError, match=r"query point 1 \(index 0\)"):
        led.release("sensors", reject, X, Y, [np.nan], seed=1)
    with pytest.raises(gpdp.ParameterError, match="query/grid"):
        led.release("sensors", reject, X, Y, seed=1)
    assert led.entries("sensors") == []
    # The whole budget is still there: two releases fit (ε = 4.91 for L = 2).
    led.release("sensors", reject, X, Y, [0.5], seed=2)
    r = led.reserve("sensors", reject)
    two = gpdp.account(n=10, **dict(MODEL, draws=2)).epsilon
    assert two * (1 - 1e-9) <= r["composed_epsilon"] <= two * (1 + 1e-6)  # this gpdp's curves, continuous order
