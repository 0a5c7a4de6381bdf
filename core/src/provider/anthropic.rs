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

use serde::Serialize;
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
        let event = match AnEvent::read(&value) {
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
            AnEvent::MessageStart { usage } => {
                self.message_open = true;
                if let Some(usage) = usage {
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
            AnEvent::MessageDelta { stop_reason, usage } => {
                if let Some(usage) = usage {
                    self.anthropic_usage(&usage);
                    out.push(self.usage_event());
                }
                if let Some(reason) = stop_reason.filter(|r| !r.is_empty()) {
                    self.finish_reason = Some(reason.clone());
                    out.push(StreamEvent::Finished { reason });
                }
            }
            AnEvent::MessageStop => self.done = true,
            AnEvent::Error { kind, message } => {
                let detail = match (kind.as_deref(), message.as_deref()) {
                    (Some(kind), Some(message)) => format!("{message} ({kind})"),
                    (None, Some(message)) => message.to_string(),
                    (Some(kind), None) => kind.to_string(),
                    (None, None) => "unknown error".to_string(),
                };
                self.provider_error(&ev.data, detail, out);
            }
            AnEvent::Other => {}
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

// The stream's events, read by hand from their JSON value (`AnEvent::read`): serde's internally tagged
// enums would buffer each event three times over and cost the storage worker's wasm about 30 KB. As
// serde would, a missing `type` or a missing or mistyped required field is an error, an unknown `type`
// is `Other`, and an optional field that is absent or null is `None`.

enum AnEvent {
    MessageStart {
        usage: Option<AnUsage>,
    },
    ContentBlockStart {
        index: u64,
        content_block: AnBlockStart,
    },
    ContentBlockDelta {
        index: u64,
        delta: AnDelta,
    },
    MessageDelta {
        stop_reason: Option<String>,
        usage: Option<AnUsage>,
    },
    MessageStop,
    Error {
        kind: Option<String>,
        message: Option<String>,
    },
    /// `content_block_stop`, `ping`, and kinds this version does not know.
    Other,
}

enum AnBlockStart {
    Text { text: String },
    ToolUse { id: String, name: String, input: Value },
    Thinking { thinking: String, signature: Option<String> },
    RedactedThinking { data: String },
    Other,
}

enum AnDelta {
    TextDelta { text: String },
    InputJsonDelta { partial_json: String },
    ThinkingDelta { thinking: String },
    SignatureDelta { signature: String },
    Other,
}

struct AnUsage {
    input_tokens: Option<i64>,
    output_tokens: Option<i64>,
    cache_creation_input_tokens: Option<i64>,
    cache_read_input_tokens: Option<i64>,
}

/// A JSON object's fields, read the way the event types declare them.
struct Fields<'a>(&'a Value);

impl Fields<'_> {
    /// The field, `None` when absent or null.
    fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    fn object(&self, key: &str) -> Result<Fields<'_>, String> {
        match self.get(key) {
            Some(v) if v.is_object() => Ok(Fields(v)),
            Some(_) => Err(format!("`{key}` is not an object")),
            None => Err(format!("missing field `{key}`")),
        }
    }

    fn string(&self, key: &str) -> Result<String, String> {
        self.optional_string(key)?.ok_or_else(|| format!("missing field `{key}`"))
    }

    fn optional_string(&self, key: &str) -> Result<Option<String>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("`{key}` is not a string")),
        }
    }

    fn index(&self) -> Result<u64, String> {
        match self.get("index") {
            None => Err("missing field `index`".to_owned()),
            Some(v) => v.as_u64().ok_or_else(|| "`index` is not an integer".to_owned()),
        }
    }

    fn usage(&self) -> Result<Option<AnUsage>, String> {
        let Some(usage) = self.get("usage") else { return Ok(None) };
        let u = Fields(usage);
        let number = |key: &str| match u.get(key) {
            None => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| format!("`usage.{key}` is not an integer")),
        };
        Ok(Some(AnUsage {
            input_tokens: number("input_tokens")?,
            output_tokens: number("output_tokens")?,
            cache_creation_input_tokens: number("cache_creation_input_tokens")?,
            cache_read_input_tokens: number("cache_read_input_tokens")?,
        }))
    }

    fn kind(&self) -> Result<&str, String> {
        self.get("type").and_then(Value::as_str).ok_or_else(|| "missing field `type`".to_owned())
    }
}

impl AnEvent {
    fn read(event: &Value) -> Result<AnEvent, String> {
        let f = Fields(event);
        Ok(match f.kind()? {
            "message_start" => AnEvent::MessageStart { usage: f.object("message")?.usage()? },
            "content_block_start" => AnEvent::ContentBlockStart {
                index: f.index()?,
                content_block: AnBlockStart::read(f.object("content_block")?)?,
            },
            "content_block_delta" => {
                AnEvent::ContentBlockDelta { index: f.index()?, delta: AnDelta::read(f.object("delta")?)? }
            }
            "message_delta" => AnEvent::MessageDelta {
                stop_reason: match f.get("delta") {
                    Some(_) => f.object("delta")?.optional_string("stop_reason")?,
                    None => None,
                },
                usage: f.usage()?,
            },
            "message_stop" => AnEvent::MessageStop,
            "error" => {
                let error = f.object("error")?;
                AnEvent::Error { kind: error.optional_string("type")?, message: error.optional_string("message")? }
            }
            _ => AnEvent::Other,
        })
    }
}

impl AnBlockStart {
    fn read(f: Fields<'_>) -> Result<AnBlockStart, String> {
        Ok(match f.kind()? {
            "text" => AnBlockStart::Text { text: f.optional_string("text")?.unwrap_or_default() },
            "tool_use" => AnBlockStart::ToolUse {
                id: f.string("id")?,
                name: f.string("name")?,
                input: f.get("input").cloned().unwrap_or(Value::Null),
            },
            "thinking" => AnBlockStart::Thinking {
                thinking: f.optional_string("thinking")?.unwrap_or_default(),
                signature: f.optional_string("signature")?,
            },
            "redacted_thinking" => AnBlockStart::RedactedThinking { data: f.string("data")? },
            _ => AnBlockStart::Other,
        })
    }
}

impl AnDelta {
    fn read(f: Fields<'_>) -> Result<AnDelta, String> {
        Ok(match f.kind()? {
            "text_delta" => AnDelta::TextDelta { text: f.string("text")? },
            "input_json_delta" => AnDelta::InputJsonDelta { partial_json: f.string("partial_json")? },
            "thinking_delta" => AnDelta::ThinkingDelta { thinking: f.string("thinking")? },
            "signature_delta" => AnDelta::SignatureDelta { signature: f.string("signature")? },
            _ => AnDelta::Other,
        })
    }
}
