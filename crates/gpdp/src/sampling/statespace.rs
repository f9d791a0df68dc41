//! Exact 1-D draws in O((n + m)·p³) by the kernels' state-space forms
//! (docs/proofs/state-space.md).
//!
//! The exponential (p = 1), Matérn-3/2 (p = 2) and Matérn-5/2 (p = 3)
//! kernels are the covariances of the first coordinate of a stationary
//! Gauss–Markov process u(t) ∈ Rᵖ with u' = λF̃u + λ^{p−½}·c·w (w white
//! noise), in the scaled coordinates uᵢ = f⁽ⁱ⁾/λⁱ, λ = √(2p−1)/ℓ, and F̃ the
//! companion matrix of (s + 1)ᵖ. Between sorted points at distance Δ,
//! with x = λΔ,
//!
//! ```text
//! u(t + Δ) = A(x)·u(t) + N(0, Q(x)),   A(x) = e^{−x}·Σ_{k<p} Nᵏxᵏ/k!  (N = F̃ + I nilpotent),
//! Q(x) = P∞ − A(x)P∞A(x)ᵀ,
//! ```
//!
//! P∞ the stationary covariance. Observations y = u₀ + N(0, r²) at the
//! covariates make the GP posterior of docs/model.md (normalised, σ = 1) the
//! smoothing distribution of this linear-Gaussian model, so a Kalman filter
//! over the sorted distinct positions of covariates and query points
//! followed by backward sampling draws *exactly* from GP(μ_D, k_D) there
//! (no approximation: the state-space form is the kernel). The released
//! path is f = μ_D + σ·z + η·g: μ_D is the backward recursion without
//! noise, z the backward recursion of the noise alone (k_D does not depend
//! on y), and g an exact forward simulation of the prior at the query
//! points.
//!
//! Numerics: Q(x) is evaluated from its power series where x ≤ 1 (its
//! entries are O(x^{2p−1−i−j}) and a direct difference would cancel), the
//! filter's observation update and the backward conditional covariance use
//! Joseph forms (symmetric positive semi-definite by construction), and the
//! p × p factorisations set a pivot that rounding made ≤ 0 to 0 (a
//! roundoff-level correction, as for the lattice sampler's eigenvalues).

// p × p matrix arithmetic (p ≤ 3) indexed as in the formulas.
#![allow(clippy::needless_range_loop)]

use super::{SampledPaths, Sampler, check_values};
use crate::error::{Error, Result};
use crate::model::data::Dataset;
use crate::model::draws::Draws;
use crate::model::kernel::{Kernel, KernelKind};
use crate::model::points::Points;
use crate::rng::ReleaseRng;

/// The method name reported for this sampler.
pub const METHOD: &str = "state-space (Kalman filter + backward sampling)";

const MAXP: usize = 3;
type Vector = [f64; MAXP];
type Matrix = [[f64; MAXP]; MAXP];
const ZERO: Matrix = [[0.0; MAXP]; MAXP];
/// Terms of the power series of Q(x) for x ≤ 1 (the remainder is below
/// 2³³/33! < 10⁻²⁷ of the coefficients' scale; docs/proofs/state-space.md §2).
const SERIES_TERMS: usize = 33;

#[cfg(test)]
thread_local! {
    /// Mutation check (tests only): flips the sign of the backward update's
    /// carried term, which the statistical tests must detect.
    pub(crate) static MUTATE_UPDATE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
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

/// The order p of the kernel's exact state-space form, if it has one:
/// exponential 1, Matérn-3/2 2, Matérn-5/2 3.
pub fn order(kind: KernelKind) -> Option<usize> {
    match kind {
        KernelKind::Exponential => Some(1),
        KernelKind::Matern32 => Some(2),
        KernelKind::Matern52 => Some(3),
        _ => None,
    }
}

/// The state-space form of a 1-D kernel (see the module docs).
#[derive(Debug, Clone)]
pub struct StateSpaceModel {
    p: usize,
    lambda: f64,
    /// P∞ in scaled coordinates.
    pinf: Matrix,
    /// Nᵏ/k! for k < p.
    npow: [Matrix; MAXP],
    /// Power-series coefficients of Q_ij(x), k = 0 … SERIES_TERMS − 1.
    qseries: Vec<[[f64; MAXP]; MAXP]>,
    /// Coefficients of Π(x) = M(x)P∞M(x)ᵀ (degree ≤ 2p − 2).
    pi: Vec<Matrix>,
}

fn matmul(a: &Matrix, b: &Matrix, p: usize) -> Matrix {
    let mut c = ZERO;
    for i in 0..p {
        for j in 0..p {
            c[i][j] = (0..p).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    c
}

fn transpose(a: &Matrix, p: usize) -> Matrix {
    let mut t = ZERO;
    for i in 0..p {
        for j in 0..p {
            t[i][j] = a[j][i];
        }
    }
    t
}

fn matvec(a: &Matrix, v: &Vector, p: usize) -> Vector {
    let mut out = [0.0; MAXP];
    for i in 0..p {
        out[i] = (0..p).map(|k| a[i][k] * v[k]).sum();
    }
    out
}

/// Lower Cholesky factor of a symmetric positive semi-definite p × p matrix;
/// a pivot that rounding made ≤ 0 is set to 0 with its column.
fn chol_psd(c: &Matrix, p: usize) -> Matrix {
    let mut l = ZERO;
    for j in 0..p {
        let d = c[j][j] - (0..j).map(|k| l[j][k] * l[j][k]).sum::<f64>();
        if !(d > 0.0) {
            continue;
        }
        let ljj = d.sqrt();
        l[j][j] = ljj;
        for i in j + 1..p {
            l[i][j] = (c[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>()) / ljj;
        }
    }
    l
}

/// X with S·X = B for symmetric positive (semi-)definite S, by the factor of
/// [`chol_psd`]; directions with a zero pivot are given 0 (the minimum-norm
/// choice on a numerically singular direction).
fn solve_psd(s: &Matrix, b: &Matrix, p: usize) -> Matrix {
    let l = chol_psd(s, p);
    let mut x = ZERO;
    for col in 0..p {
        // Forward: L w = b.
        let mut w = [0.0; MAXP];
        for i in 0..p {
            if l[i][i] > 0.0 {
                w[i] = (b[i][col] - (0..i).map(|k| l[i][k] * w[k]).sum::<f64>()) / l[i][i];
            }
        }
        // Backward: Lᵀ v = w.
        let mut v = [0.0; MAXP];
        for i in (0..p).rev() {
            if l[i][i] > 0.0 {
                v[i] = (w[i] - (i + 1..p).map(|k| l[k][i] * v[k]).sum::<f64>()) / l[i][i];
            }
        }
        for i in 0..p {
            x[i][col] = v[i];
        }
    }
    x
}

impl StateSpaceModel {
    /// The state-space form of `kernel` (exponential, Matérn-3/2 or Matérn-5/2).
    pub fn new(kernel: &Kernel) -> Result<Self> {
        let p = order(kernel.kind()).ok_or_else(|| {
            Error::Unsupported(format!(
                "the {} kernel has no exact finite-dimensional state-space form (only exponential, matern32, matern52)",
                kernel.kind()
            ))
        })?;
        let lambda = ((2 * p - 1) as f64).sqrt() / kernel.lengthscale();
        // Scaled stationary covariances: Cov(f⁽ⁱ⁾, f⁽ʲ⁾) = (−1)ʲ k⁽ⁱ⁺ʲ⁾(0), divided by λ^{i+j}.
        let mut pinf = ZERO;
        match p {
            1 => pinf[0][0] = 1.0,
            2 => {
                pinf[0][0] = 1.0;
                pinf[1][1] = 1.0;
            }
            _ => {
                pinf[0][0] = 1.0;
                pinf[1][1] = 1.0 / 3.0;
                pinf[2][2] = 1.0;
                pinf[0][2] = -1.0 / 3.0;
                pinf[2][0] = -1.0 / 3.0;
            }
        }
        // N = F̃ + I, F̃ the companion matrix of (s + 1)ᵖ.
        let coeffs: &[f64] = match p {
            1 => &[1.0],
            2 => &[1.0, 2.0],
            _ => &[1.0, 3.0, 3.0],
        };
        let mut n = ZERO;
        for i in 0..p - 1 {
            n[i][i + 1] = 1.0;
        }
        for j in 0..p {
            n[p - 1][j] = -coeffs[j];
        }
        for i in 0..p {
            n[i][i] += 1.0;
        }
        let mut npow = [ZERO; MAXP];
        let mut id = ZERO;
        for (i, row) in id.iter_mut().enumerate().take(p) {
            row[i] = 1.0;
        }
        npow[0] = id;
        for k in 1..p {
            let prev = npow[k - 1];
            let mut next = matmul(&prev, &n, p);
            for row in next.iter_mut().take(p) {
                for v in row.iter_mut().take(p) {
                    *v /= k as f64;
                }
            }
            npow[k] = next;
        }
        // Π(x) = Σ_{a,b} (Nᵃ/a!) P∞ (Nᵇ/b!)ᵀ x^{a+b}.
        let mut pi = vec![ZERO; 2 * p - 1];
        for a in 0..p {
            for b in 0..p {
                let term = matmul(&matmul(&npow[a], &pinf, p), &transpose(&npow[b], p), p);
                for i in 0..p {
                    for j in 0..p {
                        pi[a + b][i][j] += term[i][j];
                    }
                }
            }
        }
        // Q_ij(x) = P∞_ij − e^{−2x}Π_ij(x) = Σ_k c_k xᵏ with
        // c_k = [k = 0]P∞_ij − Σ_d Π_ij[d]·(−2)^{k−d}/(k−d)!; c_k = 0 exactly for
        // k < 2p − 1 − i − j (docs/proofs/state-space.md §2).
        let mut e = vec![0.0; SERIES_TERMS]; // (−2)ᵏ/k!
        e[0] = 1.0;
        for k in 1..SERIES_TERMS {
            e[k] = e[k - 1] * -2.0 / k as f64;
        }
        let mut qseries = vec![ZERO; SERIES_TERMS];
        for i in 0..p {
            for j in 0..p {
                let first = 2 * p - 1 - i - j;
                for (k, q) in qseries.iter_mut().enumerate().skip(first) {
                    let mut c = if k == 0 { pinf[i][j] } else { 0.0 };
                    for (d, pd) in pi.iter().enumerate().take(k + 1) {
                        c -= pd[i][j] * e[k - d];
                    }
                    q[i][j] = c;
                }
            }
        }
        Ok(StateSpaceModel { p, lambda, pinf, npow, qseries, pi })
    }

    /// The order p.
    pub fn order(&self) -> usize {
        self.p
    }

    /// A and Q for a step of Δ ≥ 0.
    fn step(&self, delta: f64) -> (Matrix, Matrix) {
        let p = self.p;
        let x = self.lambda * delta;
        if !(x <= 700.0) {
            // e^{−x}·poly(x) underflows (or x is infinite): the states are independent.
            return (ZERO, self.pinf);
        }
        let ex = (-x).exp();
        let mut a = ZERO;
        let mut xk = 1.0;
        for k in 0..p {
            for i in 0..p {
                for j in 0..p {
                    a[i][j] += self.npow[k][i][j] * xk;
                }
            }
            xk *= x;
        }
        for row in a.iter_mut().take(p) {
            for v in row.iter_mut().take(p) {
                *v *= ex;
            }
        }
        let mut q = ZERO;
        if x <= 1.0 {
            for i in 0..p {
                for j in 0..p {
                    let mut acc = 0.0;
                    for k in (0..SERIES_TERMS).rev() {
                        acc = acc * x + self.qseries[k][i][j];
                    }
                    q[i][j] = acc;
                }
            }
        } else {
            let e2 = (-2.0 * x).exp();
            for i in 0..p {
                for j in 0..p {
                    let poly = self.pi.iter().rev().fold(0.0, |acc, c| acc * x + c[i][j]);
                    q[i][j] = self.pinf[i][j] - e2 * poly;
                }
            }
        }
        (a, q)
    }

    /// k(Δ)/1 reproduced by the state-space form: (A(λΔ)P∞)₀₀ (for tests).
    pub fn covariance_at(&self, delta: f64) -> f64 {
        let (a, _) = self.step(delta.abs());
        matmul(&a, &self.pinf, self.p)[0][0]
    }
}

/// The sorted distinct positions of covariates and query points, with the
/// observations and query indices at each.
struct Nodes {
    pos: Vec<f64>,
    /// obs_start[k]..obs_start[k+1] index into `obs_y`.
    obs_start: Vec<usize>,
    obs_y: Vec<f64>,
    /// For each query point, its node.
    query_node: Vec<usize>,
    /// Whether a node holds a query point.
    has_query: Vec<bool>,
}

fn nodes(x: &[f64], y: &[f64], q: &[f64]) -> Nodes {
    // `+ 0.0` maps −0 to +0, so that the total order and equality agree.
    let mut pos: Vec<f64> = x.iter().chain(q.iter()).map(|v| v + 0.0).collect();
    pos.sort_by(f64::total_cmp);
    pos.dedup();
    let index = |v: f64| pos.binary_search_by(|p| p.total_cmp(&(v + 0.0))).expect("every position is a node");
    let mut counts = vec![0usize; pos.len() + 1];
    let obs_node: Vec<usize> = x.iter().map(|&v| index(v)).collect();
    for &k in &obs_node {
        counts[k + 1] += 1;
    }
    for k in 0..pos.len() {
        counts[k + 1] += counts[k];
    }
    let mut fill = counts.clone();
    let mut obs_y = vec![0.0; x.len()];
    for (i, &k) in obs_node.iter().enumerate() {
        obs_y[fill[k]] = y[i];
        fill[k] += 1;
    }
    let query_node: Vec<usize> = q.iter().map(|&v| index(v)).collect();
    let mut has_query = vec![false; pos.len()];
    for &k in &query_node {
        has_query[k] = true;
    }
    Nodes { pos, obs_start: counts, obs_y, query_node, has_query }
}

/// The smoother's per-node quantities: the backward gain G_k, the factor
/// L_k of the backward conditional covariance, and the posterior mean μ_D.
struct Smoother {
    gain: Vec<Matrix>,
    factor: Vec<Matrix>,
    mean: Vec<f64>,
}

/// Exact draws of f = μ_D + σ·z + η·g at 1-D points for a kernel with a
/// state-space form (see the module docs). Memory O((n + m)·p²); no n × n or
/// m × m matrix is formed.
#[derive(Debug, Clone)]
pub struct StateSpaceSampler {
    model: StateSpaceModel,
    x: Vec<f64>,
    y: Vec<f64>,
    ridge: f64,
    scale: f64,
    gp_noise: f64,
}

impl StateSpaceSampler {
    /// A sampler for the posterior of `kernel` given 1-D `data` with ridge r,
    /// released with scale σ and GP noise η.
    pub fn new(kernel: &Kernel, data: &Dataset, ridge: f64, scale: f64, gp_noise: f64) -> Result<Self> {
        if data.dim() != 1 {
            return Err(Error::Dimension(format!("the state-space sampler is 1-D, but the data are {}-D", data.dim())));
        }
        crate::error::ridge(ridge)?;
        crate::error::gp_noise(gp_noise)?;
        crate::error::release_scale(scale, gp_noise)?;
        Ok(StateSpaceSampler {
            model: StateSpaceModel::new(kernel)?,
            x: data.x().as_slice().to_vec(),
            y: data.y().to_vec(),
            ridge,
            scale,
            gp_noise,
        })
    }

    /// The data-free jitter variance added to every value:
    /// (σ² + η²)·max(10⁻¹⁰, 100·p·u), the rule of [`super::Process::jitter`] for
    /// the p × p factorisations this sampler makes.
    pub fn jitter(&self) -> f64 {
        let s = self.scale * self.scale + self.gp_noise * self.gp_noise;
        s * (1e-10f64).max(100.0 * self.model.p as f64 * f64::EPSILON)
    }

    fn smoother(&self, nodes: &Nodes) -> Smoother {
        let p = self.model.p;
        let r2 = self.ridge * self.ridge;
        let k = nodes.pos.len();
        // Forward: filtered means and covariances.
        let mut mf: Vec<Vector> = Vec::with_capacity(k);
        let mut pf: Vec<Matrix> = Vec::with_capacity(k);
        for t in 0..k {
            let (mut m, mut pc) = if t == 0 {
                ([0.0; MAXP], self.model.pinf)
            } else {
                let (a, q) = self.model.step(nodes.pos[t] - nodes.pos[t - 1]);
                let m = matvec(&a, &mf[t - 1], p);
                let mut pp = matmul(&matmul(&a, &pf[t - 1], p), &transpose(&a, p), p);
                for i in 0..p {
                    for j in 0..p {
                        pp[i][j] += q[i][j];
                    }
                }
                (m, pp)
            };
            for &yv in &nodes.obs_y[nodes.obs_start[t]..nodes.obs_start[t + 1]] {
                // Scalar observation of u₀ with variance r²; Joseph form.
                let s = pc[0][0] + r2;
                let mut gain = [0.0; MAXP];
                for i in 0..p {
                    gain[i] = pc[i][0] / s;
                }
                let innov = yv - m[0];
                for i in 0..p {
                    m[i] += gain[i] * innov;
                }
                let mut ikh = ZERO;
                for i in 0..p {
                    ikh[i][i] = 1.0;
                    ikh[i][0] -= gain[i];
                }
                let mut np = matmul(&matmul(&ikh, &pc, p), &transpose(&ikh, p), p);
                for i in 0..p {
                    for j in 0..p {
                        np[i][j] += r2 * gain[i] * gain[j];
                    }
                }
                pc = np;
            }
            mf.push(m);
            pf.push(pc);
        }
        // Backward: gains, conditional factors and the posterior mean.
        let mut gain = vec![ZERO; k];
        let mut factor = vec![ZERO; k];
        let mut mean = vec![0.0; k];
        let mut mu_next = mf[k - 1];
        factor[k - 1] = chol_psd(&pf[k - 1], p);
        mean[k - 1] = mu_next[0];
        for t in (0..k - 1).rev() {
            let (a, q) = self.model.step(nodes.pos[t + 1] - nodes.pos[t]);
            let pt = &pf[t];
            let ap = matmul(&a, pt, p); // A P
            let mut pred = matmul(&ap, &transpose(&a, p), p);
            for i in 0..p {
                for j in 0..p {
                    pred[i][j] += q[i][j];
                }
            }
            // G = P Aᵀ pred⁻¹, i.e. pred Gᵀ = A P.
            let g = transpose(&solve_psd(&pred, &ap, p), p);
            // Joseph form of the conditional covariance: (I − GA)P(I − GA)ᵀ + GQGᵀ.
            let ga = matmul(&g, &a, p);
            let mut iga = ZERO;
            for i in 0..p {
                for j in 0..p {
                    iga[i][j] = if i == j { 1.0 } else { 0.0 } - ga[i][j];
                }
            }
            let mut c = matmul(&matmul(&iga, pt, p), &transpose(&iga, p), p);
            let gq = matmul(&matmul(&g, &q, p), &transpose(&g, p), p);
            for i in 0..p {
                for j in 0..p {
                    c[i][j] += gq[i][j];
                }
            }
            let am = matvec(&a, &mf[t], p);
            let mut mu = mf[t];
            let corr = matvec(&g, &std::array::from_fn(|i| mu_next[i] - am[i]), p);
            for i in 0..p {
                mu[i] += corr[i];
            }
            gain[t] = g;
            factor[t] = chol_psd(&c, p);
            mean[t] = mu[0];
            mu_next = mu;
        }
        Smoother { gain, factor, mean }
    }

    /// `draws` paths at the 1-D points `q`, taking standard normals from
    /// `normal` in a fixed order (so the draws are a fixed linear map of the
    /// normals: tests read off the exact mean and covariance).
    pub(crate) fn sample_with(
        &self,
        q: &[f64],
        draws: usize,
        normal: &mut dyn FnMut() -> f64,
    ) -> Result<(Vec<Vec<f64>>, f64)> {
        if let Some(i) = q.iter().position(|v| !v.is_finite()) {
            return Err(Error::Data { row: i + 1, message: format!("query point {} is not finite", q[i]) });
        }
        if q.is_empty() {
            return Ok((vec![Vec::new(); draws], self.jitter()));
        }
        let p = self.model.p;
        let nodes = nodes(&self.x, &self.y, q);
        let sm = self.smoother(&nodes);
        let k = nodes.pos.len();
        // Sorted distinct query positions, for the prior draw g.
        let qnodes: Vec<usize> = (0..k).filter(|&t| nodes.has_query[t]).collect();
        // The prior chain at the query nodes, for g: transition and noise factor per step
        // (the same for every draw).
        let prior_steps: Vec<(Matrix, Matrix)> = if self.gp_noise > 0.0 {
            qnodes
                .iter()
                .enumerate()
                .map(|(j, &t)| {
                    if j == 0 {
                        (ZERO, chol_psd(&self.model.pinf, p))
                    } else {
                        let (a, q) = self.model.step(nodes.pos[t] - nodes.pos[qnodes[j - 1]]);
                        (a, chol_psd(&q, p))
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        let jitter = self.jitter();
        let sj = jitter.sqrt();
        let mut out = Vec::with_capacity(draws);
        let mut zq = vec![0.0; k];
        let mut gq = vec![0.0; k];
        for _ in 0..draws {
            // z ~ GP(0, k_D): backward recursion of the noise.
            let mut z = [0.0; MAXP];
            for t in (0..k).rev() {
                let eps: Vector = std::array::from_fn(|i| if i < p { normal() } else { 0.0 });
                let mut carried = if t + 1 < k { matvec(&sm.gain[t], &z, p) } else { [0.0; MAXP] };
                if mutated() {
                    carried.iter_mut().for_each(|c| *c = -*c);
                }
                let fresh = matvec(&sm.factor[t], &eps, p);
                for i in 0..p {
                    z[i] = carried[i] + fresh[i];
                }
                zq[t] = z[0];
            }
            // g ~ GP(0, k) at the query nodes: forward simulation.
            if self.gp_noise > 0.0 {
                // u₁ = L∞ε, u_{j+1} = A_j u_j + L_{Q,j}ε (A₀ = 0 carries nothing).
                let mut u = [0.0; MAXP];
                for (&t, (a, lq)) in qnodes.iter().zip(&prior_steps) {
                    let eps: Vector = std::array::from_fn(|i| if i < p { normal() } else { 0.0 });
                    let carried = matvec(a, &u, p);
                    let fresh = matvec(lq, &eps, p);
                    for i in 0..p {
                        u[i] = carried[i] + fresh[i];
                    }
                    gq[t] = u[0];
                }
            }
            // Jitter per distinct query point; repeated points share a value.
            let mut jit = vec![0.0; k];
            for &t in &qnodes {
                jit[t] = sj * normal();
            }
            let values: Vec<f64> = nodes
                .query_node
                .iter()
                .map(|&t| sm.mean[t] + self.scale * zq[t] + self.gp_noise * gq[t] + jit[t])
                .collect();
            out.push(values);
        }
        Ok((out, jitter))
    }
}

impl Sampler for StateSpaceSampler {
    fn sample(&self, points: &Points, draws: Draws, rng: &mut ReleaseRng) -> Result<SampledPaths> {
        if points.dim() != 1 {
            return Err(Error::Dimension(format!(
                "the state-space sampler is 1-D, but the query points are {}-D",
                points.dim()
            )));
        }
        let l = check_values(points.len(), draws)?;
        let (values, jitter) = self.sample_with(points.as_slice(), l, &mut || rng.normal())?;
        Ok(SampledPaths { values, jitter, method: METHOD })
    }
}

#[cfg(test)]
mod tests;
