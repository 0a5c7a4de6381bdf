//! The Anthropic Messages format: the request body, and the stream events [`StreamDecoder`] reads.
//!
//! Anthropic needs more than a renaming; [`body`] makes any message list valid for it:
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
//! - An assistant message with tool calls starts with its reply's `thinking` / `redacted_thinking`
//!   blocks, unchanged (signatures included), as extended thinking with tools requires.
//! - Empty or blank text blocks are left out; the list starts with a user message (a placeholder is added

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::stream::{Block, CallState, StreamDecoder, StreamEvent};
use super::FailureKind;
use super::{unlinked_result_text, ModelSettings, DEFAULT_ANTHROPIC_MAX_TOKENS};
use crate::message::ContextMessage;
use crate::sse::SseEvent;
use crate::Role;

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
    /// An image of a user message, its bytes in base64.
    Image {
        source: AnImageSource,
    },
    /// A block sent back exactly as it was received (`thinking`, `redacted_thinking`).
    #[serde(untagged)]
    Verbatim(Value),
}

#[derive(Serialize, Debug)]
struct AnImageSource {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: String,
    data: String,
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
                // Images first, then the text (Anthropic's advice); an image not read is named instead.
                let mut said = m.content.clone();
                for image in &m.images {
                    if image.data.is_empty() {
                        said.push_str(&format!("\n[image: {} — not available]", image.attachment.display_name()));
                        continue;
                    }
                    let source = AnImageSource {
                        kind: "base64",
                        media_type: image.attachment.mime.clone(),
                        data: super::base64(&image.data),
                    };
                    push_block(&mut out, "user", AnBlock::Image { source });
                }
                if let Some(block) = text(&said) {
                    push_block(&mut out, "user", block);
                }
            }
            Role::Assistant => {
                // Thinking blocks lead the assistant message they belong to (never merged into the middle
                // of another one).
                let starts_message = out.last().is_none_or(|last| last.role != "assistant");
                if starts_message && !m.tool_calls.is_empty() {
                    for block in m.reasoning.iter().flat_map(|r| &r.blocks) {
                        push_block(&mut out, "assistant", AnBlock::Verbatim(block.clone()));
                    }
                }
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

pub(super) fn body(cfg: &ModelSettings, messages: &[ContextMessage], tools: &[Value]) -> String {
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

impl StreamDecoder {
    pub(super) fn feed_anthropic(&mut self, ev: &SseEvent, out: &mut Vec<StreamEvent>) {
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
            AnEvent::MessageStart { .. } if self.message_open => {
                // Two messages spliced into one stream (a proxy replaying or joining responses): merging them
                // would invent a reply the model never wrote, with both messages' tool calls and thinking.
                let message = "The model endpoint started a second reply before the first one ended (two \
                               `message_start` events in one stream, as a proxy that joins responses sends). \
                               Nothing of the second was kept; the partial reply is saved; retry, or check the \
                               proxy between Cowork and the provider."
                    .to_string();
                self.fail_and_stop(FailureKind::Malformed, &ev.data, message);
            }
            AnEvent::MessageStart { message } => {
                self.message_open = true;
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
                AnBlockStart::Thinking { thinking, signature } => {
                    let mut block = json!({"type": "thinking", "thinking": ""});
                    if let Some(signature) = signature {
                        block["signature"] = Value::String(signature);
                    }
                    self.reasoning_blocks.push(block);
                    self.blocks.push((index, Block::Thinking(self.reasoning_blocks.len() - 1)));
                    self.thinking(self.reasoning_blocks.len() - 1, thinking, out);
                }
                AnBlockStart::RedactedThinking { data } => {
                    self.reasoning_blocks.push(json!({"type": "redacted_thinking", "data": data}));
                    self.blocks.push((index, Block::Other));
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
                    (Some(Block::Thinking(at)), AnDelta::ThinkingDelta { thinking }) => {
                        self.thinking(at, thinking, out)
                    }
                    (Some(Block::Thinking(at)), AnDelta::SignatureDelta { signature }) => {
                        append_field(&mut self.reasoning_blocks[at], "signature", &signature)
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

    /// More thinking text for block `at` of `reasoning_blocks` (and for the reasoning text).
    fn thinking(&mut self, at: usize, text: String, out: &mut Vec<StreamEvent>) {
        if text.is_empty() {
            return;
        }
        append_field(&mut self.reasoning_blocks[at], "thinking", &text);
        self.reasoning(text, out);
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

/// Appends `text` to the string field `key` of a block object (creating it if missing).
fn append_field(block: &mut Value, key: &str, text: &str) {
    match block.get_mut(key) {
        Some(Value::String(so_far)) => so_far.push_str(text),
        _ => block[key] = Value::String(text.to_string()),
    }
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
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
    },
    RedactedThinking {
        data: String,
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
    ThinkingDelta {
        thinking: String,
    },
    SignatureDelta {
        signature: String,
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
