//! Platform probes: what regcheck learns about the machine and the process by itself.
//!
//! Everything here is a pure parser (unit-tested on text) plus a thin reader of the
//! kernel interface it parses. Nothing here knows about rules or the vendor.

pub mod address;
pub mod atfork;
pub mod audit;
pub mod dynsym;
pub mod files;
pub mod hdk;
pub mod kernel;
pub mod memlock;
pub mod memmap;
pub mod net;
pub mod objects;
pub mod procfd;
pub mod release;
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

/// For tests that need something of the machine (huge pages, `mlock`, a tmpfs): when it is
/// missing, the test fails, naming what to provide, unless `REGCHECK_TEST_ALLOW_SKIP` lists the
/// test's name (comma-separated). CI provides all of it (`.ci/run`), so no test passes there
/// without having run. Returns normally only for an allowed skip, after printing it.
#[cfg(test)]
pub(crate) use testkit::unavailable;
