//! Import: a JSONL archive (see `jsonl`) in two steps, [`validate`] (parse and every check, reading
//! the archive but touching nothing) and [`write()`] (the checked rows in one transaction, through
//! `rows`); and an OpenAI-style `messages` array as a new session.
//!
//! A JSONL import is all-or-nothing and names the first bad line; sessions already in the archive
//! (same id) are skipped, not duplicated.

use super::jsonl::{BlobLine, Line, TurnLine, FORMAT_NAME, FORMAT_VERSION, OLDEST_FORMAT_VERSION};
use super::rows::{self, IfTaskExists, ToolExecutionRow, TurnRow};
use super::sessions::new_session_row;
use super::turns::{insert_turn, search_extra};
use super::Store;
use crate::error::{Context, Error, Result};
use crate::{
    ContextManifest, NewTurn, Role, Session, TaskEvent, TaskRecord, ToolCall, ToolExecution, TurnStatus,
    WorkspaceSettings,
};
use rusqlite::{Connection, OptionalExtension};
use std::collections::{HashMap, HashSet};

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Sessions added, each with all its rows.
    pub sessions_added: usize,
    /// Sessions already in the archive (same id), left as they were.
    pub sessions_skipped: usize,
    /// Turns added (those of skipped sessions are not).
    pub turns_added: usize,
    /// The ids of the sessions added, in file order (to open them from the import's summary).
    pub session_ids: Vec<String>,
}

/// A checked JSONL file: the rows to add, in file order, each with its line number, and what adding
/// them will do. Rows of skipped sessions are not in it.
#[derive(Debug)]
pub(super) struct ImportPlan {
    rows: Vec<(usize, PlannedRow)>,
    summary: ImportSummary,
}

/// One row to add. A session's `turn_count` is already its highest turn (or its fork turn).
#[derive(Debug)]
enum PlannedRow {
    Session(Session),
    Turn(TurnLine),
    ToolExecution(ToolExecution),
    Task(TaskRecord),
    TaskEvent(TaskEvent),
    Manifest(ContextManifest),
    /// Settings of a workspace that has none in the archive yet (the archive's own are kept).
    Workspace(WorkspaceSettings),
    /// An attachment's content, checked against its SHA-256 (stored once; kept only if a turn added
    /// by the import carries it).
    Blob {
        sha256: String,
        bytes: Vec<u8>,
    },
}

/// SQLite's words for the unique keys a file can repeat; [`validate`] finds the repeats first and
/// names them as an insert would (checked against SQLite in the tests).
const DUPLICATE_TURN: &str = "UNIQUE constraint failed: turns.session_id, turns.turn_number";
const DUPLICATE_TASK: &str = "UNIQUE constraint failed: tasks.task_id";
const DUPLICATE_TASK_EVENT: &str = "UNIQUE constraint failed: task_events.task_id, task_events.seq";

fn err(line: usize, message: String) -> Error {
    Error::Import { line, message }
}

impl Store {
    /// Imports a JSONL export in one transaction. A malformed file imports nothing and the error names
    /// the line; sessions that already exist are skipped.
    pub fn import_jsonl(&mut self, text: &str) -> Result<ImportSummary> {
        let plan = validate(&self.conn, text)?;
        write(&mut self.conn, plan)
    }

    /// What [`Store::import_jsonl`] would add from `text`, checked as the import checks it (a bad
    /// file is refused naming its line); nothing is written.
    pub fn preview_jsonl(&self, text: &str) -> Result<ImportSummary> {
        validate(&self.conn, text).map(|plan| plan.summary)
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
        rows::insert_session(&tx, &new_session_row(id.clone(), workspace, String::new(), now))
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
}

/// Parses `text` and checks every line against the file before it and the archive, without writing:
/// the first problem is an [`Error::Import`] naming its line.
pub(super) fn validate(conn: &Connection, text: &str) -> Result<ImportPlan> {
    let lines = parse_lines(text)?;
    let mut existing: HashSet<String> = HashSet::new();
    for (_, line) in &lines {
        if let Line::Session(s) = line {
            if session_exists(conn, &s.id).context("checking which sessions are in the archive")? {
                existing.insert(s.id.clone());
            }
        }
    }
    let skip = |sid: &str| existing.contains(sid);
    let mut plan = ImportPlan { rows: Vec::new(), summary: ImportSummary::default() };
    // Sessions declared so far (added or skipped), and where the added ones are in the plan.
    let mut in_file: HashSet<String> = HashSet::new();
    let mut planned_sessions: HashMap<String, usize> = HashMap::new();
    let mut task_sessions: HashMap<String, String> = HashMap::new();
    // Per session in the file: its own turns are numbered after this (0, or a fork's fork turn).
    let mut own_turns_after: HashMap<String, i64> = HashMap::new();
    let mut planned_turns: HashSet<(String, i64)> = HashSet::new();
    let mut planned_tasks: HashSet<String> = HashSet::new();
    let mut planned_events: HashSet<(String, i64)> = HashSet::new();
    let mut planned_workspaces: HashSet<String> = HashSet::new();
    let mut planned_blobs: HashSet<String> = HashSet::new();
    for (n, line) in lines {
        let row = match line {
            Line::Blob(b) => {
                let bytes = checked_blob(n, &b)?;
                if !planned_blobs.insert(b.sha256.clone()) {
                    continue;
                }
                PlannedRow::Blob { sha256: b.sha256, bytes }
            }
            Line::Header { .. } | Line::End { .. } => continue,
            Line::Workspace(w) => {
                let known = super::workspaces::get(conn, &w.workspace)?.is_some();
                if known || !planned_workspaces.insert(w.workspace.clone()) {
                    continue;
                }
                PlannedRow::Workspace(w)
            }
            Line::Session(mut s) => {
                if !in_file.insert(s.id.clone()) {
                    return Err(err(n, format!("session {} appears twice", s.id)));
                }
                // A fork shows its parent's turns up to `fork_turn`, then its own: fork pointers that
                // could hide turns are refused (found by fuzzing, see `fuzz/`).
                let refused = match (&s.parent_session_id, s.fork_turn) {
                    (None, None) => None,
                    (Some(p), _) if p == &s.id => Some("is a fork of itself".to_owned()),
                    (Some(_), Some(f)) if f < 0 => Some(format!("is a fork at turn {f}, before the start")),
                    (Some(_), Some(_)) => None,
                    (Some(p), None) => Some(format!("is a fork of {p} without a fork turn")),
                    (None, Some(f)) => Some(format!("has a fork turn ({f}) but no parent")),
                };
                if let Some(why) = refused {
                    return Err(err(n, format!("session {} {why}", s.id)));
                }
                own_turns_after.insert(s.id.clone(), s.fork_turn.unwrap_or(0));
                if skip(&s.id) {
                    plan.summary.sessions_skipped += 1;
                    continue;
                }
                if let Some(p) = &s.parent_session_id {
                    let parent_known =
                        in_file.contains(p) || session_exists(conn, p).context("checking a fork's parent")?;
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
                // The session shows its fork turn's worth of turns; its own turns raise the count.
                s.turn_count = s.fork_turn.unwrap_or(0);
                planned_sessions.insert(s.id.clone(), plan.rows.len());
                plan.summary.sessions_added += 1;
                plan.summary.session_ids.push(s.id.clone());
                PlannedRow::Session(s)
            }
            Line::Turn(t) => {
                if !in_file.contains(&t.session_id) {
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
                for a in &t.attachments {
                    let known = planned_blobs.contains(&a.sha256)
                        || blob_exists(conn, &a.sha256).context("checking which attachments are in the archive")?;
                    if !known {
                        let (number, sid, name) = (t.turn_number, &t.session_id, a.display_name());
                        let why = format!(
                            "turn {number} of session {sid} carries the attachment {name} (SHA-256 {}), whose content is not in the file",
                            a.sha256
                        );
                        return Err(err(n, why));
                    }
                }
                if !planned_turns.insert((t.session_id.clone(), t.turn_number)) {
                    let (number, sid) = (t.turn_number, &t.session_id);
                    return Err(err(n, format!("cannot add turn {number} of session {sid}: {DUPLICATE_TURN}")));
                }
                if let Some(PlannedRow::Session(s)) =
                    planned_sessions.get(&t.session_id).and_then(|&i| plan.rows.get_mut(i)).map(|(_, row)| row)
                {
                    s.turn_count = s.turn_count.max(t.turn_number);
                }
                plan.summary.turns_added += 1;
                PlannedRow::Turn(t)
            }
            Line::ToolExecution(e) => {
                if !in_file.contains(&e.session_id) {
                    return Err(err(n, format!("tool execution for undeclared session {}", e.session_id)));
                }
                if skip(&e.session_id) {
                    continue;
                }
                // The session is new, so its turns are the ones of the file added so far.
                if !planned_turns.contains(&(e.session_id.clone(), e.turn_number)) {
                    return Err(not_in_file(n, &e));
                }
                PlannedRow::ToolExecution(e)
            }
            Line::Task(t) => {
                if !in_file.contains(&t.session_id) {
                    return Err(err(n, format!("task {} for undeclared session {}", t.task_id, t.session_id)));
                }
                task_sessions.insert(t.task_id.clone(), t.session_id.clone());
                if skip(&t.session_id) {
                    continue;
                }
                let stored = task_exists(conn, &t.task_id).context("checking which tasks are in the archive")?;
                if !planned_tasks.insert(t.task_id.clone()) || stored {
                    return Err(err(n, format!("cannot add task {}: {DUPLICATE_TASK}", t.task_id)));
                }
                PlannedRow::Task(t)
            }
            Line::TaskEvent(e) => {
                let Some(sid) = task_sessions.get(&e.task_id) else {
                    return Err(err(n, format!("event for task {}, which is not declared before it", e.task_id)));
                };
                if skip(sid) {
                    continue;
                }
                // The task was added by this file (an archive's task would have been refused), so its
                // stored events are the ones added so far.
                if !planned_events.insert((e.task_id.clone(), e.seq)) {
                    let message = format!("cannot add event {} of task {}: {DUPLICATE_TASK_EVENT}", e.seq, e.task_id);
                    return Err(err(n, message));
                }
                PlannedRow::TaskEvent(e)
            }
            Line::Manifest(m) => {
                if !in_file.contains(&m.session_id) {
                    return Err(err(n, format!("manifest for undeclared session {}", m.session_id)));
                }
                if skip(&m.session_id) {
                    continue;
                }
                PlannedRow::Manifest(m)
            }
        };
        plan.rows.push((n, row));
    }
    Ok(plan)
}

/// Adds a validated plan's rows in one transaction: all of them or, if SQLite refuses one, none.
pub(super) fn write(conn: &mut Connection, plan: ImportPlan) -> Result<ImportSummary> {
    let tx = conn.transaction().context("starting the import")?;
    // Ids of the turns added, for their tool executions.
    let mut turn_ids: HashMap<(String, i64), i64> = HashMap::new();
    // The contents of the file, for the search text of the text-like attachments.
    let mut blobs: HashMap<&str, &[u8]> = HashMap::new();
    for (n, row) in &plan.rows {
        let n = *n;
        match row {
            PlannedRow::Session(s) => {
                rows::insert_session(&tx, s).map_err(|e| err(n, format!("cannot add session {}: {e}", s.id)))?;
            }
            PlannedRow::Blob { sha256, bytes } => {
                rows::insert_blob(&tx, sha256, bytes).map_err(|e| err(n, format!("cannot add an attachment: {e}")))?;
                blobs.insert(sha256, bytes);
            }
            PlannedRow::Turn(t) => {
                let mut extra = search_extra(t.tool_name.as_deref(), &t.tool_calls, &t.metadata);
                for a in &t.attachments {
                    let stored;
                    let bytes = match blobs.get(a.sha256.as_str()) {
                        Some(b) => *b,
                        None => {
                            stored = read_blob(&tx, &a.sha256)
                                .map_err(|e| err(n, format!("cannot read an attachment: {e}")))?;
                            &stored
                        }
                    };
                    super::attachments::index_one(&mut extra, &a.name, a.kind, bytes);
                }
                let gid = rows::imported_gid(&t.session_id, t.turn_number);
                let row = TurnRow {
                    session_id: &t.session_id,
                    turn_number: t.turn_number,
                    role: t.role,
                    content: &t.content,
                    tool_calls: &t.tool_calls,
                    tool_call_id: t.tool_call_id.as_deref(),
                    tool_name: t.tool_name.as_deref(),
                    token_count: t.token_count,
                    status: t.status,
                    created_at: t.created_at,
                    metadata: &t.metadata,
                    search_extra: &extra,
                    gid: Some(&gid),
                };
                let id = rows::insert_turn(&tx, &row).map_err(|e| {
                    err(n, format!("cannot add turn {} of session {}: {e}", t.turn_number, t.session_id))
                })?;
                turn_ids.insert((t.session_id.clone(), t.turn_number), id);
                for (position, a) in t.attachments.iter().enumerate() {
                    rows::insert_attachment(&tx, id, position, a).map_err(|e| {
                        err(n, format!("cannot add the attachment {} of turn {}: {e}", a.display_name(), t.turn_number))
                    })?;
                }
            }
            PlannedRow::ToolExecution(e) => {
                let turn_id = *turn_ids.get(&(e.session_id.clone(), e.turn_number)).ok_or_else(|| not_in_file(n, e))?;
                let row = ToolExecutionRow {
                    turn_id,
                    tool_name: &e.tool_name,
                    arguments: &e.arguments,
                    result: &e.result,
                    success: e.success,
                    duration_ms: e.duration_ms,
                    approval: e.approval,
                    created_at: e.created_at,
                };
                rows::insert_tool_execution(&tx, &row)
                    .map_err(|x| err(n, format!("cannot add tool execution: {x}")))?;
            }
            PlannedRow::Task(t) => {
                rows::insert_task(&tx, t, IfTaskExists::Fail)
                    .map_err(|x| err(n, format!("cannot add task {}: {x}", t.task_id)))?;
            }
            PlannedRow::TaskEvent(e) => {
                rows::insert_task_event(&tx, e)
                    .map_err(|x| err(n, format!("cannot add event {} of task {}: {x}", e.seq, e.task_id)))?;
            }
            PlannedRow::Manifest(m) => {
                rows::insert_manifest(&tx, m).map_err(|x| err(n, format!("cannot add manifest: {x}")))?;
            }
            PlannedRow::Workspace(w) => {
                super::workspaces::upsert(&tx, w)
                    .map_err(|x| err(n, format!("cannot add the settings of workspace {:?}: {x}", w.workspace)))?;
            }
        }
    }
    // Contents only skipped sessions' turns carried are not kept.
    super::attachments::delete_orphan_blobs(&tx)?;
    tx.commit().context("committing the import")?;
    Ok(plan.summary)
}

/// A blob line's bytes, checked: valid base64, the announced size, and the SHA-256 it is filed under.
fn checked_blob(n: usize, b: &BlobLine) -> Result<Vec<u8>> {
    super::attachments::valid_sha256(&b.sha256).map_err(|e| err(n, e.to_string()))?;
    let bytes = crate::attachment::from_base64(&b.data)
        .map_err(|e| err(n, format!("the attachment {} is not valid base64: {e}", b.sha256)))?;
    if bytes.len() as i64 != b.size {
        return Err(err(
            n,
            format!("the attachment {} has {} bytes, not the {} announced", b.sha256, bytes.len(), b.size),
        ));
    }
    let actual = crate::attachment::sha256_hex(&bytes);
    if actual != b.sha256 {
        return Err(err(
            n,
            format!(
                "the attachment {}'s content does not match its SHA-256 (it hashes to {actual}): the file is damaged",
                b.sha256
            ),
        ));
    }
    Ok(bytes)
}

fn blob_exists(conn: &Connection, sha256: &str) -> rusqlite::Result<bool> {
    Ok(conn.query_row("SELECT 1 FROM blobs WHERE sha256 = ?1", [sha256], |_| Ok(())).optional()?.is_some())
}

fn read_blob(conn: &Connection, sha256: &str) -> rusqlite::Result<Vec<u8>> {
    conn.query_row("SELECT data FROM blobs WHERE sha256 = ?1", [sha256], |r| r.get(0))
}

fn not_in_file(line: usize, e: &ToolExecution) -> Error {
    let message = format!(
        "tool execution refers to turn {} of session {}, which is not in the file",
        e.turn_number, e.session_id
    );
    err(line, message)
}

fn session_exists(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    Ok(conn.query_row("SELECT 1 FROM sessions WHERE id = ?1", [id], |_| Ok(())).optional()?.is_some())
}

fn task_exists(conn: &Connection, task_id: &str) -> rusqlite::Result<bool> {
    Ok(conn.query_row("SELECT 1 FROM tasks WHERE task_id = ?1", [task_id], |_| Ok(())).optional()?.is_some())
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
        let line = Line::parse(raw)
            .map_err(|e| Error::Import { line: n, message: format!("not a valid archive line: {e}") })?;
        match (&line, out.is_empty()) {
            (Line::Header { format, version }, true) => {
                if format != FORMAT_NAME {
                    return Err(Error::Import {
                        line: n,
                        message: format!("not a Cowork archive (format {format:?})"),
                    });
                }
                if !(OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(version) {
                    return Err(Error::Import {
                        line: n,
                        message: format!(
                            "archive format version {version} is not supported (this version reads {OLDEST_FORMAT_VERSION} to {FORMAT_VERSION})"
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
mod tests;
