//! Edit and regenerate, as branches: "Edit" on a user message and "Regenerate" on a reply fork the
//! session just before that turn (nothing in the archive is rewritten) and continue there; where
//! branches diverge the turn shows "‹ 2 / 3 ›" and switches between them in place.

use super::icons::{icon, Icon};
use super::state::ChatState;
use leptos::prelude::*;

/// What the turn controls of this module do, provided as Leptos context by the app.
#[derive(Clone, Copy)]
pub struct BranchActions {
    /// Open a session (another branch).
    pub open: Callback<String>,
    /// Send new text for user turn `.0`, as a branch.
    pub edit: Callback<(i64, String)>,
    /// Answer reply `.0` again, as a branch.
    pub regenerate: Callback<i64>,
}

/// Where turn `n` stands among its branches, as the switcher shows it: (1-based position, count, the
/// session before, the session after).
pub fn position(points: &[cowork_core::BranchPoint], n: i64) -> Option<(usize, usize, Option<String>, Option<String>)> {
    let p = points.iter().find(|p| p.turn_number == n)?;
    let prev = p.current.checked_sub(1).and_then(|i| p.sessions.get(i)).cloned();
    let next = p.sessions.get(p.current + 1).cloned();
    Some((p.current + 1, p.sessions.len(), prev, next))
}

/// "‹ 2 / 3 ›" on a turn where the conversation branches; nothing elsewhere.
#[component]
pub fn BranchSwitch(
    /// The turn number.
    n: i64,
) -> impl IntoView {
    let state = ChatState::get();
    let actions = use_context::<BranchActions>();
    move || {
        let (at, of, prev, next) = state.branches.with(|b| position(b, n))?;
        let go = move |to: Option<String>| {
            move |_| {
                if let (Some(a), Some(id)) = (actions, to.clone()) {
                    a.open.run(id)
                }
            }
        };
        let (has_prev, has_next) = (prev.is_some(), next.is_some());
        Some(view! {
            <span class="branch-switch" role="group" aria-label=format!("Version {at} of {of} of this message")>
                <button class="branch-prev" aria-label="Previous version" disabled=!has_prev on:click=go(prev)>"‹"</button>
                <span class="branch-at">{format!("{at} / {of}")}</span>
                <button class="branch-next" aria-label="Next version" disabled=!has_next on:click=go(next)>"›"</button>
            </span>
        })
    }
}

/// The turn's "Edit" (a user message) or "Regenerate" (a reply) icon button.
#[component]
pub fn BranchButton(
    /// The turn number.
    n: i64,
    /// Whether the turn is the user's (Edit) or the model's (Regenerate).
    user: bool,
) -> impl IntoView {
    // Not disabled while a reply streams (that would touch every turn as a stream starts): a new
    // version waits for the reply in progress (`actions::run` refuses while busy).
    let state = ChatState::get();
    let actions = use_context::<BranchActions>();
    if user {
        view! {
            <button class="turn-action edit-message" aria-label="Edit"
                title="Edit: change this message and answer it again (the original stays, as another version)"
                on:click=move |_| state.editing.set(Some(n))>{icon(Icon::Edit)}</button>
        }
        .into_any()
    } else {
        view! {
            <button class="turn-action regenerate" aria-label="Regenerate"
                title="Regenerate: answer again (this reply stays, as another version)"
                on:click=move |_| { if let Some(a) = actions { a.regenerate.run(n) } }>{icon(Icon::Regenerate)}</button>
        }
        .into_any()
    }
}

/// The message being edited in place: its text in a box, Send (as a new version) and Cancel.
#[component]
pub fn EditBox(
    /// The turn number.
    n: i64,
    /// The message as it was.
    original: String,
) -> impl IntoView {
    let state = ChatState::get();
    let actions = use_context::<BranchActions>();
    let text = RwSignal::new(original);
    let send = move || {
        if let Some(a) = actions {
            a.edit.run((n, text.get_untracked()))
        }
    };
    let keys = move |ev: web_sys::KeyboardEvent| match ev.key().as_str() {
        "Enter" if !ev.shift_key() => {
            ev.prevent_default();
            send();
        }
        "Escape" => {
            ev.stop_propagation();
            state.editing.set(None);
        }
        _ => {}
    };
    view! {
        <div class="edit-box">
            <textarea class="edit-text" aria-label="Edited message" rows="3" autofocus
                prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev)) on:keydown=keys></textarea>
            <div class="edit-actions">
                <button class="secondary" on:click=move |_| state.editing.set(None)>"Cancel"</button>
                <button class="primary" disabled=move || text.get().trim().is_empty() on:click=move |_| send()>"Send as a new version"</button>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cowork_core::BranchPoint;

    #[test]
    fn the_switch_says_where_the_turn_stands_and_where_each_arrow_goes() {
        let points =
            vec![BranchPoint { turn_number: 3, sessions: vec!["p".into(), "f1".into(), "f2".into()], current: 1 }];
        assert_eq!(position(&points, 3), Some((2, 3, Some("p".into()), Some("f2".into()))));
        assert_eq!(position(&points, 2), None, "no switch where nothing branches");
        let first = vec![BranchPoint { current: 0, ..points[0].clone() }];
        assert_eq!(position(&first, 3), Some((1, 3, None, Some("f1".into()))));
    }
}
