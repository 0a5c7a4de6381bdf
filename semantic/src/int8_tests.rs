use super::{gelu, Int8Linear};
use candle_core::{Device, Tensor};

/// Deterministic values in [-1, 1) (a linear congruential generator), so a failure reproduces.
fn values(seed: u64, n: usize) -> Vec<f32> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn float_layer(weight: &[Vec<f32>], bias: &[f32], x: &[f32]) -> Vec<f32> {
    x.chunks_exact(weight[0].len())
        .flat_map(|row| {
            weight.iter().zip(bias).map(move |(w, b)| w.iter().zip(row).map(|(w, x)| w * x).sum::<f32>() + b)
        })
        .collect()
}

#[test]
fn values_on_the_quantization_grid_give_exact_products() {
    // Each weight row's largest magnitude is 63 units and each activation row's 127, so quantizing
    // loses nothing: the layer must then give the float result, whatever the padding (40 inputs are
    // padded to 48) and the offset of the stored weights.
    let inputs = 40;
    let weight: Vec<Vec<f32>> = (0..6)
        .map(|j| {
            (0..inputs).map(|k| if k == j { 63.0 * 0.5 } else { ((k * 7 + j * 3) % 127) as f32 / 2.0 - 31.5 }).collect()
        })
        .collect();
    let bias: Vec<f32> = (0..6).map(|j| j as f32 - 2.5).collect();
    let x: Vec<f32> = (0..3 * inputs)
        .map(|i| if i % inputs == i / inputs { -127.0 * 0.25 } else { ((i * 13) % 255) as f32 * 0.25 - 31.75 })
        .collect();
    let layer = Int8Linear::new(&weight, bias.clone()).unwrap();
    let got = layer.apply(&x).unwrap();
    let want = float_layer(&weight, &bias, &x);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!((g - w).abs() <= 1e-3 * w.abs().max(1.0), "output {i}: {g}, float {w}");
    }
}

#[test]
fn a_layer_of_a_models_size_is_close_to_the_float_one() {
    let (inputs, outputs, rows) = (384, 96, 7);
    let weight: Vec<Vec<f32>> = (0..outputs).map(|j| values(j as u64, inputs)).collect();
    let bias = values(1000, outputs);
    let x = values(2000, rows * inputs);
    let got = Int8Linear::new(&weight, bias.clone()).unwrap().apply(&x).unwrap();
    let want = float_layer(&weight, &bias, &x);
    for (r, (g, w)) in got.chunks(outputs).zip(want.chunks(outputs)).enumerate() {
        let error = g.iter().zip(w).map(|(a, b)| (a - b) * (a - b)).sum::<f32>().sqrt();
        let norm = w.iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!(error < 0.02 * norm, "row {r}: error {error} against a norm of {norm}");
    }
}

#[test]
fn the_layer_keeps_the_tensor_shape() {
    use candle_core::Module;
    let weight: Vec<Vec<f32>> = (0..5).map(|j| values(j, 16)).collect();
    let layer = Int8Linear::new(&weight, vec![0.0; 5]).unwrap();
    let x = Tensor::from_vec(values(9, 2 * 3 * 16), (2, 3, 16), &Device::Cpu).unwrap();
    assert_eq!(layer.forward(&x).unwrap().dims(), &[2, 3, 5]);
}

#[test]
fn gelu_matches_the_exact_one() {
    let xs: Vec<f32> = (-12_000..=12_000).map(|i| i as f32 / 1000.0).collect();
    let exact = Tensor::new(xs.as_slice(), &Device::Cpu).unwrap().gelu_erf().unwrap().to_vec1::<f32>().unwrap();
    let mut ours = xs.clone();
    gelu(&mut ours);
    for ((x, got), want) in xs.iter().zip(&ours).zip(&exact) {
        assert!((got - want).abs() <= 1e-6 * x.abs().max(1.0), "gelu({x}): {got}, exact {want}");
    }
}
