//! Sync as a user reads it (issue #33): the header's "N waiting" counts messages, renames and
//! deletes, not the archive's bookkeeping; a conflict fork's title follows its parent's renames
//! until the fork is renamed itself, the same way on every device.
#![cfg(not(target_arch = "wasm32"))]

use cowork_core::store::sync::SyncMessage;
use cowork_core::store::{NewSession, SessionFilter, Store};
use cowork_core::{NewTurn, Space, ToolCall, TurnStatus};

/// One space's stream as JetStream keeps it: messages in arrival order (as the JSON that travels).
#[derive(Default)]
struct Stream {
    messages: Vec<String>,
}

/// A device: its archive and how far it has read the stream.
struct Device {
    store: Store,
    read: usize,
}

fn device(name: &str) -> Device {
    let mut store = Store::open_in_memory().unwrap();
    store.enable_sync(name).unwrap();
    Device { store, read: 0 }
}

impl Stream {
    fn publish(&mut self, d: &mut Device) {
        let out = d.store.sync_outgoing(&Space::Personal, usize::MAX).unwrap();
        if let Some(last) = out.last() {
            self.messages.extend(out.iter().map(|m| serde_json::to_string(m).unwrap()));
            d.store.sync_published(&Space::Personal, last.seq).unwrap();
        }
    }

    fn consume(&self, d: &mut Device) {
        for i in d.read..self.messages.len() {
            let msg: SyncMessage = serde_json::from_str(&self.messages[i]).unwrap();
            d.store.apply_sync(&Space::Personal, i as i64 + 1, &msg).unwrap();
        }
        d.read = self.messages.len();
    }

    fn settle(&mut self, devices: &mut [Device]) {
        for _ in 0..2 {
            for d in devices.iter_mut() {
                self.publish(d);
            }
            for d in devices.iter_mut() {
                self.consume(d);
            }
        }
    }
}

/// `(title, parent's title)` of every session of `d`, sorted.
fn titles(d: &Device) -> Vec<(String, Option<String>)> {
    let filter = SessionFilter { include_archived: true, limit: 1000, ..SessionFilter::default() };
    let list = d.store.list_sessions(&filter).unwrap();
    let title_of = |id: &str| list.iter().find(|s| s.id == id).map(|s| s.title.clone());
    let mut out: Vec<_> =
        list.iter().map(|s| (s.title.clone(), s.parent_session_id.as_deref().and_then(title_of))).collect();
    out.sort();
    out
}

#[test]
fn waiting_counts_messages_renames_and_deletes_not_bookkeeping() {
    let mut d = device("Laptop");
    let check = |d: &Device, expect: i64, after: &str| {
        let got = d.store.sync_waiting_changes().unwrap();
        let all = d.store.sync_status().unwrap().waiting;
        assert_eq!(got, expect, "after {after}: {got} waiting as a user counts ({all} outbox entries)");
    };
    check(&d, 0, "nothing");
    // A new conversation: the first message titles it (not a rename); the reply records its model
    // and token usage, and uses a tool on the way.
    let s = d.store.create_session(&NewSession::new("work")).unwrap().id;
    d.store.append_turn(&s, &NewTurn::user("Where is the quokka config?")).unwrap();
    let call = ToolCall { id: "c1".into(), name: "read_file".into(), arguments: r#"{"path":"a"}"#.into() };
    d.store.append_turn(&s, &NewTurn::assistant_calls("", vec![call])).unwrap();
    d.store.append_turn(&s, &NewTurn::tool_result("c1", "read_file", "quokka = true")).unwrap();
    let reply = d.store.append_turn(&s, &NewTurn::assistant("").with_status(TurnStatus::Interrupted)).unwrap();
    d.store.checkpoint_turn(&s, reply.turn_number, "In settings").unwrap();
    d.store.finalize_turn(&s, reply.turn_number, &NewTurn::assistant("In settings.toml")).unwrap();
    d.store.set_model(&s, "demo-2").unwrap();
    d.store.add_usage(&s, 120, 30).unwrap();
    check(&d, 2, "a message and its reply");
    d.store.append_turn(&s, &NewTurn::user("And the wombat one?")).unwrap();
    d.store.rename_session(&s, "Config hunt").unwrap();
    check(&d, 4, "a second message (unanswered) and a rename");
    let other = d.store.create_session(&NewSession::new("work")).unwrap().id;
    d.store.append_turn(&other, &NewTurn::user("scratch")).unwrap();
    d.store.delete_session(&other).unwrap();
    check(&d, 6, "a message in another conversation, and deleting that conversation");
    // Once the server acknowledged them, nothing waits.
    let mut stream = Stream::default();
    stream.publish(&mut d);
    check(&d, 0, "publishing");
}

#[test]
fn a_conflict_fork_follows_its_parents_renames_until_renamed_itself() {
    let mut devices = vec![device("Laptop"), device("Phone")];
    let mut stream = Stream::default();
    let s = devices[0].store.create_session(&NewSession::new("work")).unwrap().id;
    devices[0].store.append_turn(&s, &NewTurn::user("Plan the release")).unwrap();
    stream.settle(&mut devices);
    // Both offline append to it: the phone's turn is ordered later and starts a conflict fork.
    devices[0].store.append_turn(&s, &NewTurn::assistant("laptop: tag it first")).unwrap();
    devices[1].store.append_turn(&s, &NewTurn::assistant("phone: freeze the branch")).unwrap();
    stream.settle(&mut devices);
    let fork = |title: &str| (format!("{title} (on Phone)"), Some(title.to_owned()));
    let parent = |title: &str| (title.to_owned(), None);
    for d in &devices {
        assert_eq!(titles(d), [parent("Plan the release"), fork("Plan the release")]);
    }
    // The parent is renamed, on either device: the fork follows, everywhere.
    devices[0].store.rename_session(&s, "Release plan").unwrap();
    assert_eq!(titles(&devices[0]), [parent("Release plan"), fork("Release plan")], "at once on the renaming device");
    stream.settle(&mut devices);
    for d in &devices {
        assert_eq!(titles(d), [parent("Release plan"), fork("Release plan")], "the fork follows its parent");
    }
    devices[1].store.rename_session(&s, "Release 2.0").unwrap();
    stream.settle(&mut devices);
    for d in &devices {
        assert_eq!(titles(d), [parent("Release 2.0"), fork("Release 2.0")]);
    }
    // Renamed itself, the fork keeps its own title.
    let f = devices[1].store.list_sessions(&SessionFilter::default()).unwrap();
    let f = f.iter().find(|x| x.id != s).unwrap().id.clone();
    devices[1].store.rename_session(&f, "The phone's plan").unwrap();
    stream.settle(&mut devices);
    devices[0].store.rename_session(&s, "Release 3.0").unwrap();
    stream.settle(&mut devices);
    for d in &devices {
        assert_eq!(
            titles(d),
            [parent("Release 3.0"), ("The phone's plan".to_owned(), Some("Release 3.0".to_owned()))],
            "a fork renamed itself keeps its name"
        );
    }
    let exports: Vec<String> = devices.iter().map(|d| d.store.export_jsonl(None).unwrap()).collect();
    assert_eq!(exports[0], exports[1], "both devices hold the same archive");
}
