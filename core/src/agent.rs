//! The agent loop: one user message → as many model calls and tool runs as it takes, every step
//! committed to the archive before the next one depends on it.
//!
//! user turn committed → state register updated → context assembled (manifest recorded) → model
//! called (bounded retries) → streamed reply checkpointed as an `interrupted` turn → finalised →
//! each tool call approved, run, and its result committed → again, until the model stops calling tools
//! or the iteration limit is reached → usage totals and token calibration updated.
//!
//! A session whose last turn is a reply cut short is continued in place (`resume.rs`): the first model
//! call goes on from the saved partial text, and the reply is finished in that same turn.
//!
//! I/O is injected: [`Transport`] performs HTTP (fetch in the browser, a plain client in tests),
//! [`ToolHost`] runs tools and asks for approval, and [`AgentEvent`]s go to an observer (the UI).

pub mod delegate;
mod resume;
mod types;

pub use crate::transport::{HttpResponse, ResponseBody, Transport, TransportError};
pub use types::{AgentEvent, AgentSettings, NoTools, Outcome, ToolHost, ToolOutcome};

use crate::context::{assemble_context, AssembledContext, ContextSettings};
use crate::prompt::{self, ApprovalPolicy, DELEGATE_TOOL, RECALL_TOOL};
use crate::provider::{
    build_request, classify_http_error, retry_plan, AssistantMessage, FailureKind, HttpRequest, ModelError,
    StreamDecoder, StreamEvent,
};
use crate::recall::{run_recall_with, RecallContext};
use crate::sse::SseParser;
use crate::state::{apply_turn, ExtractionRules, SessionState};
use crate::store::{NewToolExecution, SessionTurns, SharedStore, Store};
use crate::tokens::Calibration;
use crate::{Approval, Error, NewAttachment, NewTurn, Result, ToolCall, TurnStatus};
use delegate::{delegate, Delegation, NEEDS_ORCHESTRATOR_DIRECTORY};
use serde_json::{json, Value};
use std::ops::ControlFlow;

/// How often, at most, streamed text is checkpointed into the archive.
pub const CHECKPOINT_INTERVAL_MS: i64 = 500;

/// Runs the loop for a new user message. The message is committed first, whatever happens next.
pub async fn send_message<T: Transport, H: ToolHost>(
    archive: &dyn SharedStore,
    transport: &T,
    tools: &H,
    settings: &AgentSettings,
    session_id: &str,
    text: &str,
    on_event: &mut dyn FnMut(AgentEvent),
) -> Result<Outcome> {
    send_turn(archive, transport, tools, settings, session_id, &NewTurn::user(text), on_event).await
}

/// [`send_message`] with the user's turn as given (e.g. with metadata such as a client key).
pub async fn send_turn<T: Transport, H: ToolHost>(
    archive: &dyn SharedStore,
    transport: &T,
    tools: &H,
    settings: &AgentSettings,
    session_id: &str,
    turn: &NewTurn,
    on_event: &mut dyn FnMut(AgentEvent),
) -> Result<Outcome> {
    let message = UserMessage { turn, attachments: &[] };
    send_user_message(archive, transport, tools, settings, session_id, message, on_event).await
}

/// A user's message: the turn, and the images and files it carries.
#[derive(Debug, Clone, Copy)]
pub struct UserMessage<'a> {
    /// The turn (its text and metadata, such as a client key).
    pub turn: &'a NewTurn,
    /// Its attachments, saved with it (each at most `settings.provider.max_attachment_bytes`).
    pub attachments: &'a [NewAttachment],
}

/// [`send_turn`] for a message with attachments: the turn and its attachments are committed together
/// first (an attachment over the limit refuses the message before anything is saved), then the loop
/// runs. The attachments go to the model with the message (see [`crate::context`] and `provider`).
pub async fn send_user_message<T: Transport, H: ToolHost>(
    archive: &dyn SharedStore,
    transport: &T,
    tools: &H,
    settings: &AgentSettings,
    session_id: &str,
    message: UserMessage<'_>,
    on_event: &mut dyn FnMut(AgentEvent),
) -> Result<Outcome> {
    save_user_message(&mut *archive.store()?, settings, session_id, message, on_event)?;
    continue_session(archive, transport, tools, settings, session_id, on_event).await
}

/// Commits a user's message (and its attachments) without asking the model: what [`send_user_message`]
/// does first, and all that can be done offline. [`continue_session`] answers it later.
pub fn save_user_message(
    store: &mut Store,
    settings: &AgentSettings,
    session_id: &str,
    message: UserMessage<'_>,
    on_event: &mut dyn FnMut(AgentEvent),
) -> Result<crate::Turn> {
    let limit = settings.provider.attachment_limit();
    let user = store.append_turn_with_attachments(session_id, message.turn, message.attachments, limit)?;
    on_event(AgentEvent::TurnAppended { turn: user.clone() });
    update_state(store, settings, session_id, &user)?;
    Ok(user)
}

/// Runs the loop from the session's current end (after a user message, or to retry/continue).
pub async fn continue_session<T: Transport, H: ToolHost>(
    archive: &dyn SharedStore,
    transport: &T,
    tools: &H,
    settings: &AgentSettings,
    session_id: &str,
    on_event: &mut dyn FnMut(AgentEvent),
) -> Result<Outcome> {
    let mut run = Run { archive, transport, tools, settings, session_id, on_event, needs: None };
    let result = run.run().await;
    if let Err(e) = &result {
        run.emit(AgentEvent::Error { kind: e.kind(), message: e.to_string() });
    }
    result
}

/// One run of the loop: what every step needs, borrowed once (the store only for a step at a time:
/// [`SharedStore`]). Steps: [`Run::assemble_request`], [`Run::call_model`], [`Run::stream_reply`],
/// [`Run::finalise_reply`], [`Run::dispatch`].
struct Run<'a, T, H> {
    archive: &'a dyn SharedStore,
    transport: &'a T,
    tools: &'a H,
    settings: &'a AgentSettings,
    session_id: &'a str,
    on_event: &'a mut dyn FnMut(AgentEvent),
    /// What the tool call being run needs before it can work (the result turn's `needs`), if anything.
    needs: Option<&'static str>,
}

/// The request for one model call, and what to note about it once the reply's usage is known.
struct Prepared {
    request: HttpRequest,
    manifest_id: i64,
    prompt_chars: usize,
    /// The images the request carries (their names), to name them if the model refuses them.
    images: Vec<String>,
}

impl<T: Transport, H: ToolHost> Run<'_, T, H> {
    fn emit(&mut self, event: AgentEvent) {
        (self.on_event)(event);
    }

    fn update_state(&mut self, turn: &crate::Turn) -> Result<()> {
        update_state(&mut *self.archive.store()?, self.settings, self.session_id, turn)
    }

    async fn run(&mut self) -> Result<Outcome> {
        let model = &self.settings.provider.model;
        let mut calibration = calibration_of(&*self.archive.store()?, model)?;
        let definitions = tool_definitions(self.tools, self.settings);
        let system = prompt::system_prompt(&self.settings.prompt);

        // A reply cut short is continued by the first call (and only the first).
        let mut resume = resume::resumable(&*self.archive.store()?, self.session_id)?;
        for _ in 0..self.settings.max_iterations.max(1) {
            let prepared = self.assemble_request(&system, calibration.ratio(), &definitions, &mut resume)?;
            let response = self.call_model(&prepared).await?;
            let (n, message) = match self.stream_reply(response, resume.take()).await? {
                ControlFlow::Continue(reply) => reply,
                ControlFlow::Break(outcome) => return Ok(outcome),
            };
            self.finalise_reply(n, &message, &prepared, &mut calibration)?;
            if message.tool_calls.is_empty() {
                return Ok(Outcome::Done { assistant_turn: n });
            }
            for call in &message.tool_calls {
                self.dispatch(call, n, &definitions).await?;
            }
        }
        Ok(Outcome::IterationLimit)
    }

    /// Assembles the request from the archive and records its manifest. With a reply to `resume`, the
    /// request ends with its saved text as the assistant's own words to go on from (when the context
    /// does not end with it, the reply is not resumed: `resume` is cleared and a new one is asked for).
    fn assemble_request(
        &mut self,
        system: &str,
        chars_per_token: f64,
        definitions: &[Value],
        resume: &mut Option<crate::Turn>,
    ) -> Result<Prepared> {
        let mut store = self.archive.store()?;
        let mut assembled = assemble(&store, self.settings, system, chars_per_token, self.session_id)?;
        if let Some(cut) = resume.as_ref() {
            let last =
                assembled.messages.last_mut().filter(|m| m.role == crate::Role::Assistant && m.tool_calls.is_empty());
            match last {
                Some(m) if assembled.manifest.turn_numbers.last() == Some(&cut.turn_number) => {
                    m.content = resume::Splice::resume(&cut.content).prefix().to_owned();
                }
                _ => *resume = None,
            }
        }
        let mut manifest = assembled.manifest.clone();
        manifest.created_at = crate::now_ms();
        let manifest_id = store.record_manifest(&manifest)?;
        let prompt_chars = assembled.messages.iter().map(|m| m.content.chars().count()).sum();
        let request = build_request(&self.settings.provider, &assembled.messages, definitions);
        let images = assembled.messages.iter().flat_map(|m| &m.images).map(|i| i.attachment.display_name()).collect();
        Ok(Prepared { request, manifest_id, prompt_chars, images })
    }

    /// Calls the model, retrying what is worth retrying.
    async fn call_model(&mut self, prepared: &Prepared) -> Result<HttpResponse<T::Body>> {
        let request = &prepared.request;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let err = match self.transport.send(request).await {
                Ok(resp) if (200..300).contains(&resp.status) => return Ok(resp),
                Ok(mut resp) => {
                    let retry_after = resp.header("retry-after").map(str::to_owned);
                    let mut body = Vec::new();
                    while let Some(Ok(chunk)) = resp.body.chunk().await {
                        body.extend_from_slice(&chunk);
                        if body.len() > 64 * 1024 {
                            break;
                        }
                    }
                    let body = String::from_utf8_lossy(&body);
                    let err = classify_http_error(resp.status, retry_after.as_deref(), &body);
                    crate::provider::name_refused_images(err, &body, &prepared.images)
                }
                Err(TransportError::Aborted) => {
                    return Err(Error::Invalid("stopped by the user before the model answered".into()))
                }
                Err(TransportError::Cors(m)) => ModelError::Cors { message: m },
                Err(TransportError::Network(m)) => ModelError::Network { message: m },
            };
            match retry_plan(&err, attempt) {
                Some(wait) => {
                    let wait_ms = wait.as_millis() as u64;
                    self.emit(AgentEvent::Retrying { attempt, wait_ms, kind: err.kind(), reason: err.to_string() });
                    self.transport.sleep_ms(wait_ms).await;
                }
                None => return Err(Error::Model(err)),
            }
        }
    }

    /// Streams the reply into an `interrupted` turn, checkpointing as it grows. Continues with the turn
    /// number and the whole reply; breaks with the outcome when the reply was cut or stopped (the
    /// partial text is saved). A malformed reply is saved as an `error` turn and is an error.
    ///
    /// With a turn to `resume`, the reply goes into that turn, after its saved text (see `resume.rs`).
    async fn stream_reply(
        &mut self,
        response: HttpResponse<T::Body>,
        resume: Option<crate::Turn>,
    ) -> Result<ControlFlow<Outcome, (i64, AssistantMessage)>> {
        let (archive, transport, session_id) = (self.archive, self.transport, self.session_id);
        let resumed = resume.is_some();
        let (turn, mut splice) = match resume {
            Some(cut) => {
                let splice = resume::Splice::resume(&cut.content);
                (cut, splice)
            }
            None => (
                archive
                    .store()?
                    .append_turn(session_id, &NewTurn::assistant("").with_status(TurnStatus::Interrupted))?,
                resume::Splice::fresh(),
            ),
        };
        let n = turn.turn_number;
        (self.on_event)(AgentEvent::TurnAppended { turn });
        let mut text = splice.prefix().to_owned();
        // A resumed reply's saved text is rewritten only once something is added to it.
        let start_len = text.len();
        if resumed {
            // The reply's text so far, as the start of the stream the UI shows.
            (self.on_event)(AgentEvent::StreamDelta { turn_number: n, text: text.clone() });
        }
        let mut body = response.body;
        let mut parser = SseParser::new();
        let mut decoder = StreamDecoder::new(self.settings.provider.kind);
        // The first words are saved as soon as they arrive, then at most every CHECKPOINT_INTERVAL_MS.
        let (mut last_checkpoint, mut saved_len) = (transport.now_ms(), text.len());
        let mut aborted = None;
        while let Some(chunk) = body.chunk().await {
            let bytes = match chunk {
                Ok(b) => b,
                Err(TransportError::Aborted) => {
                    aborted = Some("stopped by the user".to_owned());
                    break;
                }
                Err(TransportError::Network(m) | TransportError::Cors(m)) => {
                    aborted = Some(format!("the connection broke: {m}"));
                    break;
                }
            };
            let mut shown = Vec::new();
            for ev in parser.push(&bytes) {
                feed(&mut decoder, &mut splice, &ev, n, &mut text, &mut |e| shown.push(e));
            }
            let due = saved_len == 0 || transport.now_ms() - last_checkpoint >= CHECKPOINT_INTERVAL_MS;
            if text.len() > saved_len && due {
                archive.store()?.checkpoint_turn(session_id, n, &text)?;
                (last_checkpoint, saved_len) = (transport.now_ms(), text.len());
            }
            // Shown after the save that covers them (when one was due): a tab closed the moment the
            // first words appear still finds them in the archive.
            shown.into_iter().for_each(|e| (self.on_event)(e));
        }
        for ev in parser.finish() {
            feed(&mut decoder, &mut splice, &ev, n, &mut text, self.on_event);
        }
        splice.finish();
        let finished = decoder.finish().map(|mut message| {
            if resumed {
                message.content = text.clone();
            }
            message
        });
        match (aborted, finished) {
            (Some(reason), _) => {
                if !resumed || text.len() > start_len {
                    archive.store()?.checkpoint_turn(session_id, n, &text)?;
                }
                Ok(ControlFlow::Break(Outcome::Interrupted { assistant_turn: n, message: reason }))
            }
            (None, Ok(message)) => Ok(ControlFlow::Continue((n, message))),
            (None, Err(failure)) => {
                let partial = if resumed { text.clone() } else { failure.partial.content.clone() };
                if failure.kind == FailureKind::Cut {
                    if !resumed || partial.len() > start_len {
                        archive.store()?.checkpoint_turn(session_id, n, &partial)?;
                    }
                    return Ok(ControlFlow::Break(Outcome::Interrupted {
                        assistant_turn: n,
                        message: failure.message,
                    }));
                }
                let mut error_turn = NewTurn::assistant(partial).with_status(TurnStatus::Error);
                error_turn.metadata =
                    json!({"error": failure.message, "raw": failure.raw, "model": self.settings.provider.model});
                let failed = archive.store()?.finalize_turn(session_id, n, &error_turn)?;
                (self.on_event)(AgentEvent::TurnAppended { turn: failed });
                Err(Error::Invalid(format!("the model's reply could not be read: {}", failure.message)))
            }
        }
    }

    /// Finalises the assistant turn with its usage; records usage and calibration; updates the register.
    fn finalise_reply(
        &mut self,
        n: i64,
        message: &AssistantMessage,
        prepared: &Prepared,
        calibration: &mut Calibration,
    ) -> Result<()> {
        let model = &self.settings.provider.model;
        let mut final_turn = NewTurn::assistant_calls(message.content.clone(), message.tool_calls.clone());
        final_turn.metadata = reply_metadata(model, message);
        let stored = self.archive.store()?.finalize_turn(self.session_id, n, &final_turn)?;
        self.emit(AgentEvent::TurnAppended { turn: stored.clone() });
        if let Some(u) = message.usage {
            let mut store = self.archive.store()?;
            store.add_usage(self.session_id, u.prompt_tokens, u.completion_tokens)?;
            store.set_manifest_usage(
                prepared.manifest_id,
                &json!({"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens}),
            )?;
            if calibration.observe(prepared.prompt_chars, u.prompt_tokens) {
                store.set_calibration(model, calibration.chars_per_token, i64::from(calibration.samples))?;
            }
        }
        self.update_state(&stored)
    }

    /// Runs one tool call of assistant turn `n` and commits its result.
    async fn dispatch(&mut self, call: &ToolCall, n: i64, definitions: &[Value]) -> Result<()> {
        self.emit(AgentEvent::ToolStarted { turn_number: n, call: call.clone() });
        let started = self.transport.now_ms();
        let (outcome, approval) = self.run_tool(call, n, definitions).await?;
        let duration_ms = self.transport.now_ms() - started;
        let mut result = NewTurn::tool_result(call.id.clone(), call.name.clone(), outcome.content);
        result.metadata = json!({"success": outcome.success, "duration_ms": duration_ms});
        if let Some(whole) = outcome.result {
            result.metadata["result"] = whole;
        }
        if let Some(needs) = self.needs.take() {
            result.metadata["needs"] = json!(needs);
        }
        let exec = NewToolExecution {
            tool_name: call.name.clone(),
            arguments: call.arguments.clone(),
            success: outcome.success,
            duration_ms,
            approval,
        };
        let stored =
            self.archive.store()?.append_tool_result_with(self.session_id, &result, &exec, &outcome.attachments)?;
        self.emit(AgentEvent::TurnAppended { turn: stored.clone() });
        self.emit(AgentEvent::ToolFinished {
            turn_number: stored.turn_number,
            tool_name: call.name.clone(),
            success: outcome.success,
            duration_ms,
        });
        self.update_state(&stored)
    }

    /// The tool's result and how it was approved: `delegate_task` (after the user's yes) and
    /// `conversation_recall` here, offered host tools by the host, anything else refused.
    async fn run_tool(&mut self, call: &ToolCall, n: i64, definitions: &[Value]) -> Result<(ToolOutcome, Approval)> {
        let (settings, tools) = (self.settings, self.tools);
        let refused = |content: &str| ToolOutcome::text(content, false);
        Ok(if call.name == DELEGATE_TOOL {
            match settings.orchestrator_url.as_deref().filter(|_| settings.prompt.delegation) {
                None => (refused("delegate_task is not available: no orchestrator is configured."), Approval::Auto),
                Some(base_url) => {
                    let (session, place) = {
                        let store = self.archive.store()?;
                        let session = store.get_session(self.session_id)?;
                        // A workspace is a label; where it lives on the orchestrator's machine is its setting.
                        let place = store.workspace_settings(&session.workspace)?;
                        (session, place)
                    };
                    let at = Delegation {
                        base_url,
                        session_id: self.session_id,
                        workspace: &session.workspace,
                        directory: place.directory(),
                        manual_approvals: place.manual_approvals,
                        turn_number: n,
                    };
                    if at.directory.is_none() {
                        // Nothing to approve: `delegate` sends nothing and says how to set the directory.
                        self.needs = Some(NEEDS_ORCHESTRATOR_DIRECTORY);
                        (delegate(self.archive, self.transport, &at, call, self.on_event).await?, Approval::Auto)
                    } else if !tools.approve(call).await {
                        (refused("The user declined to delegate this task."), Approval::Denied)
                    } else {
                        (delegate(self.archive, self.transport, &at, call, self.on_event).await?, Approval::Approved)
                    }
                }
            }
        } else if call.name == RECALL_TOOL {
            // With recall by meaning on, the query is embedded first (by the host, outside the archive).
            let query_vector = match crate::recall::search_query(&call.arguments) {
                Some(query) => tools.embed_query(&query).await,
                None => None,
            };
            let store = self.archive.store()?;
            // The exchange that asked (its request, this call, earlier results) is not an answer to it.
            let context = RecallContext { exclude_from_turn: store.latest_user_turn(self.session_id)?, query_vector };
            let content = run_recall_with(&*store, self.session_id, &call.arguments, &context);
            (ToolOutcome::text(content, true), Approval::Auto)
        } else if offered(definitions, &call.name) {
            match tools.approval(&call.name) {
                ApprovalPolicy::Auto => (tools.call(call).await, Approval::Auto),
                ApprovalPolicy::AskEveryTime if tools.approve(call).await => {
                    (tools.call(call).await, Approval::Approved)
                }
                ApprovalPolicy::AskEveryTime => (refused("The user declined this tool call."), Approval::Denied),
            }
        } else {
            (refused(&format!("Error: there is no tool named {:?}.", call.name)), Approval::Auto)
        })
    }
}

/// The tools the loop offers the model, in the OpenAI function format: the built-in ones
/// (`conversation_recall`, and `delegate_task` when delegation is on) and the host's.
pub fn tool_definitions<H: ToolHost>(tools: &H, settings: &AgentSettings) -> Vec<Value> {
    let mut definitions: Vec<Value> =
        prompt::builtin_tools(&settings.prompt).into_iter().map(|t| t.definition).collect();
    definitions.extend(tools.definitions());
    definitions
}

/// The context the loop would send next for `session_id`, assembled exactly as the loop does (system
/// prompt, state register, recent turns within the budget, the model's calibrated token estimate).
/// Reads only: nothing is sent or recorded.
pub fn next_context(store: &Store, settings: &AgentSettings, session_id: &str) -> Result<AssembledContext> {
    let ratio = calibration_of(store, &settings.provider.model)?.ratio();
    assemble(store, settings, &prompt::system_prompt(&settings.prompt), ratio, session_id)
}

fn calibration_of(store: &Store, model: &str) -> Result<Calibration> {
    Ok(match store.calibration(model)? {
        Some((ratio, samples)) => Calibration { chars_per_token: ratio, samples: samples as u32 },
        None => Calibration::default(),
    })
}

fn assemble(
    store: &Store,
    settings: &AgentSettings,
    system: &str,
    chars_per_token: f64,
    session_id: &str,
) -> Result<AssembledContext> {
    let session = store.get_session(session_id)?;
    let state = SessionState::from_json(&session.state);
    let image_tokens = match settings.provider.kind {
        crate::provider::ProviderKind::OpenAi => crate::context::ImageTokens::OpenAi,
        crate::provider::ProviderKind::Anthropic => crate::context::ImageTokens::Anthropic,
    };
    let context = ContextSettings { chars_per_token, image_tokens, ..settings.context };
    let source = SessionTurns::new(store, session_id)?;
    assemble_context(&context, system, &state, &source)
}

/// Whether a tool of this name was offered to the model.
fn offered(definitions: &[Value], name: &str) -> bool {
    definitions.iter().any(|d| d["function"]["name"] == name)
}

/// A complete reply's metadata: the model, finish reason and usage; `refused` for a refusal; the
/// reasoning text, the field it came in and Anthropic's thinking blocks, verbatim, when there are any
/// (context assembly reads them back to send them with the turn's tool calls: `ReasoningReplay`).
fn reply_metadata(model: &str, message: &AssistantMessage) -> Value {
    let usage =
        message.usage.map(|u| json!({"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens}));
    let mut metadata = json!({"model": model, "finish_reason": message.finish_reason, "usage": usage});
    if message.refusal {
        metadata["refused"] = json!(true);
    }
    if !message.reasoning.is_empty() {
        metadata["reasoning"] = json!(message.reasoning);
    }
    if let Some(field) = &message.reasoning_field {
        metadata["reasoning_field"] = json!(field);
    }
    if !message.reasoning_blocks.is_empty() {
        metadata["reasoning_blocks"] = Value::Array(message.reasoning_blocks.clone());
    }
    if !message.call_extras.is_empty() {
        let extras: serde_json::Map<String, Value> = message.call_extras.iter().cloned().collect();
        metadata["tool_call_extra_content"] = Value::Object(extras);
    }
    metadata
}

/// Decodes one SSE event of the reply, passing text and reasoning on to the UI as they arrive.
fn feed(
    decoder: &mut StreamDecoder,
    splice: &mut resume::Splice,
    ev: &crate::sse::SseEvent,
    turn_number: i64,
    text: &mut String,
    on_event: &mut dyn FnMut(AgentEvent),
) {
    for out in decoder.feed(ev) {
        match out {
            StreamEvent::TextDelta(delta) => {
                let added = splice.push(&delta);
                if !added.is_empty() {
                    text.push_str(&added);
                    on_event(AgentEvent::StreamDelta { turn_number, text: added });
                }
            }
            StreamEvent::ReasoningDelta(delta) if !delta.is_empty() => {
                on_event(AgentEvent::ReasoningDelta { turn_number, text: delta });
            }
            _ => {}
        }
    }
}

/// Applies a stored turn to the session-state register and saves it.
fn update_state(store: &mut Store, settings: &AgentSettings, session_id: &str, turn: &crate::Turn) -> Result<()> {
    record_in_state(store, &settings.rules, &settings.provider.model, session_id, turn)
}

/// Brings the session's state register up to date with a committed turn (a turn already applied, or
/// older than the last one applied, changes nothing). The loop does this for every turn it commits;
/// a host appending turns itself does it too.
pub fn record_in_state(
    store: &mut Store,
    rules: &ExtractionRules,
    model: &str,
    session_id: &str,
    turn: &crate::Turn,
) -> Result<()> {
    let session = store.get_session(session_id)?;
    let mut state = SessionState::from_json(&session.state);
    if state.session.id.is_empty() {
        state = SessionState::new(&session.id, &session.workspace, model);
    }
    if apply_turn(&mut state, turn, rules) {
        let value =
            serde_json::to_value(&state).map_err(|e| Error::Invalid(format!("saving the session state: {e}")))?;
        store.update_state(session_id, &value)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::TokenUsage;

    /// A refusal is marked, and reasoning is kept verbatim beside the reply (text, field, blocks), so
    /// the UI can badge it and context assembly can send the reasoning back.
    #[test]
    fn reply_metadata_keeps_provider_data_on_tool_calls() {
        let signature = json!({"google": {"thought_signature": "Sig"}});
        let message = AssistantMessage {
            call_extras: vec![("call_1".into(), signature.clone())],
            finish_reason: Some("tool_calls".into()),
            ..AssistantMessage::default()
        };
        let metadata = reply_metadata("gemini-3-pro-preview", &message);
        assert_eq!(metadata["tool_call_extra_content"], json!({"call_1": signature}));
        let replay = crate::context::ReasoningReplay::from_metadata(&metadata).expect("something to send back");
        assert_eq!(replay.call_extra("call_1"), Some(&signature));
        assert_eq!(replay.call_extra("call_2"), None);
    }

    #[test]
    fn reply_metadata_keeps_refusals_and_reasoning() {
        let block = json!({"type": "thinking", "thinking": "Hmm.", "signature": "Sig"});
        let message = AssistantMessage {
            content: "I can't help with that.".into(),
            finish_reason: Some("refusal".into()),
            usage: Some(TokenUsage { prompt_tokens: 10, completion_tokens: 3 }),
            refusal: true,
            reasoning: "Hmm.".into(),
            reasoning_field: None,
            reasoning_blocks: vec![block.clone()],
            ..AssistantMessage::default()
        };
        assert_eq!(
            reply_metadata("claude", &message),
            json!({"model": "claude", "finish_reason": "refusal", "usage": {"prompt_tokens": 10, "completion_tokens": 3},
                   "refused": true, "reasoning": "Hmm.", "reasoning_blocks": [block]})
        );
        let deepseek = AssistantMessage {
            reasoning: "Think.".into(),
            reasoning_field: Some("reasoning_content".into()),
            finish_reason: Some("stop".into()),
            ..AssistantMessage::default()
        };
        assert_eq!(
            reply_metadata("deepseek-reasoner", &deepseek),
            json!({"model": "deepseek-reasoner", "finish_reason": "stop", "usage": null,
                   "reasoning": "Think.", "reasoning_field": "reasoning_content"})
        );
        // A plain reply's metadata is what it always was.
        let plain = AssistantMessage { content: "Hi".into(), ..AssistantMessage::default() };
        assert_eq!(reply_metadata("m", &plain), json!({"model": "m", "finish_reason": null, "usage": null}));
    }
}
