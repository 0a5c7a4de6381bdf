//! The UI side of the storage protocol: spawns the storage worker and turns its messages into
//! `async` calls (`client.call(Op::Stats).await`). Nothing is posted before the worker said `Ready`.

use crate::protocol::{Event, Op, ReadyInfo, Reply, Request, WorkerMessage};
use futures_channel::oneshot;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::{ErrorEvent, MessageEvent, Worker, WorkerOptions, WorkerType};

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
    worker: Worker,
    pending: RefCell<Pending>,
    next_id: Cell<u64>,
    ready: RefCell<Option<Result<ReadyInfo, StorageError>>>,
    waiting_for_ready: RefCell<Vec<oneshot::Sender<Result<ReadyInfo, StorageError>>>>,
    listeners: RefCell<Vec<Listener>>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(ErrorEvent)>,
}

/// A handle on the storage worker; cheap to clone.
#[derive(Clone)]
pub struct StorageClient {
    inner: Rc<Inner>,
}

impl StorageClient {
    /// Starts the worker from `script_url` (Trunk's loader shim for the `storage-worker` binary).
    pub fn spawn(script_url: &str) -> Result<StorageClient, StorageError> {
        let opts = WorkerOptions::new();
        opts.set_type(WorkerType::Classic);
        let worker = Worker::new_with_options(script_url, &opts)
            .map_err(|e| StorageError::Unavailable(format!("cannot start the storage worker: {e:?}")))?;
        let inner = Rc::new_cyclic(|weak: &std::rc::Weak<Inner>| {
            let on_message = {
                let weak = weak.clone();
                Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
                    if let (Some(inner), Some(text)) = (weak.upgrade(), ev.data().as_string()) {
                        inner.receive(&text);
                    }
                })
            };
            let on_error = {
                let weak = weak.clone();
                Closure::<dyn FnMut(ErrorEvent)>::new(move |ev: ErrorEvent| {
                    if let Some(inner) = weak.upgrade() {
                        let msg = if ev.message().is_empty() { "the storage worker failed to load".to_owned() } else { ev.message() };
                        inner.fail_all(StorageError::Unavailable(msg));
                    }
                })
            };
            worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
            worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
            Inner {
                worker: worker.clone(),
                pending: RefCell::new(HashMap::new()),
                next_id: Cell::new(1),
                ready: RefCell::new(None),
                waiting_for_ready: RefCell::new(Vec::new()),
                listeners: RefCell::new(Vec::new()),
                _on_message: on_message,
                _on_error: on_error,
            }
        });
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

    /// Calls `f` with every progress event (and the id of the request it belongs to).
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
        let req = Request { id, op };
        if let Err(e) = self.inner.worker.post_message(&JsValue::from_str(&req.to_json())) {
            self.inner.pending.borrow_mut().remove(&id);
            return Err(StorageError::Unavailable(format!("cannot reach the storage worker: {e:?}")));
        }
        rx.await.unwrap_or_else(|_| Err(StorageError::Unavailable("the storage worker went away".into())))
    }
}

impl Inner {
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
