//! ChatGPT's data export (`conversations.json`): an array of conversations, each a tree of message
//! nodes (`mapping`: node id → `{id, message, parent, children}`) with `current_node` the last one
//! shown — or one such conversation alone (what the conversation API returns, and what export tools
//! and browser extensions save). Read one conversation at a time; one that cannot be read (no
//! `mapping`, a message without an author) is left out and named, and the others are read on.
//!
//! Left out, and counted: system messages, messages hidden from the conversation
//! (`metadata.is_visually_hidden_from_conversation`), the user's custom instructions
//! (`user_editable_context`), reasoning summaries' headers (`reasoning_recap`) and empty messages.
//! Thoughts (`thoughts`) become the `reasoning` of the reply they lead to. An assistant message to a
//! recipient other than `all` is a tool call; the `tool` message after it is its result.

use super::time::time_ms;
use super::{
    arguments_text, derived_id, fenced, kind_of, read_conversations, Conversation, Format, ImportFile, ImportedTurn,
    SkippedConversation,
};
use crate::error::Result;
use crate::{Role, ToolCall};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, VecDeque};

/// Reads `file`'s conversations: each one that can be read goes to `each`, each one that cannot
/// to `skipped`.
pub(super) fn parse(
    file: &ImportFile<'_>,
    each: &mut dyn FnMut(Conversation) -> Result<()>,
    skipped: &mut Vec<SkippedConversation>,
) -> Result<()> {
    let names =
        |v: &Value| (source_id(v).unwrap_or_default().to_owned(), v["title"].as_str().unwrap_or_default().to_owned());
    read_conversations(file, conversation, &names, each, skipped)
}

fn source_id(v: &Value) -> Option<&str> {
    v["conversation_id"].as_str().or_else(|| v["id"].as_str()).filter(|id| !id.is_empty())
}

/// What a skipped node passes on to its children: the turn they follow and the reasoning seen.
#[derive(Default, Clone)]
struct Carry {
    parent: Option<usize>,
    reasoning: String,
    time: Option<i64>,
}

/// One conversation, or why it cannot be read.
fn conversation(v: &Value) -> std::result::Result<Conversation, String> {
    if !v.is_object() {
        return Err(format!("it is not a conversation object but {}", kind_of(v)));
    }
    let title = v["title"].as_str().unwrap_or_default().to_owned();
    let mapping = match v.get("mapping") {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => return Err("it has no \"mapping\" (its messages)".into()),
        Some(other) => return Err(format!("its \"mapping\" is {}, not an object", kind_of(other))),
    };
    // A conversation saved alone by some tool may have no id: its content names it.
    let id = source_id(v).map_or_else(|| derived_id(v), str::to_owned);
    let mut out = Conversation {
        format: Format::ChatGpt,
        id,
        title,
        workspace: None,
        model: v["default_model_slug"].as_str().unwrap_or_default().to_owned(),
        created_at: time_ms(v.get("create_time")),
        updated_at: time_ms(v.get("update_time")),
        turns: Vec::new(),
        current: None,
        skipped: 0,
    };
    // Breadth first from the roots (nodes without a known parent), children in their listed order,
    // so every parent comes before its children.
    let mut queue: VecDeque<(&str, Carry)> = mapping
        .iter()
        .filter(|(_, n)| n["parent"].as_str().is_none_or(|p| !mapping.contains_key(p)))
        .map(|(k, _)| (k.as_str(), Carry { time: out.created_at, ..Carry::default() }))
        .collect();
    let mut last_of_node: HashMap<&str, Option<usize>> = HashMap::new();
    while let Some((key, carry)) = queue.pop_front() {
        if last_of_node.contains_key(key) {
            continue; // a node listed twice, or a cycle
        }
        let node = &mapping[key];
        // The current message ends the main session: a call after it is a branch, not part of it.
        let single_child =
            node["children"].as_array().is_some_and(|c| c.len() == 1) && Some(key) != v["current_node"].as_str();
        let carry = match node.get("message").filter(|m| m.is_object()) {
            None => carry,
            Some(m) => {
                let ctx = Ctx { node: key, single_child };
                message(&mut out, m, carry, &ctx).map_err(|e| format!("message {key}: {e}"))?
            }
        };
        last_of_node.insert(key, carry.parent);
        for child in node["children"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            if mapping.contains_key(child) {
                queue.push_back((child, carry.clone()));
            }
        }
    }
    for t in &mut out.turns {
        t.metadata.remove("joinable");
    }
    if let Some(current) = v["current_node"].as_str() {
        out.current = last_of_node.get(current).copied().flatten();
    }
    Ok(out)
}

struct Ctx<'a> {
    node: &'a str,
    /// The node has exactly one child: a tool call after it may join its turn.
    single_child: bool,
}

/// Adds the turn(s) of one message; returns what its children follow.
fn message(out: &mut Conversation, m: &Value, mut carry: Carry, ctx: &Ctx) -> std::result::Result<Carry, String> {
    let id = m["id"].as_str().unwrap_or(ctx.node).to_owned();
    let role = m["author"]["role"].as_str().ok_or("\"author.role\" is missing")?;
    let created_at = time_ms(m.get("create_time")).or(carry.time);
    carry.time = created_at;
    let meta = &m["metadata"];
    let content = &m["content"];
    let content_type = content["content_type"].as_str().unwrap_or("text");
    let hidden = meta["is_visually_hidden_from_conversation"].as_bool() == Some(true);
    if hidden || role == "system" || content_type == "user_editable_context" || content_type == "reasoning_recap" {
        out.skipped += 1;
        return Ok(carry);
    }
    if content_type == "thoughts" {
        let thoughts = content["thoughts"].as_array().into_iter().flatten();
        let text: Vec<String> = thoughts
            .map(|t| {
                let (summary, body) = (t["summary"].as_str().unwrap_or(""), t["content"].as_str().unwrap_or(""));
                [summary, body].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join("\n")
            })
            .collect();
        append(&mut carry.reasoning, &text.join("\n\n"));
        out.skipped += 1;
        return Ok(carry);
    }
    let recipient = m["recipient"].as_str().unwrap_or("all");
    let text = match content["text"].as_str() {
        // A call's code is its arguments, as written.
        Some(code) if content_type == "code" && recipient != "all" => code.to_owned(),
        _ => content_text(content, content_type)?,
    };
    let mut turn = ImportedTurn::new(id.clone(), Role::User, text);
    turn.parent = carry.parent;
    turn.created_at = created_at;
    if let Some(model) = meta["model_slug"].as_str() {
        turn.metadata.insert("model".into(), json!(model));
    }
    match role {
        "user" => {
            for a in meta["attachments"].as_array().into_iter().flatten() {
                let name = a["name"].as_str().or_else(|| a["id"].as_str()).unwrap_or("a file");
                append(&mut turn.content, &format!("[attachment: {name} — not included in the export]"));
            }
        }
        "assistant" if recipient != "all" => {
            let call = ToolCall {
                id: id.clone(),
                name: recipient.to_owned(),
                arguments: arguments_text(&json!(turn.content)),
            };
            turn.content = String::new();
            // A call right after the reply's text (its only child) joins that turn.
            if let Some(p) = carry.parent.filter(|_| carry.reasoning.is_empty()) {
                let prev = &mut out.turns[p];
                let joinable = prev.role == Role::Assistant && prev.metadata.get("joinable") == Some(&json!(true));
                if joinable {
                    prev.tool_calls.push(call);
                    prev.metadata.remove("joinable");
                    if ctx.single_child {
                        prev.metadata.insert("joinable".into(), json!(true));
                    }
                    return Ok(carry);
                }
            }
            turn.role = Role::Assistant;
            turn.tool_calls.push(call);
        }
        "assistant" => turn.role = Role::Assistant,
        "tool" => {
            turn.role = Role::Tool;
            let name = m["author"]["name"].as_str().unwrap_or("tool").to_owned();
            // The result answers the first unanswered call of the reply it follows (past other results).
            let mut at = carry.parent;
            let mut answered: Vec<&str> = Vec::new();
            while let Some(p) = at.filter(|p| out.turns[*p].role == Role::Tool) {
                answered.extend(out.turns[p].tool_call_id.as_deref());
                at = out.turns[p].parent;
            }
            let calls = at.map(|p| out.turns[p].tool_calls.as_slice()).unwrap_or_default();
            turn.tool_call_id = calls.iter().find(|c| !answered.contains(&c.id.as_str())).map(|c| c.id.clone());
            turn.tool_name = Some(name);
        }
        other => return Err(format!("unknown author role {other:?}")),
    }
    if turn.content.trim().is_empty() && turn.tool_calls.is_empty() && turn.role != Role::Tool {
        out.skipped += 1;
        return Ok(carry);
    }
    if turn.role == Role::Assistant && !carry.reasoning.is_empty() {
        turn.metadata.insert("reasoning".into(), json!(std::mem::take(&mut carry.reasoning)));
    }
    if turn.role == Role::Assistant && ctx.single_child {
        turn.metadata.insert("joinable".into(), json!(true));
    }
    out.turns.push(turn);
    carry.parent = Some(out.turns.len() - 1);
    Ok(carry)
}

/// The text of a message's `content`, by its `content_type`.
fn content_text(content: &Value, content_type: &str) -> std::result::Result<String, String> {
    let text = || content["text"].as_str().unwrap_or_default().to_owned();
    Ok(match content_type {
        "text" => parts(&content["parts"]),
        "multimodal_text" => parts(&content["parts"]),
        "code" => {
            let language = content["language"].as_str().filter(|l| !l.is_empty() && *l != "unknown");
            match language {
                Some(l) => fenced(l, &text()),
                None => text(),
            }
        }
        "execution_output" | "system_error" => text(),
        "tether_quote" => {
            let mut out = String::new();
            if let Some(t) = content["title"].as_str() {
                append(&mut out, &format!("> **{t}**"));
            }
            append(&mut out, &quote(content["text"].as_str().unwrap_or_default()));
            if let Some(u) = content["url"].as_str() {
                append(&mut out, u);
            }
            out
        }
        "tether_browsing_display" => {
            let mut out = content["result"].as_str().unwrap_or_default().to_owned();
            append(&mut out, content["summary"].as_str().unwrap_or_default());
            out
        }
        _ => match (&content["parts"], content["text"].as_str()) {
            (Value::Array(_), _) => parts(&content["parts"]),
            (_, Some(t)) => t.to_owned(),
            _ => return Err(format!("content type {content_type:?} has neither \"parts\" nor \"text\"")),
        },
    })
}

/// `parts`: strings, and objects (images, audio) as placeholders or their transcript.
fn parts(v: &Value) -> String {
    let mut out = String::new();
    for part in v.as_array().into_iter().flatten() {
        let piece = match part {
            Value::String(s) => s.clone(),
            Value::Object(o) => object_part(o),
            _ => continue,
        };
        if out.is_empty() {
            out = piece;
        } else if !piece.is_empty() {
            out.push('\n');
            out.push_str(&piece);
        }
    }
    out
}

fn object_part(o: &Map<String, Value>) -> String {
    let kind = o.get("content_type").and_then(Value::as_str).unwrap_or("attachment");
    if let Some(t) = o.get("text").and_then(Value::as_str) {
        return t.to_owned();
    }
    let pointer = o.get("asset_pointer").and_then(Value::as_str).unwrap_or_default();
    let name = pointer.rsplit("://").next().unwrap_or(pointer);
    let size = match (o.get("width").and_then(Value::as_i64), o.get("height").and_then(Value::as_i64)) {
        (Some(w), Some(h)) => format!(" ({w}×{h})"),
        _ => String::new(),
    };
    let what = if kind == "image_asset_pointer" { "image" } else { kind };
    format!("[{what}: {name}{size} — not included in the export]")
}

fn quote(text: &str) -> String {
    text.lines().map(|l| format!("> {l}")).collect::<Vec<_>>().join("\n")
}

/// Appends `piece` on a new paragraph (nothing for an empty piece).
fn append(out: &mut String, piece: &str) {
    if piece.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(piece);
}
