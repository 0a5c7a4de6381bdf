//! The plain data the whole core speaks: sessions, turns, tool calls. No I/O, no behaviour beyond parsing.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Who wrote a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions or notes from the app or a host, not typed by the user (e.g. an imported system message).
    System,
    /// The person in the chat.
    User,
    /// The model's reply (text and/or tool calls).
    Assistant,
    /// A tool's result, answering one call of the assistant turn before it.
    Tool,
}

impl Role {
    /// Every role, in a fixed order.
    pub const ALL: [Role; 4] = [Role::System, Role::User, Role::Assistant, Role::Tool];

    /// The lower-case name used in the archive and on the wire ("user", "tool", …).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// The role named by [`Role::as_str`]'s text; `None` for anything else (case-sensitive).
    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a turn is final. Only an `Interrupted` assistant turn may later be finalised in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TurnStatus {
    /// Final: the turn was saved whole.
    Complete,
    /// The stream was cut or stopped: the content is what arrived so far, and may still be finalised.
    Interrupted,
    /// The reply failed (e.g. a malformed stream); the content is the partial text, the metadata says why.
    Error,
}

impl TurnStatus {
    /// The lower-case name stored in the archive ("complete", "interrupted", "error").
    pub fn as_str(self) -> &'static str {
        match self {
            TurnStatus::Complete => "complete",
            TurnStatus::Interrupted => "interrupted",
            TurnStatus::Error => "error",
        }
    }

    /// The status named by [`TurnStatus::as_str`]'s text; `None` for anything else.
    pub fn parse(s: &str) -> Option<TurnStatus> {
        [TurnStatus::Complete, TurnStatus::Interrupted, TurnStatus::Error].into_iter().find(|r| r.as_str() == s)
    }
}

/// One function call requested by the model, as the provider sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider-assigned id that the tool result refers back to.
    pub id: String,
    /// The tool's name, as offered to the model.
    pub name: String,
    /// The arguments exactly as streamed: usually a JSON object, but kept as text because models
    /// sometimes send invalid JSON and the archive keeps what was said.
    pub arguments: String,
}

impl ToolCall {
    /// The arguments parsed as JSON, if they are valid JSON.
    pub fn arguments_json(&self) -> Option<serde_json::Value> {
        serde_json::from_str(&self.arguments).ok()
    }
}

/// A turn as stored in the archive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// Row id, unique across the archive.
    pub id: i64,
    /// The session that stores the turn: for a turn a fork inherits, its parent's id.
    pub session_id: String,
    /// 1-based, monotonic and unique within the session (forks continue their parent's numbering).
    pub turn_number: i64,
    /// Who wrote it.
    pub role: Role,
    /// Verbatim content, no size cap.
    pub content: String,
    /// For `Role::Assistant`: the calls it requested, in order (empty: none).
    pub tool_calls: Vec<ToolCall>,
    /// For `Role::Tool`: the id of the call this result answers.
    pub tool_call_id: Option<String>,
    /// For `Role::Tool`: the name of the tool that produced it.
    pub tool_name: Option<String>,
    /// Estimated tokens for content + tool calls.
    pub token_count: i64,
    /// Whether the turn is final (see [`TurnStatus`]).
    pub status: TurnStatus,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Provider usage, finish reason, model… (a JSON object; `null` when there is none).
    pub metadata: serde_json::Value,
    /// The images and files the turn carries (a user's), in order, without their bytes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<crate::Attachment>,
}

/// What a caller supplies to append a turn; the store assigns id, number, tokens and time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewTurn {
    /// Who wrote it.
    pub role: Role,
    /// The text, stored verbatim.
    pub content: String,
    /// For an assistant turn: the calls it requests (empty: none).
    pub tool_calls: Vec<ToolCall>,
    /// For `Role::Tool`: the id of the call this result answers.
    pub tool_call_id: Option<String>,
    /// For `Role::Tool`: the name of the tool that produced it.
    pub tool_name: Option<String>,
    /// Usually `Complete`; `Interrupted` for a reply about to be streamed (finalised later).
    pub status: TurnStatus,
    /// Provider usage, finish reason, model… (a JSON object; `null` when there is none).
    pub metadata: serde_json::Value,
}

impl NewTurn {
    fn plain(role: Role, content: impl Into<String>) -> NewTurn {
        NewTurn {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            status: TurnStatus::Complete,
            metadata: serde_json::Value::Null,
        }
    }

    /// A complete user message.
    pub fn user(content: impl Into<String>) -> NewTurn {
        NewTurn::plain(Role::User, content)
    }

    /// A complete system turn.
    pub fn system(content: impl Into<String>) -> NewTurn {
        NewTurn::plain(Role::System, content)
    }

    /// A complete assistant reply without tool calls.
    pub fn assistant(content: impl Into<String>) -> NewTurn {
        NewTurn::plain(Role::Assistant, content)
    }

    /// An assistant turn that requests tool calls.
    pub fn assistant_calls(content: impl Into<String>, calls: Vec<ToolCall>) -> NewTurn {
        NewTurn { tool_calls: calls, ..NewTurn::plain(Role::Assistant, content) }
    }

    /// A tool result answering `call_id`.
    pub fn tool_result(
        call_id: impl Into<String>,
        tool_name: impl Into<String>,
        content: impl Into<String>,
    ) -> NewTurn {
        NewTurn {
            tool_call_id: Some(call_id.into()),
            tool_name: Some(tool_name.into()),
            ..NewTurn::plain(Role::Tool, content)
        }
    }

    /// The same turn with `status` (e.g. `Interrupted` before a reply is streamed into it).
    pub fn with_status(mut self, status: TurnStatus) -> NewTurn {
        self.status = status;
        self
    }
}

/// A session as listed and resumed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// Unique id: a UUID v7, or the id an import brought.
    pub id: String,
    /// The project the session belongs to; sessions are grouped and searched by it.
    pub workspace: String,
    /// From the first user message (≤ 100 chars) until renamed.
    pub title: String,
    /// The model last used (empty until one is set).
    pub model: String,
    /// The system prompt in use for this session.
    pub system_prompt: String,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    /// When the last turn was appended (ms since the Unix epoch); session lists sort by it.
    pub last_active_at: i64,
    /// Turns visible in this session, including those inherited from a fork parent.
    pub turn_count: i64,
    /// Provider-reported prompt tokens, summed over the session's requests.
    pub prompt_tokens: i64,
    /// Provider-reported completion tokens, summed over the session's requests.
    pub completion_tokens: i64,
    /// The session-state register as JSON (see [`crate::state::SessionState`]).
    pub state: serde_json::Value,
    /// For a fork: the session it was forked from (`None` otherwise, or once that session is deleted).
    pub parent_session_id: Option<String>,
    /// For a fork: the last parent turn the fork inherits.
    pub fork_turn: Option<i64>,
    /// Hidden from the default session list; nothing is deleted.
    pub is_archived: bool,
    /// For a fork: made by an edit or a regeneration, or imported as another tool's branch — a version
    /// of its parent's conversation, listed under it (see [`crate::conversations`]) — rather than by
    /// "Fork from here" (a conversation of its own). Absent from JSON when `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_version: bool,
}

/// A workspace's settings, archived with the sessions (they are the user's data) and exported.
///
/// A workspace is a label ("default", "my-project"); what a label means on other machines is set here.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceSettings {
    /// The workspace's label, as sessions carry it.
    pub workspace: String,
    /// The project's directory on the orchestrator's machine, sent as Loom's `workspace`; empty when
    /// none is set (then `delegate_task` is refused with a message saying where to set it).
    pub orchestrator_dir: String,
    /// The orchestrator asks before each step (Loom's `approval_mode: "manual"`).
    pub manual_approvals: bool,
    /// Where the workspace's sessions sync to (absent in exports before it existed: personal).
    #[serde(default)]
    pub sync: SyncScope,
    /// When these settings last changed (ms since the Unix epoch; 0 for never).
    pub updated_at: i64,
    /// The MCP servers whose tools the workspace's sessions are offered (never their secrets).
    /// Absent from JSON when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: crate::mcp::McpServers,
}

/// Where a workspace's sessions sync to (spec §14).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncScope {
    /// The user's personal space: every device of theirs.
    #[default]
    Personal,
    /// A team's space (its name): the devices of everyone who joined it.
    Team(String),
    /// Nowhere: the workspace stays on this device.
    ThisDevice,
}

impl SyncScope {
    /// The space its changes go to; `None` for this device only.
    pub fn space(&self) -> Option<Space> {
        match self {
            SyncScope::Personal => Some(Space::Personal),
            SyncScope::Team(name) => Some(Space::Team(name.clone())),
            SyncScope::ThisDevice => None,
        }
    }

    /// How the archive stores it: `""` personal, `"."` this device, else the team space's name.
    pub fn key(&self) -> &str {
        match self {
            SyncScope::Personal => "",
            SyncScope::Team(name) => name,
            SyncScope::ThisDevice => ".",
        }
    }

    /// The scope stored as `key` (see [`SyncScope::key`]).
    pub fn from_key(key: &str) -> SyncScope {
        match key {
            "" => SyncScope::Personal,
            "." => SyncScope::ThisDevice,
            name => SyncScope::Team(name.to_owned()),
        }
    }
}

/// One of the streams an archive syncs with: the user's personal space or a team's.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Space {
    /// The user's own space (its name on the server is in the device's sync settings).
    Personal,
    /// A team's space, by name.
    Team(String),
}

impl Space {
    /// How the archive's outbox and cursors name it: `""` for the personal space, else the name.
    pub fn key(&self) -> &str {
        match self {
            Space::Personal => "",
            Space::Team(name) => name,
        }
    }
}

/// Whether `name` can name a space on the server: 1–64 letters, digits, `-` and `_` (a NATS subject
/// token and stream name).
pub fn valid_space_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl WorkspaceSettings {
    /// The settings of a workspace nobody has configured yet.
    pub fn unset(workspace: impl Into<String>) -> WorkspaceSettings {
        WorkspaceSettings { workspace: workspace.into(), ..WorkspaceSettings::default() }
    }

    /// The orchestrator directory, when one is set.
    pub fn directory(&self) -> Option<&str> {
        Some(self.orchestrator_dir.trim()).filter(|d| !d.is_empty())
    }
}

/// A turn of a session's view where the conversation branches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchPoint {
    /// The turn number where the branches differ.
    pub turn_number: i64,
    /// One session per alternative, oldest alternative first: the most recently active session that
    /// reads that alternative's turn here (so switching to it continues where the user left it).
    pub sessions: Vec<String>,
    /// Which of them the session itself reads (an index into `sessions`).
    pub current: usize,
}

/// Milliseconds since the Unix epoch, on every target.
pub fn now_ms() -> i64 {
    #[cfg(target_arch = "wasm32")]
    {
        js_sys::Date::now() as i64
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
    }
}

/// Where a search looks. As JSON `{"kind": "session", "session_id": …}`, `{"kind": "workspace",
/// "workspace": …}` or `{"kind": "all"}` (read by hand, as one plain struct).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SearchScope {
    /// One session (including turns it inherits from a fork parent).
    Session {
        /// The session's id.
        session_id: String,
    },
    /// Every session of a workspace.
    Workspace {
        /// The workspace's name, as in [`Session::workspace`].
        workspace: String,
    },
    /// The whole archive.
    All,
}

/// A [`SearchScope`]'s fields, all of them: read as one plain struct, then checked, since serde's
/// internally tagged enums buffer every value and cost each wasm module kilobytes of code.
#[derive(Deserialize)]
struct ScopeFields {
    kind: String,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    workspace: Option<String>,
}

impl<'de> Deserialize<'de> for SearchScope {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        let f = ScopeFields::deserialize(deserializer)?;
        match f.kind.as_str() {
            "session" => Ok(SearchScope::Session {
                session_id: f.session_id.ok_or_else(|| D::Error::missing_field("session_id"))?,
            }),
            "workspace" => Ok(SearchScope::Workspace {
                workspace: f.workspace.ok_or_else(|| D::Error::missing_field("workspace"))?,
            }),
            "all" => Ok(SearchScope::All),
            other => Err(D::Error::unknown_variant(other, &["session", "workspace", "all"])),
        }
    }
}

/// A search request. Any `text` at all is safe: it is turned into a valid full-text expression.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchQuery {
    /// What to look for: words, "quoted phrases", identifiers or paths.
    pub text: String,
    /// Where to look.
    pub scope: SearchScope,
    /// Only turns of these roles (empty: all roles).
    pub roles: Vec<Role>,
    /// Most hits returned; the store clamps it to 1..=50.
    pub limit: usize,
    /// Treat the last word as a prefix (search-as-you-type).
    pub prefix_last: bool,
}

impl SearchQuery {
    /// A query for `text` in `scope`: every role, at most 10 hits, no prefix matching.
    pub fn new(text: impl Into<String>, scope: SearchScope) -> SearchQuery {
        SearchQuery { text: text.into(), scope, roles: Vec::new(), limit: 10, prefix_last: false }
    }
}

/// One full-text hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    /// The session that stores the turn (for a turn a fork inherits, its parent).
    pub session_id: String,
    /// That session's title.
    pub session_title: String,
    /// The turn's row id ([`Turn::id`]).
    pub turn_id: i64,
    /// The turn's number in its session.
    pub turn_number: i64,
    /// Who wrote the turn.
    pub role: Role,
    /// For a tool result: the tool that produced it.
    pub tool_name: Option<String>,
    /// When the turn was saved, in milliseconds since the Unix epoch.
    pub created_at: i64,
    /// A short excerpt around the match, plain text.
    pub snippet: String,
    /// Byte ranges of `snippet` that matched the query (for highlighting).
    pub highlights: Vec<(usize, usize)>,
    /// Higher is better.
    pub score: f64,
    /// Whether the hit matched the query's words, its meaning, or both.
    #[serde(default)]
    pub matched: crate::semantic::Matched,
}

/// How a tool call was allowed to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Approval {
    /// Ran without asking: the tool's policy allows it (or the call could not run at all).
    Auto,
    /// The user approved this call.
    Approved,
    /// The user declined; the tool did not run.
    Denied,
}

impl Approval {
    /// The lower-case name stored in the archive ("auto", "approved", "denied").
    pub fn as_str(self) -> &'static str {
        match self {
            Approval::Auto => "auto",
            Approval::Approved => "approved",
            Approval::Denied => "denied",
        }
    }

    /// The approval named by [`Approval::as_str`]'s text; `None` for anything else.
    pub fn parse(s: &str) -> Option<Approval> {
        [Approval::Auto, Approval::Approved, Approval::Denied].into_iter().find(|a| a.as_str() == s)
    }
}

/// One executed tool call, archived beside the tool-result turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolExecution {
    /// The session that stores the result turn.
    pub session_id: String,
    /// The turn number of the tool-result turn.
    pub turn_number: i64,
    /// The tool that ran.
    pub tool_name: String,
    /// Arguments as the model sent them (usually JSON text).
    pub arguments: String,
    /// The tool's output as the model got it (the result turn's content).
    pub result: String,
    /// Whether the tool succeeded; `false` for a denied call or an unknown tool.
    pub success: bool,
    /// How long the call took, in milliseconds.
    pub duration_ms: i64,
    /// How the call was allowed to run, or that the user declined it.
    pub approval: Approval,
    /// When it was recorded, in milliseconds since the Unix epoch (the result turn's time).
    pub created_at: i64,
}

/// A task handed to the orchestrator with `delegate_task`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The id the orchestrator gave the task when it accepted it.
    pub task_id: String,
    /// The session that delegated it.
    pub session_id: String,
    /// The turn number of the assistant turn that delegated it.
    pub turn_number: i64,
    /// The goal as submitted (the tool call's `goal`, trimmed).
    pub goal: String,
    /// The tool call's `context` argument as JSON text (`null` when the model gave none).
    pub context: String,
    /// Orchestrator status as last seen.
    pub status: TaskStatus,
    /// Whether the result has been delivered into the conversation.
    pub result_delivered: bool,
    /// When it was submitted, in milliseconds since the Unix epoch.
    pub created_at: i64,
    /// When its status or delivery flag last changed, in milliseconds since the Unix epoch.
    pub updated_at: i64,
}

impl TaskRecord {
    /// The task will send nothing more ([`TaskStatus::is_terminal`]).
    pub fn is_finished(&self) -> bool {
        self.status.is_terminal()
    }
}

/// Where a delegated task stands: Loom's statuses, plus Cowork's own `submitted` (handed over, nothing
/// heard yet). Read once where a status enters ([`TaskStatus::parse`]: trimmed, any case, `canceled`
/// too), so every "is it finished?" gives the same answer. Written as the lowercase word (archive
/// column, JSONL export, UI); `Debug` shows that word too.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub enum TaskStatus {
    /// Handed to the orchestrator, nothing heard back yet (Cowork's own; the default).
    #[default]
    Submitted,
    /// Accepted, not started (`pending`; Loom's `created` means the same).
    Pending,
    /// The orchestrator is writing the plan (`planning`).
    Planning,
    /// The plan's subtasks are running (`executing`).
    Executing,
    /// The plan is being revised after a failure (`replanning`).
    Replanning,
    /// Finished successfully (`completed`); final.
    Completed,
    /// Gave up (`failed`); final.
    Failed,
    /// Stopped before it finished: `cancelled` (or `canceled`); final.
    Cancelled,
    /// A status this version does not know, kept verbatim (empty: none was reported). Not final.
    Other(String),
}

impl TaskStatus {
    /// Reads an orchestrator's status word: surrounding space and case are ignored; unknown words are
    /// kept verbatim as [`TaskStatus::Other`].
    pub fn parse(s: &str) -> TaskStatus {
        match s.trim().to_ascii_lowercase().as_str() {
            "submitted" => TaskStatus::Submitted,
            "pending" | "created" => TaskStatus::Pending,
            "planning" => TaskStatus::Planning,
            "executing" => TaskStatus::Executing,
            "replanning" => TaskStatus::Replanning,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "cancelled" | "canceled" => TaskStatus::Cancelled,
            _ => TaskStatus::Other(s.to_string()),
        }
    }

    /// The lowercase status word as stored and shown; `Other` gives its word verbatim.
    pub fn as_str(&self) -> &str {
        match self {
            TaskStatus::Submitted => "submitted",
            TaskStatus::Pending => "pending",
            TaskStatus::Planning => "planning",
            TaskStatus::Executing => "executing",
            TaskStatus::Replanning => "replanning",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
            TaskStatus::Other(s) => s,
        }
    }

    /// Final: `completed`, `failed` or `cancelled`; the task will send nothing more.
    pub fn is_terminal(&self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }

    /// No status was reported (an empty or blank word).
    pub fn is_unknown(&self) -> bool {
        matches!(self, TaskStatus::Other(s) if s.trim().is_empty())
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl fmt::Debug for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl From<&str> for TaskStatus {
    fn from(s: &str) -> TaskStatus {
        TaskStatus::parse(s)
    }
}

impl Serialize for TaskStatus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TaskStatus {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<TaskStatus, D::Error> {
        String::deserialize(deserializer).map(|s| TaskStatus::parse(&s))
    }
}

/// The archive's `tasks.status` column holds the same word.
#[cfg(feature = "store")]
impl rusqlite::types::ToSql for TaskStatus {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(rusqlite::types::ToSqlOutput::from(self.as_str()))
    }
}

#[cfg(feature = "store")]
impl rusqlite::types::FromSql for TaskStatus {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<TaskStatus> {
        value.as_str().map(TaskStatus::parse)
    }
}

/// One orchestrator event, verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskEvent {
    /// The task it belongs to.
    pub task_id: String,
    /// 1-based order of arrival within the task.
    pub seq: i64,
    /// The SSE event name as received, e.g. `subtask_completed`.
    pub event_type: String,
    /// The event's data exactly as received.
    pub data: String,
    /// When it was archived, in milliseconds since the Unix epoch (strictly increasing per archive).
    pub received_at: i64,
}

/// What one model request contained: "what did the model see?" is always answerable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextManifest {
    /// The session the request was for.
    pub session_id: String,
    /// Turn numbers sent, in order.
    pub turn_numbers: Vec<i64>,
    /// Turn numbers whose content was shortened (head + tail) in the request.
    pub trimmed_turns: Vec<i64>,
    /// Assistant turns whose reasoning was sent back with their tool calls (DeepSeek's
    /// `reasoning_content`, Anthropic's signed thinking blocks): those of the current tool loop.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasoning_turns: Vec<i64>,
    /// Version (update counter) of the session-state register included.
    pub state_version: i64,
    /// The request's estimated size in tokens (at the model's calibrated ratio).
    pub estimated_tokens: i64,
    /// What it had to fit in: context window − output reserve, in tokens.
    pub budget_tokens: i64,
    /// Provider-reported usage, when known (JSON object or null).
    pub usage: serde_json::Value,
    /// When the request was recorded, in milliseconds since the Unix epoch.
    pub created_at: i64,
}
