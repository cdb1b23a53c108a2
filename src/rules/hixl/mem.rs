//! Registration rules (`RegisterMem`, `HixlCS*RegMem`); deregistration's are in [`super::dereg`].

use super::*;

/// `HIXL-REG-NULL-ADDR`, `-LEN-ZERO`, `-RANGE-OVERFLOW`, `-MEMTYPE`: the arguments alone.
pub fn check_args(a: &RegArgs) -> Vec<Finding> {
    let mut out = Vec::new();
    if a.addr == 0 {
        out.push(Finding::new(
            RuleId::HixlRegNullAddr,
            a.api.addr_arg(),
            "is 0",
            "pass the start address of the buffer to register",
        ));
    }
    if a.len == 0 {
        out.push(Finding::new(
            RuleId::HixlRegLenZero,
            a.api.len_arg(),
            "is 0: HIXL accepts it and the empty region fails later, at transfer time",
            "pass the buffer's length in bytes",
        ));
    }
    if a.addr != 0 && a.len != 0 && (a.addr as u128 + a.len as u128) > usize::MAX as u128 {
        out.push(Finding::new(
            RuleId::HixlRegRangeOverflow,
            a.api.len_arg(),
            format!("0x{:x} + {} wraps around the address space", a.addr, a.len),
            "pass the buffer's real length",
        ));
    }
    if !a.type_valid() {
        let (dev, host) = a.api.type_names();
        out.push(Finding::new(
            RuleId::HixlRegMemtype,
            a.api.type_arg(),
            format!(
                "{} is neither {dev} (0) nor {host} (1); HIXL would silently treat the memory as host memory",
                a.ty
            ),
            format!("pass {dev} for aclrtMalloc memory or {host} for host memory"),
        ));
    }
    out
}

/// The links that make a registration come too late (or a deregistration too early).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkFacts {
    /// Remote engines this instance connected to (a client: its server).
    pub outgoing: Vec<String>,
    /// Engines in this process connected to this one (a server: its clients).
    pub incoming: Vec<String>,
    /// Connections accepted on the instance's listen port that no engine of this process
    /// accounts for: peers in other processes.
    pub foreign: usize,
}

impl LinkFacts {
    pub fn any(&self) -> bool {
        !self.outgoing.is_empty() || !self.incoming.is_empty() || self.foreign > 0
    }

    pub(super) fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.outgoing.is_empty() {
            parts.push(format!("links to {}", list(&self.outgoing)));
        }
        if !self.incoming.is_empty() {
            parts.push(format!("links from {}", list(&self.incoming)));
        }
        if self.foreign > 0 {
            parts.push(format!(
                "{} connection(s) from peers in other processes accepted on its listen port",
                self.foreign
            ));
        }
        parts.join(" and ")
    }
}

fn list(items: &[String]) -> String {
    let shown: Vec<String> = items.iter().take(LIST_MAX).map(|s| format!("\"{s}\"")).collect();
    if items.len() > LIST_MAX {
        format!("{} and {} more", shown.join(", "), items.len() - LIST_MAX)
    } else {
        shown.join(", ")
    }
}

/// The calling thread against Initialize's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadFacts {
    pub same_thread: bool,
    /// Initialize's thread's context: `None` unknown (the vendor could not be asked or
    /// Initialize was not seen), `Some(None)` it had none.
    pub init_ctx: Option<Option<usize>>,
    /// The calling thread's context, same encoding.
    pub current_ctx: Option<Option<usize>>,
}

/// `HIXL-REG-THREAD`.
pub fn check_thread(call: &str, t: &ThreadFacts) -> Result<Option<Finding>, Skip> {
    let Some((cur, init)) = other_context(RuleId::HixlRegThread, t)? else { return Ok(None) };
    Ok(Some(Finding::new(
        RuleId::HixlRegThread,
        "(thread)",
        format!(
            "{call} is called on a thread other than Initialize's, and this thread's current ACL context ({}) is not the one Initialize's thread had ({}): the documented constraint; every published HIXL engine (8.5.0 on) switches to its own context around each call, so this works there, while earlier releases may need it",
            cur,
            init
        ),
        format!(
            "call {call} on the Initialize thread, or on that thread get the context with aclrtGetCurrentContext(&ctx) and call aclrtSetCurrentContext(ctx) on this thread first"
        ),
    )))
}

/// The calling thread's context and Initialize's, as text, when the call is made on another
/// thread with another context (`Ok(None)`: same thread or same context; `Err`: a context is
/// unknown, `rule` is skipped).
pub(crate) fn other_context(rule: RuleId, t: &ThreadFacts) -> Result<Option<(String, String)>, Skip> {
    if t.same_thread {
        return Ok(None);
    }
    let (Some(init), Some(cur)) = (t.init_ctx, t.current_ctx) else {
        return Err(Skip::new(
            rule,
            "no-context",
            "the ACL context of Initialize's thread or of the calling thread is unknown (aclrtGetCurrentContext not found, or Initialize not seen)",
        ));
    };
    let ctx = |c: Option<usize>| c.map_or("none".to_string(), |c| format!("0x{c:x}"));
    Ok((init != cur).then(|| (ctx(cur), ctx(init))))
}

/// Facts about one registration call.
#[derive(Debug, Clone)]
pub struct RegFacts<'a> {
    pub state: InstanceState,
    /// `None` for the HixlCS calls (no thread rule there).
    pub thread: Option<ThreadFacts>,
    /// `None` when the links are unknown (an endpoint regcheck did not see created).
    pub links: Option<LinkFacts>,
    /// A live registration identical to this one (same addr, len, kind).
    pub identical: Option<&'a HixlReg>,
    /// A live registration of the same kind that overlaps without being identical.
    pub overlap: Option<&'a HixlReg>,
    /// Distinct live registrations on the instance, and the limit.
    pub live: usize,
    pub limit: u64,
    pub near_warned: bool,
    /// Live bytes of this kind on the instance.
    pub total_of_kind: u64,
    pub product: ProductClass,
    pub hdk: HdkFact,
    pub options: &'a OptionsFacts,
    /// The range lies inside an `aclrtMallocHost` allocation regcheck saw.
    pub by_malloc_host: bool,
    /// The `aclrtMalloc` allocation containing the range, with its policy.
    pub dev_alloc: Option<Alloc<u32>>,
    /// The `aclrtMapMem` mapping containing the range, with its physical memory's attributes.
    pub vmm: Option<Alloc<VmmAttr>>,
    /// The engine the instance runs (`None`: not known, or a HixlCS endpoint).
    pub engine: Option<Engine>,
    /// Unmapped holes of the range; `None` when the memory map could not be read.
    pub gaps: Option<Vec<(usize, usize)>>,
}

/// The HIXL-REG-COUNT-NEAR threshold: 90% of the limit, rounded up.
pub fn near_threshold(limit: u64) -> u64 {
    (limit.saturating_mul(9)).div_ceil(10).max(1)
}

/// `ACL_MEM_MALLOC_HUGE_ONLY` and its P2P and 1 GiB-page variants.
pub fn policy_is_huge_only(policy: u32) -> bool {
    matches!(policy & 0xff, 1 | 4 | 6 | 7)
}

/// The name of an `aclrtMalloc` policy.
pub fn policy_name(policy: u32) -> String {
    let base = match policy & 0xff {
        0 => "ACL_MEM_MALLOC_HUGE_FIRST",
        1 => "ACL_MEM_MALLOC_HUGE_ONLY",
        2 => "ACL_MEM_MALLOC_NORMAL_ONLY",
        3 => "ACL_MEM_MALLOC_HUGE_FIRST_P2P",
        4 => "ACL_MEM_MALLOC_HUGE_ONLY_P2P",
        5 => "ACL_MEM_MALLOC_NORMAL_ONLY_P2P",
        6 => "ACL_MEM_MALLOC_HUGE1G_ONLY",
        7 => "ACL_MEM_MALLOC_HUGE1G_ONLY_P2P",
        _ => "an unknown policy",
    };
    if policy & !0xff != 0 {
        format!("{base} | 0x{:x}", policy & !0xff)
    } else {
        base.to_string()
    }
}

/// Every rule of a registration, in the order the vendor would fail (so the first error's
/// code is the vendor's own): state, arguments, thread, links, overlap, count, caps, origin.
pub fn check_register(a: &RegArgs, f: &RegFacts) -> Checks {
    let mut c = register_checks(a, f);
    c.findings = c
        .findings
        .into_iter()
        .map(|x| match (x.rule, a.api) {
            // The HixlCS client refuses an empty region (its memory store's register check).
            (RuleId::HixlRegLenZero, RegApi::CsClient) => x.with_action(crate::rules::Action::Error),
            // The public HixlCSServer::RegisterMem checks neither the address nor the range's
            // end (hicann/hixl `src/hixl/cs/hixl_cs_server.cc`): each endpoint hands the memory
            // to hcomm, whose answer is not known. Said, not refused.
            (RuleId::HixlRegNullAddr | RuleId::HixlRegRangeOverflow, RegApi::CsServer) => {
                let mut x = x.with_action(crate::rules::Action::Warn);
                x.problem.push_str(
                    " (HixlCSServerRegMem does not check it: each endpoint hands the memory to hcomm, which may fail it or a later transfer)",
                );
                x
            }
            _ => x.on_engine(f.engine),
        })
        .collect();
    c
}

fn register_checks(a: &RegArgs, f: &RegFacts) -> Checks {
    let call = a.api.call();
    let mut c = Checks::default();
    if a.api.is_member() {
        c.push(check_initialized(call, f.state));
    }
    c.findings.extend(check_args(a));
    if let Some(t) = &f.thread {
        match check_thread(call, t) {
            Ok(finding) => c.push(finding),
            Err(s) => c.skip(s),
        }
    }
    let Some((start, end)) = a.range() else { return c };
    let kind = a.kind();
    let new_reg = f.identical.is_none();

    // Links made before cannot see a new region.
    match &f.links {
        Some(l) if new_reg && l.any() => c.findings.push(Finding::new(
            RuleId::HixlRegAfterConnect,
            a.api.target().0,
            format!(
                "the {} already has {}: links made before this registration cannot see [0x{start:x}, 0x{end:x}) (the peer fails later with \"Can't find remoteBuffer by key\")",
                a.api.target().1,
                l.describe()
            ),
            "register all local memory before Connect (and the peer's before it connects); or Disconnect, register, and Connect again",
        )),
        Some(_) => {}
        None => c.skip(Skip::new(
            RuleId::HixlRegAfterConnect,
            "links-unknown",
            "the endpoint was created before regcheck saw it, so its connections are unknown",
        )),
    }

    if let Some(r) = f.overlap {
        let finding = Finding::new(
            RuleId::HixlRegOverlap,
            a.api.addr_arg(),
            format!(
                "[0x{start:x}, 0x{end:x}) overlaps the live {} registration [0x{:x}, 0x{:x}) ({}, handle 0x{:x}) without being identical to it",
                kind.name(),
                r.addr,
                r.end(),
                human(r.len),
                r.handle
            ),
            format!(
                "register whole allocations once (an identical addr/len/type registration returns the same handle); to change the region, {}(0x{:x}) first",
                a.api.dereg_call(),
                r.handle
            ),
        );
        // The HixlCS server checks only the memory type against its endpoints
        // (hicann/hixl `src/hixl/cs/hixl_cs_server.cc`, `RegMem`): it accepts an overlap.
        c.findings.push(if a.api == RegApi::CsServer {
            finding.with_action(crate::rules::Action::Warn)
        } else {
            finding
        });
    }

    if a.api.is_member() && new_reg {
        let new_count = f.live as u64 + 1;
        if new_count > f.limit {
            c.findings.push(Finding::new(
                RuleId::HixlRegCount,
                "mem",
                format!(
                    "this would be live registration number {new_count} on the instance; the documented maximum is {} (more risks device OOM and connect time-outs)",
                    f.limit
                ),
                "register whole allocations (one pool per memory type) instead of one region per tensor or layer; deregister what is no longer used",
            ));
        } else if new_count >= near_threshold(f.limit) && !f.near_warned {
            c.findings.push(Finding::new(
                RuleId::HixlRegCountNear,
                "mem",
                format!(
                    "this is live registration number {new_count} on the instance, 90% of the documented maximum of {} (reported once per instance)",
                    f.limit
                ),
                "register fewer, larger regions (whole allocations) before reaching the limit",
            ));
        }
    }

    if a.api.is_member() && new_reg {
        c.findings.extend(check_caps(kind, a.len, f.total_of_kind, &f.product, &f.hdk, &mut c.skipped));
    }

    // Where the memory comes from.
    match kind {
        MemKind::Host => {
            // The fabric memory engine registers memory of its own allocator or any VMM
            // mapping (hicann/hixl `src/hixl/fabric_mem/fabric_mem_memory.cc`), never
            // asking for aclrtMallocHost memory.
            if a.api.is_member() && f.engine != Some(Engine::FabricMem) {
                match f.product.a2_a3() {
                    Some(true) if !f.by_malloc_host => c.findings.push(Finding::new(
                        RuleId::HixlRegHostOrigin,
                        a.api.addr_arg(),
                        format!(
                            "on {} host memory registered with HIXL must come from aclrtMallocHost, and [0x{start:x}, 0x{end:x}) is not inside an aclrtMallocHost allocation",
                            f.product.name()
                        ),
                        "allocate the host buffer with aclrtMallocHost(&p, size) (page-locked and aligned) and register that",
                    )),
                    Some(_) => {}
                    None => c.skip(f.product.skip(RuleId::HixlRegHostOrigin)),
                }
            }
            match (f.product.ascend_950(), f.options.roce_host()) {
                (Some(true), Some(true)) if f.by_malloc_host => c.findings.push(Finding::new(
                    RuleId::HixlRegHostRoce950,
                    a.api.addr_arg(),
                    format!(
                        "on {} with a host RoCE transport ({}), memory allocated by aclrtMallocHost cannot be registered, and [0x{start:x}, 0x{end:x}) is",
                        f.product.name(),
                        f.options.transports_text()
                    ),
                    "allocate this host buffer with malloc/posix_memalign/mmap instead of aclrtMallocHost",
                )),
                (Some(true), Some(true)) | (Some(false), _) | (_, Some(false)) => {}
                (None, _) => c.skip(f.product.skip(RuleId::HixlRegHostRoce950)),
                (_, None) => c.skip(no_transport(RuleId::HixlRegHostRoce950)),
            }
            match &f.gaps {
                Some(g) if !g.is_empty() => {
                    let unmapped: usize = g.iter().map(|(s, e)| e - s).sum();
                    c.findings.push(Finding::new(
                        RuleId::HixlRegHostUnmapped,
                        a.api.addr_arg(),
                        format!(
                            "[0x{start:x}, 0x{end:x}) is not fully mapped in the process: {} unmapped in {} hole(s), the first at [0x{:x}, 0x{:x})",
                            human(unmapped as u64),
                            g.len(),
                            g[0].0,
                            g[0].1
                        ),
                        "register only memory you allocated, with its real length (a freed buffer cannot be registered)",
                    ));
                }
                Some(_) => {}
                None => c.skip(Skip::new(RuleId::HixlRegHostUnmapped, "no-memmap", "the memory map cannot be read")),
            }
        }
        MemKind::Device => {
            // Where the device memory comes from: aclrtMalloc (its policy), or a VMM mapping
            // (aclrtMapMem; its physical memory's attribute).
            let huge = match (f.dev_alloc, f.vmm) {
                (Some(alloc), _) => Some((
                    policy_is_huge_only(alloc.extra),
                    format!(
                        "the aclrtMalloc allocation at 0x{:x} ({}) made with {}",
                        alloc.base,
                        human(alloc.len as u64),
                        policy_name(alloc.extra)
                    ),
                    "aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_ONLY)",
                )),
                (None, Some(m)) => Some((
                    vmm_attr_is_huge(m.extra.mem_attr),
                    format!(
                        "the aclrtMapMem mapping at 0x{:x} ({}) of physical memory allocated with {}",
                        m.base,
                        human(m.len as u64),
                        vmm_attr_name(m.extra.mem_attr)
                    ),
                    "aclrtMallocPhysical with a huge-page memAttr (ACL_HBM_MEM_HUGE, ACL_MEM_HUGE)",
                )),
                (None, None) => None,
            };
            match huge {
                None => c.findings.push(Finding::new(
                    RuleId::HixlRegDeviceOrigin,
                    a.api.addr_arg(),
                    format!("[0x{start:x}, 0x{end:x}) is declared device memory but is not inside an aclrtMalloc allocation or an aclrtMapMem mapping regcheck saw"),
                    "allocate device memory with aclrtMalloc or the VMM API (or, for host memory, pass the host type)",
                )),
                Some((huge, origin, how)) => match f.options.hccs() {
                    Some(true) => {
                        if !huge {
                            c.findings.push(Finding::new(
                                RuleId::HixlRegDeviceHuge,
                                a.api.addr_arg(),
                                format!(
                                    "an HCCS transport is configured ({}) and [0x{start:x}, 0x{end:x}) comes from {origin}, not huge-page-only memory",
                                    f.options.transports_text(),
                                ),
                                format!("allocate device memory for HCCS with {how} (2 MiB-aligned huge pages)"),
                            ));
                        }
                        let why = format!("an HCCS transport is configured ({})", f.options.transports_text());
                        c.push(check_hccs_align(a, start, &why));
                    }
                    Some(false) => {}
                    // ADXL's users (Mooncake) name no transport: between the NPUs of one
                    // server the engine links over HCCS, which Mooncake's documentation says
                    // wants 2 MiB-aligned device memory.
                    None if a.api == RegApi::Adxl => {
                        c.push(check_hccs_align(a, start, "no transport is named, so links between the NPUs of one server go over HCCS"));
                        c.skip(no_transport(RuleId::HixlRegDeviceHuge));
                    }
                    None => c.skip(no_transport(RuleId::HixlRegDeviceHuge)),
                },
            }
        }
    }
    if let (Some(m), Some(Engine::FabricMem), true) = (f.vmm, f.engine, a.api.is_member()) {
        match check_fabric_vmm(&m, &f.hdk) {
            Ok(finding) => c.push(finding),
            Err(s) => c.skip(s),
        }
    }
    c
}

/// `HIXL-REG-DEVICE-ALIGN`: a device range on HCCS (`why` says how regcheck knows) that does
/// not start on a 2 MiB boundary.
fn check_hccs_align(a: &RegArgs, start: usize, why: &str) -> Option<Finding> {
    (!start.is_multiple_of(HCCS_ALIGN)).then(|| {
        Finding::new(
            RuleId::HixlRegDeviceAlign,
            a.api.addr_arg(),
            format!(
                "{why}, and 0x{start:x} is not 2 MiB-aligned ({} past a boundary): HCCS device-to-device transfers fail (EINVAL) on such addresses",
                human((start % HCCS_ALIGN) as u64)
            ),
            format!(
                "register from a 2 MiB boundary (the next is 0x{:x}); huge-page allocations start on one",
                (start / HCCS_ALIGN).saturating_add(1).saturating_mul(HCCS_ALIGN)
            ),
        )
    })
}

/// `HIXL-REG-FABRIC-VMM`: the fabric memory engine registers memory it did not allocate
/// through `aclrtMemRetainAllocationHandle`, which needs HDK 26.0.
fn check_fabric_vmm(m: &Alloc<VmmAttr>, hdk: &HdkFact) -> Result<Option<Finding>, Skip> {
    let min = HdkVersion::parse(HDK_FABRIC_VMM);
    match (hdk.version, min) {
        (Some(v), Some(min)) if v < min => Ok(Some(Finding::new(
            RuleId::HixlRegFabricVmm,
            "mem.addr",
            format!(
                "0x{:x} lies in an aclrtMapMem mapping ({}{}); the fabric memory engine registers such memory through aclrtMemRetainAllocationHandle, which HDK {} does not have (it needs 26.0)",
                m.base,
                human(m.len as u64),
                if m.extra.host { ", host physical memory" } else { "" },
                hdk.describe
            ),
            "upgrade the driver to HDK 26.0 or later, or allocate this memory with the fabric memory engine's own allocator",
        ))),
        (Some(_), _) => Ok(None),
        (None, _) => Err(Skip::new(
            RuleId::HixlRegFabricVmm,
            "no-hdk",
            format!("the HDK version is unknown ({})", hdk.describe),
        )),
    }
}

/// `aclrtMemAttr` values of huge-page physical memory (`ACL_*_HUGE`, `ACL_*_HUGE1G`).
pub fn vmm_attr_is_huge(attr: u32) -> bool {
    matches!(attr, 2 | 4 | 6 | 8 | 10 | 11 | 13 | 14 | 16 | 17)
}

/// The name of an `aclrtMemAttr` value.
pub fn vmm_attr_name(attr: u32) -> String {
    const NAMES: [&str; 18] = [
        "ACL_DDR_MEM",
        "ACL_HBM_MEM",
        "ACL_DDR_MEM_HUGE",
        "ACL_DDR_MEM_NORMAL",
        "ACL_HBM_MEM_HUGE",
        "ACL_HBM_MEM_NORMAL",
        "ACL_DDR_MEM_P2P_HUGE",
        "ACL_DDR_MEM_P2P_NORMAL",
        "ACL_HBM_MEM_P2P_HUGE",
        "ACL_HBM_MEM_P2P_NORMAL",
        "ACL_HBM_MEM_HUGE1G",
        "ACL_HBM_MEM_P2P_HUGE1G",
        "ACL_MEM_NORMAL",
        "ACL_MEM_HUGE",
        "ACL_MEM_HUGE1G",
        "ACL_MEM_P2P_NORMAL",
        "ACL_MEM_P2P_HUGE",
        "ACL_MEM_P2P_HUGE1G",
    ];
    NAMES.get(attr as usize).map_or_else(|| format!("memAttr {attr}"), |n| n.to_string())
}

/// The start alignment HCCS device-to-device transfers want (huge pages).
const HCCS_ALIGN: usize = 2 << 20;

pub(crate) fn no_transport(rule: RuleId) -> Skip {
    Skip::new(
        rule,
        "no-transport",
        "the options name no transport (GlobalResourceConfig comm_resource_config.protocol_desc, LocalCommRes endpoint_list or EnableUseFabricMem)",
    )
}

/// `HIXL-REG-HOST-CAP`, `HIXL-REG-DEVICE-CAP`: the totals on Atlas A2/A3.
pub fn check_caps(
    kind: MemKind,
    len: u64,
    total: u64,
    product: &ProductClass,
    hdk: &HdkFact,
    skipped: &mut Vec<Skip>,
) -> Option<Finding> {
    let rule = match kind {
        MemKind::Host => RuleId::HixlRegHostCap,
        MemKind::Device => RuleId::HixlRegDeviceCap,
    };
    match product.a2_a3() {
        Some(true) => {}
        Some(false) => return None,
        None => {
            skipped.push(product.skip(rule));
            return None;
        }
    }
    let new_total = total.saturating_add(len);
    let (cap, why, fix) = match kind {
        MemKind::Device => (
            DEVICE_CAP,
            "device memory is limited to 50 GiB per instance".to_string(),
            "register less device memory on this instance (or spread it over several instances)".to_string(),
        ),
        MemKind::Host => {
            let big = HdkVersion::parse(HDK_BIG_HOST_CAP);
            match (hdk.version, big) {
                (Some(v), Some(b)) if v >= b => (
                    HOST_CAP_NEW,
                    format!("host memory is limited to 1 TiB per instance with HDK {}", hdk.describe),
                    "register less host memory on this instance".to_string(),
                ),
                (Some(_), _) => (
                    HOST_CAP_OLD,
                    format!("host memory is limited to 20 GiB per instance with HDK {} (older than 25.5.0)", hdk.describe),
                    "register less host memory, or upgrade the driver to HDK 25.5.0 or later (1 TiB)".to_string(),
                ),
                (None, _) => (
                    HOST_CAP_OLD,
                    format!(
                        "the HDK version is unknown ({}), so the 20 GiB cap of HDK older than 25.5.0 is assumed",
                        hdk.describe
                    ),
                    "register less host memory; if the driver is HDK 25.5.0 or later (1 TiB cap), set REGCHECK_HDK_VERSION".to_string(),
                ),
            }
        }
    };
    (new_total > cap).then(|| {
        Finding::new(
            rule,
            "mem.len",
            format!(
                "on {} {why}: {} already registered + {} = {} is above {}",
                product.name(),
                human(total),
                human(len),
                human(new_total),
                human(cap)
            ),
            fix,
        )
    })
}

/// hcomm's `CommProtocol` values the HixlCS server treats as UB (`IsUbEndpoint`: UBC_TP,
/// UBC_CTP) and the one whose device endpoints may map host memory (UBC_CTP); `EndpointLocType`.
const PROTOCOL_UBC_CTP: i32 = 4;
const PROTOCOL_UBC_TP: i32 = 5;
const LOC_DEVICE: i32 = 0;
const LOC_HOST: i32 = 1;

fn protocol_name(p: i32) -> String {
    match p {
        0 => "HCCS".into(),
        1 => "ROCE".into(),
        2 => "PCIE".into(),
        3 => "SIO".into(),
        4 => "UBC_CTP".into(),
        5 => "UBC_TP".into(),
        6 => "UB_MEM".into(),
        7 => "UBOE".into(),
        8 => "HCCS_ONLY".into(),
        9 => "UBG".into(),
        p => format!("protocol {p}"),
    }
}

fn loc_name(l: i32) -> String {
    match l {
        LOC_DEVICE => "device".into(),
        LOC_HOST => "host".into(),
        l => format!("location {l}"),
    }
}

/// `HIXL-REG-NO-ENDPOINT`: `HixlCSServerRegMem` on a server with a UB endpoint (hicann/hixl
/// `src/hixl/cs/hixl_cs_server.cc`, `HixlCSServer::RegisterMem`, the same in tag v9.1.0 and
/// master): a type neither host nor device is refused ("invalid mem type"); then each endpoint
/// registers the memory it is for (`ShouldRegisterEndpointForMem`: a non-UB endpoint any memory;
/// a UB one host memory when it is on the host or maps host memory for the device, a UBC_CTP
/// device endpoint of a server whose UBC_CTP endpoints are all on the device; device memory
/// when it is on the device), and none: PARAM_INVALID ("no endpoint matches mem type"). Both
/// come before any endpoint sees the memory.
pub fn check_cs_server_endpoints(a: &RegArgs, endpoints: &[CsEndpointFact]) -> Option<Finding> {
    let ub = |e: &CsEndpointFact| e.protocol == PROTOCOL_UBC_TP || e.protocol == PROTOCOL_UBC_CTP;
    if a.api != RegApi::CsServer || endpoints.is_empty() || !endpoints.iter().any(ub) {
        return None;
    }
    let listed = endpoints
        .iter()
        .take(LIST_MAX)
        .map(|e| format!("{} on the {}", protocol_name(e.protocol), loc_name(e.loc_type)))
        .collect::<Vec<_>>()
        .join(", ");
    if !a.type_valid() {
        return Some(Finding::new(
            RuleId::HixlRegNoEndpoint,
            "mem->type",
            format!(
                "{} is neither COMM_MEM_TYPE_DEVICE (0) nor COMM_MEM_TYPE_HOST (1), refused on a server with a UB endpoint (\"invalid mem type\"): its endpoints are {listed}",
                a.ty
            ),
            "pass COMM_MEM_TYPE_DEVICE for aclrtMalloc memory or COMM_MEM_TYPE_HOST for host memory",
        ));
    }
    let ctp_all_device = endpoints.iter().all(|e| e.protocol != PROTOCOL_UBC_CTP || e.loc_type == LOC_DEVICE);
    let host = a.ty == MEM_HOST;
    let takes = |e: &CsEndpointFact| {
        !ub(e)
            || if host {
                e.loc_type == LOC_HOST || (e.loc_type == LOC_DEVICE && e.protocol == PROTOCOL_UBC_CTP && ctp_all_device)
            } else {
                e.loc_type == LOC_DEVICE
            }
    };
    if endpoints.iter().any(takes) {
        return None;
    }
    let (kind, fix) = if host {
        (
            "COMM_MEM_TYPE_HOST (host memory)",
            "create the server with a UB endpoint on the host (loc.locType ENDPOINT_LOC_TYPE_HOST) for host memory, or register device memory (aclrtMalloc) as COMM_MEM_TYPE_DEVICE",
        )
    } else {
        (
            "COMM_MEM_TYPE_DEVICE (device memory)",
            "create the server with a UB endpoint on the device (loc.locType ENDPOINT_LOC_TYPE_DEVICE) for device memory, or register host memory as COMM_MEM_TYPE_HOST",
        )
    };
    Some(Finding::new(
        RuleId::HixlRegNoEndpoint,
        "mem->type",
        format!(
            "is {kind}, which no endpoint of the server takes (\"no endpoint matches mem type\"): its endpoints are {listed} (a UB endpoint takes host memory only on the host, or a UBC_CTP one on the device when all the server's UBC_CTP endpoints are; device memory only on the device)"
        ),
        fix,
    ))
}
