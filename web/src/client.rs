//! The UI side of the storage protocol: spawns the storage worker and turns its messages into
//! `async` calls (`client.call(ops::Stats).await` resolves to the archive's `StorageStats`). Nothing is
//! posted before the worker said `Ready`.
//!
//! If the worker dies (an uncaught error), every pending call fails with a clear message and a new
//! worker is started (a few times at most), which opens the archive again; what was saved is kept.
//! When the page goes away (`pagehide`), the worker is told to release the archive at once, so a
//! reload or another tab can open it without waiting.

use crate::protocol::{
    ops, AttachmentData, Call, ErrorKind, Event, HostOptions, Op, Problem, ReadyInfo, Reply, Request, WorkerMessage,
};
use futures_channel::oneshot;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::{ErrorEvent, MessageEvent, PageTransitionEvent, Worker, WorkerOptions, WorkerType};

#[cfg(target_arch = "wasm32")]
mod mcp;

/// New workers started after a crash, at most, per page.
const MAX_RESTARTS: u32 = 3;

/// Why a storage call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageError {
    /// The worker could not start or open any archive, or it stopped.
    Unavailable(Problem),
    /// The operation itself failed (the archive is unchanged).
    Failed(Problem),
}

impl StorageError {
    /// The worker is gone or cannot start (a failure of this side, not of the archive's data).
    fn worker(message: impl Into<String>) -> StorageError {
        StorageError::Unavailable(Problem::new(ErrorKind::Storage, message))
    }

    /// What kind of failure it is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            StorageError::Unavailable(p) | StorageError::Failed(p) => p.kind,
        }
    }

    /// The failure as the UI shows it: its kind and the whole message.
    pub fn problem(&self) -> Problem {
        Problem { kind: self.kind(), message: self.to_string() }
    }
}

impl std::fmt::Display for StorageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StorageError::Unavailable(p) => write!(f, "storage is unavailable: {}", p.message),
            StorageError::Failed(p) => f.write_str(&p.message),
        }
    }
}

type Pending = HashMap<u64, oneshot::Sender<Result<Reply, StorageError>>>;
/// A progress listener: the request id and the event.
type Listener = Rc<dyn Fn(u64, &Event)>;

/// What a page's tool handler returned.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolAnswer {
    /// The tool's output, as the model will read it.
    pub content: String,
    /// Whether the tool succeeded (`false`: `content` describes the failure).
    pub success: bool,
}

/// The page's own tools (registered through the embedding API): offered with every message sent
/// through this client, and run here when the model calls one.
pub trait ToolRunner {
    /// The tools and instructions to send with a request.
    fn host_options(&self) -> HostOptions;
    /// Runs one call (`arguments` is the model's JSON text).
    fn run(&self, call_id: String, name: String, arguments: String) -> Pin<Box<dyn Future<Output = ToolAnswer>>>;
}

struct Inner {
    script_url: String,
    worker: RefCell<Option<Worker>>,
    restarts: Cell<u32>,
    pending: RefCell<Pending>,
    next_id: Cell<u64>,
    ready: RefCell<Option<Result<ReadyInfo, StorageError>>>,
    waiting_for_ready: RefCell<Vec<oneshot::Sender<Result<ReadyInfo, StorageError>>>>,
    /// Each listener with the handle it belongs to (see [`StorageClient::share`]).
    listeners: RefCell<Vec<(u64, Listener)>>,
    /// Which handle sent each unanswered request: its events go to that handle's listeners only.
    requesters: RefCell<HashMap<u64, u64>>,
    next_handle: Cell<u64>,
    tools: RefCell<Option<Rc<dyn ToolRunner>>>,
    /// Whether the MCP bundle ran anything for the worker (`client/mcp.rs`): Stop stops it too.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    mcp_used: Cell<bool>,
    on_message: Handler<MessageEvent>,
    on_error: Handler<ErrorEvent>,
    _on_pagehide: Handler<PageTransitionEvent>,
}

/// A DOM event handler kept alive as long as the client (dropping it would detach it).
type Handler<E> = RefCell<Option<Closure<dyn FnMut(E)>>>;

/// A handle on the storage worker; cheap to clone (clones are the same handle).
#[derive(Clone)]
pub struct StorageClient {
    inner: Rc<Inner>,
    /// Which handle this is: the progress events of a request go to the listeners of the handle that
    /// sent it; changes made elsewhere (request id 0) go to every handle.
    handle: u64,
}

impl StorageClient {
    /// Starts the worker from `script_url` (Trunk's loader shim for the `storage-worker` binary).
    ///
    /// Outside the browser (native builds, for tests of the rest of the app) there is no worker: it
    /// answers [`StorageError::Unavailable`], and so does every call the app would make.
    pub fn spawn(script_url: &str) -> Result<StorageClient, StorageError> {
        if !cfg!(target_arch = "wasm32") {
            return Err(StorageError::worker("there is no storage worker outside the browser"));
        }
        let inner = Rc::new(Inner {
            script_url: script_url.to_owned(),
            worker: RefCell::new(None),
            restarts: Cell::new(0),
            pending: RefCell::new(HashMap::new()),
            next_id: Cell::new(1),
            ready: RefCell::new(None),
            waiting_for_ready: RefCell::new(Vec::new()),
            listeners: RefCell::new(Vec::new()),
            requesters: RefCell::new(HashMap::new()),
            next_handle: Cell::new(1),
            tools: RefCell::new(None),
            mcp_used: Cell::new(false),
            on_message: RefCell::new(None),
            on_error: RefCell::new(None),
            _on_pagehide: RefCell::new(None),
        });
        let weak = Rc::downgrade(&inner);
        *inner.on_message.borrow_mut() = Some(Closure::new({
            let weak = weak.clone();
            move |ev: MessageEvent| {
                if let (Some(inner), Some(text)) = (weak.upgrade(), ev.data().as_string()) {
                    inner.receive(&text);
                }
            }
        }));
        *inner.on_error.borrow_mut() = Some(Closure::new({
            let weak = weak.clone();
            move |ev: ErrorEvent| {
                if let Some(inner) = weak.upgrade() {
                    let msg = if ev.message().is_empty() { "it failed to load".to_owned() } else { ev.message() };
                    inner.crashed(msg);
                }
            }
        }));
        let on_pagehide = Closure::<dyn FnMut(PageTransitionEvent)>::new(move |ev: PageTransitionEvent| {
            if let (Some(inner), false) = (weak.upgrade(), ev.persisted()) {
                let _ = inner.post(&Request { id: 0, op: Op::Release });
            }
        });
        if let Some(window) = web_sys::window() {
            let _ = window.add_event_listener_with_callback("pagehide", on_pagehide.as_ref().unchecked_ref());
        }
        *inner._on_pagehide.borrow_mut() = Some(on_pagehide);
        inner.start()?;
        Ok(StorageClient { inner, handle: 0 })
    }

    /// Another handle on the same worker, with its own progress events (a UI mounted beside the
    /// embedding API's archive, say): each sees the events of its own requests and every change.
    pub fn share(&self) -> StorageClient {
        let handle = self.inner.next_handle.get();
        self.inner.next_handle.set(handle + 1);
        StorageClient { inner: self.inner.clone(), handle }
    }

    /// Runs the page's tools when the model calls them (one runner per worker, for every handle).
    pub fn set_tool_runner(&self, runner: Option<Rc<dyn ToolRunner>>) {
        *self.inner.tools.borrow_mut() = runner;
    }

    /// Closes the archive and ends the worker now (what `pagehide` does); later calls fail.
    pub fn release(&self) {
        let _ = self.inner.post(&Request { id: 0, op: Op::Release });
    }

    /// The page's tools and instructions, to send with a message.
    pub fn host_options(&self) -> HostOptions {
        let runner = self.inner.tools.borrow().clone();
        runner.map(|r| r.host_options()).unwrap_or_default()
    }

    /// Resolves once the worker has opened the archive (or failed to).
    pub async fn ready(&self) -> Result<ReadyInfo, StorageError> {
        if let Some(r) = self.inner.ready.borrow().clone() {
            return r;
        }
        let (tx, rx) = oneshot::channel();
        self.inner.waiting_for_ready.borrow_mut().push(tx);
        rx.await.unwrap_or_else(|_| Err(StorageError::worker("the storage worker went away")))
    }

    /// Calls `f` with every progress event and the id of the request it belongs to (0: a change made
    /// elsewhere, e.g. by another tab).
    pub fn subscribe(&self, f: impl Fn(u64, &Event) + 'static) {
        self.inner.listeners.borrow_mut().push((self.handle, Rc::new(f)));
    }

    /// Stops calling this handle's listeners (a mounted UI going away: its state is disposed, while
    /// the page's other handles on the same worker keep theirs).
    pub fn unsubscribe(&self) {
        let handle = self.handle;
        self.inner.listeners.borrow_mut().retain(|(h, _)| *h != handle);
    }

    /// Performs one operation in the worker, and resolves to what that operation gets back.
    pub async fn call<C: Call>(&self, call: C) -> Result<C::Reply, StorageError> {
        self.call_with_files(call, Vec::new()).await
    }

    /// Performs an operation that carries files ([`ops::ImportFiles`], [`ops::PreviewImport`]): their
    /// contents, one buffer per file in the op's order, are transferred to the worker beside the
    /// message (never copied into this side's memory, nor written into the JSON).
    pub async fn call_with_files<C: Call>(
        &self,
        call: C,
        buffers: Vec<js_sys::ArrayBuffer>,
    ) -> Result<C::Reply, StorageError> {
        let reply = self.send(call.into_op(), buffers).await?;
        C::unwrap(reply).ok_or_else(other_reply)
    }

    /// Performs an operation that carries attachments ([`ops::SendMessage`], [`ops::EditMessage`],
    /// [`ops::AppendTurn`]): `files` are the browser's `Blob`s/`File`s in the op's order, each read into an
    /// `ArrayBuffer` and transferred beside the request (one copy, into the worker's memory). The op's
    /// `attachments` are filled from them (name from `File.name`, else "attachment"; type from
    /// `Blob.type`).
    pub async fn call_with_attachments<C: Call>(
        &self,
        call: C,
        files: &[web_sys::Blob],
    ) -> Result<C::Reply, StorageError> {
        let reply = self.send_with_attachments(call.into_op(), files).await?;
        C::unwrap(reply).ok_or_else(other_reply)
    }

    /// The exact bytes of an attachment ([`ops::ReadAttachment`]) and how a turn describes it.
    pub async fn read_attachment(
        &self,
        sha256: &str,
    ) -> Result<(Option<cowork_core::Attachment>, Vec<u8>), StorageError> {
        let AttachmentData { attachment, data } = self.call(ops::ReadAttachment { sha256: sha256.to_owned() }).await?;
        cowork_core::attachment::from_base64(&data).map(|bytes| (attachment, bytes)).map_err(|e| {
            StorageError::Failed(Problem::new(ErrorKind::Internal, format!("the attachment's bytes: {e}")))
        })
    }

    /// Posts `op` (the untyped half of [`StorageClient::call_with_files`]: one copy of this code, not one
    /// per operation).
    async fn send(&self, op: Op, buffers: Vec<js_sys::ArrayBuffer>) -> Result<Reply, StorageError> {
        self.ready().await?;
        // Stop stops the MCP calls in flight too.
        #[cfg(target_arch = "wasm32")]
        if matches!(op, Op::Stop) && self.inner.mcp_used.get() {
            mcp::abort().await;
        }
        let id = self.inner.next_id.get();
        self.inner.next_id.set(id + 1);
        let (tx, rx) = oneshot::channel();
        self.inner.pending.borrow_mut().insert(id, tx);
        self.inner.requesters.borrow_mut().insert(id, self.handle);
        if let Err(e) = self.inner.post_with_files(&Request { id, op }, &buffers) {
            self.inner.pending.borrow_mut().remove(&id);
            self.inner.requesters.borrow_mut().remove(&id);
            return Err(e);
        }
        rx.await.unwrap_or_else(|_| Err(StorageError::worker("the storage worker went away")))
    }

    /// Reads `files` and posts `op` with them (the untyped half of
    /// [`StorageClient::call_with_attachments`]).
    async fn send_with_attachments(&self, mut op: Op, files: &[web_sys::Blob]) -> Result<Reply, StorageError> {
        let mut buffers = Vec::with_capacity(files.len());
        let mut payloads = Vec::with_capacity(files.len());
        for blob in files {
            let read = wasm_bindgen_futures::JsFuture::from(blob.array_buffer()).await;
            let buffer: js_sys::ArrayBuffer = read
                .ok()
                .and_then(|b| b.dyn_into().ok())
                .ok_or_else(|| StorageError::Failed(Problem::new(ErrorKind::Invalid, "a file could not be read")))?;
            let name = blob.dyn_ref::<web_sys::File>().map(web_sys::File::name).unwrap_or_else(|| "attachment".into());
            payloads.push(crate::protocol::FilePayload::attachment(
                name,
                blob.type_(),
                u64::from(buffer.byte_length()),
            ));
            buffers.push(buffer);
        }
        match op.files_mut() {
            Some(attachments) => *attachments = payloads,
            None if files.is_empty() => {}
            None => {
                return Err(StorageError::Failed(Problem::new(ErrorKind::Invalid, "this operation takes no files")))
            }
        }
        self.send(op, buffers).await
    }
}

/// The worker answered with another kind of reply than the operation gets: only a worker of another
/// build of the app can (an old tab's worker still owning the archive after an update).
fn other_reply() -> StorageError {
    StorageError::Unavailable(Problem::new(
        ErrorKind::Storage,
        "another version of Cowork holds the archive in another tab: reload every Cowork tab",
    ))
}

impl Drop for Inner {
    /// The last handle is gone (a mounted UI was removed): close the archive and end the worker, so
    /// nothing keeps holding the archive's files or the owner lock.
    fn drop(&mut self) {
        let _ = self.post(&Request { id: 0, op: Op::Release });
        if let Some(worker) = self.worker.borrow().as_ref() {
            worker.set_onmessage(None);
            worker.set_onerror(None);
        }
        if let (Some(window), Some(f)) = (web_sys::window(), self._on_pagehide.borrow().as_ref()) {
            let _ = window.remove_event_listener_with_callback("pagehide", f.as_ref().unchecked_ref());
        }
    }
}

impl Inner {
    /// Runs a page tool the model called and sends its answer back (out of turn, so it is delivered
    /// while the reply that asked for it is still being served).
    fn run_tool(self: &Rc<Self>, call_id: String, name: String, arguments: String) {
        let runner = self.tools.borrow().clone();
        let inner = self.clone();
        wasm_bindgen_futures::spawn_local(async move {
            // The worker's request for the MCP tools to offer, and the calls of those: `<server>__<tool>`,
            // which no page tool's name may be (the embedding API refuses it).
            #[cfg(target_arch = "wasm32")]
            if name == ops::MCP_OFFER || name.contains("__") {
                inner.mcp_used.set(true);
                return inner.post_out_of_turn(mcp::run(call_id, name, arguments).await.into_op());
            }
            let answer = match runner {
                Some(r) => r.run(call_id.clone(), name, arguments).await,
                None => ToolAnswer {
                    content: format!("Error: no handler for the tool {name:?} in this page."),
                    success: false,
                },
            };
            inner.post_out_of_turn(
                ops::ToolResult { call_id, content: answer.content, success: answer.success, result: None }.into_op(),
            );
        });
    }

    /// Posts an operation answered out of turn, whose answer nobody waits for.
    fn post_out_of_turn(&self, op: Op) {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let _ = self.post(&Request { id, op });
    }

    /// Starts a worker and wires its messages here.
    fn start(&self) -> Result<(), StorageError> {
        let opts = WorkerOptions::new();
        opts.set_type(WorkerType::Classic);
        let worker = Worker::new_with_options(&self.script_url, &opts)
            .map_err(|e| StorageError::worker(format!("cannot start the storage worker: {e:?}")))?;
        if let Some(f) = self.on_message.borrow().as_ref() {
            worker.set_onmessage(Some(f.as_ref().unchecked_ref()));
        }
        if let Some(f) = self.on_error.borrow().as_ref() {
            worker.set_onerror(Some(f.as_ref().unchecked_ref()));
        }
        *self.worker.borrow_mut() = Some(worker);
        Ok(())
    }

    fn post(&self, req: &Request) -> Result<(), StorageError> {
        self.post_with_files(req, &[])
    }

    /// Posts a request, its files' buffers transferred beside it (`protocol::files_js::message`).
    fn post_with_files(&self, req: &Request, buffers: &[js_sys::ArrayBuffer]) -> Result<(), StorageError> {
        let worker = self.worker.borrow();
        let worker = worker.as_ref().ok_or_else(|| StorageError::worker("the storage worker is not running"))?;
        let (message, transfer) = crate::protocol::files_js::message(req.to_json(), buffers);
        worker
            .post_message_with_transfer(&message, &transfer)
            .map_err(|e| StorageError::worker(format!("cannot reach the storage worker: {e:?}")))
    }

    /// The worker died: fail what was pending, and start a new one if it had been working.
    fn crashed(&self, why: String) {
        if let Some(worker) = self.worker.borrow_mut().take() {
            worker.terminate();
        }
        let was_ready = matches!(*self.ready.borrow(), Some(Ok(_)));
        let restart = was_ready && self.restarts.get() < MAX_RESTARTS;
        let message = if restart {
            format!("the storage worker stopped ({why}); it has been restarted, so try again (saved data is kept)")
        } else {
            format!("the storage worker stopped: {why}")
        };
        for (_, tx) in self.pending.borrow_mut().drain() {
            let _ = tx.send(Err(StorageError::worker(message.clone())));
        }
        self.requesters.borrow_mut().clear();
        if restart {
            self.restarts.set(self.restarts.get() + 1);
            *self.ready.borrow_mut() = None;
            if let Err(e) = self.start() {
                self.fail_all(e);
            }
        } else {
            self.fail_all(StorageError::worker(message));
        }
    }

    fn receive(self: &Rc<Self>, text: &str) {
        match serde_json::from_str::<WorkerMessage>(text) {
            Ok(WorkerMessage::Ready(info)) => self.set_ready(Ok(info)),
            // Only before `Ready`: a client that is ready stays ready, whatever one message says.
            Ok(WorkerMessage::Failed(problem)) if self.ready.borrow().is_none() => {
                self.fail_all(StorageError::Unavailable(problem))
            }
            Ok(WorkerMessage::Failed(problem) | WorkerMessage::Unreadable(problem)) => {
                web_sys::console::error_1(&format!("the storage worker: {}", problem.message).into())
            }
            Ok(WorkerMessage::Response { id, result }) => {
                self.requesters.borrow_mut().remove(&id);
                if let Some(tx) = self.pending.borrow_mut().remove(&id) {
                    let _ = tx.send(result.map_err(StorageError::Failed));
                }
            }
            Ok(WorkerMessage::Event { id: _, event: Event::ToolRequested { call_id, name, arguments } }) => {
                self.run_tool(call_id, name, arguments);
            }
            Ok(WorkerMessage::Event { id, event }) => {
                let to = if id == 0 { None } else { self.requesters.borrow().get(&id).copied() };
                let listeners: Vec<Listener> = self
                    .listeners
                    .borrow()
                    .iter()
                    .filter(|(handle, _)| to.is_none_or(|h| h == *handle))
                    .map(|(_, f)| f.clone())
                    .collect();
                listeners.iter().for_each(|f| f(id, &event));
            }
            Err(e) => web_sys::console::error_1(&format!("unreadable message from the storage worker: {e}").into()),
        }
    }

    fn set_ready(&self, r: Result<ReadyInfo, StorageError>) {
        *self.ready.borrow_mut() = Some(r.clone());
        for tx in self.waiting_for_ready.borrow_mut().drain(..) {
            let _ = tx.send(r.clone());
        }
    }

    fn fail_all(&self, e: StorageError) {
        if self.ready.borrow().as_ref().is_none_or(|r| r.is_ok()) {
            self.set_ready(Err(e.clone()));
        }
        for (_, tx) in self.pending.borrow_mut().drain() {
            let _ = tx.send(Err(e.clone()));
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    /// Natively (the app's code built for tests) there is no worker: the client says so, and the
    /// actions, which get no client, do nothing.
    #[test]
    fn outside_the_browser_storage_is_unavailable() {
        let Err(e) = StorageClient::spawn("./storage-worker_loader.js") else { panic!("a worker started natively") };
        assert!(matches!(e, StorageError::Unavailable(_)), "{e:?}");
        assert_eq!(e.kind(), ErrorKind::Storage);
        assert_eq!(e.to_string(), "storage is unavailable: there is no storage worker outside the browser");
    }
}
