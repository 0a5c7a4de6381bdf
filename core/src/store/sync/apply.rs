//! Applying the stream: messages in stream order, each once, in one transaction with the cursor.
//!
//! The rules every device follows, so that the same stream gives the same archive everywhere:
//! - a turn goes after the turn its author saw before it; when that place is taken (two devices
//!   appended to one session offline), the later turn in stream order starts a **conflict fork**
//!   titled "… (on <device>)", and its author's next turns follow it there (`place`);
//! - a session field (title, archived, model, state, usage) and a workspace's settings: the last
//!   in stream order wins;
//! - a delete is final; turns that arrive later for the deleted session are kept in a session
//!   "Recovered from <device>".
//!
//! This device's own changes that the stream has not ordered yet are lifted out while the others'
//! are applied and placed again after them (`rebase`); a field we changed and the stream has not
//! ordered yet keeps our value (ours will come later and win). Our own messages coming back only
//! confirm them, and carry out our deletes where the stream ordered them.

use super::index_later::{IndexLater, Triggers};
use super::message::{
    QuarantineReason, Received, SessionField, SessionRecord, SyncChange, SyncMessage, TurnRecord, TurnUpdate,
    Unreadable,
};
use super::place::{bump, exists, fork_point, place, row_of, write_field, Arrival};
use super::quarantine;
use super::{device, pending, rebase, set_capture};
use crate::error::{Context, Error, Result};
use crate::store::rows::{self, TurnRow};
use crate::store::sessions::{clip_title, delete_in};
use crate::store::Store;
use crate::Space;
use base64::Engine as _;
use rusqlite::{params, Connection, TransactionBehavior};

impl Store {
    /// Applies the message at sequence `stream_seq` of `space`'s stream (see [`Store::apply_sync_batch`]).
    pub fn apply_sync(&mut self, space: &Space, stream_seq: i64, msg: &SyncMessage) -> Result<Applied> {
        self.apply_sync_batch(space, &[(stream_seq, msg.clone())])
    }

    /// Applies `space`'s stream messages `(sequence, message)`, in order, in one transaction: a
    /// sequence at or below the space's cursor is skipped, and the cursor is saved with the changes.
    /// This device's own messages only confirm (they leave the outbox). A message whose change is
    /// refused is quarantined (kept as its JSON) and the rest applies. Returns what changed.
    ///
    /// Each space is a stream of its own with its own order; a session belongs to one space at a
    /// time (its workspace's), so only this space's pending changes are lifted and placed again.
    pub fn apply_sync_batch(&mut self, space: &Space, batch: &[(i64, SyncMessage)]) -> Result<Applied> {
        let items: Vec<(i64, Incoming)> = batch.iter().map(|(seq, m)| (*seq, Incoming::Change(m))).collect();
        let mut sealed = |i: usize| serde_json::to_vec(&batch[i].1).unwrap_or_default();
        let now = self.tick();
        apply(&mut self.conn, space, &items, &mut sealed, Mode::Stream, now)
    }

    /// Applies `space`'s stream messages as the transport delivered them: each read, or not
    /// readable by this version. As [`Store::apply_sync_batch`], and every message that cannot be
    /// applied (unreadable, or its change refused) is quarantined with the bytes `sealed(i)` gives
    /// for the batch's `i`-th message (what the stream held, still sealed), skipped, and counted in
    /// [`Applied::quarantined`]; the rest of the batch applies. A failure of the archive itself
    /// (storage full …) rolls the batch back whole, to be tried again.
    pub fn apply_sync_received(
        &mut self,
        space: &Space,
        batch: &[(i64, Received)],
        sealed: &mut dyn FnMut(usize) -> Vec<u8>,
    ) -> Result<Applied> {
        let items: Vec<(i64, Incoming)> = batch
            .iter()
            .map(|(seq, r)| {
                (
                    *seq,
                    match r {
                        Received::Change(m) => Incoming::Change(m),
                        Received::Unreadable(u) => Incoming::Unreadable(u),
                    },
                )
            })
            .collect();
        let now = self.tick();
        apply(&mut self.conn, space, &items, sealed, Mode::Stream, now)
    }

    /// Tries again the quarantined message `msg_id` at sequence `seq` of `space`, as this build reads
    /// it now (`received`: from its sealed bytes, opened again by the transport). Applied after
    /// everything the stream brought since (it cannot go back to its place), it leaves the
    /// quarantine; otherwise it stays, under this build's reader and the reason now. Returns the
    /// reason it stays for, `None` when it was applied.
    pub fn retry_quarantined(
        &mut self,
        space: &Space,
        seq: i64,
        msg_id: &str,
        received: &Received,
    ) -> Result<Option<QuarantineReason>> {
        let item = match received {
            Received::Change(m) => Incoming::Change(m),
            Received::Unreadable(u) => Incoming::Unreadable(u),
        };
        let now = self.tick();
        let applied = apply(&mut self.conn, space, &[(seq, item)], &mut |_| Vec::new(), Mode::Retry(msg_id), now)?;
        if applied.quarantined == 0 {
            return Ok(None);
        }
        Ok(self
            .sync_quarantined()?
            .into_iter()
            .find(|q| q.space == *space && q.seq == seq && q.msg_id == msg_id)
            .map(|q| q.reason))
    }

    /// The turns with these gids as they are stored now (a synced turn's place, for the UI).
    pub fn turns_by_gid(&self, gids: &[String]) -> Result<Vec<crate::Turn>> {
        let mut out = Vec::new();
        for gid in gids {
            let found: Option<(String, i64)> = super::place::row_of(&self.conn, gid)?;
            if let Some((session, n)) = found {
                out.extend(self.turns_range(&session, n, n)?);
            }
        }
        Ok(out)
    }
}

/// What applying the stream changed here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// How many of the messages were other devices' changes (0: only confirmations of ours).
    pub changes: usize,
    /// The gids of the turns other devices added.
    pub turns: Vec<String>,
    /// The sessions deleted.
    pub deleted: Vec<String>,
    /// How many messages were kept aside (quarantined) instead of applied.
    pub quarantined: usize,
}

/// One message of a batch, as applying reads it.
enum Incoming<'a> {
    Change(&'a SyncMessage),
    Unreadable(&'a Unreadable),
}

/// Applying the stream in its order, or trying the quarantined message with this id again out of it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode<'a> {
    Stream,
    Retry(&'a str),
}

impl<'a> Mode<'a> {
    /// The id a message is kept aside under: the kept one's when trying it again, else its own.
    fn id<'b>(self, own: &'b str) -> &'b str
    where
        'a: 'b,
    {
        match self {
            Mode::Retry(id) => id,
            Mode::Stream => own,
        }
    }
}

/// The transaction of [`Store::apply_sync_received`] and [`Store::retry_quarantined`].
///
/// A batch is first applied in one go. Only when a change in it is refused is that transaction rolled
/// back and the batch applied again with each message in a savepoint of its own, so that the refused
/// one is set aside alone: applying is deterministic, so both ways give the same archive. (A savepoint
/// makes FTS5 write what it has indexed so far as a segment of its own, and then merge those tiny
/// segments: one per message took most of a first sync's time.)
fn apply(
    conn: &mut Connection,
    space: &Space,
    batch: &[(i64, Incoming)],
    sealed: &mut dyn FnMut(usize) -> Vec<u8>,
    mode: Mode,
    now: i64,
) -> Result<Applied> {
    let me = device(conn)?.ok_or_else(|| Error::Invalid("sync is not enabled on this archive".into()))?;
    let batch = Batch { space, items: batch, mode, now };
    match attempt(conn, &me, &batch, sealed, false)? {
        Some(applied) => Ok(applied),
        None => Ok(attempt(conn, &me, &batch, sealed, true)?.expect("a careful attempt sets refused changes aside")),
    }
}

/// What [`apply`] applies.
struct Batch<'a> {
    space: &'a Space,
    items: &'a [(i64, Incoming<'a>)],
    mode: Mode<'a>,
    now: i64,
}

/// One transaction of [`apply`]: `careful`, each message in a savepoint of its own and a refused
/// change quarantined; otherwise the whole batch at once, and `None` (nothing written) as soon as a
/// change is refused.
fn attempt(
    conn: &mut Connection,
    me: &super::SyncDevice,
    batch: &Batch,
    sealed: &mut dyn FnMut(usize) -> Vec<u8>,
    careful: bool,
) -> Result<Option<Applied>> {
    let Batch { space, items: batch, mode, now } = *batch;
    let tx =
        conn.transaction_with_behavior(TransactionBehavior::Immediate).context("starting to apply synced changes")?;
    let mut cursor = super::mark(&tx, space, "cursor")?;
    let fresh: Vec<(usize, &(i64, Incoming))> =
        batch.iter().enumerate().filter(|(_, (seq, _))| mode != Mode::Stream || *seq > cursor).collect();
    if fresh.is_empty() {
        return Ok(Some(Applied::default()));
    }
    set_capture(&tx, false)?;
    // Our pending changes are lifted out only when others' changes (or our own deletes, carried out
    // where the stream put them) come in between: a batch that only confirms our own changes leaves
    // them in place. A device sending its whole archive reads it back in batches, and lifting every
    // still-unconfirmed turn for each would take time quadratic in the archive.
    let reorders = |m: &Incoming| match m {
        Incoming::Change(m) => m.device_id != me.id || matches!(m.change, SyncChange::SessionDeleted { .. }),
        Incoming::Unreadable(_) => false,
    };
    let lift = fresh.iter().any(|(_, (_, m))| reorders(m)) && rebase::pending_any(&tx, space)?;
    let anchors = if lift { Some(super::records::anchor(&tx, space)?) } else { None };
    let mut lifted = if lift { Some(rebase::lift(&tx, space)?) } else { None };
    let mut applied = Applied::default();
    // Runs of added turns are indexed for search at their end (`index_later`).
    let triggers = Triggers(&tx);
    let mut later = IndexLater::default();
    for (i, (seq, item)) in fresh {
        let msg = match item {
            Incoming::Change(msg) if msg.device_id == me.id && mode == Mode::Stream => {
                later.finish(&tx)?;
                if let Some(l) = lifted.as_mut() {
                    rebase::replay(&tx, space, me, l, msg.seq)?;
                }
                tx.execute("DELETE FROM sync_outbox WHERE seq <= ?1 AND space = ?2", params![msg.seq, space.key()])
                    .context("confirming our own changes")?;
                // Our delete is carried out where the stream ordered it, as on every other device.
                if let SyncChange::SessionDeleted { session_id } = &msg.change {
                    delete_session(&tx, session_id)?;
                }
                cursor = *seq;
                continue;
            }
            Incoming::Change(msg) => msg,
            Incoming::Unreadable(u) => {
                let keep = quarantine::Keep {
                    space,
                    seq: *seq,
                    msg_id: mode.id(&u.msg_id),
                    device_id: &u.device_id,
                    device_name: &u.device_name,
                    reason: &u.reason,
                    sealed: &sealed(i),
                    at: now,
                };
                quarantine::keep(&tx, &keep)?;
                applied.quarantined += 1;
                cursor = *seq;
                continue;
            }
        };
        if matches!(msg.change, SyncChange::TurnAdded(_)) {
            later.start(&tx)?;
        } else {
            later.finish(&tx)?;
        }
        let mark = later.len();
        // Carefully, each message in a savepoint of its own: one whose change is refused is rolled
        // back alone.
        if careful {
            tx.execute_batch("SAVEPOINT sync_message").context("applying a synced change")?;
        }
        match apply_change(&tx, space, msg, &mut later) {
            Ok(()) => {
                if careful {
                    tx.execute_batch("RELEASE sync_message").context("applying a synced change")?;
                }
                if let Mode::Retry(id) = mode {
                    quarantine::release(&tx, space, *seq, id)?;
                }
                applied.changes += 1;
                match &msg.change {
                    SyncChange::TurnAdded(t) => applied.turns.push(t.gid.clone()),
                    SyncChange::SessionDeleted { session_id } => applied.deleted.push(session_id.clone()),
                    _ => {}
                }
            }
            Err(e) if quarantine::transient(&e) => return Err(e),
            // Rolled back whole (the transaction is dropped), to be applied again carefully.
            Err(_) if !careful => return Ok(None),
            Err(e) => {
                tx.execute_batch("ROLLBACK TO sync_message; RELEASE sync_message")
                    .context("setting aside a synced change")?;
                later.forget_after(mark);
                let reason = QuarantineReason::Refused(e.to_string());
                let keep = quarantine::Keep {
                    space,
                    seq: *seq,
                    msg_id: mode.id(&msg.id),
                    device_id: &msg.device_id,
                    device_name: &msg.device_name,
                    reason: &reason,
                    sealed: &sealed(i),
                    at: now,
                };
                quarantine::keep(&tx, &keep)?;
                applied.quarantined += 1;
            }
        }
        cursor = cursor.max(*seq);
    }
    later.finish(&tx)?;
    drop(triggers);
    if let Some(mut l) = lifted {
        rebase::replay(&tx, space, me, &mut l, i64::MAX)?;
        rebase::finish(&tx, l)?;
    }
    if let Some(anchors) = anchors {
        super::records::reanchor(&tx, anchors)?;
    }
    super::titles::retitle_forks(&tx, None)?;
    set_capture(&tx, true)?;
    if mode == Mode::Stream {
        tx.execute(
            "INSERT INTO sync_spaces (space, cursor) VALUES (?1, ?2)
             ON CONFLICT (space) DO UPDATE SET cursor = excluded.cursor",
            params![space.key(), cursor],
        )
        .context("saving the sync cursor")?;
    }
    tx.commit().context("committing synced changes")?;
    Ok(Some(applied))
}

fn apply_change<'a>(conn: &Connection, space: &Space, msg: &'a SyncMessage, later: &mut IndexLater<'a>) -> Result<()> {
    match &msg.change {
        SyncChange::SessionCreated(rec) => create_session(conn, rec),
        SyncChange::SessionField { session_id, field } => set_field(conn, space, session_id, field),
        SyncChange::SessionDeleted { session_id } => delete_session(conn, session_id),
        SyncChange::TurnAdded(rec) => add_turn(conn, msg, rec, later),
        SyncChange::TurnUpdated(u) => update_turn(conn, space, u),
        SyncChange::Workspace(ws) => {
            if !pending(conn, space, "workspace", &ws.workspace, "")? {
                crate::store::workspaces::upsert(conn, ws).context("saving synced workspace settings")?;
            }
            Ok(())
        }
        SyncChange::Task(_) | SyncChange::TaskEvent(_) | SyncChange::Manifest(_) => {
            super::records::apply(conn, space, &msg.change)
        }
    }
}

// --- sessions ---------------------------------------------------------------------------------------

fn deleted(conn: &Connection, session_id: &str) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM sync_tombstones WHERE session_id = ?1)")
        .and_then(|mut s| s.query_row([session_id], |r| r.get(0)))
        .context("looking up a deleted session")
}

fn create_session(conn: &Connection, rec: &SessionRecord) -> Result<()> {
    if exists(conn, &rec.id)? || deleted(conn, &rec.id)? {
        return Ok(());
    }
    let (parent, fork_turn) =
        fork_point(conn, rec.parent_session_id.as_deref(), rec.fork_turn, rec.fork_gid.as_deref())?;
    let row = crate::Session {
        id: rec.id.clone(),
        workspace: rec.workspace.clone(),
        title: rec.title.clone(),
        model: rec.model.clone(),
        system_prompt: rec.system_prompt.clone(),
        created_at: rec.created_at,
        last_active_at: rec.created_at,
        turn_count: fork_turn.unwrap_or(0),
        prompt_tokens: rec.prompt_tokens,
        completion_tokens: rec.completion_tokens,
        state: rec.state.clone(),
        parent_session_id: parent.clone(),
        fork_turn,
        is_archived: rec.is_archived,
        // A version whose parent is gone here is a session of its own.
        is_version: rec.is_version && parent.is_some(),
    };
    rows::insert_session(conn, &row).context(format!("adding the synced session {}", rec.id))
}

fn set_field(conn: &Connection, space: &Space, session_id: &str, field: &SessionField) -> Result<()> {
    if !exists(conn, session_id)? || pending(conn, space, "session_field", session_id, field.name())? {
        return Ok(());
    }
    write_field(conn, session_id, field)
}

fn delete_session(conn: &Connection, session_id: &str) -> Result<()> {
    if exists(conn, session_id)? {
        delete_in(conn, session_id)
    } else {
        conn.execute("INSERT OR IGNORE INTO sync_tombstones (session_id) VALUES (?1)", [session_id])
            .context("recording a deleted session")
            .map(|_| ())
    }
}

// --- turns ------------------------------------------------------------------------------------------

fn add_turn<'a>(conn: &Connection, msg: &SyncMessage, rec: &'a TurnRecord, later: &mut IndexLater<'a>) -> Result<()> {
    if row_of(conn, &rec.gid)?.is_some() {
        return Ok(());
    }
    let arrival = Arrival {
        gid: &rec.gid,
        session_id: &rec.session_id,
        prev_gid: rec.prev_gid.as_deref(),
        workspace: &rec.workspace,
        content: &rec.content,
        created_at: rec.created_at,
        device_id: &msg.device_id,
        device_name: &msg.device_name,
    };
    let (target, after) = place(conn, &arrival)?;
    insert(conn, &target, after + 1, rec, later)
}

fn insert<'a>(
    conn: &Connection,
    session_id: &str,
    number: i64,
    rec: &'a TurnRecord,
    later: &mut IndexLater<'a>,
) -> Result<()> {
    let row = TurnRow {
        session_id,
        turn_number: number,
        role: rec.role,
        content: &rec.content,
        tool_calls: &rec.tool_calls,
        tool_call_id: rec.tool_call_id.as_deref(),
        tool_name: rec.tool_name.as_deref(),
        token_count: rec.token_count,
        status: rec.status,
        created_at: rec.created_at,
        metadata: &rec.metadata,
        search_extra: &rec.search_extra,
        gid: Some(&rec.gid),
    };
    let id = rows::insert_turn(conn, &row).context(format!("adding a synced turn to session {session_id}"))?;
    if later.running() {
        later.add(id, &rec.content, &rec.search_extra);
    }
    if session_id != rec.session_id {
        conn.execute("UPDATE turns SET sync_session = ?2 WHERE id = ?1", params![id, rec.session_id])
            .context("recording where a synced turn was meant to go")?;
    }
    bump(conn, session_id, number, rec.created_at)?;
    if rec.role == crate::Role::User {
        conn.prepare_cached("UPDATE sessions SET title = ?2 WHERE id = ?1 AND title = ''")
            .and_then(|mut s| s.execute(params![session_id, clip_title(&crate::title_from_message(&rec.content))]))
            .context("titling a synced session")?;
    }
    for (position, a) in rec.attachments.iter().enumerate() {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&a.data)
            .map_err(|e| Error::Invalid(format!("a synced attachment's content is not base64: {e}")))?;
        if crate::attachment::sha256_hex(&bytes) != a.attachment.sha256 {
            return Err(Error::Invalid(format!(
                "the synced attachment {} does not match its SHA-256",
                a.attachment.display_name()
            )));
        }
        rows::insert_blob(conn, &a.attachment.sha256, &bytes).context("saving a synced attachment")?;
        rows::insert_attachment(conn, id, position, &a.attachment).context("linking a synced attachment")?;
    }
    if let Some(e) = &rec.tool_execution {
        let row = rows::ToolExecutionRow {
            turn_id: id,
            tool_name: &e.tool_name,
            arguments: &e.arguments,
            result: &rec.content,
            success: e.success,
            duration_ms: e.duration_ms,
            approval: e.approval,
            created_at: rec.created_at,
        };
        rows::insert_tool_execution(conn, &row).context("recording a synced tool execution")?;
    }
    Ok(())
}

fn update_turn(conn: &Connection, space: &Space, u: &TurnUpdate) -> Result<()> {
    if pending(conn, space, "turn_update", &u.gid, "")? {
        return Ok(());
    }
    conn.execute(
        "UPDATE turns SET content = ?2, tool_calls = ?3, token_count = ?4, status = ?5, metadata = ?6, search_extra = ?7
         WHERE gid = ?1",
        params![
            u.gid,
            u.content,
            rows::tool_calls_json(&u.tool_calls),
            u.token_count,
            u.status.as_str(),
            rows::metadata_json(&u.metadata),
            u.search_extra
        ],
    )
    .context("saving a synced update of a turn")
    .map(|_| ())
}
