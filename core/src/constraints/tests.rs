//! Tests of constraint detection: one row per message, the constraints it must (not) yield.

use super::*;
use expect_test::{expect, Expect};

/// One row: the user's message and the constraints that must be found (empty: none).
fn check(input: &str, expect: &[&str]) {
    let got = detect_constraints(input);
    assert_eq!(got, expect, "\ninput: {input:?}\nfound: {got:?}\nexpected: {expect:?}");
}

#[test]
fn catches_stated_constraints() {
    let rows: &[(&str, &[&str])] = &[
        ("Never use an ORM.", &["Never use an ORM."]),
        ("always use raw SQL", &["always use raw SQL"]),
        ("We use JWT for auth.", &["We use JWT for auth."]),
        ("Don't touch the migrations.", &["Don't touch the migrations."]),
        ("don’t touch the migrations", &["don’t touch the migrations"]),
        ("DON'T USE GLOBALS!", &["DON'T USE GLOBALS!"]),
        ("Do not add new dependencies without asking.", &["Do not add new dependencies without asking."]),
        ("You must not change the public API.", &["You must not change the public API."]),
        ("All timestamps must be stored in UTC.", &["All timestamps must be stored in UTC."]),
        ("We're using Postgres 16 in production.", &["We're using Postgres 16 in production."]),
        ("We will use JWT with RS256.", &["We will use JWT with RS256."]),
        ("We only use UUID v7 for ids.", &["We only use UUID v7 for ids."]),
        ("Only use the standard library for dates.", &["Only use the standard library for dates."]),
        ("Avoid unwrap() in library code.", &["Avoid unwrap() in library code."]),
        ("Prefer composition over inheritance.", &["Prefer composition over inheritance."]),
        ("I'd prefer snake_case over camelCase in JSON.", &["I'd prefer snake_case over camelCase in JSON."]),
        ("Make sure to run cargo fmt before committing.", &["Make sure to run cargo fmt before committing."]),
        ("Make sure the CLI keeps working on Windows.", &["Make sure the CLI keeps working on Windows."]),
        ("Ensure every endpoint checks the session.", &["Ensure every endpoint checks the session."]),
        ("Please never commit directly to main.", &["Please never commit directly to main."]),
        ("From now on, always write the test first.", &["From now on, always write the test first."]),
        ("We don't use ORMs here.", &["We don't use ORMs here."]),
        ("Also, never log access tokens.", &["Also, never log access tokens."]),
        ("- never store secrets in the repo", &["never store secrets in the repo"]),
        ("1. Always pin dependency versions.", &["Always pin dependency versions."]),
        ("I never want to see `unwrap()` in production code.", &["I never want to see `unwrap()` in production code."]),
        ("You must use `sqlx` for queries.", &["You must use `sqlx` for queries."]),
        ("Let's use tabs for indentation.", &["Let's use tabs for indentation."]),
        ("We should always validate input at the boundary.", &["We should always validate input at the boundary."]),
        ("Stick with the existing error type.", &["Stick with the existing error type."]),
        ("Use raw SQL, and never use an ORM.", &["Use raw SQL, and never use an ORM."]),
        ("As I said, don't touch the migrations.", &["As I said, don't touch the migrations."]),
        ("We need to avoid global state.", &["We need to avoid global state."]),
        ("Thanks! Never use an ORM. Can you fix the login bug?", &["Never use an ORM."]),
        ("Two rules:\n- we use JWT\n- never touch the migrations\nOk?", &["we use JWT", "never touch the migrations"]),
        ("Never use an ORM. never use an ORM.", &["Never use an ORM.", "never use an ORM."]),
        ("Always use UTC, e.g. in logs and the DB.", &["Always use UTC, e.g. in logs and the DB."]),
    ];
    assert!(rows.len() >= 25);
    for (input, expect) in rows {
        check(input, expect);
    }
}

#[test]
fn ignores_questions_hypotheticals_quotes_code_and_the_past() {
    let rows: &[&str] = &[
        "Should we never use X?",
        "should we never use an ORM",
        "Do we always need to run migrations?",
        "Why do we always use raw SQL?",
        "Can you make sure the build passes?",
        "Would it be better to always use raw SQL?",
        "would it be better to always use raw SQL",
        "What if we always used Redis?",
        "If we never cache this, it will be slow.",
        "If you touch the DB, always write a migration.",
        "Maybe we should always use raw SQL.",
        "Perhaps we could avoid the ORM.",
        "I wonder whether we should always use JWT.",
        "He said we always deploy on Fridays.",
        "They say you should never use unwrap.",
        "The docs recommend always pinning versions.",
        "I think we use JWT somewhere.",
        "We never got that working.",
        "We never tried Redis.",
        "We always had problems with the ORM.",
        "We have always used tabs.",
        "We used to always deploy by hand.",
        "I always forget to run the formatter.",
        "I don't know why it fails.",
        "Don't worry about it, I'll handle the tests.",
        "Never mind, it works now.",
        "That function never returns null.",
        "The tests always fail on CI.",
        "It's like you never use the cache.",
        "It must have been the cache.",
        "That must be the bug.",
        "The error says \"never use unsafe here\".",
        "The linter prints “always use const” on every file.",
        "I ran `always_retry --never-fail` and it crashed.",
        "> never use an ORM",
        "```\n// never use this in prod\nalways_do_it();\n```",
        "Here is the log:\n~~~\nWARN: you must not call this twice\n~~~",
        "We prefer to ship on Mondays.",
        "",
        "   \n\n",
    ];
    assert!(rows.len() >= 25);
    for input in rows {
        check(input, &[]);
    }
}

#[test]
fn long_pasted_sentences_are_not_constraints() {
    let long = format!("Never use {} in the code.", "x".repeat(400));
    check(&long, &[]);
}

#[test]
fn splits_sentences_without_breaking_code_or_quotes() {
    fn show(line: &str, expect: Expect) {
        let got: Vec<String> = sentences(line).iter().map(|s| format!("{:?} / {:?}", s.text, s.masked)).collect();
        expect.assert_eq(&got.join("\n"));
    }
    show(
        "Use `a. b` here. Then \"stop. now\" ok! Done",
        expect![[r#"
            "Use `a. b` here." / "use  quoted  here."
            "Then \"stop. now\" ok!" / "then  quoted  ok!"
            "Done" / "done""#]],
    );
    show("Unclosed `code. here", expect![[r#""Unclosed `code. here" / "unclosed  quoted""#]]);
}
