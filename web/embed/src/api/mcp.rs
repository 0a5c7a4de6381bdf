//! `addMcpServer`: an MCP server for a workspace (spec §16). Its tools are then offered in that
//! workspace's replies beside the page's own tools (the page's MCP host, `web/mcp/host.mjs`, runs
//! them; `web/src/client/mcp.rs`), each call asked of the approval handler by its policy, and seen in
//! the `tool` events like any other.

use super::convert::{error, options_from, storage_error, to_js};
use super::Archive;
use cowork_web::protocol::ops;
use js_sys::Promise;
use serde::Deserialize;
use serde_json::json;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "McpServerOptions")]
    pub type McpServerOptionsArg;
}

/// `addMcpServer(url, options)`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct McpOptions {
    /// The name its tools are offered under (`<name>__<tool>`); default: the URL's host.
    name: Option<String>,
    /// A bearer token, kept in this browser outside the archive.
    token: Option<String>,
    /// The workspace whose sessions use it (default: the one `createSession` uses).
    workspace: String,
    /// Whether a call asks first: "always_ask", "ask_unless_read_only" (the default: unless the tool
    /// says it only reads) or "never_ask".
    policy: Option<Policy>,
}

/// A tool's approval policy, as the page's MCP module reads it (`web/mcp/servers.mjs`).
#[derive(Debug, Clone, Copy, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum Policy {
    AlwaysAsk,
    #[default]
    AskUnlessReadOnly,
    NeverAsk,
}

/// The MCP client, copied next to this module by the build (`scripts/embed.sh`).
pub(crate) fn bundle_url() -> String {
    web_sys::Url::new_with_base("../../mcp.js", &super::module_url()).map(|u| u.href()).unwrap_or_default()
}

#[wasm_bindgen]
impl Archive {
    /// Adds the MCP server at `url` (Streamable HTTP, or a legacy SSE endpoint; it must send CORS
    /// headers for this page) to a workspace: from the next reply on, its tools are offered in the
    /// workspace's sessions beside this page's tools. Resolves with the server as the workspace keeps
    /// it (no token in it).
    #[wasm_bindgen(js_name = addMcpServer, unchecked_return_type = "Promise<McpServer>")]
    pub fn add_mcp_server(&self, url: String, options: Option<McpServerOptionsArg>) -> Promise {
        const WHAT: &str = "addMcpServer";
        let client = self.client.clone();
        let parsed = options_from::<McpOptions>(WHAT, options);
        future_to_promise(async move {
            let o = parsed?;
            let url = url.trim().to_owned();
            let host = web_sys::Url::new(&url).ok().filter(|u| u.protocol() == "http:" || u.protocol() == "https:");
            let Some(host) = host.map(|u| u.hostname()) else {
                return Err(error(WHAT, format!("{url:?} is not an http(s) URL of an MCP server")));
            };
            let name = o.name.map(|n| n.trim().to_owned()).unwrap_or(host);
            if name.is_empty() {
                return Err(error(WHAT, "the server needs a name (its tools are offered as <name>__<tool>)"));
            }
            let workspace = o.workspace;
            let mut settings = client
                .call(ops::WorkspaceSettings { workspace: workspace.clone() })
                .await
                .map_err(|e| storage_error(WHAT, &e))?;
            if settings.mcp_servers.iter().any(|s| s["name"] == name.as_str()) {
                return Err(error(
                    WHAT,
                    format!("workspace {workspace:?} already has a server named {name:?}; give this one another name"),
                ));
            }
            let token = o.token.unwrap_or_default().trim().to_owned();
            let id = cowork_web::protocol::random_key();
            let auth = if token.is_empty() { "none" } else { "bearer" };
            let policy = o.policy.unwrap_or_default();
            let server = json!({"id": id, "name": name, "url": url, "auth": auth, "enabled": true, "policy": policy});
            if !token.is_empty() {
                cowork_web::mcp::call("setToken", &[id.as_str().into(), token.into()])
                    .await
                    .map_err(|e| error(WHAT, format!("the token could not be kept in this browser: {e}")))?;
            }
            settings.mcp_servers.push(server.clone());
            client.call(ops::SaveWorkspaceSettings { settings }).await.map_err(|e| storage_error(WHAT, &e))?;
            to_js(&server).map_err(|e| error(WHAT, e))
        })
    }
}
