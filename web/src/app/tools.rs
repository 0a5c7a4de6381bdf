//! Settings → Tools: the MCP servers whose tools the model is offered. Each server is kept in the
//! settings of the workspaces that use it (archived, exported and synced with them, never with its
//! token); a bearer token goes to the storage worker, which keeps it outside the archive. Each server
//! shows whether it answers (and why not), and lists its tools (each with its approval policy),
//! resources and prompts.
//!
//! The list is one piece of markup made here ([`render`], every server-given text escaped) with one
//! handler for its controls (`data-act`): the app's wasm is part of every cold start, and a list of
//! reactive views costs several times the bytes.

use super::Client;
use crate::chat::workspaces;
use crate::chat::{ChatState, DialogState};
use crate::markdown::escape_into;
use crate::protocol::{ops, McpState, McpStatus};
use cowork_core::mcp::{McpAuth, McpServer, ToolPolicy};
use leptos::prelude::*;
use std::fmt::Write;
use std::rc::Rc;
use wasm_bindgen::JsCast;

/// The `<meta name>` through which the page names the MCP module's URL (`scripts/mcp-bundle.sh`).
pub const META_NAME: &str = "cowork-mcp";

/// A server and the workspaces that use it.
type Used = (McpServer, Vec<String>);

/// A change of a workspace's server list.
type Edit = Rc<dyn Fn(&mut Vec<McpServer>)>;

/// The policies, as the selector lists them.
const POLICIES: [(ToolPolicy, &str); 3] = [
    (ToolPolicy::AskUnlessReadOnly, "Ask unless read-only"),
    (ToolPolicy::AlwaysAsk, "Always ask"),
    (ToolPolicy::NeverAsk, "Never ask"),
];

/// Settings → Tools.
#[component]
pub fn ToolsSection() -> impl IntoView {
    let (chat, dialogs) = (ChatState::get(), DialogState::get());
    let client = expect_context::<Client>();
    let servers = RwSignal::new(Vec::<Used>::new());
    let status = RwSignal::new(Vec::<McpStatus>::new());
    let error = RwSignal::new(String::new());
    let (name, url, token) = (RwSignal::new(String::new()), RwSignal::new(String::new()), RwSignal::new(String::new()));
    let chosen = RwSignal::new(chat.workspace.get_untracked());
    let names = move || {
        let mut all = workspaces(&chat.sessions.get());
        all.push(chat.workspace.get());
        all.sort();
        all.dedup();
        all
    };
    // What the workspaces keep, then what each server answers.
    let load = move || {
        let Some(c) = client.with_value(|c| c.clone()) else { return };
        let labels = names();
        leptos::task::spawn_local(async move {
            let mut found: Vec<Used> = Vec::new();
            for label in labels {
                let Ok(settings) = c.call(ops::WorkspaceSettings { workspace: label.clone() }).await else { continue };
                for s in settings.mcp_servers {
                    match found.iter_mut().find(|(f, _)| f.id == s.id) {
                        Some((_, used)) => used.push(label.clone()),
                        None => found.push((s, vec![label.clone()])),
                    }
                }
            }
            servers.try_set(found.clone());
            for (server, _) in found {
                if let Ok(s) = c.call(ops::McpProbe { server, module_url: module_url() }).await {
                    status.try_update(|all| {
                        all.retain(|o| o.server_id != s.server_id);
                        all.push(s);
                    });
                }
            }
        });
    };
    Effect::new(move |_| {
        if dialogs.settings_open.get() {
            load();
        }
    });
    // Changes the server list of the workspaces `labels` (each read, changed and saved), then reloads.
    let change = move |labels: Vec<String>, f: Edit| {
        let Some(c) = client.with_value(|c| c.clone()) else { return };
        leptos::task::spawn_local(async move {
            for label in labels {
                let Ok(mut settings) = c.call(ops::WorkspaceSettings { workspace: label }).await else { continue };
                f(&mut settings.mcp_servers);
                let saved = c.call(ops::SaveWorkspaceSettings { settings }).await;
                error.try_set(saved.map_or_else(|e| e.to_string(), |_| "Saved.".into()));
            }
            load();
        });
    };
    // The list's controls: Remove (a click), Offer its tools and a tool's policy (a change).
    let act = move |ev: web_sys::Event| {
        let Some(el) = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else { return };
        let attr = |n: &str| el.get_attribute(n).unwrap_or_default();
        let (id, what, tool) = (attr("data-id"), attr("data-act"), attr("data-tool"));
        let clicked = ev.type_() == "click";
        let value = js_sys::Reflect::get(&el, &"value".into()).ok().and_then(|v| v.as_string()).unwrap_or_default();
        let policy = value.parse::<usize>().ok().and_then(|i| POLICIES.get(i)).map(|(p, _)| *p);
        let edit: Rc<dyn Fn(&mut McpServer)> = match (what.as_str(), clicked, policy) {
            ("enable", false, _) => Rc::new(|s| s.enabled = !s.enabled),
            ("policy", false, Some(p)) => Rc::new(move |s| {
                s.tools.insert(tool.clone(), p);
            }),
            ("remove", true, _) => Rc::new(|_| {}),
            _ => return,
        };
        let used = servers.with_untracked(|all| all.iter().find(|(s, _)| s.id == id).map(|(_, w)| w.clone()));
        let remove = what == "remove";
        change(
            used.unwrap_or_default(),
            Rc::new(move |all| {
                all.iter_mut().filter(|s| s.id == id).for_each(|s| edit(s));
                all.retain(|s| !(remove && s.id == id));
            }),
        );
    };
    let add = move |_| {
        let (n, u, t) = (name.get_untracked(), url.get_untracked(), token.get_untracked());
        let (n, u, workspace) = (n.trim().to_owned(), u.trim().to_owned(), chosen.get_untracked());
        if n.is_empty() || !(u.starts_with("http://") || u.starts_with("https://")) {
            error.set("Give the server a name and its http:// or https:// URL.".into());
            return;
        }
        let id = format!("mcp-{}", js_sys::Date::now() as u64);
        let auth = if t.trim().is_empty() { McpAuth::None } else { McpAuth::Bearer };
        let policy = ToolPolicy::default();
        let server =
            McpServer { id: id.clone(), name: n, url: u, auth, enabled: true, policy, tools: Default::default() };
        error.set(String::new());
        let Some(c) = client.with_value(|c| c.clone()) else { return };
        leptos::task::spawn_local(async move {
            if !t.trim().is_empty() {
                if let Err(e) = c.call(ops::McpSetToken { server_id: id, token: t }).await {
                    error.try_set(e.to_string());
                    return;
                }
            }
            name.try_set(String::new());
            url.try_set(String::new());
            token.try_set(String::new());
            change(vec![workspace], Rc::new(move |all| all.push(server.clone())));
        });
    };
    let field = |label: &'static str, kind: &'static str, value: RwSignal<String>| {
        view! {
            <label class="field">
                <span>{label}</span>
                <input type=kind autocomplete="off" prop:value=move || value.get()
                    on:input=move |ev| value.set(event_target_value(&ev)) />
            </label>
        }
    };
    view! {
        <div class="mcp-servers" on:click=move |ev: web_sys::MouseEvent| act(ev.into()) on:change=act
            inner_html=move || servers.with(|all| status.with(|st| render(all, st)))></div>
        <h3>"Add an MCP server"</h3>
        {field("Name", "text", name)}
        {field("URL", "url", url)}
        {field("Bearer token (optional; kept in this browser only)", "password", token)}
        <label class="field">
            <span>"Workspace that uses it"</span>
            <select on:change=move |ev| chosen.set(event_target_value(&ev))>
                {move || names().into_iter().map(|w| {
                    let selected = w == chosen.get_untracked();
                    view! { <option value=w.clone() selected=selected>{w.clone()}</option> }
                }).collect_view()}
            </select>
        </label>
        <button class="primary" on:click=add>"Add server"</button>
        <p class="mcp-note" role="status">{move || error.get()}</p>
    }
}

/// The servers as markup: each its status, its switch, Remove, and what it lists (server-given text
/// escaped; the controls carry `data-act`, `data-id` and `data-tool` for the section's handler).
fn render(all: &[Used], status: &[McpStatus]) -> String {
    let mut out = String::new();
    let text = |out: &mut String, s: &str| escape_into(out, s);
    for (server, used) in all {
        let st = status.iter().find(|s| s.server_id == server.id).cloned().unwrap_or_default();
        let id = &server.id;
        out.push_str("<section class=\"mcp-server\" data-server=\"");
        text(&mut out, &server.name);
        out.push_str("\"><h3>");
        text(&mut out, &server.name);
        out.push_str("</h3><p class=\"hint\">");
        text(&mut out, &format!("{} · used by {}", server.url, used.join(", ")));
        let _ = write!(out, "</p><p class=\"mcp-status {}\" role=\"status\">", state_key(st.state));
        text(&mut out, if st.message.is_empty() { "Connecting…" } else { &st.message });
        let checked = if server.enabled { " checked" } else { "" };
        out.push_str("</p><label class=\"check\"><input type=\"checkbox\" data-act=\"enable\" data-id=\"");
        text(&mut out, id);
        let _ = write!(
            out,
            "\"{checked}> Offer its tools</label> <button class=\"secondary\" data-act=\"remove\" data-id=\""
        );
        text(&mut out, id);
        out.push_str("\">Remove</button><h4>Tools</h4><ul class=\"mcp-tools\">");
        for tool in &st.tools {
            out.push_str("<li><code>");
            text(&mut out, &tool.name);
            out.push_str("</code>");
            if tool.read_only {
                out.push_str(" (read-only)");
            }
            out.push_str(" <select aria-label=\"Approval of ");
            text(&mut out, &tool.name);
            out.push_str("\" data-act=\"policy\" data-id=\"");
            text(&mut out, id);
            out.push_str("\" data-tool=\"");
            text(&mut out, &tool.name);
            out.push_str("\">");
            let current = server.policy_of(&tool.name);
            for (i, (p, label)) in POLICIES.iter().enumerate() {
                let selected = if *p == current { " selected" } else { "" };
                let _ = write!(out, "<option value=\"{i}\"{selected}>{label}</option>");
            }
            out.push_str("</select><div class=\"hint\">");
            text(&mut out, &tool.description);
            out.push_str("</div></li>");
        }
        for (title, class, list) in [("Resources", "resources", &st.resources), ("Prompts", "prompts", &st.prompts)] {
            let _ = write!(out, "</ul><h4>{title}</h4><ul class=\"mcp-{class}\">");
            for r in list {
                out.push_str("<li><code>");
                text(&mut out, &r.name);
                out.push_str("</code></li>");
            }
        }
        out.push_str("</ul></section>");
    }
    out
}

/// A state's name in class names.
fn state_key(state: McpState) -> &'static str {
    match state {
        McpState::Unknown => "unknown",
        McpState::Connected => "connected",
        McpState::NeedsSignIn => "needs-sign-in",
        McpState::Unreachable => "unreachable",
        McpState::NoCors => "no-cors",
        McpState::Failed => "failed",
    }
}

/// The MCP module's absolute URL, as the page names it (empty when this build has none).
pub fn module_url() -> String {
    super::sync::meta_url(META_NAME)
}
