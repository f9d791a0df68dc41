"""Type stubs of gpdp's Rust core (see the docstrings for the formulas' references)."""

from os import PathLike
from typing import Any, Dict, List, Literal, Optional, Sequence, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

__version__: str

ArrayLike = npt.ArrayLike
Kernel = Literal["exponential", "matern32", "matern52", "squared-exponential", "constant", "diagonal"]
Bound = Literal["tight", "joint", "paper"]
ConversionName = Literal["improved", "paper", "pld"]
SolveName = Literal["ridge", "scale", "gp-noise", "draws"]
Relation = Literal["replace-one", "change-response"]

class Box:
    """An axis-aligned box from its corners, ``Box((x_lo, y_lo), (x_hi, y_hi))``;
    numbers give an interval. ``str(box)`` is the library's string."""

    def __init__(self, lo: Union[float, Sequence[float]], hi: Union[float, Sequence[float]]) -> None: ...
    @property
    def lo(self) -> List[float]: ...
    @property
    def hi(self) -> List[float]: ...
    @property
    def dim(self) -> int: ...

# A domain: "interval:a,b" | "box:a1,b1,a2,b2" | "ball:c1,…,cd,radius"; (lo, hi), an
# interval; ((x_lo, x_hi), (y_lo, y_hi), …), one pair per axis (the string's order);
# or Box(lo_corner, hi_corner). A flat tuple of 4+ numbers is refused as ambiguous.
DomainLike = Union[str, Box, Tuple[float, float], Sequence[Tuple[float, float]], np.ndarray]
# A grid: N points per axis, (N1, N2, …), or "N" / "N1xN2" (x1 varies fastest).
GridLike = Union[int, Sequence[int], str]

class GpdpError(ValueError): ...
class ParameterError(GpdpError): ...
class DataError(GpdpError): ...
class VacuousError(GpdpError): ...
class UnsupportedError(GpdpError): ...
class BudgetExceededError(GpdpError): ...
class TooLargeError(GpdpError): ...
class NumericalError(GpdpError): ...

class PlanWarning(UserWarning):
    """A warning of ``plan`` (also in ``Plan.warnings``), as ``gpdp plan`` prints it."""

class ClippingWarning(UserWarning):
    """Responses were clipped to the response range (or [-M_Y, M_Y]) before a
    release; the message gives the count. An operator diagnostic about the
    private data (also in ``Release.diagnostics``), never in ``.report``."""

class PrivacyReport:
    """The (ε, δ) guarantee and what it rests on (docs/accountant.md)."""

    @property
    def epsilon(self) -> float: ...
    @property
    def delta(self) -> float: ...
    @property
    def alpha(self) -> float: ...
    @property
    def alpha_max(self) -> float: ...
    @property
    def rdp(self) -> float: ...
    @property
    def conversion(self) -> str: ...
    @property
    def components(self) -> List[Dict[str, Any]]: ...
    @property
    def neighbouring_relation(self) -> str:
        """The relation the statement holds for, in words."""
    @property
    def gaussian(self) -> Optional[Dict[str, Any]]:
        """With exact Gaussian accounting (change-response): μ, its source and the release."""
    def to_dict(self) -> Dict[str, Any]: ...

class Calibration:
    @property
    def solve(self) -> str: ...
    @property
    def value(self) -> float: ...
    @property
    def report(self) -> PrivacyReport: ...
    @property
    def permissive_value(self) -> float: ...
    @property
    def permissive_epsilon(self) -> float: ...
    def to_dict(self) -> Dict[str, Any]: ...

def account(
    *,
    kernel: Kernel,
    domain: DomainLike,
    n: Optional[int] = None,
    ridge: float,
    scale: float,
    lengthscale: Optional[float] = None,
    draws: int = 1,
    delta: Optional[float] = None,
    epsilon: Optional[float] = None,
    gp_noise: float = 0.0,
    response_bound: float = 1.0,
    sensitivity: str = "auto",
    rkhs_norm: Optional[float] = None,
    bound: Bound = "tight",
    conversion: ConversionName = "improved",
    relation: Relation = "replace-one",
    covariates: Optional[ArrayLike] = None,
) -> PrivacyReport:
    """The (ε, δ) guarantee of releasing `draws` sample paths (give delta or epsilon).
    With ``relation="change-response"`` the exact Gaussian-mechanism statement,
    with the public ``covariates`` (then ``n`` may be omitted) or the bound for any."""

def account_batch(**columns: Union[float, int, str, Box, ArrayLike]) -> Dict[str, np.ndarray]:
    """`account` over arrays of parameters (scalars broadcast; any strides); one
    array per report field. Empty columns and complex values raise ``ParameterError``.
    ``domain`` is a string or a ``Box`` for every row, or an array of strings (a tuple
    is a column here, one domain per row)."""

def calibrate(
    *,
    solve: SolveName = "ridge",
    target_epsilon: float,
    delta: float,
    kernel: Kernel,
    domain: DomainLike,
    n: Optional[int] = None,
    lengthscale: Optional[float] = None,
    ridge: Optional[float] = None,
    scale: Optional[float] = None,
    gp_noise: float = 0.0,
    draws: Optional[int] = None,
    response_bound: float = 1.0,
    sensitivity: str = "auto",
    rkhs_norm: Optional[float] = None,
    bound: Bound = "tight",
    conversion: ConversionName = "improved",
    relation: Relation = "replace-one",
    covariates: Optional[ArrayLike] = None,
) -> Calibration:
    """The least permissive r, σ, η (or largest L) meeting target_epsilon at delta
    (under ``relation``; see ``account``)."""

def posterior(
    X: ArrayLike,
    y: ArrayLike,
    query: ArrayLike,
    *,
    kernel: Kernel,
    ridge: float,
    scale: float,
    lengthscale: Optional[float] = None,
    response_range: Optional[Tuple[float, float]] = None,
    units: Optional[str] = None,
) -> Tuple[np.ndarray, np.ndarray]:
    """The NON-PRIVATE posterior mean and variance at the query points. With
    ``response_range`` the responses are centred on its middle and clipped to
    it as a release does (``scale`` in data units), and the results come back
    in data units. ``units`` is only
    checked here: ``gpdp.nonprivate.posterior`` returns it on its result."""

class Release:
    @property
    def paths(self) -> np.ndarray:
        """Shape (L, m): L draws × m query points, one row per draw. (scikit-learn's
        ``sample_y`` returns (m, n_samples), the transpose: compare with ``paths.T``.)"""
    @property
    def query(self) -> np.ndarray:
        """Shape (m, d)."""
    @property
    def report(self) -> Dict[str, Any]: ...
    @property
    def privacy(self) -> PrivacyReport: ...
    @property
    def private(self) -> bool: ...
    @property
    def diagnostics(self) -> Dict[str, Any]:
        """Operator-only (NOT covered by ε; do not publish)."""

class SamplePath:
    def __call__(self, points: ArrayLike) -> np.ndarray:
        """Shape (m,) for one path, (L, m) for several (rows are draws, as in
        ``Release.paths``). Thread-safe (calls on
        one path run one at a time, without the GIL); a non-finite point
        raises ``DataError`` naming it."""
    def eval(self, l: int, points: ArrayLike) -> np.ndarray: ...
    def __len__(self) -> int: ...
    @property
    def revealed(self) -> List[int]: ...
    @property
    def report(self) -> Dict[str, Any]: ...

def spec_keys() -> List[str]:
    """The keys of the release spec (docs/spec.md): the keywords ``Mechanism`` takes besides ``n``."""

class ThompsonSampler:
    def __init__(
        self,
        X: ArrayLike,
        y: ArrayLike,
        candidates: ArrayLike,
        *,
        batch: int = 1,
        target_epsilon: Optional[float] = None,
        rounds: Optional[int] = None,
        budget_epsilon: Optional[float] = None,
        minimise: bool = False,
        seed: Optional[int] = None,
        **spec: Any,
    ) -> None:
        """A private Thompson-sampling loop over the public ``candidates``, from the
        private records (X, y); ``spec`` are ``Mechanism``'s release keywords. With
        ``target_epsilon`` and ``rounds`` the ridge is calibrated for the whole loop.
        ``seed`` makes it reproducible and NOT private."""
    def ask(self) -> npt.NDArray[np.float64]:
        """One round: the chosen points, shape (batch, d); refused before any draw
        when the composed guarantee would exceed the budget."""
    def tell(self, x: ArrayLike, y: Union[float, ArrayLike]) -> None: ...
    def rounds_allowed(self, records_per_round: Optional[int] = None, cap: int = 10000) -> int: ...
    @property
    def epsilon(self) -> float: ...
    @property
    def delta(self) -> float: ...
    @property
    def ridge(self) -> float: ...
    @property
    def records(self) -> int: ...
    @property
    def private(self) -> bool: ...
    @property
    def rounds(self) -> List[Dict[str, Any]]: ...

class Mechanism:
    def __init__(
        self,
        *,
        kernel: Kernel,
        domain: DomainLike,
        n: Optional[int] = None,
        delta: float,
        lengthscale: Optional[float] = None,
        ridge: Optional[float] = None,
        scale: Optional[float] = None,
        gp_noise: float = 0.0,
        draws: int = 1,
        response_bound: Optional[float] = None,
        response_range: Optional[Tuple[float, float]] = None,
        units: Optional[str] = None,
        on_unbounded: Literal["clip", "reject"] = "clip",
        sensitivity: str = "auto",
        rkhs_norm: Optional[float] = None,
        assume_rkhs_responses: bool = False,
        bound: Bound = "tight",
        conversion: Literal["improved", "paper"] = "improved",
        sampler: str = "auto",
        covariate_lattice: Optional[GridLike] = None,
        max_epsilon: Optional[float] = None,
        target_epsilon: Optional[float] = None,
        solve: Optional[Literal["ridge", "scale", "gp-noise"]] = None,
        ridge_floor: Optional[float] = None,
        snap: Optional[Union[float, str]] = None,
        relation: Relation = "replace-one",
        covariates: Optional[ArrayLike] = None,
    ) -> None:
        """A checked mechanism. The responses' scale is required — exactly one
        of ``response_range=(lo, hi)`` (data units; values are returned in
        them) or ``response_bound=M_Y`` (|y| ≤ M_Y, values as given).
        ``relation="change-response"`` declares the covariates public (each reading
        is protected): with ``covariates=`` (n rows) the exact guarantee for them,
        and a release refuses other covariates; without, the bound for any."""
    @property
    def neighbouring_relation(self) -> str: ...
    @property
    def privacy(self) -> PrivacyReport: ...
    @property
    def epsilon(self) -> float: ...
    @property
    def ridge(self) -> float: ...
    @property
    def scale(self) -> float: ...
    @property
    def gp_noise(self) -> float: ...
    @property
    def draws(self) -> int: ...
    @property
    def calibration(self) -> Optional[Dict[str, Any]]: ...
    def release(
        self,
        X: ArrayLike,
        y: ArrayLike,
        query: Optional[ArrayLike] = None,
        *,
        grid: Optional[GridLike] = None,
        seed: Optional[int] = None,
    ) -> Release:
        """Draws the L paths at ``query`` or on ``grid``; ``.paths`` has shape (L, m).
        Warns ``ClippingWarning`` if responses were clipped. A non-finite query
        point raises ``DataError`` naming it."""
    def sample_path(
        self, X: ArrayLike, y: ArrayLike, *, max_points: int = 4096, seed: Optional[int] = None
    ) -> SamplePath: ...

class Ledger:
    def __init__(self, path: Union[str, PathLike]) -> None: ...
    @property
    def path(self) -> str: ...
    def init(self, dataset: str, epsilon: float, delta: float, conversion: str = "improved") -> Dict[str, Any]: ...
    def budget(self, dataset: str) -> Dict[str, Any]: ...
    def budgets(self) -> List[Dict[str, Any]]: ...
    def entries(self, dataset: str) -> List[Dict[str, Any]]: ...
    def reserve(self, dataset: str, mechanism: Mechanism) -> Dict[str, Any]: ...
    def commit(self, id: int, files_hash: str, out: str) -> None: ...
    def release(
        self,
        dataset: str,
        mechanism: Mechanism,
        X: ArrayLike,
        y: ArrayLike,
        query: Optional[ArrayLike] = None,
        *,
        grid: Optional[GridLike] = None,
        seed: Optional[int] = None,
        out: str = "python",
    ) -> Release:
        """Checks the data and the query (a refused release consumes no budget),
        reserves, draws and commits."""

class Plan:
    """A plan from ``plan`` or ``Plan.load``: fitted ℓ, σ, λ, the planned release and
    the simulated utility per target ε. ``to_dict()`` is plan.json's content and
    ``str(plan)`` the table ``gpdp plan`` prints."""

    @staticmethod
    def load(path: Union[str, PathLike]) -> "Plan": ...
    @property
    def kernel(self) -> str: ...
    @property
    def lengthscale(self) -> Optional[float]: ...
    @property
    def scale(self) -> float:
        """σ in the responses' units (under a response range or a bound)."""
    @property
    def noise(self) -> float: ...
    @property
    def fitted_ridge(self) -> float: ...
    @property
    def log_marginal_likelihood(self) -> float: ...
    @property
    def fit(self) -> Dict[str, Any]: ...
    @property
    def epsilons(self) -> List[float]: ...
    @property
    def rows(self) -> List[Dict[str, Any]]:
        """One dict per target ε with the CLI's utility.csv columns (target_epsilon,
        epsilon, ridge, ridge_is_fitted, holdout_rmse_mean/_sd, iou_mean/_sd,
        nonprivate_rmse_mean, nonprivate_iou_mean, constant_rmse_mean, constant_iou_mean)."""
    @property
    def utility(self) -> Dict[str, Any]: ...
    @property
    def assessment(self) -> Optional[Dict[str, Any]]: ...
    @property
    def rmse_epsilon(self) -> Optional[float]:
        """The smallest planned ε whose RMSE is within ``within`` of the non-private map's."""
    @property
    def iou_epsilon(self) -> Optional[float]: ...
    @property
    def release(self) -> Dict[str, Any]: ...
    @property
    def spec(self) -> Dict[str, Any]:
        """The planned release's spec: ``Mechanism(n=n, **plan.spec, target_epsilon=ε)``."""
    @property
    def warnings(self) -> List[str]: ...
    @property
    def notes(self) -> List[str]: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def to_json(self) -> str: ...
    def save(self, path: Union[str, PathLike], *, overwrite: bool = False) -> None:
        """Writes plan.json (for ``gpdp release --plan``); refuses an existing file
        unless ``overwrite``."""
    def summary(self) -> str: ...

def plan(
    X: ArrayLike,
    y: ArrayLike,
    *,
    domain: DomainLike,
    delta: float,
    response_range: Optional[Tuple[float, float]] = None,
    response_bound: Optional[float] = None,
    kernel: Kernel = "matern32",
    n: Optional[int] = None,
    epsilons: Optional[Union[float, Sequence[float], ArrayLike]] = None,
    draws: int = 1,
    relation: Relation = "replace-one",
    threshold: Optional[float] = None,
    units: Optional[str] = None,
    within: float = 0.1,
    grid: Optional[GridLike] = None,
    holdout: float = 0.2,
    reps: int = 5,
    restarts: int = 8,
    max_fit_points: int = 1500,
    max_sim_points: int = 2000,
    lengthscale_bounds: Optional[Tuple[float, float]] = None,
    scale_bounds: Optional[Tuple[float, float]] = None,
    noise_bounds: Optional[Tuple[float, float]] = None,
    seed: int = 0,
    proxy_name: Optional[str] = None,
) -> Plan:
    """``gpdp plan`` on PUBLIC or proxy arrays (never the private data): fits ℓ, σ
    and λ by maximum marginal likelihood, calibrates the ridge for each target ε
    (default 0.5, 1, 2, 5, 10) at the private ``n`` (default: the proxy's count)
    and simulates the utility on the proxy. Defaults are the CLI's (``grid`` 40,
    ``threshold`` the range's middle, else 0). Warns ``PlanWarning``s."""
