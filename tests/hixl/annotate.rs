//! The annotation API on device memory (`REGCHECK_DEVICE_MALLOC_LIKE_BLOCK`,
//! `REGCHECK_FREE_LIKE_BLOCK`): a device pool carved from `aclrtMalloc` blocks regcheck did not
//! see allocated (tests/c/annotate_device.cpp: the simulator's internal entry point, as a
//! framework's caching allocator or a vendor-internal allocation gives them), registered with
//! `Hixl::RegisterMem(MEM_DEVICE)` on an HCCS engine.

use testkit::{Mode, Outcome, Program, Scenarios, MODES};

use super::codes;

fn program() -> Scenarios {
    Scenarios::build(|l| {
        Program::cxx("annotate_device", &["tests/c/annotate_device.cpp"]).link(l).libs(&[
            "cann_hixl",
            "ascendcl",
            "acl_rt",
        ])
    })
}

fn want(normal: u32) -> Vec<(String, u32)> {
    [("huge", 0), ("normal", normal), ("dereg_huge", 0), ("after_free", 0), ("dereg_after_free", 0)]
        .iter()
        .map(|(l, c)| (l.to_string(), *c))
        .collect()
}

/// Annotated, each block is judged by the policy it was declared with: the HUGE_ONLY block is
/// silent, the NORMAL_ONLY block is refused on HCCS as `aclrtMalloc(NORMAL_ONLY)` memory is
/// (HIXL-REG-DEVICE-HUGE, naming the policy), and once the pool takes a block back it is no
/// device memory regcheck knows (HIXL-REG-DEVICE-ORIGIN). Not annotated, the pool's memory is
/// of unknown origin: warned about, never refused (the plain run is the annotated one's control:
/// there the NORMAL_ONLY block is forwarded with HIXL-REG-DEVICE-ORIGIN, as it would be if the
/// annotation recorded nothing).
#[test]
fn a_device_pool_carved_from_unseen_acl_malloc_blocks_is_judged_by_its_declared_policy() {
    let s = program();
    // Bare (the macros do nothing without regcheck): the simulator takes every block.
    for arg in ["plain", "annotated"] {
        let o = s.bare().arg(arg).run();
        assert_eq!(o.code(), Some(0), "{}", o.dump());
        assert_eq!(codes(&o), want(0), "bare {arg}: {}", o.dump());
        assert!(!o.stdout.lines().any(|l| l.starts_with("annotate ") && !l.ends_with(" 0")), "{}", o.dump());
    }
    let runs = |arg: &str| -> Vec<(Mode, bool, Outcome)> {
        let mut v: Vec<(Mode, bool, Outcome)> = MODES.iter().map(|&m| (m, false, s.run(m).arg(arg).run())).collect();
        v.push((Mode::Preload, true, s.run(Mode::Preload).arg(arg).audit().run()));
        v
    };
    for (mode, audited, o) in runs("annotated") {
        let ctx = || format!("annotated, {mode:?} (audited: {audited})\n{}", o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        for l in ["huge_block", "normal_block", "huge_free", "normal_free"] {
            assert!(o.stdout.contains(&format!("annotate {l} 0\n")), "{l}: {}", ctx());
        }
        let huge =
            o.stderr.lines().find(|l| l.contains("[HIXL-REG-DEVICE-HUGE]")).unwrap_or_else(|| panic!("{}", ctx()));
        assert!(o.stderr.contains("made with ACL_MEM_MALLOC_NORMAL_ONLY"), "the declared policy is named: {}", ctx());
        assert_eq!(o.stderr.matches("[HIXL-REG-DEVICE-HUGE]").count(), 1, "the HUGE_ONLY block is fine: {}", ctx());
        // Only the block given back is of unknown origin.
        assert_eq!(o.stderr.matches("[HIXL-REG-DEVICE-ORIGIN]").count(), 1, "{}", ctx());
        let origin = o.stderr.find("[HIXL-REG-DEVICE-ORIGIN]").unwrap();
        assert!(o.stderr[..origin].contains("Hixl::DeregisterMem"), "after the free: {}", ctx());
        if mode == Mode::Static {
            // Linked statically, regcheck's dlsym is not the program's: its records may miss
            // calls, so what they show is seen, not certain (the message says so).
            assert_eq!(codes(&o), want(0), "{}", ctx());
            assert!(huge.contains("(forwarded)") && o.stderr.contains("evidence: seen"), "{}", ctx());
        } else {
            assert_eq!(codes(&o), want(103900), "{}", ctx());
            assert!(huge.contains("(rejected with 103900"), "{}", ctx());
        }
    }
    for (mode, audited, o) in runs("plain") {
        let ctx = || format!("plain, {mode:?} (audited: {audited})\n{}", o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        assert_eq!(codes(&o), want(0), "{}", ctx());
        assert!(!o.stderr.contains("[HIXL-REG-DEVICE-HUGE]"), "{}", ctx());
        assert_eq!(o.stderr.matches("[HIXL-REG-DEVICE-ORIGIN]").count(), 3, "{}", ctx());
        assert!(!o.stderr.contains("regcheck: error"), "{}", ctx());
    }
}
