//! Domains and grids from Python values: the library's strings
//! (`"interval:0,1"`, `"box:0,1,0,1"`, `"40"`, `"40x30"`), or tuples, ints
//! and `gpdp.Box`. Every value ends as the library's [`Domain`] or [`Grid`],
//! built and checked by the library (its messages, prefixed with the
//! keyword at fault).
//!
//! The one tuple convention for boxes is the string's: one `(lo, hi)` pair
//! per axis, `((x_lo, x_hi), (y_lo, y_hi))` ↔ `"box:x_lo,x_hi,y_lo,y_hi"`.
//! A pair of numbers `(lo, hi)` is an interval. A flat sequence of more
//! than two numbers is refused: `(0, 1, 0, 1)` reads as the string's order,
//! but `(x_min, y_min, x_max, y_max)` is the usual bounding-box order of GIS
//! tools, and guessing between them would silently give another domain.
//! `gpdp.Box(lo, hi)` takes the two corners instead.

use std::str::FromStr;

use gpdp::{Domain, Grid};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString};

use crate::errors::{OrPy, bad_arg};

/// An axis-aligned box (or, in 1-D, an interval) given by its corners:
/// `gpdp.Box(lo, hi)` with `lo = (x_lo, y_lo, …)` and `hi = (x_hi, y_hi, …)`
/// — numbers for an interval. Accepted wherever a `domain` is; `str(box)`
/// is the library's spelling (`"box:x_lo,x_hi,y_lo,y_hi"` or
/// `"interval:lo,hi"`).
#[pyclass(name = "Box", module = "gpdp", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct PyBox {
    pub domain: Domain,
}

/// A corner: a number (1-D) or a sequence of numbers.
fn corner(v: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<f64>> {
    if v.is_instance_of::<PyString>() || v.is_instance_of::<PyBool>() {
        return Err(bad_arg(name, "expected a number or a sequence of numbers"));
    }
    if let Ok(x) = v.extract::<f64>() {
        return Ok(vec![x]);
    }
    let py = v.py();
    let np = py.import("numpy")?;
    let a = np
        .call_method1("asarray", (v, "float64"))
        .map_err(|_| bad_arg(name, "expected a number or a sequence of numbers"))?;
    let ndim: usize = a.getattr("ndim")?.extract()?;
    if ndim != 1 {
        return Err(bad_arg(
            name,
            format!("expected one coordinate per axis (a flat sequence), got {ndim} dimensions"),
        ));
    }
    a.call_method0("tolist")?.extract().map_err(|e| bad_arg(name, e))
}

#[pymethods]
impl PyBox {
    #[new]
    fn new(lo: &Bound<'_, PyAny>, hi: &Bound<'_, PyAny>) -> PyResult<Self> {
        let (lo, hi) = (corner(lo, "Box: lo")?, corner(hi, "Box: hi")?);
        if lo.len() != hi.len() {
            return Err(bad_arg(
                "Box",
                format!("lo has {} coordinates but hi has {}: give both corners of the box", lo.len(), hi.len()),
            ));
        }
        let domain = if lo.len() == 1 { Domain::interval(lo[0], hi[0]) } else { Domain::cuboid(lo, hi) };
        Ok(PyBox { domain: domain.map_err(|e| keyword_err(e, "Box"))? })
    }

    /// The lower corner.
    #[getter]
    fn lo(&self) -> Vec<f64> {
        self.domain.bounding_box().0
    }

    /// The upper corner.
    #[getter]
    fn hi(&self) -> Vec<f64> {
        self.domain.bounding_box().1
    }

    /// The dimension d.
    #[getter]
    fn dim(&self) -> usize {
        self.domain.dim()
    }

    fn __str__(&self) -> String {
        self.domain.to_string()
    }

    fn __repr__(&self) -> String {
        let (lo, hi) = self.domain.bounding_box();
        let t = |v: &[f64]| match v {
            [x] => format!("{x:?}"),
            v => format!("({})", v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>().join(", ")),
        };
        format!("gpdp.Box(lo={}, hi={})", t(&lo), t(&hi))
    }
}

/// The help appended to a refused domain value.
const DOMAIN_FORMS: &str = "give a string (\"interval:a,b\", \"box:a1,b1,a2,b2\", \"ball:c1,…,cd,radius\"), a pair (lo, hi) for an interval, one (lo, hi) pair per axis ((x_lo, x_hi), (y_lo, y_hi)) for a box, or gpdp.Box(lo_corner, hi_corner)";

/// A `domain` keyword: a string, a `gpdp.Box`, a pair `(lo, hi)` (an
/// interval) or a sequence of per-axis pairs (a box; one pair is an
/// interval). `name` names the keyword in errors.
pub fn domain_arg(v: &Bound<'_, PyAny>, name: &str) -> PyResult<Domain> {
    if let Ok(s) = v.cast::<PyString>() {
        return Domain::from_str(&s.to_cow()?).map_err(|e| keyword_err(e, name));
    }
    if let Ok(b) = v.cast::<PyBox>() {
        return Ok(b.get().domain.clone());
    }
    if v.is_none() || v.is_instance_of::<PyBool>() || v.extract::<f64>().is_ok() {
        return Err(bad_arg(name, format!("{} is not a domain: {DOMAIN_FORMS}", v.repr()?)));
    }
    let py = v.py();
    let np = py.import("numpy")?;
    let shown = v.repr()?.to_string();
    let a = np
        .call_method1("asarray", (v, "float64"))
        .map_err(|_| bad_arg(name, format!("{shown} is not a domain: {DOMAIN_FORMS}")))?;
    let shape: Vec<usize> = a.getattr("shape")?.extract()?;
    let rows: Vec<Vec<f64>> = match shape.as_slice() {
        [2] => vec![a.call_method0("tolist")?.extract()?],
        [k, 2] if *k >= 1 => a.call_method0("tolist")?.extract()?,
        [k] if *k > 2 && k % 2 == 0 => {
            return Err(bad_arg(
                name,
                format!(
                    "{shown} is ambiguous: a flat tuple of {k} numbers could be per-axis pairs (x_lo, x_hi, y_lo, y_hi, as in \"box:…\") or corners (x_min, y_min, x_max, y_max) — give ((x_lo, x_hi), (y_lo, y_hi)), gpdp.Box((x_lo, y_lo), (x_hi, y_hi)) or the string \"box:x_lo,x_hi,y_lo,y_hi\""
                ),
            ));
        }
        _ => return Err(bad_arg(name, format!("{shown} is not a domain: {DOMAIN_FORMS}"))),
    };
    let d = if rows.len() == 1 {
        Domain::interval(rows[0][0], rows[0][1])
    } else {
        Domain::cuboid(rows.iter().map(|r| r[0]).collect(), rows.iter().map(|r| r[1]).collect())
    };
    d.map_err(|e| keyword_err(e, name))
}

/// A library error about a domain, naming `name` (the library's domain
/// messages start "domain: ", which already names the `domain` keyword).
fn keyword_err(e: gpdp::Error, name: &str) -> PyErr {
    match e {
        gpdp::Error::Domain(msg) => bad_arg(name, msg),
        e => bad_arg(name, e),
    }
}

/// Counts per axis from a Python value: an int N (every axis), a sequence
/// of ints (one per axis) or the library's string "N" / "N1xN2…", as the
/// library's string. `name` names the keyword in errors.
pub fn counts_arg(v: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(s.to_cow()?.into_owned());
    }
    let count = |x: &Bound<'_, PyAny>| -> PyResult<usize> {
        let bad = || -> PyResult<PyErr> {
            Ok(bad_arg(name, format!("{}: expected a whole number of points ≥ 2", x.repr()?)))
        };
        if x.is_instance_of::<PyBool>() {
            return Err(bad()?);
        }
        // Ints and numpy integers (anything with __index__), not floats.
        match x.call_method0("__index__").and_then(|i| i.extract::<usize>()) {
            Ok(c) => Ok(c),
            Err(_) => Err(bad()?),
        }
    };
    if v.hasattr("__index__")? && !v.is_instance_of::<PyBool>() {
        return Ok(count(v)?.to_string());
    }
    if v.is_none() || v.is_instance_of::<PyBool>() || v.extract::<f64>().is_ok() {
        return Err(bad_arg(name, format!("{}: expected N (an int), (N1, N2, …) or the string \"N1xN2\"", v.repr()?)));
    }
    let shown = v.repr()?.to_string();
    let items = v
        .try_iter()
        .map_err(|_| bad_arg(name, format!("{shown}: expected N (an int), (N1, N2, …) or the string \"N1xN2\"")))?;
    let counts = items.map(|x| count(&x?)).collect::<PyResult<Vec<_>>>()?;
    if counts.is_empty() {
        return Err(bad_arg(name, "an empty sequence: give one count per axis, e.g. (120, 80)"));
    }
    Ok(counts.iter().map(|c| c.to_string()).collect::<Vec<_>>().join("x"))
}

/// A `grid` keyword over `domain`'s bounding box: N, (N1, N2, …) or the
/// string "N" / "N1xN2" (x1 varies fastest).
pub fn grid_arg(v: &Bound<'_, PyAny>, domain: &Domain) -> PyResult<Grid> {
    let spec = counts_arg(v, "grid")?;
    Grid::parse(&spec, domain).py()
}
