//! Attachments in the archive: stored once per content, read back with their turns, searched, deleted
//! only with the last turn that carries them, exported and imported byte for byte.

use cowork_core::attachment::sha256_hex;
use cowork_core::store::{NewSession, Store};
use cowork_core::{AttachmentKind, ErrorKind, NewAttachment, NewTurn, SearchQuery, SearchScope};

/// A PNG header for a `w`×`h` image (enough for its size to be read) followed by `pad` filler bytes.
pub fn png(w: u32, h: u32, pad: usize) -> Vec<u8> {
    let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    b.extend_from_slice(&w.to_be_bytes());
    b.extend_from_slice(&h.to_be_bytes());
    b.extend_from_slice(&[8, 6, 0, 0, 0]);
    b.extend((0..pad).map(|i| (i * 7 % 251) as u8));
    b
}

fn session(store: &mut Store) -> String {
    store.create_session(&NewSession::new("w")).expect("create session").id
}

fn attach(store: &mut Store, sid: &str, text: &str, files: &[NewAttachment]) -> i64 {
    store
        .append_turn_with_attachments(sid, &NewTurn::user(text), files, 0)
        .unwrap_or_else(|e| panic!("appending {text:?} with {files:?}: {e}"))
        .turn_number
}

pub fn attachments_are_kept_with_their_turn_and_stored_once(store: &mut Store) {
    let sid = session(store);
    let image = png(64, 48, 1200);
    let script = b"def frobnicate_widgets():\n    return 42\n".to_vec();
    let script_len = script.len() as i64;
    let files = [NewAttachment::new("shot.png", "image/png", image.clone()), NewAttachment::new("tool.py", "", script)];
    let stored = store.append_turn_with_attachments(&sid, &NewTurn::user("look at these"), &files, 0).unwrap();
    assert_eq!(stored.attachments.len(), 2, "the stored turn carries its attachments");
    // The same image again, in another session: linked, not stored again.
    let other = session(store);
    attach(store, &other, "again", &[NewAttachment::new("copy.png", "", image.clone())]);

    let turn = &store.get_turns(&sid, 0, 10).unwrap()[0];
    let names: Vec<(&str, AttachmentKind)> = turn.attachments.iter().map(|a| (a.name.as_str(), a.kind)).collect();
    assert_eq!(names, [("shot.png", AttachmentKind::Image), ("tool.py", AttachmentKind::Text)]);
    let shot = &turn.attachments[0];
    assert_eq!((shot.width, shot.height, shot.size), (Some(64), Some(48), image.len() as i64));
    assert_eq!(shot.sha256, sha256_hex(&image));
    assert_eq!(store.attachment_bytes(&shot.sha256).unwrap(), image, "the bytes come back exactly");
    assert_eq!(store.get_turns(&other, 0, 1).unwrap()[0].attachments[0].sha256, shot.sha256);

    let stats = store.stats().unwrap();
    assert_eq!(stats.blobs, 2, "two contents (the image once): {stats:?}");
    assert_eq!(stats.blob_bytes, image.len() as i64 + script_len);
}

pub fn deleting_a_session_keeps_blobs_other_turns_carry(store: &mut Store) {
    let shared = png(10, 10, 300);
    let own = b"only in the deleted session".to_vec();
    let inherited = png(20, 20, 50);
    let a = session(store);
    attach(store, &a, "first", &[NewAttachment::new("inherited.png", "", inherited.clone())]);
    attach(
        store,
        &a,
        "second",
        &[
            NewAttachment::new("shared.png", "", shared.clone()),
            NewAttachment::new("notes.txt", "text/plain", own.clone()),
        ],
    );
    let b = session(store);
    attach(store, &b, "elsewhere", &[NewAttachment::new("shared-too.png", "", shared.clone())]);
    let fork = store.fork_session(&a, 1).unwrap().id;
    assert_eq!(store.stats().unwrap().blobs, 3);

    store.delete_session(&a).unwrap();
    let fork_turn = &store.get_turns(&fork, 0, 1).unwrap()[0];
    assert_eq!(fork_turn.attachments[0].name, "inherited.png", "the fork keeps what it inherited");
    assert_eq!(store.attachment_bytes(&fork_turn.attachments[0].sha256).unwrap(), inherited);
    assert_eq!(store.attachment_bytes(&sha256_hex(&shared)).unwrap(), shared, "another session's content stays");
    assert!(store.attachment_bytes(&sha256_hex(&own)).is_err(), "a content no turn carries any more is gone");
    assert_eq!(store.stats().unwrap().blobs, 2);

    store.delete_session(&fork).unwrap();
    store.delete_session(&b).unwrap();
    let stats = store.stats().unwrap();
    assert_eq!((stats.blobs, stats.blob_bytes), (0, 0), "{stats:?}");
}

pub fn search_finds_words_inside_text_attachments_and_their_names(store: &mut Store) {
    let sid = session(store);
    user_turn(store, &sid, "unrelated chatter");
    let n = attach(
        store,
        &sid,
        "here is the script",
        &[
            NewAttachment::new("pipeline.py", "text/x-python", b"import os\nQUOKKA_THRESHOLD = 7\n".to_vec()),
            NewAttachment::new("sales-q3.csv", "text/csv", b"region,total\nnorth,10\n".to_vec()),
            NewAttachment::new("diagram.png", "", png(8, 8, 10)),
        ],
    );
    user_turn(store, &sid, "more chatter");
    for query in ["quokka_threshold", "QUOKKA", "csv", "sales", "pipeline.py", "diagram"] {
        let hits = store.search(&SearchQuery::new(query, SearchScope::All)).unwrap();
        let found: Vec<i64> = hits.iter().map(|h| h.turn_number).collect();
        assert_eq!(found, [n], "{query:?} finds the user turn that carried the file");
    }
}

fn user_turn(store: &mut Store, sid: &str, text: &str) {
    store.append_turn(sid, &NewTurn::user(text)).unwrap();
}

pub fn too_large_corrupt_and_svg_attachments(store: &mut Store) {
    let sid = session(store);
    let err = store
        .append_turn_with_attachments(
            &sid,
            &NewTurn::user("big"),
            &[NewAttachment::new("big.bin", "", vec![1u8; 1001])],
            1000,
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AttachmentTooLarge);
    assert!(err.to_string().contains("big.bin"), "{err}");
    assert_eq!(store.turn_count(&sid).unwrap(), 0, "nothing was saved");
    assert_eq!(store.stats().unwrap().blobs, 0);
    // Regression: the limit was the store's own, set by whichever profile last sent a message (from
    // any tab), so a later append that asked for no limit of its own (the embedding API's appendTurn)
    // was refused at the last sender's.
    let fits = store.append_turn_with_attachments(
        &sid,
        &NewTurn::user("fits the default"),
        &[NewAttachment::new("mid.bin", "", vec![2u8; 1001])],
        0,
    );
    assert!(fits.is_ok(), "an append's own limit applies, not the last send's: {fits:?}");
    store.delete_session(&sid).unwrap();
    let sid = session(store);

    let corrupt = png(64, 48, 0)[..15].to_vec();
    let svg = br#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#.to_vec();
    attach(
        store,
        &sid,
        "odd files",
        &[NewAttachment::new("broken.png", "image/png", corrupt), NewAttachment::new("logo.svg", "image/svg+xml", svg)],
    );
    let turn = &store.get_turns(&sid, 0, 1).unwrap()[0];
    let kinds: Vec<(AttachmentKind, Option<u32>)> = turn.attachments.iter().map(|a| (a.kind, a.width)).collect();
    assert_eq!(kinds, [(AttachmentKind::File, None), (AttachmentKind::File, None)], "neither is shown as an image");
    assert_eq!(turn.attachments[1].mime, "image/svg+xml");
}

pub fn attachments_export_and_import_byte_for_byte(store: &mut Store) {
    let image = png(64, 48, 5000);
    let script = b"def quokka():\n    return 'marsupial'\n".to_vec();
    let a = session(store);
    attach(
        store,
        &a,
        "first",
        &[
            NewAttachment::new("shot.png", "image/png", image.clone()),
            NewAttachment::new("dir/quokka.py", "", script.clone()),
        ],
    );
    let b = session(store);
    attach(store, &b, "same image", &[NewAttachment::new("again.png", "", image.clone())]);
    let jsonl = store.export_jsonl(None).unwrap();
    assert!(jsonl.starts_with(r#"{"type":"header","format":"cowork-archive","version":3}"#), "{}", &jsonl[..80]);
    let blob_lines = jsonl.lines().filter(|l| l.starts_with(r#"{"type":"blob""#)).count();
    assert_eq!(blob_lines, 2, "a content two turns carry is exported once");

    let mut fresh = Store::open_in_memory().unwrap();
    let summary = fresh.import_jsonl(&jsonl).unwrap();
    assert_eq!((summary.sessions_added, summary.turns_added), (2, 2));
    for sid in [&a, &b] {
        let before = store.get_turns(sid, 0, 10).unwrap();
        let after = fresh.get_turns(sid, 0, 10).unwrap();
        assert_eq!(before[0].attachments, after[0].attachments, "names, types, sizes and hashes");
        for att in &after[0].attachments {
            let bytes = fresh.attachment_bytes(&att.sha256).unwrap();
            assert_eq!(sha256_hex(&bytes), att.sha256, "{}: identical bytes", att.name);
        }
    }
    assert_eq!(fresh.attachment_bytes(&sha256_hex(&script)).unwrap(), script);
    let stats = fresh.stats().unwrap();
    assert_eq!((stats.blobs, stats.blob_bytes), (2, (image.len() + script.len()) as i64));
    let hits = fresh.search(&SearchQuery::new("marsupial", SearchScope::All)).unwrap();
    assert_eq!(hits.len(), 1, "the imported text file is searchable");
    assert_eq!(fresh.export_jsonl(None).unwrap(), jsonl, "export → import → export is stable");
    assert_eq!(fresh.import_jsonl(&jsonl).unwrap().sessions_added, 0, "importing again adds nothing");
    assert_eq!(fresh.stats().unwrap().blobs, 2);

    // A damaged content is refused, naming the line, and nothing is added.
    let damaged: String = jsonl
        .lines()
        .map(|l| {
            if l.starts_with(r#"{"type":"blob""#) {
                l.replacen("\"data\":\"", "\"data\":\"AAAA", 1)
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut other = Store::open_in_memory().unwrap();
    let err = other.import_jsonl(&damaged).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Import);
    assert!(err.to_string().contains("line 3"), "{err}");
    assert_eq!(other.stats().unwrap().sessions, 0);
    // A turn whose content is missing is refused too.
    let missing: String = jsonl.lines().filter(|l| !l.starts_with(r#"{"type":"blob""#)).collect::<Vec<_>>().join("\n");
    let err = other.import_jsonl(&missing).unwrap_err();
    assert!(err.to_string().contains("whose content is not in the file"), "{err}");

    let md = store.export_markdown(&a).unwrap();
    let link =
        format!("- Attachment: [quokka.py](attachments/{}-quokka.py) (text, 37 B, text/plain)", sha256_hex(&script));
    assert!(md.contains(&link), "{md}");
}
