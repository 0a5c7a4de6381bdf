//! The page's door to its MCP servers (spec §16). Everything MCP — the client, Settings → Tools, the
//! composer's menus, the calls the model makes — is JavaScript in the MCP bundle (`web/mcp/`,
//! `dist/mcp-<hash>.js`, global `CoworkMcp`), loaded into the page on first use: the app's wasm is part
//! of every cold start and carries only this loader. The storage worker knows MCP tools only as the
//! page's tools.

/// The `<meta name>` through which the page names the MCP bundle's URL (`scripts/mcp-bundle.sh`).
pub const META_NAME: &str = "cowork-mcp";

#[cfg(target_arch = "wasm32")]
pub use web::*;

#[cfg(target_arch = "wasm32")]
mod web {
    use std::cell::RefCell;
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;

    // The import's promise is kept and awaited by every caller: the bundle loads once per page, with
    // no future-sharing code in the app's wasm (a failure is kept too: a reload retries). A file, not
    // `inline_js`: see `highlight.rs`.
    #[wasm_bindgen(module = "/src/dynamic_import.js")]
    extern "C" {
        fn import_bundle(url: &str) -> js_sys::Promise;
    }

    thread_local! {
        /// The bundle's URL when set by the embedding module (otherwise the page's `<meta>` names it).
        static URL: RefCell<Option<String>> = const { RefCell::new(None) };
    }

    /// Where to load the bundle from, for a page that has no `<meta>` naming it (the embedding module).
    pub fn set_module_url(url: &str) {
        URL.with(|u| *u.borrow_mut() = Some(url.to_owned()));
    }

    /// The bundle's absolute URL (empty when this page names none).
    pub fn module_url() -> String {
        match URL.with(|u| u.borrow().clone()) {
            Some(url) => url,
            None => crate::app::sync::meta_url(super::META_NAME),
        }
    }

    /// The bundle's namespace (`CoworkMcp`), loaded once per page.
    pub async fn module() -> Result<JsValue, String> {
        let url = module_url();
        if url.is_empty() {
            return Err("this build has no MCP module".to_owned());
        }
        JsFuture::from(import_bundle(&url)).await.map_err(|_| {
            "the MCP module could not be loaded (is the app offline since before its first use?)".to_owned()
        })
    }

    /// Calls `CoworkMcp[name](...args)` and awaits it; a failure is the module's `{kind, message}`
    /// message (or the loader's).
    pub async fn call(name: &str, args: &[JsValue]) -> Result<JsValue, String> {
        let module = module().await?;
        let f: js_sys::Function = js_sys::Reflect::get(&module, &name.into())
            .ok()
            .and_then(|f| f.dyn_into().ok())
            .ok_or_else(|| format!("the MCP module has no {name}"))?;
        let args: js_sys::Array = args.iter().collect();
        let value = f.apply(&module, &args).map_err(message)?;
        match value.dyn_into::<js_sys::Promise>() {
            Ok(p) => JsFuture::from(p).await.map_err(message),
            Err(v) => Ok(v),
        }
    }

    fn message(e: JsValue) -> String {
        js_sys::Reflect::get(&e, &"message".into()).ok().and_then(|m| m.as_string()).unwrap_or_else(|| format!("{e:?}"))
    }
}
