//! Export and import: a lossless JSON Lines archive format of our own, readable Markdown per session,
//! and import of an OpenAI-style `messages` array.
//!
//! The JSONL format: a header line `{"type":"header","format":"cowork-archive","version":1}`, then per
//! session its `session`, `turn`, `tool_execution`, `task`, `task_event` and `manifest` lines (a fork's
//! parent always comes before it), then an `end` line with counts, so a truncated file is detected.
//! Import is all-or-nothing and names the first bad line; sessions already in the archive (same id)
//! are skipped, not duplicated.

use super::{insert_turn, metadata_json, search_extra, tool_calls_json, SessionFilter, Store};
use crate::error::{Context, Error, Result};
use crate::{
    ContextManifest, NewTurn, Role, Session, TaskEvent, TaskRecord, ToolCall, ToolExecution, Turn, TurnStatus,
};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// The JSONL format version this build writes and reads.
pub const FORMAT_VERSION: i64 = 1;
const FORMAT_NAME: &str = "cowork-archive";

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportSummary {
    pub sessions_added: usize,
    /// Sessions already in the archive (same id), left as they were.
    pub sessions_skipped: usize,
    pub turns_added: usize,
}

/// One line of the JSONL format (the wire type; converted by hand from the domain types).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum Line {
    Header { format: String, version: i64 },
    Session(Session),
    Turn(TurnLine),
    ToolExecution(ToolExecution),
    Task(TaskRecord),
    TaskEvent(TaskEvent),
    Manifest(ContextManifest),
    End { sessions: usize, turns: usize },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnLine {
    session_id: String,
    turn_number: i64,
    role: Role,
    content: String,
    tool_calls: Vec<ToolCall>,
    tool_call_id: Option<String>,
    tool_name: Option<String>,
    token_count: i64,
    status: TurnStatus,
    created_at: i64,
    metadata: serde_json::Value,
}

impl From<Turn> for TurnLine {
    fn from(t: Turn) -> TurnLine {
        TurnLine {
            session_id: t.session_id,
            turn_number: t.turn_number,
            role: t.role,
            content: t.content,
            tool_calls: t.tool_calls,
            tool_call_id: t.tool_call_id,
            tool_name: t.tool_name,
            token_count: t.token_count,
            status: t.status,
            created_at: t.created_at,
            metadata: t.metadata,
        }
    }
}

fn line_json(line: &Line) -> String {
    // Serialising plain data with string keys cannot fail.
    serde_json::to_string(line).expect("export lines are plain data")
}

impl Store {
    /// Exports the given sessions (all when `None`), with their forks' parents, as JSON Lines.
    pub fn export_jsonl(&self, only: Option<&[String]>) -> Result<String> {
        let all = self.list_sessions(&SessionFilter {
            include_archived: true,
            limit: usize::MAX >> 1,
            ..Default::default()
        })?;
        let by_id: HashMap<&str, &Session> = all.iter().map(|s| (s.id.as_str(), s)).collect();
        // The wanted sessions plus every ancestor a fork reads from.
        let mut wanted: HashSet<&str> = HashSet::new();
        for s in &all {
            if only.is_none_or(|ids| ids.iter().any(|id| id == &s.id)) {
                let mut cur = Some(s.id.as_str());
                while let Some(id) = cur {
                    if !wanted.insert(id) {
                        break;
                    }
                    cur = by_id.get(id).and_then(|s| s.parent_session_id.as_deref());
                }
            }
        }
        // Oldest first, parents before forks.
        let mut ordered: Vec<&Session> = Vec::new();
        let mut placed: HashSet<&str> = HashSet::new();
        let mut pending: Vec<&Session> = all.iter().rev().filter(|s| wanted.contains(s.id.as_str())).collect();
        while !pending.is_empty() {
            let before = pending.len();
            pending.retain(|s| {
                let ready = s.parent_session_id.as_deref().is_none_or(|p| placed.contains(p) || !by_id.contains_key(p));
                if ready {
                    placed.insert(s.id.as_str());
                    ordered.push(s);
                }
                !ready
            });
            if pending.len() == before {
                ordered.append(&mut pending); // a cycle cannot happen; never loop forever anyway
            }
        }

        let mut out = line_json(&Line::Header { format: FORMAT_NAME.into(), version: FORMAT_VERSION });
        out.push('\n');
        let mut push = |line: Line| {
            out.push_str(&line_json(&line));
            out.push('\n');
        };
        let mut turn_total = 0;
        for s in &ordered {
            push(Line::Session((*s).clone()));
            let own = self.own_turns(&s.id)?;
            turn_total += own.len();
            for t in own {
                push(Line::Turn(t.into()));
            }
            for e in self.own_tool_executions(&s.id)? {
                push(Line::ToolExecution(e));
            }
            for task in self.tasks(&s.id)? {
                let events = self.task_events(&task.task_id)?;
                push(Line::Task(task));
                events.into_iter().for_each(|e| push(Line::TaskEvent(e)));
            }
            let mut manifests = self.manifests(&s.id, usize::MAX >> 1)?;
            manifests.reverse();
            manifests.into_iter().for_each(|m| push(Line::Manifest(m)));
        }
        push(Line::End { sessions: ordered.len(), turns: turn_total });
        Ok(out)
    }

    /// Turns stored under this session id itself (not inherited from a fork parent).
    fn own_turns(&self, session_id: &str) -> Result<Vec<Turn>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {} FROM turns t WHERE t.session_id = ?1 ORDER BY t.turn_number",
                super::TURN_COLS
            ))
            .and_then(|mut s| s.query_map([session_id], super::turn_from_row)?.collect())
            .context(format!("exporting the turns of session {session_id}"))
    }

    fn own_tool_executions(&self, session_id: &str) -> Result<Vec<ToolExecution>> {
        self.conn
            .prepare_cached(
                "SELECT t.session_id, t.turn_number, e.tool_name, e.arguments, e.result, e.success, e.duration_ms,
                     e.approval, e.created_at
                 FROM tool_executions e JOIN turns t ON t.id = e.turn_id WHERE t.session_id = ?1 ORDER BY e.id",
            )
            .and_then(|mut s| s.query_map([session_id], super::tool_execution_from_row)?.collect())
            .context(format!("exporting the tool executions of session {session_id}"))
    }

    /// Imports a JSONL export in one transaction. A malformed file imports nothing and the error names
    /// the line; sessions that already exist are skipped.
    pub fn import_jsonl(&mut self, text: &str) -> Result<ImportSummary> {
        let lines = parse_lines(text)?;
        let existing: HashSet<String> = lines
            .iter()
            .filter_map(|(_, l)| match l {
                Line::Session(s) => Some(s.id.clone()),
                _ => None,
            })
            .filter(|id| self.get_session(id).is_ok())
            .collect();
        let mut summary = ImportSummary::default();
        let mut in_file: HashSet<String> = HashSet::new();
        let mut task_sessions: HashMap<String, String> = HashMap::new();
        // Per session in the file: its own turns are numbered after this (0, or a fork's fork turn).
        let mut own_turns_after: HashMap<String, i64> = HashMap::new();
        let tx = self.conn.transaction().context("starting the import")?;
        let err = |line: usize, message: String| Error::Import { line, message };
        for (n, line) in &lines {
            let n = *n;
            let skip = |sid: &str| existing.contains(sid);
            let known = |sid: &str, in_file: &HashSet<String>| in_file.contains(sid);
            match line {
                Line::Header { .. } | Line::End { .. } => {}
                Line::Session(s) => {
                    if !in_file.insert(s.id.clone()) {
                        return Err(err(n, format!("session {} appears twice", s.id)));
                    }
                    // A fork shows its parent's turns up to `fork_turn`, then its own: fork pointers that
                    // could hide turns are refused (found by fuzzing, see `fuzz/`).
                    let refused = match (&s.parent_session_id, s.fork_turn) {
                        (None, None) => None,
                        (Some(p), _) if p == &s.id => Some("is a fork of itself".to_owned()),
                        (Some(_), Some(f)) if f < 1 => Some(format!("is a fork at turn {f}, before any turn")),
                        (Some(_), Some(_)) => None,
                        (Some(p), None) => Some(format!("is a fork of {p} without a fork turn")),
                        (None, Some(f)) => Some(format!("has a fork turn ({f}) but no parent")),
                    };
                    if let Some(why) = refused {
                        return Err(err(n, format!("session {} {why}", s.id)));
                    }
                    own_turns_after.insert(s.id.clone(), s.fork_turn.unwrap_or(0));
                    if skip(&s.id) {
                        summary.sessions_skipped += 1;
                        continue;
                    }
                    if let Some(p) = &s.parent_session_id {
                        let parent_known = in_file.contains(p)
                            || tx
                                .query_row("SELECT 1 FROM sessions WHERE id = ?1", [p], |_| Ok(()))
                                .optional()
                                .context("checking a fork's parent")?
                                .is_some();
                        if !parent_known {
                            return Err(err(
                                n,
                                format!(
                                    "session {} is a fork of {p}, which is neither in the file nor in the archive",
                                    s.id
                                ),
                            ));
                        }
                    }
                    tx.execute(
                        "INSERT INTO sessions (id, workspace, title, model, system_prompt, created_at, last_active_at,
                             turn_count, prompt_tokens, completion_tokens, session_state, parent_session_id, fork_turn,
                             is_archived)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                        params![
                            s.id,
                            s.workspace,
                            s.title,
                            s.model,
                            s.system_prompt,
                            s.created_at,
                            s.last_active_at,
                            s.fork_turn.unwrap_or(0),
                            s.prompt_tokens,
                            s.completion_tokens,
                            s.state.to_string(),
                            s.parent_session_id,
                            s.fork_turn,
                            s.is_archived
                        ],
                    )
                    .map_err(|e| err(n, format!("cannot add session {}: {e}", s.id)))?;
                    summary.sessions_added += 1;
                }
                Line::Turn(t) => {
                    if !known(&t.session_id, &in_file) {
                        return Err(err(
                            n,
                            format!(
                                "turn {} belongs to session {}, which is not declared before it",
                                t.turn_number, t.session_id
                            ),
                        ));
                    }
                    // Reading a session shows turns 1.. (a fork: after its fork turn); others would be hidden.
                    let first = own_turns_after.get(&t.session_id).copied().unwrap_or(0) + 1;
                    if t.turn_number < first {
                        let (number, sid) = (t.turn_number, &t.session_id);
                        let why = format!("turn {number} of session {sid} would be hidden: its turns start at {first}");
                        return Err(err(n, why));
                    }
                    if skip(&t.session_id) {
                        continue;
                    }
                    let new = NewTurn {
                        role: t.role,
                        content: t.content.clone(),
                        tool_calls: t.tool_calls.clone(),
                        tool_call_id: t.tool_call_id.clone(),
                        tool_name: t.tool_name.clone(),
                        status: t.status,
                        metadata: t.metadata.clone(),
                    };
                    tx.execute(
                        "INSERT INTO turns (session_id, turn_number, role, content, tool_calls, tool_call_id, tool_name,
                             token_count, status, created_at, metadata, search_extra)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                        params![
                            t.session_id, t.turn_number, t.role.as_str(), t.content, tool_calls_json(&t.tool_calls),
                            t.tool_call_id, t.tool_name, t.token_count, t.status.as_str(), t.created_at,
                            metadata_json(&t.metadata), search_extra(&new)
                        ],
                    )
                    .map_err(|e| err(n, format!("cannot add turn {} of session {}: {e}", t.turn_number, t.session_id)))?;
                    tx.execute(
                        "UPDATE sessions SET turn_count = MAX(turn_count, ?2) WHERE id = ?1",
                        params![t.session_id, t.turn_number],
                    )
                    .context("counting imported turns")?;
                    summary.turns_added += 1;
                }
                Line::ToolExecution(e) => {
                    if !known(&e.session_id, &in_file) {
                        return Err(err(n, format!("tool execution for undeclared session {}", e.session_id)));
                    }
                    if skip(&e.session_id) {
                        continue;
                    }
                    let turn_id: Option<i64> = tx
                        .query_row(
                            "SELECT id FROM turns WHERE session_id = ?1 AND turn_number = ?2",
                            params![e.session_id, e.turn_number],
                            |r| r.get(0),
                        )
                        .optional()
                        .context("finding a tool execution's turn")?;
                    let turn_id = turn_id.ok_or_else(|| {
                        err(
                            n,
                            format!(
                                "tool execution refers to turn {} of session {}, which is not in the file",
                                e.turn_number, e.session_id
                            ),
                        )
                    })?;
                    tx.execute(
                        "INSERT INTO tool_executions (turn_id, tool_name, arguments, result, success, duration_ms, approval, created_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                        params![turn_id, e.tool_name, e.arguments, e.result, e.success, e.duration_ms, e.approval.as_str(), e.created_at],
                    )
                    .map_err(|x| err(n, format!("cannot add tool execution: {x}")))?;
                }
                Line::Task(t) => {
                    if !known(&t.session_id, &in_file) {
                        return Err(err(n, format!("task {} for undeclared session {}", t.task_id, t.session_id)));
                    }
                    task_sessions.insert(t.task_id.clone(), t.session_id.clone());
                    if skip(&t.session_id) {
                        continue;
                    }
                    tx.execute(
                        "INSERT INTO tasks (task_id, session_id, turn_number, goal, context, status, result_delivered, created_at, updated_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                        params![t.task_id, t.session_id, t.turn_number, t.goal, t.context, t.status, t.result_delivered, t.created_at, t.updated_at],
                    )
                    .map_err(|x| err(n, format!("cannot add task {}: {x}", t.task_id)))?;
                }
                Line::TaskEvent(e) => {
                    let Some(sid) = task_sessions.get(&e.task_id) else {
                        return Err(err(n, format!("event for task {}, which is not declared before it", e.task_id)));
                    };
                    if skip(sid) {
                        continue;
                    }
                    tx.execute(
                        "INSERT INTO task_events (task_id, seq, event_type, data, received_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                        params![e.task_id, e.seq, e.event_type, e.data, e.received_at],
                    )
                    .map_err(|x| err(n, format!("cannot add event {} of task {}: {x}", e.seq, e.task_id)))?;
                }
                Line::Manifest(m) => {
                    if !known(&m.session_id, &in_file) {
                        return Err(err(n, format!("manifest for undeclared session {}", m.session_id)));
                    }
                    if skip(&m.session_id) {
                        continue;
                    }
                    tx.execute(
                        "INSERT INTO context_manifests (session_id, turn_numbers, trimmed_turns, state_version,
                             estimated_tokens, budget_tokens, usage, created_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                        params![
                            m.session_id,
                            serde_json::to_string(&m.turn_numbers).unwrap_or_default(),
                            serde_json::to_string(&m.trimmed_turns).unwrap_or_default(),
                            m.state_version,
                            m.estimated_tokens,
                            m.budget_tokens,
                            metadata_json(&m.usage),
                            m.created_at
                        ],
                    )
                    .map_err(|x| err(n, format!("cannot add manifest: {x}")))?;
                }
            }
        }
        tx.commit().context("committing the import")?;
        Ok(summary)
    }

    /// Imports an OpenAI-style `messages` array (or `{"messages": [...]}`) as a new session in
    /// `workspace`. The same messages imported twice give the same session, not a duplicate.
    pub fn import_openai_messages(&mut self, json: &str, workspace: &str) -> Result<Session> {
        let value: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| Error::Import { line: e.line(), message: format!("not valid JSON: {e}") })?;
        let messages = match &value {
            serde_json::Value::Array(a) => a,
            serde_json::Value::Object(o) => match o.get("messages") {
                Some(serde_json::Value::Array(a)) => a,
                _ => {
                    return Err(Error::Import {
                        line: 1,
                        message: "expected a messages array or an object with \"messages\"".into(),
                    })
                }
            },
            _ => return Err(Error::Import { line: 1, message: "expected a messages array".into() }),
        };
        let turns = messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                openai_message(m)
                    .map_err(|message| Error::Import { line: i + 1, message: format!("message {}: {message}", i + 1) })
            })
            .collect::<Result<Vec<NewTurn>>>()?;
        if turns.is_empty() {
            return Err(Error::Import { line: 1, message: "the messages array is empty".into() });
        }
        let canonical = serde_json::to_string(messages).context("reading the messages")?;
        let id = uuid::Uuid::new_v5(
            &uuid::Uuid::NAMESPACE_OID,
            format!("cowork-openai-import\n{workspace}\n{canonical}").as_bytes(),
        )
        .to_string();
        if let Ok(existing) = self.get_session(&id) {
            return Ok(existing);
        }
        let now = self.tick();
        let tx = self.conn.transaction().context("starting the import")?;
        tx.execute(
            "INSERT INTO sessions (id, workspace, title, created_at, last_active_at) VALUES (?1, ?2, '', ?3, ?3)",
            params![id, workspace, now],
        )
        .context("creating the imported session")?;
        for (i, t) in turns.iter().enumerate() {
            insert_turn(&tx, &id, t, now + i as i64)?;
        }
        tx.execute("UPDATE sessions SET title = 'Imported conversation' WHERE id = ?1 AND title = ''", [&id])
            .context("titling the imported session")?;
        tx.commit().context("committing the import")?;
        self.last_ms.set(self.last_ms.get().max(now + turns.len() as i64));
        self.get_session(&id)
    }

    /// A readable Markdown rendering of one session (not re-importable; use JSONL for that).
    pub fn export_markdown(&self, session_id: &str) -> Result<String> {
        let s = self.get_session(session_id)?;
        let mut out = format!("# {}\n\n", if s.title.is_empty() { "Untitled session" } else { &s.title });
        out.push_str(&format!("- Workspace: {}\n- Session: {}\n", s.workspace, s.id));
        if !s.model.is_empty() {
            out.push_str(&format!("- Model: {}\n", s.model));
        }
        out.push_str(&format!("- Turns: {}\n", s.turn_count));
        if let (Some(p), Some(f)) = (&s.parent_session_id, s.fork_turn) {
            out.push_str(&format!("- Forked from {p} after turn {f}\n"));
        }
        let mut start = 1;
        while start <= s.turn_count {
            let end = start + 499;
            for t in self.turns_range(session_id, start, end)? {
                let who = match (t.role, &t.tool_name) {
                    (Role::Tool, Some(name)) => format!("tool · {name}"),
                    (role, _) => role.to_string(),
                };
                let status = match t.status {
                    TurnStatus::Complete => String::new(),
                    other => format!(" · {}", other.as_str()),
                };
                out.push_str(&format!("\n## Turn {} · {who}{status}\n\n", t.turn_number));
                if !t.content.is_empty() {
                    if t.role == Role::Tool {
                        out.push_str(&fenced(&t.content));
                    } else {
                        out.push_str(&t.content);
                        out.push('\n');
                    }
                }
                for c in &t.tool_calls {
                    out.push_str(&format!("\n**Tool call** `{}`\n\n", c.name));
                    out.push_str(&fenced(&c.arguments));
                }
            }
            start = end + 1;
        }
        Ok(out)
    }
}

/// A fenced code block long enough not to be closed by backticks inside `text`.
fn fenced(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}\n{text}\n{fence}\n")
}

fn parse_lines(text: &str) -> Result<Vec<(usize, Line)>> {
    let mut out = Vec::new();
    let mut ended = false;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        if ended {
            return Err(Error::Import { line: n, message: "content after the end line".into() });
        }
        let line: Line = serde_json::from_str(raw)
            .map_err(|e| Error::Import { line: n, message: format!("not a valid archive line: {e}") })?;
        match (&line, out.is_empty()) {
            (Line::Header { format, version }, true) => {
                if format != FORMAT_NAME {
                    return Err(Error::Import {
                        line: n,
                        message: format!("not a Cowork archive (format {format:?})"),
                    });
                }
                if *version != FORMAT_VERSION {
                    return Err(Error::Import {
                        line: n,
                        message: format!(
                            "archive format version {version} is not supported (this version reads {FORMAT_VERSION})"
                        ),
                    });
                }
            }
            (_, true) => {
                return Err(Error::Import { line: n, message: "the first line must be the archive header".into() })
            }
            (Line::Header { .. }, false) => return Err(Error::Import { line: n, message: "a second header".into() }),
            (Line::End { sessions, turns }, false) => {
                let s = out.iter().filter(|(_, l)| matches!(l, Line::Session(_))).count();
                let t = out.iter().filter(|(_, l)| matches!(l, Line::Turn(_))).count();
                if (s, t) != (*sessions, *turns) {
                    return Err(Error::Import { line: n, message: format!("the end line announces {sessions} sessions and {turns} turns but the file holds {s} and {t}") });
                }
                ended = true;
            }
            _ => {}
        }
        out.push((n, line));
    }
    if out.is_empty() {
        return Err(Error::Import { line: 1, message: "the file is empty".into() });
    }
    if !ended {
        return Err(Error::Import {
            line: text.lines().count() + 1,
            message: "the file ends without its end line: it looks truncated".into(),
        });
    }
    Ok(out)
}

/// One OpenAI chat message as a turn. Content may be a string, null, or an array of text parts.
fn openai_message(m: &serde_json::Value) -> std::result::Result<NewTurn, String> {
    let role = m["role"].as_str().ok_or("missing \"role\"")?;
    let role = match role {
        "system" | "developer" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" | "function" => Role::Tool,
        other => return Err(format!("unknown role {other:?}")),
    };
    let content = match &m["content"] {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(parts) => {
            parts.iter().filter_map(|p| p["text"].as_str().or_else(|| p.as_str())).collect::<Vec<_>>().join("\n")
        }
        other => return Err(format!("unsupported content {other}")),
    };
    let tool_calls = match &m["tool_calls"] {
        serde_json::Value::Null => Vec::new(),
        serde_json::Value::Array(calls) => calls
            .iter()
            .map(|c| {
                let args = &c["function"]["arguments"];
                Ok(ToolCall {
                    id: c["id"].as_str().unwrap_or_default().to_owned(),
                    name: c["function"]["name"].as_str().ok_or("a tool call without function.name")?.to_owned(),
                    arguments: args.as_str().map(str::to_owned).unwrap_or_else(|| args.to_string()),
                })
            })
            .collect::<std::result::Result<_, String>>()?,
        _ => return Err("\"tool_calls\" must be an array".into()),
    };
    Ok(NewTurn {
        role,
        content,
        tool_calls,
        tool_call_id: m["tool_call_id"].as_str().map(str::to_owned),
        tool_name: m["name"].as_str().map(str::to_owned),
        status: TurnStatus::Complete,
        metadata: serde_json::Value::Null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"type":"header","format":"cowork-archive","version":1}"#;

    fn session_line(id: &str, parent: Option<&str>, fork_turn: Option<i64>, state: &str) -> String {
        format!(
            r#"{{"type":"session","id":"{id}","workspace":"w","title":"t","model":"","system_prompt":"","created_at":1,"last_active_at":2,"turn_count":0,"prompt_tokens":0,"completion_tokens":0,"state":{state},"parent_session_id":{},"fork_turn":{},"is_archived":false}}"#,
            parent.map_or("null".to_owned(), |p| format!("{p:?}")),
            fork_turn.map_or("null".to_owned(), |f| f.to_string()),
        )
    }

    fn turn_line(session: &str, number: i64, metadata: &str) -> String {
        format!(
            r#"{{"type":"turn","session_id":"{session}","turn_number":{number},"role":"user","content":"turn {number}","tool_calls":[],"tool_call_id":null,"tool_name":null,"token_count":1,"status":"complete","created_at":3,"metadata":{metadata}}}"#
        )
    }

    /// A whole file: the header, `lines`, and an end line with the right counts.
    fn file(lines: &[String]) -> String {
        let count = |kind: &str| lines.iter().filter(|l| l.starts_with(&format!(r#"{{"type":"{kind}""#))).count();
        let end = format!(r#"{{"type":"end","sessions":{},"turns":{}}}"#, count("session"), count("turn"));
        [HEADER.to_owned()].iter().chain(lines).chain([&end]).cloned().collect::<Vec<_>>().join("\n")
    }

    /// `lines` must be refused with an error naming line `line` (1-based, the header is line 1) whose
    /// message contains `says`, and nothing may be imported.
    fn check_refused(lines: &[String], line: usize, says: &str) {
        let text = file(lines);
        let mut store = Store::open_in_memory().unwrap();
        match store.import_jsonl(&text) {
            Err(Error::Import { line: got, message }) => {
                assert_eq!(got, line, "{message}\nfile:\n{text}");
                assert!(message.contains(says), "{message:?} should say {says:?}; file:\n{text}");
            }
            other => panic!("expected an import error at line {line}, got {other:?}; file:\n{text}"),
        }
        assert_eq!(store.stats().unwrap().turns, 0, "nothing imported");
        assert_eq!(store.stats().unwrap().sessions, 0, "nothing imported");
    }

    /// Found by fuzzing (`fuzz/fuzz_targets/jsonl_import.rs`): turn numbers and fork pointers that the
    /// archive stores but reading the session never shows (turn 0, a fork's own turn at or before its
    /// fork turn, a fork pointer to itself or half a fork pointer) used to be imported silently.
    #[test]
    fn an_import_that_would_hide_turns_is_refused() {
        let parent = session_line("p", None, None, "{}");
        let turn = |s: &str, n: i64| turn_line(s, n, "null");
        check_refused(&[parent.clone(), turn("p", 0)], 3, "turn 0 of session p would be hidden");
        check_refused(&[parent.clone(), turn("p", -4)], 3, "would be hidden");
        let fork = session_line("f", Some("p"), Some(2), "{}");
        check_refused(&[parent.clone(), turn("p", 1), turn("p", 2), fork.clone(), turn("f", 2)], 6, "start at 3");
        check_refused(&[session_line("s", Some("s"), Some(1), "{}"), turn("s", 2)], 2, "a fork of itself");
        check_refused(&[session_line("s", None, Some(3), "{}"), turn("s", 1)], 2, "no parent");
        check_refused(&[parent.clone(), session_line("f", Some("p"), None, "{}")], 3, "without a fork turn");
        check_refused(&[parent.clone(), session_line("f", Some("p"), Some(0), "{}")], 3, "a fork at turn 0");

        // The same shapes with visible numbers import, and every turn shows.
        let ok = file(&[parent, turn("p", 1), turn("p", 2), fork, turn("f", 3), turn("f", 4)]);
        let mut store = Store::open_in_memory().unwrap();
        assert_eq!(store.import_jsonl(&ok).unwrap().turns_added, 4);
        let shown = |sid: &str| {
            store
                .turns_range(sid, 1, 100)
                .unwrap()
                .iter()
                .map(|t| (t.session_id.clone(), t.turn_number))
                .collect::<Vec<_>>()
        };
        assert_eq!(shown("p"), [("p".into(), 1), ("p".into(), 2)]);
        assert_eq!(shown("f"), [("p".into(), 1), ("p".into(), 2), ("f".into(), 3), ("f".into(), 4)]);
    }

    /// Found by fuzzing: serde_json's default float parsing can be one unit in the last place off, so
    /// a number in a turn's metadata, a session's state or a manifest's usage came back different from
    /// what was saved (and export → import → export changed the file). `float_roundtrip` fixes it.
    #[test]
    fn json_numbers_in_metadata_and_state_come_back_exactly() {
        let numbers = [
            5.357830195732913e-76,
            1.603964615428183e143,
            9.643915712060552e-234,
            0.1,
            1e-7,
            f64::MAX,
            f64::MIN_POSITIVE,
            -0.0,
        ];
        let value = serde_json::json!({ "numbers": numbers, "cost_usd": 1.603964615428183e143 });
        let bits = |v: &serde_json::Value| -> Vec<u64> {
            v["numbers"].as_array().unwrap().iter().map(|n| n.as_f64().unwrap().to_bits()).collect()
        };
        let expected: Vec<u64> = numbers.iter().map(|n| n.to_bits()).collect();

        // Saved and read back through the store.
        let mut store = Store::open_in_memory().unwrap();
        let sid = store.create_session(&crate::store::NewSession::new("w")).unwrap().id;
        store.update_state(&sid, &value).unwrap();
        let mut turn = NewTurn::user("hello");
        turn.metadata = value.clone();
        store.append_turn(&sid, &turn).unwrap();
        assert_eq!(bits(&store.get_session(&sid).unwrap().state), expected, "session state");
        assert_eq!(bits(&store.last_turns(&sid, 1).unwrap()[0].metadata), expected, "turn metadata");

        // Imported from a file, exported, imported again: the same numbers and the same file.
        let text = file(&[session_line("s", None, None, &value.to_string()), turn_line("s", 1, &value.to_string())]);
        let mut first = Store::open_in_memory().unwrap();
        first.import_jsonl(&text).unwrap();
        assert_eq!(bits(&first.get_session("s").unwrap().state), expected, "imported state");
        assert_eq!(bits(&first.turns_range("s", 1, 1).unwrap()[0].metadata), expected, "imported metadata");
        let exported = first.export_jsonl(None).unwrap();
        let mut second = Store::open_in_memory().unwrap();
        second.import_jsonl(&exported).unwrap();
        assert_eq!(second.export_jsonl(None).unwrap(), exported, "export → import → export is identical");

        // A number as a file writes it is exported as written, however often it goes round: it used to
        // drift by one unit in the last place on each import (979.8078511817087 → …88 → …89).
        let written = "979.8078511817087";
        let mut text = file(&[session_line("s", None, None, &format!(r#"{{"elapsed_ms":{written}}}"#))]);
        for round in 1..=3 {
            let mut store = Store::open_in_memory().unwrap();
            store.import_jsonl(&text).unwrap();
            text = store.export_jsonl(None).unwrap();
            assert!(text.contains(&format!(r#""elapsed_ms":{written}"#)), "round {round}: {text}");
        }
    }
}
