//! Branches: where a conversation could have gone otherwise. Editing a message or regenerating a reply
//! forks the session just before it as a version (nothing in the archive is rewritten), so the
//! alternatives at a turn are the versions of the same conversation that share everything before that
//! turn and have a turn there of their own. A fork made with "Fork from here" is a conversation of its
//! own: never an alternative in the one it came from, and the root of its own versions. [`Store::branch_points`] lists them for the turns of a session's view.

use super::Store;
use crate::error::{Context, Result};
use crate::BranchPoint;
use std::collections::HashMap;

/// One session of the tree, as the branch computation needs it.
#[derive(Debug, Clone)]
struct Node {
    parent: Option<String>,
    fork_turn: i64,
    turn_count: i64,
    created_at: i64,
    last_active_at: i64,
}

impl Store {
    /// The turns of `session_id`'s view where edits or regenerations branch, in turn order, each with
    /// its alternatives. Empty for a session that was never edited or regenerated.
    pub fn branch_points(&self, session_id: &str) -> Result<Vec<BranchPoint>> {
        let tree = self.fork_tree(session_id)?;
        // Who owns turn `n` in `id`'s view: the first session up its ancestry that wrote turns after
        // its fork point at or before `n`.
        let owner = |id: &str, n: i64| -> Option<String> {
            let mut cur = id.to_owned();
            loop {
                let node = tree.get(&cur)?;
                if n > node.fork_turn && n <= node.turn_count.max(node.fork_turn) {
                    return Some(cur);
                }
                cur = node.parent.clone()?;
            }
        };
        let me = &tree[session_id];
        let mut positions: Vec<i64> = tree.values().filter(|n| n.parent.is_some()).map(|n| n.fork_turn + 1).collect();
        positions.sort_unstable();
        positions.dedup();
        let mut points = Vec::new();
        for n in positions.into_iter().filter(|&n| n >= 1 && n <= me.turn_count) {
            let before = (n > 1).then(|| owner(session_id, n - 1));
            // Every session that reads the same turns before `n` and has a turn `n`, grouped by who wrote it.
            let mut groups: HashMap<String, (i64, String, i64)> = HashMap::new();
            for (id, node) in &tree {
                if node.turn_count < n || before.as_ref().is_some_and(|b| owner(id, n - 1) != *b) {
                    continue;
                }
                let Some(written_by) = owner(id, n) else { continue };
                let born = tree[&written_by].created_at;
                let e = groups.entry(written_by).or_insert((born, id.clone(), node.last_active_at));
                if node.last_active_at > e.2 {
                    (e.1, e.2) = (id.clone(), node.last_active_at);
                }
            }
            if groups.len() < 2 {
                continue;
            }
            let mine = owner(session_id, n);
            let mut alternatives: Vec<(String, (i64, String, i64))> = groups.into_iter().collect();
            crate::order::sort_by(&mut alternatives, |a, b| (a.1 .0, &a.0).cmp(&(b.1 .0, &b.0)));
            let current = alternatives.iter().position(|(w, _)| Some(w) == mine.as_ref()).unwrap_or(0);
            let mut sessions: Vec<String> = alternatives.into_iter().map(|(_, (_, open, _))| open).collect();
            // The session itself stands for its own alternative.
            sessions[current] = session_id.to_owned();
            points.push(BranchPoint { turn_number: n, sessions, current });
        }
        Ok(points)
    }

    /// Every version of `session_id`'s conversation (its root and the versions made from it, and from
    /// them), by id.
    fn fork_tree(&self, session_id: &str) -> Result<HashMap<String, Node>> {
        let mut root = self.get_session(session_id)?;
        while let Some(parent) = root.parent_session_id.as_deref().filter(|_| root.is_version) {
            match self.get_session(parent) {
                Ok(p) => root = p,
                Err(_) => break,
            }
        }
        let mut tree = HashMap::new();
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, parent_session_id, fork_turn, turn_count, created_at, last_active_at
                 FROM sessions WHERE parent_session_id = ?1 AND is_version AND id NOT IN (SELECT session_id FROM sync_deleting)",
            )
            .context("reading a session's forks")?;
        let mut queue = vec![root.id.clone()];
        tree.insert(
            root.id.clone(),
            Node {
                parent: None,
                fork_turn: 0,
                turn_count: root.turn_count,
                created_at: root.created_at,
                last_active_at: root.last_active_at,
            },
        );
        while let Some(id) = queue.pop() {
            let children: Vec<(String, Node)> = stmt
                .query_map([&id], |r| {
                    Ok((
                        r.get(0)?,
                        Node {
                            parent: r.get(1)?,
                            fork_turn: r.get::<_, Option<i64>>(2)?.unwrap_or(0),
                            turn_count: r.get(3)?,
                            created_at: r.get(4)?,
                            last_active_at: r.get(5)?,
                        },
                    ))
                })
                .and_then(|rows| rows.collect())
                .context("reading a session's forks")?;
            for (child, node) in children {
                if tree.len() > 10_000 || tree.contains_key(&child) {
                    continue; // bounded, and a cycle cannot happen
                }
                queue.push(child.clone());
                tree.insert(child, node);
            }
        }
        Ok(tree)
    }
}
