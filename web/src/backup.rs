//! Automatic backups to a folder the user chose: the policy, as data in and data out (when a
//! snapshot is due, what it is called, which old ones go, when to warn, what the panel says). The
//! browser glue (the folder handle in IndexedDB, permissions, writing files) is `app/backup.rs`.

use serde::{Deserialize, Serialize};

/// Snapshot files are named `cowork-backup-<UTC time>.jsonl`; nothing else in the folder is touched.
const PREFIX: &str = "cowork-backup-";
const SUFFIX: &str = ".jsonl";
/// A week, in milliseconds: how long Cowork is used without any backup before it warns.
pub const WARN_AFTER_MS: i64 = 7 * 24 * 3_600_000;

/// What the user set (Storage panel), kept in this browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct BackupSettings {
    /// At most one snapshot every this many minutes (at least 1).
    pub every_minutes: u32,
    /// Snapshots kept in the folder; older ones are deleted (at least 1).
    pub keep: usize,
}

impl Default for BackupSettings {
    fn default() -> BackupSettings {
        BackupSettings { every_minutes: 30, keep: 10 }
    }
}

impl BackupSettings {
    /// The settings with each value in its range.
    pub fn clamped(self) -> BackupSettings {
        BackupSettings { every_minutes: self.every_minutes.clamp(1, 7 * 24 * 60), keep: self.keep.clamp(1, 1000) }
    }
}

/// What this browser remembers about backups (the folder's handle itself lives in IndexedDB).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct BackupRecord {
    /// When Cowork was first used in this browser (ms since the Unix epoch; 0: not yet known).
    pub first_use_at: i64,
    /// The chosen folder's name, if backups are on.
    pub folder: Option<String>,
    /// When the last snapshot was written (ms since the Unix epoch).
    pub last_at: Option<i64>,
    /// The archive's [`fingerprint`] when the last snapshot was written.
    pub fingerprint: String,
    /// The settings.
    pub settings: BackupSettings,
}

/// A summary of the archive's content that changes when sessions or turns are added or removed.
pub fn fingerprint(sessions: i64, turns: i64, tasks: i64) -> String {
    format!("{sessions}/{turns}/{tasks}")
}

/// Whether a snapshot is due now: backups are on, something changed since the last one (the
/// archive's fingerprint differs, or this tab saw a change), and the last is at least the interval old.
pub fn due(record: &BackupRecord, fingerprint_now: &str, changed_here: bool, now: i64) -> bool {
    if record.folder.is_none() {
        return false;
    }
    let changed = changed_here || record.fingerprint != fingerprint_now;
    let interval = i64::from(record.settings.clamped().every_minutes) * 60_000;
    changed && record.last_at.is_none_or(|last| now - last >= interval || now < last)
}

/// The file name of a snapshot taken at `ms`: `cowork-backup-2025-01-02T03-04-05Z.jsonl` (UTC; names
/// sort in time order, and hold no character a file system refuses).
pub fn snapshot_name(ms: i64) -> String {
    let (y, m, d) = crate::chat::utc_date(ms);
    let secs = ms.rem_euclid(86_400_000) / 1000;
    format!("{PREFIX}{y:04}-{m:02}-{d:02}T{:02}-{:02}-{:02}Z{SUFFIX}", secs / 3600, secs / 60 % 60, secs % 60)
}

/// Whether `name` is one of the snapshots [`snapshot_name`] writes.
pub fn is_snapshot(name: &str) -> bool {
    let Some(stamp) = name.strip_prefix(PREFIX).and_then(|n| n.strip_suffix(SUFFIX)) else { return false };
    stamp.len() == 20 && stamp.bytes().all(|b| b.is_ascii_digit() || b"-TZ".contains(&b))
}

/// The snapshots to delete so that the newest `keep` remain (other files are never named).
pub fn to_prune(names: &[String], keep: usize) -> Vec<String> {
    let mut snapshots: Vec<&String> = names.iter().filter(|n| is_snapshot(n)).collect();
    snapshots.sort();
    let extra = snapshots.len().saturating_sub(keep.max(1));
    snapshots.into_iter().take(extra).cloned().collect()
}

/// Whether to warn that there is no backup: Cowork has been used here for a week, the archive holds
/// sessions, and no snapshot was ever written (downloading an export counts as a backup too).
pub fn needs_warning(record: &BackupRecord, now: i64, has_sessions: bool) -> bool {
    has_sessions && record.last_at.is_none() && record.first_use_at > 0 && now - record.first_use_at >= WARN_AFTER_MS
}

/// What the Storage panel says about backups.
pub fn describe(record: &BackupRecord, now: i64) -> String {
    let last = match record.last_at {
        Some(at) => format!("last backed up {}", crate::chat::relative_time(now, at)),
        None => "not backed up yet".to_owned(),
    };
    match &record.folder {
        Some(folder) => {
            let s = record.settings.clamped();
            let every = if s.every_minutes == 1 { "minute".to_owned() } else { format!("{} minutes", s.every_minutes) };
            format!("Backing up to “{folder}” after changes, at most every {every}, keeping {}; {last}.", s.keep)
        }
        None => format!("No backup folder chosen; {last}."),
    }
}

#[cfg(test)]
mod tests;
