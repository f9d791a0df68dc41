//! The whole attack: simulate, fit, score, evaluate, repeat; and sweeps.

use gpdp::{Domain, Draws, Kernel, Lemma, PrivacyReport, ReleaseParams, SensitivityChoice};
use rayon::prelude::*;
use serde::Serialize;

use super::config::MiaConfig;
use super::data::{Stream, item_rng, repeat_key};
use super::gmm::{EmOptions, Gmm2, GmmFit};
use super::latent::{LatentFit, LatentTanhMixture, fit_latent};
use super::roc::{AttackMetrics, Roc, evaluate, roc_curve};
use super::stats::{SampleSet, simulate};
use crate::error::{Error, Result};

/// The (ε, δ) guarantee of the release the attack observes: L draws of the
/// posterior of the 1-D exponential kernel on Ω = [0, 1] with V̂_n from
/// Proposition 3 with κ = e^{−1/ℓ}; Lemma B.7 (forced, as the paper) with the
/// paper's bound, the smallest valid sensitivity bound with the tight one; δ,
/// the conversion and the bound from the configuration. Reads only n, ℓ, r,
/// σ, L, δ, `conversion` and `bound`; σ = ∞ (covariance-only) is accepted here.
pub fn release_privacy(cfg: &MiaConfig) -> Result<PrivacyReport> {
    let mut p = ReleaseParams::new(
        Kernel::exponential(cfg.lengthscale)?,
        Domain::interval(0.0, 1.0)?,
        cfg.n,
        cfg.ridge,
        cfg.scale,
    );
    p.bound = cfg.bound;
    p.sensitivity = match cfg.bound {
        gpdp::BoundChoice::Paper => SensitivityChoice::Lemma(Lemma::B7),
        gpdp::BoundChoice::Tight | gpdp::BoundChoice::Joint => SensitivityChoice::Auto,
    };
    Ok(p.check()?.epsilon(cfg.draws, cfg.delta, cfg.conversion)?)
}

/// Mean and standard deviation over repetitions (population SD, ddof = 0,
/// as the authors' error bands; 0 for one repetition).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct MeanSd {
    /// Mean.
    pub mean: f64,
    /// Standard deviation (ddof = 0).
    pub sd: f64,
}

impl MeanSd {
    fn of(x: impl Iterator<Item = f64> + Clone) -> Self {
        let n = x.clone().count() as f64;
        let mean = x.clone().sum::<f64>() / n;
        let sd = (x.map(|v| (v - mean) * (v - mean)).sum::<f64>() / n).sqrt();
        MeanSd { mean, sd }
    }
}

/// Aggregates of one FPR level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct LevelSummary {
    /// The FPR level α.
    pub fpr: f64,
    /// TPR at α.
    pub tpr: MeanSd,
    /// Excess TPR − α.
    pub excess: MeanSd,
}

/// Aggregated attack metrics over repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Summary {
    /// AUC.
    pub auc: MeanSd,
    /// One entry per configured FPR level.
    pub levels: Vec<LevelSummary>,
}

impl Summary {
    fn of(ms: &[&AttackMetrics]) -> Self {
        let levels = (0..ms[0].at.len())
            .map(|k| LevelSummary {
                fpr: ms[0].at[k].fpr,
                tpr: MeanSd::of(ms.iter().map(|m| m.at[k].tpr)),
                excess: MeanSd::of(ms.iter().map(|m| m.at[k].excess)),
            })
            .collect();
        Summary { auc: MeanSd::of(ms.iter().map(|m| m.auc)), levels }
    }
}

/// The non-private benchmark's density models: the attack given the exact
/// μ_D(x₀) and v_D(x₀), i.e. the L → ∞ limit of (f̂, v̂). μ is modelled by
/// the s → 0 limit of the latent tanh mixture — a two-component Gaussian
/// mixture of φ = 2·atanh μ (|μ| < 1 by Lemma B.6 and r > 0; clipped to
/// 1 − 2⁻⁵⁰) — and log v by a two-component Gaussian mixture, exactly as
/// log v̂. Score: S = [log p_in − log p_out](φ) + [log g_in − log g_out](log v)
/// (Jacobians cancel in the ratio).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NonPrivateModels {
    /// Mixture of 2·atanh μ under H_in.
    pub mu_in: GmmFit,
    /// … under H_out.
    pub mu_out: GmmFit,
    /// Mixture of log v under H_in.
    pub logv_in: GmmFit,
    /// … under H_out.
    pub logv_out: GmmFit,
}

/// One repetition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepeatResult {
    /// Repetition index k (stream key derived from (seed, k)).
    pub repeat: usize,
    /// The attack on the release.
    pub private: AttackMetrics,
    /// The attack on the exact (μ, v).
    pub nonprivate: AttackMetrics,
    /// Latent model of f̂ under H_in.
    pub fhat_in: LatentFit,
    /// … under H_out.
    pub fhat_out: LatentFit,
    /// Mixture of log v̂ under H_in (L ≥ 2).
    pub logvhat_in: Option<GmmFit>,
    /// … under H_out.
    pub logvhat_out: Option<GmmFit>,
    /// The non-private benchmark's models.
    pub nonprivate_models: NonPrivateModels,
}

/// Fitted densities on a grid (for histograms as in the paper's Figure 6).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DensityCurve {
    /// Grid over the pooled shadow range (5% margin each side).
    pub grid: Vec<f64>,
    /// Fitted density under H_in on the grid.
    pub density_in: Vec<f64>,
    /// … under H_out.
    pub density_out: Vec<f64>,
}

/// What is kept of the first repetition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FirstRepeat {
    /// ROC of the attack on the release.
    pub roc: Roc,
    /// ROC of the non-private benchmark.
    pub roc_nonprivate: Roc,
    /// Shadow statistics under H_in (f̂, log v̂, exact μ and v).
    pub shadow_in: SampleSet,
    /// … under H_out.
    pub shadow_out: SampleSet,
    /// Fitted densities of f̂.
    pub fhat_curve: DensityCurve,
    /// Fitted densities of log v̂ (L ≥ 2).
    pub logvhat_curve: Option<DensityCurve>,
}

/// Everything [`run_mia`] computes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MiaResult {
    /// The configuration.
    pub config: MiaConfig,
    /// The release's (ε, δ) report (Lemma B.7).
    pub privacy: PrivacyReport,
    /// Per repetition.
    pub repeats: Vec<RepeatResult>,
    /// The attack on the release, aggregated.
    pub summary: Summary,
    /// The non-private benchmark, aggregated.
    pub nonprivate_summary: Summary,
    /// ROC curves, shadow samples and fitted densities of repetition 0.
    pub first: FirstRepeat,
}

/// One configuration of a [`sweep`].
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SweepRow {
    /// r.
    pub ridge: f64,
    /// σ.
    pub scale: f64,
    /// L.
    pub draws: Draws,
    /// ε(δ) of the release.
    pub epsilon: f64,
    /// The optimal Rényi order behind ε.
    pub alpha: f64,
    /// The attack on the release, aggregated.
    pub summary: Summary,
    /// The non-private benchmark, aggregated.
    pub nonprivate_summary: Summary,
    /// Per-repetition metrics of the attack on the release.
    pub repeats: Vec<AttackMetrics>,
}

/// The grid of a [`sweep`]: every combination is run (ridges outermost,
/// draws innermost).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepSpec {
    /// Ridges r.
    pub ridges: Vec<f64>,
    /// Scales σ.
    pub scales: Vec<f64>,
    /// Draws L.
    pub draws: Vec<Draws>,
}

fn em_options(cfg: &MiaConfig) -> EmOptions {
    EmOptions {
        restarts: cfg.fit.em_restarts,
        max_iterations: cfg.fit.em_max_iterations,
        variance_floor: cfg.fit.em_variance_floor,
    }
}

const MU_CLIP: f64 = 1.0 - 1.0 / (1u64 << 50) as f64;

fn latent_mu(mu: &[f64]) -> Vec<f64> {
    mu.iter().map(|m| 2.0 * m.clamp(-MU_CLIP, MU_CLIP).atanh()).collect()
}

fn log_all(v: &[f64]) -> Vec<f64> {
    v.iter().map(|v| v.max(f64::MIN_POSITIVE).ln()).collect()
}

fn gmm_ratio(x: &[f64], a: &Gmm2, b: &Gmm2) -> Vec<f64> {
    x.iter().map(|&v| a.log_density(v) - b.log_density(v)).collect()
}

fn add(a: &mut [f64], b: &[f64]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

fn check_scores(what: &str, s: &[f64]) -> Result<()> {
    if s.iter().any(|v| v.is_nan()) {
        return Err(Error::Fit(format!("{what}: the density models gave a NaN score")));
    }
    Ok(())
}

fn curve(grid_n: usize, a: &[f64], b: &[f64], f: impl Fn(&[f64]) -> (Vec<f64>, Vec<f64>)) -> DensityCurve {
    let lo = a.iter().chain(b).copied().fold(f64::INFINITY, f64::min);
    let hi = a.iter().chain(b).copied().fold(f64::NEG_INFINITY, f64::max);
    let pad = 0.05 * (hi - lo).max(1e-12);
    let (lo, hi) = (lo - pad, hi + pad);
    let grid: Vec<f64> = (0..grid_n).map(|k| lo + (hi - lo) * k as f64 / (grid_n - 1) as f64).collect();
    let (density_in, density_out) = f(&grid);
    DensityCurve { grid, density_in, density_out }
}

/// One repetition; also returns what the first repetition keeps if asked.
fn run_repeat(cfg: &MiaConfig, k: usize, keep: bool) -> Result<(RepeatResult, Option<FirstRepeat>)> {
    let key = repeat_key(cfg.seed, k as u64);
    let sims: Vec<SampleSet> = [
        (Stream::ShadowIn, cfg.n_shadow),
        (Stream::ShadowOut, cfg.n_shadow),
        (Stream::EvalIn, cfg.n_eval),
        (Stream::EvalOut, cfg.n_eval),
    ]
    .iter()
    .map(|&(s, count)| simulate(cfg, &key, s, count))
    .collect();
    let [sh_in, sh_out, ev_in, ev_out] = <[SampleSet; 4]>::try_from(sims).expect("four sets");
    let em = em_options(cfg);

    // Fits, in parallel: the latent models (themselves parallel over starts),
    // then the mixtures.
    let fit_f = |set: &SampleSet, stream: Stream| {
        let mut rng = item_rng(&key, stream, 0);
        fit_latent(&set.fhat, &cfg.fit, &mut rng)
    };
    let ((f_in, f_out), (v_fits, np_fits)) = rayon::join(
        || rayon::join(|| fit_f(&sh_in, Stream::FitIn), || fit_f(&sh_out, Stream::FitOut)),
        || {
            let v = match (&sh_in.log_vhat, &sh_out.log_vhat) {
                (Some(a), Some(b)) => Some([a, b].par_iter().map(|x| Gmm2::fit(x, &em)).collect::<Vec<_>>()),
                _ => None,
            };
            let np_in = [latent_mu(&sh_in.mu), log_all(&sh_in.var), latent_mu(&sh_out.mu), log_all(&sh_out.var)];
            let np = np_in.par_iter().map(|x| Gmm2::fit(x, &em)).collect::<Vec<_>>();
            (v, np)
        },
    );
    let (f_in, f_out) = (f_in?, f_out?);
    let (v_in, v_out) = match v_fits {
        Some(v) => {
            let mut it = v.into_iter();
            (Some(it.next().expect("two")?), Some(it.next().expect("two")?))
        }
        None => (None, None),
    };
    let mut np = np_fits.into_iter();
    let mut next = || np.next().expect("four fits");
    let npm = NonPrivateModels { mu_in: next()?, logv_in: next()?, mu_out: next()?, logv_out: next()? };

    // Scores.
    let score_private = |set: &SampleSet| -> Vec<f64> {
        let (a, b) = rayon::join(|| f_in.model.log_density(&set.fhat), || f_out.model.log_density(&set.fhat));
        let mut s: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
        if let (Some(lv), Some(gi), Some(go)) = (&set.log_vhat, &v_in, &v_out) {
            add(&mut s, &gmm_ratio(lv, &gi.model, &go.model));
        }
        s
    };
    let score_np = |set: &SampleSet| -> Vec<f64> {
        let mut s = gmm_ratio(&latent_mu(&set.mu), &npm.mu_in.model, &npm.mu_out.model);
        add(&mut s, &gmm_ratio(&log_all(&set.var), &npm.logv_in.model, &npm.logv_out.model));
        s
    };
    let (s_in, s_out) = (score_private(&ev_in), score_private(&ev_out));
    let (n_in, n_out) = (score_np(&ev_in), score_np(&ev_out));
    check_scores("attack on the release", &s_in)?;
    check_scores("attack on the release", &s_out)?;
    check_scores("non-private benchmark", &n_in)?;
    check_scores("non-private benchmark", &n_out)?;
    let rep = RepeatResult {
        repeat: k,
        private: evaluate(&s_in, &s_out, &cfg.fpr_levels),
        nonprivate: evaluate(&n_in, &n_out, &cfg.fpr_levels),
        fhat_in: f_in,
        fhat_out: f_out,
        logvhat_in: v_in,
        logvhat_out: v_out,
        nonprivate_models: npm,
    };
    let first = keep.then(|| {
        let dens = |m: &LatentTanhMixture, g: &[f64]| m.log_density(g).into_iter().map(f64::exp).collect::<Vec<_>>();
        let fhat_curve =
            curve(cfg.curve_points, &sh_in.fhat, &sh_out.fhat, |g| (dens(&f_in.model, g), dens(&f_out.model, g)));
        let logvhat_curve = match (&sh_in.log_vhat, &sh_out.log_vhat, &v_in, &v_out) {
            (Some(a), Some(b), Some(gi), Some(go)) => Some(curve(cfg.curve_points, a, b, |g| {
                (
                    g.iter().map(|&x| gi.model.log_density(x).exp()).collect(),
                    g.iter().map(|&x| go.model.log_density(x).exp()).collect(),
                )
            })),
            _ => None,
        };
        FirstRepeat {
            roc: roc_curve(&s_in, &s_out),
            roc_nonprivate: roc_curve(&n_in, &n_out),
            shadow_in: sh_in,
            shadow_out: sh_out,
            fhat_curve,
            logvhat_curve,
        }
    });
    Ok((rep, first))
}

fn check_ridge_underflow(cfg: &MiaConfig) -> Result<()> {
    let r2 = cfg.ridge * cfg.ridge;
    if !r2.is_normal() {
        return Err(crate::error::invalid("ridge r", cfg.ridge, "large enough that r² is a normal f64 (r > 1e-154)"));
    }
    Ok(())
}

fn run_core(cfg: &MiaConfig, keep_first: bool, progress: &(dyn Fn(usize) + Sync)) -> Result<MiaResult> {
    cfg.validate()?;
    check_ridge_underflow(cfg)?;
    let privacy = release_privacy(cfg)?;
    let mut repeats = Vec::with_capacity(cfg.repeats);
    let mut first = None;
    for k in 0..cfg.repeats {
        let (rep, f) = run_repeat(cfg, k, keep_first && k == 0)?;
        repeats.push(rep);
        if f.is_some() {
            first = f;
        }
        progress(1);
    }
    let priv_m: Vec<&AttackMetrics> = repeats.iter().map(|r| &r.private).collect();
    let np_m: Vec<&AttackMetrics> = repeats.iter().map(|r| &r.nonprivate).collect();
    Ok(MiaResult {
        config: cfg.clone(),
        privacy,
        summary: Summary::of(&priv_m),
        nonprivate_summary: Summary::of(&np_m),
        first: first.unwrap_or_else(|| FirstRepeat {
            roc: Roc { fpr: vec![], tpr: vec![], thresholds: vec![] },
            roc_nonprivate: Roc { fpr: vec![], tpr: vec![], thresholds: vec![] },
            shadow_in: empty_set(),
            shadow_out: empty_set(),
            fhat_curve: DensityCurve { grid: vec![], density_in: vec![], density_out: vec![] },
            logvhat_curve: None,
        }),
        repeats,
    })
}

fn empty_set() -> SampleSet {
    SampleSet { fhat: vec![], log_vhat: None, mu: vec![], var: vec![] }
}

/// Runs the membership-inference attack of docs/experiments.md §1 for `cfg.repeats`
/// independent repetitions and computes the release's ε.
///
/// `progress(k)` is called with `1` after each finished repetition (total
/// `cfg.repeats`), from the calling thread. Results are deterministic for
/// a seed, whatever the number of rayon threads.
///
/// Errors: an invalid configuration (the field is named), the accountant's
/// refusal, or a failed density fit.
pub fn run_mia(cfg: &MiaConfig, progress: &(dyn Fn(usize) + Sync)) -> Result<MiaResult> {
    run_core(cfg, true, progress)
}

/// Runs [`run_mia`] (without the first-repetition curves and samples) for
/// every (r, σ, L) of `spec`, the other fields from `base`; one row per
/// configuration, ridges outermost. Every configuration is validated
/// before any is run. `progress(1)` after each repetition of each
/// configuration (total = configurations × repeats).
///
/// For a given seed the simulated datasets depend only on the data model
/// (not on σ or L), so rows that share r share their datasets and their
/// non-private benchmark.
pub fn sweep(base: &MiaConfig, spec: &SweepSpec, progress: &(dyn Fn(usize) + Sync)) -> Result<Vec<SweepRow>> {
    Ok(sweep_shard(base, spec, crate::shard::Shard::ALL, progress)?.into_iter().map(|(_, r)| r).collect())
}

/// The configurations of a [`sweep`], in its order (its work units).
pub fn sweep_configs(base: &MiaConfig, spec: &SweepSpec) -> Result<Vec<MiaConfig>> {
    let mut cfgs = Vec::new();
    for &r in &spec.ridges {
        for &s in &spec.scales {
            for &l in &spec.draws {
                let c = MiaConfig { ridge: r, scale: s, draws: l, ..base.clone() };
                c.validate()?;
                check_ridge_underflow(&c)?;
                cfgs.push(c);
            }
        }
    }
    Ok(cfgs)
}

/// The units of [`sweep`] that `shard` owns, as (unit, row). A unit's row
/// depends only on its configuration and the master seed (every repetition's
/// streams are keyed by (seed, repetition)), so the union of the N shards'
/// rows is the unsharded sweep's (`crate::shard`).
pub fn sweep_shard(
    base: &MiaConfig,
    spec: &SweepSpec,
    shard: crate::shard::Shard,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Vec<(usize, SweepRow)>> {
    let cfgs = sweep_configs(base, spec)?;
    let owned = shard.units(cfgs.len());
    base.check_resources(owned.len())?;
    owned
        .into_iter()
        .map(|u| {
            let c = &cfgs[u];
            let res = run_core(c, false, progress)?;
            Ok((
                u,
                SweepRow {
                    ridge: c.ridge,
                    scale: c.scale,
                    draws: c.draws,
                    epsilon: res.privacy.epsilon,
                    alpha: res.privacy.alpha,
                    summary: res.summary,
                    nonprivate_summary: res.nonprivate_summary,
                    repeats: res.repeats.into_iter().map(|r| r.private).collect(),
                },
            ))
        })
        .collect()
}
