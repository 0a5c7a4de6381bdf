//! A LoCoMo conversation imported into the archive: one workspace (`locomo-<sample>`), one session
//! per LoCoMo session ("Session N — <date>"), its turns in order — the first speaker's as the user's,
//! the second's as the assistant's, each `"<speaker>: <text>"` (with its photo's caption) — dated from
//! the session's date, one second apart.
//!
//! It goes in through the archive's own JSONL import (`Store::import_jsonl`), the public way to write
//! sessions with their own timestamps, so nothing here touches the store's tables.

use super::Conversation;
use cowork_core::store::Store;
use cowork_core::tokens::estimate_tokens;
use cowork_core::{Result, Session};
use serde_json::json;
use std::collections::HashMap;

/// A conversation as stored: its workspace and where each of its turns went.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The workspace holding its sessions.
    pub workspace: String,
    /// Dia id → the stored turn's id ([`cowork_core::Turn::id`], what a search hit names).
    pub turn_ids: HashMap<String, i64>,
    /// Stored turn id → its text, for the retrievers that index the text themselves.
    pub texts: Vec<(i64, String)>,
}

/// The workspace of a conversation.
pub fn workspace_name(conv: &Conversation) -> String {
    format!("locomo-{}", conv.id)
}

fn session_id(conv: &Conversation, number: u32) -> String {
    format!("locomo-{}-session-{number}", conv.id)
}

/// The conversation as a Cowork JSONL archive (header, per session its `session` and `turn` lines,
/// end line).
pub fn jsonl(conv: &Conversation) -> String {
    let workspace = workspace_name(conv);
    let mut lines = vec![json!({"type": "header", "format": "cowork-archive", "version": 3}).to_string()];
    let mut turns = 0;
    for s in &conv.sessions {
        let id = session_id(conv, s.number);
        let last = s.start_ms + (s.turns.len() as i64 - 1).max(0) * 1000;
        let session = Session {
            id: id.clone(),
            workspace: workspace.clone(),
            title: format!("Session {} — {}", s.number, s.date_time),
            model: String::new(),
            system_prompt: String::new(),
            created_at: s.start_ms,
            last_active_at: last,
            turn_count: s.turns.len() as i64,
            prompt_tokens: 0,
            completion_tokens: 0,
            state: json!({}),
            parent_session_id: None,
            fork_turn: None,
            is_archived: false,
            is_version: false,
        };
        let mut line = serde_json::to_value(&session).expect("a session is plain data");
        line["type"] = json!("session");
        lines.push(line.to_string());
        for (i, t) in s.turns.iter().enumerate() {
            let content = t.content();
            let role = if t.speaker == conv.speaker_a { "user" } else { "assistant" };
            lines.push(
                json!({
                    "type": "turn", "session_id": id, "turn_number": i + 1, "role": role,
                    "token_count": estimate_tokens(&content), "content": content,
                    "tool_calls": [], "tool_call_id": null, "tool_name": null, "status": "complete",
                    "created_at": s.start_ms + i as i64 * 1000, "metadata": {"source": "locomo", "dia_id": t.dia_id},
                })
                .to_string(),
            );
            turns += 1;
        }
    }
    lines.push(json!({"type": "end", "sessions": conv.sessions.len(), "turns": turns}).to_string());
    lines.join("\n") + "\n"
}

/// Imports `conv` into `store` (see the module's docs) and maps its dia ids to the stored turns.
pub fn import(store: &mut Store, conv: &Conversation) -> Result<Imported> {
    store.import_jsonl(&jsonl(conv))?;
    let mut imported = Imported { workspace: workspace_name(conv), turn_ids: HashMap::new(), texts: Vec::new() };
    for s in &conv.sessions {
        let stored = store.get_turns(&session_id(conv, s.number), 0, s.turns.len())?;
        assert_eq!(stored.len(), s.turns.len(), "every turn of session {} is stored", s.number);
        for (t, st) in s.turns.iter().zip(stored) {
            imported.turn_ids.insert(t.dia_id.clone(), st.id);
            imported.texts.push((st.id, st.content));
        }
    }
    Ok(imported)
}
