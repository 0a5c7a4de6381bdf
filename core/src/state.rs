//! The session-state register: a small structured block kept up to date mechanically from every turn
//! (never by a model call), stored as JSON on the session and rendered as YAML into every request.
//!
//! What feeds it ([`apply_turn`]):
//! - **Files**: a tool call whose name is in the rules' file-tool table ([`DEFAULT_FILE_TOOLS`], extended by
//!   the host with [`ExtractionRules::with_file_tool`]) touches the paths found under the rules' argument
//!   keys (`path`, `file_path`, `filename`, `target`, …, a string or a list of strings), or, for patch
//!   tools without such a key, the files named in the patch (`*** Add File: p`, `*** Update File: p`,
//!   `*** Delete File: p`, `+++ b/p`). Editor tools with a `command` sub-command (`view`, `create`,
//!   `str_replace`, `insert`) take their action from it. A touch is recorded when the **result** arrives
//!   and did not fail, with the result's turn number. `write_file` counts as `write`, `create_file` as
//!   `create`: the archive cannot tell whether a written file existed before.
//! - **Errors resolved**: a command tool (`run_command`, `bash`, `shell`, …; the command under `command` /
//!   `cmd` / `script`, a string or an argv list) whose result failed, followed later by the same command
//!   (same text after collapsing white space) succeeding, gives "`cmd` failed at turn A (first error
//!   line), fixed by turn B".
//! - **Decisions**: a successful `git commit -m "…"` gives "Committed: … (turn N)"; a delegated task's
//!   result ("Task completed: …" with a "Files changed:" list, as `delegate_task` returns it, in a tool or
//!   system turn) gives a decision and file touches; user constraints
//!   ([`crate::constraints::detect_constraints`]) are kept verbatim with "(turn N)", a repeated constraint
//!   replacing its older copy.
//! - **Focus**: the first non-empty line of the latest user message, at most 100 characters.
//! - **Open tasks**: `delegate_task` results that are not terminal (`Task submitted: <id>`), closed by
//!   the terminal result; [`sync_tasks`] replaces the list from the archive's task records, which win.
//!
//! How a tool result is recognised as failed ([`result_failed`]): the turn's status is `error`; or its
//! metadata says `"success": false`, `"is_error": true` or a non-zero `exit_code` / `exitCode` /
//! `returncode`; or, when the metadata says nothing, the first or last non-empty line of the output reads
//! like "exit code: 2", "[exit status 1]" or "exited with code 127" with a non-zero number.
//!
//! Pruning keeps the last 20 files (one entry per path, the newest action wins), 10 decisions, 5 resolved
//! errors and 20 open tasks. [`render_yaml`] always fits in [`STATE_TOKEN_LIMIT`] tokens.

use serde::{Deserialize, Serialize};

use crate::constraints::detect_constraints;
use crate::tokens::estimate_tokens;
use crate::{Role, TaskRecord, Turn, TurnStatus};

pub const MAX_FILES: usize = 20;
pub const MAX_DECISIONS: usize = 10;
pub const MAX_ERRORS: usize = 5;
pub const MAX_OPEN_TASKS: usize = 20;
pub const MAX_FOCUS_CHARS: usize = 100;
/// The rendered register never exceeds this many tokens (by [`estimate_tokens`]).
pub const STATE_TOKEN_LIMIT: i64 = 1_000;
/// Longest string the register stores (paths, commands, decisions); longer ones are cut with "…".
const MAX_STORED_CHARS: usize = 1_000;
const MAX_PENDING_CALLS: usize = 64;
const MAX_PENDING_FAILURES: usize = 20;

/// The session-state register. Every field defaults, so JSON written by older versions still loads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionState {
    pub session: SessionInfo,
    /// Oldest first; at most [`MAX_FILES`], one per path.
    pub files_touched: Vec<FileTouch>,
    /// "… (turn N)", oldest first; at most [`MAX_DECISIONS`].
    pub key_decisions: Vec<String>,
    pub current_focus: String,
    /// Oldest first; at most [`MAX_ERRORS`].
    pub errors_resolved: Vec<String>,
    /// Delegated tasks that have not finished.
    pub open_tasks: Vec<OpenTask>,
    /// Bumped on every change; the context manifest records which version a request contained.
    pub version: i64,
    /// What extraction remembers between turns (calls awaiting results, failed commands).
    #[serde(skip_serializing_if = "Pending::is_empty")]
    pending: Pending,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionInfo {
    pub id: String,
    pub workspace: String,
    pub model: String,
    pub turn_count: i64,
    pub total_tokens: i64,
}

/// What a tool did to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileAction {
    Read,
    Create,
    Write,
    Edit,
    Delete,
}

impl FileAction {
    pub fn as_str(self) -> &'static str {
        match self {
            FileAction::Read => "read",
            FileAction::Create => "create",
            FileAction::Write => "write",
            FileAction::Edit => "edit",
            FileAction::Delete => "delete",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileTouch {
    pub path: String,
    pub action: FileAction,
    pub turn: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpenTask {
    pub task_id: String,
    pub goal: String,
    pub status: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
struct Pending {
    /// The last turn number applied: older or repeated turns are ignored.
    last_turn: i64,
    calls: Vec<PendingCall>,
    failures: Vec<FailedCommand>,
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.last_turn == 0 && self.calls.is_empty() && self.failures.is_empty()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
struct PendingCall {
    id: String,
    name: String,
    arguments: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
struct FailedCommand {
    command: String,
    turn: i64,
    error_line: String,
}

/// Tool names that touch files, and how. Hosts add theirs with [`ExtractionRules::with_file_tool`].
pub const DEFAULT_FILE_TOOLS: &[(&str, FileAction)] = &[
    ("read_file", FileAction::Read),
    ("view", FileAction::Read),
    ("cat", FileAction::Read),
    ("write_file", FileAction::Write),
    ("create_file", FileAction::Create),
    ("edit_file", FileAction::Edit),
    ("str_replace", FileAction::Edit),
    ("str_replace_editor", FileAction::Edit),
    ("str_replace_based_edit_tool", FileAction::Edit),
    ("apply_patch", FileAction::Edit),
    ("delete_file", FileAction::Delete),
    ("rm", FileAction::Delete),
];
/// Tools that run a shell command.
pub const DEFAULT_COMMAND_TOOLS: &[&str] =
    &["run_command", "bash", "shell", "shell_execute", "execute_command", "terminal"];
/// Argument keys that hold a file path (a string or a list of strings).
pub const DEFAULT_PATH_KEYS: &[&str] =
    &["path", "file_path", "filepath", "filename", "file", "target", "target_file", "paths"];
/// Argument keys that hold a command (a string or an argv list).
pub const DEFAULT_COMMAND_KEYS: &[&str] = &["command", "cmd", "script"];
/// The tool that delegates work to the orchestrator.
pub const DELEGATE_TOOL: &str = "delegate_task";

/// The tables extraction reads. `Default` is the built-in set; hosts extend it for their own tools.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtractionRules {
    /// The one mapping from tool name to file action.
    pub file_tools: Vec<(String, FileAction)>,
    pub command_tools: Vec<String>,
    pub path_keys: Vec<String>,
    pub command_keys: Vec<String>,
}

impl Default for ExtractionRules {
    fn default() -> ExtractionRules {
        let owned = |names: &[&str]| names.iter().map(|s| s.to_string()).collect();
        ExtractionRules {
            file_tools: DEFAULT_FILE_TOOLS.iter().map(|(n, a)| (n.to_string(), *a)).collect(),
            command_tools: owned(DEFAULT_COMMAND_TOOLS),
            path_keys: owned(DEFAULT_PATH_KEYS),
            command_keys: owned(DEFAULT_COMMAND_KEYS),
        }
    }
}

impl ExtractionRules {
    /// Adds (or re-maps) a file tool.
    pub fn with_file_tool(mut self, name: impl Into<String>, action: FileAction) -> ExtractionRules {
        let name = name.into();
        self.file_tools.retain(|(n, _)| *n != name);
        self.file_tools.push((name, action));
        self
    }

    /// Adds a tool that runs shell commands.
    pub fn with_command_tool(mut self, name: impl Into<String>) -> ExtractionRules {
        let name = name.into();
        if !self.command_tools.contains(&name) {
            self.command_tools.push(name);
        }
        self
    }

    pub fn file_action(&self, tool: &str) -> Option<FileAction> {
        self.file_tools.iter().find(|(n, _)| n == tool).map(|(_, a)| *a)
    }

    fn is_command_tool(&self, tool: &str) -> bool {
        self.command_tools.iter().any(|n| n == tool)
    }
}

impl SessionState {
    pub fn new(id: impl Into<String>, workspace: impl Into<String>, model: impl Into<String>) -> SessionState {
        SessionState {
            session: SessionInfo {
                id: id.into(),
                workspace: workspace.into(),
                model: model.into(),
                ..SessionInfo::default()
            },
            ..SessionState::default()
        }
    }

    /// The register from the session's stored JSON; anything unreadable gives an empty register.
    pub fn from_json(value: &serde_json::Value) -> SessionState {
        serde_json::from_value(value.clone()).unwrap_or_default()
    }

    fn touch(&mut self, path: &str, action: FileAction, turn: i64) {
        let path = truncate_end(path.trim(), MAX_STORED_CHARS);
        if path.is_empty() {
            return;
        }
        self.files_touched.retain(|f| f.path != path);
        self.files_touched.push(FileTouch { path, action, turn });
    }

    fn decide(&mut self, text: &str, turn: i64) {
        let text = truncate_end(text.trim(), MAX_STORED_CHARS);
        self.key_decisions.retain(|d| strip_turn_suffix(d) != text);
        self.key_decisions.push(format!("{text} (turn {turn})"));
    }

    fn prune(&mut self) {
        drop_oldest(&mut self.files_touched, MAX_FILES);
        drop_oldest(&mut self.key_decisions, MAX_DECISIONS);
        drop_oldest(&mut self.errors_resolved, MAX_ERRORS);
        drop_oldest(&mut self.open_tasks, MAX_OPEN_TASKS);
        drop_oldest(&mut self.pending.calls, MAX_PENDING_CALLS);
        drop_oldest(&mut self.pending.failures, MAX_PENDING_FAILURES);
    }
}

fn drop_oldest<T>(items: &mut Vec<T>, keep: usize) {
    if items.len() > keep {
        items.drain(..items.len() - keep);
    }
}

/// "text (turn 12)" → "text".
fn strip_turn_suffix(decision: &str) -> &str {
    match decision.rfind(" (turn ") {
        Some(at) if decision.ends_with(')') => &decision[..at],
        _ => decision,
    }
}

/// Updates the register with one archived turn. Turns must be applied in order; a turn whose number is
/// not above the last one applied is ignored (so replaying a session is harmless). Returns whether the
/// register changed (and its version was bumped).
pub fn apply_turn(state: &mut SessionState, turn: &Turn, rules: &ExtractionRules) -> bool {
    if turn.turn_number <= state.pending.last_turn {
        return false;
    }
    state.pending.last_turn = turn.turn_number;
    state.session.turn_count = state.session.turn_count.max(turn.turn_number);
    state.session.total_tokens = state.session.total_tokens.saturating_add(turn.token_count.max(0));
    match turn.role {
        Role::User => apply_user(state, turn),
        Role::Assistant => {
            for call in &turn.tool_calls {
                state.pending.calls.push(PendingCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                });
            }
        }
        Role::Tool => apply_result(state, turn, rules),
        Role::System => {
            if parse_task_result(&turn.content).is_some_and(|r| r.status.is_some()) {
                apply_task_result(state, turn, None);
            }
        }
    }
    state.prune();
    state.version += 1;
    true
}

/// Replaces the open tasks with the archive's unfinished task records (oldest first). Returns whether
/// the register changed.
pub fn sync_tasks(state: &mut SessionState, tasks: &[TaskRecord]) -> bool {
    let mut open: Vec<&TaskRecord> = tasks.iter().filter(|t| !t.is_finished()).collect();
    open.sort_by_key(|t| (t.turn_number, t.created_at));
    let mut open: Vec<OpenTask> = open
        .into_iter()
        .map(|t| OpenTask {
            task_id: t.task_id.clone(),
            goal: truncate_end(&t.goal, MAX_STORED_CHARS),
            status: t.status.to_string(),
        })
        .collect();
    drop_oldest(&mut open, MAX_OPEN_TASKS);
    if open == state.open_tasks {
        return false;
    }
    state.open_tasks = open;
    state.version += 1;
    true
}

fn apply_user(state: &mut SessionState, turn: &Turn) {
    if let Some(line) = turn.content.lines().map(str::trim).find(|l| !l.is_empty()) {
        state.current_focus = truncate_end(line, MAX_FOCUS_CHARS);
    }
    for constraint in detect_constraints(&turn.content) {
        state.decide(&constraint, turn.turn_number);
    }
}

fn apply_result(state: &mut SessionState, turn: &Turn, rules: &ExtractionRules) {
    let call = turn
        .tool_call_id
        .as_deref()
        .and_then(|id| state.pending.calls.iter().position(|c| c.id == id))
        .map(|i| state.pending.calls.remove(i));
    let name = call.as_ref().map(|c| c.name.as_str()).or(turn.tool_name.as_deref()).unwrap_or("");
    if name == DELEGATE_TOOL {
        let args = call.as_ref().and_then(|c| serde_json::from_str(&c.arguments).ok());
        if !result_failed(turn) {
            apply_task_result(state, turn, args.as_ref());
        }
        return;
    }
    // Without the call we do not know the arguments, so there is nothing more to extract.
    let Some(call) = call else { return };
    let args: serde_json::Value = serde_json::from_str(&call.arguments).unwrap_or(serde_json::Value::Null);
    let failed = result_failed(turn);
    if let Some(action) = rules.file_action(&call.name) {
        if !failed {
            for (path, action) in file_paths(&args, action, rules) {
                state.touch(&path, action, turn.turn_number);
            }
        }
    }
    if rules.is_command_tool(&call.name) {
        if let Some(command) = command_text(&args, rules) {
            apply_command(state, &command, failed, turn);
        }
    }
}

fn apply_command(state: &mut SessionState, command: &str, failed: bool, turn: &Turn) {
    let command = truncate_end(&command.split_whitespace().collect::<Vec<_>>().join(" "), MAX_STORED_CHARS);
    if command.is_empty() {
        return;
    }
    let earlier = state.pending.failures.iter().position(|f| f.command == command);
    if failed {
        if earlier.is_none() {
            let error_line = first_error_line(&turn.content);
            state.pending.failures.push(FailedCommand { command, turn: turn.turn_number, error_line });
        }
        return;
    }
    if let Some(i) = earlier {
        let failure = state.pending.failures.remove(i);
        let shown = truncate_end(&failure.command, 120);
        let why = if failure.error_line.is_empty() { String::new() } else { format!(" ({})", failure.error_line) };
        state
            .errors_resolved
            .push(format!("`{shown}` failed at turn {}{why}, fixed by turn {}", failure.turn, turn.turn_number));
    }
    if let Some(message) = commit_message(&command) {
        state.decide(&format!("Committed: {}", truncate_end(&message, 200)), turn.turn_number);
    }
}

fn apply_task_result(state: &mut SessionState, turn: &Turn, args: Option<&serde_json::Value>) {
    let Some(result) = parse_task_result(&turn.content) else { return };
    let task_id = turn.metadata.get("task_id").and_then(|v| v.as_str()).map(str::to_string).or(result.task_id.clone());
    let goal = args.and_then(|a| a.get("goal")).and_then(|g| g.as_str()).unwrap_or("");
    match result.status {
        Some(status) if status != "submitted" => {
            for (path, action) in &result.files {
                state.touch(path, *action, turn.turn_number);
            }
            let files = match result.files.len() {
                0 => String::new(),
                1 => " — 1 file changed".to_string(),
                n => format!(" — {n} files changed"),
            };
            state.decide(&format!("{}{files}", truncate_end(&result.header, 200)), turn.turn_number);
            state.open_tasks.retain(|t| match &task_id {
                Some(id) => t.task_id != *id,
                None => goal.is_empty() || t.goal != goal,
            });
        }
        Some(status) => {
            let Some(id) = task_id else { return };
            let goal = if goal.is_empty() { result.header.clone() } else { goal.to_string() };
            state.open_tasks.retain(|t| t.task_id != id);
            state.open_tasks.push(OpenTask {
                task_id: id,
                goal: truncate_end(&goal, MAX_STORED_CHARS),
                status: status.to_string(),
            });
        }
        None => {}
    }
}

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
fn first_error_line(output: &str) -> String {
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
fn file_paths(args: &serde_json::Value, action: FileAction, rules: &ExtractionRules) -> Vec<(String, FileAction)> {
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
fn command_text(args: &serde_json::Value, rules: &ExtractionRules) -> Option<String> {
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
fn commit_message(command: &str) -> Option<String> {
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

/// A delegated task's result text (the `delegate_task` format).
struct TaskResult {
    header: String,
    /// "completed", "failed", "cancelled" or "submitted"; `None` when the text is not a task result.
    status: Option<&'static str>,
    task_id: Option<String>,
    files: Vec<(String, FileAction)>,
}

fn parse_task_result(content: &str) -> Option<TaskResult> {
    let header = content.lines().map(str::trim).find(|l| !l.is_empty())?.to_string();
    let lower = header.to_lowercase();
    let status = [
        ("task completed", "completed"),
        ("task failed", "failed"),
        ("task cancelled", "cancelled"),
        ("task canceled", "cancelled"),
        ("task submitted", "submitted"),
    ]
    .into_iter()
    .find(|(prefix, _)| lower.starts_with(prefix))
    .map(|(_, s)| s);
    let task_id = if status == Some("submitted") {
        header.split_once(':').and_then(|(_, rest)| rest.split_whitespace().next()).map(str::to_string)
    } else {
        None
    };
    let mut files = Vec::new();
    let mut in_files = false;
    for line in content.lines() {
        let t = line.trim();
        if t.eq_ignore_ascii_case("files changed:") {
            in_files = true;
            continue;
        }
        if !in_files {
            continue;
        }
        let Some(item) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) else {
            in_files = false;
            continue;
        };
        let (path, action) = match item.rsplit_once(" (") {
            Some((path, note)) if note.ends_with(')') => {
                let action = match note.trim_end_matches(')').to_lowercase().as_str() {
                    "modified" | "edited" | "updated" | "changed" => FileAction::Edit,
                    "created" | "added" | "new" => FileAction::Create,
                    "deleted" | "removed" => FileAction::Delete,
                    _ => FileAction::Write,
                };
                (path, action)
            }
            _ => (item, FileAction::Write),
        };
        files.push((path.trim().to_string(), action));
    }
    Some(TaskResult { header, status, task_id, files })
}

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
pub(crate) fn truncate_middle(s: &str, max: usize) -> String {
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
fn truncate_keep_end(s: &str, max: usize, tail: usize) -> String {
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
pub(crate) fn yaml_str(s: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Convo;
    use expect_test::{expect, Expect};
    use proptest::prelude::*;

    fn replay(turns: &[Turn], rules: &ExtractionRules) -> SessionState {
        let mut state = SessionState::new("s1", "/home/ana/shop", "gpt-test");
        for turn in turns {
            apply_turn(&mut state, turn, rules);
        }
        state
    }

    /// Replays the conversation with the default rules and compares the rendered register.
    fn check(convo: &mut Convo, expect: Expect) {
        let state = replay(&convo.build(), &ExtractionRules::default());
        expect.assert_eq(&render_yaml(&state));
    }

    #[test]
    fn representative_session() {
        let mut c = Convo::new();
        c.user("Let's add refresh tokens.\nWe use JWT. Never use an ORM, raw SQL only.")
            .calls("Reading the module.", &[("c1", "read_file", r#"{"path":"src/auth.py"}"#)])
            .result("c1", "read_file", "def login(): ...")
            .calls("", &[("c2", "edit_file", r#"{"file_path":"src/auth.py","old":"a","new":"b"}"#), ("c3", "write_file", r#"{"path":"tests/test_auth.py"}"#)])
            .result("c2", "edit_file", "ok")
            .result("c3", "write_file", "ok")
            .calls("", &[("c4", "bash", r#"{"command":"pytest  -q"}"#)])
            .result("c4", "bash", "E   ImportError: No module named 'jwt'\n1 failed\nexit code: 1")
            .calls("", &[("c5", "bash", r#"{"command":"pip install pyjwt"}"#)])
            .result("c5", "bash", "Successfully installed PyJWT")
            .calls("", &[("c6", "bash", r#"{"command":"pytest -q"}"#)])
            .result("c6", "bash", "3 passed\nexit code: 0")
            .calls("", &[("c7", "bash", r#"{"command":"git add -A && git commit -m \"Add refresh token rotation\""}"#)])
            .result("c7", "bash", "[main 1a2b3c] Add refresh token rotation")
            .user("Now migrate the routes to TypeScript — don't touch the migrations.")
            .calls("", &[("c8", "delegate_task", r#"{"goal":"Migrate src/routes to TypeScript"}"#)])
            .result(
                "c8",
                "delegate_task",
                "Task completed: \"Migrate src/routes to TypeScript\"\n\nSubtasks:\n  [x] Convert routes\n\nFiles changed:\n  - src/routes/index.ts (created)\n  - src/routes/index.js (deleted)\n  - src/app.ts (modified)\n\nVerification: All subtasks passed.",
            );
        check(
            &mut c,
            expect![[r#"
                session:
                  id: "s1"
                  workspace: "/home/ana/shop"
                  model: "gpt-test"
                  turn_count: 17
                  total_tokens: 233
                files_touched:
                  - {path: "src/auth.py", action: edit, turn: 5}
                  - {path: "tests/test_auth.py", action: write, turn: 6}
                  - {path: "src/routes/index.ts", action: create, turn: 17}
                  - {path: "src/routes/index.js", action: delete, turn: 17}
                  - {path: "src/app.ts", action: edit, turn: 17}
                key_decisions:
                  - "We use JWT. (turn 1)"
                  - "Never use an ORM, raw SQL only. (turn 1)"
                  - "Committed: Add refresh token rotation (turn 14)"
                  - "Now migrate the routes to TypeScript — don't touch the migrations. (turn 15)"
                  - "Task completed: \"Migrate src/routes to TypeScript\" — 3 files changed (turn 17)"
                current_focus: "Now migrate the routes to TypeScript — don't touch the migrations."
                errors_resolved:
                  - "`pytest -q` failed at turn 8 (E   ImportError: No module named 'jwt'), fixed by turn 12"
                open_tasks: []
            "#]],
        );
    }

    #[test]
    fn file_tools_map_through_one_table() {
        fn touched(name: &str, args: &str, rules: &ExtractionRules) -> String {
            let mut c = Convo::new();
            c.calls("", &[("c1", name, args)]).result("c1", name, "done");
            let state = replay(&c.build(), rules);
            state
                .files_touched
                .iter()
                .map(|f| format!("{} {}", f.action.as_str(), f.path))
                .collect::<Vec<_>>()
                .join(", ")
        }
        let rules = ExtractionRules::default().with_file_tool("save_doc", FileAction::Write);
        let rows = [
            ("read_file", r#"{"path":"a.rs"}"#, "read a.rs"),
            ("view", r#"{"filename":"b.md"}"#, "read b.md"),
            ("cat", r#"{"target":"c.txt"}"#, "read c.txt"),
            ("write_file", r#"{"file_path":"d.rs","content":"x"}"#, "write d.rs"),
            ("create_file", r#"{"path":"e.rs"}"#, "create e.rs"),
            ("edit_file", r#"{"path":"f.rs"}"#, "edit f.rs"),
            ("str_replace", r#"{"path":"g.rs"}"#, "edit g.rs"),
            ("delete_file", r#"{"path":"h.rs"}"#, "delete h.rs"),
            ("rm", r#"{"paths":["i.rs","j.rs"]}"#, "delete i.rs, delete j.rs"),
            ("str_replace_based_edit_tool", r#"{"command":"view","path":"k.rs"}"#, "read k.rs"),
            ("str_replace_based_edit_tool", r#"{"command":"create","path":"l.rs"}"#, "create l.rs"),
            (
                "apply_patch",
                r#"{"input":"*** Begin Patch\n*** Update File: m.rs\n@@\n-a\n+b\n*** Add File: n.rs\n+x\n*** Delete File: o.rs\n*** End Patch"}"#,
                "edit m.rs, create n.rs, delete o.rs",
            ),
            ("apply_patch", r#"{"patch":"--- a/p.rs\n+++ b/p.rs\n@@ -1 +1 @@\n-a\n+b"}"#, "edit p.rs"),
            ("save_doc", r#"{"path":"q.md"}"#, "write q.md"),
            ("read_file", r#"{"path":""}"#, ""),
            ("read_file", "not json {", ""),
            ("search_files", r#"{"path":"src"}"#, ""),
        ];
        for (name, args, expect) in rows {
            assert_eq!(touched(name, args, &rules), expect, "{name}({args})");
        }
    }

    #[test]
    fn failed_file_tools_touch_nothing() {
        let mut c = Convo::new();
        c.calls("", &[("c1", "write_file", r#"{"path":"x.rs"}"#)])
            .result("c1", "write_file", "permission denied")
            .status(TurnStatus::Error);
        assert!(replay(&c.build(), &ExtractionRules::default()).files_touched.is_empty());
    }

    #[test]
    fn recognises_failed_results() {
        fn failed(content: &str, status: TurnStatus, metadata: serde_json::Value) -> bool {
            let mut c = Convo::new();
            c.result("c1", "bash", content).status(status).meta(metadata);
            result_failed(&c.build()[0])
        }
        use serde_json::json;
        let ok = TurnStatus::Complete;
        let rows = [
            ("all good", ok, json!(null), false),
            ("boom", TurnStatus::Error, json!(null), true),
            ("boom", ok, json!({"success": false}), true),
            ("exit code: 1", ok, json!({"success": true}), false),
            ("x", ok, json!({"is_error": true}), true),
            ("x", ok, json!({"exit_code": 2}), true),
            ("x", ok, json!({"exitCode": 0}), false),
            ("x", ok, json!({"returncode": 127}), true),
            ("output\n[exit code: 2]", ok, json!(null), true),
            ("Exit status 1\noutput", ok, json!(null), true),
            ("bash: foo: not found\nexited with code 127", ok, json!(null), true),
            ("done\nexit code: 0", ok, json!(null), false),
            ("output\nthe exit code 3 is only in a middle line\nlast line", ok, json!(null), false),
        ];
        for (content, status, meta, expect) in rows {
            assert_eq!(failed(content, status, meta.clone()), expect, "{content:?} {status:?} {meta}");
        }
    }

    #[test]
    fn reads_commit_messages() {
        let rows = [
            (r#"git commit -m "Add login""#, Some("Add login")),
            (r#"git commit -am 'Fix: the "bug"'"#, Some(r#"Fix: the "bug""#)),
            (r#"cd app && git add . && git commit --message="Ship it" && git push"#, Some("Ship it")),
            (r#"git -C repo commit -m Quick"#, Some("Quick")),
            (r#"git commit -m"Tight""#, Some("Tight")),
            ("git commit -m \"$(cat <<'EOF'\nAdd rotation\n\nLong body\nEOF\n)\"", Some("Add rotation")),
            (r#"git commit -m "Subject" -m "Body""#, Some("Subject")),
            (r#"git commit -m "escaped \" quote""#, Some(r#"escaped " quote"#)),
            ("git commit", None),
            ("git log -m", None),
            (r#"echo "git commit -m nope""#, None),
            ("", None),
        ];
        for (command, expect) in rows {
            assert_eq!(commit_message(command).as_deref(), expect, "{command}");
        }
    }

    #[test]
    fn a_fix_is_only_recorded_for_the_same_command() {
        let mut c = Convo::new();
        c.calls("", &[("c1", "run_command", r#"{"command":"cargo test"}"#)])
            .result("c1", "run_command", "error[E0425]: cannot find value `x`")
            .meta(serde_json::json!({"exit_code": 101}))
            .calls("", &[("c2", "run_command", r#"{"command":"cargo build"}"#)])
            .result("c2", "run_command", "Finished")
            .calls("", &[("c3", "shell", r#"{"cmd":["cargo","test"]}"#)])
            .result("c3", "shell", "ok")
            .calls("", &[("c4", "run_command", r#"{"command":"cargo test"}"#)])
            .result("c4", "run_command", "test result: ok")
            .calls("", &[("c5", "run_command", r#"{"command":"cargo test"}"#)])
            .result("c5", "run_command", "test result: ok");
        let state = replay(&c.build(), &ExtractionRules::default());
        assert_eq!(
            state.errors_resolved,
            ["`cargo test` failed at turn 2 (error[E0425]: cannot find value `x`), fixed by turn 6"],
            "the argv form of the same command (turn 6) fixes it; later successes add nothing"
        );
    }

    #[test]
    fn prunes_to_the_newest_entries() {
        let mut c = Convo::new();
        for i in 0..30 {
            let id = format!("r{i}");
            c.calls("", &[(&id, "read_file", &format!(r#"{{"path":"f{}.rs"}}"#, i % 25))]).result(
                &id,
                "read_file",
                "x",
            );
        }
        c.calls("", &[("e", "edit_file", r#"{"path":"f7.rs"}"#)]).result("e", "edit_file", "ok");
        for i in 0..15 {
            c.user(&format!("Never use library number {i}."));
        }
        for i in 0..8 {
            let (bad, good) = (format!("b{i}"), format!("g{i}"));
            let cmd = format!(r#"{{"command":"make target{i}"}}"#);
            c.calls("", &[(&bad, "bash", &cmd)]).result(&bad, "bash", "exit code: 2");
            c.calls("", &[(&good, "bash", &cmd)]).result(&good, "bash", "exit code: 0");
        }
        let state = replay(&c.build(), &ExtractionRules::default());
        let paths: Vec<&str> = state.files_touched.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths.len(), MAX_FILES);
        assert_eq!(paths.iter().filter(|p| **p == "f7.rs").count(), 1, "one entry per path: {paths:?}");
        let last = state.files_touched.last().unwrap();
        assert_eq!((last.path.as_str(), last.action), ("f7.rs", FileAction::Edit), "the newest action wins");
        assert_eq!(state.key_decisions.len(), MAX_DECISIONS);
        assert!(state.key_decisions[0].starts_with("Never use library number 5."), "{:?}", state.key_decisions);
        assert_eq!(state.errors_resolved.len(), MAX_ERRORS);
        assert!(state.errors_resolved[0].starts_with("`make target3`"), "{:?}", state.errors_resolved);
    }

    #[test]
    fn repeated_constraints_move_to_the_newest_turn() {
        let mut c = Convo::new();
        c.user("Never use an ORM.").user("ok").user("Never use an ORM.");
        let state = replay(&c.build(), &ExtractionRules::default());
        assert_eq!(state.key_decisions, ["Never use an ORM. (turn 3)"]);
    }

    #[test]
    fn focus_is_the_first_line_cut_on_a_char_boundary() {
        let mut c = Convo::new();
        c.user(&format!("\n\n  {}\nsecond line", "é🦀".repeat(80)));
        let state = replay(&c.build(), &ExtractionRules::default());
        assert_eq!(state.current_focus.chars().count(), MAX_FOCUS_CHARS);
        assert!(state.current_focus.starts_with("é🦀é") && state.current_focus.ends_with('…'));
    }

    #[test]
    fn replaying_a_turn_changes_nothing() {
        let mut c = Convo::new();
        c.user("We use JWT.").assistant("Noted.");
        let turns = c.build();
        let mut state = SessionState::default();
        assert!(apply_turn(&mut state, &turns[0], &ExtractionRules::default()));
        assert!(apply_turn(&mut state, &turns[1], &ExtractionRules::default()));
        let before = state.clone();
        assert!(!apply_turn(&mut state, &turns[0], &ExtractionRules::default()));
        assert!(!apply_turn(&mut state, &turns[1], &ExtractionRules::default()));
        assert_eq!(state, before);
        assert_eq!(state.version, 2);
    }

    #[test]
    fn tracks_delegated_tasks_until_they_finish() {
        let mut c = Convo::new();
        c.calls("", &[("d1", "delegate_task", r#"{"goal":"Port the CLI","wait":false}"#)])
            .result("d1", "delegate_task", "Task submitted: task-42")
            .calls("", &[("d2", "delegate_task", r#"{"goal":"Write docs","wait":false}"#)])
            .result("d2", "delegate_task", "Task submitted: task-43");
        let mut turns = c.build();
        let mut state = replay(&turns, &ExtractionRules::default());
        let open = |s: &SessionState| {
            s.open_tasks.iter().map(|t| format!("{} {} {}", t.task_id, t.status, t.goal)).collect::<Vec<_>>()
        };
        assert_eq!(open(&state), ["task-42 submitted Port the CLI", "task-43 submitted Write docs"]);

        // The result of a `wait: false` task arrives later as a system turn.
        let mut later = Convo::new();
        later.turns = std::mem::take(&mut turns);
        later
            .system("Task failed: \"Port the CLI\"\n\nSubtasks:\n  [!] build: linker error")
            .meta(serde_json::json!({"task_id": "task-42"}));
        let last = later.build().pop().unwrap();
        apply_turn(&mut state, &last, &ExtractionRules::default());
        assert_eq!(open(&state), ["task-43 submitted Write docs"]);
        assert_eq!(state.key_decisions, ["Task failed: \"Port the CLI\" (turn 5)"]);

        // The archive's task records are the authority.
        let record = |id: &str, status: &str| TaskRecord {
            task_id: id.to_string(),
            session_id: "s1".into(),
            turn_number: 3,
            goal: "Write docs".into(),
            context: String::new(),
            status: status.into(),
            result_delivered: false,
            created_at: 0,
            updated_at: 0,
        };
        let version = state.version;
        assert!(sync_tasks(&mut state, &[record("task-43", "executing")]));
        assert_eq!(open(&state), ["task-43 executing Write docs"]);
        assert!(!sync_tasks(&mut state, &[record("task-43", "executing")]));
        assert!(sync_tasks(&mut state, &[record("task-43", "completed")]));
        assert!(state.open_tasks.is_empty());
        assert_eq!(state.version, version + 2);
    }

    #[test]
    fn json_round_trips_and_old_json_loads() {
        let mut c = Convo::new();
        c.calls("", &[("c1", "bash", r#"{"command":"make"}"#)]).result("c1", "bash", "exit code: 2");
        let state = replay(&c.build(), &ExtractionRules::default());
        let json = serde_json::to_value(&state).unwrap();
        assert_eq!(SessionState::from_json(&json), state, "pending failures survive a reload");
        let old = serde_json::json!({"session": {"id": "x"}, "current_focus": "auth"});
        let loaded = SessionState::from_json(&old);
        assert_eq!((loaded.session.id.as_str(), loaded.current_focus.as_str(), loaded.version), ("x", "auth", 0));
        assert_eq!(SessionState::from_json(&serde_json::json!("garbage")), SessionState::default());
    }

    #[test]
    fn empty_register_renders() {
        expect![[r#"
            session:
              id: ""
              workspace: ""
              model: ""
              turn_count: 0
              total_tokens: 0
            files_touched: []
            key_decisions: []
            current_focus: ""
            errors_resolved: []
            open_tasks: []
        "#]]
        .assert_eq(&render_yaml(&SessionState::default()));
    }

    #[test]
    fn adversarial_register_stays_under_the_token_limit() {
        let huge = "p/".repeat(5_000); // 10 KB
        let nasty = "line\nbreak \"quote\" \\ tab\t nul\0 bell\u{7} ls\u{2028} bom\u{feff} ".repeat(300);
        let mut state = SessionState::new(huge.clone(), huge.clone(), nasty.clone());
        state.current_focus = nasty.clone();
        state.files_touched = (0..5_000)
            .map(|i| FileTouch { path: format!("{huge}{i}{nasty}"), action: FileAction::Edit, turn: i })
            .collect();
        state.key_decisions = (0..3_000).map(|i| format!("{nasty}{i}")).collect();
        state.errors_resolved = vec![nasty.clone(); 100];
        state.open_tasks = vec![OpenTask { task_id: nasty.clone(), goal: huge.clone(), status: nasty.clone() }; 50];
        let yaml = render_yaml(&state);
        assert!(estimate_tokens(&yaml) <= STATE_TOKEN_LIMIT, "{} tokens", estimate_tokens(&yaml));
        assert!(yaml.contains("# ") && yaml.contains("older entries left out"), "{yaml}");
        assert!(yaml.contains("files_touched:\n  - {path: \"p/p/"), "keeps the newest files: {yaml}");
        assert!(yaml.contains(" 2999\"\n"), "a cut decision keeps its ending: {yaml}");
        for line in yaml.lines() {
            assert!(line.chars().all(|c| !c.is_control()), "raw control character in {line:?}");
        }
        // Extraction itself keeps stored strings bounded.
        let mut c = Convo::new();
        c.calls("", &[("c1", "write_file", &serde_json::json!({"path": huge}).to_string())]).result(
            "c1",
            "write_file",
            "ok",
        );
        let state = replay(&c.build(), &ExtractionRules::default());
        assert_eq!(state.files_touched[0].path.chars().count(), MAX_STORED_CHARS);
    }

    #[test]
    fn render_is_deterministic() {
        let mut c = Convo::new();
        c.user("We use JWT.").calls("", &[("c1", "read_file", r#"{"path":"a"}"#)]).result("c1", "read_file", "x");
        let turns = c.build();
        let a = render_yaml(&replay(&turns, &ExtractionRules::default()));
        let b = render_yaml(&replay(&turns, &ExtractionRules::default()));
        assert_eq!(a, b);
    }

    /// Reads back a scalar written by [`yaml_str`] following the YAML spec's double-quoted escapes.
    fn yaml_unquote(quoted: &str) -> Option<String> {
        let inner = quoted.strip_prefix('"')?.strip_suffix('"')?;
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => return None,
                '\\' => match chars.next()? {
                    '"' => out.push('"'),
                    '\\' => out.push('\\'),
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    '0' => out.push('\0'),
                    'L' => out.push('\u{2028}'),
                    'P' => out.push('\u{2029}'),
                    'x' => out.push(char::from_u32(
                        u32::from_str_radix(&chars.by_ref().take(2).collect::<String>(), 16).ok()?,
                    )?),
                    'u' => out.push(char::from_u32(
                        u32::from_str_radix(&chars.by_ref().take(4).collect::<String>(), 16).ok()?,
                    )?),
                    _ => return None,
                },
                c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' || c == '\u{feff}' => return None,
                c => out.push(c),
            }
        }
        Some(out)
    }

    proptest! {
        #[test]
        fn any_text_is_a_valid_yaml_scalar(s in any::<String>()) {
            let quoted = yaml_str(&s);
            prop_assert_eq!(yaml_unquote(&quoted), Some(s));
        }

        #[test]
        fn truncation_is_char_safe_and_bounded(s in any::<String>(), max in 1usize..50, tail in 0usize..30) {
            let cut = [truncate_end(&s, max), truncate_middle(&s, max), truncate_keep_end(&s, max, tail)];
            for c in &cut {
                prop_assert!(c.chars().count() <= max);
                if s.chars().count() <= max {
                    prop_assert_eq!(c, &s);
                }
            }
        }
    }
}
