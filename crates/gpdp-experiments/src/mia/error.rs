//! The error type of the membership-inference study.
//!
//! Messages name the offending field and value, in the style of
//! `gpdp::Error` ("ridge r (-1) must be a finite number > 0"), so a
//! command-line front end can print them as one line.

use thiserror::Error;

/// Everything that can go wrong in the membership-inference study.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Error {
    /// A configuration field outside its admissible range (or NaN).
    #[error("{field} ({value}) must be {requirement}")]
    InvalidConfig {
        /// The field, with its SPEC symbol, e.g. "ridge r".
        field: &'static str,
        /// The offending value, formatted.
        value: String,
        /// What it must satisfy.
        requirement: &'static str,
    },

    /// Bad input to a numerical routine (too few samples, non-finite values).
    #[error("{what}: {detail}")]
    InvalidInput {
        /// The routine or quantity.
        what: &'static str,
        /// What is wrong.
        detail: String,
    },

    /// A density fit produced no finite likelihood from any starting point.
    #[error("density fit failed: {0}")]
    Fit(String),

    /// The privacy accountant refused the release.
    #[error("privacy accountant: {0}")]
    Accountant(#[from] gpdp::Error),
}

/// Shorthand for results of this module.
pub type Result<T> = std::result::Result<T, Error>;

/// An `InvalidConfig` error for a float field.
pub(crate) fn invalid(field: &'static str, value: f64, requirement: &'static str) -> Error {
    Error::InvalidConfig { field, value: gpdp::error::fmt_value(value), requirement }
}
