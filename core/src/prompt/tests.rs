//! Tests of the system prompt and the tool definitions with their approval policies.

use super::*;
use expect_test::expect;

#[test]
fn full_prompt() {
    let options = PromptOptions {
        workspace: "/home/ana/shop".into(),
        delegation: true,
        extra_instructions: "Answer in British English.".into(),
    };
    expect![[r#"
        You are Cowork, an assistant that works with the user on one long-running piece of work (code, research or writing) in a single continuous conversation in the workspace "/home/ana/shop".

        ## Memory: what you see and what is archived
        - This context window holds only the most recent turns of the conversation, plus the session-state register below, which is updated after every turn.
        - The archive is complete and verbatim: every message, tool call and tool result of this session is stored, and nothing is summarised or thrown away. Older turns that are not in this window are still there.
        - Use conversation_recall before you guess, and instead of asking the user to repeat something:
          - search {query}: find earlier messages by words, identifiers or paths ("refresh_token", "src/auth.py"); scope "workspace" also searches the user's other sessions in this workspace.
          - range {start_turn, end_turn}: read turns in order, for example the full text of a shortened tool output.
          - tool_calls {tool_name}: past runs of one tool with their arguments and results, newest first.
          - summary: the session-state register with counts of turns, tokens, files, decisions and tasks.
        - When the user refers to something earlier ("like we discussed", "that error") that you cannot see, call conversation_recall first.
        - Constraints the user stated (key_decisions in the register) stay in force until the user changes them.
        - A shortened tool output names the turn that holds its full text; read it with range when you need the details.

        ## Delegating work: delegate_task
        delegate_task hands work to a task orchestrator that plans it, splits it into subtasks, runs them (in parallel where it can), verifies each one and reports back.
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
        The orchestrator does not see this conversation: state the goal concretely (file paths, constraints, acceptance criteria) and pass the relevant constraints, decisions and files in `context`. The user approves every delegation. wait: true (the default) returns the result when the task finishes; wait: false returns the task id at once, the user watches progress, and the result is added to this conversation when the task ends: use it for long work the user does not need to wait for. When a result comes back, report what was done, what failed and what was verified, and discuss the next step with the user.

        ## Instructions from the user's settings
        Answer in British English."#]].assert_eq(&system_prompt(&options));
}

#[test]
fn prompt_without_delegation_or_workspace() {
    let options = PromptOptions { delegation: false, ..PromptOptions::default() };
    let prompt = system_prompt(&options);
    assert!(!prompt.contains("delegate_task"), "{prompt}");
    assert!(prompt.starts_with("You are Cowork") && prompt.contains("single continuous conversation.\n\n## Memory"));
    assert!(!prompt.contains("## Instructions"));
    let names: Vec<String> = builtin_tools(&options).into_iter().map(|t| t.name).collect();
    assert_eq!(names, [RECALL_TOOL]);
}

/// Pretty JSON with keys sorted, whatever map order serde_json was built with.
fn canonical(value: &Value) -> String {
    fn sort(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sort(&map[k]))).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_string_pretty(&sort(value)).expect("JSON values serialise")
}

#[test]
fn tool_schemas() {
    expect![[r#"
        {
          "function": {
            "description": "Read this session's complete, verbatim archive (and, with scope \"workspace\", the user's other sessions in this workspace). Use it before guessing or asking the user to repeat anything. Actions: \"search\" finds messages by words, identifiers or paths; \"range\" returns turns by number, in order; \"tool_calls\" lists past runs of one tool, newest first; \"summary\" returns the session-state register with counts.",
            "name": "conversation_recall",
            "parameters": {
              "additionalProperties": false,
              "properties": {
                "action": {
                  "description": "search: full-text search. range: turns start_turn..end_turn. tool_calls: past executions of tool_name. summary: the session-state register and counts.",
                  "enum": [
                    "search",
                    "range",
                    "tool_calls",
                    "summary"
                  ],
                  "type": "string"
                },
                "end_turn": {
                  "description": "For range: last turn number, inclusive.",
                  "minimum": 1,
                  "type": "integer"
                },
                "limit": {
                  "description": "For search and tool_calls: how many results (default 10, at most 50).",
                  "maximum": 50,
                  "minimum": 1,
                  "type": "integer"
                },
                "offset": {
                  "description": "For range of a single turn: start reading its text at this character (to page through a very long output).",
                  "minimum": 0,
                  "type": "integer"
                },
                "query": {
                  "description": "For search: words, an exact phrase or an identifier/path fragment. Any text is safe.",
                  "type": "string"
                },
                "roles": {
                  "description": "For search: only turns by these roles (default: all).",
                  "items": {
                    "enum": [
                      "user",
                      "assistant",
                      "tool",
                      "system"
                    ],
                    "type": "string"
                  },
                  "type": "array"
                },
                "scope": {
                  "description": "For search: this session (default; when it has no match, the workspace, as the answer says) or every session in the workspace.",
                  "enum": [
                    "session",
                    "workspace"
                  ],
                  "type": "string"
                },
                "session_id": {
                  "description": "For range: another session of this workspace, as named by a workspace search hit (default: this session).",
                  "type": "string"
                },
                "start_turn": {
                  "description": "For range: first turn number.",
                  "minimum": 1,
                  "type": "integer"
                },
                "tool_name": {
                  "description": "For tool_calls: the tool's name, e.g. \"read_file\".",
                  "type": "string"
                }
              },
              "required": [
                "action"
              ],
              "type": "object"
            }
          },
          "type": "function"
        }"#]].assert_eq(&canonical(&conversation_recall_tool()));
    expect![[r#"
        {
          "function": {
            "description": "Hand complex, multi-step work to the task orchestrator, which plans it, splits it into subtasks, runs them with verification and reports the result back into this conversation. Use it for multi-file changes, work that needs a plan or verification, or independent steps that can run in parallel; use direct tools for single-file edits, single commands, quick fixes and exploration. The user approves every call.",
            "name": "delegate_task",
            "parameters": {
              "additionalProperties": false,
              "properties": {
                "context": {
                  "additionalProperties": true,
                  "description": "What the orchestrator needs from this conversation, which it cannot see: constraints, decisions, preferences, relevant files.",
                  "type": "object"
                },
                "goal": {
                  "description": "What needs to be accomplished. Be specific: file paths, constraints and acceptance criteria.",
                  "type": "string"
                },
                "wait": {
                  "default": true,
                  "description": "true (default): return the full result when the task finishes. false: return the task id at once; the result is added to the conversation when the task ends.",
                  "type": "boolean"
                }
              },
              "required": [
                "goal"
              ],
              "type": "object"
            }
          },
          "type": "function"
        }"#]].assert_eq(&canonical(&delegate_task_tool()));
}

#[test]
fn approval_policies() {
    let specs = builtin_tools(&PromptOptions::default());
    let policies: Vec<(&str, ApprovalPolicy)> = specs.iter().map(|t| (t.name.as_str(), t.approval)).collect();
    assert_eq!(policies, [(RECALL_TOOL, ApprovalPolicy::Auto), (DELEGATE_TOOL, ApprovalPolicy::AskEveryTime)]);
    assert_eq!(approval_policy(DELEGATE_TOOL), Some(ApprovalPolicy::AskEveryTime));
    assert_eq!(approval_policy("read_file"), None);
    for spec in &specs {
        assert_eq!(spec.definition["function"]["name"], spec.name.as_str());
    }
    assert_eq!(serde_json::to_string(&ApprovalPolicy::AskEveryTime).unwrap(), "\"ask_every_time\"");
}
