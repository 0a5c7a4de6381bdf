//! Loom's events that change nothing the checklist shows (telemetry, leases, details): the decoder
//! folds them as [`LoomEvent::Telemetry`](super::LoomEvent::Telemetry) instead of listing them as unknown.

/// Loom's event types that change nothing the checklist shows: archived, folded as
/// [`LoomEvent::Telemetry`], never listed as unknown. `cowork_approval_decision` is Cowork's own record
/// of a decision it sent ([`crate::agent::delegate::respond_to_approval`]).
const QUIET_EVENTS: &[&str] = &[
    "task_run_acquired",
    "task_run_heartbeat",
    "task_run_recovered",
    "task_plan_normalized",
    "task_plan_degraded",
    "task_stalled",
    "task_stalled_recovery_attempted",
    "task_cancel_requested",
    "task_cancel_ack",
    "task_paused",
    "task_resumed",
    "task_injected",
    "subtask_policy_reconciled",
    "subtask_outcome_stale",
    "subtask_blocked",
    "compaction_policy_decision",
    "overflow_fallback_applied",
    "tool_call_started",
    "tool_call_deduplicated",
    "model_invocation",
    "token_streamed",
    "claim_verification_summary",
    "claims_pruned",
    "synthesis_input_gate_decision",
    "rule_failure_by_type",
    "deterministic_block_rate",
    "run_validity_scorecard",
    "steer_instruction",
    "conversation_message",
    "cowork_approval_decision",
];

/// Whether `event_type` is one of Loom's events that only telemetry, leases or details (see
/// [`QUIET_EVENTS`], and the `artifact_*`, `verification_*`, `telemetry_*`, `webhook_*`, `db_*`,
/// `remediation_*`, `placeholder_*`, `iteration_*` families).
pub(super) fn is_quiet_event(event_type: &str) -> bool {
    const FAMILIES: [&str; 8] =
        ["artifact_", "verification_", "telemetry_", "webhook_", "db_", "remediation_", "placeholder_", "iteration_"];
    QUIET_EVENTS.contains(&event_type) || FAMILIES.iter().any(|f| event_type.starts_with(f))
}
