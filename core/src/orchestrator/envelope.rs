//! Loom's event envelope: which of its two streams an SSE event came from, the event's own type and
//! data, and the `sequence` / `event_id` that identify it across reconnects.
//!
//! `GET /tasks/{id}/stream` names each event by its type (`event: subtask_started`) and sends its data
//! flat: `{task_id, …payload, run_id, sequence, event_id, correlation_id, schema_version,
//! source_component, timestamp}`. `GET /runs/{id}/stream` sends every event as `event: run_event` with
//! `id: <sequence>` and wraps it: `{task_id, run_id, event_id, sequence, event_type, …, data: {…payload},
//! terminal, streaming}`. Both become a [`ReceivedEvent`] carrying the payload as the tasks stream has it,
//! so the archive holds one shape whichever stream delivered it.

use serde_json::Value;

use super::decode::{decode_event, decode_plain_sse_event, LoomEvent};
use crate::sse::SseEvent;

/// One event as received, ready to be archived (type and data) and folded (`event`).
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedEvent {
    /// The event's type (`subtask_started` …), as archived.
    pub event_type: String,
    /// The event's payload as JSON text (a `run_event`'s inner `data`), as archived.
    pub data: String,
    /// Loom's per-task `sequence` (from the payload, else a numeric `id:` line); `None` when absent or 0.
    pub sequence: Option<u64>,
    /// Loom's `event_id`, when given.
    pub event_id: Option<String>,
    /// What it means.
    pub event: LoomEvent,
}

impl ReceivedEvent {
    /// What identifies the event across reconnects and re-attachments (`seq:N`, else `id:…`); `None` for
    /// events that carry neither (each such event counts as new).
    pub fn key(&self) -> Option<String> {
        event_key(self.sequence, self.event_id.as_deref())
    }
}

/// The identity of an archived event (its type is not needed): `seq:N`, else `id:…`, from its data.
pub fn archived_event_key(data: &str) -> Option<String> {
    let v: Value = serde_json::from_str(data).unwrap_or(Value::Null);
    event_key(sequence(&v), event_id(&v).as_deref())
}

fn event_key(sequence: Option<u64>, event_id: Option<&str>) -> Option<String> {
    match (sequence, event_id) {
        (Some(n), _) => Some(format!("seq:{n}")),
        (None, Some(id)) => Some(format!("id:{id}")),
        (None, None) => None,
    }
}

/// Reads one SSE event of either stream (see the module docs); never fails.
pub fn receive_sse_event(ev: &SseEvent) -> ReceivedEvent {
    if ev.event.as_deref().map(str::trim) == Some("run_event") {
        let payload: Value = serde_json::from_str(&ev.data).unwrap_or(Value::Null);
        let event_type = payload.get("event_type").and_then(Value::as_str).unwrap_or("").trim().to_string();
        // `run_snapshot` and the like carry their fields at the top level.
        let inner = match payload.get("data") {
            Some(inner @ Value::Object(_)) => inner.clone(),
            _ => payload.clone(),
        };
        let data = inner.to_string();
        let event_type = if event_type.is_empty() { "run_event".to_string() } else { event_type };
        return ReceivedEvent {
            event: decode_event(&event_type, &data),
            sequence: sequence(&payload).or_else(|| sequence(&inner)).or_else(|| id_sequence(ev)),
            event_id: event_id(&payload).or_else(|| event_id(&inner)),
            event_type,
            data,
        };
    }
    let event = decode_plain_sse_event(ev);
    let v: Value = serde_json::from_str(&ev.data).unwrap_or(Value::Null);
    ReceivedEvent {
        event_type: event.event_type().to_string(),
        data: ev.data.clone(),
        sequence: sequence(&v).or_else(|| id_sequence(ev)),
        event_id: event_id(&v),
        event,
    }
}

fn sequence(v: &Value) -> Option<u64> {
    match v.get("sequence")? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|n| *n > 0)
}

fn id_sequence(ev: &SseEvent) -> Option<u64> {
    ev.id.as_deref().and_then(|id| id.trim().trim_start_matches("seq:").parse().ok()).filter(|n: &u64| *n > 0)
}

fn event_id(v: &Value) -> Option<String> {
    v.get("event_id").and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

/// Decodes one SSE event of either stream (see [`receive_sse_event`] for Loom's `run_event`
/// envelope). Without an `event:` name, the data's `event_type` (or `type`) field names it.
pub fn decode_sse_event(ev: &SseEvent) -> LoomEvent {
    receive_sse_event(ev).event
}
