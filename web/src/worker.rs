//! The storage worker: the only place that opens the database. It installs the OPFS VFS, opens the
//! archive (falling back to memory, and saying so, when OPFS is unavailable), announces `Ready`, then
//! answers requests one at a time.

use crate::protocol::{Backend, Op, ReadyInfo, Reply, Request, WorkerMessage};
use cowork_core::store::{NewSession, SessionFilter, Store};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

/// The archive's file name in the OPFS pool.
pub const DB_FILE: &str = "cowork.db";

/// Runs the worker: open the archive, say `Ready`, serve requests.
pub async fn run() {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let post = {
        let scope = scope.clone();
        move |msg: &WorkerMessage| {
            let _ = scope.post_message(&JsValue::from_str(&msg.to_json()));
        }
    };
    // Requests that arrive while the archive opens wait in the browser's queue: the handler is only
    // installed once the store exists, and the UI never sends before `Ready` anyway.
    let (store, backend) = match open_archive().await {
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
    let store = Rc::new(RefCell::new(store));
    let handler = {
        let post = post.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
            let Some(text) = ev.data().as_string() else { return };
            let msg = match serde_json::from_str::<Request>(&text) {
                Ok(req) => WorkerMessage::Response { id: req.id, result: handle(&mut store.borrow_mut(), req.op) },
                Err(e) => WorkerMessage::Failed { message: format!("unreadable request: {e}") },
            };
            post(&msg);
        })
    };
    scope.set_onmessage(Some(handler.as_ref().unchecked_ref()));
    handler.forget(); // lives as long as the worker
    post(&WorkerMessage::Ready(ready));
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
pub fn handle(store: &mut Store, op: Op) -> Result<Reply, String> {
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
    };
    r.map_err(|e| e.to_string())
}
