//! `gpdp serve`: released Gaussian-process sample paths as an HTTP/JSON
//! service — lazy, consistent and durable evaluation of each released path,
//! a privacy-budget ledger, and a web map viewer (docs/serve.md).
//!
//! [`service`] holds the logic (no HTTP), [`store`] the durable state,
//! [`api`] the routes, [`openapi`] the API document, [`web`] the page.
//! [`serve`] runs the server in the foreground (`gpdp serve`); [`start`]
//! runs it in the background of this process (embedding, tests).

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
    let rt = runtime()?;
    rt.block_on(async move {
        let ready = open(cfg).await?;
        println!("listening on http://{}", ready.addr);
        use std::io::Write;
        let _ = std::io::stdout().flush();
        ready.run(shutdown_signal()).await;
        Ok(())
    })
}

/// A server started in this process by [`start`]. It listens on
/// [`Running::addr`] until [`Running::stop`] is called or it is dropped;
/// either way it stops accepting connections, lets the open ones finish
/// their requests (as `gpdp serve` does on a signal) and waits for that.
#[derive(Debug)]
pub struct Running {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Running {
    /// The address it listens on (the port chosen when `bind` had port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the server and waits until it has stopped.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.halt();
    }
}

/// Starts the server for `cfg` in this process, in the background: a
/// thread of its own with its own runtime. Returns once the store is open
/// and `cfg.bind` is bound (with port 0 the system picks a free port: see
/// [`Running::addr`]), so that the server is ready for requests; an error
/// opening the store or binding is returned here. The same server as
/// [`serve`] (`gpdp serve`), which runs in the foreground until a signal;
/// this is how a program, or a test, embeds it. Call it from outside any
/// async runtime (it runs one of its own).
pub fn start(cfg: Config) -> Result<Running, ServerError> {
    let rt = runtime()?;
    let ready = rt.block_on(open(cfg))?;
    let addr = ready.addr;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name(format!("gpdp-server {addr}"))
        .spawn(move || {
            rt.block_on(ready.run(async move {
                // A dropped sender stops the server too.
                let _ = stopped.await;
            }))
        })
        .map_err(|e| ServerError::Config(format!("starting the server's thread: {e}")))?;
    Ok(Running { addr, stop: Some(stop), thread: Some(thread) })
}

fn runtime() -> Result<tokio::runtime::Runtime, ServerError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| ServerError::Config(format!("starting the runtime: {e}")))
}

/// A server whose store is open and whose socket is bound, not yet serving.
struct Ready {
    addr: SocketAddr,
    listener: tokio::net::TcpListener,
    router: axum::Router,
    limits: net::Limits,
    header_timeout: std::time::Duration,
}

/// Opens the store (on the blocking pool), then binds `cfg.bind`.
async fn open(cfg: Config) -> Result<Ready, ServerError> {
    let bind = cfg.bind;
    let limits = net::Limits::new(cfg.max_connections, cfg.max_connections_per_client);
    let header_timeout = std::time::Duration::from_secs(cfg.header_read_timeout_secs);
    let svc = tokio::task::spawn_blocking(move || service::Service::open(cfg))
        .await
        .map_err(|e| ServerError::Store(e.to_string()))??;
    let app = Arc::new(api::App::new(svc));
    let listener =
        tokio::net::TcpListener::bind(bind).await.map_err(|e| ServerError::Config(format!("binding {bind}: {e}")))?;
    let addr = listener.local_addr().map_err(|e| ServerError::Config(e.to_string()))?;
    Ok(Ready { addr, listener, router: api::router(app), limits, header_timeout })
}

impl Ready {
    /// Serves until `shutdown` completes (see [`net::serve`]).
    async fn run(self, shutdown: impl std::future::Future<Output = ()>) {
        net::serve(self.listener, self.router, self.limits, self.header_timeout, shutdown).await;
    }
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
