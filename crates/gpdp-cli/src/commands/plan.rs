//! `gpdp plan`: choose a release's hyperparameters and see its utility
//! against ε on PUBLIC or proxy data (gpdp::plan; docs/plan.md).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use gpdp::model::domain::Domain;
use gpdp::model::kernel::KernelKind;
use gpdp::model::units::ResponseRange;
use gpdp::plan::{Bounds, FitOptions, Plan, PlannedRelease, UtilityOptions};
use gpdp::{Dataset, Draws, Grid};

use crate::args::{parse_f64, require_with_example};
use crate::output::files::write_dir_atomically;
use crate::output::gis::Crs;
use crate::output::plot::{LineChart, Series, SeriesStyle, line_charts};
use crate::output::progress::Spinner;

/// A complete `gpdp plan` command, shown with its missing flags.
pub const PLAN_EXAMPLE: &str = "gpdp plan --proxy last-year.csv --x easting,northing --y pm25 --response-range 0,40 --units µg/m³ --domain box:500000,510000,180000,190000 --n 300 --delta 1e-5 --epsilons 1,3,10 --threshold 25 --out plan/";

/// Arguments of `gpdp plan`.
#[derive(Args, Debug, Clone)]
#[command(allow_negative_numbers = true)]
#[command(
    long_about = "Choose the hyperparameters of a release on PUBLIC or proxy data — last year's readings, a pilot, a simulation — and estimate what each ε would cost in utility. NEVER give it the private data: hyperparameters fitted to the data being released void the release's guarantee.\n\n1. Fits the lengthscale ℓ, scale σ and noise sd λ by maximising the log marginal likelihood within bounds, from several starts (Nelder–Mead in log space).\n2. For each target ε, calibrates the release's ridge: the smallest one meeting ε at the private dataset's size --n, or the fitted λ/σ when that is larger (more private, and closer to the fitted model).\n3. Simulates the private map on the proxy (seeded; these are not releases): the hold-out RMSE of one released path, and the IoU of its excursion set {f ≥ t} with the proxy's non-private set, over --reps random splits.\n\nWrites DIR/plan.json (everything above), DIR/utility.csv and DIR/utility.png (utility against ε). Then `gpdp release --plan DIR/plan.json --target-epsilon ε …` takes the kernel, ℓ, σ and the ridge floor from it."
)]
pub struct PlanArgs {
    /// PUBLIC or proxy data CSV (never the private data): covariate columns
    /// and the response, as `release --data` reads them.
    #[arg(long, value_name = "CSV")]
    pub proxy: Option<PathBuf>,

    /// Covariate columns by name, in order (default: x, or x1, x2, …).
    #[arg(long = "x", value_name = "COLS", value_delimiter = ',')]
    pub x_columns: Option<Vec<String>>,

    /// Response column by name (default: y).
    #[arg(long = "y", value_name = "COL")]
    pub y_column: Option<String>,

    /// Kernel family to fit: exponential, matern32, matern52,
    /// squared-exponential, constant, diagonal.
    #[arg(long, value_name = "KERNEL", default_value = "matern32")]
    pub kernel: KernelKind,

    /// The release's covariate domain Ω (interval:a,b | box:a1,b1,a2,b2 | ball:…).
    #[arg(long, value_name = "SPEC")]
    pub domain: Option<Domain>,

    /// The responses' plausible range in data units, LO,HI, as for release.
    #[arg(
        long = "response-range",
        value_name = "LO,HI",
        conflicts_with = "response_bound",
        allow_hyphen_values = true
    )]
    pub response_range: Option<ResponseRange>,

    /// Response bound M_Y in the data's units (or give --response-range; one
    /// of the two is required).
    #[arg(long = "response-bound", value_name = "M_Y", value_parser = parse_f64)]
    pub response_bound: Option<f64>,

    /// The responses' unit (labels plan.json and the plot).
    #[arg(long, value_name = "UNIT", value_parser = crate::args::parse_units)]
    pub units: Option<String>,

    /// Records n in the PRIVATE dataset the release will use (public; the
    /// guarantee is for datasets of n records). Default: the proxy's count.
    #[arg(long, value_name = "N")]
    pub n: Option<usize>,

    /// Target ε values to plan for, comma-separated.
    #[arg(long, value_name = "ε,…", value_delimiter = ',', default_value = "0.5,1,2,5,10", value_parser = parse_f64)]
    pub epsilons: Vec<f64>,

    /// δ of the release.
    #[arg(long, value_name = "δ", value_parser = parse_f64)]
    pub delta: Option<f64>,

    /// Draws L of the release.
    #[arg(long, value_name = "L", default_value = "1")]
    pub draws: Draws,

    /// The neighbouring relation of the planned release: replace-one
    /// (default; each record, covariates and response, is protected) or
    /// change-response (the covariates are public, each reading is
    /// protected). For change-response the simulated releases are calibrated
    /// with the bound for any covariates (the release, with its own
    /// covariates, can only do better).
    #[arg(long, value_name = "RELATION", default_value = "replace-one", value_parser = crate::commands::account::parse_relation)]
    pub relation: gpdp::NeighbouringRelation,

    /// Excursion level t in data units (default: the middle of
    /// --response-range, else 0).
    #[arg(long, value_name = "t", value_parser = parse_f64)]
    pub threshold: Option<f64>,

    /// The criterion of "worth publishing": the plan prints the smallest
    /// planned ε whose RMSE is within this fraction above the non-private
    /// map's, and whose IoU is within it below.
    #[arg(long, value_name = "FRACTION", default_value = "0.1", value_parser = parse_f64)]
    pub within: f64,

    /// Grid of the excursion-set comparison over the domain: N or N1xN2.
    #[arg(long, value_name = "N[xM]", default_value = "40")]
    pub grid: String,

    /// Fraction of the proxy held out in each repetition.
    #[arg(long, value_name = "FRACTION", default_value = "0.2", value_parser = parse_f64)]
    pub holdout: f64,

    /// Repetitions of the utility simulation (new split, new path).
    #[arg(long, value_name = "K", default_value = "5")]
    pub reps: usize,

    /// Starts of the marginal-likelihood search.
    #[arg(long, value_name = "K", default_value = "8")]
    pub restarts: usize,

    /// Fit on at most this many proxy records (a seeded random subset; the
    /// likelihood costs n³).
    #[arg(long = "max-fit-points", value_name = "N", default_value = "1500")]
    pub max_fit_points: usize,

    /// Simulate the private map (the utility curve) on at most this many
    /// proxy records (a seeded random subset; each simulated release costs
    /// n³ for the fit and m³ for the m = hold-out + grid query points).
    #[arg(long = "max-sim-points", value_name = "N", default_value = "2000")]
    pub max_sim_points: usize,

    /// Search interval of ℓ, LO,HI in covariate units (default: diam Ω/100
    /// to 2 diam Ω).
    #[arg(long = "lengthscale-bounds", value_name = "LO,HI")]
    pub lengthscale_bounds: Option<String>,

    /// Search interval of σ, LO,HI in data units (default: 1% to 10× of
    /// the response range's half-width, or of M_Y).
    #[arg(long = "scale-bounds", value_name = "LO,HI")]
    pub scale_bounds: Option<String>,

    /// Search interval of the noise sd λ, LO,HI in data units (default:
    /// 0.1% to 2× of the half-width, or of M_Y).
    #[arg(long = "noise-bounds", value_name = "LO,HI")]
    pub noise_bounds: Option<String>,

    /// The covariates' CRS (EPSG:CODE); a geographic CRS needs --reproject-to.
    #[arg(long, value_name = "EPSG:CODE")]
    pub crs: Option<Crs>,

    /// Reproject the proxy's covariates from --crs to this projected CRS
    /// (as `release --reproject-to` does; give the same to both).
    #[arg(long = "reproject-to", value_name = "EPSG:CODE", requires = "crs")]
    pub reproject_to: Option<Crs>,

    /// Seed of the fit's starts, the splits and the simulated paths (the
    /// plan uses public data only, so it is reproducible).
    #[arg(long, value_name = "S", default_value = "0")]
    pub seed: u64,

    /// Output directory (plan.json, utility.csv, utility.png).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Replace an existing non-empty output directory.
    #[arg(long)]
    pub force: bool,

    /// No progress spinner on stderr.
    #[arg(long)]
    pub quiet: bool,
}

fn parse_pair(flag: &str, s: &str) -> Result<(f64, f64)> {
    let v: Vec<&str> = s.split(',').collect();
    if v.len() != 2 {
        bail!("{flag} '{s}': give LO,HI");
    }
    let lo = parse_f64(v[0].trim()).map_err(|e| anyhow::anyhow!("{flag} '{s}': {e}"))?;
    let hi = parse_f64(v[1].trim()).map_err(|e| anyhow::anyhow!("{flag} '{s}': {e}"))?;
    if !(lo > 0.0 && lo <= hi && hi.is_finite()) {
        bail!("{flag} '{s}': need 0 < LO ≤ HI < ∞");
    }
    Ok((lo, hi))
}

/// A seeded random subset of at most `max` records (all of them if fewer).
fn fit_subset(data: &Dataset, max: usize, seed: u64) -> Result<Dataset> {
    if data.len() <= max {
        return Ok(data.clone());
    }
    let mut rng = gpdp::ReleaseRng::seeded(seed ^ 0x05EE_DF17);
    let mut idx: Vec<usize> = (0..data.len()).collect();
    for i in (1..idx.len()).rev() {
        let j = ((rng.uniform() * (i + 1) as f64) as usize).min(i);
        idx.swap(i, j);
    }
    idx.truncate(max);
    idx.sort_unstable();
    let rows: Vec<&[f64]> = idx.iter().map(|&i| data.x().row(i)).collect();
    Ok(Dataset::new(gpdp::model::points::Points::from_rows(&rows)?, idx.iter().map(|&i| data.y()[i]).collect())?)
}

pub fn run(a: PlanArgs) -> Result<()> {
    let mut missing = Vec::new();
    if a.proxy.is_none() {
        missing.push("--proxy CSV (PUBLIC or proxy data, never the private data)");
    }
    if a.domain.is_none() {
        missing.push("--domain SPEC");
    }
    if a.delta.is_none() {
        missing.push("--delta δ");
    }
    if a.out.is_none() {
        missing.push("--out DIR");
    }
    require_with_example(missing, Some(PLAN_EXAMPLE))?;
    let (Some(proxy_path), Some(domain), Some(delta), Some(out)) = (&a.proxy, &a.domain, a.delta, &a.out) else {
        bail!("missing required flags")
    };
    crate::output::files::check_inputs_apart(&[("--proxy", proxy_path.as_path())], &[("--out", out.as_path())])?;
    crate::output::files::check_out_dir(out, a.force)?;
    if a.epsilons.is_empty() || a.epsilons.iter().any(|e| !(e.is_finite() && *e > 0.0)) {
        bail!("--epsilons: every target ε must be finite and > 0 (got {:?})", a.epsilons);
    }
    if !(a.within > 0.0 && a.within < 1.0) {
        bail!("--within {}: the fraction must lie in (0, 1), e.g. 0.1 for 10%", a.within);
    }
    if a.max_fit_points < 2 {
        bail!("--max-fit-points {} must be ≥ 2", a.max_fit_points);
    }
    if let Some(c) = a.reproject_to.as_ref().or(a.crs.as_ref()) {
        if c.is_geographic() && a.kernel.has_lengthscale() {
            bail!(
                "EPSG:{} is geographic (degrees): the {} kernel needs distances in metres — give --reproject-to a projected CRS",
                c.code,
                a.kernel
            );
        }
    }
    eprintln!(
        "plan: reading {} as PUBLIC/proxy data. Never give `plan` the private data: hyperparameters fitted to the data being released void its guarantee.",
        proxy_path.display()
    );
    let cols = gpdp::io::Columns { x: a.x_columns.clone(), y: a.y_column.clone() };
    // The proxy's fingerprint goes into plan.json: `release --plan` refuses a data file with the
    // same bytes (a plan fitted on the private data would publish its fitted hyperparameters).
    let proxy_sha256 = gpdp::plan::sha256_hex(&gpdp::io::read_bounded(proxy_path, gpdp::io::MAX_INPUT_BYTES)?);
    let (_names, mut proxy) = gpdp::io::read_dataset_columns(proxy_path, &cols)?;
    // The records as read (before any reprojection), so that `release --plan` can count the
    // data's records among them whatever their order or number format.
    let fingerprints = gpdp::plan::record_fingerprints(&proxy);
    if let (Some(from), Some(to)) = (&a.crs, &a.reproject_to) {
        proxy = crate::output::gis::reproject_dataset(proxy, from, to, proxy_path)?;
    }
    if proxy.dim() != domain.dim() {
        bail!(
            "{} has {}-D covariates but the domain {domain} is {}-D",
            proxy_path.display(),
            proxy.dim(),
            domain.dim()
        );
    }
    let outside = proxy.x().iter().filter(|p| !domain.contains(p)).count();
    if outside > 0 {
        bail!(
            "{outside} of the {} proxy records lie outside the domain {domain}: the release's domain must hold every record — widen --domain or drop them",
            proxy.len()
        );
    }
    let n_private = a.n.unwrap_or(proxy.len());
    // σ, η and the bounds are in data units under both flags; M_Y is a range's half-width.
    let m_y = match (a.response_range, a.response_bound) {
        (Some(r), _) => r.half(),
        (None, Some(m)) if m.is_finite() && m > 0.0 => m,
        (None, Some(m)) => bail!(
            "--response-bound {m}: must be a finite number > 0 (the bound M_Y on |y|, in the data's units; or give --response-range LO,HI)"
        ),
        (None, None) => bail!(
            "missing --response-range LO,HI (the responses' plausible range in data units) or --response-bound M_Y (|y| ≤ M_Y in the data's units): the response scale is a required public choice, as for release — e.g. {PLAN_EXAMPLE}"
        ),
    };
    // The mechanism's internal responses: centred by the range and clipped.
    let internal: Vec<f64> = proxy
        .y()
        .iter()
        .map(|&y| match a.response_range {
            Some(r) => r.clip(y),
            None => y.clamp(-m_y, m_y),
        })
        .collect();
    let clipped = proxy
        .y()
        .iter()
        .zip(&internal)
        .filter(|(y, v)| a.response_range.map_or(**y, |r| r.to_internal(**y)) != **v)
        .count();
    // The proxy is public: refusing on its values leaks nothing about the private data.
    if clipped == proxy.len() {
        let range = match a.response_range {
            Some(r) => format!("the response range [{}, {}]", r.lo, r.hi),
            None => format!("[−M_Y, M_Y] = [−{m_y}, {m_y}]"),
        };
        bail!(
            "every one of the {} proxy responses lies outside {range}: the fit would see a constant — give --response-range LO,HI, the responses' plausible range in data units (or a --response-bound on their scale)",
            proxy.len()
        );
    }
    if clipped > 0 {
        eprintln!(
            "note: {clipped} of the {} proxy responses lie outside the response range and are clipped, as a release would clip them",
            proxy.len()
        );
    }
    let units_label = a.units.as_deref().map(|u| format!(" {u}")).unwrap_or_default();
    // The proxy is public: its median may be compared and printed.
    if let Some(w) = gpdp::plan::centre_warning(a.response_range, m_y, proxy.y(), &units_label) {
        eprintln!("warning: {w}");
    }
    if a.max_fit_points < 4 || a.max_sim_points < 4 {
        bail!("--max-fit-points and --max-sim-points must be at least 4 (records to fit and to simulate on)");
    }
    // The simulation's size is known now: refuse before the fit if it cannot fit in memory.
    let sim_records = proxy.len().min(a.max_sim_points) as f64;
    let sim_query = (sim_records * a.holdout).round().max(1.0) + Grid::parse(&a.grid, domain)?.points().len() as f64;
    gpdp::check_memory(
        "the utility simulation",
        &[
            gpdp::Need::doubles("the posterior over the simulated records (2 × n²)", 2.0 * sim_records * sim_records),
            gpdp::Need::doubles("the joint covariance of the query points (2 × m²)", 2.0 * sim_query * sim_query),
        ],
        "lower --max-sim-points or use a coarser --grid",
    )?;
    let fit_data = fit_subset(&Dataset::new(proxy.x().clone(), internal)?, a.max_fit_points, a.seed)?;
    if fit_data.len() < proxy.len() {
        eprintln!(
            "note: fitting on a seeded random subset of {} of the {} proxy records (--max-fit-points)",
            fit_data.len(),
            proxy.len()
        );
    }
    let mut bounds = Bounds::default_for(domain, m_y);
    if let Some(s) = &a.lengthscale_bounds {
        bounds.lengthscale = parse_pair("--lengthscale-bounds", s)?;
    }
    if let Some(s) = &a.scale_bounds {
        bounds.scale = parse_pair("--scale-bounds", s)?;
    }
    if let Some(s) = &a.noise_bounds {
        bounds.noise = parse_pair("--noise-bounds", s)?;
    }
    let mut opts = FitOptions::new(bounds);
    opts.restarts = a.restarts;
    opts.seed = a.seed;
    let spinner = Spinner::new(a.quiet);
    let fit = gpdp::plan::fit(a.kernel, &fit_data, &opts, &spinner)?;
    let h = fit.hyper;
    for b in &fit.at_bound {
        eprintln!(
            "warning: the fitted {b} — widen the bounds (--lengthscale-bounds, --scale-bounds, --noise-bounds) or accept it"
        );
    }
    let u = a.units.as_deref().map(|u| format!(" {u}")).unwrap_or_default();
    eprintln!(
        "fit: ℓ = {:.6}, σ = {:.6}{u}, λ = {:.6}{u}; log marginal likelihood {:.3}",
        h.lengthscale, h.scale, h.noise, fit.log_marginal_likelihood
    );

    // The release the plan is for, as a release spec (plan.json stores it;
    // `gpdp release --plan` takes its kernel, ℓ, σ, domain, response scale,
    // units and ridge floor): only the target ε is left to the release.
    let spec = {
        let mut s = gpdp::ReleaseSpec::new(a.kernel, domain.clone(), delta);
        s.lengthscale = a.kernel.has_lengthscale().then_some(h.lengthscale);
        s.scale = Some(h.scale);
        s.draws = a.draws;
        s.response_range = a.response_range;
        s.response_bound = a.response_range.is_none().then_some(m_y);
        s.units = a.units.clone();
        s.ridge_floor = Some(h.ridge());
        s.relation = a.relation;
        s
    };
    // The utility simulation calibrates the ridge at each target ε itself.
    let template = {
        let mut s = spec.clone();
        s.target_epsilon = Some(a.epsilons[0]);
        s.params(n_private)?
    };
    let threshold = a.threshold.unwrap_or(a.response_range.map_or(0.0, |r| r.mid()));
    let uopts = UtilityOptions {
        holdout: a.holdout,
        reps: a.reps,
        seed: a.seed,
        grid: Grid::parse(&a.grid, domain)?,
        threshold,
        ridge_floor: Some(h.ridge()),
    };
    // The simulations run at the proxy's training size; the release entries
    // (ridge, ε) are for `template`'s n, the private dataset's.
    let sim_proxy = fit_subset(&proxy, a.max_sim_points, a.seed ^ 0x5111_u64)?;
    if sim_proxy.len() < proxy.len() {
        eprintln!(
            "note: simulating the private map on a seeded random subset of {} of the {} proxy records (--max-sim-points)",
            sim_proxy.len(),
            proxy.len()
        );
    }
    let utility = gpdp::plan::utility_curve(&template, h, &sim_proxy, &a.epsilons, &uopts, &spinner)
        .with_context(|| format!("simulating releases on {}", proxy_path.display()))?;
    spinner.finish();
    let assessment = gpdp::plan::assess(&utility, a.within, threshold, &units_label);
    let plan_crs = a.reproject_to.as_ref().or(a.crs.as_ref()).map(|c| format!("EPSG:{}", c.code));
    let plan = Plan {
        version: gpdp::plan::PLAN_VERSION,
        note: gpdp::plan::PLAN_NOTE.to_string(),
        proxy: proxy_path.display().to_string(),
        proxy_sha256,
        proxy_records: proxy.len(),
        proxy_record_fingerprints: Some(fingerprints),
        fitted_ridge: h.ridge(),
        fit,
        bounds,
        release: PlannedRelease {
            n: n_private,
            domain: domain.to_string(),
            response_range: a.response_range,
            response_bound: m_y,
            units: a.units.clone(),
            draws: a.draws.get(),
            delta,
            threshold,
            crs: plan_crs,
            spec,
        },
        utility,
        assessment: Some(assessment.clone()),
    };
    let units = a.units.clone().unwrap_or_default();
    write_dir_atomically(out, a.force, |dir| {
        crate::output::files::write_atomically(&dir.join("plan.json"), &serde_json::to_vec_pretty(&plan)?, false)?;
        write_csv(&dir.join("utility.csv"), &plan)?;
        plot(&dir.join("utility.png"), &plan, &units)
    })?;
    println!("plan for n = {n_private}, δ = {delta}, {} draw(s), from {} proxy records:", a.draws, plan.proxy_records);
    println!("  relation: {} — protects {}", a.relation, a.relation.protects());
    if a.relation == gpdp::NeighbouringRelation::ChangeResponse {
        println!(
            "  (ε from the change-response bound for any covariates; a release with its own public covariates has ε at most this)"
        );
    }
    println!("  kernel {} ℓ = {:.6}, σ = {:.6}, fitted ridge λ/σ = {:.6}", a.kernel, h.lengthscale, h.scale, h.ridge());
    println!(
        "  target ε   ε      ridge      hold-out RMSE{}   IoU {{f ≥ {threshold}}}",
        if units.is_empty() { String::new() } else { format!(" [{units}]") }
    );
    for p in &plan.utility.points {
        println!(
            "  {:<9}  {:<6.3} {:<10.4} {:.4} ± {:.4}        {:.3} ± {:.3}{}",
            p.target_epsilon,
            p.epsilon,
            p.ridge,
            p.holdout_rmse.mean,
            p.holdout_rmse.sd,
            p.excursion_iou.mean,
            p.excursion_iou.sd,
            if p.ridge_is_fitted { "  (fitted ridge; ε below target)" } else { "" }
        );
    }
    println!(
        "  non-private posterior mean: RMSE {:.4}, IoU {:.3}",
        plan.utility.baseline_rmse.mean, plan.utility.baseline_iou.mean
    );
    if let (Some(r), Some(i)) = (plan.utility.constant_rmse, plan.utility.constant_iou) {
        println!("  constant map (the training mean everywhere): RMSE {:.4}, IoU {:.3}", r.mean, i.mean);
    }
    let pct = 100.0 * a.within;
    let smallest = |e: Option<f64>| e.map_or("none of the planned ε".to_string(), |e| format!("ε = {e:.3}"));
    println!(
        "  within {pct:.0}% of non-private: RMSE from {}; IoU from {}",
        smallest(assessment.rmse_epsilon),
        smallest(assessment.iou_epsilon)
    );
    for w in &assessment.warnings {
        eprintln!("warning: {w}");
    }
    println!(
        "  for a map, L = 1 draw is optimal: the mean of L draws has the law of one draw with its noise scaled by 1/√L, so more draws only cost ε{}",
        if a.draws.get() > 1 { format!(" (this plan has L = {})", a.draws) } else { String::new() }
    );
    println!("wrote plan.json, utility.csv, utility.png into {}", out.display());
    println!("release with: gpdp release --plan {} --target-epsilon ε …", out.join("plan.json").display());
    Ok(())
}

fn write_csv(path: &Path, plan: &Plan) -> Result<()> {
    // The baselines (non-private posterior mean, constant map) repeat on every
    // row, so that each is one column to plot as a horizontal line.
    let u = &plan.utility;
    let (cr, ci) = (u.constant_rmse.map(|v| v.mean), u.constant_iou.map(|v| v.mean));
    let opt = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    let mut s = String::from(
        "target_epsilon,epsilon,ridge,ridge_is_fitted,holdout_rmse_mean,holdout_rmse_sd,iou_mean,iou_sd,nonprivate_rmse_mean,nonprivate_iou_mean,constant_rmse_mean,constant_iou_mean\n",
    );
    for p in &u.points {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{}\n",
            p.target_epsilon,
            p.epsilon,
            p.ridge,
            p.ridge_is_fitted,
            p.holdout_rmse.mean,
            p.holdout_rmse.sd,
            p.excursion_iou.mean,
            p.excursion_iou.sd,
            u.baseline_rmse.mean,
            u.baseline_iou.mean,
            opt(cr),
            opt(ci)
        ));
    }
    crate::output::files::write_atomically(path, s.as_bytes(), false)
}

fn plot(path: &Path, plan: &Plan, units: &str) -> Result<()> {
    let pts = &plan.utility.points;
    let xs: Vec<f64> = pts.iter().map(|p| p.epsilon).collect();
    let unit = if units.is_empty() { String::new() } else { format!(" [{units}]") };
    let series = |label: &str, ys: Vec<f64>, err: Vec<f64>| Series {
        label: label.to_string(),
        xs: xs.clone(),
        ys,
        err: Some(err),
        style: SeriesStyle::LinePoints,
        color: None,
    };
    let log_x = xs.iter().all(|&x| x > 0.0) && xs.len() > 1;
    // Every planned ε is a labelled tick; RMSE starts at 0.
    let x_ticks = Some(xs.clone());
    let mut rmse_lines = vec![(plan.utility.baseline_rmse.mean, "non-private mean".to_string())];
    let mut iou_lines = vec![(plan.utility.baseline_iou.mean, "non-private mean".to_string())];
    if let (Some(r), Some(i)) = (plan.utility.constant_rmse, plan.utility.constant_iou) {
        rmse_lines.push((r.mean, "constant map".into()));
        iou_lines.push((i.mean, "constant map".into()));
    }
    let rmse_top = pts
        .iter()
        .map(|p| p.holdout_rmse.mean + p.holdout_rmse.sd)
        .chain(rmse_lines.iter().map(|l| l.0))
        .fold(0.0f64, f64::max);
    let charts = [
        LineChart {
            title: "hold-out RMSE of one released path (simulated on the proxy)".to_string(),
            x_label: "ε of the release".into(),
            y_label: format!("RMSE{unit}"),
            log_x,
            log_y: false,
            series: vec![series(
                "private path (± sd over splits)",
                pts.iter().map(|p| p.holdout_rmse.mean).collect(),
                pts.iter().map(|p| p.holdout_rmse.sd).collect(),
            )],
            hlines: rmse_lines,
            x_range: None,
            y_range: Some((0.0, (1.08 * rmse_top).max(f64::MIN_POSITIVE))),
            x_ticks: x_ticks.clone(),
        },
        LineChart {
            title: format!("excursion set {{f ≥ {}}}: IoU with the proxy's", plan.release.threshold),
            x_label: "ε of the release".into(),
            y_label: "IoU".into(),
            log_x,
            log_y: false,
            series: vec![series(
                "private path (± sd over splits)",
                pts.iter().map(|p| p.excursion_iou.mean).collect(),
                pts.iter().map(|p| p.excursion_iou.sd).collect(),
            )],
            hlines: iou_lines,
            x_range: None,
            y_range: Some((0.0, 1.05)),
            x_ticks,
        },
    ];
    line_charts(path, &charts, (620, 440))
}
