"""The non-private posterior diagnostics equal scikit-learn's
GaussianProcessRegressor with the same fixed kernel to 1e-8.

gpdp's prior is GP(0, σ²k) with noise variance λ² = r²σ²; scikit-learn's
kernel is ConstantKernel(σ²)·k with alpha = r²σ² (no optimisation, no
normalisation); its predictive std excludes the noise, as gpdp's variance
σ²·k_D(x, x) does."""

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn", reason="scikit-learn is part of the test extras (pip install ./python[test])")
from sklearn.gaussian_process import GaussianProcessRegressor  # noqa: E402
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern  # noqa: E402

import gpdp  # noqa: E402

KERNELS = {
    "exponential": lambda l: Matern(length_scale=l, nu=0.5, length_scale_bounds="fixed"),
    "matern32": lambda l: Matern(length_scale=l, nu=1.5, length_scale_bounds="fixed"),
    "matern52": lambda l: Matern(length_scale=l, nu=2.5, length_scale_bounds="fixed"),
    "squared-exponential": lambda l: RBF(length_scale=l, length_scale_bounds="fixed"),
}


@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("dim", [1, 2])
def test_posterior_equals_scikit_learn(kernel, dim):
    rng = np.random.default_rng(dim * 10 + len(kernel))
    X = rng.uniform(0, 1, (40, dim))
    y = np.sin(3 * X.sum(1)) + 0.1 * rng.standard_normal(40)
    Q = rng.uniform(-0.2, 1.2, (25, dim))
    ell, ridge, scale = 0.35, 0.7, 1.8
    k = ConstantKernel(scale**2, constant_value_bounds="fixed") * KERNELS[kernel](ell)
    gp = GaussianProcessRegressor(kernel=k, alpha=(ridge * scale) ** 2, optimizer=None, normalize_y=False).fit(X, y)
    m_ref, s_ref = gp.predict(Q, return_std=True)
    mean, var = gpdp.nonprivate.posterior(X if dim > 1 else X[:, 0], y, Q if dim > 1 else Q[:, 0], kernel=kernel, lengthscale=ell, ridge=ridge, scale=scale)
    np.testing.assert_allclose(mean, m_ref, rtol=0, atol=1e-8)
    np.testing.assert_allclose(var, s_ref**2, rtol=0, atol=1e-8)


def test_posterior_refuses_bad_inputs():
    with pytest.raises(gpdp.ParameterError, match="scale"):
        gpdp.nonprivate.posterior([0.1, 0.2], [0.0, 1.0], [0.5], kernel="exponential", lengthscale=1.0, ridge=1.0, scale=float("inf"))
    with pytest.raises(gpdp.ParameterError, match="query: 2-D points but X is 1-D"):
        gpdp.nonprivate.posterior([0.1, 0.2], [0.0, 1.0], np.zeros((3, 2)), kernel="exponential", lengthscale=1.0, ridge=1.0, scale=1.0)


def test_release_paths_are_draws_by_points_the_transpose_of_sample_y():
    """`Release.paths` is (L, m) — one row per draw — whereas scikit-learn's
    `sample_y` is (m, n_samples): `paths.T` has scikit-learn's layout."""
    rng = np.random.default_rng(4)
    X, Q = rng.uniform(0, 1, 20), np.linspace(0, 1, 7)
    y = np.clip(np.sin(5 * X), -1, 1)
    m = gpdp.Mechanism(kernel="matern32", lengthscale=0.3, domain=(0, 1), n=20, ridge=1.0, scale=1.0, draws=3,
                       delta=1e-5, response_bound=1.0)
    rel = m.release(X, y, Q, seed=8)
    k = ConstantKernel(1.0, constant_value_bounds="fixed") * KERNELS["matern32"](0.3)
    gp = GaussianProcessRegressor(kernel=k, alpha=1.0, optimizer=None).fit(X[:, None], y)
    sk = gp.sample_y(Q[:, None], n_samples=3, random_state=0)
    assert rel.paths.shape == (3, 7) and sk.shape == (7, 3) and rel.paths.T.shape == sk.shape
