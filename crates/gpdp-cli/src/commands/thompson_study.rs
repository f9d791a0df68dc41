//! `gpdp thompson study`: the regret study of private Thompson sampling
//! (issue 27, item 3). The study itself is the library's
//! (`gpdp_experiments::thompson`); this module maps the flags onto its
//! settings, runs the units (or one shard of them), prints progress and
//! writes the outputs — from the settings and the results only, so that
//! `gpdp merge` of the shards writes the same bytes as the unsharded run.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, Result, bail};
use clap::Args;
use gpdp_experiments::shard::{SHARD_FILE, Shard, ShardFile, to_bytes};
use gpdp_experiments::study::Study;
use gpdp_experiments::thompson::{
    ALL_FUNCTIONS, Method, MethodCurve, TestFunction, ThompsonStudy, UnitResult, curves, default_initial, run_shard,
};
use serde_json::json;

use crate::args::parse_f64;
use crate::output::files::write_dir_atomically;
use crate::output::plot::RGBColor;
use crate::output::plot::bands::{BandChart, BandSeries, band_charts};

const ABOUT: &str = "About the study (issue 27, item 3):

Test functions, maximised as g = 1 − 2(f − f_min)/(f_max − f_min) ∈ [−1, 1] on the unit box (the native domain rescaled): Forrester (1-D), Branin (2-D), Hartmann-3 and Hartmann-6. Public candidates: a regular grid in 1-D and 2-D, Halton points in 3-D and 6-D. Per (function, seed): n₀ = 2d + 2 uniform initial records; every round chooses one candidate and observes g(x) + N(0, noise²), clipped to [−1, 1] (M_Y = 1).

Methods, all with the Matérn-5/2 GP of a lengthscale fixed per function and scale σ: private Thompson sampling at each --epsilons value (the ridge calibrated so that the whole T-round loop's composed ε at --delta meets it, and at least noise/σ), non-private Thompson sampling and GP-UCB (ridge noise/σ, the ordinary posterior), random search.

Metrics per round t, with g* the best g over the candidates: simple regret g* − max_{s≤t} g(x_s), cumulative regret Σ_{s≤t} (g* − g(x_s)); means and standard errors over the seeds.

Every loop is seeded: this is a reproducible study of the method, NOT a private release.

Outputs in --out: regret.png (mean regret with 95% bands, one column per function; simple regret above, cumulative below), regret.csv, summary.md, study.json.";

/// Arguments of `gpdp thompson study`.
#[derive(Args, Debug, Clone)]
#[command(after_long_help = ABOUT, allow_negative_numbers = true)]
pub struct StudyArgs {
    /// Output directory (written atomically).
    #[arg(long, value_name = "DIR", default_value = "results/thompson-study")]
    pub out: PathBuf,
    /// Seeds per (function, method): each has its own initial records and
    /// observation noise, common to the methods.
    #[arg(long, value_name = "N", default_value = "20")]
    pub seeds: usize,
    /// Rounds T of every loop (default: 50 for forrester, 100 for the others).
    #[arg(long, value_name = "T")]
    pub rounds: Option<usize>,
    /// Total-loop ε of the private loops, comma-separated: one method each.
    #[arg(long, value_name = "LIST", default_value = "1,3,10")]
    pub epsilons: String,
    /// δ of the private loops' (ε, δ) guarantee.
    #[arg(long, value_name = "δ", value_parser = parse_f64, default_value = "1e-5")]
    pub delta: f64,
    /// Test functions, comma-separated, from forrester, branin, hartmann3,
    /// hartmann6 (in output order).
    #[arg(long, value_name = "LIST", default_value = "forrester,branin,hartmann3,hartmann6")]
    pub functions: String,
    /// Initial records n₀ of every function (default: 2d + 2).
    #[arg(long, value_name = "N")]
    pub initial: Option<usize>,
    /// Standard deviation of the observation noise (the non-private ridge
    /// is noise/σ).
    #[arg(long, value_parser = parse_f64, default_value = "0.1")]
    pub noise: f64,
    /// Kernel scale σ of every GP method.
    #[arg(long, value_name = "σ", value_parser = parse_f64, default_value = "0.5")]
    pub scale: f64,
    /// Candidates of the 1-D grid (0 and 1 included).
    #[arg(long = "grid-1d", value_name = "M", default_value = "256")]
    pub grid_1d: usize,
    /// Candidates per axis of the 2-D grid (K × K candidates).
    #[arg(long = "grid-2d", value_name = "K", default_value = "32")]
    pub grid_2d: usize,
    /// Halton candidates in 3 or more dimensions (a round costs about m²
    /// with the fast sampler: the main knob of the study's time).
    #[arg(long, value_name = "M", default_value = "1024")]
    pub candidates: usize,
    /// δ_UCB of GP-UCB's β_t = 2 ln(|C| t² π² / (6 δ_UCB)).
    #[arg(long = "ucb-delta", value_parser = parse_f64, default_value = "0.1")]
    pub ucb_delta: f64,
    /// Base seed of every stream (initial records, noise, loops).
    #[arg(long, default_value = "0")]
    pub seed: u64,
    /// Run only shard I of N (0 ≤ I < N) of the units (function, method,
    /// seed; round robin) and write its results to --out/shard.cbor;
    /// `gpdp merge` combines the N shards into exactly the unsharded outputs.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Replace a non-empty output directory.
    #[arg(long)]
    pub force: bool,
    /// Print no progress on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// The study's settings from its flags (the one mapping of the flags onto
/// [`ThompsonStudy`]).
fn study(a: &StudyArgs) -> Result<ThompsonStudy> {
    let functions = a
        .functions
        .split(',')
        .map(|t| t.parse::<TestFunction>().map_err(anyhow::Error::from))
        .collect::<Result<Vec<_>>>()
        .with_context(|| format!("--functions '{}'", a.functions))?;
    let epsilons = a
        .epsilons
        .split(',')
        .map(|t| parse_f64(t).map_err(anyhow::Error::msg))
        .collect::<Result<Vec<f64>>>()
        .with_context(|| format!("--epsilons '{}'", a.epsilons))?;
    if let Some(e) = epsilons.iter().find(|e| **e <= 0.0) {
        bail!("--epsilons '{}': ε = {e} must be > 0", a.epsilons);
    }
    for (flag, v, ok, need) in [
        ("--noise", a.noise, a.noise > 0.0, "> 0"),
        ("--scale", a.scale, a.scale > 0.0, "> 0"),
        ("--delta", a.delta, a.delta > 0.0 && a.delta < 1.0, "in (0, 1)"),
        ("--ucb-delta", a.ucb_delta, a.ucb_delta > 0.0 && a.ucb_delta < 1.0, "in (0, 1)"),
    ] {
        if !ok {
            bail!("{flag} {v}: must be {need}");
        }
    }
    if a.grid_1d < 2 || a.grid_2d < 2 || a.candidates == 0 {
        bail!(
            "--grid-1d {} / --grid-2d {} / --candidates {}: need at least 2, 2 and 1 candidates",
            a.grid_1d,
            a.grid_2d,
            a.candidates
        );
    }
    if a.seeds == 0 {
        bail!("--seeds 0: at least one seed is needed");
    }
    if a.rounds == Some(0) {
        bail!("--rounds 0: at least one round is needed");
    }
    if let Some(n) = a.initial.filter(|&n| n < 2) {
        bail!("--initial {n}: at least 2 initial records are needed (a release needs n ≥ 2)");
    }
    let mut st = ThompsonStudy::new(functions);
    if let Some(t) = a.rounds {
        st.rounds = vec![t; st.functions.len()];
    }
    st.initial = st.functions.iter().map(|&f| a.initial.unwrap_or(default_initial(f))).collect();
    st.epsilons = epsilons;
    st.delta = a.delta;
    st.noise = a.noise;
    st.scale = a.scale;
    st.seeds = a.seeds;
    st.grid_1d = a.grid_1d;
    st.grid_2d = a.grid_2d;
    st.candidates = a.candidates;
    st.ucb_delta = a.ucb_delta;
    st.seed = a.seed;
    st.validate().context("gpdp thompson study")?;
    Ok(st)
}

/// Runs the study (or one shard of it).
pub fn run(a: StudyArgs) -> Result<()> {
    let st = study(&a)?;
    crate::output::files::check_out_dir(&a.out, a.force)?;
    let shard = a.shard.unwrap_or(Shard::ALL);
    let units = st.units();
    let mine = shard.units(units.len()).len();
    let t0 = std::time::Instant::now();
    if !a.quiet {
        eprintln!(
            "thompson study: {mine} of {} runs (function × method × seed) on {} thread(s); every loop is seeded — a study, not a private release",
            units.len(),
            rayon::current_num_threads()
        );
    }
    let count = AtomicUsize::new(0);
    let done = |_: usize, u: &gpdp_experiments::thompson::Unit, r: &UnitResult| {
        let k = count.fetch_add(1, Ordering::Relaxed) + 1;
        if a.quiet {
            return;
        }
        let best = r.values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        eprintln!(
            "[{k}/{mine}] {} · {} · seed {}: final simple regret {:.4} ({:.0} s)",
            st.functions[u.function],
            u.method.label(),
            u.seed,
            r.g_star - best,
            t0.elapsed().as_secs_f64()
        );
    };
    let results = run_shard(&st, shard, &done)?;
    if let Some(sh) = a.shard {
        let n = results.len();
        let file = ShardFile::new(Study::Thompson(st), sh, units.len(), results);
        let bytes = to_bytes(&file)?;
        write_dir_atomically(&a.out, a.force, |d| Ok(std::fs::write(d.join(SHARD_FILE), &bytes)?))?;
        println!(
            "thompson study shard {sh}: {n} of {} runs in {:.0} s; wrote {}",
            units.len(),
            t0.elapsed().as_secs_f64(),
            a.out.join(SHARD_FILE).display()
        );
        return Ok(());
    }
    let results: Vec<UnitResult> = results.into_iter().map(|r| r.1).collect();
    write_study(&a.out, a.force, &st, &results)?;
    println!("wrote the thompson study into {} ({:.0} s)", a.out.display(), t0.elapsed().as_secs_f64());
    Ok(())
}

/// Writes the outputs of a merged `thompson study` (`gpdp merge`): those of
/// the unsharded run with the same settings.
pub fn write_merged(st: &ThompsonStudy, results: &[UnitResult], out: &Path, force: bool) -> Result<()> {
    write_study(out, force, st, results)?;
    println!("merged {} runs of thompson study into {}", results.len(), out.display());
    Ok(())
}

/// Every output into `out` (a function of the settings and the results
/// only, so that merged shards give the same bytes).
fn write_study(out: &Path, force: bool, st: &ThompsonStudy, results: &[UnitResult]) -> Result<()> {
    let curves = curves(st, results)?;
    write_dir_atomically(out, force, |dir| {
        write_csv(dir, &curves)?;
        write_figure(dir, st, &curves)?;
        write_summary(dir, st, results, &curves)?;
        write_json(dir, st, results)?;
        Ok(())
    })
}

fn num(v: f64) -> String {
    if v.is_nan() { String::new() } else { v.to_string() }
}

fn write_csv(dir: &Path, curves: &[MethodCurve]) -> Result<()> {
    let path = dir.join("regret.csv");
    let mut w = csv::Writer::from_path(&path).with_context(|| format!("cannot write {}", path.display()))?;
    w.write_record([
        "function",
        "method",
        "epsilon",
        "round",
        "simple_regret_mean",
        "simple_regret_se",
        "cumulative_regret_mean",
        "cumulative_regret_se",
    ])?;
    for c in curves {
        let eps = c.method.epsilon().map_or(String::new(), num);
        for t in 0..c.simple_mean.len() {
            w.write_record([
                c.function.name().to_string(),
                c.method.key().to_string(),
                eps.clone(),
                (t + 1).to_string(),
                num(c.simple_mean[t]),
                num(c.simple_se[t]),
                num(c.cumulative_mean[t]),
                num(c.cumulative_se[t]),
            ])?;
        }
    }
    w.flush()?;
    Ok(())
}

/// The colour and dash of a method: the private loops in blues, from light
/// (smallest ε) to dark, non-private TS orange, GP-UCB green, random search
/// grey and dashed.
fn style(st: &ThompsonStudy, m: &Method) -> (RGBColor, bool) {
    match m {
        Method::Private { epsilon } => {
            let k = st.epsilons.iter().position(|e| e == epsilon).unwrap_or(0);
            let n = st.epsilons.len().max(2) - 1;
            let t = k.min(n) as f64 / n as f64;
            let mix = |a: u8, b: u8| (a as f64 + t * (b as f64 - a as f64)).round() as u8;
            // From light blue (ε smallest) to dark blue (ε largest).
            (RGBColor(mix(130, 8), mix(180, 48), mix(230, 107)), false)
        }
        Method::Thompson => (RGBColor(255, 127, 14), false),
        Method::Ucb => (RGBColor(44, 160, 44), false),
        Method::Random => (RGBColor(110, 110, 110), true),
    }
}

fn write_figure(dir: &Path, st: &ThompsonStudy, curves: &[MethodCurve]) -> Result<()> {
    let mut charts = Vec::new();
    for cumulative in [false, true] {
        for (i, &f) in st.functions.iter().enumerate() {
            let series = curves
                .iter()
                .filter(|c| c.function == f)
                .map(|c| {
                    let (mean, se) = if cumulative {
                        (&c.cumulative_mean, &c.cumulative_se)
                    } else {
                        (&c.simple_mean, &c.simple_se)
                    };
                    let (color, dashed) = style(st, &c.method);
                    BandSeries {
                        label: c.method.label(),
                        xs: (1..=mean.len()).map(|t| t as f64).collect(),
                        ys: mean.clone(),
                        lo: mean.iter().zip(se).map(|(m, s)| m - 1.96 * s).collect(),
                        hi: mean.iter().zip(se).map(|(m, s)| m + 1.96 * s).collect(),
                        color: Some(color),
                        dashed,
                    }
                })
                .collect();
            charts.push(BandChart {
                title: format!("{} — {} regret", f.title(), if cumulative { "cumulative" } else { "simple" }),
                x_label: "round t".into(),
                y_label: if cumulative { "Σ (g* − g(x_s))".into() } else { "g* − max g(x_s)".into() },
                series,
                legend: i == 0,
            });
        }
    }
    band_charts(&dir.join("regret.png"), &charts, st.functions.len(), (560, 420))
}

fn pm(v: (f64, f64)) -> String {
    if v.1.is_nan() { format!("{:.4}", v.0) } else { format!("{:.4} ± {:.4}", v.0, v.1) }
}

fn write_summary(dir: &Path, st: &ThompsonStudy, results: &[UnitResult], curves: &[MethodCurve]) -> Result<()> {
    let units = st.units();
    let mut md = String::from("# Regret study of private Thompson sampling\n\n");
    md += "**A seeded study, not a private release.** Every loop ran with a fixed seed, so the results are \
           reproducible; the private loops' ε is what the same loop would guarantee run unseeded.\n\n";
    let _ = writeln!(
        md,
        "Means ± standard errors over {} seed(s) (SE = sample SD/√seeds). Simple regret g* − max_{{s≤T}} g(x_s) and \
         cumulative regret Σ_{{s≤T}} (g* − g(x_s)) after the last round T, with the noiseless g and g* the maximum of g \
         over the candidate set; the initial records do not count.\n",
        st.seeds
    );
    md += "| function | method | target ε | ridge r | composed ε reached (δ) | final simple regret | final cumulative regret | better than random search? (simple / cumulative) |\n";
    md += "|---|---|---|---|---|---|---|---|\n";
    let mut no_better = Vec::new();
    for c in curves {
        let (target, ridge, reached) = match (c.method, c.ridge, c.epsilon) {
            (Method::Private { epsilon }, Some(r), Some(e)) => {
                let ridge = if r.ridge > r.calibrated {
                    format!("{:.4} (calibrated {:.4}, raised to noise/σ)", r.ridge, r.calibrated)
                } else {
                    format!("{:.4}", r.ridge)
                };
                (epsilon.to_string(), ridge, format!("{e:.4} ({})", st.delta))
            }
            (Method::Random, _, _) => ("—".into(), "—".into(), "—".into()),
            _ => ("— (not private)".into(), format!("{:.4}", st.plain_ridge()), "—".into()),
        };
        let word = |b: bool| if b { "yes" } else { "**no**" };
        let verdict = match c.better_than_random {
            None => "—".to_string(),
            Some((simple, cumulative)) => {
                if let (Method::Private { epsilon }, false) = (c.method, simple && cumulative) {
                    let which = match (simple, cumulative) {
                        (false, false) => "simple and cumulative regret",
                        (false, true) => "simple regret",
                        _ => "cumulative regret",
                    };
                    no_better.push(format!("{} at ε = {epsilon} ({which})", c.function.title()));
                }
                format!("{} / {}", word(simple), word(cumulative))
            }
        };
        let _ = writeln!(
            md,
            "| {} | {} | {target} | {ridge} | {reached} | {} | {} | {verdict} |",
            c.function.title(),
            c.method.label(),
            pm(c.final_simple()),
            pm(c.final_cumulative())
        );
    }
    md += "\n\"Better than random search\": the final mean (simple, cumulative) regret is lower than random \
           search's by more than 1.96·√(SE² + SE_random²).\n\n";
    if no_better.is_empty() {
        md += "Every private loop beat random search on both final simple and final cumulative regret.\n\n";
    } else {
        let _ = writeln!(
            md,
            "**The private loop is no better than random search** for: {}. There the ridge needed for the target ε \
             (see the table) shrinks the posterior towards the prior, so the released paths are close to prior draws \
             and their maximisers close to uniform choices.\n",
            no_better.join("; ")
        );
    }
    md += "## Settings\n\n";
    md += "| function | d | rounds T | n₀ | candidates | ℓ (Matérn-5/2) | f_min | f_max | g* |\n";
    md += "|---|---|---|---|---|---|---|---|---|\n";
    for (i, &f) in st.functions.iter().enumerate() {
        let g_star = units.iter().zip(results).find(|(u, _)| u.function == i).map_or(f64::NAN, |(_, r)| r.g_star);
        let cands = match f.dim() {
            1 => format!("grid of {}", st.grid_1d),
            2 => format!("{0} × {0} grid", st.grid_2d),
            _ => format!("{} Halton points", st.candidates),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {cands} | {} | {} | {}{} | {g_star:.6} |",
            f.title(),
            f.dim(),
            st.rounds[i],
            st.initial[i],
            st.lengthscales[i],
            f.f_min(),
            f.f_max(),
            if matches!(f, TestFunction::Hartmann3 | TestFunction::Hartmann6) { " (upper bound)" } else { "" },
        );
    }
    let _ = writeln!(
        md,
        "\ng(u) = 1 − 2·(f(x(u)) − f_min)/(f_max − f_min) on u ∈ [0, 1]^d (x(u) the native point), maximised. \
         Observations g(x) + N(0, {}²), clipped to [−1, 1]. Kernel scale σ = {}; non-private ridge noise/σ = {}; \
         private ridges calibrated so that the T-round loop (n₀ + t − 1 records in round t) has composed ε ≤ target at \
         δ = {} (tight bound, improved conversion), and raised to noise/σ when smaller. GP-UCB: β_t = 2 ln(|C| t² π² / \
         (6·{})). Base seed {}.",
        st.noise,
        st.scale,
        st.plain_ridge(),
        st.delta,
        st.ucb_delta,
        st.seed
    );
    std::fs::write(dir.join("summary.md"), md)?;
    Ok(())
}

fn write_json(dir: &Path, st: &ThompsonStudy, results: &[UnitResult]) -> Result<()> {
    let units = st.units();
    let functions: Vec<serde_json::Value> = st
        .functions
        .iter()
        .enumerate()
        .map(|(i, &f)| {
            let mine: Vec<(&gpdp_experiments::thompson::Unit, &UnitResult)> =
                units.iter().zip(results).filter(|(u, _)| u.function == i).collect();
            let ridges: Vec<serde_json::Value> = st
                .epsilons
                .iter()
                .filter_map(|&e| {
                    let (_, r) = mine.iter().find(|(u, _)| u.method == Method::Private { epsilon: e })?;
                    let c = r.ridge?;
                    Some(json!({
                        "target_epsilon": e,
                        "calibrated_ridge": c.calibrated,
                        "ridge": c.ridge,
                        "composed_epsilon": r.epsilon,
                    }))
                })
                .collect();
            let (lo, hi) = f.native_box();
            json!({
                "function": f.name(),
                "dim": f.dim(),
                "native_box": {"lo": lo, "hi": hi},
                "f_min": f.f_min(),
                "f_max": f.f_max(),
                "g": "1 - 2 (f - f_min) / (f_max - f_min), maximised on [0, 1]^d",
                "g_star_over_candidates": mine.first().map(|(_, r)| r.g_star),
                "private_ridges": ridges,
            })
        })
        .collect();
    let v = json!({
        "study": "thompson study (issue 27, item 3)",
        "seeded": true,
        "note": "every loop is seeded: a reproducible study of the method, not a private release",
        "known_functions": ALL_FUNCTIONS.iter().map(|f| f.name()).collect::<Vec<_>>(),
        "settings": serde_json::to_value(st)?,
        "methods": st.methods().iter().map(|m| m.label()).collect::<Vec<_>>(),
        "functions": functions,
    });
    std::fs::write(dir.join("study.json"), serde_json::to_vec_pretty(&v)?)?;
    Ok(())
}
