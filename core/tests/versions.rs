//! Versions and forks: an edit's or a regeneration's fork is recorded as a version of its
//! conversation, "Fork from here" as a fork of its own; the record survives export → import and sync,
//! and archives from before it are classified by the titles their forks were given.

use cowork_core::conversations::conversations;
use cowork_core::store::{NewSession, SessionFilter, Store, SCHEMA_VERSION};
use cowork_core::{NewTurn, Session};

/// A conversation of two exchanges, titled `title`.
fn conversation(store: &mut Store, title: &str) -> Session {
    let s = store.create_session(&NewSession::new("w")).unwrap();
    for text in ["first question", "first answer", "second question", "second answer"] {
        let turn = if text.ends_with("question") { NewTurn::user(text) } else { NewTurn::assistant(text) };
        store.append_turn(&s.id, &turn).unwrap();
    }
    store.rename_session(&s.id, title).unwrap();
    store.get_session(&s.id).unwrap()
}

fn listed(store: &Store) -> Vec<Session> {
    store.list_sessions(&SessionFilter { include_archived: true, limit: 500, ..SessionFilter::default() }).unwrap()
}

/// Each conversation of the archive as (root title, number of versions, forked from (root title)).
fn grouped(store: &Store) -> Vec<(String, usize, Option<String>)> {
    let sessions = listed(store);
    let title = |id: &str| sessions.iter().find(|s| s.id == id).map(|s| s.title.clone()).unwrap();
    let mut out: Vec<_> = conversations(&sessions)
        .into_iter()
        .map(|c| (c.root.title.clone(), c.versions.len(), c.forked_from.as_deref().map(title)))
        .collect();
    out.sort();
    out
}

#[test]
fn edits_and_regenerations_are_versions_and_a_fork_from_here_is_not() {
    let mut store = Store::open_in_memory().unwrap();
    let orig = conversation(&mut store, "Plan");
    let edit = store.version_session(&orig.id, 2).unwrap();
    store.append_turn(&edit.id, &NewTurn::user("second question, edited")).unwrap();
    let regen = store.version_session(&orig.id, 3).unwrap();
    store.append_turn(&regen.id, &NewTurn::assistant("second answer, again")).unwrap();
    let fork = store.fork_session(&orig.id, 4).unwrap();
    assert!(edit.is_version && regen.is_version && !fork.is_version && !orig.is_version);
    assert_eq!(
        grouped(&store),
        [("Plan".into(), 3, None), ("Plan (fork)".into(), 1, Some("Plan".into()))],
        "one conversation of three versions, and the fork on its own naming where it came from"
    );
    // Nothing was rewritten: the original reads as before.
    let texts: Vec<String> = store.get_turns(&orig.id, 0, 10).unwrap().into_iter().map(|t| t.content).collect();
    assert_eq!(texts, ["first question", "first answer", "second question", "second answer"]);

    // Export → import into another archive keeps the distinction.
    let jsonl = store.export_jsonl(None).unwrap();
    let mut other = Store::open_in_memory().unwrap();
    other.import_jsonl(&jsonl).unwrap();
    assert_eq!(grouped(&other), grouped(&store));
}

#[test]
fn sync_carries_whether_a_fork_is_a_version() {
    let mut store = Store::open_in_memory().unwrap();
    store.enable_sync("Laptop").unwrap();
    let orig = conversation(&mut store, "Plan");
    let edit = store.version_session(&orig.id, 2).unwrap();
    store.append_turn(&edit.id, &NewTurn::user("second question, edited")).unwrap();
    store.fork_session(&orig.id, 4).unwrap();
    let messages = store.sync_outgoing(&cowork_core::Space::Personal, usize::MAX).unwrap();
    let mut phone = Store::open_in_memory().unwrap();
    phone.enable_sync("Phone").unwrap();
    for (i, m) in messages.iter().enumerate() {
        phone.apply_sync(&cowork_core::Space::Personal, i as i64 + 1, m).unwrap();
    }
    assert_eq!(grouped(&phone), [("Plan".into(), 2, None), ("Plan (fork)".into(), 1, Some("Plan".into()))]);
}

#[test]
fn an_archive_from_before_versions_classifies_its_forks_by_the_titles_they_were_given() {
    let path =
        std::env::temp_dir().join(format!("cowork-versions-{}-{}.db", std::process::id(), cowork_core::now_ms()));
    let path = path.to_str().unwrap().to_owned();
    {
        let mut store = Store::open(&path).unwrap();
        let orig = conversation(&mut store, "Plan");
        // As the earlier build made them: every fork a plain fork, told apart only by its title.
        for (at, title) in [(2, "Plan (edited)"), (3, "Plan (regenerated)"), (4, "Plan (fork)"), (2, "Renamed edit")] {
            let f = store.fork_session(&orig.id, at).unwrap();
            store.rename_session(&f.id, title).unwrap();
        }
        let edited = listed(&store).into_iter().find(|s| s.title == "Plan (edited)").unwrap();
        let f = store.fork_session(&edited.id, 1).unwrap();
        store.rename_session(&f.id, "Plan (edited) (regenerated)").unwrap();
        // Back to schema 9: without the column, at version 9.
        let conn = store.connection();
        conn.execute_batch(
            "ALTER TABLE sessions DROP COLUMN is_version; ALTER TABLE workspace_settings DROP COLUMN mcp_servers;
             PRAGMA user_version = 9;",
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(
        grouped(&store),
        [
            ("Plan".into(), 4, None),
            ("Plan (fork)".into(), 1, Some("Plan".into())),
            ("Renamed edit".into(), 1, Some("Plan".into())),
        ],
        "edits and regenerations (of an edit too) are versions; forks and renamed forks stay apart"
    );
    assert_eq!(store.integrity_check().unwrap(), "ok");
    drop(store);
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(format!("{path}{suffix}"));
    }
}
