//! Turning any text a user or model types into a valid FTS5 expression.
//!
//! The index tokenises with `unicode61`: letters and digits form tokens, everything else separates
//! them. A query is split the same way, and every token is emitted inside double quotes, so FTS5
//! operators (`AND`, `NEAR(`, `*`, `^`, `:`, parentheses, stray quotes) are only ever searched as text.
//! A whitespace-separated chunk that splits into several tokens (`refresh_token`, `src/auth.py`)
//! becomes a phrase, which finds it inside longer identifiers (`rotate_refresh_token_v2`). Text
//! between balanced double quotes is one phrase. All chunks must match (AND); [`Terms::any`] gives
//! the OR form for a fallback.

/// At most this many terms are used; the rest of a very long query is ignored.
pub const MAX_TERMS: usize = 32;

/// The searchable terms of a query, each a phrase of one or more tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Terms {
    phrases: Vec<Vec<String>>,
    prefix_last: bool,
}

impl Terms {
    /// Parses `text`. `prefix_last` makes the final token a prefix (for search-as-you-type).
    pub fn parse(text: &str, prefix_last: bool) -> Terms {
        let mut phrases: Vec<Vec<String>> = Vec::new();
        let mut push = |tokens: Vec<String>| {
            if !tokens.is_empty() && !phrases.contains(&tokens) && phrases.len() < MAX_TERMS {
                phrases.push(tokens);
            }
        };
        let mut rest = text;
        while !rest.is_empty() {
            match rest.find('"') {
                Some(open) => {
                    rest[..open].split_whitespace().for_each(|chunk| push(tokens(chunk)));
                    let after = &rest[open + 1..];
                    match after.find('"') {
                        Some(close) => {
                            push(tokens(&after[..close]));
                            rest = &after[close + 1..];
                        }
                        None => {
                            // An unbalanced quote: the rest is plain words.
                            after.split_whitespace().for_each(|chunk| push(tokens(chunk)));
                            rest = "";
                        }
                    }
                }
                None => {
                    rest.split_whitespace().for_each(|chunk| push(tokens(chunk)));
                    rest = "";
                }
            }
        }
        let ends_in_word = text.chars().last().is_some_and(is_token_char);
        Terms { phrases, prefix_last: prefix_last && ends_in_word }
    }

    /// Whether nothing in the text is searchable (the search then finds nothing).
    pub fn is_empty(&self) -> bool {
        self.phrases.is_empty()
    }

    /// How many terms there are (at most [`MAX_TERMS`]).
    pub fn len(&self) -> usize {
        self.phrases.len()
    }

    /// Every term must match.
    pub fn all(&self) -> Option<String> {
        self.join(" AND ")
    }

    /// Any term may match.
    pub fn any(&self) -> Option<String> {
        self.join(" OR ")
    }

    fn join(&self, op: &str) -> Option<String> {
        if self.phrases.is_empty() {
            return None;
        }
        let last = self.phrases.len() - 1;
        let parts: Vec<String> = self
            .phrases
            .iter()
            .enumerate()
            .map(|(i, tokens)| {
                let star = if self.prefix_last && i == last { "*" } else { "" };
                format!("\"{}\"{star}", tokens.join(" "))
            })
            .collect();
        Some(parts.join(op))
    }
}

/// Mirrors unicode61's notion of a token character (letters, digits, private-use).
fn is_token_char(c: char) -> bool {
    c.is_alphanumeric() || ('\u{E000}'..='\u{F8FF}').contains(&c)
}

fn tokens(chunk: &str) -> Vec<String> {
    chunk.split(|c: char| !is_token_char(c)).filter(|t| !t.is_empty()).map(str::to_owned).collect()
}

#[cfg(test)]
mod tests;
