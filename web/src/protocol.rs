//! The typed protocol between the UI thread and the storage worker.
//!
//! Every request carries an id; the worker answers each with a [`WorkerMessage::Response`] of the same
//! id, and announces itself with [`WorkerMessage::Ready`] before the UI may send anything. Messages
//! travel as JSON strings.
//!
//! Failures cross as a [`Problem`] (an [`ErrorKind`] and the message), never as bare text, and a
//! reply's end as a [`SendOutcome`].
//!
//! The payloads reuse the core's plain data types (`NewTurn`, `Session`, …) rather than mirror them:
//! both ends are built from the same commit, so there is no version skew to guard against, and a
//! hand-written copy of every type would only be a place for the two to drift apart.

mod calls;
mod event;
mod files;
mod mcp;
pub mod ops;
mod semantic;
mod sync;

pub use calls::{AttachmentData, Call, Details, NextContext, Reply, Resumed, Sent};
pub use event::{Event, EVENT_CONTENT_CHARS};
pub use files::js as files_js;
pub use files::{count, thousands, FilePayload, ImportReport, SkippedConversation, SKIPPED_NAMED};
pub use mcp::McpCallee;
pub use ops::{HostOptions, HostToolSpec, Lane, Op, Outgoing};
pub use semantic::{default_model_url, model_choice, ModelChoice, SemanticPhase, SemanticState, MODEL_CHOICES};
pub use sync::{recovery_key, KeptChanges, KeptReason, SyncFailure, SyncSettings, SyncState, TeamSpace};

pub use cowork_core::provider::ModelSettings;
pub use cowork_core::ErrorKind;
use serde::{Deserialize, Serialize};

/// Why a request failed: what kind of failure it is (the UI chooses its remedy from the kind, never
/// from the words) and the message to show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// What kind of failure it is.
    pub kind: ErrorKind,
    /// What went wrong, for the user.
    pub message: String,
}

impl Problem {
    /// A failure of `kind`, saying `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Problem {
        Problem { kind, message: message.into() }
    }
}

/// The one conversion of the core's errors for the wire: their kind and their message.
impl From<cowork_core::Error> for Problem {
    fn from(e: cowork_core::Error) -> Problem {
        Problem { kind: e.kind(), message: e.to_string() }
    }
}

impl From<cowork_core::provider::ModelError> for Problem {
    fn from(e: cowork_core::provider::ModelError) -> Problem {
        Problem { kind: e.kind(), message: e.message().to_owned() }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// How a reply ([`ops::SendMessage`], [`ops::Continue`]) ended (externally tagged, as [`Op`] is).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SendOutcome {
    /// The model answered without asking for more tools.
    Done,
    /// The stream was cut or stopped; the partial reply is saved as an interrupted turn.
    Interrupted {
        /// Why, for the user ("you pressed Stop", the stream's error).
        message: String,
    },
    /// The model still wanted tools after `calls` model calls.
    IterationLimit {
        /// The model calls made (the loop's limit).
        calls: u32,
    },
    /// The tab that was running the reply closed before it ended (or the message had been saved by
    /// an owner that closed before answering): Retry continues it.
    ClosedMidReply,
    /// The message was saved while the browser was offline; no model was asked. Retry answers it.
    Offline,
}

impl SendOutcome {
    /// In words, as the embedding API's `outcome` says it: "done", "interrupted: …", "stopped after 8
    /// model calls".
    pub fn describe(&self) -> String {
        match self {
            SendOutcome::Done => "done".to_owned(),
            SendOutcome::Interrupted { message } => format!("interrupted: {message}"),
            SendOutcome::IterationLimit { calls } => format!("stopped after {calls} model calls"),
            SendOutcome::ClosedMidReply => {
                "interrupted: the tab that was running this reply closed; Retry continues it".to_owned()
            }
            SendOutcome::Offline => "saved offline: Retry answers it when the connection is back".to_owned(),
        }
    }
}

/// Where the archive lives, as the worker reports it: `{"kind": "opfs", "file": …}` or `{"kind":
/// "memory", "reason": …}` (read by hand, as one plain struct: serde's internally tagged enums buffer
/// every value and cost the wasm kilobytes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Backend {
    /// The OPFS database: data survives closing the tab.
    Opfs {
        /// The database file's name in OPFS.
        file: String,
    },
    /// OPFS could not be used; data lives only as long as the worker.
    Memory {
        /// Why OPFS was not used, for the user.
        reason: String,
    },
}

impl<'de> Deserialize<'de> for Backend {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        #[derive(Deserialize)]
        struct Fields {
            kind: String,
            #[serde(default)]
            file: Option<String>,
            #[serde(default)]
            reason: Option<String>,
        }
        let f = Fields::deserialize(deserializer)?;
        match f.kind.as_str() {
            "opfs" => Ok(Backend::Opfs { file: f.file.ok_or_else(|| D::Error::missing_field("file"))? }),
            "memory" => Ok(Backend::Memory { reason: f.reason.ok_or_else(|| D::Error::missing_field("reason"))? }),
            other => Err(D::Error::unknown_variant(other, &["opfs", "memory"])),
        }
    }
}

impl Backend {
    /// Whether the archive outlives the tab (it is in OPFS).
    pub fn is_persistent(&self) -> bool {
        matches!(self, Backend::Opfs { .. })
    }
}

/// What the worker says when it is ready to take requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadyInfo {
    /// Where the archive lives.
    pub backend: Backend,
    /// The SQLite library's version ("3.50.0").
    pub sqlite_version: String,
    /// The archive's schema version (0 if it could not be read).
    pub schema_version: i64,
}

/// A request from the UI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Chosen by the sender, unique among its requests; the response and events carry it back.
    pub id: u64,
    /// What to do.
    pub op: Op,
}

/// A message from the worker (externally tagged, like [`Reply`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerMessage {
    /// The archive is open: the UI may send requests now (sent once, first).
    Ready(ReadyInfo),
    /// The worker could not open any archive at all (sent instead of `Ready`, never after it).
    Failed(Problem),
    /// A request that could not be read, not even its id (a bug: the UI and its worker are one build).
    /// Nothing else is affected.
    Unreadable(Problem),
    /// The answer to a request (one per request, except [`Op::Release`]), paired with it in `calls.rs`.
    Response {
        /// The request's id.
        id: u64,
        /// What it returned, or why it failed.
        result: Result<Reply, Problem>,
    },
    /// Progress of a request, before its response (or a change another tab made, with id 0).
    Event {
        /// The request's id.
        id: u64,
        /// What happened.
        event: Event,
    },
}

/// A random id for a tab's worker or a message's client key (unique enough: time and 50 random bits).
pub fn random_key() -> String {
    format!("{:x}-{:x}", js_sys::Date::now() as u64, (js_sys::Math::random() * 1e15) as u64)
}

/// What the storage workers of the tabs of one origin say to each other over a `BroadcastChannel`.
///
/// One worker owns the archive (it holds the Web Lock); the others forward their tab's requests to it
/// and relay its answers, so every tab works on the same archive and none sees an error.
// A message lives only from its construction to its serialisation: its size in memory is no concern.
// Externally tagged: an internal tag would read the forwarded request a second way (see [`Op`]).
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeerMessage {
    /// A new worker asks which tab owns the archive.
    Hello {
        /// The asking worker's tab key.
        tab: String,
    },
    /// The owner announces itself (when it takes over, and in answer to `Hello`).
    Owner {
        /// The owner's tab key.
        tab: String,
        /// What the owner reported when it opened the archive.
        ready: ReadyInfo,
    },
    /// A request of `tab`'s UI, for the owner to serve.
    Forward {
        /// The tab whose UI sent it (the answer is addressed to it).
        tab: String,
        /// The request, with its UI's id.
        request: Request,
    },
    /// The owner's answer or progress event for a request of `tab`.
    Reply {
        /// The tab the answer is for.
        tab: String,
        /// The request it answers, when it is the response (not an event).
        response_to: Option<u64>,
        /// The [`WorkerMessage`] as that tab's UI should get it, as JSON: the receiving worker relays
        /// it as it is, so workers never parse what only the UI reads (its parser would be tens of
        /// kilobytes of every tab's start).
        message: String,
    },
    /// Something was saved (a turn, a session), by a request of `origin`: every other tab shows it.
    Changed {
        /// The tab whose request saved it (which shows it already).
        origin: String,
        /// The event for the other tabs' UIs: a [`WorkerMessage::Event`] with id 0, as JSON.
        message: String,
    },
}

impl PeerMessage {
    /// The owner's `message` for `tab`.
    pub fn reply(tab: &str, message: &WorkerMessage) -> PeerMessage {
        let response_to = match message {
            WorkerMessage::Response { id, .. } => Some(*id),
            _ => None,
        };
        PeerMessage::Reply { tab: tab.to_owned(), response_to, message: message.to_json() }
    }

    /// Tells the other tabs about `event`, saved by a request of `origin`.
    pub fn changed(origin: &str, event: Event) -> PeerMessage {
        PeerMessage::Changed { origin: origin.to_owned(), message: WorkerMessage::Event { id: 0, event }.to_json() }
    }
}

impl PeerMessage {
    /// As JSON, for the channel.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("protocol messages are plain data")
    }
}

impl WorkerMessage {
    /// As JSON, for `postMessage`.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("protocol messages are plain data")
    }
}

impl Request {
    /// Reads a request from the UI. One that cannot be read is answered on its own, as a failed
    /// response to its id when the id can be read (its caller gets the error and the client stays
    /// ready), else as [`WorkerMessage::Unreadable`]: never as [`WorkerMessage::Failed`], which would
    /// say the whole archive is unavailable.
    pub fn read(text: &str) -> Result<Request, Box<WorkerMessage>> {
        serde_json::from_str::<Request>(text).map_err(|e| {
            #[derive(Deserialize)]
            struct Id {
                id: u64,
            }
            let problem = Problem::new(ErrorKind::Invalid, format!("the storage worker could not read a request: {e}"));
            Box::new(match serde_json::from_str::<Id>(text) {
                Ok(Id { id }) => WorkerMessage::Response { id, result: Err(problem) },
                Err(_) => WorkerMessage::Unreadable(problem),
            })
        })
    }

    /// As JSON, for `postMessage`.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("protocol messages are plain data")
    }
}

#[cfg(test)]
mod tests;
