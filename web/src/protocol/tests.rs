//! The protocol's messages on the wire: round trips, pairings, and what is refused.

use super::*;
use cowork_core::{NewTurn, Turn};

#[test]
fn messages_round_trip_as_json() {
    let req = Request {
        id: 7,
        op: Op::AppendTurn(ops::AppendTurn {
            session_id: "s".into(),
            turn: NewTurn::user("hi \u{0} 🎉"),
            attachments: Vec::new(),
            max_attachment_bytes: 0,
        }),
    };
    assert_eq!(serde_json::from_str::<Request>(&req.to_json()).unwrap(), req);
    let ready = WorkerMessage::Ready(ReadyInfo {
        backend: Backend::Memory { reason: "no OPFS".into() },
        sqlite_version: "3.50.0".into(),
        schema_version: 2,
    });
    assert_eq!(serde_json::from_str::<WorkerMessage>(&ready.to_json()).unwrap(), ready);
    let full = Problem::new(ErrorKind::StorageFull, "disk full");
    let err = WorkerMessage::Response { id: 1, result: Err(full.clone()) };
    assert_eq!(serde_json::from_str::<WorkerMessage>(&err.to_json()).unwrap(), err);
    let failed = WorkerMessage::Failed(full.clone());
    assert_eq!(serde_json::from_str::<WorkerMessage>(&failed.to_json()).unwrap(), failed);
    let sent = WorkerMessage::Response {
        id: 2,
        result: Ok(ops::SendMessage::wrap(Sent {
            session_id: "s".into(),
            outcome: SendOutcome::IterationLimit { calls: 8 },
        })),
    };
    assert_eq!(serde_json::from_str::<WorkerMessage>(&sent.to_json()).unwrap(), sent);
    // Events as pages see them: an error keeps its message field and gains its kind.
    let error = WorkerMessage::Event { id: 3, event: Event::Error(full) };
    assert_eq!(serde_json::from_str::<WorkerMessage>(&error.to_json()).unwrap(), error);
    let json = Event::Error(Problem::new(ErrorKind::Auth, "bad key")).page_json();
    assert_eq!(json, serde_json::json!({"event": "error", "kind": "auth", "message": "bad key"}));
    let delta = Event::Delta { session_id: "s".into(), turn_number: 2, text: "Hi".into() }.page_json();
    assert_eq!(delta, serde_json::json!({"event": "delta", "session_id": "s", "turn_number": 2, "text": "Hi"}));
}

#[test]
fn peer_messages_round_trip_and_out_of_turn_ops_are_known() {
    let fwd = PeerMessage::Forward { tab: "t1".into(), request: Request { id: 3, op: Op::Stop } };
    assert_eq!(serde_json::from_str::<PeerMessage>(&fwd.to_json()).unwrap(), fwd);
    let answer = WorkerMessage::Response { id: 3, result: ops::Stop.answer(Ok(())) };
    let reply = PeerMessage::reply("t1", &answer);
    assert_eq!(serde_json::from_str::<PeerMessage>(&reply.to_json()).unwrap(), reply);
    let PeerMessage::Reply { response_to, message, .. } = reply else { unreachable!() };
    assert_eq!(response_to, Some(3), "the relaying worker knows which request is answered");
    assert_eq!(serde_json::from_str::<WorkerMessage>(&message).unwrap(), answer, "the UI gets it whole");
    let event = Event::SessionsChanged { deleted: None };
    let PeerMessage::Changed { message, .. } = PeerMessage::changed("t2", event.clone()) else { unreachable!() };
    assert_eq!(serde_json::from_str::<WorkerMessage>(&message).unwrap(), WorkerMessage::Event { id: 0, event });
    assert!(Op::Stop.is_out_of_turn() && Op::Release.is_out_of_turn());
    assert!(!Op::Stats.is_out_of_turn() && !Op::ExportAll.is_out_of_turn());
    assert!(!Op::Stats.is_reply() && !Op::Stop.is_reply());
    let model = crate::settings::demo("http://127.0.0.1:1");
    assert!(Op::Continue(ops::Continue { session_id: "s".into(), model, host: Default::default() }).is_reply());
}

#[test]
fn a_model_list_is_asked_out_of_turn_and_its_answer_round_trips() {
    let ask = Op::ListModels(ops::ListModels { model: crate::settings::demo("http://127.0.0.1:1") });
    assert!(ask.is_out_of_turn(), "listing needs no archive and never waits for a reply");
    let request = Request { id: 9, op: ask };
    assert_eq!(serde_json::from_str::<Request>(&serde_json::to_string(&request).unwrap()).unwrap(), request);
    let models = vec![
        cowork_core::provider::ListedModel { id: "demo".into(), display_name: None },
        cowork_core::provider::ListedModel { id: "claude-x".into(), display_name: Some("Claude X".into()) },
    ];
    let answer = WorkerMessage::Response { id: 9, result: Ok(ops::ListModels::wrap(models)) };
    assert_eq!(serde_json::from_str::<WorkerMessage>(&answer.to_json()).unwrap(), answer);
}

/// Regression: `appendTurn` and tool results broadcast a 10 MB turn whole to every tab.
#[test]
fn a_10_mb_turn_is_cut_before_it_is_broadcast() {
    let content = "é".repeat(5_000_000) + &"x".repeat(1_000); // 10 MB, two bytes a character mostly
    let turn: Turn = serde_json::from_value(serde_json::json!({
        "id": 1, "session_id": "s", "turn_number": 1, "role": "tool", "content": content,
        "tool_calls": [], "tool_call_id": "c1", "tool_name": "read_file", "token_count": 1, "created_at": 0,
        "status": "complete", "metadata": {}
    }))
    .unwrap();
    let Event::TurnAppended { turn: sent } = Event::turn_appended(turn.clone()) else { panic!("a turn event") };
    let chars = sent.content.chars().count();
    assert!(chars <= EVENT_CONTENT_CHARS, "the event carries {chars} characters of a 10 MB turn");
    let head: String = turn.content.chars().take(EVENT_CONTENT_CHARS).collect();
    assert!(sent.content == head, "cut to its first EVENT_CONTENT_CHARS characters, as the loop's turns were");
    assert_eq!(
        Turn { content: String::new(), ..sent },
        Turn { content: String::new(), ..turn.clone() },
        "only the text is cut"
    );
    let short = Turn { content: "hello".into(), ..turn };
    assert_eq!(Event::turn_appended(short.clone()), Event::TurnAppended { turn: short }, "short turns are whole");
}

#[test]
fn outcomes_read_as_they_always_did() {
    assert_eq!(SendOutcome::Done.describe(), "done");
    assert_eq!(
        SendOutcome::Interrupted { message: "you pressed Stop".into() }.describe(),
        "interrupted: you pressed Stop"
    );
    assert_eq!(SendOutcome::IterationLimit { calls: 8 }.describe(), "stopped after 8 model calls");
    assert!(SendOutcome::ClosedMidReply.describe().ends_with("closed; Retry continues it"));
    let e = cowork_core::Error::SessionNotFound("s9".into());
    assert_eq!(Problem::from(e), Problem::new(ErrorKind::NotFound, "no session with id s9"));
}

/// Regression: a request the worker could not read was answered with `WorkerMessage::Failed`, which
/// the client took for "the archive cannot be opened" and failed every later call with "storage is
/// unavailable". Now only that request fails, as its own response.
#[test]
fn an_unreadable_request_fails_alone() {
    let bad = r#"{"id":12,"op":{"get_turns":{"session_id":"s"}}}"#; // no offset, no limit
    match Request::read(bad).map_err(|answer| *answer) {
        Err(WorkerMessage::Response { id: 12, result: Err(problem) }) => {
            assert_eq!(problem.kind, ErrorKind::Invalid);
            assert!(problem.message.contains("could not read a request"), "{}", problem.message);
        }
        other => panic!("the request's own id should be answered with an error, got {other:?}"),
    }
    assert!(
        matches!(Request::read("not json").map_err(|a| *a), Err(WorkerMessage::Unreadable(_))),
        "without an id, nothing but the log can be told; never Failed"
    );
    let good = Request { id: 1, op: ops::Stats.into_op() };
    assert_eq!(Request::read(&good.to_json()), Ok(good));
}

/// Each operation's reply travels as it always has, and comes back as the operation's own type; a
/// reply of another kind is refused, not misread.
#[test]
fn each_call_gets_its_own_reply_back() {
    let text = ops::ExportAll::wrap("x".into());
    assert_eq!(serde_json::to_value(&text).unwrap(), serde_json::json!({"text": {"text": "x"}}));
    assert_eq!(ops::IntegrityCheck::unwrap(text.clone()), Some("x".to_owned()));
    assert_eq!(ops::Stats::unwrap(text), None, "a text is not the archive's counts");
    let sent = Sent { session_id: "s".into(), outcome: SendOutcome::Done };
    let wire = ops::Continue::wrap(sent.clone());
    assert_eq!(
        serde_json::to_value(&wire).unwrap(),
        serde_json::json!({"sent": {"session_id": "s", "outcome": "done"}}),
        "the same JSON as when Sent was a struct variant, its outcome externally tagged"
    );
    assert_eq!(ops::SendMessage::unwrap(wire), Some(sent));
    assert_eq!(ops::DeleteSession::unwrap(ops::Stop::wrap(())), Some(()));
    assert_eq!(ops::ImportFiles::unwrap(ops::PreviewImport::wrap(ImportReport::default())), None);
    // Ops travel externally tagged: the name, then the fields (an operation without fields is its name).
    let op = ops::ListSessions { workspace: None, include_archived: true }.into_op();
    assert_eq!(
        serde_json::to_value(&op).unwrap(),
        serde_json::json!({"list_sessions": {"workspace": null, "include_archived": true}})
    );
    assert_eq!(serde_json::to_value(ops::Stats.into_op()).unwrap(), serde_json::json!("stats"));
}

#[test]
fn unknown_messages_are_rejected_not_misread() {
    assert!(serde_json::from_str::<WorkerMessage>(r#"{"type":"bogus"}"#).is_err());
    assert!(serde_json::from_str::<Request>(r#"{"id":1,"op":"drop_everything"}"#).is_err());
}

#[test]
fn search_scopes_read_as_their_kind_says_and_refuse_what_is_missing() {
    use cowork_core::SearchScope;
    for scope in [
        SearchScope::Session { session_id: "s1".into() },
        SearchScope::Workspace { workspace: "web".into() },
        SearchScope::All,
    ] {
        let json = serde_json::to_string(&scope).unwrap();
        assert_eq!(serde_json::from_str::<SearchScope>(&json).unwrap(), scope, "{json}");
    }
    assert_eq!(
        serde_json::from_str::<SearchScope>(r#"{"kind":"workspace","workspace":"api"}"#).unwrap(),
        SearchScope::Workspace { workspace: "api".into() }
    );
    let refused = |json: &str| serde_json::from_str::<SearchScope>(json).unwrap_err().to_string();
    assert!(refused(r#"{"kind":"session"}"#).contains("missing field `session_id`"));
    assert!(refused(r#"{"kind":"galaxy"}"#).contains("unknown variant `galaxy`"));
    assert!(refused(r#"{"session_id":"s1"}"#).contains("missing field `kind`"));
}

#[test]
fn the_backend_reads_as_its_kind_says() {
    for backend in [Backend::Opfs { file: "cowork.db".into() }, Backend::Memory { reason: "no OPFS".into() }] {
        let json = serde_json::to_string(&backend).unwrap();
        assert_eq!(serde_json::from_str::<Backend>(&json).unwrap(), backend, "{json}");
    }
    assert!(serde_json::from_str::<Backend>(r#"{"kind":"opfs"}"#).unwrap_err().to_string().contains("`file`"));
    assert!(serde_json::from_str::<Backend>(r#"{"kind":"tape"}"#).is_err());
}

/// An MCP server's tool crosses as a page tool: its spec as the page's MCP host writes it (`offer` in
/// `web/mcp/host.mjs`) is read whole, and its result comes back whole beside the text.
#[test]
fn mcp_tools_cross_as_page_tools() {
    let offered = r#"[{"name":"everything__echo","description":"Echoes","parameters":{"type":"object"},
        "approval":"ask_every_time","mcp":{"server":"everything","tool":"echo"}}]"#;
    let specs: Vec<HostToolSpec> = serde_json::from_str(offered).unwrap();
    assert_eq!(specs[0].approval, cowork_core::prompt::ApprovalPolicy::AskEveryTime);
    let callee = McpCallee { server: "everything".into(), tool: "echo".into() };
    assert_eq!(McpCallee::of(&specs[0].name), Some(callee), "the approval card reads it from the name");
    assert_eq!(McpCallee::of("read_file"), None, "a name without __ is no MCP server's");
    let result = serde_json::json!({"content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]});
    let answer = Request {
        id: 3,
        op: Op::ToolResult(ops::ToolResult {
            call_id: "c1".into(),
            content: String::new(),
            success: true,
            result: Some(result),
        }),
    };
    assert_eq!(serde_json::from_str::<Request>(&answer.to_json()).unwrap(), answer);
    let plain = ops::ToolResult { call_id: "c2".into(), content: "ok".into(), success: true, result: None };
    assert!(!serde_json::to_string(&plain).unwrap().contains("result"));
}
