"""gpdp — differentially private Gaussian-process posterior sample paths.

Releasing draws from a GP posterior fitted on private records is (ε, δ)-
differentially private once the kernel, domain, ridge r, scale σ and number
of draws are fixed from public information (Maciazek et al.; the accountant
and its proofs are in the repository's ``docs/``). This package is the
Python interface of the Rust library ``gpdp``: every number it returns is
computed by the library, the same as the ``gpdp`` command line gives.

Main entry points
-----------------
``account(...)``         the (ε, δ) guarantee of a release → ``PrivacyReport``
``account_batch(...)``   the same, vectorised over arrays of parameters
``calibrate(...)``       the least permissive r, σ or η meeting a target ε
``Mechanism(...)``       a checked (optionally calibrated) mechanism:
                         ``.release(X, y, query, seed=None)`` → ``Release``
                         ``.sample_path(X, y)`` → lazy ``SamplePath``
``plan(X, y, ...)``      ``gpdp plan`` on public/proxy arrays: fitted ℓ, σ, λ,
                         the ridge and simulated utility per ε → ``Plan``
                         (``.save("plan.json")`` for ``gpdp release --plan``)
``Ledger(path)``         the privacy-budget ledger file shared with the CLI
``nonprivate.posterior`` the posterior mean and variance (NOT private)
``Box(lo, hi)``          a box domain from its corners
``ThompsonSampler(X, y, candidates, ...)`` a private Thompson-sampling loop:
                         ``.ask()`` → the chosen points, ``.tell(x, y)``,
                         ``.epsilon`` the composed guarantee so far

Domains are strings (``"interval:0,1"``, ``"box:0,1,0,1"``), a pair
``(lo, hi)`` (an interval), one ``(lo, hi)`` pair per axis
(``((0, 1), (0, 1))``, the order of ``"box:…"``) or ``Box(lo, hi)``; a flat
tuple of four numbers is refused as ambiguous. Grids are ``N`` (an int),
``(N1, N2)`` or the string ``"N1xN2"``.

``Release.paths`` has shape (L, m): L draws × m query points, one row per
draw. scikit-learn's ``sample_y`` returns (m, n_samples), the transpose.

Errors are raised as subclasses of ``GpdpError`` (itself a ``ValueError``)
carrying the library's message, which names the parameter, row or value.

A release with ``seed=None`` uses an OS-seeded CSPRNG; a seed makes it
reproducible and **not private** (its report says ``"private": False``).

``Mechanism`` needs the responses' scale, a public choice: exactly one of
``response_range=(lo, hi)`` (in data units: responses are clipped to it and
centred on its middle, the prior mean; released values come back in data
units) or ``response_bound=M_Y`` (responses are used as given, |y| ≤ M_Y,
prior mean 0). Under both, ``scale`` (σ) and ``gp_noise`` (η) are in the
responses' units. When
responses had to be clipped, a ``ClippingWarning`` (a ``UserWarning``) tells
the operator how many; the count is a fact about the private data, so it
stays local (``Release.diagnostics``) and never appears in ``.report``.
"""

from . import _native
from ._native import (
    Box,
    BudgetExceededError,
    Calibration,
    ClippingWarning,
    DataError,
    GpdpError,
    Ledger,
    Mechanism,
    NumericalError,
    ParameterError,
    Plan,
    PlanWarning,
    PrivacyReport,
    Release,
    SamplePath,
    ThompsonSampler,
    TooLargeError,
    UnsupportedError,
    VacuousError,
    account,
    account_batch,
    calibrate,
    plan,
    spec_keys,
)
from . import nonprivate

__version__ = _native.__version__

__all__ = [
    "account",
    "account_batch",
    "calibrate",
    "spec_keys",
    "plan",
    "Plan",
    "Box",
    "Mechanism",
    "Release",
    "SamplePath",
    "ThompsonSampler",
    "PrivacyReport",
    "Calibration",
    "Ledger",
    "nonprivate",
    "GpdpError",
    "ParameterError",
    "DataError",
    "VacuousError",
    "UnsupportedError",
    "BudgetExceededError",
    "TooLargeError",
    "NumericalError",
    "ClippingWarning",
    "PlanWarning",
]
