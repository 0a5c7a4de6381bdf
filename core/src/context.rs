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
//! 5. **Reasoning**: an assistant turn with tool calls carries its reasoning ([`ReasoningReplay`]) only
//!    in the current exchange (the steps after the newest user message), where providers require it
//!    back: Anthropic wants the thinking blocks of the tool loop in progress, with their signatures,
//!    DeepSeek `reasoning_content` on the assistant messages with tool calls since the user's message.
//!    Both accept (and ignore, or strip) older reasoning, so it is dropped. What is sent is counted in
//!    the budget like the content, and the manifest names its turns (`reasoning_turns`).
//! 6. **Notes**: when turns are left out, the system message ends with "Turns 1..K of this session are not
//!    shown here but are in the archive; …", and with the dangling-reference hint when the newest user
//!    message refers back ([`crate::hints`]).
//!
//! 7. **Attachments**: a text-like file is sent inline as a fenced block headed by its name (part of
//!    the turn's content, so shortened like it), another file as a line naming it. Images go with user
//!    messages, counted by the provider's formula ([`ImageTokens`]); outside the protection window (or
//!    when a unit does not fit whole) an image is a placeholder "[image: name, turn N — in the archive]"
//!    and the turn is listed as shortened. Only the images finally sent are read ([`load_images`]).
//!
//! Tokens are estimated at `chars_per_token` per message (content, tool calls, ids) plus
//! [`MESSAGE_OVERHEAD_TOKENS`]; the estimate of the returned messages never exceeds the budget.

use serde::{Deserialize, Serialize};

use crate::hints::{find_back_reference, hint_text};
use crate::state::{render_yaml, SessionState};
use crate::tokens::{estimate_with_ratio, DEFAULT_CHARS_PER_TOKEN};
use crate::{ContextManifest, Error, Result, Role, Turn};

mod attachments;
mod units;

pub use crate::message::{ContextMessage, ImagePart, ImageTokens, ReasoningReplay, UNKNOWN_IMAGE_TOKENS};
pub use attachments::{fenced, file_line, image_placeholder, load_images};
use units::{render_unit, Reader, Unit};

/// The context window assumed when settings give none, in tokens.
pub const DEFAULT_CONTEXT_WINDOW: i64 = 32_768;
/// Tokens kept free for the reply by default.
pub const DEFAULT_OUTPUT_RESERVE: i64 = 8_192;
/// The newest part of the budget in which nothing is shortened, by default (a quarter).
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
/// Characters a shortened content keeps from its start.
pub const TRIM_HEAD_CHARS: usize = 800;
/// Characters a shortened content keeps from its end.
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
    /// How the provider counts an image's tokens.
    pub image_tokens: ImageTokens,
}

impl Default for ContextSettings {
    fn default() -> ContextSettings {
        ContextSettings {
            context_window: DEFAULT_CONTEXT_WINDOW,
            output_reserve: DEFAULT_OUTPUT_RESERVE,
            protection_fraction: DEFAULT_PROTECTION_FRACTION,
            chars_per_token: DEFAULT_CHARS_PER_TOKEN,
            image_tokens: ImageTokens::OpenAi,
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

/// The request's messages, what they contain, and how many archived turns are not among them.
#[derive(Debug, Clone, PartialEq)]
pub struct AssembledContext {
    /// The messages to send, in order: the system message first, then the window of turns.
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
    /// The bytes of an attachment ([`crate::Attachment::sha256`]); `None` when this source has none
    /// (then a text file is named instead of inlined, and an image is not sent).
    fn attachment_bytes(&self, sha256: &str) -> Result<Option<Vec<u8>>> {
        let _ = sha256;
        Ok(None)
    }
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
        + message.reasoning.as_ref().map_or(0, |r| est(&r.chars()))
        + message.images.iter().map(|i| i.tokens).sum::<i64>()
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
    // The newest user message is sent whole, with its images.
    let user_message = user_turn.as_ref().map(|t| ContextMessage {
        images: attachments::images_of(t, settings.image_tokens),
        ..ContextMessage::new(Role::User, t.content.clone())
    });
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
        keep_reasoning: true,
        image_tokens: settings.image_tokens,
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
    // Before the newest user message, reasoning is no longer required: it is dropped.
    placer.keep_reasoning = false;
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
    let mut reasoning_turns = Vec::new();
    let user_placed = user_turn.as_ref().zip(user_message).map(|(turn, message)| Placed {
        turns: vec![turn.turn_number],
        messages: vec![message],
        reasoning_turn: None,
    });
    for placed in shown_older.into_iter().rev().chain(user_placed).chain(shown_tail.into_iter().rev()) {
        turn_numbers.extend(placed.turns);
        reasoning_turns.extend(placed.reasoning_turn);
        messages.extend(placed.messages);
    }
    let mut trimmed_turns = placer.trimmed;
    trimmed_turns.sort_unstable();
    // Only now, with the window chosen, are the images to send read.
    load_images(&mut messages, source)?;
    let estimated_tokens = cost(&messages);
    debug_assert!(estimated_tokens <= budget, "assembly overran its budget: {estimated_tokens} > {budget}");
    Ok(AssembledContext {
        messages,
        manifest: ContextManifest {
            session_id: state.session.id.clone(),
            turn_numbers,
            trimmed_turns,
            reasoning_turns,
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

/// One unit placed in the window: its turn numbers and messages, in order, and the assistant turn
/// whose reasoning goes with them, if any.
struct Placed {
    turns: Vec<i64>,
    messages: Vec<ContextMessage>,
    reasoning_turn: Option<i64>,
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
    /// Whether units placed now keep their reasoning (the current exchange) or drop it (older turns).
    keep_reasoning: bool,
    /// How the provider counts images.
    image_tokens: ImageTokens,
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
        let render = |shorten: bool| {
            let (mut messages, trimmed) = render_unit(unit, shorten, self.image_tokens);
            if !self.keep_reasoning {
                messages.iter_mut().for_each(|m| m.reasoning = None);
            }
            (messages, trimmed)
        };
        let (full, _) = render(false);
        let full_cost = estimate_messages(&full, self.ratio);
        let (messages, trimmed, cost) = if (protected || !unit.can_shorten()) && full_cost <= self.remaining {
            // Whole: inside the protection window, or a unit that shortening would leave as it is.
            (full, Vec::new(), full_cost)
        } else if !unit.can_shorten() {
            return None;
        } else {
            let (short, trimmed) = render(true);
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
        let reasoning_turn = messages.iter().any(|m| m.reasoning.is_some()).then(|| unit.first_turn());
        Some(Placed { turns: unit.turn_numbers(), messages, reasoning_turn })
    }
}

#[cfg(test)]
mod tests;
