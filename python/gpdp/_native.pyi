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

class GpdpError(ValueError): ...
class ParameterError(GpdpError): ...
class DataError(GpdpError): ...
class VacuousError(GpdpError): ...
class UnsupportedError(GpdpError): ...
class BudgetExceededError(GpdpError): ...
class TooLargeError(GpdpError): ...
class NumericalError(GpdpError): ...

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
    domain: str,
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

def account_batch(**columns: Union[float, int, str, ArrayLike]) -> Dict[str, np.ndarray]:
    """`account` over arrays of parameters (scalars broadcast; any strides); one
    array per report field. Empty columns and complex values raise ``ParameterError``."""

def calibrate(
    *,
    solve: SolveName = "ridge",
    target_epsilon: float,
    delta: float,
    kernel: Kernel,
    domain: str,
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
) -> Tuple[np.ndarray, np.ndarray]:
    """The NON-PRIVATE posterior mean and variance at the query points."""

class Release:
    @property
    def paths(self) -> np.ndarray:
        """Shape (L, m)."""
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
        """Shape (m,) for one path, (L, m) for several. Thread-safe (calls on
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

class Mechanism:
    def __init__(
        self,
        *,
        kernel: Kernel,
        domain: str,
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
        covariate_lattice: Optional[str] = None,
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
        grid: Optional[str] = None,
        seed: Optional[int] = None,
    ) -> Release:
        """Draws the L paths; warns ``ClippingWarning`` if responses were clipped.
        A non-finite query point raises ``DataError`` naming it."""
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
        grid: Optional[str] = None,
        seed: Optional[int] = None,
        out: str = "python",
    ) -> Release:
        """Checks the data and the query (a refused release consumes no budget),
        reserves, draws and commits."""
