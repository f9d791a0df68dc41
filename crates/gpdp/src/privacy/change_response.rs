//! The change-one-response relation (covariates public, one response
//! changed by at most 2M): the release is a Gaussian mechanism, and its
//! distance has a closed form (docs/proofs/change-response.md).
//!
//! ```text
//! μ² = L·4M²·max_i s_i,   s_i = [K A⁻¹ (σ²r²·I + η²A)⁻¹]_ii,   A = K + r²I,
//! μ² ≤ L·4M² / ((1 + r²)·r²·(σ² + η²))                       (any covariates),
//! ```
//!
//! [`mu_with_covariates`] evaluates the first with the public covariates,
//! certified against rounding; [`mu_without_covariates`] is the second. The
//! exact (ε, δ) of a distance is [`super::gaussian`].

use faer::Mat;
use faer::linalg::triangular_solve::{solve_lower_triangular_in_place, solve_upper_triangular_in_place};

use serde::Serialize;

use crate::error::{Error, Result, fmt_value, non_negative};
use crate::linalg::{cholesky_lower, par};
use crate::mechanism::NeighbouringRelation;
use crate::model::draws::Draws;
use crate::model::kernel::Kernel;
use crate::model::points::Points;
use crate::privacy::accountant::RdpAccountant;
use crate::privacy::conversion::{Accounting, Conversion};
use crate::privacy::event::PrivacyEvent;
use crate::privacy::gaussian;
use crate::privacy::release::ReleaseParams;
use crate::privacy::report::{GaussianRelease, GaussianReport, PrivacyReport};

/// Unit roundoff of f64.
const U: f64 = f64::EPSILON / 2.0;

/// The Gaussian distance μ of L draws under change-one-response for any
/// covariates (docs/proofs/change-response.md §4), rounded up:
/// μ = √L·2M / (r·√(1 + r²)·√(σ² + η²)); 0 when σ = ∞ (the mean is not
/// released). Valid for r > 0, σ > 0 (∞ allowed), η ≥ 0, M ≥ 0.
pub fn mu_without_covariates(response_bound: f64, ridge: f64, scale: f64, gp_noise: f64, draws: Draws) -> Result<f64> {
    non_negative("response bound M_Y", response_bound)?;
    crate::error::ridge(ridge)?;
    crate::error::scale(scale)?;
    crate::error::gp_noise(gp_noise)?;
    if scale.is_infinite() || response_bound == 0.0 {
        return Ok(0.0);
    }
    // μ itself, not μ², so that no intermediate overflows to a too-small
    // result: an overflowing denominator gives 0 → the next double up, which
    // is above the true μ; an overflowing numerator gives +∞.
    let q = ridge * ridge;
    let denom = ridge * (1.0 + q).sqrt() * (scale * scale + gp_noise * gp_noise).sqrt();
    let mu = 2.0 * response_bound * draws.as_f64().sqrt() / denom;
    // Eleven correctly rounded operations: 16u relative, then up.
    Ok((mu * (1.0 + 16.0 * U)).next_up())
}

/// The guarantee of a release under change-one-response: the Gaussian
/// mechanism's exact (ε, δ) at the distance μ (docs/proofs/change-response.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangeResponseReport {
    /// Change-one-response ([`account`]), or replace-one for a release
    /// whose noise is data-free ([`super::data_free::account`]).
    pub neighbouring_relation: NeighbouringRelation,
    /// The guarantee in one sentence.
    pub statement: String,
    /// ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// The Gaussian distance μ of all draws (rounded up).
    pub mu: f64,
    /// How μ was obtained.
    pub mu_source: String,
    /// The number of public covariates used (None: the bound for any covariates).
    pub covariates: Option<usize>,
    /// The 1-based row of the covariate whose reading the distance is largest for.
    pub worst_covariate: Option<usize>,
    /// The accounting method.
    pub accounting: &'static str,
    /// The release's parameters (flattened: `kernel`, `lengthscale`, …, `draws`).
    #[serde(flatten)]
    pub release: GaussianRelease,
}

/// The (ε, δ) of `draws` draws of the release `params` under
/// change-one-response: exactly one of `delta` (for ε) and `epsilon` (for δ).
/// With `covariates` (the public covariates: n rows of the domain's
/// dimension, inside it) μ is [`mu_with_covariates`], else
/// [`mu_without_covariates`]. `params` is validated by the accountant first.
pub fn account(
    params: &ReleaseParams,
    draws: Draws,
    covariates: Option<&Points>,
    delta: Option<f64>,
    epsilon: Option<f64>,
) -> Result<ChangeResponseReport> {
    if params.scale == 0.0 {
        // The limit σ → 0 of the distance is finite (s_i = [K A⁻²]_ii / η²), but the
        // certified closed form below is written in partial fractions over σ², and no
        // proof in docs/proofs/ covers the limit yet: refused with the reason, not guessed.
        return Err(Error::Unsupported(format!(
            "σ = 0 (η = {}) under change-one-response: the certified distance of docs/proofs/change-response.md needs σ > 0 — give a small σ > 0 (as σ → 0 the distance grows to a finite limit), or use --relation replace-one, under which σ = 0 is the data-free release with its own exact accounting",
            fmt_value(params.gp_noise)
        )));
    }
    let release = params.check()?;
    let p = &release.params;
    let (mu, worst, source) = match covariates {
        Some(x) => {
            crate::model::policy::check_covariates(x, p.n, &p.domain)?;
            let (mu, i) = mu_with_covariates(&p.kernel, x, p.response_bound, p.ridge, p.scale, p.gp_noise, draws)?;
            (mu, Some(i + 1), format!("the {} public covariates (the closed form, certified)", x.len()))
        }
        None => (
            mu_without_covariates(p.response_bound, p.ridge, p.scale, p.gp_noise, draws)?,
            None,
            "the bound for any covariates, μ = √L·2M/(r√(1+r²)√(σ²+η²))".to_string(),
        ),
    };
    let (epsilon, delta) = match (delta, epsilon) {
        (Some(d), None) => (gaussian::epsilon_for_delta(mu, d)?, d),
        (None, Some(e)) => (e, gaussian::delta_for_epsilon(mu, e)?),
        _ => return Err(Error::Input("give exactly one of δ (to get ε) or ε (to get δ)".into())),
    };
    let relation = NeighbouringRelation::ChangeResponse;
    Ok(ChangeResponseReport {
        neighbouring_relation: relation,
        statement: format!(
            "({}, {})-differentially private under change-one-response: protects {}",
            fmt_value(epsilon),
            fmt_value(delta),
            relation.protects()
        ),
        epsilon,
        delta,
        mu,
        mu_source: source,
        covariates: covariates.map(|x| x.len()),
        worst_covariate: worst,
        accounting: "Gaussian mechanism, exact profile (Balle & Wang 2018, Thm 8)",
        release: GaussianRelease::of(p, draws),
    })
}

impl ChangeResponseReport {
    /// The statement as a [`PrivacyReport`] for a release (an ε(δ)
    /// statement): ε and δ as here, the `gaussian` block set, and `alpha`,
    /// `rdp` those of the Rényi curve αμ²/2 with the improved conversion, for
    /// comparison; `conversion` is the one the release asked for (it does not
    /// enter an exact Gaussian statement). No components.
    pub fn privacy_report(&self, conversion: Accounting) -> Result<PrivacyReport> {
        let mut acc = RdpAccountant::new();
        acc.compose(PrivacyEvent::gaussian(self.mu)?)?;
        let rdp = acc.epsilon(self.delta, Conversion::Improved)?;
        Ok(PrivacyReport {
            epsilon: self.epsilon,
            delta: self.delta,
            alpha: rdp.alpha,
            alpha_max: f64::INFINITY,
            rdp: rdp.rdp,
            conversion,
            epsilon_clamped_at_zero: false,
            pld: None,
            gaussian: Some(GaussianReport {
                neighbouring_relation: self.neighbouring_relation,
                method: self.accounting,
                mu: self.mu,
                mu_source: self.mu_source.clone(),
                covariates: self.covariates,
                worst_covariate: self.worst_covariate,
                rdp_epsilon: Some(rdp.epsilon),
                release: self.release.clone(),
            }),
            route: None,
            components: Vec::new(),
        })
    }
}

/// Calibration under change-one-response: the smallest ridge r, scale σ or
/// GP noise η, or the largest number of draws L, at which the certified
/// ε(δ) ([`account`]) is at most `target_epsilon`; with its report.
///
/// μ decreases in r, σ and η (each eigenvalue's F(λ) of
/// docs/proofs/change-response.md §4 does) and grows like √L, and ε(δ)
/// increases in μ, so bisection finds the boundary; the value returned is the
/// end of the final bracket at which the certified check holds (relative
/// width 10⁻⁹). Refused when no value meets the target (L = 1 already too
/// much, or the target unreachable within r, σ, η ≤ 10¹⁵⁰).
pub fn calibrate(
    params: &ReleaseParams,
    draws: Draws,
    covariates: Option<&Points>,
    solve: crate::privacy::calibrate::Solve,
    target_epsilon: f64,
    delta: f64,
) -> Result<(f64, ChangeResponseReport)> {
    calibrate_by(params, draws, solve, target_epsilon, &|p, l| account(p, l, covariates, Some(delta), None))
}

/// [`calibrate`] for any Gaussian accountant `statement` whose ε decreases in
/// r, σ and η and grows with L (also [`super::data_free`]).
pub(crate) fn calibrate_by(
    params: &ReleaseParams,
    draws: Draws,
    solve: crate::privacy::calibrate::Solve,
    target_epsilon: f64,
    statement: &dyn Fn(&ReleaseParams, Draws) -> Result<ChangeResponseReport>,
) -> Result<(f64, ChangeResponseReport)> {
    use crate::privacy::calibrate::Solve;
    crate::error::positive("target ε", target_epsilon)?;
    let eps_at = |p: &ReleaseParams, l: Draws| -> Result<(f64, ChangeResponseReport)> {
        let r = statement(p, l)?;
        Ok((r.epsilon, r))
    };
    let with = |v: f64| crate::privacy::calibrate::with_value(params, solve, v);
    if solve == Solve::Draws {
        let (e1, r1) = eps_at(params, Draws::ONE)?;
        if e1 > target_epsilon {
            return Err(Error::Unreachable(format!(
                "one draw already has ε = {} > {} ({})",
                fmt_value(e1),
                fmt_value(target_epsilon),
                r1.neighbouring_relation
            )));
        }
        // ε grows with L: the largest L by doubling, then bisection on integers.
        let (mut lo, mut lo_report) = (1u64, r1);
        let mut hi = 2u64;
        loop {
            let (e, r) = eps_at(params, Draws::new(hi)?)?;
            if e > target_epsilon {
                break;
            }
            (lo, lo_report) = (hi, r);
            if hi > u64::MAX / 4 {
                return Err(Error::Unconstrained("any number of draws meets the target".into()));
            }
            hi *= 2;
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            let (e, r) = eps_at(params, Draws::new(mid)?)?;
            if e <= target_epsilon { (lo, lo_report) = (mid, r) } else { hi = mid }
        }
        return Ok((lo as f64, lo_report));
    }
    // ε decreases in the parameter: bracket [lo, hi] with ε(hi) ≤ target.
    if solve == Solve::GpNoise {
        // (η = 0 is not admissible for every accountant: then it is not a candidate.)
        if let Ok((e0, r0)) = eps_at(&with(0.0), draws) {
            if e0 <= target_epsilon {
                return Ok((0.0, r0));
            }
        }
    }
    let current = match solve {
        Solve::Ridge => params.ridge,
        Solve::Scale => params.scale,
        _ => params.gp_noise,
    };
    let mut hi = if current.is_finite() && current > 0.0 { current } else { 1.0 };
    let mut hi_report = loop {
        let (e, r) = eps_at(&with(hi), draws)?;
        if e <= target_epsilon {
            break r;
        }
        if hi > 1e140 {
            return Err(Error::Unreachable(format!(
                "no {} up to 1e140 gives ε ≤ {} ({})",
                solve.name(),
                fmt_value(target_epsilon),
                params_relation(params)
            )));
        }
        hi *= 4.0;
    };
    let mut lo = hi;
    loop {
        let next = lo / 4.0;
        if next < 1e-140 {
            lo = 0.0;
            break;
        }
        let (e, r) = eps_at(&with(next), draws)?;
        if e > target_epsilon {
            lo = next;
            break;
        }
        (hi, hi_report) = (next, r);
        lo = next;
    }
    while hi - lo > 1e-9 * hi {
        let mid = 0.5 * (lo + hi);
        let (e, r) = eps_at(&with(mid), draws)?;
        if e <= target_epsilon { (hi, hi_report) = (mid, r) } else { lo = mid }
    }
    Ok((hi, hi_report))
}

/// [`calibrate`] as a [`Calibration`] (as the RDP calibration reports it):
/// the solved value, its statement as a [`PrivacyReport`]
/// ([`ChangeResponseReport::privacy_report`], `conversion` recorded), and ε
/// at a value 0.1% more permissive (value/1.001, or L + 1 draws; ∞ when the
/// value is the smallest possible, η = 0).
pub fn calibration(
    params: &ReleaseParams,
    draws: Draws,
    covariates: Option<&Points>,
    solve: crate::privacy::calibrate::Solve,
    target_epsilon: f64,
    delta: f64,
    conversion: Accounting,
) -> Result<crate::privacy::calibrate::Calibration> {
    calibration_by(params, draws, solve, target_epsilon, conversion, &|p, l| {
        account(p, l, covariates, Some(delta), None)
    })
}

/// [`calibration`] for any Gaussian accountant `statement` ([`calibrate_by`]).
pub(crate) fn calibration_by(
    params: &ReleaseParams,
    draws: Draws,
    solve: crate::privacy::calibrate::Solve,
    target_epsilon: f64,
    conversion: Accounting,
    statement: &dyn Fn(&ReleaseParams, Draws) -> Result<ChangeResponseReport>,
) -> Result<crate::privacy::calibrate::Calibration> {
    use crate::privacy::calibrate::Solve;
    let (value, report) = calibrate_by(params, draws, solve, target_epsilon, statement)?;
    let (permissive_value, permissive_epsilon) = if solve == Solve::Draws {
        let more = Draws::new(value as u64 + 1)?;
        (value + 1.0, statement(params, more)?.epsilon)
    } else if value > 0.0 {
        let p = crate::privacy::calibrate::with_value(params, solve, value / 1.001);
        (value / 1.001, statement(&p, draws)?.epsilon)
    } else {
        (value, f64::INFINITY)
    };
    Ok(crate::privacy::calibrate::Calibration {
        solve,
        value,
        report: report.privacy_report(conversion)?,
        permissive_value,
        permissive_epsilon,
    })
}

/// The relation a Gaussian statement of `params` is for (for messages).
fn params_relation(params: &ReleaseParams) -> NeighbouringRelation {
    if params.scale == 0.0 { NeighbouringRelation::ReplaceOne } else { NeighbouringRelation::ChangeResponse }
}

/// An assumed bound on the absolute error of each computed kernel entry
/// k(x_i, x_j) ∈ [0, 1]: 10⁻¹². The entries are a profile g(d/ℓ) of the
/// distance (exponential, Matérn, squared exponential) or 0/1 (constant,
/// diagonal); d carries a relative error ≤ (dim + 2)u, sup x·|g′(x)| ≤ 1 for
/// every profile, and g itself takes fewer than 10 correctly rounded
/// operations and one exp, so the error is below (dim + 16)·u ≈ 4·10⁻¹⁵ for
/// dim ≤ 3 — a margin of 250× (docs/proofs/change-response.md §5).
pub const KERNEL_ENTRY_ERROR: f64 = 1e-12;

/// The distance μ of L draws under change-one-response with the public
/// covariates `x` (docs/proofs/change-response.md §0, §5):
/// μ² = L·4M²·max_i s_i, rounded up, and the index i of the largest s_i.
///
/// s_i = ((σ² + η²)/σ²)·[(η²K + cI)⁻¹]_ii − (1/σ²)·[(K + r²I)⁻¹]_ii with
/// c = r²(σ² + η²) (partial fractions of the theorem's F(K)); each diagonal
/// entry e_iᵀM⁻¹e_i is enclosed from an approximate column z of M⁻¹ by
/// z_i + zᵀr ≤ e_iᵀM⁻¹e_i ≤ z_i + zᵀr + ‖r‖²/λ₀, r = e_i − Mz, λ₀ ≤ λ_min(M)
/// known exactly (r² or c), with every rounding and the kernel entries'
/// error ([`KERNEL_ENTRY_ERROR`]) enclosed. Never above
/// [`mu_without_covariates`] (which it returns if smaller). O(n³) time,
/// 3n² doubles of memory (checked first).
pub fn mu_with_covariates(
    kernel: &Kernel,
    x: &Points,
    response_bound: f64,
    ridge: f64,
    scale: f64,
    gp_noise: f64,
    draws: Draws,
) -> Result<(f64, usize)> {
    let free = mu_without_covariates(response_bound, ridge, scale, gp_noise, draws)?;
    let n = x.len();
    if n == 0 {
        return Err(Error::Input("change-one-response needs at least one covariate".into()));
    }
    if free == 0.0 {
        return Ok((0.0, 0));
    }
    crate::check_memory(
        "the change-one-response distance",
        &[crate::Need::items("three n × n matrices", 3.0 * (n as f64) * (n as f64), 8)],
        "use the bound without covariates (no covariates given)",
    )?;
    crate::check_work(
        "the change-one-response distance",
        4.0 * (n as f64).powi(3),
        2e9,
        "use the bound without covariates (no covariates given)",
    )?;
    // r², σ², η² and c are rounded (relative ≤ 3u each); the exact matrices
    // differ from the computed ones by that on the diagonal, which the entry
    // error covers, and their smallest eigenvalues are at least the computed
    // constants shrunk by 4u. Each term of the combination is rounded in the
    // safe direction (up for the added one, down for the subtracted one).
    let q = ridge * ridge;
    let (s2, e2) = (scale * scale, gp_noise * gp_noise);
    let k = kernel.gram(x);
    let a = &k + Mat::<f64>::identity(n, n) * q;
    let qa = diagonal_of_inverse(&a, q * (1.0 - 4.0 * U), KERNEL_ENTRY_ERROR + 2.0 * U * q)?;
    let (up, down) = (1.0 + 8.0 * U, 1.0 - 8.0 * U);
    let s_up: Vec<f64> = if gp_noise == 0.0 {
        // M = σ²r²I: [M⁻¹]_ii = 1/(σ²r²); s_i = (1/r² − [A⁻¹]_ii)/σ².
        qa.iter().map(|&(lo, _)| ((up / q) - lo * down).max(0.0) / s2 * up).collect()
    } else {
        let c = q * (s2 + e2);
        let m = &k * e2 + Mat::<f64>::identity(n, n) * c;
        let qm = diagonal_of_inverse(&m, c * (1.0 - 8.0 * U), e2 * KERNEL_ENTRY_ERROR + 4.0 * U * (c + e2))?;
        let w = (s2 + e2) / s2;
        qm.iter().zip(&qa).map(|(&(_, hi_m), &(lo_a, _))| (w * hi_m * up - lo_a / s2 * down).max(0.0)).collect()
    };
    let (worst, i) =
        s_up.iter().enumerate().fold((f64::NEG_INFINITY, 0), |b, (i, &v)| if v > b.0 { (v, i) } else { b });
    // The final few operations (the partial-fraction combination, ×L·4M², √)
    // with a relative 64u, and the next double up.
    let mu2 = draws.as_f64() * 4.0 * response_bound * response_bound * worst.max(0.0);
    let mu = (mu2 * (1.0 + 64.0 * U)).sqrt().next_up();
    Ok(if mu < free { (mu, i) } else { (free, i) })
}

/// Enclosures [lo, hi] of every diagonal entry of M⁻¹ for the exact matrix
/// M* = M + Δ, |Δ_jk| ≤ `entry_error`, with λ_min(M*) ≥ `lambda0`.
fn diagonal_of_inverse(m: &Mat<f64>, lambda0: f64, entry_error: f64) -> Result<Vec<(f64, f64)>> {
    let n = m.nrows();
    let l = cholesky_lower(m)
        .map_err(|e| Error::Factorisation { what: "the change-one-response matrix", detail: format!("{e:?}") })?;
    let mut z = Mat::<f64>::identity(n, n);
    solve_lower_triangular_in_place(l.as_ref(), z.as_mut(), par());
    solve_upper_triangular_in_place(l.transpose(), z.as_mut(), par());
    let gamma = |k: usize| (k as f64 * U) / (1.0 - k as f64 * U);
    let g = gamma(n + 2);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let zi = z.col(i);
        let z1: f64 = (0..n).map(|j| zi[j].abs()).sum();
        // r = e_i − M z in floating point, and a bound ρ_j on its error
        // (the matrix-vector product, γ_{n+1}·(|e| + |M||z|), and Δz).
        let (mut dot, mut dot_abs, mut r2, mut rho2) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        let mut rho_z = 0.0f64;
        for j in 0..n {
            let mut acc = if j == i { 1.0 } else { 0.0 };
            let mut mag = acc;
            for k2 in 0..n {
                let p = m[(j, k2)] * zi[k2];
                acc -= p;
                mag += p.abs();
            }
            let rho = g * mag + entry_error * z1;
            dot += zi[j] * acc;
            dot_abs += (zi[j] * acc).abs();
            rho_z += zi[j].abs() * rho;
            r2 += acc * acc;
            rho2 += rho * rho;
        }
        // zᵀr (exact r) within zᵀfl(r) ± (γ_n·Σ|z_j r_j| + Σ|z_j|ρ_j).
        let dot_err = g * dot_abs + rho_z;
        let lo = zi[i] + dot - dot_err;
        // ‖r‖ ≤ ‖fl(r)‖ + ‖ρ‖.
        let r_norm = r2.sqrt() * (1.0 + g) + rho2.sqrt() * (1.0 + g);
        let hi = zi[i] + dot + dot_err + r_norm * r_norm / lambda0 * (1.0 + 4.0 * U);
        // The sums above round too: widen by a relative γ_{n+2} of the magnitudes.
        let widen = g * (zi[i].abs() + dot_abs + dot_err);
        out.push(((lo - widen).max(0.0), hi + widen));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kernel::Kernel;
    use crate::model::points::Points;
    use crate::privacy::release::ReleaseParams;
    use faer::linalg::solvers::Solve;
    use faer::{Mat, Side};
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn inverse(m: &Mat<f64>) -> Mat<f64> {
        let n = m.nrows();
        m.llt(Side::Lower).expect("positive definite").solve(Mat::<f64>::identity(n, n).as_ref())
    }

    /// s_i of the theorem, densely: K A⁻¹ (σ²q I + η²A)⁻¹.
    fn s_diag(k: &Mat<f64>, q: f64, sigma: f64, eta: f64) -> Vec<f64> {
        let n = k.nrows();
        let a = k + Mat::<f64>::identity(n, n) * q;
        let b = Mat::<f64>::identity(n, n) * (sigma * sigma * q) + &a * (eta * eta);
        let m = k * inverse(&a) * inverse(&b);
        (0..n).map(|i| m[(i, i)]).collect()
    }

    /// The squared Mahalanobis distance of the two released laws on T when
    /// response i changes by t, from the posterior formulas directly
    /// (model.md §3, §6), independent of the theorem's algebra; the model is
    /// (q = r², σ, η).
    fn mahalanobis(
        kernel: &Kernel,
        x: &Points,
        t_pts: &Points,
        i: usize,
        t: f64,
        (q, sigma, eta): (f64, f64, f64),
    ) -> f64 {
        let n = x.len();
        let k = kernel.gram(x);
        let a = &k + Mat::<f64>::identity(n, n) * q;
        let ai = inverse(&a);
        let ktx = kernel.cross(t_pts, x);
        let ktt = kernel.gram(t_pts);
        let m = t_pts.len();
        let mean: Vec<f64> = (0..m).map(|r| t * (0..n).map(|j| ktx[(r, j)] * ai[(j, i)]).sum::<f64>()).collect();
        let post = &ktt - &ktx * &ai * ktx.transpose();
        let c = post * (sigma * sigma) + &ktt * (eta * eta);
        // A pseudo-inverse by eigendecomposition (C_T may be singular when T
        // repeats points); eigenvalues below 1e-12·max are dropped.
        let eig = c.self_adjoint_eigen(Side::Lower).unwrap();
        let (u, s) = (eig.U(), eig.S());
        let top = (0..m).map(|j| s[j]).fold(0.0f64, f64::max);
        let mut total = 0.0;
        for j in 0..m {
            if s[j] > 1e-12 * top {
                let proj: f64 = (0..m).map(|r| u[(r, j)] * mean[r]).sum();
                total += proj * proj / s[j];
            }
        }
        total
    }

    /// Issue 38 item 9: σ = 0 with η > 0 is refused with its reason (under
    /// replace-one it is the data-free release), with or without covariates.
    #[test]
    fn zero_scale_is_refused_with_the_reason() {
        let x = Points::new(vec![0.1, 0.2, 0.5, 0.6, 0.9, 0.1], 2).unwrap();
        let mut p = ReleaseParams::new(Kernel::exponential(0.5).unwrap(), "box:0,1,0,1".parse().unwrap(), 3, 1.0, 0.0);
        p.gp_noise = 0.5;
        for cov in [None, Some(&x)] {
            let e = account(&p, Draws::ONE, cov, Some(1e-5), None).unwrap_err();
            assert!(matches!(e, Error::Unsupported(_)), "{e}");
            assert!(e.to_string().contains("σ = 0 (η = 0.5) under change-one-response"), "{e}");
        }
    }

    fn random_points(rng: &mut ChaCha8Rng, n: usize) -> Points {
        let v: Vec<f64> = (0..2 * n).map(|_| rng.random_range(0.0..1.0)).collect();
        Points::new(v, 2).unwrap()
    }

    /// The theorem against the direct computation: on random and clustered
    /// test sets the distance never exceeds t²·s_i, and T = X attains it.
    #[test]
    fn the_closed_form_is_the_supremum_over_test_sets() {
        let mut rng = ChaCha8Rng::seed_from_u64(24);
        let kernel = Kernel::exponential(0.3).unwrap();
        for &(n, r, sigma, eta) in
            &[(12usize, 0.5, 1.0, 0.0), (15, 1.5, 0.5, 0.3), (10, 0.8, 2.0, 1.0), (8, 3.0, 0.12, 0.0)]
        {
            let x = random_points(&mut rng, n);
            let q = r * r;
            let s = s_diag(&kernel.gram(&x), q, sigma, eta);
            let t = 2.0;
            for i in [0, n / 2, n - 1] {
                let sup = t * t * s[i];
                let at_x = mahalanobis(&kernel, &x, &x, i, t, (q, sigma, eta));
                assert!((at_x - sup).abs() <= 1e-8 * sup, "n = {n}, i = {i}: at X {at_x} vs {sup}");
                for trial in 0..40 {
                    let m = 1 + trial % 12;
                    let pts = if trial % 2 == 0 {
                        random_points(&mut rng, m)
                    } else {
                        // Clustered around x_i.
                        let xi = x.row(i);
                        let v: Vec<f64> = (0..m)
                            .flat_map(|_| {
                                [xi[0] + rng.random_range(-0.02..0.02), xi[1] + rng.random_range(-0.02..0.02)]
                            })
                            .collect();
                        Points::new(v, 2).unwrap()
                    };
                    let d = mahalanobis(&kernel, &x, &pts, i, t, (q, sigma, eta));
                    assert!(d <= sup * (1.0 + 1e-8), "n = {n}, i = {i}, trial {trial}: {d} > {sup}");
                }
                if eta == 0.0 {
                    // η = 0: the single point {x_i} attains it as well.
                    let xi = Points::new(x.row(i).to_vec(), 2).unwrap();
                    let d = mahalanobis(&kernel, &x, &xi, i, t, (q, sigma, eta));
                    assert!((d - sup).abs() <= 1e-8 * sup, "{d} vs {sup}");
                }
            }
        }
    }

    /// The covariate-free bound dominates max_i s_i for random, clustered
    /// and repeated covariates, and is nearly attained by one isolated point.
    #[test]
    fn the_bound_without_covariates_dominates() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let kernel = Kernel::exponential(0.14).unwrap();
        for &(n, r, sigma, eta) in &[(50usize, 5.7063, 0.12, 0.0), (30, 1.0, 1.0, 0.5), (20, 0.3, 2.0, 0.0)] {
            let mut sets = vec![random_points(&mut rng, n)];
            sets.push(Points::new([0.5, 0.5].repeat(n), 2).unwrap());
            for x in &sets {
                let s = s_diag(&kernel.gram(x), r * r, sigma, eta);
                let worst = s.iter().cloned().fold(0.0, f64::max);
                let mu = mu_without_covariates(1.0, r, sigma, eta, Draws::ONE).unwrap();
                assert!(mu * mu >= 4.0 * worst, "{} < {}", mu * mu, 4.0 * worst);
            }
        }
        // One point, η = 0: s = 1/((1 + q)qσ²) exactly, so the bound is attained.
        let one = Points::new(vec![0.2, 0.7], 2).unwrap();
        let s = s_diag(&kernel.gram(&one), 4.0, 0.5, 0.0)[0];
        let mu = mu_without_covariates(1.0, 2.0, 0.5, 0.0, Draws::ONE).unwrap();
        assert!((mu * mu - 4.0 * s).abs() <= 1e-12 * mu * mu);
        assert_eq!(mu_without_covariates(1.0, 2.0, f64::INFINITY, 0.0, Draws::ONE).unwrap(), 0.0);
        let l4 = mu_without_covariates(1.0, 2.0, 0.5, 0.0, Draws::new(4).unwrap()).unwrap();
        assert!((l4 - 2.0 * mu).abs() < 1e-12);
    }

    /// The certified distance with covariates lies above the dense
    /// evaluation of the theorem and within 10⁻⁷ of it, for spread,
    /// clustered and repeated covariates, with and without GP noise.
    #[test]
    fn the_certified_distance_encloses_the_dense_one() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for (kernel, n, r, sigma, eta) in [
            (Kernel::exponential(0.14).unwrap(), 120usize, 5.7063, 0.12, 0.0),
            (Kernel::new(crate::model::kernel::KernelKind::Matern32, 0.3).unwrap(), 80, 0.7, 1.0, 0.4),
            (Kernel::new(crate::model::kernel::KernelKind::SquaredExponential, 0.5).unwrap(), 60, 0.2, 2.0, 0.0),
            (Kernel::exponential(1.0).unwrap(), 40, 1.0, 0.5, 2.0),
        ] {
            let spread = random_points(&mut rng, n);
            let mut v = Vec::new();
            for j in 0..n {
                let c = [0.2 + 0.6 * (j % 3) as f64 / 2.0, 0.5];
                v.extend([c[0] + rng.random_range(-1e-3..1e-3), c[1] + rng.random_range(-1e-3..1e-3)]);
            }
            let clustered = Points::new(v, 2).unwrap();
            let repeated = Points::new([0.3, 0.6].repeat(n), 2).unwrap();
            for (what, x) in [("spread", spread), ("clustered", clustered), ("repeated", repeated)] {
                let s = s_diag(&kernel.gram(&x), r * r, sigma, eta);
                let (i_max, worst) =
                    s.iter().enumerate().fold((0, f64::NEG_INFINITY), |b, (i, &v)| if v > b.1 { (i, v) } else { b });
                let dense = (4.0 * 3.0 * worst).sqrt(); // M = 1, L = 3
                let (mu, i) = mu_with_covariates(&kernel, &x, 1.0, r, sigma, eta, Draws::new(3).unwrap()).unwrap();
                assert!(mu >= dense * (1.0 - 1e-12), "{what}: {mu} < {dense}");
                // The enclosure's price: the assumed kernel-entry error (10⁻¹²)
                // times ‖z‖₁ over n entries — up to ~10⁻⁸ for repeated points.
                assert!(mu <= dense * (1.0 + 1e-7), "{what}: {mu} vs {dense}");
                let free = mu_without_covariates(1.0, r, sigma, eta, Draws::new(3).unwrap()).unwrap();
                assert!(mu <= free);
                if what == "spread" {
                    assert!((s[i] - s[i_max]).abs() <= 1e-9 * worst, "{what}: index {i} vs {i_max}");
                }
            }
        }
    }

    /// The issue's setting: n = 400 uniform sensors on [0, 1]², exponential
    /// ℓ = 0.14, r = 5.7063, σ = 0.12, δ = 400^−1.1 — ε ≤ 1.32 with the
    /// covariates, and without them.
    #[test]
    fn the_issue_setting_gives_a_small_epsilon() {
        let mut rng = ChaCha8Rng::seed_from_u64(400);
        let x = random_points(&mut rng, 400);
        let kernel = Kernel::exponential(0.14).unwrap();
        let delta = 400f64.powf(-1.1);
        let (mu, _) = mu_with_covariates(&kernel, &x, 1.0, 5.7063, 0.12, 0.0, Draws::ONE).unwrap();
        let free = mu_without_covariates(1.0, 5.7063, 0.12, 0.0, Draws::ONE).unwrap();
        let eps = crate::privacy::gaussian::epsilon_for_delta(mu, delta).unwrap();
        let eps_free = crate::privacy::gaussian::epsilon_for_delta(free, delta).unwrap();
        eprintln!("n = 400: μ = {mu:.6}, ε = {eps:.6}; without covariates μ = {free:.6}, ε = {eps_free:.6}");
        assert!(eps <= 1.32 && eps_free <= 1.32 && eps <= eps_free, "{eps} {eps_free}");
        assert!(eps > 1.0, "{eps}");
    }

    /// Calibration is certified (ε ≤ target at the value) and tight (a
    /// slightly smaller r, σ or η, or one more draw, exceeds it), with and
    /// without covariates.
    #[test]
    fn calibration_is_certified_and_tight() {
        use crate::privacy::calibrate::Solve;
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let x = random_points(&mut rng, 60);
        let base = ReleaseParams::new(Kernel::exponential(0.2).unwrap(), "box:0,1,0,1".parse().unwrap(), 60, 2.0, 0.5);
        let delta = 1e-5;
        for cov in [None, Some(&x)] {
            for solve in [Solve::Ridge, Solve::Scale, Solve::GpNoise] {
                let (v, rep) = calibrate(&base, Draws::ONE, cov, solve, 2.0, delta).unwrap();
                assert!(rep.epsilon <= 2.0, "{solve:?}: {}", rep.epsilon);
                let mut p = base.clone();
                let below = v * (1.0 - 1e-7);
                match solve {
                    Solve::Ridge => p.ridge = below,
                    Solve::Scale => p.scale = below,
                    _ => p.gp_noise = below,
                }
                let e = account(&p, Draws::ONE, cov, Some(delta), None).unwrap().epsilon;
                assert!(e > 2.0, "{solve:?} not tight: {v} gives {}, {below} gives {e}", rep.epsilon);
            }
            // One draw has ε ≈ 3.8 here: the largest L with ε ≤ 10.
            let (l, rep) = calibrate(&base, Draws::ONE, cov, Solve::Draws, 10.0, delta).unwrap();
            assert!(rep.epsilon <= 10.0 && l > 1.0, "{l}");
            let more = account(&base, Draws::new(l as u64 + 1).unwrap(), cov, Some(delta), None).unwrap().epsilon;
            assert!(more > 10.0, "draws not tight: {l}");
        }
        // A target one draw cannot meet is refused.
        let tiny =
            ReleaseParams::new(Kernel::exponential(0.2).unwrap(), "box:0,1,0,1".parse().unwrap(), 60, 0.01, 0.01);
        assert!(calibrate(&tiny, Draws::ONE, None, Solve::Draws, 0.1, delta).is_err());
    }
}
