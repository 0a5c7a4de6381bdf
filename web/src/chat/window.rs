//! The conversation's window of turns: at most `VISIBLE_TURNS` of a session, whatever its length.
//! Opening a session loads its end (or the turns around a search hit); scrolling past either edge loads
//! `PAGE_TURNS` more and drops the far side. Pure, tested natively.

use super::{OPEN_TURNS, PAGE_TURNS, VISIBLE_TURNS};
use crate::protocol::ops::GetTurns;
use cowork_core::{Session, Turn};

/// The operation that loads the visible turns of a session: its newest, or those around `around`.
pub fn load_turns_op(session: &Session, around: Option<i64>) -> GetTurns {
    let offset = match around {
        Some(n) => (n as usize).saturating_sub(OPEN_TURNS / 2 + 1),
        None => (session.turn_count as usize).saturating_sub(OPEN_TURNS),
    };
    GetTurns { session_id: session.id.clone(), offset, limit: OPEN_TURNS }
}

/// The operation that loads the page before (`older`) or after the window, or `None` at that end.
pub fn page_op(session: &Session, window: &[Turn], older: bool) -> Option<GetTurns> {
    let (first, last) = (window.first()?.turn_number, window.last()?.turn_number);
    let (offset, limit) = if older {
        let start = (first - 1 - PAGE_TURNS as i64).max(0);
        (start, first - 1 - start)
    } else {
        (last, (session.turn_count - last).min(PAGE_TURNS as i64))
    };
    (limit > 0).then(|| GetTurns { session_id: session.id.clone(), offset: offset as usize, limit: limit as usize })
}

/// Puts a page of turns into the window, in front (`older`) or behind, and trims the far side so the
/// window never holds more than `max` turns.
pub fn merge_page(window: &mut Vec<Turn>, page: Vec<Turn>, older: bool, max: usize) {
    if older {
        let first = window.first().map_or(i64::MAX, |t| t.turn_number);
        let mut merged: Vec<Turn> = page.into_iter().filter(|t| t.turn_number < first).collect();
        merged.append(window);
        merged.truncate(max);
        *window = merged;
    } else {
        let last = window.last().map_or(i64::MIN, |t| t.turn_number);
        window.extend(page.into_iter().filter(|t| t.turn_number > last));
        let excess = window.len().saturating_sub(max);
        window.drain(..excess);
    }
}

/// Puts a saved (or updated) turn into the window, in order, keeping it bounded.
pub fn show_turn(window: &mut Vec<Turn>, turn: &Turn) {
    window.retain(|t| t.turn_number != turn.turn_number);
    window.push(turn.clone());
    cowork_core::order::sort_by_key(window, |t| t.turn_number);
    let excess = window.len().saturating_sub(VISIBLE_TURNS);
    window.drain(..excess);
}

#[cfg(test)]
mod tests;
