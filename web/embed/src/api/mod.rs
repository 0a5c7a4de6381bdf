//! The exported API: `openArchive`, the `Archive` class, `mount` (see `mount.rs`) and `version`.
//! `convert.rs` turns values, options and failures into what JS sees; `shared.rs` holds what an
//! archive shares with a UI mounted from it (the page's tools, approval handler and listeners).
//!
//! Every method that touches the archive returns a `Promise`; failures reject with a JS `Error` whose
//! message starts with the method's name ("send: the model endpoint refused the API key …"), never
//! with a panic or `undefined`. Data crosses as plain objects (serde-wasm-bindgen, JSON-compatible).

use crate::options::{
    self, CreateOptions, ListOptions, OpenOptions, ReadOptions, RequestOptions, ResumeOptions, SearchOptions,
    StorageKind, ToolInit, TurnInit,
};
use cowork_web::client::StorageClient;
use cowork_web::protocol::{ops, Backend, Call, ErrorKind, Event, HostOptions};
use cowork_web::settings::ModelSettings;
use js_sys::{Function, Object, Promise, Reflect};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

mod convert;
mod mcp;
mod shared;

use convert::{done, message_of, plain, required, sent, session_js, storage_error, swb, text, to_js};
pub(crate) use convert::{error, error_of_kind, options_from};
use shared::ask_approval;
pub(crate) use shared::{Runner, Shared};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = include_str!("../types.d.ts");

#[wasm_bindgen(inline_js = "export function module_url() { return import.meta.url; }")]
extern "C" {
    /// This module's URL (wasm-bindgen puts inline JS in `snippets/<crate>/inline0.js`).
    fn module_url() -> String;
}

#[wasm_bindgen]
extern "C" {
    // The options objects, typed in the declarations (`types.d.ts`) and optional where they are last.
    #[wasm_bindgen(typescript_type = "OpenOptions")]
    pub type OpenOptionsArg;
    #[wasm_bindgen(typescript_type = "MountOptions")]
    pub type MountOptionsArg;
    #[wasm_bindgen(typescript_type = "ArchiveMountOptions")]
    pub type ArchiveMountOptionsArg;
    #[wasm_bindgen(typescript_type = "CreateSessionOptions")]
    pub type CreateSessionOptionsArg;
    #[wasm_bindgen(typescript_type = "ListSessionsOptions")]
    pub type ListSessionsOptionsArg;
    #[wasm_bindgen(typescript_type = "ResumeOptions")]
    pub type ResumeOptionsArg;
    #[wasm_bindgen(typescript_type = "ReadTurnsOptions")]
    pub type ReadTurnsOptionsArg;
    #[wasm_bindgen(typescript_type = "SearchOptions")]
    pub type SearchOptionsArg;
    #[wasm_bindgen(typescript_type = "RequestOptions")]
    pub type RequestOptionsArg;
    #[wasm_bindgen(typescript_type = "Blob[]")]
    pub type BlobsArg;
}

/// Runs when the module is initialised: a panic (a bug) shows its message on the console.
#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

/// The storage worker's loader, copied next to this module by the build (`scripts/embed.sh`).
pub(crate) fn default_worker_url() -> String {
    web_sys::Url::new_with_base("../../storage-worker_loader.js", &module_url())
        .map(|u| u.href())
        .unwrap_or_else(|_| "./storage-worker_loader.js".into())
}

/// The code highlighter, copied next to this module by the build (`scripts/embed.sh`).
pub(crate) fn highlighter_url() -> String {
    web_sys::Url::new_with_base("../../highlight.js", &module_url()).map(|u| u.href()).unwrap_or_default()
}

/// The demo model and orchestrator of the dev server on this page's origin.
pub(crate) fn page_default_settings() -> ModelSettings {
    let origin = web_sys::window().and_then(|w| w.location().origin().ok()).unwrap_or_default();
    cowork_web::settings::demo(&origin)
}

/// What a tool handler may not do while it runs: ask for another reply (replies are written one at a
/// time, and the one that called the tool waits for its result). Everything else it may.
const BUSY_IN_TOOL: &str = "a reply is waiting for this tool's result: a tool handler cannot ask for another \
reply while it runs (replies are written one at a time); reading and searching the archive work";

/// Opens the archive: starts the storage worker (OPFS, shared with the Cowork app and the other tabs of
/// this origin; or a private in-memory archive) and resolves when it is ready.
#[wasm_bindgen(js_name = openArchive, unchecked_return_type = "Promise<Archive>")]
pub fn open_archive(options: Option<OpenOptionsArg>) -> Promise {
    future_to_promise(async move {
        const WHAT: &str = "openArchive";
        let o: OpenOptions = options_from(WHAT, options)?;
        let storage = o.storage().map_err(|e| error(WHAT, e))?;
        let settings = match &o.model {
            Some(m) => m.over(&page_default_settings()).map_err(|e| error(WHAT, e))?,
            None => page_default_settings(),
        };
        let url = options::worker_url(o.worker_url.as_deref(), &default_worker_url(), storage);
        // The MCP client, loaded when a workspace's MCP server is first used (`addMcpServer`).
        cowork_web::mcp::set_module_url(&mcp::bundle_url());
        let client = StorageClient::spawn(&url).map_err(|e| error(WHAT, e))?;
        let ready = client.ready().await.map_err(|e| error(WHAT, e))?;
        let shared = Rc::new(Shared {
            tools: RefCell::new(BTreeMap::new()),
            approval: RefCell::new(None),
            listeners: RefCell::new(Vec::new()),
            next_listener: Cell::new(1),
            settings: RefCell::new(settings),
            instructions: RefCell::new(o.instructions.unwrap_or_default()),
            running_tools: Cell::new(0),
        });
        client.set_tool_runner(Some(Rc::new(Runner(shared.clone()))));
        let (events, answers) = (shared.clone(), client.clone());
        client.subscribe(move |id, event| {
            if let Event::ApprovalNeeded { call_id, name, arguments } = event {
                ask_approval(&events, &answers, call_id.clone(), name.clone(), arguments.clone());
            }
            events.dispatch(id, event);
        });
        let kind = match ready.backend {
            Backend::Opfs { .. } => StorageKind::Opfs,
            Backend::Memory { .. } => StorageKind::Memory,
        };
        if storage == StorageKind::Opfs && kind == StorageKind::Memory {
            web_sys::console::warn_1(&"Cowork: OPFS is unavailable here, so this archive lives in memory only".into());
        }
        Ok(Archive { client, shared, kind, closed: Rc::new(Cell::new(false)) }.into())
    })
}

/// An open archive. Sessions, turns, search, recall, context assembly, the agent loop with the page's
/// tools, and events.
#[wasm_bindgen]
pub struct Archive {
    pub(crate) client: StorageClient,
    pub(crate) shared: Rc<Shared>,
    kind: StorageKind,
    closed: Rc<Cell<bool>>,
}

impl Archive {
    /// Performs `op` (if it could be built) and turns the worker's reply into the method's result.
    fn request<C: Call + Clone + 'static>(
        &self,
        what: &'static str,
        op: Result<C, JsValue>,
        then: impl FnOnce(C::Reply) -> Result<JsValue, String> + 'static,
    ) -> Promise {
        self.request_with_files(what, op.map(|op| (op, Vec::new())), then)
    }

    /// [`Archive::request`] for an operation that carries attachments: the page's `Blob`s / `File`s,
    /// read and transferred to the worker beside the request (`StorageClient::call_with_attachments`).
    fn request_with_files<C: Call + Clone + 'static>(
        &self,
        what: &'static str,
        op: Result<(C, Vec<web_sys::Blob>), JsValue>,
        then: impl FnOnce(C::Reply) -> Result<JsValue, String> + 'static,
    ) -> Promise {
        let (client, shared, closed) = (self.client.clone(), self.shared.clone(), self.closed.get());
        future_to_promise(async move {
            if closed {
                return Err(error_of_kind(
                    what,
                    ErrorKind::Storage,
                    "the archive is closed; open it again with openArchive()",
                ));
            }
            let (op, files) = op?;
            if shared.running_tools.get() > 0 && op.clone().into_op().is_reply() {
                return Err(error(what, BUSY_IN_TOOL));
            }
            let reply = client.call_with_attachments(op, &files).await.map_err(|e| storage_error(what, &e))?;
            then(reply).map_err(|e| error_of_kind(what, ErrorKind::Internal, e))
        })
    }

    /// A model request's settings and the page's part (tools, instructions), from its options.
    fn request_parts(
        &self,
        what: &str,
        options: Option<RequestOptionsArg>,
    ) -> Result<(ModelSettings, HostOptions), JsValue> {
        let o: RequestOptions = options_from(what, options)?;
        let model =
            options::model_settings(&self.shared.settings.borrow(), o.model.as_ref()).map_err(|e| error(what, e))?;
        Ok((model, self.shared.host_options(o.instructions)))
    }
}

#[wasm_bindgen]
impl Archive {
    /// Where this archive lives: `"opfs"` (kept by the browser, shared by every tab of this origin and
    /// the Cowork app) or `"memory"` (gone when the page closes).
    #[wasm_bindgen(getter, unchecked_return_type = "StorageKind")]
    pub fn storage(&self) -> String {
        match self.kind {
            StorageKind::Opfs => "opfs".into(),
            StorageKind::Memory => "memory".into(),
        }
    }

    /// Counts of sessions, turns, tool runs, tasks and manifests, and the archive's size in bytes.
    #[wasm_bindgen(unchecked_return_type = "Promise<StorageStats>")]
    pub fn stats(&self) -> Promise {
        self.request("stats", Ok(ops::Stats), |stats| to_js(&stats))
    }

    /// Creates an empty session (its title comes from the first user message unless one is given).
    #[wasm_bindgen(js_name = createSession, unchecked_return_type = "Promise<Session>")]
    pub fn create_session(&self, options: Option<CreateSessionOptionsArg>) -> Promise {
        let op = options_from::<CreateOptions>("createSession", options)
            .map(|o| ops::CreateSession { workspace: o.workspace, title: o.title });
        self.request("createSession", op, session_js)
    }

    /// Sessions, most recently active first (archived ones only when asked).
    #[wasm_bindgen(js_name = listSessions, unchecked_return_type = "Promise<Session[]>")]
    pub fn list_sessions(&self, options: Option<ListSessionsOptionsArg>) -> Promise {
        let op = options_from::<ListOptions>("listSessions", options)
            .map(|o| ops::ListSessions { workspace: o.workspace, include_archived: o.include_archived });
        self.request("listSessions", op, |sessions| {
            to_js(&sessions.into_iter().map(options::session_for_page).collect::<Vec<_>>())
        })
    }

    /// One session, with its state register in `state`.
    #[wasm_bindgen(js_name = getSession, unchecked_return_type = "Promise<Session>")]
    pub fn get_session(&self, session_id: String) -> Promise {
        let op = required("getSession", "session_id", &session_id).map(|()| ops::SessionDetails { session_id });
        self.request("getSession", op, |details| session_js(details.session))
    }

    /// Everything needed to pick a session up again: the session (with its state register), its last
    /// turns (oldest first) and its delegated tasks that have not finished or not been delivered.
    #[wasm_bindgen(unchecked_return_type = "Promise<Resumed>")]
    pub fn resume(&self, session_id: String, options: Option<ResumeOptionsArg>) -> Promise {
        let op = required("resume", "session_id", &session_id)
            .and_then(|()| options_from::<ResumeOptions>("resume", options))
            .map(|o| ops::Resume { session_id, last_turns: o.last_turns });
        self.request("resume", op, |resumed| {
            let session = options::session_for_page(resumed.session);
            let state = session.state.clone();
            to_js(&serde_json::json!({
                "session": session, "state": state, "turns": resumed.turns, "pending_tasks": resumed.pending_tasks,
            }))
        })
    }

    /// A new session holding turns 1..=`at_turn` of `session_id` (shared with it, not copied).
    #[wasm_bindgen(js_name = forkSession, unchecked_return_type = "Promise<Session>")]
    pub fn fork_session(&self, session_id: String, at_turn: f64) -> Promise {
        let op = required("forkSession", "session_id", &session_id).and_then(|()| {
            if at_turn.fract() != 0.0 || at_turn < 1.0 {
                return Err(error("forkSession", "at_turn must be a turn number (1 or more)"));
            }
            Ok(ops::ForkSession { session_id, at_turn: at_turn as i64 })
        });
        self.request("forkSession", op, session_js)
    }

    /// Renames a session.
    #[wasm_bindgen(js_name = renameSession, unchecked_return_type = "Promise<Session>")]
    pub fn rename_session(&self, session_id: String, title: String) -> Promise {
        self.request("renameSession", Ok(ops::RenameSession { session_id, title }), session_js)
    }

    /// Deletes a session and its own turns for good (its forks keep what they inherited).
    #[wasm_bindgen(js_name = deleteSession, unchecked_return_type = "Promise<void>")]
    pub fn delete_session(&self, session_id: String) -> Promise {
        self.request("deleteSession", Ok(ops::DeleteSession { session_id }), done)
    }

    /// Appends one turn, committed before the promise resolves. Only `role` is required.
    /// `attachments` (`Blob`s or `File`s: the name from `File.name`, the type from `Blob.type`) are
    /// saved with it, each content once.
    #[wasm_bindgen(js_name = appendTurn, unchecked_return_type = "Promise<Turn>")]
    pub fn append_turn(
        &self,
        session_id: String,
        #[wasm_bindgen(unchecked_param_type = "NewTurn")] turn: JsValue,
        attachments: Option<BlobsArg>,
    ) -> Promise {
        const WHAT: &str = "appendTurn";
        let op = required(WHAT, "session_id", &session_id).and_then(|()| {
            let init: TurnInit =
                serde_wasm_bindgen::from_value(turn).map_err(|e| error(WHAT, format!("turn: {}", swb(e))))?;
            let turn = init.into_new_turn().map_err(|e| error(WHAT, e))?;
            let files = convert::blobs(WHAT, attachments.map(JsValue::from))?;
            let max_attachment_bytes = self.shared.settings.borrow().attachment_limit();
            Ok((ops::AppendTurn { session_id, turn, attachments: Vec::new(), max_attachment_bytes }, files))
        });
        self.request_with_files(WHAT, op, |turn| to_js(&turn))
    }

    /// Turns of a session in order, `limit` (default 100, at most 1,000) from `offset` (default 0).
    #[wasm_bindgen(js_name = readTurns, unchecked_return_type = "Promise<Turn[]>")]
    pub fn read_turns(&self, session_id: String, options: Option<ReadTurnsOptionsArg>) -> Promise {
        const WHAT: &str = "readTurns";
        let op = required(WHAT, "session_id", &session_id)
            .and_then(|()| options_from::<ReadOptions>(WHAT, options))
            .and_then(|o| {
                let limit = o.limit().map_err(|e| error(WHAT, e))?;
                Ok(ops::GetTurns { session_id, offset: o.offset, limit })
            });
        self.request(WHAT, op, |turns| to_js(&turns))
    }

    /// Full-text search, best first; any text is safe (quotes, `*`, `NEAR(` … are searched as words).
    #[wasm_bindgen(unchecked_return_type = "Promise<SearchHit[]>")]
    pub fn search(&self, text: String, options: Option<SearchOptionsArg>) -> Promise {
        let op = options_from::<SearchOptions>("search", options)
            .and_then(|o| o.query(text).map_err(|e| error("search", e)))
            .map(|query| ops::Search { query });
        self.request("search", op, |hits| to_js(&hits))
    }

    /// Runs `conversation_recall` as the model would and resolves with the text it would get. `request`
    /// is the tool's arguments: `{action: "search", query}`, `{action: "range", start, end}`,
    /// `{action: "tool_calls", tool_name}` or `{action: "summary"}`. A bad request resolves with the
    /// "recall error: …" text the model would see.
    #[wasm_bindgen(unchecked_return_type = "Promise<string>")]
    pub fn recall(
        &self,
        session_id: String,
        #[wasm_bindgen(unchecked_param_type = "RecallRequest")] request: JsValue,
    ) -> Promise {
        const WHAT: &str = "recall";
        let op = required(WHAT, "session_id", &session_id).and_then(|()| {
            let arguments = match request.as_string() {
                Some(text) => text,
                None => js_sys::JSON::stringify(&request)
                    .map(String::from)
                    .map_err(|e| error(WHAT, format!("request is not JSON: {}", message_of(&e))))?,
            };
            Ok(ops::Recall { session_id, arguments })
        });
        self.request(WHAT, op, text)
    }

    /// The context the agent loop would send next for the session: the messages within the token
    /// budget (system prompt with the state register, then the most recent turns that fit), the
    /// manifest (which turns, estimated tokens, budget) and the tools offered. Nothing is sent.
    #[wasm_bindgen(js_name = assembleContext, unchecked_return_type = "Promise<AssembledContext>")]
    pub fn assemble_context(&self, session_id: String, options: Option<RequestOptionsArg>) -> Promise {
        const WHAT: &str = "assembleContext";
        let op = required(WHAT, "session_id", &session_id)
            .and_then(|()| self.request_parts(WHAT, options))
            .map(|(model, host)| ops::AssembleContext { session_id, model, host });
        self.request(WHAT, op, |context| to_js(&context))
    }

    /// Saves the user's message, then runs the agent loop: the model is called with the assembled
    /// context, may search the archive, delegate, or call the page's tools, and every step is
    /// committed. Resolves when the reply ends (`outcome` is "done", "interrupted: …" or "stopped
    /// after N model calls"); rejects with the reason when the model cannot be used (the message
    /// stays saved). Progress arrives as events (`on("delta", …)`, `on("tool", …)`, …).
    ///
    /// `options.attachments` (`Blob`s or `File`s) go with the message: saved with it, images sent to
    /// the model as images, text files inline; one over the size limit (`model.max_attachment_bytes`,
    /// default 20 MB) rejects with kind `attachment_too_large` and nothing is saved.
    #[wasm_bindgen(unchecked_return_type = "Promise<SendResult>")]
    pub fn send(&self, session_id: String, text: String, options: Option<RequestOptionsArg>) -> Promise {
        const WHAT: &str = "send";
        let op = required(WHAT, "session_id", &session_id)
            .and_then(|()| required(WHAT, "text", &text))
            .and_then(|()| convert::split_attachments(WHAT, options))
            .and_then(|(options, files)| {
                let (model, host) = self.request_parts(WHAT, options)?;
                let key = cowork_web::protocol::random_key();
                let session_id = Some(session_id);
                let (workspace, attachments) = (String::new(), Vec::new());
                let offline = false;
                let message = ops::Outgoing { text, model, key, host, attachments };
                Ok((ops::SendMessage { session_id, workspace, message, offline }, files))
            });
        self.request_with_files(WHAT, op, sent)
    }

    /// The exact bytes of an attachment, by the `sha256` of a turn's `attachments`, as a `Blob` of its
    /// type (for an `<img>` through `URL.createObjectURL`, or a download).
    #[wasm_bindgen(js_name = readAttachment, unchecked_return_type = "Promise<Blob>")]
    pub fn read_attachment(&self, sha256: String) -> Promise {
        const WHAT: &str = "readAttachment";
        let op = required(WHAT, "sha256", &sha256).map(|()| ops::ReadAttachment { sha256 });
        self.request(WHAT, op, convert::attachment_blob)
    }

    /// Runs the agent loop again from the session's end (after an interrupted or failed reply).
    #[wasm_bindgen(js_name = continueSession, unchecked_return_type = "Promise<SendResult>")]
    pub fn continue_session(&self, session_id: String, options: Option<RequestOptionsArg>) -> Promise {
        const WHAT: &str = "continueSession";
        let op = required(WHAT, "session_id", &session_id)
            .and_then(|()| self.request_parts(WHAT, options))
            .map(|(model, host)| ops::Continue { session_id, model, host });
        self.request(WHAT, op, sent)
    }

    /// Stops the reply being streamed, if any (its text so far is saved as an interrupted turn), and
    /// ends any wait for an approval or a tool's answer.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn stop(&self) -> Promise {
        self.request("stop", Ok(ops::Stop), done)
    }

    /// Offers a tool of this page to the model in every later request. `handler(args, call)` gets the
    /// parsed arguments and `{call_id, name}`; what it returns (or resolves to) is the result: a
    /// string as it is, anything else as JSON. A throw (or rejection) is a failed call whose message
    /// the model sees. `approval: "ask"` asks the approval handler before each call. Registering a
    /// name again replaces the tool.
    #[wasm_bindgen(js_name = registerTool)]
    pub fn register_tool(
        &self,
        #[wasm_bindgen(unchecked_param_type = "HostTool")] tool: JsValue,
    ) -> Result<(), JsValue> {
        const WHAT: &str = "registerTool";
        let handler = Reflect::get(&tool, &"handler".into())
            .ok()
            .and_then(|h| h.dyn_into::<Function>().ok())
            .ok_or_else(|| error(WHAT, "the tool needs a handler function"))?;
        let init: ToolInit = {
            let plain_tool = Object::assign(&Object::new(), tool.unchecked_ref());
            let _ = Reflect::delete_property(&plain_tool, &"handler".into());
            plain(plain_tool.into()).map_err(|e| error(WHAT, e))?
        };
        let spec = init.into_spec().map_err(|e| error(WHAT, e))?;
        self.shared.tools.borrow_mut().insert(spec.name.clone(), (spec, handler));
        Ok(())
    }

    /// Stops offering a tool; `true` if it was registered.
    #[wasm_bindgen(js_name = unregisterTool)]
    pub fn unregister_tool(&self, name: String) -> bool {
        self.shared.tools.borrow_mut().remove(&name).is_some()
    }

    /// The names of the page's registered tools.
    #[wasm_bindgen(js_name = listTools)]
    pub fn list_tools(&self) -> Vec<String> {
        self.shared.tools.borrow().keys().cloned().collect()
    }

    /// Decides on tool calls that need approval (the page's tools with `approval: "ask"`, and
    /// `delegate_task`): `handler({call_id, name, arguments})` returns (or resolves to) `true` to run
    /// the call. Without a handler such calls are declined, and the model is told.
    #[wasm_bindgen(js_name = setApprovalHandler)]
    pub fn set_approval_handler(
        &self,
        #[wasm_bindgen(unchecked_param_type = "((request: ApprovalRequest) => boolean | Promise<boolean>) | null")]
        handler: JsValue,
    ) -> Result<(), JsValue> {
        let handler = match handler {
            h if h.is_null() || h.is_undefined() => None,
            h => {
                Some(h.dyn_into::<Function>().map_err(|_| error("setApprovalHandler", "expected a function or null"))?)
            }
        };
        *self.shared.approval.borrow_mut() = handler;
        Ok(())
    }

    /// Calls `handler` with each event of this kind; returns a function that stops it. See
    /// `ArchiveEvents` for the kinds and their payloads; `turn`, `session` and `sessions` include
    /// changes made by other tabs and the Cowork app.
    #[wasm_bindgen(skip_typescript)]
    pub fn on(&self, event: String, handler: Function) -> Result<Function, JsValue> {
        const KINDS: [&str; 8] = ["turn", "session", "sessions", "delta", "tool", "task", "retry", "error"];
        if !KINDS.contains(&event.as_str()) {
            return Err(error("on", format!("unknown event {event:?}; one of {}", KINDS.join(", "))));
        }
        let id = self.shared.next_listener.get();
        self.shared.next_listener.set(id + 1);
        self.shared.listeners.borrow_mut().push((id, event, handler));
        let shared = Rc::downgrade(&self.shared);
        // Calling it again does nothing.
        let off = Closure::<dyn FnMut()>::new(move || {
            if let Some(shared) = shared.upgrade() {
                shared.listeners.borrow_mut().retain(|(i, _, _)| *i != id);
            }
        });
        Ok(off.into_js_value().unchecked_into())
    }

    /// The whole archive (or one session) as JSON Lines, the app's export format.
    #[wasm_bindgen(js_name = exportJsonl, unchecked_return_type = "Promise<string>")]
    pub fn export_jsonl(&self, session_id: Option<String>) -> Promise {
        match session_id {
            Some(session_id) => self.request("exportJsonl", Ok(ops::ExportSession { session_id }), text),
            None => self.request("exportJsonl", Ok(ops::ExportAll), text),
        }
    }

    /// Adds the sessions of a JSON Lines export (all or nothing; the error names the bad line);
    /// resolves with a summary.
    #[wasm_bindgen(js_name = importJsonl, unchecked_return_type = "Promise<string>")]
    pub fn import_jsonl(&self, text: String) -> Promise {
        self.request("importJsonl", Ok(ops::Import { text }), convert::text)
    }

    /// Closes the archive and ends its worker (another tab, or a later `openArchive`, can then open
    /// it at once). Later calls reject.
    pub fn close(&self) {
        if !self.closed.replace(true) {
            self.client.set_tool_runner(None);
            self.client.release();
        }
    }
}

/// The module's version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
