//! Sync convergence (spec §14), natively: devices with their own offline histories publish to one
//! stream in any interleaving; every device applies the stream in order and all end with
//! byte-identical exports, every turn anyone wrote kept (in place or in a fork) unless a delete
//! ordered after it removed its session.
#![cfg(not(target_arch = "wasm32"))]

use cowork_core::store::sync::{SyncChange, SyncMessage};
use cowork_core::store::NewToolExecution;
use cowork_core::store::{NewSession, SessionFilter, Store};
use cowork_core::{
    Approval, NewAttachment, NewTurn, SearchQuery, SearchScope, Space, SyncScope, TurnStatus, WorkspaceSettings,
};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

/// A device: its archive and how far it has read each space's stream.
struct Device {
    store: Store,
    read: HashMap<Space, usize>,
}

/// A space's stream as JetStream keeps one: messages in arrival order, a repeated id dropped, each
/// message stored as the JSON that would travel (so the wire format is exercised too).
struct Stream {
    space: Space,
    messages: Vec<String>,
    ids: HashSet<String>,
}

impl Default for Stream {
    fn default() -> Stream {
        Stream::of(Space::Personal)
    }
}

impl Stream {
    fn of(space: Space) -> Stream {
        Stream { space, messages: Vec::new(), ids: HashSet::new() }
    }

    fn publish(&mut self, device: &mut Device, limit: usize) {
        let out = device.store.sync_outgoing(&self.space, limit).unwrap();
        if let Some(last) = out.last() {
            for m in &out {
                if self.ids.insert(m.id.clone()) {
                    self.messages.push(serde_json::to_string(m).unwrap());
                }
            }
            device.store.sync_published(&self.space, last.seq).unwrap();
        }
    }

    fn consume(&self, device: &mut Device, limit: usize) {
        let read = device.read.entry(self.space.clone()).or_default();
        let end = read.saturating_add(limit).min(self.messages.len());
        for i in *read..end {
            let msg: SyncMessage = serde_json::from_str(&self.messages[i]).unwrap();
            device.store.apply_sync(&self.space, i as i64 + 1, &msg).unwrap();
        }
        *read = end;
    }
}

fn device(name: &str) -> Device {
    let mut store = Store::open_in_memory().unwrap();
    store.enable_sync(name).unwrap();
    Device { store, read: HashMap::new() }
}

/// Every session a device has, archived ones too, in a stable order.
fn sessions(d: &Device) -> Vec<String> {
    let mut ids: Vec<String> = d
        .store
        .list_sessions(&SessionFilter { include_archived: true, limit: 10_000, ..SessionFilter::default() })
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    ids.sort();
    ids
}

/// Publishes and reads everything until every device has confirmed all it wrote.
fn settle(stream: &mut Stream, devices: &mut [Device]) {
    for _ in 0..3 {
        for d in devices.iter_mut() {
            stream.publish(d, usize::MAX);
        }
        for d in devices.iter_mut() {
            stream.consume(d, usize::MAX);
        }
    }
    for d in devices.iter() {
        let status = d.store.sync_status().unwrap();
        assert_eq!((status.waiting, status.unconfirmed), (0, 0), "everything written was published and came back");
    }
}

fn all_contents(d: &Device) -> Vec<String> {
    let mut out = Vec::new();
    for id in sessions(d) {
        out.extend(d.store.get_turns(&id, 0, 100_000).unwrap().into_iter().map(|t| t.content));
    }
    out
}

fn titles(d: &Device) -> Vec<String> {
    let mut t: Vec<String> = sessions(d).iter().map(|id| d.store.get_session(id).unwrap().title).collect();
    t.sort();
    t
}

// --- scenarios --------------------------------------------------------------------------------------

fn texts(d: &Device, session: &str) -> Vec<String> {
    d.store.get_turns(session, 0, 1000).unwrap().into_iter().map(|t| t.content).collect()
}

fn assert_converged(devices: &[Device]) {
    let first = devices[0].store.export_jsonl(None).unwrap();
    for d in &devices[1..] {
        let other = d.store.export_jsonl(None).unwrap();
        if other != first {
            let diff: Vec<(&str, &str)> = first.lines().zip(other.lines()).filter(|(a, b)| a != b).take(3).collect();
            panic!(
                "exports differ ({} vs {} lines); first differences: {diff:#?}",
                first.lines().count(),
                other.lines().count()
            );
        }
    }
}

#[test]
fn a_session_written_on_one_device_appears_on_the_other() {
    let mut devices = vec![device("Laptop"), device("Phone")];
    let s = devices[0].store.create_session(&NewSession::new("work")).unwrap().id;
    devices[0].store.append_turn(&s, &NewTurn::user("Where is the quokka config?")).unwrap();
    devices[0].store.append_turn(&s, &NewTurn::assistant("In settings.toml")).unwrap();
    let file = NewAttachment::new("notes.md", "text/markdown", b"# the wombat plan".to_vec());
    devices[0].store.append_turn_with_attachments(&s, &NewTurn::user("see my notes"), &[file], 0).unwrap();
    let exec = NewToolExecution {
        tool_name: "read_file".into(),
        arguments: r#"{"path":"settings.toml"}"#.into(),
        success: true,
        duration_ms: 4,
        approval: Approval::Auto,
    };
    devices[0].store.append_tool_result(&s, &NewTurn::tool_result("c1", "read_file", "quokka = true"), &exec).unwrap();
    let dir = WorkspaceSettings { orchestrator_dir: "/src".into(), ..WorkspaceSettings::unset("work") };
    devices[0].store.set_workspace_settings(&dir).unwrap();
    settle(&mut Stream::default(), &mut devices);
    assert_eq!(
        texts(&devices[1], &s),
        ["Where is the quokka config?", "In settings.toml", "see my notes", "quokka = true"]
    );
    let notes = &devices[1].store.get_turns(&s, 2, 1).unwrap()[0].attachments[0];
    assert_eq!(devices[1].store.attachment_bytes(&notes.sha256).unwrap(), b"# the wombat plan");
    let hits = devices[1].store.search(&SearchQuery::new("wombat", SearchScope::All)).unwrap();
    assert_eq!(hits[0].turn_number, 3, "a synced text file is searchable");
    assert_eq!(devices[1].store.tool_executions(None, "read_file", 10).unwrap().len(), 1);
    assert_eq!(devices[1].store.get_session(&s).unwrap().title, "Where is the quokka config?");
    assert_eq!(devices[1].store.workspace_settings("work").unwrap().directory(), Some("/src"));
    assert_converged(&devices);
}

#[test]
fn turns_appended_offline_on_two_devices_keep_both_the_later_as_a_fork() {
    let mut devices = vec![device("Laptop"), device("Phone")];
    let mut stream = Stream::default();
    let s = devices[0].store.create_session(&NewSession::new("work")).unwrap().id;
    devices[0].store.append_turn(&s, &NewTurn::user("Plan the release")).unwrap();
    settle(&mut stream, &mut devices);
    // Both offline: each appends turns 2 and 3.
    devices[0].store.append_turn(&s, &NewTurn::assistant("laptop: step one")).unwrap();
    devices[0].store.append_turn(&s, &NewTurn::user("laptop: and then?")).unwrap();
    devices[1].store.append_turn(&s, &NewTurn::assistant("phone: first, tag it")).unwrap();
    devices[1].store.append_turn(&s, &NewTurn::user("phone: ok")).unwrap();
    devices[0].store.rename_session(&s, "Release (laptop)").unwrap();
    devices[1].store.rename_session(&s, "Release (phone)").unwrap();
    // The phone reaches the server first.
    stream.publish(&mut devices[1], usize::MAX);
    stream.publish(&mut devices[0], usize::MAX);
    settle(&mut stream, &mut devices);
    for d in &devices {
        assert_eq!(
            texts(d, &s),
            ["Plan the release", "phone: first, tag it", "phone: ok"],
            "the earlier device keeps turn 2"
        );
        let fork = sessions(d).into_iter().find(|id| *id != s).expect("a conflict fork");
        let f = d.store.get_session(&fork).unwrap();
        assert_eq!(f.title, "Release (laptop) (on Laptop)", "the fork's title follows its parent's");
        assert_eq!((f.parent_session_id.as_deref(), f.fork_turn), (Some(s.as_str()), Some(1)));
        assert_eq!(texts(d, &fork), ["Plan the release", "laptop: step one", "laptop: and then?"]);
        assert_eq!(d.store.get_session(&s).unwrap().title, "Release (laptop)", "the rename later in the stream wins");
    }
    assert_converged(&devices);
    // Writing on goes on normally afterwards, on either device, in either session.
    devices[0].store.append_turn(&s, &NewTurn::assistant("laptop: after the merge")).unwrap();
    settle(&mut stream, &mut devices);
    assert_eq!(texts(&devices[1], &s).last().unwrap(), "laptop: after the merge");
    assert_converged(&devices);
}

#[test]
fn turns_that_arrive_for_a_deleted_session_are_recovered() {
    let mut devices = vec![device("Laptop"), device("Phone")];
    let mut stream = Stream::default();
    let s = devices[0].store.create_session(&NewSession::new("work")).unwrap().id;
    devices[0].store.append_turn(&s, &NewTurn::user("Draft the memo")).unwrap();
    settle(&mut stream, &mut devices);
    devices[0].store.delete_session(&s).unwrap();
    devices[1].store.append_turn(&s, &NewTurn::assistant("phone: here is the memo")).unwrap();
    stream.publish(&mut devices[0], usize::MAX);
    settle(&mut stream, &mut devices);
    for d in &devices {
        assert!(d.store.get_session(&s).is_err(), "a delete is final");
        assert_eq!(titles(d), ["Recovered from Phone"]);
        assert_eq!(all_contents(d), ["phone: here is the memo"]);
    }
    assert_converged(&devices);
}

#[test]
fn an_interrupted_reply_finished_later_arrives_finished() {
    let mut devices = vec![device("Laptop"), device("Phone")];
    let mut stream = Stream::default();
    let s = devices[0].store.create_session(&NewSession::new("work")).unwrap().id;
    devices[0].store.append_turn(&s, &NewTurn::user("Explain")).unwrap();
    let partial = NewTurn { status: TurnStatus::Interrupted, ..NewTurn::assistant("It is") };
    let n = devices[0].store.append_turn(&s, &partial).unwrap().turn_number;
    stream.publish(&mut devices[0], usize::MAX);
    stream.consume(&mut devices[1], usize::MAX);
    assert_eq!(texts(&devices[1], &s), ["Explain", "It is"]);
    devices[0].store.checkpoint_turn(&s, n, "It is a").unwrap();
    devices[0].store.finalize_turn(&s, n, &NewTurn::assistant("It is a quokka.")).unwrap();
    settle(&mut stream, &mut devices);
    let t = devices[1].store.get_turns(&s, 0, 10).unwrap().pop().unwrap();
    assert_eq!((t.content.as_str(), t.status), ("It is a quokka.", TurnStatus::Complete));
    assert_converged(&devices);
}

#[test]
fn an_archive_that_turns_sync_on_sends_what_it_already_had() {
    let mut old = Store::open_in_memory().unwrap();
    let s = old.create_session(&NewSession::new("work")).unwrap().id;
    old.append_turn(&s, &NewTurn::user("Before sync")).unwrap();
    old.append_turn(&s, &NewTurn::assistant("An answer")).unwrap();
    let f = old.fork_session(&s, 1).unwrap().id;
    old.append_turn(&f, &NewTurn::assistant("Another answer")).unwrap();
    old.set_archived(&s, true).unwrap();
    // Active later than its last turn, as an imported conversation's "updated" time can leave it.
    old.connection().execute("UPDATE sessions SET last_active_at = last_active_at + 60000", []).unwrap();
    old.enable_sync("Desktop").unwrap();
    let mut devices = vec![Device { store: old, read: HashMap::new() }, device("Phone")];
    settle(&mut Stream::default(), &mut devices);
    assert_eq!(texts(&devices[1], &f), ["Before sync", "Another answer"]);
    assert!(devices[1].store.get_session(&s).unwrap().is_archived);
    assert_converged(&devices);
}

// --- any histories, any interleaving -------------------------------------------------------------

#[derive(Debug, Clone)]
enum Op {
    NewSession,
    Append { session: usize, user: bool },
    Interrupted { session: usize, finish: bool },
    Rename { session: usize },
    Archive { session: usize },
    Fork { session: usize, at: u8 },
    Delete { session: usize },
    Publish { n: usize },
    Consume { n: usize },
}

fn arb_op(deletes: bool) -> impl Strategy<Value = Op> {
    let s = 0usize..6;
    prop_oneof![
        2 => Just(Op::NewSession),
        8 => (s.clone(), any::<bool>()).prop_map(|(session, user)| Op::Append { session, user }),
        1 => (s.clone(), any::<bool>()).prop_map(|(session, finish)| Op::Interrupted { session, finish }),
        1 => s.clone().prop_map(|session| Op::Rename { session }),
        1 => s.clone().prop_map(|session| Op::Archive { session }),
        1 => (s.clone(), any::<u8>()).prop_map(|(session, at)| Op::Fork { session, at }),
        1 => s.prop_map(|session| Op::Delete { session }),
        3 => (1usize..6).prop_map(|n| Op::Publish { n }),
        3 => (1usize..8).prop_map(|n| Op::Consume { n }),
    ]
    .prop_map(move |op| if !deletes && matches!(op, Op::Delete { .. }) { Op::NewSession } else { op })
}

/// Runs `ops` (device index, op) and settles; returns the devices and every text written.
fn run(ndev: usize, ops: &[(usize, Op)]) -> (Vec<Device>, Vec<String>, Stream) {
    let names = ["Laptop", "Phone", "Desktop"];
    let mut devices: Vec<Device> = (0..ndev).map(|i| device(names[i])).collect();
    let mut stream = Stream::default();
    let mut written = Vec::new();
    for (k, (i, op)) in ops.iter().enumerate() {
        let i = i % ndev;
        let pick = |d: &Device, n: usize| -> Option<String> {
            let ids = sessions(d);
            (!ids.is_empty()).then(|| ids[n % ids.len()].clone())
        };
        let d = &mut devices[i];
        match op {
            Op::NewSession => {
                d.store.create_session(&NewSession::new(["work", "home"][k % 2])).unwrap();
            }
            Op::Append { session, user } => {
                if let Some(s) = pick(d, *session) {
                    let text = format!("{} wrote #{k}", names[i]);
                    let turn = if *user { NewTurn::user(text.clone()) } else { NewTurn::assistant(text.clone()) };
                    d.store.append_turn(&s, &turn).unwrap();
                    written.push(text);
                }
            }
            Op::Interrupted { session, finish } => {
                if let Some(s) = pick(d, *session) {
                    let text = format!("{} streamed #{k}", names[i]);
                    let partial = NewTurn { status: TurnStatus::Interrupted, ..NewTurn::assistant("…") };
                    let n = d.store.append_turn(&s, &partial).unwrap().turn_number;
                    if *finish {
                        d.store.finalize_turn(&s, n, &NewTurn::assistant(text.clone())).unwrap();
                    } else {
                        d.store.checkpoint_turn(&s, n, &text).unwrap();
                    }
                    written.push(text);
                }
            }
            Op::Rename { session } => {
                if let Some(s) = pick(d, *session) {
                    d.store.rename_session(&s, &format!("{} named it #{k}", names[i])).unwrap();
                }
            }
            Op::Archive { session } => {
                if let Some(s) = pick(d, *session) {
                    let now = d.store.get_session(&s).unwrap().is_archived;
                    d.store.set_archived(&s, !now).unwrap();
                }
            }
            Op::Fork { session, at } => {
                if let Some(s) = pick(d, *session) {
                    let count = d.store.turn_count(&s).unwrap();
                    d.store.fork_session(&s, i64::from(*at) % (count + 1)).unwrap();
                }
            }
            Op::Delete { session } => {
                if let Some(s) = pick(d, *session) {
                    d.store.delete_session(&s).unwrap();
                }
            }
            Op::Publish { n } => stream.publish(d, *n),
            Op::Consume { n } => stream.consume(d, *n),
        }
    }
    settle(&mut stream, &mut devices);
    (devices, written, stream)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Without deletes, every turn anyone wrote is in every archive exactly once.
    #[test]
    fn any_histories_converge_and_keep_every_turn(
        ndev in 2usize..=3,
        ops in prop::collection::vec((0usize..3, arb_op(false)), 0..60),
    ) {
        let (devices, written, _) = run(ndev, &ops);
        assert_converged(&devices);
        for d in &devices {
            let mut rows = Vec::new();
            for id in sessions(d) {
                let s = d.store.get_session(&id).unwrap();
                let own_from = s.fork_turn.unwrap_or(0) + 1;
                rows.extend(d.store.get_turns(&id, (own_from - 1) as usize, 100_000).unwrap().into_iter().map(|t| t.content));
            }
            for text in &written {
                prop_assert_eq!(rows.iter().filter(|r| *r == text).count(), 1, "{} is kept once", text);
            }
        }
    }

    /// With deletes too: the same archive everywhere, and a turn is gone only when a delete ordered
    /// after it in the stream removed the session that held it.
    #[test]
    fn any_histories_with_deletes_converge(
        ndev in 2usize..=3,
        ops in prop::collection::vec((0usize..3, arb_op(true)), 0..60),
    ) {
        let (devices, written, stream) = run(ndev, &ops);
        assert_converged(&devices);
        let deletes = stream.messages.iter().filter(|m| {
            matches!(serde_json::from_str::<SyncMessage>(m).unwrap().change, SyncChange::SessionDeleted { .. })
        }).count();
        if deletes == 0 {
            let contents = all_contents(&devices[0]);
            for text in &written {
                prop_assert!(contents.contains(text), "{} is kept", text);
            }
        }
    }
}

/// Histories the property tests once found diverging (each fixed): conflict forks made for turns
/// whose session was deleted before they arrived, forks of turns that moved, a session of recovered
/// turns written to from two devices, a rename of a conflict fork made here, clock skew between
/// devices. Run as they were found; each must converge.
#[test]
fn histories_that_once_diverged_converge() {
    use Op::*;
    let cases: Vec<(usize, Vec<(usize, Op)>)> = vec![
        (
            2,
            vec![
                (2, NewSession),
                (2, Publish { n: 1 }),
                (1, Consume { n: 1 }),
                (1, Append { session: 0, user: false }),
                (2, Append { session: 0, user: false }),
                (2, Delete { session: 0 }),
                (0, NewSession),
                (0, NewSession),
                (0, NewSession),
                (0, NewSession),
                (0, NewSession),
                (0, NewSession),
            ],
        ),
        (
            3,
            vec![
                (2, NewSession),
                (2, NewSession),
                (1, Append { session: 3, user: false }),
                (2, Append { session: 5, user: false }),
                (2, Publish { n: 5 }),
                (0, Consume { n: 7 }),
                (0, Append { session: 3, user: true }),
                (1, Publish { n: 1 }),
                (1, NewSession),
                (0, Append { session: 4, user: true }),
                (2, Append { session: 5, user: true }),
                (0, Archive { session: 3 }),
                (1, Publish { n: 3 }),
                (0, NewSession),
                (1, Publish { n: 5 }),
                (2, Append { session: 5, user: true }),
                (0, Publish { n: 1 }),
                (2, Interrupted { session: 3, finish: true }),
                (1, NewSession),
                (2, Append { session: 0, user: true }),
                (1, Append { session: 5, user: true }),
                (1, Append { session: 0, user: true }),
                (0, Append { session: 3, user: false }),
                (1, Append { session: 4, user: false }),
                (0, Rename { session: 2 }),
                (0, Append { session: 5, user: true }),
                (1, Interrupted { session: 0, finish: false }),
                (0, Consume { n: 7 }),
                (0, Consume { n: 1 }),
                (2, Append { session: 3, user: false }),
                (0, Append { session: 2, user: true }),
                (0, Append { session: 3, user: true }),
                (2, Append { session: 2, user: true }),
                (2, Fork { session: 5, at: 207 }),
                (1, Consume { n: 3 }),
                (2, NewSession),
                (2, Consume { n: 4 }),
            ],
        ),
        (
            2,
            vec![
                (1, NewSession),
                (1, Append { session: 0, user: false }),
                (1, NewSession),
                (1, Append { session: 5, user: false }),
                (1, Publish { n: 1 }),
                (1, NewSession),
                (1, Fork { session: 0, at: 0 }),
                (0, Consume { n: 1 }),
                (1, Fork { session: 4, at: 61 }),
                (2, Delete { session: 0 }),
                (1, Publish { n: 1 }),
            ],
        ),
        (
            3,
            vec![
                (1, NewSession),
                (1, Publish { n: 1 }),
                (1, Delete { session: 0 }),
                (0, Consume { n: 1 }),
                (0, Append { session: 0, user: false }),
                (0, Consume { n: 1 }),
                (1, Publish { n: 1 }),
                (0, Publish { n: 1 }),
                (1, Consume { n: 3 }),
                (1, Append { session: 0, user: false }),
                (0, Append { session: 0, user: false }),
            ],
        ),
        (
            2,
            vec![
                (1, NewSession),
                (1, Append { session: 3, user: false }),
                (1, Fork { session: 1, at: 157 }),
                (1, Append { session: 3, user: true }),
                (1, Fork { session: 4, at: 212 }),
                (1, Append { session: 1, user: false }),
                (1, Publish { n: 5 }),
                (0, Consume { n: 6 }),
                (0, Append { session: 2, user: false }),
                (0, Append { session: 3, user: true }),
                (2, Append { session: 0, user: false }),
                (0, Archive { session: 4 }),
                (1, Consume { n: 4 }),
                (2, Fork { session: 5, at: 158 }),
                (0, Interrupted { session: 5, finish: false }),
                (2, Append { session: 3, user: false }),
                (0, Consume { n: 5 }),
                (1, Append { session: 0, user: true }),
                (1, Append { session: 1, user: false }),
                (0, Archive { session: 3 }),
                (1, NewSession),
                (1, Publish { n: 1 }),
            ],
        ),
        (
            3,
            vec![
                (2, NewSession),
                (2, Publish { n: 1 }),
                (2, NewSession),
                (2, Append { session: 0, user: false }),
                (2, NewSession),
                (0, Consume { n: 1 }),
                (2, Append { session: 0, user: true }),
                (0, Append { session: 0, user: false }),
                (0, Publish { n: 1 }),
                (2, Append { session: 3, user: false }),
                (0, NewSession),
                (0, Delete { session: 0 }),
                (2, Publish { n: 2 }),
            ],
        ),
        (
            3,
            vec![
                (0, NewSession),
                (1, NewSession),
                (0, Fork { session: 0, at: 204 }),
                (1, Publish { n: 2 }),
                (0, Publish { n: 4 }),
                (2, Consume { n: 3 }),
                (1, Append { session: 4, user: false }),
                (2, Append { session: 3, user: true }),
                (1, Publish { n: 2 }),
                (2, Delete { session: 0 }),
                (0, Consume { n: 7 }),
                (2, Append { session: 2, user: true }),
                (2, Append { session: 3, user: true }),
                (2, Publish { n: 1 }),
                (1, Rename { session: 0 }),
                (2, Fork { session: 0, at: 95 }),
                (2, Publish { n: 2 }),
                (1, Append { session: 5, user: true }),
                (0, Publish { n: 1 }),
                (1, Append { session: 5, user: false }),
                (1, NewSession),
                (0, Delete { session: 0 }),
                (1, Append { session: 1, user: false }),
                (2, Append { session: 5, user: true }),
                (2, Append { session: 0, user: true }),
                (1, Archive { session: 1 }),
                (1, Delete { session: 4 }),
                (1, Append { session: 4, user: false }),
                (0, Rename { session: 0 }),
                (2, Publish { n: 3 }),
                (0, Append { session: 5, user: true }),
                (0, Consume { n: 7 }),
                (0, Archive { session: 2 }),
                (2, Append { session: 2, user: false }),
                (1, Fork { session: 1, at: 172 }),
                (0, Interrupted { session: 3, finish: false }),
                (0, Append { session: 0, user: false }),
                (1, Archive { session: 1 }),
                (2, Fork { session: 4, at: 42 }),
            ],
        ),
        (
            2,
            vec![
                (2, NewSession),
                (2, Publish { n: 1 }),
                (0, Append { session: 0, user: false }),
                (2, NewSession),
                (2, Fork { session: 0, at: 0 }),
                (2, Delete { session: 3 }),
                (1, Consume { n: 1 }),
                (0, Publish { n: 1 }),
                (1, Append { session: 0, user: false }),
                (1, Append { session: 0, user: false }),
                (1, Publish { n: 1 }),
                (1, Append { session: 0, user: false }),
                (1, Fork { session: 0, at: 34 }),
            ],
        ),
        (
            2,
            vec![
                (2, NewSession),
                (2, Publish { n: 1 }),
                (0, Append { session: 0, user: false }),
                (2, NewSession),
                (2, Delete { session: 1 }),
                (2, Delete { session: 0 }),
                (1, Consume { n: 1 }),
                (0, Publish { n: 1 }),
                (1, Append { session: 0, user: false }),
                (1, Append { session: 0, user: false }),
                (1, Consume { n: 1 }),
                (1, Publish { n: 1 }),
                (1, Append { session: 3, user: false }),
            ],
        ),
        (
            2,
            vec![
                (0, NewSession),
                (2, Append { session: 0, user: false }),
                (2, Publish { n: 1 }),
                (1, Consume { n: 1 }),
                (1, NewSession),
                (2, Publish { n: 1 }),
                (1, Append { session: 2, user: false }),
                (1, Fork { session: 0, at: 0 }),
                (1, Consume { n: 1 }),
                (1, NewSession),
                (1, Rename { session: 4 }),
            ],
        ),
        (
            2,
            vec![
                (0, NewSession),
                (0, Append { session: 0, user: false }),
                (0, NewSession),
                (2, Publish { n: 1 }),
                (1, Consume { n: 1 }),
                (0, NewSession),
                (0, Append { session: 0, user: false }),
                (0, NewSession),
                (2, Fork { session: 0, at: 7 }),
                (1, Delete { session: 0 }),
                (0, NewSession),
                (1, Publish { n: 1 }),
            ],
        ),
        (
            2,
            vec![
                (1, NewSession),
                (0, NewSession),
                (0, Append { session: 0, user: false }),
                (1, Publish { n: 1 }),
                (2, Consume { n: 1 }),
                (2, Fork { session: 1, at: 11 }),
                (0, Delete { session: 0 }),
                (2, Append { session: 1, user: false }),
                (0, Publish { n: 1 }),
                (2, Append { session: 1, user: false }),
                (2, Delete { session: 0 }),
                (0, Publish { n: 1 }),
                (0, Append { session: 0, user: false }),
                (2, Fork { session: 0, at: 106 }),
            ],
        ),
    ];
    for (ndev, ops) in cases {
        let (devices, _, _) = run(ndev, &ops);
        assert_converged(&devices);
    }
}

// --- spaces: personal, team, this device ------------------------------------------------------------

/// Publishes every device's changes to each space it belongs to and reads them back, three times.
fn settle_spaces(streams: &mut [Stream], members: &[&[usize]], devices: &mut [Device]) {
    for _ in 0..3 {
        for (stream, who) in streams.iter_mut().zip(members) {
            for &d in who.iter() {
                stream.publish(&mut devices[d], usize::MAX);
            }
            for &d in who.iter() {
                stream.consume(&mut devices[d], usize::MAX);
            }
        }
    }
}

fn workspace_sessions(d: &Device, workspace: &str) -> Vec<String> {
    let filter = SessionFilter {
        workspace: Some(workspace.into()),
        include_archived: true,
        limit: 1000,
        ..SessionFilter::default()
    };
    let mut ids: Vec<String> = d.store.list_sessions(&filter).unwrap().into_iter().map(|s| s.id).collect();
    ids.sort();
    ids
}

fn scope(d: &mut Device, workspace: &str, sync: SyncScope) {
    let settings = d.store.workspace_settings(workspace).unwrap();
    d.store.set_workspace_settings(&WorkspaceSettings { sync, ..settings }).unwrap();
}

#[test]
fn a_team_workspace_is_shared_with_the_team_and_nothing_else_is() {
    // Alice's laptop (personal + team "acme"), her phone (personal only), Bob (his own + "acme").
    let mut devices = vec![device("Alice laptop"), device("Alice phone"), device("Bob")];
    let (mut alice, mut acme, mut bob) = (Stream::default(), Stream::of(Space::Team("acme".into())), Stream::default());
    let home = devices[0].store.create_session(&NewSession::new("home")).unwrap().id;
    devices[0].store.append_turn(&home, &NewTurn::user("my dentist is on Tuesday")).unwrap();
    let early = devices[0].store.create_session(&NewSession::new("acme")).unwrap().id;
    devices[0].store.append_turn(&early, &NewTurn::user("the acme roadmap, first draft")).unwrap();
    // The workspace moves to the team after it had a session: that session goes to the team whole.
    scope(&mut devices[0], "acme", SyncScope::Team("acme".into()));
    let later = devices[0].store.create_session(&NewSession::new("acme")).unwrap().id;
    devices[0].store.append_turn(&later, &NewTurn::user("acme standup notes")).unwrap();
    devices[2].store.create_session(&NewSession::new("bob-home")).unwrap();
    let mut streams = [std::mem::take(&mut alice), acme, std::mem::take(&mut bob)];
    settle_spaces(&mut streams, &[&[0, 1], &[0, 2], &[2]], &mut devices);
    [alice, acme, bob] = streams;

    assert_eq!(workspace_sessions(&devices[2], "acme"), workspace_sessions(&devices[0], "acme"), "Bob has acme's");
    assert!(workspace_sessions(&devices[2], "home").is_empty(), "nothing personal of Alice's reaches Bob");
    assert_eq!(texts(&devices[2], &early), ["the acme roadmap, first draft"]);
    assert_eq!(devices[2].store.workspace_settings("acme").unwrap().sync, SyncScope::Team("acme".into()));
    let on_server = |s: &Stream, needle: &str| s.messages.iter().any(|m| m.contains(needle));
    assert!(!on_server(&acme, "dentist"), "the team's stream carries no personal session");
    assert!(!on_server(&alice, "standup"), "the personal stream carries no team session written after the move");
    // Alice's phone has what was personal, and knows the workspace now lives in the team's space.
    assert_eq!(texts(&devices[1], &home), ["my dentist is on Tuesday"]);
    assert_eq!(workspace_sessions(&devices[1], "acme"), std::slice::from_ref(&early));
    assert_eq!(devices[1].store.workspace_settings("acme").unwrap().sync, SyncScope::Team("acme".into()));

    // Bob answers in the team's session; Alice writes to it at the same time (a conflict, settled by
    // the team stream's order on both); Alice's personal writes meanwhile change nothing of that.
    devices[2].store.append_turn(&later, &NewTurn::assistant("Bob: standup moved to 10:00")).unwrap();
    devices[0].store.append_turn(&later, &NewTurn::assistant("Alice: standup is cancelled")).unwrap();
    devices[0].store.append_turn(&home, &NewTurn::assistant("and the vet on Friday")).unwrap();
    let mut streams = [alice, acme, bob];
    settle_spaces(&mut streams, &[&[0, 1], &[0, 2], &[2]], &mut devices);
    let [_, acme, _] = streams;
    let acme_of = |d: &Device| d.store.export_jsonl(Some(&workspace_sessions(d, "acme"))).unwrap();
    assert_eq!(acme_of(&devices[0]), acme_of(&devices[2]), "the team's workspace is the same for both");
    let everything: Vec<String> =
        workspace_sessions(&devices[0], "acme").iter().flat_map(|s| texts(&devices[0], s)).collect();
    for said in ["Bob: standup moved to 10:00", "Alice: standup is cancelled"] {
        assert!(everything.iter().any(|t| t == said), "{said:?} is kept");
    }
    assert!(!on_server(&acme, "vet on Friday"));
    for d in &devices {
        let status = d.store.sync_status().unwrap();
        assert_eq!((status.waiting, status.unconfirmed), (0, 0), "everything went out and came back");
    }
    // Alice's phone never joined the team: what it writes in the workspace waits for that, and says so.
    devices[1].store.append_turn(&early, &NewTurn::assistant("phone: added a milestone")).unwrap();
    let team = Space::Team("acme".into());
    assert_eq!(devices[1].store.sync_waiting(&team).unwrap(), 1);
    assert_eq!(devices[1].store.sync_waiting(&Space::Personal).unwrap(), 0);
    assert_eq!(devices[1].store.sync_spaces().unwrap(), [Space::Personal, team]);
}

#[test]
fn a_this_device_workspace_never_leaves_it() {
    let mut devices = vec![device("Laptop"), device("Phone")];
    scope(&mut devices[0], "diary", SyncScope::ThisDevice);
    let diary = devices[0].store.create_session(&NewSession::new("diary")).unwrap().id;
    devices[0].store.append_turn(&diary, &NewTurn::user("a private thought")).unwrap();
    devices[0].store.rename_session(&diary, "Private").unwrap();
    let work = devices[0].store.create_session(&NewSession::new("work")).unwrap().id;
    devices[0].store.append_turn(&work, &NewTurn::user("the quarterly plan")).unwrap();
    let mut stream = Stream::default();
    settle(&mut stream, &mut devices);
    assert!(stream.messages.iter().all(|m| !m.contains("private thought") && !m.contains("diary")));
    assert_eq!(sessions(&devices[1]), [work]);
    // A delete there is carried out at once: no stream will ever order it.
    devices[0].store.delete_session(&diary).unwrap();
    assert!(devices[0].store.get_session(&diary).is_err());
    // Turned back to personal, the workspace goes out whole.
    scope(&mut devices[0], "diary", SyncScope::Personal);
    let kept = devices[0].store.create_session(&NewSession::new("diary")).unwrap().id;
    devices[0].store.append_turn(&kept, &NewTurn::user("now shared with my phone")).unwrap();
    settle(&mut stream, &mut devices);
    assert_eq!(texts(&devices[1], &kept), ["now shared with my phone"]);
    assert_converged(&devices);
}

#[test]
fn a_team_space_name_is_checked() {
    let mut d = device("Laptop");
    let bad = WorkspaceSettings { sync: SyncScope::Team("acme corp".into()), ..WorkspaceSettings::unset("acme") };
    let err = d.store.set_workspace_settings(&bad).unwrap_err().to_string();
    assert!(err.contains("letters, digits"), "{err}");
    assert_eq!(d.store.workspace_settings("acme").unwrap().sync, SyncScope::Personal, "nothing saved");
}

/// A reply being written on the laptop while the phone's changes arrive: what cannot move the reply's
/// turn is applied at once, the phone's turn in the same session waits until the reply is saved.
#[test]
fn a_reply_being_written_keeps_its_turn_while_the_stream_is_applied() {
    use cowork_core::store::sync::{applicable_while_writing, Received};
    let mut devices = vec![device("Laptop"), device("Phone")];
    let mut stream = Stream::default();
    let s = devices[0].store.create_session(&NewSession::new("work")).unwrap().id;
    devices[0].store.append_turn(&s, &NewTurn::user("Plan the release")).unwrap();
    settle(&mut stream, &mut devices);
    // The phone, first to the server: a new session, then a turn in the laptop's session.
    let t = devices[1].store.create_session(&NewSession::new("work")).unwrap().id;
    devices[1].store.append_turn(&t, &NewTurn::user("phone: elsewhere")).unwrap();
    devices[1].store.append_turn(&s, &NewTurn::user("phone: and the notes?")).unwrap();
    stream.publish(&mut devices[1], usize::MAX);
    // The laptop starts a reply in `s` and publishes its first words.
    devices[0].store.append_turn(&s, &NewTurn::user("laptop: go on")).unwrap();
    let partial = NewTurn { status: TurnStatus::Interrupted, ..NewTurn::assistant("Tag") };
    let n = devices[0].store.append_turn(&s, &partial).unwrap().turn_number;
    stream.publish(&mut devices[0], usize::MAX);
    // Its sync round, mid-reply: the batch stops before the phone's turn in `s`.
    let own = devices[0].store.sync_device().unwrap().unwrap().id;
    let from = devices[0].read[&Space::Personal];
    let batch: Vec<(i64, SyncMessage)> = stream.messages[from..]
        .iter()
        .enumerate()
        .map(|(i, m)| ((from + i + 1) as i64, serde_json::from_str(m).unwrap()))
        .collect();
    let received: Vec<(i64, Received)> = batch.iter().map(|(seq, m)| (*seq, Received::Change(m.clone()))).collect();
    let k = applicable_while_writing(&received, &own, &s);
    assert!(
        k > 0 && k < batch.len(),
        "the phone's new session goes in, its turn in `s` waits ({k} of {})",
        batch.len()
    );
    assert!(matches!(&batch[k].1.change, SyncChange::TurnAdded(r) if r.session_id == s));
    devices[0].store.apply_sync_batch(&Space::Personal, &batch[..k]).unwrap();
    devices[0].read.insert(Space::Personal, from + k);
    assert_eq!(texts(&devices[0], &t), ["phone: elsewhere"], "the other session arrived mid-reply");
    // The reply's turn is where the loop left it: checkpointed and finalised by its number.
    devices[0].store.checkpoint_turn(&s, n, "Tag it").unwrap();
    devices[0].store.finalize_turn(&s, n, &NewTurn::assistant("Tag it, then publish.")).unwrap();
    // Saved: the rest is applied, and both devices agree, every turn kept.
    settle(&mut stream, &mut devices);
    assert_converged(&devices);
    let all = all_contents(&devices[1]);
    for text in ["phone: and the notes?", "laptop: go on", "Tag it, then publish."] {
        assert!(all.iter().any(|c| c == text), "{text:?} is kept");
    }
    // A reply in a session nobody else wrote to lets the whole batch in.
    assert_eq!(applicable_while_writing(&received, &own, "a session nobody else wrote to"), batch.len());
    // A pack (changes sealed together share one stream sequence) waits whole: the cursor never stops
    // inside one. Here the phone's turn in `s` is in the pack that starts one change earlier.
    let packed: Vec<(i64, Received)> =
        received.iter().enumerate().map(|(i, (_, m))| (if i + 1 < k { 1 } else { 2 }, m.clone())).collect();
    assert_eq!(applicable_while_writing(&packed, &own, &s), k - 1);
    assert_eq!(applicable_while_writing(&packed, &own, "a session nobody else wrote to"), batch.len());
}

// --- delegated tasks, their events and context manifests ---------------------------------------------

fn delegate(d: &mut Device, session: &str, turn_number: i64, task_id: &str) {
    use cowork_core::{TaskRecord, TaskStatus};
    let task = TaskRecord {
        task_id: task_id.into(),
        session_id: session.into(),
        turn_number,
        goal: "port the parser".into(),
        context: "null".into(),
        status: TaskStatus::Submitted,
        result_delivered: false,
        created_at: 1,
        updated_at: 1,
    };
    d.store.upsert_task(&task).unwrap();
    d.store.append_task_event(task_id, "plan_ready", r#"{"subtasks":2}"#).unwrap();
    d.store.append_task_event(task_id, "task_completed", r#"{"result":"done"}"#).unwrap();
    d.store.upsert_task(&TaskRecord { status: TaskStatus::Completed, updated_at: 2, ..task }).unwrap();
}

fn manifest(d: &mut Device, session: &str, turns: Vec<i64>) -> i64 {
    let m = cowork_core::ContextManifest {
        session_id: session.into(),
        trimmed_turns: vec![turns[0]],
        turn_numbers: turns,
        reasoning_turns: vec![],
        state_version: 3,
        estimated_tokens: 900,
        budget_tokens: 100_000,
        usage: serde_json::Value::Null,
        created_at: 5,
    };
    d.store.record_manifest(&m).unwrap()
}

#[test]
fn a_delegated_task_its_events_and_what_the_model_was_sent_sync() {
    let mut devices = vec![device("Laptop"), device("Phone")];
    let s = devices[0].store.create_session(&NewSession::new("work")).unwrap().id;
    devices[0].store.append_turn(&s, &NewTurn::user("Port the parser")).unwrap();
    let id = manifest(&mut devices[0], &s, vec![1]);
    devices[0].store.append_turn(&s, &NewTurn::assistant("Delegating it.")).unwrap();
    delegate(&mut devices[0], &s, 2, "task-1");
    devices[0].store.set_manifest_usage(id, &serde_json::json!({"prompt_tokens": 880})).unwrap();
    settle(&mut Stream::default(), &mut devices);
    let phone = &devices[1].store;
    let task = phone.task("task-1").unwrap().expect("the task reached the phone");
    assert_eq!((task.session_id.as_str(), task.turn_number, task.status.as_str()), (s.as_str(), 2, "completed"));
    let events: Vec<String> = phone.task_events("task-1").unwrap().into_iter().map(|e| e.event_type).collect();
    assert_eq!(events, ["plan_ready", "task_completed"]);
    let manifests = phone.manifests(&s, 10).unwrap();
    assert_eq!(manifests.len(), 1, "one manifest, its usage applied to it: {manifests:?}");
    assert_eq!((manifests[0].turn_numbers.clone(), manifests[0].usage["prompt_tokens"].as_i64()), (vec![1], Some(880)));
    assert_converged(&devices);
}

#[test]
fn a_task_follows_its_turn_into_a_conflict_fork_on_every_device() {
    let mut devices = vec![device("Laptop"), device("Phone")];
    let mut stream = Stream::default();
    let s = devices[0].store.create_session(&NewSession::new("work")).unwrap().id;
    devices[0].store.append_turn(&s, &NewTurn::user("Port the parser")).unwrap();
    settle(&mut stream, &mut devices);
    // Offline, both answer turn 1; the laptop delegates from its answer. The phone is ordered first.
    devices[1].store.append_turn(&s, &NewTurn::assistant("phone: I'll do it here")).unwrap();
    devices[0].store.append_turn(&s, &NewTurn::assistant("laptop: delegating")).unwrap();
    delegate(&mut devices[0], &s, 2, "task-2");
    manifest(&mut devices[0], &s, vec![1, 2]);
    stream.publish(&mut devices[1], usize::MAX);
    settle(&mut stream, &mut devices);
    for d in &devices {
        let task = d.store.task("task-2").unwrap().expect("the task is kept");
        assert_ne!(task.session_id, s, "the laptop's answer went into a conflict fork");
        let turn = &d.store.get_turns(&task.session_id, task.turn_number as usize - 1, 1).unwrap()[0];
        assert_eq!(turn.content, "laptop: delegating", "the task names the turn that delegated it");
        let m = d.store.manifests(&task.session_id, 10).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].turn_numbers, vec![1, task.turn_number]);
    }
    assert_converged(&devices);
}

#[test]
fn a_workspaces_mcp_servers_and_an_mcp_result_with_its_image_reach_the_other_device() {
    let mut devices = vec![device("Laptop"), device("Phone")];
    let mut stream = Stream::default();
    let server = serde_json::json!({"id": "mcp-1", "name": "everything", "url": "http://127.0.0.1:3001/mcp",
        "auth": "bearer", "enabled": true, "policy": "always_ask"});
    let work = WorkspaceSettings { mcp_servers: vec![server.clone()], ..WorkspaceSettings::unset("work") };
    devices[0].store.set_workspace_settings(&work).unwrap();
    let s = devices[0].store.create_session(&NewSession::new("work")).unwrap().id;
    let parts = cowork_core::mcp::result_parts(&serde_json::json!({"content": [
        {"type": "text", "text": "a numbat"}, {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}]}));
    let mut turn = NewTurn::tool_result("c1", "everything__get-tiny-image", parts.content.clone());
    turn.metadata = serde_json::json!({"success": true, "result": parts.result});
    let exec = NewToolExecution {
        tool_name: "everything__get-tiny-image".into(),
        arguments: "{}".into(),
        success: true,
        duration_ms: 1,
        approval: Approval::Auto,
    };
    devices[0].store.append_tool_result_with(&s, &turn, &exec, &parts.attachments).unwrap();
    settle(&mut stream, &mut devices);
    assert_eq!(devices[1].store.workspace_settings("work").unwrap().mcp_servers, vec![server]);
    let synced = &devices[1].store.get_turns(&s, 0, 1).unwrap()[0];
    assert_eq!(synced.metadata["result"]["content"][1]["attachment"], 0);
    assert_eq!(devices[1].store.attachment_bytes(&synced.attachments[0].sha256).unwrap(), b"\x89PNG\r\n\x1a\n");
    assert_converged(&devices);
}
