//! A Loom-compatible task orchestrator with a deterministic plan, for the demo and the tests.
//!
//! `POST /tasks` starts a task that plans three subtasks and works through them, publishing events
//! (`task_created` … `task_completed`). Like Loom, `GET /tasks/{id}/stream` forwards only events
//! published after the client subscribed, sends keepalive comments, and closes after a terminal
//! event it delivered; clients must also `GET /tasks/{id}` to catch a task that already finished.
//! Goals containing "fail" fail at the second subtask; goals containing "slow" take ~0.6 s per step.
//! Every stream is bounded (two minutes) so nothing outlives a test run.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::broadcast;
use tokio_stream::wrappers::ReceiverStream;

const STREAM_LIMIT: Duration = Duration::from_secs(120);

#[derive(Debug, Clone)]
struct Subtask {
    id: String,
    description: String,
    status: &'static str,
    summary: String,
}

struct Task {
    goal: String,
    status: &'static str,
    subtasks: Vec<Subtask>,
    files_changed: Vec<String>,
    cancelled: bool,
    events: broadcast::Sender<(String, Value)>,
}

/// All tasks of this server.
#[derive(Default)]
pub struct Orchestrator {
    tasks: Mutex<HashMap<String, Task>>,
    next: AtomicU64,
}

fn now_secs() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

fn terminal(event: &str) -> bool {
    matches!(event, "task_completed" | "task_failed" | "task_cancelled")
}

/// `POST /tasks`
pub async fn create(State(orch): State<Arc<Orchestrator>>, body: String) -> Response {
    // Lenient about the content type (browsers' simple requests), strict about the JSON itself.
    let body: Value = match serde_json::from_str(&body) {
        Ok(v) => v,
        Err(e) => {
            return (StatusCode::BAD_REQUEST, Json(json!({"detail": format!("invalid JSON: {e}")}))).into_response()
        }
    };
    let Some(goal) = body["goal"].as_str().filter(|g| !g.trim().is_empty()).map(str::to_owned) else {
        return (StatusCode::UNPROCESSABLE_ENTITY, Json(json!({"detail": "goal is required"}))).into_response();
    };
    let n = orch.next.fetch_add(1, Ordering::SeqCst) + 1;
    let task_id = format!("task-{n:04}");
    let subtasks = vec![
        Subtask {
            id: "s1".into(),
            description: format!("Analyze the code for: {goal}"),
            status: "pending",
            summary: String::new(),
        },
        Subtask {
            id: "s2".into(),
            description: format!("Implement: {goal}"),
            status: "pending",
            summary: String::new(),
        },
        Subtask {
            id: "s3".into(),
            description: format!("Add tests for: {goal}"),
            status: "pending",
            summary: String::new(),
        },
    ];
    let mut files: Vec<String> = goal
        .split_whitespace()
        .filter(|w| w.contains('/') || w.contains('.'))
        .map(|w| w.trim_matches(|c: char| ",;:()".contains(c)).to_owned())
        .collect();
    if files.is_empty() {
        files = vec!["src/lib.rs".into(), "tests/integration.rs".into()];
    }
    let (events, _) = broadcast::channel(64);
    let slow = goal.to_lowercase().contains("slow");
    let fail = goal.to_lowercase().contains("fail");
    orch.tasks.lock().expect("tasks lock").insert(
        task_id.clone(),
        Task { goal: goal.clone(), status: "pending", subtasks, files_changed: files, cancelled: false, events },
    );
    tokio::spawn(run(orch.clone(), task_id.clone(), if slow { 600 } else { 150 }, fail));
    let run_id = format!("run-{n:04}");
    (
        StatusCode::CREATED,
        Json(json!({"task_id": task_id, "status": "pending", "message": "Task created", "run_id": run_id})),
    )
        .into_response()
}

/// Works through the plan, publishing events; stops early when cancelled.
async fn run(orch: Arc<Orchestrator>, id: String, step_ms: u64, fail: bool) {
    let step = Duration::from_millis(step_ms);
    // Publishes one event and updates the task; returns false once the task was cancelled.
    let publish = |event: &str, data: Value, update: &dyn Fn(&mut Task)| -> bool {
        let mut tasks = orch.tasks.lock().expect("tasks lock");
        let Some(task) = tasks.get_mut(&id) else { return false };
        if task.cancelled && !terminal(event) {
            return false;
        }
        update(task);
        let mut data = data;
        data["task_id"] = json!(id);
        data["timestamp"] = json!(now_secs());
        let _ = task.events.send((event.to_owned(), data));
        true
    };
    let cancelled = |orch: &Orchestrator| orch.tasks.lock().expect("tasks lock").get(&id).is_none_or(|t| t.cancelled);
    let steps: Vec<(&str, Value)> = vec![("task_created", json!({})), ("task_planning", json!({}))];
    for (event, data) in steps {
        tokio::time::sleep(step).await;
        if !publish(event, data, &|t| t.status = "planning") {
            return finish_cancelled(&orch, &id);
        }
    }
    tokio::time::sleep(step).await;
    let plan: Vec<Value> = orch.tasks.lock().expect("tasks lock")[&id]
        .subtasks
        .iter()
        .map(|s| json!({"id": s.id, "description": s.description, "status": s.status}))
        .collect();
    if !publish("task_plan_ready", json!({"plan": {"subtasks": plan}}), &|t| t.status = "executing")
        || !publish("task_executing", json!({}), &|_| {})
    {
        return finish_cancelled(&orch, &id);
    }
    for i in 0..3 {
        tokio::time::sleep(step).await;
        let sid = format!("s{}", i + 1);
        if cancelled(&orch)
            || !publish("subtask_started", json!({"subtask_id": sid}), &|t| t.subtasks[i].status = "running")
        {
            return finish_cancelled(&orch, &id);
        }
        tokio::time::sleep(step).await;
        if fail && i == 1 {
            let error = "tests failed: 2 assertions did not hold";
            publish("subtask_failed", json!({"subtask_id": sid, "error": error}), &|t| {
                t.subtasks[i].status = "failed";
                t.subtasks[i].summary = error.into();
            });
            publish("task_failed", json!({"error": format!("subtask {sid} failed: {error}")}), &|t| {
                t.status = "failed"
            });
            return;
        }
        let summary = format!("Done: {}", orch.tasks.lock().expect("tasks lock")[&id].subtasks[i].description);
        let ok = publish(
            "subtask_completed",
            json!({"subtask_id": sid, "status": "completed", "summary": summary, "duration": step_ms as f64 / 1000.0,
                   "verification_outcome": "passed"}),
            &|t| {
                t.subtasks[i].status = "completed";
                t.subtasks[i].summary = summary.clone();
            },
        );
        if !ok {
            return finish_cancelled(&orch, &id);
        }
    }
    tokio::time::sleep(step).await;
    publish("verification_passed", json!({"checks": ["tests", "lint"]}), &|_| {});
    let files = orch.tasks.lock().expect("tasks lock")[&id].files_changed.clone();
    publish(
        "task_completed",
        json!({"result": {"summary": "All subtasks completed and verified.", "files_changed": files}}),
        &|t| t.status = "completed",
    );
}

fn finish_cancelled(orch: &Orchestrator, id: &str) {
    let mut tasks = orch.tasks.lock().expect("tasks lock");
    if let Some(task) = tasks.get_mut(id) {
        if task.status != "cancelled" {
            task.status = "cancelled";
            let _ = task.events.send(("task_cancelled".into(), json!({"task_id": id, "timestamp": now_secs()})));
        }
    }
}

/// `GET /tasks/{id}`
pub async fn status(State(orch): State<Arc<Orchestrator>>, Path(id): Path<String>) -> Response {
    let tasks = orch.tasks.lock().expect("tasks lock");
    let Some(t) = tasks.get(&id) else {
        return (StatusCode::NOT_FOUND, Json(json!({"detail": format!("task {id} not found")}))).into_response();
    };
    let count = |s: &str| t.subtasks.iter().filter(|x| x.status == s).count();
    let done = count("completed");
    let mut body = json!({
        "task_id": id, "goal": t.goal, "status": t.status,
        "plan": {"subtasks": t.subtasks.iter().map(|s| json!({"id": s.id, "description": s.description, "status": s.status, "summary": s.summary})).collect::<Vec<_>>()},
        "progress": {"total_subtasks": t.subtasks.len(), "completed": done, "failed": count("failed"),
                     "pending": count("pending"), "running": count("running"),
                     "percent_complete": (done * 100 / t.subtasks.len().max(1)) as f64},
    });
    if t.status == "completed" {
        body["result"] = json!({"summary": "All subtasks completed and verified.", "files_changed": t.files_changed});
    }
    Json(body).into_response()
}

/// `DELETE /tasks/{id}`
pub async fn cancel(State(orch): State<Arc<Orchestrator>>, Path(id): Path<String>) -> Response {
    let mut tasks = orch.tasks.lock().expect("tasks lock");
    let Some(t) = tasks.get_mut(&id) else {
        return (StatusCode::NOT_FOUND, Json(json!({"detail": format!("task {id} not found")}))).into_response();
    };
    if !matches!(t.status, "completed" | "failed" | "cancelled") {
        t.cancelled = true;
    }
    drop(tasks);
    // The runner notices at its next step; publish promptly for clients that are listening.
    let orch2 = orch.clone();
    tokio::spawn(async move { finish_cancelled_if_flagged(&orch2, &id) });
    Json(json!({"status": "cancelling"})).into_response()
}

fn finish_cancelled_if_flagged(orch: &Orchestrator, id: &str) {
    let flagged = orch.tasks.lock().expect("tasks lock").get(id).is_some_and(|t| t.cancelled);
    if flagged {
        finish_cancelled(orch, id);
    }
}

/// `GET /tasks/{id}/stream`: Server-Sent Events, Loom's semantics (see the module docs).
pub async fn stream(State(orch): State<Arc<Orchestrator>>, Path(id): Path<String>) -> Response {
    let Some(mut rx) = orch.tasks.lock().expect("tasks lock").get(&id).map(|t| t.events.subscribe()) else {
        return (StatusCode::NOT_FOUND, Json(json!({"detail": format!("task {id} not found")}))).into_response();
    };
    let (tx, out) = tokio::sync::mpsc::channel::<Result<String, std::io::Error>>(16);
    tokio::spawn(async move {
        let deadline = tokio::time::Instant::now() + STREAM_LIMIT;
        let mut keepalive = tokio::time::interval(Duration::from_secs(1));
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(deadline) => return,
                _ = keepalive.tick() => {
                    if tx.send(Ok(": keepalive\n\n".into())).await.is_err() { return; }
                }
                ev = rx.recv() => match ev {
                    Ok((event, data)) => {
                        if tx.send(Ok(format!("event: {event}\ndata: {data}\n\n"))).await.is_err() { return; }
                        if terminal(&event) { return; }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            }
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from_stream(ReceiverStream::new(out)))
        .expect("a valid response")
}
