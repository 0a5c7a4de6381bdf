//! The session's MCP servers' tools in the page's requests (spec §16). Before a request for a reply
//! is posted, the enabled MCP servers of the session's workspace offer their tools with it, as page
//! tools (the MCP bundle's `offer`, `web/mcp/host.mjs`, loaded only for a workspace that has one);
//! the model's call of one runs in the page (`call`), its `CallToolResult` sent back whole for the
//! archive; Stop stops them (`abort`, which sends `notifications/cancelled`). The app and the
//! embedding API both send through here.

use super::StorageClient;
use crate::protocol::{ops, HostToolSpec, Op};
use serde_json::Value;

impl StorageClient {
    /// Adds the MCP tools of the session's workspace to `op`'s page tools, when `op` asks for a reply
    /// (a server that cannot be reached offers none; the reply goes on without it).
    pub(super) async fn offer_mcp(&self, op: &mut Op) {
        let (session_id, workspace, host) = match op {
            Op::SendMessage(c) if !c.offline => (c.session_id.clone(), c.workspace.clone(), &mut c.message.host),
            Op::EditMessage(c) => (Some(c.session_id.clone()), String::new(), &mut c.message.host),
            Op::Continue(c) => (Some(c.session_id.clone()), String::new(), &mut c.host),
            Op::Regenerate(c) => (Some(c.session_id.clone()), String::new(), &mut c.host),
            _ => return,
        };
        let workspace = match session_id {
            Some(session_id) => match self.call(ops::SessionDetails { session_id }).await {
                Ok(details) => details.session.workspace,
                Err(_) => return,
            },
            None => workspace,
        };
        let Ok(settings) = self.call(ops::WorkspaceSettings { workspace }).await else { return };
        if !settings.mcp_servers.iter().any(|s| s.enabled) {
            return;
        }
        let servers = serde_json::to_string(&settings.mcp_servers).unwrap_or_default();
        let specs = match crate::mcp::call("offer", &[servers.into()]).await {
            Ok(specs) => serde_json::from_value::<Vec<HostToolSpec>>(json_of(&specs)).unwrap_or_default(),
            Err(e) => {
                web_sys::console::warn_1(&format!("MCP tools are not offered: {e}").into());
                return;
            }
        };
        let taken: Vec<String> = host.tools.iter().map(|t| t.name.clone()).collect();
        let specs: Vec<HostToolSpec> = specs.into_iter().filter(|s| !taken.contains(&s.name)).collect();
        *self.inner.mcp_tools.borrow_mut() = specs.iter().map(|s| s.name.clone()).collect();
        host.tools.extend(specs);
    }

    /// Stop: the MCP calls in flight are aborted (when the MCP bundle was used at all).
    pub(super) async fn abort_mcp(&self) {
        if !self.inner.mcp_tools.borrow().is_empty() {
            let _ = crate::mcp::call("abort", &[]).await;
        }
    }
}

/// Whether `name` is one of the offered MCP tools.
pub(super) fn offered(inner: &super::Inner, name: &str) -> bool {
    inner.mcp_tools.borrow().iter().any(|n| n == name)
}

/// Runs the offered MCP tool `name` in the page: its answer as the model reads it, whether it
/// succeeded, and the server's `CallToolResult` (none when the call failed).
pub(super) async fn run(call_id: &str, name: &str, arguments: &str) -> ops::ToolResult {
    let (content, success, result) =
        match crate::mcp::call("call", &[name.into(), arguments.into(), call_id.into()]).await {
            Ok(answer) => {
                let mut answer = json_of(&answer);
                let result = Some(answer["result"].take()).filter(|r| !r.is_null());
                (answer["content"].as_str().unwrap_or_default().to_owned(), answer["success"] == true, result)
            }
            Err(e) => (e, false, None),
        };
    ops::ToolResult { call_id: call_id.to_owned(), content, success, result }
}

fn json_of(v: &wasm_bindgen::JsValue) -> Value {
    js_sys::JSON::stringify(v)
        .ok()
        .and_then(|s| s.as_string())
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default()
}
