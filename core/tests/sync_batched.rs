//! A first sync (or any catch-up) applies the stream in large batches, indexing each run of added
//! turns for search at its end (`core/src/store/sync/index_later.rs`): the archive that gives must
//! be exactly the one applying the same stream message by message gives — the same conversations,
//! forks, recovered turns, quarantined messages and search results — whatever the batches, with
//! messages repeated, a change refused and a message that cannot be read in the middle of a batch.
#![cfg(not(target_arch = "wasm32"))]

use cowork_core::store::sync::{read_message, Received, SyncChange, SyncMessage};
use cowork_core::store::{NewSession, Store};
use cowork_core::{NewAttachment, NewTurn, SearchQuery, SearchScope, Space};
use std::path::{Path, PathBuf};

/// A folder of archives, removed at the end.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("cowork-sync-batched-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().expect("a temporary path is UTF-8").to_owned()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

/// Everything `from` has to publish, appended to `stream` as the stream would hold it (JSON).
fn publish(from: &mut Store, stream: &mut Vec<String>) {
    let out = from.sync_outgoing(&Space::Personal, usize::MAX).unwrap();
    if let Some(last) = out.last() {
        from.sync_published(&Space::Personal, last.seq).unwrap();
    }
    stream.extend(out.iter().map(|m| serde_json::to_string(m).unwrap()));
}

/// Applies `stream[from..to]` (sequence = index + 1) as the worker does, in one batch.
fn apply(to: &mut Store, stream: &[String], from: usize, end: usize) {
    let batch: Vec<(i64, Received)> = (from..end).map(|i| (i as i64 + 1, read_message(&stream[i]))).collect();
    to.apply_sync_received(&Space::Personal, &batch, &mut |i| stream[from + i].as_bytes().to_vec())
        .unwrap_or_else(|e| panic!("applying messages {}..={end}: {e}", from + 1));
}

fn word(n: usize) -> String {
    format!("quokka{n}x")
}

/// A stream two devices wrote with offline histories: conversations with attachments, both
/// appending to one conversation offline (a conflict fork), a rename, a delete that turns arriving
/// later outlive (recovered), a message published twice, one whose attachment was altered on the
/// way (refused) and one that cannot be read.
fn stream() -> Vec<String> {
    let mut stream = Vec::new();
    let (mut birch, mut phone) = (Store::open_in_memory().unwrap(), Store::open_in_memory().unwrap());
    birch.enable_sync("Birch").unwrap();
    phone.enable_sync("Phone").unwrap();
    let plan = birch.create_session(&NewSession::new("work")).unwrap().id;
    for n in 0..40 {
        let text = format!("plan step {} with {}", n, word(n));
        let turn = if n % 2 == 0 { NewTurn::user(text) } else { NewTurn::assistant(text) };
        birch.append_turn(&plan, &turn).unwrap();
    }
    let file = NewAttachment::new("notes.md", "text/markdown", b"# notes about the plan".to_vec());
    birch.append_turn_with_attachments(&plan, &NewTurn::user(format!("the notes {}", word(40))), &[file], 0).unwrap();
    let errands = birch.create_session(&NewSession::new("home")).unwrap().id;
    birch.append_turn(&errands, &NewTurn::user(format!("errands {}", word(41)))).unwrap();
    publish(&mut birch, &mut stream);
    let first = stream.clone();
    for (i, body) in first.iter().enumerate() {
        let msg = read_message(body);
        phone.apply_sync_received(&Space::Personal, &[(i as i64 + 1, msg)], &mut |_| Vec::new()).unwrap();
    }
    // Offline on both: the same conversation continued twice, a rename, a delete and a turn after it.
    for n in 42..60 {
        birch.append_turn(&plan, &NewTurn::assistant(format!("birch goes on {}", word(n)))).unwrap();
    }
    for n in 60..75 {
        phone.append_turn(&plan, &NewTurn::user(format!("phone goes on {}", word(n)))).unwrap();
    }
    phone.rename_session(&plan, "The plan").unwrap();
    birch.delete_session(&errands).unwrap();
    phone.append_turn(&errands, &NewTurn::user(format!("and milk {}", word(75)))).unwrap();
    publish(&mut birch, &mut stream);
    publish(&mut phone, &mut stream);
    // Both read the stream up to here and go on.
    let file = NewAttachment::new("later.md", "text/markdown", b"# later".to_vec());
    birch.append_turn_with_attachments(&plan, &NewTurn::user(format!("later {}", word(76))), &[file], 0).unwrap();
    for n in 77..90 {
        birch.append_turn(&plan, &NewTurn::assistant(format!("more {}", word(n)))).unwrap();
    }
    publish(&mut birch, &mut stream);

    // The later attachment altered on the way: refused, kept aside, the rest applies.
    let bad = stream.iter().rposition(|b| b.contains("later.md")).expect("the later attachment was published");
    let mut msg: SyncMessage = serde_json::from_str(&stream[bad]).unwrap();
    let SyncChange::TurnAdded(t) = &mut msg.change else { panic!("a turn") };
    t.attachments[0].data = "IyBzb21ldGhpbmcgZWxzZQ==".into();
    stream[bad] = serde_json::to_string(&msg).unwrap();
    // A message published again after the server's duplicate window, and one nobody can read.
    let again = stream[45].clone();
    stream.insert(bad + 3, again);
    stream.insert(bad + 6, "{\"id\":\"x\",\"device_id\":\"d\",\"change\":{\"turn_added_v9\":{}}".into());
    stream
}

/// An archive that has sync on and a conversation of its own nobody has seen yet (its pending turns
/// are lifted and placed again around what arrives), copied to `copies` files with the same device.
fn devices(dir: &Dir, copies: &[&str]) -> Vec<Store> {
    let first = dir.path("original.db");
    {
        let mut me = Store::open(&first).unwrap();
        me.enable_sync("Laptop").unwrap();
        let mine = me.create_session(&NewSession::new("work")).unwrap().id;
        for n in 100..110 {
            me.append_turn(&mine, &NewTurn::user(format!("my own {}", word(n)))).unwrap();
        }
    }
    copies
        .iter()
        .map(|name| {
            std::fs::copy(&first, dir.path(name)).unwrap();
            Store::open(&dir.path(name)).unwrap()
        })
        .collect()
}

/// What a user sees of an archive.
struct Seen {
    /// The archive's export.
    export: String,
    /// The quarantined messages: sequence and reason.
    quarantined: Vec<(i64, String)>,
    /// Where each word is found: (session, turn number), sorted.
    found: Vec<Vec<(String, i64)>>,
}

fn seen(store: &Store) -> Seen {
    let quarantined =
        store.sync_quarantined().unwrap().into_iter().map(|q| (q.seq, format!("{:?}", q.reason))).collect();
    let found = (0..110)
        .map(|n| {
            let query = SearchQuery { limit: 50, ..SearchQuery::new(word(n), SearchScope::All) };
            let mut hits: Vec<(String, i64)> =
                store.search(&query).unwrap().into_iter().map(|h| (h.session_id, h.turn_number)).collect();
            hits.sort();
            hits
        })
        .collect();
    Seen { export: store.export_jsonl(None).unwrap(), quarantined, found }
}

/// FTS5's own check that the search index holds exactly the turns' text.
fn index_is_whole(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute("INSERT INTO turns_fts(turns_fts, rank) VALUES ('integrity-check', 1)", [])
        .unwrap_or_else(|e| panic!("the search index of {} does not match its turns: {e}", path.display()));
}

#[test]
fn batches_of_any_size_give_the_archive_message_by_message_gives() {
    let stream = stream();
    let dir = Dir::new("sizes");
    let names = ["one.db", "seven.db", "overlapping.db", "whole.db"];
    let mut stores = devices(&dir, &names);
    let n = stream.len();
    for i in 0..n {
        apply(&mut stores[0], &stream, i, i + 1);
    }
    for start in (0..n).step_by(7) {
        apply(&mut stores[1], &stream, start, (start + 7).min(n));
    }
    // Each batch repeats the last five messages of the one before (a fetch after a lost reply):
    // they are at or below the cursor and skipped.
    let mut start = 0;
    while start < n {
        let end = (start + 23).min(n);
        apply(&mut stores[2], &stream, start.saturating_sub(5), end);
        start = end;
    }
    apply(&mut stores[3], &stream, 0, n);

    let want = seen(&stores[0]);
    assert_eq!(
        want.quarantined.len(),
        2,
        "the altered attachment and the unreadable one are kept: {:?}",
        want.quarantined
    );
    for (k, hits) in want.found.iter().enumerate() {
        let written = !(90..100).contains(&k);
        assert_eq!(
            !hits.is_empty(),
            written && k != 76,
            "{} is found if written (the refused turn's is not): {hits:?}",
            word(k)
        );
    }
    for (store, name) in stores.iter().zip(names).skip(1) {
        let got = seen(store);
        assert_eq!(got.quarantined, want.quarantined, "{name}: the same messages quarantined");
        assert_eq!(got.found, want.found, "{name}: every word found in the same turns");
        if got.export != want.export {
            let diff: Vec<(&str, &str)> =
                want.export.lines().zip(got.export.lines()).filter(|(a, b)| a != b).take(3).collect();
            panic!("{name}: the export differs from message by message's; first differences: {diff:#?}");
        }
    }
    drop(stores);
    for name in names {
        index_is_whole(Path::new(&dir.path(name)));
    }
}

/// After a batch whose refused change made it be applied again carefully, what the user writes is
/// still indexed for search and still sent (the triggers that do both are on again).
#[test]
fn after_a_batch_with_a_refused_change_new_writes_are_found_and_sent() {
    let stream = stream();
    let dir = Dir::new("after");
    let mut stores = devices(&dir, &["after.db"]);
    let me = &mut stores[0];
    apply(me, &stream, 0, stream.len());
    assert_eq!(me.sync_quarantined().unwrap().len(), 2);
    let s = me.create_session(&NewSession::new("work")).unwrap().id;
    me.append_turn(&s, &NewTurn::user("a wombat appears")).unwrap();
    let out = me.sync_outgoing(&Space::Personal, usize::MAX).unwrap();
    let sent = |m: &SyncMessage| matches!(&m.change, SyncChange::TurnAdded(t) if t.content == "a wombat appears");
    assert!(out.iter().any(sent), "the new turn waits to be sent");
    let hits = me.search(&SearchQuery::new("wombat", SearchScope::All)).unwrap();
    assert_eq!(hits.iter().map(|h| h.session_id.as_str()).collect::<Vec<_>>(), [s.as_str()], "the new turn is found");
}

/// The invariant `index_later.rs` rests on: while a synced turn is added (capture off), no trigger
/// but `turns_fts_insert` does anything. A new trigger on these tables must be done by hand there too.
#[test]
fn adding_a_synced_turn_fires_no_trigger_but_the_search_index() {
    let dir = Dir::new("triggers");
    drop(devices(&dir, &["t.db"]));
    let conn = rusqlite::Connection::open(dir.path("t.db")).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'
             AND tbl_name IN ('turns', 'sessions', 'attachments', 'blobs', 'tool_executions', 'sync_forks')
             ORDER BY name",
        )
        .unwrap();
    let triggers: Vec<(String, String)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().collect::<Result<_, _>>().unwrap();
    assert!(triggers.iter().any(|(name, _)| name == "turns_fts_insert"), "{triggers:#?}");
    // What adding a synced turn writes: rows of those tables, and these columns of existing rows.
    let updated = ["turn_count", "last_active_at", "title", "sync_session"];
    for (name, sql) in &triggers {
        let sql = sql.to_lowercase().split_whitespace().collect::<Vec<_>>().join(" ");
        let columns = sql.split_once("after update of ").and_then(|(_, rest)| rest.split_once(" on ")).map(|(c, _)| c);
        let inert = name == "turns_fts_insert"
            || sql.contains("when (select capture from sync_meta)")
            || sql.contains(" after delete on ")
            || columns.is_some_and(|c| c.split(',').all(|c| !updated.contains(&c.trim())));
        assert!(
            inert,
            "trigger {name} may fire while a synced turn is added; do its work in index_later.rs too:\n{sql}"
        );
    }
}
