//! `gpdp.plan` and `Plan`: the Python counterpart of `gpdp plan`.
//!
//! The mathematics is the library's (`gpdp::plan`: [`fit`], [`utility_curve`]
//! — which calibrates each ridge with `calibrate_with_floor` — [`assess`],
//! [`centre_warning`], [`record_fingerprints`]). What lives only in the CLI
//! (`gpdp-cli`'s `commands::plan::run`) is glue: checking the inputs, mapping
//! the proxy's responses onto the mechanism's scale, choosing seeded subsets,
//! building the release spec and assembling plan.json. That glue is
//! reproduced here, step for step, with a comment naming what each step
//! mirrors; it should move into the library (one function both front ends
//! call) so that the two cannot drift apart.

use std::path::PathBuf;

use gpdp::model::units::ResponseRange;
use gpdp::plan::{Bounds, FitOptions, Plan, PlannedRelease, UtilityOptions};
use gpdp::{Dataset, Domain, Grid, NeighbouringRelation, ReleaseSpec};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{to_py_value, vector};
use crate::errors::{DataError, OrPy, ParameterError, PlanWarning, bad_arg, to_py};
use crate::geometry::{counts_arg, domain_arg};
use crate::params::parse;

/// A seeded random subset of at most `max` records (all of them if fewer):
/// mirrors `gpdp-cli`'s `commands::plan::fit_subset` exactly (the same
/// generator, shuffle and salt), so that the same inputs give the same plan.
fn fit_subset(data: &Dataset, max: usize, seed: u64) -> gpdp::Result<Dataset> {
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
    Dataset::new(gpdp::model::points::Points::from_rows(&rows)?, idx.iter().map(|&i| data.y()[i]).collect())
}

/// A search interval keyword (lo, hi), in the caller's units, divided by
/// `unit`: mirrors `gpdp-cli`'s `commands::plan::parse_pair`.
fn bounds_pair(v: &Bound<'_, PyAny>, name: &str) -> PyResult<(f64, f64)> {
    let p = vector(v.py(), v, name).map_err(|_| bad_arg(name, "expected (lo, hi), two numbers"))?;
    let [lo, hi] = p[..] else {
        return Err(bad_arg(name, format!("expected (lo, hi), two numbers; got {} numbers", p.len())));
    };
    if !(lo > 0.0 && lo <= hi && hi.is_finite()) {
        return Err(bad_arg(name, format!("({lo}, {hi}): need 0 < lo ≤ hi < ∞")));
    }
    Ok((lo, hi))
}

/// SHA-256 (hex) of the proxy arrays — X's doubles row by row, then y's,
/// little-endian — for plan.json's `proxy_sha256`. There is no file to hash
/// (the CLI hashes the proxy file's bytes), so `gpdp release --plan`'s
/// same-file check cannot match a plan made here; its check of the data's
/// records against `proxy_record_fingerprints` (parsed numbers) still does.
fn arrays_sha256(data: &Dataset) -> String {
    let mut bytes = Vec::with_capacity(8 * (data.x().as_slice().len() + data.len()));
    for v in data.x().as_slice().iter().chain(data.y()) {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    gpdp::plan::sha256_hex(&bytes)
}

/// The same library error with `context` before its message (as the CLI's
/// `with_context`), keeping its class.
fn with_context(py: Python<'_>, e: gpdp::Error, context: &str) -> PyErr {
    let p = to_py(e);
    let msg = p.value(py).to_string();
    PyErr::from_type(p.get_type(py), format!("{context}: {msg}"))
}

/// The plan's outputs besides plan.json: what the CLI prints on stderr.
struct Said {
    warnings: Vec<String>,
    notes: Vec<String>,
}

/// Everything `gpdp plan` does before writing its files, from arrays
/// (`gpdp-cli`'s `commands::plan::run`, step for step).
#[allow(clippy::too_many_arguments)]
fn make_plan(
    py: Python<'_>,
    proxy: Dataset,
    domain: Domain,
    delta: f64,
    range: Option<ResponseRange>,
    response_bound: Option<f64>,
    kernel: gpdp::KernelKind,
    n: Option<usize>,
    epsilons: Vec<f64>,
    draws: gpdp::Draws,
    relation: NeighbouringRelation,
    threshold: Option<f64>,
    units: Option<String>,
    within: f64,
    grid: Grid,
    holdout: f64,
    reps: usize,
    restarts: usize,
    max_fit_points: usize,
    max_sim_points: usize,
    bound_args: [Option<&Bound<'_, PyAny>>; 3],
    seed: u64,
    proxy_name: String,
) -> PyResult<(Plan, Said)> {
    let mut said = Said { warnings: Vec::new(), notes: Vec::new() };
    // The checks of `run`, in its order, with keyword names for flags.
    if epsilons.is_empty() || epsilons.iter().any(|e| !(e.is_finite() && *e > 0.0)) {
        return Err(bad_arg("epsilons", format!("every target ε must be finite and > 0 (got {epsilons:?})")));
    }
    if !(within > 0.0 && within < 1.0) {
        return Err(bad_arg("within", format!("{within}: the fraction must lie in (0, 1), e.g. 0.1 for 10%")));
    }
    if max_fit_points < 4 || max_sim_points < 4 {
        return Err(bad_arg("max_fit_points/max_sim_points", "must be at least 4 (records to fit and to simulate on)"));
    }
    // The records as given, fingerprinted for `release --plan`'s check that
    // the data are not the proxy.
    let fingerprints = gpdp::plan::record_fingerprints(&proxy);
    let proxy_sha256 = arrays_sha256(&proxy);
    if proxy.dim() != domain.dim() {
        return Err(DataError::new_err(format!(
            "X: the proxy has {}-D covariates but the domain {domain} is {}-D",
            proxy.dim(),
            domain.dim()
        )));
    }
    let outside = proxy.x().iter().filter(|p| !domain.contains(p)).count();
    if outside > 0 {
        return Err(DataError::new_err(format!(
            "X: {outside} of the {} proxy records lie outside the domain {domain}: the release's domain must hold every record — widen domain or drop them",
            proxy.len()
        )));
    }
    let n_private = n.unwrap_or(proxy.len());
    // σ, η and the bounds are in data units under both; M_Y is a range's half-width.
    let m_y = match (range, response_bound) {
        (Some(_), Some(_)) => {
            return Err(bad_arg(
                "response_range/response_bound",
                "give one of response_range=(lo, hi) and response_bound=M_Y, not both",
            ));
        }
        (Some(r), None) => r.half(),
        (None, Some(m)) if m.is_finite() && m > 0.0 => m,
        (None, Some(m)) => {
            return Err(bad_arg(
                "response_bound",
                format!(
                    "{m}: must be a finite number > 0 (the bound M_Y on |y|, in the data's units; or give response_range=(lo, hi))"
                ),
            ));
        }
        (None, None) => {
            return Err(bad_arg(
                "response_range/response_bound",
                "required: response_range=(lo, hi) (the responses' plausible range in data units) or response_bound=M_Y (|y| ≤ M_Y in the data's units) — the response scale is a public choice, as for Mechanism",
            ));
        }
    };
    // The mechanism's internal responses: centred by the range and clipped
    // (as `run` maps them, and as a release would).
    let internal: Vec<f64> = proxy
        .y()
        .iter()
        .map(|&y| match range {
            Some(r) => r.clip(y),
            None => y.clamp(-m_y, m_y),
        })
        .collect();
    let clipped =
        proxy.y().iter().zip(&internal).filter(|(y, v)| range.map_or(**y, |r| r.to_internal(**y)) != **v).count();
    if clipped == proxy.len() {
        let shown = match range {
            Some(r) => format!("the response range [{}, {}]", r.lo, r.hi),
            None => format!("[−M_Y, M_Y] = [−{m_y}, {m_y}]"),
        };
        return Err(DataError::new_err(format!(
            "y: every one of the {} proxy responses lies outside {shown}: the fit would see a constant — give response_range=(lo, hi), the responses' plausible range in data units (or a response_bound on their scale)",
            proxy.len()
        )));
    }
    if clipped > 0 {
        said.notes.push(format!(
            "{clipped} of the {} proxy responses lie outside the response range and are clipped, as a release would clip them",
            proxy.len()
        ));
    }
    let units_label = units.as_deref().map(|u| format!(" {u}")).unwrap_or_default();
    // The proxy is public: its median may be compared and shown.
    if let Some(w) = gpdp::plan::centre_warning(range, m_y, proxy.y(), &units_label) {
        said.warnings.push(w);
    }
    // Refuse before the fit if the simulation cannot fit in memory.
    let sim_records = proxy.len().min(max_sim_points) as f64;
    let sim_query = (sim_records * holdout).round().max(1.0) + grid.points().len() as f64;
    gpdp::check_memory(
        "the utility simulation",
        &[
            gpdp::Need::doubles("the posterior over the simulated records (2 × n²)", 2.0 * sim_records * sim_records),
            gpdp::Need::doubles("the joint covariance of the query points (2 × m²)", 2.0 * sim_query * sim_query),
        ],
        "lower max_sim_points or use a coarser grid",
    )
    .py()?;
    let fit_data = fit_subset(&Dataset::new(proxy.x().clone(), internal).py()?, max_fit_points, seed).py()?;
    if fit_data.len() < proxy.len() {
        said.notes.push(format!(
            "fitting on a seeded random subset of {} of the {} proxy records (max_fit_points)",
            fit_data.len(),
            proxy.len()
        ));
    }
    let mut bounds = Bounds::default_for(&domain, m_y);
    let [lb, sb, nb] = bound_args;
    if let Some(v) = lb {
        bounds.lengthscale = bounds_pair(v, "lengthscale_bounds")?;
    }
    if let Some(v) = sb {
        bounds.scale = bounds_pair(v, "scale_bounds")?;
    }
    if let Some(v) = nb {
        bounds.noise = bounds_pair(v, "noise_bounds")?;
    }
    let mut opts = FitOptions::new(bounds);
    opts.restarts = restarts;
    opts.seed = seed;
    let fit = py.detach(|| gpdp::plan::fit(kernel, &fit_data, &opts, &gpdp::mechanism::NoProgress)).py()?;
    let h = fit.hyper;
    for b in &fit.at_bound {
        said.warnings.push(format!(
            "the fitted {b} — widen the bounds (lengthscale_bounds, scale_bounds, noise_bounds) or accept it"
        ));
    }
    // The release the plan is for, as a release spec: only the target ε is
    // left to the release (as `run` builds it).
    let spec = {
        let mut s = ReleaseSpec::new(kernel, domain.clone(), delta);
        s.lengthscale = kernel.has_lengthscale().then_some(h.lengthscale);
        // As `run` does: σ as fitted, in data units.
        s.scale = Some(h.scale);
        s.draws = draws;
        s.response_range = range;
        s.response_bound = range.is_none().then_some(m_y);
        s.units = units.clone();
        s.ridge_floor = Some(h.ridge());
        s.relation = relation;
        s
    };
    let template = {
        let mut s = spec.clone();
        s.target_epsilon = Some(epsilons[0]);
        s.params(n_private).py()?
    };
    let threshold = threshold.unwrap_or(range.map_or(0.0, |r| r.mid()));
    let uopts = UtilityOptions { holdout, reps, seed, grid, threshold, ridge_floor: Some(h.ridge()) };
    let sim_proxy = fit_subset(&proxy, max_sim_points, seed ^ 0x5111_u64).py()?;
    if sim_proxy.len() < proxy.len() {
        said.notes.push(format!(
            "simulating the private map on a seeded random subset of {} of the {} proxy records (max_sim_points)",
            sim_proxy.len(),
            proxy.len()
        ));
    }
    let utility = py
        .detach(|| gpdp::plan::utility_curve(&template, h, &sim_proxy, &epsilons, &uopts, &gpdp::mechanism::NoProgress))
        .map_err(|e| with_context(py, e, "simulating releases on the proxy"))?;
    let assessment = gpdp::plan::assess(&utility, within, threshold, &units_label);
    said.warnings.extend(assessment.warnings.iter().cloned());
    let plan = Plan {
        version: gpdp::plan::PLAN_VERSION,
        note: gpdp::plan::PLAN_NOTE.to_string(),
        proxy: proxy_name,
        proxy_sha256,
        proxy_records: proxy.len(),
        proxy_record_fingerprints: Some(fingerprints),
        fitted_ridge: h.ridge(),
        fit,
        bounds,
        release: PlannedRelease {
            n: n_private,
            domain: domain.to_string(),
            response_range: range,
            response_bound: m_y,
            units,
            draws: draws.get(),
            delta,
            threshold,
            crs: None,
            spec,
        },
        utility,
        assessment: Some(assessment),
    };
    Ok((plan, said))
}

/// Plans a release on PUBLIC or proxy data — never the private data — as
/// `gpdp plan` does: fits ℓ, σ and the noise sd λ by maximum marginal
/// likelihood on (X, y), calibrates the release's ridge for each target ε
/// at the private dataset's size `n` (never below the fitted λ/σ), and
/// simulates the private map's utility on the proxy (seeded: simulations,
/// not releases). Returns a `Plan`; `plan.save("plan.json")` writes the
/// file `gpdp release --plan` takes.
///
/// The keywords and defaults are `gpdp plan`'s flags (`gpdp plan --help`),
/// with `domain` and `grid` also as tuples (see `Mechanism.release`).
/// Exactly one of `response_range=(lo, hi)` or `response_bound=M_Y` is
/// required. `within` is the fraction of "worth publishing" (the smallest ε
/// whose RMSE is within it above the non-private map's, and IoU within it
/// below). Warnings the CLI prints on stderr are issued as `PlanWarning`s
/// and kept in `.warnings`; its notes are in `.notes`.
#[pyfunction]
#[pyo3(signature = (X, y, *, domain, delta, response_range=None, response_bound=None, kernel="matern32", n=None,
    epsilons=None, draws=1, relation="replace-one", threshold=None, units=None, within=0.1, grid=None,
    holdout=0.2, reps=5, restarts=8, max_fit_points=1500, max_sim_points=2000, lengthscale_bounds=None,
    scale_bounds=None, noise_bounds=None, seed=0, proxy_name=None))]
#[allow(non_snake_case, clippy::too_many_arguments)]
pub fn plan(
    py: Python<'_>,
    X: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    domain: &Bound<'_, PyAny>,
    delta: f64,
    response_range: Option<&Bound<'_, PyAny>>,
    response_bound: Option<f64>,
    kernel: &str,
    n: Option<usize>,
    epsilons: Option<&Bound<'_, PyAny>>,
    draws: u64,
    relation: &str,
    threshold: Option<f64>,
    units: Option<&str>,
    within: f64,
    grid: Option<&Bound<'_, PyAny>>,
    holdout: f64,
    reps: usize,
    restarts: usize,
    max_fit_points: usize,
    max_sim_points: usize,
    lengthscale_bounds: Option<&Bound<'_, PyAny>>,
    scale_bounds: Option<&Bound<'_, PyAny>>,
    noise_bounds: Option<&Bound<'_, PyAny>>,
    seed: u64,
    proxy_name: Option<String>,
) -> PyResult<PyPlan> {
    let proxy = crate::mechanism::dataset(py, X, y)?;
    let domain = domain_arg(domain, "domain")?;
    let range = response_range.filter(|r| !r.is_none()).map(crate::params::response_range).transpose()?;
    let kernel: gpdp::KernelKind = parse(kernel)?;
    let relation: NeighbouringRelation = relation.parse().map_err(|e: gpdp::Error| bad_arg("relation", e))?;
    let epsilons = match epsilons {
        None => vec![0.5, 1.0, 2.0, 5.0, 10.0],
        Some(e) => match e.extract::<f64>() {
            Ok(x) => vec![x],
            Err(_) => vector(py, e, "epsilons")?,
        },
    };
    let units = units.map(crate::params::units).transpose()?;
    let grid = match grid {
        Some(g) => counts_arg(g, "grid")?,
        None => "40".to_string(),
    };
    let grid = Grid::parse(&grid, &domain).py()?;
    let proxy_name = proxy_name.unwrap_or_else(|| "numpy arrays (gpdp.plan)".to_string());
    let (inner, said) = make_plan(
        py,
        proxy,
        domain,
        delta,
        range,
        response_bound,
        kernel,
        n,
        epsilons,
        crate::params::draws(draws)?,
        relation,
        threshold,
        units,
        within,
        grid,
        holdout,
        reps,
        restarts,
        max_fit_points,
        max_sim_points,
        [lengthscale_bounds, scale_bounds, noise_bounds],
        seed,
        proxy_name,
    )?;
    for w in &said.warnings {
        let c = std::ffi::CString::new(w.as_str()).unwrap_or_default();
        PyErr::warn(py, &py.get_type::<PlanWarning>(), &c, 1)?;
    }
    Ok(PyPlan { inner, warnings: said.warnings, notes: said.notes })
}

/// The table `gpdp plan` prints on standard output (without the lines
/// about its files), from a plan: mirrors the `println!`s of `gpdp-cli`'s
/// `commands::plan::run`.
fn summary(plan: &Plan) -> String {
    let r = &plan.release;
    let h = plan.fit.hyper;
    let u = &plan.utility;
    let relation = r.spec.relation;
    let units = r.units.clone().unwrap_or_default();
    let mut s = format!(
        "plan for n = {}, δ = {}, {} draw(s), from {} proxy records:\n",
        r.n, r.delta, r.draws, plan.proxy_records
    );
    s += &format!("  relation: {relation} — protects {}\n", relation.protects());
    if relation == NeighbouringRelation::ChangeResponse {
        s += "  (ε from the change-response bound for any covariates; a release with its own public covariates has ε at most this)\n";
    }
    s += &format!(
        "  kernel {} ℓ = {:.6}, σ = {:.6}, fitted ridge λ/σ = {:.6}\n",
        plan.fit.kernel, h.lengthscale, h.scale, plan.fitted_ridge
    );
    s += &format!(
        "  target ε   ε      ridge      hold-out RMSE{}   IoU {{f ≥ {}}}\n",
        if units.is_empty() { String::new() } else { format!(" [{units}]") },
        r.threshold
    );
    for p in &u.points {
        s += &format!(
            "  {:<9}  {:<6.3} {:<10.4} {:.4} ± {:.4}        {:.3} ± {:.3}{}\n",
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
    s += &format!("  non-private posterior mean: RMSE {:.4}, IoU {:.3}\n", u.baseline_rmse.mean, u.baseline_iou.mean);
    if let (Some(c), Some(i)) = (u.constant_rmse, u.constant_iou) {
        s += &format!("  constant map (the training mean everywhere): RMSE {:.4}, IoU {:.3}\n", c.mean, i.mean);
    }
    if let Some(a) = &plan.assessment {
        let smallest = |e: Option<f64>| e.map_or("none of the planned ε".to_string(), |e| format!("ε = {e:.3}"));
        s += &format!(
            "  within {:.0}% of non-private: RMSE from {}; IoU from {}\n",
            100.0 * a.within,
            smallest(a.rmse_epsilon),
            smallest(a.iou_epsilon)
        );
    }
    s += &format!(
        "  for a map, L = 1 draw is optimal: the mean of L draws has the law of one draw with its noise scaled by 1/√L, so more draws only cost ε{}",
        if r.draws > 1 { format!(" (this plan has L = {})", r.draws) } else { String::new() }
    );
    s
}

/// A plan (from `gpdp.plan`, or `Plan.load` of a `gpdp plan` plan.json):
/// the fitted hyperparameters, the planned release and the simulated
/// utility at each target ε. `to_dict()` is plan.json's content; `save`
/// writes it; `str(plan)` is the table `gpdp plan` prints.
#[pyclass(name = "Plan", module = "gpdp", frozen)]
pub struct PyPlan {
    inner: Plan,
    warnings: Vec<String>,
    notes: Vec<String>,
}

#[pymethods]
impl PyPlan {
    /// Reads a plan.json written by `gpdp plan` or `Plan.save` (its
    /// `warnings` are then the stored assessment's).
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Self> {
        let bytes = gpdp::io::read_bounded(&path, gpdp::io::MAX_INPUT_BYTES).py()?;
        // Parsed, version-checked and brought to this version (σ in data units) by the library.
        let inner = Plan::from_json(&bytes, &path.display().to_string())
            .map_err(|e| DataError::new_err(format!("path: {}", e.to_string().trim_start_matches("`plan`: "))))?;
        let warnings = inner.assessment.as_ref().map(|a| a.warnings.clone()).unwrap_or_default();
        Ok(PyPlan { inner, warnings, notes: Vec::new() })
    }

    /// The kernel family fitted.
    #[getter]
    fn kernel(&self) -> String {
        self.inner.fit.kernel.clone()
    }
    /// The fitted lengthscale ℓ (None for kernels without one).
    #[getter]
    fn lengthscale(&self) -> Option<f64> {
        self.inner.release.spec.lengthscale
    }
    /// The fitted scale σ, in the responses' units (with a response range
    /// or a bound; a plan older than version 5 is converted when loaded).
    #[getter]
    fn scale(&self) -> f64 {
        self.inner.fit.hyper.scale
    }
    /// The fitted noise sd λ, in the same units as `scale`.
    #[getter]
    fn noise(&self) -> f64 {
        self.inner.fit.hyper.noise
    }
    /// The fitted ridge λ/σ: the floor of every planned release's ridge.
    #[getter]
    fn fitted_ridge(&self) -> f64 {
        self.inner.fitted_ridge
    }
    /// The log marginal likelihood at the fit.
    #[getter]
    fn log_marginal_likelihood(&self) -> f64 {
        self.inner.fit.log_marginal_likelihood
    }
    /// The whole fit (hyperparameters, bounds hit, every start), as plan.json has it.
    #[getter]
    fn fit<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py_value(py, &self.inner.fit)
    }
    /// The target ε planned for, in order.
    #[getter]
    fn epsilons(&self) -> Vec<f64> {
        self.inner.utility.points.iter().map(|p| p.target_epsilon).collect()
    }
    /// One dict per target ε, with the columns of the CLI's utility.csv:
    /// target_epsilon, epsilon (the release's, ≤ target), ridge,
    /// ridge_is_fitted, holdout_rmse_mean/_sd (data units), iou_mean/_sd,
    /// and the baselines nonprivate_rmse_mean, nonprivate_iou_mean,
    /// constant_rmse_mean, constant_iou_mean (None in version-3 plans).
    #[getter]
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        // Mirrors `gpdp-cli`'s `commands::plan::write_csv`.
        let u = &self.inner.utility;
        u.points
            .iter()
            .map(|p| {
                let d = PyDict::new(py);
                d.set_item("target_epsilon", p.target_epsilon)?;
                d.set_item("epsilon", p.epsilon)?;
                d.set_item("ridge", p.ridge)?;
                d.set_item("ridge_is_fitted", p.ridge_is_fitted)?;
                d.set_item("holdout_rmse_mean", p.holdout_rmse.mean)?;
                d.set_item("holdout_rmse_sd", p.holdout_rmse.sd)?;
                d.set_item("iou_mean", p.excursion_iou.mean)?;
                d.set_item("iou_sd", p.excursion_iou.sd)?;
                d.set_item("nonprivate_rmse_mean", u.baseline_rmse.mean)?;
                d.set_item("nonprivate_iou_mean", u.baseline_iou.mean)?;
                d.set_item("constant_rmse_mean", u.constant_rmse.map(|c| c.mean))?;
                d.set_item("constant_iou_mean", u.constant_iou.map(|c| c.mean))?;
                Ok(d)
            })
            .collect()
    }
    /// The simulated utility, as plan.json's `utility`.
    #[getter]
    fn utility<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py_value(py, &self.inner.utility)
    }
    /// Whether the map is worth publishing (plan.json's `assessment`), or None.
    #[getter]
    fn assessment<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py_value(py, &self.inner.assessment)
    }
    /// The smallest planned ε (the release's) whose hold-out RMSE is within
    /// the stated fraction above the non-private map's, or None.
    #[getter]
    fn rmse_epsilon(&self) -> Option<f64> {
        self.inner.assessment.as_ref().and_then(|a| a.rmse_epsilon)
    }
    /// The smallest planned ε whose IoU is within the fraction below the
    /// non-private map's, or None.
    #[getter]
    fn iou_epsilon(&self) -> Option<f64> {
        self.inner.assessment.as_ref().and_then(|a| a.iou_epsilon)
    }
    /// The planned release (n, domain, response scale, units, L, δ,
    /// threshold, its release spec), as plan.json's `release`.
    #[getter]
    fn release<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py_value(py, &self.inner.release)
    }
    /// The planned release's spec: `gpdp.Mechanism(n=n, **plan.spec,
    /// target_epsilon=ε)` builds it (then the data are not checked against
    /// the proxy, as `gpdp release --plan` does).
    #[getter]
    fn spec<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py_value(py, &self.inner.release.spec)
    }
    /// The warnings `gpdp plan` prints (response range far from the data,
    /// a fitted parameter on its bound, the assessment's), in its order.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    /// The notes `gpdp plan` prints (proxy responses clipped, seeded subsets).
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
    /// plan.json's content, as Python objects.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py_value(py, &self.inner)
    }
    /// plan.json's text, as `gpdp plan` writes it.
    fn to_json(&self) -> PyResult<String> {
        serde_json::to_string_pretty(&self.inner)
            .map_err(|e| crate::errors::GpdpError::new_err(format!("serialising the plan: {e}")))
    }
    /// Writes plan.json to `path` (atomically: a temporary file beside it,
    /// then renamed); refuses an existing file unless `overwrite=True`.
    #[pyo3(signature = (path, *, overwrite=false))]
    fn save(&self, path: PathBuf, overwrite: bool) -> PyResult<()> {
        if path.exists() && !overwrite {
            return Err(ParameterError::new_err(format!(
                "path: {} exists; pass overwrite=True to replace it",
                path.display()
            )));
        }
        let text = self.to_json()?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "plan.json".into());
        let tmp = path.with_file_name(format!("{name}.tmp-{}", std::process::id()));
        let io = |e: std::io::Error| {
            pyo3::exceptions::PyOSError::new_err(format!("writing the plan to {}: {e}", path.display()))
        };
        std::fs::write(&tmp, text.as_bytes()).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e)
        })
    }
    /// The table `gpdp plan` prints.
    fn summary(&self) -> String {
        summary(&self.inner)
    }
    fn __str__(&self) -> String {
        summary(&self.inner)
    }
    fn __repr__(&self) -> String {
        let h = self.inner.fit.hyper;
        format!(
            "Plan(kernel='{}', lengthscale={}, scale={}, noise={}, fitted_ridge={}, epsilons={:?}, n={})",
            self.inner.fit.kernel,
            h.lengthscale,
            h.scale,
            h.noise,
            self.inner.fitted_ridge,
            self.epsilons(),
            self.inner.release.n
        )
    }
}
