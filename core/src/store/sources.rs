//! The archive as the context engine's data sources: [`RecallSource`] for `conversation_recall` and
//! [`SessionTurns`] as the lazily read [`TurnSource`] of context assembly.

use super::rows::{turn_from_row, TURN_COLS};
use super::turn_cache::Missing;
use super::Store;
use crate::context::TurnSource;
use crate::error::Context;
use crate::recall::RecallSource;
use crate::{Result, SearchHit, SearchQuery, Session, TaskRecord, ToolExecution, Turn};
use rusqlite::OptionalExtension;
use std::cell::Cell;

impl RecallSource for Store {
    fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        Store::search(self, query)
    }

    fn search_hybrid(&self, query: &SearchQuery, vector: &[f32]) -> Result<Vec<SearchHit>> {
        Store::search_hybrid(self, query, Some(vector))
    }

    fn turns_range(&self, session_id: &str, start: i64, end: i64) -> Result<Vec<Turn>> {
        Store::turns_range(self, session_id, start, end)
    }

    fn tool_executions(&self, session_id: &str, tool_name: &str, limit: usize) -> Result<Vec<ToolExecution>> {
        Store::tool_executions(self, Some(session_id), tool_name, limit)
    }

    fn session(&self, session_id: &str) -> Result<Session> {
        self.get_session(session_id)
    }

    fn tasks(&self, session_id: &str) -> Result<Vec<TaskRecord>> {
        Store::tasks(self, session_id)
    }
}

impl Store {
    /// As [`Store::turns_before`] for a session of `count` turns, through the turns the last context
    /// assemblies read (`turn_cache`): only what they did not read comes from the archive.
    fn turns_before_kept(&self, session_id: &str, count: i64, before: Option<i64>, limit: usize) -> Result<Vec<Turn>> {
        let end = before.map_or(count, |b| b.saturating_sub(1).min(count));
        let start = end.saturating_sub(i64::try_from(limit).unwrap_or(i64::MAX).saturating_sub(1)).max(1);
        if start > end {
            return Ok(Vec::new());
        }
        // Inside a transaction a turn read could still be rolled back: nothing is kept or used.
        if !self.conn.is_autocommit() {
            return self.turns_range(session_id, start, end);
        }
        let generation: i64 = self
            .conn
            .prepare_cached("SELECT generation FROM turn_changes")
            .and_then(|mut s| s.query_row([], |r| r.get(0)))
            .context("reading the archive's change counter")?;
        let mut cache = self.turn_cache.borrow_mut();
        cache.check(generation);
        let unfinished: Vec<Turn> = cache.unfinished(session_id).into_iter().cloned().collect();
        if !unfinished.is_empty() && self.turns_by_id(unfinished.iter().map(|t| t.id))? != unfinished {
            cache.forget(session_id);
        }
        let missing = cache.missing(session_id, start, end);
        let fetched = match missing {
            Missing::All => self.turns_range(session_id, start, end)?,
            Missing::Around { older, newer } => {
                let mut turns = Vec::new();
                for (lo, hi) in older.into_iter().chain(newer) {
                    turns.extend(self.turns_range(session_id, lo, hi)?);
                }
                turns
            }
        };
        Ok(cache.fill(session_id, (start, end), missing, fetched))
    }
}

impl Store {
    /// The turns with these row ids, in that order (those that no longer exist left out).
    fn turns_by_id(&self, ids: impl Iterator<Item = i64>) -> Result<Vec<Turn>> {
        let mut turns = Vec::new();
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT {TURN_COLS} FROM turns t WHERE t.id = ?1"))
            .context("reading kept turns again")?;
        for id in ids {
            turns.extend(stmt.query_row([id], turn_from_row).optional().context("reading kept turns again")?);
        }
        drop(stmt);
        for turn in &mut turns {
            self.fill_attachments(std::slice::from_mut(turn))?;
        }
        Ok(turns)
    }
}

/// One session's turns, read page by page from the newest as context assembly asks for them: those
/// the session's last assemblies read come from memory (`turn_cache.rs`), the rest from the archive.
pub struct SessionTurns<'a> {
    store: &'a Store,
    session_id: String,
    count: i64,
    read: Cell<usize>,
}

impl<'a> SessionTurns<'a> {
    /// The turns of `session_id` in `store` (reads only the turn count); fails if there is no such session.
    pub fn new(store: &'a Store, session_id: &str) -> Result<SessionTurns<'a>> {
        let count = store.turn_count(session_id)?;
        Ok(SessionTurns { store, session_id: session_id.to_owned(), count, read: Cell::new(0) })
    }

    /// How many turns have been handed to assembly so far (from memory or from the archive).
    pub fn turns_read(&self) -> usize {
        self.read.get()
    }
}

impl TurnSource for SessionTurns<'_> {
    fn turns_before(&self, before_turn_number: Option<i64>, limit: usize) -> Result<Vec<Turn>> {
        let turns = self.store.turns_before_kept(&self.session_id, self.count, before_turn_number, limit)?;
        self.read.set(self.read.get() + turns.len());
        Ok(turns)
    }

    fn attachment_bytes(&self, sha256: &str) -> Result<Option<Vec<u8>>> {
        self.store.attachment_bytes(sha256).map(Some)
    }

    fn turn_count(&self) -> i64 {
        self.count
    }
}
