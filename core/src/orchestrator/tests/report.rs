//! The texts: delegated results of every ending, their reading by the state register, failures.

use super::*;

#[test]
fn result_of_a_completed_task() {
    let progress = fold(&decode_stream(COMPLETED_STREAM), "task-0001", "Add JWT refresh token rotation");
    check(
        &format_result(&progress, progress.status.as_str()),
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
        &format_result(&progress, progress.status.as_str()),
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
        &format_result(&progress, progress.status.as_str()),
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
        &format_result(&progress, progress.status.as_str()),
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
    let running = format_result(&progress, progress.status.as_str());
    let still = format_still_running(&progress, "the event stream closed: network error");
    progress.apply(&LoomEvent::TaskCancelled);
    let cancelled = format_result(&progress, progress.status.as_str());
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
    let result = format_result(&progress, progress.status.as_str());
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
