use super::*;
use serde_json::json;

#[test]
fn a_text_resource_becomes_its_utf8_bytes_and_a_blob_its_decoded_bytes() {
    let text = json!({"contents": [{"uri": "demo://a", "mimeType": "text/markdown", "text": "# Héllo"}]});
    assert_eq!(resource_file("demo://a", &text).unwrap(), ("text/markdown".into(), "# Héllo".as_bytes().to_vec()));
    let untyped = json!({"contents": [{"uri": "demo://a", "text": "x"}]});
    assert_eq!(resource_file("demo://a", &untyped).unwrap().0, "text/plain");
    let blob = json!({"contents": [
        {"uri": "demo://other", "text": "not this one"},
        {"uri": "demo://b", "mimeType": "application/octet-stream", "blob": "AAEC/w=="}
    ]});
    assert_eq!(resource_file("demo://b", &blob).unwrap(), ("application/octet-stream".into(), vec![0, 1, 2, 255]));
}

#[test]
fn a_read_without_usable_contents_says_what_is_wrong() {
    let empty = resource_file("demo://x", &json!({"contents": []})).unwrap_err();
    assert!(empty.contains("no contents for demo://x"), "{empty}");
    let bad = resource_file("demo://x", &json!({"contents": [{"uri": "demo://x", "blob": "%%%"}]})).unwrap_err();
    assert!(bad.contains("not base64"), "{bad}");
}

#[test]
fn a_prompt_inserts_its_user_text_and_counts_what_it_leaves_out() {
    let result = json!({"messages": [
        {"role": "user", "content": {"type": "text", "text": "First"}},
        {"role": "assistant", "content": {"type": "text", "text": "Not inserted"}},
        {"role": "user", "content": {"type": "resource", "resource": {"uri": "demo://r", "text": "Embedded"}}},
        {"role": "user", "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}},
        {"role": "user", "content": [{"type": "text", "text": "Last"}]}
    ]});
    assert_eq!(prompt_text(&result), ("First\n\nEmbedded\n\nLast".to_owned(), 2));
    assert_eq!(prompt_text(&json!({})), (String::new(), 0));
}
