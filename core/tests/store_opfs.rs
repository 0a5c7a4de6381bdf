//! The store suite again, in headless Chromium, on the OPFS `sahpool` VFS inside a dedicated worker,
//! plus what only the browser can show: durability across connections and strings from JavaScript.
#![cfg(target_arch = "wasm32")]

mod suite;

use cowork_core::store::{opfs, NewSession, Store};
use cowork_core::{NewTurn, SearchQuery, SearchScope};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

/// A fresh OPFS archive named after the test.
async fn fresh(name: &str) -> (opfs::Opfs, Store) {
    let pool = opfs::install().await.expect("OPFS installs in a dedicated worker");
    // Tests run concurrently: room for all of their archives and journals at once.
    pool.reserve(64).await.expect("reserve OPFS files");
    let file = format!("{name}.db");
    pool.remove(&file).expect("remove a leftover file");
    let store = Store::open(&file).expect("open an OPFS archive");
    (pool, store)
}

macro_rules! opfs_cases {
    ($($case:ident),* $(,)?) => {
        $(
            #[wasm_bindgen_test]
            async fn $case() {
                let (pool, mut store) = fresh(stringify!($case)).await;
                suite::$case(&mut store);
                assert_eq!(store.integrity_check().unwrap(), "ok");
                drop(store);
                pool.remove(concat!(stringify!($case), ".db")).unwrap();
            }
        )*
    };
}
store_cases!(opfs_cases);

#[wasm_bindgen_test]
async fn fts5_ranks_on_opfs() {
    let (pool, mut store) = fresh("fts5").await;
    assert!(pool.exists("fts5.db").unwrap(), "the archive is a file of the OPFS pool, not memory");
    let journal: String = store.connection().query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(journal, "wal");
    let sid = store.create_session(&NewSession::new("w")).unwrap().id;
    let texts = [
        "the heron waits by the river",
        "heron heron heron: the heron is the whole point of this note about herons and the heron",
        "nothing about birds here",
        "a heron flew past the window once",
    ];
    for text in texts {
        store.append_turn(&sid, &NewTurn::user(text)).unwrap();
    }
    let hits = store.search(&SearchQuery::new("heron", SearchScope::All)).unwrap();
    let turns: Vec<i64> = hits.iter().map(|h| h.turn_number).collect();
    assert_eq!(turns.len(), 3, "FTS5 finds exactly the turns with the word: {turns:?}");
    assert_eq!(turns[0], 2, "bm25 ranks the turn that is all about herons first: {turns:?}");
    assert!(!turns.contains(&3), "a turn without the word is not a hit: {turns:?}");
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score), "hits come best first: {hits:?}");
    let phrase = store.search(&SearchQuery::new("\"heron flew\"", SearchScope::All)).unwrap();
    assert_eq!(phrase.iter().map(|h| h.turn_number).collect::<Vec<_>>(), [4], "an exact phrase");
    drop(store);
    pool.remove("fts5.db").unwrap();
}

#[wasm_bindgen_test]
async fn a_committed_turn_survives_dropping_the_connection() {
    let (pool, mut store) = fresh("write-through").await;
    let sid = store.create_session(&NewSession::new("w")).unwrap().id;
    store.append_turn(&sid, &NewTurn::user("acknowledged before the crash")).unwrap();
    drop(store); // no further call: the commit alone must have made it durable
    let reopened = Store::open("write-through.db").unwrap();
    assert_eq!(reopened.last_turns(&sid, 1).unwrap()[0].content, "acknowledged before the crash");
    assert_eq!(reopened.integrity_check().unwrap(), "ok");
    let hits = reopened.search(&SearchQuery::new("acknowledged", SearchScope::All)).unwrap();
    assert_eq!(hits.len(), 1, "the index was committed with the turn");
    drop(reopened);
    pool.remove("write-through.db").unwrap();
}

#[wasm_bindgen_test]
async fn strings_from_javascript_with_lone_surrogates_and_nul() {
    let (pool, mut store) = fresh("js-strings").await;
    let sid = store.create_session(&NewSession::new("w")).unwrap().id;
    // A JS string holding a lone high surrogate, a lone low surrogate and a NUL.
    let js: js_sys::JsString = js_sys::JSON::parse(r#""a\ud800b\udc00c\u0000d""#).unwrap().unchecked_into();
    let text: String = js.into(); // how every string crosses from JS into the core
    assert_eq!(text, "a\u{FFFD}b\u{FFFD}c\u{0}d", "lone surrogates become U+FFFD, NUL is kept");
    let t = store.append_turn(&sid, &NewTurn::user(text.clone())).unwrap();
    assert_eq!(store.turns_range(&sid, t.turn_number, t.turn_number).unwrap()[0].content, text);
    assert!(store.search(&SearchQuery::new(text, SearchScope::All)).is_ok());
    drop(store);
    pool.remove("js-strings.db").unwrap();
}
