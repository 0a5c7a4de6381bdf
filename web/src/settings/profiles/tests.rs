//! Profiles: migration of the single saved settings, presets, validation, and which profile a
//! session uses.

use super::*;
use crate::settings::demo;

const ORIGIN: &str = "http://127.0.0.1:8080";

fn profile(id: &str, name: &str, base_url: &str, model: &str) -> Profile {
    let settings = ModelSettings { base_url: base_url.into(), model: model.into(), ..ModelSettings::default() };
    Profile { id: id.into(), name: name.into(), settings }
}

/// Two profiles: `p1` "Local" (default, model `demo`) and `p2` "Big" (model `demo-large`).
fn two() -> Profiles {
    Profiles {
        profiles: vec![
            profile("p1", "Local", "http://127.0.0.1:8080/v1", "demo"),
            profile("p2", "Big", "http://127.0.0.1:8080/v1", "demo-large"),
        ],
        default_id: "p1".into(),
        orchestrator_url: ORIGIN.into(),
    }
}

fn choice(profile: &str, model: &str) -> Choice {
    Choice { profile: profile.into(), model: model.into() }
}

#[test]
fn the_single_saved_settings_become_the_first_profile_without_loss() {
    let old = ModelSettings {
        kind: ProviderKind::OpenAi,
        base_url: "https://api.openai.com/v1".into(),
        model: "gpt-4o".into(),
        api_key: "sk-old".into(),
        context_window: 128_000,
        output_reserve: 8_000,
        orchestrator_url: "http://localhost:7000".into(),
        max_output_tokens: Some(2_000),
        max_attachment_bytes: Some(5_000_000),
    };
    let json = serde_json::to_string(&old).unwrap();
    let p = Profiles::load(None, Some(&json), demo(ORIGIN), ORIGIN);
    assert_eq!(p.profiles.len(), 1);
    assert_eq!((p.profiles[0].name.as_str(), p.default_id.as_str()), ("OpenAI", "p1"), "named after its preset");
    assert_eq!(p.orchestrator_url, "http://localhost:7000");
    assert_eq!(p.settings_for(&p.default_choice()), Some(old), "every field survives, the key too");
    assert!(p.problems().is_empty(), "{:?}", p.problems());
    // Saved profiles come back as they were; the earlier key is not read again.
    let saved = serde_json::to_string(&two()).unwrap();
    assert_eq!(Profiles::load(Some(&saved), Some(&json), demo(ORIGIN), ORIGIN), two());
}

#[test]
fn unreadable_or_invalid_saved_text_is_passed_over() {
    let legacy = serde_json::to_string(&ModelSettings {
        base_url: "http://my-box.lan:8000/v1".into(),
        model: "qwen".into(),
        ..ModelSettings::default()
    })
    .unwrap();
    let bad_profiles = r#"{"profiles":[],"default_id":"p1"}"#;
    let p = Profiles::load(Some(bad_profiles), Some(&legacy), demo(ORIGIN), ORIGIN);
    assert_eq!((p.profiles[0].name.as_str(), p.default_choice().model.as_str()), ("my-box.lan:8000", "qwen"));
    for (saved, legacy) in [(Some("{not json"), None), (None, Some(r#"{"kind":"gemini"}"#)), (None, None)] {
        let p = Profiles::load(saved, legacy, demo(ORIGIN), ORIGIN);
        assert_eq!(p.profiles[0].name, "Demo (dev server)", "{saved:?} {legacy:?}");
        assert_eq!(p.settings_for(&p.default_choice()), Some(demo(ORIGIN)));
    }
}

#[test]
fn presets_fill_kind_and_base_url_and_keep_a_chosen_model() {
    let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
    assert_eq!(
        names,
        ["OpenAI", "Anthropic", "OpenRouter", "Ollama", "LM Studio", "llama.cpp server", "Demo (dev server)"]
    );
    let mut p = profile("p1", "", "", "");
    PRESETS[1].fill(&mut p, ORIGIN);
    assert_eq!(p.settings.kind, ProviderKind::Anthropic);
    assert_eq!(
        (p.name.as_str(), p.settings.base_url.as_str(), p.settings.model.as_str()),
        ("Anthropic", "https://api.anthropic.com/v1", "claude-sonnet-4-5")
    );
    PRESETS[3].fill(&mut p, ORIGIN);
    assert_eq!(p.settings.kind, ProviderKind::OpenAi);
    assert_eq!(
        (p.name.as_str(), p.settings.base_url.as_str(), p.settings.model.as_str()),
        ("Ollama", "http://localhost:11434/v1", "claude-sonnet-4-5"),
        "a model typed or chosen is kept"
    );
    p.name = "My laptop".into();
    PRESETS[6].fill(&mut p, ORIGIN);
    assert_eq!(
        (p.name.as_str(), p.settings.base_url.as_str()),
        ("My laptop", "http://127.0.0.1:8080/v1"),
        "a name of one's own is kept"
    );
    assert_eq!(Preset::matching("http://localhost:1234/v1/", ORIGIN).map(|p| p.name), Some("LM Studio"));
}

#[test]
fn each_problem_names_its_profile_and_field() {
    let check = |p: &Profiles, expected: &[(usize, &str)]| {
        let found: Vec<(usize, &str)> = p.problems().iter().map(|e| (e.index, e.error.field)).collect();
        assert_eq!(found, expected, "{p:?}");
    };
    check(&two(), &[]);
    let mut p = two();
    p.profiles[1].name = " local ".into();
    p.profiles[1].settings.base_url = "openai.com".into();
    check(&p, &[(1, "base_url"), (1, "name")]);
    let mut p = two();
    p.profiles[0].name = "".into();
    p.orchestrator_url = "loom".into();
    check(&p, &[(0, "orchestrator_url"), (0, "name")]);
    let mut p = two();
    p.default_id = "p9".into();
    check(&p, &[(0, "default")]);
}

#[test]
fn adding_and_removing_profiles_keeps_one_default() {
    let mut p = two();
    let i = p.add(ORIGIN);
    assert_eq!((i, p.profiles[i].id.as_str(), p.profiles[i].name.as_str()), (2, "p3", "OpenAI"));
    assert!(p.remove(0), "the default can be removed while others remain");
    assert_eq!(p.default_id, "p2");
    assert!(p.remove(1));
    assert!(!p.remove(0), "the last profile stays");
    assert_eq!(p.add(ORIGIN), 1);
    assert_eq!(p.profiles[1].id, "p1", "a freed id is used again");
}

#[test]
fn a_request_gets_the_profiles_endpoint_the_chosen_model_and_the_shared_orchestrator() {
    let p = two();
    let s = p.settings_for(&choice("p2", " demo ")).unwrap();
    assert_eq!((s.model.as_str(), s.orchestrator_url.as_str()), ("demo", ORIGIN));
    assert_eq!(p.settings_for(&choice("p2", "")).unwrap().model, "demo-large", "no model: the profile's own");
    assert_eq!(p.settings_for(&choice("gone", "demo")), None);
}

#[test]
fn a_session_uses_its_remembered_profile_else_one_for_its_model_else_says_what_is_missing() {
    let p = two();
    // (remembered here, the archived model, the picker's choice) → (the choice, whether a note says what is missing)
    type Case<'a> = (Option<Choice>, &'a str, Option<Choice>, Choice, bool);
    let cases: Vec<Case> = vec![
        // A new session without a reply yet: the default's default.
        (None, "", None, choice("p1", "demo"), false),
        // Remembered here: used, whatever the archive's model says.
        (Some(choice("p2", "demo")), "demo-large", None, choice("p2", "demo"), false),
        // The picker's choice the first message was sent with.
        (None, "demo-large", Some(choice("p2", "demo-large")), choice("p2", "demo-large"), false),
        (None, "demo", Some(choice("p2", "demo-large")), choice("p1", "demo"), false),
        // Opened on a device that never saw it: the profile made for its model.
        (None, "demo-large", None, choice("p2", "demo-large"), false),
        // No profile for its model here: the default, and a note.
        (None, "gpt-4o", None, choice("p1", "gpt-4o"), true),
        // Its profile deleted since: one for its model, else the default and a note.
        (Some(choice("p7", "demo-large")), "demo-large", None, choice("p2", "demo-large"), false),
        (Some(choice("p7", "gpt-4o")), "gpt-4o", None, choice("p1", "gpt-4o"), true),
    ];
    for (remembered, model, current, expected, missing) in cases {
        let r = p.resolve(remembered.as_ref(), model, current.as_ref());
        assert_eq!(
            (&r.choice, r.missing.is_some()),
            (&expected, missing),
            "{remembered:?} {model:?} {current:?}: {r:?}"
        );
        if let Some(note) = r.missing {
            assert!(
                note.contains(model) && note.contains("Local"),
                "the note names the model and where it goes: {note}"
            );
        }
    }
}
