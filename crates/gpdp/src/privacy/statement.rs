//! One release's (ε, δ) statement under the user's choice of
//! [`Accounting`]: the RDP accountant with a conversion, or the PLD
//! accountant. The only module that chooses between the two siblings.

use crate::error::Result;
use crate::model::draws::Draws;
use crate::privacy::accountant::RdpAccountant;
use crate::privacy::conversion::Accounting;
use crate::privacy::pld_accountant::PldAccountant;
use crate::privacy::release::Release;
use crate::privacy::report::PrivacyReport;

impl Release {
    /// ε(δ) of `draws` independent draws of this release, by the chosen
    /// accountant (a [`crate::privacy::Conversion`] means the RDP accountant).
    pub fn epsilon(&self, draws: Draws, delta: f64, accounting: impl Into<Accounting>) -> Result<PrivacyReport> {
        match accounting.into() {
            Accounting::Rdp(conv) => RdpAccountant::new().compose_release(self.clone(), draws).epsilon(delta, conv),
            Accounting::Pld => PldAccountant::new().compose_release(self.clone(), draws)?.epsilon(delta),
        }
    }

    /// δ(ε) of `draws` independent draws of this release, by the chosen
    /// accountant.
    pub fn delta(&self, draws: Draws, epsilon: f64, accounting: impl Into<Accounting>) -> Result<PrivacyReport> {
        match accounting.into() {
            Accounting::Rdp(conv) => RdpAccountant::new().compose_release(self.clone(), draws).delta(epsilon, conv),
            Accounting::Pld => PldAccountant::new().compose_release(self.clone(), draws)?.delta(epsilon),
        }
    }
}
