//! The register as YAML within [`STATE_TOKEN_LIMIT`] tokens, and the text cutting it shares with the
//! rest of the core (`truncate_end`, `truncate_middle`, `thousands`, `yaml_str`).

use super::{SessionState, MAX_DECISIONS, MAX_ERRORS, MAX_FILES, MAX_FOCUS_CHARS, MAX_OPEN_TASKS, STATE_TOKEN_LIMIT};
use crate::tokens::estimate_tokens;

/// `s` cut to at most `max` characters, ending in "…" when cut.
pub(crate) fn truncate_end(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `s` cut to at most `max` characters by replacing its middle with "…" (keeps a path's file name).
pub(super) fn truncate_middle(s: &str, max: usize) -> String {
    let count = s.chars().count();
    if count <= max {
        return s.to_string();
    }
    let keep = max.saturating_sub(1);
    let head = keep / 3;
    let tail = keep - head;
    let mut out: String = s.chars().take(head).collect();
    out.push('…');
    out.extend(s.chars().skip(count - tail));
    out
}

/// 18402 → "18,402".
pub(crate) fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    // ASCII digits: every chunk is valid UTF-8.
    let groups: Vec<&str> = digits.as_bytes().rchunks(3).rev().map(|g| std::str::from_utf8(g).unwrap_or("")).collect();
    let sign = if n < 0 { "-" } else { "" };
    format!("{sign}{}", groups.join(","))
}

/// `s` cut to at most `max` characters keeping its last `tail` characters (a "(turn N)" ending).
pub(super) fn truncate_keep_end(s: &str, max: usize, tail: usize) -> String {
    let count = s.chars().count();
    if count <= max {
        return s.to_string();
    }
    let tail = tail.min(max.saturating_sub(1));
    let mut out: String = s.chars().take(max - 1 - tail).collect();
    out.push('…');
    out.extend(s.chars().skip(count - tail));
    out
}

/// `s` as a YAML double-quoted scalar: any text stays valid YAML on one line.
pub(super) fn yaml_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if (c as u32) < 0x20 || (0x7f..=0x9f).contains(&(c as u32)) => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            '\u{feff}' => out.push_str("\\ufeff"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The register as YAML, at most [`STATE_TOKEN_LIMIT`] tokens whatever it holds: long strings are cut
/// with "…" and, if that is not enough, the oldest entries of the largest list are left out (a final
/// comment says how many).
pub fn render_yaml(state: &SessionState) -> String {
    let tail = |len: usize, keep: usize| len.saturating_sub(keep);
    let mut files: Vec<String> = state.files_touched[tail(state.files_touched.len(), MAX_FILES)..]
        .iter()
        .map(|f| {
            format!(
                "{{path: {}, action: {}, turn: {}}}",
                yaml_str(&truncate_middle(&f.path, 120)),
                f.action.as_str(),
                f.turn
            )
        })
        .collect();
    let short = |items: &[String], keep: usize| -> Vec<String> {
        items[tail(items.len(), keep)..].iter().map(|d| yaml_str(&truncate_keep_end(d, 200, 24))).collect()
    };
    let mut decisions = short(&state.key_decisions, MAX_DECISIONS);
    let mut errors = short(&state.errors_resolved, MAX_ERRORS);
    let mut tasks: Vec<String> = state.open_tasks[tail(state.open_tasks.len(), MAX_OPEN_TASKS)..]
        .iter()
        .map(|t| {
            format!(
                "{{task_id: {}, goal: {}, status: {}}}",
                yaml_str(&truncate_end(&t.task_id, 60)),
                yaml_str(&truncate_end(&t.goal, 120)),
                yaml_str(&truncate_end(&t.status, 30))
            )
        })
        .collect();
    let mut dropped = 0;
    loop {
        let yaml = render_sections(state, &files, &decisions, &errors, &tasks, dropped);
        if estimate_tokens(&yaml) <= STATE_TOKEN_LIMIT {
            return yaml;
        }
        let size = |v: &Vec<String>| v.iter().map(|s| s.chars().count()).sum::<usize>();
        let largest = [&mut files, &mut decisions, &mut errors, &mut tasks].into_iter().max_by_key(|v| size(v));
        match largest {
            Some(list) if !list.is_empty() => {
                list.remove(0);
                dropped += 1;
            }
            // Nothing left to drop: the fixed fields alone are far below the limit, so this is unreachable
            // in practice; return what we have rather than loop.
            _ => return yaml,
        }
    }
}

fn render_sections(
    state: &SessionState,
    files: &[String],
    decisions: &[String],
    errors: &[String],
    tasks: &[String],
    dropped: usize,
) -> String {
    let s = &state.session;
    let mut out = String::new();
    out.push_str("session:\n");
    out.push_str(&format!("  id: {}\n", yaml_str(&truncate_end(&s.id, 60))));
    out.push_str(&format!("  workspace: {}\n", yaml_str(&truncate_middle(&s.workspace, 120))));
    out.push_str(&format!("  model: {}\n", yaml_str(&truncate_end(&s.model, 60))));
    out.push_str(&format!("  turn_count: {}\n", s.turn_count));
    out.push_str(&format!("  total_tokens: {}\n", s.total_tokens));
    let list = |out: &mut String, name: &str, items: &[String]| {
        if items.is_empty() {
            out.push_str(&format!("{name}: []\n"));
        } else {
            out.push_str(&format!("{name}:\n"));
            for item in items {
                out.push_str(&format!("  - {item}\n"));
            }
        }
    };
    list(&mut out, "files_touched", files);
    list(&mut out, "key_decisions", decisions);
    out.push_str(&format!("current_focus: {}\n", yaml_str(&truncate_end(&state.current_focus, MAX_FOCUS_CHARS))));
    list(&mut out, "errors_resolved", errors);
    list(&mut out, "open_tasks", tasks);
    if dropped > 0 {
        out.push_str(&format!(
            "# {dropped} older entries left out to keep this block under {STATE_TOKEN_LIMIT} tokens\n"
        ));
    }
    out
}
