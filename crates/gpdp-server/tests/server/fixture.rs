//! Fixtures shared by the server's tests and the CLI's `gpdp serve` tests
//! (crates/gpdp-cli/tests/cli includes this file by path): the release spec
//! of the test dataset, the spec examples (one patch per key of
//! `ReleaseSpec`, crates/gpdp-cli/tests/data/spec_examples.json) and the
//! lattice dataset the spec-coverage tests release with.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// A release spec for the test dataset `sensors` in `dir`/data.csv
/// (matérn-3/2 on the unit square).
pub fn spec(dir: &Path) -> Value {
    json!({
        "data": dir.join("data.csv"),
        "dataset": "sensors",
        "kernel": "matern32",
        "lengthscale": 0.3,
        "domain": "box:0,1,0,1",
        "ridge": 4.0,
        "scale": 1.0,
        "delta": 1e-5,
        "response_bound": 1.0,
        "units": "mg/L"
    })
}

/// (base spec, one patch per key) from the shared examples file.
pub fn examples() -> (Map<String, Value>, Map<String, Value>) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../gpdp-cli/tests/data/spec_examples.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    (v["base"].as_object().unwrap().clone(), v["examples"].as_object().unwrap().clone())
}

/// The base spec with one example's patch applied (null removes a key).
pub fn patched(base: &Map<String, Value>, patch: &Value) -> Map<String, Value> {
    let mut s = base.clone();
    for (k, v) in patch.as_object().unwrap() {
        if v.is_null() {
            s.remove(k);
        } else {
            s.insert(k.clone(), v.clone());
        }
    }
    s
}

/// Writes `dir`/data.csv: 40 records on nodes of the 11 × 11 lattice of
/// [0, 1]² (so `covariate_lattice` "11" holds), |y| < 1.
pub fn write_lattice_data(dir: &Path) -> PathBuf {
    let mut csv = String::from("x1,x2,y\n");
    for i in 0..40u32 {
        let (a, b) = ((i * 7 % 11) as f64 / 10.0, (i * 3 % 11) as f64 / 10.0);
        csv.push_str(&format!("{a},{b},{}\n", 0.9 * (3.0 * a).sin() * (2.0 * b).cos()));
    }
    let p = dir.join("data.csv");
    std::fs::write(&p, csv).unwrap();
    p
}
