//! Stable sorting through one instance of the standard library's sort. `slice::sort_by` is generic over
//! the element and the comparison, so every call site with its own closure puts another copy of the
//! sorting code (1.3–2 KB each, gzipped) into the wasm the user downloads. Here a sort orders the
//! positions `0..n` with the comparison behind a `&dyn Fn` (one instance for the whole program) and
//! then moves the items into that order, which costs one indirect call per comparison: fine where
//! lists are short (a page of turns, a hit list), not for hot loops over large arrays.

use std::cmp::Ordering;

/// Sorts `items` by `cmp`, stably (equal items keep their order).
pub fn sort_by<T>(items: &mut Vec<T>, cmp: impl Fn(&T, &T) -> Ordering) {
    if items.len() < 2 {
        return;
    }
    let order = positions(items.len(), &|a, b| cmp(&items[a], &items[b]));
    let mut slots: Vec<Option<T>> = std::mem::take(items).into_iter().map(Some).collect();
    items.extend(order.into_iter().filter_map(|i| slots[i as usize].take()));
}

/// Sorts `items` by `key`, stably.
pub fn sort_by_key<T, K: Ord>(items: &mut Vec<T>, key: impl Fn(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// The positions `0..n` in the order `cmp` gives them (stable).
fn positions(n: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<u32> {
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by(|&a, &b| cmp(a as usize, b as usize));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_stably_like_the_standard_sort() {
        let cases: Vec<Vec<(i32, char)>> = vec![
            vec![],
            vec![(1, 'a')],
            vec![(3, 'a'), (1, 'b'), (3, 'c'), (2, 'd'), (1, 'e')],
            (0..200).map(|i| ((i * 7919) % 13, char::from(b'a' + (i % 26) as u8))).collect(),
            (0..50).rev().map(|i| (i, 'z')).collect(),
        ];
        for case in cases {
            let mut expected = case.clone();
            expected.sort_by_key(|p| p.0);
            let mut got = case.clone();
            sort_by_key(&mut got, |p| p.0);
            assert_eq!(got, expected, "{case:?}");
            let mut got = case.clone();
            sort_by(&mut got, |a, b| b.0.cmp(&a.0));
            let mut expected = case;
            expected.sort_by_key(|p| std::cmp::Reverse(p.0));
            assert_eq!(got, expected);
        }
    }
}
