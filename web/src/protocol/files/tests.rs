use super::*;
use crate::protocol::Request;

#[test]
fn a_files_bytes_never_travel_in_the_json() {
    let file =
        FilePayload { name: "conversations.json".into(), size: 3, bytes: b"[1]".to_vec(), ..FilePayload::default() };
    let req = Request { id: 4, op: Op::ImportFiles { files: vec![file] } };
    let json = req.to_json();
    assert_eq!(
        json, r#"{"id":4,"op":{"op":"import_files","files":[{"name":"conversations.json","size":3}]}}"#,
        "only the name and size"
    );
    let back: Request = serde_json::from_str(&json).unwrap();
    assert_eq!(back.op.files().unwrap()[0].bytes, b"", "attached on arrival, from the buffer beside it");
    assert_eq!(Op::Stats.files(), None);
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
