//! The textbook baseline: Okapi BM25 (k1 = 1.2, b = 0.75, idf = ln(1 + (N − df + 0.5)/(df + 0.5)))
//! over lowercase alphanumeric tokens, one index per workspace, every document scored (no candidate
//! cap). Also the bench's stop-word list, for the second form of each question.

use std::collections::HashMap;

/// Term-frequency saturation.
pub const K1: f64 = 1.2;
/// Length normalisation.
pub const B: f64 = 0.75;

/// The stop words of the second form of each question: the list the model's worker takes out of a
/// hybrid search's words part (`cowork_semantic::query`), so both forms measure the same list.
pub use cowork_semantic::query::STOP_WORDS;

/// Lowercase runs of letters and digits; everything else separates them.
pub fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(str::to_lowercase).collect()
}

/// `text` without its stop words: its other tokens, lowercase, joined by spaces.
pub fn without_stop_words(text: &str) -> String {
    tokens(text).into_iter().filter(|t| !STOP_WORDS.contains(&t.as_str())).collect::<Vec<_>>().join(" ")
}

/// A BM25 index of documents identified by `i64` ids (the stored turns' ids).
#[derive(Debug, Clone, Default)]
pub struct Bm25 {
    ids: Vec<i64>,
    lengths: Vec<f64>,
    avg_len: f64,
    /// Term → (document index, term frequency), one entry per document holding it.
    postings: HashMap<String, Vec<(usize, u32)>>,
}

impl Bm25 {
    /// Indexes `docs` (id, text).
    pub fn new<'a>(docs: impl IntoIterator<Item = (i64, &'a str)>) -> Bm25 {
        let mut index = Bm25::default();
        for (id, text) in docs {
            let doc = index.ids.len();
            index.ids.push(id);
            let toks = tokens(text);
            index.lengths.push(toks.len() as f64);
            let mut tf: HashMap<String, u32> = HashMap::new();
            for t in toks {
                *tf.entry(t).or_default() += 1;
            }
            for (t, n) in tf {
                index.postings.entry(t).or_default().push((doc, n));
            }
        }
        let n = index.ids.len().max(1) as f64;
        index.avg_len = index.lengths.iter().sum::<f64>() / n;
        index
    }

    /// Documents indexed.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The idf of a term found in `df` of the documents.
    pub fn idf(&self, df: usize) -> f64 {
        let (n, df) = (self.ids.len() as f64, df as f64);
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// The best `limit` documents for `query` (each distinct query term counted once), best first;
    /// among equal scores the larger id (the newer turn) first, as the archive's search orders them.
    /// Only documents holding at least one query term are returned.
    pub fn search(&self, query: &str, limit: usize) -> Vec<(i64, f64)> {
        let mut terms = tokens(query);
        terms.sort();
        terms.dedup();
        let mut scores: HashMap<usize, f64> = HashMap::new();
        for term in &terms {
            let Some(postings) = self.postings.get(term) else { continue };
            let idf = self.idf(postings.len());
            for &(doc, tf) in postings {
                let tf = f64::from(tf);
                let norm = K1 * (1.0 - B + B * self.lengths[doc] / self.avg_len);
                *scores.entry(doc).or_default() += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let mut ranked: Vec<(i64, f64)> = scores.into_iter().map(|(doc, s)| (self.ids[doc], s)).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        ranked.truncate(limit);
        ranked
    }
}
