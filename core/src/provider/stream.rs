//! Decoding a streamed reply, one SSE event at a time, into [`StreamEvent`]s and the whole
//! [`AssistantMessage`] (or a [`StreamFailure`] that keeps the partial reply). The formats' own event
//! types live in `openai.rs` and `anthropic.rs`.

use std::fmt;

use serde_json::Value;

use super::ProviderKind;
use crate::sse::SseEvent;
use crate::ToolCall;

/// Tokens the provider says the request and the reply used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenUsage {
    /// The whole prompt, cached parts included (Anthropic's `input_tokens` + cache reads and writes).
    pub prompt_tokens: i64,
    /// The reply's tokens (OpenAI's `completion_tokens`, Anthropic's `output_tokens`).
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
    /// Token usage the provider reported; `None` when it reported none.
    pub usage: Option<TokenUsage>,
    /// The model refused: OpenAI streamed `delta.refusal` (that text is the `content`) or Anthropic
    /// stopped with `stop_reason: "refusal"`. The caller shows the reply as a refusal.
    pub refusal: bool,
    /// The model's reasoning ("thinking") text, in order; never part of `content`.
    pub reasoning: String,
    /// The OpenAI-compatible delta field that carried `reasoning`: `reasoning_content` (DeepSeek,
    /// Moonshot, vLLM) or `reasoning` (Groq, OpenRouter, Ollama); `None` for none, for Mistral's
    /// thinking parts and for Anthropic. DeepSeek-style endpoints want `reasoning_content` sent back.
    pub reasoning_field: Option<String>,
    /// Anthropic's `thinking` blocks (text and `signature`) and `redacted_thinking` blocks (opaque
    /// `data`), in order, exactly as streamed: they go back unchanged before the `tool_use` blocks.
    pub reasoning_blocks: Vec<Value>,
    /// Provider data on tool calls, by call id, exactly as streamed (Gemini's OpenAI-compatible
    /// endpoint puts each call's `thought_signature` in `extra_content`; it must come back with the call).
    pub call_extras: Vec<(String, Value)>,
}

/// What one SSE event meant, for the UI to show as it streams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// A piece of the reply's text, in order (a refusal's text too).
    TextDelta(String),
    /// A piece of the model's reasoning, in order; kept apart from the text.
    ReasoningDelta(String),
    /// A tool call began; `index` is its position in [`AssistantMessage::tool_calls`].
    ToolCallStarted {
        /// Position of the call in [`AssistantMessage::tool_calls`].
        index: usize,
        /// The call's id (`call_{index}` when the provider sent none).
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of a tool call's raw arguments text, to append.
    ToolCallArgumentsDelta {
        /// The call's position in [`AssistantMessage::tool_calls`].
        index: usize,
        /// The next piece of the arguments (JSON text, usually incomplete).
        fragment: String,
    },
    /// Totals so far (not increments): the last one wins.
    Usage {
        /// Prompt tokens so far, as [`TokenUsage::prompt_tokens`] (0 if not yet reported).
        prompt_tokens: i64,
        /// Reply tokens so far (0 if not yet reported).
        completion_tokens: i64,
    },
    /// The provider said why the reply ended (usage may still follow).
    Finished {
        /// The provider's own reason, as [`AssistantMessage::finish_reason`].
        reason: String,
    },
    /// The provider reported an error inside the stream; the stream is over.
    ProviderError {
        /// What happened and what to do, for the user.
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
    /// Whether the stream was cut, malformed or carried the provider's error.
    pub kind: FailureKind,
    /// The reply as far as it got (arguments kept raw).
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
pub(super) struct CallState {
    /// OpenAI's `index` for this call (`None` when the server sent none).
    pub(super) provider_index: Option<i64>,
    pub(super) id: Option<String>,
    pub(super) name: String,
    pub(super) arguments: String,
    /// Anthropic's `input` from `content_block_start`, used when no `input_json_delta` follows.
    pub(super) start_input: Option<String>,
    /// Provider data on the call (OpenAI-compatible `extra_content`: Gemini's thought signature).
    pub(super) extra_content: Option<Value>,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Block {
    Text,
    Tool(usize),
    /// A `thinking` block: its position in `reasoning_blocks`.
    Thinking(usize),
    Other,
}

/// Decodes one streamed reply, one SSE event at a time. See [`StreamDecoder::finish`] for what counts as
/// complete.
#[derive(Debug, Clone)]
pub struct StreamDecoder {
    kind: ProviderKind,
    content: String,
    reasoning: String,
    pub(super) reasoning_field: Option<String>,
    pub(super) reasoning_blocks: Vec<Value>,
    pub(super) refusal: bool,
    pub(super) calls: Vec<CallState>,
    /// Anthropic content-block index → what the block is.
    pub(super) blocks: Vec<(u64, Block)>,
    pub(super) finish_reason: Option<String>,
    pub(super) prompt_tokens: Option<i64>,
    pub(super) completion_tokens: Option<i64>,
    /// `[DONE]`, `message_stop` or an error event was seen: later events are ignored.
    pub(super) done: bool,
    /// Anthropic: a `message_start` was seen (a second one before `message_stop` is two replies spliced).
    pub(super) message_open: bool,
    failure: Option<(FailureKind, String, String)>,
    events: usize,
    last_data: String,
}

impl StreamDecoder {
    /// A decoder for a reply in `kind`'s format, with nothing read yet.
    pub fn new(kind: ProviderKind) -> StreamDecoder {
        StreamDecoder {
            kind,
            content: String::new(),
            reasoning: String::new(),
            reasoning_field: None,
            reasoning_blocks: Vec::new(),
            refusal: false,
            calls: Vec::new(),
            blocks: Vec::new(),
            finish_reason: None,
            prompt_tokens: None,
            completion_tokens: None,
            done: false,
            message_open: false,
            failure: None,
            events: 0,
            last_data: String::new(),
        }
    }

    /// Takes one SSE event; returns what it meant. Unknown event types and `ping`s give nothing. An
    /// `error` field (llama.cpp's server: `error: {"code":500,"message":…}`, no `data`) is the
    /// provider's error in either format.
    pub fn feed(&mut self, ev: &SseEvent) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        if self.done {
            return out;
        }
        if let Some((_, raw)) = ev.fields.iter().find(|(name, _)| name == "error") {
            self.events += 1;
            self.last_data.clone_from(raw);
            self.provider_error(raw, error_text_detail(raw), &mut out);
            return out;
        }
        if ev.data.trim().is_empty() {
            return out;
        }
        self.events += 1;
        self.last_data.clone_from(&ev.data);
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
            refusal: self.refusal || self.finish_reason.as_deref() == Some("refusal"),
            reasoning: self.reasoning.clone(),
            reasoning_field: self.reasoning_field.clone(),
            reasoning_blocks: self.reasoning_blocks.clone(),
            call_extras: self
                .calls
                .iter()
                .enumerate()
                .filter_map(|(i, c)| {
                    let id = c.id.clone().unwrap_or_else(|| format!("call_{i}"));
                    Some((id, c.extra_content.clone()?))
                })
                .collect(),
            usage: (self.prompt_tokens.is_some() || self.completion_tokens.is_some()).then(|| TokenUsage {
                prompt_tokens: self.prompt_tokens.unwrap_or(0),
                completion_tokens: self.completion_tokens.unwrap_or(0),
            }),
        }
    }

    /// The whole reply, or why there is none. Complete means: no error event and no malformed data, the
    /// provider's end marker or finish reason was seen (OpenAI `[DONE]` or a `finish_reason`; Anthropic
    /// `message_stop` or a `stop_reason`), and every tool call's arguments are valid JSON (empty arguments
    /// count as `{}`). An end marker after nothing at all (no text, no tool call, no finish reason) is not
    /// a reply but a failure the server did not report in a form read here (`Provider`).
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
        if self.finish_reason.is_none() && message.content.is_empty() && message.tool_calls.is_empty() {
            let text = "The model endpoint ended the reply without any text, tool call or reason for stopping, which \
                        usually means it failed on its side without saying why. Nothing was kept as the answer; \
                        retry, and check the server's log if it keeps happening."
                .to_string();
            return fail(message, FailureKind::Provider, self.last_data, text);
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

    pub(super) fn malformed(&mut self, raw: &str, error: &dyn fmt::Display) {
        if self.failure.is_none() {
            let message = format!(
                "The model endpoint sent data that is not valid {} streaming JSON ({error}). The partial reply and the \
                 raw data are saved; retry, or check the endpoint kind in Settings.",
                self.kind.label()
            );
            self.failure = Some((FailureKind::Malformed, raw.to_string(), message));
        }
    }

    /// Ends the reply with `kind` (the first failure wins): later events are ignored.
    pub(super) fn fail_and_stop(&mut self, kind: FailureKind, raw: &str, message: String) {
        if self.failure.is_none() {
            self.failure = Some((kind, raw.to_string(), message));
        }
        self.done = true;
    }

    pub(super) fn provider_error(&mut self, raw: &str, detail: String, out: &mut Vec<StreamEvent>) {
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

    pub(super) fn usage_event(&self) -> StreamEvent {
        StreamEvent::Usage {
            prompt_tokens: self.prompt_tokens.unwrap_or(0),
            completion_tokens: self.completion_tokens.unwrap_or(0),
        }
    }

    pub(super) fn text(&mut self, text: String, out: &mut Vec<StreamEvent>) {
        if !text.is_empty() {
            self.content.push_str(&text);
            out.push(StreamEvent::TextDelta(text));
        }
    }

    pub(super) fn reasoning(&mut self, text: String, out: &mut Vec<StreamEvent>) {
        if !text.is_empty() {
            self.reasoning.push_str(&text);
            out.push(StreamEvent::ReasoningDelta(text));
        }
    }

    pub(super) fn arguments(&mut self, slot: usize, fragment: String, out: &mut Vec<StreamEvent>) {
        if !fragment.is_empty() {
            self.calls[slot].arguments.push_str(&fragment);
            out.push(StreamEvent::ToolCallArgumentsDelta { index: slot, fragment });
        }
    }

    pub(super) fn start_call(&mut self, call: CallState, out: &mut Vec<StreamEvent>) -> usize {
        let index = self.calls.len();
        let id = call.id.clone().unwrap_or_else(|| format!("call_{index}"));
        out.push(StreamEvent::ToolCallStarted { index, id, name: call.name.clone() });
        self.calls.push(call);
        index
    }
}

/// The provider's message from an error object (`{"message": …, "type": …}`) or string.
pub(super) fn error_value_detail(error: &Value) -> String {
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

/// The provider's message from an error's raw text: JSON (an error object, or `{"error": …}` around
/// one) or plain text.
pub(super) fn error_text_detail(raw: &str) -> String {
    match serde_json::from_str::<Value>(raw) {
        Ok(value) => error_value_detail(value.get("error").filter(|e| !e.is_null()).unwrap_or(&value)),
        Err(_) if raw.trim().is_empty() => "unknown error".to_string(),
        Err(_) => raw.trim().to_string(),
    }
}

/// Decodes a whole recorded body: every event, then the outcome.
#[allow(clippy::result_large_err)] // see `StreamDecoder::finish`
pub fn decode_body(kind: ProviderKind, body: &[u8]) -> (Vec<StreamEvent>, Result<AssistantMessage, StreamFailure>) {
    let mut decoder = StreamDecoder::new(kind);
    let events = crate::sse::parse_all(body).iter().flat_map(|ev| decoder.feed(ev)).collect();
    (events, decoder.finish())
}
