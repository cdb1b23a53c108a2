//! The HIXL rules (`hixl::Hixl` members and the `HixlCS*` C API), as pure functions of the
//! call's arguments and of facts the front end gathered (instance state, registrations,
//! allocations, memory map, SoC, driver version, transports). No I/O, no FFI.
//!
//! Where a fact a rule needs is unknown, the rule does not guess: it reports a [`Skip`]
//! (logged once at info level by the front end) and finds nothing.
//!
//! [`options`]: Initialize's options and the engine they select; [`mem`]: registration;
//! [`dereg`]: deregistration; [`transfer`]: transfers and the leak report at Finalize.

pub mod adxl;
pub mod dereg;
pub mod mem;
mod option_values;
pub mod options;
pub mod overlap;
#[cfg(test)]
mod tests;
pub mod transfer;

pub use adxl::*;
pub use dereg::*;
pub use mem::*;
pub use options::*;
pub use overlap::*;
pub use transfer::*;

use super::acl::human;
use super::products;
use super::{Finding, RuleId};
use crate::platform::hdk::HdkVersion;
use crate::state::hixl::HixlReg;
pub use crate::state::hixl_facts::{CsEndpointFact, MemKind};
use crate::state::registry::{Alloc, VmmAttr};

/// `hixl::MEM_DEVICE` / `COMM_MEM_TYPE_DEVICE`.
pub const MEM_DEVICE: i64 = 0;
/// `hixl::MEM_HOST` / `COMM_MEM_TYPE_HOST`.
pub const MEM_HOST: i64 = 1;
/// Host registration cap on Atlas A2/A3 below HDK 25.5.0 (and when the HDK is unknown).
pub const HOST_CAP_OLD: u64 = 20 << 30;
/// Host registration cap on Atlas A2/A3 from HDK 25.5.0.
pub const HOST_CAP_NEW: u64 = 1 << 40;
/// Device registration cap on Atlas A2/A3.
pub const DEVICE_CAP: u64 = 50 << 30;
/// The HDK version from which the 1 TiB host cap applies.
pub const HDK_BIG_HOST_CAP: &str = "25.5.0";
/// How many items a message lists at most.
pub(crate) const LIST_MAX: usize = 8;

impl MemKind {
    /// The kind the vendor uses for a raw `type` value.
    pub fn from_raw(ty: i64) -> MemKind {
        if ty == MEM_DEVICE {
            MemKind::Device
        } else {
            MemKind::Host
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            MemKind::Device => "MEM_DEVICE",
            MemKind::Host => "MEM_HOST",
        }
    }
}

/// Which registration call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegApi {
    /// `hixl::Hixl::RegisterMem(const MemDesc &mem, MemType type, MemHandle &)`.
    Hixl,
    /// `adxl::AdxlEngine::RegisterMem(const MemDesc &mem, MemType type, MemHandle &)`: the
    /// same engines behind another front end (`libllm_datadist.so`).
    Adxl,
    /// `HixlCSServerRegMem(server, tag, const CommMem *mem, MemHandle *)`.
    CsServer,
    /// `HixlCSClientRegMem(client, tag, const CommMem *mem, MemHandle *)`.
    CsClient,
}

impl RegApi {
    /// A C++ member (`hixl::Hixl` or `adxl::AdxlEngine`), not the HixlCS C API.
    pub fn is_member(self) -> bool {
        matches!(self, RegApi::Hixl | RegApi::Adxl)
    }

    pub fn call(self) -> &'static str {
        match self {
            RegApi::Hixl => "Hixl::RegisterMem",
            RegApi::Adxl => "AdxlEngine::RegisterMem",
            RegApi::CsServer => "HixlCSServerRegMem",
            RegApi::CsClient => "HixlCSClientRegMem",
        }
    }

    pub(crate) fn addr_arg(self) -> &'static str {
        if self.is_member() {
            "mem.addr"
        } else {
            "mem->addr"
        }
    }

    fn len_arg(self) -> &'static str {
        if self.is_member() {
            "mem.len"
        } else {
            "mem->size"
        }
    }

    fn type_arg(self) -> &'static str {
        if self.is_member() {
            "type"
        } else {
            "mem->type"
        }
    }

    /// The object a registration is made on, as an argument name and a noun.
    fn target(self) -> (&'static str, &'static str) {
        match self {
            RegApi::Hixl | RegApi::Adxl => ("this", "instance"),
            RegApi::CsServer => ("server_handle", "server"),
            RegApi::CsClient => ("client_handle", "client"),
        }
    }

    fn dereg_call(self) -> &'static str {
        match self {
            RegApi::Hixl | RegApi::Adxl => "DeregisterMem",
            RegApi::CsServer => "HixlCSServerUnregMem",
            RegApi::CsClient => "HixlCSClientUnregMem",
        }
    }

    fn type_names(self) -> (&'static str, &'static str) {
        match self {
            RegApi::Hixl => ("hixl::MEM_DEVICE", "hixl::MEM_HOST"),
            RegApi::Adxl => ("adxl::MEM_DEVICE", "adxl::MEM_HOST"),
            _ => ("COMM_MEM_TYPE_DEVICE", "COMM_MEM_TYPE_HOST"),
        }
    }
}

/// A registration's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegArgs {
    pub api: RegApi,
    pub addr: usize,
    pub len: u64,
    /// The raw `type` value (`MemType` or `CommMemType`).
    pub ty: i64,
}

impl RegArgs {
    /// `[addr, addr + len)` when it is a real range (non-NULL, non-empty, no wrap).
    pub fn range(&self) -> Option<(usize, usize)> {
        if self.addr == 0 || self.len == 0 {
            return None;
        }
        let len = usize::try_from(self.len).ok()?;
        self.addr.checked_add(len).map(|end| (self.addr, end))
    }

    /// The kind the vendor will record.
    pub fn kind(&self) -> MemKind {
        MemKind::from_raw(self.ty)
    }

    /// `type` is one of the two valid values.
    pub fn type_valid(&self) -> bool {
        self.ty == MEM_DEVICE || self.ty == MEM_HOST
    }
}

/// A rule that could not be evaluated, and why (the front end logs it once at info level).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    pub rule: RuleId,
    /// A short stable key for "log once" (`"no-soc"`, `"no-transport"`...).
    pub key: &'static str,
    pub why: String,
}

impl Skip {
    pub fn new(rule: RuleId, key: &'static str, why: impl Into<String>) -> Skip {
        Skip { rule, key, why: why.into() }
    }

    /// The info line the front end logs.
    pub fn message(&self) -> String {
        format!("{} skipped: {}", self.rule.name(), self.why)
    }
}

/// Findings plus the rules that were skipped for lack of facts.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Checks {
    pub findings: Vec<Finding>,
    pub skipped: Vec<Skip>,
}

impl Checks {
    pub(crate) fn push(&mut self, f: Option<Finding>) {
        self.findings.extend(f);
    }

    pub(crate) fn skip(&mut self, s: Skip) {
        self.skipped.push(s);
    }

    /// Whether a finding of `rule` is among the findings.
    pub fn has(&self, rule: RuleId) -> bool {
        self.findings.iter().any(|f| f.rule == rule)
    }
}

// ---------------------------------------------------------------------------------------
// Products and environment
// ---------------------------------------------------------------------------------------

/// The product, as far as the HIXL rules care.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProductClass {
    /// No SoC name could be had.
    Unknown,
    /// A SoC string not in the product table.
    Unlisted(String),
    /// Atlas A2 or A3: host/device caps, host memory from aclrtMallocHost.
    A2A3(String, products::Family),
    /// Ascend 950PR/950DT: no aclrtMallocHost memory over a host RoCE NIC.
    Ascend950(String),
    /// Any other listed product (the A2/A3 and 950 rules do not apply).
    Other(String),
}

impl ProductClass {
    pub fn from_soc(soc: Option<&str>) -> ProductClass {
        let Some(soc) = soc else { return ProductClass::Unknown };
        match products::lookup(soc) {
            None => ProductClass::Unlisted(soc.to_string()),
            Some(p) if p.hixl_a2_a3 => ProductClass::A2A3(format!("{soc} ({})", p.display), p.family),
            Some(p) if p.hixl_950 => ProductClass::Ascend950(format!("{soc} ({})", p.display)),
            Some(p) => ProductClass::Other(format!("{soc} ({})", p.display)),
        }
    }

    /// `Some(true)` for Atlas A2/A3, `None` when the product is unknown.
    pub fn a2_a3(&self) -> Option<bool> {
        match self {
            ProductClass::Unknown | ProductClass::Unlisted(_) => None,
            ProductClass::A2A3(..) => Some(true),
            _ => Some(false),
        }
    }

    /// `Some(true)` for Ascend 950PR/950DT, `None` when the product is unknown.
    pub fn ascend_950(&self) -> Option<bool> {
        match self {
            ProductClass::Unknown | ProductClass::Unlisted(_) => None,
            ProductClass::Ascend950(_) => Some(true),
            _ => Some(false),
        }
    }

    /// `Some(true)` when the product is of family `f`, `None` when the product is unknown.
    pub fn family_is(&self, f: products::Family) -> Option<bool> {
        match self {
            ProductClass::Unknown | ProductClass::Unlisted(_) => None,
            ProductClass::A2A3(_, family) => Some(*family == f),
            _ => Some(false),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            ProductClass::Unknown => "unknown",
            ProductClass::Unlisted(s)
            | ProductClass::A2A3(s, _)
            | ProductClass::Ascend950(s)
            | ProductClass::Other(s) => s,
        }
    }

    pub fn skip(&self, rule: RuleId) -> Skip {
        match self {
            ProductClass::Unlisted(s) => {
                Skip::new(rule, "unlisted-soc", format!("SoC {s:?} is not in the product table"))
            }
            _ => Skip::new(rule, "no-soc", "the SoC is unknown (aclrtGetSocName gave nothing; set REGCHECK_SOC_NAME)"),
        }
    }
}

/// The driver version, as far as the caps care.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HdkFact {
    pub version: Option<HdkVersion>,
    /// Text for messages: the version and where it came from, or why it is unknown.
    pub describe: std::sync::Arc<str>,
}

/// Where in its life an instance (or CS endpoint) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstanceState {
    /// regcheck did not see it constructed nor initialised (rules needing it are skipped).
    Unknown,
    Constructed,
    Initialized,
    Finalized,
}

/// `HIXL-NOT-INITIALIZED`.
/// `HIXL-CONNECT-SELF`: `Connect`/`ConnectAsync` to the instance's own local engine. hixl_cs
/// refuses it by name, the comm engine cannot link a device to itself; the fabric memory
/// engine links (the rule is off there, see the catalogue).
pub fn check_connect_self(call: &str, local_engine: Option<&[u8]>, remote: &[u8]) -> Option<Finding> {
    (local_engine == Some(remote)).then(|| {
        let name = String::from_utf8_lossy(remote);
        Finding::new(
            RuleId::HixlConnectSelf,
            "remote_engine",
            format!("\"{name}\" is this instance's own local engine: {call} to oneself"),
            "connect to a peer engine; a process's two engines need two instances with their own local_engine",
        )
    })
}

pub fn check_initialized(call: &str, st: InstanceState) -> Option<Finding> {
    let (problem, fix) = match st {
        InstanceState::Constructed => (
            "the instance is not initialised: Initialize has not succeeded on it",
            format!("call Initialize(local_engine, options) and check that it returns SUCCESS before {call}"),
        ),
        InstanceState::Finalized => (
            "the instance was finalised (Finalize was called)",
            format!("do not use an instance after Finalize; create and Initialize a new one before {call}"),
        ),
        InstanceState::Unknown | InstanceState::Initialized => return None,
    };
    Some(Finding::new(RuleId::HixlNotInitialized, "this", problem, fix))
}
