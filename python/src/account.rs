//! `account`, `account_batch`, `calibrate` and their result classes.

use gpdp::privacy::calibrate::Calibration;
// The columns `account_batch` accepts: the keywords of `account`, which are
// the CLI batch's columns.
use gpdp::io::batch::COLUMNS as BATCH_COLUMNS;
use gpdp::{Accounting, NeighbouringRelation, PrivacyReport, Solve, Target};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyInt, PyList, PyString};
use rayon::prelude::*;
use serde_json::Value;
use std::collections::HashMap;

use crate::convert::to_py_value;
use crate::errors::{OrPy, bad_arg, to_py};
use crate::geometry::{PyBox, domain_arg};
use crate::params::{Model, draws, parse};

/// The (ε, δ) guarantee of a release and everything it rests on: ε, δ, the
/// optimal Rényi order α and the RDP value there, the admissible range of
/// α, the conversion, and per component the variance bound V̂_n, the
/// sensitivity bound Δ̂_n and which lemma or proof gave each
/// (docs/accountant.md). `to_dict()` gives the same fields as
/// `gpdp account --json`.
#[pyclass(name = "PrivacyReport", module = "gpdp", frozen)]
pub struct PyPrivacyReport {
    pub inner: PrivacyReport,
}

#[pymethods]
impl PyPrivacyReport {
    /// ε of the (ε, δ) guarantee (rounded up).
    #[getter]
    fn epsilon(&self) -> f64 {
        self.inner.epsilon
    }
    /// δ of the guarantee.
    #[getter]
    fn delta(&self) -> f64 {
        self.inner.delta
    }
    /// The Rényi order α at which the conversion was optimal.
    #[getter]
    fn alpha(&self) -> f64 {
        self.inner.alpha
    }
    /// The largest admissible order (exclusive).
    #[getter]
    fn alpha_max(&self) -> f64 {
        self.inner.alpha_max
    }
    /// The RDP value of all draws at `alpha`.
    #[getter]
    fn rdp(&self) -> f64 {
        self.inner.rdp
    }
    /// The RDP → (ε, δ) conversion used.
    #[getter]
    fn conversion(&self) -> String {
        self.inner.conversion.to_string()
    }
    /// The neighbouring relation the statement holds for, in words.
    #[getter]
    fn neighbouring_relation(&self) -> &'static str {
        self.inner.neighbouring_relation().name()
    }
    /// With exact Gaussian accounting (change-response): μ, how it was
    /// obtained and the release's parameters, as a dict; else None.
    #[getter]
    fn gaussian<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py_value(py, &self.inner.gaussian)
    }
    /// The per-release components (kernel, n, r, σ, η, L, V̂_n, Δ̂_n, …), as dicts.
    #[getter]
    fn components<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py_value(py, &self.inner.components)
    }
    /// All fields, as `gpdp account --json` prints them.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py_value(py, &self.inner.to_value())
    }
    fn __repr__(&self) -> String {
        format!(
            "PrivacyReport(epsilon={}, delta={}, alpha={}, rdp={}, conversion='{}')",
            self.inner.epsilon, self.inner.delta, self.inner.alpha, self.inner.rdp, self.inner.conversion
        )
    }
}

/// Which question: ε for a δ, or δ for an ε.
fn question(delta: Option<f64>, epsilon: Option<f64>) -> PyResult<(bool, f64)> {
    match (delta, epsilon) {
        (Some(d), None) => Ok((true, d)),
        (None, Some(e)) => Ok((false, e)),
        _ => Err(bad_arg("delta/epsilon", "give exactly one of delta= (to get ε) or epsilon= (to get δ)")),
    }
}

/// The privacy guarantee of releasing `draws` posterior sample paths.
///
/// Give `delta` to get the smallest ε, or `epsilon` to get the smallest δ.
/// The keywords and their defaults are those of `gpdp account`.
#[pyfunction]
#[pyo3(signature = (*, kernel, domain, n=None, ridge, scale, lengthscale=None, draws=1, delta=None, epsilon=None,
    gp_noise=0.0, response_bound=1.0, sensitivity="auto", rkhs_norm=None, bound="tight", conversion="improved",
    relation="replace-one", covariates=None))]
#[allow(clippy::too_many_arguments)]
pub fn account(
    py: Python<'_>,
    kernel: &str,
    domain: &Bound<'_, PyAny>,
    n: Option<usize>,
    ridge: f64,
    scale: f64,
    lengthscale: Option<f64>,
    draws: u64,
    delta: Option<f64>,
    epsilon: Option<f64>,
    gp_noise: f64,
    response_bound: f64,
    sensitivity: &str,
    rkhs_norm: Option<f64>,
    bound: &str,
    conversion: &str,
    relation: &str,
    covariates: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyPrivacyReport> {
    let (relation, covariates, n) = relation_inputs(py, relation, covariates, n)?;
    let model = Model {
        kernel,
        lengthscale,
        domain: domain_arg(domain, "domain")?,
        n,
        ridge: Some(ridge),
        scale: Some(scale),
        gp_noise,
        response_bound,
        sensitivity,
        rkhs_norm,
        bound,
    };
    let params = model.params(None)?;
    let draws = self::draws(draws)?;
    let conv: Accounting = parse(conversion)?;
    let (want_eps, value) = question(delta, epsilon)?;
    if gpdp::privacy::data_free::is_data_free(&params) && relation == NeighbouringRelation::ReplaceOne {
        let (d, e) = if want_eps { (Some(value), None) } else { (None, Some(value)) };
        let inner =
            gpdp::privacy::data_free::account(&params, draws, d, e).and_then(|r| r.privacy_report(conv)).py()?;
        return Ok(PyPrivacyReport { inner });
    }
    if relation == NeighbouringRelation::ChangeResponse {
        let (d, e) = if want_eps { (Some(value), None) } else { (None, Some(value)) };
        let inner = py
            .detach(|| {
                gpdp::privacy::change_response::account(&params, draws, covariates.as_ref(), d, e)?.privacy_report(conv)
            })
            .py()?;
        return Ok(PyPrivacyReport { inner });
    }
    let run = move || -> gpdp::Result<PrivacyReport> {
        let rel = params.check()?;
        if want_eps { rel.epsilon(draws, value, conv) } else { rel.delta(draws, value, conv) }
    };
    // Cheap queries keep the GIL (releasing it costs more than they take);
    // the joint bound's certification releases it.
    let inner = if model_is_slow(bound) { py.detach(run) } else { run() }.py()?;
    Ok(PyPrivacyReport { inner })
}

/// The `relation` and `covariates` keywords (covariates only with
/// change-response) and n (required unless the covariates give it).
fn relation_inputs(
    py: Python<'_>,
    relation: &str,
    covariates: Option<&Bound<'_, PyAny>>,
    n: Option<usize>,
) -> PyResult<(NeighbouringRelation, Option<gpdp::Points>, usize)> {
    let relation: NeighbouringRelation = relation.parse().map_err(|e: gpdp::Error| bad_arg("relation", e))?;
    let covariates =
        covariates.filter(|c| !c.is_none()).map(|c| crate::convert::points(py, c, "covariates")).transpose()?;
    if covariates.is_some() && relation != NeighbouringRelation::ChangeResponse {
        return Err(bad_arg(
            "covariates",
            "public covariates are used only with relation=\"change-response\" (replace-one protects the covariates too)",
        ));
    }
    let n = match (n, &covariates) {
        (Some(n), Some(x)) if n != x.len() => {
            return Err(bad_arg(
                "n",
                format!("is {n} but covariates has {} rows (n is the number of public covariates)", x.len()),
            ));
        }
        (Some(n), _) => n,
        (None, Some(x)) => x.len(),
        (None, None) => return Err(bad_arg("n", "required (or covariates, whose row count is n)")),
    };
    Ok((relation, covariates, n))
}

fn model_is_slow(bound: &str) -> bool {
    bound.trim().eq_ignore_ascii_case("joint")
}

/// One column of `account_batch`: a scalar for every row or one value per row.
enum Column {
    Num(Vec<f64>),
    NumScalar(f64),
    Str(Vec<String>),
    StrScalar(String),
    Missing,
}

impl Column {
    /// A column from a keyword: a string or a real number (the same for
    /// every row), or a 1-D array or sequence of numbers or strings (one per
    /// row; any strides). Complex values are refused, never truncated to
    /// their real parts; `None` (or an absent keyword) is a missing column.
    fn from_py(py: Python<'_>, name: &str, v: Option<&Bound<'_, PyAny>>) -> PyResult<Column> {
        let Some(v) = v else { return Ok(Column::Missing) };
        if v.is_none() {
            return Ok(Column::Missing);
        }
        // A gpdp.Box is one domain for every row (a tuple would be a column).
        if let Ok(b) = v.cast::<PyBox>() {
            return Ok(Column::StrScalar(b.get().domain.to_string()));
        }
        if let Ok(s) = v.cast::<PyString>() {
            return Ok(Column::StrScalar(s.to_cow()?.into_owned()));
        }
        if v.is_instance_of::<PyFloat>() || v.is_instance_of::<PyInt>() {
            return Ok(Column::NumScalar(v.extract::<f64>().map_err(|e| bad_arg(name, e))?));
        }
        if let Ok(a) = v.extract::<PyReadonlyArray1<f64>>() {
            return Ok(Column::Num(a.as_array().to_vec()));
        }
        let np = py.import("numpy")?;
        let arr = np.call_method1("asarray", (v,)).map_err(|e| bad_arg(name, e))?;
        let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
        let ndim: usize = arr.getattr("ndim")?.extract()?;
        if kind == "c" {
            return Err(bad_arg(name, "complex values are not accepted (give real numbers)"));
        }
        let numeric = "biuf".contains(kind.as_str());
        match ndim {
            0 if numeric => {
                Ok(Column::NumScalar(arr.call_method0("item")?.extract::<f64>().map_err(|e| bad_arg(name, e))?))
            }
            0 => {
                let s: String = arr
                    .call_method0("item")?
                    .extract()
                    .map_err(|_| bad_arg(name, "expected a string, a number, or a 1-D array of them"))?;
                Ok(Column::StrScalar(s))
            }
            1 if numeric => {
                let a = arr.call_method1("astype", ("float64",))?;
                let a: PyReadonlyArray1<f64> =
                    a.extract().map_err(|_| bad_arg(name, "expected a scalar or a 1-D array of numbers"))?;
                Ok(Column::Num(a.as_array().to_vec()))
            }
            1 => {
                let s: Vec<String> = arr
                    .call_method0("tolist")?
                    .extract()
                    .map_err(|_| bad_arg(name, "expected a string, a number, or a 1-D array of them"))?;
                Ok(Column::Str(s))
            }
            k => Err(bad_arg(name, format!("expected a scalar or a 1-D array, got {k} dimensions"))),
        }
    }

    fn len(&self) -> Option<usize> {
        match self {
            Column::Num(v) => Some(v.len()),
            Column::Str(v) => Some(v.len()),
            _ => None,
        }
    }

    fn num(&self, name: &str, i: usize) -> PyResult<Option<f64>> {
        match self {
            Column::Num(v) => Ok(Some(v[i])),
            Column::NumScalar(x) => Ok(Some(*x)),
            Column::Missing => Ok(None),
            _ => Err(bad_arg(name, "expected numbers, got strings")),
        }
    }

    fn text(&self, name: &str, i: usize) -> PyResult<Option<&str>> {
        match self {
            Column::Str(v) => Ok(Some(v[i].as_str())),
            Column::StrScalar(s) => Ok(Some(s.as_str())),
            Column::Missing => Ok(None),
            _ => Err(bad_arg(name, "expected strings, got numbers")),
        }
    }
}

/// A whole integer from a float column (n, draws).
fn whole(name: &str, row: usize, x: f64) -> PyResult<u64> {
    if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x < 9.0e15 {
        Ok(x as u64)
    } else {
        Err(bad_arg(name, format!("row {row}: expected a whole number ≥ 0, got {x}")))
    }
}

struct BatchRow {
    params: gpdp::ReleaseParams,
    draws: gpdp::Draws,
    conversion: Accounting,
    want_eps: bool,
    value: f64,
}

/// The guarantee of many parameter sets at once.
///
/// Every keyword of `account` may be a scalar (the same for every row) or a
/// 1-D array (one value per row; all arrays the same length). Returns a
/// dict of numpy arrays, one per field of the flattened report — the
/// columns `gpdp account --batch` writes (numbers as float64 with NaN for
/// an absent value, booleans as bool, text as str arrays). Arrays may have
/// any strides (slices, views); complex values and empty columns are
/// refused. Rows are evaluated in parallel; an invalid row raises an error
/// naming it (0-based).
#[pyfunction]
#[pyo3(signature = (**columns))]
pub fn account_batch<'py>(py: Python<'py>, columns: Option<&Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyDict>> {
    let empty = PyDict::new(py);
    let columns = columns.unwrap_or(&empty);
    for k in columns.keys() {
        let k: String = k.extract()?;
        if !BATCH_COLUMNS.contains(&k.as_str()) {
            return Err(bad_arg(&k, format!("unknown column; the columns are {}", BATCH_COLUMNS.join(", "))));
        }
    }
    let cols: Vec<Column> = BATCH_COLUMNS
        .iter()
        .map(|&c| Column::from_py(py, c, columns.get_item(c)?.as_ref()))
        .collect::<PyResult<_>>()?;
    let col = |name: &str| &cols[BATCH_COLUMNS.iter().position(|&c| c == name).unwrap_or(0)];
    let mut rows = None;
    for (c, name) in cols.iter().zip(BATCH_COLUMNS) {
        if let Some(l) = c.len() {
            match rows {
                None => rows = Some((l, name)),
                Some((m, first)) if m != l => {
                    return Err(bad_arg(name, format!("has {l} rows but {first} has {m}")));
                }
                _ => {}
            }
        }
    }
    if let Some((0, name)) = rows {
        return Err(bad_arg(name, "has 0 rows: give at least one parameter set"));
    }
    let rows = rows.map_or(1, |r| r.0);
    gpdp::check_memory(
        "this batch",
        &[gpdp::Need::items("the parameter sets and reports (≈ 3 KiB per row)", rows as f64, 3072)],
        "split the batch",
    )
    .py()?;
    let req_text =
        |name: &str, i: usize| -> PyResult<&str> { col(name).text(name, i)?.ok_or_else(|| bad_arg(name, "required")) };
    let req_num =
        |name: &str, i: usize| -> PyResult<f64> { col(name).num(name, i)?.ok_or_else(|| bad_arg(name, "required")) };
    let mut parsed = Vec::with_capacity(rows);
    for i in 0..rows {
        let row_err = |e: PyErr| -> PyErr {
            let msg = e.value(py).to_string();
            crate::errors::ParameterError::new_err(format!("row {i}: {msg}"))
        };
        let build = || -> PyResult<BatchRow> {
            let model = Model {
                kernel: req_text("kernel", i)?,
                lengthscale: col("lengthscale").num("lengthscale", i)?.filter(|x| !x.is_nan()),
                domain: req_text("domain", i)?.parse::<gpdp::Domain>().py()?,
                n: whole("n", i, req_num("n", i)?)? as usize,
                ridge: Some(req_num("ridge", i)?),
                scale: Some(req_num("scale", i)?),
                gp_noise: col("gp_noise").num("gp_noise", i)?.unwrap_or(0.0),
                response_bound: col("response_bound").num("response_bound", i)?.unwrap_or(1.0),
                sensitivity: col("sensitivity").text("sensitivity", i)?.unwrap_or("auto"),
                rkhs_norm: col("rkhs_norm").num("rkhs_norm", i)?.filter(|x| !x.is_nan()),
                bound: col("bound").text("bound", i)?.unwrap_or("tight"),
            };
            let (want_eps, value) = question(
                col("delta").num("delta", i)?.filter(|x| !x.is_nan()),
                col("epsilon").num("epsilon", i)?.filter(|x| !x.is_nan()),
            )?;
            Ok(BatchRow {
                params: model.params(None)?,
                draws: draws(whole("draws", i, col("draws").num("draws", i)?.unwrap_or(1.0))?)?,
                conversion: parse(col("conversion").text("conversion", i)?.unwrap_or("improved"))?,
                want_eps,
                value,
            })
        };
        parsed.push(build().map_err(row_err)?);
    }
    // Each row's report, flattened to the columns `gpdp account --batch`
    // writes, in parallel.
    let flat: Vec<Vec<(String, Value)>> = py
        .detach(|| {
            parsed
                .par_iter()
                .enumerate()
                .map(|(i, r)| {
                    let rep = r.params.check().and_then(|rel| {
                        if r.want_eps {
                            rel.epsilon(r.draws, r.value, r.conversion)
                        } else {
                            rel.delta(r.draws, r.value, r.conversion)
                        }
                    });
                    rep.map(|rep| rep.flat_fields()).map_err(|e| (i, e))
                })
                .collect::<Result<Vec<_>, (usize, gpdp::Error)>>()
        })
        .map_err(|(i, e)| {
            let p = to_py(e);
            let msg = p.value(py).to_string();
            PyErr::from_type(p.get_type(py), format!("row {i}: {msg}"))
        })?;
    // Columns (every row is one release, so every report has the same
    // fields): numbers as float64 (null → NaN), text as str arrays.
    let out = PyDict::new(py);
    let Some(first) = flat.first() else { return Ok(out) };
    let np = py.import("numpy")?;
    for (j, (name, _)) in first.iter().enumerate() {
        let numeric = flat.iter().all(|f| matches!(f[j].1, Value::Number(_) | Value::Null));
        if numeric {
            let v: Vec<f64> = flat.iter().map(|f| f[j].1.as_f64().unwrap_or(f64::NAN)).collect();
            out.set_item(name, PyArray1::from_vec(py, v))?;
            continue;
        }
        if flat.iter().all(|f| matches!(f[j].1, Value::Bool(_))) {
            let v: Vec<bool> = flat.iter().map(|f| f[j].1.as_bool().unwrap_or(false)).collect();
            out.set_item(name, PyArray1::from_vec(py, v))?;
            continue;
        }
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        let t0 = text(&first[j].1);
        if flat.iter().all(|f| text(&f[j].1) == t0) {
            out.set_item(name, np.call_method1("full", (flat.len(), t0))?)?;
            continue;
        }
        // Repeated values share one Python string.
        let mut seen: HashMap<String, Bound<'py, PyString>> = HashMap::new();
        let l = PyList::empty(py);
        for f in &flat {
            let t = text(&f[j].1);
            let s = seen.entry(t).or_insert_with_key(|k| PyString::new(py, k));
            l.append(s.clone())?;
        }
        out.set_item(name, np.call_method1("array", (l,))?)?;
    }
    Ok(out)
}

/// The result of `calibrate`: the solved value, the full report at it, and
/// the evidence that it is (nearly) the least permissive — a value 0.1%
/// more permissive and its ε, which exceeds the target.
#[pyclass(name = "Calibration", module = "gpdp", frozen)]
pub struct PyCalibration {
    pub inner: Calibration,
    pub target_epsilon: f64,
}

#[pymethods]
impl PyCalibration {
    /// What was solved for: "ridge", "scale", "gp-noise" or "draws".
    #[getter]
    fn solve(&self) -> &'static str {
        self.inner.solve.name()
    }
    /// The solved value (r, σ, η or L).
    #[getter]
    fn value(&self) -> f64 {
        self.inner.value
    }
    /// The privacy report at `value` (ε ≤ the target).
    #[getter]
    fn report(&self) -> PyPrivacyReport {
        PyPrivacyReport { inner: self.inner.report.clone() }
    }
    /// A value 0.1% more permissive (value/1.001, or L + 1).
    #[getter]
    fn permissive_value(&self) -> f64 {
        self.inner.permissive_value
    }
    /// The ε at `permissive_value` (above the target), or inf.
    #[getter]
    fn permissive_epsilon(&self) -> f64 {
        self.inner.permissive_epsilon
    }
    /// The same fields as `gpdp calibrate --json`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let d = PyDict::new(py);
        d.set_item("solve", self.inner.solve.name())?;
        d.set_item("value", self.inner.value)?;
        d.set_item("report", to_py_value(py, &self.inner.report.to_value())?)?;
        d.set_item("neighbouring_relation", self.inner.report.neighbouring_relation().name())?;
        d.set_item("target_epsilon", self.target_epsilon)?;
        d.set_item("permissive_value", self.inner.permissive_value)?;
        let pe = self.inner.permissive_epsilon;
        d.set_item("permissive_epsilon", if pe.is_finite() { Some(pe) } else { None })?;
        Ok(d.into_any())
    }
    fn __repr__(&self) -> String {
        format!(
            "Calibration(solve='{}', value={}, epsilon={})",
            self.inner.solve.name(),
            self.inner.value,
            self.inner.report.epsilon
        )
    }
}

/// The least permissive ridge r, scale σ or GP noise η (or the largest
/// number of draws L) whose guarantee meets `target_epsilon` at `delta` —
/// `gpdp calibrate`. The parameter solved for may be omitted.
#[pyfunction]
#[pyo3(signature = (*, solve="ridge", target_epsilon, delta, kernel, domain, n=None, lengthscale=None, ridge=None,
    scale=None, gp_noise=0.0, draws=None, response_bound=1.0, sensitivity="auto", rkhs_norm=None, bound="tight",
    conversion="improved", relation="replace-one", covariates=None))]
#[allow(clippy::too_many_arguments)]
pub fn calibrate(
    py: Python<'_>,
    solve: &str,
    target_epsilon: f64,
    delta: f64,
    kernel: &str,
    domain: &Bound<'_, PyAny>,
    n: Option<usize>,
    lengthscale: Option<f64>,
    ridge: Option<f64>,
    scale: Option<f64>,
    gp_noise: f64,
    draws: Option<u64>,
    response_bound: f64,
    sensitivity: &str,
    rkhs_norm: Option<f64>,
    bound: &str,
    conversion: &str,
    relation: &str,
    covariates: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyCalibration> {
    let (relation, covariates, n) = relation_inputs(py, relation, covariates, n)?;
    let solve: Solve = parse(solve)?;
    if solve == Solve::Draws && draws.is_some() {
        return Err(bad_arg("draws", "is what solve=\"draws\" computes; leave it out"));
    }
    let domain = domain_arg(domain, "domain")?;
    let model =
        Model { kernel, lengthscale, domain, n, ridge, scale, gp_noise, response_bound, sensitivity, rkhs_norm, bound };
    let params = model.params(Some(solve))?;
    let draws = self::draws(draws.unwrap_or(1))?;
    let conversion: Accounting = parse(conversion)?;
    let target = Target { epsilon: target_epsilon, delta, conversion };
    let inner = match relation {
        NeighbouringRelation::ChangeResponse => py
            .detach(|| {
                gpdp::privacy::change_response::calibration(
                    &params,
                    draws,
                    covariates.as_ref(),
                    solve,
                    target_epsilon,
                    delta,
                    conversion,
                )
            })
            .py()?,
        _ if gpdp::privacy::data_free::is_data_free(&params) => py
            .detach(|| gpdp::privacy::data_free::calibration(&params, draws, solve, target_epsilon, delta, conversion))
            .py()?,
        _ => py.detach(|| gpdp::calibrate(&params, draws, solve, target)).py()?,
    };
    Ok(PyCalibration { inner, target_epsilon })
}
