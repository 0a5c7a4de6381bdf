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
pub const DEFAULT_LIMIT: usize = 10;
pub const MAX_LIMIT: usize = 50;
/// Most turns one `range` call returns.
pub const MAX_RANGE_TURNS: i64 = 200;
/// Characters of one turn shown per `range` page.
pub const RANGE_PAGE_CHARS: usize = 28_000;

/// What recall reads. The store implements it over SQLite.
pub trait RecallSource {
    fn search(&self, query: &SearchQuery) -> crate::Result<Vec<SearchHit>>;
    /// Turns `start..=end` of a session, in order.
    fn turns_range(&self, session_id: &str, start: i64, end: i64) -> crate::Result<Vec<Turn>>;
    /// Executions of one tool, newest first.
    fn tool_executions(&self, session_id: &str, tool_name: &str, limit: usize) -> crate::Result<Vec<ToolExecution>>;
    fn session(&self, session_id: &str) -> crate::Result<Session>;
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
mod tests {
    use super::*;
    use crate::test_support::{Archive, Convo};
    use expect_test::{expect, Expect};

    /// Runs `args` against the test archive (session "s1") and compares the text.
    fn check(archive: &Archive, args: &str, expect: Expect) {
        let out = run_recall(archive, "s1", args);
        assert!(estimate_tokens(&out) <= RECALL_TOKEN_CAP, "over the cap: {} tokens", estimate_tokens(&out));
        expect.assert_eq(&out);
    }

    fn archive() -> Archive {
        let mut c = Convo::new();
        c.user("Can you add JWT refresh token support? We use JWT.")
            .calls("I'll read the auth module first.", &[("c1", "read_file", r#"{"path":"src/auth.py"}"#)])
            .result("c1", "read_file", "import jwt\n\ndef login(user):\n    return jwt.encode({\"sub\": user.id}, KEY)")
            .assistant("The module issues access tokens only; I'll add rotate_refresh_token_v2.")
            .calls("", &[("c2", "bash", r#"{"command":"pytest -q"}"#)])
            .result("c2", "bash", "FAILED tests/test_auth.py::test_refresh - KeyError: 'refresh'\nexit code: 1")
            .status(TurnStatus::Error)
            .user("That error again? Fix it.")
            .calls(
                "Fixing the refresh key.",
                &[("c3", "edit_file", r#"{"path":"src/auth.py","old":"KEY","new":"REFRESH_KEY"}"#)],
            )
            .result("c3", "edit_file", "ok")
            .assistant("Fixed: refresh tokens now rotate.")
            .status(TurnStatus::Interrupted);
        let mut archive = Archive::new();
        archive.add_session("s1", "Auth work", "/home/ana/shop", c.build());
        let mut other = Convo::new();
        other.user("In the billing service, the refresh token lives in Redis.").assistant("Noted.");
        archive.add_session("s2", "Billing", "/home/ana/shop", other.build());
        let mut elsewhere = Convo::new();
        elsewhere.user("refresh token in another workspace");
        archive.add_session("s3", "Other", "/home/ana/blog", elsewhere.build());
        for (id, status) in [("task-1", "completed"), ("task-2", "executing")] {
            archive.tasks.push(TaskRecord {
                task_id: id.to_string(),
                session_id: "s1".to_string(),
                turn_number: 9,
                goal: format!("Goal of {id}"),
                context: String::new(),
                status: status.into(),
                result_delivered: status == "completed",
                created_at: 0,
                updated_at: 0,
            });
        }
        archive
    }

    #[test]
    fn search_in_the_session() {
        check(
            &archive(),
            r#"{"action":"search","query":"refresh"}"#,
            expect![[r#"
                Search "refresh" in this session: 5 hits, best first. » marks each hit; the turns around it are shown for context.

                ── turn 6 ──
                [Turn 5] assistant → bash(command="pytest -q")
                » [Turn 6] tool:bash (error): FAILED tests/test_auth.py::test_refresh - KeyError: 'refresh'
                  exit code: 1
                [Turn 7] user: That error again? Fix it.

                ── turn 10 ──
                [Turn 9] tool:edit_file: ok
                » [Turn 10] assistant (interrupted): Fixed: refresh tokens now rotate.

                ── turn 8 ──
                [Turn 7] user: That error again? Fix it.
                » [Turn 8] assistant: Fixing the refresh key.
                [Turn 8] assistant → edit_file(path="src/auth.py", new="REFRESH_KEY", old="KEY")
                [Turn 9] tool:edit_file: ok

                ── turn 4 ──
                [Turn 3] tool:read_file: import jwt

                  def login(user):
                      return jwt.encode({"sub": user.id}, KEY)
                » [Turn 4] assistant: The module issues access tokens only; I'll add rotate_refresh_token_v2.
                [Turn 5] assistant → bash(command="pytest -q")

                ── turn 1 ──
                » [Turn 1] user: Can you add JWT refresh token support? We use JWT.
                [Turn 2] assistant: I'll read the auth module first.
                [Turn 2] assistant → read_file(path="src/auth.py")"#]],
        );
    }

    #[test]
    fn search_in_the_workspace_names_sessions() {
        check(
            &archive(),
            r#"{"action":"search","query":"refresh token","scope":"workspace","roles":["user"],"limit":"5"}"#,
            expect![[r#"
                Search "refresh token" in this workspace: 2 hits, best first. » marks each hit; the turns around it are shown for context.

                ── session "Auth work" (s1, this session), turn 1 ──
                » [Turn 1] user: Can you add JWT refresh token support? We use JWT.
                [Turn 2] assistant: I'll read the auth module first.
                [Turn 2] assistant → read_file(path="src/auth.py")

                ── session "Billing" (s2), turn 1 ──
                » [Turn 1] user: In the billing service, the refresh token lives in Redis.
                [Turn 2] assistant: Noted."#]],
        );
    }

    #[test]
    fn search_without_hits_says_what_to_try() {
        check(
            &archive(),
            r#"{"action":"search","query":"NEAR(\"kafka\" *"}"#,
            expect![[
                r#"No matches for "NEAR(\"kafka\" *" in this session. Try other or fewer words, part of an identifier or path, scope "workspace", or range."#
            ]],
        );
    }

    #[test]
    fn range_shows_turns_in_order() {
        check(
            &archive(),
            r#"{"action":"range","start_turn":4,"end_turn":99}"#,
            expect![[r#"
            Turns 4..10 (the session has 10 turns):

            [Turn 4] assistant: The module issues access tokens only; I'll add rotate_refresh_token_v2.
            [Turn 5] assistant → bash(command="pytest -q")
            [Turn 6] tool:bash (error): FAILED tests/test_auth.py::test_refresh - KeyError: 'refresh'
              exit code: 1
            [Turn 7] user: That error again? Fix it.
            [Turn 8] assistant: Fixing the refresh key.
            [Turn 8] assistant → edit_file(path="src/auth.py", new="REFRESH_KEY", old="KEY")
            [Turn 9] tool:edit_file: ok
            [Turn 10] assistant (interrupted): Fixed: refresh tokens now rotate."#]],
        );
    }

    #[test]
    fn range_reads_another_session_of_the_workspace_only() {
        check(
            &archive(),
            r#"{"action":"range","start_turn":1,"end_turn":2,"session_id":"s2"}"#,
            expect![[r#"
            Turns 1..2 of session "Billing" (s2):

            [Turn 1] user: In the billing service, the refresh token lives in Redis.
            [Turn 2] assistant: Noted."#]],
        );
        check(
            &archive(),
            r#"{"action":"range","start_turn":1,"session_id":"s3"}"#,
            expect![
                "recall error: session s3 belongs to another workspace; only sessions of this workspace can be read"
            ],
        );
    }

    #[test]
    fn tool_calls_newest_first() {
        check(
            &archive(),
            r#"{"action":"tool_calls","tool_name":"read_file"}"#,
            expect![[r#"
            read_file: the 1 most recent call, newest first.

            [Turn 3] read_file(path="src/auth.py") → ok, 12 ms
              import jwt
  
              def login(user):
                  return jwt.encode({"sub": user.id}, KEY)"#]],
        );
        check(
            &archive(),
            r#"{"action":"tool_calls","tool_name":"bash","limit":500}"#,
            expect![[r#"
            bash: the 1 most recent call, newest first (limit capped at 50).

            [Turn 6] bash(command="pytest -q") → failed, 12 ms
              FAILED tests/test_auth.py::test_refresh - KeyError: 'refresh'
              exit code: 1"#]],
        );
    }

    #[test]
    fn summary_shows_the_register_and_counts() {
        check(
            &archive(),
            r#"{"action":"summary"}"#,
            expect![[r#"
            Session "Auth work" (s1) · workspace /home/ana/shop · model test-model
            Turns: 10 · tokens: 399 prompt, 133 completion
            In the register: files touched: 1 · decisions: 1 · errors resolved: 0 · tasks: 2 (1 open)

            Tasks (newest last):
              task-1 [completed] Goal of task-1 (turn 9)
              task-2 [executing] Goal of task-2 (turn 9)

            Session state:
            session:
              id: "s1"
              workspace: "/home/ana/shop"
              model: "test-model"
              turn_count: 10
              total_tokens: 133
            files_touched:
              - {path: "src/auth.py", action: edit, turn: 9}
            key_decisions:
              - "We use JWT. (turn 1)"
            current_focus: "That error again? Fix it."
            errors_resolved: []
            open_tasks: []"#]],
        );
    }

    #[test]
    fn invalid_arguments_get_an_actionable_error() {
        let a = archive();
        let rows = [
            ("", "recall error: the arguments are not valid JSON; expected a JSON object such as {\"action\": \"search\", \"query\": \"refresh token\"}"),
            ("[1]", "recall error: the arguments must be a JSON object; expected a JSON object such as {\"action\": \"search\", \"query\": \"refresh token\"}"),
            ("{}", "recall error: \"action\" is required: one of search, range, tool_calls, summary"),
            (r#"{"action":"find"}"#, "recall error: unknown action \"find\"; use one of search, range, tool_calls, summary"),
            (r#"{"action":"search"}"#, "recall error: search needs a non-empty \"query\" (words, a phrase, an identifier or a path)"),
            (r#"{"action":"search","query":"  "}"#, "recall error: search needs a non-empty \"query\" (words, a phrase, an identifier or a path)"),
            (r#"{"action":"search","query":"x","limit":0}"#, "recall error: \"limit\" must be between 1 and 50 (got 0)"),
            (r#"{"action":"search","query":"x","limit":"many"}"#, "recall error: \"limit\" must be a whole number, not \"many\""),
            (r#"{"action":"search","query":"x","scope":"galaxy"}"#, "recall error: unknown scope \"galaxy\"; use \"session\" or \"workspace\""),
            (r#"{"action":"search","query":"x","roles":["robot"]}"#, "recall error: unknown role \"robot\" in \"roles\"; use user, assistant, tool or system"),
            (r#"{"action":"range","end_turn":3}"#, "recall error: range needs \"start_turn\" (and usually \"end_turn\")"),
            (r#"{"action":"range","start_turn":7,"end_turn":3}"#, "recall error: end_turn (3) is before start_turn (7)"),
            (r#"{"action":"range","start_turn":0,"end_turn":3}"#, "recall error: start_turn must be 1 or more (got 0)"),
            (r#"{"action":"range","start_turn":50,"end_turn":60}"#, "recall error: this session has 10 turns; start_turn 50 is past the end"),
            (r#"{"action":"range","start_turn":1,"end_turn":2,"offset":5}"#, "recall error: offset pages through one turn: give start_turn = end_turn"),
            (r#"{"action":"range","start_turn":1,"offset":100000}"#, "recall error: turn 1 is 65 characters long; offset 100000 is past its end"),
            (r#"{"action":"tool_calls"}"#, "recall error: tool_calls needs \"tool_name\", e.g. \"read_file\""),
            (r#"{"action":"range","start_turn":1,"session_id":"nope"}"#, "recall error: no session with id nope"),
        ];
        for (args, expect) in rows {
            assert_eq!(run_recall(&a, "s1", args), expect, "{args}");
        }
        assert_eq!(run_recall(&a, "missing", r#"{"action":"summary"}"#), "recall error: no session with id missing");
    }

    #[test]
    fn huge_outputs_are_shortened_then_old_hits_dropped() {
        let big = format!("needle at the start\n{}\nneedle at the end", "log line with some detail\n".repeat(4_000));
        let mut c = Convo::new();
        for i in 0..30 {
            let id = format!("c{i}");
            c.user(&format!("needle question {i}: {}", "with a long pasted description ".repeat(100)))
                .calls("", &[(&id, "bash", r#"{"command":"cat huge.log"}"#)])
                .result(&id, "bash", &big);
        }
        let mut a = Archive::new();
        a.add_session("s1", "Logs", "/w", c.build());
        let out = run_recall(&a, "s1", r#"{"action":"search","query":"needle","limit":50}"#);
        assert!(estimate_tokens(&out) <= RECALL_TOKEN_CAP, "{} tokens", estimate_tokens(&out));
        assert!(out.contains("chars omitted; full text: range "), "tool outputs shortened first:\n{out}");
        assert!(out.contains("older hits left out to stay under 8,000 tokens"), "then old hits dropped:\n{out}");
        assert!(out.contains("── turn 90 ──"), "the best (newest) hits stay:\n{out}");

        let out = run_recall(&a, "s1", r#"{"action":"tool_calls","tool_name":"bash","limit":50}"#);
        assert!(estimate_tokens(&out) <= RECALL_TOKEN_CAP);
        assert!(
            out.starts_with("bash: the 30 most recent calls")
                && out.contains("[Turn 90] bash(command=\"cat huge.log\") → ok"),
            "{}",
            &out[..300]
        );
        assert!(
            out.contains("[Turn 3] bash") && out.contains("chars omitted; full text: range 3-3]"),
            "all 30 calls, shortened:\n{out}"
        );

        // A range of many long turns keeps its first turns and says where to continue.
        let mut c = Convo::new();
        for i in 1..=150 {
            c.user(&format!("turn {i} {}", "long text ".repeat(100)));
        }
        let mut a = Archive::new();
        a.add_session("s1", "Long", "/w", c.build());
        let out = run_recall(&a, "s1", r#"{"action":"range","start_turn":1,"end_turn":150}"#);
        assert!(estimate_tokens(&out) <= RECALL_TOKEN_CAP);
        assert!(out.starts_with("Turns 1..150:\n\n[Turn 1] user: turn 1 long text"), "{}", &out[..100]);
        let tail = &out[out.rfind("\n\n").unwrap() + 2..];
        let next = out.matches("[Turn ").count() + 1;
        assert_eq!(
            tail,
            format!("[turns {next}..150 left out to stay under 8,000 tokens; continue with range {next}-150]")
        );
    }

    #[test]
    fn entries_are_left_out_in_the_order_asked_for() {
        let entries: Vec<(i64, String)> = (1..=6).map(|i| (i, "x".repeat(8_000))).collect();
        let render = |e: &(i64, String), _: Limits| format!("entry {}: {}", e.0, e.1);
        let note = |dropped: &[(i64, String)], kept: &[(i64, String)]| {
            format!(
                "dropped {:?}, kept {:?}",
                dropped.iter().map(|e| e.0).collect::<Vec<_>>(),
                kept.iter().map(|e| e.0).collect::<Vec<_>>()
            )
        };
        let oldest_first = |es: &[(i64, String)]| es.iter().enumerate().min_by_key(|(_, e)| e.0).map_or(0, |(i, _)| i);
        let out = fit_entries("head", "\n", entries.clone(), render, oldest_first, note);
        assert!(out.ends_with("dropped [1, 2, 3], kept [4, 5, 6]"), "{}", &out[out.len() - 60..]);
        let out = fit_entries("head", "\n", entries, render, |es| es.len() - 1, note);
        assert!(out.ends_with("dropped [6, 5, 4], kept [1, 2, 3]"), "{}", &out[out.len() - 60..]);
        assert!(estimate_tokens(&out) <= RECALL_TOKEN_CAP);
    }

    #[test]
    fn a_single_long_turn_is_read_page_by_page() {
        let text: String = (0..40_000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        let mut c = Convo::new();
        c.user("hi").calls("", &[("c1", "read_file", r#"{"path":"big.txt"}"#)]).result("c1", "read_file", &text);
        let mut a = Archive::new();
        a.add_session("s1", "Big", "/w", c.build());
        let first = run_recall(&a, "s1", r#"{"action":"range","start_turn":3,"end_turn":3}"#);
        assert!(estimate_tokens(&first) <= RECALL_TOKEN_CAP);
        assert!(first.starts_with("[Turn 3] tool:read_file: abcdef"));
        assert!(
            first.ends_with("[… 12,025 more characters; continue with range 3-3 offset=28000]"),
            "{}",
            &first[first.len() - 200..]
        );
        let second = run_recall(&a, "s1", r#"{"action":"range","start_turn":3,"end_turn":3,"offset":28000}"#);
        assert!(second.starts_with("[Turn 3, characters 28,000..40,025 of 40,025]\n"), "{}", &second[..100]);
        let shown: String = [&first[..RANGE_PAGE_CHARS], &second[second.find('\n').unwrap() + 1..]].concat();
        assert_eq!(shown, format!("[Turn 3] tool:read_file: {text}"), "the two pages hold the whole turn");
    }

    #[test]
    fn a_range_over_a_huge_span_is_capped() {
        let mut c = Convo::new();
        for i in 0..300 {
            c.user(&format!("m{i}"));
        }
        let mut a = Archive::new();
        a.add_session("s1", "Many", "/w", c.build());
        let out = run_recall(&a, "s1", r#"{"action":"range","start_turn":1,"end_turn":1000000}"#);
        assert!(out.starts_with("Turns 1..200 (the session has 300 turns):\n\n[Turn 1] user: m0\n"), "{}", &out[..120]);
        assert!(
            out.ends_with("[Turn 200] user: m199\n\n[a range returns at most 200 turns; continue with range 201-300]"),
            "{out}"
        );
        assert_eq!(a.turns_read.get(), 200, "never reads past the cap");
    }

    proptest::proptest! {
        #[test]
        fn any_arguments_give_bounded_text(
            action in proptest::sample::select(vec!["search", "range", "tool_calls", "summary", "find", ""]),
            query in ".{0,40}",
            start in proptest::option::of(-5i64..20),
            end in proptest::option::of(-5i64..20),
            limit in proptest::option::of(-3i64..80),
            offset in proptest::option::of(-2i64..200),
            raw in ".{0,60}",
            use_raw in proptest::bool::weighted(0.2),
        ) {
            let mut args = serde_json::json!({"action": action, "query": query, "tool_name": query});
            for (key, value) in [("start_turn", start), ("end_turn", end), ("limit", limit), ("offset", offset)] {
                if let Some(v) = value {
                    args[key] = v.into();
                }
            }
            let text = if use_raw { raw } else { args.to_string() };
            let out = run_recall(&archive(), "s1", &text);
            proptest::prop_assert!(!out.is_empty() && estimate_tokens(&out) <= RECALL_TOKEN_CAP);
        }
    }

    #[test]
    fn call_signatures() {
        let rows = [
            ("read_file", r#"{"path":"src/auth.py"}"#, "read_file(path=\"src/auth.py\")"),
            (
                "bash",
                r#"{"command":"echo \"hi\"\nls","timeout":30}"#,
                "bash(command=\"echo \\\"hi\\\"\\nls\", timeout=30)",
            ),
            ("t", "", "t()"),
            ("t", "{not json", "t({not json)"),
            ("t", r#"{"a":[1,2],"b":null}"#, "t(a=[1,2], b=null)"),
        ];
        for (name, args, expect) in rows {
            assert_eq!(call_signature(name, args, Some(200)), expect);
        }
        assert_eq!(
            call_signature("w", &format!(r#"{{"content":"{}"}}"#, "x".repeat(500)), Some(10)),
            "w(content=\"xxxxxxxxxx…\")"
        );
    }
}
