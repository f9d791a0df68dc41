//! Where a released path is evaluated: a regular grid over the domain, or
//! a list of points. The query is public (it is chosen without the data);
//! so is everything derived from it, such as which sampler can serve it.

use std::fmt;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::model::domain::Domain;
use crate::model::points::Points;

/// Largest number of points of a grid query (4 · 10⁶).
pub const MAX_GRID_POINTS: usize = 4_000_000;

/// Parses "N" (every axis) or "N1xN2…" into `dim` counts ≥ 2; `what` names
/// the setting in errors (e.g. "grid").
pub fn parse_counts(spec: &str, dim: usize, what: &'static str) -> Result<Vec<usize>> {
    let bad = |reason: String| Error::Setting { name: what, value: spec.to_string(), reason };
    let parts: Vec<&str> = spec.split(['x', 'X', '×']).collect();
    let counts: Vec<usize> = parts
        .iter()
        .map(|p| {
            let p = p.trim();
            p.parse::<usize>()
                .map_err(|_| bad(format!("expected counts per axis like 120 or 120x80 ('{p}' is not a count)")))
        })
        .collect::<Result<_>>()?;
    let counts = match counts.len() {
        1 => vec![counts[0]; dim],
        k if k == dim => counts,
        k => return Err(bad(format!("expected one count or {dim} counts for the {dim}-D domain (got {k})"))),
    };
    if counts.iter().any(|&c| c < 2) {
        return Err(bad("every axis needs at least 2 points".into()));
    }
    Ok(counts)
}

/// A regular grid: `counts[j]` points from `lower[j]` to `upper[j]` (end
/// points included) on axis j, flattened with x1 varying fastest.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    counts: Vec<usize>,
    lower: Vec<f64>,
    upper: Vec<f64>,
    points: Points,
}

impl Grid {
    /// A grid with the given corners and counts ≥ 2; at most
    /// [`MAX_GRID_POINTS`] points.
    pub fn new(lower: Vec<f64>, upper: Vec<f64>, counts: Vec<usize>) -> Result<Self> {
        let d = counts.len();
        if d == 0 || lower.len() != d || upper.len() != d {
            return Err(Error::Dimension(format!(
                "a grid needs one count and one lower and upper bound per axis (got {}, {}, {})",
                d,
                lower.len(),
                upper.len()
            )));
        }
        for j in 0..d {
            if !(lower[j].is_finite() && upper[j].is_finite() && lower[j] < upper[j]) {
                return Err(Error::Grid(format!(
                    "axis {} runs from {} to {}; it must be finite with lower < upper",
                    j + 1,
                    lower[j],
                    upper[j]
                )));
            }
            if counts[j] < 2 {
                return Err(Error::Grid(format!("axis {} has {} point(s); at least 2 are needed", j + 1, counts[j])));
            }
        }
        let total = counts.iter().try_fold(1usize, |a, &c| a.checked_mul(c)).filter(|&t| t <= MAX_GRID_POINTS);
        let Some(total) = total else {
            return Err(Error::TooLarge(format!(
                "a {} grid has more than {MAX_GRID_POINTS} points",
                counts.iter().map(|c| c.to_string()).collect::<Vec<_>>().join("×")
            )));
        };
        let mut data = Vec::with_capacity(total * d);
        for flat in 0..total {
            let mut rem = flat;
            for j in 0..d {
                let i = rem % counts[j];
                rem /= counts[j];
                data.push(axis_point(lower[j], upper[j], i, counts[j]));
            }
        }
        Ok(Grid { points: Points::new(data, d)?, counts, lower, upper })
    }

    /// The grid with `counts` over the bounding box of an interval or box
    /// domain.
    pub fn over(domain: &Domain, counts: Vec<usize>) -> Result<Self> {
        match domain {
            Domain::Interval { .. } | Domain::Box { .. } => {
                let (lo, hi) = domain.bounding_box();
                if counts.len() != lo.len() {
                    return Err(Error::Dimension(format!(
                        "{} grid counts for the {}-D domain {domain}",
                        counts.len(),
                        lo.len()
                    )));
                }
                Grid::new(lo, hi, counts)
            }
            _ => Err(Error::Unsupported(format!(
                "a grid query needs an interval or box domain (the domain is {domain}); give the query points instead"
            ))),
        }
    }

    /// Parses "N" or "N1xN2" and builds the grid over `domain`.
    pub fn parse(spec: &str, domain: &Domain) -> Result<Self> {
        Grid::over(domain, parse_counts(spec, domain.dim(), "grid")?)
    }

    /// Points per axis.
    pub fn counts(&self) -> &[usize] {
        &self.counts
    }

    /// Lower corner.
    pub fn lower(&self) -> &[f64] {
        &self.lower
    }

    /// Upper corner.
    pub fn upper(&self) -> &[f64] {
        &self.upper
    }

    /// The grid points (x1 fastest).
    pub fn points(&self) -> &Points {
        &self.points
    }
}

/// Point i of `count` equally spaced points from `lo` to `hi`: exactly `lo`
/// at i = 0 and exactly `hi` at i = count − 1.
pub(crate) fn axis_point(lo: f64, hi: f64, i: usize, count: usize) -> f64 {
    if i + 1 == count { hi } else { lo + (hi - lo) * i as f64 / (count - 1) as f64 }
}

/// The points a release is evaluated at.
#[derive(Debug, Clone, PartialEq)]
pub enum Query {
    /// A regular grid (maps).
    Grid(Grid),
    /// Arbitrary points.
    Points(Points),
}

impl Query {
    /// The points, in order.
    pub fn points(&self) -> &Points {
        match self {
            Query::Grid(g) => g.points(),
            Query::Points(p) => p,
        }
    }

    /// Dimension d.
    pub fn dim(&self) -> usize {
        self.points().dim()
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.points().len()
    }

    /// No points.
    pub fn is_empty(&self) -> bool {
        self.points().is_empty()
    }

    /// How many query points lie outside `domain`. The released path is a
    /// function on the whole space and the guarantee covers its values
    /// anywhere; the data, however, only describe the domain.
    pub fn count_outside(&self, domain: &Domain) -> usize {
        self.points().iter().filter(|p| !domain.contains(p)).count()
    }

    /// The public description of the query for reports.
    pub fn summary(&self) -> QuerySummary {
        match self {
            Query::Grid(g) => QuerySummary {
                kind: "grid",
                points: g.points.len(),
                counts: Some(g.counts.clone()),
                lower: Some(g.lower.clone()),
                upper: Some(g.upper.clone()),
                order: Some("x1 varies fastest"),
            },
            Query::Points(p) => {
                QuerySummary { kind: "points", points: p.len(), counts: None, lower: None, upper: None, order: None }
            }
        }
    }
}

/// What a report says about the query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuerySummary {
    /// "grid" or "points".
    pub kind: &'static str,
    /// Number of points.
    pub points: usize,
    /// Grid points per axis.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Vec<usize>>,
    /// Grid lower corner.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lower: Option<Vec<f64>>,
    /// Grid upper corner.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upper: Option<Vec<f64>>,
    /// Order of the grid points.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<&'static str>,
}

/// A public declaration that every private covariate lies on the regular
/// lattice of `counts[j]` points per axis over the bounding box of the
/// domain (end points included) — e.g. sensors placed on a survey grid, or
/// coordinates rounded to a fixed resolution. It lets the mechanism choose
/// the exact lattice sampler without looking at the data; data that break
/// the declaration are refused, never silently served by another sampler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CovariateLattice {
    counts: Vec<usize>,
    /// Snap every covariate to its nearest node (any distance), instead of
    /// refusing covariates off the lattice.
    snap: bool,
}

impl CovariateLattice {
    /// A lattice with `counts[j]` ≥ 2 points per axis.
    pub fn new(counts: Vec<usize>) -> Result<Self> {
        if counts.is_empty() || counts.iter().any(|&c| c < 2) {
            return Err(Error::InvalidParameter {
                name: "covariate lattice",
                value: format!("{counts:?}"),
                requirement: "at least 2 points on every axis",
            });
        }
        Ok(CovariateLattice { counts, snap: false })
    }

    /// The same lattice, but every covariate is rounded to its nearest node
    /// before the mechanism (docs/proofs/snapping.md): a per-record public
    /// transformation, so the guarantee holds for the original data; the
    /// location error is at most half the diagonal of a lattice cell.
    pub fn snapping(counts: Vec<usize>) -> Result<Self> {
        Ok(CovariateLattice { snap: true, ..CovariateLattice::new(counts)? })
    }

    /// The snapping lattice of spacing `h` (the same on every axis) over the
    /// box [lo, hi]: each side must be a multiple of h (to 10⁻⁹ relative).
    pub fn snapping_with_spacing(h: f64, lo: &[f64], hi: &[f64]) -> Result<Self> {
        crate::error::positive("snap spacing h", h)?;
        let mut counts = Vec::with_capacity(lo.len());
        for (j, (&a, &b)) in lo.iter().zip(hi).enumerate() {
            let steps = (b - a) / h;
            let k = steps.round();
            if !(k >= 1.0) || (steps - k).abs() > 1e-9 * steps.max(1.0) || k > 1e8 {
                return Err(Error::Setting {
                    name: "snap spacing h",
                    value: crate::error::fmt_value(h),
                    reason: format!(
                        "must divide the domain's side on axis {} (length {}, giving {steps:.6} steps), with at most 10⁸ steps",
                        j + 1,
                        b - a
                    ),
                });
            }
            counts.push(k as usize + 1);
        }
        CovariateLattice::snapping(counts)
    }

    /// Whether covariates are snapped to the nearest node (else they must lie on it).
    pub fn snaps(&self) -> bool {
        self.snap
    }

    /// Parses "N" or "N1xN2" for a domain of dimension `dim`.
    pub fn parse(spec: &str, dim: usize) -> Result<Self> {
        CovariateLattice::new(parse_counts(spec, dim, "covariate lattice")?)
    }

    /// Points per axis.
    pub fn counts(&self) -> &[usize] {
        &self.counts
    }

    /// Dimension.
    pub fn dim(&self) -> usize {
        self.counts.len()
    }
}

impl fmt::Display for CovariateLattice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s: Vec<String> = self.counts.iter().map(|c| c.to_string()).collect();
        f.write_str(&s.join("x"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_include_end_points_and_order_x1_fastest() {
        let d: Domain = "box:0,1,-1,1".parse().unwrap();
        let g = Grid::parse("3x2", &d).unwrap();
        assert_eq!(g.counts(), &[3, 2]);
        let p = g.points();
        assert_eq!(p.len(), 6);
        assert_eq!(p.row(0), &[0.0, -1.0]);
        assert_eq!(p.row(1), &[0.5, -1.0]);
        assert_eq!(p.row(2), &[1.0, -1.0]);
        assert_eq!(p.row(5), &[1.0, 1.0]);
        assert_eq!(Grid::parse("4", &d).unwrap().counts(), &[4, 4]);
        // The last point is exactly the upper end even when (hi − lo)·i/(n−1) rounds.
        let g = Grid::new(vec![0.1], vec![0.7], vec![7]).unwrap();
        assert_eq!(g.points().row(6), &[0.7]);
    }

    #[test]
    fn bad_grids_are_refused_with_reasons() {
        let d: Domain = "box:0,1,0,1".parse().unwrap();
        for (spec, needle) in [("1", "at least 2"), ("3x4x5", "one count or 2 counts"), ("ax3", "'a' is not a count")] {
            let e = Grid::parse(spec, &d).unwrap_err().to_string();
            assert!(e.contains(needle), "{spec}: {e}");
        }
        assert!(matches!(Grid::parse("3000", &d), Err(Error::TooLarge(_))));
        let ball: Domain = "ball:0,0,1".parse().unwrap();
        assert!(Grid::parse("10", &ball).unwrap_err().to_string().contains("interval or box"));
        assert!(Grid::new(vec![1.0], vec![0.0], vec![3]).is_err());
        assert!(CovariateLattice::parse("1", 2).is_err());
        assert_eq!(CovariateLattice::parse("239", 2).unwrap().counts(), &[239, 239]);
        assert_eq!(CovariateLattice::parse("5x7", 2).unwrap().to_string(), "5x7");
    }
}
