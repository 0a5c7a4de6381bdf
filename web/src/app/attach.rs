//! What attaching does: files picked, pasted or dropped become the composer's pending files (or a
//! notice says why one cannot be attached, leaving the draft and the others as they were); sending
//! takes them with the message and they are cleared only once the worker has saved it; an edit of a
//! message that carried files sends the same files (their archived bytes) with the new version.

pub use browser::*;

mod browser {
    use crate::chat::{previewable, refusal, ChatState, Notice, PendingFile};
    use crate::client::StorageClient;
    use crate::protocol::ErrorKind;
    use leptos::prelude::*;
    use send_wrapper::SendWrapper;
    use std::sync::atomic::{AtomicU64, Ordering};
    use wasm_bindgen_futures::JsFuture;

    static NEXT_ID: AtomicU64 = AtomicU64::new(1);

    /// Adds `files` to the composer: each one under the size limit that can be read; the others are
    /// named in the notice line (with the limit), and nothing else changes.
    pub fn add_files(chat: ChatState, files: Vec<web_sys::File>) {
        let limit = chat.settings.get_untracked().attachment_limit();
        leptos::task::spawn_local(async move {
            let mut refused = Vec::new();
            let mut added = Vec::new();
            for file in files {
                let (name, size) = (file.name(), file.size() as u64);
                if let Some(why) = refusal(&name, size, limit) {
                    refused.push(why);
                    continue;
                }
                // A folder dropped as a "file" (or a file gone from disk) cannot be read: say so now,
                // not when the message is sent.
                let probe = file.slice_with_i32_and_i32(0, 1).map(|b| b.array_buffer());
                let readable = match probe {
                    Ok(p) => JsFuture::from(p).await.is_ok(),
                    Err(_) => false,
                };
                if !readable {
                    refused.push(format!(
                        "{} cannot be attached: it could not be read (folders are not supported).",
                        cowork_core::attachment::display_name(&name)
                    ));
                    continue;
                }
                let preview =
                    previewable(&file.type_()).then(|| web_sys::Url::create_object_url_with_blob(&file).ok()).flatten();
                added.push(PendingFile {
                    id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                    name,
                    size,
                    file: SendWrapper::new(file.into()),
                    preview,
                    sending: false,
                });
            }
            if !added.is_empty() {
                chat.attachments.try_update(|a| a.extend(added));
            }
            if !refused.is_empty() {
                let text = format!("{} The message and the other attachments are kept.", refused.join(" "));
                chat.notice.try_set(Some(Notice { text, kind: Some(ErrorKind::AttachmentTooLarge), session: None }));
            }
        });
    }

    /// The composer's files, marked as going with the message being sent.
    pub fn take_for_send(chat: ChatState) -> Vec<web_sys::Blob> {
        let mut files = Vec::new();
        chat.attachments.update(|a| {
            for p in a.iter_mut() {
                p.sending = true;
                files.push((*p.file).clone());
            }
        });
        files
    }

    /// The send is over: files still marked (the message was not saved) are the user's to send again.
    pub fn settle(chat: ChatState) {
        let marked = chat.attachments.with_untracked(|a| a.iter().any(|p| p.sending));
        if marked {
            chat.attachments.update(|a| a.iter_mut().for_each(|p| p.sending = false));
        }
    }

    /// The files user turn `turn_number` carried, as `File`s of their archived bytes (for an edit of
    /// it, which keeps them).
    pub async fn files_of_turn(
        client: &StorageClient,
        chat: ChatState,
        turn_number: i64,
    ) -> Result<Vec<web_sys::Blob>, String> {
        let attachments = chat.turns.with_untracked(|t| {
            t.iter().find(|t| t.turn_number == turn_number).map(|t| t.attachments.clone()).unwrap_or_default()
        });
        let mut files = Vec::with_capacity(attachments.len());
        for a in attachments {
            let (_, bytes) = client.read_attachment(&a.sha256).await.map_err(|e| e.problem().message)?;
            let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(&bytes[..]));
            let opts = web_sys::FilePropertyBag::new();
            opts.set_type(&a.mime);
            let file = web_sys::File::new_with_u8_array_sequence_and_options(&parts, &a.name, &opts)
                .map_err(|e| format!("{e:?}"))?;
            files.push(file.into());
        }
        Ok(files)
    }
}
