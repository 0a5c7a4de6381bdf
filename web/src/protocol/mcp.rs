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
