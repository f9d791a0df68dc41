//! Privacy events: what the accountants compose (docs/accountant.md).
//!
//! An event is one thing released about a dataset whose privacy loss is
//! accounted. Today there are three kinds: L draws of a posterior-sample
//! release ([`PrivacyEvent::GpRelease`]); a Rényi-DP curve already
//! certified at fixed orders ([`PrivacyEvent::Tabulated`], what a ledger
//! stores per entry so that it composes earlier releases without
//! re-deriving them); and a Gaussian mechanism known by its distance μ
//! ([`PrivacyEvent::Gaussian`]: a release under change-one-response,
//! docs/proofs/change-response.md, whose Rényi curve is exactly αμ²/2). The
//! enum is `#[non_exhaustive]`: adaptive rounds whose release depends on
//! earlier outputs (Thompson sampling, where each round is a GP release
//! chosen from public data and earlier draws) are the planned addition. An accountant says which events it can account
//! ([`super::accountant::RdpAccountant::supports`],
//! [`super::pld_accountant::PldAccountant::supports`]) and refuses the rest.

use crate::model::draws::Draws;
use crate::privacy::release::Release;
use crate::privacy::table::RdpTable;

/// One accounted event (see the module docs).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[allow(clippy::large_enum_variant)] // events are few and short-lived; no boxing in the API
pub enum PrivacyEvent {
    /// `draws` independent draws (or adaptively chosen rounds) of a
    /// validated posterior-sample release.
    GpRelease {
        /// The release.
        release: Release,
        /// L.
        draws: Draws,
    },
    /// A mechanism known only by certified RDP bounds at fixed orders.
    Tabulated(RdpTable),
    /// A Gaussian mechanism with Mahalanobis distance `mu` between the
    /// outputs on neighbours (already including its draws): D_α = αμ²/2.
    Gaussian {
        /// μ ≥ 0 (an upper bound, rounded up by whoever computed it).
        mu: f64,
    },
}

impl PrivacyEvent {
    /// `draws` draws of `release`.
    pub fn gp_release(release: Release, draws: Draws) -> Self {
        PrivacyEvent::GpRelease { release, draws }
    }

    /// A Gaussian mechanism with distance `mu` (finite, ≥ 0).
    pub fn gaussian(mu: f64) -> crate::error::Result<Self> {
        crate::error::non_negative("μ", mu)?;
        Ok(PrivacyEvent::Gaussian { mu })
    }

    /// A short name of the kind of event, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            PrivacyEvent::GpRelease { .. } => "GP release",
            PrivacyEvent::Tabulated(_) => "tabulated RDP curve",
            PrivacyEvent::Gaussian { .. } => "Gaussian mechanism",
        }
    }
}
