//! The sync log's messages (spec §14): one per archive change (the transport seals a backlog's
//! changes together, many to a stream message, each keeping its own id), plain data with serde, converted by
//! hand from the archive's rows. A message names what it changes by stable ids (a session's id, a
//! turn's gid), never by a device's row ids, so every device applies it the same way.

use crate::{
    Approval, Attachment, ContextManifest, Role, TaskEvent, TaskRecord, ToolCall, TurnStatus, WorkspaceSettings,
};
use serde::{Deserialize, Serialize};

/// One change, as a device publishes it to its space's stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncMessage {
    /// Unique per change and stable when published again after a crash (`<device id>:<outbox seq>`):
    /// the stream's de-duplication id.
    pub id: String,
    /// The device that made the change.
    pub device_id: String,
    /// Its name as the user set it ("Laptop"): conflict forks are titled "… (on <name>)".
    pub device_name: String,
    /// The change's place in its device's outbox: a device's own messages come back in this order.
    pub seq: i64,
    /// What changed.
    pub change: SyncChange,
}

/// What a message changes. Externally tagged (`{"turn_added": {…}}`): serde reads that without
/// buffering, where an internal tag costs the worker's wasm tens of kilobytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncChange {
    /// A new session (a fork names the turn it forks after by gid as well as by number).
    SessionCreated(SessionRecord),
    /// One field of a session changed; the last in stream order wins.
    SessionField {
        /// The session.
        session_id: String,
        /// The field and its new value.
        field: SessionField,
    },
    /// A session was deleted: final. Turns that arrive for it later are kept in a recovered session.
    SessionDeleted {
        /// The session.
        session_id: String,
    },
    /// A turn was appended.
    TurnAdded(TurnRecord),
    /// An interrupted turn was checkpointed or finalised by its author.
    TurnUpdated(TurnUpdate),
    /// A workspace's settings changed; the last in stream order wins.
    Workspace(WorkspaceSettings),
    /// A delegated task, as it is now (sent when created and when its status changes).
    Task(TaskSync),
    /// One orchestrator event a device archived for a task, verbatim.
    TaskEvent(TaskEvent),
    /// What one model request was sent (its turns named by gid), or its usage once known.
    Manifest(ManifestSync),
}

impl SyncChange {
    /// What the message is about, for logs and the server's subject (ids only, never content).
    pub fn subject(&self) -> String {
        match self {
            SyncChange::SessionCreated(s) => format!("session.{}", s.id),
            SyncChange::SessionField { session_id, .. } | SyncChange::SessionDeleted { session_id } => {
                format!("session.{session_id}")
            }
            SyncChange::TurnAdded(t) => format!("turn.{}", t.gid),
            SyncChange::TurnUpdated(t) => format!("turn.{}", t.gid),
            SyncChange::Workspace(_) => "workspace".to_owned(),
            SyncChange::Task(t) => format!("task.{}", t.task.task_id),
            SyncChange::TaskEvent(e) => format!("task.{}", e.task_id),
            SyncChange::Manifest(m) => format!("session.{}", m.manifest.session_id),
        }
    }
}

/// A session as created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The session's id (a UUID, the same everywhere).
    pub id: String,
    /// Its workspace label.
    pub workspace: String,
    /// Its title when created.
    pub title: String,
    /// The model it started with.
    pub model: String,
    /// The system prompt recorded for it.
    pub system_prompt: String,
    /// When it was created (ms since the Unix epoch).
    pub created_at: i64,
    /// The state register it started with (a fork inherits its parent's).
    pub state: serde_json::Value,
    /// Archived (a session queued at the first sync carries its fields as they are then).
    pub is_archived: bool,
    /// Provider-reported prompt tokens so far.
    pub prompt_tokens: i64,
    /// Provider-reported completion tokens so far.
    pub completion_tokens: i64,
    /// For a fork: the session it forks.
    pub parent_session_id: Option<String>,
    /// For a fork: the turn it forks after (0: another first message).
    pub fork_turn: Option<i64>,
    /// For a fork after turn n ≥ 1: the gid of that turn, which finds the right parent when sync
    /// moved the turn into a conflict fork.
    pub fork_gid: Option<String>,
    /// For a fork: a version of its parent's conversation (an edit or a regeneration), not a fork
    /// made with "Fork from here". Absent (read as `false`) from devices whose build predates it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_version: bool,
}

/// A session field that sync carries, with its value (externally tagged, as [`SyncChange`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionField {
    /// The title.
    Title(String),
    /// Hidden from the default list.
    Archived(bool),
    /// The model used from now on.
    Model(String),
    /// The session-state register.
    State(serde_json::Value),
    /// Provider-reported token totals.
    Usage {
        /// Prompt tokens so far.
        prompt_tokens: i64,
        /// Completion tokens so far.
        completion_tokens: i64,
    },
}

impl SessionField {
    /// The name the outbox records the field under.
    pub fn name(&self) -> &'static str {
        match self {
            SessionField::Title(_) => "title",
            SessionField::Archived(_) => "archived",
            SessionField::Model(_) => "model",
            SessionField::State(_) => "state",
            SessionField::Usage { .. } => "usage",
        }
    }
}

/// A turn as appended, with what was saved in its transaction (attachments, a tool execution).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnRecord {
    /// The turn's global id.
    pub gid: String,
    /// The session its author appended it to.
    pub session_id: String,
    /// That session's workspace (a turn recovered from a deleted session stays in it).
    pub workspace: String,
    /// Its number there, as the author saw it.
    pub turn_number: i64,
    /// The gid of the turn before it as the author saw it (`None` for a first turn).
    pub prev_gid: Option<String>,
    /// Who wrote it.
    pub role: Role,
    /// Verbatim content.
    pub content: String,
    /// The calls an assistant turn requested.
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the call it answers.
    pub tool_call_id: Option<String>,
    /// For a tool result: the tool.
    pub tool_name: Option<String>,
    /// Estimated tokens.
    pub token_count: i64,
    /// Final or not.
    pub status: TurnStatus,
    /// When it was written (ms since the Unix epoch).
    pub created_at: i64,
    /// Provider usage, model, reasoning… (JSON).
    pub metadata: serde_json::Value,
    /// Its searchable extra text (tool names, call arguments, reasoning, attached files' text).
    pub search_extra: String,
    /// The files it carries, each with its bytes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<AttachmentRecord>,
    /// For a tool result: how the tool ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_execution: Option<ToolExecutionRecord>,
}

/// An attachment with its content (standard base64).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttachmentRecord {
    /// Its metadata, as turns carry it.
    pub attachment: Attachment,
    /// Its bytes, base64.
    pub data: String,
}

/// How a tool ran, beside its result turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolExecutionRecord {
    /// The tool.
    pub tool_name: String,
    /// Its arguments as the model sent them.
    pub arguments: String,
    /// Whether it succeeded.
    pub success: bool,
    /// How long it took.
    pub duration_ms: i64,
    /// How it was allowed to run.
    pub approval: Approval,
}

/// The new state of an interrupted turn its author checkpointed or finalised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnUpdate {
    /// The turn.
    pub gid: String,
    /// Its content now.
    pub content: String,
    /// Its calls now.
    pub tool_calls: Vec<ToolCall>,
    /// Its token estimate now.
    pub token_count: i64,
    /// Its status now.
    pub status: TurnStatus,
    /// Its metadata now.
    pub metadata: serde_json::Value,
    /// Its searchable extra text now (reasoning, call arguments).
    pub search_extra: String,
}

/// A delegated task with the turn that delegated it named by gid: on another device that turn may
/// have another number, or sit in a conflict fork.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSync {
    /// The task as its device stores it (session and turn number as there).
    pub task: TaskRecord,
    /// The gid of the assistant turn that delegated it (`None` if that turn is gone).
    pub turn_gid: Option<String>,
}

/// A context manifest with its turns named by gid, under a key that stays the same when its usage
/// arrives later (`<device id>:<its row there>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestSync {
    /// The manifest's key, the same on every device.
    pub key: String,
    /// The manifest as its device stores it (turn numbers as there).
    pub manifest: ContextManifest,
    /// The gids of `manifest.turn_numbers`, in order (a turn that is gone is left out).
    pub turn_gids: Vec<String>,
    /// The gids of `manifest.trimmed_turns`.
    pub trimmed_gids: Vec<String>,
    /// The gids of `manifest.reasoning_turns`.
    pub reasoning_gids: Vec<String>,
}

/// A stream message as this version reads it: a change it can apply, or one it cannot read, which
/// is kept aside (quarantined) rather than applied.
#[derive(Debug, Clone, PartialEq)]
// Nearly every message is a `Change`: boxing it would allocate once more per message for nothing.
#[allow(clippy::large_enum_variant)]
pub enum Received {
    /// A change this version reads.
    Change(SyncMessage),
    /// A message this version cannot read.
    Unreadable(Unreadable),
}

/// What is known of a message this version cannot read.
#[derive(Debug, Clone, PartialEq)]
pub struct Unreadable {
    /// The transport's id of the message (what its seal is bound to).
    pub msg_id: String,
    /// The device that wrote it, when its envelope reads (empty otherwise).
    pub device_id: String,
    /// That device's name (empty when unknown).
    pub device_name: String,
    /// Why it cannot be read.
    pub reason: QuarantineReason,
}

/// Why a stream message was kept aside instead of applied. Each says what happened in words a user
/// can act on; the variant is what the UI and the retry policy read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuarantineReason {
    /// The transport could not open it (altered, or sealed with another key).
    Undecryptable(String),
    /// A kind of change from a newer version of Cowork (the kind's name): kept for a version that
    /// knows it.
    NewerKind(String),
    /// Not a change this version can read (the parser's words).
    Malformed(String),
    /// Read, but its change could not be applied (an attachment whose SHA-256 does not match …).
    Refused(String),
}

impl QuarantineReason {
    /// The name it is stored under.
    pub fn name(&self) -> &'static str {
        match self {
            QuarantineReason::Undecryptable(_) => "undecryptable",
            QuarantineReason::NewerKind(_) => "newer_kind",
            QuarantineReason::Malformed(_) => "malformed",
            QuarantineReason::Refused(_) => "refused",
        }
    }

    /// What it says (the kind's name, the parser's or the archive's words).
    pub fn detail(&self) -> &str {
        match self {
            QuarantineReason::Undecryptable(d)
            | QuarantineReason::NewerKind(d)
            | QuarantineReason::Malformed(d)
            | QuarantineReason::Refused(d) => d,
        }
    }

    /// The reason stored as `name` with `detail` (an unknown name reads as refused).
    pub fn from_parts(name: &str, detail: String) -> QuarantineReason {
        match name {
            "undecryptable" => QuarantineReason::Undecryptable(detail),
            "newer_kind" => QuarantineReason::NewerKind(detail),
            "malformed" => QuarantineReason::Malformed(detail),
            _ => QuarantineReason::Refused(detail),
        }
    }
}

impl std::fmt::Display for QuarantineReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QuarantineReason::Undecryptable(d) => write!(f, "it cannot be decrypted ({d})"),
            QuarantineReason::NewerKind(k) => {
                write!(f, "it is a kind of change (“{k}”) from a newer version of Cowork: update Cowork on this device")
            }
            QuarantineReason::Malformed(d) => write!(f, "this version of Cowork cannot read it ({d})"),
            QuarantineReason::Refused(d) => f.write_str(d),
        }
    }
}

/// Reads a stream message's body (its JSON). One this version cannot read is [`Received::Unreadable`]
/// with its author when the envelope says who, and a change kind it does not know is named as one
/// from a newer version, not as a broken message.
pub fn read_message(body: &str) -> Received {
    let error = match serde_json::from_str::<SyncMessage>(body) {
        Ok(m) => return Received::Change(m),
        Err(e) => e,
    };
    #[derive(Deserialize)]
    struct Envelope {
        #[serde(default)]
        id: String,
        #[serde(default)]
        device_id: String,
        #[serde(default)]
        device_name: String,
        #[serde(default)]
        change: Option<std::collections::BTreeMap<String, serde::de::IgnoredAny>>,
    }
    let envelope = serde_json::from_str::<Envelope>(body).ok();
    let kind = envelope.as_ref().and_then(|e| e.change.as_ref()).and_then(|c| {
        let mut keys = c.keys();
        keys.next().filter(|_| keys.next().is_none()).cloned()
    });
    // serde names an unknown variant in its own words: "unknown variant `task_added`, expected …".
    let reason = match kind {
        Some(kind) if error.to_string().contains(&format!("unknown variant `{kind}`")) => {
            QuarantineReason::NewerKind(kind)
        }
        _ => QuarantineReason::Malformed(error.to_string()),
    };
    let (msg_id, device_id, device_name) = envelope.map(|e| (e.id, e.device_id, e.device_name)).unwrap_or_default();
    Received::Unreadable(Unreadable { msg_id, device_id, device_name, reason })
}
