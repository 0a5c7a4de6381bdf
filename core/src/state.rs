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
//!   (`constraints::detect_constraints`) are kept verbatim with "(turn N)", a repeated constraint
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
use crate::{Role, TaskRecord, Turn};

mod commands;
mod render;

pub use commands::result_failed;
use commands::{command_text, commit_message, file_paths, first_error_line};
pub use render::render_yaml;
pub(crate) use render::{thousands, truncate_end};

/// Most files the register lists (one entry per path; the oldest go first).
pub const MAX_FILES: usize = 20;
/// Most key decisions the register keeps (the oldest go first).
pub const MAX_DECISIONS: usize = 10;
/// Most resolved errors the register keeps (the oldest go first).
pub const MAX_ERRORS: usize = 5;
/// Most open tasks the register lists (the oldest go first).
pub const MAX_OPEN_TASKS: usize = 20;
/// Longest current focus, in characters (longer lines are cut with "…").
pub const MAX_FOCUS_CHARS: usize = 100;
/// The rendered register never exceeds this many tokens (by [`estimate_tokens`](crate::tokens::estimate_tokens)).
pub const STATE_TOKEN_LIMIT: i64 = 1_000;
/// Longest string the register stores (paths, commands, decisions); longer ones are cut with "…".
const MAX_STORED_CHARS: usize = 1_000;
const MAX_PENDING_CALLS: usize = 64;
const MAX_PENDING_FAILURES: usize = 20;

/// The session-state register. Every field defaults, so JSON written by older versions still loads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionState {
    /// The session the register belongs to, with its running totals.
    pub session: SessionInfo,
    /// Oldest first; at most [`MAX_FILES`], one per path.
    pub files_touched: Vec<FileTouch>,
    /// "… (turn N)", oldest first; at most [`MAX_DECISIONS`].
    pub key_decisions: Vec<String>,
    /// The first non-empty line of the latest user message, at most [`MAX_FOCUS_CHARS`] characters (empty
    /// before the first one).
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

/// The session a register belongs to, with totals over the turns applied to it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionInfo {
    /// The session's id (empty in a register that was never set up).
    pub id: String,
    /// The session's workspace.
    pub workspace: String,
    /// The model in use when the register was created.
    pub model: String,
    /// The highest turn number applied.
    pub turn_count: i64,
    /// Estimated tokens of all turns applied (their `token_count`s summed).
    pub total_tokens: i64,
}

/// What a tool did to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileAction {
    /// Read or viewed.
    Read,
    /// Created (`create_file`, an added file in a patch).
    Create,
    /// Written whole (`write_file`): the archive cannot tell whether it existed before.
    Write,
    /// Changed in place (an edit tool, an updated file in a patch).
    Edit,
    /// Deleted.
    Delete,
    /// Attached to a message by the user (the path is the attachment's name as shown).
    Attach,
}

impl FileAction {
    /// The lower-case name the register uses ("read", "edit", …).
    pub fn as_str(self) -> &'static str {
        match self {
            FileAction::Read => "read",
            FileAction::Create => "create",
            FileAction::Write => "write",
            FileAction::Edit => "edit",
            FileAction::Delete => "delete",
            FileAction::Attach => "attach",
        }
    }
}

/// A file a tool touched, as the register lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileTouch {
    /// The path as the tool's arguments (or the patch) named it.
    pub path: String,
    /// What the latest touch did.
    pub action: FileAction,
    /// The turn number of the latest touch's tool result.
    pub turn: i64,
}

/// A delegated task that has not finished, as the register lists it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpenTask {
    /// The orchestrator's id for the task.
    pub task_id: String,
    /// What the task was asked to do.
    pub goal: String,
    /// The task's status as last seen.
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
    // Claude Code's tools (imported transcripts).
    ("Read", FileAction::Read),
    ("Write", FileAction::Write),
    ("Edit", FileAction::Edit),
    ("MultiEdit", FileAction::Edit),
    ("NotebookEdit", FileAction::Edit),
];
/// Tools that run a shell command.
pub const DEFAULT_COMMAND_TOOLS: &[&str] = &[
    "run_command",
    "bash",
    "shell",
    "shell_execute",
    "execute_command",
    "terminal",
    "Bash",
    "exec_command",
    "local_shell",
];
/// Argument keys that hold a file path (a string or a list of strings).
pub const DEFAULT_PATH_KEYS: &[&str] =
    &["path", "file_path", "filepath", "filename", "file", "target", "target_file", "paths", "notebook_path"];
/// Argument keys that hold a command (a string or an argv list).
pub const DEFAULT_COMMAND_KEYS: &[&str] = &["command", "cmd", "script"];
/// The tool that delegates work to the orchestrator.
pub const DELEGATE_TOOL: &str = "delegate_task";

/// The tables extraction reads. `Default` is the built-in set; hosts extend it for their own tools.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtractionRules {
    /// The one mapping from tool name to file action.
    pub file_tools: Vec<(String, FileAction)>,
    /// Tools that run a shell command: failures then fixes become resolved errors, `git commit`s decisions.
    pub command_tools: Vec<String>,
    /// Argument keys that hold a file path (a string or a list of strings).
    pub path_keys: Vec<String>,
    /// Argument keys that hold a command (a string or an argv list).
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

    /// What `tool` does to files; `None` when it is not a file tool.
    pub fn file_action(&self, tool: &str) -> Option<FileAction> {
        self.file_tools.iter().find(|(n, _)| n == tool).map(|(_, a)| *a)
    }

    fn is_command_tool(&self, tool: &str) -> bool {
        self.command_tools.iter().any(|n| n == tool)
    }
}

impl SessionState {
    /// An empty register for the session `id`.
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
    crate::order::sort_by_key(&mut open, |t| (t.turn_number, t.created_at));
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
    for a in &turn.attachments {
        state.touch(&a.display_name(), FileAction::Attach, turn.turn_number);
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

#[cfg(test)]
mod tests;
