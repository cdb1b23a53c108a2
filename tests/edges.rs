//! Ranges at the edges of the address space, through the C door: named rules reject a range
//! that wraps, lies in the kernel half or runs past the top of user space before the vendor
//! sees it; and random registrations over every kind of memory (tests/c/acl_edges_random.c)
//! never get the driver's opaque 507899 back under regcheck, while the same calls without
//! regcheck do.

use std::sync::OnceLock;

use testkit::{Mode, Outcome, Program, Run, Scenarios, MODES};

fn program() -> &'static Scenarios {
    static S: OnceLock<Scenarios> = OnceLock::new();
    S.get_or_init(|| {
        Scenarios::build(|l| {
            Program::c("acl_edges_random", &["tests/c/acl_edges_random.c"]).link(l).libs(&["ascendcl"])
        })
    })
}

/// A kernel newer than the pageable-memory threshold, for the simulator and regcheck alike
/// (the simulated driver aborts on pageable memory below it).
fn newer_kernel(r: Run) -> Run {
    r.env("ACLSIM_KERNEL_RELEASE", "6.6.0").env("REGCHECK_KERNEL_RELEASE", "6.6.0").env_remove("ACLSIM_TRACE")
}

fn random_calls(r: Run, seed: u64, calls: u32, tag: &str) -> Outcome {
    let file = testkit::target_dir().join(format!("edges-file-{tag}-{seed}.bin"));
    let o = newer_kernel(r).arg(seed.to_string()).arg(calls.to_string()).arg(&file).run();
    let _ = std::fs::remove_file(&file);
    o
}

fn field(o: &Outcome, key: &str) -> u64 {
    let line = o.stdout.lines().find(|l| l.starts_with("calls ")).unwrap_or_else(|| panic!("no summary: {}", o.dump()));
    let mut it = line.split_whitespace();
    while let Some(k) = it.next() {
        if k == key {
            return it.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{key}: {line}"));
        }
    }
    panic!("no {key} in {line:?}")
}

const SEEDS: [u64; 3] = [0x5eed_0001, 0xdead_beef, 42];
const CALLS: u32 = 1500;

#[test]
fn random_registrations_never_get_the_driver_error_under_regcheck() {
    // Without regcheck the same calls do get 507899: the test can fail.
    let bare = random_calls(program().bare(), SEEDS[0], CALLS, "bare");
    assert_eq!(bare.code(), Some(0), "{}", bare.dump());
    assert!(field(&bare, "leaks") > 0, "the bare run reaches the driver error: {}", bare.dump());

    for mode in MODES {
        let seeds: &[u64] = if mode == Mode::Preload { &SEEDS } else { &SEEDS[..1] };
        for &seed in seeds {
            let o = random_calls(program().run(mode), seed, CALLS, &format!("{mode:?}"));
            let ctx = || format!("mode {mode:?} seed {seed:#x}\n{}", o.dump());
            assert_eq!(o.code(), Some(0), "{}", ctx());
            let leaks: Vec<&str> = o.stdout.lines().filter(|l| l.starts_with("leak ")).collect();
            assert!(leaks.is_empty(), "507899 reached the caller: {leaks:#?}\n{}", ctx());
            assert_eq!(field(&o, "calls"), CALLS as u64);
            assert!(field(&o, "ok") > 0, "valid registrations still succeed: {}", ctx());
            assert!(!o.stderr.contains("internal failure"), "{}", ctx());
        }
    }
}

/// The examples of the edges, one by one: the rule, the code, and the vendor never called.
#[test]
fn edge_ranges_are_rejected_by_named_rules() {
    let libs = &["cann_hixl", "ascendcl"];
    let s = Scenarios::build(|l| Program::cxx("edges", &["tests/c/edges.cpp"]).link(l).libs(libs));
    let want = [
        ("wrap_end_zero", 100000, "ACL-HOSTREG-RANGE-OVERFLOW"),
        ("wrap_size", 100000, "ACL-HOSTREG-RANGE-OVERFLOW"),
        ("kernel_half", 100000, "ACL-HOSTREG-NOT-USER-SPACE"),
        ("past_user_top", 100000, "ACL-HOSTREG-NOT-USER-SPACE"),
        ("v1_kernel_half", 100000, "ACL-HOSTREG-NOT-USER-SPACE"),
        ("last_user_page_v2", 100000, "ACL-HOSTREG-UNMAPPED"),
        ("hixl_wrap_end_zero", 103900, "HIXL-REG-RANGE-OVERFLOW"),
    ];
    // Without regcheck the vendor sees them all, and answers the ACL ones with 507899.
    let bare = newer_kernel(s.bare()).env("ACLSIM_TRACE", "1").run();
    assert_eq!(bare.code(), Some(0), "{}", bare.dump());
    assert!(bare.rc_lines().contains(&("kernel_half".to_string(), 507899)), "{}", bare.dump());
    assert_eq!(bare.sim_calls("Hixl::RegisterMem"), 3, "{}", bare.dump());
    for mode in MODES {
        let o = newer_kernel(s.run(mode)).env("ACLSIM_TRACE", "1").run();
        let ctx = || format!("mode {mode:?}\n{}", o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        let rc = o.rc_lines();
        for (label, code, rule) in want {
            assert!(rc.contains(&(label.to_string(), code)), "{label} -> {code}: {rc:?}\n{}", ctx());
            let line = o.stderr.lines().find(|l| l.contains(&format!("[{rule}]"))).unwrap_or_default();
            assert!(line.contains(&format!("(rejected with {code} ")), "{rule} named with the outcome: {}", ctx());
        }
        assert_eq!(o.sim_calls("aclrtHostRegisterV2") + o.sim_calls("aclrtHostRegister"), 0, "{}", ctx());
        // HIXL's RegisterMem checks only that the range does not wrap: a range in the kernel
        // half, or past the top of user space, fails later, in the transport. Warned, and the
        // vendor answers as it does bare. (The range past the top is also larger than the
        // documented host cap, which HIXL-REG-HOST-CAP warns about: no public code checks it.)
        for label in ["hixl_kernel_half", "hixl_past_user_top"] {
            let want = bare.rc_lines().into_iter().find(|(l, _)| l == label);
            assert_eq!(rc.iter().find(|(l, _)| l == label).cloned(), want, "{label}: {}", ctx());
        }
        assert!(o.stderr.contains("regcheck: warning: [HIXL-REG-NOT-USER-SPACE]"), "{}", ctx());
        assert!(o.stderr.contains("regcheck: warning: [HIXL-REG-HOST-CAP]"), "{}", ctx());
        assert_eq!(o.sim_calls("Hixl::RegisterMem"), 2, "{}", ctx());
    }
}
