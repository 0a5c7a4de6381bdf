//! Reading tool calls and their results for the register: whether a result failed, the files a call
//! touches (argument keys and patches), the command a shell tool ran and a `git commit`'s message.

use super::{truncate_end, ExtractionRules, FileAction};
use crate::{Turn, TurnStatus};

/// Whether a tool-result turn reports a failure (see the module docs for the rules).
pub fn result_failed(turn: &Turn) -> bool {
    if turn.status == TurnStatus::Error {
        return true;
    }
    let meta = &turn.metadata;
    if let Some(success) = meta.get("success").and_then(|v| v.as_bool()) {
        return !success;
    }
    if meta.get("is_error").and_then(|v| v.as_bool()) == Some(true) {
        return true;
    }
    for key in ["exit_code", "exitCode", "returncode"] {
        if let Some(code) = meta.get(key).and_then(|v| v.as_i64()) {
            return code != 0;
        }
    }
    let mut lines = turn.content.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next();
    let last = lines.next_back();
    [first, last].into_iter().flatten().filter_map(exit_code_in).any(|code| code != 0)
}

/// The number in "exit code: 2", "[exit status 1]", "exited with code 127", "returncode=3".
fn exit_code_in(line: &str) -> Option<i64> {
    let lower = line.to_lowercase();
    for marker in ["exited with code", "exit code", "exit status", "exit_code", "returncode"] {
        if let Some(at) = lower.find(marker) {
            let rest = lower[at + marker.len()..].trim_start_matches([' ', ':', '=', '(', '[']);
            let digits: String = rest
                .char_indices()
                .take_while(|&(i, c)| c.is_ascii_digit() || (i == 0 && c == '-'))
                .map(|(_, c)| c)
                .collect();
            if let Ok(code) = digits.parse() {
                return Some(code);
            }
        }
    }
    None
}

/// The first line of a failing output that names the problem, shortened.
pub(super) fn first_error_line(output: &str) -> String {
    const WORDS: &[&str] = &["error", "failed", "failure", "exception", "panicked", "not found", "denied"];
    output
        .lines()
        .map(str::trim)
        .filter(|l| exit_code_in(l).is_none())
        .find(|l| {
            let lower = l.to_lowercase();
            WORDS.iter().any(|w| lower.contains(w))
        })
        .map(|l| truncate_end(l, 100))
        .unwrap_or_default()
}

/// The paths a file tool's arguments name, with the action for each.
pub(super) fn file_paths(
    args: &serde_json::Value,
    action: FileAction,
    rules: &ExtractionRules,
) -> Vec<(String, FileAction)> {
    let action = match args.get("command").and_then(|c| c.as_str()) {
        Some("view") => FileAction::Read,
        Some("create") => FileAction::Create,
        Some("str_replace" | "insert" | "undo_edit") => FileAction::Edit,
        _ => action,
    };
    let mut out = Vec::new();
    for key in &rules.path_keys {
        match args.get(key) {
            Some(serde_json::Value::String(p)) => out.push((p.clone(), action)),
            Some(serde_json::Value::Array(items)) => {
                out.extend(items.iter().filter_map(|p| p.as_str()).map(|p| (p.to_string(), action)))
            }
            _ => {}
        }
    }
    if out.is_empty() {
        if let Some(object) = args.as_object() {
            for text in object.values().filter_map(|v| v.as_str()) {
                out.extend(patch_files(text));
            }
        }
    }
    out
}

/// Files named in a patch: `*** Add/Update/Delete File: p` (apply_patch) or `+++ b/p` (unified diff).
fn patch_files(patch: &str) -> Vec<(String, FileAction)> {
    let mut out = Vec::new();
    for line in patch.lines() {
        let found = if let Some(p) = line.strip_prefix("*** Add File: ") {
            Some((p, FileAction::Create))
        } else if let Some(p) = line.strip_prefix("*** Update File: ") {
            Some((p, FileAction::Edit))
        } else if let Some(p) = line.strip_prefix("*** Delete File: ") {
            Some((p, FileAction::Delete))
        } else {
            line.strip_prefix("+++ ")
                .map(|p| p.split('\t').next().unwrap_or(p))
                .filter(|p| *p != "/dev/null")
                .map(|p| (p.strip_prefix("b/").unwrap_or(p), FileAction::Edit))
        };
        if let Some((path, action)) = found {
            out.push((path.trim().to_string(), action));
        }
    }
    out
}

/// The command of a command tool's arguments; an argv list is joined with shell quoting.
pub(super) fn command_text(args: &serde_json::Value, rules: &ExtractionRules) -> Option<String> {
    rules.command_keys.iter().find_map(|key| match args.get(key)? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(items) => {
            let words: Vec<String> = items.iter().filter_map(|v| v.as_str()).map(shell_quote).collect();
            Some(words.join(" "))
        }
        _ => None,
    })
}

fn shell_quote(word: &str) -> String {
    if !word.is_empty() && word.chars().all(|c| c.is_alphanumeric() || "-_./=:@%+,".contains(c)) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Shell words of `command`, split into simple commands at unquoted `&&`, `||`, `;`, `|` and newlines.
fn shell_commands(command: &str) -> Vec<Vec<String>> {
    let mut commands = vec![Vec::new()];
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, commands: &mut Vec<Vec<String>>| {
        if *in_word {
            commands.last_mut().expect("never empty").push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            word.extend(chars.next());
                        }
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            ';' | '|' | '&' | '\n' => {
                end_word(&mut word, &mut in_word, &mut commands);
                if !commands.last().is_some_and(|c| c.is_empty()) {
                    commands.push(Vec::new());
                }
            }
            c if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut commands),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut commands);
    commands.retain(|c| !c.is_empty());
    commands
}

/// The subject line of the message of a `git commit` in `command`, if there is one.
pub(super) fn commit_message(command: &str) -> Option<String> {
    for words in shell_commands(command) {
        let Some(git) = words.iter().position(|w| w == "git" || w.ends_with("/git")) else { continue };
        // Skip git's own options ("-C dir", "-c key=value", "--no-pager") to reach the subcommand.
        let mut i = git + 1;
        while let Some(w) = words.get(i) {
            match w.as_str() {
                "-C" | "-c" | "--git-dir" | "--work-tree" => i += 2,
                w if w.starts_with('-') => i += 1,
                _ => break,
            }
        }
        if words.get(i).map(String::as_str) != Some("commit") {
            continue;
        }
        let args = &words[i + 1..];
        let mut k = 0;
        while k < args.len() {
            let a = &args[k];
            let message = if let Some(m) = a.strip_prefix("--message=") {
                Some(m.to_string())
            } else if a == "--message" || (a.starts_with('-') && !a.starts_with("--") && a.ends_with('m')) {
                args.get(k + 1).cloned()
            } else {
                a.strip_prefix("-m").filter(|m| !m.is_empty()).map(str::to_string)
            };
            if let Some(message) = message {
                return subject_line(&message);
            }
            k += 1;
        }
    }
    None
}

/// The first non-empty line; for a `"$(cat <<'EOF' …"` heredoc message, the heredoc's first line.
fn subject_line(message: &str) -> Option<String> {
    let mut lines = message.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next()?;
    if first.starts_with("$(cat <<") {
        return lines.next().map(str::to_string);
    }
    Some(first.to_string())
}
