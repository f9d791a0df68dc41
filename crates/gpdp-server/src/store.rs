//! The durable store: releases and every revealed (point, value), in SQLite
//! (WAL, synchronous = FULL), so that a value is on disk before it is sent.

use std::path::Path;

use rusqlite::{Connection, params};

use crate::error::{ServerError, store_err};

/// One stored release.
#[derive(Debug, Clone)]
pub struct StoredRelease {
    pub id: String,
    /// The creation request (JSON), with calibrated parameters resolved.
    pub spec: String,
    /// SHA-256 of the dataset file's bytes at creation.
    pub data_hash: String,
    pub status: String,
    /// The public description (JSON) served by `GET /releases/{id}`.
    pub public: String,
}

pub struct Store {
    conn: Connection,
}

/// The store's format (`PRAGMA user_version`). Version 1: under a response
/// range, a stored request's `scale` and `gp_noise` and the revealed
/// (internal) values are in data units, the range only centring the
/// responses (docs/model.md, "The response scale, σ and the prior mean").
/// Before (version 0), the range mapped the responses onto [−1, 1], so they
/// were in the range's half-widths.
pub const STORE_VERSION: i64 = 1;

/// Brings a store of an older format to [`STORE_VERSION`], in one
/// transaction: a version-0 release with a response range [lo, hi] gets
/// its `scale` and `gp_noise` and every revealed value multiplied by the
/// half-width h = (hi − lo)/2. The release is then the same mechanism
/// (the guarantee is invariant under a change of the responses' units) and
/// every revealed point keeps its value in data units (v·h + mid = old
/// mid + old v·h), so a restart answers identically.
fn migrate(conn: &Connection) -> Result<(), ServerError> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(store_err)?;
    if version >= STORE_VERSION {
        return Ok(());
    }
    let tx = conn.unchecked_transaction().map_err(store_err)?;
    let specs: Vec<(String, String)> = {
        let mut st = tx.prepare("SELECT id, spec FROM releases").map_err(store_err)?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).map_err(store_err)?;
        rows.collect::<Result<_, _>>().map_err(store_err)?
    };
    for (id, spec) in specs {
        let Ok(serde_json::Value::Object(mut spec)) = serde_json::from_str::<serde_json::Value>(&spec) else {
            // An unreadable request is reported when the release is restored.
            continue;
        };
        let half = match spec.get("response_range").and_then(|r| r.as_array()).map(|r| r.as_slice()) {
            Some([lo, hi]) => match (lo.as_f64(), hi.as_f64()) {
                (Some(lo), Some(hi)) => 0.5 * (hi - lo),
                _ => continue,
            },
            _ => continue,
        };
        for key in ["scale", "gp_noise"] {
            if let Some(v) = spec.get(key).and_then(|v| v.as_f64())
                && let Some(scaled) = serde_json::Number::from_f64(v * half)
            {
                spec.insert(key.into(), serde_json::Value::Number(scaled));
            }
        }
        let spec = serde_json::Value::Object(spec).to_string();
        tx.execute("UPDATE releases SET spec = ?2 WHERE id = ?1", params![id, spec]).map_err(store_err)?;
        tx.execute("UPDATE revealed SET value = value * ?2 WHERE release = ?1", params![id, half])
            .map_err(store_err)?;
    }
    tx.execute_batch(&format!("PRAGMA user_version = {STORE_VERSION};")).map_err(store_err)?;
    tx.commit().map_err(store_err)
}

impl Store {
    pub fn open(path: &Path) -> Result<Store, ServerError> {
        let conn = Connection::open(path).map_err(|e| ServerError::Store(format!("{}: {e}", path.display())))?;
        conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(store_err)?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = FULL;
             PRAGMA foreign_keys = ON;
             CREATE TABLE IF NOT EXISTS releases (
                 id TEXT PRIMARY KEY,
                 created TEXT NOT NULL,
                 spec TEXT NOT NULL,
                 data_hash TEXT NOT NULL,
                 status TEXT NOT NULL,
                 public TEXT NOT NULL
             );
             CREATE TABLE IF NOT EXISTS revealed (
                 release TEXT NOT NULL REFERENCES releases(id),
                 path INTEGER NOT NULL,
                 seq INTEGER NOT NULL,
                 point BLOB NOT NULL,
                 value REAL NOT NULL,
                 PRIMARY KEY (release, path, seq)
             );",
        )
        .map_err(store_err)?;
        migrate(&conn)?;
        Ok(Store { conn })
    }

    pub fn insert_release(&mut self, r: &StoredRelease, created: &str) -> Result<(), ServerError> {
        self.conn
            .execute(
                "INSERT INTO releases (id, created, spec, data_hash, status, public) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![r.id, created, r.spec, r.data_hash, r.status, r.public],
            )
            .map_err(store_err)?;
        Ok(())
    }

    pub fn set_status(&mut self, id: &str, status: &str) -> Result<(), ServerError> {
        self.conn.execute("UPDATE releases SET status = ?2 WHERE id = ?1", params![id, status]).map_err(store_err)?;
        Ok(())
    }

    pub fn releases(&self) -> Result<Vec<StoredRelease>, ServerError> {
        let mut st = self
            .conn
            .prepare("SELECT id, spec, data_hash, status, public FROM releases ORDER BY created, id")
            .map_err(store_err)?;
        let rows = st
            .query_map([], |r| {
                Ok(StoredRelease {
                    id: r.get(0)?,
                    spec: r.get(1)?,
                    data_hash: r.get(2)?,
                    status: r.get(3)?,
                    public: r.get(4)?,
                })
            })
            .map_err(store_err)?;
        rows.collect::<Result<_, _>>().map_err(store_err)
    }

    /// The next release number (ids are `r1`, `r2`, …).
    pub fn next_number(&self) -> Result<u64, ServerError> {
        let n: i64 = self.conn.query_row("SELECT COUNT(*) FROM releases", [], |r| r.get(0)).map_err(store_err)?;
        Ok(n as u64 + 1)
    }

    /// Appends path `path`'s newly revealed (point, value) pairs, numbered
    /// from `first`, in one transaction (durable when this returns).
    pub fn append(
        &mut self,
        id: &str,
        path: usize,
        first: usize,
        points: &[Vec<f64>],
        values: &[f64],
    ) -> Result<(), ServerError> {
        let tx = self.conn.transaction().map_err(store_err)?;
        {
            let mut st = tx
                .prepare_cached("INSERT INTO revealed (release, path, seq, point, value) VALUES (?1, ?2, ?3, ?4, ?5)")
                .map_err(store_err)?;
            for (k, (p, v)) in points.iter().zip(values).enumerate() {
                let blob: Vec<u8> = p.iter().flat_map(|x| x.to_le_bytes()).collect();
                st.execute(params![id, path as i64, (first + k) as i64, blob, v]).map_err(store_err)?;
            }
        }
        tx.commit().map_err(store_err)
    }

    /// Path `path`'s revealed (points, values), in the order revealed.
    pub fn revealed(&self, id: &str, path: usize, dim: usize) -> Result<(Vec<Vec<f64>>, Vec<f64>), ServerError> {
        let mut st = self
            .conn
            .prepare("SELECT seq, point, value FROM revealed WHERE release = ?1 AND path = ?2 ORDER BY seq")
            .map_err(store_err)?;
        let rows = st
            .query_map(params![id, path as i64], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?, r.get::<_, f64>(2)?))
            })
            .map_err(store_err)?;
        let (mut pts, mut vals) = (Vec::new(), Vec::new());
        for (i, row) in rows.enumerate() {
            let (seq, blob, v) = row.map_err(store_err)?;
            if seq != i as i64 || blob.len() != 8 * dim {
                return Err(ServerError::Store(format!("release {id} path {path}: stored point {i} is malformed")));
            }
            pts.push(blob.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect());
            vals.push(v);
        }
        Ok((pts, vals))
    }
}
