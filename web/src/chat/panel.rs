//! The session panel: what the model is told about the open session (its state register) and how its
//! last request used the context window.

use super::format::{compact, context_meter};
use super::state::{ChatState, DialogState};
use leptos::prelude::*;

/// The session panel: what the model is told about the session (its state register) and how the last
/// request used the context window.
#[component]
pub fn SessionPanel() -> impl IntoView {
    let (state, dialogs) = (ChatState::get(), DialogState::get());
    let body = move || {
        let Some((session, manifest)) = state.details.get() else {
            return view! { <p class="muted">"Open a session to see its state and context."</p> }.into_any();
        };
        let register = cowork_core::state::SessionState::from_json(&session.state);
        let list = |items: Vec<String>, empty: &'static str| {
            if items.is_empty() {
                view! { <p class="muted">{empty}</p> }.into_any()
            } else {
                view! { <ul>{items.into_iter().map(|i| view! { <li>{i}</li> }).collect::<Vec<_>>()}</ul> }.into_any()
            }
        };
        let files = register
            .files_touched
            .iter()
            .map(|f| format!("{} — {} (turn {})", f.path, f.action.as_str(), f.turn))
            .collect();
        let tasks = register.open_tasks.iter().map(|t| format!("{} ({})", t.goal, t.status)).collect();
        let meter = manifest.map(|m| context_meter(&m, session.turn_count));
        view! {
            <section class="panel-section">
                <h3>"Context of the last request"</h3>
                {match meter {
                    Some(m) => view! {
                        <div class="meter" role="meter" aria-label="Context window used"
                            aria-valuemin="0" aria-valuemax=m.budget aria-valuenow=m.used>
                            <div class="meter-fill" style:width=format!("{}%", m.percent)></div>
                        </div>
                        <p class="meter-text">{m.tokens}</p>
                        <p class="meter-text">{m.turns}</p>
                    }.into_any(),
                    None => view! { <p class="muted">"No model request yet."</p> }.into_any(),
                }}
                <p class="muted">{format!(
                    "{} · {} · {} · {} tokens used so far",
                    session.workspace, if session.model.is_empty() { "demo" } else { &session.model },
                    crate::protocol::count(session.turn_count.max(0) as usize, "turn"),
                    compact(session.prompt_tokens + session.completion_tokens)
                )}</p>
            </section>
            <section class="panel-section">
                <h3>"Current focus"</h3>
                {list(if register.current_focus.is_empty() { vec![] } else { vec![register.current_focus.clone()] }, "Nothing yet.")}
                <h3>"Files touched"</h3>
                {list(files, "None yet.")}
                <h3>"Key decisions"</h3>
                {list(register.key_decisions.clone(), "None yet.")}
                <h3>"Errors resolved"</h3>
                {list(register.errors_resolved.clone(), "None yet.")}
                <h3>"Open tasks"</h3>
                {list(tasks, "None.")}
            </section>
        }
        .into_any()
    };
    // Not a modal (the conversation stays usable beside it), but like one the focus moves in when it
    // opens and back to its opener when it closes (Esc or ×).
    let opened = move || {
        let opener = send_wrapper::SendWrapper::new(crate::dom::active_element());
        let close = NodeRef::<leptos::html::Button>::new();
        Effect::new(move |_| {
            if let Some(b) = close.get() {
                let _ = b.focus();
            }
        });
        on_cleanup(move || {
            use wasm_bindgen::JsCast;
            if let Some(el) = opener.take().and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
                if el.is_connected() {
                    let _ = el.focus();
                }
            }
        });
        view! {
            <aside class="session-panel" aria-label="Session state">
                <header class="panel-head">
                    <h2>"Session"</h2>
                    <button class="panel-close" node_ref=close aria-label="Close the session panel (Esc)"
                        on:click=move |_| dialogs.panel_open.set(false)>"×"</button>
                </header>
                {body}
            </aside>
        }
    };
    view! {
        <Show when=move || dialogs.panel_open.get()>
            {opened}
        </Show>
    }
}
