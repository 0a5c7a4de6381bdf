//! Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`): one JSON object
//! per line. `user` and `assistant` lines carry `{uuid, parentUuid, sessionId, cwd, timestamp,
//! message: {role, content}}`; `summary` lines `{summary, leafUuid}` give the title. One session per
//! `sessionId`, over all the files given.
//!
//! Content blocks: `text` is text, `thinking` the reply's reasoning, `tool_use` a call and
//! `tool_result` (in a user line) a tool turn answering it. One API reply is written as several lines
//! (one per block) sharing `message.id`: they become one turn. Side chains (`isSidechain`, a
//! sub-agent's work) and meta lines (`isMeta`) are left out and counted, as are `system` lines; a line
//! already read (the same `uuid`, as in a resumed session's copy) is read once.

use super::time::parse_iso8601_ms;
use super::{arguments_text, import_err, text_of, Conversation, Format, ImportedTurn};
use crate::error::Result;
use crate::{Role, ToolCall};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The sessions read so far, in the order they first appeared.
#[derive(Default)]
pub(super) struct Sessions {
    sessions: Vec<Conversation>,
    by_id: HashMap<String, Session>,
    /// `leafUuid` → summary, from every file (summaries name a leaf, not a session).
    summaries: HashMap<String, String>,
}

/// What reading a session remembers besides its turns.
#[derive(Default)]
struct Session {
    index: usize,
    /// Line `uuid` → the turn it became (or the turn a skipped line's children follow).
    node: HashMap<String, Option<usize>>,
    /// A turn's `message.id`, for joining the lines of one reply.
    reply_id: HashMap<usize, String>,
    /// Tool call id → tool name.
    call_names: HashMap<String, String>,
    /// Uuids of the lines read, for the title's `leafUuid`.
    last: Option<usize>,
}

impl Sessions {
    /// Reads one file's lines into the sessions.
    pub(super) fn add_file(&mut self, bytes: &[u8]) -> Result<()> {
        for (i, raw) in bytes.split(|b| *b == b'\n').enumerate() {
            let n = i + 1;
            if raw.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let v: Value = serde_json::from_slice(raw).map_err(|e| {
                let why =
                    if e.is_eof() { "the line ends too early: the file looks truncated" } else { "not valid JSON" };
                import_err(n, format!("line {n}: {why} ({e})"))
            })?;
            self.line(&v).map_err(|e| import_err(n, format!("line {n}: {e}")))?;
        }
        Ok(())
    }

    fn line(&mut self, v: &Value) -> std::result::Result<(), String> {
        let ty = v["type"].as_str().unwrap_or_default();
        if ty == "summary" {
            if let (Some(leaf), Some(s)) = (v["leafUuid"].as_str(), v["summary"].as_str()) {
                self.summaries.insert(leaf.to_owned(), s.to_owned());
            }
            return Ok(());
        }
        let Some(sid) = v["sessionId"].as_str() else { return Ok(()) };
        if !self.by_id.contains_key(sid) {
            self.by_id.insert(sid.to_owned(), Session { index: self.sessions.len(), ..Session::default() });
            self.sessions.push(Conversation {
                format: Format::ClaudeCode,
                id: sid.to_owned(),
                title: String::new(),
                workspace: None,
                model: String::new(),
                created_at: None,
                updated_at: None,
                turns: Vec::new(),
                current: None,
                skipped: 0,
            });
        }
        let session = self.by_id.get_mut(sid).expect("just inserted");
        let out = &mut self.sessions[session.index];
        let uuid = v["uuid"].as_str().unwrap_or_default().to_owned();
        if !uuid.is_empty() && session.node.contains_key(&uuid) {
            return Ok(()); // read before
        }
        let time = v["timestamp"].as_str().and_then(parse_iso8601_ms);
        if out.created_at.is_none() {
            out.created_at = time;
        }
        out.updated_at = time.or(out.updated_at);
        if out.workspace.is_none() {
            out.workspace = v["cwd"].as_str().filter(|c| !c.is_empty()).map(str::to_owned);
        }
        // The turn this line follows: its parent's, else (a first line, or one after a compaction)
        // the last turn read.
        let parent = match v["parentUuid"].as_str().and_then(|p| session.node.get(p)) {
            Some(p) => *p,
            None => session.last,
        };
        let skip = !matches!(ty, "user" | "assistant")
            || v["isSidechain"].as_bool() == Some(true)
            || v["isMeta"].as_bool() == Some(true);
        if skip {
            if matches!(ty, "user" | "assistant" | "system") {
                out.skipped += 1;
            }
            if !uuid.is_empty() {
                session.node.insert(uuid, parent);
            }
            return Ok(());
        }
        let message = &v["message"];
        let mut last = parent;
        if ty == "assistant" {
            if let Some(model) = message["model"].as_str().filter(|m| !m.starts_with('<')) {
                out.model = model.to_owned();
            }
            match assistant(out, session, message, &uuid, parent, time)? {
                Some(at) => last = Some(at),
                None => out.skipped += 1,
            }
        } else {
            user(out, session, message, &uuid, &mut last, time);
            if last == parent {
                out.skipped += 1;
            }
        }
        if !uuid.is_empty() {
            session.node.insert(uuid, last);
        }
        session.last = last;
        Ok(())
    }

    /// Hands every session to `each`, titled by its summary.
    pub(super) fn finish(self, each: &mut dyn FnMut(Conversation) -> Result<()>) -> Result<()> {
        let Sessions { sessions, by_id, summaries } = self;
        let mut titles: HashMap<usize, String> = HashMap::new();
        for (leaf, summary) in &summaries {
            for s in by_id.values() {
                if s.node.contains_key(leaf) {
                    titles.insert(s.index, summary.clone());
                }
            }
        }
        for (i, mut c) in sessions.into_iter().enumerate() {
            c.title = titles.remove(&i).unwrap_or_default();
            if !c.turns.is_empty() {
                c.current = by_id.get(&c.id).and_then(|s| s.last);
                each(c)?;
            }
        }
        Ok(())
    }
}

/// An assistant line: joins the turn of the same reply when it follows it, else a new turn. Returns
/// that turn, or `None` when the line holds nothing.
fn assistant(
    out: &mut Conversation,
    session: &mut Session,
    message: &Value,
    uuid: &str,
    parent: Option<usize>,
    time: Option<i64>,
) -> std::result::Result<Option<usize>, String> {
    let reply = message["id"].as_str().unwrap_or_default();
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    match &message["content"] {
        Value::String(s) => text = s.clone(),
        Value::Array(blocks) => {
            for block in blocks {
                match block["type"].as_str().unwrap_or_default() {
                    "text" => paragraph(&mut text, block["text"].as_str().unwrap_or_default()),
                    "thinking" => paragraph(&mut reasoning, block["thinking"].as_str().unwrap_or_default()),
                    "tool_use" => {
                        let id = block["id"].as_str().unwrap_or_default().to_owned();
                        let name = block["name"].as_str().ok_or("a tool_use block without \"name\"")?.to_owned();
                        session.call_names.insert(id.clone(), name.clone());
                        calls.push(ToolCall { id, name, arguments: arguments_text(&block["input"]) });
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    if text.is_empty() && reasoning.is_empty() && calls.is_empty() {
        return Ok(None);
    }
    let same_reply = parent.filter(|p| !reply.is_empty() && session.reply_id.get(p).is_some_and(|r| r == reply));
    let at = match same_reply {
        Some(p) => p,
        None => {
            let mut turn = ImportedTurn::new(uuid, Role::Assistant, "");
            turn.parent = parent;
            turn.created_at = time.or_else(|| parent.and_then(|p| out.turns[p].created_at));
            if let Some(model) = message["model"].as_str() {
                turn.metadata.insert("model".into(), json!(model));
            }
            out.turns.push(turn);
            let at = out.turns.len() - 1;
            session.reply_id.insert(at, reply.to_owned());
            at
        }
    };
    let turn = &mut out.turns[at];
    paragraph(&mut turn.content, &text);
    turn.tool_calls.extend(calls);
    if !reasoning.is_empty() {
        let mut all = turn.metadata.get("reasoning").and_then(Value::as_str).unwrap_or_default().to_owned();
        paragraph(&mut all, &reasoning);
        turn.metadata.insert("reasoning".into(), json!(all));
    }
    Ok(Some(at))
}

/// A user line: its text as a user turn, each `tool_result` block as a tool turn.
fn user(
    out: &mut Conversation,
    session: &Session,
    message: &Value,
    uuid: &str,
    last: &mut Option<usize>,
    time: Option<i64>,
) {
    let push = |out: &mut Conversation, mut turn: ImportedTurn, last: &mut Option<usize>| {
        turn.parent = *last;
        turn.created_at = time.or_else(|| last.and_then(|p| out.turns[p].created_at));
        out.turns.push(turn);
        *last = Some(out.turns.len() - 1);
    };
    let mut text = String::new();
    match &message["content"] {
        Value::String(s) => text = s.clone(),
        Value::Array(blocks) => {
            for block in blocks {
                match block["type"].as_str().unwrap_or_default() {
                    "text" => paragraph(&mut text, block["text"].as_str().unwrap_or_default()),
                    "image" => paragraph(&mut text, "[image — not included in the transcript]"),
                    "tool_result" => {
                        let id = block["tool_use_id"].as_str().unwrap_or_default().to_owned();
                        let mut turn = ImportedTurn::new(uuid, Role::Tool, text_of(&block["content"]));
                        turn.tool_name = Some(session.call_names.get(&id).cloned().unwrap_or_else(|| "tool".into()));
                        turn.tool_call_id = Some(id);
                        if block["is_error"].as_bool() == Some(true) {
                            turn.metadata.insert("is_error".into(), json!(true));
                        }
                        push(out, turn, last);
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    if !text.trim().is_empty() {
        push(out, ImportedTurn::new(uuid, Role::User, text), last);
    }
}

fn paragraph(out: &mut String, piece: &str) {
    if piece.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(piece);
}
