//! Codex CLI rollouts (`rollout-*.jsonl`): one session per file. Lines are `{timestamp, type,
//! payload}`: `session_meta` (`{id, timestamp, cwd, originator, cli_version, instructions}`),
//! `response_item` (a message, a function call or its output, reasoning), `turn_context` (the model);
//! `event_msg`, `compacted` and others are UI events and are not read; records come in any order.
//! Older rollouts have no envelope: the first line is the meta object, then bare items.
//!
//! A line that is not JSON refuses the file (it is damaged or cut short); a rollout without a session
//! id, or with an item that cannot be read, is left out with why.
//!
//! Messages of the `developer` or `system` role, and the user messages Codex writes itself
//! (`<environment_context>`, `<user_instructions>`), are left out and counted. A function call joins
//! the assistant turn it follows (parallel calls become one turn); its output is a tool turn. A tool's
//! JSON output `{"output": …, "metadata": {"exit_code": …}}` is read as its text and exit code.

use super::time::time_ms;
use super::{arguments_text, import_err, text_of, Conversation, Format, ImportedTurn};
use crate::error::Result;
use crate::{Role, ToolCall};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The rollout's conversation, or why it cannot be read (`Err` inside); a line that is not JSON is
/// the file's error.
pub(super) fn parse(bytes: &[u8]) -> Result<std::result::Result<Conversation, String>> {
    let mut out = Conversation {
        format: Format::Codex,
        id: String::new(),
        title: String::new(),
        workspace: None,
        model: String::new(),
        created_at: None,
        updated_at: None,
        turns: Vec::new(),
        current: None,
        skipped: 0,
    };
    let mut state = State::default();
    for (i, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        let n = i + 1;
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let v: Value = serde_json::from_slice(raw).map_err(|e| {
            let why = if e.is_eof() { "the line ends too early: the file looks truncated" } else { "not valid JSON" };
            import_err(n, format!("line {n}: {why} ({e})"))
        })?;
        let time = time_ms(v.get("timestamp"));
        let (ty, payload) = match (v["type"].as_str(), v.get("payload")) {
            (Some(ty), Some(p)) => (ty, p),
            // No envelope: the meta object first, then bare items.
            (None, _) if out.id.is_empty() && v.get("id").is_some() => ("session_meta", &v),
            _ if v.get("record_type").is_some() => continue,
            (Some(_), None) => ("response_item", &v),
            (None, _) => continue, // a record of no known kind: nothing to read
        };
        match ty {
            // A resumed session repeats its meta line: the first one counts.
            "session_meta" if out.id.is_empty() => {
                out.id = payload["id"].as_str().unwrap_or_default().to_owned();
                out.workspace = payload["cwd"].as_str().filter(|c| !c.is_empty()).map(str::to_owned);
                out.created_at = time_ms(payload.get("timestamp")).or(time);
            }
            "turn_context" => {
                if let Some(model) = payload["model"].as_str() {
                    out.model = model.to_owned();
                }
            }
            "response_item" => {
                let time = time.or(state.time).or(out.created_at);
                state.time = time;
                out.updated_at = time.or(out.updated_at);
                if let Err(e) = item(&mut out, &mut state, payload, time, n) {
                    return Ok(Err(format!("line {n}: {e}")));
                }
            }
            _ => {}
        }
    }
    if out.id.is_empty() {
        return Ok(Err("it has no session_meta line (no session id)".into()));
    }
    Ok(Ok(out))
}

#[derive(Default)]
struct State {
    time: Option<i64>,
    reasoning: String,
    call_names: HashMap<String, String>,
}

fn item(
    out: &mut Conversation,
    state: &mut State,
    p: &Value,
    time: Option<i64>,
    line: usize,
) -> std::result::Result<(), String> {
    // Items have no ids of their own but calls': a message is named by its line.
    let line_id = || p["id"].as_str().map_or_else(|| format!("line-{line}"), str::to_owned);
    let mut turn = match p["type"].as_str().unwrap_or_default() {
        "message" => {
            let role = p["role"].as_str().unwrap_or_default();
            let text = text_of(&p["content"]);
            let codex_own = text.trim_start().starts_with("<environment_context>")
                || text.trim_start().starts_with("<user_instructions>");
            let role = match role {
                "user" if !codex_own => Role::User,
                "assistant" => Role::Assistant,
                _ => {
                    out.skipped += 1;
                    return Ok(());
                }
            };
            if text.trim().is_empty() {
                out.skipped += 1;
                return Ok(());
            }
            ImportedTurn::new(line_id(), role, text)
        }
        "reasoning" => {
            let summary = p["summary"].as_array().into_iter().flatten();
            for s in summary.filter_map(|s| s["text"].as_str()) {
                if !state.reasoning.is_empty() {
                    state.reasoning.push_str("\n\n");
                }
                state.reasoning.push_str(s);
            }
            return Ok(());
        }
        kind @ ("function_call" | "custom_tool_call" | "local_shell_call") => {
            let id = p["call_id"].as_str().or_else(|| p["id"].as_str()).unwrap_or_default().to_owned();
            let name = match kind {
                "local_shell_call" => "local_shell",
                _ => p["name"].as_str().ok_or("a function call without \"name\"")?,
            };
            let arguments = match kind {
                "function_call" => arguments_text(&p["arguments"]),
                "custom_tool_call" => arguments_text(&p["input"]),
                _ => arguments_text(&p["action"]),
            };
            state.call_names.insert(id.clone(), name.to_owned());
            let call = ToolCall { id: id.clone(), name: name.to_owned(), arguments };
            // Calls right after the reply (or after other calls) join its turn.
            if let Some(last) = out.turns.last_mut().filter(|t| t.role == Role::Assistant && state.reasoning.is_empty())
            {
                last.tool_calls.push(call);
                return Ok(());
            }
            let mut t = ImportedTurn::new(id, Role::Assistant, "");
            t.tool_calls.push(call);
            t
        }
        "function_call_output" | "custom_tool_call_output" => {
            let id = p["call_id"].as_str().unwrap_or_default().to_owned();
            let (text, exit_code) = output(&p["output"]);
            let mut t = ImportedTurn::new(id.clone(), Role::Tool, text);
            t.tool_name = Some(state.call_names.get(&id).cloned().unwrap_or_else(|| "tool".into()));
            t.tool_call_id = Some(id);
            if let Some(code) = exit_code {
                t.metadata.insert("exit_code".into(), json!(code));
            }
            t
        }
        _ => return Ok(()),
    };
    if turn.role == Role::Assistant && !state.reasoning.is_empty() {
        turn.metadata.insert("reasoning".into(), json!(std::mem::take(&mut state.reasoning)));
    }
    turn.created_at = time;
    turn.parent = out.turns.len().checked_sub(1);
    out.turns.push(turn);
    Ok(())
}

/// A tool output's text and exit code: `{"output": …, "metadata": {"exit_code": …}}` as JSON text or
/// an object, or plain text.
fn output(v: &Value) -> (String, Option<i64>) {
    let parsed;
    let v = match v.as_str().map(serde_json::from_str::<Value>) {
        Some(Ok(o)) if o.get("output").is_some() => {
            parsed = o;
            &parsed
        }
        _ => v,
    };
    match v.get("output") {
        Some(text) => (text_of(text), v["metadata"]["exit_code"].as_i64()),
        None => (text_of(v), None),
    }
}
