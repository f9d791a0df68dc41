//! The exact normalised GP posterior at one point for the 1-D exponential
//! kernel, in O(n) without matrices.
//!
//! The kernel k(x, x') = exp(−|x − x'|/ℓ) is the covariance of a stationary
//! Ornstein–Uhlenbeck process, which is Markov: on sorted points
//! s₁ ≤ … ≤ s_m, f(s_{i+1}) | f(s_i) ~ N(ρ_i·f(s_i), 1 − ρ_i²) with
//! ρ_i = exp(−(s_{i+1} − s_i)/ℓ) (the same in reverse time). With
//! observations y_i = f(x_i) + e_i, e_i ~ N(0, r²), the posterior of f(x₀) is
//! the product of
//!
//! * a forward Kalman filter over the records with x_i ≤ x₀ (covariance
//!   form, state (m, P), prior N(0, 1) at the first record), predicted to x₀;
//! * a backward information filter over the records with x_i > x₀
//!   (likelihood message exp(−½λf² + ηf), started at λ = η = 0), propagated
//!   to x₀ by λ' = ρ²λ/(1 + qλ), η' = ρη/(1 + qλ), q = 1 − ρ²,
//!
//! so that v_D(x₀) = 1/(1/P + λ) and μ_D(x₀) = (m/P + η)·v_D(x₀). This is
//! algebraically identical to μ_D(x₀) = k_Xᵀ A⁻¹ y and
//! v_D(x₀) = 1 − k_Xᵀ A⁻¹ k_X with A = K + r²I (docs/model.md); repeated covariates
//! (ρ = 1) need no special case. q is computed as −expm1(−2d/ℓ).

/// Reusable scratch space (the sort permutation), so that repeated calls do
/// not allocate.
#[derive(Debug, Clone, Default)]
pub struct OuWorkspace {
    order: Vec<usize>,
}

impl OuWorkspace {
    /// An empty workspace.
    pub fn new() -> Self {
        OuWorkspace::default()
    }
}

/// (μ_D(x₀), v_D(x₀)) of the normalised posterior of the 1-D exponential
/// kernel with lengthscale `lengthscale` and ridge r = `ridge` given the
/// records (`x`, `y`).
///
/// Preconditions (checked by the callers' configuration validation, not
/// here): `x.len() == y.len()`, finite inputs, ℓ > 0 and r² > 0 (normal).
pub fn posterior_at(x: &[f64], y: &[f64], x0: f64, lengthscale: f64, ridge: f64, ws: &mut OuWorkspace) -> (f64, f64) {
    debug_assert_eq!(x.len(), y.len());
    let r2 = ridge * ridge;
    let inv_r2 = 1.0 / r2;
    let inv_l = 1.0 / lengthscale;
    let order = &mut ws.order;
    order.clear();
    order.extend(0..x.len());
    order.sort_unstable_by(|&a, &b| x[a].total_cmp(&x[b]));
    let split = order.partition_point(|&i| x[i] <= x0);

    // Forward Kalman filter over x_i ≤ x₀.
    let (mut m, mut p) = (0.0f64, 1.0f64);
    let mut prev: Option<f64> = None;
    for &i in &order[..split] {
        if let Some(xp) = prev {
            let d = (x[i] - xp) * inv_l;
            let rho = (-d).exp();
            m *= rho;
            p = rho * rho * p - (-2.0 * d).exp_m1();
        }
        let s = p + r2;
        m += p / s * (y[i] - m);
        p = p * r2 / s;
        prev = Some(x[i]);
    }
    if let Some(xp) = prev {
        let d = (x0 - xp) * inv_l;
        let rho = (-d).exp();
        m *= rho;
        p = rho * rho * p - (-2.0 * d).exp_m1();
    }

    // Backward information filter over x_i > x₀.
    let (mut lam, mut eta) = (0.0f64, 0.0f64);
    let mut prev: Option<f64> = None;
    for &i in order[split..].iter().rev() {
        if let Some(xp) = prev {
            propagate(&mut lam, &mut eta, (xp - x[i]) * inv_l);
        }
        lam += inv_r2;
        eta += y[i] * inv_r2;
        prev = Some(x[i]);
    }
    if let Some(xp) = prev {
        propagate(&mut lam, &mut eta, (xp - x0) * inv_l);
    }

    let prec = 1.0 / p + lam;
    let v = 1.0 / prec;
    ((m / p + eta) * v, v)
}

/// Propagates an information-form likelihood message across a gap of d
/// lengthscales of the OU process.
#[inline]
fn propagate(lam: &mut f64, eta: &mut f64, d: f64) {
    let rho = (-d).exp();
    let q = -(-2.0 * d).exp_m1();
    let den = 1.0 + q * *lam;
    *lam = rho * rho * *lam / den;
    *eta = rho * *eta / den;
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpdp::{Dataset, Kernel, Points, Posterior};
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn dense(x: &[f64], y: &[f64], x0: f64, l: f64, r: f64) -> (f64, f64) {
        let d = Dataset::new(Points::from_1d(x), y.to_vec()).unwrap();
        let p = Posterior::fit(Kernel::exponential(l).unwrap(), &d, r).unwrap();
        let q = Points::from_1d(&[x0]);
        (p.mean(&q).unwrap()[0], p.variance(&q).unwrap()[0])
    }

    #[test]
    fn matches_the_dense_posterior_to_1e12() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut ws = OuWorkspace::new();
        let mut worst: f64 = 0.0;
        for case in 0..2000 {
            let n = rng.random_range(1..=14usize);
            let l = [0.2, 1.0, 3.0][case % 3];
            let r = [0.05, 0.1, 0.5, 1.0, 4.0][case % 5];
            let mut x: Vec<f64> = (0..n).map(|_| rng.random::<f64>()).collect();
            let y: Vec<f64> = (0..n).map(|_| 2.0 * rng.random::<f64>() - 1.0).collect();
            let x0 = if case % 4 == 0 { x[0] } else { rng.random::<f64>() };
            if case % 7 == 0 && n > 1 {
                x[1] = x[0]; // a repeated covariate
            }
            let (m, v) = posterior_at(&x, &y, x0, l, r, &mut ws);
            let (md, vd) = dense(&x, &y, x0, l, r);
            worst = worst.max((m - md).abs()).max((v - vd).abs());
            assert!((m - md).abs() < 1e-12 && (v - vd).abs() < 1e-12, "case {case}: {m} {md} {v} {vd}");
        }
        assert!(worst < 1e-12, "{worst}");
    }

    #[test]
    fn closed_forms() {
        let mut ws = OuWorkspace::new();
        // One record at x₀: μ = y/(1 + r²), v = r²/(1 + r²).
        let (m, v) = posterior_at(&[0.5], &[1.0], 0.5, 1.0, 0.1, &mut ws);
        assert!((m - 1.0 / 1.01).abs() < 1e-15 && (v - 0.01 / 1.01).abs() < 1e-15);
        // One record at distance d on either side: μ = e^{−d}y/(1 + r²).
        for xr in [0.2, 0.9] {
            let (m, v) = posterior_at(&[xr], &[1.0], 0.5, 1.0, 0.5, &mut ws);
            let k = (-(xr - 0.5f64).abs()).exp();
            assert!((m - k / 1.25).abs() < 1e-15, "{m}");
            assert!((v - (1.0 - k * k / 1.25)).abs() < 1e-15, "{v}");
        }
    }
}
