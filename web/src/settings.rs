//! The user's model and orchestrator settings: validated here, stored in the browser's local storage
//! (apart from the archive: the API key is never exported, logged or put in a URL). The app keeps
//! several provider profiles (`profiles.rs`); one [`ModelSettings`] is what a request is sent with.

mod profiles;

pub use cowork_core::provider::{ListedModel, ModelSettings, ProviderKind};
pub use profiles::{Choice, Preset, Profile, ProfileError, Profiles, Resolved, PRESETS};

/// Local-storage key of the single settings of earlier versions (read once into a first profile,
/// and still written with the default profile's settings, for tabs of an earlier version).
pub const STORAGE_KEY: &str = "cowork.settings";
/// Local-storage key of the provider profiles ([`Profiles`] as JSON).
pub const PROFILES_KEY: &str = "cowork.profiles";
/// Local-storage key of the profile and model each session uses in this browser (a JSON array of
/// `[session id, Choice]` pairs, oldest first).
pub const CHOICES_KEY: &str = "cowork.session-models";
/// The model name that marks the dev server's scripted model.
pub const DEMO_MODEL: &str = "demo";

/// The dev server's demo model and orchestrator on `origin` (e.g. `http://127.0.0.1:8080`).
pub fn demo(origin: &str) -> ModelSettings {
    ModelSettings {
        kind: ProviderKind::OpenAi,
        base_url: format!("{origin}/v1"),
        model: DEMO_MODEL.into(),
        orchestrator_url: origin.to_owned(),
        ..ModelSettings::default()
    }
}

/// Whether these settings point at the dev server's scripted model.
pub fn is_demo(s: &ModelSettings) -> bool {
    s.model == DEMO_MODEL
}

/// What the worker gets for one message: the settings with the text fields trimmed.
pub fn trimmed(s: &ModelSettings) -> ModelSettings {
    ModelSettings {
        base_url: s.base_url.trim().to_owned(),
        model: s.model.trim().to_owned(),
        api_key: s.api_key.trim().to_owned(),
        orchestrator_url: s.orchestrator_url.trim().to_owned(),
        ..s.clone()
    }
}

/// A problem with one field, said so that the user knows what to type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The `ModelSettings` field at fault (`base_url`, `model`, …).
    pub field: &'static str,
    /// What is wrong and what to type instead.
    pub message: String,
}

fn is_http_url(s: &str) -> bool {
    let s = s.trim();
    let rest = s.strip_prefix("https://").or_else(|| s.strip_prefix("http://"));
    rest.is_some_and(|r| !r.is_empty() && !r.starts_with('/') && !r.contains(char::is_whitespace))
}

/// Checks the settings; an empty list means they can be saved.
pub fn validate(s: &ModelSettings) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut err = |field, message: &str| errors.push(FieldError { field, message: message.to_owned() });
    if !is_http_url(&s.base_url) {
        err("base_url", "Enter the endpoint's base URL, starting with https:// (or http:// for a local server), e.g. https://api.openai.com/v1.");
    }
    if s.model.trim().is_empty() {
        err("model", "Enter the model name the endpoint expects, e.g. gpt-4o-mini or claude-sonnet-4-5.");
    }
    if s.kind == ProviderKind::Anthropic && s.api_key.trim().is_empty() {
        err("api_key", "Anthropic needs an API key.");
    }
    if !(1_024..=10_000_000).contains(&s.context_window) {
        err("context_window", "The context window must be between 1,024 and 10,000,000 tokens.");
    }
    if s.output_reserve < 256 || s.output_reserve > s.context_window / 2 {
        err("output_reserve", "Keep between 256 tokens and half the context window free for the reply.");
    }
    if !s.orchestrator_url.trim().is_empty() && !is_http_url(&s.orchestrator_url) {
        err("orchestrator_url", "Enter the orchestrator's URL starting with http:// or https://, or leave it empty.");
    }
    errors
}

/// Saves settings that passed [`validate`].
pub fn save(s: &ModelSettings) -> Result<(), String> {
    let storage = local_storage().ok_or("this browser does not let the page keep settings")?;
    let json = serde_json::to_string(s).map_err(|e| e.to_string())?;
    storage
        .set_item(STORAGE_KEY, &json)
        .map_err(|_| "the settings could not be saved (storage full or blocked)".to_owned())
}

/// The page's local storage; natively (no browser) none, so nothing is kept and the defaults apply.
fn local_storage() -> Option<web_sys::Storage> {
    #[cfg(target_arch = "wasm32")]
    return web_sys::window().and_then(|w| w.local_storage().ok().flatten());
    #[cfg(not(target_arch = "wasm32"))]
    None
}

/// This page's origin (e.g. `http://127.0.0.1:8080`), for the dev server's preset; empty natively.
pub fn origin() -> String {
    #[cfg(target_arch = "wasm32")]
    return web_sys::window().and_then(|w| w.location().origin().ok()).unwrap_or_default();
    #[cfg(not(target_arch = "wasm32"))]
    String::new()
}

/// The saved profiles, else the settings of earlier versions as a first profile, else the demo.
pub fn load_profiles() -> Profiles {
    let storage = local_storage();
    let get = |key| storage.as_ref().and_then(|s| s.get_item(key).ok().flatten());
    let origin = origin();
    Profiles::load(get(PROFILES_KEY).as_deref(), get(STORAGE_KEY).as_deref(), demo(&origin), &origin)
}

/// Saves profiles that have no [`Profiles::problems`] (and the default profile's settings under the
/// earlier key).
pub fn save_profiles(p: &Profiles) -> Result<(), String> {
    let storage = local_storage().ok_or("this browser does not let the page keep settings")?;
    let json = serde_json::to_string(p).map_err(|e| e.to_string())?;
    storage
        .set_item(PROFILES_KEY, &json)
        .map_err(|_| "the settings could not be saved (storage full or blocked)".to_owned())?;
    match p.settings_for(&p.default_choice()) {
        Some(s) => save(&s),
        None => Ok(()),
    }
}

/// The profile and model this browser remembers for `session_id`.
pub fn remembered_choice(session_id: &str) -> Option<Choice> {
    choices().into_iter().find(|(id, _)| id == session_id).map(|(_, c)| c)
}

/// Remembers the profile and model of `session_id` (the [`MAX_REMEMBERED`] sessions chosen last).
pub fn remember_choice(session_id: &str, choice: &Choice) {
    let mut all = choices();
    if all.last().is_some_and(|(id, c)| id == session_id && c == choice) {
        return;
    }
    all.retain(|(id, _)| id != session_id);
    all.push((session_id.to_owned(), choice.clone()));
    let skip = all.len().saturating_sub(MAX_REMEMBERED);
    if let (Some(storage), Ok(json)) = (local_storage(), serde_json::to_string(&all[skip..])) {
        let _ = storage.set_item(CHOICES_KEY, &json); // a choice not remembered is simply chosen again
    }
}

/// How many sessions' choices are remembered (those chosen last).
pub const MAX_REMEMBERED: usize = 1_000;

/// The remembered choices, oldest first, as `[session id, choice]` pairs.
fn choices() -> Vec<(String, Choice)> {
    local_storage()
        .and_then(|s| s.get_item(CHOICES_KEY).ok().flatten())
        .and_then(|json| serde_json::from_str(&json).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(s: &ModelSettings) -> Vec<&'static str> {
        validate(s).into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn the_demo_is_valid() {
        assert_eq!(fields(&demo("http://127.0.0.1:8080")), Vec::<&str>::new());
    }

    #[test]
    fn each_bad_field_is_named() {
        let ok = demo("http://localhost:8080");
        let cases: Vec<(ModelSettings, &str)> = vec![
            (ModelSettings { base_url: "api.openai.com/v1".into(), ..ok.clone() }, "base_url"),
            (ModelSettings { base_url: "https://".into(), ..ok.clone() }, "base_url"),
            (ModelSettings { model: "  ".into(), ..ok.clone() }, "model"),
            (ModelSettings { kind: ProviderKind::Anthropic, ..ok.clone() }, "api_key"),
            (ModelSettings { context_window: 20_000_000, ..ok.clone() }, "context_window"),
            (ModelSettings { output_reserve: 20_000, ..ok.clone() }, "output_reserve"),
            (ModelSettings { orchestrator_url: "loom".into(), ..ok.clone() }, "orchestrator_url"),
        ];
        for (s, field) in cases {
            assert_eq!(fields(&s), [field], "{s:?}");
        }
        assert!(
            validate(&ModelSettings { orchestrator_url: String::new(), ..ok }).is_empty(),
            "no orchestrator is fine"
        );
    }

    #[test]
    fn saved_settings_load_back_and_requests_get_trimmed_values() {
        let s = ModelSettings { api_key: " sk-secret ".into(), model: " gpt-test ".into(), ..demo("http://x") };
        let back: ModelSettings = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
        let m = trimmed(&s);
        assert_eq!((m.api_key.as_str(), m.model.as_str()), ("sk-secret", "gpt-test"));
        let old: ModelSettings = serde_json::from_str(r#"{"model":"m"}"#).unwrap();
        assert_eq!(old.context_window, 32_768, "fields missing from older saved settings take defaults");
    }

    #[test]
    fn an_unknown_endpoint_kind_is_refused_not_read_as_openai() {
        let err = serde_json::from_str::<ModelSettings>(r#"{"kind":"gemini","model":"m"}"#).unwrap_err();
        assert!(err.to_string().contains("unknown variant `gemini`"), "{err}");
        let anthropic: ModelSettings = serde_json::from_str(r#"{"kind":"anthropic"}"#).unwrap();
        assert_eq!(anthropic.kind, ProviderKind::Anthropic);
    }
}
