//! Joining a file's back-to-back writes into one, for the browser's storage (`join_vfs.rs`).
//!
//! SQLite writes a commit into the write-ahead log one frame at a time: a 24-byte header and a page,
//! two writes per 4 KB page, so a 1 MB attachment is about 512 writes before the one flush. On OPFS
//! each write is a call out of wasm into the browser, and those calls, not the bytes, were most of an
//! attachment's append (BENCHMARKS.md, issue #34). A [`Joiner`] keeps writes that continue one another
//! in memory and hands them out as one [`Run`] when the file must have them: before a write elsewhere in
//! the file, a flush, a truncate, a close, or when the run would pass its cap. Reads are served from
//! the run ([`Joiner::read_into`]), so a write that fails is always reported at a write or a flush,
//! where SQLite expects it (a quota error then reads as "full", not as a failed read).
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

    /// Where the held run ends (the file's size as SQLite sees it, when the run goes past the file's).
    pub fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }

    /// Copies what the held run has of the `buf.len()` bytes at `offset` into `buf` (a read serves the
    /// run from memory instead of flushing it: a failed write must be reported where SQLite is writing).
    /// Returns how far into `buf` the run reaches (0: it does not overlap).
    pub fn read_into(&self, offset: u64, buf: &mut [u8]) -> usize {
        let (start, end) = (self.start.max(offset), self.end().min(offset + buf.len() as u64));
        if self.bytes.is_empty() || start >= end {
            return 0;
        }
        let (from, to) = ((start - self.start) as usize, (end - self.start) as usize);
        buf[(start - offset) as usize..(end - offset) as usize].copy_from_slice(&self.bytes[from..to]);
        (end - offset) as usize
    }
}

#[cfg(test)]
mod tests;
