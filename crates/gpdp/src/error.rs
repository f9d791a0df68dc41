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
        /// The parameter, with its symbol (docs/README.md), e.g. "ridge r".
        name: &'static str,
        /// The offending value, formatted.
        value: String,
        /// What it must satisfy, e.g. "> 0".
        requirement: &'static str,
    },

    /// A release-spec key that is missing, inconsistent or malformed
    /// ([`crate::spec::ReleaseSpec`]); front ends spell the key their way
    /// ([`crate::spec::render_keys`]).
    #[error("`{key}`: {reason}")]
    Spec {
        /// The spec key, e.g. "lengthscale".
        key: &'static str,
        /// What is wrong.
        reason: String,
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

    /// A bound that holds only vacuously in double precision (e.g. no order
    /// α > 1 is representable): there is no finite ε to report.
    #[error("vacuous bound: {0}")]
    Vacuous(String),

    /// A calibration whose target every value of the free parameter meets:
    /// the target does not constrain it.
    #[error("the target does not constrain the parameter: {0}")]
    Unconstrained(String),

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

/// The range in which r, σ and η can be squared and divided without overflow
/// or underflow: [10⁻¹⁵⁰, 10¹⁵⁰].
pub const MAGNITUDE_LIMIT: f64 = 1e150;

/// The effective ridge r: finite, in [10⁻¹⁵⁰, 10¹⁵⁰] (r² neither overflows nor
/// underflows; ε is already ≈ 0 at the top and unbounded long before the
/// bottom).
pub(crate) fn ridge(value: f64) -> Result<f64> {
    positive("ridge r", value)?;
    let requirement = if value > MAGNITUDE_LIMIT {
        "at most 1e150 (r² would overflow; at r = 1e150 the guarantee is already ε ≈ 0)"
    } else if value < 1.0 / MAGNITUDE_LIMIT {
        "at least 1e-150 (r² would underflow; ε is unbounded long before)"
    } else {
        return Ok(value);
    };
    Err(Error::InvalidParameter { name: "ridge r", value: fmt_value(value), requirement })
}

/// The kernel scale σ: in [10⁻¹⁵⁰, 10¹⁵⁰], or +∞ (a covariance-only bound).
pub(crate) fn scale(value: f64) -> Result<f64> {
    let requirement = if value.is_nan() || value <= 0.0 {
        "> 0 (or inf for a covariance-only release)"
    } else if value.is_infinite() {
        return Ok(value);
    } else if value > MAGNITUDE_LIMIT {
        "at most 1e150 (σ² would overflow), or inf for the covariance-only bound"
    } else if value < 1.0 / MAGNITUDE_LIMIT {
        "at least 1e-150 (σ² would underflow)"
    } else {
        return Ok(value);
    };
    Err(Error::InvalidParameter { name: "scale σ", value: fmt_value(value), requirement })
}

/// The scale σ of a release's draws: finite and > 0 as [`scale`], or 0
/// with GP noise η > 0 (the data-free-noise release μ_D + GP(0, η²k),
/// docs/proofs/data-free-noise.md).
pub(crate) fn release_scale(value: f64, gp_noise: f64) -> Result<f64> {
    if value == 0.0 {
        if gp_noise > 0.0 {
            return Ok(value);
        }
        return Err(Error::InvalidParameter {
            name: "scale σ",
            value: "0".into(),
            requirement: "> 0, or 0 with GP noise η > 0 (σ = η = 0 would release the posterior mean itself)",
        });
    }
    if !scale(value)?.is_finite() {
        return Err(Error::InvalidParameter {
            name: "scale σ",
            value: fmt_value(value),
            requirement: "a finite number > 0 for a release (or 0 with GP noise η > 0)",
        });
    }
    Ok(value)
}

/// The GP noise η: finite, in [0, 10¹⁵⁰] (η² must not overflow).
pub(crate) fn gp_noise(value: f64) -> Result<f64> {
    non_negative("GP noise η", value)?;
    if value > MAGNITUDE_LIMIT {
        return Err(Error::InvalidParameter {
            name: "GP noise η",
            value: fmt_value(value),
            requirement: "at most 1e150 (η² would overflow)",
        });
    }
    Ok(value)
}

/// Formats a value for an error message: "NaN" for NaN, scientific notation
/// for magnitudes ≥ 10¹⁶ or below 10⁻⁵, else the shortest decimal.
pub fn fmt_value(v: f64) -> String {
    let a = v.abs();
    if v.is_nan() {
        "NaN".into()
    } else if a.is_finite() && (a >= 1e16 || (a > 0.0 && a < 1e-5)) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}
