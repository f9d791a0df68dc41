//! Covariate domains Ω ⊂ R^d: where the private covariates may lie.
//!
//! The domain enters the privacy guarantee through κ = inf_{x,x'∈Ω} k(x, x')
//! (Proposition 3, docs/bounds.md): for a stationary kernel whose profile decreases
//! with distance, κ = k(diam Ω). Covariates outside the declared domain void
//! the guarantee, so a release must refuse them ([`Domain::contains`]).

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result, fmt_value};
use crate::model::points::Points;

/// A bounded covariate domain.
#[derive(Debug, Clone, PartialEq)]
pub enum Domain {
    /// The closed interval [lo, hi] ⊂ R.
    Interval {
        /// Lower end.
        lo: f64,
        /// Upper end.
        hi: f64,
    },
    /// The closed axis-aligned box Π_j [lo_j, hi_j] ⊂ R^d.
    Box {
        /// Lower corner.
        lo: Vec<f64>,
        /// Upper corner.
        hi: Vec<f64>,
    },
    /// The closed Euclidean ball {x : ‖x − centre‖ ≤ radius}.
    Ball {
        /// Centre.
        centre: Vec<f64>,
        /// Radius (> 0).
        radius: f64,
    },
    /// A finite set of admissible points.
    Points(Points),
}

/// The largest coordinate magnitude a domain may have: beyond it, squared
/// distances between its points (and so the diameter, κ and the Gram
/// matrix) would overflow. Rescale the covariates (e.g. to km) instead.
pub const MAX_COORDINATE: f64 = 1e150;

fn check_magnitude(what: &str, v: f64) -> Result<()> {
    if v.abs() <= MAX_COORDINATE {
        Ok(())
    } else {
        Err(Error::Domain(format!(
            "{what} ({}) exceeds 1e150 in magnitude: squared distances would overflow; rescale the covariates",
            fmt_value(v)
        )))
    }
}

impl Domain {
    /// The closed interval [lo, hi]; requires finite lo < hi, both at most
    /// [`MAX_COORDINATE`] in magnitude.
    pub fn interval(lo: f64, hi: f64) -> Result<Self> {
        if !(lo.is_finite() && hi.is_finite()) || lo >= hi {
            return Err(Error::Domain(format!("interval bounds ({lo}, {hi}) must be finite with lower < upper")));
        }
        check_magnitude("interval bound", lo)?;
        check_magnitude("interval bound", hi)?;
        Ok(Domain::Interval { lo, hi })
    }

    /// The closed box with corners `lo` and `hi`; requires finite lo_j < hi_j,
    /// all at most [`MAX_COORDINATE`] in magnitude.
    pub fn cuboid(lo: Vec<f64>, hi: Vec<f64>) -> Result<Self> {
        if lo.is_empty() || lo.len() != hi.len() {
            return Err(Error::Domain(format!(
                "box needs the same positive number of lower and upper bounds (got {} and {})",
                lo.len(),
                hi.len()
            )));
        }
        for (j, (a, b)) in lo.iter().zip(&hi).enumerate() {
            if !(a.is_finite() && b.is_finite()) || a >= b {
                return Err(Error::Domain(format!(
                    "box side {} has bounds ({a}, {b}); they must be finite with lower < upper",
                    j + 1
                )));
            }
            check_magnitude(&format!("box side {} bound", j + 1), *a)?;
            check_magnitude(&format!("box side {} bound", j + 1), *b)?;
        }
        Ok(Domain::Box { lo, hi })
    }

    /// The closed ball; requires a finite centre and a finite radius > 0, the
    /// ball within [`MAX_COORDINATE`] of the origin on every axis.
    pub fn ball(centre: Vec<f64>, radius: f64) -> Result<Self> {
        if centre.is_empty() || centre.iter().any(|c| !c.is_finite()) {
            return Err(Error::Domain("ball centre must have at least one coordinate, all finite".into()));
        }
        if !(radius.is_finite() && radius > 0.0) {
            return Err(Error::Domain(format!("ball radius ({radius}) must be finite and > 0")));
        }
        for c in &centre {
            check_magnitude("ball centre coordinate ± radius", c.abs() + radius)?;
        }
        Ok(Domain::Ball { centre, radius })
    }

    /// A finite set of admissible points (at least one, all finite).
    pub fn finite(points: Points) -> Result<Self> {
        if points.is_empty() {
            return Err(Error::Domain("a finite domain needs at least one point".into()));
        }
        if let Some(i) = (0..points.len()).find(|&i| points.row(i).iter().any(|v| !v.is_finite())) {
            return Err(Error::Domain(format!("domain point {} is not finite", i + 1)));
        }
        for v in points.as_slice() {
            check_magnitude("domain point coordinate", *v)?;
        }
        Ok(Domain::Points(points))
    }

    /// The dimension d of the ambient space R^d.
    pub fn dim(&self) -> usize {
        match self {
            Domain::Interval { .. } => 1,
            Domain::Box { lo, .. } => lo.len(),
            Domain::Ball { centre, .. } => centre.len(),
            Domain::Points(p) => p.dim(),
        }
    }

    /// Whether `x` (of length d) lies in the closed domain. No tolerance is
    /// applied: a point outside by any amount is outside.
    pub fn contains(&self, x: &[f64]) -> bool {
        if x.len() != self.dim() || x.iter().any(|v| !v.is_finite()) {
            return false;
        }
        match self {
            Domain::Interval { lo, hi } => *lo <= x[0] && x[0] <= *hi,
            Domain::Box { lo, hi } => x.iter().zip(lo.iter().zip(hi)).all(|(v, (a, b))| a <= v && v <= b),
            Domain::Ball { centre, radius } => {
                let d2: f64 = x.iter().zip(centre).map(|(a, b)| (a - b) * (a - b)).sum();
                d2 <= radius * radius
            }
            Domain::Points(p) => (0..p.len()).any(|i| p.row(i) == x),
        }
    }

    /// The Euclidean diameter sup_{x,x'∈Ω} ‖x − x'‖.
    pub fn diameter(&self) -> f64 {
        match self {
            Domain::Interval { lo, hi } => hi - lo,
            Domain::Box { lo, hi } => lo.iter().zip(hi).map(|(a, b)| (b - a) * (b - a)).sum::<f64>().sqrt(),
            Domain::Ball { radius, .. } => 2.0 * radius,
            Domain::Points(p) => {
                let mut best = 0.0f64;
                for i in 0..p.len() {
                    for j in 0..i {
                        best = best.max(crate::model::points::distance_unchecked(p.row(i), p.row(j)));
                    }
                }
                best
            }
        }
    }

    /// Whether the domain has more than one point (so that distinct
    /// neighbouring covariates exist).
    pub fn is_singleton(&self) -> bool {
        matches!(self, Domain::Points(p) if (1..p.len()).all(|i| p.row(i) == p.row(0)))
    }

    /// The bounding box (lower, upper corners), used for grids and plots.
    pub fn bounding_box(&self) -> (Vec<f64>, Vec<f64>) {
        match self {
            Domain::Interval { lo, hi } => (vec![*lo], vec![*hi]),
            Domain::Box { lo, hi } => (lo.clone(), hi.clone()),
            Domain::Ball { centre, radius } => {
                (centre.iter().map(|c| c - radius).collect(), centre.iter().map(|c| c + radius).collect())
            }
            Domain::Points(p) => {
                let d = p.dim();
                let mut lo = vec![f64::INFINITY; d];
                let mut hi = vec![f64::NEG_INFINITY; d];
                for i in 0..p.len() {
                    for (j, v) in p.row(i).iter().enumerate() {
                        lo[j] = lo[j].min(*v);
                        hi[j] = hi[j].max(*v);
                    }
                }
                (lo, hi)
            }
        }
    }
}

fn parse_numbers(kind: &str, body: &str) -> Result<Vec<f64>> {
    body.split(',')
        .map(|s| {
            let t = s.trim();
            t.parse::<f64>().map_err(|_| Error::Domain(format!("{kind}: '{t}' is not a number")))
        })
        .collect()
}

impl FromStr for Domain {
    type Err = Error;

    /// Parses `interval:a,b`, `box:a1,b1,a2,b2,…` or `ball:c1,…,cd,radius`.
    fn from_str(s: &str) -> Result<Self> {
        let usage = "expected interval:a,b | box:a1,b1,a2,b2,... | ball:c1,...,cd,radius";
        let (kind, body) =
            s.split_once(':').ok_or_else(|| Error::Domain(format!("'{s}' has no kind prefix; {usage}")))?;
        let kind = kind.trim().to_ascii_lowercase();
        match kind.as_str() {
            "interval" => {
                let v = parse_numbers("interval", body)?;
                if v.len() != 2 {
                    return Err(Error::Domain(format!("interval needs exactly 2 numbers a,b (got {})", v.len())));
                }
                Domain::interval(v[0], v[1])
            }
            "box" => {
                let v = parse_numbers("box", body)?;
                if v.is_empty() || v.len() % 2 != 0 {
                    return Err(Error::Domain(format!("box needs pairs a1,b1,a2,b2,... (got {} numbers)", v.len())));
                }
                let lo = v.iter().step_by(2).copied().collect();
                let hi = v.iter().skip(1).step_by(2).copied().collect();
                Domain::cuboid(lo, hi)
            }
            "ball" => {
                let mut v = parse_numbers("ball", body)?;
                if v.len() < 2 {
                    return Err(Error::Domain(format!(
                        "ball needs a centre and a radius c1,...,cd,radius (got {} numbers)",
                        v.len()
                    )));
                }
                let radius = v.pop().unwrap_or(f64::NAN);
                Domain::ball(v, radius)
            }
            other => Err(Error::Domain(format!("unknown domain kind '{other}'; {usage}"))),
        }
    }
}

impl fmt::Display for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let join = |v: &[f64]| v.iter().map(|x| format!("{x}")).collect::<Vec<_>>().join(",");
        match self {
            Domain::Interval { lo, hi } => write!(f, "interval:{lo},{hi}"),
            Domain::Box { lo, hi } => {
                let v: Vec<f64> = lo.iter().zip(hi).flat_map(|(a, b)| [*a, *b]).collect();
                write!(f, "box:{}", join(&v))
            }
            Domain::Ball { centre, radius } => write!(f, "ball:{},{radius}", join(centre)),
            Domain::Points(p) => write!(f, "points:{}x{}", p.len(), p.dim()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_measures() {
        let i: Domain = "interval:0,1".parse().unwrap();
        assert_eq!(i.dim(), 1);
        assert_eq!(i.diameter(), 1.0);
        assert!(i.contains(&[0.0]) && i.contains(&[1.0]) && !i.contains(&[1.0 + 1e-15]));

        let b: Domain = "box:0,1,0,1".parse().unwrap();
        assert_eq!(b.dim(), 2);
        assert!((b.diameter() - 2f64.sqrt()).abs() < 1e-15);
        assert!(b.contains(&[1.0, 0.0]) && !b.contains(&[0.5, -0.1]) && !b.contains(&[0.5]));

        let c: Domain = "ball:0,0,0,2".parse().unwrap();
        assert_eq!(c.dim(), 3);
        assert_eq!(c.diameter(), 4.0);
        assert!(c.contains(&[2.0, 0.0, 0.0]) && !c.contains(&[1.5, 1.5, 0.0]));

        let p = Domain::finite(Points::new(vec![0.0, 0.0, 3.0, 4.0, 1.0, 1.0], 2).unwrap()).unwrap();
        assert_eq!(p.diameter(), 5.0);
        assert!(p.contains(&[3.0, 4.0]) && !p.contains(&[3.0, 4.5]));
        assert_eq!(format!("{b}"), "box:0,1,0,1");
        assert_eq!("ball:1,2,0.5".parse::<Domain>().unwrap().to_string(), "ball:1,2,0.5");
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            "interval:1,0",
            "interval:0",
            "interval:0,x",
            "interval:0,inf",
            "box:0,1,2",
            "box:0,1,1,1",
            "ball:1",
            "ball:0,0,-1",
            "square:0,1",
            "0,1",
            "interval:NaN,1",
            // Found by fuzzing: a diameter that overflows (here ∞ for a box).
            "box:11,3e166",
            "interval:-1e308,1e308",
            "ball:0,1e308",
            "ball:1e150,1e140",
        ] {
            let e = bad.parse::<Domain>().unwrap_err();
            assert!(matches!(e, Error::Domain(_)), "{bad}: {e}");
        }
        let e = "box:0,1,0,1e151".parse::<Domain>().unwrap_err().to_string();
        assert!(e.contains("box side 2 bound (1e151) exceeds 1e150"), "{e}");
    }

    #[test]
    fn the_largest_domains_have_finite_diameters() {
        let d = 1000;
        let spec = format!("box:{}", vec!["-1e150,1e150"; d].join(","));
        let big: Domain = spec.parse().unwrap();
        let want = 2e150 * (d as f64).sqrt();
        assert!((big.diameter() - want).abs() <= 1e-12 * want, "{}", big.diameter());
        assert_eq!("ball:0,0,1e150".parse::<Domain>().unwrap().diameter(), 2e150);
        assert_eq!("interval:-1e150,1e150".parse::<Domain>().unwrap().diameter(), 2e150);
    }
}
