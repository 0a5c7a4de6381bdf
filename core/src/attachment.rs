//! Attachments: the images and files a user turn carries. Plain data and pure functions: what a file
//! is (an image whose header gives its pixel size, a text-like file, or any other file), its SHA-256,
//! the name to show, the size limit, and sizes in words. The bytes are stored once per content in the
//! archive (`store`), linked to the turns that carry them.
//!
//! Kinds: PNG, JPEG, GIF and WebP whose header can be read are images (the MIME type is taken from
//! the header); SVG is never an image here (it is markup: a file); a file is text-like when its MIME
//! type or its extension says so ([`is_text_like`]) and its bytes are UTF-8; anything else is a file.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
pub use crate::size::format_size;

/// The default size limit for one attachment, in bytes (20 MB), when the model settings set none.
pub const DEFAULT_MAX_ATTACHMENT_BYTES: u64 = 20 * 1024 * 1024;
/// The longest name [`display_name`] gives, in characters.
pub const DISPLAY_NAME_MAX_CHARS: usize = 120;
/// How much of a text-like attachment is indexed for full-text search, in bytes (the rest is kept
/// whole in the archive, just not found by search).
pub const TEXT_INDEX_MAX_BYTES: usize = 2 * 1024 * 1024;

/// What an attachment is, which decides how it is shown and sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AttachmentKind {
    /// A PNG, JPEG, GIF or WebP image whose header gives its pixel size: sent as an image.
    Image,
    /// Source code, Markdown, JSON, CSV, logs, plain text…: indexed for search and sent inline.
    Text,
    /// Anything else (PDFs, archives, SVG, a corrupt image): kept and named, not sent.
    File,
}

impl AttachmentKind {
    /// The lower-case name stored in the archive ("image", "text", "file").
    pub fn as_str(self) -> &'static str {
        match self {
            AttachmentKind::Image => "image",
            AttachmentKind::Text => "text",
            AttachmentKind::File => "file",
        }
    }

    /// The kind named by [`AttachmentKind::as_str`]'s text; `None` for anything else.
    pub fn parse(s: &str) -> Option<AttachmentKind> {
        [AttachmentKind::Image, AttachmentKind::Text, AttachmentKind::File].into_iter().find(|k| k.as_str() == s)
    }
}

/// An attachment as archived with its turn: everything but the bytes (read them by `sha256`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// SHA-256 of the bytes, lower-case hex: the blob's key in the archive.
    pub sha256: String,
    /// The file's name, verbatim as given (show [`Attachment::display_name`]).
    pub name: String,
    /// Its MIME type (for an image, the one its header shows).
    pub mime: String,
    /// Its size in bytes.
    pub size: i64,
    /// What it is.
    pub kind: AttachmentKind,
    /// An image's width in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// An image's height in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
}

impl Attachment {
    /// The name to show and send: see [`display_name`].
    pub fn display_name(&self) -> String {
        display_name(&self.name)
    }

    /// Whether it is sent to models as an image.
    pub fn is_image(&self) -> bool {
        self.kind == AttachmentKind::Image
    }

    /// Whether it is text-like (indexed for search, sent inline).
    pub fn is_text(&self) -> bool {
        self.kind == AttachmentKind::Text
    }

    /// "script.py, 1.2 KB, text/x-python" (an image adds its pixel size: "shot.png, 640×480, 12 KB, image/png").
    pub fn describe(&self) -> String {
        let pixels = match (self.width, self.height) {
            (Some(w), Some(h)) => format!("{w}×{h}, "),
            _ => String::new(),
        };
        format!("{}, {pixels}{}, {}", self.display_name(), format_size(self.size), self.mime)
    }
}

/// An attachment to store with a new turn: name and type as the user's file had them, and its bytes.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewAttachment {
    /// The file's name (a `File`'s `name`; a pasted image has whatever the browser gives it).
    pub name: String,
    /// Its MIME type as the browser reported it (a `Blob`'s `type`; may be empty).
    #[serde(default)]
    pub mime: String,
    /// The content.
    pub bytes: Vec<u8>,
    /// The content's SHA-256 in lower-case hex, when the caller has it already (the storage worker
    /// hashes with the browser's WebCrypto, several times faster than hashing in wasm): see
    /// [`NewAttachment::with_sha256`]. `None`: [`NewAttachment::examine`] hashes the bytes.
    #[serde(skip)]
    pub sha256: Option<String>,
}

impl std::fmt::Debug for NewAttachment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NewAttachment({:?}, {:?}, {} bytes)", self.name, self.mime, self.bytes.len())
    }
}

impl NewAttachment {
    /// An attachment of `bytes` named `name` with MIME type `mime`.
    pub fn new(name: impl Into<String>, mime: impl Into<String>, bytes: impl Into<Vec<u8>>) -> NewAttachment {
        NewAttachment { name: name.into(), mime: mime.into(), bytes: bytes.into(), sha256: None }
    }

    /// The same attachment with its content's SHA-256 already known (lower-case hex), which
    /// [`NewAttachment::examine`] then uses instead of hashing the bytes again. The caller vouches for
    /// it: the archive addresses the content by it. A value that is not 64 lower-case hex digits is
    /// ignored (the bytes are hashed).
    pub fn with_sha256(mut self, sha256: String) -> NewAttachment {
        self.sha256 = is_sha256_hex(&sha256).then_some(sha256);
        self
    }

    /// Its archived description: hash, kind, MIME type and pixel size read from the bytes.
    pub fn examine(&self) -> Attachment {
        let (kind, mime, size) = classify(&self.name, &self.mime, &self.bytes);
        Attachment {
            sha256: self.sha256.clone().unwrap_or_else(|| sha256_hex(&self.bytes)),
            name: self.name.clone(),
            mime,
            size: self.bytes.len() as i64,
            kind,
            width: size.map(|s| s.0),
            height: size.map(|s| s.1),
        }
    }

    /// Refuses an attachment larger than `limit` bytes, naming the file and the limit.
    pub fn check_size(&self, limit: u64) -> Result<()> {
        let size = self.bytes.len() as u64;
        if size > limit {
            return Err(Error::AttachmentTooLarge { name: display_name(&self.name), size, limit });
        }
        Ok(())
    }
}

/// SHA-256 of `bytes` as lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Whether `s` looks like a SHA-256 in lower-case hex (64 characters).
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// What `bytes` named `name` with declared type `mime` are: the kind, the MIME type to keep, and an
/// image's pixel size. The header decides whether it is an image (a corrupt PNG is a file).
pub fn classify(name: &str, mime: &str, bytes: &[u8]) -> (AttachmentKind, String, Option<(u32, u32)>) {
    let declared = mime.trim().to_ascii_lowercase();
    if let Some((format_mime, w, h)) = image_size(bytes) {
        return (AttachmentKind::Image, format_mime.to_owned(), Some((w, h)));
    }
    let text = is_text_like(name, &declared) && std::str::from_utf8(bytes).is_ok() && !bytes.contains(&0);
    let mime = if !declared.is_empty() {
        declared
    } else if text {
        "text/plain".to_owned()
    } else {
        "application/octet-stream".to_owned()
    };
    (if text { AttachmentKind::Text } else { AttachmentKind::File }, mime, None)
}

/// Extensions of text-like files (source code, markup, data, configuration, logs).
const TEXT_EXTENSIONS: &[&str] = &[
    "txt",
    "md",
    "markdown",
    "rst",
    "adoc",
    "org",
    "tex",
    "csv",
    "tsv",
    "json",
    "jsonl",
    "ndjson",
    "xml",
    "html",
    "htm",
    "css",
    "scss",
    "less",
    "yaml",
    "yml",
    "toml",
    "ini",
    "cfg",
    "conf",
    "env",
    "properties",
    "log",
    "sql",
    "graphql",
    "proto",
    "rs",
    "py",
    "pyi",
    "js",
    "mjs",
    "cjs",
    "ts",
    "tsx",
    "jsx",
    "go",
    "java",
    "kt",
    "kts",
    "scala",
    "c",
    "h",
    "cc",
    "cpp",
    "cxx",
    "hpp",
    "hh",
    "cs",
    "fs",
    "swift",
    "m",
    "mm",
    "rb",
    "php",
    "pl",
    "pm",
    "lua",
    "r",
    "jl",
    "dart",
    "ex",
    "exs",
    "erl",
    "hs",
    "ml",
    "mli",
    "clj",
    "elm",
    "vue",
    "svelte",
    "sh",
    "bash",
    "zsh",
    "fish",
    "ps1",
    "bat",
    "cmd",
    "make",
    "mk",
    "cmake",
    "gradle",
    "dockerfile",
    "tf",
    "nix",
    "diff",
    "patch",
    "gitignore",
    "lock",
    "srt",
    "vtt",
];

/// Whether a file with this name and (lower-case) MIME type is text-like: a `text/*` type other than
/// `text/rtf`, a JSON, XML, YAML, TOML, JavaScript, shell or SQL type, or a known extension. SVG never.
pub fn is_text_like(name: &str, mime: &str) -> bool {
    let lower_name = name.to_ascii_lowercase();
    if mime.contains("svg") || lower_name.ends_with(".svg") {
        return false;
    }
    let by_mime = (mime.starts_with("text/") && mime != "text/rtf")
        || ["json", "xml", "yaml", "toml", "javascript", "ecmascript", "x-sh", "sql", "x-python", "csv"]
            .iter()
            .any(|t| mime.starts_with("application/") && mime.contains(t));
    let base = lower_name.rsplit(['/', '\\']).next().unwrap_or_default();
    let ext = base.rsplit_once('.').map(|(_, e)| e).unwrap_or(base);
    by_mime || TEXT_EXTENSIONS.contains(&ext) || ["makefile", "dockerfile", "readme", "license"].contains(&base)
}

/// A PNG's, JPEG's, GIF's or WebP's MIME type and pixel size, read from its header; `None` for
/// anything else (SVG included) and for a header that cannot be read.
pub fn image_size(b: &[u8]) -> Option<(&'static str, u32, u32)> {
    let be32 = |i: usize| Some(u32::from_be_bytes(b.get(i..i + 4)?.try_into().ok()?));
    let le16 = |i: usize| Some(u32::from(u16::from_le_bytes(b.get(i..i + 2)?.try_into().ok()?)));
    let le24 = |i: usize| Some(u32::from_le_bytes([*b.get(i)?, *b.get(i + 1)?, *b.get(i + 2)?, 0]));
    let found = if b.starts_with(b"\x89PNG\r\n\x1a\n") && b.get(12..16) == Some(b"IHDR") {
        ("image/png", be32(16)?, be32(20)?)
    } else if b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a") {
        ("image/gif", le16(6)?, le16(8)?)
    } else if b.starts_with(b"RIFF") && b.get(8..12) == Some(b"WEBP") {
        match b.get(12..16)? {
            b"VP8 " if b.get(23..26) == Some(&[0x9d, 0x01, 0x2a]) => {
                ("image/webp", le16(26)? & 0x3fff, le16(28)? & 0x3fff)
            }
            b"VP8L" if b.get(20) == Some(&0x2f) => {
                let bits = u32::from_le_bytes(b.get(21..25)?.try_into().ok()?);
                ("image/webp", 1 + (bits & 0x3fff), 1 + ((bits >> 14) & 0x3fff))
            }
            b"VP8X" => ("image/webp", 1 + le24(24)?, 1 + le24(27)?),
            _ => return None,
        }
    } else if b.starts_with(&[0xff, 0xd8]) {
        jpeg_size(b)?
    } else {
        return None;
    };
    (found.1 > 0 && found.2 > 0).then_some(found)
}

/// A JPEG's size from its first start-of-frame marker.
fn jpeg_size(b: &[u8]) -> Option<(&'static str, u32, u32)> {
    let mut i = 2;
    loop {
        while *b.get(i)? != 0xff {
            i += 1;
        }
        while *b.get(i)? == 0xff {
            i += 1;
        }
        let marker = *b.get(i)?;
        i += 1;
        if marker == 0x01 || (0xd0..=0xd9).contains(&marker) {
            continue; // no length
        }
        let len = usize::from(u16::from_be_bytes(b.get(i..i + 2)?.try_into().ok()?));
        if (0xc0..=0xcf).contains(&marker) && ![0xc4, 0xc8, 0xcc].contains(&marker) {
            let h = u16::from_be_bytes(b.get(i + 3..i + 5)?.try_into().ok()?);
            let w = u16::from_be_bytes(b.get(i + 5..i + 7)?.try_into().ok()?);
            return Some(("image/jpeg", u32::from(w), u32::from(h)));
        }
        if len < 2 {
            return None;
        }
        i += len;
    }
}

/// The name to show for a file named `name`: what follows the last `/` or `\`, without control or
/// text-direction characters, trimmed, at most [`DISPLAY_NAME_MAX_CHARS`] characters (a long name
/// keeps its start and its extension around "…"); "attachment" when nothing is left. The archive
/// keeps the name verbatim.
pub fn display_name(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).find(|part| !part.trim().is_empty()).unwrap_or_default();
    let clean: String = base
        .chars()
        .filter(|c| {
            !c.is_control() && !matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect();
    let clean = clean.trim();
    if clean.is_empty() {
        return "attachment".to_owned();
    }
    let count = clean.chars().count();
    if count <= DISPLAY_NAME_MAX_CHARS {
        return clean.to_owned();
    }
    let ext = clean.rsplit_once('.').map(|(_, e)| e).filter(|e| !e.is_empty() && e.chars().count() <= 10);
    let tail = ext.map(|e| format!(".{e}")).unwrap_or_default();
    let keep = DISPLAY_NAME_MAX_CHARS - 1 - tail.chars().count();
    format!("{}…{tail}", clean.chars().take(keep).collect::<String>())
}

/// Standard base64 with padding (data URLs, Anthropic's image sources, the JSONL export, the worker's
/// `ReadAttachment` reply).
pub fn to_base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The bytes of standard base64 text; an error says what is wrong with it.
pub fn from_base64(text: &str) -> std::result::Result<Vec<u8>, String> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(text.as_bytes()).map_err(|e| e.to_string())
}

/// A text-like attachment's text (UTF-8, a leading byte-order mark dropped; invalid bytes replaced).
pub fn text_of(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
mod tests;
