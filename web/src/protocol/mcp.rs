//! MCP on the wire: the server and tool of a call the model made (the page's MCP bundle does the rest).

use serde::{Deserialize, Serialize};

/// The MCP server and the server's name of a tool the model called.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpCallee {
    /// The server's name.
    pub server: String,
    /// The tool, as the server names it.
    pub tool: String,
}

impl McpCallee {
    /// The server and tool of an MCP server's tool as the model is offered it, `<server>__<tool>`
    /// (`web/mcp/servers.mjs` `toolName`: each name with what a provider refuses made `_`); `None` for
    /// a name without `__`, which no MCP server's tool has and no page tool may have.
    pub fn of(name: &str) -> Option<McpCallee> {
        let (server, tool) = name.split_once("__")?;
        Some(McpCallee { server: server.to_owned(), tool: tool.to_owned() })
    }
}
