//! `[[mcp:server/tool {"a":1}]]`: the demo model calls the offered tool that is that MCP server's
//! tool (`<server>__<tool>`, as the page names it, `toolName` in `web/mcp/servers.mjs`) with those
//! arguments; its answer to the result quotes the result's first text (up to its first blank line).

use super::Plan;
use serde_json::{json, Value};

/// The switch.
pub const SWITCH: &str = "[[mcp:";

/// The call `text` asks for, when it holds the switch and the tool is offered.
pub fn call(text: &str, tools: &[String]) -> Option<Plan> {
    let start = text.find(SWITCH)? + SWITCH.len();
    let inner = &text[start..start + text[start..].find("]]")?];
    let (target, args) = inner.split_once(' ').unwrap_or((inner, ""));
    let (server, tool) = target.split_once('/')?;
    let name = tool_name(server, tool);
    let arguments = match args.trim() {
        "" => json!({}),
        a => serde_json::from_str::<Value>(a).ok()?,
    };
    tools.contains(&name).then_some(Plan::Call { name, arguments })
}

/// The name the page offers `tool` of `server` under (`toolName` in `web/mcp/servers.mjs`):
/// `<server>__<tool>`, every character outside `[a-zA-Z0-9_-]` made `_`, at most 64 characters.
fn tool_name(server: &str, tool: &str) -> String {
    let joined = format!("{server}__{tool}");
    joined.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).take(64).collect()
}

/// The answer to an MCP tool's result `text` (a tool named `<server>__<tool>`): its first part.
pub fn answer(name: &str, text: &str) -> Option<String> {
    let first = text.split("\n\n").next().unwrap_or_default();
    name.contains("__").then(|| format!("Here is what {name} returned: {first}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_switch_calls_the_offered_mcp_tool_with_its_arguments() {
        let tools = vec!["conversation_recall".to_owned(), "everything__echo".to_owned()];
        let want = Plan::Call { name: "everything__echo".into(), arguments: json!({"message": "hi there"}) };
        assert_eq!(call(r#"please [[mcp:everything/echo {"message": "hi there"}]] now"#, &tools), Some(want));
        assert_eq!(call("[[mcp:other/echo {}]]", &tools), None, "a tool not offered is not called");
        assert_eq!(call("[[mcp:everything/echo {broken]]", &tools), None);
        assert_eq!(call("no switch", &tools), None);
    }

    #[test]
    fn the_answer_quotes_the_first_part_of_an_mcp_result() {
        let text =
            "Here's the image you requested:\n\n[image: image-1.png, image/png]\n\nThe image above is the MCP logo.";
        let want = "Here is what everything__get-tiny-image returned: Here's the image you requested:";
        assert_eq!(answer("everything__get-tiny-image", text).as_deref(), Some(want));
        assert_eq!(answer("read_file", text), None, "a page's tool is quoted as before");
    }
}
