//! The retrievers compared, each asked each question in two forms.
//!
//! [`Retriever::Lexical`] is the archive's search exactly as `conversation_recall` runs it for
//! `scope: "workspace"` (`core/src/recall.rs`): a [`SearchQuery`] of the model's text, scoped to the
//! recalling session's workspace, every role, no prefix matching, [`RECALL_LIMIT`] hits, through
//! `Store::search`. [`Retriever::Bm25`] is the textbook baseline over the same turns ([`super::bm25`]).

use super::bm25::{without_stop_words, Bm25};
use cowork_core::semantic::EmbeddingModel;
use cowork_core::store::Store;
use cowork_core::{Result, SearchQuery, SearchScope};
use cowork_semantic::query::query_words;
use cowork_semantic::Embedder;
use std::collections::HashMap;

/// Hits asked for: the largest k scored (the store clamps any limit to 1..=50).
pub const RECALL_LIMIT: usize = 25;

/// How a question is put to a retriever.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// The question as asked ("When did Caroline go to the LGBTQ support group?").
    AsAsked,
    /// Its words without the bench's stop words ("caroline go lgbtq support group").
    NoStopWords,
}

impl Form {
    /// Both forms.
    pub const ALL: [Form; 2] = [Form::AsAsked, Form::NoStopWords];

    /// A short label for tables and JSON keys.
    pub fn label(self) -> &'static str {
        match self {
            Form::AsAsked => "as asked",
            Form::NoStopWords => "no stop words",
        }
    }

    /// `question` in this form.
    pub fn apply(self, question: &str) -> String {
        match self {
            Form::AsAsked => question.to_owned(),
            Form::NoStopWords => without_stop_words(question),
        }
    }
}

/// A way of finding the turns that answer a question, within one workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retriever {
    /// `Store::search` as `conversation_recall` calls it with workspace scope (FTS5 bm25 over the
    /// newest matches; all terms, or any term when no turn has them all).
    Lexical,
    /// Textbook Okapi BM25 over the workspace's turns.
    Bm25,
    /// `Store::search_hybrid` as `conversation_recall` calls it with recall by meaning on: the query
    /// embedded by the index's model (`report::run`'s), its words without stop words.
    Hybrid,
    /// The same with no words to match: the ranking of the vectors alone (for comparison).
    Meaning,
}

impl Retriever {
    /// Every retriever run, in table order.
    pub const ALL: [Retriever; 4] = [Retriever::Lexical, Retriever::Bm25, Retriever::Hybrid, Retriever::Meaning];

    /// A short label for tables and JSON keys.
    pub fn label(self) -> &'static str {
        match self {
            Retriever::Lexical => "Store::search",
            Retriever::Bm25 => "BM25 (textbook)",
            Retriever::Hybrid => "Store::search_hybrid",
            Retriever::Meaning => "vectors alone",
        }
    }

    /// The stored turn ids it finds for `text` in `workspace`, best first, at most [`RECALL_LIMIT`].
    pub fn retrieve(self, ctx: &Context<'_>, workspace: &str, text: &str) -> Result<Vec<i64>> {
        match self {
            Retriever::Lexical => {
                Ok(ctx.store.search(&recall_query(text, workspace))?.into_iter().map(|h| h.turn_id).collect())
            }
            Retriever::Bm25 => Ok(ctx
                .bm25
                .get(workspace)
                .map(|index| index.search(text, RECALL_LIMIT).into_iter().map(|(id, _)| id).collect())
                .unwrap_or_default()),
            Retriever::Hybrid | Retriever::Meaning => {
                let vector = ctx.embed(text)?;
                // The words part is what the model's worker answers with the embedding: the query
                // without its stop words (`cowork_semantic::query`, as `conversation_recall` gets it).
                let words = if self == Retriever::Hybrid { query_words(text) } else { String::new() };
                let hits = ctx.store.search_hybrid(&recall_query(&words, workspace), Some(&vector))?;
                Ok(hits.into_iter().map(|h| h.turn_id).collect())
            }
        }
    }
}

/// The `SearchQuery` `conversation_recall`'s `search` builds for `scope: "workspace"` and a limit of
/// [`RECALL_LIMIT`] (`core/src/recall.rs`: the recalling session's workspace, no role filter, no
/// prefix matching).
pub fn recall_query(text: &str, workspace: &str) -> SearchQuery {
    SearchQuery {
        text: text.to_owned(),
        scope: SearchScope::Workspace { workspace: workspace.to_owned() },
        roles: Vec::new(),
        limit: RECALL_LIMIT,
        prefix_last: false,
    }
}

/// What the retrievers read: the archive, and the BM25 index of each workspace.
pub struct Context<'a> {
    /// The archive holding every conversation, one workspace each.
    pub store: &'a Store,
    /// Workspace → the BM25 index of its turns.
    pub bm25: HashMap<String, Bm25>,
    /// The app's embedding model, loaded once.
    pub embedder: &'a Embedder,
    /// Questions embedded so far (each is asked of two retrievers).
    pub embedded: std::cell::RefCell<HashMap<String, Vec<f32>>>,
}

impl Context<'_> {
    /// `text`'s embedding, computed once.
    fn embed(&self, text: &str) -> Result<Vec<f32>> {
        if let Some(v) = self.embedded.borrow().get(text) {
            return Ok(v.clone());
        }
        let v = self
            .embedder
            .embed(&[text])
            .map_err(|e| cowork_core::Error::Invalid(format!("embedding a question: {e}")))?
            .remove(0);
        self.embedded.borrow_mut().insert(text.to_owned(), v.clone());
        Ok(v)
    }
}

/// Loads `model` (one of `cowork_core::semantic::MODELS`) from the folder setup installs the models in
/// (`target/models/<name>/`, or `COWORK_MODELS_DIR`).
pub fn load_embedder(model: &EmbeddingModel) -> Result<Embedder> {
    let dir = std::env::var_os("COWORK_MODELS_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/models"))
        .join(model.name);
    let read = |file: &str| {
        std::fs::read(dir.join(file)).map_err(|e| {
            cowork_core::Error::Invalid(format!(
                "reading {} ({e}): scripts/setup.sh installs the models (scripts/model.sh)",
                dir.join(file).display()
            ))
        })
    };
    Embedder::load(&read("config.json")?, &read("tokenizer.json")?, &read("model.safetensors")?)
        .map_err(|e| cowork_core::Error::Invalid(format!("loading the model: {e}")))
}

/// Embeds every turn of `store` not yet in its semantic index, as the app's worker does (a batch at
/// a time, each saved with the cursor). Returns the chunks embedded.
pub fn index(store: &mut Store, embedder: &Embedder) -> Result<usize> {
    let mut embedded = 0;
    loop {
        let batch = store.semantic_pending(64)?;
        if batch.is_empty() {
            return Ok(embedded);
        }
        let texts: Vec<&str> = batch.chunks.iter().map(|c| c.text.as_str()).collect();
        let vectors =
            embedder.embed(&texts).map_err(|e| cowork_core::Error::Invalid(format!("embedding turns: {e}")))?;
        store.put_vectors(&batch, &vectors)?;
        embedded += vectors.len();
    }
}
