//! The UI side of the storage protocol: spawns the storage worker and turns its messages into
//! `async` calls (`client.call(Op::Stats).await`). Nothing is posted before the worker said `Ready`.
//!
//! If the worker dies (an uncaught error), every pending call fails with a clear message and a new
//! worker is started (a few times at most), which opens the archive again; what was saved is kept.
//! When the page goes away (`pagehide`), the worker is told to release the archive at once, so a
//! reload or another tab can open it without waiting.

use crate::protocol::{Event, Op, ReadyInfo, Reply, Request, WorkerMessage};
use futures_channel::oneshot;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::{ErrorEvent, MessageEvent, PageTransitionEvent, Worker, WorkerOptions, WorkerType};

/// New workers started after a crash, at most, per page.
const MAX_RESTARTS: u32 = 3;

/// Why a storage call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageError {
    /// The worker could not start or open any archive.
    Unavailable(String),
    /// The operation itself failed (the archive is unchanged).
    Failed(String),
}

impl std::fmt::Display for StorageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StorageError::Unavailable(m) => write!(f, "storage is unavailable: {m}"),
            StorageError::Failed(m) => f.write_str(m),
        }
    }
}

type Pending = HashMap<u64, oneshot::Sender<Result<Reply, StorageError>>>;
/// A progress listener: the request id and the event.
type Listener = Rc<dyn Fn(u64, &Event)>;

struct Inner {
    script_url: String,
    worker: RefCell<Option<Worker>>,
    restarts: Cell<u32>,
    pending: RefCell<Pending>,
    next_id: Cell<u64>,
    ready: RefCell<Option<Result<ReadyInfo, StorageError>>>,
    waiting_for_ready: RefCell<Vec<oneshot::Sender<Result<ReadyInfo, StorageError>>>>,
    listeners: RefCell<Vec<Listener>>,
    on_message: RefCell<Option<Closure<dyn FnMut(MessageEvent)>>>,
    on_error: RefCell<Option<Closure<dyn FnMut(ErrorEvent)>>>,
    _on_pagehide: RefCell<Option<Closure<dyn FnMut(PageTransitionEvent)>>>,
}

/// A handle on the storage worker; cheap to clone.
#[derive(Clone)]
pub struct StorageClient {
    inner: Rc<Inner>,
}

impl StorageClient {
    /// Starts the worker from `script_url` (Trunk's loader shim for the `storage-worker` binary).
    pub fn spawn(script_url: &str) -> Result<StorageClient, StorageError> {
        let inner = Rc::new(Inner {
            script_url: script_url.to_owned(),
            worker: RefCell::new(None),
            restarts: Cell::new(0),
            pending: RefCell::new(HashMap::new()),
            next_id: Cell::new(1),
            ready: RefCell::new(None),
            waiting_for_ready: RefCell::new(Vec::new()),
            listeners: RefCell::new(Vec::new()),
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
        Ok(StorageClient { inner })
    }

    /// Resolves once the worker has opened the archive (or failed to).
    pub async fn ready(&self) -> Result<ReadyInfo, StorageError> {
        if let Some(r) = self.inner.ready.borrow().clone() {
            return r;
        }
        let (tx, rx) = oneshot::channel();
        self.inner.waiting_for_ready.borrow_mut().push(tx);
        rx.await.unwrap_or_else(|_| Err(StorageError::Unavailable("the storage worker went away".into())))
    }

    /// Calls `f` with every progress event and the id of the request it belongs to (0: a change made
    /// elsewhere, e.g. by another tab).
    pub fn subscribe(&self, f: impl Fn(u64, &Event) + 'static) {
        self.inner.listeners.borrow_mut().push(Rc::new(f));
    }

    /// Performs one operation in the worker.
    pub async fn call(&self, op: Op) -> Result<Reply, StorageError> {
        self.ready().await?;
        let id = self.inner.next_id.get();
        self.inner.next_id.set(id + 1);
        let (tx, rx) = oneshot::channel();
        self.inner.pending.borrow_mut().insert(id, tx);
        if let Err(e) = self.inner.post(&Request { id, op }) {
            self.inner.pending.borrow_mut().remove(&id);
            return Err(e);
        }
        rx.await.unwrap_or_else(|_| Err(StorageError::Unavailable("the storage worker went away".into())))
    }
}

impl Inner {
    /// Starts a worker and wires its messages here.
    fn start(&self) -> Result<(), StorageError> {
        let opts = WorkerOptions::new();
        opts.set_type(WorkerType::Classic);
        let worker = Worker::new_with_options(&self.script_url, &opts)
            .map_err(|e| StorageError::Unavailable(format!("cannot start the storage worker: {e:?}")))?;
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
        let worker = self.worker.borrow();
        let worker =
            worker.as_ref().ok_or_else(|| StorageError::Unavailable("the storage worker is not running".into()))?;
        worker
            .post_message(&JsValue::from_str(&req.to_json()))
            .map_err(|e| StorageError::Unavailable(format!("cannot reach the storage worker: {e:?}")))
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
            let _ = tx.send(Err(StorageError::Unavailable(message.clone())));
        }
        if restart {
            self.restarts.set(self.restarts.get() + 1);
            *self.ready.borrow_mut() = None;
            if let Err(e) = self.start() {
                self.fail_all(e);
            }
        } else {
            self.fail_all(StorageError::Unavailable(message));
        }
    }

    fn receive(&self, text: &str) {
        match serde_json::from_str::<WorkerMessage>(text) {
            Ok(WorkerMessage::Ready(info)) => self.set_ready(Ok(info)),
            Ok(WorkerMessage::Failed { message }) => self.fail_all(StorageError::Unavailable(message)),
            Ok(WorkerMessage::Response { id, result }) => {
                if let Some(tx) = self.pending.borrow_mut().remove(&id) {
                    let _ = tx.send(result.map_err(StorageError::Failed));
                }
            }
            Ok(WorkerMessage::Event { id, event }) => {
                let listeners: Vec<_> = self.listeners.borrow().clone();
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
