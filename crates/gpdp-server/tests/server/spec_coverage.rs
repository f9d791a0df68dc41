//! Every key of the release spec (`gpdp::ReleaseSpec`) is accepted by the
//! server's request body (`POST /releases`) and listed in its OpenAPI
//! document, each with the example of
//! `crates/gpdp-cli/tests/data/spec_examples.json`, released for real and
//! evaluated. The CLI's flags are checked against the same examples in the
//! CLI's `spec_coverage` tests, Python's keywords in
//! python/tests/test_spec.py. A key added to the spec without an example
//! fails here too.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{Server, TOKEN};
use crate::fixture::{examples, patched, write_lattice_data};

/// One request to `s` with the admin token.
fn request(s: &Server, method: &str, path: &str, body: &str) -> (u16, Value) {
    s.request(method, path, Some(body), Some(TOKEN))
}

/// A server without a ledger, started on `dir`.
fn server(dir: &Path) -> Server {
    let config = dir.join("server.toml");
    std::fs::write(
        &config,
        format!("state = \"state.sqlite\"\nallow_without_ledger = true\nadmin_token = \"{TOKEN}\"\n"),
    )
    .unwrap();
    Server::start(&config)
}

#[test]
fn the_server_accepts_every_key_and_releases_with_it() {
    let (base, ex) = examples();
    // The examples are exactly the spec's keys (as the CLI's test checks too).
    let mut listed: Vec<&String> = ex.keys().collect();
    listed.sort();
    let keys = gpdp::ReleaseSpec::keys();
    let mut want: Vec<&String> = keys.iter().collect();
    want.sort();
    assert_eq!(listed, want, "spec_examples.json must have one example per spec key");
    let dir = tempfile::tempdir().unwrap();
    let data = write_lattice_data(dir.path());
    let s = server(dir.path());
    let schema = s.get("/openapi.json").1;
    let props = schema["components"]["schemas"]["ReleaseSpec"]["properties"].as_object().unwrap().clone();
    for (key, patch) in &ex {
        assert!(props.contains_key(key), "the OpenAPI document does not list {key}");
        let mut body = patched(&base, patch);
        body.insert("data".into(), json!(data));
        let (st, v) = request(&s, "POST", "/releases", &Value::Object(body).to_string());
        assert_eq!(st, 201, "key {key}: {v}");
        let id = v["id"].as_str().unwrap();
        let (st, v) =
            request(&s, "POST", &format!("/releases/{id}/eval"), &json!({"points": [[0.5, 0.5]]}).to_string());
        assert_eq!(st, 200, "key {key}: {v}");
    }
    // An unknown key is refused 400, naming it.
    let mut body = base.clone();
    body.insert("data".into(), json!(data));
    body.insert("lenghtscale".into(), json!(0.3));
    let (st, v) = request(&s, "POST", "/releases", &Value::Object(body).to_string());
    assert_eq!(st, 400, "{v}");
    assert!(v["error"].as_str().unwrap().contains("lenghtscale"), "{v}");
}

#[test]
fn a_server_release_with_snap_lattice_and_a_calibrated_ridge_with_a_floor() {
    let (base, _) = examples();
    let dir = tempfile::tempdir().unwrap();
    let data = write_lattice_data(dir.path());
    let s = server(dir.path());
    let mut body = base.clone();
    body.remove("ridge");
    body.insert("data".into(), json!(data));
    body.insert("target_epsilon".into(), json!(8.0));
    body.insert("snap".into(), json!("6x6"));
    // Without a floor: the calibrated ridge.
    let (st, free) = request(&s, "POST", "/releases", &Value::Object(body.clone()).to_string());
    assert_eq!(st, 201, "{free}");
    let eps_free = free["epsilon"].as_f64().unwrap();
    assert!(eps_free <= 8.0 && eps_free > 7.0, "{free}");
    // A floor above it: the floor is the ridge, ε below the target.
    body.insert("ridge_floor".into(), json!(60.0));
    let (st, floored) = request(&s, "POST", "/releases", &Value::Object(body.clone()).to_string());
    assert_eq!(st, 201, "{floored}");
    let report = &floored["report"];
    assert_eq!(report["privacy"]["components"][0]["ridge"].as_f64(), Some(60.0), "{report}");
    assert!(floored["epsilon"].as_f64().unwrap() < eps_free);
    assert!(report.to_string().contains("snap"), "the report states the snapping: {report}");
    // A declared lattice instead (the records lie on the 11 × 11 nodes).
    body.remove("snap");
    body.remove("ridge_floor");
    body.insert("covariate_lattice".into(), json!("11"));
    let (st, v) = request(&s, "POST", "/releases", &Value::Object(body.clone()).to_string());
    assert_eq!(st, 201, "{v}");
    // Declaring a lattice the records are not on is refused by the data policy.
    body.insert("covariate_lattice".into(), json!("4"));
    let (st, v) = request(&s, "POST", "/releases", &Value::Object(body).to_string());
    assert_eq!(st, 422, "{v}");
}

/// `relation` change-response over HTTP: the description and the report
/// state the relation, the guarantee is computed with the data's covariates
/// (the exact Gaussian ε, below the same spec's replace-one ε), and the
/// stored release is restored with the same guarantee after a restart.
#[test]
fn a_server_release_under_change_response_states_its_relation() {
    let (base, _) = examples();
    let dir = tempfile::tempdir().unwrap();
    let data = write_lattice_data(dir.path());
    let s = server(dir.path());
    let mut body = base.clone();
    body.insert("data".into(), json!(data));
    let (st, r1) = request(&s, "POST", "/releases", &Value::Object(body.clone()).to_string());
    assert_eq!(st, 201, "{r1}");
    body.insert("relation".into(), json!("change-response"));
    let (st, cr) = request(&s, "POST", "/releases", &Value::Object(body).to_string());
    assert_eq!(st, 201, "{cr}");
    assert_eq!(cr["neighbouring_relation"], "change-one-response, covariates public");
    assert_eq!(r1["neighbouring_relation"], "replace-one, n public");
    assert!(cr["statement"].as_str().unwrap().contains("protects each reading"), "{cr}");
    assert_eq!(cr["report"]["privacy"]["gaussian"]["covariates"], 40);
    let (e1, e2) = (r1["epsilon"].as_f64().unwrap(), cr["epsilon"].as_f64().unwrap());
    assert!(e2 < e1, "change-response ε {e2} vs replace-one {e1}");
    let id = cr["id"].as_str().unwrap().to_string();
    drop(s);
    let s = server(dir.path());
    let (st, again) = s.get(&format!("/releases/{id}"));
    assert_eq!(st, 200, "{again}");
    assert_eq!(again["epsilon"].as_f64().unwrap(), e2);
    assert_eq!(again["status"], "active", "{again}");
    assert_eq!(s.eval(&id, &[[0.5, 0.5]]).len(), 1);
}
