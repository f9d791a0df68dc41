//! Conversions between Python values and the library's.

use gpdp::Points;
use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};
use serde_json::Value;

use crate::errors::{OrPy, bad_arg};

/// A JSON value (a serialised report) as Python objects: objects → dict,
/// arrays → list, numbers → int or float, null → None.
pub fn json_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) if !n.is_f64() => i.into_pyobject(py)?.into_any(),
            (_, Some(f)) => PyFloat::new(py, f).into_any(),
            _ => PyString::new(py, &n.to_string()).into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(json_to_py(py, x)?)?;
            }
            l.into_any()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// Any serialisable value as Python objects (through JSON; non-finite
/// numbers, which JSON cannot hold, are serialised by the library as null
/// or strings where they can occur).
pub fn to_py_value<'py, T: serde::Serialize>(py: Python<'py>, v: &T) -> PyResult<Bound<'py, PyAny>> {
    let j = serde_json::to_value(v).map_err(|e| crate::errors::GpdpError::new_err(format!("serialising: {e}")))?;
    json_to_py(py, &j)
}

/// `obj` as a C-contiguous float64 numpy array (copied only if needed).
/// Complex values are refused rather than silently truncated to their
/// real parts (numpy's cast would do that).
fn real_array<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let raw = np.call_method1("asarray", (obj,)).map_err(|e| bad_arg(name, e))?;
    let kind: String = raw.getattr("dtype")?.getattr("kind")?.extract()?;
    if kind == "c" {
        return Err(bad_arg(name, "complex values are not accepted (give real numbers)"));
    }
    np.call_method1("ascontiguousarray", (raw, "float64")).map_err(|e| bad_arg(name, e))
}

/// Points from a numpy array (or anything numpy converts): shape (m, d),
/// or (m,) for 1-D points. `name` is the argument's name for errors.
pub fn points(py: Python<'_>, obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Points> {
    let arr = real_array(py, obj, name)?;
    let ndim: usize = arr.getattr("ndim")?.extract()?;
    match ndim {
        1 => {
            let a: PyReadonlyArray1<f64> = arr.extract()?;
            let v = a.as_slice().map_err(|e| bad_arg(name, e))?;
            Points::new(v.to_vec(), 1).py()
        }
        2 => {
            let a: PyReadonlyArray2<f64> = arr.extract()?;
            let d = a.shape()[1];
            if d == 0 {
                return Err(bad_arg(name, "points need at least one coordinate (shape (m, 0) given)"));
            }
            let v = a.as_slice().map_err(|e| bad_arg(name, e))?;
            Points::new(v.to_vec(), d).py()
        }
        k => Err(bad_arg(name, format!("expected an array of shape (m, d) or (m,), got {k} dimensions"))),
    }
}

/// A 1-D float array from a numpy array or sequence.
pub fn vector(py: Python<'_>, obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<f64>> {
    let arr = real_array(py, obj, name)?;
    let ndim: usize = arr.getattr("ndim")?.extract()?;
    if ndim != 1 {
        return Err(bad_arg(name, format!("expected a 1-D array, got {ndim} dimensions")));
    }
    let a: PyReadonlyArray1<f64> = arr.extract()?;
    Ok(a.as_slice().map_err(|e| bad_arg(name, e))?.to_vec())
}

/// A Python keyword's value as JSON: None, bool, int, float (finite),
/// str, and lists/tuples of these; `key` names the keyword in errors.
pub fn py_to_json(v: &Bound<'_, PyAny>, key: &str) -> PyResult<Value> {
    if v.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(Value::String(s.extract::<String>()?));
    }
    if v.is_instance_of::<pyo3::types::PyInt>() {
        if let Ok(i) = v.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = v.extract::<u64>() {
            return Ok(Value::from(u));
        }
    }
    if let Ok(f) = v.extract::<f64>() {
        return serde_json::Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| bad_arg(key, format!("{f}: must be a finite number")));
    }
    if let Ok(seq) = v.try_iter() {
        let items = seq.map(|x| py_to_json(&x?, key)).collect::<PyResult<Vec<_>>>()?;
        return Ok(Value::Array(items));
    }
    Err(bad_arg(key, format!("unsupported value of type {}", v.get_type().name()?)))
}
