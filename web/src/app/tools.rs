//! Settings → Tools: the MCP servers whose tools the model is offered. The section is made by the MCP
//! bundle (`web/mcp/ui-tools.mjs`, `mountTools`), loaded into the page when the tab is shown: the
//! app's wasm, part of every cold start, gives it only an element and a bridge to the archive — the
//! workspaces' names, the current one, `load(workspace)` (the workspace's `mcp_servers` as JSON) and
//! `save(workspace, json)` (the workspace's settings read, their `mcp_servers` replaced, saved).

use super::Client;
use crate::chat::{workspaces, ChatState};
use leptos::prelude::*;

/// Settings → Tools: the element the MCP bundle fills.
#[component]
pub fn ToolsSection() -> impl IntoView {
    let el = NodeRef::<leptos::html::Div>::new();
    #[cfg(target_arch = "wasm32")]
    {
        let (chat, client) = (ChatState::get(), expect_context::<Client>());
        el.on_load(move |el| web::mount(el, chat, client));
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = (workspaces, ChatState::get, expect_context::<Client>);
    view! { <div class="mcp-section" node_ref=el></div> }
}

/// The MCP servers of `workspace` as JSON, and whether one of them is enabled; with `replace`, the
/// workspace's servers are replaced by those first (its settings read, changed and saved). The one
/// reader and writer of them for the MCP bundle, here and in the composer.
#[cfg(target_arch = "wasm32")]
pub async fn servers_of(
    c: super::Storage,
    workspace: String,
    replace: Option<String>,
) -> Result<(String, bool), String> {
    use crate::protocol::ops;
    let c = c.ok_or("the archive is not open")?;
    let mut settings = c.call(ops::WorkspaceSettings { workspace }).await.map_err(|e| e.to_string())?;
    if let Some(json) = replace {
        settings.mcp_servers = serde_json::from_str(&json).map_err(|e| e.to_string())?;
        settings = c.call(ops::SaveWorkspaceSettings { settings }).await.map_err(|e| e.to_string())?;
    }
    let used = cowork_core::mcp::any_enabled(&settings.mcp_servers);
    Ok((serde_json::to_string(&settings.mcp_servers).map_err(|e| e.to_string())?, used))
}

#[cfg(target_arch = "wasm32")]
mod web {
    use super::*;
    use js_sys::{Function, Reflect};
    use wasm_bindgen::prelude::*;

    pub fn mount(el: web_sys::HtmlDivElement, chat: ChatState, client: Client) {
        let names: js_sys::Array =
            workspaces(&chat.sessions.get_untracked()).iter().map(|w| JsValue::from_str(w)).collect();
        let bridge = js_sys::Object::new();
        let set = |k: &str, v: &JsValue| drop(Reflect::set(&bridge, &k.into(), v));
        set("workspaces", &names);
        set("current", &chat.workspace.get_untracked().into());
        // `servers(workspace, json or null, done)`: [`servers_of`], then `done(error, json)`.
        let servers = move |workspace: String, replace: Option<String>, done: Function| {
            let c = client.get_value();
            leptos::task::spawn_local(async move {
                let (error, value) = match servers_of(c, workspace, replace).await {
                    Ok((json, _)) => (JsValue::NULL, json.into()),
                    Err(e) => (e.into(), JsValue::UNDEFINED),
                };
                let _ = done.call2(&JsValue::NULL, &error, &value);
            });
        };
        set("servers", &Closure::<dyn Fn(String, Option<String>, Function)>::new(servers).into_js_value());
        leptos::task::spawn_local(async move {
            if let Err(e) = crate::mcp::call("mountTools", &[el.clone().into(), bridge.into()]).await {
                el.set_text_content(Some(&format!(
                    "The MCP servers cannot be shown: {e}. Reload the page to try again."
                )));
            }
        });
    }
}
