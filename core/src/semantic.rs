//! Recall by meaning, the pure part: what text of a turn is embedded (in chunks), how a vector is kept
//! (int8, unit length × 127), how two ranked lists are fused (reciprocal rank, then a hit's neighbour
//! turns and the rest of its session lifted), and the plain data the store, the storage worker and the
//! UI exchange about the semantic index.
//!
//! The embedding model itself runs elsewhere (the `semantic/` crate, in its own web worker); the store
//! keeps the vectors (`store/vectors.rs`) and searches with them (`store/hybrid.rs`). Vectors are
//! derived data: never synced, never exported, rebuilt when the model changes.

use serde::{Deserialize, Serialize};

/// A sentence-embedding model the index can hold vectors of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbeddingModel {
    /// As the index records it: the model's name, `@`, the version of what is embedded (chunking,
    /// context). A vector made by another model or version is never compared with this one's: the
    /// index is rebuilt.
    pub id: &'static str,
    /// The model's name: its folder of files, and what the semantic worker loads.
    pub name: &'static str,
    /// Dimensions of its vectors.
    pub dims: usize,
}

/// sentence-transformers' all-MiniLM-L6-v2 (6 layers): the default, fast to index.
pub const MINILM: EmbeddingModel = EmbeddingModel { id: "all-MiniLM-L6-v2@1", name: "all-MiniLM-L6-v2", dims: 384 };
/// sentence-transformers' all-mpnet-base-v2 (12 layers, twice as wide): finds more (BENCHMARKS.md,
/// LoCoMo), five to ten times slower to index.
pub const MPNET: EmbeddingModel = EmbeddingModel { id: "all-mpnet-base-v2@1", name: "all-mpnet-base-v2", dims: 768 };
/// The models the index knows, the default first.
pub const MODELS: [EmbeddingModel; 2] = [MINILM, MPNET];
/// The model a new archive's index is of.
pub const MODEL: &str = MINILM.id;
/// Dimensions of [`MODEL`]'s vectors.
pub const DIMS: usize = MINILM.dims;

/// The model an index records (`id@version`), if it is one of [`MODELS`].
pub fn model(id: &str) -> Option<EmbeddingModel> {
    MODELS.into_iter().find(|m| m.id == id)
}
/// Characters of text per chunk: about 200 word pieces, inside the model's 256-token window.
pub const CHUNK_CHARS: usize = 800;
/// Characters each chunk repeats of the one before, so a sentence cut by a boundary is whole in one.
pub const CHUNK_OVERLAP: usize = 160;
/// Most chunks embedded per turn: a turn's first ~24,000 characters. (A 1 MB tool result would be
/// 1,300 chunks; its opening says what it is, and words anywhere in it are found by the lexical index.)
pub const MAX_CHUNKS: usize = 32;
/// The `k` of reciprocal-rank fusion: a hit at rank `r` of a list adds `1 / (k + r)`. Small, so the
/// top of each list counts most: tuned on LoCoMo's conversations 0–4 (k = 60, the usual choice, gave
/// 45.5 / 56.3 / 74.0 % recall at 5 / 10 / 25 there; 20: 48.4 / 60.9 / 74.2; 5: 54.2 / 63.2 / 74.1;
/// 2: 53.8 / 62.7 / 73.8), then checked on the held-out 5–9 (BENCHMARKS.md).
pub const RRF_K: f64 = 5.0;

/// How a search hit was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Matched {
    /// By its words (the full-text index).
    #[default]
    Words,
    /// By its meaning only (the vectors): none of the query's words are in it.
    Meaning,
    /// By both.
    Both,
}

impl Matched {
    /// How the hit is described to the model and the user.
    pub fn label(self) -> &'static str {
        match self {
            Matched::Words => "matched by words",
            Matched::Meaning => "matched by meaning",
            Matched::Both => "matched by words and meaning",
        }
    }
}

/// This device's choices for recall by meaning.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SemanticSettings {
    /// Recall by meaning is on: the model is loaded and the archive indexed.
    pub enabled: bool,
    /// Background indexing is paused (search still uses what is indexed).
    pub paused: bool,
    /// Where the model's files are fetched from the first time (a folder URL); empty: the default.
    pub model_url: String,
    /// The model the index is of (an [`EmbeddingModel::id`] of [`MODELS`]); empty when saving: keep
    /// the current one. Another than before makes the index again.
    #[serde(default)]
    pub model: String,
}

/// One piece of a turn's text waiting to be embedded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingChunk {
    /// The turn's row id.
    pub turn_id: i64,
    /// The chunk's position in the turn (0 for the first or only one).
    pub chunk: u32,
    /// The text to embed.
    pub text: String,
}

/// How far the semantic index has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct IndexProgress {
    /// Turns looked at (embedded, or with nothing to embed).
    pub indexed: u64,
    /// Turns in the archive.
    pub total: u64,
}

impl IndexProgress {
    /// Every turn has been looked at.
    pub fn complete(&self) -> bool {
        self.indexed >= self.total
    }
}

/// The chunks of `text` to embed, in order: the whole text when it is short, else windows of
/// [`CHUNK_CHARS`] characters overlapping by [`CHUNK_OVERLAP`], cut at whitespace where there is
/// some, at most [`MAX_CHUNKS`]. Blank text has none.
pub fn chunks(text: &str) -> Vec<&str> {
    let text = text.trim();
    if text.is_empty() {
        return Vec::new();
    }
    // Byte offsets of char boundaries, so windows count characters, never split one.
    let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain(std::iter::once(text.len())).collect();
    let n = bounds.len() - 1;
    if n <= CHUNK_CHARS {
        return vec![text];
    }
    let mut out = Vec::new();
    let mut start = 0usize;
    while start < n && out.len() < MAX_CHUNKS {
        let mut end = (start + CHUNK_CHARS).min(n);
        if end < n {
            // Back up to the last whitespace in the window's final quarter, if there is one.
            let floor = end - CHUNK_CHARS / 4;
            if let Some(cut) = (floor..end).rev().find(|&i| text[bounds[i]..].starts_with(char::is_whitespace)) {
                end = cut;
            }
        }
        let piece = text[bounds[start]..bounds[end]].trim();
        if !piece.is_empty() {
            out.push(piece);
        }
        if end >= n {
            break;
        }
        start = end.saturating_sub(CHUNK_OVERLAP).max(start + 1);
        // Start the next window at a word's beginning.
        while start < end && !text[bounds[start - 1]..].starts_with(char::is_whitespace) {
            start += 1;
        }
    }
    out
}

/// Characters of the turn before that precede a turn's first chunk when it is embedded: a sentence
/// or two, so that a short reply is embedded with what it answers, without doubling the model's work
/// per turn (its cost grows with the tokens embedded).
pub const CONTEXT_CHARS: usize = 150;

/// The end of `previous` (a turn's text) kept as context: its last [`CONTEXT_CHARS`] characters,
/// from a word's beginning.
pub fn context_tail(previous: &str) -> &str {
    let previous = previous.trim();
    let n = previous.chars().count();
    if n <= CONTEXT_CHARS {
        return previous;
    }
    let start = previous.char_indices().nth(n - CONTEXT_CHARS).map(|(i, _)| i).unwrap_or(0);
    let tail = &previous[start..];
    match tail.find(char::is_whitespace) {
        Some(space) => tail[space..].trim_start(),
        None => tail,
    }
}

/// What is embedded for a turn's first chunk: the end of the turn before, then the chunk.
pub fn with_context(context: &str, chunk: &str) -> String {
    if context.is_empty() {
        chunk.to_owned()
    } else {
        format!("{context}\n{chunk}")
    }
}

/// Most turns in one indexing batch.
pub const BATCH_MAX_TURNS: usize = 16;
/// About how long an indexing batch should take. A search embeds its query in the same model
/// workers, after the batch they are embedding: this bounds its wait, whatever the model and device.
pub const BATCH_TARGET_MS: f64 = 500.0;

/// Turns for the next indexing batch, after the last one embedded `last_turns` turns in `last_ms`:
/// about [`BATCH_TARGET_MS`] of work at that pace, never more than twice the last (one batch of short
/// turns says little about long ones) nor [`BATCH_MAX_TURNS`], and at least `least` (a turn for each
/// model worker, so none sits idle). Measured through the app in headless Chromium (BENCHMARKS.md):
/// a batch of 16 turns took about 1.3 s with all-MiniLM-L6-v2 and two workers, and all-mpnet-base-v2
/// about ten times that, so a fixed 16 made a search wait that long behind it.
pub fn next_batch_turns(last_turns: usize, last_ms: f64, least: usize) -> usize {
    let least = least.max(1);
    let most = (2 * last_turns.max(1)).min(BATCH_MAX_TURNS).max(least);
    if last_ms.is_nan() || last_ms <= 0.0 {
        return most;
    }
    let at_pace = (last_turns.max(1) as f64 * BATCH_TARGET_MS / last_ms).floor();
    (at_pace as usize).clamp(least, most)
}

/// `v` (unit length) as int8: each component × 127, rounded. Dot products of two such vectors are
/// cosine similarities × 127², to within a fraction of a percent.
pub fn quantize(v: &[f32]) -> Vec<i8> {
    v.iter().map(|x| (x * 127.0).round().clamp(-127.0, 127.0) as i8).collect()
}

/// The dot product of two int8 vectors of equal length.
pub fn dot(a: &[i8], b: &[i8]) -> i32 {
    // Sixteen lanes the compiler turns into SIMD multiply-adds; the scan over every vector of the
    // archive is this loop.
    let mut lanes = [0i32; 16];
    let (a16, b16) = (a.chunks_exact(16), b.chunks_exact(16));
    let tail: i32 = a16.remainder().iter().zip(b16.remainder()).map(|(&x, &y)| i32::from(x) * i32::from(y)).sum();
    for (x, y) in a16.zip(b16) {
        for i in 0..16 {
            lanes[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    lanes.iter().sum::<i32>() + tail
}

/// Up to this many vectors a search scores every one exactly; beyond it, a coarse pass on their signs
/// chooses [`COARSE_KEEP`] of them to score.
pub const EXACT_SCAN_MAX: usize = 20_000;
/// How many vectors the coarse pass keeps for exact scoring (a hundred times a search's 50 hits).
pub const COARSE_KEEP: usize = 5_000;
/// 64-bit words of the signs of a vector of `dims` components.
pub const fn bit_words(dims: usize) -> usize {
    dims.div_ceil(64)
}

/// The signs of `v`'s components as bits (1: positive), [`bit_words`]`(v.len())` words.
pub fn sign_bits(v: &[i8]) -> Vec<u64> {
    let mut out = vec![0u64; bit_words(v.len())];
    for (i, &x) in v.iter().enumerate() {
        if x > 0 {
            out[i / 64] |= 1 << (i % 64);
        }
    }
    out
}

/// How many bits differ between two sign vectors: the smaller, the closer their directions.
pub fn hamming(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

/// Reciprocal-rank fusion of a lexical and a semantic ranking (ids best first): each id scores
/// `Σ 1 / (RRF_K + rank)` over the lists it is in (rank from 1), best first; ties keep the lexical
/// order, then the semantic one. Each id says which lists found it.
pub fn fuse(lexical: &[i64], semantic: &[i64]) -> Vec<(i64, Matched, f64)> {
    let mut out: Vec<(i64, Matched, f64, usize)> = Vec::with_capacity(lexical.len() + semantic.len());
    for (rank, &id) in lexical.iter().enumerate() {
        if !out.iter().any(|o| o.0 == id) {
            out.push((id, Matched::Words, 1.0 / (RRF_K + rank as f64 + 1.0), out.len()));
        }
    }
    for (rank, &id) in semantic.iter().enumerate() {
        let add = 1.0 / (RRF_K + rank as f64 + 1.0);
        match out.iter_mut().find(|o| o.0 == id) {
            Some(o) if o.1 == Matched::Words => {
                o.1 = Matched::Both;
                o.2 += add;
            }
            Some(_) => {}
            None => out.push((id, Matched::Meaning, add, out.len())),
        }
    }
    crate::order::sort_by(&mut out, |a, b| b.2.total_cmp(&a.2).then(a.3.cmp(&b.3)));
    out.into_iter().map(|(id, m, s, _)| (id, m, s)).collect()
}

/// Share of a hit's fused score that the turns just before and just after it in the same session
/// add to theirs, when they are candidates too: what answers a question often sits next to what
/// matched it (the question a reply answers, the reply to a question, a fact stated over two turns).
/// Tuned on LoCoMo's conversations 0–4 (BENCHMARKS.md): alone, 0.3 raised hybrid recall at 5 / 10 /
/// 25 by 0.7 / 2.1 / 1.4 points there and 0.4 / 2.3 / 3.7 on the held-out 5–9; 0.2 and 0.3 were about
/// equal on 0–4, 0.1 gained less, 0.4 and 0.5 lost at 5.
pub const NEIGHBOUR_SHARE: f64 = 0.3;

/// `fused` (best first, from [`fuse`]) with each candidate's score raised by [`NEIGHBOUR_SHARE`] of
/// its best adjacent candidate's: `place` says where a candidate is (a session id and turn number;
/// `None` leaves it as it is), and two candidates are adjacent when they are in the same session one
/// turn apart. Only candidates are lifted (a turn found by neither list stays out), so no turn
/// outside the search's scope or roles can come in. Best first again; ties keep `fused`'s order.
pub fn lift_neighbours(
    fused: Vec<(i64, Matched, f64)>,
    place: impl Fn(i64) -> Option<(String, i64)>,
) -> Vec<(i64, Matched, f64)> {
    let places: Vec<Option<(String, i64)>> = fused.iter().map(|f| place(f.0)).collect();
    let at: std::collections::HashMap<(&str, i64), f64> =
        places.iter().zip(&fused).filter_map(|(p, f)| p.as_ref().map(|(s, n)| ((s.as_str(), *n), f.2))).collect();
    let mut out: Vec<(i64, Matched, f64, usize)> = fused
        .iter()
        .zip(&places)
        .enumerate()
        .map(|(i, (f, p))| {
            let best = p.as_ref().map_or(0.0, |(s, n)| {
                [n - 1, n + 1].iter().filter_map(|m| at.get(&(s.as_str(), *m))).fold(0.0, |a: f64, &b| a.max(b))
            });
            (f.0, f.1, f.2 + NEIGHBOUR_SHARE * best, i)
        })
        .collect();
    crate::order::sort_by(&mut out, |a, b| b.2.total_cmp(&a.2).then(a.3.cmp(&b.3)));
    out.into_iter().map(|(id, m, s, _)| (id, m, s)).collect()
}

/// Share of the best score among a session's candidates that each candidate of that session adds to
/// its own (the best one included): what answers a question about a conversation is often said in the
/// same session as what matched it best (a plan told, then how it went), beyond the turns just next to
/// it. Tuned on LoCoMo's conversations 0–4 after [`NEIGHBOUR_SHARE`] (BENCHMARKS.md): 0.3 raised
/// hybrid recall at 5 / 10 / 25 by 0.5 / 1.7 / 1.0 points there and 0.6 / 1.5 / 0.8 on the held-out
/// 5–9; 0.1 and 0.2 gained less at 10, 0.4 and more lost at 5; adding a share of the session's summed
/// score instead lowered recall at 5.
pub const SESSION_SHARE: f64 = 0.3;

/// `fused` (best first) with each candidate's score raised by [`SESSION_SHARE`] of the best score
/// among the candidates of its session: `session` says which session a candidate is in (`None`
/// leaves it as it is). Only candidates are lifted. Best first again; ties keep `fused`'s order.
pub fn lift_sessions(
    fused: Vec<(i64, Matched, f64)>,
    session: impl Fn(i64) -> Option<String>,
) -> Vec<(i64, Matched, f64)> {
    let sessions: Vec<Option<String>> = fused.iter().map(|f| session(f.0)).collect();
    let mut best: std::collections::HashMap<&str, f64> = std::collections::HashMap::new();
    for (s, f) in sessions.iter().zip(&fused) {
        if let Some(s) = s {
            let b = best.entry(s.as_str()).or_insert(f.2);
            *b = b.max(f.2);
        }
    }
    let mut out: Vec<(i64, Matched, f64, usize)> = fused
        .iter()
        .zip(&sessions)
        .enumerate()
        .map(|(i, (f, s))| {
            let add = s.as_deref().and_then(|s| best.get(s)).copied().unwrap_or(0.0);
            (f.0, f.1, f.2 + SESSION_SHARE * add, i)
        })
        .collect();
    crate::order::sort_by(&mut out, |a, b| b.2.total_cmp(&a.2).then(a.3.cmp(&b.3)));
    out.into_iter().map(|(id, m, s, _)| (id, m, s)).collect()
}

#[cfg(test)]
#[path = "semantic_tests.rs"]
mod tests;
