//! Recall of the evidence turns at k, the metric of the LoCoMo paper's retrieval table: per question,
//! the fraction of its evidence turns among the first k retrieved; averaged over questions.
//!
//! By evidence age, a question counts in each third of its conversation (oldest, middle, newest
//! turns) that holds some of its evidence, scored on that evidence only: a question whose two evidence
//! turns are one old and one new, with only the new one found, scores 0 in the oldest third and 1 in
//! the newest.

use super::Category;
use serde_json::{json, Value};

/// The k scored.
pub const KS: [usize; 3] = [5, 10, 25];

/// The fraction of `evidence` among the first `k` of `ranked` (0 for no evidence).
pub fn recall_at(ranked: &[i64], evidence: &[i64], k: usize) -> f64 {
    if evidence.is_empty() {
        return 0.0;
    }
    let top = &ranked[..k.min(ranked.len())];
    evidence.iter().filter(|e| top.contains(e)).count() as f64 / evidence.len() as f64
}

/// A running mean of recall at each of [`KS`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    sums: [f64; 3],
    /// Questions counted.
    pub n: usize,
}

impl Tally {
    /// Counts one question: `ranked` the retrieved turn ids, `evidence` its evidence turn ids.
    pub fn add(&mut self, ranked: &[i64], evidence: &[i64]) {
        for (sum, k) in self.sums.iter_mut().zip(KS) {
            *sum += recall_at(ranked, evidence, k);
        }
        self.n += 1;
    }

    /// Mean recall at each of [`KS`], as fractions (NaN when nothing was counted).
    pub fn means(&self) -> [f64; 3] {
        self.sums.map(|s| s / self.n as f64)
    }

    /// `{"n", "r@5", "r@10", "r@25"}` in percent.
    pub fn to_json(&self) -> Value {
        let [a, b, c] = self.means().map(|m| if m.is_nan() { Value::Null } else { json!((m * 1000.0).round() / 10.0) });
        json!({"n": self.n, "r@5": a, "r@10": b, "r@25": c})
    }
}

/// Recall at k over a set of questions: overall, per evidence age third, per category.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Scores {
    /// Every question.
    pub overall: Tally,
    /// Oldest, middle, newest third of the conversation (see the module's docs).
    pub by_age: [Tally; 3],
    /// Per category, in [`Category::ALL`] order.
    pub by_category: [Tally; 4],
}

/// Labels of the age thirds, oldest first.
pub const AGE_LABELS: [&str; 3] = ["oldest", "middle", "newest"];

impl Scores {
    /// Counts one question: `ranked` the retrieved turn ids, `evidence` its evidence turns, each with
    /// its age third (0 oldest … 2 newest).
    pub fn add(&mut self, category: Category, ranked: &[i64], evidence: &[(i64, usize)]) {
        let ids: Vec<i64> = evidence.iter().map(|(id, _)| *id).collect();
        self.overall.add(ranked, &ids);
        self.by_category[category.index()].add(ranked, &ids);
        for (third, tally) in self.by_age.iter_mut().enumerate() {
            let in_third: Vec<i64> = evidence.iter().filter(|(_, t)| *t == third).map(|(id, _)| *id).collect();
            if !in_third.is_empty() {
                tally.add(ranked, &in_third);
            }
        }
    }

    /// The scores as JSON (percent).
    pub fn to_json(&self) -> Value {
        let by_age: serde_json::Map<String, Value> =
            AGE_LABELS.iter().zip(&self.by_age).map(|(l, t)| (l.to_string(), t.to_json())).collect();
        let by_category: serde_json::Map<String, Value> =
            Category::ALL.iter().zip(&self.by_category).map(|(c, t)| (c.label().to_string(), t.to_json())).collect();
        json!({"overall": self.overall.to_json(), "by_age": by_age, "by_category": by_category})
    }
}
