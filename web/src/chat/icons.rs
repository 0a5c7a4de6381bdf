//! The app's few icons, drawn inline as SVG strokes in the text's colour (no icon font, no image
//! files): the message actions, the composer's Attach, Send and Stop, the assistant's avatar and the
//! file cards' type icons. The shapes are drawn for this app; an icon is decoration (`aria-hidden`):
//! the button or card that holds it carries the accessible name.

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
    /// The icon's strokes, in a 24×24 box.
    fn path(self) -> &'static str {
        const PAGE: &str = "M6 2h8l5 5v15H6zM14 2v5h5";
        match self {
            Icon::Copy => "M9 9h11v11H9zM5 15H4V4h11v1",
            Icon::Copied => "M5 12l5 5L20 7",
            Icon::Edit => "M4 20h4L19 9l-4-4L4 16zM13 7l4 4",
            Icon::Regenerate => "M20 12a8 8 0 1 1-2.34-5.66M20 4v5h-5",
            Icon::Fork => {
                "M4 5a2 2 0 1 0 4 0a2 2 0 1 0-4 0M16 5a2 2 0 1 0 4 0a2 2 0 1 0-4 0M10 19a2 2 0 1 0 4 0a2 2 0 1 0-4 \
                 0M6 7v1a4 4 0 0 0 4 4h4a4 4 0 0 0 4-4V7M12 12v5"
            }
            Icon::Attach => "M20 11l-8.5 8.5a5 5 0 0 1-7-7L13 4a3.5 3.5 0 0 1 5 5l-8.5 8.5a2 2 0 0 1-3-3L14 7",
            Icon::Send => "M12 20V5M5 12l7-7 7 7",
            Icon::Stop => "M7 7h10v10H7z",
            Icon::Assistant => "M12 3l2.2 6.8L21 12l-6.8 2.2L12 21l-2.2-6.8L3 12l6.8-2.2z",
            Icon::File => PAGE,
            Icon::CodeFile => concat!("M6 2h8l5 5v15H6zM14 2v5h5", "M10.5 12l-2.5 3 2.5 3M14.5 12l2.5 3-2.5 3"),
            Icon::TextFile => concat!("M6 2h8l5 5v15H6zM14 2v5h5", "M9 12h7M9 15h7M9 18h4"),
            Icon::ImageFile => concat!("M6 2h8l5 5v15H6zM14 2v5h5", "M8.5 19l3-4 2 2.5 1.5-2 2 3.5z"),
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
    view! {
        <svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false" fill="none" stroke="currentColor"
            stroke-width="2" stroke-linecap="round" stroke-linejoin="round">
            <path d=which.path()></path>
        </svg>
    }
}
