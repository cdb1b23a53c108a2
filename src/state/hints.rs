//! Hints for the transfer path's question "does some live span contain `[addr, end)`?",
//! answered with one multiplication and one load, no branch per level and no hash probe.
//!
//! A hint is a span `(start, end)` kept in a small two-way table under the granules it is
//! filed in (the granules of [`super::spans`]: a span of level `L` touches at most two
//! `2^L`-byte granules). A look-up asks the one set of the query's first byte at the lowest
//! level in use that could hold it, and compares the set's two spans with the query.
//!
//! A hint never says yes wrongly: every span in the table is live (a removed span is cleared
//! from its sets) and a yes is a containment seen. It may say no where a span does contain the
//! query (two granules share a set and a third evicted one; the span lives at a higher level
//! than the one asked): the caller then asks the [`super::spans::SpanIndex`], which knows.

use super::spans::{key, level_of, LEVEL_BITS};

/// An empty way: contains no non-empty query (`end <= 0` never holds for `end > addr >= 0`).
const EMPTY: (usize, usize) = (0, 0);

/// The table grows (and is refilled from the records) once it holds more spans than half
/// its sets.
const MIN_SETS: usize = 16;

/// A two-way table of spans by granule. Empty (no allocation) until the first span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanHints {
    /// A power of two of sets (or none).
    sets: Vec<[(usize, usize); 2]>,
    /// 64 less the log2 of the number of sets (63 while there are none).
    shift: u32,
    /// Spans filed (each non-empty span once, however many granules it touches).
    spans: usize,
}

impl Default for SpanHints {
    fn default() -> Self {
        SpanHints { sets: Vec::new(), shift: 63, spans: 0 }
    }
}

/// The set of a granule key among `2^(64 - shift)` sets: the high bits of the granule number
/// times 2^64 / golden ratio (Fibonacci hashing, which spreads consecutive granules evenly; the
/// key's level bits are rotated to the top first, since a multiplier times 64 loses that
/// spread). An empty table has `shift` 63, which gives an index past its end.
#[inline(always)]
fn set_of(k: usize, shift: u32) -> usize {
    ((k as u64).rotate_right(LEVEL_BITS).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> shift) as usize
}

/// The one or two granule keys a span `[start, end)`, `start < end`, is filed under.
fn keys_of(start: usize, end: usize) -> (usize, Option<usize>) {
    let level = level_of(end - start);
    let (first, last) = (key(level, start), key(level, end - 1));
    (first, (last != first).then_some(last))
}

/// [`SpanHints`] ready to answer, for one call's ranges.
#[derive(Debug, Clone, Copy)]
pub struct HintProbe<'a> {
    sets: &'a [[(usize, usize); 2]],
    shift: u32,
    levels: u64,
}

impl HintProbe<'_> {
    /// Whether a span of the table contains `[addr, addr + len)`, asked in the set of the
    /// query's first byte at the lowest level in use that could hold a span that long.
    /// `false` for an empty or wrapping query and an empty table. Never `true` wrongly (see
    /// the module).
    #[inline(always)]
    pub fn contains(&self, addr: usize, len: usize) -> bool {
        let end = addr.wrapping_add(len);
        let level = (self.levels & (u64::MAX << level_of(len))).trailing_zeros();
        let hit = self
            .sets
            .get(set_of(key(level, addr), self.shift))
            .is_some_and(|[(s0, e0), (s1, e1)]| (*s0 <= addr) & (end <= *e0) | (*s1 <= addr) & (end <= *e1));
        hit & (end > addr)
    }
}

impl SpanHints {
    /// The table's answers for a process whose spans live at `levels` (bit `L`: spans live at
    /// level `L`): made once per call, asked per range.
    #[inline(always)]
    pub fn probe(&self, levels: u64) -> HintProbe<'_> {
        // Bit 63 stands for "no level": its set is asked like any other, and whatever span it
        // holds that contains the query is still a true answer.
        HintProbe { sets: &self.sets, shift: self.shift, levels: levels | 1 << 63 }
    }

    /// Whether a span of the table contains `[addr, end)` (see [`HintProbe::contains`]).
    pub fn contains(&self, levels: u64, addr: usize, end: usize) -> bool {
        end > addr && self.probe(levels).contains(addr, end - addr)
    }

    /// Whether filing one more span needs a larger table: then [`SpanHints::rebuild`] it from
    /// every live span first.
    pub fn full(&self) -> bool {
        (self.spans + 1) * 2 > self.sets.len()
    }

    /// Refill the table from `live` (every live span, `count` of them at most), sized for
    /// `count` and one more.
    pub fn rebuild(&mut self, count: usize, live: impl Iterator<Item = (usize, usize)>) {
        let sets = ((count + 1) * 2).next_power_of_two().max(MIN_SETS);
        *self = SpanHints { sets: vec![[EMPTY; 2]; sets], shift: 64 - sets.trailing_zeros(), spans: 0 };
        for (start, end) in live {
            self.insert(start, end);
        }
    }

    /// File `[start, end)` (nothing for an empty span). The newest span takes the first way of
    /// each of its sets; an older one there moves to the second, evicting what was there (a
    /// miss later, never a wrong answer).
    pub fn insert(&mut self, start: usize, end: usize) {
        if end <= start || self.sets.is_empty() {
            return;
        }
        let (first, last) = keys_of(start, end);
        for k in std::iter::once(first).chain(last) {
            let set = &mut self.sets[set_of(k, self.shift)];
            if set[0] == EMPTY {
                set[0] = (start, end);
            } else if set[1] == EMPTY {
                set[1] = (start, end);
            } else {
                *set = [(start, end), set[0]];
            }
        }
        self.spans += 1;
    }

    /// Forget `[start, end)` wherever it is filed (an identical live span loses its hint too:
    /// a miss, never a wrong answer).
    pub fn remove(&mut self, start: usize, end: usize) {
        if end <= start || self.sets.is_empty() {
            return;
        }
        let (first, last) = keys_of(start, end);
        for k in std::iter::once(first).chain(last) {
            for way in &mut self.sets[set_of(k, self.shift)] {
                if *way == (start, end) {
                    *way = EMPTY;
                }
            }
        }
        self.spans = self.spans.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::super::spans::SpanIndex;
    use super::*;

    /// Keep `hints` as a record keeper would: rebuilt when full, from the live spans.
    fn add(hints: &mut SpanHints, live: &mut Vec<(usize, usize)>, ix: &mut SpanIndex<()>, s: usize, e: usize) {
        if e > s && hints.full() {
            hints.rebuild(live.len(), live.iter().copied());
        }
        hints.insert(s, e);
        ix.insert(s, e, ());
        if e > s {
            live.push((s, e));
        }
    }

    #[test]
    fn an_empty_table_and_empty_queries_say_no() {
        let h = SpanHints::default();
        assert!(!h.contains(u64::MAX, 0x1000, 0x2000));
        let (mut h, mut live, mut ix) = (SpanHints::default(), Vec::new(), SpanIndex::default());
        add(&mut h, &mut live, &mut ix, 0x1000, 0x2000);
        assert!(h.contains(ix.levels(), 0x1000, 0x2000));
        assert!(h.contains(ix.levels(), 0x1800, 0x1801));
        assert!(!h.contains(ix.levels(), 0x1800, 0x1800), "an empty query");
        assert!(!h.contains(ix.levels(), 0x1800, 0x2001));
        assert!(!h.contains(0, 0x1800, 0x1801), "no level in use");
        h.remove(0x1000, 0x2000);
        assert!(!h.contains(ix.levels(), 0x1800, 0x1801), "removed");
    }

    /// Consecutive pages (one allocation registered page by page) spread over the sets.
    #[test]
    fn consecutive_pages_all_hit() {
        for n in [1, 2, 5, 10, 50, 300] {
            let (mut h, mut live, mut ix) = (SpanHints::default(), Vec::new(), SpanIndex::default());
            let base = 0x7f67_5aec_f000usize;
            for i in 0..n {
                add(&mut h, &mut live, &mut ix, base + i * 0x1000, base + (i + 1) * 0x1000);
            }
            let hits =
                (0..n).filter(|i| h.contains(ix.levels(), base + i * 0x1000 + 64, base + i * 0x1000 + 128)).count();
            assert!(hits * 100 >= n * 98, "{hits} of {n} consecutive pages hit");
        }
    }

    /// Never a yes that the index would not give, and a yes for almost every query the index
    /// answers at the level asked: 4000 one-page spans (the benchmark's layout) and spans of
    /// mixed sizes, inserted and removed.
    #[test]
    fn hints_never_lie_and_mostly_hit() {
        let (mut h, mut live, mut ix) = (SpanHints::default(), Vec::new(), SpanIndex::default());
        let base = 0x7f00_0000_0000usize;
        for i in 0..4000 {
            add(&mut h, &mut live, &mut ix, base + i * 0x1000, base + (i + 1) * 0x1000);
        }
        let mut hits = 0;
        for i in 0..4000 {
            let a = base + i * 0x1000 + 64 * (i % 32);
            assert!(ix.find(a, a + 64).is_some());
            hits += usize::from(h.contains(ix.levels(), a, a + 64));
        }
        assert!(hits > 3900, "{hits} of 4000 one-page queries hit");
        // Remove every other span: those give no, the others still mostly yes.
        for i in (0..4000).step_by(2) {
            let (s, e) = (base + i * 0x1000, base + (i + 1) * 0x1000);
            h.remove(s, e);
            assert!(ix.remove(s, e, &()));
        }
        live.retain(|(s, _)| (s - base) / 0x1000 % 2 == 1);
        let mut hits = 0;
        for i in 0..4000 {
            let a = base + i * 0x1000 + 8;
            let hit = h.contains(ix.levels(), a, a + 8);
            assert!(!(hit && i % 2 == 0), "span {i} was removed");
            hits += usize::from(hit);
        }
        assert!(hits > 1950, "{hits} of the 2000 live spans hit");
        // Mixed sizes across granule boundaries, overlapping: a yes is always a containment.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as usize
        };
        for _ in 0..2000 {
            let s = base + (next() % (1 << 30));
            let e = s + 1 + next() % (1 << (12 + next() % 16));
            add(&mut h, &mut live, &mut ix, s, e);
        }
        for _ in 0..20000 {
            let a = base + (next() % (1 << 30));
            let e = a + 1 + next() % 0x4000;
            if h.contains(ix.levels(), a, e) {
                assert!(ix.find(a, e).is_some(), "[{a:#x}, {e:#x}) is in no span");
            }
        }
    }
}
