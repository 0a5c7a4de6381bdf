//! Requests, and decoding answers and events (odd ones included).

use serde_json::{json, Value};

use super::*;
use crate::transport::HttpRequest;

#[test]
fn requests() {
    let task = TaskSubmission {
        goal: "Add JWT refresh token rotation to src/auth.py".to_string(),
        directory: "/home/me/project".to_string(),
        manual_approvals: false,
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
        render(&run_stream_request("http://127.0.0.1:9000/", "task-0001", 0)),
        render(&run_stream_request("http://127.0.0.1:9000", "task 1", 17)),
        render(&approve_task_request("http://127.0.0.1:9000", "task-0001", "s2", false)),
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
            GET http://127.0.0.1:9000/runs/task-0001/stream [accept: text/event-stream]
            GET http://127.0.0.1:9000/runs/task%201/stream?after_sequence=17 [accept: text/event-stream, last-event-id: 17]
            POST http://127.0.0.1:9000/tasks/task-0001/approve [content-type: application/json, accept: application/json]
            {
              "approved": false,
              "subtask_id": "s2"
            }
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
            directory: "w".into(),
            manual_approvals: true,
            context: context.clone(),
            session_id: "s".into(),
            turn: 1,
        };
        let body: Value = serde_json::from_str(&create_task_request("http://x", &task).body).unwrap();
        assert_eq!(body["context"], expect, "context {context}");
        assert_eq!(body["approval_mode"], "manual");
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
        TaskSnapshot { task_id: "task-0001", goal: "Add refresh", status: "completed", subtasks: [SubtaskInfo { id: "s1", description: "Analyze", status: "completed", summary: "Done: Analyze" }, SubtaskInfo { id: "s2", description: "Implement", status: "failed", summary: "tsc failed" }], progress: ProgressCounts { total_subtasks: 2, completed: 1, failed: 1, pending: 0, running: 0, percent_complete: 50.0 }, summary: Some("All subtasks completed and verified."), files_changed: [FileChange { path: "src/auth.py", action: None }], error: None } terminal=true
        TaskSnapshot { task_id: "", goal: "", status: "executing", subtasks: [], progress: ProgressCounts { total_subtasks: 0, completed: 0, failed: 0, pending: 0, running: 0, percent_complete: 0.0 }, summary: None, files_changed: [], error: None } terminal=false
        TaskSnapshot { task_id: "", goal: "", status: "planning", subtasks: [], progress: ProgressCounts { total_subtasks: 3, completed: 0, failed: 0, pending: 0, running: 0, percent_complete: 0.0 }, summary: None, files_changed: [], error: None } terminal=false
        TaskSnapshot { task_id: "", goal: "", status: "", subtasks: [], progress: ProgressCounts { total_subtasks: 0, completed: 0, failed: 0, pending: 0, running: 0, percent_complete: 0.0 }, summary: None, files_changed: [], error: None } terminal=false
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
            let ev = crate::sse::SseEvent {
                event: event.map(str::to_string),
                data: data.to_string(),
                id: None,
                fields: Vec::new(),
            };
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
