//! The app shell: header, sidebar and main pane, with the storage worker's state always visible.

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
) -> impl IntoView {
    let (storage, set_storage) = signal(StorageState::Connecting);
    // The client lives as long as the app; components reach it through context.
    let client = start_storage(worker_url, set_storage);
    provide_context(StoredValue::new_local(client));
    view! {
        <div class="app">
            <header class="app-header">
                <h1 class="brand">"Cowork"</h1>
                <StorageStatus state=storage />
            </header>
            <StorageBanner state=storage />
            <div class="app-body">
                <nav class="sidebar" aria-label="Sessions">
                    <p class="sidebar-empty">"No sessions yet."</p>
                </nav>
                <main class="conversation">
                    <div class="welcome">
                        <h2>"A workspace that never forgets"</h2>
                        <p>"Every message is kept verbatim in this browser and can be searched at any time."</p>
                    </div>
                </main>
            </div>
        </div>
    }
}

/// The UI's handle on the archive (a storage worker client in the browser).
#[cfg(target_arch = "wasm32")]
pub type Storage = Option<crate::client::StorageClient>;
#[cfg(not(target_arch = "wasm32"))]
pub type Storage = Option<()>;

#[cfg(target_arch = "wasm32")]
fn start_storage(worker_url: String, set_storage: WriteSignal<StorageState>) -> Storage {
    use crate::client::StorageClient;
    match StorageClient::spawn(&worker_url) {
        Ok(client) => {
            let waiting = client.clone();
            leptos::task::spawn_local(async move {
                let state = match waiting.ready().await {
                    Ok(info) => StorageState::Ready(info),
                    Err(e) => StorageState::Failed(e.to_string()),
                };
                set_storage.set(state);
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
fn start_storage(_worker_url: String, set_storage: WriteSignal<StorageState>) -> Storage {
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
    move || match state.get() {
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
