//! The ACL host-registration rules, as pure functions of the call's arguments and of facts
//! the front end gathered (memory map, registry, environment). No I/O, no FFI.
//!
//! The rules by what they look at: `args` (the arguments alone), `environment` (the SoC's
//! product support, the thread's context), `memory` (what backs the range, how it is
//! page-locked, the locked-memory limit), `registry` (the live registrations: overlap,
//! unregister, device pointer, freeing). Here: the flags, the call's arguments, the message
//! helpers and the order of the vendor's checks.

mod args;
mod environment;
mod memory;
mod path;
mod registry;

pub use args::*;
pub use environment::*;
pub use memory::*;
pub use path::*;
pub use registry::*;

use super::RuleId;
use crate::state::registry::HostRegApi;

pub use crate::codes::host_reg::{flag_names, DEVICE_MAPPED, IOMEMORY, KNOWN_FLAGS, MAPPED, PINNED, READONLY};
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

    /// The range a registration the vendor accepted is recorded with: [`RegArgs::range`], or,
    /// for a size that runs past the end of the address space (a PINNED-only registration on
    /// the runtime's own tables takes it without asking the driver), up to the end of it.
    pub fn recorded_range(&self) -> Option<(usize, usize)> {
        if self.ptr == 0 || self.size == 0 {
            return None;
        }
        self.range().or(Some((self.ptr, usize::MAX)))
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

/// Where in the vendor's stack a registration rule's check happens, so that findings can be
/// put in the order the vendor fails and the first error's code is the vendor's own: the
/// ACL layer (NULL, size 0), the runtime's argument checks (flag or type bits), the runtime's
/// context check, then the driver: first whether the chip supports host registration at all
/// (an unsupported chip answers 207000 whatever the range), then the range (alignment, the
/// memory itself) (hicann/runtime `src/acl/aclrt_impl/memory.cpp`,
/// `src/runtime/api/impl/api_error.cc`, `api_impl.cc`; the simulator's driver, `drv_host_register`).
pub fn vendor_layer(rule: RuleId) -> u8 {
    match rule {
        RuleId::AclHostregNull | RuleId::AclHostregSizeZero => 0,
        RuleId::AclHostregFlagInvalid => 1,
        RuleId::AclHostregNoContext => 2,
        RuleId::AclHostregProduct => 3,
        _ => 4,
    }
}

/// Whether a registration rule's check is the driver's (the product, the range, the memory).
pub fn is_driver_check(rule: RuleId) -> bool {
    vendor_layer(rule) >= 3
}

/// A PINNED-only registration (no MAPPED, IOMEMORY or READONLY) reaches the driver only on its
/// pinned-register path: without that driver feature the runtime keeps it in its own tables
/// and never calls the driver (hicann/runtime `src/runtime/api/impl/api_impl.cc`,
/// `ApiImpl::HostRegisterV2`; `rt_utest_api_memory.cc`). regcheck cannot see the path, so what
/// only the driver refuses (the product, the alignment, the memory itself) is a warning there;
/// the runtime's own checks (arguments, context, overlap) are kept.
pub fn for_pinned_only(a: &RegArgs, findings: &mut [crate::rules::Finding]) {
    let RegCall::V2 { flag } = a.call else { return };
    if flag & PINNED == 0 || flag & DEVICE_MAPPED != 0 {
        return;
    }
    for f in findings.iter_mut() {
        let driver = is_driver_check(f.rule) && f.rule != RuleId::AclHostregOverlap;
        if driver && f.action.unwrap_or(f.rule.info().default) == crate::rules::Action::Error {
            f.action = Some(crate::rules::Action::Warn);
            f.problem.push_str(
                " (the closed driver refuses it, but a PINNED-only registration reaches the driver only on its pinned-register path; the runtime's own tables take it without asking the driver, and regcheck cannot tell which this runtime does)",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Finding;

    #[test]
    fn pinned_only_softens_what_only_the_driver_refuses() {
        let f = |rule| Finding::new(rule, "ptr", "x", "y");
        let all = || vec![f(RuleId::AclHostregAlign), f(RuleId::AclHostregOverlap), f(RuleId::AclHostregNull)];
        let mut v = all();
        for_pinned_only(&v2(0x1001, 4096, PINNED), &mut v);
        assert_eq!(v[0].action, Some(crate::rules::Action::Warn), "alignment: the driver's check");
        assert!(v[0].problem.contains("pinned-register path"), "{}", v[0].problem);
        assert_eq!((v[1].action, v[2].action), (None, None), "the runtime's own checks stay");
        for flag in [MAPPED, MAPPED | PINNED, READONLY | PINNED, IOMEMORY | PINNED] {
            let mut v = all();
            for_pinned_only(&v2(0x1001, 4096, flag), &mut v);
            assert!(v.iter().all(|f| f.action.is_none()), "{flag:#x}: the driver is called");
        }
        let mut v = all();
        for_pinned_only(&RegArgs { call: RegCall::V1 { ty: 0, dev_ptr_null: false }, ptr: 0x1001, size: 4096 }, &mut v);
        assert!(v.iter().all(|f| f.action.is_none()), "V1 always calls the driver");
    }

    pub(super) fn v2(ptr: usize, size: u64, flag: u32) -> RegArgs {
        RegArgs { call: RegCall::V2 { flag }, ptr, size }
    }

    pub(super) fn rules(f: &[Finding]) -> Vec<RuleId> {
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
                RuleId::AclHostregProduct,
                RuleId::AclHostregAlign,
            ],
            "the context check (107002) comes before the driver's product check (207000), which comes before its alignment check"
        );
    }
}
