//! Sync across devices in the UI: Settings → Sync (the server, the credentials, the space, the
//! passphrase and this device's name, kept in this browser's local storage and never in the archive
//! or an export), the header's status, and starting sync in the worker whenever the app starts.

use super::Client;
use crate::chat::{ChatState, DialogState, SettingsSection};
use crate::protocol::{SyncSettings, SyncState, TeamSpace};
use leptos::prelude::*;

/// Local-storage key of the sync settings (absent: sync is off on this device).
pub const SYNC_KEY: &str = "cowork.sync";
/// The `<meta name>` through which the page names the sync module's URL (`scripts/sync-bundle.sh`).
pub const META_NAME: &str = "cowork-sync";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window().and_then(|w| w.local_storage().ok().flatten())
}

/// The saved settings, when sync is on here.
pub fn load() -> Option<SyncSettings> {
    storage().and_then(|s| s.get_item(SYNC_KEY).ok().flatten()).and_then(|t| serde_json::from_str(&t).ok())
}

fn save(settings: Option<&SyncSettings>) -> Result<(), String> {
    let storage = storage().ok_or("this browser does not let the page keep settings")?;
    match settings {
        Some(s) => {
            let json = serde_json::to_string(s).map_err(|e| e.to_string())?;
            storage.set_item(SYNC_KEY, &json).map_err(|_| "the sync settings could not be saved".to_owned())
        }
        None => storage.remove_item(SYNC_KEY).map_err(|_| "the sync settings could not be removed".to_owned()),
    }
}

/// The sync module's absolute URL, as the page names it (empty when this build has none).
fn module_url() -> String {
    meta_url(META_NAME)
}

/// The absolute URL a `<meta name>` of the page names (empty when the page has none).
pub fn meta_url(name: &str) -> String {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else { return String::new() };
    let named = document
        .query_selector(&format!("meta[name=\"{name}\"]"))
        .ok()
        .flatten()
        .and_then(|m| m.get_attribute("content"))
        .unwrap_or_default();
    let base = document.url().unwrap_or_default();
    web_sys::Url::new_with_base(&named, &base).map(|u| u.href()).unwrap_or(named)
}

/// Asks the worker to sync with `settings` (or to stop), and shows what it says.
pub fn start(client: Client, chat: ChatState, settings: Option<SyncSettings>) {
    #[cfg(target_arch = "wasm32")]
    if let Some(client) = client.get_value() {
        start_with(client, chat, settings);
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = (client, chat, settings, module_url);
}

/// [`start`] through this client.
#[cfg(target_arch = "wasm32")]
pub fn start_with(client: crate::client::StorageClient, chat: ChatState, settings: Option<SyncSettings>) {
    leptos::task::spawn_local(async move {
        match client.call(crate::protocol::ops::SyncStart { settings, module_url: module_url() }).await {
            Ok(state) => chat.sync.set(state),
            Err(e) => chat.sync.set(SyncState::Failed {
                kind: crate::protocol::SyncFailure::Archive(e.kind()),
                message: e.to_string(),
            }),
        }
    });
}

/// The header's sync status (nothing while sync is off); a click opens Settings → Sync.
#[component]
pub fn SyncStatus() -> impl IntoView {
    let (chat, dialogs) = (ChatState::get(), DialogState::get());
    let title = move || match chat.sync.get() {
        SyncState::Failed { message, .. }
        | SyncState::Offline { message, .. }
        | SyncState::Retrying { message, .. } => message,
        state @ SyncState::Synced { .. } => state.detail(),
        _ => "Sync across devices".into(),
    };
    let class = move || match chat.sync.get() {
        SyncState::Failed { .. } => "header-button sync-status failed",
        SyncState::Offline { .. } | SyncState::Retrying { .. } => "header-button sync-status offline",
        _ => "header-button sync-status",
    };
    view! {
        <Show when=move || chat.sync.get() != SyncState::Off>
            <button class=class title=title aria-live="polite" on:click=move |_| dialogs.open_settings(SettingsSection::Sync)>
                {move || chat.sync.get().label()}
                // A first sync's progress: how far this device has read its space.
                {move || chat.sync.get().progress().map(|(done, whole)| view! {
                    <progress class="sync-progress" max=whole.to_string() value=done.to_string()
                        aria-label="Sync progress"></progress>
                })}
            </button>
        </Show>
    }
}

/// Settings → Sync: turn sync on with a server and a passphrase, or off (a section of the Settings
/// dialog, read afresh each time it is shown).
#[component]
pub fn SyncSection(
    /// Starts (`Some`) or stops (`None`) sync with these settings, already saved.
    on_apply: Callback<Option<SyncSettings>>,
) -> impl IntoView {
    let (chat, dialogs) = (ChatState::get(), DialogState::get());
    let draft = RwSignal::new(SyncSettings::default());
    let error = RwSignal::new(None::<String>);
    // A recovery key instead of a passphrase: 160 random bits, shown once here to be written down.
    let recovery = RwSignal::new(None::<String>);
    // A NATS credentials file, read as text (it is kept with the other settings, in this browser only).
    let creds_name = RwSignal::new(None::<String>);
    // Team spaces: what is typed (an invite code or a new space's name) and the invite code shown.
    let team_input = RwSignal::new(String::new());
    let invite = RwSignal::new(None::<(String, String)>);
    draft.set(load().unwrap_or_else(|| SyncSettings { device_name: default_device_name(), ..SyncSettings::default() }));
    let close = move || dialogs.settings_open.set(false);
    let field = move |label: &'static str,
                      name: &'static str,
                      kind: &'static str,
                      hint: &'static str,
                      get: fn(&SyncSettings) -> String,
                      set: fn(&mut SyncSettings, String)| {
        view! {
            <label class="field">
                <span>{label}</span>
                <input type=kind name=name placeholder=hint autocomplete="off" prop:value=move || draft.with(get)
                    on:input=move |ev| { let v = event_target_value(&ev); draft.update(|d| set(d, v)) } />
            </label>
        }
    };
    let make_key = move |_| match random_bits() {
        Some(bits) => {
            let key = crate::protocol::recovery_key(bits);
            draft.update(|d| d.passphrase = key.clone());
            recovery.set(Some(key));
        }
        None => error.set(Some("This browser has no secure random numbers to make a key with.".into())),
    };
    let pick_creds = move |ev: web_sys::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        let Some(file) = input.files().and_then(|f| f.get(0)) else { return };
        let name = file.name();
        leptos::task::spawn_local(async move {
            match wasm_bindgen_futures::JsFuture::from(file.text()).await.ok().and_then(|t| t.as_string()) {
                Some(text) => {
                    draft.update(|d| d.creds = text);
                    creds_name.set(Some(name));
                }
                None => error.set(Some(format!("{name} could not be read."))),
            }
        });
    };
    let apply = move || {
        let settings = draft.get_untracked();
        if let Some(problem) = settings.problem() {
            error.set(Some(problem));
            return;
        }
        match save(Some(&settings)) {
            Ok(()) => {
                error.set(None);
                on_apply.run(Some(settings));
            }
            Err(e) => error.set(Some(e)),
        }
    };
    let turn_on = move |_| apply();
    // Team spaces: joined with an invite code, or created here with a new key (whose invite is shown).
    let add_team = move |team: TeamSpace| {
        draft.update(|d| {
            d.teams.retain(|t| t.name != team.name);
            d.teams.push(team);
        });
        team_input.set(String::new());
        apply();
    };
    let join = move |_| match TeamSpace::from_invite(&team_input.get_untracked()) {
        Ok(team) => add_team(team),
        Err(e) => error.set(Some(e)),
    };
    let create = move |_| {
        let name = team_input.get_untracked().trim().to_ascii_lowercase();
        if !cowork_core::valid_space_name(&name) {
            error.set(Some("Name the new team space with letters, digits, - and _ (as your server calls it).".into()));
            return;
        }
        let Some(bits) = random_bits() else { return };
        let team = TeamSpace { name, key: crate::protocol::recovery_key(bits) };
        invite.set(Some((team.name.clone(), team.invite_code())));
        add_team(team);
    };
    let teams = move || {
        draft.get().teams.into_iter().map(|team| {
            let (name, code) = (team.name.clone(), team.invite_code());
            let leave = team.name.clone();
            view! {
                <li>
                    <span class="team-name">{name.clone()}</span>
                    <button class="link show-invite" on:click=move |_| invite.set(Some((name.clone(), code.clone())))>"Invite code"</button>
                    <button class="link leave-team" on:click=move |_| {
                        // The key is in this browser only: without the invite code kept elsewhere,
                        // this device cannot join again.
                        let ask = format!("Leave team space {leave} on this device? Its key goes with it: keep the \
                            invite code to join again. Nothing already synced here is deleted.");
                        if web_sys::window().and_then(|w| w.confirm_with_message(&ask).ok()) == Some(true) {
                            draft.update(|d| d.teams.retain(|t| t.name != leave));
                            apply();
                        }
                    }>"Leave"</button>
                </li>
            }
        }).collect_view()
    };
    let turn_off = move |_| {
        let _ = save(None);
        on_apply.run(None);
    };
    let state_line = move || {
        let state = chat.sync.get();
        let text = match &state {
            SyncState::Off => "Sync is off: this archive lives in this browser only.".to_owned(),
            SyncState::Failed { message, .. } => message.clone(),
            SyncState::Offline { message, .. } | SyncState::Retrying { message, .. } => {
                format!("{} — {message}", state.label())
            }
            other => other.label(),
        };
        view! { <p class="sync-state" role="status" class:error=matches!(state, SyncState::Failed { .. })>{text}</p> }
    };
    view! {
                <section class="sync-dialog" aria-labelledby="sync-title">
                    <h3 id="sync-title">"Sync across devices"</h3>
                    <p class="hint">"Your archive goes to a NATS JetStream server (your own or a hosted one), \
                        encrypted here with a key from your sync passphrase: the server sees ids, sizes and times, \
                        never what you wrote. Use the same server, space and passphrase on each device."</p>
                    // Other devices' changes this device could not apply: kept aside, the rest applied.
                    {move || match chat.sync.get() {
                        SyncState::Synced { kept, .. } if !kept.is_empty() => Some(view! {
                            <ul class="sync-kept" role="status">
                                {kept.iter().map(|k| view! { <li>{k.sentence()}</li> }).collect_view()}
                            </ul>
                        }),
                        _ => None,
                    }}
                    {field("Server URL (a cluster's nodes: several, separated by commas)", "sync-server", "text", "wss://sync.example.com", |d| d.server_url.clone(), |d, v| d.server_url = v)}
                    {field("User", "sync-user", "text", "", |d| d.user.clone(), |d, v| d.user = v)}
                    {field("Password", "sync-password", "password", "", |d| d.password.clone(), |d, v| d.password = v)}
                    {field("Token (instead of user and password)", "sync-token", "password", "", |d| d.token.clone(), |d, v| d.token = v)}
                    <label class="field">
                        <span>"Credentials file (.creds, instead of the above)"</span>
                        <input type="file" name="sync-creds" accept=".creds,text/plain" on:change=pick_creds />
                    </label>
                    {move || {
                        let set = draft.with(|d| !d.creds.trim().is_empty());
                        set.then(|| view! {
                            <p class="hint creds-loaded">
                                {format!("Credentials: {}", creds_name.get().unwrap_or_else(|| "saved".into()))}
                                " "
                                <button class="link" on:click=move |_| { draft.update(|d| d.creds.clear()); creds_name.set(None) }>
                                    "Remove"
                                </button>
                            </p>
                        })
                    }}
                    {field("Space", "sync-space", "text", "your user name, or a team's space", |d| d.space.clone(), |d, v| d.space = v)}
                    {field("Sync passphrase", "sync-passphrase", "password", "at least 8 characters", |d| d.passphrase.clone(), |d, v| d.passphrase = v)}
                    <p class="hint">
                        "No passphrase yet? "
                        <button class="link make-recovery-key" on:click=make_key>"Make a recovery key"</button>
                        " and use it as the passphrase on every device."
                    </p>
                    {move || recovery.get().map(|key| view! {
                        <div class="recovery-key" role="status">
                            <p>"Your recovery key (write it down or keep it in a password manager: it is the only way                                 into this space from a new device, and it is shown only now):"</p>
                            <code>{key}</code>
                        </div>
                    })}
                    <h4>"Team spaces"</h4>
                    <p class="hint">"A workspace set to a team space (its settings, in the sidebar) is shared with \
                        everyone who joined it, and only it: your other workspaces stay yours."</p>
                    <ul class="team-spaces">{teams}</ul>
                    <label class="field">
                        <span>"Invite code, or a new team space's name"</span>
                        <input type="text" name="team-invite" autocomplete="off" prop:value=move || team_input.get()
                            on:input=move |ev| team_input.set(event_target_value(&ev)) />
                    </label>
                    <p class="dialog-actions">
                        <button class="join-team" on:click=join>"Join"</button>
                        <button class="create-team" on:click=create>"Create"</button>
                    </p>
                    {move || invite.get().map(|(name, code)| view! {
                        <div class="invite-code" role="status">
                            <p>{format!("Invite code for {name}: it carries the space's key, so pass it only to the team.")}</p>
                            <code>{code}</code>
                        </div>
                    })}
                    {field("This device's name", "sync-device", "text", "Laptop", |d| d.device_name.clone(), |d, v| d.device_name = v)}
                    // Where sync stands, beside the buttons that change it: the dialog is longer than
                    // a laptop's screen, and the status follows "Sync this archive" into view.
                    <div class="sync-footer">
                        {state_line}
                        {move || error.get().map(|e| view! { <p class="field-error" role="alert">{e}</p> })}
                        <div class="dialog-actions">
                            <Show when=move || load().is_some()>
                                <button class="turn-off-sync" on:click=turn_off>"Turn sync off"</button>
                            </Show>
                            <button on:click=move |_| close()>"Close"</button>
                            <button class="primary turn-on-sync" on:click=turn_on>"Sync this archive"</button>
                        </div>
                    </div>
                </section>
    }
}

/// 160 bits from the browser's secure random numbers.
fn random_bits() -> Option<[u8; 20]> {
    let mut bits = [0u8; 20];
    let crypto = web_sys::window()?.crypto().ok()?;
    crypto.get_random_values_with_u8_array(&mut bits).ok()?;
    Some(bits)
}

/// A first guess at this device's name (the user can change it).
fn default_device_name() -> String {
    let agent = web_sys::window().and_then(|w| w.navigator().user_agent().ok()).unwrap_or_default();
    let os = ["Android", "iPhone", "iPad", "Mac", "Windows", "Linux"].into_iter().find(|os| agent.contains(os));
    match os {
        Some(os) => format!("{os} browser"),
        None => "This browser".to_owned(),
    }
}
