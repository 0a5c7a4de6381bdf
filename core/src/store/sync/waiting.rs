//! "N waiting" as a user counts it: the outbox holds one entry per archive change, bookkeeping
//! included (a session's creation, its token usage and model, a reply's checkpoints, its tool steps),
//! where a user counts the messages written, the renames and the deletes.

use super::device;
use crate::error::{Context, Result};
use crate::store::Store;

impl Store {
    /// How many changes made here the server has not acknowledged yet, in every space, counted as a
    /// user would: each message (a user's message, and each reply, whose tool steps are part of it),
    /// each rename and each delete. What else waits (bookkeeping) goes with them and is not counted;
    /// [`crate::store::sync::SyncStatus::waiting`] counts everything. A session's first message titles
    /// it: that title is part of the message, not a rename (told by its place: the outbox entry
    /// right before that message's own, written in the same transaction).
    pub fn sync_waiting_changes(&self) -> Result<i64> {
        if device(&self.conn)?.is_none() {
            return Ok(0);
        }
        self.conn
            .query_row(
                "SELECT count(*) FROM sync_outbox o LEFT JOIN sync_spaces p ON p.space = o.space
                 WHERE o.seq > coalesce(p.published, 0) AND (
                     o.kind = 'session_deleted'
                     OR (o.kind = 'turn' AND EXISTS (
                         SELECT 1 FROM turns t WHERE t.gid = o.key
                             AND (t.role = 'user' OR (t.role = 'assistant' AND t.tool_calls IS NULL))))
                     OR (o.kind = 'session_field' AND o.field = 'title' AND NOT EXISTS (
                         SELECT 1 FROM sync_outbox n JOIN turns t ON t.gid = n.key
                         WHERE n.seq = o.seq + 1 AND n.kind = 'turn' AND t.role = 'user'
                             AND coalesce(t.sync_session, t.session_id) = o.key
                             AND NOT EXISTS (SELECT 1 FROM turns e WHERE e.session_id = t.session_id
                                 AND e.role = 'user' AND e.turn_number < t.turn_number))))",
                [],
                |r| r.get(0),
            )
            .context("counting the changes waiting for the sync server")
    }
}
