//! Sign in and Sign out of a server that asks for OAuth (Settings → Tools). The sign-in window is
//! opened inside the click (a page may open one only then) on Cowork's own `oauth/callback.html`, with a
//! nonce; the storage worker, which runs the protocol, sends the window to the authorization server
//! and back under that nonce (`web/mcp/signin.mjs`). A window the user closes before the end is told
//! to the worker here, so the sign-in ends at once with a message.

use crate::client::StorageClient;
use crate::markdown::escape_into;
use crate::protocol::{ops, McpState, McpStatus};
use cowork_core::mcp::{McpAuth, McpServer};
use leptos::prelude::*;
use std::cell::Cell;
use std::rc::Rc;

/// The origin's channel the worker and the sign-in window speak on (`web/mcp/signin.mjs`).
const CHANNEL: &str = "cowork-mcp-oauth";

/// Sign in / Sign out for a server signed in to with OAuth, by its state.
pub fn buttons(out: &mut String, server: &McpServer, state: McpState) {
    if server.auth != McpAuth::Oauth {
        return;
    }
    let (act, label) = match state {
        McpState::NeedsSignIn => ("sign-in", "Sign in"),
        McpState::Connected => ("sign-out", "Sign out"),
        _ => return,
    };
    out.push_str(" <button class=\"secondary\" data-act=\"");
    out.push_str(act);
    out.push_str("\" data-id=\"");
    escape_into(out, &server.id);
    out.push_str("\">");
    out.push_str(label);
    out.push_str("</button>");
}

/// Signs in to `server` through a new sign-in window (`sign_in`), or signs out; `shown` gets the
/// server's status after.
pub fn sign(
    c: StorageClient,
    server: McpServer,
    sign_in: bool,
    error: RwSignal<String>,
    shown: impl Fn(McpStatus) + 'static,
) {
    let nonce =
        sign_in.then(|| format!("{:x}{:x}", (js_sys::Math::random() * 1e15) as u64, js_sys::Date::now() as u64));
    let mut window = None;
    if let Some(n) = &nonce {
        let features = "popup,width=520,height=680";
        let url = format!("oauth/callback.html#{n}");
        window = web_sys::window()
            .and_then(|w| w.open_with_url_and_target_and_features(&url, "_blank", features).ok().flatten());
        if window.is_none() {
            error.set(
                "The browser blocked the sign-in window: allow pop-ups for this page, then press Sign in again.".into(),
            );
            return;
        }
        error.set("Signing in: finish in the sign-in window.".into());
    }
    let done = Rc::new(Cell::new(false));
    if let (Some(w), Some(n)) = (window, nonce.clone()) {
        let done = done.clone();
        leptos::task::spawn_local(async move {
            // Until the sign-in ends (the worker gives up after a few minutes): a window closed early
            // is said to the worker.
            while !done.get() {
                sleep(500).await;
                if !done.get() && w.closed().unwrap_or(true) {
                    if let Ok(channel) = web_sys::BroadcastChannel::new(CHANNEL) {
                        let message = js_sys::Object::new();
                        let _ = js_sys::Reflect::set(&message, &"nonce".into(), &n.as_str().into());
                        let _ = js_sys::Reflect::set(&message, &"closed".into(), &true.into());
                        let _ = channel.post_message(&message);
                        channel.close();
                    }
                    break;
                }
            }
        });
    }
    leptos::task::spawn_local(async move {
        let probe = ops::McpProbe { server, module_url: super::module_url(), sign_in: nonce, sign_out: !sign_in };
        let answer = c.call(probe).await;
        done.set(true);
        match answer {
            Ok(s) => {
                error.try_set(s.message.clone());
                shown(s);
            }
            Err(e) => {
                error.try_set(e.to_string());
            }
        }
    });
}

async fn sleep(ms: i32) {
    let wait = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(wait).await;
}
