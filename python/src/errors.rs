//! The library's errors as Python exceptions.
//!
//! `GpdpError` (a `ValueError`) is the base; each subclass groups variants
//! of `gpdp::Error`. The message is the library's, which names the field,
//! row or value at fault.

use gpdp::Error;
use pyo3::create_exception;
use pyo3::exceptions::{PyUserWarning, PyValueError};
use pyo3::prelude::*;

create_exception!(gpdp, GpdpError, PyValueError, "Base class of gpdp's errors (a ValueError).");
create_exception!(
    gpdp,
    ParameterError,
    GpdpError,
    "A parameter outside its valid range, an inapplicable sensitivity lemma, or a domain/dimension mismatch."
);
create_exception!(gpdp, DataError, GpdpError, "Bad data: a row outside the domain, a non-finite value, bad input.");
create_exception!(
    gpdp,
    VacuousError,
    GpdpError,
    "No finite guarantee exists, or the target cannot be reached / does not constrain the parameter."
);
create_exception!(gpdp, UnsupportedError, GpdpError, "A combination the library does not support.");
create_exception!(
    gpdp,
    BudgetExceededError,
    GpdpError,
    "The release would exceed the privacy budget or the cap on ε: nothing was released."
);
create_exception!(gpdp, TooLargeError, GpdpError, "The computation would need more memory than is available.");
create_exception!(gpdp, NumericalError, GpdpError, "A factorisation failed or the entropy source is unavailable.");
create_exception!(
    gpdp,
    ClippingWarning,
    PyUserWarning,
    "Responses were clipped to the response range (or [-M_Y, M_Y]) before the release. The count is a fact about \
the private data: an operator diagnostic (also in Release.diagnostics), never part of the published report."
);

create_exception!(
    gpdp,
    PlanWarning,
    PyUserWarning,
    "A warning of gpdp.plan, as `gpdp plan` prints it: the response range's middle far from the proxy's median, a \
fitted parameter on its search bound, or a map no better than a constant one (also in Plan.warnings)."
);

/// The Python exception for a library error (its message, with spec keys
/// spelled as keywords).
pub fn to_py(e: Error) -> PyErr {
    // Library messages name release-spec keys as `key`: spell them as keywords.
    let msg = gpdp::spec::render_keys(&e.to_string(), gpdp::spec::Spelling::Keyword);
    match e {
        Error::Spec { .. }
        | Error::InvalidParameter { .. }
        | Error::InvalidLemma { .. }
        | Error::Setting { .. }
        | Error::Domain(_)
        | Error::Dimension(_) => ParameterError::new_err(msg),
        Error::Data { .. } | Error::Input(_) | Error::Grid(_) => DataError::new_err(msg),
        Error::Unreachable(_) | Error::Vacuous(_) | Error::Unconstrained(_) => VacuousError::new_err(msg),
        Error::Unsupported(_) => UnsupportedError::new_err(msg),
        Error::BudgetExceeded(_) => BudgetExceededError::new_err(msg),
        Error::TooLarge(_) => TooLargeError::new_err(msg),
        Error::Factorisation { .. } | Error::Entropy(_) => NumericalError::new_err(msg),
        #[allow(unreachable_patterns)]
        _ => GpdpError::new_err(msg),
    }
}

/// A `ParameterError` naming a keyword argument.
pub fn bad_arg(name: &str, message: impl std::fmt::Display) -> PyErr {
    ParameterError::new_err(format!("{name}: {message}"))
}

/// Result of a library call, as a Python result.
pub trait OrPy<T> {
    /// The value, or the library's error as a Python exception.
    fn py(self) -> PyResult<T>;
}

impl<T> OrPy<T> for gpdp::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("GpdpError", py.get_type::<GpdpError>())?;
    m.add("ParameterError", py.get_type::<ParameterError>())?;
    m.add("DataError", py.get_type::<DataError>())?;
    m.add("VacuousError", py.get_type::<VacuousError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add("BudgetExceededError", py.get_type::<BudgetExceededError>())?;
    m.add("TooLargeError", py.get_type::<TooLargeError>())?;
    m.add("NumericalError", py.get_type::<NumericalError>())?;
    m.add("ClippingWarning", py.get_type::<ClippingWarning>())?;
    m.add("PlanWarning", py.get_type::<PlanWarning>())?;
    Ok(())
}
