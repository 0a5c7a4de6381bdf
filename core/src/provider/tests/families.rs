//! The request body of one tool-calling step with reasoning, per provider family, as the agent loop
//! sends it: the turn's metadata as that family's decoder stored it, read back by context assembly
//! (`ReasoningReplay::from_metadata`), then built into the family's wire format. Only DeepSeek-style
//! `reasoning_content` and Anthropic's signed thinking blocks go back; OpenAI's reasoning models take
//! `max_completion_tokens` instead of `max_tokens`.

use expect_test::{expect, Expect};
use serde_json::{json, Value};

use crate::message::{ContextMessage, ReasoningReplay};
use crate::provider::*;
use crate::{Role, ToolCall};

fn message(role: Role, content: &str) -> ContextMessage {
    ContextMessage::new(role, content)
}

/// A step of a tool loop in progress: the user's question, the model's call (with the reasoning its
/// `metadata` holds) and the call's result.
fn tool_step(call_id: &str, metadata: &Value) -> Vec<ContextMessage> {
    let call = ToolCall { id: call_id.into(), name: "read_file".into(), arguments: r#"{"path":"src/auth.py"}"#.into() };
    vec![
        message(Role::System, "You are Cowork."),
        message(Role::User, "How long do refresh tokens live?"),
        ContextMessage {
            tool_calls: vec![call],
            reasoning: ReasoningReplay::from_metadata(metadata),
            ..message(Role::Assistant, "")
        },
        ContextMessage {
            tool_call_id: Some(call_id.into()),
            name: Some("read_file".into()),
            ..message(Role::Tool, "REFRESH_DAYS = 7")
        },
    ]
}

fn read_file_tool() -> Value {
    json!({"type": "function", "function": {
        "name": "read_file",
        "description": "Read a file of the workspace.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    }})
}

/// The body sent to `base_url` for `model`, with a reply limit of 1024 tokens.
fn check(kind: ProviderKind, base_url: &str, model: &str, call_id: &str, metadata: Value, expect: Expect) {
    let cfg = ModelSettings {
        kind,
        base_url: base_url.into(),
        model: model.into(),
        max_output_tokens: Some(1024),
        ..ModelSettings::default()
    };
    let request = build_request(&cfg, &tool_step(call_id, &metadata), &[read_file_tool()]);
    let body: Value = serde_json::from_str(&request.body).expect("the body is JSON");
    expect.assert_eq(&format!("POST {}\n{}", request.url, serde_json::to_string_pretty(&body).unwrap()));
}

#[test]
fn openai_chat() {
    check(
        ProviderKind::OpenAi,
        "https://api.openai.com/v1",
        "gpt-4o",
        "call_Ab12",
        json!({}),
        expect![[r#"
        POST https://api.openai.com/v1/chat/completions
        {
          "max_tokens": 1024,
          "messages": [
            {
              "content": "You are Cowork.",
              "role": "system"
            },
            {
              "content": "How long do refresh tokens live?",
              "role": "user"
            },
            {
              "content": "",
              "role": "assistant",
              "tool_calls": [
                {
                  "function": {
                    "arguments": "{\"path\":\"src/auth.py\"}",
                    "name": "read_file"
                  },
                  "id": "call_Ab12",
                  "type": "function"
                }
              ]
            },
            {
              "content": "REFRESH_DAYS = 7",
              "role": "tool",
              "tool_call_id": "call_Ab12"
            }
          ],
          "model": "gpt-4o",
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

/// OpenAI's reasoning models keep their reasoning on the server: nothing goes back, and the limit is
/// `max_completion_tokens`.
#[test]
fn openai_reasoning_model() {
    check(
        ProviderKind::OpenAi,
        "https://api.openai.com/v1",
        "o3",
        "call_Ab12",
        json!({"usage": {"completion_tokens": 640}}),
        expect![[r#"
            POST https://api.openai.com/v1/chat/completions
            {
              "max_completion_tokens": 1024,
              "messages": [
                {
                  "content": "You are Cowork.",
                  "role": "system"
                },
                {
                  "content": "How long do refresh tokens live?",
                  "role": "user"
                },
                {
                  "content": "",
                  "role": "assistant",
                  "tool_calls": [
                    {
                      "function": {
                        "arguments": "{\"path\":\"src/auth.py\"}",
                        "name": "read_file"
                      },
                      "id": "call_Ab12",
                      "type": "function"
                    }
                  ]
                },
                {
                  "content": "REFRESH_DAYS = 7",
                  "role": "tool",
                  "tool_call_id": "call_Ab12"
                }
              ],
              "model": "o3",
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
fn deepseek_thinking_mode() {
    check(
        ProviderKind::OpenAi,
        "https://api.deepseek.com",
        "deepseek-reasoner",
        "call_00_Ux3k",
        json!({"reasoning": "I need the file first.", "reasoning_field": "reasoning_content"}),
        expect![[r#"
            POST https://api.deepseek.com/chat/completions
            {
              "max_tokens": 1024,
              "messages": [
                {
                  "content": "You are Cowork.",
                  "role": "system"
                },
                {
                  "content": "How long do refresh tokens live?",
                  "role": "user"
                },
                {
                  "content": "",
                  "reasoning_content": "I need the file first.",
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
                }
              ],
              "model": "deepseek-reasoner",
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
fn anthropic_extended_thinking() {
    check(
        ProviderKind::Anthropic,
        "https://api.anthropic.com/v1",
        "claude-sonnet-4-5",
        "toolu_01A09q90qw90lq917835lq9",
        json!({"reasoning": "I need the file first.", "reasoning_blocks": [
            {"type": "thinking", "thinking": "I need the file first.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}]}),
        expect![[r#"
            POST https://api.anthropic.com/v1/messages
            {
              "max_tokens": 1024,
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
                      "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
                      "thinking": "I need the file first.",
                      "type": "thinking"
                    },
                    {
                      "id": "toolu_01A09q90qw90lq917835lq9",
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
                      "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
                      "type": "tool_result"
                    }
                  ],
                  "role": "user"
                }
              ],
              "model": "claude-sonnet-4-5",
              "stream": true,
              "system": "You are Cowork.",
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

/// Mistral's thinking arrives as `thinking` content parts; it is not sent back.
#[test]
fn mistral_magistral() {
    check(
        ProviderKind::OpenAi,
        "https://api.mistral.ai/v1",
        "magistral-medium-latest",
        "D681PevKs",
        json!({"reasoning": "I need the file first."}),
        expect![[r#"
            POST https://api.mistral.ai/v1/chat/completions
            {
              "max_tokens": 1024,
              "messages": [
                {
                  "content": "You are Cowork.",
                  "role": "system"
                },
                {
                  "content": "How long do refresh tokens live?",
                  "role": "user"
                },
                {
                  "content": "",
                  "role": "assistant",
                  "tool_calls": [
                    {
                      "function": {
                        "arguments": "{\"path\":\"src/auth.py\"}",
                        "name": "read_file"
                      },
                      "id": "D681PevKs",
                      "type": "function"
                    }
                  ]
                },
                {
                  "content": "REFRESH_DAYS = 7",
                  "role": "tool",
                  "tool_call_id": "D681PevKs"
                }
              ],
              "model": "magistral-medium-latest",
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

/// Groq and OpenRouter stream reasoning in a `reasoning` field; it is not sent back.
#[test]
fn groq_and_openrouter() {
    let metadata = json!({"reasoning": "I need the file first.", "reasoning_field": "reasoning"});
    check(
        ProviderKind::OpenAi,
        "https://api.groq.com/openai/v1",
        "qwen/qwen3-32b",
        "call_g1",
        metadata.clone(),
        expect![[r#"
            POST https://api.groq.com/openai/v1/chat/completions
            {
              "max_tokens": 1024,
              "messages": [
                {
                  "content": "You are Cowork.",
                  "role": "system"
                },
                {
                  "content": "How long do refresh tokens live?",
                  "role": "user"
                },
                {
                  "content": "",
                  "role": "assistant",
                  "tool_calls": [
                    {
                      "function": {
                        "arguments": "{\"path\":\"src/auth.py\"}",
                        "name": "read_file"
                      },
                      "id": "call_g1",
                      "type": "function"
                    }
                  ]
                },
                {
                  "content": "REFRESH_DAYS = 7",
                  "role": "tool",
                  "tool_call_id": "call_g1"
                }
              ],
              "model": "qwen/qwen3-32b",
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
    check(
        ProviderKind::OpenAi,
        "https://openrouter.ai/api/v1",
        "deepseek/deepseek-r1",
        "call_or1",
        metadata,
        expect![[r#"
            POST https://openrouter.ai/api/v1/chat/completions
            {
              "max_tokens": 1024,
              "messages": [
                {
                  "content": "You are Cowork.",
                  "role": "system"
                },
                {
                  "content": "How long do refresh tokens live?",
                  "role": "user"
                },
                {
                  "content": "",
                  "role": "assistant",
                  "tool_calls": [
                    {
                      "function": {
                        "arguments": "{\"path\":\"src/auth.py\"}",
                        "name": "read_file"
                      },
                      "id": "call_or1",
                      "type": "function"
                    }
                  ]
                },
                {
                  "content": "REFRESH_DAYS = 7",
                  "role": "tool",
                  "tool_call_id": "call_or1"
                }
              ],
              "model": "deepseek/deepseek-r1",
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

/// Gemini through its OpenAI-compatible endpoint: a call's `extra_content` (its thought signature)
/// streams in on the call and must come back with it, exactly, or Gemini 3 refuses the next request.
/// The stream is hand-written after Google's "OpenAI compatibility" documentation (thought
/// signatures), parallel calls signed on the first only, as documented.
#[test]
fn gemini_thought_signatures_come_back_with_their_calls() {
    let stream = include_str!("../../../tests/data/provider/gemini_thought_signature.sse");
    let mut parser = crate::sse::SseParser::new();
    let mut decoder = StreamDecoder::new(ProviderKind::OpenAi);
    for ev in parser.push(stream.as_bytes()) {
        decoder.feed(&ev);
    }
    let message = decoder.finish().expect("a complete reply");
    let signature = json!({"google": {"thought_signature": "CiQB0e2Kb1pQ+2sGz3Xh1w=="}});
    assert_eq!(message.call_extras, vec![("function-call-4021".to_string(), signature.clone())]);
    assert_eq!(message.tool_calls.len(), 2);

    // Archived in the turn's metadata as the agent loop writes it, read back by context assembly, sent.
    let metadata = json!({"tool_call_extra_content": {"function-call-4021": signature}});
    check(
        ProviderKind::OpenAi,
        "https://generativelanguage.googleapis.com/v1beta/openai",
        "gemini-3-pro-preview",
        "function-call-4021",
        metadata,
        expect![[r#"
            POST https://generativelanguage.googleapis.com/v1beta/openai/chat/completions
            {
              "max_tokens": 1024,
              "messages": [
                {
                  "content": "You are Cowork.",
                  "role": "system"
                },
                {
                  "content": "How long do refresh tokens live?",
                  "role": "user"
                },
                {
                  "content": "",
                  "role": "assistant",
                  "tool_calls": [
                    {
                      "extra_content": {
                        "google": {
                          "thought_signature": "CiQB0e2Kb1pQ+2sGz3Xh1w=="
                        }
                      },
                      "function": {
                        "arguments": "{\"path\":\"src/auth.py\"}",
                        "name": "read_file"
                      },
                      "id": "function-call-4021",
                      "type": "function"
                    }
                  ]
                },
                {
                  "content": "REFRESH_DAYS = 7",
                  "role": "tool",
                  "tool_call_id": "function-call-4021"
                }
              ],
              "model": "gemini-3-pro-preview",
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
