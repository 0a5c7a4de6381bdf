use super::*;

const MIN: i64 = 60_000;
const T0: i64 = 1_735_787_045_000; // 2025-01-02T03:04:05Z

fn on(last_at: Option<i64>) -> BackupRecord {
    BackupRecord {
        folder: Some("Backups".into()),
        last_at,
        fingerprint: fingerprint(2, 10, 0),
        settings: BackupSettings { every_minutes: 30, keep: 3 },
        ..Default::default()
    }
}

#[test]
fn a_snapshot_is_due_after_a_change_at_most_every_interval() {
    let same = fingerprint(2, 10, 0);
    let more = fingerprint(2, 12, 0);
    // (record, fingerprint now, changed in this tab, minutes since the last snapshot) → due
    let cases: [(BackupRecord, &str, bool, i64, bool); 8] = [
        (on(None), &same, false, 0, false), // nothing changed since the last one (the fingerprint says)
        (on(None), &more, false, 0, true),  // never backed up, and there is something new
        (on(Some(T0)), &more, false, 29, false), // changed, but the last one is too recent
        (on(Some(T0)), &more, false, 30, true), // changed, and the interval has passed
        (on(Some(T0)), &same, true, 45, true), // a rename changes no count: this tab saw it
        (on(Some(T0)), &same, false, 600, false), // nothing changed: no new snapshot however long
        (on(Some(T0)), &more, false, -5, true), // the clock went back: not stuck for good
        (BackupRecord { folder: None, ..on(None) }, &more, true, 60, false), // backups off
    ];
    for (record, now_fp, changed, minutes, expect) in cases {
        let now = T0 + minutes * MIN;
        assert_eq!(due(&record, now_fp, changed, now), expect, "{record:?} {now_fp} changed={changed} +{minutes} min");
    }
}

#[test]
fn snapshots_are_named_in_time_order_and_only_they_are_pruned() {
    assert_eq!(snapshot_name(T0), "cowork-backup-2025-01-02T03-04-05Z.jsonl");
    assert!(is_snapshot(&snapshot_name(T0)));
    for other in ["notes.txt", "cowork-backup-.jsonl", "cowork-backup-2025-01-02T03-04-05Z.jsonl.crswap"] {
        assert!(!is_snapshot(other), "{other}");
    }
    let names: Vec<String> = [T0 + 3 * MIN, T0, T0 + MIN, T0 + 2 * MIN]
        .iter()
        .map(|t| snapshot_name(*t))
        .chain(["notes.txt".to_owned()])
        .collect();
    assert_eq!(to_prune(&names, 3), [snapshot_name(T0)], "the oldest goes, other files stay");
    assert_eq!(to_prune(&names, 1), [snapshot_name(T0), snapshot_name(T0 + MIN), snapshot_name(T0 + 2 * MIN)]);
    assert!(to_prune(&names, 10).is_empty());
    assert_eq!(to_prune(&names, 0).len(), 3, "at least one is always kept");
}

#[test]
fn no_backup_after_a_week_of_use_warns() {
    let used = |last_at: Option<i64>| BackupRecord { first_use_at: T0, last_at, ..Default::default() };
    let at = |days: i64| T0 + days * 24 * 60 * MIN;
    assert!(!needs_warning(&used(None), at(6), true), "under a week");
    assert!(needs_warning(&used(None), at(7), true), "a week, no backup");
    assert!(!needs_warning(&used(None), at(8), false), "nothing to back up");
    assert!(!needs_warning(&used(Some(at(1))), at(30), true), "backed up once");
    assert!(!needs_warning(&BackupRecord::default(), at(30), true), "first use unknown");
}

#[test]
fn the_panel_says_where_how_often_and_when() {
    let now = T0 + 5 * MIN;
    assert_eq!(
        describe(&on(Some(T0)), now),
        "Backing up to “Backups” after changes, at most every 30 minutes, keeping 3; last backed up 5 min ago."
    );
    assert_eq!(describe(&BackupRecord::default(), now), "No backup folder chosen; not backed up yet.");
    let zero = BackupRecord { settings: BackupSettings { every_minutes: 0, keep: 0 }, ..on(None) };
    assert_eq!(
        describe(&zero, now),
        "Backing up to “Backups” after changes, at most every minute, keeping 1; not backed up yet."
    );
}
