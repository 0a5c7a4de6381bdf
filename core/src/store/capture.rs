//! Whether this archive's writes are captured for sync (`sync_meta.capture`): read by the writes
//! that must not be captured (a delete's copies into its forks, the stream's own changes), below both
//! the session rows and `sync/`.

use crate::error::{Context, Result};
use rusqlite::{Connection, OptionalExtension};

/// Whether changes are captured for sync now: `None` while sync is off, `Some(false)` while the
/// stream's changes are being applied.
pub(super) fn capture(conn: &Connection) -> Result<Option<bool>> {
    conn.query_row("SELECT capture FROM sync_meta", [], |r| r.get(0))
        .optional()
        .context("reading whether sync captures changes")
}

/// Switches change capture off (while applying the stream's messages) or back on.
pub(super) fn set_capture(conn: &Connection, on: bool) -> Result<()> {
    conn.execute("UPDATE sync_meta SET capture = ?1", [on]).context("switching sync capture").map(|_| ())
}
