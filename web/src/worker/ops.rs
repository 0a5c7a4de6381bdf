//! What each operation does to the archive, and the agent loop's requests: their settings, the
//! events they send (every turn through `Event::turn_appended`, which cuts it), and how they ended.

use super::tools::WorkerTools;
use crate::fetch::FetchTransport;
use crate::protocol::{
    ops, AttachmentData, Call, Details, ErrorKind, Event, FilePayload, HostOptions, ModelSettings, NextContext, Op,
    Problem, Reply, Resumed, SendOutcome, Sent,
};
use cowork_core::agent::{
    continue_session, save_user_message, send_user_message, AgentEvent, AgentSettings, Outcome, Transport, UserMessage,
};
use cowork_core::context::ContextSettings;
use cowork_core::export::ExportSource;
use cowork_core::prompt::PromptOptions;
use cowork_core::state::ExtractionRules;
use cowork_core::store::{NewSession, SessionFilter, SharedStore, Store};
use cowork_core::NewTurn;
use wasm_bindgen::JsCast;

/// Model calls per user message, at most.
const MAX_ITERATIONS: u32 = 8;

/// Performs one operation that is done at once ([`Lane::AtOnce`](crate::protocol::Lane)); progress
/// goes to `emit`. Each answer goes through its operation's [`Call`] pairing.
pub fn handle(store: &mut Store, emit: &dyn Fn(Event), op: Op) -> Result<Reply, Problem> {
    let r = match op {
        Op::Stats => ops::Stats.answer(store.stats()),
        Op::ListSessions(c) => {
            let filter = SessionFilter {
                workspace: c.workspace.clone(),
                include_archived: c.include_archived,
                ..Default::default()
            };
            c.answer(store.list_sessions(&filter))
        }
        Op::CreateSession(c) => {
            let new = NewSession { title: c.title.trim().to_owned(), ..NewSession::new(c.workspace.clone()) };
            c.answer(store.create_session(&new).inspect(|session| {
                emit(Event::SessionCreated { session: session.clone() });
            }))
        }
        Op::Resume(c) => c.answer(store.resume(&c.session_id, c.last_turns).map(|r| Resumed {
            session: r.session,
            turns: r.turns,
            pending_tasks: r.pending_tasks,
        })),
        Op::Recall(c) => c.answer(
            store
                .get_session(&c.session_id)
                .map(|_| cowork_core::recall::run_recall(&*store, &c.session_id, &c.arguments)),
        ),
        Op::AssembleContext(c) => c.answer(store.get_session(&c.session_id).and_then(|session| {
            // The page's tools as offered to this request alone: a reply being written meanwhile keeps
            // the tools offered to it.
            let tools = WorkerTools::default();
            let settings = agent_settings(&tools, &c.model, &session.workspace, &c.host);
            let context = cowork_core::agent::next_context(store, &settings, &c.session_id)?;
            Ok(NextContext {
                messages: context.messages,
                manifest: context.manifest,
                archived_turns: context.archived_turns,
                tools: cowork_core::agent::tool_definitions(&tools, &settings),
            })
        })),
        Op::ReadAttachment(c) => c.answer(cowork_core::store::valid_sha256(&c.sha256).and_then(|sha256| {
            let data = cowork_core::attachment::to_base64(&store.attachment_bytes(sha256)?);
            Ok(AttachmentData { attachment: store.attachment_info(sha256)?, data })
        })),
        Op::AppendTurn(c) => {
            let ok = c.replies();
            let ops::AppendTurn { session_id, turn, attachments, max_attachment_bytes } = c;
            let attachments: Vec<_> = attachments.into_iter().map(FilePayload::into_attachment).collect();
            append_once(store, &session_id, &turn, &attachments, max_attachment_bytes)
                .and_then(|turn| {
                    // The state register follows turns written directly too (the embedding API's appendTurn).
                    let model = store.get_session(&session_id)?.model;
                    cowork_core::agent::record_in_state(
                        store,
                        &ExtractionRules::default(),
                        &model,
                        &session_id,
                        &turn,
                    )?;
                    emit(Event::turn_appended(turn.clone()));
                    Ok(turn)
                })
                .map(ok)
        }
        Op::GetTurns(c) => c.answer(store.get_turns(&c.session_id, c.offset, c.limit)),
        Op::Search(c) => c.answer(store.search(&c.query)),
        Op::IntegrityCheck => ops::IntegrityCheck.answer(store.integrity_check()),
        Op::ExportAll => ops::ExportAll.answer(store.export_jsonl(None)),
        Op::ExportSession(c) => c.answer(store.export_jsonl(Some(std::slice::from_ref(&c.session_id)))),
        Op::Import(c) => c.answer(store.import_jsonl(&c.text).map(|s| {
            emit(Event::SessionsChanged { deleted: None });
            let skipped = match s.sessions_skipped {
                0 => String::new(),
                n => format!("; {n} already here, left as they were"),
            };
            format!("Imported {} sessions with {} turns{skipped}.", s.sessions_added, s.turns_added)
        })),
        Op::WorkspaceSettings(c) => c.answer(store.workspace_settings(&c.workspace)),
        Op::SaveWorkspaceSettings(c) => c.answer(store.set_workspace_settings(&c.settings)),
        Op::RenameSession(c) => {
            let title = c.title.trim();
            if title.is_empty() {
                return Err(Problem::new(
                    ErrorKind::Invalid,
                    "a session needs a name: type one, or press Esc to keep the old one",
                ));
            }
            c.answer(
                store
                    .rename_session(&c.session_id, title)
                    .and_then(|()| store.get_session(&c.session_id))
                    .inspect(|_| emit(Event::SessionsChanged { deleted: None })),
            )
        }
        Op::ForkSession(c) => c.answer(
            store.fork_session(&c.session_id, c.at_turn).inspect(|_| emit(Event::SessionsChanged { deleted: None })),
        ),
        Op::ArchiveSession(c) => c.answer(
            store.set_archived(&c.session_id, c.archived).inspect(|()| emit(Event::SessionsChanged { deleted: None })),
        ),
        Op::SessionDetails(c) => c.answer(store.get_session(&c.session_id).and_then(|session| {
            let manifest = store.manifests(&c.session_id, 1)?.into_iter().next();
            Ok(Details { session, manifest })
        })),
        Op::DeleteSession(c) => c.answer(
            store
                .delete_session(&c.session_id)
                .inspect(|()| emit(Event::SessionsChanged { deleted: Some(c.session_id.clone()) })),
        ),
        Op::Branches(c) => c.answer(store.branch_points(&c.session_id)),
        Op::PreviewImport(c) => return c.answer(super::import::preview(store, &c.files)),
        Op::ImportFiles(c) => return c.answer(super::import::import(store, &c.files, emit)),
        // Made by the importer's module (the hub loaded it): not part of every start.
        Op::ExportChatGpt(c) => c.answer(
            store
                .chatgpt_source(c.session_id.clone().map(|s| vec![s]).as_deref())
                .and_then(|source| super::importer::export(&ExportSource::ChatGpt(source))),
        ),
        Op::ExportMarkdown(c) => c.answer(
            store
                .markdown_source(&c.session_id)
                .and_then(|source| super::importer::export(&ExportSource::Markdown(Box::new(source)))),
        ),
        op => {
            let lane = op.lane();
            return Err(Problem::new(
                ErrorKind::Internal,
                format!("a request of {lane:?} was taken for one done at once"),
            ));
        }
    };
    r.map_err(Problem::from)
}

/// What a reply request's answer goes through for the wire (each of the four pairs with [`Sent`]);
/// `None` for any other operation.
pub fn sent_reply(op: &Op) -> Option<fn(Sent) -> Reply> {
    match op {
        Op::SendMessage(c) => Some(c.replies()),
        Op::EditMessage(c) => Some(c.replies()),
        Op::Regenerate(c) => Some(c.replies()),
        Op::Continue(c) => Some(c.replies()),
        _ => None,
    }
}

/// Performs an operation that asks for a reply ([`Op::is_reply`]); progress goes to `emit`. The archive
/// is borrowed a step at a time, so it serves other requests meanwhile.
pub async fn reply(
    archive: &dyn SharedStore,
    transport: &FetchTransport,
    tools: &WorkerTools,
    emit: &dyn Fn(Event),
    op: Op,
) -> Result<Sent, Problem> {
    match op {
        Op::SendMessage(ops::SendMessage { session_id, workspace, message, offline }) => {
            let ops::Outgoing { text, model, key, host, attachments } = message;
            let attachments = attachments.into_iter().map(FilePayload::into_attachment).collect();
            let attachments = super::digest::hashed(attachments).await;
            let message = Some((text, serde_json::json!({ "client_key": key }), attachments));
            let answer = if offline { Answer::Later } else { Answer::Now };
            send(archive, transport, tools, emit, session_id, workspace, message, model, host, answer).await
        }
        Op::EditMessage(ops::EditMessage { session_id, turn_number, message }) => {
            let ops::Outgoing { text, model, key, host, attachments } = message;
            let attachments = attachments.into_iter().map(FilePayload::into_attachment).collect();
            let attachments = super::digest::hashed(attachments).await;
            let fork = branch_before(&mut *archive.store()?, emit, &session_id, turn_number, "edited")?;
            // The edit says what it replaces (and the UI leaves the composer's draft alone for it).
            let edited_from = serde_json::json!({ "session_id": session_id, "turn_number": turn_number });
            let message =
                Some((text, serde_json::json!({ "client_key": key, "edited_from": edited_from }), attachments));
            send(archive, transport, tools, emit, Some(fork), String::new(), message, model, host, Answer::Now).await
        }
        Op::Regenerate(ops::Regenerate { session_id, turn_number, model, host }) => {
            let fork = branch_before(&mut *archive.store()?, emit, &session_id, turn_number, "regenerated")?;
            send(archive, transport, tools, emit, Some(fork), String::new(), None, model, host, Answer::Now).await
        }
        Op::Continue(ops::Continue { session_id, model, host }) => {
            let (to, ws) = (Some(session_id), String::new());
            send(archive, transport, tools, emit, to, ws, None, model, host, Answer::Now).await
        }
        _ => Err(Problem::new(ErrorKind::Internal, "a request done at once was taken for one that asks for a reply")),
    }
}

/// The session a reply request writes in, when it names one that exists already (an edit or a
/// regeneration writes in a new fork, a first message in a new session): sync holds back another
/// device's turns for it until the reply is saved (`sync.rs`).
pub fn writes_in(op: &Op) -> Option<&str> {
    match op {
        Op::SendMessage(ops::SendMessage { session_id, .. }) => session_id.as_deref(),
        Op::Continue(ops::Continue { session_id, .. }) => Some(session_id),
        _ => None,
    }
}

/// One tiny request ("ping", one output token): an answer means the URL, key and model work.
pub(super) async fn test_connection(mut config: ModelSettings) -> Result<String, Problem> {
    use cowork_core::agent::ResponseBody;
    use cowork_core::provider::{build_request, classify_http_error, cors_error, network_error};
    config.max_output_tokens = Some(1);
    let ping = cowork_core::context::ContextMessage {
        role: cowork_core::Role::User,
        content: "ping".into(),
        tool_calls: Vec::new(),
        tool_call_id: None,
        name: None,
        reasoning: None,
        images: Vec::new(),
    };
    let request = build_request(&config, &[ping], &[]);
    let transport = FetchTransport::default();
    match transport.send(&request).await {
        Ok(response) if (200..300).contains(&response.status) => {
            transport.abort(); // the answer itself is not needed
            Ok(format!("Connected: {} answered as {}.", config.base_url, config.model))
        }
        Ok(mut response) => {
            let mut body = Vec::new();
            while let Some(Ok(chunk)) = response.body.chunk().await {
                body.extend(chunk);
                if body.len() > 16 * 1024 {
                    break;
                }
            }
            let retry_after = response.headers.iter().find(|(k, _)| k == "retry-after").map(|(_, v)| v.as_str());
            Err(classify_http_error(response.status, retry_after, &String::from_utf8_lossy(&body)).into())
        }
        Err(cowork_core::agent::TransportError::Cors(_)) => {
            let origin = js_sys::global().unchecked_into::<web_sys::WorkerGlobalScope>().location().origin();
            Err(cors_error(&config.base_url, &origin).into())
        }
        Err(e) => Err(network_error(&format!("{e:?}")).into()),
    }
}

/// Asks the endpoint for its models (`GET {base}/models`): the list, or why there is none.
pub(super) async fn list_models(config: ModelSettings) -> Result<Vec<cowork_core::provider::ListedModel>, Problem> {
    use cowork_core::agent::ResponseBody;
    use cowork_core::provider::{classify_http_error, cors_error, models_request, network_error, parse_models};
    let request = models_request(&config);
    let transport = FetchTransport::default();
    let mut response = match transport.send(&request).await {
        Ok(response) => response,
        Err(cowork_core::agent::TransportError::Cors(_)) => {
            let origin = js_sys::global().unchecked_into::<web_sys::WorkerGlobalScope>().location().origin();
            return Err(cors_error(&request.url, &origin).into());
        }
        Err(e) => return Err(network_error(&format!("{e:?}")).into()),
    };
    let mut body = Vec::new();
    while let Some(Ok(chunk)) = response.body.chunk().await {
        body.extend(chunk);
        if body.len() > 4 * 1024 * 1024 {
            return Err(Problem::new(ErrorKind::Invalid, "the endpoint's model list is larger than 4 MB"));
        }
    }
    let body = String::from_utf8_lossy(&body);
    if !(200..300).contains(&response.status) {
        let retry_after = response.headers.iter().find(|(k, _)| k == "retry-after").map(|(_, v)| v.as_str());
        let error = classify_http_error(response.status, retry_after, &body);
        let message = format!("{} did not list its models: {}", request.url, error.message());
        return Err(Problem::new(error.kind(), message));
    }
    parse_models(&body).map_err(|e| Problem::new(ErrorKind::Invalid, e))
}

/// Appends a turn, unless a turn with the same client key was saved already (a request sent twice).
fn append_once(
    store: &mut Store,
    session_id: &str,
    turn: &NewTurn,
    attachments: &[cowork_core::NewAttachment],
    max_attachment_bytes: u64,
) -> cowork_core::Result<cowork_core::Turn> {
    if let Some(key) = turn.metadata.get("client_key").and_then(|k| k.as_str()) {
        if let Some(earlier) = store.find_recent_by_client_key(key)? {
            return Ok(earlier);
        }
    }
    store.append_turn_with_attachments(session_id, turn, attachments, max_attachment_bytes)
}

/// Whether a message is answered now, or only saved (the browser is offline; Retry answers it).
#[derive(Clone, Copy, PartialEq)]
enum Answer {
    Now,
    Later,
}

#[allow(clippy::too_many_arguments)] // one request's fields, passed straight through
async fn send(
    archive: &dyn SharedStore,
    transport: &FetchTransport,
    tools: &WorkerTools,
    emit: &dyn Fn(Event),
    session_id: Option<String>,
    workspace: String,
    // The message and its metadata (its client key, and what it edits if it does); `None`: continue
    // from the session's end without a new message.
    message: Option<Message>,
    model: ModelSettings,
    host: HostOptions,
    answer: Answer,
) -> Result<Sent, Problem> {
    let opened = open_session(&mut *archive.store()?, emit, session_id, &workspace, message, &model)?;
    let (session_id, session, message) = match opened {
        Opened::Write { session, message } => (session.id.clone(), session, message),
        Opened::Answered(reply) => return Ok(reply),
    };
    let settings = agent_settings(tools, &model, &session.workspace, &host);
    // The workspace's MCP servers' tools, from the page's MCP host (its bundle loaded only for them).
    let servers = archive.store()?.workspace_settings(&session.workspace)?.mcp_servers;
    if answer == Answer::Now && cowork_core::mcp::any_enabled(&servers) {
        tools.offer_mcp(&servers).await;
    }
    let mut on_event = |e: AgentEvent| emit(wire_event(e, &session_id));
    // Background (`wait: false`) tasks that have ended since: their results join the conversation first.
    if let (Some(base), Answer::Now) = (&settings.orchestrator_url, answer) {
        let _ = cowork_core::agent::delegate::deliver_pending_tasks(
            archive,
            transport,
            base,
            &session_id,
            false,
            &mut on_event,
        )
        .await;
    }
    let ran = match message {
        Some((text, metadata, attachments)) if answer == Answer::Later => {
            let turn = NewTurn { metadata, ..NewTurn::user(text) };
            let message = UserMessage { turn: &turn, attachments: &attachments };
            save_user_message(&mut *archive.store()?, &settings, &session_id, message, &mut on_event)?;
            return Ok(Sent { session_id, outcome: SendOutcome::Offline });
        }
        Some((text, metadata, attachments)) => {
            let turn = NewTurn { metadata, ..NewTurn::user(text) };
            let message = UserMessage { turn: &turn, attachments: &attachments };
            send_user_message(archive, transport, tools, &settings, &session_id, message, &mut on_event).await
        }
        None => continue_session(archive, transport, tools, &settings, &session_id, &mut on_event).await,
    };
    let outcome = match ran {
        Ok(Outcome::Done { .. }) => SendOutcome::Done,
        Ok(Outcome::Interrupted { message, .. }) => SendOutcome::Interrupted { message },
        Ok(Outcome::IterationLimit) => SendOutcome::IterationLimit { calls: MAX_ITERATIONS },
        Err(e) => return Err(Problem::from(e)),
    };
    Ok(Sent { session_id, outcome })
}

/// A message and what it goes with.
type Message = (String, serde_json::Value, Vec<cowork_core::NewAttachment>);

/// Where a reply request stands once its session is open.
enum Opened {
    /// The reply is written in `session` (made now for a first message), after `message` if there is
    /// one still to save.
    Write { session: cowork_core::Session, message: Option<Message> },
    /// The closed owner had saved the message and its reply was finished, or other messages followed.
    Answered(Sent),
}

/// Opens the session a reply request writes in. A message the closed owner already saved is not saved
/// again: its reply is continued, or was answered.
fn open_session(
    store: &mut Store,
    emit: &dyn Fn(Event),
    session_id: Option<String>,
    workspace: &str,
    message: Option<Message>,
    model: &ModelSettings,
) -> Result<Opened, Problem> {
    // Sent before, to an owner that closed before answering: the message is saved, and the reply the
    // old owner was streaming is continued here (in place, from its saved words), never run twice.
    let (mut session_id, mut message) = (session_id, message);
    let earlier = match message.as_ref().and_then(|(_, m, _)| m["client_key"].as_str()) {
        Some(key) => store.find_recent_by_client_key(key)?,
        None => None,
    };
    if let Some(earlier) = earlier {
        emit(Event::turn_appended(earlier.clone()));
        match after_closed_owner(store, &earlier)? {
            Some(outcome) => return Ok(Opened::Answered(Sent { session_id: earlier.session_id, outcome })),
            None => (session_id, message) = (Some(earlier.session_id), None),
        }
    }
    let session_id = match session_id {
        Some(s) => s,
        None => {
            let new =
                NewSession { workspace: workspace.to_owned(), model: model.model.clone(), ..NewSession::default() };
            let session = store.create_session(&new)?;
            emit(Event::SessionCreated { session: session.clone() });
            session.id
        }
    };
    let session = store.get_session(&session_id)?;
    if session.model != model.model {
        store.set_model(&session_id, &model.model)?;
    }
    Ok(Opened::Write { session, message })
}

/// Forks `session_id` just before turn `turn_number` (an edit or a regeneration: nothing is rewritten),
/// titles the fork after the original, and announces it; returns the fork's id.
fn branch_before(
    store: &mut Store,
    emit: &dyn Fn(Event),
    session_id: &str,
    turn_number: i64,
    how: &str,
) -> Result<String, Problem> {
    let original = store.get_session(session_id)?;
    let fork = store.version_session(session_id, turn_number - 1)?;
    let title = if original.title.is_empty() { String::new() } else { format!("{} ({how})", original.title) };
    if !title.is_empty() {
        store.rename_session(&fork.id, &title)?;
    }
    let fork = store.get_session(&fork.id)?;
    emit(Event::SessionCreated { session: fork.clone() });
    Ok(fork.id)
}

/// A message the closed owner saved: `None` when its reply is to be continued (not started, cut short
/// or mid-tool-loop), else how the request ended (the reply was finished, or other messages followed).
fn after_closed_owner(store: &Store, earlier: &cowork_core::Turn) -> Result<Option<SendOutcome>, Problem> {
    let count = store.turn_count(&earlier.session_id)?;
    let tail = store.get_turns(
        &earlier.session_id,
        (earlier.turn_number - 1) as usize,
        (count - earlier.turn_number + 1).max(0) as usize,
    )?;
    if tail.iter().skip(1).any(|t| t.role == cowork_core::Role::User) {
        return Ok(Some(SendOutcome::ClosedMidReply));
    }
    let finished = tail.last().is_some_and(|t| {
        t.role == cowork_core::Role::Assistant
            && t.status == cowork_core::TurnStatus::Complete
            && t.tool_calls.is_empty()
    });
    Ok(finished.then_some(SendOutcome::Done))
}

/// The agent loop's settings for a request: the user's model settings and what the page adds (its
/// tools are offered through `tools` for this request).
pub(super) fn agent_settings(
    tools: &WorkerTools,
    model: &ModelSettings,
    workspace: &str,
    host: &HostOptions,
) -> AgentSettings {
    tools.offer(&host.tools);
    AgentSettings {
        provider: model.clone(),
        context: ContextSettings {
            context_window: model.context_window,
            output_reserve: model.output_reserve,
            ..ContextSettings::default()
        },
        prompt: PromptOptions {
            workspace: workspace.to_owned(),
            delegation: !model.orchestrator_url.is_empty(),
            extra_instructions: host.instructions.clone(),
        },
        rules: host
            .tools
            .iter()
            .filter_map(|t| Some((t.name.clone(), t.file_action?)))
            .fold(ExtractionRules::default(), |rules, (name, action)| rules.with_file_tool(name, action)),
        max_iterations: MAX_ITERATIONS,
        orchestrator_url: Some(model.orchestrator_url.clone()).filter(|u| !u.is_empty()),
    }
}

/// The loop's events in their wire form.
fn wire_event(e: AgentEvent, session_id: &str) -> Event {
    let session_id = session_id.to_owned();
    match e {
        AgentEvent::TurnAppended { turn } => Event::turn_appended(turn),
        AgentEvent::StreamDelta { turn_number, text } => Event::Delta { session_id, turn_number, text },
        AgentEvent::ReasoningDelta { turn_number, text } => Event::ReasoningDelta { session_id, turn_number, text },
        AgentEvent::ToolStarted { turn_number, call } => {
            Event::ToolStarted { session_id, turn_number, name: call.name, arguments: call.arguments }
        }
        AgentEvent::ToolFinished { turn_number, tool_name, success, duration_ms } => {
            Event::ToolFinished { session_id, turn_number, name: tool_name, success, duration_ms }
        }
        AgentEvent::Retrying { attempt, wait_ms, kind, reason } => Event::Retrying { attempt, wait_ms, kind, reason },
        AgentEvent::TaskProgress { task_id, event_type, status, goal, checklist } => {
            Event::TaskProgress { session_id, task_id, event_type, status, goal, checklist }
        }
        AgentEvent::Error { kind, message } => Event::Error(Problem::new(kind, message)),
    }
}
