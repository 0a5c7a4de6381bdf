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
