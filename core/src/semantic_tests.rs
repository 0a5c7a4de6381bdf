use super::*;

#[test]
fn short_text_is_one_chunk_and_blank_text_none() {
    assert_eq!(chunks("  the auth tokens expire after an hour \n"), vec!["the auth tokens expire after an hour"]);
    assert!(chunks(" \n\t ").is_empty());
    let exactly = "x".repeat(CHUNK_CHARS);
    assert_eq!(chunks(&exactly), vec![exactly.as_str()]);
}

#[test]
fn long_text_is_cut_in_overlapping_windows_at_whitespace() {
    // 400 numbered words of 9–10 characters: every word must be whole in some chunk.
    let words: Vec<String> = (0..400).map(|i| format!("word{i:05}")).collect();
    let text = words.join(" ");
    let parts = chunks(&text);
    assert!(parts.len() > 1, "{} chars give several chunks", text.len());
    for part in &parts {
        assert!(part.chars().count() <= CHUNK_CHARS, "a chunk of {} chars", part.chars().count());
        assert!(part.starts_with("word") && part.split(' ').all(|w| w.len() == 9), "cut inside a word: {part:.40}");
    }
    for w in &words {
        assert!(parts.iter().any(|p| p.split(' ').any(|x| x == w)), "{w} is in no chunk");
    }
    // Consecutive chunks overlap: the next one begins with words the previous one ended with.
    for pair in parts.windows(2) {
        let first_next = pair[1].split(' ').next().unwrap();
        assert!(pair[0].contains(first_next), "no overlap between chunks");
    }
}

#[test]
fn text_without_spaces_and_multibyte_text_are_cut_on_char_boundaries() {
    let cjk = "語".repeat(CHUNK_CHARS * 3);
    let parts = chunks(&cjk);
    assert!(parts.len() >= 3);
    assert!(parts.iter().all(|p| p.chars().count() <= CHUNK_CHARS && p.chars().all(|c| c == '語')));
}

#[test]
fn a_huge_turn_is_capped_at_max_chunks() {
    let text = "lorem ipsum dolor ".repeat(100_000);
    assert_eq!(chunks(&text).len(), MAX_CHUNKS);
}

#[test]
fn quantized_dot_products_follow_cosine_similarity() {
    let unit = |v: Vec<f32>| {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect::<Vec<f32>>()
    };
    let a = unit((0..DIMS).map(|i| (i as f32 * 0.37).sin()).collect());
    let b = unit((0..DIMS).map(|i| (i as f32 * 0.37).sin() + 0.3 * (i as f32 * 1.3).cos()).collect());
    let c = unit((0..DIMS).map(|i| (i as f32 * 2.9).cos()).collect());
    let cos = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>();
    let (qa, qb, qc) = (quantize(&a), quantize(&b), quantize(&c));
    let approx = |x: &[i8], y: &[i8]| dot(x, y) as f32 / (127.0 * 127.0);
    assert!((approx(&qa, &qb) - cos(&a, &b)).abs() < 0.02);
    assert!((approx(&qa, &qc) - cos(&a, &c)).abs() < 0.02);
    assert!(dot(&qa, &qb) > dot(&qa, &qc));
    assert!((approx(&qa, &qa) - 1.0).abs() < 0.02);
}

#[test]
fn fusion_ranks_by_reciprocal_rank_and_says_how_each_was_found() {
    // Lexical: 1, 2, 3. Semantic: 3, 4, 1.
    let fused = fuse(&[1, 2, 3], &[3, 4, 1]);
    let order: Vec<i64> = fused.iter().map(|f| f.0).collect();
    // 1: 1/(k+1) + 1/(k+3); 3: the same (a tie, lexical order decides); 2 and 4: 1/(k+2) (lexical first).
    assert_eq!(order, vec![1, 3, 2, 4]);
    let how: Vec<Matched> = fused.iter().map(|f| f.1).collect();
    assert_eq!(how, vec![Matched::Both, Matched::Both, Matched::Words, Matched::Meaning]);
    assert!((fused[0].2 - (1.0 / (RRF_K + 1.0) + 1.0 / (RRF_K + 3.0))).abs() < 1e-12);
}

#[test]
fn fusion_of_one_list_keeps_its_order() {
    let only_words = fuse(&[5, 9, 7], &[]);
    assert_eq!(only_words.iter().map(|f| f.0).collect::<Vec<_>>(), vec![5, 9, 7]);
    assert!(only_words.iter().all(|f| f.1 == Matched::Words));
    let only_meaning = fuse(&[], &[7, 5]);
    assert_eq!(
        only_meaning.iter().map(|f| (f.0, f.1)).collect::<Vec<_>>(),
        vec![(7, Matched::Meaning), (5, Matched::Meaning)]
    );
    // A repeated id counts once per list.
    assert_eq!(fuse(&[1, 1], &[1]).len(), 1);
}

#[test]
fn a_hit_both_lists_rank_moderately_beats_one_list_ranks_first() {
    let fused = fuse(&[10, 20], &[30, 20]);
    assert_eq!(fused[0].0, 20);
}

#[test]
fn a_candidate_next_to_a_strong_hit_rises_above_a_weaker_one_elsewhere() {
    // 1 is found by both lists; 4 (by meaning) is the turn after it; 2 (by words) is ahead of 4 in
    // the fusion, in another session; 3 is two turns after 4; 5 has no known place.
    let fused = fuse(&[1, 2, 3, 5], &[1, 4]);
    assert_eq!(fused.iter().map(|f| f.0).collect::<Vec<_>>(), vec![1, 2, 4, 3, 5]);
    let place = |id: i64| match id {
        1 => Some(("s".to_owned(), 10)),
        2 => Some(("t".to_owned(), 11)),
        3 => Some(("s".to_owned(), 13)),
        4 => Some(("s".to_owned(), 11)),
        _ => None,
    };
    let lifted = lift_neighbours(fused.clone(), place);
    assert_eq!(lifted.iter().map(|f| f.0).collect::<Vec<_>>(), vec![1, 4, 2, 3, 5]);
    // 4 gained a share of 1's score, and kept how it was found; 1 gained a share of 4's.
    let score = |list: &[(i64, Matched, f64)], id: i64| list.iter().find(|f| f.0 == id).map(|f| (f.1, f.2)).unwrap();
    let (how, s4) = score(&lifted, 4);
    assert_eq!(how, Matched::Meaning);
    assert!((s4 - (score(&fused, 4).1 + NEIGHBOUR_SHARE * score(&fused, 1).1)).abs() < 1e-12);
    assert!((score(&lifted, 1).1 - (score(&fused, 1).1 + NEIGHBOUR_SHARE * score(&fused, 4).1)).abs() < 1e-12);
    // Not next to another candidate (another session, two turns away, no place): unchanged.
    for id in [2, 3, 5] {
        assert_eq!(score(&lifted, id), score(&fused, id));
    }
    // Nothing placed: the fused order exactly.
    assert_eq!(lift_neighbours(fused.clone(), |_| None), fused);
}

#[test]
fn a_first_chunk_carries_the_end_of_the_turn_before() {
    assert_eq!(with_context("", "yes, every hour"), "yes, every hour");
    assert_eq!(
        with_context("how often do tokens expire?", "yes, every hour"),
        "how often do tokens expire?\nyes, every hour"
    );
    let long = format!("{} the end of it", "word ".repeat(200));
    let tail = context_tail(&long);
    assert!(tail.chars().count() <= CONTEXT_CHARS && tail.ends_with("the end of it") && tail.starts_with("word"));
    assert_eq!(context_tail("  short  "), "short");
}

#[test]
fn candidates_in_the_session_of_a_strong_hit_rise_above_weaker_ones_elsewhere() {
    // 1 (both lists) and 3 are in session "s", far apart; 2 is in "t"; 4 has no known place.
    let fused = fuse(&[1, 2, 3, 4], &[1]);
    assert_eq!(fused.iter().map(|f| f.0).collect::<Vec<_>>(), vec![1, 2, 3, 4]);
    let session = |id: i64| match id {
        1 | 3 => Some("s".to_owned()),
        2 => Some("t".to_owned()),
        _ => None,
    };
    let lifted = lift_sessions(fused.clone(), session);
    assert_eq!(lifted.iter().map(|f| f.0).collect::<Vec<_>>(), vec![1, 3, 2, 4]);
    let score = |list: &[(i64, Matched, f64)], id: i64| list.iter().find(|f| f.0 == id).map(|f| (f.1, f.2)).unwrap();
    let best = score(&fused, 1).1;
    // Each adds a share of its session's best score (the best one its own), and keeps how it was found.
    assert!((score(&lifted, 1).1 - best * (1.0 + SESSION_SHARE)).abs() < 1e-12);
    assert!((score(&lifted, 3).1 - (score(&fused, 3).1 + SESSION_SHARE * best)).abs() < 1e-12);
    assert!((score(&lifted, 2).1 - score(&fused, 2).1 * (1.0 + SESSION_SHARE)).abs() < 1e-12);
    assert_eq!(score(&lifted, 3).0, Matched::Words);
    assert_eq!(score(&lifted, 4), score(&fused, 4), "no known session: unchanged");
    // Nothing placed: the fused order exactly.
    assert_eq!(lift_sessions(fused.clone(), |_| None), fused);
}

#[test]
fn indexing_batches_follow_the_model_pace() {
    // (turns in the last batch, its milliseconds, model workers) → turns in the next.
    let cases: [(usize, f64, usize, usize); 12] = [
        (16, 600.0, 2, 13),  // the small model with two workers: a little under the target
        (16, 250.0, 2, 16),  // faster than the target: still at most 16
        (8, 100.0, 2, 16),   // twice the last at most, within 16
        (2, 100.0, 2, 4),    // grows by doubling, not at once
        (16, 6_000.0, 2, 2), // the larger model: a turn for each worker
        (16, 6_000.0, 1, 1), // … and with one worker, one turn
        (2, 1_500.0, 1, 1),  // a slow device
        (1, 10_000.0, 0, 1), // never less than one
        (1, 0.0, 1, 2),      // no time measured: doubles
        (0, 50.0, 1, 2),     // an empty batch counts as one turn
        (4, f64::NAN, 1, 8), // a broken clock: doubles
        (1, 100.0, 32, 32),  // more workers than the most turns: one each
    ];
    for (turns, ms, workers, next) in cases {
        assert_eq!(next_batch_turns(turns, ms, workers), next, "{turns} turns in {ms} ms, {workers} workers");
    }
}
