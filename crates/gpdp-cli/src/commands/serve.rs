//! `gpdp serve`: the released paths as an HTTP/JSON service (crates/gpdp-server).

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

#[derive(Args, Debug)]
#[command(
    long_about = "Serve released posterior sample paths over HTTP/JSON: clients evaluate a path anywhere, lazily — each answer is exact conditional on everything the path revealed before, so the whole sequence is one draw and costs no extra privacy budget. Every revealed value is committed to the state file (SQLite) before it is returned; after a restart (even kill -9) old points are answered identically. Admin endpoints (create, retire) need the bearer token; a release is recorded in the ledger before its first value is served. A web map viewer is at /. See docs/serve.md.",
    after_help = "Example server.toml:\n  bind = \"127.0.0.1:8080\"\n  state = \"serve-state.sqlite\"\n  ledger = \"budget.sqlite\"\n  # admin token from $GPDP_ADMIN_TOKEN (or admin_token = \"…\")\n  max_batch = 1000\n  max_revealed = 6000\n  rate_limit_per_minute = 6000\n\n  GPDP_ADMIN_TOKEN=secret gpdp serve --config server.toml"
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
