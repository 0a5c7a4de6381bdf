//! Joining a file's back-to-back writes into one, for the browser's storage (`opfs_join.rs`).
//!
//! SQLite writes a commit into the write-ahead log one frame at a time: a 24-byte header and a page,
//! two writes per 4 KB page, so a 1 MB attachment is about 512 writes before the one flush. On OPFS
//! each write is a call out of wasm into the browser, and those calls, not the bytes, were most of an
//! attachment's append (BENCHMARKS.md, issue #34). A [`Joiner`] keeps writes that continue one another
//! in memory and hands them out as one [`Run`] when the file must see them: before a write elsewhere in
//! the file, a read, a flush, a size, a truncate, a close, or when the run would pass its cap.
//!
//! SQLite assumes nothing is on disk before it flushes a file, so holding writes until then changes
//! no guarantee: what a commit wrote is in the file before its flush, in the order it was written.

/// Bytes to write at one offset of the file.
#[derive(Debug, PartialEq, Eq)]
pub struct Run<'a> {
    pub offset: u64,
    pub bytes: &'a [u8],
}

/// Writes held back for one file.
#[derive(Debug)]
pub struct Joiner {
    start: u64,
    bytes: Vec<u8>,
    cap: usize,
}

impl Joiner {
    /// A joiner whose runs are at most `cap` bytes (unless one write alone is longer).
    pub fn new(cap: usize) -> Joiner {
        Joiner { start: 0, bytes: Vec::new(), cap }
    }

    /// Whether `len` bytes at `offset` can join the held run: they continue it and it stays within the
    /// cap. When not, [`Joiner::pending`] must be written and [`Joiner::clear`]ed first.
    pub fn joins(&self, offset: u64, len: usize) -> bool {
        self.bytes.is_empty() || (offset == self.end() && self.bytes.len() + len <= self.cap)
    }

    /// Holds `data`, written at `offset`. Call only when [`Joiner::joins`] says it does.
    pub fn hold(&mut self, offset: u64, data: &[u8]) {
        debug_assert!(self.joins(offset, data.len()));
        if self.bytes.is_empty() {
            self.start = offset;
        }
        self.bytes.extend_from_slice(data);
    }

    /// What the file has not been given yet, if anything.
    pub fn pending(&self) -> Option<Run<'_>> {
        (!self.bytes.is_empty()).then(|| Run { offset: self.start, bytes: &self.bytes })
    }

    /// Forgets the held run once it is written (or failed to be: SQLite then sees the error and
    /// writes again what it needs). Keeps the buffer for the next commit, up to the cap.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.bytes.shrink_to(self.cap);
    }

    fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The browser's cap (`opfs.rs`).
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
    }
}
