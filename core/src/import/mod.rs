//! Other tools' exports read into a neutral form: ChatGPT and Claude.ai data exports, Claude Code and
//! Codex CLI transcripts, and OpenAI `messages` arrays. Pure: bytes in, [`Conversation`]s out, no I/O;
//! the store writes them (`Store::import_foreign`).
//!
//! [`detect`] recognises a file's [`Format`] from its content (never its name). [`parse_files`] hands
//! each conversation to a callback as soon as it is read, so memory holds the input and one
//! conversation, never a second copy of a whole export. A file that cannot be read (not JSON, cut
//! short) is refused whole; a conversation that cannot be read is left out and returned as a
//! [`SkippedConversation`] (file, place, title, why), and the file's others are read on. [`plan`] turns a conversation's message tree
//! into sessions and forks ([`PlannedSession`]): the main path becomes the session, every other branch
//! a fork at the turn where it leaves the path.
//!
//! ```
//! use cowork_core::import::{detect, parse_files, Format, ImportFile};
//!
//! let messages = br#"[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello!"}]"#;
//! let file = ImportFile::new("chat.json", messages);
//! assert_eq!(detect(file.bytes).unwrap(), Format::OpenAiMessages);
//! let mut texts = Vec::new();
//! let skipped = parse_files(&[file], &mut |c| {
//!     texts.extend(c.turns.iter().map(|t| t.content.clone()));
//!     Ok(())
//! })
//! .unwrap();
//! assert_eq!(texts, ["Hi", "Hello!"]);
//! assert!(skipped.is_empty());
//! ```

mod branches;
mod chatgpt;
mod claude_ai;
mod claude_code;
mod codex;
mod detect;
mod openai;
mod time;
mod wire;

pub use branches::{plan, session_id, Plan, PlannedSession};
pub use detect::{detect, detect_files};
pub use time::parse_iso8601_ms;
pub use wire::{ReadFailure, ReadSummary};

use crate::error::{Error, Result};
use crate::{Role, ToolCall};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The formats [`detect`] recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// ChatGPT's data export, `conversations.json`: an array of conversations whose messages form a
    /// tree (`mapping`), edits and regenerations being branches.
    ChatGpt,
    /// Claude.ai's data export, `conversations.json`: an array of conversations with `chat_messages`.
    ClaudeAi,
    /// Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`).
    ClaudeCode,
    /// Codex CLI rollouts (`rollout-*.jsonl`), with or without the `{timestamp, type, payload}` envelope.
    Codex,
    /// An OpenAI-style `messages` array, or an object with one under `"messages"`.
    OpenAiMessages,
}

impl Format {
    /// The name recorded in every imported turn's `metadata.source.format` ("chatgpt", "claude_ai", …).
    pub fn as_str(self) -> &'static str {
        match self {
            Format::ChatGpt => "chatgpt",
            Format::ClaudeAi => "claude_ai",
            Format::ClaudeCode => "claude_code",
            Format::Codex => "codex",
            Format::OpenAiMessages => "openai_messages",
        }
    }

    /// The product's name, for people ("ChatGPT", "Claude Code", …).
    pub fn label(self) -> &'static str {
        match self {
            Format::ChatGpt => "ChatGPT",
            Format::ClaudeAi => "Claude.ai",
            Format::ClaudeCode => "Claude Code",
            Format::Codex => "Codex",
            Format::OpenAiMessages => "OpenAI messages",
        }
    }

    /// The workspace of conversations whose source names none ("ChatGPT import").
    pub fn default_workspace(self) -> String {
        format!("{} import", self.label())
    }
}

/// One file handed to the importer: its name (only for messages) and its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportFile<'a> {
    /// The file's name as the user chose it; errors name it. The format is never guessed from it.
    pub name: &'a str,
    /// The file's content.
    pub bytes: &'a [u8],
}

impl<'a> ImportFile<'a> {
    /// A file named `name` holding `bytes`.
    pub fn new(name: &'a str, bytes: &'a [u8]) -> ImportFile<'a> {
        ImportFile { name, bytes }
    }
}

/// One conversation as its source had it: a tree of turns (a list is a tree without branches).
/// In the browser it travels as JSON from the importer's own wasm, loaded on first use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    /// The format it was read from.
    pub format: Format,
    /// The source's id for it (ChatGPT `conversation_id`, Claude `uuid` / `sessionId`, Codex session id).
    pub id: String,
    /// The source's title (may be empty).
    pub title: String,
    /// The source's working directory, when it has one (Claude Code, Codex).
    pub workspace: Option<String>,
    /// The model named by the source (may be empty).
    pub model: String,
    /// When it started, in milliseconds since the Unix epoch, if the source says.
    pub created_at: Option<i64>,
    /// When it last changed, in milliseconds since the Unix epoch, if the source says.
    pub updated_at: Option<i64>,
    /// The turns, every parent before its children.
    pub turns: Vec<ImportedTurn>,
    /// The turn the source shows last (ChatGPT's `current_node`); `None`: the last turn.
    pub current: Option<usize>,
    /// Messages left out: system, hidden and meta messages, empty ones, side chains.
    pub skipped: usize,
}

/// One turn of a [`Conversation`]. A source message may give several (a reply with tool calls and the
/// results that answer them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportedTurn {
    /// The source's id of the message it comes from.
    pub source_id: String,
    /// The turn before it (an index into [`Conversation::turns`]); `None` for a first turn.
    pub parent: Option<usize>,
    /// Who wrote it.
    pub role: Role,
    /// Its text.
    pub content: String,
    /// For an assistant turn: the tool calls it made.
    pub tool_calls: Vec<ToolCall>,
    /// For a tool turn: the call it answers, when known.
    pub tool_call_id: Option<String>,
    /// For a tool turn: the tool's name.
    pub tool_name: Option<String>,
    /// When it was written (ms since the Unix epoch), if the source says; otherwise its parent's time.
    pub created_at: Option<i64>,
    /// What else the source said that Cowork keeps (`model`, `reasoning`, `is_error`, …).
    pub metadata: serde_json::Map<String, Value>,
}

impl ImportedTurn {
    /// A turn with no calls, no tool fields and no metadata.
    pub fn new(source_id: impl Into<String>, role: Role, content: impl Into<String>) -> ImportedTurn {
        ImportedTurn {
            source_id: source_id.into(),
            parent: None,
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            created_at: None,
            metadata: serde_json::Map::new(),
        }
    }
}

/// A conversation left out of an import because it cannot be read, and why. The file's other
/// conversations are imported; this one is named in the preview and in the summary, never dropped
/// silently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedConversation {
    /// The file it is in, as given.
    pub file: String,
    /// Its 1-based position in the file's array of conversations; `None` when the file (or, for
    /// Claude Code, the session) is the conversation.
    pub entry: Option<usize>,
    /// The source's id for it, when it has one.
    pub id: String,
    /// The source's title for it (may be empty).
    pub title: String,
    /// What is wrong with it, for people (`it has no "mapping" (its messages)`).
    pub reason: String,
}

impl SkippedConversation {
    /// How people find it in the file: "entry 3 (\"Trip\")", "\"Trip\"", "conversation 1f0e…", or
    /// the file.
    pub fn name(&self) -> String {
        let title = self.title.trim();
        match (self.entry, title, self.id.as_str()) {
            (Some(n), "", _) => format!("entry {n}"),
            (Some(n), t, _) => format!("entry {n} ({t:?})"),
            (None, "", "") => self.file.clone(),
            (None, "", id) => format!("conversation {id}"),
            (None, t, _) => format!("{t:?}"),
        }
    }
}

impl std::fmt::Display for SkippedConversation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.entry, self.title.trim(), self.id.as_str()) {
            // The file is the conversation: its name says which.
            (None, "", "") => write!(f, "{}: {}", self.file, self.reason),
            _ => write!(f, "{}: {}: {}", self.file, self.name(), self.reason),
        }
    }
}

/// Reads every file and hands each conversation to `each` as soon as it is complete. A file that
/// cannot be read (not JSON, cut short, of no known format) stops it with an error naming the file
/// and where; a conversation that cannot be read is left out and returned, with why, and the others
/// are read on. `each`'s error stops it too. Claude Code files are grouped by `sessionId` across files.
pub fn parse_files(
    files: &[ImportFile<'_>],
    each: &mut dyn FnMut(Conversation) -> Result<()>,
) -> Result<Vec<SkippedConversation>> {
    let mut claude_code = claude_code::Sessions::default();
    let mut skipped = Vec::new();
    for file in files {
        let result = match detect(file.bytes)? {
            Format::ChatGpt => chatgpt::parse(file, each, &mut skipped),
            Format::ClaudeAi => claude_ai::parse(file, each, &mut skipped),
            Format::ClaudeCode => claude_code.add_file(file),
            Format::Codex => codex::parse(file.bytes).and_then(|c| whole_file(file, c, each, &mut skipped)),
            Format::OpenAiMessages => openai::parse(file.bytes).and_then(|c| whole_file(file, c, each, &mut skipped)),
        };
        result.map_err(|e| in_file(e, file.name))?;
    }
    claude_code.finish(each, &mut skipped)?;
    Ok(skipped)
}

/// A file that is one conversation (a Codex rollout, an OpenAI messages array): handed on, or left
/// out with why.
fn whole_file(
    file: &ImportFile<'_>,
    parsed: std::result::Result<Conversation, String>,
    each: &mut dyn FnMut(Conversation) -> Result<()>,
    skipped: &mut Vec<SkippedConversation>,
) -> Result<()> {
    match parsed {
        Ok(c) => each(c),
        Err(reason) => {
            let (id, title) = (String::new(), String::new());
            skipped.push(SkippedConversation { file: file.name.to_owned(), entry: None, id, title, reason });
            Ok(())
        }
    }
}

/// The conversations of a ChatGPT or Claude.ai file: an array (entries numbered from 1, read one at
/// a time) or one exported conversation object (entry `None`).
fn for_each_conversation(bytes: &[u8], each: &mut dyn FnMut(Option<usize>, Value) -> Result<()>) -> Result<()> {
    let bytes = &bytes[detect::content_start(bytes).unwrap_or(0)..];
    if bytes.first() == Some(&b'[') {
        return for_each_element(bytes, "conversation", &mut |i, v| each(Some(i), v));
    }
    let value = serde_json::from_slice(bytes).map_err(|e| json_err(bytes, &e, "reading the conversation"))?;
    each(None, value)
}

/// Reads the conversations of a ChatGPT or Claude.ai `file` with `read`: each one read goes to
/// `each`, each one that cannot be read to `skipped`, named by `names` (its id and title).
pub(crate) fn read_conversations(
    file: &ImportFile<'_>,
    read: fn(&Value) -> std::result::Result<Conversation, String>,
    names: &dyn Fn(&Value) -> (String, String),
    each: &mut dyn FnMut(Conversation) -> Result<()>,
    skipped: &mut Vec<SkippedConversation>,
) -> Result<()> {
    for_each_conversation(file.bytes, &mut |entry, value| match read(&value) {
        Ok(conversation) => {
            drop(value);
            each(conversation)
        }
        Err(reason) => {
            let (id, title) = names(&value);
            skipped.push(SkippedConversation { file: file.name.to_owned(), entry, id, title, reason });
            Ok(())
        }
    })
}

/// An id for a conversation its source gave none (a single conversation saved by some tool): a UUID
/// v5 of its content, so importing the same file again is recognised.
pub(crate) fn derived_id(v: &Value) -> String {
    uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, format!("cowork-import-content\n{v}").as_bytes()).to_string()
}

/// Adds the file's name to an import error's message.
pub(crate) fn in_file(e: Error, name: &str) -> Error {
    match e {
        Error::Import { line, message } if !name.is_empty() && !message.starts_with(name) => {
            Error::Import { line, message: format!("{name}: {message}") }
        }
        other => other,
    }
}

pub(crate) fn import_err(line: usize, message: String) -> Error {
    Error::Import { line, message }
}

/// A JSON syntax error as an import error naming the line, column and byte offset.
pub(crate) fn json_err(bytes: &[u8], e: &serde_json::Error, what: &str) -> Error {
    let (line, column) = (e.line().max(1), e.column());
    let offset = byte_offset(bytes, line, column);
    let why = if e.is_eof() { "the file ends too early: it looks truncated" } else { "malformed JSON" };
    import_err(line, format!("{what}: {why} at line {line}, column {column} (byte {offset}): {e}"))
}

/// The byte offset of a 1-based line and column.
fn byte_offset(bytes: &[u8], line: usize, column: usize) -> usize {
    let line_start = if line <= 1 {
        0
    } else {
        bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(line - 2).map_or(bytes.len(), |(i, _)| i + 1)
    };
    (line_start + column.saturating_sub(1)).min(bytes.len())
}

/// Reads a JSON array element by element: each one is handed to `each` as it is parsed, so only one
/// element's tree is in memory. `each` gets the element's 1-based index.
pub(crate) fn for_each_element(
    bytes: &[u8],
    what: &str,
    each: &mut dyn FnMut(usize, Value) -> Result<()>,
) -> Result<()> {
    use serde::de::{Deserializer, SeqAccess, Visitor};
    struct Elements<'f> {
        each: &'f mut dyn FnMut(usize, Value) -> Result<()>,
        failed: &'f mut Option<Error>,
        count: &'f mut usize,
    }
    impl<'de> Visitor<'de> for Elements<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an array")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while let Some(v) = seq.next_element::<Value>()? {
                *self.count += 1;
                if let Err(e) = (self.each)(*self.count, v) {
                    *self.failed = Some(e);
                    return Err(serde::de::Error::custom("stopped"));
                }
            }
            Ok(())
        }
    }
    let mut failed = None;
    let mut count = 0;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let visited = (&mut de).deserialize_seq(Elements { each, failed: &mut failed, count: &mut count });
    if let Some(e) = failed {
        return Err(e);
    }
    let done = visited.and_then(|()| de.end());
    done.map_err(|e| json_err(bytes, &e, &format!("reading {what} {}", count + 1)))
}

/// A JSON value's kind, for messages ("an array", "a string").
pub(crate) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Text of a JSON string, or the text parts of an array of strings and `{"text": …}` blocks.
pub(crate) fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|i| match i {
                Value::String(s) => Some(s.clone()),
                Value::Object(o) => match o.get("type").and_then(Value::as_str) {
                    Some("image") => Some("[image — not included in the export]".to_owned()),
                    _ => o.get("text").and_then(Value::as_str).map(str::to_owned),
                },
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A fenced code block long enough not to be closed by backticks inside `text`.
pub(crate) fn fenced(info: &str, text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{info}\n{text}\n{fence}")
}

/// Tool-call arguments as JSON text: a JSON object's text is kept, anything else is wrapped as
/// `{"input": …}` (so a call always carries an object, as providers expect).
pub(crate) fn arguments_text(v: &Value) -> String {
    match v {
        Value::Object(_) => v.to_string(),
        Value::String(s) if serde_json::from_str::<Value>(s).is_ok_and(|v| v.is_object()) => s.clone(),
        Value::String(s) => serde_json::json!({ "input": s }).to_string(),
        Value::Null => "{}".to_owned(),
        other => serde_json::json!({ "input": other }).to_string(),
    }
}

#[cfg(test)]
mod tests;
