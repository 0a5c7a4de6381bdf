//! Workspace settings: one row per configured workspace label; a label with no row has the defaults
//! ([`WorkspaceSettings::unset`]).

use super::Store;
use crate::error::{Context, Result};
use crate::WorkspaceSettings;
use rusqlite::{Connection, OptionalExtension, Row};

const COLS: &str = "workspace, orchestrator_dir, manual_approvals, updated_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<WorkspaceSettings> {
    Ok(WorkspaceSettings {
        workspace: r.get(0)?,
        orchestrator_dir: r.get(1)?,
        manual_approvals: r.get(2)?,
        updated_at: r.get(3)?,
    })
}

/// Writes `settings` as they are (their `updated_at` included), replacing any row of that workspace.
pub(super) fn upsert(conn: &Connection, settings: &WorkspaceSettings) -> rusqlite::Result<()> {
    conn.execute(
        &format!("INSERT OR REPLACE INTO workspace_settings ({COLS}) VALUES (?1, ?2, ?3, ?4)"),
        rusqlite::params![
            settings.workspace,
            settings.orchestrator_dir.trim(),
            settings.manual_approvals,
            settings.updated_at
        ],
    )
    .map(|_| ())
}

pub(super) fn get(conn: &Connection, workspace: &str) -> Result<Option<WorkspaceSettings>> {
    conn.query_row(&format!("SELECT {COLS} FROM workspace_settings WHERE workspace = ?1"), [workspace], from_row)
        .optional()
        .context(format!("reading the settings of workspace {workspace:?}"))
}

impl Store {
    /// The settings of `workspace` (the defaults when none were saved).
    pub fn workspace_settings(&self, workspace: &str) -> Result<WorkspaceSettings> {
        Ok(get(&self.conn, workspace)?.unwrap_or_else(|| WorkspaceSettings::unset(workspace)))
    }

    /// Saves a workspace's settings (the directory trimmed), stamping them with the time of the change.
    pub fn set_workspace_settings(&mut self, settings: &WorkspaceSettings) -> Result<WorkspaceSettings> {
        let saved = WorkspaceSettings { updated_at: self.tick(), ..settings.clone() };
        upsert(&self.conn, &saved).context(format!("saving the settings of workspace {:?}", settings.workspace))?;
        Ok(WorkspaceSettings { orchestrator_dir: saved.orchestrator_dir.trim().to_owned(), ..saved })
    }

    /// Every saved workspace's settings, by label.
    pub fn all_workspace_settings(&self) -> Result<Vec<WorkspaceSettings>> {
        self.conn
            .prepare(&format!("SELECT {COLS} FROM workspace_settings ORDER BY workspace"))
            .and_then(|mut s| s.query_map([], from_row)?.collect())
            .context("reading the workspaces' settings")
    }
}
