//! `gpdp excursion 2d`: the paper's 2-D excursion-set study (Table 4,
//! Figures 7–8).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use gpdp::postprocess::excursion::excursion_probability;
use gpdp::postprocess::smoothing::gaussian_smooth;
use gpdp::privacy::Conversion;
use gpdp::{Draws, Kernel, Posterior, ReleaseRng};
use gpdp_experiments::excursion::study2d::{
    Study2dConfig, Study2dResult, Summary2d, path_query, run as run_study, summarise, unit_grid, worlds,
};
use gpdp_experiments::shard::{SHARD_FILE, Shard, ShardFile, to_bytes};
use gpdp_experiments::study::{Excursion2dStudy, Study};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::args::{accountant_words, parse_f64, study_bound};
use crate::output::files::write_dir_atomically;
use crate::output::plot::{Contour, HeatPanel, Palette, RGBColor, heatmap_figure};
use gpdp::BoundChoice;
use gpdp::postprocess::Grid2;

/// The long help of `gpdp excursion 2d`.
pub const ABOUT: &str = "The paper's 2-D excursion-set study (App. D.1, Table 4, Figures 7–8).\n\nSynthetic worlds: a plume field f* (two anisotropic Gaussian plumes through a sigmoid), n sensors uniform on [0,1]², y = (1 − M_ξ)f*(x) + ξ. Hyperparameters are chosen on synthetic search worlds — never on the data a release is made from — unconstrained and under ε < ε₀ (Lemma B.1, κ = exp(−√2/ℓ), δ = n^−1.1); Table 4 statistics come from separate evaluation worlds.";

/// Arguments of `gpdp excursion 2d`.
#[derive(Args, Debug, Clone)]
pub struct Excursion2dArgs {
    /// Noise half-widths M_ξ (one study each), comma-separated.
    #[arg(long, value_name = "LIST", default_value = "0.1,0.3,0.5")]
    pub noise: String,
    /// Sensors n.
    #[arg(long, default_value = "400")]
    pub n: usize,
    /// Worlds used by the hyperparameter search.
    #[arg(long = "search-worlds", default_value = "30")]
    pub search_worlds: usize,
    /// Separate worlds used to choose the probability cutoff C.
    #[arg(long = "validation-worlds", default_value = "30")]
    pub validation_worlds: usize,
    /// Evaluation worlds for Table 4.
    #[arg(long = "eval-worlds", default_value = "1000")]
    pub eval_worlds: usize,
    /// Evaluation grid points per axis (BCE and p_D).
    #[arg(long = "eval-grid", default_value = "80")]
    pub eval_grid: usize,
    /// Grid points per axis for the search's BCE (cheaper than --eval-grid).
    #[arg(long = "search-grid", default_value = "40")]
    pub search_grid: usize,
    /// Path grid points per axis (private one-path releases).
    #[arg(long = "path-grid", default_value = "40")]
    pub path_grid: usize,
    /// Private paths per evaluation world (the one-path IoU mean and SD).
    #[arg(long = "paths-per-world", default_value = "50")]
    pub paths_per_world: Draws,
    /// Gaussian smoothing of released paths, in path-grid cells (post-processing).
    #[arg(long = "smooth", value_parser = parse_f64, default_value = "2")]
    pub smooth: f64,
    /// Privacy constraint ε < ε₀.
    #[arg(long = "epsilon-max", value_parser = parse_f64, default_value = "10")]
    pub epsilon_max: f64,
    /// δ (default n^−1.1).
    #[arg(long, value_parser = parse_f64)]
    pub delta: Option<f64>,
    /// RDP → (ε, δ) conversion (the paper's tables use `paper`).
    #[arg(long, default_value = "paper")]
    pub conversion: Conversion,
    /// Sensitivity constants: proven (Lemma B.1, default) or published (the authors' code: Δ/√2).
    /// `published` reproduces the published tables; it is NOT a proven guarantee.
    #[arg(long = "sensitivity-constants", default_value = "proven")]
    pub constants: SensitivityConstants,
    /// The accountant's proven bound: `tight` (the default; signed
    /// covariance term, the smallest valid sensitivity bound —
    /// docs/proofs/tight-accountant.md) or `paper` (Theorem 3.1 with the
    /// paper's lemma, as the paper's tables). The published constants belong
    /// to the paper's bound: with them the default is `paper`.
    #[arg(long, value_name = "tight|paper")]
    pub bound: Option<BoundChoice>,
    /// Refinement rounds of the search.
    #[arg(long, default_value = "2")]
    pub rounds: usize,
    /// Anchors per refinement round.
    #[arg(long = "top-k", default_value = "3")]
    pub top_k: usize,
    /// Plume sigmoid steepness γ.
    #[arg(long, value_parser = parse_f64, default_value = "5")]
    pub gamma: f64,
    /// Plume sigmoid centre quantile.
    #[arg(long, value_parser = parse_f64, default_value = "0.65")]
    pub quantile: f64,
    /// Master seed.
    #[arg(long, default_value = "0")]
    pub seed: u64,
    /// Output directory.
    #[arg(long, value_name = "DIR", default_value = "results/excursion-2d")]
    pub out: PathBuf,
    /// Replace a non-empty output directory.
    #[arg(long)]
    pub force: bool,
    /// Run only shard I of N (0 ≤ I < N) of the studies (one per M_ξ, round
    /// robin) and write its results to --out/shard.cbor; `gpdp merge`
    /// combines the N shards into exactly the unsharded outputs
    /// (scripts/slurm/README.md).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
}

fn parse_list(s: &str) -> Result<Vec<f64>> {
    s.split(',').map(|t| parse_f64(t).map_err(anyhow::Error::msg)).collect()
}

/// (q25, median, q75) as the 1-D study's quartiles, to share its paper-style formatting.
fn q((q25, median, q75): (f64, f64, f64)) -> Quartiles {
    Quartiles { q25, median, q75 }
}

use gpdp::privacy::{PUBLISHED_LABEL as LABEL_PUBLISHED, SensitivityConstants};
use gpdp_experiments::excursion::summary1d::{Quartiles, format_d_eff, format_epsilon, format_iou, format_percent};

/// The study's settings from its flags (the one mapping of the flags of
/// `excursion 2d` onto [`Excursion2dStudy`]).
fn study(a: &Excursion2dArgs) -> Result<Excursion2dStudy> {
    Ok(Excursion2dStudy {
        noises: parse_list(&a.noise)?,
        n: a.n,
        search_worlds: a.search_worlds,
        validation_worlds: a.validation_worlds,
        eval_worlds: a.eval_worlds,
        eval_grid: a.eval_grid,
        search_grid: a.search_grid,
        path_grid: a.path_grid,
        paths_per_world: a.paths_per_world,
        smooth: a.smooth,
        epsilon_max: a.epsilon_max,
        delta: a.delta.unwrap_or((a.n as f64).powf(-1.1)),
        conversion: a.conversion,
        sensitivity_constants: a.constants,
        bound: study_bound(a.bound, a.constants)?,
        rounds: a.rounds,
        top_k: a.top_k,
        gamma: a.gamma,
        quantile: a.quantile,
        seed: a.seed,
    })
}

pub fn run(a: Excursion2dArgs) -> Result<()> {
    let st = study(&a)?;
    // Every study is checked (fields, memory, work) before anything is written.
    let configs: Vec<Study2dConfig> = st.units();
    for cfg in &configs {
        cfg.validate().with_context(|| format!("M_ξ = {}", cfg.noise))?;
    }
    let shard = a.shard.unwrap_or(Shard::ALL);
    let t0 = std::time::Instant::now();
    // The output folder exists (as a partial folder, removed on interruption)
    // while the studies run, as every long command's does.
    write_dir_atomically(&a.out, a.force, |dir| {
        let mut results = Vec::new();
        for u in shard.units(configs.len()) {
            let cfg = &configs[u];
            let noise = cfg.noise;
            let bar = ProgressBar::new(1);
            bar.set_style(ProgressStyle::with_template("{prefix} {msg:28} [{bar:30}] {pos}/{len} {elapsed}").unwrap());
            bar.set_prefix(format!("M_ξ = {noise}"));
            let progress = |stage: &str, done: usize, total: usize| {
                bar.set_message(stage.to_string());
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            };
            let result = run_study(cfg, &progress).with_context(|| format!("M_ξ = {noise}"))?;
            bar.finish_and_clear();
            eprintln!(
                "M_ξ = {noise}: θ* = {:?}, θ_priv = {:?} (ε = {:.3}) ({:.0} s so far)",
                result.unconstrained.best.candidate,
                result.private.best.candidate,
                result.private.best.epsilon,
                t0.elapsed().as_secs_f64()
            );
            results.push((u, result));
        }
        match a.shard {
            Some(sh) => {
                let file = ShardFile::new(Study::Excursion2d(st.clone()), sh, configs.len(), results);
                Ok(std::fs::write(dir.join(SHARD_FILE), to_bytes(&file)?)?)
            }
            None => write_2d(dir, &st, &configs, &results.into_iter().map(|(_, r)| r).collect::<Vec<_>>()),
        }
    })?;
    match a.shard {
        Some(sh) => println!(
            "excursion 2d shard {sh}: {} of {} studies in {:.0} s; wrote {}",
            shard.units(configs.len()).len(),
            configs.len(),
            t0.elapsed().as_secs_f64(),
            a.out.join(SHARD_FILE).display()
        ),
        None => println!("wrote the 2-D study into {} ({:.0} s)", a.out.display(), t0.elapsed().as_secs_f64()),
    }
    Ok(())
}

/// Every output of the 2-D study into `dir` (a function of the study's
/// settings and the results only, so that merged shards give the same bytes).
fn write_2d(dir: &Path, a: &Excursion2dStudy, configs: &[Study2dConfig], results: &[Study2dResult]) -> Result<()> {
    let published = a.sensitivity_constants == SensitivityConstants::Published;
    let mut summaries = Vec::new();
    for (cfg, result) in configs.iter().zip(results.iter()) {
        let s = summarise(cfg, result);
        write_study(dir, cfg, result, &s, published)?;
        figure(dir, cfg, result)?;
        summaries.push((cfg.clone(), result.clone(), s));
    }
    write_summary(dir, &summaries, published, a)
}

/// Writes the outputs of a merged `excursion 2d` (`gpdp merge`): those of
/// the unsharded run with the same settings.
pub fn write_merged(st: &Excursion2dStudy, results: &[Study2dResult], out: &Path, force: bool) -> Result<()> {
    let configs = st.units();
    write_dir_atomically(out, force, |dir| write_2d(dir, st, &configs, results))?;
    println!("merged {} studies of excursion 2d into {}", configs.len(), out.display());
    Ok(())
}

fn write_study(dir: &Path, cfg: &Study2dConfig, r: &Study2dResult, s: &Summary2d, published: bool) -> Result<()> {
    let tag = format!("noise{}", cfg.noise);
    for (name, res) in [("unconstrained", &r.unconstrained), ("private", &r.private)] {
        let mut w = csv::Writer::from_path(dir.join(format!("search_{name}_{tag}.csv")))?;
        w.write_record(["lengthscale", "ridge", "scale", "mean_bce", "epsilon"])?;
        for e in &res.evaluated {
            let c = e.candidate;
            w.write_record([c.lengthscale, c.ridge, c.scale, e.objective, e.epsilon].map(|v| v.to_string()))?;
        }
        w.flush()?;
    }
    let mut w = csv::Writer::from_path(dir.join(format!("worlds_{tag}.csv")))?;
    for row in &r.rows {
        w.serialize(row)?;
    }
    w.flush()?;
    let sel = json!({
        "noise": cfg.noise,
        "n": cfg.n,
        "delta": cfg.delta,
        "epsilon_max": cfg.epsilon_max,
        "conversion": cfg.conversion.name(),
        "sensitivity_constants": if published { format!("published ({LABEL_PUBLISHED})") } else { "proven".to_string() },
        "bound": cfg.bound.name(),
        "accountant": accountant_words(cfg.bound, cfg.constants, "B.1"),
        "unconstrained": r.unconstrained.best,
        "private": r.private.best,
        "cutoff_C": r.cutoff,
        "summary": s,
    });
    std::fs::write(dir.join(format!("selected_{tag}.json")), serde_json::to_vec_pretty(&sel)?)?;
    Ok(())
}

fn write_summary(
    dir: &Path,
    all: &[(Study2dConfig, Study2dResult, Summary2d)],
    published: bool,
    a: &Excursion2dStudy,
) -> Result<()> {
    let mut w = csv::Writer::from_path(dir.join("summary.csv"))?;
    w.write_record([
        "noise",
        "nsr",
        "epsilon_unconstrained",
        "epsilon_private",
        "lengthscale_unc",
        "ridge_unc",
        "scale_unc",
        "lengthscale_priv",
        "ridge_priv",
        "scale_priv",
        "cutoff_C",
        "deff_unc_median",
        "deff_unc_q25",
        "deff_unc_q75",
        "deff_priv_median",
        "deff_priv_q25",
        "deff_priv_q75",
        "rel_bce_median",
        "rel_bce_q25",
        "rel_bce_q75",
        "iou_unc_median",
        "iou_unc_q25",
        "iou_unc_q75",
        "iou_path_mean_median",
        "iou_path_mean_q25",
        "iou_path_mean_q75",
        "iou_path_sd_median",
        "iou_path_sd_q25",
        "iou_path_sd_q75",
        "rel_iou_gap_median",
        "rel_iou_gap_q25",
        "rel_iou_gap_q75",
        "constants",
    ])?;
    let mut md = String::new();
    md += &format!(
        "# 2-D excursion study (Table 4)\n\nn = {}, ε₀ = {}, δ = n^−1.1, L = 1, {} conversion, accountant: **{}**; {} search worlds ({}×{} search grid) / {} validation / {} evaluation worlds, {}×{} evaluation grid, {} paths per world on a {}×{} grid smoothed by {} cells.\n\n",
        a.n,
        a.epsilon_max,
        a.conversion,
        accountant_words(a.bound, a.sensitivity_constants, "B.1"),
        a.search_worlds,
        a.search_grid,
        a.search_grid,
        a.validation_worlds,
        a.eval_worlds,
        a.eval_grid,
        a.eval_grid,
        a.paths_per_world,
        a.path_grid,
        a.path_grid,
        a.smooth
    );
    md += "| M_ξ | NSR | ε unconstr. | d_eff unconstr. | d_eff ε<ε₀ | rel. BCE incr. | IoU unconstr. | 1-path IoU mean | 1-path IoU SD | rel. IoU gap | θ* (ℓ, r, σ) | θ_priv (ℓ, r, σ), ε |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (cfg, r, s) in all {
        let (u, p) = (r.unconstrained.best.candidate, r.private.best.candidate);
        let nsr = cfg.noise / (1.0 - cfg.noise);
        let mut rec = vec![
            cfg.noise,
            nsr,
            s.epsilon_unconstrained,
            s.epsilon_private,
            u.lengthscale,
            u.ridge,
            u.scale,
            p.lengthscale,
            p.ridge,
            p.scale,
            r.cutoff,
        ];
        for t in [
            s.deff_unconstrained,
            s.deff_private,
            s.relative_bce_increase,
            s.iou_unconstrained,
            s.iou_path_mean,
            s.iou_path_sd,
            s.relative_iou_gap,
        ] {
            rec.extend([t.1, t.0, t.2]);
        }
        let mut fields: Vec<String> = rec.iter().map(|v| v.to_string()).collect();
        fields.push(if published { "published".into() } else { "proven".into() });
        w.write_record(&fields)?;
        md += &format!(
            "| {} | {:.2} | {} | {} | {} | {} | {} | {} | {} | {} | ({:.3}, {:.3}, {:.3}) | ({:.3}, {:.3}, {:.4}), {:.2} |\n",
            cfg.noise,
            nsr,
            format_epsilon(s.epsilon_unconstrained),
            format_d_eff(&q(s.deff_unconstrained)),
            format_d_eff(&q(s.deff_private)),
            format_percent(&q(s.relative_bce_increase)),
            format_iou(&q(s.iou_unconstrained)),
            format_iou(&q(s.iou_path_mean)),
            format_iou(&q(s.iou_path_sd)),
            format_percent(&q(s.relative_iou_gap)),
            u.lengthscale,
            u.ridge,
            u.scale,
            p.lengthscale,
            p.ridge,
            p.scale,
            s.epsilon_private
        );
    }
    w.flush()?;
    md += "\nMedian [interquartile range] over evaluation worlds. ε unconstrained is the guarantee the non-private optimum would have as a one-path release.\n";
    std::fs::write(dir.join("summary.md"), md)?;
    Ok(())
}

/// Figures 7–8 for the first evaluation world: truth and its boundary |
/// non-private {p_D ≥ C} over the grey truth | five private smoothed
/// one-path boundaries over the grey truth. Sensor locations are not drawn.
fn figure(dir: &Path, cfg: &Study2dConfig, r: &Study2dResult) -> Result<()> {
    let mut fig_cfg = cfg.clone();
    fig_cfg.seed = cfg.seed.wrapping_add(99);
    let w = worlds(&fig_cfg, 4, 1).remove(0);
    let (me, mp) = (cfg.eval_grid, cfg.path_grid);
    let eval = unit_grid(me);
    let truth = Grid2::new(me, me, (0.0, 1.0), (0.0, 1.0), eval.iter().map(|p| w.field.eval(p)).collect())?;
    let (u, p) = (r.unconstrained.best.candidate, r.private.best.candidate);
    let post_u = Posterior::fit(Kernel::exponential(u.lengthscale)?, &w.data, u.ridge)?;
    let (mu, vu) = (post_u.mean(&eval)?, post_u.variance(&eval)?);
    let prob = Grid2::new(
        me,
        me,
        (0.0, 1.0),
        (0.0, 1.0),
        mu.iter().zip(&vu).map(|(m, v)| excursion_probability(*m, *v, u.scale, cfg.level)).collect(),
    )?;
    let mut rng = ReleaseRng::seeded(cfg.seed.wrapping_add(456));
    let mechanism = cfg.accounting().mechanism(&p, Draws::new(5)?)?;
    let paths = mechanism.release(&w.data, &path_query(mp)?, &mut rng)?.paths;
    let smoothed: Vec<Grid2> = paths
        .iter()
        .map(|f| Grid2::new(mp, mp, (0.0, 1.0), (0.0, 1.0), gaussian_smooth(f, mp, mp, cfg.smooth_px, 3.0)?))
        .collect::<gpdp::Result<_>>()?;
    let black = RGBColor(0, 0, 0);
    let colours = [
        RGBColor(214, 39, 40),
        RGBColor(31, 119, 180),
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
    ];
    let mut private_contours = vec![Contour { grid: &truth, level: cfg.level, color: black, width: 3 }];
    private_contours.extend(smoothed.iter().zip(colours).map(|(g, c)| Contour {
        grid: g,
        level: cfg.level,
        color: c,
        width: 2,
    }));
    let panels = [
        HeatPanel {
            title: "truth f* and {f* ≥ 0}".into(),
            grid: &truth,
            palette: Palette::Diverging,
            range: Some((-1.0, 1.0)),
            contours: vec![Contour { grid: &truth, level: cfg.level, color: black, width: 2 }],
            points: vec![],
            x_label: "x1".into(),
            y_label: "x2".into(),
            colorbar: true,
            colorbar_label: String::new(),
            shade_above: None,
        },
        HeatPanel {
            title: format!("non-private {{p_D ≥ {:.2}}} (white)", r.cutoff),
            grid: &truth,
            palette: Palette::Grey,
            range: Some((-1.0, 1.0)),
            contours: vec![
                Contour { grid: &truth, level: cfg.level, color: black, width: 2 },
                Contour { grid: &prob, level: r.cutoff, color: RGBColor(255, 255, 255), width: 3 },
            ],
            points: vec![],
            x_label: "x1".into(),
            y_label: "x2".into(),
            colorbar: false,
            colorbar_label: String::new(),
            shade_above: None,
        },
        HeatPanel {
            title: format!("5 private one-path sets, ε = {:.2}", r.private.best.epsilon),
            grid: &truth,
            palette: Palette::Grey,
            range: Some((-1.0, 1.0)),
            contours: private_contours,
            points: vec![],
            x_label: "x1".into(),
            y_label: "x2".into(),
            colorbar: false,
            colorbar_label: String::new(),
            shade_above: None,
        },
    ];
    heatmap_figure(
        &dir.join(format!("figure_noise{}.png", cfg.noise)),
        &panels,
        420,
        Some(&format!(
            "2-D excursion study, M_ξ = {} (NSR {:.2}); black = true boundary; private paths smoothed by {} cells; sensors not shown",
            cfg.noise,
            cfg.noise / (1.0 - cfg.noise),
            cfg.smooth_px
        )),
    )?;
    Ok(())
}
