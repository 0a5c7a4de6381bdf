//! Provider profiles: several saved endpoints (name, kind, base URL, key, default model), the presets
//! that fill one in, which profile and model a session uses, and the migration of the single saved
//! [`ModelSettings`] of earlier versions. Pure: stored by `settings.rs`, shown by the Settings dialog
//! and the header's model picker.

use super::{validate, FieldError, ModelSettings, ProviderKind};
use serde::{Deserialize, Serialize};

/// One saved endpoint. Its `settings` hold everything but the orchestrator (shared by all profiles,
/// [`Profiles::orchestrator_url`]); `settings.model` is the profile's default model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// Stable within this browser (`p1`, `p2`, …); sessions remember their profile by it.
    pub id: String,
    /// What the user calls it ("Work OpenAI", "Ollama").
    pub name: String,
    /// Endpoint, key, default model and budget.
    pub settings: ModelSettings,
}

/// The saved profiles: the Settings dialog edits them, the header picks among them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profiles {
    /// In the order the user sees them; never empty once loaded.
    pub profiles: Vec<Profile>,
    /// The id of the profile new sessions use.
    pub default_id: String,
    /// The orchestrator for `delegate_task` (empty: no delegation), whatever the profile.
    #[serde(default)]
    pub orchestrator_url: String,
}

/// Which profile and model a session (or the next new conversation) talks to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    /// The profile's id.
    pub profile: String,
    /// The model's name as the endpoint knows it.
    pub model: String,
}

/// What [`Profiles::resolve`] found for a session: the choice to show and send with, and what is
/// missing in this browser when the session's own profile is not here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The profile and model to use.
    pub choice: Choice,
    /// Said beside the picker when the session's profile is not in this browser; `None`: all found.
    pub missing: Option<String>,
}

/// A common endpoint: choosing it fills a profile's kind and base URL (and a model when it has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// Shown in the preset list and given to a new profile as its name.
    pub name: &'static str,
    /// The endpoint's wire format.
    pub kind: ProviderKind,
    /// The base URL; `{origin}` stands for this page's origin (the dev server's demo).
    pub base_url: &'static str,
    /// A model to start with; empty: pick one from the endpoint's list.
    pub model: &'static str,
}

/// The presets, in the order offered.
pub const PRESETS: [Preset; 7] = [
    Preset { name: "OpenAI", kind: ProviderKind::OpenAi, base_url: "https://api.openai.com/v1", model: "gpt-4o-mini" },
    Preset {
        name: "Anthropic",
        kind: ProviderKind::Anthropic,
        base_url: "https://api.anthropic.com/v1",
        model: "claude-sonnet-4-5",
    },
    Preset {
        name: "OpenRouter",
        kind: ProviderKind::OpenAi,
        base_url: "https://openrouter.ai/api/v1",
        model: "openai/gpt-4o-mini",
    },
    Preset { name: "Ollama", kind: ProviderKind::OpenAi, base_url: "http://localhost:11434/v1", model: "llama3.2" },
    Preset { name: "LM Studio", kind: ProviderKind::OpenAi, base_url: "http://localhost:1234/v1", model: "" },
    Preset { name: "llama.cpp server", kind: ProviderKind::OpenAi, base_url: "http://localhost:8080/v1", model: "" },
    Preset { name: "Demo (dev server)", kind: ProviderKind::OpenAi, base_url: "{origin}/v1", model: super::DEMO_MODEL },
];

impl Preset {
    /// The base URL on the page at `origin`.
    pub fn base_url_at(&self, origin: &str) -> String {
        self.base_url.replace("{origin}", origin)
    }

    /// Fills `profile` from the preset: kind and base URL; the model when the profile has none; the
    /// name when it is empty or still another preset's name.
    pub fn fill(&self, profile: &mut Profile, origin: &str) {
        profile.settings.kind = self.kind;
        profile.settings.base_url = self.base_url_at(origin);
        if profile.settings.model.trim().is_empty() {
            profile.settings.model = self.model.to_owned();
        }
        let name = profile.name.trim();
        if name.is_empty() || PRESETS.iter().any(|p| p.name == name) {
            profile.name = self.name.to_owned();
        }
    }

    /// The preset whose base URL `base_url` is (ignoring a trailing slash), if any.
    pub fn matching(base_url: &str, origin: &str) -> Option<&'static Preset> {
        let base = base_url.trim().trim_end_matches('/');
        PRESETS.iter().find(|p| p.base_url_at(origin) == base)
    }
}

/// A problem with one profile's field (the index into [`Profiles::profiles`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileError {
    /// Which profile.
    pub index: usize,
    /// What is wrong with it (`field` is a `ModelSettings` field, or `name`).
    pub error: FieldError,
}

impl Profiles {
    /// One profile made of `settings` (the settings saved by earlier versions, or an embedding page's),
    /// named after its preset or its host; its orchestrator becomes the shared one.
    pub fn from_settings(settings: ModelSettings, origin: &str) -> Profiles {
        let name = match Preset::matching(&settings.base_url, origin) {
            Some(p) => p.name.to_owned(),
            None => host_of(&settings.base_url).unwrap_or("My endpoint").to_owned(),
        };
        let orchestrator_url = settings.orchestrator_url.clone();
        let settings = ModelSettings { orchestrator_url: String::new(), ..settings };
        let first = Profile { id: "p1".into(), name, settings };
        Profiles { default_id: first.id.clone(), profiles: vec![first], orchestrator_url }
    }

    /// What this browser starts with: the profiles saved (`saved`, JSON), else the single settings of
    /// earlier versions (`legacy`, JSON) as a first profile, else `fallback` (the demo) as one.
    /// Saved text that cannot be read, or is not valid, is passed over, never half used.
    pub fn load(saved: Option<&str>, legacy: Option<&str>, fallback: ModelSettings, origin: &str) -> Profiles {
        if let Some(p) = saved.and_then(|j| serde_json::from_str::<Profiles>(j).ok()) {
            if p.problems().is_empty() {
                return p;
            }
        }
        let legacy =
            legacy.and_then(|j| serde_json::from_str::<ModelSettings>(j).ok()).filter(|s| validate(s).is_empty());
        Profiles::from_settings(legacy.unwrap_or(fallback), origin)
    }

    /// The profile with this id.
    pub fn get(&self, id: &str) -> Option<&Profile> {
        self.profiles.iter().find(|p| p.id == id)
    }

    /// The profile new sessions use (the first, should the default be gone).
    pub fn default_profile(&self) -> &Profile {
        self.get(&self.default_id).or(self.profiles.first()).expect("profiles are never empty (a bug otherwise)")
    }

    /// The default profile's default model: what a new conversation starts with.
    pub fn default_choice(&self) -> Choice {
        let p = self.default_profile();
        Choice { profile: p.id.clone(), model: p.settings.model.clone() }
    }

    /// The settings a request is sent with for `choice`, trimmed, with the shared orchestrator; `None`
    /// when its profile is not here.
    pub fn settings_for(&self, choice: &Choice) -> Option<ModelSettings> {
        let p = self.get(&choice.profile)?;
        let model = if choice.model.trim().is_empty() { p.settings.model.clone() } else { choice.model.clone() };
        Some(super::trimmed(&ModelSettings {
            model,
            orchestrator_url: self.orchestrator_url.clone(),
            ..p.settings.clone()
        }))
    }

    /// A new profile (the first preset, an id not yet used) added at the end; returns its index.
    pub fn add(&mut self, origin: &str) -> usize {
        let n = (1..).find(|n| self.get(&format!("p{n}")).is_none()).expect("an unused number");
        let mut profile = Profile { id: format!("p{n}"), name: String::new(), settings: ModelSettings::default() };
        PRESETS[0].fill(&mut profile, origin);
        self.profiles.push(profile);
        self.profiles.len() - 1
    }

    /// Removes the profile at `index`, unless it is the last one; the default moves to the first
    /// profile when it was the one removed. Returns whether it was removed.
    pub fn remove(&mut self, index: usize) -> bool {
        if self.profiles.len() < 2 || index >= self.profiles.len() {
            return false;
        }
        let gone = self.profiles.remove(index);
        if gone.id == self.default_id {
            self.default_id = self.profiles[0].id.clone();
        }
        true
    }

    /// Every problem that keeps the profiles from being saved: each profile's fields (as
    /// [`validate`] finds them), empty or repeated names, the orchestrator URL (reported on the
    /// default profile), a default that is not a profile.
    pub fn problems(&self) -> Vec<ProfileError> {
        let mut out = Vec::new();
        for (index, p) in self.profiles.iter().enumerate() {
            let with_orchestrator =
                ModelSettings { orchestrator_url: self.orchestrator_url.clone(), ..p.settings.clone() };
            for error in validate(&with_orchestrator) {
                if error.field != "orchestrator_url" || p.id == self.default_id {
                    out.push(ProfileError { index, error });
                }
            }
            let name = p.name.trim();
            let message = if name.is_empty() {
                Some("Give the profile a name, e.g. Work OpenAI or Ollama.")
            } else if self.profiles[..index].iter().any(|q| q.name.trim().eq_ignore_ascii_case(name)) {
                Some("Another profile has this name: choose another.")
            } else {
                None
            };
            if let Some(m) = message {
                out.push(ProfileError { index, error: FieldError { field: "name", message: m.to_owned() } });
            }
        }
        if self.get(&self.default_id).is_none() {
            let error = FieldError { field: "default", message: "Choose the profile new sessions use.".to_owned() };
            out.push(ProfileError { index: 0, error });
        }
        out
    }

    /// Which profile and model a session uses, from what this browser remembers for it
    /// (`remembered`: the user's last choice in it), the model the archive holds for it
    /// (`session_model`; empty for a session with no reply yet) and what the picker shows now
    /// (`current`, e.g. the choice the session's first message was sent with):
    /// 1. the remembered choice, when its profile is here;
    /// 2. the current choice, when it is the session's model on a profile that is here;
    /// 3. a profile whose default model is the session's model (the default profile first);
    /// 4. otherwise the default profile with the session's model, and a note of what is missing (the
    ///    remembered profile was deleted, or this browser has no profile for that model: a session
    ///    archived elsewhere); a session with no model yet takes the default profile's default.
    pub fn resolve(&self, remembered: Option<&Choice>, session_model: &str, current: Option<&Choice>) -> Resolved {
        let found = |choice: Choice| Resolved { choice, missing: None };
        if let Some(r) = remembered.filter(|r| self.get(&r.profile).is_some()) {
            return found(r.clone());
        }
        let model = session_model.trim();
        if let Some(c) = current.filter(|c| self.get(&c.profile).is_some() && (model.is_empty() || c.model == model)) {
            return found(c.clone());
        }
        if model.is_empty() {
            return found(self.default_choice());
        }
        let default = self.default_profile();
        let by_model = std::iter::once(default).chain(&self.profiles).find(|p| p.settings.model.trim() == model);
        if let Some(p) = by_model {
            return found(Choice { profile: p.id.clone(), model: model.to_owned() });
        }
        let why = match remembered {
            Some(_) => "the profile it was using here has been deleted",
            None => "no profile in this browser is set up for it",
        };
        Resolved {
            choice: Choice { profile: default.id.clone(), model: model.to_owned() },
            missing: Some(format!(
                "This session was using \u{201c}{model}\u{201d}, but {why}: it goes to \u{201c}{}\u{201d} now, \
                 unless you pick another profile.",
                default.name
            )),
        }
    }
}

/// The host of an `http(s)://host[:port]/…` URL.
fn host_of(url: &str) -> Option<&str> {
    let rest = url.trim().split_once("://")?.1;
    let host = rest.split(['/', '?', '#']).next()?;
    (!host.is_empty()).then_some(host)
}

#[cfg(test)]
mod tests;
