//! The LoCoMo retrieval benchmark, natively: each of LoCoMo's 10 conversations imported as one
//! workspace of the archive (a session per LoCoMo session), each question (categories 1–4) searched
//! in its workspace as `conversation_recall` searches with `scope: "workspace"` — as asked, and
//! without stop words — beside textbook BM25 over the same turns; recall of the evidence turns at
//! k = 5, 10, 25, overall, by evidence age and by category, for the tuning set (conversations 0–4)
//! and the held-out set (5–9). See `cowork_bench::locomo`.
//!
//!     COWORK_LOCOMO=/path/to/locomo10_v2 cargo run --release -p cowork-bench --example locomo -- [--model NAME] [--out FILE]
//!
//! `--model`: the embedding model of the semantic index, `all-MiniLM-L6-v2` (the default) or
//! `all-mpnet-base-v2` (installed by `scripts/model.sh`).
//!
//! `COWORK_LOCOMO` is a folder holding the conversations' JSON files (searched recursively: what the
//! public `snap-research/locomo` repository's `data/locomo10.zip` unpacks to, or its
//! `locomo10.json`); `scripts/bench.sh` also takes the zip itself and unpacks it. Prints the tables
//! and writes `bench-results/locomo.json` (or FILE).
use cowork_bench::locomo::{load_dir, report};
use cowork_core::semantic;
use cowork_core::store::Store;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

const HOW: &str = "get the data from the public snap-research/locomo repository (its data/locomo10.zip) \
                   and set COWORK_LOCOMO=/path/to/locomo10.zip (scripts/bench.sh) or to the folder it unpacks to";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench-results/locomo.json");
    let mut model = semantic::MINILM;
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--out", Some(path)) => out = PathBuf::from(path),
            ("--model", Some(name)) => match semantic::MODELS.into_iter().find(|m| m.name == name) {
                Some(m) => model = m,
                None => {
                    let known: Vec<&str> = semantic::MODELS.iter().map(|m| m.name).collect();
                    eprintln!("unknown model {name}: one of {}", known.join(", "));
                    return ExitCode::FAILURE;
                }
            },
            _ => {
                eprintln!("usage: locomo [--model NAME] [--out FILE]");
                return ExitCode::FAILURE;
            }
        }
    }
    let Some(dir) = std::env::var_os("COWORK_LOCOMO").map(PathBuf::from) else {
        println!("LoCoMo rows skipped: COWORK_LOCOMO is not set ({HOW})");
        return ExitCode::SUCCESS;
    };
    if !dir.is_dir() {
        eprintln!("COWORK_LOCOMO={} is not a folder: unpack the zip (python3 -m zipfile -e) or run scripts/bench.sh, which does; {HOW}", dir.display());
        return ExitCode::FAILURE;
    }
    let t = Instant::now();
    let convs = match load_dir(&dir) {
        Ok(convs) if !convs.is_empty() => convs,
        Ok(_) => {
            eprintln!("no LoCoMo conversation found under {}; {HOW}", dir.display());
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("reading LoCoMo: {e}");
            return ExitCode::FAILURE;
        }
    };
    if convs.len() != 10 {
        println!("note: {} conversations found under {} (LoCoMo has 10)", convs.len(), dir.display());
    }
    // COWORK_LOCOMO_ARCHIVE: an archive file kept between runs (with its vectors: indexing, the
    // slow part, is then done once). Otherwise an archive in memory.
    let mut store = match std::env::var("COWORK_LOCOMO_ARCHIVE") {
        Ok(path) => Store::open(&path).expect("the LoCoMo archive file"),
        Err(_) => Store::open_in_memory().expect("an in-memory archive"),
    };
    let results = report::run(&mut store, &convs, &model).expect("the benchmark runs");
    results.print();
    let mut json = results.to_json();
    json["seconds"]["total"] = serde_json::json!(t.elapsed().as_secs_f64());
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent).expect("the results folder");
    }
    std::fs::write(&out, serde_json::to_string_pretty(&json).expect("JSON") + "\n").expect("writing the results");
    let shown = out.canonicalize().unwrap_or(out);
    println!("total {:.1} s; written to {}", t.elapsed().as_secs_f64(), shown.display());
    ExitCode::SUCCESS
}
