//! Where in the application a call was made: the first stack frame outside regcheck and the
//! vendor's libraries, as function and, with debug information, `file:line`.
//!
//! Nothing here runs on a clean call. The front end only notes, per intercepted call, an
//! address in its own stack frame ([`call_started`]: two thread-local stores). When a finding
//! is reported, [`capture`] unwinds the stack (the unwind tables, `_Unwind_Backtrace`), drops
//! regcheck's frames (those below the noted address, and any in regcheck's own shared object)
//! and the vendor's frames above them, and keeps the next `n` frames as raw addresses.
//! [`symbolize`] turns them into names and lines (DWARF through the `backtrace` crate, else
//! the dynamic symbol table through `dladdr`) only when a message is written or the C API
//! asks. Every step tolerates missing information: a stripped library gives a function name
//! from its dynamic symbols or just `object+offset`; nothing here panics on bad input.
//!
//! Unwinding and symbolising take the dynamic loader's locks (`dl_iterate_phdr`, `dladdr`)
//! and keep caches: they run under one mutex of regcheck's own, which a `fork()` handler
//! takes first, so that a child never inherits any of those locks held by another thread.

use std::cell::Cell;
use std::ffi::{c_void, CStr};
use std::path::Path;
use std::sync::{Mutex, PoisonError};

/// File-name prefixes of the vendor's libraries (the simulator's and the real packages'):
/// frames in them are skipped until the application's first frame.
pub const VENDOR_LIBRARIES: &[&str] = &[
    "libascendcl.so",
    "libacl_rt.so",
    "libacl_rt_impl.so",
    "libcann_hixl.so",
    "libllm_datadist.so",
    "libhccl.so",
    "libruntime.so",
    "libascend_hal.so",
    "libregcheck.so",
];

/// One frame of the application's stack, symbolised.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Site {
    /// The return address in the frame (the instruction after the call).
    pub address: usize,
    /// The function, demangled (`register_buffers`, `kv::Pool::add`), when known.
    pub function: Option<String>,
    /// The source file (as recorded in the debug information), when known.
    pub file: Option<String>,
    /// The line of the call, when known.
    pub line: Option<u32>,
    /// The object (executable or shared library) the frame is in.
    pub object: Option<String>,
    /// `address` relative to the object's load base.
    pub offset: usize,
}

impl Site {
    /// Sanitizer style: `register_buffers (kv_pool.cpp:118)`, `register_buffers (app+0x1234)`,
    /// `0x5555... (app+0x1234)`.
    pub fn text(&self) -> String {
        let name = self.function.clone().unwrap_or_else(|| format!("0x{:x}", self.address));
        match (&self.file, self.line) {
            (Some(file), Some(line)) => {
                let short = Path::new(file).file_name().map_or(file.as_str(), |f| f.to_str().unwrap_or(file));
                format!("{name} ({short}:{line})")
            }
            _ => {
                let obj =
                    self.object.as_deref().map(|o| Path::new(o).file_name().and_then(|f| f.to_str()).unwrap_or(o));
                format!("{name} ({}+0x{:x})", obj.unwrap_or("?"), self.offset)
            }
        }
    }
}

/// The frames of one captured stack, not yet symbolised (cheap to keep).
#[derive(Clone, Default)]
pub struct Stack {
    frames: Vec<backtrace::Frame>,
    /// Regcheck is linked into the executable: its exported entry points are not told apart
    /// by object, so a leading frame named like one is dropped when symbolising.
    in_executable: bool,
}

impl std::fmt::Debug for Stack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ips: Vec<_> = self.frames.iter().map(|fr| fr.ip()).collect();
        f.debug_struct("Stack").field("frames", &ips).finish()
    }
}

impl Stack {
    /// No frames.
    pub const EMPTY: Stack = Stack { frames: Vec::new(), in_executable: false };

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }
}

thread_local! {
    /// An address in the frame of the intercepted call in progress on this thread (0: none),
    /// a count of the intercepted calls that started on this thread, and whether regcheck's
    /// own code is running on it (one thread-local for the three: a call reaches it once).
    static CALL: (Cell<usize>, Cell<u64>, Cell<bool>) = const { (Cell::new(0), Cell::new(0), Cell::new(false)) };
}

/// Called by the front end as an intercepted call starts; `frame` is the address of a local
/// of the function that runs the call. Every frame the unwinder finds at or below it is
/// regcheck's.
#[inline]
pub fn call_started(frame: usize) {
    let _ = CALL.try_with(|(f, n, _)| {
        f.set(frame);
        n.set(n.get().wrapping_add(1));
    });
}

/// Mark the thread as running regcheck's own code (or not).
#[inline]
pub fn set_busy(busy: bool) {
    let _ = CALL.try_with(|(_, _, b)| b.set(busy));
}

/// Whether regcheck's own code is running on this thread (a thread whose thread-locals are
/// gone counts as busy).
#[inline]
pub fn busy() -> bool {
    CALL.try_with(|(_, _, b)| b.get()).unwrap_or(true)
}

/// How many intercepted calls started on this thread (changes with every ACL or HIXL call
/// regcheck sees).
pub fn calls_on_thread() -> u64 {
    CALL.try_with(|(_, n, _)| n.get()).unwrap_or(0)
}

/// Serialises every unwind and symbolisation (and so the `backtrace` crate's caches).
static LOCK: Mutex<()> = Mutex::new(());

crate::platform::atfork::hold_across_fork!(static HANDLERS = LOCK, ());

/// Register the `fork()` handlers that keep [`LOCK`] usable in a child (once; see
/// [`crate::platform::atfork`]).
pub fn install_fork_handlers() {
    HANDLERS.ensure();
}

/// Run `f` holding [`LOCK`]; the handlers are in place first.
fn locked<R>(f: impl FnOnce() -> R) -> R {
    HANDLERS.ensure();
    let _guard = LOCK.lock().unwrap_or_else(PoisonError::into_inner);
    f()
}

struct Object {
    base: usize,
    name: Option<String>,
}

fn object_of(addr: usize) -> Option<Object> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables; `info` is a valid out-pointer.
    if unsafe { libc::dladdr(addr as *const c_void, &mut info) } == 0 {
        return None;
    }
    let name = (!info.dli_fname.is_null())
        // SAFETY: the loader's NUL-terminated file name.
        .then(|| unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty());
    Some(Object { base: info.dli_fbase as usize, name })
}

fn dladdr_symbol(addr: usize) -> Option<String> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: as in `object_of`.
    if unsafe { libc::dladdr(addr as *const c_void, &mut info) } == 0 || info.dli_sname.is_null() {
        return None;
    }
    // SAFETY: the loader's NUL-terminated symbol name.
    let raw = unsafe { CStr::from_ptr(info.dli_sname) }.to_string_lossy().into_owned();
    Some(format!("{:#}", backtrace::SymbolName::new(raw.as_bytes())))
}

/// The load bases of regcheck's own object and of the executable (equal when regcheck is
/// linked statically). Computed once.
fn bases() -> (usize, usize) {
    static BASES: std::sync::OnceLock<(usize, usize)> = std::sync::OnceLock::new();
    *BASES.get_or_init(|| {
        let own = object_of(bases as *const () as usize).map_or(0, |o| o.base);
        // SAFETY: getauxval has no preconditions; AT_PHDR is the executable's program headers.
        let phdr = unsafe { libc::getauxval(libc::AT_PHDR) } as usize;
        let exe = if phdr != 0 { object_of(phdr).map_or(0, |o| o.base) } else { 0 };
        (own, exe)
    })
}

/// regcheck's own load base, and whether that object is the executable (static linking).
fn own_object() -> (usize, bool) {
    let (own, exe) = bases();
    (own, own != 0 && own == exe)
}

/// Whether `name` (a path) is one of the vendor's libraries.
pub fn is_vendor_object(name: &str) -> bool {
    let file = Path::new(name).file_name().and_then(|f| f.to_str()).unwrap_or(name);
    VENDOR_LIBRARIES.iter().any(|v| file.starts_with(v))
}

/// Unwind the calling thread and keep `n` frames of the application, starting with the first
/// frame outside regcheck and the vendor libraries. Empty when `n == 0` or nothing is found.
pub fn capture(n: usize) -> Stack {
    if n == 0 {
        return Stack::default();
    }
    locked(|| capture_locked(n))
}

fn capture_locked(n: usize) -> Stack {
    let marker = CALL.try_with(|(f, _, _)| f.get()).unwrap_or(0);
    let (own_base, in_executable) = own_object();
    let mut frames = Vec::new();
    let mut past_marker = marker == 0;
    let mut in_app = false;
    let mut seen = 0;
    // In the static case regcheck's frames are told apart by name when symbolising: keep
    // enough to drop them (an entry point, a vendor call back into regcheck) and still have n.
    let want = if in_executable { n + 16 } else { n };
    // SAFETY: every use of the crate's unsynchronised functions is under LOCK.
    unsafe {
        backtrace::trace_unsynchronized(|frame| {
            seen += 1;
            if seen > 512 {
                return false;
            }
            if !past_marker {
                let sp = frame.sp() as usize;
                if sp == 0 {
                    // The unwinder gives no frame addresses: rely on the objects alone.
                    past_marker = true;
                } else {
                    // Frames below the marker are regcheck's. The one holding it (regcheck's
                    // entry point, or the application's frame when the entry point was
                    // inlined or tail-called, depending on what the unwinder calls a frame's
                    // stack pointer) goes through the object and name tests below.
                    past_marker = sp > marker;
                    if !past_marker {
                        return true;
                    }
                }
            }
            let ip = frame.ip() as usize;
            if ip == 0 {
                return true;
            }
            if !in_app {
                let obj = object_of(ip.saturating_sub(1));
                let ours = !in_executable && obj.as_ref().is_some_and(|o| o.base == own_base);
                let vendor = obj.as_ref().and_then(|o| o.name.as_deref()).is_some_and(is_vendor_object);
                if ours || vendor {
                    return true;
                }
                in_app = true;
            }
            frames.push(frame.clone());
            frames.len() < want
        })
    };
    Stack { frames, in_executable }
}

/// The file of the object that made the intercepted call in progress on this thread: the
/// first frame outside regcheck (`None` when the unwinder cannot tell). Unwinds the stack:
/// only for a call that has a finding.
pub fn caller_object() -> Option<String> {
    locked(caller_object_locked)
}

/// Whether the intercepted call in progress was made by one of the vendor's libraries
/// (`libcann_hixl.so` calling `aclrtHostRegister`, say): such a call is the vendor's, not the
/// application's.
pub fn call_from_vendor() -> bool {
    caller_object().is_some_and(|o| is_vendor_object(&o) && !is_regcheck_object(&o))
}

fn is_regcheck_object(name: &str) -> bool {
    Path::new(name).file_name().and_then(|f| f.to_str()).is_some_and(|f| f.starts_with("libregcheck"))
}

fn caller_object_locked() -> Option<String> {
    let marker = CALL.try_with(|(f, _, _)| f.get()).unwrap_or(0);
    let (own_base, in_executable) = own_object();
    let mut past_marker = marker == 0;
    let mut seen = 0;
    let mut caller = None;
    // SAFETY: every use of the crate's unsynchronised functions is under LOCK.
    unsafe {
        backtrace::trace_unsynchronized(|frame| {
            seen += 1;
            if seen > 64 {
                return false;
            }
            if !past_marker {
                let sp = frame.sp() as usize;
                past_marker = sp == 0 || sp > marker;
                if !past_marker {
                    return true;
                }
            }
            let ip = frame.ip() as usize;
            if ip == 0 {
                return true;
            }
            let Some(obj) = object_of(ip.saturating_sub(1)) else { return false };
            // regcheck's own frames: by object, or by name when it is linked into the
            // executable (whose own frames are the application's).
            if obj.base == own_base && (!in_executable || is_regcheck_frame(&site_of(frame))) {
                return true;
            }
            caller = obj.name;
            false
        })
    };
    caller
}

/// A frame of regcheck itself, by name: its exported vendor-named entry points and its Rust
/// code (only asked when regcheck is linked into the executable).
fn is_regcheck_frame(site: &Site) -> bool {
    let Some(name) = site.function.as_deref() else { return false };
    let name = name.trim_start_matches('<');
    name.starts_with("acl")
        || name.starts_with("HixlCS")
        || name.starts_with("hixl::Hixl::")
        || name.starts_with("adxl::AdxlEngine::")
        || ["regcheck::", "core::", "std::", "alloc::", "backtrace::"].iter().any(|p| name.starts_with(p))
}

/// Names and lines of the frames of `stack` (at most `n`).
pub fn symbolize(stack: &Stack, n: usize) -> Vec<Site> {
    if stack.frames.is_empty() {
        return Vec::new();
    }
    let mut sites: Vec<Site> = locked(|| stack.frames.iter().map(site_of).collect());
    if stack.in_executable {
        let ours = sites
            .iter()
            .take_while(|s| is_regcheck_frame(s) || s.object.as_deref().is_some_and(is_vendor_object))
            .count();
        sites.drain(..ours);
    }
    sites.truncate(n);
    sites
}

fn site_of(frame: &backtrace::Frame) -> Site {
    let address = frame.ip() as usize;
    let obj = object_of(address.saturating_sub(1));
    // The loader names the executable as it was started (`./app`): give its full path.
    let is_exe = obj.as_ref().is_some_and(|o| o.base == bases().1);
    let name = obj.as_ref().and_then(|o| o.name.clone()).filter(|n| !is_exe || n.starts_with('/'));
    let mut site = Site {
        address,
        object: name.or_else(|| std::env::current_exe().ok().map(|p| p.display().to_string())),
        offset: address.wrapping_sub(obj.as_ref().map_or(0, |o| o.base)),
        ..Site::default()
    };
    // The first symbol is the innermost (inlined) function: the one that made the call.
    // SAFETY: called under LOCK (from `symbolize`).
    unsafe {
        backtrace::resolve_frame_unsynchronized(frame, |sym| {
            if site.function.is_none() {
                // `{:#}`: demangled without Rust's hashes and crate disambiguators.
                site.function = sym.name().map(|n| format!("{n:#}")).filter(|n| !n.is_empty());
            }
            if site.file.is_none() {
                if let (Some(file), Some(line)) = (sym.filename(), sym.lineno()) {
                    site.file = Some(file.display().to_string());
                    site.line = Some(line);
                }
            }
        })
    };
    if site.function.is_none() {
        site.function = dladdr_symbol(address.saturating_sub(1));
    }
    site
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_text_is_sanitizer_style() {
        let s = Site {
            address: 0x1234,
            function: Some("register_buffers".into()),
            file: Some("/src/kv/kv_pool.cpp".into()),
            line: Some(118),
            object: Some("/opt/app/server".into()),
            offset: 0x234,
        };
        assert_eq!(s.text(), "register_buffers (kv_pool.cpp:118)");
        let s = Site { file: None, line: None, ..s };
        assert_eq!(s.text(), "register_buffers (server+0x234)");
        let s = Site { function: None, object: None, ..s };
        assert_eq!(s.text(), "0x1234 (?+0x234)");
    }

    #[test]
    fn vendor_objects() {
        assert!(is_vendor_object("/usr/local/Ascend/cann/lib64/libascendcl.so"));
        assert!(is_vendor_object("libcann_hixl.so.1"));
        assert!(is_vendor_object("/x/libacl_rt_impl.so"));
        assert!(!is_vendor_object("/usr/lib/libc.so.6"));
        assert!(!is_vendor_object("/opt/app/libmy_acl_rt.so"));
    }

    #[test]
    fn in_the_executable_regcheck_frames_are_told_apart_by_name() {
        // This test program holds regcheck, as a program linked with libregcheck.a does, and
        // no marker is set: the frames of regcheck and of Rust's runtime lead the stack and
        // are dropped by name, leaving the test harness's.
        call_started(0);
        let stack = capture(3);
        assert!(stack.in_executable);
        let sites = symbolize(&stack, 3);
        assert!(!sites.is_empty() && sites.len() <= 3, "{sites:?}");
        assert!(sites.iter().all(|s| s.address != 0 && !is_regcheck_frame(s)), "{sites:?}");
        assert!(capture(0).is_empty());
    }

    #[test]
    fn regcheck_frames_by_name() {
        let named = |f: &str| Site { function: Some(f.into()), ..Site::default() };
        assert!(is_regcheck_frame(&named("aclrtHostRegisterV2")));
        assert!(is_regcheck_frame(&named("hixl::Hixl::RegisterMem(hixl::MemDesc const&, hixl::MemType, void*&)")));
        assert!(is_regcheck_frame(&named(
            "adxl::AdxlEngine::RegisterMem(adxl::MemDesc const&, adxl::MemType, void*&)"
        )));
        assert!(is_regcheck_frame(&named("regcheck::frontend::run")));
        assert!(is_regcheck_frame(&named("<regcheck::x as core::ops::FnOnce>::call_once")));
        assert!(!is_regcheck_frame(&named("register_buffers")));
        assert!(!is_regcheck_frame(&Site::default()));
    }
}
