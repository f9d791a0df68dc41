//! Every key of the release spec (`gpdp::ReleaseSpec`) is accepted by every
//! front end: the CLI's flags here, the server's request body in the
//! server's tests (`crates/gpdp-server/tests/server/spec_coverage.rs`, the
//! service in-process), and Python's keywords in python/tests/test_spec.py —
//! each with the example of tests/data/spec_examples.json, released for
//! real. A key added to the spec without an example fails this test.

use std::process::Command;

use serde_json::{Map, Value};

use crate::fixture::{examples, patched, write_lattice_data};

#[test]
fn every_key_has_an_example() {
    let (_, ex) = examples();
    let keys = gpdp::ReleaseSpec::keys();
    let mut listed: Vec<&String> = ex.keys().collect();
    listed.sort();
    let mut want: Vec<&String> = keys.iter().collect();
    want.sort();
    assert_eq!(listed, want, "tests/data/spec_examples.json must have one example per spec key");
}

/// The CLI's flags for a spec: `--k-e-y VALUE`, a bare flag for `true`, `LO,HI` for a range.
fn flags(spec: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in spec {
        let flag = gpdp::spec::spell(k, gpdp::spec::Spelling::Flag);
        match v {
            Value::Bool(true) => out.push(flag),
            Value::Bool(false) => {}
            Value::Array(a) => {
                out.push(flag);
                out.push(a.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","));
            }
            Value::String(s) => {
                out.push(flag);
                out.push(s.clone());
            }
            v => {
                out.push(flag);
                out.push(v.to_string());
            }
        }
    }
    out
}

#[test]
fn the_cli_accepts_every_key_and_releases_with_it() {
    let (base, ex) = examples();
    let dir = tempfile::tempdir().unwrap();
    let data = write_lattice_data(dir.path());
    let help = Command::new(env!("CARGO_BIN_EXE_gpdp")).args(["release", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    for (key, patch) in &ex {
        let flag = gpdp::spec::spell(key, gpdp::spec::Spelling::Flag);
        assert!(help.contains(&flag), "`gpdp release --help` does not list {flag}");
        let spec = patched(&base, patch);
        let out = dir.path().join(format!("out-{key}"));
        let o = Command::new(env!("CARGO_BIN_EXE_gpdp"))
            .arg("release")
            .arg("--data")
            .arg(&data)
            .args(flags(&spec))
            .args(["--grid", "11", "--seed", "3", "--quiet", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "key {key}: {}", String::from_utf8_lossy(&o.stderr));
        let report: Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
        assert!(report["privacy"]["epsilon"].as_f64().unwrap() > 0.0, "key {key}: {report}");
    }
}
