//! Settings → Workspaces: where the workspace's project lives on the orchestrator's machine
//! (sent with every delegated task) and whether the orchestrator asks before each step. Opened from a
//! workspace's heading in the sidebar, from Settings, and from a delegation refused for want of it.

use super::format::workspaces;
use super::state::{ChatState, DialogState};
use cowork_core::{SyncScope, WorkspaceSettings};
use leptos::prelude::*;

/// Opens a workspace's settings dialog (by label), for components that offer it (a delegation refused
/// for want of a directory); provided as Leptos context by the app.
#[derive(Clone, Copy)]
pub struct OpenWorkspace(pub Callback<String>);

/// Settings → Workspaces: pick a workspace (or create one, by name) and edit its settings, loaded into
/// [`DialogState::workspace`] from the archive.
#[component]
pub fn WorkspaceSection(
    /// The open session's workspace (or new sessions'): shown first.
    current: Signal<String>,
    /// Loads a workspace's settings (by label).
    on_load: Callback<String>,
    /// Saves the edited settings (the form closes once they are archived).
    on_save: Callback<WorkspaceSettings>,
) -> impl IntoView {
    let (state, dialogs) = (ChatState::get(), DialogState::get());
    let draft = RwSignal::new(WorkspaceSettings::default());
    // What was saved last, said once the form has closed.
    let saved = RwSignal::new(None::<String>);
    let new_name = RwSignal::new(String::new());
    if dialogs.workspace.with_untracked(Option::is_none) {
        on_load.run(current.get_untracked());
    }
    Effect::new(move |_| {
        if let Some(loaded) = dialogs.workspace.get() {
            draft.set(loaded);
        }
    });
    let names = move || {
        let mut all = workspaces(&state.sessions.get());
        all.extend([current.get(), state.workspace.get(), draft.with(|d| d.workspace.clone())]);
        all.retain(|w| !w.is_empty());
        all.sort();
        all.dedup();
        all
    };
    let save = move |_| {
        let d = draft.get_untracked();
        saved.set(Some(d.workspace.clone()));
        on_save.run(d);
    };
    // An explicit "New workspace": saved at once (so it is listed), and where new sessions go.
    let create = move |_| {
        let name = new_name.get_untracked().trim().to_owned();
        if name.is_empty() {
            dialogs.workspace_error.set(Some("Type the new workspace's name first.".to_owned()));
            return;
        }
        new_name.set(String::new());
        state.workspace.set(name.clone());
        saved.set(Some(name.clone()));
        on_save.run(WorkspaceSettings { workspace: name, ..WorkspaceSettings::default() });
    };
    view! {
        <div class="workspace-settings">
            <div class="profile-bar">
                <label class="field">
                    <span>"Workspace"</span>
                    <select class="workspace-choice" prop:value=move || draft.with(|d| d.workspace.clone())
                        on:change=move |ev| { saved.set(None); on_load.run(event_target_value(&ev)) }>
                        {move || names().into_iter().map(|w| {
                            let chosen = draft.with_untracked(|d| d.workspace == w);
                            view! { <option value=w.clone() selected=chosen>{w.clone()}</option> }
                        }).collect_view()}
                    </select>
                </label>
            </div>
            {move || match dialogs.workspace.get() {
                Some(_) => view! {
                    <label class="field">
                        <span>"Orchestrator directory: the project's folder on the orchestrator's machine"</span>
                        <input class="orchestrator-dir" type="text" placeholder="/home/you/src/project"
                            prop:value=move || draft.get().orchestrator_dir
                            on:input=move |ev| draft.update(|d| d.orchestrator_dir = event_target_value(&ev)) />
                        <span class="field-hint">"Delegated tasks run there. Without it, this workspace's sessions cannot delegate."</span>
                    </label>
                    <label class="check">
                        <input class="manual-approvals" type="checkbox" prop:checked=move || draft.get().manual_approvals
                            on:change=move |ev| draft.update(|d| d.manual_approvals = event_target_checked(&ev)) />
                        " The orchestrator asks before each step"
                    </label>
                    <label class="field">
                        <span>"Sync"</span>
                        <select class="workspace-sync" on:change=move |ev| {
                            draft.update(|d| d.sync = SyncScope::from_key(&event_target_value(&ev)))
                        }>
                            {move || scopes(&draft.get().sync).into_iter().map(|(scope, text)| {
                                let key = scope.key().to_owned();
                                view! { <option value=key selected=scope == draft.get_untracked().sync>{text}</option> }
                            }).collect_view()}
                        </select>
                        <span class="field-hint">"A team space is joined in Settings → Sync first."</span>
                    </label>
                    <div class="dialog-actions start">
                        <button class="primary save-workspace" on:click=save>"Save workspace"</button>
                    </div>
                }.into_any(),
                None => view! {
                    <p class="workspace-saved" role="status">
                        {move || saved.get().map(|w| {
                            let text = format!("Workspace \u{201c}{w}\u{201d} saved. ");
                            view! {
                                {text}
                                <button class="link" on:click=move |_| on_load.run(w.clone())>"Edit it again"</button>
                            }
                        })}
                    </p>
                }.into_any(),
            }}
            <p class="field-error" role="alert">{move || dialogs.workspace_error.get()}</p>
            <h3>"New workspace"</h3>
            <div class="profile-bar">
                <label class="field">
                    <span>"Name"</span>
                    <input class="new-workspace-name" type="text" autocomplete="off" prop:value=move || new_name.get()
                        on:input=move |ev| new_name.set(event_target_value(&ev)) />
                </label>
                <button class="secondary new-workspace" on:click=create>"New workspace"</button>
            </div>
            <p class="field-hint">"New sessions go to it; its settings can be set once it is made."</p>
        </div>
    }
}

/// Where a workspace may sync: the personal space, each team space this device joined (and the one it
/// is set to, joined or not), or nowhere.
fn scopes(current: &SyncScope) -> Vec<(SyncScope, String)> {
    let joined: Vec<String> =
        crate::app::sync::load().map(|s| s.teams.into_iter().map(|t| t.name).collect()).unwrap_or_default();
    let mut out = vec![(SyncScope::Personal, "My personal space (all my devices)".to_owned())];
    out.extend(joined.iter().map(|name| (SyncScope::Team(name.clone()), format!("Team space {name}"))));
    if let SyncScope::Team(name) = current {
        if !joined.contains(name) {
            out.push((current.clone(), format!("Team space {name} (not joined on this device)")));
        }
    }
    out.push((SyncScope::ThisDevice, "This device only".to_owned()));
    out
}
