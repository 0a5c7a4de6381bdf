//! Thinking models that call tools, as strict as the real ones about their reasoning coming back:
//! switched on by `[[tool-rounds]]` in the user's message, the model thinks before every reply and
//! calls `conversation_recall` (always offered) for three rounds, then answers.
//!
//! - **DeepSeek-style** (`/v1/chat/completions`, [`deepseek`]): reasoning streams as
//!   `delta.reasoning_content`. As DeepSeek's thinking mode does, a request whose assistant message
//!   with `tool_calls` in the current turn (after the last user message) lacks its `reasoning_content`
//!   is refused with HTTP 400 and DeepSeek's words.
//! - **Anthropic-style** (`/anthropic/v1/messages`, [`anthropic_messages`]): the Messages API's event
//!   stream with a `thinking` block (`thinking_delta`s, then a `signature_delta`) before the text or the
//!   `tool_use` block. As Claude does with extended thinking, a request whose assistant turn with
//!   `tool_use` in the tool loop in progress does not start with its thinking block is refused with
//!   HTTP 400 and Anthropic's words, and so is a thinking block whose signature does not match its text.

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::time::Duration;
use tokio_stream::wrappers::ReceiverStream;

/// The switch asking for a thinking model that calls tools for three rounds.
pub const TOOL_ROUNDS: &str = "[[tool-rounds]]";
/// How many rounds of tool calls the model makes before it answers.
pub const ROUNDS: usize = 3;

/// DeepSeek's answer to a thinking-mode request that dropped the reasoning of a tool-calling turn.
pub const DEEPSEEK_MISSING_REASONING: &str =
    "The `reasoning_content` in the thinking mode must be passed back to the API.";

/// What the model does next, given how many tool results the current turn already has.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The reasoning, streamed first.
    pub thinking: String,
    /// The answer's text (empty while calling tools).
    pub text: String,
    /// The tool call: (id, name, arguments), or `None` when answering.
    pub call: Option<(String, String, Value)>,
}

/// The step after `done` tool results.
pub fn step(done: usize) -> Step {
    if done < ROUNDS {
        let round = done + 1;
        Step {
            thinking: format!("Round {round}: I should look in the archive before answering."),
            text: String::new(),
            call: Some((
                format!("call_round_{round}"),
                "conversation_recall".into(),
                json!({"action": "search", "query": format!("round {round}"), "scope": "session"}),
            )),
        }
    } else {
        Step {
            thinking: format!("{ROUNDS} look-ups done; time to answer."),
            text: format!("I looked in the archive {ROUNDS} times; here is my answer."),
            call: None,
        }
    }
}

/// The signature the Anthropic-style model gives a thinking text (a stand-in for Anthropic's opaque,
/// verified signature: a different text has a different one).
pub fn signature(thinking: &str) -> String {
    let hash =
        thinking.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    format!("EqDemoSig{hash:016x}")
}

/// Whether the request's last user message asks for tool rounds.
pub fn wants_rounds(last_user_text: &str) -> bool {
    last_user_text.contains(TOOL_ROUNDS)
}

/// The DeepSeek-style reply to an OpenAI-format request: its SSE chunks, or DeepSeek's 400.
pub fn deepseek(messages: &[Value], model: &str) -> Result<Vec<String>, Box<Response>> {
    let since_user = messages.iter().rposition(|m| m["role"] == "user").map_or(0, |i| i + 1);
    let current = &messages[since_user..];
    let dropped = current
        .iter()
        .any(|m| m["role"] == "assistant" && has_items(&m["tool_calls"]) && !has_text(&m["reasoning_content"]));
    if dropped {
        let body = json!({"error": {"message": DEEPSEEK_MISSING_REASONING, "type": "invalid_request_error",
            "param": null, "code": "invalid_request_error"}});
        let refusal = (StatusCode::BAD_REQUEST, [("content-type", "application/json")], body.to_string());
        return Err(Box::new(refusal.into_response()));
    }
    let step = step(current.iter().filter(|m| m["role"] == "tool").count());
    let frame = |delta: Value, finish: Value| {
        let v = json!({"id": "chatcmpl-think", "object": "chat.completion.chunk", "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {v}\n\n")
    };
    let mut out = vec![frame(json!({"role": "assistant", "content": null, "reasoning_content": ""}), Value::Null)];
    out.extend(pieces(&step.thinking).map(|p| frame(json!({"reasoning_content": p, "content": null}), Value::Null)));
    out.extend(pieces(&step.text).map(|p| frame(json!({"content": p, "reasoning_content": null}), Value::Null)));
    let finish = match &step.call {
        Some((id, name, arguments)) => {
            out.push(frame(
                json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                    "function": {"name": name, "arguments": arguments.to_string()}}]}),
                Value::Null,
            ));
            "tool_calls"
        }
        None => "stop",
    };
    out.push(frame(json!({"content": ""}), json!(finish)));
    let usage = json!({"id": "chatcmpl-think", "object": "chat.completion.chunk", "model": model, "choices": [],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
                  "completion_tokens_details": {"reasoning_tokens": 12}}});
    out.push(format!("data: {usage}\n\n"));
    out.push("data: [DONE]\n\n".into());
    Ok(out)
}

/// `POST /anthropic/v1/messages`: the Anthropic-style thinking model.
pub async fn anthropic_messages(body: String) -> Response {
    let req: Value = match serde_json::from_str(&body) {
        Ok(v) => v,
        Err(e) => return anthropic_error(StatusCode::BAD_REQUEST, &format!("invalid JSON body: {e}")),
    };
    let messages = req["messages"].as_array().cloned().unwrap_or_default();
    let model = req["model"].as_str().unwrap_or("claude-demo").to_owned();
    match anthropic_stream(&messages, &model) {
        Ok(events) => stream(events),
        Err(message) => anthropic_error(StatusCode::BAD_REQUEST, &message),
    }
}

/// The Anthropic-style reply's SSE events, or the words of Anthropic's 400.
pub fn anthropic_stream(messages: &[Value], model: &str) -> Result<Vec<String>, String> {
    // The current turn starts after the last user message that is not only tool results.
    let is_results = |m: &Value| {
        m["content"].as_array().is_some_and(|c| !c.is_empty() && c.iter().all(|b| b["type"] == "tool_result"))
    };
    let since_user = messages.iter().rposition(|m| m["role"] == "user" && !is_results(m)).map_or(0, |i| i + 1);
    for (i, m) in messages.iter().enumerate().skip(since_user) {
        let blocks = m["content"].as_array().cloned().unwrap_or_default();
        if m["role"] != "assistant" || !blocks.iter().any(|b| b["type"] == "tool_use") {
            continue;
        }
        let first = &blocks[0];
        match first["type"].as_str() {
            Some("thinking") if first["signature"].as_str() == Some(&signature(first["thinking"].as_str().unwrap_or(""))) => {}
            Some("thinking") => return Err(format!("messages.{i}.content.0: Invalid `signature` in `thinking` block")),
            Some("redacted_thinking") => {}
            other => {
                return Err(format!(
                    "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{}`. When \
                     `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding \
                     the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks \
                     from previous turns. To avoid this requirement, disable `thinking`. Please consult our \
                     documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
                    other.unwrap_or("text")
                ))
            }
        }
    }
    let last_user = messages.iter().rev().find(|m| m["role"] == "user" && !is_results(m));
    let user_text = last_user.map(text_of).unwrap_or_default();
    let done = messages[since_user..]
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .count();
    let step = if wants_rounds(&user_text) {
        step(done)
    } else {
        let said = user_text.trim();
        Step {
            thinking: format!("The user said {said:?}; a short reply will do."),
            text: format!("Demo Claude here (no real AI behind me). You said: \"{said}\"."),
            call: None,
        }
    };
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let mut out = vec![event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_demo", "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 100, "output_tokens": 1}}}),
    )];
    out.push(event(
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
    ));
    for piece in pieces(&step.thinking) {
        out.push(event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": piece}}),
        ));
    }
    out.push(event(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "signature_delta", "signature": signature(&step.thinking)}}),
    ));
    out.push(event("content_block_stop", json!({"type": "content_block_stop", "index": 0})));
    let mut index = 1;
    if !step.text.is_empty() {
        out.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        ));
        for piece in pieces(&step.text) {
            out.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        out.push(event("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    let stop = match &step.call {
        Some((id, name, input)) => {
            let id = id.replace("call_", "toolu_");
            out.push(event(
                "content_block_start",
                json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
            ));
            let json = input.to_string();
            let (a, b) = json.split_at(json.len() / 2);
            for part in [a, b] {
                out.push(event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": part}}),
                ));
            }
            out.push(event("content_block_stop", json!({"type": "content_block_stop", "index": index})));
            "tool_use"
        }
        None => "end_turn",
    };
    out.push(event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 20}}),
    ));
    out.push(event("message_stop", json!({"type": "message_stop"})));
    Ok(out)
}

/// Text in pieces of a few words, as models stream it.
fn pieces(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut words = text.split_inclusive(' ');
    std::iter::from_fn(move || {
        let mut piece = String::new();
        for w in words.by_ref() {
            piece.push_str(w);
            if piece.len() > 12 {
                break;
            }
        }
        (!piece.is_empty()).then_some(piece)
    })
}

fn has_items(v: &Value) -> bool {
    v.as_array().is_some_and(|a| !a.is_empty())
}

fn has_text(v: &Value) -> bool {
    v.as_str().is_some_and(|s| !s.is_empty())
}

fn text_of(m: &Value) -> String {
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// Streams `events` a few milliseconds apart.
pub fn stream(events: Vec<String>) -> Response {
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<String, std::io::Error>>(16);
    tokio::spawn(async move {
        for e in events {
            if tx.send(Ok(e)).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from_stream(ReceiverStream::new(rx)))
        .expect("a valid response")
}

/// Anthropic's error body: `{"type": "error", "error": {"type": …, "message": …}, "request_id": …}`.
fn anthropic_error(status: StatusCode, message: &str) -> Response {
    let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": message},
        "request_id": "req_demo"});
    (status, [("content-type", "application/json")], body.to_string()).into_response()
}

#[cfg(test)]
mod tests;
