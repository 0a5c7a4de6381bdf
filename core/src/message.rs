//! The messages of a model request, provider-neutral: [`ContextMessage`] (what context assembly
//! produces and the wire formats in `provider` convert), the reasoning a reply carries back to its
//! provider ([`ReasoningReplay`], read from the turn's metadata), and the images sent with a message
//! ([`ImagePart`], counted by the provider's formula, [`ImageTokens`]).

use serde::{Deserialize, Serialize};

use crate::{Attachment, Role, ToolCall};

/// One message of the request, provider-neutral (the wire formats convert it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextMessage {
    /// Who the message is from (`System` also for notes, e.g. a result that arrived outside its call).
    pub role: Role,
    /// The text as sent: possibly shortened to head + tail, or with a note appended.
    pub content: String,
    /// For an assistant message: the calls it made (each answered by a following tool message).
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the call it answers.
    pub tool_call_id: Option<String>,
    /// For a tool message: the tool's name.
    pub name: Option<String>,
    /// For an assistant message: its reasoning as the provider needs it back (read from the turn's
    /// metadata; the wire formats send it only with tool calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<ReasoningReplay>,
    /// For a user message: the images sent with it (text files are in `content`; images outside the
    /// protection window are placeholders in `content` instead).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImagePart>,
}

impl ContextMessage {
    /// A message of `role` saying `content`, with no calls, reasoning or images.
    pub(crate) fn new(role: Role, content: impl Into<String>) -> ContextMessage {
        ContextMessage {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
            reasoning: None,
            images: Vec::new(),
        }
    }
}

/// An assistant reply's reasoning in the form its provider wants back, from the turn's metadata
/// (`reasoning`, `reasoning_field`, `reasoning_blocks`, as the agent loop stores them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReasoningReplay {
    /// The text for OpenAI-compatible `reasoning_content` (DeepSeek-style endpoints), only when the
    /// reply came in that field.
    pub reasoning_content: Option<String>,
    /// Anthropic's `thinking` / `redacted_thinking` blocks, verbatim with their signatures.
    pub blocks: Vec<serde_json::Value>,
    /// Provider data on the turn's tool calls, by call id (Gemini's thought signatures in
    /// `extra_content`), sent back exactly with each call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub call_extras: Vec<(String, serde_json::Value)>,
}

impl ReasoningReplay {
    /// What a turn's metadata holds to send back, or `None` when there is nothing.
    pub fn from_metadata(metadata: &serde_json::Value) -> Option<ReasoningReplay> {
        let reasoning_content = metadata
            .get("reasoning")
            .and_then(serde_json::Value::as_str)
            .filter(|text| !text.is_empty())
            .filter(|_| {
                metadata.get("reasoning_field").and_then(serde_json::Value::as_str) == Some("reasoning_content")
            })
            .map(str::to_string);
        let blocks =
            metadata.get("reasoning_blocks").and_then(serde_json::Value::as_array).cloned().unwrap_or_default();
        let call_extras: Vec<(String, serde_json::Value)> = metadata
            .get("tool_call_extra_content")
            .and_then(serde_json::Value::as_object)
            .map(|m| m.iter().map(|(id, v)| (id.clone(), v.clone())).collect())
            .unwrap_or_default();
        (reasoning_content.is_some() || !blocks.is_empty() || !call_extras.is_empty()).then_some(ReasoningReplay {
            reasoning_content,
            blocks,
            call_extras,
        })
    }

    /// The provider data to send back with tool call `id`, if it came with some.
    pub fn call_extra(&self, id: &str) -> Option<&serde_json::Value> {
        self.call_extras.iter().find(|(call, _)| call == id).map(|(_, v)| v)
    }

    /// The reasoning's characters as sent, for estimating its tokens.
    pub(crate) fn chars(&self) -> String {
        let blocks: Vec<String> = self.blocks.iter().map(serde_json::Value::to_string).collect();
        let extras: Vec<String> = self.call_extras.iter().map(|(_, v)| v.to_string()).collect();
        format!("{}{}{}", self.reasoning_content.as_deref().unwrap_or(""), blocks.concat(), extras.concat())
    }
}

/// How a provider counts an image's tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageTokens {
    /// OpenAI's high-detail formula: scaled to fit 2048×2048, then its shortest side to 768; 85 + 170
    /// per 512-pixel tile.
    #[default]
    OpenAi,
    /// Anthropic's: width × height / 750, after scaling the long edge to at most 1568 pixels.
    Anthropic,
}

/// Tokens of an image whose size is unknown (OpenAI's 2×2 tiles).
pub const UNKNOWN_IMAGE_TOKENS: i64 = 765;

impl ImageTokens {
    /// The tokens an image of `width`×`height` pixels costs (unknown size: [`UNKNOWN_IMAGE_TOKENS`]).
    pub fn of(self, width: Option<u32>, height: Option<u32>) -> i64 {
        let (Some(w), Some(h)) = (width.filter(|w| *w > 0), height.filter(|h| *h > 0)) else {
            return UNKNOWN_IMAGE_TOKENS;
        };
        let (mut w, mut h) = (f64::from(w), f64::from(h));
        match self {
            ImageTokens::OpenAi => {
                let fit = (2048.0 / w.max(h)).min(1.0);
                (w, h) = (w * fit, h * fit);
                let short = (768.0 / w.min(h)).min(1.0);
                (w, h) = (w * short, h * short);
                let tiles = (w / 512.0).ceil() * (h / 512.0).ceil();
                85 + 170 * tiles as i64
            }
            ImageTokens::Anthropic => {
                let fit = (1568.0 / w.max(h)).min(1.0);
                ((w * fit) * (h * fit) / 750.0).ceil() as i64
            }
        }
    }
}

/// An image sent with a message: its description, its tokens, and its bytes (filled by
/// `context::load_images` once the window is chosen, so only images actually sent are read).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImagePart {
    /// The archived attachment.
    pub attachment: Attachment,
    /// Its tokens by the provider's formula.
    pub tokens: i64,
    /// The bytes (empty until loaded; never serialised).
    #[serde(skip)]
    pub data: Vec<u8>,
}
