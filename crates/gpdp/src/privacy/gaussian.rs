//! The exact privacy profile of the Gaussian mechanism, certified against
//! rounding (docs/proofs/change-response.md §0(b), §3).
//!
//! Two Gaussians with the same covariance and Mahalanobis distance μ (the
//! mean difference whitened by the covariance) have the hockey-stick
//! divergence
//!
//! ```text
//! δ_μ(ε) = Φ(μ/2 − ε/μ) − e^ε·Φ(−μ/2 − ε/μ)        (μ > 0; δ_0 ≡ 0)
//! ```
//!
//! (Balle & Wang 2018, Theorem 8): a mechanism whose neighbouring outputs are
//! such pairs with distance at most μ is (ε, δ)-DP exactly when δ ≥ δ_μ(ε).
//! Distances compose as μ² = Σ μ_j² (Gaussian DP, also adaptively).
//!
//! [`delta_for_epsilon`] returns an upper bound on δ_μ(ε): the computed value
//! plus an a-priori bound on every floating-point error (erfc and exp within
//! the bounds of `privacy::elementary`, the arguments' rounding through the
//! derivative of Φ, the products and the difference), then the next double
//! up, plus an absolute 10⁻³⁰⁰ for underflow. [`epsilon_for_delta`] returns
//! the smallest ε (to a relative 10⁻¹², rounded up) at which that bound is
//! ≤ δ, so the pair (ε, δ) it states always holds. Validity: μ ≥ 0 finite,
//! 0 ≤ ε ≤ 700, δ ∈ [10⁻²⁹⁰, 1).

use crate::error::{Error, Result, fmt_value, non_negative, unit_open};
use crate::privacy::elementary::{ERF_REL, erfc, exp};

/// Unit roundoff of f64.
const U: f64 = f64::EPSILON / 2.0;
/// Absolute allowance for underflow of the terms.
const UNDERFLOW: f64 = 1e-300;
/// The largest ε accepted (e^ε stays finite with a wide margin).
pub const MAX_EPSILON: f64 = 700.0;
/// The smallest δ accepted (far above the underflow allowance).
pub const MIN_DELTA: f64 = 1e-290;

/// Φ(x) and a bound on |Φ(x) − Φ(x_exact)| + the library's error, where the
/// exact argument lies within `x_abs` of `x`.
fn phi_with_err(x: f64, x_abs: f64) -> (f64, f64) {
    // Φ(x) = ½·erfc(−x/√2); −x/√2 adds 2u relative (the rounded constant
    // and the product).
    let w = -x * std::f64::consts::FRAC_1_SQRT_2;
    let v = 0.5 * erfc(w);
    let arg = x_abs + 2.0 * U * x.abs();
    // |Φ'| = φ ≤ φ at the point of the interval nearest 0.
    let near = (x.abs() - arg).max(0.0);
    let density = exp(-0.5 * near * near) / (2.0 * std::f64::consts::PI).sqrt();
    (v, ERF_REL * v + density * arg * 1.01 + 2.0 * U * v)
}

/// An upper bound on δ_μ(ε), the exact privacy profile of the Gaussian
/// mechanism with distance `mu` (see the module docs). 0 when μ = 0.
pub fn delta_for_epsilon(mu: f64, epsilon: f64) -> Result<f64> {
    non_negative("μ", mu)?;
    non_negative("ε", epsilon)?;
    if epsilon > MAX_EPSILON {
        return Err(Error::InvalidParameter {
            name: "ε",
            value: fmt_value(epsilon),
            requirement: "at most 700 (the Gaussian profile's validity range)",
        });
    }
    if mu == 0.0 {
        return Ok(0.0);
    }
    let ratio = epsilon / mu; // relative error ≤ u
    let half = 0.5 * mu; // exact
    let a = half - ratio;
    let b = -half - ratio;
    // Each argument: the division's rounding (u·|ε/μ|) and the sum's (u·|·|).
    let a_abs = U * ratio + U * a.abs();
    let b_abs = U * ratio + U * b.abs();
    let (p, p_err) = phi_with_err(a, a_abs);
    let (q, q_err) = phi_with_err(b, b_abs);
    let e = exp(epsilon); // within one double: relative ≤ 2u
    let eq = e * q;
    let eq_err = e * q_err * (1.0 + 4.0 * U) + eq * 4.0 * U;
    let d = p - eq;
    let err = (p_err + eq_err + U * d.abs()) * (1.0 + 8.0 * U);
    let upper = (d + err).next_up() + UNDERFLOW;
    Ok(upper.clamp(0.0, 1.0))
}

/// The smallest ε ≥ 0 (to a relative 10⁻¹², rounded up) with
/// [`delta_for_epsilon`]`(μ, ε) ≤ δ`; 0 when μ = 0.
pub fn epsilon_for_delta(mu: f64, delta: f64) -> Result<f64> {
    non_negative("μ", mu)?;
    unit_open("δ", delta)?;
    if delta < MIN_DELTA {
        return Err(Error::InvalidParameter {
            name: "δ",
            value: fmt_value(delta),
            requirement: "at least 1e-290 (the Gaussian profile's validity range)",
        });
    }
    if mu == 0.0 || delta_for_epsilon(mu, 0.0)? <= delta {
        return Ok(0.0);
    }
    // δ_μ(ε) ≤ Φ(μ/2 − ε/μ): an upper end from the Gaussian tail, doubled
    // until the certified bound is below δ.
    let mut hi = (0.5 * mu * mu + mu * (2.0 * (1.0 / delta).ln()).sqrt()).max(1e-6);
    loop {
        if hi > MAX_EPSILON {
            return Err(Error::Unsupported(format!(
                "the Gaussian mechanism with μ = {} needs ε > 700 for δ = {}",
                fmt_value(mu),
                fmt_value(delta)
            )));
        }
        if delta_for_epsilon(mu, hi)? <= delta {
            break;
        }
        hi *= 2.0;
    }
    let mut lo = 0.0f64;
    while hi - lo > 1e-12 * hi {
        let mid = 0.5 * (lo + hi);
        if delta_for_epsilon(mu, mid)? <= delta { hi = mid } else { lo = mid }
    }
    Ok(hi)
}

/// The distance of k Gaussian mechanisms composed: √(Σ μ_j²), rounded up.
pub fn compose(mus: &[f64]) -> Result<f64> {
    let mut s = 0.0f64;
    for &m in mus {
        non_negative("μ", m)?;
        s += m * m;
    }
    if s == 0.0 {
        return Ok(0.0);
    }
    // k squares and k sums: relative error ≤ (2k + 1)u; the square root adds u.
    let k = mus.len() as f64;
    Ok((s * (1.0 + (2.0 * k + 2.0) * U)).sqrt().next_up())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// δ_μ(ε) by numerical integration of the privacy loss of N(0, 1) vs
    /// N(μ, 1): δ = ∫ max(0, p(x) − e^ε q(x)) dx, p = N(μ, 1), q = N(0, 1),
    /// by composite Simpson on [−40, μ + 40] (independent of the closed form).
    fn delta_by_integration(mu: f64, eps: f64) -> f64 {
        let pdf = |x: f64, m: f64| (-(x - m) * (x - m) / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
        let f = |x: f64| (pdf(x, mu) - eps.exp() * pdf(x, 0.0)).max(0.0);
        // The integrand is positive for x > x₀ = ε/μ + μ/2 only: integrate there.
        let x0 = eps / mu + mu / 2.0;
        let (a, b) = (x0, x0.max(mu) + 40.0);
        let n = 200_000;
        let h = (b - a) / n as f64;
        let mut s = f(a) + f(b);
        for i in 1..n {
            s += f(a + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
        }
        s * h / 3.0
    }

    #[test]
    fn the_profile_matches_numerical_integration_and_lies_above_it() {
        for &mu in &[0.05, 0.3, 1.0, 1.85, 4.0, 10.0] {
            for &eps in &[0.0, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0] {
                let exact = delta_by_integration(mu, eps);
                let d = delta_for_epsilon(mu, eps).unwrap();
                assert!(d >= exact * (1.0 - 1e-9) - 1e-300, "μ = {mu}, ε = {eps}: {d} < {exact}");
                let tol = 1e-9 * exact + 1e-15;
                assert!(d - exact <= tol, "μ = {mu}, ε = {eps}: {d} vs {exact}");
            }
        }
    }

    /// Known values: μ = 1 at ε = 0 is 2Φ(½) − 1; the profile is decreasing
    /// in ε and increasing in μ.
    #[test]
    fn closed_form_values_and_monotonicity() {
        let d0 = delta_for_epsilon(1.0, 0.0).unwrap();
        // 2Φ(1/2) − 1 = erf(1/(2√2)) = 0.38292492254802624.
        let exact = 0.382_924_922_548_026_2;
        assert!(d0 >= exact && d0 - exact < 5e-15, "{d0}");
        let mut last = 1.0;
        for i in 0..200 {
            let d = delta_for_epsilon(1.5, 0.05 * i as f64).unwrap();
            assert!(d <= last, "not decreasing at ε = {}", 0.05 * i as f64);
            last = d;
        }
        assert!(delta_for_epsilon(1.0, 2.0).unwrap() < delta_for_epsilon(1.2, 2.0).unwrap());
        assert_eq!(delta_for_epsilon(0.0, 1.0).unwrap(), 0.0);
    }

    /// ε(δ) is the inverse: the bound holds at it and fails just below.
    #[test]
    fn epsilon_for_delta_is_certified_and_tight() {
        for &mu in &[0.1, 0.5, 1.0, 2.0, 6.0] {
            for &delta in &[0.05, 1e-3, 1e-5, 400f64.powf(-1.1), 1e-10, 1e-30] {
                let eps = epsilon_for_delta(mu, delta).unwrap();
                assert!(delta_for_epsilon(mu, eps).unwrap() <= delta);
                if eps > 0.0 {
                    let below = eps * (1.0 - 1e-9);
                    assert!(delta_for_epsilon(mu, below).unwrap() > delta, "μ = {mu}, δ = {delta}: not tight");
                }
            }
        }
        // A tiny μ gives ε = 0 at a large δ.
        assert_eq!(epsilon_for_delta(1e-6, 0.5).unwrap(), 0.0);
        assert!(epsilon_for_delta(1.0, 0.0).is_err() && epsilon_for_delta(-1.0, 0.1).is_err());
        assert!(delta_for_epsilon(1.0, 701.0).is_err());
    }

    #[test]
    fn composition_adds_squares_and_rounds_up() {
        let m = compose(&[0.3, 0.4]).unwrap();
        assert!(m >= 0.5 && m - 0.5 < 1e-14, "{m}");
        let l = compose(&[1.0; 9]).unwrap();
        assert!(l >= 3.0 && l - 3.0 < 1e-13);
        assert_eq!(compose(&[]).unwrap(), 0.0);
        assert_eq!(compose(&[0.0, 0.0]).unwrap(), 0.0);
    }
}
