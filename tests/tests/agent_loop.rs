//! The agent loop end to end on the native side: the real store, real HTTP to the dev server's
//! scripted model, every failure mode of spec §7.

use cowork_core::agent::delegate::deliver_pending_tasks;
use cowork_core::agent::{
    continue_session, next_context, send_message, send_user_message, tool_definitions, AgentEvent, AgentSettings,
    NoTools, Outcome, ToolHost, ToolOutcome, UserMessage,
};
use cowork_core::context::ContextSettings;
use cowork_core::prompt::{ApprovalPolicy, PromptOptions};
use cowork_core::provider::{ModelSettings, ProviderKind};
use cowork_core::state::{ExtractionRules, SessionState};
use cowork_core::store::{NewSession, SessionFilter, Store};
use cowork_core::{Approval, Error, ErrorKind, NewAttachment, NewTurn, Role, ToolCall, TurnStatus, WorkspaceSettings};
use cowork_tests::transport::HttpTransport;
use serde_json::{json, Value};
use std::cell::RefCell;

fn settings(base: &str) -> AgentSettings {
    AgentSettings {
        provider: ModelSettings {
            kind: ProviderKind::OpenAi,
            base_url: base.into(),
            model: "demo".into(),
            api_key: "sk-test".into(),
            ..ModelSettings::default()
        },
        context: ContextSettings { context_window: 16_000, output_reserve: 2_000, ..ContextSettings::default() },
        prompt: PromptOptions { delegation: false, ..PromptOptions::default() },
        rules: ExtractionRules::default(),
        max_iterations: 4,
        orchestrator_url: None,
    }
}

struct Fixture {
    store: Store,
    session: String,
    settings: AgentSettings,
    transport: HttpTransport,
    events: Vec<AgentEvent>,
}

async fn fixture() -> Fixture {
    let base = format!("{}/v1", cowork_tests::server::start_for_tests("agent").await);
    let mut store = Store::open_in_memory().unwrap();
    // The workspace's orchestrator directory must exist on the orchestrator's machine, as Loom requires.
    let directory = std::env::temp_dir().join(format!("cowork-agent-proj-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let place =
        WorkspaceSettings { orchestrator_dir: directory.display().to_string(), ..WorkspaceSettings::unset("proj") };
    store.set_workspace_settings(&place).unwrap();
    let session = store.create_session(&NewSession::new("proj")).unwrap().id;
    Fixture {
        store,
        session,
        settings: settings(&base),
        transport: HttpTransport::with_time_scale(50),
        events: Vec::new(),
    }
}

impl Fixture {
    async fn send<H: ToolHost>(&mut self, tools: &H, text: &str) -> cowork_core::Result<Outcome> {
        let events = &mut self.events;
        send_message(
            &RefCell::new(&mut self.store),
            &self.transport,
            tools,
            &self.settings,
            &self.session,
            text,
            &mut |e| events.push(e),
        )
        .await
    }

    fn roles_and_status(&self) -> Vec<(Role, TurnStatus)> {
        self.store.get_turns(&self.session, 0, 100).unwrap().iter().map(|t| (t.role, t.status)).collect()
    }
}

#[tokio::test]
async fn a_message_gets_a_streamed_answer_with_usage_manifest_and_state() {
    let mut f = fixture().await;
    let out = f.send(&NoTools, "Let's build the login page. We use JWT for auth.").await.unwrap();
    assert_eq!(out, Outcome::Done { assistant_turn: 2 });
    let turns = f.store.get_turns(&f.session, 0, 10).unwrap();
    assert_eq!(turns.len(), 2);
    assert!(turns[1].content.contains("You said: \"Let's build the login page."), "{}", turns[1].content);
    assert_eq!(turns[1].status, TurnStatus::Complete);
    assert_eq!(turns[1].metadata["finish_reason"], "stop");
    let deltas: String = f
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::StreamDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, turns[1].content, "the UI saw exactly what was saved");
    let session = f.store.get_session(&f.session).unwrap();
    assert!(session.prompt_tokens > 0 && session.completion_tokens > 0, "usage totals: {session:?}");
    let manifest = &f.store.manifests(&f.session, 1).unwrap()[0];
    assert_eq!(manifest.turn_numbers, [1]);
    assert!(manifest.usage["prompt_tokens"].as_i64().unwrap() > 0);
    assert!(f.store.calibration("demo").unwrap().is_some(), "the token ratio is calibrated");
    let state = SessionState::from_json(&session.state);
    assert_eq!(state.current_focus, "Let's build the login page. We use JWT for auth.");
    assert!(state.key_decisions.iter().any(|d| d.contains("We use JWT for auth.")), "{:?}", state.key_decisions);
}

#[tokio::test]
async fn a_back_reference_makes_the_model_search_the_archive() {
    let mut f = fixture().await;
    f.send(&NoTools, "The session cookie is called zebra_crossing.").await.unwrap();
    let out = f.send(&NoTools, "What did we decide earlier about zebra_crossing?").await.unwrap();
    assert_eq!(out, Outcome::Done { assistant_turn: 6 });
    assert_eq!(
        f.roles_and_status().iter().map(|r| r.0).collect::<Vec<_>>(),
        [Role::User, Role::Assistant, Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    let recall = f.store.tool_executions(Some(&f.session), "conversation_recall", 5).unwrap();
    assert_eq!(recall.len(), 1);
    assert_eq!(recall[0].approval, Approval::Auto);
    assert!(recall[0].result.contains("[Turn 1]"), "the recall found the first message: {}", recall[0].result);
    assert!(
        !recall[0].result.contains("» [Turn 3]") && !recall[0].result.contains("» [Turn 4]"),
        "the question and the call are not hits of their own search: {}",
        recall[0].result
    );
    let last = f.store.last_turns(&f.session, 1).unwrap().remove(0);
    assert!(last.content.contains("conversation_recall returned"), "{}", last.content);
    // "What did the model see?" is answerable for every request.
    let manifests = f.store.manifests(&f.session, 10).unwrap();
    assert_eq!(manifests.len(), 3, "one manifest per model call");
    assert_eq!(manifests[0].turn_numbers, [1, 2, 3, 4, 5], "the last request saw the recall call and its result");
    assert!(manifests.iter().all(|m| m.usage["prompt_tokens"].as_i64().is_some_and(|t| t > 0)));

    // A new chat of the same workspace: nothing in it yet, so the search widens to the workspace.
    let first = std::mem::replace(&mut f.session, f.store.create_session(&NewSession::new("proj")).unwrap().id);
    f.send(&NoTools, "What did we decide earlier about zebra_crossing?").await.unwrap();
    let recall = f.store.tool_executions(Some(&f.session), "conversation_recall", 5).unwrap();
    assert!(
        recall[0].result.starts_with("Nothing in this session; searched the workspace instead.")
            && recall[0].result.contains(&format!("({first}), turn 1 ──")),
        "{}",
        recall[0].result
    );
}

/// A host with no tools of its own whose recall searches by meaning: a stand-in embedder where words
/// of one topic share a dimension ("logging", "sign", "auth", "tokens", "expire"), other words hash
/// to the rest.
struct Meaning;

fn meaning_vector(text: &str) -> Vec<f32> {
    const TOPIC: &[&str] = &["logging", "login", "sign", "auth", "tokens", "expire", "expires"];
    let mut v = vec![0f32; cowork_core::semantic::DIMS];
    for w in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let w = w.to_lowercase();
        if TOPIC.contains(&w.as_str()) {
            v[0] += 1.0;
        } else {
            let h = w.bytes().fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
            v[1 + h as usize % (cowork_core::semantic::DIMS - 1)] += 0.1;
        }
    }
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(f32::MIN_POSITIVE);
    v.iter().map(|x| x / n).collect()
}

impl ToolHost for Meaning {
    fn definitions(&self) -> Vec<Value> {
        Vec::new()
    }
    fn approval(&self, _: &str) -> ApprovalPolicy {
        ApprovalPolicy::AskEveryTime
    }
    async fn approve(&self, _: &ToolCall) -> bool {
        false
    }
    async fn call(&self, call: &ToolCall) -> ToolOutcome {
        ToolOutcome::text(format!("unknown tool {}", call.name), false)
    }
    async fn embed_query(&self, text: &str) -> Option<(Vec<f32>, String)> {
        Some((meaning_vector(text), text.to_owned()))
    }
}

#[tokio::test]
async fn with_recall_by_meaning_the_model_finds_a_paraphrase() {
    let mut f = fixture().await;
    f.send(&NoTools, "Note: the auth tokens expire after an hour.").await.unwrap();
    loop {
        let batch = f.store.semantic_pending(50).unwrap();
        if batch.is_empty() {
            break;
        }
        let vectors: Vec<Vec<f32>> = batch.chunks.iter().map(|c| meaning_vector(&c.text)).collect();
        f.store.put_vectors(&batch, &vectors).unwrap();
    }
    // Words alone: the question shares no word with the note, which is not a hit.
    f.send(&NoTools, "Do you remember: logging in?").await.unwrap();
    let lexical = f.store.tool_executions(Some(&f.session), "conversation_recall", 1).unwrap().remove(0);
    assert!(!lexical.result.contains("» [Turn 1]"), "{}", lexical.result);
    // By meaning too: the note is the hit, and the answer says how it was found.
    f.send(&Meaning, "Do you remember: logging in?").await.unwrap();
    let recall = f.store.tool_executions(Some(&f.session), "conversation_recall", 1).unwrap().remove(0);
    assert!(recall.result.contains("turn 1, matched by meaning ──"), "{}", recall.result);
    assert!(recall.result.contains("auth tokens expire"), "{}", recall.result);
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried_with_a_countdown() {
    let mut f = fixture().await;
    let out = f.send(&NoTools, "hello [[fault:429x2]]").await.unwrap();
    assert!(matches!(out, Outcome::Done { .. }));
    let waits: Vec<(u64, ErrorKind)> = f
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Retrying { wait_ms, kind, .. } => Some((*wait_ms, *kind)),
            _ => None,
        })
        .collect();
    let limited = ErrorKind::RateLimited;
    assert_eq!(waits, [(1000, limited), (1000, limited)], "Retry-After: 1 is honoured on each of the two refusals");
    f.events.clear();
    assert!(matches!(f.send(&NoTools, "again [[fault:500x1]]").await.unwrap(), Outcome::Done { .. }));
    let kinds: Vec<ErrorKind> = f
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Retrying { kind, .. } => Some(*kind),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, [ErrorKind::ModelServer]);
}

#[tokio::test]
async fn an_auth_failure_is_not_retried_and_keeps_the_message() {
    let mut f = fixture().await;
    let err = f.send(&NoTools, "my secret plan [[fault:401]]").await.unwrap_err();
    assert!(matches!(err, Error::Model(_)));
    assert!(err.to_string().to_lowercase().contains("api key"), "{err}");
    assert!(!f.events.iter().any(|e| matches!(e, AgentEvent::Retrying { .. })), "401 is never retried");
    let reported = f.events.iter().find_map(|e| match e {
        AgentEvent::Error { kind, message } => Some((*kind, message.clone())),
        _ => None,
    });
    assert_eq!(reported, Some((ErrorKind::Auth, err.to_string())), "the UI learns the kind, not only the words");
    assert_eq!(f.roles_and_status(), [(Role::User, TurnStatus::Complete)], "the user's message is saved");
    // The session stays usable.
    assert!(matches!(f.send(&NoTools, "second try").await.unwrap(), Outcome::Done { .. }));
}

#[tokio::test]
async fn a_cut_stream_leaves_an_interrupted_turn_with_the_partial_text() {
    let mut f = fixture().await;
    let out = f.send(&NoTools, "tell me a long story about the refresh token rotation [[fault:cut]]").await.unwrap();
    let Outcome::Interrupted { assistant_turn, .. } = out else { panic!("expected an interruption, got {out:?}") };
    let turn = f.store.turns_range(&f.session, assistant_turn, assistant_turn).unwrap().remove(0);
    assert_eq!(turn.status, TurnStatus::Interrupted);
    assert!(
        !turn.content.is_empty() && turn.content.starts_with("Demo model here"),
        "partial text saved: {:?}",
        turn.content
    );
    assert!(matches!(f.send(&NoTools, "continue").await.unwrap(), Outcome::Done { .. }), "the session continues");
}

/// The first words of a reply are in the archive before the app is told to show them: a tab that
/// dies the moment they appear (here: the event handler panics, dropping the store mid-reply) finds
/// them again when the archive is opened anew.
#[tokio::test]
async fn the_first_words_shown_are_already_saved() {
    let settings = fixture().await.settings;
    let file = std::env::temp_dir().join(format!("cowork-first-words-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let path = file.to_str().unwrap().to_owned();
    let shown = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let (seen, at) = (shown.clone(), path.clone());
    let tab = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let mut store = Store::open(&at).unwrap();
            let session = store.create_session(&NewSession::new("proj")).unwrap().id;
            let transport = HttpTransport::with_time_scale(50);
            let _ = send_message(
                &RefCell::new(&mut store),
                &transport,
                &NoTools,
                &settings,
                &session,
                "hello there",
                &mut |e| {
                    if let AgentEvent::StreamDelta { text, .. } = e {
                        *seen.lock().unwrap() = text;
                        panic!("the tab is gone");
                    }
                },
            )
            .await;
        })
    });
    // Joined off this runtime's thread: the dev server answering the tab runs on it.
    let died = tokio::task::spawn_blocking(move || tab.join().is_err()).await.unwrap();
    assert!(died, "the reply was cut when its first words were shown");
    let shown = shown.lock().unwrap().clone();
    let store = Store::open(&path).unwrap();
    let session = &store.list_sessions(&SessionFilter::default()).unwrap()[0].id;
    let saved = store.get_turns(session, 0, 10).unwrap();
    let reply = saved.iter().find(|t| t.role == Role::Assistant).expect("the reply's turn was saved");
    assert_eq!(reply.status, TurnStatus::Interrupted);
    assert!(!shown.is_empty() && reply.content.starts_with(&shown), "shown {shown:?}, saved {:?}", reply.content);
    drop(store);
    let _ = std::fs::remove_file(&file);
}

/// Continuing a cut reply finishes it in the same turn: the saved words stay its start, nothing is
/// repeated, and no second reply appears.
#[tokio::test]
async fn continuing_a_cut_reply_finishes_it_in_place() {
    let mut f = fixture().await;
    let asked = "tell me a long story about the refresh token rotation [[fault:cutx1]]";
    let Outcome::Interrupted { assistant_turn, .. } = f.send(&NoTools, asked).await.unwrap() else {
        panic!("the first reply is cut")
    };
    let partial = f.store.turns_range(&f.session, assistant_turn, assistant_turn).unwrap().remove(0).content;
    assert!(partial.starts_with("Demo model here"), "{partial:?}");
    f.events.clear();
    let events = &mut f.events;
    let out =
        continue_session(&RefCell::new(&mut f.store), &f.transport, &NoTools, &f.settings, &f.session, &mut |e| {
            events.push(e)
        })
        .await
        .unwrap();
    assert_eq!(out, Outcome::Done { assistant_turn }, "the same turn is finished");
    assert_eq!(f.roles_and_status(), [(Role::User, TurnStatus::Complete), (Role::Assistant, TurnStatus::Complete)]);
    let reply = f.store.turns_range(&f.session, assistant_turn, assistant_turn).unwrap().remove(0).content;
    assert!(reply.starts_with(partial.trim_end()), "the saved words start the reply: {reply:?}");
    assert!(reply.len() > partial.len(), "and it goes on: {reply:?}");
    assert_eq!(reply.matches("Demo model here").count(), 1, "nothing is repeated: {reply:?}");
    // A whole reply to the same message, for comparison: the continued one reads the same.
    let whole = f.send(&NoTools, "tell me a long story about the refresh token rotation").await.unwrap();
    let Outcome::Done { assistant_turn: n } = whole else { panic!("{whole:?}") };
    let expected = f.store.turns_range(&f.session, n, n).unwrap().remove(0).content;
    assert_eq!(reply, expected);
    let streamed: String = f
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::StreamDelta { turn_number, text } if *turn_number == assistant_turn => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, reply, "the UI's stream starts from the saved words and ends as saved");
}

#[tokio::test]
async fn malformed_stream_data_is_saved_as_an_error_turn() {
    let mut f = fixture().await;
    let err = f.send(&NoTools, "this breaks [[fault:badjson]]").await.unwrap_err();
    assert!(err.to_string().contains("could not be read"), "{err}");
    let turn = f.store.last_turns(&f.session, 1).unwrap().remove(0);
    assert_eq!(turn.status, TurnStatus::Error);
    assert!(
        turn.metadata["raw"].as_str().unwrap().contains("this is not json"),
        "the raw text is kept: {}",
        turn.metadata
    );
    assert!(matches!(f.send(&NoTools, "ok now").await.unwrap(), Outcome::Done { .. }));
}

/// A host with a `write_file` tool that needs approval, answering with a fixed decision.
struct Files {
    approve: bool,
}

impl ToolHost for Files {
    fn definitions(&self) -> Vec<Value> {
        vec![json!({"type": "function", "function": {"name": "write_file", "description": "Write a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}})]
    }
    fn approval(&self, _: &str) -> ApprovalPolicy {
        ApprovalPolicy::AskEveryTime
    }
    async fn approve(&self, _: &ToolCall) -> bool {
        self.approve
    }
    async fn call(&self, call: &ToolCall) -> ToolOutcome {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or_default();
        ToolOutcome::text(format!("wrote {}", args["path"].as_str().unwrap_or("?")), true)
    }
}

#[tokio::test]
async fn host_tools_run_after_approval_and_feed_the_state_register() {
    let mut f = fixture().await;
    f.send(&Files { approve: true }, "write file src/app.rs: fn main() {}").await.unwrap();
    let exec = &f.store.tool_executions(Some(&f.session), "write_file", 1).unwrap()[0];
    assert_eq!((exec.approval, exec.success, exec.result.as_str()), (Approval::Approved, true, "wrote src/app.rs"));
    let state = SessionState::from_json(&f.store.get_session(&f.session).unwrap().state);
    assert_eq!(state.files_touched.iter().map(|t| t.path.as_str()).collect::<Vec<_>>(), ["src/app.rs"]);

    let mut g = fixture().await;
    g.send(&Files { approve: false }, "write file secrets.txt: nope").await.unwrap();
    let exec = &g.store.tool_executions(Some(&g.session), "write_file", 1).unwrap()[0];
    assert_eq!(exec.approval, Approval::Denied);
    assert!(exec.result.contains("declined"), "{}", exec.result);
}

#[tokio::test]
async fn the_next_context_is_what_the_loop_would_send_and_complete_replies_are_reported() {
    let mut f = fixture().await;
    let files = Files { approve: true };
    f.send(&files, "write file src/app.rs: fn main() {}").await.unwrap();
    // Each assistant turn is reported when it starts (empty) and again once complete.
    let complete: Vec<i64> = f
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TurnAppended { turn }
                if turn.role == Role::Assistant && turn.status == TurnStatus::Complete =>
            {
                Some(turn.turn_number)
            }
            _ => None,
        })
        .collect();
    assert_eq!(complete, [2, 4]);
    let last = f.store.manifests(&f.session, 1).unwrap().remove(0);
    assert_eq!(last.turn_numbers, [1, 2, 3], "the loop's last request");
    let next = next_context(&f.store, &f.settings, &f.session).unwrap();
    assert_eq!(next.manifest.turn_numbers, [1, 2, 3, 4], "the next one adds the reply");
    assert_eq!(next.messages[0].role, Role::System);
    assert!(next.messages[0].content.contains("src/app.rs"), "the state register is in the system prompt");
    assert_eq!(next.messages.len(), 5);
    let names: Vec<String> = tool_definitions(&files, &f.settings)
        .iter()
        .map(|d| d["function"]["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(names, ["conversation_recall", "write_file"]);
}

/// An MCP server's tool as the worker offers it: a read-only tool that returns text and an image.
struct McpImage;

impl ToolHost for McpImage {
    fn definitions(&self) -> Vec<Value> {
        vec![
            json!({"type": "function", "function": {"name": "everything__get-tiny-image", "description": "", "parameters": {"type": "object"}}}),
        ]
    }
    fn approval(&self, _: &str) -> ApprovalPolicy {
        ApprovalPolicy::Auto
    }
    async fn approve(&self, _: &ToolCall) -> bool {
        false
    }
    async fn call(&self, _: &ToolCall) -> ToolOutcome {
        let parts = cowork_core::mcp::result_parts(&json!({"content": [
            {"type": "text", "text": "Here's the image you requested:"},
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
            {"type": "text", "text": "The image above is the ocelotlogo."}]}));
        ToolOutcome {
            content: parts.content,
            success: parts.success,
            result: Some(parts.result),
            attachments: parts.attachments,
        }
    }
}

#[tokio::test]
async fn an_mcp_tools_result_is_archived_whole_with_its_image_and_answered() {
    let mut f = fixture().await;
    f.send(&McpImage, "[[mcp:everything/get-tiny-image]]").await.unwrap();
    let turns = f.store.get_turns(&f.session, 0, 10).unwrap();
    let tool = turns.iter().find(|t| t.role == Role::Tool).expect("a tool turn");
    assert_eq!(tool.tool_name.as_deref(), Some("everything__get-tiny-image"));
    assert!(tool.content.contains("ocelotlogo"), "the text the model reads: {}", tool.content);
    assert_eq!(tool.attachments.len(), 1, "the image is an attachment of the tool turn");
    assert_eq!(f.store.attachment_bytes(&tool.attachments[0].sha256).unwrap(), b"\x89PNG\r\n\x1a\n");
    assert_eq!(tool.metadata["result"]["content"][1]["attachment"], 0, "{}", tool.metadata);
    let answer = &turns.last().unwrap().content;
    assert_eq!(answer, "Here is what everything__get-tiny-image returned: Here's the image you requested:");
}

/// Approves (or not) every delegation; no tools of its own.
struct Approver(bool);

impl ToolHost for Approver {
    fn definitions(&self) -> Vec<Value> {
        Vec::new()
    }
    fn approval(&self, _: &str) -> ApprovalPolicy {
        ApprovalPolicy::AskEveryTime
    }
    async fn approve(&self, _: &ToolCall) -> bool {
        self.0
    }
    async fn call(&self, call: &ToolCall) -> ToolOutcome {
        ToolOutcome::text(format!("unknown tool {}", call.name), false)
    }
}

async fn delegating_fixture(orchestrator: Option<String>) -> Fixture {
    let mut f = fixture().await;
    let base = f.settings.provider.base_url.trim_end_matches("/v1").to_owned();
    f.settings.prompt.delegation = true;
    f.settings.orchestrator_url = Some(orchestrator.unwrap_or(base));
    f
}

#[tokio::test]
async fn delegated_work_streams_back_into_the_conversation() {
    let mut f = delegating_fixture(None).await;
    let out = f.send(&Approver(true), "Please delegate: add refresh tokens in src/auth.py").await.unwrap();
    assert!(matches!(out, Outcome::Done { .. }), "{out:?}");
    assert_eq!(
        f.roles_and_status().iter().map(|r| r.0).collect::<Vec<_>>(),
        [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    let exec = &f.store.tool_executions(Some(&f.session), "delegate_task", 1).unwrap()[0];
    assert_eq!(exec.approval, Approval::Approved);
    assert!(exec.result.starts_with("Task completed:"), "{}", exec.result);
    assert!(exec.result.contains("[x]") && exec.result.contains("src/auth.py"), "{}", exec.result);
    let task = &f.store.tasks(&f.session).unwrap()[0];
    assert_eq!((task.status.as_str(), task.result_delivered, task.turn_number), ("completed", true, 2));
    let events = f.store.task_events(&task.task_id).unwrap();
    assert_eq!(events.last().unwrap().event_type, "task_completed");
    assert!(events.iter().filter(|e| e.event_type == "subtask_completed").count() == 3, "every event is archived");
    assert!(f
        .events
        .iter()
        .any(|e| matches!(e, AgentEvent::TaskProgress { event_type, .. } if event_type == "subtask_started")));
    let state = SessionState::from_json(&f.store.get_session(&f.session).unwrap().state);
    assert!(state.files_touched.iter().any(|t| t.path == "src/auth.py"), "{:?}", state.files_touched);
    assert!(state.open_tasks.is_empty(), "a finished task is not open: {:?}", state.open_tasks);
}

#[tokio::test]
async fn a_declined_or_failing_delegation_is_reported_and_the_session_goes_on() {
    let mut f = delegating_fixture(None).await;
    f.send(&Approver(false), "delegate: rewrite everything").await.unwrap();
    let exec = &f.store.tool_executions(Some(&f.session), "delegate_task", 1).unwrap()[0];
    assert_eq!(exec.approval, Approval::Denied);
    assert!(exec.result.contains("declined"), "{}", exec.result);
    assert!(f.store.tasks(&f.session).unwrap().is_empty(), "nothing was submitted");

    f.send(&Approver(true), "delegate: make this fail on purpose").await.unwrap();
    let exec = &f.store.tool_executions(Some(&f.session), "delegate_task", 1).unwrap()[0];
    assert!(!exec.success && exec.result.starts_with("Task failed:"), "{}", exec.result);

    let mut down = delegating_fixture(Some("http://127.0.0.1:9".into())).await;
    let out = down.send(&Approver(true), "delegate: anything").await.unwrap();
    assert!(matches!(out, Outcome::Done { .. }), "the conversation continues: {out:?}");
    let exec = &down.store.tool_executions(Some(&down.session), "delegate_task", 1).unwrap()[0];
    assert!(exec.result.contains("unreachable"), "{}", exec.result);
}

/// A workspace without an orchestrator directory cannot delegate: the model is told at once where to
/// set it, nothing is sent to the orchestrator, the user is not asked, and the UI can offer the setting.
#[tokio::test]
async fn a_workspace_without_a_directory_delegates_nothing_and_says_where_to_set_it() {
    let mut f = delegating_fixture(None).await;
    f.store.set_workspace_settings(&WorkspaceSettings::unset("proj")).unwrap();
    let out = f.send(&Approver(false), "Please delegate: add refresh tokens in src/auth.py").await.unwrap();
    assert!(matches!(out, Outcome::Done { .. }), "the conversation goes on: {out:?}");
    let exec = &f.store.tool_executions(Some(&f.session), "delegate_task", 1).unwrap()[0];
    assert_eq!(exec.approval, Approval::Auto, "nothing to approve: nothing is sent");
    assert!(!exec.success);
    assert!(exec.result.contains("no orchestrator directory") && exec.result.contains("\"proj\""), "{}", exec.result);
    assert!(f.store.tasks(&f.session).unwrap().is_empty(), "no task was submitted");
    let tool_turn = f.store.get_turns(&f.session, 0, 10).unwrap().into_iter().find(|t| t.role == Role::Tool).unwrap();
    assert_eq!(tool_turn.metadata["needs"], "orchestrator_directory", "the UI can offer the setting");
}

#[tokio::test]
async fn a_background_delegation_returns_at_once_and_its_result_arrives_later() {
    let mut f = delegating_fixture(None).await;
    f.send(&Approver(true), "delegate in background: build the docs site (slow)").await.unwrap();
    let exec = &f.store.tool_executions(Some(&f.session), "delegate_task", 1).unwrap()[0];
    assert!(exec.result.starts_with("Task submitted: task-"), "{}", exec.result);
    let task = f.store.tasks(&f.session).unwrap().remove(0);
    assert!(!task.result_delivered);
    let state = SessionState::from_json(&f.store.get_session(&f.session).unwrap().state);
    assert_eq!(state.open_tasks.len(), 1, "the running task is on the register: {:?}", state.open_tasks);

    // Later (or after a reload): re-attach and deliver. A check that does not wait leaves a running task
    // pending; following it delivers the result.
    let base = f.settings.orchestrator_url.clone().unwrap();
    let events = &mut f.events;
    let quick = deliver_pending_tasks(&RefCell::new(&mut f.store), &f.transport, &base, &f.session, false, &mut |e| {
        events.push(e)
    })
    .await
    .unwrap();
    assert!(quick.is_empty(), "the task was still running: {quick:?}");
    let events = &mut f.events;
    let delivered =
        deliver_pending_tasks(&RefCell::new(&mut f.store), &f.transport, &base, &f.session, true, &mut |e| {
            events.push(e)
        })
        .await
        .unwrap();
    assert_eq!(delivered.len(), 1);
    let text = &delivered[0].content;
    assert!(text.starts_with("Task completed:") && text.contains("build the docs site"), "{text}");
    assert!(f.store.task(&task.task_id).unwrap().unwrap().result_delivered);
    assert!(!f.store.task_events(&task.task_id).unwrap().is_empty(), "events archived while re-attached");
    // Nothing left to deliver; the next request shows the result to the model.
    let events = &mut f.events;
    assert!(deliver_pending_tasks(&RefCell::new(&mut f.store), &f.transport, &base, &f.session, true, &mut |e| events
        .push(e))
    .await
    .unwrap()
    .is_empty());
    f.send(&Approver(true), "thanks").await.unwrap();
    let seen = &f.store.manifests(&f.session, 1).unwrap()[0];
    assert!(seen.turn_numbers.contains(&delivered[0].turn_number), "the model saw the delivered result: {seen:?}");
}

#[tokio::test]
async fn an_unreachable_endpoint_is_retried_with_backoff_then_reported() {
    let mut f = fixture().await;
    f.settings.provider.base_url = "http://127.0.0.1:9/v1".into();
    let err = f.send(&NoTools, "is anyone there?").await.unwrap_err();
    let waits: Vec<u64> = f
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Retrying { wait_ms, .. } => Some(*wait_ms),
            _ => None,
        })
        .collect();
    assert_eq!(waits, [1000, 2000, 4000], "bounded exponential backoff");
    assert!(matches!(err, Error::Model(_)), "{err}");
    assert_eq!(f.roles_and_status(), [(Role::User, TurnStatus::Complete)], "the message is saved");
}

/// A PNG header for a `w`×`h` image, padded to `len` bytes.
fn png(w: u32, h: u32, len: usize) -> Vec<u8> {
    let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    b.extend_from_slice(&w.to_be_bytes());
    b.extend_from_slice(&h.to_be_bytes());
    b.resize(len, 7);
    b
}

impl Fixture {
    async fn send_with(&mut self, text: &str, attachments: &[NewAttachment]) -> cowork_core::Result<Outcome> {
        let events = &mut self.events;
        let turn = NewTurn::user(text);
        let message = UserMessage { turn: &turn, attachments };
        send_user_message(
            &RefCell::new(&mut self.store),
            &self.transport,
            &NoTools,
            &self.settings,
            &self.session,
            message,
            &mut |e| events.push(e),
        )
        .await
    }
}

#[tokio::test]
async fn the_demo_model_describes_the_image_and_file_it_received() {
    let mut f = fixture().await;
    let files = [
        NewAttachment::new("shot.png", "image/png", png(64, 48, 1229)),
        NewAttachment::new("script.py", "text/x-python", b"print('quokka')\n".to_vec()),
    ];
    let out = f.send_with("what are these?", &files).await.unwrap();
    assert_eq!(out, Outcome::Done { assistant_turn: 2 });
    let turns = f.store.get_turns(&f.session, 0, 10).unwrap();
    assert_eq!(turns[0].attachments.len(), 2, "the user turn keeps its attachments");
    assert!(
        turns[1].content.starts_with("I received 1 image (64×48, 1.2 KB) and 1 file: script.py (16 B)."),
        "{}",
        turns[1].content
    );
    assert!(turns[1].content.contains("You said: \"what are these?\""), "{}", turns[1].content);
}

#[tokio::test]
async fn a_model_that_refuses_images_names_them_and_the_message_stays_saved() {
    let mut f = fixture().await;
    let files = [NewAttachment::new("diagram.png", "", png(10, 10, 100))];
    let err = f.send_with("[[fault:noimages]] explain", &files).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::BadRequest);
    let msg = err.to_string();
    assert!(msg.contains("diagram.png") && msg.contains("Your message is saved"), "{msg}");
    let turns = f.store.get_turns(&f.session, 0, 10).unwrap();
    assert_eq!(turns.len(), 1, "the user's turn is saved");
    assert_eq!(turns[0].attachments[0].name, "diagram.png");
    // An attachment over the limit is refused before anything is saved.
    f.settings.provider.max_attachment_bytes = Some(50);
    let err = f.send_with("again", &files).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AttachmentTooLarge);
    assert_eq!(f.store.turn_count(&f.session).unwrap(), 1);
}
