//! Messages as sanitised Markdown: CommonMark (+ tables, strikethrough, task lists) rendered to HTML
//! in which nothing from the message can become markup of its own. Raw HTML in a message is shown as
//! text, links and images keep only `http(s)`/`mailto` URLs (never `javascript:` or `data:`), and
//! images are shown as links (no request leaves the page because a model wrote a URL).

//!
//! A reply being streamed is rendered block by block ([`blocks`]): its complete blocks render alone to
//! the same HTML as inside the whole text, so only the open last block is rendered again per frame.

use pulldown_cmark::{html, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

pub mod blocks;

/// The Markdown extensions messages are read with (the same for a whole text and for its blocks).
const OPTIONS: Options = Options::ENABLE_TABLES.union(Options::ENABLE_STRIKETHROUGH).union(Options::ENABLE_TASKLISTS);

/// Renders `text` to safe HTML for a message bubble.
pub fn render(text: &str) -> String {
    let events = Parser::new_ext(text, OPTIONS).flat_map(|event| match event {
        // A code block gets a Copy button (our own constant markup; the chat wires its click).
        Event::Start(Tag::CodeBlock(kind)) => {
            vec![Event::Html(CowStr::Borrowed(COPY_BUTTON)), Event::Start(Tag::CodeBlock(kind))]
        }
        Event::End(TagEnd::CodeBlock) => vec![Event::End(TagEnd::CodeBlock), Event::Html(CowStr::Borrowed("</div>\n"))],
        other => vec![safe(other)],
    });
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    html::push_html(&mut out, events);
    out
}

/// Opens the wrapper of a code block, with its Copy button.
const COPY_BUTTON: &str = "<div class=\"code-block\"><button type=\"button\" class=\"copy-code\">Copy</button>";

/// One event of the message made harmless.
fn safe(event: Event<'_>) -> Event<'_> {
    match event {
        // Raw HTML is displayed, never interpreted.
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
            Event::Start(Tag::Link { link_type, dest_url: safe_url(dest_url), title, id })
        }
        // An image becomes a link to it: no automatic request to a URL the model chose.
        Event::Start(Tag::Image { dest_url, title, id, .. }) => {
            Event::Start(Tag::Link { link_type: LinkType::Inline, dest_url: safe_url(dest_url), title, id })
        }
        Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
        other => other,
    }
}

fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    let lower = url.trim().to_ascii_lowercase();
    let allowed = ["http://", "https://", "mailto:", "#"].iter().any(|p| lower.starts_with(p))
        || (!lower.contains(':') && !lower.starts_with("//"));
    if allowed {
        url
    } else {
        CowStr::Borrowed("#")
    }
}

#[cfg(test)]
mod tests;
