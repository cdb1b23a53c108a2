//! The ACL front end: `aclrtHostRegisterV2`, `aclrtHostRegister`, `aclrtHostUnregister`,
//! `aclrtHostGetDevicePointer`, `aclrtMallocHost`, `aclrtMallocHostWithCfg`, `aclrtFreeHost`,
//! `aclrtFreeHostWithDevSync`, `aclrtMalloc`, `aclrtFree`, the device resets; the VMM API in
//! [`vmm`].

use std::ffi::c_void;
use std::fmt::Write as _;

use super::{decide, explain_refusal, run, run_unrecorded, Api, Verdict};
use crate::codes::{acl as code, host_reg};
use crate::platform::{memlock, memmap};
use crate::report::{write_hex, Args};
use crate::rules::acl::{self as rules, Locked, ProductVerdict, RegArgs, RegCall};
use crate::rules::Finding;
use crate::state::registry::{HostReg, VmmAttr};
use crate::state::{self, queries, Runtime};
use crate::vendor::{call_vendor, Library, Symbol};

mod vmm;
pub use vmm::*;

type HostRegisterV2Fn = unsafe extern "C" fn(*mut c_void, u64, u32) -> i32;
type HostRegisterFn = unsafe extern "C" fn(*mut c_void, u64, u32, *mut *mut c_void) -> i32;
type PtrFn = unsafe extern "C" fn(*mut c_void) -> i32;
type MallocHostWithCfgFn = unsafe extern "C" fn(*mut *mut c_void, u64, *mut c_void) -> i32;
type GetDevicePointerFn = unsafe extern "C" fn(*mut c_void, *mut *mut c_void, u32) -> i32;
type MallocHostFn = unsafe extern "C" fn(*mut *mut c_void, usize) -> i32;
type MallocFn = unsafe extern "C" fn(*mut *mut c_void, usize, u32) -> i32;
type MallocPhysicalFn = unsafe extern "C" fn(*mut *mut c_void, usize, *const PhysicalMemProp, u64) -> i32;
type MapMemFn = unsafe extern "C" fn(*mut c_void, usize, usize, *mut c_void, u64) -> i32;
type DeviceFn = unsafe extern "C" fn(i32) -> i32;
type VoidFn = unsafe extern "C" fn() -> i32;

static HOST_REGISTER_V2: Symbol = Symbol::new(Library::Acl, c"aclrtHostRegisterV2");
static HOST_REGISTER: Symbol = Symbol::new(Library::Acl, c"aclrtHostRegister");
static HOST_UNREGISTER: Symbol = Symbol::new(Library::Acl, c"aclrtHostUnregister");
static HOST_GET_DEVICE_POINTER: Symbol = Symbol::new(Library::Acl, c"aclrtHostGetDevicePointer");
static MALLOC_HOST: Symbol = Symbol::new(Library::Acl, c"aclrtMallocHost");
static MALLOC_HOST_WITH_CFG: Symbol = Symbol::new(Library::Acl, c"aclrtMallocHostWithCfg");
static FREE_HOST: Symbol = Symbol::new(Library::Acl, c"aclrtFreeHost");
static FREE_HOST_WITH_DEV_SYNC: Symbol = Symbol::new(Library::Acl, c"aclrtFreeHostWithDevSync");
static MALLOC: Symbol = Symbol::new(Library::Acl, c"aclrtMalloc");
static FREE: Symbol = Symbol::new(Library::Acl, c"aclrtFree");
static MALLOC_PHYSICAL: Symbol = Symbol::new(Library::Acl, c"aclrtMallocPhysical");
static FREE_PHYSICAL: Symbol = Symbol::new(Library::Acl, c"aclrtFreePhysical");
static MAP_MEM: Symbol = Symbol::new(Library::Acl, c"aclrtMapMem");
static UNMAP_MEM: Symbol = Symbol::new(Library::Acl, c"aclrtUnmapMem");
static SET_DEVICE: Symbol = Symbol::new(Library::Acl, c"aclrtSetDevice");
static RESET_DEVICE: Symbol = Symbol::new(Library::Acl, c"aclrtResetDevice");
static RESET_DEVICE_FORCE: Symbol = Symbol::new(Library::Acl, c"aclrtResetDeviceForce");
static FINALIZE: Symbol = Symbol::new(Library::Acl, c"aclFinalize");

fn write_reg_args(out: &mut String, a: &RegArgs) {
    let _ = match a.call {
        RegCall::V2 { flag } => {
            write!(out, "ptr=0x{:x}, size={}, flag=0x{flag:x} ({})", a.ptr, a.size, rules::flag_names(flag))
        }
        RegCall::V1 { ty, dev_ptr_null } => {
            write!(
                out,
                "ptr=0x{:x}, size={}, type={ty}, devPtr={}",
                a.ptr,
                a.size,
                if dev_ptr_null { "NULL" } else { "set" }
            )
        }
    };
}

/// Everything regcheck finds about a host registration, without deciding or logging, in the
/// order the vendor's layers would meet them. Also returns the current device (-1 when unknown).
pub fn register_findings(rt: &Runtime, a: &RegArgs) -> (Vec<Finding>, i32) {
    let (mut findings, device) = unordered_register_findings(rt, a);
    findings.sort_by_key(|f| rules::vendor_layer(f.rule));
    let path = rt.reg_path(device);
    rules::for_path(a, path, !rt.profile().release.after_9_1(), &mut findings);
    (findings, device)
}

fn unordered_register_findings(rt: &Runtime, a: &RegArgs) -> (Vec<Finding>, i32) {
    let call = a.call.name();
    let mut findings = rules::check_args(a, rt.page_size, rt.config.large_bytes);
    match rules::check_product(call, rt.soc()) {
        ProductVerdict::Supported => {}
        ProductVerdict::Unsupported(f) => findings.push(f),
        ProductVerdict::Conflict(why) => rt.note_once("product-conflict", log::Level::Warn, || {
            format!("[ACL-HOSTREG-PRODUCT] {}: {why}; {call} is allowed", rt.soc().unwrap_or_default())
        }),
        ProductVerdict::Unlisted(soc) => rt.note_once("product-unlisted", log::Level::Info, || {
            format!("SoC {soc:?} is not in regcheck's product table; ACL-HOSTREG-PRODUCT allows it")
        }),
        ProductVerdict::UnknownSoc => rt.note_once("product-unknown", log::Level::Info, || {
            "aclrtGetSocName() gave no SoC name (set REGCHECK_SOC_NAME); ACL-HOSTREG-PRODUCT skipped".to_string()
        }),
    }
    // One vendor query on the valid path: a thread with a current device has a current
    // context (the vendor derives the device from it); only without one is the context asked.
    let device = queries::device();
    let context = if device.is_some() { Some(Some(0)) } else { queries::current_context() };
    if context.is_none() {
        rt.note_once("no-context-query", log::Level::Info, || {
            "the vendor's aclrtGetCurrentContext cannot be found; ACL-HOSTREG-NO-CONTEXT skipped".to_string()
        });
    }
    findings.extend(rules::check_context(context.map(|c| c.is_some())));
    let device = device.unwrap_or(-1);
    let Some((start, end)) = a.range() else {
        // A range that wraps: the runtime's tables still look at it (its last byte wraps).
        overlap_findings(rt, a, device, &mut findings);
        return (findings, device);
    };
    let outside = crate::rules::address::check_acl(a, crate::platform::address::user_space_top())
        .filter(|f| rt.action(f.rule) != crate::rules::Action::Off);
    match outside {
        // Nothing of the process is there: no memory-map query; the runtime's tables are still
        // checked before the driver refuses the range.
        Some(f) => findings.push(f),
        None => memory_findings(rt, a, start, end, &mut findings),
    }
    overlap_findings(rt, a, device, &mut findings);
    (findings, device)
}

/// What the memory of `[start, end)` is (the process's map, locking, the memlock limit).
fn memory_findings(rt: &Runtime, a: &RegArgs, start: usize, end: usize, findings: &mut Vec<Finding>) {
    let by_malloc_host = state::read(|s| s.host_allocs.containing_range(start, end - start).is_some());
    let want_lock_state = !by_malloc_host && (rt.kernel.needs_page_locked() || a.call.pinned());
    // Memory that is the heap, a stack or a regular file's mapping is certainly not from
    // aclrtMallocHost, whatever regcheck's records lack.
    let mut not_malloc_host = false;
    let locked = match memmap::query(start, end, want_lock_state) {
        Ok(view) => {
            findings.extend(rules::check_memory(start, end, &view));
            not_malloc_host = rules::certainly_not_malloc_host(&view);
            if by_malloc_host {
                Locked::ByMallocHost
            } else if want_lock_state {
                rules::locked_from_view(&view)
            } else {
                Locked::Unknown
            }
        }
        Err(e) => {
            rt.note_once("memmap", log::Level::Warn, || {
                format!("cannot read the process's memory map ({e}); the memory-map rules are skipped")
            });
            if by_malloc_host {
                Locked::ByMallocHost
            } else {
                Locked::Unknown
            }
        }
    };
    findings.extend(rules::check_locking(a, locked, &rt.kernel).into_iter().map(|f| {
        // What the memory is: certain when mlocked, or when it cannot be aclrtMallocHost's.
        if (f.rule == crate::rules::RuleId::AclHostregPageableOldKernel && not_malloc_host)
            || (f.rule == crate::rules::RuleId::AclHostregPinnedLocked && locked == Locked::Mlocked)
        {
            f.with_evidence(crate::rules::Evidence::Certain)
        } else {
            f
        }
    }));
    if a.call.pinned() {
        findings.extend(rules::check_memlock(a, locked, &memlock::probe()));
    }
}

/// The overlap of `[start, end)` with what is registered: on the runtime-table path V2 asks the
/// runtime's process-wide tables, as the runtime does (`state::rt_tables`); otherwise the
/// driver's registrations of the device.
fn overlap_findings(rt: &Runtime, a: &RegArgs, device: i32, findings: &mut Vec<Finding>) {
    let path = rt.reg_path(device);
    let tables_v2 = path == crate::platform::release::RegPath::Tables && matches!(a.call, RegCall::V2 { .. });
    let range = a.range();
    if range.is_none() && !tables_v2 {
        return;
    }
    let (existing, elsewhere, first) = state::read(|s| {
        let (here, there) = if tables_v2 {
            // An overlap the tables miss (their entries overlapping each other) is the
            // driver's to find, for what reaches it: the vendor answers.
            match s.rt_tables.overlapping(a.ptr as u64, a.size) {
                None => (None, None),
                Some((base, last)) => match s.host_regs.exact(device, base as usize) {
                    Some(r) => (Some(*r), None),
                    None => (None, Some(s.host_regs.held_in_runtime_tables(base as usize, last as usize))),
                },
            }
        } else {
            (range.and_then(|(start, end)| s.host_regs.overlapping(device, start, end).copied()), None)
        };
        let first = here.or(there).and_then(|r| s.host_reg_sites.get(r.device, r.base));
        (here, there, first)
    });
    if let Some(f) = rules::check_overlap_by_path(path, a, device, existing.as_ref(), elsewhere.as_ref()) {
        match existing.or(elsewhere) {
            Some(r) => {
                // Rare: the sites are symbolised only here, with no lock held.
                let site = |ip: usize| crate::callsite::site_of_address(ip).text();
                let this = crate::callsite::caller_ip().map(site);
                findings.push(rules::overlap_with_sites(
                    f,
                    &r,
                    a.ptr,
                    a.size,
                    first.map(site).as_deref(),
                    this.as_deref(),
                ));
            }
            None => findings.push(f),
        }
    }
}

/// The check of a registration: its arguments, the device, and where it was made (a return
/// address into the caller, 0 when unknown: found here, before the vendor runs, because a
/// vendor that calls back into an intercepted function moves the thread's call marker).
fn check_register(rt: &Runtime, a: RegArgs) -> Result<(RegArgs, i32, usize), i32> {
    // One word (a read of a learnt stack slot on most calls), quoted only if a later
    // registration overlaps this one.
    let site = crate::callsite::caller_ip().unwrap_or(0);
    let (findings, device) = register_findings(rt, &a);
    if findings.is_empty() {
        return Ok((a, device, site));
    }
    match decide(rt, Api::C, a.call.name(), Args::Write(&|o| write_reg_args(o, &a)), &findings) {
        Verdict::Reject(c) => Err(c as i32),
        Verdict::Forward => Ok((a, device, site)),
    }
}

fn record_register(rt: &Runtime, a: RegArgs, device: i32, site: usize, ret: i32) {
    if ret == code::HOST_MEMORY_ALREADY_REGISTERED && matches!(a.call, RegCall::V2 { .. }) {
        explain_overlap_elsewhere(rt, &a, device);
    }
    if ret != code::SUCCESS {
        return;
    }
    // What the runtime inserted on its runtime-table path: V1 and V2 with a device mapping into
    // its mapped table (on success of the driver), V2 with PINNED into its pinned one.
    let tables = (rt.reg_path(device) == crate::platform::release::RegPath::Tables).then_some(match a.call {
        RegCall::V2 { flag } => (flag & host_reg::PINNED != 0, flag & host_reg::DEVICE_MAPPED != 0),
        RegCall::V1 { .. } => (false, true),
    });
    let recorded = a.recorded_range();
    if tables.is_none() && recorded.is_none() {
        return;
    }
    state::with(|s| {
        if let Some((pinned, mapped)) = tables {
            s.rt_tables.insert(a.ptr as u64, a.size, pinned, mapped);
        }
        let Some((start, end)) = recorded else { return };
        s.host_unregs.forget(device, start);
        s.host_reg_sites.note(device, start, site);
        // A PINNED-only record kept through a device reset that the vendor has just
        // registered over was gone (the driver path): it makes way.
        while let Some(old) = s.host_regs.overlapping(device, start, end).filter(|r| r.after_reset).copied() {
            s.host_regs.remove(device, old.base);
        }
        s.host_regs.insert(HostReg {
            device,
            base: start,
            len: (end - start) as u64,
            flags: a.call.flags(),
            api: a.call.api(),
            after_reset: false,
        })
    });
}

/// The vendor refused a V2 registration as already registered while regcheck knows of no
/// overlap on this device: one on another device explains it (the runtime's tables are
/// process-wide on the runtime-table path).
#[cold]
#[inline(never)]
fn explain_overlap_elsewhere(rt: &Runtime, a: &RegArgs, device: i32) {
    let Some((start, end)) = a.range() else { return };
    let other = state::read(|s| match s.host_regs.overlapping(device, start, end) {
        Some(_) => None,
        None => s.host_regs.overlapping_elsewhere(device, start, end).copied(),
    });
    if let Some(r) = other {
        let _ = decide(
            rt,
            Api::C,
            a.call.name(),
            Args::Write(&|o| write_reg_args(o, a)),
            &[rules::check_overlap_elsewhere(device, &r)],
        );
    }
}

/// `aclrtHostRegisterV2(ptr, size, flag)`.
///
/// # Safety
/// The vendor's contract for this call: out-pointers are written only after the vendor succeeded.
pub unsafe fn host_register_v2(ptr: *mut c_void, size: u64, flag: u32) -> i32 {
    run(
        "aclrtHostRegisterV2",
        |rt| check_register(rt, RegArgs { call: RegCall::V2 { flag }, ptr: ptr as usize, size }),
        || call_vendor!(HOST_REGISTER_V2, HostRegisterV2Fn, code::API_NOT_SUPPORT; ptr, size, flag),
        |rt, (a, device, site), ret| record_register(rt, a, device, site, *ret),
    )
}

/// `aclrtHostRegister(ptr, size, type, devPtr)`.
///
/// # Safety
/// The vendor's contract for this call: out-pointers are written only after the vendor succeeded.
pub unsafe fn host_register(ptr: *mut c_void, size: u64, ty: u32, dev_ptr: *mut *mut c_void) -> i32 {
    run(
        "aclrtHostRegister",
        |rt| {
            let call = RegCall::V1 { ty, dev_ptr_null: dev_ptr.is_null() };
            check_register(rt, RegArgs { call, ptr: ptr as usize, size })
        },
        || call_vendor!(HOST_REGISTER, HostRegisterFn, code::API_NOT_SUPPORT; ptr, size, ty, dev_ptr),
        |rt, (a, device, site), ret| record_register(rt, a, device, site, *ret),
    )
}

/// `aclrtHostUnregister(ptr)`.
///
/// # Safety
/// The vendor's contract for this call: out-pointers are written only after the vendor succeeded.
pub unsafe fn host_unregister(ptr: *mut c_void) -> i32 {
    run(
        "aclrtHostUnregister",
        |rt| {
            // Without a current context the vendor answers 107002 before it looks for the
            // registration: nothing of regcheck's records applies.
            let Some(device) = queries::device() else { return Ok((None, false, 0)) };
            // Where this unregistration is made, for a later one of the same pointer (found
            // before the vendor runs: see `check_register`).
            let site = crate::callsite::caller_ip().unwrap_or(0);
            let p = ptr as usize;
            let (exact, containing, elsewhere, unregistered, before, in_tables) = state::read(|s| {
                let exact = s.host_regs.exact(device, p).copied();
                let elsewhere = match exact {
                    Some(_) => None,
                    None => s.host_regs.pinned_base_elsewhere(device, p).copied(),
                };
                let seen = s.host_unregs.seen(device, p);
                let containing = s.host_regs.containing(device, p).copied();
                (exact, containing, elsewhere, seen, s.host_unregs.site(device, p), s.rt_tables.is_base(p as u64))
            });
            let mut findings: Vec<Finding> = rules::check_unregister(
                p,
                device,
                exact.is_some(),
                containing.as_ref(),
                elsewhere.as_ref(),
                unregistered,
            )
            .into_iter()
            .map(|f| match before {
                // Rare: symbolised only here, with no lock held.
                Some(ip) if unregistered => {
                    rules::unregistered_at(f, Some(&crate::callsite::site_of_address(ip).text()))
                }
                _ => f,
            })
            .collect();
            // On a chip without host registration the driver path answers 207000 before it
            // looks for the registration, the runtime's tables 507911: both fail, with a code
            // by path; the vendor answers.
            if p != 0 && matches!(rules::check_product("aclrtHostUnregister", rt.soc()), ProductVerdict::Unsupported(_))
            {
                for f in &mut findings {
                    f.action = Some(crate::rules::Action::Warn);
                    f.problem.push_str(" (on this chip, which has no host registration, the driver path answers 207000 before it looks: the vendor answers)");
                }
            }
            // Which record the vendor's answer is about: this device's, else the pinned-only
            // one of another device the runtime's process-wide table may hold.
            let record = exact.or(elsewhere).map(|r| (r.device, r.after_reset));
            if findings.is_empty() {
                return Ok((record, in_tables, site));
            }
            match decide(rt, Api::C, "aclrtHostUnregister", Args::Write(&|o| write_hex(o, "ptr=", p)), &findings) {
                Verdict::Reject(c) => Err(c as i32),
                Verdict::Forward => Ok((record, in_tables, site)),
            }
        },
        || call_vendor!(HOST_UNREGISTER, PtrFn, code::API_NOT_SUPPORT; ptr),
        |_, (record, in_tables, site), ret| {
            let ok = *ret == code::SUCCESS;
            // The runtime erases its tables' entries at the pointer (where it keeps them) when
            // it succeeds. A failed unregister keeps the record: the registration is still live
            // (another device's too: on the driver path it is that device's driver's). One kept
            // through a reset that the vendor refused was gone with the device (the driver path).
            let forget = match record {
                Some((device, after_reset)) if ok || after_reset => Some(device),
                _ => None,
            };
            if !(ok && in_tables) && forget.is_none() {
                return;
            }
            state::with(|s| {
                if ok && in_tables {
                    s.rt_tables.unregistered(ptr as u64);
                }
                let Some(device) = forget else { return };
                if s.host_regs.remove(device, ptr as usize).is_some() && ok {
                    s.host_unregs.note(device, ptr as usize, site);
                }
            });
        },
    )
}

/// `aclrtHostGetDevicePointer(pHost, pDevice, flag)`: the vendor answers first, and only its
/// failure is explained. Every finding of this call is one the vendor fails itself, with the
/// code and out-value regcheck would give (`*pDevice = NULL` before 107000; nothing before
/// the ACL layer's 100000): NULL arguments and a flag (the ACL layer), an address in no mapped
/// registration of the current device (the runtime; where another device's, or a released
/// one's, is answered from the runtime's own table the vendor succeeds). So a clean call costs
/// the forwarding alone: no look-up, no thread-local, no query of the current device.
///
/// # Safety
/// The vendor's contract for this call; regcheck writes no out-value of its own.
#[inline(always)]
pub unsafe fn host_get_device_pointer(p_host: *mut c_void, p_device: *mut *mut c_void, flag: u32) -> i32 {
    let ret = call_vendor!(HOST_GET_DEVICE_POINTER, GetDevicePointerFn, code::API_NOT_SUPPORT; p_host, p_device, flag);
    if ret == code::SUCCESS {
        return ret;
    }
    // The vendor refused: say why, in regcheck's frame (the call site of a finding is found
    // from it). The vendor's answer stands whatever the findings decide.
    run_unrecorded(
        "aclrtHostGetDevicePointer",
        |rt| {
            explain_devptr(rt, p_host, p_device, flag, ret);
            Err(ret)
        },
        || ret,
    )
}

/// Why the vendor refused a device-pointer look-up (`ret`), from regcheck's records: the
/// findings, logged and counted, or (for an address inside a mapped registration, not at its
/// base) the runtime table's keying, warned.
#[cold]
#[inline(never)]
fn explain_devptr(rt: &Runtime, p_host: *mut c_void, p_device: *mut *mut c_void, flag: u32, ret: i32) {
    // Without a current context the vendor answers 107002 (after its own NULL checks)
    // before it looks for the registration: nothing of regcheck's records applies.
    let Some(device) = queries::device() else { return };
    let p = p_host as usize;
    let (containing, elsewhere) = state::read(|s| {
        let containing = s.host_regs.containing(device, p).copied();
        let elsewhere = match containing {
            None => s.host_regs.mapped_base_in_runtime_table(device, p).map(|(r, released)| (*r, released)),
            Some(_) => None,
        };
        (containing, elsewhere)
    });
    let null = p_device.is_null();
    let write = |o: &mut String| {
        let _ = write!(o, "pHost=0x{p:x}, pDevice={}, flag={flag}", if null { "NULL" } else { "set" });
    };
    let args = Args::Write(&write);
    if rules::devptr_clean(p, p_device.is_null(), flag, containing.as_ref()) {
        // The runtime's own table (the runtime-table path: a driver without the device-pointer
        // query) is keyed by the registration's base and answers nothing else
        // (hicann/runtime `api_impl.cc`, `ApiImpl::HostGetDevicePointer`; `register_memory.cc`,
        // `GetMappedDevicePointer`). Warned, never counted as a rejection (the vendor answered).
        if let Some(r) = containing.filter(|r| r.base != p && ret == code::RT_PARAM_INVALID) {
            let interior = [rules::check_devptr_interior(p, device, &r)];
            explain_refusal(rt, Api::C, "aclrtHostGetDevicePointer", args, &interior, i64::from(ret));
        }
        return;
    }
    let mut findings = rules::check_devptr(p, p_device.is_null(), flag, device, containing.as_ref());
    if let Some((r, released)) = elsewhere {
        rules::devptr_elsewhere(&mut findings, &r, released);
    }
    // The message names the code the caller got: the vendor's (a stubbed or other driver may
    // answer its own code for the same refusal).
    for f in &mut findings {
        f.code = Some(i64::from(ret));
    }
    if !findings.is_empty() {
        explain_refusal(rt, Api::C, "aclrtHostGetDevicePointer", args, &findings, i64::from(ret));
    }
}

/// `aclrtMallocHost(hostPtr, size)`: forwarded; the allocation is recorded (page-locked).
///
/// # Safety
/// The vendor's contract for this call: out-pointers are written only after the vendor succeeded.
pub unsafe fn malloc_host(host_ptr: *mut *mut c_void, size: usize) -> i32 {
    malloc_host_by(
        "aclrtMallocHost",
        host_ptr,
        size as u64,
        || call_vendor!(MALLOC_HOST, MallocHostFn, code::API_NOT_SUPPORT; host_ptr, size),
    )
}

/// `aclrtMallocHostWithCfg(ptr, size, cfg)`: page-locked host memory from ACL like
/// `aclrtMallocHost`'s (the configuration only adds attributes); forwarded and recorded.
///
/// # Safety
/// As for [`malloc_host`]; `cfg` goes to the vendor unread.
pub unsafe fn malloc_host_with_cfg(host_ptr: *mut *mut c_void, size: u64, cfg: *mut c_void) -> i32 {
    malloc_host_by(
        "aclrtMallocHostWithCfg",
        host_ptr,
        size,
        || call_vendor!(MALLOC_HOST_WITH_CFG, MallocHostWithCfgFn, code::API_NOT_SUPPORT; host_ptr, size, cfg),
    )
}

#[inline(always)]
unsafe fn malloc_host_by(
    call: &'static str,
    host_ptr: *mut *mut c_void,
    size: u64,
    forward: impl FnOnce() -> i32,
) -> i32 {
    run(
        call,
        |_| Ok(()),
        forward,
        |_, (), ret| {
            if *ret == code::SUCCESS && !host_ptr.is_null() {
                // SAFETY: the vendor succeeded, so *host_ptr holds the allocation.
                let p = unsafe { *host_ptr } as usize;
                if p != 0 {
                    state::with(|s| s.host_allocs.insert(p, size as usize, ()));
                }
            }
        },
    )
}

/// `aclrtFreeHost(hostPtr)`: warns when registrations inside it are still live.
///
/// # Safety
/// The vendor's contract for this call: out-pointers are written only after the vendor succeeded.
pub unsafe fn free_host(host_ptr: *mut c_void) -> i32 {
    free_host_by("aclrtFreeHost", host_ptr, || call_vendor!(FREE_HOST, PtrFn, code::API_NOT_SUPPORT; host_ptr))
}

/// `aclrtFreeHostWithDevSync(hostPtr)`: frees `aclrtMallocHost`/`aclrtMallocHostWithCfg`
/// memory after the device's work on it; checked and recorded as [`free_host`].
///
/// # Safety
/// As for [`free_host`].
pub unsafe fn free_host_with_dev_sync(host_ptr: *mut c_void) -> i32 {
    free_host_by(
        "aclrtFreeHostWithDevSync",
        host_ptr,
        || call_vendor!(FREE_HOST_WITH_DEV_SYNC, PtrFn, code::API_NOT_SUPPORT; host_ptr),
    )
}

#[inline(always)]
unsafe fn free_host_by(call: &'static str, host_ptr: *mut c_void, forward: impl FnOnce() -> i32) -> i32 {
    run(
        call,
        |rt| {
            let p = host_ptr as usize;
            let live = state::read(|s| {
                let len = s.host_allocs.get(p).map_or(1, |a| a.len.max(1));
                s.host_regs.intersecting_any_device(p, p.saturating_add(len))
            });
            let findings: Vec<Finding> = rules::check_free_host(p, &live).into_iter().collect();
            if findings.is_empty() {
                return Ok(());
            }
            match decide(rt, Api::C, call, Args::Write(&|o| write_hex(o, "hostPtr=", p)), &findings) {
                Verdict::Reject(c) => Err(c as i32),
                Verdict::Forward => Ok(()),
            }
        },
        forward,
        |_, (), ret| {
            if *ret == code::SUCCESS {
                state::with(|s| s.host_allocs.remove(host_ptr as usize));
            }
        },
    )
}

/// `aclrtMalloc(devPtr, size, policy)`: forwarded whatever the policy (HIXL ORs flags into
/// it); the allocation and its policy are recorded for the HIXL rules.
///
/// # Safety
/// The vendor's contract for this call: out-pointers are written only after the vendor succeeded.
pub unsafe fn malloc(dev_ptr: *mut *mut c_void, size: usize, policy: u32) -> i32 {
    run(
        "aclrtMalloc",
        |_| Ok(()),
        || call_vendor!(MALLOC, MallocFn, code::API_NOT_SUPPORT; dev_ptr, size, policy),
        |_, (), ret| {
            if *ret == code::SUCCESS && !dev_ptr.is_null() {
                // SAFETY: the vendor succeeded, so *dev_ptr holds the allocation.
                let p = unsafe { *dev_ptr } as usize;
                if p != 0 {
                    state::with(|s| s.dev_allocs.insert(p, size, policy));
                }
            }
        },
    )
}

/// `aclrtFree(devPtr)`: warns when HIXL, ADXL, LLM-DataDist or HCCL still has a
/// registration in the allocation (HIXL-FREE-REGISTERED).
///
/// # Safety
/// The vendor's contract for this call: out-pointers are written only after the vendor succeeded.
pub unsafe fn free(dev_ptr: *mut c_void) -> i32 {
    run(
        "aclrtFree",
        |rt| {
            let p = dev_ptr as usize;
            let live = crate::frontend::hixl::registered_in_allocation(p);
            let findings: Vec<Finding> = crate::rules::datadist::check_free_registered(p, &live).into_iter().collect();
            if findings.is_empty() {
                return Ok(());
            }
            match decide(rt, Api::C, "aclrtFree", Args::Write(&|o| write_hex(o, "devPtr=", p)), &findings) {
                Verdict::Reject(c) => Err(c as i32),
                Verdict::Forward => Ok(()),
            }
        },
        || call_vendor!(FREE, PtrFn, code::API_NOT_SUPPORT; dev_ptr),
        |_, (), ret| {
            if *ret == code::SUCCESS {
                state::with(|s| s.dev_allocs.remove(dev_ptr as usize));
            }
        },
    )
}

/// `aclrtSetDevice(deviceId)`: forwarded; counted, so that regcheck knows when the vendor
/// really resets the device.
pub fn set_device(device: i32) -> i32 {
    run(
        "aclrtSetDevice",
        |_| Ok(()),
        || call_vendor!(SET_DEVICE, DeviceFn, code::API_NOT_SUPPORT; device),
        |_, (), ret| {
            if *ret == code::SUCCESS {
                state::with(|s| *s.device_refs.entry(device).or_insert(0) += 1);
            }
        },
    )
}

/// `aclrtResetDevice(deviceId)`: when the last `aclrtSetDevice` of the device is matched, the
/// vendor releases the device, and the driver forgets the device's host registrations;
/// regcheck forgets those too (else a later, valid registration of the same memory would look
/// like an overlap). A PINNED-only registration is kept, marked: on the runtime-table path it
/// never reached the driver and the runtime's process-wide table, which only
/// `aclrtHostUnregister` erases, keeps it (hicann/runtime `register_memory.cc`).
pub fn reset_device(device: i32) -> i32 {
    run(
        "aclrtResetDevice",
        |_| Ok(()),
        || call_vendor!(RESET_DEVICE, DeviceFn, code::API_NOT_SUPPORT; device),
        |_, (), ret| record_reset("aclrtResetDevice", device, false, *ret),
    )
}

/// `aclrtResetDeviceForce(deviceId)`: the vendor releases the device whatever the count of its
/// `aclrtSetDevice` calls (hicann/runtime `device.cpp`, `aclrtResetDeviceForceImpl`,
/// `rtDeviceResetForce`); regcheck forgets what [`reset_device`] forgets at the last reset.
pub fn reset_device_force(device: i32) -> i32 {
    run(
        "aclrtResetDeviceForce",
        |_| Ok(()),
        || call_vendor!(RESET_DEVICE_FORCE, DeviceFn, code::API_NOT_SUPPORT; device),
        |_, (), ret| record_reset("aclrtResetDeviceForce", device, true, *ret),
    )
}

/// A device reset the vendor answered `ret`: the device is released at its last reset, or at
/// once when `force`d.
fn record_reset(call: &str, device: i32, force: bool, ret: i32) {
    if ret != code::SUCCESS {
        return;
    }
    let (dropped, kept) = state::with(|s| {
        let refs = s.device_refs.entry(device).or_insert(0);
        *refs = if force { 0 } else { refs.saturating_sub(1) };
        if *refs == 0 {
            s.device_refs.remove(&device);
            s.host_regs.reset_device(device)
        } else {
            (0, 0)
        }
    });
    if dropped > 0 {
        log::info!(
            target: "regcheck",
            "{call}({device}) released the device with {dropped} host registration(s) with a device address still live; the driver forgets them with the device (unregister before resetting)"
        );
    }
    if kept > 0 {
        log::info!(
            target: "regcheck",
            "{call}({device}) released the device with {kept} PINNED-only host registration(s) still live: on the runtime-table path (a driver without the pinned-register feature) the runtime's process-wide table keeps them until aclrtHostUnregister; on the driver path they end with the device"
        );
    }
}

/// `aclFinalize()`: forwarded; nothing is forgotten. The vendor's aclFinalize ends what aclInit
/// started and resets no device or context, so host registrations outlive it.
pub fn finalize() -> i32 {
    run_unrecorded("aclFinalize", |_| Ok(()), || call_vendor!(FINALIZE, VoidFn, code::API_NOT_SUPPORT;))
}
