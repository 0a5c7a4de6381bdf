//! JSONL import (`Store::import_jsonl`) into a fresh archive: never panics; a file is either imported
//! or refused with an error naming a line of it; an imported file can be exported, imported into
//! another fresh archive and exported again with identical output (the format is lossless); every
//! imported turn is visible when its session is read; and the JSON a file holds (session state, turn
//! metadata, manifest usage) comes back from the archive exactly as the file says, numbers included.
//!
//! Input: the file's bytes (as UTF-8, invalid bytes replaced). `fuzz/jsonl.dict` holds the format's
//! field names, which helps the fuzzer build valid lines.
#![no_main]

use cowork_core::store::{SessionFilter, Store};
use cowork_core::Error;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use std::collections::HashMap;

fn fresh() -> Store {
    Store::open_in_memory().expect("open an in-memory archive")
}

/// Every turn stored in `store` must come back when reading the session it is stored under, from turn
/// 1 to the session's turn count.
fn assert_every_turn_visible(store: &Store, file: &str) {
    let all = SessionFilter { include_archived: true, limit: usize::MAX >> 1, ..SessionFilter::default() };
    let mut visible = 0;
    for s in store.list_sessions(&all).expect("list sessions") {
        let turns = store.turns_range(&s.id, 1, s.turn_count).expect("read a session's turns");
        visible += turns.iter().filter(|t| t.session_id == s.id).count() as i64;
    }
    let stored = store.stats().expect("stats").turns;
    assert_eq!(visible, stored, "{stored} turns imported but only {visible} visible in their sessions; file:\n{file}");
}

/// The free-form JSON of every imported line equals what the archive gives back.
fn assert_json_comes_back(store: &Store, file: &str) {
    let mut usages: HashMap<String, Vec<Value>> = HashMap::new();
    for line in file.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()) {
        let id = |key: &str| line[key].as_str().expect("an imported line has its ids").to_owned();
        match line["type"].as_str() {
            Some("session") => {
                let state = store.get_session(&id("id")).expect("an imported session").state;
                assert_eq!(state, line["state"], "the state of session {} changed; file:\n{file}", id("id"));
            }
            Some("turn") => {
                let n = line["turn_number"].as_i64().expect("a turn number");
                let turns = store.turns_range(&id("session_id"), n, n).expect("read an imported turn");
                assert_eq!(turns.len(), 1, "turn {n} of session {} is missing; file:\n{file}", id("session_id"));
                assert_eq!(turns[0].metadata, line["metadata"], "the metadata of turn {n} changed; file:\n{file}");
            }
            Some("manifest") => usages.entry(id("session_id")).or_default().push(line["usage"].clone()),
            _ => {}
        }
    }
    for (sid, expected) in usages {
        let mut stored = store.manifests(&sid, usize::MAX >> 1).expect("read manifests");
        stored.reverse();
        let stored: Vec<Value> = stored.into_iter().map(|m| m.usage).collect();
        assert_eq!(stored, expected, "the usage in the manifests of session {sid} changed; file:\n{file}");
    }
}

fuzz_target!(|data: &[u8]| {
    let file = String::from_utf8_lossy(data);
    let mut store = fresh();
    match store.import_jsonl(&file) {
        Ok(summary) => {
            assert_eq!(summary.sessions_skipped, 0, "nothing to skip in a fresh archive");
            let stats = store.stats().expect("stats");
            assert_eq!(stats.turns, summary.turns_added as i64, "the summary counts the turns added");
            assert_every_turn_visible(&store, &file);
            assert_json_comes_back(&store, &file);

            let first = store.export_jsonl(None).expect("export what was imported");
            let mut again = fresh();
            if let Err(e) = again.import_jsonl(&first) {
                panic!("our own export is refused: {e}\nexport:\n{first}\nfrom file:\n{file}");
            }
            let second = again.export_jsonl(None).expect("export again");
            assert_eq!(first, second, "export → import → export changed the archive; file:\n{file}");
        }
        Err(Error::Import { line, message }) => {
            let lines = file.lines().count();
            assert!(line >= 1 && line <= lines + 1, "error names line {line} of a {lines}-line file: {message}");
            assert_eq!(store.stats().expect("stats").sessions, 0, "a refused file imports nothing");
        }
        Err(other) => panic!("an import error must name the line, got: {other}\nfile:\n{file}"),
    }
});
