//! Whether regcheck sees every call: the flags the `LD_AUDIT` module (`libregcheck_audit.so`)
//! writes into this library when it makes it the target of its redirections.
//!
//! Without the audit module, a caller that looks a vendor function up itself (Python `ctypes`,
//! `dlopen` + `dlsym` adapters) reaches the vendor directly: its allocations, registrations and
//! frees never reach regcheck's records. With it, every such binding is pointed at regcheck;
//! and when this library was loaded with the program (not `dlopen`ed later), no memory
//! predates its records. A rule that judges a call by those records can reject only when both
//! hold ([`Tracking::complete`]); otherwise it warns and says how to make it sure.
//!
//! The module writes the flags from its `la_objopen`, before this library runs any code, into
//! [`regcheck_audit_flags`], which it finds in the dynamic symbol table. Nothing else writes it.

use std::sync::atomic::{AtomicU32, Ordering};

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

    /// Why the records may miss calls (`None` when they cannot), for a finding's message.
    pub fn gap(self) -> Option<&'static str> {
        if !self.audited {
            Some("regcheck runs without its LD_AUDIT module, so calls made through ctypes or dlopen+dlsym (Python's ACL calls, for one) never reach it and its records may lack them")
        } else if !self.at_start {
            Some("regcheck was loaded after the program started, so memory allocated and registered before then is not in its records")
        } else {
            None
        }
    }
}

/// This process's tracking, as the audit module left it (one relaxed load).
#[inline]
pub fn tracking() -> Tracking {
    Tracking::from_flags(regcheck_audit_flags.load(Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complete_only_with_the_module_from_the_start() {
        assert!(Tracking::from_flags(AUDITED | AT_START).complete());
        assert_eq!(Tracking::from_flags(AUDITED | AT_START).gap(), None);
        let late = Tracking::from_flags(AUDITED);
        assert!(!late.complete());
        assert!(late.gap().unwrap().contains("loaded after the program started"));
        for flags in [0, AT_START] {
            let t = Tracking::from_flags(flags);
            assert!(!t.complete() && !t.at_start, "{flags}");
            assert!(t.gap().unwrap().contains("LD_AUDIT"), "{flags}");
        }
    }
}
