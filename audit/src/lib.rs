//! `libregcheck_audit.so`: an rtld-audit module (`LD_AUDIT`) that points the bindings of the
//! interposed vendor functions at `libregcheck.so`, including the bindings that `LD_PRELOAD`
//! cannot reach: `dlsym(handle, name)` on the vendor's own handle (C/C++ adapters, Python
//! `ctypes.CDLL`).
//!
//! How it works (see docs/audit.md):
//!
//! * `la_objopen` classifies each loaded object by file name (see [`names`]): the
//!   `libregcheck.so` of the application's namespace (`LM_ID_BASE`; also any object exporting
//!   `regcheck_version`) is the target; the vendor libraries (`libascendcl.so*`,
//!   `libacl_rt.so*`, `libacl_rt_impl.so*`, `libcann_hixl.so*`) in that namespace are the
//!   only objects whose definitions may be replaced. The class goes into the object's cookie.
//! * `la_symbind64` sees every PLT binding to a vendor library and every `dlsym` that resolves
//!   into one. When the name is a function that `libregcheck.so` exports itself (looked up in
//!   its dynamic symbol table through its `link_map`, with no allocation and no `dlsym`), the
//!   binding gets regcheck's address instead, and `LA_SYMB_NOPLTENTER | LA_SYMB_NOPLTEXIT`, so
//!   the call costs nothing extra once bound. Bindings made by regcheck itself (its look-ups of
//!   the real vendor function) and bindings inside one vendor library group are left alone.
//! * It holds no regcheck state: the checks and the registry live in the one `libregcheck.so`.
//! * What it logs goes where the library's log goes, in the same format (see [`log`]).

mod elf;
mod json;
mod log;
mod names;
mod sys;

use core::ffi::{c_char, c_uint};
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use elf::DynSyms;
use log::Level;
use names::Kind;
use sys::{LinkMap, Sym, LA_FLG_BINDFROM, LA_FLG_BINDTO, LA_SYMB_DLSYM, LM_ID_BASE};

/// The program's start-up loading is over (the first `LA_ACT_CONSISTENT`): an object opened
/// from then on was `dlopen`ed.
static STARTED: AtomicBool = AtomicBool::new(false);

/// The data symbol of `libregcheck.so` that tells it what this module does for it (its
/// `platform::audit`): bit 0, bindings are redirected to it; bit 1, it was opened with the
/// program. Written once, from `la_objopen`, before the library runs any code.
const AUDIT_FLAGS: &[u8] = b"regcheck_audit_flags";
const FLAG_AUDITED: u32 = 1;
const FLAG_AT_START: u32 = 2;

/// The "no libregcheck.so" notice was given.
static WARNED: AtomicBool = AtomicBool::new(false);

/// The redirection target: fields first, then `TARGET_READY` (release); readers check
/// `TARGET_READY` (acquire) first.
static TARGET_READY: AtomicBool = AtomicBool::new(false);
static TARGET_MAP: AtomicUsize = AtomicUsize::new(0);
static T_BASE: AtomicUsize = AtomicUsize::new(0);
static T_SYMTAB: AtomicUsize = AtomicUsize::new(0);
static T_STRTAB: AtomicUsize = AtomicUsize::new(0);
static T_GNU_HASH: AtomicUsize = AtomicUsize::new(0);
static T_HASH: AtomicUsize = AtomicUsize::new(0);
static T_VERSYM: AtomicUsize = AtomicUsize::new(0);

const NOTICE_NO_TARGET: &[u8] =
    b"no libregcheck.so in the application's namespace; nothing redirected (set LD_PRELOAD=.../libregcheck.so)";

/// Runs an audit callback body; a panic (none is expected) never unwinds into ld.so.
fn guard<T: Copy>(fallback: T, f: impl FnOnce() -> T) -> T {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// Tell the target library what this module does for it (see [`AUDIT_FLAGS`]).
///
/// # Safety
/// `s` was read from the target's `link_map`, which is mapped (its writable segment too).
unsafe fn tell_target(s: &DynSyms) {
    if let Some(addr) = s.object(AUDIT_FLAGS) {
        let flags = FLAG_AUDITED | if STARTED.load(Ordering::Relaxed) { 0 } else { FLAG_AT_START };
        // SAFETY: the library defines the symbol as a 4-byte atomic in its writable data, and
        // runs no code before its constructors, which come after this call.
        (*(addr as *const core::sync::atomic::AtomicU32)).store(flags, Ordering::Relaxed);
    }
}

fn set_target(map: *const LinkMap, s: &DynSyms) {
    T_BASE.store(s.base, Ordering::Relaxed);
    T_SYMTAB.store(s.symtab, Ordering::Relaxed);
    T_STRTAB.store(s.strtab, Ordering::Relaxed);
    T_GNU_HASH.store(s.gnu_hash, Ordering::Relaxed);
    T_HASH.store(s.hash, Ordering::Relaxed);
    T_VERSYM.store(s.versym, Ordering::Relaxed);
    TARGET_MAP.store(map as usize, Ordering::Relaxed);
    TARGET_READY.store(true, Ordering::Release);
}

fn target() -> Option<DynSyms> {
    if !TARGET_READY.load(Ordering::Acquire) {
        return None;
    }
    Some(DynSyms {
        base: T_BASE.load(Ordering::Relaxed),
        symtab: T_SYMTAB.load(Ordering::Relaxed),
        strtab: T_STRTAB.load(Ordering::Relaxed),
        gnu_hash: T_GNU_HASH.load(Ordering::Relaxed),
        hash: T_HASH.load(Ordering::Relaxed),
        versym: T_VERSYM.load(Ordering::Relaxed),
    })
}

/// The path of the object behind a cookie (empty when unknown).
fn cookie_path<'a>(cookie: usize) -> &'a [u8] {
    let map = (cookie & !names::KIND_MASK) as *const LinkMap;
    if map.is_null() {
        return b"?";
    }
    // SAFETY: cookies hold the `link_map` ld.so handed to `la_objopen`, which stays valid
    // until `la_objclose`.
    let path = unsafe { elf::c_name((*map).l_name) };
    if path.is_empty() {
        b"(main program)"
    } else {
        path
    }
}

/// Called first by ld.so with its `LAV_CURRENT`; returns the version the module speaks.
///
/// # Safety
/// Called by the dynamic linker only.
#[no_mangle]
pub unsafe extern "C" fn la_version(version: c_uint) -> c_uint {
    guard(0, || {
        // SAFETY: the names are NUL-terminated; (secure_)getenv returns NULL or a C string. In a
        // secure-execution process the caller's variables are ignored, as the library ignores
        // REGCHECK_AUDIT_LOG, REGCHECK_LOG_FORMAT and REGCHECK_LOG_FILE there; REGCHECK_LOG,
        // which it honours there too (it can only quieten or detail messages), is read as it is.
        let settings = log::Settings::read(|name| unsafe { elf::c_name(sys::secure_getenv(name.as_ptr())) })
            .with_filter(unsafe { elf::c_name(sys::getenv(c"REGCHECK_LOG".as_ptr())) });
        log::init(&settings);
        if version < 1 {
            log::Line::new(Level::Warning)
                .push(b"dynamic linker audit interface version 0 is not supported; module not used")
                .emit();
            return 0;
        }
        version.min(sys::LAV_CURRENT)
    })
}

/// Classifies a newly loaded object and asks to see the bindings that matter.
///
/// # Safety
/// Called by the dynamic linker only, with a valid `link_map` and cookie.
#[no_mangle]
pub unsafe extern "C" fn la_objopen(map: *mut LinkMap, lmid: isize, cookie: *mut usize) -> c_uint {
    guard(LA_FLG_BINDFROM, || unsafe { objopen(map, lmid, cookie) })
}

unsafe fn objopen(map: *mut LinkMap, lmid: isize, cookie: *mut usize) -> c_uint {
    if map.is_null() {
        return 0;
    }
    let path = elf::c_name((*map).l_name);
    let mut kind = if lmid == LM_ID_BASE { names::classify(path) } else { Kind::Other };
    if lmid == LM_ID_BASE && kind == Kind::Other {
        if let Some(s) = DynSyms::from_link_map(map) {
            if s.lookup(names::REGCHECK_MARKER).is_some() {
                kind = Kind::Regcheck;
            }
        }
    }
    if kind == Kind::Regcheck && !TARGET_READY.load(Ordering::Acquire) {
        match DynSyms::from_link_map(map) {
            Some(s) => {
                set_target(map, &s);
                tell_target(&s);
                if log::redirections() {
                    log::Line::new(Level::Info).push(b"redirection target ").push(cookie_path(map as usize)).emit();
                }
            }
            None => {
                kind = Kind::Other;
                log::Line::new(Level::Warning).push(b"ignoring ").push(path).push(b": no dynamic symbol table").emit();
            }
        }
    }
    if !cookie.is_null() {
        let m = map as usize;
        *cookie = if m & names::KIND_MASK == 0 { m | kind as usize } else { kind as usize };
    }
    match kind {
        // Regcheck's own look-ups of the vendor functions must reach the vendor.
        Kind::Regcheck => 0,
        Kind::Acl | Kind::Hixl => LA_FLG_BINDFROM | LA_FLG_BINDTO,
        Kind::Other => LA_FLG_BINDFROM,
    }
}

/// Notes the end of the program's start-up loading.
///
/// # Safety
/// Called by the dynamic linker only.
#[no_mangle]
pub unsafe extern "C" fn la_activity(_cookie: *mut usize, flag: c_uint) {
    if flag == sys::LA_ACT_CONSISTENT {
        STARTED.store(true, Ordering::Relaxed);
    }
}

/// Forgets the target when it is unloaded.
///
/// # Safety
/// Called by the dynamic linker only.
#[no_mangle]
pub unsafe extern "C" fn la_objclose(cookie: *mut usize) -> c_uint {
    guard(0, || {
        if cookie.is_null() {
            return 0;
        }
        // SAFETY: ld.so passes the cookie it stored for the object.
        let c = unsafe { *cookie };
        if Kind::from_bits(c) == Kind::Regcheck && c & !names::KIND_MASK == TARGET_MAP.load(Ordering::Relaxed) {
            TARGET_READY.store(false, Ordering::Release);
        }
        0
    })
}

/// A binding (PLT, bind-now, or `dlsym`) is being made: point it at regcheck when regcheck
/// checks this vendor function.
///
/// # Safety
/// Called by the dynamic linker only.
#[cfg(target_pointer_width = "64")]
#[no_mangle]
pub unsafe extern "C" fn la_symbind64(
    sym: *mut Sym,
    _ndx: c_uint,
    refcook: *mut usize,
    defcook: *mut usize,
    flags: *mut c_uint,
    symname: *const c_char,
) -> usize {
    if sym.is_null() {
        return 0;
    }
    let value = (*sym).st_value as usize;
    guard(value, || unsafe { symbind(&*sym, refcook, defcook, flags, symname) })
}

unsafe fn symbind(
    sym: &Sym,
    refcook: *const usize,
    defcook: *const usize,
    flags: *mut c_uint,
    symname: *const c_char,
) -> usize {
    let value = sym.st_value as usize;
    if !flags.is_null() {
        // We never want la_pltenter/la_pltexit (and do not define them).
        *flags |= sys::LA_SYMB_NOPLTENTER | sys::LA_SYMB_NOPLTEXIT;
    }
    let def = if defcook.is_null() { 0 } else { *defcook };
    let ref_ = if refcook.is_null() { 0 } else { *refcook };
    let def_kind = Kind::from_bits(def);
    if !def_kind.is_vendor() {
        return value;
    }
    let ref_kind = Kind::from_bits(ref_);
    // Regcheck's forwarding look-ups, and calls inside one vendor library group (e.g.
    // libacl_rt.so forwarding to libacl_rt_impl.so), go to the vendor.
    if ref_kind == Kind::Regcheck || ref_kind == def_kind {
        return value;
    }
    let Some(t) = target() else {
        if !WARNED.swap(true, Ordering::Relaxed) {
            log::Line::new(Level::Warning).push(NOTICE_NO_TARGET).emit();
        }
        return value;
    };
    if sym.kind() != sys::STT_FUNC {
        return value;
    }
    let name = elf::c_name(symname);
    let Some(addr) = t.function(name) else {
        return value;
    };
    if addr == value {
        return value;
    }
    if log::redirections() {
        let how: &[u8] =
            if !flags.is_null() && *flags & LA_SYMB_DLSYM != 0 { b" (dlsym) from " } else { b" (plt) from " };
        log::Line::new(Level::Info)
            .push(b"redirect ")
            .push(name)
            .push(how)
            .push(names::basename(cookie_path(ref_)))
            .push(b": ")
            .push(names::basename(cookie_path(def)))
            .push(b" -> ")
            .push(names::basename(cookie_path(TARGET_MAP.load(Ordering::Relaxed))))
            .emit();
    }
    addr
}
