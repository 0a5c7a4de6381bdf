//! Component tests in a real browser page (DOM mode): mount, let signals settle, read the DOM.
#![cfg(target_arch = "wasm32")]

use cowork_web::app::{App, StorageBanner, StorageState, StorageStatus};
use cowork_web::protocol::{Backend, ReadyInfo};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// A fresh element in the page to mount into.
fn host() -> web_sys::HtmlElement {
    let doc = web_sys::window().unwrap().document().unwrap();
    let el: web_sys::HtmlElement = doc.create_element("div").unwrap().unchecked_into();
    doc.body().unwrap().append_child(&el).unwrap();
    el
}

async fn sleep(ms: i32) {
    let p = js_sys::Promise::new(&mut |ok, _| {
        web_sys::window().unwrap().set_timeout_with_callback_and_timeout_and_arguments_0(&ok, ms).unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(p).await.unwrap();
}

/// Polls until `f` holds or `ms` pass; panics with `what` and the DOM on timeout.
async fn eventually(el: &web_sys::HtmlElement, ms: i32, what: &str, f: impl Fn(&web_sys::HtmlElement) -> bool) {
    for _ in 0..(ms / 20) {
        if f(el) {
            return;
        }
        sleep(20).await;
    }
    panic!("{what} did not happen within {ms} ms; DOM: {}", el.inner_html());
}

fn ready(backend: Backend) -> StorageState {
    StorageState::Ready(ReadyInfo { backend, sqlite_version: "3.test".into(), schema_version: 2 })
}

#[wasm_bindgen_test]
async fn storage_status_follows_the_worker() {
    let el = host();
    let (state, set_state) = signal(StorageState::Connecting);
    let _mounted = leptos::mount::mount_to(
        el.clone(),
        move || view! { <StorageStatus state=state /><StorageBanner state=state /> },
    );
    sleep(0).await;
    let status = || el.query_selector(".storage-status").unwrap().expect("a status badge");
    assert_eq!(status().get_attribute("data-state").as_deref(), Some("connecting"));
    assert!(el.query_selector(".banner").unwrap().is_none());

    set_state.set(ready(Backend::Opfs { file: "cowork.db".into() }));
    sleep(0).await;
    assert_eq!(status().get_attribute("data-state").as_deref(), Some("ready"));
    assert_eq!(status().text_content().unwrap().trim(), "storage ready");
    assert!(status().get_attribute("title").unwrap().contains("saved in this browser"));
    assert!(el.query_selector(".banner").unwrap().is_none(), "no banner when data persists");

    set_state.set(ready(Backend::Memory { reason: "OPFS is not available here".into() }));
    sleep(0).await;
    let banner = el.query_selector(".banner.warning").unwrap().expect("a visible warning without OPFS");
    let text = banner.text_content().unwrap();
    assert!(text.contains("memory only") && text.contains("Export"), "{text}");
    assert!(text.contains("OPFS is not available here"), "the reason is shown: {text}");
}

#[wasm_bindgen_test]
async fn the_app_says_clearly_when_storage_cannot_start() {
    let el = host();
    let _mounted = leptos::mount::mount_to(el.clone(), || view! { <App worker_url="/no-such-worker.js" /> });
    eventually(&el, 10_000, "the failed state", |el| {
        el.query_selector(".storage-status[data-state=failed]").unwrap().is_some()
    })
    .await;
    let banner = el.query_selector(".banner.error").unwrap().expect("an error banner").text_content().unwrap();
    assert!(banner.contains("Storage could not start"), "{banner}");
    assert!(banner.contains("Reload"), "the banner says what to do: {banner}");
    assert!(el.query_selector("h1.brand").unwrap().is_some(), "the shell still renders");
}

fn session(turns: i64, state: serde_json::Value) -> cowork_core::Session {
    serde_json::from_value(serde_json::json!({
        "id": "s1", "workspace": "backend", "title": "Auth work", "model": "demo", "system_prompt": "",
        "created_at": 0, "last_active_at": 0, "turn_count": turns, "prompt_tokens": 900, "completion_tokens": 100,
        "state": state, "parent_session_id": null, "fork_turn": null, "is_archived": false
    }))
    .unwrap()
}

fn text(el: &web_sys::HtmlElement) -> String {
    el.text_content().unwrap_or_default()
}

#[wasm_bindgen_test]
async fn the_session_panel_shows_the_register_and_the_context_meter() {
    use cowork_web::chat::{ChatState, DialogState, SessionPanel};
    let el = host();
    let (chat, dialogs) = (ChatState::new(), DialogState::new());
    let _mounted = leptos::mount::mount_to(el.clone(), move || {
        provide_context(chat);
        provide_context(dialogs);
        view! { <SessionPanel /> }
    });
    sleep(0).await;
    assert!(el.query_selector(".session-panel").unwrap().is_none(), "closed until asked for");
    dialogs.panel_open.set(true);
    sleep(0).await;
    assert!(text(&el).contains("Open a session"), "{}", text(&el));
    let state = serde_json::json!({
        "current_focus": "rotate refresh tokens",
        "files_touched": [{"path": "src/auth.py", "action": "edit", "turn": 7}],
        "key_decisions": ["Never use an ORM. (turn 1)"],
        "errors_resolved": [], "open_tasks": [], "version": 4
    });
    let manifest = cowork_core::ContextManifest {
        session_id: "s1".into(),
        turn_numbers: (3..=12).collect(),
        trimmed_turns: vec![],
        reasoning_turns: Vec::new(),
        state_version: 4,
        estimated_tokens: 3_000,
        budget_tokens: 12_000,
        usage: serde_json::Value::Null,
        created_at: 0,
    };
    chat.details.set(Some((session(12, state), Some(manifest))));
    sleep(0).await;
    let t = text(&el);
    for expected in [
        "rotate refresh tokens",
        "src/auth.py — edit (turn 7)",
        "Never use an ORM. (turn 1)",
        "3k of 12k tokens (25%)",
        "10 turns in the window; 2 only in the archive",
        "backend · demo · 12 turns · 1k tokens used so far",
    ] {
        assert!(t.contains(expected), "the panel shows {expected:?}: {t}");
    }
    let meter = el.query_selector("[role=meter]").unwrap().expect("a meter");
    assert_eq!(meter.get_attribute("aria-valuenow").as_deref(), Some("3000"));
}

#[wasm_bindgen_test]
async fn a_delegated_task_ticks_off_its_steps_and_can_be_cancelled_only_while_it_runs() {
    use cowork_core::orchestrator::ChecklistItem;
    use cowork_web::chat::{ChatState, LiveTask, TaskCards};
    let el = host();
    let chat = ChatState::new();
    let cancelled = RwSignal::new(Vec::<String>::new());
    let on_cancel = Callback::new(move |id: String| cancelled.update(|c| c.push(id)));
    let answered = RwSignal::new(Vec::<(String, String, bool)>::new());
    let on_answer = Callback::new(move |a: (String, String, bool)| answered.update(|v| v.push(a)));
    let _mounted = leptos::mount::mount_to(el.clone(), move || {
        provide_context(chat);
        view! { <TaskCards on_cancel=on_cancel on_answer=on_answer /> }
    });
    let item = |label: &str, status: &str| ChecklistItem {
        label: label.into(),
        status: status.into(),
        detail: None,
        approval: None,
    };
    let task = |status: &str, steps: Vec<ChecklistItem>| LiveTask {
        session_id: "s-delegating".into(),
        task_id: "t1".into(),
        goal: "add refresh tokens".into(),
        status: status.into(),
        checklist: steps,
    };
    chat.current.set(Some("s-delegating".into()));
    chat.tasks.set(vec![task(
        "executing",
        vec![item("Analyze", "completed"), item("Implement", "running"), item("Test", "pending")],
    )]);
    sleep(0).await;
    // Regression: a delegation's card (with Cancel) showed in whichever session was open.
    chat.current.set(Some("another-session".into()));
    sleep(0).await;
    assert!(el.query_selector(".task-card").unwrap().is_none(), "another session shows no card of this one");
    chat.current.set(Some("s-delegating".into()));
    sleep(0).await;
    let marks: Vec<String> = (0..3)
        .map(|i| {
            let q = format!(".task-step:nth-child({}) .mark", i + 1);
            el.query_selector(&q).unwrap().unwrap().text_content().unwrap()
        })
        .collect();
    assert_eq!(marks, ["✓", "●", "○"]);
    assert!(text(&el).contains("Delegated: add refresh tokens"));
    // A step the orchestrator holds shows what it proposes, why, its risk, and Approve / Reject.
    let held = ChecklistItem {
        approval: Some(cowork_core::orchestrator::PendingApproval {
            subtask_id: "s2".into(),
            proposed_action: "Done: Implement".into(),
            reason: "Confidence medium (0.62)".into(),
            risk_level: "medium".into(),
        }),
        ..item("Implement", "completed")
    };
    chat.tasks.set(vec![task("waiting_approval", vec![item("Analyze", "completed"), held, item("Test", "pending")])]);
    sleep(0).await;
    let t = text(&el);
    assert!(t.contains("Waiting for your approval: Done: Implement") && t.contains("risk: medium"), "{t}");
    let reject: web_sys::HtmlElement = el.query_selector(".reject-step").unwrap().expect("Reject").unchecked_into();
    reject.click();
    let approve: web_sys::HtmlElement = el.query_selector(".approve-step").unwrap().expect("Approve").unchecked_into();
    approve.click();
    assert_eq!(answered.get_untracked(), [("t1".into(), "s2".into(), false), ("t1".into(), "s2".into(), true)]);
    chat.tasks.set(vec![task(
        "executing",
        vec![item("Analyze", "completed"), item("Implement", "running"), item("Test", "pending")],
    )]);
    sleep(0).await;
    assert!(el.query_selector(".step-approval").unwrap().is_none(), "answered, the question goes");
    let cancel: web_sys::HtmlElement =
        el.query_selector(".task-cancel").unwrap().expect("Cancel while running").unchecked_into();
    cancel.click();
    assert_eq!(cancelled.get_untracked(), ["t1"]);
    chat.tasks.set(vec![task("cancelled", vec![item("Analyze", "completed"), item("Implement", "cancelled")])]);
    sleep(0).await;
    assert!(el.query_selector(".task-cancel").unwrap().is_none(), "no Cancel once the task is over");
    assert_eq!(
        el.query_selector(".task-card").unwrap().unwrap().get_attribute("data-status").as_deref(),
        Some("cancelled")
    );
}

#[wasm_bindgen_test]
async fn deleting_a_session_asks_first_and_cancel_keeps_it() {
    use cowork_web::chat::{DeleteDialog, DialogState, SessionAction};
    let el = host();
    let dialogs = DialogState::new();
    let actions = RwSignal::new(Vec::<SessionAction>::new());
    let on_action = Callback::new(move |a: SessionAction| actions.update(|v| v.push(a)));
    let _mounted = leptos::mount::mount_to(el.clone(), move || {
        provide_context(dialogs);
        view! { <DeleteDialog on_action=on_action /> }
    });
    dialogs.confirm_delete.set(Some((session(42, serde_json::json!({})), vec!["s1".into()])));
    sleep(0).await;
    assert!(text(&el).contains("Delete \u{201c}Auth work\u{201d}?"), "{}", text(&el));
    assert!(text(&el).contains("Its 42 turns are removed"));
    let button = |label: &str| -> web_sys::HtmlElement {
        let all = el.query_selector_all("button").unwrap();
        (0..all.length())
            .filter_map(|i| all.item(i))
            .map(|n| n.unchecked_into::<web_sys::HtmlElement>())
            .find(|b| b.text_content().as_deref() == Some(label))
            .unwrap_or_else(|| panic!("a {label} button"))
    };
    button("Cancel").click();
    sleep(0).await;
    assert!(el.query_selector(".dialog").unwrap().is_none());
    assert!(actions.get_untracked().is_empty(), "Cancel deletes nothing");
    dialogs.confirm_delete.set(Some((session(42, serde_json::json!({})), vec!["s1".into()])));
    sleep(0).await;
    button("Delete").click();
    assert_eq!(
        actions.get_untracked(),
        [SessionAction::Delete { id: "s1".into(), versions: vec!["s1".into()], confirmed: true }]
    );
    // Regression: a one-turn session was "Its 1 turns are removed".
    dialogs.confirm_delete.set(Some((session(1, serde_json::json!({})), vec!["s1".into()])));
    sleep(0).await;
    assert!(text(&el).contains("Its 1 turn is removed"), "{}", text(&el));
    // A conversation with versions (edits, regenerations) is deleted whole, and the dialog says so.
    dialogs.confirm_delete.set(Some((session(4, serde_json::json!({})), vec!["s1".into(), "s2".into(), "s3".into()])));
    sleep(0).await;
    assert!(text(&el).contains("Its 3 versions (edits and regenerations) are removed"), "{}", text(&el));
}

#[wasm_bindgen_test]
async fn an_error_notice_offers_the_place_that_fixes_it_by_its_kind() {
    use cowork_web::chat::{ChatState, DialogState, Notice, NoticeLine};
    use cowork_web::protocol::{ErrorKind, Problem};
    let el = host();
    let (chat, dialogs) = (ChatState::new(), DialogState::new());
    let _mounted = leptos::mount::mount_to(el.clone(), move || {
        provide_context(chat);
        provide_context(dialogs);
        view! { <NoticeLine /> }
    });
    chat.notice.set(Some(Notice::info("Reply interrupted: you pressed Stop (the model is in Settings)")));
    sleep(0).await;
    assert!(el.query_selector(".notice-fix").unwrap().is_none(), "words alone offer nothing: {}", text(&el));
    chat.notice.set(Some(Notice::problem(&Problem::new(ErrorKind::Auth, "The model endpoint rejected the API key."))));
    sleep(0).await;
    let fix: web_sys::HtmlElement = el.query_selector(".notice-fix").unwrap().expect("a fix").unchecked_into();
    assert_eq!(fix.text_content().as_deref(), Some("Open Settings"));
    fix.click();
    assert!(dialogs.settings_open.get_untracked());
    chat.notice.set(Some(Notice::problem(&Problem::new(ErrorKind::StorageFull, "storage is full"))));
    sleep(0).await;
    let fix = el.query_selector(".notice-fix").unwrap().expect("a fix");
    assert_eq!(fix.text_content().as_deref(), Some("Open Storage"));
}

#[wasm_bindgen_test]
async fn a_streamed_code_block_is_coloured_once_complete_and_never_again() {
    use cowork_web::chat::{ChatState, StreamText};
    // A stand-in for the highlighter: wraps the code in one span and counts its calls.
    let stand_in = "globalThis.__highlights = 0; export function highlight(code, language) { \
        globalThis.__highlights++; return '<span class=\"hljs-stand-in\">' + language + ':' \
        + code.replace(/&/g, '&amp;').replace(/</g, '&lt;') + '</span>'; }";
    let url = format!("data:text/javascript,{}", String::from(js_sys::encode_uri_component(stand_in)));
    cowork_web::highlight::set_module_url(&url);
    let calls = || js_sys::Reflect::get(&js_sys::global(), &"__highlights".into()).unwrap().as_f64().unwrap_or(0.0);

    let el = host();
    let chat = ChatState::new();
    chat.streaming.set(Some((1, String::new())));
    let _mounted = leptos::mount::mount_to(el.clone(), move || {
        provide_context(chat);
        view! { <StreamText turn_number=1 /> }
    });
    // The block is still being written: drawn, not coloured, not even waiting to be.
    chat.streaming.set(Some((1, "Intro\n\n```python\ndef f():\n".into())));
    eventually(&el, 2000, "the open block drawn", |el| el.query_selector("code.language-python").unwrap().is_some())
        .await;
    sleep(100).await;
    let code = el.query_selector("code.language-python").unwrap().unwrap();
    assert_eq!(code.get_attribute("data-highlight"), None, "the open block is left alone");
    assert_eq!(calls(), 0.0);

    // The next block has started: the code block is complete, and coloured once.
    chat.streaming.set(Some((1, "Intro\n\n```python\ndef f():\n    return 1 < 2\n```\n\nAfter\n".into())));
    eventually(&el, 3000, "the complete block coloured", |el| {
        el.query_selector("code.language-python[data-highlight=\"done\"] .hljs-stand-in").unwrap().is_some()
    })
    .await;
    let code = el.query_selector("code.language-python").unwrap().unwrap();
    assert_eq!(code.text_content().unwrap(), "python:def f():\n    return 1 < 2\n");
    assert_eq!(calls(), 1.0);

    // More text: the complete block is kept as it is, and not coloured again.
    chat.streaming
        .set(Some((1, "Intro\n\n```python\ndef f():\n    return 1 < 2\n```\n\nAfter that, more words\n".into())));
    sleep(100).await;
    assert!(el.query_selector("code.language-python[data-highlight=\"done\"] .hljs-stand-in").unwrap().is_some());
    assert_eq!(calls(), 1.0, "a block is coloured once");
    assert!(text(&el).contains("more words"));
}

/// A worker that answers as the storage worker did before the fix: `Ready`, then, for a request it
/// could not read (here: any export), `Failed` — then the response to that request.
const WORKER_FAILING_ONE_REQUEST: &str = r#"
postMessage(JSON.stringify({ready: {backend: {kind: "memory", reason: "a test double"}, sqlite_version: "3", schema_version: 6}}));
onmessage = (e) => {
  const req = JSON.parse(typeof e.data === "string" ? e.data : e.data.request);
  const answer = (result) => postMessage(JSON.stringify({response: {id: req.id, result}}));
  // Operations are externally tagged: a bare name, or {"name": {…fields}}.
  const op = typeof req.op === "string" ? req.op : Object.keys(req.op)[0];
  if (op === "export_all") {
    postMessage(JSON.stringify({failed: {kind: "internal", message: "unreadable request"}}));
    answer({Err: {kind: "invalid", message: "the storage worker could not read a request"}});
  } else if (op === "integrity_check") {
    answer({Ok: {text: {text: "ok"}}});
  } else if (op === "stats") {
    answer({Ok: {text: {text: "not the counts"}}});
  }
};
"#;

fn worker_url(source: &str) -> String {
    let parts = js_sys::Array::of1(&source.into());
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type("text/javascript");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts).unwrap();
    web_sys::Url::create_object_url_with_blob(&blob).unwrap()
}

/// Regression: one request the worker could not read made the client "storage is unavailable" for
/// good — every later call failed, though the archive was fine.
#[wasm_bindgen_test]
async fn one_unreadable_request_leaves_the_client_ready() {
    use cowork_web::client::StorageClient;
    use cowork_web::protocol::{ops, ErrorKind};
    let client = StorageClient::spawn(&worker_url(WORKER_FAILING_ONE_REQUEST)).unwrap();
    client.ready().await.expect("the double says Ready");
    let failed = client.call(ops::ExportAll).await.expect_err("that request fails");
    assert_eq!(failed.kind(), ErrorKind::Invalid, "{failed}");
    assert!(client.ready().await.is_ok(), "still ready after one bad request");
    assert_eq!(client.call(ops::IntegrityCheck).await, Ok("ok".to_owned()), "the next call is answered");
    // A reply of another kind than the operation gets is an error that says what to do, not a panic.
    let other = client.call(ops::Stats).await.expect_err("a text is not the archive's counts");
    assert!(other.to_string().contains("reload every Cowork tab"), "{other}");
}
