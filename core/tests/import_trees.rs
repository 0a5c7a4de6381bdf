//! ChatGPT message trees as sessions and forks, and the way back: random trees read back path by path
//! (a property test), the ChatGPT export of sessions with forks and tool calls (snapshots), and its
//! re-import giving the same texts.
#![cfg(not(target_arch = "wasm32"))]

use cowork_core::import::{session_id, Format, ImportFile};
use cowork_core::store::{NewSession, SessionFilter, Store};
use cowork_core::{NewTurn, Role, ToolCall, Turn};
use expect_test::expect;
use proptest::prelude::*;
use serde_json::json;
use std::collections::BTreeSet;

fn all_sessions(store: &Store) -> Vec<cowork_core::Session> {
    store.list_sessions(&SessionFilter { include_archived: true, limit: 10_000, ..Default::default() }).unwrap()
}

fn read(store: &Store, id: &str) -> Vec<Turn> {
    store.turns_range(id, 1, i64::MAX).unwrap()
}

/// A turn as text: role, content and calls.
fn render(t: &Turn) -> String {
    let calls: Vec<String> = t.tool_calls.iter().map(|c| format!(" [call {} {}]", c.name, c.arguments)).collect();
    format!("{}: {}{}", t.role, t.content, calls.concat())
}

/// Every session's turns, as texts.
fn paths(store: &Store) -> BTreeSet<Vec<String>> {
    all_sessions(store).iter().map(|s| read(store, &s.id).iter().map(render).collect()).collect()
}

fn import(store: &mut Store, bytes: &[u8]) {
    store.import_foreign(&[ImportFile::new("conversations.json", bytes)], &mut |_| {}).unwrap();
}

/// A ChatGPT conversation whose node `i` (1-based) is the child of `parents[i - 1]` (0: the root).
fn chatgpt_tree(parents: &[usize], current: usize) -> String {
    let mut mapping = serde_json::Map::new();
    let children = |of: usize| -> Vec<String> {
        (1..=parents.len()).filter(|&i| parents[i - 1] == of).map(|i| format!("n{i}")).collect()
    };
    mapping.insert("n0".into(), json!({"id": "n0", "message": null, "parent": null, "children": children(0)}));
    for i in 1..=parents.len() {
        let role = if i % 2 == 1 { "user" } else { "assistant" };
        let message = json!({
            "id": format!("n{i}"), "author": {"role": role}, "create_time": 1_700_000_000.0 + i as f64,
            "content": {"content_type": "text", "parts": [format!("message {i}")]}, "recipient": "all",
        });
        let parent = format!("n{}", parents[i - 1]);
        mapping.insert(
            format!("n{i}"),
            json!({"id": format!("n{i}"), "message": message, "parent": parent, "children": children(i)}),
        );
    }
    json!([{"title": "Tree", "id": "tree", "mapping": mapping, "current_node": format!("n{current}"), "create_time": 1_700_000_000.0}])
        .to_string()
}

/// The texts on the path from the root to node `i`.
fn path_to(parents: &[usize], mut i: usize) -> Vec<String> {
    let mut out = Vec::new();
    while i != 0 {
        let role = if i % 2 == 1 { "user" } else { "assistant" };
        out.push(format!("{role}: message {i}"));
        i = parents[i - 1];
    }
    out.reverse();
    out
}

fn tree() -> impl Strategy<Value = (Vec<usize>, usize)> {
    (1usize..25)
        .prop_flat_map(|n| {
            let parents: Vec<_> = (0..n).map(|i| 0..=i).collect();
            (parents, 1..=n)
        })
        .prop_map(|(parents, current)| (parents, current))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every root-to-leaf path of the tree reads back exactly as one session (following fork
    /// ancestry), the current path is the main session, and every message is stored once.
    #[test]
    fn every_branch_of_a_chatgpt_tree_reads_back((parents, current) in tree()) {
        let mut store = Store::open_in_memory().unwrap();
        import(&mut store, chatgpt_tree(&parents, current).as_bytes());
        let n = parents.len();
        let leaves: Vec<usize> = (1..=n).filter(|i| !parents.contains(i)).collect();
        let mut want: BTreeSet<Vec<String>> = leaves.iter().map(|&l| path_to(&parents, l)).collect();
        want.insert(path_to(&parents, current));
        prop_assert_eq!(paths(&store), want);
        let main = session_id(Format::ChatGpt, "tree", None);
        let got: Vec<String> = read(&store, &main).iter().map(render).collect();
        prop_assert_eq!(got, path_to(&parents, current));
        prop_assert_eq!(store.stats().unwrap().turns, n as i64, "each message stored once: forks are pointers");
    }
}

/// A session with tool calls and a fork made in the store, with its own timestamps.
fn sessions_with_a_fork(store: &mut Store) -> (String, String) {
    let s = store.create_session(&NewSession { title: "Deploy".into(), ..NewSession::new("ops") }).unwrap();
    let call = ToolCall { id: "call_1".into(), name: "bash".into(), arguments: r#"{"command":"make deploy"}"#.into() };
    store
        .append_turns(
            &s.id,
            &[
                NewTurn::user("Deploy the site"),
                NewTurn::assistant_calls("Running the deploy.", vec![call]),
                NewTurn::tool_result("call_1", "bash", "deployed: 3 files"),
                NewTurn::assistant("Done: 3 files deployed."),
            ],
        )
        .unwrap();
    let fork = store.fork_session(&s.id, 3).unwrap();
    store.append_turns(&fork.id, &[NewTurn::assistant("It worked; check the site.")]).unwrap();
    store.append_turn(&fork.id, &NewTurn::user("Thanks")).unwrap();
    (s.id, fork.id)
}

#[test]
fn a_chatgpt_export_reimports_to_the_same_texts() {
    let mut store = Store::open_in_memory().unwrap();
    let (root, _) = sessions_with_a_fork(&mut store);
    let other = store.create_session(&NewSession::new("notes")).unwrap();
    store.append_turns(&other.id, &[NewTurn::user("A note"), NewTurn::assistant("Noted.")]).unwrap();
    let exported = store.export_chatgpt(None).unwrap();

    let mut again = Store::open_in_memory().unwrap();
    import(&mut again, exported.as_bytes());
    assert_eq!(paths(&again), paths(&store), "every session's texts, forks included");
    let main = again.get_session(&session_id(Format::ChatGpt, &root, None)).unwrap();
    assert_eq!((main.title.as_str(), main.turn_count), ("Deploy", 4), "current_node is the root session's last turn");
    let fork = all_sessions(&again).into_iter().find(|s| s.parent_session_id.as_deref() == Some(&main.id)).unwrap();
    assert_eq!(fork.fork_turn, Some(3));
    let original: Vec<i64> = read(&store, &root).iter().map(|t| t.created_at).collect();
    assert_eq!(read(&again, &main.id).iter().map(|t| t.created_at).collect::<Vec<_>>(), original, "times kept");
    let result = &read(&again, &main.id)[2];
    assert_eq!(
        (result.role, result.tool_call_id.as_deref()),
        (Role::Tool, Some(read(&again, &main.id)[1].tool_calls[0].id.as_str()))
    );

    let only = store.export_chatgpt(Some(std::slice::from_ref(&other.id))).unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&only).unwrap();
    assert_eq!(parsed.as_array().map(Vec::len), Some(1), "only the asked session's tree");
}

/// A Claude Code transcript with a tool call and a branch: fixed ids and times, for snapshots.
const TRANSCRIPT: &str = r##"{"type":"summary","summary":"Tidy the README","leafUuid":"a3"}
{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"snap","cwd":"/src/site","timestamp":"2025-05-01T09:00:00Z","message":{"role":"user","content":"Tidy the README"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"snap","cwd":"/src/site","timestamp":"2025-05-01T09:00:01Z","message":{"id":"m1","role":"assistant","model":"claude-opus-4","content":[{"type":"text","text":"Reading it."},{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"README.md"}}]}}
{"type":"user","uuid":"r1","parentUuid":"a1","sessionId":"snap","cwd":"/src/site","timestamp":"2025-05-01T09:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"# Site\nTODO"}]}}
{"type":"assistant","uuid":"a2","parentUuid":"r1","sessionId":"snap","cwd":"/src/site","timestamp":"2025-05-01T09:00:03Z","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"It has a TODO."}]}}
{"type":"assistant","uuid":"a3","parentUuid":"r1","sessionId":"snap","cwd":"/src/site","timestamp":"2025-05-01T09:00:04Z","message":{"id":"m3","role":"assistant","content":[{"type":"text","text":"Only a title and a TODO."}]}}
"##;

#[test]
fn exports_of_a_session_with_a_fork_and_tool_calls() {
    let mut store = Store::open_in_memory().unwrap();
    store.import_foreign(&[ImportFile::new("snap.jsonl", TRANSCRIPT.as_bytes())], &mut |_| {}).unwrap();
    let main = session_id(Format::ClaudeCode, "snap", None);
    let fork = all_sessions(&store).into_iter().find(|s| s.parent_session_id.is_some()).unwrap();
    assert_eq!((fork.parent_session_id.as_deref(), fork.fork_turn), (Some(main.as_str()), Some(3)));
    expect![[r##"
        # Tidy the README (branch 2)

        - Workspace: /src/site
        - Session: 4d4df2ef-5dc9-5dd0-930a-e6f2b980552c
        - Model: claude-opus-4
        - Turns: 4
        - Forked from a2d6ef57-3000-5e01-8ae2-4560fb35f3b2 after turn 3

        ## Turn 1 · user

        Tidy the README

        ## Turn 2 · assistant

        Reading it.

        **Tool call** `Read`

        ```
        {"file_path":"README.md"}
        ```

        ## Turn 3 · tool · Read

        ```
        # Site
        TODO
        ```

        ## Turn 4 · assistant

        It has a TODO.
    "##]]
    .assert_eq(&store.export_markdown(&fork.id).unwrap());
    expect![[r##"
        [
          {
            "conversation_id": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2",
            "create_time": 1746090000.0,
            "current_node": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-4",
            "default_model_slug": "claude-opus-4",
            "id": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2",
            "is_archived": false,
            "mapping": {
              "4d4df2ef-5dc9-5dd0-930a-e6f2b980552c-4": {
                "children": [],
                "id": "4d4df2ef-5dc9-5dd0-930a-e6f2b980552c-4",
                "message": {
                  "author": {
                    "metadata": {},
                    "name": null,
                    "role": "assistant"
                  },
                  "content": {
                    "content_type": "text",
                    "parts": [
                      "It has a TODO."
                    ]
                  },
                  "create_time": 1746090003.0,
                  "id": "4d4df2ef-5dc9-5dd0-930a-e6f2b980552c-4",
                  "metadata": {
                    "model_slug": "claude-opus-4"
                  },
                  "recipient": "all",
                  "status": "finished_successfully"
                },
                "parent": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-3"
              },
              "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-1": {
                "children": [
                  "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-2"
                ],
                "id": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-1",
                "message": {
                  "author": {
                    "metadata": {},
                    "name": null,
                    "role": "user"
                  },
                  "content": {
                    "content_type": "text",
                    "parts": [
                      "Tidy the README"
                    ]
                  },
                  "create_time": 1746090000.0,
                  "id": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-1",
                  "metadata": {},
                  "recipient": "all",
                  "status": "finished_successfully"
                },
                "parent": "client-created-root"
              },
              "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-2": {
                "children": [
                  "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-2-call-1"
                ],
                "id": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-2",
                "message": {
                  "author": {
                    "metadata": {},
                    "name": null,
                    "role": "assistant"
                  },
                  "content": {
                    "content_type": "text",
                    "parts": [
                      "Reading it."
                    ]
                  },
                  "create_time": 1746090001.0,
                  "id": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-2",
                  "metadata": {
                    "model_slug": "claude-opus-4"
                  },
                  "recipient": "all",
                  "status": "finished_successfully"
                },
                "parent": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-1"
              },
              "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-2-call-1": {
                "children": [
                  "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-3"
                ],
                "id": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-2-call-1",
                "message": {
                  "author": {
                    "metadata": {},
                    "name": null,
                    "role": "assistant"
                  },
                  "content": {
                    "content_type": "code",
                    "language": "json",
                    "text": "{\"file_path\":\"README.md\"}"
                  },
                  "create_time": 1746090001.0,
                  "id": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-2-call-1",
                  "metadata": {
                    "cowork_call_id": "t1",
                    "model_slug": "claude-opus-4"
                  },
                  "recipient": "Read",
                  "status": "finished_successfully"
                },
                "parent": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-2"
              },
              "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-3": {
                "children": [
                  "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-4",
                  "4d4df2ef-5dc9-5dd0-930a-e6f2b980552c-4"
                ],
                "id": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-3",
                "message": {
                  "author": {
                    "metadata": {},
                    "name": "Read",
                    "role": "tool"
                  },
                  "content": {
                    "content_type": "text",
                    "parts": [
                      "# Site\nTODO"
                    ]
                  },
                  "create_time": 1746090002.0,
                  "id": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-3",
                  "metadata": {
                    "cowork_tool_call_id": "t1"
                  },
                  "recipient": "all",
                  "status": "finished_successfully"
                },
                "parent": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-2-call-1"
              },
              "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-4": {
                "children": [],
                "id": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-4",
                "message": {
                  "author": {
                    "metadata": {},
                    "name": null,
                    "role": "assistant"
                  },
                  "content": {
                    "content_type": "text",
                    "parts": [
                      "Only a title and a TODO."
                    ]
                  },
                  "create_time": 1746090004.0,
                  "id": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-4",
                  "metadata": {
                    "model_slug": "claude-opus-4"
                  },
                  "recipient": "all",
                  "status": "finished_successfully"
                },
                "parent": "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-3"
              },
              "client-created-root": {
                "children": [
                  "a2d6ef57-3000-5e01-8ae2-4560fb35f3b2-1"
                ],
                "id": "client-created-root",
                "message": null,
                "parent": null
              }
            },
            "moderation_results": [],
            "title": "Tidy the README",
            "update_time": 1746090004.0
          }
        ]"##]]
    .assert_eq(&store.export_chatgpt(None).unwrap());
}

/// The storage worker makes these exports in the importer's module: it hands over each export's
/// sessions and turns as JSON. What comes out there is the file the archive makes itself, for a
/// tree with forks, tool calls and model names (nothing is lost on the way).
#[test]
fn exports_made_from_their_sources_as_json_are_the_archives_own() {
    use cowork_core::export::ExportSource;
    let mut store = Store::open_in_memory().unwrap();
    store.import_foreign(&[ImportFile::new("snap.jsonl", TRANSCRIPT.as_bytes())], &mut |_| {}).unwrap();
    let (root, _) = sessions_with_a_fork(&mut store);
    let snap = session_id(Format::ClaudeCode, "snap", None);
    let fork = all_sessions(&store).into_iter().find(|s| s.parent_session_id.as_deref() == Some(&snap)).unwrap();
    let through_json = |source: ExportSource| {
        serde_json::from_str::<ExportSource>(&serde_json::to_string(&source).unwrap()).unwrap().render()
    };
    let all = store.chatgpt_source(None).unwrap();
    assert_eq!(all.roots.len(), 2, "two trees");
    assert_eq!(through_json(ExportSource::ChatGpt(all)), store.export_chatgpt(None).unwrap());
    let one = store.chatgpt_source(Some(std::slice::from_ref(&fork.id))).unwrap();
    assert_eq!(one.roots.len(), 1, "a fork's id names its tree");
    assert!(one.sessions.iter().all(|s| s.session.id != root), "and nothing of the other tree");
    assert_eq!(
        through_json(ExportSource::ChatGpt(one)),
        store.export_chatgpt(Some(std::slice::from_ref(&fork.id))).unwrap()
    );
    let markdown = store.markdown_source(&fork.id).unwrap();
    assert_eq!(through_json(ExportSource::Markdown(Box::new(markdown))), store.export_markdown(&fork.id).unwrap());
}
