"""The ledger is the CLI's file: budgets and releases recorded from Python are
what `gpdp ledger show` lists, and a release beyond the budget is refused
before it draws."""

import json

import numpy as np
import pytest

import gpdp
from conftest import run_cli

MODEL = dict(kernel="exponential", lengthscale=1.0, domain="interval:0,1", ridge=1.0, scale=5.0, delta=0.05)
X = np.linspace(0.05, 0.95, 10)
Y = np.sin(4 * X)


def test_python_and_cli_share_the_ledger(tmp_path):
    path = tmp_path / "ledger.sqlite"
    led = gpdp.Ledger(path)
    b = led.init("sensors", 5.5, 0.05)
    assert (b["epsilon"], b["delta"], b["conversion"]) == (5.5, 0.05, "improved")
    m = gpdp.Mechanism(n=10, **MODEL)
    rel = led.release("sensors", m, X, Y, [0.2, 0.8], seed=3)
    assert rel.paths.shape == (1, 2)
    entries = led.entries("sensors")
    assert len(entries) == 1 and entries[0]["status"] == "committed" and len(entries[0]["files_hash"]) == 64
    assert entries[0]["epsilon"] == pytest.approx(m.epsilon, rel=1e-12)
    shown = json.loads(run_cli("ledger", "show", "--ledger", str(path), "--dataset", "sensors", "--json"))
    assert shown == [{"budget": led.budget("sensors"), "releases": entries}]
    # A second release composes with the first (as L = 2 draws: ε = 4.91);
    # a third would need 5.97 > 5.5.
    r2 = led.reserve("sensors", m)
    two = gpdp.account(n=10, **dict(MODEL, draws=2)).epsilon
    assert r2["composed_epsilon"] == pytest.approx(two, rel=1e-9) and r2["epsilon"] == pytest.approx(m.epsilon, rel=1e-12)
    led.commit(r2["id"], "0" * 64, "elsewhere")
    with pytest.raises(gpdp.BudgetExceededError, match="5.5"):
        led.release("sensors", m, X, Y, [0.5], seed=4)
    assert len(led.entries("sensors")) == 2  # nothing recorded for the refused one
    with pytest.raises(gpdp.ParameterError, match="already has a budget"):
        led.init("sensors", 10.0, 0.05)
    with pytest.raises(gpdp.GpdpError, match="no budget|unknown|not"):
        led.reserve("other", m)
