//! An incremental Server-Sent-Events parser: bytes in, events out, no I/O.
//!
//! Follows the WHATWG "event stream interpretation" rules, fed one network chunk at a time:
//! - chunks may split anywhere: inside a line, inside a multi-byte UTF-8 character, between the CR and LF
//!   of a CRLF (bytes are buffered per line and decoded only when the line is complete);
//! - lines end in LF, CRLF or a lone CR; a UTF-8 BOM at the very start of the stream is dropped;
//! - `:` lines are comments (keepalives) and are skipped; `field: value` drops one space after the colon;
//!   a line without a colon is a field with an empty value;
//! - `data` lines accumulate, joined with `\n`; a blank line dispatches the event;
//! - fields the standard does not define are kept, in order, in [`SseEvent::fields`] when they have a
//!   plain name (`[A-Za-z0-9_-]+`) and a value (browsers ignore them, but llama.cpp's server reports a
//!   failure mid-stream as an `error: {…}` line with no `data`);
//!   an event with neither a `data` line nor such a field is not dispatched (as in browsers);
//! - `id` sets the last event id, which persists across events (as `EventSource.lastEventId` does); an id
//!   containing NUL is ignored; `retry` with only digits sets [`SseParser::retry_ms`].
//! - Invalid UTF-8 becomes U+FFFD; nothing here panics on any input.
//!
//! **Bounded memory**: no line and no event's data grows beyond the parser's cap ([`MAX_LINE_BYTES`],
//! 16 MiB, by default). A longer line is *truncated* at the cap (the rest of it, up to its line end, is
//! read and thrown away), and so is an event's data; [`SseParser::truncations`] counts both. A truncated
//! JSON payload then fails to parse in the provider decoder, which reports it as a malformed stream with
//! the raw text, so nothing is silently accepted.
//!
//! **End of stream** ([`SseParser::finish`]): a final line without a line ending may be a line cut in
//! half, so it is dropped; an event whose lines all arrived complete but that lacks its closing blank line
//! is still dispatched (its data is whole). So a stream cut mid-line is seen as *cut*, never as garbage.

/// The default cap on one line and on one event's data, in bytes.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; `None` when absent or empty (the SSE default type, "message").
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last event id seen on the stream (it persists across events); `None` when never set or reset.
    pub id: Option<String>,
    /// Fields other than `event`, `data`, `id` and `retry`, as (name, value) in order, e.g. llama.cpp's
    /// `error`. Their values together are capped like `data`.
    pub fields: Vec<(String, String)>,
}

/// The parser's state between chunks. See the module docs for the rules.
#[derive(Debug, Clone)]
pub struct SseParser {
    /// Bytes of the current, unfinished line (never more than `max_bytes`).
    line: Vec<u8>,
    /// The current line hit the cap: the rest of it is discarded.
    line_truncated: bool,
    /// The previous chunk ended in CR: an LF at the start of the next one belongs to it.
    after_cr: bool,
    /// No line has been completed yet (the BOM check applies to the first one).
    at_start: bool,
    event_type: String,
    data: String,
    /// Some `data` line was seen for the event being built (even an empty one).
    has_data: bool,
    data_truncated: bool,
    /// Unknown fields of the event being built, and their values' total length.
    fields: Vec<(String, String)>,
    fields_len: usize,
    last_id: String,
    retry_ms: Option<u64>,
    max_bytes: usize,
    truncations: usize,
}

impl Default for SseParser {
    fn default() -> SseParser {
        SseParser::new()
    }
}

impl SseParser {
    /// A parser with the default cap ([`MAX_LINE_BYTES`]).
    pub fn new() -> SseParser {
        SseParser::with_max_bytes(MAX_LINE_BYTES)
    }

    /// A parser whose lines and event data are capped at `max_bytes` (at least 1).
    pub fn with_max_bytes(max_bytes: usize) -> SseParser {
        SseParser {
            line: Vec::new(),
            line_truncated: false,
            after_cr: false,
            at_start: true,
            event_type: String::new(),
            data: String::new(),
            has_data: false,
            data_truncated: false,
            fields: Vec::new(),
            fields_len: 0,
            last_id: String::new(),
            retry_ms: None,
            max_bytes: max_bytes.max(1),
            truncations: 0,
        }
    }

    /// Feeds the next chunk of the body; returns the events it completed, in order.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut rest = chunk;
        while !rest.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if rest[0] == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(i) => {
                    self.append(&rest[..i]);
                    self.after_cr = rest[i] == b'\r';
                    rest = &rest[i + 1..];
                    self.end_line(&mut out);
                }
                None => {
                    self.append(rest);
                    rest = &[];
                }
            }
        }
        out
    }

    /// The body ended: returns an event that was complete but for its closing blank line (see the module
    /// docs), and resets the parser for a new stream (the last event id and retry are kept).
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        // A final line without its line ending may be cut: drop it.
        self.line.clear();
        self.line_truncated = false;
        self.dispatch(&mut out);
        self.after_cr = false;
        self.at_start = true;
        out
    }

    /// The reconnection time the server asked for with `retry:`, if any.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// How many lines or event data were cut at the cap so far.
    pub fn truncations(&self) -> usize {
        self.truncations
    }

    fn append(&mut self, bytes: &[u8]) {
        if self.line_truncated {
            return;
        }
        let room = self.max_bytes - self.line.len();
        if bytes.len() > room {
            self.line.extend_from_slice(&bytes[..room]);
            self.line_truncated = true;
            self.truncations += 1;
        } else {
            self.line.extend_from_slice(bytes);
        }
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let bytes = std::mem::take(&mut self.line);
        self.line_truncated = false;
        let mut line: &[u8] = &bytes;
        if std::mem::replace(&mut self.at_start, false) {
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match field {
            b"event" => self.event_type = String::from_utf8_lossy(value).into_owned(),
            b"data" => self.add_data(&String::from_utf8_lossy(value)),
            b"id" if !value.contains(&0) => self.last_id = String::from_utf8_lossy(value).into_owned(),
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry_ms = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            b"retry" | b"id" => {}
            _ => self.add_field(field, value),
        }
    }

    /// Keeps an unknown field that looks like one: a name of ASCII letters, digits, `_` or `-`, and a
    /// value (a stray line of text, or a BOM too many, is no field).
    fn add_field(&mut self, field: &[u8], value: &[u8]) {
        let named = !field.is_empty() && field.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !named || value.is_empty() {
            return;
        }
        if self.fields_len + field.len() + value.len() > self.max_bytes {
            self.truncations += 1;
            return;
        }
        self.fields_len += field.len() + value.len();
        self.fields.push((String::from_utf8_lossy(field).into_owned(), String::from_utf8_lossy(value).into_owned()));
    }

    fn add_data(&mut self, value: &str) {
        if self.has_data && !self.data_truncated {
            self.push_capped("\n");
        }
        self.has_data = true;
        if !self.data_truncated {
            self.push_capped(value);
        }
    }

    fn push_capped(&mut self, s: &str) {
        let room = self.max_bytes.saturating_sub(self.data.len());
        if s.len() <= room {
            self.data.push_str(s);
        } else {
            let mut cut = room;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            self.data.push_str(&s[..cut]);
            self.data_truncated = true;
            self.truncations += 1;
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event_type = std::mem::take(&mut self.event_type);
        let data = std::mem::take(&mut self.data);
        let has_data = std::mem::replace(&mut self.has_data, false);
        let fields = std::mem::take(&mut self.fields);
        self.fields_len = 0;
        self.data_truncated = false;
        if !has_data && fields.is_empty() {
            return;
        }
        out.push(SseEvent {
            event: (!event_type.is_empty()).then_some(event_type),
            data,
            id: (!self.last_id.is_empty()).then(|| self.last_id.clone()),
            fields,
        });
    }
}

/// Parses a whole body at once (for tests and recorded streams).
pub fn parse_all(body: &[u8]) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut events = parser.push(body);
    events.extend(parser.finish());
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};
    use proptest::prelude::*;

    /// Renders events one per line: `[type] id=… data=…` (data escaped so line breaks show).
    fn render(events: &[SseEvent]) -> String {
        events
            .iter()
            .map(|e| {
                let mut line = format!("[{}]", e.event.as_deref().unwrap_or("message"));
                if let Some(id) = &e.id {
                    line.push_str(&format!(" id={id:?}"));
                }
                line.push_str(&format!(" data={:?}", e.data));
                for (name, value) in &e.fields {
                    line.push_str(&format!(" {name}={value:?}"));
                }
                line.push('\n');
                line
            })
            .collect()
    }

    /// Parses `input` whole and one byte at a time; both must give `expect`.
    fn check(input: &[u8], expect: Expect) {
        let whole = parse_all(input);
        let mut parser = SseParser::new();
        let mut bytewise = Vec::new();
        for b in input {
            bytewise.extend(parser.push(std::slice::from_ref(b)));
        }
        bytewise.extend(parser.finish());
        assert_eq!(whole, bytewise, "input {:?}: byte-by-byte parsing differs", String::from_utf8_lossy(input));
        expect.assert_eq(&render(&whole));
    }

    #[test]
    fn line_endings_lf_crlf_and_cr() {
        check(
            b"data: a\n\ndata: b\r\n\r\ndata: c\r\rdata: d\n\r\n",
            expect![[r#"
            [message] data="a"
            [message] data="b"
            [message] data="c"
            [message] data="d"
        "#]],
        );
    }

    #[test]
    fn multiple_data_lines_are_joined_with_newlines() {
        check(
            b"data: first\ndata:second\ndata:  two spaces\ndata\ndata:\n\n",
            expect![[r#"
            [message] data="first\nsecond\n two spaces\n\n"
        "#]],
        );
    }

    #[test]
    fn comments_and_keepalives_are_skipped_and_unknown_fields_kept() {
        check(
            b": keepalive\n\n:\nfoo: bar\nevent: ping\ndata: {}\n: another\n\n",
            expect![[r#"
            [ping] data="{}" foo="bar"
        "#]],
        );
    }

    /// llama.cpp's server reports a failure mid-stream as an `error:` line, no `data`, then `[DONE]`:
    /// the event is dispatched with its field so the decoder can read it.
    #[test]
    fn an_event_with_only_an_unknown_field_is_dispatched() {
        check(
            b"data: {\"a\":1}\n\nerror: {\"code\":500,\"message\":\"boom\"}\n\ndata: [DONE]\n\nretry: soon\n\n",
            expect![[r#"
            [message] data="{\"a\":1}"
            [message] data="" error="{\"code\":500,\"message\":\"boom\"}"
            [message] data="[DONE]"
        "#]],
        );
    }

    #[test]
    fn events_without_data_are_not_dispatched_and_reset_the_type() {
        check(
            b"event: lonely\n\ndata: x\n\nevent: \ndata: y\n\n",
            expect![[r#"
            [message] data="x"
            [message] data="y"
        "#]],
        );
    }

    #[test]
    fn the_event_type_applies_to_one_event_only() {
        check(
            b"event: task_created\ndata: {\"a\":1}\n\ndata: plain\n\n",
            expect![[r#"
            [task_created] data="{\"a\":1}"
            [message] data="plain"
        "#]],
        );
    }

    #[test]
    fn ids_persist_reset_and_ignore_nul() {
        check(
            b"id: 1\ndata: a\n\ndata: b\n\nid: 2\0x\ndata: c\n\nid\ndata: d\n\n",
            expect![[r#"
            [message] id="1" data="a"
            [message] id="1" data="b"
            [message] id="1" data="c"
            [message] data="d"
        "#]],
        );
    }

    #[test]
    fn retry_takes_digits_only() {
        let mut p = SseParser::new();
        p.push(b"retry: 2500\n\nretry: soon\n\nretry: -1\n\n");
        assert_eq!(p.retry_ms(), Some(2500));
    }

    #[test]
    fn a_bom_is_dropped_only_at_the_start() {
        check(
            b"\xEF\xBB\xBFdata: a\n\n\xEF\xBB\xBFdata: b\n\n",
            expect![[r#"
            [message] data="a"
        "#]],
        );
        // Only one BOM is dropped: a second one makes the first line an unknown field.
        check(
            b"\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n",
            expect![[r#"
            [message] data="y"
        "#]],
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_and_split_characters_survive() {
        check(
            b"data: caf\xC3\xA9 \xF0\x9F\x98\x80 \xFF\xFE end\n\n",
            expect![[r#"
            [message] data="café 😀 �� end"
        "#]],
        );
    }

    #[test]
    fn a_cut_last_line_is_dropped_but_complete_lines_are_dispatched() {
        check(
            b"data: one\n\ndata: {\"cut",
            expect![[r#"
            [message] data="one"
        "#]],
        );
        check(
            b"data: one\n\ndata: whole\n",
            expect![[r#"
            [message] data="one"
            [message] data="whole"
        "#]],
        );
        check(
            b"data: whole\r",
            expect![[r#"
            [message] data="whole"
        "#]],
        );
    }

    #[test]
    fn a_cr_at_the_end_of_a_chunk_and_lf_at_the_start_of_the_next_is_one_line_end() {
        let mut p = SseParser::new();
        let mut events = p.push(b"data: a\r");
        events.extend(p.push(b"\ndata: b\r"));
        events.extend(p.push(b"\n\r"));
        events.extend(p.push(b"\n"));
        expect![[r#"
            [message] data="a\nb"
        "#]]
        .assert_eq(&render(&events));
    }

    #[test]
    fn overlong_lines_and_data_are_truncated_at_the_cap() {
        let mut p = SseParser::with_max_bytes(12);
        let mut events = p.push(b"data: 0123456789abcdef\n\n");
        events.extend(p.push(b"data: 123456\ndata: 123456\n\n"));
        events.extend(p.push(b"event: this-name-is-far-too-long\ndata: ok\n\n"));
        // Event data is cut at a character boundary, never inside a character.
        events.extend(p.push("data:ééé\ndata:ééé\n\n".as_bytes()));
        // A line is cut at the byte cap: a character it splits becomes U+FFFD.
        events.extend(p.push("data:éééééé\n\n".as_bytes()));
        expect![[r#"
            [message] data="012345"
            [message] data="123456\n12345"
            [this-] data="ok"
            [message] data="ééé\néé"
            [message] data="ééé�"
        "#]]
        .assert_eq(&render(&events));
        assert_eq!(p.truncations(), 5);
    }

    #[test]
    fn memory_stays_bounded_on_a_line_that_never_ends() {
        let mut p = SseParser::with_max_bytes(1024);
        for _ in 0..1000 {
            assert!(p.push(&[b'x'; 4096]).is_empty());
        }
        assert!(p.line.capacity() <= 4096, "line buffer grew to {}", p.line.capacity());
        assert_eq!(p.truncations(), 1);
        // The stream recovers at the next line end.
        assert_eq!(render(&p.push(b"\ndata: after\n\n")), "[message] data=\"after\"\n");
    }

    /// A realistic mix: both providers' shapes, comments, CRLF, multi-byte text.
    const RECORDED: &str = ": keepalive\r\n\r\nevent: message_start\r\ndata: {\"type\":\"message_start\"}\r\n\r\n\
        data: {\"choices\":[{\"delta\":{\"content\":\"Grüße 👋 \"}}]}\n\n\
        event: content_block_delta\ndata: {\"delta\":{\"text\":\"日本語\"}}\n\n\
        id: 42\rdata: line one\rdata: line two\r\r\
        data: [DONE]\n\n";

    #[test]
    fn a_recorded_stream() {
        check(
            RECORDED.as_bytes(),
            expect![[r#"
            [message_start] data="{\"type\":\"message_start\"}"
            [message] data="{\"choices\":[{\"delta\":{\"content\":\"Grüße 👋 \"}}]}"
            [content_block_delta] data="{\"delta\":{\"text\":\"日本語\"}}"
            [message] id="42" data="line one\nline two"
            [message] id="42" data="[DONE]"
        "#]],
        );
    }

    fn parse_split(input: &[u8], cuts: &[usize]) -> Vec<SseEvent> {
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
        cuts.sort_unstable();
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        let mut start = 0;
        for cut in cuts {
            events.extend(parser.push(&input[start..cut]));
            start = cut;
        }
        events.extend(parser.push(&input[start..]));
        events.extend(parser.finish());
        events
    }

    #[test]
    fn the_recorded_stream_split_at_every_single_position() {
        let input = RECORDED.as_bytes();
        let whole = parse_all(input);
        assert_eq!(whole.len(), 5);
        for cut in 0..=input.len() {
            assert_eq!(parse_split(input, &[cut]), whole, "split at byte {cut}");
        }
    }

    proptest! {
        #[test]
        fn recorded_stream_split_anywhere_gives_the_same_events(cuts in prop::collection::vec(any::<usize>(), 0..12)) {
            prop_assert_eq!(parse_split(RECORDED.as_bytes(), &cuts), parse_all(RECORDED.as_bytes()));
        }

        #[test]
        fn any_bytes_split_anywhere_give_the_same_events(
            input in prop::collection::vec(prop::sample::select(b"data:event:id: \r\n\xEF\xBB\xBF\xC3\xA9x\0".to_vec()), 0..200),
            cuts in prop::collection::vec(any::<usize>(), 0..12),
        ) {
            prop_assert_eq!(parse_split(&input, &cuts), parse_all(&input));
        }
    }
}
