//! Finding the real vendor functions.
//!
//! Order, per symbol (the first that yields a function that is not regcheck's own wins):
//! 1. `dlsym(RTLD_NEXT, name)`: the next definition after regcheck in the global scope;
//! 2. an already loaded vendor library, opened with `RTLD_NOLOAD` (this also covers a vendor
//!    loaded `RTLD_LOCAL` by `dlopen` or Python's ctypes, which `RTLD_NEXT` cannot see);
//! 3. the path in `REGCHECK_ACL_LIB` / `REGCHECK_HIXL_LIB` / `REGCHECK_ADXL_LIB`;
//! 4. the vendor's install roots (the vendor's documented interface).
//!
//! In a secure-execution process (set-user-ID, set-group-ID) steps 3 and 4 use no variable of
//! the caller's environment: no `REGCHECK_*_LIB`, only the fixed system roots.
//!
//! A found function is cached for the life of the process. A miss is logged with every place
//! tried, once per symbol, and remembered only until the next library is loaded (the vendor
//! may be `dlopen`ed later, as ctypes does): meanwhile a call costs no new search.

use std::ffi::{c_void, CStr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use libloading::os::unix::Library as DynLib;

use crate::platform::secure::path_var;

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
    /// ADXL (`adxl::AdxlEngine`) and LLM-DataDist (`llm_datadist::LlmDataDist`): `libllm_datadist.so`.
    Adxl,
    /// HCCL's global-memory registration (`HcclRegisterGlobalMem`): `libhcomm.so`.
    Hccl,
}

impl Library {
    /// The file names the library goes by, preferred first.
    pub fn file_names(self) -> &'static [&'static str] {
        match self {
            Library::Acl => &["libacl_rt.so", "libascendcl.so"],
            Library::Hixl => &["libcann_hixl.so"],
            Library::Adxl => &["libllm_datadist.so"],
            Library::Hccl => &["libhcomm.so"],
        }
    }

    fn env_var(self) -> &'static str {
        match self {
            Library::Acl => "REGCHECK_ACL_LIB",
            Library::Hixl => "REGCHECK_HIXL_LIB",
            Library::Adxl => "REGCHECK_ADXL_LIB",
            Library::Hccl => "REGCHECK_HCCL_LIB",
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
    /// A function regcheck calls for itself (a probe of the environment), never on the
    /// application's behalf: its absence is not the application's problem, and is said at
    /// debug level by the symbol (the probe's caller says what follows from it).
    probe: bool,
}

/// How many objects the dynamic linker has loaded so far (`dlpi_adds`); changes when a library
/// is `dlopen`ed. No system call: a walk that stops at the first object.
fn loads() -> u64 {
    crate::platform::objects::generation().0
}

impl Symbol {
    pub const fn new(lib: Library, name: &'static CStr) -> Symbol {
        Symbol {
            lib,
            name,
            addr: AtomicUsize::new(0),
            miss_logged: AtomicBool::new(false),
            missed_at: AtomicU64::new(0),
            probe: false,
        }
    }

    /// A function regcheck calls only for itself, to learn about the environment (the SoC, the
    /// driver version, the thread's context): when the vendor lacks it, nothing the
    /// application called fails, so the miss is a debug line, not an error.
    pub const fn probe(lib: Library, name: &'static CStr) -> Symbol {
        let mut s = Symbol::new(lib, name);
        s.probe = true;
        s
    }

    pub fn name(&self) -> &'static str {
        self.name.to_str().unwrap_or("?")
    }

    /// The real function's address, or `None` when no vendor library defines it. Once found,
    /// one atomic load (inlined into every forwarding call).
    #[inline]
    pub fn get(&self) -> Option<*mut c_void> {
        let cached = self.addr.load(Ordering::Acquire);
        if cached != 0 {
            return Some(cached as *mut c_void);
        }
        self.resolve_now()
    }

    /// The first look-up, and every look-up while the vendor's function is missing.
    #[cold]
    #[inline(never)]
    fn resolve_now(&self) -> Option<*mut c_void> {
        let now = loads().wrapping_add(1);
        if self.missed_at.load(Ordering::Relaxed) == now {
            return None;
        }
        match resolve(self.lib, self.name) {
            Ok(p) => {
                note_resolved(p);
                self.addr.store(p as usize, Ordering::Release);
                Some(p)
            }
            Err(missing) => {
                self.missed_at.store(now, Ordering::Relaxed);
                if self.probe {
                    log::debug!(target: "regcheck", "{missing}; regcheck goes on without what it would have told");
                } else if !self.miss_logged.swap(true, Ordering::Relaxed) {
                    log::error!(
                        target: "regcheck",
                        "{missing}; the call returns ACL_ERROR_API_NOT_SUPPORT (200001). {}",
                        if crate::platform::secure::secure_execution() {
                            "In this secure-execution (set-user-ID) process only the fixed system roots are searched: install the vendor library there, or link the program with it".to_string()
                        } else {
                            format!("Set {} to the vendor library's path", self.lib.env_var())
                        }
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
    #[inline]
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

/// How many of the vendor's objects regcheck can remember by identity; more are not expected
/// (the ACL runtime, its implementation library, HIXL).
const RESOLVED_MAX: usize = 16;

/// One function address in each object regcheck resolved a vendor function in (told apart by
/// `dladdr`'s load base): what regcheck knows as the vendor, by identity. Slots are claimed
/// (`CLAIMED`), written, then published in order (`READY`); nothing is ever removed (a vendor
/// library stays loaded: regcheck keeps its handle).
static RESOLVED: [(AtomicUsize, AtomicUsize); RESOLVED_MAX] =
    [const { (AtomicUsize::new(0), AtomicUsize::new(0)) }; RESOLVED_MAX];
static CLAIMED: AtomicUsize = AtomicUsize::new(0);
static READY: AtomicUsize = AtomicUsize::new(0);

/// Remember the object that defines `p`, a vendor function regcheck found (a loader call:
/// never under a regcheck lock).
fn note_resolved(p: *mut c_void) {
    let Some(base) = object_base(p) else { return };
    if (0..READY.load(Ordering::Acquire)).any(|i| RESOLVED[i].0.load(Ordering::Relaxed) == base) {
        return;
    }
    let i = CLAIMED.fetch_add(1, Ordering::AcqRel);
    if i >= RESOLVED_MAX {
        return;
    }
    RESOLVED[i].0.store(base, Ordering::Relaxed);
    RESOLVED[i].1.store(p as usize, Ordering::Relaxed);
    // Publish in slot order (threads that claimed earlier slots finish first; this is rare
    // and short: a vendor object is found a handful of times per process).
    while READY.compare_exchange_weak(i, i + 1, Ordering::AcqRel, Ordering::Relaxed).is_err() {
        std::hint::spin_loop();
    }
}

/// How many vendor objects regcheck has resolved functions in so far, plus how many files
/// they opened (grows; a cache of [`is_vendor_object`]'s answers is good while it stays the
/// same).
pub fn resolved_objects() -> usize {
    READY.load(Ordering::Acquire) + VENDOR_OPENED.count()
}

/// A quiet look for the vendor's ACL runtime among the objects loaded already (the global
/// scope after regcheck, then the ACL file names, `RTLD_NOLOAD`), as resolution's first two
/// steps would find it: so that a call the vendor makes before regcheck forwarded any is
/// still told. Loads nothing, logs nothing. Once per process, unless nothing was found (then
/// again when objects came or went).
fn probe_loaded() {
    static PROBED_AT: AtomicU64 = AtomicU64::new(0);
    let now = loads().wrapping_add(1);
    if READY.load(Ordering::Acquire) > 0 || PROBED_AT.swap(now, Ordering::Relaxed) == now {
        return;
    }
    for (lib, name) in [(Library::Acl, c"aclrtMallocHost"), (Library::Hixl, c"HixlCSClientCreate")] {
        if let Some(p) = dlsym_in(libc::RTLD_NEXT, name) {
            note_resolved(p);
            continue;
        }
        for file in lib.file_names() {
            // SAFETY: RTLD_NOLOAD opens nothing new; the handle is closed again (the library
            // stays loaded by whoever loaded it).
            if let Ok(h) = unsafe { DynLib::open(Some(file), libc::RTLD_NOLOAD | libc::RTLD_LAZY) } {
                if let Ok(p) = symbol_in(&h, name) {
                    note_resolved(p);
                }
            }
        }
    }
}

/// Whether the object at `index` of `table` is one of the vendor's, by identity: an object
/// regcheck resolved a vendor function in, what those objects load (their `DT_NEEDED`
/// dependencies, transitively, as the loader matched them), and what they `dlopen`
/// ([`note_dlopen`]). Never by file name, nor by directory: an application's library
/// installed beside the vendor's (a wheel's bundled libraries, a container's `lib/`) is the
/// application's. The system's libraries (the C library's directory) are never the vendor's,
/// nor is the executable unless regcheck resolved a vendor function in it. Calls the loader (a
/// quiet probe, see [`probe_loaded`]): never under a regcheck lock.
pub fn is_vendor_object(table: &crate::platform::objects::Table, index: usize) -> bool {
    probe_loaded();
    let ready = READY.load(Ordering::Acquire).min(RESOLVED_MAX);
    let resolved: Vec<usize> =
        (0..ready).filter_map(|i| table.index_of(RESOLVED[i].1.load(Ordering::Relaxed))).collect();
    if resolved.contains(&index) {
        return true;
    }
    let Some(object) = table.objects.get(index).filter(|_| index != 0) else { return false };
    let system = table.object_of(libc::free as *const () as usize).and_then(|o| o.dir.as_ref());
    if object.dir.is_some() && object.dir.as_ref() == system {
        return false;
    }
    vendor_bases(table, &resolved).contains(&object.base)
}

/// The load bases of the vendor's objects: those at `resolved` in `table`, what they need and
/// what they opened, transitively. Cached while the table, the resolved objects and the vendor's
/// opens stay the same (the cache's lock is never held across a loader call).
fn vendor_bases(table: &crate::platform::objects::Table, resolved: &[usize]) -> std::sync::Arc<Vec<usize>> {
    type Key = ((u64, u64), usize, usize);
    static CACHE: std::sync::Mutex<Option<(Key, std::sync::Arc<Vec<usize>>)>> = std::sync::Mutex::new(None);
    let key = (table.generation(), resolved.len(), VENDOR_OPENED.count());
    if let Some((k, v)) = CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner).as_ref() {
        if *k == key {
            return v.clone();
        }
    }
    let mut bases: Vec<usize> = resolved.iter().map(|&i| table.objects[i].base).collect();
    for i in 0..VENDOR_OPENED.count() {
        if let Some(b) = VENDOR_OPENED.get(i).and_then(loaded_base) {
            if !bases.contains(&b) {
                bases.push(b);
            }
        }
    }
    let mut queue = bases.clone();
    while let Some(b) = queue.pop() {
        let mut needed = Vec::new();
        crate::platform::dynsym::each_object(|o| {
            if o.base == b {
                // SAFETY: the object is mapped during the walk; the names are copied.
                unsafe { o.needed(|n| needed.push(n.to_owned())) };
            }
            o.base == b
        });
        for n in needed {
            if let Some(nb) = loaded_base(&n) {
                if !bases.contains(&nb) {
                    bases.push(nb);
                    queue.push(nb);
                }
            }
        }
    }
    let v = std::sync::Arc::new(bases);
    *CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some((key, v.clone()));
    v
}

/// The function `name` defined by the object that holds `root` (a vendor function regcheck
/// resolved) or by what it needs (its `DT_NEEDED` dependencies, transitively, breadth first as
/// the loader's `dlsym` on its handle searches), then by what the vendor's objects `dlopen`ed
/// ([`note_dlopen`]): found by identity, never by file name nor directory, never regcheck's own
/// definition. Reads the objects' symbol tables (no `dlsym`). A loader call: never under a
/// regcheck lock.
pub fn function_beside(root: *mut c_void, name: &[u8]) -> Option<usize> {
    let table = crate::platform::objects::current();
    let mut queue = vec![table.object_of(root as usize)?.base];
    for i in 0..VENDOR_OPENED.count() {
        if let Some(b) = VENDOR_OPENED.get(i).and_then(loaded_base) {
            queue.push(b);
        }
    }
    let own = table.object_of(function_beside as *const () as usize).map(|o| o.base);
    let mut seen: Vec<usize> = Vec::new();
    // The dependencies first (breadth first from `root`), the opened files after them.
    let opened = queue.split_off(1);
    let mut next = 0;
    loop {
        if next == queue.len() {
            match opened.iter().find(|b| !seen.contains(b) && !queue.contains(b)) {
                Some(&b) => queue.push(b),
                None => return None,
            }
        }
        let b = queue[next];
        next += 1;
        if seen.contains(&b) {
            continue;
        }
        seen.push(b);
        let (mut found, mut needed) = (None, Vec::new());
        crate::platform::dynsym::each_object(|o| {
            if o.base != b {
                return false;
            }
            // SAFETY: the object is mapped during the walk; the names are copied.
            unsafe {
                if Some(b) != own {
                    found = o.function(name);
                }
                o.needed(|n| needed.push(n.to_owned()));
            }
            true
        });
        if found.is_some() {
            return found;
        }
        queue.extend(needed.iter().filter_map(|n| loaded_base(n)).filter(|nb| !seen.contains(nb)));
    }
}

/// The load base of the loaded object the loader knows as `name` (a file name, or a path), as
/// it matches a `DT_NEEDED` entry or a `dlopen`: opens nothing new.
fn loaded_base(name: &CStr) -> Option<usize> {
    // SAFETY: RTLD_NOLOAD opens nothing new; the handle is closed again.
    let h = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
    if h.is_null() {
        return None;
    }
    let mut map: *mut c_void = std::ptr::null_mut();
    // SAFETY: a valid handle; `struct link_map` starts with `l_addr`, the load bias.
    let base = unsafe {
        (libc::dlinfo(h, libc::RTLD_DI_LINKMAP, &mut map as *mut _ as *mut c_void) == 0 && !map.is_null())
            .then(|| *(map as *const usize))
    };
    // SAFETY: the handle was opened above.
    unsafe { libc::dlclose(h) };
    base
}

fn dlsym_in(handle: *mut c_void, name: &CStr) -> Option<*mut c_void> {
    // SAFETY: handle is RTLD_NEXT or a handle from dlopen; name is NUL-terminated.
    let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
    (!p.is_null() && !is_ours(p)).then_some(p)
}

/// `name` in an opened library, not regcheck's own definition.
fn symbol_in(lib: &DynLib, name: &CStr) -> Result<*mut c_void, libloading::Error> {
    // SAFETY: the symbol is only read as an address here; the caller types it.
    let p = unsafe { lib.get::<*mut c_void>(name.to_bytes_with_nul()) }?.into_raw();
    if p.is_null() || is_ours(p) {
        return Err(libloading::Error::DlSymUnknown);
    }
    Ok(p)
}

/// `name` in the library at `path`, opened `RTLD_NOW | RTLD_LOCAL` and kept loaded for the
/// life of the process, found or not: a cached pointer must stay valid, and closing it would
/// run its finalisers, and its initialisers again at the next look-up.
fn symbol_at(path: &std::path::Path, name: &CStr) -> Result<*mut c_void, libloading::Error> {
    // SAFETY: the vendor's library (named by the user or in the vendor's install root);
    // loading it runs its initialisers, as linking it would.
    let lib = unsafe { DynLib::open(Some(path), libc::RTLD_NOW | libc::RTLD_LOCAL) }?;
    let found = symbol_in(&lib, name);
    let _ = lib.into_raw();
    found
}

/// One place regcheck looked for a vendor function, and why it was not there.
#[derive(Debug, thiserror::Error)]
pub enum Attempt {
    /// The global scope after regcheck had no definition.
    #[error("dlsym(RTLD_NEXT)")]
    Next,
    /// No loaded library of this name defines it (or none is loaded).
    #[error("loaded {0}")]
    Loaded(&'static str),
    /// The library named by a variable could not be opened or lacks the function.
    #[error("{var}={}: {source}", path.display())]
    Named {
        var: &'static str,
        path: PathBuf,
        #[source]
        source: libloading::Error,
    },
    /// One of the vendor's install roots: no library there defines it.
    #[error("{}/{{lib64,<arch>-linux/lib64,<arch>-linux/devlib}}", .0.display())]
    Root(PathBuf),
}

/// A vendor function no library defines.
#[derive(Debug, thiserror::Error)]
#[error("cannot find the vendor's {symbol} (looked in: {})", join(.tried))]
pub struct NotFound {
    pub symbol: String,
    pub tried: Vec<Attempt>,
}

fn join(tried: &[Attempt]) -> String {
    tried.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

/// The vendor's install roots, in its own search order. In a secure-execution process only
/// the fixed system roots: the others come from the caller's environment.
pub fn install_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    for var in crate::config::VENDOR_ROOT_VARIABLES {
        if let Some(v) = path_var(var) {
            roots.push(PathBuf::from(v));
        }
    }
    if let Some(home) = path_var("HOME") {
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

/// The library a function regcheck interposes belongs to, by its name (`None`: not one of
/// the vendor's names regcheck interposes).
pub fn library_of(name: &[u8]) -> Option<Library> {
    if name.starts_with(b"acl") {
        Some(Library::Acl)
    } else if name.starts_with(b"HixlCS") || name.starts_with(b"_ZN4hixl") {
        Some(Library::Hixl)
    } else if name.starts_with(b"_ZN4adxl") || name.starts_with(b"_ZN12llm_datadist") {
        Some(Library::Adxl)
    } else if name.starts_with(b"Hccl") {
        Some(Library::Hccl)
    } else if name.starts_with(b"hal") {
        // The driver's functions, found through the ACL library's dependencies.
        Some(Library::Acl)
    } else {
        None
    }
}

/// Whether `p` is a function regcheck would forward `name` to, the vendor's library being
/// loaded already (resolution's first two steps: loads nothing, logs nothing, caches
/// nothing). A loader call: never under a regcheck lock.
pub fn is_vendor_definition(name: &CStr, p: *mut c_void) -> bool {
    let Some(lib) = library_of(name.to_bytes()) else { return false };
    if dlsym_in(libc::RTLD_NEXT, name) == Some(p) {
        return true;
    }
    lib.file_names().iter().any(|file| {
        // SAFETY: RTLD_NOLOAD opens nothing new; the handle is closed again (the library stays
        // loaded by whoever loaded it).
        unsafe { DynLib::open(Some(file), libc::RTLD_NOLOAD | libc::RTLD_LAZY) }
            .is_ok_and(|h| symbol_in(&h, name).ok() == Some(p))
    })
}

/// The files the vendor's own objects `dlopen`ed: the vendor's too (see [`is_vendor_object`]).
static VENDOR_OPENED: crate::platform::audit::NameList = crate::platform::audit::NameList::new();

/// A `dlopen` of `file` is about to run, called from `caller`: kept when the caller is one of
/// the vendor's objects (by identity: an object regcheck resolved a vendor function in, or
/// one of their dependencies). A loader call: never under a regcheck lock.
pub fn note_dlopen(file: &CStr, caller: usize) {
    if READY.load(Ordering::Acquire) == 0 {
        return;
    }
    let table = crate::platform::objects::current();
    if table.index_of(caller.saturating_sub(1)).is_some_and(|i| is_vendor_object(&table, i)) {
        VENDOR_OPENED.push(file);
    }
}

fn resolve(lib: Library, name: &CStr) -> Result<*mut c_void, NotFound> {
    let mut tried = Vec::new();
    if let Some(p) = dlsym_in(libc::RTLD_NEXT, name) {
        return Ok(p);
    }
    tried.push(Attempt::Next);
    for file in lib.file_names() {
        // SAFETY: RTLD_NOLOAD opens nothing new: no initialiser runs. The handle is kept when
        // it gives the function (the library then stays loaded), else closed again.
        if let Ok(h) = unsafe { DynLib::open(Some(file), libc::RTLD_NOLOAD | libc::RTLD_LAZY) } {
            if let Ok(p) = symbol_in(&h, name) {
                let _ = h.into_raw();
                return Ok(p);
            }
        }
        tried.push(Attempt::Loaded(file));
    }
    if let Some(path) = path_var(lib.env_var()) {
        let path = PathBuf::from(path);
        match symbol_at(&path, name) {
            Ok(p) => return Ok(p),
            Err(source) => tried.push(Attempt::Named { var: lib.env_var(), path, source }),
        }
    }
    for root in install_roots() {
        for dir in lib_dirs(&root) {
            for file in lib.file_names() {
                let path = dir.join(file);
                if path.exists() {
                    if let Ok(p) = symbol_at(&path, name) {
                        return Ok(p);
                    }
                }
            }
        }
        tried.push(Attempt::Root(root));
    }
    Err(NotFound { symbol: name.to_string_lossy().into_owned(), tried })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_is_found_beside_its_root_through_the_root_s_dependencies() {
        // The test program (regcheck's own object: its definitions are never the answer) needs
        // the C library, where the function is.
        let root = a_function_is_found_beside_its_root_through_the_root_s_dependencies as *mut c_void;
        let found = function_beside(root, b"gnu_get_libc_version").expect("found in a dependency");
        let table = crate::platform::objects::current();
        assert_eq!(
            table.object_of(found).map(|o| o.base),
            table.object_of(libc::malloc as *const () as usize).map(|o| o.base)
        );
        assert_eq!(function_beside(root, b"no_such_function_x"), None);
        assert_eq!(function_beside(std::ptr::null_mut(), b"gnu_get_libc_version"), None, "no object holds NULL");
    }
}
