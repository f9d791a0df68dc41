"""Non-private model checks — NOT differentially private.

``posterior(X, y, query, kernel=..., lengthscale=..., ridge=..., scale=...)``
returns the exact posterior mean μ_D and variance σ²·k_D(x, x) at the query
points (``gpdp posterior`` on the command line). Use it on public or
synthetic data only, e.g. to compare the model with scikit-learn's
``GaussianProcessRegressor`` before a release: publishing its output is not
covered by any guarantee.
"""

from ._native import posterior

__all__ = ["posterior"]
