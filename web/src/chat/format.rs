//! Formatting for display: sizes, durations, times, clipped text, search highlights, the context
//! meter's figures, the sidebar's filter and grouping, the place that fixes an error, and what a
//! reply's metadata says of it (its reasoning, a refusal). Pure, tested natively.

use crate::protocol::ErrorKind;
use cowork_core::Session;

/// How much of a turn's text is shown before "Show all".
pub const DISPLAY_CHARS: usize = 20_000;

/// The first `limit` bytes of `text`, cut at a character boundary.
pub fn clip_for_display(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// 40 → "40 ms", 1_250 → "1.2 s", 95_000 → "1 min 35 s".
pub fn duration_text(ms: i64) -> String {
    match ms.max(0) {
        ms @ 0..=999 => format!("{ms} ms"),
        ms @ 1_000..=59_999 => format!("{:.1} s", ms as f64 / 1000.0),
        ms => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1000),
    }
}

/// Where the user fixes what an error describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fix {
    /// The Settings dialog (endpoint, key, model, context window).
    Settings,
    /// The Storage dialog (when the archive is out of space).
    Storage,
}

/// The action offered beside an error, from its kind (never from its wording): Settings for the
/// endpoint, key, model, URL or context window; Storage for space.
pub fn fix_for(kind: ErrorKind) -> Option<Fix> {
    match kind {
        ErrorKind::Auth
        | ErrorKind::Quota
        | ErrorKind::BadRequest
        | ErrorKind::Cors
        | ErrorKind::ContextOverflow
        | ErrorKind::Network => Some(Fix::Settings),
        ErrorKind::StorageFull => Some(Fix::Storage),
        _ => None,
    }
}

/// The workspaces the sessions are in, sorted, each once.
pub fn workspaces(sessions: &[Session]) -> Vec<String> {
    let mut all: Vec<String> = sessions.iter().map(|s| s.workspace.clone()).collect();
    all.sort();
    all.dedup();
    all
}

/// The workspaces of `sessions` (newest first) in the order of their most recent session.
pub fn workspace_order(sessions: &[Session]) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    for s in sessions {
        if !order.contains(&s.workspace) {
            order.push(s.workspace.clone());
        }
    }
    order
}

/// Whether a session matches the sidebar filter (title, workspace or model; any case).
pub fn session_matches(s: &Session, filter: &str) -> bool {
    let f = filter.trim().to_lowercase();
    f.is_empty() || [&s.title, &s.workspace, &s.model].iter().any(|x| x.to_lowercase().contains(&f))
}

/// "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", or the date.
pub fn relative_time(now_ms: i64, then_ms: i64) -> String {
    let mins = (now_ms - then_ms).max(0) / 60_000;
    match mins {
        0 => "just now".into(),
        1..=59 => format!("{mins} min ago"),
        60..=1439 => format!("{} h ago", mins / 60),
        1440..=2879 => "yesterday".into(),
        2880..=10079 => format!("{} days ago", mins / 1440),
        _ => {
            let date = js_date(then_ms);
            date.unwrap_or_else(|| format!("{} weeks ago", mins / 10080))
        }
    }
}

#[cfg(target_arch = "wasm32")]
fn js_date(ms: i64) -> Option<String> {
    Some(
        String::from(js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64)).to_iso_string())
            .chars()
            .take(10)
            .collect(),
    )
}
#[cfg(not(target_arch = "wasm32"))]
fn js_date(_ms: i64) -> Option<String> {
    None
}

/// The context meter's figures, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Meter {
    /// Tokens the last request was estimated at.
    pub used: i64,
    /// Tokens the context may take.
    pub budget: i64,
    /// `used` as a share of `budget`, 0 to 100 (0 when there is no budget).
    pub percent: i64,
    /// The token figures in words.
    pub tokens: String,
    /// How many turns were sent, left in the archive and shortened, in words.
    pub turns: String,
}

/// The meter for a session of `turn_count` turns whose last request is described by `m`.
pub fn context_meter(m: &cowork_core::ContextManifest, turn_count: i64) -> Meter {
    let percent = if m.budget_tokens > 0 { (m.estimated_tokens * 100 / m.budget_tokens).clamp(0, 100) } else { 0 };
    let sent = m.turn_numbers.len() as i64;
    let archived = (turn_count - sent).max(0);
    let mut turns = format!("{sent} turns in the window; {archived} only in the archive (the model can search them)");
    if !m.trimmed_turns.is_empty() {
        turns.push_str(&format!("; {} shortened", m.trimmed_turns.len()));
    }
    Meter {
        used: m.estimated_tokens,
        budget: m.budget_tokens,
        percent,
        tokens: format!("{} of {} tokens ({percent}%)", compact(m.estimated_tokens), compact(m.budget_tokens)),
        turns,
    }
}

/// 950 → "950", 12_300 → "12.3k", 2_000_000 → "2M".
pub fn compact(n: i64) -> String {
    match n {
        ..=999 => n.to_string(),
        1_000..=999_999 => format!("{:.1}k", n as f64 / 1e3).replace(".0k", "k"),
        _ => format!("{:.1}M", n as f64 / 1e6).replace(".0M", "M"),
    }
}

/// Splits a snippet into (text, is_match) pieces at the highlight byte ranges.
pub fn highlight_pieces(snippet: &str, highlights: &[(usize, usize)]) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut at = 0;
    for &(a, b) in highlights {
        let (a, b) = (a.min(snippet.len()), b.min(snippet.len()));
        if a < at || a >= b || !snippet.is_char_boundary(a) || !snippet.is_char_boundary(b) {
            continue;
        }
        if a > at {
            out.push((snippet[at..a].to_owned(), false));
        }
        out.push((snippet[a..b].to_owned(), true));
        at = b;
    }
    if at < snippet.len() {
        out.push((snippet[at..].to_owned(), false));
    }
    out
}

/// The reasoning ("thinking") a reply's metadata holds, verbatim; `None` when it has none, or only
/// whitespace.
pub fn reasoning_of(metadata: &serde_json::Value) -> Option<&str> {
    metadata.get("reasoning").and_then(|v| v.as_str()).filter(|r| !r.trim().is_empty())
}

/// Whether the reply's metadata marks it as a refusal (`"refused": true`).
pub fn is_refused(metadata: &serde_json::Value) -> bool {
    metadata.get("refused").and_then(|v| v.as_bool()) == Some(true)
}

/// The Thinking section's summary: "Thinking · 17 tokens", at the core's default estimate.
pub fn thinking_summary(reasoning: &str) -> String {
    match cowork_core::tokens::estimate_tokens(reasoning) {
        1 => "Thinking · 1 token".to_owned(),
        n => format!("Thinking · {n} tokens"),
    }
}

/// Bytes as a short human figure ("812 KB", "1.2 MB", "9.8 GB").
pub fn human_bytes(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = bytes.max(0.0);
    let mut unit = 0;
    while v >= 1000.0 && unit < UNITS.len() - 1 {
        v /= 1000.0;
        unit += 1;
    }
    if unit == 0 || v >= 100.0 {
        format!("{v:.0} {}", UNITS[unit])
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests;
