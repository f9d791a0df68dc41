//! Helpers shared by the server's integration tests: a server started in
//! this process ([`gpdp_server::start`]) on a free loopback port, an HTTP
//! client (ureq) that answers every status as (status, JSON body), the test
//! folder (dataset, ledger, `server.toml`), and reading an answer to a
//! request written by hand on a raw socket.

use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gpdp::Conversion;
use gpdp::ledger::Ledger;
use serde_json::{Value, json};

/// The admin token of every test's `server.toml`.
pub const TOKEN: &str = "test-token-5f1c";

/// A limit only a hang reaches: far above the configured timeouts of the
/// tests (1 s) and any answer time on a loaded machine. It is not a
/// performance bound — the wall-clock measurements are the benchmark
/// `cargo bench -p gpdp-server --bench service`.
pub const HANG_GUARD: Duration = Duration::from_secs(60);

/// An HTTP client: statuses are answers, not errors (the tests check
/// them); [`HANG_GUARD`] at most per request.
pub fn client() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).timeout_global(Some(HANG_GUARD)).build().new_agent()
}

/// One request with `client`: (status, body as JSON, or as a JSON string
/// when it is not JSON — the viewer's page). `body`, when given, is sent
/// as `application/json`; `token` as `Authorization: Bearer`.
pub fn request_with(
    client: &ureq::Agent,
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
    token: Option<&str>,
) -> (u16, Value) {
    let mut req = ureq::http::Request::builder().method(method).uri(format!("http://{addr}{path}"));
    if let Some(t) = token {
        req = req.header("Authorization", format!("Bearer {t}"));
    }
    let answer = match body {
        Some(b) => client.run(req.header("Content-Type", "application/json").body(b.to_string()).unwrap()),
        None => client.run(req.body(()).unwrap()),
    };
    let mut answer = answer.unwrap_or_else(|e| panic!("{method} {path}: no answer: {e}"));
    let status = answer.status().as_u16();
    let text = answer.body_mut().read_to_string().unwrap_or_else(|e| panic!("{method} {path}: reading the body: {e}"));
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// A server started in this process on a free loopback port, with its
/// own client; stopped (and waited for) when dropped.
pub struct Server {
    running: gpdp_server::Running,
    client: ureq::Agent,
}

impl Server {
    /// Loads `config` (as `gpdp serve --config` does) and starts it on
    /// 127.0.0.1:0.
    pub fn start(config: &Path) -> Server {
        let mut cfg = gpdp_server::Config::load(config).unwrap();
        cfg.bind = SocketAddr::from(([127, 0, 0, 1], 0));
        Server { running: gpdp_server::start(cfg).unwrap(), client: client() }
    }

    pub fn addr(&self) -> SocketAddr {
        self.running.addr()
    }

    /// A request on this server: (status, JSON body).
    pub fn request(&self, method: &str, path: &str, body: Option<&str>, token: Option<&str>) -> (u16, Value) {
        request_with(&self.client, self.addr(), method, path, body, token)
    }

    pub fn get(&self, path: &str) -> (u16, Value) {
        self.request("GET", path, None, None)
    }

    pub fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.request("POST", path, Some(&body.to_string()), None)
    }

    /// The values of path 0 of release `id` at `pts` (asserting 200).
    pub fn eval(&self, id: &str, pts: &[[f64; 2]]) -> Vec<f64> {
        let (st, v) = self.post(&format!("/releases/{id}/eval"), &json!({"points": pts}));
        assert_eq!(st, 200, "{v}");
        v["values"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
    }

    /// Creates a release of `spec` with the admin token (asserting 201): its id.
    pub fn create(&self, spec: &Value) -> String {
        let (st, v) = self.request("POST", "/releases", Some(&spec.to_string()), Some(TOKEN));
        assert_eq!(st, 201, "{v}");
        v["id"].as_str().unwrap().to_string()
    }
}

/// A folder with a 2-D dataset (`data.csv`, 40 records, |y| ≤ 1), with a
/// ledger (`budget.sqlite`: dataset `sensors`, ε = 100, δ = 1e-5) or
/// `allow_without_ledger`, and `server.toml` (state, the admin token,
/// then `extra`).
pub fn setup(extra: &str, with_ledger: bool) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("x1,x2,y\n");
    for i in 0..40 {
        let (a, b) = ((i as f64 * 0.618034) % 1.0, (i as f64 * 0.381966 + 0.1) % 1.0);
        csv.push_str(&format!("{a},{b},{}\n", (3.0 * a).sin() * (2.0 * b).cos()));
    }
    std::fs::write(dir.path().join("data.csv"), csv).unwrap();
    let ledger = if with_ledger {
        // What `gpdp ledger init --dataset sensors --epsilon 100 --delta 1e-5` does.
        let mut l = Ledger::open(&dir.path().join("budget.sqlite")).unwrap();
        l.init("sensors", 100.0, 1e-5, Conversion::Improved).unwrap();
        "ledger = \"budget.sqlite\"\n"
    } else {
        "allow_without_ledger = true\n"
    };
    let config = dir.path().join("server.toml");
    std::fs::write(&config, format!("state = \"state.sqlite\"\n{ledger}admin_token = \"{TOKEN}\"\n{extra}")).unwrap();
    (dir, config)
}

/// The entries of dataset `sensors` in the ledger of a [`setup`] folder,
/// as `gpdp ledger show --json` lists them (read-only).
pub fn ledger_entries(dir: &Path) -> Vec<Value> {
    let l = Ledger::open_read_only(&dir.join("budget.sqlite")).unwrap();
    l.entries("sensors").unwrap().iter().map(|e| serde_json::to_value(e).unwrap()).collect()
}

pub use crate::fixture::spec;

/// Reads one answer from `s` — to a request the test wrote on the raw
/// socket — until the server closes the connection or `limit` passes:
/// (status, JSON body, seconds waited); status 0 if no complete head came.
/// The head is parsed by httparse (hyper's parser).
pub fn read_answer(s: &mut TcpStream, limit: Duration) -> (u16, Value, f64) {
    let t = Instant::now();
    s.set_read_timeout(Some(limit)).unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(k) => raw.extend_from_slice(&buf[..k]),
        }
        if t.elapsed() > limit {
            break;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut head = httparse::Response::new(&mut headers);
    match head.parse(&raw) {
        Ok(httparse::Status::Complete(n)) => {
            let body = String::from_utf8_lossy(&raw[n..]).into_owned();
            let status = head.code.unwrap_or(0);
            (status, serde_json::from_str(&body).unwrap_or(Value::String(body)), secs)
        }
        _ => (0, Value::String(String::from_utf8_lossy(&raw).into_owned()), secs),
    }
}
