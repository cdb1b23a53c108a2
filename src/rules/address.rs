//! Ranges at the edges of the address space: a host range must lie inside user space, below
//! the top the platform gives it ([`crate::platform::address`]). Ranges whose end wraps past
//! `2^64` are the `*-RANGE-OVERFLOW` rules' (they are not ranges at all); these rules take the
//! rest: a range that starts in the kernel half, or runs past the top of user space. The
//! vendor's runtime does not check either: the driver answers 507899, or HIXL fails later.
//! Pure functions of the range and the top.

use super::acl::{human, RegArgs as AclRegArgs};
use super::hixl::{MemKind, RegArgs as HixlRegArgs};
use super::{Finding, RuleId};
use crate::platform::address::KERNEL_HALF;

/// What is wrong with `[start, start + len)` against a user space ending at `top`, or `None`
/// when it lies inside (or is not a range: NULL, empty, or wrapping, which other rules take).
pub fn outside_user_space(start: u64, len: u64, top: u64) -> Option<String> {
    if start == 0 || len == 0 {
        return None;
    }
    let end = start.checked_add(len)?;
    if start >= KERNEL_HALF {
        Some(format!(
            "[0x{start:x}, 0x{end:x}) lies in the kernel half of the address space (at or above 0x{KERNEL_HALF:x}): no user memory is there"
        ))
    } else if end > top {
        Some(format!(
            "[0x{start:x}, 0x{end:x}) runs {} past the top of user space (0x{top:x}): no process can map memory there",
            human(end - start.max(top))
        ))
    } else {
        None
    }
}

const FIX: &str =
    "pass a pointer this process allocated and the allocation's real size (a negative or uninitialised size, or a pointer from another process, lands here)";

/// `ACL-HOSTREG-NOT-USER-SPACE`.
pub fn check_acl(a: &AclRegArgs, top: u64) -> Option<Finding> {
    let problem = outside_user_space(a.ptr as u64, a.size, top)?;
    Some(Finding::new(RuleId::AclHostregNotUserSpace, "ptr", problem, FIX))
}

/// `HIXL-REG-NOT-USER-SPACE`: host memory only (device addresses are the device's own space).
pub fn check_hixl(a: &HixlRegArgs, top: u64) -> Option<Finding> {
    if a.kind() != MemKind::Host {
        return None;
    }
    let problem = outside_user_space(a.addr as u64, a.len, top)?;
    Some(Finding::new(RuleId::HixlRegNotUserSpace, a.api.addr_arg(), problem, FIX))
}

/// `findings` with the address finding `f` where the vendor's order puts it: after "not
/// initialised" (HIXL checks its state first), before the rest (so that its code, not that of a
/// cap or origin rule the absurd range also trips, is the one returned).
pub fn first_for_hixl(mut findings: Vec<Finding>, f: Option<Finding>) -> Vec<Finding> {
    if let Some(f) = f {
        let at = findings.iter().take_while(|x| x.rule == RuleId::HixlNotInitialized).count();
        findings.insert(at, f);
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::acl::{RegCall, MAPPED};
    use crate::rules::hixl::{RegApi, MEM_DEVICE, MEM_HOST};

    const TOP47: u64 = 0x7fff_ffff_f000;

    #[test]
    fn edges() {
        assert_eq!(outside_user_space(0x1000, 4096, TOP47), None);
        assert_eq!(outside_user_space(TOP47 - 4096, 4096, TOP47), None, "the last user page");
        assert!(outside_user_space(TOP47 - 4096, 4097, TOP47).unwrap().contains("past the top of user space"));
        assert!(outside_user_space(TOP47, 4096, TOP47).unwrap().contains("4 KiB past"));
        assert!(outside_user_space(0x1000, 0x8000_0000_0000, TOP47).is_some(), "a size that runs out");
        assert!(outside_user_space(KERNEL_HALF, 4096, TOP47).unwrap().contains("kernel half"));
        assert!(outside_user_space(0xffff_8000_0000_0000, 4096, u64::MAX).unwrap().contains("kernel half"));
        // Not ranges: the NULL, size-zero and wrap rules take them.
        assert_eq!(outside_user_space(0, 4096, TOP47), None);
        assert_eq!(outside_user_space(TOP47 + 4096, 0, TOP47), None);
        assert_eq!(outside_user_space(0xffff_ffff_ffff_f000, 4096, TOP47), None);
        assert_eq!(outside_user_space(0x1000, u64::MAX, TOP47), None);
    }

    #[test]
    fn every_range_is_inside_or_rejected_by_one_rule() {
        // Exhaustive over the interesting points: inside user space, or exactly one of the
        // wrap / NULL / zero rules or this one.
        let points = [
            0,
            1,
            0xfff,
            0x1000,
            TOP47 - 4096,
            TOP47,
            TOP47 + 1,
            1 << 47,
            1 << 56,
            KERNEL_HALF - 1,
            KERNEL_HALF,
            u64::MAX - 4095,
            u64::MAX,
        ];
        for &start in &points {
            for &len in &points {
                let wraps = start.checked_add(len).is_none();
                let outside = outside_user_space(start, len, TOP47).is_some();
                let inside = start != 0 && len != 0 && !wraps && start + len <= TOP47;
                assert_eq!(
                    [inside, outside, wraps || start == 0 || len == 0].iter().filter(|b| **b).count(),
                    1,
                    "start 0x{start:x} len 0x{len:x}"
                );
            }
        }
    }

    #[test]
    fn acl_and_hixl_findings() {
        let a = AclRegArgs { call: RegCall::V2 { flag: MAPPED }, ptr: 0xffff_8000_0000_0000, size: 4096 };
        assert_eq!(check_acl(&a, TOP47).map(|f| f.rule), Some(RuleId::AclHostregNotUserSpace));
        let h = HixlRegArgs { api: RegApi::Hixl, addr: 0xffff_8000_0000_0000, len: 4096, ty: MEM_HOST };
        assert_eq!(check_hixl(&h, TOP47).map(|f| f.rule), Some(RuleId::HixlRegNotUserSpace));
        assert_eq!(check_hixl(&HixlRegArgs { ty: MEM_DEVICE, ..h }, TOP47), None, "device addresses are not host ones");
        assert_eq!(check_hixl(&HixlRegArgs { addr: 0x10000, ..h }, TOP47), None);
    }

    #[test]
    fn hixl_order() {
        let f = |r| Finding::new(r, "x", "y", "z");
        let got = first_for_hixl(
            vec![f(RuleId::HixlNotInitialized), f(RuleId::HixlRegHostCap)],
            Some(f(RuleId::HixlRegNotUserSpace)),
        );
        let rules: Vec<RuleId> = got.iter().map(|f| f.rule).collect();
        assert_eq!(rules, vec![RuleId::HixlNotInitialized, RuleId::HixlRegNotUserSpace, RuleId::HixlRegHostCap]);
        assert_eq!(first_for_hixl(vec![f(RuleId::HixlRegHostCap)], None).len(), 1);
    }

    #[test]
    fn an_end_at_two_to_the_64_wraps() {
        // ptr + size == 2^64: the end pointer is 0. HIXL's own check (len > UINT64_MAX - addr)
        // calls it an overflow too.
        let a = AclRegArgs { call: RegCall::V2 { flag: MAPPED }, ptr: 0xffff_ffff_ffff_f000, size: 4096 };
        let rules: Vec<RuleId> = crate::rules::acl::check_args(&a, 4096, u64::MAX).iter().map(|f| f.rule).collect();
        assert_eq!(rules, vec![RuleId::AclHostregRangeOverflow]);
        let a = AclRegArgs { ptr: 0x1000, size: 0xffff_ffff_ffff_f000, ..a };
        let rules: Vec<RuleId> = crate::rules::acl::check_args(&a, 4096, u64::MAX).iter().map(|f| f.rule).collect();
        assert!(rules.contains(&RuleId::AclHostregRangeOverflow), "{rules:?}");
        let h = HixlRegArgs { api: RegApi::Hixl, addr: usize::MAX - 10, len: 11, ty: MEM_HOST };
        let rules: Vec<RuleId> = crate::rules::hixl::check_args(&h).iter().map(|f| f.rule).collect();
        assert_eq!(rules, vec![RuleId::HixlRegRangeOverflow]);
    }
}
