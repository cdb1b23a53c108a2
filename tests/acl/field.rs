//! The registration failures the field reports (and one real use that must never be refused),
//! each named by its public report, through tests/c/field_reports.c in every mode.

use testkit::{Program, Scenarios, MODES};

use super::codes;

fn program() -> Scenarios {
    Scenarios::build(|l| Program::c("field_reports", &["tests/c/field_reports.c"]).link(l).libs(&["ascendcl"]))
}

fn want(c: &[(&str, i32)]) -> Vec<(String, i32)> {
    c.iter().map(|(l, c)| (l.to_string(), *c)).collect()
}

/// vllm-ascend PR #13894: `aclrtHostRegisterV2(ptr, size, ACL_HOST_REG_PINNED)` on a `MAP_SHARED`
/// mapping of a `/dev/shm` file is tmpfs shared memory, a real use: never refused as
/// file-backed, linked or preloaded, with the file kept or unlinked once mapped. (A guard: seen
/// failing with tmpfs classified as a regular file in `platform::memmap::live`.)
#[test]
fn a_dev_shm_mapping_registered_pinned_is_never_refused_as_file_backed_vllm_ascend_13894() {
    let s = program();
    for scenario in ["shm_pinned", "shm_pinned_unlinked"] {
        let b = s.bare().arg(scenario).run();
        assert_eq!(codes(&b), want(&[("register", 0), ("unregister", 0)]), "bare: {}", b.dump());
        for mode in MODES {
            let o = s.run(mode).arg(scenario).run();
            let ctx = || format!("{scenario} in {mode:?}\n{}", o.dump());
            assert_eq!(o.code(), Some(0), "{}", ctx());
            assert_eq!(codes(&o), codes(&b), "{}", ctx());
            assert!(!o.stderr.contains("[ACL-HOSTREG-FILE-BACKED]"), "{}", ctx());
            assert!(!o.stderr.contains("regcheck: error"), "{}", ctx());
        }
    }
}

/// vllm-ascend PR #15624: two components register one base with different lengths. The second
/// is refused as the vendor refuses it (507910), and the message says it is the same base with
/// another length and names both registrations' call sites. Seen failing before the sites were
/// kept (the message named neither).
#[test]
fn the_same_base_registered_with_another_length_names_both_call_sites_vllm_ascend_15624() {
    let s = program();
    let b = s.bare().arg("same_base").run();
    assert_eq!(codes(&b), want(&[("register_a", 0), ("register_b", 507910), ("unregister", 0)]), "{}", b.dump());
    for mode in MODES {
        let o = s.run(mode).arg("same_base").run();
        let ctx = || format!("{mode:?}\n{}", o.dump());
        assert_eq!(codes(&o), codes(&b), "{}", ctx());
        let line = o
            .messages()
            .into_iter()
            .find(|l| l.contains("[ACL-HOSTREG-OVERLAP]"))
            .unwrap_or_else(|| panic!("{}", ctx()));
        assert!(line.contains("the same base again with another length (2 MiB now, 1 MiB before)"), "{}", ctx());
        assert!(
            line.contains("the live registration was made at kv_component_a_register (field_reports.c:"),
            "{}",
            ctx()
        );
        assert!(line.contains("this one at kv_component_b_register (field_reports.c:"), "{}", ctx());
    }
}

/// vllm-ascend #10724: a registration unregistered again at shutdown. The second
/// `aclrtHostUnregister` answers as the vendor's (507911) and the message names where the
/// registration was unregistered before. Seen failing before the site was kept.
#[test]
fn a_second_unregistration_names_where_the_first_was_made_vllm_ascend_10724() {
    let s = program();
    let b = s.bare().arg("double_unregister").run();
    assert_eq!(codes(&b), want(&[("register", 0), ("release", 0), ("shutdown", 507911)]), "{}", b.dump());
    for mode in MODES {
        let o = s.run(mode).arg("double_unregister").run();
        let ctx = || format!("{mode:?}\n{}", o.dump());
        assert_eq!(codes(&o), codes(&b), "{}", ctx());
        let line = o
            .messages()
            .into_iter()
            .find(|l| l.contains("[ACL-HOSTUNREG-NOT-REGISTERED]"))
            .unwrap_or_else(|| panic!("{}", ctx()));
        assert!(line.contains("(it was unregistered at kv_release (field_reports.c:"), "{}", ctx());
    }
}

/// LMCache-Ascend (drivers before 25) registers host memory with the driver's `halHostRegister`
/// directly, past ACL. regcheck observes it (where the driver library provides it), so that an
/// ACL registration of part of that memory is judged as the driver judges it: refused as an
/// overlap (507910, the driver's "Local memory has been mapped"), with the message naming the
/// `halHostRegister` registration and where it was made; after `halHostUnregister` the ACL
/// registration goes through. Seen failing before `halHostRegister` was observed (no
/// ACL-HOSTREG-OVERLAP: regcheck forwarded the call and the driver refused it unexplained).
#[test]
fn an_acl_registration_over_memory_registered_with_hal_host_register_is_judged_as_the_driver_does() {
    let s = Scenarios::build(|l| {
        Program::c("hal_register", &["tests/c/hal_register.c"]).link(l).libs(&["ascendcl", "ascend_hal"])
    });
    let b = s.bare().run();
    let bare_codes: Vec<(String, i32)> = codes(&b).into_iter().filter(|(l, _)| l != "mlock").collect();
    assert_eq!(
        bare_codes,
        want(&[
            ("hal_register", 0),
            ("acl_register", 507910),
            ("hal_unregister", 0),
            ("acl_register_after", 0),
            ("acl_unregister", 0)
        ]),
        "{}",
        b.dump()
    );
    for mode in MODES {
        let o = s.run(mode).run();
        let ctx = || format!("{mode:?}\n{}", o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        assert_eq!(codes(&o), codes(&b), "{}", ctx());
        let line = o
            .messages()
            .into_iter()
            .find(|l| l.contains("[ACL-HOSTREG-OVERLAP]"))
            .unwrap_or_else(|| panic!("{}", ctx()));
        assert!(line.contains("halHostRegister HOST_MEM_MAP_DEV_PCIE_TH"), "{}", ctx());
        assert!(line.contains("the live registration was made at main (hal_register.c:"), "{}", ctx());
        assert_eq!(o.stderr.matches("[ACL-HOSTREG-OVERLAP]").count(), 1, "only the overlapping call: {}", ctx());
    }
}
