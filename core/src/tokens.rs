//! Token estimation: characters / 4 by default, calibrated per model from provider-reported usage.

/// Default characters per token when a model has not been calibrated yet.
pub const DEFAULT_CHARS_PER_TOKEN: f64 = 4.0;

/// Estimated tokens of `text` at the default ratio (rounded up; an empty string is 0 tokens).
pub fn estimate_tokens(text: &str) -> i64 {
    estimate_with_ratio(text, DEFAULT_CHARS_PER_TOKEN)
}

/// Estimated tokens of `text` at `chars_per_token`.
pub fn estimate_with_ratio(text: &str, chars_per_token: f64) -> i64 {
    let chars = text.chars().count() as f64;
    (chars / chars_per_token).ceil() as i64
}

/// The lowest and highest characters-per-token ratio a calibration will ever hold. Real tokenizers sit
/// between about 1.5 (CJK, dense code) and 6 (plain English); anything outside this range is a bad report.
pub const MIN_CHARS_PER_TOKEN: f64 = 1.0;
pub const MAX_CHARS_PER_TOKEN: f64 = 10.0;

/// After this many samples the calibration becomes an exponential moving average with weight
/// `1 / CALIBRATION_WINDOW`, so it keeps following a model whose tokenizer (or prompt mix) drifts.
pub const CALIBRATION_WINDOW: u32 = 20;

/// A per-model characters-per-token ratio learned from the prompt sizes providers report.
///
/// Stored beside the model's settings; starts at [`DEFAULT_CHARS_PER_TOKEN`]. The first sample replaces
/// the default outright, the next ones are a running mean, and from [`CALIBRATION_WINDOW`] samples on an
/// exponential moving average. Reports that cannot be right (zero or negative tokens, an empty prompt, a
/// ratio below half of [`MIN_CHARS_PER_TOKEN`] or above twice [`MAX_CHARS_PER_TOKEN`], e.g. a provider
/// that counts only uncached tokens) are ignored; accepted samples are clamped into the sane range.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Calibration {
    pub chars_per_token: f64,
    /// How many reports have been taken into account.
    pub samples: u32,
}

impl Default for Calibration {
    fn default() -> Calibration {
        Calibration { chars_per_token: DEFAULT_CHARS_PER_TOKEN, samples: 0 }
    }
}

impl Calibration {
    /// Takes one provider report into account: the request had `prompt_chars` characters and the
    /// provider says it was `reported_prompt_tokens` tokens. Returns whether the sample was used.
    pub fn observe(&mut self, prompt_chars: usize, reported_prompt_tokens: i64) -> bool {
        if prompt_chars == 0 || reported_prompt_tokens <= 0 {
            return false;
        }
        let ratio = prompt_chars as f64 / reported_prompt_tokens as f64;
        if !ratio.is_finite() || !(MIN_CHARS_PER_TOKEN / 2.0..=MAX_CHARS_PER_TOKEN * 2.0).contains(&ratio) {
            return false;
        }
        let sample = ratio.clamp(MIN_CHARS_PER_TOKEN, MAX_CHARS_PER_TOKEN);
        // A stored value may come from an older or hand-edited settings file: bring it back in range.
        let current = self.ratio();
        let weight = 1.0 / f64::from(self.samples.min(CALIBRATION_WINDOW - 1) + 1);
        self.chars_per_token = (current + (sample - current) * weight).clamp(MIN_CHARS_PER_TOKEN, MAX_CHARS_PER_TOKEN);
        self.samples = self.samples.saturating_add(1);
        true
    }

    /// The ratio to estimate with: the learned one, or the default when the stored one is unusable.
    pub fn ratio(&self) -> f64 {
        if self.chars_per_token.is_finite() {
            self.chars_per_token.clamp(MIN_CHARS_PER_TOKEN, MAX_CHARS_PER_TOKEN)
        } else {
            DEFAULT_CHARS_PER_TOKEN
        }
    }

    /// Estimated tokens of `text` at the calibrated ratio.
    pub fn estimate(&self, text: &str) -> i64 {
        estimate_with_ratio(text, self.ratio())
    }
}

#[cfg(test)]
mod tests {
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
}
