//! `server.toml`: where the server listens, keeps its state and ledger,
//! its admin token, and its limits.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::ServerError;

/// The server's configuration (every field but `state` has a default).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Listen address; loopback by default (`127.0.0.1:8080`). Exposing the
    /// service beyond the machine is a deliberate choice of the operator.
    #[serde(default = "default_bind")]
    pub bind: SocketAddr,
    /// The durable store (SQLite, WAL): releases and every revealed value.
    pub state: PathBuf,
    /// The privacy-budget ledger (the CLI's `--ledger` file); releases name
    /// their dataset's budget in it. Without it, releases are refused unless
    /// `allow_without_ledger` is set.
    #[serde(default)]
    pub ledger: Option<PathBuf>,
    /// Allow releases without a ledger (their guarantees are then not
    /// composed with any other release of the same data).
    #[serde(default)]
    pub allow_without_ledger: bool,
    /// The folder every release's `data` file must lie in (after resolving
    /// `..` and symbolic links); a request naming a file elsewhere is
    /// refused before it is read. Default: the configuration file's folder.
    #[serde(default)]
    pub data_dir: Option<PathBuf>,
    /// The admin bearer token, or (better) the name of the environment
    /// variable holding it (`admin_token_env`, default `GPDP_ADMIN_TOKEN`).
    #[serde(default)]
    pub admin_token: Option<String>,
    #[serde(default = "default_token_env")]
    pub admin_token_env: String,
    /// Most points in one evaluation request.
    #[serde(default = "default_max_batch")]
    pub max_batch: usize,
    /// Largest request body in bytes.
    #[serde(default = "default_max_body")]
    pub max_body_bytes: usize,
    /// Most distinct points one path may reveal. A path holds the Cholesky
    /// factor of its revealed set: 8·N² bytes (16·N² while it grows), so
    /// N = 6000 needs ≈ 0.6 GB per path at the cap.
    #[serde(default = "default_max_revealed")]
    pub max_revealed: usize,
    /// Most grid points per axis in `GET /releases/{id}/grid`.
    #[serde(default = "default_max_grid")]
    pub max_grid: usize,
    /// Requests per minute per client address (token bucket, burst = the
    /// same number); 0 disables the limit.
    #[serde(default = "default_rate")]
    pub rate_limit_per_minute: u32,
    /// Server-wide cap on the memory of the releases' state, in bytes: each
    /// active release's posterior factor (8·n²) and its paths' factors
    /// (8·N² for N revealed), plus the workspace of the batches being
    /// evaluated. A creation or a batch that would exceed it is refused
    /// (507) before anything is allocated.
    #[serde(default = "default_max_state")]
    pub max_state_bytes: u64,
    /// Of `max_state_bytes`, the bytes anonymous evaluation requests may
    /// not take: kept for the admin's release creations, so that public
    /// load cannot make a creation fail (507). Default: a quarter of the
    /// cap; 0 shares the whole cap.
    #[serde(default)]
    pub admin_reserved_bytes: Option<u64>,
    /// Open connections at most; a connection beyond the limit is answered
    /// 503 at once and closed (it is not queued).
    #[serde(default = "default_max_connections")]
    pub max_connections: usize,
    /// Open connections at most from one client address (503 beyond).
    #[serde(default = "default_max_connections_per_client")]
    pub max_connections_per_client: usize,
    /// Seconds a client has to send a request's complete header (from the
    /// moment the connection opens or its previous answer was sent, so an
    /// idle keep-alive connection is closed after this long too).
    #[serde(default = "default_header_timeout")]
    pub header_read_timeout_secs: u64,
    /// Seconds a client has to send a request's complete body once its
    /// header has arrived (408 and the connection closed after that).
    #[serde(default = "default_body_timeout")]
    pub body_read_timeout_secs: u64,
    /// How the posterior is solved: `per_record` (default: over the n
    /// records as they are, so that the time and memory of creating and
    /// evaluating a release depend only on public quantities) or
    /// `distinct` (over the distinct covariates: faster with many repeated
    /// covariates, but every client can time how many there are).
    #[serde(default)]
    pub posterior_system: SystemChoice,
}

/// The `posterior_system` key (see [`gpdp::PosteriorSystem`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SystemChoice {
    #[default]
    PerRecord,
    Distinct,
}

impl SystemChoice {
    /// The library's choice.
    pub fn system(self) -> gpdp::PosteriorSystem {
        match self {
            SystemChoice::PerRecord => gpdp::PosteriorSystem::PerRecord,
            SystemChoice::Distinct => gpdp::PosteriorSystem::Distinct,
        }
    }
}

fn default_bind() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8080))
}
fn default_token_env() -> String {
    "GPDP_ADMIN_TOKEN".into()
}
fn default_max_batch() -> usize {
    1000
}
fn default_max_body() -> usize {
    1 << 20
}
fn default_max_revealed() -> usize {
    6000
}
fn default_max_grid() -> usize {
    64
}
fn default_rate() -> u32 {
    6000
}
fn default_max_state() -> u64 {
    4 << 30
}
fn default_max_connections() -> usize {
    256
}
fn default_max_connections_per_client() -> usize {
    32
}
fn default_header_timeout() -> u64 {
    10
}
fn default_body_timeout() -> u64 {
    30
}

/// The folder of a configuration file: its parent, or "." for a bare file
/// name such as `server.toml` (whose parent is the empty path, which the
/// file system cannot open).
fn folder_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

impl Config {
    /// Reads and checks `path`; relative paths in it are relative to its folder.
    pub fn load(path: &Path) -> Result<Config, ServerError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| ServerError::Config(format!("{}: {e}", path.display())))?;
        let mut c: Config =
            toml::from_str(&text).map_err(|e| ServerError::Config(format!("{}: {e}", path.display())))?;
        let base = folder_of(path);
        c.state = base.join(&c.state);
        c.data_dir = Some(match &c.data_dir {
            Some(d) => base.join(d),
            None => base.to_path_buf(),
        });
        c.ledger = c.ledger.map(|l| base.join(l));
        for (name, v) in [
            ("max_batch", c.max_batch),
            ("max_body_bytes", c.max_body_bytes),
            ("max_revealed", c.max_revealed),
            ("max_grid", c.max_grid),
            ("max_connections", c.max_connections),
            ("max_connections_per_client", c.max_connections_per_client),
            ("header_read_timeout_secs", c.header_read_timeout_secs as usize),
            ("body_read_timeout_secs", c.body_read_timeout_secs as usize),
            ("max_state_bytes", c.max_state_bytes.min(usize::MAX as u64) as usize),
        ] {
            if v == 0 {
                return Err(ServerError::Config(format!("{}: {name} must be ≥ 1", path.display())));
            }
        }
        for (name, v) in [
            ("header_read_timeout_secs", c.header_read_timeout_secs),
            ("body_read_timeout_secs", c.body_read_timeout_secs),
        ] {
            if v > 86_400 {
                return Err(ServerError::Config(format!("{}: {name} must be at most 86400 (one day)", path.display())));
            }
        }
        if c.admin_reserved_bytes.is_some_and(|r| r > c.max_state_bytes) {
            return Err(ServerError::Config(format!(
                "{}: admin_reserved_bytes ({}) must be at most max_state_bytes ({})",
                path.display(),
                c.admin_reserved_bytes.unwrap_or(0),
                c.max_state_bytes
            )));
        }
        if c.max_grid < 2 {
            return Err(ServerError::Config(format!("{}: max_grid must be ≥ 2", path.display())));
        }
        Ok(c)
    }

    /// The bytes of the state cap kept for admin creations
    /// (`admin_reserved_bytes`, default a quarter of `max_state_bytes`).
    pub fn admin_reserve(&self) -> u64 {
        self.admin_reserved_bytes.unwrap_or(self.max_state_bytes / 4).min(self.max_state_bytes)
    }

    /// The admin token: `admin_token`, else the environment variable; None
    /// disables the admin endpoints.
    pub fn token(&self) -> Option<String> {
        self.admin_token.clone().or_else(|| std::env::var(&self.admin_token_env).ok()).filter(|t| !t.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `gpdp serve --config server.toml` (a bare name) resolves its paths,
    /// and the default data_dir, against the current folder.
    #[test]
    fn a_bare_config_name_is_in_the_current_folder() {
        assert_eq!(folder_of(Path::new("server.toml")), Path::new("."));
        assert_eq!(folder_of(Path::new("etc/server.toml")), Path::new("etc"));
        assert_eq!(folder_of(Path::new("/srv/gpdp/server.toml")), Path::new("/srv/gpdp"));
        assert!(std::fs::canonicalize(folder_of(Path::new("server.toml"))).is_ok());
    }
}
