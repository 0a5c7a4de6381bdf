//! Conversations: a session and its versions — the forks an edit or a regeneration made, or another
//! tool's branches imported ([`Session::is_version`]) — are one conversation, listed once and opened at
//! its most recently active version; a fork made with "Fork from here" is a conversation of its own
//! that remembers the one it came from. Pure: sessions in, conversations out.

use crate::Session;
use std::collections::HashMap;

/// One conversation as a list shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// The session it started as; its title names the conversation.
    pub root: Session,
    /// Every version (the root included), most recently active first: the first is where the
    /// conversation opens.
    pub versions: Vec<Session>,
    /// For a fork made with "Fork from here" (or a sync conflict fork): the conversation (its root's
    /// id) it was forked from, when that is listed too.
    pub forked_from: Option<String>,
}

impl Conversation {
    /// The version the conversation opens at: the most recently active one.
    pub fn latest(&self) -> &Session {
        &self.versions[0]
    }

    /// When any of its versions was last active (ms since the Unix epoch).
    pub fn last_active_at(&self) -> i64 {
        self.latest().last_active_at
    }

    /// Whether session `id` is one of its versions.
    pub fn contains(&self, id: &str) -> bool {
        self.versions.iter().any(|s| s.id == id)
    }
}

/// The root of the conversation session `id` belongs to among `sessions`: up its parents for as long
/// as the session is a version whose parent is listed. `id` itself when it is not listed.
pub fn conversation_root<'a>(sessions: &'a [Session], id: &'a str) -> &'a str {
    let by_id: HashMap<&str, &Session> = sessions.iter().map(|s| (s.id.as_str(), s)).collect();
    root_in(&by_id, id)
}

fn root_in<'a>(by_id: &HashMap<&'a str, &'a Session>, id: &'a str) -> &'a str {
    let mut cur = id;
    // Bounded by the number of sessions: a cycle cannot happen, but a loop must end.
    for _ in 0..=by_id.len() {
        let Some(s) = by_id.get(cur) else { break };
        match s.parent_session_id.as_deref() {
            Some(p) if s.is_version && p != cur && by_id.contains_key(p) => cur = by_id[p].id.as_str(),
            _ => break,
        }
    }
    cur
}

/// Where a session stands in its conversation, as a search hit names it ("version 2 of 3").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionOf {
    /// The conversation's title (its root's).
    pub title: String,
    /// The session's number among the versions in the order they were made (the root is 1).
    pub number: usize,
    /// How many versions the conversation has.
    pub count: usize,
}

/// Where session `id` stands in its conversation among `sessions`; `None` when it is not listed.
pub fn version_of(sessions: &[Session], id: &str) -> Option<VersionOf> {
    let by_id: HashMap<&str, &Session> = sessions.iter().map(|s| (s.id.as_str(), s)).collect();
    by_id.get(id)?;
    let root = root_in(&by_id, id);
    let mut members: Vec<&Session> = sessions.iter().filter(|s| root_in(&by_id, &s.id) == root).collect();
    // The root first, then in the order they were made.
    in_order(&mut members, |s| (if s.id == root { i64::MIN } else { s.created_at }, &s.id));
    let number = members.iter().position(|s| s.id == id)? + 1;
    Some(VersionOf { title: by_id[root].title.clone(), number, count: members.len() })
}

/// The order deleting versions `ids` (of one conversation, among `sessions`) removes them: the last made
/// first, so each goes before the one it was made from and none inherits turns only to be deleted next.
pub fn deletion_order(sessions: &[Session], ids: &[String]) -> Vec<String> {
    let made = |id: &String| sessions.iter().find(|s| &s.id == id).map_or(0, |s| s.created_at);
    let mut out = ids.to_vec();
    in_order(&mut out, |id| (latest_first(made(id)), id));
    out
}

/// `sessions` as conversations, the most recently active first (ties: by root id). A version whose
/// parent is not among `sessions` (hidden, filtered out or deleted) starts a conversation of its own,
/// so no session is ever left out.
pub fn conversations(sessions: &[Session]) -> Vec<Conversation> {
    let by_id: HashMap<&str, &Session> = sessions.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut groups: HashMap<&str, Vec<Session>> = HashMap::new();
    for s in sessions {
        groups.entry(root_in(&by_id, &s.id)).or_default().push(s.clone());
    }
    let mut out: Vec<Conversation> = groups
        .into_iter()
        .map(|(root, mut versions)| {
            in_order(&mut versions, |s| (latest_first(s.last_active_at), &s.id));
            let root = by_id[root];
            let forked_from = root
                .parent_session_id
                .as_deref()
                .filter(|p| by_id.contains_key(p) && *p != root.id)
                .map(|p| root_in(&by_id, p).to_owned());
            Conversation { root: root.clone(), versions, forked_from }
        })
        .collect();
    in_order(&mut out, |c| (latest_first(c.last_active_at()), &c.root.id));
    out
}

/// A time as a key that sorts the latest first.
fn latest_first(ms: i64) -> i64 {
    i64::MAX - ms.max(0)
}

/// Sorts `items` by `key` (unique: ties are broken by an id), through [`crate::order`]'s one sort.
fn in_order<T>(items: &mut Vec<T>, key: impl Fn(&T) -> (i64, &str)) {
    crate::order::sort_by(items, |a, b| key(a).cmp(&key(b)));
}

#[cfg(test)]
mod tests;
