//! Connections: the accept loop with its limits and timeouts.
//!
//! - At most `max_connections` open connections, and at most
//!   `max_connections_per_client` from one address. A connection beyond
//!   either limit is not queued: it is answered `503` with a JSON error at
//!   once (its request is not read) and closed.
//! - Every connection must send a complete request header within
//!   `header_read_timeout_secs` of opening, and of each answer (so an idle
//!   keep-alive connection is closed after that long too); a client that
//!   sends half a header is disconnected then.
//! - The body's own timeout and size limit are in [`crate::api`].

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

/// How long a refused connection is drained (its request read and
/// discarded) after the 503, so that the client sees the answer rather
/// than a reset.
const DRAIN: Duration = Duration::from_millis(500);

/// Open connections, in total and per client address.
#[derive(Debug)]
struct Counts {
    total: usize,
    per_client: HashMap<IpAddr, usize>,
    /// Refused connections being drained.
    draining: usize,
}

/// The connection limits; [`Slot`]s are given back when dropped.
#[derive(Debug, Clone)]
pub struct Limits {
    max_total: usize,
    max_per_client: usize,
    counts: Arc<Mutex<Counts>>,
}

/// One admitted connection.
#[derive(Debug)]
pub struct Slot {
    ip: IpAddr,
    counts: Arc<Mutex<Counts>>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut c) = self.counts.lock() {
            c.total -= 1;
            if let Some(k) = c.per_client.get_mut(&self.ip) {
                *k -= 1;
                if *k == 0 {
                    c.per_client.remove(&self.ip);
                }
            }
        }
    }
}

impl Limits {
    pub fn new(max_total: usize, max_per_client: usize) -> Limits {
        Limits {
            max_total,
            max_per_client,
            counts: Arc::new(Mutex::new(Counts { total: 0, per_client: HashMap::new(), draining: 0 })),
        }
    }

    /// A slot for a connection from `ip`, or why not (the body of the 503).
    pub fn admit(&self, ip: IpAddr) -> Result<Slot, String> {
        let mut c = self.counts.lock().map_err(|_| "the connection counter was poisoned".to_string())?;
        if c.total >= self.max_total {
            return Err(format!(
                "too many open connections: the server allows {} (max_connections); try again later",
                self.max_total
            ));
        }
        let mine = c.per_client.get(&ip).copied().unwrap_or(0);
        if mine >= self.max_per_client {
            return Err(format!(
                "too many open connections from this client: at most {} (max_connections_per_client); try again later",
                self.max_per_client
            ));
        }
        c.total += 1;
        *c.per_client.entry(ip).or_insert(0) += 1;
        Ok(Slot { ip, counts: self.counts.clone() })
    }

    /// Whether another refused connection may be drained (at most as many
    /// as `max_connections`; beyond that they are closed at once).
    fn start_draining(&self) -> bool {
        match self.counts.lock() {
            Ok(mut c) if c.draining < self.max_total => {
                c.draining += 1;
                true
            }
            _ => false,
        }
    }

    fn stop_draining(&self) {
        if let Ok(mut c) = self.counts.lock() {
            c.draining -= 1;
        }
    }
}

/// The complete `503` answer to a refused connection.
fn refusal(why: &str) -> Vec<u8> {
    let body = serde_json::json!({ "error": why }).to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\nretry-after: 1\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Answers a refused connection 503 and closes it (after reading, for at
/// most [`DRAIN`], whatever it sent).
async fn refuse(mut stream: TcpStream, why: String, limits: Limits) {
    let _ = tokio::time::timeout(DRAIN, stream.write_all(&refusal(&why))).await;
    let _ = stream.shutdown().await;
    if limits.start_draining() {
        let mut buf = [0u8; 4096];
        let _ = tokio::time::timeout(DRAIN, async {
            let mut read = 0usize;
            while read < 1 << 16 {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(k) => read += k,
                }
            }
        })
        .await;
        limits.stop_draining();
    }
}

/// Serves `router` on `listener` until `shutdown` completes, then lets
/// the open connections finish their requests.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    header_timeout: Duration,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // E.g. out of file descriptors: wait a little, go on.
                    eprintln!("gpdp serve: accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let slot = match limits.admit(peer.ip()) {
            Ok(s) => s,
            Err(why) => {
                tokio::spawn(refuse(stream, why, limits.clone()));
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone().map_request(move |mut req: hyper::Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            req
        }));
        let mut stop = stop_rx.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(header_timeout).keep_alive(true);
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => return,
                _ = stop.changed() => conn.as_mut().graceful_shutdown(),
            }
            let _ = conn.await;
        });
    }
    drop(stop_rx);
    let _ = stop_tx.send(true);
    // Every connection task holds a receiver: wait until all have ended.
    stop_tx.closed().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_limited_in_total_and_per_client_and_given_back() {
        let l = Limits::new(3, 2);
        let (a, b) = (IpAddr::from([10, 0, 0, 1]), IpAddr::from([10, 0, 0, 2]));
        let s1 = l.admit(a).unwrap();
        let _s2 = l.admit(a).unwrap();
        assert!(l.admit(a).unwrap_err().contains("max_connections_per_client"));
        let _s3 = l.admit(b).unwrap();
        assert!(l.admit(b).unwrap_err().contains("(max_connections)"));
        drop(s1);
        let _s4 = l.admit(b).unwrap();
        assert_eq!(l.counts.lock().unwrap().total, 3);
    }

    #[test]
    fn the_refusal_is_a_complete_json_answer() {
        let r = String::from_utf8(refusal("too many")).unwrap();
        let (head, body) = r.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 503 "));
        assert!(head.contains(&format!("content-length: {}", body.len())));
        assert_eq!(serde_json::from_str::<serde_json::Value>(body).unwrap()["error"], "too many");
    }
}
