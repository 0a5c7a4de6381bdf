//! Native profile of a first sync's apply path: one archive of `turns` turns (10,000 a session)
//! turns sync on and its whole outbox is read as the stream would carry it (JSON bodies); a second,
//! empty archive on a file then reads and applies that stream `batch` messages a transaction, as the
//! storage worker does with what the transport fetched:
//!
//!     cargo run --release -p cowork-bench --example first_sync -- [turns] [batch]
//!
//! Prints the time spent reading the bodies (`read_message`) and applying them
//! (`Store::apply_sync_received`), and the turns applied a second. Run it under `perf record -g` to
//! see where applying goes.
use cowork_bench::{gen, seed_session};
use cowork_core::store::sync::read_message;
use cowork_core::store::Store;
use cowork_core::Space;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let turns: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let batch: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(500);
    let dir = std::env::temp_dir().join(format!("cowork-first-sync-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let open = |name: &str| Store::open(dir.join(name).to_str().expect("a temporary path is UTF-8")).unwrap();

    let mut a = open("a.db");
    let mut rng = gen::Rng::new(42);
    let t = Instant::now();
    let per = 10_000.min(turns);
    for _ in 0..turns.div_ceil(per) {
        seed_session(&mut a, &mut rng, "bench", per).unwrap();
    }
    a.enable_sync("bench-a").unwrap();
    let mut stream: Vec<String> = Vec::new();
    loop {
        let out = a.sync_outgoing(&Space::Personal, 500).unwrap();
        let Some(last) = out.last() else { break };
        a.sync_published(&Space::Personal, last.seq).unwrap();
        stream.extend(out.iter().map(|m| serde_json::to_string(m).expect("sync messages are plain data")));
    }
    eprintln!("seeded {turns} turns and read {} messages in {:.1} s", stream.len(), t.elapsed().as_secs_f64());
    drop(a);

    let mut b = open("b.db");
    b.enable_sync("bench-b").unwrap();
    let (mut read_s, mut apply_s) = (0.0, 0.0);
    let t = Instant::now();
    for (k, chunk) in stream.chunks(batch).enumerate() {
        let r = Instant::now();
        let received: Vec<_> =
            chunk.iter().enumerate().map(|(i, body)| ((k * batch + i + 1) as i64, read_message(body))).collect();
        read_s += r.elapsed().as_secs_f64();
        let r = Instant::now();
        b.apply_sync_received(&Space::Personal, &received, &mut |i| chunk[i].as_bytes().to_vec()).unwrap();
        apply_s += r.elapsed().as_secs_f64();
    }
    let total = t.elapsed().as_secs_f64();
    let applied = b.sync_cursor(&Space::Personal).unwrap();
    println!(
        "first sync of {} messages, {batch} a transaction: {total:.2} s (reading {read_s:.2} s, applying {apply_s:.2} s), {:.0} messages/s applied",
        applied,
        applied as f64 / apply_s
    );
    drop(b);
    std::fs::remove_dir_all(&dir).ok();
}
