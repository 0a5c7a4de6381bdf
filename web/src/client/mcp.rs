//! The page's MCP host at work for the worker (spec §16): the MCP bundle (`web/mcp/host.mjs`, loaded
//! on first use) answers the worker's request for the MCP tools to offer ([`ops::MCP_OFFER`], with the
//! session's workspace's servers) and runs the model's calls of them, their `CallToolResult` sent back
//! whole for the archive; Stop stops them (`abort`, which sends `notifications/cancelled`). The app
//! and the embedding API both run through here.

use crate::protocol::ops;
use wasm_bindgen::JsValue;

/// Answers the worker's request `name` (the offer, or a call of an offered MCP tool).
pub(super) async fn run(call_id: String, name: String, arguments: String) -> ops::ToolResult {
    let offer = name == ops::MCP_OFFER;
    let args: [JsValue; 3] = [name.into(), arguments.into(), call_id.as_str().into()];
    let (content, success, result) =
        match crate::mcp::call(if offer { "offer" } else { "call" }, &args[usize::from(offer)..]).await {
            Ok(answer) => answer_of(offer, &answer),
            Err(e) => (e, false, None),
        };
    ops::ToolResult { call_id, content, success, result }
}

/// `offer`'s specs as JSON text; `call`'s `{content, success, result}`.
fn answer_of(offer: bool, answer: &JsValue) -> (String, bool, Option<serde_json::Value>) {
    let json = |v: &JsValue| js_sys::JSON::stringify(v).ok().and_then(|s| s.as_string()).unwrap_or_default();
    if offer {
        return (json(answer), true, None);
    }
    let get = |key: &str| js_sys::Reflect::get(answer, &key.into()).unwrap_or(JsValue::NULL);
    let result = Some(get("result")).filter(|r| r.is_object()).and_then(|r| serde_json::from_str(&json(&r)).ok());
    (get("content").as_string().unwrap_or_default(), get("success").as_bool() == Some(true), result)
}

/// Stop: the MCP calls in flight are aborted.
pub(super) async fn abort() {
    let _ = crate::mcp::call("abort", &[]).await;
}
