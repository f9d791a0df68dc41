//! ε of a candidate θ = (ℓ, r, σ) in the 1-D study (the paper's App. D).
//!
//! L draws of the posterior of the 1-D exponential kernel
//! k(x, x') = exp(−|x − x'|/ℓ) on Ω = [0, 1], responses |y| ≤ M_Y = 1:
//!
//! ```text
//! V̂_n(r) = 1 − κ²·(n − 1)/(n − 1 + r²),  κ = exp(−1/ℓ)        (Prop. 3, exact here)
//! Δ̂_n(r) = 4·M_Y·√Φ_n(r)                                       (Lemma B.7)
//! ε_α    ≤ 2ψ_α(V̂/r²) + α(V̂ + r²)Δ̂²/(2σ²(r² − (α−1)V̂))        (Theorem 3.1)
//! ε(δ)   = min_α L·ε_α + conversion(α, δ)                       (§2, eq. (3))
//! ```
//!
//! σ = 0 (the posterior-mean set) is never private: ε = ∞.

use gpdp::privacy::bounds::variance_from_kappa;
use gpdp::privacy::{Conversion, Draws, RdpBound, epsilon_for_delta};
use serde::Serialize;

use super::constants::SensitivityConstants;
use super::search::Candidate;

/// Accountant settings shared by every candidate of a study.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Accounting1d {
    /// Training-set size n.
    pub n: usize,
    /// Released paths L.
    pub draws: u64,
    /// δ of the (ε, δ) statement.
    pub delta: f64,
    /// RDP → (ε, δ) conversion.
    pub conversion: Conversion,
    /// Constants of Lemma B.7.
    pub constants: SensitivityConstants,
}

impl Accounting1d {
    /// ε_L(θ); +∞ when σ = 0 or when the accountant refuses θ.
    pub fn epsilon(&self, c: &Candidate) -> f64 {
        if !(c.scale > 0.0) {
            return f64::INFINITY;
        }
        let kappa = (-1.0 / c.lengthscale).exp();
        let v = variance_from_kappa(kappa, self.n, c.ridge);
        let delta_n = self.constants.lemma_b7(v, c.ridge, 1.0);
        let Ok(bound) = RdpBound::new(v, delta_n, c.ridge, c.scale, 0.0) else {
            return f64::INFINITY;
        };
        epsilon_for_delta(&Draws(&bound, self.draws), self.delta, self.conversion).map_or(f64::INFINITY, |e| e.epsilon)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpdp::{Domain, Kernel, Lemma, ReleaseParams, SensitivityChoice};

    #[test]
    fn proven_epsilon_is_the_library_release_epsilon() {
        for (n, l, r, s, draws) in [(100, 0.5, 1.0, 0.5, 1u64), (50, 0.13, 5.0, 2.0, 1), (400, 1.0, 2.0, 1.0, 3)] {
            let acc = Accounting1d {
                n,
                draws,
                delta: 0.005,
                conversion: Conversion::Paper,
                constants: SensitivityConstants::Proven,
            };
            let c = Candidate { lengthscale: l, ridge: r, scale: s };
            let mut p =
                ReleaseParams::new(Kernel::exponential(l).unwrap(), Domain::interval(0.0, 1.0).unwrap(), n, r, s);
            p.sensitivity = SensitivityChoice::Lemma(Lemma::B7);
            let lib = p.check().unwrap().epsilon(draws, 0.005, Conversion::Paper).unwrap().epsilon;
            let ours = acc.epsilon(&c);
            assert!((ours - lib).abs() <= 1e-9 * lib, "{ours} vs {lib}");
            // Published constants: smaller ε (a smaller Δ̂).
            let publ = Accounting1d { constants: SensitivityConstants::Published, ..acc }.epsilon(&c);
            assert!(publ < ours);
        }
        let acc = Accounting1d {
            n: 100,
            draws: 1,
            delta: 0.005,
            conversion: Conversion::Paper,
            constants: SensitivityConstants::Proven,
        };
        assert_eq!(acc.epsilon(&Candidate { lengthscale: 0.5, ridge: 1.0, scale: 0.0 }), f64::INFINITY);
    }
}
