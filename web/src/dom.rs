//! The app's own elements, found whether the app fills the page or is mounted into a host page's
//! element (inside a shadow root, where `document.querySelector` cannot see).

use leptos::prelude::document;
use std::cell::RefCell;

thread_local! {
    static ROOT: RefCell<Option<web_sys::ShadowRoot>> = const { RefCell::new(None) };
}

/// Where the app is mounted: a shadow root, or `None` for the whole document.
pub fn set_root(root: Option<web_sys::ShadowRoot>) {
    ROOT.with(|r| *r.borrow_mut() = root);
}

/// Whether the app is mounted in a shadow root.
pub fn in_shadow_root() -> bool {
    ROOT.with(|r| r.borrow().is_some())
}

/// Whether a keyboard event happened in the app: anywhere when it fills the page; inside its host
/// element when it is mounted in another page (whose own shortcuts are left alone).
pub fn event_is_inside(ev: &web_sys::Event) -> bool {
    let host = ROOT.with(|r| r.borrow().as_ref().map(|root| root.host()));
    match host {
        None => true,
        Some(host) => ev.target().is_some_and(|t| t == **host),
    }
}

/// The first of the app's elements matching `selector`.
pub fn query(selector: &str) -> Option<web_sys::Element> {
    let root = ROOT.with(|r| r.borrow().clone());
    match root {
        Some(root) => root.query_selector(selector).ok().flatten(),
        None => document().query_selector(selector).ok().flatten(),
    }
}

/// Moves the focus to the first of the app's elements matching `selector`, if there is one.
pub fn focus(selector: &str) {
    use wasm_bindgen::JsCast;
    if let Some(el) = query(selector) {
        let _ = el.unchecked_into::<web_sys::HtmlElement>().focus();
    }
}

/// [`focus`], once the view has rendered what `selector` finds (the next frame).
pub fn focus_later(selector: &'static str) {
    leptos::prelude::request_animation_frame(move || focus(selector));
}

/// The focused element within the app's part of the page.
pub fn active_element() -> Option<web_sys::Element> {
    let root = ROOT.with(|r| r.borrow().clone());
    match root {
        Some(root) => root.active_element(),
        None => document().active_element(),
    }
}
