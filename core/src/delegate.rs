//! `delegate_task`: hands a goal to a Loom-compatible orchestrator and follows it to the end.
//!
//! Submit (`POST /tasks`), record the task, then — with `wait: true` — open the event stream *before*
//! asking for the task's status, so an already-finished task is not missed (Loom's stream only forwards
//! events published after the subscription). Every event is archived verbatim; progress goes to the UI
//! as [`AgentEvent::TaskProgress`]. When the stream breaks, the status endpoint is polled instead.
//! With `wait: false` the tool returns the task id at once.

use crate::agent::{AgentEvent, ResponseBody, ToolOutcome, Transport};
use crate::orchestrator::{
    create_task_request, decode_sse_event, format_not_started, format_result, format_still_running, format_submitted,
    parse_created_task, parse_task_status, task_status_request, task_stream_request, TaskProgress, TaskSubmission,
};
use crate::sse::SseParser;
use crate::store::Store;
use crate::{Result, TaskRecord, TaskStatus, ToolCall};
use serde_json::Value;

/// Polls of the status endpoint after the stream broke, one a second, at most (half an hour).
const MAX_POLLS: u32 = 1800;
/// Consecutive failed polls after which the orchestrator counts as gone (the task stays re-attachable).
const MAX_FAILED_POLLS: u32 = 30;

/// Where a delegation runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delegation<'a> {
    /// The orchestrator's base URL (Settings → Orchestrator URL), without the `/tasks` path.
    pub base_url: &'a str,
    /// The session the task belongs to; sent as metadata and recorded with the task.
    pub session_id: &'a str,
    /// The session's workspace directory, where the orchestrator runs the task.
    pub workspace: &'a str,
    /// The assistant turn that asked for it.
    pub turn_number: i64,
}

/// Runs one `delegate_task` call (already approved by the user) and returns the tool result.
pub async fn delegate<T: Transport>(
    store: &mut Store,
    transport: &T,
    at: &Delegation<'_>,
    call: &ToolCall,
    on_event: &mut dyn FnMut(AgentEvent),
) -> Result<ToolOutcome> {
    let args: Value = call.arguments_json().unwrap_or(Value::Null);
    let Some(goal) = args["goal"].as_str().map(str::trim).filter(|g| !g.is_empty()) else {
        return Ok(ToolOutcome {
            content: "delegate_task error: the \"goal\" argument is required (a non-empty string).".into(),
            success: false,
        });
    };
    let wait = args["wait"].as_bool().unwrap_or(true);
    let submission = TaskSubmission {
        goal: goal.to_owned(),
        workspace: at.workspace.to_owned(),
        context: args.get("context").cloned().unwrap_or(Value::Null),
        session_id: at.session_id.to_owned(),
        turn: at.turn_number,
    };
    let created = match fetch_text(transport, &create_task_request(at.base_url, &submission)).await {
        Ok((status, body)) if (200..300).contains(&status) => parse_created_task(&body),
        Ok((status, body)) => {
            Err(crate::Error::Invalid(format!("the orchestrator answered {status}: {}", first_line(&body))))
        }
        Err(message) => Err(crate::Error::Invalid(format!(
            "the orchestrator at {} is unreachable ({message}); check Settings → Orchestrator URL, and that it allows \
             this page's origin (Loom allows only localhost and 127.0.0.1 by default)",
            at.base_url
        ))),
    };
    let created = match created {
        Ok(c) => c,
        Err(e) => return Ok(ToolOutcome { content: format_not_started(goal, &e.to_string()), success: false }),
    };
    let now = crate::now_ms();
    let mut record = TaskRecord {
        task_id: created.task_id.clone(),
        session_id: at.session_id.to_owned(),
        turn_number: at.turn_number,
        goal: goal.to_owned(),
        context: submission.context.to_string(),
        status: if created.status.is_unknown() { TaskStatus::Pending } else { created.status.clone() },
        result_delivered: false,
        created_at: now,
        updated_at: now,
    };
    store.upsert_task(&record)?;
    let mut link = Link { store, transport, base_url: at.base_url, on_event };
    link.report(
        &TaskProgress { status: record.status.clone(), ..TaskProgress::new(&record.task_id, goal) },
        "task_submitted",
    );
    if !wait {
        return Ok(ToolOutcome { content: format_submitted(&record.task_id, goal), success: true });
    }

    let (progress, broken) = link.follow(&record.task_id, goal, true).await?;
    let store = link.store;
    record.status = progress.status.clone();
    record.updated_at = crate::now_ms();
    if !progress.is_terminal() {
        store.upsert_task(&record)?;
        let reason = broken.unwrap_or_else(|| "no answer".into());
        return Ok(ToolOutcome { content: format_still_running(&progress, &reason), success: false });
    }
    record.result_delivered = true;
    store.upsert_task(&record)?;
    let success = progress.status == TaskStatus::Completed;
    Ok(ToolOutcome { content: format_result(&progress, progress.status.as_str()), success })
}

/// A delegation's I/O, borrowed once: the archive, the orchestrator at `base_url`, and the observer.
struct Link<'a, T> {
    store: &'a mut Store,
    transport: &'a T,
    base_url: &'a str,
    on_event: &'a mut dyn FnMut(AgentEvent),
}

impl<T: Transport> Link<'_, T> {
    /// Tells the observer where the task stands after an event (or a status snapshot).
    fn report(&mut self, progress: &TaskProgress, event_type: &str) {
        (self.on_event)(AgentEvent::TaskProgress {
            task_id: progress.task_id.clone(),
            event_type: event_type.to_owned(),
            status: progress.status.clone(),
            goal: progress.goal.clone(),
            checklist: progress.checklist(),
        });
    }

    /// Follows a submitted task until it ends (or the orchestrator goes away): stream first, then
    /// status, archiving every event. Returns the progress and, when it could not be followed to the
    /// end, why.
    async fn follow(&mut self, task_id: &str, goal: &str, wait: bool) -> Result<(TaskProgress, Option<String>)> {
        let (transport, base_url) = (self.transport, self.base_url);
        let mut progress = TaskProgress::new(task_id, goal);
        let stream = match wait {
            true => transport.send(&task_stream_request(base_url, task_id)).await.ok().filter(|r| r.status == 200),
            false => None,
        };
        // Now that the stream listens, the status tells whether the task already ended.
        if let Ok((200, body)) = fetch_text(transport, &task_status_request(base_url, task_id)).await {
            if let Ok(status) = parse_task_status(&body) {
                progress.apply_status(&status);
            }
        }
        let mut broken = None;
        if !wait {
            let reason = (!progress.is_terminal()).then(|| "still running".to_owned());
            return Ok((progress, reason));
        }
        if let (false, Some(mut response)) = (progress.is_terminal(), stream) {
            let mut parser = SseParser::new();
            'read: loop {
                match response.body.chunk().await {
                    Some(Ok(bytes)) => {
                        for ev in parser.push(&bytes) {
                            let event = decode_sse_event(&ev);
                            self.store.append_task_event(task_id, event.event_type(), &ev.data)?;
                            progress.apply(&event);
                            self.report(&progress, event.event_type());
                            if progress.is_terminal() {
                                break 'read;
                            }
                        }
                    }
                    Some(Err(e)) => {
                        broken = Some(format!("{e:?}"));
                        break;
                    }
                    None => {
                        broken = Some("the event stream closed early".to_owned());
                        break;
                    }
                }
            }
        } else if !progress.is_terminal() {
            broken = Some("the event stream could not be opened".to_owned());
        }
        // Fallback: poll the status until the task ends.
        let (mut polls, mut failures_in_a_row) = (0, 0);
        while !progress.is_terminal() && polls < MAX_POLLS && failures_in_a_row < MAX_FAILED_POLLS {
            polls += 1;
            transport.sleep_ms(1000).await;
            match fetch_text(transport, &task_status_request(base_url, task_id)).await {
                Ok((200, body)) => {
                    failures_in_a_row = 0;
                    if let Ok(status) = parse_task_status(&body) {
                        progress.apply_status(&status);
                        self.report(&progress, "status");
                    }
                }
                Ok((status, _)) => {
                    failures_in_a_row += 1;
                    broken = Some(format!("the orchestrator answered {status}"));
                }
                Err(e) => {
                    failures_in_a_row += 1;
                    broken = Some(format!("the orchestrator stopped answering ({e})"));
                }
            }
        }
        Ok((progress, broken))
    }
}

/// Re-attaches to a session's delegated tasks whose result has not reached the conversation yet (after
/// `wait: false`, a reload, or a broken stream): follows each to its end and appends its result as a
/// tool turn (`delegate_task`), so the model sees it on the next request. With `wait: false` only tasks
/// that have already ended are delivered (one status request each, no waiting). Returns the appended
/// turns; tasks still running stay pending.
pub async fn deliver_pending_tasks<T: Transport>(
    store: &mut Store,
    transport: &T,
    base_url: &str,
    session_id: &str,
    wait: bool,
    on_event: &mut dyn FnMut(AgentEvent),
) -> Result<Vec<crate::Turn>> {
    let mut delivered = Vec::new();
    let mut link = Link { store, transport, base_url, on_event };
    for mut task in link.store.tasks(session_id)?.into_iter().filter(|t| !t.result_delivered) {
        let (progress, _broken) = link.follow(&task.task_id, &task.goal, wait).await?;
        let store = &mut *link.store;
        task.status = progress.status.clone();
        task.updated_at = crate::now_ms();
        if !progress.is_terminal() {
            store.upsert_task(&task)?;
            continue;
        }
        let text = format_result(&progress, progress.status.as_str());
        let mut turn =
            crate::NewTurn::tool_result(format!("task:{}", task.task_id), crate::prompt::DELEGATE_TOOL, text);
        turn.metadata = serde_json::json!({"task_id": task.task_id, "success": progress.status == TaskStatus::Completed, "delivered_later": true});
        let stored = store.append_turn(session_id, &turn)?;
        task.result_delivered = true;
        store.upsert_task(&task)?;
        (link.on_event)(AgentEvent::TurnAppended { turn: stored.clone() });
        delivered.push(stored);
    }
    Ok(delivered)
}

/// Sends a request and reads the whole body (bounded to 1 MiB).
async fn fetch_text<T: Transport>(
    transport: &T,
    req: &crate::provider::HttpRequest,
) -> std::result::Result<(u16, String), String> {
    let mut resp = transport.send(req).await.map_err(|e| format!("{e:?}"))?;
    let mut body = Vec::new();
    while let Some(chunk) = resp.body.chunk().await {
        body.extend_from_slice(&chunk.map_err(|e| format!("{e:?}"))?);
        if body.len() > 1 << 20 {
            break;
        }
    }
    Ok((resp.status, String::from_utf8_lossy(&body).into_owned()))
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(200).collect()
}
