//! Automatic backup to a folder: the Storage panel's section, the warning banner, and the browser
//! glue — the File System Access API's `showDirectoryPicker` (declared here: web-sys has no types
//! for it), the folder's handle kept in IndexedDB, its permission asked again when the browser has
//! dropped it, snapshots written and pruned. When and what is decided by the pure `crate::backup`.
//! Where the API is missing (Firefox, Safari), the section offers the download instead and says why.

use super::Client;
use crate::backup::{self, BackupRecord};
use crate::chat::{ChatState, DialogState};
use leptos::prelude::*;

/// Where the backup's record is kept in this browser (the folder's handle is in IndexedDB).
const RECORD_KEY: &str = "cowork.backup";

/// What the UI knows about backups.
#[derive(Clone, Copy)]
pub struct BackupState {
    /// The record (folder, last snapshot, settings), saved in local storage on every change.
    pub record: RwSignal<BackupRecord>,
    /// What the last attempt said ("Backing up…", a failure); `None`: nothing to add.
    pub status: RwSignal<Option<String>>,
    /// The browser dropped the folder's permission: backups wait for the user to allow it again.
    pub needs_permission: RwSignal<bool>,
    /// Whether the browser can write to a folder (`showDirectoryPicker`).
    pub supported: bool,
    /// The clock, moved on every minute (for "last backed up …" and the banner).
    pub now: RwSignal<i64>,
    /// This tab saw a change since the last snapshot.
    pub changed: RwSignal<bool>,
}

impl BackupState {
    /// The record as saved in this browser (the first use recorded now if it was not yet).
    pub fn load() -> BackupState {
        let now = now_ms();
        let mut record: BackupRecord = local_storage()
            .and_then(|s| s.get_item(RECORD_KEY).ok().flatten())
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        if record.first_use_at == 0 {
            record.first_use_at = now;
            save(&record);
        }
        BackupState {
            record: RwSignal::new(record),
            status: RwSignal::new(None),
            needs_permission: RwSignal::new(false),
            supported: glue::supported(),
            now: RwSignal::new(now),
            changed: RwSignal::new(false),
        }
    }

    /// Changes the record and saves it.
    pub fn update(&self, f: impl FnOnce(&mut BackupRecord)) {
        self.record.update(f);
        save(&self.record.get_untracked());
    }
}

fn save(record: &BackupRecord) {
    if let (Some(s), Ok(text)) = (local_storage(), serde_json::to_string(record)) {
        let _ = s.set_item(RECORD_KEY, &text);
    }
}

fn local_storage() -> Option<web_sys::Storage> {
    #[cfg(target_arch = "wasm32")]
    {
        web_sys::window().and_then(|w| w.local_storage().ok().flatten())
    }
    #[cfg(not(target_arch = "wasm32"))]
    None
}

fn now_ms() -> i64 {
    #[cfg(target_arch = "wasm32")]
    {
        js_sys::Date::now() as i64
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
    }
}

/// The backup part of the Storage panel.
#[component]
pub fn BackupSection() -> impl IntoView {
    let state = expect_context::<BackupState>();
    let client = expect_context::<Client>();
    let chat = ChatState::get();
    let describe = move || backup::describe(&state.record.get(), state.now.get());
    let has_folder = move || state.record.with(|r| r.folder.is_some());
    let number = |ev: leptos::ev::Event| event_target_value(&ev).trim().parse::<u64>().ok();
    view! {
        <section class="backup-section" aria-label="Backup">
            <h3>"Backup"</h3>
            <p class="backup-status" role="status">{describe}</p>
            <Show when=move || state.needs_permission.get()>
                <p class="backup-permission">"The browser needs your permission again to write to the backup folder."</p>
            </Show>
            <p class="backup-message" role="status">{move || state.status.get()}</p>
            {if state.supported {
                view! {
                    <div class="dialog-actions">
                        <button on:click=move |_| glue::choose_folder(client, state)>
                            {move || if has_folder() { "Choose another folder…" } else { "Back up to a folder…" }}
                        </button>
                        <Show when=has_folder>
                            <button on:click=move |_| glue::run(client, state, true)>
                                {move || if state.needs_permission.get() { "Allow and back up now" } else { "Back up now" }}
                            </button>
                            <button on:click=move |_| { state.update(|r| r.folder = None); state.needs_permission.set(false); }>"Stop backing up"</button>
                        </Show>
                    </div>
                    <div class="backup-settings">
                        <label>"At most every "
                            <input type="number" min="1" class="backup-every" aria-label="Minutes between backups"
                                prop:value=move || state.record.with(|r| r.settings.every_minutes.to_string())
                                on:change=move |ev| if let Some(n) = number(ev) {
                                    state.update(|r| r.settings = backup::BackupSettings { every_minutes: n.min(u32::MAX as u64) as u32, ..r.settings }.clamped())
                                } />
                            " minutes, keeping "
                            <input type="number" min="1" class="backup-keep" aria-label="Snapshots kept"
                                prop:value=move || state.record.with(|r| r.settings.keep.to_string())
                                on:change=move |ev| if let Some(n) = number(ev) {
                                    state.update(|r| r.settings = backup::BackupSettings { keep: n as usize, ..r.settings }.clamped())
                                } />
                            " snapshots"
                        </label>
                    </div>
                }.into_any()
            } else {
                view! {
                    <p class="hint">"This browser cannot write to a folder by itself (it lacks the File System Access API, which Chromium-based browsers have), so automatic backups are off here. Download a backup instead, and keep the file somewhere safe:"</p>
                    <div class="dialog-actions">
                        <button on:click=move |_| {
                            super::actions::export_all(client, chat);
                            state.update(|r| r.last_at = Some(now_ms()));
                        }>"Download a backup (JSON Lines)"</button>
                    </div>
                }.into_any()
            }}
        </section>
    }
}

/// The warning shown when there is no backup after a week of use, or when backups wait for the
/// folder's permission.
#[component]
pub fn BackupBanner(
    /// The backup state.
    state: BackupState,
) -> impl IntoView {
    let (chat, dialogs) = (ChatState::get(), DialogState::get());
    let open = move |_| dialogs.storage_open.set(true);
    move || {
        let record = state.record.get();
        let has_sessions = chat.sessions.with(|s| !s.is_empty());
        if state.needs_permission.get() && record.folder.is_some() {
            Some(
                view! {
                    <div class="banner warning backup-banner" role="alert">
                        <strong>"Backups paused: "</strong>
                        "the browser needs your permission again to write to the backup folder. "
                        <button class="link" on:click=open>"Open Storage"</button>
                    </div>
                }
                .into_any(),
            )
        } else if backup::needs_warning(&record, state.now.get(), has_sessions) {
            Some(view! {
                <div class="banner warning backup-banner" role="alert">
                    <strong>"No backup yet: "</strong>
                    "you have used Cowork for a week, and everything lives only in this browser. Back up to a folder, or download an export. "
                    <button class="link" on:click=open>"Open Storage"</button>
                </div>
            }.into_any())
        } else {
            None
        }
    }
}

pub use glue::start;

#[cfg(target_arch = "wasm32")]
mod glue {
    use super::*;
    use crate::protocol::{ops, Event};
    use js_sys::{Function, Object, Promise, Reflect};
    use leptos::task::spawn_local;
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;

    #[wasm_bindgen]
    extern "C" {
        /// A `FileSystemDirectoryHandle` (the File System Access API; not in web-sys).
        #[wasm_bindgen(extends = Object)]
        #[derive(Clone)]
        type DirHandle;
        #[wasm_bindgen(method, getter)]
        fn name(this: &DirHandle) -> String;
        #[wasm_bindgen(method, js_name = getFileHandle)]
        fn get_file_handle(this: &DirHandle, name: &str, options: &JsValue) -> Promise;
        #[wasm_bindgen(method, js_name = removeEntry)]
        fn remove_entry(this: &DirHandle, name: &str) -> Promise;
        #[wasm_bindgen(method)]
        fn keys(this: &DirHandle) -> JsValue;
        #[wasm_bindgen(method, js_name = queryPermission)]
        fn query_permission(this: &DirHandle, descriptor: &JsValue) -> Promise;
        #[wasm_bindgen(method, js_name = requestPermission)]
        fn request_permission(this: &DirHandle, descriptor: &JsValue) -> Promise;

        /// A `FileSystemFileHandle`.
        type FileHandle;
        #[wasm_bindgen(method, js_name = createWritable)]
        fn create_writable(this: &FileHandle) -> Promise;

        /// A `FileSystemWritableFileStream`.
        type Writable;
        #[wasm_bindgen(method)]
        fn write(this: &Writable, data: &JsValue) -> Promise;
        #[wasm_bindgen(method)]
        fn close(this: &Writable) -> Promise;
    }

    const DB: &str = "cowork-backup";
    const STORE: &str = "handles";
    const KEY: &str = "folder";

    fn err(e: JsValue) -> String {
        e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())).unwrap_or_else(|| format!("{e:?}"))
    }

    pub fn supported() -> bool {
        web_sys::window()
            .and_then(|w| Reflect::get(&w, &"showDirectoryPicker".into()).ok())
            .is_some_and(|f| f.is_function())
    }

    /// An IndexedDB request's result, awaited.
    async fn done(req: &web_sys::IdbRequest) -> Result<JsValue, String> {
        let req2 = req.clone();
        let promise = Promise::new(&mut |resolve: Function, reject: Function| {
            let r = req2.clone();
            let ok = Closure::once_into_js(move |_: JsValue| {
                let _ = resolve.call1(&JsValue::NULL, &r.result().unwrap_or(JsValue::UNDEFINED));
            });
            let r = req2.clone();
            let bad = Closure::once_into_js(move |_: JsValue| {
                let why = r.error().ok().flatten().map(|e| e.message()).unwrap_or_default();
                let _ = reject.call1(&JsValue::NULL, &JsValue::from_str(&why));
            });
            req2.set_onsuccess(Some(ok.unchecked_ref()));
            req2.set_onerror(Some(bad.unchecked_ref()));
        });
        JsFuture::from(promise).await.map_err(err)
    }

    async fn open_db() -> Result<web_sys::IdbDatabase, String> {
        let factory = web_sys::window()
            .and_then(|w| w.indexed_db().ok().flatten())
            .ok_or("this browser has no IndexedDB to remember the folder in")?;
        let req = factory.open_with_u32(DB, 1).map_err(err)?;
        let r = req.clone();
        let upgrade = Closure::once_into_js(move |_: JsValue| {
            if let Ok(db) = r.result() {
                let _ = db.unchecked_into::<web_sys::IdbDatabase>().create_object_store(STORE);
            }
        });
        req.set_onupgradeneeded(Some(upgrade.unchecked_ref()));
        Ok(done(&req).await?.unchecked_into())
    }

    async fn store_handle(handle: Option<&DirHandle>) -> Result<(), String> {
        let db = open_db().await?;
        let tx = db.transaction_with_str_and_mode(STORE, web_sys::IdbTransactionMode::Readwrite).map_err(err)?;
        let store = tx.object_store(STORE).map_err(err)?;
        let req = match handle {
            Some(h) => store.put_with_key(h, &KEY.into()),
            None => store.delete(&KEY.into()),
        };
        done(&req.map_err(err)?).await.map(|_| ())
    }

    async fn load_handle() -> Result<Option<DirHandle>, String> {
        let db = open_db().await?;
        let tx = db.transaction_with_str(STORE).map_err(err)?;
        let value = done(&tx.object_store(STORE).map_err(err)?.get(&KEY.into()).map_err(err)?).await?;
        Ok((!value.is_undefined() && !value.is_null()).then(|| value.unchecked_into()))
    }

    /// Whether the folder may be written to; with `ask` (only from a click), asks the user if not.
    async fn permitted(handle: &DirHandle, ask: bool) -> bool {
        if !Reflect::has(handle, &"queryPermission".into()).unwrap_or(false) {
            return true; // a handle without permissions (the private file system's)
        }
        let mode = Object::new();
        let _ = Reflect::set(&mode, &"mode".into(), &"readwrite".into());
        let state = |p: Promise| async move { JsFuture::from(p).await.ok().and_then(|v| v.as_string()) };
        if state(handle.query_permission(&mode)).await.as_deref() == Some("granted") {
            return true;
        }
        ask && state(handle.request_permission(&mode)).await.as_deref() == Some("granted")
    }

    async fn write_file(dir: &DirHandle, name: &str, text: &str) -> Result<(), String> {
        let create = Object::new();
        let _ = Reflect::set(&create, &"create".into(), &true.into());
        let file: FileHandle = JsFuture::from(dir.get_file_handle(name, &create)).await.map_err(err)?.unchecked_into();
        let out: Writable = JsFuture::from(file.create_writable()).await.map_err(err)?.unchecked_into();
        JsFuture::from(out.write(&JsValue::from_str(text))).await.map_err(err)?;
        JsFuture::from(out.close()).await.map_err(err)?;
        Ok(())
    }

    async fn list(dir: &DirHandle) -> Result<Vec<String>, String> {
        let iter = dir.keys();
        let next: Function = Reflect::get(&iter, &"next".into()).map_err(err)?.unchecked_into();
        let mut names = Vec::new();
        loop {
            let step = JsFuture::from(Promise::resolve(&next.call0(&iter).map_err(err)?)).await.map_err(err)?;
            if Reflect::get(&step, &"done".into()).ok().and_then(|d| d.as_bool()).unwrap_or(true) {
                return Ok(names);
            }
            if let Some(name) = Reflect::get(&step, &"value".into()).ok().and_then(|v| v.as_string()) {
                names.push(name);
            }
        }
    }

    fn client(c: Client) -> Option<crate::client::StorageClient> {
        c.with_value(|c| c.clone())
    }

    /// Backup pressed: pick a folder (a click, as the browser requires), remember it, back up now.
    pub fn choose_folder(c: Client, state: BackupState) {
        let Some(window) = web_sys::window() else { return };
        let Ok(pick) = Reflect::get(&window, &"showDirectoryPicker".into()) else { return };
        let options = Object::new();
        let _ = Reflect::set(&options, &"mode".into(), &"readwrite".into());
        let _ = Reflect::set(&options, &"id".into(), &"cowork-backup".into());
        let picked = pick.unchecked_into::<Function>().call1(&window, &options);
        spawn_local(async move {
            let handle = match picked {
                Ok(p) => JsFuture::from(Promise::resolve(&p)).await,
                Err(e) => Err(e),
            };
            let handle: DirHandle = match handle {
                Ok(h) => h.unchecked_into(),
                Err(e) if err(e.clone()).contains("abort") => return, // the user closed the picker
                Err(e) => {
                    state.status.try_set(Some(format!("No folder chosen: {}", err(e))));
                    return;
                }
            };
            if let Err(e) = store_handle(Some(&handle)).await {
                state.status.try_set(Some(format!("The folder could not be remembered: {e}")));
                return;
            }
            state.update(|r| r.folder = Some(handle.name()));
            back_up(c, state, Some(handle), false).await;
        });
    }

    /// Backs up now (a click: `ask` may ask the browser for the folder's permission again).
    pub fn run(c: Client, state: BackupState, ask: bool) {
        spawn_local(async move { back_up(c, state, None, ask).await });
    }

    thread_local! {
        /// A snapshot is being written: another one asked for meanwhile (the minute's check, a
        /// change's, "Back up now") is left out rather than written beside it, where each would prune
        /// the file the other is writing; the change it was for is caught by the next check.
        static RUNNING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// Writes a snapshot and prunes the old ones, unless one is being written already.
    async fn back_up(c: Client, state: BackupState, handle: Option<DirHandle>, ask: bool) {
        if RUNNING.with(|r| r.replace(true)) {
            return;
        }
        back_up_once(c, state, handle, ask).await;
        RUNNING.with(|r| r.set(false));
    }

    async fn back_up_once(c: Client, state: BackupState, handle: Option<DirHandle>, ask: bool) {
        let Some(client) = client(c) else { return };
        let handle = match handle {
            Some(h) => h,
            None => match load_handle().await {
                Ok(Some(h)) => h,
                Ok(None) => {
                    state.status.try_set(Some("Choose the backup folder again: this browser forgot it.".into()));
                    return;
                }
                Err(e) => {
                    state.status.try_set(Some(format!("The backup folder could not be found: {e}")));
                    return;
                }
            },
        };
        if !permitted(&handle, ask).await {
            state.needs_permission.try_set(true);
            return;
        }
        state.needs_permission.try_set(false);
        state.status.try_set(Some("Backing up…".into()));
        let fingerprint = match client.call(ops::Stats).await {
            Ok(stats) => backup::fingerprint(stats.sessions, stats.turns, stats.tasks),
            Err(_) => String::new(),
        };
        let text = match client.call(ops::ExportAll).await {
            Ok(text) => text,
            Err(e) => {
                state.status.try_set(Some(format!("Backup failed: {e}")));
                return;
            }
        };
        let now = now_ms();
        let name = backup::snapshot_name(now);
        if let Err(e) = write_file(&handle, &name, &text).await {
            state.status.try_set(Some(format!("Backup failed: {name} could not be written: {e}")));
            return;
        }
        state.changed.try_set(false);
        state.update(|r| {
            r.last_at = Some(now);
            r.fingerprint = fingerprint;
        });
        let keep = state.record.get_untracked().settings.clamped().keep;
        let pruned = match list(&handle).await {
            Ok(names) => {
                let mut failed = None;
                for old in backup::to_prune(&names, keep) {
                    if let Err(e) = JsFuture::from(handle.remove_entry(&old)).await {
                        failed = Some(format!("Backed up, but {old} could not be deleted: {}", err(e)));
                    }
                }
                failed
            }
            Err(e) => Some(format!("Backed up, but old snapshots could not be listed: {e}")),
        };
        state.now.try_set(now);
        state.status.try_set(pruned);
    }

    /// Backs up if a snapshot is due (checked every minute, and a few seconds after each change).
    fn check(c: Client, state: BackupState) {
        // A timer may fire after the app it served was unmounted (an embedding page's, a test's):
        // then there is nothing to back up.
        let Some(record) = state.record.try_get_untracked() else { return };
        if record.folder.is_none() || state.needs_permission.try_get_untracked().unwrap_or(true) {
            return;
        }
        let Some(client) = client(c) else { return };
        spawn_local(async move {
            let Ok(stats) = client.call(ops::Stats).await else { return };
            let fingerprint = backup::fingerprint(stats.sessions, stats.turns, stats.tasks);
            let changed = state.changed.try_get_untracked().unwrap_or(false);
            if backup::due(&record, &fingerprint, changed, now_ms()) {
                back_up(c, state, None, false).await;
            }
        });
    }

    /// Starts the backup's clock and listens for changes; checks the folder's permission once.
    pub fn start(c: Client, state: BackupState) {
        let Some(client) = client(c) else { return };
        let tick = Closure::<dyn FnMut()>::new(move || {
            state.now.try_set(now_ms());
            check(c, state);
        });
        if let Some(w) = web_sys::window() {
            let _ = w.set_interval_with_callback_and_timeout_and_arguments_0(tick.as_ref().unchecked_ref(), 60_000);
        }
        tick.forget(); // lives as long as the page
        client.subscribe(move |_, event| {
            if matches!(
                event,
                Event::TurnAppended { .. } | Event::SessionCreated { .. } | Event::SessionsChanged { .. }
            ) {
                state.changed.try_set(true);
                let later = Closure::once_into_js(move || check(c, state));
                if let Some(w) = web_sys::window() {
                    let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(later.unchecked_ref(), 5_000);
                }
            }
        });
        if state.record.get_untracked().folder.is_some() {
            spawn_local(async move {
                match load_handle().await {
                    Ok(Some(h)) => {
                        if !permitted(&h, false).await {
                            state.needs_permission.try_set(true);
                        }
                    }
                    _ => {
                        state.status.try_set(Some("Choose the backup folder again: this browser forgot it.".into()));
                    }
                }
                check(c, state);
            });
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod glue {
    use super::*;

    pub fn supported() -> bool {
        false
    }
    pub fn choose_folder(_: Client, _: BackupState) {}
    pub fn run(_: Client, _: BackupState, _: bool) {}
    /// Natively there is no browser to back up from.
    pub fn start(_: Client, _: BackupState) {}
}
