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
/// The highest ratio a calibration holds (see [`MIN_CHARS_PER_TOKEN`]).
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
    /// The learned ratio, in characters per token; always within
    /// [`MIN_CHARS_PER_TOKEN`]..=[`MAX_CHARS_PER_TOKEN`].
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
mod tests;
