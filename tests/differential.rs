//! The differential test (issue 27, `testkit::differential`): seeded random sequences of ACL,
//! hixl::Hixl and HixlCS calls, through the PLT and through dlsym, over both registration
//! paths, 5.10 and 6.6 kernels, mlocked or not, run bare on the simulator and under regcheck
//! (`LD_PRELOAD`, `regcheck run --audit`). Regcheck rejects only what fails bare (with the
//! vendor's code), rejects what crashes bare, never crashes, never hangs. A failure is shrunk
//! to a short trace of the steps with both answers.
//!
//! Longer runs: `cargo xtask differential --seeds N --calls M`.

use testkit::differential::{check_seed, Limits};

/// Seeds (their low three bits pick the environment, see `Env::of_seed`): both registration
/// paths, both kernels, mlocked or not. On the main of issue 27 they find its items 1 (0x6:
/// HixlCSClientRegMem of pageable memory on a UB device endpoint, 5.10, crashes under regcheck),
/// 4 (0x6: dlsym'd aclrtMallocHost memory, not mlocked, registered through the PLT on 5.10:
/// false rejection under LD_PRELOAD), 5 (0x2, 0x6: PINNED, last reset, set, unregister: false
/// rejection under --audit) and 6 (0x0, 0x2: a transfer across 65+ adjacent registrations on
/// hixl_cs: false rejection).
const SEEDS: &[u64] = &[0x0, 0x2, 0x6, 0x7];
/// Shrinking costs a bare run and one under regcheck per try: only the first failure is shrunk
/// (within 15 s), the others are listed.
const LIMITS: Limits = Limits { calls: 1500, shrink_runs: 40, shrink_seconds: 15, shrunk_per_door: 1 };

#[test]
fn regcheck_rejects_only_what_fails_bare_and_everything_that_crashes() {
    let mut failures = Vec::new();
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
        failures.extend(r.failures);
    }
    assert!(failures.is_empty(), "{} failure(s):\n\n{}", failures.len(), failures.join("\n\n"));
}
