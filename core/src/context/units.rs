//! Tool-call groups: turns read newest-first, a page at a time, and cut into units (a turn, or an
//! assistant turn with its results) that are kept or dropped whole, and a unit rendered as messages.

use std::collections::VecDeque;

use super::attachments::{expand_content, image_placeholder, images_of};
use super::{
    ContextMessage, ReasoningReplay, TurnSource, MAX_PAGE_SIZE, PAGE_SIZE, TRIM_HEAD_CHARS, TRIM_TAIL_CHARS,
    TRIM_THRESHOLD_CHARS,
};
use crate::message::ImageTokens;
use crate::state::thousands;
use crate::{Result, Role, ToolCall, Turn, TurnStatus};

/// One turn, or an assistant turn with its tool results: kept or dropped as a whole.
#[derive(Debug)]
pub(super) enum Unit {
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
    pub(super) fn turn_numbers(&self) -> Vec<i64> {
        match self {
            Unit::Single(t) | Unit::Orphan(t) => vec![t.turn_number],
            Unit::Group { assistant, results, orphans } => {
                std::iter::once(assistant).chain(results).chain(orphans).map(|t| t.turn_number).collect()
            }
        }
    }

    pub(super) fn first_turn(&self) -> i64 {
        match self {
            Unit::Single(t) | Unit::Orphan(t) => t.turn_number,
            Unit::Group { assistant, .. } => assistant.turn_number,
        }
    }

    /// Whether rendering it shortened ([`render_unit`] with `shorten`) can differ from rendering it
    /// whole: a content over [`TRIM_THRESHOLD_CHARS`], or images of a single turn (shortened, each image
    /// is sent as a line of text naming it). When it cannot, placing the unit renders and counts it once.
    pub(super) fn can_shorten(&self) -> bool {
        let long = |t: &Turn| t.content.len() > TRIM_THRESHOLD_CHARS;
        match self {
            Unit::Single(t) => long(t) || t.attachments.iter().any(|a| a.is_image()),
            Unit::Orphan(t) => long(t),
            Unit::Group { assistant, results, orphans } => {
                std::iter::once(assistant).chain(results).chain(orphans).any(long)
            }
        }
    }

    pub(super) fn last_turn(&self) -> i64 {
        self.turn_numbers().into_iter().max().unwrap_or(0)
    }
}

/// Reads turns newest-first, one page at a time, and cuts them into units.
pub(super) struct Reader<'a, S: ?Sized> {
    source: &'a S,
    /// Turns read but not yet handed out, oldest first.
    buffer: VecDeque<Turn>,
    oldest_read: Option<i64>,
    pub(super) exhausted: bool,
    /// Turns to ask for at the next read.
    pub(super) page_size: usize,
}

impl<'a, S: TurnSource + ?Sized> Reader<'a, S> {
    pub(super) fn new(source: &'a S) -> Reader<'a, S> {
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
        crate::order::sort_by_key(&mut page, |t| t.turn_number);
        page.dedup_by_key(|t| t.turn_number);
        // Text files are part of what the turn says: inlined here, so they are counted and shortened
        // like its text.
        for turn in page.iter_mut().filter(|t| t.attachments.iter().any(|a| !a.is_image())) {
            turn.content = expand_content(turn, self.source)?;
        }
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
    pub(super) fn next_unit(&mut self) -> Result<Option<Unit>> {
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
pub(super) fn render_unit(unit: &Unit, shorten: bool, image_tokens: ImageTokens) -> (Vec<ContextMessage>, Vec<i64>) {
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
            let mut content = text(turn);
            let has_images = turn.attachments.iter().any(|a| a.is_image());
            let send_images = has_images && !shorten && turn.role == Role::User;
            if has_images && !send_images {
                for a in turn.attachments.iter().filter(|a| a.is_image()) {
                    content.push('\n');
                    content.push_str(&image_placeholder(a, turn.turn_number));
                }
                if !trimmed.contains(&turn.turn_number) {
                    trimmed.push(turn.turn_number);
                }
            }
            let mut message = match turn.role {
                Role::Assistant => ContextMessage::new(Role::Assistant, with_status_note(content, turn.status)),
                role => ContextMessage::new(role, content),
            };
            if send_images {
                message.images = images_of(turn, image_tokens);
            }
            out.push(message);
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
            // Reasoning goes back only with tool calls (the wire formats send it nowhere else).
            message.reasoning =
                ReasoningReplay::from_metadata(&assistant.metadata).filter(|_| !message.tool_calls.is_empty());
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
pub(super) fn head_tail(content: &str, turn_number: i64) -> String {
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
