//! Turning any text a user or model types into a valid FTS5 expression.
//!
//! The index tokenises with `unicode61`: letters and digits form tokens, everything else separates
//! them. A query is split the same way, and every token is emitted inside double quotes, so FTS5
//! operators (`AND`, `NEAR(`, `*`, `^`, `:`, parentheses, stray quotes) are only ever searched as text.
//! A whitespace-separated chunk that splits into several tokens (`refresh_token`, `src/auth.py`)
//! becomes a phrase, which finds it inside longer identifiers (`rotate_refresh_token_v2`). Text
//! between balanced double quotes is one phrase. A possessive `'s` ends an unquoted word
//! (`Caroline's` is the term `Caroline`, as the question means it; unicode61 would read it as the
//! phrase "caroline s"). [`Terms::all`] and [`Terms::any`] join every term, [`Terms::any_of`] some of
//! them; [`Terms::term`] is one term alone (the search counts each term's matches). The index and
//! queries are stemmed alike (FTS5's `porter`), so "researching" finds "research"; a prefix for
//! search-as-you-type also matches the stems of the words it may begin ([`STEM_REACH`]).

/// At most this many terms are used; the rest of a very long query is ignored.
pub const MAX_TERMS: usize = 32;

/// How many characters shorter than a search-as-you-type word its stems may be. The index holds
/// words stemmed (FTS5's `porter`: "running" as "run", "happiness" as "happi", "caring" as "care"),
/// so a word typed part way ("runn", "happin", "cari") is no prefix of its stem. The typed word is
/// therefore also matched as its forms up to this many characters shorter, and each with an `e`
/// added: "runn" finds "run" (running), "cari" finds "care" (caring), "happines" finds "happi". Each
/// form is an exact term, so "happin" does not match every word beginning "hap"; a short form can
/// still be a word of its own ("cari" also finds "car"). Farther from the stem ("relationa", 4 past
/// "relat") the word is found again once it is typed whole. Only a word typed part way that no word
/// of the archive begins with is widened ([`Terms::keep_prefix_as_typed`]).
pub const STEM_REACH: usize = 3;
/// The shortest such form.
pub const MIN_STEM: usize = 3;

/// The searchable terms of a query, each a phrase of one or more tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Terms {
    phrases: Vec<Vec<String>>,
    prefix_last: bool,
    /// Whether the last term, a prefix, also matches the stems it may begin ([`STEM_REACH`]).
    widen_last: bool,
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
                    rest[..open].split_whitespace().for_each(|chunk| push(word_tokens(chunk)));
                    let after = &rest[open + 1..];
                    match after.find('"') {
                        Some(close) => {
                            push(tokens(&after[..close]));
                            rest = &after[close + 1..];
                        }
                        None => {
                            // An unbalanced quote: the rest is plain words.
                            after.split_whitespace().for_each(|chunk| push(word_tokens(chunk)));
                            rest = "";
                        }
                    }
                }
                None => {
                    rest.split_whitespace().for_each(|chunk| push(word_tokens(chunk)));
                    rest = "";
                }
            }
        }
        let ends_in_word = text.chars().last().is_some_and(is_token_char);
        let prefix_last = prefix_last && ends_in_word;
        Terms { phrases, prefix_last, widen_last: prefix_last }
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

    /// Any of the terms at `indices` may match (`None` when `indices` names none).
    pub fn any_of(&self, indices: &[usize]) -> Option<String> {
        let parts: Vec<String> = indices.iter().filter(|&&i| i < self.phrases.len()).map(|&i| self.term(i)).collect();
        (!parts.is_empty()).then(|| parts.join(" OR "))
    }

    /// The last term as typed, a prefix, when this is a prefix search whose last term would be
    /// widened: the search asks whether it matches anything as it is before widening it.
    pub fn typed_prefix(&self) -> Option<String> {
        let last = self.phrases.last().filter(|_| self.widen_last)?;
        Some(format!("\"{}\"*", last.join(" ")))
    }

    /// Keeps the last term as typed, not widened: some word begins with it, so the stems it might
    /// also stand for would only rank words it does not begin ("start" for "starte", typed on the way
    /// to "starter") above the ones it does.
    pub fn keep_prefix_as_typed(&mut self) {
        self.widen_last = false;
    }

    /// Term `i` alone, as an FTS5 expression (`i` must be below [`Terms::len`]). The last term of a
    /// prefix search is widened to the stems of the words it may begin (see [`STEM_REACH`]), unless
    /// [`Terms::keep_prefix_as_typed`].
    pub fn term(&self, i: usize) -> String {
        let phrase = &self.phrases[i];
        if !(self.prefix_last && i + 1 == self.phrases.len()) {
            return format!("\"{}\"", phrase.join(" "));
        }
        let mut alternatives = vec![format!("\"{}\"*", phrase.join(" "))];
        if !self.widen_last {
            return alternatives.remove(0);
        }
        let (last, head) = phrase.split_last().expect("a term has a token");
        let chars: Vec<char> = last.chars().collect();
        for k in chars.len().saturating_sub(STEM_REACH).max(MIN_STEM)..chars.len() {
            let cut: String = chars[..k].iter().collect();
            for stem in [cut.clone(), format!("{cut}e")] {
                let words: Vec<&str> = head.iter().map(String::as_str).chain([stem.as_str()]).collect();
                let alternative = format!("\"{}\"", words.join(" "));
                if !alternatives.contains(&alternative) {
                    alternatives.push(alternative);
                }
            }
        }
        match alternatives.len() {
            1 => alternatives.remove(0),
            _ => format!("({})", alternatives.join(" OR ")),
        }
    }

    fn join(&self, op: &str) -> Option<String> {
        if self.phrases.is_empty() {
            return None;
        }
        let parts: Vec<String> = (0..self.phrases.len()).map(|i| self.term(i)).collect();
        Some(parts.join(op))
    }
}

/// Mirrors unicode61's notion of a token character (letters, digits, private-use).
fn is_token_char(c: char) -> bool {
    c.is_alphanumeric() || ('\u{E000}'..='\u{F8FF}').contains(&c)
}

/// The tokens of an unquoted word, without a possessive `'s` (`Caroline's`, `Caroline’s`).
fn word_tokens(chunk: &str) -> Vec<String> {
    let trimmed = chunk.trim_end_matches(|c: char| !is_token_char(c));
    let bare = ["'s", "'S", "’s", "’S"]
        .iter()
        .find_map(|p| trimmed.strip_suffix(p))
        .filter(|rest| rest.chars().last().is_some_and(is_token_char));
    tokens(bare.unwrap_or(chunk))
}

fn tokens(chunk: &str) -> Vec<String> {
    chunk.split(|c: char| !is_token_char(c)).filter(|t| !t.is_empty()).map(str::to_owned).collect()
}

#[cfg(test)]
mod tests;
