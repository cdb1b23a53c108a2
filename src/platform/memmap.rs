//! The process's memory map: which mappings back an address range, and what they are.
//!
//! [`query`] describes one address range `[start, end)`: the mappings that intersect it
//! (sorted, with their full extents) and the unmapped holes in it. Three sources:
//!
//! * the `PROCMAP_QUERY` ioctl on `/proc/self/maps` (Linux 6.11+): one ioctl per mapping in
//!   the range, no text parsing, no allocation beyond the result;
//! * `/proc/self/maps` when the ioctl is unsupported (the verdict is cached): the whole map is
//!   kept and read again only when the process's mapped size changed or the kept map shows
//!   something to object to (see `textcache`); `Source::Maps` reads only up to the range;
//! * `/proc/self/smaps` when the lock state is wanted (`VmFlags: ... lo ...`).
//!
//! The ioctl goes to one descriptor of `/proc/self/maps` kept open ([`super::procfd`]): a
//! registration costs one system call, not three; a forked child opens its own.
//!
//! Text parsers ([`parse_maps_line`], [`parse_maps`], [`parse_smaps`]) and the name
//! classification ([`classify`]) are pure. The live queries refine the pure classification
//! with facts only the running system knows: the filesystem type of a file (tmpfs ->
//! [`Backing::SharedMemory`], hugetlbfs -> [`Backing::HugeTlb`]), a mapping's kernel page size
//! (larger than the base page -> hugetlb), and the calling thread's stack.
//!
//! The parts: `parse` (the pure text parsers and name classification, and the maps/smaps
//! reader), `live` (the refinement with live facts, the calling thread's stack),
//! `procmap` (the `PROCMAP_QUERY` ioctl), `textcache` (the kept `/proc/self/maps`).

use std::io;
use std::sync::atomic::Ordering;

mod live;
mod parse;
mod procmap;
mod textcache;

pub use live::current_thread_stack;
pub use parse::{classify, parse_maps, parse_maps_line, parse_smaps};
pub use procmap::{force_text_fallback, procmap_query_available};

use live::{mark_stack, Live};
use parse::scan_file;
use procmap::{is_unsupported, procmap_query, IOCTL_UNSUPPORTED};

/// What backs a mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backing {
    /// Anonymous private or shared memory (malloc, mmap(MAP_ANONYMOUS), posix_memalign).
    Anonymous,
    /// The `[heap]` (brk) area.
    Heap,
    /// A thread's stack (`[stack]`, or the calling thread's stack range).
    Stack,
    /// Shared memory that is fine to register: tmpfs (/dev/shm), memfd, SysV shm.
    SharedMemory(String),
    /// hugetlbfs-backed memory.
    HugeTlb(String),
    /// A mapping of a regular file on a real filesystem.
    File(String),
    /// A device file (`/dev/...`).
    Device(String),
    /// Other special kernel mappings (`[vvar]`, `[vdso]`, ...).
    Special(String),
}

/// One mapping of the process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub start: usize,
    pub end: usize,
    pub readable: bool,
    pub writable: bool,
    pub shared: bool,
    pub path: String,
    pub backing: Backing,
    /// `Some(true)` when the mapping is mlocked (`lo` in VmFlags); `None` when not read.
    pub locked: Option<bool>,
}

/// The mappings that intersect a range, and the unmapped holes in it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RangeView {
    /// Every mapping intersecting the range, sorted by address, with its full extent (not
    /// clipped to the range).
    pub mappings: Vec<Mapping>,
    /// The unmapped sub-ranges `[gap_start, gap_end)` of the range, sorted.
    pub gaps: Vec<(usize, usize)>,
}

impl RangeView {
    /// The whole range is mapped.
    pub fn fully_mapped(&self) -> bool {
        self.gaps.is_empty()
    }
}

/// Where [`query_with`] gets the mappings from when the lock state is not wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// `PROCMAP_QUERY` when the kernel has it, else `/proc/self/maps`.
    Auto,
    /// Only the `PROCMAP_QUERY` ioctl; an error when the kernel lacks it.
    ProcmapQuery,
    /// Only `/proc/self/maps` text.
    Maps,
}

/// Describe `[start, end)`. `with_lock_state` reads `/proc/self/smaps` (slower) so that
/// `Mapping::locked` is filled; otherwise PROCMAP_QUERY or `/proc/self/maps` is used.
///
/// An empty range (`start == end`) gives an empty view; `start > end` is `InvalidInput`.
pub fn query(start: usize, end: usize, with_lock_state: bool) -> io::Result<RangeView> {
    query_with(start, end, with_lock_state, Source::Auto)
}

/// [`query`] with the source chosen (tests force each path with it). `with_lock_state`
/// always reads `/proc/self/smaps`, whatever `source` says.
pub fn query_with(start: usize, end: usize, with_lock_state: bool, source: Source) -> io::Result<RangeView> {
    if start > end {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("range start {start:#x} is above its end {end:#x}"),
        ));
    }
    if start == end {
        return Ok(RangeView::default());
    }
    let live = Live::new();
    let mappings = if with_lock_state {
        scan_file("/proc/self/smaps", start, end, true, &live)?
    } else {
        match source {
            Source::Maps => scan_file("/proc/self/maps", start, end, false, &live)?,
            Source::ProcmapQuery => procmap_query(start, end, &live)?,
            Source::Auto if IOCTL_UNSUPPORTED.load(Ordering::Relaxed) => textcache::query(start, end, &live)?,
            Source::Auto => match procmap_query(start, end, &live) {
                Ok(m) => m,
                Err(e) => {
                    if is_unsupported(&e) {
                        IOCTL_UNSUPPORTED.store(true, Ordering::Relaxed);
                    }
                    log::debug!("PROCMAP_QUERY failed ({e}); reading /proc/self/maps");
                    textcache::query(start, end, &live)?
                }
            },
        }
    };
    let mappings = in_range(mark_stack(mappings, live.stack), start, end);
    let gaps = gaps(start, end, &mappings);
    Ok(RangeView { mappings, gaps })
}

/// The mappings that intersect `[start, end)`: splitting a mapping at a thread stack inside it
/// (`mark_stack`; a stack inside a larger anonymous mapping, as `pthread_attr_setstack` or merged
/// neighbours make) leaves pieces outside the range.
fn in_range(mut mappings: Vec<Mapping>, start: usize, end: usize) -> Vec<Mapping> {
    mappings.retain(|m| m.end > start && m.start < end);
    mappings
}

/// The unmapped holes of `[start, end)` given the mappings in it, which must be sorted by
/// `start` (as [`query`] returns them). Mappings may extend past either end of the range.
pub fn gaps(start: usize, end: usize, mappings: &[Mapping]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut cursor = start;
    for m in mappings {
        if cursor >= end || m.start >= end {
            break;
        }
        if m.end <= cursor {
            continue;
        }
        if m.start > cursor {
            out.push((cursor, m.start));
        }
        cursor = m.end;
    }
    if cursor < end {
        out.push((cursor, end));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::live::{statfs_magic, TMPFS_MAGIC};
    use super::*;
    use std::fs::File;
    use std::os::fd::AsRawFd;
    use std::path::Path;
    use std::sync::Mutex;

    pub(super) fn m(start: usize, end: usize) -> Mapping {
        Mapping {
            start,
            end,
            readable: true,
            writable: true,
            shared: false,
            path: String::new(),
            backing: Backing::Anonymous,
            locked: None,
        }
    }

    #[test]
    fn computes_gaps() {
        assert_eq!(gaps(10, 20, &[]), vec![(10, 20)]);
        assert_eq!(gaps(10, 20, &[m(0, 30)]), vec![]);
        assert_eq!(gaps(10, 20, &[m(10, 20)]), vec![]);
        assert_eq!(gaps(10, 20, &[m(12, 15)]), vec![(10, 12), (15, 20)]);
        assert_eq!(gaps(10, 20, &[m(5, 12), m(14, 25)]), vec![(12, 14)]);
        assert_eq!(gaps(10, 20, &[m(0, 5), m(12, 13), m(13, 14), m(25, 30)]), vec![(10, 12), (14, 20)]);
        assert_eq!(gaps(10, 20, &[m(20, 30)]), vec![(10, 20)]);
        assert_eq!(gaps(10, 10, &[]), vec![]);
    }

    // ----- the real process -----

    /// Real-process tests create and remove mappings; run them one at a time so that one
    /// test's hole is not filled by another's mmap.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn serial() -> std::sync::MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn page() -> usize {
        crate::platform::page_size()
    }

    /// An mmap that is unmapped on drop.
    struct Map {
        ptr: usize,
        len: usize,
    }

    impl Map {
        fn new(len: usize, prot: libc::c_int, flags: libc::c_int, fd: libc::c_int) -> Map {
            // SAFETY: a fresh mapping at a kernel-chosen address.
            let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, fd, 0) };
            assert_ne!(p, libc::MAP_FAILED, "mmap: {}", io::Error::last_os_error());
            Map { ptr: p as usize, len }
        }

        fn anon(len: usize, prot: libc::c_int) -> Map {
            Map::new(len, prot, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1)
        }
    }

    impl Drop for Map {
        fn drop(&mut self) {
            // SAFETY: unmapping our own mapping (holes punched in it are fine to unmap again).
            unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
        }
    }

    /// The sources to check: the ioctl (when the kernel has it), the maps text, and smaps.
    fn sources() -> Vec<(Source, bool)> {
        let mut v = vec![(Source::Auto, false), (Source::Maps, false), (Source::Auto, true)];
        if procmap_query_available() {
            v.push((Source::ProcmapQuery, false));
        } else {
            eprintln!("PROCMAP_QUERY unsupported here; testing the maps path only");
        }
        v
    }

    /// Query with every source; check they agree (but for `locked`) and return the ioctl-or-
    /// maps view and the smaps view.
    fn query_all(start: usize, end: usize) -> (RangeView, RangeView) {
        let mut views = Vec::new();
        for (source, lock) in sources() {
            // the text path's kept map may hold a same-size mapping an earlier test made at
            // this address (its documented blind spot): compare fresh reads
            textcache::forget();
            let v = query_with(start, end, lock, source).unwrap_or_else(|e| panic!("{source:?}/{lock}: {e}"));
            views.push(((source, lock), v));
        }
        // Compare the parts inside the range: other threads may grow or shrink a
        // neighbouring mapping that merged with ours between two queries.
        let strip = |v: &RangeView| {
            let mut v = v.clone();
            for m in &mut v.mappings {
                m.locked = None;
                m.start = m.start.max(start);
                m.end = m.end.min(end);
            }
            v
        };
        let first = strip(&views[0].1);
        for (what, v) in &views {
            assert_eq!(strip(v), first, "{what:?} disagrees");
            let locked_read = what.1;
            assert!(v.mappings.iter().all(|m| m.locked.is_some() == locked_read), "{what:?}");
        }
        let smaps = views.iter().find(|(w, _)| w.1).map(|(_, v)| v.clone()).unwrap_or_default();
        (first, smaps)
    }

    fn covers(v: &RangeView, start: usize, end: usize) -> bool {
        v.fully_mapped()
            && v.mappings.first().is_some_and(|m| m.start <= start)
            && v.mappings.last().is_some_and(|m| m.end >= end)
            && v.mappings.windows(2).all(|w| w[0].end == w[1].start)
    }

    #[test]
    fn anonymous_region_whole_partial_and_holed() {
        let _g = serial();
        let pg = page();
        let map = Map::anon(8 * pg, libc::PROT_READ | libc::PROT_WRITE);
        let (a, b) = (map.ptr, map.ptr + 8 * pg);

        let (v, _) = query_all(a, b);
        assert!(covers(&v, a, b), "{v:?}");
        for m in &v.mappings {
            assert_eq!(m.backing, Backing::Anonymous);
            assert!(m.readable && m.writable && !m.shared);
        }

        let (v, _) = query_all(a + pg + 100, a + 3 * pg);
        assert!(covers(&v, a + pg + 100, a + 3 * pg), "{v:?}");
        assert_eq!(v.mappings.len(), 1);

        // Punch a hole in pages 3..5.
        // SAFETY: unmapping part of our own mapping.
        assert_eq!(unsafe { libc::munmap((a + 3 * pg) as *mut libc::c_void, 2 * pg) }, 0);
        let (v, _) = query_all(a, b);
        assert_eq!(v.gaps, vec![(a + 3 * pg, a + 5 * pg)], "{v:?}");
        assert!(v.mappings.len() >= 2);
        assert!(v.mappings.iter().all(|m| m.backing == Backing::Anonymous));
        // Only the hole.
        let (v, _) = query_all(a + 3 * pg, a + 5 * pg);
        assert!(v.mappings.is_empty());
        assert_eq!(v.gaps, vec![(a + 3 * pg, a + 5 * pg)]);
    }

    #[test]
    fn read_only_region() {
        let _g = serial();
        let pg = page();
        let map = Map::anon(2 * pg, libc::PROT_READ);
        let (v, _) = query_all(map.ptr, map.ptr + 2 * pg);
        assert!(covers(&v, map.ptr, map.ptr + 2 * pg), "{v:?}");
        assert!(v.mappings.iter().all(|m| m.readable && !m.writable));
    }

    #[test]
    fn file_backed_region() {
        let _g = serial();
        let pg = page();
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target").join("platform-tests");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("memmap-file-{}.bin", std::process::id()));
        std::fs::write(&path, vec![7u8; 2 * pg]).unwrap();
        let file = File::open(&path).unwrap();
        let map = Map::new(2 * pg, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd());
        let (v, _) = query_all(map.ptr, map.ptr + 2 * pg);
        let _ = std::fs::remove_file(&path);
        assert_eq!(v.mappings.len(), 1, "{v:?}");
        let m = &v.mappings[0];
        let full = std::fs::canonicalize(&dir).unwrap().join(path.file_name().unwrap());
        assert_eq!(m.path, full.to_string_lossy());
        let want = match statfs_magic(&dir) {
            Some(TMPFS_MAGIC) => Backing::SharedMemory(m.path.clone()),
            _ => Backing::File(m.path.clone()),
        };
        assert_eq!(m.backing, want);
        assert!(m.shared && m.readable && !m.writable);
    }

    #[test]
    fn memfd_region() {
        let _g = serial();
        let pg = page();
        // SAFETY: the name is NUL-terminated.
        let fd = unsafe { libc::memfd_create(c"regcheck-test".as_ptr(), libc::MFD_CLOEXEC) };
        assert!(fd >= 0, "memfd_create: {}", io::Error::last_os_error());
        // SAFETY: our fd, closed once below.
        let file = unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        file.set_len(2 * pg as u64).unwrap();
        let map = Map::new(2 * pg, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, file.as_raw_fd());
        let (v, _) = query_all(map.ptr, map.ptr + 2 * pg);
        assert_eq!(v.mappings.len(), 1, "{v:?}");
        let m = &v.mappings[0];
        assert!(m.path.starts_with("/memfd:regcheck-test"), "{m:?}");
        assert_eq!(m.backing, Backing::SharedMemory(m.path.clone()));
        assert!(m.shared && m.writable);
    }

    #[test]
    fn shared_anonymous_region() {
        let _g = serial();
        let pg = page();
        let map = Map::new(pg, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1);
        let (v, _) = query_all(map.ptr, map.ptr + pg);
        assert_eq!(v.mappings.len(), 1, "{v:?}");
        assert_eq!(v.mappings[0].backing, Backing::Anonymous, "{v:?}");
        assert!(v.mappings[0].shared);
    }

    #[test]
    fn mlocked_region() {
        let _g = serial();
        let pg = page();
        let map = Map::anon(4 * pg, libc::PROT_READ | libc::PROT_WRITE);
        // SAFETY: locking pages of our own mapping.
        if unsafe { libc::mlock((map.ptr + pg) as *const libc::c_void, pg) } != 0 {
            let why = format!(
                "mlock of one page failed ({}): raise RLIMIT_MEMLOCK (ulimit -l) or run with CAP_IPC_LOCK",
                io::Error::last_os_error()
            );
            return crate::platform::unavailable("mlocked_region", &why);
        }
        let (plain, smaps) = query_all(map.ptr + pg, map.ptr + 2 * pg);
        assert_eq!(plain.mappings.len(), 1);
        assert_eq!(plain.mappings[0].locked, None);
        assert_eq!(smaps.mappings.len(), 1);
        assert_eq!(smaps.mappings[0].locked, Some(true), "{smaps:?}");
        assert_eq!((smaps.mappings[0].start, smaps.mappings[0].end), (map.ptr + pg, map.ptr + 2 * pg));
        // Its unlocked neighbour.
        let v = query(map.ptr + 2 * pg, map.ptr + 3 * pg, true).unwrap();
        assert_eq!(v.mappings.len(), 1);
        assert_eq!(v.mappings[0].locked, Some(false));
        // SAFETY: unlocking what we locked.
        unsafe { libc::munlock((map.ptr + pg) as *const libc::c_void, pg) };
    }

    /// A stack inside a larger mapping splits it in three; a range inside the stack is in the
    /// stack's piece alone (seen under qemu-user, whose thread stacks merge with their neighbours).
    #[test]
    fn a_stack_inside_a_mapping_gives_only_the_pieces_in_the_range() {
        let split = mark_stack(vec![m(0x1000, 0x9000)], Some((0x3000, 0x5000)));
        assert_eq!(split.len(), 3, "{split:?}");
        let v = in_range(split, 0x3100, 0x3200);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!((v[0].start, v[0].end, &v[0].backing), (0x3000, 0x5000, &Backing::Stack));
        assert!(gaps(0x3100, 0x3200, &v).is_empty());
    }

    #[test]
    fn stack_variable() {
        let _g = serial();
        let local = [0u8; 64];
        let addr = std::hint::black_box(&local) as *const _ as usize;
        let (lo, hi) = current_thread_stack().expect("thread stack");
        assert!(lo <= addr && addr < hi, "{addr:#x} not in {lo:#x}-{hi:#x}");
        assert_eq!(current_thread_stack(), Some((lo, hi)), "cached");
        let (v, _) = query_all(addr, addr + 64);
        assert_eq!(v.mappings.len(), 1, "{v:?}");
        assert_eq!(v.mappings[0].backing, Backing::Stack);

        // Another thread's stack is classified as a stack from inside that thread too.
        std::thread::spawn(|| {
            let local = [0u8; 16];
            let addr = std::hint::black_box(&local) as *const _ as usize;
            let v = query(addr, addr + 16, false).unwrap();
            assert_eq!(v.mappings[0].backing, Backing::Stack);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn heap_and_vdso() {
        let _g = serial();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        if let Some(heap) = parse_maps(&maps).into_iter().find(|m| m.backing == Backing::Heap) {
            let (v, _) = query_all(heap.start, heap.start + 1);
            assert_eq!(v.mappings.len(), 1);
            assert_eq!(v.mappings[0].backing, Backing::Heap);
        }
        // SAFETY: getauxval has no preconditions.
        let vdso = unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) } as usize;
        if vdso != 0 {
            let (v, _) = query_all(vdso, vdso + 1);
            assert_eq!(v.mappings.len(), 1);
            assert_eq!(v.mappings[0].backing, Backing::Special("[vdso]".into()));
        }
    }

    #[test]
    fn hugetlb_region() {
        let _g = serial();
        let len = 2 << 20;
        // SAFETY: a fresh mapping; may fail when no huge pages are reserved.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            let why = format!(
                "mmap(MAP_HUGETLB) of 2 MiB failed ({}): reserve huge pages as root, e.g. sysctl -w vm.nr_hugepages=4",
                io::Error::last_os_error()
            );
            return crate::platform::unavailable("hugetlb_region", &why);
        }
        let map = Map { ptr: p as usize, len };
        let (v, _) = query_all(map.ptr, map.ptr + len);
        assert!(matches!(v.mappings[0].backing, Backing::HugeTlb(_)), "{v:?}");
    }

    #[test]
    fn empty_and_inverted_ranges() {
        assert_eq!(query(0x1000, 0x1000, false).unwrap(), RangeView::default());
        assert_eq!(query(0x2000, 0x1000, false).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        // Null page: unmapped.
        let v = query(0, 4096, false).unwrap();
        assert_eq!(v.gaps, vec![(0, 4096)]);
        // The top of the address space.
        let top = usize::MAX - 4095;
        for source in [Source::Auto, Source::Maps] {
            let v = query_with(top, usize::MAX, false, source).unwrap();
            assert!(v.mappings.is_empty(), "{v:?}");
            assert_eq!(v.gaps, vec![(top, usize::MAX)]);
        }
    }

    #[test]
    fn cached_unsupported_flag_routes_auto_to_maps() {
        let _g = serial();
        let pg = page();
        let map = Map::anon(2 * pg, libc::PROT_READ | libc::PROT_WRITE);
        let (a, b) = (map.ptr, map.ptr + 2 * pg);
        let was = IOCTL_UNSUPPORTED.swap(true, Ordering::Relaxed);
        let auto = query(a, b, false);
        let available = procmap_query_available();
        IOCTL_UNSUPPORTED.store(was, Ordering::Relaxed);
        let maps = query_with(a, b, false, Source::Maps).unwrap();
        let auto = auto.unwrap();
        assert!(!available);
        assert!(covers(&auto, a, b), "{auto:?}");
        assert_eq!(auto.mappings.len(), maps.mappings.len());
        assert!(auto.mappings.iter().all(|m| m.backing == Backing::Anonymous));
    }
}
