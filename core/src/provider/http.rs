//! Failures before a reply streams: classifying [`ModelError`]s from HTTP statuses and `fetch` failures with
//! advice for the user, `Retry-After`, and the bounded [`retry_plan`].

use std::time::Duration;

use serde_json::Value;

use super::stream::StreamFailure;
use super::{MAX_RETRIES, MAX_RETRY_WAIT_SECS};
use crate::error::ModelError;

impl From<StreamFailure> for crate::Error {
    fn from(e: StreamFailure) -> crate::Error {
        crate::Error::Model(ModelError::BadReply { message: e.message })
    }
}

/// Classifies a non-2xx response (status 0: the request never got a response). `retry_after_header` is
/// the raw `Retry-After` value (seconds or an HTTP date), `body` the response text.
pub fn classify_http_error(status: u16, retry_after_header: Option<&str>, body: &str) -> ModelError {
    classify_http_error_at(status, retry_after_header, body, crate::now_ms())
}

/// [`classify_http_error`] at a given time (milliseconds since the epoch), for HTTP-date `Retry-After`s.
pub fn classify_http_error_at(status: u16, retry_after_header: Option<&str>, body: &str, now_ms: i64) -> ModelError {
    let detail = error_detail(body);
    let said =
        |status: u16| if detail.is_empty() { format!("HTTP {status}") } else { format!("HTTP {status}: {detail}") };
    let lower = body.to_lowercase();
    let quota =
        ["insufficient_quota", "exceeded your current quota", "credit balance"].iter().any(|p| lower.contains(p));
    match status {
        0 => network_error(if detail.is_empty() { "no response" } else { &detail }),
        401 => ModelError::Auth {
            message: format!(
                "The model endpoint rejected the API key ({}). Check the API key in Settings; Cowork does not retry this.",
                said(status)
            ),
        },
        403 => ModelError::Auth {
            message: format!(
                "The model endpoint refused access ({}). Check the API key in Settings and that it may use this model; \
                 Cowork does not retry this.",
                said(status)
            ),
        },
        402 => quota_error(&said(status)),
        429 if quota => quota_error(&said(status)),
        400 if quota => quota_error(&said(status)),
        429 => {
            let retry_after_secs = retry_after_header.and_then(|h| parse_retry_after(h, now_ms));
            let plan = match retry_after_secs {
                Some(s) if s > MAX_RETRY_WAIT_SECS => format!(
                    "It asks to wait {s} s, longer than Cowork waits on its own: try again later, or check your plan's \
                     rate limits."
                ),
                Some(s) => format!(
                    "Cowork waits {} s as it asks and retries (at most {MAX_RETRIES} times); if it keeps happening, check \
                     your plan's rate limits.",
                    s.max(1)
                ),
                None => format!(
                    "Cowork waits and retries (at most {MAX_RETRIES} times); if it keeps happening, wait a minute or \
                     check your plan's rate limits."
                ),
            };
            ModelError::RateLimited {
                retry_after_secs,
                message: format!("The model endpoint is rate-limiting requests ({}). {plan}", said(status)),
            }
        }
        408 | 500..=599 => ModelError::Server {
            status,
            message: format!(
                "The model endpoint failed on its side ({}). Cowork retries a few times with growing waits; if it keeps \
                 failing, the service may be down: try again later.",
                said(status)
            ),
        },
        _ => {
            let advice = match status {
                404 => "Check the base URL in Settings (it usually ends in /v1) and the model name.",
                413 => "The request is too large for the endpoint: lower the context window in Settings.",
                400 | 422 if lower.contains("unsupported parameter") && lower.contains("max_tokens") => {
                    "This model does not accept max_tokens: clear the maximum output tokens in Settings."
                }
                400 | 422 if ["max_tokens", "max_completion_tokens", "output tokens"].iter().any(|p| lower.contains(p)) => {
                    "The reply's token limit is too high for this model: lower the maximum output tokens in Settings."
                }
                400 | 422 if ["context", "prompt is too long", "too many tokens"].iter().any(|p| lower.contains(p)) => {
                    "The conversation does not fit the model: lower the context window in Settings so requests fit."
                }
                400..=499 => "Check the model name and the endpoint settings in Settings.",
                _ => "Check the base URL in Settings: this does not look like a model endpoint.",
            };
            ModelError::BadRequest {
                status,
                message: format!("The model endpoint rejected the request ({}). {advice} Cowork does not retry this.", said(status)),
            }
        }
    }
}

fn quota_error(said: &str) -> ModelError {
    ModelError::Quota {
        message: format!(
            "The model provider refused the request because the account has no quota or credit left ({said}). Check \
             billing with your provider, or choose another endpoint in Settings; Cowork does not retry this."
        ),
    }
}

/// A request that got no response (offline, DNS failure, connection refused or reset).
pub fn network_error(detail: &str) -> ModelError {
    ModelError::Network {
        message: format!(
            "Could not reach the model endpoint ({}). Check your connection, the base URL in Settings and that the \
             server is running; Cowork retries a few times.",
            detail.trim()
        ),
    }
}

/// A response the browser blocked because the endpoint does not allow `app_origin` (CORS).
pub fn cors_error(endpoint_url: &str, app_origin: &str) -> ModelError {
    let endpoint = origin_of(endpoint_url);
    ModelError::Cors {
        message: format!(
            "The browser blocked the reply from {endpoint}: the endpoint does not allow requests from this page \
             ({app_origin}). Configure it to answer CORS preflight (OPTIONS) requests and to send \
             Access-Control-Allow-Origin: {app_origin} and Access-Control-Allow-Headers: authorization, content-type, \
             x-api-key, anthropic-version, anthropic-dangerous-direct-browser-access. For Ollama, start it with \
             OLLAMA_ORIGINS={app_origin}; for LM Studio, enable CORS in its server settings; for vLLM, pass \
             --allowed-origins; or put a proxy that adds these headers in front of it. Cowork does not retry this."
        ),
    }
}

/// Classifies a `fetch` that failed without a response. Browsers report network failures and CORS
/// blocks alike ("Failed to fetch"); `reachable_without_cors` is the result of a `mode: "no-cors"` probe
/// of the same URL (`Some(true)`: the server answered, so CORS blocked the real request), `None` when no
/// probe was made. A same-origin endpoint is never a CORS failure.
pub fn classify_fetch_failure(
    endpoint_url: &str,
    app_origin: &str,
    detail: &str,
    reachable_without_cors: Option<bool>,
) -> ModelError {
    let same_origin = origin_of(endpoint_url).eq_ignore_ascii_case(app_origin.trim_end_matches('/'));
    match reachable_without_cors {
        Some(true) if !same_origin => cors_error(endpoint_url, app_origin),
        _ => network_error(detail),
    }
}

/// `scheme://host[:port]` of `url` (the whole input when it has no scheme).
fn origin_of(url: &str) -> String {
    let url = url.trim();
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let host = rest.split(['/', '?', '#']).next().unwrap_or("");
            format!("{scheme}://{host}")
        }
        None => url.split(['/', '?', '#']).next().unwrap_or("").to_string(),
    }
}

/// The provider's message from an error body: `{"error": {"message"}}` (OpenAI, Anthropic),
/// `{"error": "…"}` (Ollama), `{"message"}`, `{"detail"}`; otherwise the text itself. HTML pages are not
/// quoted. At most 300 characters.
fn error_detail(body: &str) -> String {
    let body = body.trim();
    let found = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        let candidates =
            [v.get("error").and_then(|e| e.get("message")), v.get("error"), v.get("message"), v.get("detail")];
        candidates.into_iter().flatten().find_map(|c| match c {
            Value::String(s) => Some(s.clone()),
            Value::Array(items) => items.first().and_then(|i| i.get("msg").or(Some(i))).map(|m| match m {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
            _ => None,
        })
    });
    let text = match found {
        Some(text) => text,
        None if body.starts_with('<') => "an HTML error page".to_string(),
        None => body.to_string(),
    };
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() > 300 {
        let mut cut: String = text.chars().take(299).collect();
        cut.push('…');
        cut
    } else {
        text
    }
}

/// `Retry-After` as seconds from `now_ms`: delta-seconds (a fraction is rounded up) or an IMF-fixdate
/// HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`; a date in the past is 0). Anything else: `None`.
pub fn parse_retry_after(value: &str, now_ms: i64) -> Option<u64> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| secs.ceil().min(u64::MAX as f64) as u64);
    }
    let at = parse_http_date(value)?;
    let wait_ms = at.saturating_mul(1000).saturating_sub(now_ms);
    Some(if wait_ms <= 0 { 0 } else { (wait_ms as u64).div_ceil(1000) })
}

/// An IMF-fixdate as seconds since the epoch.
pub(super) fn parse_http_date(s: &str) -> Option<i64> {
    let (_weekday, rest) = s.split_once(", ")?;
    let parts: Vec<&str> = rest.split_whitespace().collect();
    let [day, month, year, time, "GMT"] = parts.as_slice() else { return None };
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let month = MONTHS.iter().position(|m| m == month)? as i64 + 1;
    let day: i64 = day.parse().ok().filter(|d| (1..=31).contains(d))?;
    let year: i64 = year.parse().ok().filter(|y| (1970..=9999).contains(y))?;
    let hms: Vec<i64> = time.split(':').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    let [h, m, sec] = hms.as_slice() else { return None };
    if !(0..24).contains(h) || !(0..60).contains(m) || !(0..61).contains(sec) {
        return None;
    }
    let days = crate::time::days_from_civil(year, month, day);
    Some(days * 86_400 + h * 3600 + m * 60 + sec)
}

/// How long to wait before retrying after attempt number `attempt` (1 = the first request) failed with
/// `err`; `None`: do not retry. Rate limits wait for `Retry-After` (at least 1 s; more than
/// [`MAX_RETRY_WAIT_SECS`]: no retry) or else back off like server and network errors: 1 s, 2 s, 4 s.
/// At most [`MAX_RETRIES`] retries; auth, quota, bad requests and CORS never.
pub fn retry_plan(err: &ModelError, attempt: u32) -> Option<Duration> {
    if attempt == 0 || attempt > MAX_RETRIES {
        return None;
    }
    let backoff = Duration::from_secs(1 << (attempt - 1));
    match err {
        ModelError::RateLimited { retry_after_secs: Some(s), .. } => {
            (*s <= MAX_RETRY_WAIT_SECS).then(|| Duration::from_secs((*s).max(1)))
        }
        ModelError::RateLimited { retry_after_secs: None, .. }
        | ModelError::Server { .. }
        | ModelError::Network { .. } => Some(backoff),
        ModelError::Auth { .. }
        | ModelError::Quota { .. }
        | ModelError::BadRequest { .. }
        | ModelError::Cors { .. }
        | ModelError::BadReply { .. } => None,
    }
}

/// A refusal of a request that carried images (`images`: their names), when the endpoint's answer
/// (`body`) mentions images or content types, names them: the model most likely does not take
/// images. The message is saved either way. Other errors are returned as they are.
pub fn name_refused_images(err: ModelError, body: &str, images: &[String]) -> ModelError {
    let lower = body.to_ascii_lowercase();
    let about_images = ["image", "vision", "content type", "content_type", "multimodal", "image_url"]
        .iter()
        .any(|w| lower.contains(w));
    match err {
        ModelError::BadRequest { status, message } if about_images && !images.is_empty() => ModelError::BadRequest {
            status,
            message: format!(
                "the model refused the image{} {} (it may not accept images; pick a model that does, or send \
                 the message again without {}). Your message is saved. The endpoint said: {message}",
                if images.len() == 1 { "" } else { "s" },
                images.join(", "),
                if images.len() == 1 { "it" } else { "them" }
            ),
        },
        other => other,
    }
}
