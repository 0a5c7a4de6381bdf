//! Following a space by push: whether a batch the transport pushed continues where this device has
//! read the space's stream, so it applies as it is, or whether something between them is missing
//! (a gap: a delivery lost, a follower started again further on) and the stream is read again from
//! where this device stands, by fetching. Data in, data out: the worker's sync runner asks, the
//! archive applies (skipping any sequence at or below its cursor, so nothing applies twice).

/// What to do with a pushed batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// It continues what was read: apply its messages from the `from`th on (those before were read
    /// already, by a fetch that went further than the push).
    Continues {
        /// The index of its first message after what was read.
        from: usize,
    },
    /// Something between what was read and the batch is missing: fetch from what was read.
    Gap,
}

/// Whether a pushed batch continues the stream as read up to `read` (the archive's cursor, or past
/// it over messages that are not changes by themselves: the set-up message, the first chunks of a
/// long one): `after` is the sequence the batch continues from (the push's previous read), `seqs`
/// its messages' sequences, in stream order.
pub fn pushed(read: i64, after: i64, seqs: &[i64]) -> Pushed {
    if after > read {
        return Pushed::Gap;
    }
    Pushed::Continues { from: seqs.partition_point(|&seq| seq <= read) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(read: i64, after: i64, seqs: &[i64], expect: Pushed) {
        assert_eq!(pushed(read, after, seqs), expect, "read to {read}, a batch after {after} holding {seqs:?}");
    }

    #[test]
    fn a_batch_continues_or_leaves_a_gap() {
        check(5, 5, &[6, 7], Pushed::Continues { from: 0 });
        // Past a chunk's first parts: the batch starts further on than its `after`.
        check(5, 5, &[9], Pushed::Continues { from: 0 });
        // A fetch read further than the push had: what it read is not applied again.
        check(7, 5, &[6, 7, 8], Pushed::Continues { from: 2 });
        check(9, 5, &[6, 7], Pushed::Continues { from: 2 });
        // The push continues from beyond what was read: what lies between is missing.
        check(5, 6, &[7], Pushed::Gap);
        check(0, 3, &[], Pushed::Gap);
        check(5, 5, &[], Pushed::Continues { from: 0 });
    }
}
