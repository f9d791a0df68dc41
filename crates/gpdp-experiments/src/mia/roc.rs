//! Attack evaluation: ROC curve, AUC and TPR at fixed FPR (paper App. C).
//!
//! The test declares "member" when the score S ≥ t, so
//! FPR(t) = P_out{S ≥ t} and TPR(t) = P_in{S ≥ t}.
//!
//! * **ROC**: one point per distinct score value t (descending), plus
//!   (0, 0); ties between in- and out-scores move both rates in one step.
//! * **AUC** by the rank formula (Mann–Whitney): with mid-ranks R over the
//!   pooled scores, AUC = (Σ_{in} R − n_in(n_in + 1)/2)/(n_in·n_out)
//!   = P(S_in > S_out) + ½·P(S_in = S_out).
//! * **TPR at FPR = α**: the threshold t_α is the linear-interpolation
//!   quantile of the out-scores at level 1 − α (NumPy's default, as the
//!   authors); TPR = fraction of in-scores ≥ t_α. The out-fraction ≥ t_α
//!   (the achieved FPR) is reported too; it differs from α by at most
//!   1/n_out plus ties. **Excess TPR = TPR − α**, not clipped at 0 (the
//!   authors clip for their log-scale plots; clip when plotting).

use serde::Serialize;

use super::numeric::quantile_sorted;

/// An ROC curve: FPR and TPR ascending together, from (0, 0) to (1, 1).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Roc {
    /// False-positive rates.
    pub fpr: Vec<f64>,
    /// True-positive rates.
    pub tpr: Vec<f64>,
    /// The threshold of each point (+∞ for the first).
    #[serde(skip)]
    pub thresholds: Vec<f64>,
}

/// TPR at one FPR level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct TprAtFpr {
    /// The nominal level α.
    pub fpr: f64,
    /// The threshold t_α (quantile of the out-scores at 1 − α).
    pub threshold: f64,
    /// P_in{S ≥ t_α}.
    pub tpr: f64,
    /// P_out{S ≥ t_α}.
    pub achieved_fpr: f64,
    /// TPR − α.
    pub excess: f64,
}

/// AUC and TPR at the requested levels.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct AttackMetrics {
    /// Area under the ROC curve.
    pub auc: f64,
    /// One entry per FPR level, in the order requested.
    pub at: Vec<TprAtFpr>,
}

fn sorted(x: &[f64]) -> Vec<f64> {
    let mut v = x.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    v
}

/// The ROC curve of in-scores (members) against out-scores.
pub fn roc_curve(scores_in: &[f64], scores_out: &[f64]) -> Roc {
    let si = sorted(scores_in);
    let so = sorted(scores_out);
    let (ni, no) = (si.len() as f64, so.len() as f64);
    let mut roc = Roc { fpr: vec![0.0], tpr: vec![0.0], thresholds: vec![f64::INFINITY] };
    // Walk thresholds from the top: counts of scores ≥ t.
    let (mut i, mut o) = (si.len(), so.len());
    while i > 0 || o > 0 {
        let t = match (i > 0, o > 0) {
            (true, true) => si[i - 1].max(so[o - 1]),
            (true, false) => si[i - 1],
            _ => so[o - 1],
        };
        while i > 0 && si[i - 1] >= t {
            i -= 1;
        }
        while o > 0 && so[o - 1] >= t {
            o -= 1;
        }
        roc.fpr.push((so.len() - o) as f64 / no);
        roc.tpr.push((si.len() - i) as f64 / ni);
        roc.thresholds.push(t);
    }
    roc
}

/// AUC by the rank formula with tie-averaged ranks.
pub fn auc(scores_in: &[f64], scores_out: &[f64]) -> f64 {
    let mut all: Vec<(f64, bool)> =
        scores_in.iter().map(|&s| (s, true)).chain(scores_out.iter().map(|&s| (s, false))).collect();
    all.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let mut rank_sum_in = 0.0;
    let mut k = 0;
    while k < all.len() {
        let mut e = k;
        while e + 1 < all.len() && all[e + 1].0.total_cmp(&all[k].0).is_eq() {
            e += 1;
        }
        // Ranks k+1 ..= e+1 share their average.
        let mid = 0.5 * ((k + 1) + (e + 1)) as f64;
        let n_in = all[k..=e].iter().filter(|p| p.1).count();
        rank_sum_in += mid * n_in as f64;
        k = e + 1;
    }
    let (ni, no) = (scores_in.len() as f64, scores_out.len() as f64);
    (rank_sum_in - ni * (ni + 1.0) / 2.0) / (ni * no)
}

/// TPR at FPR = `alpha` (see the module documentation for the rule).
pub fn tpr_at_fpr(scores_in: &[f64], scores_out: &[f64], alpha: f64) -> TprAtFpr {
    let so = sorted(scores_out);
    tpr_at_fpr_sorted(scores_in, &so, alpha)
}

fn tpr_at_fpr_sorted(scores_in: &[f64], sorted_out: &[f64], alpha: f64) -> TprAtFpr {
    let t = quantile_sorted(sorted_out, 1.0 - alpha);
    let tpr = scores_in.iter().filter(|&&s| s >= t).count() as f64 / scores_in.len() as f64;
    let achieved = sorted_out.iter().filter(|&&s| s >= t).count() as f64 / sorted_out.len() as f64;
    TprAtFpr { fpr: alpha, threshold: t, tpr, achieved_fpr: achieved, excess: tpr - alpha }
}

/// AUC and TPR at each of `levels`. Both score sets must be non-empty.
pub fn evaluate(scores_in: &[f64], scores_out: &[f64], levels: &[f64]) -> AttackMetrics {
    let so = sorted(scores_out);
    AttackMetrics {
        auc: auc(scores_in, scores_out),
        at: levels.iter().map(|&a| tpr_at_fpr_sorted(scores_in, &so, a)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auc_hand_made() {
        // Perfect separation, perfect inversion, all tied.
        assert_eq!(auc(&[3.0, 4.0], &[1.0, 2.0]), 1.0);
        assert_eq!(auc(&[1.0, 2.0], &[3.0, 4.0]), 0.0);
        assert_eq!(auc(&[1.0, 1.0], &[1.0, 1.0, 1.0]), 0.5);
        // in = {1, 2, 3}, out = {2, 0}: pairs (in > out) = 1>0, 2>0, 3>0, 3>2 = 4,
        // ties (2, 2) = 1 → (4 + 0.5)/6.
        assert!((auc(&[1.0, 2.0, 3.0], &[2.0, 0.0]) - 4.5 / 6.0).abs() < 1e-15);
    }

    #[test]
    fn auc_equals_the_pairwise_definition() {
        let si = [0.3, 0.1, 0.7, 0.7, 0.2, 0.9, 0.5];
        let so = [0.1, 0.7, 0.4, 0.2, 0.2, 0.0];
        let mut c = 0.0;
        for a in si {
            for b in so {
                c += if a > b {
                    1.0
                } else if a == b {
                    0.5
                } else {
                    0.0
                };
            }
        }
        assert!((auc(&si, &so) - c / 42.0).abs() < 1e-15);
        // And the trapezoid area under the ROC curve.
        let r = roc_curve(&si, &so);
        let area: f64 = (1..r.fpr.len()).map(|k| (r.fpr[k] - r.fpr[k - 1]) * 0.5 * (r.tpr[k] + r.tpr[k - 1])).sum();
        assert!((area - c / 42.0).abs() < 1e-15);
    }

    #[test]
    fn roc_with_ties() {
        let r = roc_curve(&[2.0, 1.0, 1.0], &[1.0, 0.0]);
        assert_eq!(r.fpr, vec![0.0, 0.0, 0.5, 1.0]);
        assert_eq!(r.tpr, vec![0.0, 1.0 / 3.0, 1.0, 1.0]);
        assert_eq!(r.thresholds[1..], [2.0, 1.0, 0.0]);
    }

    #[test]
    fn tpr_at_fpr_rule() {
        // out = 0..=99 (100 scores): the 0.9 quantile is 89.1, 10 outs are ≥ 89.1?
        // No: 90..=99 are ≥ 89.1 → achieved FPR 0.10.
        let out: Vec<f64> = (0..100).map(f64::from).collect();
        let inn: Vec<f64> = (0..100).map(|k| f64::from(k) + 50.0).collect();
        let m = tpr_at_fpr(&inn, &out, 0.1);
        assert!((m.threshold - 89.1).abs() < 1e-12);
        assert_eq!(m.achieved_fpr, 0.10);
        // in-scores ≥ 89.1: 90..=149 → 60.
        assert_eq!(m.tpr, 0.60);
        assert!((m.excess - 0.5).abs() < 1e-15);
        // Ties at the threshold count as positives.
        let m = tpr_at_fpr(&[1.0, 1.0, 0.0, 0.0], &[1.0, 0.0, 0.0, 0.0], 0.25);
        assert_eq!(m.threshold, 0.25 * 1.0 + 0.75 * 0.0); // quantile at 0.75 of [0,0,0,1] = 0.25
        assert_eq!((m.tpr, m.achieved_fpr), (0.5, 0.25));
        // Identical distributions: excess ≈ 0.
        let e = evaluate(&out, &out, &[0.1, 0.01]);
        assert_eq!(e.auc, 0.5);
        assert!(e.at[0].excess.abs() <= 0.01 + 1e-12 && e.at[1].excess.abs() <= 0.01 + 1e-12, "{e:?}");
    }
}
