"""Lazy sample paths: consistent values, the mechanism's report, and the
joint distribution of a one-shot draw (statistical, seeded, 5 standard errors)."""

import numpy as np
import pytest

import gpdp

MODEL = dict(kernel="matern52", lengthscale=0.3, domain="interval:0,1", ridge=0.5, scale=1.0, delta=1e-3, response_bound=1.0)
RNG = np.random.default_rng(11)
X = RNG.uniform(0, 1, 15)
Y = np.clip(np.cos(5 * X), -1, 1)


def test_repeated_queries_are_consistent():
    m = gpdp.Mechanism(n=15, draws=2, **MODEL)
    path = m.sample_path(X, Y, seed=5)
    a = path([0.1, 0.5, 0.9])
    b = path([0.5, 0.2])
    assert a.shape == (2, 3) and b.shape == (2, 2)
    np.testing.assert_array_equal(a[:, 1], b[:, 0])  # the same point twice, the same value
    np.testing.assert_array_equal(path.eval(1, [0.9]), a[1, 2:])
    assert len(path) == 2 and path.revealed == [4, 4]
    assert repr(path) == "gpdp.SamplePath(draws=2, dim=1, revealed=[4, 4])"
    assert path.report["private"] is False and path.report["query"]["kind"] == "lazy"
    one = gpdp.Mechanism(n=15, **MODEL).sample_path(X, Y, seed=5)
    assert one([0.3, 0.4]).shape == (2,)
    with pytest.raises(gpdp.ParameterError, match="l: 2 is not a path index"):
        path.eval(2, [0.1])
    with pytest.raises(gpdp.ParameterError, match="2-D points for a 1-D domain"):
        path(np.zeros((2, 2)))


def test_a_lazy_path_has_the_joint_law_of_a_one_shot_draw():
    # Points revealed in two calls (A, then B) versus one release at A ∪ B:
    # means, variances and the A–B covariance agree within 5 standard errors.
    m = gpdp.Mechanism(n=15, **MODEL)
    A, B = np.array([0.15, 0.6]), np.array([0.62, 0.95])
    K = 1500
    lazy = np.empty((K, 4))
    shot = np.empty((K, 4))
    for k in range(K):
        p = m.sample_path(X, Y, seed=10_000 + k)
        lazy[k, :2], lazy[k, 2:] = p(A), p(B)
        shot[k] = m.release(X, Y, np.concatenate([A, B]), seed=20_000 + k).paths[0]
    mean, var = gpdp.nonprivate.posterior(X, Y, np.concatenate([A, B]), kernel="matern52", lengthscale=0.3, ridge=0.5, scale=1.0)
    for s in (lazy, shot):
        se = np.sqrt(var / K)
        assert np.all(np.abs(s.mean(0) - mean) < 5 * se), (s.mean(0), mean)
        # Var of the sample variance of a Gaussian: 2σ⁴/(K − 1).
        assert np.all(np.abs(s.var(0, ddof=1) - var) < 5 * np.sqrt(2 / (K - 1)) * var)
    # Cross-covariances between the two batches (including the near-duplicate
    # pair 0.6/0.62): two-sample comparison, SE from both samples.
    for i in range(2):
        for j in range(2, 4):
            a = (lazy[:, i] - lazy[:, i].mean()) * (lazy[:, j] - lazy[:, j].mean())
            b = (shot[:, i] - shot[:, i].mean()) * (shot[:, j] - shot[:, j].mean())
            se = np.sqrt(a.var(ddof=1) / K + b.var(ddof=1) / K)
            assert abs(a.mean() - b.mean()) < 5 * se, (i, j, a.mean(), b.mean())
    # The near-duplicate pair is strongly correlated (the test has power).
    assert np.corrcoef(lazy[:, 1], lazy[:, 2])[0, 1] > 0.9
