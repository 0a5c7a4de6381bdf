//! Tests of `conversation_recall`: argument parsing, each action against a test archive, the output cap.

use super::*;
use crate::test_support::{Convo, TestArchive};
use crate::tokens::estimate_tokens;
use crate::TurnStatus;
use expect_test::{expect, Expect};

/// Runs `args` against the test archive (session "s1") and compares the text.
fn check(archive: &TestArchive, args: &str, expect: Expect) {
    let out = run_recall(archive, "s1", args);
    assert!(estimate_tokens(&out) <= RECALL_TOKEN_CAP, "over the cap: {} tokens", estimate_tokens(&out));
    expect.assert_eq(&out);
}

/// Runs `args` for session "s4" in `context` and compares the text.
fn check_with(archive: &TestArchive, args: &str, context: &RecallContext, expect: Expect) {
    let out = run_recall_with(archive, "s4", args, context);
    assert!(estimate_tokens(&out) <= RECALL_TOKEN_CAP, "over the cap: {} tokens", estimate_tokens(&out));
    expect.assert_eq(&out);
}

fn archive() -> TestArchive {
    let mut c = Convo::new();
    c.user("Can you add JWT refresh token support? We use JWT.")
        .calls("I'll read the auth module first.", &[("c1", "read_file", r#"{"path":"src/auth.py"}"#)])
        .result("c1", "read_file", "import jwt\n\ndef login(user):\n    return jwt.encode({\"sub\": user.id}, KEY)")
        .assistant("The module issues access tokens only; I'll add rotate_refresh_token_v2.")
        .calls("", &[("c2", "bash", r#"{"command":"pytest -q"}"#)])
        .result("c2", "bash", "FAILED tests/test_auth.py::test_refresh - KeyError: 'refresh'\nexit code: 1")
        .status(TurnStatus::Error)
        .user("That error again? Fix it.")
        .calls(
            "Fixing the refresh key.",
            &[("c3", "edit_file", r#"{"path":"src/auth.py","old":"KEY","new":"REFRESH_KEY"}"#)],
        )
        .result("c3", "edit_file", "ok")
        .assistant("Fixed: refresh tokens now rotate.")
        .status(TurnStatus::Interrupted);
    let mut archive = TestArchive::new();
    archive.add_session("s1", "Auth work", "/home/ana/shop", c.build());
    let mut other = Convo::new();
    other.user("In the billing service, the refresh token lives in Redis.").assistant("Noted.");
    archive.add_session("s2", "Billing", "/home/ana/shop", other.build());
    let mut elsewhere = Convo::new();
    elsewhere.user("refresh token in another workspace");
    archive.add_session("s3", "Other", "/home/ana/blog", elsewhere.build());
    for (id, status) in [("task-1", "completed"), ("task-2", "executing")] {
        archive.tasks.push(TaskRecord {
            task_id: id.to_string(),
            session_id: "s1".to_string(),
            turn_number: 9,
            goal: format!("Goal of {id}"),
            context: String::new(),
            status: status.into(),
            result_delivered: status == "completed",
            created_at: 0,
            updated_at: 0,
        });
    }
    archive
}

#[test]
fn search_in_the_session() {
    check(
        &archive(),
        r#"{"action":"search","query":"refresh"}"#,
        expect![[r#"
            Search "refresh" in this session: 5 hits, best first. » marks each hit; the turns around it are shown for context.

            ── turn 6 ──
            [Turn 5] assistant → bash(command="pytest -q")
            » [Turn 6] tool:bash (error): FAILED tests/test_auth.py::test_refresh - KeyError: 'refresh'
              exit code: 1
            [Turn 7] user: That error again? Fix it.

            ── turn 10 ──
            [Turn 9] tool:edit_file: ok
            » [Turn 10] assistant (interrupted): Fixed: refresh tokens now rotate.

            ── turn 8 ──
            [Turn 7] user: That error again? Fix it.
            » [Turn 8] assistant: Fixing the refresh key.
            [Turn 8] assistant → edit_file(path="src/auth.py", new="REFRESH_KEY", old="KEY")
            [Turn 9] tool:edit_file: ok

            ── turn 4 ──
            [Turn 3] tool:read_file: import jwt

              def login(user):
                  return jwt.encode({"sub": user.id}, KEY)
            » [Turn 4] assistant: The module issues access tokens only; I'll add rotate_refresh_token_v2.
            [Turn 5] assistant → bash(command="pytest -q")

            ── turn 1 ──
            » [Turn 1] user: Can you add JWT refresh token support? We use JWT.
            [Turn 2] assistant: I'll read the auth module first.
            [Turn 2] assistant → read_file(path="src/auth.py")"#]],
    );
}

#[test]
fn search_in_the_workspace_names_sessions() {
    check(
        &archive(),
        r#"{"action":"search","query":"refresh token","scope":"workspace","roles":["user"],"limit":"5"}"#,
        expect![[r#"
            Search "refresh token" in this workspace: 2 hits, best first. » marks each hit; the turns around it are shown for context.

            ── session "Auth work" (s1, this session), turn 1 ──
            » [Turn 1] user: Can you add JWT refresh token support? We use JWT.
            [Turn 2] assistant: I'll read the auth module first.
            [Turn 2] assistant → read_file(path="src/auth.py")

            ── session "Billing" (s2), turn 1 ──
            » [Turn 1] user: In the billing service, the refresh token lives in Redis.
            [Turn 2] assistant: Noted."#]],
    );
}

#[test]
fn search_without_hits_says_what_to_try() {
    check(
        &archive(),
        r#"{"action":"search","query":"NEAR(\"kafka\" *"}"#,
        expect![[
            r#"No matches for "NEAR(\"kafka\" *" in this session or the rest of this workspace. Try other or fewer words, part of an identifier or path, or range."#
        ]],
    );
}

/// An archive whose session "s4" holds an old decision about ORMs and, at its end, the exchange
/// asking about it: the request (turn 5), the call (turn 6) and an earlier result of the same exchange.
fn exchange_archive() -> TestArchive {
    let mut a = archive();
    let mut c = Convo::new();
    c.user("Should we use an ORM for the billing tables?")
        .assistant("No ORM: we decided on plain SQL with sqlx, the ORM hid slow queries.")
        .user("Fine, add the invoices table.")
        .assistant("Added.")
        .user("recall: what did we decide about the ORM?")
        .calls("", &[("r1", "conversation_recall", r#"{"action":"search","query":"ORM"}"#)])
        .result("r1", "conversation_recall", "Search \"ORM\" … recall: what did we decide about the ORM?");
    a.add_session("s4", "Billing tables", "/home/ana/shop", c.build());
    a
}

#[test]
fn the_current_exchange_is_not_a_hit_of_its_own_search() {
    let a = exchange_archive();
    let args = r#"{"action":"search","query":"ORM","limit":1}"#;
    let before = run_recall(&a, "s4", args);
    assert!(before.contains("── turn 7 ──"), "without a context the exchange ranks first:\n{before}");
    let context = RecallContext { exclude_from_turn: Some(5), ..RecallContext::default() };
    let out = run_recall_with(&a, "s4", args, &context);
    assert!(out.starts_with("Search \"ORM\" in this session: 1 hit"), "{out}");
    assert!(out.contains("» [Turn 2] assistant: No ORM: we decided on plain SQL"), "the decision:\n{out}");
    let out = run_recall_with(&a, "s4", r#"{"action":"search","query":"ORM"}"#, &context);
    assert!(out.contains("2 hits") && !out.contains("── turn 5") && !out.contains("── turn 7"), "{out}");
}

#[test]
fn a_session_without_hits_widens_to_the_workspace_and_says_so() {
    let a = exchange_archive();
    let context = RecallContext { exclude_from_turn: Some(5), ..RecallContext::default() };
    check_with(
        &a,
        r#"{"action":"search","query":"Redis"}"#,
        &context,
        expect![[r#"
            Nothing in this session; searched the workspace instead. Search "Redis" in this workspace: 1 hit, best first. » marks each hit; the turns around it are shown for context.

            ── session "Billing" (s2), turn 1 ──
            » [Turn 1] user: In the billing service, the refresh token lives in Redis.
            [Turn 2] assistant: Noted."#]],
    );
    // Only the exchange itself says "recall": nothing anywhere else.
    let out = run_recall_with(&a, "s4", r#"{"action":"search","query":"recall"}"#, &context);
    assert_eq!(
        out,
        r#"No matches for "recall" in this session or the rest of this workspace. Try other or fewer words, part of an identifier or path, or range."#
    );
}

#[test]
fn range_shows_turns_in_order() {
    check(
        &archive(),
        r#"{"action":"range","start_turn":4,"end_turn":99}"#,
        expect![[r#"
        Turns 4..10 (the session has 10 turns):

        [Turn 4] assistant: The module issues access tokens only; I'll add rotate_refresh_token_v2.
        [Turn 5] assistant → bash(command="pytest -q")
        [Turn 6] tool:bash (error): FAILED tests/test_auth.py::test_refresh - KeyError: 'refresh'
          exit code: 1
        [Turn 7] user: That error again? Fix it.
        [Turn 8] assistant: Fixing the refresh key.
        [Turn 8] assistant → edit_file(path="src/auth.py", new="REFRESH_KEY", old="KEY")
        [Turn 9] tool:edit_file: ok
        [Turn 10] assistant (interrupted): Fixed: refresh tokens now rotate."#]],
    );
}

#[test]
fn range_reads_another_session_of_the_workspace_only() {
    check(
        &archive(),
        r#"{"action":"range","start_turn":1,"end_turn":2,"session_id":"s2"}"#,
        expect![[r#"
        Turns 1..2 of session "Billing" (s2):

        [Turn 1] user: In the billing service, the refresh token lives in Redis.
        [Turn 2] assistant: Noted."#]],
    );
    check(
        &archive(),
        r#"{"action":"range","start_turn":1,"session_id":"s3"}"#,
        expect!["recall error: session s3 belongs to another workspace; only sessions of this workspace can be read"],
    );
}

#[test]
fn tool_calls_newest_first() {
    check(
        &archive(),
        r#"{"action":"tool_calls","tool_name":"read_file"}"#,
        expect![[r#"
        read_file: the 1 most recent call, newest first.

        [Turn 3] read_file(path="src/auth.py") → ok, 12 ms
          import jwt
  
          def login(user):
              return jwt.encode({"sub": user.id}, KEY)"#]],
    );
    check(
        &archive(),
        r#"{"action":"tool_calls","tool_name":"bash","limit":500}"#,
        expect![[r#"
        bash: the 1 most recent call, newest first (limit capped at 50).

        [Turn 6] bash(command="pytest -q") → failed, 12 ms
          FAILED tests/test_auth.py::test_refresh - KeyError: 'refresh'
          exit code: 1"#]],
    );
}

#[test]
fn summary_shows_the_register_and_counts() {
    check(
        &archive(),
        r#"{"action":"summary"}"#,
        expect![[r#"
        Session "Auth work" (s1) · workspace /home/ana/shop · model test-model
        Turns: 10 · tokens: 399 prompt, 133 completion
        In the register: files touched: 1 · decisions: 1 · errors resolved: 0 · tasks: 2 (1 open)

        Tasks (newest last):
          task-1 [completed] Goal of task-1 (turn 9)
          task-2 [executing] Goal of task-2 (turn 9)

        Session state:
        session:
          id: "s1"
          workspace: "/home/ana/shop"
          model: "test-model"
          turn_count: 10
          total_tokens: 133
        files_touched:
          - {path: "src/auth.py", action: edit, turn: 9}
        key_decisions:
          - "We use JWT. (turn 1)"
        current_focus: "That error again? Fix it."
        errors_resolved: []
        open_tasks: []"#]],
    );
}

#[test]
fn invalid_arguments_get_an_actionable_error() {
    let a = archive();
    let rows = [
        ("", "recall error: the arguments are not valid JSON; expected a JSON object such as {\"action\": \"search\", \"query\": \"refresh token\"}"),
        ("[1]", "recall error: the arguments must be a JSON object; expected a JSON object such as {\"action\": \"search\", \"query\": \"refresh token\"}"),
        ("{}", "recall error: \"action\" is required: one of search, range, tool_calls, summary"),
        (r#"{"action":"find"}"#, "recall error: unknown action \"find\"; use one of search, range, tool_calls, summary"),
        (r#"{"action":"search"}"#, "recall error: search needs a non-empty \"query\" (words, a phrase, an identifier or a path)"),
        (r#"{"action":"search","query":"  "}"#, "recall error: search needs a non-empty \"query\" (words, a phrase, an identifier or a path)"),
        (r#"{"action":"search","query":"x","limit":0}"#, "recall error: \"limit\" must be between 1 and 50 (got 0)"),
        (r#"{"action":"search","query":"x","limit":"many"}"#, "recall error: \"limit\" must be a whole number, not \"many\""),
        (r#"{"action":"search","query":"x","scope":"galaxy"}"#, "recall error: unknown scope \"galaxy\"; use \"session\" or \"workspace\""),
        (r#"{"action":"search","query":"x","roles":["robot"]}"#, "recall error: unknown role \"robot\" in \"roles\"; use user, assistant, tool or system"),
        (r#"{"action":"range","end_turn":3}"#, "recall error: range needs \"start_turn\" (and usually \"end_turn\")"),
        (r#"{"action":"range","start_turn":7,"end_turn":3}"#, "recall error: end_turn (3) is before start_turn (7)"),
        (r#"{"action":"range","start_turn":0,"end_turn":3}"#, "recall error: start_turn must be 1 or more (got 0)"),
        (r#"{"action":"range","start_turn":50,"end_turn":60}"#, "recall error: this session has 10 turns; start_turn 50 is past the end"),
        (r#"{"action":"range","start_turn":1,"end_turn":2,"offset":5}"#, "recall error: offset pages through one turn: give start_turn = end_turn"),
        (r#"{"action":"range","start_turn":1,"offset":100000}"#, "recall error: turn 1 is 65 characters long; offset 100000 is past its end"),
        (r#"{"action":"tool_calls"}"#, "recall error: tool_calls needs \"tool_name\", e.g. \"read_file\""),
        (r#"{"action":"range","start_turn":1,"session_id":"nope"}"#, "recall error: no session with id nope"),
    ];
    for (args, expect) in rows {
        assert_eq!(run_recall(&a, "s1", args), expect, "{args}");
    }
    assert_eq!(run_recall(&a, "missing", r#"{"action":"summary"}"#), "recall error: no session with id missing");
}

#[test]
fn huge_outputs_are_shortened_then_old_hits_dropped() {
    let big = format!("needle at the start\n{}\nneedle at the end", "log line with some detail\n".repeat(4_000));
    let mut c = Convo::new();
    for i in 0..30 {
        let id = format!("c{i}");
        c.user(&format!("needle question {i}: {}", "with a long pasted description ".repeat(100)))
            .calls("", &[(&id, "bash", r#"{"command":"cat huge.log"}"#)])
            .result(&id, "bash", &big);
    }
    let mut a = TestArchive::new();
    a.add_session("s1", "Logs", "/w", c.build());
    let out = run_recall(&a, "s1", r#"{"action":"search","query":"needle","limit":50}"#);
    assert!(estimate_tokens(&out) <= RECALL_TOKEN_CAP, "{} tokens", estimate_tokens(&out));
    assert!(out.contains("chars omitted; full text: range "), "tool outputs shortened first:\n{out}");
    assert!(out.contains("older hits left out to stay under 8,000 tokens"), "then old hits dropped:\n{out}");
    assert!(out.contains("── turn 90 ──"), "the best (newest) hits stay:\n{out}");

    let out = run_recall(&a, "s1", r#"{"action":"tool_calls","tool_name":"bash","limit":50}"#);
    assert!(estimate_tokens(&out) <= RECALL_TOKEN_CAP);
    assert!(
        out.starts_with("bash: the 30 most recent calls")
            && out.contains("[Turn 90] bash(command=\"cat huge.log\") → ok"),
        "{}",
        &out[..300]
    );
    assert!(
        out.contains("[Turn 3] bash") && out.contains("chars omitted; full text: range 3-3]"),
        "all 30 calls, shortened:\n{out}"
    );

    // A range of many long turns keeps its first turns and says where to continue.
    let mut c = Convo::new();
    for i in 1..=150 {
        c.user(&format!("turn {i} {}", "long text ".repeat(100)));
    }
    let mut a = TestArchive::new();
    a.add_session("s1", "Long", "/w", c.build());
    let out = run_recall(&a, "s1", r#"{"action":"range","start_turn":1,"end_turn":150}"#);
    assert!(estimate_tokens(&out) <= RECALL_TOKEN_CAP);
    assert!(out.starts_with("Turns 1..150:\n\n[Turn 1] user: turn 1 long text"), "{}", &out[..100]);
    let tail = &out[out.rfind("\n\n").unwrap() + 2..];
    let next = out.matches("[Turn ").count() + 1;
    assert_eq!(
        tail,
        format!("[turns {next}..150 left out to stay under 8,000 tokens; continue with range {next}-150]")
    );
}

#[test]
fn entries_are_left_out_in_the_order_asked_for() {
    let entries: Vec<(i64, String)> = (1..=6).map(|i| (i, "x".repeat(8_000))).collect();
    let render = |e: &(i64, String), _: Limits| format!("entry {}: {}", e.0, e.1);
    let note = |dropped: &[(i64, String)], kept: &[(i64, String)]| {
        format!(
            "dropped {:?}, kept {:?}",
            dropped.iter().map(|e| e.0).collect::<Vec<_>>(),
            kept.iter().map(|e| e.0).collect::<Vec<_>>()
        )
    };
    let oldest_first = |es: &[(i64, String)]| es.iter().enumerate().min_by_key(|(_, e)| e.0).map_or(0, |(i, _)| i);
    let out = fit_entries("head", "\n", entries.clone(), render, oldest_first, note);
    assert!(out.ends_with("dropped [1, 2, 3], kept [4, 5, 6]"), "{}", &out[out.len() - 60..]);
    let out = fit_entries("head", "\n", entries, render, |es| es.len() - 1, note);
    assert!(out.ends_with("dropped [6, 5, 4], kept [1, 2, 3]"), "{}", &out[out.len() - 60..]);
    assert!(estimate_tokens(&out) <= RECALL_TOKEN_CAP);
}

#[test]
fn a_single_long_turn_is_read_page_by_page() {
    let text: String = (0..40_000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
    let mut c = Convo::new();
    c.user("hi").calls("", &[("c1", "read_file", r#"{"path":"big.txt"}"#)]).result("c1", "read_file", &text);
    let mut a = TestArchive::new();
    a.add_session("s1", "Big", "/w", c.build());
    let first = run_recall(&a, "s1", r#"{"action":"range","start_turn":3,"end_turn":3}"#);
    assert!(estimate_tokens(&first) <= RECALL_TOKEN_CAP);
    assert!(first.starts_with("[Turn 3] tool:read_file: abcdef"));
    assert!(
        first.ends_with("[… 12,025 more characters; continue with range 3-3 offset=28000]"),
        "{}",
        &first[first.len() - 200..]
    );
    let second = run_recall(&a, "s1", r#"{"action":"range","start_turn":3,"end_turn":3,"offset":28000}"#);
    assert!(second.starts_with("[Turn 3, characters 28,000..40,025 of 40,025]\n"), "{}", &second[..100]);
    let shown: String = [&first[..RANGE_PAGE_CHARS], &second[second.find('\n').unwrap() + 1..]].concat();
    assert_eq!(shown, format!("[Turn 3] tool:read_file: {text}"), "the two pages hold the whole turn");
}

#[test]
fn a_range_over_a_huge_span_is_capped() {
    let mut c = Convo::new();
    for i in 0..300 {
        c.user(&format!("m{i}"));
    }
    let mut a = TestArchive::new();
    a.add_session("s1", "Many", "/w", c.build());
    let out = run_recall(&a, "s1", r#"{"action":"range","start_turn":1,"end_turn":1000000}"#);
    assert!(out.starts_with("Turns 1..200 (the session has 300 turns):\n\n[Turn 1] user: m0\n"), "{}", &out[..120]);
    assert!(
        out.ends_with("[Turn 200] user: m199\n\n[a range returns at most 200 turns; continue with range 201-300]"),
        "{out}"
    );
    assert_eq!(a.turns_read.get(), 200, "never reads past the cap");
}

proptest::proptest! {
    #[test]
    fn any_arguments_give_bounded_text(
        action in proptest::sample::select(vec!["search", "range", "tool_calls", "summary", "find", ""]),
        query in ".{0,40}",
        start in proptest::option::of(-5i64..20),
        end in proptest::option::of(-5i64..20),
        limit in proptest::option::of(-3i64..80),
        offset in proptest::option::of(-2i64..200),
        raw in ".{0,60}",
        use_raw in proptest::bool::weighted(0.2),
    ) {
        let mut args = serde_json::json!({"action": action, "query": query, "tool_name": query});
        for (key, value) in [("start_turn", start), ("end_turn", end), ("limit", limit), ("offset", offset)] {
            if let Some(v) = value {
                args[key] = v.into();
            }
        }
        let text = if use_raw { raw } else { args.to_string() };
        let out = run_recall(&archive(), "s1", &text);
        proptest::prop_assert!(!out.is_empty() && estimate_tokens(&out) <= RECALL_TOKEN_CAP);
    }
}

#[test]
fn call_signatures() {
    let rows = [
        ("read_file", r#"{"path":"src/auth.py"}"#, "read_file(path=\"src/auth.py\")"),
        ("bash", r#"{"command":"echo \"hi\"\nls","timeout":30}"#, "bash(command=\"echo \\\"hi\\\"\\nls\", timeout=30)"),
        ("t", "", "t()"),
        ("t", "{not json", "t({not json)"),
        ("t", r#"{"a":[1,2],"b":null}"#, "t(a=[1,2], b=null)"),
    ];
    for (name, args, expect) in rows {
        assert_eq!(call_signature(name, args, Some(200)), expect);
    }
    assert_eq!(
        call_signature("w", &format!(r#"{{"content":"{}"}}"#, "x".repeat(500)), Some(10)),
        "w(content=\"xxxxxxxxxx…\")"
    );
}

/// A source that records the text each search asked for, and whether by meaning too.
struct Recording<'a> {
    inner: &'a TestArchive,
    asked: std::cell::RefCell<Vec<(String, bool)>>,
}

impl RecallSource for Recording<'_> {
    fn search(&self, query: &SearchQuery) -> crate::Result<Vec<SearchHit>> {
        self.asked.borrow_mut().push((query.text.clone(), false));
        self.inner.search(query)
    }
    fn search_hybrid(&self, query: &SearchQuery, _vector: &[f32]) -> crate::Result<Vec<SearchHit>> {
        self.asked.borrow_mut().push((query.text.clone(), true));
        self.inner.search(query)
    }
    fn turns_range(&self, session_id: &str, start: i64, end: i64) -> crate::Result<Vec<Turn>> {
        self.inner.turns_range(session_id, start, end)
    }
    fn tool_executions(&self, session_id: &str, tool_name: &str, limit: usize) -> crate::Result<Vec<ToolExecution>> {
        self.inner.tool_executions(session_id, tool_name, limit)
    }
    fn session(&self, session_id: &str) -> crate::Result<Session> {
        self.inner.session(session_id)
    }
    fn tasks(&self, session_id: &str) -> crate::Result<Vec<TaskRecord>> {
        self.inner.tasks(session_id)
    }
}

#[test]
fn by_meaning_the_words_part_is_the_words_the_host_gave() {
    let archive = archive();
    let source = Recording { inner: &archive, asked: Default::default() };
    let args = r#"{"action":"search","query":"what did we do about the refresh token"}"#;
    let context = RecallContext { query_vector: Some((vec![0.0; 4], "refresh token".into())), ..Default::default() };
    let out = run_recall_with(&source, "s1", args, &context);
    assert!(out.contains("refresh"), "{out}");
    assert_eq!(source.asked.borrow().first(), Some(&("refresh token".to_owned(), true)));
    // By words alone, the query as the model wrote it.
    source.asked.borrow_mut().clear();
    run_recall_with(&source, "s1", args, &RecallContext::default());
    assert_eq!(source.asked.borrow().first(), Some(&("what did we do about the refresh token".to_owned(), false)));
}
