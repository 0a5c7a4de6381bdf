//! Listing an endpoint's models: the request for each format, and reading the answers servers give.

use crate::provider::*;

fn settings(kind: ProviderKind, base_url: &str, api_key: &str) -> ModelSettings {
    ModelSettings { kind, base_url: base_url.into(), api_key: api_key.into(), ..ModelSettings::default() }
}

#[test]
fn openai_compatible_lists_at_base_models_with_a_bearer_key() {
    let r = models_request(&settings(ProviderKind::OpenAi, " https://api.openai.com/v1/ ", " sk-1 "));
    assert_eq!((r.method.as_str(), r.url.as_str(), r.body.as_str()), ("GET", "https://api.openai.com/v1/models", ""));
    assert_eq!(r.header("authorization"), Some("Bearer sk-1"));
    assert_eq!(r.header("x-api-key"), None);
    let local = models_request(&settings(ProviderKind::OpenAi, "http://localhost:11434/v1", ""));
    assert_eq!(local.url, "http://localhost:11434/v1/models");
    assert_eq!(local.header("authorization"), None, "no key, no header");
    assert!(!format!("{r:?}").contains("sk-1"), "the key is redacted: {r:?}");
}

#[test]
fn anthropic_lists_with_its_key_and_version_headers() {
    let r = models_request(&settings(ProviderKind::Anthropic, "https://api.anthropic.com/v1", "ant-key"));
    assert_eq!(r.url, "https://api.anthropic.com/v1/models");
    assert_eq!(r.header("x-api-key"), Some("ant-key"));
    assert_eq!(r.header("anthropic-version"), Some(ANTHROPIC_VERSION));
    assert_eq!(r.header("authorization"), None);
}

#[test]
fn a_base_url_given_as_the_full_endpoint_path_lists_beside_it() {
    for (kind, base) in [
        (ProviderKind::OpenAi, "https://x.test/v1/chat/completions"),
        (ProviderKind::Anthropic, "https://x.test/v1/messages/"),
        (ProviderKind::OpenAi, "https://x.test/v1/models"),
    ] {
        assert_eq!(models_request(&settings(kind, base, "")).url, "https://x.test/v1/models", "{base}");
    }
}

fn ids(body: &str) -> Vec<String> {
    parse_models(body).unwrap_or_else(|e| panic!("{body} was refused: {e}")).into_iter().map(|m| m.id).collect()
}

#[test]
fn lists_are_read_in_the_shapes_servers_answer() {
    let openai =
        r#"{"object":"list","data":[{"id":"gpt-4o","object":"model","owned_by":"openai"},{"id":"gpt-4o-mini"}]}"#;
    assert_eq!(ids(openai), ["gpt-4o", "gpt-4o-mini"]);
    let anthropic = r#"{"data":[{"type":"model","id":"claude-sonnet-4-5","display_name":"Claude Sonnet 4.5"}],
        "has_more":false,"first_id":"claude-sonnet-4-5"}"#;
    assert_eq!(
        parse_models(anthropic).unwrap(),
        [ListedModel { id: "claude-sonnet-4-5".into(), display_name: Some("Claude Sonnet 4.5".into()) }]
    );
    let ollama_tags = r#"{"models":[{"name":"llama3.2:latest","model":"llama3.2:latest","size":1}]}"#;
    assert_eq!(parse_models(ollama_tags).unwrap()[0], ListedModel { id: "llama3.2:latest".into(), display_name: None });
    assert_eq!(ids(r#"["a", {"id": "b"}]"#), ["a", "b"]);
}

#[test]
fn odd_entries_are_skipped_and_repeats_listed_once() {
    assert_eq!(
        ids(r#"{"data":[{"id":"m1"},{"object":"model"},{"id":"  "},{"id":"m1"},42,null,{"id":"m2"}]}"#),
        ["m1", "m2"]
    );
    assert_eq!(ids(r#"{"data":[]}"#), Vec::<String>::new(), "an empty list is a list");
}

#[test]
fn answers_that_are_no_list_say_what_came_back() {
    let cases = [
        ("<!doctype html><html>", "not JSON"),
        ("", "not JSON"),
        (r#"{"error":{"message":"invalid x-api-key","type":"authentication_error"}}"#, "invalid x-api-key"),
        (r#"{"object":"list"}"#, "no model list"),
        ("42", "no model list"),
    ];
    for (body, expected) in cases {
        let err = parse_models(body).expect_err(body);
        assert!(err.contains(expected), "{body:?} → {err:?}, expected it to mention {expected:?}");
    }
}
