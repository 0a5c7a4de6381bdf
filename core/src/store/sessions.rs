//! Sessions: create, read, list, rename, archive, fork, delete and resume; the state register and
//! token usage kept on the session row; the fork ancestry (`Segment`s) every read of turns follows.

use super::rows::{self, session_from_row, SESSION_COLS};
use super::Store;
use crate::error::{Context, Error, Result};
use crate::{Session, TaskRecord, Turn};
use rusqlite::{params, Connection, OptionalExtension};

/// The condition a session row meets unless its delete waits for the sync stream (`sync_deleting`).
pub(super) const VISIBLE: &str = "id NOT IN (SELECT session_id FROM sync_deleting)";

/// Longest title kept from a first user message.
pub const TITLE_MAX_CHARS: usize = 100;

/// What to create a session with. Sessions are normally created at the first user message.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewSession {
    /// Keep an existing id (imports); `None` makes a new UUID v7.
    pub id: Option<String>,
    /// The project the session belongs to.
    pub workspace: String,
    /// The title to start with, cut to its first line and [`TITLE_MAX_CHARS`]; empty: the first user message
    /// becomes the title.
    pub title: String,
    /// The model to start with (may be empty).
    pub model: String,
    /// The system prompt to record for the session (may be empty).
    pub system_prompt: String,
}

impl NewSession {
    /// A new, untitled session in `workspace`, with no model or prompt yet.
    pub fn new(workspace: impl Into<String>) -> NewSession {
        NewSession { workspace: workspace.into(), ..NewSession::default() }
    }
}

/// Which sessions to list.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionFilter {
    /// Only this workspace (`None`: every workspace).
    pub workspace: Option<String>,
    /// Archived sessions too (default: not).
    pub include_archived: bool,
    /// At most this many sessions (default 500).
    pub limit: usize,
    /// Skip this many of the most recent first (paging).
    pub offset: usize,
}

impl Default for SessionFilter {
    fn default() -> Self {
        SessionFilter { workspace: None, include_archived: false, limit: 500, offset: 0 }
    }
}

/// A session ready to continue: its row, its state and its newest turns.
#[derive(Debug, Clone, PartialEq)]
pub struct Resumed {
    /// The session row, with its state register.
    pub session: Session,
    /// The last N turns, oldest first.
    pub turns: Vec<Turn>,
    /// Delegated tasks that have not finished or whose result was not delivered yet.
    pub pending_tasks: Vec<TaskRecord>,
}

/// A workspace and how many (unarchived) sessions it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceSummary {
    /// The workspace's name.
    pub workspace: String,
    /// Its unarchived sessions (0 when all are archived).
    pub sessions: i64,
    /// The latest activity among all its sessions, in milliseconds since the Unix epoch.
    pub last_active_at: i64,
}

/// One contiguous run of turn numbers a session shows, and where they are stored: a fork shows its
/// parent's turns `(lo, hi]` and its own turns after the fork point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Segment {
    pub session_id: String,
    pub lo: i64,
    pub hi: i64,
}

/// A session row as created now: no turns, no usage, an empty state, not a fork.
pub(super) fn new_session_row(id: String, workspace: &str, title: String, now: i64) -> Session {
    Session {
        id,
        workspace: workspace.to_owned(),
        title,
        model: String::new(),
        system_prompt: String::new(),
        created_at: now,
        last_active_at: now,
        turn_count: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        state: serde_json::json!({}),
        parent_session_id: None,
        fork_turn: None,
        is_archived: false,
        is_version: false,
    }
}

impl Store {
    /// Creates a session (no turns, an empty state register) and returns it as stored.
    pub fn create_session(&mut self, new: &NewSession) -> Result<Session> {
        let id = new.id.clone().unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
        let now = self.tick();
        let row = Session {
            model: new.model.clone(),
            system_prompt: new.system_prompt.clone(),
            ..new_session_row(id, &new.workspace, clip_title(&new.title), now)
        };
        rows::insert_session(&self.conn, &row)
            .context(format!("creating a session in workspace {:?}", new.workspace))?;
        self.get_session(&row.id)
    }

    /// The session `id`, or [`Error::SessionNotFound`].
    pub fn get_session(&self, id: &str) -> Result<Session> {
        self.conn
            .prepare_cached(&format!("SELECT {SESSION_COLS} FROM sessions WHERE id = ?1 AND {VISIBLE}"))
            .and_then(|mut s| s.query_row([id], session_from_row).optional())
            .context(format!("reading session {id}"))?
            .ok_or_else(|| Error::SessionNotFound(id.to_owned()))
    }

    /// Sessions, most recently active first.
    pub fn list_sessions(&self, filter: &SessionFilter) -> Result<Vec<Session>> {
        let sql = format!(
            "SELECT {SESSION_COLS} FROM sessions
             WHERE (?1 IS NULL OR workspace = ?1) AND (?2 OR NOT is_archived) AND {VISIBLE}
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
            .prepare_cached(&format!(
                "SELECT workspace, SUM(NOT is_archived), MAX(last_active_at) FROM sessions WHERE {VISIBLE}
                 GROUP BY workspace ORDER BY MAX(last_active_at) DESC"
            ))
            .and_then(|mut s| {
                s.query_map([], |r| {
                    Ok(WorkspaceSummary { workspace: r.get(0)?, sessions: r.get(1)?, last_active_at: r.get(2)? })
                })?
                .collect()
            })
            .context("listing workspaces")
    }

    /// Archives (hides from the default list) or unarchives a session; nothing is deleted.
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
    /// through a pointer, never copied) and continues on its own. At turn 0 it inherits nothing: another
    /// first message in the same conversation (an edit of turn 1).
    pub fn fork_session(&mut self, id: &str, at_turn: i64) -> Result<Session> {
        self.fork_as(id, at_turn, false)
    }

    /// Forks `id` after turn `at_turn` as another version of the same conversation (an edit or a
    /// regeneration of turn `at_turn + 1`): the same pointer as [`Store::fork_session`], recorded as a
    /// version ([`Session::is_version`]), so it is listed under its conversation, not as a fork.
    pub fn version_session(&mut self, id: &str, at_turn: i64) -> Result<Session> {
        self.fork_as(id, at_turn, true)
    }

    fn fork_as(&mut self, id: &str, at_turn: i64, is_version: bool) -> Result<Session> {
        let parent = self.get_session(id)?;
        if at_turn < 0 || at_turn > parent.turn_count {
            return Err(Error::Invalid(format!(
                "cannot fork session {id} at turn {at_turn}: it has turns 1..{}",
                parent.turn_count
            )));
        }
        let fork_id = uuid::Uuid::now_v7().to_string();
        let now = self.tick();
        let title = clip_title(&format!("{} (fork)", parent.title));
        let row = Session {
            model: parent.model.clone(),
            system_prompt: parent.system_prompt.clone(),
            turn_count: at_turn,
            state: parent.state.clone(),
            parent_session_id: Some(parent.id.clone()),
            fork_turn: Some(at_turn),
            is_version,
            ..new_session_row(fork_id, &parent.workspace, title, now)
        };
        rows::insert_session(&self.conn, &row).context(format!("forking session {id}"))?;
        self.get_session(&row.id)
    }

    /// The session row, its last `last_n` turns and its unfinished tasks: everything to continue.
    pub fn resume(&self, id: &str, last_n: usize) -> Result<Resumed> {
        let session = self.get_session(id)?;
        let turns = self.last_turns(id, last_n)?;
        let pending_tasks = self.tasks(id)?.into_iter().filter(|t| !t.is_finished() || !t.result_delivered).collect();
        Ok(Resumed { session, turns, pending_tasks })
    }

    /// The runs of turn numbers `session_id` shows, newest segment first (see [`Segment`]).
    pub(super) fn segments(&self, session_id: &str) -> Result<Vec<Segment>> {
        segments(&self.conn, session_id)
    }
}

fn clamp(seg: Segment, hi: i64) -> Segment {
    Segment { hi: seg.hi.min(hi), ..seg }
}

/// The first line of `text`, trimmed, at most [`TITLE_MAX_CHARS`] characters.
pub(super) fn clip_title(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or("").trim();
    if line.chars().count() <= TITLE_MAX_CHARS {
        return line.to_owned();
    }
    let mut t: String = line.chars().take(TITLE_MAX_CHARS - 1).collect();
    t.push('…');
    t
}

/// The runs of turn numbers `session_id` shows, newest segment first (see [`Segment`]).
pub(super) fn segments(conn: &Connection, session_id: &str) -> Result<Vec<Segment>> {
    let mut out = Vec::new();
    let mut current = session_id.to_owned();
    let mut hi = i64::MAX;
    loop {
        let (parent, fork_turn): (Option<String>, Option<i64>) = conn
            .prepare_cached("SELECT parent_session_id, fork_turn FROM sessions WHERE id = ?1")
            .and_then(|mut s| s.query_row([&current], |r| Ok((r.get(0)?, r.get(1)?))).optional())
            .context(format!("reading the ancestry of session {session_id}"))?
            .ok_or_else(|| Error::SessionNotFound(current.clone()))?;
        let lo = fork_turn.unwrap_or(0);
        out.push(Segment { session_id: current, lo, hi });
        match parent {
            Some(p) if out.len() < 1000 => {
                // A fork of a fork at a turn before the parent's own fork point shows none of the
                // grandparent's turns after it.
                hi = lo.min(hi);
                current = p;
            }
            _ => return Ok(out),
        }
    }
}

/// Deletes session `id` inside the caller's transaction (`Store::delete_session`, `synced.rs`). The copies
/// its forks receive are not sync changes of their own: every device that applies the delete makes
/// the same copies.
pub(super) fn delete_in(conn: &Connection, id: &str) -> Result<()> {
    let children: Vec<(String, i64)> = conn
        .prepare("SELECT id, fork_turn FROM sessions WHERE parent_session_id = ?1")
        .and_then(|mut s| s.query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
        .context(format!("finding forks of session {id}"))?;
    let capture = super::capture::capture(conn)?;
    if capture.is_some() {
        conn.execute("UPDATE sync_meta SET capture = 0", []).context("pausing sync capture")?;
    }
    for (child, fork_turn) in &children {
        for seg in segments(conn, id)?.into_iter().map(|s| clamp(s, *fork_turn)) {
            rows::copy_turns(conn, child, &seg.session_id, seg.lo, seg.hi)
                .context("copying inherited turns into a fork")?;
            rows::copy_tool_executions(conn, child, &seg.session_id, seg.lo, seg.hi)
                .context("copying inherited tool executions into a fork")?;
            rows::copy_attachments(conn, child, &seg.session_id, seg.lo, seg.hi)
                .context("linking inherited attachments to a fork")?;
        }
        conn.execute("UPDATE sessions SET parent_session_id = NULL, fork_turn = NULL WHERE id = ?1", [child])
            .context("detaching a fork")?;
    }
    if let Some(capture) = capture {
        conn.execute("UPDATE sync_meta SET capture = ?1", [capture]).context("resuming sync capture")?;
    }
    for sql in [
        "DELETE FROM task_events WHERE task_id IN (SELECT task_id FROM tasks WHERE session_id = ?1)",
        "DELETE FROM tasks WHERE session_id = ?1",
        "DELETE FROM context_manifests WHERE session_id = ?1",
        "DELETE FROM tool_executions WHERE turn_id IN (SELECT id FROM turns WHERE session_id = ?1)",
        "DELETE FROM attachments WHERE turn_id IN (SELECT id FROM turns WHERE session_id = ?1)",
        "DELETE FROM turns WHERE session_id = ?1",
        "DELETE FROM sessions WHERE id = ?1",
    ] {
        conn.execute(sql, [id]).context(format!("deleting session {id}"))?;
    }
    if capture.is_some() {
        conn.execute("DELETE FROM sync_forks WHERE session_id = ?1", [id]).context(format!("deleting session {id}"))?;
    }
    // A content is kept while any other turn (another session's, a fork's copy) still carries it.
    super::attachments::delete_orphan_blobs(conn)?;
    Ok(())
}
