//! The embedder on the real model files, natively: shape, unit length, sentence-transformers' reference
//! values (in floats) and the default 8-bit layers' closeness to them, paraphrase beats unrelated,
//! batch equals one at a time, truncation and the empty string.
//! The model's files: see `support/mod.rs`.

mod support;

use cowork_semantic::{Embedder, Precision, MAX_TOKENS, MODEL_ID};
use std::sync::OnceLock;
use support::dot;

fn load() -> Embedder {
    support::load(MODEL_ID, Precision::Int8)
}

/// The model as trained, in floats, for the published values.
fn float() -> &'static Embedder {
    static EMBEDDER: OnceLock<Embedder> = OnceLock::new();
    EMBEDDER.get_or_init(|| support::load(MODEL_ID, Precision::F32))
}

fn embedder() -> &'static Embedder {
    static EMBEDDER: OnceLock<Embedder> = OnceLock::new();
    EMBEDDER.get_or_init(load)
}

fn one(text: &str) -> Vec<f32> {
    embedder().embed(&[text]).expect("embeds").remove(0)
}

#[test]
fn vectors_have_384_dimensions_and_unit_length() {
    assert_eq!(embedder().dims(), 384);
    let vectors = embedder().embed(&["Hello there", "A somewhat longer sentence about the weather today."]).unwrap();
    assert_eq!(vectors.len(), 2);
    for v in vectors {
        assert_eq!(v.len(), 384);
        assert!((dot(&v, &v).sqrt() - 1.0).abs() < 1e-4, "norm {}", dot(&v, &v).sqrt());
    }
}

/// The first values of "hello world" as sentence-transformers gives them (mean pooling, normalised),
/// from fastembed's test suite (`tests/test_text_onnx_embeddings.py`, `CANONICAL_VECTOR_VALUES`,
/// compared there with the same tolerance), by the model in floats.
#[test]
fn matches_the_published_reference_values() {
    let v = float().embed(&["hello world"]).unwrap().remove(0);
    let expected = [-0.034478f32, 0.03102, 0.00673, 0.02611, -0.039362];
    for (i, (got, want)) in v.iter().zip(expected).enumerate() {
        assert!((got - want).abs() < 1e-3, "value {i}: got {got}, expected {want} (first values {:?})", &v[..5]);
    }
}

#[test]
fn a_paraphrase_is_closer_than_an_unrelated_sentence() {
    let question = one("What did we decide about logging in?");
    let answer = one("The auth tokens expire after an hour and the login flow refreshes them");
    let unrelated = one("My grandmother grows tomatoes and basil on her balcony every summer");
    let (near, far) = (dot(&question, &answer), dot(&question, &unrelated));
    assert!(near > far + 0.1, "related {near}, unrelated {far}");
}

#[test]
fn a_batch_gives_the_same_vectors_as_one_at_a_time() {
    let texts = [
        "short",
        "a medium length sentence with several more words in it",
        "",
        "The auth tokens expire after an hour and the login flow refreshes them, unless the user signed out.",
        "short",
    ];
    let mut e = load();
    for max_batch in [1, 2, 16] {
        e.set_max_batch(max_batch);
        let batch = e.embed(&texts).unwrap();
        assert_eq!(batch.len(), texts.len());
        for (text, v) in texts.iter().zip(&batch) {
            let single = one(text);
            let diff = v.iter().zip(&single).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
            assert!(diff < 1e-4, "{text:?} with max_batch {max_batch}: differs by {diff}");
        }
    }
}

#[test]
fn long_input_is_cut_not_refused() {
    let long = "word ".repeat(2000);
    assert_eq!(embedder().token_ids(&long).unwrap().len(), MAX_TOKENS);
    let v = one(&long);
    assert_eq!(v.len(), 384);
    // Past the cut nothing counts: more of the same text gives the same vector.
    let longer = one(&"word ".repeat(3000));
    assert!(dot(&v, &longer) > 0.9999);
}

#[test]
fn the_empty_string_and_an_empty_batch_are_fine() {
    let v = one("");
    assert_eq!(v.len(), 384);
    assert!((dot(&v, &v).sqrt() - 1.0).abs() < 1e-4);
    assert!(embedder().embed(&[]).unwrap().is_empty());
}

#[test]
fn bad_files_give_clear_errors() {
    let err = Embedder::load(b"{}", b"{}", b"").unwrap_err().to_string();
    assert!(err.contains("config.json"), "{err}");
}

/// The default 8-bit dense layers give nearly the vectors of the float model: on the realistic chat
/// turns of `bench/turns.txt`, every turn's two vectors have a cosine of at least 0.99.
#[test]
fn integer_layers_give_nearly_the_float_vectors() {
    support::assert_near_the_float_vectors(embedder(), float(), 64, 0.99);
}
