//! The `PROCMAP_QUERY` ioctl (include/uapi/linux/fs.h, Linux 6.11): one ioctl per mapping
//! of a range, on the kept-open `/proc/self/maps`, and whether the kernel has it.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use super::live::{Extra, Live};
use super::{classify, Mapping};

/// Never use `PROCMAP_QUERY` from now on: [`Source::Auto`](super::Source::Auto) reads
/// `/proc/self/maps`, as on kernels before 6.11 (`REGCHECK_TEST_MEMMAP=maps`, for tests and the
/// benchmark).
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
pub(super) static IOCTL_UNSUPPORTED: AtomicBool = AtomicBool::new(false);

/// The errors meaning "this kernel has no PROCMAP_QUERY".
pub(super) fn is_unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOTTY) | Some(libc::EINVAL))
}

/// Walk the mappings of `[start, end)` with one PROCMAP_QUERY ioctl per mapping, on the
/// kept-open descriptor; a failure on it is retried once on a freshly opened one.
pub(super) fn procmap_query(start: usize, end: usize, live: &Live) -> io::Result<Vec<Mapping>> {
    let maps = &super::super::procfd::MAPS;
    match procmap_query_on(maps.get(false)?, start, end, live) {
        Err(e) if e.raw_os_error() == Some(libc::EBADF) || is_unsupported(&e) => {
            procmap_query_on(maps.get(true)?, start, end, live)
        }
        r => r,
    }
}

/// PATH_MAX: the kernel never returns a longer name (d_path fails instead).
const NAME_LEN: usize = 4096;

thread_local! {
    /// The thread's buffer for a mapping's name, zeroed once (not 4 KiB of stores per
    /// registration); only the bytes the kernel wrote are read. Initialised memory, so that
    /// valgrind, which cannot see this ioctl write it, finds nothing undefined.
    static NAME: std::cell::RefCell<[u8; NAME_LEN]> = const { std::cell::RefCell::new([0; NAME_LEN]) };
}

fn procmap_query_on(fd: i32, start: usize, end: usize, live: &Live) -> io::Result<Vec<Mapping>> {
    let with_buf = |name: &mut [u8; NAME_LEN]| procmap_query_into(fd, start, end, live, name);
    match NAME.try_with(|b| b.try_borrow_mut().ok().map(|mut b| with_buf(&mut b))) {
        Ok(Some(r)) => r,
        // A thread being torn down, or a re-entered query: a buffer of its own.
        _ => with_buf(&mut [0; NAME_LEN]),
    }
}

fn procmap_query_into(
    fd: i32,
    start: usize,
    end: usize,
    live: &Live,
    name: &mut [u8; NAME_LEN],
) -> io::Result<Vec<Mapping>> {
    let name_len = NAME_LEN;
    let mut out = Vec::new();
    let mut addr = start;
    while addr < end {
        let mut q = ProcmapQuery {
            size: std::mem::size_of::<ProcmapQuery>() as u64,
            query_flags: PROCMAP_QUERY_COVERING_OR_NEXT_VMA,
            query_addr: addr as u64,
            vma_name_size: name_len as u32,
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
        let len = (q.vma_name_size as usize).min(name_len);
        // The kernel wrote the name's `vma_name_size` bytes (its NUL included) into the buffer.
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
