//! `ThompsonSampler`: the library's private Thompson-sampling loop
//! (`gpdp::thompson`), ask/tell in the style of scikit-optimize's `Optimizer`.

use std::sync::Mutex;

use gpdp::thompson::{Goal, ThompsonConfig, ThompsonSampler};
use numpy::PyArray2;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::convert::{points, vector};
use crate::errors::{OrPy, bad_arg};

/// A private Thompson-sampling loop over a public candidate set.
///
/// ``ThompsonSampler(X, y, candidates, *, batch=1, target_epsilon=None,
/// rounds=None, budget_epsilon=None, minimise=False, seed=None, **spec)``:
/// ``X``, ``y`` are the private initial records; ``candidates`` (shape
/// (m, d) or (m,)) the public points each round chooses among; ``spec`` the
/// release keywords of ``Mechanism`` (kernel, lengthscale, domain, ridge,
/// scale, gp_noise, delta, response_range or response_bound, bound,
/// conversion …). With ``target_epsilon`` and ``rounds`` the ridge is
/// calibrated so that the whole loop (``rounds`` rounds, every proposal
/// told) has ε ≤ the target, which is also the budget; ``budget_epsilon``
/// sets the budget on its own. A round whose composed guarantee would
/// exceed the budget is refused before anything is drawn
/// (``BudgetError``-like ``GpdpError``). ``seed`` makes the loop
/// reproducible and NOT private; the same settings and seed give the same
/// choices as ``gpdp thompson --seed``.
///
/// ``ask()`` returns the q chosen points, shape (q, d) (published);
/// ``tell(x, y)`` adds observations (private): ``x`` of shape (d,) with a
/// number ``y``, or (k, d) with ``y`` of shape (k,).
#[pyclass(name = "ThompsonSampler", module = "gpdp", frozen)]
pub struct PyThompsonSampler {
    inner: Mutex<ThompsonSampler>,
    dim: usize,
}

impl PyThompsonSampler {
    fn with<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut ThompsonSampler) -> PyResult<T> + Send) -> PyResult<T> {
        py.detach(|| {
            let mut g = self.inner.lock().map_err(|_| crate::errors::GpdpError::new_err("sampler poisoned"))?;
            f(&mut g)
        })
    }
}

#[pymethods]
impl PyThompsonSampler {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (X, y, candidates, *, batch=1, target_epsilon=None, rounds=None, budget_epsilon=None, minimise=false, seed=None, **spec))]
    fn new(
        py: Python<'_>,
        #[allow(non_snake_case)] X: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
        candidates: &Bound<'_, PyAny>,
        batch: usize,
        target_epsilon: Option<f64>,
        rounds: Option<usize>,
        budget_epsilon: Option<f64>,
        minimise: bool,
        seed: Option<u64>,
        spec: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let data = crate::mechanism::dataset(py, X, y)?;
        let cand = points(py, candidates, "candidates")?;
        let spec = crate::mechanism::release_spec(spec)?;
        let target = match (target_epsilon, rounds) {
            (Some(e), Some(t)) => Some((e, t)),
            (Some(_), None) => {
                return Err(bad_arg(
                    "rounds",
                    "target_epsilon calibrates the ridge for a planned loop: give its number of rounds",
                ));
            }
            (None, _) => None,
        };
        if seed.is_some() {
            // Warns as a seeded release does (the generator itself is the library's, per round).
            crate::mechanism::rng(py, seed)?;
        }
        let goal = if minimise { Goal::Minimise } else { Goal::Maximise };
        let dim = cand.dim();
        let inner = py
            .detach(|| {
                let cfg = ThompsonConfig::from_spec(&spec, data.len(), batch, goal, target, budget_epsilon)?;
                ThompsonSampler::new(cfg, cand, data, seed)
            })
            .py()?;
        Ok(PyThompsonSampler { inner: Mutex::new(inner), dim })
    }

    /// One round: the q chosen points, shape (q, d).
    fn ask<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let chosen = self.with(py, |t| t.ask().py())?;
        PyArray2::from_vec2(py, &chosen).map_err(|e| crate::errors::GpdpError::new_err(e.to_string()))
    }

    /// Adds observations: x of shape (d,) with a number y, or (k, d) with y of shape (k,).
    fn tell(&self, py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<()> {
        let (xs, ys) = if let Ok(v) = y.extract::<f64>() {
            let p = vector(py, x, "x")?;
            (vec![p], vec![v])
        } else {
            let p = points(py, x, "x")?;
            let ys = vector(py, y, "y")?;
            if ys.len() != p.len() {
                return Err(bad_arg("y", format!("{} values for {} points", ys.len(), p.len())));
            }
            ((0..p.len()).map(|i| p.row(i).to_vec()).collect(), ys)
        };
        if let Some(bad) = xs.iter().find(|p| p.len() != self.dim) {
            return Err(bad_arg("x", format!("a {}-D point for a {}-D domain", bad.len(), self.dim)));
        }
        self.with(py, |t| {
            for (p, v) in xs.iter().zip(&ys) {
                t.tell(p, *v).py()?;
            }
            Ok(())
        })
    }

    /// The composed ε of the rounds so far at the loop's δ (0 before the first).
    #[getter]
    fn epsilon(&self, py: Python<'_>) -> PyResult<f64> {
        self.with(py, |t| t.epsilon_so_far().py())
    }

    /// The loop's δ.
    #[getter]
    fn delta(&self, py: Python<'_>) -> PyResult<f64> {
        self.with(py, |t| Ok(t.config().mechanism.delta))
    }

    /// The ridge r the loop uses (calibrated with target_epsilon).
    #[getter]
    fn ridge(&self, py: Python<'_>) -> PyResult<f64> {
        self.with(py, |t| Ok(t.config().mechanism.release.ridge))
    }

    /// Records held now (the next round's n).
    #[getter]
    fn records(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |t| Ok(t.records()))
    }

    /// Whether the loop is private (False when seeded).
    #[getter]
    fn private(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |t| Ok(!t.is_seeded()))
    }

    /// The completed rounds: dicts with index, records, chosen, epsilon_so_far.
    #[getter]
    fn rounds<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rounds = self.with(py, |t| Ok(t.rounds().to_vec()))?;
        let out = PyList::empty(py);
        for r in rounds {
            let d = PyDict::new(py);
            d.set_item("index", r.index)?;
            d.set_item("records", r.records)?;
            d.set_item("chosen", r.chosen)?;
            d.set_item("epsilon_so_far", r.epsilon_so_far)?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// How many more rounds the budget allows when each adds
    /// ``records_per_round`` records (default: batch), at most ``cap``.
    #[pyo3(signature = (records_per_round=None, cap=10_000))]
    fn rounds_allowed(&self, py: Python<'_>, records_per_round: Option<usize>, cap: usize) -> PyResult<usize> {
        self.with(py, |t| {
            let k = records_per_round.unwrap_or(t.config().batch);
            t.rounds_allowed(k, cap).py()
        })
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        self.with(py, |t| {
            Ok(format!(
                "ThompsonSampler(records={}, rounds={}, epsilon={:.4}, private={})",
                t.records(),
                t.rounds().len(),
                t.epsilon_so_far().unwrap_or(f64::NAN),
                !t.is_seeded()
            ))
        })
        .unwrap_or_else(|_| "ThompsonSampler(?)".into())
    }
}
