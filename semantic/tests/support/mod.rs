//! What the model tests share: loading a model's real files in either precision, the dot product, and
//! how near the 8-bit vectors are to the float model's on realistic chat turns.
//!
//! The models come from `scripts/setup.sh` (its `scripts/model.sh` step) in `target/models/`, or from
//! the folder `COWORK_MODELS_DIR` names. Without them the tests fail, saying so.

use cowork_semantic::{Embedder, Precision, MODEL_FILES};
use std::path::PathBuf;

/// Loads `model` (its folder's name) with the dense layers in `precision`.
pub fn load(model: &str, precision: Precision) -> Embedder {
    let dir = std::env::var_os("COWORK_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/models"))
        .join(model);
    let [config, tokenizer, weights] = MODEL_FILES.map(|file| {
        std::fs::read(dir.join(file)).unwrap_or_else(|e| {
            panic!(
                "the model file {} is missing ({e}): run scripts/setup.sh (its scripts/model.sh step installs \
                 {model} into target/models/), or point COWORK_MODELS_DIR at a folder holding {model}/",
                dir.join(file).display()
            )
        })
    });
    Embedder::load_with(&config, &tokenizer, &weights, precision).expect("the model loads")
}

pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Asserts that each of the first `count` turns of `bench/turns.txt` has a cosine of at least `least`
/// between its vectors by `int8` and by `float`.
pub fn assert_near_the_float_vectors(int8: &Embedder, float: &Embedder, count: usize, least: f32) {
    let turns: Vec<&str> = include_str!("../../bench/turns.txt").lines().take(count).collect();
    let (a, b) = (int8.embed(&turns).unwrap(), float.embed(&turns).unwrap());
    let cosines: Vec<f32> = a.iter().zip(&b).map(|(x, y)| dot(x, y)).collect();
    let worst = cosines.iter().copied().fold(1f32, f32::min);
    let mean = cosines.iter().sum::<f32>() / cosines.len() as f32;
    eprintln!("cosine of int8 and float vectors: mean {mean:.5}, worst {worst:.5}");
    assert!(worst >= least, "worst {worst}, mean {mean}");
}
