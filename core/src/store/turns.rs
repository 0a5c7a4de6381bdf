//! Turns: appending (numbered, write-through), checkpointing and finalising interrupted turns, reading
//! them through a fork's ancestry, and the tool executions recorded beside tool results.

use super::rows::{self, tool_calls_json, turn_from_row, ToolExecutionRow, TurnRow, TOOL_EXECUTION_COLS, TURN_COLS};
use super::sessions::clip_title;
use super::Store;
use crate::error::{Context, Error, Result};
use crate::tokens::estimate_tokens;
use crate::{Approval, NewAttachment, NewTurn, Role, ToolCall, ToolExecution, Turn};
use rusqlite::{params, OptionalExtension, TransactionBehavior};

/// How many of the newest turns [`Store::find_recent_by_client_key`] looks through.
pub const CLIENT_KEY_WINDOW: i64 = 1000;

/// What a tool run produced, recorded beside its result turn.
#[derive(Debug, Clone, PartialEq)]
pub struct NewToolExecution {
    /// The tool that ran.
    pub tool_name: String,
    /// Its arguments as the model sent them (usually JSON text).
    pub arguments: String,
    /// Whether it succeeded (`false` when the user declined it).
    pub success: bool,
    /// How long it took, in milliseconds.
    pub duration_ms: i64,
    /// How it was allowed to run.
    pub approval: Approval,
}

impl Store {
    /// Appends a turn and commits before returning (write-through). Returns the stored turn with its
    /// number. The first user message of an untitled session becomes its title.
    pub fn append_turn(&mut self, session_id: &str, turn: &NewTurn) -> Result<Turn> {
        self.append_turn_with_attachments(session_id, turn, &[], 0)
    }

    /// [`Store::append_turn`] with the images and files the turn carries, saved in the same
    /// transaction: each content once (a file attached again is linked, not stored again), text-like
    /// files indexed for search with their names. An attachment over `max_bytes` (the sending
    /// profile's `max_attachment_bytes`; 0: [`crate::attachment::DEFAULT_MAX_ATTACHMENT_BYTES`]) is
    /// refused ([`crate::Error::AttachmentTooLarge`]) and nothing is saved. The limit is the caller's,
    /// never the store's: whoever appends says which applies.
    pub fn append_turn_with_attachments(
        &mut self,
        session_id: &str,
        turn: &NewTurn,
        attachments: &[NewAttachment],
        max_bytes: u64,
    ) -> Result<Turn> {
        let limit = if max_bytes == 0 { crate::attachment::DEFAULT_MAX_ATTACHMENT_BYTES } else { max_bytes };
        super::attachments::check_sizes(attachments, limit)?;
        let attachments = super::attachments::examine(attachments);
        let now = self.tick();
        let tx =
            self.conn.transaction_with_behavior(TransactionBehavior::Immediate).context("starting to append a turn")?;
        let mut stored = insert_turn_with(&tx, session_id, turn, &attachments, now)?;
        stored.attachments = super::attachments::save(&tx, stored.id, &attachments)?;
        tx.commit().context(format!("saving turn {} of session {session_id}", stored.turn_number))?;
        Ok(stored)
    }

    /// Appends several turns in one transaction (imports, seeding): all are saved or none.
    pub fn append_turns(&mut self, session_id: &str, turns: &[NewTurn]) -> Result<Vec<Turn>> {
        let now = self.tick();
        let tx =
            self.conn.transaction_with_behavior(TransactionBehavior::Immediate).context("starting to append turns")?;
        let stored = turns
            .iter()
            .enumerate()
            .map(|(i, t)| insert_turn(&tx, session_id, t, now + i as i64))
            .collect::<Result<Vec<Turn>>>()?;
        tx.commit().context(format!("saving {} turns of session {session_id}", turns.len()))?;
        self.last_ms.set(self.last_ms.get().max(now + turns.len() as i64));
        Ok(stored)
    }

    /// Appends a tool-result turn and its execution record in one transaction.
    pub fn append_tool_result(&mut self, session_id: &str, turn: &NewTurn, exec: &NewToolExecution) -> Result<Turn> {
        self.append_tool_result_with(session_id, turn, exec, &[])
    }

    /// [`Store::append_tool_result`] with the files the result carried (an MCP tool's images, audio,
    /// blobs), saved with the turn in the same transaction (each at most the default attachment limit).
    pub fn append_tool_result_with(
        &mut self,
        session_id: &str,
        turn: &NewTurn,
        exec: &NewToolExecution,
        attachments: &[NewAttachment],
    ) -> Result<Turn> {
        super::attachments::check_sizes(attachments, crate::attachment::DEFAULT_MAX_ATTACHMENT_BYTES)?;
        let attachments = super::attachments::examine(attachments);
        let now = self.tick();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .context("starting to append a tool result")?;
        let mut stored = insert_turn_with(&tx, session_id, turn, &attachments, now)?;
        stored.attachments = super::attachments::save(&tx, stored.id, &attachments)?;
        let row = ToolExecutionRow {
            turn_id: stored.id,
            tool_name: &exec.tool_name,
            arguments: &exec.arguments,
            result: &turn.content,
            success: exec.success,
            duration_ms: exec.duration_ms,
            approval: exec.approval,
            created_at: stored.created_at,
        };
        rows::insert_tool_execution(&tx, &row).context(format!("recording the {} execution", exec.tool_name))?;
        tx.commit().context(format!("saving tool result turn {} of session {session_id}", stored.turn_number))?;
        Ok(stored)
    }

    /// Saves the text streamed so far into an `interrupted` turn (created with `append_turn` and
    /// status `Interrupted`). Only interrupted turns can be changed.
    pub fn checkpoint_turn(&mut self, session_id: &str, turn_number: i64, partial: &str) -> Result<()> {
        let n = self
            .conn
            .prepare_cached(
                "UPDATE turns SET content = ?3, token_count = ?4
                 WHERE session_id = ?1 AND turn_number = ?2 AND status = 'interrupted'",
            )
            .and_then(|mut s| s.execute(params![session_id, turn_number, partial, estimate_tokens(partial)]))
            .context(format!("checkpointing turn {turn_number} of session {session_id}"))?;
        if n == 0 {
            return Err(Error::Invalid(format!(
                "turn {turn_number} of session {session_id} is not an interrupted turn and cannot be changed"
            )));
        }
        Ok(())
    }

    /// Finalises an interrupted turn with its full content, calls, status and metadata.
    pub fn finalize_turn(&mut self, session_id: &str, turn_number: i64, turn: &NewTurn) -> Result<Turn> {
        let calls = tool_calls_json(&turn.tool_calls);
        let n = self
            .conn
            .execute(
                "UPDATE turns SET content = ?3, tool_calls = ?4, token_count = ?5, status = ?6, metadata = ?7,
                     search_extra = ?8
                 WHERE session_id = ?1 AND turn_number = ?2 AND status = 'interrupted'",
                params![
                    session_id,
                    turn_number,
                    turn.content,
                    calls,
                    turn_tokens(turn),
                    turn.status.as_str(),
                    rows::metadata_json(&turn.metadata),
                    search_extra(turn.tool_name.as_deref(), &turn.tool_calls, &turn.metadata)
                ],
            )
            .context(format!("finalising turn {turn_number} of session {session_id}"))?;
        if n == 0 {
            return Err(Error::Invalid(format!(
                "turn {turn_number} of session {session_id} is not an interrupted turn and cannot be changed"
            )));
        }
        self.turns_range(session_id, turn_number, turn_number)?
            .pop()
            .ok_or_else(|| Error::Invalid(format!("turn {turn_number} vanished while finalising")))
    }

    /// How many turns the session shows (inherited fork turns included).
    pub fn turn_count(&self, session_id: &str) -> Result<i64> {
        self.conn
            .prepare_cached("SELECT turn_count FROM sessions WHERE id = ?1")
            .and_then(|mut s| s.query_row([session_id], |r| r.get(0)).optional())
            .context(format!("counting the turns of session {session_id}"))?
            .ok_or_else(|| Error::SessionNotFound(session_id.to_owned()))
    }

    /// Turns `start..=end` (turn numbers) in order.
    pub fn turns_range(&self, session_id: &str, start: i64, end: i64) -> Result<Vec<Turn>> {
        let segments = self.segments(session_id)?;
        let mut out = Vec::new();
        for seg in segments.iter().rev() {
            let (lo, hi) = (start.max(seg.lo + 1), end.min(seg.hi));
            if lo > hi {
                continue;
            }
            let sql = format!(
                "SELECT {TURN_COLS} FROM turns t WHERE t.session_id = ?1 AND t.turn_number BETWEEN ?2 AND ?3
                 ORDER BY t.turn_number"
            );
            let mut rows: Vec<Turn> = self
                .conn
                .prepare_cached(&sql)
                .and_then(|mut s| s.query_map(params![seg.session_id, lo, hi], turn_from_row)?.collect())
                .context(format!("reading turns {start}..{end} of session {session_id}"))?;
            self.fill_attachments(&mut rows)?;
            out.extend(rows);
        }
        Ok(out)
    }

    /// The turn saved with `metadata.client_key == key`, looked for among the newest
    /// [`CLIENT_KEY_WINDOW`] turns of the archive. A client that may have to send a request twice
    /// (its tab's storage owner closed before answering) tags the turn with a random key, so the
    /// second attempt finds the first and nothing is written twice.
    pub fn find_recent_by_client_key(&self, key: &str) -> Result<Option<Turn>> {
        // The browser's SQLite has no JSON functions (.cargo/config.toml): the text narrows the
        // search, the parsed metadata decides.
        let sql = format!(
            "SELECT {TURN_COLS} FROM turns t
             WHERE t.id > (SELECT coalesce(max(id), 0) FROM turns) - ?2 AND instr(t.metadata, ?1) > 0"
        );
        let found = self
            .conn
            .prepare_cached(&sql)
            .and_then(|mut s| {
                s.query_map(params![key, CLIENT_KEY_WINDOW], turn_from_row)?
                    .filter(|t| {
                        t.as_ref().map_or(true, |t| t.metadata.get("client_key").and_then(|k| k.as_str()) == Some(key))
                    })
                    .take(1)
                    .collect::<rusqlite::Result<Vec<Turn>>>()
            })
            .context("looking for an earlier attempt of this request")?;
        let mut found: Vec<Turn> = found;
        self.fill_attachments(&mut found)?;
        Ok(found.pop())
    }

    /// The number of the session's latest user turn (inherited fork turns included), where its
    /// current exchange began; `None` when it has none.
    pub fn latest_user_turn(&self, session_id: &str) -> Result<Option<i64>> {
        for seg in self.segments(session_id)? {
            let found: Option<i64> = self
                .conn
                .prepare_cached(
                    "SELECT turn_number FROM turns
                     WHERE session_id = ?1 AND turn_number > ?2 AND turn_number <= ?3 AND role = 'user'
                     ORDER BY turn_number DESC LIMIT 1",
                )
                .and_then(|mut s| s.query_row(params![seg.session_id, seg.lo, seg.hi], |r| r.get(0)).optional())
                .context(format!("finding the latest user turn of session {session_id}"))?;
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// `limit` turns starting after `offset` turns, in order.
    pub fn get_turns(&self, session_id: &str, offset: usize, limit: usize) -> Result<Vec<Turn>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let start = offset as i64 + 1;
        self.turns_range(session_id, start, start.saturating_add(limit as i64 - 1))
    }

    /// The newest `n` turns, oldest first.
    pub fn last_turns(&self, session_id: &str, n: usize) -> Result<Vec<Turn>> {
        let count = self.turn_count(session_id)?;
        self.turns_range(session_id, (count - n as i64 + 1).max(1), count)
    }

    /// Up to `limit` turns numbered below `before` (or the newest turns when `None`), oldest first.
    pub fn turns_before(&self, session_id: &str, before: Option<i64>, limit: usize) -> Result<Vec<Turn>> {
        let end = match before {
            Some(b) => b - 1,
            None => self.turn_count(session_id)?,
        };
        self.turns_range(session_id, (end - limit as i64 + 1).max(1), end)
    }

    /// Past executions of one tool, newest first; in one session (with its fork ancestry) or anywhere.
    pub fn tool_executions(
        &self,
        session_id: Option<&str>,
        tool_name: &str,
        limit: usize,
    ) -> Result<Vec<ToolExecution>> {
        let base = format!(
            "SELECT {TOOL_EXECUTION_COLS} FROM tool_executions e JOIN turns t ON t.id = e.turn_id WHERE e.tool_name = ?1"
        );
        let map = rows::tool_execution_from_row;
        let what = format!("reading past {tool_name} calls");
        match session_id {
            None => self
                .conn
                .prepare_cached(&format!("{base} ORDER BY e.id DESC LIMIT ?2"))
                .and_then(|mut s| s.query_map(params![tool_name, limit as i64], map)?.collect())
                .context(what),
            Some(sid) => {
                let mut out = Vec::new();
                for seg in self.segments(sid)? {
                    let rows: Vec<ToolExecution> = self
                        .conn
                        .prepare_cached(&format!(
                            "{base} AND t.session_id = ?2 AND t.turn_number > ?3 AND t.turn_number <= ?4
                             ORDER BY t.turn_number DESC, e.id DESC LIMIT ?5"
                        ))
                        .and_then(|mut s| {
                            s.query_map(params![tool_name, seg.session_id, seg.lo, seg.hi, limit as i64], map)?
                                .collect()
                        })
                        .context(what.clone())?;
                    out.extend(rows);
                    if out.len() >= limit {
                        break;
                    }
                }
                out.truncate(limit);
                Ok(out)
            }
        }
    }
}

/// Numbers `turn` as the session's next turn (titling an untitled session with a first user message)
/// and saves it, created at `now`.
pub(super) fn insert_turn(tx: &rusqlite::Transaction<'_>, session_id: &str, turn: &NewTurn, now: i64) -> Result<Turn> {
    insert_turn_with(tx, session_id, turn, &[], now)
}

/// [`insert_turn`] for a turn that carries `attachments` (indexed with it; saved by the caller).
fn insert_turn_with(
    tx: &rusqlite::Transaction<'_>,
    session_id: &str,
    turn: &NewTurn,
    attachments: &[super::attachments::Examined<'_>],
    now: i64,
) -> Result<Turn> {
    let number: i64 = tx
        .prepare_cached(
            "UPDATE sessions SET turn_count = turn_count + 1, last_active_at = max(last_active_at, ?2) WHERE id = ?1
             RETURNING turn_count",
        )
        .and_then(|mut s| s.query_row(params![session_id, now], |r| r.get(0)).optional())
        .context(format!("numbering a new turn of session {session_id}"))?
        .ok_or_else(|| Error::SessionNotFound(session_id.to_owned()))?;
    if turn.role == Role::User {
        tx.prepare_cached("UPDATE sessions SET title = ?2 WHERE id = ?1 AND title = ''")
            .and_then(|mut s| s.execute(params![session_id, clip_title(&crate::title_from_message(&turn.content))]))
            .context("titling the session")?;
    }
    let tokens = turn_tokens(turn);
    let mut extra = search_extra(turn.tool_name.as_deref(), &turn.tool_calls, &turn.metadata);
    extra.push_str(&super::attachments::search_text(attachments));
    let row = TurnRow {
        session_id,
        turn_number: number,
        role: turn.role,
        content: &turn.content,
        tool_calls: &turn.tool_calls,
        tool_call_id: turn.tool_call_id.as_deref(),
        tool_name: turn.tool_name.as_deref(),
        token_count: tokens,
        status: turn.status,
        created_at: now,
        metadata: &turn.metadata,
        search_extra: &extra,
        gid: None,
    };
    let id = rows::insert_turn(tx, &row).context(format!("saving turn {number} of session {session_id}"))?;
    Ok(Turn {
        id,
        session_id: session_id.to_owned(),
        turn_number: number,
        role: turn.role,
        content: turn.content.clone(),
        tool_calls: turn.tool_calls.clone(),
        tool_call_id: turn.tool_call_id.clone(),
        tool_name: turn.tool_name.clone(),
        token_count: tokens,
        status: turn.status,
        created_at: now,
        metadata: turn.metadata.clone(),
        attachments: Vec::new(),
    })
}

pub(super) fn turn_tokens(turn: &NewTurn) -> i64 {
    estimate_tokens(&turn.content)
        + turn.tool_calls.iter().map(|c| estimate_tokens(&c.name) + estimate_tokens(&c.arguments)).sum::<i64>()
}

/// Extra searchable text: tool names, the string values of call arguments, and a reply's reasoning
/// (`metadata.reasoning`). It is the index's second column, which search weighs below the content,
/// so a word the model only thought ranks below the same word said.
pub(super) fn search_extra(tool_name: Option<&str>, tool_calls: &[ToolCall], metadata: &serde_json::Value) -> String {
    let mut out = String::new();
    if let Some(name) = tool_name {
        out.push_str(name);
    }
    if let Some(reasoning) = metadata.get("reasoning").and_then(serde_json::Value::as_str) {
        out.push(' ');
        out.push_str(reasoning);
    }
    for call in tool_calls {
        out.push(' ');
        out.push_str(&call.name);
        match serde_json::from_str::<serde_json::Value>(&call.arguments) {
            Ok(v) => collect_strings(&v, &mut out),
            Err(_) => {
                out.push(' ');
                out.push_str(&call.arguments);
            }
        }
    }
    out
}

fn collect_strings(v: &serde_json::Value, out: &mut String) {
    match v {
        serde_json::Value::String(s) => {
            out.push(' ');
            out.push_str(s);
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| collect_strings(x, out)),
        serde_json::Value::Number(n) => {
            out.push(' ');
            out.push_str(&n.to_string());
        }
        _ => {}
    }
}
