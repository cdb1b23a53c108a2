//! Whether regcheck sees every call: what the `LD_AUDIT` module (`libregcheck_audit.so`)
//! tells this library, and what regcheck's own `dlsym`/`dlopen` (`ffi::dl`) saw.
//!
//! A caller that looks a vendor function up itself (Python `ctypes`, `dlopen` + `dlsym`
//! adapters) would reach the vendor directly, and its allocations, registrations and frees
//! would never reach regcheck's records. Two things prevent it: regcheck's own `dlsym`, when
//! libregcheck.so is loaded with the program (preloaded, or linked ahead of the C library),
//! and the audit module. The front end (`frontend::gap`) puts the pieces together.
//!
//! The module writes the flags from its `la_objopen`, before this library runs any code, into
//! [`regcheck_audit_flags`], which it finds in the dynamic symbol table. Nothing else writes it.

use std::ffi::{c_char, c_int, CStr};
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};

/// The audit module redirects bindings to this library.
pub const AUDITED: u32 = 1;
/// ... and this library was opened with the program, before its first `dlopen`.
pub const AT_START: u32 = 2;

/// Written by the `LD_AUDIT` module only (see the module documentation); 0 without it.
/// Exported (the `regcheck_*` pattern of the export list), not part of the C API.
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static regcheck_audit_flags: AtomicU32 = AtomicU32::new(0);

/// How complete regcheck's records of earlier calls can be in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tracking {
    /// The audit module points `dlsym`/`ctypes` look-ups of the vendor's functions at regcheck.
    pub audited: bool,
    /// regcheck was loaded with the program (only known with the audit module).
    pub at_start: bool,
}

impl Tracking {
    /// From the flags' value.
    pub fn from_flags(flags: u32) -> Tracking {
        Tracking { audited: flags & AUDITED != 0, at_start: flags & AUDITED != 0 && flags & AT_START != 0 }
    }

    /// Every call the application makes reaches regcheck, and no memory predates its records.
    pub fn complete(self) -> bool {
        self.audited && self.at_start
    }
}

/// This process's tracking, as the audit module left it (one relaxed load).
#[inline]
pub fn tracking() -> Tracking {
    Tracking::from_flags(regcheck_audit_flags.load(Ordering::Relaxed))
}

/// A short list of file names, kept for the life of the process (lock-free: slots are
/// claimed, written, then published; nothing is removed). More than it holds are counted.
pub struct NameList {
    slots: [AtomicPtr<c_char>; NAME_SLOTS],
    claimed: AtomicUsize,
}

const NAME_SLOTS: usize = 16;

impl NameList {
    pub const fn new() -> NameList {
        NameList { slots: [const { AtomicPtr::new(std::ptr::null_mut()) }; NAME_SLOTS], claimed: AtomicUsize::new(0) }
    }

    /// Keep `name` (copied, never freed).
    pub fn push(&self, name: &CStr) {
        let i = self.claimed.fetch_add(1, Ordering::AcqRel);
        if i < NAME_SLOTS {
            self.slots[i].store(name.to_owned().into_raw(), Ordering::Release);
        }
    }

    /// How many names were pushed (a name beyond the slots counts, but is not kept).
    pub fn count(&self) -> usize {
        self.claimed.load(Ordering::Acquire)
    }

    /// The name pushed `i`-th, once published (`None` beyond the slots or while being written).
    pub fn get(&self, i: usize) -> Option<&'static CStr> {
        let p = self.slots.get(i)?.load(Ordering::Acquire);
        // SAFETY: a published slot holds a leaked CString, never freed.
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) })
    }
}

impl Default for NameList {
    fn default() -> Self {
        NameList::new()
    }
}

/// The files the application `dlopen`ed with `RTLD_DEEPBIND` (seen by regcheck's `dlopen`):
/// such a library binds its own dependencies first, the vendor's functions among them.
pub static DEEPBIND_OPENED: NameList = NameList::new();

/// Look-ups regcheck's `dlsym` answered with its own function (for the tests' diagnostics).
pub static REDIRECTED: AtomicUsize = AtomicUsize::new(0);

/// A `dlopen` (not regcheck's own) is about to run.
pub fn note_dlopen(file: &CStr, mode: c_int) {
    if mode & libc::RTLD_DEEPBIND != 0 {
        DEEPBIND_OPENED.push(file);
    }
}

/// regcheck's `dlsym` answered a look-up with its own function.
pub fn note_redirected() {
    REDIRECTED.fetch_add(1, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complete_only_with_the_module_from_the_start() {
        assert!(Tracking::from_flags(AUDITED | AT_START).complete());
        let late = Tracking::from_flags(AUDITED);
        assert!(!late.complete());
        for flags in [0, AT_START] {
            let t = Tracking::from_flags(flags);
            assert!(!t.complete() && !t.at_start, "{flags}");
        }
    }
}

#[cfg(test)]
mod name_list_tests {
    use super::*;

    #[test]
    fn keeps_names_in_order_and_counts_the_rest() {
        let l = NameList::new();
        for i in 0..NAME_SLOTS + 2 {
            l.push(&std::ffi::CString::new(format!("lib{i}.so")).unwrap());
        }
        assert_eq!(l.count(), NAME_SLOTS + 2);
        assert_eq!(l.get(0).unwrap().to_bytes(), b"lib0.so");
        assert_eq!(l.get(NAME_SLOTS), None);
    }
}
