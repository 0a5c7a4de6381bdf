//! Claude.ai's data export (`conversations.json`): an array of `{uuid, name, created_at, updated_at,
//! chat_messages}`, each message `{uuid, sender, text, content, created_at, attachments, files}`.
//! Read one conversation at a time; messages follow each other (no branches).
//!
//! A message's `content` blocks are read in order: `text` is its text, `thinking` its reasoning,
//! `tool_use` a call and `tool_result` the result, so a reply that used tools becomes the assistant
//! turn with the calls, the tool turns, and the assistant turn that goes on. An attachment's extracted
//! text is kept as a fenced block headed by its name; files without text are named as a placeholder.

use super::time::time_ms;
use super::ImportedTurn;
use super::{arguments_text, conversation_name, fenced, for_each_element, import_err, text_of, Conversation, Format};
use crate::error::Result;
use crate::{Role, ToolCall};
use serde_json::{json, Value};

pub(super) fn parse(bytes: &[u8], each: &mut dyn FnMut(Conversation) -> Result<()>) -> Result<()> {
    for_each_element(bytes, "conversation", &mut |index, value| {
        let conversation = conversation(index, &value)?;
        drop(value);
        each(conversation)
    })
}

fn conversation(index: usize, v: &Value) -> Result<Conversation> {
    let title = v["name"].as_str().unwrap_or_default().to_owned();
    let id = v["uuid"].as_str().unwrap_or_default().to_owned();
    let name = conversation_name(&title, &id, index);
    let fail = |message: String| import_err(1, format!("{name}: {message}"));
    if id.is_empty() {
        return Err(fail("it has no \"uuid\"".into()));
    }
    let Some(messages) = v["chat_messages"].as_array() else {
        return Err(fail("\"chat_messages\" is missing or not an array".into()));
    };
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
        message(&mut out, m, &mid, time).map_err(|e| fail(format!("message {} ({mid}): {e}", i + 1)))?;
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
