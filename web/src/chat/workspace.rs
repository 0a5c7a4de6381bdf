//! The workspace settings dialog: where the workspace's project lives on the orchestrator's machine
//! (sent with every delegated task) and whether the orchestrator asks before each step. Opened from a
//! workspace's heading in the sidebar, from Settings, and from a delegation refused for want of it.

use super::modal::Modal;
use super::state::DialogState;
use cowork_core::{SyncScope, WorkspaceSettings};
use leptos::prelude::*;

/// Opens a workspace's settings dialog (by label), for components that offer it (a delegation refused
/// for want of a directory); provided as Leptos context by the app.
#[derive(Clone, Copy)]
pub struct OpenWorkspace(pub Callback<String>);

/// The dialog, shown while [`DialogState::workspace`] holds the settings being edited.
#[component]
pub fn WorkspaceDialog(
    /// Saves the edited settings (the dialog closes once they are archived).
    on_save: Callback<WorkspaceSettings>,
) -> impl IntoView {
    let dialogs = DialogState::get();
    let draft = RwSignal::new(WorkspaceSettings::default());
    Effect::new(move |_| {
        if let Some(loaded) = dialogs.workspace.get() {
            draft.set(loaded);
        }
    });
    let close = move || {
        dialogs.workspace.set(None);
        dialogs.workspace_error.set(None);
    };
    let label = move || {
        let w = draft.get().workspace;
        if w.is_empty() {
            "No workspace".to_owned()
        } else {
            w
        }
    };
    view! {
        <Show when=move || dialogs.workspace.get().is_some()>
            <Modal on_close=Callback::new(move |_| close()) class="workspace-settings" labelled_by="workspace-title">
                    <h2 id="workspace-title">"Workspace “" {label} "”"</h2>
                    <label class="field">
                        <span>"Orchestrator directory: the project's folder on the orchestrator's machine"</span>
                        <input class="orchestrator-dir" type="text" placeholder="/home/you/src/project" autofocus
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
                    <p class="field-error" role="alert">{move || dialogs.workspace_error.get()}</p>
                    <div class="dialog-actions">
                        <button class="secondary" on:click=move |_| close()>"Cancel"</button>
                        <button class="primary" on:click=move |_| on_save.run(draft.get_untracked())>"Save"</button>
                    </div>
            </Modal>
        </Show>
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
