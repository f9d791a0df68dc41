//! The service without HTTP: releases, their lazy paths, durable
//! evaluation, restart.
//!
//! Consistency: evaluations of one path are serialised by the release's
//! lock; every newly revealed (point, value) is committed to the store
//! before the values are returned. If the commit fails, the in-memory path
//! is rebuilt from the store (the values that were not stored were never
//! returned, so nothing revealed is lost or contradicted).
//!
//! Side channels: the posterior is solved over the n records as they are
//! (`posterior_system = "per_record"`, the default), so the time and memory
//! of creating a release and of every batch depend only on n, the
//! dimension, the revealed counts and the batch — all public. The state
//! memory of all releases is capped server-wide (`max_state_bytes`),
//! estimated from the same public quantities, and refused before anything
//! is allocated (docs/serve.md).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

use gpdp::ledger::Ledger;
use gpdp::{Dataset, Domain, Grid, LazyRelease, Mechanism, Points, ReleaseRng};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::error::ServerError;
use crate::memory::{self, MemoryCap};
use crate::spec::ReleaseRequest;
use crate::store::{Store, StoredRelease};

/// One release held by the server.
pub struct Entry {
    pub id: String,
    /// `active`, `retired` or `unavailable` (could not be restored).
    pub status: Mutex<String>,
    /// The public description (no data-dependent diagnostics).
    pub public: Value,
    pub domain: Domain,
    pub draws: usize,
    state: Mutex<Option<Live>>,
}

/// What an active release needs to evaluate.
struct Live {
    mechanism: Mechanism,
    data: Dataset,
    lazy: LazyRelease,
    /// State memory this release holds against the server's cap (its
    /// posterior and its paths' factors, estimated from public counts).
    bytes: u64,
}

impl Live {
    /// What the release holds now: the posterior of n records and each
    /// path's factor of its revealed set.
    fn held(&self) -> u64 {
        let (n, dim) = (self.data.len(), self.data.dim());
        memory::posterior_bytes(n, dim)
            + self.lazy.paths().iter().map(|p| memory::path_bytes(p.revealed(), dim)).sum::<u64>()
    }
}

pub struct Service {
    pub config: Config,
    store: Mutex<Store>,
    ledger: Option<Mutex<Ledger>>,
    releases: RwLock<BTreeMap<String, Arc<Entry>>>,
    memory: MemoryCap,
}

/// The public description's `crs`: code, name (label) and unit, for the viewer's axes.
fn crs_description(crs: Option<&str>) -> Value {
    match crs.and_then(|c| c.parse::<gpdp::crs::Crs>().ok()) {
        Some(c) => json!({"code": c.to_string(), "label": c.label(), "unit": c.unit()}),
        None => Value::Null,
    }
}

/// The coordinates' names: the request's covariate columns when it names
/// them, else the CRS's axis names (2-D), else none.
fn axis_names(spec: &ReleaseRequest, dim: usize) -> Value {
    if let Some(x) = spec.x.as_ref().filter(|x| x.len() == dim) {
        return json!(x);
    }
    match spec.crs.as_deref().and_then(|c| c.parse::<gpdp::crs::Crs>().ok()) {
        Some(c) if dim == 2 => json!(c.axis_names()),
        _ => Value::Null,
    }
}

/// The operator's note of a created release (the admin's answer only).
fn operator_note(outcome: &gpdp::model::policy::PolicyOutcome, shared: usize, m: &Mechanism, n: usize) -> Value {
    let p = m.params();
    let range = match p.response_range {
        Some(r) => format!("the response range [{}, {}]", r.lo, r.hi),
        None => format!("[−{b}, {b}]", b = p.release.response_bound),
    };
    let mut notes = Vec::new();
    if outcome.responses_clipped > 0 {
        notes.push(format!(
            "clipped {} of {n} response(s) to {range}{}",
            outcome.responses_clipped,
            if outcome.responses_clipped * 10 >= n { " — the map will flatten towards the range's ends" } else { "" }
        ));
    }
    if outcome.covariates_snapped > 0 {
        notes.push(format!("moved {} covariate(s) onto the declared lattice", outcome.covariates_snapped));
    }
    if shared > 0 {
        notes.push(format!("{shared} of the {n} records are also records of the plan's proxy"));
    }
    json!({
        "private": "not published: facts about the private data for the data holder only (never stored in the release's description)",
        "responses_clipped": outcome.responses_clipped,
        "covariates_snapped": outcome.covariates_snapped,
        "records_shared_with_plan_proxy": shared,
        "notes": notes,
    })
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn now() -> String {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format!("{}.{:09}", d.as_secs(), d.subsec_nanos())
}

/// Reads the dataset of `spec` and the SHA-256 of the file's bytes.
fn read_data(spec: &ReleaseRequest) -> Result<(Dataset, String), ServerError> {
    let bytes = gpdp::io::read_bounded(&spec.data, gpdp::io::MAX_INPUT_BYTES)?;
    let cols = gpdp::io::Columns { x: spec.x.clone(), y: spec.y.clone() };
    let t = gpdp::io::read_table_columns(&spec.data.display().to_string(), &bytes, true, &cols)?;
    let y = t.y.ok_or_else(|| ServerError::BadRequest(format!("{}: no response column", spec.data.display())))?;
    Ok((Dataset::new(t.x, y)?, sha256_hex(&bytes)))
}

impl Service {
    /// Refuses a `data` path outside the configured `data_dir` (compared
    /// after resolving `..` and symbolic links), before the file is read; the
    /// message names the path as given and the folder, never the contents.
    fn check_data_dir(&self, data: &std::path::Path) -> Result<(), ServerError> {
        let Some(dir) = &self.config.data_dir else { return Ok(()) };
        let dir = std::fs::canonicalize(dir).map_err(|e| {
            ServerError::Config(format!("data_dir {}: {e} (set data_dir in the server's configuration)", dir.display()))
        })?;
        match std::fs::canonicalize(data) {
            Ok(p) if p.starts_with(&dir) && p.is_file() => Ok(()),
            Ok(_) => Err(ServerError::BadRequest(format!(
                "data: {} is not a file inside the server's data directory {} (data_dir in its configuration); nothing was read",
                data.display(),
                dir.display()
            ))),
            Err(_) => Err(ServerError::BadRequest(format!(
                "data: {} cannot be opened inside the server's data directory {} (data_dir in its configuration); nothing was read",
                data.display(),
                dir.display()
            ))),
        }
    }

    /// Opens the store (and ledger) and restores every active release.
    pub fn open(config: Config) -> Result<Service, ServerError> {
        let store = Store::open(&config.state)?;
        let ledger = match &config.ledger {
            Some(p) => Some(Mutex::new(Ledger::open(p)?)),
            None => None,
        };
        let stored = store.releases()?;
        let memory = MemoryCap::new(config.max_state_bytes, config.admin_reserve());
        let svc = Service { config, store: Mutex::new(store), ledger, releases: RwLock::new(BTreeMap::new()), memory };
        for r in stored {
            let entry = svc.restore(&r);
            svc.releases.write().map_err(poisoned)?.insert(r.id.clone(), Arc::new(entry));
        }
        Ok(svc)
    }

    fn restore(&self, r: &StoredRelease) -> Entry {
        let public: Value = serde_json::from_str(&r.public).unwrap_or(Value::Null);
        let spec: Result<ReleaseRequest, _> = serde_json::from_str(&r.spec);
        let domain = spec.as_ref().ok().map(|s| s.spec.domain.clone());
        let draws = spec.as_ref().map(|s| s.spec.draws.get() as usize).unwrap_or(1);
        let mut entry = Entry {
            id: r.id.clone(),
            status: Mutex::new(r.status.clone()),
            public,
            domain: domain.unwrap_or_else(|| Domain::interval(0.0, 1.0).expect("a valid interval")),
            draws,
            state: Mutex::new(None),
        };
        if r.status != "active" {
            return entry;
        }
        let live = (|| -> Result<Live, ServerError> {
            let spec = spec.map_err(|e| ServerError::Store(format!("release {}: its stored request: {e}", r.id)))?;
            let (data, hash) = read_data(&spec)?;
            if hash != r.data_hash {
                return Err(ServerError::Unavailable(format!(
                    "release {}: the dataset {} has changed since the release was made (its values cannot be continued consistently)",
                    r.id,
                    spec.data.display()
                )));
            }
            let mechanism = spec.mechanism(&data)?;
            let dim = entry.domain.dim();
            let revealed = self.stored_paths(&r.id, spec.spec.draws.get() as usize, dim)?;
            let bytes = memory::posterior_bytes(data.len(), dim)
                + revealed.iter().map(|(p, _)| memory::path_bytes(p.len(), dim)).sum::<u64>();
            let held = self
                .memory
                .reserve(bytes + memory::fit_workspace_bytes(data.len()), &format!("restoring release {}", r.id))?;
            let lazy = mechanism.restore_paths_with(
                &data,
                self.config.max_revealed,
                ReleaseRng::from_os()?,
                revealed,
                self.config.posterior_system.system(),
            )?;
            held.keep(bytes);
            Ok(Live { mechanism, data, lazy, bytes })
        })();
        match live {
            Ok(l) => entry.state = Mutex::new(Some(l)),
            Err(e) => {
                eprintln!("gpdp serve: release {} is unavailable: {e}", r.id);
                entry.status = Mutex::new("unavailable".into());
            }
        }
        entry
    }

    /// Creates a release (admin) from a request body: [`ReleaseRequest`]
    /// parsed with its `plan` (a plan.json on the server, confined to
    /// `data_dir` like the data) read and applied, then [`Self::create`].
    pub fn create_from_value(&self, body: Value) -> Result<Value, ServerError> {
        let spec = ReleaseRequest::from_value_with(body, |path| {
            self.check_data_dir(path)?;
            let bytes = gpdp::io::read_bounded(path, gpdp::io::MAX_INPUT_BYTES)?;
            // Parsed, version-checked and brought to this version (σ in data units) by the library.
            let plan = gpdp::plan::Plan::from_json(&bytes, &path.display().to_string())?;
            Ok((plan, path.display().to_string()))
        })?;
        self.create(spec)
    }

    /// Creates a release (admin): reads the data, checks or calibrates the
    /// mechanism, applies the data checks, fits the posterior (within the
    /// server's memory cap), records it in the ledger (refused beyond the
    /// budget) and the store, and returns its public description. No value
    /// is drawn yet. Every refusal comes before the ledger's reservation, so
    /// a refused release consumes no budget.
    pub fn create(&self, spec: ReleaseRequest) -> Result<Value, ServerError> {
        self.check_data_dir(&spec.data)?;
        let (data, hash) = read_data(&spec)?;
        // Data that are the plan's proxy are refused (the plan would then be fitted on them).
        let shared = match &spec.planned {
            Some((plan, name)) => plan.check_not_the_proxy(name, &hash, &data)?,
            None => 0,
        };
        let mechanism = spec.mechanism(&data)?;
        // The data policy (domain, clipping or rejection) before anything
        // is reserved: a refused dataset consumes no budget.
        let outcome = mechanism.check_data(&data)?;
        let operator = operator_note(&outcome, shared, &mechanism, data.len());
        let dataset = match (&self.ledger, &spec.dataset) {
            (Some(_), None) => {
                return Err(ServerError::BadRequest(
                    "dataset: required — the name of the data's budget in the server's ledger".into(),
                ));
            }
            (None, _) if !self.config.allow_without_ledger => {
                return Err(ServerError::BadRequest(
                    "this server has no ledger (set `ledger` in its configuration, or `allow_without_ledger = true`)"
                        .into(),
                ));
            }
            (_, d) => d.clone(),
        };
        // The stored request has the calibrated ridge resolved, so that a
        // restart rebuilds exactly this mechanism.
        let mut resolved = spec.clone();
        resolved.spec = spec.spec.resolved(&mechanism);
        // The plan is applied: the stored spec is complete and names no file to re-read.
        (resolved.plan, resolved.planned) = (None, None);
        resolved.data = std::fs::canonicalize(&spec.data).unwrap_or(spec.data.clone());
        // The posterior of n records (public n), within the memory cap.
        let (n, dim) = (data.len(), data.dim());
        let bytes = memory::posterior_bytes(n, dim);
        let held = self.memory.reserve(
            bytes + memory::fit_workspace_bytes(n),
            &format!("the posterior of this release (n = {n} records)"),
        )?;
        let lazy = mechanism.sample_paths_with(
            &data,
            self.config.max_revealed,
            ReleaseRng::from_os()?,
            self.config.posterior_system.system(),
        )?;
        let mut store = self.store.lock().map_err(poisoned)?;
        let id = format!("r{}", store.next_number()?);
        let domain = mechanism.params().release.domain.clone();
        let (lower, upper) = domain.bounding_box();
        let report = serde_json::to_value(lazy.report()).map_err(|e| ServerError::Store(e.to_string()))?;
        let public = json!({
            "id": id,
            "dim": domain.dim(),
            "domain": domain.to_string(),
            "lower": lower,
            "upper": upper,
            "units": mechanism.params().units,
            "crs": crs_description(spec.crs.as_deref()),
            "axes": axis_names(&spec, domain.dim()),
            "display": {
                "epsilon": gpdp::privacy::display::epsilon_up(mechanism.privacy().epsilon, 4),
                "delta": gpdp::privacy::display::delta_up(mechanism.privacy().delta, 4),
            },
            "statement": report["statement"],
            "neighbouring_relation": report["neighbouring_relation"],
            "epsilon": mechanism.privacy().epsilon,
            "delta": mechanism.privacy().delta,
            "draws": spec.spec.draws,
            "max_revealed": self.config.max_revealed,
            "report": report,
        });
        // Ledger first (refused beyond the budget: nothing is stored), then
        // the store, then the ledger's commit — all before any value exists.
        let reservation = match (&self.ledger, &dataset) {
            (Some(l), Some(d)) => Some(l.lock().map_err(poisoned)?.reserve_for(d, &mechanism, &data)?),
            _ => None,
        };
        let spec_json = serde_json::to_string(&resolved).map_err(|e| ServerError::Store(e.to_string()))?;
        let stored = StoredRelease {
            id: id.clone(),
            spec: spec_json.clone(),
            data_hash: hash,
            status: "active".into(),
            public: public.to_string(),
        };
        store.insert_release(&stored, &now())?;
        drop(store);
        if let (Some(l), Some(res)) = (&self.ledger, reservation) {
            l.lock().map_err(poisoned)?.commit(res, &sha256_hex(spec_json.as_bytes()), &format!("gpdp serve: {id}"))?;
        }
        let entry = Entry {
            id: id.clone(),
            status: Mutex::new("active".into()),
            public: public.clone(),
            domain,
            draws: spec.spec.draws.get() as usize,
            state: Mutex::new(Some(Live { mechanism, data, lazy, bytes })),
        };
        held.keep(bytes);
        self.releases.write().map_err(poisoned)?.insert(id, Arc::new(entry));
        // The admin's answer only (never stored or listed): what the data
        // policy changed and how many records the plan's proxy shares — facts
        // about the private data that the guarantee does not cover.
        let mut answer = public;
        answer["operator"] = operator;
        Ok(answer)
    }

    /// Retires a release (admin): it stays listed, no longer evaluates.
    pub fn retire(&self, id: &str) -> Result<(), ServerError> {
        let e = self.entry(id)?;
        self.store.lock().map_err(poisoned)?.set_status(id, "retired")?;
        *e.status.lock().map_err(poisoned)? = "retired".into();
        if let Some(live) = e.state.lock().map_err(poisoned)?.take() {
            self.memory.free(live.bytes);
        }
        Ok(())
    }

    pub fn entry(&self, id: &str) -> Result<Arc<Entry>, ServerError> {
        self.releases
            .read()
            .map_err(poisoned)?
            .get(id)
            .cloned()
            .ok_or_else(|| ServerError::NotFound(format!("no release {id:?}")))
    }

    /// The public description with the current status and revealed counts.
    pub fn describe(&self, e: &Entry) -> Result<Value, ServerError> {
        let mut v = e.public.clone();
        v["status"] = json!(e.status.lock().map_err(poisoned)?.clone());
        let revealed: Vec<usize> = match &*e.state.lock().map_err(poisoned)? {
            Some(live) => live.lazy.paths().iter().map(|p| p.revealed()).collect(),
            None => vec![],
        };
        v["revealed"] = json!(revealed);
        Ok(v)
    }

    pub fn list(&self) -> Result<Vec<Value>, ServerError> {
        let entries: Vec<Arc<Entry>> = self.releases.read().map_err(poisoned)?.values().cloned().collect();
        entries.iter().map(|e| self.describe(e)).collect()
    }

    /// Checks evaluation points: the release's dimension, finite, inside the domain.
    pub fn check_points(&self, e: &Entry, points: &[Vec<f64>]) -> Result<Points, ServerError> {
        if points.is_empty() {
            return Err(ServerError::BadRequest("points: empty (give at least one point)".into()));
        }
        if points.len() > self.config.max_batch {
            return Err(ServerError::TooLarge(format!(
                "points: {} in one request; at most {} (max_batch)",
                points.len(),
                self.config.max_batch
            )));
        }
        let dim = e.domain.dim();
        let mut p = Points::new(Vec::with_capacity(points.len() * dim), dim)?;
        for (i, x) in points.iter().enumerate() {
            if x.len() != dim {
                return Err(ServerError::BadRequest(format!(
                    "points[{i}]: {} coordinates, the release is {dim}-D",
                    x.len()
                )));
            }
            if let Some(v) = x.iter().find(|v| !v.is_finite()) {
                return Err(ServerError::BadRequest(format!("points[{i}]: coordinate {v} is not a finite number")));
            }
            if !e.domain.contains(x) {
                return Err(ServerError::BadRequest(format!(
                    "points[{i}]: {x:?} lies outside the domain {}",
                    e.domain
                )));
            }
            p.push(x)?;
        }
        Ok(p)
    }

    /// Path `l` at `points` (checked): stored values for revealed points,
    /// exact conditional draws for new ones, durably stored before return.
    pub fn eval(&self, e: &Entry, l: usize, points: &Points) -> Result<(Vec<f64>, usize), ServerError> {
        let status = e.status.lock().map_err(poisoned)?.clone();
        match status.as_str() {
            "active" => {}
            "retired" => return Err(ServerError::Conflict(format!("release {} is retired", e.id))),
            _ => {
                return Err(ServerError::Unavailable(format!(
                    "release {} could not be restored; see the server log",
                    e.id
                )));
            }
        }
        if l >= e.draws {
            return Err(ServerError::BadRequest(format!(
                "path: {l} is not a path of release {} (0 ≤ path < {})",
                e.id, e.draws
            )));
        }
        let mut guard = e.state.lock().map_err(poisoned)?;
        let live = guard.as_mut().ok_or_else(|| ServerError::Conflict(format!("release {} is retired", e.id)))?;
        let before = live.lazy.paths()[l].revealed();
        // The memory the new points need, from public counts, taken before
        // anything is allocated (a batch beyond the path's own cap is left
        // to the library's 413).
        let new = live.lazy.paths()[l].unrevealed(points);
        let reserved = if new > 0 && before + new <= self.config.max_revealed {
            let dim = e.domain.dim();
            let grow = memory::path_bytes(before + new, dim) - memory::path_bytes(before, dim);
            let work = memory::extend_workspace_bytes(live.data.len(), before, new);
            Some(self.memory.reserve_for_reads(
                grow + work,
                &format!("revealing {new} new point(s) on a path with {before} revealed"),
            )?)
        } else {
            None
        };
        let values = live.lazy.eval(l, points);
        // Whatever happened, account for what the release holds now.
        let held = live.held();
        match reserved {
            Some(r) if held > live.bytes => {
                let grow = held - live.bytes;
                r.keep(grow);
                live.bytes = held;
            }
            _ if held < live.bytes => {
                self.memory.free(live.bytes - held);
                live.bytes = held;
            }
            _ => {}
        }
        let values = values?;
        let path = &live.lazy.paths()[l];
        let after = path.revealed();
        if after > before {
            let pts: Vec<Vec<f64>> = path.points().iter().skip(before).map(|x| x.to_vec()).collect();
            let vals = path.internal_values()[before..].to_vec();
            let stored = self.store.lock().map_err(poisoned).and_then(|mut s| s.append(&e.id, l, before, &pts, &vals));
            if let Err(err) = stored {
                // Not on disk, so not returned: rebuild the path from the store.
                eprintln!(
                    "gpdp serve: release {}: storing revealed values failed ({err}); rebuilding from the store",
                    e.id
                );
                let restored = self.rebuild(e, live);
                let held = live.held();
                if held < live.bytes {
                    self.memory.free(live.bytes - held);
                    live.bytes = held;
                }
                if let Err(r) = restored {
                    eprintln!("gpdp serve: release {}: rebuilding failed ({r}); marking it unavailable", e.id);
                    self.memory.free(live.bytes);
                    *guard = None;
                    *e.status.lock().map_err(poisoned)? = "unavailable".into();
                }
                return Err(ServerError::Unavailable(format!(
                    "release {}: could not store the values; try again",
                    e.id
                )));
            }
        }
        Ok((values, after))
    }

    /// Every path's stored (points, internal values), in the order revealed.
    fn stored_paths(&self, id: &str, draws: usize, dim: usize) -> Result<Vec<(Points, Vec<f64>)>, ServerError> {
        let store = self.store.lock().map_err(poisoned)?;
        (0..draws)
            .map(|l| {
                let (pts, vals) = store.revealed(id, l, dim)?;
                let mut p = Points::new(Vec::with_capacity(pts.len() * dim), dim)?;
                for x in &pts {
                    p.push(x)?;
                }
                Ok((p, vals))
            })
            .collect()
    }

    fn rebuild(&self, e: &Entry, live: &mut Live) -> Result<(), ServerError> {
        let revealed = self.stored_paths(&e.id, e.draws, e.domain.dim())?;
        live.lazy = live.mechanism.restore_paths_with(
            &live.data,
            self.config.max_revealed,
            ReleaseRng::from_os()?,
            revealed,
            self.config.posterior_system.system(),
        )?;
        Ok(())
    }

    /// The grid of `counts` points over the domain's bounding box (x1
    /// fastest), evaluated on path `l` — for map rendering.
    pub fn grid(&self, e: &Entry, l: usize, counts: Vec<usize>) -> Result<Value, ServerError> {
        if counts.len() != e.domain.dim() {
            return Err(ServerError::BadRequest(format!(
                "grid: {} counts for a {}-D release (give n, or nx and ny)",
                counts.len(),
                e.domain.dim()
            )));
        }
        if let Some(c) = counts.iter().find(|&&c| c < 2 || c > self.config.max_grid) {
            return Err(ServerError::BadRequest(format!(
                "grid: {c} points per axis; between 2 and {} (max_grid)",
                self.config.max_grid
            )));
        }
        let (lower, upper) = e.domain.bounding_box();
        let g = Grid::new(lower.clone(), upper.clone(), counts.clone())?;
        let (values, revealed) = self.eval(e, l, g.points())?;
        Ok(json!({"counts": counts, "lower": lower, "upper": upper, "values": values, "revealed": revealed}))
    }
}

fn poisoned<T>(_: T) -> ServerError {
    ServerError::Store("a lock was poisoned by an earlier failure".into())
}

/// Whether `path` exists (for the configuration check at start-up).
pub fn exists(path: &Path) -> bool {
    path.exists()
}
