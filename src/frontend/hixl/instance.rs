//! The `hixl::Hixl` members (called with `this` first, Itanium ABI).

use super::*;
use crate::platform::net;
use crate::rules::Engine;

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
pub unsafe fn construct(f: &'static Front, this: *mut c_void, which: Structor) {
    let m = &f.ctor[which as usize];
    run_member(
        f,
        m.name,
        |_| Ok(()),
        || call_vendor!(m.symbol, ThisFn, (); this),
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
pub unsafe fn destruct(f: &'static Front, this: *mut c_void, which: Structor) {
    let m = &f.dtor[which as usize];
    run_member(
        f,
        m.name,
        |rt| {
            let gone = state::with(|s| s.hixl.instances.remove(&(this as usize)));
            if let Some(i) = gone.filter(|i| i.phase == Phase::Initialized) {
                report_leaks(rt, m.name, this, &i);
            }
            Ok(())
        },
        || call_vendor!(m.symbol, ThisFn, (); this),
        |_, (), ()| {
            state::with(|s| s.hixl.instances.remove(&(this as usize)));
        },
    )
}

fn report_leaks(rt: &Runtime, call: &str, this: *mut c_void, i: &Instance) {
    if let Some(f) = rules::check_leak(call, i.local_engine.as_deref(), i.regs.iter()) {
        // A leak report never stops Finalize or the destructor.
        let _ = decide(
            rt,
            Api::Cpp,
            call,
            crate::report::Args::Write(&|o| crate::report::write_hex(o, "this=", this as usize)),
            &[f],
        );
    }
}

/// `Status Initialize(const AscendString &local_engine, const std::map<...> &options)`.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn initialize(
    f: &'static Front,
    this: *mut c_void,
    local_engine: *const c_void,
    options: *const c_void,
) -> u32 {
    let call = f.initialize.name;
    run_member(
        f,
        call,
        |rt| {
            let name = ascend_string(local_engine);
            let who = format!("{call}({:?})", name.as_deref().unwrap_or("?"));
            let (opts, engine) = match read_options(options) {
                Some(pairs) => {
                    let mut opts = rules::parse_options(&pairs);
                    let release = known_release(rt);
                    // local_comm_res_path is read after 9.1 only (tag v9.1.0 has none): with the
                    // release assumed, an engine its file would change is unknown
                    let without_file = opts.clone();
                    let read_file = release.is_none_or(|r| r.after_9_1());
                    if let Some(path) =
                        opts.local_comm_res_path.clone().filter(|_| opts.local_comm_res.is_none() && read_file)
                    {
                        match crate::platform::files::read_small(&path, LOCAL_COMM_RES_MAX) {
                            Ok(text) => opts.set_local_comm_res_from_file(&text),
                            Err(e) => opts.problems.push(format!("local_comm_res_path {path:?}: {e}")),
                        }
                    }
                    let mut choice = rules::select_engine(&opts, rt.soc(), release);
                    if release.is_none() && opts.local_comm_res != without_file.local_comm_res {
                        let before = rules::select_engine(&without_file, rt.soc(), release);
                        if before.as_ref().ok().map(|c| c.engine) != choice.as_ref().ok().map(|c| c.engine) {
                            choice = Err("local_comm_res_path's LocalCommRes chooses the engine after 9.1 only (CANN 9.1.0 does not read it), and the release is not known (set REGCHECK_CANN_VERSION)".into());
                        }
                    }
                    match &choice {
                        Ok(c) => {
                            log::info!(target: "regcheck", "{who}: HIXL selects the {} engine ({})", c.engine.name(), c.reason)
                        }
                        Err(why) => {
                            log::info!(target: "regcheck", "{who}: the engine is unknown ({why}); rules that need it are skipped")
                        }
                    }
                    (opts, Some(choice.ok()))
                }
                None => {
                    rt.note_once("hixl-options-unreadable", log::Level::Info, || {
                        format!("{call}: the options cannot be read (GetString/GetLength not found); the engine is unknown and rules that need the transports are skipped")
                    });
                    (OptionsFacts::default(), None)
                }
            };
            note_options(rt, &who, &opts);
            if let Some(choice) = &engine {
                let mut findings = rules::check_options(&opts, choice.as_ref(), known_release(rt));
                match rules::check_fabric_mem(&opts, &ProductClass::from_soc(rt.soc()), &hdk_fact(rt)) {
                    Ok(f) => findings.extend(f),
                    Err(skip) => note_skips(rt, &Checks { findings: Vec::new(), skipped: vec![skip] }),
                }
                let args = || {
                    format!("local_engine={:?}, options={{{}}}", name.as_deref().unwrap_or("?"), opts.keys.join(", "))
                };
                reject_or(rt, Api::Cpp, call, args, &findings)?;
            }
            let ctx = queries::current_context();
            Ok((name, opts, engine.flatten().map(|c| c.engine), ctx, this_thread()))
        },
        || call_vendor!(f.initialize.symbol, InitializeFn, VENDOR_MISSING; this, local_engine, options),
        |_, (name, opts, engine, ctx, thread), ret| {
            if *ret != code::SUCCESS {
                // AdxlEngine keeps the engine it made even when its Initialize failed
                // (hicann/hixl `src/llm_datadist/api/adxl_engine_impl.cc`, `Initialize`): every
                // later call fails until an Initialize succeeds. Hixl keeps the one it had.
                if f.is_adxl() {
                    state::with(|s| {
                        if let Some(i) = s.hixl.instances.get_mut(&(this as usize)) {
                            *i = Instance::default();
                        }
                    });
                }
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
pub unsafe fn finalize(f: &'static Front, this: *mut c_void) {
    let call = f.finalize.name;
    run_member(
        f,
        call,
        |rt| {
            let inst = state::read(|s| s.hixl.instances.get(&(this as usize)).cloned());
            if let Some(i) = inst.filter(|i| i.phase == Phase::Initialized) {
                report_leaks(rt, call, this, &i);
            }
            Ok(())
        },
        || call_vendor!(f.finalize.symbol, ThisFn, (); this),
        |_, (), ()| {
            state::with(|s| {
                if let Some(i) = s.hixl.instances.get_mut(&(this as usize)) {
                    if i.phase == Phase::Initialized {
                        i.phase = Phase::Finalized;
                    }
                    i.links.clear();
                    i.peer_views.clear();
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

/// The links of an instance: its own, the instances of this process linked to it, and the
/// connections accepted on its listen port beyond those (`tcp_peers`, counted before the
/// state is locked): peers in other processes.
fn links_of(s: &crate::state::State, this: usize, i: &Instance, tcp_peers: usize) -> LinkFacts {
    let incoming: Vec<String> = i.local_engine.as_deref().map(|n| s.hixl.incoming_links(this, n)).unwrap_or_default();
    LinkFacts {
        outgoing: i.links.iter().map(|l| String::from_utf8_lossy(l).into_owned()).collect(),
        // In-process peers hold connections to the listen port too.
        foreign: tcp_peers.saturating_sub(incoming.len()),
        incoming,
    }
}

/// Connections peers hold to the listen port of the instance at `this` (0 when it has none,
/// or they cannot be counted): this process's sockets, counted without any lock held; only for
/// registrations and deregistrations, never on the transfer path. `only_if_linking`: only
/// when the instance has links of its own (0 otherwise, without asking the kernel).
fn tcp_peers(this: usize, only_if_linking: bool) -> usize {
    let name = state::read(|s| {
        let i = s.hixl.instances.get(&this)?;
        i.local_engine.clone().filter(|_| !only_if_linking || !i.links.is_empty())
    });
    name.as_deref().map_or(0, net::engine_peers)
}

/// The largest `local_comm_res_path` file HIXL reads (1 MiB).
const LOCAL_COMM_RES_MAX: u64 = 1 << 20;

/// `Status RegisterMem(const MemDesc &mem, MemType type, MemHandle &mem_handle)`.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn register_mem(
    f: &'static Front,
    this: *mut c_void,
    mem: *const MemDesc,
    ty: u32,
    handle: *mut *mut c_void,
) -> u32 {
    let call = f.register_mem.name;
    run_member(
        f,
        call,
        |rt| {
            if mem.is_null() {
                return Ok(None);
            }
            // SAFETY: `mem` is the application's `const MemDesc &`.
            let (addr, len) = unsafe { ((*mem).addr, (*mem).len as u64) };
            let a = RegArgs { api: f.api, addr, len, ty: i64::from(ty as i32) };
            let key = this as usize;
            // Where this registration is made (one word, a read of a learnt stack slot on most
            // calls), quoted only if a later registration overlaps it; found before the vendor
            // runs (its own ACL calls move the thread's call marker).
            let site = crate::callsite::caller_ip().unwrap_or(0);
            let thread = thread_facts(key);
            let mf = mem_facts(rt, &a);
            let product = ProductClass::from_soc(rt.soc());
            let hdk = hdk_fact(rt);
            let limit = rt.config.hixl_max_regs;
            let peers = tcp_peers(key, false);
            let (checks, overlapped) = state::with(|s| {
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
                    links: inst.map(|i| links_of(s, key, i, peers)),
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
                let overlapped = overlap.cloned();
                if c.has(crate::rules::RuleId::HixlRegCountNear) {
                    if let Some(i) = s.hixl.instances.get_mut(&key) {
                        i.near_warned = true;
                    }
                }
                (c, overlapped)
            });
            note_skips(rt, &checks);
            let top = crate::platform::address::user_space_top();
            let mut findings =
                crate::rules::address::first_for_hixl(checks.findings, crate::rules::address::check_hixl(&a, top));
            if let Some(r) = overlapped {
                findings = overlap_sites(rt, findings, &a, &r, site);
            }
            reject_or(rt, Api::Cpp, call, || reg_args_text(&a, None), &findings)?;
            Ok(Some((a, site)))
        },
        || call_vendor!(f.register_mem.symbol, RegisterMemFn, VENDOR_MISSING; this, mem, ty, handle),
        |_, a, ret| {
            let (Some((a, site)), true, false) = (a, *ret == code::SUCCESS, handle.is_null()) else { return };
            // SAFETY: the vendor succeeded and wrote the handle.
            let h = unsafe { *handle } as usize;
            state::with(|s| {
                // A handle given again starts afresh: earlier deregistrations of it are forgotten.
                s.hixl.dereg_sites.remove(&h);
                let i = s.hixl.instances.entry(this as usize).or_insert_with(|| Instance {
                    phase: Phase::Initialized, // the vendor accepted it: it is initialised
                    ..Instance::default()
                });
                let kind = a.kind();
                i.regs.insert(HixlReg { handle: h, addr: a.addr, len: a.len, kind, tag: String::new(), site });
            });
        },
    )
}

/// `Status DeregisterMem(MemHandle mem_handle)`.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn deregister_mem(f: &'static Front, this: *mut c_void, handle: *mut c_void) -> u32 {
    let call = f.deregister_mem.name;
    run_member(
        f,
        call,
        |rt| {
            let key = this as usize;
            let h = handle as usize;
            // Where this deregistration is made, for a later one of the same handle: one
            // frame, unwound before the vendor runs (its own ACL calls move the thread's call
            // marker); a deregistration is rare.
            let site = if h != 0 { crate::callsite::capture(1) } else { crate::callsite::Stack::EMPTY };
            let thread = if h != 0 { thread_facts(key) } else { None };
            // Peers' links to this instance never make a deregistration wrong (only its own
            // do); they are counted only to describe a finding of its own links.
            let peers = if h != 0 { tcp_peers(key, true) } else { 0 };
            let (mut findings, before, dropped) = state::with(|s| {
                let inst = s.hixl.instances.get(&key);
                let live = inst.and_then(|i| i.regs.get(h));
                // Another instance's deregistration of this handle since this instance got it
                // (a registration returning the handle forgets older ones): HCCL's shared handle.
                let dropped =
                    live.and_then(|_| s.hixl.dereg_sites.get(&h)?.iter().find(|(k, _)| *k != key)).map(|(k, st)| {
                        let name = s.hixl.instances.get(k).and_then(|i| i.local_engine.clone());
                        (name.unwrap_or_else(|| format!("the instance at 0x{k:x}")), st.clone())
                    });
                let facts = DeregFacts {
                    state: instance_state(inst),
                    live,
                    other_owner: s.hixl.owner_of(key, h),
                    dropped_by: dropped.as_ref().map(|(o, _)| o.clone()),
                    links: inst.map(|i| links_of(s, key, i, peers)),
                    engine: inst.and_then(|i| i.engine),
                };
                (
                    rules::check_dereg(f.api, h, &facts),
                    s.hixl
                        .dereg_sites
                        .get(&h)
                        .and_then(|v| v.iter().find(|(k, _)| *k == key))
                        .map(|(_, st)| st.clone()),
                    dropped,
                )
            });
            if let Some(at) = before.and_then(|st| crate::callsite::symbolize(&st, 1).into_iter().next()) {
                // Rare: symbolised only here, with no lock held (vllm-ascend #10724).
                for x in findings.iter_mut().filter(|x| x.rule == crate::rules::RuleId::HixlDeregUnknown) {
                    x.problem += &format!(" (this instance deregistered it at {})", at.text());
                }
            }
            if let Some((o, st)) = dropped {
                // The other instance's deregistration, where it was made (vllm-ascend #10724).
                if let Some(at) = crate::callsite::symbolize(&st, 1).into_iter().next() {
                    for x in findings.iter_mut().filter(|x| x.rule == crate::rules::RuleId::HixlDeregUnknown) {
                        x.problem += &format!(" ({o} deregistered it at {})", at.text());
                    }
                }
            }
            if let Some(t) = thread {
                match rules::check_thread(call, &t) {
                    Ok(f) => findings.extend(f),
                    Err(skip) => {
                        note_skips(rt, &Checks { findings: Vec::new(), skipped: vec![skip] });
                    }
                }
            }
            reject_or(rt, Api::Cpp, call, || format!("mem_handle=0x{h:x}"), &findings).map(|()| site)
        },
        || call_vendor!(f.deregister_mem.symbol, DeregisterMemFn, VENDOR_MISSING; this, handle),
        |_, site, ret| {
            if *ret == code::SUCCESS {
                state::with(|s| {
                    if let Some(i) = s.hixl.instances.get_mut(&(this as usize)) {
                        if i.regs.remove(handle as usize).is_some() {
                            let sites = &mut s.hixl.dereg_sites;
                            if sites.len() >= crate::state::hixl::DEREG_SITES_CAP {
                                sites.clear();
                            }
                            if !site.is_empty() {
                                let of_handle = sites.entry(handle as usize).or_default();
                                of_handle.retain(|(k, _)| *k != this as usize);
                                of_handle.push((this as usize, site));
                            }
                        }
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
    /// The member of `f` (`None`: `f` has no such member).
    fn member(self, f: &'static Front) -> Option<&'static Member> {
        match self {
            LinkCall::Connect => Some(&f.connect),
            LinkCall::ConnectAsync => f.connect_async.as_ref(),
            LinkCall::Disconnect => Some(&f.disconnect),
            LinkCall::DisconnectAsync => f.disconnect_async.as_ref(),
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
pub unsafe fn link(f: &'static Front, this: *mut c_void, which: LinkCall, remote: *const c_void, timeout: i32) -> u32 {
    let Some(m) = which.member(f) else { return VENDOR_MISSING };
    let call = m.name;
    run_member(
        f,
        call,
        |rt| {
            let connect = matches!(which, LinkCall::Connect | LinkCall::ConnectAsync);
            let (st, local, engine) = state::read(|s| {
                let inst = s.hixl.instances.get(&(this as usize));
                let local = inst.filter(|_| connect).and_then(|i| i.local_engine.clone());
                (instance_state(inst), local, inst.and_then(|i| i.engine))
            });
            let mut findings: Vec<Finding> = rules::check_initialized(call, st).into_iter().collect();
            if f.is_adxl() {
                findings.extend(rules::check_timeout(call, timeout));
            }
            if let Some(local) = local {
                let own = with_ascend_bytes(remote, |r| {
                    rules::check_connect_self(call, Some(local.as_bytes()), r).map(|f| f.on_engine(engine))
                });
                findings.extend(own.flatten());
            }
            if !findings.is_empty() {
                let name = ascend_string(remote).unwrap_or_else(|| "?".into());
                reject_or(
                    rt,
                    Api::Cpp,
                    call,
                    || format!("remote_engine={name:?}, timeout_in_millis={timeout}"),
                    &findings,
                )?;
            }
            Ok(with_ascend_bytes(remote, <[u8]>::to_vec))
        },
        || call_vendor!(m.symbol, ConnectFn, VENDOR_MISSING; this, remote, timeout),
        |_, name, ret| {
            let Some(name) = name else { return };
            state::with(|s| {
                let key = this as usize;
                // What a new link to an engine of this process can see: its registrations now.
                let view = match which {
                    LinkCall::Connect | LinkCall::ConnectAsync if *ret == code::SUCCESS => {
                        s.hixl.regs_of_engine(key, &name).map(PeerView::of)
                    }
                    _ => None,
                };
                let Some(i) = s.hixl.instances.get_mut(&key) else { return };
                match which {
                    LinkCall::Connect | LinkCall::ConnectAsync
                        if *ret == code::SUCCESS || *ret == code::ALREADY_CONNECTED =>
                    {
                        if let Some(v) = view {
                            i.peer_views.insert_if_absent(&name, v);
                        }
                        i.links.insert(name);
                    }
                    LinkCall::Disconnect | LinkCall::DisconnectAsync
                        if *ret == code::SUCCESS || *ret == code::NOT_CONNECTED =>
                    {
                        i.peer_views.remove(&name);
                        i.links.remove(&name);
                    }
                    _ => {}
                }
            });
        },
    )
}

/// What a transfer's check learnt for its record phase and for ADXL's own rules: whether the
/// vendor links first (AutoConnect, no link yet), and Initialize's thread and context.
#[derive(Debug, Clone, Copy, Default)]
struct XferSide {
    /// AutoConnect is on.
    auto_connect: bool,
    /// AutoConnect, and no link to the remote engine yet: the vendor connects first.
    connects_first: bool,
    /// Initialize's thread and its context (an initialised instance regcheck saw).
    init: Option<(ThreadId, Option<Option<usize>>)>,
}

impl XferSide {
    /// The thread facts of the calling thread (asks the vendor for the context only when
    /// the thread is not Initialize's).
    fn thread(&self) -> Option<ThreadFacts> {
        let (thread, init_ctx) = self.init?;
        let same_thread = thread == this_thread();
        let current_ctx = if same_thread { init_ctx } else { queries::current_context() };
        Some(ThreadFacts { same_thread, init_ctx, current_ctx })
    }
}

/// The transfer checks: O(n) for n ops, no allocation unless a rule finds something. A clean
/// transfer is judged in one pass that answers a single `bool`; findings are built by a
/// second, cold pass over the same records. `timeout`: TransferSync's (checked on ADXL).
#[allow(clippy::too_many_arguments)]
fn check_transfer(
    rt: &Runtime,
    f: &'static Front,
    call: &str,
    sync: bool,
    this: *mut c_void,
    remote: *const c_void,
    op: u32,
    ops: *const c_void,
    timeout: Option<i32>,
) -> Result<XferSide, u32> {
    let mut side = XferSide::default();
    // ADXL's own checks (hicann/hixl `src/llm_datadist/api/adxl_engine_impl.cc`): the
    // time-out, before the ops are looked at; the thread's context.
    let adxl_own = |rt: &Runtime, side: &XferSide| -> Vec<Finding> {
        let mut out: Vec<Finding> = Vec::new();
        if !f.is_adxl() {
            return out;
        }
        out.extend(timeout.and_then(|t| rules::check_timeout(call, t)));
        if let Some(t) = side.thread() {
            match rules::check_xfer_context(call, &t) {
                Ok(x) => out.extend(x),
                Err(skip) => note_skips(rt, &Checks { findings: Vec::new(), skipped: vec![skip] }),
            }
        }
        out
    };
    let Some(ops) = read_ops(ops) else {
        rt.note_once("hixl-ops-unreadable", log::Level::Info, || {
            format!("{call}: op_descs cannot be read as a std::vector<TransferOpDesc>; the transfer rules are skipped")
        });
        let own = adxl_own(rt, &side);
        reject_or(rt, Api::Cpp, call, || format!("op_descs=(unreadable), timeout_in_millis={timeout:?}"), &own)?;
        return Ok(side);
    };
    let judged = judge_transfer(call, sync, this as usize, remote, ops, None, &mut side);
    let own = adxl_own(rt, &side);
    match judged {
        Some(true) if own.is_empty() => Ok(side),
        Some(_) => match transfer_verdict(rt, call, sync, this as usize, remote, op, ops, own) {
            Ok(()) => Ok(side),
            Err(c) => Err(drop_auto_link(f, call, this, remote, side, timeout.unwrap_or(AUTO_CONNECT_TIMEOUT_MS), c)),
        },
        None => {
            rt.note_once("hixl-remote-unreadable", log::Level::Info, || {
                format!(
                    "{call}: remote_engine cannot be read (GetString/GetLength not found); the transfer rules are skipped"
                )
            });
            reject_or(
                rt,
                Api::Cpp,
                call,
                || format!("op_descs=[{} op(s)], timeout_in_millis={timeout:?}", ops.len()),
                &own,
            )?;
            Ok(side)
        }
    }
}

/// HixlEngine's time-out for the links it makes and drops itself around an asynchronous
/// transfer (hicann/hixl `src/hixl/engine/hixl_engine.cc`, `kAutoConnectTimeout`).
const AUTO_CONNECT_TIMEOUT_MS: i32 = 3000;

/// A transfer regcheck refused (`code`) on an AutoConnect instance that is linked to the peer:
/// the vendor's own failure of it would have dropped the link (hicann/hixl
/// `src/hixl/engine/hixl_engine.cc`, `TransferSync`/`TransferAsync` -> `AutoDisconnect`;
/// `src/hixl/fabric_mem/`, `DisconnectOnTransferError`), and the next transfer would link
/// afresh, seeing the peer's registrations then. So regcheck forwards the Disconnect the vendor
/// would make, and its records follow. Not on the comm engine (its own checks, whose failures
/// regcheck's transfer rules stand for, keep the link) nor where there is no link (the vendor's
/// AutoConnect would have linked and dropped it: nothing changes). Returns `code`.
#[cold]
#[inline(never)]
fn drop_auto_link(
    f: &'static Front,
    call: &str,
    this: *mut c_void,
    remote: *const c_void,
    side: XferSide,
    timeout: i32,
    code: u32,
) -> u32 {
    if !side.auto_connect || side.connects_first {
        return code;
    }
    let Some(name) = with_ascend_bytes(remote, <[u8]>::to_vec) else { return code };
    let key = this as usize;
    let linked = state::read(|s| {
        s.hixl.instances.get(&key).is_some_and(|i| {
            i.phase == Phase::Initialized
                && matches!(i.engine, Some(Engine::HixlCs | Engine::FabricMem))
                && (i.links.contains(&name) || i.peer_views.get(&name).is_some())
        })
    });
    if !linked {
        return code;
    }
    let m = &f.disconnect;
    // `this` is the live instance and `remote` the caller's AscendString the transfer was
    // called with; no lock of regcheck's is held.
    let ret = call_vendor!(m.symbol, ConnectFn, VENDOR_MISSING; this, remote, timeout);
    if ret == code::SUCCESS || ret == code::NOT_CONNECTED {
        state::with(|s| {
            if let Some(i) = s.hixl.instances.get_mut(&key) {
                i.peer_views.remove(&name);
                i.links.remove(&name);
            }
        });
    }
    log::info!(
        target: "regcheck",
        "{call}: the refused transfer's AutoConnect link to {:?} is dropped, as the vendor's own failure drops it ({} answered {ret})",
        String::from_utf8_lossy(&name),
        m.name
    );
    code
}

/// The record of a transfer: with AutoConnect, the vendor links at the first transfer to a
/// peer (hicann/hixl `src/llm_datadist/adxl/adxl_inner_engine.cc`, `TransferSync`;
/// `src/hixl/engine/hixl_engine.cc`, `AutoConnect`) and drops the link when a transfer
/// fails: the links (and what a link to an engine of this process sees) follow.
fn record_transfer(this: *mut c_void, remote: *const c_void, side: XferSide, ret: u32) {
    let linked = side.connects_first && ret == code::SUCCESS;
    let dropped = side.auto_connect && ret != code::SUCCESS;
    if !linked && !dropped {
        return;
    }
    let Some(name) = with_ascend_bytes(remote, <[u8]>::to_vec) else { return };
    state::with(|s| {
        let key = this as usize;
        let view = if linked { s.hixl.regs_of_engine(key, &name).map(PeerView::of) } else { None };
        let Some(i) = s.hixl.instances.get_mut(&key) else { return };
        if linked {
            if let Some(v) = view {
                i.peer_views.insert_if_absent(&name, v);
            }
            i.links.insert(name);
        } else {
            i.peer_views.remove(&name);
            i.links.remove(&name);
        }
    });
}

/// The findings of a transfer the first pass did not find clean (with `own`, the front end's
/// own findings, after the instance's state), logged and decided.
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn transfer_verdict(
    rt: &Runtime,
    call: &str,
    sync: bool,
    key: usize,
    remote: *const c_void,
    op: u32,
    ops: &[TransferOpDesc],
    own: Vec<Finding>,
) -> Result<(), u32> {
    let mut findings = Vec::new();
    let mut side = XferSide::default();
    judge_transfer(call, sync, key, remote, ops, Some(&mut findings), &mut side);
    let at = usize::from(findings.first().is_some_and(|f| f.rule == crate::rules::RuleId::HixlNotInitialized));
    findings.splice(at..at, own);
    let args = || {
        format!(
            "remote_engine={:?}, operation={}, op_descs=[{} op(s)]",
            ascend_string(remote).unwrap_or_default(),
            match op {
                0 => "READ".to_string(),
                1 => "WRITE".to_string(),
                o => o.to_string(),
            },
            ops.len()
        )
    };
    reject_or(rt, Api::Cpp, call, args, &findings)
}

/// What the fabric memory engine checks of a transfer's local ranges
/// (hicann/hixl `src/hixl/fabric_mem/fabric_mem_transfer_service.cc`, `NeedTransLocalAddr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FabricLocal {
    /// Nothing: the instance has no host registration, or the first op's local range is
    /// registered device memory.
    Unchecked,
    /// The first op's local range is registered host memory: every local range must lie in
    /// the host registrations.
    Host,
    /// The first op's local range is not registered: the engine asks ACL what it is.
    Unknown,
}

fn fabric_local(regs: &RegSet, ops: &[TransferOpDesc]) -> FabricLocal {
    let Some(first) = ops.first() else { return FabricLocal::Unchecked };
    if regs.total(MemKind::Host) == 0 {
        return FabricLocal::Unchecked;
    }
    match regs.host_kind_of_range(first.local_addr, first.len as u64) {
        Some(_) => FabricLocal::Host,
        None if regs.kind_of_range(first.local_addr, first.len as u64) == Some(MemKind::Device) => {
            FabricLocal::Unchecked
        }
        None => FabricLocal::Unknown,
    }
}

/// Judge a transfer against the records: `Some(true)` when no rule finds anything. With
/// `findings`, they are built there too. `None`: `remote_engine` cannot be read.
#[inline(always)]
fn judge_transfer(
    call: &str,
    sync: bool,
    key: usize,
    remote: *const c_void,
    ops: &[TransferOpDesc],
    findings: Option<&mut Vec<Finding>>,
    side: &mut XferSide,
) -> Option<bool> {
    with_ascend_bytes(remote, |name| {
        state::snapshot::read_instance(key, |s, inst| {
            // A link to an engine of this process has a view of it (made and dropped with
            // the link): one search answers both.
            let view = inst.and_then(|i| i.peer_views.get(name));
            let linked = match inst {
                Some(i) if !i.options.auto_connect && i.phase == Phase::Initialized => {
                    Some(view.is_some() || i.links.contains(name))
                }
                _ => None,
            };
            let engine = inst.and_then(|i| i.engine);
            let regs = inst.map(|i| &i.regs);
            let fabric = if engine == Some(Engine::FabricMem) { regs.map(|r| fabric_local(r, ops)) } else { None };
            let facts = XferFacts {
                state: instance_state(inst),
                linked,
                engine,
                pool: inst.is_some_and(|i| i.options.buffer_pool.stages()),
                sync,
                fabric_host: fabric == Some(FabricLocal::Host),
                connects_first: inst
                    .is_some_and(|i| i.options.auto_connect && view.is_none() && !i.links.contains(name)),
            };
            *side = XferSide {
                auto_connect: inst.is_some_and(|i| i.options.auto_connect),
                connects_first: facts.connects_first,
                init: inst
                    .filter(|i| i.phase == Phase::Initialized)
                    .and_then(|i| i.init_thread.map(|t| (t, i.init_ctx))),
            };
            // The hixl_cs memory store merges adjacent registrations for its access checks
            // (hicann/hixl `src/hixl/cs/hixl_mem_store.cc`, `CheckMergedRegionsAccess`), and
            // the fabric memory engine translates a range chunk by chunk across them
            // (`src/hixl/fabric_mem/fabric_mem_transfer_service.cc`,
            // `AppendRemoteTranslatedOps`; `fabric_mem_memory.cc`, `TranslateLocalHostOpAddrs`):
            // asked only when no single registration holds a range.
            let merges = matches!(engine, Some(Engine::HixlCs | Engine::FabricMem));
            // The peer's registrations now: only asked for when a remote range misses the view.
            let peer_now = std::cell::OnceCell::new();
            // Consecutive ops mostly fall in one registration: the last one matched is tried
            // before a look-up (the registrations cannot change while the state is read).
            let last = std::cell::Cell::new(None::<(usize, usize, MemKind)>);
            let local = |a: usize, l: u64| match regs {
                // The fabric memory engine checks no local range here.
                Some(_) if fabric == Some(FabricLocal::Unchecked) => Some(MemKind::Device),
                Some(r) if fabric.is_some() => r.host_kind_of_range(a, l),
                Some(r) => {
                    if let Some((s, e, k)) = last.get() {
                        if a >= s && usize::try_from(l).ok().and_then(|l| a.checked_add(l)).is_some_and(|end| end <= e)
                        {
                            return Some(k);
                        }
                    }
                    let span = r.span_of_range(a, l);
                    if let Some(span) = span.filter(|(_, _, k)| r.span_answers(*k)) {
                        last.set(Some(span));
                    }
                    match span {
                        Some((_, _, k)) => Some(k),
                        None if merges => r.kind_of_merged_range(a, l),
                        None => None,
                    }
                }
                // An instance regcheck did not see: nothing to judge by.
                None => Some(MemKind::Host),
            };
            let remote = |a, l| match view {
                None => RemoteView::Unknown,
                Some(v) => match v.kind_of_range(a, l).or_else(|| v.kind_of_merged_range(a, l).filter(|_| merges)) {
                    Some(k) => RemoteView::Registered(k),
                    None if peer_now
                        .get_or_init(|| s.hixl.regs_of_engine(key, name))
                        .is_some_and(|p| p.contains_range(a, l)) =>
                    {
                        RemoteView::Late
                    }
                    None => RemoteView::Unregistered,
                },
            };
            match findings {
                None => rules::transfer_clean(&facts, ops, &local, &remote),
                Some(out) => {
                    *out = rules::check_transfer(call, name, facts, ops, local, remote);
                    out.is_empty()
                }
            }
        })
    })
}

/// `Status TransferSync(const AscendString &remote_engine, TransferOp operation,
/// const std::vector<TransferOpDesc> &op_descs, int32_t timeout_in_millis)`.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn transfer_sync(
    f: &'static Front,
    this: *mut c_void,
    remote: *const c_void,
    op: u32,
    ops: *const c_void,
    timeout: i32,
) -> u32 {
    let call = f.transfer_sync.name;
    run_member(
        f,
        call,
        |rt| check_transfer(rt, f, call, true, this, remote, op, ops, Some(timeout)),
        || call_vendor!(f.transfer_sync.symbol, TransferSyncFn, VENDOR_MISSING; this, remote, op, ops, timeout),
        |_, side, ret| record_transfer(this, remote, side, *ret),
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
    f: &'static Front,
    this: *mut c_void,
    remote: *const c_void,
    op: u32,
    ops: *const c_void,
    args: *const c_void,
    req: *mut *mut c_void,
) -> u32 {
    let call = f.transfer_async.name;
    run_member(
        f,
        call,
        |rt| check_transfer(rt, f, call, false, this, remote, op, ops, None),
        || call_vendor!(f.transfer_async.symbol, TransferAsyncFn, VENDOR_MISSING; this, remote, op, ops, args, req),
        |_, side, ret| record_transfer(this, remote, side, *ret),
    )
}
