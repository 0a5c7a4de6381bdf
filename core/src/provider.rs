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
//! The API key is never part of any `Debug` output ([`ProviderConfig`], [`HttpRequest`]).

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::context::ContextMessage;
use crate::sse::SseEvent;
use crate::{Role, ToolCall};

/// The `anthropic-version` header value this module speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// Anthropic requires `max_tokens`; used when [`ProviderConfig::max_output_tokens`] is `None`.
pub const DEFAULT_ANTHROPIC_MAX_TOKENS: u32 = 8_192;
/// Retries after the first attempt, for rate limits, server errors and network errors.
pub const MAX_RETRIES: u32 = 3;
/// The longest wait Cowork does on its own before retrying; a longer `Retry-After` is not retried.
pub const MAX_RETRY_WAIT_SECS: u64 = 60;

/// Which wire format an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// OpenAI-compatible Chat Completions (`POST {base}/chat/completions`).
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

/// One model endpoint, as the user set it up in Settings.
#[derive(Clone, PartialEq, Eq)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// E.g. `https://api.openai.com/v1`, `http://localhost:11434/v1`, `https://api.anthropic.com/v1`;
    /// a trailing slash, or the full endpoint path, is accepted too.
    pub base_url: String,
    pub model: String,
    /// Empty: no key is sent (local servers). Never shown by `Debug`.
    pub api_key: String,
    /// The reply's token limit: OpenAI's `max_tokens` (omitted when `None`, so the server's default and
    /// reasoning models' rules apply), Anthropic's required `max_tokens` ([`DEFAULT_ANTHROPIC_MAX_TOKENS`]
    /// when `None`).
    pub max_output_tokens: Option<u32>,
}

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &if self.api_key.trim().is_empty() { "<none>" } else { "<redacted>" })
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
pub fn build_request(cfg: &ProviderConfig, messages: &[ContextMessage], tools: &[Value]) -> HttpRequest {
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

fn openai_body(cfg: &ProviderConfig, messages: &[ContextMessage], tools: &[Value]) -> String {
    let mut out: Vec<OaMessage> = Vec::with_capacity(messages.len());
    let mut leading_system = true;
    for m in messages {
        let plain = |role, content: String| OaMessage { role, content, tool_calls: Vec::new(), tool_call_id: None, name: None };
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
    let clean: String = id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
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
        let input_schema = function.get("parameters").cloned().unwrap_or_else(|| json!({"type": "object", "properties": {}}));
        return (!name.is_empty()).then(|| AnTool { name, description: text(function, "description"), input_schema });
    }
    // Already in Anthropic's format.
    let name = text(tool, "name");
    let input_schema = tool.get("input_schema")?.clone();
    (!name.is_empty()).then(|| AnTool { name, description: text(tool, "description"), input_schema })
}

fn push_block(messages: &mut Vec<AnMessage>, role: &'static str, block: AnBlock) {
    match messages.last_mut() {
        Some(last) if last.role == role => {
            if matches!(block, AnBlock::ToolResult { .. }) {
                // Results go before any text of the same user message.
                let at = last.content.iter().position(|b| !matches!(b, AnBlock::ToolResult { .. })).unwrap_or(last.content.len());
                last.content.insert(at, block);
            } else {
                last.content.push(block);
            }
        }
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
                if let Some(block) = text(&format!("[System note] {}", m.content.trim())).filter(|_| !m.content.trim().is_empty()) {
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
                    let block = AnBlock::ToolUse { id: anthropic_id(&call.id), name: call.name.clone(), input: anthropic_input(&call.arguments) };
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
        out.insert(0, AnMessage { role: "user", content: vec![AnBlock::Text { text: "[Earlier turns are not shown.]".to_string() }] });
    }
    if let Some(last) = out.last_mut().filter(|m| m.role == "assistant") {
        if let Some(AnBlock::Text { text }) = last.content.iter_mut().rev().find(|b| matches!(b, AnBlock::Text { .. })) {
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
        // Results must lead the message: converted ones may now sit between them.
        let (mut results, rest): (Vec<AnBlock>, Vec<AnBlock>) =
            message.content.drain(..).partition(|b| matches!(b, AnBlock::ToolResult { .. }));
        for id in calls.drain(..) {
            results.push(AnBlock::ToolResult { tool_use_id: id, content: "No result was recorded for this call.".to_string() });
        }
        results.extend(rest);
        message.content = results;
        i += 1;
    }
}

fn anthropic_body(cfg: &ProviderConfig, messages: &[ContextMessage], tools: &[Value]) -> String {
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
    ToolCallStarted { index: usize, id: String, name: String },
    ToolCallArgumentsDelta { index: usize, fragment: String },
    /// Totals so far (not increments): the last one wins.
    Usage { prompt_tokens: i64, completion_tokens: i64 },
    Finished { reason: String },
    /// The provider reported an error inside the stream; the stream is over.
    ProviderError { message: String },
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
    pub fn finish(self) -> Result<AssistantMessage, StreamFailure> {
        let mut partial = self.partial();
        for call in &mut partial.tool_calls {
            if call.arguments.trim().is_empty() {
                call.arguments = "{}".to_string();
            }
        }
        let fail = |kind, raw, message| Err(StreamFailure { kind, partial: partial.clone(), raw, message });
        if let Some((kind, raw, message)) = self.failure.clone() {
            return fail(kind, raw, message);
        }
        if !self.done && self.finish_reason.is_none() {
            let message = if self.events == 0 {
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
            return fail(FailureKind::Cut, self.last_data.clone(), message);
        }
        for call in &partial.tool_calls {
            if let Err(e) = serde_json::from_str::<Value>(&call.arguments) {
                let limit = matches!(partial.finish_reason.as_deref(), Some("length" | "max_tokens"));
                let mut message = format!(
                    "The model called {} with arguments that are not valid JSON ({e}), so the call was not run. The \
                     raw arguments are saved; retry, or ask the model to call the tool again.",
                    call.name
                );
                if limit {
                    message.push_str(" The reply hit the output token limit: raise it in Settings.");
                }
                return fail(FailureKind::Malformed, call.arguments.clone(), message);
            }
        }
        Ok(partial)
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
    TextDelta { text: String },
    InputJsonDelta { partial_json: String },
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
            | ModelError::Cors { message } => message,
        }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for ModelError {}

/// Classifies a non-2xx response (status 0: the request never got a response). `retry_after_header` is
/// the raw `Retry-After` value (seconds or an HTTP date), `body` the response text.
pub fn classify_http_error(status: u16, retry_after_header: Option<&str>, body: &str) -> ModelError {
    classify_http_error_at(status, retry_after_header, body, crate::now_ms())
}

/// [`classify_http_error`] at a given time (milliseconds since the epoch), for HTTP-date `Retry-After`s.
pub fn classify_http_error_at(status: u16, retry_after_header: Option<&str>, body: &str, now_ms: i64) -> ModelError {
    let detail = error_detail(body);
    let said = |status: u16| if detail.is_empty() { format!("HTTP {status}") } else { format!("HTTP {status}: {detail}") };
    let lower = body.to_lowercase();
    let quota = ["insufficient_quota", "exceeded your current quota", "credit balance"].iter().any(|p| lower.contains(p));
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
                400 | 422 if ["context", "too long", "too many tokens", "maximum"].iter().any(|p| lower.contains(p)) => {
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
pub fn classify_fetch_failure(endpoint_url: &str, app_origin: &str, detail: &str, reachable_without_cors: Option<bool>) -> ModelError {
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
        let candidates = [v.get("error").and_then(|e| e.get("message")), v.get("error"), v.get("message"), v.get("detail")];
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
        ModelError::RateLimited { retry_after_secs: None, .. } | ModelError::Server { .. } | ModelError::Network { .. } => {
            Some(backoff)
        }
        ModelError::Auth { .. } | ModelError::Quota { .. } | ModelError::BadRequest { .. } | ModelError::Cors { .. } => None,
    }
}

