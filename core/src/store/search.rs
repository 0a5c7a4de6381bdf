//! Ranked full-text search over turns (FTS5, bm25 over the newest matches), its query plan for
//! diagnostics, and the snippets with their highlighted ranges.

use super::query::Terms;
use super::rows::parse_role;
use super::Store;
use crate::error::{Context, Result};
use crate::{Role, SearchHit, SearchQuery, SearchScope};
use rusqlite::{params, types::Value as SqlValue};
use std::collections::HashMap;

/// How many of the most recent matches are ranked per search. Ranking every match of a very common
/// word is what makes naive FTS slow; the newest matches are also the most useful in a conversation.
const RANK_CANDIDATES: usize = 400;
/// Most hits one search returns.
pub const MAX_SEARCH_LIMIT: usize = 50;
/// Markers FTS5 puts around matches in snippets (private-use characters, removed again).
const HL_OPEN: char = '\u{E000}';
const HL_CLOSE: char = '\u{E001}';

impl Store {
    /// Ranked full-text search. Any text is safe; text with nothing searchable finds nothing. When no
    /// turn has every term, turns with any of them are returned, ranked.
    pub fn search(&self, q: &SearchQuery) -> Result<Vec<SearchHit>> {
        let terms = Terms::parse(&q.text, q.prefix_last);
        let limit = q.limit.clamp(1, MAX_SEARCH_LIMIT);
        let Some(all) = terms.all() else { return Ok(Vec::new()) };
        let mut hits = self.search_expr(&all, q, limit)?;
        if hits.is_empty() && terms.len() > 1 {
            if let Some(any) = terms.any() {
                hits = self.search_expr(&any, q, limit)?;
            }
        }
        Ok(hits)
    }

    /// The candidate query for `expr` within `q`'s scope and roles, with its arguments.
    fn search_sql(&self, expr: &str, q: &SearchQuery) -> Result<(String, Vec<SqlValue>)> {
        // bm25 weighs the content at 1.0 and `search_extra` (tool names, argument values, a reply's
        // reasoning) at 0.5: what a turn says ranks above what its model only thought.
        // CROSS JOIN fixes the loop order: walk the full-text matches newest first and filter them,
        // never probe the index once per turn of a session (which made scoped searches take seconds).
        let mut sql = String::from(
            "SELECT t.id, t.session_id, t.turn_number, t.role, t.tool_name, t.created_at, bm25(turns_fts, 1.0, 0.5)
             FROM turns_fts CROSS JOIN turns t ON t.id = turns_fts.rowid",
        );
        let mut args: Vec<SqlValue> = vec![SqlValue::Text(expr.to_owned())];
        let mut conds = vec!["turns_fts MATCH ?1".to_owned()];
        match &q.scope {
            SearchScope::All => {}
            SearchScope::Workspace { workspace } => {
                sql.push_str(" CROSS JOIN sessions s ON s.id = t.session_id");
                args.push(SqlValue::Text(workspace.clone()));
                conds.push(format!("s.workspace = ?{}", args.len()));
            }
            SearchScope::Session { session_id } => {
                let mut ors = Vec::new();
                for seg in self.segments(session_id)? {
                    args.push(SqlValue::Text(seg.session_id));
                    args.push(SqlValue::Integer(seg.lo));
                    args.push(SqlValue::Integer(seg.hi));
                    let n = args.len();
                    ors.push(format!(
                        "(t.session_id = ?{} AND t.turn_number > ?{} AND t.turn_number <= ?{n})",
                        n - 2,
                        n - 1
                    ));
                }
                conds.push(format!("({})", ors.join(" OR ")));
            }
        }
        if super::sync::deleting_any(&self.conn)? {
            conds.push("t.session_id NOT IN (SELECT session_id FROM sync_deleting)".to_owned());
        }
        if !q.roles.is_empty() {
            let roles: Vec<String> = q.roles.iter().map(|r| format!("'{}'", r.as_str())).collect();
            conds.push(format!("t.role IN ({})", roles.join(", ")));
        }
        sql.push_str(&format!(" WHERE {} ORDER BY turns_fts.rowid DESC LIMIT {RANK_CANDIDATES}", conds.join(" AND ")));
        Ok((sql, args))
    }

    /// SQLite's plan for a search's candidate query (diagnostics and regression tests).
    #[doc(hidden)]
    pub fn explain_search(&self, q: &SearchQuery) -> Result<Vec<String>> {
        let expr = Terms::parse(&q.text, q.prefix_last).all().unwrap_or_else(|| "\"x\"".into());
        let (sql, args) = self.search_sql(&expr, q)?;
        self.conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .and_then(|mut s| s.query_map(rusqlite::params_from_iter(args), |r| r.get::<_, String>(3))?.collect())
            .context("explaining a search")
    }

    fn search_expr(&self, expr: &str, q: &SearchQuery, limit: usize) -> Result<Vec<SearchHit>> {
        let (sql, args) = self.search_sql(expr, q)?;
        struct Candidate {
            id: i64,
            session_id: String,
            turn_number: i64,
            role: Role,
            tool_name: Option<String>,
            created_at: i64,
            score: f64,
        }
        let mut candidates: Vec<Candidate> = self
            .conn
            .prepare_cached(&sql)
            .and_then(|mut s| {
                s.query_map(rusqlite::params_from_iter(args), |r| {
                    Ok(Candidate {
                        id: r.get(0)?,
                        session_id: r.get(1)?,
                        turn_number: r.get(2)?,
                        role: parse_role(r, 3)?,
                        tool_name: r.get(4)?,
                        created_at: r.get(5)?,
                        score: -r.get::<_, f64>(6)?,
                    })
                })?
                .collect()
            })
            .context(format!("searching the archive for {:?}", q.text))?;
        // Best bm25 first; among equals, the newest.
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.id.cmp(&a.id)));
        candidates.truncate(limit);

        // Snippets of the chosen hits in one pass: the candidates are the newest matches, so the hits lie
        // in the rowid range of the candidates and FTS5 walks that range once. (One `rowid = ?` query per
        // hit made FTS5 seek through the whole doclist of a common term again for every hit.)
        let mut snippets: HashMap<i64, String> = HashMap::with_capacity(candidates.len());
        if let (Some(lo), Some(hi)) = (candidates.iter().map(|c| c.id).min(), candidates.iter().map(|c| c.id).max()) {
            let ids = serde_json::to_string(&candidates.iter().map(|c| c.id).collect::<Vec<i64>>()).unwrap_or_default();
            self.conn
                .prepare_cached(&format!(
                    "SELECT rowid, CASE WHEN rowid IN (SELECT value FROM json_each(?4))
                         THEN snippet(turns_fts, -1, '{HL_OPEN}', '{HL_CLOSE}', '…', 24) END
                     FROM turns_fts WHERE turns_fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3"
                ))
                .and_then(|mut s| {
                    let rows = s.query_map(params![expr, lo, hi, ids], |r| {
                        Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?.unwrap_or_default()))
                    })?;
                    for row in rows {
                        let (id, snippet) = row?;
                        if !snippet.is_empty() {
                            snippets.insert(id, snippet);
                        }
                    }
                    Ok(())
                })
                .context("making search snippets")?;
        }

        let mut titles: HashMap<String, String> = HashMap::new();
        let mut hits = Vec::with_capacity(candidates.len());
        for c in candidates {
            let raw = snippets.remove(&c.id).unwrap_or_default();
            let (snippet, highlights) = split_highlights(&raw);
            let title = match titles.get(&c.session_id) {
                Some(t) => t.clone(),
                None => {
                    let t = self.get_session(&c.session_id).map(|s| s.title).unwrap_or_default();
                    titles.insert(c.session_id.clone(), t.clone());
                    t
                }
            };
            hits.push(SearchHit {
                session_id: c.session_id,
                session_title: title,
                turn_id: c.id,
                turn_number: c.turn_number,
                role: c.role,
                tool_name: c.tool_name,
                created_at: c.created_at,
                snippet,
                highlights,
                score: c.score,
                matched: crate::semantic::Matched::Words,
            });
        }
        Ok(hits)
    }
}

/// Removes the highlight markers, returning plain text and the byte ranges they enclosed.
fn split_highlights(raw: &str) -> (String, Vec<(usize, usize)>) {
    let mut text = String::with_capacity(raw.len());
    let mut ranges = Vec::new();
    let mut open = None;
    for c in raw.chars() {
        match c {
            HL_OPEN => open = Some(text.len()),
            HL_CLOSE => {
                if let Some(start) = open.take() {
                    ranges.push((start, text.len()));
                }
            }
            _ => text.push(c),
        }
    }
    (text, ranges)
}
