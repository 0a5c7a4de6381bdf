use super::*;
use crate::chat::test_data::session;

#[test]
fn the_context_meter_says_what_was_sent_and_what_stayed_in_the_archive() {
    let m = cowork_core::ContextManifest {
        session_id: "s".into(),
        turn_numbers: (41..=100).collect(),
        trimmed_turns: vec![50],
        reasoning_turns: Vec::new(),
        state_version: 3,
        estimated_tokens: 12_345,
        budget_tokens: 100_000,
        usage: serde_json::Value::Null,
        created_at: 0,
    };
    let meter = context_meter(&m, 101);
    assert_eq!(meter.percent, 12);
    assert_eq!(meter.tokens, "12.3k of 100k tokens (12%)");
    assert_eq!(meter.turns, "60 turns in the window; 41 only in the archive (the model can search them); 1 shortened");
    assert_eq!(compact(950), "950");
    assert_eq!(compact(2_000_000), "2M");
}

#[test]
fn errors_offer_the_place_that_fixes_them_by_kind() {
    use crate::protocol::ErrorKind as K;
    for kind in [K::Auth, K::Quota, K::BadRequest, K::Cors, K::ContextOverflow, K::Network] {
        assert_eq!(fix_for(kind), Some(Fix::Settings), "{kind:?}");
    }
    assert_eq!(fix_for(K::StorageFull), Some(Fix::Storage));
    for kind in [K::RateLimited, K::ModelServer, K::BadReply, K::Storage, K::Invalid, K::Internal] {
        assert_eq!(fix_for(kind), None, "{kind:?}");
    }
}

/// A 401 travels from the endpoint's answer through the worker's error conversion to the notice, and
/// the notice offers Settings because of its kind; words alone ("Settings" in a Stop message) do not.
#[test]
fn a_rejected_api_key_offers_settings_from_its_kind_not_its_words() {
    use crate::chat::Notice;
    use crate::protocol::Problem;
    let error = cowork_core::provider::classify_http_error(401, None, r#"{"error":{"message":"bad key"}}"#);
    let problem = Problem::from(cowork_core::Error::from(error));
    assert_eq!(problem.kind, crate::protocol::ErrorKind::Auth);
    let notice = Notice::problem(&problem);
    assert_eq!(notice.fix(), Some(Fix::Settings), "{notice:?}");
    let stopped = Notice::info("Reply interrupted: you pressed Stop; change the model in Settings to try another");
    assert_eq!(stopped.fix(), None, "a message that mentions Settings is not an error of the settings");
}

#[test]
fn long_text_is_clipped_at_a_character_boundary() {
    assert_eq!(clip_for_display("short", 10), "short");
    assert_eq!(clip_for_display("ééé", 3), "é", "never half a character");
    assert_eq!(clip_for_display(&"x".repeat(30_000), DISPLAY_CHARS).len(), DISPLAY_CHARS);
}

#[test]
fn durations_read_naturally() {
    assert_eq!(duration_text(40), "40 ms");
    assert_eq!(duration_text(1_250), "1.2 s");
    assert_eq!(duration_text(95_000), "1 min 35 s");
}

#[test]
fn times_read_naturally() {
    let now = 1_000_000_000_000;
    assert_eq!(relative_time(now, now + 5_000), "just now", "a clock a little ahead is not the future");
    assert_eq!(relative_time(now, now - 5 * 60_000), "5 min ago");
    assert_eq!(relative_time(now, now - 3 * 3_600_000), "3 h ago");
    assert_eq!(relative_time(now, now - 30 * 3_600_000), "yesterday");
    assert_eq!(relative_time(now, now - 4 * 86_400_000), "4 days ago");
}

#[test]
fn how_long_ago_decides_the_form_of_a_time() {
    let now = 1_710_102_600_000; // 2024-03-10T20:30:00Z
    let cases = [
        (now + 5_000, When::JustNow),
        (now - 59_999, When::JustNow),
        (now - 60_000, When::Minutes(1)),
        (now - 59 * 60_000, When::Minutes(59)),
        (now - 60 * 60_000, When::Hours(1)),
        (now - (24 * 60 - 1) * 60_000, When::Hours(23)),
        (now - 24 * 3_600_000, When::Yesterday),
        (now - 47 * 3_600_000, When::Yesterday),
        (now - 48 * 3_600_000, When::Days(2)),
        (now - 6 * 86_400_000, When::Days(6)),
        (now - 7 * 86_400_000, When::Date(now - 7 * 86_400_000)),
    ];
    for (then, want) in cases {
        assert_eq!(when(now, then), want, "{} ms ago", now - then);
    }
}

#[test]
fn natively_old_dates_and_full_times_are_in_utc() {
    let instant = 1_710_102_600_000; // 2024-03-10T20:30:00Z (11 March in Auckland)
    assert_eq!(When::Date(instant).english(), "2024-03-10");
    assert_eq!(relative_time(instant + 30 * 86_400_000, instant), "2024-03-10");
    assert_eq!(full_time(instant), "2024-03-10 20:30 UTC");
    assert_eq!(full_time(0), "1970-01-01 00:00 UTC");
    assert_eq!(When::Date(951_782_400_000).english(), "2000-02-29", "a leap day");
    assert_eq!(When::Date(-86_400_000).english(), "1969-12-31", "before the epoch");
}

#[test]
fn the_filter_looks_at_title_workspace_and_model() {
    let s = session("s", "Fix the Login bug", "backend", "demo");
    assert!(session_matches(&s, ""));
    assert!(session_matches(&s, " login "));
    assert!(session_matches(&s, "BACKEND"));
    assert!(!session_matches(&s, "frontend"));
}

#[test]
fn workspaces_come_in_the_order_of_their_latest_session() {
    let newest_first = [
        session("a", "", "web", ""),
        session("b", "", "api", ""),
        session("c", "", "web", ""),
        session("d", "", "", ""),
    ];
    assert_eq!(workspace_order(&newest_first), ["web", "api", ""]);
    assert!(workspace_order(&[]).is_empty());
}

#[test]
fn bytes_read_naturally() {
    let cases =
        [(0.0, "0 B"), (999.0, "999 B"), (1_234.0, "1.2 KB"), (812_000.0, "812 KB"), (9_800_000_000.0, "9.8 GB")];
    for (n, want) in cases {
        assert_eq!(human_bytes(n), want, "{n}");
    }
}

#[test]
fn highlights_split_the_snippet() {
    let pieces = highlight_pieces("see rotate_refresh_token_v2 now", &[(4, 27)]);
    assert_eq!(
        pieces,
        [("see ".to_owned(), false), ("rotate_refresh_token_v2".to_owned(), true), (" now".to_owned(), false)]
    );
    // Out-of-range or mid-character ranges are ignored rather than panicking.
    assert_eq!(highlight_pieces("héllo", &[(2, 3), (9, 12)]), [("héllo".to_owned(), false)]);
}

#[test]
fn a_replys_reasoning_and_refusal_are_read_from_its_metadata() {
    use serde_json::json;
    let check = |metadata: serde_json::Value, reasoning: Option<&str>, refused: bool| {
        assert_eq!(reasoning_of(&metadata), reasoning, "reasoning of {metadata}");
        assert_eq!(is_refused(&metadata), refused, "refused of {metadata}");
    };
    check(
        json!({"reasoning": "Step 1.\nStep 2.", "reasoning_field": "reasoning_content"}),
        Some("Step 1.\nStep 2."),
        false,
    );
    check(json!({"reasoning": "  <b>kept</b> verbatim "}), Some("  <b>kept</b> verbatim "), false);
    check(json!({"refused": true, "finish_reason": "refusal"}), None, true);
    // Nothing to show: no metadata, an empty or blank reasoning, other types.
    check(serde_json::Value::Null, None, false);
    check(json!({"reasoning": "", "refused": false}), None, false);
    check(json!({"reasoning": " \n ", "refused": "yes"}), None, false);
    check(json!({"reasoning": 42}), None, false);
}

#[test]
fn the_thinking_summary_counts_tokens_as_the_core_estimates_them() {
    assert_eq!(thinking_summary("abcd"), "Thinking · 1 token");
    assert_eq!(thinking_summary("abcde"), "Thinking · 2 tokens");
    let long = "Let me think about Explain the plan. The user wants a short answer.";
    assert_eq!(thinking_summary(long), format!("Thinking · {} tokens", long.chars().count().div_ceil(4)));
    assert_eq!(thinking_summary("é".repeat(8).as_str()), "Thinking · 2 tokens", "characters, not bytes");
}

#[test]
fn forks_are_listed_under_the_session_they_came_from() {
    let fork = |id: &str, parent: &str| Session { parent_session_id: Some(parent.into()), ..session(id, id, "w", "m") };
    // Newest first, as the archive lists them: c (fork of a), b, a2 (fork of a), a, o (fork of a gone one).
    let list = [
        fork("c", "a"),
        session("b", "b", "w", "m"),
        fork("a2", "a"),
        fork("a2x", "a2"),
        session("a", "a", "w", "m"),
        fork("o", "gone"),
    ];
    let nested: Vec<(String, usize)> = nest_forks(&list).into_iter().map(|(s, d)| (s.id, d)).collect();
    let want = [("b", 0), ("a", 0), ("c", 1), ("a2", 1), ("a2x", 2), ("o", 0)];
    assert_eq!(nested, want.map(|(id, d)| (id.to_owned(), d)), "a session keeps its place by its own last activity");
    assert_eq!(nest_forks(&list).len(), list.len(), "nothing dropped");
}

#[test]
fn the_live_region_says_a_finished_reply_once_in_plain_words() {
    use crate::chat::test_data::turn;
    use cowork_core::{Role, TurnStatus};
    let mut reply = turn(2);
    reply.role = Role::Assistant;
    reply.content = "Use **`def`**:\n\n```python\ndef f(): pass\n```".into();
    let turns = vec![turn(1), reply.clone()];
    assert_eq!(announcement(&turns).as_deref(), Some("Reply: Use def:\ndef f(): pass"));
    // Nothing for a reply cut short, or when the last turn is not a reply.
    let mut cut = reply.clone();
    cut.status = TurnStatus::Interrupted;
    assert_eq!(announcement(&[turn(1), cut]), None);
    assert_eq!(announcement(&[reply.clone(), turn(3)]), None);
    // A long reply is said up to a limit.
    reply.content = "word ".repeat(1_000);
    let said = announcement(&[reply]).unwrap();
    assert!(said.ends_with('…') && said.chars().count() <= ANNOUNCED_CHARS + "Reply: …".len(), "{}", said.len());
}

#[test]
fn a_user_message_s_fenced_code_is_told_from_its_prose() {
    let check = |text: &str, expect: &[(bool, &str)]| assert_eq!(fenced_parts(text), expect, "{text:?}");
    check("no code here", &[(false, "no code here")]);
    check(
        "Why does this fail?\n```python\ndef f():\n    return 1\n```\nThanks",
        &[(false, "Why does this fail?"), (true, "def f():\n    return 1"), (false, "Thanks")],
    );
    check("```\nunclosed\ncode", &[(true, "unclosed\ncode")]);
    check("inline ``` is prose", &[(false, "inline ``` is prose")]);
    check("", &[]);
}
