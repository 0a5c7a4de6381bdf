//! Which matches a search ranks (`store/search.rs`): every match whatever its age, common words left
//! out when ranking their matches would cost too much, the newest window when only common words are
//! asked for, and the query plans that keep it bounded. Native only (archives of thousands of turns).
#![cfg(not(target_arch = "wasm32"))]

use cowork_core::store::{NewSession, Store, RANK_BUDGET};
use cowork_core::{NewTurn, Role, SearchHit, SearchQuery, SearchScope};

const FACT: &str = "Note: the staging database password rotates every 90 days on the kilimanjaro host.";

/// Plain chat filler: common words in every turn, and now and then a word of the question
/// (staging, host, password), so the question's words are not unique to the fact.
fn filler(i: usize) -> String {
    const WORDS: &[&str] = &[
        "the", "we", "what", "did", "say", "about", "for", "to", "and", "a", "it", "is", "that", "this", "with", "on",
        "be", "not", "can", "should", "when", "then", "so", "now", "test", "file", "change", "code", "build", "fix",
        "review", "merge", "deploy", "config", "cache", "error", "value", "request",
    ];
    let mut seed = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = String::new();
    for _ in 0..40 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        out.push_str(WORDS[(seed % WORDS.len() as u64) as usize]);
        out.push(' ');
    }
    for (every, word) in [(37, "staging"), (53, "host"), (71, "password")] {
        if i.is_multiple_of(every) {
            out.push_str(word);
            out.push(' ');
        }
    }
    out
}

/// A session of `n` turns, the fact first when `fact`; returns its id.
fn session(store: &mut Store, workspace: &str, n: usize, fact: bool) -> String {
    let sid = store.create_session(&NewSession::new(workspace)).unwrap().id;
    let turns: Vec<NewTurn> = (1..=n)
        .map(|i| {
            let text = if fact && i == 1 { FACT.to_owned() } else { filler(i) };
            if i % 2 == 1 {
                NewTurn::user(text)
            } else {
                NewTurn::assistant(text)
            }
        })
        .collect();
    store.append_turns(&sid, &turns).unwrap();
    sid
}

fn search(store: &Store, text: &str, scope: SearchScope) -> Vec<SearchHit> {
    store.search(&SearchQuery { limit: 10, ..SearchQuery::new(text, scope) }).unwrap()
}

#[test]
fn a_rare_fact_in_the_first_of_5000_turns_is_found_among_common_words() {
    let mut store = Store::open_in_memory().unwrap();
    session(&mut store, "w", 3_000, false);
    let sid = session(&mut store, "w", 5_000, true);
    session(&mut store, "w", 2_000, false);
    const { assert!(5_000 > RANK_BUDGET, "the session is bigger than the ranking budget") };
    let question = "what did we say about the password for the staging host?";
    for scope in [SearchScope::Session { session_id: sid.clone() }, SearchScope::Workspace { workspace: "w".into() }] {
        let hits = search(&store, question, scope.clone());
        let at = hits.iter().position(|h| h.session_id == sid && h.turn_number == 1);
        assert_eq!(at, Some(0), "{scope:?}: the fact is the top hit: {:?}", &hits[..hits.len().min(3)]);
        let top = &hits[0];
        let marked: Vec<&str> = top.highlights.iter().map(|&(a, b)| &top.snippet[a..b]).collect();
        assert!(marked.contains(&"password") && marked.contains(&"staging"), "highlights {marked:?}");
        assert!(!marked.contains(&"the"), "a common word left out is not highlighted: {marked:?}");
    }
    // Search-as-you-type finds it too, and so does the rare word alone.
    let typed = store
        .search(&SearchQuery { prefix_last: true, ..SearchQuery::new("staging passw", SearchScope::All) })
        .unwrap();
    assert_eq!((typed[0].session_id.as_str(), typed[0].turn_number), (sid.as_str(), 1));
    assert_eq!(search(&store, "kilimanjaro", SearchScope::All).len(), 1);
}

#[test]
fn a_query_of_only_common_words_still_finds_turns_that_hold_them_all() {
    let mut store = Store::open_in_memory().unwrap();
    let sid = session(&mut store, "w", 5_000, true);
    let words = ["what", "did", "we", "say", "about", "the"];
    let hits = search(&store, &words.join(" "), SearchScope::Session { session_id: sid.clone() });
    assert_eq!(hits.len(), 10, "common words find something");
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score), "ranked best first");
    for h in &hits {
        let turn = &store.turns_range(&sid, h.turn_number, h.turn_number).unwrap()[0];
        let held: Vec<&str> = turn.content.split_whitespace().collect();
        assert!(words.iter().all(|w| held.contains(w)), "turn {} holds every word", h.turn_number);
        assert!(!h.highlights.is_empty(), "with its words highlighted");
    }
    // One very common word: the newest of its matches.
    let the = search(&store, "the", SearchScope::All);
    assert_eq!(the.len(), 10);
    assert!(the.iter().all(|h| h.turn_number > 4_000), "of very many matches, recent ones: {the:?}");
}

#[test]
fn a_possessive_matches_the_name() {
    let mut store = Store::open_in_memory().unwrap();
    let sid = store.create_session(&NewSession::new("w")).unwrap().id;
    store.append_turn(&sid, &NewTurn::user("Caroline went to the LGBTQ support group yesterday.")).unwrap();
    store.append_turn(&sid, &NewTurn::assistant("That sounds like a good group.")).unwrap();
    store.append_turn(&sid, &NewTurn::user("Melanie's painting is finished.")).unwrap();
    let hits = search(&store, "When did Caroline's support group meet?", SearchScope::All);
    assert_eq!(hits.first().map(|h| h.turn_number), Some(1), "{hits:?}");
    let hits = search(&store, "Melanie’s painting", SearchScope::All);
    assert_eq!(hits.first().map(|h| h.turn_number), Some(3), "curly apostrophes too: {hits:?}");
    assert_eq!(search(&store, "Melanie", SearchScope::All).len(), 1, "and the text's possessive matches the name");
}

#[test]
fn an_old_strong_match_beats_a_newer_weak_one() {
    let mut store = Store::open_in_memory().unwrap();
    let sid = store.create_session(&NewSession::new("w")).unwrap().id;
    store
        .append_turn(&sid, &NewTurn::user("The kestrel nest is on the north tower; the kestrel nest is safe."))
        .unwrap();
    let mut turns: Vec<NewTurn> = (2..=1_500).map(|i| NewTurn::assistant(filler(i))).collect();
    turns.push(NewTurn::user(format!("{} and a kestrel flew by.", filler(7))));
    store.append_turns(&sid, &turns).unwrap();
    let hits = search(&store, "kestrel nest", SearchScope::Session { session_id: sid.clone() });
    assert_eq!(hits.iter().map(|h| h.turn_number).collect::<Vec<_>>(), [1, 1_501], "by score, not age");
    assert!(hits[0].score > hits[1].score);
    let users = store
        .search(&SearchQuery { roles: vec![Role::User], ..SearchQuery::new("kestrel", SearchScope::All) })
        .unwrap();
    assert_eq!(users.iter().map(|h| h.turn_number).collect::<Vec<_>>(), [1, 1_501]);
}

/// Both candidate queries (every match, and the newest window) are driven by the full-text index, look
/// each candidate up by rowid, and sort nothing in SQLite (the candidates are sorted in Rust).
#[test]
fn every_candidate_query_is_driven_by_the_full_text_index() {
    let mut store = Store::open_in_memory().unwrap();
    let sid = session(&mut store, "w", 10, true);
    for (scope, roles) in [
        (SearchScope::Session { session_id: sid }, vec![]),
        (SearchScope::Workspace { workspace: "w".into() }, vec![]),
        (SearchScope::All, vec![]),
        (SearchScope::All, vec![Role::User]),
    ] {
        let q = SearchQuery { roles, ..SearchQuery::new("refresh token", scope.clone()) };
        let plan = store.explain_search(&q).unwrap();
        let fts: Vec<&String> = plan.iter().filter(|p| p.contains("turns_fts")).collect();
        assert_eq!(fts.len(), 2, "{scope:?}: two candidate queries: {plan:?}");
        assert!(fts.iter().all(|p| p.contains("VIRTUAL TABLE INDEX")), "{scope:?}: {plan:?}");
        for line in plan.iter().filter(|p| !p.contains("turns_fts")) {
            assert!(
                line.contains("USING INTEGER PRIMARY KEY") || line.contains("USING INDEX sqlite_autoindex_sessions"),
                "{scope:?}: each candidate is looked up, nothing is scanned: {plan:?}"
            );
        }
        assert!(!plan.iter().any(|p| p.contains("TEMP B-TREE")), "{scope:?}: no sort in SQLite: {plan:?}");
        assert!(plan[0].contains("turns_fts"), "{scope:?}: the index is the outer loop: {plan:?}");
    }
}

/// A session of `n` turns, each saying "refresh token" one to four times among filler of its own
/// length, every third in a tool call's arguments too (`search_extra`, weighed at 0.5), so bm25 has
/// hit counts, columns and lengths to tell apart; returns its id.
fn token_talk(store: &mut Store, n: usize) -> String {
    let sid = store.create_session(&NewSession::new("w")).unwrap().id;
    let turns: Vec<NewTurn> = (1..=n)
        .map(|i| {
            let filler: String = filler(i).split(' ').take(5 + (i * 7) % 30).collect::<Vec<_>>().join(" ");
            let text = format!("{filler} {}", "the refresh token expired; ".repeat(1 + i % 4));
            match i % 3 {
                0 => NewTurn::assistant_calls(
                    text,
                    vec![cowork_core::ToolCall {
                        id: format!("c{i}"),
                        name: "rotate".into(),
                        arguments: format!("{{\"why\": \"{}\"}}", "refresh token ".repeat(i % 5)),
                    }],
                ),
                _ => NewTurn::user(text),
            }
        })
        .collect();
    store.append_turns(&sid, &turns).unwrap();
    sid
}

/// The newest window's ten best by FTS5's own `bm25()`, as the search orders them (best first, the
/// newest among equals).
fn window_by_bm25(store: &Store, expr: &str) -> Vec<i64> {
    let mut scored: Vec<(i64, f64)> = store
        .connection()
        .prepare("SELECT rowid, -bm25(turns_fts, 1.0, 0.5) FROM turns_fts WHERE turns_fts MATCH ?1 ORDER BY rowid DESC LIMIT 400")
        .unwrap()
        .query_map([expr], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    scored.into_iter().take(10).map(|(id, _)| id).collect()
}

#[test]
fn the_newest_window_is_ranked_in_bm25s_order_without_its_count_of_every_match() {
    let mut store = Store::open_in_memory().unwrap();
    token_talk(&mut store, RANK_BUDGET + 1_000);
    for q in ["\"refresh token\"", "refresh_token", "refresh", "the", "token expired", "\"token expired\" the"] {
        let expr = cowork_core::store::Terms::parse(q, false).all().unwrap();
        let matches: i64 = store
            .connection()
            .query_row("SELECT count(*) FROM turns_fts WHERE turns_fts MATCH ?1", [&expr], |r| r.get(0))
            .unwrap();
        assert!(matches as usize > RANK_BUDGET, "{q:?} must leave only the newest window to rank ({matches} matches)");
        let got: Vec<i64> = search(&store, q, SearchScope::All).iter().map(|h| h.turn_id).collect();
        assert_eq!(got, window_by_bm25(&store, &expr), "{q:?} ranked as bm25 ranks the newest window");
    }
    // One phrase: bm25 is the phrase's IDF times bm25_one, the same for every row; more than one
    // phrase: bm25_one gives way (NULL) to bm25.
    let ratios: Vec<f64> = store
        .connection()
        .prepare("SELECT bm25(turns_fts, 1.0, 0.5) / bm25_one(turns_fts, 1.0, 0.5) FROM turns_fts WHERE turns_fts MATCH '\"refresh token\"'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let (lo, hi) = ratios.iter().fold((f64::MAX, f64::MIN), |(lo, hi), r| (lo.min(*r), hi.max(*r)));
    assert!(lo > 0.0 && (hi - lo) / lo < 1e-9, "one IDF for every row: {lo} .. {hi}");
    let nulls: i64 = store
        .connection()
        .query_row(
            "SELECT count(*) FROM turns_fts WHERE turns_fts MATCH 'refresh AND expired' AND bm25_one(turns_fts) IS NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(nulls as usize > RANK_BUDGET, "two phrases: bm25_one leaves the score to bm25");
}
