//! The checks on a registration's arguments alone: NULL, size, wrap, alignment, page
//! multiple, flags, size.

use super::{flag_names, human, RegArgs, RegCall, IOMEMORY, KNOWN_FLAGS, MAPPED, MIN_ALIGN, PINNED, READONLY};
use crate::rules::{Finding, RuleId};

/// The per-call host registration size that was answered 207001 in the field (~200 GB on a 910B
/// host with 2 TB of RAM, LMCache-Ascend #242): not a documented constant, so only a warning.
const CEILING_SEEN: u64 = 200_000_000_000;

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
                "0x{:x} is not aligned to {align} bytes (max(4 KiB, host page size {page_size})); it is {} bytes past a boundary{}",
                a.ptr,
                a.ptr % align,
                if page_size > MIN_ALIGN {
                    // Mooncake #4055/#4057: a malloc buffer on a 64 KiB-page host.
                    format!(": the driver maps host memory for the device only from an address aligned to this host kernel's page size ({page_size} bytes; its shared-virtual-memory map checks PAGE_ALIGNED(src_va), \"Src_va is zero or not page alignment\"), which malloc does not give")
                } else {
                    String::new()
                }
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
            format!(
                "{} ({}) in one registration is above {}{}",
                a.size,
                human(a.size),
                human(large_threshold),
                if a.size >= CEILING_SEEN {
                    // LMCache-Ascend #242 (910B, 2 TB of RAM).
                    ": single registrations above ~200 GB were answered 207001 (ACL_ERROR_RT_FEATURE_NOT_SUPPORT) in the field"
                } else {
                    ""
                }
            ),
            format!(
                "split it: register it in chunks of at most {} each (one aclrtHostRegister* per chunk, each page-aligned), and unregister each chunk",
                human(large_threshold.min(16 << 30))
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::acl::tests::{rules, v2};

    const PAGE: usize = 4096;

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
    fn a_registration_past_the_ceiling_says_split_it_lmcache_ascend_242() {
        let f = check_args(&v2(0x10000, 250 << 30, MAPPED), PAGE, 1 << 36);
        assert_eq!(rules(&f), vec![RuleId::AclHostregLarge]);
        assert!(f[0].problem.contains("answered 207001"), "{}", f[0].problem);
        assert!(f[0].fix.starts_with("split it: register it in chunks of at most 16 GiB"), "{}", f[0].fix);
        let below = check_args(&v2(0x10000, 100 << 30, MAPPED), PAGE, 1 << 36);
        assert!(!below[0].problem.contains("207001") && below[0].fix.starts_with("split it"), "{}", below[0].problem);
    }

    #[test]
    fn a_malloc_buffer_on_a_64k_page_host_is_misaligned_mooncake_4055() {
        // Mooncake #4055/#4057: 4 KiB-aligned (malloc's large blocks are 16 bytes past a 4 KiB
        // page), not 64 KiB-aligned: the driver's SVM map refuses it on a 64 KiB-page kernel.
        let f = check_args(&v2(0x7f00_0001_0010, 1 << 20, MAPPED), 65536, u64::MAX);
        assert_eq!(rules(&f), vec![RuleId::AclHostregAlign]);
        assert!(f[0].problem.contains("aligned to 65536 bytes"), "{}", f[0].problem);
        assert!(f[0].problem.contains("Src_va is zero or not page alignment"), "{}", f[0].problem);
        assert!(f[0].fix.contains("posix_memalign(&p, 65536, size)"), "{}", f[0].fix);
        let g = check_args(&v2(0x7f00_0001_1000, 1 << 20, MAPPED), 65536, u64::MAX);
        assert_eq!(rules(&g), vec![RuleId::AclHostregAlign], "4 KiB-aligned is not enough there");
        // on a 4 KiB-page host the driver checks 4 KiB: nothing to say of 64 KiB
        assert!(check_args(&v2(0x7f00_0001_1000, 1 << 20, MAPPED), PAGE, u64::MAX).is_empty());
    }

    #[test]
    fn large() {
        let f = check_args(&v2(0x10000, 1 << 37, MAPPED), PAGE, 1 << 36);
        assert_eq!(rules(&f), vec![RuleId::AclHostregLarge]);
        assert!(f[0].problem.contains("128 GiB"), "{}", f[0].problem);
    }
}
