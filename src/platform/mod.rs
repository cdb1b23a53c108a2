//! Platform probes: what regcheck learns about the machine and the process by itself.
//!
//! Everything here is a pure parser (unit-tested on text) plus a thin reader of the
//! kernel interface it parses. Nothing here knows about rules or the vendor.

pub mod address;
pub mod hdk;
pub mod kernel;
pub mod memlock;
pub mod memmap;
pub mod net;
pub mod secure;

/// The host page size, from `sysconf(_SC_PAGESIZE)` (4096 if the call fails).
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if v > 0 {
        v as usize
    } else {
        4096
    }
}
