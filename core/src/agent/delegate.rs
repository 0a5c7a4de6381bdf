//! `delegate_task`: hands a goal to a Loom-compatible orchestrator and follows it to the end.
//!
//! Submit (`POST /tasks`) with the workspace's orchestrator directory (a path on the orchestrator's
//! machine; without one nothing is sent and the tool says how to set it), record the task, then — with
//! `wait: true` — follow it:
//! - Loom's replaying stream first (`GET /runs/{task id}/stream?after_sequence=N`): after a drop it is
//!   reopened after the last sequence seen, with backoff ([`Transport::sleep_ms`]), a bounded number of
//!   times in a row without progress;
//! - where there is none (`404`), the live stream (`GET /tasks/{id}/stream`), opened *before* asking for
//!   the task's status, since it forwards only events published after the subscription and never closes
//!   for a task that already ended;
//! - when neither can be read, the status endpoint is polled.
//!
//! Every event is archived once: Loom's `sequence` (or `event_id`) identifies it across reconnects and
//! re-attachments (what the archive already holds is folded first and not archived again). Progress goes
//! to the UI as [`AgentEvent::TaskProgress`] (heartbeats and telemetry are archived, not reported). After a
//! terminal event the status is re-read until it agrees (Loom updates it some 50 ms later), a bounded
//! number of times. With `wait: false` the tool returns the task id at once. Steps held for approval
//! (`approval_mode: "manual"`) are answered with [`respond_to_approval`].

use std::collections::HashSet;

use super::{AgentEvent, ToolOutcome};
use crate::orchestrator::{
    approve_task_request, archived_event_key, create_task_request, decode_event, format_not_started, format_result,
    format_still_running, format_submitted, parse_created_task, parse_task_status, receive_sse_event,
    run_stream_request, task_status_request, task_stream_request, LoomEvent, TaskProgress, TaskSnapshot,
    TaskSubmission,
};
use crate::sse::SseParser;
use crate::store::{SharedStore, Store};
use crate::transport::{HttpRequest, HttpResponse, ResponseBody, Transport};
use crate::{Result, TaskRecord, TaskStatus, ToolCall};
use serde_json::Value;

/// Polls of the status endpoint after the streams failed, one a second, at most (half an hour).
const MAX_POLLS: u32 = 1800;
/// Consecutive failed polls after which the orchestrator counts as gone (the task stays re-attachable).
const MAX_FAILED_POLLS: u32 = 30;
/// Stream (re)connections in a row that bring no new event before falling back to polling.
const MAX_RECONNECTS: u32 = 6;
/// The first wait before reopening a stream, doubled each time up to [`MAX_BACKOFF_MS`].
const FIRST_BACKOFF_MS: u64 = 250;
/// The longest wait between two stream connections.
const MAX_BACKOFF_MS: u64 = 4000;
/// Status reads after a terminal event until the status agrees, [`CONFIRM_INTERVAL_MS`] apart.
const CONFIRM_READS: u32 = 10;
/// The wait between two of those reads.
const CONFIRM_INTERVAL_MS: u64 = 50;

pub use crate::orchestrator::NEEDS_ORCHESTRATOR_DIRECTORY;

/// The archived type of Cowork's own record of an approval decision it sent.
pub const APPROVAL_DECISION_EVENT: &str = "cowork_approval_decision";

/// Where a delegation runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delegation<'a> {
    /// The orchestrator's base URL (Settings → Orchestrator URL), without the `/tasks` path.
    pub base_url: &'a str,
    /// The session the task belongs to; sent as metadata and recorded with the task.
    pub session_id: &'a str,
    /// The session's workspace as the user names it (its label), for messages; never sent.
    pub workspace: &'a str,
    /// The workspace's orchestrator directory: a path on the orchestrator's machine, sent as Loom's
    /// `workspace`. `None`: not set, so [`delegate`] sends nothing and says how to set it.
    pub directory: Option<&'a str>,
    /// Have the orchestrator hold every step for the user's decision (`approval_mode: "manual"`).
    pub manual_approvals: bool,
    /// The assistant turn that asked for it.
    pub turn_number: i64,
}

/// The tool result when workspace `workspace` has no orchestrator directory (see
/// [`NEEDS_ORCHESTRATOR_DIRECTORY`]).
pub fn no_directory_message(workspace: &str) -> String {
    format!(
        "delegate_task is not available in workspace \"{workspace}\": this workspace has no orchestrator directory. \
         Set it with the ⚙ beside the workspace in the sidebar, or in Settings → Workspace."
    )
}

/// Runs one `delegate_task` call (already approved by the user) and returns the tool result. Without a
/// directory it returns at once, having sent nothing ([`no_directory_message`]).
pub async fn delegate<T: Transport>(
    archive: &dyn SharedStore,
    transport: &T,
    at: &Delegation<'_>,
    call: &ToolCall,
    on_event: &mut dyn FnMut(AgentEvent),
) -> Result<ToolOutcome> {
    let Some(directory) = at.directory.map(str::trim).filter(|d| !d.is_empty()) else {
        return Ok(ToolOutcome::text(no_directory_message(at.workspace), false));
    };
    let args: Value = call.arguments_json().unwrap_or(Value::Null);
    let Some(goal) = args["goal"].as_str().map(str::trim).filter(|g| !g.is_empty()) else {
        return Ok(ToolOutcome::text(
            "delegate_task error: the \"goal\" argument is required (a non-empty string).",
            false,
        ));
    };
    let wait = args["wait"].as_bool().unwrap_or(true);
    let submission = TaskSubmission {
        goal: goal.to_owned(),
        directory: directory.to_owned(),
        manual_approvals: at.manual_approvals,
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
        Err(e) => return Ok(ToolOutcome::text(format_not_started(goal, &e.to_string()), false)),
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
    archive.store()?.upsert_task(&record)?;
    let mut link = Link { archive, transport, base_url: at.base_url, on_event };
    link.report(
        &TaskProgress { status: record.status.clone(), ..TaskProgress::new(&record.task_id, goal) },
        "task_submitted",
    );
    if !wait {
        return Ok(ToolOutcome::text(format_submitted(&record.task_id, goal), true));
    }

    let (progress, broken) = link.follow(&record.task_id, goal, true).await?;
    let mut store = archive.store()?;
    record.status = progress.status.clone();
    record.updated_at = crate::now_ms();
    if !progress.is_terminal() {
        store.upsert_task(&record)?;
        let reason = broken.unwrap_or_else(|| "no answer".into());
        return Ok(ToolOutcome::text(format_still_running(&progress, &reason), false));
    }
    record.result_delivered = true;
    store.upsert_task(&record)?;
    let success = progress.status == TaskStatus::Completed;
    Ok(ToolOutcome::text(format_result(&progress, progress.status.as_str()), success))
}

/// A delegation's I/O, borrowed once: the archive (a step at a time), the orchestrator at `base_url`,
/// and the observer.
struct Link<'a, T> {
    archive: &'a dyn SharedStore,
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

    /// The task's status now, when the orchestrator answers with one.
    async fn snapshot(&self, task_id: &str) -> Option<TaskSnapshot> {
        match fetch_text(self.transport, &task_status_request(self.base_url, task_id)).await {
            Ok((200, body)) => parse_task_status(&body).ok(),
            _ => None,
        }
    }

    /// Follows a submitted task until it ends (or the orchestrator goes away): the streams first (see the
    /// module docs), then the status. Returns the progress and, when it could not be followed to the end,
    /// why.
    async fn follow(&mut self, task_id: &str, goal: &str, wait: bool) -> Result<(TaskProgress, Option<String>)> {
        let mut follow = Following::new(task_id, goal);
        // What the archive holds already (a re-attachment) is folded, and never archived again.
        let archived_events = self.archive.store()?.task_events(task_id)?;
        for archived in archived_events {
            if let Some(key) = archived_event_key(&archived.data) {
                follow.remember(&key);
            }
            follow.progress.apply(&decode_event(&archived.event_type, &archived.data));
        }
        if !wait {
            if !follow.progress.is_terminal() {
                if let Some(status) = self.snapshot(task_id).await {
                    follow.progress.apply_status(&status);
                }
            }
            let reason = (!follow.progress.is_terminal()).then(|| "still running".to_owned());
            return Ok((follow.progress, reason));
        }
        let broken = self.stream(&mut follow).await?;
        let mut progress = follow.progress;
        if progress.is_terminal() {
            if follow.ended_by_event {
                self.confirm_status(&mut progress).await;
            }
            return Ok((progress, None));
        }
        let broken = self.poll(&mut progress, broken).await;
        Ok((progress, broken))
    }

    /// Reads the streams until a terminal event (or a status that says the task ended), reconnecting a
    /// bounded number of times; returns why it stopped early, if it did.
    async fn stream(&mut self, follow: &mut Following) -> Result<Option<String>> {
        let (transport, base_url, task_id) = (self.transport, self.base_url, follow.progress.task_id.clone());
        let mut replaying = true;
        let mut idle_connections = 0;
        let mut broken = None;
        while !follow.progress.is_terminal() {
            let request = match replaying {
                true => run_stream_request(base_url, &task_id, follow.cursor),
                false => task_stream_request(base_url, &task_id),
            };
            let response = match transport.send(&request).await {
                Ok(r) if r.status == 200 => Some(r),
                Ok(r) if r.status == 404 && replaying => {
                    // No replaying stream (another orchestrator, an older Loom): the live one, from now on.
                    replaying = false;
                    continue;
                }
                Ok(r) => {
                    broken = Some(format!("the event stream answered {}", r.status));
                    None
                }
                Err(e) => {
                    broken = Some(format!("the event stream could not be opened ({e:?})"));
                    None
                }
            };
            // The live stream replays nothing: the status tells what happened before it listened.
            if !replaying || response.is_none() {
                if let Some(status) = self.snapshot(&task_id).await {
                    follow.progress.apply_status(&status);
                    self.report(&follow.progress, "status");
                }
            }
            if follow.progress.is_terminal() {
                break;
            }
            if let Some(mut response) = response {
                let (fresh, reason) = self.read(&mut response, follow).await?;
                if follow.progress.is_terminal() {
                    break;
                }
                broken = Some(reason);
                if fresh > 0 {
                    idle_connections = 0;
                }
            }
            idle_connections += 1;
            if idle_connections > MAX_RECONNECTS {
                break;
            }
            let backoff = (FIRST_BACKOFF_MS << (idle_connections - 1).min(8)).min(MAX_BACKOFF_MS);
            transport.sleep_ms(backoff).await;
        }
        Ok(broken)
    }

    /// Reads one stream until a terminal event or its end, archiving and folding each new event; returns
    /// how many were new and, when it ended without a terminal event, why.
    async fn read(&mut self, response: &mut HttpResponse<T::Body>, follow: &mut Following) -> Result<(usize, String)> {
        let mut parser = SseParser::new();
        let mut fresh = 0;
        loop {
            match response.body.chunk().await {
                Some(Ok(bytes)) => {
                    for ev in parser.push(&bytes) {
                        let received = receive_sse_event(&ev);
                        if !received.key().is_none_or(|key| follow.remember(&key)) {
                            continue;
                        }
                        if let Some(n) = received.sequence {
                            follow.cursor = follow.cursor.max(n);
                        }
                        let task_id = &follow.progress.task_id;
                        self.archive.store()?.append_task_event(task_id, &received.event_type, &received.data)?;
                        fresh += 1;
                        follow.progress.apply(&received.event);
                        // Loom's plan names its steps by id only; the status has their descriptions.
                        if matches!(received.event, LoomEvent::TaskPlanReady { .. })
                            && follow.progress.subtasks.iter().any(|s| s.description.is_empty())
                        {
                            if let Some(status) = self.snapshot(&follow.progress.task_id).await {
                                follow.progress.apply_status(&TaskSnapshot { status: TaskStatus::parse(""), ..status });
                            }
                        }
                        if !matches!(received.event, LoomEvent::Telemetry { .. }) {
                            self.report(&follow.progress, &received.event_type);
                        }
                        if follow.progress.is_terminal() {
                            follow.ended_by_event = true;
                            return Ok((fresh, String::new()));
                        }
                    }
                }
                Some(Err(e)) => return Ok((fresh, format!("the event stream broke ({e:?})"))),
                None => return Ok((fresh, "the event stream closed early".to_owned())),
            }
        }
    }

    /// After a terminal event: Loom updates the task's status a little later, so its status is re-read
    /// until it is final too (a bounded number of times), and taken in (the plan's final summaries).
    async fn confirm_status(&mut self, progress: &mut TaskProgress) {
        for read in 0..CONFIRM_READS {
            if read > 0 {
                self.transport.sleep_ms(CONFIRM_INTERVAL_MS).await;
            }
            if let Some(status) = self.snapshot(&progress.task_id).await.filter(TaskSnapshot::is_terminal) {
                progress.apply_status(&status);
                return;
            }
        }
    }

    /// Fallback: polls the status until the task ends or the orchestrator stops answering.
    async fn poll(&mut self, progress: &mut TaskProgress, mut broken: Option<String>) -> Option<String> {
        let (transport, base_url) = (self.transport, self.base_url);
        let (mut polls, mut failures_in_a_row) = (0, 0);
        while !progress.is_terminal() && polls < MAX_POLLS && failures_in_a_row < MAX_FAILED_POLLS {
            polls += 1;
            transport.sleep_ms(1000).await;
            match fetch_text(transport, &task_status_request(base_url, &progress.task_id)).await {
                Ok((200, body)) => {
                    failures_in_a_row = 0;
                    if let Ok(status) = parse_task_status(&body) {
                        progress.apply_status(&status);
                        self.report(progress, "status");
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
        if progress.is_terminal() {
            None
        } else {
            broken.or_else(|| Some("no answer".to_owned()))
        }
    }
}

/// One task being followed: its progress, the events already archived (by key), and the last sequence.
struct Following {
    progress: TaskProgress,
    seen: HashSet<String>,
    cursor: u64,
    /// The task ended with an event (not a status snapshot), so its status may still lag.
    ended_by_event: bool,
}

impl Following {
    fn new(task_id: &str, goal: &str) -> Following {
        Following { progress: TaskProgress::new(task_id, goal), seen: HashSet::new(), cursor: 0, ended_by_event: false }
    }

    /// Notes an event's key; `false` when it was seen before. Keeps the cursor at the highest sequence.
    fn remember(&mut self, key: &str) -> bool {
        if let Some(n) = key.strip_prefix("seq:").and_then(|n| n.parse::<u64>().ok()) {
            self.cursor = self.cursor.max(n);
        }
        self.seen.insert(key.to_owned())
    }
}

/// Re-attaches to a session's delegated tasks whose result has not reached the conversation yet (after
/// `wait: false`, a reload, or a broken stream): follows each to its end and appends its result as a
/// tool turn (`delegate_task`), so the model sees it on the next request. With `wait: false` only tasks
/// that have already ended are delivered (one status request each, no waiting). Returns the appended
/// turns; tasks still running stay pending.
pub async fn deliver_pending_tasks<T: Transport>(
    archive: &dyn SharedStore,
    transport: &T,
    base_url: &str,
    session_id: &str,
    wait: bool,
    on_event: &mut dyn FnMut(AgentEvent),
) -> Result<Vec<crate::Turn>> {
    let mut delivered = Vec::new();
    let mut link = Link { archive, transport, base_url, on_event };
    let pending = archive.store()?.tasks(session_id)?;
    for mut task in pending.into_iter().filter(|t| !t.result_delivered) {
        let (progress, _broken) = link.follow(&task.task_id, &task.goal, wait).await?;
        let mut store = archive.store()?;
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
        drop(store);
        (link.on_event)(AgentEvent::TurnAppended { turn: stored.clone() });
        delivered.push(stored);
    }
    Ok(delivered)
}

/// Answers a step the orchestrator holds for approval (a [`crate::orchestrator::PendingApproval`] of task
/// `task_id`): posts the decision ([`approve_task_request`]) and archives it as a task event
/// ([`APPROVAL_DECISION_EVENT`]: `{subtask_id, approved, resolved_pending}`). Returns whether the
/// orchestrator still held that step (Loom's `resolved_pending`; `false`: it was decided or ended
/// meanwhile). The pending approval clears when the orchestrator's next event says so
/// (`approval_received` / `approval_rejected`), not here.
pub async fn respond_to_approval<T: Transport>(
    store: &mut Store,
    transport: &T,
    base_url: &str,
    task_id: &str,
    subtask_id: &str,
    approved: bool,
) -> Result<bool> {
    let verb = if approved { "approving" } else { "rejecting" };
    let (status, body) =
        fetch_text(transport, &approve_task_request(base_url, task_id, subtask_id, approved)).await.map_err(|e| {
            crate::Error::Invalid(format!(
                "{verb} step {subtask_id} of task {task_id}: the orchestrator at {base_url} is unreachable ({e})"
            ))
        })?;
    if !(200..300).contains(&status) {
        return Err(crate::Error::Invalid(format!(
            "{verb} step {subtask_id} of task {task_id}: the orchestrator answered {status}: {}",
            first_line(&body)
        )));
    }
    let answer: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let resolved = answer.get("resolved_pending").and_then(Value::as_bool).unwrap_or(true);
    let record = serde_json::json!({"subtask_id": subtask_id, "approved": approved, "resolved_pending": resolved});
    store.append_task_event(task_id, APPROVAL_DECISION_EVENT, &record.to_string())?;
    Ok(resolved)
}

/// Sends a request and reads the whole body (bounded to 1 MiB).
async fn fetch_text<T: Transport>(transport: &T, req: &HttpRequest) -> std::result::Result<(u16, String), String> {
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
