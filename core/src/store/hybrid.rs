//! Hybrid search: the full-text ranking (`search.rs`) and the nearest vectors (`vectors.rs`) fused by
//! reciprocal rank (`semantic::fuse`), with the same scope, roles and limit; then a candidate next to
//! a better one in its session (the turn before or after) takes a share of its score
//! (`semantic::lift_neighbours`), and every candidate a share of the best score in its session
//! (`semantic::lift_sessions`; one query reads where the candidates are). Without a query vector,
//! or while the index holds none, it is the full-text search exactly.

use super::rows::parse_role;
use super::search::MAX_SEARCH_LIMIT;
use super::Store;
use crate::error::{Context, Result};
use crate::semantic::{self, Matched};
use crate::{Role, SearchHit, SearchQuery};
use std::collections::HashMap;

/// A hit found by meaning alone must be at least this similar to the query (cosine): below it,
/// nearest neighbours are whatever happens to be least unrelated.
pub const MIN_SIMILARITY: f32 = 0.2;
/// How many of the nearest turns are candidates (those at least [`MIN_SIMILARITY`] similar): more than
/// a search returns, so that the rules after the fusion (a neighbour's or the session's share) can
/// lift one that is far down the vector ranking. Tuned on LoCoMo's conversations 0–4 (BENCHMARKS.md):
/// 200 raised hybrid recall at 25 by 1.0 point there (1.3 on the held-out 5–9) over 50, a search's
/// most hits; 100 and 150 gained less, 300 and more no more (the similarity floor ends the list).
pub const NEAREST_CANDIDATES: usize = 200;
/// Characters of a turn shown for a hit found by meaning (it has no matched words to centre on).
const MEANING_SNIPPET_CHARS: usize = 160;

impl Store {
    /// Searches by words and, given the query's embedding (`vector`, unit length, of the index's
    /// model), by meaning, fusing the two rankings. Hits say how they matched ([`SearchHit::matched`]).
    pub fn search_hybrid(&self, q: &SearchQuery, vector: Option<&[f32]>) -> Result<Vec<SearchHit>> {
        let Some(vector) = vector else { return self.search(q) };
        let limit = q.limit.clamp(1, MAX_SEARCH_LIMIT);
        let lexical = self.search(&SearchQuery { limit: MAX_SEARCH_LIMIT, ..q.clone() })?;
        let near: Vec<(i64, f32)> = self
            .nearest(q, vector, NEAREST_CANDIDATES)?
            .into_iter()
            .filter(|&(_, similarity)| similarity >= MIN_SIMILARITY)
            .collect();
        let lexical_ids: Vec<i64> = lexical.iter().map(|h| h.turn_id).collect();
        let near_ids: Vec<i64> = near.iter().map(|n| n.0).collect();
        let mut by_id: Vec<Option<SearchHit>> = lexical.into_iter().map(Some).collect();
        let mut titles: HashMap<String, String> = HashMap::new();
        let mut hits = Vec::with_capacity(limit);
        let fused = semantic::fuse(&lexical_ids, &near_ids);
        let places = self.places(&fused)?;
        let fused = semantic::lift_neighbours(fused, |id| places.get(&id).cloned());
        let fused = semantic::lift_sessions(fused, |id| places.get(&id).map(|p| p.0.clone()));
        for (id, matched, score) in fused.into_iter().take(limit) {
            let hit = match by_id.iter_mut().find(|h| h.as_ref().is_some_and(|h| h.turn_id == id)) {
                Some(hit) => hit.take(),
                None => self.meaning_hit(id, &mut titles)?,
            };
            if let Some(hit) = hit {
                hits.push(SearchHit { matched, score, ..hit });
            }
        }
        Ok(hits)
    }

    /// Where each candidate is: its session and turn number, in one query for them all (the ids are
    /// integers of our own, written into the statement as the snippets' are).
    fn places(&self, fused: &[(i64, Matched, f64)]) -> Result<HashMap<i64, (String, i64)>> {
        let ids = fused.iter().map(|f| f.0.to_string()).collect::<Vec<String>>().join(",");
        self.conn
            .prepare(&format!("SELECT id, session_id, turn_number FROM turns WHERE id IN ({ids})"))
            .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?.collect())
            .context("reading where the hits are")
    }

    /// A hit for turn `id`, found by meaning: its opening words as the snippet, nothing highlighted.
    /// `None` when the turn is gone.
    fn meaning_hit(&self, id: i64, titles: &mut HashMap<String, String>) -> Result<Option<SearchHit>> {
        let row: Option<(String, i64, Role, Option<String>, i64, String)> = self
            .conn
            .prepare_cached(
                "SELECT session_id, turn_number, role, tool_name, created_at, substr(content, 1, ?2)
                 FROM turns WHERE id = ?1",
            )
            .and_then(|mut s| {
                let mut rows = s.query_map(rusqlite::params![id, MEANING_SNIPPET_CHARS as i64 * 2], |r| {
                    Ok((r.get(0)?, r.get(1)?, parse_role(r, 2)?, r.get(3)?, r.get(4)?, r.get(5)?))
                })?;
                rows.next().transpose()
            })
            .context("reading a hit found by meaning")?;
        let Some((session_id, turn_number, role, tool_name, created_at, content)) = row else { return Ok(None) };
        let session_title = match titles.get(&session_id) {
            Some(t) => t.clone(),
            None => {
                let t = self.get_session(&session_id).map(|s| s.title).unwrap_or_default();
                titles.insert(session_id.clone(), t.clone());
                t
            }
        };
        Ok(Some(SearchHit {
            session_id,
            session_title,
            turn_id: id,
            turn_number,
            role,
            tool_name,
            created_at,
            snippet: opening(&content),
            highlights: Vec::new(),
            score: 0.0,
            matched: Matched::Meaning,
        }))
    }
}

/// The first words of `text` on one line, at most [`MEANING_SNIPPET_CHARS`] characters, `…` if cut.
fn opening(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= MEANING_SNIPPET_CHARS {
        return flat;
    }
    let mut cut: String = flat.chars().take(MEANING_SNIPPET_CHARS).collect();
    if let Some(space) = cut.rfind(' ') {
        cut.truncate(space);
    }
    cut.push('…');
    cut
}
