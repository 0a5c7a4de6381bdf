//! The operations a [`Request`](super::Request) asks of the worker, and what the page adds to a
//! model request ([`HostOptions`]).

use super::{FilePayload, ModelSettings};
use cowork_core::prompt::ApprovalPolicy;
use cowork_core::{NewTurn, SearchQuery};
use serde::{Deserialize, Serialize};

/// The operations the worker performs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// Row counts and the database's size, for the storage panel; answered with `Reply::Stats`.
    Stats,
    /// Starts syncing with these settings (restarting with new ones), or stops with `None`; answered
    /// with `Reply::Sync` at once, progress as [`Event::Sync`](super::Event::Sync) to every tab.
    /// Every tab sends it when it starts, so whichever tab owns the archive syncs.
    SyncStart {
        /// What the user set, with the URL of the sync module (`web/sync`, loaded only now).
        settings: Option<super::SyncSettings>,
        /// The absolute URL of the sync module.
        #[serde(default)]
        module_url: String,
    },
    /// Where sync stands; answered with `Reply::Sync`.
    SyncStatus,
    /// The sessions, most recently active first; answered with `Reply::Sessions`.
    ListSessions {
        /// Only this workspace's sessions; `None`: every workspace's.
        workspace: Option<String>,
        /// Whether archived (hidden) sessions are listed too.
        #[serde(default)]
        include_archived: bool,
    },
    /// A new empty session; answered with `Reply::Session` and announced as
    /// [`Event::SessionCreated`](super::Event::SessionCreated).
    CreateSession {
        /// The workspace it belongs to.
        workspace: String,
        /// Empty: the first user message names the session.
        #[serde(default)]
        title: String,
    },
    /// Saves a turn as given (the embedding API's `appendTurn`; once per `client_key` in its
    /// metadata); answered with the stored `Reply::Turn`.
    AppendTurn {
        /// The session to append to.
        session_id: String,
        /// The turn; its number is the session's next.
        turn: NewTurn,
        /// Images and files saved with the turn (bytes beside the JSON: [`FilePayload`]; post with
        /// `StorageClient::call_with_files`, one buffer per attachment in order).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<FilePayload>,
    },
    /// A page of a session's turns, in order; answered with `Reply::Turns`.
    GetTurns {
        /// The session to read.
        session_id: String,
        /// How many turns to skip from the start (0: from turn 1).
        offset: usize,
        /// At most this many turns (0: none).
        limit: usize,
    },
    /// Full-text search over the archive; answered with `Reply::Hits`.
    Search {
        /// The words and filters.
        query: SearchQuery,
    },
    /// SQLite's integrity check of the archive; answered with its verdict as `Reply::Text`.
    IntegrityCheck,
    /// Saves the user's message (creating the session first when `session_id` is `None`) and runs
    /// the agent loop; progress arrives as [`WorkerMessage::Event`](super::WorkerMessage::Event)s
    /// with this request's id.
    ///
    /// `key` is chosen by the client, once per message: a request sent again (after the tab that owned
    /// the archive closed before answering) finds the message already saved and does not save it twice.
    SendMessage {
        /// The session to continue; `None`: a new session in `workspace`, named by `text`.
        session_id: Option<String>,
        /// The workspace of a new session (unused when `session_id` is given).
        workspace: String,
        /// The user's message.
        text: String,
        /// The endpoint, model and budget to answer with.
        model: ModelSettings,
        /// The client's idempotency key for this message.
        key: String,
        /// The page's tools and instructions for this reply.
        #[serde(default)]
        host: HostOptions,
        /// Images and files sent with the message (name, MIME type and size in the JSON, the bytes
        /// beside it: post with `StorageClient::call_with_files`, one buffer per attachment in order).
        /// Saved with the user's turn before the model is called; one over the model settings'
        /// `max_attachment_bytes` refuses the message (`ErrorKind::AttachmentTooLarge`, nothing saved).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<FilePayload>,
        /// The browser is offline: save the message and answer it later (Retry), without calling the
        /// model now (answered `SendOutcome::Offline`).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        offline: bool,
    },
    /// The bytes of an attachment, by its SHA-256 ([`cowork_core::Attachment::sha256`] of a turn's
    /// `attachments`); answered with `Reply::Attachment` (to show an image from a blob URL, or download
    /// the exact file).
    ReadAttachment {
        /// The content's SHA-256, lower-case hex.
        sha256: String,
    },
    /// Runs the agent loop again from the session's end (Retry/Continue after an interrupted reply).
    Continue {
        /// The session to continue.
        session_id: String,
        /// The endpoint, model and budget to answer with.
        model: ModelSettings,
        /// The page's tools and instructions for this reply.
        #[serde(default)]
        host: HostOptions,
    },
    /// The session, its last `last_turns` turns and its unfinished delegated tasks (to resume it).
    Resume {
        /// The session to resume.
        session_id: String,
        /// How many of its latest turns to return.
        last_turns: usize,
    },
    /// Runs `conversation_recall` with the model's JSON arguments; answers with the text the model
    /// would get.
    Recall {
        /// The session to recall from.
        session_id: String,
        /// The tool call's arguments, as a JSON object in a string.
        arguments: String,
    },
    /// The context the agent loop would send next for the session (nothing is sent or recorded).
    AssembleContext {
        /// The session whose next request to assemble.
        session_id: String,
        /// The model whose budget and token ratio to assemble for.
        model: ModelSettings,
        /// The page's tools and instructions to include.
        #[serde(default)]
        host: HostOptions,
    },
    /// The whole archive as JSON Lines (sessions, turns, tool runs, tasks, manifests; never settings).
    ExportAll,
    /// One session as JSON Lines (the same format as [`Op::ExportAll`]).
    ExportSession {
        /// The session to export.
        session_id: String,
    },
    /// Adds the sessions of a JSON Lines export (all or nothing; sessions already here are skipped).
    Import {
        /// The export's text, as [`Op::ExportAll`] writes it.
        text: String,
    },
    /// A workspace's settings (the defaults when none were saved); answered with `Reply::Workspace`.
    WorkspaceSettings {
        /// The workspace's label.
        workspace: String,
    },
    /// Saves a workspace's settings (archived and exported with its sessions); answered with the saved
    /// `Reply::Workspace`.
    SaveWorkspaceSettings {
        /// The settings, `workspace` naming the label they belong to.
        settings: cowork_core::WorkspaceSettings,
    },
    /// Gives a session a new title (trimmed; empty is refused as `Invalid`).
    RenameSession {
        /// The session to rename.
        session_id: String,
        /// Its new title.
        title: String,
    },
    /// A new session holding turns 1..=`at_turn` of `session_id` (shared, not copied).
    ForkSession {
        /// The session to fork.
        session_id: String,
        /// The last turn number the fork keeps.
        at_turn: i64,
    },
    /// Hides a session from the list (or shows it again); nothing is deleted.
    ArchiveSession {
        /// The session to hide or show.
        session_id: String,
        /// `true` hides it, `false` shows it again.
        archived: bool,
    },
    /// Deletes a session and its turns for good.
    DeleteSession {
        /// The session to delete.
        session_id: String,
    },
    /// Sends the smallest request to the model endpoint and says whether it answers (Settings' "Test
    /// connection"; needs no archive, answered by the tab's own worker).
    TestConnection {
        /// The endpoint, key and model to try.
        model: ModelSettings,
    },
    /// The session (with its state register) and the manifest of its last model request.
    SessionDetails {
        /// The session to describe.
        session_id: String,
    },
    /// Asks the orchestrator to cancel a delegated task (answered at once, out of turn; the task's own
    /// events then report it cancelled).
    CancelTask {
        /// The orchestrator's id for the task.
        task_id: String,
        /// The orchestrator's base URL.
        orchestrator_url: String,
    },
    /// Where the session's conversation branches (edits and regenerations); answered with
    /// `Reply::Branches`.
    Branches {
        /// The session whose view to look at.
        session_id: String,
    },
    /// Edits user message `turn_number`: the session is forked just before it (nothing is rewritten),
    /// the new text is sent in the fork, and the model answers there. The fork is announced as
    /// [`Event::SessionCreated`](super::Event::SessionCreated) (the UI opens it).
    EditMessage {
        /// The session the message is in.
        session_id: String,
        /// The user turn being edited.
        turn_number: i64,
        /// The new text.
        text: String,
        /// The endpoint, model and budget to answer with.
        model: ModelSettings,
        /// The client's idempotency key for the new message.
        key: String,
        /// The page's tools and instructions for this reply.
        #[serde(default)]
        host: HostOptions,
        /// The new message's images and files (as [`Op::SendMessage`]'s; the edited turn's are not
        /// carried over by themselves: send them again to keep them).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<FilePayload>,
    },
    /// Regenerates assistant turn `turn_number`: the session is forked just before it and the model
    /// answers again there (the old reply stays, as the other branch).
    Regenerate {
        /// The session the reply is in.
        session_id: String,
        /// The assistant turn to answer again.
        turn_number: i64,
        /// The endpoint, model and budget to answer with.
        model: ModelSettings,
        /// The page's tools and instructions for this reply.
        #[serde(default)]
        host: HostOptions,
    },
    /// Answers a step the orchestrator holds for approval (Loom's `approval_requested`): approve or
    /// reject it (answered at once, out of turn; the task's events then say what happened).
    AnswerStep {
        /// The orchestrator's id for the task.
        task_id: String,
        /// The step waiting for the answer.
        subtask_id: String,
        /// Whether the step may go ahead.
        approved: bool,
        /// The orchestrator's base URL.
        orchestrator_url: String,
    },
    /// Aborts the model call in flight, if any (answered at once, out of turn).
    Stop,
    /// The user's answer to an [`Event::ApprovalNeeded`](super::Event::ApprovalNeeded) (answered at
    /// once, out of turn).
    Approve {
        /// The tool call being answered (the event's `call_id`).
        call_id: String,
        /// Whether the user allowed the call to run.
        approved: bool,
    },
    /// What the page's tool handler returned for an [`Event::ToolRequested`](super::Event::ToolRequested)
    /// (answered at once, out of turn).
    ToolResult {
        /// The tool call being answered (the event's `call_id`).
        call_id: String,
        /// The tool's output, as the model will read it.
        content: String,
        /// Whether the tool succeeded (`false`: `content` describes the failure).
        success: bool,
    },
    /// The page is going away (`pagehide`): close the archive and release the OPFS files and the
    /// owner lock now, so a reload or another tab can open it at once. Not answered.
    Release,
    /// Reads files to import (a Cowork JSON Lines export, or another tool's: ChatGPT, Claude.ai,
    /// Claude Code, Codex, OpenAI messages) and says what importing them would add; writes nothing.
    /// Answered with `Reply::ImportPreview`; a file that cannot be imported is refused here.
    PreviewImport {
        /// The files, their bytes beside the message (see [`FilePayload`]).
        files: Vec<FilePayload>,
    },
    /// Imports the files all or nothing (one transaction; the error names the file, the conversation
    /// and the field or line), skipping what was imported before. Progress arrives as
    /// [`Event::ImportProgress`](super::Event::ImportProgress); answered with `Reply::Imported`.
    ImportFiles {
        /// The files, their bytes beside the message (see [`FilePayload`]).
        files: Vec<FilePayload>,
    },
    /// Sessions as a ChatGPT-compatible `conversations.json` (forks as branches); answered with
    /// `Reply::Text`.
    ExportChatGpt {
        /// The session whose conversation to export (a fork exports its whole tree); `None`: all.
        session_id: Option<String>,
    },
    /// One session as Markdown (a readable transcript); answered with `Reply::Text`.
    ExportMarkdown {
        /// The session to export.
        session_id: String,
    },
    /// The models the endpoint lists (`GET {base}/models`), answered with `Reply::Models`; needs no
    /// archive, answered by the tab's own worker, out of turn. A failure says why, so the UI can offer
    /// free text instead.
    ListModels {
        /// The endpoint and key to ask (the model is not used).
        model: ModelSettings,
    },
}

impl Op {
    /// Requests for a reply (the model, tools, delegated tasks: seconds to minutes): the owner serves
    /// them one at a time, in their own lane, and everything else at once, meanwhile too.
    pub fn is_reply(&self) -> bool {
        matches!(self, Op::SendMessage { .. } | Op::EditMessage { .. } | Op::Regenerate { .. } | Op::Continue { .. })
    }

    /// Operations answered ahead of any queue (they control a reply in progress, or need no archive).
    pub fn is_out_of_turn(&self) -> bool {
        matches!(
            self,
            Op::Stop
                | Op::Approve { .. }
                | Op::ToolResult { .. }
                | Op::Release
                | Op::CancelTask { .. }
                | Op::AnswerStep { .. }
                | Op::TestConnection { .. }
                | Op::ListModels { .. }
                | Op::SyncStart { .. }
                | Op::SyncStatus
        )
    }
}

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
