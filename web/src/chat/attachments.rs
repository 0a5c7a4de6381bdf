//! Attachments in the chat: the composer's files before they are sent (`draft.rs`'s `PendingFile`, shown as chips
//! with a thumbnail, the name, the size and Remove) and a turn's archived attachments
//! ([`TurnAttachments`]: images as thumbnails that open full size in the [`Lightbox`], other files as
//! chips that download the exact bytes).
//!
//! Names are shown only through [`cowork_core::attachment::display_name`] (no directories, no control
//! or text-direction characters, at most 120 characters), always as text. Images are shown only by
//! `<img>` from a blob URL of their archived bytes (`ops::ReadAttachment`); an SVG is never an image
//! here (the core keeps it as a file), so no attachment's markup is ever rendered. Blob URLs are
//! cached per SHA-256 ([`BlobUrls`]) and revoked when the open session changes or the app goes away.

use super::draft::{drop_pending, revoke, PendingFile};
use super::icons::{icon, Icon};
use super::modal::Modal;
use super::state::{ChatState, DialogState};
use cowork_core::attachment::{display_name, format_size, Attachment};
use leptos::prelude::*;

/// "script.py, 1.2 KB": a file's shown name and size.
pub fn chip_label(name: &str, size: i64) -> String {
    format!("{}, {}", display_name(name), format_size(size))
}

/// The composer's attachments: chips with a thumbnail (images), the name (ellipsised, whole in the
/// title), the size and a Remove button.
#[component]
pub fn PendingChips() -> impl IntoView {
    let state = ChatState::get();
    view! {
        <Show when=move || state.attachments.with(|a| !a.is_empty())>
            <ul class="attachment-chips pending" aria-label="Attachments to send with the message">
                <For
                    each=move || state.attachments.get()
                    key=|p| (p.id, p.sending)
                    children=move |p: PendingFile| {
                        let (id, name) = (p.id, p.shown_name());
                        let thumb = p.preview.clone().map(|url| {
                            view! { <img class="attachment-thumb-small" src=url alt="" /> }
                        });
                        view! {
                            <li class="attachment-chip" class:sending=p.sending>
                                {thumb}
                                <span class="attachment-name" title=name.clone()>{name.clone()}</span>
                                <span class="attachment-size">{format_size(p.size as i64)}</span>
                                <button type="button" class="attachment-remove" aria-label=format!("Remove {name}")
                                    title="Remove" disabled=p.sending
                                    on:click=move |_| state.attachments.update(|a| drop_pending(a, |p| p.id != id))>"×"</button>
                            </li>
                        }
                    }
                />
            </ul>
        </Show>
    }
}

/// Blob URLs of archived attachments, one per SHA-256, made on first use and revoked all at once
/// when the open session changes (and when the conversation goes away).
#[derive(Clone, Copy)]
pub struct BlobUrls {
    urls: StoredValue<std::collections::HashMap<String, String>, LocalStorage>,
    /// Where the bytes are read from (none natively, nor without storage).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    client: Option<crate::app::Client>,
}

impl BlobUrls {
    /// Provides the cache as context, emptied whenever `state.current` changes.
    pub fn provide(state: ChatState) -> BlobUrls {
        let urls =
            BlobUrls { urls: StoredValue::new_local(Default::default()), client: use_context::<crate::app::Client>() };
        provide_context(urls);
        // Only when another session opens: the same one opened again (a reload's URL and the app both
        // opening it) keeps the URLs its images already show.
        Effect::new(move |before: Option<Option<String>>| {
            let now = state.current.get();
            if before.is_some_and(|b| b != now) {
                urls.revoke_all();
            }
            now
        });
        on_cleanup(move || urls.revoke_all());
        urls
    }

    fn revoke_all(self) {
        let all: Vec<String> = self.urls.try_update_value(|m| m.drain().map(|(_, u)| u).collect()).unwrap_or_default();
        all.iter().for_each(|u| revoke(u));
    }

    /// The cached URL of `sha256`'s bytes, if made already.
    pub fn cached(self, sha256: &str) -> Option<String> {
        self.urls.try_with_value(|m| m.get(sha256).cloned()).flatten()
    }

    /// A blob URL of `a`'s exact bytes, read from the archive the first time.
    #[cfg(target_arch = "wasm32")]
    pub async fn url(self, a: &Attachment) -> Result<String, String> {
        if let Some(u) = self.cached(&a.sha256) {
            return Ok(u);
        }
        let client =
            self.client.and_then(|c| c.try_with_value(|c| c.clone()).flatten()).ok_or("storage is not available")?;
        let (_, bytes) = client.read_attachment(&a.sha256).await.map_err(|e| e.problem().message)?;
        let url = blob_url(&bytes, &a.mime)?;
        match self.urls.try_update_value(|m| m.entry(a.sha256.clone()).or_insert(url.clone()).clone()) {
            Some(kept) if kept != url => {
                revoke(&url); // made twice meanwhile: keep the first
                Ok(kept)
            }
            Some(kept) => Ok(kept),
            None => {
                revoke(&url);
                Err("the conversation closed".into())
            }
        }
    }
}

/// A blob URL of `bytes` typed `mime`.
#[cfg(target_arch = "wasm32")]
pub fn blob_url(bytes: &[u8], mime: &str) -> Result<String, String> {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &opts).map_err(|e| format!("{e:?}"))?;
    web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| format!("{e:?}"))
}

/// A user turn's attachments: images as thumbnails (click: full size), files as download chips.
#[component]
pub fn TurnAttachments(
    /// The turn's attachments, in order.
    attachments: Vec<Attachment>,
) -> impl IntoView {
    let items: Vec<_> = attachments
        .into_iter()
        .map(|a| if a.is_image() { image_item(a).into_any() } else { file_item(a).into_any() })
        .collect();
    view! { <ul class="attachment-chips turn-attachments" aria-label="Attachments">{items}</ul> }
}

/// An image: a thumbnail of its bytes (loaded as it is shown), a button that opens it full size.
fn image_item(a: Attachment) -> impl IntoView {
    let dialogs = DialogState::get();
    let urls = expect_context::<BlobUrls>();
    let name = a.display_name();
    let src = RwSignal::new(urls.cached(&a.sha256));
    let failed = RwSignal::new(None::<String>);
    #[cfg(target_arch = "wasm32")]
    if src.get_untracked().is_none() {
        let a = a.clone();
        leptos::task::spawn_local(async move {
            match urls.url(&a).await {
                Ok(u) => {
                    src.try_set(Some(u));
                }
                Err(e) => {
                    failed.try_set(Some(e));
                }
            }
        });
    }
    let pixels = match (a.width, a.height) {
        (Some(w), Some(h)) => format!("{w}×{h}, "),
        _ => String::new(),
    };
    let caption = format!("{name} ({pixels}{})", format_size(a.size));
    let (w, h) = (a.width.unwrap_or(0), a.height.unwrap_or(0));
    let (open_name, alt, label) = (name.clone(), name.clone(), format!("View {name} full size"));
    view! {
        <li class="attachment-image" data-sha256=a.sha256.clone()>
            <button type="button" class="attachment-view" aria-label=label title=caption.clone()
                on:click=move |_| if let Some(u) = src.get_untracked() { dialogs.lightbox.set(Some((u, open_name.clone()))) }>
                {move || src.get().map(|u| view! {
                    <img class="attachment-thumb" src=u alt=alt.clone() width=w height=h />
                })}
                {move || failed.get().map(|e| view! { <span class="attachment-error">{format!("Not shown: {e}")}</span> })}
            </button>
            <span class="attachment-caption">{caption}</span>
        </li>
    }
}

/// A file (or a corrupt image, or an SVG): a compact card (its type's icon, its name, its size) that
/// downloads the exact bytes under its name.
fn file_item(a: Attachment) -> impl IntoView {
    let urls = expect_context::<BlobUrls>();
    let name = a.display_name();
    let (label, size, kind) = (chip_label(&a.name, a.size), a.size, Icon::for_file(&a));
    let href = RwSignal::new(urls.cached(&a.sha256));
    let error = RwSignal::new(None::<String>);
    // The bytes are read on the first click (a 20 MB PDF is not read just to show its chip); the
    // anchor then gets its blob URL and is clicked again, as the user meant.
    let click = move |ev: web_sys::MouseEvent| {
        if href.get_untracked().is_some() {
            return;
        }
        ev.prevent_default();
        #[cfg(target_arch = "wasm32")]
        {
            use wasm_bindgen::JsCast;
            let anchor = ev.current_target().and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok());
            let a = a.clone();
            leptos::task::spawn_local(async move {
                match urls.url(&a).await {
                    Ok(u) => {
                        href.try_set(Some(u));
                        leptos::task::tick().await;
                        if let Some(anchor) = anchor {
                            anchor.click();
                        }
                    }
                    Err(e) => {
                        error.try_set(Some(e));
                    }
                }
            });
        }
    };
    view! {
        <li class="attachment-chip file">
            <a class="attachment-file" href=move || href.get().unwrap_or_else(|| "#".into()) download=name.clone()
                title=format!("Download {label}") on:click=click>
                <span class="attachment-icon">{icon(kind)}</span>
                <span class="attachment-name">{name.clone()}</span>
                <span class="attachment-size">{format_size(size)}</span>
            </a>
            {move || error.get().map(|e| view! { <span class="attachment-error" role="alert">{format!("Could not read it: {e}")}</span> })}
        </li>
    }
}

/// An image full size, over everything, with a download of its exact bytes; Esc, a click outside or
/// Close closes it.
#[component]
pub fn Lightbox() -> impl IntoView {
    let dialogs = DialogState::get();
    let close = move || dialogs.lightbox.set(None);
    move || {
        dialogs.lightbox.get().map(|(url, name)| {
            view! {
                <Modal on_close=Callback::new(move |_| close()) overlay_class="lightbox" class="lightbox-frame"
                    label=format!("Image: {name}")>
                        <img class="lightbox-image" src=url.clone() alt=name.clone() />
                        <div class="dialog-actions">
                            <span class="lightbox-name">{name.clone()}</span>
                            <a class="button lightbox-download" href=url download=name.clone()>"Download"</a>
                            <button class="lightbox-close" autofocus on:click=move |_| close()>"Close image"</button>
                        </div>
                </Modal>
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chip_labels_show_names_safely() {
        assert_eq!(chip_label("../../etc/pass\u{0}wd\u{202e}.py", 2048), "passwd.py, 2.0 KB");
        let long = format!("{}.py", "a".repeat(500));
        let label = chip_label(&long, 10);
        assert!(label.chars().count() < 140 && label.contains('…') && label.ends_with(".py, 10 B"), "{label}");
    }
}
