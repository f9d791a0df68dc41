"""Domains and grids as Python values (issue 26): tuples, ints and gpdp.Box
mean exactly what the library's strings mean, and ambiguous or malformed
values are refused with a ParameterError naming the keyword."""

import numpy as np
import pytest

import gpdp

ACC = dict(kernel="matern32", lengthscale=0.3, n=50, ridge=1.0, scale=1.0, delta=1e-5)
MECH = dict(kernel="matern32", lengthscale=0.4, n=30, ridge=2.0, scale=1.0, draws=2, delta=1e-5, response_bound=1.0)
RNG = np.random.default_rng(26)
X2 = RNG.uniform(0, 1, (30, 2))
Y2 = np.clip(X2[:, 0] - X2[:, 1], -1, 1)


@pytest.mark.parametrize("domain", [(0, 1), [0, 1], ((0, 1),), np.array([0.0, 1.0]), gpdp.Box(0, 1), gpdp.Box([0], [1])])
def test_interval_values_equal_the_string(domain):
    ref = gpdp.account(domain="interval:0,1", **ACC)
    assert gpdp.account(domain=domain, **ACC).to_dict() == ref.to_dict()


@pytest.mark.parametrize("domain", [((0, 1), (0, 2)), [[0, 1], [0, 2]], np.array([[0, 1], [0, 2]]), gpdp.Box((0, 0), (1, 2))])
def test_box_values_are_per_axis_pairs_or_corners(domain):
    # ((x_lo, x_hi), (y_lo, y_hi)) is "box:x_lo,x_hi,y_lo,y_hi"; Box takes the corners.
    ref = gpdp.account(domain="box:0,1,0,2", **ACC)
    assert gpdp.account(domain=domain, **ACC).to_dict() == ref.to_dict()
    c = gpdp.calibrate(target_epsilon=2.0, domain=domain, **{k: v for k, v in ACC.items() if k != "ridge"})
    assert c.value == gpdp.calibrate(target_epsilon=2.0, domain="box:0,1,0,2", **{k: v for k, v in ACC.items() if k != "ridge"}).value
    m = gpdp.Mechanism(domain=domain, **MECH)
    assert m.spec["domain"] == "box:0,1,0,2"
    assert m.epsilon == gpdp.Mechanism(domain="box:0,1,0,2", **MECH).epsilon


def test_the_box_class():
    b = gpdp.Box((500000, 180000), (510000, 190000))
    assert str(b) == "box:500000,510000,180000,190000"
    assert repr(b) == "gpdp.Box(lo=(500000.0, 180000.0), hi=(510000.0, 190000.0))"
    assert b.lo == [500000.0, 180000.0] and b.hi == [510000.0, 190000.0] and b.dim == 2
    assert b == gpdp.Box([500000, 180000], [510000, 190000]) and b != gpdp.Box((0, 0), (1, 1))
    assert str(gpdp.Box(0, 1)) == "interval:0,1" and gpdp.Box(0, 1).dim == 1
    with pytest.raises(gpdp.ParameterError, match="Box: lo has 2 coordinates but hi has 3"):
        gpdp.Box((0, 0), (1, 1, 1))
    with pytest.raises(gpdp.ParameterError, match=r"Box: box side 2 has bounds \(1, 0\)"):
        gpdp.Box((0, 1), (1, 0))
    with pytest.raises(gpdp.ParameterError, match="Box: lo: expected a number or a sequence of numbers"):
        gpdp.Box("0", 1)
    # In account_batch a Box is one domain for every row (a tuple would be a column).
    t = gpdp.account_batch(kernel="exponential", lengthscale=1.0, domain=gpdp.Box(0, 1), n=10,
                           ridge=np.array([0.5, 1.0]), scale=5.0, delta=0.05)
    ref = gpdp.account_batch(kernel="exponential", lengthscale=1.0, domain="interval:0,1", n=10,
                             ridge=np.array([0.5, 1.0]), scale=5.0, delta=0.05)
    np.testing.assert_array_equal(t["epsilon"], ref["epsilon"])


def test_ambiguous_or_malformed_domains_are_refused_naming_the_keyword():
    with pytest.raises(gpdp.ParameterError, match=r"domain: \(0, 1, 0, 1\) is ambiguous.*\(\(x_lo, x_hi\), \(y_lo, y_hi\)\)"):
        gpdp.account(domain=(0, 1, 0, 1), **ACC)
    with pytest.raises(gpdp.ParameterError, match=r"domain: \(0, 1, 0, 1\) is ambiguous"):
        gpdp.Mechanism(domain=(0, 1, 0, 1), **MECH)
    with pytest.raises(gpdp.ParameterError, match=r"domain: interval bounds \(1, 0\) must be finite with lower < upper"):
        gpdp.account(domain=(1, 0), **ACC)
    with pytest.raises(gpdp.ParameterError, match=r"domain: box side 2 has bounds \(2, 1\)"):
        gpdp.account(domain=((0, 1), (2, 1)), **ACC)
    for bad in [(0, 1, 2), ((0, 1, 2),), 5, None, "interval", ((0, 1), (0,))]:
        with pytest.raises(gpdp.ParameterError, match="^domain: "):
            gpdp.account(domain=bad, **ACC)


@pytest.mark.parametrize("grid,text", [(4, "4"), ((4, 3), "4x3"), ([4, 3], "4x3"), (np.int64(4), "4"), ((np.int32(4), 3), "4x3")])
def test_grid_ints_and_tuples_equal_the_string(grid, text):
    m = gpdp.Mechanism(domain=((0, 1), (0, 1)), **MECH)
    a = m.release(X2, Y2, grid=grid, seed=5)
    b = m.release(X2, Y2, grid=text, seed=5)
    np.testing.assert_array_equal(a.paths, b.paths)  # the same grid, the same draw
    np.testing.assert_array_equal(a.query, b.query)
    counts = [int(c) for c in text.split("x")] * (2 if "x" not in text else 1)
    assert a.paths.shape == (2, counts[0] * counts[1])
    # x1 varies fastest.
    assert a.query[1, 0] > a.query[0, 0] and a.query[1, 1] == a.query[0, 1]


def test_bad_grids_are_refused_naming_the_keyword(tmp_path):
    m = gpdp.Mechanism(domain=((0, 1), (0, 1)), **MECH)
    for bad in [True, 2.5, -3, (4, 2.5), (), "4x", object()]:
        with pytest.raises(gpdp.ParameterError, match="grid"):
            m.release(X2, Y2, grid=bad, seed=5)
    with pytest.raises(gpdp.ParameterError, match="grid '1x4': every axis needs at least 2 points"):
        m.release(X2, Y2, grid=(1, 4), seed=5)
    with pytest.raises(gpdp.ParameterError, match="expected one count or 2 counts for the 2-D domain"):
        m.release(X2, Y2, grid=(4, 4, 4), seed=5)
    with pytest.raises(gpdp.ParameterError, match="query/grid: give exactly one"):
        m.release(X2, Y2, X2[:3], grid=4, seed=5)
    # The ledger's release takes the same grids; a refused one reserves nothing.
    led = gpdp.Ledger(str(tmp_path / "budget.sqlite"))
    led.init("d", 100.0, 1e-3)
    with pytest.raises(gpdp.ParameterError, match="grid"):
        led.release("d", m, X2, Y2, grid=2.5, seed=1)
    assert led.entries("d") == []
    rel = led.release("d", m, X2, Y2, grid=(3, 2), seed=1)
    assert rel.paths.shape == (2, 6) and len(led.entries("d")) == 1


def test_covariate_lattice_takes_ints_and_tuples():
    lat = dict(MECH, n=4)
    Xl = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, 1.0], [0.0, 1.0]])
    a = gpdp.Mechanism(domain=((0, 1), (0, 1)), covariate_lattice=(3, 2), **lat)
    b = gpdp.Mechanism(domain=((0, 1), (0, 1)), covariate_lattice="3x2", **lat)
    assert a.spec["covariate_lattice"] == "3x2" and a.epsilon == b.epsilon
    np.testing.assert_array_equal(a.release(Xl, np.zeros(4), grid=3, seed=2).paths, b.release(Xl, np.zeros(4), grid=3, seed=2).paths)
