//! Settings → Tools: the MCP servers whose tools the model is offered. Each server is kept in the
//! settings of the workspaces that use it (archived, exported and synced with them, never with its
//! token); a bearer token goes to the storage worker, which keeps it outside the archive. Each server
//! shows whether it answers (and why not), and lists its tools (each with its approval policy),
//! resources and prompts.

use super::Client;
use crate::chat::workspaces;
use crate::chat::{ChatState, DialogState};
use crate::protocol::{ops, McpState, McpStatus};
use cowork_core::mcp::{McpAuth, McpServer, ToolPolicy};
use leptos::prelude::*;
use std::rc::Rc;

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
    let chosen = RwSignal::new(vec![chat.workspace.get_untracked()]);
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
                let answered = c.call(ops::McpProbe { server, module_url: module_url() }).await;
                if let Ok(s) = answered {
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
    // Changes the server list of `labels` (each workspace's settings read, changed and saved).
    let change = move |labels: Vec<String>, f: Edit| {
        let Some(c) = client.with_value(|c| c.clone()) else { return };
        leptos::task::spawn_local(async move {
            for label in labels {
                let Ok(mut settings) = c.call(ops::WorkspaceSettings { workspace: label }).await else { continue };
                f(&mut settings.mcp_servers);
                if let Err(e) = c.call(ops::SaveWorkspaceSettings { settings }).await {
                    error.try_set(e.to_string());
                }
            }
            load();
        });
    };
    let add = move |_| {
        let (n, u, t) = (name.get_untracked(), url.get_untracked(), token.get_untracked());
        let (n, u) = (n.trim().to_owned(), u.trim().to_owned());
        if n.is_empty() || !(u.starts_with("http://") || u.starts_with("https://")) {
            error.set("Give the server a name and its http:// or https:// URL.".into());
            return;
        }
        if chosen.with_untracked(Vec::is_empty) {
            error.set("Choose at least one workspace that uses it.".into());
            return;
        }
        let id = format!("mcp-{}", js_sys::Date::now() as u64);
        let auth = if t.trim().is_empty() { McpAuth::None } else { McpAuth::Bearer };
        let server = McpServer {
            id: id.clone(),
            name: n,
            url: u,
            auth,
            enabled: true,
            policy: ToolPolicy::default(),
            tools: Default::default(),
        };
        error.set(String::new());
        let Some(c) = client.with_value(|c| c.clone()) else { return };
        leptos::task::spawn_local(async move {
            if !t.trim().is_empty() {
                if let Err(e) = c.call(ops::McpSetToken { server_id: id.clone(), token: t }).await {
                    error.try_set(e.to_string());
                    return;
                }
            }
            name.try_set(String::new());
            url.try_set(String::new());
            token.try_set(String::new());
            change(chosen.get_untracked(), Rc::new(move |all: &mut Vec<McpServer>| all.push(server.clone())));
        });
    };
    let rows = move || {
        servers
            .get()
            .into_iter()
            .map(|(server, used)| {
                let id = server.id.clone();
                let shown =
                    move || status.with(|all| all.iter().find(|s| s.server_id == id).cloned()).unwrap_or_default();
                let state_class = {
                    let shown = shown.clone();
                    move || format!("mcp-status {}", state_key(shown().state))
                };
                // An edit of this server wherever it is used.
                let edit = {
                    let (id, used) = (server.id.clone(), used.clone());
                    move |f: Rc<dyn Fn(&mut McpServer)>| {
                        let id = id.clone();
                        change(
                            used.clone(),
                            Rc::new(move |all: &mut Vec<McpServer>| {
                                all.iter_mut().filter(|s| s.id == id).for_each(|s| f(s))
                            }),
                        )
                    }
                };
                let (edit_enable, edit_policy) = (edit.clone(), edit);
                let remove = {
                    let (id, used) = (server.id.clone(), used.clone());
                    move |_| {
                        let id = id.clone();
                        change(used.clone(), Rc::new(move |all: &mut Vec<McpServer>| all.retain(|s| s.id != id)))
                    }
                };
                let enabled = server.enabled;
                let policies = server.clone();
                let tools = {
                    let shown = shown.clone();
                    move || {
                        shown()
                            .tools
                            .into_iter()
                            .map(|tool| {
                                let current = policies.policy_of(&tool.name);
                                let (edit, tool_name) = (edit_policy.clone(), tool.name.clone());
                                let set = move |ev: leptos::ev::Event| {
                                    let Some((policy, _)) =
                                        event_target_value(&ev).parse::<usize>().ok().and_then(|i| POLICIES.get(i))
                                    else {
                                        return;
                                    };
                                    let (policy, tool) = (*policy, tool_name.clone());
                                    edit(Rc::new(move |s: &mut McpServer| {
                                        s.tools.insert(tool.clone(), policy);
                                    }));
                                };
                                view! {
                                    <li>
                                        <code>{tool.name.clone()}</code>
                                        {tool.read_only.then_some(" (read-only)")}
                                        " "
                                        <select aria-label=format!("Approval of {}", tool.name) on:change=set>
                                            {POLICIES.iter().enumerate().map(|(i, (p, label))| view! {
                                                <option value=i.to_string() selected=*p == current>{*label}</option>
                                            }).collect_view()}
                                        </select>
                                        <div class="hint">{tool.description}</div>
                                    </li>
                                }
                            })
                            .collect_view()
                    }
                };
                let message = {
                    let shown = shown.clone();
                    move || Some(shown().message).filter(|m| !m.is_empty()).unwrap_or_else(|| "Connecting…".to_owned())
                };
                let listed = move |pick: fn(&McpStatus) -> &Vec<crate::protocol::McpListed>| {
                    let shown = shown.clone();
                    move || {
                        pick(&shown()).iter().map(|r| view! { <li><code>{r.name.clone()}</code></li> }).collect_view()
                    }
                };
                view! {
                    <section class="mcp-server" data-server=server.name.clone()>
                        <h3>{server.name.clone()}</h3>
                        <p class="hint">{server.url.clone()}" · used by "{used.join(", ")}</p>
                        <p class=state_class role="status">{message}</p>
                        <label class="check">
                            <input type="checkbox" prop:checked=enabled
                                on:change=move |_| edit_enable(Rc::new(|s: &mut McpServer| s.enabled = !s.enabled)) />
                            " Offer its tools"
                        </label>
                        <button class="secondary" on:click=remove>
                            "Remove"
                        </button>
                        <h4>"Tools"</h4>
                        <ul class="mcp-tools">{tools}</ul>
                        <h4>"Resources"</h4>
                        <ul class="mcp-resources">{listed(|s| &s.resources)}</ul>
                        <h4>"Prompts"</h4>
                        <ul class="mcp-prompts">{listed(|s| &s.prompts)}</ul>
                    </section>
                }
            })
            .collect_view()
    };
    let field = |label: &'static str, kind: &'static str, value: RwSignal<String>| {
        view! {
            <label class="field">
                <span>{label}</span>
                <input type=kind autocomplete="off" prop:value=move || value.get() on:input=move |ev| value.set(event_target_value(&ev)) />
            </label>
        }
    };
    view! {
        <div class="mcp-servers">{rows}</div>
        <h3>"Add an MCP server"</h3>
        {field("Name", "text", name)}
        {field("URL", "url", url)}
        {field("Bearer token (optional; kept in this browser only)", "password", token)}
        <fieldset class="mcp-workspaces">
            <legend>"Workspaces that use it"</legend>
            {move || names().into_iter().map(|w| {
                let (w1, w2) = (w.clone(), w.clone());
                view! {
                    <label class="check">
                        <input type="checkbox" prop:checked=move || chosen.with(|c| c.contains(&w1))
                            on:change=move |_| chosen.update(|c| if c.contains(&w2) { c.retain(|x| x != &w2) } else { c.push(w2.clone()) }) />
                        " "{w.clone()}
                    </label>
                }
            }).collect_view()}
        </fieldset>
        <button class="primary" on:click=add>"Add server"</button>
        <p class="field-error" role="alert">{move || error.get()}</p>
    }
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
