//! Runs `conversation_recall` calls: checks the model's arguments, reads the archive through a
//! [`RecallSource`], and formats compact text for the model, at most [`RECALL_TOKEN_CAP`] tokens. It always
//! returns text: bad arguments and archive errors come back as "recall error: …" saying what to change.
//!
//! Actions:
//! - `search {query, limit?, scope?, roles?}`: ranked hits (best first), each with the turn before and
//!   after it; the hit's own line is marked with `»`. `limit` is 1..=50 (default 10; larger values are
//!   capped at 50 and the header says so). `scope` is "session" (default) or "workspace"; workspace hits
//!   name their session (title and id) and, for other sessions, how to read them (`range … session_id=…`).
//!   The current exchange (from [`RecallContext::exclude_from_turn`]: the request that asked, the call
//!   itself, earlier results of the same exchange) is never a hit of its own search, and a few more hits
//!   than `limit` are asked for so that leaving it out does not shorten the answer. When the session
//!   holds no hit, the search widens to the workspace and the answer begins by saying so.
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

use crate::state::{render_yaml, thousands, SessionState};
use crate::{Role, SearchHit, SearchQuery, SearchScope, Session, TaskRecord, ToolExecution, Turn};

mod args;
mod format;

use args::{parse_request, Request};
use format::{call_signature, cap_text, fit_entries, format_turn, indent, range_ref, shorten, Limits, LEVELS};

/// The output never exceeds this many tokens (by [`estimate_tokens`](crate::tokens::estimate_tokens)).
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
    /// Hits for `query` by words and by meaning (`vector`: the query's embedding), fused, best
    /// first; a source without a semantic index searches by words.
    fn search_hybrid(&self, query: &SearchQuery, vector: &[f32]) -> crate::Result<Vec<SearchHit>> {
        let _ = vector;
        self.search(query)
    }
    /// Turns `start..=end` of a session, in order.
    fn turns_range(&self, session_id: &str, start: i64, end: i64) -> crate::Result<Vec<Turn>>;
    /// Executions of one tool, newest first.
    fn tool_executions(&self, session_id: &str, tool_name: &str, limit: usize) -> crate::Result<Vec<ToolExecution>>;
    /// The session `session_id` (its workspace, title, counts and state register).
    fn session(&self, session_id: &str) -> crate::Result<Session>;
    /// The session's delegated tasks, oldest first.
    fn tasks(&self, session_id: &str) -> crate::Result<Vec<TaskRecord>>;
}

/// Hits asked for beyond `limit`, so that leaving out the current exchange's own turns (the request,
/// the call, earlier results of the same exchange) does not shorten the answer.
const EXCHANGE_SLACK: usize = 10;

/// What the caller knows about a `conversation_recall` call beyond its arguments.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecallContext {
    /// The turn number where the current exchange began (the user turn that asked): the recalling
    /// session's turns from it on are never hits of its own search. `None`: nothing is left out.
    pub exclude_from_turn: Option<i64>,
    /// The search query's embedding when recall by meaning is on (see [`search_query`]), and the
    /// words to search for with it (the query without its stop words): hits are then ranked by words
    /// and meaning together. `None`: by the query's words alone.
    pub query_vector: Option<(Vec<f32>, String)>,
}

/// The text a `conversation_recall` call searches for, when it is a search: what to embed for
/// [`RecallContext::query_vector`].
pub fn search_query(arguments_json: &str) -> Option<String> {
    match parse_request(arguments_json) {
        Ok(Request::Search { query, .. }) => Some(query),
        _ => None,
    }
}

/// Runs one `conversation_recall` call for `session_id` with the model's `arguments_json`, with no
/// [`RecallContext`] (nothing is left out of a search).
pub fn run_recall(source: &dyn RecallSource, session_id: &str, arguments_json: &str) -> String {
    run_recall_with(source, session_id, arguments_json, &RecallContext::default())
}

/// Runs one `conversation_recall` call for `session_id` with the model's `arguments_json`, in `context`.
pub fn run_recall_with(
    source: &dyn RecallSource,
    session_id: &str,
    arguments_json: &str,
    context: &RecallContext,
) -> String {
    let result = parse_request(arguments_json).and_then(|request| match request {
        Request::Search { query, limit, capped, workspace, roles } => {
            let asked = Asked { query: &query, limit, capped, workspace, roles };
            search(source, session_id, asked, context)
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

/// One search hit with its neighbours.
struct HitEntry {
    hit: SearchHit,
    turns: Vec<Turn>,
    /// `Some(id)` when the hit is in another session than the one recalling.
    other_session: Option<String>,
    workspace: bool,
}

/// A checked search request.
struct Asked<'a> {
    query: &'a str,
    limit: usize,
    capped: bool,
    workspace: bool,
    roles: Vec<Role>,
}

/// ", matched by meaning" (or by words and meaning) after a hit's place; nothing for a match by words.
fn how(hit: &SearchHit) -> String {
    match hit.matched {
        crate::semantic::Matched::Words => String::new(),
        other => format!(", {}", other.label()),
    }
}

/// Searches `scope` for `asked`, leaving out the current exchange's own turns.
fn search_hits(
    source: &dyn RecallSource,
    session_id: &str,
    asked: &Asked<'_>,
    scope: SearchScope,
    context: &RecallContext,
) -> Result<Vec<SearchHit>, String> {
    let whole_session = matches!(scope, SearchScope::Session { .. });
    let request = SearchQuery {
        text: asked.query.to_string(),
        scope,
        roles: asked.roles.clone(),
        limit: (asked.limit + EXCHANGE_SLACK).min(MAX_LIMIT),
        prefix_last: false,
    };
    let hits = match &context.query_vector {
        Some((vector, words)) => source.search_hybrid(&SearchQuery { text: words.clone(), ..request }, vector),
        None => source.search(&request),
    };
    let mut hits = hits.map_err(|e| format!("the archive search failed: {e}"))?;
    if let Some(from) = context.exclude_from_turn {
        // In session scope every hit is a turn of this session (an inherited one names its parent).
        hits.retain(|h| h.turn_number < from || !(whole_session || h.session_id == session_id));
    }
    hits.truncate(asked.limit);
    Ok(hits)
}

fn search(
    source: &dyn RecallSource,
    session_id: &str,
    asked: Asked<'_>,
    context: &RecallContext,
) -> Result<String, String> {
    let workspace_scope = || -> Result<SearchScope, String> {
        let session = source.session(session_id).map_err(|e| e.to_string())?;
        Ok(SearchScope::Workspace { workspace: session.workspace })
    };
    let (query, capped) = (asked.query, asked.capped);
    let mut workspace = asked.workspace;
    let scope =
        if workspace { workspace_scope()? } else { SearchScope::Session { session_id: session_id.to_string() } };
    let mut hits = search_hits(source, session_id, &asked, scope, context)?;
    let mut widened = false;
    if hits.is_empty() && !workspace {
        // Nothing in this session (a new chat, or a question about earlier ones): the workspace.
        hits = search_hits(source, session_id, &asked, workspace_scope()?, context)?;
        (widened, workspace) = (true, true);
    }
    let where_ = if workspace { "this workspace" } else { "this session" };
    let quoted = serde_json::to_string(query).unwrap_or_default();
    if hits.is_empty() {
        let where_ = if widened { "this session or the rest of this workspace" } else { where_ };
        return Ok(format!(
            "No matches for {quoted} in {where_}. Try other or fewer words, part of an identifier or path, or range."
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
        "{}Search {quoted} in {where_}: {total} hit{}, best first{}. » marks each hit; the turns around it are shown for context.",
        if widened { "Nothing in this session; searched the workspace instead. " } else { "" },
        if total == 1 { "" } else { "s" },
        if capped { format!(" (limit capped at {MAX_LIMIT})") } else { String::new() }
    );
    let render = |e: &HitEntry, limits: Limits| -> String {
        let hit = &e.hit;
        let mut out = if e.workspace {
            let title = serde_json::to_string(&hit.session_title).unwrap_or_default();
            let this = if e.other_session.is_none() { ", this session" } else { "" };
            format!("── session {title} ({}{this}), turn {}{} ──", hit.session_id, hit.turn_number, how(hit))
        } else {
            format!("── turn {}{} ──", hit.turn_number, how(hit))
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
