//! Turns and sessions for the chat screens' native tests.

use cowork_core::{Session, Turn};

/// A complete user turn `n` of session "s".
pub fn turn(n: i64) -> Turn {
    serde_json::from_value(serde_json::json!({
        "id": n, "session_id": "s", "turn_number": n, "role": "user", "content": format!("turn {n}"),
        "tool_calls": [], "tool_call_id": null, "tool_name": null, "token_count": 1, "created_at": 0,
        "status": "complete", "metadata": {}
    }))
    .unwrap()
}

pub fn turns(range: std::ops::RangeInclusive<i64>) -> Vec<Turn> {
    range.map(turn).collect()
}

pub fn session(id: &str, title: &str, workspace: &str, model: &str) -> Session {
    serde_json::from_value(serde_json::json!({
        "id": id, "workspace": workspace, "title": title, "model": model, "system_prompt": "", "created_at": 0,
        "last_active_at": 0, "turn_count": 0, "prompt_tokens": 0, "completion_tokens": 0, "state": {},
        "parent_session_id": null, "fork_turn": null, "is_archived": false
    }))
    .unwrap()
}
