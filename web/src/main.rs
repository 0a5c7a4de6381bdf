//! The app's entry point: mounts [`cowork_web::app::App`] on the page and registers the service
//! worker that keeps the app shell for offline use.

use cowork_web::app::App;
use leptos::prelude::*;

fn main() {
    console_error_panic_hook::set_once();
    #[cfg(target_arch = "wasm32")]
    register_service_worker();
    leptos::mount::mount_to_body(|| view! { <App /> });
}

/// Registers `sw.js` where service workers exist (secure contexts); elsewhere the app simply needs the
/// network to load, which the storage banner already explains for that case.
#[cfg(target_arch = "wasm32")]
fn register_service_worker() {
    let Some(navigator) = web_sys::window().map(|w| w.navigator()) else { return };
    let has = js_sys::Reflect::get(&navigator, &"serviceWorker".into()).is_ok_and(|v| !v.is_undefined());
    if has {
        let registering = navigator.service_worker().register("./sw.js");
        wasm_bindgen_futures::spawn_local(async move {
            if let Err(e) = wasm_bindgen_futures::JsFuture::from(registering).await {
                web_sys::console::warn_1(&format!("offline use is unavailable: {e:?}").into());
            }
        });
    }
}
