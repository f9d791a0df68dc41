//! Releases as composable events (docs/accountant.md).
//!
//! A [`Release`] describes one kind of posterior-sample release (kernel,
//! domain, n, r, σ, η, response model) independently of any data; checking
//! its [`ReleaseParams`] computes V̂_n and Δ̂_n once. An [`Accountant`] composes
//! releases (each repeated L times: L independent draws, or L adaptive
//! rounds such as Thompson sampling): RDP adds at each order α, and the
//! composed curve is admissible for α below the smallest α_max. It then
//! answers ε(δ) or δ(ε) with the optimal α ([`super::conversion`]) in a
//! [`PrivacyReport`].

use crate::error::{Error, Result, positive};
use crate::model::domain::Domain;
use crate::model::draws::Draws;
use crate::model::kernel::Kernel;
use crate::model::kernel::KernelKind;
use crate::privacy::bounds::{
    SensitivityBound, SensitivityChoice, SensitivityInputs, VarianceBound, check_n, sensitivity_bound, variance_bound,
};
use crate::privacy::conversion::{Conversion, delta_for_epsilon, epsilon_for_delta};
use crate::privacy::curve::RdpCurve;
use crate::privacy::published::SensitivityConstants;
use crate::privacy::rdp::{BoundChoice, CovarianceTerm, MeanTerm, RdpBound};
use crate::privacy::report::{ComponentReport, PrivacyReport};
use crate::privacy::rounding::ROUNDING_SLACK;

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
    /// Which proven bound (default: the tight one).
    pub bound: BoundChoice,
}

impl ReleaseParams {
    /// Parameters with η = 0, M_Y = 1, automatic sensitivity, the tight bound.
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
            bound: BoundChoice::Tight,
        }
    }

    /// Validates the parameters and computes V̂_n and Δ̂_n.
    pub fn check(&self) -> Result<Release> {
        check_n(self.n)?;
        crate::error::ridge(self.ridge)?;
        crate::error::scale(self.scale)?;
        crate::error::gp_noise(self.gp_noise)?;
        positive("response bound M_Y", self.response_bound)?;
        let variance = variance_bound(&self.kernel, &self.domain, self.n, self.ridge)?;
        let inputs = SensitivityInputs {
            n: self.n,
            ridge: self.ridge,
            v: variance.value,
            response_bound: self.response_bound,
            rkhs_norm: self.rkhs_norm,
        };
        if self.sensitivity.assumes_rkhs_responses() && self.rkhs_norm == Some(0.0) && self.scale.is_finite() {
            return Err(Error::InvalidParameter {
                name: "RKHS norm ‖f*‖",
                value: "0".into(),
                requirement: "> 0 for Lemma B.8 with a finite σ (a zero norm removes the mean term: that is the covariance-only bound, σ = inf, if that is what is meant)",
            });
        }
        let sensitivity = sensitivity_bound(self.sensitivity, self.bound, &self.kernel, &self.domain, &inputs)?;
        let bound = self.rdp_bound(variance.value, sensitivity.value)?;
        Ok(Release { params: self.clone(), variance, sensitivity, bound, constants: SensitivityConstants::Proven })
    }

    /// The one-draw bound for V̂ and Δ̂ under [`ReleaseParams::bound`]: the
    /// tight bound takes the signed covariance term, and — for the
    /// exponential kernel on a one-dimensional domain without GP noise — the
    /// bounded-mean refinement (Lemma B.6 holds there;
    /// docs/proofs/tight-accountant.md).
    fn rdp_bound(&self, v: f64, delta_n: f64) -> Result<RdpBound> {
        let paper = RdpBound::new(v, delta_n, self.ridge, self.scale, self.gp_noise)?;
        Ok(match self.bound {
            BoundChoice::Paper => paper,
            BoundChoice::Joint => {
                let tight = ReleaseParams { bound: BoundChoice::Tight, ..self.clone() }.rdp_bound(v, delta_n)?;
                if self.gp_noise != 0.0 || !self.scale.is_finite() {
                    tight
                } else {
                    let lemma_b6 = self.kernel.kind() == KernelKind::Exponential && self.domain.dim() == 1;
                    let problem = crate::privacy::joint::JointProblem::new(
                        self.n,
                        self.ridge,
                        self.scale,
                        self.response_bound,
                        v,
                        lemma_b6,
                    )?;
                    tight.with_joint(problem)?
                }
            }
            BoundChoice::Tight => {
                let b = paper.with_covariance(CovarianceTerm::Signed);
                let lemma_b6 = self.kernel.kind() == KernelKind::Exponential && self.domain.dim() == 1;
                if !lemma_b6 {
                    b
                } else if self.gp_noise == 0.0 {
                    b.with_mean(MeanTerm::BoundedMean { response_bound: self.response_bound })?
                } else {
                    b.with_zero_noise_twin(self.response_bound)?
                }
            }
        })
    }
}

/// A validated release description with its bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Release {
    params: ReleaseParams,
    variance: VarianceBound,
    sensitivity: SensitivityBound,
    bound: RdpBound,
    /// Proven for every `Release` built by [`ReleaseParams::check`]; only the
    /// study-only [`super::published::StudyRelease`] holds another value.
    pub(crate) constants: SensitivityConstants,
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
    pub fn epsilon(&self, draws: Draws, delta: f64, conv: Conversion) -> Result<PrivacyReport> {
        let mut acc = Accountant::new();
        acc.compose(self.clone(), draws);
        acc.epsilon(delta, conv)
    }

    /// δ(ε) of `draws` independent draws of this release.
    pub fn delta(&self, draws: Draws, epsilon: f64, conv: Conversion) -> Result<PrivacyReport> {
        let mut acc = Accountant::new();
        acc.compose(self.clone(), draws);
        acc.delta(epsilon, conv)
    }

    /// The same release with Δ̂ replaced (study-only published constants).
    pub(crate) fn with_sensitivity(&self, value: f64, constants: SensitivityConstants) -> Result<Release> {
        let bound = self.params.rdp_bound(self.variance.value, value)?;
        Ok(Release {
            params: self.params.clone(),
            variance: self.variance.clone(),
            sensitivity: SensitivityBound { value, lemma: self.sensitivity.lemma },
            bound,
            constants,
        })
    }
}

/// Composes releases under RDP.
#[derive(Debug, Clone, Default)]
pub struct Accountant {
    events: Vec<(Release, Draws)>,
}

impl Accountant {
    /// An accountant with nothing released yet.
    pub fn new() -> Self {
        Accountant::default()
    }

    /// Records `count` independent (or adaptively chosen) draws of `release`.
    pub fn compose(&mut self, release: Release, count: Draws) -> &mut Self {
        self.events.push((release, count));
        self
    }

    /// The recorded events.
    pub fn events(&self) -> &[(Release, Draws)] {
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

    /// ε(δ) of everything composed so far, at the optimal order; with
    /// [`Conversion::Pld`], by the PLD accountant ([`super::pld`]; σ = ∞ and
    /// η = 0 for every release, else [`Error::Unsupported`]).
    pub fn epsilon(&self, delta: f64, conv: Conversion) -> Result<PrivacyReport> {
        self.check_nonempty()?;
        if conv == Conversion::Pld {
            return self.pld_epsilon(delta); // privacy/pld.rs
        }
        let e = epsilon_for_delta(self, delta, conv)?;
        Ok(self.report(e.epsilon, delta, e.alpha, e.rdp, conv, e.clamped))
    }

    /// δ(ε) of everything composed so far, at the optimal order; with
    /// [`Conversion::Pld`], by the PLD accountant ([`super::pld`]).
    pub fn delta(&self, epsilon: f64, conv: Conversion) -> Result<PrivacyReport> {
        self.check_nonempty()?;
        if conv == Conversion::Pld {
            return self.pld_delta(epsilon); // privacy/pld.rs
        }
        let d = delta_for_epsilon(self, epsilon, conv)?;
        Ok(self.report(epsilon, d.delta, d.alpha, d.rdp, conv, false))
    }

    pub(crate) fn report(
        &self,
        epsilon: f64,
        delta: f64,
        alpha: f64,
        rdp: f64,
        conv: Conversion,
        clamped: bool,
    ) -> PrivacyReport {
        let am1 = alpha - 1.0;
        let components = self
            .events
            .iter()
            .map(|(rel, count)| {
                // α is admissible for every event, except in the vacuous δ = 1
                // report, where no order was (α = 1): both terms are then ∞.
                let terms = rel.bound.terms(am1);
                let (covariance_term, mean_term) =
                    terms.map_or((f64::INFINITY, f64::INFINITY), |t| (t.covariance, t.mean));
                let mean_term_source = if terms.is_some_and(|t| t.without_gp_noise) {
                    "bounded mean of the release without GP noise (adding η is post-processing; docs/proofs/tight-accountant.md)"
                } else {
                    rel.bound.mean_term().source()
                };
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
                    bound: p.bound,
                    covariance_term,
                    covariance_term_source: rel.bound.covariance_term().source(),
                    mean_term,
                    mean_term_source,
                    variance_bound: rel.variance.value,
                    variance_bound_source: rel.variance.source.clone(),
                    kappa: rel.variance.kappa,
                    sensitivity: rel.sensitivity.value,
                    sensitivity_source: rel.sensitivity.lemma,
                    sensitivity_constants: rel.constants,
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
            pld: None,
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
            let c = count.as_f64();
            total += c * t.total();
            err += c * t.err;
        }
        Some((total, err + ROUNDING_SLACK * total.abs()))
    }

    fn rdp_closed(&self, am1: f64) -> Option<(f64, f64)> {
        let mut total = 0.0;
        let mut err = 0.0;
        for (rel, count) in &self.events {
            let t = rel.bound.with_no_joint().terms(am1)?;
            let c = count.as_f64();
            total += c * t.total();
            err += c * t.err;
        }
        Some((total, err + ROUNDING_SLACK * total.abs()))
    }

    fn rdp_lower(&self, am1: f64) -> Option<f64> {
        let mut total = 0.0;
        for (rel, count) in &self.events {
            total += count.as_f64() * rel.bound.terms_lower(am1)?;
        }
        Some(total)
    }

    fn fingerprint(&self) -> Option<u64> {
        use std::hash::Hasher;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for (rel, count) in &self.events {
            rel.bound.fingerprint(&mut h);
            h.write_u64(count.get());
        }
        Some(h.finish())
    }

    fn orders(&self) -> Vec<f64> {
        let mut g: Vec<f64> = self
            .events
            .iter()
            .filter_map(|(r, _)| r.bound.joint())
            .flat_map(|p| crate::privacy::joint::order_grid(p.am1_max()).to_vec())
            .collect();
        g.sort_by(f64::total_cmp);
        g.dedup();
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kernel::KernelKind;

    fn d(l: u64) -> Draws {
        Draws::new(l).unwrap()
    }

    fn fig3(draws: u64) -> PrivacyReport {
        let p = ReleaseParams::new(Kernel::exponential(1.0).unwrap(), "interval:0,1".parse().unwrap(), 10, 1.0, 5.0);
        p.check().unwrap().epsilon(d(draws), 0.05, Conversion::Paper).unwrap()
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
        acc.compose(a.clone(), d(2)).compose(b.clone(), d(3));
        let rep = acc.epsilon(1e-5, Conversion::Improved).unwrap();
        let am1 = rep.alpha - 1.0;
        let want = 2.0 * a.rdp_bound().epsilon_alpha(am1) + 3.0 * b.rdp_bound().epsilon_alpha(am1);
        assert!((rep.rdp - want).abs() < 1e-12 * want);
        assert!(rep.alpha < 1.0 + a.rdp_bound().am1_max().min(b.rdp_bound().am1_max()));
        // Composition costs more than either part alone.
        assert!(rep.epsilon > a.epsilon(d(2), 1e-5, Conversion::Improved).unwrap().epsilon);
        assert!(rep.epsilon > b.epsilon(d(3), 1e-5, Conversion::Improved).unwrap().epsilon);
        // The composed report keeps both components, in order.
        assert_eq!(rep.components.len(), 2);
        assert_eq!((rep.components[0].draws, rep.components[1].draws), (d(2), d(3)));
        assert_eq!(rep.total_draws(), 5);
        let names: Vec<String> = rep.flat_fields().into_iter().map(|(k, _)| k).collect();
        assert!(names.contains(&"component1_kernel".to_string()) && names.contains(&"component2_tau".to_string()));
    }
}
