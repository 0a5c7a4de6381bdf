//! Attachments in the archive: a turn's files saved with it (each content once, as a blob keyed by its
//! SHA-256), read back with the turns (names, types and sizes only; never the bytes), the bytes read
//! one content at a time, the size limit, and blobs no turn references any more removed.

use std::collections::HashMap;

use super::rows::{self, attachment_from_row, ATTACHMENT_COLS};
use super::Store;
use crate::attachment::{is_sha256_hex, text_of, TEXT_INDEX_MAX_BYTES};
use crate::error::{Context, Error, Result};
use crate::{Attachment, NewAttachment, Turn};
use rusqlite::{params, Connection, OptionalExtension};

impl Store {
    /// The bytes of the attachment whose content has this SHA-256 (hex).
    pub fn attachment_bytes(&self, sha256: &str) -> Result<Vec<u8>> {
        self.conn
            .prepare_cached("SELECT data FROM blobs WHERE sha256 = ?1")
            .and_then(|mut s| s.query_row([sha256], |r| r.get::<_, Vec<u8>>(0)).optional())
            .context("reading an attachment")?
            .ok_or_else(|| Error::Invalid(format!("no attachment with SHA-256 {sha256} in the archive")))
    }

    /// How one archived content is described where a turn carries it (its first reference), if any.
    pub fn attachment_info(&self, sha256: &str) -> Result<Option<Attachment>> {
        let sql = format!("SELECT {ATTACHMENT_COLS} FROM attachments a WHERE a.sha256 = ?1 LIMIT 1");
        self.conn
            .prepare_cached(&sql)
            .and_then(|mut s| s.query_row([sha256], attachment_from_row).optional())
            .context("reading an attachment's description")
            .map(|found| found.map(|(_, a)| a))
    }

    /// Fills each turn's `attachments` (one range query per call, by turn id; no bytes are read).
    pub(super) fn fill_attachments(&self, turns: &mut [Turn]) -> Result<()> {
        let (Some(lo), Some(hi)) = (turns.iter().map(|t| t.id).min(), turns.iter().map(|t| t.id).max()) else {
            return Ok(());
        };
        let sql = format!(
            "SELECT {ATTACHMENT_COLS} FROM attachments a WHERE a.turn_id BETWEEN ?1 AND ?2 ORDER BY a.turn_id, a.position"
        );
        let found: Vec<(i64, Attachment)> = self
            .conn
            .prepare_cached(&sql)
            .and_then(|mut s| s.query_map(params![lo, hi], attachment_from_row)?.collect())
            .context("reading the turns' attachments")?;
        if found.is_empty() {
            return Ok(());
        }
        let mut by_turn: HashMap<i64, Vec<Attachment>> = HashMap::new();
        for (turn_id, a) in found {
            by_turn.entry(turn_id).or_default().push(a);
        }
        for turn in turns.iter_mut() {
            if let Some(list) = by_turn.remove(&turn.id) {
                turn.attachments = list;
            }
        }
        Ok(())
    }
}

/// Checks every attachment against `limit` (before anything is written).
pub(super) fn check_sizes(attachments: &[NewAttachment], limit: u64) -> Result<()> {
    attachments.iter().try_for_each(|a| a.check_size(limit))
}

/// A file to attach with what [`NewAttachment::examine`] found in it (hash, kind, pixel size): worked
/// out once, before the append takes the archive's write lock.
pub(super) type Examined<'a> = (&'a NewAttachment, Attachment);

/// Hashes and classifies each of `attachments` once ([`Examined`]).
pub(super) fn examine(attachments: &[NewAttachment]) -> Vec<Examined<'_>> {
    attachments.iter().map(|a| (a, a.examine())).collect()
}

/// Saves `attachments` for turn `turn_id` (each content once) and returns their descriptions.
pub(super) fn save(conn: &Connection, turn_id: i64, attachments: &[Examined<'_>]) -> Result<Vec<Attachment>> {
    for (position, (new, a)) in attachments.iter().enumerate() {
        rows::insert_blob(conn, &a.sha256, &new.bytes)
            .context(format!("saving the attachment {}", a.display_name()))?;
        rows::insert_attachment(conn, turn_id, position, a)
            .context(format!("linking the attachment {} to its turn", a.display_name()))?;
    }
    Ok(attachments.iter().map(|(_, a)| a.clone()).collect())
}

/// What of the attachments full-text search indexes: every name, and the text of text-like files (up to
/// [`TEXT_INDEX_MAX_BYTES`] each), so a word only inside an attached `.py` finds the turn.
pub(super) fn search_text(attachments: &[Examined<'_>]) -> String {
    let mut out = String::new();
    for (new, a) in attachments {
        index_one(&mut out, &new.name, a.kind, &new.bytes);
    }
    out
}

/// Adds one attachment's name (and, for a text-like file, its text) to the indexed text.
pub(super) fn index_one(out: &mut String, name: &str, kind: crate::AttachmentKind, bytes: &[u8]) {
    out.push(' ');
    out.push_str(name);
    if kind == crate::AttachmentKind::Text {
        out.push('\n');
        out.push_str(&text_of(&bytes[..bytes.len().min(TEXT_INDEX_MAX_BYTES)]));
    }
}

/// Deletes the blobs no attachment references any more (after turns were deleted).
pub(super) fn delete_orphan_blobs(conn: &Connection) -> Result<usize> {
    conn.execute("DELETE FROM blobs WHERE NOT EXISTS (SELECT 1 FROM attachments a WHERE a.sha256 = blobs.sha256)", [])
        .context("deleting attachments no turn uses any more")
}

/// Checks a hash given from outside (an export, the UI) before it is looked up.
pub fn valid_sha256(sha256: &str) -> Result<&str> {
    if is_sha256_hex(sha256) {
        Ok(sha256)
    } else {
        Err(Error::Invalid(format!("{sha256:?} is not a SHA-256 (64 lower-case hex digits)")))
    }
}
