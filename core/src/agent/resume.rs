//! Continuing a reply that was cut short (a closed tab, a broken stream, Stop) in place: the model is
//! asked to go on from the saved partial text (sent as the last assistant message, which Anthropic and
//! most OpenAI-compatible servers continue as a prefill), and what it streams is spliced onto that text
//! in the same turn.
//!
//! A model that does not continue prefills starts its answer again instead; [`Splice`] notices when the
//! new text begins with the saved text and keeps only what comes after, so the reply is never
//! duplicated. Either way the final text begins with the saved partial text: nothing is lost.

use crate::store::Store;
use crate::{Result, Role, Turn, TurnStatus};

/// The session's last turn, when it is a reply that can be continued in place: an interrupted
/// assistant turn of the session's own (not inherited from a fork's parent) with text and no tool calls.
pub(super) fn resumable(store: &Store, session_id: &str) -> Result<Option<Turn>> {
    let count = store.turn_count(session_id)?;
    if count == 0 {
        return Ok(None);
    }
    let last = store.get_turns(session_id, (count - 1) as usize, 1)?.pop();
    Ok(last.filter(|t| {
        // Only the session's own turn: a fork must not finish a reply its parent holds.
        t.session_id == session_id
            && t.role == Role::Assistant
            && t.status == TurnStatus::Interrupted
            && t.tool_calls.is_empty()
            && !t.content.trim().is_empty()
    }))
}

/// What the stream's text deltas add to the reply's visible text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Splice {
    /// The saved partial text (trailing whitespace dropped, as a prefill must be); empty for a new reply.
    prefix: String,
    /// The new text held back while it could still be the saved text again.
    held: String,
    mode: Mode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A new reply, or one whose continuation has been recognised: deltas pass through.
    Through,
    /// Not yet known whether the model continues the saved text or starts again.
    Undecided,
    /// The model started again: the saved text is skipped, what follows it passes through.
    Restarted,
}

impl Splice {
    /// For a new reply: every delta passes through.
    pub fn fresh() -> Splice {
        Splice { prefix: String::new(), held: String::new(), mode: Mode::Through }
    }

    /// For continuing `partial` in place.
    pub fn resume(partial: &str) -> Splice {
        Splice { prefix: partial.trim_end().to_owned(), held: String::new(), mode: Mode::Undecided }
    }

    /// The saved text the continued reply starts with (empty for a new reply).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Takes one delta of the model's stream; returns the text it adds to the reply (maybe empty).
    pub fn push(&mut self, delta: &str) -> String {
        match self.mode {
            Mode::Through | Mode::Restarted => delta.to_owned(),
            Mode::Undecided => {
                self.held.push_str(delta);
                if let Some(rest) = self.held.strip_prefix(self.prefix.as_str()) {
                    self.mode = Mode::Restarted;
                    let rest = rest.to_owned();
                    self.held.clear();
                    rest
                } else if self.prefix.starts_with(self.held.as_str()) {
                    String::new()
                } else {
                    self.mode = Mode::Through;
                    std::mem::take(&mut self.held)
                }
            }
        }
    }

    /// The stream ended: text still held back adds nothing (it repeated the start of the saved text).
    pub fn finish(&mut self) {
        self.held.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `deltas` and returns the reply's text as it ends up (the prefix, then what was added).
    fn splice(partial: &str, deltas: &[&str]) -> String {
        let mut s = Splice::resume(partial);
        let mut text = s.prefix().to_owned();
        for d in deltas {
            text.push_str(&s.push(d));
        }
        s.finish();
        text
    }

    #[test]
    fn a_continuation_is_appended() {
        assert_eq!(splice("The answer is", &[" forty", "-two."]), "The answer is forty-two.");
        // Trailing whitespace is not part of a prefill; the continuation brings its own.
        assert_eq!(splice("The answer is \n", &[" 42"]), "The answer is 42");
    }

    #[test]
    fn a_restart_keeps_only_what_follows_the_saved_text() {
        assert_eq!(splice("The answer", &["The ", "ans", "wer is 42."]), "The answer is 42.");
        assert_eq!(splice("The answer", &["The answer is 42."]), "The answer is 42.");
    }

    #[test]
    fn a_different_answer_is_appended_and_the_saved_text_kept() {
        assert_eq!(splice("The answer", &["The ", "question"]), "The answerThe question");
        assert_eq!(splice("Hello", &["Sure! Continuing: world"]), "HelloSure! Continuing: world");
    }

    #[test]
    fn a_restart_that_stops_early_adds_nothing() {
        assert_eq!(splice("The answer is 42", &["The answer"]), "The answer is 42");
    }

    #[test]
    fn a_new_reply_passes_through() {
        let mut s = Splice::fresh();
        assert_eq!(s.push("Hi"), "Hi");
        assert_eq!(s.prefix(), "");
    }
}
