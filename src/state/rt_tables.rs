//! The runtime's own registration tables, on its runtime-table path (every release up to
//! 9.1.0; later ones on a driver without the pinned-register feature): hicann/runtime
//! `register_memory.cc`, kept as the runtime keeps them, so that regcheck's overlap answer is
//! the runtime's own.
//!
//! Two process-wide maps from a registration's base to its last byte: the pinned table (V2
//! registrations with PINNED) and the mapped table (those the driver mapped: V2 with MAPPED,
//! IOMEMORY or READONLY, and V1 `aclrtHostRegister`). An entry is inserted only where its base is
//! free (`std::map::insert`), erased by base when `aclrtHostUnregister` succeeds, and outlives
//! device resets (the driver forgets the mapping, the table does not). V1 inserts without
//! looking at the tables, so entries may overlap each other; the overlap check then sees what
//! the runtime's `FindOverlappingMemory` sees, which is not every overlap.

use std::collections::BTreeMap;

/// One table: base to last byte (`base + size - 1`, wrapping as the runtime computes it).
#[derive(Debug, Default, Clone)]
struct Table(BTreeMap<u64, u64>);

impl Table {
    /// The runtime's `FindOverlappingMemory`: the first entry at or after `start` when it
    /// begins at or before `last`, else the entry before `start` when it reaches `start`.
    fn overlapping(&self, start: u64, last: u64) -> Option<(u64, u64)> {
        if let Some((&b, &l)) = self.0.range(start..).next() {
            if b <= last {
                return Some((b, l));
            }
        }
        self.0.range(..start).next_back().filter(|(_, &l)| l >= start).map(|(&b, &l)| (b, l))
    }

    fn insert(&mut self, base: u64, size: u64) {
        self.0.entry(base).or_insert(base.wrapping_add(size).wrapping_sub(1));
    }
}

/// The runtime's pinned and mapped tables.
#[derive(Debug, Default, Clone)]
pub struct RuntimeTables {
    pinned: Table,
    mapped: Table,
}

impl RuntimeTables {
    /// `CheckMemoryRangeRegistered(ptr, size)`: the entry (base, last byte) that makes the
    /// runtime refuse the range with 507910, the pinned table first; `None` when it accepts.
    pub fn overlapping(&self, ptr: u64, size: u64) -> Option<(u64, u64)> {
        let last = ptr.wrapping_add(size).wrapping_sub(1);
        self.pinned.overlapping(ptr, last).or_else(|| self.mapped.overlapping(ptr, last))
    }

    /// A registration the runtime accepted: `pinned` into the pinned table, `mapped` into
    /// the mapped one.
    pub fn insert(&mut self, ptr: u64, size: u64, pinned: bool, mapped: bool) {
        if pinned {
            self.pinned.insert(ptr, size);
        }
        if mapped {
            self.mapped.insert(ptr, size);
        }
    }

    /// An `aclrtHostUnregister(ptr)` the runtime accepted: both tables lose their entry at
    /// `ptr` (on failure the runtime erases nothing: a mapped entry's driver refusal returns
    /// before the pinned one is looked at).
    pub fn unregistered(&mut self, ptr: u64) {
        self.pinned.0.remove(&ptr);
        self.mapped.0.remove(&ptr);
    }

    /// Whether `ptr` is the base of an entry of either table (what `aclrtHostUnregister`
    /// looks for).
    pub fn is_base(&self, ptr: u64) -> bool {
        self.pinned.0.contains_key(&ptr) || self.mapped.0.contains_key(&ptr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: u64 = 0x1000;

    #[test]
    fn overlap_as_the_runtime_finds_it() {
        let mut t = RuntimeTables::default();
        assert_eq!(t.overlapping(0x10000, P), None);
        t.insert(0x10000, 4 * P, false, true);
        assert_eq!(t.overlapping(0x10000 + 3 * P, 1), Some((0x10000, 0x10000 + 4 * P - 1)), "the last byte");
        assert_eq!(t.overlapping(0x10000 + 4 * P, P), None, "byte-granular: just past the end");
        assert_eq!(t.overlapping(0x10000 - P, P), None, "just before the start");
        assert_eq!(t.overlapping(0x10000 - P, P + 1).map(|e| e.0), Some(0x10000), "one byte into it");
        // The same base again keeps the first entry (std::map::insert).
        t.insert(0x10000, P, true, true);
        assert_eq!(t.overlapping(0x10000 + 3 * P, 1).map(|e| e.1), Some(0x10000 + 4 * P - 1));
        assert_eq!(t.overlapping(0x10000 + 3 * P, 1), t.mapped.overlapping(0x10000 + 3 * P, 0x10000 + 3 * P));
        assert!(t.pinned.overlapping(0x10000, 0x10000).is_some(), "and into the pinned table");
        t.unregistered(0x10000);
        assert_eq!(t.overlapping(0x10000, 4 * P), None);
        assert!(!t.is_base(0x10000));
    }

    /// Entries that overlap each other (V1 inserts without the check): the runtime looks at
    /// the first entry from the start and the one before it, and misses an older, longer
    /// entry further back.
    #[test]
    fn overlapping_entries_hide_what_the_runtime_does_not_see() {
        let mut t = RuntimeTables::default();
        t.insert(22 * P, 26 * P, false, true); // [22p, 48p)
        t.insert(25 * P, 5 * P, false, true); // [25p, 30p): V1, unchecked
        assert_eq!(t.overlapping(35 * P, 7 * P), None, "the runtime sees only [25p, 30p) before 35p");
        assert_eq!(t.overlapping(29 * P, P).map(|e| e.0), Some(25 * P));
        assert_eq!(t.overlapping(24 * P, 8 * P).map(|e| e.0), Some(25 * P), "the first entry from the start");
        assert_eq!(t.overlapping(23 * P, P).map(|e| e.0), Some(22 * P));
    }

    #[test]
    fn a_wrapping_size_wraps_as_the_runtime_computes_it() {
        let mut t = RuntimeTables::default();
        t.insert(0x10000, u64::MAX, true, false);
        // Its last byte is 0xfffe: only a range from before its base reaches it by the check
        // from the start.
        assert_eq!(t.overlapping(0x20000, P), None);
        assert_eq!(t.overlapping(0x8000, 0x9000).map(|e| e.0), Some(0x10000));
        assert!(t.is_base(0x10000));
    }
}
