//! Exact draws on a regular lattice: circulant embedding for the prior and
//! the pathwise (Matheron) update for the posterior (docs/sampling.md;
//! `docs/sampling.md` has the argument in full).
//!
//! When every query point and every training covariate lies on one regular
//! lattice G (1-D or 2-D), an exact prior draw g ~ GP(0, k) on G comes from
//! the circulant embedding of K(G, G) on a torus, by FFT, provided the
//! embedding is positive semidefinite. Then, with e ~ N(0, r²I) and
//! A = K(X, X) + r²I,
//!
//! ```text
//! z = g − K(·, X) A⁻¹ (g(X) + e)  ~ GP(0, k_D)        (Matheron's rule)
//! f = μ_D + σ·z + η·g₂ + √j·ξ,    g₂ ~ GP(0, k) another embedding draw,
//!                                 ξ ~ N(0, I) the public jitter
//! ```
//!
//! is an exact draw of the released process. μ_D − σ·K(·, X)A⁻¹(g(X) + e) =
//! K(·, X)(α − σv) with α = A⁻¹ȳ is computed by circular convolution on the
//! torus (two more FFTs), so no m × n matrix is ever formed. Cost per draw:
//! three FFTs on the torus and one n × n triangular solve pair, instead of
//! an O(m³) factorisation; memory O(torus + u²).
//!
//! # The embedding is built from public inputs only
//!
//! [`LatticePlan::new`] depends on the kernel and the lattice alone. It takes
//! the smallest FFT-friendly torus holding the lattice, then the next
//! 2,3,5-smooth sizes per axis (up to [`SMOOTH_STEPS`] tori in all, each below
//! twice the first), then doublings of the first (up to
//! [`MAX_ENLARGEMENTS`]), until no eigenvalue is negative beyond the
//! floating-point error of the FFT, ε_FFT = 8·u·(log₂M + 1)·Σ|c_k| (u the unit
//! roundoff, c the first row of the circulant, M its size). If that never
//! happens, the plan is refused and the caller uses another exact sampler —
//! a decision made before any data are seen. Eigenvalues within ε_FFT below
//! zero are set to zero: that changes the prior covariance by at most ε_FFT
//! in operator norm, the size of the error the FFT itself makes, and is the
//! only modification. Nothing is ever added to the prior field: a white-noise
//! shift of the prior would pass through the Matheron update as
//! σ²s·BBᵀ with B = E_Q − K(Q, X)A⁻¹E_X, a covariance term that depends on
//! the private covariates and that no argument covers. The public jitter j is
//! instead added to the released values, after the update, where it is
//! post-processing.

use std::sync::Arc;

use rustfft::num_complex::Complex64;
use rustfft::{Fft, FftPlanner};

use super::{Process, SampledPaths, Sampler, check_values};
use crate::error::{Error, Result};
use crate::model::draws::Draws;
use crate::model::kernel::Kernel;
use crate::model::points::Points;
use crate::model::query::axis_point;
use crate::rng::ReleaseRng;

#[cfg(test)]
thread_local! {
    /// Mutation check (tests only): flips the sign of the Matheron
    /// correction σ·v, which the statistical test must detect.
    static MUTATE_UPDATE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn mutated() -> bool {
    #[cfg(test)]
    {
        MUTATE_UPDATE.with(|m| m.get())
    }
    #[cfg(not(test))]
    {
        false
    }
}

/// How many times the torus is doubled, at most, to make the embedding
/// positive semidefinite.
pub const MAX_ENLARGEMENTS: usize = 4;

/// Tori tried per doubling of the torus: sizes grow by 2^(1/STEPS_PER_OCTAVE)
/// per step, so that an embedding positive semidefinite at, say, 1.2 times
/// the smallest torus is found there instead of at twice it.
pub const STEPS_PER_OCTAVE: usize = 4;

/// The tori tried, in order: the smallest 2,3,5-smooth size ≥ 2(n_j − 1) per
/// axis (b_j), then b_j·2^(k/s) rounded up to a 2,3,5-smooth size, k = 1, 2, …
/// (s = `steps_per_octave`; the doublings k = s, 2s, … are smooth(2·previous
/// doubling), the sizes tried before this search existed), up to
/// `enlargements` doublings, without repeats. A function of the lattice's
/// size only.
fn torus_sequence(size: &[usize], steps_per_octave: usize, enlargements: usize) -> Vec<Vec<usize>> {
    let base: Vec<usize> = size.iter().map(|&n| smooth_size(2 * (n - 1))).collect();
    let mut out = vec![base.clone()];
    let mut octave = base;
    for _ in 0..enlargements {
        let doubled: Vec<usize> = octave.iter().map(|&m| smooth_size(2 * m)).collect();
        for k in 1..steps_per_octave {
            let f = 2f64.powf(k as f64 / steps_per_octave as f64);
            let t: Vec<usize> = octave.iter().map(|&m| smooth_size((m as f64 * f).ceil() as usize)).collect();
            if t != *out.last().expect("non-empty") && t.iter().zip(&doubled).all(|(a, b)| a < b) {
                out.push(t);
            }
        }
        out.push(doubled.clone());
        octave = doubled;
    }
    out
}

/// Largest torus, in complex entries (2²⁷ ≈ 1.3·10⁸, 2 GiB).
pub const MAX_TORUS_ENTRIES: usize = 1 << 27;

/// The method name reported for this sampler.
pub const METHOD: &str = "circulant embedding + Matheron update";

/// A regular lattice origin + i·spacing, i = 0..size, in 1 or 2 dimensions.
/// Flattened index: i₀ + size₀·i₁ (the first coordinate varies fastest).
#[derive(Debug, Clone, PartialEq)]
pub struct Lattice {
    origin: Vec<f64>,
    upper: Vec<f64>,
    size: Vec<usize>,
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl Lattice {
    /// The lattice of `size[j]` ≥ 2 points from `origin[j]` to `upper[j]`
    /// (end points included) per axis; 1 ≤ d ≤ 2.
    pub fn new(origin: Vec<f64>, upper: Vec<f64>, size: Vec<usize>) -> Result<Self> {
        let d = origin.len();
        if !(1..=2).contains(&d) || upper.len() != d || size.len() != d {
            return Err(Error::Dimension(
                "a lattice needs 1 or 2 dimensions with matching origin, upper corner and size".into(),
            ));
        }
        if (0..d).any(|j| !(origin[j].is_finite() && upper[j].is_finite() && origin[j] < upper[j]))
            || size.iter().any(|&s| s < 2)
        {
            return Err(Error::Domain(
                "a lattice needs finite corners with lower < upper and ≥ 2 points per axis".into(),
            ));
        }
        Ok(Lattice { origin, upper, size })
    }

    /// The coarsest lattice over [lo, hi] holding both the grid of `a[j]`
    /// points and the grid of `b[j]` points per axis (end points included):
    /// lcm(a\[j\] − 1, b\[j\] − 1) + 1 points per axis.
    pub fn common(lo: &[f64], hi: &[f64], a: &[usize], b: &[usize]) -> Result<Self> {
        if a.len() != lo.len() || b.len() != lo.len() || hi.len() != lo.len() || a.iter().chain(b).any(|&c| c < 2) {
            return Err(Error::Dimension("the two grids of a common lattice need the same dimension".into()));
        }
        let mut size = Vec::with_capacity(a.len());
        for (&p, &q) in a.iter().zip(b) {
            let (p, q) = (p - 1, q - 1);
            let l = (p / gcd(p, q)).checked_mul(q).and_then(|l| l.checked_add(1));
            size.push(l.ok_or_else(|| Error::TooLarge("the common lattice of the grid and the covariates".into()))?);
        }
        Lattice::new(lo.to_vec(), hi.to_vec(), size)
    }

    /// Dimension.
    pub fn dim(&self) -> usize {
        self.origin.len()
    }

    /// Points per axis.
    pub fn size(&self) -> &[usize] {
        &self.size
    }

    /// Number of lattice points (saturating).
    pub fn len(&self) -> usize {
        self.size.iter().fold(1usize, |a, &s| a.saturating_mul(s))
    }

    /// Always false (size ≥ 2 per axis).
    pub fn is_empty(&self) -> bool {
        false
    }

    fn spacing(&self, j: usize) -> f64 {
        (self.upper[j] - self.origin[j]) / (self.size[j] - 1) as f64
    }

    /// Coordinate of node `i` on axis `j` (exactly the corners at the ends).
    pub fn coordinate(&self, j: usize, i: usize) -> f64 {
        axis_point(self.origin[j], self.upper[j], i, self.size[j])
    }

    /// The flattened index of `x` if it is a lattice point (to 10⁻⁹ of the spacing).
    pub fn locate(&self, x: &[f64]) -> Option<usize> {
        if x.len() != self.dim() {
            return None;
        }
        let mut idx = 0;
        let mut stride = 1;
        for (j, xj) in x.iter().enumerate() {
            let t = (xj - self.origin[j]) / self.spacing(j);
            let r = t.round();
            if (t - r).abs() > 1e-9 || r < 0.0 || r >= self.size[j] as f64 {
                return None;
            }
            idx += r as usize * stride;
            stride *= self.size[j];
        }
        Some(idx)
    }
}

/// The smallest 2^a·3^b·5^c ≥ n (FFT-friendly).
fn smooth_size(n: usize) -> usize {
    let mut m = n.max(1);
    loop {
        let mut k = m;
        for p in [2, 3, 5] {
            while k % p == 0 {
                k /= p;
            }
        }
        if k == 1 {
            return m;
        }
        m += 1;
    }
}

/// In-place unnormalised forward DFT over a 1-D or 2-D array (axis 0 fastest).
fn fft_nd(buf: &mut [Complex64], dims: &[usize], plans: &[Arc<dyn Fft<f64>>]) {
    let m0 = dims[0];
    for row in buf.chunks_exact_mut(m0) {
        plans[0].process(row);
    }
    if dims.len() == 2 {
        let m1 = dims[1];
        let mut col = vec![Complex64::new(0.0, 0.0); m1];
        for i0 in 0..m0 {
            for i1 in 0..m1 {
                col[i1] = buf[i0 + m0 * i1];
            }
            plans[1].process(&mut col);
            for i1 in 0..m1 {
                buf[i0 + m0 * i1] = col[i1];
            }
        }
    }
}

/// An embedding's eigenvalues, accepted.
struct Accepted {
    /// √(λ⁺/M).
    sqrt_eig: Vec<f64>,
    /// How many λ in [−fft_error, 0) were set to 0.
    clamped: usize,
    /// min λ / max λ when min λ < 0, else 0.
    min_relative: f64,
}

/// Accepts eigenvalues λ of a circulant embedding when none is below
/// −`fft_error` (the FFT's own error), setting those in [−fft_error, 0) to
/// zero; `None` when the embedding is indefinite beyond roundoff.
fn accept(eig: &[f64], fft_error: f64) -> Option<Accepted> {
    let max = eig.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = eig.iter().copied().fold(f64::INFINITY, f64::min);
    if !(min >= -fft_error) {
        return None;
    }
    let total = eig.len() as f64;
    Some(Accepted {
        sqrt_eig: eig.iter().map(|&l| (l.max(0.0) / total).sqrt()).collect(),
        clamped: eig.iter().filter(|&&l| l < 0.0).count(),
        min_relative: if min < 0.0 { min / max } else { 0.0 },
    })
}

/// The circulant embedding of a stationary kernel on a lattice: public,
/// built once, shared by every draw and every release that uses the lattice.
pub struct LatticePlan {
    lattice: Lattice,
    torus: Vec<usize>,
    /// √(λ_k⁺ / M) per torus frequency (λ⁺ = max(λ, 0)).
    sqrt_eig: Vec<f64>,
    /// λ_k / M unclamped: the spectrum of the circulant whose restriction to
    /// the lattice is K(G, G) exactly, for the products K(G, X)·w.
    kernel_eig: Vec<f64>,
    /// Eigenvalues set to zero (negative within the FFT's error).
    clamped: usize,
    /// The most negative computed eigenvalue relative to the largest (0 if none).
    min_relative_eigenvalue: f64,
    plans: Vec<Arc<dyn Fft<f64>>>,
}

impl std::fmt::Debug for LatticePlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LatticePlan")
            .field("lattice", &self.lattice)
            .field("torus", &self.torus)
            .field("clamped", &self.clamped)
            .finish()
    }
}

impl LatticePlan {
    /// The embedding of `kernel` on `lattice`, enlarging the torus until it
    /// is positive semidefinite up to the FFT's error (see the module docs).
    /// Refuses ([`Error::Unsupported`]) non-stationary kernels and
    /// embeddings that stay indefinite; [`Error::TooLarge`] beyond
    /// `MAX_TORUS_ENTRIES`.
    pub fn new(kernel: &Kernel, lattice: Lattice) -> Result<Self> {
        Self::build(kernel, lattice, STEPS_PER_OCTAVE, MAX_ENLARGEMENTS)
    }

    fn build(kernel: &Kernel, lattice: Lattice, steps_per_octave: usize, enlargements: usize) -> Result<Self> {
        if !kernel.kind().has_lengthscale() {
            return Err(Error::Unsupported(format!(
                "circulant embedding needs a stationary kernel with a lengthscale, not {}",
                kernel.kind()
            )));
        }
        let spacing: Vec<f64> = (0..lattice.dim()).map(|j| lattice.spacing(j)).collect();
        let tori = torus_sequence(&lattice.size, steps_per_octave, enlargements);
        let tried = tori.len();
        for torus in tori {
            let total = torus.iter().try_fold(1usize, |a, &t| a.checked_mul(t)).filter(|&t| t <= MAX_TORUS_ENTRIES);
            let Some(total) = total else {
                return Err(Error::TooLarge(format!(
                    "the circulant embedding of the {:?} lattice needs a torus of more than {MAX_TORUS_ENTRIES} entries",
                    lattice.size
                )));
            };
            // Public inputs only (the kernel and the lattice): refused before allocating.
            crate::check_memory(
                &format!("the circulant embedding of the {:?} lattice on a {torus:?} torus", lattice.size),
                &[crate::Need::doubles(
                    "the torus field, its spectrum and the sampler's fields (8 × torus)",
                    8.0 * total as f64,
                )],
                "the torus grows with the kernel's lengthscale against the grid spacing: use a coarser --grid (fewer nodes per axis), a smaller domain, or a shorter lengthscale if the model allows",
            )?;
            let mut planner = FftPlanner::<f64>::new();
            let plans: Vec<Arc<dyn Fft<f64>>> = torus.iter().map(|&m| planner.plan_fft_forward(m)).collect();
            let mut buf = vec![Complex64::new(0.0, 0.0); total];
            let mut abs_sum = 0.0;
            for (flat, b) in buf.iter_mut().enumerate() {
                let mut rem = flat;
                let mut d2 = 0.0;
                for (&t, &h) in torus.iter().zip(&spacing) {
                    let i = rem % t;
                    rem /= t;
                    let k = i.min(t - i) as f64 * h;
                    d2 += k * k;
                }
                let c = kernel.profile(d2.sqrt());
                abs_sum += c.abs();
                *b = Complex64::new(c, 0.0);
            }
            fft_nd(&mut buf, &torus, &plans);
            let eig: Vec<f64> = buf.iter().map(|c| c.re).collect();
            let fft_error = 8.0 * f64::EPSILON * ((total as f64).log2() + 1.0) * abs_sum;
            if let Some(accepted) = accept(&eig, fft_error) {
                let kernel_eig = eig.iter().map(|l| l / total as f64).collect();
                return Ok(LatticePlan {
                    lattice,
                    torus,
                    sqrt_eig: accepted.sqrt_eig,
                    kernel_eig,
                    clamped: accepted.clamped,
                    min_relative_eigenvalue: accepted.min_relative,
                    plans,
                });
            }
        }
        Err(Error::Unsupported(format!(
            "the circulant embedding of {kernel} on the {:?} lattice stays indefinite on all {tried} tori tried (from twice the lattice per axis up to {enlargements} doublings of that)",
            lattice.size
        )))
    }

    /// The lattice.
    pub fn lattice(&self) -> &Lattice {
        &self.lattice
    }

    /// Torus size of the embedding.
    pub fn torus(&self) -> &[usize] {
        &self.torus
    }

    /// Eigenvalues that were negative within the FFT's error and set to 0.
    pub fn clamped_eigenvalues(&self) -> usize {
        self.clamped
    }

    /// The most negative computed eigenvalue divided by the largest (0 if none).
    pub fn min_relative_eigenvalue(&self) -> f64 {
        self.min_relative_eigenvalue
    }

    /// Position of lattice node `flat` in the torus array.
    fn torus_index(&self, flat: usize) -> usize {
        if self.lattice.dim() == 1 {
            flat
        } else {
            flat % self.lattice.size[0] + self.torus[0] * (flat / self.lattice.size[0])
        }
    }

    /// K(G, ·)·w on the torus for w given at torus positions `idx`: the
    /// circular convolution with the kernel's first row, C·w =
    /// F⁻¹(λ ⊙ F w) with F⁻¹x = conj(F conj(x))/M. Because the torus is at
    /// least 2(size − 1) per axis, C restricted to the lattice is K exactly;
    /// the FFT's error is ≈ ε_mach·log₂M·Σ|w|·max|k|. Never forms an m × n
    /// matrix.
    fn kernel_times(&self, idx: &[usize], w: &[f64]) -> Vec<Complex64> {
        let total = self.sqrt_eig.len();
        let mut buf = vec![Complex64::new(0.0, 0.0); total];
        for (&i, &v) in idx.iter().zip(w) {
            buf[i].re += v;
        }
        fft_nd(&mut buf, &self.torus, &self.plans);
        for (b, &l) in buf.iter_mut().zip(&self.kernel_eig) {
            *b = (*b * l).conj();
        }
        fft_nd(&mut buf, &self.torus, &self.plans);
        buf
    }

    /// Two independent exact N(0, K(G, G)) fields on the torus (flattened,
    /// torus layout): the real and imaginary parts.
    fn draw_pair(&self, rng: &mut ReleaseRng) -> Vec<Complex64> {
        let mut buf: Vec<Complex64> =
            self.sqrt_eig.iter().map(|s| Complex64::new(s * rng.normal(), s * rng.normal())).collect();
        fft_nd(&mut buf, &self.torus, &self.plans);
        buf
    }
}

/// Exact sampler for query points and covariates on the plan's lattice.
pub struct LatticeSampler {
    process: Process,
    plan: Arc<LatticePlan>,
    /// Torus index of each training covariate.
    train_idx: Vec<usize>,
}

impl LatticeSampler {
    /// Refuses ([`Error::Unsupported`]) unless every training covariate is a
    /// node of the plan's lattice.
    pub fn new(process: Process, plan: Arc<LatticePlan>) -> Result<Self> {
        let x = process.posterior().train_x();
        if x.dim() != plan.lattice.dim() {
            return Err(Error::Dimension("lattice and covariates differ in dimension".into()));
        }
        let mut train_idx = Vec::with_capacity(x.len());
        for (i, p) in x.iter().enumerate() {
            let idx = plan.lattice.locate(p).ok_or_else(|| {
                Error::Unsupported(format!("training covariate {} is not on the sampling lattice", i + 1))
            })?;
            train_idx.push(plan.torus_index(idx));
        }
        Ok(LatticeSampler { process, plan, train_idx })
    }

    fn query_index(&self, points: &Points) -> Result<Vec<usize>> {
        points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                self.plan
                    .lattice
                    .locate(p)
                    .map(|idx| self.plan.torus_index(idx))
                    .ok_or_else(|| Error::Unsupported(format!("query point {} is not on the sampling lattice", i + 1)))
            })
            .collect()
    }
}

impl Sampler for LatticeSampler {
    fn sample(&self, points: &Points, draws: Draws, rng: &mut ReleaseRng) -> Result<SampledPaths> {
        let l = check_values(points.len(), draws)?;
        let post = self.process.posterior();
        let q_idx = self.query_index(points)?;
        let m = points.len();
        let (sigma, eta) = (self.process.scale(), self.process.gp_noise());
        let alpha = post.weights();
        let jitter = self.process.jitter(m);
        let sd_jitter = jitter.sqrt();
        let mut values = Vec::with_capacity(l);
        for _ in 0..l {
            let field = self.plan.draw_pair(rng);
            // e ~ N(0, r²C⁻¹): the aggregated observation noise at each distinct covariate.
            let rhs: Vec<f64> = self
                .train_idx
                .iter()
                .enumerate()
                .map(|(j, &i)| field[i].re + post.noise_variance(j).sqrt() * rng.normal())
                .collect();
            let v = post.solve(&rhs)?;
            // f = K(Q, X)(α − σv) + σg + ηg₂: μ_D and the Matheron correction in one
            // convolution (docs/sampling.md §4).
            let sign = if mutated() { -1.0 } else { 1.0 };
            let w: Vec<f64> = alpha.iter().zip(&v).map(|(a, vi)| a - sign * sigma * vi).collect();
            let conv = self.plan.kernel_times(&self.train_idx, &w);
            let f: Vec<f64> = (0..m)
                .map(|i| {
                    let t = q_idx[i];
                    let g2 = if eta > 0.0 { eta * field[t].im } else { 0.0 };
                    conv[t].re + sigma * field[t].re + g2 + sd_jitter * rng.normal()
                })
                .collect();
            values.push(f);
        }
        Ok(SampledPaths { values, jitter, method: METHOD })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::data::Dataset;
    use crate::model::kernel::KernelKind;
    use crate::posterior::Posterior;
    use faer::Mat;

    /// The first row of the circulant C⁺ the sampler draws from (torus
    /// layout): the inverse DFT of the (clamped) eigenvalues.
    fn embedded_row(plan: &LatticePlan) -> Vec<f64> {
        let mut buf: Vec<Complex64> = plan.sqrt_eig.iter().map(|s| Complex64::new(s * s, 0.0)).collect();
        // C⁺ = F* diag(λ⁺/M) F with F the unnormalised DFT; its first row is
        // the (real, symmetric) DFT of λ⁺/M, computed by the forward plans.
        fft_nd(&mut buf, &plan.torus, &plan.plans);
        buf.iter().map(|c| c.re).collect()
    }

    /// Cov of the embedded prior between torus positions a and b.
    fn prior_cov(plan: &LatticePlan, row: &[f64], a: usize, b: usize) -> f64 {
        let t = &plan.torus;
        let (a0, a1, b0, b1) = if t.len() == 1 { (a, 0, b, 0) } else { (a % t[0], a / t[0], b % t[0], b / t[0]) };
        let d0 = (a0 + t[0] - b0) % t[0];
        let d1 = if t.len() == 1 { 0 } else { (a1 + t[1] - b1) % t[1] };
        row[d0 + t[0] * d1]
    }

    /// The exact covariance of the sampler's released values (a linear map
    /// of independent standard normals), computed from the embedding:
    /// σ²·(G_QQ − 2·sym(K_QX A⁻¹ G_XQ) + K_QX A⁻¹ (G_XX + r²I) A⁻¹ K_XQ) + η²·G_QQ + jI,
    /// with G the embedded prior covariance on the lattice.
    fn implied_covariance(s: &LatticeSampler, points: &Points) -> Mat<f64> {
        let plan = &s.plan;
        let row = embedded_row(plan);
        let q = s.query_index(points).unwrap();
        let x = &s.train_idx;
        let post = s.process.posterior();
        let (m, n) = (q.len(), x.len());
        let g = |a: usize, b: usize| prior_cov(plan, &row, a, b);
        let gqq = Mat::from_fn(m, m, |i, j| g(q[i], q[j]));
        let gxq = Mat::from_fn(n, m, |i, j| g(x[i], q[j]));
        let gxx = Mat::from_fn(n, n, |i, j| g(x[i], x[j]) + if i == j { post.noise_variance(i) } else { 0.0 });
        let kqx = post.kernel().cross(points, post.train_x());
        // W = A⁻¹ K_XQ (n × m), column by column.
        let mut w = Mat::<f64>::zeros(n, m);
        for j in 0..m {
            let col: Vec<f64> = (0..n).map(|i| kqx[(j, i)]).collect();
            let sol = post.solve(&col).unwrap();
            for i in 0..n {
                w[(i, j)] = sol[i];
            }
        }
        let cross = w.transpose() * &gxq; // K_QX A⁻¹ G_XQ
        let quad = w.transpose() * &gxx * &w;
        let (s2, e2) = (s.process.scale().powi(2), s.process.gp_noise().powi(2));
        let jit = s.process.jitter(m);
        Mat::from_fn(m, m, |i, j| {
            s2 * (gqq[(i, j)] - cross[(i, j)] - cross[(j, i)] + quad[(i, j)])
                + e2 * gqq[(i, j)]
                + if i == j { jit } else { 0.0 }
        })
    }

    fn exact_covariance(s: &LatticeSampler, points: &Points) -> Mat<f64> {
        let mut c = s.process.covariance(points, points).unwrap();
        let jit = s.process.jitter(points.len());
        for i in 0..points.len() {
            c[(i, i)] += jit;
        }
        c
    }

    fn max_abs_diff(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
        let mut worst: f64 = 0.0;
        for j in 0..a.ncols() {
            for i in 0..a.nrows() {
                worst = worst.max((a[(i, j)] - b[(i, j)]).abs());
            }
        }
        worst
    }

    fn setup(kernel: Kernel, size: usize) -> (LatticePlan, Process, Points) {
        let lattice = Lattice::new(vec![0.0], vec![1.0], vec![size]).unwrap();
        let plan = LatticePlan::new(&kernel, lattice.clone()).unwrap();
        let xs: Vec<f64> = [1, 3, 4, size - 2].iter().map(|&i| lattice.coordinate(0, i)).collect();
        let d = Dataset::new(Points::from_1d(&xs), vec![0.7, -0.4, 0.9, 0.1]).unwrap();
        let post = Posterior::fit(kernel, &d, 0.3).unwrap();
        let q = Points::from_1d(&(0..size).map(|i| lattice.coordinate(0, i)).collect::<Vec<_>>());
        (plan, Process::new(post, 0.8, 0.4).unwrap(), q)
    }

    #[test]
    fn the_tori_tried_grow_by_quarter_octaves_through_the_doublings() {
        // 1000 nodes: 1998 → 2000; then 2000·2^(k/4) rounded up to smooth sizes.
        assert_eq!(
            torus_sequence(&[1000], STEPS_PER_OCTAVE, 2),
            [[2000], [2400], [2880], [3375], [4000], [4800], [5760], [6750], [8000]].map(|t| t.to_vec()).to_vec()
        );
        // One step per octave: the doublings alone (the sequence before the search).
        assert_eq!(torus_sequence(&[11], 1, 2), vec![vec![20], vec![40], vec![80]]);
        // Per axis in 2-D, repeats dropped.
        assert_eq!(
            torus_sequence(&[3, 1000], STEPS_PER_OCTAVE, 1),
            vec![vec![4, 2000], vec![5, 2400], vec![6, 2880], vec![8, 4000]]
        );
    }

    #[test]
    fn the_quarter_octave_search_never_takes_a_larger_torus_and_often_a_smaller_one() {
        // 200 × 200 nodes on [0, 1]² with lengthscales that need enlarged
        // tori (on 1000 × 1000 nodes, measured once: exponential ℓ = 0.3 took
        // 8000² by doubling and takes 4800² now; Matérn-3/2 ℓ = 0.14:
        // 4000² → 3375²; Matérn-5/2 ℓ = 0.1: 4000² → 2880²).
        let lattice = Lattice::new(vec![0.0, 0.0], vec![1.0, 1.0], vec![200, 200]).unwrap();
        let mut smaller = 0;
        for (kind, l) in [(KernelKind::Exponential, 0.3), (KernelKind::Matern32, 0.14), (KernelKind::Matern52, 0.1)] {
            let kernel = Kernel::new(kind, l).unwrap();
            let doubling = LatticePlan::build(&kernel, lattice.clone(), 1, MAX_ENLARGEMENTS).unwrap();
            let searched = LatticePlan::new(&kernel, lattice.clone()).unwrap();
            let (d, s) = (doubling.torus().to_vec(), searched.torus().to_vec());
            assert!(s.iter().zip(&d).all(|(a, b)| a <= b), "{kind:?}: searched {s:?} vs doubling {d:?}");
            // Every torus tried before the accepted one was rejected.
            let seq = torus_sequence(&[200, 200], STEPS_PER_OCTAVE, MAX_ENLARGEMENTS);
            let at = seq.iter().position(|t| *t == s).unwrap();
            if at > 0 {
                let before = torus_sequence(&[200, 200], STEPS_PER_OCTAVE, MAX_ENLARGEMENTS)[at - 1].clone();
                assert!(before.iter().zip(&s).all(|(a, b)| a <= b));
            }
            eprintln!("{kind:?} ℓ = {l}: doubling {d:?}, searched {s:?}");
            if s[0] < d[0] {
                smaller += 1;
            }
        }
        assert!(smaller >= 2, "the search found a smaller torus in only {smaller} of 3 cases");
    }

    #[test]
    fn indefinite_minimal_embedding_is_enlarged_and_released_covariance_is_exact() {
        // The squared-exponential kernel with ℓ = 0.4 on 11 points of [0, 1]:
        // the minimal torus (period 2) has clearly negative eigenvalues.
        let kernel = Kernel::new(KernelKind::SquaredExponential, 0.4).unwrap();
        let lattice = Lattice::new(vec![0.0], vec![1.0], vec![11]).unwrap();
        let minimal = LatticePlan::build(&kernel, lattice.clone(), 1, 0);
        assert!(matches!(minimal, Err(Error::Unsupported(_))), "the minimal embedding must be indefinite");
        let (plan, process, q) = setup(kernel, 11);
        assert!(plan.torus()[0] > smooth_size(20), "the torus was enlarged: {:?}", plan.torus());
        // The enlarged embedding may still have eigenvalues negative at FFT
        // roundoff (on x86-64: 11 of them), clamped to zero.
        assert!(plan.min_relative_eigenvalue() > -1e-14);
        let s = LatticeSampler::new(process, Arc::new(plan)).unwrap();
        let implied = implied_covariance(&s, &q);
        let exact = exact_covariance(&s, &q);
        let err = max_abs_diff(&implied, &exact);
        assert!(err < 1e-10, "released covariance differs from σ²k_D + η²k + jI by {err}");
    }

    #[test]
    fn two_dimensional_embeddings_release_the_exact_covariance() {
        // A 2-D squared-exponential embedding that needs enlarging and a 2-D
        // exponential one that does not: the released covariance is
        // σ²k_D + η²k + jI to floating-point accuracy in both.
        for kernel in [Kernel::new(KernelKind::SquaredExponential, 0.3).unwrap(), Kernel::exponential(0.5).unwrap()] {
            check_2d(kernel);
        }
    }

    /// The convolution K(G, X)·w by FFT equals the dense product on every
    /// lattice node, in 1-D and 2-D, for kernels whose embedding needed
    /// enlarging and ones that did not.
    #[test]
    fn kernel_products_by_fft_equal_the_dense_ones() {
        let cases = [
            (
                Kernel::new(KernelKind::SquaredExponential, 0.4).unwrap(),
                Lattice::new(vec![0.0], vec![1.0], vec![11]).unwrap(),
            ),
            (Kernel::exponential(0.2).unwrap(), Lattice::new(vec![0.0], vec![2.0], vec![40]).unwrap()),
            (
                Kernel::new(KernelKind::Matern52, 0.3).unwrap(),
                Lattice::new(vec![0.0, 0.0], vec![1.0, 2.0], vec![9, 14]).unwrap(),
            ),
        ];
        for (kernel, lattice) in cases {
            let plan = LatticePlan::new(&kernel, lattice.clone()).unwrap();
            let total: usize = lattice.size().iter().product();
            let xs: Vec<usize> = (0..total).filter(|i| i % 3 == 1).collect();
            let w: Vec<f64> = xs.iter().map(|&i| ((i * 7919) % 13) as f64 / 6.0 - 1.0).collect();
            let idx: Vec<usize> = xs.iter().map(|&i| plan.torus_index(i)).collect();
            let conv = plan.kernel_times(&idx, &w);
            let node = |flat: usize| -> Vec<f64> {
                if lattice.dim() == 1 {
                    vec![lattice.coordinate(0, flat)]
                } else {
                    let n0 = lattice.size()[0];
                    vec![lattice.coordinate(0, flat % n0), lattice.coordinate(1, flat / n0)]
                }
            };
            let scale: f64 = w.iter().map(|v| v.abs()).sum();
            for g in 0..total {
                let dense: f64 = xs.iter().zip(&w).map(|(&x, wi)| kernel.eval(&node(g), &node(x)).unwrap() * wi).sum();
                let got = conv[plan.torus_index(g)];
                assert!((got.re - dense).abs() < 1e-13 * scale, "{kernel} node {g}: {} vs {dense}", got.re);
                assert!(got.im.abs() < 1e-13 * scale);
            }
        }
    }

    /// Seeded moments of the sampler's own output (the FFT products
    /// included) within 5 standard errors of μ_D and σ²k_D + η²k + j; a sign
    /// flip in the update is detected.
    #[test]
    fn released_moments_are_exact_and_a_mutation_is_detected() {
        let worst = || {
            let (plan, process, q) = setup(Kernel::exponential(0.3).unwrap(), 12);
            let s = LatticeSampler::new(process, Arc::new(plan)).unwrap();
            let pts = Points::from_1d(&[q.row(0)[0], q.row(3)[0], q.row(6)[0], q.row(11)[0]]);
            let n = 20_000;
            let out = s.sample(&pts, Draws::new(n).unwrap(), &mut ReleaseRng::seeded(8)).unwrap();
            let mean = s.process.mean(&pts).unwrap();
            let cov = exact_covariance(&s, &pts);
            let nf = n as f64;
            let mut worst: f64 = 0.0;
            for a in 0..4 {
                let avg = out.values.iter().map(|p| p[a]).sum::<f64>() / nf;
                worst = worst.max((avg - mean[a]).abs() / (cov[(a, a)] / nf).sqrt());
                for c in 0..4 {
                    let sc = out.values.iter().map(|p| (p[a] - mean[a]) * (p[c] - mean[c])).sum::<f64>() / nf;
                    let se = ((cov[(a, a)] * cov[(c, c)] + cov[(a, c)] * cov[(a, c)]) / nf).sqrt();
                    worst = worst.max((sc - cov[(a, c)]).abs() / se);
                }
            }
            worst
        };
        let ok = worst();
        assert!(ok < 5.0, "a moment is {ok:.2} standard errors off");
        MUTATE_UPDATE.with(|m| m.set(true));
        let bad = worst();
        MUTATE_UPDATE.with(|m| m.set(false));
        assert!(bad > 5.0, "the mutated sampler passed ({bad:.2})");
    }

    #[test]
    fn roundoff_negative_eigenvalues_are_clamped_and_real_ones_refused() {
        let a = accept(&[2.0, 1.0, -1e-17, 0.5, -3e-17], 1e-16).unwrap();
        assert_eq!(a.clamped, 2);
        assert_eq!(a.sqrt_eig[2], 0.0);
        assert!((a.sqrt_eig[0] - (2.0f64 / 5.0).sqrt()).abs() < 1e-16);
        assert!((a.min_relative - (-1.5e-17)).abs() < 1e-30);
        assert!(accept(&[2.0, 1.0, -2e-16], 1e-16).is_none(), "beyond the FFT's error: indefinite");
        let exact = accept(&[1.0, 0.0, 0.25], 1e-16).unwrap();
        assert_eq!((exact.clamped, exact.min_relative), (0, 0.0));
    }

    fn check_2d(kernel: Kernel) {
        let lattice = Lattice::new(vec![0.0, 0.0], vec![1.0, 1.0], vec![9, 7]).unwrap();
        let plan = LatticePlan::new(&kernel, lattice.clone()).unwrap();
        assert!(plan.min_relative_eigenvalue() > -1e-14, "{kernel}: {plan:?}");
        let pts: Vec<[f64; 2]> = [(1, 1), (3, 5), (8, 0), (4, 4)]
            .iter()
            .map(|&(i, j)| [lattice.coordinate(0, i), lattice.coordinate(1, j)])
            .collect();
        let d = Dataset::new(Points::from_rows(&pts).unwrap(), vec![0.5, -0.5, 1.0, 0.2]).unwrap();
        let post = Posterior::fit(kernel, &d, 0.5).unwrap();
        let q: Vec<[f64; 2]> = (0..7)
            .flat_map(|j| (0..9).map(move |i| (i, j)))
            .map(|(i, j)| [lattice.coordinate(0, i), lattice.coordinate(1, j)])
            .collect();
        let q = Points::from_rows(&q).unwrap();
        let s = LatticeSampler::new(Process::new(post, 1.3, 0.2).unwrap(), Arc::new(plan)).unwrap();
        let err = max_abs_diff(&implied_covariance(&s, &q), &exact_covariance(&s, &q));
        assert!(err < 1e-10, "{err}");
    }

    #[test]
    fn persistently_indefinite_embeddings_are_refused() {
        // ℓ = 3 on [0, 1]: even a torus 16 times the minimal one is indefinite.
        let kernel = Kernel::new(KernelKind::SquaredExponential, 3.0).unwrap();
        let lattice = Lattice::new(vec![0.0], vec![1.0], vec![11]).unwrap();
        let e = LatticePlan::new(&kernel, lattice).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)) && e.to_string().contains("indefinite"), "{e}");
        let c = Kernel::new(KernelKind::Constant, 1.0).unwrap();
        assert!(LatticePlan::new(&c, Lattice::new(vec![0.0], vec![1.0], vec![5]).unwrap()).is_err());
    }

    #[test]
    fn common_lattice_holds_both_grids() {
        let l = Lattice::common(&[0.0, 0.0], &[1.0, 2.0], &[120, 5], &[239, 3]).unwrap();
        assert_eq!(l.size(), &[239, 5]);
        let l = Lattice::common(&[0.0], &[1.0], &[4], &[5]).unwrap();
        assert_eq!(l.size(), &[13]);
        assert_eq!(l.locate(&[1.0 / 3.0]), Some(4));
        assert_eq!(l.locate(&[0.25]), Some(3));
        assert_eq!(l.locate(&[0.3]), None);
    }
}
