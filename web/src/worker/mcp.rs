//! The worker's MCP host: a workspace's MCP servers' tools offered to the agent loop. The MCP module
//! (`web/mcp/`, bundled as `dist/mcp-<hash>.js`, global `CoworkMcp`) is loaded with `importScripts`
//! only when a server is enabled for the session's workspace; one connection per server is kept and
//! reused. Bearer tokens live in this origin's private file system, in a file of their own
//! ([`SECRETS_FILE`]), never in the archive, an export or a sync message; a server signed in to with
//! OAuth has its tokens, registration and PKCE verifier kept by the module in another such file
//! (`web/mcp/signin.mjs`), which Sign out empties.

use cowork_core::agent::ToolOutcome;
use cowork_core::mcp::{self, McpServer};
use js_sys::{Function, Promise, Reflect, JSON};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

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
}

/// A connection, with the tools it listed.
#[derive(Clone)]
struct Conn {
    /// What it was opened with (URL and token): a change opens a new one.
    key: String,
    js: JsValue,
    tools: Vec<Value>,
}

/// A server's tool offered to the request being served.
#[derive(Clone)]
struct Offered {
    name: String,
    server: String,
    tool: String,
    asks: bool,
    definition: Value,
    conn: JsValue,
    server_id: String,
}

/// The MCP servers' connections and the tools offered to the request being served.
#[derive(Default)]
pub struct McpHost {
    conns: RefCell<HashMap<String, Conn>>,
    offered: RefCell<Vec<Offered>>,
    aborts: RefCell<Vec<web_sys::AbortController>>,
}

impl McpHost {
    /// Offers the tools of `servers` that are enabled (connecting where not connected yet), at most
    /// [`mcp::MAX_TOOLS`]; a server that cannot be reached offers none.
    pub async fn prepare(&self, servers: &[McpServer], module_url: &str) {
        self.offered.borrow_mut().clear();
        let enabled: Vec<&McpServer> = servers.iter().filter(|s| s.enabled).collect();
        if enabled.is_empty() {
            return;
        }
        let Ok(module) = load_module(module_url) else { return };
        let secrets = secrets().await;
        let mut offered: Vec<Offered> = Vec::new();
        for server in enabled {
            let Ok(conn) = self.connection(&module, server, &secrets).await else { continue };
            for tool in &conn.tools {
                let Some(tool_name) = tool["name"].as_str() else { continue };
                let name = mcp::tool_name(&server.name, tool_name);
                if offered.len() >= mcp::MAX_TOOLS || offered.iter().any(|o| o.name == name) {
                    continue;
                }
                offered.push(Offered {
                    definition: mcp::definition(&name, tool),
                    asks: mcp::asks(server.policy_of(tool_name), &tool["annotations"]),
                    name,
                    server: server.name.clone(),
                    tool: tool_name.to_owned(),
                    conn: conn.js.clone(),
                    server_id: server.id.clone(),
                });
            }
        }
        *self.offered.borrow_mut() = offered;
    }

    async fn connection(&self, module: &JsValue, server: &McpServer, secrets: &Value) -> Result<Conn, McpError> {
        let token = secrets[&server.id].as_str().unwrap_or_default();
        let key = format!("{}\n{token}", server.url);
        if let Some(conn) = self.conns.borrow().get(&server.id).filter(|c| c.key == key) {
            return Ok(conn.clone());
        }
        let js = connect(module, server, token, None).await?;
        let tools = match to_json(&call(&js, "listTools", &[]).await?) {
            Value::Array(tools) => tools,
            _ => Vec::new(),
        };
        let conn = Conn { key, js, tools };
        self.conns.borrow_mut().insert(server.id.clone(), conn.clone());
        Ok(conn)
    }

    /// The offered tools' definitions (OpenAI function format).
    pub fn definitions(&self) -> Vec<Value> {
        self.offered.borrow().iter().map(|o| o.definition.clone()).collect()
    }

    /// Whether `name` is an offered MCP tool, and if so whether its call asks first.
    pub fn asks(&self, name: &str) -> Option<bool> {
        self.offered.borrow().iter().find(|o| o.name == name).map(|o| o.asks)
    }

    /// The server and the server's name of tool `name`, when it is an offered MCP tool.
    pub fn callee(&self, name: &str) -> Option<(String, String)> {
        self.offered.borrow().iter().find(|o| o.name == name).map(|o| (o.server.clone(), o.tool.clone()))
    }

    /// Runs the offered tool `name` (Stop aborts it: the module sends `notifications/cancelled`).
    pub async fn call(&self, name: &str, arguments: &str) -> Option<ToolOutcome> {
        let offered = self.offered.borrow().iter().find(|o| o.name == name).cloned()?;
        let args: Value = serde_json::from_str(arguments).unwrap_or_else(|_| json!({}));
        let abort = web_sys::AbortController::new().ok();
        let options = js_sys::Object::new();
        if let Some(a) = &abort {
            let _ = Reflect::set(&options, &"signal".into(), &a.signal());
            self.aborts.borrow_mut().push(a.clone());
        }
        let ran =
            call(&offered.conn, "callTool", &[offered.tool.as_str().into(), from_json(&args), options.into()]).await;
        self.aborts.borrow_mut().clear();
        Some(match ran {
            Ok(result) => {
                let parts = mcp::result_parts(&to_json(&result));
                ToolOutcome {
                    content: parts.content,
                    success: parts.success,
                    result: Some(parts.result),
                    attachments: parts.attachments,
                }
            }
            Err(e) => {
                if matches!(e.kind.as_str(), "closed" | "unreachable" | "unauthorized") {
                    self.conns.borrow_mut().remove(&offered.server_id);
                }
                let content = match e.kind.as_str() {
                    "cancelled" => {
                        format!("The call to {} on {} was stopped by the user.", offered.tool, offered.server)
                    }
                    _ => format!("Error from the MCP server {}: {}", offered.server, e.message),
                };
                ToolOutcome::text(content, false)
            }
        })
    }

    /// Stop: every call in flight is aborted.
    pub fn abort(&self) {
        for a in self.aborts.borrow_mut().drain(..) {
            a.abort();
        }
    }
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
