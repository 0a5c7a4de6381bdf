//! Storage pressure, said once: while the browser may clear the archive when the disk runs low (it
//! has not granted persistent storage), a banner offers to ask it again, or to be dismissed for good.
//! The header only shows the space used.

use crate::chat::ChatState;
use leptos::prelude::*;

/// Where the dismissal is remembered, in this browser.
const DISMISSED_KEY: &str = "cowork.storage-pressure-dismissed";

/// What the browser said about keeping the archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Persistence {
    /// Not asked yet (or the archive is empty).
    Unknown,
    /// Kept even under storage pressure.
    Kept,
    /// It may be cleared under pressure.
    AtRisk,
    /// Asked again from the banner: the browser said no.
    Declined,
}

/// The banner, shown while the archive holds sessions, the browser may clear it, and the user has not
/// dismissed it.
#[component]
pub fn PressureBanner() -> impl IntoView {
    let chat = ChatState::get();
    let kept = RwSignal::new(Persistence::Unknown);
    let dismissed = RwSignal::new(remembered());
    // Read again whenever the space used is (at start, after each reply and import).
    Effect::new(move |_| {
        chat.usage.track();
        leptos::task::spawn_local(async move {
            if let Some(p) = persisted().await {
                kept.update(|k| {
                    if *k != Persistence::Declined || p {
                        *k = if p { Persistence::Kept } else { Persistence::AtRisk }
                    }
                });
            }
        });
    });
    let ask = move |_| {
        leptos::task::spawn_local(async move {
            let granted = persist().await.unwrap_or(false);
            kept.set(if granted { Persistence::Kept } else { Persistence::Declined });
        })
    };
    let dismiss = move |_| {
        dismissed.set(true);
        if let Some(s) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) {
            let _ = s.set_item(DISMISSED_KEY, "1");
        }
    };
    move || {
        let shown = !dismissed.get() && chat.sessions.with(|s| !s.is_empty());
        let text = match kept.get() {
            Persistence::AtRisk => "This browser may clear your archive when the disk runs low. ",
            Persistence::Declined => {
                "The browser declined (it decides by how much you use this site). Export or back up now and then (Storage). "
            }
            _ => return None,
        };
        let at_risk = kept.get() == Persistence::AtRisk;
        shown.then(|| {
            view! {
                <div class="banner info pressure-banner" role="status">
                    <span>{text}</span>
                    {at_risk.then(|| view! {
                        <button class="link keep-storage" on:click=ask>"Keep it in this browser"</button>
                    })}
                    <button class="link" on:click=dismiss>"Dismiss"</button>
                </div>
            }
        })
    }
}

/// Whether the user dismissed the banner in this browser.
fn remembered() -> bool {
    web_sys::window()
        .and_then(|w| w.local_storage().ok().flatten())
        .and_then(|s| s.get_item(DISMISSED_KEY).ok().flatten())
        .is_some()
}

/// `navigator.storage.persisted()`.
async fn persisted() -> Option<bool> {
    let storage = web_sys::window()?.navigator().storage();
    wasm_bindgen_futures::JsFuture::from(storage.persisted().ok()?).await.ok()?.as_bool()
}

/// `navigator.storage.persist()`: asks the browser to keep the archive.
async fn persist() -> Option<bool> {
    let storage = web_sys::window()?.navigator().storage();
    wasm_bindgen_futures::JsFuture::from(storage.persist().ok()?).await.ok()?.as_bool()
}
