//! `Mechanism`, `Release`, `SamplePath` and the non-private posterior.

use std::sync::Mutex;

use gpdp::{
    CovariateLattice, Dataset, Grid, LazyRelease, Mechanism, MechanismParams, OnUnbounded, Posterior, Query,
    ReleaseRng, SamplerPolicy, Solve,
};
use numpy::{PyArray1, PyArray2};
use pyo3::prelude::*;

use crate::account::PyPrivacyReport;
use crate::convert::{points, to_py_value, vector};
use crate::errors::{OrPy, bad_arg};
use crate::params::{Model, draws, parse};

/// The generator of a release: OS-seeded ChaCha20 (private), or seeded
/// from `seed` (reproducible and **not private**; the report says so, and a
/// `UserWarning` is issued, as the CLI warns on stderr).
fn rng(py: Python<'_>, seed: Option<u64>) -> PyResult<ReleaseRng> {
    match seed {
        Some(s) => {
            let msg = format!(
                "seed={s} makes the draws reproducible: this is NOT a private release (its report says \"private\": False)"
            );
            let cmsg = std::ffi::CString::new(msg).unwrap_or_default();
            PyErr::warn(py, &py.get_type::<pyo3::exceptions::PyUserWarning>(), &cmsg, 1)?;
            Ok(ReleaseRng::seeded(s))
        }
        None => ReleaseRng::from_os().py(),
    }
}

/// The dataset (X, y): X of shape (n, d) or (n,), y of shape (n,).
fn dataset(py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<Dataset> {
    let x = points(py, x, "X")?;
    let y = vector(py, y, "y")?;
    Dataset::new(x, y).py()
}

/// A checked differentially private release mechanism: kernel, domain, n,
/// ridge r, scale σ, GP noise η, L draws and the data policy, with its
/// (ε, δ) guarantee computed from public inputs only.
///
/// With `target_epsilon`, the parameter named by `solve` (ridge by default)
/// is calibrated to the least permissive value meeting it (as
/// `gpdp release --target-epsilon`); otherwise `ridge` is required. The
/// keywords and defaults are those of `gpdp release`.
#[pyclass(name = "Mechanism", module = "gpdp", frozen)]
pub struct PyMechanism {
    inner: Mechanism,
}

#[pymethods]
impl PyMechanism {
    #[new]
    #[pyo3(signature = (*, kernel, domain, n, delta, lengthscale=None, ridge=None, scale=None, gp_noise=0.0,
        draws=1, response_bound=None, response_range=None, units=None, on_unbounded="clip", sensitivity="auto",
        rkhs_norm=None, assume_rkhs_responses=false, bound="tight", conversion="improved", sampler="auto",
        covariate_lattice=None, max_epsilon=None, target_epsilon=None, solve="ridge", ridge_floor=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        kernel: &str,
        domain: &str,
        n: usize,
        delta: f64,
        lengthscale: Option<f64>,
        ridge: Option<f64>,
        scale: Option<f64>,
        gp_noise: f64,
        draws: u64,
        response_bound: Option<f64>,
        response_range: Option<(f64, f64)>,
        units: Option<String>,
        on_unbounded: &str,
        sensitivity: &str,
        rkhs_norm: Option<f64>,
        assume_rkhs_responses: bool,
        bound: &str,
        conversion: &str,
        sampler: &str,
        covariate_lattice: Option<&str>,
        max_epsilon: Option<f64>,
        target_epsilon: Option<f64>,
        solve: &str,
        ridge_floor: Option<f64>,
    ) -> PyResult<Self> {
        let solve: Solve = parse(solve)?;
        let calibrating = target_epsilon.is_some();
        if solve == Solve::Draws {
            return Err(bad_arg("solve", "\"draws\" is not available for a release; fix draws"));
        }
        if calibrating && solve == Solve::Ridge && ridge.is_some() {
            return Err(bad_arg("ridge", "give either ridge or target_epsilon (which calibrates the ridge), not both"));
        }
        if ridge_floor.is_some() && !(calibrating && solve == Solve::Ridge) {
            return Err(bad_arg(
                "ridge_floor",
                "only used when calibrating the ridge (target_epsilon with solve=\"ridge\")",
            ));
        }
        // The responses' scale is a required public choice (no default M_Y): a default of 1
        // silently clipped data in real units, and refusing on the clipped count would depend
        // on the data.
        let response = match (response_range, response_bound) {
            (Some((lo, hi)), None) => gpdp::ResponseScale::Range(gpdp::model::units::ResponseRange::new(lo, hi).py()?),
            (None, Some(m)) => gpdp::ResponseScale::Bound(m),
            (Some(_), Some(_)) => {
                return Err(bad_arg(
                    "response_bound",
                    "give either response_range (data units) or response_bound (M_Y), not both",
                ));
            }
            (None, None) => {
                return Err(bad_arg(
                    "response_range",
                    "required: the responses' plausible range (lo, hi) in data units, or response_bound=M_Y (|y| ≤ M_Y in the data's units); there is no default",
                ));
            }
        };
        let response_bound = response.bound();
        let model = Model {
            kernel,
            lengthscale,
            domain,
            n,
            ridge,
            scale,
            gp_noise,
            response_bound,
            sensitivity,
            rkhs_norm,
            bound,
        };
        let release = model.params(!calibrating || solve != Solve::Ridge, !calibrating || solve != Solve::Scale)?;
        let dim = release.domain.dim();
        let mut p = MechanismParams::new(release, delta, response);
        p.draws = self::draws(draws)?;
        p.conversion = parse(conversion)?;
        p.on_unbounded = parse::<OnUnbounded>(on_unbounded)?;
        p.sampler = parse::<SamplerPolicy>(sampler)?;
        p.covariate_lattice = covariate_lattice.map(|s| CovariateLattice::parse(s, dim)).transpose().py()?;
        p.max_epsilon = max_epsilon;
        p.assume_rkhs_responses = assume_rkhs_responses;
        p.units = units;
        let inner = py
            .detach(|| match target_epsilon {
                Some(eps) if solve == Solve::Ridge => gpdp::plan::calibrate_with_floor(&p, eps, ridge_floor),
                Some(eps) => p.calibrate(solve, eps),
                None => p.check(),
            })
            .py()?;
        Ok(PyMechanism { inner })
    }

    /// The guarantee of one use of the mechanism (all its draws).
    #[getter]
    fn privacy(&self) -> PyPrivacyReport {
        PyPrivacyReport { inner: self.inner.privacy().clone() }
    }

    /// ε of the guarantee.
    #[getter]
    fn epsilon(&self) -> f64 {
        self.inner.privacy().epsilon
    }

    /// The (possibly calibrated) ridge r.
    #[getter]
    fn ridge(&self) -> f64 {
        self.inner.params().release.ridge
    }

    /// The (possibly calibrated) scale σ.
    #[getter]
    fn scale(&self) -> f64 {
        self.inner.params().release.scale
    }

    /// The (possibly calibrated) GP noise η.
    #[getter]
    fn gp_noise(&self) -> f64 {
        self.inner.params().release.gp_noise
    }

    /// The number L of paths each release draws.
    #[getter]
    fn draws(&self) -> u64 {
        self.inner.params().draws.get()
    }

    /// The calibration (target, solved value, evidence), or None.
    #[getter]
    fn calibration<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py_value(py, &self.inner.calibration())
    }

    /// Draws the L private sample paths at `query` — an array of points,
    /// shape (m, d) or (m,) — or, with `grid` ("N" or "NxM"), on a regular
    /// grid over the domain's box (x1 varies fastest).
    ///
    /// `seed=None` (the default) uses an OS-seeded CSPRNG: a private
    /// release. A seed makes the draws reproducible and the release **not
    /// private** (`report["private"]` is False). The data are checked against
    /// the domain and the response policy (clip or reject).
    #[pyo3(signature = (X, y, query=None, *, grid=None, seed=None))]
    #[allow(non_snake_case)]
    fn release(
        &self,
        py: Python<'_>,
        X: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
        query: Option<&Bound<'_, PyAny>>,
        grid: Option<&str>,
        seed: Option<u64>,
    ) -> PyResult<PyRelease> {
        self.release_inner(py, X, y, query, grid, seed)
    }

    /// Fits the posterior once and returns L lazy sample paths: call the
    /// result on new points as often as you like — each call is an exact
    /// draw conditional on everything the paths revealed before, so values
    /// are consistent (the same point twice gives the same value) and the
    /// whole sequence is one draw of the mechanism, covered by its single
    /// guarantee. `max_points` caps how many points each path reveals.
    #[pyo3(signature = (X, y, *, max_points=4096, seed=None))]
    #[allow(non_snake_case)]
    fn sample_path(
        &self,
        py: Python<'_>,
        X: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
        max_points: usize,
        seed: Option<u64>,
    ) -> PyResult<PySamplePath> {
        let data = dataset(py, X, y)?;
        let rng = rng(py, seed)?;
        let m = &self.inner;
        let lazy = py.detach(|| m.sample_paths(&data, max_points, rng)).py()?;
        Ok(PySamplePath { inner: Mutex::new(lazy), dim: m.params().release.domain.dim() })
    }

    fn __repr__(&self) -> String {
        let p = self.inner.params();
        let r = &p.release;
        format!(
            "Mechanism(kernel='{}', n={}, ridge={}, scale={}, gp_noise={}, draws={}, epsilon={}, delta={})",
            r.kernel.kind(),
            r.n,
            r.ridge,
            r.scale,
            r.gp_noise,
            p.draws.get(),
            self.inner.privacy().epsilon,
            self.inner.privacy().delta
        )
    }
}

impl PyMechanism {
    pub fn inner(&self) -> &Mechanism {
        &self.inner
    }

    /// [`Self::release`] (also used by the ledger).
    #[allow(non_snake_case)]
    pub fn release_inner(
        &self,
        py: Python<'_>,
        X: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
        query: Option<&Bound<'_, PyAny>>,
        grid: Option<&str>,
        seed: Option<u64>,
    ) -> PyResult<PyRelease> {
        let data = dataset(py, X, y)?;
        let query = match (query, grid) {
            (Some(q), None) => Query::Points(points(py, q, "query")?),
            (None, Some(g)) => Query::Grid(Grid::parse(g, &self.inner.params().release.domain).py()?),
            _ => return Err(bad_arg("query/grid", "give exactly one: query points (an array) or grid=\"N\"/\"NxM\"")),
        };
        let mut rng = rng(py, seed)?;
        let m = &self.inner;
        let rel = py.detach(|| m.release(&data, &query, &mut rng)).py()?;
        Ok(PyRelease { inner: rel, query })
    }
}

impl PyRelease {
    /// The released values, path by path.
    pub fn paths_ref(&self) -> &[Vec<f64>] {
        &self.inner.paths
    }
}

/// The result of `Mechanism.release`: the L released paths at the query
/// points and the public report (what `report.json` holds).
#[pyclass(name = "Release", module = "gpdp", frozen)]
pub struct PyRelease {
    inner: gpdp::PrivateRelease,
    query: Query,
}

#[pymethods]
impl PyRelease {
    /// The released values, shape (L, m): row l is path l at the query points.
    #[getter]
    fn paths<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        PyArray2::from_vec2(py, &self.inner.paths).map_err(|e| crate::errors::GpdpError::new_err(e.to_string()))
    }

    /// The query points, shape (m, d).
    #[getter]
    fn query<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let pts = self.query.points();
        let rows: Vec<Vec<f64>> = pts.iter().map(|p| p.to_vec()).collect();
        PyArray2::from_vec2(py, &rows).map_err(|e| crate::errors::GpdpError::new_err(e.to_string()))
    }

    /// The public report: guarantee, calibration, data policy, query,
    /// sampler, generator (`private` is False for seeded draws).
    #[getter]
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py_value(py, &self.inner.report)
    }

    /// The guarantee of this release.
    #[getter]
    fn privacy(&self) -> PyPrivacyReport {
        PyPrivacyReport { inner: self.inner.report.privacy.clone() }
    }

    /// Whether the draws came from an OS-seeded generator.
    #[getter]
    fn private(&self) -> bool {
        self.inner.report.private
    }

    /// Operator diagnostics — NOT covered by ε and not to be published
    /// (e.g. how many responses were clipped) — and timings.
    #[getter]
    fn diagnostics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py_value(py, &self.inner.diagnostics)
    }

    fn __repr__(&self) -> String {
        format!(
            "Release(paths={}×{}, epsilon={}, private={})",
            self.inner.paths.len(),
            self.query.len(),
            self.inner.report.privacy.epsilon,
            self.inner.report.private
        )
    }
}

/// L lazy private sample paths (from `Mechanism.sample_path`).
///
/// `path(points)` returns shape (m,) for one draw, (L, m) for several;
/// `path.eval(l, points)` one path's values. Every value revealed is part
/// of one draw of the mechanism: repeated and adaptive queries cost no
/// extra privacy budget.
#[pyclass(name = "SamplePath", module = "gpdp", frozen)]
pub struct PySamplePath {
    inner: Mutex<LazyRelease>,
    dim: usize,
}

impl PySamplePath {
    fn with<T>(&self, f: impl FnOnce(&mut LazyRelease) -> PyResult<T>) -> PyResult<T> {
        let mut g = self.inner.lock().map_err(|_| crate::errors::GpdpError::new_err("sample path poisoned"))?;
        f(&mut g)
    }

    fn query_points(&self, py: Python<'_>, pts: &Bound<'_, PyAny>) -> PyResult<gpdp::Points> {
        let p = points(py, pts, "points")?;
        if p.dim() != self.dim {
            return Err(bad_arg("points", format!("{}-D points for a {}-D domain", p.dim(), self.dim)));
        }
        Ok(p)
    }
}

#[pymethods]
impl PySamplePath {
    /// The values of every path at `points` (shape (m, d) or (m,)):
    /// shape (m,) for L = 1, (L, m) otherwise.
    fn __call__<'py>(&self, py: Python<'py>, points: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let p = self.query_points(py, points)?;
        let rows = self.with(|lazy| {
            let l = lazy.len();
            py.detach(|| (0..l).map(|i| lazy.eval(i, &p)).collect::<gpdp::Result<Vec<_>>>()).py()
        })?;
        if rows.len() == 1 {
            Ok(PyArray1::from_vec(py, rows.into_iter().next().unwrap_or_default()).into_any())
        } else {
            Ok(PyArray2::from_vec2(py, &rows).map_err(|e| crate::errors::GpdpError::new_err(e.to_string()))?.into_any())
        }
    }

    /// Path `l`'s values at `points` (0 ≤ l < L).
    fn eval<'py>(&self, py: Python<'py>, l: usize, points: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let p = self.query_points(py, points)?;
        let v = self.with(|lazy| {
            if l >= lazy.len() {
                return Err(bad_arg("l", format!("{l} is not a path index (0 ≤ l < {})", lazy.len())));
            }
            py.detach(|| lazy.eval(l, &p)).py()
        })?;
        Ok(PyArray1::from_vec(py, v))
    }

    /// The number L of paths.
    fn __len__(&self) -> PyResult<usize> {
        self.with(|lazy| Ok(lazy.len()))
    }

    /// How many points each path has revealed so far.
    #[getter]
    fn revealed(&self) -> PyResult<Vec<usize>> {
        self.with(|lazy| Ok(lazy.paths().iter().map(|p| p.revealed()).collect()))
    }

    /// The public report of this lazy release.
    #[getter]
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let r = self.with(|lazy| Ok(lazy.report().clone()))?;
        to_py_value(py, &r)
    }
}

/// Two float arrays: the posterior mean and variance.
type MeanAndVariance<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>);

/// The non-private posterior mean μ_D and variance σ²·k_D(x, x) at
/// `query` — NOT differentially private (the CLI's `gpdp posterior`): use
/// it on public or synthetic data only, e.g. to check a model.
#[pyfunction]
#[pyo3(signature = (X, y, query, *, kernel, ridge, scale, lengthscale=None))]
#[allow(non_snake_case)]
#[allow(clippy::too_many_arguments)]
pub fn posterior<'py>(
    py: Python<'py>,
    X: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    query: &Bound<'py, PyAny>,
    kernel: &str,
    ridge: f64,
    scale: f64,
    lengthscale: Option<f64>,
) -> PyResult<MeanAndVariance<'py>> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(bad_arg("scale", format!("{scale}: must be a finite number > 0")));
    }
    let kind: gpdp::KernelKind = parse(kernel)?;
    let lengthscale = match (kind.has_lengthscale(), lengthscale) {
        (true, None) => return Err(bad_arg("lengthscale", format!("required for the {kind} kernel"))),
        (_, l) => l.unwrap_or(1.0),
    };
    let kernel = gpdp::Kernel::new(kind, lengthscale).py()?;
    let data = dataset(py, X, y)?;
    let q = points(py, query, "query")?;
    if q.dim() != data.dim() {
        return Err(bad_arg("query", format!("{}-D points but X is {}-D", q.dim(), data.dim())));
    }
    let (mean, var) = py
        .detach(|| -> gpdp::Result<_> {
            let post = Posterior::fit(kernel, &data, ridge)?;
            post.mean_and_variance(&q)
        })
        .py()?;
    let s2 = scale * scale;
    Ok((PyArray1::from_vec(py, mean), PyArray1::from_vec(py, var.into_iter().map(|v| s2 * v).collect())))
}
