//! Imports take what can be taken: a file with one broken conversation imports the others and names
//! the broken one (in the preview and in the result); a single exported conversation is an export
//! of one; a transcript is recognised whatever bookkeeping records open it; a sub-agent's transcript
//! alone is imported as a sub-agent's session, never reported as "nothing new".
//!
//! The fixtures in `tests/data/import/` are hand-written in the shapes of real exports; their
//! `README.md` says where each shape comes from.
#![cfg(not(target_arch = "wasm32"))]

use cowork_core::import::{detect, Format, ImportFile, SkippedConversation};
use cowork_core::store::{ImportCounts, SessionFilter, Store};
use cowork_core::{Role, Session, Turn};

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

fn titles(store: &Store) -> Vec<String> {
    sessions(store).into_iter().map(|s| s.title).collect()
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

/// The session titled `title` holds exactly `want`.
fn check_texts(store: &Store, title: &str, want: &[&str]) -> Session {
    let all = sessions(store);
    let s = all.iter().find(|s| s.title == title).cloned().unwrap_or_else(|| {
        panic!("no session titled {title:?}; titles: {:?}", all.iter().map(|s| &s.title).collect::<Vec<_>>())
    });
    let got: Vec<String> = store.turns_range(&s.id, 1, i64::MAX).expect("read turns").iter().map(render).collect();
    assert_eq!(got, want, "turns of {title:?}");
    s
}

fn files<'a>(files: &'a [(&'a str, &'a [u8])]) -> Vec<ImportFile<'a>> {
    files.iter().map(|(n, b)| ImportFile::new(n, b)).collect()
}

/// Previews, then imports `given`: the preview says what the import then does.
fn preview_and_import(store: &mut Store, given: &[(&str, &[u8])]) -> ImportCounts {
    let given = files(given);
    let before = store.stats().unwrap();
    let preview = store.preview_import(&given).unwrap_or_else(|e| panic!("preview refused: {e}"));
    assert_eq!(store.stats().unwrap(), before, "a preview writes nothing");
    let summary = store.import_foreign(&given, &mut |_| {}).unwrap_or_else(|e| panic!("import refused: {e}"));
    assert_eq!(summary.counts, preview.counts, "the import does what the preview said");
    summary.counts
}

/// The conversations left out, as `(file, entry, title, reason)`.
fn skipped(counts: &ImportCounts) -> Vec<(&str, Option<usize>, &str, &str)> {
    counts
        .skipped_conversations
        .iter()
        .map(|s| (s.file.as_str(), s.entry, s.title.as_str(), s.reason.as_str()))
        .collect()
}

#[test]
fn a_chatgpt_file_with_one_broken_conversation_imports_the_other_two_and_names_it() {
    let bytes = fixture("chatgpt_one_broken.json");
    let mut store = Store::open_in_memory().unwrap();
    let counts = preview_and_import(&mut store, &[("conversations.json", &bytes)]);
    assert_eq!((counts.conversations, counts.sessions, counts.turns), (2, 2, 6), "{counts:?}");
    assert_eq!(
        skipped(&counts),
        [("conversations.json", Some(2), "Lost mapping", r#"it has no "mapping" (its messages)"#)]
    );
    assert_eq!(
        counts.skipped_conversations[0].to_string(),
        r#"conversations.json: entry 2 ("Lost mapping"): it has no "mapping" (its messages)"#
    );
    assert_eq!(titles(&store), ["Bread ratios", "Tide tables"]);
    check_texts(
        &store,
        "Tide tables",
        &["user: When is high tide in Porto tomorrow?", "assistant: High tide in Porto is at 06:42 and 19:05."],
    );
    // Imported again: the two are already there, the broken one is named again.
    let again = preview_and_import(&mut store, &[("conversations.json", &bytes)]);
    assert_eq!(again.already_imported, ["Tide tables", "Bread ratios"]);
    assert_eq!((again.sessions, again.turns, again.skipped_conversations.len()), (0, 0, 1));
}

#[test]
fn a_claude_ai_file_whose_first_conversation_is_broken_imports_the_other_two_and_names_it() {
    // The first entry has no `chat_messages`: the format is read from the entries after it.
    let bytes = fixture("claude_ai_one_broken.json");
    assert_eq!(detect(&bytes).unwrap(), Format::ClaudeAi);
    let mut store = Store::open_in_memory().unwrap();
    let counts = preview_and_import(&mut store, &[("conversations.json", &bytes)]);
    assert_eq!((counts.conversations, counts.sessions, counts.turns), (2, 2, 4), "{counts:?}");
    assert_eq!(
        skipped(&counts),
        [("conversations.json", Some(1), "Half-written", r#"it has no "chat_messages" (its messages)"#)]
    );
    assert_eq!(titles(&store), ["Compost heap", "Knot names"]);
    check_texts(
        &store,
        "Knot names",
        &["user: Which knot joins two ropes?", "assistant: The sheet bend joins two ropes of different thickness."],
    );
}

#[test]
fn a_single_exported_conversation_is_an_export_of_one() {
    for (name, format, title, texts) in [
        (
            "chatgpt_single.json",
            Format::ChatGpt,
            "Violin strings",
            [
                "user: How often should violin strings be changed?",
                "assistant: Change violin strings every six to twelve months.",
            ],
        ),
        (
            "claude_ai_single.json",
            Format::ClaudeAi,
            "Lighthouse keepers",
            [
                "user: Who kept the Eddystone lighthouse?",
                "assistant: Henry Hall kept the Eddystone light in 1755, aged 94.",
            ],
        ),
    ] {
        let bytes = fixture(name);
        assert_eq!(detect(&bytes).unwrap_or_else(|e| panic!("{name}: {e}")), format, "{name}");
        let mut store = Store::open_in_memory().unwrap();
        let counts = preview_and_import(&mut store, &[(name, &bytes)]);
        assert_eq!((counts.conversations, counts.sessions, counts.turns), (1, 1, 2), "{name}: {counts:?}");
        assert!(counts.skipped_conversations.is_empty(), "{name}: {counts:?}");
        let s = check_texts(&store, title, &texts);
        assert_eq!(s.workspace, format.default_workspace(), "{name}");
        let again = preview_and_import(&mut store, &[(name, &bytes)]);
        assert_eq!((again.sessions, again.already_imported.len()), (0, 1), "{name}: imported once");
    }
}

#[test]
fn a_single_conversation_without_an_id_is_named_by_its_content() {
    // Some tools save a conversation without its id: it imports, and importing it again adds nothing.
    let mut single: serde_json::Value = serde_json::from_slice(&fixture("chatgpt_single.json")).unwrap();
    let o = single.as_object_mut().unwrap();
    o.remove("conversation_id");
    o.remove("id");
    let bytes = serde_json::to_vec(&single).unwrap();
    let mut store = Store::open_in_memory().unwrap();
    assert_eq!(preview_and_import(&mut store, &[("chat.json", &bytes)]).sessions, 1);
    assert_eq!(preview_and_import(&mut store, &[("chat.json", &bytes)]).already_imported, ["Violin strings"]);
}

#[test]
fn a_claude_code_2_0_28_transcript_opening_with_a_snapshot_and_summaries_imports_its_messages() {
    let bytes = fixture("claude_code_2.0.28.jsonl");
    assert_eq!(detect(&bytes).unwrap(), Format::ClaudeCode);
    let mut store = Store::open_in_memory().unwrap();
    let counts = preview_and_import(&mut store, &[("3f6b2a10.jsonl", &bytes)]);
    // Left out: the `system` line.
    assert_eq!((counts.conversations, counts.sessions, counts.turns, counts.skipped), (1, 1, 5, 1), "{counts:?}");
    let s = check_texts(
        &store,
        "Harbour crane schedule",
        &[
            "user: When does the harbour crane start on Monday?",
            r#"assistant: Let me read the schedule. [call Read {"file_path":"/home/ana/harbour/schedule.md"}]"#,
            "tool Read: Monday: crane from 06:30, berth 4",
            "assistant: The harbour crane starts at 06:30 on Monday, at berth 4.",
            "user: thanks",
        ][..],
    );
    assert_eq!((s.workspace.as_str(), s.model.as_str()), ("/home/ana/harbour", "claude-sonnet-4-5-20250929"));
}

#[test]
fn every_record_type_of_claude_code_and_codex_may_open_a_transcript() {
    let user = r#"{"parentUuid":null,"isSidechain":false,"cwd":"/w","sessionId":"s1","type":"user","message":{"role":"user","content":"Hello there"},"uuid":"u1","timestamp":"2025-10-30T09:00:00.000Z"}"#;
    for first in [
        r#"{"type":"file-history-snapshot","messageId":"u1","snapshot":{"messageId":"u1","trackedFileBackups":{},"timestamp":"2025-10-30T09:00:00.000Z"},"isSnapshotUpdate":false}"#,
        r#"{"type":"summary","summary":"Greeting","leafUuid":"u1"}"#,
        r#"{"type":"queue-operation","operation":"enqueue","timestamp":"2025-10-30T09:00:00.000Z","content":"hi"}"#,
        r#"{"type":"system","subtype":"informational","content":"Hook ran","level":"info"}"#,
        r#"{"type":"custom-title","customTitle":"Greeting"}"#,
        r#"{"type":"permission-mode","permissionMode":"default"}"#,
        r#"{"type":"progress","data":{}}"#,
        r#"{"note":"a record of no known kind"}"#,
    ] {
        let text = format!("{first}\n{first}\n{user}\n");
        assert_eq!(detect(text.as_bytes()).unwrap_or_else(|e| panic!("{first}: {e}")), Format::ClaudeCode, "{first}");
        let mut store = Store::open_in_memory().unwrap();
        let counts = preview_and_import(&mut store, &[("s1.jsonl", text.as_bytes())]);
        assert_eq!((counts.sessions, counts.turns), (1, 1), "{first}: {counts:?}");
    }
    let meta = r#"{"timestamp":"2025-10-30T09:00:00.000Z","type":"session_meta","payload":{"id":"codex-1","timestamp":"2025-10-30T09:00:00.000Z","cwd":"/w"}}"#;
    let said = r#"{"timestamp":"2025-10-30T09:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Hello codex"}]}}"#;
    for first in [
        r#"{"timestamp":"2025-10-30T09:00:00.000Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5-codex"}}"#,
        r#"{"timestamp":"2025-10-30T09:00:00.000Z","type":"event_msg","payload":{"type":"user_message","message":"Hello codex"}}"#,
        r#"{"timestamp":"2025-10-30T09:00:00.000Z","type":"compacted","payload":{"message":"a summary"}}"#,
        said,
    ] {
        let text = format!("{first}\n{meta}\n{said}\n");
        assert_eq!(detect(text.as_bytes()).unwrap_or_else(|e| panic!("{first}: {e}")), Format::Codex, "{first}");
        let mut store = Store::open_in_memory().unwrap();
        let counts = preview_and_import(&mut store, &[("rollout.jsonl", text.as_bytes())]);
        assert_eq!(counts.sessions, 1, "{first}: {counts:?}");
        assert!(counts.turns >= 1, "{first}: {counts:?}");
    }
    // Records that never say which tool wrote them are still refused, naming the formats read.
    let err = detect(b"{\"note\":1}\n{\"note\":2}\n").unwrap_err().to_string();
    assert!(err.contains("not a format Cowork can import"), "{err}");
}

#[test]
fn a_sub_agents_transcript_alone_imports_as_a_sub_agent_session() {
    let agent = fixture("claude_code_agent-5e1f0c2.jsonl");
    let mut store = Store::open_in_memory().unwrap();
    let counts = preview_and_import(&mut store, &[("agent-5e1f0c2.jsonl", &agent)]);
    assert_eq!((counts.conversations, counts.sessions, counts.turns), (1, 1, 4), "{counts:?}");
    let s = check_texts(
        &store,
        "Sub-agent: Find every TODO in src/ and list the files",
        &[
            "user: Find every TODO in src/ and list the files",
            r#"assistant:  [call Grep {"path":"src","pattern":"TODO"}]"#,
            "tool Grep: src/feed.rs\nsrc/pens.rs",
            "assistant: Two files hold TODOs: src/feed.rs and src/pens.rs.",
        ],
    );
    assert_eq!(s.workspace, "/home/ana/zoo");

    // Given with its session, the sub-agent's lines are part of that session: left out and counted.
    let main = r#"{"parentUuid":null,"isSidechain":false,"cwd":"/home/ana/zoo","sessionId":"7d2e9c40-1a3b-4c5d-8e6f-708192a3b4c5","type":"user","message":{"role":"user","content":"Clean up the TODOs"},"uuid":"m1","timestamp":"2025-10-30T09:59:00.000Z"}"#;
    let mut both = Store::open_in_memory().unwrap();
    let counts = preview_and_import(&mut both, &[("7d2e9c40.jsonl", main.as_bytes()), ("agent-5e1f0c2.jsonl", &agent)]);
    assert_eq!((counts.conversations, counts.sessions, counts.turns, counts.skipped), (1, 1, 1, 4), "{counts:?}");
    assert_eq!(titles(&both), ["Clean up the TODOs"]);
}

#[test]
fn conversations_of_every_format_that_cannot_be_read_are_left_out_and_named() {
    let good_codex = fixture("codex_rollout.jsonl");
    let no_meta = br#"{"type":"response_item","payload":{"type":"message","role":"user","content":[]}}"#;
    let session = |sid: &str, tool: &str| {
        format!(
            "{{\"type\":\"user\",\"sessionId\":\"{sid}\",\"uuid\":\"{sid}-u\",\"message\":{{\"role\":\"user\",\"content\":\"Go\"}}}}\n\
             {{\"type\":\"assistant\",\"sessionId\":\"{sid}\",\"uuid\":\"{sid}-a\",\"parentUuid\":\"{sid}-u\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"t\",{tool}\"input\":{{}}}}]}}}}\n"
        )
    };
    let (fine, broken) = (session("fine", "\"name\":\"Bash\","), session("odd", ""));
    let mut store = Store::open_in_memory().unwrap();
    let counts = preview_and_import(
        &mut store,
        &[
            ("rollout-1.jsonl", &good_codex),
            ("rollout-2.jsonl", no_meta),
            ("fine.jsonl", fine.as_bytes()),
            ("odd.jsonl", broken.as_bytes()),
            ("messages.json", br#"[{"role": "robot", "content": "beep"}]"#),
            (
                "claude.json",
                br#"[{"uuid": "c1", "name": "Ok", "chat_messages": [{"uuid": "m0", "sender": "human", "text": "Hi"}]},
                     {"uuid": "c2", "name": "Odd", "chat_messages": [{"uuid": "m1", "sender": "robot", "text": "beep"}]},
                     42]"#,
            ),
        ],
    );
    assert_eq!((counts.conversations, counts.sessions), (3, 3), "{counts:?}");
    let said: Vec<String> = counts.skipped_conversations.iter().map(SkippedConversation::to_string).collect();
    assert_eq!(
        said,
        [
            "rollout-2.jsonl: it has no session_meta line (no session id)",
            r#"messages.json: message 1: unknown role "robot""#,
            r#"claude.json: entry 2 ("Odd"): message 1 (m1): unknown sender "robot""#,
            "claude.json: entry 3: it is not a conversation object but a number",
            r#"odd.jsonl: conversation odd: line 2: a tool_use block without "name""#,
        ]
    );
}
