//! Delegated tasks and their archived orchestrator events, the context manifests (what each model
//! request was sent), per-model token calibration, and the archive's statistics.

use super::rows::{self, IfTaskExists, MANIFEST_COLS, TASK_COLS, TASK_EVENT_COLS};
use super::Store;
use crate::error::{Context, Result};
use crate::{ContextManifest, StorageStats, TaskEvent, TaskRecord};
use rusqlite::{params, OptionalExtension};

impl Store {
    /// Records a task or updates its status / delivery flag.
    pub fn upsert_task(&mut self, task: &TaskRecord) -> Result<()> {
        rows::insert_task(&self.conn, task, IfTaskExists::UpdateStatus).context(format!("saving task {}", task.task_id))
    }

    /// Archives one orchestrator event verbatim; returns its sequence number.
    pub fn append_task_event(&mut self, task_id: &str, event_type: &str, data: &str) -> Result<i64> {
        let what = || format!("archiving a {event_type} event of task {task_id}");
        let seq = rows::next_task_event_seq(&self.conn, task_id).context(what())?;
        let event = TaskEvent {
            task_id: task_id.to_owned(),
            seq,
            event_type: event_type.to_owned(),
            data: data.to_owned(),
            received_at: self.tick(),
        };
        rows::insert_task_event(&self.conn, &event).context(what())?;
        Ok(seq)
    }

    /// The task `task_id`, or `None` if the archive has no such task.
    pub fn task(&self, task_id: &str) -> Result<Option<TaskRecord>> {
        self.conn
            .prepare_cached(&format!("SELECT {TASK_COLS} FROM tasks WHERE task_id = ?1"))
            .and_then(|mut s| s.query_row([task_id], rows::task_from_row).optional())
            .context(format!("reading task {task_id}"))
    }

    /// A session's tasks, oldest first.
    pub fn tasks(&self, session_id: &str) -> Result<Vec<TaskRecord>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {TASK_COLS} FROM tasks WHERE session_id = ?1 ORDER BY created_at, task_id"
            ))
            .and_then(|mut s| s.query_map([session_id], rows::task_from_row)?.collect())
            .context(format!("reading the tasks of session {session_id}"))
    }

    /// A task's archived events in arrival order (by `seq`); empty for an unknown task.
    pub fn task_events(&self, task_id: &str) -> Result<Vec<TaskEvent>> {
        self.conn
            .prepare_cached(&format!("SELECT {TASK_EVENT_COLS} FROM task_events WHERE task_id = ?1 ORDER BY seq"))
            .and_then(|mut s| s.query_map([task_id], rows::task_event_from_row)?.collect())
            .context(format!("reading the events of task {task_id}"))
    }

    // --- context manifests and calibration --------------------------------------------------------

    /// Records what one model request contained; returns the manifest's id (for
    /// [`Store::set_manifest_usage`]).
    pub fn record_manifest(&mut self, m: &ContextManifest) -> Result<i64> {
        rows::insert_manifest(&self.conn, m).context("recording what the model was sent")
    }

    /// Adds the provider's reported usage to a recorded manifest.
    pub fn set_manifest_usage(&mut self, manifest_id: i64, usage: &serde_json::Value) -> Result<()> {
        self.conn
            .execute("UPDATE context_manifests SET usage = ?2 WHERE id = ?1", params![manifest_id, usage.to_string()])
            .context("recording the provider's usage")?;
        Ok(())
    }

    /// The newest manifests of a session, newest first.
    pub fn manifests(&self, session_id: &str, limit: usize) -> Result<Vec<ContextManifest>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {MANIFEST_COLS} FROM context_manifests WHERE session_id = ?1 ORDER BY id DESC LIMIT ?2"
            ))
            .and_then(|mut s| s.query_map(params![session_id, limit as i64], rows::manifest_from_row)?.collect())
            .context(format!("reading the context manifests of session {session_id}"))
    }

    /// Stored chars-per-token ratio and sample count for a model.
    pub fn calibration(&self, model: &str) -> Result<Option<(f64, i64)>> {
        self.conn
            .prepare_cached("SELECT chars_per_token, samples FROM token_calibration WHERE model = ?1")
            .and_then(|mut s| s.query_row([model], |r| Ok((r.get(0)?, r.get(1)?))).optional())
            .context(format!("reading the token calibration of {model}"))
    }

    /// Saves a model's chars-per-token ratio and sample count, replacing what was stored.
    pub fn set_calibration(&mut self, model: &str, chars_per_token: f64, samples: i64) -> Result<()> {
        rows::upsert_calibration(&self.conn, model, chars_per_token, samples)
            .context(format!("saving the token calibration of {model}"))
    }

    // --- statistics -------------------------------------------------------------------------------

    /// Row counts and the database's size, for the storage panel.
    pub fn stats(&self) -> Result<StorageStats> {
        let count = |table: &str| -> Result<i64> {
            self.conn
                .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
                .context(format!("counting {table}"))
        };
        let bytes: i64 = self
            .conn
            .query_row("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()", [], |r| r.get(0))
            .context("measuring the archive")?;
        let (blobs, blob_bytes): (i64, i64) = self
            .conn
            .query_row("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM blobs", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .context("counting attachments")?;
        Ok(StorageStats {
            blobs,
            blob_bytes,
            sessions: count("sessions")?,
            turns: count("turns")?,
            tool_executions: count("tool_executions")?,
            tasks: count("tasks")?,
            manifests: count("context_manifests")?,
            bytes,
            schema_version: self.schema_version()?,
        })
    }
}
