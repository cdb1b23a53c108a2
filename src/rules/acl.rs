//! The ACL host-registration rules, as pure functions of the call's arguments and of facts
//! the front end gathered (memory map, registry, environment). No I/O, no FFI.

use super::products::{self, HostRegSupport};
use super::{Finding, RuleId};
use crate::platform::kernel::KernelVersion;
use crate::platform::memlock::MemlockInfo;
use crate::platform::memmap::{Backing, RangeView};
use crate::state::registry::{HostReg, HostRegApi};

pub const MAPPED: u32 = 0x2;
pub const IOMEMORY: u32 = 0x4;
pub const READONLY: u32 = 0x8;
pub const PINNED: u32 = 0x1000_0000;
/// Every bit `aclrtHostRegisterV2` knows.
pub const KNOWN_FLAGS: u32 = MAPPED | IOMEMORY | READONLY | PINNED;
/// The driver's minimum alignment.
pub const MIN_ALIGN: usize = 4096;

/// Which registration call, with its API-specific arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegCall {
    V2 { flag: u32 },
    V1 { ty: u32, dev_ptr_null: bool },
}

impl RegCall {
    pub fn name(self) -> &'static str {
        match self {
            RegCall::V2 { .. } => "aclrtHostRegisterV2",
            RegCall::V1 { .. } => "aclrtHostRegister",
        }
    }

    pub fn api(self) -> HostRegApi {
        match self {
            RegCall::V2 { .. } => HostRegApi::V2,
            RegCall::V1 { .. } => HostRegApi::V1,
        }
    }

    /// The flag bits as stored in the registry (V1: the type value).
    pub fn flags(self) -> u32 {
        match self {
            RegCall::V2 { flag } => flag,
            RegCall::V1 { ty, .. } => ty,
        }
    }

    pub fn pinned(self) -> bool {
        matches!(self, RegCall::V2 { flag } if flag & PINNED != 0)
    }
}

/// A host registration's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegArgs {
    pub call: RegCall,
    pub ptr: usize,
    pub size: u64,
}

impl RegArgs {
    /// `[ptr, ptr + size)` when it is a real range (non-NULL, non-empty, no wrap).
    pub fn range(&self) -> Option<(usize, usize)> {
        if self.ptr == 0 || self.size == 0 {
            return None;
        }
        let size = usize::try_from(self.size).ok()?;
        self.ptr.checked_add(size).map(|end| (self.ptr, end))
    }
}

/// The device a call ran on, for messages (`device 0`; -1 means `aclrtGetDevice` failed).
pub fn device_text(device: i32) -> String {
    if device < 0 {
        "the current device (unknown: aclrtGetDevice failed on this thread; call aclrtSetDevice first)".to_string()
    } else {
        format!("device {device}")
    }
}

/// Human-readable flag names: `MAPPED|PINNED`.
pub fn flag_names(flag: u32) -> String {
    let mut parts = Vec::new();
    for (bit, name) in [(MAPPED, "MAPPED"), (IOMEMORY, "IOMEMORY"), (READONLY, "READONLY"), (PINNED, "PINNED")] {
        if flag & bit != 0 {
            parts.push(name.to_string());
        }
    }
    let unknown = flag & !KNOWN_FLAGS;
    if unknown != 0 {
        parts.push(format!("unknown 0x{unknown:x}"));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join("|")
    }
}

/// Pretty byte sizes for messages.
pub fn human(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (name, unit) in UNITS {
        if bytes >= unit {
            return if bytes.is_multiple_of(unit) {
                format!("{} {name}", bytes / unit)
            } else {
                format!("{:.1} {name}", bytes as f64 / unit as f64)
            };
        }
    }
    format!("{bytes} B")
}

/// Checks on the arguments alone: NULL, size, wrap, alignment, page multiple, flags, size.
pub fn check_args(a: &RegArgs, page_size: usize, large_threshold: u64) -> Vec<Finding> {
    let mut out = Vec::new();
    if a.ptr == 0 {
        out.push(Finding::new(
            RuleId::AclHostregNull,
            "ptr",
            "is NULL",
            "pass the start of the host buffer to register",
        ));
    }
    if let RegCall::V1 { dev_ptr_null: true, .. } = a.call {
        out.push(Finding::new(
            RuleId::AclHostregNull,
            "devPtr",
            "is NULL: aclrtHostRegister writes the mapped device address there",
            "pass the address of a void* variable (void *dev; aclrtHostRegister(ptr, size, type, &dev))",
        ));
    }
    if a.size == 0 {
        out.push(Finding::new(
            RuleId::AclHostregSizeZero,
            "size",
            "is 0",
            "pass the buffer's size in bytes (a padded size rounded down to 0 means the buffer is smaller than one page)",
        ));
    }
    if a.ptr != 0 && a.size != 0 && (a.ptr as u128 + a.size as u128) > usize::MAX as u128 {
        out.push(Finding::new(
            RuleId::AclHostregRangeOverflow,
            "size",
            format!("0x{:x} + {} wraps around the address space", a.ptr, a.size),
            "pass the buffer's real size",
        ));
    }
    let align = page_size.max(MIN_ALIGN);
    if a.ptr != 0 && !a.ptr.is_multiple_of(align) {
        let up = (a.ptr / align).saturating_add(1).saturating_mul(align);
        out.push(Finding::new(
            RuleId::AclHostregAlign,
            "ptr",
            format!(
                "0x{:x} is not aligned to {align} bytes (max(4 KiB, host page size {page_size})); it is {} bytes past a boundary",
                a.ptr,
                a.ptr % align
            ),
            format!(
                "allocate with posix_memalign(&p, {align}, size) or mmap, or over-allocate by {align} bytes and register from the next boundary (0x{up:x})"
            ),
        ));
    }
    if a.size != 0 && !a.size.is_multiple_of(page_size as u64) {
        let rounded = a.size.div_ceil(page_size as u64).saturating_mul(page_size as u64);
        out.push(Finding::new(
            RuleId::AclHostregSizePages,
            "size",
            format!("{} is not a multiple of the page size {page_size}", a.size),
            format!("allocate and register {rounded} bytes (the size rounded up to whole pages)"),
        ));
    }
    match a.call {
        RegCall::V2 { flag } => {
            if flag == 0 || flag & !KNOWN_FLAGS != 0 {
                out.push(Finding::new(
                    RuleId::AclHostregFlagInvalid,
                    "flag",
                    format!("0x{flag:x} ({}) is not a valid combination", flag_names(flag)),
                    "use an OR of ACL_HOST_REG_MAPPED (0x2) and ACL_HOST_REG_PINNED (0x10000000); IOMEMORY (0x4) and READONLY (0x8) are reserved",
                ));
            } else if flag & (IOMEMORY | READONLY) != 0 {
                out.push(Finding::new(
                    RuleId::AclHostregFlagReserved,
                    "flag",
                    format!("0x{flag:x} ({}) requests a reserved option that is not supported", flag_names(flag)),
                    "drop ACL_HOST_REG_IOMEMORY/ACL_HOST_REG_READONLY; use ACL_HOST_REG_MAPPED",
                ));
            }
            if flag & PINNED != 0 && flag & MAPPED == 0 && flag & !KNOWN_FLAGS == 0 {
                out.push(Finding::new(
                    RuleId::AclHostregPinnedOnly,
                    "flag",
                    "ACL_HOST_REG_PINNED without ACL_HOST_REG_MAPPED: transfers from this memory are slower (~8-9 GB/s instead of ~23 GB/s)",
                    "use ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED where bandwidth matters",
                ));
            }
        }
        RegCall::V1 { ty, .. } => {
            if ![0, 4, 8, 12].contains(&ty) {
                out.push(
                    Finding::new(
                        RuleId::AclHostregFlagInvalid,
                        "type",
                        format!("{ty} is not an aclrtHostRegisterType (0 MAPPED, 4 IOMEMORY, 8 READONLY)"),
                        "pass ACL_HOST_REGISTER_MAPPED (0)",
                    )
                    .with_code(crate::codes::acl::RT_FEATURE_NOT_SUPPORT as i64),
                );
            } else if ty != 0 {
                out.push(Finding::new(
                    RuleId::AclHostregFlagReserved,
                    "type",
                    format!("{ty} requests IOMEMORY/READONLY, which are reserved and not supported"),
                    "pass ACL_HOST_REGISTER_MAPPED (0)",
                ));
            }
        }
    }
    if a.size > large_threshold {
        out.push(Finding::new(
            RuleId::AclHostregLarge,
            "size",
            format!("{} ({}) in one registration is above {}", a.size, human(a.size), human(large_threshold)),
            "register in chunks of a few GiB each; single registrations of hundreds of GB fail with 207001",
        ));
    }
    out
}

/// What the product table says about host registration on this SoC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProductVerdict {
    Supported,
    /// No SoC name could be had (the rule is skipped).
    UnknownSoc,
    /// A SoC string not in the table (logged and allowed).
    Unlisted(String),
    /// Sources disagree (logged as a warning, allowed).
    Conflict(&'static str),
    Unsupported(Finding),
}

pub fn check_product(call: &str, soc: Option<&str>) -> ProductVerdict {
    let Some(soc) = soc else { return ProductVerdict::UnknownSoc };
    match products::lookup(soc) {
        None => ProductVerdict::Unlisted(soc.to_string()),
        Some(p) => match p.host_register {
            HostRegSupport::Supported => ProductVerdict::Supported,
            HostRegSupport::Conflict(why) => ProductVerdict::Conflict(why),
            HostRegSupport::Unsupported => ProductVerdict::Unsupported(Finding::new(
                RuleId::AclHostregProduct,
                "(SoC)",
                format!("{soc} is an {} part, which does not support {call}", p.display),
                "run on Atlas A2, Atlas A3 or Ascend 950PR/950DT; on this product copy through device memory (aclrtMalloc + aclrtMemcpy)",
            )),
        },
    }
}

/// Where in the vendor's stack a registration rule's check happens, so that findings can be
/// put in the order the vendor fails and the first error's code is the vendor's own: the
/// ACL layer (NULL, size 0), the runtime's argument checks (flag or type bits), the runtime's
/// context check, then the driver (product, alignment, the memory itself) (hicann/runtime
/// `src/acl/aclrt_impl/memory.cpp`, `src/runtime/api/impl/api_error.cc`, `api_impl.cc`).
pub fn vendor_layer(rule: RuleId) -> u8 {
    match rule {
        RuleId::AclHostregNull | RuleId::AclHostregSizeZero => 0,
        RuleId::AclHostregFlagInvalid => 1,
        RuleId::AclHostregNoContext => 2,
        _ => 3,
    }
}

/// `has_context`: `Some(false)` when the vendor says the thread has no current context.
pub fn check_context(has_context: Option<bool>) -> Option<Finding> {
    (has_context == Some(false)).then(|| {
        Finding::new(
            RuleId::AclHostregNoContext,
            "(thread)",
            "the calling thread has no current ACL context",
            "call aclrtSetDevice(deviceId) on this thread first, or aclrtSetCurrentContext(ctx) with the context aclrtGetCurrentContext returned on the thread that set the device",
        )
    })
}

fn describe(b: &Backing) -> String {
    match b {
        Backing::Anonymous => "anonymous memory".into(),
        Backing::Heap => "the heap".into(),
        Backing::Stack => "a thread's stack".into(),
        Backing::SharedMemory(p) => format!("shared memory {p}"),
        Backing::HugeTlb(p) => format!("hugetlbfs {p}"),
        Backing::File(p) => format!("the regular file {p}"),
        Backing::Device(p) => format!("the device file {p}"),
        Backing::Special(p) => format!("the kernel mapping {p}"),
    }
}

/// Checks on what backs `[start, end)`: unmapped pages, file mappings, stack, read-only.
pub fn check_memory(start: usize, end: usize, view: &RangeView) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(&(gs, ge)) = view.gaps.first() {
        let unmapped: usize = view.gaps.iter().map(|(s, e)| e - s).sum();
        out.push(Finding::new(
            RuleId::AclHostregUnmapped,
            "ptr",
            format!(
                "[0x{start:x}, 0x{end:x}) is not fully mapped: {} unmapped in {} hole(s), the first at [0x{gs:x}, 0x{ge:x})",
                human(unmapped as u64),
                view.gaps.len()
            ),
            "register only memory you allocated, with its real size (a freed or never-allocated range cannot be registered)",
        ));
    }
    if let Some(m) = view.mappings.iter().find(|m| matches!(m.backing, Backing::File(_) | Backing::Device(_))) {
        out.push(Finding::new(
            RuleId::AclHostregFileBacked,
            "ptr",
            format!("[0x{:x}, 0x{:x}) of the range is a mapping of {}", m.start.max(start), m.end.min(end), describe(&m.backing)),
            "read the file into anonymous memory (posix_memalign, mmap MAP_ANONYMOUS, aclrtMallocHost), or use memfd / /dev/shm shared memory",
        ));
    }
    if let Some(m) = view.mappings.iter().find(|m| m.backing == Backing::Stack) {
        out.push(Finding::new(
            RuleId::AclHostregStack,
            "ptr",
            format!("[0x{:x}, 0x{:x}) of the range is a thread's stack", m.start.max(start), m.end.min(end)),
            "register heap or mmap memory that outlives the call",
        ));
    }
    if let Some(m) = view.mappings.iter().find(|m| !m.writable) {
        out.push(Finding::new(
            RuleId::AclHostregReadonlyMapping,
            "ptr",
            format!(
                "[0x{:x}, 0x{:x}) of the range is mapped {} ({})",
                m.start.max(start),
                m.end.min(end),
                if m.readable { "read-only" } else { "without access" },
                describe(&m.backing)
            ),
            "register writable memory (mprotect(..., PROT_READ | PROT_WRITE) or copy into a writable buffer)",
        ));
    }
    out
}

/// How the range is page-locked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locked {
    /// Inside an `aclrtMallocHost` allocation.
    ByMallocHost,
    /// Every mapping of the range is mlocked.
    Mlocked,
    /// Pageable memory.
    No,
    /// Not known (the map could not be read with lock state).
    Unknown,
}

impl Locked {
    pub fn is_locked(self) -> bool {
        matches!(self, Locked::ByMallocHost | Locked::Mlocked)
    }
}

/// Lock state from a view read with lock state.
pub fn locked_from_view(view: &RangeView) -> Locked {
    if view.mappings.is_empty() || !view.gaps.is_empty() {
        return Locked::Unknown;
    }
    if view.mappings.iter().any(|m| m.locked.is_none()) {
        Locked::Unknown
    } else if view.mappings.iter().all(|m| m.locked == Some(true)) {
        Locked::Mlocked
    } else {
        Locked::No
    }
}

/// The kernel whose threshold decides whether pageable memory may be registered.
#[derive(Debug, Clone)]
pub struct KernelFacts {
    pub release: String,
    pub version: Option<KernelVersion>,
    pub pageable_max: KernelVersion,
}

impl KernelFacts {
    /// `true` when the kernel is at or below the threshold (pageable memory not allowed).
    pub fn needs_page_locked(&self) -> bool {
        self.version.is_some_and(|v| v <= self.pageable_max)
    }

    /// The threshold as text: `5.10` for a threshold covering every 5.10.x.
    pub fn threshold_text(&self) -> String {
        let v = self.pageable_max;
        if v.patch == u32::MAX {
            format!("{}.{}", v.major, v.minor)
        } else {
            v.to_string()
        }
    }
}

/// Page-locking rules: old kernel with pageable memory, PINNED on locked memory.
pub fn check_locking(a: &RegArgs, locked: Locked, kernel: &KernelFacts) -> Vec<Finding> {
    let mut out = Vec::new();
    if kernel.needs_page_locked() && locked == Locked::No {
        out.push(Finding::new(
            RuleId::AclHostregPageableOldKernel,
            "ptr",
            format!(
                "the range is pageable (not from aclrtMallocHost, not mlocked) and kernel {} is at or below {}: the driver raises an exception on such memory",
                kernel.release,
                kernel.threshold_text()
            ),
            "allocate the buffer with aclrtMallocHost (page-locked), or mlock it first; set REGCHECK_PAGEABLE_KERNEL_MAX if your distribution kernel backports the fix",
        ));
    }
    if a.call.pinned() && locked.is_locked() {
        let how = if locked == Locked::ByMallocHost { "was allocated by aclrtMallocHost" } else { "is mlocked" };
        out.push(Finding::new(
            RuleId::AclHostregPinnedLocked,
            "flag",
            format!("ACL_HOST_REG_PINNED on memory that is already page-locked (it {how})"),
            "drop ACL_HOST_REG_PINNED and register with ACL_HOST_REG_MAPPED only; PINNED is for malloc/new/mmap memory",
        ));
    }
    out
}

/// Would pinning this pageable range exceed the locked-memory limit?
pub fn check_memlock(a: &RegArgs, locked: Locked, info: &MemlockInfo) -> Option<Finding> {
    if !a.call.pinned() || locked.is_locked() || info.cap_ipc_lock {
        return None;
    }
    let limit = info.limit?;
    let want = info.locked_now.saturating_add(a.size);
    (want > limit).then(|| {
        Finding::new(
            RuleId::AclHostregMemlock,
            "size",
            format!(
                "pinning {} more on top of {} already locked exceeds RLIMIT_MEMLOCK ({}) and the process lacks CAP_IPC_LOCK",
                human(a.size),
                human(info.locked_now),
                human(limit)
            ),
            "raise the limit (ulimit -l unlimited; docker --ulimit memlock=-1) or grant CAP_IPC_LOCK",
        )
    })
}

/// Overlap with a live registration on the same device.
pub fn check_overlap(device: i32, existing: Option<&HostReg>) -> Option<Finding> {
    existing.map(|r| {
        Finding::new(
            RuleId::AclHostregOverlap,
            "ptr",
            format!(
                "the range overlaps the live registration [0x{:x}, 0x{:x}) ({}, {}) on {}",
                r.base,
                r.end(),
                human(r.len),
                r.flags_text(),
                device_text(device)
            ),
            format!("register each buffer once per device; to change it, aclrtHostUnregister(0x{:x}) first", r.base),
        )
    })
}

/// `aclrtHostUnregister(ptr)`: `exact` is whether ptr is a live base on the current device;
/// `containing` the registration ptr falls inside, if any.
pub fn check_unregister(ptr: usize, device: i32, exact: bool, containing: Option<&HostReg>) -> Option<Finding> {
    if exact {
        return None;
    }
    Some(match containing {
        Some(r) => Finding::new(
            RuleId::AclHostunregNotRegistered,
            "ptr",
            format!(
                "0x{ptr:x} is inside the registration [0x{:x}, 0x{:x}) on {} but is not its base",
                r.base,
                r.end(),
                device_text(device)
            ),
            format!("pass the registered base pointer 0x{:x}", r.base),
        ),
        None => Finding::new(
            RuleId::AclHostunregNotRegistered,
            "ptr",
            format!(
                "0x{ptr:x} is not a live registration on {} (never registered, already unregistered, or registered on another device)",
                device_text(device)
            ),
            "unregister each registration once, with the pointer that was registered, on the device that was current then",
        ),
    })
}

/// `aclrtHostGetDevicePointer(pHost, pDevice, flag)`: a valid call costs four comparisons.
#[inline]
pub fn check_devptr(
    p_host: usize,
    p_device_null: bool,
    flag: u32,
    device: i32,
    containing: Option<&HostReg>,
) -> Vec<Finding> {
    if devptr_clean(p_host, p_device_null, flag, containing) {
        return Vec::new();
    }
    devptr_findings(p_host, p_device_null, flag, device, containing)
}

/// Whether [`check_devptr`] finds nothing, as one scalar (the hot path asks this first, inside
/// its read of the registrations, and builds findings only when the answer is no).
#[inline]
pub fn devptr_clean(p_host: usize, p_device_null: bool, flag: u32, containing: Option<&HostReg>) -> bool {
    p_host != 0 && !p_device_null && flag == 0 && containing.is_some_and(HostReg::mapped)
}

#[cold]
fn devptr_findings(
    p_host: usize,
    p_device_null: bool,
    flag: u32,
    device: i32,
    containing: Option<&HostReg>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if p_host == 0 {
        out.push(Finding::new(RuleId::AclDevptrNull, "pHost", "is NULL", "pass a pointer inside a registered buffer"));
    }
    if p_device_null {
        out.push(Finding::new(
            RuleId::AclDevptrNull,
            "pDevice",
            "is NULL",
            "pass the address of a void* to receive the device pointer (argument order: pHost, pDevice, flag)",
        ));
    }
    if flag != 0 {
        out.push(Finding::new(
            RuleId::AclDevptrFlag,
            "flag",
            format!("is {flag}, must be 0"),
            "pass 0 as the third argument (the order is pHost, pDevice, flag, unlike CUDA's)",
        ));
    }
    if p_host != 0 {
        match containing {
            Some(r) if r.mapped() => {}
            Some(r) => out.push(Finding::new(
                RuleId::AclDevptrNotMapped,
                "pHost",
                format!(
                    "0x{p_host:x} is inside the registration [0x{:x}, 0x{:x}) on {}, made with {} (no ACL_HOST_REG_MAPPED)",
                    r.base,
                    r.end(),
                    device_text(device),
                    r.flags_text()
                ),
                "register with ACL_HOST_REG_MAPPED (| ACL_HOST_REG_PINNED for pageable memory) to get a device address",
            )),
            None => out.push(Finding::new(
                RuleId::AclDevptrNotMapped,
                "pHost",
                format!("0x{p_host:x} is not inside any live registration on {}", device_text(device)),
                "register the buffer with aclrtHostRegisterV2(ptr, size, ACL_HOST_REG_MAPPED) on this device first",
            )),
        }
    }
    out
}

/// `aclrtFreeHost(ptr)` of an allocation with live registrations.
pub fn check_free_host(ptr: usize, live: &[HostReg]) -> Option<Finding> {
    let first = live.first()?;
    let list: Vec<String> =
        live.iter().take(4).map(|r| format!("[0x{:x}, 0x{:x}) on device {}", r.base, r.end(), r.device)).collect();
    Some(Finding::new(
        RuleId::AclFreehostRegistered,
        "hostPtr",
        format!(
            "0x{ptr:x} is freed while {} registration(s) in it are live: {}{}",
            live.len(),
            list.join(", "),
            if live.len() > 4 { ", ..." } else { "" }
        ),
        format!("call aclrtHostUnregister(0x{:x}) (each registration) before aclrtFreeHost", first.base),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::memmap::Mapping;

    const PAGE: usize = 4096;

    fn v2(ptr: usize, size: u64, flag: u32) -> RegArgs {
        RegArgs { call: RegCall::V2 { flag }, ptr, size }
    }

    fn rules(f: &[Finding]) -> Vec<RuleId> {
        f.iter().map(|f| f.rule).collect()
    }

    #[test]
    fn findings_follow_the_vendors_layers() {
        let mut v = vec![
            RuleId::AclHostregAlign,
            RuleId::AclHostregProduct,
            RuleId::AclHostregNoContext,
            RuleId::AclHostregFlagInvalid,
            RuleId::AclHostregSizeZero,
        ];
        v.sort_by_key(|r| vendor_layer(*r));
        assert_eq!(
            v,
            vec![
                RuleId::AclHostregSizeZero,
                RuleId::AclHostregFlagInvalid,
                RuleId::AclHostregNoContext,
                RuleId::AclHostregAlign,
                RuleId::AclHostregProduct,
            ],
            "the context check (107002) comes before the driver's product check (207000)"
        );
    }

    #[test]
    fn good_arguments_pass() {
        assert!(check_args(&v2(0x10000, 8192, MAPPED), PAGE, 1 << 36).is_empty());
        assert!(check_args(&v2(0x10000, 8192, MAPPED | PINNED), PAGE, 1 << 36).is_empty());
    }

    #[test]
    fn null_zero_overflow() {
        assert_eq!(rules(&check_args(&v2(0, 4096, MAPPED), PAGE, u64::MAX)), vec![RuleId::AclHostregNull]);
        assert_eq!(rules(&check_args(&v2(0x1000, 0, MAPPED), PAGE, u64::MAX)), vec![RuleId::AclHostregSizeZero]);
        let f = check_args(&v2(usize::MAX - 4095, 8192, MAPPED), PAGE, u64::MAX);
        assert!(rules(&f).contains(&RuleId::AclHostregRangeOverflow));
        let v1 = RegArgs { call: RegCall::V1 { ty: 0, dev_ptr_null: true }, ptr: 0x1000, size: 4096 };
        let f = check_args(&v1, PAGE, u64::MAX);
        assert_eq!(rules(&f), vec![RuleId::AclHostregNull]);
        assert_eq!(f[0].arg, "devPtr");
        assert_eq!(v2(0, 1, 2).range(), None);
        assert_eq!(v2(0x1000, 0x1000, 2).range(), Some((0x1000, 0x2000)));
    }

    #[test]
    fn alignment_uses_the_larger_of_4k_and_page() {
        let f = check_args(&v2(0x10010, 4096, MAPPED), PAGE, u64::MAX);
        assert_eq!(rules(&f), vec![RuleId::AclHostregAlign]);
        assert!(f[0].problem.contains("16 bytes past"), "{}", f[0].problem);
        assert!(f[0].fix.contains("0x11000"), "{}", f[0].fix);
        // 64 KiB pages: 4 KiB alignment is not enough.
        let f = check_args(&v2(0x11000, 65536, MAPPED), 65536, u64::MAX);
        assert_eq!(rules(&f), vec![RuleId::AclHostregAlign]);
        assert!(check_args(&v2(0x20000, 65536, MAPPED), 65536, u64::MAX).is_empty());
    }

    #[test]
    fn size_pages_warns_with_rounded_size() {
        let f = check_args(&v2(0x10000, 5000, MAPPED), PAGE, u64::MAX);
        assert_eq!(rules(&f), vec![RuleId::AclHostregSizePages]);
        assert!(f[0].fix.contains("8192"));
    }

    #[test]
    fn flags() {
        for bad in [0, 0x1, 0x20, MAPPED | 0x100] {
            assert_eq!(
                rules(&check_args(&v2(0x10000, 4096, bad), PAGE, u64::MAX)),
                vec![RuleId::AclHostregFlagInvalid],
                "{bad:x}"
            );
        }
        for reserved in [IOMEMORY, READONLY, MAPPED | READONLY] {
            assert_eq!(
                rules(&check_args(&v2(0x10000, 4096, reserved), PAGE, u64::MAX)),
                vec![RuleId::AclHostregFlagReserved]
            );
        }
        assert_eq!(rules(&check_args(&v2(0x10000, 4096, PINNED), PAGE, u64::MAX)), vec![RuleId::AclHostregPinnedOnly]);
        let v1 = |ty| RegArgs { call: RegCall::V1 { ty, dev_ptr_null: false }, ptr: 0x10000, size: 4096 };
        assert!(check_args(&v1(0), PAGE, u64::MAX).is_empty());
        assert_eq!(rules(&check_args(&v1(4), PAGE, u64::MAX)), vec![RuleId::AclHostregFlagReserved]);
        assert_eq!(rules(&check_args(&v1(12), PAGE, u64::MAX)), vec![RuleId::AclHostregFlagReserved]);
        assert_eq!(rules(&check_args(&v1(3), PAGE, u64::MAX)), vec![RuleId::AclHostregFlagInvalid]);
        assert_eq!(flag_names(MAPPED | PINNED | 0x40), "MAPPED|PINNED|unknown 0x40");
    }

    #[test]
    fn large() {
        let f = check_args(&v2(0x10000, 1 << 37, MAPPED), PAGE, 1 << 36);
        assert_eq!(rules(&f), vec![RuleId::AclHostregLarge]);
        assert!(f[0].problem.contains("128 GiB"), "{}", f[0].problem);
    }

    #[test]
    fn product() {
        assert_eq!(check_product("x", Some("Ascend910B1")), ProductVerdict::Supported);
        assert_eq!(check_product("x", None), ProductVerdict::UnknownSoc);
        assert!(matches!(check_product("x", Some("Ascend950DT_9571")), ProductVerdict::Conflict(_)));
        assert!(matches!(check_product("x", Some("Foo")), ProductVerdict::Unlisted(_)));
        match check_product("aclrtHostRegisterV2", Some("Ascend910B")) {
            ProductVerdict::Unsupported(f) => {
                assert_eq!(f.rule, RuleId::AclHostregProduct);
                assert!(f.problem.contains("training"), "{}", f.problem);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn context() {
        assert!(check_context(Some(true)).is_none());
        assert!(check_context(None).is_none());
        assert_eq!(check_context(Some(false)).unwrap().rule, RuleId::AclHostregNoContext);
    }

    fn mapping(start: usize, end: usize, writable: bool, backing: Backing) -> Mapping {
        Mapping { start, end, readable: true, writable, shared: false, path: String::new(), backing, locked: None }
    }

    #[test]
    fn memory() {
        let ok = RangeView { mappings: vec![mapping(0x1000, 0x9000, true, Backing::Anonymous)], gaps: vec![] };
        assert!(check_memory(0x2000, 0x3000, &ok).is_empty());
        let shm = RangeView {
            mappings: vec![mapping(0x1000, 0x9000, true, Backing::SharedMemory("/dev/shm/x".into()))],
            gaps: vec![],
        };
        assert!(check_memory(0x2000, 0x3000, &shm).is_empty());
        let holes = RangeView {
            mappings: vec![mapping(0x1000, 0x2000, true, Backing::Anonymous)],
            gaps: vec![(0x2000, 0x4000)],
        };
        assert_eq!(rules(&check_memory(0x1000, 0x4000, &holes)), vec![RuleId::AclHostregUnmapped]);
        let file = RangeView {
            mappings: vec![mapping(0x1000, 0x9000, true, Backing::File("/data/x.bin".into()))],
            gaps: vec![],
        };
        let f = check_memory(0x1000, 0x2000, &file);
        assert_eq!(rules(&f), vec![RuleId::AclHostregFileBacked]);
        assert!(f[0].problem.contains("/data/x.bin"));
        let stack = RangeView { mappings: vec![mapping(0x1000, 0x9000, true, Backing::Stack)], gaps: vec![] };
        assert_eq!(rules(&check_memory(0x1000, 0x2000, &stack)), vec![RuleId::AclHostregStack]);
        let ro = RangeView { mappings: vec![mapping(0x1000, 0x9000, false, Backing::Anonymous)], gaps: vec![] };
        assert_eq!(rules(&check_memory(0x1000, 0x2000, &ro)), vec![RuleId::AclHostregReadonlyMapping]);
    }

    #[test]
    fn locking() {
        let old = KernelFacts {
            release: "5.10.0-60.oe2203".into(),
            version: KernelVersion::parse("5.10.0"),
            pageable_max: KernelVersion::parse("5.10").unwrap(),
        };
        let new = KernelFacts {
            release: "6.1.0".into(),
            version: KernelVersion::parse("6.1.0"),
            pageable_max: KernelVersion::parse("5.10").unwrap(),
        };
        let a = v2(0x10000, 4096, MAPPED);
        assert_eq!(rules(&check_locking(&a, Locked::No, &old)), vec![RuleId::AclHostregPageableOldKernel]);
        assert!(check_locking(&a, Locked::ByMallocHost, &old).is_empty());
        assert!(check_locking(&a, Locked::Mlocked, &old).is_empty());
        assert!(check_locking(&a, Locked::Unknown, &old).is_empty(), "unknown is not rejected");
        assert!(check_locking(&a, Locked::No, &new).is_empty());
        let p = v2(0x10000, 4096, MAPPED | PINNED);
        assert_eq!(rules(&check_locking(&p, Locked::ByMallocHost, &new)), vec![RuleId::AclHostregPinnedLocked]);
        assert!(check_locking(&p, Locked::No, &new).is_empty());
        let mut view = RangeView { mappings: vec![mapping(0, 10, true, Backing::Anonymous)], gaps: vec![] };
        assert_eq!(locked_from_view(&view), Locked::Unknown);
        view.mappings[0].locked = Some(true);
        assert_eq!(locked_from_view(&view), Locked::Mlocked);
        view.mappings.push(mapping(10, 20, true, Backing::Anonymous));
        view.mappings[1].locked = Some(false);
        assert_eq!(locked_from_view(&view), Locked::No);
    }

    #[test]
    fn memlock() {
        let p = v2(0x10000, 1 << 20, MAPPED | PINNED);
        let limited = MemlockInfo { limit: Some(8 << 20), cap_ipc_lock: false, locked_now: 0 };
        assert!(check_memlock(&p, Locked::No, &MemlockInfo { locked_now: 0, ..limited }).is_none());
        assert_eq!(
            check_memlock(&p, Locked::No, &MemlockInfo { locked_now: 7 * (1 << 20) + 1, ..limited }).unwrap().rule,
            RuleId::AclHostregMemlock
        );
        assert!(check_memlock(&p, Locked::No, &MemlockInfo { cap_ipc_lock: true, locked_now: 8 << 20, ..limited })
            .is_none());
        assert!(check_memlock(&p, Locked::No, &MemlockInfo { limit: None, ..limited }).is_none());
        assert!(check_memlock(&v2(0x10000, 1 << 30, MAPPED), Locked::No, &limited).is_none(), "only PINNED pins");
    }

    #[test]
    fn overlap_unregister_devptr_free() {
        let r = HostReg { device: 0, base: 0x10000, len: 0x2000, flags: MAPPED, api: HostRegApi::V2 };
        let f = check_overlap(0, Some(&r)).unwrap();
        assert!(f.problem.contains("0x10000") && f.fix.contains("aclrtHostUnregister(0x10000)"));
        assert!(check_overlap(0, None).is_none());
        assert!(check_unregister(0x10000, 0, true, Some(&r)).is_none());
        let f = check_unregister(0x11000, 0, false, Some(&r)).unwrap();
        assert!(f.fix.contains("0x10000"), "names the containing base");
        assert!(check_unregister(0x50000, 0, false, None).unwrap().problem.contains("not a live registration"));
        assert!(check_devptr(0x10010, false, 0, 0, Some(&r)).is_empty());
        assert_eq!(
            rules(&check_devptr(0, true, 1, 0, None)),
            vec![RuleId::AclDevptrNull, RuleId::AclDevptrNull, RuleId::AclDevptrFlag]
        );
        let pinned = HostReg { flags: PINNED, ..r };
        let f = check_devptr(0x10010, false, 0, 0, Some(&pinned));
        assert_eq!(rules(&f), vec![RuleId::AclDevptrNotMapped]);
        assert!(f[0].problem.contains("PINNED"));
        let v1 = HostReg { flags: 0, api: HostRegApi::V1, ..r };
        assert!(check_devptr(0x10010, false, 0, 0, Some(&v1)).is_empty(), "V1 registrations are mapped");
        assert!(check_free_host(0x10000, &[]).is_none());
        assert_eq!(check_free_host(0x10000, &[r]).unwrap().rule, RuleId::AclFreehostRegistered);
    }

    /// Every call the one-scalar pass does not find clean has a finding (so the hot path never
    /// forwards what the rules would reject, nor builds findings for a clean call).
    #[test]
    fn devptr_clean_agrees_with_the_findings() {
        let r = HostReg { device: 0, base: 0x10000, len: 0x2000, flags: MAPPED, api: HostRegApi::V2 };
        let regs =
            [None, Some(r), Some(HostReg { flags: PINNED, ..r }), Some(HostReg { flags: 0, api: HostRegApi::V1, ..r })];
        let mut clean = 0;
        for p in [0, 0x10010] {
            for null in [false, true] {
                for flag in [0, 1] {
                    for reg in &regs {
                        let fast = devptr_clean(p, null, flag, reg.as_ref());
                        assert_eq!(
                            fast,
                            check_devptr(p, null, flag, 0, reg.as_ref()).is_empty(),
                            "{p:x} {null} {flag} {reg:?}"
                        );
                        clean += usize::from(fast);
                    }
                }
            }
        }
        assert_eq!(clean, 2, "a MAPPED (V2) and a V1 registration, with every argument right");
    }
}
