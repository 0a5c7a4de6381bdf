//! The larger model, all-mpnet-base-v2 (MPNet, `src/mpnet.rs`), on its real files, natively: the
//! similarities sentence-transformers publishes for it, 768 dimensions, unit length, a batch equal to
//! one text at a time, and the default 8-bit layers' closeness to the float model.
//! The model's files: see `support/mod.rs`.

mod support;

use cowork_semantic::{Embedder, Precision};
use std::sync::OnceLock;
use support::dot;

const MODEL: &str = "all-mpnet-base-v2";

fn embedder() -> &'static Embedder {
    static EMBEDDER: OnceLock<Embedder> = OnceLock::new();
    EMBEDDER.get_or_init(|| support::load(MODEL, Precision::Int8))
}

/// The model as trained, in floats, for the published values.
fn float() -> &'static Embedder {
    static EMBEDDER: OnceLock<Embedder> = OnceLock::new();
    EMBEDDER.get_or_init(|| support::load(MODEL, Precision::F32))
}

/// sentence-transformers' own example for this model (the `SentenceTransformer` docstring): the
/// cosine similarities of three sentences, published to four places. In floats they match to that
/// precision; with the default 8-bit layers, to within 0.02 (12 layers of rounding: 0.0635 for 0.0492).
#[test]
fn matches_the_published_similarities() {
    let texts = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."];
    for (embedder, tolerance) in [(float(), 5e-4), (embedder(), 2e-2)] {
        let v = embedder.embed(&texts).unwrap();
        for (i, j, want) in [(0, 1, 0.6817f32), (0, 2, 0.0492), (1, 2, 0.0421)] {
            let got = dot(&v[i], &v[j]);
            assert!((got - want).abs() < tolerance, "sentences {i} and {j}: {got}, published {want}");
        }
    }
}

#[test]
fn vectors_have_768_dimensions_unit_length_and_do_not_depend_on_the_batch() {
    assert_eq!(embedder().dims(), 768);
    let texts = ["Hi", "The auth tokens expire after an hour and the login flow refreshes them", "ok then"];
    let together = embedder().embed(&texts).unwrap();
    for (text, v) in texts.iter().zip(&together) {
        assert!((dot(v, v) - 1.0).abs() < 1e-4);
        let alone = embedder().embed(&[text]).unwrap().remove(0);
        assert!(dot(v, &alone) > 0.9999, "{text:?} batched differs from alone");
    }
}

/// The default 8-bit dense layers give nearly the vectors of the float model on realistic chat turns
/// (the first 24 of `bench/turns.txt`, for time): a cosine of at least 0.98 for every turn (measured on
/// all 64: mean 0.994, worst 0.989).
#[test]
fn integer_layers_give_nearly_the_float_vectors() {
    support::assert_near_the_float_vectors(embedder(), float(), 24, 0.98);
}
