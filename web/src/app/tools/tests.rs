use super::*;
use crate::protocol::McpListed;

fn server(name: &str) -> McpServer {
    McpServer {
        id: "mcp-1".into(),
        name: name.into(),
        url: "http://127.0.0.1:9/mcp".into(),
        auth: McpAuth::None,
        enabled: true,
        policy: ToolPolicy::AskUnlessReadOnly,
        tools: Vec::new(),
    }
}

#[test]
fn what_a_server_says_is_shown_as_text_never_as_markup() {
    // A server names its tools and describes them: hostile text must not become elements or attributes.
    let evil = r#""><img src=x onerror=alert(1)><script>alert(2)</script>'"#;
    let mut s = server(evil);
    s.set_policy("write_file", ToolPolicy::NeverAsk);
    let status = McpStatus {
        server_id: "mcp-1".into(),
        state: McpState::Connected,
        message: evil.into(),
        tools: vec![
            McpListed { name: evil.into(), description: evil.into(), read_only: true },
            McpListed { name: "write_file".into(), description: "Writes".into(), read_only: false },
        ],
        resources: vec![McpListed { name: evil.into(), ..McpListed::default() }],
        prompts: Vec::new(),
    };
    let html = render(&[(s, vec![evil.into()])], &[status]);
    for raw in ["<img", "<script", "\"><img", "'"] {
        assert!(!html.contains(raw), "{raw:?} reached the markup: {html}");
    }
    assert!(html.contains("&lt;script&gt;alert(2)&lt;/script&gt;"), "{html}");
    assert!(html.contains("class=\"mcp-status connected\""), "{html}");
    // The read-only tool is marked; each tool's select shows its policy (the server's unless its own).
    assert!(html.contains("</code> (read-only)"), "{html}");
    let selected: Vec<&str> = html.match_indices(" selected>").map(|(i, _)| &html[i.saturating_sub(20)..i]).collect();
    assert_eq!(selected.len(), 2, "{html}");
    assert!(selected[0].ends_with("value=\"0\""), "the server's policy for the first tool: {selected:?}");
    assert!(selected[1].ends_with("value=\"2\""), "write_file's own policy, never ask: {selected:?}");
}

#[test]
fn a_server_not_heard_from_yet_says_it_is_connecting() {
    let html = render(&[(server("files"), vec!["default".into()])], &[]);
    assert!(html.contains("class=\"mcp-status unknown\" role=\"status\">Connecting…</p>"), "{html}");
    assert!(html.contains("used by default"), "{html}");
}
