//! Sync across devices as the UI and the worker speak of it: what the user set in Settings → Sync
//! ([`SyncSettings`], kept in this browser's local storage with its secrets, sent to the worker,
//! never archived or exported) and where sync stands ([`SyncState`], shown in the header).

use cowork_core::ErrorKind;
use serde::{Deserialize, Serialize};

/// What the user set in Settings → Sync.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SyncSettings {
    /// The NATS server's WebSocket URL (`wss://…`, or `ws://127.0.0.1:…` for one of your own), or
    /// several, separated by commas or spaces: the nodes of one cluster ([`SyncSettings::servers`]).
    pub server_url: String,
    /// The NATS user.
    pub user: String,
    /// Its password (or empty when a token is used).
    pub password: String,
    /// A token instead of user and password.
    pub token: String,
    /// A NATS credentials file's text (a user JWT and its NKey seed) instead of either.
    pub creds: String,
    /// The space to sync: the user's personal one (their user name) or a team's.
    pub space: String,
    /// The sync passphrase (or recovery key) the space's key comes from; never leaves this browser.
    pub passphrase: String,
    /// This device's name, shown on conflict forks ("… (on Laptop)").
    pub device_name: String,
    /// The team spaces this device joined, each with its key (from an invite code).
    pub teams: Vec<TeamSpace>,
}

/// A team's space as a member's device knows it: its name on the server and the key its invite code
/// carried (used as that space's passphrase). Kept with the other settings, in this browser only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamSpace {
    /// The space's name on the server (the stream `cowork_<name>`).
    pub name: String,
    /// Its key: a recovery key made by whoever created the space.
    pub key: String,
}

/// What an invite code starts with.
const INVITE: &str = "cowork-team:";

impl TeamSpace {
    /// The invite code a member passes on: the space's name and its key, in one line to paste.
    pub fn invite_code(&self) -> String {
        format!("{INVITE}{}:{}", self.name, self.key)
    }

    /// The team space an invite code names (spaces and line breaks around or inside it are ignored,
    /// the prefix read in any case); the error says what is wrong with it.
    pub fn from_invite(code: &str) -> Result<TeamSpace, String> {
        let code: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        let rest = code
            .get(..INVITE.len())
            .filter(|p| p.eq_ignore_ascii_case(INVITE))
            .map(|_| &code[INVITE.len()..])
            .ok_or("An invite code starts with “cowork-team:”; ask the team for the whole code.")?;
        let (name, key) = rest.split_once(':').ok_or("This invite code is cut short: it has no key.")?;
        let name = name.to_ascii_lowercase();
        if !cowork_core::valid_space_name(&name) {
            return Err("This invite code's space name is not valid: ask for the code again.".into());
        }
        if key.chars().count() < 8 {
            return Err("This invite code's key is too short: ask for the whole code again.".into());
        }
        Ok(TeamSpace { name, key: key.to_owned() })
    }
}

impl SyncSettings {
    /// What is missing or wrong, said so the user knows what to type; `None` when it can be tried.
    pub fn problem(&self) -> Option<String> {
        let servers = self.servers();
        if servers.is_empty() {
            return Some(
                "Give the server's WebSocket URL, e.g. wss://sync.example.com (several of one cluster: \
                 separated by commas)."
                    .into(),
            );
        }
        if let Some(url) = servers.iter().find(|u| !(u.starts_with("ws://") || u.starts_with("wss://")) || u.len() < 8)
        {
            return Some(format!(
                "The server URL must be a WebSocket URL, e.g. wss://sync.example.com or ws://127.0.0.1:9222; \
                 “{url}” is not one."
            ));
        }
        if self.user.trim().is_empty() && self.token.trim().is_empty() && self.creds.trim().is_empty() {
            return Some("Give the NATS user and password, a token, or a credentials file.".into());
        }
        if self.space.trim().is_empty() && self.user.trim().is_empty() {
            return Some("Name the space to sync (with a token or a credentials file there is no user name).".into());
        }
        let space = self.space_name();
        if !cowork_core::valid_space_name(&space) {
            return Some(
                "The space is a name of letters, digits, - and _ (your user name for your own archive).".into(),
            );
        }
        if self.passphrase.chars().count() < 8 {
            return Some("The sync passphrase needs at least 8 characters (or paste your recovery key).".into());
        }
        if self.teams.iter().any(|t| t.name == space) {
            return Some(format!("{space} is this device's own space: it cannot be one of its team spaces too."));
        }
        None
    }

    /// The servers to connect to: the URLs given, separated by commas or white space (a cluster's
    /// nodes; the connection moves to another when the one it uses goes away), each once.
    pub fn servers(&self) -> Vec<String> {
        let mut servers: Vec<String> = Vec::new();
        for url in self.server_url.split(|c: char| c == ',' || c.is_whitespace()).filter(|u| !u.is_empty()) {
            if !servers.iter().any(|s| s == url) {
                servers.push(url.to_owned());
            }
        }
        servers
    }

    /// The space's name: as given, else the user's name; lower case.
    pub fn space_name(&self) -> String {
        let s = if self.space.trim().is_empty() { self.user.trim() } else { self.space.trim() };
        s.to_ascii_lowercase()
    }
}

/// Where sync stands (externally tagged: cheaper to read than an internal tag).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncState {
    /// Sync is not set up on this device.
    #[default]
    Off,
    /// Connecting to the server and opening the space.
    Connecting,
    /// Connected; `waiting` changes not yet acknowledged by the server.
    Synced {
        /// Changes made here that the server has not acknowledged yet, as a user counts them
        /// (messages, renames, deletes: `Store::sync_waiting_changes`).
        waiting: i64,
        /// Whether anything else made here waits too (a reply's token usage, a session's model…):
        /// "Sending…" rather than "Synced" while nothing a user counts waits.
        #[serde(default, skip_serializing_if = "is_false")]
        sending: bool,
        /// Stream messages on the server this device has not applied yet (a first sync's progress;
        /// a message is one change, or a pack of them).
        #[serde(default, skip_serializing_if = "is_zero")]
        behind: i64,
        /// The stream's last sequence when it was last read (the whole of that progress).
        #[serde(default, skip_serializing_if = "is_zero")]
        stream_last: i64,
        /// Team spaces that changes made here wait for because this device has not joined them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        unjoined: Vec<String>,
        /// Other devices' changes this device could not apply, kept aside (the rest applied).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        kept: Vec<KeptChanges>,
    },
    /// The server cannot be reached; changes are kept and sent when it can.
    Offline {
        /// Changes made here waiting to be sent, as a user counts them.
        waiting: i64,
        /// What happened.
        message: String,
    },
    /// The archive failed for a moment (storage full, busy): sync tries again by itself, a bounded
    /// number of times, a little later each time, and skips nothing meanwhile.
    Retrying {
        /// Changes made here waiting to be sent.
        waiting: i64,
        /// What happened, when the next try is and what the user can do.
        message: String,
    },
    /// Sync stopped on an error the user must act on (credentials, passphrase, permissions).
    Failed {
        /// What kind of failure it is.
        #[serde(default)]
        kind: SyncFailure,
        /// What went wrong and what to do.
        message: String,
    },
}

/// What kind of failure stopped sync, or a step of it (the transport's `SyncError.kind`, read at
/// the edge, and the archive's [`ErrorKind`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncFailure {
    /// The settings are incomplete or wrong (nothing was tried).
    Settings,
    /// The sync module could not be loaded.
    Module,
    /// The server could not be reached.
    Unreachable,
    /// The server failed or timed out.
    #[default]
    Server,
    /// The credentials were refused.
    Auth,
    /// The user may not use that space.
    Permission,
    /// The passphrase does not open the space.
    Passphrase,
    /// Something the module or the space holds cannot be used.
    Invalid,
    /// The archive failed, with the core's kind.
    Archive(ErrorKind),
}

impl SyncFailure {
    /// The transport's `SyncError.kind` (`web/sync/index.mjs`); one it does not name is the server's.
    pub fn of_transport(kind: &str) -> SyncFailure {
        match kind {
            "unreachable" => SyncFailure::Unreachable,
            "auth" => SyncFailure::Auth,
            "permission" => SyncFailure::Permission,
            "passphrase" => SyncFailure::Passphrase,
            "invalid" => SyncFailure::Invalid,
            _ => SyncFailure::Server,
        }
    }

    /// Worth trying again by itself, later: the server is away, or the archive failed for a moment
    /// (full, busy, an I/O error), rather than something the user must change.
    pub fn passing(self) -> bool {
        matches!(
            self,
            SyncFailure::Unreachable
                | SyncFailure::Server
                | SyncFailure::Archive(ErrorKind::StorageFull | ErrorKind::Storage)
        )
    }
}

/// Changes from one device kept aside for one reason: this device could not apply them (the rest of
/// the stream applied). They stay in the archive, still encrypted, and are tried again when Cowork
/// is updated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptChanges {
    /// The device that wrote them (empty when they could not be read at all).
    pub device: String,
    /// Why they could not be applied.
    pub reason: KeptReason,
    /// The reason in words.
    pub detail: String,
    /// How many.
    pub count: i64,
}

/// Why changes were kept aside (the archive's quarantine reasons, as the wire names them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeptReason {
    /// They cannot be decrypted.
    Undecryptable,
    /// A kind of change from a newer version of Cowork.
    NewerKind,
    /// Not changes this version can read.
    Malformed,
    /// Read, but refused (an attachment whose SHA-256 does not match …).
    Refused,
}

impl KeptChanges {
    /// The sync dialog's line: "1 change from Birch could not be applied: …; kept …".
    pub fn sentence(&self) -> String {
        let changes = if self.count == 1 { "change".to_owned() } else { "changes".to_owned() };
        let from = if self.device.is_empty() { "an unknown device" } else { &self.device };
        format!(
            "{} {changes} from {from} could not be applied: {}. Kept on this device, and tried again when Cowork is updated.",
            self.count, self.detail
        )
    }
}

/// Recovery keys are written in Crockford's base32 (no I, L, O or U), as `web/sync` reads them.
const RECOVERY_ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A recovery key from 160 random bits: 32 characters in groups of four ("7Q2M-…"). It is used as the
/// space's passphrase (`web/sync` reads it in any case, with or without dashes, O for 0, I or L for 1).
pub fn recovery_key(bits: [u8; 20]) -> String {
    let bit = |i: usize| (bits[i / 8] >> (7 - i % 8)) & 1;
    let chars: Vec<char> = (0..32)
        .map(|c| (0..5).fold(0usize, |v, b| (v << 1) | usize::from(bit(c * 5 + b))))
        .map(|v| char::from(RECOVERY_ALPHABET[v]))
        .collect();
    chars.chunks(4).map(|g| g.iter().collect::<String>()).collect::<Vec<_>>().join("-")
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// What a failure's message says happened, without what to do about it: the words before its first
/// ": " (every sync failure says "what happened: what to do"), its asides in parentheses left out.
fn headline(message: &str) -> String {
    let head = message.split(": ").next().unwrap_or(message);
    let mut out = String::with_capacity(head.len());
    let mut depth = 0usize;
    for c in head.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    out.trim_end_matches(['.', ',', ';', ' ']).to_owned()
}

impl SyncState {
    /// How far this device has read its space, as (read, whole), while it is behind (a progress bar).
    pub fn progress(&self) -> Option<(i64, i64)> {
        match *self {
            SyncState::Synced { behind, stream_last, .. } if behind > 0 && stream_last >= behind => {
                Some((stream_last - behind, stream_last))
            }
            _ => None,
        }
    }

    /// What the header's tooltip says of it, beyond its label, when connected.
    pub fn detail(&self) -> String {
        match self {
            SyncState::Synced { unjoined, .. } if !unjoined.is_empty() => format!(
                "Changes to workspaces of team space {} wait here until this device joins it \
                 (Settings → Sync: Join, with the team's invite code).",
                unjoined.join(", ")
            ),
            SyncState::Synced { waiting, sending, .. } if *waiting > 0 || *sending => {
                "Changes made here are on their way to the sync server".into()
            }
            _ => "Every change made here is on the sync server".into(),
        }
    }

    /// The header's words for it.
    pub fn label(&self) -> String {
        match self {
            SyncState::Off => "Sync off".into(),
            SyncState::Connecting => "Connecting…".into(),
            SyncState::Synced { waiting: 0, behind: 0, sending: false, .. } => "Synced".into(),
            SyncState::Synced { waiting: 0, behind: 0, .. } => "Sending…".into(),
            // Stream messages, not changes (a pack holds up to 128): a share of the whole.
            SyncState::Synced { waiting: 0, .. } => match self.progress() {
                Some((done, whole)) => format!("Receiving · {}%", done * 100 / whole),
                None => "Receiving…".into(),
            },
            SyncState::Synced { waiting, .. } => format!("{waiting} waiting"),
            SyncState::Offline { waiting: 0, .. } => "Offline".into(),
            SyncState::Offline { waiting, .. } => format!("Offline · {waiting} waiting"),
            SyncState::Retrying { .. } => "Sync retrying".into(),
            SyncState::Failed { message, .. } => match headline(message) {
                head if head.is_empty() => "Sync error".into(),
                head => format!("Sync error: {head}"),
            },
        }
    }
}

#[cfg(test)]
mod tests;
