//! The texts the model and the user read about a delegated task: the result ([`format_result`]), the
//! submitted / still-running / not-started notes, and what went wrong talking to the orchestrator.

use serde_json::Value;

use super::decode::first_text;
use super::{SubtaskProgress, TaskProgress, VerificationNote};
use crate::TaskStatus;

/// One line of text, at most `max` characters.
fn one_line(s: &str, max: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > max {
        format!("{}…", flat.chars().take(max.saturating_sub(1)).collect::<String>())
    } else {
        flat
    }
}

fn checklist(progress: &TaskProgress, out: &mut String) {
    if progress.subtasks.is_empty() {
        out.push_str("Subtasks: none reported.\n");
        return;
    }
    out.push_str("Subtasks:\n");
    for s in &progress.subtasks {
        let name = if s.description.trim().is_empty() { one_line(&s.id, 200) } else { one_line(&s.description, 200) };
        let retries = match s.retries {
            0 => String::new(),
            1 => " (after 1 retry)".to_string(),
            n => format!(" (after {n} retries)"),
        };
        let line = match s.status.as_str() {
            "completed" | "done" | "success" => format!("  [x] {name}{retries}"),
            "failed" => match &s.error {
                Some(error) => format!("  [!] {name}: {}", one_line(error, 300)),
                None => format!("  [!] {name}"),
            },
            "pending" | "" => format!("  [ ] {name}"),
            other => format!("  [ ] {name} ({other})"),
        };
        out.push_str(&line);
        out.push('\n');
    }
}

fn files_section(progress: &TaskProgress, out: &mut String) {
    if progress.files_changed.is_empty() {
        out.push_str("Files changed: none reported.\n");
        return;
    }
    out.push_str("Files changed:\n");
    for f in &progress.files_changed {
        match &f.action {
            Some(action) => out.push_str(&format!("  - {} ({action})\n", one_line(&f.path, 300))),
            None => out.push_str(&format!("  - {}\n", one_line(&f.path, 300))),
        }
    }
}

fn verification_section(progress: &TaskProgress, out: &mut String) {
    let total = progress.subtasks.len();
    let passed = progress.subtasks.iter().filter(|s| s.verification.as_deref() == Some("passed")).count();
    let failed: Vec<&SubtaskProgress> =
        progress.subtasks.iter().filter(|s| s.verification.as_deref() == Some("failed")).collect();
    let notes_failed: Vec<&VerificationNote> = progress.verification.iter().filter(|n| !n.passed).collect();
    let name = |s: &SubtaskProgress| {
        if s.description.trim().is_empty() {
            s.id.clone()
        } else {
            one_line(&s.description, 120)
        }
    };
    let line = if !failed.is_empty() {
        let names: Vec<String> = failed.iter().map(|s| name(s)).collect();
        match passed {
            0 => format!("failed for {}.", names.join("; ")),
            _ => format!("{passed} of {total} subtasks passed; failed for {}.", names.join("; ")),
        }
    } else if total > 0 && passed == total {
        "All subtasks passed verification.".to_string()
    } else if passed > 0 {
        format!("{passed} of {total} subtasks passed verification.")
    } else if progress.verification.is_empty() {
        "none reported by the orchestrator.".to_string()
    } else if notes_failed.is_empty() {
        "passed.".to_string()
    } else {
        "failed.".to_string()
    };
    out.push_str(&format!("Verification: {line}\n"));
    for note in &progress.verification {
        let verdict = if note.passed { "passed" } else { "failed" };
        let subject = note.subtask_id.as_deref().map(|id| format!(" ({id})")).unwrap_or_default();
        match &note.detail {
            Some(detail) => out.push_str(&format!("Checks {verdict}{subject}: {}\n", one_line(detail, 300))),
            None => out.push_str(&format!("Checks {verdict}{subject}.\n")),
        }
    }
}

fn goal_label(progress: &TaskProgress) -> String {
    if progress.goal.trim().is_empty() {
        format!("task {}", progress.task_id)
    } else {
        format!("\"{}\"", one_line(&progress.goal, 300))
    }
}

/// The `delegate_task` tool result for a task that ended with `final_status` (usually
/// `progress.status`), in the design notes' format:
///
/// ```text
/// Task completed: "Add JWT refresh token rotation"
///
/// Subtasks:
///   [x] Analyze current auth implementation
///   [!] Add Redis storage: tests failed
///   [ ] Add tests (skipped)
///
/// Files changed:
///   - src/auth.py (modified)
///
/// Verification: All subtasks passed verification.
/// ```
///
/// A failed task gets an `Error:` line after the header; a task summary ends the text. A non-terminal
/// status gives a "still running" header (see also [`format_still_running`]).
pub fn format_result(progress: &TaskProgress, final_status: &str) -> String {
    let status = TaskStatus::parse(final_status);
    let goal = goal_label(progress);
    let mut out = match &status {
        TaskStatus::Completed => format!("Task completed: {goal}\n"),
        TaskStatus::Failed => format!("Task failed: {goal}\n"),
        TaskStatus::Cancelled => format!("Task cancelled: {goal}\n"),
        _ if status.is_unknown() => format!("Task still running: {goal} (status: unknown)\n"),
        other => format!("Task still running: {goal} (status: {})\n", other.as_str().trim().to_ascii_lowercase()),
    };
    if status == TaskStatus::Failed {
        let error = progress.error.as_deref().map(|e| one_line(e, 500)).unwrap_or_else(|| {
            let failed: Vec<String> =
                progress.subtasks.iter().filter(|s| s.status == "failed").map(|s| s.id.clone()).collect();
            if failed.is_empty() {
                "the orchestrator gave no reason".to_string()
            } else {
                format!("subtasks failed: {}", failed.join(", "))
            }
        });
        out.push_str(&format!("Error: {error}\n"));
    }
    out.push('\n');
    checklist(progress, &mut out);
    out.push('\n');
    files_section(progress, &mut out);
    out.push('\n');
    verification_section(progress, &mut out);
    if let Some(summary) = &progress.summary {
        out.push_str(&format!("\nSummary: {}\n", one_line(summary, 1000)));
    }
    out.truncate(out.trim_end().len());
    out
}

/// The tool result for `wait: false`: the task id at once.
pub fn format_submitted(task_id: &str, goal: &str) -> String {
    format!(
        "Task submitted: {task_id}\nGoal: \"{}\"\nThe task runs in the background; its result will be added to this \
         conversation when it ends.",
        one_line(goal, 300)
    )
}

/// The tool result when the wait ended before the task did (the stream broke, the orchestrator went
/// away): what is known so far, and that the task is still tracked. The header keeps the task open in the
/// session-state register.
pub fn format_still_running(progress: &TaskProgress, reason: &str) -> String {
    let mut out = format!(
        "Task submitted: {} (still running; progress unavailable: {})\nGoal: {}\n\n",
        progress.task_id,
        one_line(reason, 300),
        goal_label(progress)
    );
    checklist(progress, &mut out);
    out.push_str(
        "\nThe task continues on the orchestrator. Cowork re-attaches to it and adds its result to this \
         conversation when it ends.",
    );
    out
}

/// What went wrong talking to the orchestrator at `base_url`, and what to do, for the UI and the tool
/// result. `status` 0 means no response: `reachable_without_cors` is the result of a `mode: "no-cors"`
/// probe (`Some(true)`: the server is up, so the browser's CORS check blocked the request), `None` when
/// no probe was made. `app_origin` is the page's origin (e.g. `http://localhost:8080`).
pub fn failure_message(
    base_url: &str,
    app_origin: &str,
    status: u16,
    body: &str,
    reachable_without_cors: Option<bool>,
) -> String {
    let base = base_url.trim().trim_end_matches('/');
    let loom_cors = format!(
        "Loom allows only pages served from localhost or 127.0.0.1 by default: open Cowork from one of those (this \
         page is {app_origin}), or allow this origin in the orchestrator's CORS settings."
    );
    if status == 0 {
        return match reachable_without_cors {
            Some(true) => format!("The browser blocked the orchestrator's reply from {base} (CORS). {loom_cors}"),
            Some(false) => format!(
                "The orchestrator at {base} could not be reached. Check that it is running and that the orchestrator \
                 URL in Settings is right."
            ),
            None => format!(
                "The orchestrator at {base} could not be reached. Check that it is running and that the orchestrator \
                 URL in Settings is right; if it is running, the browser may have blocked it (CORS): {loom_cors}"
            ),
        };
    }
    let detail = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| first_text(&v, &["detail", "error", "message"]))
        .unwrap_or_else(|| if body.trim_start().starts_with('<') { String::new() } else { body.to_string() });
    let detail = one_line(&detail, 300);
    let said = if detail.is_empty() { format!("HTTP {status}") } else { format!("HTTP {status}: {detail}") };
    let advice = match status {
        404 => "Check the orchestrator URL in Settings (the task or the /tasks endpoint was not found).",
        400 | 422 => "The orchestrator refused the task as given (for example an unknown workspace path).",
        401 | 403 => "The orchestrator refused access: check its access settings.",
        500..=599 => "The orchestrator failed on its side: try again in a moment.",
        _ => "Check the orchestrator URL in Settings.",
    };
    format!("The orchestrator at {base} answered {said}. {advice}")
}

/// The `delegate_task` tool result when the task could not be created at all.
pub fn format_not_started(goal: &str, message: &str) -> String {
    format!(
        "Task not started: \"{}\"\n{}\nNothing was delegated. Tell the user; retry delegate_task once the orchestrator \
         is reachable, or do the work with direct tools.",
        one_line(goal, 300),
        message.trim()
    )
}
