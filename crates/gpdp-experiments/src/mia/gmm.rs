//! Two-component Gaussian mixtures in one dimension, fitted by EM.
//!
//! Used for log v̂ (paper App. C: φ_v = log v̂ ~ Σ ω̃_j N(m̃_j, τ̃_j²)) and,
//! in the non-private benchmark, for 2·atanh μ_D(x₀) and log v_D(x₀).
//!
//! Maximum likelihood from several deterministic starts: means at the
//! sample quantiles (¼, ¾), (0.1, 0.9), (0.05, 0.5), (0.5, 0.95),
//! (0.02, 0.98), (0.35, 0.65) (cycled), equal weights, and the sample
//! variance (first start) or a quarter of it (the others). Every start gets
//! 10 EM iterations (Dempster, Laird & Rubin 1977); the best two are then
//! polished by L-BFGS on the same log-likelihood (EM converges only
//! linearly, and very slowly when the components overlap; the E step's
//! sufficient statistics are exactly the gradient) in the parameters
//! θ = (logit ω₁, m₁, m₂, b₁, b₂) with τ_j² = floor + e^{2b_j}, until
//! ‖∇‖_∞ ≤ 1e-9 on the mean log-likelihood. The variance floor
//! `floor·max(sample variance, 1e-12)` keeps components from collapsing
//! onto one point.

use serde::Serialize;

use super::numeric::{LN_SQRT_2PI, exp_neg, mean_var, quantile_sorted};
use super::optim::{LbfgsOptions, minimize};
use crate::error::{Error, Result};

/// A two-component Gaussian mixture Σ_j ω_j N(m_j, τ_j²).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Gmm2 {
    /// ω_j (sum to 1).
    pub weights: [f64; 2],
    /// m_j.
    pub means: [f64; 2],
    /// τ_j > 0.
    pub sds: [f64; 2],
}

/// A fitted mixture and its log-likelihood.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GmmFit {
    /// The mixture, components sorted by mean.
    pub model: Gmm2,
    /// Σ_i log p(x_i).
    pub log_likelihood: f64,
    /// EM plus L-BFGS iterations of the winning start.
    pub iterations: usize,
}

/// EM settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EmOptions {
    /// Starting points (≥ 1).
    pub restarts: usize,
    /// Iteration cap per start.
    pub max_iterations: usize,
    /// Relative variance floor.
    pub variance_floor: f64,
}

impl Default for EmOptions {
    fn default() -> Self {
        EmOptions { restarts: 6, max_iterations: 500, variance_floor: 1e-6 }
    }
}

const STARTS: [(f64, f64); 6] = [(0.25, 0.75), (0.1, 0.9), (0.05, 0.5), (0.5, 0.95), (0.02, 0.98), (0.35, 0.65)];
const SCREEN: usize = 10;
const KEEP: usize = 2;
const WEIGHT_FLOOR: f64 = 1e-12;
/// EM stops early when an iteration gains less than this times (1 + |ℓ|).
const EM_TOL: f64 = 1e-12;

impl Gmm2 {
    /// log p(x).
    pub fn log_density(&self, x: f64) -> f64 {
        let l = |j: usize| {
            let z = (x - self.means[j]) / self.sds[j];
            self.weights[j].ln() - 0.5 * z * z - self.sds[j].ln() - LN_SQRT_2PI
        };
        super::numeric::log_add_exp(l(0), l(1))
    }

    /// Fits by EM; `x` must hold at least 2 finite values.
    pub fn fit(x: &[f64], opts: &EmOptions) -> Result<GmmFit> {
        if x.len() < 2 || x.iter().any(|v| !v.is_finite()) {
            return Err(Error::InvalidInput {
                what: "Gaussian-mixture fit",
                detail: format!("needs at least 2 finite values (got {} values)", x.len()),
            });
        }
        let mut sorted = x.to_vec();
        sorted.sort_unstable_by(f64::total_cmp);
        let (_, var) = mean_var(x);
        let floor = opts.variance_floor * var.max(1e-12);
        let mut runs: Vec<(Gmm2, f64, usize)> = (0..opts.restarts.max(1))
            .map(|k| {
                let (p, q) = STARTS[k % STARTS.len()];
                let v0 = if k == 0 { var } else { 0.25 * var };
                let sd = v0.max(floor).sqrt();
                let g = Gmm2 {
                    weights: [0.5, 0.5],
                    means: [quantile_sorted(&sorted, p), quantile_sorted(&sorted, q)],
                    sds: [sd, sd],
                };
                em(x, g, floor, SCREEN.min(opts.max_iterations))
            })
            .collect();
        runs.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut best: Option<(Gmm2, f64, usize)> = None;
        for (g, _, it) in runs.into_iter().take(KEEP) {
            let (g, ll, it2) = polish(x, g, floor, opts.max_iterations.saturating_sub(it));
            if best.as_ref().is_none_or(|b| ll > b.1) {
                best = Some((g, ll, it + it2));
            }
        }
        let (mut g, ll, iterations) = best.expect("at least one start");
        if g.means[1] < g.means[0] {
            g.weights.swap(0, 1);
            g.means.swap(0, 1);
            g.sds.swap(0, 1);
        }
        if !ll.is_finite() {
            return Err(Error::Fit(format!("EM produced a non-finite log-likelihood ({ll})")));
        }
        Ok(GmmFit { model: g, log_likelihood: ll, iterations })
    }
}

/// Up to `iters` EM iterations from `g`; returns the mixture, its
/// log-likelihood and the iterations done.
fn em(x: &[f64], mut g: Gmm2, floor: f64, iters: usize) -> (Gmm2, f64, usize) {
    let n = x.len() as f64;
    let mut ll_prev = f64::NEG_INFINITY;
    let mut done = 0;
    loop {
        let (ll, s0, s1, s2) = e_step(x, &g);
        if done >= iters || ll - ll_prev <= EM_TOL * (1.0 + ll.abs()) {
            return (g, ll, done);
        }
        ll_prev = ll;
        // M step (moments about the old means, then shifted).
        for j in 0..2 {
            if s0[j] > 1e-300 {
                let shift = s1[j] / s0[j];
                g.means[j] += shift;
                g.sds[j] = (s2[j] / s0[j] - shift * shift).max(floor).sqrt();
            }
            g.weights[j] = (s0[j] / n).max(WEIGHT_FLOOR);
        }
        let tw = g.weights[0] + g.weights[1];
        g.weights = [g.weights[0] / tw, g.weights[1] / tw];
        done += 1;
    }
}

/// L-BFGS on −(1/N)·log-likelihood from `g`; returns the mixture, its
/// log-likelihood and the iterations done. Falls back to `g` if that is
/// better (it cannot be, unless the optimiser fails).
fn polish(x: &[f64], g: Gmm2, floor: f64, iters: usize) -> (Gmm2, f64, usize) {
    let n = x.len() as f64;
    let to_model = |th: &[f64]| {
        let w = 1.0 / (1.0 + (-th[0]).exp());
        Gmm2 {
            weights: [w, 1.0 - w],
            means: [th[1], th[2]],
            sds: [(floor + (2.0 * th[3]).exp()).sqrt(), (floor + (2.0 * th[4]).exp()).sqrt()],
        }
    };
    let ex = |sd: f64| 0.5 * (sd * sd - floor).max(1e-300).ln();
    let w = g.weights[0].clamp(1e-12, 1.0 - 1e-12);
    let th0 = [(w / (1.0 - w)).ln(), g.means[0], g.means[1], ex(g.sds[0]), ex(g.sds[1])];
    let f = |th: &[f64], grad: &mut [f64]| {
        if th.iter().any(|v| !v.is_finite()) {
            return f64::INFINITY;
        }
        let m = to_model(th);
        let (ll, s0, s1, s2) = e_step(x, &m);
        // ∂ℓ/∂a = Σ r₁ − N·ω₁; ∂ℓ/∂m_j = Σ r_j d_j/τ_j²;
        // ∂ℓ/∂τ_j = Σ r_j (d_j²/τ_j³ − 1/τ_j), ∂τ_j/∂b_j = e^{2b_j}/τ_j.
        grad[0] = -(s0[0] - n * m.weights[0]) / n;
        for j in 0..2 {
            let v = m.sds[j] * m.sds[j];
            grad[1 + j] = -(s1[j] / v) / n;
            let dtau = s2[j] / (v * m.sds[j]) - s0[j] / m.sds[j];
            grad[3 + j] = -dtau * (2.0 * th[3 + j]).exp() / m.sds[j] / n;
        }
        -ll / n
    };
    let opts = LbfgsOptions { max_iterations: iters.max(1), gtol: 1e-9, ftol: 1e-14, ..LbfgsOptions::default() };
    let r = minimize(f, &th0, &opts);
    let start_ll = e_step(x, &g).0;
    if r.f.is_finite() && -r.f * n >= start_ll { (to_model(&r.x), -r.f * n, r.iterations) } else { (g, start_ll, 0) }
}

/// Sufficient statistics of one E step: (log-likelihood, Σr_j, Σr_j·d_j,
/// Σr_j·d_j²) with d_j = x − m_j. AVX2 code generation where available
/// (no fused multiply-add: identical results either way).
fn e_step(x: &[f64], g: &Gmm2) -> (f64, [f64; 2], [f64; 2], [f64; 2]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { e_step_avx2(x, g) };
    }
    e_step_generic(x, g)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn e_step_avx2(x: &[f64], g: &Gmm2) -> (f64, [f64; 2], [f64; 2], [f64; 2]) {
    e_step_generic(x, g)
}

/// Points per block whose likelihood factors are multiplied before one
/// logarithm: each factor e0 + e1 lies in [1, 2], so a block's product is
/// at most 2³².
const LOG_BLOCK: usize = 32;

#[inline(always)]
fn e_step_generic(x: &[f64], g: &Gmm2) -> (f64, [f64; 2], [f64; 2], [f64; 2]) {
    let c = [g.weights[0].ln() - g.sds[0].ln() - LN_SQRT_2PI, g.weights[1].ln() - g.sds[1].ln() - LN_SQRT_2PI];
    let h = [0.5 / (g.sds[0] * g.sds[0]), 0.5 / (g.sds[1] * g.sds[1])];
    let (mut ll, mut s0, mut s1, mut s2) = (0.0, [0.0; 2], [0.0; 2], [0.0; 2]);
    for block in x.chunks(LOG_BLOCK) {
        let mut prod = 1.0f64;
        let mut msum = 0.0f64;
        for &xi in block {
            let d0 = xi - g.means[0];
            let d1 = xi - g.means[1];
            let l0 = c[0] - h[0] * d0 * d0;
            let l1 = c[1] - h[1] * d1 * d1;
            // One exponential: the smaller term relative to the larger.
            let e = exp_neg(-(l0 - l1).abs());
            let tot = 1.0 + e;
            let inv = 1.0 / tot;
            msum += l0.max(l1);
            prod *= tot;
            let r0 = if l0 >= l1 { inv } else { e * inv };
            let r1 = 1.0 - r0;
            s0[0] += r0;
            s0[1] += r1;
            s1[0] += r0 * d0;
            s1[1] += r1 * d1;
            s2[0] += r0 * d0 * d0;
            s2[1] += r1 * d1 * d1;
        }
        ll += msum + prod.ln();
    }
    (ll, s0, s1, s2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use rand_distr::{Distribution, StandardNormal};

    /// The AVX2 and generic E steps agree bit for bit (the AVX2 build
    /// enables no fused multiply-add and LLVM does not reassociate IEEE
    /// operations, so the two compute the same expressions), on seeded
    /// random data of lengths that are and are not multiples of the vector
    /// width and of `LOG_BLOCK`, with narrow, wide and far-apart components.
    #[test]
    fn avx2_and_generic_e_steps_agree_exactly() {
        #[cfg(target_arch = "x86_64")]
        {
            if !std::arch::is_x86_feature_detected!("avx2") {
                eprintln!("skipped: this CPU has no AVX2");
                return;
            }
            let mut rng = ChaCha8Rng::seed_from_u64(23);
            let models = [
                Gmm2 { weights: [0.3, 0.7], means: [-2.0, 1.5], sds: [0.5, 1.0] },
                Gmm2 { weights: [0.5, 0.5], means: [0.0, 0.0], sds: [1e-4, 1e3] },
                Gmm2 { weights: [1e-9, 1.0 - 1e-9], means: [-50.0, 50.0], sds: [0.1, 0.1] },
            ];
            for g in &models {
                for n in [1usize, 3, 4, 5, 31, 32, 33, 1000, 1027] {
                    let x: Vec<f64> = (0..n)
                        .map(|_| {
                            let z: f64 = StandardNormal.sample(&mut rng);
                            z * 30.0
                        })
                        .collect();
                    // SAFETY: AVX2 is available, checked above.
                    let fast = unsafe { e_step_avx2(&x, g) };
                    let plain = e_step_generic(&x, g);
                    let bits = |r: (f64, [f64; 2], [f64; 2], [f64; 2])| {
                        [r.0, r.1[0], r.1[1], r.2[0], r.2[1], r.3[0], r.3[1]].map(f64::to_bits)
                    };
                    assert_eq!(bits(fast), bits(plain), "n = {n}, {g:?}");
                }
            }
        }
    }

    #[test]
    fn recovers_known_parameters() {
        let truth = Gmm2 { weights: [0.3, 0.7], means: [-2.0, 1.5], sds: [0.5, 1.0] };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let x: Vec<f64> = (0..20_000)
            .map(|_| {
                let j = usize::from(rng.random::<f64>() >= truth.weights[0]);
                let z: f64 = StandardNormal.sample(&mut rng);
                truth.means[j] + truth.sds[j] * z
            })
            .collect();
        let fit = Gmm2::fit(&x, &EmOptions::default()).unwrap();
        let g = fit.model;
        for j in 0..2 {
            assert!((g.weights[j] - truth.weights[j]).abs() < 0.02, "{g:?}");
            assert!((g.means[j] - truth.means[j]).abs() < 0.05, "{g:?}");
            assert!((g.sds[j] - truth.sds[j]).abs() < 0.05, "{g:?}");
        }
        // The likelihood at the fit beats the truth's (it is the MLE).
        let ll_true: f64 = x.iter().map(|&v| truth.log_density(v)).sum();
        assert!(fit.log_likelihood >= ll_true - 1e-6);
        let ll_fit: f64 = x.iter().map(|&v| g.log_density(v)).sum();
        assert!((ll_fit - fit.log_likelihood).abs() < 1e-6 * ll_fit.abs());
    }

    #[test]
    fn degenerate_data_do_not_collapse() {
        let x = vec![3.0; 50];
        let g = Gmm2::fit(&x, &EmOptions::default()).unwrap().model;
        assert!(g.sds.iter().all(|s| *s > 0.0 && s.is_finite()));
        assert!(Gmm2::fit(&[1.0], &EmOptions::default()).is_err());
        assert!(Gmm2::fit(&[1.0, f64::NAN], &EmOptions::default()).is_err());
    }
}
