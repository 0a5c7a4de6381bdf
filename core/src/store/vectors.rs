//! The semantic index: each turn's text embedded in chunks, kept as int8 vectors beside the turns
//! (`semantic_vectors`), with the index's settings and progress in one row (`semantic_meta`).
//!
//! Indexing is a cursor over turn row ids: turns `id <= cursor` have been looked at. New turns, imports
//! and turns another device synced all get higher ids, so they are picked up in order; a turn whose
//! text changed after it was embedded (an interrupted reply finalised) is queued in `semantic_redo` by
//! a trigger. The embedding itself happens outside the store: [`Store::semantic_pending`] hands out
//! a batch's texts, [`Store::put_vectors`] saves their vectors and moves the cursor, in one
//! transaction, so indexing resumes exactly where it stopped after a reload.
//!
//! Searching scans every vector in memory (a brute-force int8 dot product: 100,000 turns are ~40 MB
//! and a few milliseconds), after filtering by the same scopes as the full-text search: a session with
//! the turns it inherits from its fork parents, a workspace, roles. The copy in memory is read once
//! and extended as vectors are saved; deleting a turn bumps `generation`, which makes the next search
//! read it again.
//!
//! Vectors are derived data: no sync trigger reads these tables, no export writes them, and a model
//! change ([`Store::set_semantic_model`]) drops them all and starts again.

use super::rows::parse_role;
use super::Store;
use crate::error::{Context, Result};
use crate::semantic::{self, IndexProgress, PendingChunk, SemanticSettings};
use crate::{Role, SearchQuery, SearchScope};
use rusqlite::{params, OptionalExtension};
use std::collections::HashMap;

/// A batch of chunks to embed, and what saving their vectors settles.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PendingBatch {
    /// The texts to embed, in order.
    pub chunks: Vec<PendingChunk>,
    /// Every turn up to this row id has been looked at once the batch is saved.
    pub upto: i64,
    /// Turns re-embedded because their text changed.
    pub redo: Vec<i64>,
}

impl PendingBatch {
    /// Nothing to do: the index is complete.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty() && self.redo.is_empty() && self.upto == 0
    }
}

/// The vectors of the index's model, in memory, with what the scope filters need.
pub(super) struct VectorCache {
    generation: i64,
    model: String,
    /// Components of each vector: the model's dimensions.
    dims: usize,
    turn_ids: Vec<i64>,
    sessions: Vec<u32>,
    numbers: Vec<i64>,
    roles: Vec<Role>,
    data: Vec<i8>,
    /// Each vector's signs, [`semantic::bit_words`] words per vector: the coarse pass of a big scan.
    bits: Vec<u64>,
    session_ids: HashMap<String, u32>,
}

impl VectorCache {
    fn empty(generation: i64, model: String, dims: usize) -> VectorCache {
        VectorCache {
            generation,
            model,
            dims,
            turn_ids: Vec::new(),
            sessions: Vec::new(),
            numbers: Vec::new(),
            roles: Vec::new(),
            data: Vec::new(),
            bits: Vec::new(),
            session_ids: HashMap::new(),
        }
    }

    fn push(&mut self, turn_id: i64, session_id: &str, number: i64, role: Role, vec: &[i8]) {
        let next = self.session_ids.len() as u32;
        let session = *self.session_ids.entry(session_id.to_owned()).or_insert(next);
        self.turn_ids.push(turn_id);
        self.sessions.push(session);
        self.numbers.push(number);
        self.roles.push(role);
        self.data.extend_from_slice(vec);
        self.bits.extend_from_slice(&semantic::sign_bits(vec));
    }
}

/// Which vectors a search may return.
enum Filter {
    All,
    /// Sessions (by their number in the cache) and, per session, the turn numbers `(lo, hi]` shown.
    Sessions(Vec<Vec<(i64, i64)>>),
}

impl Store {
    /// This device's semantic-recall settings.
    pub fn semantic_settings(&self) -> Result<SemanticSettings> {
        self.conn
            .query_row("SELECT enabled, paused, model_url, model FROM semantic_meta WHERE id = 1", [], |r| {
                Ok(SemanticSettings { enabled: r.get(0)?, paused: r.get(1)?, model_url: r.get(2)?, model: r.get(3)? })
            })
            .context("reading the semantic index's settings")
    }

    /// Saves this device's semantic-recall settings (never synced). Turning it off keeps the vectors
    /// made so far: turning it on again goes on from there. Another model
    /// ([`set_semantic_model`](Self::set_semantic_model)) drops them.
    pub fn set_semantic_settings(&mut self, settings: &SemanticSettings) -> Result<()> {
        if !settings.model.is_empty() {
            self.set_semantic_model(&settings.model)?;
        }
        self.conn
            .execute(
                "UPDATE semantic_meta SET enabled = ?1, paused = ?2, model_url = ?3 WHERE id = 1",
                params![settings.enabled, settings.paused, settings.model_url.trim()],
            )
            .context("saving the semantic index's settings")?;
        Ok(())
    }

    /// The model the index holds vectors of (`id@version`).
    pub fn semantic_model(&self) -> Result<String> {
        self.conn
            .query_row("SELECT model FROM semantic_meta WHERE id = 1", [], |r| r.get(0))
            .context("reading the semantic index's model")
    }

    /// Makes `model` (one of [`semantic::MODELS`]) the index's model. A different one than before
    /// drops every vector and starts indexing again from the first turn (vectors of two models are
    /// never compared).
    pub fn set_semantic_model(&mut self, model: &str) -> Result<()> {
        model_dims(model)?;
        if self.semantic_model()? == model {
            return Ok(());
        }
        let tx = self.conn.transaction().context("changing the semantic model")?;
        tx.execute_batch(
            "DELETE FROM semantic_vectors; DELETE FROM semantic_redo;
             UPDATE semantic_meta SET cursor = 0, generation = generation + 1 WHERE id = 1;",
        )
        .context("dropping the vectors of the previous model")?;
        tx.execute("UPDATE semantic_meta SET model = ?1 WHERE id = 1", [model]).context("recording the model")?;
        tx.commit().context("changing the semantic model")?;
        self.vectors.replace(None);
        Ok(())
    }

    /// How many turns the index has looked at, of all the archive's turns.
    pub fn semantic_progress(&self) -> Result<IndexProgress> {
        let (cursor, redo): (i64, i64) = self
            .conn
            .query_row("SELECT cursor, (SELECT count(*) FROM semantic_redo) FROM semantic_meta WHERE id = 1", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .context("reading the semantic index's progress")?;
        let (indexed, total): (i64, i64) = self
            .conn
            .query_row("SELECT count(*) FILTER (WHERE id <= ?1), count(*) FROM turns", [cursor], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .context("counting turns for the semantic index")?;
        Ok(IndexProgress { indexed: (indexed - redo).max(0) as u64, total: total as u64 })
    }

    /// The next turns to embed, at most `max_turns` of them: those whose text changed first, then the
    /// turns after the cursor in order. A turn's chunks are its text's, then its text files' (each
    /// headed by the file's name). Turns with nothing to embed (a tool call without text, a system
    /// turn) are passed over. Empty when the index is complete.
    pub fn semantic_pending(&self, max_turns: usize) -> Result<PendingBatch> {
        let max_turns = max_turns.max(1);
        let what = "reading turns to embed";
        let mut batch = PendingBatch::default();
        // A turn's first chunk is embedded after the end of the turn before it: a reply's meaning
        // often hangs on what it answers ("yes, every hour" finds "how often do tokens expire?").
        // On LoCoMo (BENCHMARKS.md) that context raised hybrid recall at 10 and 25.
        let before = |id: i64| -> Result<String> {
            let text: Option<String> = self
                .conn
                .prepare_cached(
                    "SELECT p.content FROM turns t
                     JOIN turns p ON p.session_id = t.session_id AND p.turn_number = t.turn_number - 1
                     WHERE t.id = ?1",
                )
                .and_then(|mut s| s.query_row([id], |r| r.get(0)).optional())
                .context(what)?;
            Ok(semantic::context_tail(&text.unwrap_or_default()).to_owned())
        };
        // A turn's text files, each as "name" and its text (as much of it as full-text search reads).
        let files = |id: i64| -> Result<Vec<String>> {
            self.conn
                .prepare_cached(
                    "SELECT a.name, substr(b.data, 1, ?2) FROM attachments a JOIN blobs b ON b.sha256 = a.sha256
                     WHERE a.turn_id = ?1 AND a.kind = 'text' ORDER BY a.position",
                )
                .and_then(|mut s| {
                    s.query_map(params![id, crate::attachment::TEXT_INDEX_MAX_BYTES as i64], |r| {
                        Ok(format!(
                            "{}\n{}",
                            r.get::<_, String>(0)?,
                            crate::attachment::text_of(&r.get::<_, Vec<u8>>(1)?)
                        ))
                    })?
                    .collect()
                })
                .context(what)
        };
        let add = |batch: &mut PendingBatch, id: i64, role: Role, content: &str| -> Result<()> {
            if role == Role::System {
                return Ok(());
            }
            let mut n = 0u32;
            for (i, text) in semantic::chunks(content).into_iter().enumerate() {
                let text = match i {
                    0 => semantic::with_context(&before(id)?, text),
                    _ => text.to_owned(),
                };
                batch.chunks.push(PendingChunk { turn_id: id, chunk: n, text });
                n += 1;
            }
            for file in files(id)? {
                for text in semantic::chunks(&file) {
                    batch.chunks.push(PendingChunk { turn_id: id, chunk: n, text: text.to_owned() });
                    n += 1;
                }
            }
            Ok(())
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT t.id, t.role, t.content FROM semantic_redo r JOIN turns t ON t.id = r.turn_id
                 ORDER BY r.turn_id LIMIT ?1",
            )
            .context(what)?;
        let redo: Vec<(i64, Role, String)> = stmt
            .query_map([max_turns as i64], |r| Ok((r.get(0)?, parse_role(r, 1)?, r.get(2)?)))
            .and_then(|rows| rows.collect())
            .context(what)?;
        for (id, role, content) in &redo {
            add(&mut batch, *id, *role, content)?;
            batch.redo.push(*id);
        }
        let left = max_turns.saturating_sub(redo.len());
        if left > 0 {
            let cursor: i64 =
                self.conn.query_row("SELECT cursor FROM semantic_meta WHERE id = 1", [], |r| r.get(0)).context(what)?;
            let mut stmt = self
                .conn
                .prepare_cached("SELECT id, role, content FROM turns WHERE id > ?1 ORDER BY id LIMIT ?2")
                .context(what)?;
            let rows: Vec<(i64, Role, String)> = stmt
                .query_map(params![cursor, left as i64], |r| Ok((r.get(0)?, parse_role(r, 1)?, r.get(2)?)))
                .and_then(|rows| rows.collect())
                .context(what)?;
            for (id, role, content) in &rows {
                add(&mut batch, *id, *role, content)?;
                batch.upto = *id;
            }
        }
        Ok(batch)
    }

    /// Saves the vectors of `batch`'s chunks (`vectors[i]` for `batch.chunks[i]`, unit length, of
    /// the index's model) and moves the cursor past the batch, in one transaction. A turn deleted
    /// meanwhile gets no vectors.
    pub fn put_vectors(&mut self, batch: &PendingBatch, vectors: &[Vec<f32>]) -> Result<()> {
        if vectors.len() != batch.chunks.len() {
            return Err(crate::Error::Invalid(format!(
                "{} vectors for {} chunks to embed",
                vectors.len(),
                batch.chunks.len()
            )));
        }
        let model = self.semantic_model()?;
        let dims = model_dims(&model)?;
        if let Some(v) = vectors.iter().find(|v| v.len() != dims) {
            return Err(crate::Error::Invalid(format!(
                "a vector of {} dimensions for an index of {dims} ({model}): was the model changed while it ran?",
                v.len()
            )));
        }
        let tx = self.conn.transaction().context("saving vectors")?;
        let mut saved = Vec::with_capacity(vectors.len());
        {
            let mut turn = tx
                .prepare_cached("SELECT session_id, turn_number, role FROM turns WHERE id = ?1")
                .context("saving vectors")?;
            let mut insert = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO semantic_vectors (turn_id, chunk, model, vec) VALUES (?1, ?2, ?3, ?4)",
                )
                .context("saving vectors")?;
            for (chunk, vector) in batch.chunks.iter().zip(vectors) {
                let found: Option<(String, i64, Role)> = turn
                    .query_row([chunk.turn_id], |r| Ok((r.get(0)?, r.get(1)?, parse_role(r, 2)?)))
                    .optional()
                    .context("saving vectors")?;
                let Some((session, number, role)) = found else { continue };
                let q = semantic::quantize(vector);
                let bytes: Vec<u8> = q.iter().map(|&b| b as u8).collect();
                insert.execute(params![chunk.turn_id, chunk.chunk, model, bytes]).context("saving vectors")?;
                saved.push((chunk.turn_id, session, number, role, q));
            }
            for id in &batch.redo {
                tx.execute("DELETE FROM semantic_redo WHERE turn_id = ?1", [id]).context("saving vectors")?;
            }
            if batch.upto > 0 {
                tx.execute("UPDATE semantic_meta SET cursor = max(cursor, ?1) WHERE id = 1", [batch.upto])
                    .context("saving vectors")?;
            }
        }
        tx.commit().context("saving vectors")?;
        // Keep the copy in memory current without reading it all again.
        let generation = self.semantic_generation()?;
        let mut cache = self.vectors.borrow_mut();
        match cache.as_mut() {
            Some(c) if c.generation == generation && c.model == model && batch.redo.is_empty() => {
                for (id, session, number, role, q) in saved {
                    c.push(id, &session, number, role, &q);
                }
            }
            _ => *cache = None,
        }
        Ok(())
    }

    fn semantic_generation(&self) -> Result<i64> {
        self.conn
            .query_row("SELECT generation FROM semantic_meta WHERE id = 1", [], |r| r.get(0))
            .context("reading the semantic index")
    }

    /// Reads every vector of the index's model into memory unless the copy there is current.
    fn load_vectors(&self) -> Result<()> {
        let (generation, model) = (self.semantic_generation()?, self.semantic_model()?);
        if matches!(&*self.vectors.borrow(), Some(c) if c.generation == generation && c.model == model) {
            return Ok(());
        }
        // An index of a model this version does not know (an archive opened by an older version)
        // has no vectors it can compare: searches are by words until another model is chosen.
        let Ok(dims) = model_dims(&model) else {
            self.vectors.replace(None);
            return Ok(());
        };
        let mut cache = VectorCache::empty(generation, model.clone(), dims);
        let what = "reading the semantic index";
        let mut stmt = self
            .conn
            .prepare(
                "SELECT v.turn_id, t.session_id, t.turn_number, t.role, v.vec
                 FROM semantic_vectors v JOIN turns t ON t.id = v.turn_id WHERE v.model = ?1",
            )
            .context(what)?;
        let mut rows = stmt.query([&model]).context(what)?;
        while let Some(r) = rows.next().context(what)? {
            let bytes: Vec<u8> = r.get(4).context(what)?;
            if bytes.len() != dims {
                continue;
            }
            let q: Vec<i8> = bytes.into_iter().map(|b| b as i8).collect();
            let role = parse_role(r, 3).context(what)?;
            let session: String = r.get(1).context(what)?;
            cache.push(r.get(0).context(what)?, &session, r.get(2).context(what)?, role, &q);
        }
        self.vectors.replace(Some(cache));
        Ok(())
    }

    /// The turns nearest to `vector` (unit length) within `q`'s scope and roles, best first, at most
    /// `k`, each with its cosine similarity (a turn's best chunk).
    pub(super) fn nearest(&self, q: &SearchQuery, vector: &[f32], k: usize) -> Result<Vec<(i64, f32)>> {
        self.load_vectors()?;
        let cache = self.vectors.borrow();
        let Some(cache) = cache.as_ref() else { return Ok(Vec::new()) };
        // A query embedded by another model than the index's (the model was changed a moment ago, and
        // the new one is loading): nothing to compare it with, the search is by words.
        if vector.len() != cache.dims {
            return Ok(Vec::new());
        }
        let filter = self.filter(q, cache)?;
        // Sessions being deleted (sync) are hidden, as from the full-text search.
        let mut hidden = vec![false; cache.session_ids.len()];
        if super::sync::deleting_any(&self.conn)? {
            let mut stmt = self.conn.prepare("SELECT session_id FROM sync_deleting").context("reading deletes")?;
            let ids: Vec<String> =
                stmt.query_map([], |r| r.get(0)).and_then(|r| r.collect()).context("reading deletes")?;
            for n in ids.iter().filter_map(|s| cache.session_ids.get(s)) {
                hidden[*n as usize] = true;
            }
        }
        let query = semantic::quantize(vector);
        let dims = cache.dims;
        // Which vectors the scope allows.
        let allowed: Vec<usize> = (0..cache.turn_ids.len())
            .filter(|&i| {
                let session = cache.sessions[i];
                if hidden[session as usize] || (!q.roles.is_empty() && !q.roles.contains(&cache.roles[i])) {
                    return false;
                }
                match &filter {
                    Filter::All => true,
                    Filter::Sessions(allowed) => allowed[session as usize]
                        .iter()
                        .any(|&(lo, hi)| cache.numbers[i] > lo && cache.numbers[i] <= hi),
                }
            })
            .collect();
        // Many vectors: a coarse pass on their signs (Hamming distance, a few word operations each)
        // keeps the closest, which are then scored exactly. Few: every one is scored exactly.
        let candidates: Vec<usize> = if allowed.len() <= semantic::EXACT_SCAN_MAX {
            allowed
        } else {
            let signs = semantic::sign_bits(&query);
            let w = semantic::bit_words(dims);
            let mut coarse: Vec<(u32, usize)> =
                allowed.into_iter().map(|i| (semantic::hamming(&signs, &cache.bits[i * w..(i + 1) * w]), i)).collect();
            let keep = semantic::COARSE_KEEP.min(coarse.len());
            coarse.select_nth_unstable_by(keep - 1, |a, b| a.0.cmp(&b.0));
            coarse.truncate(keep);
            coarse.into_iter().map(|(_, i)| i).collect()
        };
        // The best vectors, with room for a turn's other chunks; then each turn's best, best first.
        let mut scored: Vec<(i32, usize)> =
            candidates.into_iter().map(|i| (semantic::dot(&query, &cache.data[i * dims..(i + 1) * dims]), i)).collect();
        let room = (k + semantic::MAX_CHUNKS).min(scored.len());
        if room < scored.len() {
            scored.select_nth_unstable_by(room, |a, b| b.0.cmp(&a.0));
            scored.truncate(room);
        }
        scored.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(cache.turn_ids[b.1].cmp(&cache.turn_ids[a.1])));
        let mut out: Vec<(i64, f32)> = Vec::with_capacity(k);
        for (score, i) in scored {
            let id = cache.turn_ids[i];
            if out.len() < k && !out.iter().any(|o| o.0 == id) {
                out.push((id, score as f32 / (127.0 * 127.0)));
            }
        }
        Ok(out)
    }

    fn filter(&self, q: &SearchQuery, cache: &VectorCache) -> Result<Filter> {
        let ids = |list: Vec<(String, i64, i64)>| -> Filter {
            let mut allowed: Vec<Vec<(i64, i64)>> = vec![Vec::new(); cache.session_ids.len()];
            for (session, lo, hi) in list {
                if let Some(&n) = cache.session_ids.get(&session) {
                    allowed[n as usize].push((lo, hi));
                }
            }
            Filter::Sessions(allowed)
        };
        Ok(match &q.scope {
            SearchScope::All => Filter::All,
            SearchScope::Session { session_id } => {
                ids(self.segments(session_id)?.into_iter().map(|s| (s.session_id, s.lo, s.hi)).collect())
            }
            SearchScope::Workspace { workspace } => {
                let mut stmt = self
                    .conn
                    .prepare_cached("SELECT id FROM sessions WHERE workspace = ?1")
                    .context("reading a workspace's sessions")?;
                let sessions: Vec<String> = stmt
                    .query_map([workspace], |r| r.get(0))
                    .and_then(|r| r.collect())
                    .context("reading a workspace's sessions")?;
                ids(sessions.into_iter().map(|s| (s, i64::MIN, i64::MAX)).collect())
            }
        })
    }
}

/// The dimensions of `model`'s vectors; an error for a model this version does not know.
fn model_dims(model: &str) -> Result<usize> {
    semantic::model(model).map(|m| m.dims).ok_or_else(|| {
        crate::Error::Invalid(format!(
            "the semantic index is of {model}, a model this version of Cowork does not know: choose another in Settings"
        ))
    })
}
