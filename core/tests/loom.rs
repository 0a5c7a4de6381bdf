//! Regression tests for issue #18: delegation against a real Loom (0.3.0) failed — the workspace label
//! was sent as Loom's `workspace` (a directory on Loom's machine), changed files reported in
//! `tool_call_completed` never reached the result ("Files changed: none reported."), and Loom's
//! dialect (the `run_event` envelope, CRLF, heartbeats, the status lag, manual approvals) was not
//! followed. The streams are hand-written from Loom's source (`core/tests/data/loom/README.md`).
#![cfg(not(target_arch = "wasm32"))]

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use cowork_core::agent::delegate::{delegate, respond_to_approval, Delegation, APPROVAL_DECISION_EVENT};
use cowork_core::agent::{HttpResponse, ResponseBody, Transport, TransportError};
use cowork_core::orchestrator::{format_result, receive_sse_event, PendingApproval, ReceivedEvent, TaskProgress};
use cowork_core::provider::HttpRequest;
use cowork_core::sse::SseParser;
use cowork_core::state::{apply_turn, ExtractionRules, SessionState};
use cowork_core::store::{NewSession, Store};
use cowork_core::{NewTurn, ToolCall};
use serde_json::json;

const TASK_STREAM: &str = include_str!("data/loom/task_stream.sse");
const RUN_STREAM: &str = include_str!("data/loom/run_stream.sse");
const BASE: &str = "http://loom.test";

/// Every event of a stream, fed in `chunk`-byte pieces (cut anywhere, CRLFs included).
fn received(stream: &str, chunk: usize) -> Vec<ReceivedEvent> {
    let mut parser = SseParser::new();
    stream.as_bytes().chunks(chunk).flat_map(|piece| parser.push(piece)).map(|ev| receive_sse_event(&ev)).collect()
}

fn fold(events: &[ReceivedEvent]) -> TaskProgress {
    let mut progress = TaskProgress::new("task-7f3a", "Add refresh tokens to src/auth.py");
    for e in events {
        progress.apply(&e.event);
    }
    progress
}

#[test]
fn looms_events_fold_into_the_checklist_files_and_result() {
    assert!(TASK_STREAM.contains("\r\n") && !TASK_STREAM.replace("\r\n", "").contains('\n'), "the fixture is CRLF");
    for (stream, chunk) in [(TASK_STREAM, 7), (TASK_STREAM, 4096), (RUN_STREAM, 5), (RUN_STREAM, 4096)] {
        let events = received(stream, chunk);
        assert_eq!(events.len(), 30, "pings and `: open` are not events");
        let sequences: Vec<u64> = events.iter().map(|e| e.sequence.unwrap()).collect();
        assert_eq!(sequences, (1..=30).collect::<Vec<u64>>());
        assert!(events.iter().all(|e| e.event_id.is_some()));
        // Both streams archive the same payload under the same type.
        assert_eq!(events[18].event_type, "tool_call_completed");
        let data: serde_json::Value = serde_json::from_str(&events[18].data).unwrap();
        assert_eq!((data["sequence"].clone(), data["files_changed"].clone()), (json!(19), json!(["src/auth.py"])));

        let progress = fold(&events);
        assert_eq!(progress.status.as_str(), "completed");
        assert_eq!(progress.unknown_events, ["loom_future_event"], "heartbeats and telemetry are not unknown");
        let checklist = progress.checklist();
        let steps: Vec<(&str, &str)> = checklist.iter().map(|c| (c.label.as_str(), c.status.as_str())).collect();
        assert_eq!(steps, [("analyze-auth", "completed"), ("implement-refresh", "completed")]);
        assert!(checklist.iter().all(|c| c.approval.is_none()), "every held step was decided");
        let result = format_result(&progress, progress.status.as_str());
        assert_eq!(
            result,
            "Task completed: \"Add refresh tokens to src/auth.py\"\n\nSubtasks:\n  [x] analyze-auth\n  [x] \
             implement-refresh\n\nFiles changed:\n  - src/auth.py (modified)\n  - tests/test_refresh.py\n\n\
             Verification: All subtasks passed verification."
        );
        // The session-state register reads the files back from the result.
        let mut store = Store::open_in_memory().unwrap();
        let session_id = session(&mut store);
        let turn = store.append_turn(&session_id, &NewTurn::tool_result("c1", "delegate_task", result)).unwrap();
        let mut state = SessionState::new(&session_id, "app", "m");
        apply_turn(&mut state, &turn, &ExtractionRules::default());
        let touched: Vec<&str> = state.files_touched.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(touched, ["src/auth.py", "tests/test_refresh.py"]);
    }
}

#[test]
fn a_held_step_shows_its_pending_approval_until_loom_says_it_was_decided() {
    let events = received(TASK_STREAM, 4096);
    let requested = events.iter().position(|e| e.event_type == "approval_requested").unwrap();
    let progress = fold(&events[..=requested]);
    assert_eq!(progress.status.as_str(), "waiting_approval");
    let held = PendingApproval {
        subtask_id: "analyze-auth".into(),
        proposed_action: "Sessions use opaque tokens in Redis".into(),
        reason: "Confidence medium (0.62)".into(),
        risk_level: "medium".into(),
    };
    assert_eq!(progress.checklist()[0].approval.as_ref(), Some(&held));
    assert_eq!(progress.pending_approvals(), [&held]);
    let progress = fold(&events[..=requested + 1]);
    assert_eq!(progress.checklist()[0].approval, None);
    assert_eq!(progress.status.as_str(), "executing");
    // A rejection fails the step.
    let mut rejected = fold(&events[..=requested]);
    rejected.apply(&cowork_core::orchestrator::decode_event(
        "approval_rejected",
        r#"{"subtask_id": "analyze-auth", "approved": false}"#,
    ));
    assert_eq!(rejected.checklist()[0].status, "failed");
    assert_eq!(rejected.checklist()[0].approval, None);
}

// ---- a scripted Loom ---------------------------------------------------------------------------------

/// Answers by request; records each one (`METHOD url [last-event-id] body`).
struct Loom {
    /// The bodies of successive `GET /runs/…/stream` requests (the last one repeats).
    runs: RefCell<VecDeque<String>>,
    /// The statuses of successive `GET /tasks/t1` requests (the last one repeats).
    statuses: RefCell<VecDeque<&'static str>>,
    requests: RefCell<Vec<String>>,
    sleeps: RefCell<Vec<u64>>,
}

impl Loom {
    fn new(runs: Vec<String>, statuses: Vec<&'static str>) -> Loom {
        Loom {
            runs: RefCell::new(runs.into()),
            statuses: RefCell::new(statuses.into()),
            requests: RefCell::new(Vec::new()),
            sleeps: RefCell::new(Vec::new()),
        }
    }

    fn next<T: Clone>(queue: &RefCell<VecDeque<T>>) -> T {
        let mut q = queue.borrow_mut();
        if q.len() > 1 {
            q.pop_front().unwrap()
        } else {
            q.front().cloned().expect("a scripted answer")
        }
    }
}

/// A body in 9-byte pieces.
struct Body(VecDeque<Vec<u8>>);

impl ResponseBody for Body {
    async fn chunk(&mut self) -> Option<Result<Vec<u8>, TransportError>> {
        self.0.pop_front().map(Ok)
    }
}

impl Transport for Loom {
    type Body = Body;

    async fn send(&self, req: &HttpRequest) -> Result<HttpResponse<Body>, TransportError> {
        let last_id = req.headers.iter().find(|(k, _)| k == "last-event-id").map(|(_, v)| format!(" [{v}]"));
        self.requests.borrow_mut().push(format!(
            "{} {}{}{}",
            req.method,
            req.url,
            last_id.unwrap_or_default(),
            req.body
        ));
        let path = req.url.strip_prefix(BASE).unwrap_or(&req.url);
        let (status, body) = match (req.method.as_str(), path) {
            ("POST", "/tasks") => (201, json!({"task_id": "t1", "status": "pending", "run_id": "run-1"}).to_string()),
            ("POST", "/tasks/t1/approve") => (
                200,
                json!({"status": "ok", "approved": false, "subtask_id": "s2", "resolved_pending": true}).to_string(),
            ),
            ("GET", p) if p.starts_with("/runs/t1/stream") => (200, Loom::next(&self.runs)),
            ("GET", "/tasks/t1") => {
                let status = Loom::next(&self.statuses);
                let plan = json!({"subtasks": [
                    {"id": "analyze-auth", "description": "Analyze the auth module", "status": "completed"},
                    {"id": "implement-refresh", "description": "Implement refresh tokens", "status": "completed"}]});
                (200, json!({"task_id": "t1", "status": status, "plan": plan}).to_string())
            }
            _ => (404, r#"{"detail": "Not Found"}"#.to_string()),
        };
        let pieces = body.as_bytes().chunks(9).map(<[u8]>::to_vec).collect();
        Ok(HttpResponse { status, headers: Vec::new(), body: Body(pieces) })
    }

    async fn sleep_ms(&self, ms: u64) {
        self.sleeps.borrow_mut().push(ms);
    }

    fn now_ms(&self) -> i64 {
        0
    }
}

/// Runs a future whose I/O all completes at once (the scripted Loom never waits).
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000_000 {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
    panic!("the future never finished although nothing it awaits can block");
}

fn session(store: &mut Store) -> String {
    store.create_session(&NewSession::new("app")).expect("create a session").id
}

fn delegation<'a>(session_id: &'a str, directory: Option<&'a str>) -> Delegation<'a> {
    Delegation { base_url: BASE, session_id, workspace: "app", directory, manual_approvals: true, turn_number: 2 }
}

fn call() -> ToolCall {
    ToolCall {
        id: "call_1".into(),
        name: "delegate_task".into(),
        arguments: json!({"goal": "Add refresh tokens to src/auth.py"}).to_string(),
    }
}

/// The run stream's frames from `first` to `last` (1-based sequences), `: open` first.
fn frames(first: usize, last: usize) -> String {
    let frames: Vec<&str> = RUN_STREAM.split_inclusive("\r\n\r\n").filter(|f| f.starts_with("id: ")).collect();
    format!(": open\r\n\r\n{}", frames[first - 1..last].concat())
}

#[test]
fn a_dropped_stream_resumes_after_its_last_sequence_and_archives_every_event_once() {
    let mut store = Store::open_in_memory().unwrap();
    let session_id = session(&mut store);
    // The first connection drops after 12 events; the second, resumed with a `Last-Event-ID` that Loom
    // read as a row id, replays from 10; the third has the rest. Loom's status lags the end twice.
    let loom = Loom::new(
        vec![frames(1, 12), frames(10, 20), frames(21, 30)],
        vec!["executing", "executing", "executing", "completed"],
    );
    let mut reported = Vec::new();
    let outcome = block_on(delegate(
        &std::cell::RefCell::new(&mut store),
        &loom,
        &delegation(&session_id, Some("/home/me/project")),
        &call(),
        &mut |e| reported.push(e),
    ))
    .unwrap();
    let archived = store.task_events("t1").unwrap();
    let sequences: Vec<i64> = archived
        .iter()
        .map(|e| serde_json::from_str::<serde_json::Value>(&e.data).unwrap()["sequence"].as_i64().unwrap())
        .collect();
    assert_eq!(sequences, (1..=30).collect::<Vec<i64>>(), "every event archived once, in order");
    let requests = loom.requests.borrow();
    let streams: Vec<&String> = requests.iter().filter(|r| r.contains("/runs/")).collect();
    assert_eq!(
        streams,
        [
            "GET http://loom.test/runs/t1/stream",
            "GET http://loom.test/runs/t1/stream?after_sequence=12 [12]",
            "GET http://loom.test/runs/t1/stream?after_sequence=20 [20]",
        ]
    );
    assert!(!requests.iter().any(|r| r.contains("/tasks/t1/stream")), "the replaying stream was enough");
    let posted = &requests[0];
    assert!(posted.contains(r#""workspace":"/home/me/project""#) && posted.contains(r#""approval_mode":"manual""#));
    // The status is re-read after the terminal event until it agrees (the descriptions come with it).
    let status_reads_after_end =
        requests.iter().rev().take_while(|r| !r.contains("/runs/")).filter(|r| r.ends_with("/tasks/t1")).count();
    assert_eq!(status_reads_after_end, 3, "{requests:#?}");
    assert!(loom.sleeps.borrow().ends_with(&[50, 50]), "{:?}", loom.sleeps.borrow());
    assert!(outcome.success);
    assert!(outcome.content.starts_with("Task completed:"), "{}", outcome.content);
    assert!(outcome.content.contains("[x] Analyze the auth module"), "{}", outcome.content);
    assert!(
        outcome.content.contains("Files changed:\n  - src/auth.py (modified)\n  - tests/test_refresh.py"),
        "{}",
        outcome.content
    );
    // Heartbeats and telemetry are archived, not reported.
    assert!(reported.iter().all(|e| !matches!(e,
        cowork_core::agent::AgentEvent::TaskProgress { event_type, .. } if event_type == "task_run_heartbeat")));
    assert_eq!(store.task("t1").unwrap().unwrap().status.as_str(), "completed");
}

#[test]
fn without_an_orchestrator_directory_nothing_is_sent() {
    let mut store = Store::open_in_memory().unwrap();
    let session_id = session(&mut store);
    let loom = Loom::new(vec![String::new()], vec!["executing"]);
    let outcome = block_on(delegate(
        &std::cell::RefCell::new(&mut store),
        &loom,
        &delegation(&session_id, None),
        &call(),
        &mut |_| {},
    ))
    .unwrap();
    assert!(loom.requests.borrow().is_empty(), "{:?}", loom.requests.borrow());
    assert!(!outcome.success);
    assert_eq!(
        outcome.content,
        "delegate_task is not available in workspace \"app\": this workspace has no orchestrator directory. Set it \
         with the ⚙ beside the workspace in the sidebar, or in Settings → Workspace."
    );
    assert!(store.tasks(&session_id).unwrap().is_empty());
}

#[test]
fn a_decision_on_a_held_step_is_posted_and_archived() {
    let mut store = Store::open_in_memory().unwrap();
    let session_id = session(&mut store);
    let record: cowork_core::TaskRecord = serde_json::from_value(json!({
        "task_id": "t1", "session_id": session_id, "turn_number": 2, "goal": "g", "context": "{}",
        "status": "executing", "result_delivered": false, "created_at": 1, "updated_at": 1,
    }))
    .unwrap();
    store.upsert_task(&record).unwrap();
    let loom = Loom::new(vec![String::new()], vec!["waiting_approval"]);
    let resolved = block_on(respond_to_approval(&mut store, &loom, BASE, "t1", "s2", false)).unwrap();
    assert!(resolved);
    assert_eq!(
        *loom.requests.borrow(),
        [r#"POST http://loom.test/tasks/t1/approve{"approved":false,"subtask_id":"s2"}"#]
    );
    let archived = store.task_events("t1").unwrap();
    assert_eq!(archived.len(), 1);
    assert_eq!(archived[0].event_type, APPROVAL_DECISION_EVENT);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&archived[0].data).unwrap(),
        json!({"subtask_id": "s2", "approved": false, "resolved_pending": true})
    );
    // An orchestrator that refuses: an error, nothing archived.
    let loom = Loom::new(vec![String::new()], vec!["executing"]);
    let err = block_on(respond_to_approval(&mut store, &loom, BASE, "t404", "s2", true)).unwrap_err();
    assert!(err.to_string().contains("answered 404"), "{err}");
    assert!(store.task_events("t404").unwrap().is_empty());
}
