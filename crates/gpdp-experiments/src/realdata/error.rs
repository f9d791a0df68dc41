//! The error type of the real-data study (the paper's App. D.2).
//!
//! Every message names the file, the line (1-based, as an editor shows it)
//! and the field, so the command-line front end can print it as one line:
//! `pp-2017.csv line 12, field "price": "12k" is not a whole number of pounds`.

use thiserror::Error;

/// Everything that can go wrong reading, binning and modelling the real data.
#[derive(Debug, Error)]
pub enum Error {
    /// The file could not be opened or read.
    #[error("{file}: {source}")]
    Io {
        /// The file (as given).
        file: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// A record that does not have the documented format.
    #[error("{file} line {line}, field \"{field}\": {message}")]
    Malformed {
        /// The file (as given).
        file: String,
        /// 1-based line on which the record starts.
        line: u64,
        /// The field, e.g. "price" or "record" for the whole row.
        field: String,
        /// What is wrong with it.
        message: String,
    },

    /// A required column is missing from a header row.
    #[error("{file}: no {what} column (looked for {candidates}; the header has: {header})")]
    MissingColumn {
        /// The file (as given).
        file: String,
        /// Which column, e.g. "postcode".
        what: &'static str,
        /// The names that were looked for.
        candidates: String,
        /// The header row as read.
        header: String,
    },

    /// A configuration value outside its admissible range (or NaN).
    #[error("{field} ({value}) must be {requirement}")]
    InvalidConfig {
        /// The field, with its symbol, e.g. "clipping bound B".
        field: &'static str,
        /// The offending value, formatted.
        value: String,
        /// What it must satisfy.
        requirement: &'static str,
    },

    /// Not enough data left for a step (e.g. no hexagon kept for a year).
    #[error("{0}")]
    NotEnoughData(String),

    /// No candidate of a search met its constraint (e.g. no θ with ε < ε₀).
    #[error("{0}")]
    NoFeasibleCandidate(String),

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

/// An `Io` error for a file.
pub(crate) fn io(file: &str, source: std::io::Error) -> Error {
    Error::Io { file: file.to_string(), source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_file_line_and_field() {
        let e = Error::Malformed {
            file: "pp-2017.csv".into(),
            line: 12,
            field: "price".into(),
            message: "\"12k\" is not a whole number of pounds".into(),
        };
        assert_eq!(e.to_string(), "pp-2017.csv line 12, field \"price\": \"12k\" is not a whole number of pounds");
        assert_eq!(invalid("clipping bound B", f64::NAN, "> 0").to_string(), "clipping bound B (NaN) must be > 0");
    }
}
