//! A release description and its validation (docs/accountant.md).
//!
//! A [`ReleaseParams`] describes one kind of posterior-sample release
//! (kernel, domain, n, r, σ, η, response model) independently of any data;
//! [`ReleaseParams::check`] validates it and computes V̂_n, Δ̂_n and the
//! one-draw RDP bound once, giving a [`Release`]. Releases are accounted as
//! [`super::event::PrivacyEvent`]s by [`super::accountant::RdpAccountant`] or
//! [`super::pld_accountant::PldAccountant`]; [`Release::epsilon`] and
//! [`Release::delta`] (in [`super::statement`]) account one release alone.

use crate::error::{Error, Result, positive};
use crate::model::domain::Domain;
use crate::model::kernel::Kernel;
use crate::model::kernel::KernelKind;
use crate::privacy::bounds::{
    SensitivityBound, SensitivityChoice, SensitivityInputs, VarianceBound, check_n, sensitivity_bound, variance_bound,
};
use crate::privacy::constants::SensitivityConstants;
use crate::privacy::rdp::{BoundChoice, CovarianceTerm, MeanTerm, RdpBound};

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
    pub(crate) params: ReleaseParams,
    pub(crate) variance: VarianceBound,
    pub(crate) sensitivity: SensitivityBound,
    pub(crate) bound: RdpBound,
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
