//! The app's entry point: mounts [`cowork_web::app::App`] on the page.

use cowork_web::app::App;
use leptos::prelude::*;

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(|| view! { <App /> });
}
