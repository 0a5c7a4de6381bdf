//! Workspace settings: one row per configured workspace label; a label with no row has the defaults
//! ([`WorkspaceSettings::unset`]).

use super::Store;
use crate::error::{Context, Result};
use crate::{SyncScope, WorkspaceSettings};
use rusqlite::{Connection, OptionalExtension, Row};

const COLS: &str = "workspace, orchestrator_dir, manual_approvals, updated_at, sync_scope, mcp_servers";

fn from_row(r: &Row<'_>) -> rusqlite::Result<WorkspaceSettings> {
    Ok(WorkspaceSettings {
        workspace: r.get(0)?,
        orchestrator_dir: r.get(1)?,
        manual_approvals: r.get(2)?,
        updated_at: r.get(3)?,
        sync: SyncScope::from_key(&r.get::<_, String>(4)?),
        // Written by `upsert` only; text that does not read (never written so) is no servers.
        mcp_servers: serde_json::from_str(&r.get::<_, String>(5)?).unwrap_or_default(),
    })
}

/// Writes `settings` as they are (their `updated_at` included) over any row of that workspace (an
/// update, so sync's triggers see the scope it had).
pub(super) fn upsert(conn: &Connection, settings: &WorkspaceSettings) -> rusqlite::Result<()> {
    conn.execute(
        &format!(
            "INSERT INTO workspace_settings ({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (workspace) DO UPDATE SET orchestrator_dir = excluded.orchestrator_dir,
                 manual_approvals = excluded.manual_approvals, updated_at = excluded.updated_at,
                 sync_scope = excluded.sync_scope, mcp_servers = excluded.mcp_servers"
        ),
        rusqlite::params![
            settings.workspace,
            settings.orchestrator_dir.trim(),
            settings.manual_approvals,
            settings.updated_at,
            settings.sync.key(),
            servers_json(&settings.mcp_servers),
        ],
    )
    .map(|_| ())
}

/// The servers as the column keeps them: empty text for none.
fn servers_json(servers: &[serde_json::Value]) -> String {
    if servers.is_empty() {
        return String::new();
    }
    serde_json::to_string(servers).unwrap_or_default()
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

    /// Every saved workspace's settings, by label.
    pub fn all_workspace_settings(&self) -> Result<Vec<WorkspaceSettings>> {
        self.conn
            .prepare(&format!("SELECT {COLS} FROM workspace_settings ORDER BY workspace"))
            .and_then(|mut s| s.query_map([], from_row)?.collect())
            .context("reading the workspaces' settings")
    }
}
