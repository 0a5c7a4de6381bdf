use super::*;

/// A session `id` active at `t`; `parent` with `version` for a fork.
fn session(id: &str, t: i64, parent: Option<&str>, version: bool) -> Session {
    Session {
        id: id.into(),
        workspace: "w".into(),
        title: id.into(),
        model: String::new(),
        system_prompt: String::new(),
        created_at: t,
        last_active_at: t,
        turn_count: 2,
        prompt_tokens: 0,
        completion_tokens: 0,
        state: serde_json::Value::Null,
        parent_session_id: parent.map(Into::into),
        fork_turn: parent.map(|_| 1),
        is_archived: false,
        is_version: version,
    }
}

/// Each conversation as "root: versions (newest first) <- forked from".
fn check(sessions: &[Session], want: &[&str]) {
    let got: Vec<String> = conversations(sessions)
        .iter()
        .map(|c| {
            let versions: Vec<&str> = c.versions.iter().map(|s| s.id.as_str()).collect();
            let from = c.forked_from.as_deref().map(|f| format!(" <- {f}")).unwrap_or_default();
            format!("{}: {}{from}", c.root.id, versions.join(" "))
        })
        .collect();
    assert_eq!(got, want, "conversations of {:#?}", sessions.iter().map(|s| &s.id).collect::<Vec<_>>());
}

#[test]
fn edits_and_regenerations_are_one_conversation_opened_at_its_latest_version() {
    // Three edits of the original, two regenerations (one of them of an edit): six sessions, one entry.
    let sessions = [
        session("orig", 10, None, false),
        session("edit1", 20, Some("orig"), true),
        session("edit2", 30, Some("orig"), true),
        session("regen-of-edit2", 60, Some("edit2"), true),
        session("edit3", 40, Some("orig"), true),
        session("regen1", 50, Some("orig"), true),
        session("other", 55, None, false),
    ];
    check(&sessions, &["orig: regen-of-edit2 regen1 edit3 edit2 edit1 orig", "other: other"]);
    let all = conversations(&sessions);
    assert_eq!(all[0].latest().id, "regen-of-edit2", "the entry opens the most recently active version");
    assert_eq!(all[0].last_active_at(), 60);
    assert!(all[0].contains("edit1") && !all[0].contains("other"));
    assert_eq!(conversation_root(&sessions, "regen-of-edit2"), "orig");
    // Deleting it removes every version, each before the one it was made from.
    let ids: Vec<String> = all[0].versions.iter().map(|s| s.id.clone()).collect();
    assert_eq!(deletion_order(&sessions, &ids), ["regen-of-edit2", "regen1", "edit3", "edit2", "edit1", "orig"]);
}

#[test]
fn a_fork_from_here_is_its_own_conversation_naming_where_it_came_from() {
    let sessions = [
        session("orig", 10, None, false),
        session("edit", 20, Some("orig"), true),
        // Forked from a version: it came from the conversation, named by its root.
        session("fork", 30, Some("edit"), false),
        // A version of the fork belongs to the fork, not to the conversation the fork came from.
        session("fork-edit", 40, Some("fork"), true),
    ];
    check(&sessions, &["fork: fork-edit fork <- orig", "orig: edit orig"]);
    assert_eq!(conversation_root(&sessions, "fork-edit"), "fork");
}

#[test]
fn a_version_whose_parent_is_not_listed_is_shown_on_its_own() {
    // The parent is archived (hidden), deleted or filtered out: the version is never dropped.
    let sessions = [session("edit", 20, Some("gone"), true), session("regen", 30, Some("edit"), true)];
    check(&sessions, &["edit: regen edit"]);
    assert_eq!(conversation_root(&sessions, "unknown"), "unknown");
    check(&[], &[]);
}

#[test]
fn a_version_is_numbered_in_the_order_the_versions_were_made() {
    let sessions = [
        session("orig", 10, None, false),
        session("edit1", 20, Some("orig"), true),
        session("regen", 40, Some("edit1"), true),
        session("edit2", 30, Some("orig"), true),
        session("fork", 50, Some("orig"), false),
    ];
    let at = |id| version_of(&sessions, id).map(|v| (v.title, v.number, v.count));
    assert_eq!(at("orig"), Some(("orig".into(), 1, 4)), "the main version is the first");
    assert_eq!(at("edit1"), Some(("orig".into(), 2, 4)));
    assert_eq!(at("edit2"), Some(("orig".into(), 3, 4)));
    assert_eq!(at("regen"), Some(("orig".into(), 4, 4)));
    assert_eq!(at("fork"), Some(("fork".into(), 1, 1)), "a fork is a conversation of its own");
    assert_eq!(at("unknown"), None);
}
