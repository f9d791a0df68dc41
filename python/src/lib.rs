//! `gpdp._native`: the Python extension module over the `gpdp` library.
//!
//! Every computation is the library's: this crate converts Python values
//! (keywords, numpy arrays) to the library's types, calls it, and converts
//! the results back (reports as dicts, draws as numpy arrays). Errors are
//! the library's messages, raised as subclasses of `ValueError`
//! ([`errors`]). Long computations release the GIL.

use pyo3::prelude::*;

mod account;
mod convert;
mod errors;
mod geometry;
mod ledger;
mod mechanism;
mod params;
mod plan;
mod thompson;

/// The Rust core of the `gpdp` Python package (import `gpdp`, not this module).
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(account::account, m)?)?;
    m.add_function(wrap_pyfunction!(account::account_batch, m)?)?;
    m.add_function(wrap_pyfunction!(account::calibrate, m)?)?;
    m.add_function(wrap_pyfunction!(mechanism::posterior, m)?)?;
    m.add_function(wrap_pyfunction!(mechanism::spec_keys, m)?)?;
    m.add_function(wrap_pyfunction!(plan::plan, m)?)?;
    m.add_class::<account::PyPrivacyReport>()?;
    m.add_class::<account::PyCalibration>()?;
    m.add_class::<mechanism::PyMechanism>()?;
    m.add_class::<mechanism::PyRelease>()?;
    m.add_class::<mechanism::PySamplePath>()?;
    m.add_class::<ledger::PyLedger>()?;
    m.add_class::<plan::PyPlan>()?;
    m.add_class::<geometry::PyBox>()?;
    m.add_class::<thompson::PyThompsonSampler>()?;
    Ok(())
}
