//! The change-one-response relation (covariates public, one response
//! changed by at most 2M): the release is a Gaussian mechanism, and its
//! distance has a closed form (docs/proofs/change-response.md).
//!
//! ```text
//! μ² = L·4M²·max_i s_i,   s_i = [K A⁻¹ (σ²r²·I + η²A)⁻¹]_ii,   A = K + r²I,
//! μ² ≤ L·4M² / ((1 + r²)·r²·(σ² + η²))                       (any covariates),
//! ```
//!
//! This module holds the bound that needs no covariates
//! ([`mu_without_covariates`]); the exact (ε, δ) of a distance is
//! [`super::gaussian`].

use crate::error::{Result, non_negative};
use crate::model::draws::Draws;

/// Unit roundoff of f64.
const U: f64 = f64::EPSILON / 2.0;

/// The Gaussian distance μ of L draws under change-one-response for any
/// covariates (docs/proofs/change-response.md §4), rounded up:
/// μ = √L·2M / (r·√(1 + r²)·√(σ² + η²)); 0 when σ = ∞ (the mean is not
/// released). Valid for r > 0, σ > 0 (∞ allowed), η ≥ 0, M ≥ 0.
pub fn mu_without_covariates(response_bound: f64, ridge: f64, scale: f64, gp_noise: f64, draws: Draws) -> Result<f64> {
    non_negative("response bound M_Y", response_bound)?;
    crate::error::ridge(ridge)?;
    crate::error::scale(scale)?;
    crate::error::gp_noise(gp_noise)?;
    if scale.is_infinite() || response_bound == 0.0 {
        return Ok(0.0);
    }
    // μ itself, not μ², so that no intermediate overflows to a too-small
    // result: an overflowing denominator gives 0 → the next double up, which
    // is above the true μ; an overflowing numerator gives +∞.
    let q = ridge * ridge;
    let denom = ridge * (1.0 + q).sqrt() * (scale * scale + gp_noise * gp_noise).sqrt();
    let mu = 2.0 * response_bound * draws.as_f64().sqrt() / denom;
    // Eleven correctly rounded operations: 16u relative, then up.
    Ok((mu * (1.0 + 16.0 * U)).next_up())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kernel::Kernel;
    use crate::model::points::Points;
    use faer::linalg::solvers::Solve;
    use faer::{Mat, Side};
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn inverse(m: &Mat<f64>) -> Mat<f64> {
        let n = m.nrows();
        m.llt(Side::Lower).expect("positive definite").solve(Mat::<f64>::identity(n, n).as_ref())
    }

    /// s_i of the theorem, densely: K A⁻¹ (σ²q I + η²A)⁻¹.
    fn s_diag(k: &Mat<f64>, q: f64, sigma: f64, eta: f64) -> Vec<f64> {
        let n = k.nrows();
        let a = k + Mat::<f64>::identity(n, n) * q;
        let b = Mat::<f64>::identity(n, n) * (sigma * sigma * q) + &a * (eta * eta);
        let m = k * inverse(&a) * inverse(&b);
        (0..n).map(|i| m[(i, i)]).collect()
    }

    /// The squared Mahalanobis distance of the two released laws on T when
    /// response i changes by t, from the posterior formulas directly
    /// (model.md §3, §6), independent of the theorem's algebra; the model is
    /// (q = r², σ, η).
    fn mahalanobis(
        kernel: &Kernel,
        x: &Points,
        t_pts: &Points,
        i: usize,
        t: f64,
        (q, sigma, eta): (f64, f64, f64),
    ) -> f64 {
        let n = x.len();
        let k = kernel.gram(x);
        let a = &k + Mat::<f64>::identity(n, n) * q;
        let ai = inverse(&a);
        let ktx = kernel.cross(t_pts, x);
        let ktt = kernel.gram(t_pts);
        let m = t_pts.len();
        let mean: Vec<f64> = (0..m).map(|r| t * (0..n).map(|j| ktx[(r, j)] * ai[(j, i)]).sum::<f64>()).collect();
        let post = &ktt - &ktx * &ai * ktx.transpose();
        let c = post * (sigma * sigma) + &ktt * (eta * eta);
        // A pseudo-inverse by eigendecomposition (C_T may be singular when T
        // repeats points); eigenvalues below 1e-12·max are dropped.
        let eig = c.self_adjoint_eigen(Side::Lower).unwrap();
        let (u, s) = (eig.U(), eig.S());
        let top = (0..m).map(|j| s[j]).fold(0.0f64, f64::max);
        let mut total = 0.0;
        for j in 0..m {
            if s[j] > 1e-12 * top {
                let proj: f64 = (0..m).map(|r| u[(r, j)] * mean[r]).sum();
                total += proj * proj / s[j];
            }
        }
        total
    }

    fn random_points(rng: &mut ChaCha8Rng, n: usize) -> Points {
        let v: Vec<f64> = (0..2 * n).map(|_| rng.random_range(0.0..1.0)).collect();
        Points::new(v, 2).unwrap()
    }

    /// The theorem against the direct computation: on random and clustered
    /// test sets the distance never exceeds t²·s_i, and T = X attains it.
    #[test]
    fn the_closed_form_is_the_supremum_over_test_sets() {
        let mut rng = ChaCha8Rng::seed_from_u64(24);
        let kernel = Kernel::exponential(0.3).unwrap();
        for &(n, r, sigma, eta) in
            &[(12usize, 0.5, 1.0, 0.0), (15, 1.5, 0.5, 0.3), (10, 0.8, 2.0, 1.0), (8, 3.0, 0.12, 0.0)]
        {
            let x = random_points(&mut rng, n);
            let q = r * r;
            let s = s_diag(&kernel.gram(&x), q, sigma, eta);
            let t = 2.0;
            for i in [0, n / 2, n - 1] {
                let sup = t * t * s[i];
                let at_x = mahalanobis(&kernel, &x, &x, i, t, (q, sigma, eta));
                assert!((at_x - sup).abs() <= 1e-8 * sup, "n = {n}, i = {i}: at X {at_x} vs {sup}");
                for trial in 0..40 {
                    let m = 1 + trial % 12;
                    let pts = if trial % 2 == 0 {
                        random_points(&mut rng, m)
                    } else {
                        // Clustered around x_i.
                        let xi = x.row(i);
                        let v: Vec<f64> = (0..m)
                            .flat_map(|_| {
                                [xi[0] + rng.random_range(-0.02..0.02), xi[1] + rng.random_range(-0.02..0.02)]
                            })
                            .collect();
                        Points::new(v, 2).unwrap()
                    };
                    let d = mahalanobis(&kernel, &x, &pts, i, t, (q, sigma, eta));
                    assert!(d <= sup * (1.0 + 1e-8), "n = {n}, i = {i}, trial {trial}: {d} > {sup}");
                }
                if eta == 0.0 {
                    // η = 0: the single point {x_i} attains it as well.
                    let xi = Points::new(x.row(i).to_vec(), 2).unwrap();
                    let d = mahalanobis(&kernel, &x, &xi, i, t, (q, sigma, eta));
                    assert!((d - sup).abs() <= 1e-8 * sup, "{d} vs {sup}");
                }
            }
        }
    }

    /// The covariate-free bound dominates max_i s_i for random, clustered
    /// and repeated covariates, and is nearly attained by one isolated point.
    #[test]
    fn the_bound_without_covariates_dominates() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let kernel = Kernel::exponential(0.14).unwrap();
        for &(n, r, sigma, eta) in &[(50usize, 5.7063, 0.12, 0.0), (30, 1.0, 1.0, 0.5), (20, 0.3, 2.0, 0.0)] {
            let mut sets = vec![random_points(&mut rng, n)];
            sets.push(Points::new([0.5, 0.5].repeat(n), 2).unwrap());
            for x in &sets {
                let s = s_diag(&kernel.gram(x), r * r, sigma, eta);
                let worst = s.iter().cloned().fold(0.0, f64::max);
                let mu = mu_without_covariates(1.0, r, sigma, eta, Draws::ONE).unwrap();
                assert!(mu * mu >= 4.0 * worst, "{} < {}", mu * mu, 4.0 * worst);
            }
        }
        // One point, η = 0: s = 1/((1 + q)qσ²) exactly, so the bound is attained.
        let one = Points::new(vec![0.2, 0.7], 2).unwrap();
        let s = s_diag(&kernel.gram(&one), 4.0, 0.5, 0.0)[0];
        let mu = mu_without_covariates(1.0, 2.0, 0.5, 0.0, Draws::ONE).unwrap();
        assert!((mu * mu - 4.0 * s).abs() <= 1e-12 * mu * mu);
        assert_eq!(mu_without_covariates(1.0, 2.0, f64::INFINITY, 0.0, Draws::ONE).unwrap(), 0.0);
        let l4 = mu_without_covariates(1.0, 2.0, 0.5, 0.0, Draws::new(4).unwrap()).unwrap();
        assert!((l4 - 2.0 * mu).abs() < 1e-12);
    }
}
