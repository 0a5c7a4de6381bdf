//! The words part of a search by words and meaning: the query without its function words.
//!
//! A question as asked ("When did Caroline go to the LGBTQ support group?") carries words found in
//! most turns of a conversation ("when", "did", "the"), and full-text ranking lets turns that hold
//! many of them outrank the one that holds the question's rarer words. The meaning part embeds the
//! whole question; the words part searches for what is left after [`STOP_WORDS`] are taken out. On
//! LoCoMo (BENCHMARKS.md → Recall quality) that raised hybrid recall on the tuning and the held-out
//! conversations. The list lives here, in the model's worker (loaded only when recall by meaning is
//! on), so the storage worker every start loads carries no word list: it asks for the words with the
//! query's embedding.

/// A small fixed English stop-word list (function words, question words, auxiliaries, and the
/// pieces "'s", "n't" and "'d" split off as tokens).
pub const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "before", "being",
    "both", "but", "by", "can", "could", "d", "did", "do", "does", "doing", "during", "each", "for", "from", "had",
    "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it",
    "its", "just", "ll", "me", "might", "more", "most", "my", "no", "nor", "not", "of", "on", "once", "only", "or",
    "other", "our", "ours", "out", "over", "own", "re", "s", "same", "she", "should", "so", "some", "such", "t",
    "than", "that", "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those", "through",
    "to", "too", "under", "until", "up", "us", "ve", "very", "was", "we", "were", "what", "when", "where", "which",
    "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
];

/// Whether `token` (any case) is a stop word.
pub fn is_stop_word(token: &str) -> bool {
    STOP_WORDS.contains(&token.to_lowercase().as_str())
}

/// `query` for the words part of a hybrid search: its whitespace-separated words, in order and as
/// typed, without those whose letters and digits are all stop words ("did", "the?", "it's"). A query
/// with a double quote (a phrase asked for on purpose) is kept whole, and so is one that would be
/// left empty ("what is it"): the search then matches what it can.
pub fn query_words(query: &str) -> String {
    if query.contains('"') {
        return query.to_owned();
    }
    let kept: Vec<&str> = query
        .split_whitespace()
        .filter(|word| {
            let mut tokens = word.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).peekable();
            tokens.peek().is_some() && !tokens.all(is_stop_word)
        })
        .collect();
    if kept.is_empty() {
        query.to_owned()
    } else {
        kept.join(" ")
    }
}
