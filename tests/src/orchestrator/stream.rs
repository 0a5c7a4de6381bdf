//! The two event streams, framed as sse-starlette frames them (CRLF line ends, `: ping - <time>` comments).
//!
//! - `GET /tasks/{id}/stream`: events published after the subscription, named by type, data flat, no
//!   `id:` line; closes after a terminal event it delivered, and stays open (pings only) for a task that
//!   had already ended.
//! - `GET /runs/{id}/stream` (`{id}` is the task id, as in Loom): `: open`, then the events after the
//!   cursor — `after_sequence`, or a `Last-Event-ID` of `N` or `seq:N`, whichever is higher — then the live
//!   ones, each as `id: <sequence>` / `event: run_event` with Loom's wrapped payload; closes after a
//!   terminal event.
//!
//! A task's `[[drop-stream]]` closes the first connection (of either kind) after its count of events.

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;

use super::{detail, iso_now, Orchestrator, Published};

/// One event as the tasks stream frames it.
fn task_frame(event: &Published) -> String {
    format!("event: {}\r\ndata: {}\r\n\r\n", event.event_type, event.data)
}

/// One event as the runs stream frames it: Loom's `_run_stream_payload_from_event`.
fn run_frame(event: &Published) -> String {
    let d = &event.data;
    let status = d.get("status").and_then(Value::as_str).map(str::to_lowercase);
    let terminal = event.is_terminal();
    let payload = json!({
        "task_id": d["task_id"], "run_id": d["run_id"], "correlation_id": d["correlation_id"],
        "event_id": d["event_id"], "sequence": event.sequence, "timestamp": d["timestamp"],
        "event_type": event.event_type, "source_component": d["source_component"],
        "schema_version": d["schema_version"], "data": d,
        "status": status, "terminal": terminal, "streaming": !terminal && status.as_deref() != Some("paused"),
    });
    format!("id: {}\r\nevent: run_event\r\ndata: {payload}\r\n\r\n", event.sequence)
}

/// What a stream sends, and when it stops.
struct Feed {
    /// Events to send first (the runs stream's replay).
    replay: Vec<Arc<Published>>,
    live: broadcast::Receiver<Arc<Published>>,
    /// Events at or below this sequence are not sent again.
    cursor: u64,
    /// Frames events for this stream.
    frame: fn(&Published) -> String,
    /// A first comment (the runs stream's `: open`).
    opening: Option<&'static str>,
}

/// `GET /tasks/{id}/stream`: Loom's live stream (see the module docs).
pub(super) async fn task_stream(State(orch): State<Arc<Orchestrator>>, Path(id): Path<String>) -> Response {
    let Some(live) = orch.tasks().get(&id).map(|t| t.events.subscribe()) else {
        return detail(StatusCode::NOT_FOUND, format!("Task not found: {id}"));
    };
    serve(orch, id, Feed { replay: Vec::new(), live, cursor: 0, frame: task_frame, opening: None })
}

/// `GET /runs/{id}/stream?after_sequence=N`: Loom's replaying stream (see the module docs).
pub(super) async fn run_stream(
    State(orch): State<Arc<Orchestrator>>,
    Path(id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let after: u64 = query.get("after_sequence").and_then(|n| n.trim().parse().ok()).unwrap_or(0);
    let last_event_id = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().trim_start_matches("seq:").trim().parse::<u64>().ok())
        .unwrap_or(0);
    let cursor = after.max(last_event_id);
    // Subscribed and read under one lock, so nothing falls between the replay and the live events.
    let feed = orch.tasks().get(&id).map(|t| Feed {
        replay: t.history.iter().filter(|e| e.sequence > cursor).cloned().collect(),
        live: t.events.subscribe(),
        cursor,
        frame: run_frame,
        opening: Some(": open\r\n\r\n"),
    });
    match feed {
        Some(feed) => serve(orch, id, feed),
        None => detail(StatusCode::NOT_FOUND, format!("Run not found: {id}")),
    }
}

/// Streams `feed` with pings, closing after a terminal event, at the stream limit, or where the task's
/// `[[drop-stream]]` says.
fn serve(orch: Arc<Orchestrator>, id: String, feed: Feed) -> Response {
    let (tx, out) = mpsc::channel::<Result<String, std::io::Error>>(1024);
    let timing = orch.timing;
    tokio::spawn(async move {
        let Feed { replay, mut live, mut cursor, frame, opening } = feed;
        let deadline = tokio::time::Instant::now() + timing.stream_limit;
        let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + timing.ping, timing.ping);
        let mut sent = 0usize;
        // Sends one event (unless already sent); `false` when the stream ends with it.
        let mut send = |event: &Published| -> bool {
            if event.sequence <= cursor {
                return true;
            }
            cursor = event.sequence;
            sent += 1;
            let dropped = match orch.tasks().get_mut(&id) {
                Some(t) if t.drop_after.is_some_and(|n| sent >= n) => t.drop_after.take().is_some(),
                _ => false,
            };
            tx.try_send(Ok(frame(event))).is_ok() && !event.is_terminal() && !dropped
        };
        if let Some(opening) = opening {
            if tx.send(Ok(opening.into())).await.is_err() {
                return;
            }
        }
        for event in replay {
            if !send(&event) {
                return;
            }
        }
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(deadline) => return,
                _ = ping.tick() => {
                    if tx.send(Ok(format!(": ping - {}\r\n\r\n", iso_now()))).await.is_err() { return; }
                }
                event = live.recv() => match event {
                    Ok(event) => if !send(&event) { return },
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            }
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream; charset=utf-8")
        .header("cache-control", "no-store")
        .header("x-accel-buffering", "no")
        .body(Body::from_stream(ReceiverStream::new(out)))
        .expect("a valid response")
}
