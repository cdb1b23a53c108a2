//! Never hurting the host process: threads, fork, panics inside regcheck, records left
//! incomplete by an internal failure, and the caller's state after a rejection.

use std::time::Duration;

use crate::{codes, run_in, scenarios, value, with_args, V2};
use testkit::{Mode, Outcome, MODES};

/// A fork scenario: the program waits at most 10 s for its child (killing it, and printing
/// `child_exit -1`, when it hangs), and the whole run, under a second when all is well, at
/// most 30 s: a lock inherited held fails the test in seconds.
fn run_fork(mode: Mode, scenario: &str) -> Outcome {
    with_args(scenarios().run(mode), scenario, "", &[]).timeout(Duration::from_secs(30)).run()
}

#[test]
fn concurrent_registrations_keep_the_registry_exact() {
    for mode in MODES {
        let o = run_in(mode, "concurrent", &[]);
        assert_eq!(value(&o, "failures"), Some(0), "{}", o.dump());
        assert_eq!(value(&o, "live"), Some(0), "{}", o.dump());
        assert_eq!(o.sim_calls(V2), 1600);
    }
}

#[test]
fn fork_child_has_usable_state_and_the_parents_registrations() {
    for mode in MODES {
        let o = run_fork(mode, "fork");
        assert_eq!(value(&o, "child_exit"), Some(0), "{mode:?}: the child exits at once (-1: hung): {}", o.dump());
        let c = codes(&o);
        let get = |l: &str| c.iter().find(|(k, _)| k == l).map(|(_, v)| *v);
        assert_eq!(get("register"), Some(0), "{}", o.dump());
        assert_eq!(get("child_overlap"), Some(507910), "{}", o.dump());
        assert_eq!(get("child_register"), Some(0), "{}", o.dump());
        assert_eq!(get("child_unregister"), Some(0), "{}", o.dump());
        assert_eq!(value(&o, "child_live"), Some(1), "{}", o.dump());
        assert_eq!(get("parent_unregister"), Some(0), "the parent's state is its own: {}", o.dump());
        assert!(o.stderr.contains("[ACL-HOSTREG-OVERLAP]"), "{}", o.dump());
        assert!(o.stderr.contains("forked with 1 live host registration(s)"), "the child is told, once: {}", o.dump());
        assert_eq!(o.stderr.matches("forked with").count(), 1, "{}", o.dump());
    }
}

#[test]
fn after_fork_the_child_reads_its_own_memory_map() {
    // The parent's registration opens regcheck's descriptor of /proc/self/maps; the child
    // unmaps a page the parent keeps: its registration is judged on the child's map.
    for mode in MODES {
        let o = run_fork(mode, "fork_map");
        assert_eq!(value(&o, "child_exit"), Some(0), "{mode:?}: the child exits at once (-1: hung): {}", o.dump());
        let c = codes(&o);
        let get = |l: &str| c.iter().find(|(k, _)| k == l).map(|(_, v)| *v);
        assert_eq!(get("register"), Some(0), "{}", o.dump());
        assert_eq!(get("child_unmapped"), Some(100000), "{}", o.dump());
        assert!(o.stderr.contains("[ACL-HOSTREG-UNMAPPED]"), "regcheck, not the vendor, rejects it: {}", o.dump());
        assert_eq!(get("parent_mapped"), Some(0), "the parent's map still has the page: {}", o.dump());
    }
}

#[test]
fn a_panic_inside_regcheck_forwards_the_call() {
    // A panic while checking: the (bad) call reaches the vendor unchecked.
    // A panic while recording: the (good) call's result is returned unchanged.
    for (mode, at, scenario, code) in [
        (Mode::Preload, "check", "align", 507899),
        (Mode::Shared, "record", "pageable", 0),
        (Mode::Static, "check", "align", 507899),
        (Mode::Static, "record", "pageable", 0),
    ] {
        let o = run_in(mode, scenario, &[("REGCHECK_TEST_PANIC", at)]);
        assert_eq!(o.code(), Some(0), "the process survives: {}", o.dump());
        assert_eq!(codes(&o), vec![("register".to_string(), code)], "forwarded as is: {}", o.dump());
        assert_eq!(o.sim_calls(V2), 1);
        assert!(
            o.stderr.contains("internal failure in regcheck") && o.stderr.contains("forced by REGCHECK_TEST_PANIC"),
            "{}",
            o.dump()
        );
    }
}

#[test]
fn forking_while_another_thread_logs_never_hangs_the_child() {
    // Several fresh processes per mode: a child must not hang when the process forks while
    // its other thread is in regcheck's one-time set-up (the first calls of a process), nor
    // while that thread logs. The program waits at most 10 s for each child and stops at the
    // first that hangs; its output (millions of log lines) is shown by its end.
    for mode in MODES {
        for _ in 0..5 {
            // Unlimited messages, so the other thread is always inside the logger.
            let o = run_in(mode, "fork_while_logging", &[("REGCHECK_MAX_REPEATS", "0")]);
            assert_eq!(value(&o, "children_hung"), Some(0), "{mode:?}: {}", o.dump());
            assert_eq!(value(&o, "children_failed"), Some(0), "{mode:?}: {}", o.dump());
            assert_eq!(o.code(), Some(0), "{mode:?}: {}", o.dump());
        }
    }
}

#[test]
fn after_an_internal_failure_gaps_in_the_records_never_block_a_valid_call() {
    // Every record phase panics: regcheck never learns of the registration, so the valid
    // unregister must not be rejected as "not registered".
    for mode in MODES {
        let o = run_in(mode, "mallochost", &[("REGCHECK_TEST_PANIC", "record")]);
        assert_eq!(
            codes(&o),
            [("register", 0), ("unregister", 0), ("freehost", 0)].map(|(l, c)| (l.to_string(), c)).to_vec(),
            "{}",
            o.dump()
        );
        assert_eq!(o.sim_calls("aclrtHostUnregister"), 1, "{}", o.dump());
        assert!(o.stderr.contains("records may be incomplete"), "{}", o.dump());
        assert!(o.stderr.contains("warning: [ACL-HOSTUNREG-NOT-REGISTERED]"), "{}", o.dump());
    }
}

/// The panic boundary of every interposed ACL function, by behaviour: with a panic forced in
/// the check or the record phase, each call is still forwarded once, returns the vendor's
/// answer, and the process lives; the failure is logged naming the call.
#[test]
fn a_panic_in_any_acl_function_is_caught_and_the_call_forwarded() {
    let calls = [
        ("register", V2, 1),
        ("devptr", "aclrtHostGetDevicePointer", 1),
        ("unregister", "aclrtHostUnregister", 2),
        ("register_v1", "aclrtHostRegister", 1),
        ("mallochost", "aclrtMallocHost", 1),
        ("freehost", "aclrtFreeHost", 1),
        ("malloc", "aclrtMalloc", 1),
        ("free", "aclrtFree", 1),
        ("setdevice", "aclrtSetDevice", 2), // one in the program's set-up
        ("resetdevice", "aclrtResetDevice", 1),
        ("finalize", "aclFinalize", 1),
    ];
    for (at, phase) in [("", ""), ("check", "checking"), ("record", "recording the result of")] {
        for mode in MODES {
            let o = run_in(mode, "every_call", &[("REGCHECK_TEST_PANIC", at)]);
            let ctx = || format!("REGCHECK_TEST_PANIC={at:?} {mode:?}\n{}", o.dump());
            assert_eq!(o.code(), Some(0), "the process survives: {}", ctx());
            let c = codes(&o);
            assert_eq!(c.len(), 12, "{}", ctx());
            assert!(c.iter().all(|(_, code)| *code == 0), "{c:?}: {}", ctx());
            for (_, name, n) in calls {
                assert_eq!(o.sim_calls(name), n, "{name} forwarded: {}", ctx());
                let logged = format!("internal failure in regcheck while {phase} {name}:");
                // A look-up and aclFinalize record nothing: they have no record phase. A
                // device-pointer look-up the vendor answers is not checked (only its failure is
                // explained).
                let records = !matches!(name, "aclrtHostGetDevicePointer" | "aclFinalize");
                let checks = name != "aclrtHostGetDevicePointer";
                if at.is_empty() {
                    assert!(!o.stderr.contains("internal failure"), "{}", ctx());
                } else if (at == "record" && !records) || (at == "check" && !checks) {
                    assert!(!o.stderr.contains(&logged), "{}", ctx());
                } else {
                    assert!(o.stderr.contains(&logged), "no `{logged}`: {}", ctx());
                }
            }
        }
    }
}

/// A rejected call writes the out-values the vendor's own failure writes, and no others: the
/// program sets a sentinel in `*pDevice` / `*devPtr` before each rejected call and checks it
/// after. The runtime sets `*pDevice = NULL` before its 107000 for an unregistered address
/// (hicann/runtime `api_impl.cc`, `ApiImpl::HostGetDevicePointer`); the ACL layer's 100000
/// writes nothing.
#[test]
fn rejected_calls_write_the_vendors_out_values() {
    let b = scenarios().bare().arg("rejected_out_pointers").run();
    assert_eq!(value(&b, "devptr_unregistered_null"), Some(1), "the vendor's behaviour: {}", b.dump());
    // Audited: the device-pointer rejection judges by the records of registrations.
    for mode in [Mode::Preload, Mode::Shared] {
        let o = scenarios().run(mode).arg("rejected_out_pointers").audit().run();
        let ctx = || format!("{mode:?}\n{}", o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        let want: Vec<(String, i32)> = [
            ("devptr_unregistered", 107000),
            ("register", 0),
            ("devptr_flag", 100000),
            ("unregister", 0),
            ("register_v1_misaligned", 100000),
            ("register_v1_size_zero", 100000),
        ]
        .iter()
        .map(|(l, c)| (l.to_string(), *c))
        .collect();
        assert_eq!(codes(&o), want, "{}", ctx());
        for key in [
            "devptr_unregistered_null",
            "devptr_flag_untouched",
            "register_v1_untouched",
            "register_v1_size_zero_untouched",
        ] {
            assert_eq!(value(&o, key), Some(1), "{key}: {}", ctx());
        }
        // The registrations were rejected, so the vendor never saw them; the vendor answers
        // each device-pointer look-up first (regcheck explains its failures), and its own
        // failure wrote the out-values.
        assert_eq!(o.sim_calls("aclrtHostGetDevicePointer"), 2, "{}", ctx());
        assert_eq!(o.sim_calls("aclrtHostRegister"), 0, "{}", ctx());
    }
}
