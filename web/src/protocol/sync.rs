//! Sync across devices as the UI and the worker speak of it: what the user set in Settings → Sync
//! ([`SyncSettings`], kept in this browser's local storage with its secrets, sent to the worker,
//! never archived or exported) and where sync stands ([`SyncState`], shown in the header).

use serde::{Deserialize, Serialize};

/// What the user set in Settings → Sync.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SyncSettings {
    /// The NATS server's WebSocket URL (`wss://…`, or `ws://127.0.0.1:…` for one of your own).
    pub server_url: String,
    /// The NATS user.
    pub user: String,
    /// Its password (or empty when a token is used).
    pub password: String,
    /// A token instead of user and password.
    pub token: String,
    /// The space to sync: the user's personal one (their user name) or a team's.
    pub space: String,
    /// The sync passphrase (or recovery key) the space's key comes from; never leaves this browser.
    pub passphrase: String,
    /// This device's name, shown on conflict forks ("… (on Laptop)").
    pub device_name: String,
}

impl SyncSettings {
    /// What is missing or wrong, said so the user knows what to type; `None` when it can be tried.
    pub fn problem(&self) -> Option<String> {
        let url = self.server_url.trim();
        if !(url.starts_with("ws://") || url.starts_with("wss://")) || url.len() < 8 {
            return Some(
                "The server URL must be a WebSocket URL, e.g. wss://sync.example.com or ws://127.0.0.1:9222.".into(),
            );
        }
        if self.user.trim().is_empty() && self.token.trim().is_empty() {
            return Some("Give the NATS user and password, or a token.".into());
        }
        let space = self.space_name();
        if space.is_empty()
            || space.len() > 64
            || !space.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Some(
                "The space is a name of letters, digits, - and _ (your user name for your own archive).".into(),
            );
        }
        if self.passphrase.chars().count() < 8 {
            return Some("The sync passphrase needs at least 8 characters (or paste your recovery key).".into());
        }
        None
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
        /// Changes made here that the server has not acknowledged yet.
        waiting: i64,
    },
    /// The server cannot be reached; changes are kept and sent when it can.
    Offline {
        /// Changes made here waiting to be sent.
        waiting: i64,
        /// What happened.
        message: String,
    },
    /// Sync stopped on an error the user must act on (credentials, passphrase, permissions).
    Failed {
        /// What went wrong and what to do.
        message: String,
    },
}

impl SyncState {
    /// The header's words for it.
    pub fn label(&self) -> String {
        match self {
            SyncState::Off => "Sync off".into(),
            SyncState::Connecting => "Connecting…".into(),
            SyncState::Synced { waiting: 0 } => "Synced".into(),
            SyncState::Synced { waiting } => format!("{waiting} waiting"),
            SyncState::Offline { waiting: 0, .. } => "Offline".into(),
            SyncState::Offline { waiting, .. } => format!("Offline · {waiting} waiting"),
            SyncState::Failed { .. } => "Sync error".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> SyncSettings {
        SyncSettings {
            server_url: "ws://127.0.0.1:9222".into(),
            user: "Alice".into(),
            password: "pw".into(),
            passphrase: "correct horse".into(),
            device_name: "Laptop".into(),
            ..SyncSettings::default()
        }
    }

    #[test]
    fn settings_say_what_to_fix() {
        let check = |f: fn(&mut SyncSettings), expect: Option<&str>| {
            let mut s = settings();
            f(&mut s);
            let got = s.problem();
            match expect {
                None => assert_eq!(got, None, "{s:?}"),
                Some(word) => assert!(got.as_deref().is_some_and(|m| m.contains(word)), "{s:?}: {got:?}"),
            }
        };
        check(|_| {}, None);
        check(|s| s.server_url = "https://x".into(), Some("WebSocket URL"));
        check(|s| s.user.clear(), Some("user and password, or a token"));
        check(|s| (s.user.clear(), s.token = "t".into(), s.space = "team1".into()).2, None);
        check(|s| s.space = "my space".into(), Some("letters, digits"));
        check(|s| s.passphrase = "short".into(), Some("8 characters"));
        assert_eq!(settings().space_name(), "alice", "the personal space is the user's");
    }

    #[test]
    fn the_header_says_where_sync_stands() {
        assert_eq!(SyncState::Synced { waiting: 0 }.label(), "Synced");
        assert_eq!(SyncState::Synced { waiting: 3 }.label(), "3 waiting");
        assert_eq!(SyncState::Offline { waiting: 2, message: String::new() }.label(), "Offline · 2 waiting");
    }
}
