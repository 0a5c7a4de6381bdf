//! Export: the lossless JSON Lines archive (see `jsonl`) of some or all sessions, with their forks'
//! parents, and a readable Markdown rendering of one session.

use super::jsonl::{line_json, BlobLine, Line, FORMAT_NAME, FORMAT_VERSION};
use super::rows::{tool_execution_from_row, turn_from_row, TOOL_EXECUTION_COLS, TURN_COLS};
use super::{SessionFilter, Store};
use crate::error::{Context, Result};
use crate::{Role, Session, ToolExecution, Turn, TurnStatus};
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
        let labels: std::collections::BTreeSet<&str> = ordered.iter().map(|s| s.workspace.as_str()).collect();
        for settings in self.all_workspace_settings()? {
            if labels.contains(settings.workspace.as_str()) {
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
        let s = self.get_session(session_id)?;
        let mut out = format!("# {}\n\n", if s.title.is_empty() { "Untitled session" } else { &s.title });
        out.push_str(&format!("- Workspace: {}\n- Session: {}\n", s.workspace, s.id));
        if !s.model.is_empty() {
            out.push_str(&format!("- Model: {}\n", s.model));
        }
        out.push_str(&format!("- Turns: {}\n", s.turn_count));
        if let (Some(p), Some(f)) = (&s.parent_session_id, s.fork_turn) {
            out.push_str(&format!("- Forked from {p} after turn {f}\n"));
        }
        let mut start = 1;
        while start <= s.turn_count {
            let end = start + 499;
            for t in self.turns_range(session_id, start, end)? {
                let who = match (t.role, &t.tool_name) {
                    (Role::Tool, Some(name)) => format!("tool · {name}"),
                    (role, _) => role.to_string(),
                };
                let status = match t.status {
                    TurnStatus::Complete => String::new(),
                    other => format!(" · {}", other.as_str()),
                };
                out.push_str(&format!("\n## Turn {} · {who}{status}\n\n", t.turn_number));
                if !t.content.is_empty() {
                    if t.role == Role::Tool {
                        out.push_str(&fenced(&t.content));
                    } else {
                        out.push_str(&t.content);
                        out.push('\n');
                    }
                }
                for c in &t.tool_calls {
                    out.push_str(&format!("\n**Tool call** `{}`\n\n", c.name));
                    out.push_str(&fenced(&c.arguments));
                }
                if !t.attachments.is_empty() {
                    out.push('\n');
                }
                for a in &t.attachments {
                    out.push_str(&format!("- Attachment: {}\n", attachment_link(a)));
                }
            }
            start = end + 1;
        }
        Ok(out)
    }
}

/// `[shot.png](attachments/<sha256>-shot.png) (image, 64×48, 1.2 KB, image/png)`: a link to where
/// the file would sit beside the Markdown file (the Markdown export is one file; the bytes are in the
/// JSONL export, under the same SHA-256). The name is the display name with Markdown's brackets and
/// the link's spaces escaped.
fn attachment_link(a: &crate::Attachment) -> String {
    let name = a.display_name();
    let text: String = name.chars().map(|c| if matches!(c, '[' | ']' | '\\') { '_' } else { c }).collect();
    let target: String =
        name.chars().map(|c| if c.is_whitespace() || matches!(c, '(' | ')' | '<' | '>') { '_' } else { c }).collect();
    let size = match (a.width, a.height) {
        (Some(w), Some(h)) => format!("{w}×{h}, "),
        _ => String::new(),
    };
    format!(
        "[{text}](attachments/{}-{target}) ({}, {size}{}, {})",
        a.sha256,
        a.kind.as_str(),
        crate::attachment::format_size(a.size),
        a.mime
    )
}

/// A fenced code block long enough not to be closed by backticks inside `text`.
fn fenced(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}\n{text}\n{fence}\n")
}
