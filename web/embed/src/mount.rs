//! `mount(element, options)` and `archive.mount(element, options)`: the whole Cowork UI inside a host
//! element. The UI lives in the element's shadow root with its own stylesheet, so the page's CSS cannot
//! reach it (not even `* { all: unset }`: nothing is inherited past the root's `all: initial`) and its
//! CSS cannot leak out; the host element decides the size.

use crate::api::{default_worker_url, error, options_from, page_default_settings, Archive, Runner};
use crate::options::{self, ModelOptions};
use cowork_web::app::App;
use cowork_web::client::StorageClient;
use leptos::prelude::*;
use serde::Deserialize;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// `mount(element, options)`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct MountOptions {
    storage: Option<String>,
    worker_url: Option<String>,
    model: Option<ModelOptions>,
}

/// A mounted UI's number and what removes it.
type Mounted = (u32, Box<dyn FnOnce()>);

thread_local! {
    /// The UI mounted in this page. Kept here rather than in the `MountHandle`: the page may drop its
    /// handle (and the garbage collector free it) while the UI stays.
    static MOUNTED: std::cell::RefCell<Option<Mounted>> = const { std::cell::RefCell::new(None) };
    static NEXT_MOUNT: std::cell::Cell<u32> = const { std::cell::Cell::new(1) };
}

/// The mounted UI; `unmount()` removes it.
#[wasm_bindgen]
pub struct MountHandle {
    id: u32,
}

#[wasm_bindgen]
impl MountHandle {
    /// Removes the UI from its element (the archive and everything saved stay). Calling it again, or
    /// on the handle of a UI already replaced, does nothing.
    pub fn unmount(&self) {
        let remove = MOUNTED.with(|m| {
            let mut m = m.borrow_mut();
            match m.take() {
                Some((id, f)) if id == self.id => Some(f),
                other => {
                    *m = other;
                    None
                }
            }
        });
        if let Some(f) = remove {
            f();
        }
    }
}

/// Renders the whole Cowork UI into `element` (sized by the page), on its own storage worker: the
/// origin's OPFS archive by default, the same one the Cowork app and `openArchive()` use.
#[wasm_bindgen]
pub fn mount(
    element: web_sys::HtmlElement,
    options: Option<crate::api::MountOptionsArg>,
) -> Result<MountHandle, JsValue> {
    const WHAT: &str = "mount";
    let o: MountOptions = options_from(WHAT, options)?;
    let storage = options::OpenOptions { storage: o.storage.clone(), ..Default::default() }
        .storage()
        .map_err(|e| error(WHAT, e))?;
    let settings = match &o.model {
        Some(m) => Some(m.over(&page_default_settings()).map_err(|e| error(WHAT, e))?),
        None => None,
    };
    let url = options::worker_url(o.worker_url.as_deref(), &default_worker_url(), storage);
    let client = StorageClient::spawn(&url).map_err(|e| error(WHAT, e))?;
    render(WHAT, element, client, url, settings)
}

#[wasm_bindgen]
impl Archive {
    /// Renders the whole Cowork UI into `element`, working on this archive: the page's registered
    /// tools are offered in its chats too, and its approvals are asked in the UI.
    #[wasm_bindgen(js_name = mount)]
    pub fn mount_ui(
        &self,
        element: web_sys::HtmlElement,
        options: Option<crate::api::ArchiveMountOptionsArg>,
    ) -> Result<MountHandle, JsValue> {
        #[derive(Debug, Clone, Default, Deserialize)]
        #[serde(default, deny_unknown_fields)]
        struct ArchiveMountOptions {
            model: Option<ModelOptions>,
        }
        const WHAT: &str = "Archive.mount";
        let o: ArchiveMountOptions = options_from(WHAT, options)?;
        let base = self.shared.settings.borrow().clone();
        let settings = match &o.model {
            Some(m) => m.over(&base).map_err(|e| error(WHAT, e))?,
            None => base,
        };
        let client = self.client.share();
        client.set_tool_runner(Some(Rc::new(Runner(self.shared.clone()))));
        render(WHAT, element, client, String::new(), Some(settings))
    }
}

fn render(
    what: &str,
    element: web_sys::HtmlElement,
    client: StorageClient,
    worker_url: String,
    settings: Option<cowork_web::settings::ModelSettings>,
) -> Result<MountHandle, JsValue> {
    if cowork_web::dom::in_shadow_root() {
        return Err(error(what, "Cowork is already mounted in this page; unmount() it first"));
    }
    let document = element.owner_document().ok_or_else(|| error(what, "the element is not in a document"))?;
    let shadow = match element.shadow_root() {
        Some(root) => {
            root.set_inner_html("");
            root
        }
        None => element
            .attach_shadow(&web_sys::ShadowRootInit::new(web_sys::ShadowRootMode::Open))
            .map_err(|e| error(what, format!("this element cannot hold the UI (no shadow root): {e:?}")))?,
    };
    adopt_styles(&document, &shadow).map_err(|e| error(what, format!("the UI's styles could not be added: {e:?}")))?;
    // The code highlighter, loaded when a code block first shows: the copy beside this module.
    cowork_web::highlight::set_module_url(&crate::api::highlighter_url());
    let root: web_sys::HtmlElement =
        document.create_element("div").map_err(|e| error(what, format!("{e:?}")))?.unchecked_into();
    root.set_class_name("cowork-root");
    shadow.append_child(&root).map_err(|e| error(what, format!("{e:?}")))?;
    cowork_web::dom::set_root(Some(shadow.clone()));
    let handle = leptos::mount::mount_to(root, move || {
        view! { <App worker_url=worker_url client=Some(client) settings=settings /> }
    });
    let id = NEXT_MOUNT.with(|n| n.replace(n.get() + 1));
    let remove: Box<dyn FnOnce()> = Box::new(move || {
        drop(handle);
        shadow.set_inner_html("");
        cowork_web::dom::set_root(None);
    });
    MOUNTED.with(|m| *m.borrow_mut() = Some((id, remove)));
    Ok(MountHandle { id })
}

/// The UI's stylesheet, scoped to the shadow root: a constructed stylesheet (which a page's
/// Content-Security-Policy without `'unsafe-inline'` still allows), else a `<style>` element.
fn adopt_styles(document: &web_sys::Document, shadow: &web_sys::ShadowRoot) -> Result<(), JsValue> {
    let css = options::scoped_css(include_str!("../../style/app.css"));
    if let Ok(sheet) = web_sys::CssStyleSheet::new() {
        if sheet.replace_sync(&css).is_ok()
            && js_sys::Reflect::set(shadow, &"adoptedStyleSheets".into(), &js_sys::Array::of1(&sheet))?
        {
            return Ok(());
        }
    }
    let style = document.create_element("style")?;
    style.set_text_content(Some(&css));
    shadow.append_child(&style)?;
    Ok(())
}
