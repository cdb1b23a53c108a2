//! The rule catalogue: every check regcheck makes, as data, plus the pure functions that
//! evaluate them ([`acl`], [`hixl`]).
//!
//! A rule has a stable ID (the public contract: never renamed, never reused), a default
//! [`Action`], the vendor code returned when it rejects, a one-line summary, the generic fix
//! and where the rule comes from. The catalogue is rendered to `docs/rules.md`; a test keeps
//! the two identical.

pub mod acl;
pub mod hixl;
pub mod products;

use std::fmt;

pub use hixl::Engine;

/// What regcheck does when a rule finds something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
pub enum Action {
    /// Not checked.
    Off = 0,
    /// Logged at info level, call forwarded.
    Info = 1,
    /// Logged as a warning, call forwarded.
    Warn = 2,
    /// Logged as an error, call rejected with the rule's vendor code (in `enforce` mode).
    Error = 3,
}

impl Action {
    /// Parse `off`, `info`, `warn`/`warning`, `error` (case-insensitive).
    pub fn parse(s: &str) -> Option<Action> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" | "none" | "ignore" => Some(Action::Off),
            "info" => Some(Action::Info),
            "warn" | "warning" => Some(Action::Warn),
            "error" | "reject" => Some(Action::Error),
            _ => None,
        }
    }

    pub fn from_u32(v: u32) -> Option<Action> {
        match v {
            0 => Some(Action::Off),
            1 => Some(Action::Info),
            2 => Some(Action::Warn),
            3 => Some(Action::Error),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Action::Off => "off",
            Action::Info => "info",
            Action::Warn => "warn",
            Action::Error => "error",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which vendor API family a rule belongs to (and so which code space its code is in).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Acl,
    Hixl,
}

/// One catalogue entry.
#[derive(Debug, Clone, Copy)]
pub struct RuleInfo {
    pub id: RuleId,
    /// The stable ID, e.g. `ACL-HOSTREG-ALIGN`.
    pub name: &'static str,
    pub family: Family,
    pub default: Action,
    /// The vendor code returned when the rule rejects; `None` for rules that never reject
    /// by default (if such a rule is raised to `error`, the family's generic parameter
    /// code is used, see [`RuleInfo::reject_code`]).
    pub code: Option<i64>,
    /// The calls it applies to.
    pub calls: &'static str,
    /// What it checks, one line.
    pub summary: &'static str,
    /// The generic fix.
    pub fix: &'static str,
    /// What the vendor's code does with such a call, with the code reference (repository,
    /// path, function), or "documentation only" where it lives in closed code.
    pub vendor: &'static str,
    /// The default action on the HIXL engines where it differs from `default` (what the
    /// vendor's code does there differs).
    pub engines: &'static [(Engine, Action)],
    /// Where the rule comes from.
    pub source: &'static str,
}

impl RuleInfo {
    /// The default action on `engine` (`None`: not known or not a HIXL instance).
    pub fn default_on(&self, engine: Option<Engine>) -> Action {
        engine.and_then(|e| self.engines.iter().find(|(x, _)| *x == e)).map_or(self.default, |(_, a)| *a)
    }

    /// The default, as the catalogue shows it (`warn (fabric_mem: error)`).
    pub fn default_text(&self) -> String {
        if self.engines.is_empty() {
            return self.default.to_string();
        }
        let per: Vec<String> = self.engines.iter().map(|(e, a)| format!("{}: {a}", e.name())).collect();
        format!("{} ({})", self.default, per.join(", "))
    }

    /// The code returned on rejection.
    pub fn reject_code(&self) -> i64 {
        match (self.code, self.family) {
            (Some(c), _) => c,
            (None, Family::Acl) => crate::codes::acl::INVALID_PARAM as i64,
            (None, Family::Hixl) => crate::codes::hixl::PARAM_INVALID as i64,
        }
    }
}

macro_rules! rule_ids {
    ($($variant:ident = $num:literal,)*) => {
        /// Stable numeric rule identifiers (the C API's `regcheck_rule_info.id`).
        /// Numbers are never reused; new rules take new numbers.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u32)]
        pub enum RuleId { $($variant = $num,)* }

        impl RuleId {
            /// Every rule, in catalogue order.
            pub const ALL: &'static [RuleId] = &[$(RuleId::$variant,)*];
        }
    };
}

rule_ids! {
    AclHostregNull = 1,
    AclHostregSizeZero = 2,
    AclHostregRangeOverflow = 3,
    AclHostregAlign = 4,
    AclHostregSizePages = 5,
    AclHostregFlagInvalid = 6,
    AclHostregFlagReserved = 7,
    AclHostregPinnedLocked = 8,
    AclHostregPageableOldKernel = 9,
    AclHostregUnmapped = 10,
    AclHostregFileBacked = 11,
    AclHostregStack = 12,
    AclHostregReadonlyMapping = 13,
    AclHostregOverlap = 14,
    AclHostregProduct = 15,
    AclHostregNoContext = 16,
    AclHostregMemlock = 17,
    AclHostregLarge = 18,
    AclHostregPinnedOnly = 19,
    AclHostunregNotRegistered = 20,
    AclDevptrNull = 21,
    AclDevptrFlag = 22,
    AclDevptrNotMapped = 23,
    AclFreehostRegistered = 24,
    HixlNotInitialized = 101,
    HixlRegNullAddr = 102,
    HixlRegLenZero = 103,
    HixlRegRangeOverflow = 104,
    HixlRegMemtype = 105,
    HixlRegOverlap = 106,
    HixlRegCount = 107,
    HixlRegCountNear = 108,
    HixlRegHostCap = 109,
    HixlRegDeviceCap = 110,
    HixlRegAfterConnect = 111,
    HixlRegThread = 112,
    HixlRegHostOrigin = 113,
    HixlRegHostRoce950 = 114,
    HixlRegHostUnmapped = 115,
    HixlRegDeviceOrigin = 116,
    HixlRegDeviceHuge = 117,
    HixlDeregNull = 118,
    HixlDeregUnknown = 119,
    HixlDeregConnected = 120,
    HixlXferNotConnected = 121,
    HixlXferEmpty = 122,
    HixlXferLocalUnregistered = 123,
    HixlFinalizeLeak = 124,
    HixlRegDeviceAlign = 125,
    HixlInitOptions = 126,
    HixlInitFabricMem = 127,
    HixlRegFabricVmm = 128,
    HixlXferRemoteUnregistered = 129,
}

impl RuleId {
    /// The catalogue entry of this rule.
    pub fn info(self) -> &'static RuleInfo {
        &CATALOGUE[self.index()]
    }

    /// Position in [`CATALOGUE`] (and in [`RuleId::ALL`]).
    pub fn index(self) -> usize {
        // RuleId::ALL is in ascending order and the catalogue follows it; unit tests prove both.
        RuleId::ALL.binary_search(&self).unwrap_or(0)
    }

    /// Whether the rule judges a call by regcheck's records of earlier calls (registrations,
    /// allocations, links, instance state) rather than by the call and the platform alone.
    /// After an internal failure those records may be incomplete, and such rules only warn.
    pub fn judges_by_records(self) -> bool {
        use RuleId::*;
        matches!(
            self,
            AclHostregPinnedLocked
                | AclHostregOverlap
                | AclHostunregNotRegistered
                | AclDevptrNotMapped
                | HixlNotInitialized
                | HixlRegOverlap
                | HixlRegCount
                | HixlRegHostCap
                | HixlRegDeviceCap
                | HixlRegAfterConnect
                | HixlRegThread
                | HixlRegHostOrigin
                | HixlRegHostRoce950
                | HixlRegDeviceHuge
                | HixlDeregConnected
                | HixlXferNotConnected
                | HixlXferLocalUnregistered
                | HixlRegFabricVmm
                | HixlXferRemoteUnregistered
        )
    }

    /// The stable textual ID.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Look a rule up by its textual ID (case-insensitive).
    pub fn from_name(name: &str) -> Option<RuleId> {
        CATALOGUE.iter().find(|r| r.name.eq_ignore_ascii_case(name.trim())).map(|r| r.id)
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Rules matched by a pattern: an exact ID, or a prefix ending in `*` (`ACL-HOSTREG-*`, `*`).
pub fn matching(pattern: &str) -> Vec<RuleId> {
    let p = pattern.trim();
    if let Some(prefix) = p.strip_suffix('*') {
        let prefix = prefix.to_ascii_uppercase();
        CATALOGUE.iter().filter(|r| r.name.starts_with(&prefix)).map(|r| r.id).collect()
    } else {
        RuleId::from_name(p).into_iter().collect()
    }
}

/// One thing a rule found about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: RuleId,
    /// The argument at fault (`ptr`, `size`, `flag`, `mem.addr`, ...).
    pub arg: &'static str,
    /// What is wrong, with the values involved.
    pub problem: String,
    /// How to fix it, specific to this call when possible.
    pub fix: String,
    /// The code to reject with when it is not the rule's usual one (the vendor answers
    /// differently for the same mistake in another call).
    pub code: Option<i64>,
    /// The default action for this finding when it is not the rule's (what the vendor does in
    /// this configuration differs); a setting of the rule's action still wins.
    pub action: Option<Action>,
}

impl Finding {
    pub fn new(rule: RuleId, arg: &'static str, problem: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding { rule, arg, problem: problem.into(), fix: fix.into(), code: None, action: None }
    }

    /// The same finding, with `action` as its default.
    pub fn with_action(self, action: Action) -> Finding {
        Finding { action: Some(action), ..self }
    }

    /// The same finding, with the rule's default on `engine`.
    pub fn on_engine(self, engine: Option<Engine>) -> Finding {
        let info = self.rule.info();
        let a = info.default_on(engine);
        if a == info.default {
            self
        } else {
            self.with_action(a)
        }
    }

    /// The same finding, rejected with `code` instead of the rule's code.
    pub fn with_code(self, code: i64) -> Finding {
        Finding { code: Some(code), ..self }
    }

    /// The code a rejection by this finding returns.
    pub fn reject_code(&self) -> i64 {
        self.code.unwrap_or_else(|| self.rule.info().reject_code())
    }
}

/// The catalogue, in [`RuleId::ALL`] order.
pub static CATALOGUE: &[RuleInfo] = &[
    RuleInfo {
        id: RuleId::AclHostregNull,
        name: "ACL-HOSTREG-NULL",
        family: Family::Acl,
        default: Action::Error,
        code: Some(100000),
        calls: "aclrtHostRegisterV2, aclrtHostRegister",
        summary: "`ptr` is NULL (aclrtHostRegister also: `devPtr` is NULL)",
        fix: "pass the start of the host buffer (and, for aclrtHostRegister, where to store the device pointer)",
        vendor: "rejects with 100000 (hicann/runtime `src/acl/aclrt_impl/memory.cpp`, `aclrtHostRegisterV2Impl`, `aclrtHostRegisterImpl`)",
        engines: &[],
        source: "CANN API reference; vendor returns 100000 (field failure A3)",
    },
    RuleInfo {
        id: RuleId::AclHostregSizeZero,
        name: "ACL-HOSTREG-SIZE-ZERO",
        family: Family::Acl,
        default: Action::Error,
        code: Some(100000),
        calls: "aclrtHostRegisterV2, aclrtHostRegister",
        summary: "`size` is 0",
        fix: "pass the buffer's size in bytes; a size rounded down to 0 means the buffer is smaller than one page",
        vendor: "rejects with 100000 (hicann/runtime `src/acl/aclrt_impl/memory.cpp`, `aclrtHostRegisterV2Impl`, `aclrtHostRegisterImpl`)",
        engines: &[],
        source: "CANN API reference; field failure A3",
    },
    RuleInfo {
        id: RuleId::AclHostregRangeOverflow,
        name: "ACL-HOSTREG-RANGE-OVERFLOW",
        family: Family::Acl,
        default: Action::Error,
        code: Some(100000),
        calls: "aclrtHostRegisterV2, aclrtHostRegister",
        summary: "`ptr + size` wraps around the address space",
        fix: "pass the buffer's real size",
        vendor: "the runtime passes it on (hicann/runtime `src/runtime/api/impl/api_impl.cc`, `ApiImpl::HostRegisterV2`); the closed driver answers 507899 (documentation only)",
        engines: &[],
        source: "regcheck (an impossible range)",
    },
    RuleInfo {
        id: RuleId::AclHostregAlign,
        name: "ACL-HOSTREG-ALIGN",
        family: Family::Acl,
        default: Action::Error,
        code: Some(100000),
        calls: "aclrtHostRegisterV2, aclrtHostRegister",
        summary: "`ptr` is not aligned to max(4 KiB, the host page size)",
        fix: "allocate with posix_memalign(page size, ...) or mmap, or over-allocate aclrtMallocHost memory by one page and round the pointer up",
        vendor: "the runtime passes it on (hicann/runtime `src/runtime/api/impl/api_impl.cc`, `ApiImpl::HostRegisterV2`); the closed driver rejects it with 507899 (documentation only)",
        engines: &[],
        source: "aclrtHostRegisterV2 reference (\"must be 4 KB page-aligned\"); field failure A1 (driver returns 507899)",
    },
    RuleInfo {
        id: RuleId::AclHostregSizePages,
        name: "ACL-HOSTREG-SIZE-PAGES",
        family: Family::Acl,
        default: Action::Warn,
        code: None,
        calls: "aclrtHostRegisterV2, aclrtHostRegister",
        summary: "`size` is not a multiple of the host page size",
        fix: "round the size up to a whole number of pages (and allocate that much)",
        vendor: "the closed driver answers 507899 on some versions (documentation only)",
        engines: &[],
        source: "field failure A2 (507899 on some versions)",
    },
    RuleInfo {
        id: RuleId::AclHostregFlagInvalid,
        name: "ACL-HOSTREG-FLAG-INVALID",
        family: Family::Acl,
        default: Action::Error,
        code: Some(107000),
        calls: "aclrtHostRegisterV2, aclrtHostRegister",
        summary: "V2 `flag` is 0 or has a bit outside MAPPED/IOMEMORY/READONLY/PINNED; V1 `type` is outside {0, 4, 8, 12} (rejected with 207000)",
        fix: "use ACL_HOST_REG_MAPPED (0x2), ACL_HOST_REG_PINNED (0x10000000), or both OR-ed",
        vendor: "rejects V2 with 107000 (hicann/runtime `src/runtime/api/impl/api_error.cc`, `ApiErrorDecorator::HostRegisterV2`) and a V1 type outside the valid bits with 207000 (`ApiErrorDecorator::HostRegister`)",
        engines: &[],
        source: "aclrtHostRegisterV2 reference (flag); CANN API reference; field failure A4",
    },
    RuleInfo {
        id: RuleId::AclHostregFlagReserved,
        name: "ACL-HOSTREG-FLAG-RESERVED",
        family: Family::Acl,
        default: Action::Error,
        code: Some(207000),
        calls: "aclrtHostRegisterV2, aclrtHostRegister",
        summary: "ACL_HOST_REG_IOMEMORY or ACL_HOST_REG_READONLY requested: reserved, not supported",
        fix: "drop IOMEMORY/READONLY; register with ACL_HOST_REG_MAPPED",
        vendor: "the runtime passes the bits to the closed driver (`ApiErrorDecorator::HostRegisterV2` accepts them); documented as reserved and not supported (documentation only)",
        engines: &[],
        source: "aclrtHostRegisterV2 reference (\"This is a reserved option\"); field failure A4",
    },
    RuleInfo {
        id: RuleId::AclHostregPinnedLocked,
        name: "ACL-HOSTREG-PINNED-LOCKED",
        family: Family::Acl,
        default: Action::Error,
        code: Some(107000),
        calls: "aclrtHostRegisterV2",
        summary: "ACL_HOST_REG_PINNED on memory that is already page-locked (aclrtMallocHost or mlocked)",
        fix: "drop ACL_HOST_REG_PINNED: the memory is page-locked already; register it with ACL_HOST_REG_MAPPED only",
        vendor: "the closed driver refuses it on current CANN (documentation only)",
        engines: &[],
        source: "aclrtHostRegisterV2 reference (PINNED is for non-page-locked memory); field failure A5",
    },
    RuleInfo {
        id: RuleId::AclHostregPageableOldKernel,
        name: "ACL-HOSTREG-PAGEABLE-OLD-KERNEL",
        family: Family::Acl,
        default: Action::Error,
        code: Some(100000),
        calls: "aclrtHostRegisterV2, aclrtHostRegister",
        summary: "kernel release <= the threshold (default 5.10) and the range is not page-locked",
        fix: "allocate the buffer with aclrtMallocHost (page-locked), or mlock it, or run on a kernel newer than the threshold",
        vendor: "the closed driver raises an exception (documentation only)",
        engines: &[],
        source: "aclrtHostRegisterV2 reference (\"5.10 or earlier ... will cause exceptions\"); field failure A13",
    },
    RuleInfo {
        id: RuleId::AclHostregUnmapped,
        name: "ACL-HOSTREG-UNMAPPED",
        family: Family::Acl,
        default: Action::Error,
        code: Some(100000),
        calls: "aclrtHostRegisterV2, aclrtHostRegister",
        summary: "some page of the range is not mapped in the process",
        fix: "register only memory you allocated, with its real size; a freed buffer cannot be registered",
        vendor: "the closed driver answers 507899 (documentation only)",
        engines: &[],
        source: "regcheck (driver returns 507899)",
    },
    RuleInfo {
        id: RuleId::AclHostregFileBacked,
        name: "ACL-HOSTREG-FILE-BACKED",
        family: Family::Acl,
        default: Action::Error,
        code: Some(100000),
        calls: "aclrtHostRegisterV2, aclrtHostRegister",
        summary: "the range is a mapping of a regular file (tmpfs shared memory, memfd and SysV shm are fine)",
        fix: "copy the data into anonymous memory (mmap MAP_ANONYMOUS, posix_memalign, aclrtMallocHost) or use shared memory (memfd, /dev/shm)",
        vendor: "the closed driver answers 507899 (documentation only)",
        engines: &[],
        source: "CANN API reference; field failures (507899 for file-backed mmap)",
    },
    RuleInfo {
        id: RuleId::AclHostregStack,
        name: "ACL-HOSTREG-STACK",
        family: Family::Acl,
        default: Action::Error,
        code: Some(100000),
        calls: "aclrtHostRegisterV2, aclrtHostRegister",
        summary: "the range lies in a thread's stack",
        fix: "register heap or mmap memory that outlives the call; stack memory is reused as soon as the function returns",
        vendor: "the closed driver answers 507899 (documentation only)",
        engines: &[],
        source: "field failures (507899; CUDA crash on a stack variable)",
    },
    RuleInfo {
        id: RuleId::AclHostregReadonlyMapping,
        name: "ACL-HOSTREG-READONLY-MAPPING",
        family: Family::Acl,
        default: Action::Error,
        code: Some(100000),
        calls: "aclrtHostRegisterV2, aclrtHostRegister",
        summary: "the mapping is not writable",
        fix: "register writable memory (mprotect PROT_READ|PROT_WRITE, or copy into a writable buffer)",
        vendor: "the closed driver answers 507899 (documentation only)",
        engines: &[],
        source: "field failures (507899 for read-only mappings)",
    },
    RuleInfo {
        id: RuleId::AclHostregOverlap,
        name: "ACL-HOSTREG-OVERLAP",
        family: Family::Acl,
        default: Action::Error,
        code: Some(507910),
        calls: "aclrtHostRegisterV2, aclrtHostRegister",
        summary: "the range overlaps (byte-granular) a live registration on the same device",
        fix: "register each buffer once per device, or unregister the existing registration first",
        vendor: "rejects with 507910 (hicann/runtime `src/runtime/api/impl/api_impl.cc`, `ApiImpl::HostRegisterV2` via `CheckMemoryRangeRegistered` or the driver; `api_error.cc`, `ApiErrorDecorator::HostRegisterV2`)",
        engines: &[],
        source: "CANN API reference (507910); field failure A7",
    },
    RuleInfo {
        id: RuleId::AclHostregProduct,
        name: "ACL-HOSTREG-PRODUCT",
        family: Family::Acl,
        default: Action::Error,
        code: Some(207000),
        calls: "aclrtHostRegisterV2, aclrtHostRegister",
        summary: "the SoC's product family does not support host registration (Atlas 200I/500 A2, inference, training series)",
        fix: "run on Atlas A2, Atlas A3 or Ascend 950PR/950DT; on other products copy through device memory (aclrtMemcpy)",
        vendor: "rejects with 207000: the capability check is in the closed driver (documentation only)",
        engines: &[],
        source: "aclrtHostRegisterV2 reference (Applicable Products); CANN API reference; field failure A10",
    },
    RuleInfo {
        id: RuleId::AclHostregNoContext,
        name: "ACL-HOSTREG-NO-CONTEXT",
        family: Family::Acl,
        default: Action::Error,
        code: Some(107002),
        calls: "aclrtHostRegisterV2, aclrtHostRegister",
        summary: "no current ACL context on the calling thread",
        fix: "call aclrtSetDevice(id) on this thread, or aclrtSetCurrentContext(ctx) with a context from aclrtGetCurrentContext on the thread that created it",
        vendor: "rejects with 107002 (hicann/runtime `src/runtime/api/impl/api_impl.cc`, `ApiImpl::HostRegisterV2`, `ApiImpl::HostRegister`: no current context)",
        engines: &[],
        source: "CANN API reference (107002); field failure A9",
    },
    RuleInfo {
        id: RuleId::AclHostregMemlock,
        name: "ACL-HOSTREG-MEMLOCK",
        family: Family::Acl,
        default: Action::Warn,
        code: None,
        calls: "aclrtHostRegisterV2",
        summary: "pinning pageable memory would exceed RLIMIT_MEMLOCK and the process lacks CAP_IPC_LOCK",
        fix: "raise the limit (ulimit -l unlimited, --ulimit memlock=-1 for containers) or grant CAP_IPC_LOCK",
        vendor: "the closed driver fails to pin (\"Unable to pin host memory\"; documentation only)",
        engines: &[],
        source: "field failure A11",
    },
    RuleInfo {
        id: RuleId::AclHostregLarge,
        name: "ACL-HOSTREG-LARGE",
        family: Family::Acl,
        default: Action::Warn,
        code: None,
        calls: "aclrtHostRegisterV2, aclrtHostRegister",
        summary: "one registration above a configurable size (REGCHECK_LARGE_BYTES, default 64 GiB)",
        fix: "register in chunks (e.g. 16 GiB each); very large single registrations fail with 207001",
        vendor: "very large single registrations fail with 207001 (documentation only)",
        engines: &[],
        source: "field failure A12",
    },
    RuleInfo {
        id: RuleId::AclHostregPinnedOnly,
        name: "ACL-HOSTREG-PINNED-ONLY",
        family: Family::Acl,
        default: Action::Info,
        code: None,
        calls: "aclrtHostRegisterV2",
        summary: "ACL_HOST_REG_PINNED without ACL_HOST_REG_MAPPED (slower transfers)",
        fix: "add ACL_HOST_REG_MAPPED where bandwidth matters",
        vendor: "accepts it (hicann/runtime `src/runtime/api/impl/api_impl.cc`, `ApiImpl::HostRegisterV2`); transfers are slower",
        engines: &[],
        source: "field failure A17",
    },
    RuleInfo {
        id: RuleId::AclHostunregNotRegistered,
        name: "ACL-HOSTUNREG-NOT-REGISTERED",
        family: Family::Acl,
        default: Action::Error,
        code: Some(507911),
        calls: "aclrtHostUnregister",
        summary: "the pointer is not the exact base of a live registration on the current device",
        fix: "pass the same pointer that was registered, once",
        vendor: "rejects with 507911 (hicann/runtime `src/runtime/api/impl/api_impl.cc`, `ApiImpl::HostUnregister`)",
        engines: &[],
        source: "CANN API reference (507911); field failure A8",
    },
    RuleInfo {
        id: RuleId::AclDevptrNull,
        name: "ACL-DEVPTR-NULL",
        family: Family::Acl,
        default: Action::Error,
        code: Some(100000),
        calls: "aclrtHostGetDevicePointer",
        summary: "`pHost` or `pDevice` is NULL",
        fix: "pass the registered host pointer and the address of a void* to receive the device pointer",
        vendor: "rejects with 100000 (hicann/runtime `src/acl/aclrt_impl/memory.cpp`, `aclrtHostGetDevicePointerImpl`)",
        engines: &[],
        source: "CANN API reference",
    },
    RuleInfo {
        id: RuleId::AclDevptrFlag,
        name: "ACL-DEVPTR-FLAG",
        family: Family::Acl,
        default: Action::Error,
        code: Some(100000),
        calls: "aclrtHostGetDevicePointer",
        summary: "`flag` is not 0",
        fix: "pass 0 as flag (the argument order is pHost, pDevice, flag)",
        vendor: "rejects with 100000 (hicann/runtime `src/acl/aclrt_impl/memory.cpp`, `aclrtHostGetDevicePointerImpl`)",
        engines: &[],
        source: "CANN API reference; field failure A6",
    },
    RuleInfo {
        id: RuleId::AclDevptrNotMapped,
        name: "ACL-DEVPTR-NOT-MAPPED",
        family: Family::Acl,
        default: Action::Error,
        code: Some(107000),
        calls: "aclrtHostGetDevicePointer",
        summary: "`pHost` is not inside a live registration made with ACL_HOST_REG_MAPPED",
        fix: "register the buffer with ACL_HOST_REG_MAPPED on the current device first",
        vendor: "rejects with 107000 (hicann/runtime `src/runtime/api/impl/api_impl.cc`, `ApiImpl::HostGetDevicePointer`)",
        engines: &[],
        source: "CANN API reference (107000); field failure A6",
    },
    RuleInfo {
        id: RuleId::AclFreehostRegistered,
        name: "ACL-FREEHOST-REGISTERED",
        family: Family::Acl,
        default: Action::Warn,
        code: None,
        calls: "aclrtFreeHost",
        summary: "memory freed while it still has live registrations",
        fix: "call aclrtHostUnregister on each registration before aclrtFreeHost",
        vendor: "frees it (hicann/runtime `src/acl/aclrt_impl/memory.cpp`, `aclrtFreeHostImpl`); documented as unpredictable",
        engines: &[],
        source: "CANN API reference (\"unpredictable behaviour\"); field failure A16",
    },
    RuleInfo {
        id: RuleId::HixlNotInitialized,
        name: "HIXL-NOT-INITIALIZED",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(503900),
        calls: "Hixl::RegisterMem, DeregisterMem, Connect, ConnectAsync, Disconnect, DisconnectAsync, TransferSync, TransferAsync",
        summary: "the instance is not initialised, or was finalised",
        fix: "call Initialize first (and do not use an instance after Finalize)",
        vendor: "every engine rejects with 503900 (hicann/hixl `src/hixl/engine/hixl_impl.cc`, `Hixl::HixlImpl::RegisterMem` and siblings)",
        engines: &[],
        source: "HIXL code (FAILED before Initialize); field failure B5",
    },
    RuleInfo {
        id: RuleId::HixlRegNullAddr,
        name: "HIXL-REG-NULL-ADDR",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(103900),
        calls: "Hixl::RegisterMem, HixlCSServerRegMem, HixlCSClientRegMem",
        summary: "`mem.addr` is 0",
        fix: "pass the start address of the buffer",
        vendor: "rejects with 103900 (hicann/hixl `src/hixl/engine/hixl_impl.cc`, `Hixl::HixlImpl::RegisterMem`)",
        engines: &[],
        source: "HIXL code; field failure B4",
    },
    RuleInfo {
        id: RuleId::HixlRegLenZero,
        name: "HIXL-REG-LEN-ZERO",
        family: Family::Hixl,
        default: Action::Warn,
        code: Some(103900),
        calls: "Hixl::RegisterMem, HixlCSServerRegMem, HixlCSClientRegMem",
        summary: "`mem.len` is 0 (an error for HixlCSClientRegMem, which refuses it)",
        fix: "pass the buffer's length in bytes",
        vendor: "fabric_mem rejects with 103900 (hicann/hixl `src/hixl/fabric_mem/fabric_mem_memory.cc`, `FabricMemLocalMemory::RegisterMem`), and so does HixlCSClientRegMem (`src/hixl/cs/hixl_mem_store.cc`, `CheckMemoryForRegister`); comm and hixl_cs's Hixl::RegisterMem record the empty region",
        engines: &[(Engine::FabricMem, Action::Error)],
        source: "field failure B4",
    },
    RuleInfo {
        id: RuleId::HixlRegRangeOverflow,
        name: "HIXL-REG-RANGE-OVERFLOW",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(103900),
        calls: "Hixl::RegisterMem, HixlCSServerRegMem, HixlCSClientRegMem",
        summary: "`addr + len` wraps around the address space",
        fix: "pass the buffer's real length",
        vendor: "rejects with 103900 (hicann/hixl `src/llm_datadist/adxl/channel_msg_handler.cc`, `ChannelMsgHandler::RegisterMem`; `src/hixl/fabric_mem/fabric_mem_memory.cc`)",
        engines: &[],
        source: "HIXL code; field failure B4",
    },
    RuleInfo {
        id: RuleId::HixlRegMemtype,
        name: "HIXL-REG-MEMTYPE",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(103900),
        calls: "Hixl::RegisterMem, HixlCSServerRegMem, HixlCSClientRegMem",
        summary: "`type` is neither MEM_DEVICE (0) nor MEM_HOST (1) (the vendor silently treats it as host)",
        fix: "pass hixl::MEM_DEVICE for aclrtMalloc memory or hixl::MEM_HOST for host memory",
        vendor: "treats any value but MEM_DEVICE as MEM_HOST (hicann/hixl `src/llm_datadist/adxl/channel_msg_handler.cc`, `ChannelMsgHandler::RegisterMem`): device memory declared so fails at transfer",
        engines: &[],
        source: "HIXL code; field failure B11",
    },
    RuleInfo {
        id: RuleId::HixlRegOverlap,
        name: "HIXL-REG-OVERLAP",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(103900),
        calls: "Hixl::RegisterMem, HixlCSServerRegMem, HixlCSClientRegMem",
        summary: "overlaps a live registration of the same MemType on this instance without being identical",
        fix: "register whole allocations once; an identical (addr, len, type) registration returns the existing handle",
        vendor: "hixl_cs and fabric_mem reject with 103900 (hicann/hixl `src/hixl/engine/hixl_server.cc`, `CheckAddrOverlap`; `src/hixl/fabric_mem/fabric_mem_memory.cc`, `FindExistingHandleForOverlap`); comm: HCCL refuses it (documentation only)",
        engines: &[],
        source: "HIXL code (\"does not support overlapped memory region\"); field failure B3",
    },
    RuleInfo {
        id: RuleId::HixlRegCount,
        name: "HIXL-REG-COUNT",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(203900),
        calls: "Hixl::RegisterMem",
        summary: "the registration would make more than 4000 live registrations on the instance (REGCHECK_HIXL_MAX_REGS)",
        fix: "register whole allocations (one per pool), not one region per tensor",
        vendor: "no engine counts; beyond the documented limit devices run out of memory (documentation only)",
        engines: &[],
        source: "HIXL RegisterMem reference (at most 4,000 memory objects per instance); field failure B2",
    },
    RuleInfo {
        id: RuleId::HixlRegCountNear,
        name: "HIXL-REG-COUNT-NEAR",
        family: Family::Hixl,
        default: Action::Warn,
        code: None,
        calls: "Hixl::RegisterMem",
        summary: "90% of the registration limit reached on the instance (reported once per instance)",
        fix: "register fewer, larger regions",
        vendor: "no engine counts (documentation only)",
        engines: &[],
        source: "HIXL RegisterMem reference; field failure B2",
    },
    RuleInfo {
        id: RuleId::HixlRegHostCap,
        name: "HIXL-REG-HOST-CAP",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(203900),
        calls: "Hixl::RegisterMem",
        summary: "Atlas A2/A3: total live host registration would exceed 20 GiB (HDK < 25.5.0 or unknown) or 1 TiB (HDK >= 25.5.0)",
        fix: "register less host memory, or upgrade the driver (HDK 25.5.0 or later allows 1 TiB)",
        vendor: "HCCL fails (\"out of PTEs\"; documentation only)",
        engines: &[],
        source: "HIXL RegisterMem reference; field failure B1",
    },
    RuleInfo {
        id: RuleId::HixlRegDeviceCap,
        name: "HIXL-REG-DEVICE-CAP",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(203900),
        calls: "Hixl::RegisterMem",
        summary: "Atlas A2/A3: total live device registration would exceed 50 GiB",
        fix: "register less device memory on this instance",
        vendor: "documentation only",
        engines: &[],
        source: "HIXL API reference (device memory at most 50 GB)",
    },
    RuleInfo {
        id: RuleId::HixlRegAfterConnect,
        name: "HIXL-REG-AFTER-CONNECT",
        family: Family::Hixl,
        default: Action::Warn,
        code: Some(503900),
        calls: "Hixl::RegisterMem, HixlCSServerRegMem, HixlCSClientRegMem",
        summary: "RegisterMem succeeds, but links made before are up: after Connect/ConnectAsync succeeded on this instance, or a peer in this process connected to it (HixlCS: after the client connected, or a client connected to the server)",
        fix: "register all local memory before Connect (links made before cannot see the region), or Disconnect, register, and Connect again",
        vendor: "accepts it, but links made before do not carry the region: comm channels bind registrations when linked (hicann/hixl `src/llm_datadist/adxl/comm_channel.cc`), hixl_cs sends the memory list at Connect (`src/hixl/engine/hixl_engine.cc`, `HixlEngine::Connect`); transfers into it over those links fail",
        engines: &[],
        source: "HIXL RegisterMem reference (\"Before calling Connect ... register all local memories\"); field failure B6",
    },
    RuleInfo {
        id: RuleId::HixlRegThread,
        name: "HIXL-REG-THREAD",
        family: Family::Hixl,
        default: Action::Warn,
        code: Some(503900),
        calls: "Hixl::RegisterMem, DeregisterMem",
        summary: "called on a thread other than Initialize's whose current ACL context is not Initialize's: the documented constraint, which the published engines no longer need",
        fix: "call RegisterMem on the Initialize thread, or aclrtSetCurrentContext(ctx) on this thread with the context aclrtGetCurrentContext returned there",
        vendor: "accepts it: every engine switches to the ACL context it made at Initialize around each call (hicann/hixl `src/llm_datadist/adxl/adxl_inner_engine.cc`, `TemporaryRtContext`; `src/hixl/common/optional_aclrt_context.cc`, `GetContextGuard`; `src/hixl/engine/fabric_mem_engine.cc`), in every published release (8.5.0 on)",
        engines: &[],
        source: "HIXL RegisterMem reference (same thread as Initialize); field failure B12",
    },
    RuleInfo {
        id: RuleId::HixlRegHostOrigin,
        name: "HIXL-REG-HOST-ORIGIN",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(103900),
        calls: "Hixl::RegisterMem",
        summary: "Atlas A2/A3, MEM_HOST: the range was not allocated by aclrtMallocHost",
        fix: "allocate host memory to register with aclrtMallocHost",
        vendor: "documentation only (transfers fail later)",
        engines: &[],
        source: "HIXL RegisterMem reference; field failure B8",
    },
    RuleInfo {
        id: RuleId::HixlRegHostRoce950,
        name: "HIXL-REG-HOST-ROCE-950",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(103900),
        calls: "Hixl::RegisterMem, HixlCSServerRegMem, HixlCSClientRegMem",
        summary: "Ascend 950PR/950DT with a host RoCE transport: the range was allocated by aclrtMallocHost",
        fix: "allocate host memory with malloc/posix_memalign/mmap instead of aclrtMallocHost",
        vendor: "documentation only",
        engines: &[],
        source: "HIXL RegisterMem reference; field failure B9",
    },
    RuleInfo {
        id: RuleId::HixlRegHostUnmapped,
        name: "HIXL-REG-HOST-UNMAPPED",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(103900),
        calls: "Hixl::RegisterMem, HixlCSServerRegMem, HixlCSClientRegMem",
        summary: "MEM_HOST range not fully mapped in the process",
        fix: "register only memory you allocated, with its real size",
        vendor: "not checked; HCCL fails later (documentation only)",
        engines: &[],
        source: "regcheck (fails later inside HCCL)",
    },
    RuleInfo {
        id: RuleId::HixlRegDeviceOrigin,
        name: "HIXL-REG-DEVICE-ORIGIN",
        family: Family::Hixl,
        default: Action::Warn,
        code: None,
        calls: "Hixl::RegisterMem, HixlCSServerRegMem, HixlCSClientRegMem",
        summary: "MEM_DEVICE range not inside an aclrtMalloc allocation regcheck saw",
        fix: "allocate device memory with aclrtMalloc (or declare host memory as MEM_HOST)",
        vendor: "not checked: device addresses go to HCCL as given",
        engines: &[],
        source: "HIXL RegisterMem reference; field failure B11",
    },
    RuleInfo {
        id: RuleId::HixlRegDeviceHuge,
        name: "HIXL-REG-DEVICE-HUGE",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(103900),
        calls: "Hixl::RegisterMem, HixlCSServerRegMem, HixlCSClientRegMem",
        summary: "HCCS transport and the MEM_DEVICE range comes from an aclrtMalloc whose policy is not ACL_MEM_MALLOC_HUGE_ONLY (or its P2P variant)",
        fix: "allocate with aclrtMalloc(..., ACL_MEM_MALLOC_HUGE_ONLY)",
        vendor: "HCCS fails (EINVAL; documentation only)",
        engines: &[],
        source: "HIXL RegisterMem reference; field failure B10",
    },
    RuleInfo {
        id: RuleId::HixlDeregNull,
        name: "HIXL-DEREG-NULL",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(103900),
        calls: "Hixl::DeregisterMem, HixlCSServerUnregMem, HixlCSClientUnregMem",
        summary: "DeregisterMem(nullptr)",
        fix: "pass the handle RegisterMem returned",
        vendor: "rejects with 103900 (hicann/hixl `src/hixl/engine/hixl_impl.cc`, `Hixl::HixlImpl::DeregisterMem`)",
        engines: &[],
        source: "HIXL code (PARAM_INVALID)",
    },
    RuleInfo {
        id: RuleId::HixlDeregUnknown,
        name: "HIXL-DEREG-UNKNOWN",
        family: Family::Hixl,
        default: Action::Warn,
        code: None,
        calls: "Hixl::DeregisterMem, HixlCSServerUnregMem, HixlCSClientUnregMem",
        summary: "handle not live on this instance (double deregistration, another instance's handle): the vendor returns SUCCESS silently",
        fix: "deregister each handle once, on the instance that returned it",
        vendor: "returns SUCCESS and logs a warning (hicann/hixl `src/llm_datadist/adxl/channel_msg_handler.cc`, `ChannelMsgHandler::DeregisterMem`; `src/hixl/engine/hixl_engine.cc`, `HixlEngine::DeregisterMem`)",
        engines: &[],
        source: "HIXL API reference; field failure B7",
    },
    RuleInfo {
        id: RuleId::HixlDeregConnected,
        name: "HIXL-DEREG-CONNECTED",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(503900),
        calls: "Hixl::DeregisterMem",
        summary: "DeregisterMem while links are up (hixl_cs, fabric_mem: links from peers only are a warning, the instance's own links to peers an error)",
        fix: "Disconnect every remote engine first",
        vendor: "hixl_cs refuses it with 503900 while its own clients (links to peers) exist (hicann/hixl `src/hixl/engine/hixl_engine.cc`, `HixlEngine::DeregisterMem`), fabric_mem while its own channels exist (`src/hixl/engine/fabric_mem_engine.cc`, `FabricMemEngine::DeregisterMem`); comm accepts it (`src/llm_datadist/adxl/channel_msg_handler.cc`) and the peer's later transfers into the region fail",
        engines: &[(Engine::Comm, Action::Warn)],
        source: "HIXL code (\"All clients must be disconnected\"); field failure B7",
    },
    RuleInfo {
        id: RuleId::HixlXferNotConnected,
        name: "HIXL-XFER-NOT-CONNECTED",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(103902),
        calls: "Hixl::TransferSync, TransferAsync",
        summary: "transfer to an engine this instance has no link to",
        fix: "Connect to the remote engine first",
        vendor: "rejects with 103902 (hicann/hixl `src/llm_datadist/adxl/adxl_inner_engine.cc`, `AdxlInnerEngine::TransferSync`; `src/hixl/engine/hixl_engine.cc`, `HixlEngine::AutoConnect`)",
        engines: &[],
        source: "HIXL code (NOT_CONNECTED)",
    },
    RuleInfo {
        id: RuleId::HixlXferEmpty,
        name: "HIXL-XFER-EMPTY",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(103900),
        calls: "Hixl::TransferSync, TransferAsync",
        summary: "empty op list, or an op with len == 0 or a NULL address",
        fix: "pass at least one op with non-zero addresses and length",
        vendor: "rejects with 103900 (hicann/hixl `src/hixl/engine/comm_engine.cc`, `CommEngine::TransferSync`; `src/hixl/cs/hixl_mem_store.cc`, `BatchValidateMemoryAccess`; `src/hixl/fabric_mem/fabric_mem_memory.cc`)",
        engines: &[],
        source: "HIXL code",
    },
    RuleInfo {
        id: RuleId::HixlXferLocalUnregistered,
        name: "HIXL-XFER-LOCAL-UNREGISTERED",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(103900),
        calls: "Hixl::TransferSync, TransferAsync",
        summary: "an op's local range is not inside one live registration of this instance (comm engine: a warning when its buffer pool stages the TransferSync)",
        fix: "register the local buffer (before Connect) and keep each op inside one registered region",
        vendor: "hixl_cs rejects with 103900 (hicann/hixl `src/hixl/cs/hixl_mem_store.cc`, `BatchValidateMemoryAccess`), fabric_mem too for local host ranges (`src/hixl/fabric_mem/fabric_mem_memory.cc`, `TranslateLocalHostOpAddrs`); comm stages a TransferSync through its buffer pool (`src/llm_datadist/adxl/adxl_inner_engine.cc`, `TransferSyncViaBuffer`: works, slower) but fails with the pool off (\"0:0\"), for TransferAsync, and with mixed transfer types (103900, `GetTransferType`)",
        engines: &[],
        source: "HIXL RegisterMem reference (local addresses must be registered); field failures (bounce-buffer copies)",
    },
    RuleInfo {
        id: RuleId::HixlFinalizeLeak,
        name: "HIXL-FINALIZE-LEAK",
        family: Family::Hixl,
        default: Action::Warn,
        code: None,
        calls: "Hixl::Finalize, ~Hixl, HixlCSServerDestroy, HixlCSClientDestroy",
        summary: "Finalize, destruction (or HixlCS*Destroy) with registrations never deregistered: they are listed (never rejects)",
        fix: "DeregisterMem every handle before Finalize",
        vendor: "releases them at Finalize",
        engines: &[],
        source: "regcheck (leak report)",
    },
    RuleInfo {
        id: RuleId::HixlRegDeviceAlign,
        name: "HIXL-REG-DEVICE-ALIGN",
        family: Family::Hixl,
        default: Action::Warn,
        code: None,
        calls: "Hixl::RegisterMem, HixlCSServerRegMem, HixlCSClientRegMem",
        summary: "an HCCS transport is configured and the MEM_DEVICE range does not start on a 2 MiB boundary",
        fix: "register from the 2 MiB-aligned start of an ACL_MEM_MALLOC_HUGE_ONLY allocation (and keep offsets multiples of 2 MiB)",
        vendor: "documentation only",
        engines: &[],
        source: "HIXL RegisterMem reference (HCCS device-to-device wants 2 MB-aligned addresses); field failure B10",
    },
    RuleInfo {
        id: RuleId::HixlInitOptions,
        name: "HIXL-INIT-OPTIONS",
        family: Family::Hixl,
        default: Action::Warn,
        code: None,
        calls: "Hixl::Initialize",
        summary: "an option the selected engine's Initialize refuses: invalid JSON, a value out of range, an option the engine does not know, BufferPool other than \"0:0\" on hixl_cs or fabric_mem",
        fix: "fix or drop the option (the vendor answers the call itself)",
        vendor: "the engine's Initialize refuses it with 103900 (hicann/hixl `src/hixl/engine/hixl_options.cc`, `HixlOptions::Parse`, `CheckSupportedOptions`; `src/hixl/engine/hixl_engine.cc`, `HixlEngine::Initialize`; `src/hixl/engine/fabric_mem_engine.cc`; `src/llm_datadist/adxl/adxl_inner_engine.cc`, `ParseBufferPoolParams`)",
        engines: &[],
        source: "HIXL code",
    },
    RuleInfo {
        id: RuleId::HixlInitFabricMem,
        name: "HIXL-INIT-FABRIC-MEM",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(503900),
        calls: "Hixl::Initialize",
        summary: "EnableUseFabricMem=1 on a product other than Atlas A3, or with an HDK older than 25.5",
        fix: "use fabric memory only on Atlas A3 with HDK 25.5 or later (26.0 to register VMM-mapped memory); elsewhere drop EnableUseFabricMem",
        vendor: "the fabric memory engine needs the A3 driver's fabric memory (documentation only: hicann/hixl `examples/cpp/README.md`)",
        engines: &[],
        source: "HIXL samples README (FabricMem: Atlas A3, HDK 25.5 or later)",
    },
    RuleInfo {
        id: RuleId::HixlRegFabricVmm,
        name: "HIXL-REG-FABRIC-VMM",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(503900),
        calls: "Hixl::RegisterMem",
        summary: "fabric memory engine, HDK older than 26.0: the range was mapped with the VMM API (aclrtMapMem), which the engine registers through aclrtMemRetainAllocationHandle",
        fix: "upgrade the driver to HDK 26.0 or later, or allocate the memory with the engine's own allocator",
        vendor: "registers memory it did not allocate through aclrtMemRetainAllocationHandle (hicann/hixl `src/hixl/fabric_mem/fabric_mem_memory.cc`, `FabricMemLocalMemory::RegisterForeignMem`), which HDK 25.5 lacks (`examples/cpp/README.md`)",
        engines: &[],
        source: "HIXL samples README (VMM memory needs HDK 26.0)",
    },
    RuleInfo {
        id: RuleId::HixlXferRemoteUnregistered,
        name: "HIXL-XFER-REMOTE-UNREGISTERED",
        family: Family::Hixl,
        default: Action::Error,
        code: Some(103900),
        calls: "Hixl::TransferSync, TransferAsync",
        summary: "the remote engine is an instance of this process and an op's remote range is not inside a registration it had when the link was made (registered later, or not at all; comm engine: a warning when its buffer pool stages the TransferSync)",
        fix: "have the peer register all its memory before peers connect, and keep each op inside one of its regions",
        vendor: "hixl_cs rejects with 103900 (hicann/hixl `src/hixl/cs/hixl_mem_store.cc`, `BatchValidateMemoryAccess`: \"Server memory verification failed\"), fabric_mem too (`src/hixl/fabric_mem/fabric_mem_transfer_service.cc`, `AppendRemoteTranslatedOps`); comm stages a TransferSync whose remote range it cannot find (`src/llm_datadist/adxl/adxl_inner_engine.cc`, `GetTransferType`), and fails otherwise (\"Can't find remoteBuffer by key\")",
        engines: &[],
        source: "HIXL RegisterMem reference; field failure B6",
    },
];

/// The field reports the catalogue's sources cite ("field failure A1"): what users of the
/// vendor APIs hit, from public issue trackers (vllm-ascend, Mooncake, LMCache, HIXL,
/// torch_npu and others).
pub static FIELD_REPORTS: &[(&str, &str)] = &[
    ("A1", "malloc memory (not page-aligned) registered: 507899 or 107000 (\"not page alignment\"), then cascading HCCL errors"),
    ("A2", "size not a multiple of the page size: 507899 on some versions"),
    ("A3", "NULL pointer, or a size rounded down to 0: 100000, or a whole pinning pipeline aborted"),
    ("A4", "flag 0, unknown bits, or the reserved IOMEMORY/READONLY: 107000"),
    ("A5", "ACL_HOST_REG_PINNED on aclrtMallocHost memory: an error on current CANN"),
    ("A6", "aclrtHostGetDevicePointer on memory not registered MAPPED, never registered, or with flag != 0 (argument order confused with CUDA's)"),
    ("A7", "the same or an overlapping range registered twice: 507910"),
    ("A8", "an interior pointer unregistered, or one unregistered twice: 507911"),
    ("A9", "registration from a thread with no ACL context: 107002"),
    ("A10", "an old driver or an unsupported chip (310P): 207000"),
    ("A11", "containers with a low `ulimit -l` and no CAP_IPC_LOCK: \"Unable to pin host memory\""),
    ("A12", "one registration of hundreds of GB: 207001"),
    ("A13", "kernel 5.10 or older (openEuler 22.03, 5.4 hosts) with malloc memory: the documented exception"),
    ("A16", "memory freed while still registered: later corruption, pages reused while registered"),
    ("A17", "PINNED without MAPPED where bandwidth matters: ~8-9 GB/s instead of ~23 GB/s"),
    ("B1", "72-100 GB of host memory registered with HIXL on HDK < 25.5: HCCL error 19, \"out of PTEs\""),
    ("B2", "one region per tensor per layer (thousands): device OOM and connect time-outs"),
    ("B3", "overlapping regions (hybrid KV layouts): \"does not support overlapped memory region\", 103900"),
    ("B4", "addr 0, len 0 or addr + len overflow: 103900, or nothing until the transfer"),
    ("B5", "RegisterMem/DeregisterMem before Initialize or after Finalize: 503900, floods of \"memHandle is invalid\""),
    ("B6", "RegisterMem after Connect, or a peer registering late: \"Can't find remoteBuffer by key\""),
    ("B7", "DeregisterMem of an unknown handle, twice, or while links are up: SUCCESS silently, or FAILED"),
    ("B8", "host memory not from aclrtMallocHost on Atlas A2/A3: link failures, CheckMemCpyAttr errors"),
    ("B9", "aclrtMallocHost memory on Ascend 950 with a host RoCE NIC: registration failure"),
    ("B10", "device memory not HUGE_ONLY (or not 2 MiB aligned) over HCCS: EINVAL, link failures"),
    ("B11", "a MemType that does not match the memory: CheckMemCpyAttr"),
    ("B12", "RegisterMem from a thread without the Initialize context: failures on older releases"),
];

/// Render the catalogue as the Markdown of `docs/rules.md`.
pub fn catalogue_markdown() -> String {
    let mut out = String::new();
    out.push_str("# regcheck rule catalogue\n\n");
    out.push_str("Generated from `src/rules/mod.rs` (a unit test keeps this file identical; run\n");
    out.push_str("`REGCHECK_BLESS=1 cargo test --lib catalogue` after changing the catalogue).\n\n");
    out.push_str("Actions: `error` rejects the call with the code shown (in `enforce` mode), `warn` and `info`\n");
    out.push_str("log and forward, `off` skips the check. Change them with `REGCHECK_RULES`.\n\n");
    out.push_str("A rule is an `error` where the vendor's own code fails, hangs, crashes or corrupts data; where\n");
    out.push_str("the vendor accepts the call and it works, it warns and says why it matters. \"What the vendor\n");
    out.push_str("does\" gives the code that decides it (repository, path, function), or \"documentation only\"\n");
    out.push_str("where that code is closed. HIXL rules may differ by engine (`warn (fabric_mem: error)`): see\n");
    out.push_str("[hixl.md](hixl.md) for the engine an instance runs.\n\n");
    for (family, title) in [(Family::Acl, "ACL runtime"), (Family::Hixl, "HIXL")] {
        out.push_str(&format!("## {title}\n\n"));
        out.push_str(
            "| ID | # | default | code on rejection | calls | checks | what the vendor does |\n|---|---|---|---|---|---|---|\n",
        );
        for r in CATALOGUE.iter().filter(|r| r.family == family) {
            let code = match r.code {
                Some(c) => format!("{c} `{}`", crate::codes::name(c)),
                None => "-".to_string(),
            };
            out.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {} | {} |\n",
                r.name,
                r.id as u32,
                r.default_text(),
                code,
                r.calls,
                r.summary,
                r.vendor
            ));
        }
        out.push('\n');
        for r in CATALOGUE.iter().filter(|r| r.family == family) {
            out.push_str(&format!(
                "### `{}`\n\n{}.\n\n- Fix: {}.\n- What the vendor does: {}.\n- Source: {}.\n\n",
                r.name, r.summary, r.fix, r.vendor, r.source
            ));
        }
    }
    out.push_str("## Field reports\n\nThe \"field failure\" sources above: what users of these APIs reported in public issue\ntrackers (vllm-ascend, Mooncake, LMCache, HIXL, torch_npu and others).\n\n| # | what was seen |\n|---|---|\n");
    for (id, text) in FIELD_REPORTS {
        out.push_str(&format!("| {id} | {text} |\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_is_in_rule_order_and_unique() {
        assert_eq!(CATALOGUE.len(), RuleId::ALL.len());
        assert!(RuleId::ALL.windows(2).all(|w| w[0] < w[1]), "RuleId::ALL is sorted");
        for (i, (r, id)) in CATALOGUE.iter().zip(RuleId::ALL).enumerate() {
            assert_eq!(r.id, *id, "entry {i} out of order");
            assert_eq!(id.index(), i);
        }
        let mut names: Vec<_> = CATALOGUE.iter().map(|r| r.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), CATALOGUE.len(), "duplicate rule name");
    }

    #[test]
    fn rejecting_rules_have_codes_in_their_family() {
        for r in CATALOGUE {
            if r.default == Action::Error {
                let code = r.code.unwrap_or_else(|| panic!("{} rejects without a code", r.name));
                match r.family {
                    Family::Acl => assert!((100000..600000).contains(&code), "{}", r.name),
                    Family::Hixl => assert!(code % 100 == 0 || code == 103902, "{}", r.name),
                }
            }
            assert!(r.name.starts_with(if r.family == Family::Acl { "ACL-" } else { "HIXL-" }));
            assert!(!r.fix.is_empty() && !r.summary.is_empty() && !r.source.is_empty());
        }
    }

    #[test]
    fn cited_field_reports_exist() {
        for r in CATALOGUE {
            let mut rest = r.source;
            while let Some(i) = rest.find("field failure ") {
                rest = &rest[i + "field failure ".len()..];
                let id: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
                assert!(FIELD_REPORTS.iter().any(|(f, _)| *f == id), "{} cites unknown field report {id}", r.name);
            }
        }
    }

    #[test]
    fn patterns() {
        assert_eq!(matching("ACL-HOSTREG-ALIGN"), vec![RuleId::AclHostregAlign]);
        assert_eq!(matching("acl-hostreg-align"), vec![RuleId::AclHostregAlign]);
        assert_eq!(matching("ACL-DEVPTR-*").len(), 3);
        assert_eq!(matching("*").len(), CATALOGUE.len());
        assert!(matching("ACL-NOPE").is_empty());
        assert_eq!(Action::parse("Warning"), Some(Action::Warn));
        assert_eq!(Action::parse("loud"), None);
    }

    #[test]
    fn catalogue_doc_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/rules.md");
        let want = catalogue_markdown();
        if std::env::var_os("REGCHECK_BLESS").is_some() {
            std::fs::write(path, &want).unwrap();
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(have == want, "docs/rules.md is stale: run REGCHECK_BLESS=1 cargo test --lib catalogue");
    }
}
