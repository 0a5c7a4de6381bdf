//! The scripted run of one task: Loom's events in Loom's order, a heartbeat beside it, and the steps held
//! for approval in manual mode.

use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

use super::{done, Orchestrator};

/// Works through the plan, publishing events; stops early when cancelled.
pub(super) async fn run(orch: Arc<Orchestrator>, id: String, step: Duration, fail: bool) {
    if script(&orch, &id, step, fail).await.is_none() {
        orch.finish_cancelled(&id);
    }
}

/// The script; `None` once the task was cancelled.
async fn script(orch: &Arc<Orchestrator>, id: &str, step: Duration, fail: bool) -> Option<()> {
    let publish = |event: &str, data: Value| orch.publish(id, event, data, |_| {}).then_some(());
    let (goal, workspace, manual, files) = {
        let tasks = orch.tasks();
        let t = tasks.get(id)?;
        (t.goal.clone(), t.workspace.clone(), t.manual, t.files.clone())
    };
    let mode = if manual { "manual" } else { "auto" };
    publish(
        "task_created",
        json!({"goal": goal, "workspace": workspace, "approval_mode": mode, "execution_surface": "api", "process": ""}),
    )?;
    tokio::time::sleep(step).await;
    publish("task_run_acquired", json!({"lease_owner": "runner-double", "source_component": "engine"}))?;
    tokio::spawn(heartbeat(orch.clone(), id.to_owned()));
    orch.publish(id, "task_planning", json!({"goal": goal}), |t| t.status = "planning").then_some(())?;
    tokio::time::sleep(step).await;
    let ids = json!(["s1", "s2", "s3"]);
    orch.publish(id, "task_plan_ready", json!({"subtask_count": 3, "subtask_ids": ids}), |t| t.status = "executing")
        .then_some(())?;
    publish("subtask_policy_reconciled", json!({"subtask_count": 3, "changed": 0}))?;
    publish("task_executing", json!({}))?;
    for i in 0..3 {
        tokio::time::sleep(step).await;
        let sid = format!("s{}", i + 1);
        orch.publish(id, "subtask_started", json!({"subtask_id": sid}), |t| t.subtasks[i].status = "running")
            .then_some(())?;
        publish(
            "compaction_policy_decision",
            json!({"subtask_id": sid, "decision": "skip", "reason": "below_budget"}),
        )?;
        tokio::time::sleep(step).await;
        // The first step reads, the second writes the goal's files, the third writes a test.
        let writes: Vec<String> = match i {
            0 => Vec::new(),
            1 => files.clone(),
            _ => vec![format!("tests/test_{id}.py")],
        };
        let tools: Vec<(&str, Vec<String>)> = match writes.is_empty() {
            true => vec![("read_file", Vec::new())],
            false => writes.iter().map(|f| ("write_file", vec![f.clone()])).collect(),
        };
        for (tool, changed) in tools {
            let args = json!({"path": changed.first().cloned().unwrap_or_else(|| "README.md".into())});
            publish("tool_call_started", json!({"subtask_id": sid, "tool": tool, "args": args}))?;
            let failed = fail && i == 1;
            let changed = if failed { Vec::new() } else { changed };
            publish(
                "tool_call_completed",
                json!({"subtask_id": sid, "tool": tool, "args": args, "success": !failed,
                       "error": if failed { "tests failed" } else { "" },
                       "files_changed": changed, "files_changed_paths": changed}),
            )?;
        }
        publish("verification_started", json!({"subtask_id": sid, "tier": 1}))?;
        if fail && i == 1 {
            let feedback = "tests failed: 2 assertions did not hold";
            publish(
                "verification_failed",
                json!({"subtask_id": sid, "tier": 1, "outcome": "fail", "feedback": feedback}),
            )?;
            orch.publish(
                id,
                "subtask_failed",
                json!({"subtask_id": sid, "verification_tier": 1, "feedback": feedback, "verification_outcome": "fail",
                       "reason_code": "tests_failed"}),
                |t| {
                    t.subtasks[i].status = "failed";
                    t.subtasks[i].summary = feedback.into();
                },
            )
            .then_some(())?;
            return finish(orch, id, step).await;
        }
        publish("verification_passed", json!({"subtask_id": sid, "tier": 1, "outcome": "pass"}))?;
        let summary = format!("Done: {}", orch.tasks().get(id)?.subtasks[i].description);
        orch.publish(
            id,
            "subtask_completed",
            json!({"subtask_id": sid, "status": "success", "summary": summary, "duration": step.as_secs_f64(),
                   "verification_outcome": "pass", "reason_code": ""}),
            |t| {
                t.subtasks[i].status = "completed";
                t.subtasks[i].summary = summary.clone();
            },
        )
        .then_some(())?;
        if manual && !held_for_approval(orch, id, &sid, &summary).await? {
            if let Some(t) = orch.tasks().get_mut(id) {
                t.subtasks[i].status = "failed";
                t.subtasks[i].summary = "Rejected by human reviewer".into();
            }
        }
    }
    finish(orch, id, step).await
}

/// Holds step `sid` until the user decides (`approval_requested`; `POST /approve` publishes the answer);
/// `Some(approved)`, or `None` when the task was cancelled meanwhile.
async fn held_for_approval(orch: &Orchestrator, id: &str, sid: &str, summary: &str) -> Option<bool> {
    let (decide, decision) = oneshot::channel();
    let request = json!({"subtask_id": sid, "reason": "Confidence medium (0.62)", "proposed_action": summary,
                         "risk_level": "medium", "details": {"verification": 0.7, "tool_success": 1.0},
                         "auto_approve_timeout": null});
    let held = orch.publish(id, "approval_requested", request, |t| {
        t.status = "waiting_approval";
        t.approval = Some((sid.to_owned(), decide));
    });
    if !held {
        return None;
    }
    let approved = decision.await.ok()?;
    let mut tasks = orch.tasks();
    let t = tasks.get_mut(id)?;
    if t.cancelled {
        return None;
    }
    t.status = "executing";
    Some(approved)
}

/// The end: verification summaries, then `task_completed` (every step completed) or `task_failed`, the
/// status a little later, and the run's telemetry after the terminal event.
async fn finish(orch: &Arc<Orchestrator>, id: &str, step: Duration) -> Option<()> {
    tokio::time::sleep(step).await;
    let publish = |event: &str, data: Value| orch.publish(id, event, data, |_| {}).then_some(());
    publish(
        "claim_verification_summary",
        json!({"extracted": 0, "supported": 0, "partially_supported": 0, "contradicted": 0,
               "insufficient_evidence": 0, "pruned": 0}),
    )?;
    publish("artifact_seal_validation", json!({"sealed": 0, "validated": 0, "violations": 0}))?;
    let (completed, total, failed) = {
        let tasks = orch.tasks();
        let t = tasks.get(id)?;
        let failed: Vec<String> = t.subtasks.iter().filter(|s| s.status == "failed").map(|s| s.id.clone()).collect();
        (done(t), t.subtasks.len(), failed)
    };
    if completed == total {
        publish(
            "task_completed",
            json!({"completed": completed, "total": total, "reason": "all_subtasks_completed", "outcome": "completed",
                   "validity_summary": {}}),
        )?;
        orch.show_status_later(id, "completed");
    } else {
        publish(
            "task_failed",
            json!({"completed": completed, "total": total, "failed_subtasks": failed, "reason": "subtask_failure",
                   "outcome": "failed", "blocking_remediation_failures": [], "blocked_subtasks": [],
                   "validity_summary": {}}),
        )?;
        orch.show_status_later(id, "failed");
    }
    publish("run_validity_scorecard", json!({"score": 1.0}))?;
    publish("telemetry_run_summary", json!({"subtasks": total}))
}

/// `task_run_heartbeat` every [`super::Timing::heartbeat`] while the task runs.
async fn heartbeat(orch: Arc<Orchestrator>, id: String) {
    loop {
        tokio::time::sleep(orch.timing.heartbeat).await;
        let running = orch.tasks().get(&id).is_some_and(|t| !t.cancelled && !t.history.iter().any(|e| e.is_terminal()));
        if !running || !orch.publish(&id, "task_run_heartbeat", json!({"source_component": "engine"}), |_| {}) {
            return;
        }
    }
}
