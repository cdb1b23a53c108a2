//! The ACL front end, through the doors users use: a C program (tests/c/acl_scenarios.c)
//! built with the system compiler, run against the simulator with `LD_PRELOAD` of
//! libregcheck.so, linked with `-lregcheck` ahead of the vendor library, and linked with
//! libregcheck.a. Each case proves the code returned, whether the vendor saw the call, and
//! the rule ID in the log.

use std::sync::OnceLock;

use testkit::{Link, Mode, Outcome, Program, Run, Scenarios, MODES};

const SRC: &str = "tests/c/acl_scenarios.c";

fn scenarios() -> &'static Scenarios {
    static S: OnceLock<Scenarios> = OnceLock::new();
    S.get_or_init(|| {
        Scenarios::build(|l| {
            let p = Program::c("acl_scenarios", &[SRC]).link(l).libs(&["ascendcl"]);
            if l == Link::Bare {
                p
            } else {
                p.define("REGCHECK_LINKED")
            }
        })
    })
}

fn with_args(mut r: Run, scenario: &str, file_tag: &str, env: &[(&str, &str)]) -> Run {
    r = r.arg(scenario);
    if scenario == "file_backed" {
        r = r.arg(testkit::target_dir().join(format!("acl-file-backed-{file_tag}.bin")));
    }
    for (k, v) in env {
        r = r.env(k, v);
    }
    r
}

fn run_in(mode: Mode, scenario: &str, env: &[(&str, &str)]) -> Outcome {
    with_args(scenarios().run(mode), scenario, &format!("{mode:?}"), env).run()
}

fn bare(scenario: &str, env: &[(&str, &str)]) -> Outcome {
    with_args(scenarios().bare(), scenario, "bare", env).run()
}

/// `rc <label> <code>` lines, in order.
fn codes(o: &Outcome) -> Vec<(String, i32)> {
    o.rc_lines().into_iter().map(|(l, c)| (l, c as i32)).collect()
}

fn value(o: &Outcome, key: &str) -> Option<i64> {
    o.stdout.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
}

struct Case<'a> {
    scenario: &'a str,
    env: &'a [(&'a str, &'a str)],
    /// Expected `rc` lines under regcheck.
    codes: &'a [(&'a str, i32)],
    /// The rule ID that must be in stderr (`[ID]`), if any.
    rule: Option<&'a str>,
    /// The simulator call to count, and how many times it must have been received.
    forwarded: (&'a str, usize),
}

impl Case<'_> {
    fn check(&self) {
        for mode in MODES {
            let o = run_in(mode, self.scenario, self.env);
            let ctx = || format!("scenario {} in mode {mode:?}\n{}", self.scenario, o.dump());
            assert_eq!(o.code(), Some(0), "{}", ctx());
            let want: Vec<(String, i32)> = self.codes.iter().map(|(l, c)| (l.to_string(), *c)).collect();
            assert_eq!(codes(&o), want, "{}", ctx());
            if let Some(rule) = self.rule {
                assert!(o.stderr.contains(&format!("[{rule}]")), "rule {rule} not logged: {}", ctx());
            }
            let (call, n) = self.forwarded;
            assert_eq!(o.sim_calls(call), n, "{call} forwarded count: {}", ctx());
            assert!(!o.stderr.contains("internal failure"), "{}", ctx());
        }
    }
}

const V2: &str = "aclrtHostRegisterV2";
const OLD_KERNEL: &[(&str, &str)] = &[
    ("REGCHECK_KERNEL_RELEASE", "5.10.0-60.18.0.50.oe2203.aarch64"),
    ("ACLSIM_KERNEL_RELEASE", "5.10.0-60.18.0.50.oe2203.aarch64"),
];

#[test]
fn good_calls_are_forwarded_unchanged_and_silent() {
    for mode in MODES {
        let o = run_in(mode, "good", &[]);
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
    let o = bare("good", &[]);
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
    Case {
        scenario: "flag_reserved",
        env: &[],
        codes: &[("register", 207000)],
        rule: Some("ACL-HOSTREG-FLAG-RESERVED"),
        forwarded: (V2, 0),
    }
    .check();
    Case {
        scenario: "v1_type_invalid",
        env: &[],
        codes: &[("register", 207000)],
        rule: Some("ACL-HOSTREG-FLAG-INVALID"),
        forwarded: ("aclrtHostRegister", 0),
    }
    .check();
    Case {
        scenario: "v1_type_reserved",
        env: &[],
        codes: &[("register", 207000)],
        rule: Some("ACL-HOSTREG-FLAG-RESERVED"),
        forwarded: ("aclrtHostRegister", 0),
    }
    .check();
}

#[test]
fn pinned_on_page_locked_memory() {
    Case {
        scenario: "pinned_locked",
        env: &[],
        codes: &[("register", 107000)],
        rule: Some("ACL-HOSTREG-PINNED-LOCKED"),
        forwarded: (V2, 0),
    }
    .check();
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
    Case {
        scenario: "stack",
        env,
        codes: &[("register", 100000)],
        rule: Some("ACL-HOSTREG-STACK"),
        forwarded: (V2, 0),
    }
    .check();
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
        scenario: "overlap",
        env: &[],
        codes: &[("register", 0), ("overlap", 507910), ("adjacent", 0), ("other_device", 0)],
        rule: Some("ACL-HOSTREG-OVERLAP"),
        forwarded: (V2, 3),
    }
    .check();
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
    let training = &[("ACLSIM_SOC_NAME", "Ascend910B")];
    Case {
        scenario: "pageable",
        env: training,
        codes: &[("register", 207000)],
        rule: Some("ACL-HOSTREG-PRODUCT"),
        forwarded: (V2, 0),
    }
    .check();
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
    .check();
    let o = run_in(Mode::Preload, "unregister_interior", &[]);
    assert!(
        o.stderr.contains("is inside the registration") && o.stderr.contains("pass the registered base pointer"),
        "{}",
        o.dump()
    );
}

#[test]
fn device_pointer() {
    for mode in MODES {
        let o = run_in(mode, "devptr", &[]);
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
        assert_eq!(o.sim_calls("aclrtHostGetDevicePointer"), 0, "{}", o.dump());
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
fn report_mode_logs_and_forwards_everything() {
    for mode in MODES {
        let o = run_in(mode, "align", &[("REGCHECK_MODE", "report")]);
        assert_eq!(codes(&o), vec![("register".to_string(), 507899)], "the vendor's own answer: {}", o.dump());
        assert_eq!(o.sim_calls(V2), 1);
        assert!(o.stderr.contains("[ACL-HOSTREG-ALIGN]") && o.stderr.contains("report mode"), "{}", o.dump());
    }
}

#[test]
fn off_mode_is_pure_pass_through() {
    for mode in MODES {
        let o = run_in(mode, "align", &[("REGCHECK_MODE", "off")]);
        assert_eq!(codes(&o), vec![("register".to_string(), 507899)], "{}", o.dump());
        assert_eq!(o.sim_calls(V2), 1);
        assert!(!o.stderr.contains("regcheck:"), "{}", o.dump());
    }
}

#[test]
fn per_rule_overrides() {
    // Lowered to a warning: logged, forwarded, the vendor answers.
    let o = run_in(Mode::Preload, "align", &[("REGCHECK_RULES", "ACL-HOSTREG-ALIGN=warn")]);
    assert_eq!(codes(&o), vec![("register".to_string(), 507899)], "{}", o.dump());
    assert!(o.stderr.contains("warning: [ACL-HOSTREG-ALIGN]"), "{}", o.dump());
    // Off by prefix: silent.
    let o = run_in(Mode::Shared, "align", &[("REGCHECK_RULES", "ACL-HOSTREG-*=off")]);
    assert_eq!(o.sim_calls(V2), 1);
    assert!(!o.stderr.contains("ACL-HOSTREG-ALIGN"), "{}", o.dump());
    // Raised to an error: a warn rule now rejects, with the family's parameter code.
    let o = run_in(Mode::Static, "size_pages", &[("REGCHECK_RULES", "ACL-HOSTREG-SIZE-PAGES=error")]);
    assert_eq!(codes(&o)[0], ("register".to_string(), 100000), "{}", o.dump());
    assert_eq!(o.sim_calls(V2), 0);
    // A misspelt variable or value is reported, not ignored.
    let o = run_in(Mode::Preload, "good", &[("REGCHECK_MOD", "report"), ("REGCHECK_RULES", "ACL-NOPE=warn")]);
    assert!(o.stderr.contains("REGCHECK_MOD is not a regcheck variable (did you mean REGCHECK_MODE?)"), "{}", o.dump());
    assert!(o.stderr.contains("matches no rule ID"), "{}", o.dump());
}

#[test]
fn info_level_logs_settings_and_environment_once() {
    let o = run_in(Mode::Preload, "good", &[("REGCHECK_LOG", "info")]);
    assert_eq!(o.stderr.matches("regcheck 0.").count(), 1, "{}", o.dump());
    assert!(o.stderr.contains("mode=enforce") && o.stderr.contains("page size"), "{}", o.dump());
    assert!(o.stderr.contains("SoC \"Ascend910B1\""), "{}", o.dump());
}

#[test]
fn log_file() {
    let path = testkit::target_dir().join("acl-log-file.log");
    let _ = std::fs::remove_file(&path);
    let o = run_in(Mode::Preload, "align", &[("REGCHECK_LOG_FILE", path.to_str().unwrap())]);
    assert!(!o.stderr.contains("[ACL-HOSTREG-ALIGN]"), "{}", o.dump());
    let log = std::fs::read_to_string(&path).unwrap();
    assert!(log.contains("[ACL-HOSTREG-ALIGN]"), "{log}");
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
        let o = run_in(mode, "fork", &[]);
        let c = codes(&o);
        let get = |l: &str| c.iter().find(|(k, _)| k == l).map(|(_, v)| *v);
        assert_eq!(get("register"), Some(0), "{}", o.dump());
        assert_eq!(get("child_overlap"), Some(507910), "{}", o.dump());
        assert_eq!(get("child_register"), Some(0), "{}", o.dump());
        assert_eq!(get("child_unregister"), Some(0), "{}", o.dump());
        assert_eq!(value(&o, "child_live"), Some(1), "{}", o.dump());
        assert_eq!(value(&o, "child_exit"), Some(0), "{}", o.dump());
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
        let o = run_in(mode, "fork_map", &[]);
        let c = codes(&o);
        let get = |l: &str| c.iter().find(|(k, _)| k == l).map(|(_, v)| *v);
        assert_eq!(get("register"), Some(0), "{}", o.dump());
        assert_eq!(get("child_unmapped"), Some(100000), "{}", o.dump());
        assert!(o.stderr.contains("[ACL-HOSTREG-UNMAPPED]"), "regcheck, not the vendor, rejects it: {}", o.dump());
        assert_eq!(value(&o, "child_exit"), Some(0), "{}", o.dump());
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
fn missing_vendor_returns_api_not_support() {
    let exe = Program::c("acl_novendor", &["tests/c/acl_novendor.c"]).link(Link::RegcheckShared).libs(&[]).build();
    let empty = testkit::target_dir().join("no-ascend-here");
    let o = Run::new(&exe)
        .env("HOME", &empty)
        .env("ASCEND_HOME_PATH", &empty)
        .env_remove("ASCEND_INSTALL_PATH")
        .env("REGCHECK_ACL_LIB", empty.join("libascendcl.so"))
        .run();
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    assert!(o.stdout.contains("rc register 200001"), "{}", o.dump());
    assert!(
        o.stderr.contains("cannot find the vendor's aclrtHostRegisterV2") && o.stderr.contains("RTLD_NEXT"),
        "{}",
        o.dump()
    );
    assert_eq!(
        o.stderr.matches("cannot find the vendor's aclrtHostRegisterV2").count(),
        1,
        "logged once: {}",
        o.dump()
    );

    // The vendor loaded late (dlopen, RTLD_LOCAL): found from the next call on.
    let o = Run::new(&exe)
        .arg("late")
        .env("HOME", &empty)
        .env("LD_LIBRARY_PATH", testkit::sim_lib_dir())
        .env_remove("ASCEND_INSTALL_PATH")
        .env("ASCEND_HOME_PATH", &empty)
        .run();
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    assert!(o.stdout.contains("rc register 200001"), "{}", o.dump());
    assert!(o.stdout.contains("rc register_after_dlopen 0") && o.stdout.contains("rc unregister 0"), "{}", o.dump());
    assert_eq!(o.sim_calls(V2), 1, "{}", o.dump());
}

#[test]
fn the_c_api() {
    for link in [Link::RegcheckShared, Link::RegcheckStatic] {
        let exe = Program::c("api_test", &["tests/c/api_test.c"]).link(link).libs(&["ascendcl"]).build();
        let o = Run::new(exe).env("REGCHECK_HDK_VERSION", "25.3.rc1").run();
        assert_eq!(o.code(), Some(0), "{}", o.dump());
        assert!(o.stdout.contains("api ok"), "{}", o.dump());
    }
}

#[test]
fn end_of_run_summary() {
    let o = run_in(Mode::Preload, "align", &[("REGCHECK_SUMMARY", "1")]);
    assert!(o.stderr.contains("regcheck: summary: findings per rule:"), "{}", o.dump());
    assert!(
        o.stderr.lines().any(|l| l.trim_start().starts_with("ACL-HOSTREG-ALIGN") && l.trim_end().ends_with(" 1")),
        "{}",
        o.dump()
    );
    let o = run_in(Mode::Shared, "freehost_registered", &[("REGCHECK_SUMMARY", "1")]);
    assert!(o.stderr.contains("1 host registration(s) never unregistered"), "leaks are reported: {}", o.dump());
}

#[test]
fn repeated_messages_are_capped_but_still_enforced() {
    for mode in MODES {
        let o = run_in(mode, "align_many", &[("REGCHECK_MAX_REPEATS", "3"), ("REGCHECK_SUMMARY", "1")]);
        assert_eq!(codes(&o).iter().filter(|(_, c)| *c == 100000).count(), 5, "{}", o.dump());
        assert_eq!(o.sim_calls(V2), 0);
        assert_eq!(o.stderr.matches("[ACL-HOSTREG-ALIGN]").count(), 3, "{}", o.dump());
        assert_eq!(o.stderr.matches("last report of ACL-HOSTREG-ALIGN").count(), 1, "{}", o.dump());
        // past the cap, each rejection is still the thread's last one ...
        for i in 0..5 {
            assert!(o.stdout.contains(&format!("last_names_call {i} 1\n")), "rejection {i}: {}", o.dump());
        }
        // ... and counted in the summary
        assert!(
            o.stderr.lines().any(|l| l.trim_start().starts_with("ACL-HOSTREG-ALIGN") && l.trim_end().ends_with(" 5")),
            "the summary counts all 5: {}",
            o.dump()
        );
        let all = run_in(mode, "align_many", &[("REGCHECK_MAX_REPEATS", "0")]);
        assert_eq!(all.stderr.matches("[ACL-HOSTREG-ALIGN]").count(), 5, "{}", all.dump());
    }
}

#[test]
fn error_exit_code_for_ci() {
    // Report mode: the run goes through, but the exit status says something was wrong.
    let o = run_in(Mode::Preload, "align", &[("REGCHECK_MODE", "report"), ("REGCHECK_ERROR_EXITCODE", "42")]);
    assert_eq!(o.code(), Some(42), "{}", o.dump());
    assert!(o.stderr.contains("exiting with status 42"), "{}", o.dump());
    let o = run_in(Mode::Static, "align", &[("REGCHECK_ERROR_EXITCODE", "42")]);
    assert_eq!(o.code(), Some(42), "{}", o.dump());
    // Warnings alone do not change it; neither does a clean run.
    let o = run_in(Mode::Shared, "size_pages", &[("REGCHECK_ERROR_EXITCODE", "42")]);
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    let o = run_in(Mode::Preload, "good", &[("REGCHECK_ERROR_EXITCODE", "42")]);
    assert_eq!(o.code(), Some(0), "{}", o.dump());
}

#[test]
fn forking_while_another_thread_logs_never_hangs_the_child() {
    // Several fresh processes per mode: a child must not hang when the process forks while
    // its other thread is in regcheck's one-time set-up (the first calls of a process), nor
    // while that thread logs.
    for mode in MODES {
        for _ in 0..5 {
            // Unlimited messages, so the other thread is always inside the logger.
            let o = run_in(mode, "fork_while_logging", &[("REGCHECK_MAX_REPEATS", "0")]);
            assert_eq!(o.code(), Some(0), "{}", o.dump());
            assert_eq!(value(&o, "children_hung"), Some(0), "{}", o.dump());
            assert_eq!(value(&o, "children_failed"), Some(0), "{}", o.dump());
        }
    }
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
    assert_eq!(codes(&bare("device_lifetime", &[])), want, "the vendor's behaviour");
    for mode in MODES {
        let o = run_in(mode, "device_lifetime", &[]);
        assert_eq!(codes(&o), want, "{}", o.dump());
        assert_eq!(value(&o, "live"), Some(0), "{}", o.dump());
        assert_eq!(o.sim_calls(V2), 2, "only the overlaps are stopped by regcheck: {}", o.dump());
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

#[test]
fn the_launcher_runs_a_program_under_regcheck() {
    let rc = testkit::regcheck();
    let bare = scenarios().bare_exe(); // regcheck comes from the launcher
    let o = Run::new(&rc.runner).args(["--report", "--error-exitcode", "3"]).arg(bare).arg("align").run();
    assert_eq!(o.code(), Some(3), "{}", o.dump());
    assert_eq!(codes(&o), vec![("register".to_string(), 507899)], "report mode forwards: {}", o.dump());
    assert!(o.stderr.contains("[ACL-HOSTREG-ALIGN]"), "{}", o.dump());
    let o = Run::new(&rc.runner).arg(bare).arg("align").run();
    assert_eq!(codes(&o), vec![("register".to_string(), 100000)], "{}", o.dump());
    let o = Run::new(&rc.runner).arg("--frobnicate").arg(bare).run();
    assert_eq!(o.code(), Some(127), "{}", o.dump());
    assert!(o.stderr.contains("unknown option --frobnicate"), "{}", o.dump());
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
                // A look-up and aclFinalize record nothing: they have no record phase.
                let records = !matches!(name, "aclrtHostGetDevicePointer" | "aclFinalize");
                if at.is_empty() {
                    assert!(!o.stderr.contains("internal failure"), "{}", ctx());
                } else if at == "record" && !records {
                    assert!(!o.stderr.contains(&logged), "{}", ctx());
                } else {
                    assert!(o.stderr.contains(&logged), "no `{logged}`: {}", ctx());
                }
            }
        }
    }
}

/// A rejected call leaves the caller's out-pointers as they were: the program sets a sentinel
/// in `*pDevice` / `*devPtr` before each rejected call and checks it after.
#[test]
fn rejected_calls_do_not_write_out_pointers() {
    for mode in MODES {
        let o = run_in(mode, "rejected_out_pointers", &[]);
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
            "devptr_unregistered_untouched",
            "devptr_flag_untouched",
            "register_v1_untouched",
            "register_v1_size_zero_untouched",
        ] {
            assert_eq!(value(&o, key), Some(1), "{key}: {}", ctx());
        }
        // rejected, so the vendor never saw them
        assert_eq!(o.sim_calls("aclrtHostGetDevicePointer"), 0, "{}", ctx());
        assert_eq!(o.sim_calls("aclrtHostRegister"), 0, "{}", ctx());
    }
}

/// A directory with copies of the simulator's libraries, laid out as a vendor install root
/// (`<root>/lib64`), for the install-root search.
fn fake_install_root(name: &str) -> std::path::PathBuf {
    let root = testkit::target_dir().join("fake-ascend-roots").join(name);
    let lib64 = root.join("lib64");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&lib64).unwrap();
    for lib in ["libacl_rt.so", "libascendcl.so", "libcann_hixl.so"] {
        std::fs::copy(testkit::sim_lib_dir().join(lib), lib64.join(lib)).unwrap();
    }
    root
}

/// The real vendor library, when nothing loaded it: through `REGCHECK_ACL_LIB` /
/// `REGCHECK_HIXL_LIB`, or in an install root (`ASCEND_HOME_PATH`, `ASCEND_INSTALL_PATH`).
#[test]
fn vendor_found_through_the_lib_variables_and_the_install_roots() {
    let acl = Program::c("acl_novendor", &["tests/c/acl_novendor.c"]).link(Link::RegcheckShared).libs(&[]).build();
    let hixl =
        Program::cxx("hixl_novendor", &["tests/c/hixl_novendor.cpp"]).link(Link::RegcheckShared).libs(&[]).build();
    let empty = testkit::target_dir().join("no-ascend-here");
    let root = fake_install_root("home");
    let other_root = fake_install_root("install");
    let base = |exe: &std::path::Path| {
        Run::new(exe).env("HOME", &empty).env("ASCEND_HOME_PATH", &empty).env_remove("ASCEND_INSTALL_PATH")
    };
    let acl_cases = [
        ("REGCHECK_ACL_LIB", testkit::sim_lib_dir().join("libascendcl.so")),
        ("ASCEND_HOME_PATH", root.clone()),
        ("ASCEND_INSTALL_PATH", other_root.clone()),
    ];
    for (var, value) in &acl_cases {
        let o = base(&acl).env(var, value).run();
        let ctx = || format!("{var}={}\n{}", value.display(), o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        // found: regcheck asks the vendor for the context (the program never set a device,
        // so the calls are rejected for that, not with 200001)
        assert_eq!(o.sim_calls("aclrtGetCurrentContext"), 2, "regcheck reached the vendor: {}", ctx());
        assert_eq!(
            codes(&o),
            vec![("register".to_string(), 107002), ("register_again".to_string(), 107002)],
            "{}",
            ctx()
        );
        assert!(o.stderr.contains("[ACL-HOSTREG-NO-CONTEXT]") && !o.stderr.contains("cannot find"), "{}", ctx());
    }
    // without any of them: not supported
    let o = base(&hixl).run();
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    assert!(o.stdout.contains("rc server_create ") && o.sim_calls("HixlCSServerCreate") == 0, "{}", o.dump());
    assert!(o.stderr.contains("cannot find the vendor's HixlCSServerCreate"), "{}", o.dump());
    let hixl_cases = [
        ("REGCHECK_HIXL_LIB", testkit::sim_lib_dir().join("libcann_hixl.so")),
        ("ASCEND_HOME_PATH", root.clone()),
        ("ASCEND_INSTALL_PATH", other_root.clone()),
    ];
    for (var, value) in &hixl_cases {
        let o = base(&hixl).env(var, value).run();
        let ctx = || format!("{var}={}\n{}", value.display(), o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        assert_eq!(codes(&o), vec![("server_create".to_string(), 0), ("server_destroy".to_string(), 0)], "{}", ctx());
        assert_eq!(o.sim_calls("HixlCSServerCreate"), 1, "{}", ctx());
        assert_eq!(o.sim_calls("HixlCSServerDestroy"), 1, "{}", ctx());
    }
}

/// `REGCHECK_ERROR_EXITCODE` takes 1 to 255; anything else is refused with a warning and the
/// exit status is left alone.
#[test]
fn error_exit_code_range() {
    for (value, status) in [("1", 1), ("255", 255)] {
        let o = run_in(Mode::Preload, "align", &[("REGCHECK_ERROR_EXITCODE", value)]);
        assert_eq!(o.code(), Some(status), "{value}: {}", o.dump());
        assert!(!o.stderr.contains("not an exit status"), "{value}: {}", o.dump());
    }
    for value in ["0", "256", "-1", "junk", ""] {
        let o = run_in(Mode::Preload, "align", &[("REGCHECK_ERROR_EXITCODE", value)]);
        assert_eq!(o.code(), Some(0), "{value:?}: {}", o.dump());
        assert!(o.stderr.contains("[ACL-HOSTREG-ALIGN]"), "{value:?}: {}", o.dump());
        assert!(
            o.stderr
                .contains(&format!("REGCHECK_ERROR_EXITCODE={value:?} is not an exit status from 1 to 255; ignored")),
            "{value:?}: {}",
            o.dump()
        );
    }
}

/// Each of `regcheck-run`'s options, end to end: the program it starts behaves as the
/// option says.
#[test]
fn every_launcher_option_end_to_end() {
    let rc = testkit::regcheck();
    let bare = scenarios().bare_exe();
    let launch = |args: &[&str], scenario: &str| Run::new(&rc.runner).args(args).arg(bare).arg(scenario).run();

    // --off: pass-through; --rules: the rule switched off; both forward the misaligned call
    for args in [&["--off"][..], &["--rules", "ACL-HOSTREG-ALIGN=off"], &["--rules", "ACL-HOSTREG-*=warn"]] {
        let o = launch(args, "align");
        assert_eq!(o.code(), Some(0), "{args:?}: {}", o.dump());
        assert_eq!(codes(&o), vec![("register".to_string(), 507899)], "{args:?}: {}", o.dump());
        assert_eq!(o.stderr.contains("[ACL-HOSTREG-ALIGN]"), args[1..].iter().any(|a| a.ends_with("warn")), "{args:?}");
    }
    // --summary
    let o = launch(&["--summary"], "align");
    assert!(o.stderr.contains("regcheck: summary: findings per rule:"), "{}", o.dump());
    // --log
    let o = launch(&["--log", "info"], "good");
    assert!(
        o.stderr.contains("regcheck: info: regcheck ") && o.stderr.contains(" active: mode=enforce"),
        "{}",
        o.dump()
    );
    let o = launch(&["--log", "error"], "size_pages"); // a warning, filtered out
    assert!(!o.stderr.contains("regcheck: "), "{}", o.dump());
    // --log-file
    let log = testkit::target_dir().join("launcher-log-file.txt");
    let _ = std::fs::remove_file(&log);
    let o = launch(&["--log-file", &log.to_string_lossy()], "align");
    assert_eq!(codes(&o), vec![("register".to_string(), 100000)], "{}", o.dump());
    assert!(!o.stderr.contains("[ACL-HOSTREG-ALIGN]"), "{}", o.dump());
    let written = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(written.contains("[ACL-HOSTREG-ALIGN]"), "log file: {written:?}");
    // --lib-dir: a copy of the library elsewhere; an empty directory is an error
    let dir = testkit::target_dir().join("launcher-lib-dir");
    let empty = testkit::target_dir().join("launcher-empty-dir");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::copy(&rc.shared, dir.join("libregcheck.so")).unwrap();
    let o = Run::new(&rc.runner).args(["--lib-dir", &dir.to_string_lossy(), "--print-env"]).run();
    let canonical = dir.canonicalize().unwrap();
    assert!(o.stdout.contains(&format!("LD_PRELOAD={}/libregcheck.so", canonical.display())), "{}", o.dump());
    let o = launch(&["--lib-dir", &dir.to_string_lossy()], "align");
    assert_eq!(codes(&o), vec![("register".to_string(), 100000)], "{}", o.dump());
    let o = launch(&["--lib-dir", &empty.to_string_lossy()], "align");
    assert_eq!(o.code(), Some(127), "{}", o.dump());
    assert!(o.stderr.contains("libregcheck.so does not exist") && codes(&o).is_empty(), "{}", o.dump());
    // --audit: a dlsym caller is checked too
    let dlsym = Program::c("audit_dlsym", &["tests/c/audit_dlsym.c"]).link(Link::Bare).libs(&[]).flag("-ldl").build();
    for (args, checked) in [(&["--audit"][..], true), (&[][..], false)] {
        let o = Run::new(&rc.runner)
            .args(args)
            .arg(&dlsym)
            .arg("libascendcl.so")
            .env("LD_LIBRARY_PATH", testkit::sim_lib_dir())
            .run();
        assert_eq!(o.code(), Some(0), "{args:?}: {}", o.dump());
        assert_eq!(o.stdout.contains("bad.align=100000"), checked, "{args:?}: {}", o.dump());
    }
    // --print-env with the mode options, --, --version, --help, the exit status passed through
    let o = Run::new(&rc.runner).args(["--report", "--summary", "--error-exitcode", "7", "--print-env"]).run();
    for line in ["REGCHECK_MODE=report", "REGCHECK_SUMMARY=1", "REGCHECK_ERROR_EXITCODE=7"] {
        assert!(o.stdout.lines().any(|l| l == line), "{line}: {}", o.dump());
    }
    let o = Run::new(&rc.runner).args(["--error-exitcode", "7", "--"]).arg(bare).arg("align").run();
    assert_eq!(o.code(), Some(7), "{}", o.dump());
    let o = Run::new(&rc.runner).arg("--version").run();
    assert!(o.status.success() && o.stdout.contains(env!("CARGO_PKG_VERSION")), "{}", o.dump());
    let o = Run::new(&rc.runner).arg("--help").run();
    assert!(o.status.success() && o.stdout.contains("Usage: regcheck-run"), "{}", o.dump());
}
