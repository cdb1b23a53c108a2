//! The LLM-DataDist front end (`llm_datadist::LlmDataDist`, `libllm_datadist.so`): the
//! constructor, destructor, `Initialize`, `Finalize`, `RegisterKvCache` and `UnregisterKvCache`,
//! and HCCL's `HcclRegisterGlobalMem`/`HcclDeregisterGlobalMem` (what the comm backend
//! registers with).
//!
//! `RegisterKvCache` is checked as the vendor checks it ([`crate::rules::datadist`], in its
//! order), then each tensor region it would register (product(shape) x the type's size at each
//! address, an (address, size) pair the instance registered before skipped, as the vendor's
//! `CommMemManager` does) is judged by the HIXL rules of the engine `llm.TransferBackend`
//! picks, counted with the instance's other regions toward the 4000 registrations. With the
//! hixl backend a rejection returns HIXL's code as `LlmDataDist` maps it; with the comm backend
//! (HCCL, closed) those findings are warnings.
//!
//! The `hixl::Hixl` calls the vendor's LLM-DataDist makes while regcheck forwarded one of its
//! members are the vendor's: forwarded untouched (as for `adxl::AdxlEngine`, [`crate::callsite::in_adxl`]).

use super::*;
use crate::rules::datadist::{self as ddrules, KvCacheArgs};
use crate::state::datadist::{Backend, DdInstance, HcclReg, KvCache};
use crate::state::hixl_facts::Engine;

static CTOR: Member =
    member!(Library::Adxl, "LlmDataDist::LlmDataDist", "_ZN12llm_datadist11LlmDataDistC1EmNS_7LlmRoleE");
static DTOR: Member = member!(Library::Adxl, "LlmDataDist::~LlmDataDist", "_ZN12llm_datadist11LlmDataDistD1Ev");
static INITIALIZE: Member = member!(
    Library::Adxl,
    "LlmDataDist::Initialize",
    "_ZN12llm_datadist11LlmDataDist10InitializeERKSt3mapIN2ge12AscendStringES3_St4lessIS3_ESaISt4pairIKS3_S3_EEE"
);
static FINALIZE: Member = member!(Library::Adxl, "LlmDataDist::Finalize", "_ZN12llm_datadist11LlmDataDist8FinalizeEv");
static REGISTER_KV_CACHE: Member = member!(
    Library::Adxl,
    "LlmDataDist::RegisterKvCache",
    "_ZN12llm_datadist11LlmDataDist15RegisterKvCacheERKNS_9CacheDescERKSt6vectorImSaImEERKNS_11RegisterCfgERl"
);
static UNREGISTER_KV_CACHE: Member =
    member!(Library::Adxl, "LlmDataDist::UnregisterKvCache", "_ZN12llm_datadist11LlmDataDist17UnregisterKvCacheEl");
static HCCL_REGISTER: Member = member!(Library::Hccl, "HcclRegisterGlobalMem", "HcclRegisterGlobalMem");
static HCCL_DEREGISTER: Member = member!(Library::Hccl, "HcclDeregisterGlobalMem", "HcclDeregisterGlobalMem");

/// The Itanium names regcheck exports for `llm_datadist::LlmDataDist` (tests compare them with
/// a build of the simulator's header).
pub fn datadist_symbols() -> [&'static str; 6] {
    [&CTOR, &DTOR, &INITIALIZE, &FINALIZE, &REGISTER_KV_CACHE, &UNREGISTER_KV_CACHE].map(|m| m.symbol.name())
}

type CtorFn = unsafe extern "C-unwind" fn(*mut c_void, u64, i32);
type OptionsFn = unsafe extern "C-unwind" fn(*mut c_void, *const c_void) -> u32;
type RegisterKvCacheFn =
    unsafe extern "C-unwind" fn(*mut c_void, *const CacheDesc, *const c_void, *const c_void, *mut i64) -> u32;
type UnregisterKvCacheFn = unsafe extern "C-unwind" fn(*mut c_void, i64) -> u32;
type HcclRegisterFn = unsafe extern "C-unwind" fn(*mut CommMem, *mut *mut c_void) -> i32;
type HcclDeregisterFn = unsafe extern "C-unwind" fn(*mut c_void) -> i32;

/// `llm_datadist::CacheDesc` (168 bytes: only the first fields and the shape are read).
#[repr(C)]
pub struct CacheDesc {
    pub placement: u32,
    pub num_tensors: u32,
    pub data_type: i32,
    _pad: u32,
    /// `std::vector<int64_t> shape` (libstdc++: begin, end, end of storage).
    pub shape: [*const i64; 3],
    pub reserved: [u8; 128],
}

/// The most elements regcheck reads from a vector it is given (a corrupt vector otherwise).
const MAX_ELEMENTS: usize = 1 << 20;

/// The elements of a `const std::vector<T> &` (libstdc++: begin and end pointers).
fn read_vec<'a, T>(v: *const c_void) -> Option<&'a [T]> {
    if v.is_null() {
        return None;
    }
    // SAFETY: `v` points at a std::vector whose first two words are begin and end.
    let (begin, end) = unsafe {
        let words = v.cast::<*const T>();
        (*words, *words.add(1))
    };
    slice_of(begin, end)
}

fn slice_of<'a, T>(begin: *const T, end: *const T) -> Option<&'a [T]> {
    if begin.is_null() || end.is_null() {
        return (begin.is_null() && end.is_null()).then_some(&[]);
    }
    let size = std::mem::size_of::<T>();
    let bytes = (end as usize).checked_sub(begin as usize)?;
    if bytes % size != 0 || !(begin as usize).is_multiple_of(std::mem::align_of::<T>()) || bytes / size > MAX_ELEMENTS {
        return None;
    }
    // SAFETY: [begin, end) is the vector's storage of `bytes / size` elements.
    Some(unsafe { std::slice::from_raw_parts(begin, bytes / size) })
}

/// One member forwarded to the vendor's LLM-DataDist: the `hixl::Hixl` calls it makes are its own.
fn forward_in_vendor<R>(forward: impl FnOnce() -> R) -> R {
    let _scope = AdxlScope(crate::callsite::set_in_adxl(true));
    forward()
}

/// `LlmDataDist(uint64_t cluster_id, LlmRole role)`: a new instance, not initialised.
///
/// # Safety
/// The vendor's contract for this call (`this` is the object being constructed).
pub unsafe fn datadist_construct(this: *mut c_void, cluster_id: u64, role: i32) {
    run(
        CTOR.name,
        |_| Ok(()),
        || forward_in_vendor(|| call_vendor!(CTOR.symbol, CtorFn, (); this, cluster_id, role)),
        |_, (), ()| {
            state::with(|s| s.datadist.instances.insert(this as usize, DdInstance::default()));
        },
    )
}

/// `~LlmDataDist()`: the vendor releases the registrations (its Finalize); the state is dropped.
///
/// # Safety
/// The vendor's contract for this call.
pub unsafe fn datadist_destruct(this: *mut c_void) {
    run(
        DTOR.name,
        |_| Ok(()),
        || forward_in_vendor(|| call_vendor!(DTOR.symbol, ThisFn, (); this)),
        |_, (), ()| {
            state::with(|s| s.datadist.instances.remove(&(this as usize)));
        },
    )
}

/// The backend and HIXL engine `Initialize`'s options choose (`None`: a backend the vendor
/// refuses), with the options its HIXL engine is given (hicann/hixl
/// `src/llm_datadist/transfer_engine/transfer_engine.cc`, `hixl_transfer_engine.cc`).
fn backend_of(
    pairs: &[(String, String)],
    soc: Option<&str>,
    release: Option<crate::platform::release::CannRelease>,
) -> Option<(Backend, Option<Engine>, OptionsFacts)> {
    let get = |k: &str| pairs.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    match get("llm.TransferBackend") {
        None => Some((Backend::Comm, Some(Engine::Comm), OptionsFacts::default())),
        Some("hixl") => {
            let mut hixl = vec![("BufferPool".to_string(), "0:0".to_string())];
            for (from, to) in [
                ("llm.RdmaTrafficClass", "RdmaTrafficClass"),
                ("llm.RdmaServiceLevel", "RdmaServiceLevel"),
                ("llm.LocalCommRes", "adxl.LocalCommRes"),
                ("llm.GlobalResourceConfig", "GlobalResourceConfig"),
            ] {
                if let Some(v) = get(from) {
                    hixl.push((to.to_string(), v.to_string()));
                }
            }
            let opts = rules::parse_options(&hixl);
            let engine = rules::select_engine(&opts, soc, release).ok().map(|c| c.engine);
            Some((Backend::Hixl, engine, opts))
        }
        Some(_) => None,
    }
}

/// `Status Initialize(const std::map<AscendString, AscendString> &options)`: not checked; the
/// backend and its engine are recorded when the vendor accepts.
///
/// # Safety
/// The vendor's contract for this call.
pub unsafe fn datadist_initialize(this: *mut c_void, options: *const c_void) -> u32 {
    let call = INITIALIZE.name;
    run(
        call,
        |rt| {
            let chosen = read_options(options).and_then(|pairs| backend_of(&pairs, rt.soc(), known_release(rt)));
            if let Some((backend, engine, _)) = &chosen {
                log::info!(
                    target: "regcheck",
                    "{call}: the {} backend{}",
                    backend.name(),
                    engine.map(|e| format!(", HIXL's {} engine", e.name())).filter(|_| *backend == Backend::Hixl).unwrap_or_default()
                );
            }
            Ok((chosen, this_thread()))
        },
        || forward_in_vendor(|| call_vendor!(INITIALIZE.symbol, OptionsFn, ddrules::LLM_FAILED; this, options)),
        |_, (chosen, thread), ret| {
            if *ret != 0 {
                return;
            }
            state::with(|s| {
                let i = s.datadist.instances.entry(this as usize).or_default();
                if i.initialized {
                    return; // the vendor answers SUCCESS and keeps what it has
                }
                i.initialized = true;
                i.init_thread = Some(thread);
                if let Some((backend, engine, options)) = chosen {
                    (i.backend, i.engine, i.options) = (backend, engine, options);
                } else {
                    i.engine = None;
                }
            });
        },
    )
}

/// `void Finalize()`: the vendor releases every cache's registrations.
///
/// # Safety
/// The vendor's contract for this call.
pub unsafe fn datadist_finalize(this: *mut c_void) {
    run(
        FINALIZE.name,
        |_| Ok(()),
        || forward_in_vendor(|| call_vendor!(FINALIZE.symbol, ThisFn, (); this)),
        |_, (), ()| {
            state::with(|s| {
                if let Some(i) = s.datadist.instances.get_mut(&(this as usize)) {
                    i.initialized = false;
                    i.clear();
                }
            });
        },
    )
}

/// What a `RegisterKvCache` that passed the checks will record when the vendor accepts.
struct Planned {
    regions: Vec<(usize, u64, MemKind)>,
    site: crate::callsite::Stack,
}

/// The HIXL rules of the instance's engine on each tensor region the call would register.
fn region_findings(
    rt: &Runtime,
    key: usize,
    addrs: &[u64],
    bytes: u64,
    device: bool,
    plan: &mut Planned,
) -> Vec<Finding> {
    let ty = if device { rules::MEM_DEVICE } else { rules::MEM_HOST };
    let regions: Vec<(usize, RegArgs)> = addrs
        .iter()
        .enumerate()
        .map(|(i, a)| (i, RegArgs { api: RegApi::Hixl, addr: *a as usize, len: bytes, ty }))
        .collect();
    let facts: Vec<MemFacts> = regions.iter().map(|(_, a)| mem_facts(rt, a)).collect();
    let product = ProductClass::from_soc(rt.soc());
    let hdk = hdk_fact(rt);
    let limit = rt.config.hixl_max_regs;
    let top = crate::platform::address::user_space_top();
    let mut out = Vec::new();
    state::with(|s| {
        let Some(inst) = s.datadist.instances.get_mut(&key) else { return };
        let mut working = inst.regs.clone();
        let mut next = usize::MAX / 2;
        let mut seen = std::collections::BTreeSet::new();
        for ((i, a), mf) in regions.iter().zip(facts) {
            if inst.keys.contains_key(&(a.addr, a.len)) || !seen.insert(a.addr) {
                continue; // the vendor does not register an (address, size) pair again
            }
            let range = a.range();
            let identical = range.and_then(|_| working.identical(a.kind(), a.addr, a.len));
            let overlap = match (range, identical) {
                (Some((start, end)), None) => working.overlapping_reg(a.kind(), start, end),
                _ => None,
            };
            let f = RegFacts {
                state: InstanceState::Initialized,
                thread: None,
                links: None,
                identical,
                overlap,
                live: working.len(),
                limit,
                near_warned: inst.near_warned,
                total_of_kind: working.total(a.kind()),
                product: product.clone(),
                hdk: hdk.clone(),
                options: &inst.options,
                by_malloc_host: mf.by_malloc_host,
                dev_alloc: mf.dev_alloc,
                vmm: mf.vmm,
                engine: inst.engine,
                gaps: mf.gaps,
            };
            let c = rules::check_register(a, &f);
            if c.has(crate::rules::RuleId::HixlRegCountNear) {
                inst.near_warned = true;
            }
            let found = crate::rules::address::first_for_hixl(c.findings, crate::rules::address::check_hixl(a, top));
            for x in found.into_iter().filter(|x| x.rule != crate::rules::RuleId::HixlNotInitialized) {
                let problem = format!("tensor {i} (addrs[{i}] = 0x{:x}, {} bytes): {}", a.addr, a.len, x.problem);
                let x = Finding { problem, ..x };
                out.push(match inst.backend {
                    // HIXL's code, as LlmDataDist returns it
                    Backend::Hixl => {
                        let code = ddrules::code_from_hixl(u32::try_from(x.reject_code()).unwrap_or(0));
                        x.with_code(i64::from(code))
                    }
                    // HCCL is closed: what HIXL's comm engine would refuse is a warning here
                    Backend::Comm => x.with_action(crate::rules::Action::Warn),
                });
            }
            next += 1;
            working.insert(HixlReg {
                handle: next,
                addr: a.addr,
                len: a.len,
                kind: a.kind(),
                tag: String::new(),
                site: 0,
            });
            plan.regions.push((a.addr, a.len, a.kind()));
        }
    });
    out
}

/// `Status RegisterKvCache(const CacheDesc &, const std::vector<uint64_t> &addrs, const
/// RegisterCfg &, int64_t &cache_id)`.
///
/// # Safety
/// The vendor's contract for this call.
pub unsafe fn register_kv_cache(
    this: *mut c_void,
    desc: *const CacheDesc,
    addrs: *const c_void,
    cfg: *const c_void,
    cache_id: *mut i64,
) -> u32 {
    let call = REGISTER_KV_CACHE.name;
    run(
        call,
        |rt| {
            let key = this as usize;
            let (initialized, backend) = state::read(|s| {
                let i = s.datadist.instances.get(&key);
                (i.map(|i| i.initialized), i.map(|i| i.backend))
            });
            let list: Option<&[u64]> = read_vec(addrs);
            // SAFETY: `desc` is the application's `const CacheDesc &` (NULL tolerated).
            let d = unsafe { desc.as_ref() };
            let a = KvCacheArgs {
                placement: d.map_or(1, |d| d.placement),
                num_tensors: d.map_or(0, |d| d.num_tensors),
                data_type: d.map_or(-1, |d| d.data_type),
                shape: d.and_then(|d| slice_of(d.shape[0], d.shape[1])),
                addrs: list,
            };
            let args = || {
                format!(
                    "cache_desc={{placement={}, num_tensors={}, data_type={}, shape={:?}}}, addrs=[{} address(es)]",
                    a.placement,
                    a.num_tensors,
                    a.data_type,
                    a.shape.unwrap_or(&[]),
                    a.addrs.map_or(0, <[u64]>::len)
                )
            };
            let mut plan = Planned { regions: Vec::new(), site: crate::callsite::capture(1) };
            let bytes = match ddrules::check_register_kv_cache(initialized, &a) {
                Err(f) => {
                    reject_or(rt, Api::Cpp, call, args, &[f])?;
                    return Ok(None);
                }
                Ok(bytes) => bytes,
            };
            if let (Some(list), true, Some(_)) = (list, bytes > 0 && initialized == Some(true), backend) {
                let findings = region_findings(rt, key, list, bytes, a.placement == 1, &mut plan);
                reject_or(rt, Api::Cpp, call, args, &findings)?;
            }
            Ok(Some(plan))
        },
        || {
            forward_in_vendor(
                || call_vendor!(REGISTER_KV_CACHE.symbol, RegisterKvCacheFn, ddrules::LLM_FAILED; this, desc, addrs, cfg, cache_id),
            )
        },
        |_, plan, ret| {
            let (Some(plan), 0, false) = (plan, *ret, cache_id.is_null()) else { return };
            // SAFETY: the vendor succeeded and wrote the id.
            let id = unsafe { *cache_id };
            state::with(|s| {
                let dd = &mut s.datadist;
                let Some(i) = dd.instances.get_mut(&(this as usize)) else { return };
                let mut handles = Vec::new();
                for (addr, len, kind) in plan.regions {
                    if !i.keys.contains_key(&(addr, len)) {
                        handles.push(i.add_region(&mut dd.next_handle, addr, len, kind));
                    }
                }
                i.caches.insert(id, KvCache { handles, site: plan.site });
            });
        },
    )
}

/// `Status UnregisterKvCache(int64_t cache_id)`.
///
/// # Safety
/// The vendor's contract for this call.
pub unsafe fn unregister_kv_cache(this: *mut c_void, cache_id: i64) -> u32 {
    let call = UNREGISTER_KV_CACHE.name;
    run(
        call,
        |rt| {
            let initialized = state::read(|s| s.datadist.instances.get(&(this as usize)).map(|i| i.initialized));
            let findings: Vec<Finding> = ddrules::check_unregister_kv_cache(initialized).into_iter().collect();
            reject_or(rt, Api::Cpp, call, || format!("cache_id={cache_id}"), &findings)
        },
        || {
            forward_in_vendor(
                || call_vendor!(UNREGISTER_KV_CACHE.symbol, UnregisterKvCacheFn, ddrules::LLM_FAILED; this, cache_id),
            )
        },
        |_, (), ret| {
            if *ret == 0 {
                state::with(|s| {
                    if let Some(i) = s.datadist.instances.get_mut(&(this as usize)) {
                        i.remove_cache(cache_id);
                    }
                });
            }
        },
    )
}

/// HCCL's `HcclResult HcclRegisterGlobalMem(CommMem *mem, void **memHandle)`: forwarded and
/// recorded (not checked: HCCL is closed).
///
/// # Safety
/// The vendor's contract for this call.
pub unsafe fn hccl_register_global_mem(mem: *mut CommMem, handle: *mut *mut c_void) -> i32 {
    run(
        HCCL_REGISTER.name,
        |_| Ok(()),
        || call_vendor!(HCCL_REGISTER.symbol, HcclRegisterFn, VENDOR_MISSING as i32; mem, handle),
        |_, (), ret| {
            if *ret != 0 || mem.is_null() || handle.is_null() {
                return;
            }
            // SAFETY: the vendor succeeded: `mem` was read and `*handle` written.
            let (m, h) = unsafe { (&*mem, *handle as usize) };
            let kind = if m.ty == 0 { MemKind::Device } else { MemKind::Host };
            state::with(|s| s.datadist.hccl.insert(h, HcclReg { addr: m.addr as usize, len: m.size, kind }));
        },
    )
}

/// HCCL's `HcclResult HcclDeregisterGlobalMem(void *memHandle)`: forwarded and recorded.
///
/// # Safety
/// The vendor's contract for this call.
pub unsafe fn hccl_deregister_global_mem(handle: *mut c_void) -> i32 {
    run(
        HCCL_DEREGISTER.name,
        |_| Ok(()),
        || call_vendor!(HCCL_DEREGISTER.symbol, HcclDeregisterFn, VENDOR_MISSING as i32; handle),
        |_, (), ret| {
            if *ret == 0 {
                state::with(|s| s.datadist.hccl.remove(&(handle as usize)));
            }
        },
    )
}

/// The registrations still live in the `aclrtMalloc` allocation at `ptr` (a range of one byte
/// when regcheck did not see it allocated): LLM-DataDist's tensor regions (with where
/// `RegisterKvCache` was called), HCCL's global-memory registrations not already among them,
/// and the `hixl::Hixl` / `adxl::AdxlEngine` registrations of device memory. Symbolises the
/// call sites with no lock held. Nothing is looked at when nothing is registered.
pub fn registered_in_allocation(ptr: usize) -> Vec<ddrules::FreedReg> {
    if ptr == 0 {
        return Vec::new();
    }
    let live = state::read(|s| {
        let any = !s.datadist.instances.is_empty() || !s.datadist.hccl.is_empty() || !s.hixl.instances.is_empty();
        if !any {
            return Vec::new();
        }
        let len = s.dev_allocs.get(ptr).map_or(1, |a| a.len.max(1));
        let end = ptr.saturating_add(len);
        let mut live = s.datadist.intersecting(ptr, end);
        // an HCCL registration the comm backend made for a region already listed
        let mut seen = std::collections::BTreeSet::new();
        live.retain(|r| seen.insert((r.addr, r.len)) || !r.by.starts_with("Hccl"));
        // the HCCL registration a comm engine's RegisterMem made: listed as the engine's
        let engines: std::collections::BTreeSet<(usize, u64)> = s
            .hixl
            .instances
            .values()
            .flat_map(|i| i.regs.iter().filter(|r| r.kind == MemKind::Device).map(|r| (r.addr, r.len)))
            .collect();
        live.retain(|r| !(r.by.starts_with("Hccl") && engines.contains(&(r.addr, r.len))));
        for (this, i) in &s.hixl.instances {
            for r in i.regs.iter().filter(|r| r.kind == MemKind::Device && r.addr < end && r.end() > ptr) {
                live.push(crate::state::datadist::LiveRegion {
                    by: format!(
                        "RegisterMem of the HIXL/ADXL engine {} (this=0x{this:x}, mem_handle=0x{:x})",
                        i.local_engine.as_deref().unwrap_or("?"),
                        r.handle
                    ),
                    addr: r.addr,
                    len: r.len,
                    site: None,
                });
            }
        }
        live
    });
    live.into_iter()
        .map(|r| ddrules::FreedReg {
            by: r.by,
            addr: r.addr,
            len: r.len,
            site: r.site.and_then(|s| crate::callsite::symbolize(&s, 1).first().map(|x| x.text())),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_and_vectors() {
        assert_eq!(std::mem::size_of::<CacheDesc>(), 168);
        let v = [1u64, 2, 3];
        let words: [*const u64; 3] = [v.as_ptr(), v.as_ptr().wrapping_add(3), v.as_ptr().wrapping_add(3)];
        assert_eq!(read_vec::<u64>(words.as_ptr().cast()).unwrap(), &v);
        let empty: [*const u64; 3] = [std::ptr::null(); 3];
        assert!(read_vec::<u64>(empty.as_ptr().cast()).unwrap().is_empty());
        assert!(read_vec::<u64>(std::ptr::null()).is_none());
    }

    #[test]
    fn backends() {
        let p = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        assert_eq!(backend_of(&[], None, None).unwrap().0, Backend::Comm);
        assert_eq!(backend_of(&p("llm.TransferBackend", "hixl"), Some("Ascend910B1"), None).unwrap().0, Backend::Hixl);
        assert!(backend_of(&p("llm.TransferBackend", "rdma"), None, None).is_none());
    }
}
