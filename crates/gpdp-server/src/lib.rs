//! `gpdp serve`: released Gaussian-process sample paths as an HTTP/JSON
//! service — lazy, consistent and durable evaluation of each released path,
//! a privacy-budget ledger, and a web map viewer (docs/serve.md).
//!
//! [`service`] holds the logic (no HTTP), [`store`] the durable state,
//! [`api`] the routes, [`openapi`] the API document, [`web`] the page.

pub mod api;
pub mod config;
pub mod error;
pub mod memory;
pub mod net;
pub mod openapi;
pub mod service;
pub mod spec;
pub mod store;
pub mod web;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

pub use config::Config;
pub use error::ServerError;

/// Runs the server with the configuration at `config` until interrupted
/// (Ctrl-C / SIGTERM). Prints the address it listens on (first line of
/// stdout: `listening on http://ADDR`), so that a port of 0 can be used.
pub fn serve(config: &Path, bind: Option<SocketAddr>) -> Result<(), ServerError> {
    let mut cfg = Config::load(config)?;
    if let Some(b) = bind {
        cfg.bind = b;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| ServerError::Config(format!("starting the runtime: {e}")))?;
    let limits = net::Limits::new(cfg.max_connections, cfg.max_connections_per_client);
    let header_timeout = std::time::Duration::from_secs(cfg.header_read_timeout_secs);
    rt.block_on(async move {
        let bind = cfg.bind;
        let svc = tokio::task::spawn_blocking(move || service::Service::open(cfg))
            .await
            .map_err(|e| ServerError::Store(e.to_string()))??;
        let app = Arc::new(api::App::new(svc));
        let listener = tokio::net::TcpListener::bind(bind)
            .await
            .map_err(|e| ServerError::Config(format!("binding {bind}: {e}")))?;
        let addr = listener.local_addr().map_err(|e| ServerError::Config(e.to_string()))?;
        println!("listening on http://{addr}");
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let router = api::router(app);
        net::serve(listener, router, limits, header_timeout, shutdown_signal()).await;
        Ok(())
    })
}

/// Completes on Ctrl-C (SIGINT) or, on Unix, SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = term => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
