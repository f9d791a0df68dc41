//! The error type of the excursion-set studies.
//!
//! Messages name the offending field and value, in the style of
//! `gpdp::Error` ("ridge r (-1) must be a finite number > 0"), so a
//! command-line front end can print them as one line.

use thiserror::Error;

/// Everything that can go wrong in an excursion-set study.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Error {
    /// A configuration field outside its admissible range (or NaN).
    #[error("{field} ({value}) must be {requirement}")]
    InvalidConfig {
        /// The field, with its SPEC symbol, e.g. "noise bound M_ξ".
        field: &'static str,
        /// The offending value, formatted.
        value: String,
        /// What it must satisfy.
        requirement: &'static str,
    },

    /// No candidate of a search met its constraint (e.g. no θ with ε < ε₀).
    #[error("{0}")]
    NoFeasibleCandidate(String),

    /// Pair generation failed (e.g. no target met the rejection rule).
    #[error("{0}")]
    Generation(String),

    /// The core library refused a computation (posterior, sampler, accountant).
    #[error("{0}")]
    Library(#[from] gpdp::Error),
}

/// Shorthand for results of this module.
pub type Result<T> = std::result::Result<T, Error>;

/// An `InvalidConfig` error for a float field.
pub(crate) fn invalid(field: &'static str, value: f64, requirement: &'static str) -> Error {
    Error::InvalidConfig { field, value: gpdp::error::fmt_value(value), requirement }
}
