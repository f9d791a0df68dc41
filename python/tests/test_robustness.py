"""Threads sharing one lazy path, and inputs that must be refused or accepted:
strided arrays, empty and complex columns, non-finite query points (issue 22,
item 14)."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpdp

MODEL = dict(kernel="matern52", lengthscale=0.3, domain="interval:0,1", ridge=0.5, scale=1.0, delta=1e-3, response_bound=1.0)
RNG = np.random.default_rng(5)
X = RNG.uniform(0, 1, 15)
Y = np.clip(np.cos(5 * X), -1, 1)
FIG3 = dict(kernel="exponential", lengthscale=1.0, domain="interval:0,1", n=10, scale=5.0, delta=0.05)

# Three threads evaluate one SamplePath on new points, interleaved with the
# cheap accessors; each call keeps the path's lock while it computes. Run in
# a child process: a deadlock holds the GIL, so it would also hang a join
# with a timeout in this process.
THREADS = textwrap.dedent(
    """
    import threading
    import numpy as np
    import gpdp

    rng = np.random.default_rng(5)
    X = rng.uniform(0, 1, 15)
    m = gpdp.Mechanism(kernel="exponential", lengthscale=0.3, domain="interval:0,1", n=15, ridge=0.5,
                       scale=1.0, delta=1e-3, draws=2, response_bound=1.0)
    path = m.sample_path(X, np.cos(5 * X), max_points=4096, seed=3)
    errors = []

    def work(k):
        try:
            r = np.random.default_rng(100 + k)
            for _ in range(40):
                v = path(r.uniform(0, 1, 10))
                assert v.shape == (2, 10) and np.all(np.isfinite(v))
                len(path); path.revealed; path.eval(k % 2, [0.5])
        except Exception as e:  # reported below
            errors.append(repr(e))

    ts = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    print("revealed", path.revealed)
    """
)


def test_three_threads_sharing_one_sample_path_all_finish():
    try:
        r = subprocess.run([sys.executable, "-c", THREADS], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("three threads evaluating one SamplePath did not finish within 120 s (deadlock)")
    assert r.returncode == 0, r.stderr
    # 3 threads × 40 calls × 10 new uniform points, plus the point 0.5: all distinct.
    assert r.stdout.strip() == "revealed [1201, 1201]", r.stdout


def test_account_batch_accepts_strided_arrays():
    ridge = np.linspace(0.6, 2.0, 14)
    table = np.column_stack([ridge, 2 * ridge])
    for strided in (ridge[::2], table[::2, 0]):
        assert not strided.flags["C_CONTIGUOUS"]
        got = gpdp.account_batch(**FIG3, ridge=strided, draws=np.arange(1, 15)[::2])
        want = gpdp.account_batch(**FIG3, ridge=np.ascontiguousarray(strided), draws=np.arange(1, 15, 2))
        np.testing.assert_array_equal(got["epsilon"], want["epsilon"])
        assert got["epsilon"][3] == gpdp.account(**FIG3, ridge=float(ridge[6]), draws=7).epsilon


def test_account_batch_refuses_empty_columns():
    with pytest.raises(gpdp.ParameterError, match="ridge: has 0 rows: give at least one parameter set"):
        gpdp.account_batch(**FIG3, ridge=np.array([]))
    with pytest.raises(gpdp.ParameterError, match="kernel: has 0 rows"):
        gpdp.account_batch(**dict(FIG3, kernel=[]), ridge=1.0)


@pytest.mark.parametrize(
    "value",
    [np.array([1.0 + 0j, 2.0 + 0.5j]), [1.0 + 0j, 2.0], np.complex128(1.0), 1.0 + 0j, np.array(1.0 + 0j)],
    ids=["array", "list", "numpy-scalar", "python-scalar", "0-d-array"],
)
def test_account_batch_refuses_complex_values(value):
    with pytest.raises(gpdp.ParameterError, match="ridge: complex values are not accepted"):
        gpdp.account_batch(**FIG3, ridge=value)


def test_account_batch_still_takes_numpy_scalars_and_0d_arrays():
    want = gpdp.account(**FIG3, ridge=1.5).epsilon
    for v in (np.float32(1.5), np.int64(1) + 0.5, np.array(1.5), 1.5):
        assert gpdp.account_batch(**FIG3, ridge=v)["epsilon"][0] == want
    assert gpdp.account_batch(**dict(FIG3, n=np.int64(10)), ridge=1.5)["epsilon"][0] == want


def test_complex_data_and_queries_are_refused():
    m = gpdp.Mechanism(n=15, **MODEL)
    with pytest.raises(gpdp.ParameterError, match="X: complex values are not accepted"):
        m.release(X + 0j, Y, [0.5], seed=1)
    with pytest.raises(gpdp.ParameterError, match="y: complex values are not accepted"):
        m.release(X, Y + 1j, [0.5], seed=1)
    with pytest.raises(gpdp.ParameterError, match="query: complex values are not accepted"):
        m.release(X, Y, np.array([0.5 + 0j]), seed=1)
    path = m.sample_path(X, Y, seed=1)
    with pytest.raises(gpdp.ParameterError, match="points: complex values are not accepted"):
        path(np.array([0.5 + 0j]))


NAN_1D = r"query point 3 \(index 2\) is \(NaN\): every coordinate must be a finite number"


def test_a_non_finite_query_point_is_named_in_a_release():
    m = gpdp.Mechanism(n=15, **MODEL)
    with pytest.raises(gpdp.DataError, match=NAN_1D):
        m.release(X, Y, [0.1, 0.2, np.nan, 0.4], seed=1)
    m2 = gpdp.Mechanism(kernel="matern32", lengthscale=0.4, domain="box:0,1,0,1", n=4, ridge=1.0, scale=1.0, delta=1e-3, response_bound=1.0)
    X2 = np.array([[0.1, 0.1], [0.2, 0.8], [0.7, 0.3], [0.9, 0.9]])
    with pytest.raises(gpdp.DataError, match=r"query point 2 \(index 1\) is \(0.5, inf\)"):
        m2.release(X2, [0.1, 0.2, 0.3, 0.4], np.array([[0.5, 0.5], [0.5, np.inf]]), seed=1)
    with pytest.raises(gpdp.DataError, match=NAN_1D):
        gpdp.nonprivate.posterior(X, Y, [0.1, 0.2, np.nan], kernel="matern52", lengthscale=0.3, ridge=0.5, scale=1.0)


def test_a_non_finite_query_point_is_named_by_a_lazy_path_and_reveals_nothing():
    path = gpdp.Mechanism(n=15, draws=2, **MODEL).sample_path(X, Y, seed=1)
    path([0.25])
    for call in (lambda q: path(q), lambda q: path.eval(1, q)):
        with pytest.raises(gpdp.DataError, match=NAN_1D):
            call([0.1, 0.2, np.nan])
        with pytest.raises(gpdp.DataError, match=r"query point 1 \(index 0\) is \(-inf\)"):
            call([-np.inf])
    assert path.revealed == [1, 1]  # the refused calls revealed nothing
