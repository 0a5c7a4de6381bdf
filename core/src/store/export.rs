//! Export: the lossless JSON Lines archive (see `jsonl`) of some or all sessions, with their forks'
//! parents, and a readable Markdown rendering of one session.

use super::jsonl::{line_json, BlobLine, Line, FORMAT_NAME, FORMAT_VERSION};
use super::rows::{tool_execution_from_row, turn_from_row, TOOL_EXECUTION_COLS, TURN_COLS};
use super::{SessionFilter, Store};
use crate::error::{Context, Result};
use crate::export::SessionTurns;
use crate::{Session, ToolExecution, Turn};
use std::collections::{HashMap, HashSet};

impl Store {
    /// Exports the given sessions (all when `None`), with their forks' parents, as JSON Lines.
    pub fn export_jsonl(&self, only: Option<&[String]>) -> Result<String> {
        let all = self.list_sessions(&SessionFilter {
            include_archived: true,
            limit: usize::MAX >> 1,
            ..Default::default()
        })?;
        let by_id: HashMap<&str, &Session> = all.iter().map(|s| (s.id.as_str(), s)).collect();
        // The wanted sessions plus every ancestor a fork reads from.
        let mut wanted: HashSet<&str> = HashSet::new();
        for s in &all {
            if only.is_none_or(|ids| ids.iter().any(|id| id == &s.id)) {
                let mut cur = Some(s.id.as_str());
                while let Some(id) = cur {
                    if !wanted.insert(id) {
                        break;
                    }
                    cur = by_id.get(id).and_then(|s| s.parent_session_id.as_deref());
                }
            }
        }
        // Oldest first, parents before forks.
        let mut ordered: Vec<&Session> = Vec::new();
        let mut placed: HashSet<&str> = HashSet::new();
        let mut pending: Vec<&Session> = all.iter().rev().filter(|s| wanted.contains(s.id.as_str())).collect();
        while !pending.is_empty() {
            let before = pending.len();
            pending.retain(|s| {
                let ready = s.parent_session_id.as_deref().is_none_or(|p| placed.contains(p) || !by_id.contains_key(p));
                if ready {
                    placed.insert(s.id.as_str());
                    ordered.push(s);
                }
                !ready
            });
            if pending.len() == before {
                ordered.append(&mut pending); // a cycle cannot happen; never loop forever anyway
            }
        }

        let mut out = line_json(&Line::Header { format: FORMAT_NAME.into(), version: FORMAT_VERSION });
        out.push('\n');
        let mut push = |line: Line| {
            out.push_str(&line_json(&line));
            out.push('\n');
        };
        // A whole export keeps every workspace's settings, one without sessions yet included (its
        // servers, prompt, budgets); a chosen set of sessions, those of their workspaces.
        let labels: std::collections::BTreeSet<&str> = ordered.iter().map(|s| s.workspace.as_str()).collect();
        for settings in self.all_workspace_settings()? {
            if only.is_none() || labels.contains(settings.workspace.as_str()) {
                push(Line::Workspace(settings));
            }
        }
        let mut turn_total = 0;
        let mut blobs_written: HashSet<String> = HashSet::new();
        for s in &ordered {
            push(Line::Session((*s).clone()));
            let own = self.own_turns(&s.id)?;
            turn_total += own.len();
            for t in own {
                // Each content once, before the first turn that carries it.
                for a in &t.attachments {
                    if blobs_written.insert(a.sha256.clone()) {
                        let bytes = self.attachment_bytes(&a.sha256)?;
                        let data = crate::provider::base64(&bytes);
                        push(Line::Blob(BlobLine { sha256: a.sha256.clone(), size: bytes.len() as i64, data }));
                    }
                }
                push(Line::Turn(t.into()));
            }
            for e in self.own_tool_executions(&s.id)? {
                push(Line::ToolExecution(e));
            }
            for task in self.tasks(&s.id)? {
                let events = self.task_events(&task.task_id)?;
                push(Line::Task(task));
                events.into_iter().for_each(|e| push(Line::TaskEvent(e)));
            }
            let mut manifests = self.manifests(&s.id, usize::MAX >> 1)?;
            manifests.reverse();
            manifests.into_iter().for_each(|m| push(Line::Manifest(m)));
        }
        push(Line::End { sessions: ordered.len(), turns: turn_total });
        Ok(out)
    }

    /// Turns stored under this session id itself (not inherited from a fork parent).
    pub(super) fn own_turns(&self, session_id: &str) -> Result<Vec<Turn>> {
        let mut turns: Vec<Turn> = self
            .conn
            .prepare_cached(&format!(
                "SELECT {} FROM turns t WHERE t.session_id = ?1 ORDER BY t.turn_number",
                TURN_COLS
            ))
            .and_then(|mut s| s.query_map([session_id], turn_from_row)?.collect())
            .context(format!("exporting the turns of session {session_id}"))?;
        self.fill_attachments(&mut turns)?;
        Ok(turns)
    }

    fn own_tool_executions(&self, session_id: &str) -> Result<Vec<ToolExecution>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {TOOL_EXECUTION_COLS} FROM tool_executions e JOIN turns t ON t.id = e.turn_id
                 WHERE t.session_id = ?1 ORDER BY e.id"
            ))
            .and_then(|mut s| s.query_map([session_id], tool_execution_from_row)?.collect())
            .context(format!("exporting the tool executions of session {session_id}"))
    }

    /// A readable Markdown rendering of one session (not re-importable; use JSONL for that).
    pub fn export_markdown(&self, session_id: &str) -> Result<String> {
        Ok(crate::export::markdown::render(&self.markdown_source(session_id)?))
    }

    /// What [`Store::export_markdown`] renders: the session and every turn it reads (a fork's
    /// inherited ones included).
    pub fn markdown_source(&self, session_id: &str) -> Result<SessionTurns> {
        let session = self.get_session(session_id)?;
        let mut turns = Vec::new();
        let mut start = 1;
        while start <= session.turn_count {
            let end = start + 499;
            turns.extend(self.turns_range(session_id, start, end)?);
            start = end + 1;
        }
        Ok(SessionTurns { session, turns })
    }
}
