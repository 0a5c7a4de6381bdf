//! Which provider profile and model the open session talks to: the state ([`Providers`], provided as
//! Leptos context), how it follows the open session ([`follow_session`]), and the header's picker
//! ([`ModelPicker`]) with the endpoint's model list, or free text and the reason when there is none.

use super::modal::Modal;
use super::state::ChatState;
use crate::settings::{Choice, ListedModel, Profiles};
use leptos::prelude::*;
use std::collections::HashMap;

/// An endpoint's model list as the picker knows it.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelList {
    /// Asked, not answered yet.
    Loading,
    /// What the endpoint lists.
    Listed(Vec<ListedModel>),
    /// Why there is no list (the picker takes free text instead).
    Failed(String),
}

/// The profiles and the open session's choice among them.
#[derive(Clone, Copy)]
pub struct Providers {
    /// The saved profiles (this browser's), or an embedding page's settings as one profile.
    pub profiles: RwSignal<Profiles>,
    /// The profile and model the open session (or the next new conversation) uses.
    pub choice: RwSignal<Choice>,
    /// Said beside the picker when the open session's profile is not in this browser.
    pub missing: RwSignal<Option<String>>,
    /// Each profile's model list (by profile id), once asked.
    pub lists: RwSignal<HashMap<String, ModelList>>,
    /// The picker's menu is open.
    pub picker_open: RwSignal<bool>,
    /// Whether profile changes are saved in this browser (not for an embedding page's settings).
    pub persistent: bool,
}

impl Providers {
    /// `profiles` with their default chosen; `persistent`: saved in this browser.
    pub fn new(profiles: Profiles, persistent: bool) -> Providers {
        Providers {
            choice: RwSignal::new(profiles.default_choice()),
            profiles: RwSignal::new(profiles),
            missing: RwSignal::new(None),
            lists: RwSignal::new(HashMap::new()),
            picker_open: RwSignal::new(false),
            persistent,
        }
    }

    /// The providers the app provided as context.
    pub fn get() -> Providers {
        expect_context::<Providers>()
    }

    /// The name of the chosen profile.
    pub fn profile_name(&self) -> String {
        let choice = self.choice.get();
        self.profiles.with(|p| p.get(&choice.profile).map(|p| p.name.clone())).unwrap_or_default()
    }
}

/// Keeps the choice in step with the open session (its remembered or archived model, see
/// [`Profiles::resolve`]; a new conversation takes the default profile's default model) and the
/// settings replies are sent with ([`ChatState::settings`]) in step with the choice.
pub fn follow_session(chat: ChatState, providers: Providers) {
    Effect::new(move |previous: Option<Option<String>>| {
        let current = chat.current.get();
        let profiles = providers.profiles.get();
        let chosen = providers.choice.get_untracked();
        match &current {
            None => {
                let kept = previous == Some(None) && profiles.get(&chosen.profile).is_some();
                if !kept {
                    providers.choice.set(profiles.default_choice());
                }
                providers.missing.set(None);
            }
            Some(id) => {
                let model = chat.sessions.with(|s| s.iter().find(|s| &s.id == id).map(|s| s.model.clone()));
                let resolved = profiles.resolve(remembered(id).as_ref(), &model.unwrap_or_default(), Some(&chosen));
                if resolved.choice != chosen {
                    providers.choice.set(resolved.choice);
                }
                providers.missing.set(resolved.missing);
            }
        }
        current
    });
    Effect::new(move |_| {
        let choice = providers.choice.get();
        let settings =
            providers.profiles.with(|p| p.settings_for(&choice).or_else(|| p.settings_for(&p.default_choice())));
        if let Some(s) = settings {
            chat.settings.set(s);
        }
    });
}

#[cfg(target_arch = "wasm32")]
fn remembered(session_id: &str) -> Option<Choice> {
    crate::settings::remembered_choice(session_id)
}

#[cfg(not(target_arch = "wasm32"))]
fn remembered(_: &str) -> Option<Choice> {
    None
}

/// The header's model picker: the profile and model of the open session, switchable at any time (the
/// next message goes to the new choice).
#[component]
pub fn ModelPicker(
    /// The user chose this profile and model.
    on_choose: Callback<Choice>,
    /// Fetch this profile's model list (by id).
    on_list: Callback<String>,
) -> impl IntoView {
    let providers = Providers::get();
    let open = providers.picker_open;
    let choice = providers.choice;
    let list_for = move |id: &str| providers.lists.with(|l| l.get(id).cloned());
    let ask_list = move |id: String| {
        if !matches!(list_for(&id), Some(ModelList::Loading | ModelList::Listed(_))) {
            on_list.run(id);
        }
    };
    let toggle = move |_| {
        open.update(|o| *o = !*o);
        if open.get_untracked() {
            ask_list(choice.get_untracked().profile);
        }
    };
    let model_text = move || {
        let m = choice.get().model;
        if m == crate::settings::DEMO_MODEL {
            "demo model".to_owned()
        } else {
            m
        }
    };
    let choose_profile = move |ev: web_sys::Event| {
        let id = event_target_value(&ev);
        let model = providers.profiles.with_untracked(|p| p.get(&id).map(|p| p.settings.model.clone()));
        if let Some(model) = model {
            on_choose.run(Choice { profile: id.clone(), model });
            ask_list(id);
        }
    };
    let choose_model = move |ev: web_sys::Event| {
        let model = event_target_value(&ev).trim().to_owned();
        if !model.is_empty() {
            on_choose.run(Choice { model, ..choice.get_untracked() });
        }
    };
    let model_field = move || {
        let c = choice.get();
        match list_for(&c.profile) {
            Some(ModelList::Listed(models)) if !models.is_empty() => {
                let unlisted = (!models.iter().any(|m| m.id == c.model)).then(|| {
                    view! { <option value=c.model.clone() selected=true>{format!("{} (not listed)", c.model)}</option> }
                });
                let options = models
                    .into_iter()
                    .map(|m| {
                        let label = match &m.display_name {
                            Some(name) => format!("{name} ({})", m.id),
                            None => m.id.clone(),
                        };
                        view! { <option value=m.id.clone() selected=m.id == c.model>{label}</option> }
                    })
                    .collect::<Vec<_>>();
                view! {
                    <select class="model-select" aria-label="Model" prop:value=c.model.clone() on:change=choose_model>
                        {unlisted}{options}
                    </select>
                }
                .into_any()
            }
            _ => view! {
                <input class="model-input" type="text" aria-label="Model" prop:value=c.model.clone()
                    placeholder="the model's name, e.g. gpt-4o-mini" on:change=choose_model />
            }
            .into_any(),
        }
    };
    let list_note = move || {
        match list_for(&choice.get().profile) {
        Some(ModelList::Loading) => Some(view! { <p class="model-list-note" role="status">"Listing the endpoint's models…"</p> }.into_any()),
        Some(ModelList::Failed(why)) => Some(view! {
            <p class="model-list-note model-list-failed" role="status">
                {format!("No model list: {why} Type the model's name instead.")}
            </p>
        }.into_any()),
        Some(ModelList::Listed(models)) if models.is_empty() => {
            Some(view! { <p class="model-list-note" role="status">"The endpoint lists no models: type the model's name."</p> }.into_any())
        }
        _ => None,
    }
    };
    let profile_options = move || {
        let c = choice.get();
        providers.profiles.with(|p| {
            p.profiles
                .iter()
                .map(|p| view! { <option value=p.id.clone() selected=p.id == c.profile>{p.name.clone()}</option> })
                .collect::<Vec<_>>()
        })
    };
    view! {
        <div class="model-picker">
            <button class="header-button model-button" aria-haspopup="dialog" aria-expanded=move || open.get().to_string()
                title="The profile and model this session's next message goes to (click to change)" on:click=toggle>
                // Its name is its visible words (axe: label-content-name-mismatch), "Model:" read first.
                <span class="visually-hidden">"Model: "</span>
                <span class="profile-label">{move || providers.profile_name()}</span>
                <span class="visually-hidden">" "</span>
                <span class="model-label">{model_text}</span>
                {move || providers.missing.get().map(|m| view! { <span class="model-missing" title=m>"!"</span> })}
            </button>
            <Show when=move || open.get()>
                <Modal on_close=Callback::new(move |_| open.set(false)) overlay_class="popover" class="model-menu"
                    label="Model for this session">
                    {move || providers.missing.get().map(|m| view! { <p class="model-missing-note" role="alert">{m}</p> })}
                    <label class="field">
                        <span>"Profile"</span>
                        <select class="profile-select" prop:value=move || choice.get().profile on:change=choose_profile>
                            {profile_options}
                        </select>
                    </label>
                    <label class="field">
                        <span>"Model"</span>
                        {model_field}
                    </label>
                    {list_note}
                    <div class="dialog-actions">
                        <button class="secondary" title="Ask the endpoint for its models again"
                            on:click=move |_| on_list.run(choice.get_untracked().profile)>"Refresh list"</button>
                        <button class="primary" on:click=move |_| open.set(false)>"Done"</button>
                    </div>
                </Modal>
            </Show>
        </div>
    }
}
