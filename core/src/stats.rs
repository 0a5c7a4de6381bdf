//! The archive's sizes, as the storage panel shows them.

use serde::{Deserialize, Serialize};

/// Sizes of the archive, for the storage panel.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StorageStats {
    /// Sessions, archived ones included.
    pub sessions: i64,
    /// Turns stored (a turn a fork inherits is stored, and counted, once).
    pub turns: i64,
    /// Tool execution records.
    pub tool_executions: i64,
    /// Delegated tasks.
    pub tasks: i64,
    /// Context manifests: one per model request.
    pub manifests: i64,
    /// Attachment contents stored (each distinct content once, however many turns carry it).
    #[serde(default)]
    pub blobs: i64,
    /// Their bytes.
    #[serde(default)]
    pub blob_bytes: i64,
    /// Database file size (page_count × page_size).
    pub bytes: i64,
    /// The archive's schema version (`PRAGMA user_version`).
    pub schema_version: i64,
}
