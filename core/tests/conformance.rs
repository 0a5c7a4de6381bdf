//! The conformance suite (#16): real streams recorded by public SDK and framework test suites, in
//! `tests/data/conformance/<provider>/<name>.sse`, each beside a `<name>.json` that names its source and
//! licence and says what the source's own test asserts about it. Every fixture on disk is a case: it is
//! decoded as the agent loop does (`SseParser` → `StreamDecoder`), whole, byte by byte and in seeded
//! random chunks, and the three results must agree and match the expectation.
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};

use cowork_core::provider::{AssistantMessage, FailureKind, ProviderKind, StreamDecoder, StreamEvent, StreamFailure};
use cowork_core::sse::SseParser;
use serde_json::Value;

/// Licences whose terms allow keeping a copy of the recording here (with its notice in the README).
const PERMISSIVE: [&str; 4] = ["MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause"];
/// Seeds for the random chunkings.
const SEEDS: [u64; 4] = [1, 7, 1_604, 0x5eed_c0de];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance")
}

/// One recorded stream and what its source asserts.
struct Fixture {
    /// `<provider>/<name>`, for messages.
    name: String,
    body: Vec<u8>,
    meta: Value,
}

/// Every `<provider>/<name>.sse` with its `<name>.json`, sorted by name.
fn fixtures() -> Vec<Fixture> {
    let mut out = Vec::new();
    let providers = std::fs::read_dir(root()).unwrap_or_else(|e| panic!("reading {}: {e}", root().display()));
    for provider in providers.map(|p| p.expect("a directory entry").path()).filter(|p| p.is_dir()) {
        for file in std::fs::read_dir(&provider).expect("a provider directory").map(|f| f.expect("an entry").path()) {
            if file.extension().and_then(|e| e.to_str()) != Some("sse") {
                continue;
            }
            let name = format!(
                "{}/{}",
                provider.file_name().and_then(|n| n.to_str()).unwrap_or_default(),
                file.file_stem().and_then(|n| n.to_str()).unwrap_or_default()
            );
            let json = file.with_extension("json");
            let text =
                std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{name}: reading {}: {e}", json.display()));
            let meta =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {} is not JSON: {e}", json.display()));
            let body = std::fs::read(&file).unwrap_or_else(|e| panic!("{name}: reading {}: {e}", file.display()));
            out.push(Fixture { name, body, meta });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// What a decode gives: every event, and the outcome.
type Decoded = (Vec<StreamEvent>, Result<AssistantMessage, StreamFailure>);

/// Decodes `body` fed in pieces of the sizes `next_size` gives, as `agent.rs` reads a response body.
fn decode(kind: ProviderKind, body: &[u8], mut next_size: impl FnMut() -> usize) -> Decoded {
    let mut parser = SseParser::new();
    let mut decoder = StreamDecoder::new(kind);
    let mut events = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let (chunk, tail) = rest.split_at(next_size().clamp(1, rest.len()));
        rest = tail;
        for ev in parser.push(chunk) {
            events.extend(decoder.feed(&ev));
        }
    }
    for ev in parser.finish() {
        events.extend(decoder.feed(&ev));
    }
    (events, decoder.finish())
}

/// A small deterministic generator (xorshift64*), so a failing chunking can be replayed from its seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// A chunk size: mostly small (splitting lines, UTF-8 characters and CRLFs), sometimes large.
    fn chunk_size(&mut self) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let r = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33;
        if r.is_multiple_of(8) {
            1 + (r >> 3) as usize % 4096
        } else {
            1 + (r >> 3) as usize % 64
        }
    }
}

fn kind_of(fixture: &Fixture) -> ProviderKind {
    let kind = fixture.meta["kind"].as_str().unwrap_or_default();
    ProviderKind::parse(kind)
        .unwrap_or_else(|| panic!("{}: `kind` is {kind:?}, not \"openai\" or \"anthropic\"", fixture.name))
}

/// Checks `decoded` against the fixture's `expect`; returns one line per mismatch, naming the field.
fn mismatches(fixture: &Fixture, decoded: &Result<AssistantMessage, StreamFailure>) -> Vec<String> {
    let expect = &fixture.meta["expect"];
    let mut out = Vec::new();
    let mut differ = |field: &str, want: &dyn std::fmt::Debug, got: &dyn std::fmt::Debug| {
        out.push(format!("{}: `{field}`: expected {want:?}, decoded {got:?}", fixture.name));
    };
    let message = match (decoded, expect.get("error")) {
        (Ok(message), None | Some(Value::Null)) => message,
        (Err(failure), None | Some(Value::Null)) => {
            differ("error", &"none", &format!("{:?}: {}", failure.kind, failure.message));
            &failure.partial
        }
        (Err(failure), Some(want)) => {
            let want = want.as_str().unwrap_or_default();
            if failure.kind != FailureKind::Provider || !failure.message.contains(want) {
                differ("error", &format!("a provider error containing {want:?}"), &failure.message);
            }
            &failure.partial
        }
        (Ok(_), Some(want)) => {
            differ("error", want, &"no error");
            return out;
        }
    };
    if let Some(want) = expect.get("content").and_then(Value::as_str) {
        if message.content != want {
            differ("content", &want, &message.content);
        }
    }
    if let Some(want) = expect.get("reasoning").and_then(Value::as_str) {
        if message.reasoning != want {
            differ("reasoning", &want, &message.reasoning);
        }
    }
    for piece in expect.get("reasoning_contains").and_then(Value::as_array).into_iter().flatten() {
        let piece = piece.as_str().unwrap_or_default();
        if !message.reasoning.contains(piece) {
            differ("reasoning_contains", &piece, &message.reasoning);
        }
    }
    if let Some(want) = expect.get("reasoning_signatures").and_then(Value::as_u64) {
        let signed = message
            .reasoning_blocks
            .iter()
            .filter(|b| b["type"] == "thinking" && b["signature"].as_str().is_some_and(|s| !s.is_empty()))
            .count() as u64;
        if signed != want {
            differ("reasoning_signatures", &want, &message.reasoning_blocks);
        }
    }
    if let Some(want) = expect.get("tool_calls").and_then(Value::as_array) {
        let want: Vec<(&str, &Value)> =
            want.iter().map(|c| (c["name"].as_str().unwrap_or_default(), &c["arguments"])).collect();
        let got: Vec<(&str, Value)> = message
            .tool_calls
            .iter()
            .map(|c| {
                (c.name.as_str(), serde_json::from_str(&c.arguments).unwrap_or(Value::String(c.arguments.clone())))
            })
            .collect();
        let same = want.len() == got.len() && want.iter().zip(&got).all(|((wn, wa), (gn, ga))| wn == gn && *wa == ga);
        if !same {
            differ("tool_calls", &want, &got);
        }
    }
    if let Some(want) = expect.get("finish_reason") {
        if message.finish_reason.as_deref() != want.as_str() {
            differ("finish_reason", want, &message.finish_reason);
        }
    }
    if let Some(want) = expect.get("usage").filter(|u| !u.is_null()) {
        let got = message.usage.map(|u| (u.prompt_tokens, u.completion_tokens));
        let want_pair = (want["prompt_tokens"].as_i64(), want["completion_tokens"].as_i64());
        let same = match got {
            Some((p, c)) => want_pair.0.is_none_or(|w| w == p) && want_pair.1.is_none_or(|w| w == c),
            None => false,
        };
        if !same {
            differ("usage", want, &got);
        }
    }
    if let Some(want) = expect.get("refusal").and_then(Value::as_bool) {
        if message.refusal != want {
            differ("refusal", &want, &message.refusal);
        }
    }
    out
}

#[test]
fn every_recorded_stream_decodes_as_its_source_asserts_whole_byte_by_byte_and_in_random_chunks() {
    let fixtures = fixtures();
    let mut failures = Vec::new();
    for fixture in &fixtures {
        let kind = kind_of(fixture);
        let whole = decode(kind, &fixture.body, || usize::MAX);
        let bytewise = decode(kind, &fixture.body, || 1);
        if bytewise != whole {
            failures.push(format!("{}: byte-by-byte decoding differs from whole-body decoding", fixture.name));
        }
        for seed in SEEDS {
            let mut rng = Rng::new(seed);
            if decode(kind, &fixture.body, || rng.chunk_size()) != whole {
                failures.push(format!("{}: decoding in random chunks (seed {seed}) differs from whole", fixture.name));
            }
        }
        failures.extend(mismatches(fixture, &whole.1));
    }
    assert!(failures.is_empty(), "{} of {} fixtures failed:\n{}", failures.len(), fixtures.len(), failures.join("\n"));
}

#[test]
fn every_fixture_names_its_source_and_a_permissive_licence_and_is_listed_in_the_readme() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("tests/data/conformance/README.md");
    let fixtures = fixtures();
    assert!(fixtures.len() >= 30, "the suite has {} recorded streams; it should keep at least 30", fixtures.len());
    for fixture in &fixtures {
        let source = fixture.meta["source"].as_str().unwrap_or_default();
        assert!(
            source.contains(" @ "),
            "{}: `source` should be \"<owner/repo>/<path> @ <commit>\", is {source:?}",
            fixture.name
        );
        let licence = fixture.meta["licence"].as_str().unwrap_or_default();
        assert!(PERMISSIVE.contains(&licence), "{}: licence {licence:?} is not one of {PERMISSIVE:?}", fixture.name);
        assert!(fixture.meta["expect"].is_object(), "{}: no `expect` object", fixture.name);
        kind_of(fixture);
        assert!(
            readme.contains(&format!("`{}.sse`", fixture.name)),
            "{}: not listed in the README's table",
            fixture.name
        );
    }
}

/// The checker itself: a stream that does not give what the expectation says is reported, by fixture and
/// field (so a passing suite means something).
#[test]
fn a_wrong_expectation_is_reported_by_fixture_and_field() {
    let body = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    let fixture = Fixture {
        name: "test/wrong".to_string(),
        body: body.to_vec(),
        meta: serde_json::json!({"kind": "openai", "expect": {"content": "Hello", "finish_reason": "length", "error": null}}),
    };
    let (_, decoded) = decode(ProviderKind::OpenAi, &fixture.body, || 3);
    let found = mismatches(&fixture, &decoded);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].starts_with("test/wrong: `content`"), "{found:#?}");
    assert!(found[1].starts_with("test/wrong: `finish_reason`"), "{found:#?}");
}
