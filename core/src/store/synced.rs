//! The user's writes whose sync side is more than the outbox's triggers: deleting a session (with
//! sync on, hidden at once and carried out where the stream orders it), renaming one (its conflict
//! forks follow) and saving a workspace's settings (a new sync scope sends its sessions to the new
//! space). Above both the rows they write
//! (`sessions.rs`, `workspaces.rs`) and `sync/`, which applies the same rows from the stream, so
//! neither of those imports the other back.

use super::sessions::clip_title;
use super::{workspaces, Store};
use crate::error::{Context, Error, Result};
use crate::{SyncScope, WorkspaceSettings};

impl Store {
    /// Sets the title (its first line, at most [`super::TITLE_MAX_CHARS`] characters); an empty title is refused.
    pub fn rename_session(&mut self, id: &str, title: &str) -> Result<()> {
        let title = clip_title(title);
        if title.is_empty() {
            return Err(Error::Invalid("a session title cannot be empty".into()));
        }
        // Conflict forks titled after this session follow it (`sync/titles.rs`).
        let tx = self.conn.transaction().context("renaming a session")?;
        if super::sync::rename_here(&tx, id, &title)? == 0 {
            return Err(Error::SessionNotFound(id.to_owned()));
        }
        tx.commit().context("renaming a session")
    }

    /// Deletes a whole session, its turns, tool executions, tasks and manifests. Forks of it keep
    /// their content: the turns they inherit are copied into them first.
    ///
    /// With sync enabled the session is hidden at once and deleted when the stream orders the delete
    /// (`sync` module): what other devices wrote to it before that still lands, then goes with it.
    pub fn delete_session(&mut self, id: &str) -> Result<()> {
        self.get_session(id)?;
        let tx = self.conn.transaction().context("starting to delete a session")?;
        let space = if super::sync::enabled(&tx)? { super::sync::space_of(&tx, id)? } else { None };
        if let Some(space) = space {
            super::sync::queue_delete(&tx, &space, id)?;
        } else {
            super::sessions::delete_in(&tx, id)?;
        }
        tx.commit().context(format!("deleting session {id}"))
    }

    /// Saves a workspace's settings (the directory trimmed), stamping them with the time of the change.
    ///
    /// With sync on, a workspace that moves to another space sends its sessions there whole (they
    /// stay in the space they were in: other devices there keep them), and the space it leaves is
    /// told where it went.
    pub fn set_workspace_settings(&mut self, settings: &WorkspaceSettings) -> Result<WorkspaceSettings> {
        if let SyncScope::Team(name) = &settings.sync {
            if !crate::valid_space_name(name) {
                return Err(Error::Invalid(format!(
                    "a team space is named with 1–64 letters, digits, - and _, not {name:?}"
                )));
            }
        }
        let saved = WorkspaceSettings { updated_at: self.tick(), ..settings.clone() };
        let what = || format!("saving the settings of workspace {:?}", settings.workspace);
        let tx = self.conn.transaction().context(what())?;
        let before = workspaces::get(&tx, &settings.workspace)?.map(|w| w.sync).unwrap_or_default();
        workspaces::upsert(&tx, &saved).context(what())?;
        if before != saved.sync {
            super::sync::scope_changed(&tx, &saved.workspace, &before, &saved.sync)?;
        }
        tx.commit().context(what())?;
        Ok(WorkspaceSettings { orchestrator_dir: saved.orchestrator_dir.trim().to_owned(), ..saved })
    }
}
