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

/// How much of a finished reply the screen reader's live region says (the rest is in the conversation).
pub const ANNOUNCED_CHARS: usize = 2_000;

/// What the live region says when a reply of this tab has finished: the last turn, when it is a
/// complete reply, as plain words ("Reply: …"), at most [`ANNOUNCED_CHARS`] of them.
pub fn announcement(turns: &[cowork_core::Turn]) -> Option<String> {
    let last = turns.last().filter(|t| t.role == cowork_core::Role::Assistant)?;
    if last.status != cowork_core::TurnStatus::Complete || last.content.trim().is_empty() {
        return None;
    }
    let words = crate::markdown::plain_text(&last.content);
    let clipped: String = words.chars().take(ANNOUNCED_CHARS).collect();
    let more = if clipped.len() < words.len() { "…" } else { "" };
    Some(format!("Reply: {clipped}{more}"))
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

/// `sessions` (newest first) with each fork placed under the session it was forked from, newest first
/// at every level, and its depth (0 for a session shown at the top). A fork whose parent is not among
/// `sessions` (hidden, filtered out, or deleted) is shown at the top.
pub fn nest_forks(sessions: &[Session]) -> Vec<(Session, usize)> {
    let shown: std::collections::HashSet<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    fn parent_of<'a>(s: &'a Session, shown: &std::collections::HashSet<&str>) -> Option<&'a str> {
        s.parent_session_id.as_deref().filter(|p| shown.contains(p) && *p != s.id)
    }
    let mut out = Vec::with_capacity(sessions.len());
    // Depth-first from each top session; `sessions` is already newest first, so children come in order.
    let mut stack: Vec<(&Session, usize)> =
        sessions.iter().rev().filter(|s| parent_of(s, &shown).is_none()).map(|s| (s, 0)).collect();
    let mut placed = std::collections::HashSet::new();
    while let Some((s, depth)) = stack.pop() {
        if !placed.insert(s.id.as_str()) {
            continue;
        }
        out.push((s.clone(), depth));
        stack.extend(
            sessions.iter().rev().filter(|c| parent_of(c, &shown) == Some(s.id.as_str())).map(|c| (c, depth + 1)),
        );
    }
    // Anything left (a cycle cannot happen, but never drop a session) goes at the end.
    out.extend(sessions.iter().filter(|s| !placed.contains(s.id.as_str())).map(|s| (s.clone(), 0)));
    out
}

/// Whether a session matches the sidebar filter (title, workspace or model; any case).
pub fn session_matches(s: &Session, filter: &str) -> bool {
    let f = filter.trim().to_lowercase();
    f.is_empty() || [&s.title, &s.workspace, &s.model].iter().any(|x| x.to_lowercase().contains(&f))
}

/// Which form a past moment is shown in, from how long ago it was: decided here (pure, tested
/// natively), put into words by [`When::text`] (the browser's `Intl`, in the user's language).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Under a minute ago (or a clock a little ahead).
    JustNow,
    /// 1 to 59 minutes ago.
    Minutes(i64),
    /// 1 to 23 hours ago.
    Hours(i64),
    /// 24 to 47 hours ago.
    Yesterday,
    /// 2 to 6 days ago.
    Days(i64),
    /// A week or more ago: the date itself (ms since the Unix epoch), in the user's time zone.
    Date(i64),
}

/// The form to show `then_ms` in, seen at `now_ms` (both ms since the Unix epoch).
pub fn when(now_ms: i64, then_ms: i64) -> When {
    let mins = (now_ms - then_ms).max(0) / 60_000;
    match mins {
        0 => When::JustNow,
        1..=59 => When::Minutes(mins),
        60..=1439 => When::Hours(mins / 60),
        1440..=2879 => When::Yesterday,
        2880..=10079 => When::Days(mins / 1440),
        _ => When::Date(then_ms),
    }
}

impl When {
    /// In words: in the browser, `Intl.RelativeTimeFormat` (`numeric: "auto"`: "yesterday", "5 minutes
    /// ago", "vor 5 Minuten") or, for a date, `Intl.DateTimeFormat` (`dateStyle: "medium"`) in the
    /// user's locale and time zone; natively, plain English ("5 min ago") and the UTC date.
    pub fn text(self) -> String {
        #[cfg(target_arch = "wasm32")]
        {
            intl::when_text(self)
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.english()
        }
    }

    /// Plain English, with the date in UTC ("just now", "5 min ago", "2024-03-10"): the native
    /// rendering, where there is no `Intl`.
    pub fn english(self) -> String {
        match self {
            When::JustNow => "just now".into(),
            When::Minutes(n) => format!("{n} min ago"),
            When::Hours(n) => format!("{n} h ago"),
            When::Yesterday => "yesterday".into(),
            When::Days(n) => format!("{n} days ago"),
            When::Date(ms) => {
                let (y, m, d) = utc_date(ms);
                format!("{y:04}-{m:02}-{d:02}")
            }
        }
    }
}

/// How long ago `then_ms` was, in words (see [`when`] and [`When::text`]).
pub fn relative_time(now_ms: i64, then_ms: i64) -> String {
    when(now_ms, then_ms).text()
}

/// The full date and time of `ms` (ms since the Unix epoch), for a tooltip: in the browser,
/// `Intl.DateTimeFormat` (`dateStyle: "full"`, `timeStyle: "short"`) in the user's locale and time
/// zone; natively, "2024-03-10 20:30 UTC".
pub fn full_time(ms: i64) -> String {
    #[cfg(target_arch = "wasm32")]
    {
        intl::date_time(ms, "full", Some("short"))
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let (y, m, d) = utc_date(ms);
        let mins = ms.rem_euclid(86_400_000) / 60_000;
        format!("{y:04}-{m:02}-{d:02} {:02}:{:02} UTC", mins / 60, mins % 60)
    }
}

/// The UTC calendar date (year, month, day) of `ms`, for the native rendering only (the browser
/// uses `Intl`).
pub(crate) use cowork_core::time::utc_date;

/// The browser's `Intl`, with its default locale (the user's language) and time zone.
#[cfg(target_arch = "wasm32")]
mod intl {
    use super::When;
    use js_sys::{Array, Date, Intl, Object, Reflect};
    use wasm_bindgen::JsValue;

    fn options(pairs: &[(&str, &str)]) -> Object {
        let o = Object::new();
        for (k, v) in pairs {
            // Setting a property on a fresh plain object cannot fail.
            let _ = Reflect::set(&o, &JsValue::from_str(k), &JsValue::from_str(v));
        }
        o
    }

    /// `new Intl.RelativeTimeFormat(undefined, { numeric: "auto" }).format(-n, unit)`, or for a date
    /// [`date_time`] with the medium date style.
    pub(super) fn when_text(w: When) -> String {
        let (n, unit) = match w {
            When::JustNow => (0, "second"),
            When::Minutes(n) => (n, "minute"),
            When::Hours(n) => (n, "hour"),
            When::Yesterday => (1, "day"),
            When::Days(n) => (n, "day"),
            When::Date(ms) => return date_time(ms, "medium", None),
        };
        // An empty list of locales is the browser's default locale, as `undefined` is.
        let format = Intl::RelativeTimeFormat::new(&Array::new(), &options(&[("numeric", "auto")]));
        // `-0` would read "0 seconds ago" in some engines; 0 is "now".
        let value = if n == 0 { 0.0 } else { -(n as f64) };
        format.format(value, unit).into()
    }

    /// `new Intl.DateTimeFormat(undefined, { dateStyle, timeStyle }).format(new Date(ms))`.
    pub(super) fn date_time(ms: i64, date_style: &str, time_style: Option<&str>) -> String {
        let mut pairs = vec![("dateStyle", date_style)];
        if let Some(t) = time_style {
            pairs.push(("timeStyle", t));
        }
        let format = Intl::DateTimeFormat::new(&Array::new(), &options(&pairs));
        let date = Date::new(&JsValue::from_f64(ms as f64));
        format.format().call1(&JsValue::UNDEFINED, &date).ok().and_then(|s| s.as_string()).unwrap_or_default()
    }
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

/// A message of the user's in runs of prose (`false`) and of code (`true`): the code between lines
/// that open and close a ``` fence (the fence lines themselves left out), so it can be shown in
/// monospace while everything else stays plain text. An unclosed fence runs to the end.
pub fn fenced_parts(text: &str) -> Vec<(bool, &str)> {
    let mut parts = Vec::new();
    let (mut code, mut start, mut at) = (false, 0, 0);
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            if start < at {
                parts.push((code, text[start..at].trim_end_matches('\n')));
            }
            code = !code;
            start = at + line.len();
        }
        at += line.len();
    }
    if start < text.len() {
        parts.push((code, &text[start..]));
    }
    parts
}

#[cfg(test)]
mod tests;
