use super::*;
use serde_json::json;

#[test]
fn a_server_is_on_unless_switched_off() {
    assert!(any_enabled(&[json!({"id": "s1", "url": "http://127.0.0.1:1/mcp"})]), "enabled by default");
    assert!(any_enabled(&[json!({"id": "s1", "enabled": false}), json!({"id": "s2", "enabled": true})]));
    assert!(!any_enabled(&[json!({"id": "s1", "enabled": false})]));
    assert!(!any_enabled(&[]));
}

/// One `CallToolResult`: what the model reads, whether it succeeded, the attachments (name, mime,
/// bytes) and, restored, the result exactly as it came.
fn check(result: Value, content: &str, success: bool, attachments: &[(&str, &str, &[u8])]) {
    let parts = result_parts(&result);
    assert_eq!(parts.content, content, "the text of {result}");
    assert_eq!(parts.success, success, "success of {result}");
    let got: Vec<(&str, &str, &[u8])> =
        parts.attachments.iter().map(|a| (a.name.as_str(), a.mime.as_str(), a.bytes.as_slice())).collect();
    assert_eq!(got, attachments, "attachments of {result}");
    let text = parts.result.to_string();
    for a in &parts.attachments {
        assert!(!text.contains(&crate::attachment::to_base64(&a.bytes)), "the bytes are kept twice: {text}");
    }
    let bytes: Vec<Vec<u8>> = parts.attachments.into_iter().map(|a| a.bytes).collect();
    assert_eq!(restore(&parts.result, &bytes), result, "restored");
}

#[test]
fn call_results_are_kept_whole() {
    check(json!({"content": [{"type": "text", "text": "Echo: hi"}]}), "Echo: hi", true, &[]);
    check(
        json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "isError": true}),
        "a\n\nb",
        false,
        &[],
    );
    check(
        json!({"content": [{"type": "text", "text": "A tiny image:"}, {"type": "image", "data": "iVBORw==", "mimeType": "image/png"}]}),
        "A tiny image:\n\n[image: image-1.png, image/png]",
        true,
        &[("image-1.png", "image/png", b"\x89PNG")],
    );
    check(
        json!({"content": [{"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav", "annotations": {"priority": 1}}]}),
        "[audio: audio-1.wav, audio/wav]",
        true,
        &[("audio-1.wav", "audio/wav", b"RIFF")],
    );
    check(
        json!({"content": [{"type": "resource_link", "uri": "test://static/resource/1", "name": "Resource 1"}]}),
        "[resource: Resource 1 <test://static/resource/1>]",
        true,
        &[],
    );
    check(
        json!({"content": [
            {"type": "resource", "resource": {"uri": "test://r/2", "mimeType": "text/plain", "text": "Resource 2 text"}},
            {"type": "resource", "resource": {"uri": "test://r/b.bin", "mimeType": "application/octet-stream", "blob": "AAE="}}
        ]}),
        "[resource <test://r/2>]\nResource 2 text\n\n[resource <test://r/b.bin>, application/octet-stream]",
        true,
        &[("b.bin", "application/octet-stream", b"\x00\x01")],
    );
    check(json!({"content": [], "structuredContent": {"temperature": 22.5}}), "{\"temperature\":22.5}", true, &[]);
    // Data that is not base64 stays where it was.
    check(
        json!({"content": [{"type": "image", "data": "not base64!", "mimeType": "image/png"}]}),
        "[image: image-1.png, image/png]",
        true,
        &[],
    );
}
