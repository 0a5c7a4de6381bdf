//! Importing other tools' exports over the hand-made fixtures in `tests/data/import/`: what a user
//! finds in the sidebar afterwards (sessions, forks at the right turn, texts, tool turns, times,
//! titles, workspaces), re-imports that add nothing, and broken files that add nothing and say where.
#![cfg(not(target_arch = "wasm32"))]

use cowork_core::import::{Format, ImportFile};
use cowork_core::store::{ImportCounts, SessionFilter, Store};
use cowork_core::{Error, Role, Session, Turn};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/import/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

fn sessions(store: &Store) -> Vec<Session> {
    let mut all = store
        .list_sessions(&SessionFilter { include_archived: true, limit: 1000, ..Default::default() })
        .expect("list sessions");
    all.sort_by(|a, b| a.title.cmp(&b.title));
    all
}

fn by_title(store: &Store, title: &str) -> Session {
    let all = sessions(store);
    all.iter().find(|s| s.title == title).cloned().unwrap_or_else(|| {
        panic!("no session titled {title:?}; titles: {:?}", all.iter().map(|s| &s.title).collect::<Vec<_>>())
    })
}

fn turns(store: &Store, session: &Session) -> Vec<Turn> {
    store.turns_range(&session.id, 1, i64::MAX).expect("read turns")
}

/// A turn as a user sees it: "role: text", calls as "[call name args]", results as "tool name: text".
fn render(t: &Turn) -> String {
    let mut out = match (t.role, &t.tool_name) {
        (Role::Tool, Some(name)) => format!("tool {name}: {}", t.content),
        (role, _) => format!("{role}: {}", t.content),
    };
    for c in &t.tool_calls {
        out.push_str(&format!(" [call {} {}]", c.name, c.arguments));
    }
    out
}

fn check_texts(store: &Store, title: &str, want: &[&str]) -> Session {
    let s = by_title(store, title);
    let got: Vec<String> = turns(store, &s).iter().map(render).collect();
    assert_eq!(got, want, "turns of {title:?}");
    assert_eq!(s.turn_count, want.len() as i64, "turn count of {title:?}");
    s
}

fn import(store: &mut Store, files: &[(&str, &[u8])]) -> cowork_core::Result<ImportCounts> {
    let files: Vec<ImportFile> = files.iter().map(|(n, b)| ImportFile::new(n, b)).collect();
    let mut progress = Vec::new();
    let summary = store.import_foreign(&files, &mut |p| progress.push(p))?;
    assert_eq!(progress.len(), summary.counts.conversations - summary.counts.already_imported.len());
    Ok(summary.counts)
}

/// Importing `files` again adds nothing and lists every conversation as already imported.
fn check_reimport(store: &mut Store, files: &[(&str, &[u8])], conversations: usize) {
    let before = store.stats().unwrap();
    let counts = import(store, files).expect("re-import");
    assert_eq!(counts.already_imported.len(), conversations, "{counts:?}");
    assert_eq!((counts.sessions, counts.forks, counts.turns), (0, 0, 0), "{counts:?}");
    assert_eq!(store.stats().unwrap(), before, "a re-import adds nothing");
}

/// A file cut at `at` bytes is refused with an error saying `says`, and nothing is added.
fn check_truncated(bytes: &[u8], at: usize, says: &str) {
    let mut store = Store::open_in_memory().unwrap();
    match import(&mut store, &[("export", &bytes[..at])]) {
        Err(e @ Error::Import { .. }) => {
            let text = e.to_string();
            assert!(text.contains(says), "{text:?} should say {says:?}");
            assert!(text.contains("nothing was imported"), "{text}");
        }
        other => panic!("a file cut at byte {at} should be refused, got {other:?}"),
    }
    assert_eq!(store.stats().unwrap().sessions, 0, "nothing added");
    assert_eq!(store.stats().unwrap().turns, 0, "nothing added");
}

fn ms(iso: &str) -> i64 {
    cowork_core::import::parse_iso8601_ms(iso).expect("a valid time")
}

#[test]
fn chatgpt_branches_become_forks_at_the_turn_where_they_leave() {
    let bytes = fixture("chatgpt.json");
    let mut store = Store::open_in_memory().unwrap();
    let preview = store.preview_import(&[ImportFile::new("conversations.json", &bytes)]).unwrap();
    assert_eq!(preview.formats, [Format::ChatGpt]);
    let c = &preview.counts;
    assert_eq!((c.conversations, c.sessions, c.forks, c.turns, c.skipped), (2, 3, 2, 18, 4), "{c:?}");
    assert_eq!(store.stats().unwrap().sessions, 0, "a preview writes nothing");

    let counts = import(&mut store, &[("conversations.json", &bytes)]).unwrap();
    assert_eq!(&counts, c, "the import does what the preview said");
    let main = check_texts(
        &store,
        "Lisbon trip",
        &[
            "user: Plan a trip to Lisbon",
            "assistant: Sure! How many days?",
            "user: Three days, please",
            "assistant: Day 1: Alfama.",
            "user: Check the weather",
            r#"assistant:  [call browser {"input":"search(\"Lisbon weather\")"}]"#,
            "tool browser: Sunny, 22°C",
            "tool browser: > **Lisbon weather**\n\n> Sunny all week\n\nhttps://weather.example/lisbon",
            "assistant: It will be sunny.",
        ],
    );
    assert_eq!(main.workspace, "ChatGPT import");
    assert_eq!(main.model, "gpt-4o");
    assert_eq!((main.parent_session_id.as_deref(), main.created_at), (None, 1_699_999_995_500));
    assert_eq!(main.last_active_at, 1_700_000_100_500, "the conversation's update time");
    let fork = check_texts(
        &store,
        "Lisbon trip (branch 2)",
        &[
            "user: Plan a trip to Lisbon",
            "assistant: Sure! How many days?",
            "user: [image: file-abc123 (1024×768) — not included in the export]\nHere is the map",
            "assistant: Nice map.",
        ],
    );
    assert_eq!((fork.parent_session_id.as_deref(), fork.fork_turn), (Some(main.id.as_str()), Some(2)));
    let after_current = check_texts(
        &store,
        "Lisbon trip (branch 3)",
        &[
            "user: Plan a trip to Lisbon",
            "assistant: Sure! How many days?",
            "user: Three days, please",
            "assistant: Day 1: Alfama.",
            "user: Check the weather",
            r#"assistant:  [call browser {"input":"search(\"Lisbon weather\")"}]"#,
            "tool browser: Sunny, 22°C",
            "tool browser: > **Lisbon weather**\n\n> Sunny all week\n\nhttps://weather.example/lisbon",
            "assistant: It will be sunny.",
            r#"assistant:  [call python {"input":"print(3 * 24)"}]"#,
            "tool python: 72",
            "assistant: That is 72 hours.",
        ],
    );
    assert_eq!(after_current.fork_turn, Some(9), "a branch after the current message forks at its turn");

    let t = turns(&store, &main);
    assert_eq!(t[0].created_at, 1_700_000_000_500, "float seconds kept to the millisecond");
    assert_eq!(t[3].created_at, 1_700_000_041_500, "a null create_time takes its parent message's (the thoughts)");
    assert_eq!(t[3].metadata["reasoning"], "Considering\nThree days in Lisbon.", "thoughts kept as reasoning");
    assert_eq!(t[1].metadata["model"], "gpt-4o");
    assert_eq!(
        t[0].metadata["source"],
        serde_json::json!({"format": "chatgpt", "conversation": "conv-lisbon", "message": "u1"})
    );
    assert_eq!(t[6].tool_call_id.as_deref(), Some("c1"), "the result answers the call before it");
    assert_eq!(t[7].tool_call_id, None, "a second result of one call is kept as an orphan");

    // Two first messages: the other one is a session of its own; no title: the first user line.
    let hello = check_texts(&store, "Hello again", &["user: Hello again", "assistant: Hi again!"]);
    assert_eq!(turns(&store, &hello)[1].created_at, 1_710_000_010_000, "parent's time for a null one");
    let other = check_texts(&store, "Hello again (branch 2)", &["user: Hello there\nsecond line", "assistant: Hi!"]);
    assert_eq!(other.parent_session_id, None);

    check_reimport(&mut store, &[("conversations.json", &bytes)], 2);
}

#[test]
fn chatgpt_truncated_or_broken_files_are_refused_naming_where() {
    let bytes = fixture("chatgpt.json");
    check_truncated(&bytes, bytes.len() - 40, "looks truncated");
    check_truncated(&bytes, bytes.len() - 40, "conversation 2");
    check_truncated(&bytes, 3000, "conversation 1");
    // A conversation that cannot be read is not the file's fault: it is left out and named (see
    // `import_partial.rs`), and the file imports.
    let broken = br#"[{"title": "Broken", "id": "b1", "mapping": {"n": {"id": "n", "parent": null, "children": [],
        "message": {"id": "n", "author": {}, "content": {"content_type": "text", "parts": ["x"]}}}}}]"#;
    let mut store = Store::open_in_memory().unwrap();
    let counts = import(&mut store, &[("conversations.json", broken)]).unwrap();
    let said: Vec<String> = counts.skipped_conversations.iter().map(|s| s.to_string()).collect();
    assert_eq!(said, [r#"conversations.json: entry 1 ("Broken"): message n: "author.role" is missing"#]);
}

#[test]
fn claude_ai_messages_tools_and_attachments_read_back() {
    let bytes = fixture("claude_ai.json");
    let mut store = Store::open_in_memory().unwrap();
    let counts = import(&mut store, &[("conversations.json", &bytes)]).unwrap();
    assert_eq!((counts.conversations, counts.sessions, counts.forks, counts.turns, counts.skipped), (2, 2, 0, 7, 1));
    let s = check_texts(
        &store,
        "Rust lifetimes",
        &[
            "user: Explain lifetimes\n\n**notes.txt**\n\n```\nfn main() {}\n```\n\n[file: diagram.png — not included in the export]",
            r#"assistant: Lifetimes name how long references live. [call web_search {"query":"rust lifetimes"}]"#,
            "tool web_search: The Rust Book, chapter 10",
            "assistant: According to the Book, they are checked at compile time.",
            "user: Thanks",
        ],
    );
    assert_eq!(s.workspace, "Claude.ai import");
    assert_eq!((s.created_at, s.last_active_at), (ms("2024-05-01T09:00:00Z"), ms("2024-05-01T09:10:00Z")));
    let t = turns(&store, &s);
    assert_eq!(t[0].created_at, ms("2024-05-01T09:00:05Z"));
    assert_eq!(t[1].metadata["reasoning"], "The user wants an overview.");
    assert_eq!(t[2].tool_call_id.as_deref(), Some("toolu_1"));
    assert_eq!(t[4].metadata["source"]["message"], "cm3");
    check_texts(&store, "What is 2+2?", &["user: What is 2+2?", "assistant: 4"]);
    check_reimport(&mut store, &[("conversations.json", &bytes)], 2);
    check_truncated(&bytes, bytes.len() / 2, "looks truncated");
}

#[test]
fn claude_code_sessions_keep_tools_workspace_and_fill_the_state_register() {
    let (one, two) = (fixture("claude_code_session1.jsonl"), fixture("claude_code_session2.jsonl"));
    let files: [(&str, &[u8]); 2] = [("a.jsonl", &one), ("b.jsonl", &two)];
    let mut store = Store::open_in_memory().unwrap();
    let counts = import(&mut store, &files).unwrap();
    assert_eq!((counts.conversations, counts.sessions, counts.forks, counts.turns, counts.skipped), (2, 2, 1, 14, 3));
    let file = "/home/ana/proj/src/auth.rs";
    let s = check_texts(
        &store,
        "Fix the login bug",
        &[
            "user: Fix the login bug in src/auth.rs",
            &format!(r#"assistant: Let me read it. [call Read {{"file_path":"{file}"}}]"#),
            "tool Read: fn login() {}",
            &format!(
                r#"assistant:  [call Edit {{"file_path":"{file}","new_string":"fn login() -> bool {{ true }}","old_string":"fn login() {{}}"}}]"#
            ),
            "tool Edit: The file has been updated.",
            r#"assistant:  [call Bash {"command":"cargo test","description":"Run tests"}]"#,
            "tool Bash: error: 1 test failed",
            "assistant: Fixed.",
        ],
    );
    assert_eq!((s.workspace.as_str(), s.model.as_str()), ("/home/ana/proj", "claude-sonnet-4-5"));
    let t = turns(&store, &s);
    assert_eq!(t[1].metadata["reasoning"], "Read it first.");
    assert_eq!(t[6].metadata["is_error"], true);
    assert_eq!(t[7].created_at, ms("2025-01-10T08:00:10Z"));
    // The register lists the file the imported Edit call changed, as the agent loop would have.
    let state = cowork_core::state::SessionState::from_json(&s.state);
    let touched: Vec<(&str, &str)> = state.files_touched.iter().map(|f| (f.path.as_str(), f.action.as_str())).collect();
    assert_eq!(touched, [(file, "edit")]);
    assert_eq!(state.current_focus, "Fix the login bug in src/auth.rs");

    let main = check_texts(
        &store,
        "Name a colour",
        &["user: Name a colour", "assistant: Blue.", "user: Another, but warm", "assistant: Orange."],
    );
    assert_eq!(main.workspace, "/home/ana/other");
    let fork = check_texts(
        &store,
        "Name a colour (branch 2)",
        &["user: Name a colour", "assistant: Blue.", "user: Another", "assistant: Red."],
    );
    assert_eq!((fork.parent_session_id, fork.fork_turn), (Some(main.id), Some(2)));
    check_reimport(&mut store, &files, 2);
    check_truncated(&one, one.len() - 30, "line 13: the line ends too early");
}

#[test]
fn codex_rollouts_new_and_old_read_back() {
    let (new, old) = (fixture("codex_rollout.jsonl"), fixture("codex_rollout_old.jsonl"));
    let files: [(&str, &[u8]); 2] = [("rollout-1.jsonl", &new), ("rollout-0.jsonl", &old)];
    let mut store = Store::open_in_memory().unwrap();
    let counts = import(&mut store, &files).unwrap();
    assert_eq!((counts.conversations, counts.sessions, counts.forks, counts.turns, counts.skipped), (2, 2, 0, 7, 2));
    let s = check_texts(
        &store,
        "List the files",
        &[
            "user: List the files",
            r#"assistant:  [call shell {"command":["bash","-lc","ls"],"workdir":"/work/app"}]"#,
            "tool shell: README.md\nsrc\n",
            r#"assistant: There are two entries. [call apply_patch {"input":"*** Begin Patch\n*** Add File: notes.md\n+hi\n*** End Patch"}]"#,
            "tool apply_patch: Success. Updated the following files:\nA notes.md",
        ],
    );
    assert_eq!((s.workspace.as_str(), s.model.as_str()), ("/work/app", "gpt-5-codex"));
    let t = turns(&store, &s);
    assert_eq!(t[1].metadata["reasoning"], "Listing files");
    assert_eq!(t[2].metadata["exit_code"], 0);
    assert_eq!(t[2].created_at, ms("2025-03-01T12:00:04Z"));
    let state = cowork_core::state::SessionState::from_json(&s.state);
    assert_eq!(state.files_touched.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["notes.md"]);
    let old = check_texts(&store, "Hi codex", &["user: Hi codex", "assistant: Hello"]);
    assert_eq!((old.workspace.as_str(), old.created_at), ("Codex import", ms("2025-04-01T10:00:00Z")));
    check_reimport(&mut store, &files, 2);
    check_truncated(&new, new.len() - 20, "line 12: the line ends too early");
}

#[test]
fn openai_messages_are_detected_and_imported_once() {
    let bytes = fixture("openai_messages.json");
    let mut store = Store::open_in_memory().unwrap();
    let counts = import(&mut store, &[("messages.json", &bytes)]).unwrap();
    assert_eq!((counts.sessions, counts.turns), (1, 5));
    check_texts(
        &store,
        "What time is it?",
        &[
            "system: Be brief",
            "user: What time is it?",
            "assistant:  [call get_time {}]",
            "tool get_time: 12:00",
            "assistant: It is noon.",
        ],
    );
    check_reimport(&mut store, &[("messages.json", &bytes)], 1);
    check_truncated(&bytes, bytes.len() - 5, "looks truncated");
}

#[test]
fn the_format_is_detected_from_content_not_the_name() {
    let check = |name: &str, want: Format| {
        let got = cowork_core::import::detect(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got, want, "{name}");
    };
    check("chatgpt.json", Format::ChatGpt);
    check("claude_ai.json", Format::ClaudeAi);
    check("claude_code_session1.jsonl", Format::ClaudeCode);
    check("claude_code_session2.jsonl", Format::ClaudeCode);
    check("codex_rollout.jsonl", Format::Codex);
    check("codex_rollout_old.jsonl", Format::Codex);
    check("openai_messages.json", Format::OpenAiMessages);
    assert!(cowork_core::import::detect(br#"{"messages": [{"role": "user", "content": "x"}]}"#).is_ok());
    for refused in [&b""[..], b"[]", b"hello", br#"{"a": 1}"#, b"[1, 2]"] {
        let err = cowork_core::import::detect(refused).expect_err("refused");
        assert!(matches!(err, Error::Import { .. }), "{err:?}");
    }
}

#[test]
fn a_bad_file_among_good_ones_adds_nothing() {
    let good = fixture("claude_ai.json");
    let bad = fixture("codex_rollout.jsonl");
    let mut store = Store::open_in_memory().unwrap();
    let err = import(&mut store, &[("claude.json", &good), ("rollout.jsonl", &bad[..bad.len() - 20])]).unwrap_err();
    assert!(err.to_string().contains("rollout.jsonl: line 12"), "{err}");
    assert_eq!(store.stats().unwrap().sessions, 0, "the good file's sessions are not kept either");
}

#[test]
fn errors_name_the_file_and_the_line() {
    let check = |name: &str, bytes: &[u8], says: &str| {
        let mut store = Store::open_in_memory().unwrap();
        let err = import(&mut store, &[(name, bytes)]).expect_err("refused").to_string();
        assert!(err.contains(says), "{err:?} should say {says:?}");
        assert_eq!(store.stats().unwrap().sessions, 0, "nothing added");
    };
    let code = "{\"type\":\"user\",\"sessionId\":\"s\",\"uuid\":\"u\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n{oops}\n";
    check("s.jsonl", code.as_bytes(), "s.jsonl: line 2: not valid JSON");
    let rollout = "{\"type\":\"session_meta\",\"payload\":{\"id\":\"r\"}}\n{\"type\": \"response_item\",\n";
    check("r.jsonl", rollout.as_bytes(), "r.jsonl: line 2: the line ends too early");
    check(
        "c.json",
        br#"[{"uuid": "c1", "name": "Ok", "chat_messages": []}, {"uuid": "#,
        "c.json: reading conversation 2",
    );
}

#[test]
fn a_conversation_given_twice_is_imported_once() {
    let bytes = fixture("claude_ai.json");
    let mut store = Store::open_in_memory().unwrap();
    let counts = import(&mut store, &[("a.json", &bytes), ("b.json", &bytes)]).unwrap();
    assert_eq!((counts.conversations, counts.sessions), (4, 2));
    assert_eq!(counts.already_imported, ["Rust lifetimes", "What is 2+2?"]);
    assert_eq!(store.stats().unwrap().sessions, 2);
}

#[test]
fn the_summary_names_the_new_sessions_so_they_can_be_opened() {
    let bytes = fixture("chatgpt.json");
    let mut store = Store::open_in_memory().unwrap();
    let counts = import(&mut store, &[("conversations.json", &bytes)]).unwrap();
    let titles: Vec<String> = counts.session_ids.iter().map(|id| store.get_session(id).unwrap().title).collect();
    assert_eq!(counts.session_ids.len(), counts.conversations, "one main session per conversation: {titles:?}");
    assert!(titles.contains(&"Lisbon trip".to_owned()), "{titles:?}");
    assert!(store.get_session(&counts.session_ids[0]).unwrap().parent_session_id.is_none(), "main sessions, not forks");
    let again = import(&mut store, &[("conversations.json", &bytes)]).unwrap();
    assert!(again.session_ids.is_empty(), "nothing new to open after a re-import: {again:?}");
}

#[test]
fn a_cowork_export_is_told_apart_and_previewed_without_writing() {
    let mut store = Store::open_in_memory().unwrap();
    import(&mut store, &[("conversations.json", &fixture("chatgpt.json"))]).unwrap();
    let jsonl = store.export_jsonl(None).unwrap();
    assert!(cowork_core::store::is_cowork_archive(jsonl.as_bytes()));
    for other in ["chatgpt.json", "claude_code_session1.jsonl", "codex_rollout.jsonl", "openai_messages.json"] {
        assert!(!cowork_core::store::is_cowork_archive(&fixture(other)), "{other} is not a Cowork export");
    }
    let mut fresh = Store::open_in_memory().unwrap();
    let preview = fresh.preview_jsonl(&jsonl).unwrap();
    assert_eq!(fresh.stats().unwrap().sessions, 0, "a preview writes nothing");
    let summary = fresh.import_jsonl(&jsonl).unwrap();
    assert_eq!(preview, summary, "the import does what the preview said");
    assert_eq!(summary.session_ids.len(), summary.sessions_added);
    let again = fresh.preview_jsonl(&jsonl).unwrap();
    assert_eq!((again.sessions_added, again.sessions_skipped), (0, summary.sessions_added));
}
