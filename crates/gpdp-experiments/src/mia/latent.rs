//! The latent tanh mixture for f̂ (paper App. C) and its maximum-likelihood fit.
//!
//! **Model.** φ ~ Σ_j ω_j N(m_j, τ_j²) (two components), U = tanh(φ/2) ∈ (−1, 1),
//! observed f̂ = U + η with η ~ N(0, s²). Its density is
//!
//! ```text
//! ρ(t) = Σ_j ω_j ∫ N(t; tanh((m_j + τ_j z)/2), s²) · N(z; 0, 1) dz.
//! ```
//!
//! **Quadrature.** The integrand in z has two length scales: the standard
//! normal itself (scale 1) and the kernel N(t; u(z), s²), whose scale in z is
//! s/u'(z) with u'(z) = τ_j(1 − u²)/2 — tiny when s is small and the
//! component is wide. A fixed rule (the authors' 40-node Gauss–Legendre on
//! u ∈ (−1, 1)) resolves neither a narrow component nor a narrow kernel. We
//! instead use, per component, the **trapezoid rule in the stretched
//! variable**
//!
//! ```text
//! ζ(z) = z/Δz_max + (c/s)·tanh(φ/2) + (Φ_c/Δφ)·atan(φ/Φ_c),   φ = m_j + τ_j z,   z ∈ [−Z, Z],
//! ```
//!
//! Z = 8.5, with unit steps in ζ (nodes z_k solve ζ(z_k) = ζ(−Z) + k·h,
//! h ≤ 1, weights N(z_k; 0, 1)·h/ζ'(z_k), renormalised to sum to 1 so that
//! ρ integrates to 1 exactly). The three terms bound the node spacing by
//! Δz_max = 0.7 in z (the Gaussian), by s/c in u (the kernel, c = 1.25
//! points per standard deviation, where the trapezoid rule converges like
//! exp(−2π²c²) ≈ 4e-14), and by Δφ = 0.5·(1 + (φ/Φ_c)²) in φ, Φ_c =
//! 2·ln(100/s): fine where tanh is not yet saturated — the zone that
//! carries the poles of tanh (φ = ±iπ) and, for t just outside (−1, 1), the
//! latent mass near ±1 that ρ(t) is made of — and gradually coarser beyond
//! (a Lorentzian profile: an abrupt change of spacing would put a corner
//! into the map and cost accuracy). The number of nodes is about
//! 24 + (c/s)·(u(Z) − u(−Z)) + min(34τ_j, 6.3Φ_c) — e.g. 40 for a narrow
//! component, 150 for τ = 1.5 and s = 0.03, 95 for τ = 15 and s = 0.5 —
//! and each t
//! only needs the nodes with
//! |u_k − t| ≤ 8s (the rest contribute < e⁻³² relative to the peak); a
//! point whose truncated sum is below 1e-6 of the kernel peak (an outlier)
//! is evaluated over all nodes in log space.
//!
//! Accuracy (test `quadrature_matches_a_brute_force_reference`, against
//! converged Simpson integration, for wide, narrow and saturated latent
//! components (τ from 1e-3 to 19), pile-up at u = ±1, s from 1e-3 to 5):
//! relative error < 1e-9 (measured 1.4e-10) wherever ρ(t) ≥ 1e-8·(peak
//! 1/(s√2π)); further out, where ρ can be dominated by latent mass beyond
//! |z| = 8.5, the absolute error is < 1e-16·peak (measured 2e-19). ρ integrates to 1 to 1e-9 (test
//! `density_integrates_to_one`; the weights sum to 1 exactly) and matches a
//! χ² test against 2·10⁵ draws of the generative model.
//!
//! The rule depends on (m, τ, s) and is rebuilt at every evaluation; the
//! gradient is the same rule applied to the analytic derivative of the
//! integrand, which equals the derivative of ρ to the rule's accuracy.
//!
//! **Fit.** Parameters θ = (a, μ₁, μ₂, b₁, b₂, c) with ω₁ = 1/(1 + e⁻ᵃ),
//! m_j = 30·tanh(μ_j/30), τ_j = τ_min + (20 − τ_min)/(1 + e^{−b_j}),
//! s = s_min + eᶜ (floors from [`FitOptions`]). The bounds |m_j| < 30 and
//! τ_j < 20 only remove flat directions: a component further out is
//! within 1e-13 of a point mass at u = ±1, and letting it drift (as it
//! otherwise does) only makes the quadrature rule grow.
//! Objective: −(1/N)·Σ log ρ(t_i), minimised by L-BFGS with analytic
//! gradients from several starts (see [`fit_latent`]).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;
use serde::Serialize;

use super::config::FitOptions;
use super::gmm::{EmOptions, Gmm2};
use super::numeric::{LN_SQRT_2PI, exp_neg, mean_var, quantile_sorted};
use super::optim::{LbfgsOptions, minimize};
use crate::error::{Error, Result};

/// Half-width of the z range (mass outside: 2Φ(−8.5) ≈ 2e-17).
const Z_MAX: f64 = 8.5;
/// Nodes per kernel standard deviation (in u).
const RESOLUTION: f64 = 1.25;
/// Largest node spacing in z.
const DZ_MAX: f64 = 0.7;
/// Largest node spacing in φ = m + τz where tanh(φ/2) is not saturated.
const DPHI: f64 = 0.5;
/// Kernel window half-width in units of s.
const WINDOW: f64 = 8.0;
/// A windowed sum below this fraction of the kernel peak is recomputed in full.
const FALLBACK: f64 = 1e-6;
/// Points of the subsample on which the starts are screened.
const SCREEN_POINTS: usize = 2000;
/// Hard cap on nodes per component.
const MAX_NODES: usize = 1 << 16;

/// The fitted density model of f̂.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatentTanhMixture {
    /// ω_j (sum to 1).
    pub weights: [f64; 2],
    /// Latent means m_j.
    pub means: [f64; 2],
    /// Latent standard deviations τ_j > 0.
    pub sds: [f64; 2],
    /// Observation noise standard deviation s > 0.
    pub obs_sd: f64,
}

/// Quadrature nodes of one component.
#[derive(Debug, Clone, Default)]
struct Nodes {
    z: Vec<f64>,
    w: Vec<f64>,
    u: Vec<f64>,
}

impl Nodes {
    /// Builds the stretched trapezoid rule for N(m, τ²) pushed through
    /// tanh(·/2), resolving kernel scale s.
    fn build(&mut self, m: f64, tau: f64, s: f64) {
        let a = 1.0 / DZ_MAX;
        let b = RESOLUTION / s;
        // φ-resolution zone |φ| ≲ Φ_c (beyond it u is within 2e^{−Φ_c} of ±1).
        let phi_c = 2.0 * (100.0 / s).ln().max(1.0);
        let cz = phi_c / DPHI;
        let zeta = |z: f64| {
            let phi = m + tau * z;
            a * z + b * (phi * 0.5).tanh() + cz * (phi / phi_c).atan()
        };
        let dzeta = |z: f64| {
            let phi = m + tau * z;
            let u = (phi * 0.5).tanh();
            let v = phi / phi_c;
            a + b * tau * 0.5 * (1.0 - u * u) + (tau / DPHI) / (1.0 + v * v)
        };
        let (lo, hi) = (zeta(-Z_MAX), zeta(Z_MAX));
        let k = ((hi - lo).ceil() as usize).clamp(2, MAX_NODES - 1);
        let h = (hi - lo) / k as f64;
        self.z.clear();
        self.w.clear();
        self.u.clear();
        let mut z = -Z_MAX;
        self.z.push(z);
        for i in 1..k {
            let target = lo + i as f64 * h;
            // Safeguarded Newton on the increasing ζ: ζ' ≥ a gives the bracket.
            let (mut zl, mut zh) = (z, (z + h / a).min(Z_MAX));
            let mut zn = z + h / dzeta(z);
            for _ in 0..60 {
                if !(zn > zl && zn < zh) {
                    zn = 0.5 * (zl + zh);
                }
                let f = zeta(zn) - target;
                if f.abs() <= 1e-12 * (1.0 + target.abs()) {
                    break;
                }
                if f < 0.0 {
                    zl = zn;
                } else {
                    zh = zn;
                }
                zn -= f / dzeta(zn);
                if zh - zl <= 1e-15 {
                    break;
                }
            }
            z = zn;
            self.z.push(z);
        }
        self.z.push(Z_MAX);
        let mut total = 0.0;
        for (i, &z) in self.z.iter().enumerate() {
            let end = if i == 0 || i == k { 0.5 } else { 1.0 };
            let w = end * h * (-0.5 * z * z).exp() / dzeta(z);
            total += w;
            self.w.push(w);
            self.u.push(((m + tau * z) * 0.5).tanh());
        }
        for w in &mut self.w {
            *w /= total;
        }
    }
}

/// The rule for all components.
#[derive(Debug, Clone, Default)]
struct Rule {
    comp: [Nodes; 2],
}

impl Rule {
    fn build(&mut self, p: &LatentTanhMixture) {
        for j in 0..2 {
            self.comp[j].build(p.means[j], p.sds[j], p.obs_sd);
        }
    }
}

impl LatentTanhMixture {
    /// Checks the parameters (weights in [0, 1] summing to 1, finite means,
    /// positive finite scales).
    pub fn validate(&self) -> Result<()> {
        let ok = self.weights.iter().all(|w| (0.0..=1.0).contains(w))
            && ((self.weights[0] + self.weights[1]) - 1.0).abs() < 1e-12
            && self.means.iter().all(|m| m.is_finite())
            && self.sds.iter().all(|s| s.is_finite() && *s > 0.0)
            && self.obs_sd.is_finite()
            && self.obs_sd > 0.0;
        if ok {
            Ok(())
        } else {
            Err(Error::InvalidInput { what: "latent tanh mixture", detail: format!("invalid parameters {self:?}") })
        }
    }

    /// log ρ(t) at every point of `t` (any order; non-finite points give NaN).
    pub fn log_density(&self, t: &[f64]) -> Vec<f64> {
        let mut rule = Rule::default();
        rule.build(self);
        let mut order: Vec<usize> = (0..t.len()).filter(|&i| t[i].is_finite()).collect();
        order.sort_unstable_by(|&a, &b| t[a].total_cmp(&t[b]));
        let mut out = vec![f64::NAN; t.len()];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            unsafe { log_density_avx2(self, &rule, t, &order, &mut out) };
            return out;
        }
        log_density_generic(self, &rule, t, &order, &mut out);
        out
    }

    /// One draw from the generative model.
    pub fn sample(&self, rng: &mut ChaCha8Rng) -> f64 {
        let j = usize::from(rng.random::<f64>() >= self.weights[0]);
        let z1: f64 = StandardNormal.sample(rng);
        let z2: f64 = StandardNormal.sample(rng);
        ((self.means[j] + self.sds[j] * z1) * 0.5).tanh() + self.obs_sd * z2
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn log_density_avx2(p: &LatentTanhMixture, rule: &Rule, t: &[f64], order: &[usize], out: &mut [f64]) {
    log_density_generic(p, rule, t, order, out);
}

/// log ρ at t[i] for i in `order` (sorted by t), windowed.
#[inline(always)]
fn log_density_generic(p: &LatentTanhMixture, rule: &Rule, t: &[f64], order: &[usize], out: &mut [f64]) {
    let s = p.obs_sd;
    let h2 = 0.5 / (s * s);
    let half = WINDOW * s;
    let mut lo = [0usize; 2];
    let mut hi = [0usize; 2];
    for &i in order {
        let ti = t[i];
        let mut tot = 0.0;
        for j in 0..2 {
            let c = &rule.comp[j];
            while lo[j] < c.u.len() && c.u[lo[j]] < ti - half {
                lo[j] += 1;
            }
            hi[j] = hi[j].max(lo[j]);
            while hi[j] < c.u.len() && c.u[hi[j]] <= ti + half {
                hi[j] += 1;
            }
            let mut acc = 0.0;
            for k in lo[j]..hi[j] {
                let d = ti - c.u[k];
                acc += c.w[k] * exp_neg(-d * d * h2);
            }
            tot += p.weights[j] * acc;
        }
        out[i] = if tot >= FALLBACK {
            tot.ln() - s.ln() - LN_SQRT_2PI
        } else {
            full_log_sum(rule, &p.weights, ti, h2) - s.ln() - LN_SQRT_2PI
        };
    }
}

/// ln Σ_j ω_j Σ_k w_k·exp(−(t − u_k)²·h2) over all nodes.
fn full_log_sum(rule: &Rule, weights: &[f64; 2], t: f64, h2: f64) -> f64 {
    let mut m = f64::NEG_INFINITY;
    for (j, c) in rule.comp.iter().enumerate() {
        for k in 0..c.u.len() {
            let d = t - c.u[k];
            m = m.max((weights[j] * c.w[k]).ln() - d * d * h2);
        }
    }
    if m == f64::NEG_INFINITY {
        return m;
    }
    let mut s = 0.0;
    for (j, c) in rule.comp.iter().enumerate() {
        for k in 0..c.u.len() {
            let d = t - c.u[k];
            s += ((weights[j] * c.w[k]).ln() - d * d * h2 - m).exp();
        }
    }
    m + s.ln()
}

/// The windowed kernel terms of one point t: e_k = w_k·exp(−(t − u_k)²·h2)
/// and ed_k = e_k·(t − u_k) into the buffers; returns (Σ e_k, Σ e_k·(t − u_k)²).
/// Written so that the first loop vectorises; four partial sums.
#[inline(always)]
fn kernel_terms(t: f64, u: &[f64], w: &[f64], h2: f64, e: &mut [f64], ed: &mut [f64]) -> (f64, f64) {
    let n = u.len();
    let (w, e, ed) = (&w[..n], &mut e[..n], &mut ed[..n]);
    for k in 0..n {
        let d = t - u[k];
        let ek = w[k] * exp_neg(-d * d * h2);
        e[k] = ek;
        ed[k] = ek * d;
    }
    let mut si = [0.0f64; 4];
    let mut sa = [0.0f64; 4];
    let mut k = 0;
    while k + 4 <= n {
        for l in 0..4 {
            si[l] += e[k + l];
            sa[l] += ed[k + l] * (t - u[k + l]);
        }
        k += 4;
    }
    while k < n {
        si[0] += e[k];
        sa[0] += ed[k] * (t - u[k]);
        k += 1;
    }
    ((si[0] + si[1]) + (si[2] + si[3]), (sa[0] + sa[1]) + (sa[2] + sa[3]))
}

/// Bound on the latent means |m_j| (tanh(15) = 1 − 2e-13).
const MEAN_MAX: f64 = 30.0;
/// Bound on the latent standard deviations τ_j.
const SD_MAX: f64 = 20.0;

/// Map from the unconstrained θ to the model, with the floors and bounds.
#[derive(Debug, Clone, Copy)]
struct Param {
    tau_min: f64,
    s_min: f64,
}

impl Param {
    fn model(&self, th: &[f64]) -> LatentTanhMixture {
        let w1 = sigmoid(th[0]);
        let span = SD_MAX - self.tau_min;
        LatentTanhMixture {
            weights: [w1, 1.0 - w1],
            means: [MEAN_MAX * (th[1] / MEAN_MAX).tanh(), MEAN_MAX * (th[2] / MEAN_MAX).tanh()],
            sds: [self.tau_min + span * sigmoid(th[3]), self.tau_min + span * sigmoid(th[4])],
            obs_sd: self.s_min + th[5].exp(),
        }
    }

    /// d(model)/dθ for the mean, sd and noise coordinates (diagonal).
    fn jacobian(&self, p: &LatentTanhMixture) -> [f64; 6] {
        let span = SD_MAX - self.tau_min;
        let dm = |m: f64| 1.0 - (m / MEAN_MAX) * (m / MEAN_MAX);
        let dt = |t: f64| (t - self.tau_min) * (1.0 - (t - self.tau_min) / span);
        [p.weights[0] * p.weights[1], dm(p.means[0]), dm(p.means[1]), dt(p.sds[0]), dt(p.sds[1]), p.obs_sd - self.s_min]
    }

    fn theta(&self, p: &LatentTanhMixture) -> [f64; 6] {
        let logit = |x: f64| {
            let x = x.clamp(1e-12, 1.0 - 1e-12);
            (x / (1.0 - x)).ln()
        };
        let span = SD_MAX - self.tau_min;
        let mean = |m: f64| MEAN_MAX * (m / MEAN_MAX).clamp(-1.0 + 1e-12, 1.0 - 1e-12).atanh();
        [
            logit(p.weights[0]),
            mean(p.means[0]),
            mean(p.means[1]),
            logit((p.sds[0] - self.tau_min) / span),
            logit((p.sds[1] - self.tau_min) / span),
            (p.obs_sd - self.s_min).max(1e-12).ln(),
        ]
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Negative mean log-likelihood and its gradient, with reusable buffers.
struct Objective<'a> {
    t: &'a [f64],
    param: Param,
    rule: Rule,
    grad_u: [Vec<f64>; 2],
    e: [Vec<f64>; 2],
    ed: [Vec<f64>; 2],
    evaluations: usize,
}

impl<'a> Objective<'a> {
    fn new(sorted: &'a [f64], param: Param) -> Self {
        Objective {
            t: sorted,
            param,
            rule: Rule::default(),
            grad_u: [Vec::new(), Vec::new()],
            e: [Vec::new(), Vec::new()],
            ed: [Vec::new(), Vec::new()],
            evaluations: 0,
        }
    }

    fn eval(&mut self, th: &[f64], grad: &mut [f64]) -> f64 {
        self.evaluations += 1;
        if th.iter().any(|v| !v.is_finite()) {
            return f64::INFINITY;
        }
        let p = self.param.model(th);
        let s = p.obs_sd;
        if !(s.is_finite() && p.sds.iter().all(|v| v.is_finite())) {
            return f64::INFINITY;
        }
        self.rule.build(&p);
        let h2 = 0.5 / (s * s);
        let half = WINDOW * s;
        let om = p.weights;
        for j in 0..2 {
            self.grad_u[j].clear();
            self.grad_u[j].resize(self.rule.comp[j].u.len(), 0.0);
        }
        for j in 0..2 {
            let len = self.rule.comp[j].u.len();
            self.e[j].resize(len, 0.0);
            self.ed[j].resize(len, 0.0);
        }
        let mut pass = Pass {
            t: self.t,
            rule: &self.rule,
            om,
            h2,
            half,
            e: &mut self.e,
            ed: &mut self.ed,
            grad_u: &mut self.grad_u,
        };
        let (ll, g_s, g_w) = pass.run();
        let n = self.t.len() as f64;
        let s2 = s * s;
        // d(mean log ρ)/d(s) = [Σ_k A_k/s³ − N/s]/N (the −ln s of the normaliser).
        let dlog_ds = g_s / (s2 * s) - n / s;
        let mut dm = [0.0; 2];
        let mut dt = [0.0; 2];
        for j in 0..2 {
            let c = &self.rule.comp[j];
            for k in 0..c.u.len() {
                let du = self.grad_u[j][k] / s2 * 0.5 * (1.0 - c.u[k] * c.u[k]);
                dm[j] += du;
                dt[j] += du * c.z[k];
            }
        }
        let value = -(ll / n - s.ln() - LN_SQRT_2PI);
        let jac = self.param.jacobian(&p);
        grad[0] = -g_w * jac[0] / n;
        grad[1] = -dm[0] * jac[1] / n;
        grad[2] = -dm[1] * jac[2] / n;
        grad[3] = -dt[0] * jac[3] / n;
        grad[4] = -dt[1] * jac[4] / n;
        grad[5] = -dlog_ds * jac[5] / n;
        value
    }
}

/// One pass over the (sorted) data: Σ ln Σ ω w e, Σ (A/tot) and ∂/∂ω₁, with
/// ∂/∂u accumulated into `grad_u` (before the 1/s² factor).
struct Pass<'p> {
    t: &'p [f64],
    rule: &'p Rule,
    om: [f64; 2],
    h2: f64,
    half: f64,
    e: &'p mut [Vec<f64>; 2],
    ed: &'p mut [Vec<f64>; 2],
    grad_u: &'p mut [Vec<f64>; 2],
}

impl Pass<'_> {
    /// Runs the pass, with AVX2 code generation where the CPU has it. No
    /// fused multiply-add is used, so both paths give identical results.
    fn run(&mut self) -> (f64, f64, f64) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { self.run_avx2() };
        }
        self.run_generic()
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn run_avx2(&mut self) -> (f64, f64, f64) {
        self.run_generic()
    }

    #[inline(always)]
    fn run_generic(&mut self) -> (f64, f64, f64) {
        let (om, h2, half) = (self.om, self.h2, self.half);
        let (mut ll, mut g_s, mut g_w) = (0.0, 0.0, 0.0);
        let mut lo = [0usize; 2];
        let mut hi = [0usize; 2];
        for &t in self.t {
            let mut sum_i = [0.0f64; 2];
            let mut sum_a = [0.0f64; 2];
            for j in 0..2 {
                let c = &self.rule.comp[j];
                while lo[j] < c.u.len() && c.u[lo[j]] < t - half {
                    lo[j] += 1;
                }
                hi[j] = hi[j].max(lo[j]);
                while hi[j] < c.u.len() && c.u[hi[j]] <= t + half {
                    hi[j] += 1;
                }
                let len = hi[j] - lo[j];
                (sum_i[j], sum_a[j]) = kernel_terms(
                    t,
                    &c.u[lo[j]..hi[j]],
                    &c.w[lo[j]..hi[j]],
                    h2,
                    &mut self.e[j][..len],
                    &mut self.ed[j][..len],
                );
            }
            let tot = om[0] * sum_i[0] + om[1] * sum_i[1];
            if tot >= FALLBACK {
                let g = 1.0 / tot;
                ll += tot.ln();
                g_s += (om[0] * sum_a[0] + om[1] * sum_a[1]) * g;
                g_w += (sum_i[0] - sum_i[1]) * g;
                for j in 0..2 {
                    let f = om[j] * g;
                    let gu = &mut self.grad_u[j][lo[j]..hi[j]];
                    let ed = &self.ed[j][..gu.len()];
                    for (acc, b) in gu.iter_mut().zip(ed) {
                        *acc += f * b;
                    }
                }
            } else {
                let (l, a, w) = self.outlier(t);
                ll += l;
                g_s += a;
                g_w += w;
            }
        }
        (ll, g_s, g_w)
    }

    /// Log-space contribution of an outlier: (ln Σ ω w e, Σ r·d², ∂/∂ω₁),
    /// adding r·d to `grad_u`.
    fn outlier(&mut self, t: f64) -> (f64, f64, f64) {
        let om = self.om;
        let lse = full_log_sum(self.rule, &om, t, self.h2);
        let (mut a, mut r_comp) = (0.0, [0.0; 2]);
        for j in 0..2 {
            let c = &self.rule.comp[j];
            for k in 0..c.u.len() {
                let d = t - c.u[k];
                let r = ((om[j] * c.w[k]).ln() - d * d * self.h2 - lse).exp();
                a += r * d * d;
                r_comp[j] += r;
                self.grad_u[j][k] += r * d;
            }
        }
        let dw = if om[0] > 0.0 && om[1] > 0.0 { r_comp[0] / om[0] - r_comp[1] / om[1] } else { 0.0 };
        (lse, a, dw)
    }
}

/// A fitted latent mixture.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatentFit {
    /// The model (components sorted by latent mean).
    pub model: LatentTanhMixture,
    /// Σ_i log ρ(t_i).
    pub log_likelihood: f64,
    /// Objective evaluations over all starts (screening ones on the subsample).
    pub evaluations: usize,
    /// L-BFGS iterations of the winning run (screening included).
    pub iterations: usize,
    /// Whether the winning run met a tolerance.
    pub converged: bool,
}

/// Starting points: an EM fit of a two-component mixture to the latent
/// proxies 2·atanh(clip(t)), at two noise levels; a broad unimodal start;
/// then random perturbations of the first two.
fn starts(sorted: &[f64], opts: &FitOptions, param: &Param, rng: &mut ChaCha8Rng) -> Vec<[f64; 6]> {
    let n = sorted.len();
    let (_, var_t) = mean_var(sorted);
    let sd_t = var_t.sqrt().max(1e-6);
    let clip = 1.0 - 1e-6;
    let phi: Vec<f64> = sorted.iter().map(|&t| 2.0 * t.clamp(-clip, clip).atanh()).collect();
    let (_, var_phi) = mean_var(&phi);
    let em = Gmm2::fit(&phi, &EmOptions { restarts: 2, max_iterations: 200, variance_floor: 1e-6 }).ok();
    // Fraction of |t| > 1 hints at the noise level: under U ∈ (−1, 1) it is
    // only reached through η.
    let outside = sorted.iter().filter(|t| t.abs() > 1.0).count() as f64 / n as f64;
    let s_lo = (0.1 * sd_t).max(2.0 * opts.min_obs_sd);
    let s_hi = (0.5 * sd_t).max(if outside > 0.05 { 0.5 * sd_t } else { 0.05 }).max(2.0 * opts.min_obs_sd);
    let base = |s: f64| -> [f64; 6] {
        let g = em.map(|f| f.model).unwrap_or(Gmm2 {
            weights: [0.5, 0.5],
            means: [quantile_sorted(&phi, 0.25), quantile_sorted(&phi, 0.75)],
            sds: [var_phi.sqrt().max(0.1); 2],
        });
        param.theta(&LatentTanhMixture {
            weights: g.weights,
            means: g.means,
            sds: [g.sds[0].max(2.0 * opts.min_latent_sd), g.sds[1].max(2.0 * opts.min_latent_sd)],
            obs_sd: s,
        })
    };
    let broad = param.theta(&LatentTanhMixture {
        weights: [0.5, 0.5],
        means: [quantile_sorted(&phi, 0.25), quantile_sorted(&phi, 0.75)],
        sds: [var_phi.sqrt().max(0.1); 2],
        obs_sd: (0.25 * sd_t).max(2.0 * opts.min_obs_sd),
    });
    let mut out = vec![base(s_lo), base(s_hi), broad];
    let sd = [0.5, 0.5, 0.5, 0.25, 0.25, 0.5];
    while out.len() < opts.restarts {
        let mut th = out[out.len() % 2];
        for (v, sdi) in th.iter_mut().zip(sd) {
            let z: f64 = StandardNormal.sample(rng);
            *v += sdi * z;
        }
        out.push(th);
    }
    out.truncate(opts.restarts);
    out
}

/// Fits the latent tanh mixture to `t` by maximum likelihood.
///
/// Every start (see `FitOptions::restarts`) gets `screen_iterations` L-BFGS
/// iterations on an evenly strided subsample of at most 2000 of the sorted
/// values; the `refine` best are then run on all the data to convergence
/// (‖∇‖_∞ ≤ 1e-6 on the mean negative log-likelihood, or a relative
/// decrease below 1e-10 in one iteration, or `max_iterations`). Starts run in parallel; the
/// winner is the lowest objective, ties broken by start index, so the result
/// does not depend on the thread count. `rng` only draws the perturbed starts.
pub fn fit_latent(t: &[f64], opts: &FitOptions, rng: &mut ChaCha8Rng) -> Result<LatentFit> {
    if t.len() < 10 || t.iter().any(|v| !v.is_finite()) {
        return Err(Error::InvalidInput {
            what: "latent-mixture fit",
            detail: format!("needs at least 10 finite values (got {})", t.len()),
        });
    }
    let mut sorted = t.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let param = Param { tau_min: opts.min_latent_sd, s_min: opts.min_obs_sd };
    let x0 = starts(&sorted, opts, &param, rng);
    let tol = LbfgsOptions { gtol: 1e-6, ftol: 1e-10, ..LbfgsOptions::default() };
    let screen = LbfgsOptions { max_iterations: opts.screen_iterations, ..tol };
    // Screening runs on an evenly strided subsample of the sorted data.
    let stride = sorted.len().div_ceil(SCREEN_POINTS);
    let sub: Vec<f64> = sorted.iter().step_by(stride).copied().collect();
    let run = |data: &[f64], x: &[f64], o: &LbfgsOptions| {
        let mut obj = Objective::new(data, param);
        let r = minimize(|th, g| obj.eval(th, g), x, o);
        (r, obj.evaluations)
    };
    let mut screened: Vec<(usize, Vec<f64>, f64, usize, usize, bool)> = x0
        .par_iter()
        .enumerate()
        .map(|(i, x)| {
            let (r, e) = if opts.screen_iterations > 0 {
                run(&sub, x, &screen)
            } else {
                let mut obj = Objective::new(&sub, param);
                let mut g = [0.0; 6];
                let f = obj.eval(x, &mut g);
                (super::optim::LbfgsResult { x: x.to_vec(), f, iterations: 0, evaluations: 1, converged: false }, 1)
            };
            (i, r.x, r.f, e, r.iterations, r.converged)
        })
        .collect();
    let mut evaluations: usize = screened.iter().map(|s| s.3).sum();
    screened.retain(|s| s.2.is_finite());
    if screened.is_empty() {
        return Err(Error::Fit("no starting point has a finite likelihood".into()));
    }
    screened.sort_by(|a, b| a.2.total_cmp(&b.2).then(a.0.cmp(&b.0)));
    screened.truncate(opts.refine);
    let full = LbfgsOptions { max_iterations: opts.max_iterations, ..tol };
    let refined: Vec<(usize, Vec<f64>, f64, usize, usize, bool)> = screened
        .par_iter()
        .map(|(i, x, _, _, it, _)| {
            let (r, e) = run(&sorted, x, &full);
            (*i, r.x, r.f, e, it + r.iterations, r.converged)
        })
        .collect();
    evaluations += refined.iter().map(|r| r.3).sum::<usize>();
    let best = refined
        .into_iter()
        .filter(|r| r.2.is_finite())
        .min_by(|a, b| a.2.total_cmp(&b.2).then(a.0.cmp(&b.0)))
        .ok_or_else(|| Error::Fit("every refined start diverged".into()))?;
    let mut model = param.model(&best.1);
    if model.means[1] < model.means[0] {
        model.weights.swap(0, 1);
        model.means.swap(0, 1);
        model.sds.swap(0, 1);
    }
    let n = sorted.len() as f64;
    Ok(LatentFit { model, log_likelihood: -best.2 * n, evaluations, iterations: best.4, converged: best.5 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// The AVX2 and generic density paths agree bit for bit: the AVX2 build
    /// enables no fused multiply-add and LLVM does not reassociate IEEE
    /// operations, so both evaluate the same expressions. Seeded random
    /// points (including extreme and non-finite ones, and lengths that are
    /// not multiples of the vector width) under narrow and wide mixtures.
    #[test]
    fn avx2_and_generic_densities_agree_exactly() {
        #[cfg(target_arch = "x86_64")]
        {
            use rand::RngExt;
            if !std::arch::is_x86_feature_detected!("avx2") {
                eprintln!("skipped: this CPU has no AVX2");
                return;
            }
            let mut rng = ChaCha8Rng::seed_from_u64(29);
            let models = [
                LatentTanhMixture { weights: [0.4, 0.6], means: [-1.0, 2.0], sds: [0.5, 1.5], obs_sd: 0.2 },
                LatentTanhMixture { weights: [0.5, 0.5], means: [0.0, 0.0], sds: [1e-3, 8.0], obs_sd: 1e-3 },
                LatentTanhMixture { weights: [1e-6, 1.0 - 1e-6], means: [-6.0, 6.0], sds: [0.05, 0.05], obs_sd: 3.0 },
            ];
            for p in &models {
                for n in [1usize, 3, 4, 7, 64, 257] {
                    let mut t: Vec<f64> = (0..n).map(|_| rng.random_range(-3.0..3.0)).collect();
                    if n > 3 {
                        t[0] = 1e6;
                        t[1] = -1.0;
                        t[2] = f64::NAN;
                    }
                    let mut rule = Rule::default();
                    rule.build(p);
                    let mut order: Vec<usize> = (0..t.len()).filter(|&i| t[i].is_finite()).collect();
                    order.sort_unstable_by(|&a, &b| t[a].total_cmp(&t[b]));
                    let (mut fast, mut plain) = (vec![f64::NAN; n], vec![f64::NAN; n]);
                    // SAFETY: AVX2 is available, checked above.
                    unsafe { log_density_avx2(p, &rule, &t, &order, &mut fast) };
                    log_density_generic(p, &rule, &t, &order, &mut plain);
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&fast), bits(&plain), "n = {n}, {p:?}");
                    assert!(order.iter().all(|&i| plain[i].is_finite() || plain[i] == f64::NEG_INFINITY));
                }
            }
        }
    }

    /// ρ(t) by brute force: per component, composite Simpson in z over
    /// the part of [−9, 9] where the kernel is above e⁻⁸⁰⁰ (|t − u| ≤ 40s),
    /// refined until stable.
    fn reference(p: &LatentTanhMixture, t: f64) -> f64 {
        let mut total = 0.0;
        for j in 0..2 {
            let (m, tau, s) = (p.means[j], p.sds[j], p.obs_sd);
            let z_of = |u: f64| {
                if u <= -1.0 {
                    -9.0
                } else if u >= 1.0 {
                    9.0
                } else {
                    ((2.0 * u.atanh() - m) / tau).clamp(-9.0, 9.0)
                }
            };
            let (a, b) = (z_of(t - 40.0 * s), z_of(t + 40.0 * s));
            if b <= a {
                continue;
            }
            let f = |z: f64| {
                let d = (t - ((m + tau * z) * 0.5).tanh()) / s;
                (-0.5 * d * d - 0.5 * z * z).exp()
            };
            let simpson = |n: usize| {
                let h = (b - a) / n as f64;
                let mut acc = f(a) + f(b);
                for k in 1..n {
                    acc += f(a + k as f64 * h) * if k % 2 == 1 { 4.0 } else { 2.0 };
                }
                acc * h / 3.0
            };
            let mut n = 2000;
            let mut last = simpson(n);
            loop {
                n *= 2;
                let next = simpson(n);
                if (next - last).abs() <= 1e-13 * next.abs() || n > 4_000_000 {
                    last = next;
                    break;
                }
                last = next;
            }
            total += p.weights[j] * last;
        }
        total / (2.0 * std::f64::consts::PI * p.obs_sd) // 1/(s√2π) · 1/√(2π)
    }

    fn models() -> Vec<LatentTanhMixture> {
        let mk = |w: f64, m: [f64; 2], t: [f64; 2], s: f64| LatentTanhMixture {
            weights: [w, 1.0 - w],
            means: m,
            sds: t,
            obs_sd: s,
        };
        vec![
            // Typical out-distribution: wide, centred.
            mk(0.5, [-0.8, 0.9], [1.2, 1.5], 0.1),
            // Typical in-distribution at small r: narrow, near u = 1.
            mk(0.7, [4.5, 5.5], [0.2, 0.4], 0.03),
            // Narrow kernel, wide latent spread with pile-up at ±1.
            mk(0.4, [0.0, 1.0], [3.0, 5.0], 0.01),
            // Very narrow latent, moderate noise.
            mk(0.5, [-1.0, 2.0], [0.002, 0.01], 0.05),
            // Large noise (σ large).
            mk(0.3, [0.5, 3.0], [0.7, 0.3], 5.0),
            // Floors.
            mk(0.5, [0.2, -0.3], [1e-3, 2.0], 1e-3),
            // Very wide (saturated) latent components, large and small noise.
            mk(0.5, [0.0, 20.0], [15.0, 19.0], 0.5),
            mk(0.6, [-3.0, 1.0], [8.0, 0.05], 2.0),
            mk(0.5, [0.0, 2.0], [19.0, 10.0], 0.02),
        ]
    }

    #[test]
    fn quadrature_matches_a_brute_force_reference() {
        // Relative error ≤ 1e-9 where ρ ≥ 1e-8 of the kernel peak 1/(s√2π)
        // (the bulk and the usable tails). Further out, ρ can be dominated by
        // latent mass beyond |z| = 8.5 (2e-17 in total), which the rule
        // truncates: there the error is bounded in absolute terms, by 1e-16
        // of the peak.
        let (mut worst_rel, mut worst_abs): (f64, f64) = (0.0, 0.0);
        for p in models() {
            let peak = 1.0 / (p.obs_sd * (2.0 * std::f64::consts::PI).sqrt());
            let ts: Vec<f64> = (0..=28).map(|k| -1.4 + 2.8 * k as f64 / 28.0).chain([3.0, -6.0]).collect();
            let got = p.log_density(&ts);
            for (t, g) in ts.iter().zip(&got) {
                let r = reference(&p, *t);
                let err = (g.exp() - r).abs();
                if r >= 1e-8 * peak {
                    worst_rel = worst_rel.max(err / r);
                    assert!(err / r < 1e-9, "{p:?} t={t}: {} vs {r} (rel {:e})", g.exp(), err / r);
                } else {
                    worst_abs = worst_abs.max(err / peak);
                    assert!(err < 1e-16 * peak, "{p:?} t={t}: {} vs {r}", g.exp());
                }
            }
        }
        eprintln!(
            "worst relative error {worst_rel:e} (ρ ≥ 1e-8·peak); worst absolute error {worst_abs:e} × peak beyond"
        );
    }

    #[test]
    fn density_integrates_to_one() {
        for p in models() {
            // Trapezoid in t over the support, step ≤ s/4.
            let (lo, hi) = (-1.0 - 12.0 * p.obs_sd, 1.0 + 12.0 * p.obs_sd);
            let m = (((hi - lo) / (0.25 * p.obs_sd)).ceil() as usize).max(4000);
            let ts: Vec<f64> = (0..=m).map(|k| lo + (hi - lo) * k as f64 / m as f64).collect();
            let d = p.log_density(&ts);
            let h = (hi - lo) / m as f64;
            let integral: f64 =
                d.iter().enumerate().map(|(k, l)| l.exp() * if k == 0 || k == m { 0.5 * h } else { h }).sum();
            assert!((integral - 1.0).abs() < 1e-9, "{p:?}: {integral}");
        }
    }

    #[test]
    fn density_matches_a_histogram_of_its_own_model() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for p in [models()[0], models()[1], models()[2]] {
            let n = 200_000;
            let x: Vec<f64> = (0..n).map(|_| p.sample(&mut rng)).collect();
            let (lo, hi) = (-1.3, 1.3);
            let bins = 52;
            let w = (hi - lo) / bins as f64;
            let mut counts = vec![0usize; bins];
            for v in &x {
                if *v >= lo && *v < hi {
                    counts[((v - lo) / w) as usize] += 1;
                }
            }
            // Expected bin probabilities by fine quadrature of ρ.
            let sub = 40;
            let ts: Vec<f64> = (0..bins * sub).map(|k| lo + (k as f64 + 0.5) * w / sub as f64).collect();
            let d = p.log_density(&ts);
            let mut chi2 = 0.0;
            let mut dof = 0;
            for b in 0..bins {
                let prob: f64 = d[b * sub..(b + 1) * sub].iter().map(|l| l.exp() * w / sub as f64).sum();
                let e = prob * n as f64;
                if e >= 20.0 {
                    chi2 += (counts[b] as f64 - e).powi(2) / e;
                    dof += 1;
                }
            }
            // χ² with ~dof degrees of freedom: mean dof, sd √(2·dof).
            let z = (chi2 - dof as f64) / (2.0 * dof as f64).sqrt();
            assert!(z < 4.0, "{p:?}: χ² = {chi2} on {dof} bins");
        }
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let truth = models()[0];
        let t: Vec<f64> = {
            let mut v: Vec<f64> = (0..500).map(|_| truth.sample(&mut rng)).collect();
            v.push(2.5); // an outlier (log-space path)
            v.sort_unstable_by(f64::total_cmp);
            v
        };
        let param = Param { tau_min: 1e-3, s_min: 1e-3 };
        let mut obj = Objective::new(&t, param);
        let th = [0.3, -0.5, 1.1, 0.1, 0.4, (0.12f64).ln()];
        let mut g = [0.0; 6];
        obj.eval(&th, &mut g);
        let mut scratch = [0.0; 6];
        for k in 0..6 {
            let h = 1e-5;
            let (mut a, mut b) = (th, th);
            a[k] += h;
            b[k] -= h;
            let fd = (obj.eval(&a, &mut scratch) - obj.eval(&b, &mut scratch)) / (2.0 * h);
            assert!((fd - g[k]).abs() < 1e-6 * (1.0 + g[k].abs()), "θ{k}: analytic {} vs fd {fd}", g[k]);
        }
    }

    #[test]
    fn fit_recovers_known_parameters() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let truth = LatentTanhMixture { weights: [0.35, 0.65], means: [-1.5, 1.0], sds: [0.4, 0.6], obs_sd: 0.08 };
        let t: Vec<f64> = (0..20_000).map(|_| truth.sample(&mut rng)).collect();
        let fit = fit_latent(&t, &FitOptions::default(), &mut ChaCha8Rng::seed_from_u64(1)).unwrap();
        let m = fit.model;
        for j in 0..2 {
            assert!((m.weights[j] - truth.weights[j]).abs() < 0.03, "{fit:?}");
            assert!((m.means[j] - truth.means[j]).abs() < 0.08, "{fit:?}");
            assert!((m.sds[j] - truth.sds[j]).abs() < 0.08, "{fit:?}");
        }
        assert!((m.obs_sd - truth.obs_sd).abs() < 0.01, "{fit:?}");
        // It is a maximum: at least as likely as the truth.
        let ll_true: f64 = truth.log_density(&t).iter().sum();
        assert!(fit.log_likelihood >= ll_true - 1e-6, "{} < {ll_true}", fit.log_likelihood);
        let ll_fit: f64 = m.log_density(&t).iter().sum();
        assert!((ll_fit - fit.log_likelihood).abs() < 1e-6 * ll_fit.abs());
    }

    #[test]
    fn bad_input_is_an_error() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        assert!(fit_latent(&[0.1; 5], &FitOptions::default(), &mut rng).is_err());
        let mut v = vec![0.1; 50];
        v[3] = f64::NAN;
        assert!(fit_latent(&v, &FitOptions::default(), &mut rng).is_err());
    }
}
