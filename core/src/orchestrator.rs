//! The task orchestrator's wire format (Loom's task API), pure: the requests to make, tolerant decoding of
//! its responses and SSE events, a progress fold for the live checklist, and the `delegate_task` result
//! text the model reads.
//!
//! - Requests: `POST {base}/tasks` ([`create_task_request`]), `GET {base}/tasks/{id}` ([`task_status_request`]),
//!   `GET {base}/tasks/{id}/stream` ([`task_stream_request`]), `DELETE {base}/tasks/{id}` ([`cancel_task_request`]).
//! - Decoding is tolerant: missing fields default, numbers may come as strings, unknown fields are ignored.
//!   An event of a known type whose data is not JSON still counts as that type (so a `task_completed`
//!   always ends the wait); an unknown type is kept as [`LoomEvent::Unknown`], never an error.
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

use serde_json::{json, Map, Value};

use crate::provider::{join_url, HttpRequest};
use crate::{Error, Result};

/// Subtask, event and note lists in a [`TaskProgress`] stop growing here (bounded memory on a runaway
/// stream).
pub const MAX_TRACKED: usize = 200;

// ---------------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------------

/// What `delegate_task` hands the orchestrator.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSubmission {
    pub goal: String,
    pub workspace: String,
    /// The tool call's `context`: an object is sent as it is; a string becomes `{"notes": …}`, null or an
    /// empty string `{}`, anything else `{"value": …}` (Loom requires an object).
    pub context: Value,
    /// The session and the turn number of the delegating assistant turn, sent as `metadata`.
    pub session_id: String,
    pub turn: i64,
}

/// `POST {base}/tasks` with `{goal, workspace, context, approval_mode: "auto", metadata: {session_id, turn}}`.
/// Approval happens in Cowork (the user approves every delegation), so the orchestrator runs unattended.
pub fn create_task_request(base_url: &str, task: &TaskSubmission) -> HttpRequest {
    let context = match &task.context {
        Value::Object(map) => Value::Object(map.clone()),
        Value::Null => json!({}),
        Value::String(s) if s.trim().is_empty() => json!({}),
        Value::String(s) => json!({ "notes": s }),
        other => json!({ "value": other }),
    };
    let body = json!({
        "goal": task.goal,
        "workspace": task.workspace,
        "context": context,
        "approval_mode": "auto",
        "metadata": {"session_id": task.session_id, "turn": task.turn},
    });
    HttpRequest {
        method: "POST".to_string(),
        url: join_url(base_url, "/tasks"),
        headers: vec![
            ("content-type".to_string(), "application/json".to_string()),
            ("accept".to_string(), "application/json".to_string()),
        ],
        body: body.to_string(),
    }
}

/// `GET {base}/tasks/{id}`: the task's state (also the fallback when the stream breaks).
pub fn task_status_request(base_url: &str, task_id: &str) -> HttpRequest {
    get(task_url(base_url, task_id), "application/json")
}

/// `GET {base}/tasks/{id}/stream`: Server-Sent Events until a terminal event.
pub fn task_stream_request(base_url: &str, task_id: &str) -> HttpRequest {
    get(format!("{}/stream", task_url(base_url, task_id)), "text/event-stream")
}

/// `DELETE {base}/tasks/{id}`: cancels the task.
pub fn cancel_task_request(base_url: &str, task_id: &str) -> HttpRequest {
    HttpRequest { method: "DELETE".to_string(), ..get(task_url(base_url, task_id), "application/json") }
}

fn get(url: String, accept: &str) -> HttpRequest {
    HttpRequest {
        method: "GET".to_string(),
        url,
        headers: vec![("accept".to_string(), accept.to_string())],
        body: String::new(),
    }
}

fn task_url(base_url: &str, task_id: &str) -> String {
    format!("{}/{}", join_url(base_url, "/tasks"), percent_encode(task_id))
}

/// Percent-encodes everything but RFC 3986's unreserved characters (ids are opaque).
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------------------

/// The `201` answer to `POST /tasks`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreatedTask {
    pub task_id: String,
    pub status: String,
    pub message: String,
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
        status: text(&v, "status").unwrap_or_default(),
        message: text(&v, "message").unwrap_or_default(),
        run_id: text(&v, "run_id"),
    })
}

/// One subtask as the plan lists it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubtaskInfo {
    pub id: String,
    pub description: String,
    /// `pending`, `running`, `completed`, `failed`, `skipped` … (empty when not given).
    pub status: String,
    pub summary: String,
}

/// `progress` of `GET /tasks/{id}`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProgressCounts {
    pub total_subtasks: i64,
    pub completed: i64,
    pub failed: i64,
    pub pending: i64,
    pub running: i64,
    pub percent_complete: f64,
}

/// A changed file, as the orchestrator reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    /// `created`, `modified`, `deleted` … when known.
    pub action: Option<String>,
}

/// `GET /tasks/{id}`: what the task looks like now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskStatus {
    pub task_id: String,
    pub goal: String,
    pub status: String,
    pub subtasks: Vec<SubtaskInfo>,
    pub progress: ProgressCounts,
    /// From `result.summary` when the orchestrator gives one.
    pub summary: Option<String>,
    pub files_changed: Vec<FileChange>,
    /// From `error` (or `result.error`) when the task failed.
    pub error: Option<String>,
}

impl TaskStatus {
    pub fn is_terminal(&self) -> bool {
        is_terminal_status(&self.status)
    }
}

/// Reads `GET /tasks/{id}`; every field is optional.
pub fn parse_task_status(body: &str) -> Result<TaskStatus> {
    let v = parse_json(body, "reading the orchestrator's task status")?;
    let p = v.get("progress").cloned().unwrap_or(Value::Null);
    let result = v.get("result").cloned().unwrap_or(Value::Null);
    Ok(TaskStatus {
        task_id: text(&v, "task_id").unwrap_or_default(),
        goal: text(&v, "goal").unwrap_or_default(),
        status: text(&v, "status").unwrap_or_default(),
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

/// Whether a task status is final: `completed`, `failed` or `cancelled` (`canceled` too).
pub fn is_terminal_status(status: &str) -> bool {
    matches!(status.trim().to_ascii_lowercase().as_str(), "completed" | "failed" | "cancelled" | "canceled")
}

// ---------------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------------

/// One event of `GET /tasks/{id}/stream`, by type. The archive keeps the raw data; this is what it means.
#[derive(Debug, Clone, PartialEq)]
pub enum LoomEvent {
    TaskCreated,
    TaskPlanning,
    /// A plan (or, with `replanned`, a new plan). Subtasks may carry only ids (Loom sends `subtask_ids`).
    TaskPlanReady {
        subtasks: Vec<SubtaskInfo>,
        replanned: bool,
    },
    TaskExecuting,
    TaskReplanning {
        reason: Option<String>,
    },
    SubtaskStarted {
        subtask_id: String,
    },
    SubtaskCompleted {
        subtask_id: String,
        status: Option<String>,
        summary: Option<String>,
        duration_secs: Option<f64>,
        verification_outcome: Option<String>,
        files_changed: Vec<FileChange>,
    },
    /// `error`, else Loom's verification `feedback`.
    SubtaskFailed {
        subtask_id: String,
        error: Option<String>,
    },
    SubtaskRetrying {
        subtask_id: String,
        attempt: Option<i64>,
        reason: Option<String>,
    },
    /// A verification result, for one subtask (`subtask_id`) or the whole task; `detail` from `checks`,
    /// `feedback`, `summary` …
    VerificationPassed {
        subtask_id: Option<String>,
        detail: Option<String>,
    },
    VerificationFailed {
        subtask_id: Option<String>,
        detail: Option<String>,
    },
    TaskCompleted {
        summary: Option<String>,
        files_changed: Vec<FileChange>,
    },
    TaskFailed {
        error: Option<String>,
        failed_subtasks: Vec<String>,
        files_changed: Vec<FileChange>,
    },
    TaskCancelled,
    /// A type this version does not know, kept to be shown.
    Unknown {
        event_type: String,
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
            LoomEvent::Unknown { event_type, .. } => event_type,
        }
    }

    /// The task will send nothing more (Loom closes the stream after these).
    pub fn is_terminal(&self) -> bool {
        matches!(self, LoomEvent::TaskCompleted { .. } | LoomEvent::TaskFailed { .. } | LoomEvent::TaskCancelled)
    }
}

/// Decodes one SSE event of the task stream. Without an `event:` name, the data's `event_type` (or
/// `type`) field names it.
pub fn decode_sse_event(ev: &crate::sse::SseEvent) -> LoomEvent {
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
            error: first_text(v, &["error", "reason", "message"])
                .or_else(|| v.get("result").and_then(|r| text(r, "error"))),
            failed_subtasks: v
                .get("failed_subtasks")
                .and_then(Value::as_array)
                .map(|ids| ids.iter().filter_map(value_text).collect())
                .unwrap_or_default(),
            files_changed: files_changed(v),
        },
        "task_cancelled" | "task_canceled" => LoomEvent::TaskCancelled,
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

fn first_text(v: &Value, keys: &[&str]) -> Option<String> {
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
fn merge_file(files: &mut Vec<FileChange>, file: FileChange) {
    match files.iter().position(|f| f.path == file.path) {
        Some(i) if file.action.is_some() => files[i].action = file.action,
        Some(_) => {}
        None if files.len() < MAX_TRACKED => files.push(file),
        None => {}
    }
}

// ---------------------------------------------------------------------------------------------------
// Progress
// ---------------------------------------------------------------------------------------------------

/// One line of the live checklist.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SubtaskProgress {
    pub id: String,
    /// Empty until the plan (or a status snapshot) names it; shown as the id meanwhile.
    pub description: String,
    /// `pending`, `running`, `completed`, `failed`, `skipped` …
    pub status: String,
    pub summary: String,
    /// Why it failed (cleared when a retry completes it).
    pub error: Option<String>,
    pub duration_secs: Option<f64>,
    /// `passed`, `failed` or the orchestrator's own word, when reported.
    pub verification: Option<String>,
    pub retries: u32,
}

/// One line of the checklist as sent to a UI: what the step is, where it stands, and its summary or error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ChecklistItem {
    pub label: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A verification event not tied to a subtask the checklist knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerificationNote {
    pub subtask_id: Option<String>,
    pub passed: bool,
    pub detail: Option<String>,
}

/// Everything known about a delegated task, folded from its events and status snapshots.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskProgress {
    pub task_id: String,
    pub goal: String,
    /// `submitted` until an event says more; then Loom's statuses (`planning`, `executing`, `replanning`,
    /// `completed`, `failed`, `cancelled`). A terminal status never changes again.
    pub status: String,
    pub subtasks: Vec<SubtaskProgress>,
    pub files_changed: Vec<FileChange>,
    /// Task-level verification results (checks that name no subtask in the checklist).
    pub verification: Vec<VerificationNote>,
    pub error: Option<String>,
    pub summary: Option<String>,
    /// Types of events this version does not know, in arrival order (shown in the UI).
    pub unknown_events: Vec<String>,
    pub events_applied: usize,
}

impl TaskProgress {
    pub fn new(task_id: impl Into<String>, goal: impl Into<String>) -> TaskProgress {
        TaskProgress {
            task_id: task_id.into(),
            goal: goal.into(),
            status: "submitted".to_string(),
            ..TaskProgress::default()
        }
    }

    pub fn is_terminal(&self) -> bool {
        is_terminal_status(&self.status)
    }

    /// The live checklist as the UI shows it: one item per subtask, described when the plan names it.
    pub fn checklist(&self) -> Vec<ChecklistItem> {
        self.subtasks
            .iter()
            .map(|s| ChecklistItem {
                label: if s.description.is_empty() { s.id.clone() } else { s.description.clone() },
                status: s.status.clone(),
                detail: s.error.clone().or_else(|| (!s.summary.is_empty()).then(|| s.summary.clone())),
            })
            .collect()
    }

    fn set_status(&mut self, status: &str) {
        if !self.is_terminal() {
            self.status = status.to_string();
        }
    }

    fn subtask(&mut self, id: &str) -> Option<&mut SubtaskProgress> {
        if id.is_empty() {
            return None;
        }
        if let Some(i) = self.subtasks.iter().position(|s| s.id == id) {
            return Some(&mut self.subtasks[i]);
        }
        if self.subtasks.len() >= MAX_TRACKED {
            return None;
        }
        self.subtasks.push(SubtaskProgress {
            id: id.to_string(),
            status: "pending".to_string(),
            ..SubtaskProgress::default()
        });
        self.subtasks.last_mut()
    }

    /// Takes one event into account.
    pub fn apply(&mut self, event: &LoomEvent) {
        self.events_applied += 1;
        match event {
            LoomEvent::TaskCreated => self.set_status("pending"),
            LoomEvent::TaskPlanning => self.set_status("planning"),
            LoomEvent::TaskPlanReady { subtasks, .. } => self.take_plan(subtasks),
            LoomEvent::TaskExecuting => self.set_status("executing"),
            LoomEvent::TaskReplanning { .. } => self.set_status("replanning"),
            LoomEvent::SubtaskStarted { subtask_id } => {
                if let Some(s) = self.subtask(subtask_id) {
                    s.status = "running".to_string();
                }
            }
            LoomEvent::SubtaskCompleted {
                subtask_id,
                summary,
                duration_secs,
                verification_outcome,
                files_changed,
                ..
            } => {
                if let Some(s) = self.subtask(subtask_id) {
                    s.status = "completed".to_string();
                    s.error = None;
                    if let Some(summary) = summary {
                        s.summary.clone_from(summary);
                    }
                    s.duration_secs = duration_secs.or(s.duration_secs);
                    if let Some(outcome) = verification_outcome {
                        s.verification = Some(normalise_outcome(outcome));
                    }
                }
                for file in files_changed {
                    merge_file(&mut self.files_changed, file.clone());
                }
            }
            LoomEvent::SubtaskFailed { subtask_id, error } => {
                if let Some(s) = self.subtask(subtask_id) {
                    s.status = "failed".to_string();
                    s.error = error.clone().or_else(|| s.error.take());
                }
            }
            LoomEvent::SubtaskRetrying { subtask_id, .. } => {
                if let Some(s) = self.subtask(subtask_id) {
                    s.status = "pending".to_string();
                    s.retries += 1;
                }
            }
            LoomEvent::VerificationPassed { subtask_id, detail } => self.verified(subtask_id, true, detail),
            LoomEvent::VerificationFailed { subtask_id, detail } => self.verified(subtask_id, false, detail),
            LoomEvent::TaskCompleted { summary, files_changed } => {
                self.set_status("completed");
                self.summary = summary.clone().or(self.summary.take());
                for file in files_changed {
                    merge_file(&mut self.files_changed, file.clone());
                }
            }
            LoomEvent::TaskFailed { error, failed_subtasks, files_changed } => {
                self.set_status("failed");
                self.stop_running("interrupted");
                self.error = error.clone().or(self.error.take());
                for id in failed_subtasks {
                    if let Some(s) = self.subtask(id) {
                        s.status = "failed".to_string();
                    }
                }
                for file in files_changed {
                    merge_file(&mut self.files_changed, file.clone());
                }
            }
            LoomEvent::TaskCancelled => {
                self.set_status("cancelled");
                self.stop_running("cancelled");
            }
            LoomEvent::Unknown { event_type, .. } => {
                if self.unknown_events.len() < MAX_TRACKED {
                    self.unknown_events.push(event_type.clone());
                }
            }
        }
    }

    /// Subtasks still running when the task ended did not finish.
    fn stop_running(&mut self, status: &str) {
        for s in self.subtasks.iter_mut().filter(|s| s.status == "running") {
            s.status = status.to_string();
        }
    }

    /// A (new) plan: its subtasks in its order, keeping what is known about each; earlier subtasks that
    /// the new plan leaves out are kept only when they completed (a replan keeps finished work).
    fn take_plan(&mut self, plan: &[SubtaskInfo]) {
        if plan.is_empty() {
            return;
        }
        let mut old = std::mem::take(&mut self.subtasks);
        let mut next: Vec<SubtaskProgress> = Vec::with_capacity(plan.len());
        for info in plan.iter().take(MAX_TRACKED) {
            if next.iter().any(|s| s.id == info.id) {
                continue;
            }
            let mut s = match old.iter().position(|s| s.id == info.id) {
                Some(i) => old.remove(i),
                None => {
                    SubtaskProgress { id: info.id.clone(), status: "pending".to_string(), ..SubtaskProgress::default() }
                }
            };
            merge_info(&mut s, info);
            next.push(s);
        }
        let kept: Vec<SubtaskProgress> = old.into_iter().filter(|s| s.status == "completed").collect();
        self.subtasks = kept.into_iter().chain(next).take(MAX_TRACKED).collect();
    }

    fn verified(&mut self, subtask_id: &Option<String>, passed: bool, detail: &Option<String>) {
        let outcome = if passed { "passed" } else { "failed" };
        if let Some(s) = subtask_id.as_deref().and_then(|id| self.subtasks.iter_mut().find(|s| s.id == id)) {
            s.verification = Some(outcome.to_string());
            if !passed && s.error.is_none() {
                s.error.clone_from(detail);
            }
            return;
        }
        if self.verification.len() < MAX_TRACKED {
            self.verification.push(VerificationNote { subtask_id: subtask_id.clone(), passed, detail: detail.clone() });
        }
    }

    /// Takes a `GET /tasks/{id}` snapshot into account: status, goal (when unknown), the plan's subtasks
    /// with their statuses and summaries, the result's summary and files.
    pub fn apply_status(&mut self, status: &TaskStatus) {
        if self.goal.is_empty() {
            self.goal.clone_from(&status.goal);
        }
        if !status.status.is_empty() {
            self.set_status(&status.status);
        }
        if !status.subtasks.is_empty() {
            self.take_plan(&status.subtasks);
        }
        if status.summary.is_some() {
            self.summary.clone_from(&status.summary);
        }
        if status.error.is_some() {
            self.error.clone_from(&status.error);
        }
        for file in &status.files_changed {
            merge_file(&mut self.files_changed, file.clone());
        }
    }
}

fn merge_info(s: &mut SubtaskProgress, info: &SubtaskInfo) {
    if !info.description.is_empty() {
        s.description.clone_from(&info.description);
    }
    if !info.status.is_empty() {
        s.status.clone_from(&info.status);
    }
    if !info.summary.is_empty() {
        s.summary.clone_from(&info.summary);
        if info.status == "failed" && s.error.is_none() {
            s.error = Some(info.summary.clone());
        }
    }
}

fn normalise_outcome(outcome: &str) -> String {
    let lower = outcome.trim().to_ascii_lowercase();
    if ["pass", "ok", "success", "verified", "true"].iter().any(|p| lower.starts_with(p)) {
        "passed".to_string()
    } else if ["fail", "false", "error"].iter().any(|p| lower.starts_with(p)) {
        "failed".to_string()
    } else {
        outcome.trim().to_string()
    }
}

// ---------------------------------------------------------------------------------------------------
// The tool result
// ---------------------------------------------------------------------------------------------------

/// One line of text, at most `max` characters.
fn one_line(s: &str, max: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > max {
        format!("{}…", flat.chars().take(max.saturating_sub(1)).collect::<String>())
    } else {
        flat
    }
}

fn checklist(progress: &TaskProgress, out: &mut String) {
    if progress.subtasks.is_empty() {
        out.push_str("Subtasks: none reported.\n");
        return;
    }
    out.push_str("Subtasks:\n");
    for s in &progress.subtasks {
        let name = if s.description.trim().is_empty() { one_line(&s.id, 200) } else { one_line(&s.description, 200) };
        let retries = match s.retries {
            0 => String::new(),
            1 => " (after 1 retry)".to_string(),
            n => format!(" (after {n} retries)"),
        };
        let line = match s.status.as_str() {
            "completed" | "done" | "success" => format!("  [x] {name}{retries}"),
            "failed" => match &s.error {
                Some(error) => format!("  [!] {name}: {}", one_line(error, 300)),
                None => format!("  [!] {name}"),
            },
            "pending" | "" => format!("  [ ] {name}"),
            other => format!("  [ ] {name} ({other})"),
        };
        out.push_str(&line);
        out.push('\n');
    }
}

fn files_section(progress: &TaskProgress, out: &mut String) {
    if progress.files_changed.is_empty() {
        out.push_str("Files changed: none reported.\n");
        return;
    }
    out.push_str("Files changed:\n");
    for f in &progress.files_changed {
        match &f.action {
            Some(action) => out.push_str(&format!("  - {} ({action})\n", one_line(&f.path, 300))),
            None => out.push_str(&format!("  - {}\n", one_line(&f.path, 300))),
        }
    }
}

fn verification_section(progress: &TaskProgress, out: &mut String) {
    let total = progress.subtasks.len();
    let passed = progress.subtasks.iter().filter(|s| s.verification.as_deref() == Some("passed")).count();
    let failed: Vec<&SubtaskProgress> =
        progress.subtasks.iter().filter(|s| s.verification.as_deref() == Some("failed")).collect();
    let notes_failed: Vec<&VerificationNote> = progress.verification.iter().filter(|n| !n.passed).collect();
    let name = |s: &SubtaskProgress| {
        if s.description.trim().is_empty() {
            s.id.clone()
        } else {
            one_line(&s.description, 120)
        }
    };
    let line = if !failed.is_empty() {
        let names: Vec<String> = failed.iter().map(|s| name(s)).collect();
        match passed {
            0 => format!("failed for {}.", names.join("; ")),
            _ => format!("{passed} of {total} subtasks passed; failed for {}.", names.join("; ")),
        }
    } else if total > 0 && passed == total {
        "All subtasks passed verification.".to_string()
    } else if passed > 0 {
        format!("{passed} of {total} subtasks passed verification.")
    } else if progress.verification.is_empty() {
        "none reported by the orchestrator.".to_string()
    } else if notes_failed.is_empty() {
        "passed.".to_string()
    } else {
        "failed.".to_string()
    };
    out.push_str(&format!("Verification: {line}\n"));
    for note in &progress.verification {
        let verdict = if note.passed { "passed" } else { "failed" };
        let subject = note.subtask_id.as_deref().map(|id| format!(" ({id})")).unwrap_or_default();
        match &note.detail {
            Some(detail) => out.push_str(&format!("Checks {verdict}{subject}: {}\n", one_line(detail, 300))),
            None => out.push_str(&format!("Checks {verdict}{subject}.\n")),
        }
    }
}

fn goal_label(progress: &TaskProgress) -> String {
    if progress.goal.trim().is_empty() {
        format!("task {}", progress.task_id)
    } else {
        format!("\"{}\"", one_line(&progress.goal, 300))
    }
}

/// The `delegate_task` tool result for a task that ended with `final_status` (usually
/// `progress.status`), in the design notes' format:
///
/// ```text
/// Task completed: "Add JWT refresh token rotation"
///
/// Subtasks:
///   [x] Analyze current auth implementation
///   [!] Add Redis storage: tests failed
///   [ ] Add tests (skipped)
///
/// Files changed:
///   - src/auth.py (modified)
///
/// Verification: All subtasks passed verification.
/// ```
///
/// A failed task gets an `Error:` line after the header; a task summary ends the text. A non-terminal
/// status gives a "still running" header (see also [`format_still_running`]).
pub fn format_result(progress: &TaskProgress, final_status: &str) -> String {
    let status = final_status.trim().to_ascii_lowercase();
    let goal = goal_label(progress);
    let mut out = match status.as_str() {
        "completed" => format!("Task completed: {goal}\n"),
        "failed" => format!("Task failed: {goal}\n"),
        "cancelled" | "canceled" => format!("Task cancelled: {goal}\n"),
        other => format!("Task still running: {goal} (status: {})\n", if other.is_empty() { "unknown" } else { other }),
    };
    if status == "failed" {
        let error = progress.error.as_deref().map(|e| one_line(e, 500)).unwrap_or_else(|| {
            let failed: Vec<String> =
                progress.subtasks.iter().filter(|s| s.status == "failed").map(|s| s.id.clone()).collect();
            if failed.is_empty() {
                "the orchestrator gave no reason".to_string()
            } else {
                format!("subtasks failed: {}", failed.join(", "))
            }
        });
        out.push_str(&format!("Error: {error}\n"));
    }
    out.push('\n');
    checklist(progress, &mut out);
    out.push('\n');
    files_section(progress, &mut out);
    out.push('\n');
    verification_section(progress, &mut out);
    if let Some(summary) = &progress.summary {
        out.push_str(&format!("\nSummary: {}\n", one_line(summary, 1000)));
    }
    out.truncate(out.trim_end().len());
    out
}

/// The tool result for `wait: false`: the task id at once.
pub fn format_submitted(task_id: &str, goal: &str) -> String {
    format!(
        "Task submitted: {task_id}\nGoal: \"{}\"\nThe task runs in the background; its result will be added to this \
         conversation when it ends.",
        one_line(goal, 300)
    )
}

/// The tool result when the wait ended before the task did (the stream broke, the orchestrator went
/// away): what is known so far, and that the task is still tracked. The header keeps the task open in the
/// session-state register.
pub fn format_still_running(progress: &TaskProgress, reason: &str) -> String {
    let mut out = format!(
        "Task submitted: {} (still running; progress unavailable: {})\nGoal: {}\n\n",
        progress.task_id,
        one_line(reason, 300),
        goal_label(progress)
    );
    checklist(progress, &mut out);
    out.push_str(
        "\nThe task continues on the orchestrator. Cowork re-attaches to it and adds its result to this \
         conversation when it ends.",
    );
    out
}

// ---------------------------------------------------------------------------------------------------
// Failures
// ---------------------------------------------------------------------------------------------------

/// What went wrong talking to the orchestrator at `base_url`, and what to do, for the UI and the tool
/// result. `status` 0 means no response: `reachable_without_cors` is the result of a `mode: "no-cors"`
/// probe (`Some(true)`: the server is up, so the browser's CORS check blocked the request), `None` when
/// no probe was made. `app_origin` is the page's origin (e.g. `http://localhost:8080`).
pub fn failure_message(
    base_url: &str,
    app_origin: &str,
    status: u16,
    body: &str,
    reachable_without_cors: Option<bool>,
) -> String {
    let base = base_url.trim().trim_end_matches('/');
    let loom_cors = format!(
        "Loom allows only pages served from localhost or 127.0.0.1 by default: open Cowork from one of those (this \
         page is {app_origin}), or allow this origin in the orchestrator's CORS settings."
    );
    if status == 0 {
        return match reachable_without_cors {
            Some(true) => format!("The browser blocked the orchestrator's reply from {base} (CORS). {loom_cors}"),
            Some(false) => format!(
                "The orchestrator at {base} could not be reached. Check that it is running and that the orchestrator \
                 URL in Settings is right."
            ),
            None => format!(
                "The orchestrator at {base} could not be reached. Check that it is running and that the orchestrator \
                 URL in Settings is right; if it is running, the browser may have blocked it (CORS): {loom_cors}"
            ),
        };
    }
    let detail = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| first_text(&v, &["detail", "error", "message"]))
        .unwrap_or_else(|| if body.trim_start().starts_with('<') { String::new() } else { body.to_string() });
    let detail = one_line(&detail, 300);
    let said = if detail.is_empty() { format!("HTTP {status}") } else { format!("HTTP {status}: {detail}") };
    let advice = match status {
        404 => "Check the orchestrator URL in Settings (the task or the /tasks endpoint was not found).",
        400 | 422 => "The orchestrator refused the task as given (for example an unknown workspace path).",
        401 | 403 => "The orchestrator refused access: check its access settings.",
        500..=599 => "The orchestrator failed on its side: try again in a moment.",
        _ => "Check the orchestrator URL in Settings.",
    };
    format!("The orchestrator at {base} answered {said}. {advice}")
}

/// The `delegate_task` tool result when the task could not be created at all.
pub fn format_not_started(goal: &str, message: &str) -> String {
    format!(
        "Task not started: \"{}\"\n{}\nNothing was delegated. Tell the user; retry delegate_task once the orchestrator \
         is reachable, or do the work with direct tools.",
        one_line(goal, 300),
        message.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sse::parse_all;
    use expect_test::{expect, Expect};

    /// The dev server's stream for a task that completes (keepalives, Loom's SSE framing).
    const COMPLETED_STREAM: &str = concat!(
        ": keepalive\n\n",
        "event: task_created\ndata: {\"task_id\": \"task-0001\", \"timestamp\": 1718020800.1}\n\n",
        "event: task_planning\ndata: {\"task_id\": \"task-0001\", \"goal\": \"Add JWT refresh token rotation\", \"timestamp\": 1718020800.2}\n\n",
        "event: task_plan_ready\ndata: {\"plan\": {\"subtasks\": [",
        "{\"id\": \"s1\", \"description\": \"Analyze current auth implementation (src/auth.py)\", \"status\": \"pending\"}, ",
        "{\"id\": \"s2\", \"description\": \"Add refresh token generation and validation\", \"status\": \"pending\"}, ",
        "{\"id\": \"s3\", \"description\": \"Add tests for the refresh flow\", \"status\": \"pending\"}]}, ",
        "\"task_id\": \"task-0001\", \"timestamp\": 1718020800.3}\n\n",
        "event: task_executing\ndata: {\"task_id\": \"task-0001\", \"timestamp\": 1718020800.4}\n\n",
        "event: subtask_started\ndata: {\"subtask_id\": \"s1\", \"task_id\": \"task-0001\"}\n\n",
        "event: subtask_completed\ndata: {\"subtask_id\": \"s1\", \"status\": \"completed\", \"summary\": \"Read auth.py: login() issues access tokens only.\", \"duration\": 0.15, \"verification_outcome\": \"passed\", \"task_id\": \"task-0001\"}\n\n",
        ": keepalive\n\n",
        "event: subtask_started\ndata: {\"subtask_id\": \"s2\", \"task_id\": \"task-0001\"}\n\n",
        "event: subtask_failed\ndata: {\"subtask_id\": \"s2\", \"error\": \"tests failed: 2 assertions did not hold\", \"task_id\": \"task-0001\"}\n\n",
        "event: subtask_retrying\ndata: {\"subtask_id\": \"s2\", \"attempt\": 1, \"feedback\": \"tests failed\", \"task_id\": \"task-0001\"}\n\n",
        "event: subtask_started\ndata: {\"subtask_id\": \"s2\", \"task_id\": \"task-0001\"}\n\n",
        "event: subtask_completed\ndata: {\"subtask_id\": \"s2\", \"status\": \"completed\", \"summary\": \"Added rotate_refresh_token().\", \"duration\": \"2.5\", \"verification_outcome\": \"passed\", \"files_changed\": [\"src/auth.py (modified)\", {\"path\": \"src/auth/refresh.py\", \"action\": \"created\"}], \"task_id\": \"task-0001\"}\n\n",
        "event: subtask_started\ndata: {\"subtask_id\": \"s3\", \"task_id\": \"task-0001\"}\n\n",
        "event: subtask_completed\ndata: {\"subtask_id\": \"s3\", \"status\": \"completed\", \"summary\": \"4 new tests.\", \"duration\": 1.0, \"verification_outcome\": {\"passed\": true, \"tier\": 1}, \"task_id\": \"task-0001\"}\n\n",
        "event: task_progress_note\ndata: {\"note\": \"an event type from a newer orchestrator\"}\n\n",
        "event: verification_passed\ndata: {\"checks\": [\"tests\", \"lint\"], \"task_id\": \"task-0001\"}\n\n",
        "event: task_completed\ndata: {\"result\": {\"summary\": \"All subtasks completed and verified.\", \"files_changed\": [\"src/auth.py\", \"src/config.py\", \"tests/test_auth_refresh.py (created)\"]}, \"task_id\": \"task-0001\"}\n\n",
    );

    /// Loom's own event shapes for a task that fails: ids-only plan, `feedback`, `failed_subtasks`.
    const FAILED_STREAM: &str = concat!(
        "event: task_planning\ndata: {\"task_id\": \"a1b2c3d4\", \"goal\": \"Migrate src/routes to TypeScript\", \"timestamp\": \"2024-06-10T12:00:00\"}\n\n",
        "event: task_plan_ready\ndata: {\"task_id\": \"a1b2c3d4\", \"subtask_count\": 3, \"subtask_ids\": [\"convert-routes\", \"update-imports\", \"run-typecheck\"], \"timestamp\": \"2024-06-10T12:00:05\"}\n\n",
        "event: task_executing\ndata: {\"task_id\": \"a1b2c3d4\"}\n\n",
        "event: subtask_started\ndata: {\"task_id\": \"a1b2c3d4\", \"subtask_id\": \"convert-routes\"}\n\n",
        "event: subtask_completed\ndata: {\"task_id\": \"a1b2c3d4\", \"subtask_id\": \"convert-routes\", \"status\": \"success\", \"summary\": \"Converted 12 files.\", \"duration\": 41.2}\n\n",
        "event: subtask_started\ndata: {\"task_id\": \"a1b2c3d4\", \"subtask_id\": \"update-imports\"}\n\n",
        "event: subtask_failed\ndata: {\"task_id\": \"a1b2c3d4\", \"subtask_id\": \"update-imports\", \"verification_tier\": 1, \"feedback\": \"tsc: 3 errors in\\nsrc/routes/index.ts\"}\n\n",
        "event: verification_failed\ndata: {\"task_id\": \"a1b2c3d4\", \"subtask_id\": \"update-imports\", \"feedback\": \"type check failed\"}\n\n",
        "event: task_replanning\ndata: {\"task_id\": \"a1b2c3d4\", \"reason\": \"subtask_failures\"}\n\n",
        "event: task_failed\ndata: {\"task_id\": \"a1b2c3d4\", \"completed\": 1, \"total\": 3, \"failed_subtasks\": [\"update-imports\"]}\n\n",
    );

    fn decode_stream(body: &str) -> Vec<LoomEvent> {
        parse_all(body.as_bytes()).iter().map(decode_sse_event).collect()
    }

    fn fold(events: &[LoomEvent], task_id: &str, goal: &str) -> TaskProgress {
        let mut progress = TaskProgress::new(task_id, goal);
        for e in events {
            progress.apply(e);
        }
        progress
    }

    fn check(actual: &str, expect: Expect) {
        expect.assert_eq(actual);
    }

    #[test]
    fn the_checklist_names_each_step_and_where_it_stands() {
        let progress = fold(&decode_stream(FAILED_STREAM), "a1b2c3d4", "Migrate src/routes to TypeScript");
        let lines: Vec<String> = progress
            .checklist()
            .iter()
            .map(|i| format!("{} {} {}", i.status, i.label, i.detail.as_deref().unwrap_or("-").replace('\n', " / ")))
            .collect();
        check(
            &lines.join("\n"),
            expect![[r#"
            completed convert-routes Converted 12 files.
            failed update-imports tsc: 3 errors in / src/routes/index.ts
            pending run-typecheck -"#]],
        );
    }

    #[test]
    fn requests() {
        let task = TaskSubmission {
            goal: "Add JWT refresh token rotation to src/auth.py".to_string(),
            workspace: "/home/me/project".to_string(),
            context: json!({"constraints": ["Use PyJWT"], "files_relevant": ["src/auth.py"]}),
            session_id: "0190-session".to_string(),
            turn: 42,
        };
        let render = |r: &HttpRequest| {
            let body = if r.body.is_empty() {
                String::new()
            } else {
                format!("\n{}", serde_json::to_string_pretty(&serde_json::from_str::<Value>(&r.body).unwrap()).unwrap())
            };
            let headers: Vec<String> = r.headers.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            format!("{} {} [{}]{body}\n", r.method, r.url, headers.join(", "))
        };
        let out = [
            render(&create_task_request("http://127.0.0.1:9000/", &task)),
            render(&task_status_request("http://127.0.0.1:9000", "task-0001")),
            render(&task_stream_request("http://127.0.0.1:9000/", "task-0001")),
            render(&cancel_task_request("http://127.0.0.1:9000", "a b/../c?d")),
        ]
        .concat();
        check(
            &out,
            expect![[r#"
            POST http://127.0.0.1:9000/tasks [content-type: application/json, accept: application/json]
            {
              "approval_mode": "auto",
              "context": {
                "constraints": [
                  "Use PyJWT"
                ],
                "files_relevant": [
                  "src/auth.py"
                ]
              },
              "goal": "Add JWT refresh token rotation to src/auth.py",
              "metadata": {
                "session_id": "0190-session",
                "turn": 42
              },
              "workspace": "/home/me/project"
            }
            GET http://127.0.0.1:9000/tasks/task-0001 [accept: application/json]
            GET http://127.0.0.1:9000/tasks/task-0001/stream [accept: text/event-stream]
            DELETE http://127.0.0.1:9000/tasks/a%20b%2F..%2Fc%3Fd [accept: application/json]
        "#]],
        );
    }

    #[test]
    fn the_context_is_always_an_object() {
        let rows = [
            (json!({"a": 1}), json!({"a": 1})),
            (Value::Null, json!({})),
            (json!(""), json!({})),
            (json!("use PyJWT"), json!({"notes": "use PyJWT"})),
            (json!(["x"]), json!({"value": ["x"]})),
        ];
        for (context, expect) in rows {
            let task = TaskSubmission {
                goal: "g".into(),
                workspace: "w".into(),
                context: context.clone(),
                session_id: "s".into(),
                turn: 1,
            };
            let body: Value = serde_json::from_str(&create_task_request("http://x", &task).body).unwrap();
            assert_eq!(body["context"], expect, "context {context}");
        }
    }

    #[test]
    fn created_task_answers() {
        let rows = [
            r#"{"task_id": "task-0001", "status": "pending", "message": "Task created", "run_id": "run-0001"}"#,
            r#"{"task_id": "a1b2c3d4", "status": "pending", "message": "Task created and execution started."}"#,
            r#"{"task_id": 17}"#,
            r#"{"status": "pending"}"#,
            r#"{"task_id": "  "}"#,
            "<html>502 Bad Gateway</html>",
            "",
        ];
        let out: Vec<String> = rows
            .iter()
            .map(|body| match parse_created_task(body) {
                Ok(t) => format!("{body}\n  → {t:?}"),
                Err(e) => format!("{body}\n  → error: {e}"),
            })
            .collect();
        check(
            &out.join("\n"),
            expect![[r#"
            {"task_id": "task-0001", "status": "pending", "message": "Task created", "run_id": "run-0001"}
              → CreatedTask { task_id: "task-0001", status: "pending", message: "Task created", run_id: Some("run-0001") }
            {"task_id": "a1b2c3d4", "status": "pending", "message": "Task created and execution started."}
              → CreatedTask { task_id: "a1b2c3d4", status: "pending", message: "Task created and execution started.", run_id: None }
            {"task_id": 17}
              → CreatedTask { task_id: "17", status: "", message: "", run_id: None }
            {"status": "pending"}
              → error: the orchestrator's answer to creating a task has no task_id: {"status": "pending"}
            {"task_id": "  "}
              → error: the orchestrator's answer to creating a task has no task_id: {"task_id": " "}
            <html>502 Bad Gateway</html>
              → error: reading the orchestrator's answer to creating a task (<html>502 Bad Gateway</html>): expected value at line 1 column 1

              → error: reading the orchestrator's answer to creating a task (an empty body): EOF while parsing a value at line 1 column 0"#]],
        );
    }

    #[test]
    fn task_status_answers() {
        let full = r#"{"task_id": "task-0001", "goal": "Add refresh", "status": "completed",
            "plan": {"version": 1, "subtasks": [
                {"id": "s1", "description": "Analyze", "status": "completed", "depends_on": [], "retry_count": 0, "summary": "Done: Analyze"},
                {"id": "s2", "description": "Implement", "status": "failed", "summary": "tsc failed"}]},
            "progress": {"total_subtasks": 2, "completed": 1, "failed": 1, "pending": 0, "running": 0, "percent_complete": 50.0},
            "result": {"summary": "All subtasks completed and verified.", "files_changed": ["src/auth.py"]}}"#;
        let rows = [
            full,
            r#"{"status": "executing", "plan": null}"#,
            r#"{"status": "planning", "progress": {"total_subtasks": "3", "percent_complete": "NaN"}}"#,
            r#"{}"#,
            "not json",
        ];
        let out: Vec<String> = rows
            .iter()
            .map(|body| match parse_task_status(body) {
                Ok(s) => format!("{s:?} terminal={}", s.is_terminal()),
                Err(e) => format!("error: {e}"),
            })
            .collect();
        check(
            &out.join("\n"),
            expect![[r#"
            TaskStatus { task_id: "task-0001", goal: "Add refresh", status: "completed", subtasks: [SubtaskInfo { id: "s1", description: "Analyze", status: "completed", summary: "Done: Analyze" }, SubtaskInfo { id: "s2", description: "Implement", status: "failed", summary: "tsc failed" }], progress: ProgressCounts { total_subtasks: 2, completed: 1, failed: 1, pending: 0, running: 0, percent_complete: 50.0 }, summary: Some("All subtasks completed and verified."), files_changed: [FileChange { path: "src/auth.py", action: None }], error: None } terminal=true
            TaskStatus { task_id: "", goal: "", status: "executing", subtasks: [], progress: ProgressCounts { total_subtasks: 0, completed: 0, failed: 0, pending: 0, running: 0, percent_complete: 0.0 }, summary: None, files_changed: [], error: None } terminal=false
            TaskStatus { task_id: "", goal: "", status: "planning", subtasks: [], progress: ProgressCounts { total_subtasks: 3, completed: 0, failed: 0, pending: 0, running: 0, percent_complete: 0.0 }, summary: None, files_changed: [], error: None } terminal=false
            TaskStatus { task_id: "", goal: "", status: "", subtasks: [], progress: ProgressCounts { total_subtasks: 0, completed: 0, failed: 0, pending: 0, running: 0, percent_complete: 0.0 }, summary: None, files_changed: [], error: None } terminal=false
            error: reading the orchestrator's task status (not json): expected ident at line 1 column 2"#]],
        );
    }

    #[test]
    fn events_decode_by_type() {
        let out: Vec<String> = decode_stream(COMPLETED_STREAM)
            .iter()
            .chain(&decode_stream(FAILED_STREAM))
            .map(|e| format!("{}{:?}", if e.is_terminal() { "(terminal) " } else { "" }, e))
            .collect();
        check(
            &out.join("\n"),
            expect![[r#"
            TaskCreated
            TaskPlanning
            TaskPlanReady { subtasks: [SubtaskInfo { id: "s1", description: "Analyze current auth implementation (src/auth.py)", status: "pending", summary: "" }, SubtaskInfo { id: "s2", description: "Add refresh token generation and validation", status: "pending", summary: "" }, SubtaskInfo { id: "s3", description: "Add tests for the refresh flow", status: "pending", summary: "" }], replanned: false }
            TaskExecuting
            SubtaskStarted { subtask_id: "s1" }
            SubtaskCompleted { subtask_id: "s1", status: Some("completed"), summary: Some("Read auth.py: login() issues access tokens only."), duration_secs: Some(0.15), verification_outcome: Some("passed"), files_changed: [] }
            SubtaskStarted { subtask_id: "s2" }
            SubtaskFailed { subtask_id: "s2", error: Some("tests failed: 2 assertions did not hold") }
            SubtaskRetrying { subtask_id: "s2", attempt: Some(1), reason: Some("tests failed") }
            SubtaskStarted { subtask_id: "s2" }
            SubtaskCompleted { subtask_id: "s2", status: Some("completed"), summary: Some("Added rotate_refresh_token()."), duration_secs: Some(2.5), verification_outcome: Some("passed"), files_changed: [FileChange { path: "src/auth.py", action: Some("modified") }, FileChange { path: "src/auth/refresh.py", action: Some("created") }] }
            SubtaskStarted { subtask_id: "s3" }
            SubtaskCompleted { subtask_id: "s3", status: Some("completed"), summary: Some("4 new tests."), duration_secs: Some(1.0), verification_outcome: Some("passed"), files_changed: [] }
            Unknown { event_type: "task_progress_note", data: "{\"note\": \"an event type from a newer orchestrator\"}" }
            VerificationPassed { subtask_id: None, detail: Some("tests, lint") }
            (terminal) TaskCompleted { summary: Some("All subtasks completed and verified."), files_changed: [FileChange { path: "src/auth.py", action: None }, FileChange { path: "src/config.py", action: None }, FileChange { path: "tests/test_auth_refresh.py", action: Some("created") }] }
            TaskPlanning
            TaskPlanReady { subtasks: [SubtaskInfo { id: "convert-routes", description: "", status: "", summary: "" }, SubtaskInfo { id: "update-imports", description: "", status: "", summary: "" }, SubtaskInfo { id: "run-typecheck", description: "", status: "", summary: "" }], replanned: false }
            TaskExecuting
            SubtaskStarted { subtask_id: "convert-routes" }
            SubtaskCompleted { subtask_id: "convert-routes", status: Some("success"), summary: Some("Converted 12 files."), duration_secs: Some(41.2), verification_outcome: None, files_changed: [] }
            SubtaskStarted { subtask_id: "update-imports" }
            SubtaskFailed { subtask_id: "update-imports", error: Some("tsc: 3 errors in\nsrc/routes/index.ts") }
            VerificationFailed { subtask_id: Some("update-imports"), detail: Some("type check failed") }
            TaskReplanning { reason: Some("subtask_failures") }
            (terminal) TaskFailed { error: None, failed_subtasks: ["update-imports"], files_changed: [] }"#]],
        );
    }

    #[test]
    fn odd_events_are_never_fatal() {
        let rows: &[(Option<&str>, &str)] = &[
            (Some("task_completed"), "not json at all"),
            (Some("task_failed"), "[1, 2]"),
            (Some("subtask_completed"), r#"{"subtask_id": 7, "duration": "fast", "verification_outcome": false}"#),
            (Some("task_plan_ready"), r#"{"plan": {"subtasks": [{"description": "no id"}, "s9", 3, null]}}"#),
            (Some("files_report"), r#"{"files_changed": ["a"]}"#),
            (None, r#"{"event_type": "task_cancelled", "task_id": "t"}"#),
            (None, r#"{"type": "subtask_started", "subtask_id": "s1"}"#),
            (None, "plain message"),
            (Some("message"), r#"{"event_type": "task_executing"}"#),
            (
                Some("task_completed"),
                r#"{"workspace_changes": {"created": ["new.rs"], "modified": ["lib.rs"], "deleted": ["old.rs"], "files_created": 1}}"#,
            ),
        ];
        let out: Vec<String> = rows
            .iter()
            .map(|(event, data)| {
                let ev = crate::sse::SseEvent { event: event.map(str::to_string), data: data.to_string(), id: None };
                let decoded = decode_sse_event(&ev);
                format!("{:?} {data} → {decoded:?} terminal={}", event, decoded.is_terminal())
            })
            .collect();
        check(
            &out.join("\n"),
            expect![[r#"
            Some("task_completed") not json at all → TaskCompleted { summary: None, files_changed: [] } terminal=true
            Some("task_failed") [1, 2] → TaskFailed { error: None, failed_subtasks: [], files_changed: [] } terminal=true
            Some("subtask_completed") {"subtask_id": 7, "duration": "fast", "verification_outcome": false} → SubtaskCompleted { subtask_id: "7", status: None, summary: None, duration_secs: None, verification_outcome: Some("failed"), files_changed: [] } terminal=false
            Some("task_plan_ready") {"plan": {"subtasks": [{"description": "no id"}, "s9", 3, null]}} → TaskPlanReady { subtasks: [SubtaskInfo { id: "s9", description: "", status: "", summary: "" }, SubtaskInfo { id: "3", description: "", status: "", summary: "" }], replanned: false } terminal=false
            Some("files_report") {"files_changed": ["a"]} → Unknown { event_type: "files_report", data: "{\"files_changed\": [\"a\"]}" } terminal=false
            None {"event_type": "task_cancelled", "task_id": "t"} → TaskCancelled terminal=true
            None {"type": "subtask_started", "subtask_id": "s1"} → SubtaskStarted { subtask_id: "s1" } terminal=false
            None plain message → Unknown { event_type: "message", data: "plain message" } terminal=false
            Some("message") {"event_type": "task_executing"} → TaskExecuting terminal=false
            Some("task_completed") {"workspace_changes": {"created": ["new.rs"], "modified": ["lib.rs"], "deleted": ["old.rs"], "files_created": 1}} → TaskCompleted { summary: None, files_changed: [FileChange { path: "new.rs", action: Some("created") }, FileChange { path: "lib.rs", action: Some("modified") }, FileChange { path: "old.rs", action: Some("deleted") }] } terminal=true"#]],
        );
    }

    #[test]
    fn progress_tracks_the_live_checklist() {
        let events = decode_stream(COMPLETED_STREAM);
        let mut progress = TaskProgress::new("task-0001", "Add JWT refresh token rotation");
        let mut snapshots = Vec::new();
        for e in &events {
            progress.apply(e);
            let line: Vec<String> = progress
                .subtasks
                .iter()
                .map(|s| {
                    format!(
                        "{}={}{}",
                        s.id,
                        s.status,
                        if s.retries > 0 { format!("+{}", s.retries) } else { String::new() }
                    )
                })
                .collect();
            snapshots.push(format!("{:<20} {:<10} {}", e.event_type(), progress.status, line.join(" ")));
        }
        check(
            &snapshots.join("\n"),
            expect![[r#"
            task_created         pending    
            task_planning        planning   
            task_plan_ready      planning   s1=pending s2=pending s3=pending
            task_executing       executing  s1=pending s2=pending s3=pending
            subtask_started      executing  s1=running s2=pending s3=pending
            subtask_completed    executing  s1=completed s2=pending s3=pending
            subtask_started      executing  s1=completed s2=running s3=pending
            subtask_failed       executing  s1=completed s2=failed s3=pending
            subtask_retrying     executing  s1=completed s2=pending+1 s3=pending
            subtask_started      executing  s1=completed s2=running+1 s3=pending
            subtask_completed    executing  s1=completed s2=completed+1 s3=pending
            subtask_started      executing  s1=completed s2=completed+1 s3=running
            subtask_completed    executing  s1=completed s2=completed+1 s3=completed
            task_progress_note   executing  s1=completed s2=completed+1 s3=completed
            verification_passed  executing  s1=completed s2=completed+1 s3=completed
            task_completed       completed  s1=completed s2=completed+1 s3=completed"#]],
        );
        assert!(progress.is_terminal());
        assert_eq!(progress.unknown_events, ["task_progress_note"]);
        // A terminal status is final: a late event does not reopen the task.
        progress.apply(&LoomEvent::TaskExecuting);
        assert_eq!(progress.status, "completed");
    }

    #[test]
    fn result_of_a_completed_task() {
        let progress = fold(&decode_stream(COMPLETED_STREAM), "task-0001", "Add JWT refresh token rotation");
        check(
            &format_result(&progress, &progress.status),
            expect![[r#"
            Task completed: "Add JWT refresh token rotation"

            Subtasks:
              [x] Analyze current auth implementation (src/auth.py)
              [x] Add refresh token generation and validation (after 1 retry)
              [x] Add tests for the refresh flow

            Files changed:
              - src/auth.py (modified)
              - src/auth/refresh.py (created)
              - src/config.py
              - tests/test_auth_refresh.py (created)

            Verification: All subtasks passed verification.
            Checks passed: tests, lint

            Summary: All subtasks completed and verified."#]],
        );
    }

    #[test]
    fn result_of_a_failed_task() {
        let progress = fold(&decode_stream(FAILED_STREAM), "a1b2c3d4", "Migrate src/routes to TypeScript");
        check(
            &format_result(&progress, &progress.status),
            expect![[r#"
            Task failed: "Migrate src/routes to TypeScript"
            Error: subtasks failed: update-imports

            Subtasks:
              [x] convert-routes
              [!] update-imports: tsc: 3 errors in src/routes/index.ts
              [ ] run-typecheck

            Files changed: none reported.

            Verification: failed for update-imports."#]],
        );
    }

    #[test]
    fn result_of_a_failed_task_filled_in_from_the_status_snapshot() {
        // The stream named subtasks by id only; GET /tasks/{id} gives their descriptions and the reason.
        let mut progress = fold(&decode_stream(FAILED_STREAM), "a1b2c3d4", "");
        let status = parse_task_status(
            r#"{"task_id": "a1b2c3d4", "goal": "Migrate src/routes to TypeScript", "status": "failed",
                "plan": {"subtasks": [
                    {"id": "convert-routes", "description": "Convert src/routes/*.js to TypeScript", "status": "completed", "summary": "Converted 12 files."},
                    {"id": "update-imports", "description": "Update imports across the app", "status": "failed", "summary": "tsc: 3 errors"},
                    {"id": "run-typecheck", "description": "Run the type checker", "status": "skipped", "summary": ""}]},
                "error": "1 of 3 subtasks failed after retries"}"#,
        )
        .unwrap();
        progress.apply_status(&status);
        check(
            &format_result(&progress, &progress.status),
            expect![[r#"
            Task failed: "Migrate src/routes to TypeScript"
            Error: 1 of 3 subtasks failed after retries

            Subtasks:
              [x] Convert src/routes/*.js to TypeScript
              [!] Update imports across the app: tsc: 3 errors in src/routes/index.ts
              [ ] Run the type checker (skipped)

            Files changed: none reported.

            Verification: failed for Update imports across the app."#]],
        );
    }

    #[test]
    fn result_of_a_task_that_finished_before_the_stream_opened() {
        // Loom forwards only events after subscribing: the result comes from GET /tasks/{id} alone.
        let mut progress = TaskProgress::new("task-0002", "Rename the config module");
        let status = parse_task_status(
            r#"{"status": "completed", "plan": {"subtasks": [
                {"id": "s1", "description": "Rename config.py to settings.py", "status": "completed"},
                {"id": "s2", "description": "Fix imports", "status": "completed"}]},
                "result": {"summary": "Renamed.", "files_changed": [{"path": "src/settings.py", "action": "created"}, {"file": "src/config.py", "change": "deleted"}]}}"#,
        )
        .unwrap();
        progress.apply_status(&status);
        assert!(progress.is_terminal());
        check(
            &format_result(&progress, &progress.status),
            expect![[r#"
            Task completed: "Rename the config module"

            Subtasks:
              [x] Rename config.py to settings.py
              [x] Fix imports

            Files changed:
              - src/settings.py (created)
              - src/config.py (deleted)

            Verification: none reported by the orchestrator.

            Summary: Renamed."#]],
        );
    }

    #[test]
    fn results_of_cancelled_running_and_submitted_tasks() {
        let events = decode_stream(COMPLETED_STREAM);
        let cut = events
            .iter()
            .position(|e| matches!(e, LoomEvent::SubtaskStarted { subtask_id } if subtask_id == "s3"))
            .unwrap();
        let mut progress = fold(&events[..=cut], "task-0001", "");
        let running = format_result(&progress, &progress.status);
        let still = format_still_running(&progress, "the event stream closed: network error");
        progress.apply(&LoomEvent::TaskCancelled);
        let cancelled = format_result(&progress, &progress.status);
        let submitted = format_submitted("task-0003", "Refactor\nthe  router");
        check(
            &[running, still, cancelled, submitted].join("\n=====\n"),
            expect![[r#"
            Task still running: task task-0001 (status: executing)

            Subtasks:
              [x] Analyze current auth implementation (src/auth.py)
              [x] Add refresh token generation and validation (after 1 retry)
              [ ] Add tests for the refresh flow (running)

            Files changed:
              - src/auth.py (modified)
              - src/auth/refresh.py (created)

            Verification: 2 of 3 subtasks passed verification.
            =====
            Task submitted: task-0001 (still running; progress unavailable: the event stream closed: network error)
            Goal: task task-0001

            Subtasks:
              [x] Analyze current auth implementation (src/auth.py)
              [x] Add refresh token generation and validation (after 1 retry)
              [ ] Add tests for the refresh flow (running)

            The task continues on the orchestrator. Cowork re-attaches to it and adds its result to this conversation when it ends.
            =====
            Task cancelled: task task-0001

            Subtasks:
              [x] Analyze current auth implementation (src/auth.py)
              [x] Add refresh token generation and validation (after 1 retry)
              [ ] Add tests for the refresh flow (cancelled)

            Files changed:
              - src/auth.py (modified)
              - src/auth/refresh.py (created)

            Verification: 2 of 3 subtasks passed verification.
            =====
            Task submitted: task-0003
            Goal: "Refactor the router"
            The task runs in the background; its result will be added to this conversation when it ends."#]],
        );
    }

    #[test]
    fn results_are_read_back_by_the_session_state_register() {
        use crate::state::{apply_turn, ExtractionRules, SessionState};
        use crate::test_support::Convo;
        let progress = fold(&decode_stream(COMPLETED_STREAM), "task-0001", "Add JWT refresh token rotation");
        let result = format_result(&progress, &progress.status);
        let turns = Convo::new()
            .user("Add refresh token rotation")
            .calls("", &[("c1", "delegate_task", r#"{"goal":"Add JWT refresh token rotation"}"#)])
            .result("c1", "delegate_task", &result)
            .build();
        let mut state = SessionState::default();
        for turn in &turns {
            apply_turn(&mut state, turn, &ExtractionRules::default());
        }
        let files: Vec<String> = state.files_touched.iter().map(|f| format!("{} {:?}", f.path, f.action)).collect();
        check(
            &format!("{files:#?}\n{:#?}", state.key_decisions),
            expect![[r#"
            [
                "src/auth.py Edit",
                "src/auth/refresh.py Create",
                "src/config.py Write",
                "tests/test_auth_refresh.py Create",
            ]
            [
                "Task completed: \"Add JWT refresh token rotation\" — 4 files changed (turn 3)",
            ]"#]],
        );
    }

    #[test]
    fn failures_say_what_to_do() {
        let base = "http://127.0.0.1:9000/";
        let origin = "http://192.168.1.20:8080";
        let rows: &[(u16, &str, Option<bool>)] = &[
            (0, "", Some(true)),
            (0, "", Some(false)),
            (0, "", None),
            (404, r#"{"detail": "Task not found: abc"}"#, None),
            (400, r#"{"detail": "Workspace does not exist: /nope"}"#, None),
            (500, "<html>Internal Server Error</html>", None),
            (502, "upstream down", None),
        ];
        let mut out: Vec<String> = rows
            .iter()
            .map(|(status, body, probe)| {
                format!("{status} {probe:?} → {}", failure_message(base, origin, *status, body, *probe))
            })
            .collect();
        out.push(format_not_started("Migrate the routes", &failure_message(base, origin, 0, "", Some(true))));
        check(
            &out.join("\n"),
            expect![[r#"
            0 Some(true) → The browser blocked the orchestrator's reply from http://127.0.0.1:9000 (CORS). Loom allows only pages served from localhost or 127.0.0.1 by default: open Cowork from one of those (this page is http://192.168.1.20:8080), or allow this origin in the orchestrator's CORS settings.
            0 Some(false) → The orchestrator at http://127.0.0.1:9000 could not be reached. Check that it is running and that the orchestrator URL in Settings is right.
            0 None → The orchestrator at http://127.0.0.1:9000 could not be reached. Check that it is running and that the orchestrator URL in Settings is right; if it is running, the browser may have blocked it (CORS): Loom allows only pages served from localhost or 127.0.0.1 by default: open Cowork from one of those (this page is http://192.168.1.20:8080), or allow this origin in the orchestrator's CORS settings.
            404 None → The orchestrator at http://127.0.0.1:9000 answered HTTP 404: Task not found: abc. Check the orchestrator URL in Settings (the task or the /tasks endpoint was not found).
            400 None → The orchestrator at http://127.0.0.1:9000 answered HTTP 400: Workspace does not exist: /nope. The orchestrator refused the task as given (for example an unknown workspace path).
            500 None → The orchestrator at http://127.0.0.1:9000 answered HTTP 500. The orchestrator failed on its side: try again in a moment.
            502 None → The orchestrator at http://127.0.0.1:9000 answered HTTP 502: upstream down. The orchestrator failed on its side: try again in a moment.
            Task not started: "Migrate the routes"
            The browser blocked the orchestrator's reply from http://127.0.0.1:9000 (CORS). Loom allows only pages served from localhost or 127.0.0.1 by default: open Cowork from one of those (this page is http://192.168.1.20:8080), or allow this origin in the orchestrator's CORS settings.
            Nothing was delegated. Tell the user; retry delegate_task once the orchestrator is reachable, or do the work with direct tools."#]],
        );
    }

    #[test]
    fn memory_is_bounded_on_a_runaway_stream() {
        let mut progress = TaskProgress::new("t", "g");
        for i in 0..1000 {
            progress.apply(&LoomEvent::SubtaskStarted { subtask_id: format!("s{i}") });
            progress.apply(&LoomEvent::Unknown { event_type: format!("x{i}"), data: String::new() });
            progress.apply(&LoomEvent::SubtaskCompleted {
                subtask_id: format!("s{i}"),
                status: None,
                summary: None,
                duration_secs: None,
                verification_outcome: None,
                files_changed: vec![FileChange { path: format!("f{i}"), action: None }],
            });
        }
        assert_eq!(progress.subtasks.len(), MAX_TRACKED);
        assert_eq!(progress.unknown_events.len(), MAX_TRACKED);
        assert_eq!(progress.files_changed.len(), MAX_TRACKED);
        assert_eq!(progress.events_applied, 3000);
    }
}
