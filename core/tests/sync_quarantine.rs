//! Sync that never stops for good (spec §14): a stream message this device cannot apply is kept
//! aside (quarantined, verbatim), counted and named, and the rest of the stream — the rest of its
//! own batch too — applies; a change kind from a newer version is kept for later, and tried again
//! by a newer reader; a failure of the archive itself (storage full) skips nothing.
#![cfg(not(target_arch = "wasm32"))]

use cowork_core::store::sync::{read_message, QuarantineReason, Received, SyncChange, SyncMessage, Unreadable};
use cowork_core::store::{NewSession, Store};
use cowork_core::{ErrorKind, NewAttachment, NewTurn, Space};

fn device(name: &str) -> Store {
    let mut store = Store::open_in_memory().unwrap();
    store.enable_sync(name).unwrap();
    store
}

/// Everything `from` has to publish, as the stream would number it after `after`, and as JSON.
fn published(from: &mut Store, after: i64) -> Vec<(i64, String)> {
    let out = from.sync_outgoing(&Space::Personal, usize::MAX).unwrap();
    if let Some(last) = out.last() {
        from.sync_published(&Space::Personal, last.seq).unwrap();
    }
    out.iter().enumerate().map(|(i, m)| (after + i as i64 + 1, serde_json::to_string(m).unwrap())).collect()
}

/// Applies the bodies as the worker does: each read (or not), in one batch, the body kept verbatim.
fn apply(to: &mut Store, bodies: &[(i64, String)]) -> cowork_core::Result<cowork_core::store::sync::Applied> {
    let batch: Vec<(i64, Received)> = bodies.iter().map(|(seq, b)| (*seq, read_message(b))).collect();
    to.apply_sync_received(&Space::Personal, &batch, &mut |i| bodies[i].1.as_bytes().to_vec())
}

fn texts(store: &Store, session: &str) -> Vec<String> {
    store.get_turns(session, 0, 1000).unwrap().into_iter().map(|t| t.content).collect()
}

/// An attachment whose bytes no longer match the SHA-256 it names (altered on the way, or written
/// by a broken device): its message is refused, kept, and everything around it applies.
#[test]
fn a_change_that_cannot_be_applied_is_kept_and_the_rest_of_its_batch_applies() {
    let (mut birch, mut phone) = (device("Birch"), device("Phone"));
    let s = birch.create_session(&NewSession::new("work")).unwrap().id;
    birch.append_turn(&s, &NewTurn::user("Here is the plan")).unwrap();
    let file = NewAttachment::new("plan.md", "text/markdown", b"# the plan".to_vec());
    birch.append_turn_with_attachments(&s, &NewTurn::user("and the file"), &[file], 0).unwrap();
    birch.append_turn(&s, &NewTurn::assistant("Read it: looks good")).unwrap();
    let other = birch.create_session(&NewSession::new("home")).unwrap().id;
    birch.append_turn(&other, &NewTurn::user("Groceries: quokka food")).unwrap();
    let mut bodies = published(&mut birch, 0);
    let bad = bodies
        .iter()
        .position(|(_, b)| b.contains("plan.md") && b.contains("turn_added"))
        .expect("the attachment's turn was published");
    let mut msg: SyncMessage = serde_json::from_str(&bodies[bad].1).unwrap();
    let SyncChange::TurnAdded(t) = &mut msg.change else { panic!("a turn") };
    t.attachments[0].data = "IyB0aGUgb3RoZXIgcGxhbg==".into(); // "# the other plan"
    bodies[bad].1 = serde_json::to_string(&msg).unwrap();
    let kept_body = bodies[bad].1.clone();
    let last = bodies.last().unwrap().0;

    let applied = apply(&mut phone, &bodies).expect("one bad message does not stop the batch");
    assert_eq!(applied.quarantined, 1);
    assert_eq!(texts(&phone, &s), ["Here is the plan", "Read it: looks good"], "the rest of the session applied");
    assert_eq!(texts(&phone, &other), ["Groceries: quokka food"], "the rest of the batch applied");
    assert_eq!(phone.sync_cursor(&Space::Personal).unwrap(), last, "the stream goes on past it");
    let kept = phone.sync_quarantined().unwrap();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!((kept[0].seq, kept[0].device_name.as_str()), (bodies[bad].0, "Birch"));
    match &kept[0].reason {
        QuarantineReason::Refused(why) => assert!(why.contains("plan.md does not match its SHA-256"), "{why}"),
        other => panic!("refused, not {other:?}"),
    }
    // Kept verbatim: what the stream held, byte for byte (a build with a newer reader gets it).
    phone.connection().execute("UPDATE sync_quarantine SET reader = reader - 1", []).unwrap();
    let due = phone.sync_quarantine_due(&Space::Personal).unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!((due[0].msg_id.as_str(), due[0].sealed.as_slice()), (msg.id.as_str(), kept_body.as_bytes()));
    // Tried again, it is still refused: it stays, and is not due again for this build.
    let again =
        phone.retry_quarantined(&Space::Personal, due[0].seq, &due[0].msg_id, &read_message(&kept_body)).unwrap();
    assert!(matches!(again, Some(QuarantineReason::Refused(_))), "{again:?}");
    assert!(phone.sync_quarantine_due(&Space::Personal).unwrap().is_empty());
    assert_eq!(phone.sync_quarantined().unwrap().len(), 1);

    // And sync goes on: what Birch writes next arrives.
    birch.append_turn(&s, &NewTurn::user("One more thing")).unwrap();
    let next = published(&mut birch, last);
    apply(&mut phone, &next).unwrap();
    assert_eq!(texts(&phone, &s).last().map(String::as_str), Some("One more thing"));
}

/// A change of a kind this version does not know (a newer Cowork wrote it) is kept for later with
/// that kind's name, and a build that reads it applies it and lets it go.
#[test]
fn a_change_kind_from_a_newer_version_is_kept_for_later_and_applied_after_an_upgrade() {
    let (mut birch, mut phone) = (device("Birch"), device("Phone"));
    let s = birch.create_session(&NewSession::new("work")).unwrap().id;
    birch.append_turn(&s, &NewTurn::user("Before")).unwrap();
    let mut bodies = published(&mut birch, 0);
    let newer = r#"{"id":"dev-b:99","device_id":"dev-b","device_name":"Birch","seq":99,
        "change":{"task_added":{"task_id":"t1","session_id":"s","turn_gid":"g"}}}"#;
    bodies.push((bodies.len() as i64 + 1, newer.to_owned()));
    birch.append_turn(&s, &NewTurn::assistant("After")).unwrap();
    let after = published(&mut birch, bodies.len() as i64);
    bodies.extend(after);

    let applied = apply(&mut phone, &bodies).expect("a newer kind does not stop the stream");
    assert_eq!(applied.quarantined, 1);
    assert_eq!(texts(&phone, &s), ["Before", "After"]);
    let kept = phone.sync_quarantined().unwrap();
    assert_eq!(kept[0].reason, QuarantineReason::NewerKind("task_added".into()));
    assert_eq!(kept[0].device_name, "Birch");
    assert!(kept[0].reason.to_string().contains("newer version of Cowork"), "{}", kept[0].reason);
    assert!(phone.sync_quarantine_due(&Space::Personal).unwrap().is_empty(), "not due again for the same reader");

    // A message an older reader could not read (here: a title change it took for a newer kind),
    // tried again by this one after the upgrade, applies and leaves the quarantine.
    let title = SyncMessage {
        id: "dev-b:100".into(),
        device_id: "dev-b".into(),
        device_name: "Birch".into(),
        seq: 100,
        change: SyncChange::SessionField {
            session_id: s.clone(),
            field: cowork_core::store::sync::SessionField::Title("Renamed by a newer Birch".into()),
        },
    };
    let body = serde_json::to_string(&title).unwrap();
    let old = Received::Unreadable(Unreadable {
        msg_id: title.id.clone(),
        device_id: "dev-b".into(),
        device_name: "Birch".into(),
        reason: QuarantineReason::NewerKind("session_field".into()),
    });
    let seq = bodies.len() as i64 + 1;
    phone.apply_sync_received(&Space::Personal, &[(seq, old)], &mut |_| body.as_bytes().to_vec()).unwrap();
    assert_eq!(phone.sync_quarantined().unwrap().len(), 2);
    phone.connection().execute("UPDATE sync_quarantine SET reader = reader - 1", []).unwrap();
    let mut still = Vec::new();
    for kept in phone.sync_quarantine_due(&Space::Personal).unwrap() {
        let received = read_message(std::str::from_utf8(&kept.sealed).unwrap());
        if let Some(reason) = phone.retry_quarantined(&Space::Personal, kept.seq, &kept.msg_id, &received).unwrap() {
            still.push(reason);
        }
    }
    assert_eq!(still, [QuarantineReason::NewerKind("task_added".into())], "what this build cannot read stays");
    assert_eq!(phone.get_session(&s).unwrap().title, "Renamed by a newer Birch");
    assert_eq!(phone.sync_quarantined().unwrap().len(), 1);
}

/// The changes of a pack (sealed together as one stream message) share its stream sequence: two of a
/// newer kind in one pack are both kept, each under its own id, the rest of the pack applies, and
/// each is tried again alone.
#[test]
fn two_changes_kept_aside_from_one_pack_are_each_kept_and_tried_again() {
    let (mut birch, mut phone) = (device("Birch"), device("Phone"));
    let s = birch.create_session(&NewSession::new("work")).unwrap().id;
    birch.append_turn(&s, &NewTurn::user("Before")).unwrap();
    let mut bodies = published(&mut birch, 0);
    let newer = |n: i64| {
        format!(
            r#"{{"id":"dev-b:{n}","device_id":"dev-b","device_name":"Birch","seq":{n},
            "change":{{"task_added":{{"task_id":"t{n}"}}}}}}"#
        )
    };
    bodies.extend([(0, newer(98)), (0, newer(99))]);
    birch.append_turn(&s, &NewTurn::assistant("After")).unwrap();
    bodies.extend(published(&mut birch, 0));
    for (seq, _) in &mut bodies {
        *seq = 7; // one pack, the stream's 7th message
    }
    let applied = apply(&mut phone, &bodies).unwrap();
    assert_eq!(applied.quarantined, 2);
    assert_eq!(texts(&phone, &s), ["Before", "After"]);
    assert_eq!(phone.sync_cursor(&Space::Personal).unwrap(), 7);
    let ids = |p: &Store| p.sync_quarantined().unwrap().into_iter().map(|q| (q.seq, q.msg_id)).collect::<Vec<_>>();
    assert_eq!(ids(&phone), [(7, "dev-b:98".to_owned()), (7, "dev-b:99".to_owned())]);
    // The pack delivered again changes nothing.
    assert_eq!(apply(&mut phone, &bodies).unwrap(), Default::default());

    // A newer reader reads the first (here: as a title change) and applies it; the second stays.
    phone.connection().execute("UPDATE sync_quarantine SET reader = reader - 1", []).unwrap();
    let due = phone.sync_quarantine_due(&Space::Personal).unwrap();
    assert_eq!(due.iter().map(|k| k.msg_id.as_str()).collect::<Vec<_>>(), ["dev-b:98", "dev-b:99"]);
    let title = format!(
        r#"{{"id":"dev-b:98","device_id":"dev-b","device_name":"Birch","seq":98,
        "change":{{"session_field":{{"session_id":"{s}","field":{{"title":"Named later"}}}}}}}}"#
    );
    let first = phone.retry_quarantined(&Space::Personal, 7, &due[0].msg_id, &read_message(&title)).unwrap();
    assert_eq!(first, None, "applied");
    let second = phone.retry_quarantined(&Space::Personal, 7, &due[1].msg_id, &read_message(&newer(99))).unwrap();
    assert_eq!(second, Some(QuarantineReason::NewerKind("task_added".into())));
    assert_eq!(phone.get_session(&s).unwrap().title, "Named later");
    assert_eq!(ids(&phone), [(7, "dev-b:99".to_owned())]);
}

/// A body that is not a change at all is kept as unreadable (not mistaken for a newer kind).
#[test]
fn a_body_that_is_no_change_reads_as_malformed() {
    let check = |body: &str, expect: &str| match read_message(body) {
        Received::Unreadable(u) => assert!(u.reason.to_string().contains(expect), "{body}: {}", u.reason),
        Received::Change(m) => panic!("{body} read as {m:?}"),
    };
    check("not json", "cannot read it");
    check(
        r#"{"id":"x","device_id":"d","device_name":"D","seq":1,"change":{"turn_added":{"gid":3}}}"#,
        "cannot read it",
    );
    check(r#"{"id":"x","device_id":"d","device_name":"D","seq":1,"change":{"turn_moved":{}}}"#, "“turn_moved”");
}

/// Storage full while applying is the archive's trouble, not the message's: nothing is skipped or
/// quarantined, the cursor stays, and the same batch applies once there is room.
#[test]
fn storage_full_skips_nothing_and_the_batch_applies_once_there_is_room() {
    let (mut birch, mut phone) = (device("Birch"), device("Phone"));
    let s = birch.create_session(&NewSession::new("work")).unwrap().id;
    birch.append_turn(&s, &NewTurn::user("a long message about the burrow ".repeat(4000))).unwrap();
    let bodies = published(&mut birch, 0);
    let pages: i64 = phone.connection().query_row("PRAGMA page_count", [], |r| r.get(0)).unwrap();
    phone.connection().execute_batch(&format!("PRAGMA max_page_count = {pages}")).unwrap();
    let e = apply(&mut phone, &bodies).expect_err("no room");
    assert_eq!(e.kind(), ErrorKind::StorageFull, "{e}");
    assert!(phone.sync_quarantined().unwrap().is_empty(), "nothing set aside");
    assert_eq!(phone.sync_cursor(&Space::Personal).unwrap(), 0, "nothing skipped");
    phone.connection().execute_batch("PRAGMA max_page_count = 1073741823").unwrap();
    apply(&mut phone, &bodies).unwrap();
    assert_eq!(texts(&phone, &s).len(), 1);
}

/// The same through [`Store::apply_sync_batch`] (messages already read): before the quarantine, the
/// refused attachment failed the whole batch, so nothing after it ever applied, on any device.
#[test]
fn a_refused_change_does_not_hold_back_the_rest_of_the_stream() {
    let (mut birch, mut phone) = (device("Birch"), device("Phone"));
    let s = birch.create_session(&NewSession::new("work")).unwrap().id;
    let file = NewAttachment::new("plan.md", "text/markdown", b"# the plan".to_vec());
    birch.append_turn_with_attachments(&s, &NewTurn::user("the file"), &[file], 0).unwrap();
    birch.append_turn(&s, &NewTurn::assistant("Read it")).unwrap();
    let mut batch: Vec<(i64, SyncMessage)> =
        published(&mut birch, 0).iter().map(|(seq, b)| (*seq, serde_json::from_str(b).unwrap())).collect();
    for (_, m) in batch.iter_mut() {
        if let SyncChange::TurnAdded(t) = &mut m.change {
            if let Some(a) = t.attachments.first_mut() {
                a.data = "IyB0aGUgb3RoZXIgcGxhbg==".into();
            }
        }
    }
    let last = batch.last().unwrap().0;
    phone.apply_sync_batch(&Space::Personal, &batch).expect("the batch applies around the refused change");
    assert_eq!(texts(&phone, &s), ["Read it"]);
    assert_eq!(phone.sync_cursor(&Space::Personal).unwrap(), last);
}
