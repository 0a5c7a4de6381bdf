//! The operations a [`Request`](super::Request) asks of the worker, each its own type (what it
//! gets back is paired with it in `calls.rs`), and what the page adds to a model request
//! ([`HostOptions`]).

use super::{FilePayload, ModelSettings};
use cowork_core::prompt::ApprovalPolicy;
use cowork_core::{NewTurn, SearchQuery};
use serde::{Deserialize, Serialize};

/// The operations the worker performs, as they travel (`{"list_sessions": {…}}`, `"stats"`).
///
/// Externally tagged, like [`Event`](super::Event): an internal tag (`{"op": …}`) makes serde buffer
/// the whole request before reading it, which cost the storage worker's wasm a second reader of every
/// operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// [`Stats`].
    Stats,
    /// [`SyncStart`].
    SyncStart(SyncStart),
    /// [`SyncStatus`].
    SyncStatus,
    /// [`SemanticStatus`].
    SemanticStatus,
    /// [`SetSemantic`].
    SetSemantic(SetSemantic),
    /// [`ListSessions`].
    ListSessions(ListSessions),
    /// [`CreateSession`].
    CreateSession(CreateSession),
    /// [`AppendTurn`].
    AppendTurn(AppendTurn),
    /// [`GetTurns`].
    GetTurns(GetTurns),
    /// [`Search`].
    Search(Search),
    /// [`IntegrityCheck`].
    IntegrityCheck,
    /// [`SendMessage`].
    SendMessage(SendMessage),
    /// [`ReadAttachment`].
    ReadAttachment(ReadAttachment),
    /// [`Continue`].
    Continue(Continue),
    /// [`Resume`].
    Resume(Resume),
    /// [`Recall`].
    Recall(Recall),
    /// [`AssembleContext`].
    AssembleContext(AssembleContext),
    /// [`ExportAll`].
    ExportAll,
    /// [`ExportSession`].
    ExportSession(ExportSession),
    /// [`Import`].
    Import(Import),
    /// [`WorkspaceSettings`].
    WorkspaceSettings(WorkspaceSettings),
    /// [`SaveWorkspaceSettings`].
    SaveWorkspaceSettings(SaveWorkspaceSettings),
    /// [`RenameSession`].
    RenameSession(RenameSession),
    /// [`ForkSession`].
    ForkSession(ForkSession),
    /// [`ArchiveSession`].
    ArchiveSession(ArchiveSession),
    /// [`DeleteSession`].
    DeleteSession(DeleteSession),
    /// [`TestConnection`].
    TestConnection(TestConnection),
    /// [`SessionDetails`].
    SessionDetails(SessionDetails),
    /// [`CancelTask`].
    CancelTask(CancelTask),
    /// [`Branches`].
    Branches(Branches),
    /// [`EditMessage`].
    EditMessage(EditMessage),
    /// [`Regenerate`].
    Regenerate(Regenerate),
    /// [`AnswerStep`].
    AnswerStep(AnswerStep),
    /// [`Stop`].
    Stop,
    /// [`Approve`].
    Approve(Approve),
    /// [`ToolResult`].
    ToolResult(ToolResult),
    /// [`Release`].
    Release,
    /// [`PreviewImport`].
    PreviewImport(PreviewImport),
    /// [`ImportFiles`].
    ImportFiles(ImportFiles),
    /// [`ExportChatGpt`].
    ExportChatGpt(ExportChatGpt),
    /// [`ExportMarkdown`].
    ExportMarkdown(ExportMarkdown),
    /// [`ListModels`].
    ListModels(ListModels),
}

/// Row counts and the database's size, for the storage panel; answered with its `Stats` reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats;

/// Starts syncing with these settings (restarting with new ones), or stops with `None`; answered
/// with its `Sync` reply at once, progress as [`Event::Sync`](super::Event::Sync) to every tab.
/// Every tab sends it when it starts, so whichever tab owns the archive syncs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncStart {
    /// What the user set, with the URL of the sync module (`web/sync`, loaded only now).
    pub settings: Option<super::SyncSettings>,
    /// The absolute URL of the sync module.
    #[serde(default)]
    pub module_url: String,
}

/// Where sync stands; answered with its `Sync` reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SyncStatus;

/// Where recall by meaning stands on this device; answered with its `Semantic` reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SemanticStatus;

/// Saves this device's recall-by-meaning settings (on, paused, the model's URL) and starts or stops
/// the model and the indexing accordingly; answered with its `Semantic` reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetSemantic {
    /// The settings to save.
    pub settings: cowork_core::semantic::SemanticSettings,
}

/// The sessions, most recently active first; answered with its `Sessions` reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListSessions {
    /// Only this workspace's sessions; `None`: every workspace's.
    pub workspace: Option<String>,
    /// Whether archived (hidden) sessions are listed too.
    #[serde(default)]
    pub include_archived: bool,
}

/// A new empty session; answered with its `Session` reply and announced as
/// [`Event::SessionCreated`](super::Event::SessionCreated).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateSession {
    /// The workspace it belongs to.
    pub workspace: String,
    /// Empty: the first user message names the session.
    #[serde(default)]
    pub title: String,
}

/// Saves a turn as given (the embedding API's `appendTurn`; once per `client_key` in its
/// metadata); answered with the stored its `Turn` reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppendTurn {
    /// The session to append to.
    pub session_id: String,
    /// The turn; its number is the session's next.
    pub turn: NewTurn,
    /// Images and files saved with the turn (bytes beside the JSON: [`FilePayload`]; post with
    /// `StorageClient::call_with_files`, one buffer per attachment in order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<FilePayload>,
    /// The largest attachment taken, in bytes (the page's `model.max_attachment_bytes`; 0: the default
    /// limit). Each append says its own: the archive keeps no limit of its own.
    #[serde(default)]
    pub max_attachment_bytes: u64,
}

/// A page of a session's turns, in order; answered with its `Turns` reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetTurns {
    /// The session to read.
    pub session_id: String,
    /// How many turns to skip from the start (0: from turn 1).
    pub offset: usize,
    /// At most this many turns (0: none).
    pub limit: usize,
}

/// Full-text search over the archive; answered with its `Hits` reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Search {
    /// The words and filters.
    pub query: SearchQuery,
}

/// SQLite's integrity check of the archive; answered with its verdict as its `Text` reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IntegrityCheck;

/// Saves the user's message (creating the session first when `session_id` is `None`) and runs
/// the agent loop; progress arrives as [`WorkerMessage::Event`](super::WorkerMessage::Event)s
/// with this request's id.
///
/// `key` is chosen by the client, once per message: a request sent again (after the tab that owned
/// the archive closed before answering) finds the message already saved and does not save it twice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SendMessage {
    /// The session to continue; `None`: a new session in `workspace`, named by the message.
    pub session_id: Option<String>,
    /// The workspace of a new session (unused when `session_id` is given).
    pub workspace: String,
    /// The message and what answers it.
    pub message: Outgoing,
    /// The browser is offline: save the message and answer it later (Retry), without calling the
    /// model now (answered `SendOutcome::Offline`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub offline: bool,
}

/// A message for the model, new or edited ([`SendMessage`], [`EditMessage`]), and what answers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outgoing {
    /// The user's message.
    pub text: String,
    /// The endpoint, model and budget to answer with.
    pub model: ModelSettings,
    /// The client's idempotency key for this message.
    pub key: String,
    /// The page's tools and instructions for this reply.
    #[serde(default)]
    pub host: HostOptions,
    /// Images and files sent with the message (name, MIME type and size in the JSON, the bytes
    /// beside it: post with `StorageClient::call_with_files`, one buffer per attachment in order).
    /// Saved with the user's turn before the model is called; one over the model settings'
    /// `max_attachment_bytes` refuses the message (`ErrorKind::AttachmentTooLarge`, nothing saved). An
    /// edit's files are its own: the edited turn's are not carried over by themselves.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<FilePayload>,
}

/// The bytes of an attachment, by its SHA-256 ([`cowork_core::Attachment::sha256`] of a turn's
/// `attachments`); answered with its `Attachment` reply (to show an image from a blob URL, or download
/// the exact file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadAttachment {
    /// The content's SHA-256, lower-case hex.
    pub sha256: String,
}

/// Runs the agent loop again from the session's end (Retry/Continue after an interrupted reply).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Continue {
    /// The session to continue.
    pub session_id: String,
    /// The endpoint, model and budget to answer with.
    pub model: ModelSettings,
    /// The page's tools and instructions for this reply.
    #[serde(default)]
    pub host: HostOptions,
}

/// The session, its last `last_turns` turns and its unfinished delegated tasks (to resume it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resume {
    /// The session to resume.
    pub session_id: String,
    /// How many of its latest turns to return.
    pub last_turns: usize,
}

/// Runs `conversation_recall` with the model's JSON arguments; answers with the text the model
/// would get.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recall {
    /// The session to recall from.
    pub session_id: String,
    /// The tool call's arguments, as a JSON object in a string.
    pub arguments: String,
}

/// The context the agent loop would send next for the session (nothing is sent or recorded).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssembleContext {
    /// The session whose next request to assemble.
    pub session_id: String,
    /// The model whose budget and token ratio to assemble for.
    pub model: ModelSettings,
    /// The page's tools and instructions to include.
    #[serde(default)]
    pub host: HostOptions,
}

/// The whole archive as JSON Lines (sessions, turns, tool runs, tasks, manifests; never settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExportAll;

/// One session as JSON Lines (the same format as [`Op::ExportAll`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportSession {
    /// The session to export.
    pub session_id: String,
}

/// Adds the sessions of a JSON Lines export (all or nothing; sessions already here are skipped).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Import {
    /// The export's text, as [`Op::ExportAll`] writes it.
    pub text: String,
}

/// A workspace's settings (the defaults when none were saved); answered with its `Workspace` reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkspaceSettings {
    /// The workspace's label.
    pub workspace: String,
}

/// Saves a workspace's settings (archived and exported with its sessions); answered with the saved
/// its `Workspace` reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SaveWorkspaceSettings {
    /// The settings, `workspace` naming the label they belong to.
    pub settings: cowork_core::WorkspaceSettings,
}

/// Gives a session a new title (trimmed; empty is refused as `Invalid`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RenameSession {
    /// The session to rename.
    pub session_id: String,
    /// Its new title.
    pub title: String,
}

/// A new session holding turns 1..=`at_turn` of `session_id` (shared, not copied).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForkSession {
    /// The session to fork.
    pub session_id: String,
    /// The last turn number the fork keeps.
    pub at_turn: i64,
}

/// Hides a session from the list (or shows it again); nothing is deleted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArchiveSession {
    /// The session to hide or show.
    pub session_id: String,
    /// `true` hides it, `false` shows it again.
    pub archived: bool,
}

/// Deletes a session and its turns for good.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeleteSession {
    /// The session to delete.
    pub session_id: String,
}

/// Sends the smallest request to the model endpoint and says whether it answers (Settings' "Test
/// connection"; needs no archive, answered by the tab's own worker).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestConnection {
    /// The endpoint, key and model to try.
    pub model: ModelSettings,
}

/// The session (with its state register) and the manifest of its last model request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionDetails {
    /// The session to describe.
    pub session_id: String,
}

/// Asks the orchestrator to cancel a delegated task (answered at once, out of turn; the task's own
/// events then report it cancelled).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CancelTask {
    /// The orchestrator's id for the task.
    pub task_id: String,
    /// The orchestrator's base URL.
    pub orchestrator_url: String,
}

/// Where the session's conversation branches (edits and regenerations); answered with
/// its `Branches` reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Branches {
    /// The session whose view to look at.
    pub session_id: String,
}

/// Edits user message `turn_number`: the session is forked just before it (nothing is rewritten),
/// the new text is sent in the fork, and the model answers there. The fork is announced as
/// [`Event::SessionCreated`](super::Event::SessionCreated) (the UI opens it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EditMessage {
    /// The session the message is in.
    pub session_id: String,
    /// The user turn being edited.
    pub turn_number: i64,
    /// The new message and what answers it.
    pub message: Outgoing,
}

/// Regenerates assistant turn `turn_number`: the session is forked just before it and the model
/// answers again there (the old reply stays, as the other branch).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Regenerate {
    /// The session the reply is in.
    pub session_id: String,
    /// The assistant turn to answer again.
    pub turn_number: i64,
    /// The endpoint, model and budget to answer with.
    pub model: ModelSettings,
    /// The page's tools and instructions for this reply.
    #[serde(default)]
    pub host: HostOptions,
}

/// Answers a step the orchestrator holds for approval (Loom's `approval_requested`): approve or
/// reject it (answered at once, out of turn; the task's events then say what happened).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerStep {
    /// The orchestrator's id for the task.
    pub task_id: String,
    /// The step waiting for the answer.
    pub subtask_id: String,
    /// Whether the step may go ahead.
    pub approved: bool,
    /// The orchestrator's base URL.
    pub orchestrator_url: String,
}

/// Aborts the model call in flight, if any (answered at once, out of turn).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stop;

/// The user's answer to an [`Event::ApprovalNeeded`](super::Event::ApprovalNeeded) (answered at
/// once, out of turn).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approve {
    /// The tool call being answered (the event's `call_id`).
    pub call_id: String,
    /// Whether the user allowed the call to run.
    pub approved: bool,
}

/// What the page's tool handler returned for an [`Event::ToolRequested`](super::Event::ToolRequested)
/// (answered at once, out of turn).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The tool call being answered (the event's `call_id`).
    pub call_id: String,
    /// The tool's output, as the model will read it.
    pub content: String,
    /// Whether the tool succeeded (`false`: `content` describes the failure).
    pub success: bool,
    /// An MCP tool's `CallToolResult`, verbatim: when present, the worker takes it apart
    /// (`cowork_core::mcp::result_parts`) for the tool turn, instead of `content` and `success`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
}

/// The page is going away (`pagehide`): close the archive and release the OPFS files and the
/// owner lock now, so a reload or another tab can open it at once. Not answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Release;

/// Reads files to import (a Cowork JSON Lines export, or another tool's: ChatGPT, Claude.ai,
/// Claude Code, Codex, OpenAI messages) and says what importing them would add; writes nothing.
/// Answered with its `ImportPreview` reply; a file that cannot be imported is refused here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreviewImport {
    /// The files, their bytes beside the message (see [`FilePayload`]).
    pub files: Vec<FilePayload>,
}

/// Imports the files all or nothing (one transaction; the error names the file, the conversation
/// and the field or line), skipping what was imported before. Progress arrives as
/// [`Event::ImportProgress`](super::Event::ImportProgress); answered with its `Imported` reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportFiles {
    /// The files, their bytes beside the message (see [`FilePayload`]).
    pub files: Vec<FilePayload>,
}

/// Sessions as a ChatGPT-compatible `conversations.json` (forks as branches); answered with
/// its `Text` reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportChatGpt {
    /// The session whose conversation to export (a fork exports its whole tree); `None`: all.
    pub session_id: Option<String>,
}

/// One session as Markdown (a readable transcript); answered with its `Text` reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportMarkdown {
    /// The session to export.
    pub session_id: String,
}

/// The models the endpoint lists (`GET {base}/models`), answered with its `Models` reply; needs no
/// archive, answered by the tab's own worker, out of turn. A failure says why, so the UI can offer
/// free text instead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListModels {
    /// The endpoint and key to ask (the model is not used).
    pub model: ModelSettings,
}

/// Where the owner serves an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// Asks for a reply (the model, tools, delegated tasks: seconds to minutes): served one at a
    /// time, in their own lane, while everything else goes on.
    Reply,
    /// Controls a reply in progress or needs no archive: answered ahead of any queue.
    OutOfTurn,
    /// Done at once on the archive, in the order they arrive.
    AtOnce,
}

impl Op {
    /// Where the owner serves it (exhaustive: a new operation must choose).
    pub fn lane(&self) -> Lane {
        match self {
            Op::Stats
            | Op::ListSessions(_)
            | Op::CreateSession(_)
            | Op::AppendTurn(_)
            | Op::GetTurns(_)
            | Op::Search(_)
            | Op::IntegrityCheck
            | Op::ReadAttachment(_)
            | Op::Resume(_)
            | Op::Recall(_)
            | Op::AssembleContext(_)
            | Op::ExportAll
            | Op::ExportSession(_)
            | Op::Import(_)
            | Op::WorkspaceSettings(_)
            | Op::SaveWorkspaceSettings(_)
            | Op::RenameSession(_)
            | Op::ForkSession(_)
            | Op::ArchiveSession(_)
            | Op::DeleteSession(_)
            | Op::SessionDetails(_)
            | Op::Branches(_)
            | Op::PreviewImport(_)
            | Op::ImportFiles(_)
            | Op::ExportChatGpt(_)
            | Op::ExportMarkdown(_) => Lane::AtOnce,
            Op::SyncStart(_)
            | Op::SyncStatus
            | Op::SemanticStatus
            | Op::SetSemantic(_)
            | Op::TestConnection(_)
            | Op::CancelTask(_)
            | Op::AnswerStep(_)
            | Op::Stop
            | Op::Approve(_)
            | Op::ToolResult(_)
            | Op::Release
            | Op::ListModels(_) => Lane::OutOfTurn,
            Op::SendMessage(_) | Op::Continue(_) | Op::EditMessage(_) | Op::Regenerate(_) => Lane::Reply,
        }
    }

    /// Requests for a reply ([`Lane::Reply`]).
    pub fn is_reply(&self) -> bool {
        self.lane() == Lane::Reply
    }

    /// Operations answered ahead of any queue ([`Lane::OutOfTurn`]).
    pub fn is_out_of_turn(&self) -> bool {
        self.lane() == Lane::OutOfTurn
    }
}

/// The worker's request to the page for the MCP tools to offer (a `ToolRequested` whose arguments are
/// the workspace's servers; the [`ToolResult`]'s content: their specs, JSON). No tool has this name.
pub const MCP_OFFER: &str = "mcp/offer";

/// A tool whose handler lives in the page (registered through the embedding API): the worker offers
/// it to the model and asks the page to run each call ([`Event::ToolRequested`](super::Event::ToolRequested)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostToolSpec {
    /// The name the model calls it by.
    pub name: String,
    /// What it does, for the model (empty: nothing said).
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: serde_json::Value,
    /// Whether a call waits for the user's approval.
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
    /// The page's tools, offered besides the built-in ones (empty: none).
    pub tools: Vec<HostToolSpec>,
    /// Added to the system prompt (empty: nothing added).
    pub instructions: String,
}
