//! The fold behind the live checklist: [`TaskProgress`] takes events and status snapshots, bounded by
//! [`MAX_TRACKED`].

use super::decode::{merge_file, FileChange, LoomEvent, PendingApproval, SubtaskInfo, TaskSnapshot};
use super::MAX_TRACKED;
use crate::TaskStatus;

/// One line of the live checklist.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SubtaskProgress {
    /// The subtask's id, as the plan and the events name it.
    pub id: String,
    /// Empty until the plan (or a status snapshot) names it; shown as the id meanwhile.
    pub description: String,
    /// `pending`, `running`, `completed`, `failed`, `skipped` …
    pub status: String,
    /// What the subtask did; empty until reported.
    pub summary: String,
    /// Why it failed (cleared when a retry completes it).
    pub error: Option<String>,
    /// How long it ran, in seconds, when reported.
    pub duration_secs: Option<f64>,
    /// `passed`, `failed` or the orchestrator's own word, when reported.
    pub verification: Option<String>,
    /// How many times it was retried (`subtask_retrying` events).
    pub retries: u32,
    /// The orchestrator holds this step for the user's decision (`approval_requested`), until the next
    /// event that says it was decided.
    pub approval: Option<PendingApproval>,
}

/// One line of the checklist as sent to a UI: what the step is, where it stands, and its summary or error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ChecklistItem {
    /// The step's description, or its id when the plan gave none.
    pub label: String,
    /// Where it stands: `pending`, `running`, `completed`, `failed` …
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Why it failed, else its summary; `None` when there is neither.
    pub detail: Option<String>,
    /// The decision the orchestrator waits for on this step, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<PendingApproval>,
}

/// A verification event not tied to a subtask the checklist knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerificationNote {
    /// The subtask it names, if any (one the checklist does not know).
    pub subtask_id: Option<String>,
    /// Whether the check passed (`verification_passed`).
    pub passed: bool,
    /// What was checked or why it failed, when given.
    pub detail: Option<String>,
}

/// Everything known about a delegated task, folded from its events and status snapshots.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskProgress {
    /// The orchestrator's id for the task.
    pub task_id: String,
    /// The goal as delegated (or as the first status snapshot gives it).
    pub goal: String,
    /// `submitted` until an event says more; then Loom's statuses. A terminal status never changes again.
    pub status: TaskStatus,
    /// The checklist, in the plan's order; subtasks a replan dropped are kept only when completed.
    pub subtasks: Vec<SubtaskProgress>,
    /// Files changed, one entry per path (the latest action wins).
    pub files_changed: Vec<FileChange>,
    /// Task-level verification results (checks that name no subtask in the checklist).
    pub verification: Vec<VerificationNote>,
    /// Why the task failed, when it did and said so.
    pub error: Option<String>,
    /// The task's result summary, when reported.
    pub summary: Option<String>,
    /// Types of events this version does not know, in arrival order (shown in the UI).
    pub unknown_events: Vec<String>,
    /// How many events were applied (status snapshots not counted).
    pub events_applied: usize,
}

impl TaskProgress {
    /// A task just submitted: status `submitted`, nothing else known yet.
    pub fn new(task_id: impl Into<String>, goal: impl Into<String>) -> TaskProgress {
        TaskProgress {
            task_id: task_id.into(),
            goal: goal.into(),
            status: TaskStatus::Submitted,
            ..TaskProgress::default()
        }
    }

    /// The task will send nothing more ([`TaskStatus::is_terminal`]).
    pub fn is_terminal(&self) -> bool {
        self.status.is_terminal()
    }

    /// The live checklist as the UI shows it: one item per subtask, described when the plan names it.
    pub fn checklist(&self) -> Vec<ChecklistItem> {
        self.subtasks
            .iter()
            .map(|s| ChecklistItem {
                label: if s.description.is_empty() { s.id.clone() } else { s.description.clone() },
                status: s.status.clone(),
                detail: s.error.clone().or_else(|| (!s.summary.is_empty()).then(|| s.summary.clone())),
                approval: s.approval.clone(),
            })
            .collect()
    }

    /// The steps waiting for the user's decision, in the plan's order.
    pub fn pending_approvals(&self) -> Vec<&PendingApproval> {
        self.subtasks.iter().filter_map(|s| s.approval.as_ref()).collect()
    }

    fn set_status(&mut self, status: TaskStatus) {
        if !self.is_terminal() {
            self.status = status;
        }
    }

    fn subtask(&mut self, id: &str) -> Option<&mut SubtaskProgress> {
        if id.is_empty() {
            return None;
        }
        if let Some(i) = self.subtasks.iter().position(|s| s.id == id) {
            return Some(&mut self.subtasks[i]);
        }
        if self.subtasks.len() >= MAX_TRACKED {
            return None;
        }
        self.subtasks.push(SubtaskProgress {
            id: id.to_string(),
            status: "pending".to_string(),
            ..SubtaskProgress::default()
        });
        self.subtasks.last_mut()
    }

    /// Takes one event into account.
    pub fn apply(&mut self, event: &LoomEvent) {
        self.events_applied += 1;
        match event {
            LoomEvent::TaskCreated => self.set_status(TaskStatus::Pending),
            LoomEvent::TaskPlanning => self.set_status(TaskStatus::Planning),
            LoomEvent::TaskPlanReady { subtasks, .. } => self.take_plan(subtasks),
            LoomEvent::TaskExecuting => self.set_status(TaskStatus::Executing),
            LoomEvent::TaskReplanning { .. } => self.set_status(TaskStatus::Replanning),
            LoomEvent::SubtaskStarted { subtask_id } => {
                if let Some(s) = self.subtask(subtask_id) {
                    s.status = "running".to_string();
                }
            }
            LoomEvent::SubtaskCompleted {
                subtask_id,
                summary,
                duration_secs,
                verification_outcome,
                files_changed,
                ..
            } => {
                if let Some(s) = self.subtask(subtask_id) {
                    s.status = "completed".to_string();
                    s.error = None;
                    if let Some(summary) = summary {
                        s.summary.clone_from(summary);
                    }
                    s.duration_secs = duration_secs.or(s.duration_secs);
                    if let Some(outcome) = verification_outcome {
                        s.verification = Some(normalise_outcome(outcome));
                    }
                }
                for file in files_changed {
                    merge_file(&mut self.files_changed, file.clone());
                }
            }
            LoomEvent::SubtaskFailed { subtask_id, error } => {
                if let Some(s) = self.subtask(subtask_id) {
                    s.status = "failed".to_string();
                    s.error = error.clone().or_else(|| s.error.take());
                }
            }
            LoomEvent::SubtaskRetrying { subtask_id, .. } => {
                if let Some(s) = self.subtask(subtask_id) {
                    s.status = "pending".to_string();
                    s.retries += 1;
                }
            }
            LoomEvent::VerificationPassed { subtask_id, detail } => self.verified(subtask_id, true, detail),
            LoomEvent::VerificationFailed { subtask_id, detail } => self.verified(subtask_id, false, detail),
            LoomEvent::TaskCompleted { summary, files_changed } => {
                self.set_status(TaskStatus::Completed);
                self.subtasks.iter_mut().for_each(|s| s.approval = None);
                self.summary = summary.clone().or(self.summary.take());
                for file in files_changed {
                    merge_file(&mut self.files_changed, file.clone());
                }
            }
            LoomEvent::TaskFailed { error, failed_subtasks, files_changed } => {
                self.set_status(TaskStatus::Failed);
                self.stop_running("interrupted");
                self.error = error.clone().or(self.error.take());
                for id in failed_subtasks {
                    if let Some(s) = self.subtask(id) {
                        s.status = "failed".to_string();
                    }
                }
                for file in files_changed {
                    merge_file(&mut self.files_changed, file.clone());
                }
            }
            LoomEvent::TaskCancelled => {
                self.set_status(TaskStatus::Cancelled);
                self.stop_running("cancelled");
            }
            LoomEvent::ToolCallCompleted { success: true, files_changed, .. } => {
                for file in files_changed {
                    merge_file(&mut self.files_changed, file.clone());
                }
            }
            LoomEvent::ToolCallCompleted { .. } | LoomEvent::Telemetry { .. } => {}
            LoomEvent::ApprovalRequested(request) => {
                let held = match self.subtask(&request.subtask_id) {
                    Some(s) => {
                        s.approval = Some(request.clone());
                        true
                    }
                    None => false,
                };
                if held {
                    self.set_status(TaskStatus::parse("waiting_approval"));
                }
            }
            LoomEvent::ApprovalResolved { subtask_id, approved } => {
                if let Some(s) = self.subtask(subtask_id) {
                    s.approval = None;
                    if !approved {
                        s.status = "failed".to_string();
                        s.error = Some("Rejected by the user".to_string());
                    }
                }
                if self.pending_approvals().is_empty() && self.status == TaskStatus::parse("waiting_approval") {
                    self.set_status(TaskStatus::Executing);
                }
            }
            LoomEvent::RunSnapshot { status } => {
                if status.is_terminal() {
                    self.set_status(status.clone());
                }
            }
            LoomEvent::Unknown { event_type, .. } => {
                if self.unknown_events.len() < MAX_TRACKED {
                    self.unknown_events.push(event_type.clone());
                }
            }
        }
    }

    /// Subtasks still running when the task ended did not finish; nothing waits for a decision any more.
    fn stop_running(&mut self, status: &str) {
        for s in self.subtasks.iter_mut() {
            s.approval = None;
            if s.status == "running" {
                s.status = status.to_string();
            }
        }
    }

    /// A (new) plan: its subtasks in its order, keeping what is known about each; earlier subtasks that
    /// the new plan leaves out are kept only when they completed (a replan keeps finished work).
    fn take_plan(&mut self, plan: &[SubtaskInfo]) {
        if plan.is_empty() {
            return;
        }
        let mut old = std::mem::take(&mut self.subtasks);
        let mut next: Vec<SubtaskProgress> = Vec::with_capacity(plan.len());
        for info in plan.iter().take(MAX_TRACKED) {
            if next.iter().any(|s| s.id == info.id) {
                continue;
            }
            let mut s = match old.iter().position(|s| s.id == info.id) {
                Some(i) => old.remove(i),
                None => {
                    SubtaskProgress { id: info.id.clone(), status: "pending".to_string(), ..SubtaskProgress::default() }
                }
            };
            merge_info(&mut s, info);
            next.push(s);
        }
        let kept: Vec<SubtaskProgress> = old.into_iter().filter(|s| s.status == "completed").collect();
        self.subtasks = kept.into_iter().chain(next).take(MAX_TRACKED).collect();
    }

    fn verified(&mut self, subtask_id: &Option<String>, passed: bool, detail: &Option<String>) {
        let outcome = if passed { "passed" } else { "failed" };
        if let Some(s) = subtask_id.as_deref().and_then(|id| self.subtasks.iter_mut().find(|s| s.id == id)) {
            s.verification = Some(outcome.to_string());
            if !passed && s.error.is_none() {
                s.error.clone_from(detail);
            }
            return;
        }
        if self.verification.len() < MAX_TRACKED {
            self.verification.push(VerificationNote { subtask_id: subtask_id.clone(), passed, detail: detail.clone() });
        }
    }

    /// Takes a `GET /tasks/{id}` snapshot into account: status, goal (when unknown), the plan's subtasks
    /// with their statuses and summaries, the result's summary and files.
    pub fn apply_status(&mut self, status: &TaskSnapshot) {
        if self.goal.is_empty() {
            self.goal.clone_from(&status.goal);
        }
        if !status.status.is_unknown() {
            self.set_status(status.status.clone());
        }
        if !status.subtasks.is_empty() {
            self.take_plan(&status.subtasks);
        }
        if status.summary.is_some() {
            self.summary.clone_from(&status.summary);
        }
        if status.error.is_some() {
            self.error.clone_from(&status.error);
        }
        for file in &status.files_changed {
            merge_file(&mut self.files_changed, file.clone());
        }
    }
}

fn merge_info(s: &mut SubtaskProgress, info: &SubtaskInfo) {
    if !info.description.is_empty() {
        s.description.clone_from(&info.description);
    }
    if !info.status.is_empty() {
        s.status.clone_from(&info.status);
    }
    if !info.summary.is_empty() {
        s.summary.clone_from(&info.summary);
        if info.status == "failed" && s.error.is_none() {
            s.error = Some(info.summary.clone());
        }
    }
}

fn normalise_outcome(outcome: &str) -> String {
    let lower = outcome.trim().to_ascii_lowercase();
    if ["pass", "ok", "success", "verified", "true"].iter().any(|p| lower.starts_with(p)) {
        "passed".to_string()
    } else if ["fail", "false", "error"].iter().any(|p| lower.starts_with(p)) {
        "failed".to_string()
    } else {
        outcome.trim().to_string()
    }
}
