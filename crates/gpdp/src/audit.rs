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

/// The exact split of a Rényi divergence between two Gaussians into its mean
/// and covariance parts (docs/proofs/preliminaries.md §5):
///
/// ```text
/// D_α = α/(2σ²)·δᵀK_α⁻¹δ + covariance,
/// covariance = −log( det K_α / (det K₁^{1−α} det K₂^α) ) / (2(α−1)),
/// ```
///
/// with K₁, K₂ the covariances divided by σ² (so `covariance` does not
/// depend on σ without GP noise, and the mean part scales as 1/σ²).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DivergenceParts {
    /// The zero-mean part: the divergence between the two centred Gaussians
    /// (+∞ when K_α is not positive definite).
    pub covariance: f64,
    /// δᵀK_α⁻¹δ (+∞ when K_α is not positive definite); the mean part is
    /// α/(2σ²) times this.
    pub quad: f64,
}

impl DivergenceParts {
    /// The mean part α/(2σ²)·δᵀK_α⁻¹δ at order α (0 when σ = ∞ and K_α is
    /// positive definite).
    pub fn mean(&self, alpha: f64, scale: f64) -> f64 {
        if !self.covariance.is_finite() {
            f64::INFINITY
        } else if scale.is_infinite() {
            0.0
        } else {
            alpha * self.quad / (2.0 * scale * scale)
        }
    }

    /// The whole divergence, mean part + covariance part.
    pub fn total(&self, alpha: f64, scale: f64) -> f64 {
        if !self.covariance.is_finite() {
            return f64::INFINITY;
        }
        self.mean(alpha, scale) + self.covariance
    }
}

/// h(λ) = log1p((α−1)λ)/(α−1) + log1p(−λ) for λ < 1, without the
/// cancellation of its two ≈ ±λ terms: by the power series
/// Σ_{k≥2} ((−1)^{k+1}(α−1)^{k−1} − 1)·λ^k/k where |λ|·max(1, α−1) ≤ 0.1
/// (40 terms: truncation below 10⁻⁴⁰ relative), directly elsewhere (where the
/// two terms differ by at least a factor 1.1, losing at most a digit).
fn h_term(am1: f64, lambda: f64) -> f64 {
    if lambda.abs() * am1.max(1.0) <= 0.1 {
        let mut sum = 0.0;
        let mut pow = lambda; // λ^k
        let mut apow = 1.0; // (α−1)^{k−1}
        for k in 2..=40 {
            pow *= lambda;
            apow *= am1;
            let sign = if k % 2 == 0 { -1.0 } else { 1.0 };
            sum += (sign * apow - 1.0) * pow / k as f64;
        }
        sum
    } else {
        (am1 * lambda).ln_1p() / am1 + (-lambda).ln_1p()
    }
}

/// The mean and covariance parts of D_α(N(μ₁, σ²K₁) ‖ N(μ₂, σ²K₂)) for
/// positive-definite K₁, K₂ and α = 1 + `am1` > 1 (see [`DivergenceParts`]).
/// Both parts are +∞ when K_α = αK₂ + (1−α)K₁ is not positive definite.
///
/// Computed without dividing a difference of log-determinants by α − 1
/// (which loses ε_mach·κ/(α−1) as α → 1): with K₂ = LLᵀ and
/// S = L⁻¹(K₂ − K₁)L⁻ᵀ = UΛUᵀ, K_α = L(I + (α−1)S)Lᵀ and K₁ = L(I − S)Lᵀ, so
///
/// ```text
/// covariance = −½·Σᵢ [log1p((α−1)λᵢ)/(α−1) + log1p(−λᵢ)],
/// δᵀK_α⁻¹δ  = Σᵢ (uᵢᵀL⁻¹δ)² / (1 + (α−1)λᵢ),
/// ```
///
/// and K_α ≻ 0 exactly when every 1 + (α−1)λᵢ > 0.
pub fn gaussian_renyi_parts(
    am1: f64,
    mu1: &[f64],
    k1: &Mat<f64>,
    mu2: &[f64],
    k2: &Mat<f64>,
) -> Result<DivergenceParts> {
    let m = mu1.len();
    if mu2.len() != m || k1.nrows() != m || k2.nrows() != m || k1.ncols() != m || k2.ncols() != m {
        return Err(Error::Dimension("means and covariances must all have the same size".into()));
    }
    let am1 = crate::error::positive("α − 1", am1)?;
    let not_pd = |what: &'static str| Error::Factorisation { what, detail: "not positive definite".into() };
    log_det_pd(k1).ok_or_else(|| not_pd("K₁"))?;
    let llt = k2.llt(Side::Lower).map_err(|_| not_pd("K₂"))?;
    let l = llt.L();
    // S = L⁻¹ (K₂ − K₁) L⁻ᵀ, symmetrised.
    let mut x = Mat::from_fn(m, m, |i, j| k2[(i, j)] - k1[(i, j)]);
    faer::linalg::triangular_solve::solve_lower_triangular_in_place(l, x.as_mut(), faer::Par::Seq);
    let mut xt = x.transpose().to_owned();
    faer::linalg::triangular_solve::solve_lower_triangular_in_place(l, xt.as_mut(), faer::Par::Seq);
    // Entries below 1e-150 are flushed to 0: they change the divergence by
    // O(λ²) < 1e-300, and subnormal entries stall the eigensolver.
    let sym = Mat::from_fn(m, m, |i, j| {
        let e = 0.5 * (xt[(i, j)] + xt[(j, i)]);
        if e.abs() < 1e-150 { 0.0 } else { e }
    });
    if (0..m).any(|i| (0..m).any(|j| !sym[(i, j)].is_finite())) {
        return Err(Error::Factorisation { what: "L⁻¹(K₂ − K₁)L⁻ᵀ", detail: "not finite".into() });
    }
    let eig = sym
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| Error::Factorisation { what: "L⁻¹(K₂ − K₁)L⁻ᵀ", detail: format!("{e:?}") })?;
    let (lam, u) = (eig.S(), eig.U());
    if (0..m).any(|i| !(1.0 + am1 * lam[i] > 0.0)) {
        return Ok(DivergenceParts { covariance: f64::INFINITY, quad: f64::INFINITY });
    }
    if (0..m).any(|i| !(lam[i] < 1.0)) {
        return Err(not_pd("K₁ (relative to K₂)"));
    }
    let covariance = -0.5 * (0..m).map(|i| h_term(am1, lam[i])).sum::<f64>();
    let mut z = Mat::from_fn(m, 1, |i, _| mu1[i] - mu2[i]);
    faer::linalg::triangular_solve::solve_lower_triangular_in_place(l, z.as_mut(), faer::Par::Seq);
    let quad: f64 = (0..m)
        .map(|i| {
            let c: f64 = (0..m).map(|k| u[(k, i)] * z[(k, 0)]).sum();
            c * c / (1.0 + am1 * lam[i])
        })
        .sum();
    Ok(DivergenceParts { covariance, quad })
}

/// D_α(N(μ₁, σ²K₁) ‖ N(μ₂, σ²K₂)) for positive-definite K₁, K₂ and α > 1.
/// Returns +∞ when K_α = αK₂ + (1−α)K₁ is not positive definite (the
/// divergence is infinite there).
pub fn gaussian_renyi(alpha: f64, mu1: &[f64], k1: &Mat<f64>, mu2: &[f64], k2: &Mat<f64>, scale: f64) -> Result<f64> {
    Ok(gaussian_renyi_parts(alpha - 1.0, mu1, k1, mu2, k2)?.total(alpha, scale))
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

/// The exact common-core quantities of a neighbouring pair at its two
/// differing points x, x' (docs/proofs/preliminaries.md §1): everything the
/// exact divergence and sensitivity of the pair depend on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoreQuantities {
    /// v = k₋(x, x).
    pub v: f64,
    /// v' = k₋(x', x').
    pub v2: f64,
    /// k₋(x, x').
    pub w: f64,
    /// μ₋(x) (0 for an empty core).
    pub mu: f64,
    /// μ₋(x').
    pub mu2: f64,
    /// k(x, x) − v = k_xᵀA⁻¹k_x, computed directly (accurate also when v is
    /// close to k(x, x)); 0 for an empty core.
    pub explained: f64,
    /// k(x', x') − v', computed directly.
    pub explained2: f64,
    /// The residual y − μ₋(x).
    pub e: f64,
    /// The residual y' − μ₋(x').
    pub e2: f64,
}

/// Computes the [`CoreQuantities`] of a pair (one Cholesky factorisation of
/// the core's K + r²I).
pub fn core_quantities(kernel: &Kernel, pair: &NeighbourPair, ridge: f64) -> Result<CoreQuantities> {
    let q = Points::from_rows(&[pair.x.clone(), pair.x2.clone()])?;
    if pair.core_y.is_empty() {
        let w = kernel.eval(&pair.x, &pair.x2)?;
        return Ok(CoreQuantities {
            v: kernel.diag(&pair.x),
            v2: kernel.diag(&pair.x2),
            w,
            mu: 0.0,
            mu2: 0.0,
            explained: 0.0,
            explained2: 0.0,
            e: pair.y,
            e2: pair.y2,
        });
    }
    let core = Dataset::new(pair.core_x.clone(), pair.core_y.clone())?;
    let post = Posterior::fit(*kernel, &core, ridge)?;
    let c = post.covariance(&q, &q)?;
    let mu = post.mean(&q)?;
    let cross = kernel.cross(post.train_x(), &q); // distinct core covariates (the posterior aggregates repeats)
    let explained = |j: usize| -> Result<f64> {
        let k: Vec<f64> = (0..cross.nrows()).map(|i| cross[(i, j)]).collect();
        let a = post.solve(&k)?;
        Ok(k.iter().zip(&a).map(|(u, v)| u * v).sum::<f64>().max(0.0))
    };
    Ok(CoreQuantities {
        v: c[(0, 0)],
        v2: c[(1, 1)],
        w: c[(0, 1)],
        mu: mu[0],
        mu2: mu[1],
        explained: explained(0)?,
        explained2: explained(1)?,
        e: pair.y - mu[0],
        e2: pair.y2 - mu[1],
    })
}

impl CoreQuantities {
    /// ‖μ_D − μ_D'‖ in the RKHS of k₋ (docs/proofs/preliminaries.md §4):
    /// with a = (y − μ₋(x))/(v + r²), a' = (y' − μ₋(x'))/(v' + r²),
    /// ‖μ_D − μ_D'‖² = a²v + a'²v' − 2aa'·k₋(x, x'). It is ≤ Δ_n(r) by
    /// definition.
    pub fn sensitivity(&self, ridge: f64) -> f64 {
        let r2 = ridge * ridge;
        let (a, a2) = (self.e / (self.v + r2), self.e2 / (self.v2 + r2));
        let norm2 = a * a * self.v + a2 * a2 * self.v2 - 2.0 * a * a2 * self.w;
        norm2.max(0.0).sqrt()
    }

    /// The exact mean and covariance parts of sup over test sets X_T of
    /// D_α(Π_D(X_T) ‖ Π_D'(X_T)) without GP noise, at order α = 1 + `am1`,
    /// computed in the 2-D span of k₋(·, x), k₋(·, x') (docs/proofs/theorem-3.1.md
    /// §7; the supremum is attained by every X_T ⊇ {x, x'}). The covariance
    /// part does not depend on σ; the mean part is [`DivergenceParts::mean`].
    ///
    /// Closed form (theorem-3.1.md §8), with s = v + r², s' = v' + r²,
    /// w = k₋(x, x'), Γ = vv' − w², e, e' the residuals:
    ///
    /// ```text
    /// D = (s + (α−1)v)(r² − (α−1)v') + α(α−1)w²   (det K_α = D/(ss')),
    /// covariance = −log1p((α−1)E/(r²s))/(2(α−1)) + ½·log(s/s'),
    ///   E = −αΓ − r²(v' − v)                      (D = r²s + (α−1)E),
    /// δᵀK_α⁻¹δ = [e·(q·g + α·w·g') + e'·((α−1)·w·g − p·g')]/D,
    ///   p = s + (α−1)v, q = r² − (α−1)v', g = ve/s − we'/s', g' = we/s − v'e'/s'.
    /// ```
    ///
    /// α − 1 is passed directly: near the end of the admissible range the
    /// divergence depends on r² − (α−1)v', which 1 + (α−1) would round away.
    /// Both parts are +∞ when D ≤ 0 (K_α not positive definite).
    pub fn divergence_parts(&self, ridge: f64, am1: f64) -> Result<DivergenceParts> {
        let am1 = crate::error::positive("α − 1", am1)?;
        let (v, v2, w, e, e2) = (self.v.max(0.0), self.v2.max(0.0), self.w, self.e, self.e2);
        let alpha = 1.0 + am1;
        let r2 = ridge * ridge;
        let (s1, s2) = (v + r2, v2 + r2);
        let p = s1 + am1 * v;
        let q = r2 - am1 * v2;
        let d = p * q + alpha * am1 * w * w;
        if !(d > 0.0) {
            return Ok(DivergenceParts { covariance: f64::INFINITY, quad: f64::INFINITY });
        }
        // Γ = det G ≥ 0 by Cauchy–Schwarz in the RKHS of k₋.
        let gamma = (v * v2 - w * w).max(0.0);
        let big_e = -alpha * gamma - r2 * (v2 - v);
        let x = am1 * big_e / (r2 * s1);
        let log_ratio = if x.abs() < 0.5 { x.ln_1p() } else { d.ln() - (r2 * s1).ln() };
        let covariance = -log_ratio / (2.0 * am1) + 0.5 * (s1 / s2).ln();
        let (a1, a2) = (e / s1, e2 / s2);
        let g1 = v * a1 - w * a2;
        let g2 = w * a1 - v2 * a2;
        let quad = ((e * (q * g1 + alpha * w * g2) + e2 * (am1 * w * g1 - p * g2)) / d).max(0.0);
        Ok(DivergenceParts { covariance, quad })
    }
}

/// The exact common-core quantities of a pair: (k₋(x,x), k₋(x',x'),
/// ‖μ_D − μ_D'‖ in the RKHS of k₋). The first two are ≤ V_n(r) and the
/// third is ≤ Δ_n(r) by definition (Definition 3.1), so they audit V̂ and Δ̂.
pub fn core_audit(kernel: &Kernel, pair: &NeighbourPair, ridge: f64) -> Result<(f64, f64, f64)> {
    let c = core_quantities(kernel, pair, ridge)?;
    Ok((c.v, c.v2, c.sensitivity(ridge)))
}

/// sup over test sets X_T of D_α(Π_D(X_T) ‖ Π_D'(X_T)) for a neighbouring
/// pair, computed exactly in the 2-D span of k₋(·, x), k₋(·, x') (the
/// supremum is attained by every X_T ⊇ {x, x'}). σ may be +∞.
pub fn neighbour_divergence(kernel: &Kernel, pair: &NeighbourPair, ridge: f64, scale: f64, alpha: f64) -> Result<f64> {
    Ok(neighbour_divergence_parts(kernel, pair, ridge, alpha)?.total(alpha, scale))
}

/// The mean and covariance parts of [`neighbour_divergence`] (the exact split
/// of docs/proofs/preliminaries.md §5): the covariance part is the σ = ∞
/// value, and the mean part is the rest.
pub fn neighbour_divergence_parts(
    kernel: &Kernel,
    pair: &NeighbourPair,
    ridge: f64,
    alpha: f64,
) -> Result<DivergenceParts> {
    core_quantities(kernel, pair, ridge)?.divergence_parts(ridge, alpha - 1.0)
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
    Ok(dense_divergence_parts(kernel, pair, test, ridge, scale, gp_noise, alpha - 1.0)?.total(alpha, scale))
}

/// The mean and covariance parts of [`dense_divergence`]: the covariances are
/// K_D + (η/σ)²K(X_T, X_T) (normalised by σ²), so with η > 0 both parts
/// depend on σ; [`DivergenceParts::mean`] with the same σ gives the mean part.
/// The order is α = 1 + `am1` (see [`gaussian_renyi_parts`]).
pub fn dense_divergence_parts(
    kernel: &Kernel,
    pair: &NeighbourPair,
    test: &Points,
    ridge: f64,
    scale: f64,
    gp_noise: f64,
    am1: f64,
) -> Result<DivergenceParts> {
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
    gaussian_renyi_parts(am1, &mu1, &k1, &mu2, &k2)
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

        // As α → 1 (α − 1 passed directly): the covariance part of
        // D_α(N(0,1) ‖ N(0,2)) is −[log1p((α−1)/2)/(α−1) − log 2]/2, which
        // tends to KL = ½(½ − 1 + log 2); a log-determinant difference divided
        // by α − 1 would lose ε_mach/(α−1) here.
        for am1 in [1e-3, 1e-6, 1e-9, 1e-12] {
            let parts = gaussian_renyi_parts(am1, &[0.0], &k1, &[0.0], &k2).unwrap();
            let want = -((am1 / 2.0).ln_1p() / am1 - 2f64.ln()) / 2.0;
            assert!((parts.covariance - want).abs() <= 1e-14 * want, "{am1}: {} vs {want}", parts.covariance);
            assert_eq!(parts.quad, 0.0);
        }
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

    /// Near the end of the admissible range (α − 1 → r²/v' with w = 0) the
    /// closed form keeps full accuracy: it matches the one-dimensional
    /// formulas to 1e-12 and the signed covariance term cov_α(τ) within its
    /// own error bound, where
    /// factorising K_α (smallest eigenvalue ~1e-10 here) loses ~1e-6.
    #[test]
    fn closed_form_is_accurate_at_the_end_of_the_admissible_range() {
        let ridge: f64 = 0.02;
        let r2 = ridge * ridge;
        let core = CoreQuantities {
            v: 1.0,
            v2: 1.0,
            w: 0.0,
            mu: 0.0,
            mu2: 0.0,
            explained: 0.0,
            explained2: 0.0,
            e: 0.7,
            e2: -0.4,
        };
        for frac in [0.5, 0.999, 1.0 - 1e-6] {
            let am1 = frac * r2;
            let parts = core.divergence_parts(ridge, am1).unwrap();
            let s = 1.0 + r2;
            let quad = 0.49 / (s * (s + am1)) + 0.16 / (s * (r2 - am1));
            assert!((parts.quad - quad).abs() <= 1e-12 * quad, "{frac}: {} vs {quad}", parts.quad);
            // cov_α(τ) carries its own rounding error (1 − x ≈ 1e-6 here), bounded by err.
            let (cov, err) = crate::privacy::rdp::cov_signed_with_err(am1, 1.0 / r2);
            assert!((parts.covariance - cov).abs() <= err + 1e-12 * cov, "{frac}: {} vs {cov}", parts.covariance);
        }
        // Past the end of the range K_α is not positive definite.
        let parts = core.divergence_parts(ridge, 1.01 * r2 * (1.0 + r2)).unwrap();
        assert!(parts.covariance.is_infinite() && parts.quad.is_infinite());
        assert!(core.divergence_parts(ridge, 0.0).is_err());
    }

    #[test]
    fn parts_are_the_exact_split() {
        let kernel = Kernel::exponential(0.4).unwrap();
        let pair = NeighbourPair {
            core_x: Points::from_1d(&[0.1, 0.35, 0.6, 0.62]),
            core_y: vec![0.3, -0.8, 1.0, 0.2],
            x: vec![0.5],
            y: 1.0,
            x2: vec![0.9],
            y2: -1.0,
        };
        let (ridge, alpha) = (0.7, 1.6);
        let core = core_quantities(&kernel, &pair, ridge).unwrap();
        let parts = core.divergence_parts(ridge, alpha - 1.0).unwrap();
        // The covariance part is the σ = ∞ divergence; the mean part is the rest.
        let inf = neighbour_divergence(&kernel, &pair, ridge, f64::INFINITY, alpha).unwrap();
        assert_eq!(parts.covariance, inf);
        for scale in [0.3, 1.0, 4.0] {
            let total = neighbour_divergence(&kernel, &pair, ridge, scale, alpha).unwrap();
            assert!((parts.total(alpha, scale) - total).abs() <= 1e-14 * total);
            assert!((parts.mean(alpha, scale) - (total - inf)).abs() <= 1e-12 * total);
        }
        // The same parts from the dense computation on a test set ⊇ {x, x'}.
        let test = Points::from_1d(&[0.5, 0.9, 0.05, 0.7]);
        let dense = dense_divergence_parts(&kernel, &pair, &test, ridge, 1.0, 0.0, alpha - 1.0).unwrap();
        assert!((dense.covariance - parts.covariance).abs() <= 1e-9 * parts.covariance);
        assert!((dense.quad - parts.quad).abs() <= 1e-9 * parts.quad);
        // Core quantities: residuals, the RKHS norm, and k(x,x) − v computed directly.
        let (v, v2, norm) = core_audit(&kernel, &pair, ridge).unwrap();
        assert_eq!((v, v2, norm), (core.v, core.v2, core.sensitivity(ridge)));
        assert!((core.explained - (1.0 - core.v)).abs() < 1e-14 && (core.explained2 - (1.0 - core.v2)).abs() < 1e-14);
        assert_eq!((core.e, core.e2), (pair.y - core.mu, pair.y2 - core.mu2));
    }
}
