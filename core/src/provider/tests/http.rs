//! Classifying HTTP and `fetch` failures, `Retry-After`, and the retry plan.

use std::time::Duration;

use expect_test::expect;

use crate::provider::http::parse_http_date;
use crate::provider::*;

// ---- failures and retries -----------------------------------------------------------------------

/// 2024-06-10T12:00:00Z
const NOW_MS: i64 = 1_718_020_800_000;

fn render_error(e: &ModelError) -> String {
    match e {
        ModelError::Auth { message } => format!("Auth: {message}"),
        ModelError::RateLimited { retry_after_secs, message } => {
            format!("RateLimited({retry_after_secs:?}): {message}")
        }
        ModelError::Quota { message } => format!("Quota: {message}"),
        ModelError::Server { status, message } => format!("Server({status}): {message}"),
        ModelError::BadRequest { status, message } => format!("BadRequest({status}): {message}"),
        ModelError::Network { message } => format!("Network: {message}"),
        ModelError::Cors { message } => format!("Cors: {message}"),
        ModelError::BadReply { message } => format!("BadReply: {message}"),
    }
}

#[test]
fn http_errors_are_classified_with_advice() {
    let rows: &[(u16, Option<&str>, &str)] = &[
        (
            401,
            None,
            r#"{"error":{"message":"Incorrect API key provided: sk-abc***","type":"invalid_request_error","code":"invalid_api_key"}}"#,
        ),
        (401, None, r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#),
        (
            403,
            None,
            r#"{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}"#,
        ),
        (
            429,
            Some("20"),
            r#"{"error":{"message":"Rate limit reached for gpt-4o on tokens per min (TPM). Please try again in 20s.","type":"tokens","code":"rate_limit_exceeded"}}"#,
        ),
        (
            429,
            Some("Mon, 10 Jun 2024 12:00:30 GMT"),
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#,
        ),
        (429, Some("3600"), "Too Many Requests"),
        (429, None, ""),
        (
            429,
            None,
            r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#,
        ),
        (
            400,
            None,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}}"#,
        ),
        (402, None, r#"{"error":{"message":"Insufficient credits","code":402}}"#),
        (
            400,
            None,
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 131000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
        ),
        (
            400,
            None,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
        ),
        (
            400,
            None,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5"}}"#,
        ),
        (
            400,
            None,
            r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}"#,
        ),
        (400, None, r#"{"error":{"message":"Unrecognized request argument supplied: foo"}}"#),
        (404, None, r#"{"error":"model 'llama9' not found, try pulling it first"}"#),
        (413, None, "<html><head><title>413 Request Entity Too Large</title></head><body>nginx</body></html>"),
        (422, None, r#"{"detail":[{"loc":["body","messages"],"msg":"field required","type":"value_error.missing"}]}"#),
        (500, None, r#"{"error":{"message":"The server had an error while processing your request."}}"#),
        (502, None, "<html>Bad Gateway</html>"),
        (529, None, r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#),
        (408, None, ""),
        (0, None, ""),
        (302, None, ""),
    ];
    let out: Vec<String> = rows
        .iter()
        .map(|(status, retry_after, body)| {
            format!("{status} → {}", render_error(&classify_http_error_at(*status, *retry_after, body, NOW_MS)))
        })
        .collect();
    expect![[r#"
        401 → Auth: The model endpoint rejected the API key (HTTP 401: Incorrect API key provided: sk-abc***). Check the API key in Settings; Cowork does not retry this.
        401 → Auth: The model endpoint rejected the API key (HTTP 401: invalid x-api-key). Check the API key in Settings; Cowork does not retry this.
        403 → Auth: The model endpoint refused access (HTTP 403: Your API key does not have permission to use the specified resource.). Check the API key in Settings and that it may use this model; Cowork does not retry this.
        429 → RateLimited(Some(20)): The model endpoint is rate-limiting requests (HTTP 429: Rate limit reached for gpt-4o on tokens per min (TPM). Please try again in 20s.). Cowork waits 20 s as it asks and retries (at most 3 times); if it keeps happening, check your plan's rate limits.
        429 → RateLimited(Some(30)): The model endpoint is rate-limiting requests (HTTP 429: Number of request tokens has exceeded your per-minute rate limit). Cowork waits 30 s as it asks and retries (at most 3 times); if it keeps happening, check your plan's rate limits.
        429 → RateLimited(Some(3600)): The model endpoint is rate-limiting requests (HTTP 429: Too Many Requests). It asks to wait 3600 s, longer than Cowork waits on its own: try again later, or check your plan's rate limits.
        429 → RateLimited(None): The model endpoint is rate-limiting requests (HTTP 429). Cowork waits and retries (at most 3 times); if it keeps happening, wait a minute or check your plan's rate limits.
        429 → Quota: The model provider refused the request because the account has no quota or credit left (HTTP 429: You exceeded your current quota, please check your plan and billing details.). Check billing with your provider, or choose another endpoint in Settings; Cowork does not retry this.
        400 → Quota: The model provider refused the request because the account has no quota or credit left (HTTP 400: Your credit balance is too low to access the Anthropic API.). Check billing with your provider, or choose another endpoint in Settings; Cowork does not retry this.
        402 → Quota: The model provider refused the request because the account has no quota or credit left (HTTP 402: Insufficient credits). Check billing with your provider, or choose another endpoint in Settings; Cowork does not retry this.
        400 → BadRequest(400): The model endpoint rejected the request (HTTP 400: This model's maximum context length is 128000 tokens. However, your messages resulted in 131000 tokens.). The conversation does not fit the model: lower the context window in Settings so requests fit. Cowork does not retry this.
        400 → BadRequest(400): The model endpoint rejected the request (HTTP 400: prompt is too long: 210000 tokens > 200000 maximum). The conversation does not fit the model: lower the context window in Settings so requests fit. Cowork does not retry this.
        400 → BadRequest(400): The model endpoint rejected the request (HTTP 400: max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5). The reply's token limit is too high for this model: lower the maximum output tokens in Settings. Cowork does not retry this.
        400 → BadRequest(400): The model endpoint rejected the request (HTTP 400: Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.). This model does not accept max_tokens: clear the maximum output tokens in Settings. Cowork does not retry this.
        400 → BadRequest(400): The model endpoint rejected the request (HTTP 400: Unrecognized request argument supplied: foo). Check the model name and the endpoint settings in Settings. Cowork does not retry this.
        404 → BadRequest(404): The model endpoint rejected the request (HTTP 404: model 'llama9' not found, try pulling it first). Check the base URL in Settings (it usually ends in /v1) and the model name. Cowork does not retry this.
        413 → BadRequest(413): The model endpoint rejected the request (HTTP 413: an HTML error page). The request is too large for the endpoint: lower the context window in Settings. Cowork does not retry this.
        422 → BadRequest(422): The model endpoint rejected the request (HTTP 422: field required). Check the model name and the endpoint settings in Settings. Cowork does not retry this.
        500 → Server(500): The model endpoint failed on its side (HTTP 500: The server had an error while processing your request.). Cowork retries a few times with growing waits; if it keeps failing, the service may be down: try again later.
        502 → Server(502): The model endpoint failed on its side (HTTP 502: an HTML error page). Cowork retries a few times with growing waits; if it keeps failing, the service may be down: try again later.
        529 → Server(529): The model endpoint failed on its side (HTTP 529: Overloaded). Cowork retries a few times with growing waits; if it keeps failing, the service may be down: try again later.
        408 → Server(408): The model endpoint failed on its side (HTTP 408). Cowork retries a few times with growing waits; if it keeps failing, the service may be down: try again later.
        0 → Network: Could not reach the model endpoint (no response). Check your connection, the base URL in Settings and that the server is running; Cowork retries a few times.
        302 → BadRequest(302): The model endpoint rejected the request (HTTP 302). Check the base URL in Settings: this does not look like a model endpoint. Cowork does not retry this."#]]
    .assert_eq(&out.join("\n"));
}

#[test]
fn long_error_bodies_are_shortened() {
    let body = format!("{{\"error\":{{\"message\":\"{}\"}}}}", "x".repeat(5000));
    let e = classify_http_error_at(500, None, &body, NOW_MS);
    assert!(e.message().len() < 600, "{}", e.message());
    assert!(e.message().contains("xxx…"));
}

#[test]
fn fetch_failures_are_network_or_cors() {
    let rows = [
        ("http://localhost:11434/v1", "http://localhost:8080", Some(true)),
        ("http://localhost:11434/v1", "http://localhost:8080", Some(false)),
        ("http://localhost:11434/v1", "http://localhost:8080", None),
        ("http://localhost:8080/v1", "http://localhost:8080/", Some(true)),
    ];
    let out: Vec<String> = rows
        .iter()
        .map(|(url, origin, probe)| {
            format!(
                "{url} from {origin} probe={probe:?} → {}",
                render_error(&classify_fetch_failure(url, origin, "TypeError: Failed to fetch", *probe))
            )
        })
        .collect();
    expect![[r#"
        http://localhost:11434/v1 from http://localhost:8080 probe=Some(true) → Cors: The browser blocked the reply from http://localhost:11434: the endpoint does not allow requests from this page (http://localhost:8080). Configure it to answer CORS preflight (OPTIONS) requests and to send Access-Control-Allow-Origin: http://localhost:8080 and Access-Control-Allow-Headers: authorization, content-type, x-api-key, anthropic-version, anthropic-dangerous-direct-browser-access. For Ollama, start it with OLLAMA_ORIGINS=http://localhost:8080; for LM Studio, enable CORS in its server settings; for vLLM, pass --allowed-origins; or put a proxy that adds these headers in front of it. Cowork does not retry this.
        http://localhost:11434/v1 from http://localhost:8080 probe=Some(false) → Network: Could not reach the model endpoint (TypeError: Failed to fetch). Check your connection, the base URL in Settings and that the server is running; Cowork retries a few times.
        http://localhost:11434/v1 from http://localhost:8080 probe=None → Network: Could not reach the model endpoint (TypeError: Failed to fetch). Check your connection, the base URL in Settings and that the server is running; Cowork retries a few times.
        http://localhost:8080/v1 from http://localhost:8080/ probe=Some(true) → Network: Could not reach the model endpoint (TypeError: Failed to fetch). Check your connection, the base URL in Settings and that the server is running; Cowork retries a few times."#]]
    .assert_eq(&out.join("\n"));
}

#[test]
fn retry_after_values() {
    let rows: &[(&str, Option<u64>)] = &[
        ("120", Some(120)),
        (" 5 ", Some(5)),
        ("0", Some(0)),
        ("1.2", Some(2)),
        ("-3", None),
        ("soon", None),
        ("", None),
        ("NaN", None),
        ("Mon, 10 Jun 2024 12:00:30 GMT", Some(30)),
        ("Mon, 10 Jun 2024 12:01:00 GMT", Some(60)),
        ("Mon, 10 Jun 2024 11:00:00 GMT", Some(0)),
        ("Tue, 11 Jun 2024 12:00:00 GMT", Some(86_400)),
        ("Sun, 06 Nov 1994 08:49:37 GMT", Some(0)),
        ("Mon, 10 Jun 2024 12:00:30 PST", None),
        ("Mon, 10 Foo 2024 12:00:30 GMT", None),
        ("Mon, 32 Jun 2024 12:00:30 GMT", None),
        ("Mon, 10 Jun 2024 25:00:30 GMT", None),
        ("Monday, 10-Jun-24 12:00:30 GMT", None),
    ];
    for (value, expect) in rows {
        assert_eq!(parse_retry_after(value, NOW_MS), *expect, "Retry-After: {value:?}");
    }
    assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
    assert_eq!(parse_http_date("Mon, 10 Jun 2024 12:00:00 GMT"), Some(NOW_MS / 1000));
    assert_eq!(parse_http_date("Thu, 29 Feb 2024 23:59:59 GMT"), Some(1_709_251_199));
}

#[test]
fn retry_plans() {
    let rate = |s: Option<u64>| ModelError::RateLimited { retry_after_secs: s, message: String::new() };
    let server = ModelError::Server { status: 503, message: String::new() };
    let network = ModelError::Network { message: String::new() };
    let never = [
        ModelError::Auth { message: String::new() },
        ModelError::Quota { message: String::new() },
        ModelError::BadRequest { status: 400, message: String::new() },
        ModelError::Cors { message: String::new() },
    ];
    // (error, attempt that failed, seconds to wait or None)
    let mut rows: Vec<(ModelError, u32, Option<u64>)> = vec![
        (server.clone(), 1, Some(1)),
        (server.clone(), 2, Some(2)),
        (server.clone(), 3, Some(4)),
        (server.clone(), 4, None),
        (server.clone(), 0, None),
        (network.clone(), 1, Some(1)),
        (network.clone(), 3, Some(4)),
        (network.clone(), 4, None),
        (rate(Some(20)), 1, Some(20)),
        (rate(Some(20)), 3, Some(20)),
        (rate(Some(20)), 4, None),
        (rate(Some(0)), 1, Some(1)),
        (rate(Some(60)), 1, Some(60)),
        (rate(Some(61)), 1, None),
        (rate(None), 1, Some(1)),
        (rate(None), 2, Some(2)),
        (rate(None), 4, None),
    ];
    rows.extend(never.into_iter().map(|e| (e, 1, None)));
    for (err, attempt, expect) in rows {
        assert_eq!(retry_plan(&err, attempt), expect.map(Duration::from_secs), "{err:?} after attempt {attempt}");
    }
    // Classified errors plan as their kind says.
    let e = classify_http_error_at(429, Some("7"), "", NOW_MS);
    assert_eq!(retry_plan(&e, 1), Some(Duration::from_secs(7)));
    let e = classify_http_error_at(401, Some("7"), "", NOW_MS);
    assert_eq!(retry_plan(&e, 1), None);
    // The core's error type carries the same advice.
    let message = e.message().to_string();
    assert!(matches!(crate::Error::from(e), crate::Error::Model(m) if m.message() == message));
}
