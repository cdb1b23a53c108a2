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
//! Unwinding and symbolising ask the dynamic loader (the unwinder finds each frame's unwind
//! tables through it; `dladdr`, `dl_iterate_phdr`), and glibc runs constructors inside
//! `dlopen` holding its loader lock: none of it runs under a regcheck lock that a thread can
//! wait for. Objects are told by address from [`objects`]' table (built with no lock held);
//! unwinding takes no lock; only the `backtrace` crate's debug-information caches are
//! serialised, by a lock that is only ever tried (see [`symbols_locked`]).

use std::cell::Cell;
use std::ffi::{c_void, CStr};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::platform::objects;

mod late;

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

    /// The first kept frame's address (0 when none): a call site's key.
    pub fn first_ip(&self) -> usize {
        self.frames.first().map_or(0, |f| f.ip() as usize)
    }

    /// The kept frames' addresses.
    pub fn ips(&self) -> impl Iterator<Item = usize> + '_ {
        self.frames.iter().map(|f| f.ip() as usize)
    }
}

/// The calling thread's intercepted call in progress (one thread-local for all of it: a call
/// reaches it once, and each thread-local of a shared library costs a `__tls_get_addr` call).
struct Call {
    /// An address in the frame of the intercepted call in progress on this thread (0: none).
    frame: Cell<usize>,
    /// How many intercepted calls started on this thread.
    count: Cell<u64>,
    /// Whether regcheck's own code is running on it.
    busy: Cell<bool>,
    /// The name of the intercepted call in progress (its address and length: a key of
    /// [`SLOTS`]).
    name: Cell<(usize, usize)>,
    /// Set while the vendor's `adxl::AdxlEngine` member that regcheck forwarded to runs on
    /// this thread (see `frontend::hixl::run_member`).
    in_adxl: Cell<bool>,
}

thread_local! {
    static CALL: Call = const {
        Call {
            frame: Cell::new(0),
            count: Cell::new(0),
            busy: Cell::new(false),
            name: Cell::new((0, 0)),
            in_adxl: Cell::new(false),
        }
    };
}

/// Called by the front end as an intercepted call starts; `frame` is the address of a local
/// of the function that runs the call `name`. Every frame the unwinder finds at or below it is
/// regcheck's.
#[inline]
pub fn call_started(frame: usize, name: &'static str) {
    let _ = CALL.try_with(|c| {
        c.frame.set(frame);
        c.count.set(c.count.get().wrapping_add(1));
        c.name.set((name.as_ptr() as usize, name.len()));
    });
}

/// Mark the thread as running regcheck's own code (or not).
#[inline]
pub fn set_busy(busy: bool) {
    let _ = CALL.try_with(|c| c.busy.set(busy));
}

/// Whether regcheck's own code is running on this thread (a thread whose thread-locals are
/// gone counts as busy).
#[inline]
pub fn busy() -> bool {
    CALL.try_with(|c| c.busy.get()).unwrap_or(true)
}

/// Whether the vendor's `adxl::AdxlEngine` member regcheck forwarded to is running on this
/// thread.
#[inline]
pub fn in_adxl() -> bool {
    CALL.try_with(|c| c.in_adxl.get()).unwrap_or(false)
}

/// Mark the thread as running (or no longer running) the vendor's ADXL member; returns the
/// previous mark.
#[inline]
pub fn set_in_adxl(inside: bool) -> bool {
    CALL.try_with(|c| c.in_adxl.replace(inside)).unwrap_or(false)
}

/// How many intercepted calls started on this thread (changes with every ACL or HIXL call
/// regcheck sees).
pub fn calls_on_thread() -> u64 {
    CALL.try_with(|c| c.count.get()).unwrap_or(0)
}

/// Serialises the symbolisation (the `backtrace` crate's caches of debug information). It is
/// only ever *tried* (see [`symbols_locked`]): a thread never waits for it without bound, so
/// that it can be no part of a deadlock with the loader's lock, which the crate's first
/// symbolisation takes (`dl_iterate_phdr`) while holding this one. Unwinding needs no lock
/// (`_Unwind_Backtrace` is thread-safe, and the crate keeps no state for it), and the
/// objects are told from [`objects`]' table, built with no regcheck lock held.
static LOCK: Mutex<()> = Mutex::new(());

crate::platform::atfork::hold_across_fork!(static HANDLERS = LOCK, ());

/// Register the `fork()` handlers that keep [`LOCK`] usable in a child (once; see
/// [`crate::platform::atfork`]).
pub fn install_fork_handlers() {
    HANDLERS.ensure();
}

/// Run `f` holding [`LOCK`], if it can be had within a bounded wait (another thread may be
/// symbolising a large library for the first time): `None` otherwise.
fn symbols_locked<R>(f: impl FnOnce() -> R) -> Option<R> {
    HANDLERS.ensure();
    for _ in 0..200 {
        match LOCK.try_lock() {
            Ok(_guard) => return Some(f()),
            Err(std::sync::TryLockError::Poisoned(p)) => {
                let _guard = p.into_inner();
                return Some(f());
            }
            Err(std::sync::TryLockError::WouldBlock) => std::thread::sleep(std::time::Duration::from_millis(1)),
        }
    }
    None
}

fn dladdr_symbol(addr: usize) -> Option<String> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables; `info` is a valid out-pointer. A loader
    // call: never under a regcheck lock.
    if unsafe { libc::dladdr(addr as *const c_void, &mut info) } == 0 || info.dli_sname.is_null() {
        return None;
    }
    // SAFETY: the loader's NUL-terminated symbol name.
    let raw = unsafe { CStr::from_ptr(info.dli_sname) }.to_string_lossy().into_owned();
    Some(format!("{:#}", backtrace::SymbolName::new(raw.as_bytes())))
}

/// The address range of regcheck's own object, and whether that object is the executable
/// (static linking). Computed once from the objects table (no lock: racing threads compute
/// the same values).
fn own_object() -> ((usize, usize), bool) {
    static START: AtomicUsize = AtomicUsize::new(0);
    static END: AtomicUsize = AtomicUsize::new(0);
    static IN_EXE: AtomicBool = AtomicBool::new(false);
    let end = END.load(Ordering::Acquire);
    if end != 0 {
        return ((START.load(Ordering::Relaxed), end), IN_EXE.load(Ordering::Relaxed));
    }
    let table = objects::current();
    let me = own_object as *const () as usize;
    let Some(index) = table.index_of(me) else { return ((0, 0), false) };
    let (start, end) = table.span(index);
    START.store(start, Ordering::Relaxed);
    IN_EXE.store(index == 0, Ordering::Relaxed);
    END.store(end, Ordering::Release);
    ((start, end), index == 0)
}

fn in_range(addr: usize, (start, end): (usize, usize)) -> bool {
    start <= addr && addr < end
}

/// Whether the object at `index` of `table` is one of the vendor's (by identity, see
/// [`crate::vendor::is_vendor_object`]) and not regcheck itself.
fn is_vendor_at(table: &objects::Table, index: usize) -> bool {
    let (own, _) = own_object();
    !in_range(table.span(index).0, own) && crate::vendor::is_vendor_object(table, index)
}

/// Unwind the calling thread and keep `n` frames of the application, starting with the first
/// frame outside regcheck and the vendor libraries. Empty when `n == 0` or nothing is found.
pub fn capture(n: usize) -> Stack {
    if n == 0 {
        return Stack::default();
    }
    // Built (when objects came or went) before the unwind, with no lock held.
    let table = objects::current();
    let marker = CALL.try_with(|c| c.frame.get()).unwrap_or(0);
    let (own, in_executable) = own_object();
    let mut frames = Vec::new();
    let mut past_marker = marker == 0;
    let mut in_app = false;
    let mut seen = 0;
    // In the static case regcheck's frames are told apart by name when symbolising: keep
    // enough to drop them (an entry point, a vendor call back into regcheck) and still have n.
    let want = if in_executable { n + 16 } else { n };
    // SAFETY: the libunwind backend (`_Unwind_Backtrace`) is thread-safe and the crate keeps
    // no state of its own for it: no serialisation is needed (and none is wanted: the
    // unwinder asks the loader where each frame's unwind tables are).
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
                let at = ip.saturating_sub(1);
                let ours = !in_executable && in_range(at, own);
                let vendor = table.index_of(at).is_some_and(|i| is_vendor_at(&table, i));
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

/// Where, relative to the marker, the stack holds the return address into the caller, per
/// intercepted function (keyed by its name's address and length): regcheck's frames between
/// the marker and the caller are of a fixed size, so the slot an unwind found once holds the
/// caller's return address on every later call of the same function. Learnt from a full
/// unwind, checked against one again now and then; a function whose slot ever disagrees
/// unwinds for good.
const SLOT_COUNT: usize = 128;
static SLOTS: [(AtomicUsize, AtomicUsize, AtomicUsize); SLOT_COUNT] =
    [const { (AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0)) }; SLOT_COUNT];
/// A slot's offset when its function must always unwind.
const UNWIND: usize = usize::MAX;
/// Every this many calls of a function on a thread (and its first ones), the slot is checked.
const CHECK_EVERY: u32 = 256;

thread_local! {
    static FAST_USES: Cell<u32> = const { Cell::new(0) };
}

fn slot_for(key: (usize, usize)) -> Option<&'static (AtomicUsize, AtomicUsize, AtomicUsize)> {
    if key.0 == 0 {
        return None;
    }
    let start = (key.0 >> 3 ^ key.1) % SLOT_COUNT;
    (0..8).map(|i| &SLOTS[(start + i) % SLOT_COUNT]).find(|s| {
        let k = s.0.load(Ordering::Acquire);
        k == key.0 && s.1.load(Ordering::Relaxed) == key.1 || k == 0
    })
}

/// The caller's return address: read from the learnt slot when there is one and this use is
/// not a check, else by unwinding (and learning, or checking, the slot).
fn caller_address() -> Option<usize> {
    let marker = CALL.try_with(|c| c.frame.get()).unwrap_or(0);
    let key = CALL.try_with(|c| c.name.get()).unwrap_or((0, 0));
    let slot = slot_for(key).filter(|_| marker != 0);
    let learnt = slot.filter(|s| s.0.load(Ordering::Acquire) == key.0).map(|s| s.2.load(Ordering::Relaxed));
    let uses = FAST_USES.try_with(|u| {
        let n = u.get().wrapping_add(1);
        u.set(n);
        n
    });
    let check = uses.map_or(true, |n| n % CHECK_EVERY == 0);
    if let Some(offset) = learnt.filter(|&o| o != UNWIND && !check) {
        // SAFETY: the slot lies in this thread's live stack, between the marker (a local of
        // regcheck's frame that runs the call) and the caller's frame: learnt from this
        // function's own frames, which are of fixed size.
        return Some(unsafe { std::ptr::read_volatile((marker + offset) as *const usize) });
    }
    let (ip, cfa) = unwind_to_caller();
    let Some(slot) = slot else { return ip };
    match (learnt, ip) {
        (Some(UNWIND), _) => {}
        // SAFETY: as above.
        (Some(offset), Some(ip)) if unsafe { std::ptr::read_volatile((marker + offset) as *const usize) } != ip => {
            slot.2.store(UNWIND, Ordering::Relaxed);
        }
        (None, Some(ip)) if cfa > marker => {
            // The word holding the return address: the highest one below the last regcheck
            // frame's canonical frame address (x86-64: just below it; AArch64: in the frame
            // record) that holds it.
            let word = std::mem::size_of::<usize>();
            let top = cfa & !(word - 1);
            let found = (1..=(top - marker) / word)
                .map(|i| top - i * word)
                .take_while(|&a| a >= marker)
                // SAFETY: addresses between the marker and the frame above it: this thread's
                // live stack.
                .find(|&a| unsafe { std::ptr::read_volatile(a as *const usize) } == ip);
            let offset = found.map_or(UNWIND, |a| a - marker);
            if slot.0.compare_exchange(0, key.0, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                slot.1.store(key.1, Ordering::Relaxed);
                slot.2.store(offset, Ordering::Relaxed);
            }
        }
        _ => {}
    }
    ip
}

/// The return address in the frame of the intercepted call's caller: the first frame past
/// regcheck's (its frames below the marker, then its entry point), and the canonical frame
/// address of the last of regcheck's frames (0 when unknown). `None` when the unwinder cannot tell. Unwinds
/// only as far as that frame.
fn unwind_to_caller() -> (Option<usize>, usize) {
    let marker = CALL.try_with(|c| c.frame.get()).unwrap_or(0);
    let (own, in_executable) = own_object();
    let mut past_marker = marker == 0;
    let mut entry_seen = false;
    let mut seen = 0;
    let mut caller = None;
    let mut last_cfa = 0;
    // SAFETY: as in `capture`.
    unsafe {
        backtrace::trace_unsynchronized(|frame| {
            seen += 1;
            if seen > 64 {
                return false;
            }
            let sp = frame.sp() as usize;
            if !past_marker {
                past_marker = sp == 0 || sp > marker;
                if !past_marker {
                    return true;
                }
            }
            let ip = frame.ip() as usize;
            if ip == 0 {
                return true;
            }
            if in_range(ip.saturating_sub(1), own) {
                // regcheck's own frames: by object; when it is linked into the executable
                // (whose other frames are the application's), only its entry point, the
                // first frame past the marker. Told by position alone, so every export keeps
                // a frame of its own: an `extern "C"` one by itself, a `"C-unwind"` one
                // through `ffi::framed` (else its call into the front end is a jump, and the
                // application's frame would be taken for it).
                if !in_executable || (!entry_seen && marker != 0) {
                    entry_seen = true;
                    return true;
                }
            }
            caller = Some(ip);
            // What the unwinder calls this frame's stack pointer: the canonical frame address
            // of the frame below it, regcheck's last.
            last_cfa = sp;
            false
        })
    };
    (caller, last_cfa)
}

thread_local! {
    /// The caller of the intercepted call in progress, as found: the call's number on this
    /// thread (see [`calls_on_thread`]), and 1 for the application, 2 for the vendor (0: not
    /// asked yet). One unwind per intercepted call at most.
    static CALLER: Cell<(u64, u8)> = const { Cell::new((0, 0)) };
    /// The last caller address classified on this thread, with the number of vendor objects
    /// regcheck had resolved then, and the answer. (The object holding a return address on the
    /// live stack is loaded; only another object loaded since at the very same address, calling
    /// from the very same place, could make the answer stale.)
    static CLASSIFIED: Cell<(usize, usize, bool)> = const { Cell::new((0, 0, false)) };
}

/// Whether the object holding the return address `ip` is the vendor's.
fn vendor_address(ip: usize) -> bool {
    let resolved = crate::vendor::resolved_objects();
    if let Ok((at, r, vendor)) = CLASSIFIED.try_with(Cell::get) {
        if at == ip && r == resolved {
            return vendor;
        }
    }
    let table = objects::current();
    let vendor = table.index_of(ip.saturating_sub(1)).is_some_and(|i| is_vendor_at(&table, i));
    let _ = CLASSIFIED.try_with(|c| c.set((ip, resolved, vendor)));
    vendor
}

/// The file of the object that made the intercepted call in progress on this thread: the
/// first frame outside regcheck (`None` when the unwinder cannot tell). Unwinds the stack.
pub fn caller_object() -> Option<String> {
    let ip = caller_address()?;
    objects::current().object_of(ip.saturating_sub(1)).map(|o| o.name.clone())
}

/// Whether the intercepted call in progress was made by one of the vendor's libraries
/// (`libcann_hixl.so` calling `aclrtHostRegister`, say): such a call is the vendor's, not the
/// application's. The vendor's libraries are those regcheck resolved the vendor's functions in
/// and their neighbours in the vendor's directory ([`crate::vendor::is_vendor_object`]), never
/// an object told by its file name. Found once per intercepted call (an unwind to the first
/// frame past regcheck's, then a look-up cached per caller address); takes no lock.
pub fn call_from_vendor() -> bool {
    let call = calls_on_thread();
    if let Ok((at, answer)) = CALLER.try_with(Cell::get) {
        if at == call && answer != 0 && call != 0 {
            return answer == 2;
        }
    }
    let vendor = caller_address().is_some_and(vendor_address);
    let _ = CALLER.try_with(|c| c.set((call, if vendor { 2 } else { 1 })));
    vendor
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
        || name.starts_with("llm_datadist::LlmDataDist::")
        || name.starts_with("Hccl")
        || ["regcheck::", "core::", "std::", "alloc::", "backtrace::"].iter().any(|p| name.starts_with(p))
}

/// Names and lines of the frames of `stack` (at most `n`). Debug information is read under
/// [`LOCK`] when it can be had (else a frame is named from the dynamic symbols); the loader
/// is asked (`dladdr`, the objects table) with no regcheck lock held.
pub fn symbolize(stack: &Stack, n: usize) -> Vec<Site> {
    if stack.frames.is_empty() {
        return Vec::new();
    }
    let table = objects::current();
    let mut sites: Vec<Site> = stack.frames.iter().map(|f| site_of(&table, f)).collect();
    symbols_locked(|| {
        for (site, frame) in sites.iter_mut().zip(&stack.frames) {
            debug_info(site, frame);
            if site.file.is_none() {
                late_debug_info(site);
            }
        }
    });
    for site in sites.iter_mut().filter(|s| s.function.is_none()) {
        site.function = dladdr_symbol(site.address.saturating_sub(1));
    }
    if stack.in_executable {
        let ours = sites
            .iter()
            .take_while(|s| {
                is_regcheck_frame(s)
                    || table.index_of(s.address.saturating_sub(1)).is_some_and(|i| is_vendor_at(&table, i))
            })
            .count();
        sites.drain(..ours);
    }
    sites.truncate(n);
    sites
}

/// The frame's address, object and offset (from the objects table).
fn site_of(table: &objects::Table, frame: &backtrace::Frame) -> Site {
    let address = frame.ip() as usize;
    let obj = table.object_of(address.saturating_sub(1));
    Site {
        address,
        object: obj.map(|o| o.name.clone()).filter(|n| !n.is_empty()),
        offset: address.wrapping_sub(obj.map_or(0, |o| o.base)),
        ..Site::default()
    }
}

/// The first (innermost, inlined) function and line a symbol gives, where the site has none yet.
fn fill_from_symbol(site: &mut Site, sym: &backtrace::Symbol) {
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
}

/// The function and line of a frame the `backtrace` crate gave no line for, from its object's
/// own debug information: the crate lists the loaded objects once (at its first
/// symbolisation), so an object loaded since (`dlopen`) is unknown to it. Under [`LOCK`].
fn late_debug_info(site: &mut Site) {
    let Some(object) = site.object.as_deref() else { return };
    let base = site.address.wrapping_sub(site.offset);
    if let Some(late::Found { function, location }) = late::locate(object, base, site.address.saturating_sub(1)) {
        if let Some((file, line)) = location {
            site.file = Some(file);
            site.line = Some(line);
            // The function that holds that line (the crate may have named an outer one).
            site.function = function.or(site.function.take());
        } else if site.function.is_none() {
            site.function = function;
        }
    }
}

/// The frame's function and line from the debug information. Under [`LOCK`].
fn debug_info(site: &mut Site, frame: &backtrace::Frame) {
    // The first symbol is the innermost (inlined) function: the one that made the call.
    // SAFETY: called under LOCK (from `symbolize`).
    unsafe { backtrace::resolve_frame_unsynchronized(frame, |sym| fill_from_symbol(site, sym)) };
}

/// The return address into the caller of the intercepted call in progress on this thread (the
/// application's frame, or the vendor's when the vendor made the call), as one word that a
/// record can keep and quote later ("registered at ..."): a read of the learnt stack slot on
/// most calls, an unwind to the caller's frame otherwise. `None` when the unwinder cannot tell.
/// Call it before the vendor runs (in the check phase): a vendor that calls back into an
/// intercepted function moves the thread's call marker.
pub fn caller_ip() -> Option<usize> {
    caller_address()
}

/// A return address kept from [`caller_ip`], as a site: its object and offset, and its function
/// and line from the debug information when they can be had (else the dynamic symbols). Asks
/// the loader: never under a regcheck lock.
pub fn site_of_address(ip: usize) -> Site {
    let at = ip.saturating_sub(1);
    let table = objects::current();
    let obj = table.object_of(at);
    let mut site = Site {
        address: ip,
        object: obj.map(|o| o.name.clone()).filter(|n| !n.is_empty()),
        offset: ip.wrapping_sub(obj.map_or(0, |o| o.base)),
        ..Site::default()
    };
    symbols_locked(|| {
        // SAFETY: under LOCK; the address is only looked up in the debug information (the
        // crate looks up the byte before a return address itself).
        unsafe { backtrace::resolve_unsynchronized(ip as *mut c_void, |sym| fill_from_symbol(&mut site, sym)) };
        if site.file.is_none() {
            late_debug_info(&mut site);
        }
    });
    if site.function.is_none() {
        site.function = dladdr_symbol(at);
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
    fn in_the_executable_regcheck_frames_are_told_apart_by_name() {
        // This test program holds regcheck, as a program linked with libregcheck.a does, and
        // no marker is set: the frames of regcheck and of Rust's runtime lead the stack and
        // are dropped by name, leaving the test harness's.
        call_started(0, "");
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
