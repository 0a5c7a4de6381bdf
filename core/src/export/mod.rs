//! Other tools' formats out: ChatGPT's `conversations.json` ([`chatgpt`]) and a Markdown transcript
//! ([`markdown`]), made from sessions and their turns as the archive hands them over (the `Store`'s
//! `chatgpt_source` and `markdown_source`). Pure, and without the store: the storage worker runs
//! them in the importer's wasm module, loaded on first use, so they are not part of every start;
//! native code calls them through `Store::export_chatgpt` and `Store::export_markdown`. (Cowork's own
//! lossless format, JSON Lines, is the archive's: `store::export`.)

pub mod chatgpt;
pub mod markdown;

use crate::{Session, Turn};
use serde::{Deserialize, Serialize};

/// A session with turns: its own, or every turn it reads, as the source says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionTurns {
    /// The session.
    pub session: Session,
    /// Its turns, in order.
    pub turns: Vec<Turn>,
}

/// What a ChatGPT export is made of: the trees' roots in the order they are exported, and every
/// session of those trees (in the sidebar's order) with its own turns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatGptSource {
    /// The root sessions' ids.
    pub roots: Vec<String>,
    /// Every session of their trees.
    pub sessions: Vec<SessionTurns>,
}

/// An export in another tool's format, as the storage worker hands it to the importer's module.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExportSource {
    /// ChatGPT's `conversations.json`.
    ChatGpt(ChatGptSource),
    /// One session as Markdown.
    Markdown(Box<SessionTurns>),
}

impl ExportSource {
    /// The exported file's text.
    pub fn render(&self) -> String {
        match self {
            ExportSource::ChatGpt(source) => chatgpt::render(source),
            ExportSource::Markdown(source) => markdown::render(source),
        }
    }
}
