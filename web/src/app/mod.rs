//! The app shell: header, sidebar and main pane, with the storage worker's state always visible. It
//! provides the chat state, the dialog state and the storage client as Leptos context, and hands the
//! components callbacks into `actions.rs` (what the buttons do) and `attach.rs` (attaching files).

mod actions;
mod attach;
mod backup;
mod pressure;
mod route;
mod semantic;
mod state;
mod storage;
pub(crate) mod sync;
pub(crate) mod tools;
mod transfer;

pub use backup::{BackupBanner, BackupSection, BackupState};
pub use state::{ImportStage, ImportState, StorageState};
pub use storage::{StorageBanners, StorageDialog};

use crate::chat::{
    ApprovalDialog, ChatState, Conversation, DeleteDialog, DialogState, ModelPicker, Providers, SearchDialog,
    SessionAction, SessionPanel, SettingsDialog, SettingsSection, Shortcut, ShortcutsDialog, Sidebar,
};
use crate::protocol::{Backend, ReadyInfo};
use leptos::prelude::*;

/// Where Trunk puts the storage worker's loader (see `index.html`).
pub const WORKER_URL: &str = "./storage-worker_loader.js";

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
    let (chat, dialogs) = (ChatState::new(), DialogState::new());
    provide_context(chat);
    provide_context(dialogs);
    // An embedding page's settings are one profile, kept in memory; the app's are this browser's.
    let providers = match &settings {
        Some(s) => {
            Providers::new(crate::settings::Profiles::from_settings(s.clone(), &crate::settings::origin()), false)
        }
        None => Providers::new(actions::load_profiles(), true),
    };
    provide_context(providers);
    if let Some(s) = providers.profiles.with_untracked(|p| p.settings_for(&p.default_choice())) {
        chat.settings.set(s);
    }
    crate::chat::follow_session(chat, providers);
    // The app follows the page's URL (a session per URL: route.rs), unless it is embedded in a page.
    let routed = client.is_none();
    // The client lives as long as the app. It is provided as context (`Client`) so any component below
    // can reach the archive; the app's own actions get it from the callbacks built here.
    let client: Client = StoredValue::new_local(start_storage(worker_url, client, set_storage, chat));
    provide_context(client);
    let (import, backup) = (ImportState::new(), BackupState::load());
    provide_context(import);
    provide_context(backup);
    client.with_value(|c| {
        if let Some(c) = c {
            c.subscribe(move |_, event| transfer::on_event(import, event));
        }
    });
    backup::start(client, backup);
    let routing = routed.then(|| route::start(client, chat, dialogs, storage));
    let on_open = Callback::new(move |id: String| {
        dialogs.sidebar_open.set(false);
        actions::open_session(client, chat, id, None)
    });
    let on_query = Callback::new(move |q: String| actions::search(client, dialogs, q));
    let on_hit = Callback::new(move |(id, turn): (String, i64)| {
        dialogs.search_open.set(false);
        actions::open_session(client, chat, id, Some(turn))
    });
    // The keyboard shortcuts (chat/shortcuts.rs): Ctrl/Cmd+K search, Ctrl/Cmd+Shift+O new session, `/`
    // the composer, `?` the sheet; Esc closes whatever dialog or menu is open, wherever the focus is (the
    // approval dialog answers Esc itself, as "Deny"), and with none open stops a reply being written.
    let keys = window_event_listener(leptos::ev::keydown, move |ev| {
        if !crate::dom::event_is_inside(&ev) {
            return;
        }
        let typing = crate::dom::active_element().is_some_and(|e| {
            matches!(e.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT") || e.has_attribute("contenteditable")
        });
        let key = ev.key();
        let press = crate::chat::Press {
            key: &key,
            command: ev.ctrl_key() || ev.meta_key(),
            shift: ev.shift_key(),
            alt: ev.alt_key(),
            typing,
        };
        let Some(shortcut) = crate::chat::shortcut_for(press) else { return };
        match shortcut {
            Shortcut::Search => {
                ev.prevent_default();
                dialogs.hits.set(Vec::new());
                dialogs.search_open.set(true);
            }
            Shortcut::NewSession => {
                ev.prevent_default();
                dialogs.close_all();
                start_new_session(chat, dialogs);
                focus_composer();
            }
            Shortcut::FocusComposer => {
                ev.prevent_default();
                focus_composer();
            }
            Shortcut::Help => {
                ev.prevent_default();
                dialogs.shortcuts_open.set(true);
            }
            Shortcut::CloseOrStop if dialogs.any_open() => dialogs.close_all(),
            // The phone's sessions drawer closes after what was opened from it, and gives the focus back.
            Shortcut::CloseOrStop if dialogs.sidebar_open.get_untracked() => {
                crate::dom::focus(".sessions-toggle");
                dialogs.sidebar_open.set(false)
            }
            Shortcut::CloseOrStop if chat.busy.get_untracked() && chat.approval.with_untracked(Option::is_none) => {
                actions::stop(client)
            }
            Shortcut::CloseOrStop => {}
        }
    });
    on_cleanup(move || keys.remove());
    let on_new = Callback::new(move |_: ()| start_new_session(chat, dialogs));
    let on_send = Callback::new(move |_: ()| actions::send(client, chat, providers));
    let on_stop = Callback::new(move |_: ()| actions::stop(client));
    let on_retry = Callback::new(move |_: ()| actions::retry(client, chat, providers));
    let on_answer = Callback::new(move |(call_id, approved): (String, bool)| {
        chat.approval.set(None);
        actions::approve(client, call_id, approved);
    });
    let on_action = Callback::new(move |a: SessionAction| actions::session_action(client, chat, dialogs, a));
    // A workspace's settings are a section of Settings: the sidebar's ⚙ (and a delegation refused for
    // want of a directory) opens it there.
    let load_workspace = Callback::new(move |w: String| actions::open_workspace(client, dialogs, w));
    let on_workspace = Callback::new(move |w: String| {
        // Its name at once (so the section does not load the open session's workspace instead), its
        // settings once read.
        dialogs.workspace.set(Some(cowork_core::WorkspaceSettings { workspace: w.clone(), ..Default::default() }));
        dialogs.open_settings(SettingsSection::Workspaces);
        load_workspace.run(w)
    });
    provide_context(crate::chat::OpenWorkspace(on_workspace));
    provide_context(crate::chat::BranchActions {
        open: on_open,
        edit: Callback::new(move |(n, text): (i64, String)| actions::edit_message(client, chat, providers, n, text)),
        regenerate: Callback::new(move |n: i64| actions::regenerate(client, chat, providers, n)),
    });
    // The session list follows changes from any tab, and the "Show archived" switch.
    Effect::new(move |_| {
        chat.sessions_stale.track();
        chat.show_archived.track();
        actions::reload_sessions(client, chat);
    });
    // The panel follows the open session and is read again after each reply.
    Effect::new(move |_| {
        let (open, current, busy) = (dialogs.panel_open.get(), chat.current.get(), chat.busy.get());
        chat.sessions_stale.track();
        if open && !busy {
            actions::load_details(client, chat, current);
        }
    });
    let on_save =
        Callback::new(move |p: crate::settings::Profiles| actions::save_profiles(chat, dialogs, providers, p));
    // The colour theme: the saved choice, applied to the page whenever it changes.
    let theme = RwSignal::new(crate::theme::load());
    Effect::new(move |_| crate::theme::apply(theme.get()));
    view! {
        <div class="app">
            // The first stop of Tab: straight to the message box.
            <a class="skip-link" href="#composer-input"
                on:click=|ev: web_sys::MouseEvent| { ev.prevent_default(); focus_composer() }>"Skip to message box"</a>
            <header class="app-header">
                <button class="header-button sessions-toggle" aria-label="Sessions"
                    aria-expanded=move || dialogs.sidebar_open.get().to_string()
                    on:click=move |_| {
                        let open = !dialogs.sidebar_open.get_untracked();
                        dialogs.sidebar_open.set(open);
                        // The drawer takes the focus once it shows, so a keyboard goes on inside it.
                        if open {
                            crate::dom::focus_later(".sidebar .new-session");
                        }
                    }>"☰"</button>
                <h1 class="brand">"Cowork"</h1>
                <ModelPicker on_choose=Callback::new(move |c| actions::choose(chat, providers, c))
                    on_list=Callback::new(move |id: String| actions::list_models(client, providers, id)) />
                <StorageStatus state=storage />
                <sync::SyncStatus />
                <button class="header-button storage-usage" title="Storage: where the archive lives, space used, export, check"
                    on:click=move |_| { dialogs.integrity.set(None); dialogs.storage_open.set(true) }>
                    {move || { let u = chat.usage.get(); if u.is_empty() { "Storage".to_owned() } else { u } }}
                </button>
                <button class="header-button" on:click=move |_| { dialogs.hits.set(Vec::new()); dialogs.search_open.set(true) }
                    title="Search every session (Ctrl+K)">"Search"</button>
                <button class="header-button export-button" on:click=move |_| actions::export_all(client, chat)
                    title="Download every session as a JSON Lines file">"Export"</button>
                <button class="header-button" aria-pressed=move || dialogs.panel_open.get().to_string()
                    title="The session's state register and how the last request used the context window"
                    on:click=move |_| dialogs.panel_open.update(|o| *o = !*o)>"Session"</button>
                <button class="header-button" on:click=move |_| dialogs.open_settings(SettingsSection::Providers)>"Settings"</button>
                <button class="header-button theme-toggle" title=move || format!("{} (click for {})", theme.get().label(), theme.get().next().as_str())
                    aria-label=move || theme.get().label()
                    on:click=move |_| theme.update(|t| *t = t.next())>{move || theme.get().symbol()}</button>
                <button class="header-button shortcuts-button" title="Keyboard shortcuts (?)" aria-label="Keyboard shortcuts"
                    on:click=move |_| dialogs.shortcuts_open.set(true)>"?"</button>
            </header>
            <StorageBanner state=storage />
            <StorageBanners />
            {routing.map(|routing| view! { <route::MissingSession routing=routing /> })}
            <div class="app-body">
                <Sidebar on_open=on_open on_new=on_new on_action=on_action on_workspace=on_workspace />
                // On a phone the sessions are a drawer over the conversation: a tap beside it closes it.
                <div class="drawer-backdrop" class:open=move || dialogs.sidebar_open.get() aria-hidden="true"
                    on:click=move |_| dialogs.sidebar_open.set(false)></div>
                <Conversation on_send=on_send on_stop=on_stop on_retry=on_retry on_action=on_action
                    on_cancel_task=Callback::new(move |id: String| actions::cancel_task(client, chat, id))
                    on_answer_step=Callback::new(move |(task, step, yes): (String, String, bool)| actions::answer_step(client, chat, task, step, yes))
                    on_more=Callback::new(move |older: bool| actions::load_more(client, chat, older))
                    on_files=Callback::new(move |files: Vec<web_sys::File>| attach::add_files(chat, files)) />
                <SessionPanel />
            </div>
            <ApprovalDialog on_answer=on_answer />
            <DeleteDialog on_action=on_action />
            <SettingsDialog on_save=on_save on_workspace=load_workspace
                on_save_workspace=Callback::new(move |w| actions::save_workspace(client, dialogs, w))
                on_sync=Callback::new(move |settings| sync::start(client, chat, settings))
                on_test=Callback::new(move |s: crate::settings::ModelSettings| actions::test_connection(client, dialogs, s)) />
            <SearchDialog on_query=on_query on_open=on_hit />
            <ShortcutsDialog />
            <StorageDialog storage=storage
                on_export=Callback::new(move |_: ()| actions::export_all(client, chat))
                on_export_chatgpt=Callback::new(move |_: ()| transfer::export(client, chat, None, crate::chat::ExportFormat::ChatGpt))
                on_check=Callback::new(move |_: ()| actions::check_archive(client, dialogs))
                on_open=on_open />
        </div>
    }
}

/// An empty conversation: nothing is saved until its first message.
fn start_new_session(chat: ChatState, dialogs: DialogState) {
    dialogs.sidebar_open.set(false);
    chat.current.set(None);
    chat.turns.set(Vec::new());
    chat.leave_notice();
}

/// Puts the cursor in the message box.
fn focus_composer() {
    crate::dom::focus("#composer-input")
}

/// The UI's handle on the archive (a storage worker client; `None` where none could start, natively
/// always).
pub type Storage = Option<crate::client::StorageClient>;

/// The storage client as the app provides it in context.
pub type Client = StoredValue<Storage, LocalStorage>;

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
            client.subscribe(move |id, event| chat.apply_event(id, event));
            // Unmounted (`mount()`'s UI removed), the state is disposed: its events must stop with it.
            let subscribed = send_wrapper::SendWrapper::new(client.clone());
            on_cleanup(move || subscribed.unsubscribe());
            let waiting = client.clone();
            leptos::task::spawn_local(async move {
                let state = match waiting.ready().await {
                    Ok(info) => StorageState::Ready(info),
                    Err(e) => StorageState::Failed(e.to_string()),
                };
                let ready = matches!(state, StorageState::Ready(_));
                set_storage.set(state);
                if ready {
                    // Sync runs in whichever tab's worker owns the archive: every tab asks for it.
                    if let Some(settings) = sync::load() {
                        sync::start_with(waiting.clone(), chat, Some(settings));
                    }
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
fn start_storage(url: String, _: Storage, set_storage: WriteSignal<StorageState>, _chat: ChatState) -> Storage {
    let failed = crate::client::StorageClient::spawn(&url).err().map(|e| e.to_string()).unwrap_or_default();
    set_storage.set(StorageState::Failed(failed));
    None
}

/// A compact badge: connecting, ready (and where), or failed.
#[component]
pub fn StorageStatus(
    /// The archive's state.
    state: ReadSignal<StorageState>,
) -> impl IntoView {
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
pub fn StorageBanner(
    /// The archive's state.
    state: ReadSignal<StorageState>,
) -> impl IntoView {
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
