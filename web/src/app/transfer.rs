//! What the Storage panel's import and the exports do: the chosen files read as buffers and sent
//! to the worker beside the request (previewed, then imported with progress), and exports in each
//! format downloaded. Natively they reach no worker (`client.rs`).

use super::Client;
use crate::chat::{ChatState, ExportFormat};

pub use browser::*;

mod browser {
    use super::super::{ImportStage, ImportState};
    use super::*;
    use crate::chat::Notice;
    use crate::protocol::{ops, Event, FilePayload};
    use leptos::prelude::*;
    use leptos::task::spawn_local;
    use wasm_bindgen::JsCast;

    fn client(c: Client) -> Option<crate::client::StorageClient> {
        c.with_value(|c| c.clone())
    }

    /// Reads `files` (from disk, as the browser's `File`s are) into buffers to transfer, with their
    /// names (a folder's files by their path in it) and sizes.
    async fn read_files(files: &[web_sys::File]) -> Result<(Vec<FilePayload>, Vec<js_sys::ArrayBuffer>), String> {
        let mut payloads = Vec::with_capacity(files.len());
        let mut buffers = Vec::with_capacity(files.len());
        for f in files {
            let path = js_sys::Reflect::get(f, &"webkitRelativePath".into()).ok().and_then(|p| p.as_string());
            let name = path.filter(|p| !p.is_empty()).unwrap_or_else(|| f.name());
            let buffer: js_sys::ArrayBuffer = wasm_bindgen_futures::JsFuture::from(f.array_buffer())
                .await
                .map_err(|e| format!("{name} could not be read: {e:?}"))?
                .unchecked_into();
            payloads.push(FilePayload { name, size: u64::from(buffer.byte_length()), ..FilePayload::default() });
            buffers.push(buffer);
        }
        Ok((payloads, buffers))
    }

    /// Files were chosen: keep them, and ask the worker what importing them would add.
    pub fn preview(c: Client, import: ImportState, files: Vec<web_sys::File>, ignored: usize) {
        let Some(client) = client(c) else { return };
        if files.is_empty() {
            let why = if ignored > 0 { "the folder holds no .json or .jsonl file" } else { "no file was chosen" };
            import.stage.set(ImportStage::Failed(why.into()));
            return;
        }
        import.files.set_value(files.clone());
        import.stage.set(ImportStage::Reading);
        spawn_local(async move {
            let stage = match read_files(&files).await {
                Err(why) => ImportStage::Failed(why),
                Ok((payloads, buffers)) => {
                    let names = payloads.iter().map(|p| p.name.clone()).collect();
                    match client.call_with_files(ops::PreviewImport { files: payloads }, buffers).await {
                        Ok(report) => ImportStage::Preview { report, names, ignored },
                        Err(e) => ImportStage::Failed(e.problem().message),
                    }
                }
            };
            import.stage.try_set(stage);
        });
    }

    /// Import pressed: the files are read again and imported, all or nothing.
    pub fn import(c: Client, chat: ChatState, import: ImportState) {
        let Some(client) = client(c) else { return };
        let ImportStage::Preview { report, .. } = import.stage.get_untracked() else { return };
        import.stage.set(ImportStage::Importing { done: 0, total: report.conversations });
        let files = import.files.get_value();
        spawn_local(async move {
            let stage = match read_files(&files).await {
                Err(why) => ImportStage::Failed(why),
                Ok((payloads, buffers)) => {
                    match client.call_with_files(ops::ImportFiles { files: payloads }, buffers).await {
                        Ok(report) => {
                            super::super::actions::refresh_sessions(&client, chat).await;
                            ImportStage::Done(report)
                        }
                        Err(e) => ImportStage::Failed(e.problem().message),
                    }
                }
            };
            import.files.set_value(Vec::new());
            import.stage.try_set(stage);
            super::super::actions::refresh_usage(chat).await;
        });
    }

    pub fn export_name_date() -> String {
        String::from(js_sys::Date::new_0().to_iso_string()).chars().take(10).collect()
    }

    /// Offers `text` as a file download.
    pub fn download(mime: &str, name: &str, text: &str) -> Result<(), String> {
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

    /// Follows this tab's import progress into the panel's bar.
    pub fn on_event(import: ImportState, event: &Event) {
        if let Event::ImportProgress { conversations, .. } = event {
            import.stage.try_update(|s| {
                if let ImportStage::Importing { done, .. } = s {
                    *done = *conversations;
                }
            });
        }
    }

    /// Downloads sessions in `format`: one session's (`Some`), or every session's.
    pub fn export(c: Client, chat: ChatState, session_id: Option<String>, format: ExportFormat) {
        let Some(client) = client(c) else {
            chat.tell(Notice::info("Storage is not available, so there is nothing to export."));
            return;
        };
        spawn_local(async move {
            let exported = match (format, session_id.clone()) {
                (ExportFormat::Jsonl, Some(session_id)) => client.call(ops::ExportSession { session_id }).await,
                (ExportFormat::Jsonl, None) => client.call(ops::ExportAll).await,
                (ExportFormat::Markdown, Some(session_id)) => client.call(ops::ExportMarkdown { session_id }).await,
                (ExportFormat::Markdown, None) => return, // Markdown is per session
                (ExportFormat::ChatGpt, session_id) => client.call(ops::ExportChatGpt { session_id }).await,
            };
            match exported {
                Ok(text) => {
                    let what = if session_id.is_some() { "session" } else { "archive" };
                    let name = format!("cowork-{what}-{}{}", export_name_date(), format.file_suffix());
                    if let Err(e) = download(format.mime(), &name, &text) {
                        chat.tell(Notice::info(format!("The export could not be downloaded: {e}")));
                    }
                }
                Err(e) => chat.tell(Notice::problem_in("Export failed", &e.problem())),
            }
        });
    }
}
