//! Sentence embeddings for semantic recall: [`MODEL_ID`] (sentence-transformers' all-MiniLM-L6-v2, a
//! 6-layer BERT with 384-dimensional output, the default) or all-mpnet-base-v2 (a 12-layer MPNet with
//! 768, `mpnet.rs`) run with candle, from the model's own files held in memory; `config.json`'s
//! `model_type` says which encoder (`encoder.rs` has the layers both share, and BERT's embeddings).
//!
//! The dense layers, nearly all of the work, compute in 8-bit integers by default (`int8.rs`,
//! [`Precision`]): about 1.5 times as fast in a browser, and the vectors stay within a cosine of 0.99
//! of the float model's (LoCoMo's recall in BENCHMARKS.md is measured with them).
//!
//! [`Embedder::load`] takes the three files as bytes (`config.json`, `tokenizer.json`,
//! `model.safetensors`; no filesystem, so the same code runs natively and in a browser worker), and
//! [`Embedder::embed`] gives sentence-transformers' vectors: the text tokenized and cut to
//! [`MAX_TOKENS`] tokens, the encoder's forward pass, the mean of the token vectors over the attention mask,
//! and L2 normalisation, so the dot product of two vectors is their cosine similarity.
//!
//! A batch is sorted by token count and run in groups of similar length ([`Embedder::set_max_batch`]),
//! so a short text is not padded to the length of a long one; padding is masked, so a text's vector
//! does not depend on what it is batched with (up to float rounding).
//!
//! In a browser the crate is built as a module worker (`worker.rs` on wasm32, `worker/` for the
//! JavaScript side; `scripts/semantic.sh`).

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
pub use encoder::Precision;
use encoder::{Bert, BertConfig};
use std::fmt;
use tokenizers::pipeline::{EncodeOptions, Override, PipelineTokenizer};
use tokenizers::{TruncationDirection, TruncationParams, TruncationStrategy};

mod encoder;
mod int8;
mod mpnet;
pub mod query;
#[cfg(target_arch = "wasm32")]
mod worker;

/// The default model, as the worker protocol and the model folder name it.
pub const MODEL_ID: &str = "all-MiniLM-L6-v2";

/// The files of a model, in the order [`Embedder::load`] takes them.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Longest input in tokens, special tokens included (sentence-transformers' `max_seq_length` for this
/// model); longer texts are cut at the end.
pub const MAX_TOKENS: usize = 256;

/// Default for [`Embedder::set_max_batch`]. Small: texts of a group are padded to its longest, and
/// on chat turns of 10–80 words the padding costs more than batching saves. Measured on
/// `bench/turns.txt` (all-MiniLM-L6-v2, turns/s at 1 / 2 / 4 / 8 texts a pass): natively 26.9 / 28.8 /
/// 31.6 / 27.8; in headless Chromium, messages of 8 turns, 10.6 / 11.7 / 10.2 / 8.4.
pub const DEFAULT_MAX_BATCH: usize = 2;

/// How [`Embedder::load`] runs the dense layers: in 8-bit integers (`int8.rs`).
pub const DEFAULT_PRECISION: Precision = Precision::Int8;

/// Why the model could not be loaded or run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbedError {
    /// `config.json` is not a BERT or MPNet configuration.
    Config(String),
    /// `tokenizer.json` could not be read, or a text could not be tokenized.
    Tokenizer(String),
    /// `model.safetensors` lacks a tensor the configuration asks for, or is not safetensors.
    Weights(String),
    /// The forward pass failed.
    Inference(String),
}

impl fmt::Display for EmbedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Config(e) => write!(f, "the model's config.json is not a BERT or MPNet configuration: {e}"),
            Self::Tokenizer(e) => write!(f, "the model's tokenizer failed: {e}"),
            Self::Weights(e) => write!(f, "the model's weights (model.safetensors) could not be loaded: {e}"),
            Self::Inference(e) => write!(f, "the embedding model failed: {e}"),
        }
    }
}

impl std::error::Error for EmbedError {}

/// The encoder a model's `config.json` names.
enum Model {
    Bert(Bert),
    MpNet(mpnet::MpNet),
}

/// A model's `config.json`, read as its `model_type` says.
enum Configured {
    Bert(BertConfig),
    MpNet(mpnet::Config),
}

/// A loaded sentence-embedding model.
pub struct Embedder {
    model: Model,
    tokenizer: PipelineTokenizer,
    options: EncodeOptions,
    device: Device,
    dims: usize,
    max_batch: usize,
}

impl fmt::Debug for Embedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Embedder").field("dims", &self.dims).field("max_batch", &self.max_batch).finish()
    }
}

impl Embedder {
    /// Loads the model from the contents of its `config.json`, `tokenizer.json` and `model.safetensors`.
    pub fn load(config_json: &[u8], tokenizer_json: &[u8], safetensors: &[u8]) -> Result<Embedder, EmbedError> {
        Self::load_with(config_json, tokenizer_json, safetensors, DEFAULT_PRECISION)
    }

    /// [`load`](Self::load) with the dense layers computing in `precision`.
    pub fn load_with(
        config_json: &[u8],
        tokenizer_json: &[u8],
        safetensors: &[u8],
        precision: Precision,
    ) -> Result<Embedder, EmbedError> {
        let config_error = |e: serde_json::Error| EmbedError::Config(e.to_string());
        let kind: serde_json::Value = serde_json::from_slice(config_json).map_err(config_error)?;
        let config = if kind["model_type"] == "mpnet" {
            Configured::MpNet(serde_json::from_value(kind).map_err(config_error)?)
        } else {
            Configured::Bert(serde_json::from_value(kind).map_err(config_error)?)
        };
        let tokenizer = load_tokenizer(tokenizer_json)?;
        let device = Device::Cpu;
        let vb = VarBuilder::from_slice_safetensors(safetensors, DType::F32, &device)
            .map_err(|e| EmbedError::Weights(e.to_string()))?;
        let weights = |e: candle_core::Error| EmbedError::Weights(e.to_string());
        // The encoder, its width, and the longest input its positions allow.
        let (model, hidden_size, max_positions) = match config {
            Configured::Bert(c) => (
                Model::Bert(Bert::load(vb, &c, precision).map_err(weights)?),
                c.sizes.hidden_size,
                c.sizes.max_position_embeddings,
            ),
            Configured::MpNet(c) => {
                let positions = c.sizes.max_position_embeddings - c.pad_token_id as usize - 1;
                (Model::MpNet(mpnet::MpNet::load(vb, &c, precision).map_err(weights)?), c.sizes.hidden_size, positions)
            }
        };
        // The file itself pads every text to a fixed 128 tokens and cuts there: padding is done here
        // per group instead, and the cut is sentence-transformers' 256.
        let options = EncodeOptions {
            padding: Override::Off,
            truncation: Override::With(TruncationParams {
                direction: TruncationDirection::Right,
                max_length: MAX_TOKENS.min(max_positions),
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
            }),
            ..EncodeOptions::default()
        };
        Ok(Embedder { model, tokenizer, options, device, dims: hidden_size, max_batch: DEFAULT_MAX_BATCH })
    }

    /// Length of the vectors [`embed`](Self::embed) returns (384 for [`MODEL_ID`]).
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// At most this many texts go through the model at once (at least 1).
    pub fn set_max_batch(&mut self, max_batch: usize) {
        self.max_batch = max_batch.max(1);
    }

    /// Token ids of `text` as the model sees it: special tokens added, cut to [`MAX_TOKENS`].
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        Ok(self.tokenize(&[text])?.pop().unwrap_or_default())
    }

    /// One unit-length vector of [`dims`](Self::dims) numbers per text, in the order given.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let ids = self.tokenize(texts)?;
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| ids[i].len());
        let mut out = vec![Vec::new(); ids.len()];
        for group in order.chunks(self.max_batch) {
            let batch: Vec<&[u32]> = group.iter().map(|&i| ids[i].as_slice()).collect();
            for (&i, vector) in group.iter().zip(self.forward(&batch)?) {
                out[i] = vector;
            }
        }
        Ok(out)
    }

    fn tokenize(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings =
            self.tokenizer.encode(texts, &self.options).wait().map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        Ok(encodings.iter().map(|e| e.ids().iter().map(|t| t.id()).collect()).collect())
    }

    /// The model on one group: pads to the longest, runs the encoder, pools and normalises.
    fn forward(&self, batch: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let inference = |e: candle_core::Error| EmbedError::Inference(e.to_string());
        let rows = batch.len();
        let len = batch.iter().map(|ids| ids.len()).max().unwrap_or(0).max(1);
        let mut ids = vec![0u32; rows * len];
        let mut mask = vec![0u32; rows * len];
        for (r, tokens) in batch.iter().enumerate() {
            ids[r * len..r * len + tokens.len()].copy_from_slice(tokens);
            mask[r * len..r * len + tokens.len()].fill(1);
        }
        let ids_t = Tensor::from_vec(ids, (rows, len), &self.device).map_err(inference)?;
        let mask_t = Tensor::from_vec(mask.clone(), (rows, len), &self.device).map_err(inference)?;
        let hidden = match &self.model {
            Model::Bert(bert) => bert.forward(&ids_t, &mask_t),
            Model::MpNet(mpnet) => mpnet.forward(&ids_t, &mask_t),
        }
        .map_err(inference)?;
        let hidden = hidden.flatten_all().and_then(|t| t.to_vec1::<f32>()).map_err(inference)?;
        Ok((0..rows)
            .map(|r| {
                pool(&hidden[r * len * self.dims..(r + 1) * len * self.dims], &mask[r * len..(r + 1) * len], self.dims)
            })
            .collect())
    }
}

/// Mean of the token vectors where `mask` is 1, then L2-normalised (sentence-transformers' pooling
/// and `Normalize` modules; the norm is floored at 1e-12 as `torch.nn.functional.normalize` does).
fn pool(hidden: &[f32], mask: &[u32], dims: usize) -> Vec<f32> {
    let mut sum = vec![0f32; dims];
    let mut count = 0f32;
    for (token, _) in hidden.chunks_exact(dims).zip(mask).filter(|(_, &m)| m == 1) {
        for (s, v) in sum.iter_mut().zip(token) {
            *s += v;
        }
        count += 1.0;
    }
    let count = count.max(1.0);
    sum.iter_mut().for_each(|s| *s /= count);
    let norm = sum.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
    sum.iter_mut().for_each(|s| *s /= norm);
    sum
}

/// Reads a `tokenizer.json`, bringing one saved by an older version of the format (as this model's
/// is, `"version": "1.0"`) to the current one first.
fn load_tokenizer(json: &[u8]) -> Result<PipelineTokenizer, EmbedError> {
    let text =
        std::str::from_utf8(json).map_err(|e| EmbedError::Tokenizer(format!("tokenizer.json is not UTF-8: {e}")))?;
    let canonical = tokenizers::canonicalize_str(text).map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
    tokenizers::from_json(&canonical).map_err(|e| EmbedError::Tokenizer(e.to_string()))
}
