//! The ledger's file: recognised before anything is written to it, created
//! atomically, and readable without write access.
//!
//! Guarantees:
//! - **A file that is not a gpdp ledger is never written to.** Its first
//!   100 bytes (the SQLite header) are read as plain bytes first; only a
//!   file carrying the gpdp application id ([`APPLICATION_ID`]) — or, for
//!   ledgers made before the id existed, an id of 0 and exactly the
//!   ledger's tables, as seen through a read-only, immutable connection — is
//!   opened for writing, and its tables are checked again before the first
//!   write.
//! - **A new ledger appears complete or not at all.** It is built in a
//!   temporary file in the same directory, closed, fsynced, and only then
//!   linked into place (without replacing a file that appeared meanwhile),
//!   and the directory is fsynced; on any failure the temporary file is
//!   removed.
//! - **Reading needs no write access and leaves no trace.** [`open_read_only`]
//!   opens a file without a write-ahead log (no connection is open: the
//!   last one to close checkpoints and removes it) as `immutable`, which
//!   creates no `-wal`/`-shm` files; with a write-ahead log present it opens
//!   it `SQLITE_OPEN_READONLY` through SQLite's locks. An immutable
//!   connection takes no locks: it is meant for a short read (`ledger
//!   show`); a writer that starts and checkpoints during that read is not
//!   seen.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};

/// `PRAGMA application_id` of a gpdp ledger: the bytes `gpdp`.
pub const APPLICATION_ID: u32 = u32::from_be_bytes(*b"gpdp");

/// `PRAGMA user_version` of the ledger's current schema.
/// Version 2 adds, per release, its spec, the gpdp version that reserved it
/// and its accounted Rényi curve (`spec`, `gpdp_version`, `curve`,
/// `migrated_by`); a version-1 ledger is migrated when opened for writing.
pub const SCHEMA_VERSION: u32 = 2;

/// The columns schema 2 adds to `releases`.
const CURVE_COLUMNS: [&str; 4] = ["spec", "gpdp_version", "curve", "migrated_by"];

/// The ledger's tables and their columns, in order.
const TABLES: [(&str, &[&str]); 2] = [
    ("budgets", &["dataset", "epsilon", "delta", "conversion", "created"]),
    (
        "releases",
        &[
            "id",
            "dataset",
            "status",
            "params",
            "epsilon",
            "composed_epsilon",
            "reserved_at",
            "committed_at",
            "files_hash",
            "out",
        ],
    ),
];

/// The schema of a new ledger.
pub(super) const SCHEMA: &str = "CREATE TABLE budgets (
        dataset TEXT PRIMARY KEY,
        epsilon REAL NOT NULL,
        delta REAL NOT NULL,
        conversion TEXT NOT NULL,
        created TEXT NOT NULL);
    CREATE TABLE releases (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        dataset TEXT NOT NULL REFERENCES budgets(dataset),
        status TEXT NOT NULL CHECK (status IN ('reserved', 'committed')),
        params TEXT NOT NULL,
        epsilon REAL NOT NULL,
        composed_epsilon REAL NOT NULL,
        reserved_at TEXT NOT NULL,
        committed_at TEXT,
        files_hash TEXT,
        out TEXT,
        spec TEXT,
        gpdp_version TEXT,
        curve TEXT,
        migrated_by TEXT);";

pub(super) fn db(e: rusqlite::Error, path: &Path) -> Error {
    Error::Input(format!("ledger {}: {e}", path.display()))
}

fn io(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::Input(format!("ledger {}: {what}: {e}", path.display()))
}

/// What the header of an existing file says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Carries the gpdp application id.
    Ledger,
    /// An SQLite database without an application id: a ledger made before
    /// the id existed if its tables are the ledger's.
    Unmarked,
}

fn not_a_ledger(path: &Path, why: &str) -> Error {
    Error::Input(format!(
        "ledger {}: not a gpdp ledger ({why}); refusing to use it — nothing was written to it. Give --ledger a new file name (gpdp ledger init creates it)",
        path.display()
    ))
}

/// Reads the file's SQLite header as plain bytes (no SQLite connection, so
/// nothing can be written) and classifies it.
fn classify(path: &Path) -> Result<Kind> {
    let mut f = File::open(path).map_err(|e| io("cannot open", path, e))?;
    let mut head = [0u8; 100];
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io("cannot read", path, e)),
        }
    }
    if got == 0 {
        return Err(not_a_ledger(
            path,
            "the file is empty — an interrupted `gpdp ledger init` of an older gpdp can leave one; if so, remove it and run gpdp ledger init again",
        ));
    }
    if got < head.len() || &head[..16] != b"SQLite format 3\0" {
        return Err(not_a_ledger(path, "not an SQLite database"));
    }
    let id = u32::from_be_bytes([head[68], head[69], head[70], head[71]]);
    match id {
        APPLICATION_ID => Ok(Kind::Ledger),
        0 => Ok(Kind::Unmarked),
        other => {
            Err(not_a_ledger(path, &format!("an SQLite database of another application: application id {other:#010x}")))
        }
    }
}

/// Whether `conn` holds exactly the ledger's tables with the ledger's
/// columns (reads only).
fn has_ledger_schema(conn: &Connection, path: &Path) -> Result<bool> {
    let mut st = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
        .map_err(|e| db(e, path))?;
    let tables: Vec<String> = st
        .query_map([], |r| r.get(0))
        .map_err(|e| db(e, path))?
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| db(e, path))?;
    if tables != TABLES.map(|(t, _)| t.to_string()) {
        return Ok(false);
    }
    for (table, columns) in TABLES {
        let mut st = conn.prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid").map_err(|e| db(e, path))?;
        let got: Vec<String> = st
            .query_map([table], |r| r.get(0))
            .map_err(|e| db(e, path))?
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| db(e, path))?;
        // Schema 1 had the releases' columns without the curve columns.
        let v2: Vec<&str> =
            columns.iter().copied().chain(if table == "releases" { CURVE_COLUMNS.to_vec() } else { vec![] }).collect();
        if got != columns && got != v2 {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether the ledger's releases have the schema-2 columns.
pub(super) fn has_curve_columns(conn: &Connection, path: &Path) -> Result<bool> {
    let mut st = conn.prepare("SELECT name FROM pragma_table_info('releases')").map_err(|e| db(e, path))?;
    let got: Vec<String> = st
        .query_map([], |r| r.get(0))
        .map_err(|e| db(e, path))?
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| db(e, path))?;
    Ok(CURVE_COLUMNS.iter().all(|c| got.iter().any(|g| g == c)))
}

fn user_version(conn: &Connection, path: &Path) -> Result<u32> {
    conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0)).map(|v| v as u32).map_err(|e| db(e, path))
}

/// Checks the tables (and schema version) of an opened file: reads only.
fn check_schema(conn: &Connection, path: &Path) -> Result<()> {
    let version = user_version(conn, path)?;
    if version > SCHEMA_VERSION {
        return Err(Error::Input(format!(
            "ledger {}: written by a newer gpdp (schema version {version}; this gpdp knows {SCHEMA_VERSION}); nothing was written to it",
            path.display()
        )));
    }
    if !has_ledger_schema(conn, path)? {
        return Err(not_a_ledger(path, "its tables are not a ledger's"));
    }
    Ok(())
}

/// A `file:` URI for `path` with `query` (percent-encoded, so that any
/// path is taken literally).
fn uri(path: &Path, query: &str) -> Result<String> {
    let abs = std::path::absolute(path).map_err(|e| io("cannot resolve", path, e))?;
    let mut s = String::from("file:");
    #[cfg(unix)]
    let bytes = {
        use std::os::unix::ffi::OsStrExt;
        abs.as_os_str().as_bytes().to_vec()
    };
    #[cfg(not(unix))]
    let bytes = abs.to_string_lossy().replace('\\', "/").into_bytes();
    #[cfg(not(unix))]
    s.push('/');
    for b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) || (cfg!(not(unix)) && b == b':') {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s.push('?');
    s.push_str(query);
    Ok(s)
}

/// A read-only connection that sees only the main file (`immutable=1`):
/// takes no locks and creates no `-wal`/`-shm` files.
fn open_immutable(path: &Path) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(uri(path, "immutable=1")?, flags).map_err(|e| db(e, path))
}

/// For a file without the application id: refuses it unless its tables
/// are exactly the ledger's (looked at through an immutable connection, so
/// a foreign file is not touched, nor are files created next to it).
fn check_unmarked(path: &Path) -> Result<()> {
    let conn = open_immutable(path)
        .map_err(|_| not_a_ledger(path, "an SQLite database without the gpdp application id that cannot be read"))?;
    match has_ledger_schema(&conn, path) {
        Ok(true) => Ok(()),
        Ok(false) => Err(not_a_ledger(path, "an SQLite database without the gpdp application id and other tables")),
        Err(_) => Err(not_a_ledger(path, "an SQLite database without the gpdp application id that cannot be read")),
    }
}

fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// Removes a temporary database and the files SQLite may have made for it.
fn remove_temporary(tmp: &Path) {
    for suffix in ["", "-journal", "-wal", "-shm"] {
        let _ = std::fs::remove_file(sidecar(tmp, suffix));
    }
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Builds a complete ledger in the new, empty file `tmp`, closed and fsynced.
fn build(tmp: &Path) -> std::result::Result<(), String> {
    let conn = Connection::open_with_flags(tmp, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|e| e.to_string())?;
    conn.execute_batch(&format!(
        "PRAGMA synchronous = FULL;
         PRAGMA application_id = {};
         PRAGMA user_version = {SCHEMA_VERSION};
         BEGIN IMMEDIATE;
         {SCHEMA}
         COMMIT;
         PRAGMA journal_mode = WAL;",
        APPLICATION_ID as i32
    ))
    .map_err(|e| e.to_string())?;
    conn.close().map_err(|(_, e)| e.to_string())?;
    // The WAL was checkpointed and removed by the close: the main file
    // is the whole database.
    File::open(tmp).and_then(|f| f.sync_all()).map_err(|e| e.to_string())?;
    Ok(())
}

/// Creates a new, empty ledger at `path` atomically (see the module
/// documentation). Returns `Ok(false)` without touching anything if a file
/// appeared at `path` meanwhile (another process created it).
fn create(path: &Path) -> Result<bool> {
    let name = path.file_name().ok_or_else(|| Error::Input(format!("ledger {}: not a file name", path.display())))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.{nanos}.tmp", std::process::id()));
    let tmp = dir.join(tmp_name);
    let cannot = |e: String| Error::Input(format!("ledger {}: cannot create it: {e}", path.display()));
    OpenOptions::new().write(true).create_new(true).open(&tmp).map_err(|e| cannot(e.to_string()))?;
    let built = build(&tmp);
    if let Err(e) = built {
        remove_temporary(&tmp);
        return Err(cannot(e));
    }
    // Link into place without replacing anything that appeared meanwhile.
    let placed = match std::fs::hard_link(&tmp, path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        // A file system without hard links: rename, if the name is still free.
        Err(_) if !path.exists() => std::fs::rename(&tmp, path).map(|()| true),
        Err(e) => Err(e),
    };
    remove_temporary(&tmp);
    let placed = placed.map_err(|e| cannot(e.to_string()))?;
    if placed {
        sync_dir(&dir).map_err(|e| cannot(format!("fsync of its directory: {e}")))?;
    }
    Ok(placed)
}

/// Opens the ledger at `path` for reading and writing, creating it if no
/// file is there; refuses (writing nothing) a file that is not a ledger.
pub(super) fn open_read_write(path: &Path) -> Result<Connection> {
    match std::fs::symlink_metadata(path) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            create(path)?;
        }
        Err(e) => return Err(io("cannot open", path, e)),
    }
    let kind = classify(path)?;
    if kind == Kind::Unmarked {
        check_unmarked(path)?;
    }
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|e| db(e, path))?;
    conn.busy_timeout(super::BUSY_TIMEOUT).map_err(|e| db(e, path))?;
    // Connection settings only: nothing is written by these.
    conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;").map_err(|e| db(e, path))?;
    check_schema(&conn, path)?;
    // Now known to be a ledger: bring it to the current form.
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).map_err(|e| db(e, path))?;
    if !mode.eq_ignore_ascii_case("wal") {
        conn.execute_batch("PRAGMA journal_mode = WAL;").map_err(|e| db(e, path))?;
    }
    if kind == Kind::Unmarked {
        conn.execute_batch(&format!(
            "BEGIN IMMEDIATE; PRAGMA application_id = {}; PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;",
            APPLICATION_ID as i32
        ))
        .map_err(|e| db(e, path))?;
    }
    Ok(conn)
}

/// Opens the existing ledger at `path` without writing to it or needing
/// write access to it or its directory; refuses a file that is not a
/// ledger.
pub(super) fn open_read_only(path: &Path) -> Result<Connection> {
    match std::fs::symlink_metadata(path) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::Input(format!("no ledger at {} (create one with gpdp ledger init)", path.display())));
        }
        Err(e) => return Err(io("cannot open", path, e)),
    }
    if classify(path)? == Kind::Unmarked {
        check_unmarked(path)?;
    }
    let wal = sidecar(path, "-wal");
    let conn = if wal.exists() {
        // Another connection is open (or one ended uncleanly): read through
        // SQLite's locks and the write-ahead log, which needs the WAL index
        // (`-shm`) to exist or be creatable.
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        Connection::open_with_flags(path, flags)
            .and_then(|c| {
                c.busy_timeout(super::BUSY_TIMEOUT)?;
                c.execute_batch("PRAGMA query_only = ON;")?;
                // A WAL database is only really opened at the first read.
                c.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0))?;
                Ok(c)
            })
            .map_err(|e| {
                Error::Input(format!(
                    "ledger {}: cannot read it read-only while it has a write-ahead log ({}): {e}; a gpdp process may be using it — retry, or open it once with write access",
                    path.display(),
                    wal.display()
                ))
            })?
    } else {
        // No connection is open (the last one to close checkpoints the log
        // into the file and removes it): the file is the whole database.
        // Read it as immutable, which creates no `-wal`/`-shm` files and so
        // needs no write access to the directory.
        open_immutable(path)?
    };
    check_schema(&conn, path)?;
    Ok(conn)
}
