//! The titles of conflict forks: "<parent's title> (on <device>)", following the parent's renames
//! for as long as the fork keeps a title of that form (renamed itself, it keeps its own).
//!
//! A fork's title is a function of what every device ends up with alike, so it is never sent: the
//! parent's title (or, without a parent or a title there, the conversation's first message) and the
//! fork's own title message if it has one. Each device sets it again after each batch of the stream it
//! applies ([`retitle_forks`]) and when it renames a session itself ([`rename_here`]); what it shows
//! in between (a rename of its own the stream has not ordered yet) is what every device reaches once
//! the stream has.

use crate::error::{Context, Result};
use crate::store::capture::{capture, set_capture};
use crate::store::rows;
use crate::store::sessions::{clip_title, TITLE_MAX_CHARS};
use rusqlite::{params, Connection, OptionalExtension};

/// What ends a conflict fork's title before the device's name.
const ON: &str = " (on ";

/// A conflict fork's title for a conversation titled `base` and a turn from `device`: the base cut so
/// that the device's name always fits whole (it is how the title is known as a fork's own later).
fn fork_title(base: &str, device: &str) -> String {
    let suffix = format!("{ON}{device})");
    let room = TITLE_MAX_CHARS.saturating_sub(suffix.chars().count()).max(1);
    let base = clip_title(base);
    let base = if base.chars().count() > room {
        let mut cut: String = base.chars().take(room.saturating_sub(1)).collect();
        cut.push('…');
        cut
    } else {
        base
    };
    format!("{base}{suffix}")
}

/// The device a title of the form "… (on <device>)" names; `None` for a title of another form (a
/// fork renamed by its user).
fn device_in(title: &str) -> Option<&str> {
    let (_, rest) = title.rsplit_once(ON)?;
    let device = rest.strip_suffix(')')?;
    (!device.is_empty()).then_some(device)
}

/// What a fork of `parent` is titled after: the parent's title, or when it has none (or is gone), the
/// first message of the conversation as `fork` shows it, or `arriving` (the turn that makes the fork).
fn base(conn: &Connection, parent: Option<&str>, fork: Option<&str>, arriving: Option<&str>) -> Result<String> {
    if let Some(title) = parent.map(|p| title_of(conn, p)).transpose()?.flatten().filter(|t| !t.is_empty()) {
        return Ok(title);
    }
    let first = match fork.or(parent) {
        Some(s) => match rows::gid_at(conn, s, 1).context("reading a conversation's first turn")? {
            Some(g) => conn
                .query_row("SELECT content FROM turns WHERE gid = ?1", [g], |r| r.get::<_, String>(0))
                .optional()
                .context("reading a conversation's first turn")?,
            None => None,
        },
        None => None,
    };
    let text = clip_title(first.as_deref().or(arriving).unwrap_or(""));
    Ok(if text.is_empty() { "Conversation".to_owned() } else { text })
}

/// The title of a new conflict fork of `parent` after turn `after`, started by a turn from `device`
/// whose text is `arriving`.
pub(super) fn conflict_title(
    conn: &Connection,
    parent: &str,
    after: i64,
    arriving: &str,
    device: &str,
) -> Result<String> {
    let first_of = if after >= 1 { Some(parent) } else { None };
    Ok(fork_title(&base(conn, Some(parent), first_of, Some(arriving))?, device))
}

/// Titles every conflict fork (of `parent` only, when given) after its parent, unless it was renamed
/// itself. Capture must be off: these titles are not sent.
pub(super) fn retitle_forks(conn: &Connection, parent: Option<&str>) -> Result<()> {
    let forks: Vec<(String, String, Option<String>)> = conn
        .prepare_cached(
            "SELECT s.id, s.title, s.parent_session_id FROM sessions s JOIN sync_forks f ON f.session_id = s.id
             WHERE f.first_gid IS NOT NULL AND (?1 IS NULL OR s.parent_session_id = ?1)",
        )
        .and_then(|mut s| s.query_map([parent], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect())
        .context("reading the conflict forks")?;
    for (fork, now, parent) in forks {
        let Some(device) = device_in(&now) else { continue };
        let want = fork_title(&base(conn, parent.as_deref(), Some(&fork), None)?, device);
        if want != now {
            conn.execute("UPDATE sessions SET title = ?2 WHERE id = ?1", params![fork, want])
                .context("titling a conflict fork after its parent")?;
        }
    }
    Ok(())
}

/// Renames `session_id` to `title` on this device (the rename goes out with sync on), and titles its
/// conflict forks after it without sending that: every device does so when it applies this rename.
/// Returns how many sessions were renamed (0: none with that id).
pub(in crate::store) fn rename_here(conn: &Connection, session_id: &str, title: &str) -> Result<usize> {
    let n = conn
        .execute("UPDATE sessions SET title = ?2 WHERE id = ?1", params![session_id, title])
        .context(format!("renaming session {session_id}"))?;
    if n > 0 {
        let captured = capture(conn)? == Some(true);
        if captured {
            set_capture(conn, false)?;
        }
        retitle_forks(conn, Some(session_id))?;
        if captured {
            set_capture(conn, true)?;
        }
    }
    Ok(n)
}

fn title_of(conn: &Connection, session_id: &str) -> Result<Option<String>> {
    conn.prepare_cached("SELECT title FROM sessions WHERE id = ?1")
        .and_then(|mut s| s.query_row([session_id], |r| r.get(0)).optional())
        .context("reading a session's title")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fork_title_names_its_device_whole() {
        assert_eq!(fork_title("Plan", "Laptop"), "Plan (on Laptop)");
        assert_eq!(device_in("Plan (on Laptop)"), Some("Laptop"));
        assert_eq!(device_in("Plan (on Laptop) (on Phone)"), Some("Phone"));
        assert_eq!(device_in("Plan (on My (old) phone)"), Some("My (old) phone"));
        assert_eq!(device_in("My own name"), None);
        assert_eq!(device_in("Plan (on Laptop) v2"), None);
        let long = fork_title(&"word ".repeat(40), "Laptop");
        assert_eq!(long.chars().count(), TITLE_MAX_CHARS);
        assert!(long.ends_with("… (on Laptop)"), "{long}");
        assert_eq!(device_in(&long), Some("Laptop"));
    }
}
