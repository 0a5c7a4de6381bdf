//! Loom's responses and events, decoded tolerantly into Cowork's own types (missing fields default,
//! numbers may be strings, unknown fields and event types are kept, never an error).

use serde_json::{Map, Value};

use super::quiet::is_quiet_event;
use super::MAX_TRACKED;
use crate::{Error, Result, TaskStatus};

/// The `201` answer to `POST /tasks`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreatedTask {
    /// The orchestrator's id for the new task (never blank).
    pub task_id: String,
    /// [`TaskStatus::is_unknown`] when the answer gave none.
    pub status: TaskStatus,
    /// The orchestrator's note on the submission; empty when it sent none.
    pub message: String,
    /// Loom's run id, when it sends one.
    pub run_id: Option<String>,
}

/// Reads the answer to `POST /tasks`; only `task_id` is required.
pub fn parse_created_task(body: &str) -> Result<CreatedTask> {
    let v = parse_json(body, "reading the orchestrator's answer to creating a task")?;
    let task_id = text(&v, "task_id").filter(|id| !id.trim().is_empty()).ok_or_else(|| {
        Error::Invalid(format!("the orchestrator's answer to creating a task has no task_id: {}", excerpt(body)))
    })?;
    Ok(CreatedTask {
        task_id,
        status: TaskStatus::parse(&text(&v, "status").unwrap_or_default()),
        message: text(&v, "message").unwrap_or_default(),
        run_id: text(&v, "run_id"),
    })
}

/// One subtask as the plan lists it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubtaskInfo {
    /// The subtask's id (`id` or `subtask_id`), as events refer to it.
    pub id: String,
    /// What the subtask does (`description`, `title` or `name`); empty when not given.
    pub description: String,
    /// `pending`, `running`, `completed`, `failed`, `skipped` … (empty when not given).
    pub status: String,
    /// The subtask's result summary; empty when not given.
    pub summary: String,
}

/// `progress` of `GET /tasks/{id}`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProgressCounts {
    /// Subtasks in the plan.
    pub total_subtasks: i64,
    /// Subtasks finished successfully.
    pub completed: i64,
    /// Subtasks that failed.
    pub failed: i64,
    /// Subtasks not started yet.
    pub pending: i64,
    /// Subtasks running now.
    pub running: i64,
    /// How far the task is, 0–100 as the orchestrator reports it (0 when missing).
    pub percent_complete: f64,
}

/// A changed file, as the orchestrator reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The file's path as reported (relative to the workspace, usually).
    pub path: String,
    /// `created`, `modified`, `deleted` … when known.
    pub action: Option<String>,
}

/// `GET /tasks/{id}`: what the task looks like now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskSnapshot {
    /// The task's id; empty when the answer gave none.
    pub task_id: String,
    /// The task's goal; empty when the answer gave none.
    pub goal: String,
    /// [`TaskStatus::is_unknown`] when the answer gave none.
    pub status: TaskStatus,
    /// The plan's subtasks (`plan.subtasks`, `subtasks` or `subtask_ids`); empty before planning.
    pub subtasks: Vec<SubtaskInfo>,
    /// Subtask counts; zeros when the answer has no `progress`.
    pub progress: ProgressCounts,
    /// From `result.summary` when the orchestrator gives one.
    pub summary: Option<String>,
    /// Files the task changed, one entry per path.
    pub files_changed: Vec<FileChange>,
    /// From `error` (or `result.error`) when the task failed.
    pub error: Option<String>,
}

impl TaskSnapshot {
    /// The task will send nothing more ([`TaskStatus::is_terminal`]).
    pub fn is_terminal(&self) -> bool {
        self.status.is_terminal()
    }
}

/// Reads `GET /tasks/{id}`; every field is optional.
pub fn parse_task_status(body: &str) -> Result<TaskSnapshot> {
    let v = parse_json(body, "reading the orchestrator's task status")?;
    let p = v.get("progress").cloned().unwrap_or(Value::Null);
    let result = v.get("result").cloned().unwrap_or(Value::Null);
    Ok(TaskSnapshot {
        task_id: text(&v, "task_id").unwrap_or_default(),
        goal: text(&v, "goal").unwrap_or_default(),
        status: TaskStatus::parse(&text(&v, "status").unwrap_or_default()),
        subtasks: v.get("plan").map(plan_subtasks).unwrap_or_default(),
        progress: ProgressCounts {
            total_subtasks: int(&p, "total_subtasks").unwrap_or(0),
            completed: int(&p, "completed").unwrap_or(0),
            failed: int(&p, "failed").unwrap_or(0),
            pending: int(&p, "pending").unwrap_or(0),
            running: int(&p, "running").unwrap_or(0),
            percent_complete: number(&p, "percent_complete").unwrap_or(0.0),
        },
        summary: text(&result, "summary"),
        files_changed: files_changed(&v),
        error: text(&v, "error").or_else(|| text(&result, "error")),
    })
}

// ---------------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------------

/// One event of `GET /tasks/{id}/stream`, by type. The archive keeps the raw data; this is what it means.
#[derive(Debug, Clone, PartialEq)]
pub enum LoomEvent {
    /// `task_created`: the orchestrator accepted the task.
    TaskCreated,
    /// `task_planning`: the plan is being written.
    TaskPlanning,
    /// A plan (or, with `replanned`, a new plan). Subtasks may carry only ids (Loom sends `subtask_ids`).
    TaskPlanReady {
        /// The plan's subtasks, in order.
        subtasks: Vec<SubtaskInfo>,
        /// This plan replaces an earlier one (`replanned: true`).
        replanned: bool,
    },
    /// `task_executing`: the plan's subtasks start running.
    TaskExecuting,
    /// `task_replanning`: the plan is being revised.
    TaskReplanning {
        /// Why (`reason` or `message`), when given.
        reason: Option<String>,
    },
    /// `subtask_started`: a subtask began running.
    SubtaskStarted {
        /// The subtask's id (empty when the event gave none; the same for the other subtask events).
        subtask_id: String,
    },
    /// `subtask_completed`: a subtask finished.
    SubtaskCompleted {
        /// The subtask's id.
        subtask_id: String,
        /// The subtask's final status word, when given.
        status: Option<String>,
        /// What the subtask did, when given.
        summary: Option<String>,
        /// How long it ran, in seconds (`duration` or `duration_seconds`).
        duration_secs: Option<f64>,
        /// `passed`, `failed` or the orchestrator's own word, from `verification_outcome` (or `verification`).
        verification_outcome: Option<String>,
        /// Files the subtask changed.
        files_changed: Vec<FileChange>,
    },
    /// `subtask_failed`: a subtask failed (it may be retried or replanned).
    SubtaskFailed {
        /// The subtask's id.
        subtask_id: String,
        /// What went wrong: `error`, else Loom's verification `feedback` (or `summary`, `message`, `reason`).
        error: Option<String>,
    },
    /// `subtask_retrying`: a failed subtask runs again.
    SubtaskRetrying {
        /// The subtask's id.
        subtask_id: String,
        /// Which attempt this is, as the orchestrator counts.
        attempt: Option<i64>,
        /// Why it is retried (`feedback`, `reason` or `error`), when given.
        reason: Option<String>,
    },
    /// A verification result, for one subtask (`subtask_id`) or the whole task; `detail` from `checks`,
    /// `feedback`, `summary` …
    VerificationPassed {
        /// The subtask verified; `None` for the whole task.
        subtask_id: Option<String>,
        /// What was checked (the `checks` names joined), or the verifier's words.
        detail: Option<String>,
    },
    /// `verification_failed`: like [`LoomEvent::VerificationPassed`], but the check failed.
    VerificationFailed {
        /// The subtask verified; `None` for the whole task.
        subtask_id: Option<String>,
        /// What failed: the `checks` names joined, or the verifier's feedback.
        detail: Option<String>,
    },
    /// `task_completed`: the task succeeded; final.
    TaskCompleted {
        /// The result summary (`summary` or `result.summary`), when given.
        summary: Option<String>,
        /// Files the task changed.
        files_changed: Vec<FileChange>,
    },
    /// `task_failed`: the task gave up; final.
    TaskFailed {
        /// Why (`error`, `reason`, `message` or `result.error`), when given.
        error: Option<String>,
        /// Ids of the subtasks that failed (Loom's `failed_subtasks`).
        failed_subtasks: Vec<String>,
        /// Files changed before it failed.
        files_changed: Vec<FileChange>,
    },
    /// `task_cancelled` (or `task_canceled`): stopped by request; final.
    TaskCancelled,
    /// `tool_call_completed`: a tool ran inside a subtask; Loom reports the files it wrote here (and not
    /// in `task_completed`).
    ToolCallCompleted {
        /// The subtask that ran it (may be empty).
        subtask_id: String,
        /// The tool's name (`write_file`, `edit_file`, `shell_execute` …), empty when not given.
        tool: String,
        /// Whether it succeeded (`success`, true when missing); a failed call changed nothing.
        success: bool,
        /// Files it changed (`files_changed`), each with the action its tool implies when it does.
        files_changed: Vec<FileChange>,
    },
    /// `approval_requested`: the orchestrator holds a step until the user decides (`approval_mode:
    /// "manual"`); answered with [`super::approve_task_request`].
    ApprovalRequested(PendingApproval),
    /// `approval_received`, `approval_rejected` or `approval_timed_out`: the held step was decided.
    ApprovalResolved {
        /// The subtask decided.
        subtask_id: String,
        /// `true` for `approval_received`; a rejected (or timed-out) step counts as failed.
        approved: bool,
    },
    /// `run_snapshot`: Loom's replaying stream has nothing more of an inactive task and says where it
    /// ended; terminal when `terminal` is true and its status is final.
    RunSnapshot {
        /// The task's status as the snapshot gives it.
        status: TaskStatus,
    },
    /// A Loom event that changes nothing the checklist shows (heartbeats, leases, telemetry, policy and
    /// verification details …): archived, not shown.
    Telemetry {
        /// The event's name as received.
        event_type: String,
    },
    /// A type this version does not know, kept to be shown.
    Unknown {
        /// The event's name as received (trimmed).
        event_type: String,
        /// The event's data, verbatim.
        data: String,
    },
}

impl LoomEvent {
    /// The wire name of the event type.
    pub fn event_type(&self) -> &str {
        match self {
            LoomEvent::TaskCreated => "task_created",
            LoomEvent::TaskPlanning => "task_planning",
            LoomEvent::TaskPlanReady { .. } => "task_plan_ready",
            LoomEvent::TaskExecuting => "task_executing",
            LoomEvent::TaskReplanning { .. } => "task_replanning",
            LoomEvent::SubtaskStarted { .. } => "subtask_started",
            LoomEvent::SubtaskCompleted { .. } => "subtask_completed",
            LoomEvent::SubtaskFailed { .. } => "subtask_failed",
            LoomEvent::SubtaskRetrying { .. } => "subtask_retrying",
            LoomEvent::VerificationPassed { .. } => "verification_passed",
            LoomEvent::VerificationFailed { .. } => "verification_failed",
            LoomEvent::TaskCompleted { .. } => "task_completed",
            LoomEvent::TaskFailed { .. } => "task_failed",
            LoomEvent::TaskCancelled => "task_cancelled",
            LoomEvent::ToolCallCompleted { .. } => "tool_call_completed",
            LoomEvent::ApprovalRequested(_) => "approval_requested",
            LoomEvent::ApprovalResolved { approved: true, .. } => "approval_received",
            LoomEvent::ApprovalResolved { approved: false, .. } => "approval_rejected",
            LoomEvent::RunSnapshot { .. } => "run_snapshot",
            LoomEvent::Telemetry { event_type } | LoomEvent::Unknown { event_type, .. } => event_type,
        }
    }

    /// The task will send nothing more (Loom closes the stream after these).
    pub fn is_terminal(&self) -> bool {
        match self {
            LoomEvent::TaskCompleted { .. } | LoomEvent::TaskFailed { .. } | LoomEvent::TaskCancelled => true,
            LoomEvent::RunSnapshot { status } => status.is_terminal(),
            _ => false,
        }
    }
}

/// A step the orchestrator holds until the user approves or rejects it (Loom's `approval_requested`
/// with `approval_mode: "manual"`); answered with [`crate::agent::delegate::respond_to_approval`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct PendingApproval {
    /// The subtask held, as the decision must name it.
    pub subtask_id: String,
    /// What the step did or will do (Loom's `proposed_action`: the step's result summary).
    pub proposed_action: String,
    /// Why it is held (Loom: "Confidence medium (0.62)").
    pub reason: String,
    /// Loom's risk level (its confidence band: `high`, `medium`, `low` …); empty when not given.
    pub risk_level: String,
}

/// [`decode_sse_event`](super::decode_sse_event) for an event that is not a `run_event` envelope.
pub(super) fn decode_plain_sse_event(ev: &crate::sse::SseEvent) -> LoomEvent {
    match ev.event.as_deref().filter(|t| !t.is_empty() && *t != "message") {
        Some(event_type) => decode_event(event_type, &ev.data),
        None => {
            let v: Value = serde_json::from_str(&ev.data).unwrap_or(Value::Null);
            let event_type =
                text(&v, "event_type").or_else(|| text(&v, "type")).unwrap_or_else(|| "message".to_string());
            decode_event(&event_type, &ev.data)
        }
    }
}

/// Decodes an event from its type and raw data (as the archive stores them). Never fails.
pub fn decode_event(event_type: &str, data: &str) -> LoomEvent {
    let parsed: Value = serde_json::from_str(data).unwrap_or(Value::Null);
    let empty = Value::Object(Map::new());
    let v = if parsed.is_object() { &parsed } else { &empty };
    let subtask_id = || text(v, "subtask_id").unwrap_or_default();
    match event_type.trim() {
        "task_created" => LoomEvent::TaskCreated,
        "task_planning" => LoomEvent::TaskPlanning,
        "task_plan_ready" => LoomEvent::TaskPlanReady {
            subtasks: plan_subtasks(v),
            replanned: v.get("replanned").and_then(Value::as_bool).unwrap_or(false),
        },
        "task_executing" => LoomEvent::TaskExecuting,
        "task_replanning" => LoomEvent::TaskReplanning { reason: first_text(v, &["reason", "message"]) },
        "subtask_started" => LoomEvent::SubtaskStarted { subtask_id: subtask_id() },
        "subtask_completed" => LoomEvent::SubtaskCompleted {
            subtask_id: subtask_id(),
            status: text(v, "status"),
            summary: text(v, "summary"),
            duration_secs: number(v, "duration").or_else(|| number(v, "duration_seconds")),
            verification_outcome: verification_outcome(v),
            files_changed: files_changed(v),
        },
        "subtask_failed" => LoomEvent::SubtaskFailed {
            subtask_id: subtask_id(),
            error: first_text(v, &["error", "feedback", "summary", "message", "reason"]),
        },
        "subtask_retrying" => LoomEvent::SubtaskRetrying {
            subtask_id: subtask_id(),
            attempt: int(v, "attempt"),
            reason: first_text(v, &["feedback", "reason", "error"]),
        },
        "verification_passed" => {
            LoomEvent::VerificationPassed { subtask_id: text(v, "subtask_id"), detail: verification_detail(v) }
        }
        "verification_failed" => {
            LoomEvent::VerificationFailed { subtask_id: text(v, "subtask_id"), detail: verification_detail(v) }
        }
        "task_completed" => LoomEvent::TaskCompleted {
            summary: text(v, "summary").or_else(|| v.get("result").and_then(|r| text(r, "summary"))),
            files_changed: files_changed(v),
        },
        "task_failed" => LoomEvent::TaskFailed {
            // Loom's `reason` is a code (`subtask_failure`): used only when nothing else says why.
            error: first_text(v, &["error", "message"])
                .or_else(|| v.get("result").and_then(|r| text(r, "error")))
                .or_else(|| {
                    let failed = v.get("failed_subtasks").and_then(Value::as_array).is_some_and(|a| !a.is_empty());
                    if failed {
                        None
                    } else {
                        text(v, "reason")
                    }
                }),
            failed_subtasks: v
                .get("failed_subtasks")
                .and_then(Value::as_array)
                .map(|ids| ids.iter().filter_map(value_text).collect())
                .unwrap_or_default(),
            files_changed: files_changed(v),
        },
        "task_cancelled" | "task_canceled" => LoomEvent::TaskCancelled,
        "tool_call_completed" => {
            let tool = text(v, "tool").unwrap_or_default();
            let action = match tool.as_str() {
                "edit_file" | "apply_patch" => Some("modified"),
                "delete_file" => Some("deleted"),
                _ => None,
            };
            LoomEvent::ToolCallCompleted {
                subtask_id: subtask_id(),
                success: v.get("success").and_then(Value::as_bool).unwrap_or(true),
                files_changed: files_changed(v)
                    .into_iter()
                    .map(|f| FileChange { action: f.action.or(action.map(str::to_string)), ..f })
                    .collect(),
                tool,
            }
        }
        "approval_requested" => LoomEvent::ApprovalRequested(PendingApproval {
            subtask_id: subtask_id(),
            proposed_action: text(v, "proposed_action").unwrap_or_default(),
            reason: text(v, "reason").unwrap_or_default(),
            risk_level: text(v, "risk_level").unwrap_or_default(),
        }),
        "approval_received" | "approval_rejected" | "approval_timed_out" => LoomEvent::ApprovalResolved {
            subtask_id: subtask_id(),
            approved: event_type.trim() == "approval_received"
                && v.get("approved").and_then(Value::as_bool).unwrap_or(true),
        },
        "run_snapshot" => LoomEvent::RunSnapshot { status: TaskStatus::parse(&text(v, "status").unwrap_or_default()) },
        other if is_quiet_event(other) => LoomEvent::Telemetry { event_type: other.to_string() },
        other => LoomEvent::Unknown { event_type: other.to_string(), data: data.to_string() },
    }
}

// ---- tolerant field access ------------------------------------------------------------------------

fn parse_json(body: &str, what: &str) -> Result<Value> {
    use crate::Context;
    serde_json::from_str(body).context(format!("{what} ({})", excerpt(body)))
}

fn excerpt(body: &str) -> String {
    let flat = body.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 200 {
        format!("{}…", flat.chars().take(199).collect::<String>())
    } else if flat.is_empty() {
        "an empty body".to_string()
    } else {
        flat
    }
}

/// A string, or a number/bool shown as text; `None` for null, empty strings, arrays and objects.
fn value_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(value_text)
}

pub(super) fn first_text(v: &Value, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| text(v, k))
}

fn number(v: &Value, key: &str) -> Option<f64> {
    match v.get(key)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|n: &f64| n.is_finite())
}

fn int(v: &Value, key: &str) -> Option<i64> {
    number(v, key).map(|n| n as i64)
}

/// `plan.subtasks`, `subtasks` or `subtask_ids` of an object (a plan or an event).
fn plan_subtasks(v: &Value) -> Vec<SubtaskInfo> {
    let list = v
        .get("plan")
        .and_then(|p| p.get("subtasks"))
        .or_else(|| v.get("subtasks"))
        .or_else(|| v.get("subtask_ids"))
        .and_then(Value::as_array);
    let Some(list) = list else { return Vec::new() };
    list.iter()
        .take(MAX_TRACKED)
        .filter_map(|s| match s {
            Value::Object(_) => Some(SubtaskInfo {
                id: text(s, "id").or_else(|| text(s, "subtask_id"))?,
                description: first_text(s, &["description", "title", "name"]).unwrap_or_default(),
                status: text(s, "status").unwrap_or_default(),
                summary: text(s, "summary").unwrap_or_default(),
            }),
            other => value_text(other).map(|id| SubtaskInfo { id, ..SubtaskInfo::default() }),
        })
        .collect()
}

fn verification_outcome(v: &Value) -> Option<String> {
    match v.get("verification_outcome").or_else(|| v.get("verification"))? {
        Value::Object(o) => {
            let passed = o.get("passed").and_then(Value::as_bool);
            passed
                .map(|p| if p { "passed" } else { "failed" }.to_string())
                .or_else(|| o.get("outcome").and_then(value_text))
        }
        Value::Bool(b) => Some(if *b { "passed" } else { "failed" }.to_string()),
        other => value_text(other),
    }
}

fn verification_detail(v: &Value) -> Option<String> {
    if let Some(checks) = v.get("checks").and_then(Value::as_array) {
        let names: Vec<String> = checks.iter().filter_map(value_text).collect();
        if !names.is_empty() {
            return Some(names.join(", "));
        }
    }
    first_text(v, &["feedback", "summary", "detail", "message", "reason"])
}

/// Changed files from `files_changed`, `result.files_changed`, `changed_files`, `files` or
/// `workspace_changes`, in any of the shapes in the module docs; one entry per path.
fn files_changed(v: &Value) -> Vec<FileChange> {
    let source = [
        v.get("files_changed"),
        v.get("result").and_then(|r| r.get("files_changed")),
        v.get("changed_files"),
        v.get("files"),
        v.get("workspace_changes"),
    ]
    .into_iter()
    .flatten()
    .find(|s| s.is_array() || s.is_object());
    let mut out = Vec::new();
    let mut add = |path: String, action: Option<String>| merge_file(&mut out, FileChange { path, action });
    match source {
        Some(Value::Array(items)) => {
            for item in items.iter().take(MAX_TRACKED) {
                match item {
                    Value::String(s) => {
                        let s = s.trim();
                        match s.rsplit_once(" (") {
                            Some((path, note)) if note.ends_with(')') && !path.trim().is_empty() => {
                                add(path.trim().to_string(), Some(note.trim_end_matches(')').trim().to_string()))
                            }
                            _ if !s.is_empty() => add(s.to_string(), None),
                            _ => {}
                        }
                    }
                    Value::Object(_) => {
                        if let Some(path) = first_text(item, &["path", "file", "name"]) {
                            add(path, first_text(item, &["action", "change", "status", "type"]));
                        }
                    }
                    _ => {}
                }
            }
        }
        Some(Value::Object(groups)) => {
            for (key, action) in [("created", "created"), ("modified", "modified"), ("deleted", "deleted")] {
                for path in groups.get(key).and_then(Value::as_array).into_iter().flatten().filter_map(value_text) {
                    add(path, Some(action.to_string()));
                }
            }
        }
        _ => {}
    }
    out
}

/// Adds `file`, or updates the action of the entry with its path (the latest report wins).
pub(super) fn merge_file(files: &mut Vec<FileChange>, file: FileChange) {
    match files.iter().position(|f| f.path == file.path) {
        Some(i) if file.action.is_some() => files[i].action = file.action,
        Some(_) => {}
        None if files.len() < MAX_TRACKED => files.push(file),
        None => {}
    }
}
