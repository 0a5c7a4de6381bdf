//! Files handed to the worker (an import's, a message's attachments), and what an import found or did,
//! on the wire.
//!
//! Messages travel as JSON text, which suits everything but a 100 MB export: as JSON a byte array is
//! a list of numbers (four times the size) and a string must be escaped and parsed again. So a file's
//! name and size travel in the JSON, and its bytes beside it: the UI reads the chosen `File` into an
//! `ArrayBuffer` and *transfers* it with the message (`{request, files}`, no copy); the worker copies
//! each buffer once into its own memory ([`FilePayload::bytes`]) and the JS buffer is let go. A worker
//! that forwards the request to the tab owning the archive sends the bytes the same way over the
//! `BroadcastChannel` (structured clone).

use super::ops::{self, Op};
use serde::{Deserialize, Serialize};

/// One file of an import or one attachment of a message: name, type and size in the JSON, the bytes
/// beside it.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilePayload {
    /// The file's name (or its path inside a chosen folder); errors name it.
    pub name: String,
    /// Its MIME type as the browser gave it (`Blob.type`; may be empty). Used for attachments.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mime: String,
    /// Its size in bytes, to check that the bytes that arrived are the whole file.
    pub size: u64,
    /// Its content: never in the JSON, attached on arrival from the buffer sent beside it (empty in
    /// the UI, which never copies a file into its own memory).
    #[serde(skip)]
    pub bytes: Vec<u8>,
}

impl std::fmt::Debug for FilePayload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FilePayload({:?}, {} bytes, {} attached)", self.name, self.size, self.bytes.len())
    }
}

impl FilePayload {
    /// An attachment named `name` of type `mime` whose `size` bytes are posted beside the request.
    pub fn attachment(name: impl Into<String>, mime: impl Into<String>, size: u64) -> FilePayload {
        FilePayload { name: name.into(), mime: mime.into(), size, bytes: Vec::new() }
    }

    /// The attachment to save (the worker side, once the bytes have arrived).
    pub fn into_attachment(self) -> cowork_core::NewAttachment {
        cowork_core::NewAttachment::new(self.name, self.mime, self.bytes)
    }
}

impl Op {
    /// The files this operation carries (their bytes travel beside the JSON); `None` for the others.
    pub fn files(&self) -> Option<&[FilePayload]> {
        match self {
            Op::PreviewImport(ops::PreviewImport { files }) | Op::ImportFiles(ops::ImportFiles { files }) => {
                Some(files)
            }
            Op::SendMessage(ops::SendMessage { message: ops::Outgoing { attachments, .. }, .. })
            | Op::EditMessage(ops::EditMessage { message: ops::Outgoing { attachments, .. }, .. })
            | Op::AppendTurn(ops::AppendTurn { attachments, .. }) => Some(attachments),
            _ => None,
        }
    }

    /// The files this operation carries, to attach their bytes on arrival.
    pub fn files_mut(&mut self) -> Option<&mut Vec<FilePayload>> {
        match self {
            Op::PreviewImport(ops::PreviewImport { files }) | Op::ImportFiles(ops::ImportFiles { files }) => {
                Some(files)
            }
            Op::SendMessage(ops::SendMessage { message: ops::Outgoing { attachments, .. }, .. })
            | Op::EditMessage(ops::EditMessage { message: ops::Outgoing { attachments, .. }, .. })
            | Op::AppendTurn(ops::AppendTurn { attachments, .. }) => Some(attachments),
            _ => None,
        }
    }
}

/// What an import would add ([`Op::PreviewImport`]) or added ([`Op::ImportFiles`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportReport {
    /// Each file's format, for people ("ChatGPT", "Claude Code", "Cowork"), in the order given.
    pub formats: Vec<String>,
    /// Conversations read (Claude Code: sessions; a Cowork export: its sessions).
    pub conversations: usize,
    /// Sessions added (or to add): one per new conversation.
    pub sessions: usize,
    /// Forks added: the other branches of the conversations' trees (edits, regenerations).
    pub forks: usize,
    /// Messages (turns) added.
    pub turns: usize,
    /// Messages left out (system, hidden and meta messages, empty ones, side chains).
    pub skipped: usize,
    /// Conversations already in the archive, left as they are (their titles).
    pub already_imported: Vec<String>,
    /// The new main sessions' ids, in the order read, to open them (empty in a preview).
    pub session_ids: Vec<String>,
    /// Conversations left out because they cannot be read, each with where it is and why (not
    /// counted in `conversations`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_conversations: Vec<SkippedConversation>,
}

/// A conversation an import leaves out because it cannot be read (the wire form of
/// `cowork_core::import::SkippedConversation`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedConversation {
    /// The file it is in, as chosen.
    pub file: String,
    /// Its 1-based position in the file's array of conversations; `None` when the file (or a Claude
    /// Code session) is the conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<usize>,
    /// The source's id for it (may be empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// The source's title for it (may be empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// What is wrong with it, for people.
    pub reason: String,
}

impl SkippedConversation {
    /// Where it is and why, for people: `entry 3 ("Trip"): it has no "mapping" (its messages)`;
    /// `with_file` puts the file's name first (when several files were chosen).
    pub fn describe(&self, with_file: bool) -> String {
        let title = self.title.trim();
        let name = match (self.entry, title, self.id.as_str()) {
            (Some(n), "", _) => format!("entry {n}"),
            (Some(n), t, _) => format!("entry {n} ({t:?})"),
            (None, "", "") => return format!("{}: {}", self.file, self.reason),
            (None, "", id) => format!("conversation {id}"),
            (None, t, _) => format!("{t:?}"),
        };
        match with_file {
            true => format!("{} {name}: {}", self.file, self.reason),
            false => format!("{name}: {}", self.reason),
        }
    }
}

/// How many left-out conversations the status line names (the panel lists the rest).
pub const SKIPPED_NAMED: usize = 3;

impl ImportReport {
    /// What the preview says: "412 conversations, 9,870 messages, 37 branches → 412 sessions + 37
    /// forks; 3 already imported".
    pub fn describe_preview(&self) -> String {
        let mut out = format!(
            "{}, {}, {} → {} + {}",
            count(self.conversations, "conversation"),
            count(self.turns, "message"),
            count(self.forks, "branch"),
            count(self.sessions, "session"),
            count(self.forks, "fork"),
        );
        out.push_str(&self.already_and_skipped());
        out
    }

    /// What the import did: "Imported 412 sessions + 37 forks with 9,870 messages; 3 already imported".
    pub fn describe_done(&self) -> String {
        let mut out = format!(
            "Imported {} + {} with {}",
            count(self.sessions, "session"),
            count(self.forks, "fork"),
            count(self.turns, "message")
        );
        out.push_str(&self.already_and_skipped());
        out
    }

    fn already_and_skipped(&self) -> String {
        let mut out = String::new();
        if !self.already_imported.is_empty() {
            out.push_str(&format!("; {} already imported", thousands(self.already_imported.len())));
        }
        if self.skipped > 0 {
            out.push_str(&format!("; {} left out (system, hidden or empty)", count(self.skipped, "message")));
        }
        let broken = &self.skipped_conversations;
        if !broken.is_empty() {
            let named: Vec<String> = broken.iter().take(SKIPPED_NAMED).map(|s| s.describe(self.many_files())).collect();
            let what = if broken.len() == 1 {
                "conversation that cannot be read"
            } else {
                "conversations that cannot be read"
            };
            out.push_str(&format!("; skipped {} {what}: {}", thousands(broken.len()), named.join("; ")));
            if broken.len() > SKIPPED_NAMED {
                out.push_str(&format!("; and {} more (listed below)", thousands(broken.len() - SKIPPED_NAMED)));
            }
        }
        out
    }

    /// Whether the files chosen were several (then a left-out conversation is named with its file).
    pub fn many_files(&self) -> bool {
        self.formats.len() > 1
    }

    /// Whether importing would add nothing at all.
    pub fn adds_nothing(&self) -> bool {
        self.sessions == 0 && self.forks == 0 && self.turns == 0
    }

    /// Why nothing would be added, when nothing would: everything is already in the archive, nothing
    /// in the files can be read, or they hold no messages. Never "nothing new" for what was never
    /// imported.
    pub fn why_nothing(&self) -> Option<&'static str> {
        if !self.adds_nothing() {
            None
        } else if !self.already_imported.is_empty() {
            Some("Nothing new to import.")
        } else if !self.skipped_conversations.is_empty() {
            Some("Nothing in it can be imported.")
        } else {
            Some("It holds no messages to import.")
        }
    }
}

/// "1 message", "9,870 messages" ("branch" → "branches"): every count the app shows is said so.
pub fn count(n: usize, one: &str) -> String {
    let plural = if one.ends_with("ch") { format!("{one}es") } else { format!("{one}s") };
    format!("{} {}", thousands(n), if n == 1 { one.to_owned() } else { plural })
}

/// `9870` → "9,870".
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The browser side: a request with its files' buffers as one message, and back.
pub mod js {
    use super::super::Request;
    use wasm_bindgen::{JsCast, JsValue};

    /// `{request: "<json>", files: [ArrayBuffer…]}` and the list of buffers to transfer with it; a
    /// request without files is its JSON text alone, as every other message.
    pub fn message(json: String, buffers: &[js_sys::ArrayBuffer]) -> (JsValue, js_sys::Array) {
        let transfer: js_sys::Array = buffers.iter().collect();
        if buffers.is_empty() {
            return (JsValue::from_str(&json), transfer);
        }
        let msg = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&msg, &"request".into(), &JsValue::from_str(&json));
        let _ = js_sys::Reflect::set(&msg, &"files".into(), &transfer);
        (msg.into(), transfer)
    }

    /// The buffers of a request's files, copied out of this worker's memory (to forward it to the
    /// owner); empty when it has none.
    pub fn buffers_of(req: &Request) -> Vec<js_sys::ArrayBuffer> {
        req.op
            .files()
            .unwrap_or_default()
            .iter()
            .map(|f| js_sys::Uint8Array::from(f.bytes.as_slice()).buffer())
            .collect()
    }

    /// The JSON text of a message and its buffers (none for a plain string message).
    pub fn read(data: &JsValue) -> Option<(String, Option<js_sys::Array>)> {
        if let Some(text) = data.as_string() {
            return Some((text, None));
        }
        let json = js_sys::Reflect::get(data, &"request".into()).ok()?.as_string()?;
        let files = js_sys::Reflect::get(data, &"files".into()).ok()?.dyn_into::<js_sys::Array>().ok()?;
        Some((json, Some(files)))
    }

    /// Copies each buffer into the file it belongs to (in order). A buffer missing, or not of the
    /// size the file had, is an error naming the file.
    pub fn attach(req: &mut Request, buffers: Option<&js_sys::Array>) -> Result<(), String> {
        let Some(files) = req.op.files_mut() else { return Ok(()) };
        for (i, file) in files.iter_mut().enumerate() {
            let buffer = buffers.map(|b| b.get(i as u32)).filter(|b| b.is_instance_of::<js_sys::ArrayBuffer>());
            let Some(buffer) = buffer else { return Err(format!("{}: its content did not arrive", file.name)) };
            file.bytes = js_sys::Uint8Array::new(&buffer).to_vec();
            if file.bytes.len() as u64 != file.size {
                return Err(format!("{}: {} of its {} bytes arrived", file.name, file.bytes.len(), file.size));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
