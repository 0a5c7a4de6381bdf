//! The retrievers compared, each asked each question in two forms.
//!
//! [`Retriever::Lexical`] is the archive's search exactly as `conversation_recall` runs it for
//! `scope: "workspace"` (`core/src/recall.rs`): a [`SearchQuery`] of the model's text, scoped to the
//! recalling session's workspace, every role, no prefix matching, [`RECALL_LIMIT`] hits, through
//! `Store::search`. [`Retriever::Bm25`] is the textbook baseline over the same turns ([`super::bm25`]).

use super::bm25::{without_stop_words, Bm25};
use cowork_core::store::Store;
use cowork_core::{Result, SearchQuery, SearchScope};
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
    // TODO(hybrid): add `Hybrid` here once `Store::search_hybrid(&SearchQuery, Option<&[f32]>)` lands
    // (core/src/store/hybrid.rs), with its label below, `ALL` and the arm in `retrieve`.
}

impl Retriever {
    /// Every retriever run, in table order.
    pub const ALL: [Retriever; 2] = [Retriever::Lexical, Retriever::Bm25];

    /// A short label for tables and JSON keys.
    pub fn label(self) -> &'static str {
        match self {
            Retriever::Lexical => "Store::search",
            Retriever::Bm25 => "BM25 (textbook)",
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
            // TODO(hybrid): the new arm, once the store has vectors (see `Context`):
            //   Retriever::Hybrid => {
            //       let vector = ctx.embedder.embed(&[text]).remove(0);
            //       let hits = ctx.store.search_hybrid(&recall_query(text, workspace), Some(&vector))?;
            //       Ok(hits.into_iter().map(|h| h.turn_id).collect())
            //   }
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
    // TODO(hybrid): the embedder (`cowork_semantic::Embedder::load(config, tokenizer, safetensors)`,
    // model files in target/models/all-MiniLM-L6-v2/), loaded once. Before the questions the archive
    // is indexed: `store.set_semantic_model(..)`, then `store.semantic_pending(limit)` embedded in
    // batches (`embedder.embed(&texts)`) and saved with `store.put_vectors(&[(turn_id, chunk, vector)])`
    // until nothing is pending. Time the indexing separately from the questions.
}
