//! The sync settings' checks, invite codes, recovery keys and the header's words.

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
    check(|s| s.server_url = " ".into(), Some("WebSocket URL"));
    check(|s| s.server_url = "ws://127.0.0.1:4222, wss://b.example.com".into(), None);
    check(|s| s.server_url = "ws://127.0.0.1:4222, b.example.com".into(), Some("“b.example.com” is not one"));
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
fn several_servers_are_the_nodes_of_one_cluster() {
    let with = |url: &str| SyncSettings { server_url: url.into(), ..settings() }.servers();
    assert_eq!(with("wss://sync.example.com"), ["wss://sync.example.com"]);
    assert_eq!(
        with(" ws://127.0.0.1:1,ws://127.0.0.1:2 \n ws://127.0.0.1:3, ws://127.0.0.1:1"),
        ["ws://127.0.0.1:1", "ws://127.0.0.1:2", "ws://127.0.0.1:3"],
        "commas, spaces and line breaks separate them; each is tried once"
    );
    assert!(with(" , ").is_empty());
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
fn the_header_says_a_sync_error_in_words() {
    let failed = |message: &str| SyncState::Failed { kind: SyncFailure::Server, message: message.into() }.label();
    // The module's and the worker's messages, as they are written (web/sync/index.mjs, worker/sync.rs).
    assert_eq!(
        failed("The sync server refused user alice: check the user name and password."),
        "Sync error: The sync server refused user alice"
    );
    assert_eq!(
        failed("That passphrase (or recovery key) does not open space \"alice\": check it and try again."),
        "Sync error: That passphrase does not open space \"alice\""
    );
    assert_eq!(
        failed("The sync module could not be loaded (is the app offline since before its first use?)."),
        "Sync error: The sync module could not be loaded"
    );
    assert_eq!(failed(""), "Sync error");
}

#[test]
fn the_header_says_where_sync_stands() {
    let synced = |waiting, behind, stream_last| SyncState::Synced {
        waiting,
        sending: false,
        behind,
        stream_last,
        unjoined: vec![],
        kept: vec![],
    };
    assert_eq!(synced(0, 0, 0).label(), "Synced");
    assert_eq!(synced(3, 0, 0).label(), "3 waiting");
    assert_eq!(synced(0, 250, 1000).label(), "Receiving · 75%");
    assert_eq!(synced(0, 3, 23).label(), "Receiving · 86%", "a share of the stream: its messages may be packs");
    assert_eq!(synced(0, 250, 0).label(), "Receiving…", "from an older tab, without the whole");
    assert_eq!(synced(3, 250, 1000).label(), "3 waiting", "what waits here is said first");
    assert_eq!(synced(0, 250, 1000).progress(), Some((750, 1000)));
    assert_eq!(synced(0, 0, 1000).progress(), None, "no bar once caught up");
    // An older tab's state, without the new fields, still reads.
    let old: SyncState = serde_json::from_str(r#"{"synced":{"waiting":2}}"#).unwrap();
    assert_eq!(old, synced(2, 0, 0));
    assert_eq!(SyncState::Offline { waiting: 2, message: String::new() }.label(), "Offline · 2 waiting");
    let sending =
        SyncState::Synced { waiting: 0, sending: true, behind: 0, stream_last: 0, unjoined: vec![], kept: vec![] };
    assert_eq!(sending.label(), "Sending…", "bookkeeping waits: not Synced yet, and no count a user would not make");
    let waiting_for_team = SyncState::Synced {
        waiting: 1,
        sending: false,
        behind: 0,
        stream_last: 9,
        unjoined: vec!["acme".into()],
        kept: vec![],
    };
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
