//! The incremental SSE parser (`cowork_core::sse`): never panics, and however a body is cut into
//! chunks, the events, the retry time and the truncation count are those of the body fed whole (and
//! those of the body fed one byte at a time). Lines and event data never exceed the cap.
//!
//! Input layout: byte 0 is the number of cut points (mod 16), byte 1 the cap on lines and event data
//! (0 = the default 16 MiB, otherwise that many bytes, so truncation gets exercised too), then one
//! little-endian `u16` per cut point, then the stream itself.
#![no_main]

use cowork_core::sse::{SseEvent, SseParser};
use libfuzzer_sys::fuzz_target;

/// What a parser produced from one way of feeding the stream.
#[derive(Debug, PartialEq)]
struct Outcome {
    events: Vec<SseEvent>,
    retry_ms: Option<u64>,
    truncations: usize,
}

fn parser(cap: u8) -> SseParser {
    match cap {
        0 => SseParser::new(),
        n => SseParser::with_max_bytes(usize::from(n)),
    }
}

fn feed<'a>(cap: u8, chunks: impl IntoIterator<Item = &'a [u8]>) -> Outcome {
    let mut p = parser(cap);
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(p.push(chunk));
    }
    events.extend(p.finish());
    Outcome { events, retry_ms: p.retry_ms(), truncations: p.truncations() }
}

fuzz_target!(|data: &[u8]| {
    let [n_cuts, cap, rest @ ..] = data else { return };
    let n_cuts = usize::from(n_cuts % 16);
    if rest.len() < 2 * n_cuts {
        return;
    }
    let (cut_bytes, stream) = rest.split_at(2 * n_cuts);
    let mut cuts: Vec<usize> =
        cut_bytes.chunks_exact(2).map(|c| usize::from(u16::from_le_bytes([c[0], c[1]])) % (stream.len() + 1)).collect();
    cuts.sort_unstable();

    let whole = feed(*cap, [stream]);

    let mut chunks = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for &cut in &cuts {
        chunks.push(&stream[start..cut]);
        start = cut;
    }
    chunks.push(&stream[start..]);
    let split = feed(*cap, chunks);
    assert_eq!(whole, split, "cut at {cuts:?}: the events differ from feeding the stream whole");

    let bytewise = feed(*cap, stream.chunks(1));
    assert_eq!(whole, bytewise, "one byte at a time: the events differ from feeding the stream whole");

    if *cap != 0 {
        let cap = usize::from(*cap);
        for e in &whole.events {
            assert!(e.data.len() <= cap, "event data of {} bytes exceeds the cap {cap}: {e:?}", e.data.len());
            assert!(e.event.as_ref().is_none_or(|t| t.len() <= 3 * cap), "event type exceeds the cap: {e:?}");
        }
    }
});
