//! The composer's menus of the workspace's MCP servers. `/` at the start of the message box lists
//! their prompts (filtered by what follows it; ↑/↓ move, Enter chooses, Esc closes; a listbox whose
//! active option the box names); a prompt with arguments asks for them in a small form, and its user
//! messages' text replaces the `/…` in the box (the assistant's messages and content that is not text
//! are left out, and the status line says so). The Resource button lists their resources; the one
//! chosen is read by the storage worker and attached like a file, named by the resource, so sending
//! keeps it in the archive like any attachment.

use super::state::{ChatState, DialogState};
use crate::protocol::{ops, McpCatalog, McpOffer};
use cowork_core::mcp::McpServer;
use leptos::prelude::*;

/// Which menu is open.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Menu {
    Prompts,
    Resources,
}

/// The menus' state.
#[derive(Clone, Copy)]
pub struct McpMenus {
    open: RwSignal<Option<Menu>>,
    /// What the servers offer (`None` while they are asked).
    catalog: RwSignal<Option<McpCatalog>>,
    servers: StoredValue<Vec<McpServer>>,
    /// Whether the workspace has an enabled server (the Resource button shows only then).
    pub has_servers: RwSignal<bool>,
    filter: RwSignal<String>,
    selected: RwSignal<usize>,
    /// The prompt whose arguments the form asks for, and their values.
    form: RwSignal<Option<McpOffer>>,
    values: StoredValue<Vec<String>>,
    status: RwSignal<String>,
    on_files: Callback<Vec<web_sys::File>>,
    // Taken from the context once: the tasks and handlers below run outside its owner.
    client: Option<crate::app::Client>,
    draft: RwSignal<String>,
    workspace: RwSignal<String>,
}

impl McpMenus {
    /// The menus of the composer that attaches files through `on_files`.
    pub fn new(on_files: Callback<Vec<web_sys::File>>) -> McpMenus {
        let chat = ChatState::get();
        let settings_open = use_context::<DialogState>().map(|d| d.settings_open);
        let menus = McpMenus {
            open: RwSignal::new(None),
            catalog: RwSignal::new(None),
            servers: StoredValue::new(Vec::new()),
            has_servers: RwSignal::new(false),
            filter: RwSignal::new(String::new()),
            selected: RwSignal::new(0),
            form: RwSignal::new(None),
            values: StoredValue::new(Vec::new()),
            status: RwSignal::new(String::new()),
            on_files,
            client: use_context::<crate::app::Client>(),
            draft: chat.draft,
            workspace: chat.workspace,
        };
        // Whether the workspace uses a server: asked again when Settings closes (a server added there).
        Effect::new(move |_| {
            let workspace = chat.workspace.get();
            if !settings_open.is_some_and(|s| s.get()) {
                leptos::task::spawn_local(async move {
                    let found = menus.load_servers(workspace).await;
                    menus.has_servers.try_set(!found.is_empty());
                });
            }
        });
        menus
    }

    async fn load_servers(self, workspace: String) -> Vec<McpServer> {
        let Some(c) = self.client() else { return Vec::new() };
        let servers: Vec<McpServer> = match c.call(ops::WorkspaceSettings { workspace }).await {
            Ok(s) => s.mcp_servers.into_iter().filter(|s| s.enabled).collect(),
            Err(_) => Vec::new(),
        };
        self.servers.try_update_value(|s| s.clone_from(&servers));
        servers
    }

    fn show(self, menu: Menu) {
        self.open.set(Some(menu));
        self.selected.set(0);
        self.catalog.set(None);
        self.status.set(String::new());
        let workspace = self.workspace.get_untracked();
        leptos::task::spawn_local(async move {
            let servers = self.load_servers(workspace).await;
            let catalog = match self.client() {
                Some(c) if !servers.is_empty() => {
                    let ask = ops::McpCatalogOf { servers, module_url: crate::app::tools::module_url() };
                    c.call(ask)
                        .await
                        .unwrap_or_else(|e| McpCatalog { problems: vec![e.to_string()], ..Default::default() })
                }
                _ => McpCatalog {
                    problems: vec!["This workspace uses no MCP server: add one in Settings → Tools.".into()],
                    ..Default::default()
                },
            };
            self.catalog.try_set(Some(catalog));
        });
    }

    fn close(self) {
        self.open.set(None);
    }

    /// The message box's text changed: `/` and a word at its start open (and filter) the prompts.
    pub fn typed(self, text: &str) {
        let command = text.strip_prefix('/').filter(|rest| !rest.contains(char::is_whitespace));
        match command {
            Some(filter) => {
                self.filter.set(filter.to_lowercase());
                self.selected.set(0);
                if self.open.get_untracked() != Some(Menu::Prompts) {
                    self.show(Menu::Prompts);
                }
            }
            None if self.open.get_untracked() == Some(Menu::Prompts) => self.close(),
            None => {}
        }
    }

    /// Opens the resources' menu (the Resource button).
    pub fn resources(self) {
        self.show(Menu::Resources);
    }

    /// The open menu's options.
    fn items(self) -> Vec<McpOffer> {
        let (menu, filter) = (self.open.get(), self.filter.get());
        self.catalog.with(|c| {
            let Some(c) = c else { return Vec::new() };
            match menu {
                Some(Menu::Prompts) => {
                    let hit = |p: &&McpOffer| {
                        p.id.to_lowercase().contains(&filter) || p.name.to_lowercase().contains(&filter)
                    };
                    c.prompts.iter().filter(hit).cloned().collect()
                }
                Some(Menu::Resources) => c.resources.clone(),
                None => Vec::new(),
            }
        })
    }

    /// A key pressed in the message box or the menu: ↑/↓, Enter and Esc act on the open menu
    /// (`true`: taken).
    pub fn key(self, ev: &web_sys::KeyboardEvent) -> bool {
        if self.open.get_untracked().is_none() {
            return false;
        }
        let items = untrack(|| self.items());
        let count = items.len();
        match ev.key().as_str() {
            "ArrowDown" if count > 0 => self.selected.update(|s| *s = (*s + 1) % count),
            "ArrowUp" if count > 0 => self.selected.update(|s| *s = (*s + count - 1) % count),
            // While the servers are asked, Enter waits for the menu rather than sending "/…".
            "Enter" if self.catalog.with_untracked(Option::is_none) => {}
            "Enter" => {
                if let Some(item) = items.get(self.selected.get_untracked()).cloned() {
                    self.choose(item);
                } else {
                    self.close();
                    return false;
                }
            }
            "Escape" => {
                self.close();
                focus_box();
            }
            _ => return false,
        }
        ev.prevent_default();
        ev.stop_propagation();
        true
    }

    fn choose(self, item: McpOffer) {
        let menu = self.open.get_untracked();
        self.close();
        match menu {
            Some(Menu::Resources) => self.read(item),
            _ if item.arguments.is_empty() => self.prompt(item, Vec::new()),
            _ => {
                self.values.set_value(vec![String::new(); item.arguments.len()]);
                self.form.set(Some(item));
            }
        }
    }

    fn client(self) -> Option<crate::client::StorageClient> {
        self.client.and_then(|c| c.try_with_value(|c| c.clone()).flatten())
    }

    fn server(self, item: &McpOffer) -> Option<McpServer> {
        self.servers.with_value(|s| s.iter().find(|s| s.id == item.server_id).cloned())
    }

    /// Reads the resource and attaches it, named by the resource.
    fn read(self, item: McpOffer) {
        let (Some(c), Some(server)) = (self.client(), self.server(&item)) else { return };
        self.status.set(format!("Reading {} from {}…", item.name, item.server));
        let on_files = self.on_files;
        focus_box();
        leptos::task::spawn_local(async move {
            let name = if item.name.is_empty() { item.id.clone() } else { item.name.clone() };
            let ask = ops::McpReadResource {
                server,
                uri: item.id.clone(),
                name,
                module_url: crate::app::tools::module_url(),
            };
            let read = c.call(ask).await.map_err(|e| e.to_string()).and_then(|d| {
                let (name, mime) = d.attachment.map(|a| (a.name, a.mime)).unwrap_or_default();
                let bytes = cowork_core::attachment::from_base64(&d.data)?;
                file(&name, &mime, &bytes).ok_or_else(|| "the browser could not make the file".into())
            });
            match read {
                Ok(f) => {
                    self.status.try_set(String::new());
                    on_files.run(vec![f]);
                }
                Err(e) => drop(self.status.try_set(format!("{} could not be attached: {e}", item.name))),
            }
        });
    }

    /// Gets the prompt with `arguments` and puts its text in the message box.
    fn prompt(self, item: McpOffer, arguments: Vec<(String, String)>) {
        let (Some(c), Some(server)) = (self.client(), self.server(&item)) else { return };
        self.status.set(format!("Getting the prompt {} from {}…", item.name, item.server));
        leptos::task::spawn_local(async move {
            let ask = ops::McpGetPrompt {
                server,
                name: item.id.clone(),
                arguments,
                module_url: crate::app::tools::module_url(),
            };
            match c.call(ask).await {
                Ok(p) => {
                    self.draft.try_set(p.text);
                    self.status.try_set(match p.left_out {
                        0 => String::new(),
                        n => format!(
                            "{n} part(s) of the prompt were left out: only the text of its user messages is inserted."
                        ),
                    });
                    focus_box();
                }
                Err(e) => drop(self.status.try_set(format!("The prompt {} could not be got: {e}", item.name))),
            }
        });
    }
}

fn focus_box() {
    let el = web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id("composer-input"));
    if let Some(el) = el.and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(e).ok()) {
        let _ = el.focus();
    }
}

/// A file of `bytes` named `name`, of type `mime`.
fn file(name: &str, mime: &str, bytes: &[u8]) -> Option<web_sys::File> {
    let options = web_sys::FilePropertyBag::new();
    options.set_type(mime);
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    web_sys::File::new_with_u8_array_sequence_and_options(&parts, name, &options).ok()
}

/// The id of the open menu's option `i` (the message box's `aria-activedescendant`).
pub fn active_option(menus: McpMenus) -> Option<String> {
    menus.open.get().map(|_| format!("mcp-option-{}", menus.selected.get()))
}

/// The open menu, the prompt's argument form and the status line.
#[component]
pub fn McpMenuView(menus: McpMenus) -> impl IntoView {
    let list = NodeRef::<leptos::html::Ul>::new();
    // The resources' menu takes the focus (the prompts' stays with the message box).
    Effect::new(move |_| {
        if menus.open.get() == Some(Menu::Resources) && menus.catalog.with(Option::is_some) {
            if let Some(l) = list.get_untracked() {
                let _ = l.focus();
            }
        }
    });
    let menu = move || {
        let kind = menus.open.get()?;
        let label = match kind {
            Menu::Prompts => "Prompts from MCP servers",
            Menu::Resources => "Resources from MCP servers",
        };
        let options = menus
            .items()
            .into_iter()
            .enumerate()
            .map(|(i, item)| {
                let chosen = item.clone();
                let about = if item.description.is_empty() {
                    item.server.clone()
                } else {
                    format!("{} — {}", item.server, item.description)
                };
                view! {
                    <li role="option" id=format!("mcp-option-{i}") class="mcp-option"
                        aria-selected=move || (menus.selected.get() == i).to_string()
                        on:mousedown=|ev| ev.prevent_default()
                        on:click=move |_| menus.choose(chosen.clone())>
                        <span class="mcp-option-name">{item.name.clone()}</span>
                        <span class="mcp-option-about">{about}</span>
                    </li>
                }
            })
            .collect_view();
        let note = menus.catalog.with(|c| match c {
            None => "Asking the servers…".to_owned(),
            Some(c) => c.problems.join(" "),
        });
        Some(view! {
            <div class="mcp-menu">
                <ul role="listbox" id="mcp-menu" aria-label=label tabindex="-1" node_ref=list
                    on:keydown=move |ev| { menus.key(&ev); }
                    on:focusout=move |_| if menus.open.get_untracked() == Some(Menu::Resources) { menus.close() }>{options}</ul>
                <p class="mcp-menu-note">{note}</p>
            </div>
        })
    };
    let form = move || {
        let item = menus.form.get()?;
        let fields = item
            .arguments
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let label = if a.required { format!("{} (required)", a.name) } else { a.name.clone() };
                view! {
                    <label class="mcp-argument">{label}
                        <input type="text" required=a.required title=a.description.clone()
                            on:input=move |ev| menus.values.update_value(|v| v[i] = event_target_value(&ev)) />
                    </label>
                }
            })
            .collect_view();
        let chosen = item.clone();
        let submit = move |ev: leptos::ev::SubmitEvent| {
            ev.prevent_default();
            let values = menus.values.get_value();
            let args = chosen
                .arguments
                .iter()
                .zip(values)
                .filter(|(_, v)| !v.is_empty())
                .map(|(a, v)| (a.name.clone(), v))
                .collect();
            menus.form.set(None);
            menus.prompt(chosen.clone(), args);
        };
        Some(view! {
            <form class="mcp-prompt-form" aria-label=format!("Arguments of the prompt {}", item.name) on:submit=submit
                on:keydown=move |ev| if ev.key() == "Escape" { menus.form.set(None); focus_box(); }>
                {fields}
                <button type="submit">"Insert"</button>
                <button type="button" on:click=move |_| { menus.form.set(None); focus_box(); }>"Cancel"</button>
            </form>
        })
    };
    view! {
        {menu}
        {form}
        <Show when=move || menus.status.with(|s| !s.is_empty())>
            <p class="composer-mcp-status" role="status">{move || menus.status.get()}</p>
        </Show>
    }
}
