//! The Storage panel: where the archive lives, space, the integrity check, exports, imports of any
//! supported file (choose → preview → import with a progress bar → a summary that opens the new
//! sessions) and the automatic backup to a folder.

use super::backup::{BackupBanner, BackupSection, BackupState};
use super::{Client, ImportStage, ImportState, StorageState};
use crate::chat::{ChatState, DialogState, Modal};
use crate::protocol::{thousands, Backend, ImportReport, ReadyInfo, SKIPPED_NAMED};
use leptos::prelude::*;

impl ImportReport {
    /// The files' formats, each once, in order ("ChatGPT", "Claude Code, Codex").
    pub fn formats_text(&self) -> String {
        let mut seen: Vec<&str> = Vec::new();
        for f in &self.formats {
            if !seen.contains(&f.as_str()) {
                seen.push(f);
            }
        }
        seen.join(", ")
    }
}

/// How many links to new sessions the summary shows (the rest are in the sidebar).
const LINKS_SHOWN: usize = 20;

/// How many left-out conversations the panel lists (the rest are counted).
const SKIPPED_LISTED: usize = 100;

/// The storage panel: where the archive lives, whether the browser keeps it, space, exports,
/// imports, backups, a check.
#[component]
pub fn StorageDialog(
    /// Where the archive lives.
    storage: ReadSignal<StorageState>,
    /// Export all: download the whole archive as JSON Lines.
    on_export: Callback<()>,
    /// Export all as a ChatGPT-compatible `conversations.json`.
    on_export_chatgpt: Callback<()>,
    /// Check archive: run the integrity check.
    on_check: Callback<()>,
    /// Open a session (from the import's summary).
    on_open: Callback<String>,
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
    let (state, dialogs) = (ChatState::get(), DialogState::get());
    let import = expect_context::<ImportState>();
    let client = expect_context::<Client>();
    let close = move || dialogs.storage_open.set(false);
    // What the archive holds, read each time the panel opens.
    let stats = RwSignal::new(String::new());
    Effect::new(move |_| {
        if dialogs.storage_open.get() {
            load_stats(client, stats);
        }
    });
    let importing = move || matches!(import.stage.get(), ImportStage::Reading | ImportStage::Importing { .. });
    let progress = move || match import.stage.get() {
        ImportStage::Importing { done, total } => Some((done, total.max(1))),
        _ => None,
    };
    let can_import =
        move || matches!(import.stage.get(), ImportStage::Preview { report, .. } if !report.adds_nothing());
    let links = move || match import.stage.get() {
        ImportStage::Done(report) => {
            let sessions = state.sessions.get();
            let title =
                |id: &str| sessions.iter().find(|s| s.id == id).map(|s| s.title.clone()).filter(|t| !t.is_empty());
            let more = report.session_ids.len().saturating_sub(LINKS_SHOWN);
            let items: Vec<(String, String)> = report
                .session_ids
                .iter()
                .take(LINKS_SHOWN)
                .map(|id| (id.clone(), title(id).unwrap_or_else(|| id.clone())))
                .collect();
            (items, more)
        }
        _ => (Vec::new(), 0),
    };
    // Every left-out conversation, when there are more than the status line names.
    let skipped_list = move || {
        let report = match import.stage.get() {
            ImportStage::Preview { report, .. } | ImportStage::Done(report) => report,
            _ => return Vec::new(),
        };
        if report.skipped_conversations.len() <= SKIPPED_NAMED {
            return Vec::new();
        }
        let mut items: Vec<String> =
            report.skipped_conversations.iter().take(SKIPPED_LISTED).map(|s| s.describe(report.many_files())).collect();
        if let Some(more) = report.skipped_conversations.len().checked_sub(SKIPPED_LISTED).filter(|n| *n > 0) {
            items.push(format!("…and {} more", thousands(more)));
        }
        items
    };
    view! {
        <Show when=move || dialogs.storage_open.get()>
            <Modal on_close=Callback::new(move |_| close()) class="storage" label="Storage">
                    <h2>"Storage"</h2>
                    <p class="storage-place">{place}</p>
                    <p class="storage-usage-detail">{move || state.usage.get()}</p>
                    <p class="storage-stats" role="status">{move || stats.get()}</p>
                    <div class="dialog-actions">
                        <button on:click=move |_| on_export.run(())>"Export all (JSON Lines)"</button>
                        <button on:click=move |_| on_export_chatgpt.run(())
                            title="Every session as ChatGPT's conversations.json (forks as branches)">"Export all (ChatGPT JSON)"</button>
                        <button on:click=move |_| on_check.run(())>"Check archive"</button>
                        <button on:click=move |_| close() autofocus>"Close"</button>
                    </div>
                    <p class="integrity" role="status">{move || dialogs.integrity.get().map(|r| format!("Archive check: {r}"))}</p>
                    <section class="import-section" aria-label="Import">
                        <h3>"Import"</h3>
                        <p class="hint">"A Cowork export (.jsonl), ChatGPT's or Claude.ai's conversations.json, Claude Code or Codex transcripts (.jsonl; several files, or their folder), or an OpenAI messages array (.json). You see what will be added before anything is."</p>
                        <div class="dialog-actions">
                            <label class="button import" class:disabled=importing>
                                "Import files…"
                                <input type="file" multiple accept=".jsonl,.json,application/x-ndjson,application/json,text/plain"
                                    class="visually-hidden" aria-label="Import files" disabled=importing
                                    on:change=move |ev| chosen(ev, client, import, false) />
                            </label>
                            <label class="button import" class:disabled=importing>
                                "Import a folder…"
                                <input type="file" prop:webkitdirectory=true class="visually-hidden" aria-label="Import a folder"
                                    disabled=importing on:change=move |ev| chosen(ev, client, import, true) />
                            </label>
                        </div>
                        <p class="import-result" role="status"
                            class:error=move || matches!(import.stage.get(), ImportStage::Failed(_))>
                            {move || import.stage.get().text()}
                        </p>
                        <ul class="import-skipped" aria-label="Conversations left out">
                            {move || skipped_list().into_iter().map(|line| view! { <li>{line}</li> }).collect_view()}
                        </ul>
                        <Show when=move || progress().is_some()>
                            <progress class="import-progress" aria-label="Import progress"
                                max=move || progress().map(|p| p.1).unwrap_or(1)
                                value=move || progress().map(|p| p.0).unwrap_or(0)></progress>
                        </Show>
                        <Show when=move || matches!(import.stage.get(), ImportStage::Preview { .. })>
                            <div class="dialog-actions">
                                <button class="primary" disabled=move || !can_import()
                                    on:click=move |_| super::transfer::import(client, state, import)>"Import"</button>
                                <button on:click=move |_| import.stage.set(ImportStage::Idle)>"Cancel"</button>
                            </div>
                        </Show>
                        <ul class="import-links">
                            {move || {
                                let (items, more) = links();
                                let more = (more > 0).then(|| view! { <li class="more">{format!("…and {} more in the sidebar", thousands(more))}</li> });
                                view! {
                                    {items.into_iter().map(|(id, title)| view! {
                                        <li><a href="#" on:click=move |ev: web_sys::MouseEvent| {
                                            ev.prevent_default();
                                            close();
                                            on_open.run(id.clone());
                                        }>{title}</a></li>
                                    }).collect_view()}
                                    {more}
                                }
                            }}
                        </ul>
                    </section>
                    <super::semantic::SemanticSection />
                    <BackupSection />
            </Modal>
        </Show>
    }
}

/// Files chosen in one of the import inputs: kept, read and previewed. A folder's files that are
/// not `.json` or `.jsonl` are left aside (and counted).
fn chosen(ev: leptos::ev::Event, client: Client, import: ImportState, folder: bool) {
    use wasm_bindgen::JsCast;
    let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else { return };
    let Some(list) = input.files() else { return };
    let all: Vec<web_sys::File> = (0..list.length()).filter_map(|i| list.get(i)).collect();
    input.set_value(""); // choosing the same files again previews again
    let (files, ignored): (Vec<_>, Vec<_>) = all.into_iter().partition(|f| {
        let name = f.name().to_lowercase();
        !folder || name.ends_with(".jsonl") || name.ends_with(".json")
    });
    super::transfer::preview(client, import, files, ignored.len());
}

/// "12 sessions · 340 turns · 3 attachments stored once each (1.2 MB) · database 4.0 MB, schema 4".
pub fn stats_text(s: &cowork_core::StorageStats) -> String {
    let plural = |n: i64, one: &str| format!("{} {one}{}", thousands(n.max(0) as usize), if n == 1 { "" } else { "s" });
    format!(
        "{} · {} · {} stored once each ({}) · database {}, schema {}",
        plural(s.sessions, "session"),
        plural(s.turns, "turn"),
        plural(s.blobs, "attachment"),
        cowork_core::attachment::format_size(s.blob_bytes),
        cowork_core::attachment::format_size(s.bytes),
        s.schema_version
    )
}

/// Reads the archive's counts into `into` (the Storage panel's line).
fn load_stats(client: Client, into: RwSignal<String>) {
    if let Some(client) = client.with_value(|c| c.clone()) {
        leptos::task::spawn_local(async move {
            if let Ok(stats) = client.call(crate::protocol::ops::Stats).await {
                into.try_set(stats_text(&stats));
            }
        });
    }
}

/// The banners the storage panel's state raises: no backup after a week of use.
#[component]
pub fn StorageBanners() -> impl IntoView {
    let backup = expect_context::<BackupState>();
    view! { <BackupBanner state=backup /> <super::pressure::PressureBanner /> }
}

#[cfg(test)]
mod tests {
    #[test]
    fn stats_count_attachment_contents_once() {
        let stats = cowork_core::StorageStats {
            sessions: 2,
            turns: 1_234,
            blobs: 1,
            blob_bytes: 2_048,
            bytes: 4 * 1024 * 1024,
            schema_version: 4,
            ..Default::default()
        };
        assert_eq!(
            super::stats_text(&stats),
            "2 sessions · 1,234 turns · 1 attachment stored once each (2.0 KB) · database 4.0 MB, schema 4"
        );
    }
}
