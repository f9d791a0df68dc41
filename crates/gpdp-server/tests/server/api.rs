//! The HTTP/JSON API end to end: a release created (and recorded in the
//! ledger before any value exists), listed, described, evaluated
//! consistently (revealed points keep their values; grid points are path
//! values), the OpenAPI document and the viewer page, retirement; bad
//! requests answered with JSON errors naming the problem while the server
//! keeps serving; a release request without the responses' scale.

use serde_json::json;

use crate::common::{Server, TOKEN, ledger_entries, setup, spec};

#[test]
fn the_api_serves_consistent_values_and_records_the_release_first() {
    let (dir, config) = setup("", true);
    let s = Server::start(&config);
    let id = s.create(&spec(dir.path()));
    // The ledger entry is committed before any value exists.
    let entries = ledger_entries(dir.path());
    let entry = &entries[0];
    assert_eq!(entry["status"], "committed");
    assert_eq!(entry["out"], format!("gpdp serve: {id}"));
    let (st, list) = s.get("/releases");
    assert_eq!(st, 200);
    assert_eq!(list["releases"][0]["id"], id.as_str());
    let (st, one) = s.get(&format!("/releases/{id}"));
    assert_eq!(st, 200);
    assert_eq!(
        (one["dim"].as_u64(), one["units"].as_str(), one["status"].as_str()),
        (Some(2), Some("mg/L"), Some("active"))
    );
    assert!(one["statement"].as_str().unwrap().contains("differentially private"));
    assert!((one["epsilon"].as_f64().unwrap() - entry["epsilon"].as_f64().unwrap()).abs() < 1e-12);
    // Public report only: no operator diagnostics.
    assert!(!one.to_string().contains("responses_clipped"), "{one}");
    let a = s.eval(&id, &[[0.2, 0.3], [0.7, 0.9]]);
    let b = s.eval(&id, &[[0.7, 0.9], [0.5, 0.5], [0.2, 0.3]]);
    assert_eq!((b[0], b[2]), (a[1], a[0]), "revealed points keep their values");
    let (st, g) = s.get(&format!("/releases/{id}/grid?nx=3&ny=2"));
    assert_eq!(st, 200, "{g}");
    assert_eq!(g["values"].as_array().unwrap().len(), 6);
    assert_eq!(g["values"][1].as_f64().unwrap(), s.eval(&id, &[[0.5, 0.0]])[0], "grid points are path values");
    let (st, doc) = s.get("/openapi.json");
    assert_eq!(st, 200);
    assert_eq!(doc["openapi"], "3.0.3");
    assert!(doc["paths"]["/releases/{id}/eval"]["post"].is_object());
    let (st, page) = s.get("/");
    assert_eq!(st, 200);
    assert!(page.as_str().unwrap_or("").contains("<canvas"), "the viewer page");
    // Retire: listed, no longer evaluates.
    assert_eq!(s.request("DELETE", &format!("/releases/{id}"), None, Some(TOKEN)).0, 204);
    let (st, v) = s.post(&format!("/releases/{id}/eval"), &json!({"points": [[0.1, 0.1]]}));
    assert_eq!(st, 409, "{v}");
    assert_eq!(s.get(&format!("/releases/{id}")).1["status"], "retired");
}

/// (method, path, body, token, expected status, what the error says).
type Case<'a> = (&'a str, String, Option<String>, Option<&'a str>, u16, &'a str);

#[test]
fn bad_requests_get_json_errors_and_the_server_keeps_serving() {
    let (dir, config) = setup("max_batch = 50\nmax_revealed = 60\nmax_body_bytes = 20000\n", true);
    let s = Server::start(&config);
    let id = s.create(&spec(dir.path()));
    let ev = format!("/releases/{id}/eval");
    let big: Vec<[f64; 2]> = (0..51).map(|i| [i as f64 / 51.0, 0.5]).collect();
    let huge = format!("{{\"points\": [{}]}}", vec!["[0.5, 0.5]"; 3000].join(","));
    let mut bad_spec = spec(dir.path());
    bad_spec["kernel"] = json!("cubic");
    let mut far = spec(dir.path());
    far["ridge"] = json!(0.3);
    far["max_epsilon"] = json!(0.01);
    let cases: Vec<Case> = vec![
        ("POST", ev.clone(), Some(json!({"points": [[2.0, 0.5]]}).to_string()), None, 400, "outside the domain"),
        ("POST", ev.clone(), Some(json!({"points": [[0.5]]}).to_string()), None, 400, "1 coordinates, the release is 2-D"),
        ("POST", ev.clone(), Some("{\"points\": [[NaN, 0.5]]}".into()), None, 400, "request body"),
        ("POST", ev.clone(), Some("{\"points\": [[1e400, 0.5]]}".into()), None, 400, "request body"),
        ("POST", ev.clone(), Some(json!({"points": []}).to_string()), None, 400, "empty"),
        ("POST", ev.clone(), Some(json!({"points": big}).to_string()), None, 413, "at most 50"),
        ("POST", ev.clone(), Some(huge), None, 413, "too large"),
        ("POST", ev.clone(), Some(json!({"points": [[0.5, 0.5]], "path": 3}).to_string()), None, 400, "not a path"),
        ("POST", ev.clone(), Some(json!({"points": [[0.5, 0.5]], "extra": 1}).to_string()), None, 400, "unknown field"),
        ("POST", ev.clone(), Some("not json".into()), None, 400, "request body"),
        ("POST", "/releases/r99/eval".into(), Some(json!({"points": [[0.5, 0.5]]}).to_string()), None, 404, "no release"),
        ("GET", "/releases/r99".into(), None, None, 404, "no release"),
        ("GET", format!("/releases/{id}/grid?n=1"), None, None, 400, "between 2 and"),
        ("GET", format!("/releases/{id}/grid?n=abc"), None, None, 400, "query"),
        ("GET", "/nowhere".into(), None, None, 404, "no such endpoint"),
        ("PUT", "/releases".into(), None, None, 405, "method not allowed"),
        ("POST", "/releases".into(), Some(spec(dir.path()).to_string()), None, 401, "missing bearer token"),
        ("POST", "/releases".into(), Some(spec(dir.path()).to_string()), Some("wrong"), 401, "wrong token"),
        ("DELETE", format!("/releases/{id}"), None, Some("wrong"), 401, "wrong token"),
        // A malformed spec value is refused when the body is parsed (400), naming the key.
        ("POST", "/releases".into(), Some(bad_spec.to_string()), Some(TOKEN), 400, "kernel"),
        ("POST", "/releases".into(), Some(far.to_string()), Some(TOKEN), 403, "refusing to release"),
        ("POST", "/releases".into(), Some(json!({"data": "/nonexistent.csv", "kernel": "exponential", "lengthscale": 1, "domain": "box:0,1,0,1", "ridge": 1, "scale": 1, "delta": 1e-5, "response_bound": 1, "dataset": "sensors"}).to_string()), Some(TOKEN), 400, "cannot be opened inside the server's data directory"),
    ];
    for (method, path, body, token, status, says) in &cases {
        let (st, v) = s.request(method, path, body.as_deref(), *token);
        assert_eq!(st, *status, "{method} {path}: {v}");
        let msg = v["error"].as_str().unwrap_or_else(|| panic!("{method} {path}: not a JSON error: {v}"));
        assert!(msg.contains(says), "{method} {path}: {msg:?} does not say {says:?}");
    }
    // Too many points revealed by one path: refused, nothing revealed.
    let pts: Vec<[f64; 2]> = (0..45).map(|i| [i as f64 / 45.0, 0.25]).collect();
    s.eval(&id, &pts);
    let more: Vec<[f64; 2]> = (0..20).map(|i| [i as f64 / 20.0, 0.75]).collect();
    let (st, v) = s.post(&ev, &json!({"points": more}));
    assert_eq!(st, 413, "{v}");
    assert!(v["error"].as_str().unwrap().contains("at most 60 distinct points"), "{v}");
    assert_eq!(s.get(&format!("/releases/{id}")).1["revealed"][0], 45);
    // Still serving.
    assert_eq!(s.eval(&id, &[[0.0, 0.25]]).len(), 1);
    assert_eq!(s.get("/releases").0, 200);
}

/// Item 15 on the server: a release request must give the responses' scale.
#[test]
fn a_release_without_response_range_or_bound_is_refused_400_naming_both() {
    let (dir, config) = setup("", true);
    let s = Server::start(&config);
    let mut sp = spec(dir.path());
    let o = sp.as_object_mut().unwrap();
    o.remove("response_bound");
    o.remove("response_range");
    let (st, v) = s.request("POST", "/releases", Some(&sp.to_string()), Some(TOKEN));
    assert_eq!(st, 400, "{v}");
    let msg = v["error"].as_str().unwrap();
    assert!(msg.contains("response_range") && msg.contains("response_bound"), "{msg}");
    assert_eq!(s.get("/releases").1["releases"].as_array().unwrap().len(), 0);
}

/// Item 8 on the server: a dataset refused by the data checks (here a
/// response beyond the declared range with on_unbounded = reject)
/// consumes no budget; the next, valid release gets the whole budget.
#[test]
fn a_refused_dataset_consumes_no_budget_in_the_servers_ledger() {
    let (dir, config) = setup("", true);
    let s = Server::start(&config);
    let mut csv = std::fs::read_to_string(dir.path().join("data.csv")).unwrap();
    csv.push_str("0.5,0.5,7.5\n");
    std::fs::write(dir.path().join("bad.csv"), csv).unwrap();
    let mut bad = spec(dir.path());
    bad["data"] = json!(dir.path().join("bad.csv"));
    bad["on_unbounded"] = json!("reject");
    for _ in 0..3 {
        let (st, v) = s.request("POST", "/releases", Some(&bad.to_string()), Some(TOKEN));
        assert_eq!(st, 422, "{v}");
        assert_eq!(ledger_entries(dir.path()).len(), 0, "a refused dataset reserved budget: {v}");
    }
    s.create(&spec(dir.path()));
    assert_eq!(ledger_entries(dir.path()).len(), 1);
}

/// Issue 26 (service parity): `data` must be a file inside the server's data directory
/// (default: the configuration's folder; `data_dir` sets another); a file elsewhere — by an
/// absolute path, `..` or a symbolic link — is refused 400 before it is read, and the
/// message never echoes its contents; nothing is recorded in the ledger.
#[test]
fn data_outside_the_data_directory_is_refused_unread() {
    let (dir, config) = setup("", true);
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.csv");
    std::fs::write(&secret, "TOPSECRET-HEADER,b\n1,2\n").unwrap();
    let link = dir.path().join("link.csv");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    let s = Server::start(&config);
    let dotdot = dir.path().join("..").join(outside.path().file_name().unwrap()).join("secret.csv");
    for path in [secret.clone(), dotdot, link] {
        let mut sp = spec(dir.path());
        sp["data"] = json!(path);
        let (st, v) = s.request("POST", "/releases", Some(&sp.to_string()), Some(TOKEN));
        let msg = v["error"].as_str().unwrap_or_default();
        assert_eq!(st, 400, "{}: {v}", path.display());
        assert!(msg.contains("data directory") && msg.contains("nothing was read"), "{msg}");
        assert!(!msg.contains("TOPSECRET"), "{msg}");
    }
    assert_eq!(ledger_entries(dir.path()).len(), 0);
    // The data inside the folder are served as before.
    s.create(&spec(dir.path()));
    // Another data_dir: the same file is now outside.
    let (dir2, config2) = setup("data_dir = \"sub\"\n", true);
    std::fs::create_dir(dir2.path().join("sub")).unwrap();
    let s2 = Server::start(&config2);
    let (st, v) = s2.request("POST", "/releases", Some(&spec(dir2.path()).to_string()), Some(TOKEN));
    assert_eq!(st, 400, "{v}");
    std::fs::copy(dir2.path().join("data.csv"), dir2.path().join("sub/data.csv")).unwrap();
    let mut sp = spec(dir2.path());
    sp["data"] = json!(dir2.path().join("sub/data.csv"));
    s2.create(&sp);
}

/// The covariates' CRS and column names reach the public description (the
/// viewer's axis labels), with ε and δ rounded up for display; the
/// operator's note is in the admin's answer only, never in the description.
#[test]
fn crs_axes_display_and_the_operator_note() {
    let (dir, config) = setup("", false);
    let s = Server::start(&config);
    let mut body = spec(dir.path());
    body["crs"] = json!("epsg:27700");
    body["x"] = json!(["x1", "x2"]);
    body["response_bound"] = json!(0.5); // clips some of the |y| ≤ 1 responses
    let (st, created) = s.request("POST", "/releases", Some(&body.to_string()), Some(TOKEN));
    assert_eq!(st, 201, "{created}");
    let id = created["id"].as_str().unwrap();
    let clipped = created["operator"]["responses_clipped"].as_u64().unwrap();
    assert!(clipped > 0 && clipped < 40, "{created}");
    assert!(created["operator"]["notes"][0].as_str().unwrap().starts_with(&format!("clipped {clipped} of 40")));
    let (_, one) = s.get(&format!("/releases/{id}"));
    assert!(!one.to_string().contains("operator") && !one.to_string().contains("clipped"), "{one}");
    assert_eq!(one["crs"]["code"], "EPSG:27700");
    assert_eq!(one["crs"]["unit"], "m");
    assert_eq!(one["crs"]["label"], "EPSG:27700 OSGB 1936 / British National Grid");
    assert_eq!(one["axes"], json!(["x1", "x2"]));
    let (eps, shown) = (one["epsilon"].as_f64().unwrap(), one["display"]["epsilon"].as_str().unwrap());
    let shown: f64 = shown.parse().unwrap();
    assert!(shown >= eps && shown - eps < 1e-4, "{shown} for {eps}");
    assert!(one["display"]["delta"].as_str().unwrap().parse::<f64>().unwrap() >= one["delta"].as_f64().unwrap());
    // Without column names the CRS's axis names label the coordinates.
    let mut body = spec(dir.path());
    body["crs"] = json!("EPSG:27700");
    let (st, created) = s.request("POST", "/releases", Some(&body.to_string()), Some(TOKEN));
    assert_eq!(st, 201, "{created}");
    assert_eq!(created["axes"], json!(["easting", "northing"]));
    // An unknown CRS is refused, naming the key.
    body["crs"] = json!("EPSG:1");
    let (st, e) = s.request("POST", "/releases", Some(&body.to_string()), Some(TOKEN));
    assert_eq!(st, 400, "{e}");
    assert!(e["error"].as_str().unwrap().starts_with("crs: EPSG:1 is not in gpdp's CRS registry"), "{e}");
}

/// A release request with `plan`: the plan's release spec completed by the
/// request's keys, its CRS and units taken, the report naming the plan as
/// the hyperparameters' source; contradicting keys and the plan's own proxy
/// as data are refused. The plan is `gpdp plan` on examples/last-year.csv
/// (regenerate after a plan.json version change with: `cd examples && gpdp plan
/// --proxy last-year.csv --x easting,northing --y pm25 --response-range 0,40
/// --units µg/m³ --domain box:500000,510000,180000,190000 --n 300 --delta 1e-5
/// --epsilons 1,3 --threshold 25 --crs EPSG:27700 --out /tmp/planfx` and copy
/// plan.json to crates/gpdp-server/tests/server/plan-pm25.json).
#[test]
fn a_release_from_a_plan_takes_its_spec_and_refuses_contradictions() {
    let (dir, config) = setup("", false);
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    for f in ["readings.csv", "last-year.csv"] {
        std::fs::copy(examples.join(f), dir.path().join(f)).unwrap();
    }
    let plan = dir.path().join("plan.json");
    std::fs::copy(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/server/plan-pm25.json"), &plan).unwrap();
    let s = Server::start(&config);
    let body = |data: &str, extra: serde_json::Value| {
        let mut b = json!({
            "data": dir.path().join(data), "x": ["easting", "northing"], "y": "pm25",
            "plan": plan, "target_epsilon": 3.0, "delta": 1e-5,
        });
        for (k, v) in extra.as_object().unwrap() {
            b[k] = v.clone();
        }
        b.to_string()
    };
    let (st, created) = s.request("POST", "/releases", Some(&body("readings.csv", json!({}))), Some(TOKEN));
    assert_eq!(st, 201, "{created}");
    let planned: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let report = &created["report"];
    assert_eq!(report["hyperparameter_source"]["source"], "plan", "{report}");
    assert_eq!(report["hyperparameter_source"]["proxy_sha256"], planned["proxy_sha256"]);
    assert_eq!(created["crs"]["code"], "EPSG:27700");
    assert_eq!(created["units"], "µg/m³");
    assert_eq!(created["axes"], json!(["easting", "northing"]));
    assert!(created["epsilon"].as_f64().unwrap() <= 3.0 + 1e-9);
    assert_eq!(created["operator"]["records_shared_with_plan_proxy"], 0);
    // Keys the plan fitted: equal is accepted, different refused naming the key.
    // The fixture is a version-4 plan (σ in the range's half-widths, kept to
    // exercise the conversion): in data units its σ is 20 times that.
    assert_eq!(planned["version"], 4);
    let same = json!(planned["release"]["spec"]["scale"].as_f64().unwrap() * 20.0);
    assert_eq!(s.request("POST", "/releases", Some(&body("readings.csv", json!({"scale": same}))), Some(TOKEN)).0, 201);
    for (extra, key) in [
        (json!({"scale": 2.0}), "scale: 2.0 contradicts the plan"),
        (json!({"kernel": "exponential"}), "kernel: \"exponential\" contradicts the plan"),
        (json!({"response_range": [0.0, 80.0]}), "response_range: [0.0,80.0] contradicts the plan"),
        (json!({"crs": "EPSG:4326"}), "crs: EPSG:4326 contradicts the plan's EPSG:27700"),
    ] {
        let (st, e) = s.request("POST", "/releases", Some(&body("readings.csv", extra.clone())), Some(TOKEN));
        assert_eq!(st, 400, "{extra}: {e}");
        assert!(e["error"].as_str().unwrap().contains(key), "{extra}: {e}");
    }
    // The proxy itself is refused before anything is reserved.
    let (st, e) = s.request("POST", "/releases", Some(&body("last-year.csv", json!({}))), Some(TOKEN));
    assert_eq!(st, 422, "{e}");
    assert!(e["error"].as_str().unwrap().contains("same SHA-256"), "{e}");
    // A file that is not a plan.
    let mut b: serde_json::Value = serde_json::from_str(&body("readings.csv", json!({}))).unwrap();
    b["plan"] = json!(dir.path().join("readings.csv"));
    let (st, e) = s.request("POST", "/releases", Some(&b.to_string()), Some(TOKEN));
    assert_eq!(st, 400, "{e}");
    assert!(e["error"].as_str().unwrap().contains("is not a plan.json"), "{e}");
}
