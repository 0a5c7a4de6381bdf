//! `conversation_recall` arguments: the model's JSON checked into a [`Request`], or an error message
//! that says what to change.

use serde_json::Value;

use super::{DEFAULT_LIMIT, MAX_LIMIT};
use crate::Role;

/// A checked `conversation_recall` request.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Request {
    Search { query: String, limit: usize, capped: bool, workspace: bool, roles: Vec<Role> },
    Range { start: i64, end: i64, offset: Option<usize>, session_id: Option<String> },
    ToolCalls { tool_name: String, limit: usize, capped: bool },
    Summary,
}

pub(super) fn parse_request(arguments_json: &str) -> Result<Request, String> {
    const SHAPE: &str = "expected a JSON object such as {\"action\": \"search\", \"query\": \"refresh token\"}";
    let value: Value = serde_json::from_str(arguments_json.trim())
        .map_err(|_| format!("the arguments are not valid JSON; {SHAPE}"))?;
    let Some(args) = value.as_object() else {
        return Err(format!("the arguments must be a JSON object; {SHAPE}"));
    };
    let action = args.get("action").and_then(Value::as_str).map(str::trim).unwrap_or("");
    match action {
        "search" => {
            let query = args.get("query").and_then(Value::as_str).map(str::trim).unwrap_or("");
            if query.is_empty() {
                return Err("search needs a non-empty \"query\" (words, a phrase, an identifier or a path)".into());
            }
            let (limit, capped) = limit_arg(args.get("limit"))?;
            let workspace = match args.get("scope").map(|s| s.as_str().map(str::trim)) {
                None | Some(Some("session")) => false,
                Some(Some("workspace")) => true,
                Some(other) => {
                    return Err(format!(
                        "unknown scope {}; use \"session\" or \"workspace\"",
                        other.map_or_else(|| args["scope"].to_string(), |s| format!("\"{s}\""))
                    ))
                }
            };
            let roles = match args.get("roles") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|r| {
                        r.as_str().and_then(Role::parse).ok_or_else(|| {
                            format!("unknown role {r} in \"roles\"; use user, assistant, tool or system")
                        })
                    })
                    .collect::<Result<_, _>>()?,
                Some(other) => return Err(format!("\"roles\" must be a list such as [\"user\"], not {other}")),
            };
            Ok(Request::Search { query: query.to_string(), limit, capped, workspace, roles })
        }
        "range" => {
            let start = int_arg(args.get("start_turn"), "start_turn")?
                .ok_or("range needs \"start_turn\" (and usually \"end_turn\")")?;
            let end = int_arg(args.get("end_turn"), "end_turn")?.unwrap_or(start);
            if start < 1 {
                return Err(format!("start_turn must be 1 or more (got {start})"));
            }
            if end < start {
                return Err(format!("end_turn ({end}) is before start_turn ({start})"));
            }
            let offset = match int_arg(args.get("offset"), "offset")? {
                None => None,
                Some(o) if o < 0 => return Err(format!("offset must be 0 or more (got {o})")),
                Some(_) if end != start => {
                    return Err("offset pages through one turn: give start_turn = end_turn".into())
                }
                Some(o) => Some(o as usize),
            };
            let session_id = args
                .get("session_id")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string);
            Ok(Request::Range { start, end, offset, session_id })
        }
        "tool_calls" => {
            let tool_name = args.get("tool_name").and_then(Value::as_str).map(str::trim).unwrap_or("");
            if tool_name.is_empty() {
                return Err("tool_calls needs \"tool_name\", e.g. \"read_file\"".into());
            }
            let (limit, capped) = limit_arg(args.get("limit"))?;
            Ok(Request::ToolCalls { tool_name: tool_name.to_string(), limit, capped })
        }
        "summary" => Ok(Request::Summary),
        "" => Err("\"action\" is required: one of search, range, tool_calls, summary".into()),
        other => Err(format!("unknown action \"{other}\"; use one of search, range, tool_calls, summary")),
    }
}

/// An integer argument; numeric strings ("12") are accepted too.
fn int_arg(value: Option<&Value>, name: &str) -> Result<Option<i64>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 1e15).map(|f| f as i64))
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            .map(Some)
            .ok_or_else(|| format!("\"{name}\" must be a whole number, not {v}")),
    }
}

/// `limit` (default 10, 1..=50; larger values are capped) and whether it was capped.
fn limit_arg(value: Option<&Value>) -> Result<(usize, bool), String> {
    match int_arg(value, "limit")? {
        None => Ok((DEFAULT_LIMIT, false)),
        Some(n) if n < 1 => Err(format!("\"limit\" must be between 1 and {MAX_LIMIT} (got {n})")),
        Some(n) if n as u64 > MAX_LIMIT as u64 => Ok((MAX_LIMIT, true)),
        Some(n) => Ok((n as usize, false)),
    }
}
