//! Tests of `Terms`: any text becomes a valid FTS5 expression.

use super::*;

fn check(input: &str, prefix: bool, expect: Option<&str>) {
    let got = Terms::parse(input, prefix).all();
    assert_eq!(got.as_deref(), expect, "query {input:?} (prefix_last={prefix})");
}

#[test]
fn words_identifiers_paths_and_phrases() {
    check("jwt auth", false, Some(r#""jwt" AND "auth""#));
    check("refresh_token", false, Some(r#""refresh token""#));
    check("src/auth.py", false, Some(r#""src auth py""#));
    check(r#""exact phrase here" rest"#, false, Some(r#""exact phrase here" AND "rest""#));
    check("migrat", true, Some(r#"("migrat"* OR "mig" OR "mige" OR "migr" OR "migre" OR "migra" OR "migrae")"#));
    check("jwt", true, Some(r#""jwt"*"#));
    check("migrat ", true, Some(r#""migrat""#));
    check("auth auth", false, Some(r#""auth""#));
}

#[test]
fn fts_syntax_is_searched_as_text() {
    check(r#"NEAR(a b"#, false, Some(r#""NEAR a" AND "b""#));
    check("a AND b OR NOT c", false, Some(r#""a" AND "AND" AND "b" AND "OR" AND "NOT" AND "c""#));
    check(r#"unbalanced "quote here"#, false, Some(r#""unbalanced" AND "quote" AND "here""#));
    check("col:value ^start * -x +y", false, Some(r#""col value" AND "start" AND "x" AND "y""#));
    check("", false, None);
    check("*** \"\" () 🎉", false, None);
}

#[test]
fn long_queries_are_capped() {
    let long: String = (0..1000).map(|i| format!("w{i} ")).collect();
    assert_eq!(Terms::parse(&long, false).len(), MAX_TERMS);
}

#[test]
fn possessives_end_a_word() {
    check("Caroline's support group", false, Some(r#""Caroline" AND "support" AND "group""#));
    check("Caroline’s? James'", false, Some(r#""Caroline" AND "James""#));
    check(r#""Caroline's office""#, false, Some(r#""Caroline s office""#));
    check("it's 's", false, Some(r#""it" AND "s""#));
}

#[test]
fn single_terms_and_some_of_them() {
    let t = Terms::parse("jwt src/auth.py migrat", true);
    assert_eq!(t.term(1), r#""src auth py""#);
    assert_eq!(
        t.any_of(&[2, 0]).as_deref(),
        Some(r#"("migrat"* OR "mig" OR "mige" OR "migr" OR "migre" OR "migra" OR "migrae") OR "jwt""#)
    );
    assert_eq!(t.any_of(&[7]), None);
}

#[test]
fn a_prefix_also_matches_the_stems_of_the_words_it_may_begin() {
    // "runn" is "running" typed part way; the index holds it as "run".
    assert_eq!(Terms::parse("runn", true).term(0), r#"("runn"* OR "run" OR "rune")"#);
    // Only the last few shorter forms, none under MIN_STEM characters; in a phrase, its last word.
    let t = Terms::parse("src/happines", true);
    assert_eq!(
        t.term(0),
        r#"("src happines"* OR "src happi" OR "src happie" OR "src happin" OR "src happine" OR "src happinee")"#
    );
    assert_eq!(Terms::parse("run", true).term(0), r#""run"*"#);
}
