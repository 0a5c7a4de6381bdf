//! The archive as the context engine's data sources: [`RecallSource`] for `conversation_recall` and
//! [`SessionTurns`] as the lazily read [`TurnSource`] of context assembly.

use super::Store;
use crate::context::TurnSource;
use crate::recall::RecallSource;
use crate::{Result, SearchHit, SearchQuery, Session, TaskRecord, ToolExecution, Turn};
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

/// One session's turns, read page by page from the newest as context assembly asks for them.
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

    /// How many turns have been read from the archive so far.
    pub fn turns_read(&self) -> usize {
        self.read.get()
    }
}

impl TurnSource for SessionTurns<'_> {
    fn turns_before(&self, before_turn_number: Option<i64>, limit: usize) -> Result<Vec<Turn>> {
        let turns = self.store.turns_before(&self.session_id, before_turn_number, limit)?;
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
