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

/// Reads a CSV with covariate columns `x` or `x1..xd` and an optional `y`
/// column (required when `need_y`).
pub fn read_table(path: &Path, need_y: bool) -> Result<Table> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| input(format!("cannot read {name}: {e}")))?;
    read_table_bytes(&name, &bytes, need_y)
}

/// [`read_table`] on the bytes of a file called `name` (for errors).
pub fn read_table_bytes(name: &str, bytes: &[u8], need_y: bool) -> Result<Table> {
    let mut rdr = csv::ReaderBuilder::new().flexible(true).trim(csv::Trim::All).from_reader(bytes);
    let headers: Vec<String> = rdr
        .headers()
        .map_err(|e| input(format!("{name}: cannot read the header: {e}")))?
        .iter()
        .map(|h| h.to_string())
        .collect();
    if headers.iter().all(|h| h.is_empty()) {
        return Err(input(format!("{name}: the file is empty (expected a header with x or x1..xd and y)")));
    }
    let find = |h: &str| headers.iter().position(|c| c == h);
    let mut xcols = Vec::new();
    let mut x_names = Vec::new();
    if let Some(i) = find("x") {
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
            return Err(input(format!("{name}: covariate column '{extra}' without x1..x{j} before it")));
        }
    }
    if xcols.is_empty() {
        return Err(input(format!(
            "{name}: no covariate columns (expected 'x' or 'x1', 'x2', …); header is {headers:?}"
        )));
    }
    let ycol = find("y");
    if need_y && ycol.is_none() {
        return Err(input(format!("{name}: no 'y' column (responses)")));
    }
    let d = xcols.len();
    let mut data = Vec::new();
    let mut ys = Vec::new();
    let mut count = 0usize;
    for (i, rec) in rdr.records().enumerate() {
        let row = i + 1;
        let rec = rec.map_err(|e| input(format!("{name} row {row}: unreadable record: {e}")))?;
        // The line as an editor shows it (the reader's own count skips blank lines).
        let line = rec.position().map_or(row + 1, |p| line_of(bytes, p.byte()));
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
                input(format!("{name} row {row} (line {line}), column {}: '{s}' is not a number", headers[c]))
            })?;
            if !v.is_finite() {
                return Err(input(format!("{name} row {row} (line {line}), column {}: {s} is not finite", headers[c])));
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

/// 1-based line of the first non-blank byte at or after `offset` (the
/// reader reports a record as starting where the blank lines before it do).
fn line_of(bytes: &[u8], offset: u64) -> usize {
    let mut end = (offset as usize).min(bytes.len());
    while end < bytes.len() && matches!(bytes[end], b'\n' | b'\r') {
        end += 1;
    }
    1 + bytes[..end].iter().filter(|&&b| b == b'\n').count()
}

/// Reads a training set (covariates and `y`) and its covariate names.
pub fn read_dataset(path: &Path) -> Result<(Vec<String>, Dataset)> {
    let t = read_table(path, true)?;
    let y = t.y.ok_or_else(|| input(format!("{}: no y column", path.display())))?;
    Ok((t.x_names, Dataset::new(t.x, y)?))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
