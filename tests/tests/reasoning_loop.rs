//! Thinking models in the agent loop, natively: the real store and real HTTP to the dev server's
//! DeepSeek-style and Anthropic-style scripted models, which refuse a request that drops the
//! reasoning of a tool-calling turn, as the real ones do; and llama.cpp's mid-stream error.

use cowork_core::agent::{continue_session, next_context, send_message, AgentEvent, AgentSettings, NoTools, Outcome};
use cowork_core::agent::{ResponseBody, Transport};
use cowork_core::context::ContextSettings;
use cowork_core::prompt::PromptOptions;
use cowork_core::provider::{build_request, ModelSettings, ProviderKind};
use cowork_core::state::ExtractionRules;
use cowork_core::store::{NewSession, Store};
use cowork_core::{Role, TurnStatus};
use cowork_tests::model::thinking::{signature, step, DEEPSEEK_MISSING_REASONING, ROUNDS};
use cowork_tests::model::LLAMACPP_ERROR;
use cowork_tests::transport::HttpTransport;
use std::cell::RefCell;

fn settings(kind: ProviderKind, base_url: String, model: &str) -> AgentSettings {
    AgentSettings {
        provider: ModelSettings { kind, base_url, model: model.into(), ..ModelSettings::default() },
        context: ContextSettings { context_window: 16_000, output_reserve: 2_000, ..ContextSettings::default() },
        prompt: PromptOptions { delegation: false, ..PromptOptions::default() },
        rules: ExtractionRules::default(),
        max_iterations: 8,
        orchestrator_url: None,
    }
}

struct Run {
    store: Store,
    session: String,
    settings: AgentSettings,
    transport: HttpTransport,
    events: Vec<AgentEvent>,
}

impl Run {
    async fn new(kind: ProviderKind, path: &str, model: &str) -> Run {
        let origin = cowork_tests::server::start_for_tests("reasoning").await;
        let mut store = Store::open_in_memory().unwrap();
        let session = store.create_session(&NewSession::new("proj")).unwrap().id;
        let settings = settings(kind, format!("{origin}{path}"), model);
        Run { store, session, settings, transport: HttpTransport::with_time_scale(50), events: Vec::new() }
    }

    async fn send(&mut self, text: &str) -> cowork_core::Result<Outcome> {
        let events = &mut self.events;
        send_message(
            &RefCell::new(&mut self.store),
            &self.transport,
            &NoTools,
            &self.settings,
            &self.session,
            text,
            &mut |e| events.push(e),
        )
        .await
    }

    /// Sends what the loop would send next, with `edit` applied to its messages: the status and body.
    async fn send_next(&self, edit: impl FnOnce(&mut Vec<cowork_core::context::ContextMessage>)) -> (u16, String) {
        let mut context = next_context(&self.store, &self.settings, &self.session).unwrap();
        edit(&mut context.messages);
        let definitions = cowork_core::agent::tool_definitions(&NoTools, &self.settings);
        let request = build_request(&self.settings.provider, &context.messages, &definitions);
        let mut response = self.transport.send(&request).await.unwrap();
        let mut body = Vec::new();
        while let Some(Ok(chunk)) = response.body.chunk().await {
            body.extend_from_slice(&chunk);
        }
        (response.status, String::from_utf8_lossy(&body).into_owned())
    }

    /// The loop's three tool rounds and its answer, as stored, with their reasoning.
    fn assert_three_rounds(&self) {
        let turns = self.store.get_turns(&self.session, 0, 100).unwrap();
        let shape: Vec<(Role, usize)> = turns.iter().map(|t| (t.role, t.tool_calls.len())).collect();
        let round = [(Role::Assistant, 1), (Role::Tool, 0)];
        let expected: Vec<(Role, usize)> =
            [(Role::User, 0)].into_iter().chain(round.repeat(ROUNDS)).chain([(Role::Assistant, 0)]).collect();
        assert_eq!(shape, expected, "three rounds of tools, then the answer");
        let assistants: Vec<_> = turns.iter().filter(|t| t.role == Role::Assistant).collect();
        for (done, t) in assistants.iter().enumerate() {
            assert_eq!(t.status, TurnStatus::Complete);
            assert_eq!(t.metadata["reasoning"], step(done).thinking, "turn {}", t.turn_number);
        }
        assert_eq!(assistants[ROUNDS].content, "I looked in the archive 3 times; here is my answer.");
        // Every request of the loop sent the reasoning of the tool rounds before it.
        let mut manifests = self.store.manifests(&self.session, 10).unwrap();
        manifests.reverse();
        let sent: Vec<Vec<i64>> = manifests.iter().map(|m| m.reasoning_turns.clone()).collect();
        assert_eq!(sent, [vec![], vec![2], vec![2, 4], vec![2, 4, 6]]);
        // The UI saw the reasoning live, before the answer's text.
        let live: Vec<(i64, bool)> = self
            .events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ReasoningDelta { turn_number, .. } => Some((*turn_number, true)),
                AgentEvent::StreamDelta { turn_number, .. } => Some((*turn_number, false)),
                _ => None,
            })
            .collect();
        let answer = assistants[ROUNDS].turn_number;
        let first_text = live.iter().position(|&(n, thought)| n == answer && !thought).expect("answer text streamed");
        assert!(live[..first_text].iter().any(|&(n, thought)| n == answer && thought), "{live:?}");
        let thought: String = self
            .events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ReasoningDelta { turn_number, text } if *turn_number == 2 => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(thought, step(0).thinking);
    }
}

#[tokio::test]
async fn a_deepseek_style_thinking_model_completes_three_tool_rounds() {
    let mut run = Run::new(ProviderKind::OpenAi, "/v1", "deepseek-reasoner").await;
    let out = run.send("Look it up three times [[tool-rounds]]").await.unwrap();
    assert_eq!(out, Outcome::Done { assistant_turn: 8 });
    run.assert_three_rounds();
    let turns = run.store.get_turns(&run.session, 0, 100).unwrap();
    assert_eq!(turns[1].metadata["reasoning_field"], "reasoning_content");

    // The check can fail: the same request without one round's reasoning is refused, in DeepSeek's words.
    let (status, _) = run.send_next(|_| {}).await;
    assert_eq!(status, 200, "the loop's own request is accepted");
    let (status, body) = run
        .send_next(|messages| {
            let call = messages.iter_mut().filter(|m| !m.tool_calls.is_empty()).nth(1).unwrap();
            call.reasoning = None;
        })
        .await;
    assert_eq!(status, 400);
    assert!(body.contains(DEEPSEEK_MISSING_REASONING), "{body}");

    // A new message: the finished loop's reasoning is dropped, which DeepSeek allows.
    let out = run.send("Once more [[tool-rounds]]").await.unwrap();
    assert_eq!(out, Outcome::Done { assistant_turn: 16 });
    let last = &run.store.manifests(&run.session, 1).unwrap()[0];
    assert_eq!(last.reasoning_turns, [10, 12, 14], "only the current loop's reasoning went out");
}

#[tokio::test]
async fn an_anthropic_style_thinking_model_completes_three_tool_rounds() {
    let mut run = Run::new(ProviderKind::Anthropic, "/anthropic/v1", "claude-demo").await;
    let out = run.send("Look it up three times [[tool-rounds]]").await.unwrap();
    assert_eq!(out, Outcome::Done { assistant_turn: 8 });
    run.assert_three_rounds();
    let turns = run.store.get_turns(&run.session, 0, 100).unwrap();
    let thinking = step(0).thinking;
    assert_eq!(
        turns[1].metadata["reasoning_blocks"],
        serde_json::json!([{"type": "thinking", "thinking": thinking, "signature": signature(&thinking)}]),
        "the signed block is kept verbatim"
    );

    let (status, _) = run.send_next(|_| {}).await;
    assert_eq!(status, 200, "the loop's own request is accepted");
    // Dropped: Anthropic's "Expected `thinking`…"; altered: its invalid signature.
    let (status, body) = run
        .send_next(|messages| messages.iter_mut().filter(|m| !m.tool_calls.is_empty()).for_each(|m| m.reasoning = None))
        .await;
    assert_eq!(status, 400);
    assert!(body.contains("Expected `thinking` or `redacted_thinking`, but found `tool_use`"), "{body}");
    let (status, body) = run
        .send_next(|messages| {
            let call = messages.iter_mut().rfind(|m| !m.tool_calls.is_empty()).unwrap();
            call.reasoning.as_mut().unwrap().blocks[0]["thinking"] = "I changed my mind.".into();
        })
        .await;
    assert_eq!(status, 400);
    assert!(body.contains("Invalid `signature` in `thinking` block"), "{body}");

    // Through the loop, the refusal is the provider's message.
    let out = run.send("Once more [[tool-rounds]]").await.unwrap();
    assert_eq!(out, Outcome::Done { assistant_turn: 16 });
}

/// llama.cpp fails mid-reply with an SSE `error:` field and `[DONE]`: the partial reply is saved as an
/// error turn, the server's message reaches the user, and continuing (Retry) completes the reply.
#[tokio::test]
async fn a_llamacpp_error_mid_stream_is_reported_and_retry_completes() {
    let mut run = Run::new(ProviderKind::OpenAi, "/v1", "qwen2.5-coder").await;
    let err = run.send("Tell me about caches [[fault:llamacppx1]]").await.unwrap_err();
    assert!(err.to_string().contains(LLAMACPP_ERROR), "{err}");
    let reported =
        run.events.iter().any(|e| matches!(e, AgentEvent::Error { message, .. } if message.contains(LLAMACPP_ERROR)));
    assert!(reported, "the UI is told the server's message: {:?}", run.events);
    let turns = run.store.get_turns(&run.session, 0, 10).unwrap();
    assert_eq!(turns[1].status, TurnStatus::Error);
    let partial = &turns[1].content;
    assert!(partial.starts_with("Demo model") && !partial.contains("real answers"), "the partial text: {partial:?}");

    let events = &mut run.events;
    let out = continue_session(
        &RefCell::new(&mut run.store),
        &run.transport,
        &NoTools,
        &run.settings,
        &run.session,
        &mut |e| events.push(e),
    )
    .await
    .unwrap();
    let Outcome::Done { assistant_turn } = out else { panic!("not done: {out:?}") };
    let turns = run.store.get_turns(&run.session, 0, 10).unwrap();
    let reply = turns.iter().find(|t| t.turn_number == assistant_turn).unwrap();
    assert!(reply.content.contains("You said: \"Tell me about caches\""), "{}", reply.content);
}
