//! The Rényi-DP curve of one posterior draw: ψ_α, Theorem 3.1 and
//! Proposition 2 (docs/accountant.md).
//!
//! # What is guaranteed
//!
//! For replace-one neighbours D ~ D' of size n, every finite test set X_T and
//! every admissible order 1 < α < α_max = 1 + 1/τ̃ (Proposition 2, with
//! τ̃ = σ²V/(σ²r² + η²(V + r²)); η = 0 gives Theorem 3.1 and α_max = 1 + r²/V):
//!
//! ```text
//! D_α(Π_D(X_T) ‖ Π_D'(X_T)) ≤ 2ψ_α(τ̃) + α(V + r²)Δ² / (2[σ²(r² − (α−1)V) + η²(V + r²)])
//! ```
//!
//! where V ≥ V_n(r) and Δ ≥ Δ_n(r) are any valid upper bounds (see
//! [`super::bounds`]). σ = ∞ (a covariance-only release) is the limit in
//! which the second (mean) term vanishes.
//!
//! # Floating point
//!
//! Every evaluation also returns an absolute error bound `err` on the
//! computed value (a generous multiple of the unit roundoff times the sum of
//! the magnitudes of the terms, including the conditioning of 1 − (α−1)τ̃ near
//! α_max), so that callers can round the bound *up*: the value plus `err` is
//! never below the exact-arithmetic value of the formula at the same inputs.
//!
//! The order enters as `am1 = α − 1` to keep precision when α → 1.

use crate::error::{Result, non_negative};
use crate::privacy::rounding::ROUNDING_SLACK;

/// ψ_α(τ) (Theorem 3.1; closed form of Lemma A.3), with `am1` = α − 1:
///
/// ```text
/// ψ_α(τ) = max{ ½log(1+τ) − log((1+ατ)/(1+τ)) / (2(α−1)),
///              −½log(1+τ) − log(1 − τ(α−1)) / (2(α−1)) }
/// ```
///
/// Valid for τ ≥ 0 and 0 < α − 1 < 1/τ; returns +∞ outside that range.
/// ψ_α(0) = 0 and ψ_α is non-decreasing in τ.
pub fn psi(am1: f64, tau: f64) -> f64 {
    psi_with_err(am1, tau).0
}

/// ψ_α(τ) and an absolute floating-point error bound.
pub(crate) fn psi_with_err(am1: f64, tau: f64) -> (f64, f64) {
    let x = tau * am1;
    if !(am1 > 0.0) || !(x < 1.0) || tau < 0.0 {
        return (f64::INFINITY, 0.0);
    }
    if tau == 0.0 {
        return (0.0, 0.0);
    }
    let half_log = 0.5 * tau.ln_1p();
    // (1+ατ)/(1+τ) = 1 + (α−1)τ/(1+τ)
    let l1 = (am1 * tau / (1.0 + tau)).ln_1p();
    let l2 = (-x).ln_1p();
    let t1 = half_log - l1 / (2.0 * am1);
    let t2 = -half_log - l2 / (2.0 * am1);
    let one_minus_x = 1.0 - x;
    let magnitude = half_log + (l1.abs() + l2.abs()) / (2.0 * am1) + tau / one_minus_x + tau;
    (t1.max(t2), ROUNDING_SLACK * magnitude)
}

/// The single-draw RDP bound of Theorem 3.1 / Proposition 2 for given
/// V ≥ V_n, Δ ≥ Δ_n, r, σ (may be +∞) and η ≥ 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RdpBound {
    v: f64,
    delta_n: f64,
    ridge: f64,
    /// 1/σ² (0 when σ = ∞).
    inv_scale2: f64,
    gp_noise: f64,
    /// τ̃ (= V/r² when η = 0).
    tau: f64,
    /// r² + η²(V + r²)/σ²: τ̃ = V/d0 and the mean-term denominator is d0·(1 − (α−1)τ̃).
    d0: f64,
}

/// The two terms of the single-draw bound at one order α.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RdpTerms {
    /// 2ψ_α(τ̃): covariance leakage (does not depend on σ when η = 0).
    pub covariance: f64,
    /// α(V + r²)Δ² / (2[σ²(r² − (α−1)V) + η²(V + r²)]): mean leakage.
    pub mean: f64,
    /// Absolute floating-point error bound on covariance + mean.
    pub err: f64,
}

impl RdpTerms {
    /// covariance + mean.
    pub fn total(&self) -> f64 {
        self.covariance + self.mean
    }
}

impl RdpBound {
    /// Builds the bound. Errors: V ∉ [0, 1], Δ < 0, r ≤ 0, σ ≤ 0 or NaN
    /// (σ = +∞ is allowed), η < 0.
    pub fn new(v: f64, delta_n: f64, ridge: f64, scale: f64, gp_noise: f64) -> Result<Self> {
        non_negative("variance bound V", v)?;
        if v > 1.0 {
            return Err(crate::error::Error::InvalidParameter {
                name: "variance bound V",
                value: format!("{v}"),
                requirement: "<= 1 for a normalised kernel",
            });
        }
        non_negative("sensitivity Δ", delta_n)?;
        crate::error::ridge(ridge)?;
        crate::error::scale(scale)?;
        crate::error::gp_noise(gp_noise)?;
        let r2 = ridge * ridge;
        let inv_scale2 = if scale.is_infinite() { 0.0 } else { 1.0 / (scale * scale) };
        let d0 = r2 + inv_scale2 * gp_noise * gp_noise * (v + r2);
        let tau = v / d0;
        Ok(RdpBound { v, delta_n, ridge, inv_scale2, gp_noise, tau, d0 })
    }

    /// τ̃ = σ²V/(σ²r² + η²(V + r²)) (Proposition 2; V/r² when η = 0).
    pub fn tau(&self) -> f64 {
        self.tau
    }

    /// α_max − 1 = 1/τ̃ (+∞ when τ̃ = 0). Orders 1 < α < α_max are admissible.
    pub fn am1_max(&self) -> f64 {
        if self.tau == 0.0 { f64::INFINITY } else { 1.0 / self.tau }
    }

    /// The two terms at order α = 1 + am1, or `None` if α is not admissible.
    pub fn terms(&self, am1: f64) -> Option<RdpTerms> {
        let x = am1 * self.tau;
        if !(am1 > 0.0) || !(x < 1.0) {
            return None;
        }
        let (psi, psi_err) = psi_with_err(am1, self.tau);
        let covariance = 2.0 * psi;
        let mean = if self.inv_scale2 == 0.0 || self.delta_n == 0.0 {
            0.0
        } else {
            let r2 = self.ridge * self.ridge;
            // σ²(r² − (α−1)V) + η²(V + r²), divided through by σ².
            let den = self.d0 - am1 * self.v;
            if !(den > 0.0) {
                return None;
            }
            (1.0 + am1) * (self.v + r2) * self.delta_n * self.delta_n * self.inv_scale2 / (2.0 * den)
        };
        let cond = 1.0 + (self.d0 + am1 * self.v) / (self.d0 - am1 * self.v).max(f64::MIN_POSITIVE);
        let err = 2.0 * psi_err + ROUNDING_SLACK * mean * cond;
        Some(RdpTerms { covariance, mean, err })
    }

    /// ε_α (the sum of the two terms) at α = 1 + am1; +∞ when not admissible.
    pub fn epsilon_alpha(&self, am1: f64) -> f64 {
        self.terms(am1).map_or(f64::INFINITY, |t| t.total())
    }

    /// The variance bound V used.
    pub fn variance_bound(&self) -> f64 {
        self.v
    }

    /// The sensitivity bound Δ used.
    pub fn sensitivity(&self) -> f64 {
        self.delta_n
    }

    /// The GP noise η.
    pub fn gp_noise(&self) -> f64 {
        self.gp_noise
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ψ_α by its definition in Lemma A.3: the max over λ ∈ [1/(1+τ), 1+τ] of
    /// −½log λ − log(α − (α−1)λ)/(2(α−1)), by dense search (independent of
    /// the closed form).
    fn psi_by_search(alpha: f64, tau: f64) -> f64 {
        let (a, b) = (1.0 / (1.0 + tau), 1.0 + tau);
        let mut best = f64::NEG_INFINITY;
        let m = 200_000;
        for i in 0..=m {
            let lam = a + (b - a) * i as f64 / m as f64;
            let inner = alpha - (alpha - 1.0) * lam;
            if inner <= 0.0 {
                continue;
            }
            best = best.max(-0.5 * lam.ln() - inner.ln() / (2.0 * (alpha - 1.0)));
        }
        best
    }

    #[test]
    fn psi_matches_lemma_a3_definition() {
        for &(alpha, tau) in &[(1.5, 0.3), (2.0, 0.1), (1.01, 5.0), (8.0, 0.1), (3.0, 0.45)] {
            assert!((alpha - 1.0) * tau < 1.0);
            let closed = psi(alpha - 1.0, tau);
            let search = psi_by_search(alpha, tau);
            assert!((closed - search).abs() <= 1e-9 * (1.0 + closed.abs()), "α={alpha} τ={tau}: {closed} vs {search}");
        }
    }

    #[test]
    fn psi_basic_properties() {
        assert_eq!(psi(0.5, 0.0), 0.0);
        assert_eq!(psi(2.0, 0.5), f64::INFINITY); // (α−1)τ = 1: not admissible
        // Hand-checked: α = 2, τ = 0.5: max{½ln1.5 − ½ln(2/1.5), −½ln1.5 − ½ln0.5}
        // = max{0.0589…, 0.1438…} = ½ln(4/3) = 0.14384103622589045.
        assert!((psi(1.0, 0.5) - 0.14384103622589045).abs() < 1e-15);
        // Non-decreasing in τ, non-negative.
        let mut last = 0.0;
        for i in 1..200 {
            let tau = i as f64 * 0.01;
            let p = psi(0.4, tau);
            assert!(p >= last - 1e-15 && p >= 0.0);
            last = p;
        }
    }

    #[test]
    fn theorem_3_1_hand_value() {
        // V = 0.5, Δ = 0.4, r = 1, σ = 2, α = 2:
        // 2ψ_2(0.5) + 2·1.5·0.16/(2·4·(1 − 0.5)) = ln(4/3) + 0.12.
        let b = RdpBound::new(0.5, 0.4, 1.0, 2.0, 0.0).unwrap();
        let t = b.terms(1.0).unwrap();
        assert!((t.covariance - (4.0f64 / 3.0).ln()).abs() < 1e-15);
        assert!((t.mean - 0.12).abs() < 1e-15);
        assert_eq!(b.am1_max(), 2.0);
        assert!(b.terms(2.0).is_none());
    }

    #[test]
    fn limits_and_monotonicity() {
        let (v, d, r) = (0.8, 1.3, 0.7);
        let inf = RdpBound::new(v, d, r, f64::INFINITY, 0.0).unwrap();
        for &am1 in &[0.01, 0.1, 0.5] {
            // σ → ∞ tends to the covariance-only bound.
            let big = RdpBound::new(v, d, r, 1e9, 0.0).unwrap();
            assert!((big.epsilon_alpha(am1) - inf.epsilon_alpha(am1)).abs() < 1e-12);
            assert_eq!(inf.terms(am1).unwrap().mean, 0.0);
            // η = 0 is Theorem 3.1 exactly; η > 0 only helps.
            let t31 = RdpBound::new(v, d, r, 1.5, 0.0).unwrap();
            let mut last = t31.epsilon_alpha(am1);
            for eta in [0.1, 0.5, 1.0, 3.0] {
                let p2 = RdpBound::new(v, d, r, 1.5, eta).unwrap();
                let e = p2.epsilon_alpha(am1);
                assert!(e < last, "η={eta}");
                last = e;
            }
            // Larger σ, larger r (smaller V/r²) give smaller bounds.
            let a = RdpBound::new(v, d, r, 1.0, 0.0).unwrap().epsilon_alpha(am1);
            let b = RdpBound::new(v, d, r, 2.0, 0.0).unwrap().epsilon_alpha(am1);
            let c = RdpBound::new(v, d, 2.0 * r, 2.0, 0.0).unwrap().epsilon_alpha(am1);
            assert!(a > b && b > c);
        }
    }

    #[test]
    fn proposition_2_closed_form() {
        // τ̃ = σ²V/(σ²r² + η²(V+r²)); mean = α(V+r²)Δ²/(2[σ²(r²−(α−1)V) + η²(V+r²)]).
        let (v, d, r, s, eta, am1): (f64, f64, f64, f64, f64, f64) = (0.9, 0.7, 0.6, 1.7, 0.8, 0.3);
        let b = RdpBound::new(v, d, r, s, eta).unwrap();
        let tau = s * s * v / (s * s * r * r + eta * eta * (v + r * r));
        assert!((b.tau() - tau).abs() < 1e-15);
        let mean = (1.0 + am1) * (v + r * r) * d * d / (2.0 * (s * s * (r * r - am1 * v) + eta * eta * (v + r * r)));
        let t = b.terms(am1).unwrap();
        assert!((t.mean - mean).abs() < 1e-14);
        assert!((t.covariance - 2.0 * psi(am1, tau)).abs() < 1e-15);
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(RdpBound::new(0.5, 1.0, 0.0, 1.0, 0.0).is_err());
        assert!(RdpBound::new(0.5, 1.0, 1.0, 0.0, 0.0).is_err());
        assert!(RdpBound::new(0.5, 1.0, 1.0, -1.0, 0.0).is_err());
        assert!(RdpBound::new(0.5, 1.0, 1.0, f64::NAN, 0.0).is_err());
        assert!(RdpBound::new(0.5, 1.0, 1.0, 1.0, -0.1).is_err());
        assert!(RdpBound::new(1.5, 1.0, 1.0, 1.0, 0.0).is_err());
        assert!(RdpBound::new(0.5, f64::NAN, 1.0, 1.0, 0.0).is_err());
    }
}
