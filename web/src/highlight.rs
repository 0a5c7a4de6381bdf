//! Code blocks coloured by highlight.js, loaded the first time a finished code block is on screen.
//!
//! The highlighter is not part of the app's start: it is a separate ES module (`web/highlight/`,
//! bundled at build time by `scripts/highlight.sh` into `highlight-<hash>.js`, whose URL the page names
//! in `<meta name="cowork-highlighter">`), imported once, when [`highlight_within`] first finds a code
//! block with a language. Every block is done once (`data-highlight` marks it); a block whose language
//! the highlighter does not know, or every block when the module cannot be loaded (offline before its
//! first use, a policy that refuses it), stays plain text, readable as before.
//!
//! **Invariant:** only a block's text goes to the highlighter, and only the highlighter's HTML comes
//! back into the block: highlight.js escapes the text, and its only markup is `<span class="hljs-…">`.
//! The Markdown around the block is never re-read as HTML.

/// The `<meta name>` through which the page names the highlighter's URL.
pub const META_NAME: &str = "cowork-highlighter";

/// The attribute that marks a block as done: `pending` while the highlighter loads, then `done`
/// (coloured) or `plain` (left as text).
pub const MARK: &str = "data-highlight";

/// The language of a code element from its `class` (pulldown-cmark writes `language-<name>`).
pub fn language_of(class: &str) -> Option<&str> {
    class.split_whitespace().find_map(|c| c.strip_prefix("language-")).filter(|l| !l.is_empty())
}

#[cfg(target_arch = "wasm32")]
pub use web::{highlight_within, set_module_url};

/// Natively there is no DOM: nothing to colour.
#[cfg(not(target_arch = "wasm32"))]
pub fn highlight_within<T>(_root: &T) {}

#[cfg(target_arch = "wasm32")]
mod web {
    use super::{language_of, MARK, META_NAME};
    use futures_util::future::{FutureExt, LocalBoxFuture, Shared};
    use std::cell::RefCell;
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;

    // A file of its own, not `inline_js`: the app and the storage worker are both built from this
    // crate into one `snippets/` folder, where inline snippets are numbered per build (`inline0.js`,
    // …), so one build's could overwrite the other's under the same name and fail the page's
    // integrity check. A file keeps its path and its bytes in both.
    #[wasm_bindgen(module = "/src/dynamic_import.js")]
    extern "C" {
        /// The browser's dynamic `import(url)` (a promise of the module's namespace).
        #[wasm_bindgen(catch)]
        fn import_module(url: &str) -> Result<js_sys::Promise, JsValue>;
    }

    type Module = Shared<LocalBoxFuture<'static, Option<JsValue>>>;

    thread_local! {
        /// The module's URL when set by the embedding module (otherwise the page's `<meta>` names it).
        static URL: RefCell<Option<String>> = const { RefCell::new(None) };
        /// The highlighter, loading or loaded (`None` inside: it could not be loaded), once asked for.
        static MODULE: RefCell<Option<Module>> = const { RefCell::new(None) };
    }

    /// Where to load the highlighter from, for a page that has no `<meta>` naming it (the embedding
    /// module, which serves a copy beside itself).
    pub fn set_module_url(url: &str) {
        URL.with(|u| *u.borrow_mut() = Some(url.to_owned()));
    }

    /// The highlighter's URL, absolute (a relative one is read against the page, not against the
    /// script that imports it).
    fn module_url() -> Option<String> {
        let named = URL.with(|u| u.borrow().clone()).unwrap_or_else(|| crate::app::sync::meta_url(META_NAME));
        Some(named).filter(|u| !u.is_empty())
    }

    /// The highlighter, loaded once per page; a failure is said once, as a warning, and not retried.
    fn module() -> Module {
        MODULE.with(|m| {
            m.borrow_mut()
                .get_or_insert_with(|| {
                    async {
                        let Some(url) = module_url() else {
                            web_sys::console::warn_1(
                                &"code is shown without colours: the page names no highlighter".into(),
                            );
                            return None;
                        };
                        let loaded = match import_module(&url) {
                            Ok(promise) => wasm_bindgen_futures::JsFuture::from(promise).await,
                            Err(e) => Err(e),
                        };
                        match loaded {
                            Ok(module) => Some(module),
                            Err(e) => {
                                let why = e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message()));
                                let why = why.unwrap_or_else(|| format!("{e:?}"));
                                web_sys::console::warn_1(&format!("code is shown without colours: {why}").into());
                                None
                            }
                        }
                    }
                    .boxed_local()
                    .shared()
                })
                .clone()
        })
    }

    /// Colours the finished code blocks inside `root` that are not done yet, loading the highlighter
    /// first if this is the first one. Safe to call again and again: a block is done once.
    pub fn highlight_within(root: &web_sys::Element) {
        let Ok(found) = root.query_selector_all(&format!("pre > code[class*=\"language-\"]:not([{MARK}])")) else {
            return;
        };
        let blocks: Vec<web_sys::Element> =
            (0..found.length()).filter_map(|i| found.item(i)?.dyn_into::<web_sys::Element>().ok()).collect();
        if blocks.is_empty() {
            return;
        }
        for block in &blocks {
            let _ = block.set_attribute(MARK, "pending");
        }
        wasm_bindgen_futures::spawn_local(async move {
            let highlight = module().await.and_then(|m| js_sys::Reflect::get(&m, &"highlight".into()).ok());
            let highlight = highlight.and_then(|f| f.dyn_into::<js_sys::Function>().ok());
            for block in blocks {
                let coloured = highlight.as_ref().and_then(|f| colour(f, &block));
                let _ = block.set_attribute(MARK, if coloured.is_some() { "done" } else { "plain" });
            }
        });
    }

    /// One block: its text in, the highlighter's HTML back in its place.
    fn colour(highlight: &js_sys::Function, block: &web_sys::Element) -> Option<()> {
        let language = language_of(&block.get_attribute("class")?)?.to_owned();
        let text = block.text_content()?;
        let html = highlight.call2(&JsValue::NULL, &text.into(), &language.into()).ok()?.as_string()?;
        block.set_inner_html(&html);
        block.class_list().add_1("hljs").ok()
    }
}

#[cfg(test)]
mod tests {
    use super::language_of;

    #[test]
    fn the_language_is_read_from_the_code_elements_class() {
        assert_eq!(language_of("language-python"), Some("python"));
        assert_eq!(language_of("hljs language-rust"), Some("rust"));
        assert_eq!(language_of("language-"), None);
        assert_eq!(language_of(""), None);
    }
}
