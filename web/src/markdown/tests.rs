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
}
