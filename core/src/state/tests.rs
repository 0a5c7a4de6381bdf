//! Tests of the session-state register: what each kind of turn records, pruning, and the YAML budget.

use super::render::{truncate_keep_end, truncate_middle, yaml_str};
use super::*;
use crate::test_support::Convo;
use crate::tokens::estimate_tokens;
use crate::TurnStatus;
use expect_test::{expect, Expect};
use proptest::prelude::*;

fn replay(turns: &[Turn], rules: &ExtractionRules) -> SessionState {
    let mut state = SessionState::new("s1", "/home/ana/shop", "gpt-test");
    for turn in turns {
        apply_turn(&mut state, turn, rules);
    }
    state
}

/// Replays the conversation with the default rules and compares the rendered register.
fn check(convo: &mut Convo, expect: Expect) {
    let state = replay(&convo.build(), &ExtractionRules::default());
    expect.assert_eq(&render_yaml(&state));
}

#[test]
fn representative_session() {
    let mut c = Convo::new();
    c.user("Let's add refresh tokens.\nWe use JWT. Never use an ORM, raw SQL only.")
        .calls("Reading the module.", &[("c1", "read_file", r#"{"path":"src/auth.py"}"#)])
        .result("c1", "read_file", "def login(): ...")
        .calls("", &[("c2", "edit_file", r#"{"file_path":"src/auth.py","old":"a","new":"b"}"#), ("c3", "write_file", r#"{"path":"tests/test_auth.py"}"#)])
        .result("c2", "edit_file", "ok")
        .result("c3", "write_file", "ok")
        .calls("", &[("c4", "bash", r#"{"command":"pytest  -q"}"#)])
        .result("c4", "bash", "E   ImportError: No module named 'jwt'\n1 failed\nexit code: 1")
        .calls("", &[("c5", "bash", r#"{"command":"pip install pyjwt"}"#)])
        .result("c5", "bash", "Successfully installed PyJWT")
        .calls("", &[("c6", "bash", r#"{"command":"pytest -q"}"#)])
        .result("c6", "bash", "3 passed\nexit code: 0")
        .calls("", &[("c7", "bash", r#"{"command":"git add -A && git commit -m \"Add refresh token rotation\""}"#)])
        .result("c7", "bash", "[main 1a2b3c] Add refresh token rotation")
        .user("Now migrate the routes to TypeScript — don't touch the migrations.")
        .calls("", &[("c8", "delegate_task", r#"{"goal":"Migrate src/routes to TypeScript"}"#)])
        .result(
            "c8",
            "delegate_task",
            "Task completed: \"Migrate src/routes to TypeScript\"\n\nSubtasks:\n  [x] Convert routes\n\nFiles changed:\n  - src/routes/index.ts (created)\n  - src/routes/index.js (deleted)\n  - src/app.ts (modified)\n\nVerification: All subtasks passed.",
        );
    check(
        &mut c,
        expect![[r#"
            session:
              id: "s1"
              workspace: "/home/ana/shop"
              model: "gpt-test"
              turn_count: 17
              total_tokens: 233
            files_touched:
              - {path: "src/auth.py", action: edit, turn: 5}
              - {path: "tests/test_auth.py", action: write, turn: 6}
              - {path: "src/routes/index.ts", action: create, turn: 17}
              - {path: "src/routes/index.js", action: delete, turn: 17}
              - {path: "src/app.ts", action: edit, turn: 17}
            key_decisions:
              - "We use JWT. (turn 1)"
              - "Never use an ORM, raw SQL only. (turn 1)"
              - "Committed: Add refresh token rotation (turn 14)"
              - "Now migrate the routes to TypeScript — don't touch the migrations. (turn 15)"
              - "Task completed: \"Migrate src/routes to TypeScript\" — 3 files changed (turn 17)"
            current_focus: "Now migrate the routes to TypeScript — don't touch the migrations."
            errors_resolved:
              - "`pytest -q` failed at turn 8 (E   ImportError: No module named 'jwt'), fixed by turn 12"
            open_tasks: []
        "#]],
    );
}

#[test]
fn file_tools_map_through_one_table() {
    fn touched(name: &str, args: &str, rules: &ExtractionRules) -> String {
        let mut c = Convo::new();
        c.calls("", &[("c1", name, args)]).result("c1", name, "done");
        let state = replay(&c.build(), rules);
        state.files_touched.iter().map(|f| format!("{} {}", f.action.as_str(), f.path)).collect::<Vec<_>>().join(", ")
    }
    let rules = ExtractionRules::default().with_file_tool("save_doc", FileAction::Write);
    let rows = [
        ("read_file", r#"{"path":"a.rs"}"#, "read a.rs"),
        ("view", r#"{"filename":"b.md"}"#, "read b.md"),
        ("cat", r#"{"target":"c.txt"}"#, "read c.txt"),
        ("write_file", r#"{"file_path":"d.rs","content":"x"}"#, "write d.rs"),
        ("create_file", r#"{"path":"e.rs"}"#, "create e.rs"),
        ("edit_file", r#"{"path":"f.rs"}"#, "edit f.rs"),
        ("str_replace", r#"{"path":"g.rs"}"#, "edit g.rs"),
        ("delete_file", r#"{"path":"h.rs"}"#, "delete h.rs"),
        ("rm", r#"{"paths":["i.rs","j.rs"]}"#, "delete i.rs, delete j.rs"),
        ("str_replace_based_edit_tool", r#"{"command":"view","path":"k.rs"}"#, "read k.rs"),
        ("str_replace_based_edit_tool", r#"{"command":"create","path":"l.rs"}"#, "create l.rs"),
        (
            "apply_patch",
            r#"{"input":"*** Begin Patch\n*** Update File: m.rs\n@@\n-a\n+b\n*** Add File: n.rs\n+x\n*** Delete File: o.rs\n*** End Patch"}"#,
            "edit m.rs, create n.rs, delete o.rs",
        ),
        ("apply_patch", r#"{"patch":"--- a/p.rs\n+++ b/p.rs\n@@ -1 +1 @@\n-a\n+b"}"#, "edit p.rs"),
        ("save_doc", r#"{"path":"q.md"}"#, "write q.md"),
        ("read_file", r#"{"path":""}"#, ""),
        ("read_file", "not json {", ""),
        ("search_files", r#"{"path":"src"}"#, ""),
    ];
    for (name, args, expect) in rows {
        assert_eq!(touched(name, args, &rules), expect, "{name}({args})");
    }
}

#[test]
fn failed_file_tools_touch_nothing() {
    let mut c = Convo::new();
    c.calls("", &[("c1", "write_file", r#"{"path":"x.rs"}"#)])
        .result("c1", "write_file", "permission denied")
        .status(TurnStatus::Error);
    assert!(replay(&c.build(), &ExtractionRules::default()).files_touched.is_empty());
}

#[test]
fn recognises_failed_results() {
    fn failed(content: &str, status: TurnStatus, metadata: serde_json::Value) -> bool {
        let mut c = Convo::new();
        c.result("c1", "bash", content).status(status).meta(metadata);
        result_failed(&c.build()[0])
    }
    use serde_json::json;
    let ok = TurnStatus::Complete;
    let rows = [
        ("all good", ok, json!(null), false),
        ("boom", TurnStatus::Error, json!(null), true),
        ("boom", ok, json!({"success": false}), true),
        ("exit code: 1", ok, json!({"success": true}), false),
        ("x", ok, json!({"is_error": true}), true),
        ("x", ok, json!({"exit_code": 2}), true),
        ("x", ok, json!({"exitCode": 0}), false),
        ("x", ok, json!({"returncode": 127}), true),
        ("output\n[exit code: 2]", ok, json!(null), true),
        ("Exit status 1\noutput", ok, json!(null), true),
        ("bash: foo: not found\nexited with code 127", ok, json!(null), true),
        ("done\nexit code: 0", ok, json!(null), false),
        ("output\nthe exit code 3 is only in a middle line\nlast line", ok, json!(null), false),
    ];
    for (content, status, meta, expect) in rows {
        assert_eq!(failed(content, status, meta.clone()), expect, "{content:?} {status:?} {meta}");
    }
}

#[test]
fn reads_commit_messages() {
    let rows = [
        (r#"git commit -m "Add login""#, Some("Add login")),
        (r#"git commit -am 'Fix: the "bug"'"#, Some(r#"Fix: the "bug""#)),
        (r#"cd app && git add . && git commit --message="Ship it" && git push"#, Some("Ship it")),
        (r#"git -C repo commit -m Quick"#, Some("Quick")),
        (r#"git commit -m"Tight""#, Some("Tight")),
        ("git commit -m \"$(cat <<'EOF'\nAdd rotation\n\nLong body\nEOF\n)\"", Some("Add rotation")),
        (r#"git commit -m "Subject" -m "Body""#, Some("Subject")),
        (r#"git commit -m "escaped \" quote""#, Some(r#"escaped " quote"#)),
        ("git commit", None),
        ("git log -m", None),
        (r#"echo "git commit -m nope""#, None),
        ("", None),
    ];
    for (command, expect) in rows {
        assert_eq!(commit_message(command).as_deref(), expect, "{command}");
    }
}

#[test]
fn a_fix_is_only_recorded_for_the_same_command() {
    let mut c = Convo::new();
    c.calls("", &[("c1", "run_command", r#"{"command":"cargo test"}"#)])
        .result("c1", "run_command", "error[E0425]: cannot find value `x`")
        .meta(serde_json::json!({"exit_code": 101}))
        .calls("", &[("c2", "run_command", r#"{"command":"cargo build"}"#)])
        .result("c2", "run_command", "Finished")
        .calls("", &[("c3", "shell", r#"{"cmd":["cargo","test"]}"#)])
        .result("c3", "shell", "ok")
        .calls("", &[("c4", "run_command", r#"{"command":"cargo test"}"#)])
        .result("c4", "run_command", "test result: ok")
        .calls("", &[("c5", "run_command", r#"{"command":"cargo test"}"#)])
        .result("c5", "run_command", "test result: ok");
    let state = replay(&c.build(), &ExtractionRules::default());
    assert_eq!(
        state.errors_resolved,
        ["`cargo test` failed at turn 2 (error[E0425]: cannot find value `x`), fixed by turn 6"],
        "the argv form of the same command (turn 6) fixes it; later successes add nothing"
    );
}

#[test]
fn prunes_to_the_newest_entries() {
    let mut c = Convo::new();
    for i in 0..30 {
        let id = format!("r{i}");
        c.calls("", &[(&id, "read_file", &format!(r#"{{"path":"f{}.rs"}}"#, i % 25))]).result(&id, "read_file", "x");
    }
    c.calls("", &[("e", "edit_file", r#"{"path":"f7.rs"}"#)]).result("e", "edit_file", "ok");
    for i in 0..15 {
        c.user(&format!("Never use library number {i}."));
    }
    for i in 0..8 {
        let (bad, good) = (format!("b{i}"), format!("g{i}"));
        let cmd = format!(r#"{{"command":"make target{i}"}}"#);
        c.calls("", &[(&bad, "bash", &cmd)]).result(&bad, "bash", "exit code: 2");
        c.calls("", &[(&good, "bash", &cmd)]).result(&good, "bash", "exit code: 0");
    }
    let state = replay(&c.build(), &ExtractionRules::default());
    let paths: Vec<&str> = state.files_touched.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths.len(), MAX_FILES);
    assert_eq!(paths.iter().filter(|p| **p == "f7.rs").count(), 1, "one entry per path: {paths:?}");
    let last = state.files_touched.last().unwrap();
    assert_eq!((last.path.as_str(), last.action), ("f7.rs", FileAction::Edit), "the newest action wins");
    assert_eq!(state.key_decisions.len(), MAX_DECISIONS);
    assert!(state.key_decisions[0].starts_with("Never use library number 5."), "{:?}", state.key_decisions);
    assert_eq!(state.errors_resolved.len(), MAX_ERRORS);
    assert!(state.errors_resolved[0].starts_with("`make target3`"), "{:?}", state.errors_resolved);
}

#[test]
fn repeated_constraints_move_to_the_newest_turn() {
    let mut c = Convo::new();
    c.user("Never use an ORM.").user("ok").user("Never use an ORM.");
    let state = replay(&c.build(), &ExtractionRules::default());
    assert_eq!(state.key_decisions, ["Never use an ORM. (turn 3)"]);
}

#[test]
fn focus_is_the_first_line_cut_on_a_char_boundary() {
    let mut c = Convo::new();
    c.user(&format!("\n\n  {}\nsecond line", "é🦀".repeat(80)));
    let state = replay(&c.build(), &ExtractionRules::default());
    assert_eq!(state.current_focus.chars().count(), MAX_FOCUS_CHARS);
    assert!(state.current_focus.starts_with("é🦀é") && state.current_focus.ends_with('…'));
}

#[test]
fn replaying_a_turn_changes_nothing() {
    let mut c = Convo::new();
    c.user("We use JWT.").assistant("Noted.");
    let turns = c.build();
    let mut state = SessionState::default();
    assert!(apply_turn(&mut state, &turns[0], &ExtractionRules::default()));
    assert!(apply_turn(&mut state, &turns[1], &ExtractionRules::default()));
    let before = state.clone();
    assert!(!apply_turn(&mut state, &turns[0], &ExtractionRules::default()));
    assert!(!apply_turn(&mut state, &turns[1], &ExtractionRules::default()));
    assert_eq!(state, before);
    assert_eq!(state.version, 2);
}

#[test]
fn tracks_delegated_tasks_until_they_finish() {
    let mut c = Convo::new();
    c.calls("", &[("d1", "delegate_task", r#"{"goal":"Port the CLI","wait":false}"#)])
        .result("d1", "delegate_task", "Task submitted: task-42")
        .calls("", &[("d2", "delegate_task", r#"{"goal":"Write docs","wait":false}"#)])
        .result("d2", "delegate_task", "Task submitted: task-43");
    let mut turns = c.build();
    let mut state = replay(&turns, &ExtractionRules::default());
    let open = |s: &SessionState| {
        s.open_tasks.iter().map(|t| format!("{} {} {}", t.task_id, t.status, t.goal)).collect::<Vec<_>>()
    };
    assert_eq!(open(&state), ["task-42 submitted Port the CLI", "task-43 submitted Write docs"]);

    // The result of a `wait: false` task arrives later as a system turn.
    let mut later = Convo::new();
    later.turns = std::mem::take(&mut turns);
    later
        .system("Task failed: \"Port the CLI\"\n\nSubtasks:\n  [!] build: linker error")
        .meta(serde_json::json!({"task_id": "task-42"}));
    let last = later.build().pop().unwrap();
    apply_turn(&mut state, &last, &ExtractionRules::default());
    assert_eq!(open(&state), ["task-43 submitted Write docs"]);
    assert_eq!(state.key_decisions, ["Task failed: \"Port the CLI\" (turn 5)"]);

    // The archive's task records are the authority.
    let record = |id: &str, status: &str| TaskRecord {
        task_id: id.to_string(),
        session_id: "s1".into(),
        turn_number: 3,
        goal: "Write docs".into(),
        context: String::new(),
        status: status.into(),
        result_delivered: false,
        created_at: 0,
        updated_at: 0,
    };
    let version = state.version;
    assert!(sync_tasks(&mut state, &[record("task-43", "executing")]));
    assert_eq!(open(&state), ["task-43 executing Write docs"]);
    assert!(!sync_tasks(&mut state, &[record("task-43", "executing")]));
    assert!(sync_tasks(&mut state, &[record("task-43", "completed")]));
    assert!(state.open_tasks.is_empty());
    assert_eq!(state.version, version + 2);
}

#[test]
fn json_round_trips_and_old_json_loads() {
    let mut c = Convo::new();
    c.calls("", &[("c1", "bash", r#"{"command":"make"}"#)]).result("c1", "bash", "exit code: 2");
    let state = replay(&c.build(), &ExtractionRules::default());
    let json = serde_json::to_value(&state).unwrap();
    assert_eq!(SessionState::from_json(&json), state, "pending failures survive a reload");
    let old = serde_json::json!({"session": {"id": "x"}, "current_focus": "auth"});
    let loaded = SessionState::from_json(&old);
    assert_eq!((loaded.session.id.as_str(), loaded.current_focus.as_str(), loaded.version), ("x", "auth", 0));
    assert_eq!(SessionState::from_json(&serde_json::json!("garbage")), SessionState::default());
}

#[test]
fn empty_register_renders() {
    expect![[r#"
        session:
          id: ""
          workspace: ""
          model: ""
          turn_count: 0
          total_tokens: 0
        files_touched: []
        key_decisions: []
        current_focus: ""
        errors_resolved: []
        open_tasks: []
    "#]]
    .assert_eq(&render_yaml(&SessionState::default()));
}

#[test]
fn adversarial_register_stays_under_the_token_limit() {
    let huge = "p/".repeat(5_000); // 10 KB
    let nasty = "line\nbreak \"quote\" \\ tab\t nul\0 bell\u{7} ls\u{2028} bom\u{feff} ".repeat(300);
    let mut state = SessionState::new(huge.clone(), huge.clone(), nasty.clone());
    state.current_focus = nasty.clone();
    state.files_touched = (0..5_000)
        .map(|i| FileTouch { path: format!("{huge}{i}{nasty}"), action: FileAction::Edit, turn: i })
        .collect();
    state.key_decisions = (0..3_000).map(|i| format!("{nasty}{i}")).collect();
    state.errors_resolved = vec![nasty.clone(); 100];
    state.open_tasks = vec![OpenTask { task_id: nasty.clone(), goal: huge.clone(), status: nasty.clone() }; 50];
    let yaml = render_yaml(&state);
    assert!(estimate_tokens(&yaml) <= STATE_TOKEN_LIMIT, "{} tokens", estimate_tokens(&yaml));
    assert!(yaml.contains("# ") && yaml.contains("older entries left out"), "{yaml}");
    assert!(yaml.contains("files_touched:\n  - {path: \"p/p/"), "keeps the newest files: {yaml}");
    assert!(yaml.contains(" 2999\"\n"), "a cut decision keeps its ending: {yaml}");
    for line in yaml.lines() {
        assert!(line.chars().all(|c| !c.is_control()), "raw control character in {line:?}");
    }
    // Extraction itself keeps stored strings bounded.
    let mut c = Convo::new();
    c.calls("", &[("c1", "write_file", &serde_json::json!({"path": huge}).to_string())]).result(
        "c1",
        "write_file",
        "ok",
    );
    let state = replay(&c.build(), &ExtractionRules::default());
    assert_eq!(state.files_touched[0].path.chars().count(), MAX_STORED_CHARS);
}

#[test]
fn render_is_deterministic() {
    let mut c = Convo::new();
    c.user("We use JWT.").calls("", &[("c1", "read_file", r#"{"path":"a"}"#)]).result("c1", "read_file", "x");
    let turns = c.build();
    let a = render_yaml(&replay(&turns, &ExtractionRules::default()));
    let b = render_yaml(&replay(&turns, &ExtractionRules::default()));
    assert_eq!(a, b);
}

/// Reads back a scalar written by [`yaml_str`] following the YAML spec's double-quoted escapes.
fn yaml_unquote(quoted: &str) -> Option<String> {
    let inner = quoted.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return None,
            '\\' => match chars.next()? {
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                '0' => out.push('\0'),
                'L' => out.push('\u{2028}'),
                'P' => out.push('\u{2029}'),
                'x' => out
                    .push(char::from_u32(u32::from_str_radix(&chars.by_ref().take(2).collect::<String>(), 16).ok()?)?),
                'u' => out
                    .push(char::from_u32(u32::from_str_radix(&chars.by_ref().take(4).collect::<String>(), 16).ok()?)?),
                _ => return None,
            },
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' || c == '\u{feff}' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

proptest! {
    #[test]
    fn any_text_is_a_valid_yaml_scalar(s in any::<String>()) {
        let quoted = yaml_str(&s);
        prop_assert_eq!(yaml_unquote(&quoted), Some(s));
    }

    #[test]
    fn truncation_is_char_safe_and_bounded(s in any::<String>(), max in 1usize..50, tail in 0usize..30) {
        let cut = [truncate_end(&s, max), truncate_middle(&s, max), truncate_keep_end(&s, max, tail)];
        for c in &cut {
            prop_assert!(c.chars().count() <= max);
            if s.chars().count() <= max {
                prop_assert_eq!(c, &s);
            }
        }
    }
}

#[test]
fn attached_files_are_files_touched() {
    let mut c = Convo::new();
    let turn = c.push(Role::User, "see the attached script");
    turn.attachments.push(crate::NewAttachment::new("C:\\work\\etl.py", "", b"x = 1".to_vec()).examine());
    let state = replay(&c.turns, &ExtractionRules::default());
    let files: Vec<(&str, FileAction, i64)> =
        state.files_touched.iter().map(|f| (f.path.as_str(), f.action, f.turn)).collect();
    assert_eq!(files, [("etl.py", FileAction::Attach, 1)]);
}
