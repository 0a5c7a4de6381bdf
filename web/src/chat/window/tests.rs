use super::*;
use crate::chat::test_data::{session, turns};
use crate::protocol::ops::GetTurns;

fn numbers(window: &[Turn]) -> (i64, i64, usize) {
    (window[0].turn_number, window.last().unwrap().turn_number, window.len())
}

#[test]
fn scrolling_a_long_session_keeps_a_bounded_window() {
    let session = Session { turn_count: 10_000, ..session("s", "", "", "") };
    let mut window = turns(9_901..=10_000);
    assert_eq!(page_op(&session, &window, false), None, "the end is loaded: nothing newer");
    // Up: pages of older turns come in front; past the bound, the newest leave.
    for _ in 0..3 {
        let Some(GetTurns { offset, limit, .. }) = page_op(&session, &window, true) else { panic!() };
        merge_page(&mut window, turns(offset as i64 + 1..=(offset + limit) as i64), true, VISIBLE_TURNS);
    }
    assert_eq!(numbers(&window), (9_751, 9_950, VISIBLE_TURNS));
    // Down again: newer pages come behind, the oldest leave, and the end is reached.
    while let Some(GetTurns { offset, limit, .. }) = page_op(&session, &window, false) {
        merge_page(&mut window, turns(offset as i64 + 1..=(offset + limit) as i64), false, VISIBLE_TURNS);
    }
    assert_eq!(numbers(&window), (9_801, 10_000, VISIBLE_TURNS));
    // At the very top the first page is short, and then there is nothing older.
    let mut top = turns(30..=229);
    let Some(GetTurns { offset, limit, .. }) = page_op(&session, &top, true) else { panic!() };
    assert_eq!((offset, limit), (0, 29));
    merge_page(&mut top, turns(1..=29), true, VISIBLE_TURNS);
    assert_eq!(numbers(&top), (1, 200, VISIBLE_TURNS));
    assert_eq!(page_op(&session, &top, true), None);
    // A page that overlaps the window (a turn arrived meanwhile) adds no duplicates.
    let mut w = turns(1..=10);
    merge_page(&mut w, turns(8..=12), false, VISIBLE_TURNS);
    assert_eq!(numbers(&w), (1, 12, 12));
}
