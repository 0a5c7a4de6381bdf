//! Cowork's benchmark (spec §13). The operations measured live here once: natively they run under
//! `examples/profile.rs` (for profiling), in the browser they run in a dedicated worker on the OPFS
//! `sahpool` VFS (`web`, wasm only), driven by `www/worker.js` and `run.mjs` (`scripts/bench.sh`).
//! `locomo` (native only) measures retrieval quality instead: recall of the LoCoMo benchmark's
//! evidence turns by the archive's search (`examples/locomo.rs`).

pub mod gen;
pub mod gen_chatgpt;
#[cfg(not(target_arch = "wasm32"))]
pub mod locomo;
#[cfg(target_arch = "wasm32")]
mod web;

use cowork_core::context::{assemble_context, AssembledContext, ContextSettings};
use cowork_core::prompt::{system_prompt, PromptOptions};
use cowork_core::state::SessionState;
use cowork_core::store::{NewSession, SessionTurns, Store};
use cowork_core::{Result, SearchHit, SearchQuery, SearchScope};

/// Turns per seeding transaction.
pub const SEED_BATCH: usize = 1000;

/// Creates a session of `n` generated turns (seeded in transactions of [`SEED_BATCH`]); returns its id.
pub fn seed_session(store: &mut Store, rng: &mut gen::Rng, workspace: &str, n: usize) -> Result<String> {
    let sid = store.create_session(&NewSession::new(workspace))?.id;
    let mut done = 0;
    while done < n {
        let batch = SEED_BATCH.min(n - done);
        store.append_turns(&sid, &gen::turns(rng, done, batch))?;
        done += batch;
    }
    Ok(sid)
}

/// The app's search (all sessions, 20 hits, as the search dialog asks).
pub fn search(store: &Store, text: &str) -> Result<Vec<SearchHit>> {
    store.search(&SearchQuery { limit: 20, ..SearchQuery::new(text, SearchScope::All) })
}

/// A pseudo-random unit vector of `dims` dimensions, the same for the same `seed`: the timing rows of
/// search by meaning depend on how many vectors there are and their size, not on what they mean.
pub fn pseudo_vector(seed: u64, dims: usize) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut v: Vec<f32> = (0..dims)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    let n = v.iter().map(|a| a * a).sum::<f32>().sqrt().max(f32::MIN_POSITIVE);
    v.iter_mut().for_each(|a| *a /= n);
    v
}

/// Dimensions of the vectors `store`'s semantic index holds (its model's).
pub fn index_dims(store: &Store) -> Result<usize> {
    let id = store.semantic_model()?;
    cowork_core::semantic::model(&id)
        .map(|m| m.dims)
        .ok_or_else(|| cowork_core::Error::Invalid(format!("unknown semantic model {id}")))
}

/// Gives every turn not yet in the semantic index a vector ([`pseudo_vector`] of its row id, of the
/// index's model's size), `batch` turns per transaction, as the worker's indexing saves them. Returns
/// the chunks saved.
pub fn index_pseudo_vectors(store: &mut Store, batch: usize) -> Result<usize> {
    let dims = index_dims(store)?;
    let mut saved = 0;
    loop {
        let pending = store.semantic_pending(batch)?;
        if pending.is_empty() {
            return Ok(saved);
        }
        let vectors: Vec<Vec<f32>> =
            pending.chunks.iter().map(|c| pseudo_vector(c.turn_id as u64 * 64 + u64::from(c.chunk), dims)).collect();
        store.put_vectors(&pending, &vectors)?;
        saved += vectors.len();
    }
}

/// A query vector for `text`: pseudo-random, of `dims` dimensions, the same for the same text.
pub fn query_vector(text: &str, dims: usize) -> Vec<f32> {
    let seed = text.bytes().fold(1469598103934665603u64, |h, b| (h ^ u64::from(b)).wrapping_mul(1099511628211));
    pseudo_vector(seed, dims)
}

/// The app's search by words and meaning (all sessions, 20 hits), with `vector` as the query's.
pub fn search_hybrid(store: &Store, text: &str, vector: &[f32]) -> Result<Vec<SearchHit>> {
    store.search_hybrid(&SearchQuery { limit: 20, ..SearchQuery::new(text, SearchScope::All) }, Some(vector))
}

/// The seed design's scan: `LIKE '%q%' ORDER BY turn DESC LIMIT 20` on the same table. Returns row count.
pub fn like_scan(store: &Store, text: &str) -> Result<usize> {
    let pattern = format!("%{}%", gen::like_text(text));
    let mut stmt = store
        .connection()
        .prepare_cached("SELECT id, session_id, turn_number FROM turns WHERE content LIKE ?1 ORDER BY id DESC LIMIT 20")
        .map_err(|e| cowork_core::Error::Storage(e.to_string()))?;
    let rows = stmt
        .query_map([pattern], |r| r.get::<_, i64>(0))
        .and_then(|rows| rows.collect::<std::result::Result<Vec<i64>, _>>())
        .map_err(|e| cowork_core::Error::Storage(e.to_string()))?;
    Ok(rows.len())
}

/// What the agent loop does before each model request: read the session and its register, and
/// assemble the context from the archive (`agent.rs`).
pub fn assemble(store: &Store, session_id: &str, context_window: i64) -> Result<(AssembledContext, usize)> {
    let session = store.get_session(session_id)?;
    let state = SessionState::from_json(&session.state);
    let system = system_prompt(&PromptOptions::default());
    let settings = ContextSettings { context_window, ..ContextSettings::default() };
    let source = SessionTurns::new(store, session_id)?;
    let assembled = assemble_context(&settings, &system, &state, &source)?;
    Ok((assembled, source.turns_read()))
}

/// Percentile (nearest rank) of unsorted samples.
pub fn percentile(samples: &[f64], p: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * s.len() as f64).ceil() as usize;
    s[rank.clamp(1, s.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_runs_on_a_small_archive() {
        let mut store = Store::open_in_memory().unwrap();
        let sid = seed_session(&mut store, &mut gen::Rng::new(1), "bench", 300).unwrap();
        for (_, queries) in gen::QUERIES {
            for q in *queries {
                search(&store, q).unwrap();
                like_scan(&store, q).unwrap();
            }
        }
        assert!(!search(&store, "refresh_token").unwrap().is_empty());
        let (ctx, read) = assemble(&store, &sid, 32_768).unwrap();
        assert!(ctx.messages.len() > 10 && read <= 300);
        assert_eq!(percentile(&[3.0, 1.0, 2.0, 4.0], 50.0), 2.0);
        assert_eq!(percentile(&[3.0, 1.0, 2.0, 4.0], 99.0), 4.0);
    }
}
