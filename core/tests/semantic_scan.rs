//! Search by meaning at scale: past `EXACT_SCAN_MAX` vectors a coarse pass on their signs chooses
//! which to score exactly. It must still find the nearest turns.
#![cfg(not(target_arch = "wasm32"))]

use cowork_core::semantic::{Matched, DIMS, EXACT_SCAN_MAX};
use cowork_core::store::{NewSession, Store};
use cowork_core::{NewTurn, SearchQuery, SearchScope};

fn vector(seed: u64) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut v: Vec<f32> = (0..DIMS)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
    v.iter_mut().for_each(|a| *a /= n);
    v
}

#[test]
fn a_big_index_still_finds_the_nearest_turns() {
    let mut store = Store::open_in_memory().unwrap();
    let sid = store.create_session(&NewSession::new("w")).unwrap().id;
    let n = EXACT_SCAN_MAX + 5_000;
    for start in (0..n).step_by(1000) {
        let turns: Vec<NewTurn> = (start..start + 1000).map(|i| NewTurn::user(format!("turn {i}"))).collect();
        store.append_turns(&sid, &turns).unwrap();
    }
    loop {
        let batch = store.semantic_pending(5000).unwrap();
        if batch.is_empty() {
            break;
        }
        let vectors: Vec<Vec<f32>> = batch.chunks.iter().map(|c| vector(c.turn_id as u64)).collect();
        store.put_vectors(&batch, &vectors).unwrap();
    }
    // Queries near three turns' vectors (each mixed with noise): those turns come first.
    for target in [7u64, 12_345, 24_999] {
        let q: Vec<f32> = vector(target).iter().zip(vector(target + 1_000_000)).map(|(a, b)| a + 0.5 * b).collect();
        let norm = q.iter().map(|a| a * a).sum::<f32>().sqrt();
        let q: Vec<f32> = q.iter().map(|a| a / norm).collect();
        let hits = store
            .search_hybrid(&SearchQuery { limit: 5, ..SearchQuery::new("zzz", SearchScope::All) }, Some(&q))
            .unwrap();
        assert_eq!(hits.first().map(|h| (h.turn_id, h.matched)), Some((target as i64, Matched::Meaning)), "{hits:?}");
    }
}
