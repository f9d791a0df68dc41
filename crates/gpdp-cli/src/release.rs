//! `gpdp release`: the private release of posterior sample paths.
//!
//! Pipeline: validated data → (calibrated) accountant report → exact
//! posterior → exact sampler → files written into a temporary directory that
//! is renamed into place only when everything succeeded.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use gpdp::{
    Calibration, Dataset, DenseSampler, Domain, Lattice, LatticeSampler, Points, Posterior, PrivacyReport, Process,
    ReleaseRng, SampledPaths, Sampler, Solve, Target, calibrate,
};
use serde_json::{Value, json};

use crate::args::{ReleaseArgs, parse_f64};
use crate::geo::{Grid2, excursion_geojson, excursion_polygons};
use crate::io::read_dataset;
use crate::plot::{Contour, HeatPanel, LineChart, Palette, Series, SeriesStyle, heatmap_figure, line_charts};
use crate::report::report_json;

/// What to do with responses beyond the response bound M_Y.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnUnbounded {
    /// Clip to [−M_Y, M_Y] (a per-record transformation; the guarantee holds).
    Clip,
    /// Refuse the data.
    Reject,
}

/// Which exact sampler to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SamplerChoice {
    /// Lattice (circulant embedding) when the grid and all covariates lie on a common lattice, else dense.
    Auto,
    /// Joint Cholesky on the query points (O(m³)).
    Dense,
    /// Circulant embedding + Matheron update (covariates must lie on the grid's lattice).
    Lattice,
}

/// Arguments of `gpdp release`.
#[derive(Args, Debug, Clone)]
#[command(allow_negative_numbers = true)]
#[command(
    long_about = "Release L posterior sample paths of a Gaussian process fitted to private data, with an (ε, δ)-differential-privacy guarantee (Theorem 3.1 / Proposition 2).\n\nHyperparameters (kernel, ℓ, σ, η, and r or the target ε) must NOT be tuned on the private data: choose them on public or synthetic data, or from domain knowledge. Tuning them on the private data voids the guarantee."
)]
pub struct ReleaseCmdArgs {
    /// Private training data CSV: covariate columns x (1-D) or x1..xd, and y.
    #[arg(long, value_name = "CSV")]
    pub data: PathBuf,

    #[command(flatten)]
    pub model: ReleaseArgs,

    /// Target δ ∈ (0, 1) of the guarantee.
    #[arg(long, value_name = "δ", value_parser = parse_f64)]
    pub delta: f64,

    /// Calibrate to this ε instead of giving --ridge (see --solve).
    #[arg(long = "target-epsilon", value_name = "ε", value_parser = parse_f64)]
    pub target_epsilon: Option<f64>,

    /// With --target-epsilon: which parameter to calibrate (ridge, scale or gp-noise).
    #[arg(long, value_name = "PARAM", default_value = "ridge", requires = "target_epsilon")]
    pub solve: Solve,

    /// Query grid over the interval/box domain, end points included: N (every axis) or N1xN2.
    #[arg(long, value_name = "N[xM]", conflicts_with = "at")]
    pub grid: Option<String>,

    /// Query points CSV (covariate columns as in --data).
    #[arg(long, value_name = "CSV")]
    pub at: Option<PathBuf>,

    /// Output directory (created; refused if it exists and is not empty, unless --force).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    /// Replace an existing non-empty output directory.
    #[arg(long)]
    pub force: bool,

    /// Refuse to release (write nothing) if the guarantee's ε exceeds this.
    #[arg(long = "max-epsilon", value_name = "ε", value_parser = parse_f64)]
    pub max_epsilon: Option<f64>,

    /// Excursion level t for the map contour and excursion.geojson ({f ≥ t}).
    #[arg(long, value_name = "t", value_parser = parse_f64, default_value = "0")]
    pub threshold: f64,

    /// Responses beyond --response-bound: clip (default) or reject.
    #[arg(long = "on-unbounded", value_enum, default_value = "clip")]
    pub on_unbounded: OnUnbounded,

    /// Sampler: auto, dense or lattice.
    #[arg(long, value_enum, default_value = "auto")]
    pub sampler: SamplerChoice,

    /// Reproducible draws for experiments and tests. The output is then NOT a
    /// private release (report.json says "private": false).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,

    /// Print report.json to standard output.
    #[arg(long)]
    pub json: bool,
}

/// Query points: a regular grid (with its counts and bounds) or a list.
pub enum Query {
    Grid { counts: Vec<usize>, lo: Vec<f64>, hi: Vec<f64>, points: Points },
    List { names: Vec<String>, points: Points },
}

impl Query {
    pub fn points(&self) -> &Points {
        match self {
            Query::Grid { points, .. } | Query::List { points, .. } => points,
        }
    }
}

/// Parses "200" or "200x150" for a domain of dimension d and builds the grid
/// (x1 varies fastest).
pub fn grid_query(spec: &str, domain: &Domain) -> Result<Query> {
    let (lo, hi) = match domain {
        Domain::Interval { .. } | Domain::Box { .. } => domain.bounding_box(),
        _ => bail!("--grid needs an interval or box domain (the domain is {domain}); give --at points.csv instead"),
    };
    let d = lo.len();
    let parts: Vec<&str> = spec.split(['x', 'X', '×']).collect();
    let counts: Vec<usize> = parts
        .iter()
        .map(|p| p.trim().parse::<usize>().map_err(|_| anyhow::anyhow!("--grid '{spec}': '{p}' is not a count")))
        .collect::<Result<_>>()?;
    let counts = match counts.len() {
        1 => vec![counts[0]; d],
        k if k == d => counts,
        k => bail!("--grid '{spec}' has {k} counts but the domain is {d}-D"),
    };
    if counts.iter().any(|&c| c < 2) {
        bail!("--grid '{spec}': every axis needs at least 2 points");
    }
    let total = counts.iter().try_fold(1usize, |a, &c| a.checked_mul(c)).context("--grid: too many points")?;
    if total > 4_000_000 {
        bail!("--grid '{spec}' has {total} points; the limit is 4 000 000");
    }
    let mut data = Vec::with_capacity(total * d);
    for flat in 0..total {
        let mut rem = flat;
        for j in 0..d {
            let i = rem % counts[j];
            rem /= counts[j];
            data.push(lo[j] + (hi[j] - lo[j]) * i as f64 / (counts[j] - 1) as f64);
        }
    }
    Ok(Query::Grid { counts, lo, hi, points: Points::new(data, d)? })
}

/// Validated data: clipping count and the dataset.
pub fn prepare_data(
    mut data: Dataset,
    domain: &Domain,
    bound: f64,
    on: OnUnbounded,
    name: &str,
) -> Result<(Dataset, usize)> {
    if data.len() < 2 {
        bail!("{name}: {} data row(s); a release needs at least 2 records", data.len());
    }
    data.check_domain(domain).with_context(|| name.to_string())?;
    let clipped = match on {
        OnUnbounded::Clip => data.clip_responses(bound)?,
        OnUnbounded::Reject => {
            data.check_responses(bound).with_context(|| format!("{name} (--on-unbounded reject)"))?;
            0
        }
    };
    Ok((data, clipped))
}

/// Everything a release produced, before it is written.
pub struct Released {
    pub report: PrivacyReport,
    pub calibration: Option<Calibration>,
    pub paths: SampledPaths,
    pub posterior: Posterior,
    pub sampler_note: Value,
}

/// Accountant (with calibration) + posterior + sampling. Nothing is written.
pub fn run_release(a: &ReleaseCmdArgs, data: &Dataset, query: &Query, rng: &mut ReleaseRng) -> Result<Released> {
    let need_ridge = a.target_epsilon.is_none() || a.solve != Solve::Ridge;
    let need_scale = a.target_epsilon.is_none() || a.solve != Solve::Scale;
    if a.target_epsilon.is_some() && a.model.ridge.is_some() && a.solve == Solve::Ridge {
        bail!("give either --ridge or --target-epsilon (which calibrates the ridge), not both");
    }
    if a.target_epsilon.is_none() && a.model.ridge.is_none() {
        bail!("missing --ridge r (or --target-epsilon ε to calibrate it)");
    }
    if a.solve == Solve::Draws {
        bail!("--solve draws is not available for a release; fix --draws");
    }
    let res = a.model.resolve(data.len(), need_ridge, need_scale)?;
    if a.model.scale.is_some_and(|s| s.is_infinite()) {
        bail!("a release needs a finite --scale σ (σ = inf is only meaningful for the accountant)");
    }
    let (params, calibration, report) = match a.target_epsilon {
        Some(eps) => {
            let target = Target { epsilon: eps, delta: a.delta, conversion: res.conversion };
            let c = calibrate(&res.params, res.draws, a.solve, target)?;
            let mut p = res.params.clone();
            match a.solve {
                Solve::Ridge => p.ridge = c.value,
                Solve::Scale => p.scale = c.value,
                Solve::GpNoise => p.gp_noise = c.value,
                Solve::Draws => unreachable!(),
            }
            let report = c.report.clone();
            (p, Some(c), report)
        }
        None => {
            let rel = res.params.check()?;
            let report = rel.epsilon(res.draws, a.delta, res.conversion)?;
            (res.params.clone(), None, report)
        }
    };
    if let Some(max) = a.max_epsilon
        && report.epsilon > max
    {
        bail!(
            "refusing to release: the guarantee is ε = {:.6} > --max-epsilon {max} (nothing written)",
            report.epsilon
        );
    }
    let posterior = Posterior::fit(params.kernel, data, params.ridge)?;
    let process = Process::new(&posterior, params.scale, params.gp_noise)?;
    let draws = res.draws as usize;
    let (paths, sampler_note) = sample(a.sampler, process, query, draws, rng)?;
    Ok(Released { report, calibration, paths, posterior, sampler_note })
}

fn sample(
    choice: SamplerChoice,
    process: Process,
    query: &Query,
    draws: usize,
    rng: &mut ReleaseRng,
) -> Result<(SampledPaths, Value)> {
    if choice != SamplerChoice::Dense
        && let Query::Grid { counts, lo, hi, points } = query
    {
        // The coarsest refinement of the grid whose lattice holds every covariate.
        let mut last_err = None;
        for refine in 1..=8 {
            let lattice = Lattice::refining(lo, hi, counts, refine)?;
            match LatticeSampler::new(process, lattice) {
                Ok(s) => {
                    let out = s.sample(points, draws, rng)?;
                    let note = json!({
                        "method": out.method,
                        "lattice_refinement": refine,
                        "torus": s.torus(),
                        "embedding_shift": s.embedding_shift(),
                        "jitter": 0.0,
                    });
                    return Ok((out, note));
                }
                Err(e) => last_err = Some(e),
            }
        }
        if choice == SamplerChoice::Lattice {
            bail!("--sampler lattice: {}", last_err.map(|e| e.to_string()).unwrap_or_default());
        }
    } else if choice == SamplerChoice::Lattice {
        bail!("--sampler lattice needs --grid");
    }
    let out = DenseSampler::new(process).sample(query.points(), draws, rng)?;
    let note = json!({
        "method": out.method,
        "jitter": out.jitter,
        "jitter_note": "independent N(0, jitter) noise added to every released value: data-free, post-processing",
    });
    Ok((out, note))
}

/// The generator of a release: OS-seeded ChaCha20, or — with `--seed` — a
/// reproducible one, announced on stderr as NOT a private release.
pub fn release_rng(seed: Option<u64>) -> Result<ReleaseRng> {
    Ok(match seed {
        Some(s) => {
            eprintln!(
                "warning: --seed {s} makes the draws reproducible: this is NOT a private release (report.json says \"private\": false)"
            );
            ReleaseRng::seeded(s)
        }
        None => ReleaseRng::from_os()?,
    })
}

/// The privacy statement in one line.
pub fn statement(r: &PrivacyReport, private: bool) -> String {
    let c = &r.components[0];
    let base = format!(
        "({:.4}, {:.3e})-differentially private release of {} posterior sample path(s) (n = {}, r = {:.6}, σ = {}, η = {}, {} conversion)",
        r.epsilon, r.delta, c.draws, c.n, c.ridge, c.scale, c.gp_noise, r.conversion
    );
    if private { base } else { format!("{base} — SEEDED: reproducible, NOT a private release") }
}

/// The full report.json object.
#[allow(clippy::too_many_arguments)]
pub fn report_value(
    rel: &Released,
    rng: &ReleaseRng,
    clipped: usize,
    a: &ReleaseCmdArgs,
    query: &Query,
    n: usize,
    d: usize,
    outputs: &[&str],
) -> Value {
    let private = rng.is_private();
    let (qkind, qinfo) = match query {
        Query::Grid { counts, lo, hi, points } => (
            "grid",
            json!({"counts": counts, "lower": lo, "upper": hi, "points": points.len(), "order": "x1 varies fastest"}),
        ),
        Query::List { points, .. } => ("points", json!({"points": points.len()})),
    };
    let mut v = json!({
        "gpdp_version": env!("CARGO_PKG_VERSION"),
        "private": private,
        "statement": statement(&rel.report, private),
        "generator": rng.describe(),
        "privacy": report_json(&rel.report),
        "calibration": rel.calibration.as_ref().map(|c| json!({
            "solve": c.solve.name(),
            "value": c.value,
            "target_epsilon": a.target_epsilon,
            "permissive_value": c.permissive_value,
            "permissive_epsilon": if c.permissive_epsilon.is_finite() { json!(c.permissive_epsilon) } else { Value::Null },
        })),
        "data": {
            "n": n,
            "dimension": d,
            "response_bound": a.model.response_bound.unwrap_or(1.0),
            "on_unbounded": format!("{:?}", a.on_unbounded).to_lowercase(),
            "responses_clipped": clipped,
        },
        "query": {"kind": qkind, "details": qinfo},
        "sampler": rel.sampler_note,
        "threshold": a.threshold,
        "hyperparameters": "Kernel, lengthscale, scale, GP noise and ridge (or target ε) must be chosen without the private data (public data, synthetic data or domain knowledge); tuning them on the private data voids this guarantee.",
        "floating_point": "Gaussian variates are f64 and not hardened against least-significant-bit attacks (Mironov 2012).",
        "outputs": outputs,
    });
    if !private {
        v["warning"] =
            json!(format!("generated with --seed {}: reproducible, NOT a private release", rng.seed().unwrap_or(0)));
    }
    v
}

/// Writes paths.csv, report.json and the figures into `dir` (which exists).
#[allow(clippy::too_many_arguments)]
pub fn write_outputs(
    dir: &Path,
    rel: &Released,
    rng: &ReleaseRng,
    clipped: usize,
    a: &ReleaseCmdArgs,
    query: &Query,
    names: &[String],
    data: &Dataset,
) -> Result<Vec<String>> {
    let pts = query.points();
    let draws = rel.paths.values.len();
    // paths.csv
    let mut w = csv::Writer::from_path(dir.join("paths.csv"))?;
    let mut header: Vec<String> = names.to_vec();
    header.extend((1..=draws).map(|l| format!("path_{l}")));
    w.write_record(&header)?;
    for (i, x) in pts.iter().enumerate() {
        let mut rec: Vec<String> = x.iter().map(|v| format!("{v}")).collect();
        rec.extend(rel.paths.values.iter().map(|p| format!("{}", p[i])));
        w.write_record(&rec)?;
    }
    w.flush()?;
    let mut outputs = vec!["paths.csv".to_string(), "report.json".to_string()];
    let private = rng.is_private();
    let eps_line = format!(
        "ε = {:.3}, δ = {:.2e}{}",
        rel.report.epsilon,
        rel.report.delta,
        if private { "" } else { " (seeded: not private)" }
    );
    if let Query::Grid { counts, lo, hi, .. } = query {
        if counts.len() == 2 {
            let grid = Grid2::new(counts[0], counts[1], (lo[0], hi[0]), (lo[1], hi[1]), rel.paths.values[0].clone())?;
            let panel = HeatPanel {
                title: format!("released path 1 ({eps_line})"),
                grid: &grid,
                palette: Palette::Diverging,
                range: None,
                contours: vec![Contour {
                    grid: &grid,
                    level: a.threshold,
                    color: plotters::style::RGBColor(0, 0, 0),
                    width: 2,
                }],
                points: vec![],
                x_label: names[0].clone(),
                y_label: names[1].clone(),
                colorbar: true,
            };
            heatmap_figure(
                &dir.join("map.png"),
                &[panel],
                720,
                Some(&format!("gpdp release: excursion set {{f ≥ {}}} (black)", a.threshold)),
            )?;
            let polys = excursion_polygons(&grid, a.threshold);
            let gj = excursion_geojson(
                &polys,
                json!({
                    "level": a.threshold,
                    "set": format!("{{x : f(x) >= {}}} of released path 1", a.threshold),
                    "epsilon": rel.report.epsilon,
                    "delta": rel.report.delta,
                    "private": private,
                    "coordinates": "domain coordinates (x1, x2), not longitude/latitude",
                }),
            );
            std::fs::write(dir.join("excursion.geojson"), serde_json::to_vec_pretty(&gj)?)?;
            outputs.push("map.png".into());
            outputs.push("excursion.geojson".into());
        } else if counts.len() == 1 {
            let xs: Vec<f64> = pts.iter().map(|x| x[0]).collect();
            let series = rel
                .paths
                .values
                .iter()
                .enumerate()
                .take(20)
                .map(|(l, p)| Series {
                    label: if l < 5 { format!("path {}", l + 1) } else { String::new() },
                    xs: xs.clone(),
                    ys: p.clone(),
                    err: None,
                    style: SeriesStyle::Line,
                    color: None,
                })
                .collect();
            let chart = LineChart {
                title: format!("released sample paths — {eps_line}"),
                x_label: names[0].clone(),
                y_label: "f(x)".into(),
                log_x: false,
                log_y: false,
                series,
                hlines: vec![(a.threshold, format!("t = {}", a.threshold))],
                x_range: None,
                y_range: None,
            };
            line_charts(&dir.join("paths.png"), &[chart], (900, 520))?;
            outputs.push("paths.png".into());
        }
    }
    let outs: Vec<&str> = outputs.iter().map(|s| s.as_str()).collect();
    let report = report_value(rel, rng, clipped, a, query, data.len(), data.dim(), &outs);
    std::fs::write(dir.join("report.json"), serde_json::to_vec_pretty(&report)?)?;
    Ok(outputs)
}

/// Creates a fresh temporary directory next to `out`, runs `fill` in it, and
/// moves it to `out` only if `fill` succeeded. `out` must not exist or be
/// empty unless `force`.
pub fn write_dir_atomically<T>(out: &Path, force: bool, fill: impl FnOnce(&Path) -> Result<T>) -> Result<T> {
    if out.exists() {
        if !out.is_dir() {
            bail!("--out {} exists and is not a directory", out.display());
        }
        let empty = std::fs::read_dir(out)?.next().is_none();
        if !empty && !force {
            bail!("--out {} exists and is not empty; choose another directory or pass --force", out.display());
        }
    }
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    let base = out.file_name().and_then(|s| s.to_str()).unwrap_or("out");
    let tmp = parent.join(format!(".{base}.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let result = fill(&tmp);
    let value = match result {
        Ok(v) => v,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    if out.exists() {
        let old = parent.join(format!(".{base}.old-{}", std::process::id()));
        std::fs::rename(out, &old).with_context(|| format!("cannot move the old {} aside", out.display()))?;
        if let Err(e) = std::fs::rename(&tmp, out) {
            let _ = std::fs::rename(&old, out);
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e).with_context(|| format!("cannot move the release into {}", out.display()));
        }
        let _ = std::fs::remove_dir_all(&old);
    } else if let Err(e) = std::fs::rename(&tmp, out) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e).with_context(|| format!("cannot move the release into {}", out.display()));
    }
    Ok(value)
}

pub fn run(a: ReleaseCmdArgs) -> Result<()> {
    let name = a.data.display().to_string();
    let domain = a.model.domain.clone().context("missing --domain (e.g. interval:0,1 or box:0,1,0,1)")?;
    let bound = a.model.response_bound.unwrap_or(1.0);
    let (names, raw) = read_dataset(&a.data)?;
    let (data, clipped) = prepare_data(raw, &domain, bound, a.on_unbounded, &name)?;
    let query = match (&a.grid, &a.at) {
        (Some(g), None) => grid_query(g, &domain)?,
        (None, Some(p)) => {
            let t = crate::io::read_table(p, false)?;
            if t.x.dim() != data.dim() {
                bail!("{} has {}-D points but the data are {}-D", p.display(), t.x.dim(), data.dim());
            }
            Query::List { names: t.x_names, points: t.x }
        }
        _ => bail!("give the query points: --grid N[xM] or --at points.csv"),
    };
    let names = match &query {
        Query::List { names, .. } => names.clone(),
        Query::Grid { .. } => names,
    };
    let mut rng = release_rng(a.seed)?;
    let rel = run_release(&a, &data, &query, &mut rng)?;
    let outputs = write_dir_atomically(&a.out, a.force, |dir| {
        write_outputs(dir, &rel, &rng, clipped, &a, &query, &names, &data)
    })?;
    if a.json {
        let report: Value = serde_json::from_slice(&std::fs::read(a.out.join("report.json"))?)?;
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        if clipped > 0 {
            println!("clipped {clipped} response(s) to [−{bound}, {bound}]");
        }
        println!("wrote {} into {}", outputs.join(", "), a.out.display());
        println!("{}", statement(&rel.report, rng.is_private()));
    }
    Ok(())
}
