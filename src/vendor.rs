//! Finding the real vendor functions.
//!
//! Order, per symbol (the first that yields a function that is not regcheck's own wins):
//! 1. `dlsym(RTLD_NEXT, name)`: the next definition after regcheck in the global scope;
//! 2. an already loaded vendor library, opened with `RTLD_NOLOAD` (this also covers a vendor
//!    loaded `RTLD_LOCAL` by `dlopen` or Python's ctypes, which `RTLD_NEXT` cannot see);
//! 3. the path in `REGCHECK_ACL_LIB` / `REGCHECK_HIXL_LIB`;
//! 4. the vendor's install roots (the vendor's documented interface).
//!
//! A found function is cached for the life of the process. A miss is logged with every place
//! tried, once per symbol, and remembered only until the next library is loaded (the vendor
//! may be `dlopen`ed later, as ctypes does): meanwhile a call costs no new search.

use std::ffi::{c_void, CStr, CString};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Call a vendor function through its [`Symbol`]: `call_vendor!(SYMBOL, FnType, missing; args..)`
/// evaluates to the function's result, or to `missing` when no vendor library defines it
/// (`()` for functions returning nothing).
macro_rules! call_vendor {
    ($sym:expr, $ty:ty, $missing:expr; $($arg:expr),*) => {
        // SAFETY: the symbol is the vendor's function of this exact prototype; the arguments
        // are the caller's own, passed through unchanged.
        match unsafe { $sym.get_fn::<$ty>() } {
            Some(f) => unsafe { f($($arg),*) },
            None => $missing,
        }
    };
}
pub(crate) use call_vendor;

/// Which vendor library a symbol lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    /// The ACL runtime: `libacl_rt.so` (current) or `libascendcl.so` (legacy).
    Acl,
    /// HIXL: `libcann_hixl.so`.
    Hixl,
}

impl Library {
    /// The file names the library goes by, preferred first.
    pub fn file_names(self) -> &'static [&'static str] {
        match self {
            Library::Acl => &["libacl_rt.so", "libascendcl.so"],
            Library::Hixl => &["libcann_hixl.so"],
        }
    }

    fn env_var(self) -> &'static str {
        match self {
            Library::Acl => "REGCHECK_ACL_LIB",
            Library::Hixl => "REGCHECK_HIXL_LIB",
        }
    }
}

/// A vendor function, resolved on first use and cached.
pub struct Symbol {
    lib: Library,
    name: &'static CStr,
    addr: AtomicUsize,
    miss_logged: AtomicBool,
    /// `loads()` when the last look-up missed (+1, so 0 means "no miss yet"): until another
    /// object is loaded, the answer cannot change and the search is not repeated.
    missed_at: AtomicU64,
}

/// How many objects the dynamic linker has loaded so far (`dlpi_adds`); changes when a library
/// is `dlopen`ed. No system call: a walk that stops at the first object.
fn loads() -> u64 {
    unsafe extern "C" fn first(info: *mut libc::dl_phdr_info, _size: usize, out: *mut libc::c_void) -> libc::c_int {
        // SAFETY: the loader passes a valid info; `out` is the u64 below.
        unsafe { *(out as *mut u64) = (*info).dlpi_adds };
        1
    }
    let mut adds: u64 = 0;
    // SAFETY: the callback only reads `info` and writes `adds`.
    unsafe { libc::dl_iterate_phdr(Some(first), (&mut adds as *mut u64).cast()) };
    adds
}

impl Symbol {
    pub const fn new(lib: Library, name: &'static CStr) -> Symbol {
        Symbol {
            lib,
            name,
            addr: AtomicUsize::new(0),
            miss_logged: AtomicBool::new(false),
            missed_at: AtomicU64::new(0),
        }
    }

    pub fn name(&self) -> &'static str {
        self.name.to_str().unwrap_or("?")
    }

    /// The real function's address, or `None` when no vendor library defines it.
    pub fn get(&self) -> Option<*mut c_void> {
        let cached = self.addr.load(Ordering::Acquire);
        if cached != 0 {
            return Some(cached as *mut c_void);
        }
        let now = loads().wrapping_add(1);
        if self.missed_at.load(Ordering::Relaxed) == now {
            return None;
        }
        match resolve(self.lib, self.name) {
            Ok(p) => {
                self.addr.store(p as usize, Ordering::Release);
                Some(p)
            }
            Err(tried) => {
                self.missed_at.store(now, Ordering::Relaxed);
                if !self.miss_logged.swap(true, Ordering::Relaxed) {
                    log::error!(
                        target: "regcheck",
                        "cannot find the vendor's {} (looked in: {}); the call returns ACL_ERROR_API_NOT_SUPPORT (200001). Set {} to the vendor library's path",
                        self.name(),
                        tried.join("; "),
                        self.lib.env_var()
                    );
                } else {
                    log::debug!(target: "regcheck", "still cannot find the vendor's {}", self.name());
                }
                None
            }
        }
    }

    /// The function as a typed pointer.
    ///
    /// # Safety
    /// `F` must be the `extern "C"` function pointer type matching the vendor's prototype.
    pub unsafe fn get_fn<F: Copy>(&self) -> Option<F> {
        debug_assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
        self.get().map(|p| std::mem::transmute_copy::<*mut c_void, F>(&p))
    }
}

/// The load base of the object that defines `addr` (`dladdr`).
fn object_base(addr: *const c_void) -> Option<usize> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables; info is a valid out-pointer.
    let ok = unsafe { libc::dladdr(addr, &mut info) };
    (ok != 0).then_some(info.dli_fbase as usize)
}

/// regcheck's own load base (the executable's when linked statically).
fn own_base() -> Option<usize> {
    static BASE: AtomicUsize = AtomicUsize::new(0);
    let b = BASE.load(Ordering::Relaxed);
    if b != 0 {
        return Some(b);
    }
    let b = object_base(own_base as *const c_void)?;
    BASE.store(b, Ordering::Relaxed);
    Some(b)
}

fn is_ours(p: *mut c_void) -> bool {
    match (object_base(p), own_base()) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

fn dlsym_in(handle: *mut c_void, name: &CStr) -> Option<*mut c_void> {
    // SAFETY: handle is RTLD_NEXT or a handle from dlopen; name is NUL-terminated.
    let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
    (!p.is_null() && !is_ours(p)).then_some(p)
}

fn dlopen(path: &str, flags: libc::c_int) -> Option<*mut c_void> {
    let c = CString::new(path).ok()?;
    // SAFETY: c is NUL-terminated; the handle is kept for the life of the process.
    let h = unsafe { libc::dlopen(c.as_ptr(), flags) };
    (!h.is_null()).then_some(h)
}

/// The vendor's install roots, in its own search order.
pub fn install_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    for var in ["ASCEND_INSTALL_PATH", "ASCEND_HOME_PATH"] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            roots.push(PathBuf::from(v));
        }
    }
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        let home = PathBuf::from(home);
        roots.push(home.join("Ascend/cann"));
        roots.push(home.join("Ascend/ascend-toolkit/latest"));
    }
    for r in ["/usr/local/Ascend/cann", "/usr/local/Ascend/ascend-toolkit/latest", "/opt/Ascend/cann"] {
        roots.push(PathBuf::from(r));
    }
    roots
}

/// Library directories under a root.
pub fn lib_dirs(root: &std::path::Path) -> Vec<PathBuf> {
    let arch = std::env::consts::ARCH;
    vec![root.join("lib64"), root.join(format!("{arch}-linux/lib64")), root.join(format!("{arch}-linux/devlib"))]
}

fn resolve(lib: Library, name: &CStr) -> Result<*mut c_void, Vec<String>> {
    let mut tried = Vec::new();
    if let Some(p) = dlsym_in(libc::RTLD_NEXT, name) {
        return Ok(p);
    }
    tried.push("dlsym(RTLD_NEXT)".to_string());
    for file in lib.file_names() {
        if let Some(h) = dlopen(file, libc::RTLD_NOLOAD | libc::RTLD_LAZY) {
            if let Some(p) = dlsym_in(h, name) {
                return Ok(p);
            }
        }
        tried.push(format!("loaded {file}"));
    }
    if let Ok(path) = std::env::var(lib.env_var()) {
        if !path.is_empty() {
            if let Some(p) = dlopen(&path, libc::RTLD_NOW | libc::RTLD_LOCAL).and_then(|h| dlsym_in(h, name)) {
                return Ok(p);
            }
            tried.push(format!("{}={path}", lib.env_var()));
        }
    }
    for root in install_roots() {
        for dir in lib_dirs(&root) {
            for file in lib.file_names() {
                let path = dir.join(file);
                if path.exists() {
                    if let Some(p) = path
                        .to_str()
                        .and_then(|s| dlopen(s, libc::RTLD_NOW | libc::RTLD_LOCAL))
                        .and_then(|h| dlsym_in(h, name))
                    {
                        return Ok(p);
                    }
                }
            }
        }
        tried.push(format!("{}/{{lib64,<arch>-linux/lib64,<arch>-linux/devlib}}", root.display()));
    }
    Err(tried)
}
