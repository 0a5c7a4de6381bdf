//! Component tests in a real browser page (DOM mode): mount, let signals settle, read the DOM.
#![cfg(target_arch = "wasm32")]

use cowork_web::app::{App, StorageBanner, StorageState, StorageStatus};
use cowork_web::protocol::{Backend, ReadyInfo};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// A fresh element in the page to mount into.
fn host() -> web_sys::HtmlElement {
    let doc = web_sys::window().unwrap().document().unwrap();
    let el: web_sys::HtmlElement = doc.create_element("div").unwrap().unchecked_into();
    doc.body().unwrap().append_child(&el).unwrap();
    el
}

async fn sleep(ms: i32) {
    let p = js_sys::Promise::new(&mut |ok, _| {
        web_sys::window().unwrap().set_timeout_with_callback_and_timeout_and_arguments_0(&ok, ms).unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(p).await.unwrap();
}

/// Polls until `f` holds or `ms` pass; panics with `what` and the DOM on timeout.
async fn eventually(el: &web_sys::HtmlElement, ms: i32, what: &str, f: impl Fn(&web_sys::HtmlElement) -> bool) {
    for _ in 0..(ms / 20) {
        if f(el) {
            return;
        }
        sleep(20).await;
    }
    panic!("{what} did not happen within {ms} ms; DOM: {}", el.inner_html());
}

fn ready(backend: Backend) -> StorageState {
    StorageState::Ready(ReadyInfo { backend, sqlite_version: "3.test".into(), schema_version: 2 })
}

#[wasm_bindgen_test]
async fn storage_status_follows_the_worker() {
    let el = host();
    let (state, set_state) = signal(StorageState::Connecting);
    let _mounted = leptos::mount::mount_to(
        el.clone(),
        move || view! { <StorageStatus state=state /><StorageBanner state=state /> },
    );
    sleep(0).await;
    let status = || el.query_selector(".storage-status").unwrap().expect("a status badge");
    assert_eq!(status().get_attribute("data-state").as_deref(), Some("connecting"));
    assert!(el.query_selector(".banner").unwrap().is_none());

    set_state.set(ready(Backend::Opfs { file: "cowork.db".into() }));
    sleep(0).await;
    assert_eq!(status().get_attribute("data-state").as_deref(), Some("ready"));
    assert_eq!(status().text_content().unwrap().trim(), "storage ready");
    assert!(status().get_attribute("title").unwrap().contains("saved in this browser"));
    assert!(el.query_selector(".banner").unwrap().is_none(), "no banner when data persists");

    set_state.set(ready(Backend::Memory { reason: "OPFS is not available here".into() }));
    sleep(0).await;
    let banner = el.query_selector(".banner.warning").unwrap().expect("a visible warning without OPFS");
    let text = banner.text_content().unwrap();
    assert!(text.contains("memory only") && text.contains("Export"), "{text}");
    assert!(text.contains("OPFS is not available here"), "the reason is shown: {text}");
}

#[wasm_bindgen_test]
async fn the_app_says_clearly_when_storage_cannot_start() {
    let el = host();
    let _mounted = leptos::mount::mount_to(el.clone(), || view! { <App worker_url="/no-such-worker.js" /> });
    eventually(&el, 10_000, "the failed state", |el| {
        el.query_selector(".storage-status[data-state=failed]").unwrap().is_some()
    })
    .await;
    let banner = el.query_selector(".banner.error").unwrap().expect("an error banner").text_content().unwrap();
    assert!(banner.contains("Storage could not start"), "{banner}");
    assert!(banner.contains("Reload"), "the banner says what to do: {banner}");
    assert!(el.query_selector("h1.brand").unwrap().is_some(), "the shell still renders");
}
