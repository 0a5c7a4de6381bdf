//! The demo model describes what a user message carried: images (their count, pixel sizes and byte
//! sizes, read from the `image_url` data URLs or Anthropic's base64 `image` sources) and files (the
//! names in the "[file: name, size, type]" headers the app writes before each inlined file, and the
//! "— not sent" lines naming the others).

use base64::Engine;
use serde_json::Value;

/// "I received 1 image (64×48, 1.2 KB) and 1 file: script.py (40 B)." for a message that carried
/// attachments; `None` for one that carried none.
pub fn describe(message: &Value) -> Option<String> {
    let mut images = Vec::new();
    let mut text = String::new();
    match &message["content"] {
        Value::String(s) => text.push_str(s),
        Value::Array(parts) => {
            for part in parts {
                let data = match part["type"].as_str() {
                    Some("image_url") => {
                        part["image_url"]["url"].as_str().and_then(|u| u.split_once(";base64,")).map(|(_, d)| d)
                    }
                    Some("image") => part["source"]["data"].as_str(),
                    _ => {
                        if let Some(t) = part["text"].as_str() {
                            text.push_str(t);
                            text.push('\n');
                        }
                        None
                    }
                };
                if let Some(data) = data {
                    let bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap_or_default();
                    let size = cowork_core::attachment::format_size(bytes.len() as i64);
                    images.push(match cowork_core::attachment::image_size(&bytes) {
                        Some((_, w, h)) => format!("{w}×{h}, {size}"),
                        None => format!("unreadable, {size}"),
                    });
                }
            }
        }
        _ => {}
    }
    let files: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("[file: ")?.strip_suffix(']'))
        .map(|header| {
            let mut fields = header.splitn(3, ", ");
            let name = fields.next().unwrap_or_default();
            let size = fields.next().unwrap_or_default();
            let not_sent = if header.ends_with("— not sent") { ", not sent" } else { "" };
            format!("{name} ({size}{not_sent})")
        })
        .collect();
    if images.is_empty() && files.is_empty() {
        return None;
    }
    let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    let mut parts = Vec::new();
    if !images.is_empty() {
        parts.push(format!("{} ({})", plural(images.len(), "image"), images.join("; ")));
    }
    if !files.is_empty() {
        parts.push(format!("{}: {}", plural(files.len(), "file"), files.join(", ")));
    }
    Some(format!("I received {}.", parts.join(" and ")))
}

/// The user's own words: the text before the first inlined file.
pub fn words_before_files(text: &str) -> &str {
    text.split("\n\n[file: ").next().unwrap_or(text).trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn png_url(w: u32, h: u32) -> String {
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        b.extend_from_slice(&w.to_be_bytes());
        b.extend_from_slice(&h.to_be_bytes());
        format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(b))
    }

    #[test]
    fn describes_images_and_files_in_either_format() {
        let text = "look\n\n[file: script.py, 40 B, text/x-python]\n```\nprint(1)\n```\n\n[file: a.pdf, 1.0 KB, application/pdf — not sent]";
        let openai = json!({"role": "user", "content": [
            {"type": "text", "text": text},
            {"type": "image_url", "image_url": {"url": png_url(64, 48)}}
        ]});
        assert_eq!(
            describe(&openai).unwrap(),
            "I received 1 image (64×48, 24 B) and 2 files: script.py (40 B), a.pdf (1.0 KB, not sent)."
        );
        let data = png_url(3, 2).split_once(",").unwrap().1.to_owned();
        let anthropic = json!({"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}},
            {"type": "text", "text": "two"}
        ]});
        assert_eq!(describe(&anthropic).unwrap(), "I received 2 images (3×2, 24 B; 3×2, 24 B).");
        assert_eq!(describe(&json!({"role": "user", "content": "plain"})), None);
        assert_eq!(words_before_files(text), "look");
    }
}
