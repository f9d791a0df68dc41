//! CSV tables of points: covariate columns `x` (1-D) or `x1..xd`, and
//! optionally a response column `y`; other columns are ignored.

use std::path::Path;

use crate::error::{Error, Result};
use crate::model::data::Dataset;
use crate::model::points::Points;

/// Covariates (and responses, if present) read from a CSV file.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Covariate column names, in order (`x` or `x1..xd`).
    pub x_names: Vec<String>,
    /// The covariates.
    pub x: Points,
    /// The `y` column, if the file has one.
    pub y: Option<Vec<f64>>,
}

fn input(message: String) -> Error {
    Error::Input(message)
}

/// The largest input file gpdp reads (1 GiB): a larger one — or an endless
/// one such as `/dev/zero` — is refused instead of exhausting memory.
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// Reads a whole input file of at most `limit` bytes; errors name the path.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let name = path.display();
    let meta = std::fs::metadata(path).map_err(|e| input(format!("cannot read {name}: {e}")))?;
    if meta.is_dir() {
        return Err(input(format!("cannot read {name}: it is a directory, not a file")));
    }
    if meta.len() > limit {
        return Err(input(format!("{name} has {} bytes; gpdp reads input files of at most {limit} bytes", meta.len())));
    }
    let file = std::fs::File::open(path).map_err(|e| input(format!("cannot read {name}: {e}")))?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|e| input(format!("cannot read {name}: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(input(format!("{name} is longer than {limit} bytes (the limit for input files)")));
    }
    Ok(bytes)
}

/// Reads a CSV with covariate columns `x` or `x1..xd` and an optional `y`
/// column (required when `need_y`).
pub fn read_table(path: &Path, need_y: bool) -> Result<Table> {
    let bytes = read_bounded(path, MAX_INPUT_BYTES)?;
    read_table_bytes(&path.display().to_string(), &bytes, need_y)
}

/// A CSV reader over `bytes` (cells trimmed, records of any length, so
/// that a short row is reported by the caller with its line) and the
/// header, as read; `name` is the file's name for errors.
pub(crate) fn open_csv<'a>(name: &str, bytes: &'a [u8]) -> Result<(csv::Reader<&'a [u8]>, Vec<String>)> {
    let mut rdr = csv::ReaderBuilder::new().flexible(true).trim(csv::Trim::All).from_reader(bytes);
    let headers: Vec<String> = rdr
        .headers()
        .map_err(|e| input(format!("{name}: cannot read the header: {e}")))?
        .iter()
        .map(|h| h.to_string())
        .collect();
    Ok((rdr, headers))
}

/// [`read_table`] on the bytes of a file called `name` (for errors).
pub fn read_table_bytes(name: &str, bytes: &[u8], need_y: bool) -> Result<Table> {
    read_table_columns(name, bytes, need_y, &Columns::default())
}

/// Which columns hold the covariates and the response (default: `x` or
/// `x1..xd`, and `y`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Columns {
    /// Covariate columns by name, in order (e.g. `easting`, `northing`).
    pub x: Option<Vec<String>>,
    /// The response column by name (e.g. `pm25`).
    pub y: Option<String>,
}

/// [`read_table_bytes`] with the columns chosen by name.
pub fn read_table_columns(name: &str, bytes: &[u8], need_y: bool, cols: &Columns) -> Result<Table> {
    let (mut rdr, headers) = open_csv(name, bytes)?;
    if headers.iter().all(|h| h.is_empty()) {
        return Err(input(format!("{name}: the file is empty (expected a header with x or x1..xd and y)")));
    }
    // A duplicate name, found in one pass (a header may have many columns).
    let mut first = std::collections::HashMap::new();
    for (i, h) in headers.iter().enumerate().filter(|(_, h)| !h.is_empty()) {
        if let Some(j) = first.insert(h.as_str(), i) {
            return Err(input(format!(
                "{name}: column '{}' appears twice in the header (columns {} and {})",
                super::excerpt(h),
                j + 1,
                i + 1
            )));
        }
    }
    let find = |h: &str| headers.iter().position(|c| c == h);
    let mut xcols = Vec::new();
    let mut x_names = Vec::new();
    if let Some(named) = &cols.x {
        for h in named {
            let i = find(h).ok_or_else(|| {
                input(format!(
                    "{name}: no covariate column '{}' (the header is {}){}",
                    super::excerpt(h),
                    super::header_list(&headers),
                    super::did_you_mean(h, &headers)
                ))
            })?;
            if xcols.contains(&i) {
                return Err(input(format!("{name}: covariate column '{}' is named twice", super::excerpt(h))));
            }
            xcols.push(i);
            x_names.push(h.clone());
        }
    } else if let Some(i) = find("x") {
        if find("x1").is_some() {
            return Err(input(format!("{name}: has both an 'x' and an 'x1' column; use x for 1-D or x1..xd")));
        }
        xcols.push(i);
        x_names.push("x".to_string());
    } else {
        let mut j = 1;
        while let Some(i) = find(&format!("x{j}")) {
            xcols.push(i);
            x_names.push(format!("x{j}"));
            j += 1;
        }
        if let Some(extra) =
            headers.iter().find(|h| h.strip_prefix('x').and_then(|t| t.parse::<usize>().ok()).is_some_and(|k| k >= j))
        {
            return Err(input(format!(
                "{name}: covariate column '{}' without x1..x{j} before it",
                super::excerpt(extra)
            )));
        }
    }
    if xcols.is_empty() {
        return Err(input(format!(
            "{name}: no covariate columns (expected 'x' or 'x1', 'x2', …, or name them with --x); header is {}",
            super::header_list(&headers)
        )));
    }
    let yname = cols.y.as_deref().unwrap_or("y");
    let ycol = find(yname);
    if need_y && ycol.is_none() {
        return Err(input(format!(
            "{name}: no '{}' column (responses; name it with --y); header is {}{}",
            super::excerpt(yname),
            super::header_list(&headers),
            super::did_you_mean(yname, &headers)
        )));
    }
    if let Some(yc) = ycol.filter(|yc| xcols.contains(yc)) {
        return Err(input(format!(
            "{name}: column '{}' is both a covariate and the response",
            super::excerpt(&headers[yc])
        )));
    }
    let d = xcols.len();
    let mut data = Vec::new();
    let mut ys = Vec::new();
    let mut count = 0usize;
    let mut lines = Lines::new(bytes);
    for (i, rec) in rdr.records().enumerate() {
        let row = i + 1;
        let rec = rec.map_err(|e| input(format!("{name} row {row}: unreadable record: {e}")))?;
        // The line as an editor shows it (the reader's own count skips blank lines).
        let line = rec.position().map_or(row + 1, |p| lines.at(p.byte()));
        if rec.len() != headers.len() {
            return Err(input(format!(
                "{name} row {row} (line {line}): {} fields, but the header has {}",
                rec.len(),
                headers.len()
            )));
        }
        let cell = |c: usize| -> Result<f64> {
            let s = &rec[c];
            let v: f64 = s.parse().map_err(|_| {
                input(format!(
                    "{name} row {row} (line {line}), column {}: '{}' is not a number",
                    super::excerpt(&headers[c]),
                    super::excerpt(s)
                ))
            })?;
            if !v.is_finite() {
                return Err(input(format!(
                    "{name} row {row} (line {line}), column {}: {} is not finite",
                    super::excerpt(&headers[c]),
                    super::excerpt(s)
                )));
            }
            Ok(v)
        };
        for &c in &xcols {
            data.push(cell(c)?);
        }
        if let Some(c) = ycol {
            ys.push(cell(c)?);
        }
        count += 1;
    }
    if count == 0 {
        return Err(input(format!("{name}: no data rows after the header")));
    }
    Ok(Table { x_names, x: Points::new(data, d)?, y: ycol.map(|_| ys) })
}

/// Line numbers of records, counted incrementally (records come in order, so
/// reading a file stays linear in its size).
pub(crate) struct Lines<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Lines { bytes, pos: 0, line: 1 }
    }

    /// 1-based line of the first non-blank byte at or after `offset` (the
    /// reader reports a record as starting where the blank lines before it
    /// do).
    pub(crate) fn at(&mut self, offset: u64) -> usize {
        let b = self.bytes;
        let mut end = (offset as usize).min(b.len());
        while end < b.len() && matches!(b[end], b'\n' | b'\r') {
            end += 1;
        }
        if end < self.pos {
            (self.pos, self.line) = (0, 1); // out of order: count again from the start
        }
        self.line += b[self.pos..end].iter().filter(|&&c| c == b'\n').count();
        self.pos = end;
        self.line
    }
}

/// Reads the columns named `cols` (matched case-insensitively, each exactly
/// once in the header) of a CSV file as finite numbers, row by row; other
/// columns are ignored. Errors name the file, the line and the column.
pub fn read_named_columns(path: &Path, cols: &[&str]) -> Result<Vec<Vec<f64>>> {
    let name = path.display().to_string();
    let bytes = read_bounded(path, MAX_INPUT_BYTES)?;
    let mut rdr = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(&bytes[..]);
    let header: Vec<String> = rdr
        .headers()
        .map_err(|e| input(format!("{name}: cannot read the header: {e}")))?
        .iter()
        .map(String::from)
        .collect();
    let mut idx = Vec::with_capacity(cols.len());
    for c in cols {
        let hits: Vec<usize> = (0..header.len()).filter(|&i| header[i].eq_ignore_ascii_case(c)).collect();
        match hits.as_slice() {
            [i] => idx.push(*i),
            [] => {
                return Err(input(format!(
                    "{name}: no column \"{}\" (the header is {}){}",
                    super::excerpt(c),
                    super::header_list(&header),
                    super::did_you_mean(c, &header)
                )));
            }
            _ => {
                return Err(input(format!(
                    "{name}: column \"{}\" appears {} times in the header (columns {}); keep one",
                    super::excerpt(c),
                    hits.len(),
                    hits.iter().map(|i| (i + 1).to_string()).collect::<Vec<_>>().join(", ")
                )));
            }
        }
    }
    let mut out = Vec::new();
    let mut lines = Lines::new(&bytes);
    for rec in rdr.records() {
        let rec = rec.map_err(|e| input(format!("cannot read {name}: {e}")))?;
        let line = rec.position().map_or(0, |p| lines.at(p.byte()));
        let mut row = Vec::with_capacity(cols.len());
        for (k, &i) in idx.iter().enumerate() {
            let t = rec.get(i).unwrap_or("");
            let v = t.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| {
                input(format!(
                    "{name} line {line}, column \"{}\": \"{}\" is not a finite number",
                    super::excerpt(cols[k]),
                    super::excerpt(t)
                ))
            })?;
            row.push(v);
        }
        out.push(row);
    }
    if out.is_empty() {
        return Err(input(format!("{name}: no data rows")));
    }
    Ok(out)
}

/// Reads a training set (covariates and `y`) and its covariate names.
pub fn read_dataset(path: &Path) -> Result<(Vec<String>, Dataset)> {
    read_dataset_columns(path, &Columns::default())
}

/// Reads a training set with the covariate and response columns chosen by name.
pub fn read_dataset_columns(path: &Path, cols: &Columns) -> Result<(Vec<String>, Dataset)> {
    let bytes = read_bounded(path, MAX_INPUT_BYTES)?;
    let t = read_table_columns(&path.display().to_string(), &bytes, true, cols)?;
    let y = t.y.ok_or_else(|| input(format!("{}: no response column", path.display())))?;
    Ok((t.x_names, Dataset::new(t.x, y)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endless_and_oversized_inputs_are_refused() {
        let e = read_bounded(Path::new("/dev/zero"), 1 << 20).unwrap_err().to_string();
        assert!(e.contains("/dev/zero is longer than 1048576 bytes"), "{e}");
        let dir = std::env::temp_dir();
        assert!(read_bounded(&dir, 1 << 20).unwrap_err().to_string().contains("is a directory"));
        let e = read_table(Path::new("/nonexistent/d.csv"), true).unwrap_err().to_string();
        assert!(e.contains("cannot read /nonexistent/d.csv"), "{e}");
    }

    #[test]
    fn reads_points_and_names_rows_and_lines() {
        let t = read_table_bytes("d.csv", b"x1,x2,y,label\n0.1,0.2,1,a\n0.3,0.4,-1,b\n", true).unwrap();
        assert_eq!(t.x_names, ["x1", "x2"]);
        assert_eq!(t.x.as_slice(), &[0.1, 0.2, 0.3, 0.4]);
        assert_eq!(t.y.unwrap(), vec![1.0, -1.0]);
        let e = read_table_bytes("d.csv", b"x,y\n0.1,0.5\n\n\n0.2,NaN\n", true).unwrap_err().to_string();
        assert_eq!(e, "d.csv row 2 (line 5), column y: NaN is not finite");
        let e = read_table_bytes("d.csv", b"x,y\n0.1,abc\n", true).unwrap_err().to_string();
        assert!(e.contains("row 1 (line 2), column y: 'abc' is not a number"), "{e}");
        assert!(read_table_bytes("d.csv", b"", true).unwrap_err().to_string().contains("empty"));
        assert!(read_table_bytes("d.csv", b"x,y\n", true).unwrap_err().to_string().contains("no data rows"));
        assert!(read_table_bytes("d.csv", b"x\n0.5\n", true).unwrap_err().to_string().contains("no 'y' column"));
        assert!(read_table_bytes("d.csv", b"x2,y\n0.5,1\n", true).unwrap_err().to_string().contains("'x2' without"));
        let e = read_table_bytes("d.csv", b"x1,x2,y,y\n0.1,0.2,1,2\n", true).unwrap_err().to_string();
        assert!(e.contains("column 'y' appears twice in the header (columns 3 and 4)"), "{e}");
        assert!(
            read_table_bytes("d.csv", b"x1,x1\n0.1,0.2\n", false)
                .unwrap_err()
                .to_string()
                .contains("'x1' appears twice")
        );
    }

    #[test]
    fn line_numbers_stay_linear_in_the_file_size() {
        // 60 000 records with a blank line every 1000 and a bad value last:
        // counting lines from the start for each record (quadratic) took
        // tens of seconds here; incremental counting takes milliseconds.
        let mut text = String::from("x,y\n");
        for i in 0..60_000 {
            if i % 1000 == 999 {
                text.push('\n');
            }
            text.push_str(&format!("{},{}\n", i as f64 / 60_000.0, 0.5));
        }
        text.push_str("0.5,oops\n");
        let start = std::time::Instant::now();
        let e = read_table_bytes("big.csv", text.as_bytes(), true).unwrap_err().to_string();
        assert!(start.elapsed() < std::time::Duration::from_secs(5), "{:?}", start.elapsed());
        // 1 header + 60 000 records + 60 blank lines, then the bad one.
        assert!(e.contains("row 60001 (line 60062)"), "{e}");
        let mut lines = Lines::new(b"a\n\nb\nc\n");
        assert_eq!((lines.at(0), lines.at(2), lines.at(5)), (1, 3, 4));
        assert_eq!(lines.at(0), 1, "out of order: counted again");
    }
}
