//! The benchmark's streamed reply, asked for with `[[bench:markdown]]` in the last user message: a
//! fixed, generated 12 KB Markdown text (headings, prose with inline code, lists, code blocks, tables)
//! streamed in [`DELTAS`] content deltas, one every [`INTERVAL`] (250 deltas/s, 6 s). The last delta
//! is a paragraph `bench-end:<ms>` with the server's wall clock when it was sent, so a page on the same
//! machine can tell how long after the stream's end the reply was drawn.

use axum::body::Body;
use axum::response::Response;
use serde_json::{json, Value};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio_stream::wrappers::ReceiverStream;

/// The switch, in the last user message.
pub const SWITCH: &str = "[[bench:markdown]]";
/// How many content deltas the reply streams (the last one is the `bench-end:` paragraph).
pub const DELTAS: usize = 1_500;
/// The time between two deltas.
pub const INTERVAL: Duration = Duration::from_millis(4);
/// The size the text reaches (whole sections, so a little more).
const TEXT_BYTES: usize = 12_000;

/// The reply's text (without its `bench-end:` paragraph): the same every time.
pub fn markdown_text() -> String {
    let mut out = String::from("# Benchmark reply\n\nA long answer with code, lists and tables.\n\n");
    for i in 0.. {
        if out.len() >= TEXT_BYTES {
            break;
        }
        out.push_str(&format!(
            "## Step {i}: `configure_{i}`\n\nFirst we call `load_config({i})` and check that **the pool** keeps \
             at most `{}` connections; the `retry` policy backs off after each failure.\n\n",
            i * 4 + 8
        ));
        out.push_str(&format!(
            "- read `src/db/pool_{i}.rs` and note the `max_idle` setting\n- change `timeout_ms` to {}\n\
             - run `cargo test -p store_{i}`\n  and compare the output\n\n",
            250 + i * 50
        ));
        out.push_str(&format!(
            "```rust\nfn step_{i}(pool: &Pool) -> Result<usize> {{\n    let conn = pool.get()?;\n\n    \
             let rows = conn.execute(\"UPDATE jobs SET step = {i}\", [])?;\n    Ok(rows)\n}}\n```\n\n"
        ));
        if i % 3 == 2 {
            out.push_str(&format!(
                "| setting | before | after |\n|---|---|---|\n| `max_idle` | {i} | {} |\n| `timeout_ms` | 100 | {} |\n\n",
                i + 2,
                250 + i * 50
            ));
        }
    }
    out
}

/// `text` in `n` pieces of nearly equal size, cut at character boundaries.
pub fn pieces(text: &str, n: usize) -> Vec<String> {
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for k in 1..=n {
        let mut end = (text.len() * k / n).max(start);
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(text[start..end].to_owned());
        start = end;
    }
    out
}

fn frame(model: &str, delta: Value, finish: Value) -> String {
    let v = json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {v}\n\n")
}

/// The streamed response: the text's deltas at [`INTERVAL`], then `bench-end:<ms>`, `stop` and `[DONE]`.
pub fn response(model: &str) -> Response {
    let model = model.to_owned();
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<String, std::io::Error>>(64);
    tokio::spawn(async move {
        let text = markdown_text();
        let mut ticks = tokio::time::interval(INTERVAL);
        let first = frame(&model, json!({"role": "assistant", "content": ""}), Value::Null);
        let mut chunks = std::iter::once(first)
            .chain(pieces(&text, DELTAS - 1).into_iter().map(|p| frame(&model, json!({ "content": p }), Value::Null)));
        for chunk in chunks.by_ref() {
            ticks.tick().await;
            if tx.send(Ok(chunk)).await.is_err() {
                return; // the client went away
            }
        }
        ticks.tick().await;
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
        let end = [
            frame(&model, json!({ "content": format!("\n\nbench-end:{now}\n") }), Value::Null),
            frame(&model, json!({}), json!("stop")),
            "data: [DONE]\n\n".to_owned(),
        ];
        for chunk in end {
            if tx.send(Ok(chunk)).await.is_err() {
                return;
            }
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from_stream(ReceiverStream::new(rx)))
        .expect("a valid response")
}

#[cfg(test)]
mod tests {
    use super::{markdown_text, pieces, DELTAS};

    #[test]
    fn the_text_is_fixed_twelve_kilobytes_of_markdown() {
        let text = markdown_text();
        assert_eq!(text, markdown_text(), "the same every time");
        assert!((12_000..13_000).contains(&text.len()), "{} bytes", text.len());
        for part in ["```rust", "\n- ", "`load_config(", "| setting |", "## Step"] {
            assert!(text.contains(part), "has {part:?}");
        }
    }

    #[test]
    fn the_deltas_are_the_text_in_order() {
        let text = markdown_text();
        let parts = pieces(&text, DELTAS - 1);
        assert_eq!(parts.len(), DELTAS - 1);
        assert_eq!(parts.concat(), text);
        assert!(parts.iter().all(|p| !p.is_empty() && p.len() < 16), "small deltas");
    }
}
