//! The larger model, all-mpnet-base-v2 (MPNet, `src/mpnet.rs`), on its real files, natively: the
//! similarities sentence-transformers publishes for it, 768 dimensions, unit length, and a batch equal
//! to one text at a time.
//!
//! The model comes from `scripts/setup.sh` (its `scripts/model.sh` step) in `target/models/`, or from
//! the folder `COWORK_MODELS_DIR` names. Without it these tests fail, saying so.

use cowork_semantic::{Embedder, MODEL_FILES};
use std::path::PathBuf;
use std::sync::OnceLock;

const MODEL: &str = "all-mpnet-base-v2";

fn embedder() -> &'static Embedder {
    static EMBEDDER: OnceLock<Embedder> = OnceLock::new();
    EMBEDDER.get_or_init(|| {
        let dir = std::env::var_os("COWORK_MODELS_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/models"))
            .join(MODEL);
        let [config, tokenizer, weights] = MODEL_FILES.map(|file| {
            std::fs::read(dir.join(file)).unwrap_or_else(|e| {
                panic!(
                    "the model file {} is missing ({e}): run scripts/setup.sh (its scripts/model.sh step \
                     installs {MODEL} into target/models/)",
                    dir.join(file).display()
                )
            })
        });
        Embedder::load(&config, &tokenizer, &weights).expect("the model loads")
    })
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// sentence-transformers' own example for this model (the `SentenceTransformer` docstring): the
/// cosine similarities of three sentences, published to four places.
#[test]
fn matches_the_published_similarities() {
    let v = embedder()
        .embed(&["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."])
        .unwrap();
    for (i, j, want) in [(0, 1, 0.6817f32), (0, 2, 0.0492), (1, 2, 0.0421)] {
        let got = dot(&v[i], &v[j]);
        assert!((got - want).abs() < 5e-4, "sentences {i} and {j}: {got}, published {want}");
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
