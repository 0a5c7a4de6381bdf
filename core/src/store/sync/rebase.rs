//! This device's changes the stream has not ordered yet ("pending") will be ordered after whatever
//! arrives now. So before the stream's messages are applied they are lifted out — their turns into
//! a holding session, their forks detached, and the conflict forks and recovered sessions only they
//! made removed — and afterwards placed again, in outbox order, by the same rules every device
//! follows when they arrive ([`super::place`]). The archive in between is exactly what the stream
//! has ordered so far.

use super::place::{bump, exists, place, recount, Arrival};
use super::{pending, SessionField, SyncDevice};
use crate::error::{Context, Error, Result};
use crate::store::rows;
use crate::store::sessions::clip_title;
use crate::Space;
use rusqlite::{params, Connection};
use std::collections::HashMap;

/// The session that holds lifted turns inside one transaction (never seen outside it).
const LIMBO: &str = "sync-limbo";

/// What was lifted: each pending fork's parent, fork turn and the gid of that turn; each lifted
/// turn's workspace.
/// Where a lifted fork started: its parent, the turn it forks after, and that turn's gid.
struct ForkPoint {
    parent: String,
    turn: i64,
    gid: Option<String>,
}

#[derive(Default)]
pub(super) struct Lifted {
    forks: HashMap<String, ForkPoint>,
    workspaces: HashMap<String, String>,
    /// Sessions sync had made for our turns alone and the values of their fields we changed since.
    made: Vec<(String, Vec<SessionField>)>,
}

/// Whether this device has turns or sessions for `space` its stream has not ordered yet.
pub(super) fn pending_any(conn: &Connection, space: &Space) -> Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sync_outbox WHERE kind IN ('turn', 'session') AND space = ?1)",
        [space.key()],
        |r| r.get(0),
    )
    .context("looking for unsynced changes")
}

/// Lifts out this device's changes for `space` that its stream has not ordered yet.
pub(super) fn lift(conn: &Connection, space: &Space) -> Result<Lifted> {
    let mut lifted = Lifted::default();
    let forks: Vec<(String, String, i64)> = conn
        .prepare_cached(
            "SELECT s.id, s.parent_session_id, s.fork_turn FROM sessions s
             JOIN sync_outbox o ON o.kind = 'session' AND o.key = s.id AND o.space = ?1
             WHERE s.parent_session_id IS NOT NULL",
        )
        .and_then(|mut s| s.query_map([space.key()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect())
        .context("finding this device's unsynced forks")?;
    for (id, parent, k) in forks {
        let gid = rows::gid_at(conn, &parent, k).context("reading where a fork starts")?;
        lifted.forks.insert(id, ForkPoint { parent, turn: k, gid });
    }
    for id in lifted.forks.keys() {
        conn.execute("UPDATE sessions SET parent_session_id = NULL, fork_turn = NULL WHERE id = ?1", [id])
            .context("detaching an unsynced fork")?;
    }
    let limbo = crate::store::sessions::new_session_row(LIMBO.to_owned(), "", String::new(), 0);
    rows::insert_session(conn, &limbo).context("making room for unsynced turns")?;
    let turns: Vec<(i64, String, String, String, i64)> = conn
        .prepare_cached(
            "SELECT t.id, t.gid, t.session_id, s.workspace, o.seq FROM turns t
             JOIN sessions s ON s.id = t.session_id
             JOIN sync_outbox o ON o.kind = 'turn' AND o.key = t.gid AND o.space = ?1",
        )
        .and_then(|mut s| {
            s.query_map([space.key()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?.collect()
        })
        .context("finding this device's unsynced turns")?;
    let mut sources: Vec<String> = Vec::new();
    for (id, gid, session, workspace, seq) in turns {
        conn.execute(
            "UPDATE turns SET sync_session = coalesce(sync_session, session_id), session_id = ?2, turn_number = ?3
             WHERE id = ?1",
            params![id, LIMBO, -seq],
        )
        .context("lifting an unsynced turn")?;
        lifted.workspaces.insert(gid, workspace);
        sources.push(session);
    }
    crate::order::sort_by(&mut sources, Ord::cmp);
    sources.dedup();
    for s in sources.iter().chain(lifted.forks.keys()) {
        recount(conn, s)?;
    }
    // Sessions sync made for our unsynced turns alone, which this lift emptied, come again if the
    // rules say so. Only those: a session sync made in another space (whose stream is not being
    // applied), or one that held no turn before, is not this lift's to remove.
    let mut made: Vec<String> = Vec::new();
    for s in &sources {
        let emptied: bool = conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM sync_forks f WHERE f.session_id = ?1)
                    AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = ?1)",
            )
            .and_then(|mut st| st.query_row([s], |r| r.get(0)))
            .context("finding sessions made for unsynced turns")?;
        if emptied {
            made.push(s.clone());
        }
    }
    for id in &made {
        conn.execute("UPDATE sessions SET parent_session_id = NULL WHERE id = ?1", [id]).context("detaching a fork")?;
    }
    for id in made {
        let mut changed = Vec::new();
        for field in ["title", "archived", "model", "state", "usage"] {
            if pending(conn, space, "session_field", &id, field)? {
                changed.extend(super::outgoing::session_field(conn, &id, field)?);
            }
        }
        drop_session(conn, &id)?;
        lifted.made.push((id, changed));
    }
    Ok(lifted)
}

/// Places again the lifted changes for `space` up to outbox sequence `upto`, in outbox order.
pub(super) fn replay(conn: &Connection, space: &Space, me: &SyncDevice, lifted: &mut Lifted, upto: i64) -> Result<()> {
    let entries: Vec<(String, String)> = conn
        .prepare_cached(
            "SELECT kind, key FROM sync_outbox
             WHERE kind IN ('session', 'turn') AND seq <= ?1 AND space = ?2 ORDER BY seq",
        )
        .and_then(|mut s| s.query_map(params![upto, space.key()], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
        .context("reading unsynced changes")?;
    for (kind, key) in entries {
        if kind == "session" {
            if let Some(at) = lifted.forks.remove(&key) {
                let (parent, k) = super::place::fork_point(conn, Some(&at.parent), Some(at.turn), at.gid.as_deref())?;
                conn.execute(
                    "UPDATE sessions SET parent_session_id = ?2, fork_turn = ?3 WHERE id = ?1",
                    params![key, parent, k],
                )
                .context("placing an unsynced fork")?;
                recount(conn, &key)?;
            }
        } else if let Some(workspace) = lifted.workspaces.remove(&key) {
            replay_turn(conn, me, &key, &workspace)?;
        }
    }
    Ok(())
}

fn replay_turn(conn: &Connection, me: &SyncDevice, gid: &str, workspace: &str) -> Result<()> {
    let (id, declared, prev, content, created_at, role): (i64, String, Option<String>, String, i64, String) = conn
        .query_row(
            "SELECT id, sync_session, prev_gid, content, created_at, role FROM turns WHERE gid = ?1 AND session_id = ?2",
            params![gid, LIMBO],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
        )
        .context("reading an unsynced turn")?;
    let arrival = Arrival {
        gid,
        session_id: &declared,
        prev_gid: prev.as_deref(),
        workspace,
        content: &content,
        created_at,
        device_id: &me.id,
        device_name: &me.name,
    };
    let (target, after) = place(conn, &arrival)?;
    conn.execute("UPDATE turns SET session_id = ?2, turn_number = ?3 WHERE id = ?1", params![id, target, after + 1])
        .context("placing an unsynced turn")?;
    bump(conn, &target, after + 1, created_at)?;
    if role == "user" {
        conn.execute(
            "UPDATE sessions SET title = ?2 WHERE id = ?1 AND title = ''",
            params![target, clip_title(&crate::title_from_message(&content))],
        )
        .context("titling a session")?;
    }
    Ok(())
}

/// Ends a lift: every lifted change was placed again, and what we changed in a session sync made
/// again is as we left it.
pub(super) fn finish(conn: &Connection, lifted: Lifted) -> Result<()> {
    for (id, fields) in lifted.made {
        if exists(conn, &id)? {
            for field in &fields {
                super::place::write_field(conn, &id, field)?;
            }
        }
    }
    let left: i64 = conn
        .query_row("SELECT count(*) FROM turns WHERE session_id = ?1", [LIMBO], |r| r.get(0))
        .context("checking unsynced turns")?;
    if left > 0 {
        return Err(Error::Invalid(format!("{left} unsynced turns could not be placed again (a bug)")));
    }
    if exists(conn, LIMBO)? {
        drop_session(conn, LIMBO)?;
    }
    Ok(())
}

/// Removes an empty session sync made, leaving no trace (no tombstone: it may come again).
fn drop_session(conn: &Connection, id: &str) -> Result<()> {
    conn.execute("DELETE FROM sessions WHERE id = ?1", [id])
        .and_then(|_| conn.execute("DELETE FROM sync_forks WHERE session_id = ?1", [id]))
        .and_then(|_| conn.execute("DELETE FROM sync_tombstones WHERE session_id = ?1", [id]))
        .context("removing a session made for unsynced turns")
        .map(|_| ())
}
