//! Native profiling of the benchmark's operations (where does the time go?), on a file archive:
//!
//!     cargo run --release -p cowork-bench --example profile -- [turns] [what]
//!
//! `what`: all | append | search | resume | context. Run it under `perf record -g` for a profile.
use cowork_bench::{assemble, gen, like_scan, percentile, search, seed_session};
use cowork_core::store::Store;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let turns: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let what = args.next().unwrap_or_else(|| "all".into());
    let dir = std::env::temp_dir().join(format!("cowork-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("archive.db");
    let mut store = Store::open(path.to_str().unwrap()).unwrap();
    let mut rng = gen::Rng::new(42);
    let t = Instant::now();
    let per = 10_000.min(turns);
    let sessions: Vec<String> =
        (0..turns.div_ceil(per)).map(|_| seed_session(&mut store, &mut rng, "bench", per).unwrap()).collect();
    eprintln!("seeded {turns} turns in {:.1} s", t.elapsed().as_secs_f64());
    let time = |f: &mut dyn FnMut(), reps: usize| -> (f64, f64) {
        let ms: Vec<f64> = (0..reps)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        (percentile(&ms, 50.0), percentile(&ms, 99.0))
    };
    if what == "all" || what == "search" {
        for (kind, queries) in gen::QUERIES {
            let (p50, p99) = time(&mut || queries.iter().for_each(|q| drop(search(&store, q).unwrap())), 30);
            let (l50, _) = time(
                &mut || {
                    queries.iter().for_each(|q| {
                        let _ = like_scan(&store, q).unwrap();
                    })
                },
                2,
            );
            let n = queries.len() as f64;
            println!("search {kind:7} p50 {:.2} ms p99(batch) {:.2} ms  LIKE {:.2} ms", p50 / n, p99 / n, l50 / n);
        }
    }
    if what == "all" || what == "resume" {
        let (p50, p99) = time(&mut || drop(store.resume(&sessions[0], 50).unwrap()), 50);
        println!("resume p50 {p50:.3} ms p99 {p99:.3} ms");
    }
    if what == "all" || what == "context" {
        for window in [32_768, 200_000] {
            let (p50, p99) = time(&mut || drop(assemble(&store, &sessions[0], window).unwrap()), 50);
            println!("context {window} p50 {p50:.3} ms p99 {p99:.3} ms");
        }
        // As the agent loop does: a new turn, then the context for the next request.
        let ms: Vec<f64> = (0..50)
            .map(|_| {
                store.append_turn(&sessions[0], &gen::turn(&mut rng, 1)).unwrap();
                let t = Instant::now();
                drop(assemble(&store, &sessions[0], 200_000).unwrap());
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        println!(
            "context 200000 after a new turn p50 {:.3} ms p99 {:.3} ms",
            percentile(&ms, 50.0),
            percentile(&ms, 99.0)
        );
    }
    if what == "all" || what == "append" {
        let (p50, p99) = time(
            &mut || {
                let turn = gen::turn(&mut rng, 1);
                store.append_turn(&sessions[0], &turn).unwrap();
            },
            200,
        );
        println!("append p50 {p50:.3} ms p99 {p99:.3} ms");
    }
    drop(store);
    std::fs::remove_dir_all(&dir).ok();
}
