//! One place per table's rows: the columns read, the row → struct mapping and the one `INSERT` of
//! each table, with the column encodings (tool calls and JSON as text). The store and the JSONL
//! import both write through these; they fill every column themselves (ids, numbers, timestamps).
//!
//! Functions take a `&Connection`, so they work inside a transaction too (it derefs to one), and
//! return rusqlite's error: the caller says what it was doing.

use crate::{
    Approval, Attachment, AttachmentKind, ContextManifest, Role, Session, TaskEvent, TaskRecord, ToolCall,
    ToolExecution, Turn, TurnStatus,
};
use rusqlite::{params, Connection, OptionalExtension, Row};

// --- sessions --------------------------------------------------------------------------------------

/// The columns [`session_from_row`] maps, in order.
pub(super) const SESSION_COLS: &str = "id, workspace, title, model, system_prompt, created_at, last_active_at, \
     turn_count, prompt_tokens, completion_tokens, session_state, parent_session_id, fork_turn, is_archived, is_version";

/// Inserts a session with every column as given.
pub(super) fn insert_session(conn: &Connection, s: &Session) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO sessions (id, workspace, title, model, system_prompt, created_at, last_active_at, turn_count,
             prompt_tokens, completion_tokens, session_state, parent_session_id, fork_turn, is_archived, is_version)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?
    .execute(params![
        s.id,
        s.workspace,
        s.title,
        s.model,
        s.system_prompt,
        s.created_at,
        s.last_active_at,
        s.turn_count,
        s.prompt_tokens,
        s.completion_tokens,
        s.state.to_string(),
        s.parent_session_id,
        s.fork_turn,
        s.is_archived,
        s.is_version
    ])?;
    Ok(())
}

pub(super) fn session_from_row(r: &Row) -> rusqlite::Result<Session> {
    Ok(Session {
        id: r.get(0)?,
        workspace: r.get(1)?,
        title: r.get(2)?,
        model: r.get(3)?,
        system_prompt: r.get(4)?,
        created_at: r.get(5)?,
        last_active_at: r.get(6)?,
        turn_count: r.get(7)?,
        prompt_tokens: r.get(8)?,
        completion_tokens: r.get(9)?,
        state: parse_json(text_ref(r, 10)?),
        parent_session_id: r.get(11)?,
        fork_turn: r.get(12)?,
        is_archived: r.get(13)?,
        is_version: r.get(14)?,
    })
}

// --- turns -----------------------------------------------------------------------------------------

/// The columns [`turn_from_row`] maps, in order (the table is aliased `t`).
pub(super) const TURN_COLS: &str = "t.id, t.session_id, t.turn_number, t.role, t.content, t.tool_calls, \
     t.tool_call_id, t.tool_name, t.token_count, t.status, t.created_at, t.metadata";

/// Every column of a turn but its id (SQLite assigns it).
#[derive(Debug, Clone, Copy)]
pub(super) struct TurnRow<'a> {
    pub session_id: &'a str,
    pub turn_number: i64,
    pub role: Role,
    pub content: &'a str,
    pub tool_calls: &'a [ToolCall],
    pub tool_call_id: Option<&'a str>,
    pub tool_name: Option<&'a str>,
    pub token_count: i64,
    pub status: TurnStatus,
    pub created_at: i64,
    pub metadata: &'a serde_json::Value,
    /// Extra searchable text (tool names, argument values), see `turns::search_extra`.
    pub search_extra: &'a str,
    /// The turn's global id, the same on every device (sync); `None` makes a new random one.
    pub gid: Option<&'a str>,
}

/// Inserts a turn; returns its id. Its `prev_gid` is the gid of the turn before it in the session's
/// conversation (through a fork's ancestry), read here.
pub(super) fn insert_turn(conn: &Connection, t: &TurnRow) -> rusqlite::Result<i64> {
    let gid = t.gid.map_or_else(|| uuid::Uuid::now_v7().to_string(), str::to_owned);
    let prev_gid = gid_at(conn, t.session_id, t.turn_number - 1)?;
    conn.prepare_cached(
        "INSERT INTO turns (session_id, turn_number, role, content, tool_calls, tool_call_id, tool_name, token_count,
             status, created_at, metadata, search_extra, gid, prev_gid)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?
    .execute(params![
        t.session_id,
        t.turn_number,
        t.role.as_str(),
        t.content,
        tool_calls_json(t.tool_calls),
        t.tool_call_id,
        t.tool_name,
        t.token_count,
        t.status.as_str(),
        t.created_at,
        metadata_json(t.metadata),
        t.search_extra,
        gid,
        prev_gid
    ])?;
    Ok(conn.last_insert_rowid())
}

/// The gid an imported turn gets: derived from its session's id and number, so importing the same
/// file on two devices gives the same turns, not two copies.
pub(super) fn imported_gid(session_id: &str, number: i64) -> String {
    uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, format!("cowork-turn\n{session_id}\n{number}").as_bytes())
        .to_string()
}

/// The gid of turn `number` as session `session_id` shows it (its own row, or an ancestor's through
/// the fork chain); `None` for turn 0, a missing turn or one stored before gids existed.
pub(super) fn gid_at(conn: &Connection, session_id: &str, number: i64) -> rusqlite::Result<Option<String>> {
    let mut session = session_id.to_owned();
    for _ in 0..1000 {
        if number < 1 {
            return Ok(None);
        }
        let own: Option<Option<String>> = conn
            .prepare_cached("SELECT gid FROM turns WHERE session_id = ?1 AND turn_number = ?2")?
            .query_row(params![session, number], |r| r.get(0))
            .optional()?;
        if let Some(gid) = own {
            return Ok(gid);
        }
        let parent: Option<(Option<String>, Option<i64>)> = conn
            .prepare_cached("SELECT parent_session_id, fork_turn FROM sessions WHERE id = ?1")?
            .query_row([&session], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        match parent {
            Some((Some(p), Some(fork_turn))) if number <= fork_turn => session = p,
            _ => return Ok(None),
        }
    }
    Ok(None)
}

/// Copies turns `(lo, hi]` stored under `from` (with their tool executions) into `to` under the same
/// numbers: a fork keeps what it inherited when its parent is deleted. A copy's gid is derived from
/// the original's and the fork's id, so every device that applies the same delete makes the same copy.
pub(super) fn copy_turns(conn: &Connection, to: &str, from: &str, lo: i64, hi: i64) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO turns (session_id, turn_number, role, content, tool_calls, tool_call_id, tool_name,
             token_count, status, created_at, metadata, search_extra, gid, prev_gid)
         SELECT ?1, turn_number, role, content, tool_calls, tool_call_id, tool_name, token_count, status,
             created_at, metadata, search_extra, gid || '@' || ?1,
             CASE WHEN turn_number > 1 THEN prev_gid || '@' || ?1 END
         FROM turns WHERE session_id = ?2 AND turn_number > ?3 AND turn_number <= ?4",
        params![to, from, lo, hi],
    )?;
    Ok(())
}

/// The tool executions of the turns [`copy_turns`] copied, attached to the copies.
pub(super) fn copy_tool_executions(conn: &Connection, to: &str, from: &str, lo: i64, hi: i64) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO tool_executions (turn_id, tool_name, arguments, result, success, duration_ms, approval, created_at)
         SELECT c.id, e.tool_name, e.arguments, e.result, e.success, e.duration_ms, e.approval, e.created_at
         FROM tool_executions e JOIN turns p ON p.id = e.turn_id
         JOIN turns c ON c.session_id = ?1 AND c.turn_number = p.turn_number
         WHERE p.session_id = ?2 AND p.turn_number > ?3 AND p.turn_number <= ?4",
        params![to, from, lo, hi],
    )?;
    Ok(())
}

pub(super) fn turn_from_row(r: &Row) -> rusqlite::Result<Turn> {
    let status = text_ref(r, 9)?.unwrap_or_default();
    Ok(Turn {
        id: r.get(0)?,
        session_id: r.get(1)?,
        turn_number: r.get(2)?,
        role: parse_role(r, 3)?,
        content: r.get(4)?,
        tool_calls: parse_tool_calls(text_ref(r, 5)?),
        tool_call_id: r.get(6)?,
        tool_name: r.get(7)?,
        token_count: r.get(8)?,
        status: TurnStatus::parse(status).unwrap_or(TurnStatus::Error),
        created_at: r.get(10)?,
        metadata: parse_json(text_ref(r, 11)?),
        attachments: Vec::new(),
    })
}

// --- attachments and their blobs ------------------------------------------------------------------

/// The columns [`attachment_from_row`] maps, in order, after the turn id (table aliased `a`).
pub(super) const ATTACHMENT_COLS: &str = "a.turn_id, a.sha256, a.name, a.mime, a.size, a.kind, a.width, a.height";

/// Stores a content once: nothing happens when a blob with this hash is already there.
pub(super) fn insert_blob(conn: &Connection, sha256: &str, bytes: &[u8]) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT INTO blobs (sha256, size, data) VALUES (?1, ?2, ?3) ON CONFLICT(sha256) DO NOTHING")?
        .execute(params![sha256, bytes.len() as i64, bytes])?;
    Ok(())
}

/// Links an attachment (whose blob is stored) to turn `turn_id` at `position`.
pub(super) fn insert_attachment(
    conn: &Connection,
    turn_id: i64,
    position: usize,
    a: &Attachment,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO attachments (turn_id, position, sha256, name, mime, size, kind, width, height)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        turn_id,
        position as i64,
        a.sha256,
        a.name,
        a.mime,
        a.size,
        a.kind.as_str(),
        a.width,
        a.height
    ])?;
    Ok(())
}

/// The attachments of the turns [`copy_turns`] copied, linked to the copies (the blobs are shared).
pub(super) fn copy_attachments(conn: &Connection, to: &str, from: &str, lo: i64, hi: i64) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO attachments (turn_id, position, sha256, name, mime, size, kind, width, height)
         SELECT c.id, a.position, a.sha256, a.name, a.mime, a.size, a.kind, a.width, a.height
         FROM attachments a JOIN turns p ON p.id = a.turn_id
         JOIN turns c ON c.session_id = ?1 AND c.turn_number = p.turn_number
         WHERE p.session_id = ?2 AND p.turn_number > ?3 AND p.turn_number <= ?4",
        params![to, from, lo, hi],
    )?;
    Ok(())
}

/// A turn's id and one of its attachments.
pub(super) fn attachment_from_row(r: &Row) -> rusqlite::Result<(i64, Attachment)> {
    let kind: String = r.get(5)?;
    Ok((
        r.get(0)?,
        Attachment {
            sha256: r.get(1)?,
            name: r.get(2)?,
            mime: r.get(3)?,
            size: r.get(4)?,
            kind: AttachmentKind::parse(&kind).unwrap_or(AttachmentKind::File),
            width: r.get(6)?,
            height: r.get(7)?,
        },
    ))
}

// --- tool executions -------------------------------------------------------------------------------

/// The columns [`tool_execution_from_row`] maps, in order (`tool_executions e JOIN turns t`).
pub(super) const TOOL_EXECUTION_COLS: &str =
    "t.session_id, t.turn_number, e.tool_name, e.arguments, e.result, e.success, e.duration_ms, e.approval, e.created_at";

/// Every column of a tool execution but its id.
#[derive(Debug, Clone, Copy)]
pub(super) struct ToolExecutionRow<'a> {
    /// The id of the tool-result turn.
    pub turn_id: i64,
    pub tool_name: &'a str,
    pub arguments: &'a str,
    pub result: &'a str,
    pub success: bool,
    pub duration_ms: i64,
    pub approval: Approval,
    pub created_at: i64,
}

pub(super) fn insert_tool_execution(conn: &Connection, e: &ToolExecutionRow) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO tool_executions (turn_id, tool_name, arguments, result, success, duration_ms, approval, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        e.turn_id,
        e.tool_name,
        e.arguments,
        e.result,
        e.success,
        e.duration_ms,
        e.approval.as_str(),
        e.created_at
    ])?;
    Ok(())
}

pub(super) fn tool_execution_from_row(r: &Row) -> rusqlite::Result<ToolExecution> {
    let approval: String = r.get(7)?;
    Ok(ToolExecution {
        session_id: r.get(0)?,
        turn_number: r.get(1)?,
        tool_name: r.get(2)?,
        arguments: r.get(3)?,
        result: r.get(4)?,
        success: r.get(5)?,
        duration_ms: r.get(6)?,
        approval: Approval::parse(&approval).unwrap_or(Approval::Auto),
        created_at: r.get(8)?,
    })
}

// --- tasks and their events ------------------------------------------------------------------------

/// The columns [`task_from_row`] maps, in order.
pub(super) const TASK_COLS: &str =
    "task_id, session_id, turn_number, goal, context, status, result_delivered, created_at, updated_at";

/// What [`insert_task`] does when the task id is already stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IfTaskExists {
    /// Refuse (SQLite's unique-constraint error): imports never overwrite.
    Fail,
    /// Update its status, delivery flag and `updated_at`; keep the rest.
    UpdateStatus,
}

pub(super) fn insert_task(conn: &Connection, t: &TaskRecord, if_exists: IfTaskExists) -> rusqlite::Result<()> {
    let insert = "INSERT INTO tasks (task_id, session_id, turn_number, goal, context, status, result_delivered,
             created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
    let sql = match if_exists {
        IfTaskExists::Fail => insert.to_owned(),
        IfTaskExists::UpdateStatus => format!(
            "{insert} ON CONFLICT(task_id) DO UPDATE SET status = excluded.status,
                 result_delivered = excluded.result_delivered, updated_at = excluded.updated_at"
        ),
    };
    conn.prepare_cached(&sql)?.execute(params![
        t.task_id,
        t.session_id,
        t.turn_number,
        t.goal,
        t.context,
        t.status,
        t.result_delivered,
        t.created_at,
        t.updated_at
    ])?;
    Ok(())
}

pub(super) fn task_from_row(r: &Row) -> rusqlite::Result<TaskRecord> {
    Ok(TaskRecord {
        task_id: r.get(0)?,
        session_id: r.get(1)?,
        turn_number: r.get(2)?,
        goal: r.get(3)?,
        context: r.get(4)?,
        status: r.get(5)?,
        result_delivered: r.get(6)?,
        created_at: r.get(7)?,
        updated_at: r.get(8)?,
    })
}

/// The columns [`task_event_from_row`] maps, in order.
pub(super) const TASK_EVENT_COLS: &str = "task_id, seq, event_type, data, received_at";

/// The sequence number the next event of `task_id` gets.
pub(super) fn next_task_event_seq(conn: &Connection, task_id: &str) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT COALESCE(MAX(seq), 0) + 1 FROM task_events WHERE task_id = ?1")?
        .query_row([task_id], |r| r.get(0))
}

pub(super) fn insert_task_event(conn: &Connection, e: &TaskEvent) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO task_events (task_id, seq, event_type, data, received_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![e.task_id, e.seq, e.event_type, e.data, e.received_at])?;
    Ok(())
}

/// Inserts a synced event of a task stored here, unless the archive has it (`Ok(false)`: skipped).
pub(super) fn insert_task_event_if_new(conn: &Connection, e: &TaskEvent) -> rusqlite::Result<bool> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO task_events (task_id, seq, event_type, data, received_at)
         SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM tasks WHERE task_id = ?1)",
    )?
    .execute(params![e.task_id, e.seq, e.event_type, e.data, e.received_at])
    .map(|n| n > 0)
}

pub(super) fn task_event_from_row(r: &Row) -> rusqlite::Result<TaskEvent> {
    Ok(TaskEvent { task_id: r.get(0)?, seq: r.get(1)?, event_type: r.get(2)?, data: r.get(3)?, received_at: r.get(4)? })
}

// --- context manifests and calibration -------------------------------------------------------------

/// The columns [`manifest_from_row`] maps, in order.
pub(super) const MANIFEST_COLS: &str =
    "session_id, turn_numbers, trimmed_turns, state_version, estimated_tokens, budget_tokens, usage, created_at";

/// The `trimmed_turns` column: the shortened turns as a JSON array, or, when reasoning was sent back,
/// `{"trimmed": [...], "reasoning": [...]}` (the turns whose reasoning went out), which keeps the
/// table as it is; [`manifest_from_row`] reads both.
fn trimmed_column(m: &ContextManifest) -> String {
    let value = if m.reasoning_turns.is_empty() {
        serde_json::json!(m.trimmed_turns)
    } else {
        serde_json::json!({"trimmed": m.trimmed_turns, "reasoning": m.reasoning_turns})
    };
    value.to_string()
}

/// Inserts a manifest; returns its id.
pub(super) fn insert_manifest(conn: &Connection, m: &ContextManifest) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "INSERT INTO context_manifests (session_id, turn_numbers, trimmed_turns, state_version,
             estimated_tokens, budget_tokens, usage, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        m.session_id,
        serde_json::to_string(&m.turn_numbers).unwrap_or_default(),
        trimmed_column(m),
        m.state_version,
        m.estimated_tokens,
        m.budget_tokens,
        metadata_json(&m.usage),
        m.created_at
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Points manifest `id` at `m`'s session and turns (the rest of `m` is not read).
pub(super) fn relocate_manifest(conn: &Connection, id: i64, m: &ContextManifest) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE context_manifests SET session_id = ?2, turn_numbers = ?3, trimmed_turns = ?4 WHERE id = ?1",
        params![id, m.session_id, serde_json::to_string(&m.turn_numbers).unwrap_or_default(), trimmed_column(m)],
    )?;
    Ok(())
}

pub(super) fn manifest_from_row(r: &Row) -> rusqlite::Result<ContextManifest> {
    let numbers: String = r.get(1)?;
    let trimmed: serde_json::Value = serde_json::from_str(&r.get::<_, String>(2)?).unwrap_or_default();
    let numbers_in = |v: &serde_json::Value| serde_json::from_value::<Vec<i64>>(v.clone()).unwrap_or_default();
    let (trimmed_turns, reasoning_turns) = match &trimmed {
        serde_json::Value::Object(o) => (o.get("trimmed").map(numbers_in), o.get("reasoning").map(numbers_in)),
        array => (Some(numbers_in(array)), None),
    };
    Ok(ContextManifest {
        session_id: r.get(0)?,
        turn_numbers: serde_json::from_str(&numbers).unwrap_or_default(),
        trimmed_turns: trimmed_turns.unwrap_or_default(),
        reasoning_turns: reasoning_turns.unwrap_or_default(),
        state_version: r.get(3)?,
        estimated_tokens: r.get(4)?,
        budget_tokens: r.get(5)?,
        usage: parse_json(text_ref(r, 6)?),
        created_at: r.get(7)?,
    })
}

/// Inserts or replaces a model's token calibration (the table's only row writer).
pub(super) fn upsert_calibration(
    conn: &Connection,
    model: &str,
    chars_per_token: f64,
    samples: i64,
) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO token_calibration (model, chars_per_token, samples) VALUES (?1, ?2, ?3)
         ON CONFLICT(model) DO UPDATE SET chars_per_token = excluded.chars_per_token, samples = excluded.samples",
        params![model, chars_per_token, samples],
    )?;
    Ok(())
}

// --- column encodings ------------------------------------------------------------------------------

/// Tool calls in the OpenAI wire shape, as providers send them.
pub(super) fn tool_calls_json(calls: &[ToolCall]) -> Option<String> {
    if calls.is_empty() {
        return None;
    }
    let v: Vec<serde_json::Value> = calls
        .iter()
        .map(|c| {
            serde_json::json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}})
        })
        .collect();
    Some(serde_json::Value::Array(v).to_string())
}

fn parse_tool_calls(json: Option<&str>) -> Vec<ToolCall> {
    let Some(json) = json else { return Vec::new() };
    let Ok(serde_json::Value::Array(items)) = serde_json::from_str::<serde_json::Value>(json) else {
        return Vec::new();
    };
    items
        .iter()
        .map(|item| ToolCall {
            id: item["id"].as_str().unwrap_or_default().to_owned(),
            name: item["function"]["name"].as_str().unwrap_or_default().to_owned(),
            arguments: item["function"]["arguments"].as_str().unwrap_or_default().to_owned(),
        })
        .collect()
}

/// Column `i` as text borrowed from the row (`None` for NULL): read without a copy, for what is
/// parsed rather than kept.
fn text_ref<'r>(r: &'r Row, i: usize) -> rusqlite::Result<Option<&'r str>> {
    r.get_ref(i)?
        .as_str_or_null()
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e)))
}

/// Free-form JSON as stored: `NULL` for JSON null.
pub(super) fn metadata_json(v: &serde_json::Value) -> Option<String> {
    (!v.is_null()).then(|| v.to_string())
}

fn parse_json(s: Option<&str>) -> serde_json::Value {
    match s {
        // Most turns carry no metadata, or an empty object: no parser for those.
        None | Some("null") => serde_json::Value::Null,
        Some("{}") => serde_json::Value::Object(serde_json::Map::new()),
        Some(s) => serde_json::from_str(s).unwrap_or(serde_json::Value::Null),
    }
}

pub(super) fn parse_role(r: &Row, i: usize) -> rusqlite::Result<Role> {
    let s = text_ref(r, i)?.unwrap_or_default();
    Role::parse(s).ok_or_else(|| rusqlite::Error::InvalidColumnType(i, s.to_owned(), rusqlite::types::Type::Text))
}
