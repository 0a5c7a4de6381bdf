//! What the composer takes from an MCP server, the pure part: a resource read
//! (`ReadResourceResult`) as the one file to attach, and a prompt (`GetPromptResult`) as the text to
//! insert into the message box.

use crate::attachment::from_base64;
use serde_json::Value;

/// A resource's contents as one file: its MIME type and bytes. Text contents become their UTF-8
/// bytes (`text/plain` unless the server names a type), a blob its decoded bytes with its type. A
/// read that returns several contents gives the one whose URI is `uri` (else the first): a file is one
/// resource.
pub fn resource_file(uri: &str, result: &Value) -> Result<(String, Vec<u8>), String> {
    let contents = result["contents"].as_array().map(Vec::as_slice).unwrap_or_default();
    let content = contents
        .iter()
        .find(|c| c["uri"].as_str() == Some(uri))
        .or_else(|| contents.first())
        .ok_or_else(|| format!("the server returned no contents for {uri}"))?;
    let mime = content["mimeType"].as_str().unwrap_or_default();
    if let Some(text) = content["text"].as_str() {
        let mime = if mime.is_empty() { "text/plain" } else { mime };
        return Ok((mime.to_owned(), text.as_bytes().to_vec()));
    }
    let blob = content["blob"].as_str().ok_or_else(|| format!("the contents of {uri} have neither text nor a blob"))?;
    let bytes = from_base64(blob).map_err(|e| format!("the blob of {uri} is not base64: {e}"))?;
    let mime = if mime.is_empty() { "application/octet-stream" } else { mime };
    Ok((mime.to_owned(), bytes))
}

/// A prompt as the composer inserts it: the text of its user messages (a text part, or an embedded
/// resource's text), in order, separated by blank lines; and how many messages or parts were left out
/// (the assistant's messages, and images, audio, resource links and blobs, which are not text the user
/// types).
pub fn prompt_text(result: &Value) -> (String, usize) {
    let mut parts: Vec<&str> = Vec::new();
    let mut left_out = 0;
    for message in result["messages"].as_array().into_iter().flatten() {
        if message["role"] != "user" {
            left_out += 1;
            continue;
        }
        // A message's content is one block (2025 revisions) or a list of them.
        let content = &message["content"];
        let blocks = content.as_array().map_or_else(|| vec![content], |a| a.iter().collect());
        for block in blocks {
            let text = match block["type"].as_str() {
                Some("text") => block["text"].as_str(),
                Some("resource") => block["resource"]["text"].as_str(),
                _ => None,
            };
            match text {
                Some(t) => parts.push(t),
                None => left_out += 1,
            }
        }
    }
    (parts.join("\n\n"), left_out)
}

#[cfg(test)]
mod tests;
