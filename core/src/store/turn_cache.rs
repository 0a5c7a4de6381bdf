//! The turns context assembly read last, kept between two model requests of a session.
//!
//! The agent loop assembles a session's context before every model request, and between two requests
//! the session only grows: the newest turns are new, everything older is what the last assembly read.
//! This cache keeps those turns (as the session shows them, fork ancestry resolved, with their
//! attachments) for the few sessions assembled last, so the next assembly reads only what is new.
//!
//! It is never wrong, by these rules:
//! - **Anything that changes a kept turn bumps `turn_changes.generation`** (schema version 14): a
//!   trigger fires on every update of a turn column a [`Turn`] shows, every deleted turn, every
//!   change to an attachment and every change to a session's fork point. Appending a turn does not:
//!   a new turn gets a number after every kept one. The generation is read before each use; a
//!   different one drops the whole cache. Rolled-back changes roll the bump back with them.
//! - **Except an interrupted turn's**: a reply streams in as an interrupted turn, checkpointed and
//!   then finalised, between every two requests of the agent loop, and bumping for it would empty
//!   the cache each time. So updates of a turn that was interrupted leave the counter alone, and
//!   before each use the kept interrupted turns (usually none: a request is assembled before its
//!   reply is appended) are read again and compared; one that changed drops the session's entry.
//! - **Nothing read inside a transaction is kept** (nor is the cache used there): a turn another
//!   statement of that transaction wrote could still be rolled back.
//! - **A session's entry is one run of turn numbers** `lo..=hi`: every turn the session shows with a
//!   number in the run is in it. A read that would leave a hole starts the entry again.
//!
//! Memory is bounded: at most [`MAX_SESSIONS`] entries, and an entry past [`MAX_BYTES`] forgets its
//! oldest turns.

use crate::{Turn, TurnStatus};
use std::collections::VecDeque;

/// Sessions kept (the ones assembled last).
pub(super) const MAX_SESSIONS: usize = 2;
/// Roughly the bytes of turn text one entry keeps (a 200k-token window is ~0.8 MB of text).
pub(super) const MAX_BYTES: usize = 8 << 20;

#[derive(Default)]
pub(super) struct TurnCache {
    generation: i64,
    /// Most recently used last.
    entries: Vec<Entry>,
}

struct Entry {
    session_id: String,
    /// The run of turn numbers this entry holds completely (`lo > hi`: none).
    lo: i64,
    hi: i64,
    turns: VecDeque<Turn>,
    bytes: usize,
}

/// What a read of `start..=end` still has to fetch from the archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Missing {
    /// Nothing kept touches the range: all of it, which then replaces the session's entry.
    All,
    /// The kept run touches the range: the turns before it and after it (each `None` when none).
    Around { older: Option<(i64, i64)>, newer: Option<(i64, i64)> },
}

fn weight(turn: &Turn) -> usize {
    256 + turn.content.len() + turn.tool_calls.iter().map(|c| c.arguments.len() + c.name.len()).sum::<usize>()
}

impl TurnCache {
    /// Drops everything unless the archive's change counter is still `generation`.
    pub fn check(&mut self, generation: i64) {
        if generation != self.generation {
            self.entries.clear();
            self.generation = generation;
        }
    }

    /// The kept turns of `session_id` that were interrupted when read (a reply streaming in, or one
    /// stopped for good): their changes leave the counter alone, so the caller compares them with the
    /// archive and [`TurnCache::forget`]s the session when one changed.
    pub fn unfinished(&self, session_id: &str) -> Vec<&Turn> {
        let kept = self.entries.iter().find(|e| e.session_id == session_id);
        kept.map_or_else(Vec::new, |e| e.turns.iter().filter(|t| t.status == TurnStatus::Interrupted).collect())
    }

    /// Drops what is kept of `session_id`.
    pub fn forget(&mut self, session_id: &str) {
        self.entries.retain(|e| e.session_id != session_id);
    }

    /// What of `start..=end` (`start <= end`) of `session_id` is not kept.
    pub fn missing(&self, session_id: &str, start: i64, end: i64) -> Missing {
        match self.entries.iter().find(|e| e.session_id == session_id) {
            Some(e) if end >= e.lo - 1 && start <= e.hi + 1 => Missing::Around {
                older: (start < e.lo).then(|| (start, e.lo - 1)),
                newer: (end > e.hi).then(|| (e.hi + 1, end)),
            },
            _ => Missing::All,
        }
    }

    /// Keeps what was fetched for a read of `start..=end` (`fetched`: all of it for [`Missing::All`],
    /// else the older part followed by the newer part, in order) and returns the session's turns
    /// numbered `start..=end`, in order.
    pub fn fill(
        &mut self,
        session_id: &str,
        (start, end): (i64, i64),
        missing: Missing,
        fetched: Vec<Turn>,
    ) -> Vec<Turn> {
        let kept = self.entries.iter().position(|e| e.session_id == session_id).map(|i| self.entries.remove(i));
        let mut entry = match (missing, kept) {
            (Missing::Around { older, newer }, Some(mut e)) => {
                let split = fetched.partition_point(|t| t.turn_number < e.lo);
                let mut fetched = fetched;
                let after = fetched.split_off(split);
                for turn in fetched.into_iter().rev() {
                    e.bytes += weight(&turn);
                    e.turns.push_front(turn);
                }
                for turn in after {
                    e.bytes += weight(&turn);
                    e.turns.push_back(turn);
                }
                e.lo = older.map_or(e.lo, |o| o.0);
                e.hi = newer.map_or(e.hi, |n| n.1);
                e
            }
            _ => Entry {
                session_id: session_id.to_owned(),
                lo: start,
                hi: end,
                bytes: fetched.iter().map(weight).sum(),
                turns: fetched.into(),
            },
        };
        let (a, b) = (
            entry.turns.partition_point(|t| t.turn_number < start),
            entry.turns.partition_point(|t| t.turn_number <= end),
        );
        let out = entry.turns.range(a..b).cloned().collect();
        entry.shrink();
        self.entries.push(entry);
        if self.entries.len() > MAX_SESSIONS {
            self.entries.remove(0);
        }
        out
    }
}

impl Entry {
    /// Forgets the oldest turns while over [`MAX_BYTES`] (the newest one stays).
    fn shrink(&mut self) {
        while self.bytes > MAX_BYTES && self.turns.len() > 1 {
            if let Some(t) = self.turns.pop_front() {
                self.bytes -= weight(&t);
                self.lo = t.turn_number + 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Convo;

    /// Turns `lo..=hi` of a session, each `size` bytes of text.
    fn turns(lo: i64, hi: i64, size: usize) -> Vec<Turn> {
        let mut c = Convo::new();
        for _ in 1..=hi {
            c.user(&"x".repeat(size));
        }
        c.build().into_iter().filter(|t| t.turn_number >= lo).collect()
    }

    fn numbers(turns: &[Turn]) -> Vec<i64> {
        turns.iter().map(|t| t.turn_number).collect()
    }

    /// A cache holding turns `lo..=hi` of session "s".
    fn holding(lo: i64, hi: i64) -> TurnCache {
        let mut c = TurnCache::default();
        let got = c.fill("s", (lo, hi), Missing::All, turns(lo, hi, 10));
        assert_eq!(numbers(&got), (lo..=hi).collect::<Vec<_>>());
        c
    }

    #[test]
    fn a_read_fetches_only_what_is_not_kept() {
        let around = |older, newer| Missing::Around { older, newer };
        let check = |(start, end): (i64, i64), expect: Missing| {
            assert_eq!(holding(5, 10).missing("s", start, end), expect, "reading {start}..={end} with 5..=10 kept");
        };
        check((6, 8), around(None, None));
        check((5, 12), around(None, Some((11, 12))));
        check((11, 12), around(None, Some((11, 12))));
        check((1, 4), around(Some((1, 4)), None));
        check((1, 12), around(Some((1, 4)), Some((11, 12))));
        check((1, 3), Missing::All);
        check((12, 15), Missing::All);
        assert_eq!(holding(5, 10).missing("t", 6, 8), Missing::All, "another session");
    }

    #[test]
    fn what_is_fetched_joins_the_kept_run_and_comes_back_in_order() {
        let mut c = holding(5, 10);
        let m = c.missing("s", 2, 12);
        let mut fetched = turns(2, 4, 10);
        fetched.extend(turns(11, 12, 10));
        assert_eq!(numbers(&c.fill("s", (2, 12), m, fetched)), (2..=12).collect::<Vec<_>>());
        assert_eq!(c.missing("s", 2, 12), Missing::Around { older: None, newer: None });
        // A range apart from the run replaces it.
        assert_eq!(numbers(&c.fill("s", (20, 21), Missing::All, turns(20, 21, 10))), [20, 21]);
        assert_eq!(c.missing("s", 5, 6), Missing::All);
    }

    #[test]
    fn a_changed_archive_or_a_third_session_empties_what_is_kept() {
        let mut c = holding(1, 3);
        c.check(0);
        assert_eq!(c.missing("s", 1, 3), Missing::Around { older: None, newer: None }, "same generation");
        c.check(1);
        assert_eq!(c.missing("s", 1, 3), Missing::All, "a turn changed");
        let mut c = holding(1, 3);
        c.fill("t", (1, 3), Missing::All, turns(1, 3, 10));
        c.fill("u", (1, 3), Missing::All, turns(1, 3, 10));
        assert_eq!(c.missing("s", 1, 3), Missing::All, "the session assembled longest ago is dropped");
        assert_eq!(c.missing("u", 1, 3), Missing::Around { older: None, newer: None });
    }

    #[test]
    fn a_large_session_keeps_only_its_newest_turns_up_to_the_byte_bound() {
        let mut c = TurnCache::default();
        let size = MAX_BYTES / 4;
        let got = c.fill("s", (1, 10), Missing::All, turns(1, 10, size));
        assert_eq!(numbers(&got), (1..=10).collect::<Vec<_>>(), "the read itself gets every turn");
        // Three turns of a quarter of the bound each, plus overhead, fit; the fourth does not.
        assert_eq!(c.missing("s", 8, 10), Missing::Around { older: None, newer: None });
        assert_eq!(c.missing("s", 1, 10), Missing::Around { older: Some((1, 7)), newer: None });
    }
}
