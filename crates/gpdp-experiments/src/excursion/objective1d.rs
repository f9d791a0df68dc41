//! The 1-D study's search objective (the paper's App. D):
//!
//! ```text
//! L̂_BCE(θ) = (1/N) Σ_j Σ_k w_k·ℓ(s*_j(x_k), p_{D_j,θ}(x_k)),
//! p_{D,θ}(x) = Φ((μ_D(x) − t)/(σ·√k_D(x, x)))       (σ = 0: 1{μ_D(x) ≥ t})
//! ```
//!
//! over the pairs j = 1..N, mesh points x_k with trapezoid weights w_k,
//! p clipped to [c, 1 − c] ([`ClippedBce`]).
//!
//! Per (ℓ, r) and pair: one Kalman-smoother pass gives μ_D and k_D on the
//! mesh; the signed margins a_k = (2s*_k − 1)(μ_D(x_k) − t)/√k_D(x_k, x_k)
//! are computed once; then each σ costs one table lookup per mesh point,
//! ℓ = g(a_k/σ). Points with σ√k_D ≤ 10⁻¹⁴ (as in the authors' code) and
//! σ = 0 use the hard indicator. Pairs run in parallel; their sum is taken
//! in pair order, so the value does not depend on the number of threads.
//! Values are cached per (ℓ, r, σ): the unconstrained and private searches
//! share their coarse grid and overlapping refinements.

use std::collections::HashMap;
use std::sync::Mutex;

use rayon::prelude::*;

use super::accounting::StudyAccounting;
use super::loss::ClippedBce;
use super::pairs1d::PairSet1d;
use super::search::{Candidate, Objective};
use crate::error::Result;

/// Standard deviations at or below this use the hard indicator.
const HARD_SD: f64 = 1e-14;

/// The mean integrated BCE over a pair set, with ε from the accountant.
#[derive(Debug)]
pub struct Bce1d<'a> {
    set: &'a PairSet1d,
    loss: ClippedBce,
    accounting: StudyAccounting,
    cache: Mutex<HashMap<(i64, i64, i64), f64>>,
}

fn key(x: f64) -> i64 {
    (x * 1e12).round() as i64
}

impl<'a> Bce1d<'a> {
    /// The objective on `set` with probability clip `clip` (10⁻⁶ in the paper).
    pub fn new(set: &'a PairSet1d, clip: f64, accounting: StudyAccounting) -> Result<Self> {
        Ok(Bce1d { set, loss: ClippedBce::new(clip)?, accounting, cache: Mutex::new(HashMap::new()) })
    }

    /// The pair set.
    pub fn set(&self) -> &PairSet1d {
        self.set
    }

    /// The accountant settings.
    pub fn accounting(&self) -> &StudyAccounting {
        &self.accounting
    }

    /// Integrated BCE of pair j for each σ in `scales` at (ℓ, r).
    pub fn pair_bce(&self, j: usize, lengthscale: f64, ridge: f64, scales: &[f64]) -> Result<Vec<f64>> {
        let (mu, var) = self.set.posterior(j, lengthscale, ridge)?;
        Ok(self.bce_from_posterior(j, &mu, &var, scales))
    }

    /// Integrated BCE of pair j from its posterior (μ_D, k_D) on the mesh.
    pub fn bce_from_posterior(&self, j: usize, mu: &[f64], var: &[f64], scales: &[f64]) -> Vec<f64> {
        let pair = &self.set.pairs[j];
        let w = &self.set.mesh.weights;
        let t = self.set.spec.level;
        let (best, worst) = (self.loss.best(), self.loss.worst());
        // Hard decisions: right iff (μ ≥ t) == s*.
        let right: Vec<bool> = mu.iter().zip(&pair.truth).map(|(&m, &s)| (m >= t) == s).collect();
        let hard = || right.iter().zip(w).map(|(&ok, &wk)| wk * if ok { best } else { worst }).sum::<f64>();
        let sd: Vec<f64> = var.iter().map(|&v| v.max(0.0).sqrt()).collect();
        let min_sd = sd.iter().copied().fold(f64::INFINITY, f64::min);
        let margins: Vec<f64> = mu
            .iter()
            .zip(&sd)
            .zip(&pair.truth)
            .zip(&right)
            .map(|(((&m, &s_d), &s), &ok)| {
                if s_d > 0.0 {
                    if s { (m - t) / s_d } else { (t - m) / s_d }
                } else if ok {
                    f64::INFINITY
                } else {
                    f64::NEG_INFINITY
                }
            })
            .collect();
        scales
            .iter()
            .map(|&sigma| {
                if !(sigma > 0.0) {
                    return hard();
                }
                let inv = 1.0 / sigma;
                if sigma * min_sd > HARD_SD {
                    // The hot loop: one table lookup per mesh point.
                    self.loss.weighted_sum(&margins, inv, w)
                } else {
                    margins
                        .iter()
                        .zip(&sd)
                        .zip(&right)
                        .zip(w)
                        .map(|(((&a, &s_d), &ok), &wk)| {
                            wk * if sigma * s_d <= HARD_SD {
                                if ok { best } else { worst }
                            } else {
                                self.loss.eval(a * inv)
                            }
                        })
                        .sum()
                }
            })
            .collect()
    }

    /// Mean over pairs for each σ (not cached).
    pub fn mean_bce(&self, lengthscale: f64, ridge: f64, scales: &[f64]) -> Result<Vec<f64>> {
        let per: Vec<Vec<f64>> = (0..self.set.len())
            .into_par_iter()
            .map(|j| self.pair_bce(j, lengthscale, ridge, scales))
            .collect::<Result<_>>()?;
        let n = per.len() as f64;
        Ok((0..scales.len()).map(|k| per.iter().map(|v| v[k]).sum::<f64>() / n).collect())
    }
}

impl Objective for Bce1d<'_> {
    fn evaluate(&self, lengthscale: f64, ridge: f64, scales: &[f64]) -> Vec<f64> {
        let (kl, kr) = (key(lengthscale), key(ridge));
        let missing: Vec<f64> = {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            scales.iter().copied().filter(|&s| !cache.contains_key(&(kl, kr, key(s)))).collect()
        };
        if !missing.is_empty() {
            // An invalid (ℓ, r) scores +∞: never selected.
            let vals =
                self.mean_bce(lengthscale, ridge, &missing).unwrap_or_else(|_| vec![f64::INFINITY; missing.len()]);
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            for (s, v) in missing.iter().zip(vals) {
                cache.insert((kl, kr, key(*s)), v);
            }
        }
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        scales.iter().map(|&s| cache[&(kl, kr, key(s))]).collect()
    }

    fn epsilon(&self, c: &Candidate) -> f64 {
        self.accounting.epsilon(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::excursion::accounting::StudyModel;
    use crate::excursion::pairs1d::{Mesh1d, PairSpec};
    use gpdp::postprocess::excursion::excursion_probability;
    use gpdp::postprocess::metrics::integrated_bce;
    use gpdp::privacy::SensitivityConstants;
    use gpdp::{Conversion, Dataset, Kernel, Points, Posterior};

    #[test]
    fn objective_equals_dense_brute_force() {
        let mesh = Mesh1d::new(120).unwrap();
        let spec = PairSpec { n: 25, noise: 0.3, generating_lengthscale: 1.0, level: 0.0, rejection: None };
        let set = PairSet1d::generate(&spec, &mesh, 2, 11).unwrap();
        let acc = StudyAccounting {
            model: StudyModel::Interval,
            n: 25,
            draws: gpdp::Draws::ONE,
            delta: 0.005,
            conversion: Conversion::Paper,
            constants: SensitivityConstants::Proven,
            bound: gpdp::BoundChoice::Tight,
        };
        let obj = Bce1d::new(&set, 1e-6, acc).unwrap();
        let scales = [0.0, 0.05, 0.3, 1.0, 5.0];
        for (l, r) in [(0.2, 0.1), (0.75, 1.0), (0.08, 0.05)] {
            let fast = obj.evaluate(l, r, &scales);
            let mut brute = vec![0.0; scales.len()];
            for p in &set.pairs {
                let d = Dataset::new(Points::from_1d(&p.x), p.y.clone()).unwrap();
                let post = Posterior::fit(Kernel::exponential(l).unwrap(), &d, r).unwrap();
                let q = Points::from_1d(&mesh.points);
                let (mu, var) = (post.mean(&q).unwrap(), post.variance(&q).unwrap());
                for (k, &s) in scales.iter().enumerate() {
                    let prob: Vec<f64> =
                        mu.iter().zip(&var).map(|(&m, &v)| excursion_probability(m, v, s, 0.0)).collect();
                    brute[k] += integrated_bce(&p.truth, &prob, &mesh.weights, 1e-6).unwrap() / 2.0;
                }
            }
            for k in 0..scales.len() {
                assert!((fast[k] - brute[k]).abs() < 1e-8, "ℓ={l} r={r} σ={}: {} vs {}", scales[k], fast[k], brute[k]);
            }
            // Cached values are identical; a subset is served from the cache.
            assert_eq!(obj.evaluate(l, r, &scales), fast);
            assert_eq!(obj.evaluate(l, r, &scales[1..3]), fast[1..3].to_vec());
        }
        assert_eq!(obj.epsilon(&Candidate { lengthscale: 0.2, ridge: 1.0, scale: 0.0 }), f64::INFINITY);
        assert!(obj.epsilon(&Candidate { lengthscale: 0.2, ridge: 1.0, scale: 1.0 }).is_finite());
    }
}
