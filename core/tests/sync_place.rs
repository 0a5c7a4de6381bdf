//! Where synced turns land, under session ids of every form (spec §14): a turn follows the turn its
//! author saw before it wherever the archive still shows that turn, whatever the first character of
//! the ids of the sessions involved. Sessions made here carry UUID v7 ids (`019…`), but conflict
//! forks, recovered sessions and imported conversations carry ids that start with any hex digit, and
//! an imported file may bring ids of other forms (a tool's own ids, upper case, `_` or `-` first).
//! The copies a fork keeps of a deleted parent's turns are named `<gid>@<fork id>`, so their lookup
//! must not depend on that id's first character.
#![cfg(not(target_arch = "wasm32"))]

use cowork_core::store::sync::SyncMessage;
use cowork_core::store::{NewSession, SessionFilter, SessionTurns, Store};
use cowork_core::{NewTurn, Session, Space};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

struct Device {
    store: Store,
    read: usize,
}

/// The personal space's stream: messages as JSON, in arrival order, a repeated id dropped.
#[derive(Default)]
struct Stream {
    messages: Vec<String>,
    ids: HashSet<String>,
}

impl Stream {
    fn publish(&mut self, d: &mut Device, limit: usize) {
        let out = d.store.sync_outgoing(&Space::Personal, limit).unwrap();
        if let Some(last) = out.last() {
            for m in &out {
                if self.ids.insert(m.id.clone()) {
                    self.messages.push(serde_json::to_string(m).unwrap());
                }
            }
            d.store.sync_published(&Space::Personal, last.seq).unwrap();
        }
    }

    fn consume(&self, d: &mut Device, limit: usize) {
        let end = d.read.saturating_add(limit).min(self.messages.len());
        for i in d.read..end {
            let msg: SyncMessage = serde_json::from_str(&self.messages[i]).unwrap();
            d.store.apply_sync(&Space::Personal, i as i64 + 1, &msg).unwrap();
        }
        d.read = end;
    }
}

/// Every first character a session id can have here: hex digits (UUIDs of every version), and
/// what other tools' ids bring through an import (upper case, a letter past `f`, `_`, `-`).
const FIRST: &[char] =
    &['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e', 'f', 'A', 'F', 'Z', 'z', '_', '-'];

/// A session id starting with `FIRST[form]`, unique by `k`.
fn id_of(form: usize, k: usize) -> String {
    format!("{}{k:07x}-5e55-4d0c-8f00-00000000{k:04x}", FIRST[form % FIRST.len()])
}

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

fn texts(d: &Device, session: &str) -> Vec<String> {
    d.store.get_turns(session, 0, 100_000).unwrap().into_iter().map(|t| t.content).collect()
}

/// The turns `session` shows, each with whether it is held by a session of recovered turns (a log
/// of one device's turns for a deleted session, where each turn goes at the end by design).
fn shown(d: &Device, session: &str) -> Vec<(String, bool)> {
    let mut recovered = HashMap::new();
    let mut out = Vec::new();
    for t in d.store.get_turns(session, 0, 100_000).unwrap() {
        let log = *recovered
            .entry(t.session_id.clone())
            .or_insert_with(|| d.store.get_session(&t.session_id).unwrap().title.starts_with("Recovered from"));
        out.push((t.content, log));
    }
    out
}

/// Forks `parent` after turn `at` under the id `id`, as importing a file that holds such a fork does.
fn import_fork(store: &mut Store, parent: &str, at: i64, id: &str) {
    let p = store.get_session(parent).unwrap();
    let fork = Session {
        id: id.to_owned(),
        title: format!("{} (imported fork)", p.title),
        turn_count: at,
        parent_session_id: Some(parent.to_owned()),
        fork_turn: Some(at),
        ..p
    };
    let mut line = serde_json::to_value(&fork).unwrap();
    line["type"] = "session".into();
    let file = format!(
        "{{\"type\":\"header\",\"format\":\"cowork-archive\",\"version\":3}}\n{line}\n{{\"type\":\"end\",\"sessions\":1,\"turns\":0}}\n"
    );
    let summary = store.import_jsonl(&file).unwrap();
    assert_eq!(summary.sessions_added, 1, "the fork {id} of {parent} at {at} is imported");
}

/// Two empty devices with sync on, "Laptop" and "Phone".
fn laptop_and_phone() -> Vec<Device> {
    ["Laptop", "Phone"]
        .iter()
        .map(|name| {
            let mut store = Store::open_in_memory().unwrap();
            store.enable_sync(name).unwrap();
            Device { store, read: 0 }
        })
        .collect()
}

/// Assembles `session`'s context as the agent loop does, through the turns kept from the last request
/// (`store/turn_cache.rs`), and checks it against the same assembly over every turn read afresh: what
/// sync changed in between (turns placed, lifted and replayed, forks detached) is never stale.
fn assemble_checked(d: &Device, session: &str) {
    use cowork_core::context::{assemble_context, ContextSettings};
    use cowork_core::state::SessionState;
    let (settings, state) = (ContextSettings::default(), SessionState::default());
    let kept = assemble_context(&settings, "", &state, &SessionTurns::new(&d.store, session).unwrap()).unwrap();
    let all = d.store.turns_range(session, 1, d.store.turn_count(session).unwrap()).unwrap();
    let fresh = assemble_context(&settings, "", &state, all.as_slice()).unwrap();
    assert_eq!(kept.manifest, fresh.manifest, "the context of {session} is what a fresh read gives");
    assert_eq!(kept.messages, fresh.messages, "the context of {session} is what a fresh read gives");
}

#[derive(Debug, Clone)]
enum Op {
    NewSession { form: usize },
    Append { session: usize },
    Fork { session: usize, at: u8, form: usize },
    Delete { session: usize },
    Publish { n: usize },
    Consume { n: usize },
}

fn arb_op() -> impl Strategy<Value = Op> {
    // Few sessions to pick from, and forks and deletes often: what it takes for a device to go on in
    // a fork whose parent another device deleted.
    let s = 0usize..3;
    let form = 0..FIRST.len();
    prop_oneof![
        1 => form.clone().prop_map(|form| Op::NewSession { form }),
        6 => s.clone().prop_map(|session| Op::Append { session }),
        3 => (s.clone(), any::<u8>(), form).prop_map(|(session, at, form)| Op::Fork { session, at, form }),
        2 => s.prop_map(|session| Op::Delete { session }),
        3 => (1usize..6).prop_map(|n| Op::Publish { n }),
        3 => (1usize..8).prop_map(|n| Op::Consume { n }),
    ]
}

/// Runs `ops` on two or three devices and settles. Returns the devices and, for every turn written
/// (by its text), the text its author saw before it (`None` for a first turn).
fn run(ndev: usize, ops: &[(usize, Op)]) -> (Vec<Device>, HashMap<String, Option<String>>) {
    let names = ["Laptop", "Phone", "Desktop"];
    let mut devices: Vec<Device> = (0..ndev)
        .map(|i| {
            let mut store = Store::open_in_memory().unwrap();
            store.enable_sync(names[i]).unwrap();
            Device { store, read: 0 }
        })
        .collect();
    let mut stream = Stream::default();
    let mut saw = HashMap::new();
    for (k, (i, op)) in ops.iter().enumerate() {
        let i = i % ndev;
        let d = &mut devices[i];
        let ids = sessions(d);
        let pick = |n: usize| (!ids.is_empty()).then(|| ids[n % ids.len()].clone());
        match op {
            Op::NewSession { form } => {
                let new = NewSession { id: Some(id_of(*form, k)), ..NewSession::new("work") };
                d.store.create_session(&new).unwrap();
            }
            Op::Append { session } => {
                if let Some(s) = pick(*session) {
                    let before = texts(d, &s).pop();
                    let text = format!("{} wrote #{k}", names[i]);
                    d.store.append_turn(&s, &NewTurn::user(text.clone())).unwrap();
                    saw.insert(text, before);
                }
            }
            Op::Fork { session, at, form } => {
                if let Some(s) = pick(*session) {
                    let count = d.store.turn_count(&s).unwrap();
                    import_fork(&mut d.store, &s, i64::from(*at) % (count + 1), &id_of(*form, k));
                }
            }
            Op::Delete { session } => {
                if let Some(s) = pick(*session) {
                    d.store.delete_session(&s).unwrap();
                }
            }
            Op::Publish { n } => stream.publish(d, *n),
            Op::Consume { n } => stream.consume(d, *n),
        }
        // The next request in the two sessions listed first (the archive keeps the turns of the
        // last two it assembled).
        for s in sessions(d).iter().take(2) {
            assemble_checked(d, s);
        }
    }
    for _ in 0..3 {
        for d in devices.iter_mut() {
            stream.publish(d, usize::MAX);
        }
        for d in devices.iter_mut() {
            stream.consume(d, usize::MAX);
        }
    }
    (devices, saw)
}

/// Every conversation shows each turn right after the turn its author saw before it, wherever it
/// shows that turn at all (a turn whose predecessor went with a deleted session is kept elsewhere),
/// except in a session of recovered turns, a log by design; and every device shows the same.
fn check(devices: &[Device], saw: &HashMap<String, Option<String>>) -> Result<(), TestCaseError> {
    let first = devices[0].store.export_jsonl(None).unwrap();
    for d in &devices[1..] {
        prop_assert!(d.store.export_jsonl(None).unwrap() == first, "every device has the same archive");
    }
    for d in devices {
        for s in sessions(d) {
            assemble_checked(d, &s);
            let turns = shown(d, &s);
            let shown: Vec<&String> = turns.iter().map(|(t, _)| t).collect();
            for (k, (text, log)) in turns.iter().enumerate() {
                let Some(Some(before)) = saw.get(text) else { continue };
                if !log && shown.contains(&before) {
                    prop_assert_eq!(
                        k.checked_sub(1).map(|j| shown[j]),
                        Some(before),
                        "in session {} ({:?}), {:?} follows the turn its author saw before it",
                        s,
                        shown,
                        text
                    );
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Forks (imported, under ids of every first character), deletes that leave those forks copies
    /// of their parent's turns, recovered sessions and conflict forks, in any interleaving.
    #[test]
    fn turns_follow_what_their_author_saw_under_ids_of_every_form(
        ndev in 2usize..=3,
        ops in prop::collection::vec((0usize..3, arb_op()), 0..60),
    ) {
        let (devices, saw) = run(ndev, &ops);
        check(&devices, &saw)?;
    }
}

/// A step of [`a_fork_goes_on_while_its_parent_is_deleted`]: on a device, write in the parent or in
/// one of its forks, delete the parent, publish or read.
#[derive(Debug, Clone)]
enum Step {
    Write { device: usize, session: usize },
    DeleteParent { device: usize },
    Publish { device: usize, n: usize },
    Consume { device: usize, n: usize },
}

fn arb_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0usize..3, 0usize..3).prop_map(|(device, session)| Step::Write { device, session }),
        1 => (0usize..3).prop_map(|device| Step::DeleteParent { device }),
        3 => (0usize..3, 1usize..4).prop_map(|(device, n)| Step::Publish { device, n }),
        3 => (0usize..3, 1usize..6).prop_map(|(device, n)| Step::Consume { device, n }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A conversation imported with two forks (ids of any form, fork points anywhere), known to
    /// every device; then devices write in the parent and the forks, one deletes the parent (the
    /// forks keep copies of its turns), in any interleaving of publishing and reading.
    #[test]
    fn a_fork_goes_on_while_its_parent_is_deleted(
        ndev in 2usize..=3,
        forms in (0..FIRST.len(), 0..FIRST.len(), 0..FIRST.len()),
        turns in 1i64..4,
        at in (0i64..4, 0i64..4),
        steps in prop::collection::vec(arb_step(), 0..30),
    ) {
        let names = ["Laptop", "Phone", "Desktop"];
        let mut devices: Vec<Device> = (0..ndev)
            .map(|i| {
                let mut store = Store::open_in_memory().unwrap();
                store.enable_sync(names[i]).unwrap();
                Device { store, read: 0 }
            })
            .collect();
        let mut stream = Stream::default();
        let mut saw = HashMap::new();
        let parent = id_of(forms.0, 1);
        devices[0].store.create_session(&NewSession { id: Some(parent.clone()), ..NewSession::new("work") }).unwrap();
        for n in 0..turns {
            let text = format!("first #{n}");
            let before = texts(&devices[0], &parent).pop();
            devices[0].store.append_turn(&parent, &NewTurn::user(text.clone())).unwrap();
            saw.insert(text, before);
        }
        let forks = [id_of(forms.1, 2), id_of(forms.2, 3)];
        import_fork(&mut devices[0].store, &parent, at.0 % (turns + 1), &forks[0]);
        import_fork(&mut devices[0].store, &parent, at.1 % (turns + 1), &forks[1]);
        for d in devices.iter_mut() {
            stream.publish(d, usize::MAX);
        }
        for d in devices.iter_mut() {
            stream.consume(d, usize::MAX);
        }
        let sessions = [parent.clone(), forks[0].clone(), forks[1].clone()];
        for (k, step) in steps.iter().enumerate() {
            match *step {
                Step::Write { device, session } => {
                    let (i, s) = (device % ndev, &sessions[session]);
                    let d = &mut devices[i];
                    if d.store.get_session(s).is_ok() {
                        let before = texts(d, s).pop();
                        let text = format!("{} wrote #{k}", names[i]);
                        d.store.append_turn(s, &NewTurn::user(text.clone())).unwrap();
                        saw.insert(text, before);
                    }
                }
                Step::DeleteParent { device } => {
                    let d = &mut devices[device % ndev];
                    if d.store.get_session(&parent).is_ok() {
                        d.store.delete_session(&parent).unwrap();
                    }
                }
                Step::Publish { device, n } => stream.publish(&mut devices[device % ndev], n),
                Step::Consume { device, n } => stream.consume(&mut devices[device % ndev], n),
            }
        }
        for _ in 0..3 {
            for d in devices.iter_mut() {
                stream.publish(d, usize::MAX);
            }
            for d in devices.iter_mut() {
                stream.consume(d, usize::MAX);
            }
        }
        check(&devices, &saw)?;
    }
}

/// The case that showed it: a fork whose id starts with a letter a–f keeps a copy of its deleted
/// parent's turn; a turn another device wrote after that turn, in the fork, arrives after the fork
/// went on. It must open a conflict fork there, not continue the fork's end. Run for every form.
#[test]
fn a_turn_after_a_deleted_parents_turn_opens_a_conflict_fork_whatever_the_forks_id() {
    for form in 0..FIRST.len() {
        let mut devices = laptop_and_phone();
        let mut stream = Stream::default();
        let parent = devices[0].store.create_session(&NewSession::new("work")).unwrap().id;
        devices[0].store.append_turn(&parent, &NewTurn::user("Plan the trip")).unwrap();
        let fork = id_of(form, 1);
        import_fork(&mut devices[0].store, &parent, 1, &fork);
        for _ in 0..2 {
            for d in devices.iter_mut() {
                stream.publish(d, usize::MAX);
                stream.consume(d, usize::MAX);
            }
        }
        // Offline: the laptop deletes the parent (the fork keeps a copy of its turn) and goes on in
        // the fork; the phone answers in the fork after the same turn.
        devices[0].store.delete_session(&parent).unwrap();
        devices[0].store.append_turn(&fork, &NewTurn::user("laptop: by train")).unwrap();
        devices[1].store.append_turn(&fork, &NewTurn::user("phone: by bike")).unwrap();
        stream.publish(&mut devices[0], usize::MAX);
        stream.publish(&mut devices[1], usize::MAX);
        // The phone's next request would have held its own turn; the laptop's takes its place.
        assemble_checked(&devices[1], &fork);
        for d in devices.iter_mut() {
            stream.consume(d, usize::MAX);
        }
        for d in &devices {
            assemble_checked(d, &fork);
            assert_eq!(texts(d, &fork), ["Plan the trip", "laptop: by train"], "fork id {fork}");
            let conflict = sessions(d).into_iter().find(|s| *s != fork).expect("a conflict fork");
            assert_eq!(texts(d, &conflict), ["Plan the trip", "phone: by bike"], "fork id {fork}");
        }
        let first = devices[0].store.export_jsonl(None).unwrap();
        assert_eq!(devices[1].store.export_jsonl(None).unwrap(), first, "fork id {fork}");
    }
}

/// The phone's next request, assembled while its own reply was the newest turn, kept that turn;
/// the laptop's turn after the same one arrives first in the stream and takes its place (the phone's
/// goes to a conflict fork): the request after that holds the laptop's turn, not the phone's.
#[test]
fn a_turn_placed_before_ours_by_sync_replaces_it_in_the_next_request() {
    let mut devices = laptop_and_phone();
    let mut stream = Stream::default();
    let s = devices[0].store.create_session(&NewSession::new("work")).unwrap().id;
    devices[0].store.append_turn(&s, &NewTurn::user("Plan the trip")).unwrap();
    stream.publish(&mut devices[0], usize::MAX);
    stream.consume(&mut devices[1], usize::MAX);
    devices[0].store.append_turn(&s, &NewTurn::user("laptop: by train")).unwrap();
    devices[1].store.append_turn(&s, &NewTurn::user("phone: by bike")).unwrap();
    assemble_checked(&devices[1], &s);
    stream.publish(&mut devices[0], usize::MAX);
    stream.publish(&mut devices[1], usize::MAX);
    stream.consume(&mut devices[1], usize::MAX);
    assert_eq!(texts(&devices[1], &s), ["Plan the trip", "laptop: by train"]);
    assemble_checked(&devices[1], &s);
}

/// A lift (this device's pending changes taken out while others' are applied) removes only the
/// sessions sync made that *it* emptied: a conflict fork or recovered session of another space —
/// here a team space whose stream is not being applied — is left as it is, even when it holds no
/// turn of its own at that moment.
#[test]
fn applying_one_space_leaves_the_sessions_sync_made_in_another_alone() {
    use cowork_core::{SyncScope, WorkspaceSettings};
    let mut laptop = Device { store: Store::open_in_memory().unwrap(), read: 0 };
    laptop.store.enable_sync("Laptop").unwrap();
    let mut phone = Device { store: Store::open_in_memory().unwrap(), read: 0 };
    phone.store.enable_sync("Phone").unwrap();
    // A session of the team space "acme" that sync made (a conflict fork), with no turn of its own.
    let team = WorkspaceSettings { sync: SyncScope::Team("acme".into()), ..WorkspaceSettings::unset("acme") };
    laptop.store.set_workspace_settings(&team).unwrap();
    let made = laptop.store.create_session(&NewSession::new("acme")).unwrap().id;
    laptop
        .store
        .connection()
        .execute("INSERT INTO sync_forks (session_id, stands_for, first_gid) VALUES (?1, 'elsewhere', 'g')", [&made])
        .unwrap();
    // The personal space: the laptop has a turn the stream has not ordered yet when the phone's
    // change arrives, so its pending changes are lifted and placed again.
    let mut stream = Stream::default();
    let s = phone.store.create_session(&NewSession::new("home")).unwrap().id;
    phone.store.append_turn(&s, &NewTurn::user("phone: hello")).unwrap();
    let mine = laptop.store.create_session(&NewSession::new("home")).unwrap().id;
    laptop.store.append_turn(&mine, &NewTurn::user("laptop: unsent")).unwrap();
    stream.publish(&mut phone, usize::MAX);
    stream.consume(&mut laptop, usize::MAX);
    assert_eq!(texts(&laptop, &s), ["phone: hello"]);
    assert_eq!(texts(&laptop, &mine), ["laptop: unsent"], "the pending turn was placed again");
    assert!(laptop.store.get_session(&made).is_ok(), "the team space's session is still there");
}
