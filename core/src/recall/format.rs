//! Recall's compact text: turn lines, call signatures, head + tail shortening, and fitting a list of
//! entries under [`RECALL_TOKEN_CAP`](super::RECALL_TOKEN_CAP) (shorter texts first, then fewer entries).

use serde_json::Value;

use super::RECALL_TOKEN_CAP;
use crate::state::thousands;
use crate::tokens::estimate_tokens;
use crate::{Role, Turn, TurnStatus};

/// How much of each text an entry shows.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub(super) tool: Option<usize>,
    pub(super) other: Option<usize>,
}

/// Tried in order until the output fits: whole, then tool outputs shortened, then everything shortened.
pub(super) const LEVELS: [Limits; 4] = [
    Limits { tool: None, other: None },
    Limits { tool: Some(1_500), other: None },
    Limits { tool: Some(600), other: Some(1_500) },
    Limits { tool: Some(300), other: Some(300) },
];

fn fits(text: &str) -> bool {
    estimate_tokens(text) <= RECALL_TOKEN_CAP
}

/// Renders `header` + entries + footer at the first level that fits; then leaves out entries (the one
/// `drop_next` picks each time) and says so with `dropped_note(count)`.
pub(super) fn fit_entries<E>(
    header: &str,
    separator: &str,
    mut entries: Vec<E>,
    render: impl Fn(&E, Limits) -> String,
    drop_next: impl Fn(&[E]) -> usize,
    dropped_note: impl Fn(&[E], &[E]) -> String,
) -> String {
    let join = |entries: &[E], limits: Limits| -> String {
        let body: Vec<String> = entries.iter().map(|e| render(e, limits)).collect();
        format!("{header}\n\n{}", body.join(separator))
    };
    for limits in LEVELS {
        let text = join(&entries, limits);
        if fits(&text) {
            return text;
        }
    }
    let tightest = LEVELS[LEVELS.len() - 1];
    let mut dropped = Vec::new();
    while entries.len() > 1 {
        let i = drop_next(&entries);
        dropped.push(entries.remove(i));
        let text = format!("{}\n\n{}", join(&entries, tightest), dropped_note(&dropped, &entries));
        if fits(&text) {
            return text;
        }
    }
    format!("{}\n\n{}", join(&entries, tightest), dropped_note(&dropped, &entries))
}

/// Last resort: cut any text to the cap (only reachable with extreme headers).
pub(super) fn cap_text(text: String) -> String {
    if fits(&text) {
        return text;
    }
    let keep = (RECALL_TOKEN_CAP as usize * 4).saturating_sub(120);
    let cut: String = text.chars().take(keep).collect();
    format!("{cut}\n[… output cut at {RECALL_TOKEN_CAP} tokens; ask for less (smaller range or limit)]")
}

/// Where to read a turn's full text: `range 212-212`, plus the session for another session's turn.
pub(super) fn range_ref(start: i64, end: i64, other_session: Option<&str>) -> String {
    match other_session {
        Some(id) => format!("range {start}-{end} session_id={id}"),
        None => format!("range {start}-{end}"),
    }
}

/// `text` shortened to about `limit` characters as head + tail around a marker.
pub(super) fn shorten(text: &str, limit: Option<usize>, reference: &str) -> String {
    let Some(limit) = limit else { return text.to_string() };
    let count = text.chars().count();
    if count <= limit {
        return text.to_string();
    }
    let head = limit * 2 / 3;
    let tail = limit - head;
    let head_text: String = text.chars().take(head).collect();
    let tail_text: String = text.chars().skip(count - tail).collect();
    format!(
        "{head_text}\n[… {} chars omitted; full text: {reference}]\n{tail_text}",
        thousands((count - head - tail) as i64)
    )
}

/// More lines of a message indented by two spaces (empty lines stay empty).
pub(super) fn indent(text: &str) -> String {
    let mut lines = text.split('\n');
    let mut out = lines.next().unwrap_or("").to_string();
    for line in lines {
        out.push('\n');
        if !line.is_empty() {
            out.push_str("  ");
            out.push_str(line);
        }
    }
    out
}

/// Argument keys shown first in a call, in this order; the rest follow alphabetically.
const LEADING_KEYS: &[&str] = &["action", "path", "file_path", "command", "cmd", "query", "goal", "tool_name"];

/// `name(key="value", n=3)` from a call's JSON arguments, each value at most `value_limit` characters.
pub(super) fn call_signature(name: &str, arguments: &str, value_limit: Option<usize>) -> String {
    let cut = |s: String| match value_limit {
        Some(limit) if s.chars().count() > limit => {
            let mut t: String = s.chars().take(limit).collect();
            t.push('…');
            t
        }
        _ => s,
    };
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            crate::order::sort_by_key(&mut entries, |(k, _)| {
                (LEADING_KEYS.iter().position(|l| l == *k).unwrap_or(LEADING_KEYS.len()), *k)
            });
            let parts: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| {
                    let shown = match v {
                        Value::String(s) => {
                            format!("\"{}\"", cut(s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")))
                        }
                        other => cut(other.to_string()),
                    };
                    format!("{k}={shown}")
                })
                .collect();
            format!("{name}({})", parts.join(", "))
        }
        Ok(Value::Null) | Err(_) if arguments.trim().is_empty() => format!("{name}()"),
        _ => format!("{name}({})", cut(arguments.to_string())),
    }
}

fn turn_label(turn: &Turn) -> String {
    let base = match turn.role {
        Role::Tool => format!("tool:{}", turn.tool_name.as_deref().unwrap_or("?")),
        role => role.to_string(),
    };
    match turn.status {
        TurnStatus::Complete => base,
        TurnStatus::Interrupted => format!("{base} (interrupted)"),
        TurnStatus::Error => format!("{base} (error)"),
    }
}

/// One turn as compact lines, its texts shortened to `limits`.
pub(super) fn format_turn(turn: &Turn, limits: Limits, other_session: Option<&str>) -> String {
    let n = turn.turn_number;
    let reference = range_ref(n, n, other_session);
    let limit = if turn.role == Role::Tool { limits.tool } else { limits.other };
    let mut lines = Vec::new();
    if !turn.content.is_empty() || turn.tool_calls.is_empty() {
        lines.push(format!("[Turn {n}] {}: {}", turn_label(turn), indent(&shorten(&turn.content, limit, &reference))));
    }
    let arg_limit = limits.other.map(|_| 200).or(limits.tool.map(|_| 400));
    for call in &turn.tool_calls {
        lines.push(format!(
            "[Turn {n}] assistant → {}",
            indent(&call_signature(&call.name, &call.arguments, arg_limit))
        ));
    }
    lines.join("\n")
}
