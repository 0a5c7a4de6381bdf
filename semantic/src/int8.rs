//! Linear layers in 8-bit integers: the encoder's dense layers, which take nearly all of its time,
//! with weights quantized once at load and activations per row at each call.
//!
//! - A weight row (one output) is scaled to 7 bits, `[-63, 63]`, and kept as `q + 64` in `[1, 127]`.
//! - An activation row is scaled to 8 bits, `[-127, 127]`.
//! - A dot product is then `Σ a·(q + 64) − 64·Σ a`, exact in 32-bit integers.
//!
//! The stored weights are 7-bit and non-negative so that one format serves every kernel with the same
//! integer results: WebAssembly's relaxed-SIMD dot product (`i32x4.relaxed_dot_i8x16_i7x16_add_s`,
//! sixteen products an instruction, deterministic when its second operand fits in 7 bits), plain
//! SIMD128 (`i32x4.dot_i16x8_s` after widening), and natively candle's float matrix product, exact on
//! these integers. The vectors are therefore the same in every browser and in the native benchmark that
//! measures their recall (BENCHMARKS.md: LoCoMo's recall holds; a cosine of at least 0.99 to the float
//! model's vectors on chat turns, 0.97 on one-word texts).
//!
//! GELU, after the feed-forward block's first layer, is computed here too ([`gelu`]).

use candle_core::{Module, Result, Tensor};
use candle_nn::VarBuilder;

/// Offset added to a quantized weight so it fits the unsigned 7-bit operand.
const OFFSET: i32 = 64;
/// Largest quantized weight magnitude (7 bits with the offset).
const WEIGHT_MAX: f32 = 63.0;
/// Largest quantized activation magnitude.
const ACTIVATION_MAX: f32 = 127.0;
/// Rows are padded with zeros to a multiple of this: one 128-bit vector of bytes.
const LANES: usize = 16;

/// A linear layer `y = x·Wᵀ + b` with int8 weights.
pub struct Int8Linear {
    inputs: usize,
    outputs: usize,
    /// `inputs` rounded up to [`LANES`].
    padded: usize,
    /// `outputs` rows of `padded` bytes, each `q + OFFSET` (padding: `OFFSET`, a zero weight).
    weights: kernel::Weights,
    /// Per output: the weight row's scale.
    scales: Vec<f32>,
    bias: Vec<f32>,
}

impl Int8Linear {
    /// Loads `weight` (outputs × inputs) and `bias` as PyTorch's `nn.Linear` names them.
    pub fn load(inputs: usize, outputs: usize, vb: VarBuilder) -> Result<Self> {
        let weight = vb.get((outputs, inputs), "weight")?.to_vec2::<f32>()?;
        let bias = vb.get(outputs, "bias")?.to_vec1::<f32>()?;
        Self::new(&weight, bias)
    }

    /// Quantizes `weight` (one row per output).
    pub fn new(weight: &[Vec<f32>], bias: Vec<f32>) -> Result<Self> {
        let outputs = weight.len();
        let inputs = weight.first().map_or(0, Vec::len);
        let padded = inputs.div_ceil(LANES) * LANES;
        let mut weights = vec![OFFSET as u8; outputs * padded];
        let mut scales = Vec::with_capacity(outputs);
        for (row, out) in weight.iter().zip(weights.chunks_exact_mut(padded)) {
            let scale = scale_of(row, WEIGHT_MAX);
            for (w, q) in row.iter().zip(out.iter_mut()) {
                *q = (round(w / scale).clamp(-WEIGHT_MAX, WEIGHT_MAX) as i32 + OFFSET) as u8;
            }
            scales.push(scale);
        }
        let weights = kernel::Weights::new(weights, outputs, padded)?;
        Ok(Self { inputs, outputs, padded, weights, scales, bias })
    }

    /// `x·Wᵀ + b` over rows of `x` given flat (`x.len()` a multiple of the layer's inputs).
    pub fn apply(&self, x: &[f32]) -> Result<Vec<f32>> {
        let rows = x.len() / self.inputs.max(1);
        let (activations, row_scales, row_sums) = kernel::quantize(x, self.inputs, self.padded);
        let dots = kernel::dots(&activations, &row_sums, &self.weights, rows, self.outputs, self.padded)?;
        let mut y = Vec::with_capacity(rows * self.outputs);
        for (r, dots) in dots.chunks_exact(self.outputs).enumerate() {
            y.extend(
                dots.iter().zip(&self.scales).zip(&self.bias).map(|((&d, &s), &b)| d as f32 * row_scales[r] * s + b),
            );
        }
        Ok(y)
    }

    /// [`forward`](Module::forward), then `map` over the result, before it becomes a tensor.
    pub fn forward_then(&self, x: &Tensor, map: impl FnOnce(&mut [f32])) -> Result<Tensor> {
        let mut dims = x.dims().to_vec();
        let mut y = self.apply(&x.flatten_all()?.to_vec1::<f32>()?)?;
        map(&mut y);
        if let Some(last) = dims.last_mut() {
            *last = self.outputs;
        }
        Tensor::from_vec(y, dims, x.device())
    }
}

impl Module for Int8Linear {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.forward_then(x, |_| {})
    }
}

/// Each row of `x` (`inputs` long) in 8 bits, padded to `padded`: the bytes, each row's scale and the
/// sum of its bytes.
#[cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), allow(dead_code))]
pub(crate) fn quantize_rows(x: &[f32], inputs: usize, padded: usize) -> (Vec<i8>, Vec<f32>, Vec<i32>) {
    let rows = x.len() / inputs.max(1);
    let mut activations = vec![0i8; rows * padded];
    let mut scales = Vec::with_capacity(rows);
    let mut sums = Vec::with_capacity(rows);
    for (row, out) in x.chunks_exact(inputs).zip(activations.chunks_exact_mut(padded)) {
        let scale = scale_of(row, ACTIVATION_MAX);
        let inverse = 1.0 / scale;
        let mut sum = 0i32;
        for (v, q) in row.iter().zip(out.iter_mut()) {
            *q = round(v * inverse).clamp(-ACTIVATION_MAX, ACTIVATION_MAX) as i8;
            sum += i32::from(*q);
        }
        scales.push(scale);
        sums.push(sum);
    }
    (activations, scales, sums)
}

/// `x` rounded to the nearest integer, ties to even, for `|x| < 2²²`: adding and removing 1.5 · 2²³
/// leaves no fraction bits. Plain arithmetic, so loops of it vectorize on every target (`round_ties_even`
/// is a libm call on x86-64 without SSE4.1); the SIMD quantizer's `f32x4.nearest` gives the same.
#[inline(always)]
fn round(x: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0;
    (x + MAGIC) - MAGIC
}

/// The scale mapping a row's largest magnitude to `max` (1 for a row of zeros).
fn scale_of(row: &[f32], max: f32) -> f32 {
    // Comparisons, not `f32::max`, which is a libm call in WebAssembly.
    let largest = row.iter().map(|v| v.abs()).fold(0f32, |m, v| if v > m { v } else { m });
    if largest > 0.0 {
        largest / max
    } else {
        1.0
    }
}

/// The integer products, `dots[r·n + j] = Σₖ a[r][k]·q[j][k]`, for `m` activation rows and `n`
/// weight rows of `k` bytes (`k` a multiple of [`LANES`]), with the activations as `quantize` gives them.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
mod kernel {
    /// Natively, the products go through candle's float matrix product (with the machine's own SIMD):
    /// every partial sum is an integer below 2²⁴ (127 · 63 · 2,048), exact in `f32`, so the results
    /// are the integers the WebAssembly kernels give. Inputs longer than 2,048 are done in blocks.
    const BLOCK: usize = 2048;

    /// The weight rows as `q` (not `q + 64`) in floats, transposed: one (block × n) tensor per block
    /// of [`BLOCK`] inputs.
    pub struct Weights(Vec<candle_core::Tensor>);

    impl Weights {
        pub fn new(bytes: Vec<u8>, n: usize, k: usize) -> candle_core::Result<Self> {
            let q: Vec<f32> = bytes.iter().map(|&u| (i32::from(u) - super::OFFSET) as f32).collect();
            let w = candle_core::Tensor::from_vec(q, (n, k), &candle_core::Device::Cpu)?;
            let blocks = (0..k)
                .step_by(BLOCK)
                .map(|start| w.narrow(1, start, BLOCK.min(k - start))?.t()?.contiguous())
                .collect::<candle_core::Result<_>>()?;
            Ok(Self(blocks))
        }
    }

    pub(crate) use super::quantize_rows as quantize;

    /// `Σ a·q` per activation row and weight row (`sums`, the activation rows' sums, is for the
    /// WebAssembly kernels' offset).
    pub fn dots(a: &[i8], _sums: &[i32], w: &Weights, m: usize, n: usize, k: usize) -> candle_core::Result<Vec<i32>> {
        let a: Vec<f32> = a.iter().map(|&x| f32::from(x)).collect();
        let a = candle_core::Tensor::from_vec(a, (m, k), &candle_core::Device::Cpu)?;
        let mut out = vec![0i32; m * n];
        for (b, block) in w.0.iter().enumerate() {
            let width = block.dim(0)?;
            let products = a.narrow(1, b * BLOCK, width)?.matmul(block)?.flatten_all()?.to_vec1::<f32>()?;
            out.iter_mut().zip(products).for_each(|(o, p)| *o += p as i32);
        }
        Ok(out)
    }
}

/// The integer products, `dots[r·n + j] = Σₖ a[r][k]·q[j][k]`, for `m` activation rows and `n`
/// weight rows of `k` bytes (`k` a multiple of [`LANES`]), with the activations as `quantize` gives them.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod kernel {
    use core::arch::wasm32::*;

    /// The weight rows as 128-bit vectors, so the kernel loads them without `unsafe`.
    pub struct Weights(Vec<v128>);

    impl Weights {
        pub fn new(bytes: Vec<u8>, _n: usize, _k: usize) -> candle_core::Result<Self> {
            Ok(Self(vectors(&bytes)))
        }
    }

    /// Sixteen bytes a vector.
    fn vectors(bytes: &[u8]) -> Vec<v128> {
        bytes
            .chunks_exact(16)
            .map(|b| {
                u8x16(
                    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                    b[15],
                )
            })
            .collect()
    }

    /// [`super::quantize_rows`] with SIMD, straight into vectors: scale, round to nearest, convert,
    /// and narrow to bytes with saturation.
    pub fn quantize(x: &[f32], inputs: usize, padded: usize) -> (Vec<v128>, Vec<f32>, Vec<i32>) {
        let rows = x.len() / inputs.max(1);
        let mut out = Vec::with_capacity(rows * padded / 16);
        let mut scales = Vec::with_capacity(rows);
        let mut sums = Vec::with_capacity(rows);
        let four = |c: &[f32]| f32x4(c[0], c[1], c[2], c[3]);
        for row in x.chunks_exact(inputs) {
            let scale = super::scale_of(row, super::ACTIVATION_MAX);
            let inverse = f32x4_splat(1.0 / scale);
            let mut sum = i32x4_splat(0);
            for chunk in row.chunks(16) {
                let mut lanes = [0f32; 16];
                lanes[..chunk.len()].copy_from_slice(chunk);
                let q: [v128; 4] = core::array::from_fn(|i| {
                    i32x4_trunc_sat_f32x4(f32x4_nearest(f32x4_mul(four(&lanes[4 * i..]), inverse)))
                });
                sum = i32x4_add(sum, i32x4_add(i32x4_add(q[0], q[1]), i32x4_add(q[2], q[3])));
                out.push(i8x16_narrow_i16x8(i16x8_narrow_i32x4(q[0], q[1]), i16x8_narrow_i32x4(q[2], q[3])));
            }
            debug_assert_eq!(padded, inputs.div_ceil(16) * 16);
            scales.push(scale);
            sums.push(lanes_sum(sum));
        }
        (out, scales, sums)
    }

    fn lanes_sum(v: v128) -> i32 {
        i32x4_extract_lane::<0>(v)
            + i32x4_extract_lane::<1>(v)
            + i32x4_extract_lane::<2>(v)
            + i32x4_extract_lane::<3>(v)
    }

    /// Tiles of two activation rows by four weight rows, sixteen bytes at a time.
    pub fn dots(a: &[v128], sums: &[i32], w: &Weights, m: usize, n: usize, k: usize) -> candle_core::Result<Vec<i32>> {
        let w = &w.0;
        let k = k / 16;
        let mut out = vec![0i32; m * n];
        for r in (0..m).step_by(2) {
            let rows = (m - r).min(2);
            let a0 = &a[r * k..(r + 1) * k];
            let a1 = &a[(r + rows - 1) * k..(r + rows) * k];
            for j in (0..n).step_by(4) {
                let cols = (n - j).min(4);
                let wr: [&[v128]; 4] = core::array::from_fn(|t| {
                    let row = j + t.min(cols - 1);
                    &w[row * k..(row + 1) * k]
                });
                let (mut p0, mut p1, mut p2, mut p3) = (i32x4_splat(0), i32x4_splat(0), i32x4_splat(0), i32x4_splat(0));
                let (mut q0, mut q1, mut q2, mut q3) = (p0, p0, p0, p0);
                let columns = a0.iter().zip(a1).zip(wr[0].iter().zip(wr[1])).zip(wr[2].iter().zip(wr[3]));
                for (((&x0, &x1), (&y0, &y1)), (&y2, &y3)) in columns {
                    p0 = step(x0, y0, p0);
                    p1 = step(x0, y1, p1);
                    p2 = step(x0, y2, p2);
                    p3 = step(x0, y3, p3);
                    q0 = step(x1, y0, q0);
                    q1 = step(x1, y1, q1);
                    q2 = step(x1, y2, q2);
                    q3 = step(x1, y3, q3);
                }
                let acc = [[p0, p1, p2, p3], [q0, q1, q2, q3]];
                for (i, acc) in acc.iter().enumerate().take(rows) {
                    for (t, &v) in acc.iter().enumerate().take(cols) {
                        out[(r + i) * n + j + t] = lanes_sum(v) - super::OFFSET * sums[r + i];
                    }
                }
            }
        }
        Ok(out)
    }

    /// `acc + Σ x·y` in lanes of four, `x` signed bytes and `y` bytes in `[0, 127]`.
    #[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
    #[inline(always)]
    fn step(x: v128, y: v128, acc: v128) -> v128 {
        i32x4_relaxed_dot_i8x16_i7x16_add(x, y, acc)
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(target_feature = "relaxed-simd")))]
    #[inline(always)]
    fn step(x: v128, y: v128, acc: v128) -> v128 {
        let low = i32x4_dot_i16x8(i16x8_extend_low_i8x16(x), u16x8_extend_low_u8x16(y));
        let high = i32x4_dot_i16x8(i16x8_extend_high_i8x16(x), u16x8_extend_high_u8x16(y));
        i32x4_add(acc, i32x4_add(low, high))
    }
}

/// GELU, `x·Φ(x)`, in place, with an erf accurate to about 1e-7 (Abramowitz and Stegun 7.1.26) and
/// an exponential of its own: no libm call, so the loop compiles to SIMD instructions. (candle's
/// `gelu_erf` calls libm's `erff` and `expf` per value, an eighth of the encoder's time in a browser.)
pub fn gelu(xs: &mut [f32]) {
    const P: f32 = 0.327_591_1;
    const A: [f32; 5] = [0.254_829_6, -0.284_496_74, 1.421_413_7, -1.453_152, 1.061_405_4];
    for x in xs {
        let z = x.abs() * std::f32::consts::FRAC_1_SQRT_2;
        let t = 1.0 / (1.0 + P * z);
        let poly = t * (A[0] + t * (A[1] + t * (A[2] + t * (A[3] + t * A[4]))));
        let erf = 1.0 - poly * exp_negative(-z * z);
        let erf = if *x < 0.0 { -erf } else { erf };
        *x *= 0.5 * (1.0 + erf);
    }
}

/// `eᵞ` for `y ≤ 0` (0 below −87): `2ⁿ·eʳ` with `n` the nearest integer to `y / ln 2` and `eʳ` by
/// its Taylor series to the sixth power, `|r| ≤ ln 2 / 2`.
#[inline(always)]
fn exp_negative(y: f32) -> f32 {
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    let y = if y < -87.0 { -87.0 } else { y };
    let n = round(y * std::f32::consts::LOG2_E);
    let r = y - n * LN2_HI - n * LN2_LO;
    let series =
        1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    series * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

#[cfg(test)]
#[path = "int8_tests.rs"]
mod tests;
