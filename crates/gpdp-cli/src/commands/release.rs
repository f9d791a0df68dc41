//! `gpdp release`: the private release of posterior sample paths.
//!
//! The command parses flags and files, builds the library's
//! [`gpdp::Mechanism`] from the public flags, lets it release, and writes the
//! published folder atomically ([`crate::output::release`]). Facts about the
//! private data (clipping counts, timings) go to stderr and, with `--log`, to
//! an operator log outside the published folder.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use gpdp::{
    Dataset, Diagnostics, Grid, Mechanism, OnUnbounded, PrivateRelease, Query, ReleaseRng, SamplerPolicy, Solve,
};
use serde_json::json;

use crate::args::{ReleaseArgs, parse_f64, require_with_example};
use crate::output::files::{
    check_inputs_apart, check_log_outside, check_out_dir, check_out_file, check_private_outside, write_atomically,
    write_dir_atomically,
};
use crate::output::outcome::PublishedThenFailed;
use crate::output::progress::Spinner;
use crate::output::release::write_release;

/// Arguments of `gpdp release`.
#[derive(Args, Debug, Clone)]
#[command(allow_negative_numbers = true)]
#[command(
    long_about = "Release L posterior sample paths of a Gaussian process fitted to private data, with an (ε, δ)-differential-privacy guarantee (Theorem 3.1 / Proposition 2).\n\nHyperparameters (kernel, ℓ, σ, η, and r or the target ε) must NOT be tuned on the private data: choose them on public or synthetic data, or from domain knowledge. Tuning them on the private data voids the guarantee.\n\nThe --out folder holds only what may be published: paths.csv, report.json and the map/GeoJSON or paths figure, all computed from the released draws and public inputs. Facts about the private data (how many responses were clipped, timings) are printed on stderr and, with --log, written to an operator log that must stay private (it is refused inside --out).\n\nEvery output location (--out, --log, the ledger) is checked before anything is drawn, and no input (--data, --at, --plan, --ledger) may lie inside --out or be an output.",
    after_long_help = "Exit status:\n  0    released: the folder, the ledger entry and the log are all written\n  1    refused or failed: NOTHING was published (a ledger reservation made before\n       the failure stays counted against the budget)\n  2    the command line did not parse\n  3    the release WAS published (the folder is in place and counted in the ledger),\n       but a later step failed: recording it in the ledger, writing --log or\n       printing --json; the message says which and where. Do not run the release\n       again: that would release the data a second time.\n  130  interrupted (SIGINT; 143 for SIGTERM): partial output removed, nothing published",
    mut_arg("scale", |a| a
        .help("Kernel scale σ > 0 (prior GP(0, σ²k)); finite for a release (σ = inf, the covariance-only bound, is for `gpdp account` and `gpdp calibrate`). Larger σ = more private (mean term only).")
        .value_parser(crate::args::parse_release_scale))
)]
pub struct ReleaseCmdArgs {
    /// Private training data CSV: covariate columns x (1-D) or x1..xd, and y.
    #[arg(long, value_name = "CSV")]
    pub data: Option<PathBuf>,

    #[command(flatten)]
    pub model: ReleaseArgs,

    /// Target δ ∈ (0, 1) of the guarantee.
    #[arg(long, value_name = "δ", value_parser = parse_f64)]
    pub delta: Option<f64>,

    /// Calibrate to this ε instead of giving --ridge (see --solve). With
    /// --ledger, `remaining` calibrates to the largest target whose release
    /// still fits in the dataset's remaining budget.
    #[arg(long = "target-epsilon", value_name = "ε|remaining", value_parser = parse_target_epsilon)]
    pub target_epsilon: Option<f64>,

    /// With --target-epsilon: which parameter to calibrate (ridge, scale or gp-noise).
    #[arg(long, value_name = "PARAM", default_value = "ridge", requires = "target_epsilon")]
    pub solve: Solve,

    /// Query grid over the interval/box domain, end points included: N (every axis) or N1xN2.
    #[arg(long, value_name = "N[xM]", conflicts_with = "at")]
    pub grid: Option<String>,

    /// Query grid by its spacing instead of --grid: nodes every R covariate
    /// units (metres in a projected CRS) from each lower end of the domain
    /// box to its upper end, which must be a whole number of R apart (so
    /// that paths.tif's pixels are exactly R).
    #[arg(long, value_name = "R", value_parser = parse_f64, conflicts_with_all = ["at", "grid"])]
    pub resolution: Option<f64>,

    /// Query points CSV (covariate columns as in --data).
    #[arg(long, value_name = "CSV")]
    pub at: Option<PathBuf>,

    /// Output directory: the published release (created; refused if it exists
    /// and is not empty, unless --force).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Replace an existing non-empty output directory.
    #[arg(long)]
    pub force: bool,

    /// Refuse to release (write nothing) if the guarantee's ε exceeds this.
    #[arg(long = "max-epsilon", value_name = "ε", value_parser = parse_f64)]
    pub max_epsilon: Option<f64>,

    /// Excursion level t for the map contour and excursion.geojson ({f ≥ t}),
    /// in data units. Default: the plan's threshold with --plan, else 0.
    #[arg(long, value_name = "t", value_parser = parse_f64)]
    pub threshold: Option<f64>,

    /// Responses beyond --response-bound: clip (default) or reject.
    #[arg(long = "on-unbounded", value_name = "clip|reject", default_value = "clip")]
    pub on_unbounded: OnUnbounded,

    /// Sampler: auto (state-space on a 1-D domain with the exponential,
    /// matern32 or matern52 kernel — exact, O(n + m); else lattice when
    /// --grid and --covariate-lattice allow it; else dense), dense, lattice,
    /// or state-space. Chosen from public inputs only.
    #[arg(long, value_name = "auto|dense|lattice|state-space", default_value = "auto")]
    pub sampler: SamplerPolicy,

    /// Declare (publicly) that every covariate lies on the regular lattice of
    /// N (or N1xN2) points per axis over the domain's box, end points
    /// included — e.g. sensors on a survey grid. Enables the fast exact
    /// lattice sampler on --grid queries; data off the lattice are refused.
    #[arg(long = "covariate-lattice", value_name = "N[xM]", conflicts_with = "snap")]
    pub covariate_lattice: Option<String>,

    /// Round every covariate to the nearest node of the public lattice of
    /// spacing h over the domain's box (h must divide every side), of the
    /// --grid's lattice with `--snap grid`, or of N1xN2 nodes, *before* the mechanism. A public
    /// per-record transformation: the guarantee holds for the original
    /// records; each covariate moves by at most h·√d/2 (stated in the
    /// report). Lets the fast exact lattice sampler serve a --grid with any
    /// number of sensors; repeated nodes are aggregated exactly.
    #[arg(long, value_name = "h|grid|N1xN2")]
    pub snap: Option<String>,

    /// Covariate columns of --data (and --at) by name, in order, e.g.
    /// `--x easting,northing` (default: x, or x1, x2, …).
    #[arg(long = "x", value_name = "COLS", value_delimiter = ',')]
    pub x_columns: Option<Vec<String>>,

    /// Response column of --data by name, e.g. `--y pm25` (default: y).
    #[arg(long = "y", value_name = "COL")]
    pub y_column: Option<String>,

    /// The responses' plausible range in data units, LO,HI (public; e.g.
    /// 0,60 for µg/m³). Responses are mapped onto [−1, 1] (M_Y = 1) for the
    /// mechanism, clipped to the range, and every output — paths, maps,
    /// --threshold — is in data units. Replaces --response-bound.
    #[arg(
        long = "response-range",
        value_name = "LO,HI",
        conflicts_with = "response_bound",
        allow_hyphen_values = true
    )]
    pub response_range: Option<gpdp::model::units::ResponseRange>,

    /// The responses' unit, a label for the report and the map (e.g. µg/m³;
    /// printable text, at most 40 characters).
    #[arg(long, value_name = "UNIT", value_parser = crate::args::parse_units)]
    pub units: Option<String>,

    /// Format of the figures — map.png and maps.png (2-D grid) or paths.png
    /// (1-D): png, svg (vector graphics for reports and journals: the same
    /// title, colour bar with units, hatched excursion cells, contour and
    /// small multiples; map.svg, maps.svg, paths.svg), or both: png,svg. The
    /// figures are not georeferenced: with --crs the GeoTIFF paths.tif (and
    /// its QGIS and SLD styles, paths.qml and paths.sld) is the GIS layer.
    #[arg(long = "map-format", value_name = "png|svg|png,svg", default_value = "png")]
    pub map_format: crate::output::release::MapFormats,

    /// The covariates' coordinate reference system, EPSG:CODE — a projected
    /// CRS, so that distances (and ℓ) are in metres (e.g. EPSG:27700, British
    /// National Grid). Adds paths.tif (a GeoTIFF, one band per draw) with its
    /// QGIS and SLD styles (paths.qml, paths.sld), and
    /// writes excursion.geojson in WGS 84 longitude/latitude (RFC 7946). A
    /// geographic (degrees) CRS is refused for distance-based kernels.
    #[arg(long, value_name = "EPSG:CODE")]
    pub crs: Option<crate::output::gis::Crs>,

    /// Reproject the covariates from --crs (e.g. EPSG:4326 longitude/latitude)
    /// to this projected CRS before the mechanism — a public per-record
    /// transformation, so the guarantee holds for the original records. The
    /// domain, lengthscale, grid and every output are then in this CRS.
    #[arg(long = "reproject-to", value_name = "EPSG:CODE", requires = "crs")]
    pub reproject_to: Option<crate::output::gis::Crs>,

    /// Take the kernel, ℓ and σ — and, unless given, the domain, response
    /// range, units, δ, threshold and CRS — from a plan.json written by `gpdp plan` on public
    /// or proxy data. With --target-epsilon the ridge is the calibrated one
    /// or the plan's fitted λ/σ, whichever is larger (then ε is below the
    /// target). Flags that contradict the plan are refused.
    #[arg(long, value_name = "PLAN")]
    pub plan: Option<PathBuf>,

    /// With --target-epsilon (solving the ridge): the smallest ridge
    /// accepted — the release uses it when it meets the target, so ε may be
    /// below the target. --plan sets it to the plan's fitted λ/σ.
    #[arg(long = "ridge-floor", value_name = "r", value_parser = parse_f64, requires = "target_epsilon")]
    pub ridge_floor: Option<f64>,

    /// Record the release in this privacy-budget ledger (see `gpdp ledger
    /// init`) under --dataset: refused, before anything is drawn, when the
    /// dataset's composed guarantee would exceed its budget. The budget is
    /// reserved before drawing and the release committed once published.
    #[arg(long, value_name = "FILE", requires = "dataset")]
    pub ledger: Option<PathBuf>,

    /// The dataset's name in the ledger.
    #[arg(long, value_name = "NAME", requires = "ledger")]
    pub dataset: Option<String>,

    /// No progress spinner on stderr (it is also off when stderr is not a terminal).
    #[arg(long)]
    pub quiet: bool,

    /// Operator log (JSON) of facts about the private data — clipping count,
    /// timings, the sampler's reason. PRIVATE: keep it out of anything you
    /// publish (refused inside --out).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// With --sensitivity rkhs (Lemma B.8): state that every response is the
    /// noiseless value y = f*(x) of a function with ‖f*‖_H ≤ --rkhs-norm. The
    /// guarantee then rests on this assumption (report.json says so); it
    /// cannot be checked from the data, and a release in which any response
    /// had to be clipped is refused.
    #[arg(long = "assume-rkhs-responses")]
    pub assume_rkhs_responses: bool,

    /// Reproducible draws for experiments and tests. The output is then NOT a
    /// private release (report.json says "private": false).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,

    /// Print report.json to standard output.
    #[arg(long)]
    pub json: bool,

    /// The neighbouring relation the guarantee is for: replace-one (default;
    /// protects each whole record, covariates and response; n public) or
    /// change-response (you declare the covariates — e.g. sensor locations —
    /// public; each reading is protected). With change-response the data's
    /// own covariates enter the exact Gaussian accounting
    /// (docs/proofs/change-response.md) and report.json may state facts
    /// about them (they are public).
    #[arg(long, value_name = "RELATION", default_value = "replace-one", value_parser = crate::commands::account::parse_relation)]
    pub relation: gpdp::NeighbouringRelation,

    /// With --relation change-response: the published covariates file the
    /// data's covariates must equal row by row (columns x or x1..xd, or
    /// those named by --covariates-x); a release whose covariates differ is
    /// refused.
    #[arg(long, value_name = "CSV")]
    pub covariates: Option<PathBuf>,

    /// With --covariates: its covariate columns, comma-separated.
    #[arg(long = "covariates-x", value_name = "COLS", value_delimiter = ',', requires = "covariates")]
    pub covariates_x: Option<Vec<String>>,

    /// Where the hyperparameters came from (set by --plan).
    #[arg(skip)]
    pub hyperparameter_source: gpdp::HyperparameterSource,

    /// The plan's proxy record fingerprints (set by --plan).
    #[arg(skip)]
    pub plan_fingerprints: Option<Vec<String>>,
}

/// `--target-epsilon`: a finite number, or `remaining` (held as +∞ until
/// [`fit_remaining`] replaces it by the largest target that fits).
fn parse_target_epsilon(s: &str) -> std::result::Result<f64, String> {
    if s.trim().eq_ignore_ascii_case("remaining") {
        return Ok(f64::INFINITY);
    }
    parse_f64(s).map_err(|e| format!("{e} (give ε, or `remaining` with --ledger)"))
}

/// Whether `--target-epsilon remaining` was given.
fn wants_remaining(a: &ReleaseCmdArgs) -> bool {
    a.target_epsilon == Some(f64::INFINITY)
}

/// The release at `target` ε, as `a` builds it.
fn at_target(a: &ReleaseCmdArgs, data: &Dataset, target: f64) -> gpdp::Result<Mechanism> {
    let mut b = a.clone();
    b.target_epsilon = Some(target);
    b.mechanism(data).map_err(|e| gpdp::Error::Input(e.to_string()))
}

/// `--target-epsilon remaining`: the largest target whose release fits in
/// the ledger's remaining budget for --dataset (public inputs and the ledger
/// only), which replaces `remaining` in `a`.
fn fit_remaining(a: &mut ReleaseCmdArgs, data: &Dataset) -> Result<Mechanism> {
    let (Some(path), Some(dataset)) = (&a.ledger, &a.dataset) else {
        bail!(
            "--target-epsilon remaining calibrates to the remaining budget of a ledger: give --ledger FILE --dataset NAME (or a number)"
        )
    };
    let ledger = gpdp::ledger::Ledger::open_existing(path)?;
    let found = ledger.largest_fitting_target(dataset, |t| at_target(a, data, t))?;
    let Some((target, m)) = found else {
        let remaining =
            (ledger.budget(dataset)?.epsilon - gpdp::ledger::spent_epsilon(&ledger.entries(dataset)?)).max(0.0);
        bail!(
            "--target-epsilon remaining: no release of these parameters fits in what remains of the budget of {} (remaining ε = {remaining:.4}) — nothing was drawn",
            gpdp::ledger::names::quoted(dataset)
        )
    };
    eprintln!(
        "--target-epsilon remaining: calibrated to target ε = {target:.6}, the largest that fits in the budget of {}",
        gpdp::ledger::names::quoted(dataset)
    );
    a.target_epsilon = Some(target);
    Ok(m)
}

/// The refusal of a release that does not fit, with the largest
/// `--target-epsilon` that would (rounded down to 4 decimals, so that it
/// fits as printed).
fn with_largest_fitting(
    e: gpdp::Error,
    a: &ReleaseCmdArgs,
    data: &Dataset,
    ledger: &gpdp::ledger::Ledger,
) -> anyhow::Error {
    let gpdp::Error::BudgetExceeded(msg) = &e else { return e.into() };
    let Some(dataset) = &a.dataset else { return e.into() };
    let found = ledger.largest_fitting_target(dataset, |t| at_target(a, data, t)).ok().flatten();
    let hint = match found {
        Some((t, _)) => {
            let shown = (t * 1e4).floor() / 1e4;
            if shown > 0.0 {
                format!("; the largest --target-epsilon that fits is {shown:.4} (or give --target-epsilon remaining)")
            } else {
                format!("; only a --target-epsilon below 0.0001 fits ({t:.3e}; or give --target-epsilon remaining)")
            }
        }
        None => "; no --target-epsilon of these parameters fits".to_string(),
    };
    anyhow::anyhow!("{msg}{hint}")
}

impl ReleaseCmdArgs {
    /// Refuses with every required flag that is absent, at once.
    pub fn check_required(&self) -> Result<()> {
        let calibrating = self.target_epsilon.is_some();
        if calibrating && self.solve == Solve::Draws {
            bail!(
                "--solve draws is not available for a release: the number of draws is fixed by --draws L (`gpdp calibrate --solve draws` finds the largest L meeting a target ε); use --solve ridge, scale or gp-noise"
            );
        }
        let mut missing = Vec::new();
        if self.data.is_none() {
            missing.push("--data CSV");
        }
        let need_ridge = !calibrating || self.solve != Solve::Ridge;
        let need_scale = !calibrating || self.solve != Solve::Scale;
        for m in self.model.missing(need_ridge, need_scale) {
            missing.push(match m {
                "--ridge r" if calibrating => {
                    "--ridge r (--target-epsilon calibrates the --solve parameter, not the ridge)"
                }
                "--ridge r" => "--ridge r (or --target-epsilon ε to calibrate it)",
                m if m.starts_with("--scale") => "--scale σ (finite, > 0)",
                m => m,
            });
        }
        if self.delta.is_none() {
            missing.push("--delta δ");
        }
        if self.response_range.is_none() && self.model.response_bound.is_none() {
            missing.push(
                "--response-range LO,HI (the responses' plausible range in data units) or --response-bound M_Y (|y| ≤ M_Y in the data's units)",
            );
        }
        if self.grid.is_none() && self.at.is_none() {
            missing.push("--grid N[xM] or --at CSV (the query points)");
        }
        if self.out.is_none() {
            missing.push("--out DIR");
        }
        require_with_example(missing, Some(crate::args::RELEASE_EXAMPLE))
    }

    /// The release's spec: the one mapping of the public flags onto
    /// [`gpdp::ReleaseSpec`] (each flag `--k-e-y` is the key `k_e_y`).
    pub fn spec(&self) -> Result<gpdp::ReleaseSpec> {
        self.check_required()?;
        let m = &self.model;
        let mut s = gpdp::ReleaseSpec::from_model(m.model()?, self.delta.context("missing --delta")?);
        s.draws = m.draws.unwrap_or_default();
        s.conversion = m.conversion.unwrap_or_default();
        s.target_epsilon = self.target_epsilon;
        s.solve = self.target_epsilon.map(|_| self.solve);
        s.ridge_floor = self.ridge_floor;
        s.max_epsilon = self.max_epsilon;
        s.response_range = self.response_range;
        s.units = self.units.clone();
        s.on_unbounded = self.on_unbounded;
        s.sampler = self.sampler;
        s.assume_rkhs_responses = self.assume_rkhs_responses;
        s.covariate_lattice = self.covariate_lattice.clone();
        s.relation = self.relation;
        s.snap = match self.snap.as_deref() {
            None => None,
            Some(spec) if spec.trim().eq_ignore_ascii_case("grid") => {
                Some(gpdp::spec::Snap::Counts(self.grid.clone().context("--snap grid needs a --grid query")?))
            }
            Some(spec) if spec.contains(['x', 'X', '×']) => Some(gpdp::spec::Snap::Counts(spec.to_string())),
            Some(spec) => {
                Some(gpdp::spec::Snap::Spacing(parse_f64(spec).map_err(|e| anyhow::anyhow!("--snap {spec}: {e}"))?))
            }
        };
        Ok(s)
    }

    /// The checked (and, with --target-epsilon, calibrated) mechanism for
    /// releasing `data` — from public flags only, and under change-response
    /// from the data's covariates, which the relation declares public.
    pub fn mechanism(&self, data: &Dataset) -> Result<Mechanism> {
        let spec = self.spec()?;
        let dim = spec.domain.dim();
        let crs = match (&self.reproject_to, &self.crs) {
            (Some(to), _) => Some(("--reproject-to", to)),
            (None, Some(c)) => Some(("--crs", c)),
            (None, None) => None,
        };
        if let Some((flag, c)) = crs {
            if c.is_geographic() && spec.kernel.has_lengthscale() {
                let remedy = if flag == "--crs" {
                    "give --reproject-to a projected CRS (e.g. EPSG:27700, or the UTM zone of the data), with the domain in its metres"
                } else {
                    "give --reproject-to a projected CRS instead (e.g. EPSG:27700, or the UTM zone of the data)"
                };
                bail!(
                    "{flag} EPSG:{} is geographic (longitude/latitude in degrees): the {} kernel needs distances in metres — {remedy}",
                    c.code,
                    spec.kernel
                );
            }
            if dim != 2 {
                bail!("{flag} needs 2-D covariates (easting, northing); the domain is {dim}-D");
            }
        }
        let m = spec.mechanism_for_data(data, self.hyperparameter_source.clone())?;
        if let Some(g) = &m.privacy().gaussian {
            self.model.refuse_unused_accounting(
                if g.neighbouring_relation == gpdp::NeighbouringRelation::ChangeResponse {
                    "under change-one-response the release is a Gaussian mechanism"
                } else {
                    "σ = 0 makes the noise data-free"
                },
            )?;
        }
        Ok(m)
    }

    /// The query and its coordinate column names.
    pub fn query(&self, data_names: &[String], dim: usize) -> Result<(Query, Vec<String>)> {
        let domain = self.model.domain.as_ref().context("missing --domain (e.g. interval:0,1 or box:0,1,0,1)")?;
        match (&self.grid, &self.at) {
            (Some(g), None) => Ok((Query::Grid(Grid::parse(g, domain)?), data_names.to_vec())),
            (None, Some(p)) => {
                let bytes = gpdp::io::read_bounded(p, gpdp::io::MAX_INPUT_BYTES)?;
                let cols = gpdp::io::Columns { x: self.x_columns.clone(), y: None };
                let t = gpdp::io::read_table_columns(&p.display().to_string(), &bytes, false, &cols)?;
                if t.x.dim() != dim {
                    bail!("{} has {}-D points but the data are {}-D", p.display(), t.x.dim(), dim);
                }
                Ok((Query::Points(t.x), t.x_names))
            }
            _ => bail!("give the query points: --grid N[xM] or --at points.csv"),
        }
    }
}

/// Fills the release's kernel, ℓ and σ (and, when absent, domain, response
/// range and units) from `gpdp plan`'s plan.json, and its ridge floor;
/// refuses flags that contradict the plan.
fn apply_plan(a: &mut ReleaseCmdArgs, path: &Path) -> Result<()> {
    let bytes = gpdp::io::read_bounded(path, gpdp::io::MAX_INPUT_BYTES)?;
    // Parsed, version-checked and brought to this version (σ in data units) by the library.
    let plan = gpdp::plan::Plan::from_json(&bytes, &path.display().to_string())?;
    // A plan fitted on the private data itself publishes that data's maximum-likelihood
    // hyperparameters under a DP statement that does not cover them: refuse the same bytes, and
    // warn when the data come from the file the plan was fitted on (since changed).
    if let Some(data) = &a.data {
        let hash = gpdp::plan::sha256_hex(&gpdp::io::read_bounded(data, gpdp::io::MAX_INPUT_BYTES)?);
        if hash == plan.proxy_sha256 {
            bail!(
                "refusing to release: --data {} has the same SHA-256 ({hash}) as the proxy the plan was fitted on (--plan {}, proxy {}) — hyperparameters fitted on the private data are not covered by the guarantee; fit the plan on public or proxy data",
                data.display(),
                path.display(),
                plan.proxy
            );
        }
        let same_path = match (std::fs::canonicalize(data), std::fs::canonicalize(&plan.proxy)) {
            (Ok(d), Ok(p)) => d == p,
            _ => Path::new(&plan.proxy) == data.as_path(),
        };
        if same_path {
            eprintln!(
                "WARNING: --data {} is the file the plan was fitted on ({}), although its contents changed since; hyperparameters fitted on the private data void the guarantee",
                data.display(),
                plan.proxy
            );
        }
    }
    a.plan_fingerprints = plan.proxy_record_fingerprints.clone();
    a.hyperparameter_source = gpdp::HyperparameterSource::Plan {
        plan: path.display().to_string(),
        proxy: plan.proxy.clone(),
        proxy_sha256: plan.proxy_sha256.clone(),
    };
    // The plan's release spec: everything but the target ε.
    let planned_spec = &plan.release.spec;
    if planned_spec.relation != a.relation {
        // Its ridges (and utility) are for another accountant: refused, never switched silently.
        bail!(
            "--plan {}: the plan was made for --relation {} but this release is for --relation {}{}; pass --relation {} (the relation is the data holder's declaration), or make the plan with --relation {}",
            path.display(),
            planned_spec.relation.key(),
            a.relation.key(),
            if a.relation == gpdp::NeighbouringRelation::ReplaceOne { " (the default)" } else { "" },
            planned_spec.relation.key(),
            a.relation.key()
        );
    }
    let kind = planned_spec.kernel;
    let h = gpdp::plan::Hyper {
        lengthscale: planned_spec.lengthscale.unwrap_or(1.0),
        scale: planned_spec.scale.with_context(|| format!("--plan {}: its spec has no scale", path.display()))?,
        ..plan.fit.hyper
    };
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1e-300);
    let m = &mut a.model;
    if m.kernel.is_some_and(|k| k != kind) {
        bail!("--kernel {} contradicts the plan's {kind} (--plan {}): drop one", m.kernel.unwrap(), path.display());
    }
    if m.lengthscale.is_some_and(|l| !same(l, h.lengthscale)) {
        bail!("--lengthscale contradicts the plan's ℓ = {} (--plan {}): drop one", h.lengthscale, path.display());
    }
    if m.scale.is_some_and(|s| !same(s, h.scale)) {
        bail!("--scale contradicts the plan's σ = {} (--plan {}): drop one", h.scale, path.display());
    }
    m.kernel = Some(kind);
    m.lengthscale = Some(h.lengthscale);
    m.scale = Some(h.scale);
    let mut taken = vec![format!("kernel {kind}, ℓ = {}, σ = {}", h.lengthscale, h.scale)];
    let planned: gpdp::model::domain::Domain = planned_spec.domain.clone();
    match &m.domain {
        None => {
            taken.push(format!("domain {planned}"));
            m.domain = Some(planned);
        }
        Some(d) if *d != planned => {
            eprintln!("note: --domain {d} differs from the plan's {planned}; the plan's ℓ was fitted for its domain")
        }
        Some(_) => {}
    }
    if a.response_range.is_none() && m.response_bound.is_none() {
        if let Some(r) = planned_spec.response_range {
            taken.push(format!("response range {},{}", r.lo, r.hi));
            a.response_range = Some(gpdp::model::units::ResponseRange::new(r.lo, r.hi)?);
        } else {
            m.response_bound = planned_spec.response_bound;
        }
    } else if a.response_range.map(|r| (r.lo, r.hi)) != planned_spec.response_range.map(|r| (r.lo, r.hi)) {
        bail!(
            "the response range/bound differs from the plan's (--plan {}): σ was fitted on responses centred on and clipped to the plan's range — drop --response-range/--response-bound or re-plan",
            path.display()
        );
    }
    if a.units.is_none() {
        a.units = planned_spec.units.clone();
    }
    match a.delta {
        None => {
            taken.push(format!("δ = {}", plan.release.delta));
            a.delta = Some(plan.release.delta);
        }
        Some(d) if d != plan.release.delta => {
            eprintln!(
                "note: --delta {d} differs from the plan's δ = {}; the plan's utility was simulated at its δ",
                plan.release.delta
            )
        }
        Some(_) => {}
    }
    if a.threshold.is_none() {
        a.threshold = Some(plan.release.threshold);
        taken.push(format!("threshold t = {}", plan.release.threshold));
    }
    if let Some(code) = &plan.release.crs {
        let planned: crate::output::gis::Crs =
            code.parse().with_context(|| format!("the crs of --plan {}", path.display()))?;
        // The plan's CRS is that of its domain and ℓ: after any reprojection.
        let given = a.reproject_to.as_ref().or(a.crs.as_ref());
        match given {
            None => {
                taken.push(format!("CRS {code}"));
                a.crs = Some(planned);
            }
            Some(c) if c.code != planned.code => bail!(
                "--{} EPSG:{} contradicts the plan's CRS {code} (--plan {}; its domain and ℓ are in {code}): drop it, or reproject to it with --crs EPSG:{} --reproject-to {code}",
                if a.reproject_to.is_some() { "reproject-to" } else { "crs" },
                c.code,
                path.display(),
                c.code
            ),
            Some(_) => {}
        }
    }
    if a.model.ridge.is_none() && a.solve == Solve::Ridge {
        let fitted_ridge = planned_spec.ridge_floor.unwrap_or(plan.fitted_ridge);
        if a.ridge_floor.is_some_and(|f| f != fitted_ridge) {
            bail!(
                "--ridge-floor contradicts the plan's fitted ridge λ/σ = {} (--plan {}): drop one",
                fitted_ridge,
                path.display()
            );
        }
        a.ridge_floor = Some(fitted_ridge);
        taken.push(format!("ridge floor λ/σ = {fitted_ridge}"));
    }
    eprintln!("plan {}: took {}", path.display(), taken.join("; "));
    Ok(())
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

/// SHA-256 over the published files, in the order listed: for each, its
/// name, a NUL, its length (8 bytes, little-endian) and its bytes.
fn hash_files(dir: &Path, names: &[String]) -> Result<String> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for name in names {
        let bytes = std::fs::read(dir.join(name)).with_context(|| format!("hashing {}", dir.join(name).display()))?;
        h.update(name.as_bytes());
        h.update([0u8]);
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Above this fraction of clipped responses the operator is warned loudly.
const LOUD_CLIPPING: f64 = 0.03;

/// Tells the operator, on stderr, what the release did with the private
/// data (never written into the published folder).
/// `plan`: the plan.json the response range came from, if any (the advice
/// then is to re-plan, since a release may not change the plan's range).
pub fn report_diagnostics(d: &Diagnostics, rel: &PrivateRelease, bound: f64, plan: Option<&Path>) {
    let c = d.policy.responses_clipped;
    let n = rel.report.data_policy.n.max(1);
    let range = match &rel.report.data_policy.response_range {
        Some(r) => format!("[{}, {}]", r.lo, r.hi),
        None => format!("[−{bound}, {bound}]"),
    };
    let fraction = c as f64 / n as f64;
    if fraction > LOUD_CLIPPING {
        eprintln!(
            "WARNING (private, not published): {c} of {n} responses ({:.0}%) were clipped to {range} — the map will flatten towards the range's ends; {}",
            100.0 * fraction,
            match plan {
                Some(p) => format!(
                    "the range is the plan's (--plan {}, whose σ was fitted on it): re-run gpdp plan on the proxy with a wider --response-range covering the responses' plausible values, then release with the new plan",
                    p.display()
                ),
                None => "set --response-range to the responses' plausible range in data units".to_string(),
            }
        );
    } else if c > 0 {
        eprintln!("operator note (private, not published): clipped {c} response(s) to {range}");
    }
    if d.policy.covariates_snapped > 0 {
        let how = if rel.report.data_policy.snap.is_some() {
            "by snapping to the nearest node of the lattice"
        } else {
            "by < 1e-6 of the spacing onto the declared lattice"
        };
        eprintln!("operator note (private, not published): moved {} covariate(s) {how}", d.policy.covariates_snapped);
    }
    eprintln!(
        "sampler: {} ({}); fit {:.2} s, sampling {:.2} s",
        rel.report.sampler.plan.method, rel.report.sampler.plan.reason, d.fit_seconds, d.sample_seconds
    );
}

/// The operator log: what the published folder must not contain.
/// An existing log is replaced only with `force` (checked before the run).
pub fn write_operator_log(
    path: &Path,
    command: &str,
    data: &str,
    out: &Path,
    rel: &PrivateRelease,
    force: bool,
) -> Result<()> {
    let log = json!({
        "note": "PRIVATE operator log: facts about the private data that the guarantee does not cover. Do not publish.",
        "gpdp_version": env!("CARGO_PKG_VERSION"),
        "command": command,
        "data": data,
        "published_folder": out.display().to_string(),
        "epsilon": rel.report.privacy.epsilon,
        "delta": rel.report.privacy.delta,
        "private": rel.report.private,
        "sampler": {"method": rel.report.sampler.plan.method, "reason": rel.report.sampler.plan.reason},
        "diagnostics": rel.diagnostics,
    });
    write_atomically(path, &serde_json::to_vec_pretty(&log)?, force)
}

/// Refuses, before anything is read or written, a run whose outputs would
/// replace or delete an input or put a private file into the published
/// folder: the ledger and the operator log outside --out, no input inside
/// --out or equal to --log.
fn check_paths(a: &ReleaseCmdArgs) -> Result<()> {
    let Some(out) = &a.out else { return Ok(()) };
    if let Some(ledger) = &a.ledger {
        check_private_outside("--ledger", ledger, out)?;
    }
    if let Some(log) = &a.log {
        check_log_outside(log, out)?;
    }
    let inputs: Vec<(&str, &Path)> = [
        ("--data", &a.data),
        ("--at", &a.at),
        ("--plan", &a.plan),
        ("--ledger", &a.ledger),
        ("--covariates", &a.covariates),
    ]
    .into_iter()
    .filter_map(|(flag, p)| p.as_deref().map(|p| (flag, p)))
    .collect();
    let mut outputs = vec![("--out", out.as_path())];
    if let Some(log) = &a.log {
        outputs.push(("--log", log.as_path()));
    }
    check_inputs_apart(&inputs, &outputs)
}

pub fn run(mut a: ReleaseCmdArgs) -> Result<()> {
    check_paths(&a)?;
    if let Some(plan) = a.plan.clone() {
        apply_plan(&mut a, &plan)?;
        // The plan's unit label is drawn into the figures like --units'.
        if let Some(u) = &a.units {
            crate::args::parse_units(u).map_err(|e| anyhow::anyhow!("the units of --plan {}: {e}", plan.display()))?;
        }
    }
    if let Some(r) = a.resolution {
        a.grid = Some(grid_for_resolution(r, a.model.domain.as_ref())?);
    }
    a.check_required()?;
    if let (Some(_), Some(acc)) = (&a.ledger, a.model.conversion) {
        // The library's one refusal of pld where RDP curves are composed.
        gpdp::Conversion::try_from(acc).map_err(|e| anyhow::anyhow!("--conversion with --ledger: {e}"))?;
    }
    let (Some(data_path), Some(out)) = (a.data.clone(), a.out.clone()) else { bail!("missing --data or --out") };
    let (data_path, out) = (&data_path, &out);
    let name = data_path.display().to_string();
    // Every output location is checked before anything is drawn or reserved:
    // a run that publishes and then cannot write its log would tempt a retry,
    // i.e. a second release.
    check_out_dir(out, a.force)?;
    if let Some(log) = &a.log {
        check_out_file("--log", log, a.force)?;
    }
    let cols = gpdp::io::Columns { x: a.x_columns.clone(), y: a.y_column.clone() };
    let (names, mut data): (Vec<String>, Dataset) = gpdp::io::read_dataset_columns(data_path, &cols)?;
    if let Some(path) = &a.covariates {
        check_public_covariates(&a, path, &data)?;
    }
    if let Some(fps) = &a.plan_fingerprints {
        check_not_the_proxy(fps, &data, data_path, a.plan.as_deref().unwrap_or(Path::new("plan.json")))?;
    }
    if let (Some(from), Some(to)) = (&a.crs, &a.reproject_to) {
        data = crate::output::gis::reproject_dataset(data, from, to, data_path)?;
    }
    let mechanism = if wants_remaining(&a) { fit_remaining(&mut a, &data)? } else { a.mechanism(&data)? };
    // Public inputs only: σ against the response scale.
    let p = mechanism.params();
    for w in p.response_scale().sigma_warnings(p.release.scale, p.units.as_deref().unwrap_or("")) {
        eprintln!("warning: {w}");
    }
    // Reprojected coordinates are named for the target CRS (e.g. easting, northing), not the data's columns.
    let names = match &a.reproject_to {
        Some(to) => to.axis_names().to_vec(),
        None => names,
    };
    let (query, names) = a.query(&names, data.dim())?;
    let georef = match (&a.crs, &a.reproject_to) {
        (Some(from), Some(to)) => Some(crate::output::release::Georef { crs: to, reprojected_from: Some(from) }),
        (Some(c), None) => Some(crate::output::release::Georef { crs: c, reprojected_from: None }),
        _ => None,
    };
    // Public inputs only (n, the query, L, the sampler's plan): refused before the
    // data are checked or the budget reserved, and not blamed on the data file.
    let cost = mechanism.check_resources(&query)?;
    if cost.seconds > 3.0 || cost.bytes > (1u64 << 30) as f64 {
        let torus = cost
            .torus
            .as_ref()
            .map(|t| format!(" on a {} torus", t.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(" × ")))
            .unwrap_or_default();
        eprintln!(
            "sampler: {}{torus} — about {:.1} GiB and {:.0} s (a rough estimate from public inputs; a coarser --grid is faster)",
            cost.method,
            cost.bytes / (1u64 << 30) as f64,
            cost.seconds.max(1.0)
        );
    }
    let domain = &mechanism.params().release.domain;
    let outside = query.count_outside(domain);
    if outside > 0 {
        eprintln!(
            "note: {outside} of {} query points lie outside the domain {domain}; the guarantee covers the released function everywhere, but the data say nothing about f there (values revert to the prior)",
            query.len()
        );
    }
    let mut rng = release_rng(a.seed)?;
    // The data policy's refusals (n, domain, lattice, --on-unbounded reject) come before the
    // budget is reserved: a refused dataset consumes none of it.
    mechanism.check_data(&data).with_context(|| name.clone())?;
    // The budget is reserved (fsynced) before anything is drawn.
    let mut ledger = None;
    if let (Some(path), Some(dataset)) = (&a.ledger, &a.dataset) {
        let mut l = gpdp::ledger::Ledger::open_existing(path)?;
        let r = match l.reserve_for(dataset, &mechanism, &data) {
            Ok(r) => r,
            Err(e) => return Err(with_largest_fitting(e, &a, &data, &l)),
        };
        eprintln!(
            "ledger: reserved release #{} of {} (ε = {:.4}; composed ε = {:.4} of the budget's {})",
            r.id,
            gpdp::ledger::names::quoted(dataset),
            r.epsilon,
            r.composed_epsilon,
            r.budget.epsilon
        );
        ledger = Some((l, r));
    }
    let reserved = ledger.as_ref().map(|(_, r)| r.id);
    // Until the folder is in place nothing is published; a failure says so,
    // and what became of the budget.
    let unpublished = |e: anyhow::Error| {
        match (reserved, &a.dataset) {
        (Some(id), Some(dataset)) => e.context(format!(
            "nothing was published; ledger reservation #{id} of '{dataset}' stays counted against its budget (docs/ledger.md)"
        )),
        _ => e,
    }
    };
    let spinner = Spinner::new(a.quiet);
    let rel = mechanism
        .release_with_progress(&data, &query, &mut rng, &spinner)
        .with_context(|| name.clone())
        .map_err(unpublished)?;
    spinner.set(&format!("writing the release into {}", out.display()));
    let outputs = write_dir_atomically(out, a.force, |dir| {
        write_release(dir, &rel, &query, &names, a.threshold.unwrap_or(0.0), georef, a.map_format)
    })
    .map_err(unpublished)?;
    spinner.finish();
    // Published: from here on a failure exits with status 3 and says so.
    let after = |step: String, ledger: Option<String>, cause: anyhow::Error| PublishedThenFailed {
        out: out.clone(),
        ledger,
        step,
        cause,
    };
    let mut ledger_state = None;
    if let (Some((mut l, reservation)), Some(dataset)) = (ledger, &a.dataset) {
        let id = reservation.id;
        let committed =
            hash_files(out, &outputs).and_then(|h| Ok(l.commit(reservation, &h, &out.display().to_string())?));
        if let Err(e) = committed {
            let state = format!("ledger entry #{id} of '{dataset}' stays reserved, counted against the budget");
            return Err(after("recording it in the ledger".into(), Some(state), e).into());
        }
        ledger_state = Some(format!("ledger entry #{id} of '{dataset}', committed"));
    }
    report_diagnostics(&rel.diagnostics, &rel, mechanism.params().release.response_bound, a.plan.as_deref());
    if mechanism.params().release.sensitivity.assumes_rkhs_responses() && rel.diagnostics.policy.responses_clipped > 0 {
        eprintln!(
            "WARNING (private, not published): under --assume-rkhs-responses every |y| ≤ B ≤ M_Y, yet {} response(s) exceeded M_Y and were clipped — these data break the stated assumption of Lemma B.8, so its guarantee does not cover them",
            rel.diagnostics.policy.responses_clipped
        );
    }
    if let Some(log) = &a.log {
        write_operator_log(log, "release", &name, out, &rel, a.force)
            .map_err(|e| after(format!("writing the operator log --log {}", log.display()), ledger_state.clone(), e))?;
    }
    if a.json {
        let report = std::fs::read(out.join("report.json"))
            .map_err(anyhow::Error::from)
            .and_then(|b| Ok(serde_json::from_slice::<serde_json::Value>(&b)?))
            .map_err(|e| after(format!("reading {} for --json", out.join("report.json").display()), ledger_state, e))?;
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("wrote {} into {}", outputs.join(", "), out.display());
        println!("{}", rel.report.statement);
    }
    Ok(())
}

/// `--resolution R`: the grid counts "N1xN2" with nodes exactly R apart
/// over the domain's box, refused when an axis is not a whole number of R
/// long (within 10⁻⁹ of a node), naming resolutions that fit.
fn grid_for_resolution(r: f64, domain: Option<&gpdp::model::domain::Domain>) -> Result<String> {
    let Some(domain) = domain else { bail!("--resolution needs --domain (an interval or box)") };
    if !(r.is_finite() && r > 0.0) {
        bail!("--resolution {r}: the spacing must be a finite number > 0 (covariate units)");
    }
    let (lo, hi) = domain.bounding_box();
    let mut counts = Vec::new();
    for j in 0..lo.len() {
        let steps = (hi[j] - lo[j]) / r;
        let k = steps.round();
        if (steps - k).abs() > 1e-9 * steps.max(1.0) || k < 1.0 {
            let width = hi[j] - lo[j];
            let fits: Vec<String> = [k.floor(), k.ceil(), (k + 1.0)]
                .iter()
                .filter(|s| **s >= 1.0)
                .map(|s| format!("{}", width / s))
                .collect();
            bail!(
                "--resolution {r}: axis {} of the domain {domain} is {width} long, not a whole number of {r} — choose a spacing that divides it (e.g. {}), or give --grid N",
                j + 1,
                fits.join(" or ")
            );
        }
        if k > 1e6 {
            bail!("--resolution {r}: {k} cells on axis {} — choose a coarser spacing", j + 1);
        }
        counts.push((k as usize + 1).to_string());
    }
    Ok(counts.join("x"))
}

/// Above this fraction of the data's records found in the plan's proxy, the
/// release is refused: the plan was fitted on (much of) the private data.
const SHARED_RECORDS_REFUSED: f64 = 0.5;

/// `release --plan`: the data's records counted among the plan's proxy
/// records by their parsed values (gpdp::plan::shared_records): refused when
/// more than half are shared, warned when any are. The count is about the
/// private data: it goes to stderr only, never into the published folder.
fn check_not_the_proxy(fingerprints: &[String], data: &Dataset, data_path: &Path, plan: &Path) -> Result<()> {
    let shared = gpdp::plan::shared_records(fingerprints, data);
    let n = data.len().max(1);
    if shared as f64 > SHARED_RECORDS_REFUSED * n as f64 {
        bail!(
            "refusing to release (private, not published): {shared} of the {n} records of --data {} are records of the proxy the plan was fitted on (--plan {}; compared as parsed numbers, so reordering or reformatting does not matter) — hyperparameters fitted on the private data are not covered by the guarantee; fit the plan on public or proxy data",
            data_path.display(),
            plan.display()
        );
    }
    if shared > 0 {
        eprintln!(
            "WARNING (private, not published): {shared} of the {n} records of --data {} are also records of the plan's proxy (same covariates and response); if the proxy holds private records, the plan's hyperparameters are not covered by the guarantee",
            data_path.display()
        );
    }
    Ok(())
}

/// `--covariates`: only with change-response, and equal to the data's
/// covariates row by row (the covariates are public under that relation, so
/// the comparison and its message reveal nothing it protects).
fn check_public_covariates(a: &ReleaseCmdArgs, path: &std::path::Path, data: &Dataset) -> Result<()> {
    if a.relation != gpdp::NeighbouringRelation::ChangeResponse {
        bail!(
            "--covariates declares public covariates, which only --relation change-response uses (replace-one protects the covariates too)"
        );
    }
    let x = crate::commands::account::read_covariates(Some(path), a.covariates_x.clone())?.context("covariates")?;
    let shown = |p: &[f64]| p.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ");
    if x.len() != data.len() || x.dim() != data.dim() {
        bail!(
            "--covariates {}: {} rows of dimension {}, but --data has {} records of dimension {}; under change-response the release must use exactly the public covariates",
            path.display(),
            x.len(),
            x.dim(),
            data.len(),
            data.dim()
        );
    }
    if let Some(i) = (0..x.len()).find(|&i| x.row(i) != data.x().row(i)) {
        bail!(
            "--data row {}: covariates ({}) differ from --covariates {} row {} ({}); under change-response the release must use exactly the public covariates",
            i + 1,
            shown(data.x().row(i)),
            path.display(),
            i + 1,
            shown(x.row(i))
        );
    }
    Ok(())
}
