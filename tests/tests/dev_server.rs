//! The dev server over real HTTP on loopback: static app, scripted model with its faults, and the
//! Loom-compatible orchestrator's semantics.

use cowork_tests::server::{serve, Config};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

/// Starts a server with a bounded lifetime on a free port; returns its base URL.
fn start() -> String {
    let dist = std::env::temp_dir().join(format!("cowork-dist-{}", std::process::id()));
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("index.html"), "<!doctype html><title>Cowork</title>").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(serve(Config { dist, addr, lifetime: Some(Duration::from_secs(120)) })).unwrap();
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
        addr: "0.0.0.0:0".parse().unwrap(),
        lifetime: Some(Duration::from_secs(1)),
    }));
    assert!(err.unwrap_err().to_string().contains("only binds loopback"));
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

fn events_until_terminal(base: &str, id: &str) -> Vec<String> {
    let r = agent().get(&format!("{base}/tasks/{id}/stream")).call().unwrap();
    let reader = BufReader::new(r.into_body().into_reader());
    let mut events = Vec::new();
    for line in reader.lines() {
        let line = line.unwrap();
        if let Some(e) = line.strip_prefix("event: ") {
            events.push(e.to_owned());
            if matches!(e, "task_completed" | "task_failed" | "task_cancelled") {
                break;
            }
        }
    }
    events
}

#[test]
fn the_orchestrator_runs_a_plan_and_reports_it() {
    let base = start();
    let mut r = agent()
        .post(&format!("{base}/tasks"))
        .send(json!({"goal": "add refresh tokens in src/auth.py", "workspace": "w", "context": "", "approval_mode": "auto",
                     "metadata": {"session_id": "s", "turn": 3}}).to_string())
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let created: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
    let id = created["task_id"].as_str().unwrap().to_owned();
    let events = events_until_terminal(&base, &id);
    assert_eq!(events.last().map(String::as_str), Some("task_completed"));
    assert!(events.iter().filter(|e| *e == "subtask_completed").count() == 3, "{events:?}");
    let mut r = agent().get(&format!("{base}/tasks/{id}")).call().unwrap();
    let status: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(status["status"], "completed");
    assert_eq!(status["progress"]["percent_complete"], 100.0);
    assert_eq!(status["result"]["files_changed"], json!(["src/auth.py"]));
    // Loom's trap, reproduced: a stream opened after the end only sends keepalives; GET tells the truth.
    let mut r = agent().post(&format!("{base}/tasks")).send(json!({"goal": "please fail this"}).to_string()).unwrap();
    let id: String = serde_json::from_str::<Value>(&r.body_mut().read_to_string().unwrap()).unwrap()["task_id"]
        .as_str()
        .unwrap()
        .into();
    assert_eq!(events_until_terminal(&base, &id).last().map(String::as_str), Some("task_failed"));
}

#[test]
fn a_running_task_can_be_cancelled() {
    let base = start();
    let mut r = agent().post(&format!("{base}/tasks")).send(json!({"goal": "slow refactor"}).to_string()).unwrap();
    let id: String = serde_json::from_str::<Value>(&r.body_mut().read_to_string().unwrap()).unwrap()["task_id"]
        .as_str()
        .unwrap()
        .into();
    let b = base.clone();
    let i = id.clone();
    let listener = std::thread::spawn(move || events_until_terminal(&b, &i));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(agent().delete(&format!("{base}/tasks/{id}")).call().unwrap().status().as_u16(), 200);
    assert_eq!(listener.join().unwrap().last().map(String::as_str), Some("task_cancelled"));
    let mut r = agent().get(&format!("{base}/tasks/{id}")).call().unwrap();
    assert_eq!(serde_json::from_str::<Value>(&r.body_mut().read_to_string().unwrap()).unwrap()["status"], "cancelled");
    assert_eq!(agent().get(&format!("{base}/tasks/nope")).call().unwrap().status().as_u16(), 404);
}
