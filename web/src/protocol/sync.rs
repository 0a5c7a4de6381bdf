//! Sync across devices as the UI and the worker speak of it: what the user set in Settings → Sync
//! ([`SyncSettings`], kept in this browser's local storage with its secrets, sent to the worker,
//! never archived or exported) and where sync stands ([`SyncState`], shown in the header).

use cowork_core::ErrorKind;
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
        let url = self.server_url.trim();
        if !(url.starts_with("ws://") || url.starts_with("wss://")) || url.len() < 8 {
            return Some(
                "The server URL must be a WebSocket URL, e.g. wss://sync.example.com or ws://127.0.0.1:9222.".into(),
            );
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
        /// Messages on the server this device has not applied yet (a first sync's progress).
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
        /// Changes made here waiting to be sent.
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
            _ => "Every change made here is on the sync server".into(),
        }
    }

    /// The header's words for it.
    pub fn label(&self) -> String {
        match self {
            SyncState::Off => "Sync off".into(),
            SyncState::Connecting => "Connecting…".into(),
            SyncState::Synced { waiting: 0, behind: 0, .. } => "Synced".into(),
            SyncState::Synced { waiting: 0, behind, .. } => format!("Receiving · {behind} to go"),
            SyncState::Synced { waiting, .. } => format!("{waiting} waiting"),
            SyncState::Offline { waiting: 0, .. } => "Offline".into(),
            SyncState::Offline { waiting, .. } => format!("Offline · {waiting} waiting"),
            SyncState::Retrying { .. } => "Sync retrying".into(),
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
        check(|s| s.user.clear(), Some("user and password, a token, or a credentials file"));
        check(|s| (s.user.clear(), s.token = "t".into(), s.space = "team1".into()).2, None);
        check(|s| (s.user.clear(), s.creds = "-----BEGIN NATS USER JWT-----".into()).1, Some("Name the space"));
        check(|s| (s.user.clear(), s.creds = "-----BEGIN NATS USER JWT-----".into(), s.space = "t".into()).2, None);
        check(|s| s.space = "my space".into(), Some("letters, digits"));
        check(|s| s.passphrase = "short".into(), Some("8 characters"));
        check(|s| s.teams = vec![TeamSpace { name: "acme".into(), key: "7Q2M-0000-ABCD".into() }], None);
        check(|s| s.teams = vec![TeamSpace { name: "alice".into(), key: "7Q2M-0000-ABCD".into() }], Some("own space"));
        assert_eq!(settings().space_name(), "alice", "the personal space is the user's");
    }

    #[test]
    fn an_invite_code_carries_the_space_and_its_key() {
        let team = TeamSpace { name: "acme".into(), key: "ZZWF-3TQ3-VKAW-XHY0-Q6SA-Q94X-JT7R-H0BT".into() };
        let code = team.invite_code();
        assert_eq!(code, "cowork-team:acme:ZZWF-3TQ3-VKAW-XHY0-Q6SA-Q94X-JT7R-H0BT");
        assert_eq!(TeamSpace::from_invite(&code), Ok(team.clone()));
        // Pasted from a chat: wrapped, with spaces, the prefix and name in another case.
        let pasted = "  COWORK-TEAM:Acme:ZZWF-3TQ3-VKAW-XHY0-\n Q6SA-Q94X-JT7R-H0BT \n";
        assert_eq!(TeamSpace::from_invite(pasted), Ok(team));
        let refused = |code: &str, word: &str| {
            let e = TeamSpace::from_invite(code).unwrap_err();
            assert!(e.contains(word), "{code:?}: {e}");
        };
        refused("acme:ZZWF-3TQ3-VKAW", "starts with");
        refused("cowork-team:acme", "no key");
        refused("cowork-team:ac.me:ZZWF-3TQ3-VKAW", "space name");
        refused("cowork-team:acme:ZZWF", "too short");
    }

    /// The same keys as `newRecoveryKey` in `web/sync` makes from these bits (worked out there).
    #[test]
    fn recovery_keys_are_160_bits_in_crockford_base32() {
        let counting: [u8; 20] = std::array::from_fn(|i| i as u8);
        assert_eq!(recovery_key(counting), "000G-40R4-0M30-E209-185G-R38E-1W81-24GK");
        let falling: [u8; 20] = std::array::from_fn(|i| 255 - 7 * i as u8);
        assert_eq!(recovery_key(falling), "ZZWF-3TQ3-VKAW-XHY0-Q6SA-Q94X-JT7R-H0BT");
        assert_eq!(recovery_key([0; 20]), "0000-0000-0000-0000-0000-0000-0000-0000");
        assert_eq!(recovery_key([255; 20]), "ZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZ");
    }

    #[test]
    fn the_header_says_where_sync_stands() {
        let synced = |waiting, behind, stream_last| SyncState::Synced {
            waiting,
            behind,
            stream_last,
            unjoined: vec![],
            kept: vec![],
        };
        assert_eq!(synced(0, 0, 0).label(), "Synced");
        assert_eq!(synced(3, 0, 0).label(), "3 waiting");
        assert_eq!(synced(0, 250, 1000).label(), "Receiving · 250 to go");
        assert_eq!(synced(3, 250, 1000).label(), "3 waiting", "what waits here is said first");
        assert_eq!(synced(0, 250, 1000).progress(), Some((750, 1000)));
        assert_eq!(synced(0, 0, 1000).progress(), None, "no bar once caught up");
        // An older tab's state, without the new fields, still reads.
        let old: SyncState = serde_json::from_str(r#"{"synced":{"waiting":2}}"#).unwrap();
        assert_eq!(old, synced(2, 0, 0));
        assert_eq!(SyncState::Offline { waiting: 2, message: String::new() }.label(), "Offline · 2 waiting");
        let waiting_for_team =
            SyncState::Synced { waiting: 1, behind: 0, stream_last: 9, unjoined: vec!["acme".into()], kept: vec![] };
        assert_eq!(waiting_for_team.label(), "1 waiting");
        assert!(waiting_for_team.detail().contains("team space acme wait here until this device joins"));
        assert!(synced(0, 0, 0).detail().contains("on the sync server"));
    }

    #[test]
    fn kept_changes_are_said_with_their_device_and_reason() {
        let kept = KeptChanges {
            device: "Birch".into(),
            reason: KeptReason::Refused,
            detail: "the synced attachment plan.md does not match its SHA-256".into(),
            count: 1,
        };
        assert_eq!(
            kept.sentence(),
            "1 change from Birch could not be applied: the synced attachment plan.md does not match its SHA-256. \
             Kept on this device, and tried again when Cowork is updated."
        );
        let unknown = KeptChanges { device: String::new(), count: 2, ..kept };
        assert!(unknown.sentence().starts_with("2 changes from an unknown device could not be applied"));
        // A failure crosses to the UI as its kind; an older tab's state without one still reads.
        let failed = SyncState::Failed { kind: SyncFailure::Archive(ErrorKind::StorageFull), message: "full".into() };
        let json = serde_json::to_string(&failed).unwrap();
        assert_eq!(serde_json::from_str::<SyncState>(&json).unwrap(), failed);
        let old: SyncState = serde_json::from_str(r#"{"failed":{"message":"x"}}"#).unwrap();
        assert_eq!(old, SyncState::Failed { kind: SyncFailure::Server, message: "x".into() });
        assert!(SyncFailure::Archive(ErrorKind::StorageFull).passing(), "storage full is tried again");
        assert!(!SyncFailure::Passphrase.passing());
        assert_eq!(SyncFailure::of_transport("passphrase"), SyncFailure::Passphrase);
    }
}
