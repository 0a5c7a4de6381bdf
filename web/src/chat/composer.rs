//! The notice line (what is happening, or what went wrong and where to fix it) and the composer.

use super::attachments::PendingChips;
use super::format::Fix;
use super::icons::{icon, Icon};
use super::state::{ChatState, DialogState};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// The last notice, with the place that fixes it when its kind has one ("Open Settings"); a reply's
/// notice only in the session the reply is written in.
#[component]
pub fn NoticeLine() -> impl IntoView {
    let (state, dialogs) = (ChatState::get(), DialogState::get());
    move || {
        let current = state.current.get();
        state.notice.get().filter(|n| n.shown_in(current.as_deref())).map(|n| {
            let fix = n.fix().map(|f| {
                let label = match f {
                    Fix::Settings => "Open Settings",
                    Fix::Storage => "Open Storage",
                };
                view! {
                    <button class="notice-fix" on:click=move |_| match f {
                        Fix::Settings => dialogs.settings_open.set(true),
                        Fix::Storage => dialogs.storage_open.set(true),
                    }>{label}</button>
                }
            });
            view! { <div class="notice" role="alert"><span>{n.text}</span>{fix}</div> }
        })
    }
}

/// The message box: one line that grows with its text, between the Attach and Send icon buttons
/// (Stop while a reply runs). Enter sends, Shift+Enter starts a new line, ↑ when empty edits the last
/// message. Files come in by Attach (a file picker), by pasting (a screenshot) or by dropping them on
/// the conversation; they wait as chips above the box until the message is sent.
#[component]
pub fn Composer(
    /// Send the draft.
    on_send: Callback<()>,
    /// Stop the reply.
    on_stop: Callback<()>,
    /// Attach files (picked, pasted or dropped).
    on_files: Callback<Vec<web_sys::File>>,
) -> impl IntoView {
    let state = ChatState::get();
    let picker = NodeRef::<leptos::html::Input>::new();
    let picked = move |ev: leptos::ev::Event| {
        let Some(input) = picker.get_untracked() else { return };
        let files = files_of(input.files());
        input.set_value(""); // picking the same file again attaches it again
        let _ = ev;
        if !files.is_empty() {
            on_files.run(files);
        }
    };
    // A pasted screenshot (or copied files) is attached; text pasted with it still goes into the box.
    // Very long text alone is attached as a text file (`pasted_file`).
    let paste = move |ev: web_sys::ClipboardEvent| {
        let Some(data) = ev.clipboard_data() else { return };
        let files = files_of(data.files());
        if files.is_empty() {
            if let Some(file) = pasted_file(&data.get_data("text/plain").unwrap_or_default()) {
                ev.prevent_default();
                on_files.run(vec![file]);
            }
            return;
        }
        if data.get_data("text/plain").unwrap_or_default().is_empty() {
            ev.prevent_default();
        }
        on_files.run(files);
    };
    let send_on_enter = move |ev: web_sys::KeyboardEvent| {
        if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
            ev.prevent_default();
            on_send.run(());
        } else if ev.key() == "ArrowUp" && state.draft.get_untracked().is_empty() && !state.busy.get_untracked() {
            // ↑ in an empty message box edits the last message of the user's in view.
            let last = state
                .turns
                .with_untracked(|t| t.iter().rev().find(|t| t.role == cowork_core::Role::User).map(|t| t.turn_number));
            if let Some(n) = last {
                ev.prevent_default();
                state.editing.set(Some(n));
            }
        }
    };
    // What the user types goes into the draft without notifying it (`typed` is notified instead): the
    // box already holds that text, so `prop:value` does not write it back, which for a large paste
    // would copy megabytes out of wasm and into the box again per change. A draft set elsewhere (emptied
    // after a send) notifies the draft, and the box is given it.
    let typed = RwSignal::new(0u64);
    let on_input = move |ev: leptos::ev::Event| {
        let text = event_target_value(&ev);
        state.draft.update_untracked(|d| *d = text);
        typed.update(|n| *n += 1);
    };
    let empty = move || {
        typed.track();
        state.draft.with(|d| d.trim().is_empty()) && state.attachments.with(Vec::is_empty)
    };
    // One line that grows with its text, up to its max-height (app.css), then scrolls. Where the browser
    // sizes a box to its content (`field-sizing: content`, app.css) it does so in the layout it does
    // anyway; elsewhere the box is measured in the next frame, once it holds the new text (emptied
    // after a send, too).
    let input = NodeRef::<leptos::html::Textarea>::new();
    let measured = !sizes_to_content();
    Effect::new(move |_| {
        state.draft.track();
        typed.track();
        if measured {
            request_animation_frame(move || {
                if let Some(el) = input.get_untracked() {
                    fit_height(&el);
                }
            });
        }
    });
    #[cfg(target_arch = "wasm32")]
    mcp_menus(input);
    view! {
        <form class="composer" on:submit=move |ev| { ev.prevent_default(); on_send.run(()); }>
            <PendingChips />
            <div class="composer-box">
                <input type="file" multiple class="attach-input" hidden aria-label="Files to attach" node_ref=picker on:change=picked />
                <button type="button" class="attach icon-button" aria-label="Attach files"
                    title="Attach files: images or any file (or paste them, or drop them on the conversation)"
                    on:click=move |_| if let Some(i) = picker.get_untracked() { i.click() }>{icon(Icon::Attach)}</button>
                <label class="visually-hidden" for="composer-input">"Message"</label>
                <textarea
                    id="composer-input"
                    rows="1"
                    placeholder="Message Cowork"
                    aria-describedby="composer-hint"
                    node_ref=input
                    prop:value=move || state.draft.get()
                    on:input=on_input
                    on:keydown=send_on_enter
                    on:paste=paste
                ></textarea>
                <Show
                    when=move || state.busy.get()
                    fallback=move || view! {
                        <button type="submit" class="send icon-button" aria-label="Send" title="Send (Enter)" disabled=empty>
                            {icon(Icon::Send)}
                        </button>
                    }
                >
                    <button type="button" class="stop icon-button" aria-label="Stop" title="Stop the reply (Esc)"
                        on:click=move |_| on_stop.run(())>{icon(Icon::Stop)}</button>
                </Show>
            </div>
            <Show when=move || state.busy.get() && state.replying_in.get() != state.current.get()>
                <span class="replying-elsewhere" role="status">{move || replying_elsewhere(state)}</span>
            </Show>
            <p class="composer-hint" id="composer-hint">"Enter sends, Shift+Enter starts a new line"</p>
        </form>
    }
}

/// The composer's menus of the workspace's MCP servers (`/` for their prompts, the Resource button),
/// made by the MCP bundle (`web/mcp/ui-menus.mjs`, `mountMenus`) on the message box once the
/// workspace uses an enabled server, and given the servers (the workspace's `mcp_servers` as JSON)
/// again when the workspace changes or Settings closes (a server added there). The menus speak to the
/// app through its own controls (an `input` event on the box, a `change` on the file picker), so the
/// app's state stays the truth.
#[cfg(target_arch = "wasm32")]
fn mcp_menus(input: NodeRef<leptos::html::Textarea>) {
    let state = ChatState::get();
    let settings_open = use_context::<DialogState>().map(|d| d.settings_open);
    let client = use_context::<crate::app::Client>();
    let mounted = StoredValue::new(false);
    Effect::new(move |_| {
        let workspace = state.workspace.get();
        if settings_open.is_some_and(|s| s.get()) {
            return;
        }
        let Some(c) = client.and_then(|c| c.try_get_value().flatten()) else { return };
        leptos::task::spawn_local(async move {
            let Ok((servers, used)) = crate::app::tools::servers_of(Some(c), workspace, None).await else { return };
            let (Some(el), Some(before)) = (input.try_get_untracked().flatten(), mounted.try_get_value()) else {
                return;
            };
            if !before && !used {
                return;
            }
            mounted.try_update_value(|m| *m = true);
            if let Err(e) = crate::mcp::call("mountMenus", &[el.into(), servers.into()]).await {
                let text = format!("The menus of this workspace's MCP servers are missing: {e}. Reload the page.");
                state.notice.try_set(Some(super::state::Notice::info(text)));
            }
        });
    });
}

/// Sizes the message box to its text (one line when empty); past the CSS max-height it scrolls. Set
/// through the CSSOM (`el.style.height`): the page's Content-Security-Policy refuses style attributes.
fn fit_height(el: &web_sys::HtmlTextAreaElement) {
    let Ok(style) = js_sys::Reflect::get(el, &"style".into()) else { return };
    let height = wasm_bindgen::JsValue::from_str("height");
    let _ = js_sys::Reflect::set(&style, &height, &"auto".into());
    let _ = js_sys::Reflect::set(&style, &height, &format!("{}px", el.scroll_height()).into());
}

/// Whether this browser sizes a text box to its content by CSS (`CSS.supports("field-sizing",
/// "content")`; Chromium 123 and later).
fn sizes_to_content() -> bool {
    let global = js_sys::global();
    let Ok(css) = js_sys::Reflect::get(&global, &"CSS".into()) else { return false };
    let Ok(supports) = js_sys::Reflect::get(&css, &"supports".into()) else { return false };
    supports
        .dyn_ref::<js_sys::Function>()
        .and_then(|f| f.call2(&css, &"field-sizing".into(), &"content".into()).ok())
        .is_some_and(|v| v.is_truthy())
}

/// What the composer says beside Stop while this tab's reply is written in a session not shown.
fn replying_elsewhere(state: ChatState) -> String {
    let title = state.replying_in.with(|id| {
        let id = id.as_deref()?;
        state.sessions.with(|s| s.iter().find(|s| s.id == id).map(|s| s.title.clone())).filter(|t| !t.is_empty())
    });
    match title {
        Some(t) => format!("Writing a reply in “{t}”…"),
        None => "Writing a reply in another session…".to_owned(),
    }
}

/// Pasted text this long (in UTF-8 bytes, about 5,000 tokens) is attached as a text file named
/// [`PASTED_NAME`] instead of going into the box, as the best chat apps do: a box holding megabytes lays all of it
/// out again on each change (a plain textarea takes 0.8 s to show 3 MB, BENCHMARKS.md), and a long log
/// or file reads better as a chip the user can remove. The file is sent to the model whole, in a fence
/// headed by its name, kept in the archive byte for byte, and its first 2 MB are searchable.
pub const PASTE_AS_FILE_BYTES: usize = 20_000;
/// The name of the file a long paste becomes.
pub const PASTED_NAME: &str = "Pasted text.txt";

/// The text file a paste of `text` becomes, when it is that long ([`PASTE_AS_FILE_BYTES`]).
fn pasted_file(text: &str) -> Option<web_sys::File> {
    if text.len() < PASTE_AS_FILE_BYTES {
        return None;
    }
    let options = web_sys::FilePropertyBag::new();
    options.set_type("text/plain");
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    web_sys::File::new_with_str_sequence_and_options(&parts, PASTED_NAME, &options).ok()
}

/// The files of a `FileList` (none when there is no list).
pub fn files_of(list: Option<web_sys::FileList>) -> Vec<web_sys::File> {
    list.map(|l| (0..l.length()).filter_map(|i| l.get(i)).collect()).unwrap_or_default()
}
