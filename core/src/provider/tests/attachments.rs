//! Request bodies of a user message with an image and a text file, per format: OpenAI-compatible
//! content parts (`text`, then `image_url` with a data URL) and Anthropic blocks (`image` with a base64
//! source, then the text). The text file is inline in the text, as context assembly puts it.

use expect_test::{expect, Expect};
use serde_json::Value;

use crate::message::{ContextMessage, ImagePart, ImageTokens};
use crate::provider::*;
use crate::{NewAttachment, Role};

/// A 2×1 PNG's header: short enough to read its base64 in a snapshot.
fn tiny_png() -> Vec<u8> {
    let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    b.extend_from_slice(&2u32.to_be_bytes());
    b.extend_from_slice(&1u32.to_be_bytes());
    b
}

fn messages() -> Vec<ContextMessage> {
    let png = tiny_png();
    let image = NewAttachment::new("shot.png", "image/png", png.clone()).examine();
    // The text file as context assembly inlines it (`context::fenced`).
    let text = "What do these do?\n\n[file: tool.py, 12 B, text/plain]\n```\nprint('hi')\n```";
    let plain = |role, content: &str| ContextMessage::new(role, content);
    let tokens = ImageTokens::OpenAi.of(image.width, image.height);
    vec![
        plain(Role::System, "You are Cowork."),
        ContextMessage { images: vec![ImagePart { attachment: image, tokens, data: png }], ..plain(Role::User, text) },
    ]
}

fn check(kind: ProviderKind, expect: Expect) {
    let cfg = ModelSettings { kind, model: "m".into(), max_output_tokens: Some(64), ..ModelSettings::default() };
    let request = build_request(&cfg, &messages(), &[]);
    let body: Value = serde_json::from_str(&request.body).expect("the body is JSON");
    expect.assert_eq(&serde_json::to_string_pretty(&body["messages"]).unwrap());
}

#[test]
fn openai_user_message_with_an_image_and_a_text_file() {
    check(
        ProviderKind::OpenAi,
        expect![[r#"
            [
              {
                "content": "You are Cowork.",
                "role": "system"
              },
              {
                "content": [
                  {
                    "text": "What do these do?\n\n[file: tool.py, 12 B, text/plain]\n```\nprint('hi')\n```",
                    "type": "text"
                  },
                  {
                    "image_url": {
                      "url": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAAB"
                    },
                    "type": "image_url"
                  }
                ],
                "role": "user"
              }
            ]"#]],
    );
}

#[test]
fn anthropic_user_message_with_an_image_and_a_text_file() {
    check(
        ProviderKind::Anthropic,
        expect![[r#"
            [
              {
                "content": [
                  {
                    "source": {
                      "data": "iVBORw0KGgoAAAANSUhEUgAAAAIAAAAB",
                      "media_type": "image/png",
                      "type": "base64"
                    },
                    "type": "image"
                  },
                  {
                    "text": "What do these do?\n\n[file: tool.py, 12 B, text/plain]\n```\nprint('hi')\n```",
                    "type": "text"
                  }
                ],
                "role": "user"
              }
            ]"#]],
    );
}

#[test]
fn an_image_whose_bytes_were_not_read_is_named_not_sent() {
    let mut m = messages();
    m[1].images[0].data.clear();
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let cfg = ModelSettings { kind, model: "m".into(), ..ModelSettings::default() };
        let body = build_request(&cfg, &m, &[]).body;
        assert!(!body.contains("base64,") && !body.contains("\"image\""), "{kind:?}: {body}");
        assert!(body.contains("[image: shot.png — not available]"), "{kind:?}: {body}");
    }
}

#[test]
fn a_refusal_about_images_names_them() {
    let err = ModelError::BadRequest { status: 400, message: "Invalid content type".into() };
    let body = r#"{"error":{"message":"Invalid content type. image_url is only supported by certain models."}}"#;
    let named = name_refused_images(err.clone(), body, &["shot.png".to_string()]);
    let text = named.to_string();
    assert!(text.contains("shot.png") && text.contains("Your message is saved"), "{text}");
    assert_eq!(named.kind(), crate::ErrorKind::BadRequest);
    assert_eq!(name_refused_images(err.clone(), body, &[]), err, "no images sent: unchanged");
    assert_eq!(name_refused_images(err.clone(), r#"{"error":"model not found"}"#, &["a.png".into()]), err);
}
