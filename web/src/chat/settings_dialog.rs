//! The Settings dialog, in sections ([`SettingsSection`]: General, Providers, Workspaces, Data, Sync)
//! with Save always on screen below them. Providers: the provider profiles (add one from a preset, edit, delete, choose the default
//! for new sessions, test each), and the orchestrator shared by all. Saved only when every profile is
//! valid; keys stay in this browser.

use super::modal::Modal;
use super::providers::{ModelList, Providers};
use super::state::{ChatState, DialogState};
use super::workspace::WorkspaceSection;
use crate::settings::{validate, Choice, ModelSettings, ProfileError, Profiles, ProviderKind, PRESETS};
use cowork_core::WorkspaceSettings;
use leptos::prelude::*;

/// The fields under "Advanced" (shown unfolded when one of them is wrong).
const ADVANCED: [&str; 3] = ["context_window", "output_reserve", "max_attachment_bytes"];

/// A mebibyte: attachment sizes are shown (and limited) in the units `format_size` uses.
const MB: u64 = 1024 * 1024;

/// The Settings dialog.
#[component]
pub fn SettingsDialog(
    /// Valid profiles to keep.
    on_save: Callback<Profiles>,
    /// "Test connection" with the shown profile's values (not yet saved).
    on_test: Callback<ModelSettings>,
    /// Loads a workspace's settings (by label) into the Workspaces section.
    on_workspace: Callback<String>,
    /// Saves a workspace's settings.
    on_save_workspace: Callback<WorkspaceSettings>,
    /// Starts (`Some`) or stops (`None`) sync with these settings, already saved.
    on_sync: Callback<Option<crate::protocol::SyncSettings>>,
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
    let section = dialogs.settings_section;
    let close = move || dialogs.settings_open.set(false);
    let providers_section = move || {
        view! {
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
            // The numbers most people never change, folded away (open when one of them is wrong).
            <details class="advanced" prop:open=move || errors.with(|e| e.iter().any(|e| ADVANCED.contains(&e.error.field)))>
                <summary>"Advanced: token budgets and attachment size"</summary>
                {number("Context window (tokens)", "context_window", |s| s.context_window, |s, v| s.context_window = v)}
                {number("Output reserve (tokens)", "output_reserve", |s| s.output_reserve, |s, v| s.output_reserve = v)}
                {number("Largest attachment (MB per file)", "max_attachment_bytes",
                    |s| (s.attachment_limit() / MB) as i64,
                    |s, v| s.max_attachment_bytes = (v > 0).then(|| v as u64 * MB))}
            </details>
            <div class="profile-actions">
                <label class="checkbox">
                    <input type="checkbox" prop:checked=is_default on:change=move |_| {
                        if let Some(p) = shown() { draft.update(|d| d.default_id = p.id) }
                    } />
                    "New sessions use this profile"
                </label>
                <button class="secondary remove-profile" disabled=move || draft.with(|d| d.profiles.len() < 2)
                    on:click=remove>"Delete profile"</button>
                <button class="secondary test-connection" on:click=test>"Test connection"</button>
            </div>
            <p class="connection-result" role="status">{move || dialogs.connection.get()}</p>
        }
    };
    let general_section = move || {
        view! {
            <label class="field">
                <span>"Orchestrator URL, for every profile (empty: no delegation)"</span>
                <input type="url" prop:value=move || draft.with(|d| d.orchestrator_url.clone())
                    on:input=move |ev| { let v = event_target_value(&ev); draft.update(|d| d.orchestrator_url = v) } />
                {move || errors.get().into_iter().find(|e| e.error.field == "orchestrator_url")
                    .map(|e| view! { <span class="field-error">{e.error.message}</span> })}
            </label>
            <p class="hint">"The provider profiles (endpoints, models, keys) are under Providers; each workspace's \
                orchestrator directory and approvals under Workspaces."</p>
        }
    };
    let data_section = move || {
        view! {
            <p class="hint">"Your sessions live in this browser (SQLite on its private file system). Export them, import \
                other apps' conversations, check the archive, keep backups and manage recall by meaning in Storage."</p>
            <div class="dialog-actions start">
                <button class="secondary open-storage" on:click=move |_| { close(); dialogs.integrity.set(None); dialogs.storage_open.set(true) }>
                    "Open Storage…"
                </button>
            </div>
        }
    };
    let body = move || {
        match section.get() {
        SettingsSection::General => general_section().into_any(),
        SettingsSection::Providers => providers_section().into_any(),
        SettingsSection::Workspaces => view! {
            <WorkspaceSection current=Signal::derive(current_workspace) on_load=on_workspace on_save=on_save_workspace />
        }.into_any(),
        SettingsSection::Data => data_section().into_any(),
        SettingsSection::Sync => view! { <crate::app::sync::SyncSection on_apply=on_sync /> }.into_any(),
        SettingsSection::Tools => view! { <crate::app::tools::ToolsSection /> }.into_any(),
    }
    };
    // Left and right arrows (or up and down) move between the sections, as in a tab list.
    let tab_keys = move |ev: web_sys::KeyboardEvent| {
        let all = SettingsSection::ALL;
        let at = all.iter().position(|s| *s == section.get_untracked()).unwrap_or(0);
        let next = match ev.key().as_str() {
            "ArrowDown" | "ArrowRight" => (at + 1) % all.len(),
            "ArrowUp" | "ArrowLeft" => (at + all.len() - 1) % all.len(),
            _ => return,
        };
        ev.prevent_default();
        section.set(all[next]);
        crate::dom::focus(&format!("#settings-tab-{}", all[next].key()));
    };
    view! {
        <Show when=move || dialogs.settings_open.get()>
            <Modal on_close=Callback::new(move |_| close()) class="settings" labelled_by="settings-title">
                <h2 id="settings-title">"Settings"</h2>
                <div class="settings-layout">
                    <div class="settings-tabs" role="tablist" aria-label="Settings sections" aria-orientation="vertical"
                        on:keydown=tab_keys>
                        {SettingsSection::ALL.into_iter().map(|s| view! {
                            <button role="tab" id=format!("settings-tab-{}", s.key()) aria-controls="settings-panel"
                                aria-selected=move || (section.get() == s).to_string()
                                tabindex=move || if section.get() == s { "0" } else { "-1" }
                                on:click=move |_| section.set(s)>{s.label()}</button>
                        }).collect_view()}
                    </div>
                    <div class="settings-body" id="settings-panel" role="tabpanel"
                        aria-labelledby=move || format!("settings-tab-{}", section.get().key())>
                        {body}
                    </div>
                </div>
                // Always on screen, however long the section.
                <div class="dialog-actions settings-footer">
                    <button class="secondary" on:click=move |_| close()>"Cancel"</button>
                    <button class="primary" on:click=save>"Save"</button>
                </div>
            </Modal>
        </Show>
    }
}

/// The sections of Settings, in the order of its list. A new section (Tools, Semantic recall) is one
/// entry here and one arm in [`SettingsDialog`]'s body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SettingsSection {
    /// What every profile shares (the orchestrator).
    General,
    /// The provider profiles: endpoints, models, keys, token budgets.
    #[default]
    Providers,
    /// Each workspace's orchestrator directory, approvals and sync scope; new workspaces.
    Workspaces,
    /// Where the archive lives, and the way to Storage (export, import, check, backups).
    Data,
    /// Sync across devices.
    Sync,
    /// MCP servers: their tools, resources and prompts, and each tool's approval.
    Tools,
}

impl SettingsSection {
    /// Every section, in the order shown.
    pub const ALL: [SettingsSection; 6] = [
        SettingsSection::General,
        SettingsSection::Providers,
        SettingsSection::Workspaces,
        SettingsSection::Tools,
        SettingsSection::Data,
        SettingsSection::Sync,
    ];

    /// Its name in the list.
    pub fn label(self) -> &'static str {
        match self {
            SettingsSection::General => "General",
            SettingsSection::Providers => "Providers",
            SettingsSection::Workspaces => "Workspaces",
            SettingsSection::Data => "Data",
            SettingsSection::Sync => "Sync",
            SettingsSection::Tools => "Tools",
        }
    }

    /// Its name in element ids.
    pub fn key(self) -> &'static str {
        match self {
            SettingsSection::General => "general",
            SettingsSection::Providers => "providers",
            SettingsSection::Workspaces => "workspaces",
            SettingsSection::Data => "data",
            SettingsSection::Sync => "sync",
            SettingsSection::Tools => "tools",
        }
    }
}
