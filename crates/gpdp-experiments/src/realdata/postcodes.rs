//! Postcode → coordinate lookup and the join with the sales (App. D.2).
//!
//! The lookup is a CSV with a header row in the style of the ONS Postcode
//! Directory (ONSPD), the National Statistics Postcode Lookup (NSPL) or
//! OS Code-Point Open. Columns are found by name, case-insensitively, unless
//! given explicitly:
//!
//! - postcode: the first of `pcds`, `pcd`, `pcd2`, `postcode`;
//! - coordinates: the first pair present of (`oseast1m`, `osnrth1m`),
//!   (`easting`, `northing`), (`x`, `y`) — British National Grid metres for
//!   ONSPD/NSPL/Code-Point.
//!
//! Postcodes are normalised by removing all whitespace and upper-casing
//! ("sw1a 1aa", "SW1A1AA" and ONSPD's fixed-width "SW1A1AA " all become
//! `SW1A1AA`). Rows are processed in file order:
//!
//! 1. a row whose field count differs from the header's is malformed;
//! 2. an empty postcode is skipped (counted);
//! 3. with a `wanted` set, postcodes outside it are skipped (counted) — so a
//!    2.7-million-row directory costs memory only for the postcodes sold;
//! 4. a row with an empty easting or northing has no coordinates (ONSPD
//!    leaves them empty for postcodes without a grid reference): skipped
//!    and counted; a non-empty value that is not a finite number is
//!    malformed;
//! 5. the first row *with coordinates* of a postcode wins; later ones are
//!    counted as duplicates.
//!
//! The join is an inner join on the normalised postcode; sales whose
//! postcode has no coordinates are counted as unmatched and dropped.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;

use serde::Serialize;

use super::records::RecordReader;
use crate::error::{Error, Result};

/// Postcode column names tried, in order.
pub const POSTCODE_COLUMNS: [&str; 4] = ["pcds", "pcd", "pcd2", "postcode"];
/// (easting, northing) column pairs tried, in order.
pub const COORDINATE_COLUMNS: [(&str, &str); 3] = [("oseast1m", "osnrth1m"), ("easting", "northing"), ("x", "y")];

/// Upper-case with every whitespace character removed.
pub fn normalise_postcode(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).flat_map(char::to_uppercase).collect()
}

/// Explicit column names (case-insensitive); `None` = detect.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PostcodeColumns {
    /// The postcode column.
    pub postcode: Option<String>,
    /// The easting (x) column.
    pub easting: Option<String>,
    /// The northing (y) column.
    pub northing: Option<String>,
}

/// What reading the lookup did: `rows = kept + empty_postcode + not_needed
/// + without_coordinates + duplicates + malformed`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LookupCounts {
    /// Data rows read (after the header).
    pub rows: u64,
    /// Postcodes stored.
    pub kept: u64,
    /// Rows with an empty postcode.
    pub empty_postcode: u64,
    /// Rows for postcodes outside the wanted set.
    pub not_needed: u64,
    /// Rows with an empty easting or northing.
    pub without_coordinates: u64,
    /// Later rows of a postcode already stored.
    pub duplicates: u64,
    /// Malformed rows skipped (only with `skip_malformed`).
    pub malformed: u64,
}

/// Normalised postcode → (easting, northing).
#[derive(Debug, Clone, Default)]
pub struct PostcodeLookup {
    map: HashMap<String, [f64; 2]>,
    /// The counts of the read.
    pub counts: LookupCounts,
    /// The (postcode, easting, northing) column names used, as in the header.
    pub columns: [String; 3],
}

/// The columns resolved against a header: indices and names.
fn resolve(file: &str, header: &[String], cols: &PostcodeColumns) -> Result<([usize; 3], [String; 3])> {
    let names: Vec<String> = header
        .iter()
        .enumerate()
        .map(|(k, h)| {
            let h = if k == 0 { h.trim_start_matches('\u{feff}') } else { h.as_str() };
            h.trim().to_ascii_lowercase()
        })
        .collect();
    let find = |n: &str| names.iter().position(|h| *h == n.trim().to_ascii_lowercase());
    let missing = |what: &'static str, candidates: String| Error::MissingColumn {
        file: file.to_string(),
        what,
        candidates,
        header: header.join(","),
    };
    let pc = match &cols.postcode {
        Some(n) => find(n).ok_or_else(|| missing("postcode", format!("\"{n}\"")))?,
        None => POSTCODE_COLUMNS
            .iter()
            .find_map(|n| find(n))
            .ok_or_else(|| missing("postcode", POSTCODE_COLUMNS.join(", ")))?,
    };
    let auto = COORDINATE_COLUMNS.iter().find_map(|(e, n)| Some((find(e)?, find(n)?)));
    let pairs = || COORDINATE_COLUMNS.iter().map(|(e, n)| format!("{e}/{n}")).collect::<Vec<_>>().join(", ");
    let east = match &cols.easting {
        Some(n) => find(n).ok_or_else(|| missing("easting", format!("\"{n}\"")))?,
        None => auto.map(|p| p.0).ok_or_else(|| missing("easting", pairs()))?,
    };
    let north = match &cols.northing {
        Some(n) => find(n).ok_or_else(|| missing("northing", format!("\"{n}\"")))?,
        None => auto.map(|p| p.1).ok_or_else(|| missing("northing", pairs()))?,
    };
    // A chosen column that appears twice is ambiguous: refuse rather than pick one.
    for k in [pc, east, north] {
        let again: Vec<usize> = (0..names.len()).filter(|&j| names[j] == names[k]).collect();
        if again.len() > 1 {
            return Err(Error::Malformed {
                file: file.to_string(),
                line: 1,
                field: header[k].trim().to_string(),
                message: format!(
                    "the column appears {} times in the header (columns {}); keep one",
                    again.len(),
                    again.iter().map(|j| (j + 1).to_string()).collect::<Vec<_>>().join(", ")
                ),
            });
        }
    }
    let name = |k: usize| header[k].trim().trim_start_matches('\u{feff}').to_string();
    Ok(([pc, east, north], [name(pc), name(east), name(north)]))
}

impl PostcodeLookup {
    /// Streams a lookup CSV (named `file` in errors); see the module
    /// documentation for the rules. With `wanted`, only those normalised
    /// postcodes are stored.
    pub fn read<R: BufRead>(
        input: R,
        file: &str,
        columns: &PostcodeColumns,
        wanted: Option<&HashSet<String>>,
        skip_malformed: bool,
    ) -> Result<Self> {
        let mut reader = RecordReader::new(input, file);
        let header = match reader.next_record()? {
            Some((_, h)) => h.to_vec(),
            None => return Err(Error::NotEnoughData(format!("{file}: empty file (a header row is required)"))),
        };
        let ([pc, east, north], names) = resolve(file, &header, columns)?;
        let mut out = PostcodeLookup { map: HashMap::new(), counts: LookupCounts::default(), columns: names };
        loop {
            let (line, f) = match reader.next_record() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(Error::Malformed { .. }) if skip_malformed => {
                    out.counts.rows += 1;
                    out.counts.malformed += 1;
                    continue;
                }
                Err(e) => return Err(e),
            };
            out.counts.rows += 1;
            if f.len() != header.len() {
                if skip_malformed {
                    out.counts.malformed += 1;
                    continue;
                }
                return Err(Error::Malformed {
                    file: file.to_string(),
                    line,
                    field: "record".into(),
                    message: format!("has {} fields; the header has {}", f.len(), header.len()),
                });
            }
            let key = normalise_postcode(&f[pc]);
            if key.is_empty() {
                out.counts.empty_postcode += 1;
                continue;
            }
            if wanted.is_some_and(|w| !w.contains(&key)) {
                out.counts.not_needed += 1;
                continue;
            }
            let (e, n) = (f[east].trim(), f[north].trim());
            if e.is_empty() || n.is_empty() {
                out.counts.without_coordinates += 1;
                continue;
            }
            let parse = |v: &str, k: usize| -> Result<f64> {
                v.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| Error::Malformed {
                    file: file.to_string(),
                    line,
                    field: out.columns[k].clone(),
                    message: format!("\"{v}\" is not a finite number"),
                })
            };
            let xy = match (parse(e, 1), parse(n, 2)) {
                (Ok(x), Ok(y)) => [x, y],
                (Err(err), _) | (_, Err(err)) => {
                    if skip_malformed {
                        out.counts.malformed += 1;
                        continue;
                    }
                    return Err(err);
                }
            };
            if out.map.contains_key(&key) {
                out.counts.duplicates += 1;
                continue;
            }
            out.map.insert(key, xy);
            out.counts.kept += 1;
        }
        Ok(out)
    }

    /// The coordinates of a normalised postcode.
    pub fn get(&self, postcode: &str) -> Option<[f64; 2]> {
        self.map.get(postcode).copied()
    }

    /// Number of postcodes stored.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// No postcode stored.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, cols: &PostcodeColumns, wanted: Option<&HashSet<String>>) -> Result<PostcodeLookup> {
        PostcodeLookup::read(text.as_bytes(), "pc.csv", cols, wanted, false)
    }

    #[test]
    fn duplicate_coordinate_columns_are_refused() {
        let e = read("pcds,oseast1m,osnrth1m,oseast1m\nA1 1AA,1,2,3\n", &PostcodeColumns::default(), None)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("pc.csv line 1, field \"oseast1m\": the column appears 2 times in the header (columns 2, 4)"),
            "{e}"
        );
    }

    #[test]
    fn normalisation() {
        assert_eq!(normalise_postcode(" sw1a  1aa "), "SW1A1AA");
        assert_eq!(normalise_postcode("SW1A\t1AA"), "SW1A1AA");
        assert_eq!(normalise_postcode("E1 6AN"), normalise_postcode("e16an"));
        assert_eq!(normalise_postcode("   "), "");
    }

    #[test]
    fn detection_overrides_duplicates_and_missing_coordinates() {
        let text = "\u{feff}PCD,pcds,other,OSEAST1M,osnrth1m\n\
                    \"E1  6AN\",\"E1 6AN\",\"x\",535000,181000\n\
                    \"E1  7AA\",\"E1 7AA\",\"x\",,\n\
                    \"E1  6AN\",\"E1 6AN\",\"x\",1,2\n\
                    \"E1  7AA\",\"E1 7AA\",\"x\",536000,182000\n\
                    \"\",\"\",\"x\",1,2\n";
        let l = read(text, &PostcodeColumns::default(), None).unwrap();
        assert_eq!(l.columns, ["pcds".to_string(), "OSEAST1M".into(), "osnrth1m".into()]);
        assert_eq!(l.get("E16AN"), Some([535000.0, 181000.0]));
        // The first row *with coordinates* wins.
        assert_eq!(l.get("E17AA"), Some([536000.0, 182000.0]));
        assert_eq!(
            l.counts,
            LookupCounts {
                rows: 5,
                kept: 2,
                empty_postcode: 1,
                not_needed: 0,
                without_coordinates: 1,
                duplicates: 1,
                malformed: 0
            }
        );
        let wanted: HashSet<String> = ["E17AA".to_string()].into();
        let l = read(text, &PostcodeColumns::default(), Some(&wanted)).unwrap();
        assert_eq!((l.len(), l.counts.not_needed), (1, 2));
        // Other conventions and explicit names.
        let l = read("Postcode,Easting,Northing\nab1 2cd,1.5,2.5\n", &PostcodeColumns::default(), None).unwrap();
        assert_eq!(l.get("AB12CD"), Some([1.5, 2.5]));
        let l = read("postcode,x,y\nab1 2cd,1,2\n", &PostcodeColumns::default(), None).unwrap();
        assert_eq!(l.get("AB12CD"), Some([1.0, 2.0]));
        let cols =
            PostcodeColumns { postcode: Some("PC".into()), easting: Some("E".into()), northing: Some("N".into()) };
        let l = read("pc,e,n,x,y\nab1 2cd,1,2,3,4\n", &cols, None).unwrap();
        assert_eq!(l.get("AB12CD"), Some([1.0, 2.0]));
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let e = read("code,lat,long\n", &PostcodeColumns::default(), None).unwrap_err().to_string();
        assert_eq!(
            e,
            "pc.csv: no postcode column (looked for pcds, pcd, pcd2, postcode; the header has: code,lat,long)"
        );
        let e = read("pcds,lat\n", &PostcodeColumns::default(), None).unwrap_err().to_string();
        assert!(e.contains("no easting column (looked for oseast1m/osnrth1m, easting/northing, x/y"), "{e}");
        let e =
            read("pcds,x,y\nA1 1AA,1,2\nA1 1AB,1,north\n", &PostcodeColumns::default(), None).unwrap_err().to_string();
        assert_eq!(e, "pc.csv line 3, field \"y\": \"north\" is not a finite number");
        let e = read("pcds,x,y\nA1 1AA,1\n", &PostcodeColumns::default(), None).unwrap_err().to_string();
        assert_eq!(e, "pc.csv line 2, field \"record\": has 2 fields; the header has 3");
        let l = PostcodeLookup::read(
            "pcds,x,y\nA1 1AA,1\nA1 1AB,1,nan\nA1 1AC,1,2\n".as_bytes(),
            "pc.csv",
            &PostcodeColumns::default(),
            None,
            true,
        )
        .unwrap();
        assert_eq!((l.counts.malformed, l.counts.kept), (2, 1));
    }
}
