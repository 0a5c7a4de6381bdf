//! Which tool wrote a file, from its content (never its name): an array by its entries, a JSON Lines
//! transcript by its records, one object by its fields. Reads only as far as it must: the first
//! entry or record that says decides, so a broken first conversation or a transcript that opens with
//! bookkeeping records (Claude Code's `file-history-snapshot`, `summary`, …) is still recognised.

use super::{for_each_element, import_err, in_file, json_err, Format, ImportFile};
use crate::error::{Error, Result};
use serde_json::Value;

/// Claude Code's record types (`type`): the messages and the bookkeeping written between them, in
/// any order (a transcript may open with a `file-history-snapshot` or `summary` record, which has
/// no `sessionId`).
const CLAUDE_CODE_TYPES: &[&str] = &[
    "user",
    "assistant",
    "system",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "attachment",
    "progress",
    "custom-title",
    "ai-title",
    "last-prompt",
    "permission-mode",
];

/// Codex CLI's envelope types (`{timestamp, type, payload}`), in any order.
const CODEX_TYPES: &[&str] = &["session_meta", "response_item", "event_msg", "turn_context", "compacted"];

/// Recognises a file's format from its content: an array by its entries (the first that says),
/// a JSON Lines transcript by its records (the first that says, however many bookkeeping lines come
/// before it), one object by its fields (a single exported conversation). Anything else is refused
/// with an [`Error::Import`] saying what was expected.
pub fn detect(bytes: &[u8]) -> Result<Format> {
    let Some(start) = content_start(bytes) else { return Err(import_err(1, "the file is empty".into())) };
    match bytes[start] {
        b'[' => detect_array(&bytes[start..]),
        b'{' => detect_object_or_lines(&bytes[start..]),
        _ => Err(unknown()),
    }
}

/// An array: the first entry that says which format it is decides; entries that say nothing (a
/// broken conversation) are passed over.
fn detect_array(bytes: &[u8]) -> Result<Format> {
    let (mut found, mut hint, mut any) = (None, None, false);
    let read = for_each_element(bytes, "conversation", &mut |_, v| {
        any = true;
        if let Value::Object(o) = &v {
            found = entry_format(o);
            hint = hint.or_else(|| entry_hint(o));
        }
        match found {
            Some(_) => Err(Error::Invalid(String::new())), // enough read: stop
            None => Ok(()),
        }
    });
    if let Some(f) = found {
        return Ok(f);
    }
    read?;
    match (hint, any) {
        (Some(f), _) => Ok(f),
        (None, false) => Err(import_err(1, "the file holds an empty array: there is nothing to import".into())),
        (None, true) => Err(unknown()),
    }
}

/// What an array entry is, by the field that holds its messages.
fn entry_format(o: &serde_json::Map<String, Value>) -> Option<Format> {
    if o.contains_key("mapping") {
        Some(Format::ChatGpt)
    } else if o.contains_key("chat_messages") {
        Some(Format::ClaudeAi)
    } else if o.contains_key("role") {
        Some(Format::OpenAiMessages)
    } else {
        None
    }
}

/// What an entry without its messages looks like (a broken conversation: the file is still of that
/// format, and the entry is skipped when it is read).
fn entry_hint(o: &serde_json::Map<String, Value>) -> Option<Format> {
    let has = |k: &str| o.contains_key(k);
    if has("conversation_id") || has("current_node") || has("default_model_slug") {
        Some(Format::ChatGpt)
    } else if has("uuid") && (has("account") || has("name") || has("created_at")) {
        Some(Format::ClaudeAi)
    } else {
        None
    }
}

/// A JSON Lines transcript, read record by record until one says which tool wrote it, or one
/// (possibly pretty-printed) object: a single conversation, or `{"messages": [...]}`.
fn detect_object_or_lines(bytes: &[u8]) -> Result<Format> {
    let mut lines = bytes.split(|b| *b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace));
    let first = lines.next().unwrap_or_default();
    match serde_json::from_slice::<Value>(first) {
        Ok(Value::Object(o)) => {
            if let Some(f) = single_conversation_format(&o).or_else(|| record_format(&o)) {
                return Ok(f);
            }
        }
        // A pretty-printed object: one conversation, or `{"messages": [...]}`.
        _ => {
            return match serde_json::from_slice::<Value>(bytes) {
                Ok(Value::Object(o)) => single_conversation_format(&o).ok_or_else(unknown),
                Ok(_) => Err(unknown()),
                Err(e) => Err(json_err(bytes, &e, "the file is not valid JSON")),
            }
        }
    }
    // Bookkeeping records that name no tool: read on until one does.
    for line in lines {
        match serde_json::from_slice::<Value>(line) {
            Ok(Value::Object(o)) => {
                if let Some(f) = record_format(&o) {
                    return Ok(f);
                }
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Err(unknown())
}

/// One exported conversation as a single object (what export tools and browser extensions write).
fn single_conversation_format(o: &serde_json::Map<String, Value>) -> Option<Format> {
    match entry_format(o) {
        Some(Format::OpenAiMessages) | None => {
            o.get("messages").is_some_and(Value::is_array).then_some(Format::OpenAiMessages)
        }
        some => some,
    }
}

/// The tool that wrote one JSON Lines record, if the record says.
fn record_format(o: &serde_json::Map<String, Value>) -> Option<Format> {
    let ty = o.get("type").and_then(Value::as_str);
    // Codex: the envelope, or (older rollouts) a bare meta object first.
    let codex_envelope = ty.is_some_and(|t| CODEX_TYPES.contains(&t)) || (ty.is_some() && o.contains_key("payload"));
    let codex_meta = ty.is_none() && o.contains_key("id") && o.contains_key("timestamp");
    if codex_envelope || codex_meta {
        Some(Format::Codex)
    } else if ty.is_some_and(|t| CLAUDE_CODE_TYPES.contains(&t))
        || ["sessionId", "leafUuid", "parentUuid"].iter().any(|k| o.contains_key(*k))
    {
        Some(Format::ClaudeCode)
    } else {
        None
    }
}

fn unknown() -> Error {
    import_err(
        1,
        "not a format Cowork can import (a ChatGPT or Claude.ai conversations.json or one exported \
         conversation, a Claude Code or Codex .jsonl transcript, or an OpenAI messages array)"
            .into(),
    )
}

/// The formats of `files`, in order, or the first file's refusal.
pub fn detect_files(files: &[ImportFile<'_>]) -> Result<Vec<Format>> {
    files.iter().map(|f| detect(f.bytes).map_err(|e| in_file(e, f.name))).collect()
}

/// Where the content starts: past whitespace and a UTF-8 byte-order mark; `None` for an empty file.
pub(super) fn content_start(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|b| !b.is_ascii_whitespace() && *b != 0xEF && *b != 0xBB && *b != 0xBF)
}
