//! Search-indexing a run of synced turns at the run's end instead of turn by turn.
//!
//! A turn's row is indexed by the trigger `turns_fts_insert`. Inside a transaction, every statement
//! that needs a statement journal (an insert into `turns`, which has triggers and constraints, is
//! one) makes FTS5 write what it has indexed so far as a segment of its own, and then merge those
//! one-turn segments: that took most of the time of a first sync. So while it adds a run of turns,
//! applying switches this connection's triggers off, keeps each added turn's text, and indexes them
//! all when the run ends, before any other change of the batch (which could update or delete one of
//! those turns, and so must find it indexed) and before the transaction commits.
//!
//! **Invariant:** while applying, the only trigger that does anything when a synced turn is added
//! is `turns_fts_insert`: the capture triggers are gated by `sync_meta.capture`, which applying
//! switches off (`core/tests/sync_batched.rs` checks the schema's triggers for this). The triggers
//! come back on when the run ends and whatever happens ([`Triggers`] on drop).

use crate::error::{Context, Result};
use rusqlite::config::DbConfig;
use rusqlite::{params, Connection};

/// The turns added since triggers went off, to index: `(rowid, content, search_extra)`.
#[derive(Default)]
pub(super) struct IndexLater<'a> {
    rows: Vec<(i64, &'a str, &'a str)>,
    running: bool,
}

impl<'a> IndexLater<'a> {
    /// Starts a run (triggers off), unless one is running.
    pub fn start(&mut self, conn: &Connection) -> Result<()> {
        if !self.running {
            set_triggers(conn, false)?;
            self.running = true;
        }
        Ok(())
    }

    /// Whether a run is going on: a turn added now is to be indexed by [`IndexLater::add`].
    pub fn running(&self) -> bool {
        self.running
    }

    /// Keeps a turn just added (row `id`) to index at the run's end.
    pub fn add(&mut self, id: i64, content: &'a str, search_extra: &'a str) {
        self.rows.push((id, content, search_extra));
    }

    /// How many turns wait: a mark to [`IndexLater::forget_after`].
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Forgets the turns kept after `mark` (their change was rolled back).
    pub fn forget_after(&mut self, mark: usize) {
        self.rows.truncate(mark);
    }

    /// Ends the run, if one is going on: indexes its turns as the trigger would have, in the order
    /// they were added, and switches triggers back on.
    pub fn finish(&mut self, conn: &Connection) -> Result<()> {
        if !self.running {
            return Ok(());
        }
        // Each a plain insert of values: no statement journal, so FTS5 keeps them in memory and
        // writes them as one segment at the end of the transaction (or when that memory is full).
        let mut insert = conn
            .prepare_cached("INSERT INTO turns_fts(rowid, content, search_extra) VALUES (?1, ?2, ?3)")
            .context("indexing synced turns for search")?;
        for (id, content, extra) in self.rows.drain(..) {
            insert.execute(params![id, content, extra]).context("indexing synced turns for search")?;
        }
        set_triggers(conn, true)?;
        self.running = false;
        Ok(())
    }
}

/// Switches this connection's triggers back on when dropped: a batch that fails or is rolled back
/// in the middle of a run leaves the connection as it found it.
pub(super) struct Triggers<'c>(pub &'c Connection);

impl Drop for Triggers<'_> {
    fn drop(&mut self) {
        // Only fails for a connection that is closed or a config SQLite does not know: neither here.
        let _ = self.0.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, true);
    }
}

fn set_triggers(conn: &Connection, on: bool) -> Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, on)
        .context(if on { "switching triggers back on" } else { "switching triggers off while adding synced turns" })
        .map(|_| ())
}
