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
//!
//! [`instance`]: the `hixl::Hixl` members; [`cs`]: the `HixlCS*` C API. This module holds
//! what both read and share: the vendor's symbols, the application's objects, the facts.
//! The transfer path (`TransferSync`/`TransferAsync`) costs O(n log m) for n ops and m live
//! registrations, with no allocation and no system call unless something is wrong.

use std::ffi::{c_char, c_void, CStr};
use std::thread::ThreadId;

use super::{decide, run, run_maybe, Api, Verdict};
use crate::codes::hixl as code;
use crate::platform::memmap;
use crate::rules::hixl::{
    self as rules, Checks, CsEndpointFact, DeregFacts, HdkFact, InstanceState, LinkFacts, MemKind, OptionsFacts,
    ProductClass, RegApi, RegArgs, RegFacts, RemoteView, ThreadFacts, TransferOpDesc, XferFacts,
};
use crate::rules::Finding;
use crate::state::hixl::{CsEndpoint, HixlReg, Instance, PeerView, Phase, RegSet};
use crate::state::{self, queries, Runtime};
use crate::vendor::{call_vendor, Library, Symbol};

mod adxl;
mod cs;
mod datadist;
mod instance;
mod transfer;

pub use adxl::*;
pub use cs::*;
pub use datadist::*;
pub use instance::*;
pub use transfer::*;

/// Returned when the vendor's function cannot be found (`ACL_ERROR_API_NOT_SUPPORT`, the
/// code regcheck's resolver names in its log; HIXL passes raw ACL codes through).
pub const VENDOR_MISSING: u32 = crate::codes::acl::API_NOT_SUPPORT as u32;
/// At most this many options are read from `Initialize`'s map.
const MAX_OPTIONS: usize = 256;
/// Strings longer than this are not read (a corrupt `AscendString`).
const MAX_STRING: usize = 1 << 16;

// --- the vendor's symbols ---------------------------------------------------------------

/// One vendor member: the name regcheck's messages give it, and the vendor's function.
pub struct Member {
    pub name: &'static str,
    pub symbol: Symbol,
}

impl Member {
    const fn new(lib: Library, name: &'static str, symbol: &'static CStr) -> Member {
        Member { name, symbol: Symbol::new(lib, symbol) }
    }
}

/// One of the two C++ front ends over HIXL's engine layer (hicann/hixl
/// `hixl::EngineFactory::CreateEngine`): `hixl::Hixl` (`libcann_hixl.so`) and
/// `adxl::AdxlEngine` (`libllm_datadist.so`). Their members take the same arguments; the
/// rules (keyed by the engine the options select), the per-instance state (by the object's
/// address) and this code are shared. They differ in their names and symbols, in the members
/// only one has (`None`), and in a few checks of ADXL's own (see [`Front::is_adxl`]).
pub struct Front {
    pub api: RegApi,
    /// Complete-object and base-object constructor (`C1`, `C2`) and destructor (`D1`, `D2`).
    pub ctor: [Member; 2],
    pub dtor: [Member; 2],
    pub initialize: Member,
    pub finalize: Member,
    pub register_mem: Member,
    pub deregister_mem: Member,
    pub connect: Member,
    pub connect_async: Option<Member>,
    pub disconnect: Member,
    pub disconnect_async: Option<Member>,
    pub transfer_sync: Member,
    pub transfer_async: Member,
}

impl Front {
    /// `adxl::AdxlEngine`: its own checks (`ADXL-*`: time-outs, the transfer thread's
    /// context) apply, and a failed Initialize leaves the engine unusable.
    pub fn is_adxl(&self) -> bool {
        self.api == RegApi::Adxl
    }
}

/// A [`Member`] of `$lib` named `$name` whose symbol is `$sym`.
macro_rules! member {
    ($lib:expr, $name:expr, $sym:expr) => {
        Member::new($lib, $name, {
            match CStr::from_bytes_with_nul(concat!($sym, "\0").as_bytes()) {
                Ok(c) => c,
                Err(_) => panic!("a symbol name holds a NUL"),
            }
        })
    };
}

/// The [`Front`] of C++ class `$class` in `$lib`, whose members' Itanium names start with
/// `$p` (the class's nested name, `_ZN4hixl4Hixl`): both classes' members take the same
/// types, so the rest of each name is the same for both.
macro_rules! front {
    ($api:expr, $lib:expr, $class:literal, $p:literal, connect_async: $ca:expr, disconnect_async: $da:expr $(,)?) => {
        Front {
            api: $api,
            ctor: [
                member!($lib, concat!($class, "::", $class), concat!($p, "C1Ev")),
                member!($lib, concat!($class, "::", $class), concat!($p, "C2Ev")),
            ],
            dtor: [
                member!($lib, concat!($class, "::~", $class), concat!($p, "D1Ev")),
                member!($lib, concat!($class, "::~", $class), concat!($p, "D2Ev")),
            ],
            initialize: member!(
                $lib,
                concat!($class, "::Initialize"),
                concat!($p, "10InitializeERKN2ge12AscendStringERKSt3mapIS2_S2_St4lessIS2_ESaISt4pairIS3_S2_EEE")
            ),
            finalize: member!($lib, concat!($class, "::Finalize"), concat!($p, "8FinalizeEv")),
            register_mem: member!(
                $lib,
                concat!($class, "::RegisterMem"),
                concat!($p, "11RegisterMemERKNS_7MemDescENS_7MemTypeERPv")
            ),
            deregister_mem: member!($lib, concat!($class, "::DeregisterMem"), concat!($p, "13DeregisterMemEPv")),
            connect: member!($lib, concat!($class, "::Connect"), concat!($p, "7ConnectERKN2ge12AscendStringEi")),
            connect_async: $ca,
            disconnect: member!($lib, concat!($class, "::Disconnect"), concat!($p, "10DisconnectERKN2ge12AscendStringEi")),
            disconnect_async: $da,
            transfer_sync: member!(
                $lib,
                concat!($class, "::TransferSync"),
                concat!($p, "12TransferSyncERKN2ge12AscendStringENS_10TransferOpERKSt6vectorINS_14TransferOpDescESaIS7_EEi")
            ),
            transfer_async: member!(
                $lib,
                concat!($class, "::TransferAsync"),
                concat!(
                    $p,
                    "13TransferAsyncERKN2ge12AscendStringENS_10TransferOpERKSt6vectorINS_14TransferOpDescESaIS7_EERKNS_12TransferArgsERPv"
                )
            ),
        }
    };
}
pub(crate) use {front, member};

/// `hixl::Hixl` (hicann/hixl `include/hixl/hixl.h`).
pub static HIXL: Front = front!(
    RegApi::Hixl,
    Library::Hixl,
    "Hixl",
    "_ZN4hixl4Hixl",
    connect_async: Some(member!(Library::Hixl, "Hixl::ConnectAsync", "_ZN4hixl4Hixl12ConnectAsyncERKN2ge12AscendStringEi")),
    disconnect_async: Some(member!(
        Library::Hixl,
        "Hixl::DisconnectAsync",
        "_ZN4hixl4Hixl15DisconnectAsyncERKN2ge12AscendStringEi"
    )),
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

/// Clears the thread's "inside the vendor's ADXL" mark ([`crate::callsite::set_in_adxl`]) when
/// the vendor's member returns or unwinds.
struct AdxlScope(bool);

impl Drop for AdxlScope {
    fn drop(&mut self) {
        crate::callsite::set_in_adxl(self.0);
    }
}

/// One member call of front end `f`, as [`run`] does it, with one difference: the
/// `hixl::Hixl` calls the vendor's own ADXL makes while regcheck forwarded an
/// `adxl::AdxlEngine` member to it (an ADXL built over `hixl::Hixl`, as the simulator's
/// `libllm_datadist.so` is) are the vendor's: forwarded untouched, neither checked again nor
/// recorded as a second instance. The vendor is told by what regcheck itself called, on this
/// thread, not by a file name.
#[inline(always)]
pub(crate) fn run_member<C, R>(
    f: &'static Front,
    call: &'static str,
    check: impl FnOnce(&'static Runtime) -> Result<C, R>,
    forward: impl FnOnce() -> R,
    record: impl FnOnce(&'static Runtime, C, &R),
) -> R {
    run_member_maybe(f, call, |rt| check(rt).map(Some), forward, record)
}

/// [`run_member`] with [`crate::frontend::run_maybe`]'s check: `Ok(None)` has nothing to record.
#[inline(always)]
pub(crate) fn run_member_maybe<C, R>(
    f: &'static Front,
    call: &'static str,
    check: impl FnOnce(&'static Runtime) -> Result<Option<C>, R>,
    forward: impl FnOnce() -> R,
    record: impl FnOnce(&'static Runtime, C, &R),
) -> R {
    if !f.is_adxl() {
        if crate::callsite::in_adxl() {
            return forward();
        }
        return run_maybe(call, check, forward, record);
    }
    run_maybe(
        call,
        check,
        || {
            let _scope = AdxlScope(crate::callsite::set_in_adxl(true));
            forward()
        },
        record,
    )
}

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
    if bytes % size != 0 || !(begin as usize).is_multiple_of(std::mem::align_of::<TransferOpDesc>()) {
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

/// The CANN release, when it was read (`None`: only assumed; nothing that differs between
/// releases is decided on it).
fn known_release(rt: &Runtime) -> Option<crate::platform::release::CannRelease> {
    let p = rt.profile();
    p.is_known().then_some(p.release)
}

fn hdk_fact(rt: &Runtime) -> HdkFact {
    let h = rt.hdk();
    HdkFact { version: h.version, describe: std::sync::Arc::clone(&h.describe) }
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

/// Decide on `findings`; `args` (the call's arguments as text) is made only when there is one.
fn reject_or(
    rt: &Runtime,
    api: Api,
    call: &str,
    args: impl FnOnce() -> String,
    findings: &[Finding],
) -> Result<(), u32> {
    if findings.is_empty() {
        return Ok(());
    }
    match decide(rt, api, call, crate::report::Args::Text(&args()), findings) {
        Verdict::Reject(c) => Err(u32::try_from(c).unwrap_or(code::FAILED)),
        Verdict::Forward => Ok(()),
    }
}

/// A registration's HIXL-REG-OVERLAP finding, told more ([`rules::overlap_with_sites`]): the
/// same base with another length, and where the live registration `r` and this one (`this`, a
/// return address from [`crate::callsite::caller_ip`]) were made. Rare: the sites are
/// symbolised only here, with no lock held, and only when the rule is not off.
fn overlap_sites(rt: &Runtime, findings: Vec<Finding>, a: &RegArgs, r: &HixlReg, this: usize) -> Vec<Finding> {
    let rule = crate::rules::RuleId::HixlRegOverlap;
    if rt.action(rule) == crate::rules::Action::Off || !findings.iter().any(|x| x.rule == rule) {
        return findings;
    }
    let site = |ip: usize| (ip != 0).then(|| crate::callsite::site_of_address(ip).text());
    let (first, this) = (site(r.site), site(this));
    findings
        .into_iter()
        .map(|x| rules::overlap_with_sites(x, a.api, r, a.addr, a.len, first.as_deref(), this.as_deref()))
        .collect()
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
        (RegApi::Hixl | RegApi::Adxl, _) => format!("mem={{addr=0x{:x}, len={}}}, type={ty}", a.addr, a.len),
        (_, tag) => format!(
            "mem_tag={}, mem={{type={ty}, addr=0x{:x}, size={}}}",
            tag.map_or_else(|| "NULL".to_string(), |t| format!("{t:?}")),
            a.addr,
            a.len
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
