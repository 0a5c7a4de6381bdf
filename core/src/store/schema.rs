//! The archive's schema and its forward migrations, versioned with `PRAGMA user_version`.
//!
//! Each entry of [`MIGRATIONS`] takes the schema from version `i` to `i + 1`. Opening an archive runs
//! the missing ones in a single transaction; an archive newer than [`LATEST`] is refused untouched.

use super::sql_text::minified;
use crate::error::{Context, Error, Result};
use rusqlite::Connection;

/// Version 1: sessions, append-only turns with their full-text index, tool executions.
const V1: &str = r#"
CREATE TABLE sessions (
    id                TEXT PRIMARY KEY NOT NULL,
    workspace         TEXT NOT NULL,
    title             TEXT NOT NULL DEFAULT '',
    model             TEXT NOT NULL DEFAULT '',
    system_prompt     TEXT NOT NULL DEFAULT '',
    created_at        INTEGER NOT NULL,
    last_active_at    INTEGER NOT NULL,
    turn_count        INTEGER NOT NULL DEFAULT 0,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    session_state     TEXT NOT NULL DEFAULT '{}',
    parent_session_id TEXT REFERENCES sessions(id),
    fork_turn         INTEGER,
    is_archived       INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sessions_by_workspace ON sessions(workspace, last_active_at DESC);

CREATE TABLE turns (
    id           INTEGER PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES sessions(id),
    turn_number  INTEGER NOT NULL,
    role         TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content      TEXT NOT NULL,
    tool_calls   TEXT,
    tool_call_id TEXT,
    tool_name    TEXT,
    token_count  INTEGER NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('complete', 'interrupted', 'error')),
    created_at   INTEGER NOT NULL,
    metadata     TEXT,
    -- Tool names and argument values, so "src/auth.py" finds the call that read it.
    search_extra TEXT NOT NULL DEFAULT '',
    UNIQUE (session_id, turn_number)
);

-- Words, case-insensitively, diacritics folded (and, since version 13, stemmed). Identifiers and paths are found as phrases of their
-- parts: `rotate_refresh_token_v2` is indexed as rotate|refresh|token|v2, so `refresh_token` (the
-- phrase "refresh token") matches inside it. External content: the text is stored once, in `turns`.
CREATE VIRTUAL TABLE turns_fts USING fts5(
    content, search_extra,
    content = 'turns', content_rowid = 'id',
    tokenize = "unicode61 remove_diacritics 2"
);
CREATE TRIGGER turns_fts_insert AFTER INSERT ON turns BEGIN
    INSERT INTO turns_fts(rowid, content, search_extra) VALUES (new.id, new.content, new.search_extra);
END;
CREATE TRIGGER turns_fts_update AFTER UPDATE OF content, search_extra ON turns BEGIN
    INSERT INTO turns_fts(turns_fts, rowid, content, search_extra)
        VALUES ('delete', old.id, old.content, old.search_extra);
    INSERT INTO turns_fts(rowid, content, search_extra) VALUES (new.id, new.content, new.search_extra);
END;
CREATE TRIGGER turns_fts_delete AFTER DELETE ON turns BEGIN
    INSERT INTO turns_fts(turns_fts, rowid, content, search_extra)
        VALUES ('delete', old.id, old.content, old.search_extra);
END;

CREATE TABLE tool_executions (
    id          INTEGER PRIMARY KEY,
    turn_id     INTEGER NOT NULL REFERENCES turns(id),
    tool_name   TEXT NOT NULL,
    arguments   TEXT NOT NULL,
    result      TEXT NOT NULL,
    success     INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    approval    TEXT NOT NULL CHECK (approval IN ('auto', 'approved', 'denied')),
    created_at  INTEGER NOT NULL
);
CREATE INDEX tool_executions_by_name ON tool_executions(tool_name, id DESC);
CREATE INDEX tool_executions_by_turn ON tool_executions(turn_id);
"#;

/// Version 2: delegated tasks and their events, context manifests, per-model token calibration.
const V2: &str = r#"
CREATE TABLE tasks (
    task_id          TEXT PRIMARY KEY NOT NULL,
    session_id       TEXT NOT NULL REFERENCES sessions(id),
    turn_number      INTEGER NOT NULL,
    goal             TEXT NOT NULL,
    context          TEXT NOT NULL DEFAULT '',
    status           TEXT NOT NULL,
    result_delivered INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX tasks_by_session ON tasks(session_id, created_at);

CREATE TABLE task_events (
    task_id     TEXT NOT NULL REFERENCES tasks(task_id),
    seq         INTEGER NOT NULL,
    event_type  TEXT NOT NULL,
    data        TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    PRIMARY KEY (task_id, seq)
);

CREATE TABLE context_manifests (
    id               INTEGER PRIMARY KEY,
    session_id       TEXT NOT NULL REFERENCES sessions(id),
    turn_numbers     TEXT NOT NULL,
    trimmed_turns    TEXT NOT NULL DEFAULT '[]',
    state_version    INTEGER NOT NULL,
    estimated_tokens INTEGER NOT NULL,
    budget_tokens    INTEGER NOT NULL,
    usage            TEXT,
    created_at       INTEGER NOT NULL
);
CREATE INDEX context_manifests_by_session ON context_manifests(session_id, id DESC);

CREATE TABLE token_calibration (
    model           TEXT PRIMARY KEY NOT NULL,
    chars_per_token REAL NOT NULL,
    samples         INTEGER NOT NULL
);
"#;

/// Version 3: per-workspace settings (the orchestrator directory, manual approvals).
const V3: &str = r#"
CREATE TABLE workspace_settings (
    workspace        TEXT PRIMARY KEY NOT NULL,
    orchestrator_dir TEXT NOT NULL DEFAULT '',
    manual_approvals INTEGER NOT NULL DEFAULT 0,
    updated_at       INTEGER NOT NULL
);
"#;

/// Version 4: attachments. Each distinct content is stored once (`blobs`, keyed by its SHA-256), and
/// linked to the turns that carry it (`attachments`, in order) with its name, type and pixel size.
/// A blob is deleted only with the last turn that references it (`Store::delete_session`).
const V4: &str = r#"
CREATE TABLE blobs (
    sha256 TEXT PRIMARY KEY NOT NULL,
    size   INTEGER NOT NULL,
    data   BLOB NOT NULL
);

CREATE TABLE attachments (
    turn_id  INTEGER NOT NULL REFERENCES turns(id),
    position INTEGER NOT NULL,
    sha256   TEXT NOT NULL REFERENCES blobs(sha256),
    name     TEXT NOT NULL,
    mime     TEXT NOT NULL,
    size     INTEGER NOT NULL,
    kind     TEXT NOT NULL CHECK (kind IN ('image', 'text', 'file')),
    width    INTEGER,
    height   INTEGER,
    PRIMARY KEY (turn_id, position)
) WITHOUT ROWID;
CREATE INDEX attachments_by_blob ON attachments(sha256);
"#;

/// Version 5: sync (spec §14). Each turn gets a stable global id (`gid`, the same on every device) and
/// the gid of the turn before it as its author saw it (`prev_gid`); `sync_session` is the session
/// the author appended it to, kept when sync moves it into a conflict fork. Once sync is enabled
/// (`sync_meta` has its row), triggers write every archive change to `sync_outbox` in the change's
/// own transaction, and a deleted session leaves a tombstone; a delete is itself queued by
/// `Store::delete_session` and carried out when the stream orders it. Turns of older versions get
/// random gids.
const V5: &str = r#"
ALTER TABLE turns ADD COLUMN gid TEXT;
ALTER TABLE turns ADD COLUMN prev_gid TEXT;
ALTER TABLE turns ADD COLUMN sync_session TEXT;
UPDATE turns SET gid = lower(hex(randomblob(16)));
CREATE UNIQUE INDEX turns_by_gid ON turns(gid);

CREATE TABLE sync_meta (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    device_id   TEXT NOT NULL,
    device_name TEXT NOT NULL,
    -- 0 while a change from the stream is being applied: it is not ours to publish.
    capture     INTEGER NOT NULL DEFAULT 1,
    -- The last stream sequence applied, written in the same transaction as what it applied.
    cursor      INTEGER NOT NULL DEFAULT 0,
    -- The last outbox sequence the server acknowledged.
    published   INTEGER NOT NULL DEFAULT 0
);

-- Changes made on this device that the stream has not brought back yet. A row stays until its
-- message comes back from the stream, so a change still here is "ours, not yet ordered".
CREATE TABLE sync_outbox (
    seq   INTEGER PRIMARY KEY AUTOINCREMENT,
    kind  TEXT NOT NULL,
    key   TEXT NOT NULL,
    field TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sync_outbox_by_key ON sync_outbox(kind, key, field);

-- Sessions sync made itself (conflict forks, recovered turns) and the session each stands in for:
-- turns meant for that session that continue one of these go on there.
CREATE TABLE sync_forks (
    session_id TEXT PRIMARY KEY NOT NULL,
    stands_for TEXT NOT NULL,
    -- For a conflict fork: the turn that started it (its id derives from this gid).
    first_gid  TEXT
);

-- Sessions deleted on this device whose delete the stream has not ordered yet: hidden from every
-- list and read, removed when the delete comes back (so changes ordered before it still land).
CREATE TABLE sync_deleting (
    session_id TEXT PRIMARY KEY NOT NULL
);

CREATE TABLE sync_tombstones (
    session_id TEXT PRIMARY KEY NOT NULL
);

CREATE TRIGGER sync_session_added AFTER INSERT ON sessions WHEN (SELECT capture FROM sync_meta) BEGIN
    INSERT INTO sync_outbox (kind, key) VALUES ('session', new.id);
END;
CREATE TRIGGER sync_session_title AFTER UPDATE OF title ON sessions
WHEN (SELECT capture FROM sync_meta) AND new.title IS NOT old.title BEGIN
    INSERT INTO sync_outbox (kind, key, field) VALUES ('session_field', new.id, 'title');
END;
CREATE TRIGGER sync_session_archived AFTER UPDATE OF is_archived ON sessions
WHEN (SELECT capture FROM sync_meta) AND new.is_archived IS NOT old.is_archived BEGIN
    INSERT INTO sync_outbox (kind, key, field) VALUES ('session_field', new.id, 'archived');
END;
CREATE TRIGGER sync_session_model AFTER UPDATE OF model ON sessions
WHEN (SELECT capture FROM sync_meta) AND new.model IS NOT old.model BEGIN
    INSERT INTO sync_outbox (kind, key, field) VALUES ('session_field', new.id, 'model');
END;
CREATE TRIGGER sync_session_state AFTER UPDATE OF session_state ON sessions
WHEN (SELECT capture FROM sync_meta) AND new.session_state IS NOT old.session_state BEGIN
    INSERT INTO sync_outbox (kind, key, field) VALUES ('session_field', new.id, 'state');
END;
CREATE TRIGGER sync_session_usage AFTER UPDATE OF prompt_tokens, completion_tokens ON sessions
WHEN (SELECT capture FROM sync_meta)
    AND (new.prompt_tokens IS NOT old.prompt_tokens OR new.completion_tokens IS NOT old.completion_tokens) BEGIN
    INSERT INTO sync_outbox (kind, key, field) VALUES ('session_field', new.id, 'usage');
END;
CREATE TRIGGER sync_session_deleted AFTER DELETE ON sessions WHEN EXISTS (SELECT 1 FROM sync_meta) BEGIN
    INSERT OR IGNORE INTO sync_tombstones (session_id) VALUES (old.id);
    DELETE FROM sync_deleting WHERE session_id = old.id;
END;
CREATE TRIGGER sync_turn_added AFTER INSERT ON turns WHEN (SELECT capture FROM sync_meta) BEGIN
    INSERT INTO sync_outbox (kind, key) VALUES ('turn', new.gid);
END;
CREATE TRIGGER sync_turn_changed AFTER UPDATE OF content, status, metadata, tool_calls ON turns
WHEN (SELECT capture FROM sync_meta) BEGIN
    INSERT INTO sync_outbox (kind, key) VALUES ('turn_update', new.gid);
END;
CREATE TRIGGER sync_workspace_added AFTER INSERT ON workspace_settings WHEN (SELECT capture FROM sync_meta) BEGIN
    INSERT INTO sync_outbox (kind, key) VALUES ('workspace', new.workspace);
END;
CREATE TRIGGER sync_workspace_changed AFTER UPDATE ON workspace_settings WHEN (SELECT capture FROM sync_meta) BEGIN
    INSERT INTO sync_outbox (kind, key) VALUES ('workspace', new.workspace);
END;
"#;

/// Version 6: sync scopes (spec §14). A workspace syncs to the personal space, a team's space or
/// nowhere (`workspace_settings.sync_scope`: `''`, the team space's name, or `'.'` for this device
/// only). Each outbox entry names the space it goes to (`sync_outbox.space`, `''` personal), and each
/// space has its own stream cursor and publish mark (`sync_spaces`, moved from `sync_meta`). The
/// triggers read a session's space through `sync_session_space` and skip this-device-only ones.
const V6: &str = r#"
ALTER TABLE workspace_settings ADD COLUMN sync_scope TEXT NOT NULL DEFAULT '';
ALTER TABLE sync_outbox ADD COLUMN space TEXT NOT NULL DEFAULT '';
CREATE INDEX sync_outbox_by_space ON sync_outbox(space, seq);

CREATE TABLE sync_spaces (
    space     TEXT PRIMARY KEY NOT NULL,
    -- The last stream sequence applied, written in the same transaction as what it applied.
    cursor    INTEGER NOT NULL DEFAULT 0,
    -- The last outbox sequence the server acknowledged.
    published INTEGER NOT NULL DEFAULT 0
);
INSERT INTO sync_spaces (space, cursor, published) SELECT '', cursor, published FROM sync_meta;
ALTER TABLE sync_meta DROP COLUMN cursor;
ALTER TABLE sync_meta DROP COLUMN published;

CREATE VIEW sync_session_space AS
    SELECT s.id AS session_id, coalesce(w.sync_scope, '') AS space
    FROM sessions s LEFT JOIN workspace_settings w ON w.workspace = s.workspace;

DROP TRIGGER sync_session_added;
DROP TRIGGER sync_session_title;
DROP TRIGGER sync_session_archived;
DROP TRIGGER sync_session_model;
DROP TRIGGER sync_session_state;
DROP TRIGGER sync_session_usage;
DROP TRIGGER sync_turn_added;
DROP TRIGGER sync_turn_changed;
DROP TRIGGER sync_workspace_added;
DROP TRIGGER sync_workspace_changed;

CREATE TRIGGER sync_session_added AFTER INSERT ON sessions WHEN (SELECT capture FROM sync_meta) BEGIN
    INSERT INTO sync_outbox (kind, key, space)
    SELECT 'session', new.id, space FROM sync_session_space WHERE session_id = new.id AND space != '.';
END;
CREATE TRIGGER sync_session_title AFTER UPDATE OF title ON sessions
WHEN (SELECT capture FROM sync_meta) AND new.title IS NOT old.title BEGIN
    INSERT INTO sync_outbox (kind, key, field, space)
    SELECT 'session_field', new.id, 'title', space FROM sync_session_space WHERE session_id = new.id AND space != '.';
END;
CREATE TRIGGER sync_session_archived AFTER UPDATE OF is_archived ON sessions
WHEN (SELECT capture FROM sync_meta) AND new.is_archived IS NOT old.is_archived BEGIN
    INSERT INTO sync_outbox (kind, key, field, space)
    SELECT 'session_field', new.id, 'archived', space FROM sync_session_space WHERE session_id = new.id AND space != '.';
END;
CREATE TRIGGER sync_session_model AFTER UPDATE OF model ON sessions
WHEN (SELECT capture FROM sync_meta) AND new.model IS NOT old.model BEGIN
    INSERT INTO sync_outbox (kind, key, field, space)
    SELECT 'session_field', new.id, 'model', space FROM sync_session_space WHERE session_id = new.id AND space != '.';
END;
CREATE TRIGGER sync_session_state AFTER UPDATE OF session_state ON sessions
WHEN (SELECT capture FROM sync_meta) AND new.session_state IS NOT old.session_state BEGIN
    INSERT INTO sync_outbox (kind, key, field, space)
    SELECT 'session_field', new.id, 'state', space FROM sync_session_space WHERE session_id = new.id AND space != '.';
END;
CREATE TRIGGER sync_session_usage AFTER UPDATE OF prompt_tokens, completion_tokens ON sessions
WHEN (SELECT capture FROM sync_meta)
    AND (new.prompt_tokens IS NOT old.prompt_tokens OR new.completion_tokens IS NOT old.completion_tokens) BEGIN
    INSERT INTO sync_outbox (kind, key, field, space)
    SELECT 'session_field', new.id, 'usage', space FROM sync_session_space WHERE session_id = new.id AND space != '.';
END;
CREATE TRIGGER sync_turn_added AFTER INSERT ON turns WHEN (SELECT capture FROM sync_meta) BEGIN
    INSERT INTO sync_outbox (kind, key, space)
    SELECT 'turn', new.gid, space FROM sync_session_space WHERE session_id = new.session_id AND space != '.';
END;
CREATE TRIGGER sync_turn_changed AFTER UPDATE OF content, status, metadata, tool_calls ON turns
WHEN (SELECT capture FROM sync_meta) BEGIN
    INSERT INTO sync_outbox (kind, key, space)
    SELECT 'turn_update', new.gid, space FROM sync_session_space WHERE session_id = new.session_id AND space != '.';
END;
CREATE TRIGGER sync_workspace_added AFTER INSERT ON workspace_settings
WHEN (SELECT capture FROM sync_meta) AND new.sync_scope != '.' BEGIN
    INSERT INTO sync_outbox (kind, key, space) VALUES ('workspace', new.workspace, new.sync_scope);
END;
CREATE TRIGGER sync_workspace_changed AFTER UPDATE ON workspace_settings
WHEN (SELECT capture FROM sync_meta) AND new.sync_scope != '.' BEGIN
    INSERT INTO sync_outbox (kind, key, space) VALUES ('workspace', new.workspace, new.sync_scope);
END;
"#;

/// Version 7: the semantic index (recall by meaning), derived data of this device only. Vectors
/// (`semantic_vectors`, int8, per chunk of a turn, with the model that made them), the index's
/// settings and progress (`semantic_meta`: one row), and turns whose text changed after they were
/// embedded (`semantic_redo`). No sync trigger reads these tables and no export writes them; deleting
/// a turn deletes its vectors.
const V7: &str = r#"
CREATE TABLE semantic_vectors (
    turn_id INTEGER NOT NULL,
    chunk   INTEGER NOT NULL,
    model   TEXT NOT NULL,
    vec     BLOB NOT NULL,
    PRIMARY KEY (turn_id, chunk)
) WITHOUT ROWID;
CREATE TABLE semantic_meta (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    model      TEXT NOT NULL,
    enabled    INTEGER NOT NULL DEFAULT 0,
    paused     INTEGER NOT NULL DEFAULT 0,
    model_url  TEXT NOT NULL DEFAULT '',
    cursor     INTEGER NOT NULL DEFAULT 0,
    generation INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE semantic_redo (turn_id INTEGER PRIMARY KEY);
CREATE TRIGGER semantic_turn_deleted AFTER DELETE ON turns BEGIN
    DELETE FROM semantic_vectors WHERE turn_id = old.id;
    DELETE FROM semantic_redo WHERE turn_id = old.id;
    UPDATE semantic_meta SET generation = generation + 1 WHERE cursor >= old.id;
END;
CREATE TRIGGER semantic_turn_changed AFTER UPDATE OF content ON turns
WHEN EXISTS (SELECT 1 FROM semantic_meta WHERE cursor >= new.id) BEGIN
    DELETE FROM semantic_vectors WHERE turn_id = new.id;
    INSERT OR IGNORE INTO semantic_redo (turn_id) VALUES (new.id);
    UPDATE semantic_meta SET generation = generation + 1;
END;
INSERT INTO semantic_meta (id, model) VALUES (1, 'all-MiniLM-L6-v2@1');
"#;

/// Version 8: delegated tasks, their events and context manifests sync (spec §14). Triggers queue a
/// task when it is created (`task`) and when its status or delivery changes (`task_update`), each
/// event (`task_event`, its seq as the field), each manifest (`manifest`, its row id) and its usage
/// (`manifest_usage`), in the space of their session. A manifest that came from another device keeps
/// that device's key (`sync_key`), so its usage, arriving later, finds it.
const V8: &str = r#"
ALTER TABLE context_manifests ADD COLUMN sync_key TEXT;
CREATE UNIQUE INDEX context_manifests_by_sync_key ON context_manifests(sync_key) WHERE sync_key IS NOT NULL;

CREATE TRIGGER sync_task_added AFTER INSERT ON tasks WHEN (SELECT capture FROM sync_meta) BEGIN
    INSERT INTO sync_outbox (kind, key, space)
    SELECT 'task', new.task_id, space FROM sync_session_space WHERE session_id = new.session_id AND space != '.';
END;
CREATE TRIGGER sync_task_changed AFTER UPDATE OF status, result_delivered ON tasks
WHEN (SELECT capture FROM sync_meta)
    AND (new.status IS NOT old.status OR new.result_delivered IS NOT old.result_delivered) BEGIN
    INSERT INTO sync_outbox (kind, key, space)
    SELECT 'task_update', new.task_id, space FROM sync_session_space WHERE session_id = new.session_id AND space != '.';
END;
CREATE TRIGGER sync_task_event_added AFTER INSERT ON task_events WHEN (SELECT capture FROM sync_meta) BEGIN
    INSERT INTO sync_outbox (kind, key, field, space)
    SELECT 'task_event', new.task_id, new.seq, v.space FROM tasks t
        JOIN sync_session_space v ON v.session_id = t.session_id
    WHERE t.task_id = new.task_id AND v.space != '.';
END;
CREATE TRIGGER sync_manifest_added AFTER INSERT ON context_manifests WHEN (SELECT capture FROM sync_meta) BEGIN
    INSERT INTO sync_outbox (kind, key, space)
    SELECT 'manifest', new.id, space FROM sync_session_space WHERE session_id = new.session_id AND space != '.';
END;
CREATE TRIGGER sync_manifest_usage AFTER UPDATE OF usage ON context_manifests
WHEN (SELECT capture FROM sync_meta) AND new.usage IS NOT old.usage BEGIN
    INSERT INTO sync_outbox (kind, key, space)
    SELECT 'manifest_usage', new.id, space FROM sync_session_space WHERE session_id = new.session_id AND space != '.';
END;
"#;

/// Version 9: the sync quarantine. A stream message this device could not apply (one it cannot
/// read: a kind of change from a newer version, or a body it cannot parse; or one whose change was
/// refused: an attachment whose SHA-256 does not match) is kept here verbatim, still sealed as the
/// stream held it, and skipped, so the rest of the stream applies. `reader` is the sync reader
/// version that failed on it (`sync::READER`): a build with a newer reader tries it again. Device
/// data: no sync trigger reads this table and no export writes it.
const V9: &str = r#"
CREATE TABLE sync_quarantine (
    space       TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    msg_id      TEXT NOT NULL,
    device_id   TEXT NOT NULL DEFAULT '',
    device_name TEXT NOT NULL DEFAULT '',
    reason      TEXT NOT NULL,
    detail      TEXT NOT NULL,
    sealed      BLOB NOT NULL,
    reader      INTEGER NOT NULL,
    kept_at     INTEGER NOT NULL,
    PRIMARY KEY (space, seq)
);
"#;

/// Version 10: whether a fork is a version of its conversation (an edit or a regeneration, or another
/// tool's imported branch) or a fork of its own ("Fork from here"). Existing forks are classified by
/// the titles this app gave them (nothing else recorded the difference): an edit's fork was titled
/// "<parent's title> (edited)", a regeneration's "<parent's title> (regenerated)" (an untitled
/// parent's versions stayed untitled, where "Fork from here" gave " (fork)"), an imported branch
/// "<title> (branch N)". Every other fork — "Fork from here", a sync conflict fork, a fork renamed
/// since — stays a fork of its own. No sync trigger reads the column, so the migration sends nothing;
/// every device classifies the same rows alike.
const V10: &str = r#"
ALTER TABLE sessions ADD COLUMN is_version INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET is_version = 1
WHERE parent_session_id IS NOT NULL
  AND EXISTS (
    SELECT 1 FROM sessions p WHERE p.id = sessions.parent_session_id
      AND (sessions.title IN (p.title || ' (edited)', p.title || ' (regenerated)')
           OR (p.title = '' AND sessions.title = '')
           OR sessions.title GLOB '* (branch [0-9]*)')
  );
"#;

/// Version 11: the MCP servers a workspace uses (`workspace_settings.mcp_servers`, JSON of
/// `Vec<McpServer>`, empty text for none): synced and exported with the workspace's settings. Their
/// secrets are never in the archive.
const V11: &str = r#"
ALTER TABLE workspace_settings ADD COLUMN mcp_servers TEXT NOT NULL DEFAULT '';
"#;

/// Version 12: the semantic index embeds a turn's text files too (`Store::semantic_pending`); turns
/// with one that were embedded before are queued to be embedded again. Derived data: nothing is sent.
const V12: &str = r#"
INSERT OR IGNORE INTO semantic_redo (turn_id)
SELECT DISTINCT a.turn_id FROM attachments a, semantic_meta m WHERE a.kind = 'text' AND a.turn_id <= m.cursor;
"#;

/// Version 13: the full-text index stems English words (FTS5's `porter` over the same `unicode61
/// remove_diacritics 2`), so "researching" finds "research" and "researched": the index is made again
/// with the new tokenizer (same table, same triggers) and rebuilt from `turns`. Queries are stemmed
/// alike; `query.rs` widens a search-as-you-type prefix to the stems a longer word may have. On LoCoMo
/// (BENCHMARKS.md → Recall quality) it raised recall by words and by words and meaning on the tuning
/// and the held-out conversations. Derived data of this device: nothing is sent.
const V13: &str = r#"
DROP TRIGGER turns_fts_insert;
DROP TRIGGER turns_fts_update;
DROP TRIGGER turns_fts_delete;
DROP TABLE turns_fts;
CREATE VIRTUAL TABLE turns_fts USING fts5(
    content, search_extra,
    content = 'turns', content_rowid = 'id',
    tokenize = "porter unicode61 remove_diacritics 2"
);
CREATE TRIGGER turns_fts_insert AFTER INSERT ON turns BEGIN
    INSERT INTO turns_fts(rowid, content, search_extra) VALUES (new.id, new.content, new.search_extra);
END;
CREATE TRIGGER turns_fts_update AFTER UPDATE OF content, search_extra ON turns BEGIN
    INSERT INTO turns_fts(turns_fts, rowid, content, search_extra)
        VALUES ('delete', old.id, old.content, old.search_extra);
    INSERT INTO turns_fts(rowid, content, search_extra) VALUES (new.id, new.content, new.search_extra);
END;
CREATE TRIGGER turns_fts_delete AFTER DELETE ON turns BEGIN
    INSERT INTO turns_fts(turns_fts, rowid, content, search_extra)
        VALUES ('delete', old.id, old.content, old.search_extra);
END;
INSERT INTO turns_fts(turns_fts) VALUES ('rebuild');
"#;

/// Version 14: a counter of changes to turns already saved (`turn_changes.generation`), which the
/// cache of the turns context assembly read last (`turn_cache.rs`) checks before each use. Appending a
/// turn leaves it alone, and so does a reply streaming in (an interrupted turn checkpointed, then
/// finalised: the cache checks the interrupted turns it keeps itself); changing a column any other
/// turn shows, deleting a turn, changing or deleting an attachment (attachments are only ever added
/// with their turn) and moving a session's fork point bump it. Device data: no sync trigger reads it
/// and no export writes it.
const V14: &str = r#"
CREATE TABLE IF NOT EXISTS turn_changes (id INTEGER PRIMARY KEY CHECK (id = 1), generation INTEGER NOT NULL DEFAULT 0);
INSERT OR IGNORE INTO turn_changes (id) VALUES (1);
CREATE TRIGGER IF NOT EXISTS turn_changes_turn_update AFTER UPDATE OF session_id, turn_number, role, content, tool_calls,
    tool_call_id, tool_name, token_count, status, created_at, metadata ON turns WHEN old.status != 'interrupted' BEGIN
    UPDATE turn_changes SET generation = generation + 1;
END;
CREATE TRIGGER IF NOT EXISTS turn_changes_turn_delete AFTER DELETE ON turns BEGIN
    UPDATE turn_changes SET generation = generation + 1;
END;
CREATE TRIGGER IF NOT EXISTS turn_changes_attachment_update AFTER UPDATE OF turn_id, position, sha256, name, mime, size,
    kind, width, height ON attachments BEGIN
    UPDATE turn_changes SET generation = generation + 1;
END;
CREATE TRIGGER IF NOT EXISTS turn_changes_attachment_delete AFTER DELETE ON attachments BEGIN
    UPDATE turn_changes SET generation = generation + 1;
END;
CREATE TRIGGER IF NOT EXISTS turn_changes_fork AFTER UPDATE OF parent_session_id, fork_turn ON sessions BEGIN
    UPDATE turn_changes SET generation = generation + 1;
END;
"#;

/// Version 15: a message kept aside is named by its stream sequence and its id. The changes of a
/// pack (many changes sealed as one stream message) share the pack's sequence, and two of them can be
/// kept aside.
const V15: &str = r#"
CREATE TABLE sync_quarantine_15 (
    space       TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    msg_id      TEXT NOT NULL,
    device_id   TEXT NOT NULL DEFAULT '',
    device_name TEXT NOT NULL DEFAULT '',
    reason      TEXT NOT NULL,
    detail      TEXT NOT NULL,
    sealed      BLOB NOT NULL,
    reader      INTEGER NOT NULL,
    kept_at     INTEGER NOT NULL,
    PRIMARY KEY (space, seq, msg_id)
);
INSERT INTO sync_quarantine_15 SELECT space, seq, msg_id, device_id, device_name, reason, detail, sealed, reader, kept_at
    FROM sync_quarantine;
DROP TABLE sync_quarantine;
ALTER TABLE sync_quarantine_15 RENAME TO sync_quarantine;
"#;

/// Every migration, in order: `MIGRATIONS[i]` upgrades version `i` to `i + 1` (minified at compile
/// time: `sql_text.rs`).
pub const MIGRATIONS: &[&str] = &[
    minified!(V1),
    minified!(V2),
    minified!(V3),
    minified!(V4),
    minified!(V5),
    minified!(V6),
    minified!(V7),
    minified!(V8),
    minified!(V9),
    minified!(V10),
    minified!(V11),
    minified!(V12),
    minified!(V13),
    minified!(V14),
    minified!(V15),
];

/// The migrations as written, for the test that minifying them changes nothing.
#[cfg(test)]
pub const WRITTEN: &[&str] = &[V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11, V12, V13, V14, V15];

/// The schema version this build writes.
pub const LATEST: i64 = MIGRATIONS.len() as i64;

pub fn user_version(conn: &Connection) -> Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0)).context("reading the schema version")
}

/// Refuses a version this build cannot upgrade from: newer than [`LATEST`], or negative (no version
/// of Cowork writes one; a damaged header or another tool did). Check before writing anything.
pub fn check_version(found: i64) -> Result<()> {
    if found > LATEST {
        return Err(Error::SchemaTooNew { found, supported: LATEST });
    }
    if found < 0 {
        return Err(Error::SchemaInvalid { found });
    }
    Ok(())
}

/// Brings the archive up to `target` (normally [`LATEST`]) in one transaction.
///
/// Refuses, without writing anything, an archive whose version is newer than this build knows or
/// negative (see [`check_version`]).
pub fn migrate(conn: &mut Connection, target: i64) -> Result<()> {
    let found = user_version(conn)?;
    check_version(found)?;
    if found >= target {
        return Ok(());
    }
    let tx = conn.transaction().context("starting the schema upgrade")?;
    for (version, sql) in MIGRATIONS.iter().enumerate().skip(found as usize).take((target - found) as usize) {
        tx.execute_batch(sql).context(format!("upgrading the archive to schema version {}", version + 1))?;
    }
    tx.pragma_update(None, "user_version", target).context("recording the schema version")?;
    tx.commit().context("committing the schema upgrade")
}
