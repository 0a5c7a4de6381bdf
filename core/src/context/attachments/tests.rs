use std::cell::RefCell;
use std::collections::HashMap;

use super::*;
use crate::context::{assemble_context, ContextSettings};
use crate::message::UNKNOWN_IMAGE_TOKENS;
use crate::state::SessionState;
use crate::test_support::Convo;
use crate::{NewAttachment, Role};

#[test]
fn image_tokens_follow_the_providers_formulas() {
    // OpenAI's documented examples: 1024² → 765 tokens; 2048×4096 → 768×1536, 6 tiles → 1105.
    assert_eq!(ImageTokens::OpenAi.of(Some(1024), Some(1024)), 765);
    assert_eq!(ImageTokens::OpenAi.of(Some(2048), Some(4096)), 1105);
    assert_eq!(ImageTokens::OpenAi.of(Some(100), Some(100)), 255);
    // Anthropic's: 200×200 ≈ 54, 1092×1092 ≈ 1590; a large image is first scaled to 1568 px.
    assert_eq!(ImageTokens::Anthropic.of(Some(200), Some(200)), 54);
    assert_eq!(ImageTokens::Anthropic.of(Some(1092), Some(1092)), 1590);
    assert_eq!(ImageTokens::Anthropic.of(Some(4000), Some(4000)), ImageTokens::Anthropic.of(Some(1568), Some(1568)));
    assert_eq!(ImageTokens::Anthropic.of(None, Some(5)), UNKNOWN_IMAGE_TOKENS);
}

/// Turns plus the bytes of their attachments; records which contents were read.
struct Source {
    turns: Vec<Turn>,
    blobs: HashMap<String, Vec<u8>>,
    read: RefCell<Vec<String>>,
}

impl TurnSource for Source {
    fn turns_before(&self, before: Option<i64>, limit: usize) -> Result<Vec<Turn>> {
        self.turns.as_slice().turns_before(before, limit)
    }
    fn turn_count(&self) -> i64 {
        self.turns.len() as i64
    }
    fn attachment_bytes(&self, sha256: &str) -> Result<Option<Vec<u8>>> {
        self.read.borrow_mut().push(sha256.to_string());
        Ok(self.blobs.get(sha256).cloned())
    }
}

fn png(w: u32, h: u32) -> Vec<u8> {
    let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    b.extend_from_slice(&w.to_be_bytes());
    b.extend_from_slice(&h.to_be_bytes());
    b
}

#[test]
fn old_images_are_placeholders_and_only_images_sent_are_read() {
    let old_image = NewAttachment::new("first.png", "image/png", png(100, 100));
    let notes = NewAttachment::new("notes.txt", "text/plain", b"alpha beta gamma\n".to_vec());
    let report = NewAttachment::new("report.pdf", "application/pdf", b"%PDF-1.7".to_vec());
    let new_image = NewAttachment::new("second.png", "image/png", png(100, 101));
    let mut blobs = HashMap::new();
    let mut convo = Convo::new();
    let mut with = |role: Role, text: &str, files: &[&NewAttachment]| {
        let turn = convo.push(role, text);
        for f in files {
            let a = f.examine();
            blobs.insert(a.sha256.clone(), f.bytes.clone());
            turn.attachments.push(a);
        }
    };
    with(Role::User, "have a look", &[&old_image, &notes, &report]);
    with(Role::Assistant, &"x".repeat(8000), &[]);
    with(Role::User, "ok", &[]);
    with(Role::Assistant, &"y".repeat(8000), &[]);
    with(Role::User, "and now this one", &[&new_image]);
    let source = Source { turns: convo.turns, blobs, read: RefCell::new(Vec::new()) };
    let settings = ContextSettings { context_window: 16_000, output_reserve: 1_000, ..ContextSettings::default() };
    let mut state = SessionState::default();
    state.session.id = "s1".into();
    let out = assemble_context(&settings, "sys", &state, &source).unwrap();

    let first = &out.messages[1];
    assert_eq!(first.role, Role::User);
    assert!(first.images.is_empty(), "the old image is not sent again");
    expect_test::expect![[r#"
        have a look

        [file: notes.txt, 17 B, text/plain]
        ```
        alpha beta gamma
        ```

        [file: report.pdf, 8 B, application/pdf — not sent]
        [image: first.png, turn 1 — in the archive]"#]]
    .assert_eq(&first.content);
    assert!(out.manifest.trimmed_turns.contains(&1), "{:?}", out.manifest.trimmed_turns);

    let last = out.messages.last().unwrap();
    assert_eq!(last.content, "and now this one");
    assert_eq!(last.images.len(), 1);
    assert_eq!(last.images[0].data, png(100, 101), "the image sent is read");
    assert_eq!(last.images[0].tokens, 255);
    let sha = |f: &NewAttachment| f.examine().sha256;
    let read = source.read.borrow();
    assert!(!read.contains(&sha(&old_image)), "an image not sent is never read");
    assert!(read.contains(&sha(&new_image)) && read.contains(&sha(&notes)));
    assert!(out.manifest.estimated_tokens <= out.manifest.budget_tokens);
}
