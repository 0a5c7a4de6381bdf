//! The storage worker: the only place that opens the database. It installs the OPFS VFS, opens the
//! archive (falling back to memory, and saying so, when OPFS is unavailable), announces `Ready`, then
//! serves requests one at a time, in order. The agent loop runs here too, next to the archive, so each
//! of its writes is a local commit; `Stop` and `Approve` are answered out of turn.
//!
//! **Several tabs.** OPFS lets one worker at a time hold the archive's files, so the workers of an
//! origin's tabs elect an owner with a Web Lock. The owner serves its own tab and every request the
//! other workers forward to it over a `BroadcastChannel`; they relay its answers and events to their
//! tab, so to the UI every worker looks the same. When the owner's tab closes, its lock is released,
//! the next worker in the lock's queue opens the archive, announces itself, and the others send again
//! what was still unanswered (a message carries a client key, so it is never saved twice). Every
//! change is broadcast, so all tabs show new turns.

use crate::fetch::FetchTransport;
use crate::protocol::{
    Backend, Event, HostOptions, HostToolSpec, ModelSettings, Op, PeerMessage, ReadyInfo, Reply, Request, WorkerMessage,
};
use cowork_core::agent::{
    continue_session, send_turn, AgentEvent, AgentSettings, Outcome, ToolHost, ToolOutcome, Transport,
};
use cowork_core::context::ContextSettings;
use cowork_core::prompt::{ApprovalPolicy, PromptOptions};
use cowork_core::state::ExtractionRules;
use cowork_core::store::opfs::Opfs;
use cowork_core::store::{NewSession, SessionFilter, Store};
use cowork_core::{NewTurn, ToolCall};
use futures_channel::mpsc::UnboundedSender;
use futures_util::StreamExt;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::{BroadcastChannel, DedicatedWorkerGlobalScope, MessageEvent};

/// The archive's file name in the OPFS pool.
pub const DB_FILE: &str = "cowork.db";
/// Model calls per user message, at most.
const MAX_ITERATIONS: u32 = 8;
/// The Web Lock held by the owner, and the channel the workers talk on (versioned with the protocol).
const LOCK_NAME: &str = "cowork-archive-v1";
const CHANNEL_NAME: &str = "cowork-archive-v1";
/// How long a new owner keeps trying to open the OPFS files a closing tab may still hold.
const OPEN_ATTEMPTS: u32 = 12;

fn post(msg: &WorkerMessage) {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let _ = scope.post_message(&JsValue::from_str(&msg.to_json()));
}

#[wasm_bindgen]
extern "C" {
    /// `navigator.locks` (declared here: web-sys has it only behind its unstable-API flag).
    type LockManager;
    #[wasm_bindgen(method, js_name = request)]
    fn request(this: &LockManager, name: &str, callback: &JsValue) -> js_sys::Promise;
}

fn lock_manager() -> Option<LockManager> {
    let navigator = js_sys::Reflect::get(&js_sys::global(), &"navigator".into()).ok()?;
    let locks = js_sys::Reflect::get(&navigator, &"locks".into()).ok()?;
    (!locks.is_undefined() && !locks.is_null()).then(|| locks.unchecked_into())
}

/// Where a request came from: this worker's tab, or another tab's worker (by its tab id).
#[derive(Debug, Clone, PartialEq)]
enum Origin {
    Local,
    Remote(String),
}

#[derive(Debug, Clone, PartialEq)]
enum Role {
    /// Waiting for the lock or for an owner's announcement.
    Unknown,
    /// Another tab's worker owns the archive.
    Follower {
        owner: String,
    },
    Owner,
}

/// The open archive; taken (closed) when the page goes away.
type Archive = Rc<RefCell<Option<(Store, Option<Opfs>)>>>;

/// This worker's state: its role, and the requests of its tab not answered yet.
struct Hub {
    tab: String,
    channel: Option<BroadcastChannel>,
    role: RefCell<Role>,
    ready: RefCell<Option<ReadyInfo>>,
    /// This tab's requests forwarded to the owner and not answered yet, sent again on a takeover.
    inflight: RefCell<BTreeMap<u64, Request>>,
    /// The owner's queue of requests to serve, in order.
    queue: RefCell<Option<UnboundedSender<(Origin, Request)>>>,
    archive: Archive,
    transport: FetchTransport,
    tools: WorkerTools,
    /// The page went away while a request was being served: release when it ends.
    releasing: std::cell::Cell<bool>,
}

/// Runs the worker: take part in the owner election, say `Ready`, serve or forward requests.
pub async fn run() {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let tab = crate::protocol::random_key();
    // `?storage=memory` (the embedding API's `openArchive({ storage: "memory" })`): a private archive
    // that lives as long as this worker, shared with nobody.
    let memory = scope.location().search().contains("storage=memory");
    let locks = if memory { None } else { lock_manager() };
    // Without Web Locks (e.g. an insecure context, where OPFS is refused as well) each tab keeps its own
    // archive, and there is nobody to talk to.
    let channel = locks.as_ref().and_then(|_| BroadcastChannel::new(CHANNEL_NAME).ok());
    let hub = Rc::new(Hub {
        tab,
        channel,
        role: RefCell::new(Role::Unknown),
        ready: RefCell::new(None),
        inflight: RefCell::new(BTreeMap::new()),
        queue: RefCell::new(None),
        archive: Rc::new(RefCell::new(None)),
        transport: FetchTransport::default(),
        tools: WorkerTools::default(),
        releasing: std::cell::Cell::new(false),
    });
    let from_ui = {
        let hub = hub.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
            let Some(text) = ev.data().as_string() else { return };
            match serde_json::from_str::<Request>(&text) {
                Ok(req) => hub.from_ui(req),
                Err(e) => post(&WorkerMessage::Failed { message: format!("unreadable request: {e}") }),
            }
        })
    };
    scope.set_onmessage(Some(from_ui.as_ref().unchecked_ref()));
    from_ui.forget(); // lives as long as the worker
    let Some(locks) = locks else {
        hub.become_owner(if memory { Open::Memory } else { Open::Private }).await;
        return;
    };
    if let Some(channel) = &hub.channel {
        let from_peer = {
            let hub = hub.clone();
            Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
                if let Some(msg) = ev.data().as_string().and_then(|t| serde_json::from_str::<PeerMessage>(&t).ok()) {
                    hub.from_peer(msg);
                }
            })
        };
        channel.set_onmessage(Some(from_peer.as_ref().unchecked_ref()));
        from_peer.forget();
    }
    // Queue for the lock; while another tab holds it, learn who that is and work through it.
    let granted = {
        let hub = hub.clone();
        Closure::once_into_js(move |_lock: JsValue| -> js_sys::Promise {
            wasm_bindgen_futures::spawn_local(async move { hub.become_owner(Open::Shared).await });
            // Never settles: the lock is held for as long as this worker lives.
            js_sys::Promise::new(&mut |_, _| {})
        })
    };
    let _ = locks.request(LOCK_NAME, &granted);
    hub.peer(&PeerMessage::Hello { tab: hub.tab.clone() });
}

impl Hub {
    fn peer(&self, msg: &PeerMessage) {
        if let Some(channel) = &self.channel {
            let _ = channel.post_message(&JsValue::from_str(&msg.to_json()));
        }
    }

    fn announce_ready(&self, info: &ReadyInfo) {
        if self.ready.borrow().is_none() {
            *self.ready.borrow_mut() = Some(info.clone());
            post(&WorkerMessage::Ready(info.clone()));
        }
    }

    /// A request from this worker's tab.
    fn from_ui(&self, req: Request) {
        // Cancelling a delegated task needs no archive: whichever worker the tab has sends it.
        if let Op::CancelTask { task_id, orchestrator_url } = &req.op {
            let (id, request) = (req.id, cowork_core::orchestrator::cancel_task_request(orchestrator_url, task_id));
            wasm_bindgen_futures::spawn_local(async move {
                let result = match FetchTransport::default().send(&request).await {
                    Ok(r) if (200..300).contains(&r.status) => Ok(Reply::Done),
                    Ok(r) => Err(format!("the orchestrator did not cancel the task (HTTP {})", r.status)),
                    Err(e) => Err(format!("the orchestrator could not be reached to cancel the task: {e:?}")),
                };
                post(&WorkerMessage::Response { id, result });
            });
            return;
        }
        if let Op::TestConnection { model } = &req.op {
            let (id, config) = (req.id, model.clone());
            wasm_bindgen_futures::spawn_local(async move {
                post(&WorkerMessage::Response { id, result: test_connection(config).await });
            });
            return;
        }
        let role = self.role.borrow().clone();
        match role {
            Role::Owner => self.serve(Origin::Local, req),
            Role::Follower { .. } if req.op == Op::Release => {}
            Role::Follower { .. } => {
                self.inflight.borrow_mut().insert(req.id, req.clone());
                self.peer(&PeerMessage::Forward { tab: self.tab.clone(), request: req });
            }
            // Sent on once the owner is known.
            Role::Unknown => {
                self.inflight.borrow_mut().insert(req.id, req);
            }
        }
    }

    /// A message from another tab's worker.
    fn from_peer(&self, msg: PeerMessage) {
        let role = self.role.borrow().clone();
        match msg {
            PeerMessage::Hello { .. } => {
                if let (Role::Owner, Some(ready)) = (&role, self.ready.borrow().clone()) {
                    self.peer(&PeerMessage::Owner { tab: self.tab.clone(), ready });
                }
            }
            PeerMessage::Owner { tab, ready } => {
                if role == Role::Owner || role == (Role::Follower { owner: tab.clone() }) {
                    return;
                }
                *self.role.borrow_mut() = Role::Follower { owner: tab };
                self.announce_ready(&ready);
                // A new owner: what the old one left unanswered goes to it.
                let unanswered: Vec<Request> = self.inflight.borrow().values().cloned().collect();
                for request in unanswered {
                    self.peer(&PeerMessage::Forward { tab: self.tab.clone(), request });
                }
            }
            PeerMessage::Forward { tab, request } => {
                if role == Role::Owner {
                    self.serve(Origin::Remote(tab), request);
                }
            }
            PeerMessage::Reply { tab, message } => {
                if tab == self.tab && role != Role::Owner {
                    if let WorkerMessage::Response { id, .. } = &message {
                        self.inflight.borrow_mut().remove(id);
                    }
                    post(&message);
                }
            }
            PeerMessage::Changed { origin, event } => {
                if origin != self.tab {
                    post(&WorkerMessage::Event { id: 0, event });
                }
            }
        }
    }

    /// Owner: answers out-of-turn requests at once and queues the others.
    fn serve(&self, origin: Origin, req: Request) {
        match req.op {
            Op::Stop => {
                self.transport.abort();
                self.tools.cancel_waits();
                self.respond(&origin, WorkerMessage::Response { id: req.id, result: Ok(Reply::Done) });
            }
            Op::Approve { call_id, approved } => {
                self.tools.answer(&call_id, approved);
                self.respond(&origin, WorkerMessage::Response { id: req.id, result: Ok(Reply::Done) });
            }
            Op::ToolResult { call_id, content, success } => {
                self.tools.tool_result(&call_id, ToolOutcome { content, success });
                self.respond(&origin, WorkerMessage::Response { id: req.id, result: Ok(Reply::Done) });
            }
            Op::Release if origin == Origin::Local => self.release(),
            Op::Release => {}
            _ => {
                if let Some(queue) = self.queue.borrow().as_ref() {
                    let _ = queue.unbounded_send((origin, req));
                }
            }
        }
    }

    /// Sends `msg` to the tab a request came from.
    fn respond(&self, origin: &Origin, msg: WorkerMessage) {
        match origin {
            Origin::Local => post(&msg),
            Origin::Remote(tab) => self.peer(&PeerMessage::Reply { tab: tab.clone(), message: msg }),
        }
    }

    /// Tells every other tab about a change made by a request of `origin`.
    fn changed(&self, origin: &Origin, event: &Event) {
        let origin_tab = match origin {
            Origin::Local => self.tab.clone(),
            Origin::Remote(tab) => {
                post(&WorkerMessage::Event { id: 0, event: event.clone() });
                tab.clone()
            }
        };
        self.peer(&PeerMessage::Changed { origin: origin_tab, event: event.clone() });
    }

    /// The page is going away: close the archive and release its files, then end this worker (which
    /// releases the lock). Runs between two tasks, so no transaction is ever cut in half.
    ///
    /// While a reply streams, the archive is in use: the model call is aborted instead, so the reply's
    /// text so far is saved as an interrupted turn, and the release follows when the request ends.
    fn release(&self) {
        let Ok(mut archive) = self.archive.try_borrow_mut() else {
            self.releasing.set(true);
            self.transport.abort();
            return;
        };
        if let Some((store, opfs)) = archive.take() {
            drop(store);
            if let Some(opfs) = opfs {
                let _ = opfs.pause();
            }
        }
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        scope.close();
    }

    /// Opens the archive and serves every request, this tab's and the forwarded ones, in order.
    async fn become_owner(self: Rc<Self>, open: Open) {
        let opened = match open {
            Open::Shared => open_archive(OPEN_ATTEMPTS).await,
            Open::Private => open_archive(1).await,
            Open::Memory => Store::open_in_memory()
                .map(|store| (store, None, Backend::Memory { reason: "an in-memory archive was asked for".into() }))
                .map_err(|e| e.to_string()),
        };
        let (store, opfs, backend) = match opened {
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
        *self.archive.borrow_mut() = Some((store, opfs));
        let (queue, mut requests) = futures_channel::mpsc::unbounded::<(Origin, Request)>();
        *self.queue.borrow_mut() = Some(queue);
        *self.role.borrow_mut() = Role::Owner;
        self.announce_ready(&ready);
        self.peer(&PeerMessage::Owner { tab: self.tab.clone(), ready });
        // What this tab had forwarded to the previous owner (or held back) is served here now.
        let unanswered: Vec<Request> = std::mem::take(&mut *self.inflight.borrow_mut()).into_values().collect();
        for req in unanswered {
            self.serve(Origin::Local, req);
        }
        while let Some((origin, req)) = requests.next().await {
            let id = req.id;
            let sink: Rc<dyn Fn(Event)> = {
                let hub = self.clone();
                let origin = origin.clone();
                Rc::new(move |event: Event| {
                    if matches!(
                        event,
                        Event::TurnAppended { .. } | Event::SessionCreated { .. } | Event::SessionsChanged { .. }
                    ) {
                        hub.changed(&origin, &event);
                    }
                    hub.respond(&origin, WorkerMessage::Event { id, event });
                })
            };
            *self.tools.sink.borrow_mut() = Some(sink.clone());
            // The archive stays borrowed while a reply streams; `release` then ends the worker without
            // closing it (no transaction is open at an await point).
            #[allow(clippy::await_holding_refcell_ref)]
            let result = match self.archive.try_borrow_mut() {
                Ok(mut archive) => match archive.as_mut() {
                    Some((store, _)) => handle(store, &self.transport, &self.tools, &*sink, req.op).await,
                    None => Err("the archive is closed: this page is going away".to_owned()),
                },
                Err(_) => Err("the archive is busy".to_owned()),
            };
            // Cut short because this page is closing: say so (the user did not press Stop).
            let result = match result {
                Ok(Reply::Sent { session_id, outcome })
                    if self.releasing.get() && outcome.starts_with("interrupted") =>
                {
                    Ok(Reply::Sent { session_id, outcome: CLOSED_MID_REPLY.to_owned() })
                }
                other => other,
            };
            self.respond(&origin, WorkerMessage::Response { id, result });
            if self.releasing.get() {
                self.release();
            }
        }
    }
}

/// How a worker opens its archive.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Open {
    /// The OPFS archive, elected owner among the origin's tabs (retrying while a closing tab lets go).
    Shared,
    /// The OPFS archive with nobody to share it (no Web Locks), else memory.
    Private,
    /// Memory only, as asked.
    Memory,
}

/// Opens the OPFS archive, trying again for a while when another tab (or the page this one replaces)
/// still holds its files; without OPFS, an in-memory archive that says so.
async fn open_archive(attempts: u32) -> Result<(Store, Option<Opfs>, Backend), String> {
    let mut last = String::new();
    for attempt in 0..attempts {
        if attempt > 0 {
            sleep_ms(150 * attempt).await;
        }
        match cowork_core::store::opfs::install().await {
            Ok(opfs) => {
                return match Store::open(DB_FILE) {
                    Ok(store) => Ok((store, Some(opfs), Backend::Opfs { file: DB_FILE.into() })),
                    // A newer schema or a damaged file: never silently fall back to memory over real data.
                    Err(e) => Err(e.to_string()),
                };
            }
            Err(e) => {
                last = e.to_string();
                if last.contains("cannot persist data") {
                    break; // OPFS is not available here at all: waiting will not help
                }
            }
        }
    }
    let store = Store::open_in_memory().map_err(|e| e.to_string())?;
    Ok((store, None, Backend::Memory { reason: last }))
}

async fn sleep_ms(ms: u32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let _ = scope.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms as i32);
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// Performs one operation on the archive; progress goes to `emit`.
pub async fn handle(
    store: &mut Store,
    transport: &FetchTransport,
    tools: &WorkerTools,
    emit: &dyn Fn(Event),
    op: Op,
) -> Result<Reply, String> {
    let r = match op {
        Op::Stats => store.stats().map(|stats| Reply::Stats { stats }),
        Op::ListSessions { workspace, include_archived } => store
            .list_sessions(&SessionFilter { workspace, include_archived, ..Default::default() })
            .map(|sessions| Reply::Sessions { sessions }),
        Op::CreateSession { workspace, title } => {
            let new = NewSession { title: title.trim().to_owned(), ..NewSession::new(workspace) };
            store.create_session(&new).map(|session| {
                emit(Event::SessionCreated { session: session.clone() });
                Reply::Session { session }
            })
        }
        Op::Resume { session_id, last_turns } => store.resume(&session_id, last_turns).map(|r| Reply::Resumed {
            session: r.session,
            turns: r.turns,
            pending_tasks: r.pending_tasks,
        }),
        Op::Recall { session_id, arguments } => store
            .get_session(&session_id)
            .map(|_| Reply::Text { text: cowork_core::recall::run_recall(&*store, &session_id, &arguments) }),
        Op::AssembleContext { session_id, model, host } => store.get_session(&session_id).and_then(|session| {
            let settings = agent_settings(tools, &model, &session.workspace, &host);
            let context = cowork_core::agent::next_context(store, &settings, &session_id)?;
            Ok(Reply::Context {
                messages: context.messages,
                manifest: context.manifest,
                archived_turns: context.archived_turns,
                tools: cowork_core::agent::tool_definitions(tools, &settings),
            })
        }),
        Op::AppendTurn { session_id, turn } => append_once(store, &session_id, &turn).and_then(|turn| {
            // The state register follows turns written directly too (the embedding API's appendTurn).
            let model = store.get_session(&session_id)?.model;
            cowork_core::agent::record_in_state(store, &ExtractionRules::default(), &model, &session_id, &turn)?;
            emit(Event::turn_appended(turn.clone()));
            Ok(Reply::Turn { turn })
        }),
        Op::GetTurns { session_id, offset, limit } => {
            store.get_turns(&session_id, offset, limit).map(|turns| Reply::Turns { turns })
        }
        Op::Search { query } => store.search(&query).map(|hits| Reply::Hits { hits }),
        Op::IntegrityCheck => store.integrity_check().map(|text| Reply::Text { text }),
        Op::ExportAll => store.export_jsonl(None).map(|text| Reply::Text { text }),
        Op::ExportSession { session_id } => store.export_jsonl(Some(&[session_id])).map(|text| Reply::Text { text }),
        Op::Import { text } => store.import_jsonl(&text).map(|s| {
            emit(Event::SessionsChanged { deleted: None });
            let skipped = match s.sessions_skipped {
                0 => String::new(),
                n => format!("; {n} already here, left as they were"),
            };
            Reply::Text {
                text: format!("Imported {} sessions with {} turns{skipped}.", s.sessions_added, s.turns_added),
            }
        }),
        Op::RenameSession { session_id, title } => {
            let title = title.trim();
            if title.is_empty() {
                return Err("a session needs a name: type one, or press Esc to keep the old one".into());
            }
            store.rename_session(&session_id, title).and_then(|()| store.get_session(&session_id)).map(|session| {
                emit(Event::SessionsChanged { deleted: None });
                Reply::Session { session }
            })
        }
        Op::ForkSession { session_id, at_turn } => store.fork_session(&session_id, at_turn).map(|session| {
            emit(Event::SessionsChanged { deleted: None });
            Reply::Session { session }
        }),
        Op::ArchiveSession { session_id, archived } => store.set_archived(&session_id, archived).map(|()| {
            emit(Event::SessionsChanged { deleted: None });
            Reply::Done
        }),
        Op::SessionDetails { session_id } => store.get_session(&session_id).and_then(|session| {
            let manifest = store.manifests(&session_id, 1)?.into_iter().next();
            Ok(Reply::Details { session, manifest })
        }),
        Op::DeleteSession { session_id } => store.delete_session(&session_id).map(|()| {
            emit(Event::SessionsChanged { deleted: Some(session_id) });
            Reply::Done
        }),
        Op::Stop
        | Op::Approve { .. }
        | Op::ToolResult { .. }
        | Op::Release
        | Op::CancelTask { .. }
        | Op::TestConnection { .. } => Ok(Reply::Done),
        Op::SendMessage { session_id, workspace, text, model, key, host } => {
            let message = Some((text, key));
            return send(store, transport, tools, emit, session_id, workspace, message, model, host).await;
        }
        Op::Continue { session_id, model, host } => {
            return send(store, transport, tools, emit, Some(session_id), String::new(), None, model, host).await;
        }
    };
    r.map_err(|e| e.to_string())
}

/// One tiny request ("ping", one output token): an answer means the URL, key and model work.
async fn test_connection(mut config: ModelSettings) -> Result<Reply, String> {
    use cowork_core::agent::ResponseBody;
    use cowork_core::provider::{build_request, classify_http_error, cors_error, network_error};
    config.max_output_tokens = Some(1);
    let ping = cowork_core::context::ContextMessage {
        role: cowork_core::Role::User,
        content: "ping".into(),
        tool_calls: Vec::new(),
        tool_call_id: None,
        name: None,
    };
    let request = build_request(&config, &[ping], &[]);
    let transport = FetchTransport::default();
    match transport.send(&request).await {
        Ok(response) if (200..300).contains(&response.status) => {
            transport.abort(); // the answer itself is not needed
            Ok(Reply::Text { text: format!("Connected: {} answered as {}.", config.base_url, config.model) })
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
            Err(classify_http_error(response.status, retry_after, &String::from_utf8_lossy(&body)).message().to_owned())
        }
        Err(cowork_core::agent::TransportError::Cors(_)) => {
            let origin = js_sys::global().unchecked_into::<web_sys::WorkerGlobalScope>().location().origin();
            Err(cors_error(&config.base_url, &origin).message().to_owned())
        }
        Err(e) => Err(network_error(&format!("{e:?}")).message().to_owned()),
    }
}

/// What a reply cut short by its owner tab closing ends with.
const CLOSED_MID_REPLY: &str = "interrupted: the tab that was running this reply closed; Retry continues it";

/// Appends a turn, unless a turn with the same client key was saved already (a request sent twice).
fn append_once(store: &mut Store, session_id: &str, turn: &NewTurn) -> cowork_core::Result<cowork_core::Turn> {
    if let Some(key) = turn.metadata.get("client_key").and_then(|k| k.as_str()) {
        if let Some(earlier) = store.find_recent_by_client_key(key)? {
            return Ok(earlier);
        }
    }
    store.append_turn(session_id, turn)
}

#[allow(clippy::too_many_arguments)] // one request's fields, passed straight through
async fn send(
    store: &mut Store,
    transport: &FetchTransport,
    tools: &WorkerTools,
    emit: &dyn Fn(Event),
    session_id: Option<String>,
    workspace: String,
    // The message and its client key; `None`: continue from the session's end without a new message.
    message: Option<(String, String)>,
    model: ModelSettings,
    host: HostOptions,
) -> Result<Reply, String> {
    // Sent before, to an owner that closed before answering: the message is saved; say so, and let the
    // user continue the reply rather than run it twice.
    if let Some((_, key)) = &message {
        if let Some(earlier) = store.find_recent_by_client_key(key).map_err(|e| e.to_string())? {
            emit(Event::turn_appended(earlier.clone()));
            let outcome = CLOSED_MID_REPLY.to_owned();
            return Ok(Reply::Sent { session_id: earlier.session_id, outcome });
        }
    }
    let session_id = match session_id {
        Some(s) => s,
        None => {
            let new = NewSession { workspace: workspace.clone(), model: model.model.clone(), ..NewSession::default() };
            let session = store.create_session(&new).map_err(|e| e.to_string())?;
            emit(Event::SessionCreated { session: session.clone() });
            session.id
        }
    };
    let session = store.get_session(&session_id).map_err(|e| e.to_string())?;
    if session.model != model.model {
        store.set_model(&session_id, &model.model).map_err(|e| e.to_string())?;
    }
    let settings = agent_settings(tools, &model, &session.workspace, &host);
    let mut on_event = |e: AgentEvent| emit(wire_event(e, &session_id));
    // Background (`wait: false`) tasks that have ended since: their results join the conversation first.
    if let Some(base) = &settings.orchestrator_url {
        let _ = cowork_core::delegate::deliver_pending_tasks(store, transport, base, &session_id, false, &mut on_event)
            .await;
    }
    let outcome = match message {
        Some((text, key)) => {
            let turn = NewTurn { metadata: serde_json::json!({ "client_key": key }), ..NewTurn::user(text) };
            send_turn(store, transport, tools, &settings, &session_id, &turn, &mut on_event).await
        }
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

/// The agent loop's settings for a request: the user's model settings and what the page adds (its
/// tools are offered through `tools` for this request).
fn agent_settings(tools: &WorkerTools, model: &ModelSettings, workspace: &str, host: &HostOptions) -> AgentSettings {
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
        AgentEvent::ToolStarted { turn_number, call } => {
            Event::ToolStarted { session_id, turn_number, name: call.name, arguments: call.arguments }
        }
        AgentEvent::ToolFinished { turn_number, tool_name, success, duration_ms } => {
            Event::ToolFinished { session_id, turn_number, name: tool_name, success, duration_ms }
        }
        AgentEvent::Retrying { attempt, wait_ms, reason } => Event::Retrying { attempt, wait_ms, reason },
        AgentEvent::TaskProgress { task_id, event_type, status, goal, checklist } => {
            Event::TaskProgress { session_id, task_id, event_type, status, goal, checklist }
        }
        AgentEvent::Error { message } => Event::Error { message },
    }
}

/// The worker's tool host: the page's tools (offered per request, each call run by the page that
/// sent the request, see [`Event::ToolRequested`]); approvals are asked of the user in that page.
#[derive(Clone, Default)]
pub struct WorkerTools {
    /// Where the events of the request being served go (approval and tool requests belong to it).
    sink: Rc<RefCell<Option<Rc<dyn Fn(Event)>>>>,
    waiting: Rc<RefCell<HashMap<String, futures_channel::oneshot::Sender<bool>>>>,
    /// The page's tools offered with the request being served.
    host: Rc<RefCell<Vec<HostToolSpec>>>,
    running: Rc<RefCell<HashMap<String, futures_channel::oneshot::Sender<ToolOutcome>>>>,
}

impl WorkerTools {
    /// Delivers the user's answer for `call_id`.
    pub fn answer(&self, call_id: &str, approved: bool) {
        if let Some(tx) = self.waiting.borrow_mut().remove(call_id) {
            let _ = tx.send(approved);
        }
    }

    /// Delivers what the page's handler returned for `call_id`.
    pub fn tool_result(&self, call_id: &str, outcome: ToolOutcome) {
        if let Some(tx) = self.running.borrow_mut().remove(call_id) {
            let _ = tx.send(outcome);
        }
    }

    /// Stop: whatever waits for an approval or a tool's answer ends now (a "no", a failed call).
    fn cancel_waits(&self) {
        self.waiting.borrow_mut().clear();
        self.running.borrow_mut().clear();
    }

    /// The page's tools for the request about to be served (names of built-in tools are not taken).
    fn offer(&self, tools: &[HostToolSpec]) {
        let builtin = |n: &str| cowork_core::prompt::approval_policy(n).is_some();
        *self.host.borrow_mut() = tools.iter().filter(|t| !builtin(&t.name)).cloned().collect();
    }

    fn emit(&self, event: Event) {
        let sink = self.sink.borrow().clone();
        if let Some(sink) = sink {
            sink(event);
        }
    }
}

impl ToolHost for WorkerTools {
    fn definitions(&self) -> Vec<serde_json::Value> {
        self.host.borrow().iter().map(HostToolSpec::definition).collect()
    }

    fn approval(&self, name: &str) -> ApprovalPolicy {
        let host = self.host.borrow();
        host.iter().find(|t| t.name == name).map_or(ApprovalPolicy::AskEveryTime, |t| t.approval)
    }

    async fn approve(&self, call: &ToolCall) -> bool {
        let (tx, rx) = futures_channel::oneshot::channel();
        self.waiting.borrow_mut().insert(call.id.clone(), tx);
        self.emit(Event::ApprovalNeeded {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        });
        // A closed tab or a lost answer counts as "no": nothing runs without a yes.
        rx.await.unwrap_or(false)
    }

    async fn call(&self, call: &ToolCall) -> ToolOutcome {
        if !self.host.borrow().iter().any(|t| t.name == call.name) {
            return ToolOutcome { content: format!("Error: there is no tool named {:?}.", call.name), success: false };
        }
        let (tx, rx) = futures_channel::oneshot::channel();
        self.running.borrow_mut().insert(call.id.clone(), tx);
        self.emit(Event::ToolRequested {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        });
        rx.await.unwrap_or_else(|_| ToolOutcome {
            content: format!(
                "Error: the tool {:?} did not answer: it was stopped, or the page that runs it went away.",
                call.name
            ),
            success: false,
        })
    }
}
