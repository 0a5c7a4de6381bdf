//! The app's few icons: the message actions, the composer's Attach, Send and Stop, the assistant's
//! mark and the file cards' type icons. Each is an element whose shape is a CSS mask (app.css,
//! `.icon-*`: strokes drawn for this app as inline SVG data) painted in the text's colour, so it
//! follows the theme and costs the app no code per shape. An icon is decoration (`aria-hidden`): the
//! button or card that holds it carries the accessible name.

use leptos::prelude::*;

/// Which icon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Icon {
    Copy,
    Copied,
    Edit,
    Regenerate,
    Fork,
    Attach,
    Send,
    Stop,
    Assistant,
    File,
    CodeFile,
    TextFile,
    ImageFile,
}

impl Icon {
    /// The element's classes: `icon` and the shape's own (`icon-copy`, …, one rule each in app.css).
    pub fn class(self) -> &'static str {
        match self {
            Icon::Copy => "icon icon-copy",
            Icon::Copied => "icon icon-copied",
            Icon::Edit => "icon icon-edit",
            Icon::Regenerate => "icon icon-regenerate",
            Icon::Fork => "icon icon-fork",
            Icon::Attach => "icon icon-attach",
            Icon::Send => "icon icon-send",
            Icon::Stop => "icon icon-stop",
            Icon::Assistant => "icon icon-assistant",
            Icon::File => "icon icon-file",
            Icon::CodeFile => "icon icon-code-file",
            Icon::TextFile => "icon icon-text-file",
            Icon::ImageFile => "icon icon-image-file",
        }
    }

    /// The type icon of an attached file, by its kind and name.
    pub fn for_file(a: &cowork_core::attachment::Attachment) -> Icon {
        const CODE: [&str; 18] = [
            "py", "rs", "js", "ts", "jsx", "tsx", "go", "java", "c", "h", "cpp", "cs", "rb", "php", "sh", "sql", "kt",
            "swift",
        ];
        let ext = a.name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
        if a.is_image() || a.mime.starts_with("image/") {
            Icon::ImageFile
        } else if CODE.contains(&ext.as_str()) {
            Icon::CodeFile
        } else if a.is_text() {
            Icon::TextFile
        } else {
            Icon::File
        }
    }
}

/// An icon, sized by the font (1.25em unless its place says otherwise), hidden from assistive
/// technology.
pub fn icon(which: Icon) -> impl IntoView {
    view! { <span class=which.class() aria-hidden="true"></span> }
}
