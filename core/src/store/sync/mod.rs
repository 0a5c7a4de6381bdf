//! Sync on the archive's side (spec §14): the outbox that triggers fill in each change's own
//! transaction, the messages built from it for the space's stream, and (in `apply`) the stream's
//! messages applied in stream order, idempotently, with the stream cursor saved in the same
//! transaction. The transport (NATS JetStream) and encryption live outside the core.
//!
//! How devices converge: every device applies the same stream in the same order. A change this
//! device made and the stream has not brought back yet stays in the outbox ("pending"); a pending
//! change is what the stream will order *after* everything that arrives before it, so a remote
//! change that arrives first is applied as it would be on a device without ours, and ours is moved
//! to where the stream's rules will put it when it arrives (a turn whose place was taken goes into a
//! conflict fork; a field we changed keeps our value, which the stream will order last). A device's
//! own messages coming back only confirm: they take the change out of the outbox.
//!
//! **Invariant:** while sync is enabled, no archive write escapes the outbox: triggers (schema v5)
//! capture sessions, turns, their updates and workspace settings; applying a message switches
//! capture off for its transaction only.

mod apply;
mod message;
mod outgoing;
mod place;
mod rebase;

pub use apply::Applied;
pub use message::{
    AttachmentRecord, Change, SessionField, SessionRecord, SyncMessage, ToolExecutionRecord, TurnRecord, TurnUpdate,
};

use super::Store;
use crate::error::{Context, Result};
use rusqlite::{params, Connection, OptionalExtension};

/// This archive's identity in its space's stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncDevice {
    /// A random id made when sync was enabled: a wiped and re-synced browser is a new device.
    pub id: String,
    /// The name the user gave it ("Laptop"); conflict forks are titled with it.
    pub name: String,
}

/// Where sync stands, for the header's status.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SyncStatus {
    /// This archive's device, when sync is enabled.
    pub device: Option<SyncDevice>,
    /// Changes not yet acknowledged by the server ("N waiting").
    pub waiting: i64,
    /// Changes published but not yet seen back in the stream.
    pub unconfirmed: i64,
    /// The last stream sequence applied.
    pub cursor: i64,
}

impl Store {
    /// Enables sync as device `name` (idempotent: an enabled archive keeps its device and only takes
    /// the new name). From now on every change is written to the outbox; the first time, everything
    /// already in the archive is queued once, parents before their forks and each session before
    /// its turns, so a device that receives it can apply it in order.
    pub fn enable_sync(&mut self, name: &str) -> Result<SyncDevice> {
        let name = name.trim();
        let name = if name.is_empty() { "this device" } else { name };
        let tx = self.conn.transaction().context("enabling sync")?;
        if device(&tx)?.is_some() {
            tx.execute("UPDATE sync_meta SET device_name = ?1", [name]).context("renaming this device")?;
        } else {
            let id = uuid::Uuid::now_v7().to_string();
            tx.execute("INSERT INTO sync_meta (id, device_id, device_name) VALUES (1, ?1, ?2)", params![id, name])
                .context("enabling sync")?;
            tx.execute_batch(
                "INSERT INTO sync_outbox (kind, key)
                 SELECT kind, key FROM (
                     SELECT s.rowid AS r, 0 AS o, 0 AS n, 'session' AS kind, s.id AS key FROM sessions s
                     UNION ALL
                     SELECT s.rowid, 1, t.turn_number, 'turn', t.gid FROM turns t JOIN sessions s ON s.id = t.session_id
                 ) ORDER BY r, o, n;
                 INSERT INTO sync_outbox (kind, key) SELECT 'workspace', workspace FROM workspace_settings
                 ORDER BY workspace;",
            )
            .context("queueing the archive for its first sync")?;
        }
        let device = device(&tx)?.expect("the row was just written");
        tx.commit().context("enabling sync")?;
        Ok(device)
    }

    /// This archive's device, or `None` when sync is not enabled.
    pub fn sync_device(&self) -> Result<Option<SyncDevice>> {
        device(&self.conn)
    }

    /// What waits to be published and confirmed, and the stream cursor.
    pub fn sync_status(&self) -> Result<SyncStatus> {
        let Some(device) = device(&self.conn)? else { return Ok(SyncStatus::default()) };
        let (published, cursor): (i64, i64) = self
            .conn
            .query_row("SELECT published, cursor FROM sync_meta", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .context("reading the sync status")?;
        let count = |sql: &str| -> Result<i64> {
            self.conn.query_row(sql, [published], |r| r.get(0)).context("counting the sync outbox")
        };
        Ok(SyncStatus {
            device: Some(device),
            waiting: count("SELECT count(*) FROM sync_outbox WHERE seq > ?1")?,
            unconfirmed: count("SELECT count(*) FROM sync_outbox WHERE seq <= ?1")?,
            cursor,
        })
    }

    /// The last stream sequence applied (0: none).
    pub fn sync_cursor(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("SELECT cursor FROM sync_meta", [], |r| r.get(0))
            .optional()
            .context("reading the sync cursor")?
            .unwrap_or(0))
    }

    /// Records that the server acknowledged every message up to outbox sequence `seq`: they are not
    /// published again (they stay pending until the stream brings them back).
    pub fn sync_published(&mut self, seq: i64) -> Result<()> {
        self.conn
            .execute("UPDATE sync_meta SET published = max(published, ?1)", [seq])
            .context("recording what the server acknowledged")
            .map(|_| ())
    }

    /// Forgets what was acknowledged, so everything still pending is published again (harmless:
    /// message ids make the stream drop what it has, and applying is idempotent). For a server that
    /// lost its store, or a new space.
    pub fn sync_republish(&mut self) -> Result<()> {
        self.conn
            .execute("UPDATE sync_meta SET published = 0", [])
            .context("queueing pending changes again")
            .map(|_| ())
    }
}

fn device(conn: &Connection) -> Result<Option<SyncDevice>> {
    conn.query_row("SELECT device_id, device_name FROM sync_meta", [], |r| {
        Ok(SyncDevice { id: r.get(0)?, name: r.get(1)? })
    })
    .optional()
    .context("reading this device's sync identity")
}

/// Whether this device has a change of `kind`/`key`/`field` the stream has not brought back yet.
fn pending(conn: &Connection, kind: &str, key: &str, field: &str) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM sync_outbox WHERE kind = ?1 AND key = ?2 AND field = ?3)")
        .and_then(|mut s| s.query_row(params![kind, key, field], |r| r.get(0)))
        .context("looking for a pending change")
}

/// Whether sync is enabled on this archive.
pub(super) fn enabled(conn: &Connection) -> Result<bool> {
    conn.query_row("SELECT EXISTS (SELECT 1 FROM sync_meta)", [], |r| r.get(0)).context("reading whether sync is on")
}

/// Whether any session waits for its delete to be ordered by the stream.
pub(super) fn deleting_any(conn: &Connection) -> Result<bool> {
    conn.query_row("SELECT EXISTS (SELECT 1 FROM sync_deleting)", [], |r| r.get(0)).context("reading pending deletes")
}

/// Queues the delete of `session_id`: hidden now, deleted when the stream brings the delete back.
pub(super) fn queue_delete(conn: &Connection, session_id: &str) -> Result<()> {
    conn.execute("INSERT OR IGNORE INTO sync_deleting (session_id) VALUES (?1)", [session_id])
        .and_then(|_| conn.execute("INSERT INTO sync_outbox (kind, key) VALUES ('session_deleted', ?1)", [session_id]))
        .context(format!("deleting session {session_id}"))
        .map(|_| ())
}

/// Switches change capture off (while applying the stream's messages) or back on.
fn set_capture(conn: &Connection, on: bool) -> Result<()> {
    conn.execute("UPDATE sync_meta SET capture = ?1", [on]).context("switching sync capture").map(|_| ())
}
