//! Native search latency per query kind, per search (not per batch), on a file archive:
//!
//!     cargo run --release -p cowork-bench --example search_kinds -- [path] [turns]
//!
//! The archive at `path` is generated on the first run (`turns` turns, sessions of 10,000, the
//! benchmark's generator) and reused afterwards, so two builds of the store can be timed on the same
//! data (copy the file first: a newer build may upgrade it). Besides the benchmark's mix (`gen::QUERIES`,
//! all sessions, 20 hits) it times questions in plain language, session-scoped searches and
//! search-as-you-type prefixes (the session scope: the oldest session, with the benchmark's mix).
use cowork_bench::{gen, percentile, seed_session};
use cowork_core::store::Store;
use cowork_core::{SearchQuery, SearchScope};
use std::time::Instant;

const EXTRA: &[(&str, &[&str])] = &[
    (
        "question",
        &[
            "when did we fix the memory leak in the connection pool?",
            "what did we say about the refresh token and the session store",
            "why is the RetryPolicy timeout wrong for the worker queue",
            "where is the zanzibar config for the deploy",
        ],
    ),
    ("prefix", &["refr", "connection po", "the err", "zanz"]),
    // Words with 1,400 to 2,500 matches at 100k: every match ranked, close to the budget (the worst case).
    ("budget", &["batch", "commit", "rollback log", "transaction log"]),
];

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| std::env::temp_dir().join("cowork-search-kinds.db").display().to_string());
    let turns: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let fresh = !std::path::Path::new(&path).exists();
    let mut store = Store::open(&path).unwrap();
    if fresh {
        let mut rng = gen::Rng::new(42);
        let t = Instant::now();
        let per = 10_000.min(turns);
        for _ in 0..turns.div_ceil(per) {
            seed_session(&mut store, &mut rng, "bench", per).unwrap();
        }
        eprintln!("seeded {turns} turns in {:.1} s", t.elapsed().as_secs_f64());
    }
    let session: String =
        store.connection().query_row("SELECT session_id FROM turns ORDER BY id LIMIT 1", [], |r| r.get(0)).unwrap();
    let kinds = gen::QUERIES.iter().chain(EXTRA).map(|(k, q)| (k.to_string(), *q));
    let scoped = std::iter::once(("scoped".to_string(), gen::QUERIES.iter().flat_map(|(_, q)| q.iter()).copied()))
        .map(|(k, q)| (k, q.collect::<Vec<_>>()));
    let run = |kind: &str, queries: &[&str], scope: &dyn Fn() -> SearchScope, prefix: bool| {
        let mut ms = Vec::new();
        let mut found = 0;
        for _ in 0..20 {
            for q in queries {
                let query = SearchQuery { limit: 20, prefix_last: prefix, ..SearchQuery::new(*q, scope()) };
                let t = Instant::now();
                let hits = store.search(&query).unwrap();
                ms.push(t.elapsed().as_secs_f64() * 1000.0);
                found += hits.len();
            }
        }
        println!(
            "{kind:9} p50 {:6.2} ms  p99 {:6.2} ms  max {:6.2} ms  ({} hits/search)",
            percentile(&ms, 50.0),
            percentile(&ms, 99.0),
            percentile(&ms, 100.0),
            found / ms.len()
        );
    };
    for (kind, queries) in kinds {
        run(&kind, queries, &|| SearchScope::All, kind == "prefix");
    }
    for (kind, queries) in scoped {
        run(&kind, &queries, &|| SearchScope::Session { session_id: session.clone() }, false);
    }
}
