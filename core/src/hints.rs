//! The dangling-reference hint: when the user's message points back at something ("like we discussed",
//! "that error") and the context window does not hold the whole conversation, a short system hint tells
//! the model to look it up with `conversation_recall` before answering.
//!
//! Matching rules (the phrase lists below are the data; these rules are fixed):
//! - case-insensitive, on whole words: a phrase matches only where it is not glued to letters, digits or
//!   `_` on either side, so "earlier" does not match inside "earliest" or "earlier_value";
//! - curly apostrophes count as straight ones and runs of white space as one space;
//! - code is not prose: fenced code blocks, block quotes and inline code are not read, so a pasted log
//!   line containing "that error" is not a reference;
//! - [`EXCEPTIONS`] cancel a phrase by the words right before or after it ("earlier than Friday",
//!   "for the last time", "go back to sleep", "that error handling code");
//! - a demonstrative phrase ("that error", "that bug", …: [`FORWARD_SENSITIVE`]) in a sentence that points
//!   forward ("below", "following", "attached", "pasting", "here is") refers to what the user is about to
//!   show, not to the past: "that error handling code I'm pasting below" is not a back reference.

use crate::constraints::{prose_lines, sentences};

/// Phrases that refer back to earlier conversation.
pub const BACK_REFERENCE_PHRASES: &[&str] = &[
    "like we discussed",
    "as we discussed",
    "we discussed",
    "we talked about",
    "as discussed",
    "as we agreed",
    "we agreed",
    "we decided",
    "as before",
    "same as before",
    "the one from before",
    "from before",
    "as i said",
    "like i said",
    "as i mentioned",
    "i mentioned",
    "i told you",
    "you said",
    "you mentioned",
    "you suggested",
    "you told me",
    "as mentioned",
    "mentioned earlier",
    "earlier",
    "previously",
    "last time",
    "remember when",
    "do you remember",
    "go back to",
    "back to what",
    "that error",
    "that bug",
    "that issue",
    "that fix",
    "that file",
    "that function",
    "that approach",
    "that plan",
    "the same error",
    "the error from",
    "the other day",
];

/// A phrase that does not count when one of `preceded_by` comes right before it or one of `followed_by`
/// right after it (each a word or a few words, lower case).
#[derive(Debug, Clone, Copy)]
pub struct Exception {
    /// The phrase of [`BACK_REFERENCE_PHRASES`] this exception is about.
    pub phrase: &'static str,
    /// Words that, right before the phrase, make it not a back reference.
    pub preceded_by: &'static [&'static str],
    /// Words that, right after the phrase, make it not a back reference.
    pub followed_by: &'static [&'static str],
}

/// Uses of a phrase that are not back references.
pub const EXCEPTIONS: &[Exception] = &[
    Exception { phrase: "earlier", preceded_by: &[], followed_by: &["than"] },
    Exception { phrase: "last time", preceded_by: &["for the"], followed_by: &[] },
    Exception { phrase: "go back to", preceded_by: &[], followed_by: &["sleep", "bed", "work", "school", "normal"] },
    Exception {
        phrase: "that error",
        preceded_by: &[],
        followed_by: &["handling", "handler", "handlers", "type", "types"],
    },
    Exception { phrase: "that file", preceded_by: &[], followed_by: &["format", "system", "type", "types"] },
];

/// Demonstrative phrases that refer to what comes next when the sentence points forward.
pub const FORWARD_SENSITIVE: &[&str] =
    &["that error", "that bug", "that issue", "that fix", "that file", "that function", "that approach", "that plan"];

/// Words that make a sentence point forward, at what the user is about to show.
pub const FORWARD_MARKERS: &[&str] = &["below", "following", "attached", "pasting", "here is", "here's", "as follows"];

/// The first back-reference phrase in `user_text`, if any (as listed in [`BACK_REFERENCE_PHRASES`]).
pub fn find_back_reference(user_text: &str) -> Option<&'static str> {
    for line in prose_lines(user_text) {
        for sentence in sentences(line) {
            let words = normalize(&sentence.masked);
            let forward = FORWARD_MARKERS.iter().any(|m| find_words(&words, m, 0).is_some());
            for &phrase in BACK_REFERENCE_PHRASES {
                if forward && FORWARD_SENSITIVE.contains(&phrase) {
                    continue;
                }
                let mut from = 0;
                while let Some(at) = find_words(&words, phrase, from) {
                    if !is_excepted(&words, phrase, at) {
                        return Some(phrase);
                    }
                    from = at + 1;
                }
            }
        }
    }
    None
}

/// The hint to add to the request, or `None` when the window holds everything or nothing refers back.
pub fn back_reference_hint(user_text: &str, window_holds_everything: bool) -> Option<String> {
    if window_holds_everything {
        return None;
    }
    find_back_reference(user_text).map(hint_text)
}

/// The hint for a message that refers back with `phrase`.
pub fn hint_text(phrase: &str) -> String {
    format!(
        "The user's latest message refers to earlier conversation (\"{phrase}\") that may not be in this window. \
         Call conversation_recall (search, or range) to find it before answering; do not guess, and do not ask \
         the user to repeat it."
    )
}

/// The words of a lower-cased, masked sentence: letters, digits, `_` and apostrophes; everything else
/// separates words.
fn normalize(masked: &str) -> Vec<String> {
    masked
        .replace(['’', '‘'], "'")
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The index of the first word of `phrase` in `words`, at or after `from`.
fn find_words(words: &[String], phrase: &str, from: usize) -> Option<usize> {
    let parts: Vec<&str> = phrase.split(' ').collect();
    if words.len() < parts.len() {
        return None;
    }
    (from..=words.len() - parts.len()).find(|&i| parts.iter().enumerate().all(|(k, p)| words[i + k] == *p))
}

fn is_excepted(words: &[String], phrase: &str, at: usize) -> bool {
    let end = at + phrase.split(' ').count();
    let ends_with = |seq: &str| {
        let seq: Vec<&str> = seq.split(' ').collect();
        at >= seq.len() && words[at - seq.len()..at].iter().zip(&seq).all(|(w, s)| w == s)
    };
    let starts_with = |seq: &str| find_words(&words[end.min(words.len())..], seq, 0) == Some(0);
    EXCEPTIONS
        .iter()
        .filter(|e| e.phrase == phrase)
        .any(|e| e.preceded_by.iter().any(|p| ends_with(p)) || e.followed_by.iter().any(|f| starts_with(f)))
}

#[cfg(test)]
mod tests;
