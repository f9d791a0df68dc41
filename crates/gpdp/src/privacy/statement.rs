//! One release's (ε, δ) statement under the user's choice of
//! [`Accounting`]: the RDP accountant with a conversion, or the PLD
//! accountant. The only module that chooses between the two siblings.

use crate::error::Result;
use crate::model::draws::Draws;
use crate::privacy::accountant::RdpAccountant;
use crate::privacy::cache::AccountingCache;
use crate::privacy::chain::chain_epsilon;
use crate::privacy::conversion::Accounting;
use crate::privacy::conversion::Conversion;
use crate::privacy::joint::JointProblem;
use crate::privacy::pld_accountant::PldAccountant;
use crate::privacy::release::Release;
use crate::privacy::report::{PrivacyReport, RouteReport};

/// Unit roundoff of f64.
const U: f64 = f64::EPSILON / 2.0;

impl Release {
    /// ε(δ) of `draws` independent draws of this release, by the chosen
    /// accountant (a [`crate::privacy::Conversion`] means the RDP accountant).
    ///
    /// With the joint bound (a finite σ, η = 0) and the RDP accountant, ε is
    /// the smallest of the proven routes for this one release: the Rényi
    /// curve (tight and joint, converted) and the two-step chain
    /// ([`crate::privacy::chain`]); the report's `route` names the one
    /// that gave it (docs/proofs/chain-route.md §6.3).
    pub fn epsilon(&self, draws: Draws, delta: f64, accounting: impl Into<Accounting>) -> Result<PrivacyReport> {
        match accounting.into() {
            Accounting::Rdp(conv) => {
                let mut report = RdpAccountant::new().compose_release(self.clone(), draws).epsilon(delta, conv)?;
                if let Some(problem) = self.bound.joint() {
                    report = self.with_routes(report, problem, draws, delta, conv)?;
                }
                Ok(report)
            }
            Accounting::Pld => PldAccountant::new().compose_release(self.clone(), draws)?.epsilon(delta),
        }
    }

    /// `report` (the joint Rényi route's) with the other routes' values and
    /// ε their minimum.
    fn with_routes(
        &self,
        mut report: PrivacyReport,
        problem: &JointProblem,
        draws: Draws,
        delta: f64,
        conv: Conversion,
    ) -> Result<PrivacyReport> {
        let tight = Release { bound: self.bound.with_no_joint(), ..self.clone() };
        let tight = RdpAccountant::new().compose_release(tight, draws).epsilon(delta, conv)?.epsilon;
        // τ = V̂/r² rounded up as the PLD accountant rounds it.
        let tau = self.variance.value / (self.params.ridge * self.params.ridge);
        let tau = if tau > 0.0 { (tau * (1.0 + 4.0 * U)).next_up() } else { 0.0 };
        let chain = chain_epsilon(problem, tau, draws, delta, AccountingCache::shared())?;
        let joint = report.epsilon;
        let mut route = if tight < joint { "tight-rdp" } else { "joint-rdp" };
        let mut best = joint.min(tight);
        if let Some(c) = &chain
            && c.epsilon < best
        {
            best = c.epsilon;
            route = "chain";
        }
        report.epsilon = best;
        report.epsilon_clamped_at_zero = report.epsilon_clamped_at_zero && route != "chain";
        report.route = Some(RouteReport {
            route,
            tight_rdp: tight,
            joint_rdp: joint,
            chain,
            composition: "several releases compose through their Rényi curves (the ledger); the chain's ε is this release's alone",
        });
        Ok(report)
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
