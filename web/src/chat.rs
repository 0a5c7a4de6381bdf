//! The chat screens: the session sidebar, the conversation, and the composer. They talk to the
//! archive (and, through it, to the model) only via the storage worker's client.

use crate::protocol::{Event, Op, Reply};
use crate::settings::{validate, ModelSettings};
use cowork_core::{Role, SearchHit, Session, Turn, TurnStatus};
use leptos::prelude::*;

/// The most turns the conversation holds in the DOM at once, however long the session.
pub const VISIBLE_TURNS: usize = 200;
/// How many turns opening a session loads (its end, or around the turn a search hit names).
pub const OPEN_TURNS: usize = 100;
/// How many turns scrolling past either edge of the window loads.
pub const PAGE_TURNS: usize = 50;
/// The workspace new sessions go to until the user picks one.
pub const DEFAULT_WORKSPACE: &str = "default";

/// Everything the chat screens share.
#[derive(Clone, Copy)]
pub struct ChatState {
    pub sessions: RwSignal<Vec<Session>>,
    pub current: RwSignal<Option<String>>,
    pub turns: RwSignal<Vec<Turn>>,
    /// The turn being streamed and its text so far.
    pub streaming: RwSignal<Option<(i64, String)>>,
    pub busy: RwSignal<bool>,
    pub notice: RwSignal<Option<String>>,
    pub draft: RwSignal<String>,
    pub settings: RwSignal<ModelSettings>,
    pub settings_open: RwSignal<bool>,
    /// A tool call waiting for the user's yes or no: (call id, tool name, arguments).
    pub approval: RwSignal<Option<(String, String, String)>>,
    pub search_open: RwSignal<bool>,
    pub hits: RwSignal<Vec<SearchHit>>,
    /// The turn to scroll to and mark (after opening a search hit).
    pub focus_turn: RwSignal<Option<i64>>,
    /// Phone width: whether the session list is shown instead of the conversation.
    pub sidebar_open: RwSignal<bool>,
    /// "1.2 MB of 9.8 GB used · kept" — the browser's storage estimate and persistence.
    pub usage: RwSignal<String>,
    pub storage_open: RwSignal<bool>,
    /// The last archive check's result ("ok", or what is wrong).
    pub integrity: RwSignal<Option<String>>,
    /// Bumped whenever the session list changed elsewhere (rename, fork, archive, delete, import).
    pub sessions_stale: RwSignal<u64>,
    /// The sidebar's filter text.
    pub filter: RwSignal<String>,
    /// Whether archived sessions are listed too.
    pub show_archived: RwSignal<bool>,
    /// The session whose actions menu is open.
    pub menu: RwSignal<Option<String>>,
    /// The session being renamed in place.
    pub renaming: RwSignal<Option<String>>,
    /// The session waiting for the user to confirm its deletion.
    pub confirm_delete: RwSignal<Option<Session>>,
    /// What the last import did.
    pub import_result: RwSignal<Option<String>>,
    /// Delegated tasks of this tab's replies, with their live checklists (newest last).
    pub tasks: RwSignal<Vec<LiveTask>>,
    /// Whether the conversation follows its end as turns arrive (the user has not scrolled away).
    pub stick_to_end: RwSignal<bool>,
    /// A page of older or newer turns is being loaded.
    pub loading_more: RwSignal<bool>,
    /// The session panel (state register and context meter) is shown.
    pub panel_open: RwSignal<bool>,
    /// The workspace new sessions go to.
    pub workspace: RwSignal<String>,
    /// What "Test connection" found ("Connected: …", or what to fix).
    pub connection: RwSignal<Option<String>>,
    /// The open session as last read, and the manifest of its last model request.
    pub details: RwSignal<Option<(Session, Option<cowork_core::ContextManifest>)>>,
}

/// A delegated task as the checklist card shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveTask {
    pub task_id: String,
    pub goal: String,
    pub status: String,
    pub checklist: Vec<cowork_core::orchestrator::ChecklistItem>,
}

impl LiveTask {
    pub fn is_over(&self) -> bool {
        cowork_core::orchestrator::is_terminal_status(&self.status)
    }
}

impl ChatState {
    pub fn new() -> ChatState {
        ChatState {
            sessions: RwSignal::new(Vec::new()),
            current: RwSignal::new(None),
            turns: RwSignal::new(Vec::new()),
            streaming: RwSignal::new(None),
            busy: RwSignal::new(false),
            notice: RwSignal::new(None),
            draft: RwSignal::new(String::new()),
            settings: RwSignal::new(ModelSettings::default()),
            settings_open: RwSignal::new(false),
            approval: RwSignal::new(None),
            search_open: RwSignal::new(false),
            hits: RwSignal::new(Vec::new()),
            focus_turn: RwSignal::new(None),
            sidebar_open: RwSignal::new(false),
            usage: RwSignal::new(String::new()),
            storage_open: RwSignal::new(false),
            integrity: RwSignal::new(None),
            sessions_stale: RwSignal::new(0),
            filter: RwSignal::new(String::new()),
            show_archived: RwSignal::new(false),
            menu: RwSignal::new(None),
            renaming: RwSignal::new(None),
            confirm_delete: RwSignal::new(None),
            import_result: RwSignal::new(None),
            tasks: RwSignal::new(Vec::new()),
            stick_to_end: RwSignal::new(true),
            loading_more: RwSignal::new(false),
            panel_open: RwSignal::new(false),
            details: RwSignal::new(None),
            connection: RwSignal::new(None),
            workspace: RwSignal::new(DEFAULT_WORKSPACE.to_owned()),
        }
    }
}

impl Default for ChatState {
    fn default() -> Self {
        ChatState::new()
    }
}

/// What the user asked to do with a session from the sidebar (or a turn, for a fork).
#[derive(Debug, Clone, PartialEq)]
pub enum SessionAction {
    Rename {
        id: String,
        title: String,
    },
    /// A new session with the turns up to and including `at_turn`.
    Fork {
        id: String,
        at_turn: i64,
    },
    Export {
        id: String,
    },
    Archive {
        id: String,
        archived: bool,
    },
    /// Asks first (see [`DeleteDialog`]); `confirmed` once the user said yes.
    Delete {
        id: String,
        confirmed: bool,
    },
}

/// The sidebar: New session, a filter, and the sessions, most recent first, each with its actions.
#[component]
pub fn Sidebar(
    state: ChatState,
    on_open: Callback<String>,
    on_new: Callback<()>,
    on_action: Callback<SessionAction>,
) -> impl IntoView {
    let shown = move || {
        let filter = state.filter.get();
        state.sessions.get().into_iter().filter(|s| session_matches(s, &filter)).collect::<Vec<_>>()
    };
    view! {
        <nav class="sidebar" class:open=move || state.sidebar_open.get() aria-label="Sessions">
            <button class="new-session" on:click=move |_| on_new.run(())>"+ New session"</button>
            <label class="workspace-field">
                <span>"Workspace for new sessions"</span>
                <input list="workspaces" prop:value=move || state.workspace.get()
                    on:change=move |ev| {
                        let w = event_target_value(&ev);
                        state.workspace.set(if w.trim().is_empty() { DEFAULT_WORKSPACE.to_owned() } else { w.trim().to_owned() })
                    } />
                <datalist id="workspaces">
                    {move || workspaces(&state.sessions.get()).into_iter().map(|w| view! { <option value=w></option> }).collect::<Vec<_>>()}
                </datalist>
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
                        let in_group = move || shown().into_iter().filter(|s| s.workspace == name).collect::<Vec<_>>();
                        let label = if w.is_empty() { "No workspace".to_owned() } else { w };
                        view! {
                            <details class="workspace-group" open>
                                <summary>
                                    <span class="workspace-name">{label}</span>
                                    <span class="workspace-count">{{ let g = in_group.clone(); move || g().len() }}</span>
                                </summary>
                                <ul class="session-list">
                                    <For
                                        each=in_group
                                        key=|s| (s.id.clone(), s.turn_count, s.title.clone(), s.is_archived, s.last_active_at)
                                        children=move |s: Session| view! { <SessionRow s=s state=state on_open=on_open on_action=on_action /> }
                                    />
                                </ul>
                            </details>
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

/// One session in the sidebar: open it, or (from its menu) rename, fork, export, archive, delete.
#[component]
fn SessionRow(
    s: Session,
    state: ChatState,
    on_open: Callback<String>,
    on_action: Callback<SessionAction>,
) -> impl IntoView {
    let id = StoredValue::new(s.id.clone());
    let active = move || state.current.get().as_deref() == Some(id.get_value().as_str());
    let title = if s.title.is_empty() { "Untitled session".to_owned() } else { s.title.clone() };
    let model = if s.model.is_empty() { "demo".to_owned() } else { s.model.clone() };
    // The workspace is the heading of the row's group.
    let meta = format!("{model} · {} turns · {}", s.turn_count, relative_time(cowork_core::now_ms(), s.last_active_at));
    let menu_open = move || state.menu.get().as_deref() == Some(id.get_value().as_str());
    let renaming = move || state.renaming.get().as_deref() == Some(id.get_value().as_str());
    let (archived, turns, label) = (s.is_archived, s.turn_count, title.clone());
    let act = move |a: SessionAction| {
        state.menu.set(None);
        on_action.run(a)
    };
    let rename_key = move |ev: web_sys::KeyboardEvent| match ev.key().as_str() {
        "Enter" => {
            ev.prevent_default();
            state.renaming.set(None);
            act(SessionAction::Rename { id: id.get_value(), title: event_target_value(&ev) });
        }
        "Escape" => state.renaming.set(None),
        _ => {}
    };
    let title_for_input = title.clone();
    view! {
        <li class="session-row" class:archived=archived>
            <Show
                when=renaming
                fallback=move || {
                    let title = title.clone();
                    let meta = meta.clone();
                    view! {
                        <button class="session" class:active=active on:click=move |_| on_open.run(id.get_value())>
                            <span class="session-title">{title}</span>
                            <span class="session-meta">
                                {meta}
                                {archived.then(|| view! { <span class="badge">"archived"</span> })}
                            </span>
                        </button>
                    }
                }
            >
                <input class="rename" aria-label="Session name" value=title_for_input.clone() autofocus
                    on:keydown=rename_key on:blur=move |_| state.renaming.set(None) />
            </Show>
            <button class="session-menu-button" aria-label=format!("Actions for {label}") aria-haspopup="menu"
                aria-expanded=move || menu_open().to_string()
                on:click=move |_| {
                    let next = if menu_open() { None } else { Some(id.get_value()) };
                    let opening = next.is_some();
                    state.menu.set(next);
                    if opening {
                        focus_later(".session-menu [role=menuitem]");
                    }
                }>"⋯"</button>
            <Show when=menu_open>
                <div class="session-menu" role="menu" on:keydown=menu_keys>
                    <button role="menuitem" on:click=move |_| {
                        state.menu.set(None);
                        state.renaming.set(Some(id.get_value()));
                        focus_later(".session-row input.rename");
                    }>"Rename"</button>
                    <button role="menuitem" on:click=move |_| act(SessionAction::Fork { id: id.get_value(), at_turn: turns })>"Fork"</button>
                    <button role="menuitem" on:click=move |_| act(SessionAction::Export { id: id.get_value() })>"Export"</button>
                    <button role="menuitem" on:click=move |_| act(SessionAction::Archive { id: id.get_value(), archived: !archived })>
                        {if archived { "Unarchive" } else { "Archive" }}
                    </button>
                    <button role="menuitem" class="danger" on:click=move |_| act(SessionAction::Delete { id: id.get_value(), confirmed: false })>"Delete…"</button>
                </div>
            </Show>
        </li>
    }
}

/// Focuses the first element matching `selector` once the view has rendered it.
fn focus_later(selector: &'static str) {
    request_animation_frame(move || {
        use wasm_bindgen::JsCast;
        if let Some(el) = crate::dom::query(selector) {
            let _ = el.unchecked_into::<web_sys::HtmlElement>().focus();
        }
    });
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

/// Asks before a session is deleted for good.
#[component]
pub fn DeleteDialog(state: ChatState, on_action: Callback<SessionAction>) -> impl IntoView {
    let cancel = move || state.confirm_delete.set(None);
    move || {
        state.confirm_delete.get().map(|s| {
            let id = s.id.clone();
            let title = if s.title.is_empty() { "Untitled session".to_owned() } else { s.title.clone() };
            view! {
                <div class="overlay" on:click=move |_| cancel()>
                    <div class="dialog confirm" role="alertdialog" aria-modal="true" aria-label="Delete session"
                        on:click=|ev: web_sys::MouseEvent| ev.stop_propagation()
                        on:keydown=move |ev: web_sys::KeyboardEvent| if ev.key() == "Escape" { cancel() }>
                        <h2>{format!("Delete \u{201c}{title}\u{201d}?")}</h2>
                        <p>{format!(
                            "Its {} turns are removed from this browser for good. Export it first if you may need it again; \
                             archiving hides it without deleting.",
                            s.turn_count
                        )}</p>
                        <div class="dialog-actions">
                            <button class="danger" on:click=move |_| {
                                state.confirm_delete.set(None);
                                on_action.run(SessionAction::Delete { id: id.clone(), confirmed: true })
                            }>"Delete"</button>
                            <button on:click=move |_| cancel() autofocus>"Cancel"</button>
                        </div>
                    </div>
                </div>
            }
        })
    }
}

/// How much of a turn's text is shown before "Show all".
pub const DISPLAY_CHARS: usize = 20_000;

/// The first `limit` bytes of `text`, cut at a character boundary.
pub fn clip_for_display(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// 40 → "40 ms", 1_250 → "1.2 s", 95_000 → "1 min 35 s".
pub fn duration_text(ms: i64) -> String {
    match ms.max(0) {
        ms @ 0..=999 => format!("{ms} ms"),
        ms @ 1_000..=59_999 => format!("{:.1} s", ms as f64 / 1000.0),
        ms => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1000),
    }
}

/// Where the user fixes what an error message describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fix {
    Settings,
    Storage,
}

/// The action offered beside an error: Settings for the endpoint, key, model or URL; Storage for space.
pub fn fix_for(message: &str) -> Option<Fix> {
    let m = message.to_lowercase();
    if m.contains("storage for this site is full") {
        Some(Fix::Storage)
    } else if m.contains("in settings") || m.contains("api key") || m.contains("base url") || m.contains("cors") {
        Some(Fix::Settings)
    } else {
        None
    }
}

/// The workspaces the sessions are in, sorted, each once.
pub fn workspaces(sessions: &[Session]) -> Vec<String> {
    let mut all: Vec<String> = sessions.iter().map(|s| s.workspace.clone()).collect();
    all.sort();
    all.dedup();
    all
}

/// The workspaces of `sessions` (newest first) in the order of their most recent session.
pub fn workspace_order(sessions: &[Session]) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    for s in sessions {
        if !order.contains(&s.workspace) {
            order.push(s.workspace.clone());
        }
    }
    order
}

/// Whether a session matches the sidebar filter (title, workspace or model; any case).
pub fn session_matches(s: &Session, filter: &str) -> bool {
    let f = filter.trim().to_lowercase();
    f.is_empty() || [&s.title, &s.workspace, &s.model].iter().any(|x| x.to_lowercase().contains(&f))
}

/// "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", or the date.
pub fn relative_time(now_ms: i64, then_ms: i64) -> String {
    let mins = (now_ms - then_ms).max(0) / 60_000;
    match mins {
        0 => "just now".into(),
        1..=59 => format!("{mins} min ago"),
        60..=1439 => format!("{} h ago", mins / 60),
        1440..=2879 => "yesterday".into(),
        2880..=10079 => format!("{} days ago", mins / 1440),
        _ => {
            let date = js_date(then_ms);
            date.unwrap_or_else(|| format!("{} weeks ago", mins / 10080))
        }
    }
}

#[cfg(target_arch = "wasm32")]
fn js_date(ms: i64) -> Option<String> {
    Some(
        String::from(js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64)).to_iso_string())
            .chars()
            .take(10)
            .collect(),
    )
}
#[cfg(not(target_arch = "wasm32"))]
fn js_date(_ms: i64) -> Option<String> {
    None
}

/// One turn of the conversation, rendered as text (never as HTML).
#[component]
fn TurnView(turn: Turn, state: ChatState, on_action: Callback<SessionAction>) -> impl IntoView {
    let n = turn.turn_number;
    let role = turn.role.as_str();
    let status = turn.status;
    let stored = turn.content.clone();
    // Very long content (a 10 MB tool output, a pasted log) is shown clipped until "Show all".
    let expanded = RwSignal::new(false);
    let long = turn.content.len() > DISPLAY_CHARS;
    let size = turn.content.len();
    let text = move || match state.streaming.get() {
        Some((s, text)) if s == n => text,
        _ if expanded.get() => stored.clone(),
        _ => clip_for_display(&stored, DISPLAY_CHARS).to_owned(),
    };
    let show_all = move || {
        (long && !expanded.get()).then(|| {
            view! {
                <button class="show-all" on:click=move |_| expanded.set(true)>
                    {format!("Show all ({})", human_bytes(size as f64))}
                </button>
            }
        })
    };
    let calls: Vec<_> = turn
        .tool_calls
        .iter()
        .map(|c| {
            let label = if c.name == "conversation_recall" {
                let q = c.arguments_json().and_then(|v| v["query"].as_str().map(str::to_owned));
                match q {
                    Some(q) => format!("Searched the archive for \u{201c}{q}\u{201d}"),
                    None => "Looked in the archive".to_owned(),
                }
            } else {
                format!("Called {}", c.name)
            };
            view! { <div class="tool-call"><span class="tool-label">{label}</span><code>{c.arguments.clone()}</code></div> }
        })
        .collect();
    let body = if turn.role == Role::Tool {
        let name = turn.tool_name.clone().unwrap_or_else(|| "tool".into());
        let failed = turn.metadata.get("success").and_then(|v| v.as_bool()) == Some(false);
        let took = turn.metadata.get("duration_ms").and_then(|v| v.as_i64()).map(duration_text);
        view! {
            <details class="tool-result" class:failed=failed>
                <summary>
                    {format!("Result of {name}")}
                    {took.map(|t| view! { <span class="tool-meta">{format!(" · {t}")}</span> })}
                    {failed.then(|| view! { <span class="badge error">"failed"</span> })}
                </summary>
                <pre>{text}</pre>
                {show_all}
            </details>
        }
        .into_any()
    } else if turn.role == Role::Assistant {
        // Sanitised Markdown (see crate::markdown): message text never becomes markup of its own.
        view! {
            <div class="turn-text markdown" inner_html=move || crate::markdown::render(&text())></div>
            {show_all}
        }
        .into_any()
    } else {
        view! { <div class="turn-text">{text}</div> {show_all} }.into_any()
    };
    let badge = match status {
        TurnStatus::Complete => None,
        TurnStatus::Interrupted => Some(view! { <span class="badge interrupted">"interrupted"</span> }),
        TurnStatus::Error => Some(view! { <span class="badge error">"error"</span> }),
    };
    view! {
        <article class="turn" class:focused=move || state.focus_turn.get() == Some(n) data-role=role data-turn=n>
            <header class="turn-head">
                <span class="who">{role}</span>
                {badge}
                <button class="turn-action" title="A new session with the conversation up to here"
                    on:click=move |_| {
                        if let Some(id) = state.current.get_untracked() {
                            on_action.run(SessionAction::Fork { id, at_turn: n })
                        }
                    }>"Fork from here"</button>
            </header>
            {body}
            {calls}
        </article>
    }
}

/// The conversation pane and the composer.
#[component]
pub fn Conversation(
    state: ChatState,
    on_send: Callback<()>,
    on_stop: Callback<()>,
    /// Retry/Continue after an interrupted or failed reply.
    on_retry: Callback<()>,
    /// Fork at a turn.
    on_action: Callback<SessionAction>,
    /// Cancel a delegated task (by id).
    on_cancel_task: Callback<String>,
    /// Load the page of turns before (`true`) or after the window.
    on_more: Callback<bool>,
) -> impl IntoView {
    let list = NodeRef::<leptos::html::Div>::new();
    // Follow the end while the user is there: new turns and streamed text stay in view.
    Effect::new(move |_| {
        state.turns.track();
        state.streaming.track();
        if state.stick_to_end.get_untracked() {
            if let Some(el) = list.get_untracked() {
                el.set_scroll_top(el.scroll_height());
            }
        }
    });
    let on_scroll = move |_| {
        let Some(el) = list.get_untracked() else { return };
        let below = el.scroll_height() - el.scroll_top() - el.client_height();
        state.stick_to_end.set(below < 48);
        if el.scroll_top() < 400 {
            on_more.run(true);
        } else if below < 400 {
            on_more.run(false);
        }
    };
    let can_retry = move || {
        !state.busy.get()
            && state.turns.with(|t| {
                t.last().is_some_and(|t| {
                    t.role == Role::User || (t.role == Role::Assistant && t.status != TurnStatus::Complete)
                })
            })
    };
    let send_on_enter = move |ev: web_sys::KeyboardEvent| {
        if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
            ev.prevent_default();
            on_send.run(());
        }
    };
    view! {
        <main class="conversation">
            <div class="turns" aria-live="polite" node_ref=list on:scroll=on_scroll on:click=copy_code>
                <Show when=move || state.turns.get().is_empty()>
                    <div class="welcome">
                        <h2>"A workspace that never forgets"</h2>
                        <p>"Every message is kept verbatim in this browser and can be searched at any time."</p>
                    </div>
                </Show>
                <For
                    each=move || state.turns.get()
                    key=|t| (t.id, t.status, t.content.len())
                    children=move |t: Turn| view! { <TurnView turn=t state=state on_action=on_action /> }
                />
            </div>
            <TaskCards state=state on_cancel=on_cancel_task />
            <Show when=can_retry>
                <div class="retry-bar">
                    <span>"The last reply did not complete."</span>
                    <button class="retry" on:click=move |_| on_retry.run(())>"Retry"</button>
                </div>
            </Show>
            {move || state.notice.get().map(|n| {
                let fix = fix_for(&n).map(|f| {
                    let label = match f {
                        Fix::Settings => "Open Settings",
                        Fix::Storage => "Open Storage",
                    };
                    view! {
                        <button class="notice-fix" on:click=move |_| match f {
                            Fix::Settings => state.settings_open.set(true),
                            Fix::Storage => state.storage_open.set(true),
                        }>{label}</button>
                    }
                });
                view! { <div class="notice" role="alert"><span>{n}</span>{fix}</div> }
            })}
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
        </main>
    }
}

/// The session panel: what the model is told about the session (its state register) and how the last
/// request used the context window.
#[component]
pub fn SessionPanel(state: ChatState) -> impl IntoView {
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
                    "{} · {} · {} turns · {} tokens used so far",
                    session.workspace, if session.model.is_empty() { "demo" } else { &session.model }, session.turn_count,
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
    view! {
        <Show when=move || state.panel_open.get()>
            <aside class="session-panel" aria-label="Session state">
                <header class="panel-head">
                    <h2>"Session"</h2>
                    <button class="panel-close" aria-label="Close the session panel" on:click=move |_| state.panel_open.set(false)>"×"</button>
                </header>
                {body}
            </aside>
        </Show>
    }
}

/// The context meter's figures, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Meter {
    pub used: i64,
    pub budget: i64,
    pub percent: i64,
    pub tokens: String,
    pub turns: String,
}

pub fn context_meter(m: &cowork_core::ContextManifest, turn_count: i64) -> Meter {
    let percent = if m.budget_tokens > 0 { (m.estimated_tokens * 100 / m.budget_tokens).clamp(0, 100) } else { 0 };
    let sent = m.turn_numbers.len() as i64;
    let archived = (turn_count - sent).max(0);
    let mut turns = format!("{sent} turns in the window; {archived} only in the archive (the model can search them)");
    if !m.trimmed_turns.is_empty() {
        turns.push_str(&format!("; {} shortened", m.trimmed_turns.len()));
    }
    Meter {
        used: m.estimated_tokens,
        budget: m.budget_tokens,
        percent,
        tokens: format!("{} of {} tokens ({percent}%)", compact(m.estimated_tokens), compact(m.budget_tokens)),
        turns,
    }
}

/// 950 → "950", 12_300 → "12.3k", 2_000_000 → "2M".
pub fn compact(n: i64) -> String {
    match n {
        ..=999 => n.to_string(),
        1_000..=999_999 => format!("{:.1}k", n as f64 / 1e3).replace(".0k", "k"),
        _ => format!("{:.1}M", n as f64 / 1e6).replace(".0M", "M"),
    }
}

/// A click on a code block's Copy button copies the block's text.
fn copy_code(ev: web_sys::MouseEvent) {
    #[cfg(target_arch = "wasm32")]
    {
        use wasm_bindgen::JsCast;
        let Some(button) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()) else { return };
        if !button.class_list().contains("copy-code") {
            return;
        }
        let code = button.next_element_sibling().and_then(|pre| pre.text_content()).unwrap_or_default();
        let copied = window().navigator().clipboard().write_text(&code);
        leptos::task::spawn_local(async move {
            let done = wasm_bindgen_futures::JsFuture::from(copied).await.is_ok();
            button.set_text_content(Some(if done { "Copied" } else { "Copy failed" }));
        });
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = ev;
}

/// Delegated tasks as live checklists: goal, status, each step as it goes, and Cancel while running.
#[component]
pub fn TaskCards(state: ChatState, on_cancel: Callback<String>) -> impl IntoView {
    view! {
        <For
            each=move || state.tasks.get()
            key=|t| (t.task_id.clone(), t.status.clone(), t.checklist.clone())
            children=move |t: LiveTask| {
                let over = t.is_over();
                let id = t.task_id.clone();
                let steps: Vec<_> = t
                    .checklist
                    .iter()
                    .map(|i| {
                        let mark = match i.status.as_str() {
                            "completed" | "success" => "✓",
                            "failed" => "✗",
                            "running" | "started" | "retrying" => "●",
                            "skipped" | "cancelled" => "–",
                            _ => "○",
                        };
                        view! {
                            <li class="task-step" data-status=i.status.clone()>
                                <span class="mark" aria-hidden="true">{mark}</span>
                                <span class="label">{i.label.clone()}</span>
                                <span class="visually-hidden">{format!(" ({})", i.status)}</span>
                                {i.detail.clone().map(|d| view! { <span class="detail">{d}</span> })}
                            </li>
                        }
                    })
                    .collect();
                view! {
                    <section class="task-card" data-status=t.status.clone() aria-label="Delegated task">
                        <header>
                            <span class="task-goal">{format!("Delegated: {}", t.goal)}</span>
                            <span class="badge task-status">{t.status.clone()}</span>
                            {(!over).then(|| view! {
                                <button class="task-cancel" on:click=move |_| on_cancel.run(id.clone())>"Cancel task"</button>
                            })}
                        </header>
                        <ol class="task-steps">{steps}</ol>
                    </section>
                }
            }
        />
    }
}

/// Applies one progress event to the screen.
pub fn apply_event(state: ChatState, request: u64, event: &Event) {
    if request == 0 {
        return apply_change(state, event);
    }
    match event {
        Event::SessionCreated { session } => {
            state.current.set(Some(session.id.clone()));
            state.sessions.update(|s| {
                s.retain(|x| x.id != session.id);
                s.insert(0, session.clone())
            });
        }
        Event::TurnAppended { turn } => {
            if turn.role == Role::User {
                state.draft.set(String::new()); // saved: the draft has done its job
            }
            show_turn(state, turn);
        }
        Event::Delta { turn_number, text, .. } => state.streaming.update(|s| match s {
            Some((n, acc)) if n == turn_number => acc.push_str(text),
            _ => *s = Some((*turn_number, text.clone())),
        }),
        Event::ToolStarted { name, .. } => state.notice.set(Some(format!("Running {name}…"))),
        Event::ToolFinished { .. } => state.notice.set(None),
        Event::Retrying { wait_ms, reason, .. } => {
            state.notice.set(Some(format!("{reason} Retrying in {} s…", wait_ms.div_ceil(1000))))
        }
        Event::TaskProgress { task_id, status, goal, checklist, .. } => state.tasks.update(|tasks| {
            let task = LiveTask {
                task_id: task_id.clone(),
                goal: goal.clone(),
                status: status.clone(),
                checklist: checklist.clone(),
            };
            match tasks.iter_mut().find(|t| &t.task_id == task_id) {
                // A status-only event (no plan yet) keeps the checklist already shown.
                Some(t) if task.checklist.is_empty() => t.status = task.status,
                Some(t) => *t = task,
                None => tasks.push(task),
            }
        }),
        Event::ApprovalNeeded { call_id, name, arguments } => {
            state.approval.set(Some((call_id.clone(), name.clone(), arguments.clone())))
        }
        Event::Error { message } => state.notice.set(Some(message.clone())),
        Event::SessionsChanged { .. } => sessions_changed(state, event),
        // Answered by the storage client's tool runner (client.rs); the tool card shows the call.
        Event::ToolRequested { .. } => {}
    }
}

/// Puts a saved (or updated) turn of the open session into the window, in order, keeping it bounded.
fn show_turn(state: ChatState, turn: &Turn) {
    if state.current.get_untracked().as_deref() == Some(turn.session_id.as_str()) {
        state.turns.update(|turns| {
            turns.retain(|t| t.turn_number != turn.turn_number);
            turns.push(turn.clone());
            turns.sort_by_key(|t| t.turn_number);
            let excess = turns.len().saturating_sub(VISIBLE_TURNS);
            turns.drain(..excess);
        });
    }
}

/// The session list is out of date; a deleted session that is open closes.
fn sessions_changed(state: ChatState, event: &Event) {
    if let Event::SessionsChanged { deleted: Some(id) } = event {
        state.sessions.update(|s| s.retain(|x| &x.id != id));
        if state.current.get_untracked().as_deref() == Some(id.as_str()) {
            state.current.set(None);
            state.turns.set(Vec::new());
        }
    }
    state.sessions_stale.update(|n| *n += 1);
}

/// A change made elsewhere (another tab): show the turn if its session is open, and keep the session
/// list current. Never touches this tab's draft, selection or notices.
fn apply_change(state: ChatState, event: &Event) {
    match event {
        Event::SessionCreated { session } => state.sessions.update(|s| {
            if !s.iter().any(|x| x.id == session.id) {
                s.insert(0, session.clone());
            }
        }),
        Event::TurnAppended { turn } => {
            show_turn(state, turn);
            state.sessions.update(|s| {
                if let Some(i) = s.iter().position(|x| x.id == turn.session_id) {
                    let mut session = s.remove(i);
                    session.turn_count = session.turn_count.max(turn.turn_number);
                    session.last_active_at = session.last_active_at.max(turn.created_at);
                    if session.title.is_empty() && turn.role == Role::User {
                        session.title = turn.content.lines().next().unwrap_or_default().chars().take(80).collect();
                    }
                    s.insert(0, session);
                }
            });
        }
        Event::SessionsChanged { .. } => sessions_changed(state, event),
        _ => {}
    }
}

/// Whether a reply means the turn list should be reloaded.
pub fn turns_of(reply: &Reply) -> Option<Vec<Turn>> {
    match reply {
        Reply::Turns { turns } => Some(turns.clone()),
        _ => None,
    }
}

/// The operation that loads the visible turns of a session: its newest, or those around `around`.
pub fn load_turns_op(session: &Session, around: Option<i64>) -> Op {
    let offset = match around {
        Some(n) => (n as usize).saturating_sub(OPEN_TURNS / 2 + 1),
        None => (session.turn_count as usize).saturating_sub(OPEN_TURNS),
    };
    Op::GetTurns { session_id: session.id.clone(), offset, limit: OPEN_TURNS }
}

/// The operation that loads the page before (`older`) or after the window, or `None` at that end.
pub fn page_op(session: &Session, window: &[Turn], older: bool) -> Option<Op> {
    let (first, last) = (window.first()?.turn_number, window.last()?.turn_number);
    let (offset, limit) = if older {
        let start = (first - 1 - PAGE_TURNS as i64).max(0);
        (start, first - 1 - start)
    } else {
        (last, (session.turn_count - last).min(PAGE_TURNS as i64))
    };
    (limit > 0).then(|| Op::GetTurns { session_id: session.id.clone(), offset: offset as usize, limit: limit as usize })
}

/// Puts a page of turns into the window, in front (`older`) or behind, and trims the far side so the
/// window never holds more than `max` turns.
pub fn merge_page(window: &mut Vec<Turn>, page: Vec<Turn>, older: bool, max: usize) {
    if older {
        let first = window.first().map_or(i64::MAX, |t| t.turn_number);
        let mut merged: Vec<Turn> = page.into_iter().filter(|t| t.turn_number < first).collect();
        merged.append(window);
        merged.truncate(max);
        *window = merged;
    } else {
        let last = window.last().map_or(i64::MIN, |t| t.turn_number);
        window.extend(page.into_iter().filter(|t| t.turn_number > last));
        let excess = window.len().saturating_sub(max);
        window.drain(..excess);
    }
}

/// Splits a snippet into (text, is_match) pieces at the highlight byte ranges.
pub fn highlight_pieces(snippet: &str, highlights: &[(usize, usize)]) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut at = 0;
    for &(a, b) in highlights {
        let (a, b) = (a.min(snippet.len()), b.min(snippet.len()));
        if a < at || a >= b || !snippet.is_char_boundary(a) || !snippet.is_char_boundary(b) {
            continue;
        }
        if a > at {
            out.push((snippet[at..a].to_owned(), false));
        }
        out.push((snippet[a..b].to_owned(), true));
        at = b;
    }
    if at < snippet.len() {
        out.push((snippet[at..].to_owned(), false));
    }
    out
}

/// Ctrl/Cmd+K: full-text search across every session; Enter or a click opens the hit.
#[component]
pub fn SearchDialog(state: ChatState, on_query: Callback<String>, on_open: Callback<(String, i64)>) -> impl IntoView {
    let selected = RwSignal::new(0usize);
    let open_selected = move || {
        if let Some(h) = state.hits.get_untracked().get(selected.get_untracked()) {
            on_open.run((h.session_id.clone(), h.turn_number));
        }
    };
    let numbered_hits = move || state.hits.get().into_iter().enumerate().collect::<Vec<_>>();
    let hit_key = |pair: &(usize, SearchHit)| (pair.0, pair.1.turn_id);
    let stop_click = |ev: web_sys::MouseEvent| ev.stop_propagation();
    let on_input = move |ev: web_sys::Event| {
        selected.set(0);
        on_query.run(event_target_value(&ev));
    };
    let on_key = move |ev: web_sys::KeyboardEvent| match ev.key().as_str() {
        "Escape" => state.search_open.set(false),
        "ArrowDown" => {
            ev.prevent_default();
            let last = state.hits.get_untracked().len().saturating_sub(1);
            selected.update(|i| *i = (*i + 1).min(last));
        }
        "ArrowUp" => {
            ev.prevent_default();
            selected.update(|i| *i = i.saturating_sub(1));
        }
        "Enter" => {
            ev.prevent_default();
            open_selected();
        }
        _ => {}
    };
    view! {
        <Show when=move || state.search_open.get()>
            <div class="overlay" on:click=move |_| state.search_open.set(false)>
                <div class="dialog search" role="dialog" aria-modal="true" aria-label="Search all sessions"
                    on:click=stop_click
                    on:keydown=on_key>
                    <input class="search-input" type="search" autofocus aria-label="Search all sessions"
                        placeholder="Search every session: words, exact phrases in quotes, identifiers, paths"
                        on:input=on_input />
                    <ul class="hits">
                        <For
                            each=numbered_hits
                            key=hit_key
                            children=move |pair: (usize, SearchHit)| {
                                let (i, h) = pair;
                                let pieces = highlight_pieces(&h.snippet, &h.highlights);
                                let title = if h.session_title.is_empty() { "Untitled session".to_owned() } else { h.session_title.clone() };
                                let (sid, n) = (h.session_id.clone(), h.turn_number);
                                view! {
                                    <li class="hit" class:selected=move || selected.get() == i
                                        on:click=move |_| on_open.run((sid.clone(), n))>
                                        <div class="hit-meta">{format!("{title} · turn {} · {}", h.turn_number, h.role)}</div>
                                        <div class="hit-snippet">
                                            {pieces.into_iter().map(|(t, m)| if m { view! { <mark>{t}</mark> }.into_any() } else { view! { <span>{t}</span> }.into_any() }).collect::<Vec<_>>()}
                                        </div>
                                    </li>
                                }
                            }
                        />
                    </ul>
                </div>
            </div>
        </Show>
    }
}

/// Asks the user whether a tool call (e.g. `delegate_task`) may run, showing what it would do.
#[component]
pub fn ApprovalDialog(state: ChatState, on_answer: Callback<(String, bool)>) -> impl IntoView {
    move || {
        state.approval.get().map(|(call_id, name, arguments)| {
            let args: serde_json::Value = serde_json::from_str(&arguments).unwrap_or_default();
            let goal = args["goal"].as_str().map(str::to_owned);
            let context = match &args["context"] {
                serde_json::Value::Null => None,
                serde_json::Value::String(s) => Some(s.clone()),
                other => Some(other.to_string()),
            };
            let (yes, no) = (call_id.clone(), call_id);
            let title = if name == "delegate_task" { "Delegate this task?".to_owned() } else { format!("Run {name}?") };
            view! {
                <div class="overlay">
                    <div class="dialog" role="dialog" aria-modal="true" aria-labelledby="approval-title"
                        on:keydown=move |ev: web_sys::KeyboardEvent| if ev.key() == "Escape" { on_answer.run((no.clone(), false)) }>
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
                    </div>
                </div>
            }
        })
    }
}

/// The Settings dialog: model endpoint, API key, budget, orchestrator. Saved only when valid.
#[component]
pub fn SettingsDialog(
    state: ChatState,
    on_save: Callback<ModelSettings>,
    /// "Test connection" with the values in the form (not yet saved).
    on_test: Callback<ModelSettings>,
) -> impl IntoView {
    let draft = RwSignal::new(state.settings.get_untracked());
    let errors = RwSignal::new(Vec::new());
    Effect::new(move |_| {
        if state.settings_open.get() {
            draft.set(state.settings.get_untracked());
            errors.set(Vec::new());
        }
    });
    let error_for = move |field: &'static str| {
        move || {
            errors
                .get()
                .iter()
                .find(|e: &&crate::settings::FieldError| e.field == field)
                .map(|e| view! { <span class="field-error">{e.message.clone()}</span> })
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
                <input type=kind prop:value=move || get(&draft.get()) on:input=move |ev| draft.update(|d| set(d, event_target_value(&ev))) />
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
                <input type="number" prop:value=move || get(&draft.get()).to_string()
                    on:input=move |ev| draft.update(|d| set(d, event_target_value(&ev).trim().parse().unwrap_or(0))) />
                {error_for(field)}
            </label>
        }
    };
    let save = move |_| {
        let d = draft.get_untracked();
        let problems = validate(&d);
        if problems.is_empty() {
            on_save.run(d);
        } else {
            errors.set(problems);
        }
    };
    let test = move |_| {
        let d = draft.get_untracked();
        let problems = validate(&d);
        if problems.is_empty() {
            errors.set(Vec::new());
            on_test.run(d);
        } else {
            errors.set(problems);
        }
    };
    view! {
        <Show when=move || state.settings_open.get()>
            <div class="overlay">
                <div class="dialog settings" role="dialog" aria-modal="true" aria-labelledby="settings-title"
                    on:keydown=move |ev: web_sys::KeyboardEvent| if ev.key() == "Escape" { state.settings_open.set(false) }>
                    <h2 id="settings-title">"Settings"</h2>
                    <label class="field">
                        <span>"Endpoint kind"</span>
                        <select prop:value=move || draft.get().kind.as_str() on:change=move |ev| {
                            if let Some(kind) = crate::settings::ProviderKind::parse(&event_target_value(&ev)) {
                                draft.update(|d| d.kind = kind)
                            }
                        }>
                            <option value="openai">"OpenAI-compatible (OpenAI, Ollama, vLLM, LM Studio, OpenRouter…)"</option>
                            <option value="anthropic">"Anthropic"</option>
                        </select>
                    </label>
                    {text("Base URL", "base_url", |s| s.base_url.clone(), |s, v| s.base_url = v, "url")}
                    {text("Model", "model", |s| s.model.clone(), |s, v| s.model = v, "text")}
                    {text("API key (kept in this browser only, never exported)", "api_key", |s| s.api_key.clone(), |s, v| s.api_key = v, "password")}
                    {number("Context window (tokens)", "context_window", |s| s.context_window, |s, v| s.context_window = v)}
                    {number("Output reserve (tokens)", "output_reserve", |s| s.output_reserve, |s, v| s.output_reserve = v)}
                    {text("Orchestrator URL (empty: no delegation)", "orchestrator_url", |s| s.orchestrator_url.clone(), |s, v| s.orchestrator_url = v, "url")}
                    <p class="connection-result" role="status">{move || state.connection.get()}</p>
                    <div class="dialog-actions">
                        <button class="secondary test-connection" on:click=test>"Test connection"</button>
                        <button class="secondary" on:click=move |_| state.settings_open.set(false)>"Cancel"</button>
                        <button class="primary" on:click=save>"Save"</button>
                    </div>
                </div>
            </div>
        </Show>
    }
}

/// Bytes as a short human figure ("812 KB", "1.2 MB", "9.8 GB").
pub fn human_bytes(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = bytes.max(0.0);
    let mut unit = 0;
    while v >= 1000.0 && unit < UNITS.len() - 1 {
        v /= 1000.0;
        unit += 1;
    }
    if unit == 0 || v >= 100.0 {
        format!("{v:.0} {}", UNITS[unit])
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turns(range: std::ops::RangeInclusive<i64>) -> Vec<Turn> {
        range
            .map(|n| {
                serde_json::from_value(serde_json::json!({
                    "id": n, "session_id": "s", "turn_number": n, "role": "user", "content": format!("turn {n}"),
                    "tool_calls": [], "tool_call_id": null, "tool_name": null, "token_count": 1, "created_at": 0,
                    "status": "complete", "metadata": {}
                }))
                .unwrap()
            })
            .collect()
    }

    fn numbers(window: &[Turn]) -> (i64, i64, usize) {
        (window[0].turn_number, window.last().unwrap().turn_number, window.len())
    }

    #[test]
    fn scrolling_a_long_session_keeps_a_bounded_window() {
        let session = Session { turn_count: 10_000, ..session("s", "", "", "") };
        let mut window = turns(9_901..=10_000);
        assert_eq!(page_op(&session, &window, false), None, "the end is loaded: nothing newer");
        // Up: pages of older turns come in front; past the bound, the newest leave.
        for _ in 0..3 {
            let Some(Op::GetTurns { offset, limit, .. }) = page_op(&session, &window, true) else { panic!() };
            merge_page(&mut window, turns(offset as i64 + 1..=(offset + limit) as i64), true, VISIBLE_TURNS);
        }
        assert_eq!(numbers(&window), (9_751, 9_950, VISIBLE_TURNS));
        // Down again: newer pages come behind, the oldest leave, and the end is reached.
        while let Some(Op::GetTurns { offset, limit, .. }) = page_op(&session, &window, false) {
            merge_page(&mut window, turns(offset as i64 + 1..=(offset + limit) as i64), false, VISIBLE_TURNS);
        }
        assert_eq!(numbers(&window), (9_801, 10_000, VISIBLE_TURNS));
        // At the very top the first page is short, and then there is nothing older.
        let mut top = turns(30..=229);
        let Some(Op::GetTurns { offset, limit, .. }) = page_op(&session, &top, true) else { panic!() };
        assert_eq!((offset, limit), (0, 29));
        merge_page(&mut top, turns(1..=29), true, VISIBLE_TURNS);
        assert_eq!(numbers(&top), (1, 200, VISIBLE_TURNS));
        assert_eq!(page_op(&session, &top, true), None);
        // A page that overlaps the window (a turn arrived meanwhile) adds no duplicates.
        let mut w = turns(1..=10);
        merge_page(&mut w, turns(8..=12), false, VISIBLE_TURNS);
        assert_eq!(numbers(&w), (1, 12, 12));
    }

    #[test]
    fn the_context_meter_says_what_was_sent_and_what_stayed_in_the_archive() {
        let m = cowork_core::ContextManifest {
            session_id: "s".into(),
            turn_numbers: (41..=100).collect(),
            trimmed_turns: vec![50],
            state_version: 3,
            estimated_tokens: 12_345,
            budget_tokens: 100_000,
            usage: serde_json::Value::Null,
            created_at: 0,
        };
        let meter = context_meter(&m, 101);
        assert_eq!(meter.percent, 12);
        assert_eq!(meter.tokens, "12.3k of 100k tokens (12%)");
        assert_eq!(
            meter.turns,
            "60 turns in the window; 41 only in the archive (the model can search them); 1 shortened"
        );
        assert_eq!(compact(950), "950");
        assert_eq!(compact(2_000_000), "2M");
    }

    #[test]
    fn errors_offer_the_place_that_fixes_them() {
        let auth = "The model endpoint rejected the API key (HTTP 401: bad key). Check the API key in Settings; Cowork does not retry this.";
        assert_eq!(fix_for(auth), Some(Fix::Settings));
        assert_eq!(
            fix_for("Could not reach the model endpoint (refused). Check your connection, the base URL in Settings"),
            Some(Fix::Settings)
        );
        assert_eq!(
            fix_for("the browser's storage for this site is full. Nothing saved earlier is affected"),
            Some(Fix::Storage)
        );
        assert_eq!(fix_for("Reply interrupted: you pressed Stop"), None);
    }

    #[test]
    fn long_text_is_clipped_at_a_character_boundary() {
        assert_eq!(clip_for_display("short", 10), "short");
        assert_eq!(clip_for_display("ééé", 3), "é", "never half a character");
        assert_eq!(clip_for_display(&"x".repeat(30_000), DISPLAY_CHARS).len(), DISPLAY_CHARS);
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration_text(40), "40 ms");
        assert_eq!(duration_text(1_250), "1.2 s");
        assert_eq!(duration_text(95_000), "1 min 35 s");
    }

    #[test]
    fn times_read_naturally() {
        let now = 1_000_000_000_000;
        assert_eq!(relative_time(now, now + 5_000), "just now", "a clock a little ahead is not the future");
        assert_eq!(relative_time(now, now - 5 * 60_000), "5 min ago");
        assert_eq!(relative_time(now, now - 3 * 3_600_000), "3 h ago");
        assert_eq!(relative_time(now, now - 30 * 3_600_000), "yesterday");
        assert_eq!(relative_time(now, now - 4 * 86_400_000), "4 days ago");
    }

    fn session(id: &str, title: &str, workspace: &str, model: &str) -> Session {
        serde_json::from_value(serde_json::json!({
            "id": id, "workspace": workspace, "title": title, "model": model, "system_prompt": "", "created_at": 0,
            "last_active_at": 0, "turn_count": 0, "prompt_tokens": 0, "completion_tokens": 0, "state": {},
            "parent_session_id": null, "fork_turn": null, "is_archived": false
        }))
        .unwrap()
    }

    #[test]
    fn the_filter_looks_at_title_workspace_and_model() {
        let s = session("s", "Fix the Login bug", "backend", "demo");
        assert!(session_matches(&s, ""));
        assert!(session_matches(&s, " login "));
        assert!(session_matches(&s, "BACKEND"));
        assert!(!session_matches(&s, "frontend"));
    }

    #[test]
    fn workspaces_come_in_the_order_of_their_latest_session() {
        let newest_first = [
            session("a", "", "web", ""),
            session("b", "", "api", ""),
            session("c", "", "web", ""),
            session("d", "", "", ""),
        ];
        assert_eq!(workspace_order(&newest_first), ["web", "api", ""]);
        assert!(workspace_order(&[]).is_empty());
    }

    #[test]
    fn bytes_read_naturally() {
        let cases =
            [(0.0, "0 B"), (999.0, "999 B"), (1_234.0, "1.2 KB"), (812_000.0, "812 KB"), (9_800_000_000.0, "9.8 GB")];
        for (n, want) in cases {
            assert_eq!(human_bytes(n), want, "{n}");
        }
    }

    #[test]
    fn highlights_split_the_snippet() {
        let pieces = highlight_pieces("see rotate_refresh_token_v2 now", &[(4, 27)]);
        assert_eq!(
            pieces,
            [("see ".to_owned(), false), ("rotate_refresh_token_v2".to_owned(), true), (" now".to_owned(), false)]
        );
        // Out-of-range or mid-character ranges are ignored rather than panicking.
        assert_eq!(highlight_pieces("héllo", &[(2, 3), (9, 12)]), [("héllo".to_owned(), false)]);
    }
}
