//! Storage → Recall by meaning: the switch, the model (each with its name, size and licence shown
//! before the first download; another one makes the index again), where the model comes from, the
//! index's progress ("Semantic index: 41,200 of 100,000 turns") and a pause button. The state is
//! polled while the panel is open.

use super::Client;
use crate::chat::DialogState;
use crate::protocol::{model_choice, ops, SemanticPhase, SemanticState, MODEL_CHOICES};
use cowork_core::semantic::SemanticSettings;
use leptos::prelude::*;

/// How often the panel asks where indexing stands while it is open.
const POLL_MS: i32 = 1_000;

/// The section of the Storage panel for recall by meaning.
#[component]
pub fn SemanticSection() -> impl IntoView {
    let dialogs = DialogState::get();
    let client = expect_context::<Client>();
    let state = RwSignal::new(None::<SemanticState>);
    let error = RwSignal::new(String::new());
    let url = RwSignal::new(String::new());
    // Poll while the panel is open; each opening starts one loop, which ends when it closes.
    Effect::new(move |_| {
        if !dialogs.storage_open.get() {
            return;
        }
        let Some(c) = client.with_value(|c| c.clone()) else { return };
        leptos::task::spawn_local(async move {
            let mut first = true;
            while dialogs.storage_open.try_get_untracked().unwrap_or(false) {
                if let Ok(s) = c.call(ops::SemanticStatus).await {
                    if first {
                        url.try_set(s.settings.model_url.clone());
                        first = false;
                    }
                    state.try_set(Some(s));
                }
                sleep(POLL_MS).await;
            }
        });
    });
    let save = move |settings: SemanticSettings| {
        let Some(c) = client.with_value(|c| c.clone()) else { return };
        leptos::task::spawn_local(async move {
            match c.call(ops::SetSemantic { settings }).await {
                Ok(s) => {
                    error.try_set(String::new());
                    state.try_set(Some(s));
                }
                Err(e) => {
                    error.try_set(e.to_string());
                }
            }
        });
    };
    let settings = move || state.get().map(|s| s.settings).unwrap_or_default();
    let enabled = move || settings().enabled;
    let paused = move || settings().paused;
    let summary = move || state.get().map(|s| s.summary()).unwrap_or_default();
    let failed = move || state.get().is_some_and(|s| matches!(s.phase, SemanticPhase::Failed { .. }));
    let progress = move || {
        state.get().and_then(|s| match s.phase {
            SemanticPhase::Downloading { loaded, total } if total > 0 => Some((loaded, total)),
            SemanticPhase::Indexing | SemanticPhase::Paused => Some((s.progress.indexed, s.progress.total.max(1))),
            _ => None,
        })
    };
    let chosen = move || model_choice(&settings().model);
    view! {
        <section class="semantic-section" aria-label="Recall by meaning">
            <h3>"Recall by meaning"</h3>
            <p class="hint">"Finds what you meant, not only the words you typed: Ctrl/Cmd+K and the model's recall search \
                by meaning too. The model chosen below is downloaded once and kept in this browser, so it works offline \
                afterwards. It runs on this device only; its index is never synced or exported."</p>
            <label class="check">
                <input type="checkbox" aria-label="Search by meaning" prop:checked=enabled
                    on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        save(SemanticSettings { enabled: on, paused: false, model_url: url.get_untracked(), ..settings() });
                    } />
                "Search by meaning (downloads the model the first time)"
            </label>
            <label class="field">"Model (another one makes the index again)"
                <select aria-label="Embedding model" inner_html=options() prop:value=move || chosen().model.id
                    on:change=move |ev| save(SemanticSettings { model: event_target_value(&ev), ..settings() })>
                </select>
            </label>
            <details class="advanced">
                <summary>"Model source"</summary>
                <label>"Folder URL of the model's files (empty: served with the app, else the model's public repository)"
                    <input type="url" aria-label="Model folder URL" prop:value=move || url.get()
                        on:change=move |ev| {
                            url.set(event_target_value(&ev));
                            if enabled() {
                                save(SemanticSettings { model_url: url.get_untracked(), ..settings() });
                            }
                        } />
                </label>
                <p class="hint">{move || state.get().map(|s| s.model_url).filter(|u| !u.is_empty()).map(|u| format!("In use: {u}"))}</p>
            </details>
            <Show when=enabled>
                <p class="semantic-status" role="status" class:error=failed>{summary}</p>
                <Show when=move || progress().is_some()>
                    <progress class="semantic-progress" aria-label="Semantic index progress"
                        max=move || progress().map(|p| p.1 as f64).unwrap_or(1.0)
                        value=move || progress().map(|p| p.0 as f64).unwrap_or(0.0)></progress>
                </Show>
                <div class="dialog-actions">
                    <button on:click=move |_| save(SemanticSettings { paused: !paused(), ..settings() })>
                        {move || if paused() { "Resume indexing" } else { "Pause indexing" }}
                    </button>
                </div>
            </Show>
            <p class="error" role="alert">{move || error.get()}</p>
        </section>
    }
}

async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// The model list's options, as markup (one string instead of an element per model: smaller code).
fn options() -> String {
    MODEL_CHOICES.iter().map(|m| format!("<option value=\"{}\">{}</option>", m.model.id, m.label)).collect()
}
