//! Byte sizes as people read them (attachments, error messages, storage figures).

/// A size in words: "512 B", "1.2 KB", "3.4 MB" (1 KB = 1,024 bytes).
pub fn format_size(bytes: i64) -> String {
    let b = bytes.max(0) as f64;
    if b < 1024.0 {
        format!("{bytes} B")
    } else if b < 1024.0 * 1024.0 {
        format!("{:.1} KB", b / 1024.0)
    } else {
        format!("{:.1} MB", b / (1024.0 * 1024.0))
    }
}
