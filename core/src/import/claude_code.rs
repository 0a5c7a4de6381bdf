//! Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`): one JSON object
//! per line. `user` and `assistant` lines carry `{uuid, parentUuid, sessionId, cwd, timestamp,
//! message: {role, content}}`; `summary` lines `{summary, leafUuid}` give the title. One session per
//! `sessionId`, over all the files given.
//!
//! Content blocks: `text` is text, `thinking` the reply's reasoning, `tool_use` a call and
//! `tool_result` (in a user line) a tool turn answering it. One API reply is written as several lines
//! (one per block) sharing `message.id`: they become one turn. Meta lines (`isMeta`) are left out and
//! counted, as are `system` lines; a line already read (the same `uuid`, as in a resumed session's
//! copy) is read once. Bookkeeping records (`file-history-snapshot`, `queue-operation`, …) may come
//! anywhere, first lines included, and are not read.
//!
//! Side chains (`isSidechain`: a sub-agent's work, in the session's file or in its own
//! `agent-<agentId>.jsonl`) are read apart, one per agent. Beside their session's own turns they are
//! left out and counted; without them (only the agent files were given) each is a session of its
//! own, titled as a sub-agent's. A line that is not JSON refuses the file; a session with a line that
//! cannot be read is left out with why.

use super::time::parse_iso8601_ms;
use super::{arguments_text, import_err, text_of, Conversation, Format, ImportFile, ImportedTurn, SkippedConversation};
use crate::error::Result;
use crate::{Role, ToolCall};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};

/// The sessions read so far, in the order they first appeared (keyed by `sessionId`, a side chain
/// by `sessionId/agent-<agentId>`).
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
    /// The last turn read (what a line without a known parent follows).
    last: Option<usize>,
    /// For a side chain: the session it belongs to (its `sessionId`).
    sidechain_of: Option<String>,
    /// For a side chain: its message lines, counted as left out when its session is imported too.
    lines: usize,
    /// Why it cannot be imported (a line that cannot be read: its file and line), if so.
    broken: Option<(String, String)>,
}

impl Sessions {
    /// Reads one file's lines into the sessions. A line that is not JSON is the file's error.
    pub(super) fn add_file(&mut self, file: &ImportFile<'_>) -> Result<()> {
        for (i, raw) in file.bytes.split(|b| *b == b'\n').enumerate() {
            let n = i + 1;
            if raw.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let v: Value = serde_json::from_slice(raw).map_err(|e| {
                let why =
                    if e.is_eof() { "the line ends too early: the file looks truncated" } else { "not valid JSON" };
                import_err(n, format!("line {n}: {why} ({e})"))
            })?;
            self.line(&v, (file.name, n));
        }
        Ok(())
    }

    /// Reads one record; `at` is its file and line, for a session that cannot be read.
    fn line(&mut self, v: &Value, at: (&str, usize)) {
        let ty = v["type"].as_str().unwrap_or_default();
        if ty == "summary" {
            if let (Some(leaf), Some(s)) = (v["leafUuid"].as_str(), v["summary"].as_str()) {
                self.summaries.insert(leaf.to_owned(), s.to_owned());
            }
            return;
        }
        let Some(sid) = v["sessionId"].as_str() else { return };
        let sidechain = v["isSidechain"].as_bool() == Some(true);
        let key = match (sidechain, v["agentId"].as_str()) {
            (false, _) => sid.to_owned(),
            (true, Some(agent)) => format!("{sid}/agent-{agent}"),
            (true, None) => format!("{sid}/sidechain"),
        };
        if !self.by_id.contains_key(&key) {
            let session = Session {
                index: self.sessions.len(),
                sidechain_of: sidechain.then(|| sid.to_owned()),
                ..Session::default()
            };
            self.by_id.insert(key.clone(), session);
            self.sessions.push(Conversation {
                format: Format::ClaudeCode,
                id: key.clone(),
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
        let session = self.by_id.get_mut(&key).expect("just inserted");
        let out = &mut self.sessions[session.index];
        let uuid = v["uuid"].as_str().unwrap_or_default().to_owned();
        if !uuid.is_empty() && session.node.contains_key(&uuid) {
            return; // read before
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
        if sidechain && matches!(ty, "user" | "assistant" | "system") {
            session.lines += 1;
        }
        let skip = !matches!(ty, "user" | "assistant") || v["isMeta"].as_bool() == Some(true);
        if skip {
            if matches!(ty, "user" | "assistant" | "system") {
                out.skipped += 1;
            }
            if !uuid.is_empty() {
                session.node.insert(uuid, parent);
            }
            return;
        }
        let message = &v["message"];
        let mut last = parent;
        if ty == "assistant" {
            if let Some(model) = message["model"].as_str().filter(|m| !m.starts_with('<')) {
                out.model = model.to_owned();
            }
            match assistant(out, session, message, &uuid, parent, time) {
                Ok(Some(turn)) => last = Some(turn),
                Ok(None) => out.skipped += 1,
                Err(e) => {
                    let (file, n) = at;
                    session.broken.get_or_insert_with(|| (file.to_owned(), format!("line {n}: {e}")));
                }
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
    }

    /// Hands every session to `each`, titled by its summary, and the ones that cannot be read to
    /// `skipped`. A side chain is left out (and its lines counted) when its session has turns of its
    /// own, else handed on as a sub-agent's session.
    pub(super) fn finish(
        self,
        each: &mut dyn FnMut(Conversation) -> Result<()>,
        skipped: &mut Vec<SkippedConversation>,
    ) -> Result<()> {
        let Sessions { sessions, by_id, summaries } = self;
        let mut titles: HashMap<usize, String> = HashMap::new();
        for (leaf, summary) in &summaries {
            for s in by_id.values() {
                if s.node.contains_key(leaf) {
                    titles.insert(s.index, summary.clone());
                }
            }
        }
        // Sessions read whole (or refused whole): their side chains are part of them.
        let whole: HashSet<&str> = sessions
            .iter()
            .filter(|c| by_id[&c.id].sidechain_of.is_none() && (!c.turns.is_empty() || by_id[&c.id].broken.is_some()))
            .map(|c| c.id.as_str())
            .collect();
        let mut sidechain_lines: HashMap<String, usize> = HashMap::new();
        for s in by_id.values() {
            if let Some(parent) = s.sidechain_of.as_deref().filter(|p| whole.contains(p)) {
                *sidechain_lines.entry(parent.to_owned()).or_default() += s.lines;
            }
        }
        let whole: HashSet<String> = whole.into_iter().map(str::to_owned).collect();
        for (i, mut c) in sessions.into_iter().enumerate() {
            let s = &by_id[&c.id];
            let title = titles.remove(&i).unwrap_or_default();
            if s.sidechain_of.as_ref().is_some_and(|p| whole.contains(p)) {
                continue; // counted in its session's left-out messages
            }
            if let Some((file, reason)) = &s.broken {
                let (file, reason) = (file.clone(), reason.clone());
                skipped.push(SkippedConversation { file, entry: None, id: c.id, title, reason });
                continue;
            }
            if c.turns.is_empty() {
                continue;
            }
            c.title = match s.sidechain_of {
                Some(_) => sidechain_title(&title, &c),
                None => title,
            };
            c.skipped += sidechain_lines.get(&c.id).copied().unwrap_or(0);
            c.current = s.last;
            each(c)?;
        }
        Ok(())
    }
}

/// A sub-agent's session's title: its summary, else its first prompt's first line, said to be a
/// sub-agent's.
fn sidechain_title(summary: &str, c: &Conversation) -> String {
    if !summary.trim().is_empty() {
        return format!("{} (sub-agent)", summary.trim());
    }
    let prompt = c.turns.iter().filter(|t| t.role == Role::User).find_map(|t| {
        t.content.lines().map(str::trim).find(|l| !l.is_empty()).map(|l| l.chars().take(100).collect::<String>())
    });
    match prompt {
        Some(p) => format!("Sub-agent: {p}"),
        None => "Sub-agent session".to_owned(),
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
