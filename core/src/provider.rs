//! Model endpoints' wire formats, pure (no I/O): building the HTTP request for a context, decoding the
//! streamed reply, and classifying HTTP failures with a bounded retry plan.
//!
//! Two formats: **OpenAI-compatible Chat Completions** (OpenAI, Ollama, vLLM, llama.cpp, LM Studio,
//! OpenRouter) and **Anthropic Messages**. The provider-neutral [`ContextMessage`]s and tool definitions
//! (OpenAI function format, as [`crate::prompt`] builds them) are converted by hand into each format's own
//! serde types here; nothing outside this module sees provider JSON.
//!
//! Anthropic needs more than a renaming; [`build_request`] makes any message list valid for it:
//! - System messages before the first user/assistant message are joined (blank line between) into the
//!   top-level `system`. A system message *later* in the list (context assembly's notes about results
//!   that arrived outside their call) keeps its place as user-role text "[System note] …", because moving
//!   it to the top would detach it from the turns it talks about.
//! - Assistant tool calls become `tool_use` blocks, tool results `tool_result` blocks in a user message;
//!   consecutive same-role messages are merged into one (so parallel results share one user message), and
//!   in a user message the `tool_result` blocks come before any text.
//! - Every `tool_use` gets a `tool_result` in the next message (a synthetic "no result was recorded" one
//!   if the list has none); a `tool_result` whose call is not in the preceding assistant message becomes
//!   text. Tool-call ids are reduced to `[A-Za-z0-9_-]` (consistently on both sides).
//! - Arguments that are not a JSON object are sent as `{"invalid_json_arguments": "<raw text>"}` (or
//!   `{"value": …}` for valid non-object JSON; empty arguments as `{}`), since `input` must be an object.
//! - Empty or blank text blocks are left out; the list starts with a user message (a placeholder is added
//!   when it would not), and a final assistant message loses trailing whitespace.
//!
//! For OpenAI-compatible endpoints, leading system messages are joined into one (many local chat templates
//! accept only one system message, at the start); later ones stay in place as `system` messages.
//!
//! The API key is never part of any `Debug` output ([`ModelSettings`], [`HttpRequest`]).

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::context::ContextMessage;
use crate::sse::SseEvent;
use crate::{Role, ToolCall};

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
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }

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
    pub kind: ProviderKind,
    /// E.g. `https://api.openai.com/v1`, `http://localhost:11434/v1`, `https://api.anthropic.com/v1`;
    /// a trailing slash, or the full endpoint path, is accepted too.
    pub base_url: String,
    pub model: String,
    /// Empty: no key is sent (local servers). Never shown by `Debug`.
    pub api_key: String,
    /// The model's context window, in tokens.
    pub context_window: i64,
    /// Tokens kept free for the reply.
    pub output_reserve: i64,
    /// Base URL of a Loom-compatible orchestrator for `delegate_task`; empty: delegation is off.
    pub orchestrator_url: String,
    /// The reply's token limit: OpenAI's `max_tokens` (omitted when `None`, so the server's default and
    /// reasoning models' rules apply), Anthropic's required `max_tokens` ([`DEFAULT_ANTHROPIC_MAX_TOKENS`]
    /// when `None`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
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
        }
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
            .finish()
    }
}

/// An HTTP request to make with `fetch`. `Debug` hides credential headers.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
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

// ---------------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------------

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
            ("/chat/completions", openai_body(cfg, messages, tools))
        }
        ProviderKind::Anthropic => {
            if !key.is_empty() {
                headers.push(("x-api-key".to_string(), key.to_string()));
            }
            headers.push(("anthropic-version".to_string(), ANTHROPIC_VERSION.to_string()));
            headers.push(("anthropic-dangerous-direct-browser-access".to_string(), "true".to_string()));
            ("/messages", anthropic_body(cfg, messages, tools))
        }
    };
    HttpRequest { method: "POST".to_string(), url: join_url(&cfg.base_url, path), headers, body }
}

#[derive(Serialize)]
struct OaRequest<'a> {
    model: &'a str,
    messages: Vec<OaMessage<'a>>,
    stream: bool,
    stream_options: OaStreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tools: &'a [Value],
}

#[derive(Serialize)]
struct OaStreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct OaMessage<'a> {
    role: &'static str,
    content: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<OaToolCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    /// The tool's name on a tool message (accepted by OpenAI, read by some local servers).
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
}

#[derive(Serialize)]
struct OaToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: OaFunction<'a>,
}

#[derive(Serialize)]
struct OaFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

fn openai_body(cfg: &ModelSettings, messages: &[ContextMessage], tools: &[Value]) -> String {
    let mut out: Vec<OaMessage> = Vec::with_capacity(messages.len());
    let mut leading_system = true;
    for m in messages {
        let plain =
            |role, content: String| OaMessage { role, content, tool_calls: Vec::new(), tool_call_id: None, name: None };
        match m.role {
            Role::System if leading_system => match out.last_mut() {
                Some(first) => {
                    first.content.push_str("\n\n");
                    first.content.push_str(&m.content);
                }
                None => out.push(plain("system", m.content.clone())),
            },
            Role::System => out.push(plain("system", m.content.clone())),
            Role::User => out.push(plain("user", m.content.clone())),
            Role::Assistant => out.push(OaMessage {
                tool_calls: m
                    .tool_calls
                    .iter()
                    .map(|c| OaToolCall {
                        id: &c.id,
                        kind: "function",
                        function: OaFunction {
                            name: &c.name,
                            arguments: if c.arguments.trim().is_empty() { "{}" } else { &c.arguments },
                        },
                    })
                    .collect(),
                ..plain("assistant", m.content.clone())
            }),
            Role::Tool => match &m.tool_call_id {
                Some(id) => out.push(OaMessage {
                    tool_call_id: Some(id),
                    name: m.name.as_deref(),
                    ..plain("tool", m.content.clone())
                }),
                None => out.push(plain("user", unlinked_result_text(m))),
            },
        }
        leading_system &= m.role == Role::System;
    }
    let request = OaRequest {
        model: &cfg.model,
        messages: out,
        stream: true,
        stream_options: OaStreamOptions { include_usage: true },
        max_tokens: cfg.max_output_tokens,
        tools,
    };
    serde_json::to_string(&request).unwrap_or_default()
}

/// A tool result that names no call cannot be sent as a tool message: it goes as text.
fn unlinked_result_text(m: &ContextMessage) -> String {
    format!("[Result from {}, not linked to a tool call]\n{}", m.name.as_deref().unwrap_or("a tool"), m.content)
}

#[derive(Serialize)]
struct AnRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    stream: bool,
    #[serde(skip_serializing_if = "String::is_empty")]
    system: String,
    messages: Vec<AnMessage>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<AnTool>,
}

#[derive(Serialize, Debug)]
struct AnMessage {
    role: &'static str,
    content: Vec<AnBlock>,
}

#[derive(Serialize, Debug)]
#[serde(tag = "type", rename_all = "snake_case")]
enum AnBlock {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        #[serde(skip_serializing_if = "String::is_empty")]
        content: String,
    },
}

#[derive(Serialize)]
struct AnTool {
    name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    description: String,
    input_schema: Value,
}

/// Anthropic's tool-use ids must match `[A-Za-z0-9_-]+`.
fn anthropic_id(id: &str) -> String {
    let clean: String =
        id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    if clean.is_empty() {
        "call".to_string()
    } else {
        clean
    }
}

/// Anthropic's `input` must be an object.
fn anthropic_input(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return json!({});
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Value::Object(map),
        Ok(other) => json!({ "value": other }),
        Err(_) => json!({ "invalid_json_arguments": arguments }),
    }
}

fn anthropic_tool(tool: &Value) -> Option<AnTool> {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    if let Some(function) = tool.get("function") {
        let name = text(function, "name");
        let input_schema =
            function.get("parameters").cloned().unwrap_or_else(|| json!({"type": "object", "properties": {}}));
        return (!name.is_empty()).then(|| AnTool { name, description: text(function, "description"), input_schema });
    }
    // Already in Anthropic's format.
    let name = text(tool, "name");
    let input_schema = tool.get("input_schema")?.clone();
    (!name.is_empty()).then(|| AnTool { name, description: text(tool, "description"), input_schema })
}

fn push_block(messages: &mut Vec<AnMessage>, role: &'static str, block: AnBlock) {
    match messages.last_mut() {
        Some(last) if last.role == role => last.content.push(block),
        _ => messages.push(AnMessage { role, content: vec![block] }),
    }
}

fn anthropic_messages(messages: &[ContextMessage]) -> (String, Vec<AnMessage>) {
    let mut system: Vec<&str> = Vec::new();
    let mut out: Vec<AnMessage> = Vec::new();
    let mut leading = true;
    let text = |s: &str| (!s.trim().is_empty()).then(|| AnBlock::Text { text: s.to_string() });
    for m in messages {
        leading &= m.role == Role::System;
        match m.role {
            Role::System if leading => {
                if !m.content.trim().is_empty() {
                    system.push(&m.content);
                }
            }
            Role::System => {
                if let Some(block) =
                    text(&format!("[System note] {}", m.content.trim())).filter(|_| !m.content.trim().is_empty())
                {
                    push_block(&mut out, "user", block);
                }
            }
            Role::User => {
                if let Some(block) = text(&m.content) {
                    push_block(&mut out, "user", block);
                }
            }
            Role::Assistant => {
                if let Some(block) = text(&m.content) {
                    push_block(&mut out, "assistant", block);
                }
                for call in &m.tool_calls {
                    let block = AnBlock::ToolUse {
                        id: anthropic_id(&call.id),
                        name: call.name.clone(),
                        input: anthropic_input(&call.arguments),
                    };
                    push_block(&mut out, "assistant", block);
                }
            }
            Role::Tool => {
                let block = match &m.tool_call_id {
                    Some(id) => AnBlock::ToolResult { tool_use_id: anthropic_id(id), content: m.content.clone() },
                    None => AnBlock::Text { text: unlinked_result_text(m) },
                };
                push_block(&mut out, "user", block);
            }
        }
    }
    pair_tool_results(&mut out);
    if out.first().is_none_or(|m| m.role != "user") {
        out.insert(
            0,
            AnMessage {
                role: "user",
                content: vec![AnBlock::Text { text: "[Earlier turns are not shown.]".to_string() }],
            },
        );
    }
    if let Some(last) = out.last_mut().filter(|m| m.role == "assistant") {
        if let Some(AnBlock::Text { text }) = last.content.iter_mut().rev().find(|b| matches!(b, AnBlock::Text { .. }))
        {
            text.truncate(text.trim_end().len());
        }
    }
    (system.join("\n\n"), out)
}

/// Gives every `tool_use` a `tool_result` in the next (user) message and turns results that answer no
/// call of the preceding assistant message into text, so the request is valid whatever the list held.
fn pair_tool_results(messages: &mut Vec<AnMessage>) {
    let mut i = 0;
    let mut calls: Vec<String> = Vec::new();
    while i < messages.len() {
        if messages[i].role == "assistant" {
            calls = messages[i]
                .content
                .iter()
                .filter_map(|b| match b {
                    AnBlock::ToolUse { id, .. } => Some(id.clone()),
                    _ => None,
                })
                .collect();
            if !calls.is_empty() && messages.get(i + 1).is_none_or(|m| m.role != "user") {
                messages.insert(i + 1, AnMessage { role: "user", content: Vec::new() });
            }
            i += 1;
            continue;
        }
        let message = &mut messages[i];
        for block in &mut message.content {
            if let AnBlock::ToolResult { tool_use_id, content } = block {
                if let Some(at) = calls.iter().position(|c| c == tool_use_id) {
                    calls.remove(at);
                } else {
                    let text = format!("[Result of tool call {tool_use_id}, which is not shown]\n{content}");
                    *block = AnBlock::Text { text };
                }
            }
        }
        // Results lead the message; text keeps its order after them.
        let (mut results, rest): (Vec<AnBlock>, Vec<AnBlock>) =
            message.content.drain(..).partition(|b| matches!(b, AnBlock::ToolResult { .. }));
        for id in calls.drain(..) {
            results.push(AnBlock::ToolResult {
                tool_use_id: id,
                content: "No result was recorded for this call.".to_string(),
            });
        }
        results.extend(rest);
        message.content = results;
        i += 1;
    }
}

fn anthropic_body(cfg: &ModelSettings, messages: &[ContextMessage], tools: &[Value]) -> String {
    let (system, messages) = anthropic_messages(messages);
    let request = AnRequest {
        model: &cfg.model,
        max_tokens: cfg.max_output_tokens.unwrap_or(DEFAULT_ANTHROPIC_MAX_TOKENS),
        stream: true,
        system,
        messages,
        tools: tools.iter().filter_map(anthropic_tool).collect(),
    };
    serde_json::to_string(&request).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------------
// Streaming replies
// ---------------------------------------------------------------------------------------------------

/// Tokens the provider says the request and the reply used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenUsage {
    /// The whole prompt, cached parts included (Anthropic's `input_tokens` + cache reads and writes).
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
}

/// The model's reply, as decoded so far or in full.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AssistantMessage {
    /// The text, all text blocks concatenated.
    pub content: String,
    /// Calls in the order they started; `arguments` is the concatenated raw text (empty becomes `{}` once
    /// the stream is finished).
    pub tool_calls: Vec<ToolCall>,
    /// The provider's own reason (`stop`, `tool_calls`, `length`; `end_turn`, `tool_use`, `max_tokens` …).
    pub finish_reason: Option<String>,
    pub usage: Option<TokenUsage>,
}

/// What one SSE event meant, for the UI to show as it streams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    TextDelta(String),
    /// A tool call began; `index` is its position in [`AssistantMessage::tool_calls`].
    ToolCallStarted {
        index: usize,
        id: String,
        name: String,
    },
    ToolCallArgumentsDelta {
        index: usize,
        fragment: String,
    },
    /// Totals so far (not increments): the last one wins.
    Usage {
        prompt_tokens: i64,
        completion_tokens: i64,
    },
    Finished {
        reason: String,
    },
    /// The provider reported an error inside the stream; the stream is over.
    ProviderError {
        message: String,
    },
}

/// Why a stream did not give a complete reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The stream ended (network drop, Stop) before the provider said it was done.
    Cut,
    /// The stream carried data that is not what the format allows (invalid JSON, a tool call whose
    /// arguments are not valid JSON).
    Malformed,
    /// The provider sent an error event.
    Provider,
}

/// A reply that did not complete: the caller saves `partial` as an `interrupted` (cut) or `error` turn,
/// with `raw` in its metadata, and shows `message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamFailure {
    pub kind: FailureKind,
    pub partial: AssistantMessage,
    /// The offending raw text: the bad data line, the invalid arguments, the error event; for a cut
    /// stream, the last data received.
    pub raw: String,
    /// What happened and what to do, for the user.
    pub message: String,
}

impl fmt::Display for StreamFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StreamFailure {}

#[derive(Debug, Clone, Default)]
struct CallState {
    /// OpenAI's `index` for this call (`None` when the server sent none).
    provider_index: Option<i64>,
    id: Option<String>,
    name: String,
    arguments: String,
    /// Anthropic's `input` from `content_block_start`, used when no `input_json_delta` follows.
    start_input: Option<String>,
}

#[derive(Debug, Clone, Copy)]
enum Block {
    Text,
    Tool(usize),
    Other,
}

/// Decodes one streamed reply, one SSE event at a time. See [`StreamDecoder::finish`] for what counts as
/// complete.
#[derive(Debug, Clone)]
pub struct StreamDecoder {
    kind: ProviderKind,
    content: String,
    calls: Vec<CallState>,
    /// Anthropic content-block index → what the block is.
    blocks: Vec<(u64, Block)>,
    finish_reason: Option<String>,
    prompt_tokens: Option<i64>,
    completion_tokens: Option<i64>,
    /// `[DONE]`, `message_stop` or an error event was seen: later events are ignored.
    done: bool,
    failure: Option<(FailureKind, String, String)>,
    events: usize,
    last_data: String,
}

impl StreamDecoder {
    pub fn new(kind: ProviderKind) -> StreamDecoder {
        StreamDecoder {
            kind,
            content: String::new(),
            calls: Vec::new(),
            blocks: Vec::new(),
            finish_reason: None,
            prompt_tokens: None,
            completion_tokens: None,
            done: false,
            failure: None,
            events: 0,
            last_data: String::new(),
        }
    }

    /// Takes one SSE event; returns what it meant. Unknown event types and `ping`s give nothing.
    pub fn feed(&mut self, ev: &SseEvent) -> Vec<StreamEvent> {
        if self.done || ev.data.trim().is_empty() {
            return Vec::new();
        }
        self.events += 1;
        self.last_data.clone_from(&ev.data);
        let mut out = Vec::new();
        match self.kind {
            ProviderKind::OpenAi => self.feed_openai(ev, &mut out),
            ProviderKind::Anthropic => self.feed_anthropic(ev, &mut out),
        }
        out
    }

    /// The end of the stream has been seen (`[DONE]`, `message_stop`, an error event): stop reading.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The reply so far (for checkpointing while it streams).
    pub fn partial(&self) -> AssistantMessage {
        AssistantMessage {
            content: self.content.clone(),
            tool_calls: self
                .calls
                .iter()
                .enumerate()
                .map(|(i, c)| ToolCall {
                    id: c.id.clone().unwrap_or_else(|| format!("call_{i}")),
                    name: c.name.clone(),
                    arguments: match (&c.start_input, c.arguments.is_empty()) {
                        (Some(input), true) => input.clone(),
                        _ => c.arguments.clone(),
                    },
                })
                .collect(),
            finish_reason: self.finish_reason.clone(),
            usage: (self.prompt_tokens.is_some() || self.completion_tokens.is_some()).then(|| TokenUsage {
                prompt_tokens: self.prompt_tokens.unwrap_or(0),
                completion_tokens: self.completion_tokens.unwrap_or(0),
            }),
        }
    }

    /// The whole reply, or why there is none. Complete means: no error event and no malformed data, the
    /// provider's end marker or finish reason was seen (OpenAI `[DONE]` or a `finish_reason`; Anthropic
    /// `message_stop` or a `stop_reason`), and every tool call's arguments are valid JSON (empty arguments
    /// count as `{}`).
    // Called once per reply; the failure carries the partial reply by design, so it is as large as a reply.
    #[allow(clippy::result_large_err)]
    pub fn finish(self) -> Result<AssistantMessage, StreamFailure> {
        let mut message = self.partial();
        let fail = |partial: AssistantMessage, kind, raw, message| Err(StreamFailure { kind, partial, raw, message });
        if let Some((kind, raw, text)) = self.failure {
            return fail(message, kind, raw, text);
        }
        if !self.done && self.finish_reason.is_none() {
            let text = if self.events == 0 {
                format!(
                    "The model endpoint closed the connection without sending a streamed reply. Check that the base \
                     URL in Settings points at an {} endpoint that supports streaming, then retry.",
                    self.kind.label()
                )
            } else {
                "The model's reply was cut off before it finished (the stream ended early). The partial reply is \
                 saved; use Retry or Continue."
                    .to_string()
            };
            return fail(message, FailureKind::Cut, self.last_data, text);
        }
        for call in &mut message.tool_calls {
            if call.arguments.trim().is_empty() {
                call.arguments = "{}".to_string();
            }
        }
        let invalid = message.tool_calls.iter().find_map(|call| {
            serde_json::from_str::<Value>(&call.arguments).err().map(|e| (call.name.clone(), call.arguments.clone(), e))
        });
        if let Some((name, raw, e)) = invalid {
            let mut text = format!(
                "The model called {name} with arguments that are not valid JSON ({e}), so the call was not run. The \
                 raw arguments are saved; retry, or ask the model to call the tool again."
            );
            if matches!(message.finish_reason.as_deref(), Some("length" | "max_tokens")) {
                text.push_str(" The reply hit the output token limit: raise it in Settings.");
            }
            return fail(message, FailureKind::Malformed, raw, text);
        }
        Ok(message)
    }

    fn malformed(&mut self, raw: &str, error: &dyn fmt::Display) {
        if self.failure.is_none() {
            let message = format!(
                "The model endpoint sent data that is not valid {} streaming JSON ({error}). The partial reply and the \
                 raw data are saved; retry, or check the endpoint kind in Settings.",
                self.kind.label()
            );
            self.failure = Some((FailureKind::Malformed, raw.to_string(), message));
        }
    }

    fn provider_error(&mut self, raw: &str, detail: String, out: &mut Vec<StreamEvent>) {
        let message = format!(
            "The model endpoint reported an error in the middle of the reply: {detail}. The partial reply is saved; \
             retry in a moment."
        );
        if self.failure.is_none() {
            self.failure = Some((FailureKind::Provider, raw.to_string(), message.clone()));
        }
        self.done = true;
        out.push(StreamEvent::ProviderError { message });
    }

    fn usage_event(&self) -> StreamEvent {
        StreamEvent::Usage {
            prompt_tokens: self.prompt_tokens.unwrap_or(0),
            completion_tokens: self.completion_tokens.unwrap_or(0),
        }
    }

    fn text(&mut self, text: String, out: &mut Vec<StreamEvent>) {
        if !text.is_empty() {
            self.content.push_str(&text);
            out.push(StreamEvent::TextDelta(text));
        }
    }

    fn arguments(&mut self, slot: usize, fragment: String, out: &mut Vec<StreamEvent>) {
        if !fragment.is_empty() {
            self.calls[slot].arguments.push_str(&fragment);
            out.push(StreamEvent::ToolCallArgumentsDelta { index: slot, fragment });
        }
    }

    fn start_call(&mut self, call: CallState, out: &mut Vec<StreamEvent>) -> usize {
        let index = self.calls.len();
        let id = call.id.clone().unwrap_or_else(|| format!("call_{index}"));
        out.push(StreamEvent::ToolCallStarted { index, id, name: call.name.clone() });
        self.calls.push(call);
        index
    }

    fn feed_openai(&mut self, ev: &SseEvent, out: &mut Vec<StreamEvent>) {
        let data = ev.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return;
        }
        let chunk: OaChunk = match serde_json::from_str(data) {
            Ok(chunk) => chunk,
            Err(e) => return self.malformed(&ev.data, &e),
        };
        if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
            return self.provider_error(&ev.data, error_value_detail(&error), out);
        }
        let choices = chunk.choices.unwrap_or_default();
        // One reply is asked for (n = 1): only choice 0 counts.
        if let Some(choice) = choices.into_iter().find(|c| c.index.unwrap_or(0) == 0) {
            if let Some(delta) = choice.delta {
                self.text(delta.content.unwrap_or_default(), out);
                for call in delta.tool_calls.unwrap_or_default() {
                    self.openai_call(call, out);
                }
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish_reason = Some(reason.clone());
                out.push(StreamEvent::Finished { reason });
            }
        }
        if let Some(usage) = chunk.usage {
            self.prompt_tokens = usage.prompt_tokens.or(self.prompt_tokens);
            self.completion_tokens = usage.completion_tokens.or(self.completion_tokens);
            out.push(self.usage_event());
        }
    }

    fn openai_call(&mut self, delta: OaToolCallDelta, out: &mut Vec<StreamEvent>) {
        let function = delta.function.unwrap_or_default();
        let existing = match delta.index {
            Some(i) => self.calls.iter().position(|c| c.provider_index == Some(i)),
            // No index: a new id starts a call; anything else continues the last one.
            None => match (&delta.id, self.calls.last()) {
                (Some(id), Some(last)) if last.id.as_ref() != Some(id) => None,
                (_, Some(_)) => Some(self.calls.len() - 1),
                (_, None) => None,
            },
        };
        let slot = match existing {
            Some(slot) => {
                let call = &mut self.calls[slot];
                if call.id.is_none() {
                    call.id = delta.id;
                }
                if call.name.is_empty() {
                    call.name = function.name.unwrap_or_default();
                }
                slot
            }
            None => {
                let call = CallState {
                    provider_index: delta.index,
                    id: delta.id,
                    name: function.name.unwrap_or_default(),
                    ..CallState::default()
                };
                self.start_call(call, out)
            }
        };
        let fragment = match function.arguments {
            Some(Value::String(s)) => s,
            Some(Value::Null) | None => String::new(),
            // Some servers send the arguments as an object in one piece.
            Some(other) => other.to_string(),
        };
        self.arguments(slot, fragment, out);
    }

    fn feed_anthropic(&mut self, ev: &SseEvent, out: &mut Vec<StreamEvent>) {
        let mut value: Value = match serde_json::from_str(&ev.data) {
            Ok(v) => v,
            Err(e) => return self.malformed(&ev.data, &e),
        };
        if let (Some(object), Some(name)) = (value.as_object_mut(), &ev.event) {
            object.entry("type").or_insert_with(|| Value::String(name.clone()));
        }
        let event: AnEvent = match serde_json::from_value(value) {
            Ok(event) => event,
            Err(e) => return self.malformed(&ev.data, &e),
        };
        match event {
            AnEvent::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    self.anthropic_usage(&usage);
                    out.push(self.usage_event());
                }
            }
            AnEvent::ContentBlockStart { index, content_block } => match content_block {
                AnBlockStart::Text { text } => {
                    self.blocks.push((index, Block::Text));
                    self.text(text, out);
                }
                AnBlockStart::ToolUse { id, name, input } => {
                    let start_input = match input {
                        Value::Object(map) if !map.is_empty() => Some(Value::Object(map).to_string()),
                        _ => None,
                    };
                    let call = CallState { id: Some(id), name, start_input, ..CallState::default() };
                    let slot = self.start_call(call, out);
                    self.blocks.push((index, Block::Tool(slot)));
                }
                AnBlockStart::Other => self.blocks.push((index, Block::Other)),
            },
            AnEvent::ContentBlockDelta { index, delta } => {
                let block = self.blocks.iter().rev().find(|(i, _)| *i == index).map(|(_, b)| *b);
                match (block, delta) {
                    (Some(Block::Text), AnDelta::TextDelta { text }) => self.text(text, out),
                    (Some(Block::Tool(slot)), AnDelta::InputJsonDelta { partial_json }) => {
                        self.arguments(slot, partial_json, out)
                    }
                    _ => {}
                }
            }
            AnEvent::MessageDelta { delta, usage } => {
                if let Some(usage) = usage {
                    self.anthropic_usage(&usage);
                    out.push(self.usage_event());
                }
                if let Some(reason) = delta.and_then(|d| d.stop_reason).filter(|r| !r.is_empty()) {
                    self.finish_reason = Some(reason.clone());
                    out.push(StreamEvent::Finished { reason });
                }
            }
            AnEvent::MessageStop => self.done = true,
            AnEvent::Error { error } => {
                let detail = match (error.kind.as_deref(), error.message.as_deref()) {
                    (Some(kind), Some(message)) => format!("{message} ({kind})"),
                    (None, Some(message)) => message.to_string(),
                    (Some(kind), None) => kind.to_string(),
                    (None, None) => "unknown error".to_string(),
                };
                self.provider_error(&ev.data, detail, out);
            }
            AnEvent::ContentBlockStop | AnEvent::Ping | AnEvent::Other => {}
        }
    }

    fn anthropic_usage(&mut self, usage: &AnUsage) {
        if let Some(input) = usage.input_tokens {
            let cached = usage.cache_creation_input_tokens.unwrap_or(0) + usage.cache_read_input_tokens.unwrap_or(0);
            self.prompt_tokens = Some(input + cached);
        }
        if let Some(output) = usage.output_tokens {
            self.completion_tokens = Some(output);
        }
    }
}

/// The provider's message from an error object (`{"message": …, "type": …}`) or string.
fn error_value_detail(error: &Value) -> String {
    match error {
        Value::String(s) => s.clone(),
        Value::Object(map) => {
            let message = map.get("message").and_then(Value::as_str);
            let kind = map.get("type").or_else(|| map.get("code")).and_then(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            });
            match (message, kind) {
                (Some(m), Some(k)) => format!("{m} ({k})"),
                (Some(m), None) => m.to_string(),
                (None, Some(k)) => k,
                (None, None) => error.to_string(),
            }
        }
        other => other.to_string(),
    }
}

#[derive(Deserialize)]
struct OaChunk {
    #[serde(default)]
    choices: Option<Vec<OaChoice>>,
    #[serde(default)]
    usage: Option<OaUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct OaChoice {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    delta: Option<OaDelta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct OaDelta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<OaToolCallDelta>>,
}

#[derive(Deserialize)]
struct OaToolCallDelta {
    #[serde(default)]
    index: Option<i64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<OaFunctionDelta>,
}

#[derive(Deserialize, Default)]
struct OaFunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct OaUsage {
    #[serde(default)]
    prompt_tokens: Option<i64>,
    #[serde(default)]
    completion_tokens: Option<i64>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum AnEvent {
    MessageStart {
        message: AnMessageStart,
    },
    ContentBlockStart {
        index: u64,
        content_block: AnBlockStart,
    },
    ContentBlockDelta {
        index: u64,
        delta: AnDelta,
    },
    ContentBlockStop,
    MessageDelta {
        #[serde(default)]
        delta: Option<AnMessageDelta>,
        #[serde(default)]
        usage: Option<AnUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: AnError,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct AnMessageStart {
    #[serde(default)]
    usage: Option<AnUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum AnBlockStart {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum AnDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct AnMessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct AnUsage {
    #[serde(default)]
    input_tokens: Option<i64>,
    #[serde(default)]
    output_tokens: Option<i64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<i64>,
    #[serde(default)]
    cache_read_input_tokens: Option<i64>,
}

#[derive(Deserialize)]
struct AnError {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

/// Decodes a whole recorded body: every event, then the outcome.
#[allow(clippy::result_large_err)] // see `StreamDecoder::finish`
pub fn decode_body(kind: ProviderKind, body: &[u8]) -> (Vec<StreamEvent>, Result<AssistantMessage, StreamFailure>) {
    let mut decoder = StreamDecoder::new(kind);
    let events = crate::sse::parse_all(body).iter().flat_map(|ev| decoder.feed(ev)).collect();
    (events, decoder.finish())
}

// ---------------------------------------------------------------------------------------------------
// HTTP failures and retries
// ---------------------------------------------------------------------------------------------------

/// Why a request to the model endpoint failed before any reply streamed. `message` says what happened
/// and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelError {
    /// 401/403: the key is missing, wrong or not allowed. Never retried.
    Auth { message: String },
    /// 429: too many requests; `retry_after_secs` from the `Retry-After` header, when it had one.
    RateLimited { retry_after_secs: Option<u64>, message: String },
    /// The account has no quota or credit left (429 `insufficient_quota`, 402, "credit balance too low").
    /// Never retried.
    Quota { message: String },
    /// 5xx (and 408): a failure on the endpoint's side; retried with backoff.
    Server { status: u16, message: String },
    /// Other 4xx: the request itself is wrong (model name, base URL, context too long). Never retried.
    BadRequest { status: u16, message: String },
    /// The endpoint could not be reached (offline, DNS, refused, reset). Retried with backoff.
    Network { message: String },
    /// The browser blocked the response because the endpoint does not allow this page's origin. Never
    /// retried: the endpoint's configuration must change.
    Cors { message: String },
    /// The reply stream was malformed or carried the provider's own error (the partial reply is saved).
    BadReply { message: String },
}

impl ModelError {
    pub fn message(&self) -> &str {
        match self {
            ModelError::Auth { message }
            | ModelError::RateLimited { message, .. }
            | ModelError::Quota { message }
            | ModelError::Server { message, .. }
            | ModelError::BadRequest { message, .. }
            | ModelError::Network { message }
            | ModelError::Cors { message }
            | ModelError::BadReply { message } => message,
        }
    }

    /// The [`crate::ErrorKind`] of this failure.
    pub fn kind(&self) -> crate::ErrorKind {
        use crate::ErrorKind as K;
        match self {
            ModelError::Auth { .. } => K::Auth,
            ModelError::RateLimited { .. } => K::RateLimited,
            ModelError::Quota { .. } => K::Quota,
            ModelError::Server { .. } => K::ModelServer,
            ModelError::BadRequest { .. } => K::BadRequest,
            ModelError::Network { .. } => K::Network,
            ModelError::Cors { .. } => K::Cors,
            ModelError::BadReply { .. } => K::BadReply,
        }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for ModelError {}

impl From<ModelError> for crate::Error {
    fn from(e: ModelError) -> crate::Error {
        crate::Error::Model(e)
    }
}

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
fn parse_http_date(s: &str) -> Option<i64> {
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
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sse::SseParser;
    use expect_test::{expect, Expect};
    use proptest::prelude::*;

    // ---- fixtures -----------------------------------------------------------------------------------

    /// An OpenAI stream as api.openai.com sends it with `include_usage`: text, then two parallel tool
    /// calls whose arguments arrive in fragments, the finish reason, the usage chunk with empty
    /// `choices`, and `[DONE]`.
    const OPENAI_TOOLS: &str = concat!(
        r#"data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}"#,
        "\n\n",
        r#"data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"Let me look at "},"logprobs":null,"finish_reason":null}],"usage":null}"#,
        "\n\n",
        r#"data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"both — src/auth.py first."},"logprobs":null,"finish_reason":null}],"usage":null}"#,
        "\n\n",
        r#"data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_Ab12","type":"function","function":{"name":"read_file","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}"#,
        "\n\n",
        r#"data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]},"logprobs":null,"finish_reason":null}],"usage":null}"#,
        "\n\n",
        r#"data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\": \"src/auth.py\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}"#,
        "\n\n",
        r#"data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_Cd34","type":"function","function":{"name":"conversation_recall","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}"#,
        "\n\n",
        r#"data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"action\": \"search\", "}}]},"logprobs":null,"finish_reason":null}],"usage":null}"#,
        "\n\n",
        r#"data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"query\": \"refresh_token\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}"#,
        "\n\n",
        r#"data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}"#,
        "\n\n",
        r#"data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":1834,"completion_tokens":61,"total_tokens":1895,"prompt_tokens_details":{"cached_tokens":1024}}}"#,
        "\n\n",
        "data: [DONE]\n\n",
    );

    /// A plain text answer from an OpenAI-compatible local server (llama.cpp style: CRLF, a keepalive
    /// comment, multi-byte text, usage on the last choice chunk).
    const OPENAI_TEXT: &str = concat!(
        ": ping\r\n\r\n",
        r#"data: {"choices":[{"index":0,"delta":{"role":"assistant","content":null}}],"model":"qwen2.5-coder"}"#,
        "\r\n\r\n",
        r#"data: {"choices":[{"index":0,"delta":{"content":"Grüße! Der Token "}}],"model":"qwen2.5-coder"}"#,
        "\r\n\r\n",
        r#"data: {"choices":[{"index":0,"delta":{"content":"läuft nach 7 Tagen ab 🔑."}}],"model":"qwen2.5-coder"}"#,
        "\r\n\r\n",
        r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":312,"completion_tokens":14,"total_tokens":326}}"#,
        "\r\n\r\n",
        "data: [DONE]\r\n\r\n",
    );

    /// An Anthropic stream as the Messages API sends it: text, two tool_use blocks with
    /// input_json_delta fragments, a ping, usage with cache reads, stop_reason and message_stop.
    const ANTHROPIC_TOOLS: &str = concat!(
        "event: message_start\n",
        r#"data: {"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1502,"cache_creation_input_tokens":0,"cache_read_input_tokens":2048,"output_tokens":3}}}"#,
        "\n\n",
        "event: content_block_start\n",
        r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        "\n\n",
        "event: ping\n",
        r#"data: {"type": "ping"}"#,
        "\n\n",
        "event: content_block_delta\n",
        r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I'll check "}}"#,
        "\n\n",
        "event: content_block_delta\n",
        r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"the file and the archive — 両方."}}"#,
        "\n\n",
        "event: content_block_stop\n",
        r#"data: {"type":"content_block_stop","index":0}"#,
        "\n\n",
        "event: content_block_start\n",
        r#"data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"read_file","input":{}}}"#,
        "\n\n",
        "event: content_block_delta\n",
        r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
        "\n\n",
        "event: content_block_delta\n",
        r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"src/"}}"#,
        "\n\n",
        "event: content_block_delta\n",
        r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"auth.py\"}"}}"#,
        "\n\n",
        "event: content_block_stop\n",
        r#"data: {"type":"content_block_stop","index":1}"#,
        "\n\n",
        "event: content_block_start\n",
        r#"data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01Vd2","name":"conversation_recall","input":{}}}"#,
        "\n\n",
        "event: content_block_delta\n",
        r#"data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"action\": \"sea"}}"#,
        "\n\n",
        "event: content_block_delta\n",
        r#"data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"rch\", \"query\": \"refresh_token\"}"}}"#,
        "\n\n",
        "event: content_block_stop\n",
        r#"data: {"type":"content_block_stop","index":2}"#,
        "\n\n",
        "event: message_delta\n",
        r#"data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":97}}"#,
        "\n\n",
        "event: message_stop\n",
        r#"data: {"type":"message_stop"}"#,
        "\n\n",
    );

    // ---- rendering ----------------------------------------------------------------------------------

    fn render_events(events: &[StreamEvent]) -> String {
        let mut out = String::new();
        for e in events {
            let line = match e {
                StreamEvent::TextDelta(t) => format!("text {t:?}"),
                StreamEvent::ToolCallStarted { index, id, name } => format!("call#{index} started id={id} name={name}"),
                StreamEvent::ToolCallArgumentsDelta { index, fragment } => format!("call#{index} args {fragment:?}"),
                StreamEvent::Usage { prompt_tokens, completion_tokens } => {
                    format!("usage prompt={prompt_tokens} completion={completion_tokens}")
                }
                StreamEvent::Finished { reason } => format!("finished {reason}"),
                StreamEvent::ProviderError { message } => format!("provider error: {message}"),
            };
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    fn render_message(m: &AssistantMessage) -> String {
        let mut out = format!("content: {:?}\n", m.content);
        for c in &m.tool_calls {
            out.push_str(&format!("call {} {} {}\n", c.id, c.name, c.arguments));
        }
        out.push_str(&format!("finish: {:?}\n", m.finish_reason));
        if let Some(u) = m.usage {
            out.push_str(&format!("usage: prompt={} completion={}\n", u.prompt_tokens, u.completion_tokens));
        }
        out
    }

    fn render_outcome(outcome: &Result<AssistantMessage, StreamFailure>) -> String {
        match outcome {
            Ok(m) => format!("OK\n{}", render_message(m)),
            Err(f) => format!("{:?}: {}\nraw: {}\npartial:\n{}", f.kind, f.message, f.raw, render_message(&f.partial)),
        }
    }

    /// Decodes `body` whole; the events and the outcome must match `expect`.
    fn check(kind: ProviderKind, body: &str, expect: Expect) {
        let (events, outcome) = decode_body(kind, body.as_bytes());
        expect.assert_eq(&format!("{}---\n{}", render_events(&events), render_outcome(&outcome)));
    }

    /// Decodes `body` fed to the SSE parser in pieces cut at `cuts`.
    fn decode_split(
        kind: ProviderKind,
        body: &[u8],
        cuts: &[usize],
    ) -> (Vec<StreamEvent>, Result<AssistantMessage, StreamFailure>) {
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
        cuts.sort_unstable();
        let mut parser = SseParser::new();
        let mut decoder = StreamDecoder::new(kind);
        let mut events = Vec::new();
        let mut start = 0;
        for end in cuts.into_iter().chain([body.len()]) {
            for ev in parser.push(&body[start..end]) {
                events.extend(decoder.feed(&ev));
            }
            start = end;
        }
        for ev in parser.finish() {
            events.extend(decoder.feed(&ev));
        }
        (events, decoder.finish())
    }

    // ---- decoding -----------------------------------------------------------------------------------

    #[test]
    fn openai_parallel_tool_calls_with_fragmented_arguments() {
        check(
            ProviderKind::OpenAi,
            OPENAI_TOOLS,
            expect![[r#"
            text "Let me look at "
            text "both — src/auth.py first."
            call#0 started id=call_Ab12 name=read_file
            call#0 args "{\"pa"
            call#0 args "th\": \"src/auth.py\"}"
            call#1 started id=call_Cd34 name=conversation_recall
            call#1 args "{\"action\": \"search\", "
            call#1 args "\"query\": \"refresh_token\"}"
            finished tool_calls
            usage prompt=1834 completion=61
            ---
            OK
            content: "Let me look at both — src/auth.py first."
            call call_Ab12 read_file {"path": "src/auth.py"}
            call call_Cd34 conversation_recall {"action": "search", "query": "refresh_token"}
            finish: Some("tool_calls")
            usage: prompt=1834 completion=61
        "#]],
        );
    }

    #[test]
    fn openai_text_from_a_local_server() {
        check(
            ProviderKind::OpenAi,
            OPENAI_TEXT,
            expect![[r#"
            text "Grüße! Der Token "
            text "läuft nach 7 Tagen ab 🔑."
            finished stop
            usage prompt=312 completion=14
            ---
            OK
            content: "Grüße! Der Token läuft nach 7 Tagen ab 🔑."
            finish: Some("stop")
            usage: prompt=312 completion=14
        "#]],
        );
    }

    #[test]
    fn anthropic_text_and_parallel_tool_use() {
        check(
            ProviderKind::Anthropic,
            ANTHROPIC_TOOLS,
            expect![[r#"
            usage prompt=3550 completion=3
            text "I'll check "
            text "the file and the archive — 両方."
            call#0 started id=toolu_01T1x1fJ34qAmk2tNTrN7Up6 name=read_file
            call#0 args "{\"path\": \"src/"
            call#0 args "auth.py\"}"
            call#1 started id=toolu_01Vd2 name=conversation_recall
            call#1 args "{\"action\": \"sea"
            call#1 args "rch\", \"query\": \"refresh_token\"}"
            usage prompt=3550 completion=97
            finished tool_use
            ---
            OK
            content: "I'll check the file and the archive — 両方."
            call toolu_01T1x1fJ34qAmk2tNTrN7Up6 read_file {"path": "src/auth.py"}
            call toolu_01Vd2 conversation_recall {"action": "search", "query": "refresh_token"}
            finish: Some("tool_use")
            usage: prompt=3550 completion=97
        "#]],
        );
    }

    #[test]
    fn every_single_split_point_decodes_the_same() {
        for (kind, body) in [
            (ProviderKind::OpenAi, OPENAI_TOOLS),
            (ProviderKind::OpenAi, OPENAI_TEXT),
            (ProviderKind::Anthropic, ANTHROPIC_TOOLS),
        ] {
            let whole = decode_body(kind, body.as_bytes());
            assert!(whole.1.is_ok(), "{kind:?} fixture must decode: {:?}", whole.1);
            for cut in 0..=body.len() {
                assert_eq!(decode_split(kind, body.as_bytes(), &[cut]), whole, "{kind:?} split at byte {cut}");
            }
        }
    }

    proptest! {
        #[test]
        fn streams_split_at_random_points_decode_identically(cuts in prop::collection::vec(any::<usize>(), 0..24)) {
            for (kind, body) in [
                (ProviderKind::OpenAi, OPENAI_TOOLS),
                (ProviderKind::OpenAi, OPENAI_TEXT),
                (ProviderKind::Anthropic, ANTHROPIC_TOOLS),
            ] {
                prop_assert_eq!(decode_split(kind, body.as_bytes(), &cuts), decode_body(kind, body.as_bytes()));
            }
        }

        /// A stream cut at any byte before its end marker is a `Cut` or (inside a tool call's arguments)
        /// `Malformed` failure that keeps every complete text delta received; never a panic, never `Ok`.
        #[test]
        fn a_stream_cut_anywhere_keeps_its_partial_text(cut_at in any::<usize>()) {
            for (kind, body, marker) in [
                (ProviderKind::OpenAi, OPENAI_TOOLS, "\"finish_reason\":\"tool_calls\""),
                (ProviderKind::Anthropic, ANTHROPIC_TOOLS, "\"stop_reason\":\"tool_use\""),
            ] {
                let end = body.find(marker).unwrap();
                let cut = cut_at % end;
                let (events, outcome) = decode_body(kind, &body.as_bytes()[..cut]);
                let failure = outcome.expect_err("a cut stream must fail");
                prop_assert_eq!(failure.kind, FailureKind::Cut);
                let streamed: String = events.iter().filter_map(|e| match e { StreamEvent::TextDelta(t) => Some(t.as_str()), _ => None }).collect();
                prop_assert_eq!(failure.partial.content, streamed);
            }
        }
    }

    #[test]
    fn a_cut_openai_stream_keeps_the_partial_text_and_calls() {
        let cut = OPENAI_TOOLS.find(r#""index":1,"function""#).unwrap();
        check(
            ProviderKind::OpenAi,
            &OPENAI_TOOLS[..cut],
            expect![[r#"
            text "Let me look at "
            text "both — src/auth.py first."
            call#0 started id=call_Ab12 name=read_file
            call#0 args "{\"pa"
            call#0 args "th\": \"src/auth.py\"}"
            call#1 started id=call_Cd34 name=conversation_recall
            ---
            Cut: The model's reply was cut off before it finished (the stream ended early). The partial reply is saved; use Retry or Continue.
            raw: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_Cd34","type":"function","function":{"name":"conversation_recall","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}
            partial:
            content: "Let me look at both — src/auth.py first."
            call call_Ab12 read_file {"path": "src/auth.py"}
            call call_Cd34 conversation_recall 
            finish: None
        "#]],
        );
    }

    #[test]
    fn a_cut_anthropic_stream_keeps_the_partial_text() {
        let cut = ANTHROPIC_TOOLS
            .find("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1")
            .unwrap();
        check(
            ProviderKind::Anthropic,
            &ANTHROPIC_TOOLS[..cut],
            expect![[r#"
            usage prompt=3550 completion=3
            text "I'll check "
            text "the file and the archive — 両方."
            ---
            Cut: The model's reply was cut off before it finished (the stream ended early). The partial reply is saved; use Retry or Continue.
            raw: {"type":"content_block_stop","index":0}
            partial:
            content: "I'll check the file and the archive — 両方."
            finish: None
            usage: prompt=3550 completion=3
        "#]],
        );
    }

    #[test]
    fn an_anthropic_stream_without_message_stop_is_complete_once_stop_reason_arrived() {
        let cut = ANTHROPIC_TOOLS.find("event: message_stop").unwrap();
        let (_, outcome) = decode_body(ProviderKind::Anthropic, &ANTHROPIC_TOOLS.as_bytes()[..cut]);
        assert_eq!(outcome.map(|m| m.finish_reason), Ok(Some("tool_use".to_string())));
    }

    #[test]
    fn malformed_json_mid_stream_fails_with_the_raw_line_and_all_the_text() {
        // The dev server's `badjson` fault: a broken chunk between good ones.
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Demo model \"}}]}\n\n",
            "data: {\"choices\": [ this is not json\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"here.\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n",
        );
        check(
            ProviderKind::OpenAi,
            body,
            expect![[r#"
            text "Demo model "
            text "here."
            finished stop
            ---
            Malformed: The model endpoint sent data that is not valid OpenAI-compatible streaming JSON (expected ident at line 1 column 16). The partial reply and the raw data are saved; retry, or check the endpoint kind in Settings.
            raw: {"choices": [ this is not json
            partial:
            content: "Demo model here."
            finish: Some("stop")
        "#]],
        );
        let body = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Partial\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"no index\"}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        );
        check(
            ProviderKind::Anthropic,
            body,
            expect![[r#"
            usage prompt=10 completion=1
            text "Partial"
            ---
            Malformed: The model endpoint sent data that is not valid Anthropic streaming JSON (missing field `index`). The partial reply and the raw data are saved; retry, or check the endpoint kind in Settings.
            raw: {"type":"content_block_delta","delta":{"type":"text_delta","text":"no index"}}
            partial:
            content: "Partial"
            finish: None
            usage: prompt=10 completion=1
        "#]],
        );
    }

    #[test]
    fn tool_arguments_that_are_not_json_fail_with_the_raw_arguments() {
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"function\":{\"name\":\"write_file\",\"arguments\":\"{\\\"path\\\": \\\"a.txt\\\", \\\"content\\\": \\\"unterminated\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n",
            "data: [DONE]\n\n",
        );
        check(
            ProviderKind::OpenAi,
            body,
            expect![[r#"
            call#0 started id=call_1 name=write_file
            call#0 args "{\"path\": \"a.txt\", \"content\": \"unterminated"
            finished length
            ---
            Malformed: The model called write_file with arguments that are not valid JSON (EOF while parsing a string at line 1 column 42), so the call was not run. The raw arguments are saved; retry, or ask the model to call the tool again. The reply hit the output token limit: raise it in Settings.
            raw: {"path": "a.txt", "content": "unterminated
            partial:
            content: ""
            call call_1 write_file {"path": "a.txt", "content": "unterminated
            finish: Some("length")
        "#]],
        );
        let body = concat!(
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read_file\",\"input\":{}}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{path: src/main.rs}\"}}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":12}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        );
        check(
            ProviderKind::Anthropic,
            body,
            expect![[r#"
            call#0 started id=toolu_1 name=read_file
            call#0 args "{path: src/main.rs}"
            usage prompt=0 completion=12
            finished tool_use
            ---
            Malformed: The model called read_file with arguments that are not valid JSON (key must be a string at line 1 column 2), so the call was not run. The raw arguments are saved; retry, or ask the model to call the tool again.
            raw: {path: src/main.rs}
            partial:
            content: ""
            call toolu_1 read_file {path: src/main.rs}
            finish: Some("tool_use")
            usage: prompt=0 completion=12
        "#]],
        );
    }

    #[test]
    fn provider_error_events_end_the_stream() {
        let body = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"Sure, \"}}\n\n",
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ignored\"}}\n\n",
        );
        check(
            ProviderKind::Anthropic,
            body,
            expect![[r#"
            usage prompt=10 completion=1
            text "Sure, "
            provider error: The model endpoint reported an error in the middle of the reply: Overloaded (overloaded_error). The partial reply is saved; retry in a moment.
            ---
            Provider: The model endpoint reported an error in the middle of the reply: Overloaded (overloaded_error). The partial reply is saved; retry in a moment.
            raw: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}
            partial:
            content: "Sure, "
            finish: None
            usage: prompt=10 completion=1
        "#]],
        );
        // OpenRouter / vLLM report errors inside the stream as a chunk with an `error` object.
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Half an\"}}]}\n\n",
            "data: {\"error\":{\"message\":\"Upstream provider timed out\",\"code\":502}}\n\n",
            "data: [DONE]\n\n",
        );
        check(
            ProviderKind::OpenAi,
            body,
            expect![[r#"
            text "Half an"
            provider error: The model endpoint reported an error in the middle of the reply: Upstream provider timed out (502). The partial reply is saved; retry in a moment.
            ---
            Provider: The model endpoint reported an error in the middle of the reply: Upstream provider timed out (502). The partial reply is saved; retry in a moment.
            raw: {"error":{"message":"Upstream provider timed out","code":502}}
            partial:
            content: "Half an"
            finish: None
        "#]],
        );
    }

    #[test]
    fn unknown_events_and_blocks_are_ignored() {
        let body = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":7,\"output_tokens\":1}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"abc\"}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "event: brand_new_event\ndata: {\"type\":\"brand_new_event\",\"whatever\":[1,2]}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"Answer.\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"citations_delta\",\"citation\":{}}}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"input_tokens\":7,\"cache_read_input_tokens\":5,\"output_tokens\":20}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n",
        );
        check(
            ProviderKind::Anthropic,
            body,
            expect![[r#"
            usage prompt=7 completion=1
            text "Answer."
            usage prompt=12 completion=20
            finished end_turn
            ---
            OK
            content: "Answer."
            finish: Some("end_turn")
            usage: prompt=12 completion=20
        "#]],
        );
        // OpenAI-compatible servers add fields (reasoning, refusal, logprobs) that are ignored.
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"thinking…\",\"refusal\":null}}]}\n\n",
            "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"second choice\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\n",
        );
        check(
            ProviderKind::OpenAi,
            body,
            expect![[r#"
            text "ok"
            finished stop
            ---
            OK
            content: "ok"
            finish: Some("stop")
        "#]],
        );
    }

    #[test]
    fn tool_calls_without_index_or_as_one_object() {
        // Ollama-style: the whole call in one chunk, arguments as an object, no index; then a second.
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"call_x\",\"function\":{\"name\":\"read_file\",\"arguments\":{\"path\":\"a.rs\"}}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"list_dir\",\"arguments\":\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"call_y\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"b.rs\\\"}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        );
        check(
            ProviderKind::OpenAi,
            body,
            expect![[r#"
            call#0 started id=call_x name=read_file
            call#0 args "{\"path\":\"a.rs\"}"
            call#1 started id=call_y name=read_file
            call#1 args "{\"path\":\"b.rs\"}"
            finished tool_calls
            ---
            OK
            content: ""
            call call_x read_file {"path":"a.rs"}
            call call_y read_file {"path":"b.rs"}
            finish: Some("tool_calls")
        "#]],
        );
    }

    #[test]
    fn a_body_that_is_not_a_stream_says_so() {
        check(
            ProviderKind::OpenAi,
            "{\"id\":\"chatcmpl-1\",\"choices\":[{\"message\":{\"content\":\"hi\"}}]}",
            expect![[r#"
                ---
                Cut: The model endpoint closed the connection without sending a streamed reply. Check that the base URL in Settings points at an OpenAI-compatible endpoint that supports streaming, then retry.
                raw: 
                partial:
                content: ""
                finish: None
            "#]],
        );
        check(
            ProviderKind::Anthropic,
            "<html><body>Bad gateway</body></html>\n",
            expect![[r#"
            ---
            Cut: The model endpoint closed the connection without sending a streamed reply. Check that the base URL in Settings points at an Anthropic endpoint that supports streaming, then retry.
            raw: 
            partial:
            content: ""
            finish: None
        "#]],
        );
    }

    #[test]
    fn partial_is_available_while_streaming() {
        let mut parser = SseParser::new();
        let mut decoder = StreamDecoder::new(ProviderKind::Anthropic);
        let cut = ANTHROPIC_TOOLS
            .find("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2")
            .unwrap();
        for ev in parser.push(&ANTHROPIC_TOOLS.as_bytes()[..cut]) {
            decoder.feed(&ev);
        }
        assert!(!decoder.is_done());
        expect![[r#"
            content: "I'll check the file and the archive — 両方."
            call toolu_01T1x1fJ34qAmk2tNTrN7Up6 read_file {"path": "src/auth.py"}
            finish: None
            usage: prompt=3550 completion=3
        "#]]
        .assert_eq(&render_message(&decoder.partial()));
        for ev in parser.push(&ANTHROPIC_TOOLS.as_bytes()[cut..]) {
            decoder.feed(&ev);
        }
        assert!(decoder.is_done());
        assert_eq!(decoder.finish().map(|m| m.tool_calls.len()), Ok(2));
    }

    // ---- requests -----------------------------------------------------------------------------------

    fn msg(role: Role, content: &str) -> ContextMessage {
        ContextMessage { role, content: content.to_string(), tool_calls: Vec::new(), tool_call_id: None, name: None }
    }

    fn calls(content: &str, calls: &[(&str, &str, &str)]) -> ContextMessage {
        ContextMessage {
            tool_calls: calls
                .iter()
                .map(|(id, name, args)| ToolCall {
                    id: id.to_string(),
                    name: name.to_string(),
                    arguments: args.to_string(),
                })
                .collect(),
            ..msg(Role::Assistant, content)
        }
    }

    fn result(id: &str, name: &str, content: &str) -> ContextMessage {
        ContextMessage { tool_call_id: Some(id.to_string()), name: Some(name.to_string()), ..msg(Role::Tool, content) }
    }

    fn config(kind: ProviderKind, base_url: &str, api_key: &str) -> ModelSettings {
        ModelSettings {
            kind,
            base_url: base_url.to_string(),
            model: "test-model".to_string(),
            api_key: api_key.to_string(),
            ..ModelSettings::default()
        }
    }

    fn read_file_tool() -> Value {
        json!({"type": "function", "function": {
            "name": "read_file",
            "description": "Read a file of the workspace.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
        }})
    }

    /// A session as context assembly hands it over: the system prompt, an exchange with two parallel
    /// calls, a mid-list system note about an orphaned result, and the newest user message.
    fn conversation() -> Vec<ContextMessage> {
        vec![
            msg(Role::System, "You are Cowork.\n\nsession:\n  id: s1"),
            msg(Role::User, "What's in src/auth.py, and what did we decide about refresh tokens?"),
            calls(
                "Let me look.",
                &[
                    ("call_Ab12", "read_file", r#"{"path": "src/auth.py"}"#),
                    ("call_Cd34", "conversation_recall", r#"{"action": "search", "query": "refresh_token"}"#),
                ],
            ),
            result("call_Ab12", "read_file", "def login(): ..."),
            result("call_Cd34", "conversation_recall", "[Turn 12] user: refresh tokens expire after 7 days"),
            msg(Role::Assistant, "auth.py defines login(); refresh tokens expire after 7 days.  \n"),
            msg(Role::System, "[Turn 40: a result from delegate_task that arrived outside its tool call]\nTask completed: \"Add refresh\""),
            msg(Role::User, "Great, thanks."),
        ]
    }

    fn render_request(req: &HttpRequest) -> String {
        let mut out = format!("{} {}\n", req.method, req.url);
        for (k, v) in &req.headers {
            out.push_str(&format!("{k}: {v}\n"));
        }
        let body: Value = serde_json::from_str(&req.body).expect("the body is JSON");
        out.push_str(&serde_json::to_string_pretty(&body).unwrap());
        out
    }

    fn check_request(cfg: &ModelSettings, messages: &[ContextMessage], tools: &[Value], expect: Expect) {
        expect.assert_eq(&render_request(&build_request(cfg, messages, tools)));
    }

    #[test]
    fn openai_request() {
        let mut cfg = config(ProviderKind::OpenAi, "https://api.openai.com/v1/", "sk-test-123");
        cfg.max_output_tokens = Some(4096);
        check_request(
            &cfg,
            &conversation(),
            &[read_file_tool()],
            expect![[r#"
            POST https://api.openai.com/v1/chat/completions
            content-type: application/json
            accept: text/event-stream
            authorization: Bearer sk-test-123
            {
              "max_tokens": 4096,
              "messages": [
                {
                  "content": "You are Cowork.\n\nsession:\n  id: s1",
                  "role": "system"
                },
                {
                  "content": "What's in src/auth.py, and what did we decide about refresh tokens?",
                  "role": "user"
                },
                {
                  "content": "Let me look.",
                  "role": "assistant",
                  "tool_calls": [
                    {
                      "function": {
                        "arguments": "{\"path\": \"src/auth.py\"}",
                        "name": "read_file"
                      },
                      "id": "call_Ab12",
                      "type": "function"
                    },
                    {
                      "function": {
                        "arguments": "{\"action\": \"search\", \"query\": \"refresh_token\"}",
                        "name": "conversation_recall"
                      },
                      "id": "call_Cd34",
                      "type": "function"
                    }
                  ]
                },
                {
                  "content": "def login(): ...",
                  "name": "read_file",
                  "role": "tool",
                  "tool_call_id": "call_Ab12"
                },
                {
                  "content": "[Turn 12] user: refresh tokens expire after 7 days",
                  "name": "conversation_recall",
                  "role": "tool",
                  "tool_call_id": "call_Cd34"
                },
                {
                  "content": "auth.py defines login(); refresh tokens expire after 7 days.  \n",
                  "role": "assistant"
                },
                {
                  "content": "[Turn 40: a result from delegate_task that arrived outside its tool call]\nTask completed: \"Add refresh\"",
                  "role": "system"
                },
                {
                  "content": "Great, thanks.",
                  "role": "user"
                }
              ],
              "model": "test-model",
              "stream": true,
              "stream_options": {
                "include_usage": true
              },
              "tools": [
                {
                  "function": {
                    "description": "Read a file of the workspace.",
                    "name": "read_file",
                    "parameters": {
                      "properties": {
                        "path": {
                          "type": "string"
                        }
                      },
                      "required": [
                        "path"
                      ],
                      "type": "object"
                    }
                  },
                  "type": "function"
                }
              ]
            }"#]],
        );
    }

    #[test]
    fn openai_request_for_a_local_server_without_key_or_tools() {
        let cfg = config(ProviderKind::OpenAi, " http://localhost:11434/v1 ", "  ");
        let messages = [msg(Role::System, "Prompt."), msg(Role::System, "State."), msg(Role::User, "Hi")];
        check_request(
            &cfg,
            &messages,
            &[],
            expect![[r#"
            POST http://localhost:11434/v1/chat/completions
            content-type: application/json
            accept: text/event-stream
            {
              "messages": [
                {
                  "content": "Prompt.\n\nState.",
                  "role": "system"
                },
                {
                  "content": "Hi",
                  "role": "user"
                }
              ],
              "model": "test-model",
              "stream": true,
              "stream_options": {
                "include_usage": true
              }
            }"#]],
        );
    }

    #[test]
    fn anthropic_request() {
        let cfg = config(ProviderKind::Anthropic, "https://api.anthropic.com/v1", "sk-ant-test");
        check_request(
            &cfg,
            &conversation(),
            &[read_file_tool()],
            expect![[r#"
            POST https://api.anthropic.com/v1/messages
            content-type: application/json
            accept: text/event-stream
            x-api-key: sk-ant-test
            anthropic-version: 2023-06-01
            anthropic-dangerous-direct-browser-access: true
            {
              "max_tokens": 8192,
              "messages": [
                {
                  "content": [
                    {
                      "text": "What's in src/auth.py, and what did we decide about refresh tokens?",
                      "type": "text"
                    }
                  ],
                  "role": "user"
                },
                {
                  "content": [
                    {
                      "text": "Let me look.",
                      "type": "text"
                    },
                    {
                      "id": "call_Ab12",
                      "input": {
                        "path": "src/auth.py"
                      },
                      "name": "read_file",
                      "type": "tool_use"
                    },
                    {
                      "id": "call_Cd34",
                      "input": {
                        "action": "search",
                        "query": "refresh_token"
                      },
                      "name": "conversation_recall",
                      "type": "tool_use"
                    }
                  ],
                  "role": "assistant"
                },
                {
                  "content": [
                    {
                      "content": "def login(): ...",
                      "tool_use_id": "call_Ab12",
                      "type": "tool_result"
                    },
                    {
                      "content": "[Turn 12] user: refresh tokens expire after 7 days",
                      "tool_use_id": "call_Cd34",
                      "type": "tool_result"
                    }
                  ],
                  "role": "user"
                },
                {
                  "content": [
                    {
                      "text": "auth.py defines login(); refresh tokens expire after 7 days.  \n",
                      "type": "text"
                    }
                  ],
                  "role": "assistant"
                },
                {
                  "content": [
                    {
                      "text": "[System note] [Turn 40: a result from delegate_task that arrived outside its tool call]\nTask completed: \"Add refresh\"",
                      "type": "text"
                    },
                    {
                      "text": "Great, thanks.",
                      "type": "text"
                    }
                  ],
                  "role": "user"
                }
              ],
              "model": "test-model",
              "stream": true,
              "system": "You are Cowork.\n\nsession:\n  id: s1",
              "tools": [
                {
                  "description": "Read a file of the workspace.",
                  "input_schema": {
                    "properties": {
                      "path": {
                        "type": "string"
                      }
                    },
                    "required": [
                      "path"
                    ],
                    "type": "object"
                  },
                  "name": "read_file"
                }
              ]
            }"#]],
        );
    }

    #[test]
    fn anthropic_request_repairs_what_the_api_would_reject() {
        let cfg = config(ProviderKind::Anthropic, "https://api.anthropic.com/v1/messages", "");
        let messages = [
            msg(Role::System, "Prompt."),
            msg(Role::System, "   "),
            msg(Role::System, "State register."),
            // Starts with the assistant: a placeholder user message goes first.
            calls(
                "",
                &[
                    ("functions.read_file:0", "read_file", ""),
                    ("call 2", "write_file", "not json"),
                    ("c3", "echo", "[1,2]"),
                ],
            ),
            result("functions.read_file:0", "read_file", "fn main() {}"),
            msg(Role::System, "Note between results."),
            result("call 2", "write_file", ""),
            // c3 has no result: a synthetic one is added. A result for a call not shown becomes text.
            msg(Role::User, "   "),
            result("call_gone", "read_file", "old output"),
            msg(Role::User, "Continue."),
            msg(Role::Tool, "result without a call id"),
            msg(Role::Assistant, "Sure. \n\n"),
        ];
        check_request(
            &cfg,
            &messages,
            &[],
            expect![[r#"
            POST https://api.anthropic.com/v1/messages
            content-type: application/json
            accept: text/event-stream
            anthropic-version: 2023-06-01
            anthropic-dangerous-direct-browser-access: true
            {
              "max_tokens": 8192,
              "messages": [
                {
                  "content": [
                    {
                      "text": "[Earlier turns are not shown.]",
                      "type": "text"
                    }
                  ],
                  "role": "user"
                },
                {
                  "content": [
                    {
                      "id": "functions_read_file_0",
                      "input": {},
                      "name": "read_file",
                      "type": "tool_use"
                    },
                    {
                      "id": "call_2",
                      "input": {
                        "invalid_json_arguments": "not json"
                      },
                      "name": "write_file",
                      "type": "tool_use"
                    },
                    {
                      "id": "c3",
                      "input": {
                        "value": [
                          1,
                          2
                        ]
                      },
                      "name": "echo",
                      "type": "tool_use"
                    }
                  ],
                  "role": "assistant"
                },
                {
                  "content": [
                    {
                      "content": "fn main() {}",
                      "tool_use_id": "functions_read_file_0",
                      "type": "tool_result"
                    },
                    {
                      "tool_use_id": "call_2",
                      "type": "tool_result"
                    },
                    {
                      "content": "No result was recorded for this call.",
                      "tool_use_id": "c3",
                      "type": "tool_result"
                    },
                    {
                      "text": "[System note] Note between results.",
                      "type": "text"
                    },
                    {
                      "text": "[Result of tool call call_gone, which is not shown]\nold output",
                      "type": "text"
                    },
                    {
                      "text": "Continue.",
                      "type": "text"
                    },
                    {
                      "text": "[Result from a tool, not linked to a tool call]\nresult without a call id",
                      "type": "text"
                    }
                  ],
                  "role": "user"
                },
                {
                  "content": [
                    {
                      "text": "Sure.",
                      "type": "text"
                    }
                  ],
                  "role": "assistant"
                }
              ],
              "model": "test-model",
              "stream": true,
              "system": "Prompt.\n\nState register."
            }"#]],
        );
    }

    #[test]
    fn anthropic_tools_are_converted_from_the_function_format() {
        let tools: Vec<Value> = crate::prompt::builtin_tools(&crate::prompt::PromptOptions::default())
            .into_iter()
            .map(|t| t.definition)
            .chain([
                json!({"type": "function", "function": {"name": "no_params"}}),
                json!({"name": "native", "description": "Already Anthropic's format.", "input_schema": {"type": "object"}}),
                json!({"type": "function", "function": {"description": "no name: dropped"}}),
                json!("garbage"),
            ])
            .collect();
        let req = build_request(
            &config(ProviderKind::Anthropic, "https://api.anthropic.com/v1", "k"),
            &[msg(Role::User, "hi")],
            &tools,
        );
        let body: Value = serde_json::from_str(&req.body).unwrap();
        let summary: Vec<String> = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                format!(
                    "{} | described: {} | schema: {}",
                    t["name"].as_str().unwrap(),
                    t.get("description").is_some(),
                    t["input_schema"]
                        .get("properties")
                        .map(|p| p.as_object().unwrap().keys().cloned().collect::<Vec<_>>().join(","))
                        .unwrap_or_default()
                )
            })
            .collect();
        expect![[r#"
            conversation_recall | described: true | schema: action,end_turn,limit,offset,query,roles,scope,session_id,start_turn,tool_name
            delegate_task | described: true | schema: context,goal,wait
            no_params | described: false | schema: 
            native | described: true | schema: "#]]
        .assert_eq(&summary.join("\n"));
        // The same tools go to OpenAI untouched.
        let req = build_request(&config(ProviderKind::OpenAi, "http://x/v1", ""), &[msg(Role::User, "hi")], &tools);
        let body: Value = serde_json::from_str(&req.body).unwrap();
        assert_eq!(body["tools"], Value::Array(tools));
    }

    #[test]
    fn endpoint_urls_accept_any_base_form() {
        let rows = [
            (ProviderKind::OpenAi, "https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"),
            (ProviderKind::OpenAi, "https://api.openai.com/v1/", "https://api.openai.com/v1/chat/completions"),
            (ProviderKind::OpenAi, "http://127.0.0.1:8080/v1//", "http://127.0.0.1:8080/v1/chat/completions"),
            (
                ProviderKind::OpenAi,
                "http://localhost:1234/v1/chat/completions",
                "http://localhost:1234/v1/chat/completions",
            ),
            (ProviderKind::Anthropic, "https://api.anthropic.com/v1", "https://api.anthropic.com/v1/messages"),
            (ProviderKind::Anthropic, " https://api.anthropic.com/v1/ ", "https://api.anthropic.com/v1/messages"),
            (ProviderKind::Anthropic, "https://proxy.example/v1/messages/", "https://proxy.example/v1/messages"),
        ];
        for (kind, base, expect) in rows {
            let req = build_request(&config(kind, base, ""), &[msg(Role::User, "hi")], &[]);
            assert_eq!(req.url, expect, "{kind:?} base {base:?}");
        }
    }

    #[test]
    fn the_api_key_never_shows_in_debug_output() {
        for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
            let cfg = config(kind, "https://example.test/v1", "sk-very-secret-key");
            let req = build_request(&cfg, &[msg(Role::User, "hi")], &[]);
            let shown = format!("{cfg:?} {req:?} {cfg:#?} {req:#?}");
            assert!(!shown.contains("very-secret"), "{kind:?} leaked the key: {shown}");
            assert!(shown.contains("<redacted>"), "{shown}");
            // …but the request itself carries it.
            let sent = req.header("authorization").or(req.header("x-api-key")).unwrap();
            assert!(sent.contains("sk-very-secret-key"));
            assert!(!req.url.contains("secret") && !req.body.contains("secret"));
        }
        let cfg = config(ProviderKind::OpenAi, "http://localhost/v1", "");
        assert!(format!("{cfg:?}").contains("<none>"));
    }

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
            (
                422,
                None,
                r#"{"detail":[{"loc":["body","messages"],"msg":"field required","type":"value_error.missing"}]}"#,
            ),
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
}
