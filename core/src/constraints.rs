//! Detects the constraints a user states in plain words ("never use an ORM", "we use JWT") so the
//! session-state register can keep them in view for the rest of the session.
//!
//! The detector is a small, documented rule set, not a model call. A message is cut into sentences and
//! each sentence is judged on its own; the sentence is returned verbatim (trimmed, without a list marker).
//!
//! What is looked at:
//! - Prose only: fenced code blocks (```` ``` ```` / `~~~`), block quotes (`> …`), inline code (`` `…` ``)
//!   and double-quoted text (`"…"`, `“…”`) are never read for trigger words. A sentence that has a
//!   constraint outside its code or quotes is still returned whole ("You must use `sqlx` for queries.").
//! - Sentences end at `.`, `!` or `?` followed by a space (not after `e.g.`, `i.e.`, `etc.`, `vs.`, `cf.`)
//!   and at line ends: chat messages are not hard-wrapped, and list items are one line each.
//! - Sentences longer than [`MAX_CONSTRAINT_CHARS`] are pasted text, not a stated constraint.
//!
//! A sentence is a constraint when one of its clauses (split at `, ; : ( ) —` and at "and", "but", "so",
//! "then", "or") starts, after courtesy words ("please", "also", "from now on", "as I said", …), with:
//! 1. `never …` / `always …` followed by a present-tense verb ("Never use an ORM", "always run fmt");
//! 2. `don't …` / `do not …` ("Don't touch the migrations"), except "don't know / think / worry / mind …";
//! 3. `only use …` / `use only …`, `avoid …`, `stick to|with …`, `make sure …`, `be sure …`, `ensure …`;
//! 4. `prefer … over|rather than|instead of …` (also after "I" / "I'd": a stated preference);
//! 5. the same after the subject "we", "you", "let's", "everyone", optionally with "should", "must", "need
//!    to", "have to", "will", "are going to" and adverbs ("We should always validate input", "We don't use
//!    ORMs here"), and `we use …`, `we're using …`, `we will use …`, `we only use …`, `we go with …`,
//!    `let's use …`, `let's go with …`;
//! 6. "I never want" / "I always want" / "I don't want" (a stated wish about the work);
//!
//! or when a clause contains `must` / `must not` anywhere ("All timestamps must be stored in UTC"), except
//! the guessing kind: "must have …", "that / this / there must …".
//!
//! A sentence is never a constraint, whatever it contains, when it is:
//! - a question: it ends with `?`, or starts with a question word or an auxiliary ("should we never…",
//!   "do we always…", "would it be better to always…"; but "Do not …" is an order);
//! - a hypothetical or conditional: it starts with "if", "unless", "when", "whenever", "once", "suppose",
//!   "imagine", "assuming", "in case", "even if", or hedges with "maybe", "perhaps", "probably",
//!   "possibly", "wonder", "whether", "hypothetically", "could", "might", "would";
//! - reported speech or opinion: "said", "says", "told", "claims", "mentioned", "think", "thought",
//!   "believes", "suggested", "recommends", "according to", "heard", … before the trigger
//!   ("He said we always deploy on Fridays");
//! - about the past: "never/always" followed by a past-tense verb ("We never got that working", "we always
//!   had problems"), "have/has/had" right before the trigger ("we have always used tabs"), or a past
//!   marker such as "used to", "back then", "in the past", "last time", "yesterday", "… ago".
//!
//! Known limits: sentences are not tracked across line breaks; single quotes are not treated as quotes
//! (they are apostrophes too often); a long pasted document full of "must" will be read as constraints
//! (the register keeps only the last ten decisions).

mod words;

use words::{
    ADVERBS, CONDITIONAL_OPENERS, CONJUNCTIONS, DONT_EXCEPTIONS, HEDGES, IRREGULAR_PAST, LEAD_INS, NOT_PAST_ED,
    PAST_MARKERS, QUESTION_OPENERS, REPORTING,
};

/// Sentences longer than this (in characters) are never returned as constraints.
pub const MAX_CONSTRAINT_CHARS: usize = 300;

/// The constraint sentences of `user_text`, verbatim (trimmed, list markers removed), in order, each once.
pub fn detect_constraints(user_text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for line in prose_lines(user_text) {
        for sentence in sentences(strip_list_marker(line)) {
            if sentence.text.chars().count() > MAX_CONSTRAINT_CHARS || !is_constraint(&sentence.masked) {
                continue;
            }
            if !found.iter().any(|f| f == sentence.text) {
                found.push(sentence.text.to_string());
            }
        }
    }
    found
}

/// The lines of `text` that are prose: not inside a fenced code block, not a block quote.
pub(crate) fn prose_lines(text: &str) -> Vec<&str> {
    let mut fence: Option<&str> = None;
    let mut lines = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(marker) = fence {
            if trimmed.starts_with(marker) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") {
            fence = Some("```");
        } else if trimmed.starts_with("~~~") {
            fence = Some("~~~");
        } else if !trimmed.starts_with('>') {
            lines.push(line);
        }
    }
    lines
}

/// `line` without a leading bullet ("- ", "* ", "+ ", "• ") or number ("1. ", "2) "), trimmed.
fn strip_list_marker(line: &str) -> &str {
    let t = line.trim();
    for bullet in ["- ", "* ", "+ ", "• "] {
        if let Some(rest) = t.strip_prefix(bullet) {
            return rest.trim_start();
        }
    }
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    if (1..=3).contains(&digits) {
        let rest = &t[digits..];
        if let Some(rest) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return rest.trim_start();
        }
    }
    t
}

/// One sentence: its original text, and the same with code and quoted text replaced by a placeholder
/// word, lower-cased, for the rules to read.
pub(crate) struct Sentence<'a> {
    pub(crate) text: &'a str,
    pub(crate) masked: String,
}

const PLACEHOLDER: &str = " quoted ";
const ABBREVIATIONS: &[&str] = &["e.g", "i.e", "etc", "vs", "cf", "approx"];

/// Splits one line into sentences, never inside inline code or double quotes.
pub(crate) fn sentences(line: &str) -> Vec<Sentence<'_>> {
    enum Mode {
        Prose,
        Code,
        Quote(char),
    }
    let mut out = Vec::new();
    let mut mode = Mode::Prose;
    let mut start = 0;
    let mut masked = String::new();
    let mut iter = line.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        match mode {
            Mode::Code if c == '`' => mode = Mode::Prose,
            Mode::Quote(close) if c == close => mode = Mode::Prose,
            Mode::Code | Mode::Quote(_) => {}
            Mode::Prose => match c {
                '`' => {
                    mode = Mode::Code;
                    masked.push_str(PLACEHOLDER);
                }
                '"' => {
                    mode = Mode::Quote('"');
                    masked.push_str(PLACEHOLDER);
                }
                '“' => {
                    mode = Mode::Quote('”');
                    masked.push_str(PLACEHOLDER);
                }
                '.' | '!' | '?' => {
                    masked.push(c);
                    let at_break = iter.peek().is_none_or(|(_, next)| next.is_whitespace());
                    let abbreviation = c == '.' && {
                        let before = masked[..masked.len() - 1].to_lowercase();
                        let word = before.rsplit(|ch: char| ch.is_whitespace() || ch == '(').next().unwrap_or("");
                        ABBREVIATIONS.contains(&word)
                    };
                    if at_break && !abbreviation {
                        let end = i + c.len_utf8();
                        push_sentence(&mut out, &line[start..end], &mut masked);
                        start = end;
                    }
                }
                _ => masked.push(c),
            },
        }
    }
    push_sentence(&mut out, &line[start..], &mut masked);
    out
}

fn push_sentence<'a>(out: &mut Vec<Sentence<'a>>, text: &'a str, masked: &mut String) {
    let text = text.trim();
    let m = std::mem::take(masked);
    if !text.is_empty() {
        out.push(Sentence { text, masked: m.trim().to_lowercase().replace(['’', '‘'], "'") });
    }
}

/// A lower-cased word, or a clause break.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Break,
}

/// Words of a masked sentence with contractions expanded ("don't" → "do not", "we're" → "we are",
/// "let's" → "let us"); punctuation that separates clauses becomes [`Tok::Break`].
fn tokenize(masked: &str) -> Vec<Tok> {
    let mut toks = Vec::new();
    for raw in masked.split_whitespace() {
        if raw == "-" || raw == "—" || raw == "–" {
            toks.push(Tok::Break);
            continue;
        }
        let mut word = String::new();
        let mut trailing_break = false;
        for c in raw.chars() {
            if c.is_alphanumeric() || c == '\'' || c == '_' || (c == '-' && !word.is_empty()) {
                word.push(c);
            } else if matches!(c, ',' | ';' | ':' | '(' | ')' | '—' | '–') {
                if word.is_empty() {
                    toks.push(Tok::Break);
                } else {
                    trailing_break = true;
                }
            }
        }
        let word = word.trim_matches(|c| c == '\'' || c == '-');
        if !word.is_empty() {
            for w in expand_contraction(word) {
                toks.push(Tok::Word(w));
            }
        }
        if trailing_break {
            toks.push(Tok::Break);
        }
    }
    toks
}

fn expand_contraction(word: &str) -> Vec<String> {
    let fixed: &[&str] = match word {
        "don't" | "dont" => &["do", "not"],
        "can't" | "cannot" => &["can", "not"],
        "won't" => &["will", "not"],
        "let's" | "lets" => &["let", "us"],
        _ => &[],
    };
    if !fixed.is_empty() {
        return fixed.iter().map(|s| s.to_string()).collect();
    }
    for (suffix, expansion) in [("n't", "not"), ("'re", "are"), ("'ll", "will"), ("'ve", "have"), ("'m", "am")] {
        if let Some(stem) = word.strip_suffix(suffix) {
            if !stem.is_empty() {
                return vec![stem.to_string(), expansion.to_string()];
            }
        }
    }
    if let Some(stem) = word.strip_suffix("'s") {
        if matches!(stem, "it" | "that" | "there" | "what" | "he" | "she" | "here") {
            return vec![stem.to_string(), "is".to_string()];
        }
    }
    vec![word.to_string()]
}

fn is_constraint(masked: &str) -> bool {
    let trimmed = masked.trim_end().trim_end_matches(['.', '!', ')', '"', '\'']);
    if trimmed.ends_with('?') {
        return false;
    }
    let toks = tokenize(masked);
    let words: Vec<&str> = toks
        .iter()
        .filter_map(|t| match t {
            Tok::Word(w) => Some(w.as_str()),
            Tok::Break => None,
        })
        .collect();
    let start = skip_lead_ins(&words, 0);
    let Some(&first) = words.get(start) else {
        return false;
    };
    let second = words.get(start + 1).copied().unwrap_or("");
    if QUESTION_OPENERS.contains(&first) || (first == "do" && second != "not") {
        return false;
    }
    if CONDITIONAL_OPENERS.contains(&first)
        || [("in", "case"), ("even", "if"), ("what", "if")].contains(&(first, second))
    {
        return false;
    }
    if words.iter().any(|w| HEDGES.contains(w)) || PAST_MARKERS.iter().any(|m| contains_seq(&words, m)) {
        return false;
    }
    // Reporting verbs disqualify only when they come before the first trigger ("Never use it, he said"
    // is still the user's order), so they are checked clause by clause below.
    let mut reported = false;
    for clause in toks.split(|t| *t == Tok::Break) {
        let clause_words: Vec<&str> = clause
            .iter()
            .filter_map(|t| match t {
                Tok::Word(w) => Some(w.as_str()),
                Tok::Break => None,
            })
            .collect();
        for part in clause_words.split(|w| CONJUNCTIONS.contains(w)) {
            if clause_matches(part) && !reported {
                return true;
            }
            reported |= part[skip_lead_ins(part, 0)..].iter().any(|w| REPORTING.contains(w));
        }
    }
    false
}

/// Index of the first word after courtesy lead-ins ("please", "also", "from now on", …).
fn skip_lead_ins(words: &[&str], mut i: usize) -> usize {
    'outer: loop {
        for lead in LEAD_INS {
            if words.len() >= i + lead.len() && words[i..i + lead.len()] == **lead {
                i += lead.len();
                continue 'outer;
            }
        }
        return i;
    }
}

fn contains_seq(words: &[&str], seq: &[&str]) -> bool {
    words.windows(seq.len()).any(|w| w == seq)
}

fn is_past_form(word: &str) -> bool {
    IRREGULAR_PAST.contains(&word) || (word.ends_with("ed") && !NOT_PAST_ED.contains(&word) && !word.ends_with("eed"))
}

/// Whether one clause (already split at breaks and conjunctions) states a constraint.
fn clause_matches(part: &[&str]) -> bool {
    if let Some(i) = part.iter().position(|w| *w == "must") {
        let before = if i > 0 { part[i - 1] } else { "" };
        let after = part.get(i + 1).copied().unwrap_or("");
        if after != "have" && !matches!(before, "that" | "this" | "there" | "which") {
            return true;
        }
    }
    let s = skip_lead_ins(part, 0);
    let w = |k: usize| part.get(s + k).copied().unwrap_or("");
    // Stated wishes: "I never want …", "I don't want …".
    if w(0) == "i"
        && (matches!((w(1), w(2)), ("never" | "always", "want")) || (w(1), w(2), w(3)) == ("do", "not", "want"))
    {
        return true;
    }
    // Preferences: "prefer X over Y", "I prefer …", "I'd prefer …", "we prefer …".
    let pref_at = match w(0) {
        "prefer" => Some(s),
        "i" | "i'd" | "we" if w(1) == "prefer" => Some(s + 1),
        _ => None,
    };
    if let Some(p) = pref_at {
        let rest = &part[p..];
        if rest.contains(&"over") || contains_seq(rest, &["rather", "than"]) || contains_seq(rest, &["instead", "of"]) {
            return true;
        }
    }
    // Imperatives at the clause start, or after a collective subject and optional modal.
    let (subject_len, subject) = match (w(0), w(1)) {
        ("let", "us") => (2, "let us"),
        ("you", "all") | ("you", "guys") => (2, "you"),
        ("we" | "you" | "everyone" | "everybody" | "y'all", _) => (1, w(0)),
        _ => (0, ""),
    };
    let mut k = s + subject_len;
    if !subject.is_empty() && subject != "let us" {
        k = skip_modals(part, k);
    }
    while part.get(k).is_some_and(|x| ADVERBS.contains(x)) {
        k += 1;
    }
    if trigger_at(part, k, !subject.is_empty()) {
        return true;
    }
    // "We use …", "we're using …", "we will use …", "we go with …", "let's use …".
    if subject == "we" || subject == "let us" {
        let rest: Vec<&str> =
            part[s + subject_len..].iter().copied().filter(|x| !ADVERBS.contains(x) && *x != "only").collect();
        let patterns: &[&[&str]] = &[
            &["use"],
            &["are", "using"],
            &["will", "use"],
            &["will", "be", "using"],
            &["are", "going", "with"],
            &["are", "going", "to", "use"],
            &["go", "with"],
            &["are", "sticking", "with"],
        ];
        if patterns.iter().any(|p| rest.starts_with(p)) {
            return true;
        }
    }
    false
}

/// After a subject: "should", "must", "need to", "have to", "will", "are going to", "shall", "gotta".
fn skip_modals(part: &[&str], mut k: usize) -> usize {
    loop {
        let here = |n: usize| part.get(k + n).copied().unwrap_or("");
        let step = match (here(0), here(1), here(2)) {
            ("should" | "shall" | "will" | "gotta", _, _) => 1,
            ("need" | "have", "to", _) => 2,
            ("are", "going", "to") => 3,
            (a, _, _) if ADVERBS.contains(&a) => 1,
            _ => return k,
        };
        k += step;
    }
}

/// Whether the words at `k` are a trigger: "never/always <verb>", "do not <verb>", "only use", "use only",
/// "avoid", "stick to/with", "make sure", "be sure", "ensure".
fn trigger_at(part: &[&str], k: usize, has_subject: bool) -> bool {
    let w = |n: usize| part.get(k + n).copied().unwrap_or("");
    if k > 0 && matches!(part[k - 1], "have" | "has" | "had") {
        return false;
    }
    match w(0) {
        "never" | "always" => {
            let mut v = 1;
            while ADVERBS.contains(&w(v)) {
                v += 1;
            }
            let verb = w(v);
            !verb.is_empty() && verb != "mind" && !is_past_form(verb)
        }
        "do" => w(1) == "not" && !w(2).is_empty() && !DONT_EXCEPTIONS.contains(&w(2)),
        "only" => w(1) == "use",
        "use" => w(1) == "only",
        "avoid" => true,
        "stick" => matches!(w(1), "to" | "with"),
        "make" | "be" if !has_subject => w(1) == "sure",
        "ensure" => !has_subject,
        _ => false,
    }
}

#[cfg(test)]
mod tests;
