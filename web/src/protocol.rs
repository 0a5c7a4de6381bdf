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

use cowork_core::context::ContextMessage;
use cowork_core::prompt::ApprovalPolicy;
pub use cowork_core::provider::ModelSettings;
pub use cowork_core::ErrorKind;
use cowork_core::{ContextManifest, NewTurn, SearchHit, SearchQuery, Session, StorageStats, TaskRecord, Turn};
use serde::{Deserialize, Serialize};

/// Why a request failed: what kind of failure it is (the UI chooses its remedy from the kind, never
/// from the words) and the message to show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    pub kind: ErrorKind,
    pub message: String,
}

impl Problem {
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
    Interrupted { message: String },
    /// The model still wanted tools after `calls` model calls.
    IterationLimit { calls: u32 },
    /// The tab that was running the reply closed before it ended (or the message had been saved by
    /// an owner that closed before answering): Retry continues it.
    ClosedMidReply,
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
        }
    }
}

/// Where the archive lives, as the worker reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Backend {
    /// The OPFS database: data survives closing the tab.
    Opfs { file: String },
    /// OPFS could not be used; data lives only as long as the worker.
    Memory { reason: String },
}

impl Backend {
    pub fn is_persistent(&self) -> bool {
        matches!(self, Backend::Opfs { .. })
    }
}

/// What the worker says when it is ready to take requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadyInfo {
    pub backend: Backend,
    pub sqlite_version: String,
    pub schema_version: i64,
}

/// A request from the UI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub id: u64,
    pub op: Op,
}

/// The operations the worker performs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    Stats,
    ListSessions {
        workspace: Option<String>,
        #[serde(default)]
        include_archived: bool,
    },
    CreateSession {
        workspace: String,
        /// Empty: the first user message names the session.
        #[serde(default)]
        title: String,
    },
    AppendTurn {
        session_id: String,
        turn: NewTurn,
    },
    GetTurns {
        session_id: String,
        offset: usize,
        limit: usize,
    },
    Search {
        query: SearchQuery,
    },
    IntegrityCheck,
    /// Saves the user's message (creating the session first when `session_id` is `None`) and runs
    /// the agent loop; progress arrives as [`WorkerMessage::Event`]s with this request's id.
    ///
    /// `key` is chosen by the client, once per message: a request sent again (after the tab that owned
    /// the archive closed before answering) finds the message already saved and does not save it twice.
    SendMessage {
        session_id: Option<String>,
        workspace: String,
        text: String,
        model: ModelSettings,
        key: String,
        #[serde(default)]
        host: HostOptions,
    },
    /// Runs the agent loop again from the session's end (Retry/Continue after an interrupted reply).
    Continue {
        session_id: String,
        model: ModelSettings,
        #[serde(default)]
        host: HostOptions,
    },
    /// The session, its last `last_turns` turns and its unfinished delegated tasks (to resume it).
    Resume {
        session_id: String,
        last_turns: usize,
    },
    /// Runs `conversation_recall` with the model's JSON arguments; answers with the text the model
    /// would get.
    Recall {
        session_id: String,
        arguments: String,
    },
    /// The context the agent loop would send next for the session (nothing is sent or recorded).
    AssembleContext {
        session_id: String,
        model: ModelSettings,
        #[serde(default)]
        host: HostOptions,
    },
    /// The whole archive as JSON Lines (sessions, turns, tool runs, tasks, manifests; never settings).
    ExportAll,
    /// One session as JSON Lines (the same format as [`Op::ExportAll`]).
    ExportSession {
        session_id: String,
    },
    /// Adds the sessions of a JSON Lines export (all or nothing; sessions already here are skipped).
    Import {
        text: String,
    },
    RenameSession {
        session_id: String,
        title: String,
    },
    /// A new session holding turns 1..=`at_turn` of `session_id` (shared, not copied).
    ForkSession {
        session_id: String,
        at_turn: i64,
    },
    /// Hides a session from the list (or shows it again); nothing is deleted.
    ArchiveSession {
        session_id: String,
        archived: bool,
    },
    /// Deletes a session and its turns for good.
    DeleteSession {
        session_id: String,
    },
    /// Sends the smallest request to the model endpoint and says whether it answers (Settings' "Test
    /// connection"; needs no archive, answered by the tab's own worker).
    TestConnection {
        model: ModelSettings,
    },
    /// The session (with its state register) and the manifest of its last model request.
    SessionDetails {
        session_id: String,
    },
    /// Asks the orchestrator to cancel a delegated task (answered at once, out of turn; the task's own
    /// events then report it cancelled).
    CancelTask {
        task_id: String,
        orchestrator_url: String,
    },
    /// Aborts the model call in flight, if any (answered at once, out of turn).
    Stop,
    /// The user's answer to an [`Event::ApprovalNeeded`] (answered at once, out of turn).
    Approve {
        call_id: String,
        approved: bool,
    },
    /// What the page's tool handler returned for an [`Event::ToolRequested`] (answered at once, out
    /// of turn).
    ToolResult {
        call_id: String,
        content: String,
        success: bool,
    },
    /// The page is going away (`pagehide`): close the archive and release the OPFS files and the
    /// owner lock now, so a reload or another tab can open it at once. Not answered.
    Release,
}

impl Op {
    /// Operations answered at once, even while another request (a streaming reply) is being served.
    pub fn is_out_of_turn(&self) -> bool {
        matches!(
            self,
            Op::Stop
                | Op::Approve { .. }
                | Op::ToolResult { .. }
                | Op::Release
                | Op::CancelTask { .. }
                | Op::TestConnection { .. }
        )
    }
}

/// A tool whose handler lives in the page (registered through the embedding API): the worker offers
/// it to the model and asks the page to run each call ([`Event::ToolRequested`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostToolSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: serde_json::Value,
    pub approval: ApprovalPolicy,
    /// What the tool does to the files its arguments name (for the state register's
    /// `files_touched`); tools named like `read_file` or `write_file` are known without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_action: Option<cowork_core::state::FileAction>,
}

impl HostToolSpec {
    /// The definition in the OpenAI function format (what the agent loop offers the model).
    pub fn definition(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        })
    }
}

/// What the page adds to a model request: its tools and extra instructions for the system prompt.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostOptions {
    pub tools: Vec<HostToolSpec>,
    pub instructions: String,
}

/// Longest turn content carried in an event; the full text is read from the archive.
pub const EVENT_CONTENT_CHARS: usize = 100_000;

/// Progress of a [`Op::SendMessage`], for the UI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    SessionCreated {
        session: Session,
    },
    /// A committed turn (its content cut to [`EVENT_CONTENT_CHARS`] for display).
    TurnAppended {
        turn: Turn,
    },
    Delta {
        #[serde(default)]
        session_id: String,
        turn_number: i64,
        text: String,
    },
    ToolStarted {
        #[serde(default)]
        session_id: String,
        turn_number: i64,
        name: String,
        arguments: String,
    },
    ToolFinished {
        #[serde(default)]
        session_id: String,
        turn_number: i64,
        name: String,
        success: bool,
        duration_ms: i64,
    },
    /// Waiting before a retry. `kind` is the failure's (rate_limited, model_server or network);
    /// `reason` says it in words.
    Retrying {
        attempt: u32,
        wait_ms: u64,
        kind: ErrorKind,
        reason: String,
    },
    /// A delegated task moved on: the whole checklist so far (small: one line per subtask).
    TaskProgress {
        #[serde(default)]
        session_id: String,
        task_id: String,
        event_type: String,
        status: String,
        goal: String,
        checklist: Vec<cowork_core::orchestrator::ChecklistItem>,
    },
    /// The model wants to run a tool that needs the user's approval; answer with [`Op::Approve`].
    ApprovalNeeded {
        call_id: String,
        name: String,
        arguments: String,
    },
    /// The model called one of the page's tools: run it and answer with [`Op::ToolResult`].
    ToolRequested {
        call_id: String,
        name: String,
        arguments: String,
    },
    /// The reply failed (`{"event": "error", "kind": …, "message": …}`).
    Error(Problem),
    /// Sessions were renamed, forked, archived, deleted or imported: the session list is out of date.
    SessionsChanged {
        deleted: Option<String>,
    },
}

impl Event {
    /// A committed turn, as every event carrying one is built (the worker's `appendTurn`, the agent
    /// loop's turns and tool results, a message found saved already): its content cut to its first
    /// [`EVENT_CONTENT_CHARS`] characters, so a 10 MB tool output is not sent whole to every tab (the
    /// full text is read from the archive). The variant is built nowhere else.
    pub fn turn_appended(mut turn: Turn) -> Event {
        if let Some((cut, _)) = turn.content.char_indices().nth(EVENT_CONTENT_CHARS) {
            turn.content.truncate(cut);
        }
        Event::TurnAppended { turn }
    }
}

/// A successful answer, one variant per kind of result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    Stats {
        stats: StorageStats,
    },
    Sessions {
        sessions: Vec<Session>,
    },
    Session {
        session: Session,
    },
    Turn {
        turn: Turn,
    },
    Turns {
        turns: Vec<Turn>,
    },
    Hits {
        hits: Vec<SearchHit>,
    },
    Text {
        text: String,
    },
    /// How a `SendMessage` or `Continue` ended, and in which session.
    Sent {
        session_id: String,
        outcome: SendOutcome,
    },
    Details {
        session: Session,
        manifest: Option<ContextManifest>,
    },
    Resumed {
        session: Session,
        turns: Vec<Turn>,
        pending_tasks: Vec<TaskRecord>,
    },
    Context {
        messages: Vec<ContextMessage>,
        manifest: ContextManifest,
        /// Turns of the session left out of the window (only in the archive).
        archived_turns: i64,
        /// The tool definitions offered with it (OpenAI function format).
        tools: Vec<serde_json::Value>,
    },
    Done,
}

/// A message from the worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WorkerMessage {
    Ready(ReadyInfo),
    /// The worker could not open any archive at all (or could not read a request).
    Failed(Problem),
    Response {
        id: u64,
        result: Result<Reply, Problem>,
    },
    Event {
        id: u64,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PeerMessage {
    /// A new worker asks which tab owns the archive.
    Hello { tab: String },
    /// The owner announces itself (when it takes over, and in answer to `Hello`).
    Owner { tab: String, ready: ReadyInfo },
    /// A request of `tab`'s UI, for the owner to serve.
    Forward { tab: String, request: Request },
    /// The owner's answer or progress event for a request of `tab`.
    Reply { tab: String, message: WorkerMessage },
    /// Something was saved (a turn, a session), by a request of `origin`: every other tab shows it.
    Changed { origin: String, event: Event },
}

impl PeerMessage {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("protocol messages are plain data")
    }
}

impl WorkerMessage {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("protocol messages are plain data")
    }
}

impl Request {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("protocol messages are plain data")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_as_json() {
        let req =
            Request { id: 7, op: Op::AppendTurn { session_id: "s".into(), turn: NewTurn::user("hi \u{0} 🎉") } };
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
        let json = serde_json::to_value(Event::Error(Problem::new(ErrorKind::Auth, "bad key"))).unwrap();
        assert_eq!(json, serde_json::json!({"event": "error", "kind": "auth", "message": "bad key"}));
    }

    #[test]
    fn peer_messages_round_trip_and_out_of_turn_ops_are_known() {
        let fwd = PeerMessage::Forward { tab: "t1".into(), request: Request { id: 3, op: Op::Stop } };
        assert_eq!(serde_json::from_str::<PeerMessage>(&fwd.to_json()).unwrap(), fwd);
        let reply = PeerMessage::Reply {
            tab: "t1".into(),
            message: WorkerMessage::Response { id: 3, result: Ok(Reply::Done) },
        };
        assert_eq!(serde_json::from_str::<PeerMessage>(&reply.to_json()).unwrap(), reply);
        assert!(Op::Stop.is_out_of_turn() && Op::Release.is_out_of_turn());
        assert!(!Op::Stats.is_out_of_turn() && !Op::ExportAll.is_out_of_turn());
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
