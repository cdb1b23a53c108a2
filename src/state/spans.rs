//! An index of half-open address spans answering "which span contains `[addr, end)`?" in
//! expected O(1) time, however many spans it holds: a hierarchical hash grid.
//!
//! A span of length `len` lives at level `L = max(12, ceil(log2 len))`: cut into granules of
//! `2^L` bytes, it touches at most two of them, and it is filed in the bucket of each. A span
//! containing a query is at least as long as the query, so only the levels in use whose
//! granule is at least the query's length are asked, each in the one bucket holding the
//! query's first byte. A process uses few levels (registrations come in few sizes), so a
//! look-up is a handful of hash probes at most, with no allocation.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

pub use crate::hash::AddrHasher;

/// A map keyed by an address.
pub type AddrMap<V> = HashMap<usize, V, BuildHasherDefault<AddrHasher>>;

/// The smallest granule is a page: spans shorter than that share its level.
const MIN_LEVEL: u32 = 12;
/// The largest level: at `2^(BITS-1)` the whole address space is two granules, so any span
/// touches at most two.
const MAX_LEVEL: u32 = usize::BITS - 1;
/// The low bits of a bucket key that hold the level.
pub(super) const LEVEL_BITS: u32 = 6;

/// One span: `(start, end, payload)`.
pub type Span<T> = (usize, usize, T);

/// The level of a span (or query) of `len` bytes: the smallest `L >= 12` with `2^L >= len`
/// (capped at the largest level).
pub(super) fn level_of(len: usize) -> u32 {
    let ceil_log2 = if len <= 1 { 0 } else { usize::BITS - (len - 1).leading_zeros() };
    ceil_log2.clamp(MIN_LEVEL, MAX_LEVEL)
}

/// The bucket of the level-`level` granule holding `addr`. Granule numbers at level 12 or
/// more leave the low bits free for the level, so keys of different levels never collide.
pub(super) fn key(level: u32, addr: usize) -> usize {
    ((addr >> level) << LEVEL_BITS) | level as usize
}

/// The spans filed in one granule, in insertion order (one span, the common case, is held
/// inline with no allocation of its own).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Bucket<T> {
    One(Span<T>),
    Many(Vec<Span<T>>),
}

impl<T> Bucket<T> {
    fn spans(&self) -> &[Span<T>] {
        match self {
            Bucket::One(s) => std::slice::from_ref(s),
            Bucket::Many(v) => v,
        }
    }
}

/// Half-open spans `[start, end)` with a `T` payload each, found by containment in expected
/// O(1) time whatever their number. Spans may overlap and repeat; empty spans
/// (`end <= start`) are not stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanIndex<T> {
    buckets: AddrMap<Bucket<T>>,
    /// Bit `L` is set while some span lives at level `L`.
    levels: u64,
    /// Spans per level (a level's bit is cleared when its last span leaves).
    per_level: [u32; 64],
    len: usize,
}

impl<T> Default for SpanIndex<T> {
    fn default() -> Self {
        SpanIndex { buckets: AddrMap::default(), levels: 0, per_level: [0; 64], len: 0 }
    }
}

impl<T: Copy + PartialEq> SpanIndex<T> {
    /// Add `[start, end)` with `value`; an empty span (`end <= start`) is not stored. An end of
    /// `usize::MAX` stands for a span reaching the top of the address space.
    pub fn insert(&mut self, start: usize, end: usize, value: T) {
        if end <= start {
            return;
        }
        let level = level_of(end - start);
        let (first, last) = (key(level, start), key(level, end - 1));
        self.file(first, (start, end, value));
        if last != first {
            self.file(last, (start, end, value));
        }
        self.levels |= 1 << level;
        self.per_level[level as usize] += 1;
        self.len += 1;
    }

    fn file(&mut self, key: usize, span: Span<T>) {
        use std::collections::hash_map::Entry;
        match self.buckets.entry(key) {
            Entry::Vacant(v) => {
                v.insert(Bucket::One(span));
            }
            Entry::Occupied(mut o) => {
                let b = o.get_mut();
                match b {
                    Bucket::One(s) => *b = Bucket::Many(vec![*s, span]),
                    Bucket::Many(v) => v.push(span),
                }
            }
        }
    }

    /// Remove one span `[start, end)` whose payload equals `value` (the earliest inserted
    /// of identical ones). `false` when there is none.
    pub fn remove(&mut self, start: usize, end: usize, value: &T) -> bool {
        if end <= start {
            return false;
        }
        let level = level_of(end - start);
        let (first, last) = (key(level, start), key(level, end - 1));
        let span = (start, end, *value);
        if !self.unfile(first, &span) {
            return false;
        }
        if last != first {
            // Identical spans are filed in the same two buckets in the same order.
            self.unfile(last, &span);
        }
        self.per_level[level as usize] -= 1;
        if self.per_level[level as usize] == 0 {
            self.levels &= !(1 << level);
        }
        self.len -= 1;
        true
    }

    fn unfile(&mut self, key: usize, span: &Span<T>) -> bool {
        let Some(b) = self.buckets.get_mut(&key) else { return false };
        match b {
            Bucket::One(s) if s == span => {
                self.buckets.remove(&key);
                true
            }
            Bucket::One(_) => false,
            Bucket::Many(v) => {
                let Some(i) = v.iter().position(|s| s == span) else { return false };
                v.remove(i);
                if let [only] = v.as_slice() {
                    *b = Bucket::One(*only);
                }
                true
            }
        }
    }

    /// A span containing `[addr, end)` (`start <= addr` and `end <= span.end`), or `None`
    /// (also when `end < addr`). When several do, the one of the lowest level (the shortest
    /// granule) is returned, the earliest inserted among those.
    ///
    /// An empty query (`end == addr`) finds a span with `start <= addr <= span.end`: one
    /// holding the byte at `addr` first, else one ending exactly at `addr`.
    #[inline]
    pub fn find(&self, addr: usize, end: usize) -> Option<&Span<T>> {
        if self.levels == 0 {
            return None;
        }
        match end.checked_sub(addr)? {
            0 => addr
                .checked_add(1)
                .and_then(|next| self.find_nonempty(addr, next))
                .or_else(|| self.find_nonempty(addr.checked_sub(1)?, addr)),
            _ => self.find_nonempty(addr, end),
        }
    }

    /// A span holding every byte of `[addr, end)`, `addr < end`.
    #[inline]
    fn find_nonempty(&self, addr: usize, end: usize) -> Option<&Span<T>> {
        // A span at a lower level is shorter than the query.
        let mut levels = self.levels & (u64::MAX << level_of(end - addr));
        while levels != 0 {
            let level = levels.trailing_zeros();
            levels &= levels - 1;
            if let Some(b) = self.buckets.get(&key(level, addr)) {
                if let Some(s) = b.spans().iter().find(|(s, e, _)| *s <= addr && end <= *e) {
                    return Some(s);
                }
            }
        }
        None
    }

    /// Bit `L` is set while some span lives at level `L`.
    #[inline]
    pub fn levels(&self) -> u64 {
        self.levels
    }

    /// Spans stored.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn clear(&mut self) {
        *self = SpanIndex::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: usize = 1 << 30;
    const TIB: usize = 1 << 40;

    #[test]
    fn levels_and_keys() {
        assert_eq!(level_of(0), 12);
        assert_eq!(level_of(1), 12);
        assert_eq!(level_of(4096), 12);
        assert_eq!(level_of(4097), 13);
        assert_eq!(level_of(1 << 21), 21);
        assert_eq!(level_of((1 << 21) + 1), 22);
        assert_eq!(level_of(usize::MAX), MAX_LEVEL);
        assert_ne!(key(12, 0x1000 << 1), key(13, 0x1000 << 1), "levels never share a key");
        assert_eq!(key(MAX_LEVEL, usize::MAX) >> LEVEL_BITS, 1);
    }

    #[test]
    fn containment_at_the_boundaries() {
        let mut ix = SpanIndex::default();
        ix.insert(0x1000, 0x3000, 'a');
        ix.insert(0x3000, 0x3800, 'b'); // touching, shorter than a page
        assert_eq!(ix.find(0x1000, 0x3000), Some(&(0x1000, 0x3000, 'a')));
        assert_eq!(ix.find(0x2fff, 0x3000).map(|s| s.2), Some('a'));
        assert_eq!(ix.find(0x2fff, 0x3001), None, "straddles the two");
        assert_eq!(ix.find(0x3000, 0x3001).map(|s| s.2), Some('b'));
        assert_eq!(ix.find(0x37ff, 0x3800).map(|s| s.2), Some('b'));
        assert_eq!(ix.find(0x3800, 0x3801), None);
        assert_eq!(ix.find(0xfff, 0x1000), None);
        assert_eq!(ix.find(0x2000, 0x1000), None, "end before start");
        assert_eq!(ix.len(), 2);
    }

    #[test]
    fn empty_queries_and_empty_spans() {
        let mut ix = SpanIndex::default();
        ix.insert(0x5000, 0x5000, 1u8);
        ix.insert(0x6000, 0x5000, 1u8);
        assert!(ix.is_empty(), "empty spans are not stored");
        assert!(!ix.remove(0x5000, 0x5000, &1));
        ix.insert(0x1000, 0x2000, 2u8);
        assert_eq!(ix.find(0x1000, 0x1000).map(|s| s.2), Some(2), "at the start");
        assert_eq!(ix.find(0x2000, 0x2000).map(|s| s.2), Some(2), "at the end");
        assert_eq!(ix.find(0x2001, 0x2001), None);
        assert_eq!(ix.find(0xfff, 0xfff), None);
        ix.insert(0x2000, 0x2100, 3u8);
        assert_eq!(ix.find(0x2000, 0x2000).map(|s| s.2), Some(3), "the span holding the byte first");
        assert_eq!(ix.find(0, 0), None);
        assert_eq!(ix.find(usize::MAX, usize::MAX), None);
    }

    #[test]
    fn the_top_of_the_address_space() {
        let mut ix = SpanIndex::default();
        ix.insert(usize::MAX - 0x1000, usize::MAX, 'p');
        ix.insert(1 << 63, usize::MAX, 'h'); // half the address space
        ix.insert(0, usize::MAX, 'w'); // all of it
        assert_eq!(ix.find(usize::MAX - 1, usize::MAX).map(|s| s.2), Some('p'));
        assert_eq!(ix.find(usize::MAX, usize::MAX).map(|s| s.2), Some('p'));
        assert_eq!(ix.find(usize::MAX - 0x2000, usize::MAX).map(|s| s.2), Some('h'));
        assert_eq!(ix.find((1 << 63) - 1, 1 << 63).map(|s| s.2), Some('w'));
        assert_eq!(ix.find(0, usize::MAX).map(|s| s.2), Some('w'));
        assert!(ix.remove(0, usize::MAX, &'w'));
        assert_eq!(ix.find(0, usize::MAX), None);
        assert_eq!(ix.find(0, 1), None);
    }

    #[test]
    fn overlapping_and_repeated_spans() {
        let mut ix = SpanIndex::default();
        ix.insert(0, TIB, 1);
        ix.insert(0x1000, 0x2000, 2);
        ix.insert(0x1000, 0x2000, 3);
        ix.insert(0x1000, 0x2000, 2);
        assert_eq!(ix.find(0x1000, 0x1800).map(|s| s.2), Some(2), "the lowest level, earliest first");
        assert_eq!(ix.find(0x1000, 0x2001).map(|s| s.2), Some(1));
        assert!(ix.remove(0x1000, 0x2000, &2));
        assert_eq!(ix.find(0x1000, 0x1800).map(|s| s.2), Some(3));
        assert!(ix.remove(0x1000, 0x2000, &3));
        assert!(!ix.remove(0x1000, 0x2000, &3), "already gone");
        assert!(!ix.remove(0x1000, 0x2001, &2), "another span");
        assert_eq!(ix.find(0x1000, 0x1800).map(|s| s.2), Some(2));
        assert!(ix.remove(0x1000, 0x2000, &2));
        assert_eq!(ix.find(0x1000, 0x1800).map(|s| s.2), Some(1));
        assert_eq!(ix.levels, 1 << 40, "emptied levels are forgotten");
        ix.clear();
        assert!(ix.is_empty());
        assert_eq!(ix.find(0x1000, 0x1800), None);
    }

    #[test]
    fn a_span_across_a_granule_boundary_is_found_from_both_and_removed_from_both() {
        let mut ix = SpanIndex::default();
        // 1 GiB at level 30, starting half way through a granule.
        let start = 3 * GIB + GIB / 2;
        ix.insert(start, start + GIB, ());
        assert_eq!(ix.buckets.len(), 2);
        assert!(ix.find(start, start + 1).is_some());
        assert!(ix.find(4 * GIB, 4 * GIB + 0x1000).is_some());
        assert!(ix.find(start + GIB - 1, start + GIB).is_some());
        assert!(ix.remove(start, start + GIB, &()));
        assert!(ix.buckets.is_empty());
        assert_eq!(ix.levels, 0);
    }

    /// `find` answers as a scan of every span would: random inserts and removes of spans of
    /// mixed sizes (a page to terabytes; overlapping, touching, at the top of the address
    /// space) and random queries.
    #[test]
    fn find_answers_as_a_scan() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, RngSeed, TestRunner};
        let config = Config {
            cases: 256,
            rng_seed: RngSeed::Fixed(0x7370_616e_7321),
            failure_persistence: None,
            ..Config::default()
        };
        // Addresses cluster so that spans and queries meet: a few bases, page-aligned or not.
        let base = prop::sample::select(vec![0usize, 0x7f00_0000_0000, 1 << 63, usize::MAX - 4 * TIB]);
        let offset = prop_oneof![0usize..0x10_0000, (0usize..64).prop_map(|n| n * 0x20_0000), 0usize..8 * TIB];
        let addr = (base, offset).prop_map(|(b, o)| b.saturating_add(o));
        let len = prop_oneof![
            Just(0usize),
            1usize..0x2000,
            (0usize..8).prop_map(|n| 0x1000 << n),
            (12u32..42).prop_map(|p| 1usize << p),
            0usize..16 * TIB,
            Just(usize::MAX),
        ];
        let span = (addr.clone(), len.clone()).prop_map(|(a, l)| (a, a.saturating_add(l)));
        // (true, span): insert; (false, i): remove the i-th live span (modulo), or a missing one.
        let op = prop_oneof![
            3 => span.prop_map(|s| (true, s)),
            1 => (any::<usize>(), any::<bool>()).prop_map(|(i, b)| (false, (i, usize::from(b)))),
        ];
        let query = (addr, len).prop_map(|(a, l)| (a, a.saturating_add(l)));
        let strategy = (prop::collection::vec(op, 1..60), prop::collection::vec(query, 1..60));
        TestRunner::new(config)
            .run(&strategy, |(ops, queries)| {
                let mut ix = SpanIndex::default();
                let mut naive: Vec<Span<u32>> = Vec::new();
                for (n, (insert, (a, b))) in ops.into_iter().enumerate() {
                    if insert {
                        let value = (n % 3) as u32; // repeats, so removal must pick the right one
                        ix.insert(a, b, value);
                        if a < b {
                            naive.push((a, b, value));
                        }
                    } else if naive.is_empty() || b == 1 {
                        prop_assert!(!ix.remove(a, a.saturating_add(0x1000), &99), "not stored");
                    } else {
                        let s = naive.remove(a % naive.len());
                        prop_assert!(ix.remove(s.0, s.1, &s.2));
                    }
                    prop_assert_eq!(ix.len(), naive.len());
                    for &(q, e) in &queries {
                        // An empty query: a span with start <= q <= end.
                        let want = naive.iter().find(|(s, se, _)| *s <= q && e <= *se);
                        let got = ix.find(q, e);
                        prop_assert_eq!(got.is_some(), want.is_some(), "[{:#x}, {:#x}) in {:x?}", q, e, naive);
                        if let Some(&(s, se, v)) = got {
                            prop_assert!(s <= q && e <= se, "[{:#x}, {:#x}) not in [{:#x}, {:#x})", q, e, s, se);
                            prop_assert!(naive.contains(&(s, se, v)), "a live span");
                        }
                    }
                }
                Ok(())
            })
            .expect("find agrees with a scan");
    }
}
