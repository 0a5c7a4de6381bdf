//! The task orchestrator's wire format (Loom's task API), pure: the requests to make, tolerant decoding of
//! its responses and SSE events, a progress fold for the live checklist, and the `delegate_task` result
//! text the model reads.
//!
//! - Requests: `POST {base}/tasks` ([`create_task_request`]), `GET {base}/tasks/{id}` ([`task_status_request`]),
//!   `GET {base}/runs/{id}/stream` ([`run_stream_request`], Loom's replaying stream, preferred),
//!   `GET {base}/tasks/{id}/stream` ([`task_stream_request`], live only), `DELETE {base}/tasks/{id}`
//!   ([`cancel_task_request`]), `POST {base}/tasks/{id}/approve` ([`approve_task_request`]).
//! - Both streams' events become a [`ReceivedEvent`] ([`receive_sse_event`]): the type, the payload as
//!   archived, and Loom's `sequence` / `event_id`, by which an event replayed after a reconnect is
//!   recognised. Heartbeats, leases and telemetry decode as [`LoomEvent::Telemetry`] (archived, not shown).
//! - Decoding is tolerant: missing fields default, numbers may come as strings, unknown fields are ignored.
//!   An event of a known type whose data is not JSON still counts as that type (so a `task_completed`
//!   always ends the wait); an unknown type is kept as [`LoomEvent::Unknown`], never an error.
//! - Changed files come from `tool_call_completed {files_changed}` (where Loom reports them), subtask
//!   events and `task_completed`. Manual approvals: `approval_requested` puts a [`PendingApproval`] on its
//!   step until `approval_received` / `approval_rejected`.
//! - Events are read in both shapes seen in the wild: Loom's own (`task_plan_ready {subtask_ids}`,
//!   `subtask_failed {feedback}`, `task_failed {failed_subtasks}`) and the richer one of Cowork's dev server
//!   (`task_plan_ready {plan: {subtasks}}`, `subtask_failed {error}`, `task_completed {result: {summary,
//!   files_changed}}`). Changed files are read from `files_changed`, `result.files_changed`,
//!   `changed_files` or `workspace_changes`, as path strings (`"src/a.py"`, `"src/a.py (modified)"`),
//!   `{path, action}` objects, or `{created: [..], modified: [..], deleted: [..]}`.
//! - [`TaskProgress`] folds events (and `GET /tasks/{id}` snapshots, the fallback when the stream breaks or
//!   the task finished before it opened) into the checklist; [`format_result`] renders the tool result in
//!   the design notes' format, which [`crate::state`] reads back for the session-state register;
//!   [`format_submitted`], [`format_still_running`] and [`format_not_started`] cover `wait: false`, a
//!   broken stream and an unreachable orchestrator ([`failure_message`] explains that one, CORS included).
//!
//! - `request.rs`: the requests; `decode.rs`: the responses and events, read tolerantly (`quiet.rs`: the
//!   events it folds as telemetry); `envelope.rs`: which stream an event came from;
//! - `progress.rs`: the fold behind the live checklist; `report.rs`: the texts the model and the user read.

mod decode;
mod envelope;
mod progress;
mod quiet;
mod report;
mod request;

#[cfg(test)]
mod tests;

pub use decode::{
    decode_event, parse_created_task, parse_task_status, CreatedTask, FileChange, LoomEvent, PendingApproval,
    ProgressCounts, SubtaskInfo, TaskSnapshot,
};
pub use envelope::{archived_event_key, decode_sse_event, receive_sse_event, ReceivedEvent};
pub use progress::{ChecklistItem, SubtaskProgress, TaskProgress, VerificationNote};
pub use report::{failure_message, format_not_started, format_result, format_still_running, format_submitted};
pub use request::{
    approve_task_request, cancel_task_request, create_task_request, run_stream_request, task_status_request,
    task_stream_request, TaskSubmission,
};

/// Subtask, event and note lists in a [`TaskProgress`] stop growing here (bounded memory on a runaway
/// stream).
pub const MAX_TRACKED: usize = 200;

/// The `needs` field of a `delegate_task` result turn's metadata when the workspace has no orchestrator
/// directory: the UI offers the setting beside it.
pub const NEEDS_ORCHESTRATOR_DIRECTORY: &str = "orchestrator_directory";
