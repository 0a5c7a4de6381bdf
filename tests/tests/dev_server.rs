//! The dev server over real HTTP on loopback: static app, scripted model with its faults, and the
//! Loom-compatible orchestrator speaking Loom 0.3.0's dialect (named events with Loom's envelope, CRLF,
//! pings and heartbeats, the replaying run stream, the status lag, manual approvals, dropped streams).

use cowork_tests::orchestrator::{self, Orchestrator, Timing};
use cowork_tests::server::{serve, Config};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Starts a server with a bounded lifetime on a free port; returns its base URL.
fn start() -> String {
    let dist = std::env::temp_dir().join(format!("cowork-dist-{}", std::process::id()));
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("index.html"), "<!doctype html><title>Cowork</title>").unwrap();
    let models = dist.join("models");
    std::fs::create_dir_all(models.join("tiny-model")).unwrap();
    std::fs::write(models.join("tiny-model/config.json"), "{\"hidden_size\": 4}").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(serve(Config { dist, models, addr, lifetime: Some(Duration::from_secs(120)) })).unwrap();
    });
    let base = format!("http://{addr}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while ureq::get(&format!("{base}/")).call().is_err() {
        assert!(Instant::now() < deadline, "the dev server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    base
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

fn chat(base: &str, text: &str, tools: &[&str]) -> (u16, Option<String>, String) {
    let tools: Vec<Value> =
        tools.iter().map(|t| json!({"type": "function", "function": {"name": t, "parameters": {}}})).collect();
    let body =
        json!({"model": "demo", "stream": true, "messages": [{"role": "user", "content": text}], "tools": tools});
    let mut r = agent().post(&format!("{base}/v1/chat/completions")).send(body.to_string()).unwrap();
    let retry = r.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(str::to_owned);
    (r.status().as_u16(), retry, r.body_mut().read_to_string().unwrap())
}

#[test]
fn serves_the_app_and_only_on_loopback() {
    let base = start();
    let mut r = agent().get(&format!("{base}/")).call().unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(r.body_mut().read_to_string().unwrap().contains("<title>Cowork</title>"));
    let err = tokio::runtime::Runtime::new().unwrap().block_on(serve(Config {
        dist: ".".into(),
        models: ".".into(),
        addr: "0.0.0.0:0".parse().unwrap(),
        lifetime: Some(Duration::from_secs(1)),
    }));
    assert!(err.unwrap_err().to_string().contains("only binds loopback"));
}

#[test]
fn serves_the_embedding_model_files_with_their_length() {
    let base = start();
    let mut r = agent().get(&format!("{base}/models/tiny-model/config.json")).call().unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.headers().get("content-length").and_then(|v| v.to_str().ok()), Some("18"));
    assert_eq!(r.body_mut().read_to_string().unwrap(), "{\"hidden_size\": 4}");
    assert_eq!(agent().get(&format!("{base}/models/tiny-model/missing.bin")).call().unwrap().status().as_u16(), 404);
}

#[test]
fn the_demo_model_streams_text_and_tool_calls() {
    let base = start();
    let (status, _, body) = chat(&base, "hello there", &[]);
    assert_eq!(status, 200);
    assert!(body.trim_end().ends_with("data: [DONE]"), "{body}");
    assert!(body.contains("\"usage\""), "usage is reported: {body}");
    let text: String = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: ")?.parse::<Value>().ok())
        .filter_map(|v| v["choices"][0]["delta"]["content"].as_str().map(str::to_owned))
        .collect();
    assert!(text.contains("You said: \"hello there\""), "{text}");
    let (_, _, body) = chat(&base, "what did we decide earlier about JWT?", &["conversation_recall"]);
    assert!(body.contains("conversation_recall") && body.contains("tool_calls"), "{body}");
}

#[test]
fn the_demo_models_are_listed_and_answer_as_themselves() {
    let base = start();
    let mut r = agent().get(&format!("{base}/v1/models")).call().unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let listed = cowork_core::provider::parse_models(&r.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(listed.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["demo", "demo-large"]);
    let body = json!({"model": "demo-large", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let mut r = agent().post(&format!("{base}/unlisted/v1/chat/completions")).send(body.to_string()).unwrap();
    let text: String = r
        .body_mut()
        .read_to_string()
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("data: ")?.parse::<Value>().ok())
        .filter_map(|v| v["choices"][0]["delta"]["content"].as_str().map(str::to_owned))
        .collect();
    assert!(text.starts_with("Demo model \"demo-large\" here"), "the unlisted endpoint answers as asked: {text}");
    let r = agent().get(&format!("{base}/unlisted/v1/models")).call().unwrap();
    assert_eq!(r.status().as_u16(), 404, "the unlisted endpoint lists nothing");
}

#[test]
fn faults_are_switchable_per_request() {
    let base = start();
    assert_eq!(chat(&base, "hi [[fault:401]]", &[]).0, 401);
    let (status, retry, _) = chat(&base, "hi [[fault:429]]", &[]);
    assert_eq!((status, retry.as_deref()), (429, Some("1")));
    assert_eq!(chat(&base, "hi [[fault:500]]", &[]).0, 500);
    let (_, _, cut) = chat(&base, "a longer message that streams in several pieces [[fault:cut]]", &[]);
    assert!(!cut.contains("[DONE]"), "a cut stream has no end marker: {cut}");
    // xN: the first N attempts fail, then the same request succeeds.
    assert_eq!(chat(&base, "retry me [[fault:429x2]]", &[]).0, 429);
    assert_eq!(chat(&base, "retry me [[fault:429x2]]", &[]).0, 429);
    assert_eq!(chat(&base, "retry me [[fault:429x2]]", &[]).0, 200);
}

/// Starts the orchestrator alone at `timing`, for a bounded time, on a free loopback port.
fn start_orchestrator(timing: Timing) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let app = orchestrator::router(Arc::new(Orchestrator::new(timing)));
            let stop = tokio::time::sleep(Duration::from_secs(60));
            axum::serve(listener, app).with_graceful_shutdown(stop).await.unwrap();
        });
    });
    format!("http://{addr}")
}

/// Quick steps, and heartbeats and pings often enough to be seen in a test.
fn quick() -> Timing {
    Timing {
        step: Duration::from_millis(40),
        slow_step: Duration::from_millis(200),
        heartbeat: Duration::from_millis(70),
        ping: Duration::from_millis(90),
        status_lag: Duration::from_millis(300),
        stream_limit: Duration::from_secs(20),
    }
}

fn json_of(r: &mut ureq::http::Response<ureq::Body>) -> Value {
    serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap()
}

fn create(base: &str, body: Value) -> (u16, Value) {
    let mut r = agent().post(&format!("{base}/tasks")).send(body.to_string()).unwrap();
    (r.status().as_u16(), json_of(&mut r))
}

fn task_status(base: &str, id: &str) -> Value {
    json_of(&mut agent().get(&format!("{base}/tasks/{id}")).call().unwrap())
}

/// One SSE frame as sent: its raw text (CRLF kept), and its `id`, `event` and `data` fields.
#[derive(Debug, Clone, Default)]
struct Frame {
    raw: String,
    id: Option<u64>,
    event: Option<String>,
    data: Value,
}

/// Reads frames from a stream (in a thread) until `stop` says so or the stream ends; a receiver of them.
fn frames(url: &str, last_event_id: Option<u64>) -> std::sync::mpsc::Receiver<Frame> {
    let (tx, rx) = std::sync::mpsc::channel();
    let mut req = agent().get(url);
    if let Some(n) = last_event_id {
        req = req.header("last-event-id", n.to_string());
    }
    let response = req.call().unwrap();
    assert_eq!(response.status().as_u16(), 200, "{url}");
    std::thread::spawn(move || {
        let mut reader = response.into_body().into_reader();
        let (mut buf, mut chunk) = (String::new(), [0u8; 4096]);
        while let Ok(n @ 1..) = std::io::Read::read(&mut reader, &mut chunk) {
            buf.push_str(&String::from_utf8_lossy(&chunk[..n]));
            while let Some(end) = buf.find("\r\n\r\n") {
                let raw: String = buf.drain(..end + 4).collect();
                let mut frame = Frame { raw: raw.clone(), ..Frame::default() };
                for line in raw.split("\r\n") {
                    if let Some(v) = line.strip_prefix("id: ") {
                        frame.id = v.parse().ok();
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        frame.event = Some(v.to_owned());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        frame.data = serde_json::from_str(v).unwrap();
                    }
                }
                if tx.send(frame).is_err() {
                    return;
                }
            }
        }
    });
    rx
}

/// Frames until a terminal event (included) or the stream's end; panics after `limit`.
fn until_terminal(rx: &std::sync::mpsc::Receiver<Frame>, limit: Duration) -> Vec<Frame> {
    let deadline = Instant::now() + limit;
    let mut out = Vec::new();
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(frame) => {
                let kind = event_type(&frame);
                out.push(frame);
                if matches!(kind.as_str(), "task_completed" | "task_failed" | "task_cancelled") {
                    return out;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return out,
            Err(e) => panic!("no terminal event within {limit:?} ({e:?}); got {:?}", names(&out)),
        }
    }
}

/// The event's type: its name on the tasks stream, `data.event_type` on the runs stream; "" for comments.
fn event_type(frame: &Frame) -> String {
    match frame.event.as_deref() {
        Some("run_event") => frame.data["event_type"].as_str().unwrap_or("").to_owned(),
        Some(name) => name.to_owned(),
        None => String::new(),
    }
}

fn names(frames: &[Frame]) -> Vec<String> {
    frames.iter().map(event_type).filter(|t| !t.is_empty()).collect()
}

fn workspace_dir() -> String {
    let dir = std::env::temp_dir().join(format!("cowork-loom-ws-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.display().to_string()
}

#[test]
fn the_orchestrator_speaks_looms_dialect() {
    let base = start_orchestrator(quick());
    let (status, created) = create(
        &base,
        json!({"goal": "add refresh tokens in src/auth.py", "workspace": workspace_dir(), "context": {},
               "approval_mode": "auto", "metadata": {"session_id": "s", "turn": 3}}),
    );
    assert_eq!(status, 201, "{created}");
    let id = created["task_id"].as_str().unwrap().to_owned();
    assert!(created["run_id"].as_str().is_some_and(|r| r.starts_with("run-")), "{created}");
    let all = until_terminal(&frames(&format!("{base}/tasks/{id}/stream"), None), Duration::from_secs(10));
    // Loom's status is saved a little after its terminal event.
    assert_eq!(task_status(&base, &id)["status"], "executing", "GET lags the terminal event");
    let types = names(&all);
    for expected in [
        "task_run_acquired",
        "task_run_heartbeat",
        "subtask_policy_reconciled",
        "compaction_policy_decision",
        "tool_call_started",
        "tool_call_completed",
        "verification_passed",
        "claim_verification_summary",
        "artifact_seal_validation",
        "subtask_completed",
        "task_completed",
    ] {
        assert!(types.iter().any(|t| t == expected), "{expected} missing from {types:?}");
    }
    assert!(all.iter().any(|f| f.raw.starts_with(": ping - ")), "pings are sent");
    let events: Vec<&Frame> = all.iter().filter(|f| f.event.is_some()).collect();
    for frame in &all {
        assert!(frame.raw.ends_with("\r\n\r\n") && !frame.raw.replace("\r\n", "").contains('\n'), "{:?}", frame.raw);
    }
    let sequences: Vec<u64> = events.iter().map(|f| f.data["sequence"].as_u64().unwrap()).collect();
    assert!(sequences.windows(2).all(|w| w[1] == w[0] + 1), "{sequences:?}");
    for f in &events {
        assert!(f.id.is_none(), "the tasks stream has no id lines");
        for field in
            ["task_id", "run_id", "timestamp", "schema_version", "correlation_id", "event_id", "source_component"]
        {
            assert!(!f.data[field].is_null(), "{field} missing in {}", f.data);
        }
    }
    let written: Vec<&Value> = events
        .iter()
        .filter(|f| event_type(f) == "tool_call_completed")
        .flat_map(|f| f.data["files_changed"].as_array().unwrap())
        .collect();
    assert!(written.contains(&&json!("src/auth.py")), "{written:?}");
    assert!(events.last().unwrap().data.get("files_changed").is_none(), "task_completed lists no files");
    std::thread::sleep(Duration::from_millis(400));
    let status = task_status(&base, &id);
    assert_eq!(status["status"], "completed");
    assert_eq!(status["progress"]["percent_complete"], 100.0);
    assert!(status.get("result").is_none(), "Loom's task status has no result: {status}");
}

#[test]
fn a_workspace_must_be_a_directory_on_the_orchestrators_machine() {
    let base = start_orchestrator(quick());
    let (status, answer) = create(&base, json!({"goal": "g", "workspace": "/nonexistent/default"}));
    assert_eq!((status, answer), (400, json!({"detail": "Path does not exist: /nonexistent/default"})));
    let file = std::env::temp_dir().join(format!("cowork-loom-file-{}", std::process::id()));
    std::fs::write(&file, "x").unwrap();
    let (status, answer) = create(&base, json!({"goal": "g", "workspace": file.display().to_string()}));
    assert_eq!(status, 400);
    assert_eq!(answer["detail"], format!("Path is not a directory: {}", file.display()));
    assert_eq!(create(&base, json!({"goal": "g", "workspace": workspace_dir()})).0, 201);
}

#[test]
fn the_run_stream_replays_after_a_sequence_and_the_task_stream_does_not() {
    let base = start_orchestrator(quick());
    let (_, created) = create(&base, json!({"goal": "please fail this"}));
    let id = created["task_id"].as_str().unwrap().to_owned();
    let live = until_terminal(&frames(&format!("{base}/runs/{id}/stream"), None), Duration::from_secs(10));
    assert_eq!(live[0].raw, ": open\r\n\r\n");
    assert_eq!(names(&live).last().map(String::as_str), Some("task_failed"));
    let last = live.last().unwrap();
    assert_eq!(last.event.as_deref(), Some("run_event"));
    assert_eq!(last.id, last.data["sequence"].as_u64());
    assert_eq!(last.data["terminal"], true);
    assert_eq!(last.data["data"]["failed_subtasks"], json!(["s2"]));
    // Replays: after_sequence, Last-Event-ID, both (the higher wins); then the stream closes.
    let ids = |frames: Vec<Frame>| frames.iter().filter_map(|f| f.id).collect::<Vec<u64>>();
    let after3 = ids(until_terminal(
        &frames(&format!("{base}/runs/{id}/stream?after_sequence=3"), None),
        Duration::from_secs(5),
    ));
    assert_eq!(after3.first(), Some(&4));
    assert_eq!(after3.last(), last.id.as_ref());
    let after5 = ids(until_terminal(&frames(&format!("{base}/runs/{id}/stream"), Some(5)), Duration::from_secs(5)));
    assert_eq!(after5.first(), Some(&6));
    let both = ids(until_terminal(
        &frames(&format!("{base}/runs/{id}/stream?after_sequence=7"), Some(2)),
        Duration::from_secs(5),
    ));
    assert_eq!(both.first(), Some(&8));
    // The task stream replays nothing and never closes for a task that ended: pings only.
    let rx = frames(&format!("{base}/tasks/{id}/stream"), None);
    let quiet: Vec<Frame> = std::iter::from_fn(|| rx.recv_timeout(Duration::from_millis(400)).ok()).take(3).collect();
    assert!(quiet.iter().all(|f| f.raw.starts_with(": ping")), "{quiet:?}");
    assert_eq!(quiet.len(), 3, "still open");
    // The runs routes take the task id; the run id is not found there.
    let run_id = created["run_id"].as_str().unwrap();
    assert_eq!(agent().get(&format!("{base}/runs/{run_id}/stream")).call().unwrap().status().as_u16(), 404);
}

#[test]
fn a_dropped_stream_resumes_after_its_last_sequence() {
    let base = start_orchestrator(quick());
    let (_, created) = create(&base, json!({"goal": "[[drop-stream:4]] add src/a.rs"}));
    let id = created["task_id"].as_str().unwrap().to_owned();
    let first = until_terminal(&frames(&format!("{base}/runs/{id}/stream"), None), Duration::from_secs(10));
    let first_ids: Vec<u64> = first.iter().filter_map(|f| f.id).collect();
    assert_eq!(first_ids, vec![1, 2, 3, 4], "the server closed the first connection after 4 events");
    let url = format!("{base}/runs/{id}/stream?after_sequence=4");
    let rest = until_terminal(&frames(&url, Some(4)), Duration::from_secs(10));
    let ids: Vec<u64> = first_ids.into_iter().chain(rest.iter().filter_map(|f| f.id)).collect();
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "no gap, no repeat: {ids:?}");
    assert_eq!(names(&rest).last().map(String::as_str), Some("task_completed"));
}

#[test]
fn manual_approvals_hold_each_step_until_decided() {
    let base = start_orchestrator(quick());
    let (_, created) = create(&base, json!({"goal": "add src/a.rs", "approval_mode": "manual"}));
    let id = created["task_id"].as_str().unwrap().to_owned();
    let rx = frames(&format!("{base}/runs/{id}/stream"), None);
    let approve = |subtask: &str, approved: bool| {
        let mut r = agent()
            .post(&format!("{base}/tasks/{id}/approve"))
            .send(json!({"subtask_id": subtask, "approved": approved}).to_string())
            .unwrap();
        json_of(&mut r)
    };
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while let Ok(frame) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        let kind = event_type(&frame);
        if kind == "approval_requested" {
            let request = &frame.data["data"];
            let subtask = request["subtask_id"].as_str().unwrap().to_owned();
            assert_eq!(request["risk_level"], "medium");
            assert!(request["proposed_action"].as_str().unwrap().starts_with("Done: "), "{request}");
            assert_eq!(task_status(&base, &id)["status"], "waiting_approval");
            assert_eq!(approve("nope", true)["resolved_pending"], false);
            let answer = approve(&subtask, subtask != "s2");
            assert_eq!(answer["resolved_pending"], true, "{answer}");
        }
        let end = kind == "task_failed";
        seen.push((kind, frame.data["data"]["subtask_id"].as_str().unwrap_or("").to_owned()));
        if end {
            break;
        }
    }
    let approvals: Vec<&(String, String)> = seen.iter().filter(|(k, _)| k.starts_with("approval_")).collect();
    let expected = [
        ("approval_requested", "s1"),
        ("approval_received", "s1"),
        ("approval_requested", "s2"),
        ("approval_rejected", "s2"),
        ("approval_requested", "s3"),
        ("approval_received", "s3"),
    ];
    assert_eq!(approvals.iter().map(|(k, s)| (k.as_str(), s.as_str())).collect::<Vec<_>>(), expected);
    assert_eq!(seen.last().map(|(k, _)| k.as_str()), Some("task_failed"), "a rejected step fails the task");
    std::thread::sleep(Duration::from_millis(400));
    let status = task_status(&base, &id);
    assert_eq!(status["plan"]["subtasks"][1]["summary"], "Rejected by human reviewer");
}

#[test]
fn a_running_task_can_be_cancelled_and_a_finished_one_is_relabelled() {
    let base = start_orchestrator(quick());
    let (_, created) = create(&base, json!({"goal": "slow refactor"}));
    let id = created["task_id"].as_str().unwrap().to_owned();
    let rx = frames(&format!("{base}/tasks/{id}/stream"), None);
    std::thread::sleep(Duration::from_millis(300));
    let mut r = agent().delete(&format!("{base}/tasks/{id}")).call().unwrap();
    assert_eq!(json_of(&mut r)["stop_requested"], true);
    assert_eq!(names(&until_terminal(&rx, Duration::from_secs(5))).last().map(String::as_str), Some("task_cancelled"));
    assert_eq!(task_status(&base, &id)["status"], "cancelled");
    assert_eq!(agent().get(&format!("{base}/tasks/nope")).call().unwrap().status().as_u16(), 404);

    let (_, created) = create(&base, json!({"goal": "quick one"}));
    let id = created["task_id"].as_str().unwrap().to_owned();
    until_terminal(&frames(&format!("{base}/runs/{id}/stream"), None), Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(task_status(&base, &id)["status"], "completed");
    let mut r = agent().delete(&format!("{base}/tasks/{id}")).call().unwrap();
    assert_eq!(
        json_of(&mut r),
        json!({"status": "ok", "message": format!("Task {id} cancelled."),
                                       "task_status": "cancelled", "stop_requested": false})
    );
    assert_eq!(task_status(&base, &id)["status"], "cancelled", "Loom relabels a finished task");
}

#[test]
fn the_dev_server_serves_the_orchestrator_too() {
    let base = start();
    let (status, created) = create(&base, json!({"goal": "g"}));
    assert_eq!(status, 201, "{created}");
    let id = created["task_id"].as_str().unwrap();
    assert_eq!(task_status(&base, id)["task_id"], id);
}
