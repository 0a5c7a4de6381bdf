//! Tools from MCP servers (spec §16), the pure part: a server's configuration as a workspace keeps
//! it (synced and exported, never with a secret), and a `CallToolResult` taken apart for the archive —
//! its text for the model, the whole result for the turn's metadata, its images, audio and blobs as
//! attachments.
//!
//! The protocol itself (connecting, listing, calling), the names the model calls a server's tools by
//! and whether a call asks the user first are the page's MCP module's (`web/mcp/`); this module does
//! no I/O.

use crate::attachment::{from_base64, NewAttachment};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};


/// An MCP server a workspace uses. Its secret (a bearer token, OAuth tokens) is not here: the storage
/// worker keeps it outside the archive, by [`McpServer::id`].
///
/// With the archive (feature `store`), read through a `serde_json::Value` (`Wire`): the archive, sync,
/// imports and the worker protocol each read JSON with a reader of their own, and a derived reader for
/// each would be a copy of this code in the storage worker's wasm, part of every cold start. The UI,
/// which has one reader, reads it directly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "store", serde(try_from = "Value"))]
pub struct McpServer {
    /// A stable id, made when the server is added (the same in every workspace that uses it).
    pub id: String,
    /// The name its tools are offered under (`<name>__<tool>`, `toolName` in `web/mcp/servers.mjs`).
    pub name: String,
    /// The server's URL (Streamable HTTP, or a legacy SSE endpoint).
    pub url: String,
    /// How the server is signed in to.
    #[serde(default)]
    pub auth: McpAuth,
    /// Whether its tools are offered (a server can be kept and switched off).
    #[serde(default = "enabled")]
    pub enabled: bool,
    /// The approval policy of its tools, unless a tool has its own.
    #[serde(default)]
    pub policy: ToolPolicy,
    /// Tools with a policy of their own (a list, not a map: the app's wasm has no map code to carry).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolChoice>,
}

/// A tool's own approval policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolChoice {
    /// The tool, as the server names it.
    pub tool: String,
    /// Its policy.
    pub policy: ToolPolicy,
}

fn enabled() -> bool {
    true
}

/// [`McpServer`] as JSON has it, read from a `Value` only.
#[cfg(feature = "store")]
#[derive(Deserialize)]
struct Wire {
    id: String,
    name: String,
    url: String,
    #[serde(default)]
    auth: McpAuth,
    #[serde(default = "enabled")]
    enabled: bool,
    #[serde(default)]
    policy: ToolPolicy,
    #[serde(default)]
    tools: Vec<ToolChoice>,
}

#[cfg(feature = "store")]
impl TryFrom<Value> for McpServer {
    type Error = serde_json::Error;

    fn try_from(value: Value) -> Result<McpServer, serde_json::Error> {
        let Wire { id, name, url, auth, enabled, policy, tools } = serde_json::from_value(value)?;
        Ok(McpServer { id, name, url, auth, enabled, policy, tools })
    }
}

/// How Cowork signs in to a server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpAuth {
    /// Not at all.
    #[default]
    None,
    /// With a bearer token (kept by this device's storage worker; each device is given it itself).
    Bearer,
    /// With OAuth 2.1 (each device signs in itself).
    Oauth,
}

/// Whether a tool's calls wait for the user's yes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolPolicy {
    /// Every call asks.
    AlwaysAsk,
    /// A call asks unless the server says the tool only reads (`readOnlyHint`, and not
    /// `destructiveHint`).
    #[default]
    AskUnlessReadOnly,
    /// No call asks.
    NeverAsk,
}

impl McpServer {
    /// The policy of the server's tool `tool`.
    pub fn policy_of(&self, tool: &str) -> ToolPolicy {
        self.tools.iter().find(|c| c.tool == tool).map_or(self.policy, |c| c.policy)
    }

    /// Gives the server's tool `tool` a policy of its own.
    pub fn set_policy(&mut self, tool: &str, policy: ToolPolicy) {
        self.tools.retain(|c| c.tool != tool);
        self.tools.push(ToolChoice { tool: tool.to_owned(), policy });
    }
}

/// A `CallToolResult` taken apart for the archive.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultParts {
    /// What the model reads (the tool turn's content): the text parts, and a line for each other part.
    pub content: String,
    /// `false` when the server said `isError`.
    pub success: bool,
    /// The whole result, each `data`/`blob` field replaced by `"attachment": <index>` into
    /// [`ResultParts::attachments`] (so nothing is kept twice and nothing is lost).
    pub result: Value,
    /// The images, audio and blobs, decoded, in the order they came.
    pub attachments: Vec<NewAttachment>,
}

/// Takes `result` (a `CallToolResult` as the server sent it) apart: see [`ResultParts`].
pub fn result_parts(result: &Value) -> ResultParts {
    let mut kept = result.clone();
    let mut lines = Vec::new();
    let mut attachments = Vec::new();
    if let Some(items) = kept.get_mut("content").and_then(Value::as_array_mut) {
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            lines.push(part(item, &mut attachments));
        }
    }
    let structured = &result["structuredContent"];
    if lines.is_empty() && !structured.is_null() {
        lines.push(structured.to_string());
    }
    let success = result["isError"] != json!(true);
    ResultParts { content: lines.join("\n\n"), success, result: kept, attachments }
}

/// One content item's line for the model; its bytes, if any, moved to `attachments`.
fn part(item: &mut Map<String, Value>, attachments: &mut Vec<NewAttachment>) -> String {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    match item.get("type").and_then(Value::as_str).unwrap_or_default() {
        "text" => text(&item["text"]),
        kind @ ("image" | "audio") => {
            let mime = text(&item["mimeType"]);
            let name = format!("{kind}-{}.{}", attachments.len() + 1, extension(&mime));
            let line = format!("[{kind}: {name}, {mime}]");
            take_bytes(item, "data", name, mime, attachments);
            line
        }
        "resource_link" => format!("[resource: {} <{}>]", text(&item["name"]), text(&item["uri"])),
        "resource" => {
            let Some(resource) = item.get_mut("resource").and_then(Value::as_object_mut) else { return String::new() };
            let uri = text(&resource["uri"]);
            if let Some(t) = resource.get("text").and_then(Value::as_str) {
                return format!("[resource <{uri}>]\n{t}");
            }
            let mime = text(&resource["mimeType"]);
            let name = uri.rsplit('/').next().filter(|n| !n.is_empty()).unwrap_or("resource").to_owned();
            take_bytes(resource, "blob", name, mime.clone(), attachments);
            format!("[resource <{uri}>, {mime}]")
        }
        other => format!("[{other} content]"),
    }
}

/// Moves the base64 field `field` of `item` into `attachments` (kept in place when it does not decode).
fn take_bytes(item: &mut Map<String, Value>, field: &str, name: String, mime: String, out: &mut Vec<NewAttachment>) {
    if let Some(bytes) = item.get(field).and_then(Value::as_str).and_then(|d| from_base64(d).ok()) {
        item.remove(field);
        item.insert("attachment".into(), json!(out.len()));
        out.push(NewAttachment::new(name, mime, bytes));
    }
}

fn extension(mime: &str) -> &str {
    match mime.split(';').next().unwrap_or_default().trim() {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "audio/wav" | "audio/x-wav" => "wav",
        "audio/mpeg" => "mp3",
        _ => "bin",
    }
}

/// The result as it came, from a tool turn's [`ResultParts::result`] and its attachments' bytes (in
/// order): each `"attachment": i` becomes the base64 `data` (or a resource's `blob`) again.
pub fn restore(result: &Value, bytes: &[Vec<u8>]) -> Value {
    let mut out = result.clone();
    let put = |item: &mut Map<String, Value>, field: &str| {
        if let Some(b) = item.get("attachment").and_then(Value::as_u64).and_then(|i| bytes.get(i as usize)) {
            item.insert(field.into(), json!(crate::attachment::to_base64(b)));
            item.remove("attachment");
        }
    };
    for item in out.get_mut("content").and_then(Value::as_array_mut).into_iter().flatten() {
        if let Some(resource) = item.get_mut("resource").and_then(Value::as_object_mut) {
            put(resource, "blob");
        } else if let Some(item) = item.as_object_mut() {
            put(item, "data");
        }
    }
    out
}

#[cfg(test)]
mod tests;
