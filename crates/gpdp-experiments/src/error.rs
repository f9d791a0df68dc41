//! The one error type of the studies (membership inference, excursion sets,
//! real data).
//!
//! Messages name the offending field and value, in the style of
//! `gpdp::Error` ("ridge r (-1) must be a finite number > 0"), and, for
//! files, the file, the line (1-based, as an editor shows it) and the field
//! (`pp-2017.csv line 12, field "price": "12k" is not a whole number of
//! pounds`), so a command-line front end can print them as one line.

use thiserror::Error;

/// Everything that can go wrong in a study.
#[derive(Debug, Error)]
pub enum Error {
    /// A configuration field outside its admissible range (or NaN).
    #[error("{field} ({value}) must be {requirement}")]
    InvalidConfig {
        /// The field, with its symbol, e.g. "ridge r" or "noise bound M_ξ".
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

    /// Shards that are not exactly the shards of one run, or a bad `--shard`.
    #[error("{0}")]
    Shard(String),

    /// A density fit produced no finite likelihood from any starting point.
    #[error("density fit failed: {0}")]
    Fit(String),

    /// No candidate of a search met its constraint (e.g. no θ with ε < ε₀).
    #[error("{0}")]
    NoFeasibleCandidate(String),

    /// Synthetic-data generation failed (e.g. no target met the rejection rule).
    #[error("{0}")]
    Generation(String),

    /// Not enough data left for a step (e.g. no hexagon kept for a year).
    #[error("{0}")]
    NotEnoughData(String),

    /// A file could not be opened or read.
    #[error("{file}: {error}")]
    Io {
        /// The file (as given).
        file: String,
        /// The underlying error.
        error: std::io::Error,
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

    /// The core library refused a computation (posterior, sampler, accountant,
    /// mechanism).
    #[error(transparent)]
    Library(#[from] gpdp::Error),
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// An `InvalidConfig` error for a float field.
pub(crate) fn invalid(field: &'static str, value: f64, requirement: &'static str) -> Error {
    Error::InvalidConfig { field, value: gpdp::error::fmt_value(value), requirement }
}

/// An `Io` error for a file.
pub(crate) fn io(file: &str, error: std::io::Error) -> Error {
    Error::Io { file: file.to_string(), error }
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
        let lib: Error = gpdp::Error::Unreachable("x".into()).into();
        assert_eq!(lib.to_string(), "target unreachable: x");
    }
}
