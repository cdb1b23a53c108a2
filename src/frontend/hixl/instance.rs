//! The `hixl::Hixl` members (called with `this` first, Itanium ABI).

use super::*;
use crate::platform::net;

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
            state::with(|s| {
                state::vendor_first::set(this as usize, false);
                s.hixl.instances.insert(this as usize, Instance::default())
            });
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
            let gone = state::with(|s| {
                state::vendor_first::set(this as usize, false);
                s.hixl.instances.remove(&(this as usize))
            });
            if let Some(i) = gone.filter(|i| i.phase == Phase::Initialized) {
                report_leaks(rt, m.name, this, &i);
            }
            Ok(())
        },
        || call_vendor!(m.symbol, ThisFn, (); this),
        |_, (), ()| {
            state::with(|s| {
                state::vendor_first::set(this as usize, false);
                s.hixl.instances.remove(&(this as usize))
            });
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
            // Where the vendor answers every finding of a transfer itself, it answers first.
            let first = !f.is_adxl() && rules::vendor_answers_transfers(engine, opts.auto_connect);
            state::with(|s| {
                state::vendor_first::set(this as usize, first);
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
                state::vendor_first::set(this as usize, false);
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
            let (checks, overlapped, engine) = state::with(|s| {
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
                // The engine, where the vendor's registration would reach it.
                let engine = inst.filter(|i| i.phase == Phase::Initialized).and_then(|i| i.engine);
                if c.has(crate::rules::RuleId::HixlRegCountNear) {
                    if let Some(i) = s.hixl.instances.get_mut(&key) {
                        i.near_warned = true;
                    }
                }
                (c, overlapped, engine)
            });
            note_skips(rt, &checks);
            let top = crate::platform::address::user_space_top();
            let mut findings =
                crate::rules::address::first_for_hixl(checks.findings, crate::rules::address::check_hixl(&a, top));
            if let Some(r) = overlapped {
                findings = overlap_sites(rt, findings, &a, &r, site);
            }
            // (An empty range goes to HCCL too; only one that wraps is refused before it.)
            let to_hccl = (a.addr as u64).checked_add(a.len).is_some();
            if engine == Some(crate::state::hixl_facts::Engine::Comm) && to_hccl && !findings.is_empty() {
                leave_to_hccl_without_context(&mut findings);
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

/// The comm engine registers an initialised instance's non-wrapping range (an empty one too)
/// through HCCL inside its own ACL context, which stays current on a thread that had none
/// (hicann/hixl `TemporaryRtContext` restores only a context the caller had): the vendor's
/// failure there leaves the thread with the engine's context, and later ACL calls of the
/// thread succeed. regcheck cannot make that context current itself, so on such a thread what
/// the vendor fails with its own code is left to the vendor (a warning that says so), never
/// refused before it.
#[cold]
fn leave_to_hccl_without_context(findings: &mut [crate::rules::Finding]) {
    use crate::rules::{Action, Harm};
    let fails = |f: &crate::rules::Finding| f.rule.info().harm == Harm::Fails;
    if !findings.iter().any(fails) || queries::current_context() != Some(None) {
        return;
    }
    for f in findings.iter_mut().filter(|f| fails(f)) {
        if f.action.unwrap_or(f.rule.info().default) == Action::Error {
            f.action = Some(Action::Warn);
            f.problem.push_str(" (this thread has no current ACL context: the comm engine's own failure leaves its context current on it, which regcheck cannot do, so the vendor answers)");
        }
    }
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
