//! The scripted "demo model": an OpenAI-compatible `/v1/chat/completions` that streams deterministic
//! answers, calls tools when the conversation asks for them, and fails on request for tests.
//!
//! Rules, applied to the last message of the request:
//! - a tool result → a short answer quoting what the tool returned (a result of several lines as a
//!   block of text, so its lines stay lines);
//! - a user message that refers back ("earlier", "we discussed", "remember", "as before", "recall") →
//!   a `conversation_recall` search for its key words, over the session (over the workspace when the
//!   message says "workspace");
//! - "delegate …" → a `delegate_task` call with the rest of the message as the goal ("delegate in
//!   background: …" asks for `wait: false`);
//! - "write file PATH: CONTENT" / "read file PATH" → `write_file` / `read_file`, when the request
//!   offers those tools;
//! - anything else → a friendly echo, streamed word by word; asked as any model but `demo` (e.g.
//!   `demo-large`), the echo names the model (`Demo model "demo-large" here …`), so a test sees which
//!   model answered.
//!
//! `GET /v1/models` lists [`MODELS`] as OpenAI does (`{"object": "list", "data": [{"id": …}]}`).
//!
//! Faults, switched per request by a `[[fault:NAME]]` token in the last user message or an
//! `x-cowork-fault: NAME` header: `401`, `429` (with `Retry-After: 1`), `500`, `cut` (the stream stops
//! half-way without `[DONE]`), `slow` (200 ms between chunks), `badjson` (a malformed chunk), and
//! `429xN` / `500xN` (fail the first N attempts of the same request, then succeed), `cutxN` (cut the
//! first N replies to the same user message, then stream whole), `llamacpp` (llama.cpp's mid-stream
//! failure: some text, then an SSE `error:` field with the server's error object, then `data: [DONE]`)
//! and `llamacppxN` (that, for the first N replies to the same user message).
//!
//! Reply shapes, switched by a token in the last user message (which is not echoed):
//! `[[reasoning]]` (the reply streams `delta.reasoning_content` first, "Let me think about …", then
//! its text), `[[refusal]]` (the reply streams `delta.refusal`, "I can't help with that.", and no
//! content) and `[[bench:markdown]]` (the benchmark's 12 KB Markdown reply in 1,500 deltas, 4 ms
//! apart: [`crate::bench_reply`]), `[[digest]]` (the characters after it counted and checksummed,
//! [`digest_of`]: a large message checked without being echoed), `[[code:LANG]]` (the rest of the message, as written, sent back as a
//! fenced code block in LANG between two sentences: `[[code:python]] def f(): …`). `[[tool-rounds]]` makes it a DeepSeek-style thinking model that
//! calls tools for three rounds and refuses a request that drops their reasoning (`thinking.rs`,
//! which also holds the Anthropic-style model at `/anthropic/v1/messages`). `[[mcp:server/tool {…}]]`
//! calls that MCP server's offered tool with those arguments (`model/mcp.rs`).

pub mod attachments;
pub mod mcp;
pub mod thinking;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_stream::wrappers::ReceiverStream;

/// Shared state: attempt counters for the `…xN` faults.
#[derive(Default)]
pub struct ModelState {
    attempts: Mutex<HashMap<String, u32>>,
}

/// What the model decided to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Answer with this text, calling no tool.
    Text(String),
    /// Think aloud (streamed as `delta.reasoning_content`), then answer with the text.
    Reasoned {
        /// The reasoning, streamed before the text.
        reasoning: String,
        /// The answer.
        text: String,
    },
    /// Decline: this text streamed as `delta.refusal`, with no content.
    Refusal(String),
    /// Call one tool.
    Call {
        /// The tool to call (one of those offered).
        name: String,
        /// Its arguments, a JSON object.
        arguments: Value,
    },
}

/// The models `GET /v1/models` lists; any other name is answered like `demo`, without its name.
pub const MODELS: [&str; 2] = ["demo", "demo-large"];

/// `GET /v1/models`: [`MODELS`] in OpenAI's list shape.
pub async fn list_models() -> axum::Json<Value> {
    let data: Vec<Value> =
        MODELS.iter().map(|id| json!({"id": id, "object": "model", "created": 0, "owned_by": "cowork-demo"})).collect();
    axum::Json(json!({"object": "list", "data": data}))
}

/// Decides the answer to `messages` offering `tools` (names), as the `demo` model. Pure, so it is
/// tested directly.
pub fn plan(messages: &[Value], tools: &[String]) -> Plan {
    plan_as("demo", messages, tools)
}

/// Decides the answer as `model`: [`plan`], whose echo names the model when it is not `demo`.
///
/// A request that ends with the assistant's own words (a prefill: an interrupted reply to go on from)
/// is continued the way Anthropic and prefill-capable OpenAI-compatible servers do: when the answer to
/// the message before starts with those words, only the rest is streamed.
pub fn plan_as(model: &str, messages: &[Value], tools: &[String]) -> Plan {
    let prefill = messages.last().filter(|m| m["role"] == "assistant" && m["tool_calls"].is_null()).map(content_text);
    let answer = match plan_answer(messages, tools) {
        Plan::Text(text) if model != "demo" && text.starts_with(ECHO_START) => {
            Plan::Text(text.replacen(ECHO_START, &format!("Demo model \"{model}\" here"), 1))
        }
        answer => answer,
    };
    match (answer, prefill) {
        (Plan::Text(text), Some(p)) if !p.is_empty() && text.starts_with(&p) => Plan::Text(text[p.len()..].to_owned()),
        (answer, _) => answer,
    }
}

fn plan_answer(messages: &[Value], tools: &[String]) -> Plan {
    // A request that ends with the assistant's own (interrupted) words asks to continue that reply:
    // answer the message before it.
    let Some(last) = messages.iter().rev().find(|m| m["role"] != "assistant").or(messages.last()) else {
        return Plan::Text("Hello! Ask me anything.".into());
    };
    let text = content_text(last);
    if last["role"] == "tool" {
        // Tool messages carry no name in the OpenAI schema: find the call they answer.
        let id = &last["tool_call_id"];
        let called = messages.iter().rev().filter_map(|m| m["tool_calls"].as_array()).flatten();
        let name = called
            .filter(|c| !id.is_null() && c["id"] == *id)
            .find_map(|c| c["function"]["name"].as_str())
            .or(last["name"].as_str())
            .unwrap_or("the tool");
        if let Some(answer) = mcp::answer(name, &text) {
            return Plan::Text(answer);
        }
        return Plan::Text(quote_result(name, &text));
    }
    let lower = text.to_lowercase();
    let clean = strip_faults(&text);
    if last["role"] == "user" && text.contains(REFUSAL) {
        return Plan::Refusal("I can't help with that.".into());
    }
    if let Some(call) = mcp::call(&text, tools).filter(|_| last["role"] == "user") {
        return call;
    }
    if let Some((_, rest)) = text.split_once(DIGEST).filter(|_| last["role"] == "user") {
        return Plan::Text(digest_of(rest));
    }
    if let Some((language, code)) = code_switch(&text).filter(|_| last["role"] == "user") {
        return Plan::Text(format!(
            "Here it is as {language}:\n\n```{language}\n{code}\n```\n\nThat is the whole block."
        ));
    }
    if last["role"] == "user" && text.contains(REASONING) {
        let text = echo(&clean);
        let reasoning = format!("Let me think about {}. The user wants a short answer.", clean.trim());
        return Plan::Reasoned { reasoning, text };
    }
    if last["role"] == "user" {
        if let Some(received) = attachments::describe(last) {
            let said = attachments::words_before_files(&clean);
            return Plan::Text(format!("{received} You said: \"{said}\". (Demo model: nothing real looked at them.)"));
        }
    }
    let has = |t: &str| tools.iter().any(|x| x == t);
    if let Some(goal) = after_word(&clean, "delegate") {
        if has("delegate_task") {
            // "delegate in background: …" asks for wait: false.
            let (goal, wait) = match goal.strip_prefix("in background") {
                Some(rest) => (rest.trim_start_matches([':', ' ']).to_owned(), false),
                None => (goal, true),
            };
            return Plan::Call { name: "delegate_task".into(), arguments: json!({"goal": goal, "wait": wait}) };
        }
    }
    if let Some(rest) = after_phrase(&clean, "write file") {
        if has("write_file") {
            let (path, content) = rest.split_once(':').unwrap_or((rest.as_str(), ""));
            return Plan::Call {
                name: "write_file".into(),
                arguments: json!({"path": path.trim(), "content": content.trim()}),
            };
        }
    }
    if let Some(rest) = after_phrase(&clean, "read file") {
        if has("read_file") {
            return Plan::Call { name: "read_file".into(), arguments: json!({"path": rest.trim()}) };
        }
    }
    const BACK: [&str; 6] = ["earlier", "we discussed", "remember", "as before", "recall", "last time"];
    if has("conversation_recall") && BACK.iter().any(|p| lower.contains(p)) {
        let scope = if lower.contains("workspace") { "workspace" } else { "session" };
        return Plan::Call {
            name: "conversation_recall".into(),
            arguments: json!({"action": "search", "query": key_words(&clean), "scope": scope}),
        };
    }
    Plan::Text(echo(&clean))
}

/// The answer quoting a tool's result: a one-line result inline, a longer one (a delegated task's
/// checklist, a file) as a block of text that keeps its lines, up to about 600 characters.
fn quote_result(name: &str, text: &str) -> String {
    if !text.trim().contains('\n') {
        let excerpt: String = text.chars().take(300).collect();
        return format!("Here is what {name} returned: {excerpt}");
    }
    let mut excerpt = String::new();
    for line in text.trim().lines() {
        if !excerpt.is_empty() && excerpt.len() + line.len() > 600 {
            excerpt.push_str("…\n");
            break;
        }
        excerpt.push_str(line);
        excerpt.push('\n');
    }
    // A fence longer than any run of backticks in the text.
    let fence = "`".repeat(3.max(excerpt.split(|c| c != '`').map(str::len).max().unwrap_or(0) + 1));
    format!("Here is what {name} returned:\n\n{fence}text\n{excerpt}{fence}")
}

/// The switch asking for a code block: `[[code:LANG]]`.
const CODE: &str = "[[code:";

/// `[[code:LANG]]` in `text`: the language and the rest of the text (its code, switches removed, blank
/// lines around it trimmed).
fn code_switch(text: &str) -> Option<(String, String)> {
    let start = text.find(CODE)?;
    let len = text[start..].find("]]")?;
    let language = text[start + CODE.len()..start + len].trim().to_owned();
    let rest = format!("{}{}", &text[..start], &text[start + len + 2..]);
    let code = strip_faults(&rest);
    let code = code.trim_matches('\n').trim_start_matches(' ').trim_end();
    (!language.is_empty()).then(|| (language, code.to_owned()))
}

/// The switch asking for a reply that reasons first.
const REASONING: &str = "[[reasoning]]";
/// The switch asking for a refusal.
const REFUSAL: &str = "[[refusal]]";

/// The switch asking what arrived after it, as a count and a checksum (a large paste, sent whole).
const DIGEST: &str = "[[digest]]";

/// "Received N characters, FNV-1a 64 X": the characters of `text` and the FNV-1a (64-bit) of its
/// UTF-8 bytes, in lower-case hex, so a test can check that a message arrived verbatim without
/// having it echoed back.
pub fn digest_of(text: &str) -> String {
    let fnv = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    format!("Received {} characters, FNV-1a 64 {fnv:016x}.", text.chars().count())
}

/// How the echo starts (the model's name goes in after "Demo model").
const ECHO_START: &str = "Demo model here";

/// The friendly echo of the user's words.
fn echo(clean: &str) -> String {
    format!(
        "{ECHO_START} (no real AI behind me). You said: \"{}\". Point Settings at a real endpoint for real answers.",
        clean.trim()
    )
}

fn content_text(m: &Value) -> String {
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// The text without its switches (`[[fault:…]]`, `[[reasoning]]`, `[[refusal]]`).
fn strip_faults(text: &str) -> String {
    let mut out = text.replace(REASONING, "").replace(REFUSAL, "").replace(thinking::TOOL_ROUNDS, "");
    while let Some(start) = out.find("[[fault:") {
        match out[start..].find("]]") {
            Some(end) => out.replace_range(start..start + end + 2, ""),
            None => break,
        }
    }
    out
}

fn after_word(text: &str, word: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let i = lower.find(word)?;
    let rest = text[i + word.len()..]
        .trim_start_matches(|c: char| c.is_alphabetic())
        .trim_start_matches([':', ',', '-'])
        .trim();
    (!rest.is_empty()).then(|| rest.to_owned())
}

fn after_phrase(text: &str, phrase: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let i = lower.find(phrase)?;
    let rest = text[i + phrase.len()..].trim();
    (!rest.is_empty()).then(|| rest.to_owned())
}

/// The words worth searching for: longer words that are not back-reference filler.
fn key_words(text: &str) -> String {
    const STOP: [&str; 25] = [
        "workspace",
        "what",
        "did",
        "we",
        "decide",
        "about",
        "earlier",
        "discussed",
        "remember",
        "recall",
        "the",
        "that",
        "this",
        "before",
        "last",
        "time",
        "again",
        "was",
        "were",
        "which",
        "have",
        "with",
        "from",
        "there",
        "when",
    ];
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '/'))
        .filter(|w| w.len() > 2 && !STOP.contains(&w.to_lowercase().as_str()))
        .collect();
    if words.is_empty() {
        text.trim().to_owned()
    } else {
        words.join(" ")
    }
}

fn last_user_text(messages: &[Value]) -> String {
    messages.iter().rev().find(|m| m["role"] == "user").map(content_text).unwrap_or_default()
}

fn fault_of(headers: &HeaderMap, messages: &[Value]) -> Option<String> {
    if let Some(v) = headers.get("x-cowork-fault").and_then(|v| v.to_str().ok()) {
        return Some(v.to_owned());
    }
    let last_user = messages.iter().rev().find(|m| m["role"] == "user").map(content_text)?;
    let start = last_user.find("[[fault:")?;
    let rest = &last_user[start + 8..];
    Some(rest[..rest.find("]]")?].to_owned())
}

/// `POST /v1/chat/completions`.
pub async fn chat_completions(State(state): State<Arc<ModelState>>, headers: HeaderMap, body: String) -> Response {
    let req: Value = match serde_json::from_str(&body) {
        Ok(v) => v,
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("invalid JSON body: {e}")),
    };
    let messages = req["messages"].as_array().cloned().unwrap_or_default();
    let tools: Vec<String> = req["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["function"]["name"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    let model = req["model"].as_str().unwrap_or("demo").to_owned();
    if last_user_text(&messages).contains(crate::bench_reply::SWITCH) {
        return crate::bench_reply::response(&model);
    }
    if thinking::wants_rounds(&last_user_text(&messages)) {
        return match thinking::deepseek(&messages, &model) {
            Ok(chunks) => thinking::stream(chunks),
            Err(refused) => *refused,
        };
    }
    let mut fault = fault_of(&headers, &messages);
    if fault.as_deref() == Some("noimages") && body.contains("\"image_url\"") {
        // A text-only model, in OpenAI's words.
        return error(StatusCode::BAD_REQUEST, "Invalid content type. image_url is only supported by certain models.");
    }
    if let Some(f) = fault.clone() {
        let (kind, times) = match f.split_once('x') {
            Some((k, n)) => (k.to_owned(), n.parse::<u32>().unwrap_or(1)),
            None => (f.clone(), u32::MAX),
        };
        let per_message = kind == "cut" || kind == "llamacpp";
        if kind == "401" || kind == "429" || kind == "500" || per_message {
            // `cutxN` and `llamacppxN` count by the user's message (a retry or continuation is another
            // body), the others by body.
            let key = match kind.as_str() {
                "cut" | "llamacpp" => format!("{f}\n{}", last_user_text(&messages)),
                _ => format!("{f}\n{body}"),
            };
            let n = {
                let mut attempts = state.attempts.lock().expect("attempts lock");
                let n = attempts.entry(key).or_insert(0);
                *n += 1;
                *n
            };
            if per_message && n > times {
                fault = None;
            } else if n <= times && !per_message {
                return match kind.as_str() {
                    "401" => error(StatusCode::UNAUTHORIZED, "invalid API key"),
                    "429" => {
                        let mut r = error(StatusCode::TOO_MANY_REQUESTS, "rate limited, slow down");
                        r.headers_mut().insert("retry-after", HeaderValue::from_static("1"));
                        r
                    }
                    _ => error(StatusCode::INTERNAL_SERVER_ERROR, "the demo model failed on purpose"),
                };
            }
        }
    }
    let prompt_chars: usize = messages.iter().map(|m| content_text(m).chars().count() + 8).sum();
    let chunks = stream_chunks(&plan_as(&model, &messages, &tools), &model, prompt_chars, fault.as_deref());
    let delay = if fault.as_deref() == Some("slow") { 200 } else { 5 };
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<String, std::io::Error>>(16);
    tokio::spawn(async move {
        for chunk in chunks {
            if tx.send(Ok(chunk)).await.is_err() {
                return; // the client went away (Stop)
            }
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from_stream(ReceiverStream::new(rx)))
        .expect("a valid response")
}

/// The SSE chunks for `plan`, as an OpenAI-compatible server streams them.
pub fn stream_chunks(plan: &Plan, model: &str, prompt_chars: usize, fault: Option<&str>) -> Vec<String> {
    let id = "chatcmpl-demo";
    let frame = |delta: Value, finish: Value| {
        let v = json!({"id": id, "object": "chat.completion.chunk", "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {v}\n\n")
    };
    let mut out = vec![frame(json!({"role": "assistant", "content": ""}), Value::Null)];
    // Text in pieces of a few words, each piece in `field` of a delta.
    let mut words = |field: &str, text: &str| {
        let mut piece = String::new();
        for word in text.split_inclusive(' ') {
            piece.push_str(word);
            if piece.len() > 12 {
                out.push(frame(json!({ field: piece }), Value::Null));
                piece.clear();
            }
        }
        if !piece.is_empty() {
            out.push(frame(json!({ field: piece }), Value::Null));
        }
        text.chars().count()
    };
    let (completion_chars, finish) = match plan {
        Plan::Text(text) => (words("content", text), "stop"),
        Plan::Reasoned { reasoning, text } => (words("reasoning_content", reasoning) + words("content", text), "stop"),
        Plan::Refusal(text) => (words("refusal", text), "stop"),
        Plan::Call { name, arguments } => {
            let args = arguments.to_string();
            out.push(frame(
                json!({"tool_calls": [{"index": 0, "id": "call_demo_1", "type": "function",
                    "function": {"name": name, "arguments": ""}}]}),
                Value::Null,
            ));
            let chars: Vec<char> = args.chars().collect();
            for part in chars.chunks(10) {
                let fragment: String = part.iter().collect();
                out.push(frame(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]}),
                    Value::Null,
                ));
            }
            (args.chars().count(), "tool_calls")
        }
    };
    out.push(frame(json!({}), json!(finish)));
    let usage = json!({"id": id, "object": "chat.completion.chunk", "model": model, "choices": [],
        "usage": {"prompt_tokens": prompt_chars.div_ceil(4), "completion_tokens": completion_chars.div_ceil(4),
                  "total_tokens": prompt_chars.div_ceil(4) + completion_chars.div_ceil(4)}});
    out.push(format!("data: {usage}\n\n"));
    out.push("data: [DONE]\n\n".into());
    match fault {
        Some(f) if f == "cut" || f.starts_with("cutx") => out.truncate(out.len() / 2),
        Some("badjson") => out.insert(out.len() / 2, "data: {\"choices\": [ this is not json\n\n".into()),
        Some(f) if f.starts_with("llamacpp") => {
            // As llama.cpp's server fails mid-reply: its error object in an `error:` field, then [DONE].
            out.truncate(out.len() / 2);
            let error = json!({"code": 500, "message": LLAMACPP_ERROR, "type": "server_error"});
            out.push(format!("error: {error}\n\n"));
            out.push("data: [DONE]\n\n".into());
        }
        _ => {}
    }
    out
}

/// The server's message in the `llamacpp` fault's error event.
pub const LLAMACPP_ERROR: &str = "the KV cache is full: try a shorter prompt or a larger context (-c)";

fn error(status: StatusCode, message: &str) -> Response {
    let body = json!({"error": {"message": message, "type": "demo_error", "code": status.as_u16()}});
    (status, [("content-type", "application/json")], body.to_string()).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Value {
        json!({"role": "user", "content": text})
    }

    const ALL: [&str; 4] = ["conversation_recall", "delegate_task", "write_file", "read_file"];

    fn tools() -> Vec<String> {
        ALL.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_digest_counts_and_checksums_what_follows_the_switch() {
        let call = |text: &str| plan(&[user(text)], &tools());
        // FNV-1a 64 of "a" is af63dc4c8601ec8c (the published test vector); "é" counts as one character.
        assert_eq!(call("[[digest]]a"), Plan::Text("Received 1 characters, FNV-1a 64 af63dc4c8601ec8c.".into()));
        assert_eq!(call("[[digest]]"), Plan::Text("Received 0 characters, FNV-1a 64 cbf29ce484222325.".into()));
        assert!(matches!(call("[[digest]]é"), Plan::Text(t) if t.starts_with("Received 1 characters")));
    }

    #[test]
    fn rules_pick_the_expected_action() {
        let call = |text: &str| plan(&[user(text)], &tools());
        assert_eq!(
            call("What did we decide about the auth_token earlier?"),
            Plan::Call {
                name: "conversation_recall".into(),
                arguments: json!({"action": "search", "query": "auth_token", "scope": "session"})
            }
        );
        assert_eq!(
            call("Remember the zebra migration in this workspace?"),
            Plan::Call {
                name: "conversation_recall".into(),
                arguments: json!({"action": "search", "query": "zebra migration", "scope": "workspace"})
            }
        );
        assert_eq!(
            call("Please delegate: add rate limiting to the API"),
            Plan::Call {
                name: "delegate_task".into(),
                arguments: json!({"goal": "add rate limiting to the API", "wait": true})
            }
        );
        assert_eq!(
            call("write file notes/todo.md: buy milk"),
            Plan::Call {
                name: "write_file".into(),
                arguments: json!({"path": "notes/todo.md", "content": "buy milk"})
            }
        );
        assert!(matches!(call("hello there [[fault:slow]]"), Plan::Text(t) if t.contains("\"hello there\"")));
        // Without the tool on offer, no call is made.
        assert!(matches!(plan(&[user("write file a.txt: x")], &[]), Plan::Text(_)));
        let after_tool =
            plan(&[user("read file x"), json!({"role": "tool", "name": "read_file", "content": "42"})], &tools());
        assert_eq!(after_tool, Plan::Text("Here is what read_file returned: 42".into()));
        // As Cowork sends it: no name on the tool message, the call it answers named by id.
        let call_msg = json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "list_dir", "arguments": "{}"}}]});
        let after_tool = plan(
            &[user("list"), call_msg, json!({"role": "tool", "tool_call_id": "c1", "content": "a.txt"})],
            &tools(),
        );
        assert_eq!(after_tool, Plan::Text("Here is what list_dir returned: a.txt".into()));
        // Asked to continue its own interrupted reply, it answers the message before it.
        let resumed = plan(&[user("tell me a story"), json!({"role": "assistant", "content": "Demo model"})], &tools());
        assert!(matches!(resumed, Plan::Text(t) if t.contains("\"tell me a story\"")));
    }

    #[test]
    fn the_echo_names_the_model_asked_for_unless_it_is_demo() {
        let as_model = |model: &str| match plan_as(model, &[user("hi")], &tools()) {
            Plan::Text(t) => t,
            other => panic!("{other:?}"),
        };
        assert!(as_model("demo").starts_with("Demo model here (no real AI"), "{}", as_model("demo"));
        assert!(as_model("demo-large").starts_with("Demo model \"demo-large\" here"), "{}", as_model("demo-large"));
        assert!(as_model("demo-large").contains("You said: \"hi\""));
        // An interrupted reply continues with the rest of the named echo.
        let started = json!({"role": "assistant", "content": "Demo model \"demo-large\" here"});
        assert!(
            matches!(plan_as("demo-large", &[user("hi"), started], &tools()), Plan::Text(t) if t.starts_with(" (no real AI"))
        );
    }

    #[test]
    fn streams_end_with_usage_and_done_unless_cut() {
        let chunks = stream_chunks(&Plan::Text("one two three four five six".into()), "demo", 40, None);
        assert_eq!(chunks.last().unwrap(), "data: [DONE]\n\n");
        assert!(chunks[chunks.len() - 2].contains("\"prompt_tokens\":10"));
        let cut = stream_chunks(&Plan::Text("one two three four five six".into()), "demo", 40, Some("cut"));
        assert!(cut.len() < chunks.len() && !cut.iter().any(|c| c.contains("[DONE]")));
        let call = stream_chunks(
            &Plan::Call { name: "f".into(), arguments: json!({"path": "a/very/long/path.txt"}) },
            "demo",
            4,
            None,
        );
        let args: String = call
            .iter()
            .filter_map(|c| c.strip_prefix("data: ")?.trim().parse::<Value>().ok())
            .filter_map(|v| {
                v["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str().map(str::to_owned)
            })
            .collect();
        assert_eq!(args, r#"{"path":"a/very/long/path.txt"}"#, "fragments join to the arguments");
    }

    /// The `delta` objects of a stream's chunks, in order.
    fn deltas(chunks: &[String]) -> Vec<Value> {
        chunks
            .iter()
            .filter_map(|c| c.strip_prefix("data: ")?.trim().parse::<Value>().ok())
            .filter_map(|v| v["choices"].get(0).map(|c| c["delta"].clone()))
            .collect()
    }

    /// The concatenated `field` of a stream's deltas.
    fn joined(chunks: &[String], field: &str) -> String {
        deltas(chunks).iter().filter_map(|d| d[field].as_str().map(str::to_owned)).collect()
    }

    fn decoded(chunks: &[String]) -> cowork_core::provider::AssistantMessage {
        let body = chunks.concat();
        let (_, message) =
            cowork_core::provider::decode_body(cowork_core::provider::ProviderKind::OpenAi, body.as_bytes());
        message.unwrap_or_else(|e| panic!("the stream did not decode: {e:?}\n{body}"))
    }

    #[test]
    fn reasoning_streams_before_the_text_and_decodes_apart_from_it() {
        let plan = plan(&[user("Explain the plan [[reasoning]]")], &tools());
        let reasoning = "Let me think about Explain the plan. The user wants a short answer.";
        let Plan::Reasoned { reasoning: r, text } = &plan else { panic!("not a reasoned reply: {plan:?}") };
        assert_eq!(r, reasoning);
        assert!(text.contains("You said: \"Explain the plan\"") && !text.contains("[["), "{text}");
        let chunks = stream_chunks(&plan, "demo", 40, None);
        assert_eq!(joined(&chunks, "reasoning_content"), reasoning);
        assert_eq!(&joined(&chunks, "content"), text);
        let d = deltas(&chunks);
        let first_text = d.iter().position(|d| d["content"].as_str().is_some_and(|t| !t.is_empty())).unwrap();
        let last_reasoning = d.iter().rposition(|d| d["reasoning_content"].is_string()).unwrap();
        assert!(last_reasoning < first_text, "reasoning comes first: {chunks:?}");
        let message = decoded(&chunks);
        assert_eq!(message.reasoning, reasoning);
        assert_eq!(message.reasoning_field.as_deref(), Some("reasoning_content"));
        assert_eq!(&message.content, text);
        assert!(!message.refusal);
    }

    #[test]
    fn a_long_tool_result_is_quoted_with_its_lines() {
        let result = "Task t-1 completed.\nSubtasks:\n  [x] plan\n  [x] write ```code```\nFiles changed:\n  - src/a.rs";
        let answer = quote_result("delegate_task", result);
        assert_eq!(answer, format!("Here is what delegate_task returned:\n\n````text\n{result}\n````"));
        let long = "line of the result\n".repeat(100);
        let answer = quote_result("read_file", &long);
        assert!(answer.len() < 700 && answer.ends_with("…\n```"), "{answer}");
    }

    #[test]
    fn a_code_switch_answers_with_the_message_as_a_fenced_block() {
        let answer = plan(&[user("[[code:python]]\ndef greet(name):\n    return f\"hi {name}\"\n")], &tools());
        assert_eq!(
            answer,
            Plan::Text(
                "Here it is as python:\n\n```python\ndef greet(name):\n    return f\"hi {name}\"\n```\n\nThat is the whole block."
                    .into()
            )
        );
        // Faults still apply, and are not part of the code.
        let answer = plan(&[user("[[code:html]] <script>alert(1)</script> [[fault:slow]]")], &tools());
        assert!(
            matches!(&answer, Plan::Text(t) if t.contains("```html\n<script>alert(1)</script>\n```")),
            "{answer:?}"
        );
    }

    #[test]
    fn a_refusal_streams_only_refusal_text_and_decodes_as_a_refusal() {
        let plan = plan(&[user("Tell me a secret [[refusal]]")], &tools());
        assert_eq!(plan, Plan::Refusal("I can't help with that.".into()));
        let chunks = stream_chunks(&plan, "demo", 40, None);
        assert_eq!(joined(&chunks, "refusal"), "I can't help with that.");
        assert_eq!(joined(&chunks, "content"), "", "no content");
        let finish = chunks.iter().find(|c| c.contains("finish_reason\":\"")).unwrap();
        assert!(finish.contains("\"finish_reason\":\"stop\""), "{finish}");
        let message = decoded(&chunks);
        assert!(message.refusal);
        assert_eq!(message.content, "I can't help with that.");
        assert_eq!(message.finish_reason.as_deref(), Some("stop"));
        assert_eq!(message.reasoning, "");
        // Without the switch, the same words get the usual echo.
        assert!(matches!(super::plan(&[user("Tell me a secret")], &tools()), Plan::Text(_)));
    }
}
