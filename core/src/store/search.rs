//! Ranked full-text search over turns (FTS5, bm25), its query plans for diagnostics, and the
//! snippets with their highlighted ranges.
//!
//! **Which matches are ranked.** A search ranks every match of its terms, whatever its age, by
//! `bm25(turns_fts, 1.0, 0.5)`, as long as there are at most [`RANK_BUDGET`] candidates: bm25 costs
//! about a microsecond per ranked row natively, where counting a match costs a tenth of that or less. So
//! each term's matches (in the scope's rowid range) are counted first, each count stopping past the
//! budget. Terms are taken rarest first while the sum of their counts fits the budget; the others,
//! words so common that ranking their matches would cost more ("the", "did", in a big archive also
//! "error"), are left out of the expression (and of the highlights). The kept terms are OR-ed: bm25
//! ranks a turn holding several of them above one holding one, so no AND pass comes first (a
//! question's words are rarely all in one turn). In an archive or session smaller than the budget no
//! term is left out: the ranking is textbook BM25 over the whole query.
//!
//! **Fallback.** When even the rarest term has more matches than the budget (a query of only very
//! common words, or a phrase found in thousands of turns), the newest [`FALLBACK_WINDOW`] matches of
//! every term (AND), or when there are none, of any term (OR), are ranked: of very many matches, the
//! newest are the likeliest to be wanted in a conversation, and the cost stays that of the window: an
//! expression of one phrase is scored by `bm25_one` (`fts_rank.rs`), in `bm25()`'s order without its
//! count of the phrase's matches in the whole index.
//!
//! **Scope.** A session-scoped search restricts the index to the rowid range of the session's turns
//! (FTS5 seeks to it), so its counts and its cost are the session's, not the archive's. Roles, the
//! workspace and pending deletes filter the candidates through a join on `turns` (and `sessions`).
//!
//! **Loop order.** The full-text index drives every candidate query and each candidate is looked up in
//! `turns` by rowid (CROSS JOIN), never the other way round (probing the index once per turn of a
//! session took seconds); the candidates are sorted here, not by SQLite. A query-plan test guards both.
//!
//! **Snippets.** FTS5 writes them for the final hits only, in one pass over the rowid range between
//! the oldest and the newest hit with the expression that found them. That range holds at most the
//! candidates (the budget when every match is ranked, the window otherwise), so the pass is bounded
//! too; one `rowid = ?` query per hit instead would seek through every term's doclist per hit.

use super::query::Terms;
use super::rows::parse_role;
use super::Store;
use crate::error::{Context, Result};
use crate::{SearchHit, SearchQuery, SearchScope};
use rusqlite::{params, types::Value as SqlValue, OptionalExtension};
use std::collections::HashMap;

/// Most candidates ranked by bm25 when every match is ranked (about 3 ms natively at 100k turns).
pub const RANK_BUDGET: usize = 3_000;
/// How many of the newest matches are ranked when even the rarest term has more than [`RANK_BUDGET`].
pub const FALLBACK_WINDOW: usize = 400;
/// Most hits one search returns.
pub const MAX_SEARCH_LIMIT: usize = 50;
/// Markers FTS5 puts around matches in snippets (private-use characters, removed again).
const HL_OPEN: char = '\u{E000}';
const HL_CLOSE: char = '\u{E001}';

/// What restricts a search besides its terms: the rowid range of the index to walk (`?2`, `?3`), and
/// the joins and conditions on each candidate with their arguments (from `?4`).
struct Filter {
    lo: i64,
    hi: i64,
    joins: &'static str,
    conds: Vec<String>,
    args: Vec<SqlValue>,
}

/// Which candidates a search ranks.
enum Plan {
    /// Every match of this expression.
    All(String),
    /// The newest [`FALLBACK_WINDOW`] matches.
    Newest,
}

impl Store {
    /// Ranked full-text search (see the module's doc for which matches are ranked). Any text is safe;
    /// text with nothing searchable finds nothing.
    pub fn search(&self, q: &SearchQuery) -> Result<Vec<SearchHit>> {
        let mut terms = Terms::parse(&q.text, q.prefix_last);
        let limit = q.limit.clamp(1, MAX_SEARCH_LIMIT);
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let Some(filter) = self.search_filter(q)? else { return Ok(Vec::new()) };
        if let Some(typed) = terms.typed_prefix() {
            if self.matches_any(&typed, &filter).context("searching the archive as you type")? {
                terms.keep_prefix_as_typed();
            }
        }
        match self.plan(&terms, &filter).context(format!("searching the archive for {:?}", q.text))? {
            Some(Plan::All(expr)) => self.ranked(&expr, &filter, false, limit, q),
            Some(Plan::Newest) => {
                let all = terms.all().unwrap_or_default();
                let hits = self.ranked(&all, &filter, true, limit, q)?;
                match terms.any() {
                    Some(any) if hits.is_empty() && terms.len() > 1 => self.ranked(&any, &filter, true, limit, q),
                    _ => Ok(hits),
                }
            }
            None => Ok(Vec::new()),
        }
    }

    /// Whether `expr` matches any turn in the filter's rowid range.
    fn matches_any(&self, expr: &str, filter: &Filter) -> rusqlite::Result<bool> {
        self.conn
            .prepare_cached("SELECT 1 FROM turns_fts WHERE turns_fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3 LIMIT 1")?
            .exists(params![expr, filter.lo, filter.hi])
    }

    /// Counts each term's matches (each count stops past the budget) and chooses the candidates;
    /// `None` when no term matches at all.
    fn plan(&self, terms: &Terms, filter: &Filter) -> rusqlite::Result<Option<Plan>> {
        let mut counts = Vec::with_capacity(terms.len());
        {
            let mut count = self.conn.prepare_cached(
                "SELECT count(*) FROM (SELECT 1 FROM turns_fts
                 WHERE turns_fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3 LIMIT ?4)",
            )?;
            for i in 0..terms.len() {
                let n: i64 = count
                    .query_row(params![terms.term(i), filter.lo, filter.hi, RANK_BUDGET as i64 + 1], |r| r.get(0))?;
                counts.push((n as usize, i));
            }
        }
        crate::order::sort_by(&mut counts, Ord::cmp);
        let matching: Vec<(usize, usize)> = counts.into_iter().filter(|&(n, _)| n > 0).collect();
        let Some(&(rarest, _)) = matching.first() else { return Ok(None) };
        if rarest > RANK_BUDGET {
            return Ok(Some(Plan::Newest));
        }
        let mut total = 0;
        let kept: Vec<usize> = matching
            .iter()
            .take_while(|&&(n, _)| {
                total += n;
                total <= RANK_BUDGET
            })
            .map(|&(_, i)| i)
            .collect();
        Ok(terms.any_of(&kept).map(Plan::All))
    }

    /// The search's restrictions; `None` when its scope holds no turn.
    fn search_filter(&self, q: &SearchQuery) -> Result<Option<Filter>> {
        let mut f = Filter { lo: 0, hi: i64::MAX, joins: "", conds: Vec::new(), args: Vec::new() };
        match &q.scope {
            SearchScope::All => {}
            SearchScope::Workspace { workspace } => {
                f.joins = " CROSS JOIN sessions s ON s.id = t.session_id";
                f.args.push(SqlValue::Text(workspace.clone()));
                f.conds.push(format!("s.workspace = ?{}", f.args.len() + 3));
            }
            SearchScope::Session { session_id } => {
                let mut ors = Vec::new();
                let mut range: Option<(i64, i64)> = None;
                for seg in self.segments(session_id)? {
                    let (lo, hi): (Option<i64>, Option<i64>) = self
                        .conn
                        .prepare_cached(
                            "SELECT min(id), max(id) FROM turns
                             WHERE session_id = ?1 AND turn_number > ?2 AND turn_number <= ?3",
                        )
                        .and_then(|mut s| {
                            s.query_row(params![seg.session_id, seg.lo, seg.hi], |r| Ok((r.get(0)?, r.get(1)?)))
                        })
                        .context("reading the rowid range of a session")?;
                    if let (Some(lo), Some(hi)) = (lo, hi) {
                        range = Some(range.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
                    }
                    f.args.push(SqlValue::Text(seg.session_id));
                    f.args.push(SqlValue::Integer(seg.lo));
                    f.args.push(SqlValue::Integer(seg.hi));
                    let n = f.args.len() + 3;
                    ors.push(format!(
                        "(t.session_id = ?{} AND t.turn_number > ?{} AND t.turn_number <= ?{n})",
                        n - 2,
                        n - 1
                    ));
                }
                let Some((lo, hi)) = range else { return Ok(None) };
                (f.lo, f.hi) = (lo, hi);
                f.conds.push(format!("({})", ors.join(" OR ")));
            }
        }
        if super::sync::deleting_any(&self.conn)? {
            f.conds.push("t.session_id NOT IN (SELECT session_id FROM sync_deleting)".to_owned());
        }
        if !q.roles.is_empty() {
            let roles: Vec<String> = q.roles.iter().map(|r| format!("'{}'", r.as_str())).collect();
            f.conds.push(format!("t.role IN ({})", roles.join(", ")));
        }
        Ok(Some(f))
    }

    /// The candidate query: every match in the filter (`newest`: the newest [`FALLBACK_WINDOW`]),
    /// with its bm25 score. bm25 weighs the content at 1.0 and `search_extra` (tool names, argument
    /// values, a reply's reasoning) at 0.5: what a turn says ranks above what its model only thought.
    /// When only the window is ranked, an expression of one phrase is scored by `bm25_one`
    /// (`fts_rank.rs`): the same order, without `bm25()`'s count of the phrase's matches in the whole
    /// index, which would cost what the window saves.
    fn candidate_sql(filter: &Filter, newest: bool) -> String {
        let score = if newest {
            "coalesce(bm25_one(turns_fts, 1.0, 0.5), bm25(turns_fts, 1.0, 0.5))"
        } else {
            "bm25(turns_fts, 1.0, 0.5)"
        };
        let mut sql = if filter.conds.is_empty() {
            format!(
                "SELECT turns_fts.rowid, {score} FROM turns_fts
                 WHERE turns_fts MATCH ?1 AND turns_fts.rowid BETWEEN ?2 AND ?3"
            )
        } else {
            // CROSS JOIN fixes the loop order: walk the full-text matches and filter them.
            format!(
                "SELECT t.id, {score} FROM turns_fts CROSS JOIN turns t ON t.id = turns_fts.rowid{}
                 WHERE turns_fts MATCH ?1 AND turns_fts.rowid BETWEEN ?2 AND ?3 AND {}",
                filter.joins,
                filter.conds.join(" AND ")
            )
        };
        if newest {
            sql.push_str(&format!(" ORDER BY turns_fts.rowid DESC LIMIT {FALLBACK_WINDOW}"));
        }
        sql
    }

    fn candidate_args(expr: &str, filter: &Filter) -> Vec<SqlValue> {
        let mut args =
            vec![SqlValue::Text(expr.to_owned()), SqlValue::Integer(filter.lo), SqlValue::Integer(filter.hi)];
        args.extend(filter.args.iter().cloned());
        args
    }

    /// SQLite's plans for a search's two candidate queries (every match, then the newest window), one
    /// after the other (diagnostics and regression tests). Native only: the browser's SQLite is built
    /// without `EXPLAIN` (`.cargo/config.toml`), so there it returns an error.
    #[doc(hidden)]
    pub fn explain_search(&self, q: &SearchQuery) -> Result<Vec<String>> {
        let expr = Terms::parse(&q.text, q.prefix_last).any().unwrap_or_else(|| "\"x\"".into());
        let filter = self.search_filter(q)?.unwrap_or(Filter {
            lo: 0,
            hi: i64::MAX,
            joins: "",
            conds: Vec::new(),
            args: Vec::new(),
        });
        let mut plan = Vec::new();
        for newest in [false, true] {
            let sql = Self::candidate_sql(&filter, newest);
            let lines: Vec<String> = self
                .conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .and_then(|mut s| {
                    s.query_map(rusqlite::params_from_iter(Self::candidate_args(&expr, &filter)), |r| {
                        r.get::<_, String>(3)
                    })?
                    .collect()
                })
                .context("explaining a search")?;
            plan.extend(lines);
        }
        Ok(plan)
    }

    /// Ranks the candidates of `expr`, best bm25 first (among equals, the newest), and makes the best
    /// `limit` into hits.
    fn ranked(
        &self,
        expr: &str,
        filter: &Filter,
        newest: bool,
        limit: usize,
        q: &SearchQuery,
    ) -> Result<Vec<SearchHit>> {
        let sql = Self::candidate_sql(filter, newest);
        let mut candidates: Vec<(i64, f64)> = self
            .conn
            .prepare_cached(&sql)
            .and_then(|mut s| {
                s.query_map(rusqlite::params_from_iter(Self::candidate_args(expr, filter)), |r| {
                    Ok((r.get(0)?, -r.get::<_, f64>(1)?))
                })?
                .collect()
            })
            .context(format!("searching the archive for {:?}", q.text))?;
        crate::order::sort_by(&mut candidates, |a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        candidates.truncate(limit);
        let snippets = self.snippets(expr, &candidates)?;
        self.hits(candidates, snippets)
    }

    /// Snippets of the chosen hits, in one pass over their rowid range (see the module's doc).
    fn snippets(&self, expr: &str, hits: &[(i64, f64)]) -> Result<HashMap<i64, String>> {
        let mut snippets: HashMap<i64, String> = HashMap::with_capacity(hits.len());
        let (Some(lo), Some(hi)) = (hits.iter().map(|c| c.0).min(), hits.iter().map(|c| c.0).max()) else {
            return Ok(snippets);
        };
        // The chosen ids, written into the statement (integers of our own; the browser's SQLite has no
        // JSON functions to pass them as one parameter).
        let ids = hits.iter().map(|c| c.0.to_string()).collect::<Vec<String>>().join(",");
        self.conn
            .prepare(&format!(
                "SELECT rowid, CASE WHEN rowid IN ({ids})
                     THEN snippet(turns_fts, -1, '{HL_OPEN}', '{HL_CLOSE}', '…', 24) END
                 FROM turns_fts WHERE turns_fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3"
            ))
            .and_then(|mut s| {
                let rows = s.query_map(params![expr, lo, hi], |r| {
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
        Ok(snippets)
    }

    /// The hits for the chosen `(turn id, score)`s, in order, with their snippets and session titles.
    fn hits(&self, chosen: Vec<(i64, f64)>, mut snippets: HashMap<i64, String>) -> Result<Vec<SearchHit>> {
        let mut titles: HashMap<String, String> = HashMap::new();
        let mut hits = Vec::with_capacity(chosen.len());
        let mut row = self
            .conn
            .prepare_cached("SELECT session_id, turn_number, role, tool_name, created_at FROM turns WHERE id = ?1")
            .context("reading search hits")?;
        for (id, score) in chosen {
            let found = row
                .query_row([id], |r| Ok((r.get::<_, String>(0)?, r.get(1)?, parse_role(r, 2)?, r.get(3)?, r.get(4)?)))
                .optional()
                .context("reading a search hit")?;
            let Some((session_id, turn_number, role, tool_name, created_at)) = found else { continue };
            let raw = snippets.remove(&id).unwrap_or_default();
            let (snippet, highlights) = split_highlights(&raw);
            let title = match titles.get(&session_id) {
                Some(t) => t.clone(),
                None => {
                    let t = self.get_session(&session_id).map(|s| s.title).unwrap_or_default();
                    titles.insert(session_id.clone(), t.clone());
                    t
                }
            };
            hits.push(SearchHit {
                session_id,
                session_title: title,
                turn_id: id,
                turn_number,
                role,
                tool_name,
                created_at,
                snippet,
                highlights,
                score,
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
