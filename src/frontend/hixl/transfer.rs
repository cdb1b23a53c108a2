//! The `hixl::Hixl` transfer members (`TransferSync`, `TransferAsync`; called with `this`
//! first, Itanium ABI): the ops judged against the instance's registrations and its links'
//! views of their peers, and AutoConnect's links followed.

use super::*;
use crate::frontend::{explain_refusal, run_unrecorded};
use crate::rules::Engine;
use crate::state::hints::HintProbe;

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
    if judged == Some(true) && !f.is_adxl() {
        return Ok(side);
    }
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
    reject_or(rt, Api::Cpp, call, || xfer_args(remote, op, ops.len()), &findings)
}

/// A transfer's arguments, as a finding shows them.
fn xfer_args(remote: *const c_void, op: u32, ops: usize) -> String {
    format!(
        "remote_engine={:?}, operation={}, op_descs=[{ops} op(s)]",
        ascend_string(remote).unwrap_or_default(),
        match op {
            0 => "READ".to_string(),
            1 => "WRITE".to_string(),
            o => o.to_string(),
        },
    )
}

/// One transfer call, as the ways that answer it need it.
#[derive(Clone, Copy)]
struct Xfer {
    call: &'static str,
    /// `TransferSync` (else `TransferAsync`).
    sync: bool,
    this: *mut c_void,
    remote: *const c_void,
    op: u32,
    ops: *const c_void,
}

/// Why the vendor refused (`ret`) a transfer it answered first ([`state::vendor_first`]),
/// from regcheck's records, in regcheck's frame (the call site of a finding is found from
/// it): the findings, logged and counted, each naming the code the caller got. The vendor's
/// answer stands.
#[cold]
#[inline(never)]
fn explain_transfer(x: &Xfer, ret: u32) -> u32 {
    let Xfer { call, sync, this, remote, op, ops } = *x;
    if crate::callsite::in_adxl() {
        return ret;
    }
    run_unrecorded(
        call,
        |rt| {
            let Some(ops) = read_ops(ops) else { return Err(ret) };
            let mut findings = Vec::new();
            let mut side = XferSide::default();
            judge_transfer(call, sync, this as usize, remote, ops, Some(&mut findings), &mut side);
            for f in &mut findings {
                f.code = Some(i64::from(ret));
            }
            if !findings.is_empty() {
                let args = xfer_args(remote, op, ops.len());
                explain_refusal(rt, Api::Cpp, call, crate::report::Args::Text(&args), &findings, i64::from(ret));
            }
            Err(ret)
        },
        || ret,
    )
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
                // The clean call, first: each op's ranges surely inside a registration by the
                // hints (one load each), the look-ups asked only where a hint says nothing.
                // Where this holds, so does `rules::transfer_clean`: no op is empty, every
                // local range lies in one registration and every remote one in the view.
                None if fabric.is_none()
                    && matches!(facts.state, InstanceState::Initialized)
                    && facts.linked != Some(false)
                    && !ops.is_empty()
                    && regs.is_some_and(|r| {
                        let (near, far) = (r.hints(), view.map(PeerView::hints));
                        ops.iter().all(|op| {
                            let (l, r_addr, n) = (op.local_addr, op.remote_addr, op.len);
                            op_hinted(near, far, op)
                                || (n != 0) & (l != 0) & (r_addr != 0)
                                    && local(l, n as u64).is_some()
                                    && matches!(
                                        remote(r_addr, n as u64),
                                        RemoteView::Unknown | RemoteView::Registered(_)
                                    )
                        })
                    }) =>
                {
                    true
                }
                None => rules::transfer_clean(&facts, ops, &local, &remote),
                Some(out) => {
                    *out = rules::check_transfer(call, name, facts, ops, local, remote);
                    out.is_empty()
                }
            }
        })
    })
}

/// An op whose length and addresses are set and whose ranges the hints place inside
/// registrations: a yes is a containment regcheck saw (`src/state/hints.rs`).
#[inline(always)]
fn op_hinted(near: HintProbe<'_>, far: Option<HintProbe<'_>>, op: &TransferOpDesc) -> bool {
    let (l, r, n) = (op.local_addr, op.remote_addr, op.len);
    (n != 0) & (l != 0) & (r != 0) & near.contains(l, n) & far.is_none_or(|f| f.contains(r, n))
}

/// Whether the transfer is one the rules surely find nothing in, by the hints alone and with
/// no check phase (no re-entrancy mark, call mark, record phase nor lock): the `hixl::Hixl`
/// front, an initialised instance without AutoConnect (nothing to record) and not on fabric
/// memory (its local ranges have rules of their own), linked to the remote engine, the thread's
/// snapshot current, and every op's ranges hinted. A no says nothing: the transfer is checked
/// in full ([`check_transfer`]), which answers the same for what this answers yes (its first
/// pass is this one, with the look-ups behind the hints). A panic in it is a no.
#[inline(always)]
fn clean_by_hints(f: &'static Front, this: *mut c_void, remote: *const c_void, ops: *const c_void) -> bool {
    if f.is_adxl() || crate::callsite::busy() {
        return false;
    }
    if !state::runtime_if_ready().is_some_and(|rt| rt.mode() != crate::config::Mode::Off) {
        return false;
    }
    std::panic::catch_unwind(|| {
        let Some(ops) = read_ops(ops).filter(|o| !o.is_empty()) else { return false };
        with_ascend_bytes(remote, |name| {
            state::snapshot::read_instance_if_current(this as usize, |i| {
                if i.phase != Phase::Initialized || i.options.auto_connect || i.engine == Some(Engine::FabricMem) {
                    return false;
                }
                let view = i.peer_views.get(name);
                if view.is_none() && !i.links.contains(name) {
                    return false;
                }
                let (near, far) = (i.regs.hints(), view.map(PeerView::hints));
                ops.iter().all(|op| op_hinted(near, far, op))
            })
            .unwrap_or(false)
        })
        .unwrap_or(false)
    })
    .unwrap_or(false)
}

/// How a transfer reaches the vendor: answered by it first on an instance of
/// [`state::vendor_first`] (its failure explained), forwarded at once when it is surely clean
/// ([`clean_by_hints`]), else `checked` in full, out of line (the clean call's frame stays
/// small; a finding's call site is found past that frame and the export's, as for
/// `explain_transfer`).
#[inline(always)]
unsafe fn dispatch(f: &'static Front, x: Xfer, forward: impl Fn() -> u32, checked: impl FnOnce() -> u32) -> u32 {
    if !f.is_adxl() && state::vendor_first::holds(x.this as usize) {
        let ret = forward();
        if ret == code::SUCCESS {
            return ret;
        }
        return explain_transfer(&x, ret);
    }
    if clean_by_hints(f, x.this, x.remote, x.ops) {
        return forward();
    }
    out_of_line(checked)
}

#[inline(never)]
fn out_of_line<R>(f: impl FnOnce() -> R) -> R {
    f()
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
    let forward =
        move || call_vendor!(f.transfer_sync.symbol, TransferSyncFn, VENDOR_MISSING; this, remote, op, ops, timeout);
    let x = Xfer { call, sync: true, this, remote, op, ops };
    dispatch(f, x, forward, move || {
        // Only AutoConnect's links are recorded (`record_transfer`).
        run_member_maybe(
            f,
            call,
            |rt| {
                check_transfer(rt, f, call, true, this, remote, op, ops, Some(timeout))
                    .map(|side| side.auto_connect.then_some(side))
            },
            forward,
            |_, side, ret| record_transfer(this, remote, side, *ret),
        )
    })
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
    let forward = move || call_vendor!(f.transfer_async.symbol, TransferAsyncFn, VENDOR_MISSING; this, remote, op, ops, args, req);
    let x = Xfer { call, sync: false, this, remote, op, ops };
    dispatch(f, x, forward, move || {
        run_member_maybe(
            f,
            call,
            |rt| {
                check_transfer(rt, f, call, false, this, remote, op, ops, None)
                    .map(|side| side.auto_connect.then_some(side))
            },
            forward,
            |_, side, ret| record_transfer(this, remote, side, *ret),
        )
    })
}
