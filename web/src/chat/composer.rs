//! The notice line (what is happening, or what went wrong and where to fix it) and the composer.

use super::format::Fix;
use super::state::{ChatState, DialogState};
use leptos::prelude::*;

/// The last notice, with the place that fixes it when its kind has one ("Open Settings").
#[component]
pub fn NoticeLine() -> impl IntoView {
    let (state, dialogs) = (ChatState::get(), DialogState::get());
    move || {
        state.notice.get().map(|n| {
            let fix = n.fix().map(|f| {
                let label = match f {
                    Fix::Settings => "Open Settings",
                    Fix::Storage => "Open Storage",
                };
                view! {
                    <button class="notice-fix" on:click=move |_| match f {
                        Fix::Settings => dialogs.settings_open.set(true),
                        Fix::Storage => dialogs.storage_open.set(true),
                    }>{label}</button>
                }
            });
            view! { <div class="notice" role="alert"><span>{n.text}</span>{fix}</div> }
        })
    }
}

/// The message box: Enter sends, Shift+Enter starts a new line, ↑ when empty edits the last message;
/// Stop while a reply runs.
#[component]
pub fn Composer(
    /// Send the draft.
    on_send: Callback<()>,
    /// Stop the reply.
    on_stop: Callback<()>,
) -> impl IntoView {
    let state = ChatState::get();
    let send_on_enter = move |ev: web_sys::KeyboardEvent| {
        if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
            ev.prevent_default();
            on_send.run(());
        } else if ev.key() == "ArrowUp" && state.draft.get_untracked().is_empty() && !state.busy.get_untracked() {
            // ↑ in an empty message box edits the last message of the user's in view.
            let last = state
                .turns
                .with_untracked(|t| t.iter().rev().find(|t| t.role == cowork_core::Role::User).map(|t| t.turn_number));
            if let Some(n) = last {
                ev.prevent_default();
                state.editing.set(Some(n));
            }
        }
    };
    view! {
        <form class="composer" on:submit=move |ev| { ev.prevent_default(); on_send.run(()); }>
            <label class="visually-hidden" for="composer-input">"Message"</label>
            <textarea
                id="composer-input"
                rows="3"
                placeholder="Message Cowork (Enter sends, Shift+Enter for a new line)"
                prop:value=move || state.draft.get()
                on:input=move |ev| state.draft.set(event_target_value(&ev))
                on:keydown=send_on_enter
            ></textarea>
            <Show
                when=move || state.busy.get()
                fallback=move || view! {
                    <button type="submit" class="send" disabled=move || state.draft.get().trim().is_empty()>"Send"</button>
                }
            >
                <button type="button" class="stop" on:click=move |_| on_stop.run(())>"Stop"</button>
            </Show>
        </form>
    }
}
