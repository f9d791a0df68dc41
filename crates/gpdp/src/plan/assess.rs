//! Whether a planned map is worth publishing (docs/plan.md, "Reading a
//! plan"): the smallest planned ε whose simulated utility comes within a
//! stated fraction of the non-private posterior mean's, and warnings when
//! the private map is no better than a constant one, never reaches the
//! excursion level, or is shrunk towards a prior mean far from the data.
//!
//! Everything here is a function of the plan (public or proxy data only).

use serde::{Deserialize, Serialize};

use super::utility::Utility;
use crate::model::units::ResponseRange;

/// What a plan's utility curve says about the map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assessment {
    /// The fraction f of the criteria below.
    pub within: f64,
    /// The smallest planned ε (the release's, not the target) whose mean
    /// hold-out RMSE is at most (1 + f) × the non-private mean's.
    pub rmse_epsilon: Option<f64>,
    /// The smallest planned ε whose mean IoU is at least (1 − f) × the
    /// non-private mean's.
    pub iou_epsilon: Option<f64>,
    /// Planned ε whose mean RMSE is not below the constant map's.
    pub no_better_than_constant: Vec<f64>,
    /// Plain-language warnings, each naming what to change.
    pub warnings: Vec<String>,
}

/// Assesses `u` (in the plan's order of targets). `within` is the fraction
/// f ∈ (0, 1) of the criteria; `threshold` the excursion level t and `units`
/// the data's unit, both for the messages only.
pub fn assess(u: &Utility, within: f64, threshold: f64, units: &str) -> Assessment {
    let mut pts: Vec<_> = u.points.iter().collect();
    pts.sort_by(|a, b| a.epsilon.total_cmp(&b.epsilon));
    let rmse_epsilon =
        pts.iter().find(|p| p.holdout_rmse.mean <= (1.0 + within) * u.baseline_rmse.mean).map(|p| p.epsilon);
    let iou_epsilon =
        pts.iter().find(|p| p.excursion_iou.mean >= (1.0 - within) * u.baseline_iou.mean).map(|p| p.epsilon);
    let mut warnings = Vec::new();
    let mut no_better = Vec::new();
    if let Some(c) = u.constant_rmse {
        no_better = pts.iter().filter(|p| p.holdout_rmse.mean >= c.mean).map(|p| p.epsilon).collect();
        if !no_better.is_empty() {
            let shown = |c: f64| format!("{c:.4}{units}, the training mean everywhere");
            warnings.push(if no_better.len() == pts.len() {
                format!(
                    "at every planned ε the private map's hold-out RMSE is no better than a constant map's ({}): publishing this map adds nothing a single number would not — raise ε, or narrow the response range around the data",
                    shown(c.mean)
                )
            } else {
                format!(
                    "at ε = {} the private map's hold-out RMSE is no better than a constant map's ({}) — a flat map says as much there; plan a larger ε",
                    no_better.iter().map(|e| format!("{e:.3}")).collect::<Vec<_>>().join(", "),
                    shown(c.mean)
                )
            });
        }
    }
    match u.reference_fraction {
        Some(f) if f <= 0.0 => warnings.push(format!(
            "the proxy's own non-private map never reaches the threshold t = {threshold}{units}: the excursion set {{f ≥ t}} is empty and its IoU says nothing — choose a --threshold inside the data's range"
        )),
        Some(f) if f >= 1.0 => warnings.push(format!(
            "the proxy's own non-private map is at or above t = {threshold}{units} everywhere: the excursion set is the whole domain — choose a higher --threshold"
        )),
        _ => {
            if !pts.is_empty() && pts.iter().all(|p| p.excursion_iou.mean <= 0.0) {
                warnings.push(format!(
                    "the private map never reaches the threshold t = {threshold}{units} (IoU 0 at every planned ε): the noise and the shrinkage towards the centre of the response range hide the set — narrow the response range around the data, choose another --threshold, or raise ε"
                ));
            }
        }
    }
    Assessment { within, rmse_epsilon, iou_epsilon, no_better_than_constant: no_better, warnings }
}

/// A warning when the responses' median lies far from the prior mean the
/// release shrinks towards — the centre of the response range (or 0 under a
/// bound M_Y): farther than a third of the half-width. `y` are public/proxy
/// responses in data units.
pub fn centre_warning(range: Option<ResponseRange>, bound: f64, y: &[f64], units: &str) -> Option<String> {
    let mut v: Vec<f64> = y.iter().copied().filter(|v| v.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let k = v.len();
    let median = if k % 2 == 1 { v[k / 2] } else { 0.5 * (v[k / 2 - 1] + v[k / 2]) };
    let (centre, half, what, (lo, hi)) = match range {
        Some(r) => (r.mid(), r.half(), format!("the middle of the response range [{}, {}]", r.lo, r.hi), (r.lo, r.hi)),
        None => (0.0, bound, format!("0 (the prior mean under --response-bound {bound})"), (-bound, bound)),
    };
    // A range centred on the median that keeps the end nearer to it.
    let (a, b) = if median <= centre { (lo, 2.0 * median - lo) } else { (2.0 * median - hi, hi) };
    ((median - centre).abs() > half / 3.0).then(|| {
        format!(
            "the proxy's median response {median:.4}{units} is far from {what}, the prior mean the private map shrinks towards ({centre}{units}): where the data are few or the noise large the map reverts to it — give a response range centred on the data, e.g. --response-range {a:.4},{b:.4}"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Summary, UtilityAt};

    fn s(mean: f64) -> Summary {
        Summary { mean, sd: 0.0 }
    }

    fn curve(rmse: &[(f64, f64)], iou: &[f64], reference_fraction: f64) -> Utility {
        Utility {
            train_records: 10,
            holdout_records: 2,
            reps: 1,
            points: rmse
                .iter()
                .zip(iou)
                .map(|(&(e, r), &i)| UtilityAt {
                    target_epsilon: e,
                    ridge: 1.0,
                    ridge_is_fitted: false,
                    epsilon: e,
                    holdout_rmse: s(r),
                    excursion_iou: s(i),
                })
                .collect(),
            baseline_rmse: s(1.0),
            baseline_iou: s(0.8),
            constant_rmse: Some(s(3.0)),
            constant_iou: Some(s(0.0)),
            reference_fraction: Some(reference_fraction),
        }
    }

    #[test]
    fn smallest_epsilon_within_the_fraction_and_constant_map_comparison() {
        // Targets out of order: the smallest ε that qualifies is found.
        let u = curve(&[(10.0, 1.05), (1.0, 3.5), (3.0, 1.2)], &[0.78, 0.1, 0.5], 0.3);
        let a = assess(&u, 0.1, 25.0, " µg/m³");
        assert_eq!(a.rmse_epsilon, Some(10.0));
        assert_eq!(a.iou_epsilon, Some(10.0));
        assert_eq!(a.no_better_than_constant, vec![1.0]);
        assert_eq!(a.warnings.len(), 1, "{:?}", a.warnings);
        assert!(a.warnings[0].contains("at ε = 1.000"), "{}", a.warnings[0]);
        let a = assess(&u, 0.25, 25.0, "");
        assert_eq!(a.rmse_epsilon, Some(3.0));
        assert_eq!(a.iou_epsilon, Some(10.0));
    }

    #[test]
    fn warns_when_useless_or_the_threshold_is_never_reached() {
        let u = curve(&[(1.0, 3.5), (3.0, 3.1)], &[0.0, 0.0], 0.4);
        let a = assess(&u, 0.1, 40.0, "");
        assert_eq!((a.rmse_epsilon, a.iou_epsilon), (None, None));
        assert_eq!(a.warnings.len(), 2, "{:?}", a.warnings);
        assert!(a.warnings[0].contains("every planned ε"));
        assert!(a.warnings[1].contains("never reaches the threshold t = 40"));
        let empty = curve(&[(1.0, 1.0)], &[1.0], 0.0);
        assert!(assess(&empty, 0.1, 90.0, "").warnings[0].contains("proxy's own non-private map never reaches"));
    }

    #[test]
    fn centre_warning_compares_the_median_with_the_prior_mean() {
        let y: Vec<f64> = (0..101).map(|i| 12.0 + 0.1 * i as f64).collect(); // median 17
        let wide = ResponseRange::new(0.0, 80.0).unwrap();
        let w = centre_warning(Some(wide), 1.0, &y, "").expect("|17 − 40| > 20");
        assert!(w.contains("median response 17.0000"), "{w}");
        assert!(w.contains("--response-range 0.0000,34.0000"), "{w}");
        assert!(centre_warning(Some(ResponseRange::new(0.0, 40.0).unwrap()), 1.0, &y, "").is_none());
        assert!(centre_warning(None, 20.0, &y, "").is_some());
        assert!(centre_warning(None, 60.0, &y, "").is_none());
    }
}
