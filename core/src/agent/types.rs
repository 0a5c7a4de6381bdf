//! The loop's public types: what it runs on ([`ToolHost`], [`AgentSettings`]; HTTP goes through the
//! injected `Transport`) and what it reports ([`AgentEvent`], [`Outcome`]).

use crate::context::ContextSettings;
use crate::prompt::{ApprovalPolicy, PromptOptions};
use crate::provider::ModelSettings;
use crate::state::ExtractionRules;
use crate::ToolCall;
use serde_json::Value;

/// What a tool run produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutcome {
    /// The tool result as the model reads it (the tool-result turn's content).
    pub content: String,
    /// Whether the tool succeeded; `false` for a failure, a refusal or a declined call.
    pub success: bool,
    /// The tool's whole result when it is more than `content` (an MCP `CallToolResult`, see
    /// [`crate::mcp::result_parts`]), kept in the turn's `metadata.result`.
    pub result: Option<Value>,
    /// Files the result carried (an MCP tool's images, audio, blobs), saved with the tool turn.
    pub attachments: Vec<crate::NewAttachment>,
}

impl ToolOutcome {
    /// An outcome that is only text.
    pub fn text(content: impl Into<String>, success: bool) -> ToolOutcome {
        ToolOutcome { content: content.into(), success, ..ToolOutcome::default() }
    }
}

/// The tools beyond `conversation_recall` (which the loop answers from the archive itself), and the
/// user's say on the ones that need approval.
#[allow(async_fn_in_trait)]
pub trait ToolHost {
    /// Tool definitions in the OpenAI function format.
    fn definitions(&self) -> Vec<Value>;
    /// Whether calls to `tool_name` run at once or ask the user first.
    fn approval(&self, tool_name: &str) -> ApprovalPolicy;
    /// Asks the user; `true` when approved.
    async fn approve(&self, call: &ToolCall) -> bool;
    /// Runs a call already allowed to run.
    async fn call(&self, call: &ToolCall) -> ToolOutcome;
    /// The embedding of a `conversation_recall` search's query, when recall by meaning is on here
    /// (unit length, of the archive's semantic model), and the words to search for with it (the query
    /// without its stop words, as the model's worker gives them); `None`: the search is by words alone.
    async fn embed_query(&self, _text: &str) -> Option<(Vec<f32>, String)> {
        None
    }
}

/// A host with no tools of its own.
pub struct NoTools;

impl ToolHost for NoTools {
    fn definitions(&self) -> Vec<Value> {
        Vec::new()
    }
    fn approval(&self, _: &str) -> ApprovalPolicy {
        ApprovalPolicy::AskEveryTime
    }
    async fn approve(&self, _: &ToolCall) -> bool {
        false
    }
    async fn call(&self, call: &ToolCall) -> ToolOutcome {
        ToolOutcome::text(format!("unknown tool {}", call.name), false)
    }
}

/// What the UI sees while the loop runs.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    /// A turn was committed (an assistant turn starts empty and `interrupted`, streams, and is sent
    /// again once complete, or failed).
    TurnAppended {
        /// The turn as stored.
        turn: crate::Turn,
    },
    /// More text of the streaming reply.
    StreamDelta {
        /// The assistant turn being streamed.
        turn_number: i64,
        /// The new text, to append to what came before.
        text: String,
    },
    /// More of the streaming reply's reasoning ("thinking"), which comes before or between its text and
    /// is never part of it; the finished turn keeps the whole of it in `metadata.reasoning`.
    ReasoningDelta {
        /// The assistant turn being streamed.
        turn_number: i64,
        /// The new reasoning text, to append to what came before.
        text: String,
    },
    /// A tool call is about to run (before any approval is asked).
    ToolStarted {
        /// The assistant turn that made the call.
        turn_number: i64,
        /// The call as the model made it.
        call: ToolCall,
    },
    /// A tool call ended and its result turn was committed.
    ToolFinished {
        /// The tool-result turn's number.
        turn_number: i64,
        /// The tool that was called.
        tool_name: String,
        /// Whether it succeeded (`false` when declined or refused too).
        success: bool,
        /// How long it took, in milliseconds, the wait for approval included.
        duration_ms: i64,
    },
    /// Waiting before a retry (a countdown for the UI).
    Retrying {
        /// The attempt that just failed, from 1.
        attempt: u32,
        /// How long until the next attempt, in milliseconds.
        wait_ms: u64,
        /// What kind of failure is being retried (rate limit, server error, network).
        kind: crate::ErrorKind,
        /// What went wrong, for the user.
        reason: String,
    },
    /// A delegated task moved on: its goal, status and the checklist of its subtasks so far (every
    /// orchestrator event is also archived verbatim).
    TaskProgress {
        /// The orchestrator's id for the task.
        task_id: String,
        /// What moved it: the event's wire name, `task_submitted`, or `status` (a polled snapshot).
        event_type: String,
        /// The task's status, normalised.
        status: crate::TaskStatus,
        /// The task's goal.
        goal: String,
        /// The subtasks so far, in the plan's order.
        checklist: Vec<crate::orchestrator::ChecklistItem>,
    },
    /// The run ended with an error (the `Err` it returns).
    Error {
        /// What kind of failure it is (the UI offers Settings or Storage by it).
        kind: crate::ErrorKind,
        /// The error's text, for the user.
        message: String,
    },
}

/// Settings for one run of the loop.
#[derive(Debug, Clone)]
pub struct AgentSettings {
    /// The model endpoint, model and token budget.
    pub provider: ModelSettings,
    /// Context assembly (its `chars_per_token` is replaced by the model's calibrated ratio).
    pub context: ContextSettings,
    /// What the system prompt says and which built-in tools it offers.
    pub prompt: PromptOptions,
    /// How the session-state register is read from turns.
    pub rules: ExtractionRules,
    /// Model calls per user message, at most.
    pub max_iterations: u32,
    /// The orchestrator for `delegate_task` (offered to the model only when set and
    /// `prompt.delegation` is on).
    pub orchestrator_url: Option<String>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The model answered without asking for more tools.
    Done {
        /// The final assistant turn's number.
        assistant_turn: i64,
    },
    /// The stream was cut or stopped; the partial reply is saved as an interrupted turn.
    Interrupted {
        /// The interrupted assistant turn's number.
        assistant_turn: i64,
        /// Why it stopped, for the user.
        message: String,
    },
    /// The iteration limit was reached while the model still wanted tools.
    IterationLimit,
}
