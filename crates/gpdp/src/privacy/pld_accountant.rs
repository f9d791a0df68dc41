//! The PLD accountant, a sibling of [`super::accountant::RdpAccountant`]:
//! exact privacy-loss-distribution accounting of covariance-only releases
//! (σ = ∞, η = 0; the engine and its guarantee are in [`super::pld`],
//! docs/proofs/pld-covariance-only.md).
//!
//! It accepts only the events its proof covers ([`PldAccountant::supports`]):
//! GP releases with σ = ∞ and GP noise η = 0. It refuses tabulated RDP
//! curves (an RDP curve does not determine the privacy-loss distribution)
//! and every other release. Its reports carry the improved RDP
//! conversion's value for comparison (`pld.rdp_epsilon` / `pld.rdp_delta`)
//! and the RDP order fields of that comparison.

use crate::error::{Error, Result, fmt_value};
use crate::model::draws::Draws;
use crate::privacy::accountant::RdpAccountant;
use crate::privacy::conversion::{Accounting, Conversion};
use crate::privacy::event::PrivacyEvent;
use crate::privacy::pld::{PLD_SCOPE, PldEvent, PldOptions, delta_for_epsilon, epsilon_for_delta};
use crate::privacy::release::Release;
use crate::privacy::report::{PldReport, PrivacyReport};

/// Unit roundoff of f64.
const U: f64 = f64::EPSILON / 2.0;

/// Composes covariance-only releases by their privacy-loss distributions
/// (see the module docs).
///
/// ```
/// use gpdp::{Conversion, Draws, Kernel, PldAccountant, PrivacyEvent, RdpAccountant, ReleaseParams};
///
/// // A covariance-only release (σ = ∞, no GP noise): 4 draws of the
/// // posterior covariance of 10 records, ridge r = 1.
/// let release = ReleaseParams::new(Kernel::exponential(1.0)?, "interval:0,1".parse()?, 10, 1.0, f64::INFINITY).check()?;
/// let event = PrivacyEvent::gp_release(release, Draws::new(4)?);
/// let mut pld = PldAccountant::new();
/// assert!(pld.supports(&event));
/// pld.compose(event.clone())?;
/// let mut rdp = RdpAccountant::new();
/// rdp.compose(event)?;
/// // The PLD bound is never looser than the RDP one on the same events.
/// let (e_pld, e_rdp) = (pld.epsilon(1e-5)?.epsilon, rdp.epsilon(1e-5, Conversion::Improved)?.epsilon);
/// assert!(e_pld <= e_rdp);
/// # Ok::<(), gpdp::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct PldAccountant {
    /// The same events under RDP, for the reports' comparison fields.
    rdp: RdpAccountant,
    events: Vec<PldEvent>,
    options: PldOptions,
}

impl PldAccountant {
    /// An accountant with nothing composed yet and the default
    /// discretisation (docs/proofs/pld-covariance-only.md).
    pub fn new() -> Self {
        PldAccountant::default()
    }

    /// Whether this accountant can account `event`: a GP release with
    /// σ = ∞ and η = 0. Tabulated RDP curves are not supported.
    pub fn supports(&self, event: &PrivacyEvent) -> bool {
        match event {
            PrivacyEvent::GpRelease { release, .. } => covariance_only(release),
            _ => false,
        }
    }

    /// Composes `event`; refused ([`Error::Unsupported`], naming the
    /// event's position and why) when [`Self::supports`] is false.
    pub fn compose(&mut self, event: PrivacyEvent) -> Result<&mut Self> {
        let position = self.events.len() + 1;
        match event {
            PrivacyEvent::GpRelease { release, draws } => {
                let p = release.params();
                if !covariance_only(&release) {
                    return Err(Error::Unsupported(format!(
                        "{PLD_SCOPE}; release {position} has σ = {} and gp-noise η = {} (use --conversion improved)",
                        fmt_value(p.scale),
                        fmt_value(p.gp_noise)
                    )));
                }
                // V̂/r² in floating point is within 2u (relative) of the
                // exact quotient; enlarge by 4u and one ulp (the exact δ(ε)
                // is non-decreasing in τ, docs/proofs/pld-covariance-only.md §5).
                let tau = release.variance_bound().value / (p.ridge * p.ridge);
                let tau = if tau > 0.0 { (tau * (1.0 + 4.0 * U)).next_up() } else { 0.0 };
                self.events.push(PldEvent { tau, draws });
                self.rdp.compose_release(release, draws);
                Ok(self)
            }
            other => Err(Error::Unsupported(format!(
                "the PLD accountant cannot account event {position}, a {}: {PLD_SCOPE}, and an RDP curve does not determine a privacy-loss distribution (use --conversion improved)",
                other.kind()
            ))),
        }
    }

    /// Composes `draws` draws of `release` (refused as [`Self::compose`]).
    pub fn compose_release(&mut self, release: Release, draws: Draws) -> Result<&mut Self> {
        self.compose(PrivacyEvent::GpRelease { release, draws })
    }

    /// The composed events.
    pub fn events(&self) -> &[PrivacyEvent] {
        self.rdp.events()
    }

    /// ε(δ) of everything composed so far (see [`super::pld`]).
    pub fn epsilon(&self, delta: f64) -> Result<PrivacyReport> {
        let s = epsilon_for_delta(&self.events, delta, &self.options)?;
        // The RDP route, for the report's order fields and for comparison.
        let rdp = crate::privacy::conversion::epsilon_for_delta(&self.rdp, delta, Conversion::Improved).ok();
        let (alpha, r) = rdp.map_or((1.0, f64::INFINITY), |e| (e.alpha, e.rdp));
        let mut report = self.rdp.report(s.epsilon, delta, alpha, r, Accounting::Pld, false);
        report.pld = Some(PldReport { rdp_epsilon: rdp.map(|e| e.epsilon), ..s.report });
        Ok(report)
    }

    /// δ(ε) of everything composed so far (see [`super::pld`]).
    pub fn delta(&self, epsilon: f64) -> Result<PrivacyReport> {
        let s = delta_for_epsilon(&self.events, epsilon, &self.options)?;
        let rdp = crate::privacy::conversion::delta_for_epsilon(&self.rdp, epsilon, Conversion::Improved).ok();
        let (alpha, r) = rdp.map_or((1.0, f64::INFINITY), |d| (d.alpha, d.rdp));
        let mut report = self.rdp.report(epsilon, s.delta, alpha, r, Accounting::Pld, false);
        report.pld = Some(PldReport { rdp_delta: rdp.map(|d| d.delta), ..s.report });
        Ok(report)
    }
}

fn covariance_only(release: &Release) -> bool {
    let p = release.params();
    !p.scale.is_finite() && p.gp_noise == 0.0
}
