//! Context assembly: builds the message list for one model request from the system prompt, the
//! session-state register and as many recent turns as fit the token budget, plus the manifest of what was
//! sent. No I/O: turns come from a [`TurnSource`], read newest-first one page at a time, and reading stops
//! as soon as the budget is full.
//!
//! The rules, in priority order:
//! 1. **Mandatory**: one system message (the static prompt, then the register as YAML), and the newest user
//!    message, whole. When turns are left out, the archive note (and possibly the hint) is mandatory too.
//!    If these do not fit the budget (context window − output reserve), assembly fails with
//!    [`Error::ContextOverflow`] before anything is sent.
//! 2. **Recent turns, newest first**: first the steps after the newest user message (tool calls and results
//!    of the current exchange), then the turns before it, each *unit* whole or not at all; the first unit
//!    that does not fit ends the window, so what is shown is contiguous (except, when the current exchange
//!    itself is too long, its oldest steps: the note then names that gap too).
//! 3. A unit is one turn, or a **tool-call group**: an assistant message with tool calls and all its
//!    results. Providers reject orphans, so a group is kept or dropped as one:
//!    - a result whose call is not in its group (a late `wait: false` task result, a duplicate, a call whose
//!      assistant turn is missing) is sent as a *system* message "[Turn N: a result from TOOL that arrived
//!      outside its tool call]", never as a tool message;
//!    - a call with no recorded result in a *complete* assistant turn (the app was closed while the tool
//!      ran, or the group is the last thing in the conversation and its results never came) gets a
//!      synthetic result saying no result was recorded, so the model can call again;
//!    - an *interrupted* or *error* assistant turn (cut stream, Stop, malformed stream) is sent with the
//!      partial text it has and a note "[This reply was interrupted …]" / "[… ended with an error …]"; its
//!      calls that have no result are dropped (they never ran, and their arguments may be cut off).
//! 4. **Shortening**: outside the protection window (the newest `protection_fraction` of the budget,
//!    counted on full sizes), a content longer than [`TRIM_THRESHOLD_CHARS`] (tool outputs, and old long
//!    pastes) is shown as head + tail with "[… 18,402 chars omitted; full text: conversation_recall range
//!    212 …]". Inside the window everything is whole; a unit there that does not fit whole is shortened the
//!    same way before it is given up. The newest user message is never shortened. Only the request is
//!    shortened: the archive keeps everything.
//! 5. **Notes**: when turns are left out, the system message ends with "Turns 1..K of this session are not
//!    shown here but are in the archive; …", and with the dangling-reference hint when the newest user
//!    message refers back ([`crate::hints`]).
//!
//! Tokens are estimated at `chars_per_token` per message (content, tool calls, ids) plus
//! [`MESSAGE_OVERHEAD_TOKENS`]; the estimate of the returned messages never exceeds the budget.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::hints::{find_back_reference, hint_text};
use crate::state::{render_yaml, thousands, SessionState};
use crate::tokens::{estimate_with_ratio, DEFAULT_CHARS_PER_TOKEN};
use crate::{ContextManifest, Error, Result, Role, ToolCall, Turn, TurnStatus};

pub const DEFAULT_CONTEXT_WINDOW: i64 = 32_768;
pub const DEFAULT_OUTPUT_RESERVE: i64 = 8_192;
pub const DEFAULT_PROTECTION_FRACTION: f64 = 0.25;
/// Tokens a provider spends on each message's framing (role, separators).
pub const MESSAGE_OVERHEAD_TOKENS: i64 = 4;
/// Turns asked of the [`TurnSource`] per read, at first; later reads ask for about as many older turns
/// as the rest of the budget holds at the average size seen so far, up to [`MAX_PAGE_SIZE`].
pub const PAGE_SIZE: usize = 32;
/// Most turns asked of the [`TurnSource`] in one read.
pub const MAX_PAGE_SIZE: usize = 1024;
/// Contents longer than this (in characters) are shortened outside the protection window.
pub const TRIM_THRESHOLD_CHARS: usize = 2_400;
pub const TRIM_HEAD_CHARS: usize = 800;
pub const TRIM_TAIL_CHARS: usize = 400;

/// A session's context settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ContextSettings {
    /// The model's context window, in tokens.
    pub context_window: i64,
    /// Tokens kept free for the reply.
    pub output_reserve: i64,
    /// The newest part of the budget (0..=1) in which nothing is shortened.
    pub protection_fraction: f64,
    /// The calibrated ratio for this model ([`crate::tokens::Calibration`]).
    pub chars_per_token: f64,
}

impl Default for ContextSettings {
    fn default() -> ContextSettings {
        ContextSettings {
            context_window: DEFAULT_CONTEXT_WINDOW,
            output_reserve: DEFAULT_OUTPUT_RESERVE,
            protection_fraction: DEFAULT_PROTECTION_FRACTION,
            chars_per_token: DEFAULT_CHARS_PER_TOKEN,
        }
    }
}

impl ContextSettings {
    /// Tokens available for the request: context window − output reserve.
    pub fn budget(&self) -> i64 {
        self.context_window.saturating_sub(self.output_reserve.max(0))
    }

    fn ratio(&self) -> f64 {
        if self.chars_per_token.is_finite() && self.chars_per_token > 0.0 {
            self.chars_per_token
        } else {
            DEFAULT_CHARS_PER_TOKEN
        }
    }

    fn protection(&self) -> f64 {
        if self.protection_fraction.is_finite() {
            self.protection_fraction.clamp(0.0, 1.0)
        } else {
            DEFAULT_PROTECTION_FRACTION
        }
    }
}

/// One message of the request, provider-neutral (the wire formats convert it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextMessage {
    pub role: Role,
    pub content: String,
    /// For an assistant message: the calls it made (each answered by a following tool message).
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the call it answers.
    pub tool_call_id: Option<String>,
    /// For a tool message: the tool's name.
    pub name: Option<String>,
}

impl ContextMessage {
    fn new(role: Role, content: impl Into<String>) -> ContextMessage {
        ContextMessage { role, content: content.into(), tool_calls: Vec::new(), tool_call_id: None, name: None }
    }
}

/// The request's messages, what they contain, and how many archived turns are not among them.
#[derive(Debug, Clone, PartialEq)]
pub struct AssembledContext {
    pub messages: Vec<ContextMessage>,
    /// `created_at` is 0 and `usage` null: the caller stamps them when it stores the manifest.
    pub manifest: ContextManifest,
    /// Turns of the session not in the window (K when only turns 1..K are left out).
    pub archived_turns: i64,
}

/// Where assembly reads turns from, newest first. The store implements it over SQLite; a slice of turns
/// (the app's in-memory recent turns) implements it too.
pub trait TurnSource {
    /// Up to `limit` turns with `turn_number < before_turn_number` (all turns when `None`): the newest of
    /// them, returned oldest → newest.
    fn turns_before(&self, before_turn_number: Option<i64>, limit: usize) -> Result<Vec<Turn>>;
    /// How many turns the session has.
    fn turn_count(&self) -> i64;
}

impl TurnSource for [Turn] {
    fn turns_before(&self, before: Option<i64>, limit: usize) -> Result<Vec<Turn>> {
        let end = match before {
            Some(b) => self.partition_point(|t| t.turn_number < b),
            None => self.len(),
        };
        Ok(self[end.saturating_sub(limit)..end].to_vec())
    }

    fn turn_count(&self) -> i64 {
        self.last().map_or(0, |t| t.turn_number)
    }
}

/// Estimated tokens of one message.
pub fn estimate_message(message: &ContextMessage, chars_per_token: f64) -> i64 {
    let est = |s: &str| estimate_with_ratio(s, chars_per_token);
    let calls: i64 = message
        .tool_calls
        .iter()
        .map(|c| MESSAGE_OVERHEAD_TOKENS + est(&c.id) + est(&c.name) + est(&c.arguments))
        .sum();
    MESSAGE_OVERHEAD_TOKENS
        + est(&message.content)
        + calls
        + message.tool_call_id.as_deref().map_or(0, est)
        + message.name.as_deref().map_or(0, est)
}

/// Estimated tokens of a message list.
pub fn estimate_messages(messages: &[ContextMessage], chars_per_token: f64) -> i64 {
    messages.iter().map(|m| estimate_message(m, chars_per_token)).sum()
}

/// Builds the request for the session whose register is `state` (see the module docs for the rules).
pub fn assemble_context<S: TurnSource + ?Sized>(
    settings: &ContextSettings,
    system_prompt: &str,
    state: &SessionState,
    source: &S,
) -> Result<AssembledContext> {
    let budget = settings.budget();
    if settings.context_window <= 0 || budget <= 0 {
        return Err(Error::Invalid(format!(
            "the context window ({} tokens) must be larger than the output reserve ({} tokens); check Settings",
            settings.context_window, settings.output_reserve
        )));
    }
    let ratio = settings.ratio();
    let cost = |messages: &[ContextMessage]| estimate_messages(messages, ratio);
    let base_system = format!("{system_prompt}\n\n## Session state\n```yaml\n{}```", render_yaml(state));

    // Phase 1: the steps after the newest user message (newest first), and that message.
    let mut reader = Reader::new(source);
    let mut tail = Vec::new();
    let mut user_turn = None;
    while let Some(unit) = reader.next_unit()? {
        match unit {
            Unit::Single(turn) if turn.role == Role::User => {
                user_turn = Some(turn);
                break;
            }
            unit => tail.push(unit),
        }
    }
    let newest_seen = tail.first().map(Unit::last_turn).or(user_turn.as_ref().map(|t| t.turn_number)).unwrap_or(0);
    let max_turn = source.turn_count().max(newest_seen).max(1);
    let others_exist = !tail.is_empty() || user_turn.as_ref().is_none_or(|u| u.turn_number > 1 || !reader.exhausted);

    // Pre-flight: system prompt + register + (note, when something may be left out) + newest user message.
    let user_message = user_turn.as_ref().map(|t| ContextMessage::new(Role::User, t.content.clone()));
    let user_tokens = user_message.as_ref().map_or(0, |m| cost(std::slice::from_ref(m)));
    let worst_note = others_exist.then(|| archive_note(Some(max_turn), Some((max_turn, max_turn.saturating_add(1)))));
    let system_cost = |hint: Option<&str>| {
        cost(&[ContextMessage::new(Role::System, compose_system(&base_system, worst_note.as_deref(), hint))])
    };
    let needed = system_cost(None) + user_tokens;
    if needed > budget {
        return Err(Error::ContextOverflow { needed, available: budget });
    }
    let hint = match (&user_turn, others_exist) {
        (Some(u), true) => find_back_reference(&u.content).map(hint_text),
        _ => None,
    };
    let hint = hint.filter(|h| system_cost(Some(h)) + user_tokens <= budget);
    let mut placer = Placer {
        remaining: budget - system_cost(hint.as_deref()) - user_tokens,
        protection: (settings.protection() * budget as f64) as i64,
        placed_full: 0,
        ratio,
        trimmed: Vec::new(),
        placed_turns: 0,
        placed_turn_tokens: 0,
    };

    // Phase 2: the current exchange, newest first; then the user message; then older turns.
    let mut shown_tail: Vec<Placed> = Vec::new();
    let mut gap: Vec<i64> = Vec::new();
    for (i, unit) in tail.iter().enumerate() {
        match placer.place(unit) {
            Some(placed) => shown_tail.push(placed),
            None => {
                gap = tail[i..].iter().flat_map(Unit::turn_numbers).collect();
                break;
            }
        }
    }
    placer.placed_full += user_tokens;
    let mut shown_older: Vec<Placed> = Vec::new();
    if gap.is_empty() {
        reader.page_size = placer.turns_that_fit();
        while let Some(unit) = reader.next_unit()? {
            reader.page_size = placer.turns_that_fit();
            match placer.place(&unit) {
                Some(placed) => shown_older.push(placed),
                None => break,
            }
        }
    }

    // What is left out: turns 1..K before the oldest shown turn, and a gap in the current exchange.
    let (prefix_end, gap_range, archived_turns) = match &user_turn {
        Some(user) => {
            let oldest = shown_older.last().map_or(user.turn_number, |p| p.turns[0]);
            let gap_range = gap.iter().copied().min().zip(gap.iter().copied().max());
            let before = oldest.saturating_sub(1);
            (before, gap_range, before.saturating_add(gap.len() as i64))
        }
        // No user message at all: every unit was in `tail`, and the left-out ones are the oldest.
        None => {
            let end = match gap.iter().copied().max() {
                Some(max) => max,
                None => tail.iter().map(Unit::first_turn).min().unwrap_or(1).saturating_sub(1),
            };
            (end, None, end.max(0))
        }
    };
    let omitted = prefix_end >= 1 || gap_range.is_some();
    let note = omitted.then(|| archive_note((prefix_end >= 1).then_some(prefix_end), gap_range));
    let hint = hint.filter(|_| omitted);

    let system = ContextMessage::new(Role::System, compose_system(&base_system, note.as_deref(), hint.as_deref()));
    let mut messages = vec![system];
    let mut turn_numbers = Vec::new();
    let user_placed = user_turn
        .as_ref()
        .zip(user_message)
        .map(|(turn, message)| Placed { turns: vec![turn.turn_number], messages: vec![message] });
    for placed in shown_older.into_iter().rev().chain(user_placed).chain(shown_tail.into_iter().rev()) {
        turn_numbers.extend(placed.turns);
        messages.extend(placed.messages);
    }
    let mut trimmed_turns = placer.trimmed;
    trimmed_turns.sort_unstable();
    let estimated_tokens = cost(&messages);
    debug_assert!(estimated_tokens <= budget, "assembly overran its budget: {estimated_tokens} > {budget}");
    Ok(AssembledContext {
        messages,
        manifest: ContextManifest {
            session_id: state.session.id.clone(),
            turn_numbers,
            trimmed_turns,
            state_version: state.version,
            estimated_tokens,
            budget_tokens: budget,
            usage: serde_json::Value::Null,
            created_at: 0,
        },
        archived_turns,
    })
}

/// The system message: prompt and register, then what is not in the window and the hint.
fn compose_system(base: &str, note: Option<&str>, hint: Option<&str>) -> String {
    let mut out = base.to_string();
    if note.is_some() || hint.is_some() {
        out.push_str("\n\n## Not in this window\n");
        out.push_str(&[note, hint].into_iter().flatten().collect::<Vec<_>>().join("\n"));
    }
    out
}

/// "Turns 1..K of this session are not shown here but are in the archive; …", naming a gap in the
/// current exchange too when there is one.
pub fn archive_note(prefix_end: Option<i64>, gap: Option<(i64, i64)>) -> String {
    let span = |a: i64, b: i64| if a == b { format!("turn {a}") } else { format!("turns {a}..{b}") };
    let mut parts = Vec::new();
    if let Some(k) = prefix_end {
        parts.push(format!("{} of this session", span(1, k)));
    }
    if let Some((m, n)) = gap {
        parts.push(format!("{} (earlier steps since the user's latest message)", span(m, n)));
    }
    let count = prefix_end.unwrap_or(0).saturating_add(gap.map_or(0, |(m, n)| n.saturating_sub(m).saturating_add(1)));
    let (verb, pronoun) = if count == 1 { ("is", "it") } else { ("are", "them") };
    let mut text = parts.join(" and ");
    if let Some(first) = text.get(..1) {
        text = first.to_uppercase() + &text[1..];
    }
    format!(
        "{text} {verb} not shown here but {verb} in the archive; use conversation_recall (search / range) to read {pronoun}."
    )
}

/// One unit placed in the window: its turn numbers and messages, in order.
struct Placed {
    turns: Vec<i64>,
    messages: Vec<ContextMessage>,
}

/// Fits units into the remaining budget, newest first.
struct Placer {
    remaining: i64,
    /// Full-size tokens of the newest turns below which nothing is shortened.
    protection: i64,
    /// Full-size tokens of what has been placed so far.
    placed_full: i64,
    ratio: f64,
    trimmed: Vec<i64>,
    /// Turns placed so far and their full-size tokens (for the average turn size).
    placed_turns: i64,
    placed_turn_tokens: i64,
}

impl Placer {
    /// About how many more turns of the average size seen so far fit the remaining budget (at least
    /// [`PAGE_SIZE`]): the size of the next read, so a long window takes a few reads, not one per 32
    /// turns, and little more is read than is shown.
    fn turns_that_fit(&self) -> usize {
        if self.placed_turns == 0 || self.placed_turn_tokens <= 0 {
            return PAGE_SIZE;
        }
        let average = (self.placed_turn_tokens as f64 / self.placed_turns as f64).max(1.0);
        let fit = (self.remaining.max(0) as f64 / average) as usize;
        fit.clamp(PAGE_SIZE, MAX_PAGE_SIZE)
    }

    /// Places `unit` whole (inside the protection window) or shortened; `None` when it does not fit.
    fn place(&mut self, unit: &Unit) -> Option<Placed> {
        let protected = self.placed_full < self.protection;
        let (full, _) = render_unit(unit, false);
        let full_cost = estimate_messages(&full, self.ratio);
        let (messages, trimmed, cost) = if protected && full_cost <= self.remaining {
            (full, Vec::new(), full_cost)
        } else {
            let (short, trimmed) = render_unit(unit, true);
            let cost = estimate_messages(&short, self.ratio);
            if cost > self.remaining {
                return None;
            }
            (short, trimmed, cost)
        };
        self.remaining -= cost;
        self.placed_full += full_cost;
        self.placed_turns += unit.turn_numbers().len() as i64;
        self.placed_turn_tokens += full_cost;
        self.trimmed.extend(trimmed);
        Some(Placed { turns: unit.turn_numbers(), messages })
    }
}

/// One turn, or an assistant turn with its tool results: kept or dropped as a whole.
#[derive(Debug)]
enum Unit {
    /// A user, system or plain assistant turn.
    Single(Turn),
    /// An assistant turn with tool calls, its results (first result per call), and results in its run
    /// that answer none of its calls.
    Group { assistant: Turn, results: Vec<Turn>, orphans: Vec<Turn> },
    /// A tool result with no calling assistant turn before it.
    Orphan(Turn),
}

impl Unit {
    /// Turn numbers in message order: the assistant, its results, then the orphans.
    fn turn_numbers(&self) -> Vec<i64> {
        match self {
            Unit::Single(t) | Unit::Orphan(t) => vec![t.turn_number],
            Unit::Group { assistant, results, orphans } => {
                std::iter::once(assistant).chain(results).chain(orphans).map(|t| t.turn_number).collect()
            }
        }
    }

    fn first_turn(&self) -> i64 {
        match self {
            Unit::Single(t) | Unit::Orphan(t) => t.turn_number,
            Unit::Group { assistant, .. } => assistant.turn_number,
        }
    }

    fn last_turn(&self) -> i64 {
        self.turn_numbers().into_iter().max().unwrap_or(0)
    }
}

/// Reads turns newest-first, one page at a time, and cuts them into units.
struct Reader<'a, S: ?Sized> {
    source: &'a S,
    /// Turns read but not yet handed out, oldest first.
    buffer: VecDeque<Turn>,
    oldest_read: Option<i64>,
    exhausted: bool,
    /// Turns to ask for at the next read.
    page_size: usize,
}

impl<'a, S: TurnSource + ?Sized> Reader<'a, S> {
    fn new(source: &'a S) -> Reader<'a, S> {
        Reader { source, buffer: VecDeque::new(), oldest_read: None, exhausted: false, page_size: PAGE_SIZE }
    }

    /// Reads the next older page in front of the buffer; `false` when there is nothing older.
    fn fetch(&mut self) -> Result<bool> {
        if self.exhausted {
            return Ok(false);
        }
        let limit = self.page_size.clamp(1, MAX_PAGE_SIZE);
        let page = self.source.turns_before(self.oldest_read, limit)?;
        let full_page = page.len() >= limit;
        // Defend against a source that returns too much or out of order: keep only older turns, in order.
        let mut page: Vec<Turn> =
            page.into_iter().filter(|t| self.oldest_read.is_none_or(|o| t.turn_number < o)).collect();
        page.sort_by_key(|t| t.turn_number);
        page.dedup_by_key(|t| t.turn_number);
        let Some(first) = page.first() else {
            self.exhausted = true;
            return Ok(false);
        };
        self.oldest_read = Some(first.turn_number);
        self.exhausted = !full_page || first.turn_number <= 1;
        for turn in page.into_iter().rev() {
            self.buffer.push_front(turn);
        }
        Ok(true)
    }

    /// The newest unit not yet handed out.
    fn next_unit(&mut self) -> Result<Option<Unit>> {
        loop {
            let Some(last) = self.buffer.back() else {
                if self.fetch()? {
                    continue;
                }
                return Ok(None);
            };
            match last.role {
                Role::Tool => {
                    let run_start = self.buffer.iter().rposition(|t| t.role != Role::Tool).map_or(0, |i| i + 1);
                    if run_start == 0 && self.fetch()? {
                        continue;
                    }
                    let caller = run_start.checked_sub(1).map(|i| &self.buffer[i]);
                    if caller.is_some_and(|t| t.role == Role::Assistant && !t.tool_calls.is_empty()) {
                        let run: Vec<Turn> = self.buffer.drain(run_start..).collect();
                        let assistant = self.buffer.pop_back().expect("the caller is in the buffer");
                        let (results, orphans) = split_results(&assistant, run);
                        return Ok(Some(Unit::Group { assistant, results, orphans }));
                    }
                    return Ok(self.buffer.pop_back().map(Unit::Orphan));
                }
                Role::Assistant if !last.tool_calls.is_empty() => {
                    let assistant = self.buffer.pop_back().expect("just looked at it");
                    return Ok(Some(Unit::Group { assistant, results: Vec::new(), orphans: Vec::new() }));
                }
                _ => return Ok(self.buffer.pop_back().map(Unit::Single)),
            }
        }
    }
}

/// The first result for each of the assistant's calls, and the rest (results answering nothing it called,
/// or answering a call twice).
fn split_results(assistant: &Turn, run: Vec<Turn>) -> (Vec<Turn>, Vec<Turn>) {
    let mut results: Vec<Turn> = Vec::new();
    let mut orphans = Vec::new();
    for turn in run {
        let id = turn.tool_call_id.as_deref();
        let called = id.is_some_and(|id| assistant.tool_calls.iter().any(|c| c.id == id));
        let answered = results.iter().any(|r| r.tool_call_id.as_deref() == id);
        if called && !answered {
            results.push(turn);
        } else {
            orphans.push(turn);
        }
    }
    (results, orphans)
}

const NO_RESULT: &str = "[No result was recorded for this call: it was interrupted or never ran. Call the tool again if you still need its result.]";

/// The messages of a unit, and the turns whose content was shortened (only when `shorten`).
fn render_unit(unit: &Unit, shorten: bool) -> (Vec<ContextMessage>, Vec<i64>) {
    let mut trimmed = Vec::new();
    let mut text = |turn: &Turn| -> String {
        if shorten && turn.content.len() > TRIM_THRESHOLD_CHARS && turn.content.chars().count() > TRIM_THRESHOLD_CHARS {
            trimmed.push(turn.turn_number);
            head_tail(&turn.content, turn.turn_number)
        } else {
            turn.content.clone()
        }
    };
    let mut out = Vec::new();
    match unit {
        Unit::Single(turn) => {
            let content = text(turn);
            out.push(match turn.role {
                Role::Assistant => ContextMessage::new(Role::Assistant, with_status_note(content, turn.status)),
                role => ContextMessage::new(role, content),
            });
        }
        Unit::Orphan(turn) => {
            let content = text(turn);
            out.push(orphan_message(turn, content));
        }
        Unit::Group { assistant, results, orphans } => {
            let finished = assistant.status == TurnStatus::Complete;
            let mut calls: Vec<ToolCall> = Vec::new();
            for call in &assistant.tool_calls {
                let answered = results.iter().any(|r| r.tool_call_id.as_deref() == Some(call.id.as_str()));
                if (finished || answered) && !calls.iter().any(|c| c.id == call.id) {
                    calls.push(call.clone());
                }
            }
            let content = text(assistant);
            let mut message = ContextMessage::new(Role::Assistant, with_status_note(content, assistant.status));
            message.tool_calls = calls.clone();
            out.push(message);
            for call in &calls {
                let result = results.iter().find(|r| r.tool_call_id.as_deref() == Some(call.id.as_str()));
                let content = match result {
                    Some(r) if r.content.is_empty() => "(no output)".to_string(),
                    Some(r) => text(r),
                    None => NO_RESULT.to_string(),
                };
                let name = result.and_then(|r| r.tool_name.clone()).unwrap_or_else(|| call.name.clone());
                out.push(ContextMessage {
                    tool_call_id: Some(call.id.clone()),
                    name: Some(name),
                    ..ContextMessage::new(Role::Tool, content)
                });
            }
            for turn in orphans {
                let content = text(turn);
                out.push(orphan_message(turn, content));
            }
        }
    }
    (out, trimmed)
}

fn orphan_message(turn: &Turn, content: String) -> ContextMessage {
    let tool = turn.tool_name.as_deref().unwrap_or("a tool");
    ContextMessage::new(
        Role::System,
        format!("[Turn {}: a result from {tool} that arrived outside its tool call]\n{content}", turn.turn_number),
    )
}

fn with_status_note(content: String, status: TurnStatus) -> String {
    let note = match status {
        TurnStatus::Complete => return content,
        TurnStatus::Interrupted => {
            "[This reply was interrupted before it finished; the text above is all that was received.]"
        }
        TurnStatus::Error => "[This reply ended with an error; the text above is all that was received.]",
    };
    if content.trim().is_empty() {
        note.to_string()
    } else {
        format!("{content}\n\n{note}")
    }
}

/// `content` as its head and tail around a marker naming the archive turn that holds the full text.
fn head_tail(content: &str, turn_number: i64) -> String {
    let total = content.chars().count();
    let byte_at = |chars: usize| content.char_indices().nth(chars).map_or(content.len(), |(i, _)| i);
    let mut head_end = byte_at(TRIM_HEAD_CHARS);
    let mut tail_start = byte_at(total - TRIM_TAIL_CHARS);
    // Cut at a line break when one is near, so lines are not split.
    if let Some(nl) = content[..head_end].rfind('\n').filter(|&i| i >= head_end * 3 / 4) {
        head_end = nl;
    }
    let tail_window =
        content[tail_start..].char_indices().nth(TRIM_TAIL_CHARS / 4).map_or(content.len(), |(i, _)| tail_start + i);
    if let Some(nl) = content[tail_start..tail_window].find('\n') {
        tail_start += nl + 1;
    }
    let omitted = content[head_end..tail_start].chars().count();
    format!(
        "{}\n[… {} chars omitted; full text: conversation_recall range {turn_number} …]\n{}",
        &content[..head_end],
        thousands(omitted as i64),
        &content[tail_start..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{apply_turn, ExtractionRules};
    use crate::test_support::{Convo, CountingSource};
    use expect_test::{expect, Expect};
    use proptest::prelude::*;

    const PROMPT: &str = "You are a test assistant. Use conversation_recall for older turns.";

    fn settings(context_window: i64, output_reserve: i64) -> ContextSettings {
        ContextSettings { context_window, output_reserve, ..ContextSettings::default() }
    }

    fn state_for(turns: &[Turn]) -> SessionState {
        let mut state = SessionState::new("s1", "/w", "m");
        for turn in turns {
            apply_turn(&mut state, turn, &ExtractionRules::default());
        }
        state
    }

    /// Long contents as their first and last 40 characters around every marker line they contain.
    fn abbreviate(content: &str) -> String {
        let count = content.chars().count();
        if count <= 240 {
            return content.to_string();
        }
        let head: String = content.chars().take(40).collect();
        let tail: String = content.chars().skip(count - 40).collect();
        let markers: Vec<&str> = content.lines().filter(|l| l.contains("omitted; full text")).collect();
        let middle = if markers.is_empty() { String::new() } else { format!("\n{}\n", markers.join("\n")) };
        format!("{head}⟨…{count} chars…⟩{middle}{tail}")
    }

    /// The window as text: one block per message; the register is shown as its line count unless `full`.
    fn show(ctx: &AssembledContext, full_system: bool) -> String {
        let mut out = String::new();
        for (i, m) in ctx.messages.iter().enumerate() {
            let content = if i == 0 && full_system {
                m.content.clone()
            } else if i == 0 {
                let (before, rest) = m.content.split_once("```yaml\n").expect("the register");
                let (yaml, after) = rest.split_once("```").expect("the register's end");
                format!("{before}```yaml ⟨{} lines⟩```{after}", yaml.lines().count())
            } else {
                abbreviate(&m.content)
            };
            let label = match (&m.tool_call_id, &m.name) {
                (Some(id), Some(name)) => format!("tool {name}#{id}"),
                _ => m.role.to_string(),
            };
            out.push_str(&format!("── {label}\n"));
            if !content.is_empty() {
                out.push_str(&format!("{content}\n"));
            }
            for call in &m.tool_calls {
                out.push_str(&format!("  → {}#{} {}\n", call.name, call.id, call.arguments));
            }
        }
        let man = &ctx.manifest;
        out.push_str(&format!(
            "══ turns {:?} trimmed {:?} · state v{} · {}/{} tokens · {} archived\n",
            man.turn_numbers,
            man.trimmed_turns,
            man.state_version,
            man.estimated_tokens,
            man.budget_tokens,
            ctx.archived_turns
        ));
        out
    }

    /// Assembles `turns` with `settings` and compares the window with the snapshot.
    fn check(turns: Vec<Turn>, settings: ContextSettings, expect: Expect) {
        let state = state_for(&turns);
        let ctx = assemble_context(&settings, PROMPT, &state, turns.as_slice()).expect("assembles");
        assert_invariants(&turns, &settings, &ctx);
        expect.assert_eq(&show(&ctx, false));
    }

    /// What must hold for every assembled window.
    fn assert_invariants(turns: &[Turn], settings: &ContextSettings, ctx: &AssembledContext) {
        let ratio = settings.ratio();
        let total = estimate_messages(&ctx.messages, ratio);
        assert!(total <= settings.budget(), "over budget: {total} > {}\n{}", settings.budget(), show(ctx, true));
        assert_eq!(total, ctx.manifest.estimated_tokens);
        assert_eq!(ctx.messages[0].role, Role::System);
        // Tool messages come right after the assistant message that called them, all of them.
        let mut i = 0;
        while i < ctx.messages.len() {
            let m = &ctx.messages[i];
            assert!(m.role != Role::Tool, "tool message without its call at {i}:\n{}", show(ctx, true));
            i += 1;
            if m.role == Role::Assistant && !m.tool_calls.is_empty() {
                for call in &m.tool_calls {
                    let r = ctx
                        .messages
                        .get(i)
                        .unwrap_or_else(|| panic!("call {} has no result:\n{}", call.id, show(ctx, true)));
                    assert_eq!(
                        (r.role, r.tool_call_id.as_deref()),
                        (Role::Tool, Some(call.id.as_str())),
                        "\n{}",
                        show(ctx, true)
                    );
                    i += 1;
                }
            }
        }
        // The newest user message is always there, whole.
        if let Some(user) = turns.iter().rev().find(|t| t.role == Role::User) {
            assert!(ctx.manifest.turn_numbers.contains(&user.turn_number), "newest user message missing");
            assert!(ctx.messages.iter().any(|m| m.role == Role::User && m.content == user.content));
        }
        let mut shown = ctx.manifest.turn_numbers.clone();
        shown.sort_unstable();
        shown.dedup();
        assert_eq!(shown.len(), ctx.manifest.turn_numbers.len(), "a turn shown twice");
        assert_eq!(shown.len() as i64 + ctx.archived_turns, turns.len() as i64, "every turn is shown or archived");
        let has_note = ctx.messages[0].content.contains("not shown here but");
        assert_eq!(has_note, ctx.archived_turns > 0, "the archive note appears exactly when turns are left out");
    }

    #[test]
    fn short_session_fits_whole() {
        let mut c = Convo::new();
        c.user("Hi! We use JWT for auth.").assistant("Noted: JWT it is.").user("Add a login endpoint.");
        let turns = c.build();
        let state = state_for(&turns);
        let ctx = assemble_context(&ContextSettings::default(), PROMPT, &state, turns.as_slice()).unwrap();
        assert_invariants(&turns, &ContextSettings::default(), &ctx);
        expect![[r#"
            ── system
            You are a test assistant. Use conversation_recall for older turns.

            ## Session state
            ```yaml
            session:
              id: "s1"
              workspace: "/w"
              model: "m"
              turn_count: 3
              total_tokens: 17
            files_touched: []
            key_decisions:
              - "We use JWT for auth. (turn 1)"
            current_focus: "Add a login endpoint."
            errors_resolved: []
            open_tasks: []
            ```
            ── user
            Hi! We use JWT for auth.
            ── assistant
            Noted: JWT it is.
            ── user
            Add a login endpoint.
            ══ turns [1, 2, 3] trimmed [] · state v3 · 115/24576 tokens · 0 archived
        "#]]
        .assert_eq(&show(&ctx, true));
    }

    #[test]
    fn long_session_leaves_out_old_turns_and_hints_at_recall() {
        let mut c = Convo::new();
        for i in 1..=20 {
            c.user(&format!("Question {i}: how should the {i}th module handle retries and timeouts?"));
            c.assistant(&format!("Answer {i}: use exponential backoff with jitter, capped at {i} seconds."));
        }
        c.user("Do the same as before for module 21.");
        check(
            c.build(),
            settings(1_000, 200),
            expect![[r#"
                ── system
                You are a test assistant. Use conversation_recall for older turns.

                ## Session state
                ```yaml ⟨11 lines⟩```

                ## Not in this window
                Turns 1..13 of this session are not shown here but are in the archive; use conversation_recall (search / range) to read them.
                The user's latest message refers to earlier conversation ("as before") that may not be in this window. Call conversation_recall (search, or range) to find it before answering; do not guess, and do not ask the user to repeat it.
                ── assistant
                Answer 7: use exponential backoff with jitter, capped at 7 seconds.
                ── user
                Question 8: how should the 8th module handle retries and timeouts?
                ── assistant
                Answer 8: use exponential backoff with jitter, capped at 8 seconds.
                ── user
                Question 9: how should the 9th module handle retries and timeouts?
                ── assistant
                Answer 9: use exponential backoff with jitter, capped at 9 seconds.
                ── user
                Question 10: how should the 10th module handle retries and timeouts?
                ── assistant
                Answer 10: use exponential backoff with jitter, capped at 10 seconds.
                ── user
                Question 11: how should the 11th module handle retries and timeouts?
                ── assistant
                Answer 11: use exponential backoff with jitter, capped at 11 seconds.
                ── user
                Question 12: how should the 12th module handle retries and timeouts?
                ── assistant
                Answer 12: use exponential backoff with jitter, capped at 12 seconds.
                ── user
                Question 13: how should the 13th module handle retries and timeouts?
                ── assistant
                Answer 13: use exponential backoff with jitter, capped at 13 seconds.
                ── user
                Question 14: how should the 14th module handle retries and timeouts?
                ── assistant
                Answer 14: use exponential backoff with jitter, capped at 14 seconds.
                ── user
                Question 15: how should the 15th module handle retries and timeouts?
                ── assistant
                Answer 15: use exponential backoff with jitter, capped at 15 seconds.
                ── user
                Question 16: how should the 16th module handle retries and timeouts?
                ── assistant
                Answer 16: use exponential backoff with jitter, capped at 16 seconds.
                ── user
                Question 17: how should the 17th module handle retries and timeouts?
                ── assistant
                Answer 17: use exponential backoff with jitter, capped at 17 seconds.
                ── user
                Question 18: how should the 18th module handle retries and timeouts?
                ── assistant
                Answer 18: use exponential backoff with jitter, capped at 18 seconds.
                ── user
                Question 19: how should the 19th module handle retries and timeouts?
                ── assistant
                Answer 19: use exponential backoff with jitter, capped at 19 seconds.
                ── user
                Question 20: how should the 20th module handle retries and timeouts?
                ── assistant
                Answer 20: use exponential backoff with jitter, capped at 20 seconds.
                ── user
                Do the same as before for module 21.
                ══ turns [14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41] trimmed [] · state v41 · 767/800 tokens · 13 archived
            "#]],
        );
    }

    #[test]
    fn tool_heavy_session_shortens_old_outputs() {
        let long_file: String =
            (1..=150).map(|i| format!("line {i:03}: def handler_{i}(request): return ok\n")).collect();
        let recall_output: String =
            (1..=20).map(|i| format!("[Turn {i}] user: something about sessions and cookies, item {i:02}\n")).collect();
        let mut c = Convo::new();
        c.user("Read the auth module and run the tests.")
            .calls(
                "Reading it and running the suite.",
                &[("c1", "read_file", r#"{"path":"src/auth.py"}"#), ("c2", "bash", r#"{"command":"pytest -q"}"#)],
            )
            .result("c1", "read_file", &long_file)
            .result("c2", "bash", "3 passed in 0.12s")
            .assistant("The tests pass; the module has 150 handlers.")
            .user("What did we decide about tokens? Check the archive.")
            .calls("", &[("c3", "conversation_recall", r#"{"action":"search","query":"tokens"}"#)])
            .result("c3", "conversation_recall", &recall_output)
            .assistant("Nothing about tokens yet.")
            .user("Then show me the config.")
            .calls("", &[("c4", "read_file", r#"{"path":"config.py"}"#)])
            .result("c4", "read_file", "DEBUG = True");
        check(
            c.build(),
            settings(3_000, 1_000),
            expect![[r#"
                ── system
                You are a test assistant. Use conversation_recall for older turns.

                ## Session state
                ```yaml ⟨13 lines⟩```
                ── user
                Read the auth module and run the tests.
                ── assistant
                Reading it and running the suite.
                  → read_file#c1 {"path":"src/auth.py"}
                  → bash#c2 {"command":"pytest -q"}
                ── tool read_file#c1
                line 001: def handler_1(request): return⟨…1190 chars…⟩
                [… 5,669 chars omitted; full text: conversation_recall range 3 …]
                50: def handler_150(request): return ok

                ── tool bash#c2
                3 passed in 0.12s
                ── assistant
                The tests pass; the module has 150 handlers.
                ── user
                What did we decide about tokens? Check the archive.
                ── assistant
                  → conversation_recall#c3 {"action":"search","query":"tokens"}
                ── tool conversation_recall#c3
                [Turn 1] user: something about sessions ⟨…1231 chars…⟩ing about sessions and cookies, item 20

                ── assistant
                Nothing about tokens yet.
                ── user
                Then show me the config.
                ── assistant
                  → read_file#c4 {"path":"config.py"}
                ── tool read_file#c4
                DEBUG = True
                ══ turns [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] trimmed [3] · state v12 · 894/2000 tokens · 0 archived
            "#]],
        );
    }

    #[test]
    fn incomplete_groups_interrupted_turns_and_late_results() {
        let mut c = Convo::new();
        c.user("Build it.")
            .calls("", &[("c1", "bash", r#"{"command":"make"}"#)])
            // The tab was closed while `make` ran: no result was ever stored.
            .user("Hello? Did it run?")
            .calls("Let me check the log and", &[("c2", "read_file", r#"{"path":"build.lo"#)])
            .status(TurnStatus::Interrupted)
            .user("Continue.")
            .assistant("")
            .status(TurnStatus::Error)
            .calls("", &[("c3", "bash", r#"{"command":"make"}"#), ("c4", "bash", r#"{"command":"make test"}"#)])
            .result("c3", "bash", "built")
            .result("c3", "bash", "built (duplicate delivery)")
            .result("c9", "delegate_task", "Task completed: \"Write docs\"")
            .result("c4", "bash", "")
            .calls("Now reading the result file.", &[("c5", "read_file", r#"{"path":"out.txt"}"#)]);
        check(
            c.build(),
            ContextSettings::default(),
            expect![[r#"
            ── system
            You are a test assistant. Use conversation_recall for older turns.

            ## Session state
            ```yaml ⟨12 lines⟩```
            ── user
            Build it.
            ── assistant
              → bash#c1 {"command":"make"}
            ── tool bash#c1
            [No result was recorded for this call: it was interrupted or never ran. Call the tool again if you still need its result.]
            ── user
            Hello? Did it run?
            ── assistant
            Let me check the log and

            [This reply was interrupted before it finished; the text above is all that was received.]
            ── user
            Continue.
            ── assistant
            [This reply ended with an error; the text above is all that was received.]
            ── assistant
              → bash#c3 {"command":"make"}
              → bash#c4 {"command":"make test"}
            ── tool bash#c3
            built
            ── tool bash#c4
            (no output)
            ── system
            [Turn 9: a result from bash that arrived outside its tool call]
            built (duplicate delivery)
            ── system
            [Turn 10: a result from delegate_task that arrived outside its tool call]
            Task completed: "Write docs"
            ── assistant
            Now reading the result file.
              → read_file#c5 {"path":"out.txt"}
            ── tool read_file#c5
            [No result was recorded for this call: it was interrupted or never ran. Call the tool again if you still need its result.]
            ══ turns [1, 2, 3, 4, 5, 6, 7, 8, 11, 9, 10, 12] trimmed [] · state v12 · 381/24576 tokens · 0 archived
        "#]],
        );
    }

    #[test]
    fn delegated_tasks_come_back_into_the_conversation() {
        let mut c = Convo::new();
        c.user("Migrate src/routes to TypeScript; don't touch the migrations.")
            .calls("", &[("d1", "delegate_task", r#"{"goal":"Migrate src/routes to TypeScript","context":{"constraints":["don't touch the migrations"]}}"#)])
            .result(
                "d1",
                "delegate_task",
                "Task completed: \"Migrate src/routes to TypeScript\"\n\nSubtasks:\n  [x] Convert routes\n  [x] Update imports\n\nFiles changed:\n  - src/routes/index.ts (created)\n  - src/app.ts (modified)\n\nVerification: All subtasks passed tier-1 verification.",
            )
            .assistant("Done: routes are TypeScript now, 2 files changed, all verified.")
            .user("Great. Also write the docs, in the background.")
            .calls("", &[("d2", "delegate_task", r#"{"goal":"Write docs for the routes","wait":false}"#)])
            .result("d2", "delegate_task", "Task submitted: task-7")
            .assistant("Started task-7; I'll report when it ends.")
            .system("Task completed: \"Write docs for the routes\"\n\nFiles changed:\n  - docs/routes.md (created)")
            .user("Is it done?");
        check(
            c.build(),
            ContextSettings::default(),
            expect![[r#"
            ── system
            You are a test assistant. Use conversation_recall for older turns.

            ## Session state
            ```yaml ⟨18 lines⟩```
            ── user
            Migrate src/routes to TypeScript; don't touch the migrations.
            ── assistant
              → delegate_task#d1 {"goal":"Migrate src/routes to TypeScript","context":{"constraints":["don't touch the migrations"]}}
            ── tool delegate_task#d1
            Task completed: "Migrate src/routes to TypeScript"

            Subtasks:
              [x] Convert routes
              [x] Update imports

            Files changed:
              - src/routes/index.ts (created)
              - src/app.ts (modified)

            Verification: All subtasks passed tier-1 verification.
            ── assistant
            Done: routes are TypeScript now, 2 files changed, all verified.
            ── user
            Great. Also write the docs, in the background.
            ── assistant
              → delegate_task#d2 {"goal":"Write docs for the routes","wait":false}
            ── tool delegate_task#d2
            Task submitted: task-7
            ── assistant
            Started task-7; I'll report when it ends.
            ── system
            Task completed: "Write docs for the routes"

            Files changed:
              - docs/routes.md (created)
            ── user
            Is it done?
            ══ turns [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] trimmed [] · state v10 · 445/24576 tokens · 0 archived
        "#]],
        );
    }

    #[test]
    fn a_too_long_current_exchange_leaves_a_gap() {
        let mut c = Convo::new();
        c.user("Old question.").assistant("Old answer.").user("Fix every lint in the crate.");
        for i in 1..=12 {
            let id = format!("c{i}");
            c.calls("", &[(&id, "bash", &format!(r#"{{"command":"cargo clippy -p part{i}"}}"#))]).result(
                &id,
                "bash",
                &format!("warning: unused variable in part{i} {}", "·".repeat(300)),
            );
        }
        check(
            c.build(),
            settings(1_500, 300),
            expect![[r#"
            ── system
            You are a test assistant. Use conversation_recall for older turns.

            ## Session state
            ```yaml ⟨11 lines⟩```

            ## Not in this window
            Turns 1..2 of this session and turns 4..9 (earlier steps since the user's latest message) are not shown here but are in the archive; use conversation_recall (search / range) to read them.
            ── user
            Fix every lint in the crate.
            ── assistant
              → bash#c4 {"command":"cargo clippy -p part4"}
            ── tool bash#c4
            warning: unused variable in part4 ······⟨…334 chars…⟩········································
            ── assistant
              → bash#c5 {"command":"cargo clippy -p part5"}
            ── tool bash#c5
            warning: unused variable in part5 ······⟨…334 chars…⟩········································
            ── assistant
              → bash#c6 {"command":"cargo clippy -p part6"}
            ── tool bash#c6
            warning: unused variable in part6 ······⟨…334 chars…⟩········································
            ── assistant
              → bash#c7 {"command":"cargo clippy -p part7"}
            ── tool bash#c7
            warning: unused variable in part7 ······⟨…334 chars…⟩········································
            ── assistant
              → bash#c8 {"command":"cargo clippy -p part8"}
            ── tool bash#c8
            warning: unused variable in part8 ······⟨…334 chars…⟩········································
            ── assistant
              → bash#c9 {"command":"cargo clippy -p part9"}
            ── tool bash#c9
            warning: unused variable in part9 ······⟨…334 chars…⟩········································
            ── assistant
              → bash#c10 {"command":"cargo clippy -p part10"}
            ── tool bash#c10
            warning: unused variable in part10 ·····⟨…335 chars…⟩········································
            ── assistant
              → bash#c11 {"command":"cargo clippy -p part11"}
            ── tool bash#c11
            warning: unused variable in part11 ·····⟨…335 chars…⟩········································
            ── assistant
              → bash#c12 {"command":"cargo clippy -p part12"}
            ── tool bash#c12
            warning: unused variable in part12 ·····⟨…335 chars…⟩········································
            ══ turns [3, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27] trimmed [] · state v27 · 1125/1200 tokens · 8 archived
        "#]],
        );
    }

    #[test]
    fn mandatory_parts_that_do_not_fit_are_an_error() {
        let mut c = Convo::new();
        c.user("short").assistant("ok").user(&"x".repeat(40_000));
        let turns = c.build();
        let err = assemble_context(&settings(8_000, 1_000), PROMPT, &state_for(&turns), turns.as_slice()).unwrap_err();
        let Error::ContextOverflow { needed, available } = err else { panic!("{err:?}") };
        assert_eq!(available, 7_000);
        assert!(needed > 10_000, "{needed}");
        let err = assemble_context(&settings(1_000, 1_000), PROMPT, &state_for(&turns), turns.as_slice()).unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err:?}");
        // A message that fits exactly is sent.
        let ok = assemble_context(&settings(40_000, 8_192), PROMPT, &state_for(&turns), turns.as_slice()).unwrap();
        assert_invariants(&turns, &settings(40_000, 8_192), &ok);
    }

    #[test]
    fn a_session_without_user_messages_or_turns() {
        let ctx = assemble_context(&ContextSettings::default(), PROMPT, &SessionState::default(), &[][..]).unwrap();
        assert_eq!((ctx.messages.len(), ctx.archived_turns), (1, 0));
        let mut c = Convo::new();
        for i in 0..40 {
            c.system(&format!("Notice {i}: {}", "n".repeat(200)));
        }
        let turns = c.build();
        let ctx = assemble_context(&settings(1_200, 200), PROMPT, &state_for(&turns), turns.as_slice()).unwrap();
        assert_invariants(&turns, &settings(1_200, 200), &ctx);
        assert!(ctx.archived_turns > 0);
        assert!(ctx.messages[0].content.contains(&format!("Turns 1..{} of this session", ctx.archived_turns)));
    }

    #[test]
    fn head_and_tail_name_the_archive_turn() {
        let content: String = (0..3_000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        let short = head_tail(&content, 212);
        assert!(short.starts_with(&content[..TRIM_HEAD_CHARS]));
        assert!(short.ends_with(&content[content.len() - TRIM_TAIL_CHARS..]));
        assert!(short.contains("\n[… 1,800 chars omitted; full text: conversation_recall range 212 …]\n"), "{short}");
        let lines: String = (0..400).map(|i| format!("row {i:04}\n")).collect();
        let short = head_tail(&lines, 7);
        assert!(
            short.lines().all(|l| l.starts_with("row ") && l.len() == 8 || l.starts_with("[…")),
            "lines are cut whole:\n{short}"
        );
        let wide = "é".repeat(3_000);
        assert!(head_tail(&wide, 1).contains("1,800 chars omitted"));
        assert_eq!(
            (thousands(0), thousands(999), thousands(1_000), thousands(18_402), thousands(-1_234_567)),
            ("0".into(), "999".into(), "1,000".into(), "18,402".into(), "-1,234,567".into())
        );
    }

    #[test]
    fn archive_notes() {
        let rows = [
            (Some(1), None, "Turn 1 of this session is not shown here but is in the archive; use conversation_recall (search / range) to read it."),
            (Some(41), None, "Turns 1..41 of this session are not shown here but are in the archive; use conversation_recall (search / range) to read them."),
            (Some(3), Some((5, 9)), "Turns 1..3 of this session and turns 5..9 (earlier steps since the user's latest message) are not shown here but are in the archive; use conversation_recall (search / range) to read them."),
            (None, Some((2, 2)), "Turn 2 (earlier steps since the user's latest message) is not shown here but is in the archive; use conversation_recall (search / range) to read it."),
        ];
        for (prefix, gap, expect) in rows {
            assert_eq!(archive_note(prefix, gap), expect);
        }
    }

    #[test]
    fn reads_only_the_recent_turns_of_a_huge_session() {
        let mut c = Convo::new();
        for i in 0..5_000 {
            c.user(&format!("{i:05} {}", "question text ".repeat(28)));
            c.assistant(&format!("{i:05} {}", "answer text. ".repeat(30)));
        }
        let turns = c.build();
        assert_eq!(turns.len(), 10_000);
        let source = CountingSource::new(turns);
        let s = settings(32_768, 8_192);
        let ctx = assemble_context(&s, PROMPT, &SessionState::default(), &source).unwrap();
        let shown = ctx.manifest.turn_numbers.len();
        let read = source.read.get();
        assert!(shown > 150, "only {shown} turns fit");
        assert!(read < 300 && read <= shown + PAGE_SIZE, "read {read} turns to show {shown}");
        assert_eq!(ctx.archived_turns, 10_000 - shown as i64);
        assert_eq!(*ctx.manifest.turn_numbers.last().unwrap(), 10_000);
    }

    /// A random conversation: a list of steps, each one or more turns.
    #[derive(Debug, Clone)]
    enum Step {
        User(usize),
        Assistant(usize, TurnStatus),
        System(usize),
        /// Result sizes per call (`None`: the result was never stored), an extra unrelated result, and the
        /// assistant turn's status.
        Calls(Vec<Option<usize>>, bool, TurnStatus),
    }

    fn status() -> impl Strategy<Value = TurnStatus> {
        prop_oneof![8 => Just(TurnStatus::Complete), 1 => Just(TurnStatus::Interrupted), 1 => Just(TurnStatus::Error)]
    }

    fn size() -> impl Strategy<Value = usize> {
        prop_oneof![6 => 0usize..200, 3 => 200usize..3_000, 1 => 3_000usize..20_000]
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            3 => size().prop_map(Step::User),
            3 => (size(), status()).prop_map(|(n, s)| Step::Assistant(n, s)),
            1 => size().prop_map(Step::System),
            3 => (prop::collection::vec(prop::option::weighted(0.9, size()), 1..4), prop::bool::weighted(0.1), status())
                .prop_map(|(r, extra, s)| Step::Calls(r, extra, s)),
        ]
    }

    fn build(steps: &[Step]) -> Vec<Turn> {
        let text = |n: usize, tag: &str| -> String { format!("{tag} {}", "word ".repeat(n / 5)) };
        let mut c = Convo::new();
        for (k, step) in steps.iter().enumerate() {
            match step {
                Step::User(n) => {
                    c.user(&text(*n, "user"));
                }
                Step::Assistant(n, s) => {
                    c.assistant(&text(*n, "assistant")).status(*s);
                }
                Step::System(n) => {
                    c.system(&text(*n, "system"));
                }
                Step::Calls(results, extra, s) => {
                    let ids: Vec<String> = (0..results.len()).map(|i| format!("k{k}c{i}")).collect();
                    let calls: Vec<(&str, &str, &str)> =
                        ids.iter().map(|id| (id.as_str(), "bash", r#"{"command":"ls"}"#)).collect();
                    c.calls("calling", &calls).status(*s);
                    for (id, r) in ids.iter().zip(results) {
                        if let Some(n) = r {
                            c.result(id, "bash", &text(*n, "output"));
                        }
                    }
                    if *extra {
                        c.result("stray", "delegate_task", "late result");
                    }
                }
            }
        }
        c.build()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        #[test]
        fn windows_respect_budget_pairing_and_the_user_message(
            steps in prop::collection::vec(step(), 0..40),
            window in 300i64..12_000,
            reserve in 0i64..300,
            protection in 0.0f64..1.0,
            ratio in 1.0f64..6.0,
        ) {
            let turns = build(&steps);
            let s = ContextSettings { context_window: window, output_reserve: reserve, protection_fraction: protection, chars_per_token: ratio };
            let state = state_for(&turns);
            let source = CountingSource::new(turns.clone());
            match assemble_context(&s, PROMPT, &state, &source) {
                Ok(ctx) => assert_invariants(&turns, &s, &ctx),
                Err(Error::ContextOverflow { needed, available }) => {
                    // Only when the mandatory parts (system message, newest user message, archive note)
                    // really exceed the budget.
                    prop_assert_eq!(available, s.budget());
                    prop_assert!(needed > available);
                    let system = format!("{PROMPT}\n\n## Session state\n```yaml\n{}```", render_yaml(&state));
                    let mut mandatory = vec![ContextMessage::new(Role::System, system)];
                    if let Some(user) = turns.iter().rev().find(|t| t.role == Role::User) {
                        mandatory.push(ContextMessage::new(Role::User, user.content.clone()));
                    }
                    let floor = estimate_messages(&mandatory, ratio);
                    let note = estimate_with_ratio(&archive_note(Some(99_999), Some((99_999, 99_999))), ratio) + 40;
                    prop_assert!(floor <= needed && needed <= floor + note, "needed {} vs floor {}", needed, floor);
                }
                Err(e) => prop_assert!(false, "unexpected error {e:?}"),
            }
        }
    }
}
