//! Tests of context assembly: what fits the budget, tool-call groups kept whole, manifests.

use super::units::head_tail;
use super::*;
use crate::state::thousands;
use crate::state::{apply_turn, ExtractionRules};
use crate::test_support::{Convo, CountingSource};
use crate::TurnStatus;
use expect_test::{expect, Expect};
use proptest::prelude::*;

const PROMPT: &str = "You are a test assistant. Use conversation_recall for older turns.";

fn settings(context_window: i64, output_reserve: i64) -> ContextSettings {
    ContextSettings { context_window, output_reserve, ..ContextSettings::default() }
}

fn state_for(turns: &[Turn]) -> SessionState {
    let mut state = SessionState::new("s1", "/w", "m");
    for turn in turns {
        apply_turn(&mut state, turn, &ExtractionRules::default());
    }
    state
}

/// Long contents as their first and last 40 characters around every marker line they contain.
fn abbreviate(content: &str) -> String {
    let count = content.chars().count();
    if count <= 240 {
        return content.to_string();
    }
    let head: String = content.chars().take(40).collect();
    let tail: String = content.chars().skip(count - 40).collect();
    let markers: Vec<&str> = content.lines().filter(|l| l.contains("omitted; full text")).collect();
    let middle = if markers.is_empty() { String::new() } else { format!("\n{}\n", markers.join("\n")) };
    format!("{head}⟨…{count} chars…⟩{middle}{tail}")
}

/// The window as text: one block per message; the register is shown as its line count unless `full`.
fn show(ctx: &AssembledContext, full_system: bool) -> String {
    let mut out = String::new();
    for (i, m) in ctx.messages.iter().enumerate() {
        let content = if i == 0 && full_system {
            m.content.clone()
        } else if i == 0 {
            let (before, rest) = m.content.split_once("```yaml\n").expect("the register");
            let (yaml, after) = rest.split_once("```").expect("the register's end");
            format!("{before}```yaml ⟨{} lines⟩```{after}", yaml.lines().count())
        } else {
            abbreviate(&m.content)
        };
        let label = match (&m.tool_call_id, &m.name) {
            (Some(id), Some(name)) => format!("tool {name}#{id}"),
            _ => m.role.to_string(),
        };
        out.push_str(&format!("── {label}\n"));
        if !content.is_empty() {
            out.push_str(&format!("{content}\n"));
        }
        for call in &m.tool_calls {
            out.push_str(&format!("  → {}#{} {}\n", call.name, call.id, call.arguments));
        }
        if let Some(r) = &m.reasoning {
            let content = r.reasoning_content.as_deref().map(|c| format!(" reasoning_content {c:?}"));
            let blocks = (!r.blocks.is_empty()).then(|| format!(" {} thinking block(s)", r.blocks.len()));
            out.push_str(&format!("  ≈{}{}\n", content.unwrap_or_default(), blocks.unwrap_or_default()));
        }
    }
    let man = &ctx.manifest;
    out.push_str(&format!(
        "══ turns {:?} trimmed {:?} · state v{} · {}/{} tokens · {} archived\n",
        man.turn_numbers,
        man.trimmed_turns,
        man.state_version,
        man.estimated_tokens,
        man.budget_tokens,
        ctx.archived_turns
    ));
    if !man.reasoning_turns.is_empty() {
        out.push_str(&format!("══ reasoning sent back for turns {:?}\n", man.reasoning_turns));
    }
    out
}

/// Assembles `turns` with `settings` and compares the window with the snapshot.
fn check(turns: Vec<Turn>, settings: ContextSettings, expect: Expect) {
    let state = state_for(&turns);
    let ctx = assemble_context(&settings, PROMPT, &state, turns.as_slice()).expect("assembles");
    assert_invariants(&turns, &settings, &ctx);
    expect.assert_eq(&show(&ctx, false));
}

/// What must hold for every assembled window.
fn assert_invariants(turns: &[Turn], settings: &ContextSettings, ctx: &AssembledContext) {
    let ratio = settings.ratio();
    let total = estimate_messages(&ctx.messages, ratio);
    assert!(total <= settings.budget(), "over budget: {total} > {}\n{}", settings.budget(), show(ctx, true));
    assert_eq!(total, ctx.manifest.estimated_tokens);
    assert_eq!(ctx.messages[0].role, Role::System);
    // Tool messages come right after the assistant message that called them, all of them.
    let mut i = 0;
    while i < ctx.messages.len() {
        let m = &ctx.messages[i];
        assert!(m.role != Role::Tool, "tool message without its call at {i}:\n{}", show(ctx, true));
        i += 1;
        if m.role == Role::Assistant && !m.tool_calls.is_empty() {
            for call in &m.tool_calls {
                let r = ctx
                    .messages
                    .get(i)
                    .unwrap_or_else(|| panic!("call {} has no result:\n{}", call.id, show(ctx, true)));
                assert_eq!(
                    (r.role, r.tool_call_id.as_deref()),
                    (Role::Tool, Some(call.id.as_str())),
                    "\n{}",
                    show(ctx, true)
                );
                i += 1;
            }
        }
    }
    // The newest user message is always there, whole.
    if let Some(user) = turns.iter().rev().find(|t| t.role == Role::User) {
        assert!(ctx.manifest.turn_numbers.contains(&user.turn_number), "newest user message missing");
        assert!(ctx.messages.iter().any(|m| m.role == Role::User && m.content == user.content));
    }
    let mut shown = ctx.manifest.turn_numbers.clone();
    shown.sort_unstable();
    shown.dedup();
    assert_eq!(shown.len(), ctx.manifest.turn_numbers.len(), "a turn shown twice");
    assert_eq!(shown.len() as i64 + ctx.archived_turns, turns.len() as i64, "every turn is shown or archived");
    let has_note = ctx.messages[0].content.contains("not shown here but");
    assert_eq!(has_note, ctx.archived_turns > 0, "the archive note appears exactly when turns are left out");
}

#[test]
fn short_session_fits_whole() {
    let mut c = Convo::new();
    c.user("Hi! We use JWT for auth.").assistant("Noted: JWT it is.").user("Add a login endpoint.");
    let turns = c.build();
    let state = state_for(&turns);
    let ctx = assemble_context(&ContextSettings::default(), PROMPT, &state, turns.as_slice()).unwrap();
    assert_invariants(&turns, &ContextSettings::default(), &ctx);
    expect![[r#"
        ── system
        You are a test assistant. Use conversation_recall for older turns.

        ## Session state
        ```yaml
        session:
          id: "s1"
          workspace: "/w"
          model: "m"
          turn_count: 3
          total_tokens: 17
        files_touched: []
        key_decisions:
          - "We use JWT for auth. (turn 1)"
        current_focus: "Add a login endpoint."
        errors_resolved: []
        open_tasks: []
        ```
        ── user
        Hi! We use JWT for auth.
        ── assistant
        Noted: JWT it is.
        ── user
        Add a login endpoint.
        ══ turns [1, 2, 3] trimmed [] · state v3 · 115/24576 tokens · 0 archived
    "#]]
    .assert_eq(&show(&ctx, true));
}

#[test]
fn long_session_leaves_out_old_turns_and_hints_at_recall() {
    let mut c = Convo::new();
    for i in 1..=20 {
        c.user(&format!("Question {i}: how should the {i}th module handle retries and timeouts?"));
        c.assistant(&format!("Answer {i}: use exponential backoff with jitter, capped at {i} seconds."));
    }
    c.user("Do the same as before for module 21.");
    check(
        c.build(),
        settings(1_000, 200),
        expect![[r#"
            ── system
            You are a test assistant. Use conversation_recall for older turns.

            ## Session state
            ```yaml ⟨11 lines⟩```

            ## Not in this window
            Turns 1..13 of this session are not shown here but are in the archive; use conversation_recall (search / range) to read them.
            The user's latest message refers to earlier conversation ("as before") that may not be in this window. Call conversation_recall (search, or range) to find it before answering; do not guess, and do not ask the user to repeat it.
            ── assistant
            Answer 7: use exponential backoff with jitter, capped at 7 seconds.
            ── user
            Question 8: how should the 8th module handle retries and timeouts?
            ── assistant
            Answer 8: use exponential backoff with jitter, capped at 8 seconds.
            ── user
            Question 9: how should the 9th module handle retries and timeouts?
            ── assistant
            Answer 9: use exponential backoff with jitter, capped at 9 seconds.
            ── user
            Question 10: how should the 10th module handle retries and timeouts?
            ── assistant
            Answer 10: use exponential backoff with jitter, capped at 10 seconds.
            ── user
            Question 11: how should the 11th module handle retries and timeouts?
            ── assistant
            Answer 11: use exponential backoff with jitter, capped at 11 seconds.
            ── user
            Question 12: how should the 12th module handle retries and timeouts?
            ── assistant
            Answer 12: use exponential backoff with jitter, capped at 12 seconds.
            ── user
            Question 13: how should the 13th module handle retries and timeouts?
            ── assistant
            Answer 13: use exponential backoff with jitter, capped at 13 seconds.
            ── user
            Question 14: how should the 14th module handle retries and timeouts?
            ── assistant
            Answer 14: use exponential backoff with jitter, capped at 14 seconds.
            ── user
            Question 15: how should the 15th module handle retries and timeouts?
            ── assistant
            Answer 15: use exponential backoff with jitter, capped at 15 seconds.
            ── user
            Question 16: how should the 16th module handle retries and timeouts?
            ── assistant
            Answer 16: use exponential backoff with jitter, capped at 16 seconds.
            ── user
            Question 17: how should the 17th module handle retries and timeouts?
            ── assistant
            Answer 17: use exponential backoff with jitter, capped at 17 seconds.
            ── user
            Question 18: how should the 18th module handle retries and timeouts?
            ── assistant
            Answer 18: use exponential backoff with jitter, capped at 18 seconds.
            ── user
            Question 19: how should the 19th module handle retries and timeouts?
            ── assistant
            Answer 19: use exponential backoff with jitter, capped at 19 seconds.
            ── user
            Question 20: how should the 20th module handle retries and timeouts?
            ── assistant
            Answer 20: use exponential backoff with jitter, capped at 20 seconds.
            ── user
            Do the same as before for module 21.
            ══ turns [14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41] trimmed [] · state v41 · 767/800 tokens · 13 archived
        "#]],
    );
}

#[test]
fn tool_heavy_session_shortens_old_outputs() {
    let long_file: String = (1..=150).map(|i| format!("line {i:03}: def handler_{i}(request): return ok\n")).collect();
    let recall_output: String =
        (1..=20).map(|i| format!("[Turn {i}] user: something about sessions and cookies, item {i:02}\n")).collect();
    let mut c = Convo::new();
    c.user("Read the auth module and run the tests.")
        .calls(
            "Reading it and running the suite.",
            &[("c1", "read_file", r#"{"path":"src/auth.py"}"#), ("c2", "bash", r#"{"command":"pytest -q"}"#)],
        )
        .result("c1", "read_file", &long_file)
        .result("c2", "bash", "3 passed in 0.12s")
        .assistant("The tests pass; the module has 150 handlers.")
        .user("What did we decide about tokens? Check the archive.")
        .calls("", &[("c3", "conversation_recall", r#"{"action":"search","query":"tokens"}"#)])
        .result("c3", "conversation_recall", &recall_output)
        .assistant("Nothing about tokens yet.")
        .user("Then show me the config.")
        .calls("", &[("c4", "read_file", r#"{"path":"config.py"}"#)])
        .result("c4", "read_file", "DEBUG = True");
    check(
        c.build(),
        settings(3_000, 1_000),
        expect![[r#"
            ── system
            You are a test assistant. Use conversation_recall for older turns.

            ## Session state
            ```yaml ⟨13 lines⟩```
            ── user
            Read the auth module and run the tests.
            ── assistant
            Reading it and running the suite.
              → read_file#c1 {"path":"src/auth.py"}
              → bash#c2 {"command":"pytest -q"}
            ── tool read_file#c1
            line 001: def handler_1(request): return⟨…1190 chars…⟩
            [… 5,669 chars omitted; full text: conversation_recall range 3 …]
            50: def handler_150(request): return ok

            ── tool bash#c2
            3 passed in 0.12s
            ── assistant
            The tests pass; the module has 150 handlers.
            ── user
            What did we decide about tokens? Check the archive.
            ── assistant
              → conversation_recall#c3 {"action":"search","query":"tokens"}
            ── tool conversation_recall#c3
            [Turn 1] user: something about sessions ⟨…1231 chars…⟩ing about sessions and cookies, item 20

            ── assistant
            Nothing about tokens yet.
            ── user
            Then show me the config.
            ── assistant
              → read_file#c4 {"path":"config.py"}
            ── tool read_file#c4
            DEBUG = True
            ══ turns [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] trimmed [3] · state v12 · 894/2000 tokens · 0 archived
        "#]],
    );
}

#[test]
fn incomplete_groups_interrupted_turns_and_late_results() {
    let mut c = Convo::new();
    c.user("Build it.")
        .calls("", &[("c1", "bash", r#"{"command":"make"}"#)])
        // The tab was closed while `make` ran: no result was ever stored.
        .user("Hello? Did it run?")
        .calls("Let me check the log and", &[("c2", "read_file", r#"{"path":"build.lo"#)])
        .status(TurnStatus::Interrupted)
        .user("Continue.")
        .assistant("")
        .status(TurnStatus::Error)
        .calls("", &[("c3", "bash", r#"{"command":"make"}"#), ("c4", "bash", r#"{"command":"make test"}"#)])
        .result("c3", "bash", "built")
        .result("c3", "bash", "built (duplicate delivery)")
        .result("c9", "delegate_task", "Task completed: \"Write docs\"")
        .result("c4", "bash", "")
        .calls("Now reading the result file.", &[("c5", "read_file", r#"{"path":"out.txt"}"#)]);
    check(
        c.build(),
        ContextSettings::default(),
        expect![[r#"
        ── system
        You are a test assistant. Use conversation_recall for older turns.

        ## Session state
        ```yaml ⟨12 lines⟩```
        ── user
        Build it.
        ── assistant
          → bash#c1 {"command":"make"}
        ── tool bash#c1
        [No result was recorded for this call: it was interrupted or never ran. Call the tool again if you still need its result.]
        ── user
        Hello? Did it run?
        ── assistant
        Let me check the log and

        [This reply was interrupted before it finished; the text above is all that was received.]
        ── user
        Continue.
        ── assistant
        [This reply ended with an error; the text above is all that was received.]
        ── assistant
          → bash#c3 {"command":"make"}
          → bash#c4 {"command":"make test"}
        ── tool bash#c3
        built
        ── tool bash#c4
        (no output)
        ── system
        [Turn 9: a result from bash that arrived outside its tool call]
        built (duplicate delivery)
        ── system
        [Turn 10: a result from delegate_task that arrived outside its tool call]
        Task completed: "Write docs"
        ── assistant
        Now reading the result file.
          → read_file#c5 {"path":"out.txt"}
        ── tool read_file#c5
        [No result was recorded for this call: it was interrupted or never ran. Call the tool again if you still need its result.]
        ══ turns [1, 2, 3, 4, 5, 6, 7, 8, 11, 9, 10, 12] trimmed [] · state v12 · 381/24576 tokens · 0 archived
    "#]],
    );
}

#[test]
fn delegated_tasks_come_back_into_the_conversation() {
    let mut c = Convo::new();
    c.user("Migrate src/routes to TypeScript; don't touch the migrations.")
        .calls("", &[("d1", "delegate_task", r#"{"goal":"Migrate src/routes to TypeScript","context":{"constraints":["don't touch the migrations"]}}"#)])
        .result(
            "d1",
            "delegate_task",
            "Task completed: \"Migrate src/routes to TypeScript\"\n\nSubtasks:\n  [x] Convert routes\n  [x] Update imports\n\nFiles changed:\n  - src/routes/index.ts (created)\n  - src/app.ts (modified)\n\nVerification: All subtasks passed tier-1 verification.",
        )
        .assistant("Done: routes are TypeScript now, 2 files changed, all verified.")
        .user("Great. Also write the docs, in the background.")
        .calls("", &[("d2", "delegate_task", r#"{"goal":"Write docs for the routes","wait":false}"#)])
        .result("d2", "delegate_task", "Task submitted: task-7")
        .assistant("Started task-7; I'll report when it ends.")
        .system("Task completed: \"Write docs for the routes\"\n\nFiles changed:\n  - docs/routes.md (created)")
        .user("Is it done?");
    check(
        c.build(),
        ContextSettings::default(),
        expect![[r#"
        ── system
        You are a test assistant. Use conversation_recall for older turns.

        ## Session state
        ```yaml ⟨18 lines⟩```
        ── user
        Migrate src/routes to TypeScript; don't touch the migrations.
        ── assistant
          → delegate_task#d1 {"goal":"Migrate src/routes to TypeScript","context":{"constraints":["don't touch the migrations"]}}
        ── tool delegate_task#d1
        Task completed: "Migrate src/routes to TypeScript"

        Subtasks:
          [x] Convert routes
          [x] Update imports

        Files changed:
          - src/routes/index.ts (created)
          - src/app.ts (modified)

        Verification: All subtasks passed tier-1 verification.
        ── assistant
        Done: routes are TypeScript now, 2 files changed, all verified.
        ── user
        Great. Also write the docs, in the background.
        ── assistant
          → delegate_task#d2 {"goal":"Write docs for the routes","wait":false}
        ── tool delegate_task#d2
        Task submitted: task-7
        ── assistant
        Started task-7; I'll report when it ends.
        ── system
        Task completed: "Write docs for the routes"

        Files changed:
          - docs/routes.md (created)
        ── user
        Is it done?
        ══ turns [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] trimmed [] · state v10 · 445/24576 tokens · 0 archived
    "#]],
    );
}

#[test]
fn a_too_long_current_exchange_leaves_a_gap() {
    let mut c = Convo::new();
    c.user("Old question.").assistant("Old answer.").user("Fix every lint in the crate.");
    for i in 1..=12 {
        let id = format!("c{i}");
        c.calls("", &[(&id, "bash", &format!(r#"{{"command":"cargo clippy -p part{i}"}}"#))]).result(
            &id,
            "bash",
            &format!("warning: unused variable in part{i} {}", "·".repeat(300)),
        );
    }
    check(
        c.build(),
        settings(1_500, 300),
        expect![[r#"
        ── system
        You are a test assistant. Use conversation_recall for older turns.

        ## Session state
        ```yaml ⟨11 lines⟩```

        ## Not in this window
        Turns 1..2 of this session and turns 4..9 (earlier steps since the user's latest message) are not shown here but are in the archive; use conversation_recall (search / range) to read them.
        ── user
        Fix every lint in the crate.
        ── assistant
          → bash#c4 {"command":"cargo clippy -p part4"}
        ── tool bash#c4
        warning: unused variable in part4 ······⟨…334 chars…⟩········································
        ── assistant
          → bash#c5 {"command":"cargo clippy -p part5"}
        ── tool bash#c5
        warning: unused variable in part5 ······⟨…334 chars…⟩········································
        ── assistant
          → bash#c6 {"command":"cargo clippy -p part6"}
        ── tool bash#c6
        warning: unused variable in part6 ······⟨…334 chars…⟩········································
        ── assistant
          → bash#c7 {"command":"cargo clippy -p part7"}
        ── tool bash#c7
        warning: unused variable in part7 ······⟨…334 chars…⟩········································
        ── assistant
          → bash#c8 {"command":"cargo clippy -p part8"}
        ── tool bash#c8
        warning: unused variable in part8 ······⟨…334 chars…⟩········································
        ── assistant
          → bash#c9 {"command":"cargo clippy -p part9"}
        ── tool bash#c9
        warning: unused variable in part9 ······⟨…334 chars…⟩········································
        ── assistant
          → bash#c10 {"command":"cargo clippy -p part10"}
        ── tool bash#c10
        warning: unused variable in part10 ·····⟨…335 chars…⟩········································
        ── assistant
          → bash#c11 {"command":"cargo clippy -p part11"}
        ── tool bash#c11
        warning: unused variable in part11 ·····⟨…335 chars…⟩········································
        ── assistant
          → bash#c12 {"command":"cargo clippy -p part12"}
        ── tool bash#c12
        warning: unused variable in part12 ·····⟨…335 chars…⟩········································
        ══ turns [3, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27] trimmed [] · state v27 · 1125/1200 tokens · 8 archived
    "#]],
    );
}

#[test]
fn mandatory_parts_that_do_not_fit_are_an_error() {
    let mut c = Convo::new();
    c.user("short").assistant("ok").user(&"x".repeat(40_000));
    let turns = c.build();
    let err = assemble_context(&settings(8_000, 1_000), PROMPT, &state_for(&turns), turns.as_slice()).unwrap_err();
    let Error::ContextOverflow { needed, available } = err else { panic!("{err:?}") };
    assert_eq!(available, 7_000);
    assert!(needed > 10_000, "{needed}");
    let err = assemble_context(&settings(1_000, 1_000), PROMPT, &state_for(&turns), turns.as_slice()).unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err:?}");
    // A message that fits exactly is sent.
    let ok = assemble_context(&settings(40_000, 8_192), PROMPT, &state_for(&turns), turns.as_slice()).unwrap();
    assert_invariants(&turns, &settings(40_000, 8_192), &ok);
}

#[test]
fn a_session_without_user_messages_or_turns() {
    let ctx = assemble_context(&ContextSettings::default(), PROMPT, &SessionState::default(), &[][..]).unwrap();
    assert_eq!((ctx.messages.len(), ctx.archived_turns), (1, 0));
    let mut c = Convo::new();
    for i in 0..40 {
        c.system(&format!("Notice {i}: {}", "n".repeat(200)));
    }
    let turns = c.build();
    let ctx = assemble_context(&settings(1_200, 200), PROMPT, &state_for(&turns), turns.as_slice()).unwrap();
    assert_invariants(&turns, &settings(1_200, 200), &ctx);
    assert!(ctx.archived_turns > 0);
    assert!(ctx.messages[0].content.contains(&format!("Turns 1..{} of this session", ctx.archived_turns)));
}

#[test]
fn head_and_tail_name_the_archive_turn() {
    let content: String = (0..3_000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
    let short = head_tail(&content, 212);
    assert!(short.starts_with(&content[..TRIM_HEAD_CHARS]));
    assert!(short.ends_with(&content[content.len() - TRIM_TAIL_CHARS..]));
    assert!(short.contains("\n[… 1,800 chars omitted; full text: conversation_recall range 212 …]\n"), "{short}");
    let lines: String = (0..400).map(|i| format!("row {i:04}\n")).collect();
    let short = head_tail(&lines, 7);
    assert!(
        short.lines().all(|l| l.starts_with("row ") && l.len() == 8 || l.starts_with("[…")),
        "lines are cut whole:\n{short}"
    );
    let wide = "é".repeat(3_000);
    assert!(head_tail(&wide, 1).contains("1,800 chars omitted"));
    assert_eq!(
        (thousands(0), thousands(999), thousands(1_000), thousands(18_402), thousands(-1_234_567)),
        ("0".into(), "999".into(), "1,000".into(), "18,402".into(), "-1,234,567".into())
    );
}

#[test]
fn archive_notes() {
    let rows = [
        (Some(1), None, "Turn 1 of this session is not shown here but is in the archive; use conversation_recall (search / range) to read it."),
        (Some(41), None, "Turns 1..41 of this session are not shown here but are in the archive; use conversation_recall (search / range) to read them."),
        (Some(3), Some((5, 9)), "Turns 1..3 of this session and turns 5..9 (earlier steps since the user's latest message) are not shown here but are in the archive; use conversation_recall (search / range) to read them."),
        (None, Some((2, 2)), "Turn 2 (earlier steps since the user's latest message) is not shown here but is in the archive; use conversation_recall (search / range) to read it."),
    ];
    for (prefix, gap, expect) in rows {
        assert_eq!(archive_note(prefix, gap), expect);
    }
}

#[test]
fn reads_only_the_recent_turns_of_a_huge_session() {
    let mut c = Convo::new();
    for i in 0..5_000 {
        c.user(&format!("{i:05} {}", "question text ".repeat(28)));
        c.assistant(&format!("{i:05} {}", "answer text. ".repeat(30)));
    }
    let turns = c.build();
    assert_eq!(turns.len(), 10_000);
    let source = CountingSource::new(turns);
    let s = settings(32_768, 8_192);
    let ctx = assemble_context(&s, PROMPT, &SessionState::default(), &source).unwrap();
    let shown = ctx.manifest.turn_numbers.len();
    let read = source.read.get();
    assert!(shown > 150, "only {shown} turns fit");
    assert!(read < 300 && read <= shown + PAGE_SIZE, "read {read} turns to show {shown}");
    assert_eq!(ctx.archived_turns, 10_000 - shown as i64);
    assert_eq!(*ctx.manifest.turn_numbers.last().unwrap(), 10_000);
}

/// A random conversation: a list of steps, each one or more turns.
#[derive(Debug, Clone)]
enum Step {
    User(usize),
    Assistant(usize, TurnStatus),
    System(usize),
    /// Result sizes per call (`None`: the result was never stored), an extra unrelated result, and the
    /// assistant turn's status.
    Calls(Vec<Option<usize>>, bool, TurnStatus),
}

fn status() -> impl Strategy<Value = TurnStatus> {
    prop_oneof![8 => Just(TurnStatus::Complete), 1 => Just(TurnStatus::Interrupted), 1 => Just(TurnStatus::Error)]
}

fn size() -> impl Strategy<Value = usize> {
    prop_oneof![6 => 0usize..200, 3 => 200usize..3_000, 1 => 3_000usize..20_000]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => size().prop_map(Step::User),
        3 => (size(), status()).prop_map(|(n, s)| Step::Assistant(n, s)),
        1 => size().prop_map(Step::System),
        3 => (prop::collection::vec(prop::option::weighted(0.9, size()), 1..4), prop::bool::weighted(0.1), status())
            .prop_map(|(r, extra, s)| Step::Calls(r, extra, s)),
    ]
}

fn build(steps: &[Step]) -> Vec<Turn> {
    let text = |n: usize, tag: &str| -> String { format!("{tag} {}", "word ".repeat(n / 5)) };
    let mut c = Convo::new();
    for (k, step) in steps.iter().enumerate() {
        match step {
            Step::User(n) => {
                c.user(&text(*n, "user"));
            }
            Step::Assistant(n, s) => {
                c.assistant(&text(*n, "assistant")).status(*s);
            }
            Step::System(n) => {
                c.system(&text(*n, "system"));
            }
            Step::Calls(results, extra, s) => {
                let ids: Vec<String> = (0..results.len()).map(|i| format!("k{k}c{i}")).collect();
                let calls: Vec<(&str, &str, &str)> =
                    ids.iter().map(|id| (id.as_str(), "bash", r#"{"command":"ls"}"#)).collect();
                c.calls("calling", &calls).status(*s);
                for (id, r) in ids.iter().zip(results) {
                    if let Some(n) = r {
                        c.result(id, "bash", &text(*n, "output"));
                    }
                }
                if *extra {
                    c.result("stray", "delegate_task", "late result");
                }
            }
        }
    }
    c.build()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn windows_respect_budget_pairing_and_the_user_message(
        steps in prop::collection::vec(step(), 0..40),
        window in 300i64..12_000,
        reserve in 0i64..300,
        protection in 0.0f64..1.0,
        ratio in 1.0f64..6.0,
    ) {
        let turns = build(&steps);
        let s = ContextSettings { context_window: window, output_reserve: reserve, protection_fraction: protection, chars_per_token: ratio, ..ContextSettings::default() };
        let state = state_for(&turns);
        let source = CountingSource::new(turns.clone());
        match assemble_context(&s, PROMPT, &state, &source) {
            Ok(ctx) => assert_invariants(&turns, &s, &ctx),
            Err(Error::ContextOverflow { needed, available }) => {
                // Only when the mandatory parts (system message, newest user message, archive note)
                // really exceed the budget.
                prop_assert_eq!(available, s.budget());
                prop_assert!(needed > available);
                let system = format!("{PROMPT}\n\n## Session state\n```yaml\n{}```", render_yaml(&state));
                let mut mandatory = vec![ContextMessage::new(Role::System, system)];
                if let Some(user) = turns.iter().rev().find(|t| t.role == Role::User) {
                    mandatory.push(ContextMessage::new(Role::User, user.content.clone()));
                }
                let floor = estimate_messages(&mandatory, ratio);
                let note = estimate_with_ratio(&archive_note(Some(99_999), Some((99_999, 99_999))), ratio) + 40;
                prop_assert!(floor <= needed && needed <= floor + note, "needed {} vs floor {}", needed, floor);
            }
            Err(e) => prop_assert!(false, "unexpected error {e:?}"),
        }
    }
}

/// A reply's reasoning, stored in its turn's metadata by the agent loop, rides along on the assembled
/// assistant message with its tool calls, so the wire formats can send it back (DeepSeek's
/// `reasoning_content`, Anthropic's signed thinking blocks); once the user has spoken again it is
/// dropped, and a reply without tool calls never carries any.
#[test]
fn reasoning_stored_in_the_metadata_comes_back_with_the_tool_calls() {
    let block = serde_json::json!({"type": "thinking", "thinking": "Read it first.", "signature": "Sig"});
    let mut c = Convo::new();
    c.user("How long do refresh tokens live?")
        .calls("Reading it.", &[("c1", "read_file", r#"{"path":"src/auth.py"}"#)])
        .meta(serde_json::json!({"reasoning": "Read it first.", "reasoning_field": "reasoning_content", "reasoning_blocks": [block]}))
        .result("c1", "read_file", "REFRESH_DAYS = 7");
    let turns = c.build();
    let ctx = assemble_context(&ContextSettings::default(), PROMPT, &state_for(&turns), turns.as_slice()).unwrap();
    let replays: Vec<(&str, Option<&ReasoningReplay>)> =
        ctx.messages.iter().map(|m| (m.content.as_str(), m.reasoning.as_ref())).collect();
    let with_calls =
        ReasoningReplay { reasoning_content: Some("Read it first.".into()), blocks: vec![block], ..Default::default() };
    assert!(replays.contains(&("Reading it.", Some(&with_calls))), "{replays:?}");
    assert_eq!(ctx.manifest.reasoning_turns, [2]);

    c.assistant("Seven days.").meta(serde_json::json!({"reasoning": "Easy.", "reasoning_field": "reasoning_content"}));
    c.user("Thanks.");
    let turns = c.build();
    let ctx = assemble_context(&ContextSettings::default(), PROMPT, &state_for(&turns), turns.as_slice()).unwrap();
    assert!(ctx.messages.iter().all(|m| m.reasoning.is_none()), "a finished exchange's reasoning is dropped");
    assert_eq!(ctx.manifest.reasoning_turns, [] as [i64; 0]);
}

/// Three rounds of a tool loop in progress after an earlier one: only the current rounds carry their
/// reasoning (DeepSeek-style `reasoning_content`), and the manifest names them.
#[test]
fn only_the_current_tool_loop_sends_its_reasoning_back() {
    let deepseek = |r: &str| serde_json::json!({"reasoning": r, "reasoning_field": "reasoning_content"});
    let mut c = Convo::new();
    c.user("List the repo.")
        .calls("", &[("a1", "list_dir", r#"{"path":"."}"#)])
        .meta(deepseek("Look at the root."))
        .result("a1", "list_dir", "src/ README.md")
        .assistant("src/ and README.md.")
        .meta(deepseek("Done."))
        .user("Now read three files.")
        .calls("", &[("b1", "read_file", r#"{"path":"a"}"#)])
        .meta(deepseek("First a."))
        .result("b1", "read_file", "A")
        .calls("", &[("b2", "read_file", r#"{"path":"b"}"#)])
        .meta(deepseek("Then b."))
        .result("b2", "read_file", "B")
        .calls("", &[("b3", "read_file", r#"{"path":"c"}"#)])
        .meta(deepseek("Last c."))
        .result("b3", "read_file", "C");
    check(
        c.build(),
        ContextSettings::default(),
        expect![[r#"
            ── system
            You are a test assistant. Use conversation_recall for older turns.

            ## Session state
            ```yaml ⟨14 lines⟩```
            ── user
            List the repo.
            ── assistant
              → list_dir#a1 {"path":"."}
            ── tool list_dir#a1
            src/ README.md
            ── assistant
            src/ and README.md.
            ── user
            Now read three files.
            ── assistant
              → read_file#b1 {"path":"a"}
              ≈ reasoning_content "First a."
            ── tool read_file#b1
            A
            ── assistant
              → read_file#b2 {"path":"b"}
              ≈ reasoning_content "Then b."
            ── tool read_file#b2
            B
            ── assistant
              → read_file#b3 {"path":"c"}
              ≈ reasoning_content "Last c."
            ── tool read_file#b3
            C
            ══ turns [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] trimmed [] · state v11 · 236/24576 tokens · 0 archived
            ══ reasoning sent back for turns [6, 8, 10]
        "#]],
    );
}

/// Anthropic's signed thinking blocks: the blocks of the tool loop in progress are sent (and counted),
/// an earlier exchange's are not.
#[test]
fn anthropic_thinking_blocks_of_earlier_exchanges_are_dropped() {
    let thinking = |t: &str, sig: &str| serde_json::json!({"reasoning": t, "reasoning_blocks": [{"type": "thinking", "thinking": t, "signature": sig}]});
    let mut c = Convo::new();
    c.user("Find the config.")
        .calls("", &[("toolu_1", "list_dir", r#"{"path":"."}"#)])
        .meta(thinking("Search the root.", "SigA"))
        .result("toolu_1", "list_dir", "config.toml")
        .assistant("It is config.toml.")
        .user("Read it.")
        .calls("", &[("toolu_2", "read_file", r#"{"path":"config.toml"}"#)])
        .meta(thinking("Open it.", "SigB"))
        .result("toolu_2", "read_file", "port = 8080");
    check(
        c.build(),
        ContextSettings::default(),
        expect![[r#"
            ── system
            You are a test assistant. Use conversation_recall for older turns.

            ## Session state
            ```yaml ⟨12 lines⟩```
            ── user
            Find the config.
            ── assistant
              → list_dir#toolu_1 {"path":"."}
            ── tool list_dir#toolu_1
            config.toml
            ── assistant
            It is config.toml.
            ── user
            Read it.
            ── assistant
              → read_file#toolu_2 {"path":"config.toml"}
              ≈ 1 thinking block(s)
            ── tool read_file#toolu_2
            port = 8080
            ══ turns [1, 2, 3, 4, 5, 6, 7] trimmed [] · state v7 · 181/24576 tokens · 0 archived
            ══ reasoning sent back for turns [6]
        "#]],
    );
}

/// The reasoning sent back is counted: a long one in the current tool loop costs its tokens, and the
/// same reasoning in an earlier exchange costs nothing, so more older turns fit.
#[test]
fn reasoning_sent_back_is_counted_in_the_budget() {
    let long = "think ".repeat(400); // 2,400 characters
    let meta = serde_json::json!({"reasoning": long, "reasoning_field": "reasoning_content"});
    let loop_with = |meta: serde_json::Value| {
        let mut c = Convo::new();
        c.user("Go.").calls("", &[("c1", "read_file", r#"{"path":"a"}"#)]).meta(meta).result("c1", "read_file", "A");
        let turns = c.build();
        assemble_context(&ContextSettings::default(), PROMPT, &state_for(&turns), turns.as_slice()).unwrap()
    };
    let with = loop_with(meta.clone());
    let without = loop_with(serde_json::json!({}));
    let cost = with.manifest.estimated_tokens - without.manifest.estimated_tokens;
    assert_eq!(cost, estimate_with_ratio(&long, DEFAULT_CHARS_PER_TOKEN), "the reasoning's own tokens");

    // A tight budget: the earlier exchange fits only because its reasoning is no longer sent.
    let mut c = Convo::new();
    c.user("Go.")
        .calls("", &[("c1", "read_file", r#"{"path":"a"}"#)])
        .meta(meta)
        .result("c1", "read_file", "A")
        .assistant("A.")
        .user("Again.");
    let turns = c.build();
    let base = assemble_context(&settings(100_000, 0), PROMPT, &state_for(&turns), turns.as_slice()).unwrap();
    // Room for the archive note assembly reserves first, and far less than the reasoning's 600 tokens.
    let tight = settings(base.manifest.estimated_tokens + 80, 0);
    check(
        turns,
        tight,
        expect![[r#"
        ── system
        You are a test assistant. Use conversation_recall for older turns.

        ## Session state
        ```yaml ⟨12 lines⟩```
        ── user
        Go.
        ── assistant
          → read_file#c1 {"path":"a"}
        ── tool read_file#c1
        A
        ── assistant
        A.
        ── user
        Again.
        ══ turns [1, 2, 3, 4, 5] trimmed [] · state v5 · 123/203 tokens · 0 archived
    "#]],
    );
}
