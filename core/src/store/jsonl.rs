//! The JSON Lines archive format: its header values and one wire type per line kind, converted by
//! hand from the domain types. `export` writes it, `import` reads it.
//!
//! A header line `{"type":"header","format":"cowork-archive","version":3}`, then the `workspace` settings of the
//! exported sessions' workspaces (version 2 on), then per session its
//! `session`, `turn`, `tool_execution`, `task`, `task_event` and `manifest` lines (a fork's parent
//! always comes before it), then an `end` line with counts, so a truncated file is detected.
//!
//! Version 3 adds attachments: a `turn` line lists its `attachments` (name, type, size, pixel size,
//! SHA-256), and each content is one `blob` line (`sha256`, `size`, `data` in base64) before the first
//! turn that carries it, so a content several turns share is written once. Versions 1 and 2 still
//! import (they have neither).

use crate::{
    ContextManifest, Role, Session, TaskEvent, TaskRecord, ToolCall, ToolExecution, Turn, TurnStatus, WorkspaceSettings,
};
use serde::{Deserialize, Serialize};

/// Whether `bytes` start like a Cowork JSON Lines export (its header line, `"format":"cowork-archive"`),
/// as opposed to another tool's export. Reads the first line only.
pub fn is_cowork_archive(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(bytes);
    let first = bytes.split(|b| *b == b'\n').find(|l| !l.trim_ascii().is_empty()).unwrap_or_default();
    // Read as text (`from_str`): the worker's other JSON is text, so no second copy of the parser.
    let first = std::str::from_utf8(first).unwrap_or_default();
    matches!(
        serde_json::from_str::<serde_json::Value>(first),
        Ok(serde_json::Value::Object(o)) if o.get("type").and_then(|t| t.as_str()) == Some("header")
            && o.get("format").and_then(|f| f.as_str()) == Some(FORMAT_NAME)
    )
}

/// The JSONL format version this build writes and reads.
pub const FORMAT_VERSION: i64 = 3;
/// The oldest JSONL format version this build still reads (version 1 had no `workspace` lines).
pub(super) const OLDEST_FORMAT_VERSION: i64 = 1;
pub(super) const FORMAT_NAME: &str = "cowork-archive";

/// One line of the JSONL format (the wire type; converted by hand from the domain types). Written
/// with its `type` first; read by [`Line::parse`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Line {
    Header {
        format: String,
        version: i64,
    },
    /// Version 2 on: the settings of a workspace the file's sessions belong to, after the header.
    Workspace(WorkspaceSettings),
    Session(Session),
    Blob(BlobLine),
    Turn(TurnLine),
    ToolExecution(ToolExecution),
    Task(TaskRecord),
    TaskEvent(TaskEvent),
    Manifest(ContextManifest),
    End {
        sessions: usize,
        turns: usize,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TurnLine {
    pub session_id: String,
    pub turn_number: i64,
    pub role: Role,
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    pub token_count: i64,
    pub status: TurnStatus,
    pub created_at: i64,
    pub metadata: serde_json::Value,
    /// The turn's attachments, without their bytes (those are `blob` lines). Format 3 on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<crate::Attachment>,
}

/// One attachment content, once per file: its hash, its size and its bytes in standard base64.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BlobLine {
    pub sha256: String,
    pub size: i64,
    pub data: String,
}

impl From<Turn> for TurnLine {
    fn from(t: Turn) -> TurnLine {
        TurnLine {
            session_id: t.session_id,
            turn_number: t.turn_number,
            role: t.role,
            content: t.content,
            tool_calls: t.tool_calls,
            tool_call_id: t.tool_call_id,
            tool_name: t.tool_name,
            token_count: t.token_count,
            status: t.status,
            created_at: t.created_at,
            metadata: t.metadata,
            attachments: t.attachments,
        }
    }
}

/// The fields of a `header` line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HeaderFields {
    format: String,
    version: i64,
}

/// The fields of an `end` line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EndFields {
    sessions: usize,
    turns: usize,
}

impl Line {
    /// Reads one line: its `type` names the kind, and the other fields are that kind's, unknown ones
    /// refused. Read through a JSON value rather than serde's internally tagged enum, which buffers
    /// each line and costs the storage worker's wasm tens of kilobytes for the same result.
    pub(super) fn parse(raw: &str) -> serde_json::Result<Line> {
        use serde::de::Error as _;
        use serde_json::{from_value, Value};
        let mut fields: serde_json::Map<String, Value> = serde_json::from_str(raw)?;
        let kind = match fields.remove("type") {
            Some(Value::String(kind)) => kind,
            Some(_) => return Err(serde_json::Error::custom("`type` is not a string")),
            None => return Err(serde_json::Error::missing_field("type")),
        };
        let value = Value::Object(fields);
        Ok(match kind.as_str() {
            "header" => {
                let HeaderFields { format, version } = from_value(value)?;
                Line::Header { format, version }
            }
            "workspace" => Line::Workspace(from_value(value)?),
            "session" => Line::Session(from_value(value)?),
            "blob" => Line::Blob(from_value(value)?),
            "turn" => Line::Turn(from_value(value)?),
            "tool_execution" => Line::ToolExecution(from_value(value)?),
            "task" => Line::Task(from_value(value)?),
            "task_event" => Line::TaskEvent(from_value(value)?),
            "manifest" => Line::Manifest(from_value(value)?),
            "end" => {
                let EndFields { sessions, turns } = from_value(value)?;
                Line::End { sessions, turns }
            }
            other => return Err(serde_json::Error::unknown_variant(other, LINE_KINDS)),
        })
    }
}

/// The line kinds, as `type` names them.
const LINE_KINDS: &[&str] =
    &["header", "workspace", "session", "blob", "turn", "tool_execution", "task", "task_event", "manifest", "end"];

pub(super) fn line_json(line: &Line) -> String {
    // Serialising plain data with string keys cannot fail.
    serde_json::to_string(line).expect("export lines are plain data")
}
