//! MCP in the archive: a workspace's servers are kept, exported and imported with its settings
//! (never a secret), and a tool's result is archived whole — its text searchable, its images as
//! attachments exported byte for byte, the result restored exactly from the turn.

use cowork_core::mcp::{restore, result_parts};
use cowork_core::store::{NewSession, NewToolExecution, Store};
use cowork_core::{Approval, NewTurn, SearchQuery, SearchScope, WorkspaceSettings};
use serde_json::json;

/// A server as the page's MCP module writes it (`web/mcp/servers.mjs`).
fn server() -> serde_json::Value {
    json!({"id": "srv-1", "name": "everything", "url": "http://127.0.0.1:3001/mcp", "auth": "bearer",
        "enabled": true, "policy": "ask_unless_read_only", "tools": [{"tool": "echo", "policy": "never_ask"}]})
}

#[test]
fn a_workspaces_servers_persist_and_travel_with_its_export() {
    let mut store = Store::open_in_memory().unwrap();
    let settings = WorkspaceSettings { mcp_servers: vec![server()], ..WorkspaceSettings::unset("proj") };
    store.set_workspace_settings(&settings).unwrap();
    assert_eq!(store.workspace_settings("proj").unwrap().mcp_servers, vec![server()]);
    store.create_session(&NewSession::new("proj".to_owned())).unwrap();
    let export = store.export_jsonl(None).unwrap();
    assert!(export.contains("http://127.0.0.1:3001/mcp"), "the server is exported:\n{export}");
    let mut other = Store::open_in_memory().unwrap();
    other.import_jsonl(&export).unwrap();
    assert_eq!(other.workspace_settings("proj").unwrap().mcp_servers, vec![server()]);
    // A workspace without servers is written as before (older builds read it).
    store.set_workspace_settings(&WorkspaceSettings::unset("plain")).unwrap();
    store.create_session(&NewSession::new("plain".to_owned())).unwrap();
    let line = store.export_jsonl(None).unwrap().lines().find(|l| l.contains("\"plain\"")).unwrap().to_owned();
    assert!(!line.contains("mcp_servers"), "{line}");
}

#[test]
fn a_tool_result_is_archived_whole() {
    let mut store = Store::open_in_memory().unwrap();
    let session = store.create_session(&NewSession::new("proj".to_owned())).unwrap();
    let png = b"\x89PNG\r\n\x1a\n-pixels-".to_vec();
    let result = json!({
        "content": [{"type": "text", "text": "Echo: zanzibarquokka"},
                    {"type": "image", "mimeType": "image/png", "data": cowork_core::attachment::to_base64(&png)}],
        "structuredContent": {"echoed": "zanzibarquokka"}
    });
    let parts = result_parts(&result);
    let mut turn = NewTurn::tool_result("call-1", "everything__echo", parts.content.clone());
    turn.metadata = json!({"success": true, "result": parts.result});
    let exec = NewToolExecution {
        tool_name: "everything__echo".into(),
        arguments: "{}".into(),
        success: true,
        duration_ms: 3,
        approval: Approval::Approved,
    };
    let stored = store.append_tool_result_with(&session.id, &turn, &exec, &parts.attachments).unwrap();
    assert_eq!(stored.attachments.len(), 1);
    let read = store.get_turns(&session.id, 0, 10).unwrap().pop().unwrap();
    let bytes: Vec<Vec<u8>> = read.attachments.iter().map(|a| store.attachment_bytes(&a.sha256).unwrap()).collect();
    assert_eq!(restore(&read.metadata["result"], &bytes), result, "the result restored from the archive");
    let hits = store.search(&SearchQuery::new("zanzibarquokka", SearchScope::All)).unwrap();
    assert_eq!(hits.len(), 1, "the tool's text is found by search");
    let export = store.export_jsonl(None).unwrap();
    assert!(export.contains(&cowork_core::attachment::to_base64(&png)), "the image's bytes are exported");
}

#[test]
fn a_whole_export_keeps_a_workspace_that_has_no_session_yet() {
    let mut store = Store::open_in_memory().unwrap();
    let settings = WorkspaceSettings { mcp_servers: vec![server()], ..WorkspaceSettings::unset("tools-only") };
    store.set_workspace_settings(&settings).unwrap();
    let export = store.export_jsonl(None).unwrap();
    let mut other = Store::open_in_memory().unwrap();
    other.import_jsonl(&export).unwrap();
    assert_eq!(other.workspace_settings("tools-only").unwrap().mcp_servers, vec![server()], "{export}");
    // An export of chosen sessions carries only their workspaces.
    let session = store.create_session(&NewSession::new("other".to_owned())).unwrap();
    assert!(!store.export_jsonl(Some(&[session.id])).unwrap().contains("tools-only"));
}
