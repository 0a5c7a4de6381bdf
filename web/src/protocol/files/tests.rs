use super::*;
use crate::protocol::Request;

#[test]
fn a_files_bytes_never_travel_in_the_json() {
    let file =
        FilePayload { name: "conversations.json".into(), size: 3, bytes: b"[1]".to_vec(), ..FilePayload::default() };
    let req = Request { id: 4, op: Op::ImportFiles(ops::ImportFiles { files: vec![file] }) };
    let json = req.to_json();
    assert_eq!(
        json, r#"{"id":4,"op":{"import_files":{"files":[{"name":"conversations.json","size":3}]}}}"#,
        "only the name and size"
    );
    let back: Request = serde_json::from_str(&json).unwrap();
    assert_eq!(back.op.files().unwrap()[0].bytes, b"", "attached on arrival, from the buffer beside it");
    assert_eq!(Op::Stats.files(), None);
}

#[test]
fn a_messages_attachments_travel_beside_the_json_with_their_type() {
    let mut shot = FilePayload::attachment("shot.png", "image/png", 4);
    shot.bytes = b"\x89PNG".to_vec();
    let op = Op::AppendTurn(ops::AppendTurn {
        session_id: "s".into(),
        turn: cowork_core::NewTurn::user("look"),
        attachments: vec![shot.clone()],
        max_attachment_bytes: 0,
    });
    let json = Request { id: 5, op }.to_json();
    assert!(json.contains(r#""attachments":[{"name":"shot.png","mime":"image/png","size":4}]"#), "{json}");
    let mut back: Request = serde_json::from_str(&json).unwrap();
    back.op.files_mut().unwrap()[0].bytes = shot.bytes.clone();
    let saved = back.op.files().unwrap()[0].clone().into_attachment();
    assert_eq!(
        (saved.name.as_str(), saved.mime.as_str(), saved.bytes.as_slice()),
        ("shot.png", "image/png", &b"\x89PNG"[..])
    );
    // A message without attachments keeps its old JSON (older workers and pages read it as before).
    let plain = Op::AppendTurn(ops::AppendTurn {
        session_id: "s".into(),
        turn: cowork_core::NewTurn::user("x"),
        attachments: Vec::new(),
        max_attachment_bytes: 0,
    });
    assert!(!serde_json::to_string(&plain).unwrap().contains("attachments"));
}

fn check_preview(report: ImportReport, expect: &str) {
    assert_eq!(report.describe_preview(), expect, "{report:?}");
}

#[test]
fn the_preview_reads_as_a_sentence() {
    let report = ImportReport {
        conversations: 412,
        turns: 9_870,
        forks: 37,
        sessions: 412,
        already_imported: vec!["a".into(), "b".into(), "c".into()],
        ..Default::default()
    };
    check_preview(
        report.clone(),
        "412 conversations, 9,870 messages, 37 branches → 412 sessions + 37 forks; 3 already imported",
    );
    check_preview(
        ImportReport { conversations: 1, turns: 1, forks: 1, sessions: 1, ..Default::default() },
        "1 conversation, 1 message, 1 branch → 1 session + 1 fork",
    );
    check_preview(
        ImportReport { conversations: 2, skipped: 1, ..Default::default() },
        "2 conversations, 0 messages, 0 branches → 0 sessions + 0 forks; 1 message left out (system, hidden or empty)",
    );
    assert_eq!(report.describe_done(), "Imported 412 sessions + 37 forks with 9,870 messages; 3 already imported");
    assert!(ImportReport::default().adds_nothing() && !report.adds_nothing());
}

#[test]
fn thousands_are_separated() {
    for (n, s) in [(0, "0"), (999, "999"), (1_000, "1,000"), (9_870, "9,870"), (1_234_567, "1,234,567")] {
        assert_eq!(thousands(n), s, "{n}");
    }
}

fn broken(file: &str, entry: Option<usize>, title: &str, reason: &str) -> SkippedConversation {
    SkippedConversation { file: file.into(), entry, title: title.into(), reason: reason.into(), ..Default::default() }
}

#[test]
fn conversations_left_out_are_named_with_why_in_the_preview_and_the_summary() {
    let report = ImportReport {
        formats: vec!["ChatGPT".into()],
        conversations: 2,
        sessions: 2,
        turns: 6,
        skipped_conversations: vec![broken("conversations.json", Some(3), "", r#"it has no "mapping" (its messages)"#)],
        ..Default::default()
    };
    check_preview(
        report.clone(),
        r#"2 conversations, 6 messages, 0 branches → 2 sessions + 0 forks; skipped 1 conversation that cannot be read: entry 3: it has no "mapping" (its messages)"#,
    );
    assert_eq!(
        report.describe_done(),
        r#"Imported 2 sessions + 0 forks with 6 messages; skipped 1 conversation that cannot be read: entry 3: it has no "mapping" (its messages)"#
    );
    assert_eq!(report.why_nothing(), None);

    // Several files: each is named with its file; past three, the rest are counted (and listed).
    let many = ImportReport {
        formats: vec!["Codex".into(), "Claude.ai".into()],
        skipped_conversations: vec![
            broken("rollout.jsonl", None, "", "it has no session_meta line (no session id)"),
            broken("claude.json", Some(2), "Odd", r#"message 1 (m1): unknown sender "robot""#),
            broken("claude.json", Some(3), "", "it is not a conversation object but a number"),
            broken("claude.json", Some(4), "", "it is not a conversation object but a string"),
        ],
        ..Default::default()
    };
    check_preview(
        many.clone(),
        r#"0 conversations, 0 messages, 0 branches → 0 sessions + 0 forks; skipped 4 conversations that cannot be read: rollout.jsonl: it has no session_meta line (no session id); claude.json entry 2 ("Odd"): message 1 (m1): unknown sender "robot"; claude.json entry 3: it is not a conversation object but a number; and 1 more (listed below)"#,
    );
    assert_eq!(many.why_nothing(), Some("Nothing in it can be imported."), "never \"nothing new\"");
}

#[test]
fn nothing_new_is_said_only_of_what_was_imported_before() {
    let already = ImportReport { conversations: 1, already_imported: vec!["Trip".into()], ..Default::default() };
    assert_eq!(already.why_nothing(), Some("Nothing new to import."));
    assert_eq!(ImportReport::default().why_nothing(), Some("It holds no messages to import."));
}
