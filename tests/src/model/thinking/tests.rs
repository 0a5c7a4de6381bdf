use super::*;
use cowork_core::provider::{decode_body, ProviderKind};

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

/// The OpenAI-format messages of a turn after `rounds` tool rounds, each call with its reasoning or not.
fn deepseek_turn(rounds: usize, with_reasoning: bool) -> Vec<Value> {
    let mut m = vec![user("Look three times [[tool-rounds]]")];
    for done in 0..rounds {
        let s = step(done);
        let (id, name, args) = s.call.unwrap();
        let mut call = json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}]});
        if with_reasoning {
            call["reasoning_content"] = json!(s.thinking);
        }
        m.push(call);
        m.push(json!({"role": "tool", "tool_call_id": id, "content": "found"}));
    }
    m
}

#[test]
fn the_deepseek_style_model_calls_three_rounds_then_answers() {
    for done in 0..ROUNDS {
        let chunks = deepseek(&deepseek_turn(done, true), "deepseek-reasoner").unwrap();
        let (_, message) = decode_body(ProviderKind::OpenAi, chunks.concat().as_bytes());
        let message = message.unwrap();
        assert_eq!(message.reasoning, step(done).thinking);
        assert_eq!(message.reasoning_field.as_deref(), Some("reasoning_content"));
        assert_eq!(message.tool_calls.len(), 1, "round {done}");
        assert_eq!(message.tool_calls[0].name, "conversation_recall");
    }
    let chunks = deepseek(&deepseek_turn(ROUNDS, true), "deepseek-reasoner").unwrap();
    let (_, message) = decode_body(ProviderKind::OpenAi, chunks.concat().as_bytes());
    let message = message.unwrap();
    assert!(message.tool_calls.is_empty());
    assert_eq!(message.content, "I looked in the archive 3 times; here is my answer.");
}

#[test]
fn the_deepseek_style_model_refuses_a_turn_without_its_reasoning() {
    let refused = deepseek(&deepseek_turn(2, false), "deepseek-reasoner").unwrap_err();
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    // Reasoning of an earlier turn (before the user's latest message) may be dropped.
    let mut later = deepseek_turn(ROUNDS, false);
    later.push(json!({"role": "assistant", "content": "Done."}));
    later.push(user("Thanks [[tool-rounds]]"));
    assert!(deepseek(&later, "deepseek-reasoner").is_ok());
}

/// The Anthropic-format messages of a tool loop after `rounds` rounds; `block(round)` is the
/// thinking block each assistant turn starts with (`None`: none).
fn anthropic_turn(rounds: usize, block: impl Fn(usize, &Step) -> Option<Value>) -> Vec<Value> {
    let mut m = vec![json!({"role": "user", "content": [{"type": "text", "text": "Look [[tool-rounds]]"}]})];
    for done in 0..rounds {
        let s = step(done);
        let (id, name, input) = s.call.clone().unwrap();
        let id = id.replace("call_", "toolu_");
        let mut content: Vec<Value> = block(done, &s).into_iter().collect();
        content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
        m.push(json!({"role": "assistant", "content": content}));
        m.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "found"}]}));
    }
    m
}

fn signed(_: usize, s: &Step) -> Option<Value> {
    Some(json!({"type": "thinking", "thinking": s.thinking, "signature": signature(&s.thinking)}))
}

#[test]
fn the_anthropic_style_model_thinks_signs_and_calls_tools() {
    let events = anthropic_stream(&anthropic_turn(1, signed), "claude-demo").unwrap();
    let body = events.concat();
    assert!(body.contains("\"signature_delta\"") && body.contains("\"input_json_delta\""), "{body}");
    let (_, message) = decode_body(ProviderKind::Anthropic, body.as_bytes());
    let message = message.unwrap();
    assert_eq!(message.reasoning, step(1).thinking);
    assert_eq!(
        message.reasoning_blocks,
        [json!({"type": "thinking", "thinking": step(1).thinking, "signature": signature(&step(1).thinking)})]
    );
    assert_eq!(message.tool_calls[0].id, "toolu_round_2");
    assert_eq!(message.tool_calls[0].arguments_json().unwrap(), step(1).call.unwrap().2);
    let events = anthropic_stream(&anthropic_turn(ROUNDS, signed), "claude-demo").unwrap();
    let (_, message) = decode_body(ProviderKind::Anthropic, events.concat().as_bytes());
    assert_eq!(message.unwrap().content, "I looked in the archive 3 times; here is my answer.");
}

#[test]
fn the_anthropic_style_model_refuses_dropped_or_altered_thinking() {
    let missing =
        anthropic_stream(&anthropic_turn(2, |round, s| (round == 0).then(|| signed(round, s)).flatten()), "c")
            .unwrap_err();
    assert!(
        missing.starts_with(
            "messages.3.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`."
        ),
        "{missing}"
    );
    let altered = anthropic_stream(
        &anthropic_turn(2, |_, s| {
            Some(json!({"type": "thinking", "thinking": "Something else.", "signature": signature(&s.thinking)}))
        }),
        "c",
    )
    .unwrap_err();
    assert_eq!(altered, "messages.1.content.0: Invalid `signature` in `thinking` block");
    assert_ne!(signature("a"), signature("b"));
}
