//! CSV input with row-numbered validation, and atomic output.

use std::path::Path;

use anyhow::{Context, Result, bail};
use gpdp::{Dataset, Points};

/// Covariates (and responses, if present) read from a CSV file.
pub struct Table {
    /// Covariate column names, in order (`x` or `x1..xd`).
    pub x_names: Vec<String>,
    /// The covariates.
    pub x: Points,
    /// The `y` column, if the file has one.
    pub y: Option<Vec<f64>>,
}

/// Reads a CSV with covariate columns `x` (1-D) or `x1..xd` and an optional
/// `y` column (other columns are ignored). Every error names the file, the
/// record (1-based) and its line.
pub fn read_table(path: &Path, need_y: bool) -> Result<Table> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {name}"))?;
    read_table_bytes(&name, &bytes, need_y)
}

pub fn read_table_bytes(name: &str, bytes: &[u8], need_y: bool) -> Result<Table> {
    let mut rdr = csv::ReaderBuilder::new().flexible(true).trim(csv::Trim::All).from_reader(bytes);
    let headers: Vec<String> = rdr
        .headers()
        .with_context(|| format!("{name}: cannot read the header"))?
        .iter()
        .map(|h| h.to_string())
        .collect();
    if headers.iter().all(|h| h.is_empty()) {
        bail!("{name}: the file is empty (expected a header with x or x1..xd and y)");
    }
    let find = |h: &str| headers.iter().position(|c| c == h);
    let mut xcols = Vec::new();
    let mut x_names = Vec::new();
    if let Some(i) = find("x") {
        if find("x1").is_some() {
            bail!("{name}: has both an 'x' and an 'x1' column; use x for 1-D or x1..xd");
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
            bail!("{name}: covariate column '{extra}' without x1..x{} before it", j);
        }
    }
    if xcols.is_empty() {
        bail!("{name}: no covariate columns (expected 'x' or 'x1', 'x2', …); header is {:?}", headers);
    }
    let ycol = find("y");
    if need_y && ycol.is_none() {
        bail!("{name}: no 'y' column (responses)");
    }
    let d = xcols.len();
    let mut data = Vec::new();
    let mut ys = Vec::new();
    let mut count = 0usize;
    for (i, rec) in rdr.records().enumerate() {
        let (row, line) = (i + 1, i + 2);
        let rec = rec.with_context(|| format!("{name} row {row} (line {line}): unreadable record"))?;
        if rec.len() != headers.len() {
            bail!("{name} row {row} (line {line}): {} fields, but the header has {}", rec.len(), headers.len());
        }
        let cell = |c: usize| -> Result<f64> {
            let s = &rec[c];
            let v: f64 = s.parse().map_err(|_| {
                anyhow::anyhow!("{name} row {row} (line {line}), column {}: '{s}' is not a number", headers[c])
            })?;
            if !v.is_finite() {
                bail!("{name} row {row} (line {line}), column {}: {s} is not finite", headers[c]);
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
        bail!("{name}: no data rows after the header");
    }
    Ok(Table { x_names, x: Points::new(data, d)?, y: ycol.map(|_| ys) })
}

/// Reads a training set (covariates and `y`).
pub fn read_dataset(path: &Path) -> Result<(Vec<String>, Dataset)> {
    let t = read_table(path, true)?;
    let y = t.y.context("no y column")?;
    Ok((t.x_names, Dataset::new(t.x, y)?))
}

/// Writes `bytes` to `path` via a temporary file in the same directory and a
/// rename, so a failure never leaves a partial file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp =
        dir.join(format!(".{}.tmp-{}", path.file_name().and_then(|s| s.to_str()).unwrap_or("out"), std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot move the output into {}", path.display())
    })
}
