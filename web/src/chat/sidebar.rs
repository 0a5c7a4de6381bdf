//! The sidebar: New session, the workspace for new sessions, a filter, and the conversations grouped by
//! workspace (each workspace with its settings button), each with its menu (rename in place, fork,
//! export, archive, delete). A conversation is one entry however many versions its edits and
//! regenerations made (`cowork_core::conversations`); it opens at its most recently active version. A
//! fork made with "Fork from here" is an entry of its own, under the conversation it came from,
//! marked "Fork of …".

use super::format::{full_time, nest_forks, relative_time, session_matches, workspace_order, workspaces};
use super::state::{ChatState, DialogState};
use super::DEFAULT_WORKSPACE;
use cowork_core::conversations::{conversations, Conversation};
use cowork_core::Session;
use leptos::prelude::*;

/// What the user asked to do with a session from the sidebar (or a turn, for a fork).
#[derive(Debug, Clone, PartialEq)]
pub enum SessionAction {
    /// Gives the session a new title.
    Rename {
        /// The session.
        id: String,
        /// Its new title, as typed.
        title: String,
    },
    /// A new session with the turns up to and including `at_turn`.
    Fork {
        /// The session to fork.
        id: String,
        /// The last turn number the fork keeps.
        at_turn: i64,
    },
    /// Downloads the session in a format.
    Export {
        /// The session.
        id: String,
        /// The file's format.
        format: ExportFormat,
    },
    /// Hides the session from the list, or shows it again.
    Archive {
        /// The session.
        id: String,
        /// `true` hides it, `false` shows it again.
        archived: bool,
    },
    /// Asks first (see [`DeleteDialog`]); `confirmed` once the user said yes.
    Delete {
        /// The session the dialog names.
        id: String,
        /// Every version of its conversation, itself included: what is deleted.
        versions: Vec<String>,
        /// The user confirmed in the dialog (`false`: ask first).
        confirmed: bool,
    },
}

/// The formats a session (or the archive) can be exported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// Cowork's JSON Lines archive (everything, re-importable).
    Jsonl,
    /// A readable Markdown transcript (one session).
    Markdown,
    /// ChatGPT's `conversations.json` (forks as branches), for tools that read it.
    ChatGpt,
}

impl ExportFormat {
    /// The download's MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            ExportFormat::Jsonl => "application/x-ndjson",
            ExportFormat::Markdown => "text/markdown",
            ExportFormat::ChatGpt => "application/json",
        }
    }

    /// The end of the download's file name.
    pub fn file_suffix(self) -> &'static str {
        match self {
            ExportFormat::Jsonl => ".jsonl",
            ExportFormat::Markdown => ".md",
            ExportFormat::ChatGpt => "-chatgpt.json",
        }
    }
}

/// The sidebar: New session, a filter, and the sessions, most recent first, each with its actions.
#[component]
pub fn Sidebar(
    /// Open a session (by id).
    on_open: Callback<String>,
    /// Start a new conversation (nothing is saved until its first message).
    on_new: Callback<()>,
    /// Do something to a session (from its menu or the delete dialog).
    on_action: Callback<SessionAction>,
    /// Open a workspace's settings (by label).
    on_workspace: Callback<String>,
) -> impl IntoView {
    let (state, dialogs) = (ChatState::get(), DialogState::get());
    // The conversations any of whose versions match the filter, each listed by its root session.
    let listed = Memo::new(move |_| {
        let filter = state.filter.get();
        state.sessions.with(|all| {
            conversations(all)
                .into_iter()
                .filter(|c| c.versions.iter().any(|s| session_matches(s, &filter)))
                .map(|c| Entry::of(&c, all))
                .collect::<Vec<_>>()
        })
    });
    let shown = move || listed.with(|l| l.iter().map(|e| e.listed.clone()).collect::<Vec<_>>());
    let entry = move |id: &str| listed.with(|l| l.iter().find(|e| e.listed.id == id).cloned());
    view! {
        <nav class="sidebar" class:open=move || dialogs.sidebar_open.get() aria-label="Sessions">
            <button class="new-session" on:click=move |_| on_new.run(())>"+ New session"</button>
            <label class="workspace-field">
                <span>"Workspace for new sessions"</span>
                // A choice among the workspaces there are; a new one is made explicitly, by name, in
                // Settings → Workspaces (typing here never creates one).
                <select class="workspace-choice" prop:value=move || state.workspace.get()
                    on:change=move |ev| {
                        let w = event_target_value(&ev);
                        if w.is_empty() {
                            // The list keeps showing the workspace new sessions go to.
                            if let Some(t) = ev.target() {
                                let _ = js_sys::Reflect::set(&t, &"value".into(), &state.workspace.get_untracked().into());
                            }
                            dialogs.workspace.set(None);
                            dialogs.open_settings(super::SettingsSection::Workspaces);
                        } else {
                            state.workspace.set(w);
                        }
                    }>
                    {move || {
                        let current = state.workspace.get();
                        let mut all = workspaces(&state.sessions.get());
                        all.extend([current.clone(), DEFAULT_WORKSPACE.to_owned()]);
                        all.sort();
                        all.dedup();
                        all.into_iter().map(|w| {
                            let chosen = w == current;
                            view! { <option value=w.clone() selected=chosen>{w.clone()}</option> }
                        }).collect::<Vec<_>>()
                    }}
                    <option value="">"New workspace…"</option>
                </select>
            </label>
            <input class="session-filter" type="search" placeholder="Filter sessions" aria-label="Filter sessions"
                prop:value=move || state.filter.get()
                on:input=move |ev| state.filter.set(event_target_value(&ev)) />
            <Show
                when=move || !shown().is_empty()
                fallback=move || {
                    let text = if state.filter.get().is_empty() {
                        "No sessions yet. Say hello to start one."
                    } else {
                        "No session matches the filter."
                    };
                    view! { <p class="sidebar-empty">{text}</p> }
                }
            >
                // Workspaces, the one active most recently first, each with its sessions (newest first).
                <For
                    each=move || workspace_order(&shown())
                    key=|w| w.clone()
                    children=move |w: String| {
                        let name = w.clone();
                        // Forks made with "Fork from here" under the conversation they came from.
                        let in_group = move || {
                            let group: Vec<Session> = shown().into_iter().filter(|s| s.workspace == name).collect();
                            nest_forks(&group).into_iter().filter_map(|(s, depth)| Some((entry(&s.id)?, depth))).collect::<Vec<_>>()
                        };
                        let label = if w.is_empty() { "No workspace".to_owned() } else { w.clone() };
                        let settings_label = format!("Configure workspace {label}");
                        // The ⚙ button sits beside the heading, not in it: a button inside the
                        // <summary> (itself a button) is reached by neither keyboard nor screen reader
                        // as its own control (axe: nested-interactive).
                        view! {
                            <div class="workspace-wrap">
                            <button class="workspace-settings-button" aria-label=settings_label.clone() title=settings_label
                                on:click=move |_| on_workspace.run(w.clone())>"⚙"</button>
                            <details class="workspace-group" open>
                                <summary>
                                    <span class="workspace-name">{label}</span>
                                    <span class="workspace-count">{{ let g = in_group.clone(); move || g().len() }}</span>
                                </summary>
                                <ul class="session-list">
                                    <For
                                        each=in_group
                                        key=|(e, depth)| e.key(*depth)
                                        children=move |(e, depth): (Entry, usize)| view! { <SessionRow e=e depth=depth on_open=on_open on_action=on_action /> }
                                    />
                                </ul>
                            </details>
                            </div>
                        }
                    }
                />
            </Show>
            <label class="show-archived">
                <input type="checkbox" prop:checked=move || state.show_archived.get()
                    on:change=move |ev| state.show_archived.set(event_target_checked(&ev)) />
                " Show archived"
            </label>
        </nav>
    }
}

/// One sidebar entry: a conversation, with what its row shows and where it opens.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The conversation's root, dated by its latest version and placed under the conversation it was
    /// forked from (`parent_session_id`), as the workspace grouping and [`nest_forks`] read it.
    listed: Session,
    /// Every version's id, the most recently active first: the entry opens the first.
    versions: Vec<String>,
    /// The latest version's model and turn count, as the row's details show them.
    model: String,
    turns: i64,
    /// For a fork made with "Fork from here": the title of the conversation it came from (empty when
    /// that is not listed).
    fork_of: Option<String>,
}

/// What a row is redrawn for: any change to what it shows or where it opens.
type EntryKey = (String, String, bool, i64, Vec<String>, String, i64, Option<String>, usize);

impl Entry {
    fn key(&self, depth: usize) -> EntryKey {
        let s = &self.listed;
        let (versions, model) = (self.versions.clone(), self.model.clone());
        (
            s.id.clone(),
            s.title.clone(),
            s.is_archived,
            s.last_active_at,
            versions,
            model,
            self.turns,
            self.fork_of.clone(),
            depth,
        )
    }

    fn of(c: &Conversation, all: &[Session]) -> Entry {
        let latest = c.latest();
        let fork_of = (c.root.parent_session_id.is_some() && !c.root.is_version).then(|| {
            let from = c.forked_from.as_deref().and_then(|f| all.iter().find(|s| s.id == f));
            from.map(|s| s.title.clone()).unwrap_or_default()
        });
        Entry {
            listed: Session {
                last_active_at: c.last_active_at(),
                parent_session_id: c.forked_from.clone(),
                ..c.root.clone()
            },
            versions: c.versions.iter().map(|s| s.id.clone()).collect(),
            model: latest.model.clone(),
            turns: latest.turn_count,
            fork_of,
        }
    }
}

/// One conversation in the sidebar: open it (at the version open now, else its latest), or (from its
/// menu) rename it, or fork, export, archive or delete the version it opens.
#[component]
fn SessionRow(
    e: Entry,
    /// 0 at the top; a fork sits one deeper than the conversation it came from.
    depth: usize,
    on_open: Callback<String>,
    on_action: Callback<SessionAction>,
) -> impl IntoView {
    let (state, dialogs) = (ChatState::get(), DialogState::get());
    let s = e.listed.clone();
    // The root names the conversation (rename acts on it); the other actions act on the version the
    // entry opens: the one open now when it is one of the conversation's, else the latest.
    let id = StoredValue::new(s.id.clone());
    let versions = StoredValue::new(e.versions.clone());
    let target = move || {
        let current = state.current.get();
        versions.with_value(|v| current.filter(|c| v.contains(c)).unwrap_or_else(|| v[0].clone()))
    };
    let active = move || state.current.get().is_some_and(|c| versions.with_value(|v| v.contains(&c)));
    let title = if s.title.is_empty() { "Untitled session".to_owned() } else { s.title.clone() };
    let model = if e.model.is_empty() { "demo".to_owned() } else { e.model.clone() };
    // The workspace is the heading of the row's group.
    let count = e.versions.len();
    let version_note = if count > 1 { format!(" · {count} versions") } else { String::new() };
    let meta = format!(
        "{model} · {} · {}{version_note}",
        crate::protocol::count(e.turns.max(0) as usize, "turn"),
        relative_time(cowork_core::now_ms(), s.last_active_at)
    );
    // Hovering the last activity shows exactly when, in the user's locale and time zone.
    let last_active = full_time(s.last_active_at);
    let menu_open = move || dialogs.menu.get().as_deref() == Some(id.get_value().as_str());
    let renaming = move || dialogs.renaming.get().as_deref() == Some(id.get_value().as_str());
    let (archived, label) = (s.is_archived, title.clone());
    let fork_of = e.fork_of.clone();
    let is_fork = fork_of.is_some();
    let fork_note = fork_of.map(|t| if t.is_empty() { "Fork".to_owned() } else { format!("Fork of {t}") });
    let menu_button = NodeRef::<leptos::html::Button>::new();
    let act = move |a: SessionAction| {
        // Closing the menu gives the focus back to its button (and a dialog the action opens gives
        // it back there too).
        if let Some(b) = menu_button.get_untracked() {
            let _ = b.focus();
        }
        dialogs.menu.set(None);
        on_action.run(a)
    };
    let rename_key = move |ev: web_sys::KeyboardEvent| match ev.key().as_str() {
        "Enter" => {
            ev.prevent_default();
            dialogs.renaming.set(None);
            act(SessionAction::Rename { id: id.get_value(), title: event_target_value(&ev) });
        }
        "Escape" => dialogs.renaming.set(None),
        _ => {}
    };
    let title_for_input = title.clone();
    view! {
        <li class="session-row" class:archived=archived class:fork=is_fork data-depth=depth.min(4).to_string()>
            <Show
                when=renaming
                fallback=move || {
                    let title = title.clone();
                    let meta = meta.clone();
                    let last_active = last_active.clone();
                    let fork_note = fork_note.clone().map(|text| {
                        let hover = text.clone();
                        // An inline fork icon: "⑂" is missing from common fonts.
                        view! {
                            <span class="session-fork-of" title=hover>
                                <svg class="fork-icon" viewBox="0 0 16 16" width="12" height="12" aria-hidden="true">
                                    <path d="M4 2v3c0 2.5 4 2.5 4 5v4M12 2v3c0 2.5-4 2.5-4 5" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" />
                                </svg>
                                {text}
                            </span>
                        }
                    });
                    view! {
                        <button class="session" class:active=active on:click=move |_| on_open.run(target())>
                            <span class="session-title">{title}</span>
                            {fork_note}
                            <span class="session-meta" title=last_active>
                                {meta}
                                {archived.then(|| view! { <span class="badge">"archived"</span> })}
                            </span>
                        </button>
                    }
                }
            >
                <input class="rename" aria-label="Session name" value=title_for_input.clone() autofocus
                    on:keydown=rename_key on:blur=move |_| dialogs.renaming.set(None) />
            </Show>
            <button class="session-menu-button" node_ref=menu_button aria-label=format!("Actions for {label}") aria-haspopup="menu"
                aria-expanded=move || menu_open().to_string()
                on:click=move |_| {
                    let next = if menu_open() { None } else { Some(id.get_value()) };
                    let opening = next.is_some();
                    dialogs.menu.set(next);
                    if opening {
                        crate::dom::focus_later(".session-menu [role=menuitem]");
                    }
                }>"⋯"</button>
            <Show when=menu_open>
                <div class="session-menu" role="menu" on:keydown=menu_keys>
                    <button role="menuitem" on:click=move |_| {
                        dialogs.menu.set(None);
                        dialogs.renaming.set(Some(id.get_value()));
                        crate::dom::focus_later(".session-row input.rename");
                    }>"Rename"</button>
                    <button role="menuitem" on:click=move |_| { let t = target(); let at_turn = state.sessions.with_untracked(|all| all.iter().find(|s| s.id == t).map_or(0, |s| s.turn_count)); act(SessionAction::Fork { id: t, at_turn }) }>"Fork"</button>
                    <button role="menuitem" on:click=move |_| act(SessionAction::Export { id: target(), format: ExportFormat::Jsonl })>"Export (JSON Lines)"</button>
                    <button role="menuitem" on:click=move |_| act(SessionAction::Export { id: target(), format: ExportFormat::Markdown })>"Export as Markdown"</button>
                    <button role="menuitem" on:click=move |_| act(SessionAction::Export { id: target(), format: ExportFormat::ChatGpt })>"Export as ChatGPT JSON"</button>
                    <button role="menuitem" on:click=move |_| versions.with_value(|v| v.iter().for_each(|id| act(SessionAction::Archive { id: id.clone(), archived: !archived })))>
                        {if archived { "Unarchive" } else { "Archive" }}
                    </button>
                    <button role="menuitem" class="danger" on:click=move |_| act(SessionAction::Delete { id: target(), versions: versions.get_value(), confirmed: false })>"Delete…"</button>
                </div>
            </Show>
        </li>
    }
}

/// The session menu's keys: arrows and Home/End move between its items, Esc closes it.
fn menu_keys(ev: web_sys::KeyboardEvent) {
    #[cfg(target_arch = "wasm32")]
    {
        use wasm_bindgen::JsCast;
        let Some(menu) = ev.current_target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else { return };
        let Ok(items) = menu.query_selector_all("[role=menuitem]") else { return };
        let items: Vec<web_sys::HtmlElement> =
            (0..items.length()).filter_map(|i| items.item(i)?.dyn_into().ok()).collect();
        let active = crate::dom::active_element();
        let at = items.iter().position(|i| active.as_ref().is_some_and(|a| a == i.unchecked_ref::<web_sys::Element>()));
        let next = match (ev.key().as_str(), at) {
            ("ArrowDown", Some(i)) => (i + 1) % items.len(),
            ("ArrowUp", Some(i)) => (i + items.len() - 1) % items.len(),
            ("ArrowDown" | "Home", None) | ("Home", _) => 0,
            ("ArrowUp" | "End", None) | ("End", _) => items.len() - 1,
            _ => return,
        };
        ev.prevent_default();
        if let Some(item) = items.get(next) {
            let _ = item.focus();
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = ev;
}
