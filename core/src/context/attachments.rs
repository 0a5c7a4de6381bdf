//! Attachments in a request: text-like files inline as a fenced block headed by the file name, other
//! files as a line naming them, images as [`ImagePart`]s counted by the provider's formula (or, outside
//! the protection window, as a placeholder naming the turn that holds them in the archive).

use super::TurnSource;
use crate::attachment::{format_size, text_of};
use crate::message::{ImagePart, ImageTokens};
use crate::{Attachment, AttachmentKind, Result, Turn};

/// The turn's content as sent: its text, then each text-like file as a fenced block headed by its
/// name, each other file as a line naming it. Images are not in the text (see [`images_of`]).
pub(super) fn expand_content<S: TurnSource + ?Sized>(turn: &Turn, source: &S) -> Result<String> {
    let mut out = turn.content.clone();
    for a in turn.attachments.iter().filter(|a| !a.is_image()) {
        out.push_str("\n\n");
        match (a.kind, source.attachment_bytes(&a.sha256)?) {
            (AttachmentKind::Text, Some(bytes)) => out.push_str(&fenced(a, &text_of(&bytes))),
            _ => out.push_str(&file_line(a)),
        }
    }
    Ok(out)
}

/// "[file: notes.md, 1.2 KB, text/markdown]" and the text in a fence longer than any inside it.
pub fn fenced(a: &Attachment, text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    format!("[file: {}, {}, {}]\n{fence}\n{text}{newline}{fence}", a.display_name(), format_size(a.size), a.mime)
}

/// "[file: report.pdf, 12.0 KB, application/pdf — not sent]".
pub fn file_line(a: &Attachment) -> String {
    format!("[file: {}, {}, {} — not sent]", a.display_name(), format_size(a.size), a.mime)
}

/// "[image: shot.png, turn 12 — in the archive]": what is sent instead of an image outside the
/// protection window.
pub fn image_placeholder(a: &Attachment, turn_number: i64) -> String {
    format!("[image: {}, turn {turn_number} — in the archive]", a.display_name())
}

/// The turn's images as parts to send (bytes not loaded yet).
pub(super) fn images_of(turn: &Turn, tokens: ImageTokens) -> Vec<ImagePart> {
    turn.attachments
        .iter()
        .filter(|a| a.is_image())
        .map(|a| ImagePart { attachment: a.clone(), tokens: tokens.of(a.width, a.height), data: Vec::new() })
        .collect()
}

/// Reads the bytes of every image in `messages` from `source` (the images chosen to be sent, only).
pub fn load_images<S: TurnSource + ?Sized>(messages: &mut [crate::message::ContextMessage], source: &S) -> Result<()> {
    for part in messages.iter_mut().flat_map(|m| m.images.iter_mut()) {
        if part.data.is_empty() {
            part.data = source.attachment_bytes(&part.attachment.sha256)?.unwrap_or_default();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
