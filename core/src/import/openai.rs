//! An OpenAI-style `messages` array (or `{"messages": [...]}`) as one conversation. It has no id of
//! its own: the conversation is named by its content (a UUID v5 of the canonical JSON), so the same
//! messages imported twice are recognised. Every role is kept, system messages too (they were written
//! on purpose); message ids are their 1-based positions.

use super::{json_err, text_of, Conversation, Format, ImportedTurn};
use crate::error::Result;
use crate::{Role, ToolCall};
use serde_json::Value;

/// The messages as a conversation, or why they cannot be read (`Err` inside); a file that is not
/// JSON is the file's error.
pub(super) fn parse(bytes: &[u8]) -> Result<std::result::Result<Conversation, String>> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| json_err(bytes, &e, "reading the messages"))?;
    let messages = match &value {
        Value::Array(a) => a,
        Value::Object(o) => match o.get("messages") {
            Some(Value::Array(a)) => a,
            _ => return Ok(Err("it is not a messages array, nor an object with \"messages\"".into())),
        },
        _ => return Ok(Err("it is not a messages array".into())),
    };
    if messages.is_empty() {
        return Ok(Err("the messages array is empty".into()));
    }
    let canonical = Value::Array(messages.clone()).to_string();
    let id = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, canonical.as_bytes()).to_string();
    let mut out = Conversation {
        format: Format::OpenAiMessages,
        id,
        title: String::new(),
        workspace: None,
        model: value["model"].as_str().unwrap_or_default().to_owned(),
        created_at: None,
        updated_at: None,
        turns: Vec::new(),
        current: None,
        skipped: 0,
    };
    for (i, m) in messages.iter().enumerate() {
        let fail = |message: String| Ok(Err(format!("message {}: {message}", i + 1)));
        let role = match m["role"].as_str() {
            Some("system" | "developer") => Role::System,
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some("tool" | "function") => Role::Tool,
            Some(other) => return fail(format!("unknown role {other:?}")),
            None => return fail("missing \"role\"".into()),
        };
        let mut turn = ImportedTurn::new(format!("{}", i + 1), role, text_of(&m["content"]));
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            let args = &c["function"]["arguments"];
            let Some(name) = c["function"]["name"].as_str() else {
                return fail("a tool call without \"function.name\"".into());
            };
            turn.tool_calls.push(ToolCall {
                id: c["id"].as_str().unwrap_or_default().to_owned(),
                name: name.to_owned(),
                arguments: args.as_str().map(str::to_owned).unwrap_or_else(|| args.to_string()),
            });
        }
        turn.tool_call_id = m["tool_call_id"].as_str().map(str::to_owned);
        turn.tool_name = m["name"].as_str().map(str::to_owned);
        turn.parent = out.turns.len().checked_sub(1);
        out.turns.push(turn);
    }
    Ok(Ok(out))
}
