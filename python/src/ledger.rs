//! `Ledger`: the durable privacy-budget ledger (the CLI's `--ledger` file).

use std::path::PathBuf;
use std::sync::Mutex;

use gpdp::ledger::Ledger;
use pyo3::prelude::*;
use sha2::{Digest, Sha256};

use crate::convert::to_py_value;
use crate::errors::OrPy;
use crate::mechanism::{PyMechanism, PyRelease};
use crate::params::parse;

/// A privacy-budget ledger: one SQLite file, shared with the CLI
/// (`gpdp ledger …`, `gpdp release --ledger`). Each dataset has a budget
/// (ε, δ) declared once; every release is recorded before it draws
/// (`reserve`, refused if the composed guarantee of everything recorded
/// would exceed the budget) and marked published afterwards (`commit`).
/// Composition is of the releases' RDP curves, converted once.
#[pyclass(name = "Ledger", module = "gpdp", frozen)]
pub struct PyLedger {
    inner: Mutex<Ledger>,
    path: PathBuf,
}

impl PyLedger {
    fn with<T>(&self, f: impl FnOnce(&mut Ledger) -> gpdp::Result<T>) -> PyResult<T> {
        let mut g = self.inner.lock().map_err(|_| crate::errors::GpdpError::new_err("ledger poisoned"))?;
        f(&mut g).py()
    }
}

#[pymethods]
impl PyLedger {
    /// Opens (creating if needed) the ledger file at `path`.
    #[new]
    fn new(path: PathBuf) -> PyResult<Self> {
        let inner = Ledger::open(&path).py()?;
        Ok(PyLedger { inner: Mutex::new(inner), path })
    }

    /// The ledger file.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// `gpdp.Ledger('budget.sqlite', datasets=['pm25'])`.
    fn __repr__(&self) -> String {
        let names = self
            .with(|l| Ok(l.budgets()?.into_iter().map(|b| format!("{:?}", b.dataset)).collect::<Vec<_>>()))
            .map(|v| v.join(", "))
            .unwrap_or_else(|_| "?".into());
        format!("gpdp.Ledger({:?}, datasets=[{names}])", self.path.display().to_string())
    }

    /// Declares the budget (ε, δ) of `dataset` (once; budgets cannot be
    /// changed). Returns the budget as a dict.
    #[pyo3(signature = (dataset, epsilon, delta, conversion="improved"))]
    fn init<'py>(
        &self,
        py: Python<'py>,
        dataset: &str,
        epsilon: f64,
        delta: f64,
        conversion: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let conv = parse(conversion)?;
        let b = self.with(|l| l.init(dataset, epsilon, delta, conv))?;
        to_py_value(py, &b)
    }

    /// The budget of `dataset`.
    fn budget<'py>(&self, py: Python<'py>, dataset: &str) -> PyResult<Bound<'py, PyAny>> {
        let b = self.with(|l| l.budget(dataset))?;
        to_py_value(py, &b)
    }

    /// Every dataset's budget.
    fn budgets<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let b = self.with(|l| l.budgets())?;
        to_py_value(py, &b)
    }

    /// The releases recorded for `dataset`, oldest first, each with its ε
    /// and the composed ε up to it.
    fn entries<'py>(&self, py: Python<'py>, dataset: &str) -> PyResult<Bound<'py, PyAny>> {
        let e = self.with(|l| l.entries(dataset))?;
        to_py_value(py, &e)
    }

    /// Records a release of `mechanism` against `dataset`'s budget before
    /// it draws; raises `BudgetExceededError` (recording nothing) if the
    /// composed guarantee would exceed the budget. Returns the reservation
    /// (its `id`, this release's ε and the composed ε).
    fn reserve<'py>(&self, py: Python<'py>, dataset: &str, mechanism: &PyMechanism) -> PyResult<Bound<'py, PyAny>> {
        let r = self.with(|l| l.reserve(dataset, mechanism.inner()))?;
        to_py_value(py, &r)
    }

    /// Marks reservation `id` as published, with a hash of what was
    /// published and where.
    #[pyo3(signature = (id, files_hash, out))]
    fn commit(&self, id: i64, files_hash: &str, out: &str) -> PyResult<()> {
        self.with(|l| l.commit_id(id, files_hash, out))
    }

    /// Reserves, releases and commits in one call: the data and the query
    /// are checked first (a dataset the mechanism refuses — wrong n, outside
    /// the domain, off the lattice, a response beyond the bound with
    /// `on_unbounded="reject"` — raises and consumes no budget); the release
    /// is drawn only if the budget allows it, and committed with the SHA-256
    /// of its values (little-endian doubles, path by path) and `out` as the
    /// place.
    #[pyo3(signature = (dataset, mechanism, X, y, query=None, *, grid=None, seed=None, out="python"))]
    #[allow(non_snake_case, clippy::too_many_arguments)]
    fn release(
        &self,
        py: Python<'_>,
        dataset: &str,
        mechanism: &Bound<'_, PyMechanism>,
        X: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
        query: Option<&Bound<'_, PyAny>>,
        grid: Option<&Bound<'_, PyAny>>,
        seed: Option<u64>,
        out: &str,
    ) -> PyResult<PyRelease> {
        let m = mechanism.get();
        // Data and query checks first: a refused release reserves nothing.
        let prepared = m.prepare(py, X, y, query, grid, seed)?;
        let res = self.with(|l| l.reserve(dataset, m.inner()))?;
        let rel = m.draw(py, prepared)?;
        let mut h = Sha256::new();
        for path in rel.paths_ref() {
            for v in path {
                h.update(v.to_le_bytes());
            }
        }
        let hash: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        self.with(|l| l.commit(res, &hash, out))?;
        m.warn_if_clipped(py, &rel)?;
        Ok(rel)
    }
}
