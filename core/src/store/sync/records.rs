//! Delegated tasks, their orchestrator events and context manifests in the sync log: read from the
//! archive as messages (outbox kinds `task`, `task_update`, `task_event`, `manifest`,
//! `manifest_usage`) and applied from the stream. They name turns by gid, since a turn's number and
//! even its session may differ on another device (a conflict fork, a recovered session).
//!
//! The rules: a task is the last state in stream order (this device's own status change waiting in
//! the outbox keeps its value); an event is kept once per `(task, seq)`; a manifest is kept once per
//! key, its usage the last in stream order. A task, event or manifest whose session is not here (it
//! was deleted) is dropped, as a field of a deleted session is.

use super::message::{ManifestSync, SyncChange, TaskSync};
use super::place::{exists, row_of};
use super::{pending, SyncDevice};
use crate::error::{Context, Result};
use crate::store::rows::{self, IfTaskExists, MANIFEST_COLS, TASK_COLS, TASK_EVENT_COLS};
use crate::{ContextManifest, Space, TaskEvent};
use rusqlite::{params, Connection, OptionalExtension};

/// The outbox kinds this module reads, with whether an entry is ever superseded by a later one of
/// the same row (a creation never is: it places the row before what refers to it).
pub(super) fn superseding(kind: &str) -> Option<bool> {
    match kind {
        "task" | "task_event" | "manifest" => Some(false),
        "task_update" | "manifest_usage" => Some(true),
        _ => None,
    }
}

/// The message of one outbox entry of these kinds, from the row as it is now (`None`: gone).
pub(super) fn change(
    conn: &Connection,
    me: &SyncDevice,
    kind: &str,
    key: &str,
    field: &str,
) -> Result<Option<SyncChange>> {
    Ok(match kind {
        "task" | "task_update" => task(conn, key)?.map(SyncChange::Task),
        "task_event" => task_event(conn, key, field.parse().unwrap_or(0))?.map(SyncChange::TaskEvent),
        "manifest" | "manifest_usage" => manifest(conn, me, key)?.map(SyncChange::Manifest),
        _ => None,
    })
}

fn task(conn: &Connection, task_id: &str) -> Result<Option<TaskSync>> {
    let Some(task) = conn
        .prepare_cached(&format!("SELECT {TASK_COLS} FROM tasks WHERE task_id = ?1"))
        .and_then(|mut s| s.query_row([task_id], rows::task_from_row).optional())
        .context(format!("reading task {task_id} to publish it"))?
    else {
        return Ok(None);
    };
    let turn_gid = rows::gid_at(conn, &task.session_id, task.turn_number).context("reading a task's turn")?;
    Ok(Some(TaskSync { task, turn_gid }))
}

fn task_event(conn: &Connection, task_id: &str, seq: i64) -> Result<Option<TaskEvent>> {
    conn.prepare_cached(&format!("SELECT {TASK_EVENT_COLS} FROM task_events WHERE task_id = ?1 AND seq = ?2"))
        .and_then(|mut s| s.query_row(params![task_id, seq], rows::task_event_from_row).optional())
        .context(format!("reading an event of task {task_id} to publish it"))
}

fn manifest(conn: &Connection, me: &SyncDevice, row: &str) -> Result<Option<ManifestSync>> {
    let found: Option<(ContextManifest, Option<String>)> = conn
        .prepare_cached(&format!("SELECT {MANIFEST_COLS}, sync_key FROM context_manifests WHERE id = ?1"))
        .and_then(|mut s| s.query_row([row], |r| Ok((rows::manifest_from_row(r)?, r.get(8)?))).optional())
        .context("reading a context manifest to publish it")?;
    let Some((manifest, key)) = found else { return Ok(None) };
    let gids = |numbers: &[i64]| -> Result<Vec<String>> {
        let mut out = Vec::new();
        for &n in numbers {
            out.extend(rows::gid_at(conn, &manifest.session_id, n).context("reading a manifest's turns")?);
        }
        Ok(out)
    };
    Ok(Some(ManifestSync {
        key: key.unwrap_or_else(|| format!("{}:{row}", me.id)),
        turn_gids: gids(&manifest.turn_numbers)?,
        trimmed_gids: gids(&manifest.trimmed_turns)?,
        reasoning_gids: gids(&manifest.reasoning_turns)?,
        manifest,
    }))
}

// --- applying ---------------------------------------------------------------------------------------

/// Applies another device's task, event or manifest.
pub(super) fn apply(conn: &Connection, space: &Space, change: &SyncChange) -> Result<()> {
    match change {
        SyncChange::Task(t) => apply_task(conn, space, t),
        SyncChange::TaskEvent(e) => apply_task_event(conn, e),
        SyncChange::Manifest(m) => apply_manifest(conn, m),
        _ => Ok(()),
    }
}

fn apply_task(conn: &Connection, space: &Space, t: &TaskSync) -> Result<()> {
    if pending(conn, space, "task_update", &t.task.task_id, "")? {
        return Ok(());
    }
    let mut task = t.task.clone();
    if let Some((session, number)) = match &t.turn_gid {
        Some(gid) => row_of(conn, gid)?,
        None => None,
    } {
        (task.session_id, task.turn_number) = (session, number);
    }
    if !exists(conn, &task.session_id)? {
        return Ok(());
    }
    rows::insert_task(conn, &task, IfTaskExists::UpdateStatus)
        .context(format!("saving the synced task {}", task.task_id))
}

fn apply_task_event(conn: &Connection, e: &TaskEvent) -> Result<()> {
    rows::insert_task_event_if_new(conn, e).context(format!("saving a synced event of task {}", e.task_id)).map(|_| ())
}

fn apply_manifest(conn: &Connection, m: &ManifestSync) -> Result<()> {
    let usage = rows::metadata_json(&m.manifest.usage);
    let updated = conn
        .execute("UPDATE context_manifests SET usage = ?2 WHERE sync_key = ?1", params![m.key, usage])
        .context("saving a synced manifest's usage")?;
    if updated > 0 {
        return Ok(());
    }
    // Its turns where they are here: the session of its newest turn (a fork, maybe), else its own.
    let mut places = Vec::new();
    for gid in &m.turn_gids {
        places.extend(row_of(conn, gid)?);
    }
    let session = match places.last() {
        Some((session, _)) => session.clone(),
        None => m.manifest.session_id.clone(),
    };
    if !exists(conn, &session)? {
        return Ok(());
    }
    let numbers = |gids: &[String]| numbers_in(conn, &session, gids);
    let manifest = ContextManifest {
        turn_numbers: numbers(&m.turn_gids)?,
        trimmed_turns: numbers(&m.trimmed_gids)?,
        reasoning_turns: numbers(&m.reasoning_gids)?,
        session_id: session.clone(),
        ..m.manifest.clone()
    };
    let id = rows::insert_manifest(conn, &manifest).context("saving a synced context manifest")?;
    conn.execute("UPDATE context_manifests SET sync_key = ?2 WHERE id = ?1", params![id, m.key])
        .context("keying a synced context manifest")
        .map(|_| ())
}

/// The numbers `gids` have as `session` shows them (a fork shows its parent's turns up to where it
/// starts); a turn it does not show is left out.
fn numbers_in(conn: &Connection, session: &str, gids: &[String]) -> Result<Vec<i64>> {
    let mut out = Vec::new();
    for gid in gids {
        if let Some((_, n)) = row_of(conn, gid)? {
            if rows::gid_at(conn, session, n).context("reading a session's turns")?.as_deref() == Some(gid.as_str()) {
                out.push(n);
            }
        }
    }
    Ok(out)
}

// --- this device's own, while its pending turns are lifted and placed again ---------------------------

/// Where this device's tasks and manifests point, by gid, for the sessions whose turns are about to
/// be lifted (`rebase`): placed again, a turn may get another number or go into a conflict fork.
pub(super) struct Anchors {
    tasks: Vec<(String, String)>,
    manifests: Vec<ManifestAnchor>,
}

/// A manifest of this device (its row) and its turns, trimmed turns and reasoning turns by gid.
type ManifestAnchor = (i64, Vec<String>, Vec<String>, Vec<String>);

/// Reads [`Anchors`] for the sessions that hold this device's unordered turns of `space`.
pub(super) fn anchor(conn: &Connection, space: &Space) -> Result<Anchors> {
    // A session sync made for our turns alone is removed while they are lifted, and made again when
    // they are placed: a task in it points nowhere until [`reanchor`], so the check waits for commit.
    conn.execute_batch("PRAGMA defer_foreign_keys = ON").context("deferring foreign-key checks")?;
    let sessions = "SELECT DISTINCT t.session_id FROM turns t
                    JOIN sync_outbox o ON o.kind = 'turn' AND o.key = t.gid AND o.space = ?1";
    let tasks: Vec<(String, String, i64)> = conn
        .prepare(&format!("SELECT task_id, session_id, turn_number FROM tasks WHERE session_id IN ({sessions})"))
        .and_then(|mut s| s.query_map([space.key()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect())
        .context("reading this device's tasks before placing its turns again")?;
    let mut anchors = Anchors { tasks: Vec::new(), manifests: Vec::new() };
    for (task_id, session, n) in tasks {
        if let Some(gid) = rows::gid_at(conn, &session, n).context("reading a task's turn")? {
            anchors.tasks.push((task_id, gid));
        }
    }
    let manifests: Vec<(i64, ContextManifest)> = conn
        .prepare(&format!(
            "SELECT {MANIFEST_COLS}, id FROM context_manifests WHERE sync_key IS NULL AND session_id IN ({sessions})"
        ))
        .and_then(|mut s| s.query_map([space.key()], |r| Ok((r.get(8)?, rows::manifest_from_row(r)?)))?.collect())
        .context("reading this device's manifests before placing its turns again")?;
    for (id, m) in manifests {
        let gids = |numbers: &[i64]| -> Result<Vec<String>> {
            let mut out = Vec::new();
            for &n in numbers {
                out.extend(rows::gid_at(conn, &m.session_id, n).context("reading a manifest's turns")?);
            }
            Ok(out)
        };
        anchors.manifests.push((id, gids(&m.turn_numbers)?, gids(&m.trimmed_turns)?, gids(&m.reasoning_turns)?));
    }
    Ok(anchors)
}

/// Points this device's tasks and manifests at where their turns are now.
pub(super) fn reanchor(conn: &Connection, anchors: Anchors) -> Result<()> {
    for (task_id, gid) in anchors.tasks {
        if let Some((session, n)) = row_of(conn, &gid)? {
            conn.execute(
                "UPDATE tasks SET session_id = ?2, turn_number = ?3 WHERE task_id = ?1",
                params![task_id, session, n],
            )
            .context("moving a task with its turn")?;
        }
    }
    for (id, turns, trimmed, reasoning) in anchors.manifests {
        let Some(last) = turns.last() else { continue };
        let Some((session, _)) = row_of(conn, last)? else { continue };
        let numbers = |gids: &[String]| numbers_in(conn, &session, gids);
        let m = ContextManifest {
            session_id: session.clone(),
            turn_numbers: numbers(&turns)?,
            trimmed_turns: numbers(&trimmed)?,
            reasoning_turns: numbers(&reasoning)?,
            state_version: 0,
            estimated_tokens: 0,
            budget_tokens: 0,
            usage: serde_json::Value::Null,
            created_at: 0,
        };
        rows::relocate_manifest(conn, id, &m).context("moving a context manifest with its turns")?;
    }
    Ok(())
}
