//! The dialogs over the conversation: search (Ctrl/Cmd+K), a tool call's approval, and the
//! confirmation before a session is deleted (Settings is `settings_dialog.rs`).

use super::format::highlight_pieces;
use super::modal::Modal;
use super::sidebar::SessionAction;
use super::state::{Approval, ChatState, DialogState};
use cowork_core::SearchHit;
use leptos::prelude::*;

/// Asks before a session is deleted for good.
#[component]
pub fn DeleteDialog(on_action: Callback<SessionAction>) -> impl IntoView {
    let dialogs = DialogState::get();
    let cancel = move || dialogs.confirm_delete.set(None);
    move || {
        dialogs.confirm_delete.get().map(|(s, versions)| {
            let (id, count) = (s.id.clone(), versions.len());
            let title = if s.title.is_empty() { "Untitled session".to_owned() } else { s.title.clone() };
            view! {
                <Modal on_close=Callback::new(move |_| cancel()) class="confirm" alert=true label="Delete session">
                        <h2>{format!("Delete \u{201c}{title}\u{201d}?")}</h2>
                        <p>{format!(
                            "Its {} removed from this browser for good. Export it first if you may need it again; \
                             archiving hides it without deleting.",
                            if count > 1 {
                                format!("{count} versions (edits and regenerations) are")
                            } else {
                                let turns = crate::protocol::count(s.turn_count.max(0) as usize, "turn");
                                format!("{turns} {}", if s.turn_count == 1 { "is" } else { "are" })
                            }
                        )}</p>
                        <div class="dialog-actions">
                            <button class="danger" on:click=move |_| {
                                dialogs.confirm_delete.set(None);
                                on_action.run(SessionAction::Delete { id: id.clone(), versions: versions.clone(), confirmed: true })
                            }>"Delete"</button>
                            <button on:click=move |_| cancel() autofocus>"Cancel"</button>
                        </div>
                </Modal>
            }
        })
    }
}

/// Ctrl/Cmd+K: full-text search across every session; Enter or a click opens the hit.
#[component]
pub fn SearchDialog(
    /// The text typed so far (search as you type).
    on_query: Callback<String>,
    /// Open a hit: its session and turn number.
    on_open: Callback<(String, i64)>,
) -> impl IntoView {
    let (dialogs, state) = (DialogState::get(), ChatState::get());
    let selected = RwSignal::new(0usize);
    let open_selected = move || {
        if let Some(h) = dialogs.hits.get_untracked().get(selected.get_untracked()) {
            on_open.run((h.session_id.clone(), h.turn_number));
        }
    };
    let numbered_hits = move || dialogs.hits.get().into_iter().enumerate().collect::<Vec<_>>();
    let hit_key = |pair: &(usize, SearchHit)| (pair.0, pair.1.turn_id);
    let query = RwSignal::new(String::new());
    // Each opening starts a new search.
    Effect::new(move |_| {
        if dialogs.search_open.get() {
            query.set(String::new());
            dialogs.search_error.set(None);
        }
    });
    let on_input = move |ev: web_sys::Event| {
        selected.set(0);
        query.set(event_target_value(&ev));
        on_query.run(query.get_untracked());
    };
    // The arrows move the selection (the input keeps the focus and names the selected hit with
    // `aria-activedescendant`); Enter opens it. Esc is the modal's.
    let on_key = move |ev: web_sys::KeyboardEvent| match ev.key().as_str() {
        "ArrowDown" => {
            ev.prevent_default();
            let last = dialogs.hits.get_untracked().len().saturating_sub(1);
            selected.update(|i| *i = (*i + 1).min(last));
            show_selected(selected.get_untracked());
        }
        "ArrowUp" => {
            ev.prevent_default();
            selected.update(|i| *i = i.saturating_sub(1));
            show_selected(selected.get_untracked());
        }
        "Enter" => {
            ev.prevent_default();
            open_selected();
        }
        _ => {}
    };
    view! {
        <Show when=move || dialogs.search_open.get()>
            <Modal on_close=Callback::new(move |_| dialogs.search_open.set(false)) class="search" label="Search all sessions">
                    <input class="search-input" type="search" autofocus aria-label="Search all sessions"
                        role="combobox" aria-controls="search-hits" aria-autocomplete="list"
                        aria-expanded=move || (!dialogs.hits.with(Vec::is_empty)).to_string()
                        aria-activedescendant=move || (!dialogs.hits.with(Vec::is_empty)).then(|| format!("search-hit-{}", selected.get()))
                        placeholder="Search every session: words, exact phrases in quotes, identifiers, paths"
                        prop:value=move || query.get()
                        on:input=on_input on:keydown=on_key />
                    {move || dialogs.search_error.get().map(|e| view! {
                        <p class="search-error" role="alert">
                            {format!("The search failed: {e}")}
                            <button class="secondary" on:click=move |_| on_query.run(query.get_untracked())>"Retry"</button>
                        </p>
                    })}
                    // Focusable: on a small screen the hits scroll (axe: scrollable-region-focusable).
                    <ul class="hits" id="search-hits" role="listbox" aria-label="Matches" tabindex="0">
                        <For
                            each=numbered_hits
                            key=hit_key
                            children=move |pair: (usize, SearchHit)| {
                                let (i, h) = pair;
                                let pieces = highlight_pieces(&h.snippet, &h.highlights);
                                // A hit in a version other than the conversation's first is named by the
                                // conversation and the version ("version 2 of 3"). A turn the versions
                                // share is stored once, so it is one hit.
                                let version = state.sessions.with_untracked(|all| cowork_core::conversations::version_of(all, &h.session_id));
                                let title = match &version {
                                    Some(v) if v.count > 1 && v.number > 1 => {
                                        let t = if v.title.is_empty() { "Untitled session" } else { v.title.as_str() };
                                        format!("{t} (version {} of {})", v.number, v.count)
                                    }
                                    _ => h.session_title.clone(),
                                };
                                let title = if title.is_empty() { "Untitled session".to_owned() } else { title };
                                let (sid, n) = (h.session_id.clone(), h.turn_number);
                                view! {
                                    <li class="hit" class:selected=move || selected.get() == i
                                        id=format!("search-hit-{i}") role="option" aria-selected=move || (selected.get() == i).to_string()
                                        on:click=move |_| on_open.run((sid.clone(), n))>
                                        <div class="hit-meta">
                                            {format!("{title} · turn {} · {}", h.turn_number, h.role)}
                                            {(h.matched != cowork_core::semantic::Matched::Words).then(|| view! {
                                                <span class="hit-meaning" title=h.matched.label()>
                                                    {if h.matched == cowork_core::semantic::Matched::Meaning { " · by meaning" } else { " · by words and meaning" }}
                                                </span>
                                            })}
                                        </div>
                                        <div class="hit-snippet">
                                            {pieces.into_iter().map(|(t, m)| if m { view! { <mark>{t}</mark> }.into_any() } else { view! { <span>{t}</span> }.into_any() }).collect::<Vec<_>>()}
                                        </div>
                                    </li>
                                }
                            }
                        />
                    </ul>
            </Modal>
        </Show>
    }
}

/// Asks the user whether a tool call (e.g. `delegate_task`) may run, showing what it would do.
#[component]
pub fn ApprovalDialog(
    /// The call id and the answer.
    on_answer: Callback<(String, bool)>,
) -> impl IntoView {
    let state = ChatState::get();
    move || {
        state.approval.get().map(|Approval { call_id, name, arguments }| {
            let args: serde_json::Value = serde_json::from_str(&arguments).unwrap_or_default();
            let goal = args["goal"].as_str().map(str::to_owned);
            let context = match &args["context"] {
                serde_json::Value::Null => None,
                serde_json::Value::String(s) => Some(s.clone()),
                other => Some(other.to_string()),
            };
            let (yes, no) = (call_id.clone(), call_id);
            let title = match name.split_once("__") {
                Some((server, tool)) => format!("Run {tool} on the MCP server {server}?"),
                None if name == "delegate_task" => "Delegate this task?".to_owned(),
                None => format!("Run {name}?"),
            };
            view! {
                <Modal on_close=Callback::new(move |_| on_answer.run((no.clone(), false))) labelled_by="approval-title"
                    keep_on_outside_click=true>
                        <h2 id="approval-title">{title}</h2>
                        {match goal {
                            Some(goal) => view! { <p class="approval-goal"><strong>"Goal: "</strong>{goal}</p> }.into_any(),
                            None => view! { <pre class="approval-args">{arguments.clone()}</pre> }.into_any(),
                        }}
                        {context.map(|c| view! { <p class="approval-context"><strong>"Context: "</strong>{c}</p> })}
                        <div class="dialog-actions">
                            <button class="secondary" on:click={let no = yes.clone(); move |_| on_answer.run((no.clone(), false))}>"Deny"</button>
                            <button class="primary" autofocus on:click=move |_| on_answer.run((yes.clone(), true))>"Approve"</button>
                        </div>
                </Modal>
            }
        })
    }
}

/// Scrolls the selected hit into view (the list may be longer than the dialog).
fn show_selected(i: usize) {
    if let Some(el) = crate::dom::query(&format!("#search-hit-{i}")) {
        el.scroll_into_view_with_bool(false);
    }
}
