//! The joiner's tests: a commit's frames become one write, and whatever the writes and reads, the
//! file and what reads see are what the writes made them.

use super::*;
use proptest::prelude::*;

/// A 4 MB cap, what the layer held in front of the OPFS pool.
const OPFS_CAP: usize = 4 << 20;

/// A file in memory: what the bytes are after the writes.
fn put(file: &mut Vec<u8>, offset: u64, bytes: &[u8]) {
    let (start, end) = (offset as usize, offset as usize + bytes.len());
    if file.len() < end {
        file.resize(end, 0);
    }
    file[start..end].copy_from_slice(bytes);
}

/// Writes through a joiner the way the VFS does; returns the file and how many writes reached it.
fn through_joiner(writes: &[(u64, Vec<u8>)]) -> (Vec<u8>, usize) {
    let (mut file, mut joiner, mut count) = (Vec::new(), Joiner::new(OPFS_CAP), 0);
    for (offset, bytes) in writes {
        if !joiner.joins(*offset, bytes.len()) {
            let run = joiner.pending().expect("a run that does not join is a held one");
            put(&mut file, run.offset, run.bytes);
            count += 1;
            joiner.clear();
        }
        joiner.hold(*offset, bytes);
    }
    if let Some(run) = joiner.pending() {
        put(&mut file, run.offset, run.bytes);
        count += 1;
    }
    (file, count)
}

/// A WAL commit: a 24-byte frame header then a 4 KB page, `pages` times, after the 32-byte header.
fn frames(pages: usize) -> Vec<(u64, Vec<u8>)> {
    let mut writes = vec![(0, vec![0xAA; 32])];
    for page in 0..pages {
        let at = 32 + page as u64 * (24 + 4096);
        writes.push((at, vec![page as u8; 24]));
        writes.push((at + 24, vec![!(page as u8); 4096]));
    }
    writes
}

#[test]
fn a_commits_frames_reach_the_file_as_one_write() {
    let writes = frames(256);
    let (file, count) = through_joiner(&writes);
    assert_eq!(count, 1, "a 1 MB commit of 513 writes is one write");
    let mut direct = Vec::new();
    writes.iter().for_each(|(o, b)| put(&mut direct, *o, b));
    assert_eq!(file, direct);
}

#[test]
fn a_run_longer_than_the_cap_is_written_in_parts() {
    let pages = OPFS_CAP / 4096 * 2; // about twice the cap
    let (_, count) = through_joiner(&frames(pages));
    assert!((2..=3).contains(&count), "{count} writes for {pages} pages");
}

#[test]
fn nothing_is_pending_after_clear() {
    let mut joiner = Joiner::new(OPFS_CAP);
    joiner.hold(4096, b"page");
    assert_eq!(joiner.pending(), Some(Run { offset: 4096, bytes: b"page" }));
    assert!(!joiner.joins(0, 4), "a write before the run does not join it");
    assert!(!joiner.joins(4096, 4), "nor does one over it");
    assert!(joiner.joins(4100, 4), "one that continues it does");
    joiner.clear();
    assert_eq!(joiner.pending(), None);
    assert!(joiner.joins(0, 4), "an empty joiner takes a write anywhere");
}

proptest! {
    /// Whatever the writes (back to back, overlapping, rewriting, far apart), the file ends up
    /// with the same bytes as if each had been written at once.
    #[test]
    fn the_file_is_what_the_writes_made_it(
        writes in proptest::collection::vec((0u64..3, 0u64..20_000, 1usize..5_000, any::<u8>()), 1..60)
    ) {
        let mut end = 0u64;
        let writes: Vec<(u64, Vec<u8>)> = writes
            .into_iter()
            .map(|(kind, at, len, byte)| {
                // Mostly continuing the last write, as SQLite's frames do; else anywhere.
                let offset = if kind == 0 { at } else { end };
                end = offset + len as u64;
                (offset, vec![byte; len])
            })
            .collect();
        let mut direct = Vec::new();
        writes.iter().for_each(|(o, b)| put(&mut direct, *o, b));
        let (file, count) = through_joiner(&writes);
        prop_assert_eq!(file, direct);
        prop_assert!(count <= writes.len());
    }

    /// A read between the writes sees what they wrote, held or not: the file's bytes with the held
    /// run laid over them, and the size is the larger of the file's and the run's end.
    #[test]
    fn reads_see_held_writes(
        writes in proptest::collection::vec((0u64..3, 0u64..20_000, 1usize..5_000, any::<u8>()), 1..40),
        reads in proptest::collection::vec((0u64..30_000, 1usize..9_000), 1..40),
    ) {
        let (mut file, mut direct, mut joiner, mut end) = (Vec::new(), Vec::new(), Joiner::new(OPFS_CAP), 0u64);
        for ((kind, at, len, byte), (read_at, read_len)) in writes.into_iter().zip(reads) {
            let offset = if kind == 0 { at } else { end };
            end = offset + len as u64;
            let bytes = vec![byte; len];
            put(&mut direct, offset, &bytes);
            if !joiner.joins(offset, len) {
                let run = joiner.pending().unwrap();
                put(&mut file, run.offset, run.bytes);
                joiner.clear();
            }
            joiner.hold(offset, &bytes);
            let size = (file.len() as u64).max(joiner.end());
            prop_assert_eq!(size, direct.len() as u64);
            let mut buf = vec![0u8; read_len];
            let on_file = file.len().saturating_sub(read_at as usize).min(read_len);
            if on_file > 0 {
                buf[..on_file].copy_from_slice(&file[read_at as usize..read_at as usize + on_file]);
            }
            joiner.read_into(read_at, &mut buf);
            let mut want = vec![0u8; read_len];
            let in_direct = direct.len().saturating_sub(read_at as usize).min(read_len);
            if in_direct > 0 {
                want[..in_direct].copy_from_slice(&direct[read_at as usize..read_at as usize + in_direct]);
            }
            prop_assert_eq!(buf, want);
        }
    }
}
