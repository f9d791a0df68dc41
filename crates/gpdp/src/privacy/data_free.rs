//! Data-free noise under replace-one: with σ = 0 and GP noise η > 0 the
//! release is μ_D + GP(0, η²k), whose covariance does not depend on the
//! data — a Gaussian mechanism with distance at most √L·Δ̂/η, Δ̂ the proven
//! mean sensitivity (docs/proofs/data-free-noise.md). Its (ε, δ) is then the
//! exact Gaussian profile ([`super::gaussian`]) instead of the Rényi route.

use crate::error::{Error, Result, fmt_value};
use crate::mechanism::NeighbouringRelation;
use crate::model::draws::Draws;
use crate::privacy::change_response::ChangeResponseReport;
use crate::privacy::gaussian;
use crate::privacy::release::ReleaseParams;
use crate::privacy::report::GaussianRelease;

/// Unit roundoff of f64.
const U: f64 = f64::EPSILON / 2.0;

/// Whether `params` describe a data-free-noise release (σ = 0).
pub fn is_data_free(params: &ReleaseParams) -> bool {
    params.scale == 0.0
}

/// The (ε, δ) of `draws` draws of the release μ_D + GP(0, η²k) (`params`
/// with σ = 0, η > 0) under replace-one: exactly one of `delta` (for ε) and
/// `epsilon` (for δ). μ = √L·Δ̂/η rounded up, with Δ̂ the proven
/// sensitivity of the release's lemma (it does not depend on σ: it is
/// computed by the accountant for the same parameters with σ = 1).
pub fn account(
    params: &ReleaseParams,
    draws: Draws,
    delta: Option<f64>,
    epsilon: Option<f64>,
) -> Result<ChangeResponseReport> {
    if !is_data_free(params) {
        return Err(Error::InvalidParameter {
            name: "scale σ",
            value: fmt_value(params.scale),
            requirement: "0 for the data-free-noise accountant",
        });
    }
    crate::error::gp_noise(params.gp_noise)?;
    crate::error::release_scale(params.scale, params.gp_noise)?;
    let mut twin = params.clone();
    twin.scale = 1.0;
    let release = twin.check()?;
    let s = release.sensitivity_bound();
    // Three correctly rounded operations (√L, ×, ÷): 4u relative, then up.
    let mu = (s.value * draws.as_f64().sqrt() / params.gp_noise * (1.0 + 4.0 * U)).next_up();
    let (epsilon, delta) = match (delta, epsilon) {
        (Some(d), None) => (gaussian::epsilon_for_delta(mu, d)?, d),
        (None, Some(e)) => (e, gaussian::delta_for_epsilon(mu, e)?),
        _ => return Err(Error::Input("give exactly one of δ (to get ε) or ε (to get δ)".into())),
    };
    let relation = NeighbouringRelation::ReplaceOne;
    Ok(ChangeResponseReport {
        neighbouring_relation: relation,
        statement: format!(
            "({}, {})-differentially private under replace-one (data-free noise σ = 0, η = {}): protects {}",
            fmt_value(epsilon),
            fmt_value(delta),
            fmt_value(params.gp_noise),
            relation.protects()
        ),
        epsilon,
        delta,
        mu,
        mu_source: format!(
            "√L·Δ̂/η with Δ̂ = {} ({}); the prior-RKHS norm is at most the common core's (docs/proofs/data-free-noise.md)",
            fmt_value(s.value),
            s.lemma.label()
        ),
        covariates: None,
        worst_covariate: None,
        accounting: "Gaussian mechanism, exact profile (Balle & Wang 2018, Thm 8)",
        release: GaussianRelease::of(params, draws),
    })
}

/// Calibration of a data-free-noise release: the smallest ridge r or GP
/// noise η, or the largest number of draws L, at which the certified ε(δ)
/// ([`account`]) is at most `target_epsilon`, with its report (the
/// bisection of [`super::change_response::calibrate`]; μ = √L·Δ̂/η decreases
/// in η and in r, as Δ̂ does, and grows like √L). σ stays 0: solving for it
/// is refused.
pub fn calibrate(
    params: &ReleaseParams,
    draws: Draws,
    solve: crate::privacy::calibrate::Solve,
    target_epsilon: f64,
    delta: f64,
) -> Result<(f64, ChangeResponseReport)> {
    if solve == crate::privacy::calibrate::Solve::Scale {
        return Err(Error::Unsupported(
            "a data-free-noise release has σ = 0; solve for the ridge, the GP noise or the draws instead".into(),
        ));
    }
    crate::privacy::change_response::calibrate_by(params, draws, solve, target_epsilon, &|p, l| {
        account(p, l, Some(delta), None)
    })
}

/// [`calibrate`] as a [`crate::privacy::calibrate::Calibration`] (the
/// statement as a privacy report with `conversion` recorded, and ε at a
/// value 0.1% more permissive).
pub fn calibration(
    params: &ReleaseParams,
    draws: Draws,
    solve: crate::privacy::calibrate::Solve,
    target_epsilon: f64,
    delta: f64,
    conversion: crate::privacy::conversion::Accounting,
) -> Result<crate::privacy::calibrate::Calibration> {
    if solve == crate::privacy::calibrate::Solve::Scale {
        return Err(Error::Unsupported(
            "a data-free-noise release has σ = 0; solve for the ridge, the GP noise or the draws instead".into(),
        ));
    }
    crate::privacy::change_response::calibration_by(params, draws, solve, target_epsilon, conversion, &|p, l| {
        account(p, l, Some(delta), None)
    })
}
