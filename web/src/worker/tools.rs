//! The worker's tool host: the page's tools (offered per request, each call run by the page that sent
//! the request) and the user's approvals, asked in that page.

use crate::protocol::{ops, Event, HostToolSpec};
use cowork_core::agent::{ToolHost, ToolOutcome};
use cowork_core::prompt::ApprovalPolicy;
use cowork_core::ToolCall;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Where one request's events go.
pub(super) type EventSink = Rc<dyn Fn(Event)>;

/// Where the answer of a call the page runs goes.
type Running = futures_channel::oneshot::Sender<ToolOutcome>;

/// The worker's tool host: the page's tools (offered per request, each call run by the page that
/// sent the request, see [`Event::ToolRequested`]); approvals are asked of the user in that page.
#[derive(Clone, Default)]
pub struct WorkerTools {
    /// Where the events of the request being served go (approval and tool requests belong to it).
    pub(super) sink: Rc<RefCell<Option<EventSink>>>,
    waiting: Rc<RefCell<HashMap<String, futures_channel::oneshot::Sender<bool>>>>,
    /// The page's tools offered with the request being served (its MCP servers' tools among them).
    host: Rc<RefCell<Vec<HostToolSpec>>>,
    /// The calls the page runs now, by call id.
    running: Rc<RefCell<HashMap<String, Running>>>,
    /// Recall by meaning, when this worker owns the archive: recall's searches embed their query.
    pub(super) semantic: Option<Rc<super::semantic::SemanticRunner>>,
}

impl WorkerTools {
    /// A tool host whose recall searches by meaning through `semantic` once its model is loaded.
    pub(super) fn with_semantic(semantic: Rc<super::semantic::SemanticRunner>) -> WorkerTools {
        WorkerTools { semantic: Some(semantic), ..WorkerTools::default() }
    }

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

    /// Stop: whatever waits for an approval or a tool's answer ends now (a "no", a call failed as
    /// stopped; the page stops its MCP calls itself, `notifications/cancelled` to their servers).
    pub(super) fn cancel_waits(&self) {
        self.waiting.borrow_mut().clear();
        let running: Vec<_> = self.running.borrow_mut().drain().map(|(_, tx)| tx).collect();
        for tx in running {
            let _ = tx.send(ToolOutcome::text("The call was stopped by the user before it answered.", false));
        }
    }

    /// Asks the page that sent the request for the tools of `servers` (the session's workspace's MCP
    /// servers) and offers them beside its own; a page that cannot offer them offers none.
    pub(super) async fn offer_mcp(&self, servers: &[serde_json::Value]) {
        let (tx, rx) = futures_channel::oneshot::channel();
        let call_id = ops::MCP_OFFER.to_owned();
        self.running.borrow_mut().insert(call_id.clone(), tx);
        let arguments = serde_json::to_string(servers).unwrap_or_default();
        self.emit(Event::ToolRequested { call_id, name: ops::MCP_OFFER.into(), arguments });
        let specs = rx.await.ok().and_then(|o| serde_json::from_str::<Vec<HostToolSpec>>(&o.content).ok());
        let mut host = self.host.borrow_mut();
        for spec in specs.unwrap_or_default() {
            if !host.iter().any(|t| t.name == spec.name) && cowork_core::prompt::approval_policy(&spec.name).is_none() {
                host.push(spec);
            }
        }
    }

    /// The page's tools for the request about to be served (names of built-in tools are not taken).
    pub(super) fn offer(&self, tools: &[HostToolSpec]) {
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
    async fn embed_query(&self, text: &str) -> Option<(Vec<f32>, String)> {
        match &self.semantic {
            Some(semantic) if semantic.ready() => semantic.embed_query(text).await,
            _ => None,
        }
    }

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
            return ToolOutcome::text(format!("Error: there is no tool named {:?}.", call.name), false);
        }
        let (tx, rx) = futures_channel::oneshot::channel();
        self.running.borrow_mut().insert(call.id.clone(), tx);
        self.emit(Event::ToolRequested {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        });
        rx.await.unwrap_or_else(|_| {
            ToolOutcome::text(
                format!(
                    "Error: the tool {:?} did not answer: it was stopped, or the page that runs it went away.",
                    call.name
                ),
                false,
            )
        })
    }
}
