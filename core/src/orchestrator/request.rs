//! The requests to Loom's task API: create, status snapshot, event streams, cancel, approve.

use serde_json::{json, Value};

use crate::transport::{join_url, HttpRequest};

/// What `delegate_task` hands the orchestrator.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSubmission {
    /// What to do: the tool call's `goal`, trimmed.
    pub goal: String,
    /// The workspace's orchestrator directory: a path on the orchestrator's machine, sent as Loom's
    /// `workspace` (Loom refuses a path that does not exist there: `400 Path does not exist: …`).
    pub directory: String,
    /// Ask the orchestrator to wait for a decision on every step (`approval_mode: "manual"`), answered with
    /// [`approve_task_request`]; otherwise Loom's default, `"auto"`.
    pub manual_approvals: bool,
    /// The tool call's `context`: an object is sent as it is; a string becomes `{"notes": …}`, null or an
    /// empty string `{}`, anything else `{"value": …}` (Loom requires an object).
    pub context: Value,
    /// The delegating session's id, sent as `metadata.session_id`.
    pub session_id: String,
    /// The delegating assistant turn's number, sent as `metadata.turn`.
    pub turn: i64,
}

/// `POST {base}/tasks` with `{goal, workspace, context, approval_mode, metadata: {session_id, turn}}`, where
/// `workspace` is the directory and `approval_mode` is `"manual"` or `"auto"`. The user approves every
/// delegation in Cowork; with `"auto"` the orchestrator then runs unattended.
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
        "workspace": task.directory,
        "context": context,
        "approval_mode": if task.manual_approvals { "manual" } else { "auto" },
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

/// `GET {base}/tasks/{id}/stream`: Server-Sent Events from now on (Loom replays nothing), named by type;
/// closes after a terminal event it delivered, and never when the task had already ended.
pub fn task_stream_request(base_url: &str, task_id: &str) -> HttpRequest {
    get(format!("{}/stream", task_url(base_url, task_id)), "text/event-stream")
}

/// `GET {base}/runs/{id}/stream?after_sequence=N` with `Last-Event-ID: N`: Loom's replaying stream. Its
/// `{id}` is the **task** id (Loom's `/runs/…` routes look the task up by it; the `run_id` of `POST /tasks`
/// is the run's lease id and is not found there). It replays the events after sequence `N` (0: all), then
/// follows live, each as `event: run_event` with `id: <sequence>`, and closes after a terminal event.
/// Loom reads a numeric `Last-Event-ID` as an event row id first and falls back to it as a sequence, never
/// past `after_sequence`; sending both resumes exactly where `after_sequence` says.
pub fn run_stream_request(base_url: &str, task_id: &str, after_sequence: u64) -> HttpRequest {
    let mut url = format!("{}/{}/stream", join_url(base_url, "/runs"), percent_encode(task_id));
    let mut req = get(String::new(), "text/event-stream");
    if after_sequence > 0 {
        url.push_str(&format!("?after_sequence={after_sequence}"));
        req.headers.push(("last-event-id".to_string(), after_sequence.to_string()));
    }
    HttpRequest { url, ..req }
}

/// `POST {base}/tasks/{id}/approve` with `{subtask_id, approved}`: the decision on a step the orchestrator
/// holds for approval (an `approval_requested` event). Loom answers `{status, approved, subtask_id,
/// resolved_pending}` and announces `approval_received` (or `approval_rejected`) on the stream.
pub fn approve_task_request(base_url: &str, task_id: &str, subtask_id: &str, approved: bool) -> HttpRequest {
    HttpRequest {
        method: "POST".to_string(),
        url: format!("{}/approve", task_url(base_url, task_id)),
        headers: vec![
            ("content-type".to_string(), "application/json".to_string()),
            ("accept".to_string(), "application/json".to_string()),
        ],
        body: json!({"subtask_id": subtask_id, "approved": approved}).to_string(),
    }
}

/// `DELETE {base}/tasks/{id}`: cancels the task (Loom also relabels a finished task `cancelled`).
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
