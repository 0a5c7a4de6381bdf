//! Messages as sanitised Markdown: CommonMark (+ tables, strikethrough, task lists) rendered to HTML
//! in which nothing from the message can become markup of its own. Raw HTML in a message is shown as
//! text, links and images keep only `http(s)`/`mailto` URLs (never `javascript:` or `data:`), and
//! images are shown as links (no request leaves the page because a model wrote a URL).

//!
//! A reply being streamed is rendered block by block ([`blocks`]): its complete blocks render alone to
//! the same HTML as inside the whole text, so only the open last block is rendered again per frame.

use pulldown_cmark::{html, CodeBlockKind, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

pub mod blocks;

/// The Markdown extensions messages are read with (the same for a whole text and for its blocks).
const OPTIONS: Options = Options::ENABLE_TABLES.union(Options::ENABLE_STRIKETHROUGH).union(Options::ENABLE_TASKLISTS);

/// Renders `text` to safe HTML for a message bubble.
pub fn render(text: &str) -> String {
    let events = Parser::new_ext(text, OPTIONS).flat_map(|event| match event {
        // A code block gets a head with its language and a Copy button (our own markup; the chat wires
        // the click, and `crate::highlight` colours the code once the block is on screen).
        // Its `<pre>` is ours too (focusable and named: `code_pre`); the code inside is escaped text.
        Event::Start(Tag::CodeBlock(kind)) => {
            let language = language(&kind);
            vec![Event::Html(CowStr::from(code_head(language) + &code_pre(language)))]
        }
        Event::End(TagEnd::CodeBlock) => vec![Event::Html(CowStr::Borrowed("</code></pre>\n</div>\n"))],
        other => vec![safe(other)],
    });
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    html::push_html(&mut out, events);
    out
}

/// The words of a message as a screen reader should hear them: its text and code, without Markdown's
/// marks, a line per block or line break, nothing interpreted as markup.
pub fn plain_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for event in Parser::new_ext(text, OPTIONS) {
        match event {
            Event::Text(t) | Event::Code(t) | Event::Html(t) | Event::InlineHtml(t) => out.push_str(&t),
            Event::SoftBreak => out.push(' '),
            Event::HardBreak
            | Event::Rule
            | Event::End(TagEnd::Paragraph | TagEnd::Heading(_) | TagEnd::Item)
            | Event::End(TagEnd::CodeBlock | TagEnd::TableRow | TagEnd::TableHead)
                if !out.ends_with('\n') =>
            {
                out.push('\n')
            }
            Event::End(TagEnd::TableCell) => out.push(' '),
            _ => {}
        }
    }
    out.trim().to_owned()
}

/// The language a fenced code block names (the first word of its info string), if any.
pub fn language<'a>(kind: &'a CodeBlockKind<'_>) -> Option<&'a str> {
    match kind {
        CodeBlockKind::Fenced(info) => info.split_whitespace().next().filter(|l| !l.is_empty()),
        CodeBlockKind::Indented => None,
    }
}

/// Opens the wrapper of a code block: its head, with the language (escaped: the model wrote it) and Copy.
fn code_head(language: Option<&str>) -> String {
    let mut out = String::from("<div class=\"code-block\"><div class=\"code-head\">");
    if let Some(language) = language {
        out.push_str("<span class=\"code-lang\">");
        escape_into(&mut out, language);
        out.push_str("</span>");
    }
    out.push_str("<button type=\"button\" class=\"copy-code\">Copy</button></div>");
    out
}

/// Opens the `<pre><code>` of a code block: focusable, so that a keyboard can scroll its long lines
/// (axe: scrollable-region-focusable), named for what it holds (a group: a bare `<pre>` may not be
/// named), its code classed by language (as the
/// highlighter reads it).
fn code_pre(language: Option<&str>) -> String {
    let mut out = String::from("\n<pre tabindex=\"0\" role=\"group\" aria-label=\"");
    match language {
        Some(language) => {
            escape_into(&mut out, language);
            out.push_str(" code\"><code class=\"language-");
            escape_into(&mut out, language);
            out.push_str("\">");
        }
        None => out.push_str("Code\"><code>"),
    }
    out
}

/// Appends `text` with the characters that could make markup (or end an attribute) escaped.
fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

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
