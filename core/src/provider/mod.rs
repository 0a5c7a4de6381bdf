//! Model endpoints' wire formats, pure (no I/O): building the HTTP request for a context, decoding the
//! streamed reply, and classifying HTTP failures with a bounded retry plan.
//!
//! Two formats: **OpenAI-compatible Chat Completions** (OpenAI, Ollama, vLLM, llama.cpp, LM Studio,
//! OpenRouter; `openai.rs`) and **Anthropic Messages** (`anthropic.rs`). The
//! provider-neutral [`ContextMessage`]s and tool definitions (OpenAI function format, as [`crate::prompt`]
//! builds them) are converted by hand into each format's own serde types; nothing outside this module sees
//! provider JSON.
//!
//! - this file: the settings ([`ModelSettings`], [`ProviderKind`]) and [`build_request`] (an
//!   [`HttpRequest`], see `transport`);
//! - `openai.rs`, `anthropic.rs`: each format's request body and stream events;
//! - `stream.rs`: [`StreamDecoder`] and what it yields ([`StreamEvent`], [`AssistantMessage`],
//!   [`StreamFailure`]);
//! - `http.rs`: HTTP failure classification and the [`retry_plan`];
//! - `models.rs`: the endpoint's model list ([`models_request`], [`parse_models`], [`ListedModel`]).
//!
//! The API key is never part of any `Debug` output ([`ModelSettings`], [`HttpRequest`]).

mod anthropic;
mod http;
mod models;
mod openai;
mod stream;

#[cfg(test)]
mod tests;

pub use crate::error::ModelError;
pub(crate) use crate::transport::join_url;
pub use crate::transport::HttpRequest;
pub use http::{
    classify_fetch_failure, classify_http_error, classify_http_error_at, cors_error, name_refused_images,
    network_error, parse_retry_after, retry_plan,
};
pub use models::{models_request, parse_models, ListedModel};
pub use stream::{decode_body, AssistantMessage, FailureKind, StreamDecoder, StreamEvent, StreamFailure, TokenUsage};

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::ContextMessage;

/// The `anthropic-version` header value this module speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// Anthropic requires `max_tokens`; used when [`ModelSettings::max_output_tokens`] is `None`.
pub const DEFAULT_ANTHROPIC_MAX_TOKENS: u32 = 8_192;
/// Retries after the first attempt, for rate limits, server errors and network errors.
pub const MAX_RETRIES: u32 = 3;
/// The longest wait Cowork does on its own before retrying; a longer `Retry-After` is not retried.
pub const MAX_RETRY_WAIT_SECS: u64 = 60;

/// Which wire format an endpoint speaks (`"openai"` or `"anthropic"` in settings and on the wire;
/// any other text is refused, never read as one of these).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI-compatible Chat Completions (`POST {base}/chat/completions`).
    #[default]
    OpenAi,
    /// Anthropic Messages (`POST {base}/messages`).
    Anthropic,
}

impl ProviderKind {
    /// The word used in settings and on the wire: `"openai"` or `"anthropic"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }

    /// Reads that word exactly (no trimming, no case folding); `None` for any other text.
    pub fn parse(s: &str) -> Option<ProviderKind> {
        [ProviderKind::OpenAi, ProviderKind::Anthropic].into_iter().find(|k| k.as_str() == s)
    }

    fn label(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "OpenAI-compatible",
            ProviderKind::Anthropic => "Anthropic",
        }
    }
}

/// The model endpoint and budget as the user set them up in Settings: the one settings type from the
/// Settings screen (kept in the browser's settings storage, never in the archive) through the worker
/// protocol and the embedding API to the request builder.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelSettings {
    /// Which wire format the endpoint speaks.
    pub kind: ProviderKind,
    /// E.g. `https://api.openai.com/v1`, `http://localhost:11434/v1`, `https://api.anthropic.com/v1`;
    /// a trailing slash, or the full endpoint path, is accepted too.
    pub base_url: String,
    /// The model's name as the endpoint knows it, e.g. `gpt-4o-mini`; sent as `model`.
    pub model: String,
    /// Empty: no key is sent (local servers). Never shown by `Debug`.
    pub api_key: String,
    /// The model's context window, in tokens.
    pub context_window: i64,
    /// Tokens kept free for the reply.
    pub output_reserve: i64,
    /// Base URL of a Loom-compatible orchestrator for `delegate_task`; empty: delegation is off.
    pub orchestrator_url: String,
    /// The reply's token limit: OpenAI's `max_tokens`, or `max_completion_tokens` for OpenAI's reasoning
    /// models by name (omitted when `None`, so the server's default applies), Anthropic's required `max_tokens` ([`DEFAULT_ANTHROPIC_MAX_TOKENS`]
    /// when `None`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// The largest attachment a message may carry, in bytes (`None`:
    /// [`crate::attachment::DEFAULT_MAX_ATTACHMENT_BYTES`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_attachment_bytes: Option<u64>,
}

impl Default for ModelSettings {
    fn default() -> ModelSettings {
        ModelSettings {
            kind: ProviderKind::OpenAi,
            base_url: String::new(),
            model: String::new(),
            api_key: String::new(),
            context_window: 32_768,
            output_reserve: 4_096,
            orchestrator_url: String::new(),
            max_output_tokens: None,
            max_attachment_bytes: None,
        }
    }
}

impl ModelSettings {
    /// The largest attachment a message may carry, in bytes.
    pub fn attachment_limit(&self) -> u64 {
        self.max_attachment_bytes.filter(|b| *b > 0).unwrap_or(crate::attachment::DEFAULT_MAX_ATTACHMENT_BYTES)
    }
}

impl fmt::Debug for ModelSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelSettings")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &if self.api_key.trim().is_empty() { "<none>" } else { "<redacted>" })
            .field("context_window", &self.context_window)
            .field("output_reserve", &self.output_reserve)
            .field("orchestrator_url", &self.orchestrator_url)
            .field("max_output_tokens", &self.max_output_tokens)
            .field("max_attachment_bytes", &self.max_attachment_bytes)
            .finish()
    }
}

/// Standard base64 (with padding), as data URLs and Anthropic's image sources take it.
pub(crate) fn base64(bytes: &[u8]) -> String {
    crate::attachment::to_base64(bytes)
}

/// The streaming request for `messages`, offering `tools` (OpenAI function format; none: no tools).
pub fn build_request(cfg: &ModelSettings, messages: &[ContextMessage], tools: &[Value]) -> HttpRequest {
    let key = cfg.api_key.trim();
    let mut headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("accept".to_string(), "text/event-stream".to_string()),
    ];
    let (path, body) = match cfg.kind {
        ProviderKind::OpenAi => {
            if !key.is_empty() {
                headers.push(("authorization".to_string(), format!("Bearer {key}")));
            }
            ("/chat/completions", openai::body(cfg, messages, tools))
        }
        ProviderKind::Anthropic => {
            if !key.is_empty() {
                headers.push(("x-api-key".to_string(), key.to_string()));
            }
            headers.push(("anthropic-version".to_string(), ANTHROPIC_VERSION.to_string()));
            headers.push(("anthropic-dangerous-direct-browser-access".to_string(), "true".to_string()));
            ("/messages", anthropic::body(cfg, messages, tools))
        }
    };
    HttpRequest { method: "POST".to_string(), url: join_url(&cfg.base_url, path), headers, body }
}

/// A tool result that names no call cannot be sent as a tool message: it goes as text.
fn unlinked_result_text(m: &ContextMessage) -> String {
    format!("[Result from {}, not linked to a tool call]\n{}", m.name.as_deref().unwrap_or("a tool"), m.content)
}
