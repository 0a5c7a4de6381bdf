//! Regression tests for issue #15: a task the orchestrator reported finished in another spelling
//! (`Completed`, `completed `, `canceled`, ` Failed`) stayed open forever — listed in the session-state
//! register, counted open by recall's summary, returned pending by `Store::resume` — and `Completed`
//! gave `success: false` beside "Task completed". Runs `delegate` against a scripted orchestrator.
#![cfg(not(target_arch = "wasm32"))]

use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use cowork_core::agent::delegate::{delegate, deliver_pending_tasks, Delegation};
use cowork_core::agent::{HttpResponse, ResponseBody, Transport, TransportError};
use cowork_core::provider::HttpRequest;
use cowork_core::recall::run_recall;
use cowork_core::state::{sync_tasks, SessionState};
use cowork_core::store::{NewSession, Store};
use cowork_core::{TaskRecord, ToolCall};

const BASE: &str = "http://orchestrator.test";

/// The orchestrator's spelling of a final status, what it means, and whether the task succeeded.
const SPELLINGS: [(&str, &str, bool); 5] = [
    ("Completed", "completed", true),
    ("completed ", "completed", true),
    ("COMPLETED", "completed", true),
    ("canceled", "cancelled", false),
    (" Failed", "failed", false),
];

/// An orchestrator that creates task `t1`, has no event stream, and reports `status` for it.
struct Orchestrator {
    status: String,
    requests: RefCell<Vec<String>>,
}

struct Body(Option<Vec<u8>>);

impl ResponseBody for Body {
    async fn chunk(&mut self) -> Option<Result<Vec<u8>, TransportError>> {
        self.0.take().map(Ok)
    }
}

impl Transport for Orchestrator {
    type Body = Body;

    async fn send(&self, req: &HttpRequest) -> Result<HttpResponse<Body>, TransportError> {
        self.requests.borrow_mut().push(format!("{} {}", req.method, req.url));
        let (status, body) = match (req.method.as_str(), req.url.as_str()) {
            ("POST", "http://orchestrator.test/tasks") => {
                (201, r#"{"task_id": "t1", "status": "pending", "message": "Task created"}"#.to_string())
            }
            ("GET", "http://orchestrator.test/tasks/t1") => (
                200,
                serde_json::json!({"task_id": "t1", "goal": "Add refresh tokens", "status": self.status}).to_string(),
            ),
            _ => (404, r#"{"detail": "Not Found"}"#.to_string()),
        };
        Ok(HttpResponse { status, headers: Vec::new(), body: Body(Some(body.into_bytes())) })
    }

    async fn sleep_ms(&self, _ms: u64) {}

    fn now_ms(&self) -> i64 {
        0
    }
}

/// Runs a future whose I/O all completes at once (the scripted orchestrator never waits).
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
    let new = NewSession {
        id: None,
        workspace: "/work/app".into(),
        title: "Refresh tokens".into(),
        model: "test-model".into(),
        system_prompt: String::new(),
    };
    store.create_session(&new).expect("create a session").id
}

fn delegation(session_id: &str) -> Delegation<'_> {
    Delegation {
        base_url: BASE,
        session_id,
        workspace: "app",
        directory: Some("/work/app"),
        manual_approvals: false,
        turn_number: 2,
    }
}

fn delegate_call(wait: bool) -> ToolCall {
    ToolCall {
        id: "call_1".into(),
        name: "delegate_task".into(),
        arguments: serde_json::json!({"goal": "Add refresh tokens", "wait": wait}).to_string(),
    }
}

/// Every place that asks "is this task still open?" says no; the archive holds the normalised status.
fn assert_finished(store: &Store, session_id: &str, spelling: &str, normalised: &str) {
    let tasks = store.tasks(session_id).unwrap();
    assert_eq!(tasks.len(), 1, "{spelling:?}");
    let archived = serde_json::to_value(&tasks[0]).unwrap();
    assert_eq!(archived["status"], normalised, "{spelling:?}: the archived status");
    assert!(tasks[0].is_finished(), "{spelling:?}: TaskRecord::is_finished");

    let pending = store.resume(session_id, 10).unwrap().pending_tasks;
    assert!(pending.is_empty(), "{spelling:?}: resume still returns it pending: {pending:?}");

    let mut state = SessionState::new(session_id, "/work/app", "test-model");
    sync_tasks(&mut state, &tasks);
    assert!(state.open_tasks.is_empty(), "{spelling:?}: the register lists it open: {:?}", state.open_tasks);

    let summary = run_recall(store, session_id, r#"{"action":"summary"}"#);
    assert!(summary.contains("tasks: 1 (0 open)"), "{spelling:?}: recall's summary counts it open:\n{summary}");
}

#[test]
fn a_task_reported_finished_in_any_spelling_is_not_left_open() {
    for (spelling, normalised, success) in SPELLINGS {
        let mut store = Store::open_in_memory().unwrap();
        let session_id = session(&mut store);
        let orchestrator = Orchestrator { status: spelling.to_string(), requests: RefCell::new(Vec::new()) };
        let at = delegation(&session_id);
        let outcome = block_on(delegate(
            &std::cell::RefCell::new(&mut store),
            &orchestrator,
            &at,
            &delegate_call(true),
            &mut |_| {},
        ))
        .expect("delegate");
        let header = outcome.content.lines().next().unwrap_or_default().to_string();
        let said = if normalised == "completed" { "Task completed" } else { "Task" };
        assert!(header.starts_with(said), "{spelling:?}: {header}");
        assert_eq!(outcome.success, success, "{spelling:?}: success beside {header:?}");
        assert_finished(&store, &session_id, spelling, normalised);
    }
}

#[test]
fn a_task_delivered_later_in_any_spelling_is_not_left_open() {
    for (spelling, normalised, success) in SPELLINGS {
        let mut store = Store::open_in_memory().unwrap();
        let session_id = session(&mut store);
        let orchestrator = Orchestrator { status: "executing".into(), requests: RefCell::new(Vec::new()) };
        let at = delegation(&session_id);
        let outcome = block_on(delegate(
            &std::cell::RefCell::new(&mut store),
            &orchestrator,
            &at,
            &delegate_call(false),
            &mut |_| {},
        ))
        .unwrap();
        assert!(outcome.content.starts_with("Task submitted: t1"), "{}", outcome.content);

        let orchestrator = Orchestrator { status: spelling.to_string(), requests: RefCell::new(Vec::new()) };
        let delivered = block_on(deliver_pending_tasks(
            &std::cell::RefCell::new(&mut store),
            &orchestrator,
            BASE,
            &session_id,
            false,
            &mut |_| {},
        ))
        .unwrap();
        assert_eq!(delivered.len(), 1, "{spelling:?}");
        assert_eq!(delivered[0].metadata["success"], success, "{spelling:?}: {}", delivered[0].content);
        assert_finished(&store, &session_id, spelling, normalised);
    }
}

#[test]
fn an_imported_task_record_with_a_final_status_in_another_spelling_is_finished() {
    for (spelling, normalised, _) in SPELLINGS {
        let record: TaskRecord = serde_json::from_value(serde_json::json!({
            "task_id": "t1", "session_id": "s1", "turn_number": 2, "goal": "g", "context": "null",
            "status": spelling, "result_delivered": true, "created_at": 1, "updated_at": 2,
        }))
        .unwrap();
        assert!(record.is_finished(), "{spelling:?}");
        assert_eq!(serde_json::to_value(&record).unwrap()["status"], normalised, "{spelling:?}");
    }
    // Statuses Cowork does not know are kept verbatim, and are not final.
    let record: TaskRecord = serde_json::from_value(serde_json::json!({
        "task_id": "t1", "session_id": "s1", "turn_number": 2, "goal": "g", "context": "null",
        "status": "Queued (GPU)", "result_delivered": false, "created_at": 1, "updated_at": 2,
    }))
    .unwrap();
    assert!(!record.is_finished());
    assert_eq!(serde_json::to_value(&record).unwrap()["status"], "Queued (GPU)");
}
