//! Tests of the back-reference phrases and the recall hint.

use super::*;

/// One row: the user's message and the phrase that must be found (`None`: not a back reference).
fn check(input: &str, expect: Option<&str>) {
    assert_eq!(find_back_reference(input), expect, "\ninput: {input:?}");
}

#[test]
fn finds_references_to_earlier_conversation() {
    let rows: &[(&str, &str)] = &[
        ("Do it like we discussed.", "like we discussed"),
        ("Same config as before please", "as before"),
        ("Fix that error", "that error"),
        ("What was that error again?", "that error"),
        ("Use the approach from earlier", "earlier"),
        ("EARLIER you showed me a diff", "earlier"),
        ("As I said, no ORM.", "as i said"),
        ("Use the one from before", "the one from before"),
        ("Remember when the build broke?", "remember when"),
        ("The thing we talked about yesterday", "we talked about"),
        ("Let's go back to the auth bug", "go back to"),
        ("You said the tests were flaky", "you said"),
        ("Same as last time", "last time"),
        ("The last time we ran it, it failed", "last time"),
        ("Apply that fix to the other module too", "that fix"),
        ("Run it the way we agreed", "we agreed"),
        ("It’s the same error as this morning", "the same error"),
        ("As   I  said, keep it simple", "as i said"),
        ("Did it previously pass?", "previously"),
        ("I mentioned a cache, where is it?", "i mentioned"),
    ];
    for (input, phrase) in rows {
        check(input, Some(phrase));
    }
}

#[test]
fn ignores_look_alikes() {
    let rows: &[&str] = &[
        "What is the earliest version that supports this?",
        "Rename earlier_value to first_value",
        "I need it earlier than Friday.",
        "For the last time, tabs.",
        "I'll go back to work after lunch",
        "Here is that error handling code I'm pasting below:",
        "That error handling is too verbose",
        "I'm pasting that error below",
        "Look at that file format spec attached",
        "Write a function that parses dates",
        "Add error handling to the parser",
        "Review the code:\n```\n// as before, that error is ignored\n```",
        "> like we discussed",
        "Why does `previously_seen` never reset?",
        "A new feature: export to CSV",
        "",
    ];
    for input in rows {
        check(input, None);
    }
}

#[test]
fn hint_only_when_the_window_is_missing_turns() {
    assert_eq!(back_reference_hint("fix that error", true), None);
    assert_eq!(back_reference_hint("add a CSV export", false), None);
    let hint = back_reference_hint("fix that error", false).expect("a hint");
    assert!(hint.contains("conversation_recall") && hint.contains("\"that error\""), "{hint}");
}
