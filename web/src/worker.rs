//! The storage worker: the only place that opens the database. It installs the OPFS VFS, opens the
//! archive (falling back to memory, and saying so, when OPFS is unavailable), announces `Ready`, then
//! serves requests one at a time, in order. The agent loop runs here too, next to the archive, so each
//! of its writes is a local commit; `Stop` is answered out of turn and aborts the model call.

use crate::fetch::FetchTransport;
use crate::protocol::{Backend, Event, ModelSettings, EVENT_CONTENT_CHARS, Op, ReadyInfo, Reply, Request, WorkerMessage};
use cowork_core::agent::{continue_session, send_message, AgentEvent, AgentSettings, Outcome, ToolHost, ToolOutcome};
use cowork_core::prompt::ApprovalPolicy;
use cowork_core::ToolCall;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use cowork_core::context::ContextSettings;
use cowork_core::prompt::PromptOptions;
use cowork_core::provider::{ProviderConfig, ProviderKind};
use cowork_core::state::ExtractionRules;
use cowork_core::store::{NewSession, SessionFilter, Store};
use futures_util::StreamExt;
use wasm_bindgen::prelude::*;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

/// The archive's file name in the OPFS pool.
pub const DB_FILE: &str = "cowork.db";
/// Model calls per user message, at most.
const MAX_ITERATIONS: u32 = 8;

fn post(msg: &WorkerMessage) {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let _ = scope.post_message(&JsValue::from_str(&msg.to_json()));
}

/// Runs the worker: open the archive, say `Ready`, serve requests.
pub async fn run() {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let (mut store, backend) = match open_archive().await {
        Ok(v) => v,
        Err(message) => {
            post(&WorkerMessage::Failed { message });
            return;
        }
    };
    let ready = ReadyInfo {
        backend,
        sqlite_version: cowork_core::store::sqlite_version(),
        schema_version: store.schema_version().unwrap_or_default(),
    };
    let transport = FetchTransport::default();
    let tools = WorkerTools::default();
    let (queue, mut requests) = futures_channel::mpsc::unbounded::<Request>();
    let handler = {
        let transport = transport.clone();
        let tools = tools.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
            let Some(text) = ev.data().as_string() else { return };
            match serde_json::from_str::<Request>(&text) {
                Ok(Request { id, op: Op::Stop }) => {
                    transport.abort();
                    post(&WorkerMessage::Response { id, result: Ok(Reply::Done) });
                }
                Ok(Request { id, op: Op::Approve { call_id, approved } }) => {
                    tools.answer(&call_id, approved);
                    post(&WorkerMessage::Response { id, result: Ok(Reply::Done) });
                }
                Ok(req) => {
                    let _ = queue.unbounded_send(req);
                }
                Err(e) => post(&WorkerMessage::Failed { message: format!("unreadable request: {e}") }),
            }
        })
    };
    scope.set_onmessage(Some(handler.as_ref().unchecked_ref()));
    handler.forget(); // lives as long as the worker
    post(&WorkerMessage::Ready(ready));
    while let Some(req) = requests.next().await {
        tools.request_id.set(req.id);
        let result = handle(&mut store, &transport, &tools, req.id, req.op).await;
        post(&WorkerMessage::Response { id: req.id, result });
    }
}

async fn open_archive() -> Result<(Store, Backend), String> {
    match cowork_core::store::opfs::install().await {
        Ok(_opfs) => match Store::open(DB_FILE) {
            Ok(store) => Ok((store, Backend::Opfs { file: DB_FILE.into() })),
            // A newer schema or a damaged file: never silently fall back to memory over real data.
            Err(e) => Err(e.to_string()),
        },
        Err(e) => {
            let store = Store::open_in_memory().map_err(|e| e.to_string())?;
            Ok((store, Backend::Memory { reason: e.to_string() }))
        }
    }
}

/// Performs one operation on the archive.
pub async fn handle(
    store: &mut Store,
    transport: &FetchTransport,
    tools: &WorkerTools,
    id: u64,
    op: Op,
) -> Result<Reply, String> {
    let r = match op {
        Op::Stats => store.stats().map(|stats| Reply::Stats { stats }),
        Op::ListSessions { workspace } => store
            .list_sessions(&SessionFilter { workspace, ..Default::default() })
            .map(|sessions| Reply::Sessions { sessions }),
        Op::CreateSession { workspace } => {
            store.create_session(&NewSession::new(workspace)).map(|session| Reply::Session { session })
        }
        Op::AppendTurn { session_id, turn } => store.append_turn(&session_id, &turn).map(|turn| Reply::Turn { turn }),
        Op::GetTurns { session_id, offset, limit } => {
            store.get_turns(&session_id, offset, limit).map(|turns| Reply::Turns { turns })
        }
        Op::Search { query } => store.search(&query).map(|hits| Reply::Hits { hits }),
        Op::IntegrityCheck => store.integrity_check().map(|text| Reply::Text { text }),
        Op::ExportAll => store.export_jsonl(None).map(|text| Reply::Text { text }),
        Op::Stop | Op::Approve { .. } => Ok(Reply::Done),
        Op::SendMessage { session_id, workspace, text, model } => {
            return send(store, transport, tools, id, Some(session_id).flatten(), workspace, Some(text), model).await;
        }
        Op::Continue { session_id, model } => {
            return send(store, transport, tools, id, Some(session_id), String::new(), None, model).await;
        }
    };
    r.map_err(|e| e.to_string())
}

#[allow(clippy::too_many_arguments)] // one request's fields, passed straight through
async fn send(
    store: &mut Store,
    transport: &FetchTransport,
    tools: &WorkerTools,
    id: u64,
    session_id: Option<String>,
    workspace: String,
    // `None`: continue from the session's end without a new message.
    text: Option<String>,
    model: ModelSettings,
) -> Result<Reply, String> {
    let event = |event: Event| post(&WorkerMessage::Event { id, event });
    let session_id = match session_id {
        Some(s) => s,
        None => {
            let new = NewSession { workspace: workspace.clone(), model: model.model.clone(), ..NewSession::default() };
            let session = store.create_session(&new).map_err(|e| e.to_string())?;
            event(Event::SessionCreated { session: session.clone() });
            session.id
        }
    };
    let session = store.get_session(&session_id).map_err(|e| e.to_string())?;
    if session.model != model.model {
        store.set_model(&session_id, &model.model).map_err(|e| e.to_string())?;
    }
    let settings = AgentSettings {
        provider: ProviderConfig {
            kind: ProviderKind::parse(&model.kind).unwrap_or(ProviderKind::OpenAi),
            base_url: model.base_url,
            model: model.model,
            api_key: model.api_key,
            max_output_tokens: None,
        },
        context: ContextSettings {
            context_window: model.context_window,
            output_reserve: model.output_reserve,
            ..ContextSettings::default()
        },
        prompt: PromptOptions {
            workspace: session.workspace,
            delegation: !model.orchestrator_url.is_empty(),
            ..PromptOptions::default()
        },
        rules: ExtractionRules::default(),
        max_iterations: MAX_ITERATIONS,
        orchestrator_url: Some(model.orchestrator_url).filter(|u| !u.is_empty()),
    };
    let mut on_event = |e: AgentEvent| event(wire_event(e));
    // Background (`wait: false`) tasks that have ended since: their results join the conversation first.
    if let Some(base) = &settings.orchestrator_url {
        let _ = cowork_core::delegate::deliver_pending_tasks(store, transport, base, &session_id, false, &mut on_event).await;
    }
    let outcome = match text {
        Some(text) => send_message(store, transport, tools, &settings, &session_id, &text, &mut on_event).await,
        None => continue_session(store, transport, tools, &settings, &session_id, &mut on_event).await,
    }
    .map_err(|e| e.to_string())?;
    let outcome = match outcome {
        Outcome::Done { .. } => "done".to_owned(),
        Outcome::Interrupted { message, .. } => format!("interrupted: {message}"),
        Outcome::IterationLimit => format!("stopped after {MAX_ITERATIONS} model calls"),
    };
    Ok(Reply::Sent { session_id, outcome })
}

/// The loop's events in their wire form.
fn wire_event(e: AgentEvent) -> Event {
    match e {
        AgentEvent::TurnAppended { mut turn } => {
            if turn.content.len() > EVENT_CONTENT_CHARS {
                turn.content = turn.content.chars().take(EVENT_CONTENT_CHARS).collect();
            }
            Event::TurnAppended { turn }
        }
        AgentEvent::StreamDelta { turn_number, text } => Event::Delta { turn_number, text },
        AgentEvent::ToolStarted { turn_number, call } => {
            Event::ToolStarted { turn_number, name: call.name, arguments: call.arguments }
        }
        AgentEvent::ToolFinished { turn_number, tool_name, success, duration_ms } => {
            Event::ToolFinished { turn_number, name: tool_name, success, duration_ms }
        }
        AgentEvent::Retrying { attempt, wait_ms, reason } => Event::Retrying { attempt, wait_ms, reason },
        AgentEvent::TaskProgress { task_id, event_type, status } => Event::TaskProgress { task_id, event_type, status },
        AgentEvent::Error { message } => Event::Error { message },
    }
}

/// The worker's tool host: no tools of its own yet; approvals are asked of the user in the UI.
#[derive(Clone, Default)]
pub struct WorkerTools {
    /// The request being served (approval events belong to it).
    request_id: Rc<Cell<u64>>,
    waiting: Rc<RefCell<HashMap<String, futures_channel::oneshot::Sender<bool>>>>,
}

impl WorkerTools {
    /// Delivers the user's answer for `call_id`.
    pub fn answer(&self, call_id: &str, approved: bool) {
        if let Some(tx) = self.waiting.borrow_mut().remove(call_id) {
            let _ = tx.send(approved);
        }
    }
}

impl ToolHost for WorkerTools {
    fn definitions(&self) -> Vec<serde_json::Value> {
        Vec::new()
    }

    fn approval(&self, _: &str) -> ApprovalPolicy {
        ApprovalPolicy::AskEveryTime
    }

    async fn approve(&self, call: &ToolCall) -> bool {
        let (tx, rx) = futures_channel::oneshot::channel();
        self.waiting.borrow_mut().insert(call.id.clone(), tx);
        let event = Event::ApprovalNeeded { call_id: call.id.clone(), name: call.name.clone(), arguments: call.arguments.clone() };
        post(&WorkerMessage::Event { id: self.request_id.get(), event });
        // A closed tab or a lost answer counts as "no": nothing runs without a yes.
        rx.await.unwrap_or(false)
    }

    async fn call(&self, call: &ToolCall) -> ToolOutcome {
        ToolOutcome { content: format!("Error: there is no tool named {:?}.", call.name), success: false }
    }
}
