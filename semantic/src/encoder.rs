//! The transformer layers both encoders share (BERT's, which MPNet keeps), with their dense layers in
//! float or in 8-bit integers ([`Precision`]), and BERT itself (all-MiniLM-L6-v2): word, position and
//! token-type embeddings, then the layers (Hugging Face's `BertModel` without its pooler).

use crate::int8::{self, Int8Linear};
use candle_core::{DType, Module, Result, Tensor};
use candle_nn::{embedding, layer_norm, linear, Embedding, LayerNorm, Linear, VarBuilder};
use serde::Deserialize;

/// How the dense layers compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// 32-bit floats, as the model was trained.
    F32,
    /// 8-bit integer products (`int8.rs`).
    Int8,
}

/// A dense layer in either precision.
pub enum Dense {
    F32(Linear),
    Int8(Int8Linear),
}

impl Dense {
    pub fn load(inputs: usize, outputs: usize, vb: VarBuilder, precision: Precision) -> Result<Self> {
        Ok(match precision {
            Precision::F32 => Dense::F32(linear(inputs, outputs, vb)?),
            Precision::Int8 => Dense::Int8(Int8Linear::load(inputs, outputs, vb)?),
        })
    }
}

impl Dense {
    /// The layer, then GELU: candle's exact one in float, `int8::gelu` with integers.
    fn forward_gelu(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Dense::F32(l) => l.forward(x)?.gelu_erf(),
            Dense::Int8(l) => l.forward_then(x, int8::gelu),
        }
    }
}

impl Module for Dense {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Dense::F32(l) => l.forward(x),
            Dense::Int8(l) => l.forward(x),
        }
    }
}

/// Where a layer's weights are, below `encoder.layer.{i}`.
pub struct LayerNames {
    pub q: &'static str,
    pub k: &'static str,
    pub v: &'static str,
    pub o: &'static str,
    pub attention_norm: &'static str,
}

/// BERT's names.
pub const BERT_NAMES: LayerNames = LayerNames {
    q: "attention.self.query",
    k: "attention.self.key",
    v: "attention.self.value",
    o: "attention.output.dense",
    attention_norm: "attention.output.LayerNorm",
};

/// MPNet's names.
pub const MPNET_NAMES: LayerNames = LayerNames {
    q: "attention.attn.q",
    k: "attention.attn.k",
    v: "attention.attn.v",
    o: "attention.attn.o",
    attention_norm: "attention.LayerNorm",
};

/// One transformer layer: self-attention, then the feed-forward block, each with a residual and a
/// layer norm after it.
pub struct Layer {
    q: Dense,
    k: Dense,
    v: Dense,
    o: Dense,
    attention_norm: LayerNorm,
    intermediate: Dense,
    output: Dense,
    output_norm: LayerNorm,
}

impl Layer {
    /// Every layer, `encoder.layer.{i}` below `vb`.
    pub fn load_all(vb: VarBuilder, names: &LayerNames, c: &Sizes, precision: Precision) -> Result<Vec<Self>> {
        (0..c.num_hidden_layers).map(|i| Self::load(vb.pp(format!("encoder.layer.{i}")), names, c, precision)).collect()
    }

    fn load(vb: VarBuilder, names: &LayerNames, c: &Sizes, precision: Precision) -> Result<Self> {
        let (h, i, eps) = (c.hidden_size, c.intermediate_size, c.layer_norm_eps);
        Ok(Self {
            q: Dense::load(h, h, vb.pp(names.q), precision)?,
            k: Dense::load(h, h, vb.pp(names.k), precision)?,
            v: Dense::load(h, h, vb.pp(names.v), precision)?,
            o: Dense::load(h, h, vb.pp(names.o), precision)?,
            attention_norm: layer_norm(h, eps, vb.pp(names.attention_norm))?,
            intermediate: Dense::load(h, i, vb.pp("intermediate.dense"), precision)?,
            output: Dense::load(i, h, vb.pp("output.dense"), precision)?,
            output_norm: layer_norm(h, eps, vb.pp("output.LayerNorm"))?,
        })
    }

    /// `bias`: (rows or 1, heads or 1, len or 1, len), added to the attention scores (the padding
    /// mask, and MPNet's position bias).
    pub fn forward(&self, x: &Tensor, bias: &Tensor, heads: usize) -> Result<Tensor> {
        let (rows, len, hidden) = x.dims3()?;
        let head = hidden / heads;
        let split = |t: Tensor| t.reshape((rows, len, heads, head))?.transpose(1, 2)?.contiguous();
        let q = split(self.q.forward(x)?)?;
        let k = split(self.k.forward(x)?)?;
        let v = split(self.v.forward(x)?)?;
        let scores = (q.matmul(&k.t()?)? / (head as f64).sqrt())?.broadcast_add(bias)?;
        let probs = candle_nn::ops::softmax_last_dim(&scores)?;
        let context = probs.matmul(&v)?.transpose(1, 2)?.reshape((rows, len, hidden))?;
        let attended = self.attention_norm.forward(&(self.o.forward(&context)? + x)?)?;
        let inner = self.intermediate.forward_gelu(&attended)?;
        self.output_norm.forward(&(self.output.forward(&inner)? + attended)?)
    }
}

/// The scores' bias that hides padding: 0 on tokens, the most negative float on padding, as
/// (rows, 1, 1, len) from a (rows, len) mask of 1s and 0s.
pub fn padding_bias(mask: &Tensor) -> Result<Tensor> {
    ((mask.to_dtype(DType::F32)? - 1.0)? * f64::from(f32::MAX))?.unsqueeze(1)?.unsqueeze(1)
}

/// The sizes in a `config.json` that BERT and MPNet share.
#[derive(Debug, Clone, Deserialize)]
pub struct Sizes {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    pub layer_norm_eps: f64,
}

/// The fields of a BERT `config.json` the encoder needs.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    #[serde(flatten)]
    pub sizes: Sizes,
    pub type_vocab_size: usize,
}

/// BERT's encoder: token vectors of the last layer, (rows, len, hidden).
pub struct Bert {
    words: Embedding,
    positions: Embedding,
    types: Embedding,
    norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
}

impl Bert {
    pub fn load(vb: VarBuilder, c: &BertConfig, precision: Precision) -> Result<Self> {
        // sentence-transformers saves the weights without the `bert.` prefix Hugging Face's own use.
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") { vb } else { vb.pp("bert") };
        let e = vb.pp("embeddings");
        let (t, c) = (c.type_vocab_size, &c.sizes);
        Ok(Self {
            words: embedding(c.vocab_size, c.hidden_size, e.pp("word_embeddings"))?,
            positions: embedding(c.max_position_embeddings, c.hidden_size, e.pp("position_embeddings"))?,
            types: embedding(t, c.hidden_size, e.pp("token_type_embeddings"))?,
            norm: layer_norm(c.hidden_size, c.layer_norm_eps, e.pp("LayerNorm"))?,
            layers: Layer::load_all(vb, &BERT_NAMES, c, precision)?,
            heads: c.num_attention_heads,
        })
    }

    /// `ids`, `mask`: (rows, len), the mask 1 on tokens and 0 on padding. Every token is of type 0.
    pub fn forward(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let (_, len) = ids.dims2()?;
        let positions = Tensor::arange(0u32, len as u32, ids.device())?.unsqueeze(0)?;
        let types = self.types.forward(&Tensor::zeros((1, 1), DType::U32, ids.device())?)?;
        let x = self.words.forward(ids)?.broadcast_add(&self.positions.forward(&positions)?)?.broadcast_add(&types)?;
        let mut x = self.norm.forward(&x)?;
        let bias = padding_bias(mask)?;
        for layer in &self.layers {
            x = layer.forward(&x, &bias, self.heads)?;
        }
        Ok(x)
    }
}
