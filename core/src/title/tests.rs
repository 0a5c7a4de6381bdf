use super::title_from_message;

#[track_caller]
fn check(message: &str, title: &str) {
    assert_eq!(title_from_message(message), title, "the title of the message {message:?}");
}

#[test]
fn titles_leave_out_control_words() {
    // Regression: a session started with "[[switches]] …" was titled "[[switches]] …".
    check("[[switches]] Plan the release", "Plan the release");
    check("[[fault:slow]] tell me a story [[reasoning]]", "tell me a story");
    check("Write it [[code:python]] now", "Write it now");
    check("[[reasoning]]\n\nWhy is the sky blue?", "Why is the sky blue?");
}

#[test]
fn brackets_that_are_words_stay() {
    check("What does [[a b]] mean?", "What does [[a b]] mean?");
    check("Wiki links look like [[Page]]", "Wiki links look like [[Page]]");
    check("an unclosed [[ bracket", "an unclosed [[ bracket");
    check("arrays: x[[0]]", "arrays: x[[0]]");
    check("[[fault:429x2]][[drop-stream:5]] go", "go");
    check("[[]] empty", "[[]] empty");
}

#[test]
fn the_first_line_with_words_is_the_title() {
    check("  hello   world  \nsecond line", "hello world");
    check("", "");
    check("[[reasoning]]", "");
    check("\n\n  \nlater", "later");
}
