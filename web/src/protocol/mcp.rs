//! MCP servers as Settings → Tools shows them: whether a server answers, and what it offers.

use serde::{Deserialize, Serialize};

/// Where a server stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpState {
    /// Not asked yet.
    #[default]
    Unknown,
    /// It answered and listed its tools.
    Connected,
    /// It refuses without sign-in (HTTP 401/403).
    NeedsSignIn,
    /// Nothing answers at its URL.
    Unreachable,
    /// It answers without CORS headers, so a page cannot call it (a bridge can: README).
    NoCors,
    /// Anything else (a protocol error, the module missing).
    Failed,
}

/// A tool, resource or prompt a server lists.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpListed {
    /// Its name (a resource's URI).
    pub name: String,
    /// What it is, as the server says.
    #[serde(default)]
    pub description: String,
    /// A tool the server says only reads (and is not destructive).
    #[serde(default)]
    pub read_only: bool,
}

/// What asking a server found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpStatus {
    /// The server asked.
    pub server_id: String,
    /// Where it stands.
    pub state: McpState,
    /// What to tell the user (the cause, and the remedy where there is one).
    pub message: String,
    /// Its tools.
    pub tools: Vec<McpListed>,
    /// Its resources.
    pub resources: Vec<McpListed>,
    /// Its prompts.
    pub prompts: Vec<McpListed>,
}

/// The MCP server and the server's name of a tool the model called.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpCallee {
    /// The server's name.
    pub server: String,
    /// The tool, as the server names it.
    pub tool: String,
}
