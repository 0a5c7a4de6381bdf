//! Running the benchmark over the conversations ([`run`]) and its results: a table per question set
//! on stdout ([`Results::print`]) and `bench-results/locomo.json` ([`Results::to_json`]).

use super::archive::{self, Imported};
use super::bm25::{self, Bm25};
use super::metric::{Scores, Tally, AGE_LABELS, KS};
use super::retriever::{Context, Form, Retriever, RECALL_LIMIT};
use super::{age_third, Category, Conversation, QuestionCounts};
use cowork_core::semantic::EmbeddingModel;
use cowork_core::store::Store;
use cowork_core::Result;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Instant;

/// Conversations 0..TUNE_CONVERSATIONS (26, 30, 41, 42, 43) are the tuning set; the rest (44, 47, 48,
/// 49, 50) are held out: tune search on the first, check on the second.
pub const TUNE_CONVERSATIONS: usize = 5;

/// The LoCoMo paper's retrieval row for comparison (Table 3: DRAGON over dialogue turns, recall of
/// the evidence at k = 5, 10, 25, percent).
pub const PAPER_ROW: (&str, [f64; 3]) = ("DRAGON, dialogue turns (LoCoMo paper, Table 3)", [58.8, 67.5, 79.9]);

/// The two question sets.
pub const SET_LABELS: [&str; 2] = ["tuning set", "held out"];

/// One retriever asked in one form: its scores on each set and the time its searches took.
#[derive(Debug, Clone)]
pub struct Row {
    /// The retriever.
    pub retriever: Retriever,
    /// The question form.
    pub form: Form,
    /// Scores on the tuning set and on the held-out set.
    pub sets: [Scores; 2],
    /// Seconds spent retrieving, all questions.
    pub seconds: f64,
}

/// A whole run.
#[derive(Debug, Clone)]
pub struct Results {
    /// One per retriever × form.
    pub rows: Vec<Row>,
    /// The sample ids of each set's conversations.
    pub set_conversations: [Vec<String>; 2],
    /// Turns imported.
    pub turns: usize,
    /// Questions read, kept and left out, all conversations.
    pub counts: QuestionCounts,
    /// Seconds to import the conversations into the archive.
    pub import_seconds: f64,
    /// Seconds to build the BM25 indexes.
    pub index_seconds: f64,
    /// The model the semantic index is of (its name).
    pub model: &'static str,
}

/// Imports `convs` into `store` (one workspace each) and asks every question of every conversation
/// of every retriever in both forms. Conversation `i` belongs to the tuning set when
/// `i < TUNE_CONVERSATIONS`. The semantic index is of `model` (one already there of another model is
/// dropped and made again).
pub fn run(store: &mut Store, convs: &[Conversation], model: &EmbeddingModel) -> Result<Results> {
    store.set_semantic_model(model.id)?;
    let t = Instant::now();
    let imported: Vec<Imported> = convs.iter().map(|c| archive::import(store, c)).collect::<Result<_>>()?;
    let import_seconds = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let bm25: HashMap<String, Bm25> = imported
        .iter()
        .map(|i| (i.workspace.clone(), Bm25::new(i.texts.iter().map(|(id, text)| (*id, text.as_str())))))
        .collect();
    let index_seconds = t.elapsed().as_secs_f64();
    let embedder = super::retriever::load_embedder(model)?;
    let t = Instant::now();
    let chunks = super::retriever::index(store, &embedder)?;
    let embed_seconds = t.elapsed().as_secs_f64();
    println!(
        "semantic index ({}): {chunks} chunks embedded in {embed_seconds:.1} s ({:.1} turns/s, native)",
        model.name,
        chunks as f64 / embed_seconds
    );
    let ctx = Context { store, bm25, embedder: &embedder, embedded: Default::default() };
    let mut rows = Vec::new();
    for retriever in Retriever::ALL {
        for form in Form::ALL {
            let mut row = Row { retriever, form, sets: [Scores::default(); 2], seconds: 0.0 };
            for (i, (conv, imp)) in convs.iter().zip(&imported).enumerate() {
                let (positions, total) = conv.positions();
                let set = usize::from(i >= TUNE_CONVERSATIONS);
                for q in &conv.questions {
                    let text = form.apply(&q.text);
                    let t = Instant::now();
                    let ranked = retriever.retrieve(&ctx, &imp.workspace, &text)?;
                    row.seconds += t.elapsed().as_secs_f64();
                    let evidence: Vec<(i64, usize)> =
                        q.evidence.iter().map(|d| (imp.turn_ids[d], age_third(positions[d], total))).collect();
                    row.sets[set].add(q.category, &ranked, &evidence);
                }
            }
            rows.push(row);
        }
    }
    let mut counts = QuestionCounts::default();
    convs.iter().for_each(|c| counts.add(c.counts));
    let ids = |convs: &[Conversation]| convs.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
    let (tune, held_out) = convs.split_at(TUNE_CONVERSATIONS.min(convs.len()));
    Ok(Results {
        rows,
        set_conversations: [ids(tune), ids(held_out)],
        turns: imported.iter().map(|i| i.turn_ids.len()).sum(),
        counts,
        import_seconds,
        index_seconds,
        model: model.name,
    })
}

/// "58.8 67.5 79.9": recall at each k in percent ("–" when nothing was counted).
fn cell(means: [f64; 3]) -> String {
    means.map(|m| if m.is_nan() { "  –  ".to_owned() } else { format!("{:5.1}", m * 100.0) }).join(" ")
}

impl Results {
    /// Questions counted in set `set` (0 tuning, 1 held out).
    pub fn questions(&self, set: usize) -> usize {
        self.rows.first().map_or(0, |r| r.sets[set].overall.n)
    }

    /// The tables: per set, recall overall and by evidence age, then by category.
    pub fn print(&self) {
        for (set, label) in SET_LABELS.iter().enumerate() {
            if self.set_conversations[set].is_empty() {
                continue;
            }
            let first = if set == 0 { 0 } else { TUNE_CONVERSATIONS };
            let last = first + self.set_conversations[set].len() - 1;
            println!(
                "\nLoCoMo, {label} (conversations {first}–{last}: {}), {} questions, vectors of {} — recall of the evidence turns, %",
                self.set_conversations[set].join(", "),
                self.questions(set),
                self.model
            );
            let ages: Vec<String> = AGE_LABELS
                .iter()
                .zip(&self.rows[0].sets[set].by_age)
                .map(|(l, t)| format!("{l} 1/3 ({})", t.n))
                .collect();
            let cats: Vec<String> = Category::ALL
                .iter()
                .zip(&self.rows[0].sets[set].by_category)
                .map(|(c, t)| format!("{} ({})", c.label(), t.n))
                .collect();
            let overall = std::iter::once(format!("overall ({})", self.questions(set))).chain(ages).collect::<Vec<_>>();
            self.table(set, &overall, |s| std::iter::once(s.overall).chain(s.by_age).collect());
            self.table(set, &cats, |s| s.by_category.to_vec());
        }
        let (paper, figures) = PAPER_ROW;
        println!("\nfor comparison, {paper}: {} (as published)", cell(figures.map(|f| f / 100.0)));
        println!(
            "{} turns imported in {:.2} s, BM25 indexed in {:.3} s; {} of {} questions (categories 1–4) kept, {} \
             adversarial left out, {} evidence ids naming no turn skipped",
            self.turns,
            self.import_seconds,
            self.index_seconds,
            self.counts.kept,
            self.counts.asked,
            self.counts.adversarial,
            self.counts.unresolved_evidence
        );
        for row in &self.rows {
            let n = (self.questions(0) + self.questions(1)).max(1);
            println!(
                "  {}, {}: {:.2} s ({:.2} ms a question)",
                row.retriever.label(),
                row.form.label(),
                row.seconds,
                row.seconds * 1000.0 / n as f64
            );
        }
    }

    /// One table of set `set`: a column of R@k per heading, a row per retriever × form.
    fn table(&self, set: usize, heads: &[String], pick: fn(&Scores) -> Vec<Tally>) {
        const W: usize = 34;
        let ks = KS.map(|k| format!("{:>5}", format!("R@{k}"))).join(" ");
        println!("{:W$} | {}", "", heads.iter().map(|h| format!("{h:<17}")).collect::<Vec<_>>().join(" | "));
        println!("{:W$} | {}", "retriever, question form", vec![ks; heads.len()].join(" | "));
        for row in &self.rows {
            let name = format!("{}, {}", row.retriever.label(), row.form.label());
            let cells: Vec<String> = pick(&row.sets[set]).iter().map(|t| cell(t.means())).collect();
            println!("{name:W$} | {}", cells.join(" | "));
        }
    }

    /// Everything measured, for `bench-results/locomo.json`.
    pub fn to_json(&self) -> Value {
        let sets: serde_json::Map<String, Value> = ["tune", "held_out"]
            .iter()
            .enumerate()
            .map(|(set, key)| {
                let rows: Vec<Value> = self
                    .rows
                    .iter()
                    .map(|r| json!({"retriever": r.retriever.label(), "form": r.form.label(), "scores": r.sets[set].to_json()}))
                    .collect();
                let v = json!({"conversations": self.set_conversations[set], "questions": self.questions(set), "rows": rows});
                (key.to_string(), v)
            })
            .collect();
        let timing: Vec<Value> = self
            .rows
            .iter()
            .map(|r| json!({"retriever": r.retriever.label(), "form": r.form.label(), "seconds": r.seconds}))
            .collect();
        json!({
            "benchmark": "LoCoMo retrieval: recall of the evidence turns at k (percent)",
            "data": "snap-research/locomo, data/locomo10.zip (no licence stated; not in this repository)",
            "categories": Category::ALL.map(|c| c.label()),
            "model": self.model,
            "ks": KS, "recall_limit": RECALL_LIMIT,
            "stop_words": bm25::STOP_WORDS.len(),
            "turns": self.turns,
            "questions": {"asked": self.counts.asked, "kept": self.counts.kept,
                          "adversarial_left_out": self.counts.adversarial,
                          "unresolved_evidence_ids": self.counts.unresolved_evidence},
            "sets": sets,
            "paper": {"retriever": PAPER_ROW.0, "r@5": PAPER_ROW.1[0], "r@10": PAPER_ROW.1[1], "r@25": PAPER_ROW.1[2]},
            "seconds": {"import": self.import_seconds, "bm25_index": self.index_seconds, "retrieval": timing},
        })
    }
}
