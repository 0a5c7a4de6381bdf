use super::turn_model;
use serde_json::json;

#[test]
fn a_reply_names_its_model_and_other_turns_name_none() {
    let cases = [
        (json!({"model": "demo-large", "finish_reason": "stop"}), Some("demo-large")),
        (json!({"model": " gpt-4o "}), Some("gpt-4o")),
        (json!({"model": ""}), None),
        (json!({"model": 4}), None),
        (json!({"client_key": "k"}), None),
        (json!(null), None),
    ];
    for (metadata, expected) in cases {
        assert_eq!(turn_model(&metadata), expected, "{metadata}");
    }
}
