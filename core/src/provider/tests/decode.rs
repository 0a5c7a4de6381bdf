//! Decoding recorded streams (fixtures in `core/tests/data/provider/`), whole and cut anywhere.

use expect_test::{expect, Expect};
use proptest::prelude::*;

use crate::provider::*;
use crate::sse::SseParser;

// ---- fixtures -----------------------------------------------------------------------------------

/// An OpenAI stream as api.openai.com sends it with `include_usage`: text, then two parallel tool
/// calls whose arguments arrive in fragments, the finish reason, the usage chunk with empty
/// `choices`, and `[DONE]`.
const OPENAI_TOOLS: &str = include_str!("../../../tests/data/provider/openai_tools.sse");

/// A plain text answer from an OpenAI-compatible local server (llama.cpp style: CRLF, a keepalive
/// comment, multi-byte text, usage on the last choice chunk).
const OPENAI_TEXT: &str = include_str!("../../../tests/data/provider/openai_text.sse");

/// An Anthropic stream as the Messages API sends it: text, two tool_use blocks with
/// input_json_delta fragments, a ping, usage with cache reads, stop_reason and message_stop.
const ANTHROPIC_TOOLS: &str = include_str!("../../../tests/data/provider/anthropic_tools.sse");

// ---- rendering ----------------------------------------------------------------------------------

fn render_events(events: &[StreamEvent]) -> String {
    let mut out = String::new();
    for e in events {
        let line = match e {
            StreamEvent::TextDelta(t) => format!("text {t:?}"),
            StreamEvent::ReasoningDelta(t) => format!("reasoning {t:?}"),
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
    if m.refusal {
        out.push_str("refusal: true\n");
    }
    if !m.reasoning.is_empty() || m.reasoning_field.is_some() {
        out.push_str(&format!("reasoning ({}): {:?}\n", m.reasoning_field.as_deref().unwrap_or("-"), m.reasoning));
    }
    for block in &m.reasoning_blocks {
        out.push_str(&format!("reasoning block: {block}\n"));
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

/// Decodes a recorded `body` whole (events and outcome must match `expect`), fed byte by byte, and in
/// pseudo-random chunks: every way must give the same events and outcome.
fn check_recorded(kind: ProviderKind, body: &str, expect: Expect) {
    check(kind, body, expect);
    let bytes = body.as_bytes();
    let whole = decode_body(kind, bytes);
    let every_byte: Vec<usize> = (0..bytes.len()).collect();
    assert_eq!(decode_split(kind, bytes, &every_byte), whole, "{kind:?} fed byte by byte");
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for round in 0..64 {
        let cuts: Vec<usize> = (0..round % 24)
            .map(|_| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                (seed >> 33) as usize
            })
            .collect();
        assert_eq!(decode_split(kind, bytes, &cuts), whole, "{kind:?} fed in chunks cut at {cuts:?}");
    }
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
            reasoning "hmm"
            text "Answer."
            usage prompt=12 completion=20
            finished end_turn
            ---
            OK
            content: "Answer."
            finish: Some("end_turn")
            usage: prompt=12 completion=20
            reasoning (-): "hmm"
            reasoning block: {"signature":"abc","thinking":"hmm","type":"thinking"}
        "#]],
    );
    // Reasoning is kept apart; a second choice and unknown fields (logprobs) are ignored.
    let body = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"thinking…\",\"refusal\":null}}]}\n\n",
        "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"second choice\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\n",
    );
    check(
        ProviderKind::OpenAi,
        body,
        expect![[r#"
            reasoning "thinking…"
            text "ok"
            finished stop
            ---
            OK
            content: "ok"
            finish: Some("stop")
            reasoning (reasoning_content): "thinking…"
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

// ---- recorded shapes from issue #16 ---------------------------------------------------------------

/// llama.cpp's server (`llama-server`) reports a failure mid-stream as an SSE `error:` field (no
/// `data:`), then `data: [DONE]`; this used to be stored as an empty, complete reply. Written from
/// llama.cpp's documented server format (`server_sent_event(sink, "error", …)`).
const LLAMACPP_ERROR_FIELD: &str = include_str!("../../../tests/data/provider/llamacpp_error_field.sse");

#[test]
fn llamacpp_error_field_is_a_provider_error() {
    check_recorded(
        ProviderKind::OpenAi,
        LLAMACPP_ERROR_FIELD,
        expect![[r#"
        provider error: The model endpoint reported an error in the middle of the reply: the request exceeds the available context size, try increasing it (exceed_context_size_error). The partial reply is saved; retry in a moment.
        ---
        Provider: The model endpoint reported an error in the middle of the reply: the request exceeds the available context size, try increasing it (exceed_context_size_error). The partial reply is saved; retry in a moment.
        raw: {"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":41877,"n_ctx":32768}
        partial:
        content: ""
        finish: None
    "#]],
    );
}

/// The same stream read by something that does not see the `error:` field: `[DONE]` after nothing
/// (no text, no call, no finish reason) is a failure, never an empty complete reply.
#[test]
fn done_after_nothing_is_a_failure_not_an_empty_reply() {
    let without_field: String =
        LLAMACPP_ERROR_FIELD.split("\n\n").filter(|ev| !ev.starts_with("error:")).collect::<Vec<_>>().join("\n\n");
    check_recorded(
        ProviderKind::OpenAi,
        &without_field,
        expect![[r#"
        ---
        Provider: The model endpoint ended the reply without any text, tool call or reason for stopping, which usually means it failed on its side without saying why. Nothing was kept as the answer; retry, and check the server's log if it keeps happening.
        raw: [DONE]
        partial:
        content: ""
        finish: None
    "#]],
    );
    // An Anthropic stream that stops without content or stop reason is the same failure.
    let body = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    check_recorded(
        ProviderKind::Anthropic,
        body,
        expect![[r#"
        usage prompt=10 completion=1
        ---
        Provider: The model endpoint ended the reply without any text, tool call or reason for stopping, which usually means it failed on its side without saying why. Nothing was kept as the answer; retry, and check the server's log if it keeps happening.
        raw: {"type":"message_stop"}
        partial:
        content: ""
        finish: None
        usage: prompt=10 completion=1
    "#]],
    );
    // An empty reply that the model ended on purpose (a finish reason) stays a reply.
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    assert_eq!(decode_body(ProviderKind::OpenAi, body.as_bytes()).1.map(|m| m.content), Ok(String::new()));
}

/// OpenRouter's documented mid-stream error: after some text, a chunk with a top-level `error` (and
/// `finish_reason: "error"`), then the stream ends. Written from OpenRouter's documented format.
const OPENROUTER_ERROR_MIDSTREAM: &str = include_str!("../../../tests/data/provider/openrouter_error_midstream.sse");

#[test]
fn openrouter_error_midstream_keeps_the_text_and_reports_the_error() {
    check_recorded(
        ProviderKind::OpenAi,
        OPENROUTER_ERROR_MIDSTREAM,
        expect![[r#"
        text "The refresh token "
        text "is rotated on"
        provider error: The model endpoint reported an error in the middle of the reply: Provider disconnected unexpectedly (server_error). The partial reply is saved; retry in a moment.
        ---
        Provider: The model endpoint reported an error in the middle of the reply: Provider disconnected unexpectedly (server_error). The partial reply is saved; retry in a moment.
        raw: {"id":"gen-1733412345-Jx8vQe2mNcR7pLk0","provider":"DeepInfra","model":"meta-llama/llama-3.3-70b-instruct","object":"chat.completion.chunk","created":1733412345,"error":{"code":"server_error","message":"Provider disconnected unexpectedly"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error","native_finish_reason":null,"logprobs":null}]}
        partial:
        content: "The refresh token is rotated on"
        finish: None
    "#]],
    );
}

/// `event: error` in an OpenAI-compatible stream (relays and proxies), with or without an `error`
/// wrapper, and as plain text: always the provider's error with its message.
#[test]
fn event_error_shapes_are_provider_errors() {
    for data in [
        r#"{"error":{"message":"Rate limit exceeded: free-models-per-min","code":429}}"#,
        r#"{"message":"Rate limit exceeded: free-models-per-min","code":429}"#,
        "Rate limit exceeded: free-models-per-min",
    ] {
        let body = format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"Hi\"}}}}]}}\n\nevent: error\ndata: {data}\n\ndata: [DONE]\n\n"
        );
        let (_, outcome) = decode_body(ProviderKind::OpenAi, body.as_bytes());
        let failure = outcome.expect_err(data);
        assert_eq!(failure.kind, FailureKind::Provider, "{data}");
        assert!(failure.message.contains("Rate limit exceeded: free-models-per-min"), "{data}: {}", failure.message);
        assert_eq!(failure.partial.content, "Hi", "{data}");
    }
}

/// Mistral's magistral models stream `delta.content` as an array of typed parts: `thinking` parts
/// (themselves a list of text parts) and `text` parts, and sometimes a plain string. Every such reply
/// used to fail as malformed. Written from Mistral's documented chat-completion chunk format.
const MISTRAL_MAGISTRAL: &str = include_str!("../../../tests/data/provider/mistral_magistral_content_array.sse");

#[test]
fn mistral_magistral_content_array_splits_thinking_from_text() {
    check_recorded(
        ProviderKind::OpenAi,
        MISTRAL_MAGISTRAL,
        expect![[r#"
        reasoning "The user asks how long"
        reasoning " refresh tokens live: 7 days, per the config."
        text "Refresh tokens "
        text "expire after 7 days."
        finished stop
        usage prompt=412 completion=77
        ---
        OK
        content: "Refresh tokens expire after 7 days."
        finish: Some("stop")
        usage: prompt=412 completion=77
        reasoning (-): "The user asks how long refresh tokens live: 7 days, per the config."
    "#]],
    );
}

/// OpenAI streams a refusal as `delta.refusal` text (`content` stays null); it was dropped and the
/// user saw an empty message. Written from OpenAI's documented chunk format.
const OPENAI_REFUSAL: &str = include_str!("../../../tests/data/provider/openai_refusal.sse");

#[test]
fn openai_refusal_becomes_the_content_and_is_marked() {
    check_recorded(
        ProviderKind::OpenAi,
        OPENAI_REFUSAL,
        expect![[r#"
        text "I'm sorry, "
        text "I can't assist with that request."
        finished stop
        usage prompt=96 completion=11
        ---
        OK
        content: "I'm sorry, I can't assist with that request."
        finish: Some("stop")
        usage: prompt=96 completion=11
        refusal: true
    "#]],
    );
}

/// Anthropic ends a refused reply with `stop_reason: "refusal"`. Written from Anthropic's documented
/// Messages streaming format.
const ANTHROPIC_REFUSAL: &str = include_str!("../../../tests/data/provider/anthropic_refusal.sse");

#[test]
fn anthropic_refusal_stop_reason_is_marked() {
    check_recorded(
        ProviderKind::Anthropic,
        ANTHROPIC_REFUSAL,
        expect![[r#"
        usage prompt=64 completion=2
        text "I can't help with "
        text "that."
        usage prompt=64 completion=9
        finished refusal
        ---
        OK
        content: "I can't help with that."
        finish: Some("refusal")
        usage: prompt=64 completion=9
        refusal: true
    "#]],
    );
}

/// DeepSeek's reasoner streams `reasoning_content` before the text and a tool call; the reasoning must
/// be kept apart (and sent back with the call). Written from DeepSeek's documented format.
const DEEPSEEK_REASONING_TOOL_CALL: &str =
    include_str!("../../../tests/data/provider/deepseek_reasoning_tool_call.sse");

#[test]
fn deepseek_reasoning_content_is_kept_apart_from_the_text() {
    check_recorded(
        ProviderKind::OpenAi,
        DEEPSEEK_REASONING_TOOL_CALL,
        expect![[r#"
        reasoning "I need the file"
        reasoning " before answering."
        text "Reading it."
        call#0 started id=call_00_Ux3kP9qLm2 name=read_file
        call#0 args "{\"path\":\"src/auth.py\"}"
        finished tool_calls
        usage prompt=1290 completion=58
        ---
        OK
        content: "Reading it."
        call call_00_Ux3kP9qLm2 read_file {"path":"src/auth.py"}
        finish: Some("tool_calls")
        usage: prompt=1290 completion=58
        reasoning (reasoning_content): "I need the file before answering."
    "#]],
    );
}

/// Groq (`reasoning_format: "parsed"`), like OpenRouter and Ollama, streams `delta.reasoning`. Written
/// from Groq's documented format (usage in `x_groq` and in the usage chunk).
const GROQ_REASONING: &str = include_str!("../../../tests/data/provider/groq_reasoning.sse");

#[test]
fn groq_reasoning_is_kept_apart_from_the_text() {
    check_recorded(
        ProviderKind::OpenAi,
        GROQ_REASONING,
        expect![[r#"
        reasoning "Okay, the user greets me"
        reasoning " in German; answer in German."
        text "Hallo! "
        text "Wie kann ich helfen?"
        finished stop
        usage prompt=18 completion=40
        ---
        OK
        content: "Hallo! Wie kann ich helfen?"
        finish: Some("stop")
        usage: prompt=18 completion=40
        reasoning (reasoning): "Okay, the user greets me in German; answer in German."
    "#]],
    );
    // A server that sends the same text in both fields: it is read once, from the first field seen.
    let body = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"Think.\",\"reasoning\":\"Think.\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\" More.\",\"reasoning_content\":\" More.\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Done.\"},\"finish_reason\":\"stop\"}]}\n\n",
    );
    let message = decode_body(ProviderKind::OpenAi, body.as_bytes()).1.unwrap();
    assert_eq!(
        (message.reasoning.as_str(), message.reasoning_field.as_deref()),
        ("Think. More.", Some("reasoning_content"))
    );
}

/// Anthropic extended thinking with tools: a `thinking` block (thinking deltas, then its signature), a
/// `redacted_thinking` block (opaque data), text and a `tool_use`. The blocks are kept verbatim to be
/// sent back. Written from Anthropic's documented Messages streaming format.
const ANTHROPIC_THINKING_TOOL_USE: &str = include_str!("../../../tests/data/provider/anthropic_thinking_tool_use.sse");

#[test]
fn anthropic_thinking_blocks_are_kept_with_their_signature() {
    check_recorded(
        ProviderKind::Anthropic,
        ANTHROPIC_THINKING_TOOL_USE,
        expect![[r#"
        usage prompt=2214 completion=8
        reasoning "The user wants the token lifetime. "
        reasoning "I should read src/auth.py first."
        text "Let me read the file."
        call#0 started id=toolu_01D7FLrfh4GYq7yT1ULmeyMa name=read_file
        call#0 args "{\"path\": \"src/au"
        call#0 args "th.py\"}"
        usage prompt=2214 completion=187
        finished tool_use
        ---
        OK
        content: "Let me read the file."
        call toolu_01D7FLrfh4GYq7yT1ULmeyMa read_file {"path": "src/auth.py"}
        finish: Some("tool_use")
        usage: prompt=2214 completion=187
        reasoning (-): "The user wants the token lifetime. I should read src/auth.py first."
        reasoning block: {"signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds2EoCZDu0pH5","thinking":"The user wants the token lifetime. I should read src/auth.py first.","type":"thinking"}
        reasoning block: {"data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pLmN0bKvzNnGA9XaX","type":"redacted_thinking"}
    "#]],
    );
}

/// A proxy that joins two responses sends a second `message_start` before the first message ended
/// (vercel/ai #18402). Hand-written in Anthropic's documented streaming format, with that splice: the
/// first message's thinking and tool call stop at the splice, the second's follow.
const ANTHROPIC_SECOND_MESSAGE_START: &str =
    include_str!("../../../tests/data/provider/anthropic_second_message_start.sse");

#[test]
fn a_second_message_start_inside_an_open_message_fails_the_reply() {
    let (_, outcome) = decode_body(ProviderKind::Anthropic, ANTHROPIC_SECOND_MESSAGE_START.as_bytes());
    let failure = outcome.expect_err("two spliced messages are not one reply");
    assert_eq!(failure.kind, FailureKind::Malformed);
    assert!(failure.message.contains("second reply"), "{}", failure.message);
    // Nothing of the second message is in the partial reply: one call, one thinking block.
    assert_eq!(failure.partial.tool_calls.len(), 1, "{:?}", failure.partial.tool_calls);
    assert_eq!(failure.partial.tool_calls[0].arguments, r#"{"path": "config.toml"}"#);
    assert!(!failure.partial.reasoning.contains("log level"), "{}", failure.partial.reasoning);
    // The same stream with the splice taken out (one message) is a reply.
    let spliced = ANTHROPIC_SECOND_MESSAGE_START
        .find("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01Vc")
        .unwrap();
    let first_only = format!(
        "{}event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":1}}\n\nevent: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"tool_use\"}}}}\n\nevent: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n",
        &ANTHROPIC_SECOND_MESSAGE_START[..spliced]
    );
    let reply = decode_body(ProviderKind::Anthropic, first_only.as_bytes()).1.expect("one message is a reply");
    assert_eq!(reply.tool_calls.len(), 1);
}
