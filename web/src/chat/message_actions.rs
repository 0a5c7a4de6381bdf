//! A message's actions as a row of icon buttons under it: Copy, Edit (a message of the user's) or
//! Regenerate (a reply), Fork from here. Each has an accessible name and a tooltip; the row shows on
//! hover or keyboard focus, and always under the last reply and on touch screens (app.css).

use super::branches::BranchButton;
use super::icons::{icon, Icon};
use super::sidebar::SessionAction;
use super::state::ChatState;
use cowork_core::Role;
use leptos::prelude::*;

/// The row of actions under turn `n`.
#[component]
pub fn MessageActions(
    /// The turn number.
    n: i64,
    /// Whose message it is: Edit for the user's, Regenerate for a reply.
    role: Role,
    /// The message's text as archived (what Copy copies).
    content: String,
    /// Fork at this turn.
    on_action: Callback<SessionAction>,
) -> impl IntoView {
    let state = ChatState::get();
    let fork = move |_| {
        if let Some(id) = state.current.get_untracked() {
            on_action.run(SessionAction::Fork { id, at_turn: n })
        }
    };
    let branch =
        matches!(role, Role::User | Role::Assistant).then(|| view! { <BranchButton n=n user=role == Role::User /> });
    view! {
        <div class="turn-actions" role="group" aria-label="Message actions">
            {copy_message_button(content)}
            {branch}
            <button class="turn-action fork-message" aria-label="Fork from here"
                title="Fork from here: a new session with the conversation up to this message" on:click=fork>
                {icon(Icon::Fork)}
            </button>
        </div>
    }
}

/// "Copy" on a turn: copies the message's text exactly as archived (Markdown source for a reply); the
/// button then says "Copied" (or "Copy failed") by its name, its tooltip and its icon.
fn copy_message_button(content: String) -> impl IntoView {
    let label = RwSignal::new("Copy");
    let copy = move |_| {
        #[cfg(target_arch = "wasm32")]
        {
            let copied = window().navigator().clipboard().write_text(&content);
            leptos::task::spawn_local(async move {
                let done = wasm_bindgen_futures::JsFuture::from(copied).await.is_ok();
                label.set(if done { "Copied" } else { "Copy failed" });
            });
        }
        #[cfg(not(target_arch = "wasm32"))]
        let _ = &content;
    };
    let tip = move || match label.get() {
        "Copy" => "Copy this message's text".to_owned(),
        said => said.to_owned(),
    };
    view! {
        <button class="turn-action copy-message" aria-label=move || label.get() title=tip on:click=copy>
            {move || icon(if label.get() == "Copied" { Icon::Copied } else { Icon::Copy })}
        </button>
    }
}
