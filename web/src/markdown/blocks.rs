//! A streamed message's Markdown cut into its top-level blocks, so that a growing text is rendered
//! block by block: blocks that are complete are rendered once, and only the last, still open block is
//! rendered again as text arrives.
//!
//! A block is complete once the next top-level block has started on a complete line (a blank line is
//! not enough: `- a⏎⏎- b` is one loose list). CommonMark reads block structure line by line and
//! never reopens a closed block, so a complete block renders the same alone as inside the whole text,
//! with one exception: a link reference definition applies to the whole document. A text that holds
//! one is rendered whole, each time ([`Step::reset`]).

use super::OPTIONS;
use pulldown_cmark::{Event, Parser};
use std::ops::Range;

/// Where a growing text's blocks have been cut so far; [`Blocks::advance`] moves on as it grows.
#[derive(Debug, Default, Clone)]
pub struct Blocks {
    /// The text of the complete blocks handed out so far (where the open block starts).
    done: String,
    /// A reference definition was seen: the text is rendered whole from now on.
    whole: bool,
}

/// What to do with the text as it is now, after [`Blocks::advance`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Everything shown so far is to be dropped first (the text was replaced, or has to be rendered whole).
    pub reset: bool,
    /// Blocks newly complete, in order (byte ranges of the text): rendered once each and kept.
    pub complete: Vec<Range<usize>>,
    /// The open last block (possibly empty): rendered again on every step, replacing its last rendering.
    pub open: Range<usize>,
}

impl Blocks {
    /// Nothing cut yet.
    pub fn new() -> Blocks {
        Blocks::default()
    }

    /// The text as it is now (what came before, plus what arrived since): which blocks became complete
    /// and where the open block is. A text that does not continue what came before starts over.
    pub fn advance(&mut self, text: &str) -> Step {
        let reset = !text.starts_with(self.done.as_str());
        if reset {
            *self = Blocks::new();
        }
        let base = self.done.len();
        let whole = |reset| Step { reset, complete: Vec::new(), open: 0..text.len() };
        if self.whole {
            return whole(reset);
        }
        let tail = &text[base..];
        let (starts, definitions) = block_starts(tail);
        if definitions {
            // A reference definition may change any block before or after it: render the text whole.
            let had_blocks = base > 0;
            *self = Blocks { done: String::new(), whole: true };
            return whole(reset || had_blocks);
        }
        // A block is complete once the next one has started on a complete line.
        let mut cuts = vec![0];
        cuts.extend(starts.into_iter().filter(|&s| s > 0 && tail[s..].contains('\n')));
        let open = *cuts.last().expect("cuts start with 0");
        let complete: Vec<_> = cuts.windows(2).map(|w| base + w[0]..base + w[1]).collect();
        self.done.push_str(&tail[..open]);
        Step { reset, complete, open: base + open..text.len() }
    }
}

/// Where `text`'s top-level blocks start (byte offsets of their first lines' starts, increasing), and
/// whether it holds a link reference definition.
pub fn block_starts(text: &str) -> (Vec<usize>, bool) {
    let events = Parser::new_ext(text, OPTIONS).into_offset_iter();
    let definitions = events.reference_definitions().iter().next().is_some();
    let mut starts: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    for (event, range) in events {
        if depth == 0 {
            let line = text[..range.start].rfind('\n').map_or(0, |i| i + 1);
            if starts.last() != Some(&line) {
                starts.push(line);
            }
        }
        match event {
            Event::Start(_) => depth += 1,
            Event::End(_) => depth -= 1,
            _ => {}
        }
    }
    (starts, definitions)
}

#[cfg(test)]
mod tests;
