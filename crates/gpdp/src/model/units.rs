//! Responses in data units: a public response range [lo, hi] (e.g. µg/m³)
//! centred on its middle and bounded by its half-width, and the released
//! values shifted back.
//!
//! ```text
//! y ↦ y − (lo + hi)/2                  (data units → centred data units)
//! M_Y = (hi − lo)/2                     (the bound the clip policy uses)
//! v ↦ v + (lo + hi)/2                  (released value → data units)
//! ```
//!
//! The responses stay in data units: only the origin moves, so σ and η are
//! in data units under `--response-range` exactly as under
//! `--response-bound` (docs/model.md, "The response scale, σ and the prior
//! mean"), and `Range(−M, M)` is the same mechanism as `Bound(M)`. Both maps
//! are shifts by a public constant: the first is a per-record transformation
//! of the responses before the mechanism (so clipping to [−M_Y, M_Y] is
//! clipping to [lo, hi]); the second is post-processing of the released
//! draws. Neither changes the guarantee. A threshold t in data units
//! thresholds the shifted-back path exactly as t − (lo + hi)/2 thresholds
//! the internal one.

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

    /// A response in data units as the mechanism sees it: centred on the
    /// range's middle, y − (lo + hi)/2 (still in data units; [lo, hi] →
    /// [−M_Y, M_Y] with M_Y the half-width).
    pub fn to_internal(&self, y: f64) -> f64 {
        y - self.mid()
    }

    /// [`Self::to_internal`] clipped to [−M_Y, M_Y], as the release's clip
    /// policy clips it (a response outside [lo, hi] becomes the nearer end).
    pub fn clip(&self, y: f64) -> f64 {
        let h = self.half();
        self.to_internal(y).clamp(-h, h)
    }

    /// A released (internal) value back into data units: v + (lo + hi)/2.
    pub fn to_data(&self, v: f64) -> f64 {
        v + self.mid()
    }
}

/// The scale of the responses — a required public choice of every release
/// (`MechanismParams::new`): either the bound M_Y on |y| in the units the
/// responses are given in, or a response range [lo, hi] in data units,
/// centred on its middle (then M_Y is its half-width). Under both, σ and η
/// are in the responses' units.
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
    /// The bound M_Y the mechanism uses internally (a range's half-width).
    pub fn bound(&self) -> f64 {
        match self {
            ResponseScale::Bound(m) => *m,
            ResponseScale::Range(r) => r.half(),
        }
    }

    /// The prior mean of the released map, in data units: a range's middle,
    /// or 0 under a bound.
    pub fn prior_mean(&self) -> f64 {
        match self {
            ResponseScale::Bound(_) => 0.0,
            ResponseScale::Range(r) => r.mid(),
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
/// is a GP posterior with prior mean `prior_mean` and prior sd σ in data
/// units.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ScaleMeaning {
    /// The prior mean the released map reverts to away from the data, in
    /// data units: the middle of the range, or 0 under a bound.
    pub prior_mean: f64,
    /// Data units per unit of σ and η: 1 under both response flags (σ and η
    /// are in the responses' units). Kept in the report so that a reader of
    /// an older report, where a range made it the half-width, can tell.
    pub sigma_unit: f64,
    /// The same in words, with the given σ.
    pub note: String,
}

impl ResponseScale {
    /// What σ (and η) mean at this scale ([`ScaleMeaning`]), for a release
    /// with kernel scale `sigma` and the unit label `units`.
    pub fn meaning(&self, sigma: f64, units: &str) -> ScaleMeaning {
        let u = if units.is_empty() { String::new() } else { format!(" {units}") };
        let around = match self {
            ResponseScale::Range(r) => {
                format!("the prior mean {}{u} (the middle of the response range [{}, {}]{u})", r.mid(), r.lo, r.hi)
            }
            ResponseScale::Bound(m) => format!("the prior mean 0 (under a response bound M_Y = {m}{u})"),
        };
        ScaleMeaning {
            prior_mean: self.prior_mean(),
            sigma_unit: 1.0,
            note: format!(
                "σ and η are in the responses' units: σ = {sigma} is a prior sd of {sigma}{u} around {around}"
            ),
        }
    }

    /// Warnings from public inputs only about a σ that makes the map
    /// degenerate at this scale (M_Y: the bound, or the range's half-width):
    /// σ below 5% of M_Y (the map is shrunk towards the prior mean wherever
    /// the data do not pin it), or above 50 M_Y (a prior sd far beyond any
    /// response the mechanism can see).
    pub fn sigma_warnings(&self, sigma: f64, units: &str) -> Vec<String> {
        let u = if units.is_empty() { String::new() } else { format!(" {units}") };
        let mut w = Vec::new();
        if !sigma.is_finite() || sigma <= 0.0 {
            return w;
        }
        let m = self.bound();
        let (what, mean) = match self {
            ResponseScale::Range(r) => (format!("the response range's half-width {m}{u}"), format!("{}{u}", r.mid())),
            ResponseScale::Bound(_) => (format!("M_Y = {m}{u}"), format!("0{u}")),
        };
        if sigma < 0.05 * m {
            let range_hint = match self {
                ResponseScale::Bound(_) => {
                    " (and, for responses far from 0, --response-range LO,HI, whose middle is the prior mean)"
                }
                ResponseScale::Range(_) => "",
            };
            w.push(format!(
                "σ = {sigma}{u} (the prior sd of f, in the responses' units) is only {:.3} of {what}: the map will be shrunk towards the prior mean {mean} wherever the data do not pin it — give σ on the data's scale, e.g. --scale {}{range_hint}",
                sigma / m,
                0.5 * m
            ));
        } else if sigma > 50.0 * m {
            w.push(format!(
                "σ = {sigma}{u} (the prior sd of f, in the responses' units) is {:.0} times {what}, far beyond any response the mechanism sees — σ of order 0.1–1 times {what} is usual",
                sigma / m
            ));
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
    fn centres_the_range_and_shifts_back() {
        let r: ResponseRange = "0, 60".parse().unwrap();
        assert_eq!((r.to_internal(0.0), r.to_internal(30.0), r.to_internal(60.0)), (-30.0, 0.0, 30.0));
        assert_eq!((r.clip(-5.0), r.clip(25.0), r.clip(75.0)), (-30.0, -5.0, 30.0));
        assert_eq!(ResponseScale::Range(r).bound(), 30.0);
        for v in [-41.3, -30.0, 0.2, 30.0, 104.0] {
            assert!((r.to_internal(r.to_data(v)) - v).abs() < 1e-12);
        }
        for bad in ["5,5", "6,1", "a,2", "1", "nan,2", "-1e308,1e308"] {
            assert!(bad.parse::<ResponseRange>().is_err(), "{bad}");
        }
    }

    #[test]
    fn sigma_warnings_are_in_data_units_under_both_flags() {
        let range = ResponseScale::Range(ResponseRange::new(0.0, 60.0).unwrap());
        let bound = ResponseScale::Bound(30.0);
        for scale in [range, bound] {
            let tiny = scale.sigma_warnings(1.0, "µg/m³");
            assert_eq!(tiny.len(), 1, "{tiny:?}");
            assert!(tiny[0].contains("only 0.033 of") && tiny[0].contains("--scale 15"), "{}", tiny[0]);
            assert!(scale.sigma_warnings(10.0, "µg/m³").is_empty());
            assert!(scale.sigma_warnings(1400.0, "").is_empty());
            assert!(scale.sigma_warnings(1600.0, "")[0].contains("53 times"));
            assert_eq!(scale.meaning(10.0, "").sigma_unit, 1.0);
        }
        assert!(range.sigma_warnings(1.0, "")[0].contains("prior mean 30"));
        assert!(bound.sigma_warnings(1.0, "")[0].contains("--response-range LO,HI"));
        assert!(!range.sigma_warnings(1.0, "")[0].contains("--response-range"));
        assert_eq!(range.meaning(10.0, "µg/m³").prior_mean, 30.0);
        assert!(range.meaning(10.0, "µg/m³").note.contains("prior sd of 10 µg/m³"));
    }
}
