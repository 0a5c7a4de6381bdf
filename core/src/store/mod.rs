//! The conversation archive: sessions, append-only turns, full-text search, forks, tasks and
//! manifests in SQLite. One code path for native (rusqlite `bundled`) and the browser (sqlite-wasm-rs
//! on the OPFS `sahpool` VFS, see `opfs`, browser builds only).
//!
//! Write-through: every `append_*` commits before it returns.

mod export;
#[cfg(target_arch = "wasm32")]
pub mod opfs;
mod query;
mod schema;
mod sources;

pub use export::{ImportSummary, FORMAT_VERSION};
pub use query::{Terms, MAX_TERMS};
pub use schema::LATEST as SCHEMA_VERSION;
pub use sources::SessionTurns;

use crate::error::{Context, Error, Result};
use crate::tokens::estimate_tokens;
use crate::{
    now_ms, Approval, ContextManifest, NewTurn, Role, SearchHit, SearchQuery, SearchScope, Session, StorageStats,
    TaskEvent, TaskRecord, ToolCall, ToolExecution, Turn, TurnStatus,
};
use rusqlite::{params, types::Value as SqlValue, Connection, OptionalExtension, Row, TransactionBehavior};
use std::collections::HashMap;

/// How many of the most recent matches are ranked per search. Ranking every match of a very common
/// word is what makes naive FTS slow; the newest matches are also the most useful in a conversation.
const RANK_CANDIDATES: usize = 400;
/// Most hits one search returns.
pub const MAX_SEARCH_LIMIT: usize = 50;
/// Longest title kept from a first user message.
pub const TITLE_MAX_CHARS: usize = 100;
/// Markers FTS5 puts around matches in snippets (private-use characters, removed again).
const HL_OPEN: char = '\u{E000}';
const HL_CLOSE: char = '\u{E001}';

/// What to create a session with. Sessions are normally created at the first user message.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewSession {
    /// Keep an existing id (imports); `None` makes a new UUID v7.
    pub id: Option<String>,
    pub workspace: String,
    pub title: String,
    pub model: String,
    pub system_prompt: String,
}

impl NewSession {
    pub fn new(workspace: impl Into<String>) -> NewSession {
        NewSession { workspace: workspace.into(), ..NewSession::default() }
    }
}

/// Which sessions to list.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionFilter {
    pub workspace: Option<String>,
    pub include_archived: bool,
    pub limit: usize,
    pub offset: usize,
}

impl Default for SessionFilter {
    fn default() -> Self {
        SessionFilter { workspace: None, include_archived: false, limit: 500, offset: 0 }
    }
}

/// What a tool run produced, recorded beside its result turn.
#[derive(Debug, Clone, PartialEq)]
pub struct NewToolExecution {
    pub tool_name: String,
    pub arguments: String,
    pub success: bool,
    pub duration_ms: i64,
    pub approval: Approval,
}

/// A session ready to continue: its row, its state and its newest turns.
#[derive(Debug, Clone, PartialEq)]
pub struct Resumed {
    pub session: Session,
    /// The last N turns, oldest first.
    pub turns: Vec<Turn>,
    /// Delegated tasks that have not finished or whose result was not delivered yet.
    pub pending_tasks: Vec<TaskRecord>,
}

/// A workspace and how many (unarchived) sessions it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceSummary {
    pub workspace: String,
    pub sessions: i64,
    pub last_active_at: i64,
}

/// One contiguous run of turn numbers a session shows, and where they are stored: a fork shows its
/// parent's turns `(lo, hi]` and its own turns after the fork point.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Segment {
    session_id: String,
    lo: i64,
    hi: i64,
}

/// The archive.
pub struct Store {
    conn: Connection,
    /// Last timestamp handed out: times from one store strictly increase, so "most recent" is exact.
    last_ms: std::cell::Cell<i64>,
}

const SESSION_COLS: &str = "id, workspace, title, model, system_prompt, created_at, last_active_at, turn_count, \
     prompt_tokens, completion_tokens, session_state, parent_session_id, fork_turn, is_archived";
/// How many of the newest turns [`Store::find_recent_by_client_key`] looks through.
pub const CLIENT_KEY_WINDOW: i64 = 1000;

const TURN_COLS: &str = "t.id, t.session_id, t.turn_number, t.role, t.content, t.tool_calls, t.tool_call_id, \
     t.tool_name, t.token_count, t.status, t.created_at, t.metadata";

impl Store {
    /// Opens (creating if needed) and upgrades the archive at `path`. In the browser, install the OPFS
    /// VFS first (`opfs::install`, browser builds only); the path then names a file in the OPFS pool.
    pub fn open(path: &str) -> Result<Store> {
        let conn = Connection::open(path).context(format!("opening the archive {path}"))?;
        Store::from_connection(conn)
    }

    /// A throwaway archive in memory (tests, browsers without OPFS).
    pub fn open_in_memory() -> Result<Store> {
        let conn = Connection::open_in_memory().context("opening an in-memory archive")?;
        Store::from_connection(conn)
    }

    fn from_connection(mut conn: Connection) -> Result<Store> {
        // Exclusive locking first: a WAL archive can only be read without shared memory (which the OPFS
        // VFS lacks) once the connection holds its lock for good. It writes nothing.
        lock_exclusively(&conn)?;
        // Check the version before anything that could write: a newer (or negative) one stays untouched.
        schema::check_version(schema::user_version(&conn)?)?;
        configure(&conn)?;
        schema::migrate(&mut conn, schema::LATEST)?;
        Ok(Store { conn, last_ms: std::cell::Cell::new(0) })
    }

    /// A timestamp (ms) later than any this store handed out before.
    fn tick(&self) -> i64 {
        let t = now_ms().max(self.last_ms.get() + 1);
        self.last_ms.set(t);
        t
    }

    /// Opens an archive and upgrades it only to `version` (fixtures and migration tests).
    #[doc(hidden)]
    pub fn open_at_version(path: &str, version: i64) -> Result<Store> {
        let mut conn = Connection::open(path).context(format!("opening the archive {path}"))?;
        lock_exclusively(&conn)?;
        schema::check_version(schema::user_version(&conn)?)?;
        configure(&conn)?;
        schema::migrate(&mut conn, version)?;
        Ok(Store { conn, last_ms: std::cell::Cell::new(0) })
    }

    pub fn schema_version(&self) -> Result<i64> {
        schema::user_version(&self.conn)
    }

    /// `PRAGMA integrity_check`: `"ok"` for a healthy archive.
    pub fn integrity_check(&self) -> Result<String> {
        let rows: Vec<String> = self
            .conn
            .prepare("PRAGMA integrity_check")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .context("checking the archive's integrity")?;
        Ok(rows.join("\n"))
    }

    /// The underlying connection, for benchmarks and diagnostics.
    #[doc(hidden)]
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    // --- sessions ---------------------------------------------------------------------------------

    pub fn create_session(&mut self, new: &NewSession) -> Result<Session> {
        let id = new.id.clone().unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
        let now = self.tick();
        self.conn
            .execute(
                "INSERT INTO sessions (id, workspace, title, model, system_prompt, created_at, last_active_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                params![id, new.workspace, clip_title(&new.title), new.model, new.system_prompt, now],
            )
            .context(format!("creating a session in workspace {:?}", new.workspace))?;
        self.get_session(&id)
    }

    pub fn get_session(&self, id: &str) -> Result<Session> {
        self.conn
            .prepare_cached(&format!("SELECT {SESSION_COLS} FROM sessions WHERE id = ?1"))
            .and_then(|mut s| s.query_row([id], session_from_row).optional())
            .context(format!("reading session {id}"))?
            .ok_or_else(|| Error::SessionNotFound(id.to_owned()))
    }

    /// Sessions, most recently active first.
    pub fn list_sessions(&self, filter: &SessionFilter) -> Result<Vec<Session>> {
        let sql = format!(
            "SELECT {SESSION_COLS} FROM sessions
             WHERE (?1 IS NULL OR workspace = ?1) AND (?2 OR NOT is_archived)
             ORDER BY last_active_at DESC, id DESC LIMIT ?3 OFFSET ?4"
        );
        self.conn
            .prepare_cached(&sql)
            .and_then(|mut s| {
                s.query_map(
                    params![filter.workspace, filter.include_archived, filter.limit as i64, filter.offset as i64],
                    session_from_row,
                )?
                .collect()
            })
            .context("listing sessions")
    }

    /// Workspaces with their number of unarchived sessions, most recently active first.
    pub fn workspaces(&self) -> Result<Vec<WorkspaceSummary>> {
        self.conn
            .prepare_cached(
                "SELECT workspace, SUM(NOT is_archived), MAX(last_active_at) FROM sessions
                 GROUP BY workspace ORDER BY MAX(last_active_at) DESC",
            )
            .and_then(|mut s| {
                s.query_map([], |r| {
                    Ok(WorkspaceSummary { workspace: r.get(0)?, sessions: r.get(1)?, last_active_at: r.get(2)? })
                })?
                .collect()
            })
            .context("listing workspaces")
    }

    pub fn rename_session(&mut self, id: &str, title: &str) -> Result<()> {
        let title = clip_title(title);
        if title.is_empty() {
            return Err(Error::Invalid("a session title cannot be empty".into()));
        }
        self.update_session(id, "renaming", "UPDATE sessions SET title = ?2 WHERE id = ?1", title)
    }

    pub fn set_archived(&mut self, id: &str, archived: bool) -> Result<()> {
        self.update_session(id, "archiving", "UPDATE sessions SET is_archived = ?2 WHERE id = ?1", archived)
    }

    /// Replaces the session-state register (JSON).
    pub fn update_state(&mut self, id: &str, state: &serde_json::Value) -> Result<()> {
        let json = state.to_string();
        self.update_session(id, "saving the state of", "UPDATE sessions SET session_state = ?2 WHERE id = ?1", json)
    }

    /// Sets the model used from now on (shown in the sidebar).
    pub fn set_model(&mut self, id: &str, model: &str) -> Result<()> {
        self.update_session(id, "setting the model of", "UPDATE sessions SET model = ?2 WHERE id = ?1", model)
    }

    /// Adds provider-reported token usage to the session's totals.
    pub fn add_usage(&mut self, id: &str, prompt_tokens: i64, completion_tokens: i64) -> Result<()> {
        let n = self
            .conn
            .execute(
                "UPDATE sessions SET prompt_tokens = prompt_tokens + ?2, completion_tokens = completion_tokens + ?3
                 WHERE id = ?1",
                params![id, prompt_tokens, completion_tokens],
            )
            .context(format!("adding token usage to session {id}"))?;
        if n == 0 {
            return Err(Error::SessionNotFound(id.to_owned()));
        }
        Ok(())
    }

    fn update_session(&mut self, id: &str, what: &str, sql: &str, value: impl rusqlite::ToSql) -> Result<()> {
        let n = self.conn.execute(sql, params![id, value]).context(format!("{what} session {id}"))?;
        if n == 0 {
            return Err(Error::SessionNotFound(id.to_owned()));
        }
        Ok(())
    }

    /// Forks `id` after turn `at_turn`: the new session shows turns 1..=at_turn of the original (read
    /// through a pointer, never copied) and continues on its own.
    pub fn fork_session(&mut self, id: &str, at_turn: i64) -> Result<Session> {
        let parent = self.get_session(id)?;
        if at_turn < 1 || at_turn > parent.turn_count {
            return Err(Error::Invalid(format!(
                "cannot fork session {id} at turn {at_turn}: it has turns 1..{}",
                parent.turn_count
            )));
        }
        let fork_id = uuid::Uuid::now_v7().to_string();
        let now = self.tick();
        let title = clip_title(&format!("{} (fork)", parent.title));
        self.conn
            .execute(
                "INSERT INTO sessions (id, workspace, title, model, system_prompt, created_at, last_active_at,
                     turn_count, session_state, parent_session_id, fork_turn)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?8, ?9, ?7)",
                params![
                    fork_id,
                    parent.workspace,
                    title,
                    parent.model,
                    parent.system_prompt,
                    now,
                    at_turn,
                    parent.state.to_string(),
                    parent.id
                ],
            )
            .context(format!("forking session {id}"))?;
        self.get_session(&fork_id)
    }

    /// Deletes a whole session, its turns, tool executions, tasks and manifests. Forks of it keep
    /// their content: the turns they inherit are copied into them first.
    pub fn delete_session(&mut self, id: &str) -> Result<()> {
        self.get_session(id)?;
        let children: Vec<(String, i64)> = self
            .conn
            .prepare("SELECT id, fork_turn FROM sessions WHERE parent_session_id = ?1")
            .and_then(|mut s| s.query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
            .context(format!("finding forks of session {id}"))?;
        let segments_by_child: Vec<(String, Vec<Segment>)> = children
            .iter()
            .map(|(child, fork_turn)| {
                Ok((child.clone(), self.segments(id)?.into_iter().map(|s| clamp(s, *fork_turn)).collect()))
            })
            .collect::<Result<_>>()?;
        let tx = self.conn.transaction().context("starting to delete a session")?;
        for (child, segments) in &segments_by_child {
            for seg in segments {
                tx.execute(
                    "INSERT INTO turns (session_id, turn_number, role, content, tool_calls, tool_call_id, tool_name,
                         token_count, status, created_at, metadata, search_extra)
                     SELECT ?1, turn_number, role, content, tool_calls, tool_call_id, tool_name, token_count, status,
                         created_at, metadata, search_extra
                     FROM turns WHERE session_id = ?2 AND turn_number > ?3 AND turn_number <= ?4",
                    params![child, seg.session_id, seg.lo, seg.hi],
                )
                .context("copying inherited turns into a fork")?;
                tx.execute(
                    "INSERT INTO tool_executions (turn_id, tool_name, arguments, result, success, duration_ms, approval, created_at)
                     SELECT c.id, e.tool_name, e.arguments, e.result, e.success, e.duration_ms, e.approval, e.created_at
                     FROM tool_executions e JOIN turns p ON p.id = e.turn_id
                     JOIN turns c ON c.session_id = ?1 AND c.turn_number = p.turn_number
                     WHERE p.session_id = ?2 AND p.turn_number > ?3 AND p.turn_number <= ?4",
                    params![child, seg.session_id, seg.lo, seg.hi],
                )
                .context("copying inherited tool executions into a fork")?;
            }
            tx.execute("UPDATE sessions SET parent_session_id = NULL, fork_turn = NULL WHERE id = ?1", [child])
                .context("detaching a fork")?;
        }
        for sql in [
            "DELETE FROM task_events WHERE task_id IN (SELECT task_id FROM tasks WHERE session_id = ?1)",
            "DELETE FROM tasks WHERE session_id = ?1",
            "DELETE FROM context_manifests WHERE session_id = ?1",
            "DELETE FROM tool_executions WHERE turn_id IN (SELECT id FROM turns WHERE session_id = ?1)",
            "DELETE FROM turns WHERE session_id = ?1",
            "DELETE FROM sessions WHERE id = ?1",
        ] {
            tx.execute(sql, [id]).context(format!("deleting session {id}"))?;
        }
        tx.commit().context(format!("deleting session {id}"))
    }

    /// The session row, its last `last_n` turns and its unfinished tasks: everything to continue.
    pub fn resume(&self, id: &str, last_n: usize) -> Result<Resumed> {
        let session = self.get_session(id)?;
        let turns = self.last_turns(id, last_n)?;
        let pending_tasks = self.tasks(id)?.into_iter().filter(|t| !t.is_finished() || !t.result_delivered).collect();
        Ok(Resumed { session, turns, pending_tasks })
    }

    // --- turns ------------------------------------------------------------------------------------

    /// Appends a turn and commits before returning (write-through). Returns the stored turn with its
    /// number. The first user message of an untitled session becomes its title.
    pub fn append_turn(&mut self, session_id: &str, turn: &NewTurn) -> Result<Turn> {
        let now = self.tick();
        let tx =
            self.conn.transaction_with_behavior(TransactionBehavior::Immediate).context("starting to append a turn")?;
        let stored = insert_turn(&tx, session_id, turn, now)?;
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
        let now = self.tick();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .context("starting to append a tool result")?;
        let stored = insert_turn(&tx, session_id, turn, now)?;
        tx.execute(
            "INSERT INTO tool_executions (turn_id, tool_name, arguments, result, success, duration_ms, approval, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                stored.id,
                exec.tool_name,
                exec.arguments,
                turn.content,
                exec.success,
                exec.duration_ms,
                exec.approval.as_str(),
                stored.created_at
            ],
        )
        .context(format!("recording the {} execution", exec.tool_name))?;
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
                    metadata_json(&turn.metadata),
                    search_extra(turn)
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
            let rows: Vec<Turn> = self
                .conn
                .prepare_cached(&sql)
                .and_then(|mut s| s.query_map(params![seg.session_id, lo, hi], turn_from_row)?.collect())
                .context(format!("reading turns {start}..{end} of session {session_id}"))?;
            out.extend(rows);
        }
        Ok(out)
    }

    /// The turn saved with `metadata.client_key == key`, looked for among the newest
    /// [`CLIENT_KEY_WINDOW`] turns of the archive. A client that may have to send a request twice
    /// (its tab's storage owner closed before answering) tags the turn with a random key, so the
    /// second attempt finds the first and nothing is written twice.
    pub fn find_recent_by_client_key(&self, key: &str) -> Result<Option<Turn>> {
        let sql = format!(
            "SELECT {TURN_COLS} FROM turns t
             WHERE t.id > (SELECT coalesce(max(id), 0) FROM turns) - ?2
               AND json_valid(t.metadata) AND json_extract(t.metadata, '$.client_key') = ?1
             LIMIT 1"
        );
        self.conn
            .prepare_cached(&sql)
            .and_then(|mut s| s.query_row(params![key, CLIENT_KEY_WINDOW], turn_from_row).optional())
            .context("looking for an earlier attempt of this request")
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

    /// The runs of turn numbers `session_id` shows, newest segment first (see [`Segment`]).
    fn segments(&self, session_id: &str) -> Result<Vec<Segment>> {
        let mut out = Vec::new();
        let mut current = session_id.to_owned();
        let mut hi = i64::MAX;
        loop {
            let (parent, fork_turn): (Option<String>, Option<i64>) = self
                .conn
                .prepare_cached("SELECT parent_session_id, fork_turn FROM sessions WHERE id = ?1")
                .and_then(|mut s| s.query_row([&current], |r| Ok((r.get(0)?, r.get(1)?))).optional())
                .context(format!("reading the ancestry of session {session_id}"))?
                .ok_or_else(|| Error::SessionNotFound(current.clone()))?;
            let lo = fork_turn.unwrap_or(0);
            out.push(Segment { session_id: current, lo, hi });
            match parent {
                Some(p) if out.len() < 1000 => {
                    hi = lo;
                    current = p;
                }
                _ => return Ok(out),
            }
        }
    }

    // --- search -----------------------------------------------------------------------------------

    /// Ranked full-text search. Any text is safe; text with nothing searchable finds nothing. When no
    /// turn has every term, turns with any of them are returned, ranked.
    pub fn search(&self, q: &SearchQuery) -> Result<Vec<SearchHit>> {
        let terms = Terms::parse(&q.text, q.prefix_last);
        let limit = q.limit.clamp(1, MAX_SEARCH_LIMIT);
        let Some(all) = terms.all() else { return Ok(Vec::new()) };
        let mut hits = self.search_expr(&all, q, limit)?;
        if hits.is_empty() && terms.len() > 1 {
            if let Some(any) = terms.any() {
                hits = self.search_expr(&any, q, limit)?;
            }
        }
        Ok(hits)
    }

    /// The candidate query for `expr` within `q`'s scope and roles, with its arguments.
    fn search_sql(&self, expr: &str, q: &SearchQuery) -> Result<(String, Vec<SqlValue>)> {
        // CROSS JOIN fixes the loop order: walk the full-text matches newest first and filter them,
        // never probe the index once per turn of a session (which made scoped searches take seconds).
        let mut sql = String::from(
            "SELECT t.id, t.session_id, t.turn_number, t.role, t.tool_name, t.created_at, bm25(turns_fts, 1.0, 0.5)
             FROM turns_fts CROSS JOIN turns t ON t.id = turns_fts.rowid",
        );
        let mut args: Vec<SqlValue> = vec![SqlValue::Text(expr.to_owned())];
        let mut conds = vec!["turns_fts MATCH ?1".to_owned()];
        match &q.scope {
            SearchScope::All => {}
            SearchScope::Workspace { workspace } => {
                sql.push_str(" CROSS JOIN sessions s ON s.id = t.session_id");
                args.push(SqlValue::Text(workspace.clone()));
                conds.push(format!("s.workspace = ?{}", args.len()));
            }
            SearchScope::Session { session_id } => {
                let mut ors = Vec::new();
                for seg in self.segments(session_id)? {
                    args.push(SqlValue::Text(seg.session_id));
                    args.push(SqlValue::Integer(seg.lo));
                    args.push(SqlValue::Integer(seg.hi));
                    let n = args.len();
                    ors.push(format!(
                        "(t.session_id = ?{} AND t.turn_number > ?{} AND t.turn_number <= ?{n})",
                        n - 2,
                        n - 1
                    ));
                }
                conds.push(format!("({})", ors.join(" OR ")));
            }
        }
        if !q.roles.is_empty() {
            let roles: Vec<String> = q.roles.iter().map(|r| format!("'{}'", r.as_str())).collect();
            conds.push(format!("t.role IN ({})", roles.join(", ")));
        }
        sql.push_str(&format!(" WHERE {} ORDER BY turns_fts.rowid DESC LIMIT {RANK_CANDIDATES}", conds.join(" AND ")));
        Ok((sql, args))
    }

    /// SQLite's plan for a search's candidate query (diagnostics and regression tests).
    #[doc(hidden)]
    pub fn explain_search(&self, q: &SearchQuery) -> Result<Vec<String>> {
        let expr = Terms::parse(&q.text, q.prefix_last).all().unwrap_or_else(|| "\"x\"".into());
        let (sql, args) = self.search_sql(&expr, q)?;
        self.conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .and_then(|mut s| s.query_map(rusqlite::params_from_iter(args), |r| r.get::<_, String>(3))?.collect())
            .context("explaining a search")
    }

    fn search_expr(&self, expr: &str, q: &SearchQuery, limit: usize) -> Result<Vec<SearchHit>> {
        let (sql, args) = self.search_sql(expr, q)?;
        struct Candidate {
            id: i64,
            session_id: String,
            turn_number: i64,
            role: Role,
            tool_name: Option<String>,
            created_at: i64,
            score: f64,
        }
        let mut candidates: Vec<Candidate> = self
            .conn
            .prepare_cached(&sql)
            .and_then(|mut s| {
                s.query_map(rusqlite::params_from_iter(args), |r| {
                    Ok(Candidate {
                        id: r.get(0)?,
                        session_id: r.get(1)?,
                        turn_number: r.get(2)?,
                        role: parse_role(r, 3)?,
                        tool_name: r.get(4)?,
                        created_at: r.get(5)?,
                        score: -r.get::<_, f64>(6)?,
                    })
                })?
                .collect()
            })
            .context(format!("searching the archive for {:?}", q.text))?;
        // Best bm25 first; among equals, the newest.
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.id.cmp(&a.id)));
        candidates.truncate(limit);

        // Snippets of the chosen hits in one pass: the candidates are the newest matches, so the hits lie
        // in the rowid range of the candidates and FTS5 walks that range once. (One `rowid = ?` query per
        // hit made FTS5 seek through the whole doclist of a common term again for every hit.)
        let mut snippets: HashMap<i64, String> = HashMap::with_capacity(candidates.len());
        if let (Some(lo), Some(hi)) = (candidates.iter().map(|c| c.id).min(), candidates.iter().map(|c| c.id).max()) {
            let ids = serde_json::to_string(&candidates.iter().map(|c| c.id).collect::<Vec<i64>>()).unwrap_or_default();
            self.conn
                .prepare_cached(&format!(
                    "SELECT rowid, CASE WHEN rowid IN (SELECT value FROM json_each(?4))
                         THEN snippet(turns_fts, -1, '{HL_OPEN}', '{HL_CLOSE}', '…', 24) END
                     FROM turns_fts WHERE turns_fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3"
                ))
                .and_then(|mut s| {
                    let rows = s.query_map(params![expr, lo, hi, ids], |r| {
                        Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?.unwrap_or_default()))
                    })?;
                    for row in rows {
                        let (id, snippet) = row?;
                        if !snippet.is_empty() {
                            snippets.insert(id, snippet);
                        }
                    }
                    Ok(())
                })
                .context("making search snippets")?;
        }

        let mut titles: HashMap<String, String> = HashMap::new();
        let mut hits = Vec::with_capacity(candidates.len());
        for c in candidates {
            let raw = snippets.remove(&c.id).unwrap_or_default();
            let (snippet, highlights) = split_highlights(&raw);
            let title = match titles.get(&c.session_id) {
                Some(t) => t.clone(),
                None => {
                    let t = self.get_session(&c.session_id).map(|s| s.title).unwrap_or_default();
                    titles.insert(c.session_id.clone(), t.clone());
                    t
                }
            };
            hits.push(SearchHit {
                session_id: c.session_id,
                session_title: title,
                turn_id: c.id,
                turn_number: c.turn_number,
                role: c.role,
                tool_name: c.tool_name,
                created_at: c.created_at,
                snippet,
                highlights,
                score: c.score,
            });
        }
        Ok(hits)
    }

    // --- tool executions --------------------------------------------------------------------------

    /// Past executions of one tool, newest first; in one session (with its fork ancestry) or anywhere.
    pub fn tool_executions(
        &self,
        session_id: Option<&str>,
        tool_name: &str,
        limit: usize,
    ) -> Result<Vec<ToolExecution>> {
        let base = "SELECT t.session_id, t.turn_number, e.tool_name, e.arguments, e.result, e.success, e.duration_ms,
                    e.approval, e.created_at
                    FROM tool_executions e JOIN turns t ON t.id = e.turn_id WHERE e.tool_name = ?1";
        let map = tool_execution_from_row;
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

    // --- delegated tasks --------------------------------------------------------------------------

    /// Records a task or updates its status / delivery flag.
    pub fn upsert_task(&mut self, task: &TaskRecord) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO tasks (task_id, session_id, turn_number, goal, context, status, result_delivered,
                     created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT(task_id) DO UPDATE SET status = excluded.status,
                     result_delivered = excluded.result_delivered, updated_at = excluded.updated_at",
                params![
                    task.task_id,
                    task.session_id,
                    task.turn_number,
                    task.goal,
                    task.context,
                    task.status,
                    task.result_delivered,
                    task.created_at,
                    task.updated_at
                ],
            )
            .context(format!("saving task {}", task.task_id))?;
        Ok(())
    }

    /// Archives one orchestrator event verbatim; returns its sequence number.
    pub fn append_task_event(&mut self, task_id: &str, event_type: &str, data: &str) -> Result<i64> {
        self.conn
            .prepare_cached(
                "INSERT INTO task_events (task_id, seq, event_type, data, received_at)
                 VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM task_events WHERE task_id = ?1), ?2, ?3, ?4)
                 RETURNING seq",
            )
            .and_then(|mut s| s.query_row(params![task_id, event_type, data, self.tick()], |r| r.get(0)))
            .context(format!("archiving a {event_type} event of task {task_id}"))
    }

    pub fn task(&self, task_id: &str) -> Result<Option<TaskRecord>> {
        self.conn
            .prepare_cached(&format!("SELECT {TASK_COLS} FROM tasks WHERE task_id = ?1"))
            .and_then(|mut s| s.query_row([task_id], task_from_row).optional())
            .context(format!("reading task {task_id}"))
    }

    /// A session's tasks, oldest first.
    pub fn tasks(&self, session_id: &str) -> Result<Vec<TaskRecord>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {TASK_COLS} FROM tasks WHERE session_id = ?1 ORDER BY created_at, task_id"
            ))
            .and_then(|mut s| s.query_map([session_id], task_from_row)?.collect())
            .context(format!("reading the tasks of session {session_id}"))
    }

    pub fn task_events(&self, task_id: &str) -> Result<Vec<TaskEvent>> {
        self.conn
            .prepare_cached(
                "SELECT task_id, seq, event_type, data, received_at FROM task_events WHERE task_id = ?1 ORDER BY seq",
            )
            .and_then(|mut s| {
                s.query_map([task_id], |r| {
                    Ok(TaskEvent {
                        task_id: r.get(0)?,
                        seq: r.get(1)?,
                        event_type: r.get(2)?,
                        data: r.get(3)?,
                        received_at: r.get(4)?,
                    })
                })?
                .collect()
            })
            .context(format!("reading the events of task {task_id}"))
    }

    // --- context manifests and calibration --------------------------------------------------------

    pub fn record_manifest(&mut self, m: &ContextManifest) -> Result<i64> {
        self.conn
            .prepare_cached(
                "INSERT INTO context_manifests (session_id, turn_numbers, trimmed_turns, state_version,
                     estimated_tokens, budget_tokens, usage, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    m.session_id,
                    serde_json::to_string(&m.turn_numbers).unwrap_or_default(),
                    serde_json::to_string(&m.trimmed_turns).unwrap_or_default(),
                    m.state_version,
                    m.estimated_tokens,
                    m.budget_tokens,
                    metadata_json(&m.usage),
                    m.created_at
                ])
            })
            .context("recording what the model was sent")?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Adds the provider's reported usage to a recorded manifest.
    pub fn set_manifest_usage(&mut self, manifest_id: i64, usage: &serde_json::Value) -> Result<()> {
        self.conn
            .execute("UPDATE context_manifests SET usage = ?2 WHERE id = ?1", params![manifest_id, usage.to_string()])
            .context("recording the provider's usage")?;
        Ok(())
    }

    /// The newest manifests of a session, newest first.
    pub fn manifests(&self, session_id: &str, limit: usize) -> Result<Vec<ContextManifest>> {
        self.conn
            .prepare_cached(
                "SELECT session_id, turn_numbers, trimmed_turns, state_version, estimated_tokens, budget_tokens,
                     usage, created_at
                 FROM context_manifests WHERE session_id = ?1 ORDER BY id DESC LIMIT ?2",
            )
            .and_then(|mut s| s.query_map(params![session_id, limit as i64], manifest_from_row)?.collect())
            .context(format!("reading the context manifests of session {session_id}"))
    }

    /// Stored chars-per-token ratio and sample count for a model.
    pub fn calibration(&self, model: &str) -> Result<Option<(f64, i64)>> {
        self.conn
            .prepare_cached("SELECT chars_per_token, samples FROM token_calibration WHERE model = ?1")
            .and_then(|mut s| s.query_row([model], |r| Ok((r.get(0)?, r.get(1)?))).optional())
            .context(format!("reading the token calibration of {model}"))
    }

    pub fn set_calibration(&mut self, model: &str, chars_per_token: f64, samples: i64) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO token_calibration (model, chars_per_token, samples) VALUES (?1, ?2, ?3)
                 ON CONFLICT(model) DO UPDATE SET chars_per_token = excluded.chars_per_token, samples = excluded.samples",
                params![model, chars_per_token, samples],
            )
            .context(format!("saving the token calibration of {model}"))?;
        Ok(())
    }

    // --- statistics -------------------------------------------------------------------------------

    pub fn stats(&self) -> Result<StorageStats> {
        let count = |table: &str| -> Result<i64> {
            self.conn
                .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
                .context(format!("counting {table}"))
        };
        let bytes: i64 = self
            .conn
            .query_row("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()", [], |r| r.get(0))
            .context("measuring the archive")?;
        Ok(StorageStats {
            sessions: count("sessions")?,
            turns: count("turns")?,
            tool_executions: count("tool_executions")?,
            tasks: count("tasks")?,
            manifests: count("context_manifests")?,
            bytes,
            schema_version: self.schema_version()?,
        })
    }
}

const TASK_COLS: &str =
    "task_id, session_id, turn_number, goal, context, status, result_delivered, created_at, updated_at";

fn lock_exclusively(conn: &Connection) -> Result<()> {
    conn.execute_batch("PRAGMA locking_mode = EXCLUSIVE;").context("locking the archive")
}

fn configure(conn: &Connection) -> Result<()> {
    // One connection owns the archive (the storage worker holds a Web Lock for it), so the lock is
    // taken once and kept: `locking_mode = EXCLUSIVE`. That lets WAL work without shared memory, which
    // the OPFS sahpool VFS does not offer, and a WAL commit is one append + one flush where a rollback
    // journal (TRUNCATE) wrote and flushed the journal and the database and then truncated the journal.
    // synchronous stays FULL: a commit is on disk before `append_turn` returns. Measured in
    // BENCHMARKS.md.
    conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
        .context("configuring the archive")
}

fn insert_turn(tx: &rusqlite::Transaction<'_>, session_id: &str, turn: &NewTurn, now: i64) -> Result<Turn> {
    let number: i64 = tx
        .prepare_cached(
            "UPDATE sessions SET turn_count = turn_count + 1, last_active_at = ?2 WHERE id = ?1 RETURNING turn_count",
        )
        .and_then(|mut s| s.query_row(params![session_id, now], |r| r.get(0)).optional())
        .context(format!("numbering a new turn of session {session_id}"))?
        .ok_or_else(|| Error::SessionNotFound(session_id.to_owned()))?;
    if turn.role == Role::User {
        tx.prepare_cached("UPDATE sessions SET title = ?2 WHERE id = ?1 AND title = ''")
            .and_then(|mut s| s.execute(params![session_id, clip_title(&turn.content)]))
            .context("titling the session")?;
    }
    let calls = tool_calls_json(&turn.tool_calls);
    let tokens = turn_tokens(turn);
    let metadata = metadata_json(&turn.metadata);
    tx.prepare_cached(
        "INSERT INTO turns (session_id, turn_number, role, content, tool_calls, tool_call_id, tool_name, token_count,
             status, created_at, metadata, search_extra)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )
    .and_then(|mut s| {
        s.execute(params![
            session_id,
            number,
            turn.role.as_str(),
            turn.content,
            calls,
            turn.tool_call_id,
            turn.tool_name,
            tokens,
            turn.status.as_str(),
            now,
            metadata,
            search_extra(turn)
        ])
    })
    .context(format!("saving turn {number} of session {session_id}"))?;
    Ok(Turn {
        id: tx.last_insert_rowid(),
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
    })
}

fn clamp(seg: Segment, hi: i64) -> Segment {
    Segment { hi: seg.hi.min(hi), ..seg }
}

/// The first line of `text`, trimmed, at most [`TITLE_MAX_CHARS`] characters.
fn clip_title(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or("").trim();
    if line.chars().count() <= TITLE_MAX_CHARS {
        return line.to_owned();
    }
    let mut t: String = line.chars().take(TITLE_MAX_CHARS - 1).collect();
    t.push('…');
    t
}

fn turn_tokens(turn: &NewTurn) -> i64 {
    estimate_tokens(&turn.content)
        + turn.tool_calls.iter().map(|c| estimate_tokens(&c.name) + estimate_tokens(&c.arguments)).sum::<i64>()
}

/// Tool calls in the OpenAI wire shape, as providers send them.
fn tool_calls_json(calls: &[ToolCall]) -> Option<String> {
    if calls.is_empty() {
        return None;
    }
    let v: Vec<serde_json::Value> = calls
        .iter()
        .map(|c| {
            serde_json::json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}})
        })
        .collect();
    Some(serde_json::Value::Array(v).to_string())
}

fn parse_tool_calls(json: Option<String>) -> Vec<ToolCall> {
    let Some(json) = json else { return Vec::new() };
    let Ok(serde_json::Value::Array(items)) = serde_json::from_str::<serde_json::Value>(&json) else {
        return Vec::new();
    };
    items
        .iter()
        .map(|item| ToolCall {
            id: item["id"].as_str().unwrap_or_default().to_owned(),
            name: item["function"]["name"].as_str().unwrap_or_default().to_owned(),
            arguments: item["function"]["arguments"].as_str().unwrap_or_default().to_owned(),
        })
        .collect()
}

fn metadata_json(v: &serde_json::Value) -> Option<String> {
    (!v.is_null()).then(|| v.to_string())
}

/// Extra searchable text: tool names and the string values of call arguments.
fn search_extra(turn: &NewTurn) -> String {
    let mut out = String::new();
    if let Some(name) = &turn.tool_name {
        out.push_str(name);
    }
    for call in &turn.tool_calls {
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

/// Removes the highlight markers, returning plain text and the byte ranges they enclosed.
fn split_highlights(raw: &str) -> (String, Vec<(usize, usize)>) {
    let mut text = String::with_capacity(raw.len());
    let mut ranges = Vec::new();
    let mut open = None;
    for c in raw.chars() {
        match c {
            HL_OPEN => open = Some(text.len()),
            HL_CLOSE => {
                if let Some(start) = open.take() {
                    ranges.push((start, text.len()));
                }
            }
            _ => text.push(c),
        }
    }
    (text, ranges)
}

fn parse_role(r: &Row, i: usize) -> rusqlite::Result<Role> {
    let s: String = r.get(i)?;
    Role::parse(&s).ok_or_else(|| rusqlite::Error::InvalidColumnType(i, s, rusqlite::types::Type::Text))
}

fn parse_json(s: Option<String>) -> serde_json::Value {
    s.and_then(|s| serde_json::from_str(&s).ok()).unwrap_or(serde_json::Value::Null)
}

fn session_from_row(r: &Row) -> rusqlite::Result<Session> {
    Ok(Session {
        id: r.get(0)?,
        workspace: r.get(1)?,
        title: r.get(2)?,
        model: r.get(3)?,
        system_prompt: r.get(4)?,
        created_at: r.get(5)?,
        last_active_at: r.get(6)?,
        turn_count: r.get(7)?,
        prompt_tokens: r.get(8)?,
        completion_tokens: r.get(9)?,
        state: parse_json(r.get(10)?),
        parent_session_id: r.get(11)?,
        fork_turn: r.get(12)?,
        is_archived: r.get(13)?,
    })
}

fn turn_from_row(r: &Row) -> rusqlite::Result<Turn> {
    let status: String = r.get(9)?;
    Ok(Turn {
        id: r.get(0)?,
        session_id: r.get(1)?,
        turn_number: r.get(2)?,
        role: parse_role(r, 3)?,
        content: r.get(4)?,
        tool_calls: parse_tool_calls(r.get(5)?),
        tool_call_id: r.get(6)?,
        tool_name: r.get(7)?,
        token_count: r.get(8)?,
        status: TurnStatus::parse(&status).unwrap_or(TurnStatus::Error),
        created_at: r.get(10)?,
        metadata: parse_json(r.get(11)?),
    })
}

/// Maps `t.session_id, t.turn_number, e.tool_name, e.arguments, e.result, e.success, e.duration_ms,
/// e.approval, e.created_at`.
fn tool_execution_from_row(r: &Row) -> rusqlite::Result<ToolExecution> {
    let approval: String = r.get(7)?;
    Ok(ToolExecution {
        session_id: r.get(0)?,
        turn_number: r.get(1)?,
        tool_name: r.get(2)?,
        arguments: r.get(3)?,
        result: r.get(4)?,
        success: r.get(5)?,
        duration_ms: r.get(6)?,
        approval: Approval::parse(&approval).unwrap_or(Approval::Auto),
        created_at: r.get(8)?,
    })
}

fn task_from_row(r: &Row) -> rusqlite::Result<TaskRecord> {
    Ok(TaskRecord {
        task_id: r.get(0)?,
        session_id: r.get(1)?,
        turn_number: r.get(2)?,
        goal: r.get(3)?,
        context: r.get(4)?,
        status: r.get(5)?,
        result_delivered: r.get(6)?,
        created_at: r.get(7)?,
        updated_at: r.get(8)?,
    })
}

fn manifest_from_row(r: &Row) -> rusqlite::Result<ContextManifest> {
    let numbers: String = r.get(1)?;
    let trimmed: String = r.get(2)?;
    Ok(ContextManifest {
        session_id: r.get(0)?,
        turn_numbers: serde_json::from_str(&numbers).unwrap_or_default(),
        trimmed_turns: serde_json::from_str(&trimmed).unwrap_or_default(),
        state_version: r.get(3)?,
        estimated_tokens: r.get(4)?,
        budget_tokens: r.get(5)?,
        usage: parse_json(r.get(6)?),
        created_at: r.get(7)?,
    })
}

/// The SQLite library version in use (e.g. "3.50.4").
pub fn sqlite_version() -> String {
    rusqlite::version().to_owned()
}
