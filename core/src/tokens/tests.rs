//! Tests of token estimation and per-model calibration.

use super::*;

#[test]
fn estimates_round_up_and_count_chars_not_bytes() {
    let cases = [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("ééééé", 2), ("🦀🦀🦀🦀", 1)];
    for (text, expect) in cases {
        assert_eq!(estimate_tokens(text), expect, "estimate_tokens({text:?})");
    }
    assert_eq!(estimate_with_ratio("abcdef", 3.0), 2);
}

#[test]
fn calibration_converges_on_the_true_ratio() {
    let mut c = Calibration::default();
    // A tokenizer that really gives 3.1 chars per token, reported with ±5% noise (deterministic).
    for i in 0..200u32 {
        let chars = 10_000 + (i as usize * 37) % 5_000;
        let noise = 1.0 + ((i % 11) as f64 - 5.0) / 100.0;
        let tokens = (chars as f64 / 3.1 * noise).round() as i64;
        assert!(c.observe(chars, tokens));
    }
    assert!((c.chars_per_token - 3.1).abs() < 0.1, "did not converge: {c:?}");
    assert_eq!(c.samples, 200);
}

#[test]
fn calibration_follows_a_changed_tokenizer() {
    let mut c = Calibration::default();
    for _ in 0..100 {
        c.observe(4_000, 1_000);
    }
    assert!((c.chars_per_token - 4.0).abs() < 1e-9);
    for _ in 0..100 {
        c.observe(2_500, 1_000);
    }
    assert!((c.chars_per_token - 2.5).abs() < 0.05, "stuck at the old ratio: {c:?}");
}

#[test]
fn calibration_ignores_garbage_reports() {
    let mut c = Calibration::default();
    let garbage = [(0, 100), (1_000, 0), (1_000, -5), (100_000, 1), (10, 1_000)];
    for (chars, tokens) in garbage {
        assert!(!c.observe(chars, tokens), "accepted ({chars}, {tokens})");
    }
    assert_eq!(c, Calibration::default());
    // Plausible but extreme reports are clamped into the sane range.
    assert!(c.observe(15_000, 1_000));
    assert_eq!(c.chars_per_token, MAX_CHARS_PER_TOKEN);
    assert!(c.observe(700, 1_000));
    assert!(c.chars_per_token >= MIN_CHARS_PER_TOKEN && c.chars_per_token <= MAX_CHARS_PER_TOKEN);
}

#[test]
fn calibration_loads_old_or_broken_json() {
    let c: Calibration = serde_json::from_str("{}").unwrap();
    assert_eq!(c, Calibration::default());
    let c: Calibration = serde_json::from_str(r#"{"chars_per_token": 55.0, "samples": 3}"#).unwrap();
    assert_eq!(c.ratio(), MAX_CHARS_PER_TOKEN);
    assert_eq!(c.estimate("0123456789"), 1);
}
