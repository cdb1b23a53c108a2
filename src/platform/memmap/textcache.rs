//! The `/proc/self/maps` text fallback (kernels before 6.11, without `PROCMAP_QUERY`), made
//! cheap for the common case.
//!
//! Reading the text costs the kernel work for every mapping of the process (in a process with
//! 1000 mappings, more than registering 2 MiB does), so the whole map is kept as last read,
//! with the process's mapped size then (`total_vm`, from `/proc/self/statm`). A range is judged
//! from the kept map, without reading the text, when all of these hold:
//!
//! * the mapped size has not changed since the map was read (one `pread` of `statm`);
//! * the kept map covers the range with plain memory only: anonymous, heap or shared memory,
//!   readable and writable, no hole (a view that no rule objects to);
//! * the range is mapped now (`msync(MS_ASYNC)`, which fails on any hole and does nothing else).
//!
//! Anything else reads the text again (and keeps it). A view with something to object to is
//! therefore always fresh: the kept map can only make regcheck miss a mapping replaced in place
//! by one of the same size (`mmap(MAP_FIXED)` of a file over anonymous memory, `mprotect`)
//! since the last read, never reject a valid call. After `fork` the child inherits the kept map
//! (its own map is the same) and reopens `statm`.

use std::io;
use std::sync::Mutex;

use super::live::{Extra, Live};
use super::parse::scan_file;
use super::{gaps, Backing, Mapping};

/// The map as last read, each mapping classified by its name only.
struct Kept {
    total_vm: u64,
    entries: Vec<Mapping>,
}

static KEPT: Mutex<Option<Kept>> = Mutex::new(None);

/// The mappings intersecting `[start, end)` (sorted, full extents), refined with `live`.
pub(super) fn query(start: usize, end: usize, live: &Live) -> io::Result<Vec<Mapping>> {
    let total_vm = super::super::procfd::total_vm_pages().ok();
    if let (Some(vm), Ok(kept)) = (total_vm, KEPT.try_lock()) {
        if let Some(k) = kept.as_ref().filter(|k| k.total_vm == vm) {
            let picked = pick(&k.entries, start, end, live);
            drop(kept);
            if plain(&picked, start, end) && mapped_now(start, end) {
                return Ok(picked);
            }
        }
    }
    let entries = read_all()?;
    let picked = pick(&entries, start, end, live);
    if let (Some(total_vm), Ok(mut kept)) = (total_vm, KEPT.try_lock()) {
        *kept = Some(Kept { total_vm, entries });
    }
    Ok(picked)
}

/// Drops the kept map: the next query reads the text. For tests that compare the sources on a
/// range whose mapping may have been replaced in place since (the kept map's one blind spot).
#[cfg(test)]
pub(super) fn forget() {
    *KEPT.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
}

/// Every mapping of the process, classified by its name (no live refinement yet).
fn read_all() -> io::Result<Vec<Mapping>> {
    scan_file("/proc/self/maps", 0, usize::MAX, false, &Live::pure())
}

/// The kept mappings intersecting `[start, end)`, refined with the live facts (a file's
/// filesystem is asked with `statfs`: only file mappings, which no plain view has).
fn pick(entries: &[Mapping], start: usize, end: usize, live: &Live) -> Vec<Mapping> {
    let first = entries.partition_point(|m| m.end <= start);
    entries[first..]
        .iter()
        .take_while(|m| m.start < end)
        .map(|m| {
            let mut m = m.clone();
            live.finish(&mut m, &Extra::default());
            m
        })
        .collect()
}

/// The view no memory rule objects to: no hole, only plain writable memory.
fn plain(mappings: &[Mapping], start: usize, end: usize) -> bool {
    gaps(start, end, mappings).is_empty()
        && mappings.iter().all(|m| {
            m.readable
                && m.writable
                && matches!(m.backing, Backing::Anonymous | Backing::Heap | Backing::SharedMemory(_))
        })
}

/// `[start, end)` is mapped right now: `msync(MS_ASYNC)` fails with ENOMEM on a hole and has
/// no other effect.
fn mapped_now(start: usize, end: usize) -> bool {
    let page = super::super::page_size();
    let base = start & !(page - 1);
    // SAFETY: msync with MS_ASYNC only checks that the range is mapped (it schedules nothing
    // since Linux 2.6.19); it reads and writes no memory of ours.
    unsafe { libc::msync(base as *mut libc::c_void, end - base, libc::MS_ASYNC) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(start: usize, end: usize, w: bool, name: &str) -> Mapping {
        Mapping {
            start,
            end,
            readable: true,
            writable: w,
            shared: false,
            path: name.into(),
            backing: super::super::classify(name),
            locked: None,
        }
    }

    #[test]
    fn picks_and_judges_plain_views() {
        let entries = vec![
            m(0x1000, 0x3000, true, ""),
            m(0x3000, 0x4000, false, ""),
            m(0x5000, 0x6000, true, "/usr/lib/x.so"),
            m(0x6000, 0x8000, true, "[heap]"),
        ];
        let live = Live::pure();
        let p = pick(&entries, 0x2000, 0x3000, &live);
        assert_eq!(p.len(), 1);
        assert!(plain(&p, 0x2000, 0x3000));
        let p = pick(&entries, 0x2000, 0x3800, &live);
        assert_eq!(p.len(), 2);
        assert!(!plain(&p, 0x2000, 0x3800), "read-only");
        assert!(!plain(&pick(&entries, 0x3800, 0x5800, &live), 0x3800, 0x5800), "hole and file");
        assert!(plain(&pick(&entries, 0x6000, 0x7000, &live), 0x6000, 0x7000));
        assert!(pick(&entries, 0x9000, 0xa000, &live).is_empty());
        assert!(!plain(&[], 0x9000, 0xa000), "unmapped");
    }

    #[test]
    fn live_queries_follow_the_map() {
        let len = 4 << 20;
        // SAFETY: an anonymous mapping of our own, changed and unmapped below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        let (a, live) = (p as usize, Live::new());
        let v = query(a, a + len, &live).unwrap();
        assert!(gaps(a, a + len, &v).is_empty(), "{v:?}");
        // Kept: the same answer again.
        assert_eq!(query(a, a + len, &live).unwrap(), v);
        // A hole punched since: seen (the size changed, and msync fails anyway).
        // SAFETY: unmaps one page of our own mapping.
        unsafe { libc::munmap((a + 4096) as *mut libc::c_void, 4096) };
        let v = query(a, a + len, &live).unwrap();
        assert_eq!(gaps(a, a + len, &v), vec![(a + 4096, a + 8192)]);
        // SAFETY: the mapping made above.
        unsafe { libc::munmap(p, len) };
        // A new read-only mapping: the size changed, the map is read again.
        // SAFETY: an anonymous mapping of our own, unmapped below.
        let r = unsafe {
            libc::mmap(std::ptr::null_mut(), 8192, libc::PROT_READ, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        assert_ne!(r, libc::MAP_FAILED);
        let v = query(r as usize, r as usize + 8192, &live).unwrap();
        assert!(!v.is_empty() && !v[0].writable, "{v:?}");
        // SAFETY: the mapping made above.
        unsafe { libc::munmap(r, 8192) };
    }
}
