//! The static system prompt (how the model should use the archive and when to delegate) and the
//! definitions of the two built-in tools, `conversation_recall` and `delegate_task`, with their approval
//! policies.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The name of the built-in tool that reads the archive ([`crate::recall`]).
pub const RECALL_TOOL: &str = "conversation_recall";
/// The name of the built-in tool that hands work to the orchestrator.
pub const DELEGATE_TOOL: &str = crate::state::DELEGATE_TOOL;

/// What the static prompt depends on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PromptOptions {
    /// The workspace the session belongs to (empty: not mentioned).
    pub workspace: String,
    /// Whether `delegate_task` is offered (an orchestrator is configured).
    pub delegation: bool,
    /// Extra instructions from the user's settings or the embedding host, appended verbatim.
    pub extra_instructions: String,
}

impl Default for PromptOptions {
    fn default() -> PromptOptions {
        PromptOptions { workspace: String::new(), delegation: true, extra_instructions: String::new() }
    }
}

/// How a tool call is allowed to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalPolicy {
    /// Runs without asking (read-only tools such as `conversation_recall`).
    Auto,
    /// The user approves every single call in the UI.
    AskEveryTime,
}

/// A tool offered to the model: its definition in the OpenAI function format and its approval policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name, as the model calls it.
    pub name: String,
    /// The definition sent to the model: `{"type": "function", "function": {name, description, parameters}}`.
    pub definition: Value,
    /// Whether each call needs the user's approval.
    pub approval: ApprovalPolicy,
}

const MEMORY_SECTION: &str = "\
## Memory: what you see and what is archived
- This context window holds only the most recent turns of the conversation, plus the session-state \
register below, which is updated after every turn.
- The archive is complete and verbatim: every message, tool call and tool result of this session is \
stored, and nothing is summarised or thrown away. Older turns that are not in this window are still there.
- Use conversation_recall before you guess, and instead of asking the user to repeat something:
  - search {query}: find earlier messages by words, identifiers or paths (\"refresh_token\", \
\"src/auth.py\"); scope \"workspace\" also searches the user's other sessions in this workspace.
  - range {start_turn, end_turn}: read turns in order, for example the full text of a shortened tool output.
  - tool_calls {tool_name}: past runs of one tool with their arguments and results, newest first.
  - summary: the session-state register with counts of turns, tokens, files, decisions and tasks.
- When the user refers to something earlier (\"like we discussed\", \"that error\") that you cannot see, \
call conversation_recall first.
- Constraints the user stated (key_decisions in the register) stay in force until the user changes them.
- A shortened tool output names the turn that holds its full text; read it with range when you need the \
details.";

const DELEGATION_SECTION: &str = "\
## Delegating work: delegate_task
delegate_task hands work to a task orchestrator that plans it, splits it into subtasks, runs them (in \
parallel where it can), verifies each one and reports back.
Use delegate_task for:
- Multi-file refactoring (more than 3 files)
- Tasks that benefit from a plan (migrations, new features)
- Work that needs verification (changes with test requirements)
- Independent steps that can run in parallel
Use your direct tools, or just answer, for:
- Reading or editing a single file
- Running a command
- Quick fixes (typos, small bugs)
- Exploratory work (searching, reading, understanding)
- Anything where the overhead of planning is not worth it
The orchestrator does not see this conversation: state the goal concretely (file paths, constraints, \
acceptance criteria) and pass the relevant constraints, decisions and files in `context`. The user approves \
every delegation. wait: true (the default) returns the result when the task finishes; wait: false returns \
the task id at once, the user watches progress, and the result is added to this conversation when the task \
ends: use it for long work the user does not need to wait for. When a result comes back, report what was \
done, what failed and what was verified, and discuss the next step with the user.";

/// The static system prompt: who the model is, how its memory works, and (when offered) when to delegate.
pub fn system_prompt(options: &PromptOptions) -> String {
    let mut out = String::from(
        "You are Cowork, an assistant that works with the user on one long-running piece of work \
         (code, research or writing) in a single continuous conversation",
    );
    if options.workspace.trim().is_empty() {
        out.push_str(".\n\n");
    } else {
        out.push_str(&format!(" in the workspace \"{}\".\n\n", options.workspace.trim()));
    }
    out.push_str(MEMORY_SECTION);
    if options.delegation {
        out.push_str("\n\n");
        out.push_str(DELEGATION_SECTION);
    }
    let extra = options.extra_instructions.trim();
    if !extra.is_empty() {
        out.push_str("\n\n## Instructions from the user's settings\n");
        out.push_str(extra);
    }
    out
}

/// `conversation_recall` in the OpenAI function format.
pub fn conversation_recall_tool() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": RECALL_TOOL,
            "description": "Read this session's complete, verbatim archive (and, with scope \"workspace\", the user's \
                other sessions in this workspace). Use it before guessing or asking the user to repeat anything. \
                Actions: \"search\" finds messages by words, identifiers or paths; \"range\" returns turns by \
                number, in order; \"tool_calls\" lists past runs of one tool, newest first; \"summary\" returns \
                the session-state register with counts.",
            "parameters": {
                "type": "object",
                "properties": {
                    "action": {
                        "type": "string",
                        "enum": ["search", "range", "tool_calls", "summary"],
                        "description": "search: full-text search. range: turns start_turn..end_turn. tool_calls: \
                            past executions of tool_name. summary: the session-state register and counts."
                    },
                    "query": {
                        "type": "string",
                        "description": "For search: words, an exact phrase or an identifier/path fragment. Any text is safe."
                    },
                    "scope": {
                        "type": "string",
                        "enum": ["session", "workspace"],
                        "description": "For search: this session (default; when it has no match, the workspace, as the answer says) or every session in the workspace."
                    },
                    "roles": {
                        "type": "array",
                        "items": {"type": "string", "enum": ["user", "assistant", "tool", "system"]},
                        "description": "For search: only turns by these roles (default: all)."
                    },
                    "start_turn": {"type": "integer", "minimum": 1, "description": "For range: first turn number."},
                    "end_turn": {"type": "integer", "minimum": 1, "description": "For range: last turn number, inclusive."},
                    "offset": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "For range of a single turn: start reading its text at this character (to page through a very long output)."
                    },
                    "session_id": {
                        "type": "string",
                        "description": "For range: another session of this workspace, as named by a workspace search hit (default: this session)."
                    },
                    "tool_name": {"type": "string", "description": "For tool_calls: the tool's name, e.g. \"read_file\"."},
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 50,
                        "description": "For search and tool_calls: how many results (default 10, at most 50)."
                    }
                },
                "required": ["action"],
                "additionalProperties": false
            }
        }
    })
}

/// `delegate_task` in the OpenAI function format.
pub fn delegate_task_tool() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": DELEGATE_TOOL,
            "description": "Hand complex, multi-step work to the task orchestrator, which plans it, splits it into \
                subtasks, runs them with verification and reports the result back into this conversation. Use it \
                for multi-file changes, work that needs a plan or verification, or independent steps that can run \
                in parallel; use direct tools for single-file edits, single commands, quick fixes and exploration. \
                The user approves every call.",
            "parameters": {
                "type": "object",
                "properties": {
                    "goal": {
                        "type": "string",
                        "description": "What needs to be accomplished. Be specific: file paths, constraints and acceptance criteria."
                    },
                    "context": {
                        "type": "object",
                        "description": "What the orchestrator needs from this conversation, which it cannot see: \
                            constraints, decisions, preferences, relevant files.",
                        "additionalProperties": true
                    },
                    "wait": {
                        "type": "boolean",
                        "default": true,
                        "description": "true (default): return the full result when the task finishes. false: return \
                            the task id at once; the result is added to the conversation when the task ends."
                    }
                },
                "required": ["goal"],
                "additionalProperties": false
            }
        }
    })
}

/// The approval policy of a built-in tool; `None` for tools the host registers (the host decides).
pub fn approval_policy(tool_name: &str) -> Option<ApprovalPolicy> {
    match tool_name {
        RECALL_TOOL => Some(ApprovalPolicy::Auto),
        DELEGATE_TOOL => Some(ApprovalPolicy::AskEveryTime),
        _ => None,
    }
}

/// The built-in tools to offer: recall always, `delegate_task` when an orchestrator is configured.
pub fn builtin_tools(options: &PromptOptions) -> Vec<ToolSpec> {
    let mut tools = vec![ToolSpec {
        name: RECALL_TOOL.to_string(),
        definition: conversation_recall_tool(),
        approval: ApprovalPolicy::Auto,
    }];
    if options.delegation {
        tools.push(ToolSpec {
            name: DELEGATE_TOOL.to_string(),
            definition: delegate_task_tool(),
            approval: ApprovalPolicy::AskEveryTime,
        });
    }
    tools
}

#[cfg(test)]
mod tests;
