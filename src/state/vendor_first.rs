//! The `hixl::Hixl` instances whose transfers the vendor answers first
//! ([`crate::rules::vendor_answers_transfers`]): a clean transfer on one of them is forwarded
//! with no look-up of regcheck's records, and only the vendor's failure is explained. Kept
//! outside the state's lock, so that the transfer's only question is a few loads: a process
//! that has no such instance asks one.
//!
//! Written only with the state's write lock held ([`super::with`]), where the instance's record
//! changes, so that writers never race; read by any thread without a lock. A transfer that
//! races a `Finalize` on another thread is the application's race with the vendor too.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Instances are few (one or two engines per process); past this many, an instance's
/// transfers are judged before the vendor as on the other engines.
const SLOTS: usize = 16;

static KEYS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
/// Slots in use so far (a high-water mark: a cleared slot is reused, never given back).
static USED: AtomicUsize = AtomicUsize::new(0);

/// Whether the instance at `key` is one whose transfers the vendor answers first.
#[inline(always)]
pub fn holds(key: usize) -> bool {
    let used = USED.load(Ordering::Acquire).min(SLOTS);
    key != 0 && KEYS[..used].iter().any(|k| k.load(Ordering::Acquire) == key)
}

/// Marks (`on`) or unmarks the instance at `key`. Call with the state's write lock held.
pub fn set(key: usize, on: bool) {
    if key == 0 {
        return;
    }
    let used = USED.load(Ordering::Acquire).min(SLOTS);
    let at = KEYS[..used].iter().position(|k| k.load(Ordering::Relaxed) == key);
    match (on, at) {
        (true, None) => {
            if let Some(free) = KEYS[..used].iter().find(|k| k.load(Ordering::Relaxed) == 0) {
                free.store(key, Ordering::Release);
            } else if used < SLOTS {
                KEYS[used].store(key, Ordering::Release);
                USED.store(used + 1, Ordering::Release);
            }
        }
        (false, Some(i)) => KEYS[i].store(0, Ordering::Release),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test: the table is process-wide.
    #[test]
    fn marks_unmarks_and_reuses_slots_and_stops_at_its_size() {
        let base = 0x7000_0000usize;
        assert!(!holds(base) && !holds(0));
        set(base, true);
        set(base, true);
        assert!(holds(base));
        set(0, true);
        assert!(!holds(0), "0 is never an instance");
        set(base, false);
        assert!(!holds(base));
        let used = USED.load(Ordering::Relaxed);
        set(base + 8, true);
        assert_eq!(USED.load(Ordering::Relaxed), used, "a cleared slot is reused");
        // base + 8 is marked already: SLOTS more marks fill the table and the last one misses.
        for i in 1..=SLOTS + 1 {
            set(base + 8 * i, true);
        }
        assert_eq!(USED.load(Ordering::Relaxed), SLOTS);
        assert!(holds(base + 8 * SLOTS), "{SLOTS} instances are marked");
        assert!(!holds(base + 8 * (SLOTS + 1)), "past its size an instance is not marked");
        for i in 0..=SLOTS + 1 {
            set(base + 8 * i, false);
        }
        assert!((0..=SLOTS + 1).all(|i| !holds(base + 8 * i)));
    }
}
