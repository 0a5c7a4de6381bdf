//! A readable Markdown transcript of one session (not re-importable; the JSON Lines export is).

use super::SessionTurns;
use crate::{Role, TurnStatus};

/// `source`'s session as Markdown: a title, the session's facts, then every turn.
pub fn render(source: &SessionTurns) -> String {
    let s = &source.session;
    let mut out = format!("# {}\n\n", if s.title.is_empty() { "Untitled session" } else { &s.title });
    out.push_str(&format!("- Workspace: {}\n- Session: {}\n", s.workspace, s.id));
    if !s.model.is_empty() {
        out.push_str(&format!("- Model: {}\n", s.model));
    }
    out.push_str(&format!("- Turns: {}\n", s.turn_count));
    if let (Some(p), Some(f)) = (&s.parent_session_id, s.fork_turn) {
        out.push_str(&format!("- Forked from {p} after turn {f}\n"));
    }
    for t in &source.turns {
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
    out
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
