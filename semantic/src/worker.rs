//! The embedder as JavaScript sees it in the browser worker (`worker/semantic-worker.js`, which fetches
//! and caches the model files and speaks the worker protocol): a class built from the three files'
//! bytes, with `embed` returning every vector in one `Float32Array`.

use crate::{Embedder, Precision};
use wasm_bindgen::prelude::*;

/// [`Embedder`] for JavaScript.
#[wasm_bindgen]
pub struct SemanticEmbedder {
    inner: Embedder,
}

#[wasm_bindgen]
impl SemanticEmbedder {
    /// Loads the model from the contents of `config.json`, `tokenizer.json` and `model.safetensors`.
    #[wasm_bindgen(constructor)]
    pub fn new(config: &[u8], tokenizer: &[u8], weights: &[u8]) -> Result<SemanticEmbedder, JsError> {
        Ok(SemanticEmbedder { inner: Embedder::load(config, tokenizer, weights)? })
    }

    /// The model with its dense layers in floats, as trained: slower, for measurements and checks
    /// (the default computes in 8-bit integers).
    #[wasm_bindgen(js_name = withFloats)]
    pub fn with_floats(config: &[u8], tokenizer: &[u8], weights: &[u8]) -> Result<SemanticEmbedder, JsError> {
        Ok(SemanticEmbedder { inner: Embedder::load_with(config, tokenizer, weights, Precision::F32)? })
    }

    /// Length of each vector.
    pub fn dims(&self) -> usize {
        self.inner.dims()
    }

    /// At most this many texts go through the model at once.
    #[wasm_bindgen(js_name = setMaxBatch)]
    pub fn set_max_batch(&mut self, max_batch: usize) {
        self.inner.set_max_batch(max_batch);
    }

    /// The vectors of `texts`, one after another (`texts.length * dims` numbers).
    pub fn embed(&self, texts: Vec<String>) -> Result<Vec<f32>, JsError> {
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        Ok(self.inner.embed(&texts)?.concat())
    }
}

/// The words part of a search by words and meaning: `query` without its stop words ([`crate::query`]).
#[wasm_bindgen(js_name = queryWords)]
pub fn query_words(query: &str) -> String {
    crate::query::query_words(query)
}
