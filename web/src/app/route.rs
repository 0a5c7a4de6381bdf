//! A URL per session: `#/` is a new conversation, `#/s/<id>` a session and `#/s/<id>/t/<n>` one of
//! its turns (a search hit). Opening a session pushes a history entry, so back and forward move
//! between sessions; a reload, or a link pasted into the address bar, opens the session the URL names;
//! the place the user has read to (the turn at the top of the view) is kept in the history entry's
//! state, so a reload comes back there. A link to a session this archive does not hold says so
//! ([`MissingSession`]). Hash routes need nothing from the dev server or the service worker: the page
//! is always `index.html`. Not used when Cowork is embedded in another page (the URL is the host's).

use crate::app::{Client, StorageState};
use crate::chat::{ChatState, DialogState};
use leptos::prelude::*;

/// Where a URL points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// The welcome screen: a new conversation.
    Home,
    /// A session: at its end, or at turn `turn`.
    Session {
        /// The session's id.
        id: String,
        /// The turn to show and mark (a search hit); `None`: the end.
        turn: Option<i64>,
    },
}

// Natively (the app's unit tests) only the tests read and write routes; the browser's history does.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
impl Route {
    /// Reads a location's hash (`#/s/…`, with or without the `#`). Anything it does not name, an
    /// empty hash included, is the welcome screen.
    pub fn parse(hash: &str) -> Route {
        let path = hash.trim_start_matches('#').trim_start_matches('/');
        let parts: Vec<&str> = path.split('/').collect();
        let id = |raw: &str| decode(raw).filter(|id| !id.is_empty());
        match parts.as_slice() {
            ["s", raw] => id(raw).map_or(Route::Home, |id| Route::Session { id, turn: None }),
            ["s", raw, "t", n] => match (id(raw), n.parse::<i64>()) {
                (Some(id), Ok(n)) if n > 0 => Route::Session { id, turn: Some(n) },
                (Some(id), _) => Route::Session { id, turn: None },
                (None, _) => Route::Home,
            },
            _ => Route::Home,
        }
    }

    /// The hash that names this route (`#/s/<id>/t/<n>`); the id percent-encoded.
    pub fn to_hash(&self) -> String {
        match self {
            Route::Home => "#/".to_owned(),
            Route::Session { id, turn: None } => format!("#/s/{}", encode(id)),
            Route::Session { id, turn: Some(n) } => format!("#/s/{}/t/{n}", encode(id)),
        }
    }

    /// Where the app is: the open session (`None`: a new conversation) and the turn it was opened at.
    pub fn of(current: Option<String>, turn: Option<i64>) -> Route {
        match current {
            Some(id) => Route::Session { id, turn },
            None => Route::Home,
        }
    }
}

/// Percent-encodes everything but the characters a URL fragment keeps as they are.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
fn encode(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Reverses [`encode`] (and a browser's own encoding); `None` for malformed escapes or non-UTF-8.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
fn decode(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = raw.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The routing's state: whether the URL is followed yet, and a link's session this archive lacks.
#[derive(Clone, Copy)]
pub struct Routing {
    /// The id a link named that this archive does not hold (shown until it is dismissed or another
    /// session opens).
    pub missing: RwSignal<Option<String>>,
    /// The URL the page opened with has been followed: from now on the URL follows the app.
    ready: RwSignal<bool>,
}

/// Follows the URL (at start, once the archive is ready; then on every hash change: back, forward, a
/// pasted link) and keeps it following the app (a history entry per session opened).
pub fn start(client: Client, chat: ChatState, dialogs: DialogState, storage: ReadSignal<StorageState>) -> Routing {
    let routing = Routing { missing: RwSignal::new(None), ready: RwSignal::new(false) };
    Effect::new(move |_| {
        if matches!(storage.get(), StorageState::Ready(_)) && !routing.ready.get_untracked() {
            follow(client, chat, dialogs, routing, browser::hash_route(), browser::place(), true);
        }
    });
    // The URL follows the app: a session opened (from the sidebar, a search hit, a fork, a branch
    // switch, a first message) is a new history entry.
    Effect::new(move |_| {
        let want = Route::of(chat.current.get(), chat.focus_turn.get());
        if !routing.ready.get() || routing.missing.get().is_some() {
            return;
        }
        if browser::hash_route() != want {
            browser::push(&want);
        }
    });
    Effect::new(move |_| {
        if chat.current.get().is_some() {
            routing.missing.set(None);
        }
    });
    browser::listen(move || {
        if routing.ready.get_untracked() {
            follow(client, chat, dialogs, routing, browser::hash_route(), browser::place(), false);
        }
    });
    browser::keep_place(chat);
    routing
}

/// Shows what `route` names: the welcome screen, or a session at the turn the URL or the history
/// entry's place asks for; a session this archive does not hold is reported.
fn follow(
    c: Client,
    chat: ChatState,
    dialogs: DialogState,
    routing: Routing,
    route: Route,
    place: Option<i64>,
    first: bool,
) {
    let Route::Session { id, turn } = route else {
        routing.missing.set(None);
        if chat.current.get_untracked().is_some() {
            super::start_new_session(chat, dialogs);
        }
        routing.ready.set(true);
        return;
    };
    if chat.current.get_untracked().as_deref() == Some(id.as_str()) && turn.is_none() && place.is_none() {
        routing.ready.set(true);
        return;
    }
    let Some(client) = c.with_value(|c| c.clone()) else { return };
    leptos::task::spawn_local(async move {
        let listed = chat.sessions.with_untracked(|s| s.iter().any(|s| s.id == id));
        if first || !listed {
            use crate::protocol::{ops, ErrorKind};
            match client.call(ops::SessionDetails { session_id: id.clone() }).await {
                Ok(details) => {
                    if details.session.is_archived {
                        chat.show_archived.set(true);
                    }
                    super::actions::refresh_sessions(&client, chat).await;
                }
                Err(e) if e.problem().kind == ErrorKind::NotFound => {
                    routing.missing.set(Some(id));
                    if chat.current.get_untracked().is_some() {
                        super::start_new_session(chat, dialogs);
                    }
                    routing.ready.set(true);
                    return;
                }
                Err(e) => chat.tell(crate::chat::Notice::problem(&e.problem())),
            }
        }
        // The place read to comes first (a reload); then the URL's turn; else the end.
        super::actions::open_session(c, chat, id, place.or(turn));
        chat.focus_turn.set(turn);
        routing.ready.set(true);
    });
}

/// The banner for a link to a session this archive does not hold: what happened and what to do.
#[component]
pub fn MissingSession(
    /// The routing state ([`start`]).
    routing: Routing,
) -> impl IntoView {
    let dialogs = DialogState::get();
    move || {
        routing.missing.get().map(|id| {
            view! {
                <div class="banner warning missing-session" role="alert">
                    <strong>"This session is not in this browser's archive. "</strong>
                    {format!("The link names session {id}, which was never saved in this browser or was deleted here. ")}
                    "If another device has it, turn on Sync with that device, or import an export of it in Storage; then open the link again. "
                    <button class="secondary" on:click=move |_| { dialogs.integrity.set(None); dialogs.storage_open.set(true) }>
                        "Open Storage"
                    </button>
                    " "
                    <button class="secondary" on:click=move |_| routing.missing.set(None)>"Dismiss"</button>
                </div>
            }
        })
    }
}

#[cfg(target_arch = "wasm32")]
mod browser {
    //! The page's URL and history.
    use super::Route;
    use crate::chat::ChatState;
    use leptos::prelude::*;
    use wasm_bindgen::{JsCast, JsValue};

    /// The route the page's URL names now.
    pub fn hash_route() -> Route {
        Route::parse(&window().location().hash().unwrap_or_default())
    }

    /// The place kept in the current history entry: the turn at the top of the view, if the user had
    /// scrolled away from the end.
    pub fn place() -> Option<i64> {
        let state = window().history().ok()?.state().ok()?;
        state.as_f64().map(|n| n as i64)
    }

    /// A new history entry for `route` (its place: the end, until the user scrolls).
    pub fn push(route: &Route) {
        if let Ok(h) = window().history() {
            let _ = h.push_state_with_url(&JsValue::NULL, "", Some(&route.to_hash()));
        }
    }

    /// Calls `on_change` on every hash change: back, forward, a link pasted or followed.
    pub fn listen(on_change: impl Fn() + 'static) {
        let handle = window_event_listener(leptos::ev::hashchange, move |_| on_change());
        on_cleanup(move || handle.remove());
    }

    /// Keeps the turn at the top of the conversation in the history entry's state as the user scrolls
    /// (written only when it changes: browsers limit how often the history may be written). Not a
    /// listener of the conversation's own: scroll events do not bubble, so it is caught on its way down.
    pub fn keep_place(chat: ChatState) {
        let on_scroll = wasm_bindgen::closure::Closure::<dyn Fn(web_sys::Event)>::new(move |ev: web_sys::Event| {
            let Some(list) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()) else { return };
            if !list.class_list().contains("turns") || chat.current.try_get_untracked().flatten().is_none() {
                return;
            }
            let place = top_turn(&list);
            if place != self::place() {
                if let Ok(h) = window().history() {
                    let state = place.map_or(JsValue::NULL, |n| JsValue::from_f64(n as f64));
                    let _ = h.replace_state(&state, "");
                }
            }
        });
        let target: web_sys::EventTarget = window().into();
        let f: js_sys::Function = on_scroll.as_ref().unchecked_ref::<js_sys::Function>().clone();
        let _ = target.add_event_listener_with_callback_and_bool("scroll", &f, true);
        let kept = send_wrapper::SendWrapper::new((target, on_scroll));
        on_cleanup(move || {
            let (target, on_scroll) = &*kept;
            let _ =
                target.remove_event_listener_with_callback_and_bool("scroll", on_scroll.as_ref().unchecked_ref(), true);
        });
    }

    /// The turn at the top of the conversation's view; `None` at the end (the user follows it).
    fn top_turn(list: &web_sys::HtmlElement) -> Option<i64> {
        let below = list.scroll_height() - list.scroll_top() - list.client_height();
        if below < 48 {
            return None;
        }
        // The first turn (in page order) that ends below the view's top: found by halving.
        let top = list.get_bounding_client_rect().top() + 4.0;
        let turns = list.query_selector_all(".turn").ok()?;
        let bottom = |i: u32| {
            turns
                .item(i)
                .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
                .map(|e| e.get_bounding_client_rect().bottom())
        };
        let (mut lo, mut hi) = (0, turns.length());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if bottom(mid).is_some_and(|b| b <= top) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let turn = turns.item(lo)?.dyn_into::<web_sys::Element>().ok()?;
        turn.get_attribute("data-turn")?.parse().ok()
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod browser {
    //! Natively there is no page: no URL, no history.
    use super::Route;
    use crate::chat::ChatState;

    pub fn hash_route() -> Route {
        Route::Home
    }
    pub fn place() -> Option<i64> {
        None
    }
    pub fn push(_: &Route) {}
    pub fn listen(_: impl Fn() + 'static) {}
    pub fn keep_place(_: ChatState) {}
}

#[cfg(test)]
mod tests;
