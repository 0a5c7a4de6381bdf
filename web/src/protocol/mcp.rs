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

/// A prompt's argument, as the server lists it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpArgument {
    /// Its name.
    pub name: String,
    /// What it is.
    #[serde(default)]
    pub description: String,
    /// Whether the prompt needs it.
    #[serde(default)]
    pub required: bool,
}

/// A resource or a prompt of one of a workspace's servers, for the composer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpOffer {
    /// The server's id.
    pub server_id: String,
    /// The server's name.
    pub server: String,
    /// A resource's URI, or a prompt's name.
    pub id: String,
    /// What to call it: a resource's name (the attachment's name), a prompt's title or name.
    pub name: String,
    /// What it is, as the server says.
    #[serde(default)]
    pub description: String,
    /// A prompt's arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<McpArgument>,
}

/// The resources and prompts of a workspace's enabled servers, and why a server offered none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpCatalog {
    /// The resources.
    pub resources: Vec<McpOffer>,
    /// The prompts.
    pub prompts: Vec<McpOffer>,
    /// A line per server that could not be asked (its name and the cause).
    pub problems: Vec<String>,
}

/// A prompt's text for the message box, and how many of its messages or parts were left out (the
/// assistant's, and content that is not text).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpPromptText {
    /// The text.
    pub text: String,
    /// What was left out.
    pub left_out: u32,
}
