//! Runs `conversation_recall` calls: checks the model's arguments, reads the archive through a
//! [`RecallSource`], and formats compact text for the model, at most [`RECALL_TOKEN_CAP`] tokens. It always
//! returns text: bad arguments and archive errors come back as "recall error: …" saying what to change.
//!
//! Actions:
//! - `search {query, limit?, scope?, roles?}`: ranked hits (best first), each with the turn before and
//!   after it; the hit's own line is marked with `»`. `limit` is 1..=50 (default 10; larger values are
//!   capped at 50 and the header says so). `scope` is "session" (default) or "workspace"; workspace hits
//!   name their session (title and id) and, for other sessions, how to read them (`range … session_id=…`).
//! - `range {start_turn, end_turn?, offset?, session_id?}`: turns in order. At most [`MAX_RANGE_TURNS`]
//!   turns per call (the rest is offered as the next range). A single turn is shown whole, page by page:
//!   a turn longer than one page ends with "continue with range N-N offset X". `session_id` reads another
//!   session of the same workspace (from a workspace search hit).
//! - `tool_calls {tool_name, limit?}`: past executions of one tool, newest first, with arguments, outcome
//!   and result.
//! - `summary`: the session-state register with counts of turns, tokens, files, decisions and tasks.
//!
//! Keeping under the cap: first long tool outputs are shortened to head + tail, then every long text, each
//! with a marker naming the range that holds the full text; then whole entries are left out: the oldest
//! hits for `search`, the oldest executions for `tool_calls`, the last turns for `range` (a marker gives
//! the range to read next).
//!
//! Turn lines look like `[Turn 12] user: …`, `[Turn 13] assistant → read_file(path="src/auth.py")`,
//! `[Turn 14] tool:read_file: …`; more lines of a message are indented by two spaces.

use serde_json::Value;

use crate::state::{render_yaml, thousands, SessionState};
use crate::tokens::estimate_tokens;
use crate::{Role, SearchHit, SearchQuery, SearchScope, Session, TaskRecord, ToolExecution, Turn, TurnStatus};

/// The output never exceeds this many tokens (by [`estimate_tokens`]).
pub const RECALL_TOKEN_CAP: i64 = 8_000;
/// Hits (`search`) or executions (`tool_calls`) returned when the model gives no `limit`.
pub const DEFAULT_LIMIT: usize = 10;
/// The largest `limit`; larger values are capped to it and the header says so.
pub const MAX_LIMIT: usize = 50;
/// Most turns one `range` call returns.
pub const MAX_RANGE_TURNS: i64 = 200;
/// Characters of one turn shown per `range` page.
pub const RANGE_PAGE_CHARS: usize = 28_000;

/// What recall reads. The store implements it over SQLite.
pub trait RecallSource {
    /// Ranked full-text hits for `query`, best first.
    fn search(&self, query: &SearchQuery) -> crate::Result<Vec<SearchHit>>;
    /// Turns `start..=end` of a session, in order.
    fn turns_range(&self, session_id: &str, start: i64, end: i64) -> crate::Result<Vec<Turn>>;
    /// Executions of one tool, newest first.
    fn tool_executions(&self, session_id: &str, tool_name: &str, limit: usize) -> crate::Result<Vec<ToolExecution>>;
    /// The session `session_id` (its workspace, title, counts and state register).
    fn session(&self, session_id: &str) -> crate::Result<Session>;
    /// The session's delegated tasks, oldest first.
    fn tasks(&self, session_id: &str) -> crate::Result<Vec<TaskRecord>>;
}

/// A checked `conversation_recall` request.
#[derive(Debug, Clone, PartialEq)]
enum Request {
    Search { query: String, limit: usize, capped: bool, workspace: bool, roles: Vec<Role> },
    Range { start: i64, end: i64, offset: Option<usize>, session_id: Option<String> },
    ToolCalls { tool_name: String, limit: usize, capped: bool },
    Summary,
}

/// Runs one `conversation_recall` call for `session_id` with the model's `arguments_json`.
pub fn run_recall(source: &dyn RecallSource, session_id: &str, arguments_json: &str) -> String {
    let result = parse_request(arguments_json).and_then(|request| match request {
        Request::Search { query, limit, capped, workspace, roles } => {
            search(source, session_id, &query, limit, capped, workspace, roles)
        }
        Request::Range { start, end, offset, session_id: other } => {
            range(source, session_id, start, end, offset, other.as_deref())
        }
        Request::ToolCalls { tool_name, limit, capped } => tool_calls(source, session_id, &tool_name, limit, capped),
        Request::Summary => summary(source, session_id),
    });
    let text = result.unwrap_or_else(|message| format!("recall error: {message}"));
    cap_text(text)
}

fn parse_request(arguments_json: &str) -> Result<Request, String> {
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

/// How much of each text an entry shows.
#[derive(Debug, Clone, Copy)]
struct Limits {
    tool: Option<usize>,
    other: Option<usize>,
}

/// Tried in order until the output fits: whole, then tool outputs shortened, then everything shortened.
const LEVELS: [Limits; 4] = [
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
fn fit_entries<E>(
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
fn cap_text(text: String) -> String {
    if fits(&text) {
        return text;
    }
    let keep = (RECALL_TOKEN_CAP as usize * 4).saturating_sub(120);
    let cut: String = text.chars().take(keep).collect();
    format!("{cut}\n[… output cut at {RECALL_TOKEN_CAP} tokens; ask for less (smaller range or limit)]")
}

/// Where to read a turn's full text: `range 212-212`, plus the session for another session's turn.
fn range_ref(start: i64, end: i64, other_session: Option<&str>) -> String {
    match other_session {
        Some(id) => format!("range {start}-{end} session_id={id}"),
        None => format!("range {start}-{end}"),
    }
}

/// `text` shortened to about `limit` characters as head + tail around a marker.
fn shorten(text: &str, limit: Option<usize>, reference: &str) -> String {
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
fn indent(text: &str) -> String {
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
fn call_signature(name: &str, arguments: &str, value_limit: Option<usize>) -> String {
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
            entries.sort_by_key(|(k, _)| (LEADING_KEYS.iter().position(|l| l == k).unwrap_or(LEADING_KEYS.len()), *k));
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
fn format_turn(turn: &Turn, limits: Limits, other_session: Option<&str>) -> String {
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

/// One search hit with its neighbours.
struct HitEntry {
    hit: SearchHit,
    turns: Vec<Turn>,
    /// `Some(id)` when the hit is in another session than the one recalling.
    other_session: Option<String>,
    workspace: bool,
}

fn search(
    source: &dyn RecallSource,
    session_id: &str,
    query: &str,
    limit: usize,
    capped: bool,
    workspace: bool,
    roles: Vec<Role>,
) -> Result<String, String> {
    let scope = if workspace {
        let session = source.session(session_id).map_err(|e| e.to_string())?;
        SearchScope::Workspace { workspace: session.workspace }
    } else {
        SearchScope::Session { session_id: session_id.to_string() }
    };
    let request = SearchQuery { text: query.to_string(), scope, roles, limit, prefix_last: false };
    let mut hits = source.search(&request).map_err(|e| format!("the archive search failed: {e}"))?;
    hits.truncate(limit);
    let where_ = if workspace { "this workspace" } else { "this session" };
    let quoted = serde_json::to_string(query).unwrap_or_default();
    if hits.is_empty() {
        return Ok(format!(
            "No matches for {quoted} in {where_}. Try other or fewer words, part of an identifier or path{}, or range.",
            if workspace { "" } else { ", scope \"workspace\"" }
        ));
    }
    let total = hits.len();
    let entries: Vec<HitEntry> = hits
        .into_iter()
        .map(|hit| {
            let n = hit.turn_number;
            let turns = source
                .turns_range(&hit.session_id, n.saturating_sub(1).max(1), n.saturating_add(1))
                .unwrap_or_default();
            let other_session = (hit.session_id != session_id).then(|| hit.session_id.clone());
            HitEntry { hit, turns, other_session, workspace }
        })
        .collect();
    let header = format!(
        "Search {quoted} in {where_}: {total} hit{}, best first{}. » marks each hit; the turns around it are shown for context.",
        if total == 1 { "" } else { "s" },
        if capped { format!(" (limit capped at {MAX_LIMIT})") } else { String::new() }
    );
    let render = |e: &HitEntry, limits: Limits| -> String {
        let hit = &e.hit;
        let mut out = if e.workspace {
            let title = serde_json::to_string(&hit.session_title).unwrap_or_default();
            let this = if e.other_session.is_none() { ", this session" } else { "" };
            format!("── session {title} ({}{this}), turn {} ──", hit.session_id, hit.turn_number)
        } else {
            format!("── turn {} ──", hit.turn_number)
        };
        if !e.turns.iter().any(|t| t.turn_number == hit.turn_number) {
            // The turn could not be read back: show the search snippet.
            out.push_str(&format!("\n» [Turn {}] {}: {}", hit.turn_number, hit.role, indent(&hit.snippet)));
        }
        for turn in &e.turns {
            let mark = if turn.turn_number == hit.turn_number { "» " } else { "" };
            out.push('\n');
            out.push_str(mark);
            out.push_str(&format_turn(turn, limits, e.other_session.as_deref()));
        }
        out
    };
    let oldest = |entries: &[HitEntry]| {
        entries.iter().enumerate().min_by_key(|(_, e)| (e.hit.created_at, e.hit.turn_number)).map_or(0, |(i, _)| i)
    };
    let note = |dropped: &[HitEntry], _: &[HitEntry]| {
        let turns: Vec<String> = dropped.iter().map(|e| e.hit.turn_number.to_string()).collect();
        format!(
            "[{} older hit{} left out to stay under {} tokens (turns {}); read them with range, or narrow the query]",
            dropped.len(),
            if dropped.len() == 1 { "" } else { "s" },
            thousands(RECALL_TOKEN_CAP),
            turns.join(", ")
        )
    };
    Ok(fit_entries(&header, "\n\n", entries, render, oldest, note))
}

fn range(
    source: &dyn RecallSource,
    session_id: &str,
    start: i64,
    end: i64,
    offset: Option<usize>,
    other: Option<&str>,
) -> Result<String, String> {
    let target = other.unwrap_or(session_id);
    let session = source.session(target).map_err(|e| e.to_string())?;
    let other_session = if target != session_id {
        let mine = source.session(session_id).map_err(|e| e.to_string())?;
        if mine.workspace != session.workspace {
            return Err(format!(
                "session {target} belongs to another workspace; only sessions of this workspace can be read"
            ));
        }
        Some(target)
    } else {
        None
    };
    if start > session.turn_count {
        return Err(format!("this session has {} turns; start_turn {start} is past the end", session.turn_count));
    }
    let end_clamped = end.min(session.turn_count);
    let last = end_clamped.min(start.saturating_add(MAX_RANGE_TURNS - 1));
    let turns = source.turns_range(target, start, last).map_err(|e| format!("reading turns failed: {e}"))?;
    if turns.is_empty() {
        return Ok(format!("No turns {start}..{last} in the archive."));
    }
    if start == last {
        return single_turn_page(&turns[0], offset.unwrap_or(0), other_session);
    }
    let mut header = format!("Turns {start}..{last}");
    if let Some(id) = other_session {
        header.push_str(&format!(" of session {:?} ({id})", session.title));
    }
    if end > session.turn_count {
        header.push_str(&format!(" (the session has {} turns)", session.turn_count));
    }
    header.push(':');
    let render = |t: &Turn, limits: Limits| format_turn(t, limits, other_session);
    let drop_last = |entries: &[Turn]| entries.len() - 1;
    let mut text = fit_entries(&header, "\n", turns, render, drop_last, |dropped, kept| {
        let next = kept.last().map_or(start, |t| t.turn_number + 1);
        let until = dropped.iter().map(|t| t.turn_number).max().unwrap_or(next);
        format!(
            "[turns {next}..{until} left out to stay under {} tokens; continue with {}]",
            thousands(RECALL_TOKEN_CAP),
            range_ref(next, end_clamped, other_session)
        )
    });
    if last < end_clamped {
        text.push_str(&format!(
            "\n\n[a range returns at most {MAX_RANGE_TURNS} turns; continue with {}]",
            range_ref(last + 1, end_clamped, other_session)
        ));
    }
    Ok(text)
}

/// One turn, whole, from `offset`: at most [`RANGE_PAGE_CHARS`] characters per call.
fn single_turn_page(turn: &Turn, offset: usize, other_session: Option<&str>) -> Result<String, String> {
    let full = format_turn(turn, LEVELS[0], other_session);
    let total = full.chars().count();
    if offset > 0 && offset >= total {
        return Err(format!(
            "turn {} is {} characters long; offset {offset} is past its end",
            turn.turn_number,
            thousands(total as i64)
        ));
    }
    let page: String = full.chars().skip(offset).take(RANGE_PAGE_CHARS).collect();
    let shown_end = offset + page.chars().count();
    let mut out = String::new();
    if offset > 0 {
        out.push_str(&format!(
            "[Turn {}, characters {}..{} of {}]\n",
            turn.turn_number,
            thousands(offset as i64),
            thousands(shown_end as i64),
            thousands(total as i64)
        ));
    }
    out.push_str(&page);
    if shown_end < total {
        let n = turn.turn_number;
        out.push_str(&format!(
            "\n[… {} more characters; continue with {} offset={shown_end}]",
            thousands((total - shown_end) as i64),
            range_ref(n, n, other_session)
        ));
    }
    Ok(out)
}

fn tool_calls(
    source: &dyn RecallSource,
    session_id: &str,
    tool_name: &str,
    limit: usize,
    capped: bool,
) -> Result<String, String> {
    let mut runs = source
        .tool_executions(session_id, tool_name, limit)
        .map_err(|e| format!("reading tool executions failed: {e}"))?;
    runs.truncate(limit);
    if runs.is_empty() {
        return Ok(format!(
            "No calls to {tool_name} in this session. Check the tool's name, or search for what it did."
        ));
    }
    let header = format!(
        "{tool_name}: the {} most recent call{}, newest first{}.",
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        if capped { format!(" (limit capped at {MAX_LIMIT})") } else { String::new() }
    );
    let render = |run: &ToolExecution, limits: Limits| -> String {
        let n = run.turn_number;
        let outcome = match (run.approval, run.success) {
            (crate::Approval::Denied, _) => "denied by the user".to_string(),
            (_, true) => format!("ok, {} ms", run.duration_ms),
            (_, false) => format!("failed, {} ms", run.duration_ms),
        };
        let arg_limit = limits.other.map(|_| 200).or(limits.tool.map(|_| 400));
        format!(
            "[Turn {n}] {} → {outcome}\n  {}",
            indent(&call_signature(&run.tool_name, &run.arguments, arg_limit)),
            indent(&shorten(&run.result, limits.tool, &range_ref(n, n, None)))
        )
    };
    let oldest_last = |runs: &[ToolExecution]| runs.len() - 1;
    let note = |dropped: &[ToolExecution], _: &[ToolExecution]| {
        let turns: Vec<String> = dropped.iter().map(|r| r.turn_number.to_string()).collect();
        format!(
            "[{} older call{} left out to stay under {} tokens (turns {}); read them with range]",
            dropped.len(),
            if dropped.len() == 1 { "" } else { "s" },
            thousands(RECALL_TOKEN_CAP),
            turns.join(", ")
        )
    };
    Ok(fit_entries(&header, "\n\n", runs, render, oldest_last, note))
}

fn summary(source: &dyn RecallSource, session_id: &str) -> Result<String, String> {
    let session = source.session(session_id).map_err(|e| e.to_string())?;
    let tasks = source.tasks(session_id).map_err(|e| format!("reading tasks failed: {e}"))?;
    let state = SessionState::from_json(&session.state);
    let open = tasks.iter().filter(|t| !t.is_finished()).count();
    let mut out = format!(
        "Session {} ({}) · workspace {} · model {}\nTurns: {} · tokens: {} prompt, {} completion\nIn the register: files touched: {} · decisions: {} · errors resolved: {} · tasks: {} ({open} open)\n",
        serde_json::to_string(&session.title).unwrap_or_default(),
        session.id,
        session.workspace,
        session.model,
        thousands(session.turn_count),
        thousands(session.prompt_tokens),
        thousands(session.completion_tokens),
        state.files_touched.len(),
        state.key_decisions.len(),
        state.errors_resolved.len(),
        tasks.len(),
    );
    if !tasks.is_empty() {
        out.push_str("\nTasks (newest last):\n");
        const SHOWN: usize = 20;
        if tasks.len() > SHOWN {
            out.push_str(&format!("  … {} older tasks\n", tasks.len() - SHOWN));
        }
        for t in &tasks[tasks.len().saturating_sub(SHOWN)..] {
            let goal = crate::state::truncate_end(&t.goal, 100);
            out.push_str(&format!("  {} [{}] {} (turn {})\n", t.task_id, t.status, goal, t.turn_number));
        }
    }
    out.push_str("\nSession state:\n");
    out.push_str(&render_yaml(&state));
    Ok(out.trim_end().to_string())
}

#[cfg(test)]
mod tests;
