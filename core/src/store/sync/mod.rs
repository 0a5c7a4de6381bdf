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
//! capture sessions, turns, their updates and workspace settings (and, schema v8, delegated tasks,
//! their events and context manifests); applying a message switches capture off for its transaction
//! only.

mod apply;
mod index_later;
mod message;
mod outgoing;
mod place;
mod pushed;
mod quarantine;
mod rebase;
mod records;
mod titles;
mod waiting;

pub use apply::Applied;
pub use message::{
    read_message, AttachmentRecord, ManifestSync, QuarantineReason, Received, SessionField, SessionRecord, SyncChange,
    SyncMessage, TaskSync, ToolExecutionRecord, TurnRecord, TurnUpdate, Unreadable,
};
pub use pushed::{pushed, Pushed};
pub use quarantine::{Kept, Quarantined, READER};
pub(super) use titles::rename_here;

use super::capture::{capture, set_capture};
use super::Store;
use crate::error::{Context, Result};
use crate::{Space, SyncScope};
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
            tx.execute("INSERT INTO sync_spaces (space) VALUES ('')", []).context("enabling sync")?;
            queue_whole(&tx, None).context("queueing the archive for its first sync")?;
        }
        let device = device(&tx)?.expect("the row was just written");
        tx.commit().context("enabling sync")?;
        Ok(device)
    }

    /// This archive's device, or `None` when sync is not enabled.
    pub fn sync_device(&self) -> Result<Option<SyncDevice>> {
        device(&self.conn)
    }

    /// How many rows this archive has written since it was opened (any write, the outbox's included):
    /// a request that moved it may have left changes to publish, so the worker's sync wakes at once.
    pub fn writes(&self) -> u64 {
        self.conn.total_changes()
    }

    /// What waits to be published and confirmed (in every space), and the personal space's cursor.
    pub fn sync_status(&self) -> Result<SyncStatus> {
        let Some(device) = device(&self.conn)? else { return Ok(SyncStatus::default()) };
        let count = |cmp: &str| -> Result<i64> {
            self.conn
                .query_row(
                    &format!(
                        "SELECT count(*) FROM sync_outbox o LEFT JOIN sync_spaces p ON p.space = o.space
                         WHERE o.seq {cmp} coalesce(p.published, 0)"
                    ),
                    [],
                    |r| r.get(0),
                )
                .context("counting the sync outbox")
        };
        Ok(SyncStatus {
            device: Some(device),
            waiting: count(">")?,
            unconfirmed: count("<=")?,
            cursor: self.sync_cursor(&Space::Personal)?,
        })
    }

    /// The last sequence of `space`'s stream applied here (0: none).
    pub fn sync_cursor(&self, space: &Space) -> Result<i64> {
        mark(&self.conn, space, "cursor")
    }

    /// Records that the server acknowledged every message of `space` up to outbox sequence `seq`:
    /// they are not published again (they stay pending until the stream brings them back).
    pub fn sync_published(&mut self, space: &Space, seq: i64) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO sync_spaces (space, published) VALUES (?1, ?2)
                 ON CONFLICT (space) DO UPDATE SET published = max(published, excluded.published)",
                params![space.key(), seq],
            )
            .context("recording what the server acknowledged")
            .map(|_| ())
    }

    /// Forgets what was acknowledged, so everything still pending is published again (harmless:
    /// message ids make the stream drop what it has, and applying is idempotent). For a server that
    /// lost its store, or a new space.
    pub fn sync_republish(&mut self) -> Result<()> {
        self.conn
            .execute("UPDATE sync_spaces SET published = 0", [])
            .context("queueing pending changes again")
            .map(|_| ())
    }

    /// How many changes for `space` wait to be published (for a team space this device has not
    /// joined, until it does).
    pub fn sync_waiting(&self, space: &Space) -> Result<i64> {
        let published = mark(&self.conn, space, "published")?;
        self.conn
            .query_row(
                "SELECT count(*) FROM sync_outbox WHERE space = ?1 AND seq > ?2",
                params![space.key(), published],
                |r| r.get(0),
            )
            .context("counting the sync outbox")
    }

    /// The spaces this archive has read from or published to, and every team space a workspace
    /// syncs to (whether or not this device has joined it yet). Cheap: it reads no outbox entry.
    pub fn sync_spaces(&self) -> Result<Vec<Space>> {
        let keys: Vec<String> = self
            .conn
            .prepare(
                "SELECT space FROM sync_spaces
                 UNION SELECT sync_scope FROM workspace_settings WHERE sync_scope != '.' ORDER BY 1",
            )
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .context("listing the sync spaces")?;
        Ok(keys.into_iter().filter_map(|k| SyncScope::from_key(&k).space()).collect())
    }
}

/// How much of a fetched batch may be applied while this device writes a reply in session `writing`
/// (the agent loop checkpoints and finalises the reply's turn by its number): up to, not including,
/// the first message from another device that adds a turn to that session or deletes it. Placing
/// such a turn before this device's pending ones could move the reply's turn to another number or
/// into a conflict fork under the loop's feet. What follows it waits, in stream order, until the
/// reply is saved; everything before it (other sessions, this device's own messages coming back,
/// fields, updates) is applied as it comes. A pack (changes sharing one stream sequence) waits whole,
/// so the cursor never stops inside one.
pub fn applicable_while_writing(batch: &[(i64, Received)], own_device: &str, writing: &str) -> usize {
    let stop = batch
        .iter()
        .position(|(_, m)| {
            let Received::Change(m) = m else { return false };
            m.device_id != own_device
                && match &m.change {
                    SyncChange::TurnAdded(t) => t.session_id == writing,
                    SyncChange::SessionDeleted { session_id } => session_id == writing,
                    _ => false,
                }
        })
        .unwrap_or(batch.len());
    batch[..stop].partition_point(|(seq, _)| batch.get(stop).is_none_or(|(at, _)| seq < at))
}

/// A space's `cursor` or `published` mark (0 before anything).
fn mark(conn: &Connection, space: &Space, column: &str) -> Result<i64> {
    Ok(conn
        .prepare_cached(&format!("SELECT {column} FROM sync_spaces WHERE space = ?1"))
        .and_then(|mut s| s.query_row([space.key()], |r| r.get(0)).optional())
        .context("reading where sync stands")?
        .unwrap_or(0))
}

/// Queues sessions (parents before their forks, each before its turns) and workspace settings for
/// their spaces: the whole archive, or only `workspace` (which moved to another space). This-device
/// workspaces are left out.
fn queue_whole(conn: &Connection, workspace: Option<&str>) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO sync_outbox (kind, key, space)
         SELECT kind, key, space FROM (
             SELECT s.rowid AS r, 0 AS o, 0 AS n, 'session' AS kind, s.id AS key, v.space FROM sessions s
                 JOIN sync_session_space v ON v.session_id = s.id WHERE ?1 IS NULL OR s.workspace = ?1
             UNION ALL
             SELECT s.rowid, 1, t.turn_number, 'turn', t.gid, v.space FROM turns t JOIN sessions s ON s.id = t.session_id
                 JOIN sync_session_space v ON v.session_id = s.id WHERE ?1 IS NULL OR s.workspace = ?1
         ) WHERE space != '.' ORDER BY r, o, n",
        [workspace],
    )?;
    // Then the tasks, their events and the context manifests of those sessions (they name turns).
    conn.execute(
        "INSERT INTO sync_outbox (kind, key, field, space)
         SELECT q.kind, q.key, q.field, v.space FROM (
             SELECT t.rowid AS r, 0 AS o, 0 AS n, 'task' AS kind, t.task_id AS key, '' AS field, t.session_id
                 FROM tasks t
             UNION ALL
             SELECT t.rowid, 1, e.seq, 'task_event', e.task_id, e.seq, t.session_id
                 FROM task_events e JOIN tasks t ON t.task_id = e.task_id
             UNION ALL
             SELECT m.id + (1 << 40), 0, 0, 'manifest', m.id, '', m.session_id FROM context_manifests m
         ) q JOIN sync_session_space v ON v.session_id = q.session_id JOIN sessions s ON s.id = q.session_id
         WHERE v.space != '.' AND (?1 IS NULL OR s.workspace = ?1) ORDER BY q.r, q.o, q.n",
        [workspace],
    )?;
    if workspace.is_none() {
        conn.execute(
            "INSERT INTO sync_outbox (kind, key, space) SELECT 'workspace', workspace, sync_scope
             FROM workspace_settings WHERE sync_scope != '.' ORDER BY workspace",
            [],
        )?;
    }
    Ok(())
}

/// A workspace's scope changed from `before` to `now` (its settings row already says `now`, and
/// the trigger queued the settings for the new space): with sync on, its sessions are sent there
/// whole, and the space it left learns where it went (unless it went to this device only).
pub(in crate::store) fn scope_changed(
    conn: &Connection,
    workspace: &str,
    before: &SyncScope,
    now: &SyncScope,
) -> Result<()> {
    if capture(conn)? != Some(true) {
        return Ok(());
    }
    // A workspace kept to this device is nobody else's business: not even its name goes out.
    if now.space().is_none() {
        return Ok(());
    }
    queue_whole(conn, Some(workspace)).context(format!("sending workspace {workspace:?} to its new space"))?;
    if let Some(old) = before.space() {
        conn.execute(
            "INSERT INTO sync_outbox (kind, key, space) VALUES ('workspace', ?1, ?2)",
            params![workspace, old.key()],
        )
        .context(format!("telling the old space where workspace {workspace:?} went"))?;
    }
    Ok(())
}

fn device(conn: &Connection) -> Result<Option<SyncDevice>> {
    conn.query_row("SELECT device_id, device_name FROM sync_meta", [], |r| {
        Ok(SyncDevice { id: r.get(0)?, name: r.get(1)? })
    })
    .optional()
    .context("reading this device's sync identity")
}

/// Whether this device has a change of `kind`/`key`/`field` for `space` that its stream has not
/// brought back yet.
fn pending(conn: &Connection, space: &Space, kind: &str, key: &str, field: &str) -> Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM sync_outbox WHERE kind = ?1 AND key = ?2 AND field = ?3 AND space = ?4)",
    )
    .and_then(|mut s| s.query_row(params![kind, key, field, space.key()], |r| r.get(0)))
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

/// The space `session_id`'s changes go to; `None` when its workspace stays on this device.
pub(super) fn space_of(conn: &Connection, session_id: &str) -> Result<Option<Space>> {
    let key: Option<String> = conn
        .prepare_cached("SELECT space FROM sync_session_space WHERE session_id = ?1")
        .and_then(|mut s| s.query_row([session_id], |r| r.get(0)).optional())
        .context("reading where a session syncs")?;
    Ok(key.and_then(|k| SyncScope::from_key(&k).space()))
}

/// Queues the delete of `session_id` in `space`: hidden now, deleted when the stream brings the
/// delete back.
pub(super) fn queue_delete(conn: &Connection, space: &Space, session_id: &str) -> Result<()> {
    conn.execute("INSERT OR IGNORE INTO sync_deleting (session_id) VALUES (?1)", [session_id])
        .and_then(|_| {
            conn.execute(
                "INSERT INTO sync_outbox (kind, key, space) VALUES ('session_deleted', ?1, ?2)",
                params![session_id, space.key()],
            )
        })
        .context(format!("deleting session {session_id}"))
        .map(|_| ())
}
