//! Messages as sanitised Markdown: CommonMark (+ tables, strikethrough, task lists) rendered to HTML
//! in which nothing from the message can become markup of its own. Raw HTML in a message is shown as
//! text, links and images keep only `http(s)`/`mailto` URLs (never `javascript:` or `data:`), and
//! images are shown as links (no request leaves the page because a model wrote a URL).

use pulldown_cmark::{html, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

/// Renders `text` to safe HTML for a message bubble.
pub fn render(text: &str) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(text, options).flat_map(|event| match event {
        // A code block gets a Copy button (our own constant markup; the chat wires its click).
        Event::Start(Tag::CodeBlock(kind)) => {
            vec![Event::Html(CowStr::Borrowed(COPY_BUTTON)), Event::Start(Tag::CodeBlock(kind))]
        }
        Event::End(TagEnd::CodeBlock) => vec![Event::End(TagEnd::CodeBlock), Event::Html(CowStr::Borrowed("</div>"))],
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
mod tests {
    use super::render;

    fn check(input: &str, expect: &str) {
        assert_eq!(render(input).trim_end(), expect, "rendering {input:?}");
    }

    #[test]
    fn markdown_renders() {
        check("**bold** and `code`", "<p><strong>bold</strong> and <code>code</code></p>");
        check(
            "```rust\nfn main() {}\n```",
            "<div class=\"code-block\"><button type=\"button\" class=\"copy-code\">Copy</button>\n<pre><code class=\"language-rust\">fn main() {}\n</code></pre>\n</div>",
        );
        check("- [x] done", "<ul>\n<li><input disabled=\"\" type=\"checkbox\" checked=\"\"/>\ndone</li>\n</ul>");
        check(
            "[docs](https://example.test/a?b=1&c=2)",
            "<p><a href=\"https://example.test/a?b=1&amp;c=2\">docs</a></p>",
        );
    }

    #[test]
    fn nothing_in_a_message_becomes_markup() {
        check("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;");
        check("hi <img src=x onerror=alert(1)>", "<p>hi &lt;img src=x onerror=alert(1)&gt;</p>");
        check("[x](javascript:alert(1))", "<p><a href=\"#\">x</a></p>");
        check("[x](JaVaScRiPt:alert(1))", "<p><a href=\"#\">x</a></p>");
        check("[x](data:text/html,<b>hi</b>)", "<p><a href=\"#\">x</a></p>");
        check("![pic](https://tracker.test/p.png)", "<p><a href=\"https://tracker.test/p.png\">pic</a></p>");
        check("<https://ok.test>", "<p><a href=\"https://ok.test\">https://ok.test</a></p>");
        check("`<b>` in code", "<p><code>&lt;b&gt;</code> in code</p>");
        check("\"quotes\" & 'apostrophes'", "<p>\"quotes\" &amp; 'apostrophes'</p>");
    }
}
