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

use std::cell::Cell;
use std::ffi::CString;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

mod textcache;

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
    let mappings = mark_stack(mappings, live.stack);
    let gaps = gaps(start, end, &mappings);
    Ok(RangeView { mappings, gaps })
}

/// Never use `PROCMAP_QUERY` from now on: [`Source::Auto`] reads `/proc/self/maps`, as on
/// kernels before 6.11 (`REGCHECK_TEST_MEMMAP=maps`, for tests and the benchmark).
pub fn force_text_fallback() {
    IOCTL_UNSUPPORTED.store(true, Ordering::Relaxed);
}

/// Whether the kernel supports `PROCMAP_QUERY` (probes once with a query of address 0
/// unless an earlier query already found it missing).
pub fn procmap_query_available() -> bool {
    if IOCTL_UNSUPPORTED.load(Ordering::Relaxed) {
        return false;
    }
    match procmap_query(0, 1, &Live::pure()) {
        Ok(_) => true,
        Err(e) => {
            if is_unsupported(&e) {
                IOCTL_UNSUPPORTED.store(true, Ordering::Relaxed);
                false
            } else {
                // Some other failure (no /proc?): the ioctl itself is not known to be missing.
                true
            }
        }
    }
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

/// The calling thread's stack as `[low, high)`, from `pthread_getattr_np` (the guard page is
/// not included). Cached per thread after the first success: for the main thread glibc reads
/// `/proc/self/maps` to answer, which is too slow to repeat on every query.
pub fn current_thread_stack() -> Option<(usize, usize)> {
    thread_local! {
        static STACK: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
    }
    if let Some(cached) = STACK.try_with(Cell::get).ok().flatten() {
        return Some(cached);
    }
    let range = thread_stack_uncached()?;
    let _ = STACK.try_with(|c| c.set(Some(range)));
    Some(range)
}

fn thread_stack_uncached() -> Option<(usize, usize)> {
    let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
    // SAFETY: pthread_getattr_np initialises `attr` for the calling thread on success.
    let rc = unsafe { libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    let mut addr: *mut libc::c_void = std::ptr::null_mut();
    let mut size: libc::size_t = 0;
    // SAFETY: `attr` was initialised above; `addr` and `size` are valid out-pointers.
    let rc = unsafe { libc::pthread_attr_getstack(attr.as_ptr(), &mut addr, &mut size) };
    // SAFETY: `attr` was initialised by pthread_getattr_np and is destroyed exactly once.
    unsafe { libc::pthread_attr_destroy(attr.as_mut_ptr()) };
    if rc != 0 || size == 0 || addr.is_null() {
        return None;
    }
    let low = addr as usize;
    Some((low, low.checked_add(size)?))
}

// ---------------------------------------------------------------------------------------
// Pure parsing and classification.

/// Classify a mapping by its name (the last column of `/proc/self/maps`) alone:
///
/// * `""`, `[anon:...]`, `[anon_shmem:...]`, `/dev/zero (deleted)` (shared anonymous) ->
///   [`Backing::Anonymous`];
/// * `[heap]` -> [`Backing::Heap`]; `[stack]`, `[stack:TID]` -> [`Backing::Stack`];
///   other `[...]` -> [`Backing::Special`];
/// * `/anon_hugepage...` (MAP_HUGETLB, SHM_HUGETLB) -> [`Backing::HugeTlb`];
/// * `/dev/shm/...`, `/memfd:...`, `/SYSV...` (with or without ` (deleted)`) ->
///   [`Backing::SharedMemory`];
/// * other `/dev/...` and `/dmabuf:...` -> [`Backing::Device`];
/// * other absolute paths -> [`Backing::File`]; other names (`anon_inode:[...]`) ->
///   [`Backing::Special`].
///
/// The filesystem of a path is not consulted here (a file on tmpfs is `File`); [`query`]
/// refines that.
pub fn classify(name: &str) -> Backing {
    let bare = name.strip_suffix(" (deleted)").unwrap_or(name);
    if name.is_empty() || name.starts_with("[anon:") || name.starts_with("[anon_shmem:") {
        Backing::Anonymous
    } else if name == "[heap]" {
        Backing::Heap
    } else if name == "[stack]" || (name.starts_with("[stack:") && name.ends_with(']')) {
        Backing::Stack
    } else if name.starts_with('[') {
        Backing::Special(name.to_owned())
    } else if bare.starts_with("/anon_hugepage") {
        Backing::HugeTlb(name.to_owned())
    } else if bare == "/dev/zero" {
        Backing::Anonymous
    } else if bare.starts_with("/dev/shm/") || bare.starts_with("/memfd:") || bare.starts_with("/SYSV") {
        Backing::SharedMemory(name.to_owned())
    } else if bare.starts_with("/dev/") || bare.starts_with("/dmabuf:") {
        Backing::Device(name.to_owned())
    } else if name.starts_with('/') {
        Backing::File(name.to_owned())
    } else {
        Backing::Special(name.to_owned())
    }
}

/// Parse one line of `/proc/<pid>/maps` (or a mapping header line of `smaps`):
/// `start-end perms offset dev inode [name]`. The name may contain spaces. `locked` is
/// `None`; the backing comes from [`classify`].
pub fn parse_maps_line(line: &str) -> Option<Mapping> {
    let h = parse_header(line)?;
    Some(h.to_mapping())
}

/// Parse a whole `/proc/<pid>/maps` text; malformed lines are skipped.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    // Reading from a byte slice cannot fail.
    scan(text.as_bytes(), 0, usize::MAX, false, &Live::pure()).unwrap_or_default()
}

/// Parse a whole `/proc/<pid>/smaps` text. `locked` is `Some(lo in VmFlags)` for entries that
/// have a `VmFlags:` line (`None` otherwise); `ht` in VmFlags makes the backing
/// [`Backing::HugeTlb`]. Malformed lines are skipped.
pub fn parse_smaps(text: &str) -> Vec<Mapping> {
    scan(text.as_bytes(), 0, usize::MAX, true, &Live::pure()).unwrap_or_default()
}

/// A parsed mapping header, borrowing its name.
struct Header<'a> {
    start: usize,
    end: usize,
    readable: bool,
    writable: bool,
    shared: bool,
    dev_major: u32,
    name: &'a str,
}

impl Header<'_> {
    fn to_mapping(&self) -> Mapping {
        Mapping {
            start: self.start,
            end: self.end,
            readable: self.readable,
            writable: self.writable,
            shared: self.shared,
            path: self.name.to_owned(),
            backing: classify(self.name),
            locked: None,
        }
    }
}

/// The next space-separated field of `s` and the text after it.
fn next_field(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start_matches(' ');
    if s.is_empty() {
        return None;
    }
    let i = s.find(' ').unwrap_or(s.len());
    Some((&s[..i], &s[i..]))
}

fn hex_usize(s: &str) -> Option<usize> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    usize::from_str_radix(s, 16).ok()
}

/// `"7f00-7f10"` -> (0x7f00, 0x7f10).
fn parse_range(s: &str) -> Option<(usize, usize)> {
    let (a, b) = s.split_once('-')?;
    let (start, end) = (hex_usize(a)?, hex_usize(b)?);
    (start <= end).then_some((start, end))
}

/// The address range of a header line, without looking at the rest of it.
fn quick_range(line: &str) -> Option<(usize, usize)> {
    parse_range(line.split(' ').next()?)
}

fn parse_header(line: &str) -> Option<Header<'_>> {
    let line = line.trim_end_matches(['\n', '\r']);
    let (range, rest) = next_field(line)?;
    let (start, end) = parse_range(range)?;
    let (perms, rest) = next_field(rest)?;
    let p = perms.as_bytes();
    if p.len() != 4
        || !matches!(p[0], b'r' | b'-')
        || !matches!(p[1], b'w' | b'-')
        || !matches!(p[2], b'x' | b'-')
        || !matches!(p[3], b'p' | b's')
    {
        return None;
    }
    let (offset, rest) = next_field(rest)?;
    hex_usize(offset)?;
    let (dev, rest) = next_field(rest)?;
    let (major, minor) = dev.split_once(':')?;
    let dev_major = u32::from_str_radix(major, 16).ok()?;
    u32::from_str_radix(minor, 16).ok()?;
    let (inode, rest) = next_field(rest)?;
    if !inode.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Header {
        start,
        end,
        readable: p[0] == b'r',
        writable: p[1] == b'w',
        shared: p[3] == b's',
        dev_major,
        name: rest.trim_start_matches(' '),
    })
}

/// An smaps field line (`Key: value`), as opposed to a mapping header.
fn is_field_line(line: &str) -> bool {
    line.split(' ').next().is_some_and(|t| t.ends_with(':'))
}

/// `"   4 kB"` -> 4096.
fn parse_kb(v: &str) -> Option<u64> {
    let mut it = v.split_whitespace();
    let n: u64 = it.next()?.parse().ok()?;
    match it.next() {
        Some(u) if u.eq_ignore_ascii_case("kB") => n.checked_mul(1024),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------
// Refinement with live facts.

/// What a source knows about a mapping beyond [`Mapping`]'s fields.
#[derive(Default)]
struct Extra {
    /// Major number of the backing file's device; 0 for tmpfs, hugetlbfs and other
    /// anonymous-device filesystems.
    dev_major: Option<u32>,
    /// `KernelPageSize` / `vma_page_size`.
    kernel_page_size: Option<u64>,
    /// `ht` in VmFlags.
    hugetlb_flag: bool,
}

/// Live facts used to refine the pure classification; `None` fields for pure parsing.
struct Live {
    base_page: Option<u64>,
    stack: Option<(usize, usize)>,
    statfs: bool,
}

impl Live {
    fn new() -> Live {
        Live { base_page: Some(super::page_size() as u64), stack: current_thread_stack(), statfs: true }
    }

    fn pure() -> Live {
        Live { base_page: None, stack: None, statfs: false }
    }

    /// Refine `m.backing` with `x` and the live facts.
    fn finish(&self, m: &mut Mapping, x: &Extra) {
        let device = matches!(m.backing, Backing::Device(_));
        let big_pages = matches!((x.kernel_page_size, self.base_page), (Some(k), Some(b)) if k > b);
        if !device && (x.hugetlb_flag || big_pages) {
            m.backing = Backing::HugeTlb(m.path.clone());
        } else if self.statfs && matches!(m.backing, Backing::File(_)) && x.dev_major.unwrap_or(0) == 0 {
            // Real block-device filesystems have a non-zero major: only pseudo filesystems
            // (tmpfs, hugetlbfs, but also btrfs, overlayfs, NFS) need a statfs.
            match fs_magic(&m.path) {
                Some(TMPFS_MAGIC) => m.backing = Backing::SharedMemory(m.path.clone()),
                Some(HUGETLBFS_MAGIC) => m.backing = Backing::HugeTlb(m.path.clone()),
                _ => {}
            }
        }
    }
}

/// Mark the calling thread's stack. Only the part of a mapping inside the stack's bounds is
/// `Stack`: a kernel may merge a thread stack with an adjacent anonymous mapping (before 6.7
/// `MAP_STACK` did not prevent it), and a buffer in the rest of that mapping is not a stack.
fn mark_stack(mappings: Vec<Mapping>, stack: Option<(usize, usize)>) -> Vec<Mapping> {
    let Some((lo, hi)) = stack else { return mappings };
    if !mappings.iter().any(|m| m.end > lo && m.start < hi && m.backing != Backing::Stack) {
        return mappings;
    }
    let mut out = Vec::with_capacity(mappings.len() + 2);
    for m in mappings {
        if m.end <= lo || m.start >= hi || m.backing == Backing::Stack {
            out.push(m);
            continue;
        }
        if m.start < lo {
            out.push(Mapping { end: lo, ..m.clone() });
        }
        out.push(Mapping { start: m.start.max(lo), end: m.end.min(hi), backing: Backing::Stack, ..m.clone() });
        if m.end > hi {
            out.push(Mapping { start: hi, ..m });
        }
    }
    out
}

const TMPFS_MAGIC: u32 = 0x0102_1994;
const HUGETLBFS_MAGIC: u32 = 0x9584_58f6;

/// The filesystem magic of `path` (without a ` (deleted)` suffix), or of its directory when
/// the file itself is gone.
fn fs_magic(path: &str) -> Option<u32> {
    let bare = path.strip_suffix(" (deleted)").unwrap_or(path);
    statfs_magic(Path::new(bare)).or_else(|| statfs_magic(Path::new(bare).parent()?))
}

fn statfs_magic(path: &Path) -> Option<u32> {
    use std::os::unix::ffi::OsStrExt;
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: `c` is a NUL-terminated path; `st` is a writable statfs buffer.
    if unsafe { libc::statfs(c.as_ptr(), st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: statfs succeeded, so it filled `st`.
    let st = unsafe { st.assume_init() };
    // f_type's C type differs between targets (long, int, unsigned); magic numbers are
    // 32-bit, so compare the low 32 bits.
    #[allow(clippy::unnecessary_cast)]
    Some(st.f_type as u64 as u32)
}

// ---------------------------------------------------------------------------------------
// /proc/self/maps and /proc/self/smaps text.

fn scan_file(path: &str, start: usize, end: usize, smaps: bool, live: &Live) -> io::Result<Vec<Mapping>> {
    let file = File::open(path)?;
    scan(BufReader::with_capacity(64 * 1024, file), start, end, smaps, live)
}

/// Read maps/smaps text up to the first mapping at or beyond `end`, building the mappings
/// that intersect `[start, end)`.
fn scan<R: BufRead>(mut reader: R, start: usize, end: usize, smaps: bool, live: &Live) -> io::Result<Vec<Mapping>> {
    let mut out = Vec::new();
    // The intersecting mapping whose smaps fields are being read.
    let mut pending: Option<(Mapping, Extra)> = None;
    let mut buf = Vec::with_capacity(256);
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches(['\n', '\r']);
        if smaps && is_field_line(line) {
            if let Some((m, x)) = pending.as_mut() {
                if let Some(v) = line.strip_prefix("VmFlags:") {
                    let mut locked = false;
                    for flag in v.split_whitespace() {
                        locked |= flag == "lo";
                        x.hugetlb_flag |= flag == "ht";
                    }
                    m.locked = Some(locked);
                } else if let Some(v) = line.strip_prefix("KernelPageSize:") {
                    x.kernel_page_size = parse_kb(v);
                }
            }
            continue;
        }
        let Some((s, e)) = quick_range(line) else {
            continue;
        };
        if let Some((mut m, x)) = pending.take() {
            live.finish(&mut m, &x);
            out.push(m);
        }
        if s >= end {
            break;
        }
        if e <= start {
            continue;
        }
        if let Some(h) = parse_header(line) {
            let extra = Extra { dev_major: Some(h.dev_major), ..Extra::default() };
            pending = Some((h.to_mapping(), extra));
        }
    }
    if let Some((mut m, x)) = pending.take() {
        live.finish(&mut m, &x);
        out.push(m);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// PROCMAP_QUERY (include/uapi/linux/fs.h, Linux 6.11).

/// `struct procmap_query` of Linux 6.11 (104 bytes).
#[repr(C)]
#[derive(Default)]
struct ProcmapQuery {
    size: u64,
    query_flags: u64,
    query_addr: u64,
    vma_start: u64,
    vma_end: u64,
    vma_flags: u64,
    vma_page_size: u64,
    vma_offset: u64,
    inode: u64,
    dev_major: u32,
    dev_minor: u32,
    vma_name_size: u32,
    build_id_size: u32,
    vma_name_addr: u64,
    build_id_addr: u64,
}

const _: () = assert!(std::mem::size_of::<ProcmapQuery>() == 104);

const PROCFS_IOCTL_MAGIC: u64 = b'f' as u64;
/// `_IOWR(PROCFS_IOCTL_MAGIC, 17, struct procmap_query)` = 0xC0686611. The generic encoding
/// (dir 3 << 30) and the powerpc/mips/sparc one (dir 6 << 29) give the same number here.
const PROCMAP_QUERY: u64 =
    (3 << 30) | ((std::mem::size_of::<ProcmapQuery>() as u64) << 16) | (PROCFS_IOCTL_MAGIC << 8) | 17;

const PROCMAP_QUERY_VMA_READABLE: u64 = 0x01;
const PROCMAP_QUERY_VMA_WRITABLE: u64 = 0x02;
const PROCMAP_QUERY_VMA_SHARED: u64 = 0x08;
const PROCMAP_QUERY_COVERING_OR_NEXT_VMA: u64 = 0x10;

/// Set once the kernel said it has no PROCMAP_QUERY.
static IOCTL_UNSUPPORTED: AtomicBool = AtomicBool::new(false);

/// The errors meaning "this kernel has no PROCMAP_QUERY".
fn is_unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOTTY) | Some(libc::EINVAL))
}

/// Walk the mappings of `[start, end)` with one PROCMAP_QUERY ioctl per mapping, on the
/// kept-open descriptor; a failure on it is retried once on a freshly opened one.
fn procmap_query(start: usize, end: usize, live: &Live) -> io::Result<Vec<Mapping>> {
    let maps = &super::procfd::MAPS;
    match procmap_query_on(maps.get(false)?, start, end, live) {
        Err(e) if e.raw_os_error() == Some(libc::EBADF) || is_unsupported(&e) => {
            procmap_query_on(maps.get(true)?, start, end, live)
        }
        r => r,
    }
}

fn procmap_query_on(fd: i32, start: usize, end: usize, live: &Live) -> io::Result<Vec<Mapping>> {
    // PATH_MAX: the kernel never returns a longer name (d_path fails instead).
    let mut name = [0u8; 4096];
    let mut out = Vec::new();
    let mut addr = start;
    while addr < end {
        let mut q = ProcmapQuery {
            size: std::mem::size_of::<ProcmapQuery>() as u64,
            query_flags: PROCMAP_QUERY_COVERING_OR_NEXT_VMA,
            query_addr: addr as u64,
            vma_name_size: name.len() as u32,
            vma_name_addr: name.as_mut_ptr() as u64,
            ..ProcmapQuery::default()
        };
        // SAFETY: `fd` is an open /proc/self/maps; `q` is a valid procmap_query whose
        // `size` is its real size; `vma_name_addr` points to `name`, writable for
        // `vma_name_size` bytes; no build id is requested. Both outlive the call.
        let rc = unsafe { libc::ioctl(fd, PROCMAP_QUERY as _, &mut q as *mut ProcmapQuery) };
        if rc != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::ENOENT) {
                break; // No mapping at or above `addr`.
            }
            return Err(e);
        }
        let (vma_start, vma_end) = (q.vma_start as usize, q.vma_end as usize);
        if vma_start >= end {
            break;
        }
        if vma_end <= addr {
            // Cannot happen with a sane kernel; never loop forever.
            return Err(io::Error::other(format!("PROCMAP_QUERY at {addr:#x} returned {vma_start:#x}-{vma_end:#x}")));
        }
        // vma_name_size counts the terminating NUL; 0 means no name.
        let len = (q.vma_name_size as usize).min(name.len());
        let raw = &name[..len];
        let raw = raw.strip_suffix(&[0u8][..]).unwrap_or(raw);
        let path = String::from_utf8_lossy(raw).into_owned();
        let mut m = Mapping {
            start: vma_start,
            end: vma_end,
            readable: q.vma_flags & PROCMAP_QUERY_VMA_READABLE != 0,
            writable: q.vma_flags & PROCMAP_QUERY_VMA_WRITABLE != 0,
            shared: q.vma_flags & PROCMAP_QUERY_VMA_SHARED != 0,
            backing: classify(&path),
            path,
            locked: None,
        };
        let extra =
            Extra { dev_major: Some(q.dev_major), kernel_page_size: Some(q.vma_page_size), hugetlb_flag: false };
        live.finish(&mut m, &extra);
        out.push(m);
        addr = vma_end;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::sync::Mutex;

    const MAPS: &str = "\
55d0c0a00000-55d0c0a02000 r--p 00000000 fd:01 1835106                    /usr/bin/cat
55d0c0a02000-55d0c0a07000 r-xp 00002000 fd:01 1835106                    /usr/bin/cat
55d0c1c9e000-55d0c1cbf000 rw-p 00000000 00:00 0                          [heap]
7f1e2c000000-7f1e2c021000 rw-p 00000000 00:00 0 
7f1e30000000-7f1e30400000 rw-s 00000000 00:01 4                          /SYSV00000000 (deleted)
7f1e30400000-7f1e30600000 rw-s 00000000 00:01 1025                       /memfd:regcheck-test (deleted)
7f1e30600000-7f1e30800000 rw-s 00000000 00:1a 77                         /dev/shm/ring buffer 0
7f1e30800000-7f1e30a00000 rw-s 00000000 00:0f 12                         /anon_hugepage (deleted)
7f1e30a00000-7f1e30a01000 rw-s 00000000 00:05 371                        /dev/davinci0
7f1e30a01000-7f1e30a02000 rw-s 00000000 00:01 9                          /dev/zero (deleted)
7f1e30a02000-7f1e30a03000 r--p 00000000 fd:01 42                         /home/user/my data/file name.bin (deleted)
7f1e30a03000-7f1e30a04000 rw-p 00000000 00:00 0                          [anon:glibc: malloc arena]
7f1e30a04000-7f1e30a05000 rw-s 00000000 00:0e 1                          anon_inode:[io_uring]
7ffd6e9c4000-7ffd6e9e5000 rw-p 00000000 00:00 0                          [stack]
7ffd6e9f2000-7ffd6e9f6000 r--p 00000000 00:00 0                          [vvar]
7ffd6e9f6000-7ffd6e9f8000 r-xp 00000000 00:00 0                          [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
";

    #[test]
    fn parses_maps_lines() {
        let m = parse_maps_line(MAPS.lines().next().unwrap()).unwrap();
        assert_eq!((m.start, m.end), (0x55d0c0a00000, 0x55d0c0a02000));
        assert!(m.readable && !m.writable && !m.shared);
        assert_eq!(m.path, "/usr/bin/cat");
        assert_eq!(m.backing, Backing::File("/usr/bin/cat".into()));
        assert_eq!(m.locked, None);

        let all = parse_maps(MAPS);
        assert_eq!(all.len(), MAPS.lines().count());
        let backings: Vec<Backing> = all.iter().map(|m| m.backing.clone()).collect();
        use Backing::*;
        assert_eq!(
            backings,
            vec![
                File("/usr/bin/cat".into()),
                File("/usr/bin/cat".into()),
                Heap,
                Anonymous,
                SharedMemory("/SYSV00000000 (deleted)".into()),
                SharedMemory("/memfd:regcheck-test (deleted)".into()),
                SharedMemory("/dev/shm/ring buffer 0".into()),
                HugeTlb("/anon_hugepage (deleted)".into()),
                Device("/dev/davinci0".into()),
                Anonymous,
                File("/home/user/my data/file name.bin (deleted)".into()),
                Anonymous,
                Special("anon_inode:[io_uring]".into()),
                Stack,
                Special("[vvar]".into()),
                Special("[vdso]".into()),
                Special("[vsyscall]".into()),
            ]
        );
        assert_eq!(all[3].path, "");
        assert!(all[4].shared && all[4].writable);
        assert_eq!(all[6].path, "/dev/shm/ring buffer 0");
        assert_eq!(all[10].path, "/home/user/my data/file name.bin (deleted)");
        assert!(all[16].start > all[15].start);
    }

    #[test]
    fn rejects_malformed_lines() {
        for line in [
            "",
            "garbage",
            "Size:                  4 kB",
            "VmFlags: rd wr mr mw me ac sd",
            "7f00-7e00 rw-p 00000000 00:00 0",
            "7f00-7f10 rw-q 00000000 00:00 0",
            "7f00-7f10 rwp 00000000 00:00 0",
            "7f00-7f10 rw-p 00000000 0000 0",
            "7f00-7f10 rw-p zz 00:00 0",
            "7f00-7f10 rw-p 00000000 00:00",
            "+7f00-7f10 rw-p 00000000 00:00 0",
            "7f00-1ffffffffffffffff rw-p 00000000 00:00 0",
        ] {
            assert!(parse_maps_line(line).is_none(), "{line:?}");
        }
        let m = parse_maps_line("7f00-7f10 rw-p 00000000 00:00 0").unwrap();
        assert_eq!((m.path.as_str(), m.backing), ("", Backing::Anonymous));
        let m = parse_maps_line("7f00-7f10 rw-p 00000000 103:02 5 /x\n").unwrap();
        assert_eq!(m.path, "/x");
        assert_eq!(parse_maps_line("7f00-7f10 rw-p 00000000 00:00 0 [stack:1234]").unwrap().backing, Backing::Stack);
    }

    const SMAPS: &str = "\
7f1e2c000000-7f1e2c021000 rw-p 00000000 00:00 0 
Size:                132 kB
KernelPageSize:        4 kB
MMUPageSize:           4 kB
Rss:                   8 kB
Locked:                0 kB
THPeligible:           0
VmFlags: rd wr mr mw me ac sd
7f1e30000000-7f1e30400000 rw-s 00000000 00:01 4                          /SYSV00000000 (deleted)
Size:               4096 kB
KernelPageSize:        4 kB
Locked:             4096 kB
VmFlags: rd wr sh mr mw me ms lo sd
7f1e30400000-7f1e30600000 rw-s 00000000 00:0f 1025                       /memfd:huge (deleted)
Size:               2048 kB
KernelPageSize:     2048 kB
VmFlags: rd wr sh mr mw me ms de ht sd
7f1e30a02000-7f1e30a03000 r--p 00000000 fd:01 42                         /home/user/my data/f.bin
Size:                  4 kB
7ffd6e9c4000-7ffd6e9e5000 rw-p 00000000 00:00 0                          [stack]
Size:                132 kB
KernelPageSize:        4 kB
VmFlags: rd wr mr mw me gd ac
";

    #[test]
    fn parses_smaps() {
        let all = parse_smaps(SMAPS);
        assert_eq!(all.len(), 5);
        assert_eq!(all[0].locked, Some(false));
        assert_eq!(all[0].backing, Backing::Anonymous);
        assert_eq!(all[1].locked, Some(true));
        assert_eq!(all[1].backing, Backing::SharedMemory("/SYSV00000000 (deleted)".into()));
        assert_eq!(all[2].backing, Backing::HugeTlb("/memfd:huge (deleted)".into()));
        assert_eq!(all[2].locked, Some(false));
        assert_eq!(all[3].locked, None, "no VmFlags line");
        assert_eq!(all[3].path, "/home/user/my data/f.bin");
        assert_eq!(all[4].backing, Backing::Stack);
        // Same headers as a maps parse.
        let headers: String =
            SMAPS.lines().filter(|l| parse_maps_line(l).is_some()).map(|l| format!("{l}\n")).collect();
        let plain = parse_maps(&headers);
        for (a, b) in all.iter().zip(&plain) {
            assert_eq!((a.start, a.end, &a.path), (b.start, b.end, &b.path));
        }
    }

    #[test]
    fn scan_reads_only_the_range() {
        let live = Live::pure();
        let v = scan(MAPS.as_bytes(), 0x7f1e30400000, 0x7f1e30600001, false, &live).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].start, 0x7f1e30400000);
        assert_eq!(v[1].start, 0x7f1e30600000);
        // A range touching nothing.
        let v = scan(MAPS.as_bytes(), 0x1000, 0x2000, false, &live).unwrap();
        assert!(v.is_empty());
        // smaps fields of a skipped mapping do not leak into the next.
        let v = scan(SMAPS.as_bytes(), 0x7f1e30a02000, 0x7f1e30a03000, true, &live).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].locked, None);
        let v = scan(SMAPS.as_bytes(), 0x7f1e30000000, 0x7f1e30000001, true, &live).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].locked, Some(true));
    }

    #[test]
    fn classifies_names() {
        use Backing::*;
        let cases: &[(&str, Backing)] = &[
            ("", Anonymous),
            ("[heap]", Heap),
            ("[stack]", Stack),
            ("[stack:42]", Stack),
            ("[vdso]", Special("[vdso]".into())),
            ("[anon:x]", Anonymous),
            ("[anon_shmem:y]", Anonymous),
            ("/dev/shm/a", SharedMemory("/dev/shm/a".into())),
            ("/dev/shm/a (deleted)", SharedMemory("/dev/shm/a (deleted)".into())),
            ("/memfd:x", SharedMemory("/memfd:x".into())),
            ("/SYSV0000beef (deleted)", SharedMemory("/SYSV0000beef (deleted)".into())),
            ("/anon_hugepage", HugeTlb("/anon_hugepage".into())),
            ("/dev/zero (deleted)", Anonymous),
            ("/dev/davinci_manager", Device("/dev/davinci_manager".into())),
            ("/dmabuf:", Device("/dmabuf:".into())),
            ("/usr/lib/libc.so.6", File("/usr/lib/libc.so.6".into())),
            ("/tmp/x (deleted)", File("/tmp/x (deleted)".into())),
            ("anon_inode:[perf_event]", Special("anon_inode:[perf_event]".into())),
        ];
        for (name, want) in cases {
            assert_eq!(&classify(name), want, "{name:?}");
        }
    }

    fn m(start: usize, end: usize) -> Mapping {
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

    #[test]
    fn refines_files_by_filesystem() {
        // /dev/shm, or any other tmpfs this process may write to
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let candidates = std::iter::once("/dev/shm".to_string()).chain(
            mounts
                .lines()
                .filter(|l| l.split(' ').nth(2) == Some("tmpfs"))
                .filter_map(|l| l.split(' ').nth(1))
                .map(str::to_string),
        );
        let file = format!("regcheck-refine-{}", std::process::id());
        let Some(path) = candidates
            .map(|dir| Path::new(&dir).join(&file))
            .find(|p| statfs_magic(p.parent().unwrap()) == Some(TMPFS_MAGIC) && std::fs::write(p, b"x").is_ok())
        else {
            return crate::platform::unavailable(
                "refines_files_by_filesystem",
                "no writable tmpfs (/dev/shm or another tmpfs mount)",
            );
        };
        let name = path.to_string_lossy().into_owned();
        let live = Live { base_page: Some(4096), stack: Some((0x9000, 0xa000)), statfs: true };
        let file = |name: &str| Mapping {
            path: name.to_owned(),
            backing: Backing::File(name.to_owned()),
            ..m(0x1000, 0x2000)
        };
        let anon_dev = |page: Option<u64>| Extra { dev_major: Some(0), kernel_page_size: page, hugetlb_flag: false };
        // A file on tmpfs (as if its name had not given it away).
        let mut x = file(&name);
        live.finish(&mut x, &anon_dev(Some(4096)));
        assert_eq!(x.backing, Backing::SharedMemory(name.clone()));
        // Deleted: the directory decides.
        let _ = std::fs::remove_file(&path);
        let deleted = format!("{name} (deleted)");
        let mut x = file(&deleted);
        live.finish(&mut x, &anon_dev(None));
        assert_eq!(x.backing, Backing::SharedMemory(deleted.clone()));
        // A block-device filesystem is not asked.
        let mut x = file(&deleted);
        live.finish(&mut x, &Extra { dev_major: Some(254), ..anon_dev(None) });
        assert_eq!(x.backing, Backing::File(deleted.clone()));
        // Big kernel pages mean hugetlb.
        let mut x = file(&deleted);
        live.finish(&mut x, &anon_dev(Some(2 << 20)));
        assert_eq!(x.backing, Backing::HugeTlb(deleted.clone()));
        // Pure parsing never touches the filesystem.
        let mut x = file(&deleted);
        Live::pure().finish(&mut x, &anon_dev(Some(2 << 20)));
        assert_eq!(x.backing, Backing::File(deleted));
    }

    #[test]
    fn marks_only_the_part_inside_the_thread_stack() {
        let live = Live { base_page: Some(4096), stack: Some((0x9000, 0xa000)), statfs: true };
        // Only the part of a mapping inside the thread's stack is the stack.
        let anon = |start, end| Mapping { start, end, backing: Backing::Anonymous, ..m(start, end) };
        let parts = mark_stack(vec![anon(0x8000, 0xb000)], live.stack);
        let got: Vec<_> = parts.iter().map(|p| (p.start, p.end, p.backing.clone())).collect();
        assert_eq!(
            got,
            vec![
                (0x8000, 0x9000, Backing::Anonymous),
                (0x9000, 0xa000, Backing::Stack),
                (0xa000, 0xb000, Backing::Anonymous)
            ]
        );
        assert_eq!(mark_stack(vec![anon(0x1000, 0x2000)], live.stack)[0].backing, Backing::Anonymous);
        assert_eq!(mark_stack(vec![anon(0x9000, 0xa000)], live.stack)[0].backing, Backing::Stack);
        assert_eq!(mark_stack(vec![anon(0x8000, 0xb000)], None).len(), 1);
    }

    #[test]
    fn unsupported_errors() {
        assert!(is_unsupported(&io::Error::from_raw_os_error(libc::ENOTTY)));
        assert!(is_unsupported(&io::Error::from_raw_os_error(libc::EINVAL)));
        assert!(!is_unsupported(&io::Error::from_raw_os_error(libc::ENAMETOOLONG)));
        assert!(!is_unsupported(&io::Error::other("x")));
    }

    #[test]
    fn ioctl_number_matches_the_kernel_header() {
        assert_eq!(PROCMAP_QUERY, 0xC068_6611);
    }
}
