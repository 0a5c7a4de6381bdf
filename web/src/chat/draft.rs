//! The composer's files before they are sent, as state: each [`PendingFile`] (the browser's file, its
//! thumbnail's blob URL), why one cannot be attached, and dropping them with their blob URLs. Shown by
//! `attachments.rs`; kept in `ChatState::attachments`.

use cowork_core::attachment::{display_name, format_size};
use send_wrapper::SendWrapper;

/// A file the user attached in the composer, not sent yet.
#[derive(Clone)]
pub struct PendingFile {
    /// This tab's id for it (chips are keyed by it).
    pub id: u64,
    /// Its name as the browser gave it (shown through `display_name`).
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// The browser's file (read when the message is sent).
    pub file: SendWrapper<web_sys::Blob>,
    /// A blob URL of the file itself, for an image's thumbnail (revoked when it is removed or sent).
    pub preview: Option<String>,
    /// Sent with the message in flight: removed once the worker says the message is saved.
    pub sending: bool,
}

impl PendingFile {
    /// The name to show.
    pub fn shown_name(&self) -> String {
        display_name(&self.name)
    }
}

/// Whether a file of MIME type `mime` gets a thumbnail in the composer (PNG, JPEG, GIF, WebP; never
/// SVG, which is markup).
pub fn previewable(mime: &str) -> bool {
    matches!(mime.trim().to_ascii_lowercase().as_str(), "image/png" | "image/jpeg" | "image/gif" | "image/webp")
}

/// Why a file named `name` of `size` bytes cannot be attached under `limit` bytes per file, if it
/// cannot.
pub fn refusal(name: &str, size: u64, limit: u64) -> Option<String> {
    (size > limit).then(|| {
        format!(
            "{} is {} and cannot be attached: the limit is {} per file (Settings → Largest attachment).",
            display_name(name),
            format_size(size as i64),
            format_size(limit as i64)
        )
    })
}

/// Revokes the blob URLs of the pending files `keep` rejects and drops those files.
pub fn drop_pending(list: &mut Vec<PendingFile>, keep: impl Fn(&PendingFile) -> bool) {
    list.retain(|p| {
        let kept = keep(p);
        if !kept {
            if let Some(url) = &p.preview {
                revoke(url);
            }
        }
        kept
    });
}

/// Lets go of a blob URL made for a thumbnail or an image.
pub(super) fn revoke(url: &str) {
    #[cfg(target_arch = "wasm32")]
    let _ = web_sys::Url::revoke_object_url(url);
    #[cfg(not(target_arch = "wasm32"))]
    let _ = url;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_over_the_limit_are_refused_with_the_limit_named() {
        let limit = 20 * 1024 * 1024;
        let why = refusal("dir/big.bin", 21 * 1024 * 1024, limit).unwrap();
        assert_eq!(
            why,
            "big.bin is 21.0 MB and cannot be attached: the limit is 20.0 MB per file (Settings → Largest attachment)."
        );
        assert_eq!(refusal("ok.txt", limit, limit), None);
    }

    #[test]
    fn only_raster_images_get_a_thumbnail() {
        assert!(previewable("image/png") && previewable("IMAGE/JPEG") && previewable("image/webp"));
        assert!(!previewable("image/svg+xml") && !previewable("") && !previewable("text/x-python"));
    }
}
