//! The rules against the live registrations: overlap, unregistering, the device pointer of
//! a registered range, freeing an allocation that is still registered.

use super::{device_text, human};
use crate::rules::{Action, Evidence, Finding, RuleId};
use crate::state::registry::HostReg;

/// Overlap with a live registration on the same device.
pub fn check_overlap(device: i32, existing: Option<&HostReg>) -> Option<Finding> {
    let r = existing?;
    if r.after_reset {
        // On the runtime-table path the runtime's pinned table still holds it (507910); on the
        // driver path the reset ended it. regcheck cannot tell which path the driver takes.
        return Some(
            Finding::new(
                RuleId::AclHostregOverlap,
                "ptr",
                format!(
                    "the range overlaps the PINNED-only registration [0x{:x}, 0x{:x}) ({}) made on {} before aclrtResetDevice released the device: on the runtime-table path (a driver without the pinned-register feature) the runtime's process-wide pinned table keeps it through the reset and refuses this with 507910; on the driver path the reset ended it",
                    r.base,
                    r.end(),
                    human(r.len),
                    device_text(device)
                ),
                format!(
                    "call aclrtHostUnregister(0x{:x}) before resetting the device (on the runtime-table path it still succeeds after the reset)",
                    r.base
                ),
            )
            .with_action(Action::Warn),
        );
    }
    Some(Finding::new(
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
        format!(
            "aclrtHostRegister* a range once per device (the same range again fails too); to change it, aclrtHostUnregister(0x{:x}) first",
            r.base
        ),
    ))
}

/// The vendor refused a V2 registration with 507910 and the only registration it overlaps is
/// on another device: on the runtime-table path the runtime's tables are process-wide
/// (hicann/runtime `register_memory.cc`, `CheckMemoryRangeRegistered`), the driver's check
/// (the driver path) is per device. Said after the vendor's answer, as a warning.
///
/// `r` marked [`HostReg::after_reset`]: a registration with a device address that a reset of
/// its device released; the runtime's mapped table keeps it (`InsertMappedMemory`), and the
/// driver, which forgot it with the device, refuses its `aclrtHostUnregister`.
pub fn check_overlap_elsewhere(device: i32, r: &HostReg) -> Finding {
    if r.device < 0 {
        return Finding::new(
            RuleId::AclHostregOverlap,
            "ptr",
            format!(
                "the range overlaps [0x{:x}, 0x{:x}) ({}), which the runtime's process-wide tables hold (on the runtime-table path: a driver without the pinned-register feature) though regcheck has no record of its registration",
                r.base,
                r.end(),
                human(r.len)
            ),
            format!(
                "register memory outside [0x{:x}, 0x{:x}), or aclrtHostUnregister(0x{:x}) first where it is still registered",
                r.base,
                r.end(),
                r.base
            ),
        )
        .with_action(Action::Warn);
    }
    if r.after_reset {
        return Finding::new(
            RuleId::AclHostregOverlap,
            "ptr",
            format!(
                "the range overlaps the registration [0x{:x}, 0x{:x}) ({}, {}) made on device {} before a reset released that device: on the runtime-table path (a driver without the pinned-register feature) the runtime's process-wide mapped table keeps it through the reset, and aclrtHostRegisterV2 checks that table",
                r.base,
                r.end(),
                human(r.len),
                r.flags_text(),
                r.device
            ),
            format!(
                "aclrtHostUnregister(0x{:x}) before resetting its device (after the reset the driver no longer knows it and the table keeps it for the process's life); meanwhile register memory outside [0x{:x}, 0x{:x})",
                r.base,
                r.base,
                r.end()
            ),
        )
        .with_action(Action::Warn);
    }
    Finding::new(
        RuleId::AclHostregOverlap,
        "ptr",
        format!(
            "the range overlaps the live registration [0x{:x}, 0x{:x}) ({}, {}) on device {}, not on {}, and the runtime refused it: on the runtime-table path (a driver without the pinned-register feature) aclrtHostRegisterV2 checks the runtime's process-wide tables, which hold every device's registrations",
            r.base,
            r.end(),
            human(r.len),
            r.flags_text(),
            r.device,
            device_text(device)
        ),
        "on this path register a range once for the process (it serves every device), or aclrtHostUnregister it on its device first",
    )
    .with_action(Action::Warn)
}

/// An overlap finding, told more: the same base registered again with another length is two
/// components registering one buffer (vllm-ascend PR #15624, where HCCL refused it); and the
/// call sites of both registrations, when known (`first`: where the live one was made, `this`:
/// the call being judged).
pub fn overlap_with_sites(
    mut f: Finding,
    r: &HostReg,
    start: usize,
    len: u64,
    first: Option<&str>,
    this: Option<&str>,
) -> Finding {
    if r.base == start && r.len != len && !r.after_reset {
        f.problem += &format!(
            ": the same base again with another length ({} now, {} before), as when two components each register one buffer (vllm-ascend PR #15624)",
            human(len),
            human(r.len)
        );
        f.fix = format!(
            "register the buffer once, in one component, and share the registration; or aclrtHostUnregister(0x{:x}) before registering it with the new length",
            r.base
        ).into();
    }
    match (first, this) {
        (Some(a), Some(b)) => f.problem += &format!("; the live registration was made at {a}, this one at {b}"),
        (Some(a), None) => f.problem += &format!("; the live registration was made at {a}"),
        _ => {}
    }
    f
}

/// Where an earlier unregistration of the pointer was made, added to a double unregistration's
/// finding (vllm-ascend #10724: a handle unregistered at shutdown that was gone already).
pub fn unregistered_at(mut f: Finding, site: Option<&str>) -> Finding {
    if let Some(s) = site {
        f.problem += &format!(" (it was unregistered at {s})");
    }
    f
}

/// `aclrtHostUnregister(ptr)`: `exact` is whether ptr is a live base on the current device;
/// `containing` the registration ptr falls inside, if any; `elsewhere` a PINNED-only
/// registration with this base on another device; `unregistered`: regcheck saw `ptr`
/// unregistered on `device`, and nothing registered there since (a double unregistration it
/// saw, rather than a pointer it has no record of).
pub fn check_unregister(
    ptr: usize,
    device: i32,
    exact: bool,
    containing: Option<&HostReg>,
    elsewhere: Option<&HostReg>,
    unregistered: bool,
) -> Option<Finding> {
    if exact {
        return None;
    }
    if ptr == 0 {
        // The ACL layer's own parameter check answers first (hicann/runtime
        // `aclrtHostUnregisterImpl`): a fact, whatever the records hold.
        return Some(
            Finding::new(RuleId::AclHostunregNotRegistered, "ptr", "is NULL", "pass the pointer that was registered")
                .with_code(100000)
                .with_evidence(Evidence::Certain),
        );
    }
    if unregistered && containing.is_none() && elsewhere.is_none() {
        return Some(
            Finding::new(
                RuleId::AclHostunregNotRegistered,
                "ptr",
                format!(
                    "0x{ptr:x} was unregistered already on {}, and not registered again since",
                    device_text(device)
                ),
                "unregister each registration once",
            )
            .with_evidence(Evidence::Seen),
        );
    }
    Some(match (containing, elsewhere) {
        // The runtime's pinned table is process-wide: on its own path the unregistration
        // succeeds from any device; the driver's (the driver path) is per device.
        (_, Some(r)) => Finding::new(
            RuleId::AclHostunregNotRegistered,
            "ptr",
            format!(
                "0x{ptr:x} is the base of a PINNED-only registration made on device {}, not on {}: on the runtime-table path (a driver without the pinned-register feature) the runtime's process-wide pinned table answers for every device and this succeeds; on the driver path the driver answers 507911",
                r.device,
                device_text(device)
            ),
            format!("unregister it with device {} current (aclrtSetDevice({}))", r.device, r.device),
        )
        .with_action(Action::Warn),
        (Some(r), None) => Finding::new(
            RuleId::AclHostunregNotRegistered,
            "ptr",
            format!(
                "0x{ptr:x} is inside the registration [0x{:x}, 0x{:x}) on {} but is not its base",
                r.base,
                r.end(),
                device_text(device)
            ),
            format!("pass the registered base pointer 0x{:x}", r.base),
        )
        .with_evidence(Evidence::Seen),
        (None, None) => Finding::new(
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
                    "0x{p_host:x} is inside the registration [0x{:x}, 0x{:x}) on {}, made with {} (none of MAPPED, IOMEMORY, READONLY: the runtime gave it no device address)",
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

/// `pHost` is not in a live registration of this device but is the base of the mapped
/// registration `r` of another device, or of one a device reset `released`: on the
/// runtime-table path (a driver without the device-pointer query) the runtime falls back to
/// its process-wide table keyed by host address, which no reset erases, and answers it
/// (hicann/runtime `api_impl.cc`, `ApiImpl::HostGetDevicePointer`, `GetMappedDevicePointer`);
/// the driver's query is per device and ends with it. regcheck cannot tell the path: the
/// not-mapped finding only warns, saying so.
pub fn devptr_elsewhere(findings: &mut [Finding], r: &HostReg, released: bool) {
    let whose = if released {
        format!("made on device {} before a reset released the device", r.device)
    } else {
        format!("on device {}", r.device)
    };
    for f in findings.iter_mut().filter(|f| f.rule == RuleId::AclDevptrNotMapped) {
        f.action = Some(Action::Warn);
        f.problem.push_str(&format!(
            " (it is the base of the registration [0x{:x}, 0x{:x}) ({}) {whose}: on the runtime-table path the runtime's process-wide table answers its device address on any device, through resets; the driver's query, per device, refuses it)",
            r.base,
            r.end(),
            r.flags_text(),
        ));
    }
}

/// The vendor answered 107000 for `pHost` inside the mapped registration `r` (not at its
/// base): the runtime's own table, used when the driver has no device-pointer query (the
/// runtime-table path: a driver without the pinned-register feature), is keyed by the
/// registration's base and answers nothing else.
pub fn check_devptr_interior(p_host: usize, device: i32, r: &HostReg) -> Finding {
    let offset = p_host.wrapping_sub(r.base);
    Finding::new(
        RuleId::AclDevptrInterior,
        "pHost",
        format!(
            "0x{p_host:x} is 0x{offset:x} bytes inside the registration [0x{:x}, 0x{:x}) on {} ({}), and the runtime refused it: on the runtime-table path (a driver without the device-pointer query) the runtime's table is keyed by the registered base, so only the base 0x{:x} is answered",
            r.base,
            r.end(),
            device_text(device),
            r.flags_text(),
            r.base
        ),
        format!(
            "ask for the device pointer of the base 0x{:x} and add the offset 0x{offset:x} (the device range is contiguous)",
            r.base
        ),
    )
    .with_action(Action::Warn)
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
    use crate::rules::acl::tests::rules;
    use crate::rules::acl::{MAPPED, PINNED};
    use crate::state::registry::HostRegApi;

    #[test]
    fn overlap_unregister_devptr_free() {
        let r =
            HostReg { device: 0, base: 0x10000, len: 0x2000, flags: MAPPED, api: HostRegApi::V2, after_reset: false };
        let f = check_overlap(0, Some(&r)).unwrap();
        assert!(f.problem.contains("0x10000") && f.fix.contains("aclrtHostUnregister(0x10000)"));
        assert!(check_overlap(0, None).is_none());
        assert!(check_unregister(0x10000, 0, true, Some(&r), None, false).is_none());
        let f = check_unregister(0x11000, 0, false, Some(&r), None, false).unwrap();
        assert!(f.fix.contains("0x10000"), "names the containing base");
        assert_eq!(f.evidence, Some(Evidence::Seen), "regcheck saw the registration it is inside");
        let f = check_unregister(0x50000, 0, false, None, None, false).unwrap();
        assert!(f.problem.contains("not a live registration"));
        assert_eq!(f.evidence, None, "no record: the rule's own evidence (unknown without LD_AUDIT)");
        let f = check_unregister(0, 0, false, None, None, false).unwrap();
        assert_eq!((f.reject_code(), f.evidence), (100000, Some(Evidence::Certain)), "NULL: the ACL layer's code");
        let f = check_unregister(0x50000, 0, false, None, None, true).unwrap();
        assert!(f.problem.contains("unregistered already"), "{}", f.problem);
        assert_eq!(f.evidence, Some(Evidence::Seen), "a double unregistration regcheck saw");
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

    /// A record the runtime's tables may hold (PINNED-only, after a reset or on another
    /// device) gives a warning, never a rejection: the path decides, and regcheck cannot know it.
    #[test]
    fn records_only_the_runtime_tables_may_hold_give_warnings() {
        let r =
            HostReg { device: 0, base: 0x10000, len: 0x2000, flags: PINNED, api: HostRegApi::V2, after_reset: true };
        let f = check_overlap(0, Some(&r)).unwrap();
        assert_eq!(f.action, Some(Action::Warn));
        assert!(f.problem.contains("aclrtResetDevice") && f.problem.contains("runtime-table path"), "{}", f.problem);
        assert!(f.fix.contains("aclrtHostUnregister(0x10000)"));
        let live = HostReg { after_reset: false, ..r };
        assert_eq!(check_overlap(0, Some(&live)).unwrap().action, None, "the rule's own action");
        let f = check_unregister(0x10000, 1, false, None, Some(&r), false).unwrap();
        assert_eq!(f.action, Some(Action::Warn));
        assert!(f.problem.contains("device 0") && f.fix.contains("aclrtSetDevice(0)"), "{f:?}");
        let inside = HostReg { device: 1, base: 0xf000, ..live };
        let f = check_unregister(0x10000, 1, false, Some(&inside), Some(&r), false).unwrap();
        assert_eq!(f.action, Some(Action::Warn), "the pinned table answers by its base, whatever the device holds");
    }

    #[test]
    fn an_interior_device_pointer_names_the_base_and_the_offset() {
        let r =
            HostReg { device: 0, base: 0x10000, len: 0x4000, flags: MAPPED, api: HostRegApi::V2, after_reset: false };
        let f = check_devptr_interior(0x10008, 0, &r);
        assert_eq!((f.rule, f.action, f.arg), (RuleId::AclDevptrInterior, Some(Action::Warn), "pHost"));
        assert!(
            f.problem.contains("only the base 0x10000 is answered") && f.problem.contains("runtime-table path"),
            "{}",
            f.problem
        );
        assert!(f.fix.contains("0x10000") && f.fix.contains("0x8"), "{}", f.fix);
    }

    #[test]
    fn an_overlap_on_another_device_is_explained_as_the_tables() {
        let r =
            HostReg { device: 1, base: 0x10000, len: 0x2000, flags: MAPPED, api: HostRegApi::V2, after_reset: false };
        let f = check_overlap_elsewhere(0, &r);
        assert_eq!((f.rule, f.action), (RuleId::AclHostregOverlap, Some(Action::Warn)));
        assert!(f.problem.contains("device 1, not on device 0") && f.problem.contains("process-wide"), "{}", f.problem);
        let released = check_overlap_elsewhere(0, &HostReg { after_reset: true, ..r });
        assert_eq!((released.rule, released.action), (RuleId::AclHostregOverlap, Some(Action::Warn)));
        assert!(
            released.problem.contains("made on device 1 before a reset released")
                && released.problem.contains("mapped table keeps it"),
            "{}",
            released.problem
        );
        assert!(released.fix.contains("aclrtHostUnregister(0x10000) before resetting"), "{}", released.fix);
        let unknown = check_overlap_elsewhere(0, &HostReg { device: -1, after_reset: true, ..r });
        assert!(unknown.problem.contains("no record of its registration"), "{}", unknown.problem);
    }

    /// Every call the one-scalar pass does not find clean has a finding (so the hot path never
    /// forwards what the rules would reject, nor builds findings for a clean call).
    #[test]
    fn devptr_clean_agrees_with_the_findings() {
        let r =
            HostReg { device: 0, base: 0x10000, len: 0x2000, flags: MAPPED, api: HostRegApi::V2, after_reset: false };
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

    #[test]
    fn the_same_base_with_another_length_names_both_sites_vllm_ascend_15624() {
        let r =
            HostReg { device: 0, base: 0x10000, len: 0x4000, flags: MAPPED, api: HostRegApi::V2, after_reset: false };
        let f = check_overlap(0, Some(&r)).unwrap();
        let f = overlap_with_sites(f, &r, 0x10000, 0x8000, Some("kv_a (a.c:10)"), Some("kv_b (b.c:20)"));
        assert!(
            f.problem.contains("the same base again with another length (32 KiB now, 16 KiB before)"),
            "{}",
            f.problem
        );
        assert!(f.problem.contains("vllm-ascend PR #15624"), "{}", f.problem);
        assert!(
            f.problem.ends_with("the live registration was made at kv_a (a.c:10), this one at kv_b (b.c:20)"),
            "{}",
            f.problem
        );
        assert!(f.fix.contains("register the buffer once"), "{}", f.fix);
        // an overlap at another base is not "the same base"; no sites, nothing added
        let g = overlap_with_sites(check_overlap(0, Some(&r)).unwrap(), &r, 0x11000, 0x1000, None, None);
        assert_eq!(g.problem, check_overlap(0, Some(&r)).unwrap().problem);
        let u = check_unregister(0x10000, 0, false, None, None, true).unwrap();
        assert!(unregistered_at(u, Some("shutdown (kv.c:99)"))
            .problem
            .ends_with("(it was unregistered at shutdown (kv.c:99))"));
    }
}
