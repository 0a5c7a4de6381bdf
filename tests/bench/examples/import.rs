//! The import benchmark, natively: a generated 100 MB ChatGPT export (5,000 conversations) imported
//! into a file archive with `Store::import_foreign`, timed, with the peak resident memory above what
//! was resident before (the input included: Linux's `VmHWM`, reset first) beside the largest
//! conversation's size. (The workspace denies `unsafe`, so no counting allocator.)
//!
//!     cargo run --release -p cowork-bench --example import -- [conversations] [megabytes]
//!
//! Prints one JSON object (`scripts/bench.sh` runs it and shows it beside the browser's table).
use cowork_bench::gen_chatgpt::chatgpt_export;
use cowork_core::import::ImportFile;
use cowork_core::store::Store;
use std::time::Instant;

/// A line of `/proc/self/status` in bytes (`VmRSS`: resident now; `VmHWM`: the peak).
fn status_bytes(field: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux /proc");
    let line = status.lines().find(|l| l.starts_with(field)).expect("the field");
    line.split_whitespace().nth(1).and_then(|kb| kb.parse::<usize>().ok()).expect("kB") * 1024
}

/// Resets the resident-memory peak (`VmHWM`) to what is resident now.
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").expect("resetting the peak (Linux ≥ 4.0)");
}

fn mb(b: usize) -> f64 {
    b as f64 / 1_048_576.0
}

fn main() {
    let mut args = std::env::args().skip(1);
    let conversations: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5_000);
    let megabytes: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    let (file, largest) = chatgpt_export(7, conversations, megabytes * 1_000_000);
    let dir = std::env::temp_dir().join(format!("cowork-import-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut store = Store::open(dir.join("archive.db").to_str().unwrap()).unwrap();
    let baseline = status_bytes("VmRSS:");
    reset_peak();
    let t = Instant::now();
    let files = [ImportFile::new("conversations.json", &file)];
    let preview = store.preview_import(&files).expect("preview");
    let preview_s = t.elapsed().as_secs_f64();
    let preview_peak = status_bytes("VmHWM:").saturating_sub(baseline);
    reset_peak();
    let t = Instant::now();
    let summary = store.import_foreign(&files, &mut |_| {}).expect("import");
    let import_s = t.elapsed().as_secs_f64();
    let import_peak = status_bytes("VmHWM:").saturating_sub(baseline);
    assert_eq!(summary.counts, preview.counts, "the import does what the preview said");
    let c = &summary.counts;
    println!(
        "{}",
        serde_json::json!({
            "file_mb": mb(file.len()), "conversations": c.conversations, "sessions": c.sessions, "forks": c.forks,
            "turns": c.turns, "largest_conversation_mb": mb(largest),
            "preview_s": preview_s, "preview_peak_mb": mb(preview_peak),
            "import_s": import_s, "import_peak_mb": mb(import_peak),
            "peak_over_largest": import_peak as f64 / largest as f64,
        })
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}
