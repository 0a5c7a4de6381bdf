//! The progress fold: the live checklist, and bounded memory.

use super::*;

#[test]
fn the_checklist_names_each_step_and_where_it_stands() {
    let progress = fold(&decode_stream(FAILED_STREAM), "a1b2c3d4", "Migrate src/routes to TypeScript");
    let lines: Vec<String> = progress
        .checklist()
        .iter()
        .map(|i| format!("{} {} {}", i.status, i.label, i.detail.as_deref().unwrap_or("-").replace('\n', " / ")))
        .collect();
    check(
        &lines.join("\n"),
        expect![[r#"
        completed convert-routes Converted 12 files.
        failed update-imports tsc: 3 errors in / src/routes/index.ts
        pending run-typecheck -"#]],
    );
}

#[test]
fn progress_tracks_the_live_checklist() {
    let events = decode_stream(COMPLETED_STREAM);
    let mut progress = TaskProgress::new("task-0001", "Add JWT refresh token rotation");
    let mut snapshots = Vec::new();
    for e in &events {
        progress.apply(e);
        let line: Vec<String> = progress
            .subtasks
            .iter()
            .map(|s| {
                format!(
                    "{}={}{}",
                    s.id,
                    s.status,
                    if s.retries > 0 { format!("+{}", s.retries) } else { String::new() }
                )
            })
            .collect();
        snapshots.push(format!("{:<20} {:<10} {}", e.event_type(), progress.status, line.join(" ")));
    }
    check(
        &snapshots.join("\n"),
        expect![[r#"
        task_created         pending    
        task_planning        planning   
        task_plan_ready      planning   s1=pending s2=pending s3=pending
        task_executing       executing  s1=pending s2=pending s3=pending
        subtask_started      executing  s1=running s2=pending s3=pending
        subtask_completed    executing  s1=completed s2=pending s3=pending
        subtask_started      executing  s1=completed s2=running s3=pending
        subtask_failed       executing  s1=completed s2=failed s3=pending
        subtask_retrying     executing  s1=completed s2=pending+1 s3=pending
        subtask_started      executing  s1=completed s2=running+1 s3=pending
        subtask_completed    executing  s1=completed s2=completed+1 s3=pending
        subtask_started      executing  s1=completed s2=completed+1 s3=running
        subtask_completed    executing  s1=completed s2=completed+1 s3=completed
        task_progress_note   executing  s1=completed s2=completed+1 s3=completed
        verification_passed  executing  s1=completed s2=completed+1 s3=completed
        task_completed       completed  s1=completed s2=completed+1 s3=completed"#]],
    );
    assert!(progress.is_terminal());
    assert_eq!(progress.unknown_events, ["task_progress_note"]);
    // A terminal status is final: a late event does not reopen the task.
    progress.apply(&LoomEvent::TaskExecuting);
    assert_eq!(progress.status, crate::TaskStatus::Completed);
}

#[test]
fn memory_is_bounded_on_a_runaway_stream() {
    let mut progress = TaskProgress::new("t", "g");
    for i in 0..1000 {
        progress.apply(&LoomEvent::SubtaskStarted { subtask_id: format!("s{i}") });
        progress.apply(&LoomEvent::Unknown { event_type: format!("x{i}"), data: String::new() });
        progress.apply(&LoomEvent::SubtaskCompleted {
            subtask_id: format!("s{i}"),
            status: None,
            summary: None,
            duration_secs: None,
            verification_outcome: None,
            files_changed: vec![FileChange { path: format!("f{i}"), action: None }],
        });
    }
    assert_eq!(progress.subtasks.len(), MAX_TRACKED);
    assert_eq!(progress.unknown_events.len(), MAX_TRACKED);
    assert_eq!(progress.files_changed.len(), MAX_TRACKED);
    assert_eq!(progress.events_applied, 3000);
}
