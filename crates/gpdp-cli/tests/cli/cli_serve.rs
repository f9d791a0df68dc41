//! `gpdp serve`, the command, against a real server process started by
//! each test: the process killed with SIGKILL and restarted (identical
//! answers; then a changed dataset makes the release unavailable), and —
//! run from `.ci/run` with `--ignored` — the browser viewer (headless
//! Chromium) and a schemathesis run against the OpenAPI document.
//!
//! The HTTP API's behaviour (answers, errors, limits, the ledger, the spec
//! keys, the law of the revealed values, load) is tested with the service
//! started in-process, in the server's own tests:
//! `cargo test --release --workspace --test server`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::fixture::spec;

const TOKEN: &str = "test-token-5f1c";

/// A server process on a free loopback port; killed (SIGKILL) on drop.
struct Server {
    child: Child,
    addr: String,
    client: ureq::Agent,
}

impl Server {
    fn start(config: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gpdp"))
            .args(["serve", "--config"])
            .arg(config)
            .args(["--bind", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("gpdp serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let addr = line.trim().strip_prefix("listening on http://").unwrap_or_else(|| panic!("{line:?}")).to_string();
        // Statuses are answers, not errors (the tests check them).
        let client = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .new_agent();
        Server { child, addr, client }
    }

    fn kill9(&mut self) {
        let _ = self.child.kill(); // SIGKILL on Unix
        let _ = self.child.wait();
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// One request (ureq): (status, JSON body). `body`, when given, is
    /// sent as `application/json`; `token` as `Authorization: Bearer`.
    fn request(&self, method: &str, path: &str, body: Option<&str>, token: Option<&str>) -> (u16, Value) {
        let mut req = ureq::http::Request::builder().method(method).uri(format!("{}{path}", self.url()));
        if let Some(t) = token {
            req = req.header("Authorization", format!("Bearer {t}"));
        }
        let answer = match body {
            Some(b) => self.client.run(req.header("Content-Type", "application/json").body(b.to_string()).unwrap()),
            None => self.client.run(req.body(()).unwrap()),
        };
        let mut answer = answer.unwrap_or_else(|e| panic!("{method} {path}: no answer: {e}"));
        let status = answer.status().as_u16();
        let text = answer.body_mut().read_to_string().unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    fn get(&self, path: &str) -> (u16, Value) {
        self.request("GET", path, None, None)
    }

    fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.request("POST", path, Some(&body.to_string()), None)
    }

    /// The values of path 0 of release `id` at `pts` (asserting 200).
    fn eval(&self, id: &str, pts: &[[f64; 2]]) -> Vec<f64> {
        let (st, v) = self.post(&format!("/releases/{id}/eval"), &json!({"points": pts}));
        assert_eq!(st, 200, "{v}");
        v["values"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
    }

    /// Creates a release of `spec` with the admin token (asserting 201): its id.
    fn create(&self, spec: &Value) -> String {
        let (st, v) = self.request("POST", "/releases", Some(&spec.to_string()), Some(TOKEN));
        assert_eq!(st, 201, "{v}");
        v["id"].as_str().unwrap().to_string()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// A folder with a 2-D dataset, a ledger with a budget and a config.
fn setup(extra: &str, with_ledger: bool) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("x1,x2,y\n");
    for i in 0..40 {
        let (a, b) = ((i as f64 * 0.618034) % 1.0, (i as f64 * 0.381966 + 0.1) % 1.0);
        csv.push_str(&format!("{a},{b},{}\n", (3.0 * a).sin() * (2.0 * b).cos()));
    }
    std::fs::write(dir.path().join("data.csv"), csv).unwrap();
    let ledger = if with_ledger {
        let o = Command::new(env!("CARGO_BIN_EXE_gpdp"))
            .args(["ledger", "init", "--ledger"])
            .arg(dir.path().join("budget.sqlite"))
            .args(["--dataset", "sensors", "--epsilon", "100", "--delta", "1e-5"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        "ledger = \"budget.sqlite\"\n"
    } else {
        "allow_without_ledger = true\n"
    };
    let config = dir.path().join("server.toml");
    std::fs::write(&config, format!("state = \"state.sqlite\"\n{ledger}admin_token = \"{TOKEN}\"\n{extra}")).unwrap();
    (dir, config)
}

#[test]
fn after_kill_9_a_restarted_server_answers_identically() {
    let (dir, config) = setup("", true);
    let a_pts = [[0.1, 0.2], [0.4, 0.4], [0.9, 0.05]];
    let b_pts = [[0.41, 0.4], [0.6, 0.6]];
    let (id, a, b) = {
        let mut s = Server::start(&config);
        let id = s.create(&spec(dir.path()));
        let a = s.eval(&id, &a_pts);
        s.kill9();
        let s = Server::start(&config);
        assert_eq!(s.eval(&id, &a_pts), a, "old points identical after kill -9");
        // New points: conditional on the old ones (0.41 is next to 0.4).
        let b = s.eval(&id, &b_pts);
        assert!((b[0] - a[1]).abs() < 0.5, "{b:?} vs {a:?}");
        (id, a, b)
    };
    let s = Server::start(&config);
    assert_eq!(s.eval(&id, &a_pts), a);
    assert_eq!(s.eval(&id, &b_pts), b);
    assert_eq!(s.get(&format!("/releases/{id}")).1["revealed"][0], 5);
    // The dataset changing under a release makes it unavailable, not inconsistent.
    drop(s);
    std::fs::write(dir.path().join("data.csv"), "x1,x2,y\n0.5,0.5,0.1\n0.2,0.2,0.3\n").unwrap();
    let s = Server::start(&config);
    let (st, v) = s.post(&format!("/releases/{id}/eval"), &json!({"points": a_pts}));
    assert_eq!(st, 503, "{v}");
    assert_eq!(s.get(&format!("/releases/{id}")).1["status"], "unavailable");
}

/// The viewer in headless Chromium (Playwright): `.ci/run` installs
/// chromium and the test's npm packages, then runs this with
/// GPDP_BROWSER_TEST=crates/gpdp-server/tests/browser.
#[test]
#[ignore = "needs chromium and npm packages: see .ci/run"]
fn the_viewer_shows_the_map_and_evaluates_clicks_in_chromium() {
    let dir_browser = PathBuf::from(std::env::var("GPDP_BROWSER_TEST").expect("GPDP_BROWSER_TEST"));
    let (dir, config) = setup("", true);
    let s = Server::start(&config);
    let id = s.create(&spec(dir.path()));
    let artifacts = std::env::var("GPDP_ARTIFACTS").unwrap_or_else(|_| "target/ci-artifacts".into());
    let o = Command::new("node")
        .arg("viewer.test.mjs")
        .current_dir(&dir_browser)
        .env("GPDP_SERVER_URL", s.url())
        .env("GPDP_RELEASE_ID", &id)
        .env("GPDP_ARTIFACTS", &artifacts)
        .output()
        .expect("node runs");
    eprintln!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success());
}

/// Schemathesis against /openapi.json for a bounded number of examples:
/// `.ci/run` runs this with GPDP_SCHEMATHESIS=path/to/st.
#[test]
#[ignore = "needs schemathesis: see .ci/run"]
fn the_api_conforms_to_its_openapi_document_under_fuzzing() {
    let st = std::env::var("GPDP_SCHEMATHESIS").expect("GPDP_SCHEMATHESIS");
    let (dir, config) = setup("rate_limit_per_minute = 0\nmax_revealed = 3000\n", true);
    let s = Server::start(&config);
    s.create(&spec(dir.path()));
    let o = Command::new(st)
        .args(["run", &format!("{}/openapi.json", s.url())])
        .args(["--max-examples", "40", "--workers", "1", "--request-timeout", "20", "--seed", "1"])
        .args([
            "--checks",
            "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
        ])
        .args(["--header", &format!("Authorization: Bearer {TOKEN}")])
        .current_dir(dir.path()) // its cache folder goes there, not into the repository
        .output()
        .expect("schemathesis runs");
    eprintln!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success());
}
