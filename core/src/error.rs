//! The core's one error type.

use serde::{Deserialize, Serialize};
use std::fmt;

mod model;

pub use model::ModelError;

/// Everything that can go wrong in the core, with enough context to tell the user what to do.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// SQLite refused an operation; `context` says what we were doing.
    Sqlite {
        /// What we were doing, e.g. "saving turn 3 of session …".
        context: String,
        /// SQLite's error.
        source: SqliteError,
    },
    /// The archive was written by a newer version of Cowork; nothing was touched.
    SchemaTooNew {
        /// The archive's schema version.
        found: i64,
        /// The newest schema version this build can open.
        supported: i64,
    },
    /// No session with this id.
    SessionNotFound(String),
    /// The caller asked for something the data does not allow (e.g. forking past the last turn).
    Invalid(String),
    /// An import file is malformed; nothing was imported.
    Import {
        /// The 1-based line of the file that is wrong.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// JSON that should have been valid was not.
    Json {
        /// What we were reading or decoding.
        context: String,
        /// The parser's error.
        source: serde_json::Error,
    },
    /// Context assembly could not fit the mandatory parts into the window.
    ContextOverflow {
        /// Estimated tokens of the mandatory parts.
        needed: i64,
        /// The budget: context window − output reserve, in tokens.
        available: i64,
    },
    /// The storage backend is unavailable (e.g. OPFS missing or locked).
    Storage(String),
    /// The model endpoint refused or failed; the message says what to do. The user's message is saved.
    Model(ModelError),
    /// An archive's `PRAGMA user_version` is negative: no version of Cowork writes that; nothing was
    /// touched.
    SchemaInvalid {
        /// The negative version found.
        found: i64,
    },
    /// An attachment is larger than the configured limit; nothing was saved.
    AttachmentTooLarge {
        /// The file's name (as shown, see [`crate::attachment::display_name`]).
        name: String,
        /// Its size in bytes.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
}

/// What kind of failure an [`Error`] is, for callers that choose a remedy (the UI offers Settings for
/// a rejected API key and Storage for a full quota) without reading the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The model endpoint rejected the API key (401/403).
    Auth,
    /// The endpoint rate-limited us past the retries.
    RateLimited,
    /// The account behind the API key has no quota or credit left.
    Quota,
    /// The endpoint failed on its side (5xx) past the retries.
    ModelServer,
    /// The endpoint refused the request itself (a wrong model name or base URL, a context too long).
    BadRequest,
    /// The endpoint could not be reached.
    Network,
    /// The browser blocked the endpoint's answer: it does not allow this page's origin.
    Cors,
    /// The reply stream was malformed or carried the provider's error.
    BadReply,
    /// The mandatory parts of a request do not fit the context window.
    ContextOverflow,
    /// The browser's storage for the site is full.
    StorageFull,
    /// SQLite or the storage backend failed.
    Storage,
    /// The archive's schema version is one this version of Cowork cannot open.
    Schema,
    /// No such session.
    NotFound,
    /// The request asked for something the data does not allow.
    Invalid,
    /// An import file is malformed.
    Import,
    /// Stored or received JSON was not what it should be.
    Internal,
    /// An attachment is larger than the configured limit.
    AttachmentTooLarge,
}

/// The SQLite error type of the build (rusqlite's), or a unit when the store is compiled out.
#[cfg(feature = "store")]
pub type SqliteError = rusqlite::Error;
/// The SQLite error type of the build: uninhabited, since the store is compiled out.
#[cfg(not(feature = "store"))]
pub type SqliteError = std::convert::Infallible;

/// The core's result type: `E` defaults to the core's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// What kind of failure this is (see [`ErrorKind`]).
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Sqlite { .. } if self.is_storage_full() => ErrorKind::StorageFull,
            Error::Sqlite { .. } | Error::Storage(_) => ErrorKind::Storage,
            Error::SchemaTooNew { .. } | Error::SchemaInvalid { .. } => ErrorKind::Schema,
            Error::SessionNotFound(_) => ErrorKind::NotFound,
            Error::Invalid(_) => ErrorKind::Invalid,
            Error::Import { .. } => ErrorKind::Import,
            Error::Json { .. } => ErrorKind::Internal,
            Error::ContextOverflow { .. } => ErrorKind::ContextOverflow,
            Error::Model(e) => e.kind(),
            Error::AttachmentTooLarge { .. } => ErrorKind::AttachmentTooLarge,
        }
    }

    /// Whether the storage quota (or the disk) is exhausted: SQLite's `SQLITE_FULL`.
    pub fn is_storage_full(&self) -> bool {
        #[cfg(feature = "store")]
        if let Error::Sqlite { source: rusqlite::Error::SqliteFailure(e, _), .. } = self {
            return e.code == rusqlite::ErrorCode::DiskFull;
        }
        false
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Sqlite { context, .. } if self.is_storage_full() => write!(
                f,
                "{context}: the browser's storage for this site is full. Nothing saved earlier is affected; \
                 free space (export and delete old sessions, or clear other data of this site) and try again"
            ),
            Error::Sqlite { context, source } => write!(f, "{context}: {source}"),
            Error::SchemaTooNew { found, supported } => write!(
                f,
                "this archive uses schema version {found}, but this version of Cowork only knows up to \
                 {supported}; update Cowork to open it (the archive was not changed)"
            ),
            Error::SessionNotFound(id) => write!(f, "no session with id {id}"),
            Error::Invalid(msg) => f.write_str(msg),
            Error::Import { line, message } => {
                write!(f, "import failed at line {line}: {message} (nothing was imported)")
            }
            Error::Json { context, source } => write!(f, "{context}: {source}"),
            Error::ContextOverflow { needed, available } => write!(
                f,
                "the message does not fit the context window: the system prompt, session state and your \
                 message need about {needed} tokens but only {available} are available; shorten the message \
                 or raise the context window in Settings (your message is saved)"
            ),
            Error::Storage(msg) => write!(f, "storage unavailable: {msg}"),
            Error::SchemaInvalid { found } => write!(
                f,
                "this archive reports schema version {found}, which no version of Cowork writes; it was not \
                 changed"
            ),
            Error::Model(e) => write!(f, "{e}"),
            Error::AttachmentTooLarge { name, size, limit } => write!(
                f,
                "{name} is {} and cannot be attached: the limit is {} per file (Settings → Largest attachment changes it); \
                 nothing was sent",
                crate::size::format_size(*size as i64),
                crate::size::format_size(*limit as i64)
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            #[cfg(feature = "store")]
            Error::Sqlite { source, .. } => Some(source),
            Error::Json { source, .. } => Some(source),
            Error::Model(source) => Some(source),
            _ => None,
        }
    }
}

/// Adds "what we were doing" to lower-level errors: `stmt.execute(..).context("appending a turn")?`.
pub trait Context<T> {
    /// Wraps the error, if any, in an [`Error`] whose message starts with `what`.
    fn context(self, what: impl Into<String>) -> Result<T>;
}

#[cfg(feature = "store")]
impl<T> Context<T> for std::result::Result<T, rusqlite::Error> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|source| Error::Sqlite { context: what.into(), source })
    }
}

impl<T> Context<T> for std::result::Result<T, serde_json::Error> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|source| Error::Json { context: what.into(), source })
    }
}

#[cfg(all(test, feature = "store"))]
mod tests;
