use super::{block_starts, Blocks, Step};
use crate::markdown::render;

/// Markdown as models write it, and the constructs where cutting at blank lines would go wrong.
const CORPUS: &[&str] = &[
    "Hello **world**, with `inline code` and a [link](https://example.test).\n",
    "# Title\n\nSome prose.\n\n## Sub\ntext right under it\n\n---\n\nAfter a rule.\n",
    "Setext heading\n===\n\nAnother\n---\nparagraph after it\n",
    "Steps:\n\n1. first\n2. second\n3. third\n\nThen prose.\n",
    // A loose list: its items are separated by blank lines, and it is one list.
    "- alpha\n\n- beta\n\n  continued under beta\n\n- gamma\n\nAfter.\n",
    "- tight\n- list\n\n* another\n* list\n\n1) ordered\n2) again\n",
    "```rust\nfn main() {\n\n    println!(\"blank line inside\");\n}\n```\n\nAfter the fence.\n",
    "~~~\ntilde fence\n\n```\nnot a close\n~~~\n\n````md\n```\nnested\n```\n````\n",
    "- item with code:\n\n  ```sh\n  cargo test\n\n  cargo run\n  ```\n\n- next item\n\ndone\n",
    "| a | b |\n|---|:-:|\n| `x` | y |\n| 1 | 2 |\n\nBelow the table.\n",
    "> quoted\n> more\n\n> another quote\n\n    indented code\n\n    still code\n\nprose\n",
    "<!-- a comment\n\nspanning blank lines -->\n\n<div>\n\n*emphasis*\n\n</div>\n\n<script>alert(1)</script>\n",
    "Text with a ref [link][r] before its definition.\n\n[r]: https://example.test/r\n\nAnd after.\n",
    "- [x] done\n- [ ] todo\n\nText ~~struck~~ and *em* and **strong**.\n\n1. one\n\n   nested para\n\n   - inner\n   - list\n2. two\n",
    "para\n#notaheading\n# a heading\npara\n***\n    lazy\n\n\n\nlast\n",
    "Unclosed fence at the end:\n\n```python\nprint(1)\n\nprint(2)\n",
];

/// A reply like the benchmark's: sections of prose, lists, inline code, and code blocks.
fn long_reply() -> String {
    let mut out = String::new();
    for i in 0..12 {
        out.push_str(&format!(
            "## Step {i}: `configure_{i}`\n\nWe call `run({i})` and check **the result**, then:\n\n"
        ));
        out.push_str(&format!(
            "- read `src/mod_{i}.rs`\n- change `limit` to {i}\n\n  with a note\n- run the tests\n\n"
        ));
        out.push_str(&format!("```rust\nfn step_{i}() -> usize {{\n    let x = {i};\n\n    x * 2\n}}\n```\n\n"));
        out.push_str("| name | value |\n|---|---|\n| a | `1` |\n\n");
    }
    out
}

fn corpus() -> Vec<String> {
    let mut all: Vec<String> = CORPUS.iter().map(|s| s.to_string()).collect();
    all.push(long_reply());
    all.push(CORPUS.concat());
    all
}

/// What the streaming view shows: the complete blocks' HTML (kept) and the open block's (replaced).
#[derive(Default)]
struct Screen {
    kept: String,
    open: String,
    resets: usize,
}

impl Screen {
    fn apply(&mut self, text: &str, step: &Step) {
        if step.reset {
            self.kept.clear();
            self.resets += 1;
        }
        for block in &step.complete {
            self.kept.push_str(&render(&text[block.clone()]));
        }
        self.open = render(&text[step.open.clone()]);
    }

    fn html(&self) -> String {
        format!("{}{}", self.kept, self.open)
    }
}

fn ends(text: &str) -> Vec<usize> {
    (1..=text.len()).filter(|&i| text.is_char_boundary(i)).collect()
}

#[test]
fn rendering_blocks_separately_is_rendering_the_whole() {
    for doc in corpus() {
        let mut blocks = Blocks::new();
        let mut screen = Screen::default();
        screen.apply(&doc, &blocks.advance(&doc));
        assert_eq!(screen.html(), render(&doc), "blocks of {doc:?}");
    }
}

/// Fed every prefix (a delta per character), the view never shows a complete block it later takes
/// back: what it keeps is always the start of the whole text's HTML, and it ends as the whole.
#[test]
fn streamed_prefixes_keep_only_what_the_whole_text_renders() {
    for doc in corpus() {
        let whole = render(&doc);
        let refs = doc.contains("]: ");
        let mut blocks = Blocks::new();
        let mut screen = Screen::default();
        for end in ends(&doc) {
            let text = &doc[..end];
            let step = blocks.advance(text);
            screen.apply(text, &step);
            assert!(whole.starts_with(&screen.kept) || refs, "after {text:?}\nkept {:?}\nwhole {whole:?}", screen.kept);
        }
        assert_eq!(screen.html(), whole, "streamed {doc:?}");
        assert!(screen.resets <= usize::from(refs), "{} resets streaming {doc:?}", screen.resets);
    }
}

/// Deltas of any size (here a few bytes to a few hundred) end the same.
#[test]
fn deltas_of_any_size_end_as_the_whole() {
    let doc = corpus().concat();
    for size in [3, 17, 64, 250, 1000] {
        let mut blocks = Blocks::new();
        let mut screen = Screen::default();
        let mut end = 0;
        while end < doc.len() {
            end = (end + size).min(doc.len());
            while !doc.is_char_boundary(end) {
                end += 1;
            }
            screen.apply(&doc[..end], &blocks.advance(&doc[..end]));
        }
        assert_eq!(screen.html(), render(&doc), "deltas of {size} bytes");
    }
}

/// What a delta costs is bounded by the open block, not by the reply: the long reply's open block is
/// never more than its largest block.
#[test]
fn a_delta_renders_only_the_open_block() {
    let doc = long_reply();
    let mut blocks = Blocks::new();
    let mut largest = 0;
    for end in ends(&doc) {
        let step = blocks.advance(&doc[..end]);
        largest = largest.max(step.open.len());
    }
    assert!(largest < 200, "the open block reached {largest} bytes of a {}-byte reply", doc.len());
}

#[test]
fn a_replaced_text_starts_over() {
    let mut blocks = Blocks::new();
    let first = blocks.advance("# One\n\nfirst paragraph\n\n");
    assert_eq!((first.reset, first.complete.len()), (false, 1));
    let again = blocks.advance("# Two\n\n");
    assert!(again.reset, "a text that does not continue the old one resets: {again:?}");
    assert_eq!(again.open, 0..7);
}

#[test]
fn blocks_start_where_the_parser_says() {
    let check = |text: &str, expect: &[usize]| assert_eq!(block_starts(text).0, expect, "blocks of {text:?}");
    check("", &[]);
    check("a\nb\n\nc", &[0, 5]);
    check("- a\n\n- b\n\nc", &[0, 10]);
    check("```\nx\n\ny\n```\nz", &[0, 13]);
    check("para\n# h\n", &[0, 5]);
    check("para\n#h\n", &[0]);
    assert!(block_starts("[r]: /u\n").1, "a reference definition is noticed");
}
