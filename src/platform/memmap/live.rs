//! Refinement with live facts: what only the running system knows about a mapping (the
//! filesystem of its file, its kernel page size) and the calling thread's stack.

use std::cell::Cell;
use std::ffi::CString;
use std::path::Path;

use super::{Backing, Mapping};

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

/// What a source knows about a mapping beyond [`Mapping`]'s fields.
#[derive(Default)]
pub(super) struct Extra {
    /// Major number of the backing file's device; 0 for tmpfs, hugetlbfs and other
    /// anonymous-device filesystems.
    pub(super) dev_major: Option<u32>,
    /// `KernelPageSize` / `vma_page_size`.
    pub(super) kernel_page_size: Option<u64>,
    /// `ht` in VmFlags.
    pub(super) hugetlb_flag: bool,
}

/// Live facts used to refine the pure classification; `None` fields for pure parsing.
pub(super) struct Live {
    pub(super) base_page: Option<u64>,
    pub(super) stack: Option<(usize, usize)>,
    pub(super) statfs: bool,
}

impl Live {
    pub(super) fn new() -> Live {
        Live { base_page: Some(super::super::page_size() as u64), stack: current_thread_stack(), statfs: true }
    }

    pub(super) fn pure() -> Live {
        Live { base_page: None, stack: None, statfs: false }
    }

    /// Refine `m.backing` with `x` and the live facts.
    pub(super) fn finish(&self, m: &mut Mapping, x: &Extra) {
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
pub(super) fn mark_stack(mappings: Vec<Mapping>, stack: Option<(usize, usize)>) -> Vec<Mapping> {
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

pub(super) const TMPFS_MAGIC: u32 = 0x0102_1994;
const HUGETLBFS_MAGIC: u32 = 0x9584_58f6;

/// The filesystem magic of `path` (without a ` (deleted)` suffix), or of its directory when
/// the file itself is gone.
fn fs_magic(path: &str) -> Option<u32> {
    let bare = path.strip_suffix(" (deleted)").unwrap_or(path);
    statfs_magic(Path::new(bare)).or_else(|| statfs_magic(Path::new(bare).parent()?))
}

pub(super) fn statfs_magic(path: &Path) -> Option<u32> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::memmap::tests::m;

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
}
