//! Evaluation of selected hyperparameters in the 1-D study (the paper's
//! App. D): the cutoffs C and c chosen on validation pairs, and per-pair
//! BCE, d_eff, IoU of {p_D ≥ C} and the IoU of the released L-path sets.
//!
//! ```text
//! Ŝ_θ     = {x : p_{D,θ}(x) ≥ C}                                  (non-private benchmark)
//! Ŝ_θ^(L) = {x : (1/L)·Σ_l 1{f^(l)(x) ≥ t} ≥ c},  f^(l) ~ Π_{D,θ}  (the release)
//! IoU(A, B) = Σ_k w_k 1{x_k ∈ A ∩ B} / Σ_k w_k 1{x_k ∈ A ∪ B}
//! ```
//!
//! C maximises the mean validation IoU over a grid of [0, 1] (ties to the
//! value closest to ½). For L = 1 every c ∈ (0, 1] gives {f ≥ t}, the
//! paper's one-path release, so c is not tuned (reported as ½); for L > 1,
//! c ∈ {1/L, 2/L, …, 1} maximises the mean validation IoU over B sets of L
//! draws per pair. Released draws are exact (forward filtering, backward
//! sampling), f = μ_D + σ·(draw − μ_D), from one seeded ChaCha20 stream per
//! pair. Per-pair Monte Carlo SDs are population SDs (ddof = 0), as the
//! authors' code.

use gpdp::postprocess::excursion::{excursion_probability, vote_set};
use gpdp::postprocess::metrics::{best_cutoff, integrated_bce, iou};
use gpdp::{Draws, ReleaseRng};
use rayon::prelude::*;
use serde::Serialize;

use super::pairs1d::{PairSet1d, pair_seed};
use super::search::Candidate;
use crate::error::Result;

/// Per-pair results at one θ.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct PairEval {
    /// Integrated BCE of p_{D,θ}.
    pub bce: f64,
    /// d_eff = tr(K(K + r²I)⁻¹).
    pub d_eff: f64,
    /// IoU of {p_{D,θ} ≥ C} against the truth.
    pub set_iou: f64,
    /// Mean IoU of the released L-path set over B Monte Carlo repetitions.
    pub path_iou_mean: f64,
    /// Its standard deviation over the B repetitions (ddof = 0).
    pub path_iou_sd: f64,
}

/// p_{D,θ} on the mesh of pair j.
pub fn probabilities(set: &PairSet1d, j: usize, theta: &Candidate) -> Result<Vec<f64>> {
    let (mu, var) = set.posterior(j, theta.lengthscale, theta.ridge)?;
    let t = set.spec.level;
    Ok(mu.iter().zip(&var).map(|(&m, &v)| excursion_probability(m, v, theta.scale, t)).collect())
}

/// The grid 0, 1/(k−1), …, 1 (k ≥ 2 points).
pub fn unit_grid(k: usize) -> Vec<f64> {
    (0..k).map(|i| i as f64 / (k - 1).max(1) as f64).collect()
}

/// The cutoff among `grid` maximising the mean over pairs of `score(pair)[i]`
/// (ties to the value closest to ½); returns (cutoff, mean score).
fn best_mean(grid: &[f64], per_pair: &[Vec<f64>]) -> (f64, f64) {
    let n = per_pair.len().max(1) as f64;
    let means: Vec<f64> = (0..grid.len()).map(|i| per_pair.iter().map(|v| v[i]).sum::<f64>() / n).collect();
    best_cutoff(grid, 0.5, |c| grid.iter().position(|&g| g == c).map_or(f64::NEG_INFINITY, |i| means[i]))
}

/// C for θ on `set` (the validation pairs): maximises the mean IoU of
/// {p ≥ C} over `grid`. Returns (C, mean IoU at C).
pub fn choose_set_cutoff(set: &PairSet1d, theta: &Candidate, grid: &[f64]) -> Result<(f64, f64)> {
    let per_pair: Vec<Vec<f64>> = (0..set.len())
        .into_par_iter()
        .map(|j| {
            let p = probabilities(set, j, theta)?;
            let truth = &set.pairs[j].truth;
            grid.iter()
                .map(|&c| {
                    let s: Vec<bool> = p.iter().map(|&q| q >= c).collect();
                    Ok(iou(&s, truth, &set.mesh.weights)?)
                })
                .collect()
        })
        .collect::<Result<_>>()?;
    Ok(best_mean(grid, &per_pair))
}

/// B = `reps` groups of L = `draws` released paths on the mesh of pair j at θ.
fn released_paths(
    set: &PairSet1d,
    j: usize,
    theta: &Candidate,
    draws: Draws,
    reps: usize,
    seed: u64,
) -> Result<Vec<Vec<Vec<f64>>>> {
    let draws = draws.to_usize()?;
    let (mu, _) = set.posterior(j, theta.lengthscale, theta.ridge)?;
    if !(theta.scale > 0.0) {
        // σ = 0: every "draw" is μ_D (not private; kept for completeness).
        return Ok(vec![vec![mu; draws]; reps]);
    }
    let mut rng = ReleaseRng::seeded(seed);
    let raw = set.sample(j, theta.lengthscale, theta.ridge, draws * reps, &mut rng)?;
    let released: Vec<Vec<f64>> =
        raw.into_iter().map(|d| d.iter().zip(&mu).map(|(&f, &m)| m + theta.scale * (f - m)).collect()).collect();
    Ok(released.chunks(draws).map(|c| c.to_vec()).collect())
}

/// The vote cutoff c for θ on `set` (validation pairs) with L = `draws`
/// paths and B = `reps` repetitions per pair; ½ when L = 1 (see the module
/// docs). Returns (c, mean IoU at c; NaN when not tuned).
pub fn choose_vote_cutoff(
    set: &PairSet1d,
    theta: &Candidate,
    draws: Draws,
    reps: usize,
    base: u64,
) -> Result<(f64, f64)> {
    if draws == Draws::ONE {
        return Ok((0.5, f64::NAN));
    }
    let l = draws.to_usize()?;
    let grid: Vec<f64> = (1..=l).map(|k| k as f64 / l as f64).collect();
    let t = set.spec.level;
    let per_pair: Vec<Vec<f64>> = (0..set.len())
        .into_par_iter()
        .map(|j| {
            let groups = released_paths(set, j, theta, draws, reps, pair_seed(base, j))?;
            let truth = &set.pairs[j].truth;
            grid.iter()
                .map(|&c| {
                    let mut total = 0.0;
                    for g in &groups {
                        total += iou(&vote_set(g, t, c)?, truth, &set.mesh.weights)?;
                    }
                    Ok(total / groups.len().max(1) as f64)
                })
                .collect()
        })
        .collect::<Result<_>>()?;
    Ok(best_mean(&grid, &per_pair))
}

/// Mean and population SD (ddof = 0); NaNs for an empty input.
pub fn mean_sd(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    (m, (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n).sqrt())
}

/// Settings of [`evaluate_pairs`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EvalSettings {
    /// Cutoff C of the set {p ≥ C}.
    pub set_cutoff: f64,
    /// Vote cutoff c of the released set.
    pub vote_cutoff: f64,
    /// Paths per release L.
    pub draws: Draws,
    /// Monte Carlo repetitions B per pair (0: no released-set IoU, NaN).
    pub reps: usize,
    /// Seed of pair 0's draw stream (pair j: [`pair_seed`]`(base, j)`).
    pub seed_base: u64,
    /// Probability clip of the BCE.
    pub clip: f64,
}

/// Per-pair evaluation of θ on every pair of `set`, in parallel;
/// `progress()` after each pair.
pub fn evaluate_pairs(
    set: &PairSet1d,
    theta: &Candidate,
    s: &EvalSettings,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<PairEval>> {
    let t = set.spec.level;
    let w = &set.mesh.weights;
    (0..set.len())
        .into_par_iter()
        .map(|j| {
            let truth = &set.pairs[j].truth;
            let p = probabilities(set, j, theta)?;
            let bce = integrated_bce(truth, &p, w, s.clip)?;
            let d_eff = set.effective_dimension(j, theta.lengthscale, theta.ridge)?;
            let est: Vec<bool> = p.iter().map(|&q| q >= s.set_cutoff).collect();
            let set_iou = iou(&est, truth, w)?;
            let (path_iou_mean, path_iou_sd) = if s.reps > 0 {
                let groups = released_paths(set, j, theta, s.draws, s.reps, pair_seed(s.seed_base, j))?;
                let ious: Vec<f64> = groups
                    .iter()
                    .map(|g| Ok(iou(&vote_set(g, t, s.vote_cutoff)?, truth, w)?))
                    .collect::<Result<_>>()?;
                mean_sd(&ious)
            } else {
                (f64::NAN, f64::NAN)
            };
            progress();
            Ok(PairEval { bce, d_eff, set_iou, path_iou_mean, path_iou_sd })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::excursion::pairs1d::{Mesh1d, Pair1d, PairSpec};

    /// A hand-made validation set where p_D is known: a single pair whose
    /// posterior is driven by many exact observations.
    #[test]
    fn set_cutoff_picks_the_best_iou_with_ties_to_one_half() {
        // Two pairs on a 5-point mesh with given p: build the per-pair IoU
        // table directly through best_mean.
        let grid = unit_grid(5); // 0, .25, .5, .75, 1
        // Pair scores: C = .25 and .75 tie for the best mean; .75 is no
        // closer to ½ than .25, so the smaller wins.
        let per = vec![vec![0.1, 0.9, 0.5, 0.7, 0.0], vec![0.1, 0.5, 0.5, 0.7, 0.0]];
        assert_eq!(best_mean(&grid, &per), (0.25, 0.7));
        let per = vec![vec![0.1, 0.6, 0.6, 0.6, 0.0]];
        assert_eq!(best_mean(&grid, &per).0, 0.5);
        assert_eq!(unit_grid(101)[50], 0.5);
        assert_eq!(mean_sd(&[1.0, 3.0]), (2.0, 1.0));
    }

    #[test]
    fn set_cutoff_on_a_hand_made_pair() {
        // Truth: x ≥ 0.45 on an 11-point mesh; data y = ±1 dense on each
        // side, so p ≈ 1{x ≥ 0.45} at every mesh point and a wide range of C
        // is perfect: the tie goes to C = ½.
        let mesh = Mesh1d::new(11).unwrap();
        let x: Vec<f64> = (0..40).map(|i| (i as f64 + 0.5) / 40.0).collect();
        let y: Vec<f64> = x.iter().map(|&v| if v >= 0.45 { 1.0 } else { -1.0 }).collect();
        let truth: Vec<bool> = mesh.points.iter().map(|&v| v >= 0.45).collect();
        let pair = Pair1d { field_at_x: y.clone(), x, y, field: vec![0.0; 11], truth };
        let spec = PairSpec { n: 40, noise: 0.0, generating_lengthscale: 1.0, level: 0.0, rejection: None };
        let set = PairSet1d::from_pairs(spec, mesh, vec![pair]).unwrap();
        let theta = Candidate { lengthscale: 0.05, ridge: 0.05, scale: 0.2 };
        let p = probabilities(&set, 0, &theta).unwrap();
        assert!(p[4] < 0.01 && p[5] > 0.99, "{p:?}");
        let (c, score) = choose_set_cutoff(&set, &theta, &unit_grid(101)).unwrap();
        assert_eq!(score, 1.0);
        assert_eq!(c, 0.5);
        let ev = evaluate_pairs(
            &set,
            &theta,
            &EvalSettings { set_cutoff: c, vote_cutoff: 0.5, draws: Draws::ONE, reps: 20, seed_base: 1, clip: 1e-6 },
            &|| {},
        )
        .unwrap();
        assert_eq!(ev[0].set_iou, 1.0);
        assert!(ev[0].path_iou_mean > 0.6 && ev[0].path_iou_mean <= 1.0);
        assert!(ev[0].path_iou_sd >= 0.0);
        let (vc, _) = choose_vote_cutoff(&set, &theta, Draws::new(3).unwrap(), 10, 5).unwrap();
        assert!([1.0 / 3.0, 2.0 / 3.0, 1.0].contains(&vc));
        assert_eq!(choose_vote_cutoff(&set, &theta, Draws::ONE, 10, 5).unwrap().0, 0.5);
    }
}
