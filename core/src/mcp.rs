//! Tools from MCP servers (spec §16), the pure part: a server's configuration as a workspace keeps
//! it (synced and exported, never with a secret), and a `CallToolResult` taken apart for the archive —
//! its text for the model, the whole result for the turn's metadata, its images, audio and blobs as
//! attachments.
//!
//! The protocol itself (connecting, listing, calling), the names the model calls a server's tools by
//! and whether a call asks the user first are the page's MCP module's (`web/mcp/`); this module does
//! no I/O.

use crate::attachment::{from_base64, NewAttachment};
use serde_json::{json, Map, Value};

/// The MCP servers a workspace uses, as the workspace keeps them: a JSON list, each server
/// `{id, name, url, auth, enabled, policy, tools}` as the page's MCP module writes and reads it
/// (`web/mcp/servers.mjs` owns that shape). Kept, synced and exported with the workspace's settings,
/// never with a secret (bearer and OAuth tokens stay in the page's keeping). Rust only carries it: a
/// typed copy would be serde code in the app's and the worker's wasm, part of every cold start.
pub type McpServers = Vec<Value>;

/// Whether one of `servers` is switched on (a server without `enabled` is).
pub fn any_enabled(servers: &[Value]) -> bool {
    servers.iter().any(|s| s["enabled"].as_bool() != Some(false))
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
