//! Reading the inputs of a release from files (feature `csv`, on by
//! default): a CSV table of covariates and responses becomes a validated
//! [`crate::Dataset`], or a list of query points; a batch of release
//! descriptions becomes rows for the accountant ([`batch`]). Every error
//! names the file, the record (1-based), its line and the column.

pub mod batch;
mod table;

pub use batch::{Batch, BatchDefaults, BatchRow, Question, read_batch};
pub use table::{
    Columns, MAX_INPUT_BYTES, Table, read_bounded, read_dataset, read_dataset_columns, read_named_columns, read_table,
    read_table_bytes, read_table_columns,
};

/// The longest excerpt of a value read from a file that an error message
/// quotes, in characters.
pub const EXCERPT_CHARS: usize = 60;

/// `s` as quoted in an error message: whole if at most [`EXCERPT_CHARS`]
/// characters, else its first [`EXCERPT_CHARS`] characters, "…" and its
/// length — a 10 MB cell does not become a 10 MB error line.
pub fn excerpt(s: &str) -> String {
    match s.char_indices().nth(EXCERPT_CHARS) {
        None => s.to_string(),
        Some((cut, _)) => format!("{}… ({} bytes)", &s[..cut], s.len()),
    }
}

/// "; did you mean 'easting'?" when `wanted` names no column of `headers`
/// but one column matches it up to case and punctuation (`Easting`,
/// `PM2.5` for `pm25`); else the empty string.
pub fn did_you_mean(wanted: &str, headers: &[String]) -> String {
    let key = |s: &str| s.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect::<String>();
    let k = key(wanted);
    let hits: Vec<&String> = headers.iter().filter(|h| !k.is_empty() && key(h) == k).collect();
    match hits.as_slice() {
        [h] => format!("; did you mean '{}'?", excerpt(h)),
        _ => String::new(),
    }
}

/// A header as listed in an error message, in brackets: see [`name_list`].
pub fn header_list(headers: &[String]) -> String {
    format!("[{}]", name_list(headers))
}

/// Names as listed in an error message: the first 20, quoted, each an
/// [`excerpt`], then how many more.
pub fn name_list<S: AsRef<str>>(names: &[S]) -> String {
    const SHOWN: usize = 20;
    let mut shown: Vec<String> = names.iter().take(SHOWN).map(|h| format!("'{}'", excerpt(h.as_ref()))).collect();
    if names.len() > SHOWN {
        shown.push(format!("… ({} more)", names.len() - SHOWN));
    }
    shown.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_in_messages() {
        assert_eq!(excerpt("0.5x"), "0.5x");
        let long = "é".repeat(5_000_000);
        let e = excerpt(&long);
        assert_eq!(e, format!("{}… (10000000 bytes)", "é".repeat(60)));
        let exact = "a".repeat(EXCERPT_CHARS);
        assert_eq!(excerpt(&exact), exact);
        let h: Vec<String> = (0..25).map(|i| format!("c{i}")).collect();
        let l = header_list(&h);
        assert!(l.starts_with("['c0', 'c1'") && l.ends_with("'c19', … (5 more)]"), "{l}");
    }

    #[test]
    fn a_column_named_up_to_case_or_punctuation_is_suggested() {
        let h: Vec<String> = ["sensor_id", "easting", "northing", "PM2.5"].iter().map(|s| s.to_string()).collect();
        assert_eq!(did_you_mean("Easting", &h), "; did you mean 'easting'?");
        assert_eq!(did_you_mean("pm25", &h), "; did you mean 'PM2.5'?");
        assert_eq!(did_you_mean("sensor-id", &h), "; did you mean 'sensor_id'?");
        assert_eq!(did_you_mean("lat", &h), "");
        assert_eq!(did_you_mean("", &h), "");
        // Two candidates: no guess.
        let twice: Vec<String> = ["a_b", "ab"].iter().map(|s| s.to_string()).collect();
        assert_eq!(did_you_mean("AB", &twice), "");
    }
}
