//! Claude.ai's data export (`conversations.json`): an array of `{uuid, name, created_at, updated_at,
//! chat_messages}`, each message `{uuid, sender, text, content, created_at, attachments, files}` — or
//! one such conversation alone (what the conversation API returns, and what browser extensions save).
//! Read one conversation at a time; messages follow each other (no branches). One that cannot be read
//! (no `chat_messages`, an unknown sender) is left out and named, and the others are read on.
//!
//! A message's `content` blocks are read in order: `text` is its text, `thinking` its reasoning,
//! `tool_use` a call and `tool_result` the result, so a reply that used tools becomes the assistant
//! turn with the calls, the tool turns, and the assistant turn that goes on. An attachment's extracted
//! text is kept as a fenced block headed by its name; files without text are named as a placeholder.

use super::time::time_ms;
use super::{arguments_text, derived_id, fenced, kind_of, read_conversations, text_of, Conversation, Format};
use super::{ImportFile, ImportedTurn, SkippedConversation};
use crate::error::Result;
use crate::{Role, ToolCall};
use serde_json::{json, Value};

/// Reads `file`'s conversations: each one that can be read goes to `each`, each one that cannot
/// to `skipped`.
pub(super) fn parse(
    file: &ImportFile<'_>,
    each: &mut dyn FnMut(Conversation) -> Result<()>,
    skipped: &mut Vec<SkippedConversation>,
) -> Result<()> {
    let names = |v: &Value| {
        (v["uuid"].as_str().unwrap_or_default().to_owned(), v["name"].as_str().unwrap_or_default().to_owned())
    };
    read_conversations(file, conversation, &names, each, skipped)
}

/// One conversation, or why it cannot be read.
fn conversation(v: &Value) -> std::result::Result<Conversation, String> {
    if !v.is_object() {
        return Err(format!("it is not a conversation object but {}", kind_of(v)));
    }
    let title = v["name"].as_str().unwrap_or_default().to_owned();
    let messages = match v.get("chat_messages") {
        Some(Value::Array(m)) => m,
        None | Some(Value::Null) => return Err("it has no \"chat_messages\" (its messages)".into()),
        Some(other) => return Err(format!("its \"chat_messages\" is {}, not an array", kind_of(other))),
    };
    // A conversation saved alone by some tool may have no id: its content names it.
    let id = v["uuid"].as_str().filter(|id| !id.is_empty()).map_or_else(|| derived_id(v), str::to_owned);
    let created_at = time_ms(v.get("created_at"));
    let mut out = Conversation {
        format: Format::ClaudeAi,
        id,
        title,
        workspace: None,
        model: v["model"].as_str().unwrap_or_default().to_owned(),
        created_at,
        updated_at: time_ms(v.get("updated_at")),
        turns: Vec::new(),
        current: None,
        skipped: 0,
    };
    let mut time = created_at;
    for (i, m) in messages.iter().enumerate() {
        let mid = m["uuid"].as_str().map(str::to_owned).unwrap_or_else(|| format!("{}", i + 1));
        time = time_ms(m.get("created_at")).or(time);
        let before = out.turns.len();
        message(&mut out, m, &mid, time).map_err(|e| format!("message {} ({mid}): {e}", i + 1))?;
        if out.turns.len() == before {
            out.skipped += 1;
        }
    }
    Ok(out)
}

/// Adds the turns of one message (none when it holds nothing).
fn message(out: &mut Conversation, m: &Value, mid: &str, time: Option<i64>) -> std::result::Result<(), String> {
    let role = match m["sender"].as_str() {
        Some("human") | Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some(other) => return Err(format!("unknown sender {other:?}")),
        None => return Err("\"sender\" is missing".into()),
    };
    let mut current = ImportedTurn::new(mid, role, "");
    current.created_at = time;
    let mut reasoning = String::new();
    let blocks = m["content"].as_array().filter(|b| !b.is_empty());
    match blocks {
        None => current.content = m["text"].as_str().unwrap_or_default().to_owned(),
        Some(blocks) => {
            for (b, block) in blocks.iter().enumerate() {
                match block["type"].as_str().unwrap_or("text") {
                    "text" => push_paragraph(&mut current.content, block["text"].as_str().unwrap_or_default()),
                    "thinking" => push_paragraph(&mut reasoning, block["thinking"].as_str().unwrap_or_default()),
                    "tool_use" => {
                        let id = block["id"].as_str().map(str::to_owned).unwrap_or_else(|| format!("{mid}-{b}"));
                        let name = block["name"].as_str().ok_or("a tool_use block without \"name\"")?;
                        current.tool_calls.push(ToolCall {
                            id,
                            name: name.to_owned(),
                            arguments: arguments_text(&block["input"]),
                        });
                    }
                    "tool_result" => {
                        // The calls so far are answered: the reply goes on in a new turn after the result.
                        let call = current.tool_calls.iter().find(|c| {
                            block["tool_use_id"].as_str().is_none_or(|id| id == c.id)
                                && !out.turns.iter().any(|t| t.tool_call_id.as_deref() == Some(&c.id))
                        });
                        let (call_id, call_name) = match call {
                            Some(c) => (Some(c.id.clone()), c.name.clone()),
                            None => (block["tool_use_id"].as_str().map(str::to_owned), String::new()),
                        };
                        let name = block["name"].as_str().map(str::to_owned).unwrap_or(call_name);
                        if !current.content.is_empty() || !current.tool_calls.is_empty() {
                            finish(out, &mut current, &mut reasoning, role, mid, time);
                        }
                        let mut result = ImportedTurn::new(mid, Role::Tool, text_of(&block["content"]));
                        result.tool_call_id = call_id;
                        result.tool_name = Some(if name.is_empty() { "tool".into() } else { name });
                        result.created_at = time;
                        if block["is_error"].as_bool() == Some(true) {
                            result.metadata.insert("is_error".into(), json!(true));
                        }
                        push(out, result);
                    }
                    _ => {} // images, tool references: nothing readable
                }
            }
        }
    }
    for a in m["attachments"].as_array().into_iter().flatten() {
        let name = a["file_name"].as_str().unwrap_or("attachment");
        match a["extracted_content"].as_str().filter(|t| !t.is_empty()) {
            Some(text) => push_paragraph(&mut current.content, &format!("**{name}**\n\n{}", fenced("", text))),
            None => push_paragraph(&mut current.content, &format!("[file: {name} — not included in the export]")),
        }
    }
    for f in m["files"].as_array().into_iter().flatten() {
        let name = f["file_name"].as_str().unwrap_or("file");
        push_paragraph(&mut current.content, &format!("[file: {name} — not included in the export]"));
    }
    if !current.content.trim().is_empty() || !current.tool_calls.is_empty() {
        finish(out, &mut current, &mut reasoning, role, mid, time);
    }
    Ok(())
}

/// Adds `current` (with the reasoning so far) and starts a fresh turn of the same role.
fn finish(
    out: &mut Conversation,
    current: &mut ImportedTurn,
    reasoning: &mut String,
    role: Role,
    mid: &str,
    time: Option<i64>,
) {
    let mut next = ImportedTurn::new(mid, role, "");
    next.created_at = time;
    let mut turn = std::mem::replace(current, next);
    if !reasoning.is_empty() {
        turn.metadata.insert("reasoning".into(), json!(std::mem::take(reasoning)));
    }
    push(out, turn);
}

/// Adds a turn after the last one.
fn push(out: &mut Conversation, mut turn: ImportedTurn) {
    turn.parent = out.turns.len().checked_sub(1);
    out.turns.push(turn);
}

fn push_paragraph(out: &mut String, piece: &str) {
    if piece.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(piece);
}
