//! The worker's side of Settings → Tools: asking a server what it offers, and keeping its bearer
//! token. The MCP module (`web/mcp/`, bundled as `dist/mcp-<hash>.js`, global `CoworkMcp`) is loaded
//! with `importScripts` when asked. The calls the model makes are the page's (`web/mcp/host.mjs`): the
//! worker knows MCP tools only as page tools. Bearer tokens live in this origin's private file
//! system, in a file of their own ([`SECRETS_FILE`]), never in the archive, an export or a sync
//! message; a server signed in to with OAuth has its tokens, registration and PKCE verifier kept by
//! the module in another such file (`web/mcp/signin.mjs`), which Sign out empties.

use crate::protocol::{McpListed, McpState, McpStatus};
use cowork_core::mcp::{self, McpServer};
use js_sys::{Function, Promise, Reflect, JSON};
use serde_json::{json, Value};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

pub mod composer;

/// The global the MCP module defines when loaded.
const GLOBAL: &str = "CoworkMcp";

/// The file (in the origin private file system's root, beside the archive's folder) that keeps each
/// server's bearer token by server id: `{"<id>": "<token>"}`.
pub const SECRETS_FILE: &str = "cowork-mcp-secrets.json";

/// A failure as the MCP module throws it (`{kind, message}`).
#[derive(Debug, Clone)]
pub struct McpError {
    kind: String,
    message: String,
}

impl McpError {
    fn from_js(e: JsValue) -> McpError {
        let kind = get(&e, "kind").as_string().unwrap_or_else(|| "protocol".into());
        let message = get(&e, "message").as_string().or_else(|| e.as_string()).unwrap_or_else(|| format!("{e:?}"));
        McpError { kind, message }
    }

    fn new(kind: &str, message: impl Into<String>) -> McpError {
        McpError { kind: kind.into(), message: message.into() }
    }

    /// The state a server that failed so is in.
    fn state(&self) -> McpState {
        match self.kind.as_str() {
            "cors" => McpState::NoCors,
            "unreachable" => McpState::Unreachable,
            "unauthorized" => McpState::NeedsSignIn,
            _ => McpState::Failed,
        }
    }
}

/// Connects to `server` and lists what it offers, for Settings → Tools (a connection of its own,
/// closed after). With `sign_in` (the nonce of the sign-in window the page opened), a server that asks
/// for OAuth is signed in to through that window; with `sign_out`, this device forgets its sign-in first.
pub async fn probe(server: &McpServer, module_url: &str, sign_in: Option<&str>, sign_out: bool) -> McpStatus {
    let mut status = McpStatus { server_id: server.id.clone(), ..McpStatus::default() };
    let fail = |mut status: McpStatus, e: McpError| {
        status.state = e.state();
        // The module's message names the cause and, for a server a page cannot reach, the README's bridge.
        status.message = e.message;
        status
    };
    let module = match load_module(module_url) {
        Ok(m) => m,
        Err(e) => return fail(status, e),
    };
    if sign_out {
        if let Err(e) = call(&module, "signOut", &[server.id.as_str().into()]).await {
            return fail(
                status,
                McpError::new("storage", format!("the sign-in could not be forgotten: {}", e.message)),
            );
        }
    }
    let secrets = secrets().await;
    let conn = match connect(&module, server, secrets[&server.id].as_str().unwrap_or_default(), sign_in).await {
        Ok(c) => c,
        Err(e) => return fail(status, e),
    };
    let listed = |v: Value, key: &str| -> Vec<McpListed> {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|t| McpListed {
                name: t[key].as_str().unwrap_or_default().to_owned(),
                description: t["description"].as_str().or(t["title"].as_str()).unwrap_or_default().to_owned(),
                read_only: t["annotations"]["readOnlyHint"] == json!(true)
                    && t["annotations"]["destructiveHint"] != json!(true),
            })
            .collect()
    };
    match call(&conn, "listTools", &[]).await {
        Ok(tools) => status.tools = listed(to_json(&tools), "name"),
        Err(e) => return fail(status, e),
    }
    // Resources and prompts are optional capabilities: a server without them lists none.
    status.resources = listed(call(&conn, "listResources", &[]).await.map(|v| to_json(&v)).unwrap_or_default(), "uri");
    status.prompts = listed(call(&conn, "listPrompts", &[]).await.map(|v| to_json(&v)).unwrap_or_default(), "name");
    let _ = call(&conn, "close", &[]).await;
    status.state = McpState::Connected;
    status.message = format!("Connected: {} tools.", status.tools.len());
    status
}

async fn connect(
    module: &JsValue,
    server: &McpServer,
    token: &str,
    sign_in: Option<&str>,
) -> Result<JsValue, McpError> {
    let mut options = json!({"url": server.url, "name": server.name, "allowSampling": false});
    if server.auth == mcp::McpAuth::Oauth {
        options["oauth"] = json!({"store": server.id, "signIn": sign_in});
    } else if !token.is_empty() {
        options["headers"] = json!({"Authorization": format!("Bearer {token}")});
    }
    call(module, "connect", &[from_json(&options)]).await
}

/// Loads the MCP module once and returns its namespace.
fn load_module(url: &str) -> Result<JsValue, McpError> {
    let global = js_sys::global();
    let loaded = get(&global, GLOBAL);
    if !loaded.is_undefined() {
        return Ok(loaded);
    }
    let missing = || {
        McpError::new("module", "the MCP module could not be loaded (is the app offline since before its first use?)")
    };
    if url.is_empty() {
        return Err(missing());
    }
    let import: Function = get(&global, "importScripts").dyn_into().map_err(|_| missing())?;
    import.call1(&global, &url.into()).map_err(|_| missing())?;
    Some(get(&global, GLOBAL)).filter(|m| !m.is_undefined()).ok_or_else(missing)
}

fn get(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

/// Calls `target.name(...args)` and awaits it when it is a promise.
async fn call(target: &JsValue, name: &str, args: &[JsValue]) -> Result<JsValue, McpError> {
    let f: Function =
        get(target, name).dyn_into().map_err(|_| McpError::new("protocol", format!("the MCP module has no {name}")))?;
    let args: js_sys::Array = args.iter().collect();
    let value = f.apply(target, &args).map_err(McpError::from_js)?;
    match value.dyn_into::<Promise>() {
        Ok(p) => JsFuture::from(p).await.map_err(McpError::from_js),
        Err(v) => Ok(v),
    }
}

fn to_json(v: &JsValue) -> Value {
    JSON::stringify(v).ok().and_then(|s| s.as_string()).and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default()
}

fn from_json(v: &Value) -> JsValue {
    JSON::parse(&v.to_string()).unwrap_or(JsValue::NULL)
}

/// The secrets file's handle in the origin private file system.
async fn secrets_file() -> Result<JsValue, McpError> {
    let storage = get(&get(&js_sys::global(), "navigator"), "storage");
    let dir = call(&storage, "getDirectory", &[]).await?;
    let options = from_json(&json!({"create": true}));
    call(&dir, "getFileHandle", &[SECRETS_FILE.into(), options]).await
}

/// Every server's token by id (`{}` when there are none, or the file cannot be read).
async fn secrets() -> Value {
    let read = async {
        let file = call(&secrets_file().await?, "getFile", &[]).await?;
        call(&file, "text", &[]).await
    };
    read.await.ok().and_then(|t| t.as_string()).and_then(|t| serde_json::from_str(&t).ok()).unwrap_or(json!({}))
}

/// Keeps `token` as server `server_id`'s (an empty token forgets it).
pub async fn set_token(server_id: &str, token: &str) -> Result<(), String> {
    let mut all = secrets().await;
    match token.trim() {
        "" => drop(all.as_object_mut().and_then(|m| m.remove(server_id))),
        t => all[server_id] = json!(t),
    }
    let write = async {
        let writable = call(&secrets_file().await?, "createWritable", &[]).await?;
        call(&writable, "write", &[all.to_string().into()]).await?;
        call(&writable, "close", &[]).await
    };
    write.await.map(|_| ()).map_err(|e| format!("the token could not be kept: {}", e.message))
}
