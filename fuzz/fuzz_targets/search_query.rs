//! Search queries (`cowork_core::store::Terms` and `Store::search`): any text becomes at most
//! `MAX_TERMS` terms, and both FTS5 expressions made from them (AND and the OR fallback) are accepted
//! by SQLite's FTS5 on the archive's real index; `Store::search` answers with results or none, never an
//! error, in every scope. The spec's promise: any search string gives results or none.
//!
//! Input layout: byte 0 bit 0 is `prefix_last` (search-as-you-type), the rest is the query (as UTF-8,
//! invalid bytes replaced).
#![no_main]

use cowork_core::store::{NewSession, Store, Terms};
use cowork_core::{NewTurn, SearchQuery, SearchScope, ToolCall};
use libfuzzer_sys::fuzz_target;

/// A small archive: a few turns with operators, quotes, identifiers, accents and emoji in them, in a
/// session and its fork.
fn archive() -> (Store, String) {
    let mut store = Store::open_in_memory().expect("open an in-memory archive");
    let sid = store.create_session(&NewSession::new("w")).expect("create a session").id;
    for text in [
        "We use JWT for auth; see src/auth.py and rotate_refresh_token_v2",
        "a NEAR b AND c (OR) \"d\" 🎉 e*f ^g col:value",
        "Café naïve façade — Grüße 日本語 ÉCOLE",
    ] {
        store.append_turn(&sid, &NewTurn::user(text)).expect("append a turn");
    }
    let call = ToolCall { id: "c1".into(), name: "read_file".into(), arguments: r#"{"path":"src/main.rs"}"#.into() };
    store.append_turn(&sid, &NewTurn::assistant_calls("Reading it.", vec![call])).expect("append a call");
    let fork = store.fork_session(&sid, 2).expect("fork").id;
    store.append_turn(&fork, &NewTurn::user("fork: token AND OR NOT")).expect("append to the fork");
    (store, fork)
}

thread_local! {
    static ARCHIVE: (Store, String) = archive();
}

fuzz_target!(|data: &[u8]| {
    let [flags, rest @ ..] = data else { return };
    let prefix_last = flags & 1 == 1;
    let text = String::from_utf8_lossy(rest);
    let terms = Terms::parse(&text, prefix_last);
    assert!(terms.len() <= cowork_core::store::MAX_TERMS, "{} terms from {text:?}", terms.len());
    assert_eq!(terms.is_empty(), terms.all().is_none(), "{text:?}");
    assert_eq!(terms.is_empty(), terms.any().is_none(), "{text:?}");

    ARCHIVE.with(|(store, fork)| {
        for expr in [terms.all(), terms.any()].into_iter().flatten() {
            let matched = store.connection().query_row(
                "SELECT count(*) FROM turns_fts WHERE turns_fts MATCH ?1",
                [expr.as_str()],
                |r| r.get::<_, i64>(0),
            );
            if let Err(e) = matched {
                panic!("FTS5 refused {expr:?} (from {text:?}, prefix_last={prefix_last}): {e}");
            }
        }
        for scope in [
            SearchScope::All,
            SearchScope::Workspace { workspace: "w".into() },
            SearchScope::Session { session_id: fork.clone() },
        ] {
            let q = SearchQuery { prefix_last, ..SearchQuery::new(text.as_ref(), scope) };
            if let Err(e) = store.search(&q) {
                panic!("search {text:?} (prefix_last={prefix_last}, {:?}) failed: {e}", q.scope);
            }
        }
    });
});
