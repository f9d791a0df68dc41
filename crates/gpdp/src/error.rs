//! The library's single error type.
//!
//! Every message names the offending field and value, in the style
//! "ridge r (-1) must be > 0", so that a command-line front end can print it
//! as one line without further decoration.

use thiserror::Error;

/// Everything that can go wrong in `gpdp`.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Error {
    /// A scalar parameter outside its admissible range (or NaN).
    #[error("{name} ({value}) must be {requirement}")]
    InvalidParameter {
        /// The parameter, with its SPEC symbol, e.g. "ridge r".
        name: &'static str,
        /// The offending value, formatted.
        value: String,
        /// What it must satisfy, e.g. "> 0".
        requirement: &'static str,
    },

    /// A malformed setting given as text (a grid size, a lattice, …).
    #[error("{name} '{value}': {reason}")]
    Setting {
        /// The setting, e.g. "grid".
        name: &'static str,
        /// The text as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A sensitivity lemma was requested where its hypotheses do not hold.
    #[error("sensitivity bound {lemma} is not valid here: {reason}")]
    InvalidLemma {
        /// The lemma, e.g. "B.7".
        lemma: &'static str,
        /// Why its hypotheses fail.
        reason: String,
    },

    /// A malformed or inconsistent covariate domain.
    #[error("domain: {0}")]
    Domain(String),

    /// Shapes that do not fit together (e.g. 2-D points for a 1-D dataset).
    #[error("dimension mismatch: {0}")]
    Dimension(String),

    /// A bad record in a dataset. `row` is 1-based over data records.
    #[error("data row {row}: {message}")]
    Data {
        /// 1-based record number.
        row: usize,
        /// What is wrong with it.
        message: String,
    },

    /// A Cholesky factorisation failed (matrix not numerically positive definite).
    #[error("Cholesky factorisation of {what} failed: {detail}")]
    Factorisation {
        /// Which matrix.
        what: &'static str,
        /// Context and advice.
        detail: String,
    },

    /// A calibration target that no value of the free parameter can meet.
    #[error("target unreachable: {0}")]
    Unreachable(String),

    /// A method that does not apply to this input (the caller may fall back).
    #[error("not supported: {0}")]
    Unsupported(String),

    /// The guarantee would exceed the budget the caller allowed.
    #[error("{0}")]
    BudgetExceeded(String),

    /// Input that could not be read (a file, a table), with where and why.
    #[error("{0}")]
    Input(String),

    /// The operating system could not provide entropy for a private release.
    #[error("entropy: {0}")]
    Entropy(String),

    /// A malformed grid of values (sizes, bounds or non-finite values).
    #[error("grid: {0}")]
    Grid(String),

    /// A problem too large to hold in memory, or another resource limit.
    #[error("too large: {0}")]
    TooLarge(String),
}

/// Shorthand for results in this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Checks that `value` is finite and strictly positive.
pub(crate) fn positive(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(Error::InvalidParameter { name, value: fmt_value(value), requirement: "a finite number > 0" })
    }
}

/// Checks that `value` is finite and non-negative.
pub(crate) fn non_negative(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(Error::InvalidParameter { name, value: fmt_value(value), requirement: "a finite number >= 0" })
    }
}

/// Checks that `value` lies in the open unit interval.
pub(crate) fn unit_open(name: &'static str, value: f64) -> Result<f64> {
    if value > 0.0 && value < 1.0 {
        Ok(value)
    } else {
        Err(Error::InvalidParameter { name, value: fmt_value(value), requirement: "in the open interval (0, 1)" })
    }
}

/// Formats a value for an error message ("NaN" for NaN, else `{v}`).
pub fn fmt_value(v: f64) -> String {
    if v.is_nan() { "NaN".into() } else { format!("{v}") }
}
