//! Who owns the archive: the Web Lock election among the origin's tabs, forwarding requests to the
//! owner and relaying its answers, the owner's queue, and releasing the archive when the page goes.

use super::archive::{open_archive, Open, Steps, CLOSED};
use super::ops::handle;
use super::tools::WorkerTools;
use crate::fetch::FetchTransport;
use crate::protocol::files_js as files;
use crate::protocol::{
    ops, Backend, Call, ErrorKind, Event, Op, PeerMessage, Problem, ReadyInfo, Request, SendOutcome, Sent,
    WorkerMessage,
};
use cowork_core::agent::{ToolOutcome, Transport};
use cowork_core::store::opfs::Opfs;
use cowork_core::store::Store;
use futures_channel::mpsc::UnboundedSender;
use futures_util::StreamExt;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::{BroadcastChannel, DedicatedWorkerGlobalScope, MessageEvent};

/// The Web Lock held by the owner, and the channel the workers talk on (versioned with the protocol).
const LOCK_NAME: &str = "cowork-archive-v1";
const CHANNEL_NAME: &str = "cowork-archive-v1";
/// How long a new owner keeps trying to open the OPFS files a closing tab may still hold.
const OPEN_ATTEMPTS: u32 = 12;

pub(super) fn post(msg: &WorkerMessage) {
    post_text(&msg.to_json());
}

/// Posts a message already in JSON (one relayed from the owner) to this worker's tab.
fn post_text(json: &str) {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let _ = scope.post_message(&JsValue::from_str(json));
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
enum Standing {
    /// Waiting for the lock or for an owner's announcement.
    Unknown,
    /// Another tab's worker owns the archive.
    Follower {
        owner: String,
    },
    Owner,
}

/// The open archive; taken (closed) when the page goes away.
pub(super) type Archive = Rc<RefCell<Option<(Store, Option<Opfs>)>>>;

/// This worker's state: its role, and the requests of its tab not answered yet.
struct Hub {
    tab: String,
    channel: Option<BroadcastChannel>,
    role: RefCell<Standing>,
    ready: RefCell<Option<ReadyInfo>>,
    /// This tab's requests forwarded to the owner and not answered yet, sent again on a takeover.
    inflight: RefCell<BTreeMap<u64, Request>>,
    /// The owner's queue of requests to serve, in order.
    queue: RefCell<Option<UnboundedSender<(Origin, Request)>>>,
    archive: Archive,
    transport: FetchTransport,
    tools: WorkerTools,
    /// The page went away while a reply was being written: release when it ends.
    releasing: std::cell::Cell<bool>,
    /// A reply is being written (its request is in `ops::reply`).
    replying: Rc<std::cell::Cell<bool>>,
    /// The session that reply writes in, when it existed before: sync holds back another device's
    /// turns for it meanwhile (`sync.rs`).
    writing: Rc<RefCell<Option<String>>>,
    /// Sync with the user's NATS space, run by the owner (`sync.rs`).
    sync: Rc<super::sync::SyncRunner>,
    /// Recall by meaning: the model's worker and the indexing, run by the owner (`semantic.rs`).
    semantic: Rc<super::semantic::SemanticRunner>,
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
    let semantic: Rc<super::semantic::SemanticRunner> = Rc::default();
    let hub = Rc::new(Hub {
        tab,
        channel,
        role: RefCell::new(Standing::Unknown),
        ready: RefCell::new(None),
        inflight: RefCell::new(BTreeMap::new()),
        queue: RefCell::new(None),
        archive: Rc::new(RefCell::new(None)),
        transport: FetchTransport::default(),
        tools: WorkerTools::with_semantic(semantic.clone()),
        releasing: std::cell::Cell::new(false),
        replying: Rc::default(),
        writing: Rc::default(),
        sync: Rc::default(),
        semantic,
    });
    let from_ui = {
        let hub = hub.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
            // A request with files comes as `{request, files}`, their buffers transferred (files.rs).
            let Some((text, buffers)) = files::read(&ev.data()) else { return };
            match Request::read(&text) {
                Ok(mut req) => match files::attach(&mut req, buffers.as_ref()) {
                    Ok(()) => hub.on_ui_request(req),
                    Err(e) => {
                        post(&WorkerMessage::Response { id: req.id, result: Err(Problem::new(ErrorKind::Invalid, e)) })
                    }
                },
                // That request alone fails: the archive and every other request are fine.
                Err(answer) => post(&answer),
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
                let Some((text, buffers)) = files::read(&ev.data()) else { return };
                let Ok(mut msg) = serde_json::from_str::<PeerMessage>(&text) else { return };
                if let PeerMessage::Forward { request, .. } = &mut msg {
                    // Only the owner serves it: the others need not copy its files.
                    if *hub.role.borrow() != Standing::Owner || files::attach(request, buffers.as_ref()).is_err() {
                        return;
                    }
                }
                hub.on_peer_message(msg);
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
            // A forwarded request's files go beside it, copied (a channel cannot transfer).
            let buffers = match msg {
                PeerMessage::Forward { request, .. } => files::buffers_of(request),
                _ => Vec::new(),
            };
            let (data, _) = files::message(msg.to_json(), &buffers);
            let _ = channel.post_message(&data);
        }
    }

    fn announce_ready(&self, info: &ReadyInfo) {
        if self.ready.borrow().is_none() {
            *self.ready.borrow_mut() = Some(info.clone());
            post(&WorkerMessage::Ready(info.clone()));
        }
    }

    /// A request from this worker's tab.
    fn on_ui_request(self: &Rc<Self>, req: Request) {
        // Cancelling a delegated task, or answering a step it holds for approval, needs no archive:
        // whichever worker the tab has sends it (the orchestrator's next event, archived by the owner,
        // records the outcome).
        let to_orchestrator = match &req.op {
            Op::CancelTask(c) => Some((
                cowork_core::orchestrator::cancel_task_request(&c.orchestrator_url, &c.task_id),
                "cancel the task",
                c.replies(),
            )),
            Op::AnswerStep(c) => Some((
                cowork_core::orchestrator::approve_task_request(
                    &c.orchestrator_url,
                    &c.task_id,
                    &c.subtask_id,
                    c.approved,
                ),
                "take the answer to the step",
                c.replies(),
            )),
            _ => None,
        };
        if let Some((request, what, done)) = to_orchestrator {
            let id = req.id;
            wasm_bindgen_futures::spawn_local(async move {
                let result = match FetchTransport::default().send(&request).await {
                    Ok(r) if (200..300).contains(&r.status) => Ok(done(())),
                    Ok(r) => Err(Problem::new(
                        ErrorKind::Invalid,
                        format!("the orchestrator did not {what} (HTTP {})", r.status),
                    )),
                    Err(e) => Err(Problem::new(
                        ErrorKind::Network,
                        format!("the orchestrator could not be reached to {what}: {e:?}"),
                    )),
                };
                post(&WorkerMessage::Response { id, result });
            });
            return;
        }
        if let Op::TestConnection(c) = &req.op {
            let (id, config, ok) = (req.id, c.model.clone(), c.replies());
            wasm_bindgen_futures::spawn_local(async move {
                post(&WorkerMessage::Response { id, result: super::ops::test_connection(config).await.map(ok) });
            });
            return;
        }
        if let Op::ListModels(c) = &req.op {
            let (id, config, ok) = (req.id, c.model.clone(), c.replies());
            wasm_bindgen_futures::spawn_local(async move {
                post(&WorkerMessage::Response { id, result: super::ops::list_models(config).await.map(ok) });
            });
            return;
        }
        if let Op::SyncStart(ops::SyncStart { settings, module_url }) = &req.op {
            *self.sync.last.borrow_mut() = settings.clone().map(|s| (s, module_url.clone()));
        }
        let role = self.role.borrow().clone();
        match role {
            Standing::Owner => self.serve(Origin::Local, req),
            Standing::Follower { .. } if req.op == Op::Release => {}
            Standing::Follower { .. } => {
                // Kept until answered (sent again on a takeover); moved, not cloned: it may hold files.
                let forward = PeerMessage::Forward { tab: self.tab.clone(), request: req };
                self.peer(&forward);
                if let PeerMessage::Forward { request, .. } = forward {
                    self.inflight.borrow_mut().insert(request.id, request);
                }
            }
            // Sent on once the owner is known.
            Standing::Unknown => {
                self.inflight.borrow_mut().insert(req.id, req);
            }
        }
    }

    /// A message from another tab's worker.
    fn on_peer_message(self: &Rc<Self>, msg: PeerMessage) {
        let role = self.role.borrow().clone();
        match msg {
            PeerMessage::Hello { .. } => {
                if let (Standing::Owner, Some(ready)) = (&role, self.ready.borrow().clone()) {
                    self.peer(&PeerMessage::Owner { tab: self.tab.clone(), ready });
                }
            }
            PeerMessage::Owner { tab, ready } => {
                if role == Standing::Owner || role == (Standing::Follower { owner: tab.clone() }) {
                    return;
                }
                *self.role.borrow_mut() = Standing::Follower { owner: tab };
                self.announce_ready(&ready);
                // A new owner: what the old one left unanswered goes to it.
                let unanswered: Vec<Request> = self.inflight.borrow().values().cloned().collect();
                for request in unanswered {
                    self.peer(&PeerMessage::Forward { tab: self.tab.clone(), request });
                }
            }
            PeerMessage::Forward { tab, request } => {
                if role == Standing::Owner {
                    self.serve(Origin::Remote(tab), request);
                }
            }
            PeerMessage::Reply { tab, response_to, message } => {
                if tab == self.tab && role != Standing::Owner {
                    if let Some(id) = response_to {
                        self.inflight.borrow_mut().remove(&id);
                    }
                    post_text(&message);
                }
            }
            PeerMessage::Changed { origin, message } => {
                if origin != self.tab {
                    post_text(&message);
                }
            }
        }
    }

    /// Owner: answers out-of-turn requests at once and queues the others.
    fn serve(self: &Rc<Self>, origin: Origin, req: Request) {
        match req.op {
            Op::Stop => {
                self.transport.abort();
                self.tools.cancel_waits();
                self.respond(&origin, WorkerMessage::Response { id: req.id, result: ops::Stop.answer(Ok(())) });
            }
            Op::Approve(c) => {
                self.tools.answer(&c.call_id, c.approved);
                self.respond(&origin, WorkerMessage::Response { id: req.id, result: c.answer(Ok(())) });
            }
            Op::ToolResult(c) => {
                let ok = c.replies();
                let outcome = match &c.result {
                    // An MCP tool's result, archived whole (its images, audio and blobs as attachments).
                    Some(result) => {
                        let parts = cowork_core::mcp::result_parts(result);
                        ToolOutcome {
                            content: parts.content,
                            success: parts.success,
                            result: Some(parts.result),
                            attachments: parts.attachments,
                        }
                    }
                    None => ToolOutcome::text(c.content, c.success),
                };
                self.tools.tool_result(&c.call_id, outcome);
                self.respond(&origin, WorkerMessage::Response { id: req.id, result: Ok(ok(())) });
            }
            Op::SyncStart(c) => {
                let ok = c.replies();
                super::sync::start(&self.sync, self.link(), c.settings, c.module_url);
                self.respond(&origin, WorkerMessage::Response { id: req.id, result: Ok(ok(self.sync.state())) });
            }
            Op::SyncStatus => {
                let result = ops::SyncStatus.answer(Ok(self.sync.state()));
                self.respond(&origin, WorkerMessage::Response { id: req.id, result });
            }
            Op::SemanticStatus => {
                let result = ops::SemanticStatus.answer(Ok(self.semantic.state(&self.archive)));
                self.respond(&origin, WorkerMessage::Response { id: req.id, result });
            }
            Op::SetSemantic(c) => {
                let configured = super::semantic::configure(&self.semantic, self.semantic_link(), &c.settings);
                let result = c.answer(
                    configured
                        .map(|()| self.semantic.state(&self.archive))
                        .map_err(|e| Problem::new(ErrorKind::Storage, e)),
                );
                self.respond(&origin, WorkerMessage::Response { id: req.id, result });
            }
            // With the model loaded, a search embeds its query first (in the model's worker) and is
            // answered when that comes back; meanwhile the archive serves everything else.
            Op::Search(c) if self.semantic.ready() => {
                let (hub, id) = (self.clone(), req.id);
                wasm_bindgen_futures::spawn_local(async move {
                    // The words part searches for the query without its stop words.
                    let (query, vector) = match hub.semantic.embed_query(&c.query.text).await {
                        Some((vector, text)) => (cowork_core::SearchQuery { text, ..c.query.clone() }, Some(vector)),
                        None => (c.query.clone(), None),
                    };
                    let result = match hub.archive.try_borrow() {
                        Ok(archive) => match archive.as_ref() {
                            Some((store, _)) => {
                                c.answer(store.search_hybrid(&query, vector.as_deref()).map_err(Problem::from))
                            }
                            None => Err(Problem::new(ErrorKind::Storage, CLOSED)),
                        },
                        Err(_) => Err(Problem::new(ErrorKind::Storage, "the archive is busy")),
                    };
                    hub.respond(&origin, WorkerMessage::Response { id, result });
                });
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

    /// What the semantic side needs: the archive, and whether a reply is being written.
    fn semantic_link(&self) -> super::semantic::Link {
        super::semantic::Link { archive: self.archive.clone(), replying: self.replying.clone() }
    }

    /// What the sync loop needs: the archive, and a way to tell every tab (this one too).
    fn link(&self) -> super::sync::Link {
        let channel = self.channel.clone();
        let tab = self.tab.clone();
        super::sync::Link {
            archive: self.archive.clone(),
            writing: self.writing.clone(),
            broadcast: Rc::new(move |event: Event| {
                post(&WorkerMessage::Event { id: 0, event: event.clone() });
                if let Some(channel) = &channel {
                    let msg = PeerMessage::changed(&tab, event);
                    let (data, _) = files::message(msg.to_json(), &[]);
                    let _ = channel.post_message(&data);
                }
            }),
        }
    }

    /// Sends `msg` to the tab a request came from.
    fn respond(&self, origin: &Origin, msg: WorkerMessage) {
        match origin {
            Origin::Local => post(&msg),
            Origin::Remote(tab) => self.peer(&PeerMessage::reply(tab, &msg)),
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
        self.peer(&PeerMessage::changed(&origin_tab, event.clone()));
    }

    /// The page is going away: close the archive and release its files, then end this worker (which
    /// releases the lock). Runs between two tasks, so no transaction is ever cut in half.
    ///
    /// While a reply is being written, the model call is aborted instead, so the reply's text so far
    /// is saved as an interrupted turn, and the release follows when the request ends.
    fn release(&self) {
        if self.replying.get() {
            self.releasing.set(true);
            self.transport.abort();
            return;
        }
        // (Never borrowed here: requests done at once finish before the next message is read, and a
        // reply's steps borrow the archive only between its awaits.)
        if let Some((store, opfs)) = self.archive.try_borrow_mut().ok().and_then(|mut a| a.take()) {
            drop(store);
            if let Some(opfs) = opfs {
                let _ = opfs.pause();
            }
        }
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        scope.close();
    }

    /// Opens the archive and serves every request, this tab's and the forwarded ones: replies one at
    /// a time, in order, in their own lane; everything else at once, in order, also while a reply is
    /// being written (its steps borrow the archive only between their awaits), so another session
    /// opens, a search answers and sync goes on meanwhile.
    async fn become_owner(self: Rc<Self>, open: Open) {
        let opened = match open {
            Open::Shared => open_archive(OPEN_ATTEMPTS).await,
            Open::Private => open_archive(1).await,
            Open::Memory => Store::open_in_memory()
                .map(|store| (store, None, Backend::Memory { reason: "an in-memory archive was asked for".into() }))
                .map_err(Problem::from),
        };
        let (store, opfs, backend) = match opened {
            Ok(v) => v,
            Err(problem) => {
                post(&WorkerMessage::Failed(problem));
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
        *self.role.borrow_mut() = Standing::Owner;
        self.announce_ready(&ready);
        self.peer(&PeerMessage::Owner { tab: self.tab.clone(), ready });
        // Sync runs where the archive is: with what this tab last asked for, until a tab asks again.
        let last = self.sync.last.borrow().clone();
        if let Some((settings, module_url)) = last {
            super::sync::start(&self.sync, self.link(), Some(settings), module_url);
        }
        // Recall by meaning is this device's setting, kept in the archive: it resumes by itself.
        super::semantic::start(&self.semantic, self.semantic_link());
        // What this tab had forwarded to the previous owner (or held back) is served here now.
        let unanswered: Vec<Request> = std::mem::take(&mut *self.inflight.borrow_mut()).into_values().collect();
        for req in unanswered {
            self.serve(Origin::Local, req);
        }
        let (replies, mut reply_queue) = futures_channel::mpsc::unbounded::<(Origin, Request)>();
        {
            let hub = self.clone();
            wasm_bindgen_futures::spawn_local(async move {
                while let Some((origin, req)) = reply_queue.next().await {
                    hub.serve_reply(origin, req).await;
                }
            });
        }
        while let Some((origin, req)) = requests.next().await {
            // Other tools' exports are read, and exports in their formats made, by the importer,
            // loaded on first use.
            let importer = match &req.op {
                Op::PreviewImport(_) | Op::ImportFiles(_) => req.op.files().is_some_and(super::importer::needed),
                Op::ExportChatGpt(_) | Op::ExportMarkdown(_) => true,
                _ => false,
            };
            if importer {
                if let Err(problem) = super::importer::load().await {
                    self.respond(&origin, WorkerMessage::Response { id: req.id, result: Err(problem) });
                    continue;
                }
            }
            if req.op.is_reply() {
                let _ = replies.unbounded_send((origin, req));
            } else {
                self.serve_now(&origin, req);
            }
        }
    }

    /// What a request's progress goes through: to the tab that asked and, for a change, to the others.
    fn sink(self: &Rc<Self>, origin: &Origin, id: u64) -> Rc<dyn Fn(Event)> {
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
    }

    /// Serves a request that is done at once.
    fn serve_now(self: &Rc<Self>, origin: &Origin, req: Request) {
        let id = req.id;
        let sink = self.sink(origin, id);
        let mut wrote = false;
        let result = match self.archive.try_borrow_mut() {
            Ok(mut archive) => match archive.as_mut() {
                Some((store, _)) => {
                    let before = store.writes();
                    let result = handle(store, &*sink, req.op);
                    wrote = store.writes() != before;
                    result
                }
                None => Err(Problem::new(ErrorKind::Storage, CLOSED)),
            },
            Err(_) => Err(Problem::new(ErrorKind::Storage, "the archive is busy")),
        };
        self.respond(origin, WorkerMessage::Response { id, result });
        if wrote {
            self.sync.wake(); // what the write left in the outbox goes out now, not at the next round
        }
    }

    /// Serves a request for a reply, to its end.
    async fn serve_reply(self: &Rc<Self>, origin: Origin, req: Request) {
        let id = req.id;
        let sink = self.sink(&origin, id);
        *self.tools.sink.borrow_mut() = Some(sink.clone());
        *self.writing.borrow_mut() = super::ops::writes_in(&req.op).map(str::to_owned);
        self.replying.set(true);
        let steps = Steps(&self.archive);
        let wrap = super::ops::sent_reply(&req.op);
        let result = super::ops::reply(&steps, &self.transport, &self.tools, &*sink, req.op).await;
        self.replying.set(false);
        *self.writing.borrow_mut() = None;
        self.sync.wake(); // the reply's turns go out now
                          // Cut short because this page is closing: another tab's request stays unanswered, so that tab
                          // sends it again to the next owner, which continues the reply; this tab's own is told why.
        let result = match result {
            _ if self.releasing.get() && origin != Origin::Local => None,
            Ok(Sent { session_id, outcome: SendOutcome::Interrupted { .. } }) if self.releasing.get() => {
                Some(Ok(Sent { session_id, outcome: SendOutcome::ClosedMidReply }))
            }
            other => Some(other),
        };
        if let Some(result) = result {
            let result = result.and_then(|sent| {
                wrap.map(|wrap| wrap(sent))
                    .ok_or_else(|| Problem::new(ErrorKind::Internal, "a request done at once was served as a reply"))
            });
            self.respond(&origin, WorkerMessage::Response { id, result });
        }
        if self.releasing.get() {
            self.release();
        }
    }
}
