//! The outbox read as messages: each entry becomes the message of the row's state now (a turn with
//! its attachments and tool execution, a session with its fields), under an id that stays the same
//! when it is published again.

use super::message::{
    AttachmentRecord, SessionField, SessionRecord, SyncChange, SyncMessage, ToolExecutionRecord, TurnRecord, TurnUpdate,
};
use super::{device, mark, SyncDevice};
use crate::error::{Context, Error, Result};
use crate::store::rows::{self, session_from_row, turn_from_row, SESSION_COLS, TURN_COLS};
use crate::store::Store;
use crate::{Approval, Attachment, Space};
use base64::Engine as _;
use rusqlite::{params, Connection, OptionalExtension};

/// One outbox entry.
struct Entry {
    seq: i64,
    kind: String,
    key: String,
    field: String,
    space: String,
}

impl Store {
    /// The next messages to publish to `space` (at most `limit`), in outbox order, after the last one
    /// the server acknowledged. An entry a later entry supersedes (the same row and field, for the
    /// same space) is skipped, and one whose row is gone (its session was deleted here) is dropped:
    /// the delete's own message follows.
    pub fn sync_outgoing(&mut self, space: &Space, limit: usize) -> Result<Vec<SyncMessage>> {
        let me = device(&self.conn)?.ok_or_else(|| Error::Invalid("sync is not enabled on this archive".into()))?;
        let mut out = Vec::new();
        let mut after = mark(&self.conn, space, "published")?;
        while out.len() < limit {
            let entries = entries_after(&self.conn, space, after, 200)?;
            let Some(last) = entries.last() else { break };
            after = last.seq;
            for e in entries {
                if out.len() == limit {
                    break;
                }
                if superseded(&self.conn, &e)? {
                    continue;
                }
                match change(&self.conn, &me, &e)? {
                    Some(change) => out.push(message(&me, e.seq, change)),
                    None => {
                        self.conn
                            .execute("DELETE FROM sync_outbox WHERE seq = ?1", [e.seq])
                            .context("dropping a change whose row is gone")?;
                    }
                }
            }
        }
        Ok(out)
    }
}

fn message(me: &SyncDevice, seq: i64, change: SyncChange) -> SyncMessage {
    SyncMessage { id: format!("{}:{seq}", me.id), device_id: me.id.clone(), device_name: me.name.clone(), seq, change }
}

fn entries_after(conn: &Connection, space: &Space, after: i64, limit: i64) -> Result<Vec<Entry>> {
    conn.prepare_cached(
        "SELECT seq, kind, key, field, space FROM sync_outbox WHERE space = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
    )
    .and_then(|mut s| {
        s.query_map(params![space.key(), after, limit], |r| {
            Ok(Entry { seq: r.get(0)?, kind: r.get(1)?, key: r.get(2)?, field: r.get(3)?, space: r.get(4)? })
        })?
        .collect()
    })
    .context("reading the sync outbox")
}

/// Whether a later entry carries the same row's field (its message will hold the newer state).
/// A session's creation and a turn's addition are never superseded: they place the row.
fn superseded(conn: &Connection, e: &Entry) -> Result<bool> {
    if e.kind == "session" || e.kind == "turn" || super::records::superseding(&e.kind) == Some(false) {
        return Ok(false);
    }
    conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM sync_outbox
         WHERE kind = ?1 AND key = ?2 AND field = ?3 AND seq > ?4 AND space = ?5)",
    )
    .and_then(|mut s| s.query_row(params![e.kind, e.key, e.field, e.seq, e.space], |r| r.get(0)))
    .context("reading the sync outbox")
}

/// The message of one entry, from its row as it is now; `None` when the row is gone.
fn change(conn: &Connection, me: &SyncDevice, e: &Entry) -> Result<Option<SyncChange>> {
    Ok(match e.kind.as_str() {
        "session" => session_record(conn, &e.key)?.map(SyncChange::SessionCreated),
        "session_field" => session_field(conn, &e.key, &e.field)?
            .map(|field| SyncChange::SessionField { session_id: e.key.clone(), field }),
        "session_deleted" => Some(SyncChange::SessionDeleted { session_id: e.key.clone() }),
        "turn" => turn_record(conn, &e.key)?.map(SyncChange::TurnAdded),
        "turn_update" => turn_update(conn, &e.key)?.map(SyncChange::TurnUpdated),
        "workspace" => super::super::workspaces::get(conn, &e.key)?.map(SyncChange::Workspace),
        kind if super::records::superseding(kind).is_some() => {
            super::records::change(conn, me, kind, &e.key, &e.field)?
        }
        other => return Err(Error::Invalid(format!("the sync outbox holds an unknown kind of change {other:?}"))),
    })
}

fn session_record(conn: &Connection, id: &str) -> Result<Option<SessionRecord>> {
    // A session's last activity is its newest turn's time (or its creation) on every device that
    // receives it; one imported with a later "updated" time is brought to that rule here, as it goes.
    conn.execute(
        "UPDATE sessions SET last_active_at =
             max(created_at, coalesce((SELECT max(created_at) FROM turns WHERE session_id = ?1), 0))
         WHERE id = ?1",
        [id],
    )
    .context(format!("dating session {id} by its turns"))?;
    let Some(s) = conn
        .prepare_cached(&format!("SELECT {SESSION_COLS} FROM sessions WHERE id = ?1"))
        .and_then(|mut st| st.query_row([id], session_from_row).optional())
        .context(format!("reading session {id} to publish it"))?
    else {
        return Ok(None);
    };
    let fork_gid = match (&s.parent_session_id, s.fork_turn) {
        (Some(parent), Some(n)) => rows::gid_at(conn, parent, n).context("reading where a fork starts")?,
        _ => None,
    };
    Ok(Some(SessionRecord {
        id: s.id,
        workspace: s.workspace,
        title: s.title,
        model: s.model,
        system_prompt: s.system_prompt,
        created_at: s.created_at,
        state: s.state,
        is_archived: s.is_archived,
        prompt_tokens: s.prompt_tokens,
        completion_tokens: s.completion_tokens,
        parent_session_id: s.parent_session_id,
        fork_turn: s.fork_turn,
        fork_gid,
        is_version: s.is_version,
    }))
}

pub(super) fn session_field(conn: &Connection, id: &str, field: &str) -> Result<Option<SessionField>> {
    let sql =
        "SELECT title, is_archived, model, session_state, prompt_tokens, completion_tokens FROM sessions WHERE id = ?1";
    let row = conn
        .prepare_cached(sql)
        .and_then(|mut s| {
            s.query_row([id], |r| {
                Ok(match field {
                    "title" => Some(SessionField::Title(r.get(0)?)),
                    "archived" => Some(SessionField::Archived(r.get(1)?)),
                    "model" => Some(SessionField::Model(r.get(2)?)),
                    "state" => {
                        Some(SessionField::State(serde_json::from_str(&r.get::<_, String>(3)?).unwrap_or_default()))
                    }
                    "usage" => Some(SessionField::Usage { prompt_tokens: r.get(4)?, completion_tokens: r.get(5)? }),
                    _ => None,
                })
            })
            .optional()
        })
        .context(format!("reading session {id} to publish a change"))?;
    match row {
        Some(None) => Err(Error::Invalid(format!("the sync outbox holds an unknown session field {field:?}"))),
        Some(found) => Ok(found),
        None => Ok(None),
    }
}

fn turn_record(conn: &Connection, gid: &str) -> Result<Option<TurnRecord>> {
    let sql = format!(
        "SELECT {TURN_COLS}, t.prev_gid, t.sync_session, t.search_extra, s.workspace
         FROM turns t JOIN sessions s ON s.id = t.session_id WHERE t.gid = ?1"
    );
    let Some((turn, prev_gid, sync_session, search_extra, workspace)) = conn
        .prepare_cached(&sql)
        .and_then(|mut s| {
            s.query_row([gid], |r| {
                Ok((
                    turn_from_row(r)?,
                    r.get::<_, Option<String>>(12)?,
                    r.get::<_, Option<String>>(13)?,
                    r.get::<_, String>(14)?,
                    r.get::<_, String>(15)?,
                ))
            })
            .optional()
        })
        .context("reading a turn to publish it")?
    else {
        return Ok(None);
    };
    // Turns saved before gids existed have no prev_gid: the conversation says which it is.
    let prev_gid = match prev_gid {
        Some(p) => Some(p),
        None => rows::gid_at(conn, &turn.session_id, turn.turn_number - 1).context("reading a turn's predecessor")?,
    };
    Ok(Some(TurnRecord {
        gid: gid.to_owned(),
        session_id: sync_session.unwrap_or(turn.session_id),
        workspace,
        turn_number: turn.turn_number,
        prev_gid,
        attachments: attachments(conn, turn.id)?,
        tool_execution: tool_execution(conn, turn.id)?,
        role: turn.role,
        content: turn.content,
        tool_calls: turn.tool_calls,
        tool_call_id: turn.tool_call_id,
        tool_name: turn.tool_name,
        token_count: turn.token_count,
        status: turn.status,
        created_at: turn.created_at,
        metadata: turn.metadata,
        search_extra,
    }))
}

fn attachments(conn: &Connection, turn_id: i64) -> Result<Vec<AttachmentRecord>> {
    let sql = format!(
        "SELECT {}, b.data FROM attachments a JOIN blobs b ON b.sha256 = a.sha256 WHERE a.turn_id = ?1 ORDER BY a.position",
        rows::ATTACHMENT_COLS
    );
    conn.prepare_cached(&sql)
        .and_then(|mut s| {
            s.query_map([turn_id], |r| {
                let (_, attachment): (i64, Attachment) = rows::attachment_from_row(r)?;
                let bytes: Vec<u8> = r.get(8)?;
                Ok(AttachmentRecord { attachment, data: base64::engine::general_purpose::STANDARD.encode(bytes) })
            })?
            .collect()
        })
        .context("reading a turn's attachments to publish them")
}

fn tool_execution(conn: &Connection, turn_id: i64) -> Result<Option<ToolExecutionRecord>> {
    conn.prepare_cached(
        "SELECT tool_name, arguments, success, duration_ms, approval FROM tool_executions WHERE turn_id = ?1 ORDER BY id LIMIT 1",
    )
    .and_then(|mut s| {
        s.query_row([turn_id], |r| {
            let approval: String = r.get(4)?;
            Ok(ToolExecutionRecord {
                tool_name: r.get(0)?,
                arguments: r.get(1)?,
                success: r.get(2)?,
                duration_ms: r.get(3)?,
                approval: Approval::parse(&approval).unwrap_or(Approval::Auto),
            })
        })
        .optional()
    })
    .context("reading a tool execution to publish it")
}

fn turn_update(conn: &Connection, gid: &str) -> Result<Option<TurnUpdate>> {
    let sql = format!("SELECT {TURN_COLS}, t.search_extra FROM turns t WHERE t.gid = ?1");
    conn.prepare_cached(&sql)
        .and_then(|mut s| {
            s.query_row([gid], |r| {
                let t = turn_from_row(r)?;
                Ok(TurnUpdate {
                    gid: gid.to_owned(),
                    content: t.content,
                    tool_calls: t.tool_calls,
                    token_count: t.token_count,
                    status: t.status,
                    metadata: t.metadata,
                    search_extra: r.get(12)?,
                })
            })
            .optional()
        })
        .context("reading a turn's update to publish it")
}
