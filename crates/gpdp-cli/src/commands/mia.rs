//! `gpdp mia` and `gpdp mia sweep`: the membership-inference attack (LiRA)
//! against the release, and the paper's Figures 2, 3, 5 and 6.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use gpdp::privacy::Conversion;
use gpdp::{BoundChoice, Draws};
use gpdp_experiments::mia::{
    Design, MeanSd, MiaConfig, MiaResult, Summary, SweepRow, release_privacy, run_mia, sweep_shard,
};
use gpdp_experiments::shard::{SHARD_FILE, Shard, ShardFile, to_bytes};
use gpdp_experiments::study::{MiaSweepStudy, Study};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};

use crate::args::{parse_f64, parse_scale};
use crate::output::files::write_dir_atomically;
use crate::output::plot::{
    HistChart, HistSet, LineChart, QUALITATIVE, RGBColor, Series, SeriesStyle, histogram_charts, line_charts,
};

/// Covariate design.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DesignArg {
    /// i.i.d. Unif[0, 1] (the paper's text).
    Uniform,
    /// ⌊n/2⌋ points in [0, ½), the rest in [½, 1) (the authors' code).
    Stratified,
}

/// Model and attack settings shared by `mia` and `mia sweep`.
#[derive(Args, Debug, Clone)]
pub struct MiaBase {
    /// Dataset size n.
    #[arg(long, default_value = "10")]
    pub n: usize,
    /// Target covariate x₀ ∈ [0, 1].
    #[arg(long, value_parser = parse_f64, default_value = "0.5")]
    pub x0: f64,
    /// Target response y₀ (|y₀| ≤ 1).
    #[arg(long, value_parser = parse_f64, default_value = "1")]
    pub y0: f64,
    /// Lengthscale ℓ of the exponential kernel exp(−|x−x'|/ℓ).
    #[arg(long, value_parser = parse_f64, default_value = "1")]
    pub lengthscale: f64,
    /// Label noise M_ξ ∈ [0, 1): y = (1 − M_ξ)·f_step(x) + ξ, ξ ~ U[−M_ξ, M_ξ].
    #[arg(long = "label-noise", value_parser = parse_f64, default_value = "0")]
    pub label_noise: f64,
    /// Covariate design.
    #[arg(long, value_enum, default_value = "uniform")]
    pub design: DesignArg,
    /// Shadow datasets per hypothesis (density fitting).
    #[arg(long, default_value = "10000")]
    pub shadow: usize,
    /// Evaluation datasets per hypothesis.
    #[arg(long, default_value = "10000")]
    pub eval: usize,
    /// Independent repetitions (seeds) for mean ± sd.
    #[arg(long, default_value = "10")]
    pub repeats: usize,
    /// Master seed.
    #[arg(long, default_value = "0")]
    pub seed: u64,
    /// δ for the ε printed beside the attack (Lemma B.7, κ = exp(−1/ℓ)).
    #[arg(long, value_parser = parse_f64, default_value = "0.05")]
    pub delta: f64,
    /// RDP → (ε, δ) conversion.
    #[arg(long, default_value = "improved")]
    pub conversion: Conversion,
    /// The accountant's proven bound for the printed ε: tight (signed
    /// covariance term, smallest valid sensitivity bound, bounded mean —
    /// docs/proofs/tight-accountant.md) or paper (Theorem 3.1 with Lemma B.7).
    #[arg(long, value_name = "tight|paper", default_value = "tight")]
    pub bound: BoundChoice,
    /// Refuse to start a run estimated to take longer than this many hours
    /// (the estimate is printed before the run; raise the limit to run it).
    #[arg(long = "max-hours", value_name = "H", value_parser = parse_f64, default_value = "1")]
    pub max_hours: f64,
}

/// Simulated draws (normal variates, with their share of the dataset's
/// posterior) per second and thread, measured on one core of the
/// development machine (docs/results.md) and rounded down.
const DRAWS_PER_SECOND: f64 = 5e7;

/// Seconds per simulated dataset and record beyond the draws (sampling
/// the dataset and its exact posterior at x₀), per thread.
const SECONDS_PER_RECORD: f64 = 2e-8;

/// Seconds per repetition and dataset for fitting the density models and
/// scoring (independent of L), per thread.
const SECONDS_PER_DATASET_FIT: f64 = 5e-5;

/// The estimated wall-clock time of `configs` configurations of the
/// attack `cfg` on `threads` threads: each repetition simulates 2·(shadow +
/// eval) datasets of n records and L draws each, then fits and scores.
pub fn estimate_seconds(cfg: &MiaConfig, configs: usize, threads: usize) -> f64 {
    let datasets = 2.0 * (cfg.n_shadow as f64 + cfg.n_eval as f64);
    let per_dataset =
        cfg.draws.as_f64() / DRAWS_PER_SECOND + cfg.n as f64 * SECONDS_PER_RECORD + SECONDS_PER_DATASET_FIT;
    configs as f64 * cfg.repeats as f64 * datasets * per_dataset / threads.max(1) as f64
}

/// Prints the estimate of a run on stderr and refuses it above `--max-hours`;
/// returns the estimate, in words, for the progress bar.
fn check_estimate(what: &str, cfg: &MiaConfig, configs: usize, max_hours: f64) -> Result<String> {
    if !(max_hours.is_finite() && max_hours > 0.0) {
        bail!("--max-hours {max_hours} must be a finite number of hours > 0");
    }
    let threads = rayon::current_num_threads();
    let secs = estimate_seconds(cfg, configs, threads);
    let datasets = 2 * (cfg.n_shadow + cfg.n_eval);
    let work = format!(
        "{configs} configuration(s) × {} repetition(s) × {datasets} simulated datasets × (n = {} records + L = {} draws)",
        cfg.repeats, cfg.n, cfg.draws
    );
    // NaN (a degenerate estimate) is refused too.
    if secs.is_nan() || secs > max_hours * 3600.0 {
        bail!(
            "{what} is estimated at ≈ {} on {threads} thread(s) ({work}), above --max-hours {max_hours}: use fewer draws (--draws), datasets (--shadow, --eval) or repetitions (--repeats), or raise --max-hours",
            human_duration(secs)
        );
    }
    let estimate = human_duration(secs);
    eprintln!("{what}: estimated ≈ {estimate} on {threads} thread(s) ({work})");
    Ok(estimate)
}

/// "3.2 s", "12 min", "4.5 h", "3.1e2 days".
fn human_duration(s: f64) -> String {
    if !s.is_finite() {
        "forever".into()
    } else if s < 60.0 {
        format!("{s:.1} s")
    } else if s < 3600.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 48.0 * 3600.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.3} days", s / 86400.0)
    }
}

fn design(d: DesignArg) -> Design {
    match d {
        DesignArg::Uniform => Design::Uniform,
        DesignArg::Stratified => Design::Stratified,
    }
}

impl MiaBase {
    fn config(&self) -> MiaConfig {
        MiaConfig {
            n: self.n,
            lengthscale: self.lengthscale,
            label_noise: self.label_noise,
            target_x: self.x0,
            target_y: self.y0,
            design: design(self.design),
            n_shadow: self.shadow,
            n_eval: self.eval,
            repeats: self.repeats,
            seed: self.seed,
            delta: self.delta,
            conversion: self.conversion,
            bound: self.bound,
            ..MiaConfig::default()
        }
    }
}

/// Arguments of `gpdp mia`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, allow_negative_numbers = true)]
#[command(
    long_about = "A LiRA-style membership-inference attack on the release of L posterior draws at the target x₀ (the paper's §4, App. C): does the training set contain z₀ = (x₀, y₀)?\n\nShadow datasets under H_in (z₀ plus n−1 fresh records) and H_out (n fresh records) train density models of the released statistics f̂ (a latent tanh mixture) and log v̂ (a Gaussian mixture); the likelihood-ratio score is evaluated on independent evaluation sets. Also reported: the non-private benchmark (the same attack given the exact posterior mean and variance at x₀) and the ε of the release (Lemma B.7)."
)]
pub struct MiaArgs {
    #[command(subcommand)]
    pub sweep: Option<MiaCmd>,
    #[command(flatten)]
    pub base: MiaBase,
    /// Effective ridge r.
    #[arg(long, value_parser = parse_f64, default_value = "0.1")]
    pub ridge: f64,
    /// Kernel scale σ.
    #[arg(long, value_parser = parse_f64, default_value = "0.5")]
    pub scale: f64,
    /// Number of released draws L.
    #[arg(long, default_value = "3")]
    pub draws: Draws,
    /// Print the results as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Write the ROC curves (CSV) and the shadow histograms with fitted densities (Figure 6) here.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Replace a non-empty --out directory.
    #[arg(long)]
    pub force: bool,
}

/// `gpdp mia` subcommands.
#[derive(Subcommand, Debug)]
pub enum MiaCmd {
    /// Run the attack over lists of ridges, scales and draws; write a CSV of
    /// all results and the figures (2 and 5: attack vs ε, ε vs r; 3 and 5
    /// right: attack and ε vs L).
    Sweep(SweepArgs),
}

/// Arguments of `gpdp mia sweep`.
#[derive(Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct SweepArgs {
    #[command(flatten)]
    pub base: MiaBase,
    /// Ridges r, comma-separated.
    #[arg(long, value_name = "LIST", default_value = "0.1")]
    pub ridge: String,
    /// Scales σ, comma-separated (σ = inf is drawn in the ε-vs-r figure only).
    #[arg(long, value_name = "LIST", default_value = "0.5")]
    pub scale: String,
    /// Draws L, comma-separated.
    #[arg(long, value_name = "LIST", default_value = "1")]
    pub draws: String,
    /// Output directory (results.csv and figures; with --shard, the shard's
    /// shard.cbor).
    #[arg(long, value_name = "DIR", default_value = "results/mia-sweep")]
    pub out: PathBuf,
    /// Replace a non-empty output directory.
    #[arg(long)]
    pub force: bool,
    /// Run only shard I of N (0 ≤ I < N) of the configurations (r × σ × L,
    /// round robin) and write its results to --out/shard.cbor; `gpdp merge`
    /// combines the N shards into exactly the unsharded outputs
    /// (scripts/slurm/README.md).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
}

fn floats(s: &str, flag: &str) -> Result<Vec<f64>> {
    let parse = if flag == "scale" { parse_scale } else { parse_f64 };
    let v: Vec<f64> =
        s.split(',').map(|t| parse(t).map_err(|e| anyhow::anyhow!("--{flag}: {e}"))).collect::<Result<_>>()?;
    if v.is_empty() {
        bail!("--{flag} is empty");
    }
    Ok(v)
}

fn ms(m: &MeanSd) -> Value {
    json!({"mean": m.mean, "sd": m.sd})
}

fn level(s: &Summary, fpr: f64) -> Option<&gpdp_experiments::mia::LevelSummary> {
    s.levels.iter().find(|l| (l.fpr - fpr).abs() < 1e-12)
}

fn summary_json(s: &Summary) -> Value {
    let mut tpr = serde_json::Map::new();
    let mut excess = serde_json::Map::new();
    for l in &s.levels {
        tpr.insert(format!("{}", l.fpr), ms(&l.tpr));
        excess.insert(format!("{}", l.fpr), ms(&l.excess));
    }
    json!({"auc": ms(&s.auc), "tpr": tpr, "excess_tpr": excess})
}

fn progress_bar(total: usize, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(total as u64);
    bar.set_style(ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {elapsed} (eta {eta})").unwrap());
    bar.set_message(what.to_string());
    bar
}

pub fn run(a: MiaArgs) -> Result<()> {
    if let Some(MiaCmd::Sweep(s)) = a.sweep {
        return run_sweep(s);
    }
    let cfg = MiaConfig { ridge: a.ridge, scale: a.scale, draws: a.draws, ..a.base.config() };
    cfg.validate()?;
    if let Some(dir) = &a.out {
        crate::output::files::check_out_dir(dir, a.force)?;
    }
    let estimate = check_estimate("this attack", &cfg, 1, a.base.max_hours)?;
    let bar = progress_bar(cfg.repeats, &format!("mia repeats (≈ {estimate} estimated)"));
    let res = run_mia(&cfg, &|k| bar.inc(k as u64))?;
    bar.finish_and_clear();
    let mut out = summary_json(&res.summary);
    out["epsilon"] = json!(res.privacy.epsilon);
    out["delta"] = json!(res.privacy.delta);
    out["conversion"] = json!(cfg.conversion.name());
    out["nonprivate"] = summary_json(&res.nonprivate_summary);
    out["config"] = json!({
        "n": cfg.n, "x0": cfg.target_x, "y0": cfg.target_y, "lengthscale": cfg.lengthscale, "ridge": cfg.ridge,
        "scale": cfg.scale, "draws": cfg.draws, "label_noise": cfg.label_noise,
        "design": format!("{:?}", cfg.design).to_lowercase(), "shadow": cfg.n_shadow, "eval": cfg.n_eval,
        "repeats": cfg.repeats, "seed": cfg.seed,
    });
    if let Some(dir) = &a.out {
        write_dir_atomically(dir, a.force, |d| write_single(d, &res))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print_single(&res);
        if let Some(dir) = &a.out {
            println!("wrote roc.csv, shadow_histograms.png, result.json into {}", dir.display());
        }
    }
    Ok(())
}

fn print_single(res: &MiaResult) {
    let c = &res.config;
    println!(
        "LiRA on L = {} draw(s) at x₀ = {}: n = {}, ℓ = {}, r = {}, σ = {}, M_ξ = {}, {} design; {} shadow + {} eval datasets per hypothesis, {} repeat(s)",
        c.draws,
        c.target_x,
        c.n,
        c.lengthscale,
        c.ridge,
        c.scale,
        c.label_noise,
        format!("{:?}", c.design).to_lowercase(),
        c.n_shadow,
        c.n_eval,
        c.repeats
    );
    println!(
        "  guarantee of the release: ε = {:.4} at δ = {} ({} conversion, {} bound, Δ̂ from {})",
        res.privacy.epsilon, res.privacy.delta, c.conversion, c.bound, res.privacy.components[0].sensitivity_source
    );
    println!("                      {:>18} {:>18}", "release", "non-private");
    println!("  AUC                 {:>18} {:>18}", fmt_ms(&res.summary.auc), fmt_ms(&res.nonprivate_summary.auc));
    for l in &res.summary.levels {
        let np = level(&res.nonprivate_summary, l.fpr);
        println!(
            "  TPR @ FPR {:<5}     {:>18} {:>18}",
            l.fpr,
            fmt_ms(&l.tpr),
            np.map(|x| fmt_ms(&x.tpr)).unwrap_or_default()
        );
        println!(
            "  excess TPR @ {:<5}  {:>18} {:>18}",
            l.fpr,
            fmt_ms(&l.excess),
            np.map(|x| fmt_ms(&x.excess)).unwrap_or_default()
        );
    }
}

fn fmt_ms(m: &MeanSd) -> String {
    format!("{:.4} ± {:.4}", m.mean, m.sd)
}

fn write_single(dir: &Path, res: &MiaResult) -> Result<()> {
    let mut w = csv::Writer::from_path(dir.join("roc.csv"))?;
    w.write_record(["attack", "fpr", "tpr"])?;
    for (name, roc) in [("release", &res.first.roc), ("nonprivate", &res.first.roc_nonprivate)] {
        for (f, t) in roc.fpr.iter().zip(&roc.tpr) {
            w.write_record([name.to_string(), f.to_string(), t.to_string()])?;
        }
    }
    w.flush()?;
    // Figure 6: shadow histograms with fitted densities.
    let red = RGBColor(214, 39, 40);
    let blue = RGBColor(31, 119, 180);
    let mut charts = vec![HistChart {
        title: format!(
            "f-hat (mean of the L = {} draws) at x₀, r = {}, σ = {}",
            res.config.draws, res.config.ridge, res.config.scale
        ),
        x_label: "f-hat".into(),
        bins: 80,
        sets: vec![
            HistSet {
                label: "in (z₀ ∈ D)".into(),
                samples: res.first.shadow_in.fhat.clone(),
                density: Some((res.first.fhat_curve.grid.clone(), res.first.fhat_curve.density_in.clone())),
                color: Some(red),
            },
            HistSet {
                label: "out".into(),
                samples: res.first.shadow_out.fhat.clone(),
                density: Some((res.first.fhat_curve.grid.clone(), res.first.fhat_curve.density_out.clone())),
                color: Some(blue),
            },
        ],
        range: None,
    }];
    if let (Some(cin), Some(vin), Some(vout)) =
        (&res.first.logvhat_curve, &res.first.shadow_in.log_vhat, &res.first.shadow_out.log_vhat)
    {
        charts.push(HistChart {
            title: "log v-hat (sample variance of the draws / σ²) at x₀".into(),
            x_label: "log v-hat".into(),
            bins: 80,
            sets: vec![
                HistSet {
                    label: "in".into(),
                    samples: vin.clone(),
                    density: Some((cin.grid.clone(), cin.density_in.clone())),
                    color: Some(red),
                },
                HistSet {
                    label: "out".into(),
                    samples: vout.clone(),
                    density: Some((cin.grid.clone(), cin.density_out.clone())),
                    color: Some(blue),
                },
            ],
            range: None,
        });
    }
    histogram_charts(&dir.join("shadow_histograms.png"), &charts, (640, 440))?;
    std::fs::write(
        dir.join("result.json"),
        serde_json::to_vec_pretty(&json!({
            "summary": summary_json(&res.summary),
            "nonprivate": summary_json(&res.nonprivate_summary),
            "epsilon": res.privacy.epsilon,
            "privacy": res.privacy,
        }))?,
    )?;
    Ok(())
}

/// The sweep's settings from its flags (the one mapping of the flags of
/// `mia sweep` onto [`MiaSweepStudy`]).
fn sweep_study(s: &SweepArgs) -> Result<MiaSweepStudy> {
    let ridges = floats(&s.ridge, "ridge")?;
    let scales = floats(&s.scale, "scale")?;
    let draws: Vec<Draws> = s
        .draws
        .split(',')
        .map(|t| t.parse::<Draws>().map_err(|e| anyhow::anyhow!("--draws: {e}")))
        .collect::<Result<_>>()?;
    if !scales.iter().any(|v| v.is_finite()) {
        bail!("--scale needs at least one finite σ for the attack (σ = inf is only drawn in the ε-vs-r figure)");
    }
    let b = &s.base;
    Ok(MiaSweepStudy {
        n: b.n,
        x0: b.x0,
        y0: b.y0,
        lengthscale: b.lengthscale,
        label_noise: b.label_noise,
        design: design(b.design),
        shadow: b.shadow,
        eval: b.eval,
        repeats: b.repeats,
        seed: b.seed,
        delta: b.delta,
        conversion: b.conversion,
        bound: b.bound,
        ridges,
        scales,
        draws,
    })
}

fn run_sweep(s: SweepArgs) -> Result<()> {
    let st = sweep_study(&s)?;
    let (base, spec) = (st.base(), st.spec());
    let shard = s.shard.unwrap_or(Shard::ALL);
    let configs = st.units()?;
    let units = configs.len();
    crate::output::files::check_out_dir(&s.out, s.force)?;
    // The slowest configuration (most draws) bounds each of this shard's.
    let mine = shard.units(units);
    let estimate = match mine.iter().map(|&u| &configs[u]).max_by_key(|c| c.draws.get()) {
        Some(worst) => check_estimate("this sweep", worst, mine.len(), s.base.max_hours)?,
        None => "0 s".into(),
    };
    let total = mine.len() * base.repeats;
    let bar = progress_bar(total, &format!("mia sweep (≈ {estimate} estimated)"));
    let t0 = std::time::Instant::now();
    let rows = sweep_shard(&base, &spec, shard, &|k| bar.inc(k as u64))?;
    bar.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    if let Some(sh) = s.shard {
        let n = rows.len();
        let file = ShardFile::new(Study::MiaSweep(st), sh, units, rows);
        let bytes = to_bytes(&file)?;
        write_dir_atomically(&s.out, s.force, |d| Ok(std::fs::write(d.join(SHARD_FILE), &bytes)?))?;
        println!(
            "mia sweep shard {sh}: {n} of {units} configurations × {} repeats in {secs:.1} s; wrote {}",
            base.repeats,
            s.out.join(SHARD_FILE).display()
        );
        return Ok(());
    }
    let rows: Vec<SweepRow> = rows.into_iter().map(|(_, r)| r).collect();
    write_sweep(&s.out, s.force, &st, &rows)?;
    println!(
        "mia sweep: {} configurations × {} repeats in {secs:.1} s; wrote results.csv and figures into {}",
        rows.len(),
        base.repeats,
        s.out.display()
    );
    Ok(())
}

/// Writes the outputs of a merged `mia sweep` (`gpdp merge`): those of the
/// unsharded run with the same settings.
pub fn write_merged(st: &MiaSweepStudy, rows: &[SweepRow], out: &Path, force: bool) -> Result<()> {
    write_sweep(out, force, st, rows)?;
    println!("merged {} configurations of mia sweep into {}", rows.len(), out.display());
    Ok(())
}

/// results.csv, the figures and sweep.json of a sweep (a function of the
/// study's settings and the rows only, so that merged shards give the same bytes).
fn write_sweep(out: &Path, force: bool, st: &MiaSweepStudy, rows: &[SweepRow]) -> Result<()> {
    let base = &st.base();
    let (ridges, scales_all, draws) = (&st.ridges, &st.scales, &st.draws);
    let scales = &st.spec().scales;
    write_dir_atomically(out, force, |dir| {
        let mut w = csv::Writer::from_path(dir.join("results.csv"))?;
        let mut header = ["ridge", "scale", "draws", "epsilon", "alpha", "auc_mean", "auc_sd"]
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>();
        for l in &base.fpr_levels {
            for what in ["tpr", "excess_tpr"] {
                header.push(format!("{what}_at_{l}_mean"));
                header.push(format!("{what}_at_{l}_sd"));
            }
        }
        header.extend(["nonprivate_auc_mean".to_string(), "nonprivate_auc_sd".to_string()]);
        for l in &base.fpr_levels {
            header.push(format!("nonprivate_excess_tpr_at_{l}_mean"));
            header.push(format!("nonprivate_excess_tpr_at_{l}_sd"));
        }
        w.write_record(&header)?;
        for r in rows {
            let mut rec =
                vec![r.ridge, r.scale, r.draws.as_f64(), r.epsilon, r.alpha, r.summary.auc.mean, r.summary.auc.sd];
            for l in &base.fpr_levels {
                let x = level(&r.summary, *l).expect("level");
                rec.extend([x.tpr.mean, x.tpr.sd, x.excess.mean, x.excess.sd]);
            }
            rec.extend([r.nonprivate_summary.auc.mean, r.nonprivate_summary.auc.sd]);
            for l in &base.fpr_levels {
                let x = level(&r.nonprivate_summary, *l).expect("level");
                rec.extend([x.excess.mean, x.excess.sd]);
            }
            w.write_record(rec.iter().map(|v| v.to_string()))?;
        }
        w.flush()?;
        figures(dir, base, rows, ridges, scales_all, draws)?;
        // No timings here: the folder is a function of the flags (a merged
        // sharded run is byte-identical to the unsharded one).
        std::fs::write(
            dir.join("sweep.json"),
            serde_json::to_vec_pretty(&json!({
                "ridges": ridges, "scales": scales, "draws": draws, "n": base.n, "lengthscale": base.lengthscale,
                "delta": base.delta, "conversion": base.conversion.name(), "design": format!("{:?}", base.design).to_lowercase(),
                "shadow": base.n_shadow, "eval": base.n_eval, "repeats": base.repeats, "seed": base.seed,
            }))?,
        )?;
        Ok(())
    })
}

fn series(label: String, xs: Vec<f64>, ys: Vec<f64>, err: Option<Vec<f64>>, style: SeriesStyle, k: usize) -> Series {
    Series { label, xs, ys, err, style, color: Some(QUALITATIVE[k % QUALITATIVE.len()]) }
}

fn chart(
    title: String,
    x: &str,
    y: &str,
    log_x: bool,
    log_y: bool,
    series: Vec<Series>,
    hlines: Vec<(f64, String)>,
) -> LineChart {
    LineChart {
        title,
        x_label: x.into(),
        y_label: y.into(),
        log_x,
        log_y,
        series,
        hlines,
        x_range: None,
        y_range: None,
        x_ticks: None,
    }
}

fn figures(
    dir: &Path,
    base: &MiaConfig,
    rows: &[SweepRow],
    ridges: &[f64],
    scales_all: &[f64],
    draws: &[Draws],
) -> Result<()> {
    let tag = format!("n = {}, ℓ = {}, δ = {}, {} conv.", base.n, base.lengthscale, base.delta, base.conversion);
    // Figures 2 / 5 (left): excess TPR vs ε, one series per σ (points over r), per L.
    if ridges.len() > 1 {
        for &l in draws {
            let mut charts = Vec::new();
            for &fpr in &base.fpr_levels {
                let mut ss = Vec::new();
                for (k, &s) in scales_all.iter().filter(|s| s.is_finite()).enumerate() {
                    let pts: Vec<&SweepRow> = rows.iter().filter(|r| r.scale == s && r.draws == l).collect();
                    let xs = pts.iter().map(|r| r.epsilon).collect();
                    let ys = pts.iter().map(|r| level(&r.summary, fpr).map_or(f64::NAN, |x| x.excess.mean)).collect();
                    let es = pts.iter().map(|r| level(&r.summary, fpr).map_or(f64::NAN, |x| x.excess.sd)).collect();
                    ss.push(series(format!("σ = {s}"), xs, ys, Some(es), SeriesStyle::LinePoints, k));
                }
                charts.push(chart(
                    format!("excess TPR @ FPR {fpr} vs ε (L = {l}; points over r)"),
                    "ε (log)",
                    "TPR − FPR",
                    true,
                    false,
                    ss,
                    vec![(0.0, "no advantage".into())],
                ));
            }
            line_charts(&dir.join(format!("fig2_attack_vs_epsilon_L{l}.png")), &charts, (620, 440))?;
        }
        // Figure 2 (right): ε vs r for each σ (incl. ∞), dense in r, with the ε = 10 guide.
        let (r_lo, r_hi) =
            (ridges.iter().copied().fold(f64::INFINITY, f64::min), ridges.iter().copied().fold(0.0, f64::max));
        let grid: Vec<f64> = (0..=120).map(|i| r_lo * (r_hi / r_lo).powf(i as f64 / 120.0)).collect();
        let mut charts = Vec::new();
        for &l in draws {
            let mut ss = Vec::new();
            let mut sc: Vec<f64> = scales_all.to_vec();
            if !sc.iter().any(|s| s.is_infinite()) {
                sc.push(f64::INFINITY);
            }
            for (k, &s) in sc.iter().enumerate() {
                let ys: Vec<f64> = grid
                    .iter()
                    .map(|&r| {
                        let c = MiaConfig { ridge: r, scale: s, draws: l, ..base.clone() };
                        release_privacy(&c).map_or(f64::NAN, |p| p.epsilon)
                    })
                    .collect();
                let label =
                    if s.is_infinite() { "σ = ∞ (covariance only)".to_string() } else { format!("σ = {s}") };
                ss.push(series(
                    label,
                    grid.clone(),
                    ys,
                    None,
                    if s.is_infinite() { SeriesStyle::Dashed } else { SeriesStyle::Line },
                    k,
                ));
            }
            charts.push(chart(
                format!("ε vs r (L = {l}; {tag})"),
                "r (log)",
                "ε (log)",
                true,
                true,
                ss,
                vec![(10.0, "ε = 10".into())],
            ));
        }
        line_charts(&dir.join("fig2_epsilon_vs_ridge.png"), &charts, (620, 440))?;
    }
    // Figures 3 / 5 (right): attack and ε vs L, per (r, σ), with the non-private benchmark.
    if draws.len() > 1 {
        for &r in ridges {
            for &s in scales_all.iter().filter(|s| s.is_finite()) {
                let pts: Vec<&SweepRow> = rows.iter().filter(|x| x.ridge == r && x.scale == s).collect();
                let ls: Vec<f64> = pts.iter().map(|x| x.draws.as_f64()).collect();
                let mut charts = Vec::new();
                for &fpr in &base.fpr_levels {
                    let ys = pts.iter().map(|x| level(&x.summary, fpr).map_or(f64::NAN, |v| v.excess.mean)).collect();
                    let es = pts.iter().map(|x| level(&x.summary, fpr).map_or(f64::NAN, |v| v.excess.sd)).collect();
                    let np =
                        pts.first().and_then(|x| level(&x.nonprivate_summary, fpr)).map_or(f64::NAN, |v| v.excess.mean);
                    charts.push(chart(
                        format!("excess TPR @ FPR {fpr} vs L (r = {r}, σ = {s})"),
                        "draws L (log)",
                        "TPR − FPR",
                        true,
                        false,
                        vec![
                            series("release".into(), ls.clone(), ys, Some(es), SeriesStyle::LinePoints, 0),
                            series(
                                format!("non-private benchmark ({np:.3})"),
                                ls.clone(),
                                vec![np; ls.len()],
                                None,
                                SeriesStyle::Dashed,
                                7,
                            ),
                        ],
                        vec![],
                    ));
                }
                let eps: Vec<f64> = pts.iter().map(|x| x.epsilon).collect();
                let linear: Vec<f64> = ls.iter().map(|l| eps[0] * l / ls[0]).collect();
                charts.push(chart(
                    format!("ε vs L (r = {r}, σ = {s}; {tag})"),
                    "draws L (log)",
                    "ε (log)",
                    true,
                    true,
                    vec![
                        series("ε (optimised α)".into(), ls.clone(), eps, None, SeriesStyle::LinePoints, 3),
                        series("linear in L".into(), ls.clone(), linear, None, SeriesStyle::Dashed, 5),
                    ],
                    vec![],
                ));
                line_charts(&dir.join(format!("fig3_vs_draws_r{r}_sigma{s}.png")), &charts, (560, 420))?;
            }
        }
    }
    Ok(())
}
