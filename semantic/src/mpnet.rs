//! MPNet's encoder (sentence-transformers' all-mpnet-base-v2), which candle does not ship: BERT's
//! layers without token types, positions counted from the padding id + 1 (as RoBERTa's), and one
//! relative-position bias per head, learned in 32 buckets and added to every layer's attention scores
//! (Hugging Face's `MPNetModel`).

use crate::encoder::{padding_bias, Layer, Precision, Sizes, MPNET_NAMES};
use candle_core::{Module, Result, Tensor};
use candle_nn::{embedding, layer_norm, Embedding, LayerNorm, VarBuilder};
use serde::Deserialize;

/// The fields of an MPNet `config.json` the encoder needs.
#[derive(Debug, Clone, Deserialize)]
pub struct Config {
    #[serde(flatten)]
    pub sizes: Sizes,
    pub pad_token_id: u32,
    pub relative_attention_num_buckets: usize,
}

/// The encoder: token vectors of the last layer, (rows, len, hidden).
pub struct MpNet {
    words: Embedding,
    positions: Embedding,
    norm: LayerNorm,
    layers: Vec<Layer>,
    relative_bias: Embedding,
    heads: usize,
    buckets: usize,
    pad: u32,
}

impl MpNet {
    pub fn load(vb: VarBuilder, config: &Config, precision: Precision) -> Result<Self> {
        let e = vb.pp("embeddings");
        let c = &config.sizes;
        let layers = Layer::load_all(vb.clone(), &MPNET_NAMES, c, precision)?;
        Ok(Self {
            words: embedding(c.vocab_size, c.hidden_size, e.pp("word_embeddings"))?,
            positions: embedding(c.max_position_embeddings, c.hidden_size, e.pp("position_embeddings"))?,
            norm: layer_norm(c.hidden_size, c.layer_norm_eps, e.pp("LayerNorm"))?,
            layers,
            relative_bias: embedding(
                config.relative_attention_num_buckets,
                c.num_attention_heads,
                vb.pp("encoder.relative_attention_bias"),
            )?,
            heads: c.num_attention_heads,
            buckets: config.relative_attention_num_buckets,
            pad: config.pad_token_id,
        })
    }

    /// `ids`, `mask`: (rows, len), the mask 1 on tokens and 0 on padding (padding at the end).
    pub fn forward(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let (rows, len) = ids.dims2()?;
        let device = ids.device();
        // A token's position is its index + pad + 1; padding's is the pad id.
        let mask_host = mask.to_vec2::<u32>()?;
        let positions: Vec<u32> = mask_host
            .iter()
            .flat_map(|row| {
                row.iter().enumerate().map(|(i, &m)| if m == 1 { i as u32 + self.pad + 1 } else { self.pad })
            })
            .collect();
        let positions = Tensor::from_vec(positions, (rows, len), device)?;
        let x = (self.words.forward(ids)? + self.positions.forward(&positions)?)?;
        let mut x = self.norm.forward(&x)?;
        let buckets: Vec<u32> = (0..len)
            .flat_map(|i| (0..len).map(move |j| (i, j)))
            .map(|(i, j)| bucket(j as i64 - i as i64, self.buckets) as u32)
            .collect();
        let buckets = Tensor::from_vec(buckets, (len, len), device)?;
        // (len, len, heads) → (1, heads, len, len)
        let position_bias = self.relative_bias.forward(&buckets)?.permute((2, 0, 1))?.unsqueeze(0)?;
        let padding = padding_bias(mask)?;
        let bias = position_bias.broadcast_add(&padding)?.contiguous()?;
        for layer in &self.layers {
            x = layer.forward(&x, &bias, self.heads)?;
        }
        Ok(x)
    }
}

/// The bucket of a relative position (key − query), as MPNet's `relative_position_bucket` with a
/// maximum distance of 128: half the buckets per direction, exact up to a quarter, logarithmic beyond.
fn bucket(relative: i64, buckets: usize) -> usize {
    let half = (buckets / 2) as i64;
    let n = -relative;
    let mut ret = if n < 0 { half } else { 0 };
    let n = n.abs();
    let exact = half / 2;
    ret += if n < exact {
        n
    } else {
        let large =
            exact + ((n as f64 / exact as f64).ln() / (128.0 / exact as f64).ln() * (half - exact) as f64) as i64;
        large.min(half - 1)
    };
    ret as usize
}

#[cfg(test)]
mod tests {
    use super::bucket;

    #[test]
    fn buckets_match_mpnet() {
        // Values from Hugging Face's relative_position_bucket(num_buckets=32, max_distance=128).
        let cases =
            [(0, 0), (1, 17), (-1, 1), (7, 23), (-7, 7), (8, 24), (-8, 8), (12, 25), (-20, 10), (127, 31), (-500, 15)];
        for (rel, want) in cases {
            assert_eq!(bucket(rel, 32), want, "relative position {rel}");
        }
    }
}
