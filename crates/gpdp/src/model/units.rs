//! Responses in data units: a public response range [lo, hi] (e.g. µg/m³)
//! mapped onto the mechanism's [−1, 1] (M_Y = 1), and the released values
//! mapped back.
//!
//! ```text
//! y ↦ (2y − lo − hi)/(hi − lo)          (data units → [−1, 1] on [lo, hi])
//! v ↦ (lo + hi)/2 + v·(hi − lo)/2       (released value → data units)
//! ```
//!
//! Both maps are affine with public coefficients. The first is a per-record
//! transformation of the responses before the mechanism (so clipping to
//! [−1, 1] is clipping to [lo, hi]); the second is post-processing of the
//! released draws. Neither changes the guarantee. A threshold t in data
//! units thresholds the mapped-back path exactly as (2t − lo − hi)/(hi − lo)
//! thresholds the internal one.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A public response range [lo, hi], lo < hi, both finite.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ResponseRange {
    /// Lower end, in data units.
    pub lo: f64,
    /// Upper end, in data units.
    pub hi: f64,
}

impl ResponseRange {
    /// Requires finite lo < hi (and a finite width).
    pub fn new(lo: f64, hi: f64) -> Result<Self> {
        if !(lo.is_finite() && hi.is_finite() && lo < hi && (hi - lo).is_finite()) {
            return Err(Error::Setting {
                name: "response range",
                value: format!("{lo},{hi}"),
                reason: "needs finite LO < HI (the plausible range of the responses, in data units)".into(),
            });
        }
        Ok(ResponseRange { lo, hi })
    }

    /// The centre (lo + hi)/2.
    pub fn mid(&self) -> f64 {
        0.5 * self.lo + 0.5 * self.hi
    }

    /// The half-width (hi − lo)/2.
    pub fn half(&self) -> f64 {
        0.5 * (self.hi - self.lo)
    }

    /// A response in data units onto the internal scale ([lo, hi] → [−1, 1]).
    pub fn to_internal(&self, y: f64) -> f64 {
        (y - self.mid()) / self.half()
    }

    /// A released value back into data units.
    pub fn to_data(&self, v: f64) -> f64 {
        self.mid() + v * self.half()
    }
}

/// The scale of the responses — a required public choice of every release
/// (`MechanismParams::new`): either the bound M_Y on |y| in the units the
/// responses are given in, or a response range [lo, hi] in data units mapped
/// onto [−1, 1] (then M_Y = 1).
///
/// There is no default: a default of M_Y = 1 silently clipped data given in
/// real units (readings of 2–64 µg/m³ all clipped to ±1), and refusing a
/// release because many values were clipped would make the refusal depend
/// on the private data. Requiring the public choice does not.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ResponseScale {
    /// |y| ≤ M_Y in the units of the data (M_Y > 0, finite).
    Bound(f64),
    /// Responses in data units, with the public plausible range [lo, hi].
    Range(ResponseRange),
}

impl ResponseScale {
    /// The bound M_Y the mechanism uses internally (1 for a range).
    pub fn bound(&self) -> f64 {
        match self {
            ResponseScale::Bound(m) => *m,
            ResponseScale::Range(_) => 1.0,
        }
    }

    /// The range, if the responses are in data units.
    pub fn range(&self) -> Option<ResponseRange> {
        match self {
            ResponseScale::Bound(_) => None,
            ResponseScale::Range(r) => Some(*r),
        }
    }
}

/// What σ and η mean for a release with this response scale
/// (docs/model.md, "The response scale, σ and the prior mean"): the release
/// is a GP posterior with prior mean `prior_mean` and prior sd σ·`sigma_unit`
/// in data units.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ScaleMeaning {
    /// The prior mean the released map reverts to away from the data, in
    /// data units: the middle of the range, or 0 under a bound.
    pub prior_mean: f64,
    /// Data units per unit of σ and η: the range's half-width, or 1 under a
    /// bound (σ is then in data units).
    pub sigma_unit: f64,
    /// The same in words, with the given σ.
    pub note: String,
}

impl ResponseScale {
    /// What σ (and η) mean at this scale ([`ScaleMeaning`]), for a release
    /// with kernel scale `sigma` and the unit label `units`.
    pub fn meaning(&self, sigma: f64, units: &str) -> ScaleMeaning {
        let u = if units.is_empty() { String::new() } else { format!(" {units}") };
        match self {
            ResponseScale::Range(r) => ScaleMeaning {
                prior_mean: r.mid(),
                sigma_unit: r.half(),
                note: format!(
                    "σ and η are in units of the response range's half-width ({}{u}): σ = {} is a prior sd of {}{u} around the prior mean {}{u}, the range's middle",
                    r.half(),
                    sigma,
                    sigma * r.half(),
                    r.mid()
                ),
            },
            ResponseScale::Bound(m) => ScaleMeaning {
                prior_mean: 0.0,
                sigma_unit: 1.0,
                note: format!(
                    "σ and η are in data units (under a response bound M_Y = {m}{u}): σ = {sigma} is a prior sd of {sigma}{u} around the prior mean 0"
                ),
            },
        }
    }

    /// Warnings from public inputs only about a σ that makes the map
    /// degenerate at this scale: under a bound, σ below 5% of M_Y (the map
    /// is shrunk towards the prior mean 0 — with a range the same σ would
    /// mean σ half-widths); with a range, σ below 0.02 or above 50
    /// half-widths.
    pub fn sigma_warnings(&self, sigma: f64, units: &str) -> Vec<String> {
        let u = if units.is_empty() { String::new() } else { format!(" {units}") };
        let mut w = Vec::new();
        if !sigma.is_finite() || sigma <= 0.0 {
            return w;
        }
        match self {
            ResponseScale::Bound(m) if sigma < 0.05 * m => w.push(format!(
                "σ = {sigma} is in data units under --response-bound (the prior sd of f), only {:.3} of M_Y = {m}{u}: the map will be shrunk towards the prior mean 0 wherever the data do not pin it — give σ on the data's scale (e.g. --scale {}), or --response-range LO,HI, under which σ is in half-widths and the prior mean is the range's middle",
                sigma / m,
                0.5 * m
            )),
            ResponseScale::Range(r) if sigma < 0.02 => w.push(format!(
                "σ = {sigma} is in units of the response range's half-width ({}{u}), i.e. a prior sd of only {}{u}: the map will be nearly the prior mean {}{u} everywhere — σ of order 0.1–1 half-widths is usual",
                r.half(),
                sigma * r.half(),
                r.mid()
            )),
            ResponseScale::Range(r) if sigma > 50.0 => w.push(format!(
                "σ = {sigma} is in units of the response range's half-width ({}{u}), i.e. a prior sd of {}{u}, far beyond the range — σ of order 0.1–1 half-widths is usual",
                r.half(),
                sigma * r.half()
            )),
            _ => {}
        }
        w
    }
}

impl FromStr for ResponseRange {
    type Err = Error;
    /// "LO,HI".
    fn from_str(s: &str) -> Result<Self> {
        let bad = |reason: &str| Error::Setting { name: "response range", value: s.to_string(), reason: reason.into() };
        let (a, b) = s.split_once(',').ok_or_else(|| bad("expected LO,HI, e.g. 0,60"))?;
        let lo: f64 = a.trim().parse().map_err(|_| bad("LO is not a number"))?;
        let hi: f64 = b.trim().parse().map_err(|_| bad("HI is not a number"))?;
        ResponseRange::new(lo, hi)
    }
}

impl fmt::Display for ResponseRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {}]", self.lo, self.hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_the_range_onto_the_unit_interval_and_back() {
        let r: ResponseRange = "0, 60".parse().unwrap();
        assert_eq!((r.to_internal(0.0), r.to_internal(30.0), r.to_internal(60.0)), (-1.0, 0.0, 1.0));
        assert!((r.to_internal(25.0) - (-1.0 / 6.0)).abs() < 1e-15);
        for v in [-1.3, -1.0, 0.2, 1.0, 4.0] {
            assert!((r.to_internal(r.to_data(v)) - v).abs() < 1e-14);
        }
        for bad in ["5,5", "6,1", "a,2", "1", "nan,2", "-1e308,1e308"] {
            assert!(bad.parse::<ResponseRange>().is_err(), "{bad}");
        }
    }
}
