//! Calibration: the least private-data-hungry parameter meeting a target
//! (ε, δ) — the smallest ridge r, scale σ or GP noise η, or the largest
//! number of draws L.
//!
//! # What is guaranteed
//!
//! The returned value *v* satisfies the target: the accountant's reported ε
//! at *v* is ≤ ε_target (this is checked, not assumed). The search brackets
//! the boundary and bisects (geometrically; on integers for L) until the
//! bracket is 10⁻⁹ wide, so a value 0.1% more permissive (v/1.001 for r, σ,
//! η; L + 1 for draws) does **not** meet the target; that value and its ε are
//! returned too, as evidence. ε is monotone in r, η and L, and in σ when
//! η = 0 (smaller r, η, σ or larger L never decrease any term of Theorem 3.1 /
//! Proposition 2; for the tight bound's coupled sensitivity monotonicity in r
//! is checked numerically, not proven — docs/proofs/sensitivity-coupled-operator.md —
//! and the final check above keeps the result valid either way), so bisection
//! is sound. With η > 0, ε is **not** monotone
//! in σ (τ̃ = σ²V/(σ²r² + η²(V + r²)) grows with σ while the mean term
//! shrinks), so solving for σ with η > 0 is refused.
//!
//! With [`Accounting::Pld`] (covariance-only releases) only the ridge and
//! the draws can be solved for: the exact δ(ε) of the dominating pair is
//! non-decreasing in τ = V̂/r² and in L (docs/proofs/pld-covariance-only.md
//! §5) and τ decreases in r (docs/accountant.md §8); the computed PLD bound
//! is monotone only up to its discretisation, which the final check covers.
//!
//! # Errors
//!
//! [`Error::Unreachable`] when no value of the free parameter meets the
//! target, with what would help (e.g. when solving for σ, the covariance
//! term alone (the bound at σ = ∞) already exceeds ε: increase r).

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::error::{Error, Result, positive, unit_open};
use crate::model::draws::Draws;
use crate::privacy::conversion::Accounting;
use crate::privacy::release::ReleaseParams;
use crate::privacy::report::PrivacyReport;

/// Which parameter to solve for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Solve {
    /// Smallest effective ridge r.
    Ridge,
    /// Smallest kernel scale σ.
    Scale,
    /// Smallest added GP noise η.
    GpNoise,
    /// Largest number of draws L.
    Draws,
}

impl Solve {
    /// "ridge", "scale", "gp-noise", "draws".
    pub fn name(self) -> &'static str {
        match self {
            Solve::Ridge => "ridge",
            Solve::Scale => "scale",
            Solve::GpNoise => "gp-noise",
            Solve::Draws => "draws",
        }
    }
}

impl fmt::Display for Solve {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Solve {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "ridge" | "r" => Ok(Solve::Ridge),
            "scale" | "sigma" => Ok(Solve::Scale),
            "gp-noise" | "eta" | "noise" => Ok(Solve::GpNoise),
            "draws" | "l" => Ok(Solve::Draws),
            _ => Err(Error::InvalidParameter {
                name: "solve",
                value: s.to_string(),
                requirement: "one of ridge, scale, gp-noise, draws",
            }),
        }
    }
}

/// A target (ε, δ) statement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    /// ε > 0.
    pub epsilon: f64,
    /// δ ∈ (0, 1).
    pub delta: f64,
    /// The accounting used to evaluate ε (field name kept: "conversion").
    pub conversion: Accounting,
}

/// The solved value, the full report at it, and the evidence that it is
/// (nearly) the least permissive.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    /// What was solved for.
    pub solve: Solve,
    /// The solved value (r, σ, η or L).
    pub value: f64,
    /// The report at `value` (its ε ≤ the target).
    pub report: PrivacyReport,
    /// A value 0.1% more permissive (value/1.001, or L + 1) …
    pub permissive_value: f64,
    /// … and its ε, which exceeds the target.
    pub permissive_epsilon: f64,
}

const BRACKET_LIMIT: f64 = 1e12;
/// The smallest value the search tries (r, σ and η are refused below 10⁻¹⁵⁰).
const BRACKET_FLOOR: f64 = 1e-150;
const REL_TOL: f64 = 1e-9;

/// `params` with the solved parameter (r, σ or η; not L) set to `v`.
pub(crate) fn with_value(params: &ReleaseParams, solve: Solve, v: f64) -> ReleaseParams {
    let mut p = params.clone();
    match solve {
        Solve::Ridge => p.ridge = v,
        Solve::Scale => p.scale = v,
        Solve::GpNoise => p.gp_noise = v,
        Solve::Draws => {}
    }
    p
}

fn report(params: &ReleaseParams, draws: Draws, target: &Target) -> Result<PrivacyReport> {
    params.check()?.epsilon(draws, target.delta, target.conversion)
}

/// ε at a candidate value: +∞ where the bound is vacuous (no finite ε), so
/// that the search treats it as not meeting the target.
fn epsilon_or_inf(params: &ReleaseParams, draws: Draws, target: &Target) -> Result<f64> {
    match report(params, draws, target) {
        Ok(r) => Ok(r.epsilon),
        Err(Error::Vacuous(_)) => Ok(f64::INFINITY),
        Err(e) => Err(e),
    }
}

/// Solves for `solve` so that `draws` draws meet `target`; the other
/// parameters come from `params` (the field being solved for is ignored;
/// with [`Solve::Draws`], `draws` is ignored).
///
/// ```
/// use gpdp::{Conversion, Draws, Kernel, ReleaseParams, Solve, Target, calibrate};
///
/// // The smallest ridge r giving ε ≤ 1 at δ = 10⁻⁵ for 2 draws (r is ignored on input).
/// let params = ReleaseParams::new(Kernel::exponential(0.5)?, "interval:0,1".parse()?, 25, 0.0, 2.0);
/// let target = Target { epsilon: 1.0, delta: 1e-5, conversion: Conversion::Improved.into() };
/// let c = calibrate(&params, Draws::new(2)?, Solve::Ridge, target)?;
/// assert!(c.report.epsilon <= 1.0);
/// # Ok::<(), gpdp::Error>(())
/// ```
pub fn calibrate(params: &ReleaseParams, draws: Draws, solve: Solve, target: Target) -> Result<Calibration> {
    positive("target ε", target.epsilon)?;
    unit_open("δ", target.delta)?;
    if target.conversion == Accounting::Pld && matches!(solve, Solve::Scale | Solve::GpNoise) {
        return Err(Error::Unsupported(format!(
            "{}: with --conversion pld solve for the ridge or the draws, not the {solve}",
            crate::privacy::pld::PLD_SCOPE
        )));
    }
    match solve {
        Solve::Draws => solve_draws(params, target),
        _ => solve_decreasing(params, draws, solve, target),
    }
}

fn solve_decreasing(params: &ReleaseParams, draws: Draws, solve: Solve, target: Target) -> Result<Calibration> {
    let eps = |v: f64| -> Result<f64> { epsilon_or_inf(&with_value(params, solve, v), draws, &target) };
    let ok = |v: f64| -> Result<bool> { Ok(eps(v)? <= target.epsilon) };
    let te = target.epsilon;

    // Limits: is the target reachable at all?
    match solve {
        Solve::Scale if params.gp_noise > 0.0 => {
            return Err(Error::Unreachable(format!(
                "solving for the scale σ with GP noise η = {} > 0 is not supported: ε is not monotone in σ when η > 0 (a larger σ makes the released covariance more data-dependent); fix σ and solve for gp-noise or ridge instead",
                params.gp_noise
            )));
        }
        Solve::Scale => {
            let floor = eps(f64::INFINITY)?;
            if floor > te {
                let hint = calibrate(&with_value(params, Solve::Scale, f64::INFINITY), draws, Solve::Ridge, target)
                    .map(|c| {
                        format!("increase the ridge r to at least {:.6} (which meets the target at σ = ∞)", c.value)
                    })
                    .unwrap_or_else(|_| "increase the ridge r".into());
                return Err(Error::Unreachable(format!(
                    "the covariance leakage alone (σ = ∞) already gives ε = {floor:.6} > {te} with {draws} draw(s) at r = {}; no scale σ can meet the target: {hint}, reduce the number of draws, or accept a larger ε or δ",
                    params.ridge
                )));
            }
        }
        Solve::GpNoise => {
            if params.scale.is_infinite() {
                return Err(Error::Unreachable(
                    "GP noise η has no effect when σ = ∞ (the posterior covariance dominates); solve for the ridge instead".into(),
                ));
            }
            if ok(0.0)? {
                return finish(params, draws, solve, target, 0.0, f64::NAN);
            }
        }
        _ => {}
    }

    let what = match solve {
        Solve::Ridge => "ridge r",
        Solve::Scale => "scale σ",
        _ => "GP noise η",
    };
    let start = match solve {
        Solve::Ridge => params.ridge,
        Solve::Scale => params.scale,
        _ => params.gp_noise,
    };
    let start = if start.is_finite() && start > 0.0 { start.clamp(BRACKET_FLOOR, BRACKET_LIMIT) } else { 1.0 };
    // The joint bound is never above the tight one, so the tight solution
    // (fast) meets the target under it too: start there, and stop the
    // bisection at a relative width of 10⁻³ (each joint evaluation is a cold
    // certification; the value returned always meets the target).
    let joint = params.bound == crate::privacy::rdp::BoundChoice::Joint;
    let (start, rel_tol) = if joint {
        let tight = ReleaseParams { bound: crate::privacy::rdp::BoundChoice::Tight, ..params.clone() };
        match solve_decreasing(&tight, draws, solve, target) {
            Ok(c) => (c.value, 1e-3),
            Err(_) => (start, 1e-3),
        }
    } else {
        (start, REL_TOL)
    };
    let (mut lo, mut hi);
    if ok(start)? {
        hi = start;
        // The joint solution is usually within 20% of the tight one.
        lo = (start / if joint { 1.25 } else { 2.0 }).max(BRACKET_FLOOR);
        while ok(lo)? {
            if lo <= BRACKET_FLOOR {
                return Err(Error::Unconstrained(format!(
                    "every {what} down to {BRACKET_FLOOR:e} meets ε ≤ {te} at δ = {} (ε = {:.6} there); {what} does not limit this release, so choose it for utility",
                    target.delta,
                    eps(lo)?
                )));
            }
            hi = lo;
            lo = (lo / 2.0).max(BRACKET_FLOOR);
        }
    } else {
        lo = start;
        hi = start * 2.0;
        while !ok(hi)? {
            lo = hi;
            hi *= 2.0;
            if hi > BRACKET_LIMIT {
                return Err(Error::Unreachable(format!(
                    "no {what} up to {BRACKET_LIMIT:e} meets ε ≤ {te} at δ = {}; raise the target ε or δ, or change the other parameters",
                    target.delta
                )));
            }
        }
    }
    while hi / lo > 1.0 + rel_tol {
        let mid = (lo * hi).sqrt();
        if ok(mid)? { hi = mid } else { lo = mid }
    }
    finish(params, draws, solve, target, hi, hi / 1.001)
}

fn finish(
    params: &ReleaseParams,
    draws: Draws,
    solve: Solve,
    target: Target,
    value: f64,
    permissive: f64,
) -> Result<Calibration> {
    let p = with_value(params, solve, value);
    let report = report(&p, draws, &target)?;
    debug_assert!(report.epsilon <= target.epsilon);
    if report.epsilon > target.epsilon {
        return Err(Error::Unreachable(format!(
            "calibration could not certify {solve} = {value}: ε = {} > {}",
            report.epsilon, target.epsilon
        )));
    }
    let permissive_epsilon = if permissive.is_nan() || permissive <= 0.0 {
        f64::NAN
    } else {
        match solve {
            Solve::Draws => with_draws(params, Draws::new(permissive as u64)?, &target)?,
            // The more permissive value may be vacuous (ε = ∞): that is evidence too.
            _ => epsilon_or_inf(&with_value(params, solve, permissive), draws, &target)?,
        }
    };
    Ok(Calibration { solve, value, report, permissive_value: permissive, permissive_epsilon })
}

fn with_draws(params: &ReleaseParams, draws: Draws, target: &Target) -> Result<f64> {
    Ok(report(params, draws, target)?.epsilon)
}

fn solve_draws(params: &ReleaseParams, target: Target) -> Result<Calibration> {
    let release = params.check()?;
    let eps = |l: u64| -> Result<f64> { Ok(release.epsilon(Draws::new(l)?, target.delta, target.conversion)?.epsilon) };
    let e1 = eps(1)?;
    if e1 > target.epsilon {
        return Err(Error::Unreachable(format!(
            "a single draw already has ε = {e1:.6} > {} at δ = {}; increase the ridge r or the scale σ (or add GP noise η)",
            target.epsilon, target.delta
        )));
    }
    let (mut lo, mut hi) = (1u64, 2u64);
    const MAX_DRAWS: u64 = 1 << 40;
    while eps(hi)? <= target.epsilon {
        lo = hi;
        if hi >= MAX_DRAWS {
            return Err(Error::Unreachable(format!(
                "more than {MAX_DRAWS} draws meet the target; the parameters are so private that the count is not a useful limit"
            )));
        }
        hi *= 2;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if eps(mid)? <= target.epsilon { lo = mid } else { hi = mid }
    }
    let mut c = finish_draws(params, target, lo)?;
    c.permissive_epsilon = eps(lo + 1)?;
    Ok(c)
}

fn finish_draws(params: &ReleaseParams, target: Target, l: u64) -> Result<Calibration> {
    let report = report(params, Draws::new(l)?, &target)?;
    Ok(Calibration {
        solve: Solve::Draws,
        value: l as f64,
        report,
        permissive_value: (l + 1) as f64,
        permissive_epsilon: f64::NAN,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kernel::Kernel;
    use crate::privacy::conversion::Conversion;

    fn base() -> ReleaseParams {
        ReleaseParams::new(Kernel::exponential(1.0).unwrap(), "interval:0,1".parse().unwrap(), 100, 1.0, 1.0)
    }

    fn target(e: f64) -> Target {
        Target { epsilon: e, delta: 1e-5, conversion: Conversion::Improved.into() }
    }

    #[test]
    fn certified_side_for_each_parameter() {
        for solve in [Solve::Ridge, Solve::Scale, Solve::GpNoise] {
            let c = calibrate(&base(), Draws::new(3).unwrap(), solve, target(20.0)).unwrap();
            assert!(c.report.epsilon <= 20.0, "{solve}");
            assert!(c.permissive_epsilon > 20.0, "{solve}: {c:?}");
            assert!(c.report.epsilon > 20.0 * (1.0 - 1e-3), "{solve}: not tight");
        }
        let c = calibrate(&base(), Draws::ONE, Solve::Draws, target(40.0)).unwrap();
        assert!(c.report.epsilon <= 40.0 && c.permissive_epsilon > 40.0);
        assert_eq!(c.report.components[0].draws.as_f64(), c.value);
    }

    #[test]
    fn unreachable_targets_say_what_helps() {
        // Small r: the covariance floor at σ = ∞ exceeds ε = 1.
        let mut p = base();
        p.ridge = 0.2;
        let e = calibrate(&p, Draws::ONE, Solve::Scale, target(1.0)).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::Unreachable(_)) && msg.contains("increase the ridge r to at least"), "{msg}");
        let e = calibrate(&p, Draws::ONE, Solve::Draws, target(0.01)).unwrap_err();
        assert!(e.to_string().contains("single draw"), "{e}");
        let mut noisy = base();
        noisy.gp_noise = 0.5;
        assert!(
            calibrate(&noisy, Draws::ONE, Solve::Scale, target(10.0)).unwrap_err().to_string().contains("not monotone")
        );
        let mut q = base();
        q.scale = f64::INFINITY;
        assert!(calibrate(&q, Draws::ONE, Solve::GpNoise, target(1.0)).is_err());
        // Already met with η = 0: smallest η is 0.
        assert_eq!(calibrate(&base(), Draws::ONE, Solve::GpNoise, target(1e3)).unwrap().value, 0.0);
    }

    /// With η ≫ σ the admissible orders reach α_max − 1 = 1/τ̃ ≈ σ⁻²: the
    /// optimum (α ≈ 3) must still be found, so ε does not depend on σ once
    /// σ ≪ η, and calibrating η at a tiny σ works.
    #[test]
    fn tiny_scale_with_gp_noise_reaches_the_optimum() {
        let eps = |sigma: f64| {
            let mut p = base();
            p.n = 10;
            p.scale = sigma;
            p.gp_noise = 1.0;
            p.check().unwrap().epsilon(Draws::ONE, 1e-5, Conversion::Improved).unwrap()
        };
        let reference = eps(1e-4);
        assert!((reference.epsilon - 10.697280271746841).abs() < 1e-9, "{}", reference.epsilon);
        for sigma in [1e-8, 1e-10, 1e-30] {
            let r = eps(sigma);
            assert!((r.epsilon - reference.epsilon).abs() < 1e-6 * reference.epsilon, "σ = {sigma}: {}", r.epsilon);
            assert!(r.alpha < 10.0, "σ = {sigma}: α = {}", r.alpha);
        }
        let mut p = base();
        p.n = 10;
        p.scale = 1e-8;
        let c = calibrate(&p, Draws::ONE, Solve::GpNoise, target(11.0)).unwrap();
        assert!(
            c.report.epsilon <= 11.0 && c.value > 0.9 && c.value < 1.0,
            "η = {}, ε = {}",
            c.value,
            c.report.epsilon
        );
        assert!(c.permissive_epsilon > 11.0);
    }

    /// Every ridge meets the target (constant kernel, n = 1, much GP
    /// noise): said as such, not as an invalid ridge.
    #[test]
    fn a_target_every_value_meets_is_reported_as_unconstrained() {
        let mut p = ReleaseParams::new(
            crate::model::kernel::Kernel::new(crate::model::kernel::KernelKind::Constant, 1.0).unwrap(),
            "interval:0,1".parse().unwrap(),
            1,
            1.0,
            1.0,
        );
        p.gp_noise = 3.0;
        let e = calibrate(&p, Draws::ONE, Solve::Ridge, target(5.0)).unwrap_err();
        assert!(matches!(e, Error::Unconstrained(_)), "{e}");
        assert!(e.to_string().contains("every ridge r down to 1e-150 meets ε ≤ 5"), "{e}");
        // A huge target is met by a small but finite ridge (no error from
        // candidates where the bound is vacuous).
        let c = calibrate(&base(), Draws::ONE, Solve::Ridge, target(3e25)).unwrap();
        assert!(c.report.epsilon <= 3e25 && c.value > 0.0);
    }
}
