//! A session's title from its first message: the first line with words in it, without the control
//! words in double brackets (`[[reasoning]]`, `[[fault:slow]]`, `[[code:python]]`) that scripted and
//! test models read, which are for the model, not names for a conversation.

/// The longest control word removed: a longer bracketed run is text.
const CONTROL_WORD_MAX: usize = 64;

/// The title `text` (a first user message) gives its session: its first line that has words once the
/// control words are gone, with runs of spaces made one. Empty when the message has no words (the
/// session is then titled by a later message, or renamed).
///
/// ```
/// assert_eq!(cowork_core::title_from_message("[[reasoning]] Why is the sky blue?"), "Why is the sky blue?");
/// assert_eq!(cowork_core::title_from_message("[[switches]]\nLet's plan the trip"), "Let's plan the trip");
/// ```
pub fn title_from_message(text: &str) -> String {
    text.lines()
        .map(|line| without_control_words(line).split_whitespace().collect::<Vec<_>>().join(" "))
        .find(|line| !line.is_empty())
        .unwrap_or_default()
}

/// `line` with every `[[control word]]` (see [`is_control_word`]) cut.
fn without_control_words(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("[[") {
        let after = &rest[start + 2..];
        let word = after.find("]]").map(|end| &after[..end]);
        match word {
            Some(w) if is_control_word(w) => {
                out.push_str(&rest[..start]);
                out.push(' ');
                rest = &after[w.len() + 2..];
            }
            _ => {
                out.push_str(&rest[..start + 2]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A control word: a lowercase ASCII letter, then letters, digits and `: - _ .` (`fault:429x2`).
fn is_control_word(w: &str) -> bool {
    w.len() <= CONTROL_WORD_MAX
        && w.starts_with(|c: char| c.is_ascii_lowercase())
        && w.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, ':' | '-' | '_' | '.'))
}

#[cfg(test)]
mod tests;
