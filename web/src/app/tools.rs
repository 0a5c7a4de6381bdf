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

mod oauth;

/// The `<meta name>` through which the page names the MCP module's URL (`scripts/mcp-bundle.sh`).
pub const META_NAME: &str = "cowork-mcp";

/// A server and the workspaces that use it.
type Used = (McpServer, Vec<String>);

/// The servers and what each answered.
type Shown = (Vec<Used>, Vec<McpStatus>);

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
    // The servers (with the workspaces that use them) and what each answered; shown as `html`.
    let data = StoredValue::new(Shown::default());
    let html = RwSignal::new(String::new());
    let show = move |f: &dyn Fn(&mut Shown)| {
        data.try_update_value(|d| {
            f(d);
            html.try_set(render(&d.0, &d.1));
        });
    };
    let error = RwSignal::new(String::new());
    let names_now = move || {
        let mut all = workspaces(&chat.sessions.get_untracked());
        all.push(chat.workspace.get_untracked());
        all.sort();
        all.dedup();
        all
    };
    // What the workspaces keep, then what each server answers.
    let load = move || {
        let Some(c) = client.with_value(|c| c.clone()) else { return };
        let labels = names_now();
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
            show(&|d| d.0.clone_from(&found));
            for (server, _) in found {
                let probe = ops::McpProbe { server, module_url: module_url(), sign_in: None, sign_out: false };
                if let Ok(s) = c.call(probe).await {
                    show(&|d| {
                        d.1.retain(|o| o.server_id != s.server_id);
                        d.1.push(s.clone());
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
    // Add server: the token to the worker first, then the server into the workspace's settings.
    let add = move |n: String, u: String, t: String, oauth: bool, workspace: String| {
        if n.is_empty() || !(u.starts_with("http://") || u.starts_with("https://")) {
            error.set("Give the server a name and its http:// or https:// URL.".into());
            return;
        }
        let id = format!("mcp-{}", js_sys::Date::now() as u64);
        let t = if oauth { String::new() } else { t };
        let auth = match (oauth, t.is_empty()) {
            (true, _) => McpAuth::Oauth,
            (false, true) => McpAuth::None,
            (false, false) => McpAuth::Bearer,
        };
        let policy = ToolPolicy::default();
        let server = McpServer { id: id.clone(), name: n, url: u, auth, enabled: true, policy, tools: Vec::new() };
        let Some(c) = client.with_value(|c| c.clone()) else { return };
        leptos::task::spawn_local(async move {
            if !t.is_empty() {
                if let Err(e) = c.call(ops::McpSetToken { server_id: id, token: t }).await {
                    error.try_set(e.to_string());
                    return;
                }
            }
            change(vec![workspace], Rc::new(move |all| all.push(server.clone())));
        });
    };
    // Every control of the section: Remove and Add server (a click), Offer its tools and a tool's policy
    // (a change). The form's fields are read when Add server is pressed.
    let act = move |ev: web_sys::Event| {
        let Some(el) = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else { return };
        let attr = |n: &str| el.get_attribute(n).unwrap_or_default();
        let (id, what, tool) = (attr("data-id"), attr("data-act"), attr("data-tool"));
        let clicked = ev.type_() == "click";
        let value = |el: &web_sys::Element| {
            js_sys::Reflect::get(el, &"value".into()).ok().and_then(|v| v.as_string()).unwrap_or_default()
        };
        if what == "add" && clicked {
            let field = |n: &str| {
                let form = el.closest(".mcp-add").ok().flatten();
                let input = form.and_then(|f| f.query_selector(&format!("[name=mcp-{n}]")).ok().flatten());
                input.map(|i| value(&i).trim().to_owned()).unwrap_or_default()
            };
            return add(field("name"), field("url"), field("token"), field("auth") == "oauth", field("workspace"));
        }
        if clicked && (what == "sign-in" || what == "sign-out") {
            let server = data.with_value(|d| d.0.iter().find(|(s, _)| s.id == id).map(|(s, _)| s.clone()));
            let (Some(server), Some(c)) = (server, client.with_value(|c| c.clone())) else { return };
            return oauth::sign(c, server, what == "sign-in", error, move |s| {
                show(&|d| {
                    d.1.retain(|o| o.server_id != s.server_id);
                    d.1.push(s.clone());
                })
            });
        }
        let policy = value(&el).parse::<usize>().ok().and_then(|i| POLICIES.get(i)).map(|(p, _)| *p);
        let edit: Rc<dyn Fn(&mut McpServer)> = match (what.as_str(), clicked, policy) {
            ("enable", false, _) => Rc::new(|s| s.enabled = !s.enabled),
            ("policy", false, Some(p)) => Rc::new(move |s| s.set_policy(&tool, p)),
            ("remove", true, _) => Rc::new(|_| {}),
            _ => return,
        };
        let used = data.with_value(|d| d.0.iter().find(|(s, _)| s.id == id).map(|(_, w)| w.clone()));
        let remove = what == "remove";
        change(
            used.unwrap_or_default(),
            Rc::new(move |all| {
                all.iter_mut().filter(|s| s.id == id).for_each(|s| edit(s));
                all.retain(|s| !(remove && s.id == id));
            }),
        );
    };
    // The form, made once (its fields keep what is typed while the list above changes).
    let mut form = String::from("<div class=\"mcp-add\"><h3>Add an MCP server</h3>");
    for (label, name, kind) in [
        ("Name", "name", "text"),
        ("URL", "url", "url"),
        ("Bearer token (optional; kept in this browser only)", "token", "password"),
    ] {
        let _ = write!(
            form,
            "<label class=\"field\"><span>{label}</span><input name=\"mcp-{name}\" type=\"{kind}\" autocomplete=\"off\"></label>"
        );
    }
    form.push_str(concat!(
        "<label class=\"field\"><span>Sign-in</span><select name=\"mcp-auth\">",
        "<option value=\"\">None, or the bearer token above</option>",
        "<option value=\"oauth\">OAuth (Sign in on each device)</option></select></label>"
    ));
    form.push_str("<label class=\"field\"><span>Workspace that uses it</span><select name=\"mcp-workspace\">");
    let current = chat.workspace.get_untracked();
    for w in names_now() {
        form.push_str(if w == current { "<option selected>" } else { "<option>" });
        escape_into(&mut form, &w);
        form.push_str("</option>");
    }
    form.push_str("</select></label><button class=\"secondary\" data-act=\"add\">Add server</button></div>");
    view! {
        <div on:click=move |ev: web_sys::MouseEvent| act(ev.into()) on:change=act>
            <div class="mcp-servers" inner_html=move || html.get()></div>
            <div inner_html=form></div>
            <p class="mcp-note" role="status">{move || error.get()}</p>
        </div>
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
        out.push_str("\">Remove</button>");
        oauth::buttons(&mut out, server, st.state);
        out.push_str("<h4>Tools</h4><ul class=\"mcp-tools\">");
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

#[cfg(test)]
mod tests;
