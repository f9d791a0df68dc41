"""Non-private model checks — NOT differentially private.

``posterior(X, y, query, kernel=..., lengthscale=..., ridge=..., scale=...)``
returns the exact posterior mean μ_D and variance σ²·k_D(x, x) at the query
points (``gpdp posterior`` on the command line). Use it on public or
synthetic data only, e.g. to compare the model with scikit-learn's
``GaussianProcessRegressor`` before a release: publishing its output is not
covered by any guarantee.

With ``response_range=(lo, hi)`` the responses are treated exactly as a
release treats them — centred on the range's middle and clipped to the
range — and the mean comes back in data units, reverting to the prior mean
(lo + hi)/2 away from the data. ``scale`` (σ) is in data units with or
without a range, as for ``Mechanism``. ``units`` labels the result.

The result unpacks as before, ``mean, variance = posterior(...)``, and also
has ``.mean``, ``.variance``, ``.units`` and ``.response_range``.
"""

from typing import Optional, Tuple

import numpy as np

from . import _native

__all__ = ["posterior", "Posterior"]


class Posterior(tuple):
    """The posterior at the query points: a tuple ``(mean, variance)``
    (both shape (m,), in data units) with the labels it was computed with.

    Attributes: ``mean``, ``variance``, ``units`` (the label given, or None)
    and ``response_range`` (``(lo, hi)`` in data units, or None).
    """

    def __new__(
        cls,
        mean: np.ndarray,
        variance: np.ndarray,
        units: Optional[str] = None,
        response_range: Optional[Tuple[float, float]] = None,
    ) -> "Posterior":
        self = super().__new__(cls, (mean, variance))
        self.units = units
        self.response_range = response_range
        return self

    @property
    def mean(self) -> np.ndarray:
        """The posterior mean μ_D at the query points (data units)."""
        return self[0]

    @property
    def variance(self) -> np.ndarray:
        """The posterior variance σ²·k_D(x, x) (squared data units)."""
        return self[1]

    def __repr__(self) -> str:
        return f"Posterior(m={len(self[0])}, units={self.units!r}, response_range={self.response_range!r})"


def posterior(
    X,
    y,
    query,
    *,
    kernel: str,
    ridge: float,
    scale: float,
    lengthscale: Optional[float] = None,
    response_range=None,
    units: Optional[str] = None,
) -> Posterior:
    """The NON-PRIVATE posterior mean and variance at ``query`` (see the
    module's docstring). Every number is the library's; this wrapper only
    attaches the labels to the result."""
    mean, variance = _native.posterior(
        X,
        y,
        query,
        kernel=kernel,
        ridge=ridge,
        scale=scale,
        lengthscale=lengthscale,
        response_range=response_range,
        units=units,
    )
    if response_range is not None:
        lo, hi = response_range.split(",") if isinstance(response_range, str) else response_range
        response_range = (float(lo), float(hi))
    return Posterior(mean, variance, units=None if units is None else units.strip(), response_range=response_range)
