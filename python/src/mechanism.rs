//! `Mechanism`, `Release`, `SamplePath` and the non-private posterior.

use std::sync::Mutex;

use gpdp::{Dataset, LazyRelease, Mechanism, Posterior, Query, ReleaseRng, ReleaseSpec};
use numpy::{PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::account::PyPrivacyReport;
use crate::convert::{points, to_py_value, vector};
use crate::errors::{OrPy, bad_arg};
use crate::geometry::{counts_arg, domain_arg, grid_arg};
use crate::params::parse;

/// The generator of a release: OS-seeded ChaCha20 (private), or seeded
/// from `seed` (reproducible and **not private**; the report says so, and a
/// `UserWarning` is issued, as the CLI warns on stderr).
pub(crate) fn rng(py: Python<'_>, seed: Option<u64>) -> PyResult<ReleaseRng> {
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

/// Above this fraction of clipped responses the warning adds advice (as the
/// CLI's loud warning does).
const LOUD_CLIPPING: f64 = 0.03;

/// Warns the operator with a `ClippingWarning` that `clipped` responses
/// were clipped before the release, as `gpdp release` does on stderr. The
/// count depends on the private data: it is a local diagnostic (also in
/// `.diagnostics`), never part of `.report`; nothing is issued when no
/// response was clipped.
fn warn_clipping(py: Python<'_>, m: &Mechanism, clipped: usize) -> PyResult<()> {
    if clipped == 0 {
        return Ok(());
    }
    let p = m.params();
    let n = p.release.n.max(1);
    let range = match &p.response_range {
        Some(r) => format!("the response range [{}, {}]", r.lo, r.hi),
        None => format!("[-{b}, {b}] (response_bound={b})", b = p.release.response_bound),
    };
    let fraction = clipped as f64 / n as f64;
    let advice = if fraction > LOUD_CLIPPING {
        "; the released values flatten towards the range's ends: set response_range to the responses' plausible range in data units"
    } else {
        ""
    };
    let msg = format!(
        "{clipped} of {n} responses ({:.0}%) were clipped to {range} (operator diagnostic about the private data: do not publish it; it is in .diagnostics, never in .report){advice}",
        100.0 * fraction
    );
    let cmsg = std::ffi::CString::new(msg).unwrap_or_default();
    PyErr::warn(py, &py.get_type::<crate::errors::ClippingWarning>(), &cmsg, 1)
}

/// The keys of the release spec: the keywords `Mechanism` takes besides `n`.
#[pyfunction]
pub fn spec_keys() -> Vec<String> {
    ReleaseSpec::keys()
}

/// The release spec from Python keywords: each keyword is a spec key, its
/// value the key's JSON value (numbers, strings, booleans, None, and
/// tuples/lists for `response_range`); the spec refuses unknown keywords.
/// `domain` may also be a tuple or a `gpdp.Box` ([`domain_arg`]) and
/// `covariate_lattice` an int or a tuple of counts ([`counts_arg`]); both
/// become the library's strings. `units` is checked as the CLI checks it.
pub(crate) fn release_spec(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<ReleaseSpec> {
    let mut map = serde_json::Map::new();
    if let Some(kw) = kwargs {
        for (k, v) in kw.iter() {
            let key: String = k.extract()?;
            let value = match key.as_str() {
                "domain" if !v.is_none() => serde_json::Value::String(domain_arg(&v, "domain")?.to_string()),
                "covariate_lattice" if !v.is_none() => serde_json::Value::String(counts_arg(&v, "covariate_lattice")?),
                "units" if !v.is_none() => serde_json::Value::String(crate::params::units(
                    &v.extract::<String>().map_err(|_| bad_arg("units", "expected a string such as \"µg/m³\""))?,
                )?),
                _ => crate::convert::py_to_json(&v, &key)?,
            };
            map.insert(key, value);
        }
    }
    serde_json::from_value(serde_json::Value::Object(map))
        .map_err(|e| crate::errors::ParameterError::new_err(format!("Mechanism: {e}")))
}

impl PyMechanism {
    /// The library's mechanism and, when built from keywords, its spec.
    pub fn parts(&self) -> (&Mechanism, Option<&ReleaseSpec>) {
        (&self.inner, self.spec.as_ref())
    }
}

/// The dataset (X, y): X of shape (n, d) or (n,), y of shape (n,).
pub fn dataset(py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<Dataset> {
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
    spec: Option<ReleaseSpec>,
}

#[pymethods]
impl PyMechanism {
    /// The keywords are the keys of the library's release spec
    /// (`gpdp::ReleaseSpec`, docs/spec.md) — the same as `gpdp release`'s
    /// flags with `_` for `-` — plus `n`, the number of records, and, with
    /// `relation="change-response"`, `covariates`: the public covariates
    /// (shape (n, d) or (n,)) the exact guarantee is computed for; a release
    /// then refuses data with other covariates. Without `covariates` the
    /// change-response guarantee is the bound for any covariates. `n` may be
    /// omitted when `covariates` is given (it is their number of rows).
    #[new]
    #[pyo3(signature = (*, n=None, covariates=None, **spec))]
    fn new(
        py: Python<'_>,
        n: Option<usize>,
        covariates: Option<&Bound<'_, PyAny>>,
        spec: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let spec = release_spec(spec)?;
        let covariates = covariates.map(|c| points(py, c, "covariates")).transpose()?;
        let n = match (n, &covariates) {
            (Some(n), Some(x)) if n != x.len() => {
                return Err(crate::errors::ParameterError::new_err(format!(
                    "Mechanism: n = {n} but covariates has {} rows (under change-response n is the number of public covariates)",
                    x.len()
                )));
            }
            (Some(n), _) => n,
            (None, Some(x)) => x.len(),
            (None, None) => {
                return Err(crate::errors::ParameterError::new_err(
                    "Mechanism: n is required (the number of records), or covariates (the public covariates)",
                ));
            }
        };
        let inner =
            py.detach(|| spec.mechanism_with(n, covariates.as_ref(), gpdp::HyperparameterSource::Stated)).py()?;
        Ok(PyMechanism { inner, spec: Some(spec) })
    }

    /// The neighbouring relation the guarantee holds for, in words.
    #[getter]
    fn neighbouring_relation(&self) -> &'static str {
        self.inner.params().relation.name()
    }

    /// The mechanism's release spec (its keywords, with defaults omitted).
    #[getter]
    fn spec<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.spec {
            Some(s) => to_py_value(py, s),
            None => Ok(py.None().into_bound(py)),
        }
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
    /// shape (m, d) or (m,) — or, with `grid`, on a regular grid over the
    /// domain's box (x1 varies fastest): `grid=N` (N points per axis),
    /// `grid=(N1, N2)` or the string "N" / "N1xN2".
    ///
    /// The result's `.paths` has shape (L, m): one row per draw, one column
    /// per query point. scikit-learn's `GaussianProcessRegressor.sample_y`
    /// returns the transpose, (m, n_samples): use `.paths.T` to compare.
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
        grid: Option<&Bound<'_, PyAny>>,
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
        warn_clipping(py, m, lazy.diagnostics().policy.responses_clipped)?;
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

    /// [`Self::release`]: [`Self::prepare`], then [`Self::draw`].
    #[allow(non_snake_case)]
    pub fn release_inner(
        &self,
        py: Python<'_>,
        X: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
        query: Option<&Bound<'_, PyAny>>,
        grid: Option<&Bound<'_, PyAny>>,
        seed: Option<u64>,
    ) -> PyResult<PyRelease> {
        let prepared = self.prepare(py, X, y, query, grid, seed)?;
        let rel = self.draw(py, prepared)?;
        self.warn_if_clipped(py, &rel)?;
        Ok(rel)
    }

    /// The operator's `ClippingWarning` for `rel` ([`warn_clipping`]); the
    /// ledger issues it after committing, so that a warnings filter turning
    /// it into an error cannot lose a recorded release.
    pub fn warn_if_clipped(&self, py: Python<'_>, rel: &PyRelease) -> PyResult<()> {
        warn_clipping(py, &self.inner, rel.inner.diagnostics.policy.responses_clipped)
    }

    /// Everything a release checks before it draws: the dataset (converted,
    /// then the data policy — n, domain, lattice, reject — via
    /// [`Mechanism::check_data`]), the query (exactly one of points or grid;
    /// finite points) and the generator. The ledger calls this before it
    /// reserves budget, so a refused release consumes none.
    #[allow(non_snake_case)]
    pub fn prepare(
        &self,
        py: Python<'_>,
        X: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
        query: Option<&Bound<'_, PyAny>>,
        grid: Option<&Bound<'_, PyAny>>,
        seed: Option<u64>,
    ) -> PyResult<Prepared> {
        let data = dataset(py, X, y)?;
        let query = match (query.filter(|q| !q.is_none()), grid.filter(|g| !g.is_none())) {
            (Some(q), None) => Query::Points(points(py, q, "query")?),
            (None, Some(g)) => Query::Grid(grid_arg(g, &self.inner.params().release.domain)?),
            _ => {
                return Err(bad_arg(
                    "query/grid",
                    "give exactly one: query points (an array) or grid=N / (N1, N2) / \"N1xN2\"",
                ));
            }
        };
        query.points().check_finite("query").py()?;
        self.inner.check_data(&data).py()?;
        let rng = rng(py, seed)?;
        Ok(Prepared { data, query, rng })
    }

    /// Draws the release from prepared inputs (GIL released).
    pub fn draw(&self, py: Python<'_>, prepared: Prepared) -> PyResult<PyRelease> {
        let Prepared { data, query, mut rng } = prepared;
        let m = &self.inner;
        let rel = py.detach(|| m.release(&data, &query, &mut rng)).py()?;
        Ok(PyRelease { inner: rel, query })
    }
}

/// The checked inputs of one release (from [`PyMechanism::prepare`]).
pub struct Prepared {
    data: Dataset,
    query: Query,
    rng: ReleaseRng,
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
    /// The released values, shape (L, m): row l is path l at the m query
    /// points (L draws × m points). scikit-learn's `sample_y` returns the
    /// transpose, (m, n_samples): `paths.T` has its layout.
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
    /// Runs `f` on the paths with the lock held and the GIL released — while
    /// waiting for the lock and for as long as it is held. So a thread that
    /// holds the lock never waits for the GIL, and threads sharing one path
    /// cannot deadlock (a thread holding the GIL while waiting for the lock,
    /// and the lock's holder waiting for the GIL, was such a deadlock).
    fn with<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut LazyRelease) -> PyResult<T> + Send) -> PyResult<T> {
        py.detach(|| {
            let mut g = self.inner.lock().map_err(|_| crate::errors::GpdpError::new_err("sample path poisoned"))?;
            f(&mut g)
        })
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
    /// `gpdp.SamplePath(draws=L, dim=d, revealed=[…])`: the number of
    /// distinct points each path has revealed so far (as queried: public).
    fn __repr__(&self, py: Python<'_>) -> String {
        let revealed = self
            .with(py, |lazy| Ok(lazy.paths().iter().map(|p| p.revealed().to_string()).collect::<Vec<_>>()))
            .unwrap_or_default();
        format!("gpdp.SamplePath(draws={}, dim={}, revealed=[{}])", revealed.len(), self.dim, revealed.join(", "))
    }

    /// The values of every path at `points` (shape (m, d) or (m,)):
    /// shape (m,) for L = 1, (L, m) otherwise. A point with a non-finite
    /// coordinate raises `DataError` naming it. Safe to call from several
    /// threads (calls on one path run one at a time, without the GIL).
    fn __call__<'py>(&self, py: Python<'py>, points: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let p = self.query_points(py, points)?;
        let rows =
            self.with(py, |lazy| (0..lazy.len()).map(|i| lazy.eval(i, &p)).collect::<gpdp::Result<Vec<_>>>().py())?;
        if rows.len() == 1 {
            Ok(PyArray1::from_vec(py, rows.into_iter().next().unwrap_or_default()).into_any())
        } else {
            Ok(PyArray2::from_vec2(py, &rows).map_err(|e| crate::errors::GpdpError::new_err(e.to_string()))?.into_any())
        }
    }

    /// Path `l`'s values at `points` (0 ≤ l < L).
    fn eval<'py>(&self, py: Python<'py>, l: usize, points: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let p = self.query_points(py, points)?;
        let v = self.with(py, |lazy| {
            if l >= lazy.len() {
                return Err(bad_arg("l", format!("{l} is not a path index (0 ≤ l < {})", lazy.len())));
            }
            lazy.eval(l, &p).py()
        })?;
        Ok(PyArray1::from_vec(py, v))
    }

    /// The number L of paths.
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |lazy| Ok(lazy.len()))
    }

    /// How many points each path has revealed so far.
    #[getter]
    fn revealed(&self, py: Python<'_>) -> PyResult<Vec<usize>> {
        self.with(py, |lazy| Ok(lazy.paths().iter().map(|p| p.revealed()).collect()))
    }

    /// The public report of this lazy release.
    #[getter]
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let r = self.with(py, |lazy| Ok(lazy.report().clone()))?;
        to_py_value(py, &r)
    }
}

/// Two float arrays: the posterior mean and variance.
type MeanAndVariance<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>);

/// The non-private posterior mean μ_D and variance σ²·k_D(x, x) at
/// `query` — NOT differentially private (the CLI's `gpdp posterior`): use
/// it on public or synthetic data only, e.g. to check a model.
///
/// With `response_range=(lo, hi)` the responses are treated as a release
/// treats them: centred on the range's middle and clipped to the range
/// (`scale` is in data units, as for `Mechanism`), and the mean comes back
/// in data units (mid + μ), the prior mean mid = (lo + hi)/2 away from the
/// data. `units` is checked
/// (as `--units` is) and otherwise unused here: `gpdp.nonprivate.posterior`
/// carries it on its result.
#[pyfunction]
#[pyo3(signature = (X, y, query, *, kernel, ridge, scale, lengthscale=None, response_range=None, units=None))]
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
    response_range: Option<&Bound<'py, PyAny>>,
    units: Option<&str>,
) -> PyResult<MeanAndVariance<'py>> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(bad_arg("scale", format!("{scale}: must be a finite number > 0")));
    }
    let kind: gpdp::KernelKind = parse(kernel)?;
    let lengthscale = match (kind.has_lengthscale(), lengthscale) {
        (true, None) => return Err(bad_arg("lengthscale", format!("required for the {kind} kernel"))),
        (_, l) => l.unwrap_or(1.0),
    };
    let range = response_range.filter(|r| !r.is_none()).map(crate::params::response_range).transpose()?;
    if let Some(u) = units {
        crate::params::units(u)?;
    }
    let kernel = gpdp::Kernel::new(kind, lengthscale).py()?;
    let mut data = dataset(py, X, y)?;
    if let Some(r) = range {
        // As the release prepares the responses (centred on the range's
        // middle, then the clip policy at M_Y = the half-width).
        let internal = data.y().iter().map(|&v| r.clip(v)).collect();
        data = Dataset::new(data.x().clone(), internal).py()?;
    }
    let q = points(py, query, "query")?;
    q.check_finite("query").py()?;
    if q.dim() != data.dim() {
        return Err(bad_arg("query", format!("{}-D points but X is {}-D", q.dim(), data.dim())));
    }
    let (mean, var) = py
        .detach(|| -> gpdp::Result<_> {
            let post = Posterior::fit(kernel, &data, ridge)?;
            post.mean_and_variance(&q)
        })
        .py()?;
    let mean = match range {
        Some(r) => mean.into_iter().map(|m| r.to_data(m)).collect(),
        None => mean,
    };
    let s2 = scale * scale;
    Ok((PyArray1::from_vec(py, mean), PyArray1::from_vec(py, var.into_iter().map(|v| s2 * v).collect())))
}
