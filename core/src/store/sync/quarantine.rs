//! The sync quarantine: stream messages this device could not apply, kept verbatim (still sealed as
//! the stream held them) in `sync_quarantine`, skipped so the rest of the stream applies, counted
//! for the user ("1 change from Birch could not be applied: …, kept") and tried again by a build
//! whose reader is newer (`READER`), which may know the change kind or apply rule that was missing.
//!
//! What is quarantined and what is not: a message is quarantined when the message itself is at
//! fault for this version (it does not read, or its change is refused: see [`QuarantineReason`]). A
//! failure of the archive itself (storage full, the database busy, an I/O error) is the device's,
//! not the message's: the batch is rolled back whole and tried again later, nothing is skipped.

use super::message::QuarantineReason;
use crate::error::{Context, Error, Result};
use crate::store::Store;
use crate::Space;
use rusqlite::{params, Connection};

/// The apply rules this build follows; bumped whenever a change kind or an apply rule is added.
const RULES: i64 = 1;

/// The version of the sync reader: the schema version and the apply rules. A quarantined message
/// kept by an older reader is tried again (see [`Store::sync_quarantine_due`]).
pub const READER: i64 = crate::store::SCHEMA_VERSION * 1000 + RULES;

/// A quarantined message, as the sync status shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quarantined {
    /// The space whose stream held it.
    pub space: Space,
    /// Its stream sequence (shared by the changes of one pack).
    pub seq: i64,
    /// The transport's message id (a change's own id, also inside a pack).
    pub msg_id: String,
    /// The name of the device that wrote it (empty when it could not be read).
    pub device_name: String,
    /// Why it was kept aside.
    pub reason: QuarantineReason,
    /// When it was kept (ms since the Unix epoch).
    pub kept_at: i64,
}

/// A quarantined message to try again: its transport id and its sealed bytes, as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// Its stream sequence.
    pub seq: i64,
    /// The transport's message id (what its seal is bound to).
    pub msg_id: String,
    /// The bytes as the stream held them.
    pub sealed: Vec<u8>,
}

/// Whether a failure is the archive's (worth trying again as it is) rather than the message's.
pub(super) fn transient(e: &Error) -> bool {
    match e {
        Error::Storage(_) => true,
        #[cfg(feature = "store")]
        Error::Sqlite { source: rusqlite::Error::SqliteFailure(f, _), .. } => matches!(
            f.code,
            rusqlite::ErrorCode::DiskFull
                | rusqlite::ErrorCode::DatabaseBusy
                | rusqlite::ErrorCode::DatabaseLocked
                | rusqlite::ErrorCode::SystemIoFailure
                | rusqlite::ErrorCode::OutOfMemory
                | rusqlite::ErrorCode::CannotOpen
                | rusqlite::ErrorCode::FileLockingProtocolFailed
        ),
        _ => false,
    }
}

/// What a quarantined message is kept with.
pub(super) struct Keep<'a> {
    pub space: &'a Space,
    pub seq: i64,
    pub msg_id: &'a str,
    pub device_id: &'a str,
    pub device_name: &'a str,
    pub reason: &'a QuarantineReason,
    pub sealed: &'a [u8],
    pub at: i64,
}

/// Keeps a message aside (again: a retry that failed records the newer reader and reason).
pub(super) fn keep(conn: &Connection, k: &Keep) -> Result<()> {
    conn.execute(
        "INSERT INTO sync_quarantine
             (space, seq, msg_id, device_id, device_name, reason, detail, sealed, reader, kept_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (space, seq, msg_id) DO UPDATE SET reason = excluded.reason, detail = excluded.detail,
             reader = excluded.reader",
        params![
            k.space.key(),
            k.seq,
            k.msg_id,
            k.device_id,
            k.device_name,
            k.reason.name(),
            k.reason.detail(),
            k.sealed,
            READER,
            k.at
        ],
    )
    .context("keeping a sync message that could not be applied")
    .map(|_| ())
}

/// Forgets a quarantined message (it was applied).
pub(super) fn release(conn: &Connection, space: &Space, seq: i64, msg_id: &str) -> Result<()> {
    conn.execute(
        "DELETE FROM sync_quarantine WHERE space = ?1 AND seq = ?2 AND msg_id = ?3",
        params![space.key(), seq, msg_id],
    )
    .context("releasing a quarantined sync message")
    .map(|_| ())
}

impl Store {
    /// Every message kept aside, in every space, oldest first.
    pub fn sync_quarantined(&self) -> Result<Vec<Quarantined>> {
        self.conn
            .prepare_cached(
                "SELECT space, seq, device_name, reason, detail, kept_at, msg_id FROM sync_quarantine
                 ORDER BY kept_at, space, seq, rowid",
            )
            .and_then(|mut s| {
                s.query_map([], |r| {
                    let space: String = r.get(0)?;
                    let reason: String = r.get(3)?;
                    Ok((space, r.get(1)?, r.get(2)?, reason, r.get(4)?, r.get(5)?, r.get(6)?))
                })?
                .collect::<rusqlite::Result<Vec<(String, i64, String, String, String, i64, String)>>>()
            })
            .context("reading the sync quarantine")?
            .into_iter()
            .filter_map(|(space, seq, device_name, reason, detail, kept_at, msg_id)| {
                let space = crate::SyncScope::from_key(&space).space()?;
                Some(Ok(Quarantined {
                    space,
                    seq,
                    msg_id,
                    device_name,
                    reason: QuarantineReason::from_parts(&reason, detail),
                    kept_at,
                }))
            })
            .collect()
    }

    /// The messages of `space` kept aside by an older reader than this build's ([`READER`]): to be
    /// opened by the transport and tried again with [`Store::retry_quarantined`].
    pub fn sync_quarantine_due(&self, space: &Space) -> Result<Vec<Kept>> {
        self.conn
            .prepare_cached(
                "SELECT seq, msg_id, sealed FROM sync_quarantine WHERE space = ?1 AND reader < ?2 ORDER BY seq, rowid",
            )
            .and_then(|mut s| {
                s.query_map(params![space.key(), READER], |r| {
                    Ok(Kept { seq: r.get(0)?, msg_id: r.get(1)?, sealed: r.get(2)? })
                })?
                .collect()
            })
            .context("reading the sync quarantine")
    }
}
