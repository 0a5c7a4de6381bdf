use super::{chunk_ids, chunk_of};
use crate::chat::test_data::{turn, turns};

#[test]
fn a_turn_s_run_follows_from_its_number_alone() {
    for (n, run) in [(1, 0), (16, 0), (17, 1), (32, 1), (33, 2), (200, 12)] {
        assert_eq!(chunk_of(&turn(n)), run, "turn {n}");
    }
}

#[test]
fn the_runs_of_a_window_of_turns_are_listed_in_order_once_each() {
    // A window paged in from turn 10, the reply in the middle of a run.
    assert_eq!(chunk_ids(&turns(10..=40)), vec![0, 1, 2]);
    assert_eq!(chunk_ids(&turns(17..=32)), vec![1]);
    assert_eq!(chunk_ids(&[]), Vec::<i64>::new());
    // 200 turns in view are a dozen boxes, not 200.
    assert_eq!(chunk_ids(&turns(1..=200)).len(), 13);
}
