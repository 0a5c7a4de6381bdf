//! The Settings dialog: the provider profiles (add one from a preset, edit, delete, choose the default
//! for new sessions, test each), and the orchestrator shared by all. Saved only when every profile is
//! valid; keys stay in this browser.

use super::providers::{ModelList, Providers};
use super::state::{ChatState, DialogState};
use crate::settings::{validate, Choice, ModelSettings, ProfileError, Profiles, ProviderKind, PRESETS};
use leptos::prelude::*;

/// A mebibyte: attachment sizes are shown (and limited) in the units `format_size` uses.
const MB: u64 = 1024 * 1024;

/// The Settings dialog.
#[component]
pub fn SettingsDialog(
    /// Valid profiles to keep.
    on_save: Callback<Profiles>,
    /// "Test connection" with the shown profile's values (not yet saved).
    on_test: Callback<ModelSettings>,
    /// Open a workspace's settings (by label): the open session's workspace, or new sessions'.
    on_workspace: Callback<String>,
) -> impl IntoView {
    let (state, dialogs, providers) = (ChatState::get(), DialogState::get(), Providers::get());
    let draft = RwSignal::new(providers.profiles.get_untracked());
    let selected = RwSignal::new(0usize);
    let errors = RwSignal::new(Vec::<ProfileError>::new());
    let current_workspace = move || {
        let open = state.current.get();
        state
            .sessions
            .get()
            .into_iter()
            .find(|s| Some(&s.id) == open.as_ref())
            .map(|s| s.workspace)
            .unwrap_or_else(|| state.workspace.get())
    };
    // Opened, it shows the profile the open session uses.
    Effect::new(move |_| {
        if dialogs.settings_open.get() {
            let profiles = providers.profiles.get_untracked();
            let chosen = providers.choice.get_untracked().profile;
            selected.set(profiles.profiles.iter().position(|p| p.id == chosen).unwrap_or(0));
            draft.set(profiles);
            errors.set(Vec::new());
        }
    });
    let edit = move |f: &dyn Fn(&mut ModelSettings)| {
        let i = selected.get_untracked();
        draft.update(|d| {
            if let Some(p) = d.profiles.get_mut(i) {
                f(&mut p.settings)
            }
        })
    };
    let shown = move || draft.with(|d| d.profiles.get(selected.get()).cloned());
    let error_for = move |field: &'static str| {
        move || {
            let i = selected.get();
            errors
                .get()
                .into_iter()
                .find(|e| e.index == i && e.error.field == field)
                .map(|e| view! { <span class="field-error">{e.error.message}</span> })
        }
    };
    let text = move |label: &'static str,
                     field: &'static str,
                     get: fn(&ModelSettings) -> String,
                     set: fn(&mut ModelSettings, String),
                     kind: &'static str| {
        view! {
            <label class="field">
                <span>{label}</span>
                <input type=kind prop:value=move || shown().map(|p| get(&p.settings)).unwrap_or_default()
                    on:input=move |ev| { let v = event_target_value(&ev); edit(&|s| set(s, v.clone())) } />
                {error_for(field)}
            </label>
        }
    };
    let number = move |label: &'static str,
                       field: &'static str,
                       get: fn(&ModelSettings) -> i64,
                       set: fn(&mut ModelSettings, i64)| {
        view! {
            <label class="field">
                <span>{label}</span>
                <input type="number" prop:value=move || shown().map(|p| get(&p.settings).to_string()).unwrap_or_default()
                    on:input=move |ev| { let v = event_target_value(&ev).trim().parse().unwrap_or(0); edit(&|s| set(s, v)) } />
                {error_for(field)}
            </label>
        }
    };
    let origin = crate::settings::origin;
    let apply_preset = move |ev: web_sys::Event| {
        let Some(preset) = event_target_value(&ev).parse::<usize>().ok().and_then(|i| PRESETS.get(i)) else { return };
        let i = selected.get_untracked();
        draft.update(|d| {
            if let Some(p) = d.profiles.get_mut(i) {
                preset.fill(p, &origin())
            }
        });
    };
    let add = move |_| {
        let mut i = 0;
        draft.update(|d| i = d.add(&origin()));
        selected.set(i);
        errors.set(Vec::new());
    };
    let remove = move |_| {
        let i = selected.get_untracked();
        let mut removed = false;
        draft.update(|d| removed = d.remove(i));
        if removed {
            selected.set(i.saturating_sub(1));
            errors.set(Vec::new());
        }
    };
    let save = move |_| {
        let d = draft.get_untracked();
        let problems = d.problems();
        match problems.first() {
            None => on_save.run(d),
            Some(first) => {
                selected.set(first.index);
                errors.set(problems);
            }
        }
    };
    let test = move |_| {
        let d = draft.get_untracked();
        let Some(p) = d.profiles.get(selected.get_untracked()) else { return };
        let settings = d.settings_for(&Choice { profile: p.id.clone(), model: String::new() });
        let problems = validate(&ModelSettings { orchestrator_url: String::new(), ..p.settings.clone() });
        match settings {
            Some(s) if problems.is_empty() => {
                errors.set(Vec::new());
                on_test.run(s);
            }
            _ => errors.set(
                problems.into_iter().map(|error| ProfileError { index: selected.get_untracked(), error }).collect(),
            ),
        }
    };
    let profile_options = move || {
        let (chosen, default_id) = (selected.get(), draft.with(|d| d.default_id.clone()));
        draft.with(|d| {
            d.profiles
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let label = if p.id == default_id { format!("{} (default)", p.name) } else { p.name.clone() };
                    view! { <option value=i.to_string() selected=i == chosen>{label}</option> }
                })
                .collect::<Vec<_>>()
        })
    };
    // The endpoint's models, when the picker has listed them for this profile: offered as suggestions.
    let suggestions = move || {
        let id = shown().map(|p| p.id).unwrap_or_default();
        match providers.lists.with(|l| l.get(&id).cloned()) {
            Some(ModelList::Listed(models)) => {
                models.into_iter().map(|m| view! { <option value=m.id></option> }).collect::<Vec<_>>()
            }
            _ => Vec::new(),
        }
    };
    let is_default = move || shown().is_some_and(|p| draft.with(|d| d.default_id == p.id));
    view! {
        <Show when=move || dialogs.settings_open.get()>
            <div class="overlay">
                <div class="dialog settings" role="dialog" aria-modal="true" aria-labelledby="settings-title"
                    on:keydown=move |ev: web_sys::KeyboardEvent| if ev.key() == "Escape" { dialogs.settings_open.set(false) }>
                    <h2 id="settings-title">"Settings"</h2>
                    <div class="profile-bar">
                        <label class="field">
                            <span>"Provider profile"</span>
                            <select class="profile-choice" prop:value=move || selected.get().to_string()
                                on:change=move |ev| selected.set(event_target_value(&ev).parse().unwrap_or(0))>
                                {profile_options}
                            </select>
                        </label>
                        <button class="secondary add-profile" on:click=add>"Add profile"</button>
                    </div>
                    <label class="field">
                        <span>"Profile name"</span>
                        <input type="text" prop:value=move || shown().map(|p| p.name).unwrap_or_default()
                            on:input=move |ev| {
                                let (v, i) = (event_target_value(&ev), selected.get_untracked());
                                draft.update(|d| if let Some(p) = d.profiles.get_mut(i) { p.name = v })
                            } />
                        {error_for("name")}
                    </label>
                    <label class="field">
                        <span>"Preset: fills in a common endpoint"</span>
                        <select class="preset" prop:value="" on:change=apply_preset>
                            <option value="">"Choose a common endpoint…"</option>
                            {PRESETS.iter().enumerate().map(|(i, p)| view! { <option value=i.to_string()>{p.name}</option> }).collect::<Vec<_>>()}
                        </select>
                    </label>
                    <label class="field">
                        <span>"Endpoint kind"</span>
                        <select prop:value=move || shown().map(|p| p.settings.kind.as_str()).unwrap_or_default() on:change=move |ev| {
                            if let Some(kind) = ProviderKind::parse(&event_target_value(&ev)) {
                                edit(&|s| s.kind = kind)
                            }
                        }>
                            <option value="openai">"OpenAI-compatible (OpenAI, Ollama, vLLM, LM Studio, OpenRouter…)"</option>
                            <option value="anthropic">"Anthropic"</option>
                        </select>
                    </label>
                    {text("Base URL", "base_url", |s| s.base_url.clone(), |s, v| s.base_url = v, "url")}
                    <label class="field">
                        <span>"Default model"</span>
                        <input type="text" list="profile-models" prop:value=move || shown().map(|p| p.settings.model).unwrap_or_default()
                            on:input=move |ev| { let v = event_target_value(&ev); edit(&|s| s.model = v.clone()) } />
                        <datalist id="profile-models">{suggestions}</datalist>
                        {error_for("model")}
                    </label>
                    {text("API key (kept in this browser only, never exported)", "api_key", |s| s.api_key.clone(), |s, v| s.api_key = v, "password")}
                    {number("Context window (tokens)", "context_window", |s| s.context_window, |s, v| s.context_window = v)}
                    {number("Output reserve (tokens)", "output_reserve", |s| s.output_reserve, |s, v| s.output_reserve = v)}
                    {number("Largest attachment (MB per file)", "max_attachment_bytes",
                        |s| (s.attachment_limit() / MB) as i64,
                        |s, v| s.max_attachment_bytes = (v > 0).then(|| v as u64 * MB))}
                    <div class="profile-actions">
                        <label class="checkbox">
                            <input type="checkbox" prop:checked=is_default on:change=move |_| {
                                if let Some(p) = shown() { draft.update(|d| d.default_id = p.id) }
                            } />
                            "New sessions use this profile"
                        </label>
                        <button class="secondary remove-profile" disabled=move || draft.with(|d| d.profiles.len() < 2)
                            on:click=remove>"Delete profile"</button>
                    </div>
                    <label class="field">
                        <span>"Orchestrator URL, for every profile (empty: no delegation)"</span>
                        <input type="url" prop:value=move || draft.with(|d| d.orchestrator_url.clone())
                            on:input=move |ev| { let v = event_target_value(&ev); draft.update(|d| d.orchestrator_url = v) } />
                        {error_for("orchestrator_url")}
                    </label>
                    <p class="workspace-line">
                        <button class="secondary open-workspace-settings" on:click=move |_| on_workspace.run(current_workspace())>
                            {move || format!("Workspace “{}”: orchestrator directory and approvals…", current_workspace())}
                        </button>
                    </p>
                    <p class="connection-result" role="status">{move || dialogs.connection.get()}</p>
                    <div class="dialog-actions">
                        <button class="secondary sync-open" title="Keep this archive on every device through a NATS server, encrypted"
                            on:click=move |_| { dialogs.settings_open.set(false); dialogs.sync_open.set(true) }>"Sync…"</button>
                        <button class="secondary test-connection" on:click=test>"Test connection"</button>
                        <button class="secondary" on:click=move |_| dialogs.settings_open.set(false)>"Cancel"</button>
                        <button class="primary" on:click=save>"Save"</button>
                    </div>
                </div>
            </div>
        </Show>
    }
}
