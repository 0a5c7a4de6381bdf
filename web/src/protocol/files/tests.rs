use super::*;
use crate::protocol::Request;

#[test]
fn a_files_bytes_never_travel_in_the_json() {
    let file =
        FilePayload { name: "conversations.json".into(), size: 3, bytes: b"[1]".to_vec(), ..FilePayload::default() };
    let req = Request { id: 4, op: Op::ImportFiles(ops::ImportFiles { files: vec![file] }) };
    let json = req.to_json();
    assert_eq!(
        json, r#"{"id":4,"op":{"op":"import_files","files":[{"name":"conversations.json","size":3}]}}"#,
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
