//! The HIXL front end: the `hixl::Hixl` members (called with `this` first, Itanium ABI) and
//! the `HixlCS*` C API.
//!
//! Each call follows [`run`]: check (gather facts, evaluate [`crate::rules::hixl`], decide),
//! forward (the vendor runs, no lock held), record (update [`crate::state::hixl`] from the
//! vendor's answer). Instance state is keyed by the object's address; `Hixl()` starts it
//! fresh and `~Hixl()` drops it.
//!
//! `ge::AscendString` is read only through the vendor's `GetString`/`GetLength`, found at
//! run time; `Initialize`'s `std::map` is walked by the C++ bridge `src/ffi/hixl_bridge.cpp`.
//! The transfer path (`TransferSync`/`TransferAsync`) costs O(n log m) for n ops and m live
//! registrations, with no allocation and no system call unless something is wrong.

use std::ffi::{c_char, c_void, CStr};
use std::thread::ThreadId;

use super::{decide, run, Verdict};
use crate::codes::hixl as code;
use crate::platform::memmap;
use crate::rules::hixl::{
    self as rules, Checks, DeregFacts, HdkFact, InstanceState, LinkFacts, MemKind, OptionsFacts, ProductClass, RegApi,
    RegArgs, RegFacts, ThreadFacts, TransferOpDesc, XferFacts,
};
use crate::rules::Finding;
use crate::state::hixl::{CsEndpoint, HixlReg, Instance, Phase, RegSet};
use crate::state::{self, queries, Runtime};
use crate::vendor::{call_vendor, Library, Symbol};

/// Returned when the vendor's function cannot be found (`ACL_ERROR_API_NOT_SUPPORT`, the
/// code regcheck's resolver names in its log; HIXL passes raw ACL codes through).
pub const VENDOR_MISSING: u32 = crate::codes::acl::API_NOT_SUPPORT as u32;
/// At most this many options are read from `Initialize`'s map.
const MAX_OPTIONS: usize = 256;
/// Strings longer than this are not read (a corrupt `AscendString`).
const MAX_STRING: usize = 1 << 16;

// --- the vendor's symbols ---------------------------------------------------------------

static CTOR_C1: Symbol = Symbol::new(Library::Hixl, c"_ZN4hixl4HixlC1Ev");
static CTOR_C2: Symbol = Symbol::new(Library::Hixl, c"_ZN4hixl4HixlC2Ev");
static DTOR_D1: Symbol = Symbol::new(Library::Hixl, c"_ZN4hixl4HixlD1Ev");
static DTOR_D2: Symbol = Symbol::new(Library::Hixl, c"_ZN4hixl4HixlD2Ev");
static INITIALIZE: Symbol = Symbol::new(
    Library::Hixl,
    c"_ZN4hixl4Hixl10InitializeERKN2ge12AscendStringERKSt3mapIS2_S2_St4lessIS2_ESaISt4pairIS3_S2_EEE",
);
static FINALIZE: Symbol = Symbol::new(Library::Hixl, c"_ZN4hixl4Hixl8FinalizeEv");
static REGISTER_MEM: Symbol = Symbol::new(Library::Hixl, c"_ZN4hixl4Hixl11RegisterMemERKNS_7MemDescENS_7MemTypeERPv");
static DEREGISTER_MEM: Symbol = Symbol::new(Library::Hixl, c"_ZN4hixl4Hixl13DeregisterMemEPv");
static CONNECT: Symbol = Symbol::new(Library::Hixl, c"_ZN4hixl4Hixl7ConnectERKN2ge12AscendStringEi");
static CONNECT_ASYNC: Symbol = Symbol::new(Library::Hixl, c"_ZN4hixl4Hixl12ConnectAsyncERKN2ge12AscendStringEi");
static DISCONNECT: Symbol = Symbol::new(Library::Hixl, c"_ZN4hixl4Hixl10DisconnectERKN2ge12AscendStringEi");
static DISCONNECT_ASYNC: Symbol = Symbol::new(Library::Hixl, c"_ZN4hixl4Hixl15DisconnectAsyncERKN2ge12AscendStringEi");
static TRANSFER_SYNC: Symbol = Symbol::new(
    Library::Hixl,
    c"_ZN4hixl4Hixl12TransferSyncERKN2ge12AscendStringENS_10TransferOpERKSt6vectorINS_14TransferOpDescESaIS7_EEi",
);
static TRANSFER_ASYNC: Symbol = Symbol::new(
    Library::Hixl,
    c"_ZN4hixl4Hixl13TransferAsyncERKN2ge12AscendStringENS_10TransferOpERKSt6vectorINS_14TransferOpDescESaIS7_EERKNS_12TransferArgsERPv",
);
static GET_STRING: Symbol = Symbol::new(Library::Hixl, c"_ZNK2ge12AscendString9GetStringEv");
static GET_LENGTH: Symbol = Symbol::new(Library::Hixl, c"_ZNK2ge12AscendString9GetLengthEv");

static CS_SERVER_CREATE: Symbol = Symbol::new(Library::Hixl, c"HixlCSServerCreate");
static CS_SERVER_REG_MEM: Symbol = Symbol::new(Library::Hixl, c"HixlCSServerRegMem");
static CS_SERVER_UNREG_MEM: Symbol = Symbol::new(Library::Hixl, c"HixlCSServerUnregMem");
static CS_SERVER_DESTROY: Symbol = Symbol::new(Library::Hixl, c"HixlCSServerDestroy");
static CS_CLIENT_CREATE: Symbol = Symbol::new(Library::Hixl, c"HixlCSClientCreate");
static CS_CLIENT_CONNECT: Symbol = Symbol::new(Library::Hixl, c"HixlCSClientConnect");
static CS_CLIENT_REG_MEM: Symbol = Symbol::new(Library::Hixl, c"HixlCSClientRegMem");
static CS_CLIENT_UNREG_MEM: Symbol = Symbol::new(Library::Hixl, c"HixlCSClientUnregMem");
static CS_CLIENT_DESTROY: Symbol = Symbol::new(Library::Hixl, c"HixlCSClientDestroy");

// C++ members may throw (std::bad_alloc): "C-unwind" lets an exception reach the
// application exactly as it would without regcheck.
type ThisFn = unsafe extern "C-unwind" fn(*mut c_void);
type InitializeFn = unsafe extern "C-unwind" fn(*mut c_void, *const c_void, *const c_void) -> u32;
type RegisterMemFn = unsafe extern "C-unwind" fn(*mut c_void, *const MemDesc, u32, *mut *mut c_void) -> u32;
type DeregisterMemFn = unsafe extern "C-unwind" fn(*mut c_void, *mut c_void) -> u32;
type ConnectFn = unsafe extern "C-unwind" fn(*mut c_void, *const c_void, i32) -> u32;
type TransferSyncFn = unsafe extern "C-unwind" fn(*mut c_void, *const c_void, u32, *const c_void, i32) -> u32;
type TransferAsyncFn =
    unsafe extern "C-unwind" fn(*mut c_void, *const c_void, u32, *const c_void, *const c_void, *mut *mut c_void) -> u32;
/// cbindgen:ignore
type GetStringFn = unsafe extern "C" fn(*const c_void) -> *const c_char;
/// cbindgen:ignore
type GetLengthFn = unsafe extern "C" fn(*const c_void) -> usize;
type CsCreateFn = unsafe extern "C-unwind" fn(*const c_void, *const CsConfig, *mut *mut c_void) -> u32;
type CsRegMemFn = unsafe extern "C-unwind" fn(*mut c_void, *const c_char, *const CommMem, *mut *mut c_void) -> u32;
type CsHandleFn = unsafe extern "C-unwind" fn(*mut c_void, *mut c_void) -> u32;
type CsDestroyFn = unsafe extern "C-unwind" fn(*mut c_void) -> u32;
type CsConnectFn = unsafe extern "C-unwind" fn(*mut c_void, u32) -> u32;

/// `hixl::MemDesc` (144 bytes; only `addr` and `len` are read).
#[repr(C)]
pub struct MemDesc {
    pub addr: usize,
    pub len: usize,
    pub reserved: [u8; 128],
}

/// `CommMem` of `hcomm_res_defs.h` (24 bytes).
#[repr(C)]
pub struct CommMem {
    pub ty: i32,
    pub addr: *mut c_void,
    pub size: u64,
}

/// `HixlServerConfig` / `HixlClientConfig` (only the first field is read).
#[repr(C)]
pub struct CsConfig {
    pub global_resource_config: *const c_char,
}

/// The C++ options bridge; internal, kept out of regcheck.h.
/// cbindgen:ignore
mod bridge {
    use super::{c_char, c_void, GetLengthFn, GetStringFn};

    extern "C" {
        /// `src/ffi/hixl_bridge.cpp` (internal; not part of regcheck's C API).
        pub(super) fn rcbridge_hixl_walk_options(
            map: *const c_void,
            get_string: GetStringFn,
            get_length: GetLengthFn,
            each: unsafe extern "C" fn(*mut c_void, *const c_char, usize, *const c_char, usize),
            ctx: *mut c_void,
            max: usize,
        ) -> usize;
    }
}
use bridge::rcbridge_hixl_walk_options;

// --- reading the application's C++ objects ----------------------------------------------

/// The vendor's string accessors, when found.
fn string_fns() -> Option<(GetStringFn, GetLengthFn)> {
    // SAFETY: the prototypes of `const char *GetString() const` / `size_t GetLength() const`
    // with `this` as the only argument.
    unsafe { Some((GET_STRING.get_fn::<GetStringFn>()?, GET_LENGTH.get_fn::<GetLengthFn>()?)) }
}

/// Run `f` on the bytes of an `AscendString` (read through the vendor's accessors, not
/// copied). `None` when the reference is NULL or the accessors cannot be found.
fn with_ascend_bytes<R>(s: *const c_void, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
    if s.is_null() {
        return None;
    }
    let (get_string, get_length) = string_fns()?;
    // SAFETY: `s` is the application's `const AscendString &`.
    let (p, len) = unsafe { (get_string(s), get_length(s)) };
    if p.is_null() || len == 0 {
        return Some(f(&[]));
    }
    if len > MAX_STRING {
        return None;
    }
    // SAFETY: GetString points at GetLength bytes owned by the string, alive during the call.
    Some(f(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }))
}

/// An `AscendString` as text (lossy).
fn ascend_string(s: *const c_void) -> Option<String> {
    with_ascend_bytes(s, |b| String::from_utf8_lossy(b).into_owned())
}

unsafe extern "C" fn collect_option(ctx: *mut c_void, k: *const c_char, kl: usize, v: *const c_char, vl: usize) {
    let bytes = |p: *const c_char, l: usize| -> String {
        if p.is_null() || l == 0 || l > MAX_STRING {
            String::new()
        } else {
            // SAFETY: the bridge passes GetString/GetLength of a live AscendString.
            String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), l) }).into_owned()
        }
    };
    // SAFETY: ctx is the Vec passed by `read_options`.
    let out = unsafe { &mut *ctx.cast::<Vec<(String, String)>>() };
    out.push((bytes(k, kl), bytes(v, vl)));
}

/// The entries of `Initialize`'s `std::map<AscendString, AscendString>`.
fn read_options(map: *const c_void) -> Option<Vec<(String, String)>> {
    if map.is_null() {
        return None;
    }
    let (get_string, get_length) = string_fns()?;
    let mut out: Vec<(String, String)> = Vec::new();
    // SAFETY: `map` is the application's `const std::map<AscendString, AscendString> &`;
    // the bridge reads it with this compiler's own layout and the vendor's accessors.
    unsafe {
        rcbridge_hixl_walk_options(
            map,
            get_string,
            get_length,
            collect_option,
            (&mut out as *mut Vec<(String, String)>).cast(),
            MAX_OPTIONS,
        )
    };
    Some(out)
}

/// The ops of a `const std::vector<TransferOpDesc> &` (libstdc++: begin and end pointers).
/// `None` when the vector cannot be read sensibly.
fn read_ops<'a>(v: *const c_void) -> Option<&'a [TransferOpDesc]> {
    if v.is_null() {
        return None;
    }
    // SAFETY: `v` points at a std::vector whose first two words are begin and end.
    let (begin, end) = unsafe {
        let words = v.cast::<*const TransferOpDesc>();
        (*words, *words.add(1))
    };
    let size = std::mem::size_of::<TransferOpDesc>();
    if begin.is_null() || end.is_null() {
        return (begin.is_null() && end.is_null()).then_some(&[]);
    }
    let bytes = (end as usize).checked_sub(begin as usize)?;
    if bytes % size != 0 || begin as usize % std::mem::align_of::<TransferOpDesc>() != 0 {
        return None;
    }
    // SAFETY: [begin, end) is the vector's storage of `bytes / size` elements.
    Some(unsafe { std::slice::from_raw_parts(begin, bytes / size) })
}

/// A NUL-terminated C string (lossy), `None` for NULL.
fn c_string(p: *const c_char) -> Option<String> {
    // SAFETY: a NUL-terminated string from the application.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

// --- facts --------------------------------------------------------------------------------

fn this_thread() -> ThreadId {
    std::thread::current().id()
}

fn instance_state(i: Option<&Instance>) -> InstanceState {
    match i.map(|i| i.phase) {
        None => InstanceState::Unknown,
        Some(Phase::Constructed) => InstanceState::Constructed,
        Some(Phase::Initialized) => InstanceState::Initialized,
        Some(Phase::Finalized) => InstanceState::Finalized,
    }
}

fn hdk_fact(rt: &Runtime) -> HdkFact {
    let h = rt.hdk();
    let describe = match &h.text {
        Some(t) => format!("{t} (from {})", h.source),
        None => h.source.clone(),
    };
    HdkFact { version: h.version, describe }
}

/// Log the rules skipped for lack of facts, once per rule and reason.
fn note_skips(rt: &Runtime, c: &Checks) {
    for s in &c.skipped {
        rt.note_once(&format!("hixl-skip:{}:{}", s.rule.name(), s.key), log::Level::Info, || s.message());
    }
}

fn note_options(rt: &Runtime, who: &str, o: &OptionsFacts) {
    for p in &o.problems {
        rt.note_once(&format!("hixl-options:{p}"), log::Level::Info, || {
            format!("{who}: cannot understand the option {p}; rules that need the transports are skipped")
        });
    }
    log::info!(
        target: "regcheck",
        "{who}: transports {} ({}), AutoConnect {}",
        o.transports_text(),
        if o.transport_source.is_empty() { "no transport option" } else { &o.transport_source },
        if o.auto_connect { "on" } else { "off" }
    );
}

fn reject_or(rt: &Runtime, call: &str, args: &str, findings: &[Finding]) -> Result<(), u32> {
    if findings.is_empty() {
        return Ok(());
    }
    match decide(rt, call, args, findings) {
        Verdict::Reject(c) => Err(u32::try_from(c).unwrap_or(code::FAILED)),
        Verdict::Forward => Ok(()),
    }
}

/// The text of a file of at most 1 MiB (the limit HIXL applies to `local_comm_res_path`).
fn read_small_file(path: &str) -> Result<String, String> {
    use std::io::Read;
    const MAX: u64 = 1 << 20;
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    f.take(MAX + 1).read_to_string(&mut text).map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX {
        return Err("larger than 1 MiB".into());
    }
    Ok(text)
}

/// The memory facts of a registration that do not depend on the instance.
struct MemFacts {
    by_malloc_host: bool,
    dev_alloc: Option<crate::state::registry::Alloc<u32>>,
    vmm: Option<crate::state::registry::Alloc<crate::state::registry::VmmAttr>>,
    gaps: Option<Vec<(usize, usize)>>,
}

fn mem_facts(rt: &Runtime, a: &RegArgs) -> MemFacts {
    let Some((start, end)) = a.range() else {
        return MemFacts { by_malloc_host: false, dev_alloc: None, vmm: None, gaps: None };
    };
    let (by_malloc_host, dev_alloc, vmm) = state::read(|s| {
        (
            s.host_allocs.containing_range(start, end - start).is_some(),
            s.dev_allocs.containing_range(start, end - start),
            s.vmm_maps.containing_range(start, end - start),
        )
    });
    let gaps = if a.kind() == MemKind::Host {
        match memmap::query(start, end, false) {
            Ok(view) => Some(view.gaps),
            Err(e) => {
                rt.note_once("hixl-memmap", log::Level::Warn, || {
                    format!("cannot read the process's memory map ({e}); HIXL-REG-HOST-UNMAPPED is skipped")
                });
                None
            }
        }
    } else {
        None
    };
    MemFacts { by_malloc_host, dev_alloc, vmm, gaps }
}

fn reg_args_text(a: &RegArgs, tag: Option<&str>) -> String {
    let ty = match a.ty {
        rules::MEM_DEVICE => "device".to_string(),
        rules::MEM_HOST => "host".to_string(),
        t => format!("{t} (invalid)"),
    };
    match (a.api, tag) {
        (RegApi::Hixl, _) => format!("mem={{addr=0x{:x}, len={}}}, type={ty}", a.addr, a.len),
        (_, tag) => format!(
            "mem_tag={}, mem={{type={ty}, addr=0x{:x}, size={}}}",
            tag.map_or_else(|| "NULL".to_string(), |t| format!("{t:?}")),
            a.addr,
            a.len
        ),
    }
}

// --- hixl::Hixl ---------------------------------------------------------------------------

/// Which constructor or destructor symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structor {
    /// The complete-object variant (`C1`/`D1`, what applications call).
    Complete,
    /// The base-object variant (`C2`/`D2`).
    Base,
}

/// `hixl::Hixl::Hixl()`: the vendor constructs; the instance's state starts fresh.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn construct(this: *mut c_void, which: Structor) {
    let sym = if which == Structor::Complete { &CTOR_C1 } else { &CTOR_C2 };
    run(
        "Hixl::Hixl",
        |_| Ok(()),
        || call_vendor!(sym, ThisFn, (); this),
        |_, (), ()| {
            state::with(|s| s.hixl.instances.insert(this as usize, Instance::default()));
        },
    )
}

/// `hixl::Hixl::~Hixl()`: registrations still live are reported (HIXL-FINALIZE-LEAK), the
/// vendor destroys (its own Finalize call re-enters regcheck and finds nothing left), and
/// the state is dropped. Never rejected.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn destruct(this: *mut c_void, which: Structor) {
    let sym = if which == Structor::Complete { &DTOR_D1 } else { &DTOR_D2 };
    run(
        "Hixl::~Hixl",
        |rt| {
            let gone = state::with(|s| s.hixl.instances.remove(&(this as usize)));
            if let Some(i) = gone.filter(|i| i.phase == Phase::Initialized) {
                report_leaks(rt, "Hixl::~Hixl", this, &i);
            }
            Ok(())
        },
        || call_vendor!(sym, ThisFn, (); this),
        |_, (), ()| {
            state::with(|s| s.hixl.instances.remove(&(this as usize)));
        },
    )
}

fn report_leaks(rt: &Runtime, call: &str, this: *mut c_void, i: &Instance) {
    if let Some(f) = rules::check_leak(call, i.local_engine.as_deref(), i.regs.iter()) {
        // A leak report never stops Finalize or the destructor.
        let _ = decide(rt, call, &format!("this=0x{:x}", this as usize), &[f]);
    }
}

/// `Status Initialize(const AscendString &local_engine, const std::map<...> &options)`.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn initialize(this: *mut c_void, local_engine: *const c_void, options: *const c_void) -> u32 {
    run(
        "Hixl::Initialize",
        |rt| {
            let name = ascend_string(local_engine);
            let who = format!("Hixl::Initialize({:?})", name.as_deref().unwrap_or("?"));
            let (opts, engine) = match read_options(options) {
                Some(pairs) => {
                    let mut opts = rules::parse_options(&pairs);
                    if let Some(path) = opts.local_comm_res_path.clone().filter(|_| opts.local_comm_res.is_none()) {
                        match read_small_file(&path) {
                            Ok(text) => opts.set_local_comm_res_from_file(&text),
                            Err(e) => opts.problems.push(format!("local_comm_res_path {path:?}: {e}")),
                        }
                    }
                    let choice = rules::select_engine(&opts, rt.soc().as_deref());
                    log::info!(target: "regcheck", "{who}: HIXL selects the {} engine ({})", choice.engine.name(), choice.reason);
                    (opts, Some(choice))
                }
                None => {
                    rt.note_once("hixl-options-unreadable", log::Level::Info, || {
                        "Hixl::Initialize: the options cannot be read (GetString/GetLength not found); the engine is unknown and rules that need the transports are skipped".to_string()
                    });
                    (OptionsFacts::default(), None)
                }
            };
            note_options(rt, &who, &opts);
            if let Some(choice) = &engine {
                let mut findings = rules::check_options(&opts, choice);
                match rules::check_fabric_mem(&opts, &ProductClass::from_soc(rt.soc().as_deref()), &hdk_fact(rt)) {
                    Ok(f) => findings.extend(f),
                    Err(skip) => note_skips(rt, &Checks { findings: Vec::new(), skipped: vec![skip] }),
                }
                let args =
                    format!("local_engine={:?}, options={{{}}}", name.as_deref().unwrap_or("?"), opts.keys.join(", "));
                reject_or(rt, "Hixl::Initialize", &args, &findings)?;
            }
            let ctx = queries::current_context();
            Ok((name, opts, engine.map(|c| c.engine), ctx, this_thread()))
        },
        || call_vendor!(INITIALIZE, InitializeFn, VENDOR_MISSING; this, local_engine, options),
        |_, (name, opts, engine, ctx, thread), ret| {
            if *ret != code::SUCCESS {
                return;
            }
            state::with(|s| {
                let i = s.hixl.instances.entry(this as usize).or_default();
                *i = Instance {
                    phase: Phase::Initialized,
                    init_thread: Some(thread),
                    init_ctx: ctx,
                    local_engine: name,
                    options: opts,
                    engine,
                    ..Instance::default()
                };
            });
        },
    )
}

/// `void Finalize()`: registrations still live are reported; never rejected.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn finalize(this: *mut c_void) {
    run(
        "Hixl::Finalize",
        |rt| {
            let inst = state::read(|s| s.hixl.instances.get(&(this as usize)).cloned());
            if let Some(i) = inst.filter(|i| i.phase == Phase::Initialized) {
                report_leaks(rt, "Hixl::Finalize", this, &i);
            }
            Ok(())
        },
        || call_vendor!(FINALIZE, ThisFn, (); this),
        |_, (), ()| {
            state::with(|s| {
                if let Some(i) = s.hixl.instances.get_mut(&(this as usize)) {
                    if i.phase == Phase::Initialized {
                        i.phase = Phase::Finalized;
                    }
                    i.links.clear();
                    i.regs.clear();
                }
            });
        },
    )
}

/// The thread facts of a call on `this` (asks the vendor for the context only when the
/// thread differs from Initialize's).
fn thread_facts(this: usize) -> Option<ThreadFacts> {
    let (init_thread, init_ctx) = state::read(|s| {
        let i = s.hixl.instances.get(&this)?;
        (i.phase == Phase::Initialized).then_some((i.init_thread, i.init_ctx))
    })?;
    let init_thread = init_thread?;
    let same_thread = init_thread == this_thread();
    let current_ctx = if same_thread { init_ctx } else { queries::current_context() };
    Some(ThreadFacts { same_thread, init_ctx, current_ctx })
}

fn links_of(s: &crate::state::State, this: usize, i: &Instance) -> LinkFacts {
    LinkFacts {
        outgoing: i.links.iter().map(|l| String::from_utf8_lossy(l).into_owned()).collect(),
        incoming: i.local_engine.as_deref().map(|n| s.hixl.incoming_links(this, n)).unwrap_or_default(),
    }
}

/// `Status RegisterMem(const MemDesc &mem, MemType type, MemHandle &mem_handle)`.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn register_mem(this: *mut c_void, mem: *const MemDesc, ty: u32, handle: *mut *mut c_void) -> u32 {
    run(
        "Hixl::RegisterMem",
        |rt| {
            if mem.is_null() {
                return Ok(None);
            }
            // SAFETY: `mem` is the application's `const MemDesc &`.
            let (addr, len) = unsafe { ((*mem).addr, (*mem).len as u64) };
            let a = RegArgs { api: RegApi::Hixl, addr, len, ty: i64::from(ty as i32) };
            let key = this as usize;
            let thread = thread_facts(key);
            let mf = mem_facts(rt, &a);
            let product = ProductClass::from_soc(rt.soc().as_deref());
            let hdk = hdk_fact(rt);
            let limit = rt.config.hixl_max_regs;
            let checks = state::with(|s| {
                let empty = Instance::default();
                let inst = s.hixl.instances.get(&key);
                let i = inst.unwrap_or(&empty);
                let range = a.range();
                let identical = range.and_then(|_| i.regs.identical(a.kind(), addr, len));
                let overlap = match (range, identical) {
                    (Some((start, end)), None) => i.regs.overlapping_reg(a.kind(), start, end),
                    _ => None,
                };
                let facts = RegFacts {
                    state: instance_state(inst),
                    thread,
                    links: inst.map(|i| links_of(s, key, i)),
                    identical,
                    overlap,
                    live: i.regs.len(),
                    limit,
                    near_warned: i.near_warned,
                    total_of_kind: i.regs.total(a.kind()),
                    product,
                    hdk,
                    options: &i.options,
                    by_malloc_host: mf.by_malloc_host,
                    dev_alloc: mf.dev_alloc,
                    vmm: mf.vmm,
                    engine: inst.and_then(|i| i.engine),
                    gaps: mf.gaps,
                };
                let c = rules::check_register(&a, &facts);
                if c.has(crate::rules::RuleId::HixlRegCountNear) {
                    if let Some(i) = s.hixl.instances.get_mut(&key) {
                        i.near_warned = true;
                    }
                }
                c
            });
            note_skips(rt, &checks);
            reject_or(rt, "Hixl::RegisterMem", &reg_args_text(&a, None), &checks.findings)?;
            Ok(Some(a))
        },
        || call_vendor!(REGISTER_MEM, RegisterMemFn, VENDOR_MISSING; this, mem, ty, handle),
        |_, a, ret| {
            let (Some(a), true, false) = (a, *ret == code::SUCCESS, handle.is_null()) else { return };
            // SAFETY: the vendor succeeded and wrote the handle.
            let h = unsafe { *handle } as usize;
            state::with(|s| {
                let i = s.hixl.instances.entry(this as usize).or_insert_with(|| Instance {
                    phase: Phase::Initialized, // the vendor accepted it: it is initialised
                    ..Instance::default()
                });
                i.regs.insert(HixlReg { handle: h, addr: a.addr, len: a.len, kind: a.kind(), tag: String::new() });
            });
        },
    )
}

/// `Status DeregisterMem(MemHandle mem_handle)`.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn deregister_mem(this: *mut c_void, handle: *mut c_void) -> u32 {
    run(
        "Hixl::DeregisterMem",
        |rt| {
            let key = this as usize;
            let h = handle as usize;
            let thread = if h != 0 { thread_facts(key) } else { None };
            let mut findings = state::with(|s| {
                let inst = s.hixl.instances.get(&key);
                let facts = DeregFacts {
                    state: instance_state(inst),
                    live: inst.and_then(|i| i.regs.get(h)),
                    other_owner: s.hixl.owner_of(key, h),
                    links: inst.map(|i| links_of(s, key, i)),
                    engine: inst.and_then(|i| i.engine),
                };
                rules::check_dereg(RegApi::Hixl, h, &facts)
            });
            if let Some(t) = thread {
                match rules::check_thread("Hixl::DeregisterMem", &t) {
                    Ok(f) => findings.extend(f),
                    Err(skip) => {
                        note_skips(rt, &Checks { findings: Vec::new(), skipped: vec![skip] });
                    }
                }
            }
            reject_or(rt, "Hixl::DeregisterMem", &format!("mem_handle=0x{h:x}"), &findings)
        },
        || call_vendor!(DEREGISTER_MEM, DeregisterMemFn, VENDOR_MISSING; this, handle),
        |_, (), ret| {
            if *ret == code::SUCCESS {
                state::with(|s| {
                    if let Some(i) = s.hixl.instances.get_mut(&(this as usize)) {
                        i.regs.remove(handle as usize);
                    }
                });
            }
        },
    )
}

/// Which link call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkCall {
    Connect,
    ConnectAsync,
    Disconnect,
    DisconnectAsync,
}

impl LinkCall {
    fn name(self) -> &'static str {
        match self {
            LinkCall::Connect => "Hixl::Connect",
            LinkCall::ConnectAsync => "Hixl::ConnectAsync",
            LinkCall::Disconnect => "Hixl::Disconnect",
            LinkCall::DisconnectAsync => "Hixl::DisconnectAsync",
        }
    }

    fn symbol(self) -> &'static Symbol {
        match self {
            LinkCall::Connect => &CONNECT,
            LinkCall::ConnectAsync => &CONNECT_ASYNC,
            LinkCall::Disconnect => &DISCONNECT,
            LinkCall::DisconnectAsync => &DISCONNECT_ASYNC,
        }
    }
}

/// `Connect`, `ConnectAsync`, `Disconnect`, `DisconnectAsync`
/// `(const AscendString &remote_engine, int32_t timeout_in_millis)`: the instance must be
/// initialised; the links are recorded (a ConnectAsync that was accepted counts as a link).
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn link(this: *mut c_void, which: LinkCall, remote: *const c_void, timeout: i32) -> u32 {
    let call = which.name();
    run(
        call,
        |rt| {
            let st = state::read(|s| instance_state(s.hixl.instances.get(&(this as usize))));
            let findings: Vec<Finding> = rules::check_initialized(call, st).into_iter().collect();
            if !findings.is_empty() {
                let name = ascend_string(remote).unwrap_or_else(|| "?".into());
                reject_or(rt, call, &format!("remote_engine={name:?}, timeout_in_millis={timeout}"), &findings)?;
            }
            Ok(with_ascend_bytes(remote, <[u8]>::to_vec))
        },
        || call_vendor!(which.symbol(), ConnectFn, VENDOR_MISSING; this, remote, timeout),
        |_, name, ret| {
            let Some(name) = name else { return };
            state::with(|s| {
                let Some(i) = s.hixl.instances.get_mut(&(this as usize)) else { return };
                match which {
                    LinkCall::Connect | LinkCall::ConnectAsync
                        if *ret == code::SUCCESS || *ret == code::ALREADY_CONNECTED =>
                    {
                        i.links.insert(name);
                    }
                    LinkCall::Disconnect | LinkCall::DisconnectAsync
                        if *ret == code::SUCCESS || *ret == code::NOT_CONNECTED =>
                    {
                        i.links.remove(&name);
                    }
                    _ => {}
                }
            });
        },
    )
}

/// The transfer checks: O(n log m), no allocation unless a rule finds something.
fn check_transfer(
    rt: &Runtime,
    call: &str,
    sync: bool,
    this: *mut c_void,
    remote: *const c_void,
    op: u32,
    ops: *const c_void,
) -> Result<(), u32> {
    let Some(ops) = read_ops(ops) else {
        rt.note_once("hixl-ops-unreadable", log::Level::Info, || {
            format!("{call}: op_descs cannot be read as a std::vector<TransferOpDesc>; the transfer rules are skipped")
        });
        return Ok(());
    };
    let key = this as usize;
    let findings = with_ascend_bytes(remote, |name| {
        state::read(|s| {
            let inst = s.hixl.instances.get(&key);
            let linked = match inst {
                Some(i) if !i.options.auto_connect && i.phase == Phase::Initialized => Some(i.links.contains(name)),
                _ => None,
            };
            let facts = XferFacts {
                state: instance_state(inst),
                linked,
                engine: inst.and_then(|i| i.engine),
                pool: inst.is_some_and(|i| i.options.buffer_pool.stages()),
                sync,
            };
            let remote_text = std::str::from_utf8(name).unwrap_or("(not UTF-8)");
            let regs = inst.map(|i| &i.regs);
            rules::check_transfer(call, remote_text, facts, ops, |a, l| match regs {
                Some(r) => r.kind_of_range(a, l),
                // An instance regcheck did not see: nothing to judge by.
                None => Some(MemKind::Host),
            })
        })
    });
    let Some(findings) = findings else {
        rt.note_once("hixl-remote-unreadable", log::Level::Info, || {
            format!(
                "{call}: remote_engine cannot be read (GetString/GetLength not found); the transfer rules are skipped"
            )
        });
        return Ok(());
    };
    if findings.is_empty() {
        return Ok(());
    }
    let args = format!(
        "remote_engine={:?}, operation={}, op_descs=[{} op(s)]",
        ascend_string(remote).unwrap_or_default(),
        match op {
            0 => "READ".to_string(),
            1 => "WRITE".to_string(),
            o => o.to_string(),
        },
        ops.len()
    );
    reject_or(rt, call, &args, &findings)
}

/// `Status TransferSync(const AscendString &remote_engine, TransferOp operation,
/// const std::vector<TransferOpDesc> &op_descs, int32_t timeout_in_millis)`.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn transfer_sync(
    this: *mut c_void,
    remote: *const c_void,
    op: u32,
    ops: *const c_void,
    timeout: i32,
) -> u32 {
    run(
        "Hixl::TransferSync",
        |rt| check_transfer(rt, "Hixl::TransferSync", true, this, remote, op, ops),
        || call_vendor!(TRANSFER_SYNC, TransferSyncFn, VENDOR_MISSING; this, remote, op, ops, timeout),
        |_, (), _| {},
    )
}

/// `Status TransferAsync(const AscendString &remote_engine, TransferOp operation,
/// const std::vector<TransferOpDesc> &op_descs, const TransferArgs &optional_args,
/// TransferReq &req)`.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn transfer_async(
    this: *mut c_void,
    remote: *const c_void,
    op: u32,
    ops: *const c_void,
    args: *const c_void,
    req: *mut *mut c_void,
) -> u32 {
    run(
        "Hixl::TransferAsync",
        |rt| check_transfer(rt, "Hixl::TransferAsync", false, this, remote, op, ops),
        || call_vendor!(TRANSFER_ASYNC, TransferAsyncFn, VENDOR_MISSING; this, remote, op, ops, args, req),
        |_, (), _| {},
    )
}

// --- HixlCS* ------------------------------------------------------------------------------

/// Server or client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsSide {
    Server,
    Client,
}

impl CsSide {
    fn api(self) -> RegApi {
        match self {
            CsSide::Server => RegApi::CsServer,
            CsSide::Client => RegApi::CsClient,
        }
    }

    fn map(self, s: &mut crate::state::State) -> &mut std::collections::HashMap<usize, CsEndpoint> {
        match self {
            CsSide::Server => &mut s.hixl.servers,
            CsSide::Client => &mut s.hixl.clients,
        }
    }
}

/// A NUL-terminated string at an address read out of a caller's struct whose layout differs
/// between HIXL releases: only read when the address lies in a readable mapping, and never
/// past that mapping's end or `max` bytes. `None` when it is not a UTF-8 string.
fn checked_c_string(p: *const c_char, max: usize) -> Option<String> {
    let start = p as usize;
    if start == 0 {
        return None;
    }
    let view = memmap::query(start, start.checked_add(1)?, false).ok()?;
    let m = view.mappings.first().filter(|m| m.readable && m.start <= start && start < m.end)?;
    let len = max.min(m.end - start);
    // SAFETY: [start, start + len) lies inside one readable mapping of the process.
    let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
    let n = bytes.iter().position(|&b| b == 0)?;
    let text = std::str::from_utf8(&bytes[..n]).ok()?;
    (!text.is_empty()).then(|| text.to_string())
}

/// `server_ip:server_port` of a `HixlServerDesc` / `HixlClientDesc`. Their layout changed
/// between HIXL releases (current: `endpoint_list, server_ip, server_port, ...`, 128 bytes for
/// the server, `local_endpoint, remote_endpoint, server_ip, server_port, ...` for the client;
/// earlier: `server_ip, server_port, ...` first), so both are tried, and a pointer is only
/// followed into readable memory. `None` when neither layout yields an address.
fn cs_key(side: CsSide, desc: *const c_void) -> Option<String> {
    if desc.is_null() {
        return None;
    }
    let current = match side {
        CsSide::Server => (8, 16),
        CsSide::Client => (16, 24),
    };
    [current, (0, 8)].into_iter().find_map(|(ip_off, port_off)| {
        // SAFETY: `desc` points to the application's descriptor, at least 32 bytes in every
        // release; the words are read unaligned and the pointer is checked before use.
        let (ip, port) = unsafe {
            let b = desc.cast::<u8>();
            (b.add(ip_off).cast::<*const c_char>().read_unaligned(), b.add(port_off).cast::<u32>().read_unaligned())
        };
        let ip = checked_c_string(ip, 256).filter(|ip| ip.chars().all(|c| c.is_ascii_graphic()))?;
        (port <= u32::from(u16::MAX)).then(|| format!("{ip}:{port}"))
    })
}

/// `HixlCSServerCreate(desc, config, &handle)` / `HixlCSClientCreate(desc, config, &handle)`.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn cs_create(side: CsSide, desc: *const c_void, config: *const CsConfig, handle: *mut *mut c_void) -> u32 {
    let (call, sym) = match side {
        CsSide::Server => ("HixlCSServerCreate", &CS_SERVER_CREATE),
        CsSide::Client => ("HixlCSClientCreate", &CS_CLIENT_CREATE),
    };
    run(
        call,
        |rt| {
            let key = cs_key(side, desc);
            // SAFETY: `config` is the application's HixlServerConfig/HixlClientConfig.
            // Earlier releases have only reserved (zeroed) bytes there: checked before it is read.
            let grc = if config.is_null() {
                None
            } else {
                checked_c_string(
                    unsafe { std::ptr::addr_of!((*config).global_resource_config).read_unaligned() },
                    1 << 16,
                )
            };
            let opts = rules::parse_cs_config(grc.as_deref());
            note_options(rt, &format!("{call}({})", key.as_deref().unwrap_or("?")), &opts);
            Ok((key, opts))
        },
        || call_vendor!(sym, CsCreateFn, VENDOR_MISSING; desc, config, handle),
        |_, (key, options), ret| {
            if *ret != code::SUCCESS || handle.is_null() {
                return;
            }
            // SAFETY: the vendor succeeded and wrote the handle.
            let h = unsafe { *handle } as usize;
            state::with(|s| {
                let connections = match side {
                    CsSide::Server => {
                        s.hixl.clients.values().filter(|c| c.connections > 0 && c.key.is_some() && c.key == key).count()
                    }
                    CsSide::Client => 0,
                };
                side.map(s)
                    .insert(h, CsEndpoint { key, regs: RegSet::default(), connections, options, seen_created: true });
            });
        },
    )
}

/// `HixlCSClientConnect(client, timeout_ms)`: a successful connection is recorded on the
/// client and on the servers at its address.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn cs_client_connect(client: *mut c_void, timeout_ms: u32) -> u32 {
    run(
        "HixlCSClientConnect",
        |_| Ok(()),
        || call_vendor!(CS_CLIENT_CONNECT, CsConnectFn, VENDOR_MISSING; client, timeout_ms),
        |_, (), ret| {
            if *ret != code::SUCCESS {
                return;
            }
            state::with(|s| {
                let Some(c) = s.hixl.clients.get_mut(&(client as usize)) else { return };
                if c.connections > 0 {
                    return;
                }
                c.connections = 1;
                let key = c.key.clone();
                for srv in s.hixl.servers.values_mut().filter(|v| v.key.is_some() && v.key == key) {
                    srv.connections += 1;
                }
            });
        },
    )
}

/// `HixlCSServerRegMem` / `HixlCSClientRegMem(handle, mem_tag, const CommMem *mem, MemHandle *)`.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn cs_reg_mem(
    side: CsSide,
    h: *mut c_void,
    tag: *const c_char,
    mem: *const CommMem,
    out: *mut *mut c_void,
) -> u32 {
    let api = side.api();
    let sym = if side == CsSide::Server { &CS_SERVER_REG_MEM } else { &CS_CLIENT_REG_MEM };
    run(
        api.call(),
        |rt| {
            if mem.is_null() {
                return Ok(None);
            }
            // SAFETY: `mem` is the application's `const CommMem *`.
            let (ty, addr, size) = unsafe { ((*mem).ty, (*mem).addr as usize, (*mem).size) };
            let a = RegArgs { api, addr, len: size, ty: i64::from(ty) };
            let tag = c_string(tag);
            let mf = mem_facts(rt, &a);
            let product = ProductClass::from_soc(rt.soc().as_deref());
            let checks = state::with(|s| {
                let map = match side {
                    CsSide::Server => &s.hixl.servers,
                    CsSide::Client => &s.hixl.clients,
                };
                let empty = CsEndpoint::default();
                let ep = map.get(&(h as usize));
                let e = ep.unwrap_or(&empty);
                let range = a.range();
                let identical = range.and_then(|_| e.regs.identical(a.kind(), addr, size));
                let overlap = match (range, identical) {
                    (Some((start, end)), None) => e.regs.overlapping_reg(a.kind(), start, end),
                    _ => None,
                };
                let links = ep.filter(|e| e.seen_created).map(|e| match (side, e.connections) {
                    (_, 0) => LinkFacts::default(),
                    (CsSide::Client, _) => LinkFacts {
                        outgoing: vec![format!("server {}", e.key.as_deref().unwrap_or("?"))],
                        incoming: vec![],
                    },
                    (CsSide::Server, n) => LinkFacts {
                        outgoing: vec![],
                        incoming: vec![format!("{n} client(s) at {}", e.key.as_deref().unwrap_or("?"))],
                    },
                });
                let facts = RegFacts {
                    state: if ep.is_some() { InstanceState::Initialized } else { InstanceState::Unknown },
                    thread: None,
                    links,
                    identical,
                    overlap,
                    live: e.regs.len(),
                    limit: u64::MAX,
                    near_warned: true,
                    total_of_kind: e.regs.total(a.kind()),
                    product,
                    hdk: HdkFact { version: None, describe: String::new() },
                    options: &e.options,
                    by_malloc_host: mf.by_malloc_host,
                    dev_alloc: mf.dev_alloc,
                    vmm: mf.vmm,
                    engine: None,
                    gaps: mf.gaps,
                };
                rules::check_register(&a, &facts)
            });
            note_skips(rt, &checks);
            reject_or(rt, api.call(), &reg_args_text(&a, tag.as_deref()), &checks.findings)?;
            Ok(Some((a, tag)))
        },
        || call_vendor!(sym, CsRegMemFn, VENDOR_MISSING; h, tag, mem, out),
        |_, a, ret| {
            let (Some((a, tag)), true, false) = (a, *ret == code::SUCCESS, out.is_null()) else { return };
            // SAFETY: the vendor succeeded and wrote the handle.
            let handle = unsafe { *out } as usize;
            state::with(|s| {
                side.map(s).entry(h as usize).or_default().regs.insert(HixlReg {
                    handle,
                    addr: a.addr,
                    len: a.len,
                    kind: a.kind(),
                    tag: tag.unwrap_or_default(),
                });
            });
        },
    )
}

/// `HixlCSServerUnregMem` / `HixlCSClientUnregMem(handle, mem_handle)`.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn cs_unreg_mem(side: CsSide, h: *mut c_void, mem_handle: *mut c_void) -> u32 {
    let api = side.api();
    let (call, sym) = match side {
        CsSide::Server => ("HixlCSServerUnregMem", &CS_SERVER_UNREG_MEM),
        CsSide::Client => ("HixlCSClientUnregMem", &CS_CLIENT_UNREG_MEM),
    };
    run(
        call,
        |rt| {
            let mh = mem_handle as usize;
            let findings = state::with(|s| {
                let ep = side.map(s).get(&(h as usize));
                let facts = DeregFacts {
                    state: match ep {
                        Some(e) if e.seen_created => InstanceState::Initialized,
                        _ => InstanceState::Unknown,
                    },
                    live: ep.and_then(|e| e.regs.get(mh)),
                    other_owner: None,
                    links: None,
                    engine: None,
                };
                rules::check_dereg(api, mh, &facts)
            });
            reject_or(rt, call, &format!("mem_handle=0x{mh:x}"), &findings)
        },
        || call_vendor!(sym, CsHandleFn, VENDOR_MISSING; h, mem_handle),
        |_, (), ret| {
            if *ret == code::SUCCESS {
                state::with(|s| {
                    if let Some(e) = side.map(s).get_mut(&(h as usize)) {
                        e.regs.remove(mem_handle as usize);
                    }
                });
            }
        },
    )
}

/// `HixlCSServerDestroy(server)` / `HixlCSClientDestroy(client)`: leaks are reported, the
/// state is dropped. Never rejected.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn cs_destroy(side: CsSide, h: *mut c_void) -> u32 {
    let (call, sym) = match side {
        CsSide::Server => ("HixlCSServerDestroy", &CS_SERVER_DESTROY),
        CsSide::Client => ("HixlCSClientDestroy", &CS_CLIENT_DESTROY),
    };
    run(
        call,
        |rt| {
            let ep = state::with(|s| side.map(s).get(&(h as usize)).cloned());
            if let Some(f) = ep.and_then(|e| rules::check_leak(call, e.key.as_deref(), e.regs.iter())) {
                let _ = decide(rt, call, &format!("handle=0x{:x}", h as usize), &[f]);
            }
            Ok(())
        },
        || call_vendor!(sym, CsDestroyFn, VENDOR_MISSING; h),
        |_, (), ret| {
            if *ret != code::SUCCESS {
                return;
            }
            state::with(|s| {
                let Some(e) = side.map(s).remove(&(h as usize)) else { return };
                if side == CsSide::Client && e.connections > 0 {
                    for srv in s.hixl.servers.values_mut().filter(|v| v.key.is_some() && v.key == e.key) {
                        srv.connections = srv.connections.saturating_sub(1);
                    }
                }
            });
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc_with(words: &[(usize, u64)]) -> [u64; 16] {
        let mut d = [0u64; 16];
        for &(off, v) in words {
            d[off / 8] = v;
        }
        d
    }

    #[test]
    fn cs_descriptors_of_both_layouts_are_read_safely() {
        let ip = c"127.0.0.1";
        let ip_ptr = ip.as_ptr() as u64;
        // Current server layout: endpoint_list, server_ip, server_port, ...
        let d = desc_with(&[(0, 0x1000), (8, ip_ptr), (16, 26000)]);
        assert_eq!(cs_key(CsSide::Server, d.as_ptr().cast()), Some("127.0.0.1:26000".into()));
        // Earlier layout: server_ip, server_port, ...: the port word is not followed as a pointer.
        let d = desc_with(&[(0, ip_ptr), (8, 26000), (16, 0x1000)]);
        assert_eq!(cs_key(CsSide::Server, d.as_ptr().cast()), Some("127.0.0.1:26000".into()));
        // Current client layout: local_endpoint, remote_endpoint, server_ip, server_port.
        let d = desc_with(&[(16, ip_ptr), (24, 26000)]);
        assert_eq!(cs_key(CsSide::Client, d.as_ptr().cast()), Some("127.0.0.1:26000".into()));
        // Garbage pointers are never dereferenced.
        let d = desc_with(&[(0, 0x10), (8, 0xdead_0000_0000), (16, 7)]);
        assert_eq!(cs_key(CsSide::Server, d.as_ptr().cast()), None);
        assert_eq!(cs_key(CsSide::Server, std::ptr::null()), None);
        assert_eq!(checked_c_string(std::ptr::null(), 10), None);
    }

    #[test]
    fn ops_vector_reading() {
        let ops = [TransferOpDesc { local_addr: 1, remote_addr: 2, len: 3 }; 3];
        let v: [*const TransferOpDesc; 3] = [ops.as_ptr(), ops.as_ptr().wrapping_add(3), ops.as_ptr().wrapping_add(3)];
        let got = read_ops(v.as_ptr().cast()).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got[2].len, 3);
        let empty: [*const TransferOpDesc; 3] = [std::ptr::null(); 3];
        assert_eq!(read_ops(empty.as_ptr().cast()).unwrap().len(), 0);
        let bad: [*const TransferOpDesc; 3] =
            [ops.as_ptr(), ops.as_ptr().cast::<u8>().wrapping_add(5).cast(), ops.as_ptr()];
        assert!(read_ops(bad.as_ptr().cast()).is_none(), "not a whole number of ops");
        let backwards: [*const TransferOpDesc; 3] = [ops.as_ptr().wrapping_add(1), ops.as_ptr(), ops.as_ptr()];
        assert!(read_ops(backwards.as_ptr().cast()).is_none());
        assert!(read_ops(std::ptr::null()).is_none());
    }

    #[test]
    fn cs_keys() {
        let ip = c"10.0.0.1";
        let mut server = [0u8; 128];
        server[8..16].copy_from_slice(&(ip.as_ptr() as usize).to_ne_bytes());
        server[16..20].copy_from_slice(&26000u32.to_ne_bytes());
        assert_eq!(cs_key(CsSide::Server, server.as_ptr().cast()).as_deref(), Some("10.0.0.1:26000"));
        let mut client = [0u8; 128];
        client[16..24].copy_from_slice(&(ip.as_ptr() as usize).to_ne_bytes());
        client[24..28].copy_from_slice(&7u32.to_ne_bytes());
        assert_eq!(cs_key(CsSide::Client, client.as_ptr().cast()).as_deref(), Some("10.0.0.1:7"));
        assert!(cs_key(CsSide::Client, std::ptr::null()).is_none());
        assert!(cs_key(CsSide::Server, [0u8; 128].as_ptr().cast()).is_none(), "NULL ip");
    }

    #[test]
    fn layouts() {
        assert_eq!(std::mem::size_of::<MemDesc>(), 144);
        assert_eq!(std::mem::size_of::<CommMem>(), 24);
        assert_eq!(std::mem::size_of::<TransferOpDesc>(), 24);
    }

    #[test]
    fn args_text() {
        let a = RegArgs { api: RegApi::Hixl, addr: 0x1000, len: 4096, ty: 1 };
        assert_eq!(reg_args_text(&a, None), "mem={addr=0x1000, len=4096}, type=host");
        let a = RegArgs { api: RegApi::CsClient, addr: 0x1000, len: 1, ty: 5 };
        assert_eq!(reg_args_text(&a, Some("kv")), "mem_tag=\"kv\", mem={type=5 (invalid), addr=0x1000, size=1}");
    }
}
