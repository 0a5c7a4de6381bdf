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

mod event;
mod files;
mod op;
mod sync;

pub use event::{Event, EVENT_CONTENT_CHARS};
#[cfg(target_arch = "wasm32")]
pub use files::js as files_js;
pub use files::{thousands, FilePayload, ImportReport};
pub use op::{HostOptions, HostToolSpec, Op};
pub use sync::{recovery_key, SyncSettings, SyncState, TeamSpace};

use cowork_core::context::ContextMessage;
pub use cowork_core::provider::ModelSettings;
pub use cowork_core::ErrorKind;
use cowork_core::{ContextManifest, SearchHit, Session, StorageStats, TaskRecord, Turn};
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

/// How a reply ([`Op::SendMessage`], [`Op::Continue`]) ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
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

/// Where the archive lives, as the worker reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// A successful answer, one variant per kind of result.
///
/// Externally tagged (`{"sessions":{…}}`), as is [`WorkerMessage`]: serde reads an internal
/// tag by buffering the whole message first, code that cost the app's wasm tens of KB.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// The archive's counts and size ([`Op::Stats`]).
    Stats {
        /// Row counts and the database's size.
        stats: StorageStats,
    },
    /// An attachment's bytes ([`Op::ReadAttachment`]), in base64 (`cowork_core::attachment::from_base64`;
    /// `StorageClient::read_attachment` decodes it), and how a turn that carries it describes it.
    Attachment {
        /// Its name, type and size where a turn carries it (`None` if no turn does any more).
        attachment: Option<cowork_core::Attachment>,
        /// The exact bytes, standard base64.
        data: String,
    },
    /// The sessions listed ([`Op::ListSessions`]).
    Sessions {
        /// Most recently active first.
        sessions: Vec<Session>,
    },
    /// The session created, renamed or forked.
    Session {
        /// The session as stored now.
        session: Session,
    },
    /// The turn appended ([`Op::AppendTurn`]).
    Turn {
        /// The turn as stored (or as saved before, for a repeated client key).
        turn: Turn,
    },
    /// A page of turns ([`Op::GetTurns`]).
    Turns {
        /// In turn order; fewer than asked at the session's end.
        turns: Vec<Turn>,
    },
    /// Search results ([`Op::Search`]).
    Hits {
        /// The matching turns, best first.
        hits: Vec<SearchHit>,
    },
    /// A text result: an export, a recall, an integrity verdict, an import's or a connection test's summary.
    Text {
        /// The text.
        text: String,
    },
    /// How a `SendMessage` or `Continue` ended, and in which session.
    Sent {
        /// The session answered (the new one, if the message created it).
        session_id: String,
        /// How the reply ended.
        outcome: SendOutcome,
    },
    /// A session and its last request's manifest ([`Op::SessionDetails`]).
    Details {
        /// The session, with its state register.
        session: Session,
        /// What went into its last model request; `None`: no request was made yet.
        manifest: Option<ContextManifest>,
    },
    /// Everything to continue a session ([`Op::Resume`]).
    Resumed {
        /// The session.
        session: Session,
        /// Its last turns, in order.
        turns: Vec<Turn>,
        /// Its delegated tasks not yet finished.
        pending_tasks: Vec<TaskRecord>,
    },
    /// The next request's context ([`Op::AssembleContext`]).
    Context {
        /// The messages the model would be sent, in order.
        messages: Vec<ContextMessage>,
        /// What went into them and what was left out.
        manifest: ContextManifest,
        /// Turns of the session left out of the window (only in the archive).
        archived_turns: i64,
        /// The tool definitions offered with it (OpenAI function format).
        tools: Vec<serde_json::Value>,
    },
    /// A workspace's settings ([`Op::WorkspaceSettings`], [`Op::SaveWorkspaceSettings`]).
    Workspace {
        /// The settings as stored now.
        settings: cowork_core::WorkspaceSettings,
    },
    /// Where sync stands ([`Op::SyncStart`], [`Op::SyncStatus`]).
    Sync {
        /// The state now.
        state: SyncState,
    },
    /// Where a session's conversation branches ([`Op::Branches`]).
    Branches {
        /// In turn order; empty when it was never edited or regenerated.
        points: Vec<cowork_core::BranchPoint>,
    },
    /// Done, with nothing to return.
    Done,
    /// What an import would add ([`Op::PreviewImport`]).
    ImportPreview {
        /// The files' formats and the counts; nothing is written yet.
        report: ImportReport,
    },
    /// What an import added ([`Op::ImportFiles`]).
    Imported {
        /// The files' formats, the counts, and the new sessions' ids.
        report: ImportReport,
    },
    /// The models an endpoint lists ([`Op::ListModels`]), in its order.
    Models {
        /// Each model's id and, when the endpoint gives one, its display name.
        models: Vec<cowork_core::provider::ListedModel>,
    },
}

/// A message from the worker (externally tagged, like [`Reply`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerMessage {
    /// The archive is open: the UI may send requests now (sent once, first).
    Ready(ReadyInfo),
    /// The worker could not open any archive at all (or could not read a request).
    Failed(Problem),
    /// The answer to a request (one per request, except [`Op::Release`]).
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
#[cfg(target_arch = "wasm32")]
pub fn random_key() -> String {
    format!("{:x}-{:x}", js_sys::Date::now() as u64, (js_sys::Math::random() * 1e15) as u64)
}

/// What the storage workers of the tabs of one origin say to each other over a `BroadcastChannel`.
///
/// One worker owns the archive (it holds the Web Lock); the others forward their tab's requests to it
/// and relay its answers, so every tab works on the same archive and none sees an error.
// A message lives only from its construction to its serialisation: its size in memory is no concern.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
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
    /// As JSON, for `postMessage`.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("protocol messages are plain data")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cowork_core::NewTurn;

    #[test]
    fn messages_round_trip_as_json() {
        let req = Request {
            id: 7,
            op: Op::AppendTurn {
                session_id: "s".into(), turn: NewTurn::user("hi \u{0} 🎉"), attachments: Vec::new()
            },
        };
        assert_eq!(serde_json::from_str::<Request>(&req.to_json()).unwrap(), req);
        let ready = WorkerMessage::Ready(ReadyInfo {
            backend: Backend::Memory { reason: "no OPFS".into() },
            sqlite_version: "3.50.0".into(),
            schema_version: 2,
        });
        assert_eq!(serde_json::from_str::<WorkerMessage>(&ready.to_json()).unwrap(), ready);
        let full = Problem::new(ErrorKind::StorageFull, "disk full");
        let err = WorkerMessage::Response { id: 1, result: Err(full.clone()) };
        assert_eq!(serde_json::from_str::<WorkerMessage>(&err.to_json()).unwrap(), err);
        let failed = WorkerMessage::Failed(full.clone());
        assert_eq!(serde_json::from_str::<WorkerMessage>(&failed.to_json()).unwrap(), failed);
        let sent = WorkerMessage::Response {
            id: 2,
            result: Ok(Reply::Sent { session_id: "s".into(), outcome: SendOutcome::IterationLimit { calls: 8 } }),
        };
        assert_eq!(serde_json::from_str::<WorkerMessage>(&sent.to_json()).unwrap(), sent);
        // Events as pages see them: an error keeps its message field and gains its kind.
        let error = WorkerMessage::Event { id: 3, event: Event::Error(full) };
        assert_eq!(serde_json::from_str::<WorkerMessage>(&error.to_json()).unwrap(), error);
        let json = Event::Error(Problem::new(ErrorKind::Auth, "bad key")).page_json();
        assert_eq!(json, serde_json::json!({"event": "error", "kind": "auth", "message": "bad key"}));
        let delta = Event::Delta { session_id: "s".into(), turn_number: 2, text: "Hi".into() }.page_json();
        assert_eq!(delta, serde_json::json!({"event": "delta", "session_id": "s", "turn_number": 2, "text": "Hi"}));
    }

    #[test]
    fn peer_messages_round_trip_and_out_of_turn_ops_are_known() {
        let fwd = PeerMessage::Forward { tab: "t1".into(), request: Request { id: 3, op: Op::Stop } };
        assert_eq!(serde_json::from_str::<PeerMessage>(&fwd.to_json()).unwrap(), fwd);
        let answer = WorkerMessage::Response { id: 3, result: Ok(Reply::Done) };
        let reply = PeerMessage::reply("t1", &answer);
        assert_eq!(serde_json::from_str::<PeerMessage>(&reply.to_json()).unwrap(), reply);
        let PeerMessage::Reply { response_to, message, .. } = reply else { unreachable!() };
        assert_eq!(response_to, Some(3), "the relaying worker knows which request is answered");
        assert_eq!(serde_json::from_str::<WorkerMessage>(&message).unwrap(), answer, "the UI gets it whole");
        let event = Event::SessionsChanged { deleted: None };
        let PeerMessage::Changed { message, .. } = PeerMessage::changed("t2", event.clone()) else { unreachable!() };
        assert_eq!(serde_json::from_str::<WorkerMessage>(&message).unwrap(), WorkerMessage::Event { id: 0, event });
        assert!(Op::Stop.is_out_of_turn() && Op::Release.is_out_of_turn());
        assert!(!Op::Stats.is_out_of_turn() && !Op::ExportAll.is_out_of_turn());
        assert!(!Op::Stats.is_reply() && !Op::Stop.is_reply());
        let model = crate::settings::demo("http://127.0.0.1:1");
        assert!(Op::Continue { session_id: "s".into(), model, host: Default::default() }.is_reply());
    }

    #[test]
    fn a_model_list_is_asked_out_of_turn_and_its_answer_round_trips() {
        let ask = Op::ListModels { model: crate::settings::demo("http://127.0.0.1:1") };
        assert!(ask.is_out_of_turn(), "listing needs no archive and never waits for a reply");
        let request = Request { id: 9, op: ask };
        assert_eq!(serde_json::from_str::<Request>(&serde_json::to_string(&request).unwrap()).unwrap(), request);
        let models = vec![
            cowork_core::provider::ListedModel { id: "demo".into(), display_name: None },
            cowork_core::provider::ListedModel { id: "claude-x".into(), display_name: Some("Claude X".into()) },
        ];
        let answer = WorkerMessage::Response { id: 9, result: Ok(Reply::Models { models }) };
        assert_eq!(serde_json::from_str::<WorkerMessage>(&answer.to_json()).unwrap(), answer);
    }

    /// Regression: `appendTurn` and tool results broadcast a 10 MB turn whole to every tab.
    #[test]
    fn a_10_mb_turn_is_cut_before_it_is_broadcast() {
        let content = "é".repeat(5_000_000) + &"x".repeat(1_000); // 10 MB, two bytes a character mostly
        let turn: Turn = serde_json::from_value(serde_json::json!({
            "id": 1, "session_id": "s", "turn_number": 1, "role": "tool", "content": content,
            "tool_calls": [], "tool_call_id": "c1", "tool_name": "read_file", "token_count": 1, "created_at": 0,
            "status": "complete", "metadata": {}
        }))
        .unwrap();
        let Event::TurnAppended { turn: sent } = Event::turn_appended(turn.clone()) else { panic!("a turn event") };
        let chars = sent.content.chars().count();
        assert!(chars <= EVENT_CONTENT_CHARS, "the event carries {chars} characters of a 10 MB turn");
        let head: String = turn.content.chars().take(EVENT_CONTENT_CHARS).collect();
        assert!(sent.content == head, "cut to its first EVENT_CONTENT_CHARS characters, as the loop's turns were");
        assert_eq!(
            Turn { content: String::new(), ..sent },
            Turn { content: String::new(), ..turn.clone() },
            "only the text is cut"
        );
        let short = Turn { content: "hello".into(), ..turn };
        assert_eq!(Event::turn_appended(short.clone()), Event::TurnAppended { turn: short }, "short turns are whole");
    }

    #[test]
    fn outcomes_read_as_they_always_did() {
        assert_eq!(SendOutcome::Done.describe(), "done");
        assert_eq!(
            SendOutcome::Interrupted { message: "you pressed Stop".into() }.describe(),
            "interrupted: you pressed Stop"
        );
        assert_eq!(SendOutcome::IterationLimit { calls: 8 }.describe(), "stopped after 8 model calls");
        assert!(SendOutcome::ClosedMidReply.describe().ends_with("closed; Retry continues it"));
        let e = cowork_core::Error::SessionNotFound("s9".into());
        assert_eq!(Problem::from(e), Problem::new(ErrorKind::NotFound, "no session with id s9"));
    }

    #[test]
    fn unknown_messages_are_rejected_not_misread() {
        assert!(serde_json::from_str::<WorkerMessage>(r#"{"type":"bogus"}"#).is_err());
        assert!(serde_json::from_str::<Request>(r#"{"id":1,"op":{"op":"drop_everything"}}"#).is_err());
    }
}
