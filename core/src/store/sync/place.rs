//! Where a turn from the stream goes, by rules that read only what the stream already ordered:
//! after the turn its author saw before it (`prev_gid`); when that place is taken, into a conflict
//! fork started by the turn (its id from the turn's gid, titled "… (on <device>)"), where the
//! author's next turns follow it; a turn for a deleted session into the session that recovers that
//! device's turns for it, a log where each turn goes at the end. Also where a synced fork starts and
//! how a synced session field is written: what applying the stream and replaying this device's
//! pending changes (`rebase.rs`) both do, so neither imports the other.

use super::message::SessionField;
use crate::error::{Context, Result};
use crate::store::rows;
use crate::store::sessions::clip_title;
use rusqlite::{params, Connection, OptionalExtension};

/// What placing a turn reads of it.
pub(super) struct Arrival<'a> {
    /// The turn's global id.
    pub gid: &'a str,
    /// The session its author appended it to.
    pub session_id: &'a str,
    /// The turn before it as its author saw it.
    pub prev_gid: Option<&'a str>,
    /// That session's workspace.
    pub workspace: &'a str,
    /// Its text (a conflict fork at the first turn is titled from it).
    pub content: &'a str,
    /// When it was written.
    pub created_at: i64,
    /// Its author's device id and name.
    pub device_id: &'a str,
    pub device_name: &'a str,
}

/// `(session, the number the turn follows)`, creating the conflict fork or recovered session it
/// starts.
pub(super) fn place(conn: &Connection, t: &Arrival) -> Result<(String, i64)> {
    let declared = &if exists(conn, t.session_id)? { t.session_id.to_owned() } else { recovered_session(conn, t)? };
    let count = turn_count(conn, declared)?;
    if recovering(conn, declared)? {
        return Ok((declared.clone(), count));
    }
    let last = rows::gid_at(conn, declared, count).context("reading a session's last turn")?;
    if follows(last.as_deref(), t.prev_gid) {
        return Ok((declared.clone(), count));
    }
    let Some(prev) = t.prev_gid else {
        // Another first message beside the session's own.
        return Ok((conflict_fork(conn, declared, 0, t)?, 0));
    };
    let Some((owner, n)) = row_or_copy(conn, prev, declared)? else {
        // Its predecessor is gone (deleted with its session): it continues the session's end.
        return Ok((declared.clone(), count));
    };
    if owner != *declared
        && stands_for(conn, &owner)?.as_deref() == Some(declared.as_str())
        && turn_count(conn, &owner)? == n
    {
        return Ok((owner, n));
    }
    let in_declared = rows::gid_at(conn, declared, n).context("reading a session's turn")?;
    let parent = if follows(in_declared.as_deref(), Some(prev)) { declared.clone() } else { owner };
    Ok((conflict_fork(conn, &parent, n, t)?, n))
}

pub(super) fn turn_count(conn: &Connection, session_id: &str) -> Result<i64> {
    conn.prepare_cached("SELECT turn_count FROM sessions WHERE id = ?1")
        .and_then(|mut s| s.query_row([session_id], |r| r.get(0)))
        .context("counting a session's turns")
}

pub(super) fn exists(conn: &Connection, session_id: &str) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1)")
        .and_then(|mut s| s.query_row([session_id], |r| r.get(0)))
        .context("looking up a session")
}

/// The session holding turn `gid` as its own row, and the turn's number.
pub(super) fn row_of(conn: &Connection, gid: &str) -> Result<Option<(String, i64)>> {
    conn.prepare_cached("SELECT session_id, turn_number FROM turns WHERE gid = ?1")
        .and_then(|mut s| s.query_row([gid], |r| Ok((r.get(0)?, r.get(1)?))).optional())
        .context("looking up a turn by its global id")
}

/// [`row_of`], or else the copy of that turn a fork received when the turn's session was deleted
/// (`<gid>@<fork>`) where `session_id` shows it.
///
/// The copies are every gid that starts with `<gid>@`, whatever the fork's id starts with (a v7
/// id's digit, a conflict fork's or an import's letter, …): the range `<gid>@` ≤ gid < `<gid>A`,
/// since `A` is the character after `@`. (A bound of `<gid>@A` missed forks whose id starts with
/// a letter.)
fn row_or_copy(conn: &Connection, gid: &str, session_id: &str) -> Result<Option<(String, i64)>> {
    if let Some(found) = row_of(conn, gid)? {
        return Ok(Some(found));
    }
    let copies: Vec<(String, String, i64)> = conn
        .prepare_cached("SELECT gid, session_id, turn_number FROM turns WHERE gid > ?1 || '@' AND gid < ?1 || 'A'")
        .and_then(|mut s| s.query_map([gid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect())
        .context("looking up copies of a deleted turn")?;
    for (copy, owner, n) in copies {
        if rows::gid_at(conn, session_id, n).context("reading a session's turn")?.as_deref() == Some(copy.as_str()) {
            return Ok(Some((owner, n)));
        }
    }
    Ok(None)
}

/// Whether a turn whose author saw `prev` before it follows `last` (a fork's copy of a deleted
/// parent's turn, `<gid>@<fork>`, stands for the turn itself).
fn follows(last: Option<&str>, prev: Option<&str>) -> bool {
    match (last, prev) {
        (None, None) => true,
        (Some(l), Some(p)) => l == p || l.strip_prefix(p).is_some_and(|rest| rest.starts_with('@')),
        _ => false,
    }
}

/// The conflict fork a turn starts when its place after turn `after` of `parent` is taken.
fn conflict_fork(conn: &Connection, parent: &str, after: i64, t: &Arrival) -> Result<String> {
    let id =
        uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, format!("cowork-conflict\n{}", t.gid).as_bytes()).to_string();
    if exists(conn, &id)? {
        return Ok(id);
    }
    // Titled after the parent (`titles.rs`).
    let title = super::titles::conflict_title(conn, parent, after, t.content, t.device_name)?;
    let (workspace, system_prompt): (String, String) = conn
        .query_row("SELECT workspace, system_prompt FROM sessions WHERE id = ?1", [parent], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .context("reading a session to fork it")?;
    let row = crate::Session {
        title,
        system_prompt,
        turn_count: after,
        parent_session_id: Some(parent.to_owned()),
        fork_turn: Some(after),
        ..crate::store::sessions::new_session_row(id.clone(), &workspace, String::new(), t.created_at)
    };
    rows::insert_session(conn, &row).context("creating a conflict fork")?;
    conn.execute(
        "INSERT INTO sync_forks (session_id, stands_for, first_gid) VALUES (?1, ?2, ?3)",
        params![id, t.session_id, t.gid],
    )
    .context("recording a conflict fork")?;
    Ok(id)
}

/// The session that keeps a device's turns for a deleted session (created once).
fn recovered_session(conn: &Connection, t: &Arrival) -> Result<String> {
    let id = uuid::Uuid::new_v5(
        &uuid::Uuid::NAMESPACE_OID,
        format!("cowork-recovered\n{}\n{}", t.session_id, t.device_id).as_bytes(),
    )
    .to_string();
    if exists(conn, &id)? {
        return Ok(id);
    }
    let workspace = if t.workspace.is_empty() { "default" } else { t.workspace };
    let row = crate::Session {
        title: clip_title(&format!("Recovered from {}", t.device_name)),
        ..crate::store::sessions::new_session_row(id.clone(), workspace, String::new(), t.created_at)
    };
    rows::insert_session(conn, &row).context("creating a session for recovered turns")?;
    conn.execute("INSERT INTO sync_forks (session_id, stands_for) VALUES (?1, ?2)", params![id, t.session_id])
        .context("recording a recovered session")?;
    Ok(id)
}

/// Whether `session_id` is a session of recovered turns.
fn recovering(conn: &Connection, session_id: &str) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM sync_forks WHERE session_id = ?1 AND first_gid IS NULL)")
        .and_then(|mut s| s.query_row([session_id], |r| r.get(0)))
        .context("looking up a recovered session")
}

/// The session a conflict or recovered session stands in for (`None` for any other session).
fn stands_for(conn: &Connection, session_id: &str) -> Result<Option<String>> {
    conn.prepare_cached("SELECT stands_for FROM sync_forks WHERE session_id = ?1")
        .and_then(|mut s| s.query_row([session_id], |r| r.get(0)).optional())
        .context("looking up a conflict fork")
}

/// Sets a session's turn count and last activity from its turns, after sync moved some of them:
/// the same figures every device reaches by adding the turns that stayed.
pub(super) fn recount(conn: &Connection, session_id: &str) -> Result<()> {
    conn.execute(
        "UPDATE sessions SET
             turn_count = coalesce((SELECT max(turn_number) FROM turns WHERE session_id = ?1), fork_turn, 0),
             last_active_at = max(created_at, coalesce((SELECT max(created_at) FROM turns WHERE session_id = ?1), 0))
         WHERE id = ?1",
        [session_id],
    )
    .context("recounting a session's turns")
    .map(|_| ())
}

/// A session's counters after turn `number`, written at `at`, joined it.
pub(super) fn bump(conn: &Connection, session_id: &str, number: i64, at: i64) -> Result<()> {
    conn.prepare_cached(
        "UPDATE sessions SET turn_count = max(turn_count, ?2), last_active_at = max(last_active_at, ?3) WHERE id = ?1",
    )
    .and_then(|mut s| s.execute(params![session_id, number, at]))
    .context("counting a synced turn")
    .map(|_| ())
}

/// Where a synced fork starts: its parent as named when the turn there is still that turn, else
/// the session that holds that turn now (sync placed it in a conflict fork or recovered it); a
/// session of its own when the parent is gone.
pub(super) fn fork_point(
    conn: &Connection,
    parent: Option<&str>,
    fork_turn: Option<i64>,
    fork_gid: Option<&str>,
) -> Result<(Option<String>, Option<i64>)> {
    let (Some(parent), Some(k)) = (parent, fork_turn) else { return Ok((None, None)) };
    let parent_there = exists(conn, parent)?;
    if k == 0 {
        return Ok(if parent_there { (Some(parent.to_owned()), Some(0)) } else { (None, None) });
    }
    let Some(gid) = fork_gid else {
        return Ok(if parent_there { (Some(parent.to_owned()), Some(k)) } else { (None, None) });
    };
    if parent_there && rows::gid_at(conn, parent, k).context("reading where a fork starts")?.as_deref() == Some(gid) {
        return Ok((Some(parent.to_owned()), Some(k)));
    }
    Ok(match row_of(conn, gid)? {
        Some((owner, n)) => (Some(owner), Some(n)),
        None => (None, None),
    })
}

/// Writes one session field's value.
pub(super) fn write_field(conn: &Connection, session_id: &str, field: &SessionField) -> Result<()> {
    let done = match field {
        SessionField::Title(t) => conn.execute("UPDATE sessions SET title = ?2 WHERE id = ?1", params![session_id, t]),
        SessionField::Archived(a) => {
            conn.execute("UPDATE sessions SET is_archived = ?2 WHERE id = ?1", params![session_id, a])
        }
        SessionField::Model(m) => conn.execute("UPDATE sessions SET model = ?2 WHERE id = ?1", params![session_id, m]),
        SessionField::State(s) => {
            conn.execute("UPDATE sessions SET session_state = ?2 WHERE id = ?1", params![session_id, s.to_string()])
        }
        SessionField::Usage { prompt_tokens, completion_tokens } => conn.execute(
            "UPDATE sessions SET prompt_tokens = ?2, completion_tokens = ?3 WHERE id = ?1",
            params![session_id, prompt_tokens, completion_tokens],
        ),
    };
    done.context(format!("saving a synced change of session {session_id}")).map(|_| ())
}
