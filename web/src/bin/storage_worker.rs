//! The storage worker's entry point (loaded by Trunk as a dedicated worker).

fn main() {
    console_error_panic_hook::set_once();
    #[cfg(target_arch = "wasm32")]
    wasm_bindgen_futures::spawn_local(cowork_web::worker::run());
}
