//! Test helpers shared by the modules' tests: a conversation builder and in-memory turn sources.

use crate::tokens::estimate_tokens;
use crate::{Role, ToolCall, Turn, TurnStatus};

/// Builds a session's turns in order, numbering them from 1.
#[derive(Default)]
pub(crate) struct Convo {
    pub(crate) turns: Vec<Turn>,
}

impl Convo {
    pub(crate) fn new() -> Convo {
        Convo::default()
    }

    pub(crate) fn push(&mut self, role: Role, content: &str) -> &mut Turn {
        let n = self.turns.len() as i64 + 1;
        self.turns.push(Turn {
            id: 1000 + n,
            session_id: "s1".to_string(),
            turn_number: n,
            role,
            content: content.to_string(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            token_count: estimate_tokens(content),
            status: TurnStatus::Complete,
            created_at: 1_700_000_000_000 + n * 1000,
            metadata: serde_json::Value::Null,
            attachments: Vec::new(),
        });
        self.turns.last_mut().expect("just pushed")
    }

    pub(crate) fn user(&mut self, content: &str) -> &mut Convo {
        self.push(Role::User, content);
        self
    }

    pub(crate) fn assistant(&mut self, content: &str) -> &mut Convo {
        self.push(Role::Assistant, content);
        self
    }

    pub(crate) fn system(&mut self, content: &str) -> &mut Convo {
        self.push(Role::System, content);
        self
    }

    /// An assistant turn calling tools: `(call id, tool name, arguments JSON)`.
    pub(crate) fn calls(&mut self, content: &str, calls: &[(&str, &str, &str)]) -> &mut Convo {
        let turn = self.push(Role::Assistant, content);
        turn.tool_calls = calls
            .iter()
            .map(|(id, name, args)| ToolCall {
                id: id.to_string(),
                name: name.to_string(),
                arguments: args.to_string(),
            })
            .collect();
        turn.token_count += calls.iter().map(|(_, n, a)| estimate_tokens(n) + estimate_tokens(a)).sum::<i64>();
        self
    }

    pub(crate) fn result(&mut self, call_id: &str, tool: &str, content: &str) -> &mut Convo {
        let turn = self.push(Role::Tool, content);
        turn.tool_call_id = Some(call_id.to_string());
        turn.tool_name = Some(tool.to_string());
        self
    }

    /// Changes the last turn's status.
    pub(crate) fn status(&mut self, status: TurnStatus) -> &mut Convo {
        self.turns.last_mut().expect("a turn").status = status;
        self
    }

    /// Changes the last turn's metadata.
    pub(crate) fn meta(&mut self, metadata: serde_json::Value) -> &mut Convo {
        self.turns.last_mut().expect("a turn").metadata = metadata;
        self
    }

    pub(crate) fn build(&mut self) -> Vec<Turn> {
        std::mem::take(&mut self.turns)
    }
}

/// A session's turns in memory that counts how many turns assembly reads.
pub(crate) struct CountingSource {
    pub(crate) turns: Vec<Turn>,
    pub(crate) read: std::cell::Cell<usize>,
}

impl CountingSource {
    pub(crate) fn new(turns: Vec<Turn>) -> CountingSource {
        CountingSource { turns, read: std::cell::Cell::new(0) }
    }
}

impl crate::context::TurnSource for CountingSource {
    fn turns_before(&self, before: Option<i64>, limit: usize) -> crate::Result<Vec<Turn>> {
        let page = self.turns.as_slice().turns_before(before, limit)?;
        self.read.set(self.read.get() + page.len());
        Ok(page)
    }

    fn turn_count(&self) -> i64 {
        self.turns.len() as i64
    }
}

/// An in-memory archive for recall tests: sessions with their turns, executions derived from the turns,
/// and a plain substring search (every word must occur; more occurrences rank higher, then newer turns).
#[derive(Default)]
pub(crate) struct TestArchive {
    pub(crate) sessions: Vec<crate::Session>,
    pub(crate) turns: std::collections::HashMap<String, Vec<Turn>>,
    pub(crate) tasks: Vec<crate::TaskRecord>,
    /// Turns handed out by `turns_range`.
    pub(crate) turns_read: std::cell::Cell<usize>,
}

impl TestArchive {
    pub(crate) fn new() -> TestArchive {
        TestArchive::default()
    }

    pub(crate) fn add_session(&mut self, id: &str, title: &str, workspace: &str, mut turns: Vec<Turn>) {
        let mut state = crate::state::SessionState::new(id, workspace, "test-model");
        for turn in &mut turns {
            turn.session_id = id.to_string();
            crate::state::apply_turn(&mut state, turn, &crate::state::ExtractionRules::default());
        }
        let tokens: i64 = turns.iter().map(|t| t.token_count).sum();
        self.sessions.push(crate::Session {
            id: id.to_string(),
            workspace: workspace.to_string(),
            title: title.to_string(),
            model: "test-model".to_string(),
            system_prompt: String::new(),
            created_at: 1_700_000_000_000,
            last_active_at: 1_700_000_000_000,
            turn_count: turns.len() as i64,
            prompt_tokens: tokens * 3,
            completion_tokens: tokens,
            state: serde_json::to_value(&state).expect("state serialises"),
            parent_session_id: None,
            fork_turn: None,
            is_archived: false,
            is_version: false,
        });
        self.turns.insert(id.to_string(), turns);
    }

    fn session_turns(&self, id: &str) -> &[Turn] {
        self.turns.get(id).map_or(&[], Vec::as_slice)
    }
}

impl crate::recall::RecallSource for TestArchive {
    fn search(&self, q: &crate::SearchQuery) -> crate::Result<Vec<crate::SearchHit>> {
        let words: Vec<String> = q.text.to_lowercase().split_whitespace().map(str::to_string).collect();
        let mut hits = Vec::new();
        for session in &self.sessions {
            let in_scope = match &q.scope {
                crate::SearchScope::Session { session_id } => session.id == *session_id,
                crate::SearchScope::Workspace { workspace } => session.workspace == *workspace,
                crate::SearchScope::All => true,
            };
            if !in_scope {
                continue;
            }
            for turn in self.session_turns(&session.id) {
                let text = turn.content.to_lowercase();
                if (!q.roles.is_empty() && !q.roles.contains(&turn.role))
                    || !words.iter().all(|w| text.contains(w.as_str()))
                {
                    continue;
                }
                let score: usize = words.iter().map(|w| text.matches(w.as_str()).count()).sum();
                hits.push(crate::SearchHit {
                    session_id: session.id.clone(),
                    session_title: session.title.clone(),
                    turn_id: turn.id,
                    turn_number: turn.turn_number,
                    role: turn.role,
                    tool_name: turn.tool_name.clone(),
                    created_at: turn.created_at,
                    snippet: turn.content.chars().take(60).collect(),
                    highlights: Vec::new(),
                    score: score as f64,
                    matched: crate::semantic::Matched::Words,
                });
            }
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.created_at.cmp(&a.created_at)));
        hits.truncate(q.limit);
        Ok(hits)
    }

    fn turns_range(&self, session_id: &str, start: i64, end: i64) -> crate::Result<Vec<Turn>> {
        let turns: Vec<Turn> =
            self.session_turns(session_id).iter().filter(|t| (start..=end).contains(&t.turn_number)).cloned().collect();
        self.turns_read.set(self.turns_read.get() + turns.len());
        Ok(turns)
    }

    fn tool_executions(
        &self,
        session_id: &str,
        tool_name: &str,
        limit: usize,
    ) -> crate::Result<Vec<crate::ToolExecution>> {
        let turns = self.session_turns(session_id);
        let mut runs = Vec::new();
        for result in turns.iter().rev().filter(|t| t.role == Role::Tool && t.tool_name.as_deref() == Some(tool_name)) {
            let call = turns
                .iter()
                .flat_map(|t| &t.tool_calls)
                .find(|c| Some(c.id.as_str()) == result.tool_call_id.as_deref());
            runs.push(crate::ToolExecution {
                session_id: session_id.to_string(),
                turn_number: result.turn_number,
                tool_name: tool_name.to_string(),
                arguments: call.map_or_else(String::new, |c| c.arguments.clone()),
                result: result.content.clone(),
                success: !crate::state::result_failed(result),
                duration_ms: 12,
                approval: crate::Approval::Auto,
                created_at: result.created_at,
            });
            if runs.len() == limit {
                break;
            }
        }
        Ok(runs)
    }

    fn session(&self, session_id: &str) -> crate::Result<crate::Session> {
        self.sessions
            .iter()
            .find(|s| s.id == session_id)
            .cloned()
            .ok_or_else(|| crate::Error::SessionNotFound(session_id.to_string()))
    }

    fn tasks(&self, session_id: &str) -> crate::Result<Vec<crate::TaskRecord>> {
        Ok(self.tasks.iter().filter(|t| t.session_id == session_id).cloned().collect())
    }
}
