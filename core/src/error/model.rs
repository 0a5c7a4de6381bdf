//! [`ModelError`]: why a request to the model endpoint failed before a reply streamed. The wire formats
//! (`provider`) classify failures into it; it lives with the core's error type, which carries it.

use std::fmt;

use super::{Error, ErrorKind};

/// Why a request to the model endpoint failed before any reply streamed. `message` says what happened
/// and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelError {
    /// 401/403: the key is missing, wrong or not allowed. Never retried.
    Auth {
        /// What happened and what to do, for the user.
        message: String,
    },
    /// 429: too many requests; `retry_after_secs` from the `Retry-After` header, when it had one.
    RateLimited {
        /// Seconds the endpoint asked us to wait; `None` when it did not say.
        retry_after_secs: Option<u64>,
        /// What happened and what to do, for the user.
        message: String,
    },
    /// The account has no quota or credit left (429 `insufficient_quota`, 402, "credit balance too low").
    /// Never retried.
    Quota {
        /// What happened and what to do, for the user.
        message: String,
    },
    /// 5xx (and 408): a failure on the endpoint's side; retried with backoff.
    Server {
        /// The HTTP status the endpoint answered.
        status: u16,
        /// What happened and what to do, for the user.
        message: String,
    },
    /// Other 4xx: the request itself is wrong (model name, base URL, context too long). Never retried.
    BadRequest {
        /// The HTTP status the endpoint answered.
        status: u16,
        /// What happened and what to do, with the endpoint's own error message when it sent one.
        message: String,
    },
    /// The endpoint could not be reached (offline, DNS, refused, reset). Retried with backoff.
    Network {
        /// What happened and what to do, for the user.
        message: String,
    },
    /// The browser blocked the response because the endpoint does not allow this page's origin. Never
    /// retried: the endpoint's configuration must change.
    Cors {
        /// What happened and what to do, for the user.
        message: String,
    },
    /// The reply stream was malformed or carried the provider's own error (the partial reply is saved).
    BadReply {
        /// What was wrong with the reply.
        message: String,
    },
}

impl ModelError {
    /// What happened and what to do, as shown to the user (every variant carries one).
    pub fn message(&self) -> &str {
        match self {
            ModelError::Auth { message }
            | ModelError::RateLimited { message, .. }
            | ModelError::Quota { message }
            | ModelError::Server { message, .. }
            | ModelError::BadRequest { message, .. }
            | ModelError::Network { message }
            | ModelError::Cors { message }
            | ModelError::BadReply { message } => message,
        }
    }

    /// The [`ErrorKind`] of this failure.
    pub fn kind(&self) -> ErrorKind {
        use ErrorKind as K;
        match self {
            ModelError::Auth { .. } => K::Auth,
            ModelError::RateLimited { .. } => K::RateLimited,
            ModelError::Quota { .. } => K::Quota,
            ModelError::Server { .. } => K::ModelServer,
            ModelError::BadRequest { .. } => K::BadRequest,
            ModelError::Network { .. } => K::Network,
            ModelError::Cors { .. } => K::Cors,
            ModelError::BadReply { .. } => K::BadReply,
        }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for ModelError {}

impl From<ModelError> for Error {
    fn from(e: ModelError) -> Error {
        Error::Model(e)
    }
}
