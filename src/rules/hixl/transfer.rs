//! Transfer rules (`TransferSync`, `TransferAsync`) and the leak report at `Finalize`.

use super::*;

/// `hixl::TransferOpDesc` (24 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct TransferOpDesc {
    pub local_addr: usize,
    pub remote_addr: usize,
    pub len: usize,
}

/// Facts about one transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XferFacts {
    pub state: InstanceState,
    /// `Some(false)`: no link to the remote engine; `None`: unknown or not needed
    /// (AutoConnect, or an instance regcheck did not see).
    pub linked: Option<bool>,
    /// The engine the instance runs (`None`: not known).
    pub engine: Option<Engine>,
    /// The comm engine has a staging buffer pool (`BufferPool` absent or not `"0:0"`).
    pub pool: bool,
    /// `TransferSync` (the comm engine stages only those).
    pub sync: bool,
    /// Fabric memory engine: the first op's local range is registered host memory, so the
    /// engine translates every local range through its host registrations. (It checks no
    /// local range when the first is device memory, or it has no host registration.)
    pub fabric_host: bool,
    /// AutoConnect, and no link to the remote engine yet: the vendor connects before it looks
    /// at the ranges, and when it cannot, its NOT_CONNECTED is the answer.
    pub connects_first: bool,
}

/// How the vendor treats a transfer with unregistered local ranges on this configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unregistered {
    /// Staged through the comm engine's buffer pool: works, slower.
    Staged,
    /// Refused (or failing inside HCCL), with why.
    Fails(&'static str),
    /// The engine is unknown: regcheck warns rather than reject a call that may work.
    Unknown,
    /// Fabric memory, the first op's local address not registered: the engine asks ACL what
    /// it is (device memory: nothing checked; host memory: refused).
    FabricUnknown,
    /// AutoConnect has to connect first: the vendor's answer may be that connection's.
    ConnectsFirst,
}

/// What the vendor does with unregistered local ranges (`mixed`: the ops' local memory kinds
/// differ, with an unregistered range among them, which the staging path refuses).
pub fn unregistered_outcome(f: &XferFacts, mixed: bool) -> Unregistered {
    if f.connects_first && !matches!(unregistered_by_engine(f, mixed), Unregistered::Staged) {
        return Unregistered::ConnectsFirst;
    }
    unregistered_by_engine(f, mixed)
}

fn unregistered_by_engine(f: &XferFacts, mixed: bool) -> Unregistered {
    match f.engine {
        Some(Engine::Comm) if !f.pool => Unregistered::Fails(
            "the comm engine's buffer pool is off (BufferPool \"0:0\"), so nothing stages the range and the HCCL transfer fails",
        ),
        Some(Engine::Comm) if !f.sync => Unregistered::Fails(
            "the comm engine stages only TransferSync through its buffer pool; TransferAsync goes to HCCL, which fails on unregistered memory",
        ),
        Some(Engine::Comm) if mixed => Unregistered::Fails(
            "the comm engine would stage this call through its buffer pool, which needs every op of the call to be of one transfer type, and the ops mix registered device memory with unregistered (host) memory: PARAM_INVALID",
        ),
        Some(Engine::Comm) => Unregistered::Staged,
        Some(Engine::HixlCs) => Unregistered::Fails("the hixl_cs engine refuses ranges outside registered memory (PARAM_INVALID)"),
        Some(Engine::FabricMem) if f.fabric_host => Unregistered::Fails(
            "the fabric memory engine translates every local range through its host registrations once the first op's local address is host memory, and refuses one outside them (PARAM_INVALID)",
        ),
        // The first op's local address is not registered: the engine asks ACL whether it is
        // host memory (then the range is refused) or device memory (then nothing is checked).
        Some(Engine::FabricMem) => Unregistered::FabricUnknown,
        None => Unregistered::Unknown,
    }
}

/// Whether the vendor itself fails every transfer regcheck's rules would find something in, on
/// an initialised `hixl::Hixl` instance of this engine, with the code regcheck's finding would
/// give, leaving the state its own failure leaves: then regcheck lets the vendor answer first
/// and explains only a failure (the transfer costs the forwarding alone). True of the hixl_cs
/// engine without AutoConnect: it refuses an op list that is empty, holds an empty op or a
/// range outside the registrations (its own, adjacent ones merged, and those the link saw), and
/// a transfer to an engine it has no link to (hicann/hixl `src/hixl/cs/hixl_mem_store.cc`,
/// `BatchValidateMemoryAccess`; `src/hixl/engine/hixl_engine.cc`). Not of the comm engine,
/// whose buffer pool stages an unregistered range of a `TransferSync` and succeeds (a warning
/// on success), nor of the fabric memory engine, which passes an unregistered local device
/// range on when the first op's is (a warning on success), nor with AutoConnect, where the
/// vendor links first and drops the link when the transfer fails (the links regcheck follows),
/// nor on ADXL, whose own rules (the thread's context) warn on success.
pub fn vendor_answers_transfers(engine: Option<Engine>, auto_connect: bool) -> bool {
    engine == Some(Engine::HixlCs) && !auto_connect
}

/// What the link to the remote engine sees of an op's remote range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteView {
    /// The peer is not an engine of this process (or the link was made before regcheck saw
    /// it): nothing to judge by.
    Unknown,
    /// Inside a registration the peer had when the link was made.
    Registered(MemKind),
    /// Inside a registration the peer made after the link: the link cannot see it.
    Late,
    /// Inside no registration of the peer.
    Unregistered,
}

impl RemoteView {
    fn missing(self) -> bool {
        matches!(self, RemoteView::Late | RemoteView::Unregistered)
    }
}

/// What a scan of a transfer's ops found: counts and the first op of each problem.
#[derive(Debug, Default, Clone, Copy)]
struct OpScan {
    /// Ops with a zero length or address.
    bad: usize,
    first_bad: Option<usize>,
    /// Some op has a NULL address (the front end's own check, before the engine's).
    null_addr: bool,
    /// Ops whose local range is in no registration.
    unreg: usize,
    first_unreg: Option<usize>,
    /// Ops whose remote range the link does not see.
    far: usize,
    first_far: Option<usize>,
    /// The first such remote range was registered after the link was made.
    late: bool,
    /// The local kinds differ once a range needs the staging pool.
    mixed: bool,
}

impl OpScan {
    fn clean(&self) -> bool {
        self.first_bad.is_none() && self.first_unreg.is_none() && self.first_far.is_none()
    }
}

/// Whether [`check_transfer`] finds nothing, as one scalar: the hot path asks this first and
/// builds findings only when the answer is no. (A `Vec` returned through the layers of a
/// check is copied through memory at each one, which costs more than the rules themselves.)
/// The look-ups are taken by reference: a closure moved into a call is copied with wide loads
/// of what was just stored narrow, which stalls the processor's store forwarding.
pub fn transfer_clean(
    f: &XferFacts,
    ops: &[TransferOpDesc],
    registered: &impl Fn(usize, u64) -> Option<MemKind>,
    remote: &impl Fn(usize, u64) -> RemoteView,
) -> bool {
    let ready = matches!(f.state, InstanceState::Initialized | InstanceState::Unknown);
    ready && !ops.is_empty() && f.linked != Some(false) && scan_ops(ops, registered, remote).clean()
}

/// `HIXL-NOT-INITIALIZED`, `HIXL-XFER-NOT-CONNECTED`, `HIXL-XFER-EMPTY`,
/// `HIXL-XFER-LOCAL-UNREGISTERED`, `HIXL-XFER-REMOTE-UNREGISTERED`, through `registered`
/// (the kind of the live registration containing a local range) and `remote` (what the link
/// sees of a remote range): one pass over the ops, no allocation and no text unless something
/// is wrong.
pub fn check_transfer(
    call: &str,
    remote_name: &[u8],
    f: XferFacts,
    ops: &[TransferOpDesc],
    registered: impl Fn(usize, u64) -> Option<MemKind>,
    remote: impl Fn(usize, u64) -> RemoteView,
) -> Vec<Finding> {
    let ready = matches!(f.state, InstanceState::Initialized | InstanceState::Unknown);
    if !ready || ops.is_empty() {
        return transfer_findings(call, remote_name, f, ops, OpScan::default());
    }
    let scan = scan_ops(ops, registered, remote);
    if scan.clean() && f.linked != Some(false) {
        return Vec::new();
    }
    transfer_findings(call, remote_name, f, ops, scan)
}

fn scan_ops(
    ops: &[TransferOpDesc],
    registered: impl Fn(usize, u64) -> Option<MemKind>,
    remote: impl Fn(usize, u64) -> RemoteView,
) -> OpScan {
    let mut scan = OpScan::default();
    // The comm engine's staging path: once a range needs the pool, each op's local kind
    // (unregistered memory counts as host) must equal the previous op's.
    let (mut staged_so_far, mut prev_kind) = (false, None);
    for (i, op) in ops.iter().enumerate() {
        if op.len == 0 || op.local_addr == 0 || op.remote_addr == 0 {
            scan.bad += 1;
            scan.first_bad.get_or_insert(i);
            scan.null_addr |= op.local_addr == 0 || op.remote_addr == 0;
            continue;
        }
        let kind = registered(op.local_addr, op.len as u64);
        if kind.is_none() {
            scan.unreg += 1;
            scan.first_unreg.get_or_insert(i);
            staged_so_far = true;
        }
        let seen = remote(op.remote_addr, op.len as u64);
        if seen.missing() {
            scan.far += 1;
            if scan.first_far.is_none() {
                scan.first_far = Some(i);
                scan.late = seen == RemoteView::Late;
            }
            staged_so_far = true;
        }
        let kind = kind.unwrap_or(MemKind::Host);
        if staged_so_far && prev_kind.is_some_and(|p| p != kind) {
            scan.mixed = true;
        }
        prev_kind = Some(kind);
    }
    scan
}

/// The findings of a transfer that is not clean (`scan` is empty when the ops were not
/// scanned: the instance is not initialised, or there are no ops).
#[cold]
fn transfer_findings(
    call: &str,
    remote_name: &[u8],
    f: XferFacts,
    ops: &[TransferOpDesc],
    scan: OpScan,
) -> Vec<Finding> {
    // Text only for messages: a clean call converts nothing.
    let remote_engine = || String::from_utf8_lossy(remote_name);
    let mut out = Vec::new();
    if let Some(nf) = check_initialized(call, f.state) {
        out.push(nf);
        return out;
    }
    let not_connected = (f.linked == Some(false)).then(|| {
        Finding::new(
            RuleId::HixlXferNotConnected,
            "remote_engine",
            format!("this instance has no link to \"{}\"", remote_engine()),
            format!(
                "Connect(\"{}\") (and check that it returns SUCCESS) before transferring, or enable AutoConnect",
                remote_engine()
            ),
        )
    });
    if ops.is_empty() {
        let empty = Finding::new(RuleId::HixlXferEmpty, "op_descs", "is empty", "pass at least one TransferOpDesc");
        // The comm engine refuses an empty op list before it looks for the link
        // (hicann/hixl `src/hixl/engine/comm_engine.cc`, `TransferSync`); hixl_cs looks for
        // the link first (`src/hixl/engine/hixl_engine.cc`): the first finding's code is
        // the vendor's.
        if f.engine == Some(Engine::Comm) {
            out.push(empty);
            out.extend(not_connected);
        } else {
            out.extend(not_connected);
            out.push(empty);
        }
        return out;
    }
    // A NULL op address is refused by the front end itself (`CheckTransferOpDescs`), before
    // any engine looks for the link; a zero length only by the engine, after it.
    let not_connected = match not_connected {
        Some(nc) if !scan.null_addr => {
            out.push(nc);
            None
        }
        nc => nc,
    };
    let OpScan { bad, first_bad, unreg, first_unreg, far, first_far, late, mixed, .. } = scan;
    let more = |n: usize| if n > 1 { format!(" (and {} more op(s))", n - 1) } else { String::new() };
    if let Some(i) = first_bad {
        let op = &ops[i];
        let what = if op.len == 0 {
            "len is 0"
        } else if op.local_addr == 0 {
            "local_addr is 0"
        } else {
            "remote_addr is 0"
        };
        out.push(Finding::new(
            RuleId::HixlXferEmpty,
            "op_descs",
            format!("op {i} of {}: {what}{}", ops.len(), more(bad)),
            "give every op non-zero local_addr, remote_addr and len",
        ));
    }
    out.extend(not_connected);
    if let Some(i) = first_unreg {
        let op = &ops[i];
        let end = op.local_addr.saturating_add(op.len);
        let range = format!(
            "op {i} of {}: the local range [0x{:x}, 0x{end:x}) ({}) is not inside one live registration of this instance{}",
            ops.len(),
            op.local_addr,
            human(op.len as u64),
            more(unreg)
        );
        let fix = "RegisterMem the local buffer (before Connect) and keep each op inside one registered region";
        let finding = match unregistered_outcome(&f, mixed) {
            Unregistered::Staged => Finding::new(
                RuleId::HixlXferLocalUnregistered,
                "op_descs",
                format!("{range}: the comm engine copies it through its staging buffer pool, which works but is slower than a direct transfer"),
                format!("{fix} (a direct transfer); or set BufferPool to size the staging pool"),
            )
            .with_action(crate::rules::Action::Warn),
            // The comm engine's HCCL transfer of what nothing stages (a TransferSync without a
            // buffer pool, a TransferAsync) fails (FAILED), where the others refuse the range
            // (PARAM_INVALID) before any transfer.
            Unregistered::Fails(why) if f.engine == Some(Engine::Comm) && !mixed => {
                Finding::new(RuleId::HixlXferLocalUnregistered, "op_descs", format!("{range}: {why}"), fix)
                    .with_code(i64::from(crate::codes::hixl::FAILED))
            }
            Unregistered::Fails(why) => {
                Finding::new(RuleId::HixlXferLocalUnregistered, "op_descs", format!("{range}: {why}"), fix)
            }
            Unregistered::Unknown => Finding::new(
                RuleId::HixlXferLocalUnregistered,
                "op_descs",
                format!("{range}: whether the vendor stages it (comm engine) or refuses it depends on the engine, which regcheck does not know for this instance"),
                fix,
            )
            .with_action(crate::rules::Action::Warn),
            Unregistered::ConnectsFirst => Finding::new(
                RuleId::HixlXferLocalUnregistered,
                "op_descs",
                format!("{range}: with AutoConnect the vendor first connects to \"{}\" (no link yet), and answers NOT_CONNECTED when it cannot; once linked, the range is refused", remote_engine()),
                fix,
            )
            .with_action(crate::rules::Action::Warn),
            Unregistered::FabricUnknown => Finding::new(
                RuleId::HixlXferLocalUnregistered,
                "op_descs",
                format!("{range}: the fabric memory engine asks ACL whether the first op's local address is host memory; device memory is used as given (nothing is checked, the transfer works), host memory outside its host registrations is refused, and regcheck does not know which this is"),
                "nothing, for local device memory; RegisterMem local host memory (before Connect)",
            )
            .with_action(crate::rules::Action::Warn),
        };
        out.push(finding);
    }
    if let Some(i) = first_far {
        let op = &ops[i];
        let end = op.remote_addr.saturating_add(op.len);
        let remote_engine = remote_engine();
        let range = if late {
            format!(
                "op {i} of {}: \"{remote_engine}\" registered the remote range [0x{:x}, 0x{end:x}) ({}) after this link was made, and a link sees only the registrations its peer had when it was made (the vendor logs \"Can't find remoteBuffer by key\"){}",
                ops.len(),
                op.remote_addr,
                human(op.len as u64),
                more(far)
            )
        } else {
            format!(
                "op {i} of {}: the remote range [0x{:x}, 0x{end:x}) ({}) is not inside a registration \"{remote_engine}\" had when this link was made{}",
                ops.len(),
                op.remote_addr,
                human(op.len as u64),
                more(far)
            )
        };
        let fix = if late {
            format!("have \"{remote_engine}\" register all its memory before peers connect, or Disconnect and Connect again after it registered")
        } else {
            "keep each op's remote range inside one region the peer registered (before the link was made)".to_string()
        };
        let rule = RuleId::HixlXferRemoteUnregistered;
        out.push(match unregistered_outcome(&f, mixed) {
            Unregistered::Staged => Finding::new(
                rule,
                "op_descs",
                format!(
                    "{range}: the comm engine copies it through its staging buffer pool, which works but is slower"
                ),
                fix,
            )
            .with_action(crate::rules::Action::Warn),
            // As for the local range: HCCL's "Can't find remoteBuffer by key" is FAILED
            // (503900; vllm-ascend issue 7792, HcclBatchPut).
            Unregistered::Fails(why) if f.engine == Some(Engine::Comm) && !mixed => {
                Finding::new(rule, "op_descs", format!("{range}: {}", why.replace("local ", "")), fix)
                    .with_code(i64::from(crate::codes::hixl::FAILED))
            }
            Unregistered::Fails(why) => {
                Finding::new(rule, "op_descs", format!("{range}: {}", why.replace("local ", "")), fix)
            }
            Unregistered::Unknown | Unregistered::FabricUnknown | Unregistered::ConnectsFirst => {
                Finding::new(rule, "op_descs", range, fix).with_action(crate::rules::Action::Warn)
            }
        });
    }
    out
}

// ---------------------------------------------------------------------------------------
// Finalize / destruction
// ---------------------------------------------------------------------------------------

/// `HIXL-FINALIZE-LEAK`: registrations still live at Finalize or destruction.
pub fn check_leak<'a>(call: &str, engine: Option<&str>, regs: impl Iterator<Item = &'a HixlReg>) -> Option<Finding> {
    let regs: Vec<&HixlReg> = regs.collect();
    if regs.is_empty() {
        return None;
    }
    let total: u64 = regs.iter().map(|r| r.len).sum();
    let mut shown: Vec<String> = regs
        .iter()
        .take(LIST_MAX)
        .map(|r| format!("0x{:x} [0x{:x}, 0x{:x}) {} {}", r.handle, r.addr, r.end(), human(r.len), r.kind.name()))
        .collect();
    if regs.len() > LIST_MAX {
        shown.push(format!("and {} more", regs.len() - LIST_MAX));
    }
    let who = engine.map_or(String::new(), |e| format!(" of \"{e}\""));
    Some(Finding::new(
        RuleId::HixlFinalizeLeak,
        "this",
        format!(
            "{call}{who} with {} registration(s) ({}) never deregistered: {}",
            regs.len(),
            human(total),
            shown.join("; ")
        ),
        "DeregisterMem every handle (after Disconnect) before Finalize",
    ))
}
