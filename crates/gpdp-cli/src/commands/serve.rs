//! `gpdp serve`: the released paths as an HTTP/JSON service (crates/gpdp-server).

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

#[derive(Args, Debug)]
#[command(
    long_about = "Serve released posterior sample paths over HTTP/JSON: clients evaluate a path anywhere, lazily — each answer is exact conditional on everything the path revealed before, so the whole sequence is one draw and costs no extra privacy budget. Every revealed value is committed to the state file (SQLite) before it is returned; after a restart (even kill -9) old points are answered identically. Admin endpoints (create, retire) need the bearer token; a release is recorded in the ledger before its first value is served. A web map viewer is at /. See docs/serve.md.",
    after_help = "Example server.toml (the limits shown are the defaults):\n  bind = \"127.0.0.1:8080\"\n  state = \"serve-state.sqlite\"\n  ledger = \"budget.sqlite\"\n  data_dir = \"data\"                # releases' data files must lie in it (default: this file's folder)\n  # admin token from $GPDP_ADMIN_TOKEN (or admin_token = \"…\")\n  max_batch = 1000                 # points per request (413 beyond)\n  max_body_bytes = 1048576         # body bytes; a larger Content-Length is 413 before reading\n  max_revealed = 6000              # distinct points per path (413 beyond)\n  max_grid = 64                    # grid points per axis\n  rate_limit_per_minute = 6000     # per client address (429 beyond; 0: no limit)\n  max_state_bytes = 4294967296     # memory of all releases' state together (507 beyond)\n  max_connections = 256            # open connections (503 at once beyond: refused, not queued)\n  max_connections_per_client = 32  # open connections per client address (503 beyond)\n  header_read_timeout_secs = 10    # to send a request's header; idle connections are closed too\n  body_read_timeout_secs = 30      # to send a request's body (408 beyond)\n  posterior_system = \"per_record\" # or \"distinct\": faster with repeated covariates, but the timing then reveals how many distinct covariates the data has\n\n  GPDP_ADMIN_TOKEN=secret gpdp serve --config server.toml"
)]
pub struct ServeArgs {
    /// The server's configuration (TOML): bind address, state file, ledger,
    /// token, limits (paths in it are relative to its folder).
    #[arg(long, value_name = "TOML")]
    pub config: PathBuf,

    /// Listen here instead of the configuration's `bind` (e.g.
    /// 127.0.0.1:0 for any free port; the address is printed first).
    #[arg(long, value_name = "ADDR")]
    pub bind: Option<SocketAddr>,
}

pub fn run(a: ServeArgs) -> Result<()> {
    gpdp_server::serve(&a.config, a.bind)?;
    Ok(())
}
