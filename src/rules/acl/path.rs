//! What the host-registration path decides (hicann/runtime `ApiImpl::HostRegisterV2`,
//! `ApiImpl::HostRegister`; the path is the release profile's, `platform::release`).
//!
//! On the runtime's tables (every release up to 9.1.0; later ones without the driver's
//! pinned-register feature) the overlap is the runtime's own check, made before the driver
//! is called, a PINNED-only registration never reaches the driver, and V1 `aclrtHostRegister`
//! goes to the driver without reading the tables. On the driver's pin/unpin path the driver
//! checks everything, PINNED-only registrations included. When the path is unknown, what only
//! one path fails is at most a warning.

use super::{registry::check_overlap, vendor_layer, RegArgs, RegCall, DEVICE_MAPPED, PINNED};
use crate::platform::release::RegPath;
use crate::rules::{Action, Finding, RuleId};
use crate::state::registry::{HostReg, HostRegApi};

/// Whether `r` is a V2 registration that only pins (no device mapping).
fn pinned_only(r: &HostReg) -> bool {
    r.api == HostRegApi::V2 && r.flags & PINNED != 0 && r.flags & DEVICE_MAPPED == 0
}

/// The overlap finding of a registration call over `existing`, by path: V1 over a PINNED-only
/// registration goes to the driver, which knows of it only on its pin path (507910 there); on
/// the tables the driver never saw it and V1 reads no table, so the call succeeds.
///
/// `elsewhere`: with no overlap on this device, one on another (asked only for V2 on the
/// tables): the runtime's tables are process-wide, so it refuses this with 507910 whatever
/// the device (and without a current device: the check comes first up to 9.1.0).
pub fn check_overlap_by_path(
    path: RegPath,
    a: &RegArgs,
    device: i32,
    existing: Option<&HostReg>,
    elsewhere: Option<&HostReg>,
) -> Option<Finding> {
    if let (None, Some(r), RegPath::Tables, RegCall::V2 { .. }) = (existing, elsewhere, path, a.call) {
        let mut f = super::registry::check_overlap_elsewhere(device, r);
        f.action = None;
        f.problem.push_str(" (this runtime's path is the runtime's tables)");
        return Some(f);
    }
    let r = existing?;
    if !pinned_only(r) {
        return check_overlap(device, existing);
    }
    let v1 = matches!(a.call, RegCall::V1 { .. });
    let note = |mut f: Finding, text: &str| {
        f.problem.push_str(text);
        f
    };
    match (path, v1, r.after_reset) {
        // V1 reads no table, and the driver never saw a PINNED-only registration.
        (RegPath::Tables, true, _) => None,
        // The runtime's process-wide table keeps it through the reset: certain here.
        (RegPath::Tables, false, true) => check_overlap(device, existing).map(|mut f| {
            f.action = None;
            note(f, " (this runtime's path is the runtime's tables: it refuses this with 507910)")
        }),
        // The driver's registration ended with the device.
        (RegPath::Driver, _, true) => None,
        (RegPath::Driver, true, false) => check_overlap(device, existing)
            .map(|f| note(f, " (the driver pins PINNED-only registrations on this runtime's path: it refuses this with 507910)")),
        (RegPath::Unknown, true, false) => check_overlap(device, existing).map(|f| {
            note(
                f,
                ": a PINNED-only registration, which the driver holds only on its pin/unpin path (it refuses this with 507910); on the runtime's tables V1 aclrtHostRegister never reads them and succeeds, and regcheck cannot tell which path this runtime takes (set REGCHECK_CANN_VERSION)",
            )
            .with_action(Action::Warn)
        }),
        _ => check_overlap(device, existing),
    }
}

/// Adjust a registration's findings to the path. PINNED-only V2 calls: on the tables, what
/// only the driver refuses (product, alignment, the memory, a crash on an old kernel) cannot
/// happen (a warning that says so); on the driver path it stands; unknown, it is a warning
/// (`for_pinned_only`). V2 on the tables: the runtime's overlap check answers before the
/// driver's (and, up to 9.1.0, before the context check: `ApiErrorDecorator::HostRegisterV2`).
pub fn for_path(a: &RegArgs, path: RegPath, overlap_before_context: bool, findings: &mut [Finding]) {
    let RegCall::V2 { flag } = a.call else { return };
    if path == RegPath::Tables {
        // The vendor's layers, doubled to make room: the tables' check after the flags (and
        // before the context, up to 9.1.0), before the driver.
        let layer = |f: &Finding| match f.rule {
            RuleId::AclHostregOverlap if overlap_before_context => 3,
            RuleId::AclHostregOverlap => 5,
            r => 2 * vendor_layer(r),
        };
        findings.sort_by_key(layer);
    }
    if path != RegPath::Unknown {
        // The tables drop PINNED before the driver: the bit on page-locked memory is harmless;
        // the driver's pin path refuses it.
        for f in findings.iter_mut().filter(|f| f.rule == RuleId::AclHostregPinnedLocked) {
            if let Some(at) = f.problem.find("; regcheck cannot tell which this one does") {
                f.problem.truncate(at);
                f.problem.push_str(if path == RegPath::Tables {
                    "; this runtime's path is the runtime's tables: it drops the bit and succeeds"
                } else {
                    "; this runtime's path is the driver's pin/unpin: the driver refuses it"
                });
            }
        }
    }
    if flag & PINNED == 0 || flag & DEVICE_MAPPED != 0 {
        return;
    }
    match path {
        RegPath::Unknown => super::for_pinned_only(a, findings),
        RegPath::Driver => {}
        RegPath::Tables => {
            for f in findings.iter_mut() {
                let driver = super::is_driver_check(f.rule) && f.rule != RuleId::AclHostregOverlap;
                if driver && f.action.unwrap_or(f.rule.info().default) == Action::Error {
                    f.action = Some(Action::Warn);
                    f.problem.push_str(
                        " (on this runtime's path, the runtime's tables, a PINNED-only registration never reaches the driver and succeeds; the driver refuses it where it pins: CANN after 9.1.0 with the pinned-register feature)",
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{rules, v2};
    use super::*;

    fn reg(flags: u32, api: HostRegApi) -> HostReg {
        HostReg { device: 0, base: 0x10000, len: 0x4000, flags, api, after_reset: false }
    }

    fn v1() -> RegArgs {
        RegArgs { call: RegCall::V1 { ty: 0, dev_ptr_null: false }, ptr: 0x10000, size: 0x4000 }
    }

    #[test]
    fn v1_over_pinned_only_is_decided_by_the_path() {
        let pinned = reg(PINNED, HostRegApi::V2);
        assert_eq!(
            check_overlap_by_path(RegPath::Tables, &v1(), 0, Some(&pinned), None),
            None,
            "V1 never reads the tables"
        );
        let f = check_overlap_by_path(RegPath::Driver, &v1(), 0, Some(&pinned), None).unwrap();
        assert_eq!((f.rule, f.action), (RuleId::AclHostregOverlap, None), "the driver refuses: 507910");
        let f = check_overlap_by_path(RegPath::Unknown, &v1(), 0, Some(&pinned), None).unwrap();
        assert_eq!(f.action, Some(Action::Warn), "unknown path: at most a warning");
        assert!(f.problem.contains("REGCHECK_CANN_VERSION"), "{}", f.problem);
        let kept = HostReg { after_reset: true, ..pinned };
        let again = v2(0x10000, 0x1000, PINNED);
        let f = check_overlap_by_path(RegPath::Tables, &again, 0, Some(&kept), None).unwrap();
        assert_eq!(f.action, None, "the tables keep it through a reset: 507910, certain");
        assert_eq!(check_overlap_by_path(RegPath::Driver, &again, 0, Some(&kept), None), None, "ended with the device");
        let f = check_overlap_by_path(RegPath::Unknown, &again, 0, Some(&kept), None).unwrap();
        assert_eq!(f.action, Some(Action::Warn));
        // The tables are process-wide: another device's registration (or none current).
        let other = HostReg { device: 1, ..pinned };
        for device in [0, -1] {
            let f = check_overlap_by_path(RegPath::Tables, &again, device, None, Some(&other)).unwrap();
            assert_eq!((f.rule, f.action), (RuleId::AclHostregOverlap, None), "certain on the tables");
            assert_eq!(check_overlap_by_path(RegPath::Unknown, &again, device, None, Some(&other)), None);
            assert_eq!(
                check_overlap_by_path(RegPath::Tables, &v1(), device, None, Some(&other)),
                None,
                "V1 reads no table"
            );
        }
        // What both paths refuse stays an error whatever the path.
        let mapped = reg(super::super::MAPPED | PINNED, HostRegApi::V2);
        for path in [RegPath::Tables, RegPath::Driver, RegPath::Unknown] {
            let f = check_overlap_by_path(path, &v1(), 0, Some(&mapped), None).unwrap();
            assert_eq!(f.action, None, "{path:?}");
            let f = check_overlap_by_path(path, &v2(0x10000, 0x1000, PINNED), 0, Some(&pinned), None).unwrap();
            assert_eq!(f.action, None, "V2 over V2: {path:?}");
        }
    }

    #[test]
    fn pinned_only_driver_findings_by_path() {
        let all = || {
            vec![
                Finding::new(RuleId::AclHostregAlign, "ptr", "x", "y"),
                Finding::new(RuleId::AclHostregOverlap, "ptr", "x", "y"),
                Finding::new(RuleId::AclHostregNoContext, "ptr", "x", "y"),
            ]
        };
        let pinned = v2(0x10001, 4096, PINNED);
        let mut v = all();
        for_path(&pinned, RegPath::Driver, false, &mut v);
        assert!(v.iter().all(|f| f.action.is_none()), "the driver pins: its refusals stand");
        let mut v = all();
        for_path(&pinned, RegPath::Tables, true, &mut v);
        assert_eq!(
            rules(&v),
            vec![RuleId::AclHostregOverlap, RuleId::AclHostregNoContext, RuleId::AclHostregAlign],
            "9.1.0: the tables' overlap check first, before the context"
        );
        assert_eq!(v[2].action, Some(Action::Warn));
        assert!(v[2].problem.contains("never reaches the driver"), "{}", v[2].problem);
        let mut v = all();
        for_path(&pinned, RegPath::Tables, false, &mut v);
        assert_eq!(
            rules(&v)[..2],
            [RuleId::AclHostregNoContext, RuleId::AclHostregOverlap],
            "later: after the context"
        );
        let mut v = all();
        for_path(&pinned, RegPath::Unknown, false, &mut v);
        assert_eq!(v[0].action, Some(Action::Warn), "unknown: a warning");
        assert!(v[0].problem.contains("cannot tell"), "{}", v[0].problem);
    }
}
