//! The store test suite, run twice: natively on SQLite (`store_native.rs`) and in headless Chromium on
//! OPFS inside a dedicated worker (`store_opfs.rs`). Each case takes a fresh, empty store.

#![allow(dead_code)]

mod attachments;
mod context_reads;
pub mod semantic;
pub use attachments::*;
pub use context_reads::*;
pub use semantic::*;

use cowork_core::store::{BranchPoint, NewSession, NewToolExecution, SessionFilter, Store};
use cowork_core::{
    Approval, ContextManifest, Error, NewTurn, Role, SearchQuery, SearchScope, TaskRecord, ToolCall, TurnStatus,
    WorkspaceSettings,
};

/// Runs `$mac!(case, case, ...)` over every case name, so each runner declares one test per case. A case
/// is a `fn name(store: &mut Store)` of the suite; one missing here would run on neither backend, which
/// `every_case_of_the_suite_is_listed_and_runs_on_both_backends` (`store_native.rs`) refuses.
#[macro_export]
macro_rules! store_cases {
    ($mac:ident) => {
        $mac!(
            append_numbers_turns_and_titles_the_session,
            content_comes_back_verbatim,
            large_turns_are_stored_whole,
            search_finds_words_phrases_identifiers_and_paths,
            search_finds_other_forms_of_a_word,
            search_is_scoped_filtered_and_names_session_and_turn,
            reasoning_is_searchable_but_ranked_below_content,
            any_search_string_is_safe,
            fork_reads_parent_turns_through_a_pointer,
            deleting_a_parent_keeps_its_forks_whole,
            sessions_list_rename_archive_and_workspaces,
            interrupted_turn_is_checkpointed_then_finalised,
            tool_executions_by_name_newest_first,
            tasks_events_manifests_and_calibration,
            resume_gives_state_and_last_turns,
            export_import_round_trip_and_no_duplicates,
            bad_import_files_add_nothing_and_name_the_line,
            openai_messages_import_once,
            markdown_export_reads_well,
            stats_count_what_is_stored,
            a_client_key_finds_the_earlier_attempt,
            workspace_settings_are_kept_and_travel_with_an_export,
            edits_and_regenerations_are_branches_of_one_conversation,
            a_manifest_names_the_turns_whose_reasoning_went_out,
            attachments_are_kept_with_their_turn_and_stored_once,
            deleting_a_session_keeps_blobs_other_turns_carry,
            search_finds_words_inside_text_attachments_and_their_names,
            too_large_corrupt_and_svg_attachments,
            attachments_export_and_import_byte_for_byte,
            a_paraphrase_is_found_by_meaning_and_marked_so,
            semantic_search_keeps_to_scope_and_fork_points,
            the_reply_next_to_a_strong_hit_ranks_with_it,
            vectors_go_with_their_turn_and_a_fork_keeps_its_copies,
            a_model_change_reindexes_and_indexing_resumes_where_it_stopped,
            long_turns_are_embedded_in_chunks_and_changed_text_again,
            a_text_file_is_embedded_with_its_turn,
            the_index_is_in_no_export_and_no_sync_message,
            a_synced_change_that_cannot_be_applied_is_kept_aside,
            context_sees_every_change_since_the_last_request,
            a_phrase_in_thousands_of_turns_ranks_its_newest_window
        );
    };
}

fn session(store: &mut Store, workspace: &str) -> String {
    store.create_session(&NewSession::new(workspace)).expect("create session").id
}

fn user(store: &mut Store, sid: &str, text: &str) -> i64 {
    store.append_turn(sid, &NewTurn::user(text)).expect("append user turn").turn_number
}

fn call(id: &str, name: &str, args: &str) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments: args.into() }
}

fn search(store: &Store, text: &str, scope: SearchScope) -> Vec<(String, i64)> {
    store
        .search(&SearchQuery { limit: 50, ..SearchQuery::new(text, scope) })
        .unwrap_or_else(|e| panic!("search {text:?} failed: {e}"))
        .into_iter()
        .map(|h| (h.session_id, h.turn_number))
        .collect()
}

fn numbers(hits: &[(String, i64)]) -> Vec<i64> {
    let mut n: Vec<i64> = hits.iter().map(|h| h.1).collect();
    n.sort();
    n
}

pub fn append_numbers_turns_and_titles_the_session(store: &mut Store) {
    let sid = session(store, "w");
    assert_eq!(store.get_session(&sid).unwrap().title, "", "a new session is untitled");
    assert_eq!(user(store, &sid, "  Fix the login bug\nDetails: it 500s on refresh  "), 1);
    let t = store.append_turn(&sid, &NewTurn::assistant("On it.")).unwrap();
    assert_eq!(t.turn_number, 2);
    assert_eq!(user(store, &sid, "Second message does not retitle"), 3);
    let s = store.get_session(&sid).unwrap();
    assert_eq!(s.title, "Fix the login bug");
    assert_eq!(s.turn_count, 3);
    assert_eq!(store.turn_count(&sid).unwrap(), 3);
    let all = store.get_turns(&sid, 0, 100).unwrap();
    assert_eq!(all.iter().map(|t| t.role).collect::<Vec<_>>(), [Role::User, Role::Assistant, Role::User]);
    assert_eq!(store.get_turns(&sid, 1, 1).unwrap()[0].content, "On it.");
    assert_eq!(store.last_turns(&sid, 2).unwrap().iter().map(|t| t.turn_number).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(store.turns_before(&sid, Some(3), 5).unwrap().len(), 2);

    let long = "x".repeat(300);
    let sid2 = session(store, "w");
    user(store, &sid2, &long);
    let title = store.get_session(&sid2).unwrap().title;
    assert_eq!(title.chars().count(), 100, "titles are clipped to 100 characters");
    assert!(title.ends_with('…'));

    assert!(matches!(store.append_turn("no-such-session", &NewTurn::user("x")), Err(Error::SessionNotFound(_))));
}

pub fn content_comes_back_verbatim(store: &mut Store) {
    let sid = session(store, "w");
    let samples = [
        "emoji 🎉 and ñ, 中文, עברית",
        "windows\r\nline endings\r\n",
        "nul \0 inside",
        "",
        "   leading and trailing spaces   ",
        "<script>alert('x')</script> & \"quotes\"",
    ];
    for s in samples {
        let n = user(store, &sid, s);
        let got = &store.turns_range(&sid, n, n).unwrap()[0];
        assert_eq!(got.content, s, "content must round-trip exactly");
    }
    let calls = vec![call("call_1", "read_file", r#"{"path":"src/auth.py"}"#), call("call_2", "bash", "{not json")];
    let t = store.append_turn(&sid, &NewTurn::assistant_calls("", calls.clone())).unwrap();
    let got = &store.turns_range(&sid, t.turn_number, t.turn_number).unwrap()[0];
    assert_eq!(got.tool_calls, calls, "tool calls keep their ids and raw arguments, even invalid JSON");
    let mut meta = NewTurn::assistant("done");
    meta.metadata = serde_json::json!({"finish_reason": "stop", "usage": {"prompt_tokens": 12}});
    let t = store.append_turn(&sid, &meta).unwrap();
    assert_eq!(store.turns_range(&sid, t.turn_number, t.turn_number).unwrap()[0].metadata, meta.metadata);
}

pub fn large_turns_are_stored_whole(store: &mut Store) {
    let sid = session(store, "w");
    let big_user = "word ".repeat(200_000); // 1 MB
    let n = user(store, &sid, &big_user);
    let tool_output: String = (0..10 * 1024 * 1024 / 64).map(|i| format!("{i:>63}\n")).collect(); // 10 MB
    let t = store.append_turn(&sid, &NewTurn::tool_result("c1", "bash", tool_output.clone())).unwrap();
    assert_eq!(store.turns_range(&sid, n, n).unwrap()[0].content.len(), big_user.len());
    let back = &store.turns_range(&sid, t.turn_number, t.turn_number).unwrap()[0];
    assert!(back.content == tool_output, "the 10 MB tool output comes back byte for byte");
    assert!(back.token_count > 2_000_000, "the token estimate covers the whole output");
    assert_eq!(numbers(&search(store, "163839", SearchScope::All)), [t.turn_number], "the last line of 10 MB is found");
}

pub fn search_finds_words_phrases_identifiers_and_paths(store: &mut Store) {
    let sid = session(store, "w");
    user(store, &sid, "We decided to use JWT for Authentication."); // 1
    store.append_turn(&sid, &NewTurn::assistant("I updated rotate_refresh_token_v2 in src/auth.py")).unwrap(); // 2
    store.append_turn(&sid, &NewTurn::assistant("The token will refresh later, not now.")).unwrap(); // 3
    let calls = vec![call("c1", "read_file", r#"{"path":"src/db/migrations.sql"}"#)];
    store.append_turn(&sid, &NewTurn::assistant_calls("Let me look.", calls)).unwrap(); // 4
    store.append_turn(&sid, &NewTurn::user("Café crème and naïve résumé")).unwrap(); // 5
    let all = SearchScope::All;
    assert_eq!(numbers(&search(store, "jwt", all.clone())), [1], "words, case-insensitively");
    assert_eq!(numbers(&search(store, "AUTHENTICATION", all.clone())), [1]);
    assert_eq!(numbers(&search(store, "\"use JWT for\"", all.clone())), [1], "exact phrases");
    assert_eq!(numbers(&search(store, "\"for use JWT\"", all.clone())), Vec::<i64>::new(), "a phrase is ordered");
    assert_eq!(numbers(&search(store, "refresh_token", all.clone())), [2], "identifier inside a longer identifier");
    assert_eq!(numbers(&search(store, "refresh token", all.clone())), [2, 3], "plain words match both");
    assert_eq!(numbers(&search(store, "src/auth.py", all.clone())), [2], "paths");
    assert_eq!(numbers(&search(store, "migrations.sql", all.clone())), [4], "tool-call arguments are searchable");
    assert_eq!(numbers(&search(store, "cafe resume", all.clone())), [5], "diacritics are folded");
    // "Authent" is the stem of "Authentication" (the index stems words), "Authenti" is not.
    assert_eq!(numbers(&search(store, "Authenti", all.clone())), Vec::<i64>::new(), "no prefix match unless asked");
    let prefix =
        store.search(&SearchQuery { prefix_last: true, ..SearchQuery::new("Authenti", SearchScope::All) }).unwrap();
    // Its shorter forms (the stems a longer word may have) also find "auth" in src/auth.py, below it.
    assert_eq!(prefix.first().map(|h| h.turn_number), Some(1), "prefix search for as-you-type: {prefix:?}");
    assert_eq!(numbers(&search(store, "jwt kangaroo", all.clone())), [1], "no turn has both: any term, ranked");

    let hits = store.search(&SearchQuery::new("rotate_refresh_token_v2", SearchScope::All)).unwrap();
    let h = &hits[0];
    assert!(h.snippet.contains("rotate_refresh_token_v2"), "snippet shows the match: {:?}", h.snippet);
    let marked: Vec<&str> = h.highlights.iter().map(|&(a, b)| &h.snippet[a..b]).collect();
    assert_eq!(marked, ["rotate_refresh_token_v2"], "the highlight covers the matched identifier");
}

pub fn search_finds_other_forms_of_a_word(store: &mut Store) {
    let sid = session(store, "w");
    user(store, &sid, "She has been researching pottery glazes since March."); // 1
    user(store, &sid, "Running every morning keeps me happy."); // 2
    user(store, &sid, "I was caring for the neighbours' cats."); // 3
    let all = SearchScope::All;
    assert_eq!(numbers(&search(store, "research", all.clone())), [1], "a stem finds its inflected form");
    assert_eq!(numbers(&search(store, "researched glaze", all.clone())), [1], "and another form finds it");
    assert_eq!(numbers(&search(store, "\"researched pottery\"", all.clone())), [1], "phrases are stemmed too");
    assert_eq!(numbers(&search(store, "ran", all.clone())), Vec::<i64>::new(), "irregular forms are not");
    let hits = store.search(&SearchQuery::new("runs", all.clone())).unwrap();
    let marked: Vec<&str> = hits[0].highlights.iter().map(|&(a, b)| &hits[0].snippet[a..b]).collect();
    assert_eq!(marked, ["Running"], "the word as written is highlighted");
    // Search-as-you-type finds a word at every letter typed, past its stem too.
    for (typed, turn) in [("researchi", 1), ("runn", 2), ("runnin", 2), ("happ", 2), ("cari", 3), ("neighbou", 3)] {
        let hits = store.search(&SearchQuery { prefix_last: true, ..SearchQuery::new(typed, all.clone()) }).unwrap();
        assert!(hits.iter().any(|h| h.turn_number == turn), "{typed:?} finds turn {turn}: {hits:?}");
    }
    // A word typed part way that some word begins with is not widened to shorter stems, which would
    // rank "starts" (stem "start") above "starter" while "starte" is typed.
    user(store, &sid, "Feed the rye starter twice daily."); // 4
    user(store, &sid, "The migration starts at the north gate."); // 5
    for typed in ["rye st", "rye starte", "rye starter"] {
        let hits = store.search(&SearchQuery { prefix_last: true, ..SearchQuery::new(typed, all.clone()) }).unwrap();
        assert_eq!(hits.first().map(|h| h.turn_number), Some(4), "{typed:?} keeps the rye starter first: {hits:?}");
    }
}

/// A phrase in more turns than a search ranks one by one: the newest window of its matches is ranked
/// (`store/search.rs`), by `bm25_one` for one phrase (`store/fts_rank.rs`), in the browser's SQLite too.
pub fn a_phrase_in_thousands_of_turns_ranks_its_newest_window(store: &mut Store) {
    let sid = session(store, "w");
    let many = cowork_core::store::RANK_BUDGET + 200;
    let turns: Vec<NewTurn> = (0..many)
        .map(|i| {
            NewTurn::user(format!("turn {i}: we talked about the session, then the refresh token, at length again"))
        })
        .collect();
    store.append_turns(&sid, &turns).unwrap();
    // Older than the window: not ranked, however strong.
    let strong = "refresh token refresh token refresh token";
    let window = cowork_core::store::FALLBACK_WINDOW as i64;
    store.append_turn(&sid, &NewTurn::assistant(strong)).unwrap();
    let old = store.turn_count(&sid).unwrap();
    let more: Vec<NewTurn> = (0..window)
        .map(|i| NewTurn::user(format!("later {i}: the refresh token again, said once more at length")))
        .collect();
    store.append_turns(&sid, &more).unwrap();
    // In the window: the two strongest, the shortest first.
    store.append_turn(&sid, &NewTurn::assistant("refresh token, refresh token: both rotated.")).unwrap();
    let short = store.turn_count(&sid).unwrap();
    store
        .append_turn(&sid, &NewTurn::user("Rotate the refresh token and the other refresh token, please, today."))
        .unwrap();
    let long = store.turn_count(&sid).unwrap();
    let hits = search(store, "\"refresh token\"", SearchScope::All);
    let numbers: Vec<i64> = hits.iter().map(|h| h.1).take(2).collect();
    assert_eq!(numbers, [short, long], "the window's strongest first, in bm25's order: {hits:?}");
    assert!(!hits.iter().any(|h| h.1 == old), "a turn older than the window is not ranked");
    assert_eq!(hits.len(), 50);
}

pub fn search_is_scoped_filtered_and_names_session_and_turn(store: &mut Store) {
    let a = session(store, "alpha");
    let b = session(store, "alpha");
    let c = session(store, "beta");
    user(store, &a, "postgres connection pool in alpha A");
    user(store, &b, "postgres tuning in alpha B");
    store.append_turn(&b, &NewTurn::assistant("postgres answer from the assistant")).unwrap();
    user(store, &c, "postgres in beta");
    let scoped = |s: SearchScope| {
        let mut v = search(store, "postgres", s);
        v.sort();
        v
    };
    assert_eq!(scoped(SearchScope::Session { session_id: a.clone() }), [(a.clone(), 1)]);
    let ws = scoped(SearchScope::Workspace { workspace: "alpha".into() });
    assert_eq!(ws.len(), 3);
    assert!(ws.iter().all(|(s, _)| s == &a || s == &b), "workspace scope stays in its workspace");
    assert_eq!(scoped(SearchScope::All).len(), 4);
    let users = store
        .search(&SearchQuery { roles: vec![Role::Assistant], ..SearchQuery::new("postgres", SearchScope::All) })
        .unwrap();
    assert_eq!(users.iter().map(|h| (h.session_id.clone(), h.turn_number)).collect::<Vec<_>>(), [(b.clone(), 2)]);
    assert_eq!(users[0].session_title, "postgres tuning in alpha B", "hits name their session");
    assert_eq!(users[0].role, Role::Assistant);
    let limited = store.search(&SearchQuery { limit: 2, ..SearchQuery::new("postgres", SearchScope::All) }).unwrap();
    assert_eq!(limited.len(), 2);
    let mut ranked_store_hits = store.search(&SearchQuery::new("postgres", SearchScope::All)).unwrap();
    ranked_store_hits.dedup_by(|x, y| x.score == y.score);
    assert!(ranked_store_hits.windows(2).all(|w| w[0].score >= w[1].score), "hits are ranked best first");
}

/// A reply's reasoning (its metadata, not its text) is found by search, but a turn that says the
/// word ranks above one whose model only thought it, even when the thinking is newer and shorter.
pub fn reasoning_is_searchable_but_ranked_below_content(store: &mut Store) {
    let s = session(store, "w");
    user(store, &s, "Which bird should the logo show? I like the kestrel and its hover.");
    let mut thought = NewTurn::assistant("A small falcon would suit it.");
    thought.metadata = serde_json::json!({"reasoning": "They mentioned a kestrel; suggest it."});
    store.append_turn(&s, &thought).unwrap();
    // Streamed replies get their reasoning when they are finalised.
    let streamed = store.append_turn(&s, &NewTurn::assistant("").with_status(TurnStatus::Interrupted)).unwrap();
    let mut done = NewTurn::assistant("Done.");
    done.metadata = serde_json::json!({"reasoning": "Ospreys dive for fish."});
    store.finalize_turn(&s, streamed.turn_number, &done).unwrap();

    assert_eq!(search(store, "kestrel", SearchScope::All), [(s.clone(), 1), (s.clone(), 2)], "content first");
    assert_eq!(search(store, "ospreys", SearchScope::All), [(s.clone(), 3)], "found in a finalised reply's reasoning");
    assert_eq!(search(store, "falcon", SearchScope::All), [(s.clone(), 2)], "the text itself is content");
}

/// What reasoning a request sent back is recorded with its manifest, beside what was shortened, and
/// read back as it was; a manifest without any reads as before.
pub fn a_manifest_names_the_turns_whose_reasoning_went_out(store: &mut Store) {
    let sid = session(store, "w");
    let manifest = |trimmed: Vec<i64>, reasoning: Vec<i64>| ContextManifest {
        session_id: sid.clone(),
        turn_numbers: vec![1, 2, 3, 4, 5],
        trimmed_turns: trimmed,
        reasoning_turns: reasoning,
        state_version: 1,
        estimated_tokens: 90,
        budget_tokens: 8000,
        usage: serde_json::Value::Null,
        created_at: 7,
    };
    store.record_manifest(&manifest(vec![3], vec![])).unwrap();
    store.record_manifest(&manifest(vec![], vec![2, 4])).unwrap();
    store.record_manifest(&manifest(vec![3], vec![4])).unwrap();
    let back = store.manifests(&sid, 5).unwrap();
    let got: Vec<(Vec<i64>, Vec<i64>)> =
        back.iter().map(|m| (m.trimmed_turns.clone(), m.reasoning_turns.clone())).collect();
    assert_eq!(got, [(vec![3], vec![4]), (vec![], vec![2, 4]), (vec![3], vec![])], "newest first");
    assert_eq!(back[2], manifest(vec![3], vec![]));
}

/// Strings made of FTS5 syntax and other hostile input.
pub const HOSTILE_QUERIES: &[&str] = &[
    "\"",
    "\"\"",
    "\"unbalanced",
    "*",
    "**",
    "a*",
    "*a",
    "NEAR(",
    "NEAR(a b",
    "NEAR(a b, 3)",
    "a NEAR b",
    "^",
    "^a",
    "(",
    ")",
    "((a)",
    "a)",
    "AND",
    "OR",
    "NOT",
    "a AND",
    "OR b",
    "NOT NOT",
    "a:b",
    "col:",
    ":",
    "-",
    "-a",
    "+a",
    "{a b}",
    "[a]",
    "'",
    "''",
    "\\",
    "\\\"",
    ";",
    "'; DROP TABLE turns; --",
    "%",
    "_",
    "🎉",
    "👨‍👩‍👧",
    "\u{0}",
    "\u{FFFD}",
    "\u{E000}\u{E001}",
    " ",
    "\t\n",
    "a\"b\"c\"",
    "\"a\" \"b",
    "rank:",
    "bm25(",
    "*)(\"^:",
];

pub fn any_search_string_is_safe(store: &mut Store) {
    let sid = session(store, "w");
    user(store, &sid, "NEAR the AND gate, col:value and a*b with \"quotes\" and 🎉");
    let mut queries: Vec<String> = HOSTILE_QUERIES.iter().map(|s| s.to_string()).collect();
    queries.push("x".repeat(10 * 1024));
    queries.push("NEAR( ".repeat(2000));
    queries.push("\"".repeat(5000));
    for q in &queries {
        for scope in [SearchScope::All, SearchScope::Session { session_id: sid.clone() }] {
            for prefix_last in [false, true] {
                let r = store.search(&SearchQuery { prefix_last, ..SearchQuery::new(q.clone(), scope.clone()) });
                assert!(r.is_ok(), "search for {:?} failed: {:?}", &q[..q.len().min(40)], r.err());
            }
        }
    }
    assert_eq!(numbers(&search(store, "NEAR(", SearchScope::All)), [1], "operators are searched as words");
    assert_eq!(numbers(&search(store, "col:value", SearchScope::All)), [1]);
}

pub fn fork_reads_parent_turns_through_a_pointer(store: &mut Store) {
    let p = session(store, "w");
    for i in 1..=5 {
        user(store, &p, &format!("parent turn {i} kiwi{i}"));
    }
    let before = store.stats().unwrap().turns;
    let f = store.fork_session(&p, 3).unwrap();
    assert_eq!(store.stats().unwrap().turns, before, "forking copies no turns");
    assert_eq!(f.parent_session_id.as_deref(), Some(p.as_str()));
    assert_eq!(f.fork_turn, Some(3));
    assert_eq!(f.turn_count, 3);
    assert_eq!(user(store, &f.id, "fork's own turn kiwi9"), 4);
    let fork_turns = store.get_turns(&f.id, 0, 100).unwrap();
    assert_eq!(
        fork_turns.iter().map(|t| t.content.as_str()).collect::<Vec<_>>(),
        ["parent turn 1 kiwi1", "parent turn 2 kiwi2", "parent turn 3 kiwi3", "fork's own turn kiwi9"]
    );
    assert_eq!(store.get_turns(&p, 0, 100).unwrap().len(), 5, "the parent is unchanged");
    // A fork of a fork.
    let ff = store.fork_session(&f.id, 4).unwrap();
    user(store, &ff.id, "grandchild");
    let n: Vec<i64> = store.get_turns(&ff.id, 0, 100).unwrap().iter().map(|t| t.turn_number).collect();
    assert_eq!(n, [1, 2, 3, 4, 5]);
    assert_eq!(
        store.turns_range(&ff.id, 3, 4).unwrap().iter().map(|t| t.content.as_str()).collect::<Vec<_>>(),
        ["parent turn 3 kiwi3", "fork's own turn kiwi9"]
    );
    let in_fork = |q: &str| numbers(&search(store, q, SearchScope::Session { session_id: f.id.clone() }));
    assert_eq!(in_fork("kiwi2"), [2], "a fork's search sees inherited turns");
    assert_eq!(in_fork("kiwi4"), Vec::<i64>::new(), "but not the parent's turns after the fork point");
    assert_eq!(in_fork("kiwi9"), [4]);
    assert!(store.fork_session(&p, 6).is_err(), "cannot fork past the last turn");
    assert!(store.fork_session(&p, -1).is_err());
    // A fork at turn 0 is another first message (an edit of turn 1): it inherits nothing.
    let again = store.fork_session(&p, 0).unwrap();
    assert_eq!(store.get_turns(&again.id, 0, 10).unwrap(), Vec::new());
    store.append_turn(&again.id, &NewTurn::user("a different start")).unwrap();
    assert_eq!(store.get_turns(&again.id, 0, 10).unwrap()[0].content, "a different start");
    // Editing the first message of a fork (a fork of the fork at turn 0) shows none of the
    // grandparent's turns (it once showed the grandparent's turn 1).
    let edit = store.fork_session(&f.id, 0).unwrap();
    assert_eq!(store.get_turns(&edit.id, 0, 10).unwrap(), Vec::new());
    let edit2 = store.fork_session(&ff.id, 2).unwrap();
    assert_eq!(
        store.get_turns(&edit2.id, 0, 10).unwrap().iter().map(|t| t.content.as_str()).collect::<Vec<_>>(),
        ["parent turn 1 kiwi1", "parent turn 2 kiwi2"]
    );
}

pub fn deleting_a_parent_keeps_its_forks_whole(store: &mut Store) {
    let p = session(store, "w");
    user(store, &p, "one");
    store
        .append_tool_result(
            &p,
            &NewTurn::tool_result("c1", "bash", "ok"),
            &NewToolExecution {
                tool_name: "bash".into(),
                arguments: "{}".into(),
                success: true,
                duration_ms: 3,
                approval: Approval::Auto,
            },
        )
        .unwrap();
    user(store, &p, "three");
    let f = store.fork_session(&p, 2).unwrap();
    user(store, &f.id, "fork three");
    let expected: Vec<String> = store.get_turns(&f.id, 0, 10).unwrap().into_iter().map(|t| t.content).collect();
    store.delete_session(&p).unwrap();
    assert!(matches!(store.get_session(&p), Err(Error::SessionNotFound(_))));
    let fork = store.get_session(&f.id).unwrap();
    assert_eq!(fork.parent_session_id, None);
    let got: Vec<String> = store.get_turns(&f.id, 0, 10).unwrap().into_iter().map(|t| t.content).collect();
    assert_eq!(got, expected, "the fork keeps every turn it showed");
    assert_eq!(store.tool_executions(Some(&f.id), "bash", 10).unwrap().len(), 1);
    assert_eq!(
        numbers(&search(store, "three", SearchScope::All)),
        [3],
        "the deleted parent's turns are gone from search"
    );
    assert_eq!(store.stats().unwrap().turns, 3);
}

pub fn sessions_list_rename_archive_and_workspaces(store: &mut Store) {
    fn ids(store: &Store, f: &SessionFilter) -> Vec<String> {
        store.list_sessions(f).unwrap().into_iter().map(|s| s.id).collect()
    }
    let a = session(store, "web");
    user(store, &a, "first");
    let b = session(store, "web");
    user(store, &b, "second");
    let c = session(store, "api");
    user(store, &c, "third");
    user(store, &a, "a is the most recent now");
    assert_eq!(ids(store, &SessionFilter::default()), [a.clone(), c.clone(), b.clone()], "most recently active first");
    assert_eq!(
        ids(store, &SessionFilter { workspace: Some("web".into()), ..Default::default() }),
        [a.clone(), b.clone()]
    );
    let listed = store.list_sessions(&SessionFilter::default()).unwrap();
    assert_eq!(listed[0].turn_count, 2, "lists carry turn counts");
    store.rename_session(&b, "  Renamed  ").unwrap();
    assert_eq!(store.get_session(&b).unwrap().title, "Renamed");
    assert!(store.rename_session(&b, "   ").is_err(), "empty titles are refused");
    store.set_archived(&a, true).unwrap();
    assert_eq!(ids(store, &SessionFilter::default()), [c.clone(), b.clone()], "archived sessions are hidden");
    assert_eq!(ids(store, &SessionFilter { include_archived: true, ..Default::default() }).len(), 3);
    store.set_archived(&a, false).unwrap();
    assert!(!store.get_session(&a).unwrap().is_archived);
    let ws: Vec<(String, i64)> = store.workspaces().unwrap().into_iter().map(|w| (w.workspace, w.sessions)).collect();
    assert_eq!(ws, [("web".to_string(), 2), ("api".to_string(), 1)]);
    assert!(matches!(store.rename_session("nope", "x"), Err(Error::SessionNotFound(_))));
}

pub fn interrupted_turn_is_checkpointed_then_finalised(store: &mut Store) {
    let sid = session(store, "w");
    user(store, &sid, "write a poem");
    let t = store.append_turn(&sid, &NewTurn::assistant("").with_status(TurnStatus::Interrupted)).unwrap();
    store.checkpoint_turn(&sid, t.turn_number, "Roses are").unwrap();
    store.checkpoint_turn(&sid, t.turn_number, "Roses are red,").unwrap();
    let mid = &store.turns_range(&sid, t.turn_number, t.turn_number).unwrap()[0];
    assert_eq!((mid.content.as_str(), mid.status), ("Roses are red,", TurnStatus::Interrupted));
    assert_eq!(numbers(&search(store, "roses", SearchScope::All)), [2], "partial text is searchable");
    let done =
        store.finalize_turn(&sid, t.turn_number, &NewTurn::assistant("Roses are red, violets are blue.")).unwrap();
    assert_eq!(done.status, TurnStatus::Complete);
    assert_eq!(numbers(&search(store, "violets", SearchScope::All)), [2]);
    assert!(store.checkpoint_turn(&sid, t.turn_number, "overwrite").is_err(), "complete turns are immutable");
    assert!(store.checkpoint_turn(&sid, 1, "overwrite").is_err());
    assert_eq!(store.turns_range(&sid, 1, 1).unwrap()[0].content, "write a poem");
}

pub fn tool_executions_by_name_newest_first(store: &mut Store) {
    let sid = session(store, "w");
    user(store, &sid, "go");
    for (i, name) in ["read_file", "bash", "read_file"].iter().enumerate() {
        let args = format!(r#"{{"path":"f{i}.rs"}}"#);
        store.append_turn(&sid, &NewTurn::assistant_calls("", vec![call(&format!("c{i}"), name, &args)])).unwrap();
        store
            .append_tool_result(
                &sid,
                &NewTurn::tool_result(format!("c{i}"), *name, format!("result {i}")),
                &NewToolExecution {
                    tool_name: name.to_string(),
                    arguments: args,
                    success: i != 1,
                    duration_ms: 10 + i as i64,
                    approval: Approval::Auto,
                },
            )
            .unwrap();
    }
    let reads = store.tool_executions(Some(&sid), "read_file", 10).unwrap();
    assert_eq!(reads.iter().map(|e| e.result.as_str()).collect::<Vec<_>>(), ["result 2", "result 0"]);
    assert_eq!(reads[0].arguments, r#"{"path":"f2.rs"}"#);
    assert_eq!(reads[0].turn_number, 7);
    let bash = store.tool_executions(None, "bash", 10).unwrap();
    assert_eq!((bash.len(), bash[0].success, bash[0].duration_ms), (1, false, 11));
    assert_eq!(store.tool_executions(Some(&sid), "read_file", 1).unwrap().len(), 1);
}

pub fn tasks_events_manifests_and_calibration(store: &mut Store) {
    let sid = session(store, "w");
    user(store, &sid, "delegate the refactor");
    let mut task = TaskRecord {
        task_id: "t-1".into(),
        session_id: sid.clone(),
        turn_number: 1,
        goal: "refactor auth".into(),
        context: "use JWT".into(),
        status: "pending".into(),
        result_delivered: false,
        created_at: 1,
        updated_at: 1,
    };
    store.upsert_task(&task).unwrap();
    assert_eq!(store.append_task_event("t-1", "task_planning", r#"{"task_id":"t-1"}"#).unwrap(), 1);
    assert_eq!(store.append_task_event("t-1", "something_new", "{\"raw\": true}").unwrap(), 2);
    task.status = "completed".into();
    task.updated_at = 2;
    store.upsert_task(&task).unwrap();
    let got = store.task("t-1").unwrap().unwrap();
    assert_eq!((got.status.as_str(), got.goal.as_str()), ("completed", "refactor auth"));
    let events = store.task_events("t-1").unwrap();
    assert_eq!(events.iter().map(|e| e.event_type.as_str()).collect::<Vec<_>>(), ["task_planning", "something_new"]);
    assert_eq!(events[1].data, "{\"raw\": true}", "events are kept verbatim");
    assert_eq!(store.tasks(&sid).unwrap().len(), 1);

    let m = ContextManifest {
        session_id: sid.clone(),
        turn_numbers: vec![1],
        trimmed_turns: vec![],
        reasoning_turns: Vec::new(),
        state_version: 4,
        estimated_tokens: 120,
        budget_tokens: 8000,
        usage: serde_json::Value::Null,
        created_at: 5,
    };
    let id = store.record_manifest(&m).unwrap();
    store.set_manifest_usage(id, &serde_json::json!({"prompt_tokens": 130})).unwrap();
    let back = store.manifests(&sid, 5).unwrap();
    assert_eq!(back[0].turn_numbers, [1]);
    assert_eq!(back[0].usage["prompt_tokens"], 130);

    assert_eq!(store.calibration("gpt").unwrap(), None);
    store.set_calibration("gpt", 3.6, 4).unwrap();
    store.set_calibration("gpt", 3.7, 5).unwrap();
    assert_eq!(store.calibration("gpt").unwrap(), Some((3.7, 5)));
}

pub fn resume_gives_state_and_last_turns(store: &mut Store) {
    let sid = session(store, "w");
    for i in 1..=120 {
        user(store, &sid, &format!("message {i}"));
    }
    let state = serde_json::json!({"current_focus": "message 120", "version": 7});
    store.update_state(&sid, &state).unwrap();
    store.add_usage(&sid, 1000, 200).unwrap();
    let r = store.resume(&sid, 50).unwrap();
    assert_eq!(r.session.state, state);
    assert_eq!((r.session.prompt_tokens, r.session.completion_tokens), (1000, 200));
    assert_eq!(r.turns.len(), 50);
    assert_eq!((r.turns[0].turn_number, r.turns[49].turn_number), (71, 120));
    assert!(matches!(store.resume("missing", 50), Err(Error::SessionNotFound(_))));
}

/// A small archive with every kind of record, for export tests.
pub fn populate(store: &mut Store) -> Vec<String> {
    let a = session(store, "proj");
    user(store, &a, "Refactor src/auth.py to use JWT 🎉");
    store
        .append_turn(
            &a,
            &NewTurn::assistant_calls("Reading.", vec![call("c1", "read_file", r#"{"path":"src/auth.py"}"#)]),
        )
        .unwrap();
    store
        .append_tool_result(
            &a,
            &NewTurn::tool_result("c1", "read_file", "def login():\n    pass\n\0end"),
            &NewToolExecution {
                tool_name: "read_file".into(),
                arguments: r#"{"path":"src/auth.py"}"#.into(),
                success: true,
                duration_ms: 4,
                approval: Approval::Auto,
            },
        )
        .unwrap();
    let mut interrupted = NewTurn::assistant("partial").with_status(TurnStatus::Interrupted);
    interrupted.metadata = serde_json::json!({"model": "demo"});
    store.append_turn(&a, &interrupted).unwrap();
    store.update_state(&a, &serde_json::json!({"files_touched": [{"path": "src/auth.py"}]})).unwrap();
    store
        .upsert_task(&TaskRecord {
            task_id: "task-9".into(),
            session_id: a.clone(),
            turn_number: 2,
            goal: "g".into(),
            context: "c".into(),
            status: "completed".into(),
            result_delivered: true,
            created_at: 10,
            updated_at: 11,
        })
        .unwrap();
    store.append_task_event("task-9", "task_completed", "{\"ok\":1}").unwrap();
    store
        .record_manifest(&ContextManifest {
            session_id: a.clone(),
            turn_numbers: vec![1, 2, 3],
            trimmed_turns: vec![3],
            reasoning_turns: Vec::new(),
            state_version: 2,
            estimated_tokens: 99,
            budget_tokens: 1000,
            usage: serde_json::json!({"prompt_tokens": 101}),
            created_at: 12,
        })
        .unwrap();
    let f = store.fork_session(&a, 2).unwrap();
    user(store, &f.id, "fork message");
    let b = session(store, "other");
    user(store, &b, "another workspace");
    store.set_archived(&b, true).unwrap();
    vec![a, f.id, b]
}

pub fn export_import_round_trip_and_no_duplicates(store: &mut Store) {
    let ids = populate(store);
    let first = store.export_jsonl(None).unwrap();
    let mut fresh = Store::open_in_memory().unwrap();
    let s = fresh.import_jsonl(&first).unwrap();
    assert_eq!((s.sessions_added, s.sessions_skipped, s.turns_added), (3, 0, 6));
    let second = fresh.export_jsonl(None).unwrap();
    assert_eq!(first, second, "export → import → export is identical");
    let again = fresh.import_jsonl(&first).unwrap();
    assert_eq!((again.sessions_added, again.sessions_skipped), (0, 3), "re-import adds nothing");
    assert_eq!(fresh.stats().unwrap().turns, 6);
    assert_eq!(fresh.get_turns(&ids[1], 0, 10).unwrap().len(), 3, "the fork still reads its parent");
    assert_eq!(numbers(&search(&fresh, "JWT", SearchScope::All)), [1], "imported turns are searchable");
    // Exporting one fork brings its parent along.
    let only_fork = store.export_jsonl(Some(&ids[1..2])).unwrap();
    let mut other = Store::open_in_memory().unwrap();
    assert_eq!(other.import_jsonl(&only_fork).unwrap().sessions_added, 2);
}

pub fn bad_import_files_add_nothing_and_name_the_line(store: &mut Store) {
    let mut source = Store::open_in_memory().unwrap();
    populate(&mut source);
    let good = source.export_jsonl(None).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    let line_of = |r: cowork_core::Result<cowork_core::store::ImportSummary>| match r {
        Err(Error::Import { line, message }) => (line, message),
        other => panic!("expected an import error, got {other:?}"),
    };
    // A malformed line in the middle.
    let mut broken = lines.clone();
    broken[4] = "{\"type\":\"turn\", this is not json";
    let (line, _) = line_of(store.import_jsonl(&broken.join("\n")));
    assert_eq!(line, 5);
    // Wrong format version.
    let mut v2 = lines.clone();
    v2[0] = r#"{"type":"header","format":"cowork-archive","version":99}"#;
    let (line, msg) = line_of(store.import_jsonl(&v2.join("\n")));
    assert_eq!(line, 1);
    assert!(msg.contains("version 99"), "{msg}");
    // Truncated at a line boundary, and mid-line.
    let (_, msg) = line_of(store.import_jsonl(&lines[..lines.len() - 3].join("\n")));
    assert!(msg.contains("truncated"), "{msg}");
    let cut = &good[..good.len() / 2];
    let (line, _) = line_of(store.import_jsonl(cut));
    assert_eq!(line, cut.lines().count());
    // Not an archive at all, empty, a turn for an undeclared session.
    assert!(store.import_jsonl("hello").is_err());
    assert!(store.import_jsonl("").is_err());
    let mut orphan = vec![lines[0]];
    orphan.push(lines.iter().find(|l| l.contains("\"type\":\"turn\"")).unwrap());
    orphan.push(r#"{"type":"end","sessions":0,"turns":1}"#);
    let (line, msg) = line_of(store.import_jsonl(&orphan.join("\n")));
    assert_eq!(line, 2, "{msg}");
    assert_eq!(store.stats().unwrap().sessions, 0, "nothing was imported by any failed attempt");
    assert_eq!(store.stats().unwrap().turns, 0);
}

pub fn openai_messages_import_once(store: &mut Store) {
    let msgs = r#"[
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "What is in src/main.rs?"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"src/main.rs\"}"}}]},
        {"role": "tool", "tool_call_id": "call_a", "content": "fn main() {}"},
        {"role": "assistant", "content": [{"type": "text", "text": "It is empty."}]}
    ]"#;
    let s = store.import_openai_messages(msgs, "imports").unwrap();
    assert_eq!((s.turn_count, s.title.as_str(), s.workspace.as_str()), (5, "What is in src/main.rs?", "imports"));
    let turns = store.get_turns(&s.id, 0, 10).unwrap();
    assert_eq!(turns[2].tool_calls[0].name, "read_file");
    assert_eq!(turns[3].tool_call_id.as_deref(), Some("call_a"));
    assert_eq!(turns[4].content, "It is empty.");
    let again = store.import_openai_messages(msgs, "imports").unwrap();
    assert_eq!(again.id, s.id, "the same messages do not make a second session");
    assert_eq!(store.stats().unwrap().sessions, 1);
    let wrapped = format!("{{\"messages\": {msgs}}}");
    assert_eq!(store.import_openai_messages(&wrapped, "imports").unwrap().id, s.id);
    for bad in ["[]", "{}", "[{\"content\": \"no role\"}]", "[{\"role\": \"alien\", \"content\": \"x\"}]", "not json"] {
        assert!(matches!(store.import_openai_messages(bad, "w"), Err(Error::Import { .. })), "{bad} must be refused");
    }
    assert_eq!(store.stats().unwrap().sessions, 1);
}

pub fn markdown_export_reads_well(store: &mut Store) {
    let ids = populate(store);
    let md = store.export_markdown(&ids[0]).unwrap();
    assert!(md.starts_with("# Refactor src/auth.py to use JWT 🎉\n"), "{md}");
    assert!(md.contains("## Turn 1 · user\n\nRefactor src/auth.py to use JWT 🎉"), "{md}");
    assert!(md.contains("**Tool call** `read_file`"), "{md}");
    assert!(md.contains("## Turn 3 · tool · read_file\n\n```\ndef login():"), "{md}");
    assert!(md.contains("## Turn 4 · assistant · interrupted"), "{md}");
    let fork_md = store.export_markdown(&ids[1]).unwrap();
    assert!(fork_md.contains("Forked from"), "{fork_md}");
    assert!(fork_md.contains("## Turn 3 · user\n\nfork message"), "{fork_md}");
}

pub fn stats_count_what_is_stored(store: &mut Store) {
    let empty = store.stats().unwrap();
    assert_eq!((empty.sessions, empty.turns), (0, 0));
    assert_eq!(empty.schema_version, cowork_core::store::SCHEMA_VERSION);
    populate(store);
    let s = store.stats().unwrap();
    assert_eq!((s.sessions, s.turns, s.tool_executions, s.tasks, s.manifests), (3, 6, 1, 1, 1));
    assert!(s.bytes > 0);
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

pub fn a_client_key_finds_the_earlier_attempt(store: &mut Store) {
    let sid = session(store, "w");
    let keyed = NewTurn { metadata: serde_json::json!({ "client_key": "k-1" }), ..NewTurn::user("sent once") };
    assert_eq!(store.find_recent_by_client_key("k-1").unwrap(), None, "nothing saved yet");
    let saved = store.append_turn(&sid, &keyed).unwrap();
    user(store, &sid, "no key");
    store
        .append_turn(&sid, &NewTurn { metadata: serde_json::json!("not an object"), ..NewTurn::user("odd metadata") })
        .unwrap();
    let found = store.find_recent_by_client_key("k-1").unwrap().expect("the first attempt is found");
    assert_eq!((found.turn_number, found.content.as_str()), (saved.turn_number, "sent once"));
    assert_eq!(store.find_recent_by_client_key("k-2").unwrap(), None);
}

/// A workspace's orchestrator directory and approval mode are the user's data: saved, read back, exported
/// with its sessions, and imported into an archive that has none, never over its own.
pub fn workspace_settings_are_kept_and_travel_with_an_export(store: &mut Store) {
    let unset = store.workspace_settings("my-project").unwrap();
    assert_eq!(unset.directory(), None, "a new workspace has no orchestrator directory");
    assert!(!unset.manual_approvals);
    let saved = store
        .set_workspace_settings(&WorkspaceSettings {
            orchestrator_dir: "  /home/ana/src/my-project ".into(),
            manual_approvals: true,
            ..WorkspaceSettings::unset("my-project")
        })
        .unwrap();
    assert_eq!(saved.directory(), Some("/home/ana/src/my-project"));
    assert!(saved.updated_at > 0);
    assert_eq!(store.workspace_settings("my-project").unwrap(), saved);
    assert_eq!(store.workspace_settings("other").unwrap().directory(), None, "settings are per workspace");
    store.set_workspace_settings(&WorkspaceSettings::unset("unused")).unwrap();

    let sid = session(store, "my-project");
    store.append_turn(&sid, &NewTurn::user("hello")).unwrap();
    let file = store.export_jsonl(Some(std::slice::from_ref(&sid))).unwrap();
    assert!(file.contains("/home/ana/src/my-project"), "the export carries the directory");
    assert!(!file.contains("\"unused\""), "only the exported sessions' workspaces are in the file");

    let mut fresh = Store::open_in_memory().unwrap();
    fresh
        .set_workspace_settings(&WorkspaceSettings {
            orchestrator_dir: "/srv/their-copy".into(),
            ..WorkspaceSettings::unset("theirs")
        })
        .unwrap();
    fresh.import_jsonl(&file).unwrap();
    assert_eq!(fresh.workspace_settings("my-project").unwrap(), saved, "imported as exported");
    // The archive's own settings win over a file's.
    let mut changed = saved.clone();
    changed.orchestrator_dir = "/elsewhere".into();
    fresh.set_workspace_settings(&changed).unwrap();
    fresh.import_jsonl(&file.replace(&sid, "00000000-0000-0000-0000-00000000abcd")).unwrap();
    assert_eq!(fresh.workspace_settings("my-project").unwrap().directory(), Some("/elsewhere"));
    assert_eq!(fresh.workspace_settings("theirs").unwrap().directory(), Some("/srv/their-copy"));
}

/// Edits and regenerations fork just before the turn they replace; the branch points of each session
/// list the alternatives at that turn, oldest first, each opening where the user last was in it.
pub fn edits_and_regenerations_are_branches_of_one_conversation(store: &mut Store) {
    let p = session(store, "w");
    for (i, text) in ["first question", "first answer", "second question", "second answer"].iter().enumerate() {
        let turn = if i % 2 == 0 { NewTurn::user(*text) } else { NewTurn::assistant(*text) };
        store.append_turn(&p, &turn).unwrap();
    }
    assert_eq!(store.branch_points(&p).unwrap(), Vec::new(), "no edits, no branches");
    // Edit turn 3 twice, then regenerate turn 4 of the first edit.
    let f1 = store.version_session(&p, 2).unwrap().id;
    store.append_turn(&f1, &NewTurn::user("second question, edited")).unwrap();
    store.append_turn(&f1, &NewTurn::assistant("answer to the edit")).unwrap();
    let f2 = store.version_session(&p, 2).unwrap().id;
    store.append_turn(&f2, &NewTurn::user("second question, edited again")).unwrap();
    let g = store.version_session(&f1, 3).unwrap().id;
    store.append_turn(&g, &NewTurn::assistant("a regenerated answer")).unwrap();

    let at = |id: &str| store.branch_points(id).unwrap();
    let point = |n: i64, sessions: &[&String], current: usize| BranchPoint {
        turn_number: n,
        sessions: sessions.iter().map(|s| s.to_string()).collect(),
        current,
    };
    // From the original: three versions of turn 3; the first edit opens where the user was last (g).
    assert_eq!(at(&p), [point(3, &[&p, &g, &f2], 0)]);
    assert_eq!(at(&f2), [point(3, &[&p, &g, &f2], 2)]);
    // From the regenerated branch: its turn 3 is the first edit's, and turn 4 has two versions.
    assert_eq!(at(&g), [point(3, &[&p, &g, &f2], 1), point(4, &[&f1, &g], 1)]);
    assert_eq!(at(&f1), [point(3, &[&p, &f1, &f2], 1), point(4, &[&f1, &g], 0)]);
    // Nothing was rewritten: the original reads as it did.
    let original: Vec<String> = store.get_turns(&p, 0, 10).unwrap().into_iter().map(|t| t.content).collect();
    assert_eq!(original, ["first question", "first answer", "second question", "second answer"]);

    // Editing the first message forks at turn 0.
    let e = store.version_session(&p, 0).unwrap().id;
    store.append_turn(&e, &NewTurn::user("a different first question")).unwrap();
    let at = |id: &str| store.branch_points(id).unwrap();
    let first = &at(&e)[0];
    assert_eq!((first.turn_number, first.current, first.sessions.len()), (1, 1, 2));
    assert_eq!(first.sessions[1], e);
    assert_eq!(at(&p)[0].turn_number, 1, "the original sees the edit of its first message too");

    // "Fork from here" makes a conversation of its own: what it says next is no version of the
    // original's turn, and the fork's own view has no switch to the original's versions.
    let (before, before_f1) = (at(&p), at(&f1));
    let fork = store.fork_session(&f1, 3).unwrap().id;
    store.append_turn(&fork, &NewTurn::assistant("an answer in a fork")).unwrap();
    assert_eq!(store.branch_points(&p).unwrap(), before, "a fork is not a version of the original");
    assert_eq!(store.branch_points(&f1).unwrap(), before_f1, "nor of the version it was forked from");
    assert_eq!(store.branch_points(&fork).unwrap(), Vec::new(), "the fork has no versions yet");
    // A version of the fork (its reply regenerated) is the fork's alternative, not the original's.
    let v = store.version_session(&fork, 3).unwrap().id;
    store.append_turn(&v, &NewTurn::assistant("the fork's answer, regenerated")).unwrap();
    assert_eq!(store.branch_points(&v).unwrap(), [point(4, &[&fork, &v], 1)]);
    assert_eq!(store.branch_points(&f1).unwrap(), before_f1);
}

/// Sync's quarantine on this backend (schema v9): a change from another device that cannot be applied
/// (an attachment whose bytes do not match their SHA-256) is kept aside verbatim, and the rest of its
/// batch applies.
pub fn a_synced_change_that_cannot_be_applied_is_kept_aside(store: &mut Store) {
    use cowork_core::store::sync::{read_message, QuarantineReason, Received, SyncChange, SyncMessage};
    use cowork_core::{NewAttachment, Space};
    let mut birch = Store::open_in_memory().unwrap();
    birch.enable_sync("Birch").unwrap();
    store.enable_sync("Phone").unwrap();
    let s = birch.create_session(&NewSession::new("work")).unwrap().id;
    let file = NewAttachment::new("plan.md", "text/markdown", b"# the plan".to_vec());
    birch.append_turn_with_attachments(&s, &NewTurn::user("the file"), &[file], 0).unwrap();
    birch.append_turn(&s, &NewTurn::assistant("Read it")).unwrap();
    let bodies: Vec<(i64, String)> = birch
        .sync_outgoing(&Space::Personal, 100)
        .unwrap()
        .into_iter()
        .enumerate()
        .map(|(i, mut m): (usize, SyncMessage)| {
            if let SyncChange::TurnAdded(t) = &mut m.change {
                if let Some(a) = t.attachments.first_mut() {
                    a.data = "IyB0aGUgb3RoZXIgcGxhbg==".into();
                }
            }
            (i as i64 + 1, serde_json::to_string(&m).unwrap())
        })
        .collect();
    let batch: Vec<(i64, Received)> = bodies.iter().map(|(seq, b)| (*seq, read_message(b))).collect();
    let applied =
        store.apply_sync_received(&Space::Personal, &batch, &mut |i| bodies[i].1.as_bytes().to_vec()).unwrap();
    assert_eq!(applied.quarantined, 1);
    let turns: Vec<String> = store.get_turns(&s, 0, 10).unwrap().into_iter().map(|t| t.content).collect();
    assert_eq!(turns, ["Read it"]);
    let kept = store.sync_quarantined().unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].device_name, "Birch");
    assert!(matches!(&kept[0].reason, QuarantineReason::Refused(why) if why.contains("plan.md")), "{kept:?}");
    assert_eq!(store.sync_cursor(&Space::Personal).unwrap(), bodies.len() as i64);
}
