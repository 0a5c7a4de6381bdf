//! The app shell: header, sidebar and main pane, with the storage worker's state always visible.

use crate::chat::{
    ApprovalDialog, ChatState, Conversation, DeleteDialog, SearchDialog, SessionAction, SessionPanel, SettingsDialog,
    Sidebar,
};
use crate::protocol::{Backend, ReadyInfo};
use leptos::prelude::*;

/// Where Trunk puts the storage worker's loader (see `index.html`).
pub const WORKER_URL: &str = "./storage-worker_loader.js";

/// What the UI knows about the archive.
#[derive(Debug, Clone, PartialEq)]
pub enum StorageState {
    Connecting,
    Ready(ReadyInfo),
    Failed(String),
}

/// The whole application.
#[component]
pub fn App(
    /// URL of the storage worker script.
    #[prop(into, default = WORKER_URL.to_string())]
    worker_url: String,
    /// A storage client to use instead of starting a worker (the embedding API's archive).
    #[prop(optional)]
    client: Storage,
    /// Model settings to start with instead of the ones saved in this browser (an embedding page's).
    #[prop(default = None)]
    settings: Option<crate::settings::ModelSettings>,
) -> impl IntoView {
    let (storage, set_storage) = signal(StorageState::Connecting);
    let chat = ChatState::new();
    // The client lives as long as the app; components reach it through context.
    let client = StoredValue::new_local(start_storage(worker_url, client, set_storage, chat));
    provide_context(client);
    let on_open = Callback::new(move |id: String| {
        chat.sidebar_open.set(false);
        actions::open_session(client, chat, id, None)
    });
    let on_query = Callback::new(move |q: String| actions::search(client, chat, q));
    let on_hit = Callback::new(move |(id, turn): (String, i64)| {
        chat.search_open.set(false);
        actions::open_session(client, chat, id, Some(turn))
    });
    // Ctrl/Cmd+K opens search from anywhere; Esc closes whatever dialog or menu is open, wherever the
    // focus is (the approval dialog answers Esc itself, as "Deny").
    let keys = window_event_listener(leptos::ev::keydown, move |ev| {
        if !crate::dom::event_is_inside(&ev) {
            return;
        }
        if (ev.ctrl_key() || ev.meta_key()) && ev.key().eq_ignore_ascii_case("k") {
            ev.prevent_default();
            chat.hits.set(Vec::new());
            chat.search_open.set(true);
        } else if ev.key() == "Escape" {
            chat.search_open.set(false);
            chat.settings_open.set(false);
            chat.storage_open.set(false);
            chat.menu.set(None);
            chat.confirm_delete.set(None);
        }
    });
    on_cleanup(move || keys.remove());
    let on_new = Callback::new(move |_: ()| {
        chat.sidebar_open.set(false);
        chat.current.set(None);
        chat.turns.set(Vec::new());
        chat.notice.set(None);
    });
    let on_send = Callback::new(move |_: ()| actions::send(client, chat));
    let on_stop = Callback::new(move |_: ()| actions::stop(client));
    let on_retry = Callback::new(move |_: ()| actions::retry(client, chat));
    let on_answer = Callback::new(move |(call_id, approved): (String, bool)| {
        chat.approval.set(None);
        actions::approve(client, call_id, approved);
    });
    let on_action = Callback::new(move |a: SessionAction| actions::session_action(client, chat, a));
    // The session list follows changes from any tab, and the "Show archived" switch.
    Effect::new(move |_| {
        chat.sessions_stale.track();
        chat.show_archived.track();
        actions::reload_sessions(client, chat);
    });
    // The panel follows the open session and is read again after each reply.
    Effect::new(move |_| {
        let (open, current, busy) = (chat.panel_open.get(), chat.current.get(), chat.busy.get());
        chat.sessions_stale.track();
        if open && !busy {
            actions::load_details(client, chat, current);
        }
    });
    let on_save = Callback::new(move |settings: crate::settings::ModelSettings| actions::save_settings(chat, settings));
    match settings {
        Some(s) => chat.settings.set(s),
        None => actions::load_settings(chat),
    }
    view! {
        <div class="app">
            <header class="app-header">
                <button class="header-button sessions-toggle" aria-label="Sessions"
                    on:click=move |_| chat.sidebar_open.update(|o| *o = !*o)>"☰"</button>
                <h1 class="brand">"Cowork"</h1>
                <span class="model-label" title="The model new messages go to (change it in Settings)">
                    {move || { let s = chat.settings.get(); if crate::settings::is_demo(&s) { "demo model".to_owned() } else { s.model } }}
                </span>
                <StorageStatus state=storage />
                <button class="header-button storage-usage" title="Storage: where the archive lives, space used, export, check"
                    on:click=move |_| { chat.integrity.set(None); chat.storage_open.set(true) }>
                    {move || { let u = chat.usage.get(); if u.is_empty() { "Storage".to_owned() } else { u } }}
                </button>
                <button class="header-button" on:click=move |_| { chat.hits.set(Vec::new()); chat.search_open.set(true) }
                    title="Search every session (Ctrl+K)">"Search"</button>
                <button class="header-button export-button" on:click=move |_| actions::export_all(client, chat)
                    title="Download every session as a JSON Lines file">"Export"</button>
                <button class="header-button" aria-pressed=move || chat.panel_open.get().to_string()
                    title="The session's state register and how the last request used the context window"
                    on:click=move |_| chat.panel_open.update(|o| *o = !*o)>"Session"</button>
                <button class="header-button" on:click=move |_| { chat.connection.set(None); chat.settings_open.set(true) }>"Settings"</button>
            </header>
            <StorageBanner state=storage />
            <div class="app-body">
                <Sidebar state=chat on_open=on_open on_new=on_new on_action=on_action />
                <Conversation state=chat on_send=on_send on_stop=on_stop on_retry=on_retry on_action=on_action
                    on_cancel_task=Callback::new(move |id: String| actions::cancel_task(client, chat, id))
                    on_more=Callback::new(move |older: bool| actions::load_more(client, chat, older)) />
                <SessionPanel state=chat />
            </div>
            <ApprovalDialog state=chat on_answer=on_answer />
            <DeleteDialog state=chat on_action=on_action />
            <SettingsDialog state=chat on_save=on_save
                on_test=Callback::new(move |s: crate::settings::ModelSettings| actions::test_connection(client, chat, s)) />
            <SearchDialog state=chat on_query=on_query on_open=on_hit />
            <StorageDialog state=chat storage=storage
                on_export=Callback::new(move |_: ()| actions::export_all(client, chat))
                on_check=Callback::new(move |_: ()| actions::check_archive(client, chat))
                on_import=Callback::new(move |text: String| actions::import(client, chat, text)) />
        </div>
    }
}

/// The UI's handle on the archive (a storage worker client in the browser).
#[cfg(target_arch = "wasm32")]
pub type Storage = Option<crate::client::StorageClient>;
#[cfg(not(target_arch = "wasm32"))]
pub type Storage = Option<()>;

#[cfg(target_arch = "wasm32")]
fn start_storage(
    worker_url: String,
    given: Storage,
    set_storage: WriteSignal<StorageState>,
    chat: ChatState,
) -> Storage {
    use crate::client::StorageClient;
    match given.map(Ok).unwrap_or_else(|| StorageClient::spawn(&worker_url)) {
        Ok(client) => {
            client.subscribe(move |id, event| crate::chat::apply_event(chat, id, event));
            let waiting = client.clone();
            leptos::task::spawn_local(async move {
                let state = match waiting.ready().await {
                    Ok(info) => StorageState::Ready(info),
                    Err(e) => StorageState::Failed(e.to_string()),
                };
                let ready = matches!(state, StorageState::Ready(_));
                set_storage.set(state);
                if ready {
                    actions::refresh_sessions(&waiting, chat).await;
                    actions::refresh_usage(chat).await;
                }
            });
            Some(client)
        }
        Err(e) => {
            set_storage.set(StorageState::Failed(e.to_string()));
            None
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn start_storage(_: String, _: Storage, set_storage: WriteSignal<StorageState>, _chat: ChatState) -> Storage {
    set_storage.set(StorageState::Failed("storage needs a browser".into()));
    None
}

/// A compact badge: connecting, ready (and where), or failed.
#[component]
pub fn StorageStatus(state: ReadSignal<StorageState>) -> impl IntoView {
    move || {
        let (kind, text, title) = match state.get() {
            StorageState::Connecting => ("connecting", "opening storage…".to_owned(), String::new()),
            StorageState::Ready(info) => {
                let place = if info.backend.is_persistent() { "saved in this browser" } else { "in memory only" };
                ("ready", "storage ready".to_owned(), format!("{place} · SQLite {}", info.sqlite_version))
            }
            StorageState::Failed(msg) => ("failed", "storage unavailable".to_owned(), msg),
        };
        view! {
            <span class="storage-status" data-state=kind title=title.clone() role="status">
                <span class="dot" aria-hidden="true"></span>
                {text}
            </span>
        }
    }
}

/// A visible warning whenever data would not survive closing the tab.
#[component]
pub fn StorageBanner(state: ReadSignal<StorageState>) -> impl IntoView {
    move || {
        match state.get() {
        StorageState::Ready(ReadyInfo { backend: Backend::Memory { reason }, .. }) => Some(view! {
            <div class="banner warning" role="alert">
                <strong>"Not saved: "</strong>
                "this browser cannot keep data here, so this session lives in memory only and is lost when the tab closes. Export it to keep it. "
                <span class="banner-detail">{reason}</span>
            </div>
        }.into_any()),
        StorageState::Failed(msg) => Some(view! {
            <div class="banner error" role="alert">
                <strong>"Storage could not start: "</strong>{msg}
                " Reload the page to try again; nothing saved earlier has been changed."
            </div>
        }.into_any()),
        _ => None,
    }
    }
}

/// The storage panel: where the archive lives, whether the browser keeps it, space, export, a check.
#[component]
pub fn StorageDialog(
    state: ChatState,
    storage: ReadSignal<StorageState>,
    on_export: Callback<()>,
    on_check: Callback<()>,
    /// The text of a JSON Lines file the user chose.
    on_import: Callback<String>,
) -> impl IntoView {
    let place = move || match storage.get() {
        StorageState::Ready(ReadyInfo { backend: Backend::Opfs { file }, sqlite_version, .. }) => {
            format!("Saved in this browser's private file system ({file}, SQLite {sqlite_version}).")
        }
        StorageState::Ready(ReadyInfo { backend: Backend::Memory { .. }, .. }) => {
            "In memory only: everything is lost when this tab closes. Export to keep it.".to_owned()
        }
        StorageState::Connecting => "Opening…".to_owned(),
        StorageState::Failed(msg) => format!("Unavailable: {msg}"),
    };
    let close = move || state.storage_open.set(false);
    view! {
        <Show when=move || state.storage_open.get()>
            <div class="overlay" on:click=move |_| close()>
                <div class="dialog storage" role="dialog" aria-modal="true" aria-label="Storage"
                    on:click=|ev: web_sys::MouseEvent| ev.stop_propagation()
                    on:keydown=move |ev: web_sys::KeyboardEvent| if ev.key() == "Escape" { close() }>
                    <h2>"Storage"</h2>
                    <p class="storage-place">{place}</p>
                    <p class="storage-usage-detail">{move || state.usage.get()}</p>
                    <div class="dialog-actions">
                        <button on:click=move |_| on_export.run(())>"Export all (JSON Lines)"</button>
                        <label class="button import">
                            "Import…"
                            <input type="file" accept=".jsonl,application/x-ndjson,application/json,text/plain"
                                class="visually-hidden" aria-label="Import an exported archive (JSON Lines)"
                                on:change=move |ev| read_chosen_file(ev, on_import) />
                        </label>
                        <button on:click=move |_| on_check.run(())>"Check archive"</button>
                        <button on:click=move |_| close() autofocus>"Close"</button>
                    </div>
                    <p class="import-result" role="status">{move || state.import_result.get()}</p>
                    <p class="integrity" role="status">{move || state.integrity.get().map(|r| format!("Archive check: {r}"))}</p>
                </div>
            </div>
        </Show>
    }
}

/// Reads the file chosen in an `<input type=file>` as text and hands it on.
fn read_chosen_file(ev: leptos::ev::Event, then: Callback<String>) {
    #[cfg(target_arch = "wasm32")]
    {
        use wasm_bindgen::JsCast;
        let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else { return };
        let Some(file) = input.files().and_then(|f| f.get(0)) else { return };
        input.set_value(""); // choosing the same file again imports again
        leptos::task::spawn_local(async move {
            if let Ok(text) = wasm_bindgen_futures::JsFuture::from(file.text()).await {
                then.run(text.as_string().unwrap_or_default());
            }
        });
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = (ev, then);
}

/// What the buttons do: calls into the storage worker, results written into the chat state.
#[cfg(target_arch = "wasm32")]
mod actions {
    use super::Storage;
    use crate::chat::{load_turns_op, turns_of, ChatState, SessionAction};
    use crate::client::StorageClient;
    use crate::protocol::{Op, Reply};
    use leptos::prelude::*;
    use leptos::task::spawn_local;

    type Client = StoredValue<Storage, LocalStorage>;

    fn client(c: Client) -> Option<StorageClient> {
        c.with_value(|c| c.clone())
    }

    pub async fn refresh_sessions(client: &StorageClient, chat: ChatState) {
        let include_archived = chat.show_archived.get_untracked();
        match client.call(Op::ListSessions { workspace: None, include_archived }).await {
            Ok(Reply::Sessions { sessions }) => chat.sessions.set(sessions),
            Ok(_) => {}
            Err(e) => chat.notice.set(Some(e.to_string())),
        }
    }

    async fn load_session(client: &StorageClient, chat: ChatState, id: &str, around: Option<i64>) {
        let sessions = chat.sessions.get_untracked();
        let Some(session) = sessions.iter().find(|s| s.id == id) else { return };
        match client.call(load_turns_op(session, around)).await {
            Ok(reply) => {
                if let Some(turns) = turns_of(&reply) {
                    chat.turns.set(turns);
                }
            }
            Err(e) => chat.notice.set(Some(e.to_string())),
        }
    }

    pub fn open_session(c: Client, chat: ChatState, id: String, turn: Option<i64>) {
        let Some(client) = client(c) else { return };
        chat.current.set(Some(id.clone()));
        chat.notice.set(None);
        chat.focus_turn.set(turn);
        chat.stick_to_end.set(turn.is_none());
        spawn_local(async move {
            load_session(&client, chat, &id, turn).await;
            if let Some(n) = turn {
                // Let the list render, then bring the hit into view.
                leptos::task::tick().await;
                let selector = format!(".turn[data-turn=\"{n}\"]");
                if let Some(el) = crate::dom::query(&selector) {
                    el.scroll_into_view();
                }
            }
        });
    }

    pub fn search(c: Client, chat: ChatState, text: String) {
        let Some(client) = client(c) else { return };
        if text.trim().is_empty() {
            chat.hits.set(Vec::new());
            return;
        }
        spawn_local(async move {
            let query = cowork_core::SearchQuery {
                limit: 20,
                prefix_last: true,
                ..cowork_core::SearchQuery::new(text.clone(), cowork_core::SearchScope::All)
            };
            if let Ok(Reply::Hits { hits }) = client.call(Op::Search { query }).await {
                chat.hits.set(hits);
            }
        });
    }

    pub fn send(c: Client, chat: ChatState) {
        let text = chat.draft.get_untracked();
        if text.trim().is_empty() {
            return;
        }
        run(c, chat, Some(text));
    }

    /// Runs the loop again from the session's end (after an interrupted or failed reply).
    pub fn retry(c: Client, chat: ChatState) {
        run(c, chat, None);
    }

    fn run(c: Client, chat: ChatState, text: Option<String>) {
        if chat.busy.get_untracked() {
            return;
        }
        let Some(client) = client(c) else {
            chat.notice.set(Some("Storage is not available, so the message cannot be saved.".into()));
            return;
        };
        if !window().navigator().on_line() {
            chat.notice.set(Some(
                "You are offline: the message is kept here; send it when the connection is back. \
                 Reading and searching your sessions work offline."
                    .into(),
            ));
            return;
        }
        chat.busy.set(true);
        chat.notice.set(None);
        chat.tasks.update(|t| t.retain(|t| !t.is_over()));
        request_persistence();
        spawn_local(async move {
            let model = crate::settings::trimmed(&chat.settings.get_untracked());
            let op = match (text, chat.current.get_untracked()) {
                (Some(text), session_id) => {
                    let key = crate::protocol::random_key();
                    let workspace = chat.workspace.get_untracked();
                    Op::SendMessage { session_id, workspace, text, model, key, host: client.host_options() }
                }
                (None, Some(session_id)) => Op::Continue { session_id, model, host: client.host_options() },
                (None, None) => {
                    chat.busy.set(false);
                    return;
                }
            };
            // The draft is cleared when the worker reports the user's turn saved (chat::apply_event), so a
            // failure before that keeps it, and a new draft typed meanwhile is never touched.
            let result = client.call(op).await;
            match &result {
                Ok(Reply::Sent { outcome, .. }) if outcome != "done" => {
                    chat.notice.set(Some(format!("Reply {outcome}")))
                }
                Ok(_) => chat.notice.set(None),
                Err(e) => chat.notice.set(Some(e.to_string())),
            }
            refresh_sessions(&client, chat).await;
            if let Some(id) = chat.current.get_untracked() {
                load_session(&client, chat, &id, None).await;
            }
            refresh_usage(chat).await;
            chat.streaming.set(None);
            chat.busy.set(false);
        });
    }

    pub fn load_settings(chat: ChatState) {
        chat.settings.set(crate::settings::load());
    }

    /// Loads the page of turns before (`older`) or after the window, keeping what the user looks at
    /// where it is on screen.
    pub fn load_more(c: Client, chat: ChatState, older: bool) {
        use wasm_bindgen::JsCast;
        if chat.loading_more.get_untracked() || chat.busy.get_untracked() {
            return;
        }
        let Some(client) = client(c) else { return };
        let Some(id) = chat.current.get_untracked() else { return };
        let Some(session) = chat.sessions.get_untracked().into_iter().find(|s| s.id == id) else { return };
        let Some(op) = chat.turns.with_untracked(|w| crate::chat::page_op(&session, w, older)) else { return };
        chat.loading_more.set(true);
        spawn_local(async move {
            if let Ok(Reply::Turns { turns }) = client.call(op).await {
                if chat.current.get_untracked().as_deref() == Some(id.as_str()) {
                    // Anchor: a turn that stays in the window; after the change it is put back where it was.
                    let anchor =
                        chat.turns.with_untracked(|w| if older { w.first() } else { w.last() }.map(|t| t.turn_number));
                    let list = crate::dom::query(".turns");
                    let top_of = |n: i64| {
                        crate::dom::query(&format!(".turn[data-turn=\"{n}\"]"))
                            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
                            .map(|e| e.offset_top())
                    };
                    let before = anchor.and_then(top_of);
                    chat.turns.update(|w| crate::chat::merge_page(w, turns, older, crate::chat::VISIBLE_TURNS));
                    leptos::task::tick().await;
                    if let (Some(list), Some(before), Some(after)) = (list, before, anchor.and_then(top_of)) {
                        list.set_scroll_top(list.scroll_top() + after - before);
                    }
                }
            }
            chat.loading_more.set(false);
        });
    }

    pub fn load_details(c: Client, chat: ChatState, session_id: Option<String>) {
        let Some(session_id) = session_id else {
            chat.details.set(None);
            return;
        };
        let Some(client) = client(c) else { return };
        spawn_local(async move {
            if let Ok(Reply::Details { session, manifest }) = client.call(Op::SessionDetails { session_id }).await {
                chat.details.set(Some((session, manifest)));
            }
        });
    }

    pub fn test_connection(c: Client, chat: ChatState, settings: crate::settings::ModelSettings) {
        let Some(client) = client(c) else { return };
        chat.connection.set(Some("Testing…".into()));
        spawn_local(async move {
            let text = match client.call(Op::TestConnection { model: crate::settings::trimmed(&settings) }).await {
                Ok(Reply::Text { text }) => text,
                Ok(_) => "No answer.".into(),
                Err(e) => e.to_string(),
            };
            chat.connection.set(Some(text));
        });
    }

    pub fn cancel_task(c: Client, chat: ChatState, task_id: String) {
        let Some(client) = client(c) else { return };
        let orchestrator_url = chat.settings.get_untracked().orchestrator_url.trim().to_owned();
        spawn_local(async move {
            if let Err(e) = client.call(Op::CancelTask { task_id, orchestrator_url }).await {
                chat.notice.set(Some(e.to_string()));
            }
        });
    }

    pub fn reload_sessions(c: Client, chat: ChatState) {
        let Some(client) = client(c) else { return };
        spawn_local(async move { refresh_sessions(&client, chat).await });
    }

    /// Rename, fork, export, archive or delete a session (deleting asks first).
    pub fn session_action(c: Client, chat: ChatState, action: SessionAction) {
        let Some(client) = client(c) else { return };
        if let SessionAction::Delete { id, confirmed: false } = &action {
            let session = chat.sessions.get_untracked().into_iter().find(|s| &s.id == id);
            chat.confirm_delete.set(session);
            return;
        }
        spawn_local(async move {
            let (op, what) = match &action {
                SessionAction::Rename { id, title } => {
                    (Op::RenameSession { session_id: id.clone(), title: title.clone() }, "rename the session")
                }
                SessionAction::Fork { id, at_turn } => {
                    (Op::ForkSession { session_id: id.clone(), at_turn: *at_turn }, "fork the session")
                }
                SessionAction::Export { id } => (Op::ExportSession { session_id: id.clone() }, "export the session"),
                SessionAction::Archive { id, archived } => {
                    (Op::ArchiveSession { session_id: id.clone(), archived: *archived }, "archive the session")
                }
                SessionAction::Delete { id, .. } => {
                    (Op::DeleteSession { session_id: id.clone() }, "delete the session")
                }
            };
            match client.call(op).await {
                Ok(Reply::Session { session }) if matches!(action, SessionAction::Fork { .. }) => {
                    refresh_sessions(&client, chat).await;
                    open_session(c, chat, session.id, None);
                }
                Ok(Reply::Text { text }) => {
                    let name = format!("cowork-session-{}.jsonl", export_name_date());
                    if let Err(e) = download("application/x-ndjson", &name, &text) {
                        chat.notice.set(Some(format!("The export could not be downloaded: {e}")));
                    }
                }
                Ok(_) => {
                    if let SessionAction::Archive { id, archived: true } = &action {
                        if chat.current.get_untracked().as_deref() == Some(id.as_str())
                            && !chat.show_archived.get_untracked()
                        {
                            chat.current.set(None);
                            chat.turns.set(Vec::new());
                        }
                    }
                }
                Err(e) => chat.notice.set(Some(format!("Could not {what}: {e}"))),
            }
        });
    }

    /// Imports a JSON Lines export: all of it or (naming the bad line) nothing.
    pub fn import(c: Client, chat: ChatState, text: String) {
        let Some(client) = client(c) else { return };
        chat.import_result.set(Some("importing…".into()));
        spawn_local(async move {
            let result = match client.call(Op::Import { text }).await {
                Ok(Reply::Text { text }) => text,
                Ok(_) => "done".into(),
                Err(e) => format!("Nothing was imported: {e}"),
            };
            chat.import_result.set(Some(result));
            refresh_sessions(&client, chat).await;
            refresh_usage(chat).await;
        });
    }

    pub fn save_settings(chat: ChatState, settings: crate::settings::ModelSettings) {
        match crate::settings::save(&settings) {
            Ok(()) => {
                chat.settings.set(settings);
                chat.settings_open.set(false);
            }
            Err(e) => chat.notice.set(Some(e)),
        }
    }

    pub fn approve(c: Client, call_id: String, approved: bool) {
        if let Some(client) = client(c) {
            spawn_local(async move {
                let _ = client.call(Op::Approve { call_id, approved }).await;
            });
        }
    }

    /// Downloads the whole archive as `cowork-archive-<date>.jsonl`.
    pub fn export_all(c: Client, chat: ChatState) {
        let Some(client) = client(c) else {
            chat.notice.set(Some("Storage is not available, so there is nothing to export.".into()));
            return;
        };
        spawn_local(async move {
            match client.call(Op::ExportAll).await {
                Ok(Reply::Text { text }) => {
                    if let Err(e) = download("application/x-ndjson", &export_name(), &text) {
                        chat.notice.set(Some(format!("The export could not be downloaded: {e}")));
                    }
                }
                Ok(_) => {}
                Err(e) => chat.notice.set(Some(format!("Export failed: {e}"))),
            }
        });
    }

    fn export_name() -> String {
        format!("cowork-archive-{}.jsonl", export_name_date())
    }

    fn export_name_date() -> String {
        String::from(js_sys::Date::new_0().to_iso_string()).chars().take(10).collect()
    }

    /// Offers `text` as a file download.
    fn download(mime: &str, name: &str, text: &str) -> Result<(), String> {
        use wasm_bindgen::JsCast;
        let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
        let opts = web_sys::BlobPropertyBag::new();
        opts.set_type(mime);
        let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts).map_err(|e| format!("{e:?}"))?;
        let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| format!("{e:?}"))?;
        let a: web_sys::HtmlAnchorElement =
            document().create_element("a").map_err(|e| format!("{e:?}"))?.unchecked_into();
        a.set_href(&url);
        a.set_download(name);
        a.click();
        let _ = web_sys::Url::revoke_object_url(&url);
        Ok(())
    }

    /// Reads the browser's storage estimate and whether the archive is kept under storage pressure.
    pub async fn refresh_usage(chat: ChatState) {
        use wasm_bindgen_futures::JsFuture;
        let Some(storage) = web_sys::window().map(|w| w.navigator().storage()) else { return };
        let get = |obj: &wasm_bindgen::JsValue, key: &str| {
            js_sys::Reflect::get(obj, &key.into()).ok().and_then(|v| v.as_f64()).unwrap_or(0.0)
        };
        let estimate = match storage.estimate() {
            Ok(p) => JsFuture::from(p).await.ok(),
            Err(_) => None,
        };
        let persisted = match storage.persisted() {
            Ok(p) => JsFuture::from(p).await.ok().and_then(|v| v.as_bool()).unwrap_or(false),
            Err(_) => false,
        };
        let kept = if persisted { "kept by the browser" } else { "may be evicted under storage pressure" };
        let text = match estimate {
            Some(e) => format!(
                "{} of {} used · {kept}",
                crate::chat::human_bytes(get(&e, "usage")),
                crate::chat::human_bytes(get(&e, "quota"))
            ),
            None => kept.to_owned(),
        };
        chat.usage.set(text);
    }

    /// Asks the browser to keep the archive even under storage pressure (once, at the first send).
    fn request_persistence() {
        if let Some(storage) = web_sys::window().map(|w| w.navigator().storage()) {
            if let Ok(p) = storage.persist() {
                spawn_local(async move {
                    let _ = wasm_bindgen_futures::JsFuture::from(p).await;
                });
            }
        }
    }

    /// Runs SQLite's integrity check over the whole archive and shows its verdict.
    pub fn check_archive(c: Client, chat: ChatState) {
        let Some(client) = client(c) else { return };
        chat.integrity.set(Some("checking…".into()));
        spawn_local(async move {
            let verdict = match client.call(Op::IntegrityCheck).await {
                Ok(Reply::Text { text }) => text,
                Ok(_) => "no answer".into(),
                Err(e) => e.to_string(),
            };
            chat.integrity.set(Some(verdict));
        });
    }

    pub fn stop(c: Client) {
        if let Some(client) = client(c) {
            spawn_local(async move {
                let _ = client.call(Op::Stop).await;
            });
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod actions {
    use super::Storage;
    use crate::chat::ChatState;
    use leptos::prelude::*;

    type Client = StoredValue<Storage, LocalStorage>;

    pub fn open_session(_: Client, _: ChatState, _: String, _: Option<i64>) {}
    pub fn reload_sessions(_: Client, _: ChatState) {}
    pub fn cancel_task(_: Client, _: ChatState, _: String) {}
    pub fn test_connection(_: Client, _: ChatState, _: crate::settings::ModelSettings) {}
    pub fn load_details(_: Client, _: ChatState, _: Option<String>) {}
    pub fn load_more(_: Client, _: ChatState, _: bool) {}
    pub fn session_action(_: Client, _: ChatState, _: crate::chat::SessionAction) {}
    pub fn import(_: Client, _: ChatState, _: String) {}
    pub fn search(_: Client, _: ChatState, _: String) {}
    pub fn export_all(_: Client, _: ChatState) {}
    pub fn check_archive(_: Client, _: ChatState) {}
    pub fn send(_: Client, _: ChatState) {}
    pub fn retry(_: Client, _: ChatState) {}
    pub fn stop(_: Client) {}
    pub fn approve(_: Client, _: String, _: bool) {}
    pub fn load_settings(_: ChatState) {}
    pub fn save_settings(chat: ChatState, settings: crate::settings::ModelSettings) {
        chat.settings.set(settings);
        chat.settings_open.set(false);
    }
}
