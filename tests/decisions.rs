//! How regcheck decides on a finding (src/rules/decision.rs), through the doors users use: a
//! C++ program (tests/c/decisions.cpp) against the simulator, bare, under `LD_PRELOAD`, linked
//! with `-lregcheck`, and under `regcheck run --audit` (the `LD_AUDIT` module as well).
//!
//! * What would crash is stopped whoever calls: the vendor's own library registering pageable
//!   memory on an old kernel is refused, and the application's HIXL call fails cleanly.
//! * No record is not a fact: memory regcheck has no record of is at most a warning.
//! * A finding regcheck saw keeps its severity (and the exit code) though it is not enforced.

use std::sync::OnceLock;

use testkit::{Mode, Outcome, Program, Run, Scenarios};

const OLD_KERNEL: &[(&str, &str)] = &[
    ("REGCHECK_KERNEL_RELEASE", "5.10.0-60.18.0.50.oe2203.aarch64"),
    ("ACLSIM_KERNEL_RELEASE", "5.10.0-60.18.0.50.oe2203.aarch64"),
];

fn scenarios() -> &'static Scenarios {
    static S: OnceLock<Scenarios> = OnceLock::new();
    S.get_or_init(|| {
        Scenarios::build(|l| {
            Program::cxx("decisions", &["tests/c/decisions.cpp"]).link(l).libs(&["cann_hixl", "ascendcl"])
        })
    })
}

fn with_env(mut r: Run, env: &[(&str, &str)]) -> Run {
    for (k, v) in env {
        r = r.env(k, v);
    }
    r
}

fn rc(o: &Outcome, label: &str) -> Option<i64> {
    o.rc_lines().into_iter().find(|(l, _)| l == label).map(|(_, c)| c)
}

/// The ways regcheck runs with the program: preloaded, linked (`-lregcheck`), each with and
/// without the audit module.
fn under_regcheck(args: &[&str], env: &[(&str, &str)]) -> Vec<(String, Outcome)> {
    let mut out = Vec::new();
    for mode in [Mode::Preload, Mode::Shared] {
        for audited in [false, true] {
            let run = with_env(scenarios().run(mode).args(args), env);
            let run = if audited { run.audit() } else { run };
            out.push((format!("{mode:?}, audited {audited}"), run.run()));
        }
    }
    out
}

#[test]
fn pageable_memory_the_vendor_registers_for_a_ub_endpoint_is_refused_on_an_old_kernel() {
    // Bare: libcann_hixl.so maps the heap buffer for the device and the driver's exception
    // kills the process.
    let bare = with_env(scenarios().bare().args(["cs_ub_pageable", "heap"]), OLD_KERNEL).run();
    assert!(bare.aborted(), "{}", bare.dump());
    assert!(bare.stderr.contains("simulated driver exception"), "{}", bare.dump());
    for (how, o) in under_regcheck(&["cs_ub_pageable", "heap"], OLD_KERNEL) {
        let ctx = || format!("{how}\n{}", o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        // The vendor's inner aclrtHostRegister is refused with the rule's code, which the
        // vendor's HixlCS call returns as its status: the application's call fails cleanly.
        assert_eq!(rc(&o, "client_reg_pageable"), Some(100000), "{}", ctx());
        assert!(
            o.stderr.contains("regcheck: error: [ACL-HOSTREG-PAGEABLE-OLD-KERNEL] aclrtHostRegister("),
            "{}",
            ctx()
        );
        // Named at the application's call.
        assert!(o.stderr.contains("at CsUbPageable"), "{}", ctx());
        assert!(!o.stderr.contains("simulated driver exception"), "{}", ctx());
        // Page-locked memory goes through.
        assert_eq!(rc(&o, "client_reg_malloc_host"), Some(0), "{}", ctx());
        assert_eq!(rc(&o, "client_destroy"), Some(0), "{}", ctx());
    }
    // Anonymous memory may be aclrtMallocHost's where regcheck cannot see every call: there it
    // is only certain with the audit module, and refused then.
    let bare = with_env(scenarios().bare().args(["cs_ub_pageable", "mmap"]), OLD_KERNEL).run();
    assert!(bare.aborted(), "{}", bare.dump());
    for mode in [Mode::Preload, Mode::Shared] {
        let o = with_env(scenarios().run(mode).args(["cs_ub_pageable", "mmap"]), OLD_KERNEL).audit().run();
        let ctx = || format!("{mode:?}\n{}", o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        assert_eq!(rc(&o, "client_reg_pageable"), Some(100000), "{}", ctx());
        assert_eq!(rc(&o, "client_reg_malloc_host"), Some(0), "{}", ctx());
    }
}

#[test]
fn memory_regcheck_has_no_record_of_is_not_called_pageable() {
    // aclrtMallocHost through dlsym, page-locked by the simulated driver but not mlocked (as
    // with a low RLIMIT_MEMLOCK): the vendor accepts the registration on an old kernel.
    let env: Vec<(&str, &str)> = OLD_KERNEL.iter().copied().chain([("ACLSIM_MLOCK_MAX", "0")]).collect();
    let bare = with_env(scenarios().bare().arg("dlsym_malloc_host"), &env).run();
    assert_eq!(bare.code(), Some(0), "{}", bare.dump());
    assert_eq!(rc(&bare, "register_mapped"), Some(0), "{}", bare.dump());
    for (how, o) in under_regcheck(&["dlsym_malloc_host"], &env) {
        let ctx = || format!("{how}\n{}", o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        assert_eq!(rc(&o, "register_mapped"), Some(0), "{}", ctx());
        assert_eq!(rc(&o, "unregister"), Some(0), "{}", ctx());
        assert!(!o.stderr.contains("regcheck: error:"), "{}", ctx());
        // regcheck's own dlsym (and the audit module) bring the dlsym caller to regcheck:
        // the allocation is known.
        assert!(!o.stderr.contains("[ACL-HOSTREG-PAGEABLE-OLD-KERNEL]"), "{}", ctx());
        assert_eq!(rc(&o, "malloc_host_dlsym"), Some(0), "{}", ctx());
    }
}

#[test]
fn a_double_unregistration_regcheck_saw_fails_the_exit_code_in_every_setting() {
    let bare = scenarios().bare().arg("double_unregister").run();
    assert_eq!(rc(&bare, "unregister_again"), Some(507911), "{}", bare.dump());
    let env = [("REGCHECK_MODE", "report"), ("REGCHECK_ERROR_EXITCODE", "9")];
    for (how, o) in under_regcheck(&["double_unregister"], &env) {
        let ctx = || format!("{how}\n{}", o.dump());
        // Logged as an error and counted, whether or not the records are whole.
        assert_eq!(o.code(), Some(9), "{}", ctx());
        assert_eq!(rc(&o, "unregister_again"), Some(507911), "{}", ctx());
        assert!(o.stderr.contains("regcheck: error: [ACL-HOSTUNREG-NOT-REGISTERED]"), "{}", ctx());
        assert!(o.stderr.contains("unregistered already"), "{}", ctx());
    }
    // In enforce mode it is rejected where regcheck can be sure: preloaded or linked, it is.
    let env = [("REGCHECK_ERROR_EXITCODE", "9")];
    for (how, o) in under_regcheck(&["double_unregister"], &env) {
        let ctx = || format!("{how}\n{}", o.dump());
        assert_eq!(o.code(), Some(9), "{}", ctx());
        assert_eq!(rc(&o, "unregister_again"), Some(507911), "{}", ctx());
        // Rejected: regcheck's records are whole, with or without the audit module.
        assert_eq!(o.sim_calls("aclrtHostUnregister"), 1, "rejected, the vendor not called: {}", ctx());
    }
}

/// Issue 32: a KV cache from `posix_memalign` (64 MiB: glibc maps it with `mmap`) registered
/// `MAPPED` on a 5.10 kernel crashes bare. Under `LD_PRELOAD` and linked (`-lregcheck`),
/// without the audit module, regcheck's own `dlsym` makes its records whole: the memory is
/// certainly not aclrtMallocHost's, and the registration is rejected with 100000, no crash.
/// (Seen failing before regcheck's `dlsym`: a warning, then the simulated driver exception.)
#[test]
fn a_pageable_kv_cache_is_refused_on_an_old_kernel_without_ld_audit() {
    let bare = with_env(scenarios().bare().arg("kv_cache_mapped"), OLD_KERNEL).run();
    assert!(bare.aborted(), "{}", bare.dump());
    assert!(bare.stderr.contains("simulated driver exception"), "{}", bare.dump());
    for mode in [Mode::Preload, Mode::Shared] {
        let o = with_env(scenarios().run(mode).arg("kv_cache_mapped"), OLD_KERNEL).run();
        let ctx = || format!("{mode:?}\n{}", o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        assert_eq!(rc(&o, "register_kv_cache"), Some(100000), "{}", ctx());
        assert!(o.stderr.contains("regcheck: error: [ACL-HOSTREG-PAGEABLE-OLD-KERNEL]"), "{}", ctx());
        assert!(!o.stderr.contains("no record to be sure"), "{}", ctx());
        assert!(!o.stderr.contains("simulated driver exception"), "{}", ctx());
        assert_eq!(o.sim_calls("aclrtHostRegisterV2"), 0, "{}", ctx());
    }
}
