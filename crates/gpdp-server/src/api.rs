//! The HTTP/JSON API (axum): routes, authentication, rate limits, errors.
//!
//! Every error is `{"error": "…"}` with a 4xx/5xx status; the server keeps
//! serving after any bad request. Library calls (fitting, sampling, SQLite)
//! run on the blocking pool.
//!
//! Bodies: a request whose `Content-Length` exceeds `max_body_bytes` is
//! answered 413 before any of its body is read; a body (of any framing)
//! must arrive in full within `body_read_timeout_secs`, else 408. Both
//! answers close the connection.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::ServerError;
use crate::service::Service;

/// The application state shared by the handlers.
pub struct App {
    pub svc: Service,
    token: Option<[u8; 32]>,
    buckets: Mutex<HashMap<IpAddr, (f64, Instant)>>,
}

impl App {
    pub fn new(svc: Service) -> App {
        let token = svc.config.token().map(|t| Sha256::digest(t.as_bytes()).into());
        App { svc, token, buckets: Mutex::new(HashMap::new()) }
    }

    /// Admin requests carry `Authorization: Bearer <token>`; the comparison
    /// is of SHA-256 digests in constant time (no timing or length leak).
    fn authorise(&self, headers: &HeaderMap) -> Result<(), ServerError> {
        let Some(want) = &self.token else {
            return Err(ServerError::Unauthorized(
                "admin endpoints are disabled: no admin token is configured (admin_token or its environment variable)"
                    .into(),
            ));
        };
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or_else(|| ServerError::Unauthorized("missing bearer token (Authorization: Bearer …)".into()))?;
        let digest: [u8; 32] = Sha256::digest(given.as_bytes()).into();
        if bool::from(digest.ct_eq(want)) { Ok(()) } else { Err(ServerError::Unauthorized("wrong token".into())) }
    }

    /// Token bucket per client address: `rate_limit_per_minute` tokens,
    /// refilled continuously.
    fn admit(&self, ip: IpAddr) -> Result<(), ServerError> {
        let rate = self.svc.config.rate_limit_per_minute as f64;
        if rate == 0.0 {
            return Ok(());
        }
        let mut b = self.buckets.lock().map_err(|_| ServerError::Store("rate limiter poisoned".into()))?;
        let now = Instant::now();
        if b.len() > 100_000 {
            b.retain(|_, (_, t)| now.duration_since(*t).as_secs() < 120);
        }
        let (tokens, last) = b.entry(ip).or_insert((rate, now));
        *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * rate / 60.0).min(rate);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err(ServerError::RateLimited(format!("rate limit: at most {rate} requests per minute per client")))
        }
    }
}

impl IntoResponse for ServerError {
    fn into_response(self) -> Response {
        let status = self.status();
        // Library messages name release-spec keys as `key`: spell them as JSON fields.
        let message = gpdp::spec::render_keys(&self.to_string(), gpdp::spec::Spelling::Field);
        let mut r = (status, Json(json!({"error": message}))).into_response();
        if status == StatusCode::UNAUTHORIZED {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        r
    }
}

type Shared = State<Arc<App>>;

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ServerError> + Send + 'static,
) -> Result<T, ServerError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| ServerError::Store(format!("worker failed: {e}")))?
}

/// A JSON body: size-limited by the router, parsed with serde's message.
fn body<T: for<'de> Deserialize<'de>>(b: Result<Bytes, BytesRejection>) -> Result<T, ServerError> {
    let b = b.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ServerError::TooLarge(format!("request body too large ({e})"))
        } else {
            ServerError::BadRequest(format!("request body: {e}"))
        }
    })?;
    serde_json::from_slice(&b).map_err(|e| ServerError::BadRequest(format!("request body: {e}")))
}

async fn list(State(app): Shared) -> Result<Json<Value>, ServerError> {
    Ok(Json(json!({"releases": app.svc.list()?})))
}

async fn show(State(app): Shared, Path(id): Path<String>) -> Result<Json<Value>, ServerError> {
    let e = app.svc.entry(&id)?;
    Ok(Json(app.svc.describe(&e)?))
}

async fn create(
    State(app): Shared,
    headers: HeaderMap,
    b: Result<Bytes, BytesRejection>,
) -> Result<Response, ServerError> {
    app.authorise(&headers)?;
    let v: Value = body(b)?;
    let a = app.clone();
    let public = blocking(move || a.svc.create_from_value(v)).await?;
    Ok((StatusCode::CREATED, Json(public)).into_response())
}

async fn retire(State(app): Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<StatusCode, ServerError> {
    app.authorise(&headers)?;
    let a = app.clone();
    blocking(move || a.svc.retire(&id)).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EvalBody {
    points: Vec<Vec<f64>>,
    #[serde(default)]
    path: usize,
}

/// The (points, path) of a `POST /releases/{id}/eval` body, parsed as the
/// route parses it (public for the fuzz target `server_eval`).
pub fn parse_eval_body(bytes: &[u8]) -> Result<(Vec<Vec<f64>>, usize), ServerError> {
    let b: EvalBody = body(Ok(Bytes::copy_from_slice(bytes)))?;
    Ok((b.points, b.path))
}

async fn eval(
    State(app): Shared,
    Path(id): Path<String>,
    b: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ServerError> {
    let req: EvalBody = body(b)?;
    let e = app.svc.entry(&id)?;
    let pts = app.svc.check_points(&e, &req.points)?;
    let a = app.clone();
    let (values, revealed) = blocking(move || a.svc.eval(&e, req.path, &pts)).await?;
    Ok(Json(json!({"values": values, "revealed": revealed})))
}

#[derive(Deserialize)]
struct GridQuery {
    n: Option<usize>,
    nx: Option<usize>,
    ny: Option<usize>,
    #[serde(default)]
    path: usize,
}

async fn grid(
    State(app): Shared,
    Path(id): Path<String>,
    q: Result<Query<GridQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Value>, ServerError> {
    let Query(q) = q.map_err(|e| ServerError::BadRequest(format!("query: {e}")))?;
    let e = app.svc.entry(&id)?;
    let dim = e.domain.dim();
    let counts = match (q.n, q.nx, q.ny, dim) {
        (Some(n), None, None, d) => vec![n; d],
        (None, Some(nx), Some(ny), 2) => vec![nx, ny],
        (None, None, None, d) => vec![if d == 1 { 256 } else { 48 }; d],
        _ => return Err(ServerError::BadRequest("grid: give n (every axis), or nx and ny for a 2-D release".into())),
    };
    let a = app.clone();
    let v = blocking(move || a.svc.grid(&e, q.path, counts)).await?;
    Ok(Json(v))
}

async fn openapi() -> Json<Value> {
    Json(crate::openapi::document())
}

async fn index() -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], crate::web::INDEX_HTML).into_response()
}

/// One of the viewer's ES modules (`main.js`, `palette.js`, …).
fn web_module(src: &'static str) -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], src).into_response()
}

async fn not_found() -> ServerError {
    ServerError::NotFound("no such endpoint (see /openapi.json)".into())
}

async fn method_not_allowed() -> Response {
    (StatusCode::METHOD_NOT_ALLOWED, Json(json!({"error": "method not allowed for this endpoint (see /openapi.json)"})))
        .into_response()
}

async fn limit(State(app): Shared, ConnectInfo(addr): ConnectInfo<SocketAddr>, req: Request, next: Next) -> Response {
    match app.admit(addr.ip()) {
        Ok(()) => next.run(req).await,
        Err(e) => e.into_response(),
    }
}

/// `r` with `Connection: close` (its request's body may be unread).
fn closing(mut r: Response) -> Response {
    r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// Reads every request's body before routing (see the module docs): 413
/// for a declared length over the limit without reading, 413 for a body
/// that turns out longer, 408 for one that does not arrive in time.
async fn read_body(State(app): Shared, req: Request, next: Next) -> Response {
    let max = app.svc.config.max_body_bytes;
    let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok());
    if let Some(len) = declared.and_then(|v| v.trim().parse::<u64>().ok()) {
        if len > max as u64 {
            return closing(
                ServerError::TooLarge(format!(
                    "request body too large: {len} bytes announced (Content-Length); at most {max} (max_body_bytes)"
                ))
                .into_response(),
            );
        }
    }
    let secs = app.svc.config.body_read_timeout_secs;
    let (parts, body) = req.into_parts();
    let read = tokio::time::timeout(Duration::from_secs(secs), Limited::new(body, max).collect()).await;
    match read {
        Ok(Ok(collected)) => next.run(Request::from_parts(parts, Body::from(collected.to_bytes()))).await,
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => closing(
            ServerError::TooLarge(format!("request body too large: more than {max} bytes (max_body_bytes)"))
                .into_response(),
        ),
        Ok(Err(e)) => closing(ServerError::BadRequest(format!("request body: {e}")).into_response()),
        Err(_) => closing(
            ServerError::Timeout(format!(
                "request body: not received in full within {secs} s (body_read_timeout_secs)"
            ))
            .into_response(),
        ),
    }
}

/// The router over `app`.
pub fn router(app: Arc<App>) -> Router {
    let max_body = app.svc.config.max_body_bytes;
    let mut router = Router::new().route("/", get(index));
    for name in crate::web::module_names() {
        let src = crate::web::module(name).unwrap_or_default();
        router = router.route(&format!("/{name}"), get(move || async move { web_module(src) }));
    }
    router
        .route("/openapi.json", get(openapi))
        .route("/releases", get(list).post(create))
        .route("/releases/{id}", get(show).delete(retire))
        .route("/releases/{id}/eval", post(eval))
        .route("/releases/{id}/grid", get(grid))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(max_body))
        .layer(middleware::from_fn_with_state(app.clone(), read_body))
        .layer(middleware::from_fn_with_state(app.clone(), limit))
        .with_state(app)
}
