//! regcheck's `dlsym`, `dlvsym` and `dlopen` (libregcheck.so only): how calls that look a
//! vendor function up by name (Python `ctypes`, `dlopen` + `dlsym` adapters) reach regcheck
//! without the `LD_AUDIT` module.
//!
//! The exported functions are the assembly stubs of `dl_stubs.S` (linked into the shared
//! library only, by build.rs; the static library and the Rust library have none). Each calls
//! a `regcheck_dl_*_pre` function here with its caller's return address, then, unless regcheck
//! answers itself, jumps to the C library's function with the caller's own arguments and
//! return address: glibc sees the application's caller, so `RTLD_NEXT` searches after the
//! caller's object, `dlopen` uses the caller's `RUNPATH`, `dlerror()` says what it would have
//! said. Only one kind of look-up is answered here: a name regcheck interposes, looked up
//! (not with `RTLD_NEXT`, not by regcheck itself) where it resolves to the very function
//! regcheck forwards that name to. It gets regcheck's own entry point instead, as the audit
//! module's `la_symbind` would give. Each call is then checked once: an application's
//! interposer that forwards with `dlsym(RTLD_NEXT, ...)` is left to glibc.
//!
//! The C library's functions are found by [`crate::platform::dynsym::bootstrap`].
//!
//! `dlopen` is only watched: a library opened with `RTLD_DEEPBIND` binds to the vendor on its
//! own ([`crate::platform::audit::note_dlopen`]), and what a vendor library `dlopen`s is the
//! vendor's too ([`crate::vendor::note_dlopen`]).

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::Ordering;

use crate::platform::dynsym::{bootstrap, regcheck_dl_next};

/// The prefixes of the names regcheck interposes (link/regcheck.map): a look-up of any other
/// name goes straight to the C library after this test.
#[inline]
unsafe fn candidate(name: *const c_char) -> bool {
    const PREFIXES: [&[u8]; 7] = [
        b"acl",
        b"HixlCS",
        b"Hccl",
        b"hal",
        b"_ZN4hixl4Hixl",
        b"_ZN4adxl10AdxlEngine",
        b"_ZN12llm_datadist11LlmDataDist",
    ];
    let first = *name as u8;
    if first != b'a' && first != b'H' && first != b'h' && first != b'_' {
        return false;
    }
    PREFIXES.iter().any(|p| p.iter().enumerate().all(|(i, &c)| *name.add(i) as u8 == c))
}

/// The answer to a look-up of an interposed name: regcheck's own function when the look-up
/// resolves to what regcheck forwards that name to; null (the C library answers) otherwise.
unsafe fn answer(handle: *mut c_void, name: *const c_char, version: *const c_char, caller: usize) -> *mut c_void {
    let own = bootstrap();
    let Some(syms) = own.syms else { return std::ptr::null_mut() };
    // Under the audit module, its `la_symbind` redirects the C library's answer itself.
    if syms.holds(caller)
        || handle == libc::RTLD_NEXT
        || crate::callsite::busy()
        || crate::platform::audit::tracking().audited
    {
        return std::ptr::null_mut();
    }
    let name = CStr::from_ptr(name);
    let Some(mine) = syms.function(name.to_bytes()) else { return std::ptr::null_mut() };
    let real = if version.is_null() {
        let f: unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void =
            std::mem::transmute(regcheck_dl_next[0].load(Ordering::Acquire));
        f(handle, name.as_ptr())
    } else {
        let f: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char) -> *mut c_void =
            std::mem::transmute(regcheck_dl_next[1].load(Ordering::Acquire));
        f(handle, name.as_ptr(), version)
    };
    if real.is_null() {
        return std::ptr::null_mut();
    }
    if real as usize == mine || crate::vendor::is_vendor_definition(name, real) {
        crate::platform::audit::note_redirected();
        return mine as *mut c_void;
    }
    std::ptr::null_mut()
}

/// Called by the `dlsym` stub: non-null answers the look-up; null lets the C library answer.
///
/// # Safety
/// Called by the stub only, with `dlsym`'s arguments.
#[no_mangle]
pub unsafe extern "C" fn regcheck_dl_sym_pre(handle: *mut c_void, name: *const c_char, caller: usize) -> *mut c_void {
    bootstrap();
    if name.is_null() || !candidate(name) {
        return std::ptr::null_mut();
    }
    std::panic::catch_unwind(|| answer(handle, name, std::ptr::null(), caller)).unwrap_or(std::ptr::null_mut())
}

/// Called by the `dlvsym` stub: as [`regcheck_dl_sym_pre`].
///
/// # Safety
/// Called by the stub only, with `dlvsym`'s arguments.
#[no_mangle]
pub unsafe extern "C" fn regcheck_dl_vsym_pre(
    handle: *mut c_void,
    name: *const c_char,
    version: *const c_char,
    caller: usize,
) -> *mut c_void {
    bootstrap();
    if name.is_null() || version.is_null() || !candidate(name) {
        return std::ptr::null_mut();
    }
    std::panic::catch_unwind(|| answer(handle, name, version, caller)).unwrap_or(std::ptr::null_mut())
}

/// Called by the `dlopen` stub before the C library's `dlopen` runs: null lets it run (with
/// the caller's return address); non-null is the handle of a library regcheck opened itself.
///
/// That is done for one case only: a library opened with `RTLD_DEEPBIND` by its path (a `/`
/// and no `$`, so that neither the caller's `RUNPATH` nor its `$ORIGIN` matters), whose own
/// bindings would skip the global scope. Once it is loaded, its bindings of the names
/// regcheck interposes are pointed at regcheck ([`crate::platform::dynsym::rebind`]), before
/// it runs a call. A failed open answers null: the stub then lets the C library fail it again,
/// so `dlerror()` says what it says.
///
/// # Safety
/// Called by the stub only, with `dlopen`'s arguments.
#[no_mangle]
pub unsafe extern "C" fn regcheck_dl_open_pre(file: *const c_char, mode: c_int, caller: usize) -> *mut c_void {
    let own = bootstrap();
    if file.is_null() || own.syms.is_some_and(|s| s.holds(caller)) {
        return std::ptr::null_mut();
    }
    std::panic::catch_unwind(|| {
        let file = CStr::from_ptr(file);
        crate::vendor::note_dlopen(file, caller);
        let by_path = file.to_bytes().contains(&b'/') && !file.to_bytes().contains(&b'$');
        // (Under the audit module, its own redirections cover the library's bindings.)
        if mode & libc::RTLD_DEEPBIND == 0
            || !by_path
            || crate::platform::audit::tracking().audited
            || !crate::platform::dynsym::interposes()
        {
            crate::platform::audit::note_dlopen(file, mode);
            return std::ptr::null_mut();
        }
        let open: unsafe extern "C" fn(*const c_char, c_int) -> *mut c_void =
            std::mem::transmute(regcheck_dl_next[2].load(Ordering::Acquire));
        let h = open(file.as_ptr(), mode);
        if h.is_null() {
            return h;
        }
        if !rebind_deepbound(h) {
            crate::platform::audit::note_dlopen(file, mode);
        }
        h
    })
    .unwrap_or(std::ptr::null_mut())
}

/// Points the bindings of the library behind `h` (just opened with `RTLD_DEEPBIND`) of the
/// names regcheck interposes at regcheck. False when it cannot be done.
unsafe fn rebind_deepbound(h: *mut c_void) -> bool {
    let Some(own) = bootstrap().syms else { return false };
    let mut map: *mut libc::c_void = std::ptr::null_mut();
    if libc::dlinfo(h, libc::RTLD_DI_LINKMAP, &mut map as *mut _ as *mut c_void) != 0 || map.is_null() {
        return false;
    }
    // `struct link_map` starts with `l_addr`, the load bias.
    let base = *(map as *const usize);
    crate::platform::dynsym::rebind(base, |name| {
        // SAFETY: names from the library's string table; regcheck's own object is mapped.
        if !candidate(name.as_ptr()) {
            return None;
        }
        let mine = own.function(name.to_bytes())?;
        crate::platform::audit::note_redirected();
        Some(mine)
    });
    true
}

#[cfg(test)]
mod tests {
    use super::candidate;

    #[test]
    fn only_the_interposed_names_are_candidates() {
        for name in [c"aclrtHostRegisterV2", c"aclFinalize", c"HixlCSClientRegMem", c"_ZN4hixl4Hixl11RegisterMemEv"] {
            // SAFETY: NUL-terminated names.
            assert!(unsafe { candidate(name.as_ptr()) }, "{name:?}");
        }
        for name in [c"malloc", c"", c"ac", c"dlsym", c"_ZN4hixl5Other", c"HixlC", c"Hixl", c"ha"] {
            // SAFETY: NUL-terminated names (a prefix never reads past the NUL).
            assert!(!unsafe { candidate(name.as_ptr()) }, "{name:?}");
        }
    }

    /// Every vendor name the export list gives (link/regcheck.map) is one regcheck's `dlsym`
    /// looks at: a name exported but not a candidate would reach the vendor past regcheck when
    /// looked up by name (seen failing: the HCCL, driver and LLM-DataDist names were not).
    #[test]
    fn every_exported_vendor_name_is_a_candidate() {
        let map = include_str!("../../link/regcheck.map");
        let global = &map[map.find("global:").expect("global:")..map.find("local:").expect("local:")];
        let mut seen = 0;
        for line in global.lines().map(str::trim).filter(|l| l.ends_with(';')) {
            let name = line.trim_end_matches(';').trim_end_matches('*');
            if name.starts_with("regcheck_") || name.starts_with("dl") {
                continue;
            }
            let c = std::ffi::CString::new(format!("{name}X")).unwrap();
            // SAFETY: a NUL-terminated name.
            assert!(unsafe { candidate(c.as_ptr()) }, "{name} is exported but regcheck's dlsym never looks at it");
            seen += 1;
        }
        assert!(seen > 20, "{seen} names read from the export list");
    }
}
