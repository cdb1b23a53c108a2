//! Descriptors of `/proc/self` files kept open across calls, so that a query costs one system
//! call instead of three (open, query, close).
//!
//! A descriptor of `/proc/self/...` describes the process that opened it, so the `fork` child
//! handler closes them (the child opens its own on first use). Each is moved to a high number,
//! out of the way of the application's descriptor reuse, and callers reopen it once after a
//! failure on it (closed behind regcheck's back).

use super::atfork::AtFork;
use std::ffi::CStr;
use std::io;
use std::sync::atomic::{AtomicI32, Ordering};

/// Descriptors below this are left to the application (`open` returns the lowest free one,
/// so a high number is rarely reused after the application closes it).
pub const HIGH_FD: libc::c_int = 512;

/// One kept-open file.
pub struct KeptFd {
    path: &'static CStr,
    /// -1 before the first use, and in a `fork` child until its first use.
    fd: AtomicI32,
}

/// `/proc/self/maps`: the `PROCMAP_QUERY` ioctl.
pub static MAPS: KeptFd = KeptFd::new(c"/proc/self/maps");
/// `/proc/self/statm`: the process's mapped size, for the `/proc/self/maps` text fallback.
pub static STATM: KeptFd = KeptFd::new(c"/proc/self/statm");

impl KeptFd {
    const fn new(path: &'static CStr) -> KeptFd {
        KeptFd { path, fd: AtomicI32::new(-1) }
    }

    /// The descriptor, opened on first use. `fresh`: replace the current one (after a
    /// failure on it).
    pub fn get(&self, fresh: bool) -> io::Result<i32> {
        let fd = self.fd.load(Ordering::Acquire);
        if fd >= 0 && !fresh {
            return Ok(fd);
        }
        install_fork_handlers();
        // SAFETY: a NUL-terminated path; the descriptor returned is ours.
        let opened = unsafe { libc::open(self.path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if opened < 0 {
            return Err(io::Error::last_os_error());
        }
        let new = move_high(opened);
        match self.fd.compare_exchange(fd, new, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => Ok(new),
            Err(current) => {
                // Another thread installed one meanwhile: use that.
                // SAFETY: `new` is ours and was never published.
                unsafe { libc::close(new) };
                Ok(current)
            }
        }
    }

    /// In the `fork` child: close the inherited descriptor. Async-signal-safe.
    fn close_in_child(&self) {
        let fd = self.fd.swap(-1, Ordering::AcqRel);
        if fd >= 0 {
            // SAFETY: the descriptor was regcheck's own; no other thread exists in the child.
            unsafe { libc::close(fd) };
        }
    }
}

/// Move a descriptor regcheck just opened to [`HIGH_FD`] or above (close-on-exec), out of the
/// application's way; the descriptor itself when that fails. The original is closed.
pub fn move_high(opened: libc::c_int) -> libc::c_int {
    // SAFETY: duplicates our own descriptor; the original is closed once duplicated.
    let high = unsafe { libc::fcntl(opened, libc::F_DUPFD_CLOEXEC, HIGH_FD) };
    if high >= 0 {
        // SAFETY: `opened` is ours and no longer needed.
        unsafe { libc::close(opened) };
        high
    } else {
        opened
    }
}

/// The `fork` child handler (only the forking thread exists in the child): the inherited
/// descriptors describe the parent.
static HANDLERS: AtFork = AtFork::new(None, None, Some(after_fork_in_child));

/// Register the handler that closes the kept descriptors in a child (once).
pub fn install_fork_handlers() {
    HANDLERS.ensure();
}

extern "C" fn after_fork_in_child() {
    MAPS.close_in_child();
    STATM.close_in_child();
}

/// The process's mapped size in pages (the first field of `/proc/self/statm`, the kernel's
/// `total_vm`): one `pread` on the kept descriptor.
pub fn total_vm_pages() -> io::Result<u64> {
    let read = |fd: i32| -> io::Result<u64> {
        let mut buf = [0u8; 128];
        // SAFETY: `buf` is writable for its length; offset 0 restarts the file's text.
        let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        parse_statm_size(&buf[..n as usize]).ok_or_else(|| io::Error::other("unreadable /proc/self/statm"))
    };
    match read(STATM.get(false)?) {
        Err(e) if e.raw_os_error() == Some(libc::EBADF) => read(STATM.get(true)?),
        r => r,
    }
}

/// The first number of a `statm` text (`"12345 678 ..."`).
fn parse_statm_size(text: &[u8]) -> Option<u64> {
    let digits = text.iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&text[..digits]).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statm_size() {
        assert_eq!(parse_statm_size(b"5284 1001 800 6 0 520 0\n"), Some(5284));
        assert_eq!(parse_statm_size(b""), None);
        assert_eq!(parse_statm_size(b"x 1"), None);
    }

    #[test]
    fn live_descriptors() {
        let before = total_vm_pages().unwrap();
        assert!(before > 0);
        let fd = STATM.get(false).unwrap();
        assert!(fd >= HIGH_FD, "moved out of the application's way: {fd}");
        assert_eq!(STATM.get(false).unwrap(), fd, "kept");
        // A new mapping shows in the size.
        let len = 64 << 20;
        // SAFETY: an anonymous mapping of our own, unmapped below.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_NONE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        assert_ne!(p, libc::MAP_FAILED);
        assert!(total_vm_pages().unwrap() >= before + (len as u64 >> 12) / 2);
        // SAFETY: the mapping made above.
        unsafe { libc::munmap(p, len) };
        // Closed behind our back: reopened.
        // SAFETY: closes our own descriptor, as an application might by mistake.
        unsafe { libc::close(fd) };
        assert!(total_vm_pages().unwrap() > 0);
    }
}
