//! Live sync by push, natively: a device that follows a space's stream by push — batches as the
//! transport's follower hands them over, one lost on the way (a forced gap), one delivered again
//! after a reconnection — and falls back to fetching from where it has read when a batch does not
//! continue it (`sync::pushed`), ends with the same archive as a device that only fetched: every
//! change once, none skipped. The stream holds what a space's stream holds besides changes (the
//! set-up message, the first chunks of a long change), which move the read past the cursor.
#![cfg(not(target_arch = "wasm32"))]

use cowork_core::store::sync::{pushed, read_message, Pushed, Received};
use cowork_core::store::{NewSession, SessionFilter, Store};
use cowork_core::{NewTurn, Space};
use proptest::prelude::*;

/// A space's stream: at sequence `i + 1`, a change's JSON, or `None` for a message that is not a
/// change by itself (the set-up message, a chunk before a long change's last).
struct Stream(Vec<Option<String>>);

impl Stream {
    /// Messages after `after`, at most `max` changes, and the sequence read up to: `fetch` as the
    /// transport reads.
    fn fetch(&self, after: i64, max: usize) -> (Vec<(i64, Received)>, i64) {
        let mut out = Vec::new();
        let mut read = after;
        for (i, entry) in self.0.iter().enumerate().skip(after as usize) {
            if out.len() == max {
                break;
            }
            read = i as i64 + 1;
            if let Some(body) = entry {
                out.push((read, read_message(body)));
            }
        }
        (out, read)
    }

    fn last(&self) -> i64 {
        self.0.len() as i64
    }
}

/// A batch the follower handed over: the sequence it continues from, its changes, the sequence read to.
struct Batch {
    after: i64,
    messages: Vec<(i64, Received)>,
    last_seq: i64,
}

/// A device's archive and how far it has read the stream (past the cursor over non-changes).
struct Device {
    store: Store,
    read: i64,
    fetches: usize,
}

fn device(name: &str) -> Device {
    let mut store = Store::open_in_memory().unwrap();
    store.enable_sync(name).unwrap();
    Device { store, read: 0, fetches: 0 }
}

impl Device {
    fn position(&self) -> i64 {
        self.store.sync_cursor(&Space::Personal).unwrap().max(self.read)
    }

    fn apply(&mut self, messages: &[(i64, Received)]) {
        if !messages.is_empty() {
            self.store.apply_sync_received(&Space::Personal, messages, &mut |_| Vec::new()).unwrap();
        }
    }

    /// The fetch path: reads from where this device stands to the stream's end, `max` at a time.
    fn fetch_all(&mut self, stream: &Stream, max: usize) {
        while self.position() < stream.last() {
            let (messages, read) = stream.fetch(self.position(), max);
            self.fetches += 1;
            self.apply(&messages);
            self.read = read;
        }
    }

    /// The push path: a batch that continues what was read applies (what a fetch read already
    /// skipped); after a gap the stream is fetched from where this device stands.
    fn take(&mut self, batch: Batch, stream: &Stream) {
        let seqs: Vec<i64> = batch.messages.iter().map(|(seq, _)| *seq).collect();
        match pushed(self.position(), batch.after, &seqs) {
            Pushed::Continues { from } => {
                self.apply(&batch.messages[from..]);
                self.read = self.read.max(batch.last_seq);
            }
            Pushed::Gap => self.fetch_all(stream, 7),
        }
    }
}

/// A stream of `sessions` sessions of `turns` turns each, written on another device, with the set-up
/// message first and a long change's first chunks before every `chunk_every`th change.
fn stream(sessions: usize, turns: usize, chunk_every: usize) -> Stream {
    let mut writer = device("Laptop");
    for s in 0..sessions {
        let id = writer.store.create_session(&NewSession::new("work")).unwrap().id;
        for t in 0..turns {
            writer.store.append_turn(&id, &NewTurn::user(format!("turn {t} of session {s}: the quokka plan"))).unwrap();
        }
        if s % 2 == 1 {
            writer.store.rename_session(&id, &format!("renamed {s}")).unwrap();
        }
    }
    let mut entries = vec![None];
    for (i, m) in writer.store.sync_outgoing(&Space::Personal, usize::MAX).unwrap().iter().enumerate() {
        if i % chunk_every == chunk_every - 1 {
            entries.extend([None, None]);
        }
        entries.push(Some(serde_json::to_string(m).unwrap()));
    }
    Stream(entries)
}

/// The follower's batches: the stream from `start` cut at `cuts` (sequences, ascending).
fn batches(stream: &Stream, start: i64, cuts: &[i64]) -> Vec<Batch> {
    let mut out = Vec::new();
    let mut after = start;
    for &cut in cuts.iter().chain([&stream.last()]) {
        if cut <= after {
            continue;
        }
        let (messages, _) = stream.fetch(after, usize::MAX);
        let messages = messages.into_iter().filter(|(seq, _)| *seq <= cut).collect();
        out.push(Batch { after, messages, last_seq: cut });
        after = cut;
    }
    out
}

#[track_caller]
fn assert_same_archive(a: &Device, b: &Device) {
    let (x, y) = (a.store.export_jsonl(None).unwrap(), b.store.export_jsonl(None).unwrap());
    if x != y {
        let diff: Vec<(&str, &str)> = x.lines().zip(y.lines()).filter(|(p, q)| p != q).take(3).collect();
        panic!("archives differ ({} vs {} lines); first differences: {diff:#?}", x.lines().count(), y.lines().count());
    }
    let (p, q) = (a.store.sync_cursor(&Space::Personal).unwrap(), b.store.sync_cursor(&Space::Personal).unwrap());
    assert_eq!(p, q, "both cursors at the stream's last change");
}

/// How many turns a device has, in every session.
fn turns(d: &Device) -> usize {
    let all = SessionFilter { include_archived: true, limit: 10_000, ..SessionFilter::default() };
    let sessions = d.store.list_sessions(&all).unwrap();
    sessions.iter().map(|s| d.store.get_turns(&s.id, 0, 100_000).unwrap().len()).sum()
}

#[test]
fn a_batch_lost_on_the_way_is_fetched_and_one_delivered_again_applies_once() {
    let stream = stream(4, 5, 6);
    let mut fetched = device("Phone");
    fetched.fetch_all(&stream, 500);
    assert_eq!(turns(&fetched), 20, "the device that fetched has every turn");

    let mut followed = device("Tablet");
    let mut batches = batches(&stream, 0, &[3, 9, 14, 20, 27]).into_iter();
    followed.take(batches.next().unwrap(), &stream);
    followed.take(batches.next().unwrap(), &stream);
    let lost = batches.next().unwrap(); // never handed over: the next batch does not continue the read
    let gap = batches.next().unwrap();
    assert!(gap.after > followed.position(), "the next batch leaves a gap");
    let before = turns(&followed);
    assert_eq!(followed.fetches, 0, "batches that continue the read need no fetch");
    followed.take(gap, &stream);
    assert!(followed.fetches > 0, "the gap was read by fetching");
    assert!(turns(&followed) > before, "what the lost batch held arrived by fetching");
    // A reconnection hands over again what was read: nothing applies twice.
    followed.take(lost, &stream);
    for batch in batches {
        followed.take(batch, &stream);
    }
    assert_eq!(followed.position(), stream.last());
    assert_same_archive(&fetched, &followed);
    assert_eq!(turns(&followed), 20);
}

#[test]
fn applying_the_batch_after_a_gap_as_it_came_would_lose_changes() {
    // What the fallback is for: the batch after a lost one, applied without fetching, moves the
    // cursor past the lost changes for good.
    let stream = stream(2, 4, 5);
    let mut fetched = device("Phone");
    fetched.fetch_all(&stream, 500);
    let mut careless = device("Tablet");
    let mut batches = batches(&stream, 0, &[4, 8]).into_iter();
    careless.apply(&batches.next().unwrap().messages);
    let _lost = batches.next().unwrap();
    careless.apply(&batches.next().unwrap().messages);
    careless.fetch_all(&stream, 500);
    assert!(turns(&careless) < turns(&fetched), "the lost changes never arrive");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any cuts of the stream into batches, any batch lost, any delivered twice: the same archive as
    /// fetching it.
    #[test]
    fn any_push_with_gaps_and_repeats_gives_the_fetched_archive(
        cuts in proptest::collection::btree_set(1i64..40, 0..12),
        lost in proptest::collection::vec(any::<bool>(), 14),
        again in proptest::collection::vec(any::<bool>(), 14),
        chunk_every in 2usize..6,
    ) {
        let stream = stream(3, 4, chunk_every);
        let mut fetched = device("Phone");
        fetched.fetch_all(&stream, 500);
        let mut followed = device("Tablet");
        let cuts: Vec<i64> = cuts.into_iter().filter(|&c| c < stream.last()).collect();
        let mut earlier: Vec<Batch> = Vec::new();
        for (i, batch) in batches(&stream, 0, &cuts).into_iter().enumerate() {
            if again[i % again.len()] {
                if let Some(old) = earlier.pop() {
                    followed.take(old, &stream);
                }
            }
            if lost[i % lost.len()] {
                continue;
            }
            let copy = Batch { after: batch.after, messages: batch.messages.iter().map(|(s, _)| (*s, read_message(stream.0[*s as usize - 1].as_deref().unwrap()))).collect(), last_seq: batch.last_seq };
            earlier.push(copy);
            followed.take(batch, &stream);
        }
        // The last batch lost too: the runner's next round fetches (its follower broke or lagged).
        followed.fetch_all(&stream, 500);
        assert_same_archive(&fetched, &followed);
    }
}
