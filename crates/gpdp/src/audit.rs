//! Exact Rényi divergences between posterior Gaussians, for auditing the
//! accountant (docs/proofs/preliminaries.md).
//!
//! For neighbours D = D₋ ∪ {(x, y)} and D' = D₋ ∪ {(x', y')} and any finite
//! test set X_T, the two released vectors are N(μ_D(X_T), σ²K_D) and
//! N(μ_D'(X_T), σ²K_D'), and
//!
//! ```text
//! D_α = α/(2σ²)·δᵀK_α⁻¹δ − 1/(2(α−1))·log( det K_α / (det K_D^{1−α} det K_D'^α) ),
//! K_α = α·K_D' + (1−α)·K_D,   δ = μ_D(X_T) − μ_D'(X_T).
//! ```
//!
//! Theorem 3.1 must dominate this for every pair, test set and admissible α.
//! [`gaussian_renyi`] evaluates it densely; [`neighbour_divergence`] uses the
//! one-step update (docs/proofs/preliminaries.md) to evaluate it exactly for every X_T that
//! contains x and x' (which is also the supremum over test sets), in a 2-D
//! subspace, so it stays accurate for smooth kernels whose Gram matrices are
//! numerically singular.

use faer::{Mat, Side};

use crate::error::{Error, Result};
use crate::model::data::Dataset;
use crate::model::kernel::Kernel;
use crate::model::points::Points;
use crate::posterior::Posterior;

fn log_det_pd(m: &Mat<f64>) -> Option<f64> {
    let llt = m.llt(Side::Lower).ok()?;
    let l = llt.L();
    Some((0..m.nrows()).map(|i| 2.0 * l[(i, i)].ln()).sum())
}

/// D_α(N(μ₁, σ²K₁) ‖ N(μ₂, σ²K₂)) for positive-definite K₁, K₂ and α > 1.
/// Returns +∞ when K_α = αK₂ + (1−α)K₁ is not positive definite (the
/// divergence is infinite there).
pub fn gaussian_renyi(alpha: f64, mu1: &[f64], k1: &Mat<f64>, mu2: &[f64], k2: &Mat<f64>, scale: f64) -> Result<f64> {
    let m = mu1.len();
    if mu2.len() != m || k1.nrows() != m || k2.nrows() != m || k1.ncols() != m || k2.ncols() != m {
        return Err(Error::Dimension("means and covariances must all have the same size".into()));
    }
    if !(alpha > 1.0) {
        return Err(Error::InvalidParameter { name: "α", value: alpha.to_string(), requirement: "> 1" });
    }
    let ld1 =
        log_det_pd(k1).ok_or_else(|| Error::Factorisation { what: "K₁", detail: "not positive definite".into() })?;
    let ld2 =
        log_det_pd(k2).ok_or_else(|| Error::Factorisation { what: "K₂", detail: "not positive definite".into() })?;
    let ka = Mat::from_fn(m, m, |i, j| alpha * k2[(i, j)] + (1.0 - alpha) * k1[(i, j)]);
    let Ok(llt) = ka.llt(Side::Lower) else { return Ok(f64::INFINITY) };
    let l = llt.L();
    let lda: f64 = (0..m).map(|i| 2.0 * l[(i, i)].ln()).sum();
    let mut d = Mat::from_fn(m, 1, |i, _| mu1[i] - mu2[i]);
    faer::linalg::triangular_solve::solve_lower_triangular_in_place(l, d.as_mut(), faer::Par::Seq);
    let quad: f64 = (0..m).map(|i| d[(i, 0)] * d[(i, 0)]).sum();
    let mean = if scale.is_infinite() { 0.0 } else { alpha * quad / (2.0 * scale * scale) };
    Ok(mean - (lda - (1.0 - alpha) * ld1 - alpha * ld2) / (2.0 * (alpha - 1.0)))
}

/// One neighbouring pair: a common core and the two differing records.
#[derive(Debug, Clone, PartialEq)]
pub struct NeighbourPair {
    /// The common core D₋ (n − 1 records; may be empty).
    pub core_x: Points,
    /// Core responses.
    pub core_y: Vec<f64>,
    /// The record in D only.
    pub x: Vec<f64>,
    /// Its response.
    pub y: f64,
    /// The record in D' only.
    pub x2: Vec<f64>,
    /// Its response.
    pub y2: f64,
}

impl NeighbourPair {
    /// D = D₋ ∪ {(x, y)} and D' = D₋ ∪ {(x', y')}.
    pub fn datasets(&self) -> Result<(Dataset, Dataset)> {
        let mut xa = self.core_x.clone();
        xa.push(&self.x)?;
        let mut ya = self.core_y.clone();
        ya.push(self.y);
        let mut xb = self.core_x.clone();
        xb.push(&self.x2)?;
        let mut yb = self.core_y.clone();
        yb.push(self.y2);
        Ok((Dataset::new(xa, ya)?, Dataset::new(xb, yb)?))
    }
}

/// Common-core quantities at the differing points: v = k₋(x,x),
/// v' = k₋(x',x'), w = k₋(x,x'), and residuals y − μ₋(x), y' − μ₋(x').
fn core_quantities(kernel: &Kernel, pair: &NeighbourPair, ridge: f64) -> Result<[f64; 5]> {
    let q = Points::from_rows(&[pair.x.clone(), pair.x2.clone()])?;
    if pair.core_y.is_empty() {
        let w = kernel.eval(&pair.x, &pair.x2)?;
        return Ok([kernel.diag(&pair.x), kernel.diag(&pair.x2), w, pair.y, pair.y2]);
    }
    let core = Dataset::new(pair.core_x.clone(), pair.core_y.clone())?;
    let post = Posterior::fit(*kernel, &core, ridge)?;
    let c = post.covariance(&q, &q)?;
    let mu = post.mean(&q)?;
    Ok([c[(0, 0)], c[(1, 1)], c[(0, 1)], pair.y - mu[0], pair.y2 - mu[1]])
}

/// The exact common-core quantities of a pair: (k₋(x,x), k₋(x',x'),
/// ‖μ_D − μ_D'‖ in the RKHS of k₋). The first two are ≤ V_n(r) and the
/// third is ≤ Δ_n(r) by definition (Definition 3.1), so they audit V̂ and Δ̂.
pub fn core_audit(kernel: &Kernel, pair: &NeighbourPair, ridge: f64) -> Result<(f64, f64, f64)> {
    let [v, v2, w, e, e2] = core_quantities(kernel, pair, ridge)?;
    let r2 = ridge * ridge;
    // μ_D − μ_D' = a·k₋(·,x) − a'·k₋(·,x') (one-step update, docs/proofs/preliminaries.md).
    let (a, a2) = (e / (v + r2), e2 / (v2 + r2));
    let norm2 = a * a * v + a2 * a2 * v2 - 2.0 * a * a2 * w;
    Ok((v, v2, norm2.max(0.0).sqrt()))
}

/// sup over test sets X_T of D_α(Π_D(X_T) ‖ Π_D'(X_T)) for a neighbouring
/// pair, computed exactly in the 2-D span of k₋(·, x), k₋(·, x') (the
/// supremum is attained by every X_T ⊇ {x, x'}). σ may be +∞.
pub fn neighbour_divergence(kernel: &Kernel, pair: &NeighbourPair, ridge: f64, scale: f64, alpha: f64) -> Result<f64> {
    let [v, v2, w, e, e2] = core_quantities(kernel, pair, ridge)?;
    let r2 = ridge * ridge;
    // Gram matrix G of k₋(·,x), k₋(·,x') in the RKHS of k₋; factor G = FᵀF.
    let g = Mat::from_fn(2, 2, |i, j| match (i, j) {
        (0, 0) => v,
        (1, 1) => v2,
        _ => w,
    });
    let eig = g
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| Error::Factorisation { what: "the 2×2 Gram matrix", detail: format!("{e:?}") })?;
    let (s, u) = (eig.S(), eig.U());
    // Columns b1, b2 of F = diag(√λ) Uᵀ.
    let f = Mat::from_fn(2, 2, |i, j| s[i].max(0.0).sqrt() * u[(j, i)]);
    let b1 = [f[(0, 0)], f[(1, 0)]];
    let b2 = [f[(0, 1)], f[(1, 1)]];
    let cov = |b: [f64; 2], s: f64| Mat::from_fn(2, 2, |i, j| if i == j { 1.0 } else { 0.0 } - b[i] * b[j] / s);
    let k1 = cov(b1, v + r2);
    let k2 = cov(b2, v2 + r2);
    let (a1, a2) = (e / (v + r2), e2 / (v2 + r2));
    let mu1 = [a1 * b1[0], a1 * b1[1]];
    let mu2 = [a2 * b2[0], a2 * b2[1]];
    gaussian_renyi(alpha, &mu1, &k1, &mu2, &k2, scale)
}

/// D_α between the two posteriors on an explicit test set, computed densely
/// from the full posteriors of D and D' (no one-step update), with optional
/// added GP noise η (covariances σ²K_D + η²K(X_T, X_T)). σ may be +∞ only
/// when η = 0.
pub fn dense_divergence(
    kernel: &Kernel,
    pair: &NeighbourPair,
    test: &Points,
    ridge: f64,
    scale: f64,
    gp_noise: f64,
    alpha: f64,
) -> Result<f64> {
    let (d1, d2) = pair.datasets()?;
    let p1 = Posterior::fit(*kernel, &d1, ridge)?;
    let p2 = Posterior::fit(*kernel, &d2, ridge)?;
    let mut k1 = p1.covariance(test, test)?;
    let mut k2 = p2.covariance(test, test)?;
    let (mu1, mu2) = (p1.mean(test)?, p2.mean(test)?);
    if gp_noise > 0.0 {
        // Work with covariances divided by σ²: K_D + (η/σ)²K.
        let ratio = (gp_noise / scale).powi(2);
        let prior = kernel.gram(test);
        k1 += &prior * faer::Scale(ratio);
        k2 += &prior * faer::Scale(ratio);
    }
    gaussian_renyi(alpha, &mu1, &k1, &mu2, &k2, scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn univariate_closed_form() {
        // D_α(N(0,1) ‖ N(1,2)) = α/(2(α·2 + 1 − α))·1 − 1/(2(α−1))·log((α·2 + 1 − α)/2^α).
        let alpha: f64 = 3.0;
        let k1 = Mat::from_fn(1, 1, |_, _| 1.0);
        let k2 = Mat::from_fn(1, 1, |_, _| 2.0);
        let got = gaussian_renyi(alpha, &[0.0], &k1, &[1.0], &k2, 1.0).unwrap();
        let s = alpha * 2.0 + 1.0 - alpha;
        let want = alpha / (2.0 * s) - (s / 2f64.powf(alpha)).ln() / (2.0 * (alpha - 1.0));
        assert!((got - want).abs() < 1e-14, "{got} {want}");
        // Not finite when K_α is not positive definite: α·1 + (1−α)·2 ≤ 0 for α ≥ 2.
        assert_eq!(gaussian_renyi(3.0, &[0.0], &k2, &[0.0], &k1, 1.0).unwrap(), f64::INFINITY);
    }

    #[test]
    fn reduced_equals_dense_on_test_sets_containing_the_pair() {
        let kernel = Kernel::exponential(0.4).unwrap();
        let pair = NeighbourPair {
            core_x: Points::from_1d(&[0.1, 0.35, 0.6, 0.62]),
            core_y: vec![0.3, -0.8, 1.0, 0.2],
            x: vec![0.5],
            y: 1.0,
            x2: vec![0.9],
            y2: -1.0,
        };
        for (ridge, scale, alpha) in [(0.5, 1.0, 1.1), (1.3, 0.3, 2.0), (0.2, f64::INFINITY, 1.02)] {
            let red = neighbour_divergence(&kernel, &pair, ridge, scale, alpha).unwrap();
            for test in [vec![0.5, 0.9], vec![0.0, 0.5, 0.77, 0.9, 1.0]] {
                let dense =
                    dense_divergence(&kernel, &pair, &Points::from_1d(&test), ridge, scale, 0.0, alpha).unwrap();
                assert!(red.is_finite() && (red - dense).abs() < 1e-9 * (1.0 + red), "{red} vs {dense}");
            }
            // A test set missing x' sees less (data processing).
            let part =
                dense_divergence(&kernel, &pair, &Points::from_1d(&[0.5, 0.2]), ridge, scale, 0.0, alpha).unwrap();
            assert!(part <= red + 1e-12);
        }
    }
}
