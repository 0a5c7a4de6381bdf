//! Building requests: each format's body, headers and URL for the same conversation.

use expect_test::{expect, Expect};
use serde_json::{json, Value};

use crate::message::ContextMessage;
use crate::provider::*;
use crate::{Role, ToolCall};

// ---- requests -----------------------------------------------------------------------------------

fn msg(role: Role, content: &str) -> ContextMessage {
    ContextMessage::new(role, content)
}

fn calls(content: &str, calls: &[(&str, &str, &str)]) -> ContextMessage {
    ContextMessage {
        tool_calls: calls
            .iter()
            .map(|(id, name, args)| ToolCall {
                id: id.to_string(),
                name: name.to_string(),
                arguments: args.to_string(),
            })
            .collect(),
        ..msg(Role::Assistant, content)
    }
}

fn result(id: &str, name: &str, content: &str) -> ContextMessage {
    ContextMessage { tool_call_id: Some(id.to_string()), name: Some(name.to_string()), ..msg(Role::Tool, content) }
}

fn config(kind: ProviderKind, base_url: &str, api_key: &str) -> ModelSettings {
    ModelSettings {
        kind,
        base_url: base_url.to_string(),
        model: "test-model".to_string(),
        api_key: api_key.to_string(),
        ..ModelSettings::default()
    }
}

fn read_file_tool() -> Value {
    json!({"type": "function", "function": {
        "name": "read_file",
        "description": "Read a file of the workspace.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    }})
}

/// A session as context assembly hands it over: the system prompt, an exchange with two parallel
/// calls, a mid-list system note about an orphaned result, and the newest user message.
fn conversation() -> Vec<ContextMessage> {
    vec![
        msg(Role::System, "You are Cowork.\n\nsession:\n  id: s1"),
        msg(Role::User, "What's in src/auth.py, and what did we decide about refresh tokens?"),
        calls(
            "Let me look.",
            &[
                ("call_Ab12", "read_file", r#"{"path": "src/auth.py"}"#),
                ("call_Cd34", "conversation_recall", r#"{"action": "search", "query": "refresh_token"}"#),
            ],
        ),
        result("call_Ab12", "read_file", "def login(): ..."),
        result("call_Cd34", "conversation_recall", "[Turn 12] user: refresh tokens expire after 7 days"),
        msg(Role::Assistant, "auth.py defines login(); refresh tokens expire after 7 days.  \n"),
        msg(Role::System, "[Turn 40: a result from delegate_task that arrived outside its tool call]\nTask completed: \"Add refresh\""),
        msg(Role::User, "Great, thanks."),
    ]
}

fn render_request(req: &HttpRequest) -> String {
    let mut out = format!("{} {}\n", req.method, req.url);
    for (k, v) in &req.headers {
        out.push_str(&format!("{k}: {v}\n"));
    }
    let body: Value = serde_json::from_str(&req.body).expect("the body is JSON");
    out.push_str(&serde_json::to_string_pretty(&body).unwrap());
    out
}

fn check_request(cfg: &ModelSettings, messages: &[ContextMessage], tools: &[Value], expect: Expect) {
    expect.assert_eq(&render_request(&build_request(cfg, messages, tools)));
}

#[test]
fn openai_request() {
    let mut cfg = config(ProviderKind::OpenAi, "https://api.openai.com/v1/", "sk-test-123");
    cfg.max_output_tokens = Some(4096);
    check_request(
        &cfg,
        &conversation(),
        &[read_file_tool()],
        expect![[r#"
            POST https://api.openai.com/v1/chat/completions
            content-type: application/json
            accept: text/event-stream
            authorization: Bearer sk-test-123
            {
              "max_tokens": 4096,
              "messages": [
                {
                  "content": "You are Cowork.\n\nsession:\n  id: s1",
                  "role": "system"
                },
                {
                  "content": "What's in src/auth.py, and what did we decide about refresh tokens?",
                  "role": "user"
                },
                {
                  "content": "Let me look.",
                  "role": "assistant",
                  "tool_calls": [
                    {
                      "function": {
                        "arguments": "{\"path\": \"src/auth.py\"}",
                        "name": "read_file"
                      },
                      "id": "call_Ab12",
                      "type": "function"
                    },
                    {
                      "function": {
                        "arguments": "{\"action\": \"search\", \"query\": \"refresh_token\"}",
                        "name": "conversation_recall"
                      },
                      "id": "call_Cd34",
                      "type": "function"
                    }
                  ]
                },
                {
                  "content": "def login(): ...",
                  "role": "tool",
                  "tool_call_id": "call_Ab12"
                },
                {
                  "content": "[Turn 12] user: refresh tokens expire after 7 days",
                  "role": "tool",
                  "tool_call_id": "call_Cd34"
                },
                {
                  "content": "auth.py defines login(); refresh tokens expire after 7 days.  \n",
                  "role": "assistant"
                },
                {
                  "content": "[Turn 40: a result from delegate_task that arrived outside its tool call]\nTask completed: \"Add refresh\"",
                  "role": "system"
                },
                {
                  "content": "Great, thanks.",
                  "role": "user"
                }
              ],
              "model": "test-model",
              "stream": true,
              "stream_options": {
                "include_usage": true
              },
              "tools": [
                {
                  "function": {
                    "description": "Read a file of the workspace.",
                    "name": "read_file",
                    "parameters": {
                      "properties": {
                        "path": {
                          "type": "string"
                        }
                      },
                      "required": [
                        "path"
                      ],
                      "type": "object"
                    }
                  },
                  "type": "function"
                }
              ]
            }"#]],
    );
}

#[test]
fn openai_request_for_a_local_server_without_key_or_tools() {
    let cfg = config(ProviderKind::OpenAi, " http://localhost:11434/v1 ", "  ");
    let messages = [msg(Role::System, "Prompt."), msg(Role::System, "State."), msg(Role::User, "Hi")];
    check_request(
        &cfg,
        &messages,
        &[],
        expect![[r#"
        POST http://localhost:11434/v1/chat/completions
        content-type: application/json
        accept: text/event-stream
        {
          "messages": [
            {
              "content": "Prompt.\n\nState.",
              "role": "system"
            },
            {
              "content": "Hi",
              "role": "user"
            }
          ],
          "model": "test-model",
          "stream": true,
          "stream_options": {
            "include_usage": true
          }
        }"#]],
    );
}

#[test]
fn anthropic_request() {
    let cfg = config(ProviderKind::Anthropic, "https://api.anthropic.com/v1", "sk-ant-test");
    check_request(
        &cfg,
        &conversation(),
        &[read_file_tool()],
        expect![[r#"
        POST https://api.anthropic.com/v1/messages
        content-type: application/json
        accept: text/event-stream
        x-api-key: sk-ant-test
        anthropic-version: 2023-06-01
        anthropic-dangerous-direct-browser-access: true
        {
          "max_tokens": 8192,
          "messages": [
            {
              "content": [
                {
                  "text": "What's in src/auth.py, and what did we decide about refresh tokens?",
                  "type": "text"
                }
              ],
              "role": "user"
            },
            {
              "content": [
                {
                  "text": "Let me look.",
                  "type": "text"
                },
                {
                  "id": "call_Ab12",
                  "input": {
                    "path": "src/auth.py"
                  },
                  "name": "read_file",
                  "type": "tool_use"
                },
                {
                  "id": "call_Cd34",
                  "input": {
                    "action": "search",
                    "query": "refresh_token"
                  },
                  "name": "conversation_recall",
                  "type": "tool_use"
                }
              ],
              "role": "assistant"
            },
            {
              "content": [
                {
                  "content": "def login(): ...",
                  "tool_use_id": "call_Ab12",
                  "type": "tool_result"
                },
                {
                  "content": "[Turn 12] user: refresh tokens expire after 7 days",
                  "tool_use_id": "call_Cd34",
                  "type": "tool_result"
                }
              ],
              "role": "user"
            },
            {
              "content": [
                {
                  "text": "auth.py defines login(); refresh tokens expire after 7 days.  \n",
                  "type": "text"
                }
              ],
              "role": "assistant"
            },
            {
              "content": [
                {
                  "text": "[System note] [Turn 40: a result from delegate_task that arrived outside its tool call]\nTask completed: \"Add refresh\"",
                  "type": "text"
                },
                {
                  "text": "Great, thanks.",
                  "type": "text"
                }
              ],
              "role": "user"
            }
          ],
          "model": "test-model",
          "stream": true,
          "system": "You are Cowork.\n\nsession:\n  id: s1",
          "tools": [
            {
              "description": "Read a file of the workspace.",
              "input_schema": {
                "properties": {
                  "path": {
                    "type": "string"
                  }
                },
                "required": [
                  "path"
                ],
                "type": "object"
              },
              "name": "read_file"
            }
          ]
        }"#]],
    );
}

#[test]
fn anthropic_request_repairs_what_the_api_would_reject() {
    let cfg = config(ProviderKind::Anthropic, "https://api.anthropic.com/v1/messages", "");
    let messages = [
        msg(Role::System, "Prompt."),
        msg(Role::System, "   "),
        msg(Role::System, "State register."),
        // Starts with the assistant: a placeholder user message goes first.
        calls(
            "",
            &[
                ("functions.read_file:0", "read_file", ""),
                ("call 2", "write_file", "not json"),
                ("c3", "echo", "[1,2]"),
            ],
        ),
        result("functions.read_file:0", "read_file", "fn main() {}"),
        msg(Role::System, "Note between results."),
        result("call 2", "write_file", ""),
        // c3 has no result: a synthetic one is added. A result for a call not shown becomes text.
        msg(Role::User, "   "),
        result("call_gone", "read_file", "old output"),
        msg(Role::User, "Continue."),
        msg(Role::Tool, "result without a call id"),
        msg(Role::Assistant, "Sure. \n\n"),
    ];
    check_request(
        &cfg,
        &messages,
        &[],
        expect![[r#"
        POST https://api.anthropic.com/v1/messages
        content-type: application/json
        accept: text/event-stream
        anthropic-version: 2023-06-01
        anthropic-dangerous-direct-browser-access: true
        {
          "max_tokens": 8192,
          "messages": [
            {
              "content": [
                {
                  "text": "[Earlier turns are not shown.]",
                  "type": "text"
                }
              ],
              "role": "user"
            },
            {
              "content": [
                {
                  "id": "functions_read_file_0",
                  "input": {},
                  "name": "read_file",
                  "type": "tool_use"
                },
                {
                  "id": "call_2",
                  "input": {
                    "invalid_json_arguments": "not json"
                  },
                  "name": "write_file",
                  "type": "tool_use"
                },
                {
                  "id": "c3",
                  "input": {
                    "value": [
                      1,
                      2
                    ]
                  },
                  "name": "echo",
                  "type": "tool_use"
                }
              ],
              "role": "assistant"
            },
            {
              "content": [
                {
                  "content": "fn main() {}",
                  "tool_use_id": "functions_read_file_0",
                  "type": "tool_result"
                },
                {
                  "tool_use_id": "call_2",
                  "type": "tool_result"
                },
                {
                  "content": "No result was recorded for this call.",
                  "tool_use_id": "c3",
                  "type": "tool_result"
                },
                {
                  "text": "[System note] Note between results.",
                  "type": "text"
                },
                {
                  "text": "[Result of tool call call_gone, which is not shown]\nold output",
                  "type": "text"
                },
                {
                  "text": "Continue.",
                  "type": "text"
                },
                {
                  "text": "[Result from a tool, not linked to a tool call]\nresult without a call id",
                  "type": "text"
                }
              ],
              "role": "user"
            },
            {
              "content": [
                {
                  "text": "Sure.",
                  "type": "text"
                }
              ],
              "role": "assistant"
            }
          ],
          "model": "test-model",
          "stream": true,
          "system": "Prompt.\n\nState register."
        }"#]],
    );
}

#[test]
fn anthropic_tools_are_converted_from_the_function_format() {
    let tools: Vec<Value> = crate::prompt::builtin_tools(&crate::prompt::PromptOptions::default())
        .into_iter()
        .map(|t| t.definition)
        .chain([
            json!({"type": "function", "function": {"name": "no_params"}}),
            json!({"name": "native", "description": "Already Anthropic's format.", "input_schema": {"type": "object"}}),
            json!({"type": "function", "function": {"description": "no name: dropped"}}),
            json!("garbage"),
        ])
        .collect();
    let req = build_request(
        &config(ProviderKind::Anthropic, "https://api.anthropic.com/v1", "k"),
        &[msg(Role::User, "hi")],
        &tools,
    );
    let body: Value = serde_json::from_str(&req.body).unwrap();
    let summary: Vec<String> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            format!(
                "{} | described: {} | schema: {}",
                t["name"].as_str().unwrap(),
                t.get("description").is_some(),
                t["input_schema"]
                    .get("properties")
                    .map(|p| p.as_object().unwrap().keys().cloned().collect::<Vec<_>>().join(","))
                    .unwrap_or_default()
            )
        })
        .collect();
    expect![[r#"
        conversation_recall | described: true | schema: action,end_turn,limit,offset,query,roles,scope,session_id,start_turn,tool_name
        delegate_task | described: true | schema: context,goal,wait
        no_params | described: false | schema: 
        native | described: true | schema: "#]]
    .assert_eq(&summary.join("\n"));
    // The same tools go to OpenAI untouched.
    let req = build_request(&config(ProviderKind::OpenAi, "http://x/v1", ""), &[msg(Role::User, "hi")], &tools);
    let body: Value = serde_json::from_str(&req.body).unwrap();
    assert_eq!(body["tools"], Value::Array(tools));
}

#[test]
fn endpoint_urls_accept_any_base_form() {
    let rows = [
        (ProviderKind::OpenAi, "https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"),
        (ProviderKind::OpenAi, "https://api.openai.com/v1/", "https://api.openai.com/v1/chat/completions"),
        (ProviderKind::OpenAi, "http://127.0.0.1:8080/v1//", "http://127.0.0.1:8080/v1/chat/completions"),
        (
            ProviderKind::OpenAi,
            "http://localhost:1234/v1/chat/completions",
            "http://localhost:1234/v1/chat/completions",
        ),
        (ProviderKind::Anthropic, "https://api.anthropic.com/v1", "https://api.anthropic.com/v1/messages"),
        (ProviderKind::Anthropic, " https://api.anthropic.com/v1/ ", "https://api.anthropic.com/v1/messages"),
        (ProviderKind::Anthropic, "https://proxy.example/v1/messages/", "https://proxy.example/v1/messages"),
    ];
    for (kind, base, expect) in rows {
        let req = build_request(&config(kind, base, ""), &[msg(Role::User, "hi")], &[]);
        assert_eq!(req.url, expect, "{kind:?} base {base:?}");
    }
}

#[test]
fn the_api_key_never_shows_in_debug_output() {
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let cfg = config(kind, "https://example.test/v1", "sk-very-secret-key");
        let req = build_request(&cfg, &[msg(Role::User, "hi")], &[]);
        let shown = format!("{cfg:?} {req:?} {cfg:#?} {req:#?}");
        assert!(!shown.contains("very-secret"), "{kind:?} leaked the key: {shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
        // …but the request itself carries it.
        let sent = req.header("authorization").or(req.header("x-api-key")).unwrap();
        assert!(sent.contains("sk-very-secret-key"));
        assert!(!req.url.contains("secret") && !req.body.contains("secret"));
    }
    let cfg = config(ProviderKind::OpenAi, "http://localhost/v1", "");
    assert!(format!("{cfg:?}").contains("<none>"));
}

/// An exchange whose assistant turns carry reasoning to send back, as context assembly fills it from
/// the turns' metadata: a DeepSeek-style reply with a tool call (its `reasoning_content` goes back), a
/// Groq-style one (`reasoning` field: nothing goes back) and a plain reply without calls.
fn reasoning_conversation(blocks: Vec<Value>, reasoning_content: Option<&str>) -> Vec<ContextMessage> {
    let replay = crate::message::ReasoningReplay {
        reasoning_content: reasoning_content.map(str::to_string),
        blocks,
        ..Default::default()
    };
    vec![
        msg(Role::User, "How long do refresh tokens live?"),
        ContextMessage {
            reasoning: Some(replay.clone()),
            ..calls("Reading it.", &[("call_00_Ux3k", "read_file", r#"{"path":"src/auth.py"}"#)])
        },
        result("call_00_Ux3k", "read_file", "REFRESH_DAYS = 7"),
        ContextMessage { reasoning: Some(replay), ..msg(Role::Assistant, "Seven days.") },
        msg(Role::User, "Thanks."),
    ]
}

#[test]
fn openai_assistant_tool_calls_carry_their_reasoning_content_back() {
    let cfg = config(ProviderKind::OpenAi, "https://api.deepseek.com", "");
    check_request(
        &cfg,
        &reasoning_conversation(Vec::new(), Some("I need the file before answering.")),
        &[],
        expect![[r#"
            POST https://api.deepseek.com/chat/completions
            content-type: application/json
            accept: text/event-stream
            {
              "messages": [
                {
                  "content": "How long do refresh tokens live?",
                  "role": "user"
                },
                {
                  "content": "Reading it.",
                  "reasoning_content": "I need the file before answering.",
                  "role": "assistant",
                  "tool_calls": [
                    {
                      "function": {
                        "arguments": "{\"path\":\"src/auth.py\"}",
                        "name": "read_file"
                      },
                      "id": "call_00_Ux3k",
                      "type": "function"
                    }
                  ]
                },
                {
                  "content": "REFRESH_DAYS = 7",
                  "role": "tool",
                  "tool_call_id": "call_00_Ux3k"
                },
                {
                  "content": "Seven days.",
                  "role": "assistant"
                },
                {
                  "content": "Thanks.",
                  "role": "user"
                }
              ],
              "model": "test-model",
              "stream": true,
              "stream_options": {
                "include_usage": true
              }
            }"#]],
    );
    // Reasoning that came in another field (Groq's `reasoning`) is not sent back.
    let body = build_request(&cfg, &reasoning_conversation(Vec::new(), None), &[]).body;
    assert!(!body.contains("reasoning"), "{body}");
}

#[test]
fn anthropic_tool_use_turns_lead_with_their_thinking_blocks_unchanged() {
    let blocks = vec![
        json!({"type": "thinking", "thinking": "I should read src/auth.py first.", "signature": "EqQBCgIYAhIM1gbc"}),
        json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3p"}),
    ];
    check_request(
        &config(ProviderKind::Anthropic, "https://api.anthropic.com/v1", ""),
        &reasoning_conversation(blocks, None),
        &[],
        expect![[r#"
            POST https://api.anthropic.com/v1/messages
            content-type: application/json
            accept: text/event-stream
            anthropic-version: 2023-06-01
            anthropic-dangerous-direct-browser-access: true
            {
              "max_tokens": 8192,
              "messages": [
                {
                  "content": [
                    {
                      "text": "How long do refresh tokens live?",
                      "type": "text"
                    }
                  ],
                  "role": "user"
                },
                {
                  "content": [
                    {
                      "signature": "EqQBCgIYAhIM1gbc",
                      "thinking": "I should read src/auth.py first.",
                      "type": "thinking"
                    },
                    {
                      "data": "EmwKAhgBEgy3va3p",
                      "type": "redacted_thinking"
                    },
                    {
                      "text": "Reading it.",
                      "type": "text"
                    },
                    {
                      "id": "call_00_Ux3k",
                      "input": {
                        "path": "src/auth.py"
                      },
                      "name": "read_file",
                      "type": "tool_use"
                    }
                  ],
                  "role": "assistant"
                },
                {
                  "content": [
                    {
                      "content": "REFRESH_DAYS = 7",
                      "tool_use_id": "call_00_Ux3k",
                      "type": "tool_result"
                    }
                  ],
                  "role": "user"
                },
                {
                  "content": [
                    {
                      "text": "Seven days.",
                      "type": "text"
                    }
                  ],
                  "role": "assistant"
                },
                {
                  "content": [
                    {
                      "text": "Thanks.",
                      "type": "text"
                    }
                  ],
                  "role": "user"
                }
              ],
              "model": "test-model",
              "stream": true
            }"#]],
    );
}

/// OpenAI's reasoning models refuse `max_tokens`; they take `max_completion_tokens`. Every other
/// model keeps `max_tokens`, and no limit sends neither.
#[test]
fn the_reply_limit_field_follows_the_model_name() {
    let completion = [
        "o1",
        "o1-mini",
        "o1-preview-2024-09-12",
        "o3",
        "o3-mini",
        "o4-mini-2025-04-16",
        "gpt-5",
        "gpt-5-mini",
        "gpt-5.1",
        "GPT-5-nano",
        "openai/o3-mini",
        "openai/gpt-5",
    ];
    let plain = [
        "gpt-4o",
        "gpt-4o-mini",
        "gpt-4.1",
        "gpt-3.5-turbo",
        "openai/gpt-oss-120b",
        "olmo-2-13b",
        "omni-moderation-latest",
        "llama3.1:8b",
        "qwen/qwen3-32b",
        "deepseek-reasoner",
        "o",
        "",
    ];
    let field = |model: &str, limit: Option<u32>| {
        let mut cfg = config(ProviderKind::OpenAi, "http://x/v1", "");
        cfg.model = model.to_string();
        cfg.max_output_tokens = limit;
        let body: Value = serde_json::from_str(&build_request(&cfg, &[msg(Role::User, "hi")], &[]).body).unwrap();
        let present: Vec<&str> =
            ["max_tokens", "max_completion_tokens"].into_iter().filter(|k| body.get(*k).is_some()).collect();
        assert!(present.iter().all(|k| body[*k] == 512), "{model}: {body}");
        present.join(",")
    };
    for model in completion {
        assert_eq!(field(model, Some(512)), "max_completion_tokens", "{model}");
        assert_eq!(field(model, None), "", "{model} without a limit");
    }
    for model in plain {
        assert_eq!(field(model, Some(512)), "max_tokens", "{model}");
        assert_eq!(field(model, None), "", "{model} without a limit");
    }
}

/// What the agent loop stores in a turn's metadata comes back as the replay context assembly attaches.
#[test]
fn reasoning_replay_is_read_from_the_turn_metadata() {
    use crate::message::ReasoningReplay;
    let deepseek = json!({"reasoning": "Think.", "reasoning_field": "reasoning_content"});
    assert_eq!(
        ReasoningReplay::from_metadata(&deepseek),
        Some(ReasoningReplay { reasoning_content: Some("Think.".into()), ..Default::default() })
    );
    assert_eq!(ReasoningReplay::from_metadata(&json!({"reasoning": "Think.", "reasoning_field": "reasoning"})), None);
    let block = json!({"type": "thinking", "thinking": "T", "signature": "S"});
    let anthropic = json!({"reasoning": "T", "reasoning_blocks": [block]});
    assert_eq!(
        ReasoningReplay::from_metadata(&anthropic),
        Some(ReasoningReplay { blocks: vec![block], ..Default::default() })
    );
    assert_eq!(ReasoningReplay::from_metadata(&json!({"model": "m"})), None);
    assert_eq!(ReasoningReplay::from_metadata(&Value::Null), None);
}
