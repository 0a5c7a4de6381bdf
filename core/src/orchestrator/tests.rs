//! Tests of the orchestrator wire format, by topic; the recorded streams are in
//! `core/tests/data/orchestrator/`.

mod progress;
mod report;
mod wire;

use super::*;
use crate::sse::parse_all;
use expect_test::{expect, Expect};

/// The dev server's stream for a task that completes (keepalives, Loom's SSE framing).
const COMPLETED_STREAM: &str = include_str!("../../tests/data/orchestrator/completed.sse");

/// Loom's own event shapes for a task that fails: ids-only plan, `feedback`, `failed_subtasks`.
const FAILED_STREAM: &str = include_str!("../../tests/data/orchestrator/failed.sse");

fn decode_stream(body: &str) -> Vec<LoomEvent> {
    parse_all(body.as_bytes()).iter().map(decode_sse_event).collect()
}

fn fold(events: &[LoomEvent], task_id: &str, goal: &str) -> TaskProgress {
    let mut progress = TaskProgress::new(task_id, goal);
    for e in events {
        progress.apply(e);
    }
    progress
}

fn check(actual: &str, expect: Expect) {
    expect.assert_eq(actual);
}
