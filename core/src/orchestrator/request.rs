//! The requests to Loom's task API: create, status snapshot, event stream, cancel.

use serde_json::{json, Value};

use crate::provider::{join_url, HttpRequest};

/// What `delegate_task` hands the orchestrator.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSubmission {
    /// What to do: the tool call's `goal`, trimmed.
    pub goal: String,
    /// The session's workspace directory, where the orchestrator works.
    pub workspace: String,
    /// The tool call's `context`: an object is sent as it is; a string becomes `{"notes": …}`, null or an
    /// empty string `{}`, anything else `{"value": …}` (Loom requires an object).
    pub context: Value,
    /// The delegating session's id, sent as `metadata.session_id`.
    pub session_id: String,
    /// The delegating assistant turn's number, sent as `metadata.turn`.
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
