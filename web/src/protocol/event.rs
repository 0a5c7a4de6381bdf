//! The progress events of a request, as the worker sends them to the UI (and to every other tab).

use super::{ErrorKind, Problem};
use cowork_core::{Session, Turn};
use serde::{Deserialize, Serialize};

/// Longest turn content carried in an event, in characters; the full text is read from the archive.
pub const EVENT_CONTENT_CHARS: usize = 100_000;

/// Progress of a [`Op::SendMessage`](super::Op::SendMessage), for the UI.
///
/// Externally tagged between worker and UI (`{"delta":{…}}`: an internal tag costs the app's wasm the
/// code that buffers the message first); pages see [`Event::page_json`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// A session was created (by `CreateSession`, or by a `SendMessage` without a session).
    SessionCreated {
        /// The new session.
        session: Session,
    },
    /// A committed turn (its content cut to [`EVENT_CONTENT_CHARS`] for display).
    TurnAppended {
        /// The turn as stored, its content cut.
        turn: Turn,
    },
    /// More text of the assistant turn being streamed.
    Delta {
        /// The session being answered.
        #[serde(default)]
        session_id: String,
        /// The assistant turn the text belongs to.
        turn_number: i64,
        /// The new text, to append to what came before.
        text: String,
    },
    /// More reasoning ("thinking") of the assistant turn being streamed, apart from its text.
    ReasoningDelta {
        /// The session being answered.
        #[serde(default)]
        session_id: String,
        /// The assistant turn the reasoning belongs to.
        turn_number: i64,
        /// The new reasoning text, to append to what came before.
        text: String,
    },
    /// A tool call is about to run (before any approval is asked).
    ToolStarted {
        /// The session being answered.
        #[serde(default)]
        session_id: String,
        /// The assistant turn that made the call.
        turn_number: i64,
        /// The tool called.
        name: String,
        /// Its arguments as the model wrote them (JSON text).
        arguments: String,
    },
    /// A tool call ended and its result turn was committed.
    ToolFinished {
        /// The session being answered.
        #[serde(default)]
        session_id: String,
        /// The tool-result turn's number.
        turn_number: i64,
        /// The tool called.
        name: String,
        /// Whether it succeeded (`false` when declined or refused too).
        success: bool,
        /// How long it took, in milliseconds, the wait for approval included.
        duration_ms: i64,
    },
    /// Waiting before a retry. `kind` is the failure's (rate_limited, model_server or network);
    /// `reason` says it in words.
    Retrying {
        /// The attempt that just failed, from 1.
        attempt: u32,
        /// How long until the next attempt, in milliseconds.
        wait_ms: u64,
        /// What kind of failure is being retried.
        kind: ErrorKind,
        /// What went wrong, for the user.
        reason: String,
    },
    /// A delegated task moved on: the whole checklist so far (small: one line per subtask).
    TaskProgress {
        /// The session that delegated the task.
        #[serde(default)]
        session_id: String,
        /// The orchestrator's id for the task.
        task_id: String,
        /// What moved it: the event's wire name, `task_submitted`, or `status` (a polled snapshot).
        event_type: String,
        /// The task's status, normalised (on the wire: its lowercase word).
        status: cowork_core::TaskStatus,
        /// The task's goal.
        goal: String,
        /// The subtasks so far, in the plan's order.
        checklist: Vec<cowork_core::orchestrator::ChecklistItem>,
    },
    /// The model wants to run a tool that needs the user's approval; answer with
    /// [`Op::Approve`](super::Op::Approve).
    ApprovalNeeded {
        /// The call's id, to answer with.
        call_id: String,
        /// The tool called.
        name: String,
        /// Its arguments as the model wrote them (JSON text). An MCP server's tool is named
        /// `<server>__<tool>` ([`super::McpCallee::of`]); no other tool's name holds `__`.
        arguments: String,
    },
    /// The model called one of the page's tools: run it and answer with
    /// [`Op::ToolResult`](super::Op::ToolResult).
    ToolRequested {
        /// The call's id, to answer with.
        call_id: String,
        /// The page's tool called.
        name: String,
        /// Its arguments as the model wrote them (JSON text).
        arguments: String,
    },
    /// The reply failed (`{"event": "error", "kind": …, "message": …}`).
    Error(Problem),
    /// Sync's state changed (sent to every tab).
    Sync {
        /// The state now.
        state: super::SyncState,
    },
    /// Sessions were renamed, forked, archived, deleted or imported: the session list is out of date.
    SessionsChanged {
        /// The session deleted, if that is what happened (a view showing it must close it).
        deleted: Option<String>,
    },
    /// How far an [`Op::ImportFiles`](super::Op::ImportFiles) is (sent at most every 100 ms, and
    /// after the last conversation).
    ImportProgress {
        /// Conversations read so far (of the preview's count).
        conversations: usize,
        /// Turns written so far (committed only when the whole import succeeds).
        turns: usize,
    },
}

impl Event {
    /// The event as the embedding API gives it to pages: its fields, with `event` naming its kind
    /// (`{"event": "error", "kind": "auth", "message": "…"}`).
    pub fn page_json(&self) -> serde_json::Value {
        use serde_json::{Map, Value};
        let (kind, body) = match serde_json::to_value(self) {
            Ok(Value::Object(outer)) => outer.into_iter().next().unwrap_or((String::new(), Value::Null)),
            Ok(Value::String(kind)) => (kind, Value::Null),
            _ => (String::new(), Value::Null),
        };
        let mut page = match body {
            Value::Object(fields) => fields,
            _ => Map::new(),
        };
        page.insert("event".into(), Value::String(kind));
        Value::Object(page)
    }

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
