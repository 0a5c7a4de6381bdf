//! One modal for every dialog: focus moves in when it opens (its `autofocus` control, else its first
//! field, else its first control), Tab and Shift+Tab go round inside it, the page behind is `inert`
//! (neither clickable nor reachable by Tab or a screen reader) while it is open, Esc and a click outside
//! close it, and closing gives the focus back to the element that opened it. It is the equivalent of
//! `<dialog>`'s `showModal()`, written once so the dialogs keep their own layout and the app can be
//! mounted inside a host page's shadow root.

use leptos::prelude::*;
use send_wrapper::SendWrapper;
use std::{cell::RefCell, rc::Rc};

/// What Tab can reach inside a dialog.
const FOCUSABLE: &str = "a[href], button:not([disabled]), input:not([disabled]):not([type=hidden]), \
                         select:not([disabled]), textarea:not([disabled]), summary, [tabindex]:not([tabindex='-1'])";
/// Where the focus goes first when nothing in the dialog asks for it (`autofocus`).
const FIELDS: &str = "input:not([disabled]):not([type=hidden]):not([type=file]):not(.visually-hidden), \
                      select:not([disabled]), textarea:not([disabled])";

/// A modal dialog over the app. `on_close` is what Esc and a click outside do (the approval dialog
/// passes "Deny"); the dialog's own buttons close it by changing the state that shows it.
#[component]
pub fn Modal(
    /// Closes the dialog (Esc, a click outside).
    on_close: Callback<()>,
    /// Classes of the dialog's box, after `dialog` (`"settings"`).
    #[prop(optional, into)]
    class: String,
    /// Classes of the layer behind it, after `overlay` (`"popover"`: transparent, near the top).
    #[prop(optional, into)]
    overlay_class: String,
    /// The dialog's accessible name, when no heading gives it (`labelled_by`).
    #[prop(optional, into)]
    label: Option<String>,
    /// The id of the heading that names the dialog.
    #[prop(optional)]
    labelled_by: Option<&'static str>,
    /// A confirmation (`role="alertdialog"`).
    #[prop(optional)]
    alert: bool,
    /// A click outside does nothing (a question that must be answered).
    #[prop(optional)]
    keep_on_outside_click: bool,
    /// The dialog's contents.
    children: Children,
) -> impl IntoView {
    let node = NodeRef::<leptos::html::Div>::new();
    // The element that had the focus when the dialog opened gets it back when it closes.
    let opener = SendWrapper::new(focused());
    let inerted = SendWrapper::new(Rc::new(RefCell::new(Vec::<web_sys::Element>::new())));
    let made_inert = SendWrapper::new(Rc::clone(&inerted));
    Effect::new(move |_| {
        if let Some(el) = node.get() {
            let el: web_sys::Element = el.into();
            made_inert.borrow_mut().extend(make_rest_inert(&el));
            focus_first(&el);
        }
    });
    on_cleanup(move || {
        for el in inerted.take().borrow_mut().drain(..) {
            let _ = el.remove_attribute("inert");
        }
        match opener.take() {
            Some(el) if el.is_connected() => {
                let _ = el.focus();
            }
            _ => {}
        }
    });
    let on_keydown = move |ev: web_sys::KeyboardEvent| match ev.key().as_str() {
        "Escape" => {
            ev.prevent_default();
            ev.stop_propagation();
            on_close.run(());
        }
        "Tab" => {
            if let Some(el) = node.get_untracked() {
                trap_tab(&ev, &el.into());
            }
        }
        _ => {}
    };
    view! {
        <div class=format!("overlay {overlay_class}")
            on:click=move |_| if !keep_on_outside_click { on_close.run(()) }>
            <div node_ref=node class=format!("dialog {class}") tabindex="-1"
                role=if alert { "alertdialog" } else { "dialog" } aria-modal="true"
                aria-label=label aria-labelledby=labelled_by
                on:click=|ev: web_sys::MouseEvent| ev.stop_propagation()
                on:keydown=on_keydown>
                {children()}
            </div>
        </div>
    }
}

/// The focused element, to take the focus back later. An item of a menu (which closes as the dialog
/// opens) hands over to the button that opened the menu.
fn focused() -> Option<web_sys::HtmlElement> {
    use wasm_bindgen::JsCast;
    let el = crate::dom::active_element()?;
    let trigger = el
        .closest("[role=menu]")
        .ok()
        .flatten()
        .and_then(|menu| menu.previous_element_sibling())
        .filter(|b| b.has_attribute("aria-haspopup"));
    trigger.unwrap_or(el).dyn_into().ok()
}

/// The dialog's controls that Tab reaches, in order (hidden ones, and those taken out of the Tab
/// order like a tab list's unselected tabs, left out).
fn focusables(dialog: &web_sys::Element, selector: &str) -> Vec<web_sys::HtmlElement> {
    use wasm_bindgen::JsCast;
    let Ok(list) = dialog.query_selector_all(selector) else { return Vec::new() };
    (0..list.length())
        .filter_map(|i| list.item(i)?.dyn_into::<web_sys::HtmlElement>().ok())
        .filter(|e| e.tab_index() >= 0 && (e.offset_width() > 0 || e.offset_height() > 0))
        .collect()
}

/// Moves the focus into a dialog just opened.
fn focus_first(dialog: &web_sys::Element) {
    use wasm_bindgen::JsCast;
    let first = focusables(dialog, "[autofocus]")
        .into_iter()
        .next()
        .or_else(|| focusables(dialog, FIELDS).into_iter().next())
        .or_else(|| focusables(dialog, FOCUSABLE).into_iter().next())
        .or_else(|| dialog.clone().dyn_into().ok());
    if let Some(el) = first {
        let _ = el.focus();
    }
}

/// Tab on the last control goes to the first, Shift+Tab on the first to the last (and from the dialog
/// itself, or anywhere else, into it).
fn trap_tab(ev: &web_sys::KeyboardEvent, dialog: &web_sys::Element) {
    let items = focusables(dialog, FOCUSABLE);
    let (Some(first), Some(last)) = (items.first(), items.last()) else {
        ev.prevent_default();
        return;
    };
    let active = crate::dom::active_element();
    let at = |e: &web_sys::HtmlElement| active.as_ref().is_some_and(|a| a == &**e);
    let inside = items.iter().any(at);
    let next = match (ev.shift_key(), inside) {
        (false, true) if at(last) => Some(first),
        (true, true) if at(first) => Some(last),
        (false, false) => Some(first),
        (true, false) => Some(last),
        _ => None,
    };
    if let Some(el) = next {
        ev.prevent_default();
        let _ = el.focus();
    }
}

/// Makes everything outside the dialog inert, up to the page (or the shadow root the app is mounted
/// in): each sibling of the dialog and of each of its ancestors. Returns what it changed, to undo.
fn make_rest_inert(dialog: &web_sys::Element) -> Vec<web_sys::Element> {
    let mut changed = Vec::new();
    let mut at = dialog.clone();
    while let Some(parent) = at.parent_element() {
        let mut sibling = parent.first_element_child();
        while let Some(s) = sibling {
            if s != at && !s.has_attribute("inert") && s.tag_name() != "SCRIPT" {
                let _ = s.set_attribute("inert", "");
                changed.push(s.clone());
            }
            sibling = s.next_element_sibling();
        }
        if parent.tag_name() == "BODY" {
            break;
        }
        at = parent;
    }
    changed
}
