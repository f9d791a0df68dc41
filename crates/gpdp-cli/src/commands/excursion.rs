//! `gpdp excursion 1d`: the paper's 1-D excursion-set study (§5, App. D,
//! Tables 1–3), one study per (n, M_ξ).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use gpdp::BoundChoice;
use gpdp::privacy::Conversion;
use gpdp::privacy::{PUBLISHED_LABEL, SensitivityConstants};
use gpdp_experiments::excursion::pairs1d::TargetRejection;
use gpdp_experiments::excursion::search::{Evaluated, SearchResult};
use gpdp_experiments::excursion::study1d::{Stage, Study1dConfig, Study1dResult, run_study1d};
use gpdp_experiments::excursion::summary1d::{
    Quartiles, Selection, Summary1d, format_epsilon, format_theta, markdown_table,
};
use gpdp_experiments::shard::{SHARD_FILE, Shard, ShardFile, to_bytes};
use gpdp_experiments::study::{Excursion1dStudy, Study};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::args::{accountant_words, parse_f64, study_bound};
use crate::output::files::write_dir_atomically;

/// Excursion-set utility studies.
#[derive(Subcommand, Debug)]
pub enum ExcursionCmd {
    /// The 1-D study (the paper's Tables 1–3): hyperparameters chosen on
    /// synthetic (D, f*) pairs, unconstrained and under ε < ε₀, then the
    /// IoU of the one-path private release.
    #[command(name = "1d", long_about = ABOUT_1D)]
    OneD(Box<Excursion1dArgs>),
    /// The 2-D study (the paper's Table 4, Figures 7–8): plume fields
    /// observed by n sensors, hyperparameters chosen on synthetic worlds,
    /// smoothed one-path private releases.
    #[command(name = "2d", long_about = super::excursion2d::ABOUT)]
    TwoD(Box<super::excursion2d::Excursion2dArgs>),
    /// The real-data study (the paper's App. D.2, Figure 4): Greater London
    /// leasehold flats from HM Land Registry Price Paid Data, hexagon
    /// medians, hyperparameters chosen on the selection year, private
    /// sample paths released for the release year.
    #[command(name = "real", long_about = super::realdata::ABOUT)]
    Real(Box<super::realdata::RealArgs>),
}

const ABOUT_1D: &str = "The paper's 1-D excursion-set study (§5, App. D; Tables 1–3).

For each (n, M_ξ) in --n × --noise: pairs (D, f*) on Ω = [0, 1] with f* ~ GP(0, exp(−|x−x'|/ℓ_gen)) drawn exactly on a mesh of m points plus the covariates, rescaled to sup-norm 1 − M_ξ, n covariates Unif[0, 1], y = f*(x) + Unif[−M_ξ, M_ξ] (so |y| ≤ M_Y = 1), truth s* = 1{f* ≥ 0}. θ* minimises the mean integrated BCE of p_D = Φ(μ_D/(σ√k_D)) over the main pairs; θ_priv minimises it under ε_L(θ) < ε₀ (Theorem 3.1 with Lemma B.7, V̂ of Prop. 3 with κ = exp(−1/ℓ)). The cutoff C of {p_D ≥ C} is chosen on separate validation pairs. Per main pair: BCE, d_eff, IoU of {p_D ≥ C} at θ*, and the IoU of B released L-path sets at θ_priv (exact posterior draws).

Hyperparameters here are chosen on synthetic pairs, as the paper's protocol requires (§6): the privacy guarantee assumes θ was fixed independently of the private data a release is fitted to. Use these results to pick θ for a release on public or simulated data only.

--sensitivity-constants published divides the Lemma B.7 sensitivity bound by √2, as the authors' code that produced the published tables does. It reproduces the published tables; it is NOT a proven guarantee, every output made with it says so, and `gpdp release` cannot use it.

Outputs in --out: summary.md (the paper's columns, median [IQR] over pairs), summary.csv, pairs_<config>.csv (per-pair rows for θ* and θ_priv), search_<config>.csv (every candidate evaluated, with mean BCE and ε) and selected.json (the selected hyperparameters and settings).";

/// Arguments of `gpdp excursion 1d` (defaults: the paper's Tables 1–2).
#[derive(Args, Debug, Clone)]
#[command(allow_negative_numbers = true)]
pub struct Excursion1dArgs {
    /// Noise bounds M_ξ ∈ [0, 1), comma-separated: one study per value
    /// (Tables 1–2: 0.1,0.3,0.5,0.6; Table 3: 0.5).
    #[arg(long, value_name = "LIST", default_value = "0.1,0.3,0.5,0.6")]
    pub noise: String,
    /// Training-set sizes n = |D|, comma-separated: one study per value
    /// (Tables 1–2: 100; Table 3: 50,100,200,400).
    #[arg(long, value_name = "LIST", default_value = "100")]
    pub n: String,
    /// Main (D, f*) pairs: the search objective and the reported medians.
    #[arg(long, default_value = "1000")]
    pub pairs: usize,
    /// Separate validation pairs, used only to choose the cutoffs C (and c).
    #[arg(long = "validation-pairs", default_value = "1000")]
    pub validation_pairs: usize,
    /// Monte Carlo repetitions B of the release per pair (the 1-path IoU
    /// mean and SD).
    #[arg(long = "draws-per-pair", value_name = "B", default_value = "50")]
    pub draws_per_pair: usize,
    /// Paths per release L (ε composes over L; for L > 1 the release is the
    /// vote set with cutoff c chosen on the validation pairs).
    #[arg(long, value_name = "L", default_value = "1")]
    pub draws: gpdp::Draws,
    /// Privacy budget ε₀: θ_priv must have ε < ε₀ (strict).
    #[arg(long = "epsilon-max", value_name = "ε₀", value_parser = parse_f64, default_value = "10")]
    pub epsilon_max: f64,
    /// δ of the (ε, δ) statement.
    #[arg(long, value_name = "δ", value_parser = parse_f64, default_value = "0.005")]
    pub delta: f64,
    /// RDP → (ε, δ) conversion: `paper` (Mironov 2017, as the paper's
    /// tables) or `improved` (Canonne–Kamath–Steinke / Balle et al.).
    #[arg(long, default_value = "paper")]
    pub conversion: Conversion,
    /// Constants of Lemma B.7: `proven` (4·M_Y·√Φ_n, the paper's lemma) or
    /// `published` (the authors' code, 2√2·M_Y·√Φ_n: reproduces the
    /// published tables; NOT a proven guarantee).
    #[arg(long = "sensitivity-constants", value_name = "proven|published", default_value = "proven")]
    pub sensitivity_constants: SensitivityConstants,
    /// The accountant's proven bound: `tight` (the default; signed
    /// covariance term, the smallest valid sensitivity bound —
    /// docs/proofs/tight-accountant.md) or `paper` (Theorem 3.1 with the
    /// paper's lemma, as the paper's tables). The published constants belong
    /// to the paper's bound: with them the default is `paper`.
    #[arg(long, value_name = "tight|paper")]
    pub bound: Option<BoundChoice>,
    /// Mesh points m on [0, 1] (0 and 1 included; trapezoid weights).
    #[arg(long = "mesh-points", default_value = "800")]
    pub mesh_points: usize,
    /// Lengthscale ℓ_gen of the GP that generates f*.
    #[arg(long = "generating-lengthscale", value_name = "ℓ_gen", value_parser = parse_f64, default_value = "1")]
    pub generating_lengthscale: f64,
    /// Redraw degenerate targets as the authors' `--target-reject` option
    /// (not in the paper): f̃ is redrawn (covariates fixed) until {f* ≥ 0}
    /// has volume in --target-volume, at most --target-max-components
    /// components and mean component width ≥ --target-min-width.
    #[arg(long = "target-reject")]
    pub target_reject: bool,
    /// Accepted volume range of the true excursion set (with --target-reject).
    #[arg(long = "target-volume", value_name = "LO,HI", default_value = "0.1,0.9")]
    pub target_volume: String,
    /// Most connected components of the true set (with --target-reject).
    #[arg(long = "target-max-components", default_value = "13")]
    pub target_max_components: usize,
    /// Smallest mean component width of the true set (with --target-reject).
    #[arg(long = "target-min-width", value_parser = parse_f64, default_value = "0.05")]
    pub target_min_width: f64,
    /// Coarse grid of lengthscales ℓ.
    #[arg(long, value_name = "LIST", default_value = "0.08,0.13,0.2,0.25,0.35,0.5,0.6,0.75,1")]
    pub lengthscales: String,
    /// Coarse grid of ridges r.
    #[arg(long, value_name = "LIST", default_value = "0.05,0.1,0.2,0.5,1,2,5")]
    pub ridges: String,
    /// Coarse grid of scales σ (σ = 0: the posterior-mean set, never private).
    #[arg(long, value_name = "LIST", default_value = "0,0.1,0.5,1,2,5")]
    pub scales: String,
    /// Refinement rounds of the unconstrained search (the paper: 2).
    #[arg(long, default_value = "2")]
    pub rounds: usize,
    /// Refinement rounds of the constrained search (the paper: 2; the
    /// authors' later script ran 3).
    #[arg(long = "private-rounds", default_value = "2")]
    pub private_rounds: usize,
    /// Anchors per refinement round: the best k candidates so far (feasible
    /// ones for the constrained search).
    #[arg(long = "top-k", default_value = "3")]
    pub top_k: usize,
    /// Refinement factors for ℓ around an anchor.
    #[arg(long = "ell-factors", value_name = "LIST", default_value = "0.7,0.85,1,1.2,1.5")]
    pub ell_factors: String,
    /// Refinement factors for r around an anchor.
    #[arg(long = "ridge-factors", value_name = "LIST", default_value = "0.4,0.55,0.7,0.85,1,1.2,1.5,2,3,4")]
    pub ridge_factors: String,
    /// Refinement factors for σ around an anchor with σ > 0.
    #[arg(long = "scale-factors", value_name = "LIST", default_value = "0.4,0.55,0.7,0.85,1,1.2,1.5,2,3,4")]
    pub scale_factors: String,
    /// σ values tried around an anchor with σ = 0.
    #[arg(
        long = "zero-scale-values",
        value_name = "LIST",
        default_value = "0,0.025,0.05,0.075,0.1,0.15,0.2,0.3,0.5,0.75"
    )]
    pub zero_scale_values: String,
    /// Points of the grid linspace(0, 1, k) over which C is chosen.
    #[arg(long = "cutoff-points", default_value = "101")]
    pub cutoff_points: usize,
    /// Base seed (pair j: seed + 10007·j; validation, draws: offsets of 10⁷).
    #[arg(long, default_value = "0")]
    pub seed: u64,
    /// Output directory (written atomically).
    #[arg(long, value_name = "DIR", default_value = "results/excursion-1d")]
    pub out: PathBuf,
    /// Replace a non-empty output directory.
    #[arg(long)]
    pub force: bool,
    /// Run only shard I of N (0 ≤ I < N) of the studies (n × M_ξ, round
    /// robin) and write its results to --out/shard.cbor; `gpdp merge`
    /// combines the N shards into exactly the unsharded outputs
    /// (scripts/slurm/README.md).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<gpdp_experiments::shard::Shard>,
}

pub fn run(cmd: ExcursionCmd) -> Result<()> {
    match cmd {
        ExcursionCmd::OneD(a) => run_1d(*a),
        ExcursionCmd::TwoD(a) => super::excursion2d::run(*a),
        ExcursionCmd::Real(a) => super::realdata::run(*a),
    }
}

fn parse_list(s: &str, flag: &str) -> Result<Vec<f64>> {
    let v: Vec<f64> = s
        .split(',')
        .map(|t| parse_f64(t).map_err(anyhow::Error::msg))
        .collect::<Result<_>>()
        .with_context(|| format!("--{flag} '{s}'"))?;
    if v.is_empty() {
        bail!("--{flag} is empty");
    }
    Ok(v)
}

fn parse_sizes(s: &str) -> Result<Vec<usize>> {
    s.split(',')
        .map(|t| t.trim().parse::<usize>().map_err(|_| anyhow::anyhow!("--n '{s}': '{t}' is not a whole number")))
        .collect()
}

/// The study's settings from its flags (the one mapping of the flags of
/// `excursion 1d` onto [`Excursion1dStudy`]).
fn study(a: &Excursion1dArgs) -> Result<Excursion1dStudy> {
    let target_rejection = if a.target_reject {
        let v = parse_list(&a.target_volume, "target-volume")?;
        if v.len() != 2 {
            bail!("--target-volume '{}': expected LO,HI", a.target_volume);
        }
        Some(TargetRejection {
            min_volume: v[0],
            max_volume: v[1],
            max_components: a.target_max_components,
            min_mean_width: a.target_min_width,
            ..TargetRejection::default()
        })
    } else {
        None
    };
    Ok(Excursion1dStudy {
        sizes: parse_sizes(&a.n)?,
        noises: parse_list(&a.noise, "noise")?,
        pairs: a.pairs,
        validation_pairs: a.validation_pairs,
        draws_per_pair: a.draws_per_pair,
        draws: a.draws,
        epsilon_max: a.epsilon_max,
        delta: a.delta,
        conversion: a.conversion,
        sensitivity_constants: a.sensitivity_constants,
        bound: study_bound(a.bound, a.sensitivity_constants)?,
        mesh_points: a.mesh_points,
        generating_lengthscale: a.generating_lengthscale,
        target_rejection,
        lengthscales: parse_list(&a.lengthscales, "lengthscales")?,
        ridges: parse_list(&a.ridges, "ridges")?,
        scales: parse_list(&a.scales, "scales")?,
        rounds: a.rounds,
        private_rounds: a.private_rounds,
        top_k: a.top_k,
        ell_factors: parse_list(&a.ell_factors, "ell-factors")?,
        ridge_factors: parse_list(&a.ridge_factors, "ridge-factors")?,
        scale_factors: parse_list(&a.scale_factors, "scale-factors")?,
        zero_scale_values: parse_list(&a.zero_scale_values, "zero-scale-values")?,
        cutoff_points: a.cutoff_points,
        seed: a.seed,
    })
}

/// The study's units, each checked (the message names the unit).
fn configs(st: &Excursion1dStudy) -> Result<Vec<Study1dConfig>> {
    let cfgs = st.units();
    for cfg in &cfgs {
        cfg.validate().with_context(|| format!("n = {}, M_ξ = {}", cfg.n, cfg.noise))?;
    }
    Ok(cfgs)
}

fn tag(cfg: &Study1dConfig) -> String {
    format!("n{}_noise{}", cfg.n, cfg.noise)
}

/// The value of the `sensitivity_constants` column of every CSV.
fn constants_cell(c: SensitivityConstants) -> String {
    match c.label() {
        Some(l) => format!("{} ({l})", c.name()),
        None => c.name().to_string(),
    }
}

fn stage_name(s: Stage) -> &'static str {
    match s {
        Stage::Pairs => "generating pairs",
        Stage::UnconstrainedSearch => "search, unconstrained",
        Stage::PrivateSearch => "search, ε < ε₀",
        Stage::Cutoffs => "cutoffs (validation)",
        Stage::Evaluation => "evaluation",
    }
}

fn run_1d(a: Excursion1dArgs) -> Result<()> {
    let st = study(&a)?;
    let cfgs = configs(&st)?;
    // Before the studies (hours): the output must be writable, and empty unless --force.
    crate::output::files::check_out_dir(&a.out, a.force)?;
    if let Some(l) = a.sensitivity_constants.label() {
        eprintln!("note: --sensitivity-constants published {l}.");
    }
    let shard = a.shard.unwrap_or(Shard::ALL);
    let t0 = std::time::Instant::now();
    let mut results = Vec::new();
    for i in shard.units(cfgs.len()) {
        let cfg = &cfgs[i];
        let bar = ProgressBar::new(1);
        bar.set_style(
            ProgressStyle::with_template("{prefix} {msg:24} [{bar:30}] {pos}/{len} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_prefix(format!("[{}/{}] n = {}, M_ξ = {}", i + 1, cfgs.len(), cfg.n, cfg.noise));
        let progress = |stage: Stage, done: usize, total: usize| {
            bar.set_message(stage_name(stage));
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        };
        let r = run_study1d(cfg, &progress).with_context(|| format!("study n = {}, M_ξ = {}", cfg.n, cfg.noise))?;
        bar.finish_and_clear();
        let s = &r.summary;
        eprintln!(
            "n = {}, M_ξ = {}: θ* = {} ε = {}; θ_priv = {} ε = {:.3}; median released-set IoU {:.3} ({:.0} s)",
            cfg.n,
            cfg.noise,
            format_theta(&s.unconstrained.theta),
            format_epsilon(s.unconstrained.epsilon),
            format_theta(&s.private.theta),
            s.private.epsilon,
            s.path_iou_mean.median,
            t0.elapsed().as_secs_f64()
        );
        results.push((i, r));
    }
    if let Some(sh) = a.shard {
        let n = results.len();
        let outcomes = results.into_iter().map(|(i, r)| (i, r.outcome())).collect();
        let file = ShardFile::new(Study::Excursion1d(st), sh, cfgs.len(), outcomes);
        let bytes = to_bytes(&file)?;
        write_dir_atomically(&a.out, a.force, |d| Ok(std::fs::write(d.join(SHARD_FILE), &bytes)?))?;
        println!(
            "excursion 1d shard {sh}: {n} of {} studies in {:.0} s; wrote {}",
            cfgs.len(),
            t0.elapsed().as_secs_f64(),
            a.out.join(SHARD_FILE).display()
        );
        return Ok(());
    }
    let results: Vec<Study1dResult> = results.into_iter().map(|(_, r)| r).collect();
    write_1d(&a.out, a.force, &st, &results)?;
    println!("wrote the 1-D excursion study into {} ({:.0} s)", a.out.display(), t0.elapsed().as_secs_f64());
    Ok(())
}

/// Every output of the 1-D study into `out` (a function of the study's
/// settings and the results only, so that merged shards give the same bytes).
fn write_1d(out: &Path, force: bool, st: &Excursion1dStudy, results: &[Study1dResult]) -> Result<()> {
    write_dir_atomically(out, force, |dir| {
        for r in results {
            write_pairs(dir, r)?;
            write_search(dir, r)?;
        }
        write_summary_csv(dir, results)?;
        write_summary_md(dir, results, st)?;
        write_json(dir, results, st)?;
        Ok(())
    })
}

/// Writes the outputs of a merged `excursion 1d` (`gpdp merge`): those of
/// the unsharded run with the same settings.
pub fn write_merged(st: &Excursion1dStudy, results: &[Study1dResult], out: &Path, force: bool) -> Result<()> {
    write_1d(out, force, st, results)?;
    println!("merged {} studies of excursion 1d into {}", results.len(), out.display());
    Ok(())
}

fn num(v: f64) -> String {
    if v.is_nan() { String::new() } else { v.to_string() }
}

fn write_pairs(dir: &Path, r: &Study1dResult) -> Result<()> {
    let path = dir.join(format!("pairs_{}.csv", tag(&r.config)));
    let mut w = csv::Writer::from_path(&path).with_context(|| format!("cannot write {}", path.display()))?;
    w.write_record([
        "pair",
        "theta",
        "lengthscale",
        "ridge",
        "scale",
        "bce",
        "d_eff",
        "set_iou",
        "path_iou_mean",
        "path_iou_sd",
        "relative_bce_increase",
        "relative_iou_gap",
        "sensitivity_constants",
    ])?;
    let constants = constants_cell(r.config.constants);
    let s = &r.summary;
    for (j, (u, p)) in r.unconstrained_rows.iter().zip(&r.private_rows).enumerate() {
        for (name, sel, row, derived) in [
            ("unconstrained", &s.unconstrained, u, None),
            ("private", &s.private, p, Some((p.bce / u.bce - 1.0, 1.0 - p.path_iou_mean / u.set_iou))),
        ] {
            let t = sel.theta;
            w.write_record([
                j.to_string(),
                name.to_string(),
                num(t.lengthscale),
                num(t.ridge),
                num(t.scale),
                num(row.bce),
                num(row.d_eff),
                num(row.set_iou),
                num(row.path_iou_mean),
                num(row.path_iou_sd),
                derived.map_or(String::new(), |d| num(d.0)),
                derived.map_or(String::new(), |d| num(d.1)),
                constants.clone(),
            ])?;
        }
    }
    w.flush()?;
    Ok(())
}

fn write_search(dir: &Path, r: &Study1dResult) -> Result<()> {
    let path = dir.join(format!("search_{}.csv", tag(&r.config)));
    let mut w = csv::Writer::from_path(&path).with_context(|| format!("cannot write {}", path.display()))?;
    w.write_record([
        "search",
        "lengthscale",
        "ridge",
        "scale",
        "mean_bce",
        "epsilon",
        "feasible",
        "sensitivity_constants",
    ])?;
    let constants = constants_cell(r.config.constants);
    let e0 = r.config.epsilon_max;
    let rows = |name: &str, s: &SearchResult, w: &mut csv::Writer<std::fs::File>| -> Result<()> {
        for e in &s.evaluated {
            let Evaluated { candidate: c, objective, epsilon } = *e;
            w.write_record([
                name.to_string(),
                num(c.lengthscale),
                num(c.ridge),
                num(c.scale),
                num(objective),
                num(epsilon),
                (epsilon < e0).to_string(),
                constants.clone(),
            ])?;
        }
        Ok(())
    };
    rows("unconstrained", &r.unconstrained_search, &mut w)?;
    rows("private", &r.private_search, &mut w)?;
    w.flush()?;
    Ok(())
}

fn quartile_cells(q: &Quartiles) -> [String; 3] {
    [num(q.q25), num(q.median), num(q.q75)]
}

fn write_summary_csv(dir: &Path, results: &[Study1dResult]) -> Result<()> {
    let mut w = csv::Writer::from_path(dir.join("summary.csv"))?;
    let mut head: Vec<String> = [
        "n",
        "noise",
        "nsr",
        "draws",
        "epsilon_max",
        "delta",
        "conversion",
        "sensitivity_constants",
        "lengthscale_unconstrained",
        "ridge_unconstrained",
        "scale_unconstrained",
        "mean_bce_unconstrained",
        "epsilon_unconstrained",
        "set_cutoff_unconstrained",
        "lengthscale_private",
        "ridge_private",
        "scale_private",
        "mean_bce_private",
        "epsilon_private",
        "set_cutoff_private",
        "vote_cutoff_private",
    ]
    .map(String::from)
    .to_vec();
    for col in [
        "d_eff_unconstrained",
        "d_eff_private",
        "relative_bce_increase",
        "iou_unconstrained",
        "path_iou_mean",
        "path_iou_sd",
        "relative_iou_gap",
    ] {
        for q in ["q25", "median", "q75"] {
            head.push(format!("{col}_{q}"));
        }
    }
    w.write_record(&head)?;
    for r in results {
        let s = &r.summary;
        let (u, p) = (&s.unconstrained, &s.private);
        let mut row = vec![
            s.n.to_string(),
            num(s.noise),
            num(s.nsr),
            s.draws.to_string(),
            num(s.epsilon_max),
            num(r.config.delta),
            r.config.conversion.name().to_string(),
            constants_cell(s.constants),
            num(u.theta.lengthscale),
            num(u.theta.ridge),
            num(u.theta.scale),
            num(u.mean_bce),
            num(u.epsilon),
            num(u.set_cutoff),
            num(p.theta.lengthscale),
            num(p.theta.ridge),
            num(p.theta.scale),
            num(p.mean_bce),
            num(p.epsilon),
            num(p.set_cutoff),
            num(p.vote_cutoff),
        ];
        for q in [
            &s.d_eff_unconstrained,
            &s.d_eff_private,
            &s.relative_bce_increase,
            &s.iou_unconstrained,
            &s.path_iou_mean,
            &s.path_iou_sd,
            &s.relative_iou_gap,
        ] {
            row.extend(quartile_cells(q));
        }
        w.write_record(&row)?;
    }
    w.flush()?;
    Ok(())
}

fn theta_cell(s: &Selection) -> String {
    format_theta(&s.theta)
}

fn write_summary_md(dir: &Path, results: &[Study1dResult], a: &Excursion1dStudy) -> Result<()> {
    let summaries: Vec<Summary1d> = results.iter().map(|r| r.summary.clone()).collect();
    let with_n = summaries.windows(2).any(|w| w[0].n != w[1].n);
    let mut md = String::from("# 1-D excursion-set study (the paper's §5, App. D)\n\n");
    let bound = a.bound;
    if a.sensitivity_constants.label().is_some() {
        md += &format!(
            "**Accountant: {}.** Every ε below is smaller than the proven bound.\n\n",
            accountant_words(bound, a.sensitivity_constants, "B.7")
        );
    } else {
        md += &format!("Accountant: {}.\n\n", accountant_words(bound, a.sensitivity_constants, "B.7"));
    }
    md += &format!(
        "Median [interquartile range] over {} (D, f*) pairs; n = |D|; δ = {}, L = {}, ε₀ = {} (feasible: ε < ε₀), \
         {} conversion; the {} IoU is the mean over B = {} released draws per pair. Hyperparameters were chosen \
         on synthetic pairs, as the paper's protocol requires (§6); the cutoffs on {} separate validation pairs.\n\n",
        a.pairs,
        a.delta,
        a.draws,
        a.epsilon_max,
        a.conversion.name(),
        if a.draws == gpdp::Draws::ONE { "1-path".to_string() } else { format!("{}-path", a.draws) },
        a.draws_per_pair,
        a.validation_pairs,
    );
    if let Some(t) = &a.target_rejection {
        md += &format!(
            "Targets were redrawn until {{f* ≥ 0}} had volume in [{},{}], ≤ {} components and mean width ≥ {} \
             (the authors' `--target-reject`; not in the paper's text).\n\n",
            t.min_volume, t.max_volume, t.max_components, t.min_mean_width
        );
    }
    md += &markdown_table(&summaries, with_n);
    md += "\n## Selected hyperparameters θ = (ℓ, r, σ)\n\n";
    md +=
        "| \\|D\\| | M_ξ | θ* | mean BCE θ* | ε(θ*) | C(θ*) | θ_priv | mean BCE θ_priv | ε(θ_priv) | C(θ_priv) | c |\n";
    md += "|---|---|---|---|---|---|---|---|---|---|---|\n";
    for s in &summaries {
        let (u, p) = (&s.unconstrained, &s.private);
        md += &format!(
            "| {} | {} | {} | {:.5} | {} | {} | {} | {:.5} | {:.3} | {} | {} |\n",
            s.n,
            s.noise,
            theta_cell(u),
            u.mean_bce,
            format_epsilon(u.epsilon),
            u.set_cutoff,
            theta_cell(p),
            p.mean_bce,
            p.epsilon,
            p.set_cutoff,
            p.vote_cutoff,
        );
    }
    std::fs::write(dir.join("summary.md"), md)?;
    Ok(())
}

fn finite(v: f64) -> serde_json::Value {
    if v.is_finite() { json!(v) } else { json!(v.to_string()) }
}

fn selection_json(s: &Selection) -> serde_json::Value {
    json!({
        "lengthscale": s.theta.lengthscale,
        "ridge": s.theta.ridge,
        "scale": s.theta.scale,
        "mean_bce": finite(s.mean_bce),
        "epsilon": finite(s.epsilon),
        "set_cutoff_C": s.set_cutoff,
        "set_cutoff_validation_iou": finite(s.set_cutoff_validation_iou),
        "vote_cutoff_c": s.vote_cutoff,
        "vote_cutoff_validation_iou": finite(s.vote_cutoff_validation_iou),
    })
}

fn write_json(dir: &Path, results: &[Study1dResult], a: &Excursion1dStudy) -> Result<()> {
    let studies: Vec<serde_json::Value> = results
        .iter()
        .map(|r| {
            let s = &r.summary;
            json!({
                "n": s.n,
                "noise": s.noise,
                "nsr": s.nsr,
                "unconstrained": selection_json(&s.unconstrained),
                "private": selection_json(&s.private),
                "evaluated_candidates": {
                    "unconstrained": r.unconstrained_search.evaluated.len(),
                    "private": r.private_search.evaluated.len(),
                },
            })
        })
        .collect();
    let v = json!({
        "study": "excursion 1d (the paper's §5, App. D)",
        "hyperparameter_selection": "chosen on synthetic (D, f*) pairs, as the paper's protocol requires (§6)",
        "sensitivity_constants": a.sensitivity_constants.name(),
        "label": a.sensitivity_constants.label().unwrap_or("proven constants"),
        "bound": a.bound.name(),
        "accountant": accountant_words(a.bound, a.sensitivity_constants, "B.7"),
        "not_a_proven_guarantee": a.sensitivity_constants.label() == Some(PUBLISHED_LABEL),
        "settings": {
            "pairs": a.pairs,
            "validation_pairs": a.validation_pairs,
            "mesh_points": a.mesh_points,
            "generating_lengthscale": a.generating_lengthscale,
            "level": results.first().map_or(0.0, |r| r.config.level),
            "clip": results.first().map_or(1e-6, |r| r.config.clip),
            "target_rejection": results.first().and_then(|r| r.config.target_rejection),
            "draws_per_pair_B": a.draws_per_pair,
            "draws_L": a.draws,
            "epsilon_max": a.epsilon_max,
            "delta": a.delta,
            "conversion": a.conversion.name(),
            "lengthscales": a.lengthscales,
            "ridges": a.ridges,
            "scales": a.scales,
            "rounds": a.rounds,
            "private_rounds": a.private_rounds,
            "top_k": a.top_k,
            "cutoff_points": a.cutoff_points,
            "seed": a.seed,
        },
        "studies": studies,
    });
    std::fs::write(dir.join("selected.json"), serde_json::to_vec_pretty(&v)?)?;
    Ok(())
}
