//! Releases as composable events, and the privacy report (SPEC §2.5).
//!
//! A [`Release`] describes one kind of posterior-sample release (kernel,
//! domain, n, r, σ, η, response model) independently of any data; checking
//! its [`ReleaseParams`] computes V̂_n and Δ̂_n once. An [`Accountant`] composes
//! releases (each repeated `count` times: L independent draws, or L adaptive
//! rounds such as Thompson sampling): RDP adds at each order α, and the
//! composed curve is admissible for α below the smallest α_max. It then
//! answers ε(δ) or δ(ε) with the optimal α ([`super::conversion`]).

use serde::Serialize;

use crate::domain::Domain;
use crate::error::{Error, Result, non_negative, positive};
use crate::kernel::Kernel;
use crate::privacy::bounds::{
    Lemma, SensitivityBound, SensitivityChoice, SensitivityInputs, VarianceBound, check_n, sensitivity_bound,
    variance_bound,
};
use crate::privacy::conversion::{Conversion, RdpCurve, delta_for_epsilon, epsilon_for_delta};
use crate::privacy::rdp::{ROUNDING_SLACK, RdpBound, check_scale};

/// The description of a release, before validation.
#[derive(Debug, Clone, PartialEq)]
pub struct ReleaseParams {
    /// The kernel k (normalised).
    pub kernel: Kernel,
    /// The covariate domain Ω.
    pub domain: Domain,
    /// Dataset size n ≥ 1.
    pub n: usize,
    /// Effective ridge r > 0.
    pub ridge: f64,
    /// Kernel scale σ > 0; `f64::INFINITY` for a covariance-only release.
    pub scale: f64,
    /// Added GP noise η ≥ 0 (Proposition 2).
    pub gp_noise: f64,
    /// Response bound M_Y > 0.
    pub response_bound: f64,
    /// Which sensitivity lemma.
    pub sensitivity: SensitivityChoice,
    /// ‖f*‖_H for Lemma B.8.
    pub rkhs_norm: Option<f64>,
}

impl ReleaseParams {
    /// Parameters with η = 0, M_Y = 1, automatic sensitivity.
    pub fn new(kernel: Kernel, domain: Domain, n: usize, ridge: f64, scale: f64) -> Self {
        ReleaseParams {
            kernel,
            domain,
            n,
            ridge,
            scale,
            gp_noise: 0.0,
            response_bound: 1.0,
            sensitivity: SensitivityChoice::Auto,
            rkhs_norm: None,
        }
    }

    /// Validates the parameters and computes V̂_n and Δ̂_n.
    pub fn check(&self) -> Result<Release> {
        check_n(self.n)?;
        positive("ridge r", self.ridge)?;
        check_scale(self.scale)?;
        non_negative("GP noise η", self.gp_noise)?;
        positive("response bound M_Y", self.response_bound)?;
        let variance = variance_bound(&self.kernel, &self.domain, self.n, self.ridge)?;
        let inputs = SensitivityInputs {
            n: self.n,
            ridge: self.ridge,
            v: variance.value,
            response_bound: self.response_bound,
            rkhs_norm: self.rkhs_norm,
        };
        let sensitivity = sensitivity_bound(self.sensitivity, &self.kernel, &self.domain, &inputs)?;
        let bound = RdpBound::new(variance.value, sensitivity.value, self.ridge, self.scale, self.gp_noise)?;
        Ok(Release { params: self.clone(), variance, sensitivity, bound })
    }
}

/// A validated release description with its bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Release {
    params: ReleaseParams,
    variance: VarianceBound,
    sensitivity: SensitivityBound,
    bound: RdpBound,
}

impl Release {
    /// The parameters.
    pub fn params(&self) -> &ReleaseParams {
        &self.params
    }

    /// V̂_n and its provenance.
    pub fn variance_bound(&self) -> &VarianceBound {
        &self.variance
    }

    /// Δ̂_n and its lemma.
    pub fn sensitivity_bound(&self) -> &SensitivityBound {
        &self.sensitivity
    }

    /// The single-draw RDP bound.
    pub fn rdp_bound(&self) -> &RdpBound {
        &self.bound
    }

    /// ε(δ) of `draws` independent draws of this release.
    pub fn epsilon(&self, draws: u64, delta: f64, conv: Conversion) -> Result<PrivacyReport> {
        let mut acc = Accountant::new();
        acc.compose(self.clone(), draws)?;
        acc.epsilon(delta, conv)
    }

    /// δ(ε) of `draws` independent draws of this release.
    pub fn delta(&self, draws: u64, epsilon: f64, conv: Conversion) -> Result<PrivacyReport> {
        let mut acc = Accountant::new();
        acc.compose(self.clone(), draws)?;
        acc.delta(epsilon, conv)
    }
}

/// Composes releases under RDP.
#[derive(Debug, Clone, Default)]
pub struct Accountant {
    events: Vec<(Release, u64)>,
}

impl Accountant {
    /// An accountant with nothing released yet.
    pub fn new() -> Self {
        Accountant::default()
    }

    /// Records `count` ≥ 1 independent (or adaptively chosen) draws of `release`.
    pub fn compose(&mut self, release: Release, count: u64) -> Result<&mut Self> {
        if count == 0 {
            return Err(Error::InvalidParameter { name: "draws L", value: "0".into(), requirement: ">= 1" });
        }
        self.events.push((release, count));
        Ok(self)
    }

    /// The recorded events.
    pub fn events(&self) -> &[(Release, u64)] {
        &self.events
    }

    fn check_nonempty(&self) -> Result<()> {
        if self.events.is_empty() {
            return Err(Error::InvalidParameter {
                name: "accountant",
                value: "no releases".into(),
                requirement: "to hold at least one release",
            });
        }
        Ok(())
    }

    /// ε(δ) of everything composed so far, at the optimal order.
    pub fn epsilon(&self, delta: f64, conv: Conversion) -> Result<PrivacyReport> {
        self.check_nonempty()?;
        let e = epsilon_for_delta(self, delta, conv)?;
        Ok(self.report(e.epsilon, delta, e.alpha, e.rdp, conv, e.clamped))
    }

    /// δ(ε) of everything composed so far, at the optimal order.
    pub fn delta(&self, epsilon: f64, conv: Conversion) -> Result<PrivacyReport> {
        self.check_nonempty()?;
        let d = delta_for_epsilon(self, epsilon, conv)?;
        Ok(self.report(epsilon, d.delta, d.alpha, d.rdp, conv, false))
    }

    fn report(&self, epsilon: f64, delta: f64, alpha: f64, rdp: f64, conv: Conversion, clamped: bool) -> PrivacyReport {
        let am1 = alpha - 1.0;
        let components = self
            .events
            .iter()
            .map(|(rel, count)| {
                let t = rel.bound.terms(am1).expect("α is admissible for every event");
                let p = &rel.params;
                ComponentReport {
                    kernel: p.kernel.kind().name().to_string(),
                    lengthscale: p.kernel.lengthscale(),
                    domain: p.domain.to_string(),
                    n: p.n,
                    ridge: p.ridge,
                    scale: p.scale,
                    gp_noise: p.gp_noise,
                    response_bound: p.response_bound,
                    draws: *count,
                    tau: rel.bound.tau(),
                    alpha_max: 1.0 + rel.bound.am1_max(),
                    covariance_term: t.covariance,
                    mean_term: t.mean,
                    variance_bound: rel.variance.value,
                    variance_bound_source: rel.variance.source.clone(),
                    kappa: rel.variance.kappa,
                    sensitivity: rel.sensitivity.value,
                    sensitivity_source: rel.sensitivity.lemma,
                }
            })
            .collect();
        PrivacyReport {
            epsilon,
            delta,
            alpha,
            alpha_max: 1.0 + self.am1_max(),
            rdp,
            conversion: conv,
            epsilon_clamped_at_zero: clamped,
            components,
        }
    }
}

impl RdpCurve for Accountant {
    fn am1_max(&self) -> f64 {
        self.events.iter().map(|(r, _)| r.bound.am1_max()).fold(f64::INFINITY, f64::min)
    }

    fn rdp(&self, am1: f64) -> Option<(f64, f64)> {
        let mut total = 0.0;
        let mut err = 0.0;
        for (rel, count) in &self.events {
            let t = rel.bound.terms(am1)?;
            let c = *count as f64;
            total += c * t.total();
            err += c * t.err;
        }
        Some((total, err + ROUNDING_SLACK * total.abs()))
    }
}

/// One composed release in a [`PrivacyReport`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComponentReport {
    /// Kernel family.
    pub kernel: String,
    /// Lengthscale ℓ.
    pub lengthscale: f64,
    /// Domain Ω.
    pub domain: String,
    /// n.
    pub n: usize,
    /// r.
    pub ridge: f64,
    /// σ (may be +∞).
    #[serde(serialize_with = "ser_maybe_inf")]
    pub scale: f64,
    /// η.
    pub gp_noise: f64,
    /// M_Y.
    pub response_bound: f64,
    /// Number of draws L of this release.
    pub draws: u64,
    /// τ̃ (= V̂/r² without GP noise).
    pub tau: f64,
    /// This release's α_max = 1 + 1/τ̃.
    #[serde(serialize_with = "ser_maybe_inf")]
    pub alpha_max: f64,
    /// 2ψ_α(τ̃) for one draw at the reported α.
    pub covariance_term: f64,
    /// The mean-leakage term for one draw at the reported α.
    pub mean_term: f64,
    /// V̂_n.
    pub variance_bound: f64,
    /// Where V̂_n came from.
    pub variance_bound_source: String,
    /// κ, if used.
    pub kappa: Option<f64>,
    /// Δ̂_n.
    pub sensitivity: f64,
    /// The lemma that gave Δ̂_n.
    pub sensitivity_source: Lemma,
}

/// An (ε, δ) statement with everything that produced it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrivacyReport {
    /// ε (rounded up; 0 if the improved conversion went negative).
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// The order α at which ε/δ was evaluated.
    pub alpha: f64,
    /// Sup of admissible α for the composition.
    #[serde(serialize_with = "ser_maybe_inf")]
    pub alpha_max: f64,
    /// The composed RDP Σ L_i·ε_α^(i) at `alpha`.
    pub rdp: f64,
    /// The conversion used.
    pub conversion: Conversion,
    /// True when the conversion was negative and ε = 0 is reported.
    pub epsilon_clamped_at_zero: bool,
    /// The composed releases.
    pub components: Vec<ComponentReport>,
}

/// Serialises +∞ as the string "inf" (JSON has no infinity).
pub fn ser_maybe_inf<S: serde::Serializer>(v: &f64, s: S) -> std::result::Result<S::Ok, S::Error> {
    if v.is_infinite() { s.serialize_str(if *v > 0.0 { "inf" } else { "-inf" }) } else { s.serialize_f64(*v) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::KernelKind;

    fn fig3(draws: u64) -> PrivacyReport {
        let p = ReleaseParams::new(Kernel::exponential(1.0).unwrap(), "interval:0,1".parse().unwrap(), 10, 1.0, 5.0);
        p.check().unwrap().epsilon(draws, 0.05, Conversion::Paper).unwrap()
    }

    #[test]
    fn composition_is_sublinear_in_draws() {
        let e1 = fig3(1).epsilon;
        let e10 = fig3(10).epsilon;
        assert!(e10 > e1 && e10 < 10.0 * e1, "{e1} {e10}");
        let mut last = 0.0;
        for l in 1..=20 {
            let e = fig3(l).epsilon;
            assert!(e > last);
            last = e;
        }
    }

    #[test]
    fn heterogeneous_composition_equals_sum_of_curves() {
        let a = ReleaseParams::new(Kernel::exponential(1.0).unwrap(), "interval:0,1".parse().unwrap(), 10, 1.0, 5.0)
            .check()
            .unwrap();
        let mut pb = ReleaseParams::new(
            Kernel::new(KernelKind::SquaredExponential, 0.5).unwrap(),
            "box:0,1,0,1".parse().unwrap(),
            50,
            2.0,
            f64::INFINITY,
        );
        pb.gp_noise = 0.0;
        let b = pb.check().unwrap();
        let mut acc = Accountant::new();
        acc.compose(a.clone(), 2).unwrap().compose(b.clone(), 3).unwrap();
        let rep = acc.epsilon(1e-5, Conversion::Improved).unwrap();
        let am1 = rep.alpha - 1.0;
        let want = 2.0 * a.rdp_bound().epsilon_alpha(am1) + 3.0 * b.rdp_bound().epsilon_alpha(am1);
        assert!((rep.rdp - want).abs() < 1e-12 * want);
        assert!(rep.alpha < 1.0 + a.rdp_bound().am1_max().min(b.rdp_bound().am1_max()));
        // Composition costs more than either part alone.
        assert!(rep.epsilon > a.epsilon(2, 1e-5, Conversion::Improved).unwrap().epsilon);
        assert!(rep.epsilon > b.epsilon(3, 1e-5, Conversion::Improved).unwrap().epsilon);
        assert!(acc.compose(a, 0).is_err());
    }
}
