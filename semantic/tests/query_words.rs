//! The words part of a hybrid search: the query without its function words.

use cowork_semantic::query::{is_stop_word, query_words};

#[test]
fn a_question_keeps_its_rare_words_as_typed() {
    assert_eq!(query_words("When did Caroline go to the LGBTQ support group?"), "Caroline go LGBTQ support group?");
    // A possessive stays on its word (the full-text search reads "Caroline's" as Caroline).
    assert_eq!(query_words("What is Caroline's identity?"), "Caroline's identity?");
    // An identifier or a path is one word, kept whole.
    assert_eq!(query_words("where is the refresh_token set in src/auth.py"), "refresh_token set src/auth.py");
    assert!(is_stop_word("The") && !is_stop_word("token"));
}

#[test]
fn phrases_and_queries_of_only_common_words_are_kept_whole() {
    assert_eq!(query_words("what did we say about \"the plan\""), "what did we say about \"the plan\"");
    assert_eq!(query_words("what is it?"), "what is it?");
    assert_eq!(query_words("  "), "  ");
    // Punctuation alone is no word.
    assert_eq!(query_words("deploy — when?"), "deploy");
}
