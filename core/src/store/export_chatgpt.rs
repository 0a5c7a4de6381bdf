//! What ChatGPT's `conversations.json` is made from (`crate::export::chatgpt` makes it): the trees of
//! the wanted sessions, each session with its own turns.

use super::{SessionFilter, Store};
use crate::error::Result;
use crate::export::{ChatGptSource, SessionTurns};
use crate::Session;
use std::collections::{HashMap, HashSet};

impl Store {
    /// The conversations of the given sessions' trees (every root session when `None`; a fork's id
    /// exports the tree it belongs to) as a ChatGPT-compatible `conversations.json`.
    pub fn export_chatgpt(&self, only: Option<&[String]>) -> Result<String> {
        Ok(crate::export::chatgpt::render(&self.chatgpt_source(only)?))
    }

    /// The trees [`Store::export_chatgpt`] exports: their roots in order, and every session of them
    /// (in the sidebar's order) with its own turns.
    pub fn chatgpt_source(&self, only: Option<&[String]>) -> Result<ChatGptSource> {
        let all = self.list_sessions(&SessionFilter {
            include_archived: true,
            limit: usize::MAX >> 1,
            ..Default::default()
        })?;
        let by_id: HashMap<&str, &Session> = all.iter().map(|s| (s.id.as_str(), s)).collect();
        fn parent_of<'a>(s: &'a Session, by_id: &HashMap<&str, &Session>) -> Option<&'a str> {
            s.parent_session_id.as_deref().filter(|p| by_id.contains_key(p))
        }
        let mut forks: HashMap<&str, Vec<&str>> = HashMap::new();
        for s in &all {
            if let Some(p) = parent_of(s, &by_id) {
                forks.entry(p).or_default().push(&s.id);
            }
        }
        let roots: Vec<&str> = match only {
            None => all.iter().filter(|s| parent_of(s, &by_id).is_none()).map(|s| s.id.as_str()).collect(),
            Some(ids) => {
                let mut roots: Vec<&str> = Vec::new();
                for id in ids {
                    let Some(mut s) = by_id.get(id.as_str()).copied() else { continue };
                    while let Some(p) = parent_of(s, &by_id) {
                        s = by_id[p];
                    }
                    if !roots.contains(&s.id.as_str()) {
                        roots.push(&s.id);
                    }
                }
                roots
            }
        };
        let mut members: HashSet<&str> = HashSet::new();
        let mut queue = roots.clone();
        while let Some(id) = queue.pop() {
            if members.insert(id) {
                queue.extend(forks.get(id).into_iter().flatten());
            }
        }
        let mut sessions = Vec::with_capacity(members.len());
        for s in all.iter().filter(|s| members.contains(s.id.as_str())) {
            sessions.push(SessionTurns { turns: self.own_turns(&s.id)?, session: s.clone() });
        }
        Ok(ChatGptSource { roots: roots.into_iter().map(str::to_owned).collect(), sessions })
    }
}
