//! The differential test (issue 27, `testkit::differential`): seeded random sequences of ACL,
//! hixl::Hixl and HixlCS calls, through the PLT and through dlsym, over both registration
//! paths, 5.10 and 6.6 kernels, mlocked or not, run bare on the simulator and under regcheck
//! (`LD_PRELOAD`, `regcheck run --audit`). Regcheck rejects only what fails bare (with the
//! vendor's code), rejects what crashes bare, never crashes, never hangs. A failure is shrunk
//! to a short trace of the steps with both answers.
//!
//! Longer runs: `cargo xtask differential --seeds N --calls M`.

use testkit::differential::{check_seed, Door, Limits, Violation};

/// Seeds (their low four bits pick the environment, see `Env::of_seed`): both registration
/// paths, both kernels, mlocked or not, a chip with or without host registration. On the main of issue 27 they find its items 1 (0x6:
/// HixlCSClientRegMem of pageable memory on a UB device endpoint, 5.10, crashes under regcheck),
/// 4 (0x6: dlsym'd aclrtMallocHost memory, not mlocked, registered through the PLT on 5.10:
/// false rejection under LD_PRELOAD), 5 (0x2, 0x6: PINNED, last reset, set, unregister: false
/// rejection under --audit) and 6 (0x0, 0x2: a transfer across 65+ adjacent registrations on
/// hixl_cs: false rejection).
/// 0x9 (the driver path on a chip without host registration) was added for issue 33 item 8;
/// the generator makes forced resets, wrapping sizes, HixlCS server registrations of address
/// 0 and of a range ending at 2^64, and device-pointer look-ups on device 1 (items 2-5).
const SEEDS: &[u64] = &[0x0, 0x2, 0x6, 0x7, 0x9];
/// Shrinking costs a bare run and one under regcheck per try: only the first failure is shrunk
/// (within 15 s), the others are listed.
const LIMITS: Limits = Limits { calls: 1500, shrink_runs: 40, shrink_seconds: 15, shrunk_per_door: 1 };

/// The open deviations: kinds of difference the test knows and regcheck does not fix yet, each
/// with why. The first difference of each run must be of one of these kinds or it fails the
/// test; differences after the first are listed, not judged (the two runs' states differ from
/// there on). docs/testing.md lists them too.
fn open_deviation(v: &Violation) -> Option<&'static str> {
    // None is open. (Issue 32: under LD_PRELOAD alone regcheck's own dlsym makes its records
    // whole, so a crash let through there is a failure, as under --audit. Issue 33: stack
    // memory and the documented caps are warnings, since no public code refuses them; a 1 TiB
    // registration is made of the unmapped hole at a fixed address, so it covers the same
    // memory in every run's layout. The last kind, "rejected with another code than the
    // vendor's", closed when regcheck kept the runtime's own tables on their path: a MAPPED
    // registration they keep through a reset, their overlap search, before the context up to
    // 9.1.0; and when a comm registration refused on a thread with no context went to the
    // vendor, whose failure leaves the engine's context current.)
    let _ = v;
    None
}

#[test]
fn regcheck_rejects_only_what_fails_bare_and_everything_that_crashes() {
    let mut failures = Vec::new();
    let mut open = Vec::new();
    for &seed in SEEDS {
        let shrunk_per_door = if failures.is_empty() { LIMITS.shrunk_per_door } else { 0 };
        let r = check_seed(seed, Limits { shrunk_per_door, ..LIMITS });
        eprintln!(
            "seed {seed:#x} ({}): {} steps, {} succeed bare, {} crash bare, {} failure(s), {:.1?}",
            r.env,
            r.steps,
            r.bare_successes,
            r.bare_crashes,
            r.failures.len(),
            r.elapsed
        );
        for door in [Door::Preload, Door::Audit] {
            let mut of_door = r.violations.iter().zip(&r.failures).filter(|(v, _)| v.door == door);
            let Some((first, text)) = of_door.next() else { continue };
            match open_deviation(first) {
                Some(why) => open.push(format!("seed {seed:#x}, {}: {} ({why})", door.name(), first.describe())),
                None => failures.push(text.clone()),
            }
            let later = of_door.count();
            if later > 0 {
                open.push(format!("seed {seed:#x}, {}: {later} later difference(s), not judged", door.name()));
            }
        }
    }
    eprintln!("open deviations ({}):\n{}", open.len(), open.join("\n"));
    assert!(failures.is_empty(), "{} failure(s):\n\n{}", failures.len(), failures.join("\n\n"));
}
