//! `gpdp hexbin`: median per hexagonal cell of point records (the binning
//! of the real-data study, App. D.2, on any CSV).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::Args;
use gpdp_experiments::realdata::hexbin::{HexLayout, Hexbin, HexbinSpec, Sublattice, hexbin};

use crate::output::files::{check_out_file, write_atomically};

pub const ABOUT: &str = "Bin point records (x, y, value) onto a hexagonal lattice and report, per cell, the centre, the number of points and the median value (the binning of the paper's real-data study, App. D.2).

Geometry: pointy-top hexagons on two offset rectangular lattices, A at o + (i·sx, j·sy) and B at o + ((i+½)·sx, (j+½)·sy), with sx = (box width)/size. A point goes to the nearest centre in the metric (Δx/sx)² + 3(Δy/sy)². With --layout regular (default) sy = √3·sx: the metric is Euclidean and the cells are true regular hexagons (flat-to-flat width sx), rows centred vertically on the box. With --layout matplotlib the lattice is matplotlib's hexbin(gridsize=size): ny = ⌊size/√3⌋ rows, sy = height/ny, so cells are stretched along y unless the box's aspect matches.

The box is --box, or the data's extent widened by 1e-9 of its size (points outside a given box are not binned, and counted). Cells with at least --min-count points are written (inclusive); the median of an even count is the mean of the two middle values.

Output CSV columns: x, y (cell centre), count, median, lattice (A/B), i, j.";

/// Arguments of `gpdp hexbin`.
#[derive(Args, Debug, Clone)]
#[command(allow_negative_numbers = true)]
pub struct HexbinArgs {
    /// Points CSV with a header row.
    #[arg(long, value_name = "CSV")]
    pub data: PathBuf,
    /// Column of the x coordinate (case-insensitive).
    #[arg(long, value_name = "COL", default_value = "x")]
    pub x: String,
    /// Column of the y coordinate.
    #[arg(long, value_name = "COL", default_value = "y")]
    pub y: String,
    /// Column of the value whose median is taken.
    #[arg(long, value_name = "COL", default_value = "value")]
    pub value: String,
    /// Hexagons across x (matplotlib's gridsize).
    #[arg(long, default_value = "40")]
    pub size: usize,
    /// Keep cells with at least this many points (inclusive, ≥ 1).
    #[arg(long = "min-count", default_value = "1")]
    pub min_count: usize,
    /// Box x0,x1,y0,y1 to cover (default: the data's extent).
    #[arg(long = "box", value_name = "x0,x1,y0,y1")]
    pub bbox: Option<String>,
    /// Row spacing: regular (true regular hexagons) or matplotlib.
    #[arg(long, value_name = "regular|matplotlib", default_value = "regular")]
    pub layout: HexLayout,
    /// Output CSV.
    #[arg(long, value_name = "CSV")]
    pub out: PathBuf,
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
}

/// Parses "x0,x1,y0,y1".
pub fn parse_box(s: &str) -> Result<[f64; 4]> {
    let v: Vec<f64> = s
        .split(',')
        .map(|t| t.trim().parse::<f64>().map_err(|_| anyhow::anyhow!("--box '{s}': '{}' is not a number", t.trim())))
        .collect::<Result<_>>()?;
    match v[..] {
        [x0, x1, y0, y1] if x0 < x1 && y0 < y1 && v.iter().all(|a| a.is_finite()) => Ok([x0, x1, y0, y1]),
        [_, _, _, _] => bail!("--box '{s}' must be finite with x0 < x1 and y0 < y1"),
        _ => bail!("--box '{s}' needs four numbers x0,x1,y0,y1"),
    }
}

/// Refuses points whose extent cannot be binned without a `--box`: its
/// width or height overflows a 64-bit float (e.g. x from −1e308 to 1e308).
fn check_extent(path: &Path, points: &[[f64; 3]]) -> Result<()> {
    let range =
        |k: usize| points.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| (lo.min(p[k]), hi.max(p[k])));
    let ((x0, x1), (y0, y1)) = (range(0), range(1));
    if !((x1 - x0) * (1.0 + 2e-9)).is_finite() || !((y1 - y0) * (1.0 + 2e-9)).is_finite() {
        let n = |v: f64| if v != 0.0 && !(1e-4..1e6).contains(&v.abs()) { format!("{v:e}") } else { v.to_string() };
        bail!(
            "{}: the points' extent (x from {} to {}, y from {} to {}) is too wide to bin — its width or height overflows a 64-bit float; give --box x0,x1,y0,y1 to bin the part you need",
            path.display(),
            n(x0),
            n(x1),
            n(y0),
            n(y1)
        );
    }
    Ok(())
}

/// Reads (x, y, value) from the named columns; errors name the line and column.
fn read_points(path: &Path, cols: [&str; 3]) -> Result<Vec<[f64; 3]>> {
    Ok(gpdp::io::read_named_columns(path, &cols)?.into_iter().map(|r| [r[0], r[1], r[2]]).collect())
}

/// The cells as CSV text.
pub fn cells_csv(h: &Hexbin) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["x", "y", "count", "median", "lattice", "i", "j"])?;
    for c in &h.cells {
        let lat = match c.index.lattice {
            Sublattice::A => "A",
            Sublattice::B => "B",
        };
        w.write_record([
            c.x.to_string(),
            c.y.to_string(),
            c.count.to_string(),
            c.median.to_string(),
            lat.to_string(),
            c.index.i.to_string(),
            c.index.j.to_string(),
        ])?;
    }
    Ok(w.into_inner()?)
}

pub fn run(a: HexbinArgs) -> Result<()> {
    crate::output::files::check_inputs_apart(&[("--data", &a.data)], &[("--out", &a.out)])?;
    check_out_file("--out", &a.out, a.force)?;
    let bbox = a.bbox.as_deref().map(parse_box).transpose()?;
    let points = read_points(&a.data, [&a.x, &a.y, &a.value])?;
    if bbox.is_none() {
        check_extent(&a.data, &points)?;
    }
    let spec = HexbinSpec { size: a.size, min_count: a.min_count, bbox, layout: a.layout };
    let h = hexbin(&points, &spec).map_err(|e| match bbox {
        Some(_) => anyhow::Error::from(e),
        None => anyhow::anyhow!("{e} (without --box, the box is the points' extent, widened by 1e-9 of its size)"),
    })?;
    write_atomically(&a.out, &cells_csv(&h)?, a.force)?;
    let g = &h.grid;
    println!(
        "binned {} point(s) into {} cell(s) with ≥ {} point(s) ({} layout, {} columns × {} rows, sx = {}, sy = {}); {} outside the box; {} cell(s) ({} point(s)) below the min count; wrote {}",
        h.points_binned,
        h.cells.len(),
        a.min_count,
        serde_json::to_value(g.layout)?.as_str().unwrap_or("?"),
        g.nx,
        g.ny,
        g.sx,
        g.sy,
        h.points_outside,
        h.cells_below_min_count,
        h.points_below_min_count,
        a.out.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_parsing() {
        assert_eq!(parse_box("0, 1,-2,3").unwrap(), [0.0, 1.0, -2.0, 3.0]);
        assert!(parse_box("0,1,2").is_err());
        assert!(parse_box("1,0,0,1").is_err());
        assert!(parse_box("0,1,a,1").is_err());
    }
}
