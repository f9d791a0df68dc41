//! The chain route (`--bound joint`, docs/proofs/chain-route.md): a
//! certified (ε, δ) for the L paths of one release from two proven profiles
//! joined through an intermediate Gaussian,
//!
//! ```text
//! δ(ε₁ + ε₂) ≤ δ_cov,L(ε₁) + e^{ε₁}·δ_GM(√L·μ̄; ε₂)        (Theorem, §0)
//! ```
//!
//! δ_cov,L: the certified L-fold profile of the covariance-only release
//! (σ = ∞; [`super::pld`], docs/proofs/pld-covariance-only.md) with the same
//! τ = V̂/r²; δ_GM: the certified Gaussian-mechanism profile
//! ([`super::gaussian`]); μ̄: the certified supremum of the mean-shift
//! distance over the joint region ([`super::joint::mean_shift_bound_in`]).
//! Validity: replace-one, η = 0, finite σ, the joint region's constraints
//! (the same as the joint Rényi bound's).
//!
//! ε at a target δ splits δ (§6.2): for each δ₁ = f·δ of a fixed grid of
//! fractions f, ε₁ = ε_cov(δ₁) (certified: δ_cov,L(ε₁) ≤ δ₁), δ₂ =
//! (δ − δ₁)·e^{−ε₁} rounded down, ε₂ = ε_GM(√L·μ̄; δ₂) (certified:
//! δ_GM ≤ δ₂), and ε = ε₁ + ε₂ rounded up; then δ(ε) ≤ δ₁ + e^{ε₁}δ₂ ≤ δ.
//! Every split is valid, so the smallest ε evaluated is reported. The
//! result is one release's statement: the ledger composes Rényi curves,
//! never chain ε values (§6.4).

use crate::error::Result;
use crate::model::draws::Draws;
use crate::privacy::cache::AccountingCache;
use crate::privacy::joint::JointProblem;
use crate::privacy::pld::{PldEvent, PldOptions};

/// The fractions f of δ given to the covariance step (δ₁ = f·δ).
const SPLITS: [f64; 15] = [0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98];

pub use crate::privacy::report::ChainStatement;

/// The chain route's ε at `delta` for `draws` draws of the release whose
/// joint problem is `problem` and whose τ = V̂/r² is `tau` (rounded up by
/// the caller, as for the PLD accountant). `None` when no split gives a
/// finite ε (δ too small for the covariance step's grid, or ε beyond the
/// profiles' validity ranges).
pub fn chain_epsilon(
    problem: &JointProblem,
    tau: f64,
    draws: Draws,
    delta: f64,
    cache: &AccountingCache,
) -> Result<Option<ChainStatement>> {
    // A deterministic function of its key: the cache never changes the value.
    let p = crate::privacy::joint::key_of(problem, crate::privacy::joint::MEAN_SHIFT, 2);
    let key = [p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], tau.to_bits(), draws.get(), delta.to_bits()];
    if let Some(c) = cache.chain(&key) {
        return Ok(c.map(|v| ChainStatement {
            epsilon: v[0],
            delta: v[1],
            mu_bar: v[2],
            mu_found: v[3],
            delta_cov: v[4],
            epsilon_cov: v[5],
            epsilon_mean: v[6],
        }));
    }
    let c = compute(problem, tau, draws, delta, cache)?;
    cache.put_chain(
        key,
        c.map(|c| [c.epsilon, c.delta, c.mu_bar, c.mu_found, c.delta_cov, c.epsilon_cov, c.epsilon_mean]),
    );
    Ok(c)
}

fn compute(
    problem: &JointProblem,
    tau: f64,
    draws: Draws,
    delta: f64,
    cache: &AccountingCache,
) -> Result<Option<ChainStatement>> {
    let (mu_bar, cert) = crate::privacy::joint::mean_shift_bound_in(problem, cache);
    let mu_found = (2.0 * cert.found.max(0.0)).sqrt();
    // √L·μ̄, rounded up (sqrt and the product are correctly rounded).
    let mu_l = ((draws.get() as f64).sqrt() * mu_bar).next_up().next_up();
    let events = [PldEvent { tau, draws }];
    let opts = PldOptions::default();
    let mut best: Option<ChainStatement> = None;
    for f in SPLITS {
        let delta_cov = f * delta;
        let Ok(cov) = crate::privacy::pld::epsilon_for_delta(&events, delta_cov, &opts) else { continue };
        let eps1 = cov.epsilon.max(0.0);
        // (δ − δ₁)·e^{−ε₁} rounded down: the subtraction and the product are
        // within 2u each and exp within 2u (privacy::elementary), so 1e-12
        // relative covers them with a wide margin.
        let delta_mean = (delta - delta_cov) * crate::privacy::elementary::exp(-eps1) * (1.0 - 1e-12);
        if !(delta_mean > 0.0) {
            continue;
        }
        let Ok(eps2) = crate::privacy::gaussian::epsilon_for_delta(mu_l, delta_mean) else { continue };
        let epsilon = (eps1 + eps2).next_up();
        if best.is_none_or(|b| epsilon < b.epsilon) {
            best = Some(ChainStatement {
                epsilon,
                delta,
                mu_bar,
                mu_found,
                delta_cov,
                epsilon_cov: eps1,
                epsilon_mean: eps2,
            });
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests;
