//! Each rule, one scenario at a time, in the three modes: the code returned, whether the vendor
//! saw the call, the rule ID in the log.

use crate::{bare, check_warned_as_bare, codes, run_in, scenarios, value, Case, OLD_KERNEL, V2};
use testkit::{Mode, MODES};

#[test]
fn good_calls_are_forwarded_unchanged_and_silent() {
    // On the driver's registration path: there a device pointer is answered for an address
    // inside a registration (the runtime's own tables match the base only).
    let driver_path = &[("ACLSIM_PIN_REGISTER", "1"), ("ACLSIM_CANN_VERSION", "9.2.0")];
    for mode in MODES {
        let o = run_in(mode, "good", driver_path);
        assert_eq!(o.code(), Some(0), "{}", o.dump());
        let c = codes(&o);
        assert!(c.iter().all(|(_, code)| *code == 0), "{mode:?}: {c:?}\n{}", o.dump());
        assert_eq!(c.len(), 5);
        assert_eq!(value(&o, "devptr_differs"), Some(1));
        assert_eq!(value(&o, "live"), Some(0), "registry back to empty");
        assert_eq!(o.sim_calls(V2), 1);
        assert_eq!(o.sim_calls("aclrtHostRegister"), 1);
        assert_eq!(o.sim_calls("aclrtHostUnregister"), 2);
        assert_eq!(o.sim_calls("aclrtHostGetDevicePointer"), 1);
        assert!(!o.stderr.contains("regcheck:"), "a correct program gets no message: {}", o.dump());
    }
    // Bare, the program behaves the same (the regcheck API is simply absent).
    let o = bare("good", driver_path);
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    assert_eq!(value(&o, "live"), Some(-1));
    let c = codes(&o);
    assert_eq!(c.len(), 5, "{}", o.dump());
    assert!(c.iter().all(|(_, code)| *code == 0), "{c:?}\n{}", o.dump());
    assert_eq!(value(&o, "devptr_differs"), Some(1));
}

#[test]
fn null_pointer() {
    Case {
        scenario: "null",
        env: &[],
        codes: &[("register", 100000)],
        rule: Some("ACL-HOSTREG-NULL"),
        forwarded: (V2, 0),
    }
    .check();
    Case {
        scenario: "v1_devptr_null",
        env: &[],
        codes: &[("register", 100000)],
        rule: Some("ACL-HOSTREG-NULL"),
        forwarded: ("aclrtHostRegister", 0),
    }
    .check();
}

#[test]
fn size_zero_and_overflow() {
    Case {
        scenario: "size_zero",
        env: &[],
        codes: &[("register", 100000)],
        rule: Some("ACL-HOSTREG-SIZE-ZERO"),
        forwarded: (V2, 0),
    }
    .check();
    Case {
        scenario: "overflow",
        env: &[],
        codes: &[("register", 100000)],
        rule: Some("ACL-HOSTREG-RANGE-OVERFLOW"),
        forwarded: (V2, 0),
    }
    .check();
}

#[test]
fn misaligned_pointer_is_rejected_before_the_driver_sees_it() {
    // Bare: the driver's cryptic 507899.
    let o = bare("align", &[]);
    assert_eq!(codes(&o), vec![("register".to_string(), 507899)], "{}", o.dump());
    Case {
        scenario: "align",
        env: &[],
        codes: &[("register", 100000)],
        rule: Some("ACL-HOSTREG-ALIGN"),
        forwarded: (V2, 0),
    }
    .check();
    let o = run_in(Mode::Preload, "align", &[]);
    assert!(o.stderr.contains("posix_memalign"), "the message says how to fix it: {}", o.dump());
    assert!(o.stderr.contains("aclrtHostRegisterV2(ptr=0x"), "names the call and arguments: {}", o.dump());
}

#[test]
fn size_not_page_multiple_warns_and_forwards() {
    Case {
        scenario: "size_pages",
        env: &[],
        codes: &[("register", 0), ("unregister", 0)],
        rule: Some("ACL-HOSTREG-SIZE-PAGES"),
        forwarded: (V2, 1),
    }
    .check();
    let o = run_in(Mode::Shared, "size_pages", &[]);
    assert!(
        o.stderr.contains("regcheck: warning: [ACL-HOSTREG-SIZE-PAGES]") && o.stderr.contains("8192"),
        "{}",
        o.dump()
    );
}

#[test]
fn flags() {
    for scenario in ["flag_zero", "flag_unknown"] {
        Case {
            scenario,
            env: &[],
            codes: &[("register", 107000)],
            rule: Some("ACL-HOSTREG-FLAG-INVALID"),
            forwarded: (V2, 0),
        }
        .check();
    }
    // Documented as reserved, registered by the runtime (and mapped for a device address):
    // hicann/runtime `api_impl.cc`, `ApiImpl::HostRegisterV2`; `rt_utest_api_cloudv2.cc`.
    check_warned_as_bare("flag_reserved", &[], "ACL-HOSTREG-FLAG-RESERVED", V2);
    Case {
        scenario: "v1_type_invalid",
        env: &[],
        codes: &[("register", 207000)],
        rule: Some("ACL-HOSTREG-FLAG-INVALID"),
        forwarded: ("aclrtHostRegister", 0),
    }
    .check();
    check_warned_as_bare("v1_type_reserved", &[], "ACL-HOSTREG-FLAG-RESERVED", "aclrtHostRegister");
}

#[test]
fn pinned_on_page_locked_memory() {
    // Whether the vendor refuses it depends on its registration path (the driver's, or the
    // runtime's own tables, which drop PINNED): a warning, and the vendor answers. On 9.1.0 (the
    // default profile) the path is the tables; after it, the driver's pinned-register feature,
    // which regcheck asks; unknown only when the release is.
    check_warned_as_bare("pinned_locked", &[], "ACL-HOSTREG-PINNED-LOCKED", V2);
    let tables = "the runtime's tables: it drops the bit and succeeds";
    for (env, says) in [
        (&[][..], tables),
        (&[("ACLSIM_CANN_VERSION", "9.2.0"), ("ACLSIM_PIN_REGISTER", "0")][..], tables),
        (
            &[("ACLSIM_CANN_VERSION", "9.2.0"), ("ACLSIM_PIN_REGISTER", "1")][..],
            "the driver's pin/unpin: the driver refuses it",
        ),
        (&[("ACLSIM_CANN_VERSION", "banana")][..], "regcheck cannot tell which"),
    ] {
        let o = run_in(Mode::Preload, "pinned_locked", env);
        assert!(o.stderr.contains(says), "{env:?}: {}", o.dump());
    }
}

#[test]
fn pinned_without_mapped_is_info() {
    Case {
        scenario: "pinned_only",
        env: &[("REGCHECK_LOG", "info")],
        codes: &[("register", 0), ("unregister", 0)],
        rule: Some("ACL-HOSTREG-PINNED-ONLY"),
        forwarded: (V2, 1),
    }
    .check();
    // Not shown at the default level.
    let o = run_in(Mode::Preload, "pinned_only", &[]);
    assert!(!o.stderr.contains("PINNED-ONLY"), "{}", o.dump());
}

#[test]
fn pageable_memory_on_an_old_kernel() {
    // Bare: the documented "exception" (the simulator aborts the process).
    let o = bare("pageable", OLD_KERNEL);
    assert!(o.aborted(), "{}", o.dump());
    Case {
        scenario: "pageable",
        env: OLD_KERNEL,
        codes: &[("register", 100000)],
        rule: Some("ACL-HOSTREG-PAGEABLE-OLD-KERNEL"),
        forwarded: (V2, 0),
    }
    .check();
    // Page-locked memory is fine there: aclrtMallocHost, or mlocked.
    Case {
        scenario: "mallochost",
        env: OLD_KERNEL,
        codes: &[("register", 0), ("unregister", 0), ("freehost", 0)],
        rule: None,
        forwarded: (V2, 1),
    }
    .check();
    Case {
        scenario: "mlocked",
        env: OLD_KERNEL,
        codes: &[("register", 0), ("unregister", 0)],
        rule: None,
        forwarded: (V2, 1),
    }
    .check();
    // A newer kernel, or a raised threshold.
    Case { scenario: "pageable", env: &[], codes: &[("register", 0)], rule: None, forwarded: (V2, 1) }.check();
    let newer = &[("REGCHECK_KERNEL_RELEASE", "5.15.0"), ("REGCHECK_PAGEABLE_KERNEL_MAX", "5.19")];
    Case {
        scenario: "pageable",
        env: newer,
        codes: &[("register", 100000)],
        rule: Some("ACL-HOSTREG-PAGEABLE-OLD-KERNEL"),
        forwarded: (V2, 0),
    }
    .check();
}

/// The memory-map rules, with the map read as `env` makes regcheck read it.
fn what_backs_the_memory_with(env: &[(&str, &str)]) {
    Case {
        scenario: "unmapped",
        env,
        codes: &[("register", 100000)],
        rule: Some("ACL-HOSTREG-UNMAPPED"),
        forwarded: (V2, 0),
    }
    .check();
    Case {
        scenario: "file_backed",
        env,
        codes: &[("register", 100000)],
        rule: Some("ACL-HOSTREG-FILE-BACKED"),
        forwarded: (V2, 0),
    }
    .check();
    Case { scenario: "memfd", env, codes: &[("register", 0), ("unregister", 0)], rule: None, forwarded: (V2, 1) }
        .check();
    // Stack memory: no public code refuses it (a stack is anonymous memory the driver can pin),
    // so it is a warning about its lifetime, and the vendor answers (issue 33 item 11).
    check_warned_as_bare("stack", env, "ACL-HOSTREG-STACK", V2);
    Case {
        scenario: "readonly",
        env,
        codes: &[("register", 100000)],
        rule: Some("ACL-HOSTREG-READONLY-MAPPING"),
        forwarded: (V2, 0),
    }
    .check();
}

#[test]
fn what_backs_the_memory() {
    what_backs_the_memory_with(&[]);
    // Bare, the driver says only 507899 for these.
    assert_eq!(codes(&bare("file_backed", &[])), vec![("register".to_string(), 507899)]);
}

#[test]
fn what_backs_the_memory_from_the_maps_text() {
    // As on kernels before 6.11: /proc/self/maps, and the kept copy of it.
    what_backs_the_memory_with(&[("REGCHECK_TEST_MEMMAP", "maps")]);
}

#[test]
fn overlap_is_per_device_and_byte_granular() {
    Case {
        // The driver's registration path keeps registrations per device; the runtime's own
        // tables are process-wide (there `other_device` is the vendor's 507910).
        scenario: "overlap",
        env: &[("ACLSIM_PIN_REGISTER", "1"), ("ACLSIM_CANN_VERSION", "9.2.0")],
        codes: &[("register", 0), ("overlap", 507910), ("adjacent", 0), ("other_device", 0)],
        rule: Some("ACL-HOSTREG-OVERLAP"),
        forwarded: (V2, 3),
    }
    .check_audited();
}

#[test]
fn product_support() {
    let inference = &[("REGCHECK_SOC_NAME", "Ascend310P3"), ("ACLSIM_SOC_NAME", "Ascend310P3")];
    Case {
        scenario: "pageable",
        env: inference,
        codes: &[("register", 207000)],
        rule: Some("ACL-HOSTREG-PRODUCT"),
        forwarded: (V2, 0),
    }
    .check();
    // The SoC is asked of the vendor when not overridden; the bare Ascend910B is the training part.
    // Its runtime registers (the cloud chip's feature table): a warning, the vendor answers.
    let training = &[("ACLSIM_SOC_NAME", "Ascend910B")];
    check_warned_as_bare("pageable", training, "ACL-HOSTREG-PRODUCT", V2);
    let o = run_in(Mode::Preload, "pageable", training);
    assert!(o.stderr.contains("feature table"), "{}", o.dump());
    // 950DT: the sources conflict, so a warning naming the conflict, and the call goes through.
    let dt = &[("ACLSIM_SOC_NAME", "Ascend950DT_9571")];
    Case {
        scenario: "pageable",
        env: dt,
        codes: &[("register", 0)],
        rule: Some("ACL-HOSTREG-PRODUCT"),
        forwarded: (V2, 1),
    }
    .check();
    let o = run_in(Mode::Preload, "pageable", dt);
    assert!(o.stderr.contains("warning") && o.stderr.contains("lists it as supported"), "{}", o.dump());
    // Unknown SoC strings are allowed.
    Case {
        scenario: "pageable",
        env: &[("ACLSIM_SOC_NAME", "Ascend999X")],
        codes: &[("register", 0)],
        rule: None,
        forwarded: (V2, 1),
    }
    .check();
}

#[test]
fn thread_without_context() {
    Case {
        scenario: "no_context",
        env: &[],
        codes: &[("register", 107002)],
        rule: Some("ACL-HOSTREG-NO-CONTEXT"),
        forwarded: (V2, 0),
    }
    .check();
    Case { scenario: "borrowed_context", env: &[], codes: &[("register", 0)], rule: None, forwarded: (V2, 1) }.check();
}

#[test]
fn memlock_limit_warns() {
    Case {
        scenario: "memlock",
        env: &[],
        codes: &[("register", 0)],
        rule: Some("ACL-HOSTREG-MEMLOCK"),
        forwarded: (V2, 1),
    }
    .check();
}

#[test]
fn large_registration_warns() {
    Case {
        scenario: "large",
        env: &[("REGCHECK_LARGE_BYTES", "8K")],
        codes: &[("register", 0)],
        rule: Some("ACL-HOSTREG-LARGE"),
        forwarded: (V2, 1),
    }
    .check();
}

#[test]
fn unregister_needs_the_exact_base() {
    Case {
        scenario: "unregister_interior",
        env: &[],
        codes: &[("register", 0), ("interior", 507911), ("unregister", 0), ("twice", 507911)],
        rule: Some("ACL-HOSTUNREG-NOT-REGISTERED"),
        forwarded: ("aclrtHostUnregister", 1),
    }
    .check_audited();
    let o = run_in(Mode::Preload, "unregister_interior", &[]);
    assert!(
        o.stderr.contains("is inside the registration") && o.stderr.contains("pass the registered base pointer"),
        "{}",
        o.dump()
    );
}

/// A rejection needs certainty. Preloaded or linked (`-lregcheck`), regcheck's own `dlsym`
/// brings every caller to it, so its records are whole and it decides exactly as under the
/// `LD_AUDIT` module (issue 32; seen failing before: forwarded with a warning). Linked with
/// libregcheck.a, a registration made through a handle of the caller's own (`ctypes`,
/// `dlsym`) may never reach regcheck, so "not registered" in its records is no proof: each
/// such finding is a warning that says why and how to be sure, the call goes to the vendor,
/// and the vendor's answer is what the program gets.
#[test]
fn rejections_by_records_need_whole_records() {
    // Seen: regcheck saw the registration the call collides with, so the finding keeps its
    // level (and counts) but is not enforced; unknown: no record, a warning.
    for (scenario, rule, call, seen) in [
        ("unregister_interior", "ACL-HOSTUNREG-NOT-REGISTERED", "aclrtHostUnregister", true),
        ("overlap", "ACL-HOSTREG-OVERLAP", V2, true),
        ("devptr", "ACL-DEVPTR-NOT-MAPPED", "aclrtHostGetDevicePointer", false),
    ] {
        for mode in [Mode::Preload, Mode::Shared] {
            let o = run_in(mode, scenario, &[]);
            let audited = scenarios().run(mode).arg(scenario).audit().run();
            let ctx = || format!("{scenario} {mode:?}\n{}\n--- audited\n{}", o.dump(), audited.dump());
            assert_eq!(codes(&o), codes(&audited), "{}", ctx());
            assert!(o.stderr.contains(&format!("regcheck: error: [{rule}]")), "{}", ctx());
            assert!(!o.stderr.contains("regcheck saw this itself"), "{}", ctx());
            assert!(!o.stderr.contains("regcheck has no record to be sure"), "{}", ctx());
            assert_eq!(o.sim_calls(call), audited.sim_calls(call), "{}", ctx());
        }
        let b = bare(scenario, &[]);
        let o = run_in(Mode::Static, scenario, &[]);
        let ctx = || format!("{scenario} static\n{}", o.dump());
        // The other findings of the scenario (NULL pointers, a flag) still reject.
        let forwarded: Vec<_> =
            codes(&o).into_iter().filter(|(l, _)| !["null_out", "flag"].contains(&l.as_str())).collect();
        let vendor: Vec<_> =
            codes(&b).into_iter().filter(|(l, _)| !["null_out", "flag"].contains(&l.as_str())).collect();
        assert_eq!(forwarded, vendor, "{}", ctx());
        let (level, not, why) = if seen {
            ("error", "warning", "regcheck saw this itself")
        } else {
            ("warning", "error", "regcheck has no record to be sure of this")
        };
        assert!(o.stderr.contains(&format!("regcheck: {level}: [{rule}]")), "{}", ctx());
        // (An overlap on another device is explained as a warning after the vendor's answer.)
        if !seen {
            assert!(!o.stderr.contains(&format!("regcheck: {not}: [{rule}]")), "{}", ctx());
        }
        assert!(o.stderr.contains(why) && o.stderr.contains("regcheck run --audit"), "{}", ctx());
        assert!(o.stderr.contains("regcheck's own dlsym is not the one this program uses"), "{}", ctx());
        assert!(o.sim_calls(call) > 0, "{}", ctx());
    }
}

#[test]
fn device_pointer() {
    // Audited: ACL-DEVPTR-NOT-MAPPED judges by the records of registrations.
    for mode in [Mode::Preload, Mode::Shared] {
        let o = scenarios().run(mode).arg("devptr").audit().run();
        assert_eq!(
            codes(&o),
            [
                ("unregistered", 107000),
                ("register_pinned_only", 0),
                ("not_mapped", 107000),
                ("null_out", 100000),
                ("flag", 100000)
            ]
            .map(|(l, c)| (l.to_string(), c))
            .to_vec(),
            "{}",
            o.dump()
        );
        // The vendor answers every device-pointer look-up first; regcheck explains its failures.
        assert_eq!(o.sim_calls("aclrtHostGetDevicePointer"), 4, "{}", o.dump());
        for rule in ["ACL-DEVPTR-NOT-MAPPED", "ACL-DEVPTR-NULL", "ACL-DEVPTR-FLAG"] {
            assert!(o.stderr.contains(&format!("[{rule}]")), "{rule}: {}", o.dump());
        }
        assert!(o.stderr.contains("flags PINNED"), "says which flags the registration has: {}", o.dump());
    }
}

#[test]
fn freeing_registered_memory_warns() {
    Case {
        scenario: "freehost_registered",
        env: &[],
        codes: &[("register", 0), ("freehost", 0)],
        rule: Some("ACL-FREEHOST-REGISTERED"),
        forwarded: ("aclrtFreeHost", 1),
    }
    .check();
}

#[test]
fn or_ed_malloc_policies_are_forwarded() {
    Case {
        scenario: "malloc_policy",
        env: &[],
        codes: &[("malloc", 0), ("free", 0)],
        rule: None,
        forwarded: ("aclrtMalloc", 1),
    }
    .check();
}

#[test]
fn registrations_end_with_the_device_not_with_aclfinalize() {
    let want = [
        ("register", 0),
        ("set_again", 0),
        ("reset_once", 0),
        ("still_registered", 507910),
        ("reset_last", 0),
        ("set", 0),
        ("register_after_reset", 0),
        ("finalize", 0),
        ("init", 0),
        ("set_after_init", 0),
        ("register_after_finalize", 507910),
        ("unregister", 0),
    ]
    .map(|(l, c)| (l.to_string(), c))
    .to_vec();
    // On the driver's registration path, where a device reset ends the device's registrations
    // (the runtime's own tables outlive it).
    let driver_path = &[("ACLSIM_PIN_REGISTER", "1"), ("ACLSIM_CANN_VERSION", "9.2.0")];
    assert_eq!(codes(&bare("device_lifetime", driver_path)), want, "the vendor's behaviour");
    for mode in [Mode::Preload, Mode::Shared] {
        let o = scenarios()
            .run(mode)
            .arg("device_lifetime")
            .env("ACLSIM_PIN_REGISTER", "1")
            .env("ACLSIM_CANN_VERSION", "9.2.0")
            .audit()
            .run();
        assert_eq!(codes(&o), want, "{}", o.dump());
        assert_eq!(value(&o, "live"), Some(0), "{}", o.dump());
        assert_eq!(o.sim_calls(V2), 2, "only the overlaps are stopped by regcheck: {}", o.dump());
    }
}

/// A device reset ends what the driver holds, not the runtime's process-wide tables: on the
/// runtime-table path a PINNED-only registration outlives the reset (its unregistration
/// succeeds, a new registration of it is refused), a MAPPED one is forgotten by the driver.
/// regcheck cannot tell the two paths apart, so it rejects neither what the one path accepts
/// nor what the other does: the calls answer as they do bare, on both paths, under `--audit`.
#[test]
fn a_device_reset_keeps_the_runtime_tables_pinned_registrations() {
    let table = [
        ("register_pinned", 0),
        ("register_mapped", 0),
        ("reset_last", 0),
        ("set", 0),
        ("register_pinned_again", 507910),
        ("unregister_pinned", 0),
        ("unregister_pinned_twice", 507911),
        ("unregister_mapped", 507911),
    ];
    let driver = [
        ("register_pinned", 0),
        ("register_mapped", 0),
        ("reset_last", 0),
        ("set", 0),
        ("register_pinned_again", 0),
        ("unregister_pinned", 0),
        ("unregister_pinned_twice", 507911),
        ("unregister_mapped", 507911),
    ];
    for (path, want) in [("0", table), ("1", driver)] {
        let env = &[("ACLSIM_PIN_REGISTER", path), ("ACLSIM_CANN_VERSION", "9.2.0")];
        let want: Vec<(String, i32)> = want.iter().map(|(l, c)| (l.to_string(), *c)).collect();
        assert_eq!(codes(&bare("reset_keeps_pinned", env)), want, "the vendor's behaviour, ACLSIM_PIN_REGISTER={path}");
        for mode in [Mode::Preload, Mode::Shared] {
            let o = scenarios()
                .run(mode)
                .arg("reset_keeps_pinned")
                .env("ACLSIM_PIN_REGISTER", path)
                .env("ACLSIM_CANN_VERSION", "9.2.0")
                .audit()
                .run();
            let ctx = || format!("ACLSIM_PIN_REGISTER={path}, {mode:?}\n{}", o.dump());
            assert_eq!(codes(&o), want, "{}", ctx());
            // The one the vendor accepts reaches it; the two it refuses regcheck's records refuse.
            assert_eq!(o.sim_calls("aclrtHostUnregister"), 1, "{}", ctx());
            assert_eq!(value(&o, "live"), Some(0), "{}", ctx());
            // The refused re-registration is explained (the vendor's 507910 on the table path).
            assert!(o.stderr.contains("[ACL-HOSTREG-OVERLAP]") || path == "1", "{}", ctx());
            assert!(o.stderr.contains("aclrtResetDevice") || path == "1", "{}", ctx());
        }
    }
}

/// The runtime's pinned table is process-wide: on the runtime-table path a PINNED-only
/// registration is unregistered from any device; the driver's registrations are per device.
#[test]
fn a_pinned_registration_is_process_wide_on_the_runtime_table_path() {
    for (path, other, forwarded) in [("0", 0, 1), ("1", 507911, 2)] {
        let env = &[("ACLSIM_PIN_REGISTER", path), ("ACLSIM_CANN_VERSION", "9.2.0")];
        let first = if path == "0" { 507911 } else { 0 };
        let want: Vec<(String, i32)> = [
            ("register", 0),
            ("set_other", 0),
            ("unregister_other", other),
            ("set_first", 0),
            ("unregister_first", first),
        ]
        .iter()
        .map(|(l, c)| (l.to_string(), *c))
        .collect();
        assert_eq!(
            codes(&bare("pinned_other_device", env)),
            want,
            "the vendor's behaviour, ACLSIM_PIN_REGISTER={path}"
        );
        for mode in [Mode::Preload, Mode::Shared] {
            let o = scenarios()
                .run(mode)
                .arg("pinned_other_device")
                .env("ACLSIM_PIN_REGISTER", path)
                .env("ACLSIM_CANN_VERSION", "9.2.0")
                .audit()
                .run();
            let ctx = || format!("ACLSIM_PIN_REGISTER={path}, {mode:?}\n{}", o.dump());
            assert_eq!(codes(&o), want, "{}", ctx());
            // On the table path the second is refused by regcheck's records, as by the vendor.
            assert_eq!(o.sim_calls("aclrtHostUnregister"), forwarded, "{}", ctx());
        }
    }
}

/// The device pointer of an address inside a MAPPED registration: the driver's query answers
/// it (the driver path), the runtime's own table, keyed by the registration's base, does not
/// (the runtime-table path: 107000 and NULL). The vendor decides; regcheck explains its 107000
/// with a warning that names the registered base, and says nothing where the look-up succeeds.
#[test]
fn an_interior_device_pointer_look_up_on_the_runtime_table_path_is_explained() {
    for (path, inside) in [("0", 107000), ("1", 0)] {
        let env = &[("ACLSIM_PIN_REGISTER", path), ("ACLSIM_CANN_VERSION", "9.2.0")];
        let want: Vec<(String, i32)> =
            [("register", 0), ("devptr_base", 0), ("devptr_inside", inside), ("unregister", 0)]
                .iter()
                .map(|(l, c)| (l.to_string(), *c))
                .collect();
        let b = bare("devptr_interior", env);
        assert_eq!(codes(&b), want, "the vendor's behaviour, ACLSIM_PIN_REGISTER={path}: {}", b.dump());
        assert_eq!(value(&b, "inside_null"), Some(i64::from(path == "0")), "{}", b.dump());
        for mode in MODES {
            let o = run_in(mode, "devptr_interior", env);
            let ctx = || format!("ACLSIM_PIN_REGISTER={path}, {mode:?}\n{}", o.dump());
            assert_eq!(codes(&o), want, "{}", ctx());
            assert_eq!(o.sim_calls("aclrtHostGetDevicePointer"), 2, "both forwarded: {}", ctx());
            let base = o.stdout.lines().find_map(|l| l.strip_prefix("base ")).expect("base").trim().to_string();
            let warned = o.messages().into_iter().find(|l| l.starts_with("regcheck: warning: [ACL-DEVPTR-INTERIOR]"));
            if path == "0" {
                let w = warned.unwrap_or_else(|| panic!("no warning: {}", ctx()));
                assert!(w.contains(&base) && w.contains("only the base"), "names the base {base}: {w}");
                assert!(!o.stderr.contains("regcheck: error"), "{}", ctx());
            } else {
                assert!(warned.is_none(), "the driver answered: nothing to explain: {}", ctx());
                assert!(!o.stderr.contains("regcheck:"), "{}", ctx());
            }
        }
    }
}

/// The same range on two devices: the driver's overlap check is per device (the driver path
/// accepts it), the runtime's tables are process-wide (the runtime-table path refuses it with
/// 507910). regcheck knows the path (it asks the driver for its pinned-register feature, as the
/// runtime does): it forwards the second on the driver path, and refuses it on the tables, with
/// the vendor's code and the other device's registration.
#[test]
fn an_overlap_on_another_device_is_explained_on_the_runtime_table_path() {
    for (path, other) in [("0", 507910), ("1", 0)] {
        let env = &[("ACLSIM_PIN_REGISTER", path), ("ACLSIM_CANN_VERSION", "9.2.0")];
        let b = bare("overlap_other_device", env);
        let want = codes(&b);
        assert_eq!(want[2], ("register_other".to_string(), other), "the vendor's behaviour: {}", b.dump());
        for mode in MODES {
            let o = run_in(mode, "overlap_other_device", env);
            let ctx = || format!("ACLSIM_PIN_REGISTER={path}, {mode:?}\n{}", o.dump());
            assert_eq!(codes(&o), want, "{}", ctx());
            let said = o.messages().into_iter().find(|l| l.contains("[ACL-HOSTREG-OVERLAP]"));
            if path == "0" {
                let w = said.unwrap_or_else(|| panic!("not explained: {}", ctx()));
                assert!(w.starts_with("regcheck: error: [ACL-HOSTREG-OVERLAP]"), "{w}");
                assert!(w.contains("on device 0, not on device 1") && w.contains("process-wide"), "{w}");
                // Refused where regcheck's records are whole (under LD_PRELOAD); forwarded, and
                // said, where they may not be (linked statically).
                let forwarded = w.contains("(forwarded)");
                assert!(!(forwarded && mode == Mode::Preload), "{}", ctx());
                assert_eq!(o.sim_calls(V2), if forwarded { 2 } else { 1 }, "{}", ctx());
            } else {
                assert_eq!(o.sim_calls(V2), 2, "{}", ctx());
                assert!(said.is_none(), "{}", ctx());
            }
        }
    }
}

/// The vendor's order of checks: on a chip without host registration (Ascend310P3) the driver
/// refuses the chip (207000) before it looks at the range; a misaligned pointer there gets the
/// chip's code from regcheck too (issue 33 item 8).
#[test]
fn an_unsupported_chip_is_refused_before_the_alignment() {
    let env = &[("ACLSIM_SOC_NAME", "Ascend310P3")];
    let want = vec![("register".to_string(), 207000), ("register_v1".to_string(), 207000)];
    assert_eq!(codes(&bare("unsupported_chip_misaligned", env)), want, "the vendor's behaviour");
    for mode in MODES {
        let o = run_in(mode, "unsupported_chip_misaligned", env);
        let ctx = || format!("{mode:?}\n{}", o.dump());
        assert_eq!(codes(&o), want, "{}", ctx());
        assert!(o.stderr.contains("[ACL-HOSTREG-PRODUCT]"), "{}", ctx());
    }
}

/// The device pointer of a registration's base asked with another device current: on the
/// runtime-table path the runtime's process-wide table answers it (bare 0, the same address):
/// the vendor answers first, and regcheck, which explains only a refusal, says nothing
/// (issue 33 item 2).
#[test]
fn a_device_pointer_asked_on_another_device_is_the_vendors_to_answer() {
    let env = &[("ACLSIM_PIN_REGISTER", "0"), ("ACLSIM_DEVICE_COUNT", "2")];
    let b = bare("devptr_other_device", env);
    let want = codes(&b);
    assert_eq!(want[3], ("devptr_other".to_string(), 0), "the vendor's behaviour: {}", b.dump());
    assert_eq!(value(&b, "other_same"), Some(1), "{}", b.dump());
    for mode in [Mode::Preload, Mode::Shared] {
        let o = scenarios().run(mode).arg("devptr_other_device");
        let o = env.iter().fold(o, |r, (k, v)| r.env(k, v)).audit().run();
        let ctx = || format!("{mode:?}\n{}", o.dump());
        assert_eq!(codes(&o), want, "{}", ctx());
        assert_eq!(value(&o, "other_same"), Some(1), "{}", ctx());
        assert_eq!(o.sim_calls("aclrtHostGetDevicePointer"), 2, "{}", ctx());
        assert!(!o.stderr.contains("[ACL-DEVPTR-NOT-MAPPED]"), "{}", ctx());
        assert!(!o.stderr.contains("regcheck: error"), "{}", ctx());
    }
}

/// The device pointer of a MAPPED registration's base after the device's last reset: on the
/// runtime-table path the runtime's process-wide table still answers it (bare 0); on the
/// driver path the driver forgot it (107000). The vendor answers, on both; regcheck explains
/// the driver's refusal with a warning (it cannot tell the path) and says nothing of the
/// table's success (found by the differential test once it made forced resets: seed 0x0).
#[test]
fn a_device_pointer_after_a_reset_is_the_vendors_to_answer() {
    for (path, devptr) in [("0", 0), ("1", 107000)] {
        let env = &[("ACLSIM_PIN_REGISTER", path)];
        let want: Vec<(String, i32)> = [("register", 0), ("reset_last", 0), ("set", 0), ("devptr", devptr)]
            .iter()
            .map(|(l, c)| (l.to_string(), *c))
            .collect();
        assert_eq!(codes(&bare("devptr_after_reset", env)), want, "the vendor's behaviour, path {path}");
        for mode in [Mode::Preload, Mode::Shared] {
            let o = scenarios().run(mode).arg("devptr_after_reset").env("ACLSIM_PIN_REGISTER", path).audit().run();
            let ctx = || format!("path {path}, {mode:?}\n{}", o.dump());
            assert_eq!(codes(&o), want, "{}", ctx());
            assert_eq!(o.sim_calls("aclrtHostGetDevicePointer"), 1, "{}", ctx());
            let warned = o.stderr.contains("regcheck: warning: [ACL-DEVPTR-NOT-MAPPED]");
            assert_eq!(warned, devptr != 0, "{}", ctx());
            if warned {
                assert!(o.stderr.contains("before a reset released the device"), "{}", ctx());
            }
            assert!(!o.stderr.contains("regcheck: error"), "{}", ctx());
        }
    }
}

/// On the runtime-table path the runtime's mapped table keeps a MAPPED registration through
/// its device's reset: a registration over it is refused with 507910, before the context check
/// up to 9.1.0 (a thread with no device gets 507910, not 107002) and after it later (107002
/// first); regcheck knows the path and refuses both with the vendor's code, named (the
/// differential test's last "another code than the vendor's": seeds 0x0, 0x2 and 0x6, step 2).
#[test]
fn a_device_reset_keeps_the_runtime_tables_mapped_registrations() {
    for (release, no_context) in [("9.1.0", 507910), ("9.2.0", 107002)] {
        let env = [("ACLSIM_PIN_REGISTER", "0"), ("ACLSIM_CANN_VERSION", release)];
        let want: Vec<(String, i32)> = [
            ("register_mapped", 0),
            ("reset_last", 0),
            ("no_context_misaligned", no_context),
            ("set", 0),
            ("register_mapped_again", 507910),
            ("wrapping_over", 507910),
            ("register_beside", 0),
            ("unregister_beside", 0),
            ("unregister_mapped", 507911),
        ]
        .iter()
        .map(|(l, c)| (l.to_string(), *c))
        .collect();
        assert_eq!(codes(&bare("reset_keeps_mapped", &env)), want, "the vendor's behaviour, {release}");
        for mode in [Mode::Preload, Mode::Shared] {
            for audited in [false, true] {
                let run = env.iter().fold(scenarios().run(mode).arg("reset_keeps_mapped"), |r, (k, v)| r.env(k, v));
                let o = if audited { run.audit() } else { run }.run();
                let ctx = || format!("{release}, {mode:?}, audited {audited}\n{}", o.dump());
                assert_eq!(codes(&o), want, "{}", ctx());
                // The registrations the tables refuse never reach the vendor.
                assert_eq!(o.sim_calls(V2), 2, "{}", ctx());
                let line = o.messages().into_iter().find(|l| l.contains("[ACL-HOSTREG-OVERLAP]"));
                let line = line.unwrap_or_else(|| panic!("not named: {}", ctx()));
                assert!(
                    line.contains("regcheck: error:") && line.contains("before a reset released that device"),
                    "{}",
                    ctx()
                );
                assert_eq!(value(&o, "live"), Some(0), "{}", ctx());
            }
        }
    }
}

/// `aclrtResetDeviceForce` releases the device whatever the count of `aclrtSetDevice` calls:
/// regcheck sees it and forgets the device's registrations as at the last `aclrtResetDevice`,
/// so on the driver's path, where the reset ends them, the same memory registers again
/// (issue 33 item 3).
#[test]
fn a_forced_reset_forgets_the_devices_registrations() {
    // The driver's path is a runtime after 9.1.0 with the driver's pin feature.
    let driver_path = &[("ACLSIM_PIN_REGISTER", "1"), ("ACLSIM_CANN_VERSION", "9.2.0")];
    let want: Vec<(String, i32)> = [
        ("register", 0),
        ("set_again", 0),
        ("reset_force", 0),
        ("set", 0),
        ("register_after_reset", 0),
        ("unregister", 0),
    ]
    .iter()
    .map(|(l, c)| (l.to_string(), *c))
    .collect();
    assert_eq!(codes(&bare("reset_force", driver_path)), want, "the vendor's behaviour");
    for mode in [Mode::Preload, Mode::Shared] {
        let o = scenarios()
            .run(mode)
            .arg("reset_force")
            .env("ACLSIM_PIN_REGISTER", "1")
            .env("ACLSIM_CANN_VERSION", "9.2.0")
            .audit()
            .run();
        let ctx = || format!("{mode:?}\n{}", o.dump());
        assert_eq!(codes(&o), want, "{}", ctx());
        assert_eq!(value(&o, "live"), Some(0), "{}", ctx());
        assert!(!o.stderr.contains("regcheck: error"), "{}", ctx());
        assert_eq!(o.sim_calls("aclrtResetDeviceForce"), 1, "{}", ctx());
    }
}

/// A PINNED-only registration whose size runs past the end of the address space, which the
/// runtime's tables take: recorded, so its unregistration is not refused (issue 33 item 5).
#[test]
fn a_pinned_only_registration_with_a_wrapping_size_is_recorded() {
    let env = &[("ACLSIM_PIN_REGISTER", "0")];
    let want = vec![("register".to_string(), 0), ("unregister".to_string(), 0)];
    assert_eq!(codes(&bare("pinned_wrapping_size", env)), want, "the vendor's behaviour");
    for mode in [Mode::Preload, Mode::Shared] {
        let o = scenarios().run(mode).arg("pinned_wrapping_size").env("ACLSIM_PIN_REGISTER", "0").audit().run();
        let ctx = || format!("{mode:?}\n{}", o.dump());
        assert_eq!(codes(&o), want, "{}", ctx());
        assert_eq!(value(&o, "live"), Some(0), "{}", ctx());
        assert!(!o.stderr.contains("[ACL-HOSTUNREG-NOT-REGISTERED]"), "{}", ctx());
    }
}

/// memfd and shared anonymous memory are never `aclrtMallocHost`'s: a pageable registration
/// of them on an old kernel is certain, with or without `LD_AUDIT`, and rejected before the
/// driver's exception (issue 33 item 10).
#[test]
fn shared_memory_on_an_old_kernel_is_certainly_pageable() {
    for scenario in ["memfd", "shared_anon"] {
        let o = bare(scenario, OLD_KERNEL);
        assert!(o.aborted(), "the vendor's behaviour: {}", o.dump());
        Case {
            scenario,
            env: OLD_KERNEL,
            codes: &[("register", 100000), ("unregister", 507911)],
            rule: Some("ACL-HOSTREG-PAGEABLE-OLD-KERNEL"),
            forwarded: (V2, 0),
        }
        .check();
    }
}
