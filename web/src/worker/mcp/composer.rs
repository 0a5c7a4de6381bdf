//! What the composer asks of the workspace's MCP servers: their resources and prompts listed for its
//! menus, a resource read as a file to attach (kept in the archive like any attachment once the
//! message is sent), a prompt got as text for the message box. Each request opens a connection of its
//! own (as Settings' probe does) and closes it after.

use super::{call, connect, load_module, secrets, to_json, McpError};
use crate::protocol::ErrorKind;
use crate::protocol::{AttachmentData, Call, McpArgument, McpCatalog, McpOffer, McpPromptText, Op, Problem, Reply};
use cowork_core::attachment::{to_base64, NewAttachment};
use cowork_core::mcp::{composer, McpServer};
use serde_json::{json, Value};

/// Whether `op` is one of the composer's (served here, out of turn).
pub fn serves(op: &Op) -> bool {
    matches!(op, Op::McpCatalogOf(_) | Op::McpReadResource(_) | Op::McpGetPrompt(_))
}

/// Serves one of the composer's operations ([`serves`]).
pub async fn serve(op: Op) -> Result<Reply, Problem> {
    let failed = |e: McpError| Problem::new(ErrorKind::Network, e.message);
    match op {
        Op::McpCatalogOf(c) => Ok(c.replies()(catalog(&c.servers, &c.module_url).await)),
        Op::McpReadResource(c) => {
            let ok = c.replies();
            let result =
                ask(&c.server, &c.module_url, "readResource", &[c.uri.as_str().into()]).await.map_err(failed)?;
            let (mime, bytes) = composer::resource_file(&c.uri, &result)
                .map_err(|m| Problem::new(ErrorKind::BadReply, format!("{}: {m}", c.server.name)))?;
            let data = to_base64(&bytes);
            Ok(ok(AttachmentData { attachment: Some(NewAttachment::new(c.name, mime, bytes).examine()), data }))
        }
        Op::McpGetPrompt(c) => {
            let ok = c.replies();
            let args: serde_json::Map<String, Value> = c.arguments.into_iter().map(|(k, v)| (k, json!(v))).collect();
            let args = super::from_json(&Value::Object(args));
            let result =
                ask(&c.server, &c.module_url, "getPrompt", &[c.name.as_str().into(), args]).await.map_err(failed)?;
            let (text, left_out) = composer::prompt_text(&result);
            Ok(ok(McpPromptText { text, left_out: left_out as u32 }))
        }
        _ => Err(Problem::new(ErrorKind::Invalid, "not an operation of the composer's")),
    }
}

/// Connects to `server`, calls `method` with `args`, closes, and gives the result as JSON.
async fn ask(
    server: &McpServer,
    module_url: &str,
    method: &str,
    args: &[wasm_bindgen::JsValue],
) -> Result<Value, McpError> {
    let module = load_module(module_url)?;
    let secrets = secrets().await;
    let conn = connect(&module, server, secrets[&server.id].as_str().unwrap_or_default(), None).await?;
    let result = call(&conn, method, args).await;
    let _ = call(&conn, "close", &[]).await;
    result
        .map(|v| to_json(&v))
        .map_err(|e| McpError::new(&e.kind, format!("{} on {}: {}", method, server.name, e.message)))
}

/// The resources and prompts of the enabled servers among `servers`.
async fn catalog(servers: &[McpServer], module_url: &str) -> McpCatalog {
    let mut found = McpCatalog::default();
    let module = match load_module(module_url) {
        Ok(m) => m,
        Err(e) => {
            found.problems.push(e.message);
            return found;
        }
    };
    let secrets = secrets().await;
    for server in servers.iter().filter(|s| s.enabled) {
        let conn = match connect(&module, server, secrets[&server.id].as_str().unwrap_or_default(), None).await {
            Ok(c) => c,
            Err(e) => {
                found.problems.push(format!("{}: {}", server.name, e.message));
                continue;
            }
        };
        let offer = |v: &Value, id: &str| McpOffer {
            server_id: server.id.clone(),
            server: server.name.clone(),
            id: v[id].as_str().unwrap_or_default().to_owned(),
            name: v["title"].as_str().or(v["name"].as_str()).unwrap_or_default().to_owned(),
            description: v["description"].as_str().unwrap_or_default().to_owned(),
            arguments: v["arguments"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| McpArgument {
                    name: a["name"].as_str().unwrap_or_default().to_owned(),
                    description: a["description"].as_str().unwrap_or_default().to_owned(),
                    required: a["required"] == json!(true),
                })
                .collect(),
        };
        // Resources and prompts are optional capabilities: a server without them lists none.
        for (method, id, into) in
            [("listResources", "uri", &mut found.resources), ("listPrompts", "name", &mut found.prompts)]
        {
            match call(&conn, method, &[]).await {
                Ok(list) => into.extend(to_json(&list).as_array().into_iter().flatten().map(|v| offer(v, id))),
                Err(e) => found.problems.push(format!("{}: {}", server.name, e.message)),
            }
        }
        let _ = call(&conn, "close", &[]).await;
    }
    found
}
