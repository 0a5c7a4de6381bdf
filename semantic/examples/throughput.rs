//! Native throughput of the embedder on realistic chat turns (`bench/turns.txt`: 64 turns of 10–80
//! words), with the dense layers in 8-bit integers (the default) and in floats, at batch sizes 1 to 32:
//! `cargo run --release -p cowork-semantic --example throughput [MODEL_DIR]`
//! (default `target/models/all-MiniLM-L6-v2`, installed by `scripts/model.sh`).

use cowork_semantic::{Embedder, Precision, MODEL_FILES, MODEL_ID};
use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/models").join(MODEL_ID));
    let [config, tokenizer, weights] = MODEL_FILES.map(|file| {
        std::fs::read(dir.join(file))
            .unwrap_or_else(|e| panic!("{}: {e} (run scripts/model.sh)", dir.join(file).display()))
    });
    let turns = include_str!("../bench/turns.txt");
    let turns: Vec<&str> = turns.lines().collect();
    for precision in [Precision::Int8, Precision::F32] {
        let started = Instant::now();
        let mut embedder = Embedder::load_with(&config, &tokenizer, &weights, precision).expect("the model loads");
        println!("{precision:?}: load {:.0} ms (parse)", started.elapsed().as_secs_f64() * 1000.0);
        if precision == Precision::Int8 {
            let tokens: usize = turns.iter().map(|t| embedder.token_ids(t).unwrap().len()).sum();
            println!("{} turns, {:.1} tokens on average", turns.len(), tokens as f64 / turns.len() as f64);
        }
        embedder.embed(&turns[..8]).unwrap(); // warm up
        for batch in [1, 2, 4, 8, 16, 32] {
            embedder.set_max_batch(batch);
            let started = Instant::now();
            let mut n = 0;
            while started.elapsed().as_secs_f64() < 3.0 {
                for chunk in turns.chunks(batch) {
                    embedder.embed(chunk).unwrap();
                    n += chunk.len();
                }
            }
            println!("{precision:?} batch {batch:>2}: {:.1} turns/s", n as f64 / started.elapsed().as_secs_f64());
        }
    }
}
