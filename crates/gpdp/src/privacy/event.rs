//! Privacy events: what the accountants compose (docs/accountant.md).
//!
//! An event is one thing released about a dataset whose privacy loss is
//! accounted. Today there are two kinds: L draws of a posterior-sample
//! release ([`PrivacyEvent::GpRelease`]), and a Rényi-DP curve already
//! certified at fixed orders ([`PrivacyEvent::Tabulated`], what a ledger
//! stores per entry so that it composes earlier releases without
//! re-deriving them). The enum is `#[non_exhaustive]`: a Gaussian-mechanism
//! event (a statistic with known L2 sensitivity and noise), and adaptive
//! rounds whose release depends on earlier outputs (Thompson sampling, where
//! each round is a GP release chosen from public data and earlier draws),
//! are the planned additions. An accountant says which events it can account
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
}

impl PrivacyEvent {
    /// `draws` draws of `release`.
    pub fn gp_release(release: Release, draws: Draws) -> Self {
        PrivacyEvent::GpRelease { release, draws }
    }

    /// A short name of the kind of event, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            PrivacyEvent::GpRelease { .. } => "GP release",
            PrivacyEvent::Tabulated(_) => "tabulated RDP curve",
        }
    }
}
