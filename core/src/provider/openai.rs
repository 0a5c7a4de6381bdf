//! The OpenAI-compatible Chat Completions format: the request body, and the stream chunks
//! [`StreamDecoder`] reads.
//!
//! Leading system messages are joined into one (many local chat templates accept only one system message,
//! at the start); later ones stay in place as `system` messages. Tool messages carry `tool_call_id` but
//! no `name` (not in the schema for `role: "tool"`; strict relays reject it). An assistant message with
//! tool calls carries its `reasoning_content` when the reply came with one (DeepSeek-style endpoints
//! require it back). The reply limit goes as `max_completion_tokens` to OpenAI's reasoning models
//! ([`takes_max_completion_tokens`]), as `max_tokens` to everything else.
//!
//! A user message with images is a list of parts: its text, then each image as an `image_url` part with a
//! `data:` URL (the attachment's MIME type and its bytes in base64).
//!
//! Stream deltas: `content` is a string or (Mistral's magistral models) an array of typed parts, `text`
//! parts being text and `thinking` parts reasoning; `reasoning_content` or `reasoning` is reasoning;
//! `refusal` is a refusal's text, kept as the content.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::stream::{error_text_detail, error_value_detail, CallState, StreamDecoder, StreamEvent};
use super::{unlinked_result_text, ModelSettings};
use crate::message::ContextMessage;
use crate::sse::SseEvent;
use crate::Role;

#[derive(Serialize)]
struct OaRequest<'a> {
    model: &'a str,
    messages: Vec<OaMessage<'a>>,
    stream: bool,
    stream_options: OaStreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
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
    content: OaContent,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<OaToolCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    /// The reasoning of an assistant message with tool calls, for endpoints that want it back.
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<&'a str>,
}

/// A message's content: text, or (a user message with images) a list of typed parts.
#[derive(Serialize)]
#[serde(untagged)]
enum OaContent {
    Text(String),
    Parts(Vec<OaPart>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OaPart {
    Text { text: String },
    ImageUrl { image_url: OaImageUrl },
}

#[derive(Serialize)]
struct OaImageUrl {
    /// `data:<mime>;base64,<bytes>`.
    url: String,
}

/// A user message's content: its text, then each image as a data URL (an image whose bytes were not
/// read is named instead).
fn user_content(m: &ContextMessage) -> OaContent {
    if m.images.is_empty() {
        return OaContent::Text(m.content.clone());
    }
    let mut text = m.content.clone();
    let mut parts = Vec::new();
    for image in &m.images {
        if image.data.is_empty() {
            text.push_str(&format!("\n[image: {} — not available]", image.attachment.display_name()));
        } else {
            let url = format!("data:{};base64,{}", image.attachment.mime, super::base64(&image.data));
            parts.push(OaPart::ImageUrl { image_url: OaImageUrl { url } });
        }
    }
    parts.insert(0, OaPart::Text { text });
    OaContent::Parts(parts)
}

#[derive(Serialize)]
struct OaToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: OaFunction<'a>,
    /// Provider data on the call, sent back exactly (Gemini's `{"google": {"thought_signature": …}}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    extra_content: Option<&'a Value>,
}

#[derive(Serialize)]
struct OaFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

pub(super) fn body(cfg: &ModelSettings, messages: &[ContextMessage], tools: &[Value]) -> String {
    let mut out: Vec<OaMessage> = Vec::with_capacity(messages.len());
    let mut leading_system = true;
    let completion_limit = takes_max_completion_tokens(&cfg.model);
    for m in messages {
        let plain = |role, content: String| OaMessage {
            role,
            content: OaContent::Text(content),
            tool_calls: Vec::new(),
            tool_call_id: None,
            reasoning_content: None,
        };
        match m.role {
            Role::System if leading_system => match out.last_mut().map(|first| &mut first.content) {
                Some(OaContent::Text(first)) => {
                    first.push_str("\n\n");
                    first.push_str(&m.content);
                }
                _ => out.push(plain("system", m.content.clone())),
            },
            Role::System => out.push(plain("system", m.content.clone())),
            Role::User => out.push(OaMessage { content: user_content(m), ..plain("user", String::new()) }),
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
                        extra_content: m.reasoning.as_ref().and_then(|r| r.call_extra(&c.id)),
                    })
                    .collect(),
                reasoning_content: m
                    .reasoning
                    .as_ref()
                    .and_then(|r| r.reasoning_content.as_deref())
                    .filter(|_| !m.tool_calls.is_empty()),
                ..plain("assistant", m.content.clone())
            }),
            Role::Tool => match &m.tool_call_id {
                Some(id) => out.push(OaMessage { tool_call_id: Some(id), ..plain("tool", m.content.clone()) }),
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
        max_tokens: cfg.max_output_tokens.filter(|_| !completion_limit),
        max_completion_tokens: cfg.max_output_tokens.filter(|_| completion_limit),
        tools,
    };
    serde_json::to_string(&request).unwrap_or_default()
}

/// Whether `model` is one of OpenAI's reasoning models, which refuse `max_tokens` and take
/// `max_completion_tokens`: the name, after any `provider/` prefix and in any case, is `o` and digits
/// (`o1`, `o3`, `o4-mini`, `o1-preview-2024-09-12` …) or starts with `gpt-5` (`gpt-5`, `gpt-5-mini`,
/// `gpt-5.1` …). Every other name keeps `max_tokens`, which every OpenAI-compatible server knows.
pub(super) fn takes_max_completion_tokens(model: &str) -> bool {
    let name = model.trim().rsplit('/').next().unwrap_or("").to_ascii_lowercase();
    let end_of_family = |rest: &str| rest.is_empty() || rest.starts_with(['-', '.', ':', '_']);
    if let Some(rest) = name.strip_prefix("gpt-5") {
        return end_of_family(rest);
    }
    match name.strip_prefix('o') {
        Some(rest) => {
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            digits > 0 && end_of_family(&rest[digits..])
        }
        None => false,
    }
}

impl StreamDecoder {
    pub(super) fn feed_openai(&mut self, ev: &SseEvent, out: &mut Vec<StreamEvent>) {
        let data = ev.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return;
        }
        if ev.event.as_deref() == Some("error") {
            return self.provider_error(&ev.data, error_text_detail(data), out);
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
                for (field, text) in [("reasoning_content", delta.reasoning_content), ("reasoning", delta.reasoning)] {
                    // Some servers send both with the same text: the first one that carries text counts.
                    if let Some(Value::String(text)) = text.filter(|t| t.as_str().is_some_and(|t| !t.is_empty())) {
                        if self.reasoning_field.get_or_insert_with(|| field.to_string()) == field {
                            self.reasoning(text, out);
                        }
                    }
                }
                match delta.content {
                    Some(Value::String(text)) => self.text(text, out),
                    Some(Value::Array(parts)) => self.content_parts(parts, out),
                    Some(Value::Null) | None => {}
                    Some(other) => {
                        let error = format!("`content` is neither text nor a list of parts: {other}");
                        return self.malformed(&ev.data, &error);
                    }
                }
                if let Some(Value::String(text)) = delta.refusal.filter(|t| t.as_str().is_some_and(|t| !t.is_empty())) {
                    self.refusal = true;
                    self.text(text, out);
                }
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

    /// Mistral's content parts: `{"type":"text","text":…}` is text, `{"type":"thinking","thinking":…}`
    /// (text, or a list of text parts) is reasoning; other parts (references, images) carry no text.
    fn content_parts(&mut self, parts: Vec<Value>, out: &mut Vec<StreamEvent>) {
        let text_of = |part: &Value| part.get("text").and_then(Value::as_str).unwrap_or("").to_string();
        for part in parts {
            match part.get("type").and_then(Value::as_str) {
                Some("text") => self.text(text_of(&part), out),
                Some("thinking") => match part.get("thinking") {
                    Some(Value::String(text)) => self.reasoning(text.clone(), out),
                    Some(Value::Array(inner)) => {
                        for piece in inner.iter().filter(|p| p.get("type").and_then(Value::as_str) == Some("text")) {
                            self.reasoning(text_of(piece), out);
                        }
                    }
                    _ => {}
                },
                _ => {}
            }
        }
    }

    fn openai_call(&mut self, delta: OaToolCallDelta, out: &mut Vec<StreamEvent>) {
        let function = delta.function.unwrap_or_default();
        let extra = delta.extra_content.filter(|v| !v.is_null());
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
        if let Some(extra) = extra {
            self.calls[slot].extra_content = Some(extra);
        }
        let fragment = match function.arguments {
            Some(Value::String(s)) => s,
            Some(Value::Null) | None => String::new(),
            // Some servers send the arguments as an object in one piece.
            Some(other) => other.to_string(),
        };
        self.arguments(slot, fragment, out);
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
    content: Option<Value>,
    // Read leniently (a relay may send something else than text): only text counts.
    #[serde(default)]
    reasoning_content: Option<Value>,
    #[serde(default)]
    reasoning: Option<Value>,
    #[serde(default)]
    refusal: Option<Value>,
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
    /// Provider data on the call (Gemini's thought signature), kept to be sent back exactly.
    #[serde(default)]
    extra_content: Option<Value>,
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
