//! A Loom-compatible task orchestrator with a deterministic plan, for the demo and the tests. It speaks
//! the dialect of Loom 0.3.0's API server (`loom serve`), as read in its source:
//!
//! - `POST /tasks` checks `workspace` as a directory on this machine (`400 {"detail": "Path does not
//!   exist: …"}`), answers `201 {task_id, status, message, run_id}` and runs a three-step plan.
//! - Every event's data carries Loom's envelope: `task_id, run_id, timestamp, schema_version,
//!   correlation_id, event_id, sequence` (per task, from 1) and `source_component`. Besides the documented
//!   events come Loom's others: `task_run_acquired`, `task_run_heartbeat` (every [`Timing::heartbeat`]),
//!   `subtask_policy_reconciled`, `compaction_policy_decision`, `tool_call_started` /
//!   `tool_call_completed` (whose `files_changed` lists the files a step wrote — `task_completed` lists
//!   none), `verification_started` / `verification_passed`, `claim_verification_summary`,
//!   `artifact_seal_validation`, and after the end `run_validity_scorecard`, `telemetry_run_summary`.
//! - Streams are sse-starlette's: CRLF line ends, `: ping - <time>` comments every [`Timing::ping`]
//!   (`stream.rs`). `GET /tasks/{id}/stream` replays nothing and never closes for a task that already
//!   ended; `GET /runs/{task id}/stream` replays after `after_sequence` / `Last-Event-ID`.
//! - `GET /tasks/{id}` shows a final status [`Timing::status_lag`] after the terminal event.
//! - `DELETE /tasks/{id}` cancels a running task, and relabels a finished one `cancelled`.
//! - `approval_mode: "manual"` holds every step after it completes: `approval_requested {subtask_id,
//!   reason, proposed_action, risk_level}`, until `POST /tasks/{id}/approve {subtask_id, approved}`
//!   (`approval_received`, or `approval_rejected` and the step fails, so the task fails at the end).
//!
//! Goals steer the script: "fail" fails the second step, "slow" takes [`Timing::slow_step`] per step;
//! `[[drop-stream]]` (or `[[drop-stream:N]]`) makes the first stream connection of the task close from the
//! server's side after 5 (N) events, once, so clients must resume. Files named in the goal (words with a
//! `/` or `.`) are the ones the second step writes (`src/lib.rs` and `tests/integration.rs` otherwise).
//! Every stream is bounded ([`Timing::stream_limit`]) so nothing outlives a test run.

mod run;
mod stream;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{broadcast, oneshot};

/// How fast the scripted tasks go, and how often the streams show signs of life.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// One step of a task (150 ms).
    pub step: Duration,
    /// One step of a task whose goal says "slow" (600 ms).
    pub slow_step: Duration,
    /// Between two `task_run_heartbeat` events of a running task (Loom: 10 s).
    pub heartbeat: Duration,
    /// Between two `: ping` comments on a stream (sse-starlette: 15 s).
    pub ping: Duration,
    /// How long after its terminal event `GET /tasks/{id}` still shows the previous status (~50 ms).
    pub status_lag: Duration,
    /// The longest a stream stays open (two minutes).
    pub stream_limit: Duration,
}

impl Default for Timing {
    fn default() -> Timing {
        Timing {
            step: Duration::from_millis(150),
            slow_step: Duration::from_millis(600),
            heartbeat: Duration::from_secs(10),
            ping: Duration::from_secs(15),
            status_lag: Duration::from_millis(50),
            stream_limit: Duration::from_secs(120),
        }
    }
}

/// One published event: its sequence, type and data (with the envelope), as Loom keeps it.
#[derive(Debug)]
pub(crate) struct Published {
    pub(crate) sequence: u64,
    pub(crate) event_type: String,
    pub(crate) data: Value,
}

impl Published {
    pub(crate) fn is_terminal(&self) -> bool {
        terminal(&self.event_type)
    }
}

#[derive(Debug, Clone)]
struct Subtask {
    id: String,
    description: String,
    status: &'static str,
    summary: String,
}

struct Task {
    goal: String,
    run_id: String,
    workspace: String,
    manual: bool,
    /// What `GET /tasks/{id}` shows (a final status arrives [`Timing::status_lag`] late).
    status: &'static str,
    subtasks: Vec<Subtask>,
    files: Vec<String>,
    cancelled: bool,
    history: Vec<Arc<Published>>,
    events: broadcast::Sender<Arc<Published>>,
    /// The step held for approval and where its decision goes.
    approval: Option<(String, oneshot::Sender<bool>)>,
    /// `[[drop-stream]]`: the first stream closes after this many events (taken when it does).
    drop_after: Option<usize>,
    created_at: String,
}

/// All tasks of this server.
pub struct Orchestrator {
    tasks: Mutex<HashMap<String, Task>>,
    next: AtomicU64,
    timing: Timing,
}

impl Default for Orchestrator {
    fn default() -> Orchestrator {
        Orchestrator::new(Timing::default())
    }
}

impl Orchestrator {
    /// An orchestrator with no tasks, running at `timing`.
    pub fn new(timing: Timing) -> Orchestrator {
        Orchestrator { tasks: Mutex::new(HashMap::new()), next: AtomicU64::new(0), timing }
    }

    fn tasks(&self) -> MutexGuard<'_, HashMap<String, Task>> {
        self.tasks.lock().expect("tasks lock")
    }

    /// Publishes one event of task `id` with Loom's envelope; `false` (and nothing published) once the
    /// task was cancelled, unless the event is terminal. `update` changes the task under the same lock.
    fn publish(&self, id: &str, event_type: &str, payload: Value, update: impl FnOnce(&mut Task)) -> bool {
        let mut tasks = self.tasks();
        let Some(task) = tasks.get_mut(id) else { return false };
        if task.cancelled && !terminal(event_type) {
            return false;
        }
        update(task);
        let sequence = task.history.len() as u64 + 1;
        let mut data = json!({"task_id": id});
        if let Value::Object(fields) = payload {
            data.as_object_mut().expect("an object").extend(fields);
        }
        let source = if event_type == "task_created" { "unknown" } else { "orchestrator" };
        data["run_id"] = json!(task.run_id);
        data["schema_version"] = json!(1);
        data["source_component"] = data.get("source_component").cloned().unwrap_or(json!(source));
        data["correlation_id"] = json!(format!("run:{}", task.run_id));
        data["event_id"] = json!(format!("{:016x}{:016x}", now_nanos(), sequence));
        data["sequence"] = json!(sequence);
        data["timestamp"] = json!(iso_now());
        let event = Arc::new(Published { sequence, event_type: event_type.to_owned(), data });
        task.history.push(event.clone());
        let _ = task.events.send(event);
        true
    }

    /// Sets what `GET /tasks/{id}` shows, after [`Timing::status_lag`] (Loom saves the task's state a
    /// little after announcing its end).
    fn show_status_later(self: &Arc<Self>, id: &str, status: &'static str) {
        let (orch, id) = (self.clone(), id.to_owned());
        tokio::spawn(async move {
            tokio::time::sleep(orch.timing.status_lag).await;
            if let Some(task) = orch.tasks().get_mut(&id).filter(|t| t.status != "cancelled") {
                task.status = status;
            }
        });
    }

    /// Ends task `id` as cancelled (once): `task_cancelled`, and the status at once.
    fn finish_cancelled(&self, id: &str) {
        let counts = self.tasks().get(id).map(|t| (t.status, done(t), t.subtasks.len()));
        let Some((status, completed, total)) = counts else { return };
        if status != "cancelled" {
            self.publish(
                id,
                "task_cancelled",
                json!({"completed": completed, "total": total, "reason": "cancel_requested", "outcome": "cancelled"}),
                |t| {
                    t.status = "cancelled";
                    t.approval = None;
                },
            );
        }
    }
}

fn done(t: &Task) -> usize {
    t.subtasks.iter().filter(|s| s.status == "completed").count()
}

/// Builds the orchestrator's routes over `orch` (the dev server merges them with the app's).
pub fn router(orch: Arc<Orchestrator>) -> Router {
    use axum::routing::{get, post};
    Router::new()
        .route("/tasks", post(create).get(list))
        .route("/tasks/{id}", get(status).delete(cancel))
        .route("/tasks/{id}/stream", get(stream::task_stream))
        .route("/tasks/{id}/approve", post(approve))
        .route("/runs/{id}/stream", get(stream::run_stream))
        .with_state(orch)
}

fn now_nanos() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}

/// Now as Python's `datetime.now(UTC).isoformat()` writes it (`2026-04-20T09:15:02.123456+00:00`).
pub(crate) fn iso_now() -> String {
    let nanos = now_nanos();
    let secs = (nanos / 1_000_000_000) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = cowork_core::time::civil_from_days(days);
    let micros = (nanos / 1000) % 1_000_000;
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{micros:06}+00:00", rem / 3600, rem % 3600 / 60, rem % 60)
}

pub(crate) fn terminal(event: &str) -> bool {
    matches!(event, "task_completed" | "task_failed" | "task_cancelled")
}

fn detail(status: StatusCode, detail: impl Into<String>) -> Response {
    (status, Json(json!({"detail": detail.into()}))).into_response()
}

/// `POST /tasks`
async fn create(State(orch): State<Arc<Orchestrator>>, body: String) -> Response {
    // Lenient about the content type (browsers' simple requests), strict about the JSON itself.
    let body: Value = match serde_json::from_str(&body) {
        Ok(v) => v,
        Err(e) => return detail(StatusCode::BAD_REQUEST, format!("invalid JSON: {e}")),
    };
    let Some(goal) = body["goal"].as_str().filter(|g| !g.trim().is_empty()).map(str::to_owned) else {
        return detail(StatusCode::UNPROCESSABLE_ENTITY, "goal is required");
    };
    // Loom: `validate_workspace` on the canonical path, on the orchestrator's machine.
    let workspace = body["workspace"].as_str().unwrap_or("").trim().to_owned();
    let workspace = if workspace.is_empty() {
        String::new()
    } else {
        let path = std::path::absolute(&workspace).unwrap_or_else(|_| workspace.clone().into());
        if !path.exists() {
            return detail(StatusCode::BAD_REQUEST, format!("Path does not exist: {}", path.display()));
        }
        if !path.is_dir() {
            return detail(StatusCode::BAD_REQUEST, format!("Path is not a directory: {}", path.display()));
        }
        path.display().to_string()
    };
    let n = orch.next.fetch_add(1, Ordering::SeqCst) + 1;
    let (task_id, run_id) = (format!("task-{n:04}"), format!("run-{n:012x}"));
    let step = |id: &str, description: String| Subtask {
        id: id.into(),
        description,
        status: "pending",
        summary: String::new(),
    };
    let subtasks = vec![
        step("s1", format!("Analyze the code for: {goal}")),
        step("s2", format!("Implement: {goal}")),
        step("s3", format!("Add tests for: {goal}")),
    ];
    let mut files: Vec<String> = goal
        .split_whitespace()
        .filter(|w| !w.starts_with("[["))
        .filter(|w| w.contains('/') || w.contains('.'))
        .map(|w| w.trim_matches(|c: char| ",;:()".contains(c)).to_owned())
        .collect();
    if files.is_empty() {
        files = vec!["src/lib.rs".into(), "tests/integration.rs".into()];
    }
    let drop_after = goal
        .split("[[drop-stream")
        .nth(1)
        .map(|rest| rest.strip_prefix(':').and_then(|n| n.split("]]").next()?.trim().parse().ok()).unwrap_or(5));
    let (events, _) = broadcast::channel(256);
    let lower = goal.to_lowercase();
    let manual = body["approval_mode"].as_str() == Some("manual");
    orch.tasks().insert(
        task_id.clone(),
        Task {
            goal,
            run_id: run_id.clone(),
            workspace,
            manual,
            status: "pending",
            subtasks,
            files,
            cancelled: false,
            history: Vec::new(),
            events,
            approval: None,
            drop_after,
            created_at: iso_now(),
        },
    );
    let step = if lower.contains("slow") { orch.timing.slow_step } else { orch.timing.step };
    tokio::spawn(run::run(orch.clone(), task_id.clone(), step, lower.contains("fail")));
    let answer = json!({"task_id": task_id, "status": "pending", "message": "Task created and execution started.",
                        "run_id": run_id});
    (StatusCode::CREATED, Json(answer)).into_response()
}

/// `GET /tasks`: Loom's `TaskListItem`s (`task_id, goal, status, created_at`), oldest first; tests read
/// it to see what was (or was not) submitted.
async fn list(State(orch): State<Arc<Orchestrator>>) -> Json<Value> {
    let tasks = orch.tasks();
    let mut items: Vec<(&String, &Task)> = tasks.iter().collect();
    items.sort_by(|a, b| a.1.created_at.cmp(&b.1.created_at).then(a.0.cmp(b.0)));
    Json(Value::Array(
        items
            .into_iter()
            .map(|(id, t)| json!({"task_id": id, "goal": t.goal, "status": t.status, "created_at": t.created_at}))
            .collect(),
    ))
}

/// `GET /tasks/{id}`: Loom's `TaskResponse` (no result: Loom reports changed files only in events).
async fn status(State(orch): State<Arc<Orchestrator>>, Path(id): Path<String>) -> Response {
    let tasks = orch.tasks();
    let Some(t) = tasks.get(&id) else { return detail(StatusCode::NOT_FOUND, format!("Task not found: {id}")) };
    let count = |s: &str| t.subtasks.iter().filter(|x| x.status == s).count();
    let (completed, total) = (done(t), t.subtasks.len());
    let planned = !matches!(t.status, "pending" | "planning") || completed > 0;
    let plan = planned.then(|| {
        let subtasks: Vec<Value> = t
            .subtasks
            .iter()
            .map(|s| {
                json!({"id": s.id, "description": s.description, "status": s.status, "depends_on": [],
                            "retry_count": 0, "summary": s.summary})
            })
            .collect();
        json!({"version": 1, "subtasks": subtasks})
    });
    Json(json!({
        "task_id": id, "run_id": t.run_id, "goal": t.goal, "status": t.status,
        "workspace": (!t.workspace.is_empty()).then_some(&t.workspace), "plan": plan,
        "created_at": t.created_at, "updated_at": iso_now(),
        "approval_mode": if t.manual { "manual" } else { "auto" },
        "progress": {"total_subtasks": total, "completed": completed, "failed": count("failed"),
                     "pending": count("pending"), "running": count("running"),
                     "percent_complete": if total > 0 { completed as f64 * 100.0 / total as f64 } else { 0.0 }},
    }))
    .into_response()
}

/// `DELETE /tasks/{id}`: like Loom, a finished task is relabelled `cancelled` (and says so).
async fn cancel(State(orch): State<Arc<Orchestrator>>, Path(id): Path<String>) -> Response {
    let running = {
        let mut tasks = orch.tasks();
        let Some(t) = tasks.get_mut(&id) else { return detail(StatusCode::NOT_FOUND, format!("Task not found: {id}")) };
        let running = !matches!(t.status, "completed" | "failed" | "cancelled");
        t.cancelled = true;
        t.approval = None; // dropping the sender wakes a step waiting for approval
        running
    };
    orch.finish_cancelled(&id);
    Json(json!({"status": "ok", "message": format!("Task {id} cancelled."), "task_status": "cancelled",
                "stop_requested": running}))
    .into_response()
}

/// `POST /tasks/{id}/approve` with `{subtask_id, approved, reason?}`.
async fn approve(State(orch): State<Arc<Orchestrator>>, Path(id): Path<String>, body: String) -> Response {
    let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let (Some(subtask_id), Some(approved)) = (body["subtask_id"].as_str(), body["approved"].as_bool()) else {
        return detail(StatusCode::UNPROCESSABLE_ENTITY, "subtask_id (a string) and approved (a boolean) are required");
    };
    let waiting = {
        let mut tasks = orch.tasks();
        let Some(t) = tasks.get_mut(&id) else { return detail(StatusCode::NOT_FOUND, format!("Task not found: {id}")) };
        match t.approval.take() {
            Some((held, decide)) if held == subtask_id => Some(decide),
            other => {
                t.approval = other;
                None
            }
        }
    };
    let resolved = waiting.is_some();
    if let Some(decide) = waiting {
        let event = if approved { "approval_received" } else { "approval_rejected" };
        orch.publish(&id, event, json!({"subtask_id": subtask_id, "approved": approved}), |_| {});
        let _ = decide.send(approved);
    }
    Json(json!({"status": "ok", "approved": approved, "subtask_id": subtask_id, "resolved_pending": resolved}))
        .into_response()
}
