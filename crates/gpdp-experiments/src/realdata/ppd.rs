//! HM Land Registry **Price Paid Data** (PPD) reader (the paper's App. D.2).
//!
//! The yearly files `pp-YYYY.csv` have no header and 16 fields per row,
//! every field double-quoted:
//!
//! | # | field | values |
//! |---|---|---|
//! | 1 | transaction id | `{GUID}` |
//! | 2 | price | whole pounds |
//! | 3 | date of transfer | `YYYY-MM-DD HH:MM` |
//! | 4 | postcode | e.g. `SW1A 1AA`, may be empty |
//! | 5 | property type | D detached, S semi, T terraced, F flat/maisonette, O other |
//! | 6 | old/new | Y new build, N established |
//! | 7 | duration | F freehold, L leasehold (U unknown occurs) |
//! | 8–13 | PAON, SAON, street, locality, town/city, district | text |
//! | 14 | county | e.g. `GREATER LONDON` |
//! | 15 | PPD category type | A standard price paid, B additional |
//! | 16 | record status | A added, C changed, D deleted |
//!
//! Every row is parsed (16 fields, a whole-number price, a valid date);
//! a row that is not is *malformed*: an error naming the file, line and
//! field, or, with `skip_malformed`, counted and skipped. Well-formed rows
//! are then kept or rejected by the filters below, tested in this order,
//! each rejected row counted under the first filter it fails:
//!
//! 1. year of the date of transfer ∈ `years` (all years when `None`);
//! 2. county == `county` (case-insensitive, trimmed) (default GREATER LONDON);
//! 3. PPD category type == `category` (default A: standard price paid);
//! 4. record status == `record_status` (default A);
//! 5. property type == `property_type` (default F: flats);
//! 6. old/new == `old_new` (default N: existing);
//! 7. duration == `duration` (default L: leasehold);
//! 8. price > 0 (always: the study models log price);
//! 9. postcode present (always: it is how a sale gets a location).
//!
//! A single-letter filter set to `None` keeps every value.

use std::collections::BTreeSet;
use std::io::BufRead;

use serde::Serialize;

use super::postcodes::normalise_postcode;
use super::records::RecordReader;
use crate::error::{Error, Result};

/// Number of fields of a PPD row.
pub const PPD_FIELDS: usize = 16;

const PRICE: usize = 1;
const DATE: usize = 2;
const POSTCODE: usize = 3;
const PROPERTY_TYPE: usize = 4;
const OLD_NEW: usize = 5;
const DURATION: usize = 6;
const COUNTY: usize = 13;
const CATEGORY: usize = 14;
const RECORD_STATUS: usize = 15;

/// Which rows to keep (defaults: the paper's segment, every year).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PpdFilter {
    /// Years of the date of transfer to keep; `None` keeps all.
    pub years: Option<BTreeSet<i32>>,
    /// County (default GREATER LONDON).
    pub county: Option<String>,
    /// PPD category type (default A).
    pub category: Option<char>,
    /// Record status (default A).
    pub record_status: Option<char>,
    /// Property type (default F).
    pub property_type: Option<char>,
    /// Old/new (default N).
    pub old_new: Option<char>,
    /// Duration (default L).
    pub duration: Option<char>,
}

impl Default for PpdFilter {
    fn default() -> Self {
        PpdFilter {
            years: None,
            county: Some("GREATER LONDON".into()),
            category: Some('A'),
            record_status: Some('A'),
            property_type: Some('F'),
            old_new: Some('N'),
            duration: Some('L'),
        }
    }
}

/// One kept sale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PpdRecord {
    /// Postcode, normalised ([`normalise_postcode`]).
    pub postcode: String,
    /// Price in pounds (> 0).
    pub price: u64,
    /// Year of the date of transfer.
    pub year: i32,
}

/// Rows rejected, by the first filter they failed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Rejected {
    /// Year not selected.
    pub year: u64,
    /// Other county.
    pub county: u64,
    /// Other PPD category.
    pub category: u64,
    /// Other record status.
    pub record_status: u64,
    /// Other property type.
    pub property_type: u64,
    /// Other old/new value.
    pub old_new: u64,
    /// Other duration.
    pub duration: u64,
    /// Price 0.
    pub price: u64,
    /// Empty postcode.
    pub postcode: u64,
}

impl Rejected {
    /// The total.
    pub fn total(&self) -> u64 {
        self.year
            + self.county
            + self.category
            + self.record_status
            + self.property_type
            + self.old_new
            + self.duration
            + self.price
            + self.postcode
    }
}

/// What a read did: `rows = kept + rejected.total() + malformed`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PpdCounts {
    /// Rows read (records; blank lines are not rows).
    pub rows: u64,
    /// Rows kept.
    pub kept: u64,
    /// Malformed rows skipped (only with `skip_malformed`).
    pub malformed: u64,
    /// Rows rejected by a filter.
    pub rejected: Rejected,
}

enum Reason {
    Year,
    County,
    Category,
    RecordStatus,
    PropertyType,
    OldNew,
    Duration,
    Price,
    Postcode,
}

impl Rejected {
    fn bump(&mut self, r: Reason) {
        let c = match r {
            Reason::Year => &mut self.year,
            Reason::County => &mut self.county,
            Reason::Category => &mut self.category,
            Reason::RecordStatus => &mut self.record_status,
            Reason::PropertyType => &mut self.property_type,
            Reason::OldNew => &mut self.old_new,
            Reason::Duration => &mut self.duration,
            Reason::Price => &mut self.price,
            Reason::Postcode => &mut self.postcode,
        };
        *c += 1;
    }
}

/// The year of a date `YYYY-MM-DD`, optionally followed by ` HH:MM` or
/// ` HH:MM:SS`; `None` if it is not such a date (month 1–12, day 1–31,
/// hour < 24, minute and second < 60).
pub fn parse_year(date: &str) -> Option<i32> {
    let b = date.trim().as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let s = b.get(r)?;
        if s.iter().all(u8::is_ascii_digit) { std::str::from_utf8(s).ok()?.parse().ok() } else { None }
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    match b.len() {
        10 => {}
        16 | 19 => {
            let ok = b[10] == b' ' && b[13] == b':' && num(11..13)? < 24 && num(14..16)? < 60;
            let ok = ok && (b.len() == 16 || (b[16] == b':' && num(17..19)? < 60));
            if !ok {
                return None;
            }
        }
        _ => return None,
    }
    i32::try_from(year).ok()
}

fn letter_matches(want: Option<char>, field: &str) -> bool {
    match want {
        None => true,
        Some(c) => {
            let mut it = field.trim().chars();
            matches!((it.next(), it.next()), (Some(f), None) if f.eq_ignore_ascii_case(&c))
        }
    }
}

fn malformed(file: &str, line: u64, field: &str, message: String) -> Error {
    Error::Malformed { file: file.to_string(), line, field: field.to_string(), message }
}

/// Streams the PPD rows of `input` (named `file` in errors), calling `keep`
/// for every row passing `filter`; returns the counts. Nothing but the kept
/// records' postcode, price and year is retained.
pub fn read_ppd<R: BufRead>(
    input: R,
    file: &str,
    filter: &PpdFilter,
    skip_malformed: bool,
    mut keep: impl FnMut(PpdRecord),
) -> Result<PpdCounts> {
    let mut reader = RecordReader::new(input, file);
    let mut counts = PpdCounts::default();
    let county = filter.county.as_ref().map(|c| c.trim().to_uppercase());
    loop {
        let (line, f) = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            // A record that is not valid UTF-8 is malformed like any other.
            Err(Error::Malformed { .. }) if skip_malformed => {
                counts.rows += 1;
                counts.malformed += 1;
                continue;
            }
            Err(e) => return Err(e),
        };
        counts.rows += 1;
        let parsed = parse_row(file, line, f);
        let (price, year) = match parsed {
            Ok(v) => v,
            Err(_) if skip_malformed => {
                counts.malformed += 1;
                continue;
            }
            Err(e) => return Err(e),
        };
        let reason = if filter.years.as_ref().is_some_and(|ys| !ys.contains(&year)) {
            Some(Reason::Year)
        } else if county.as_ref().is_some_and(|c| f[COUNTY].trim().to_uppercase() != *c) {
            Some(Reason::County)
        } else if !letter_matches(filter.category, &f[CATEGORY]) {
            Some(Reason::Category)
        } else if !letter_matches(filter.record_status, &f[RECORD_STATUS]) {
            Some(Reason::RecordStatus)
        } else if !letter_matches(filter.property_type, &f[PROPERTY_TYPE]) {
            Some(Reason::PropertyType)
        } else if !letter_matches(filter.old_new, &f[OLD_NEW]) {
            Some(Reason::OldNew)
        } else if !letter_matches(filter.duration, &f[DURATION]) {
            Some(Reason::Duration)
        } else if price == 0 {
            Some(Reason::Price)
        } else {
            None
        };
        if let Some(r) = reason {
            counts.rejected.bump(r);
            continue;
        }
        let postcode = normalise_postcode(&f[POSTCODE]);
        if postcode.is_empty() {
            counts.rejected.bump(Reason::Postcode);
            continue;
        }
        counts.kept += 1;
        keep(PpdRecord { postcode, price, year });
    }
    Ok(counts)
}

fn parse_row(file: &str, line: u64, f: &[String]) -> Result<(u64, i32)> {
    if f.len() != PPD_FIELDS {
        return Err(malformed(
            file,
            line,
            "record",
            format!("has {} fields; Price Paid Data rows have {PPD_FIELDS}", f.len()),
        ));
    }
    let p = f[PRICE].trim();
    let price: u64 =
        p.parse().map_err(|_| malformed(file, line, "price", format!("\"{p}\" is not a whole number of pounds")))?;
    let d = f[DATE].trim();
    let year = parse_year(d).ok_or_else(|| {
        malformed(file, line, "date of transfer", format!("\"{d}\" is not a date YYYY-MM-DD[ HH:MM]"))
    })?;
    Ok((price, year))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(clippy::too_many_arguments)]
    fn row(
        price: &str,
        date: &str,
        pc: &str,
        t: &str,
        on: &str,
        dur: &str,
        county: &str,
        cat: &str,
        st: &str,
    ) -> String {
        format!(
            "\"{{G}}\",\"{price}\",\"{date}\",\"{pc}\",\"{t}\",\"{on}\",\"{dur}\",\"1\",\"FLAT 2, X\",\"S\",\"\",\"LONDON\",\"D\",\"{county}\",\"{cat}\",\"{st}\"\n"
        )
    }

    fn read(text: &str, filter: &PpdFilter, skip: bool) -> Result<(PpdCounts, Vec<PpdRecord>)> {
        let mut kept = Vec::new();
        let c = read_ppd(text.as_bytes(), "t.csv", filter, skip, |r| kept.push(r))?;
        Ok((c, kept))
    }

    #[test]
    fn each_filter_rejects_and_is_counted_once() {
        let gl = "GREATER LONDON";
        let d = "2018-01-02 00:00";
        let text = [
            row("300000", d, "sw1a 1aa", "F", "N", "L", gl, "A", "A"),
            row("300000", "2017-01-02 00:00", "SW1A 1AA", "F", "N", "L", gl, "A", "A"),
            row("300000", d, "SW1A 1AA", "F", "N", "L", "KENT", "A", "A"),
            row("300000", d, "SW1A 1AA", "F", "N", "L", gl, "B", "A"),
            row("300000", d, "SW1A 1AA", "F", "N", "L", gl, "A", "D"),
            row("300000", d, "SW1A 1AA", "T", "N", "L", gl, "A", "A"),
            row("300000", d, "SW1A 1AA", "F", "Y", "L", gl, "A", "A"),
            row("300000", d, "SW1A 1AA", "F", "N", "F", gl, "A", "A"),
            row("0", d, "SW1A 1AA", "F", "N", "L", gl, "A", "A"),
            row("300000", d, " ", "F", "N", "L", gl, "A", "A"),
            row("310000", "2018-12-31", "E1 6AN", "f", "n", "l", "Greater London ", "a", "a"),
        ]
        .concat();
        let filter = PpdFilter { years: Some([2018].into()), ..PpdFilter::default() };
        let (c, kept) = read(&text, &filter, false).unwrap();
        let one = Rejected {
            year: 1,
            county: 1,
            category: 1,
            record_status: 1,
            property_type: 1,
            old_new: 1,
            duration: 1,
            price: 1,
            postcode: 1,
        };
        assert_eq!(c, PpdCounts { rows: 11, kept: 2, malformed: 0, rejected: one });
        assert_eq!(
            kept,
            vec![
                PpdRecord { postcode: "SW1A1AA".into(), price: 300000, year: 2018 },
                PpdRecord { postcode: "E16AN".into(), price: 310000, year: 2018 },
            ]
        );
        // No filters: only price and postcode still reject.
        let none = PpdFilter {
            years: None,
            county: None,
            category: None,
            record_status: None,
            property_type: None,
            old_new: None,
            duration: None,
        };
        let (c, _) = read(&text, &none, false).unwrap();
        assert_eq!((c.kept, c.rejected.price, c.rejected.postcode, c.rejected.total()), (9, 1, 1, 2));
    }

    #[test]
    fn malformed_rows_name_line_and_field_or_are_counted() {
        let good = row("300000", "2018-01-02 00:00", "E1 6AN", "F", "N", "L", "GREATER LONDON", "A", "A");
        let short = "\"a\",\"1\"\n".to_string();
        let bad_price = row("3e5", "2018-01-02 00:00", "E1 6AN", "F", "N", "L", "GREATER LONDON", "A", "A");
        let bad_date = row("1", "2018-13-02 00:00", "E1 6AN", "F", "N", "L", "GREATER LONDON", "A", "A");
        let text = [good.clone(), "\n".into(), short, bad_price, bad_date, good].concat();
        let e = read(&text, &PpdFilter::default(), false).unwrap_err().to_string();
        assert_eq!(e, "t.csv line 3, field \"record\": has 2 fields; Price Paid Data rows have 16");
        let after_short: String = text.lines().skip(3).map(|l| format!("{l}\n")).collect();
        let e = read(&after_short, &PpdFilter::default(), false).unwrap_err().to_string();
        assert_eq!(e, "t.csv line 1, field \"price\": \"3e5\" is not a whole number of pounds");
        let (c, kept) = read(&text, &PpdFilter::default(), true).unwrap();
        assert_eq!((c.rows, c.malformed, c.kept, kept.len()), (5, 3, 2, 2));
    }

    #[test]
    fn dates() {
        assert_eq!(parse_year("2017-03-15 00:00"), Some(2017));
        assert_eq!(parse_year("2017-03-15"), Some(2017));
        assert_eq!(parse_year("2017-03-15 23:59:59"), Some(2017));
        for bad in ["15/03/2017", "2017-3-15", "2017-00-15", "2017-03-32", "2017-03-15 24:00", "2017-03-15T00:00", ""] {
            assert_eq!(parse_year(bad), None, "{bad}");
        }
    }
}
