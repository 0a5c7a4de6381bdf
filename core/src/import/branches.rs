//! A conversation's tree of turns as Cowork sessions: the path to the current turn is the session;
//! every other branch is a fork — of it, or of another fork — after the turn where the branch leaves
//! it, holding only its own turns (Cowork forks are pointers). A branch that leaves before the first
//! turn (two first messages) becomes a session of its own, since a fork needs a turn to start after.
//! Session ids are UUID v5s of the format, the conversation's id and the branch's first turn, so the
//! same file always gives the same ids.

use super::{Conversation, Format};
use crate::Role;

/// One session to create for a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedSession {
    /// Its id, derived from the source (see [`session_id`]).
    pub id: String,
    /// For a fork: the session it forks (an index into [`Plan::sessions`], always earlier).
    pub parent: Option<usize>,
    /// For a fork: the last turn it inherits from its parent.
    pub fork_turn: Option<i64>,
    /// The title: the conversation's (or its first user message's); forks add "(branch N)".
    pub title: String,
    /// Its own turns in order (indices into [`Conversation::turns`]).
    pub turns: Vec<usize>,
    /// When it started (ms since the Unix epoch).
    pub created_at: i64,
    /// When it was last active (ms since the Unix epoch).
    pub last_active_at: i64,
}

/// The sessions of one conversation, the main one first, and every turn's time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Parents before their forks; empty for a conversation without turns.
    pub sessions: Vec<PlannedSession>,
    /// Each turn's time (ms): its own, else its parent's, else the conversation's.
    pub turn_times: Vec<i64>,
}

/// The id of the session a conversation becomes (`branch`: `None` for the main session, else the
/// first own turn's source id and index).
pub fn session_id(format: Format, conversation: &str, branch: Option<(&str, usize)>) -> String {
    let name = match branch {
        None => format!("cowork-import\n{}\n{conversation}", format.as_str()),
        Some((message, index)) => format!("cowork-import\n{}\n{conversation}\n{message}\n{index}", format.as_str()),
    };
    uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, name.as_bytes()).to_string()
}

/// Plans the sessions of `conversation` (see the module docs).
pub fn plan(conversation: &Conversation) -> Plan {
    let turns = &conversation.turns;
    let n = turns.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    let mut turn_times = Vec::with_capacity(n);
    let start = conversation.created_at.or(conversation.updated_at).unwrap_or(0);
    for (i, t) in turns.iter().enumerate() {
        // Parsers put parents first; a parent after its child would be a parser bug: read it as a root.
        match t.parent.filter(|p| *p < i) {
            Some(p) => children[p].push(i),
            None => roots.push(i),
        }
        let inherited = t.parent.filter(|p| *p < i).map_or(start, |p| turn_times[p]);
        turn_times.push(t.created_at.unwrap_or(inherited));
    }
    if n == 0 {
        return Plan { sessions: Vec::new(), turn_times };
    }
    // The main path: from the current turn up to its root.
    let current = conversation.current.filter(|c| *c < n).unwrap_or(n - 1);
    let mut main_next: Vec<Option<usize>> = vec![None; n];
    let mut at = current;
    while let Some(p) = turns[at].parent.filter(|p| *p < at) {
        main_next[p] = Some(at);
        at = p;
    }
    let main_root = at;
    let base_title = title(conversation, main_root, &main_next);
    let mut sessions: Vec<PlannedSession> = Vec::new();
    // (parent session, fork turn, first turn, whether it is the main path)
    let mut queue = std::collections::VecDeque::new();
    queue.push_back((None, 0, main_root, true));
    for &r in roots.iter().filter(|r| **r != main_root) {
        queue.push_back((None, 0, r, false));
    }
    while let Some((parent, fork_turn, first, main)) = queue.pop_front() {
        let index = sessions.len();
        let mut own = Vec::new();
        let mut node = first;
        let mut number = fork_turn;
        loop {
            own.push(node);
            number += 1;
            let next = if main { main_next[node] } else { children[node].last().copied() };
            for &c in children[node].iter().filter(|c| Some(**c) != next) {
                queue.push_back((Some(index), number, c, false));
            }
            match next {
                Some(c) => node = c,
                None => break,
            }
        }
        let times = own.iter().map(|&i| turn_times[i]);
        let mut last_active_at = times.clone().max().unwrap_or(start);
        let created_at = if main { conversation.created_at.unwrap_or(turn_times[first]) } else { turn_times[first] };
        let (id, title) = if main {
            last_active_at = last_active_at.max(conversation.updated_at.unwrap_or(0));
            (session_id(conversation.format, &conversation.id, None), base_title.clone())
        } else {
            let branch = Some((turns[first].source_id.as_str(), first));
            (session_id(conversation.format, &conversation.id, branch), format!("{base_title} (branch {})", index + 1))
        };
        sessions.push(PlannedSession {
            id,
            parent,
            fork_turn: parent.map(|_| fork_turn),
            title,
            turns: own,
            created_at,
            last_active_at,
        });
    }
    Plan { sessions, turn_times }
}

/// The conversation's title, else the first line of its first user message, else a placeholder.
fn title(conversation: &Conversation, root: usize, main_next: &[Option<usize>]) -> String {
    if !conversation.title.trim().is_empty() {
        return conversation.title.trim().to_owned();
    }
    let mut at = Some(root);
    while let Some(i) = at {
        let t = &conversation.turns[i];
        if t.role == Role::User {
            if let Some(line) = t.content.lines().map(str::trim).find(|l| !l.is_empty()) {
                return line.chars().take(100).collect();
            }
        }
        at = main_next[i];
    }
    format!("{} conversation", conversation.format.label())
}
