//! HTTP as the core sees it, with no I/O of its own: the [`HttpRequest`]s the wire formats build (model
//! endpoints in `provider`, the orchestrator in `orchestrator`), and the injected [`Transport`] that
//! sends them and streams the answers back (`fetch` in the browser, a plain client in tests). Both the
//! agent loop and delegation to the orchestrator run on it.

use std::fmt;

/// An HTTP request to make with `fetch`. `Debug` hides credential headers.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// The HTTP method: `POST`, `GET` or `DELETE`.
    pub method: String,
    /// The full URL, base URL and path joined.
    pub url: String,
    /// Header names (lowercase as built here) and values, in order.
    pub headers: Vec<(String, String)>,
    /// The request body: JSON text, or empty when there is none.
    pub body: String,
}

impl HttpRequest {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

const SECRET_HEADERS: [&str; 2] = ["authorization", "x-api-key"];

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| {
                let secret = SECRET_HEADERS.iter().any(|s| k.eq_ignore_ascii_case(s));
                (k.as_str(), if secret { "<redacted>" } else { v.as_str() })
            })
            .collect();
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &headers)
            .field("body", &self.body)
            .finish()
    }
}

/// `base` joined with `path` (which starts with `/`): trailing slashes and surrounding spaces are
/// ignored, and a base that already ends with `path` is used as it is.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    let base = base.trim().trim_end_matches('/');
    if base.ends_with(path) {
        base.to_string()
    } else {
        format!("{base}{path}")
    }
}

/// What the transport failed with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportError {
    /// The request never got an HTTP answer (offline, DNS, refused, reset).
    Network(String),
    /// The browser blocked the answer (CORS): the endpoint must allow this origin.
    Cors(String),
    /// The user pressed Stop.
    Aborted,
}

/// An HTTP answer whose body is read chunk by chunk.
pub struct HttpResponse<B> {
    /// The HTTP status code.
    pub status: u16,
    /// Response headers (name, value) as the transport got them.
    pub headers: Vec<(String, String)>,
    /// The body, still to be read.
    pub body: B,
}

impl<B> HttpResponse<B> {
    /// The value of header `name` (case-insensitive; the first if repeated).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// A streaming response body.
#[allow(async_fn_in_trait)] // used with concrete types only; the browser is single-threaded
pub trait ResponseBody {
    /// The next chunk of bytes; `None` at the end.
    async fn chunk(&mut self) -> Option<std::result::Result<Vec<u8>, TransportError>>;
}

/// Performs HTTP requests and waits; injected so the same loop runs natively and in the browser.
#[allow(async_fn_in_trait)]
pub trait Transport {
    /// The streaming body of its responses.
    type Body: ResponseBody;
    /// Sends `req`; resolves once the status and headers arrive (any status, not only 2xx).
    async fn send(&self, req: &HttpRequest) -> std::result::Result<HttpResponse<Self::Body>, TransportError>;
    /// Waits `ms` milliseconds (retry backoff, status polling).
    async fn sleep_ms(&self, ms: u64);
    /// Milliseconds on a monotonic-enough clock (for checkpoint pacing).
    fn now_ms(&self) -> i64;
}
