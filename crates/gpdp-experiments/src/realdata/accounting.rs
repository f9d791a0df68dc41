//! ε of a candidate θ = (ℓ, r, σ) for the real-data release (App. D.2).
//!
//! L posterior draws of the exponential kernel k(x, x') = exp(−‖x − x'‖/ℓ)
//! on the public domain Ω = [0, 1]² (diameter √2), fitted to n hexagon
//! records with responses |y| ≤ M_Y = 1:
//!
//! ```text
//! κ      = exp(−√2/ℓ)                                           (inf of k on Ω)
//! V̂_n(r) = 1 − κ²·(n − 1)/(n − 1 + r²)                          (Prop. 3)
//! Δ̂_n(r) = 2·M_Y·(1 + √(n − 1)/r)·√Φ_n(r)                       (Lemma B.1)
//! ε_α    ≤ 2ψ_α(V̂/r²) + α(V̂ + r²)Δ̂²/(2σ²(r² − (α−1)V̂))         (Theorem 3.1)
//! ε(δ)   = min_α L·ε_α + conversion(α, δ),   δ = n^−1.1 by default
//! ```
//!
//! n is the number of hexagons of the **release** year and is treated as
//! public (the authors' code used the selection year's n; see the notes in
//! `protocols.md` B.3). With [`SensitivityConstants::Published`] Δ̂ is
//! divided by √2 as in the authors' code: that reproduces the published
//! numbers and is not a proven guarantee; the release report always uses
//! the proven constants through the core library.

use gpdp::privacy::bounds::variance_from_kappa;
use gpdp::privacy::{Conversion, Draws, RdpBound, epsilon_for_delta};
use gpdp::{Domain, Kernel, Lemma, PrivacyReport, ReleaseParams, SensitivityChoice};
use serde::Serialize;

use super::error::{Result, invalid};
use crate::excursion::constants::SensitivityConstants;
use crate::excursion::search::Candidate;

/// Accountant settings of the real-data release.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RealAccounting {
    /// Hexagons n of the release year (public).
    pub n: usize,
    /// Released paths L in the constraint ε_L < ε₀ (the paper: 1).
    pub draws: u64,
    /// δ of the (ε, δ) statement.
    pub delta: f64,
    /// RDP → (ε, δ) conversion.
    pub conversion: Conversion,
    /// Constants of Lemma B.1.
    pub constants: SensitivityConstants,
}

impl RealAccounting {
    /// Settings for `n` release hexagons; δ defaults to n^−1.1.
    pub fn new(
        n: usize,
        draws: u64,
        delta: Option<f64>,
        conversion: Conversion,
        constants: SensitivityConstants,
    ) -> Result<Self> {
        if n < 2 {
            return Err(invalid("release hexagons n", n as f64, "≥ 2"));
        }
        if draws == 0 {
            return Err(invalid("paths L", 0.0, "≥ 1"));
        }
        let delta = delta.unwrap_or((n as f64).powf(-1.1));
        if !(delta > 0.0 && delta < 1.0) {
            return Err(invalid("δ", delta, "in (0, 1)"));
        }
        Ok(RealAccounting { n, draws, delta, conversion, constants })
    }

    /// κ = exp(−√2/ℓ).
    pub fn kappa(lengthscale: f64) -> f64 {
        (-(2f64.sqrt()) / lengthscale).exp()
    }

    /// ε_L(θ) with these constants; +∞ when σ = 0 or the accountant
    /// refuses θ.
    pub fn epsilon(&self, c: &Candidate) -> f64 {
        self.epsilon_draws(c, self.draws)
    }

    /// ε of `draws` paths with these constants.
    pub fn epsilon_draws(&self, c: &Candidate, draws: u64) -> f64 {
        if !(c.scale > 0.0 && c.lengthscale > 0.0 && c.ridge > 0.0) {
            return f64::INFINITY;
        }
        let v = variance_from_kappa(Self::kappa(c.lengthscale), self.n, c.ridge);
        let d = self.constants.lemma_b1(v, self.n, c.ridge, 1.0);
        let Ok(bound) = RdpBound::new(v, d, c.ridge, c.scale, 0.0) else {
            return f64::INFINITY;
        };
        epsilon_for_delta(&Draws(&bound, draws), self.delta, self.conversion).map_or(f64::INFINITY, |e| e.epsilon)
    }

    /// The release as the core library describes it: exponential kernel,
    /// Ω = [0, 1]², n, r, σ, M_Y = 1, Lemma B.1 (proven constants).
    pub fn release_params(&self, c: &Candidate) -> Result<ReleaseParams> {
        let mut p = ReleaseParams::new(
            Kernel::exponential(c.lengthscale)?,
            Domain::cuboid(vec![0.0, 0.0], vec![1.0, 1.0])?,
            self.n,
            c.ridge,
            c.scale,
        );
        p.sensitivity = SensitivityChoice::Lemma(Lemma::B1);
        Ok(p)
    }

    /// The proven guarantee of releasing `draws` paths with θ (the core
    /// library's accountant; independent of [`Self::constants`]).
    pub fn proven_report(&self, c: &Candidate, draws: u64) -> Result<PrivacyReport> {
        Ok(self.release_params(c)?.check()?.epsilon(draws, self.delta, self.conversion)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proven_epsilon_is_the_library_epsilon_and_published_is_smaller() {
        for (n, l, r, s, draws) in [(1075, 0.1, 4.0, 0.1, 1u64), (60, 0.3, 1.0, 0.5, 3), (400, 0.05, 8.0, 0.04, 1)] {
            let acc = RealAccounting::new(n, draws, None, Conversion::Paper, SensitivityConstants::Proven).unwrap();
            assert_eq!(acc.delta, (n as f64).powf(-1.1));
            let c = Candidate { lengthscale: l, ridge: r, scale: s };
            let lib = acc.proven_report(&c, draws).unwrap();
            assert_eq!(lib.components[0].sensitivity_source, Lemma::B1);
            assert!((lib.components[0].kappa.unwrap() - RealAccounting::kappa(l)).abs() < 1e-15);
            let ours = acc.epsilon(&c);
            assert!((ours - lib.epsilon).abs() <= 1e-9 * lib.epsilon, "{ours} vs {}", lib.epsilon);
            let publ = RealAccounting { constants: SensitivityConstants::Published, ..acc }.epsilon(&c);
            assert!(publ < ours);
        }
        let acc = RealAccounting::new(100, 1, None, Conversion::Paper, SensitivityConstants::Proven).unwrap();
        assert_eq!(acc.epsilon(&Candidate { lengthscale: 0.1, ridge: 1.0, scale: 0.0 }), f64::INFINITY);
        // ε grows with n (the release year's n matters) and with L.
        let c = Candidate { lengthscale: 0.1, ridge: 3.0, scale: 0.1 };
        let small = RealAccounting::new(500, 1, None, Conversion::Paper, SensitivityConstants::Proven).unwrap();
        let large = RealAccounting::new(1075, 1, None, Conversion::Paper, SensitivityConstants::Proven).unwrap();
        assert_ne!(small.epsilon(&c), large.epsilon(&c));
        assert!(large.epsilon_draws(&c, 3) > large.epsilon(&c));
        assert!(RealAccounting::new(1, 1, None, Conversion::Paper, SensitivityConstants::Proven).is_err());
        assert!(RealAccounting::new(10, 1, Some(1.5), Conversion::Paper, SensitivityConstants::Proven).is_err());
    }
}
