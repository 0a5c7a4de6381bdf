use super::render;

fn check(input: &str, expect: &str) {
    assert_eq!(render(input).trim_end(), expect, "rendering {input:?}");
}

#[test]
fn markdown_renders() {
    check("**bold** and `code`", "<p><strong>bold</strong> and <code>code</code></p>");
    check(
        "```rust\nfn main() {}\n```",
        "<div class=\"code-block\"><div class=\"code-head\"><span class=\"code-lang\">rust</span><button type=\"button\" class=\"copy-code\">Copy</button></div>\n<pre tabindex=\"0\" role=\"group\" aria-label=\"rust code\"><code class=\"language-rust\">fn main() {}\n</code></pre>\n</div>",
    );
    // A code block can be scrolled by keyboard and is named for its language (axe:
    // scrollable-region-focusable). A block without a language has no label; an indented block neither.
    check(
        "```\nplain\n```",
        "<div class=\"code-block\"><div class=\"code-head\"><button type=\"button\" class=\"copy-code\">Copy</button></div>\n<pre tabindex=\"0\" role=\"group\" aria-label=\"Code\"><code>plain\n</code></pre>\n</div>",
    );
    check("- [x] done", "<ul>\n<li><input disabled=\"\" type=\"checkbox\" checked=\"\"/>\ndone</li>\n</ul>");
    check("[docs](https://example.test/a?b=1&c=2)", "<p><a href=\"https://example.test/a?b=1&amp;c=2\">docs</a></p>");
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
    // Code is text, whatever it holds; the language label the model wrote is escaped too.
    let html = render("```<img/src=x/onerror=alert(1)>\n<script>alert(1)</script>\n<img src=x onerror=alert(2)>\n```");
    assert!(!html.contains("<script") && !html.contains("<img"), "{html}");
    assert!(html.contains("<span class=\"code-lang\">&lt;img/src=x/onerror=alert(1)&gt;</span>"), "{html}");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
    assert!(html.contains("aria-label=\"&lt;img/src=x/onerror=alert(1)&gt; code\""), "{html}");
    assert!(render("```a\"b\nx\n```").contains("class=\"language-a&quot;b\""), "a quote cannot end the class");
}

#[test]
fn plain_text_is_the_words_without_the_marks() {
    let text = "# Plan\n\nRun **the tests** with `cargo test`:\n\n```sh\ncargo test -q\n```\n\n- one\n- two <b>x</b>\n";
    assert_eq!(super::plain_text(text), "Plan\nRun the tests with cargo test:\ncargo test -q\none\ntwo <b>x</b>");
}
