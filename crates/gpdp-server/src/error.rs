//! The server's errors, each with its HTTP status.

use axum::http::StatusCode;

/// An error of the service; `status()` is what the client sees.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("configuration: {0}")]
    Config(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    TooLarge(String),
    #[error("{0}")]
    RateLimited(String),
    #[error("{0}")]
    Unavailable(String),
    /// The server-wide state-memory cap (`max_state_bytes`) would be exceeded.
    #[error("{0}")]
    InsufficientStorage(String),
    /// The request's body did not arrive within `body_read_timeout_secs`.
    #[error("{0}")]
    Timeout(String),
    #[error("storage: {0}")]
    Store(String),
    #[error(transparent)]
    Library(#[from] gpdp::Error),
}

impl ServerError {
    pub fn status(&self) -> StatusCode {
        use gpdp::Error as E;
        match self {
            ServerError::Config(_) | ServerError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ServerError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ServerError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ServerError::NotFound(_) => StatusCode::NOT_FOUND,
            ServerError::Conflict(_) => StatusCode::CONFLICT,
            ServerError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ServerError::RateLimited(_) => StatusCode::TOO_MANY_REQUESTS,
            ServerError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ServerError::InsufficientStorage(_) => StatusCode::INSUFFICIENT_STORAGE,
            ServerError::Timeout(_) => StatusCode::REQUEST_TIMEOUT,
            ServerError::Library(e) => match e {
                E::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
                // A missing or inconsistent spec key: the request is malformed.
                E::Spec { .. } => StatusCode::BAD_REQUEST,
                E::BudgetExceeded(_) => StatusCode::FORBIDDEN,
                E::Factorisation { .. } | E::Entropy(_) => StatusCode::INTERNAL_SERVER_ERROR,
                _ => StatusCode::UNPROCESSABLE_ENTITY,
            },
        }
    }
}

pub fn store_err(e: rusqlite::Error) -> ServerError {
    ServerError::Store(e.to_string())
}
