//! The store suite on native SQLite, plus what only a native run can do: files on disk, fixtures,
//! property tests.
#![cfg(not(target_arch = "wasm32"))]

mod suite;

use cowork_core::store::{NewSession, Store, SCHEMA_VERSION};
use cowork_core::{Error, NewTurn, Role, SearchQuery, SearchScope, ToolCall, TurnStatus};
use proptest::prelude::*;
use std::path::PathBuf;

macro_rules! native {
    ($($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                let mut store = Store::open_in_memory().expect("open an in-memory archive");
                suite::$case(&mut store);
            }
        )*
    };
}
store_cases!(native);

macro_rules! listed {
    ($($case:ident),* $(,)?) => {
        /// The cases `store_cases!` lists, which both runners run.
        const LISTED: &[&str] = &[$(stringify!($case)),*];
    };
}
store_cases!(listed);

/// A case is a function of the suite that takes only the store: `fn name(store: &mut Store)`, nothing
/// returned. Each must be in `store_cases!`, or it would run on neither backend; and both runners must
/// run that list.
#[test]
fn every_case_of_the_suite_is_listed_and_runs_on_both_backends() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("suite"))
        .expect("read core/tests/suite")
        .map(|e| e.expect("a suite file").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read a suite file");
        for (n, line) in text.lines().enumerate() {
            let Some(rest) = line.trim_start().trim_start_matches("pub ").strip_prefix("fn ") else { continue };
            let Some((name, params)) = rest.split_once('(') else { continue };
            let Some((params, after)) = params.split_once(')') else { continue };
            let takes_only_the_store = params.split_once(':').is_some_and(|(_, ty)| ty.trim() == "&mut Store");
            if takes_only_the_store && after.trim() == "{" {
                let file = file.file_name().unwrap_or_default().to_string_lossy();
                cases.push((name.to_owned(), format!("core/tests/suite/{file}:{}", n + 1)));
            }
        }
    }
    assert!(
        cases.len() >= LISTED.len(),
        "found only {} cases in {files:?}: has the suite's form changed?",
        cases.len()
    );
    let unlisted: Vec<String> = cases
        .iter()
        .filter(|(name, _)| !LISTED.contains(&name.as_str()))
        .map(|(name, at)| format!("{name} ({at})"))
        .collect();
    assert!(
        unlisted.is_empty(),
        "these store suite cases are not in `store_cases!` (core/tests/suite/mod.rs), so neither backend runs \
         them; add each to the list:\n  {}",
        unlisted.join("\n  ")
    );
    for runner in ["store_native.rs", "store_opfs.rs", "store_joined.rs"] {
        let text = std::fs::read_to_string(dir.join(runner)).expect("read a store runner");
        assert!(
            text.lines().any(|l| l.starts_with("store_cases!(") && !l.contains("listed")),
            "core/tests/{runner} does not run the suite's cases with `store_cases!(…)`"
        );
    }
}

/// A fresh path in the system temp dir, removed when dropped.
struct TempDb(PathBuf);

impl TempDb {
    fn new(name: &str) -> TempDb {
        let path =
            std::env::temp_dir().join(format!("cowork-{name}-{}-{}.db", std::process::id(), cowork_core::now_ms()));
        let _ = std::fs::remove_file(&path);
        TempDb(path)
    }
    fn path(&self) -> &str {
        self.0.to_str().expect("temp paths are UTF-8")
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        let _ = std::fs::remove_file(self.0.with_extension("db-journal"));
        let _ = std::fs::remove_file(self.0.with_extension("db-wal"));
    }
}

#[test]
fn a_committed_turn_survives_dropping_the_connection() {
    let db = TempDb::new("write-through");
    let sid = {
        let mut store = Store::open(db.path()).unwrap();
        let sid = store.create_session(&NewSession::new("w")).unwrap().id;
        store.append_turn(&sid, &NewTurn::user("saved before the crash")).unwrap();
        sid
        // dropped here without any further call
    };
    let store = Store::open(db.path()).unwrap();
    assert_eq!(store.last_turns(&sid, 1).unwrap()[0].content, "saved before the crash");
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

#[test]
fn an_archive_from_a_newer_version_is_refused_and_untouched() {
    let db = TempDb::new("too-new");
    {
        let mut store = Store::open(db.path()).unwrap();
        let sid = store.create_session(&NewSession::new("w")).unwrap().id;
        store.append_turn(&sid, &NewTurn::user("keep me")).unwrap();
        store.connection().pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
    }
    let before = std::fs::read(&db.0).unwrap();
    match Store::open(db.path()) {
        Err(Error::SchemaTooNew { found, supported }) => {
            assert_eq!((found, supported), (SCHEMA_VERSION + 1, SCHEMA_VERSION));
        }
        Err(other) => panic!("expected SchemaTooNew, got {other}"),
        Ok(_) => panic!("a newer archive must be refused"),
    }
    assert!(std::fs::read(&db.0).unwrap() == before, "the refused archive is byte-for-byte unchanged");
    let msg = Error::SchemaTooNew { found: 9, supported: 2 }.to_string();
    assert!(msg.contains("update Cowork"), "{msg}");
}

/// Regression: a negative `PRAGMA user_version` (written by another tool, or a damaged header) was read
/// as a huge unsigned number, so every migration was skipped and the file was stamped as current.
/// No version of Cowork writes a negative version: it is refused like a newer one, untouched.
#[test]
fn an_archive_with_a_negative_schema_version_is_refused_and_untouched() {
    let db = TempDb::new("negative-version");
    {
        let mut store = Store::open(db.path()).unwrap();
        let sid = store.create_session(&NewSession::new("w")).unwrap().id;
        store.append_turn(&sid, &NewTurn::user("keep me")).unwrap();
        store.connection().pragma_update(None, "user_version", -3).unwrap();
    }
    let before = std::fs::read(&db.0).unwrap();
    match Store::open(db.path()) {
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.contains("schema version -3"), "{msg}");
            assert!(msg.contains("no version of Cowork writes"), "{msg}");
            assert!(msg.contains("not changed"), "{msg}");
            assert_eq!(e.kind(), cowork_core::ErrorKind::Schema);
        }
        Ok(store) => panic!(
            "an archive at schema version -3 must be refused, but it opened at version {:?}",
            store.schema_version()
        ),
    }
    assert!(std::fs::read(&db.0).unwrap() == before, "the refused archive is byte-for-byte unchanged");
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// Regenerates the schema-v1 fixture: `COWORK_WRITE_FIXTURES=1 cargo test -p cowork-core write_v1_fixture`.
/// Without the variable it checks the committed fixture really is at version 1.
#[test]
fn write_v1_fixture() {
    let path = fixture("archive-v1.db");
    if std::env::var_os("COWORK_WRITE_FIXTURES").is_some() {
        let _ = std::fs::remove_file(&path);
        let store = Store::open_at_version(path.to_str().unwrap(), 1).unwrap();
        let conn = store.connection();
        conn.execute_batch(
            "INSERT INTO sessions (id, workspace, title, created_at, last_active_at, turn_count)
                 VALUES ('v1-session', 'legacy', 'From version one', 1700000000000, 1700000000000, 2);
             INSERT INTO turns (session_id, turn_number, role, content, token_count, status, created_at)
                 VALUES ('v1-session', 1, 'user', 'Old question about the refresh_token', 9, 'complete', 1700000000000),
                        ('v1-session', 2, 'assistant', 'Old answer', 3, 'complete', 1700000000001);
             PRAGMA journal_mode = DELETE;",
        )
        .unwrap();
    }
    let conn = rusqlite_version_of(&path);
    assert_eq!(conn, 1, "the committed fixture is a schema-v1 archive");
}

/// Regenerates the schema-v2 fixture (as `write_v1_fixture`): a session with a delegated task.
#[test]
fn write_v2_fixture() {
    let path = fixture("archive-v2.db");
    if std::env::var_os("COWORK_WRITE_FIXTURES").is_some() {
        let _ = std::fs::remove_file(&path);
        let store = Store::open_at_version(path.to_str().unwrap(), 2).unwrap();
        store
            .connection()
            .execute_batch(
                "INSERT INTO sessions (id, workspace, title, created_at, last_active_at, turn_count)
                     VALUES ('v2-session', 'my-project', 'From version two', 1750000000000, 1750000000000, 1);
                 INSERT INTO turns (session_id, turn_number, role, content, token_count, status, created_at)
                     VALUES ('v2-session', 1, 'user', 'Please refactor the parser', 6, 'complete', 1750000000000);
                 INSERT INTO tasks (task_id, session_id, turn_number, goal, status, created_at, updated_at)
                     VALUES ('t-1', 'v2-session', 1, 'Refactor the parser', 'completed', 1750000000000, 1750000000000);
                 PRAGMA journal_mode = DELETE;",
            )
            .unwrap();
    }
    assert_eq!(rusqlite_version_of(&path), 2, "the committed fixture is a schema-v2 archive");
}

/// Regenerates the schema-v3 fixture (as `write_v1_fixture`): a session and its fork, with workspace
/// settings, made by the code of schema 3 (before attachments).
#[test]
fn write_v3_fixture() {
    let path = fixture("archive-v3.db");
    if std::env::var_os("COWORK_WRITE_FIXTURES").is_some() {
        let _ = std::fs::remove_file(&path);
        let store = Store::open_at_version(path.to_str().unwrap(), 3).unwrap();
        store
            .connection()
            .execute_batch(
                "INSERT INTO sessions (id, workspace, title, created_at, last_active_at, turn_count)
                     VALUES ('v3-session', 'my-project', 'From version three', 1760000000000, 1760000000002, 2);
                 INSERT INTO sessions (id, workspace, title, created_at, last_active_at, turn_count,
                         parent_session_id, fork_turn)
                     VALUES ('v3-fork', 'my-project', 'Its fork', 1760000000003, 1760000000004, 2, 'v3-session', 1);
                 INSERT INTO turns (session_id, turn_number, role, content, token_count, status, created_at)
                     VALUES ('v3-session', 1, 'user', 'Where is the quokka config?', 7, 'complete', 1760000000000),
                            ('v3-session', 2, 'assistant', 'In settings.toml', 4, 'complete', 1760000000001),
                            ('v3-fork', 2, 'assistant', 'Maybe in config.yaml', 5, 'complete', 1760000000004);
                 INSERT INTO workspace_settings (workspace, orchestrator_dir, manual_approvals, updated_at)
                     VALUES ('my-project', '/src/app', 1, 1760000000000);
                 PRAGMA journal_mode = DELETE;",
            )
            .unwrap();
    }
    assert_eq!(rusqlite_version_of(&path), 3, "the committed fixture is a schema-v3 archive");
}

/// Regenerates the schema-v4 fixture (as `write_v1_fixture`): a session with an attachment and its
/// fork, made by the code of schema 4 (before sync).
#[test]
fn write_v4_fixture() {
    let path = fixture("archive-v4.db");
    if std::env::var_os("COWORK_WRITE_FIXTURES").is_some() {
        let _ = std::fs::remove_file(&path);
        let store = Store::open_at_version(path.to_str().unwrap(), 4).unwrap();
        store
            .connection()
            .execute_batch(
                "INSERT INTO sessions (id, workspace, title, created_at, last_active_at, turn_count)
                     VALUES ('v4-session', 'my-project', 'From version four', 1770000000000, 1770000000002, 3);
                 INSERT INTO sessions (id, workspace, title, created_at, last_active_at, turn_count,
                         parent_session_id, fork_turn)
                     VALUES ('v4-fork', 'my-project', 'Its fork', 1770000000003, 1770000000004, 3, 'v4-session', 2);
                 INSERT INTO turns (id, session_id, turn_number, role, content, token_count, status, created_at)
                     VALUES (1, 'v4-session', 1, 'user', 'Here is the wombat log', 6, 'complete', 1770000000000),
                            (2, 'v4-session', 2, 'assistant', 'It says the cache is cold', 6, 'complete', 1770000000001),
                            (3, 'v4-session', 3, 'user', 'Thanks', 2, 'complete', 1770000000002),
                            (4, 'v4-fork', 3, 'user', 'And the warm cache?', 5, 'complete', 1770000000004);
                 INSERT INTO blobs (sha256, size, data)
                     VALUES ('709f330153a0dc6e72dd0647aa853326626c58af5288519c120aeb716e7fe7ef', 4, X'6c6f6721');
                 INSERT INTO attachments (turn_id, position, sha256, name, mime, size, kind)
                     VALUES (1, 0, '709f330153a0dc6e72dd0647aa853326626c58af5288519c120aeb716e7fe7ef', 'wombat.log',
                             'text/plain', 4, 'text');
                 PRAGMA journal_mode = DELETE;",
            )
            .unwrap();
    }
    assert_eq!(rusqlite_version_of(&path), 4, "the committed fixture is a schema-v4 archive");
}

/// Regenerates the schema-v5 fixture (as `write_v1_fixture`): an archive with sync on, made by the
/// code of schema 5 (one space): its stream cursor, what the server acknowledged and two changes
/// still waiting.
#[test]
fn write_v5_fixture() {
    let path = fixture("archive-v5.db");
    if std::env::var_os("COWORK_WRITE_FIXTURES").is_some() {
        let _ = std::fs::remove_file(&path);
        let store = Store::open_at_version(path.to_str().unwrap(), 5).unwrap();
        store
            .connection()
            .execute_batch(
                "INSERT INTO sync_meta (id, device_id, device_name, cursor, published)
                     VALUES (1, 'v5-device', 'Old laptop', 7, 1);
                 INSERT INTO sessions (id, workspace, title, created_at, last_active_at, turn_count)
                     VALUES ('v5-session', 'my-project', 'From version five', 1780000000000, 1780000000001, 2);
                 INSERT INTO turns (id, session_id, turn_number, role, content, token_count, status, created_at,
                         gid, prev_gid)
                     VALUES (1, 'v5-session', 1, 'user', 'Is the platypus job done?', 6, 'complete',
                             1780000000000, 'g-1', NULL),
                            (2, 'v5-session', 2, 'assistant', 'It finished at noon', 5, 'complete',
                             1780000000001, 'g-2', 'g-1');
                 INSERT INTO workspace_settings (workspace, orchestrator_dir, manual_approvals, updated_at)
                     VALUES ('my-project', '/src/app', 0, 1780000000000);
                 DELETE FROM sync_outbox;
                 INSERT INTO sync_outbox (seq, kind, key) VALUES (1, 'session', 'v5-session'), (2, 'turn', 'g-1'),
                     (3, 'turn', 'g-2');
                 PRAGMA journal_mode = DELETE;",
            )
            .unwrap();
    }
    assert_eq!(rusqlite_version_of(&path), 5, "the committed fixture is a schema-v5 archive");
}

/// Schema 15 names a kept message by its sequence and its id (a pack's changes share a sequence): a
/// message kept under schema 14 stays, and a build that reads more tries it again.
#[test]
fn a_message_kept_aside_under_schema_14_stays_and_is_tried_again() {
    let db = TempDb::new("migrate-v14");
    {
        let store = Store::open_at_version(db.path(), 14).unwrap();
        store
            .connection()
            .execute(
                "INSERT INTO sync_quarantine (space, seq, msg_id, device_id, device_name, reason, detail, sealed,
                     reader, kept_at) VALUES ('', 9, 'birch:4', 'birch', 'Birch', 'newer_kind', 'task_added', x'0102',
                     14001, 1780000000000)",
                [],
            )
            .unwrap();
    }
    let store = Store::open(db.path()).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let kept = store.sync_quarantined().unwrap();
    assert_eq!((kept.len(), kept[0].seq, kept[0].msg_id.as_str()), (1, 9, "birch:4"));
    let due = store.sync_quarantine_due(&cowork_core::Space::Personal).unwrap();
    assert_eq!((due.len(), due[0].sealed.as_slice()), (1, &[1u8, 2][..]), "due again for the newer reader");
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

#[test]
fn a_version_5_archive_keeps_its_sync_place_as_its_personal_space() {
    let db = TempDb::new("migrate-v5");
    std::fs::copy(fixture("archive-v5.db"), &db.0).unwrap();
    let mut store = Store::open(db.path()).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let personal = cowork_core::Space::Personal;
    assert_eq!(store.sync_cursor(&personal).unwrap(), 7, "the stream is not read again from the start");
    let status = store.sync_status().unwrap();
    assert_eq!((status.waiting, status.unconfirmed), (2, 1), "what was acknowledged stays acknowledged");
    let out = store.sync_outgoing(&personal, 10).unwrap();
    assert_eq!(out.iter().map(|m| m.seq).collect::<Vec<_>>(), [2, 3], "the two waiting changes go out, in order");
    let settings = store.workspace_settings("my-project").unwrap();
    assert_eq!((settings.directory(), &settings.sync), (Some("/src/app"), &cowork_core::SyncScope::Personal));
    // New changes are captured for the personal space as before.
    store.append_turn("v5-session", &NewTurn::user("And the wombat job?")).unwrap();
    assert_eq!(store.sync_outgoing(&personal, 10).unwrap().len(), 3);
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

#[test]
fn a_version_4_archive_gains_turn_ids_and_syncs_whole() {
    let db = TempDb::new("migrate-v4");
    std::fs::copy(fixture("archive-v4.db"), &db.0).unwrap();
    let mut store = Store::open(db.path()).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let gids: std::collections::HashSet<String> = store
        .connection()
        .prepare("SELECT gid FROM turns")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(gids.len(), 4, "every old turn has its own global id");
    // Turned on, sync sends the old archive whole: another device ends with the same archive.
    store.enable_sync("Old laptop").unwrap();
    let messages = store.sync_outgoing(&cowork_core::Space::Personal, usize::MAX).unwrap();
    let mut other = Store::open_in_memory().unwrap();
    other.enable_sync("New phone").unwrap();
    for (i, m) in messages.iter().enumerate() {
        other.apply_sync(&cowork_core::Space::Personal, i as i64 + 1, m).unwrap();
    }
    assert_eq!(other.export_jsonl(None).unwrap(), store.export_jsonl(None).unwrap());
    let fork: Vec<String> = other.get_turns("v4-fork", 0, 10).unwrap().into_iter().map(|t| t.content).collect();
    assert_eq!(fork, ["Here is the wombat log", "It says the cache is cold", "And the warm cache?"]);
    assert_eq!(other.search(&SearchQuery::new("wombat", SearchScope::All)).unwrap().len(), 1);
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

#[test]
fn a_version_3_archive_gains_attachments_and_loses_nothing() {
    let db = TempDb::new("migrate-v3");
    std::fs::copy(fixture("archive-v3.db"), &db.0).unwrap();
    let mut store = Store::open(db.path()).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let texts = |store: &Store, sid: &str| -> Vec<String> {
        store.get_turns(sid, 0, 10).unwrap().into_iter().map(|t| t.content).collect()
    };
    assert_eq!(texts(&store, "v3-session"), ["Where is the quokka config?", "In settings.toml"]);
    assert_eq!(
        texts(&store, "v3-fork"),
        ["Where is the quokka config?", "Maybe in config.yaml"],
        "the fork reads through"
    );
    let settings = store.workspace_settings("my-project").unwrap();
    assert_eq!((settings.directory(), settings.manual_approvals), (Some("/src/app"), true));
    assert_eq!(store.search(&SearchQuery::new("quokka", SearchScope::All)).unwrap().len(), 1);
    // Attachments work on the upgraded archive, and the old turns have none.
    assert!(store.get_turns("v3-session", 0, 10).unwrap().iter().all(|t| t.attachments.is_empty()));
    let file = cowork_core::NewAttachment::new("notes.md", "text/markdown", b"# wombat".to_vec());
    let t = store.append_turn_with_attachments("v3-fork", &NewTurn::user("see notes"), &[file], 0).unwrap();
    assert_eq!(t.turn_number, 3);
    assert_eq!(store.stats().unwrap().blobs, 1);
    assert_eq!(store.search(&SearchQuery::new("wombat", SearchScope::All)).unwrap()[0].turn_number, 3);
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

#[test]
fn a_version_2_archive_gains_workspace_settings() {
    let db = TempDb::new("migrate-v2");
    std::fs::copy(fixture("archive-v2.db"), &db.0).unwrap();
    let mut store = Store::open(db.path()).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(store.get_turns("v2-session", 0, 10).unwrap()[0].content, "Please refactor the parser");
    assert_eq!(store.tasks("v2-session").unwrap()[0].goal, "Refactor the parser");
    assert_eq!(store.workspace_settings("my-project").unwrap().directory(), None);
    let dir = cowork_core::WorkspaceSettings {
        orchestrator_dir: "/src/parser".into(),
        ..cowork_core::WorkspaceSettings::unset("my-project")
    };
    store.set_workspace_settings(&dir).unwrap();
    assert_eq!(store.workspace_settings("my-project").unwrap().directory(), Some("/src/parser"));
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

fn rusqlite_version_of(path: &std::path::Path) -> i64 {
    // Read the header directly: bytes 60..64 of a SQLite file hold user_version, big-endian.
    let bytes = std::fs::read(path).expect("fixture exists");
    i64::from(u32::from_be_bytes(bytes[60..64].try_into().unwrap()))
}

#[test]
fn an_archive_indexed_before_text_files_were_embedded_embeds_them_after_the_upgrade() {
    let db = TempDb::new("semantic-files");
    {
        let mut store = Store::open(db.path()).unwrap();
        let s = store.create_session(&NewSession::new("w")).unwrap().id;
        let file = cowork_core::NewAttachment::new("notes.md", "text/markdown", "The tokens expire hourly.".as_bytes());
        store.append_turn_with_attachments(&s, &NewTurn::user("See the notes."), &[file], 0).unwrap();
        store.append_turn(&s, &NewTurn::assistant("Read them.")).unwrap();
        suite::semantic::index_all(&mut store, 10);
        // As the earlier build left it: every turn looked at, schema 11.
        store.connection().execute_batch("DELETE FROM semantic_redo; PRAGMA user_version = 11;").unwrap();
    }
    let store = Store::open(db.path()).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert!(!store.semantic_progress().unwrap().complete(), "the turn with a text file waits to be embedded again");
    let batch = store.semantic_pending(10).unwrap();
    let texts: Vec<&str> = batch.chunks.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts, ["See the notes.", "notes.md\nThe tokens expire hourly."], "only that turn, with its file");
}

#[test]
fn a_version_12_archive_is_indexed_again_with_stemming() {
    let db = TempDb::new("migrate-v12");
    let sid = {
        let mut store = Store::open_at_version(db.path(), 12).unwrap();
        let s = store.create_session(&NewSession::new("w")).unwrap().id;
        store.append_turn(&s, &NewTurn::user("I started researching ceramic glazes")).unwrap();
        store.append_turn(&s, &NewTurn::assistant("Which glaze recipes worked?")).unwrap();
        assert!(store.search(&SearchQuery::new("research", SearchScope::All)).unwrap().is_empty(), "v12: exact words");
        s
    };
    let mut store = Store::open(db.path()).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let numbers = |store: &Store, text: &str| -> Vec<i64> {
        store.search(&SearchQuery::new(text, SearchScope::All)).unwrap().iter().map(|h| h.turn_number).collect()
    };
    assert_eq!(numbers(&store, "research"), [1], "the old turns are indexed again, stemmed");
    let mut glaze = numbers(&store, "glaze");
    glaze.sort_unstable();
    assert_eq!(glaze, [1, 2], "glazes and glaze");
    // New turns are indexed stemmed too, and the index matches the turns.
    store.append_turn(&sid, &NewTurn::user("The researcher replied")).unwrap();
    assert_eq!(numbers(&store, "researched").len(), 2);
    store
        .connection()
        .execute("INSERT INTO turns_fts(turns_fts, rank) VALUES ('integrity-check', 1)", [])
        .expect("the full-text index matches the turns");
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

#[test]
fn a_version_1_archive_is_upgraded_in_place() {
    let db = TempDb::new("migrate");
    std::fs::copy(fixture("archive-v1.db"), &db.0).unwrap();
    let mut store = Store::open(db.path()).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let turns = store.get_turns("v1-session", 0, 10).unwrap();
    assert_eq!(
        turns.iter().map(|t| t.content.as_str()).collect::<Vec<_>>(),
        ["Old question about the refresh_token", "Old answer"]
    );
    let hits = store.search(&SearchQuery::new("refresh_token", SearchScope::All)).unwrap();
    assert_eq!(hits.len(), 1, "the v1 full-text index still works");
    // Version 2 features work on the upgraded archive.
    store.set_calibration("m", 3.5, 1).unwrap();
    store.append_turn("v1-session", &NewTurn::user("new turn after the upgrade")).unwrap();
    assert_eq!(store.turn_count("v1-session").unwrap(), 3);
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

fn arb_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 _./-]{0,40}",
        "\\PC{0,60}",
        Just(String::new()),
        "[\"*^():NEAR \\\\]{0,20}",
        (1usize..20_000).prop_map(|n| "é🎉x\n".repeat(n / 4 + 1)),
    ]
}

fn arb_turn() -> impl Strategy<Value = NewTurn> {
    (0usize..4, arb_text(), arb_text(), prop::collection::vec(("[a-z_]{1,12}", arb_text()), 0..3), 0usize..3).prop_map(
        |(role, content, extra, calls, status)| {
            let role = Role::ALL[role];
            let mut t = match role {
                Role::Tool => NewTurn::tool_result("call_x", "read_file", content),
                Role::Assistant => NewTurn::assistant_calls(
                    content,
                    calls
                        .into_iter()
                        .enumerate()
                        .map(|(i, (name, args))| ToolCall { id: format!("c{i}"), name, arguments: args })
                        .collect(),
                ),
                _ => NewTurn { role, ..NewTurn::user(content) },
            };
            if !extra.is_empty() {
                t.metadata = serde_json::json!({ "note": extra });
            }
            t.status = [TurnStatus::Complete, TurnStatus::Interrupted, TurnStatus::Error][status];
            t
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn export_import_export_is_identical(sessions in prop::collection::vec((arb_text(), prop::collection::vec(arb_turn(), 0..12)), 1..4)) {
        let mut store = Store::open_in_memory().unwrap();
        for (i, (workspace, turns)) in sessions.iter().enumerate() {
            let sid = store.create_session(&NewSession { title: format!("s{i}"), ..NewSession::new(workspace.clone()) }).unwrap().id;
            for t in turns {
                store.append_turn(&sid, t).unwrap();
            }
        }
        let first = store.export_jsonl(None).unwrap();
        let mut fresh = Store::open_in_memory().unwrap();
        fresh.import_jsonl(&first).unwrap();
        prop_assert_eq!(first, fresh.export_jsonl(None).unwrap());
    }

    #[test]
    fn search_never_errors(query in "[\"*^():NEAR ANDORT\\-+{}\\[\\]'%_a-c🎉\\\\]{0,30}", prefix_last: bool) {
        let mut store = Store::open_in_memory().unwrap();
        let sid = store.create_session(&NewSession::new("w")).unwrap().id;
        store.append_turn(&sid, &NewTurn::user("a NEAR b AND c (OR) \"d\" 🎉 e*f")).unwrap();
        for scope in [SearchScope::All, SearchScope::Session { session_id: sid.clone() }, SearchScope::Workspace { workspace: "w".into() }] {
            let r = store.search(&SearchQuery { prefix_last, ..SearchQuery::new(query.clone(), scope) });
            prop_assert!(r.is_ok(), "query {:?}: {:?}", query, r.err());
        }
    }
}

mod scale {
    use cowork_core::context::{assemble_context, ContextSettings};
    use cowork_core::prompt::{system_prompt, PromptOptions};
    use cowork_core::recall::run_recall;
    use cowork_core::state::SessionState;
    use cowork_core::store::{NewSession, SessionTurns, Store};
    use cowork_core::{NewTurn, ToolCall};

    /// `n` turns of ~400 characters in one session, the needle at `needle_at`.
    fn archive(n: i64, needle_at: i64) -> (Store, String) {
        let mut store = Store::open_in_memory().unwrap();
        let sid = store.create_session(&NewSession::new("big")).unwrap().id;
        let mut batch = Vec::with_capacity(n as usize);
        for i in 1..=n {
            let text = if i == needle_at {
                "We decided the session cookie is named zebra_crossing_token and rotates hourly.".to_owned()
            } else {
                format!(
                    "Turn {i}: refactoring the auth module, see src/auth_{m}.py and the refresh token flow; \
                     the tests in tests/test_auth.py cover login, logout and token rotation for user {i}. {pad}",
                    m = i % 97,
                    pad = "lorem ipsum dolor sit amet ".repeat(8)
                )
            };
            let turn = match i % 4 {
                1 => NewTurn::user(text),
                2 => NewTurn::assistant_calls(
                    text,
                    vec![ToolCall {
                        id: format!("c{i}"),
                        name: "read_file".into(),
                        arguments: format!(r#"{{"path":"src/f{i}.py"}}"#),
                    }],
                ),
                3 => NewTurn::tool_result(format!("c{}", i - 1), "read_file", text),
                _ => NewTurn::assistant(text),
            };
            batch.push(turn);
        }
        store.append_turns(&sid, &batch).unwrap();
        (store, sid)
    }

    #[test]
    fn assembling_a_10k_turn_session_reads_only_recent_turns() {
        let (store, sid) = archive(10_000, 5);
        let source = SessionTurns::new(&store, &sid).unwrap();
        let settings = ContextSettings { context_window: 32_768, ..ContextSettings::default() };
        let state = SessionState::new(&sid, "big", "demo");
        let ctx = assemble_context(&settings, &system_prompt(&PromptOptions::default()), &state, &source).unwrap();
        let shown = ctx.manifest.turn_numbers.len();
        assert!(shown > 50, "a 32k window holds many turns, got {shown}");
        assert!(source.turns_read() < shown + 64, "read {} turns to show {shown}", source.turns_read());
        assert!(ctx.archived_turns > 9_000, "the rest is left in the archive: {}", ctx.archived_turns);
    }

    #[test]
    fn recall_finds_the_right_turn_among_100k() {
        let (store, sid) = archive(100_000, 31_337);
        let out = run_recall(&store, &sid, r#"{"action":"search","query":"zebra_crossing_token"}"#);
        assert!(out.contains("[Turn 31337]"), "{out}");
        assert!(out.contains("zebra_crossing_token"), "{out}");
        let common = run_recall(&store, &sid, r#"{"action":"search","query":"refresh token","limit":5}"#);
        assert!(common.contains("[Turn 99"), "common terms return recent hits: {}", &common[..common.len().min(500)]);
    }
}

/// Regression: a session-scoped search once let SQLite walk the session's turns and probe the
/// full-text index per turn (49 s for 20k turns). The plan must drive the loop from the index.
#[test]
fn scoped_search_is_driven_by_the_full_text_index() {
    let mut store = Store::open_in_memory().unwrap();
    let sid = store.create_session(&NewSession::new("w")).unwrap().id;
    for scope in
        [SearchScope::Session { session_id: sid }, SearchScope::Workspace { workspace: "w".into() }, SearchScope::All]
    {
        let plan = store.explain_search(&SearchQuery::new("refresh token", scope.clone())).unwrap();
        assert!(plan[0].contains("VIRTUAL TABLE INDEX"), "{scope:?}: the full-text index is the outer loop: {plan:?}");
        assert!(!plan.iter().any(|p| p.contains("TEMP B-TREE")), "{scope:?}: no sort of all matches: {plan:?}");
    }
}
