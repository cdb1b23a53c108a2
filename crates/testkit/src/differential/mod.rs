//! The differential test (issue 27): seeded random sequences of ACL and HIXL calls, through
//! the PLT and through dlsym, run bare on the simulator and under regcheck (`LD_PRELOAD`, and
//! `regcheck run --audit`), each step's code compared. Invariants, step by step:
//!
//! * a call that succeeds bare succeeds under regcheck;
//! * a call regcheck rejects (the simulator never received it) fails bare, with the same code
//!   (or bare with the driver's opaque 507899, which regcheck's rules name with a code of
//!   their own);
//! * a call that crashes bare (the simulated driver's exception aborts) is rejected under
//!   regcheck, which never crashes;
//! * a call regcheck forwards answers as it does bare; no run hangs (each is bounded in time).
//!
//! A crash would end a run, so every run probes each step that may crash in a forked child
//! first: a step that crashes there is not made for real (as regcheck must not make it
//! either), and the runs stay comparable after it.
//!
//! Each seed picks its environment ([`Env`]: the registration path, the kernel, whether
//! aclrtMallocHost memory is mlocked) and its sequence; a failing sequence is shrunk (steps
//! dropped while it fails the same way) and reported as a readable trace. The driver is
//! tests/c/differential (one source file per API family); the generator has one module per
//! family (`acl`, `hixl`, `hixl_cs`): a new API family is one more of each.

mod acl;
mod check;
mod exec;
mod gen;
mod hixl;
mod hixl_cs;

use std::time::{Duration, Instant};

pub use check::{compare, same, Violation};
pub use exec::{prepare, Answer, Door, Run};
pub use gen::{Family, Gen, Mem, Rng, Step};

/// The simulated platform of a run: the same for the simulator and for regcheck.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Env {
    /// The driver's pinned-register feature (`ACLSIM_PIN_REGISTER`) on a runtime after 9.1
    /// (`ACLSIM_CANN_VERSION=9.2.0`, where regcheck cannot ask the driver: the path is unknown
    /// to it); `false` is CANN 9.1.0, the runtime's own process-wide tables (known).
    pub pin_register: bool,
    /// A 5.10 kernel (pageable memory cannot be registered: the driver's exception), else 6.6.
    pub old_kernel: bool,
    /// aclrtMallocHost memory is page-locked but not mlocked (`ACLSIM_MLOCK_MAX=4096`).
    pub no_mlock: bool,
    /// A chip without host registration (`ACLSIM_SOC_NAME=Ascend310P3`): the driver refuses the
    /// chip before anything of the range.
    pub unsupported_chip: bool,
}

impl Env {
    /// The environment of `seed`: its low four bits (so seeds 0-15 cover every one).
    pub fn of_seed(seed: u64) -> Env {
        Env {
            pin_register: seed & 1 != 0,
            old_kernel: seed & 2 != 0,
            no_mlock: seed & 4 != 0,
            unsupported_chip: seed & 8 != 0,
        }
    }

    /// The variables that set it.
    pub fn vars(&self) -> Vec<(&'static str, String)> {
        let kernel = if self.old_kernel { "5.10.0-60.18.0.50.oe2203.x86_64" } else { "6.6.0" };
        let mut v = vec![
            ("ACLSIM_PIN_REGISTER", if self.pin_register { "1" } else { "0" }.to_string()),
            // The driver path exists only after 9.1 (the release profiles); 9.1.0 is the tables.
            ("ACLSIM_CANN_VERSION", if self.pin_register { "9.2.0" } else { "9.1.0" }.to_string()),
            ("ACLSIM_KERNEL_RELEASE", kernel.to_string()),
            ("REGCHECK_KERNEL_RELEASE", kernel.to_string()),
        ];
        if self.no_mlock {
            v.push(("ACLSIM_MLOCK_MAX", "4096".to_string()));
        }
        if self.unsupported_chip {
            v.push(("ACLSIM_SOC_NAME", "Ascend310P3".to_string()));
        }
        v
    }
}

impl std::fmt::Display for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let vars: Vec<String> = self.vars().iter().map(|(k, v)| format!("{k}={v}")).collect();
        write!(f, "{}", vars.join(" "))
    }
}

/// The API families, fresh for a sequence.
fn families() -> Vec<Box<dyn Family>> {
    vec![Box::<acl::Acl>::default(), Box::<hixl::Hixl>::default(), Box::<hixl_cs::HixlCs>::default()]
}

/// The sequence of `seed`: at least `calls` steps.
pub fn generate(seed: u64, calls: usize) -> Vec<Step> {
    let mut g = Gen::new(seed);
    let mut fams = families();
    let weights: Vec<(u64, usize)> = fams.iter().enumerate().map(|(i, f)| (f.weight(), i)).collect();
    let mut out = Vec::with_capacity(calls + 16);
    while out.len() < calls {
        let i = g.rng.pick(&weights);
        fams[i].step(&mut g, &mut out);
    }
    out
}

/// How hard to look, and how much to shrink.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Steps per sequence.
    pub calls: usize,
    /// Runs (bare plus one door) spent shrinking a failure at most.
    pub shrink_runs: usize,
    /// Seconds spent shrinking a failure at most.
    pub shrink_seconds: u64,
    /// Distinct failures (kind of violation, op) shrunk per door; the others are listed.
    pub shrunk_per_door: usize,
}

/// What one seed gave.
#[derive(Debug)]
pub struct SeedReport {
    /// The seed.
    pub seed: u64,
    /// Its environment.
    pub env: Env,
    /// Steps run.
    pub steps: usize,
    /// Steps that crashed bare (and so had to be rejected under regcheck).
    pub bare_crashes: usize,
    /// Steps that succeeded bare.
    pub bare_successes: usize,
    /// The failures (one per door at most), shrunk, as readable reports; empty when every
    /// invariant held.
    pub failures: Vec<String>,
    /// The failures' violations (on the shrunk scripts).
    pub violations: Vec<Violation>,
    /// Time taken, shrinking included.
    pub elapsed: Duration,
}

/// Runs the sequence of `seed` bare, under `LD_PRELOAD` and under `regcheck run --audit`, and
/// checks the invariants through each door; a failure is shrunk within `limits`.
pub fn check_seed(seed: u64, limits: Limits) -> SeedReport {
    let start = Instant::now();
    prepare();
    let env = Env::of_seed(seed);
    let script = generate(seed, limits.calls);
    let bare = exec::run(Door::Bare, &env, &script);
    let bare_crashes = bare.answers.iter().filter(|a| matches!(a, Answer::Crash(_))).count();
    let bare_successes = bare.answers.iter().filter(|a| matches!(a, Answer::Code { rc: 0, .. })).count();
    let mut report = SeedReport {
        seed,
        env,
        steps: script.len(),
        bare_crashes,
        bare_successes,
        failures: Vec::new(),
        violations: Vec::new(),
        elapsed: Duration::ZERO,
    };
    for door in [Door::Preload, Door::Audit] {
        let run = exec::run(door, &env, &script);
        let mut classes: Vec<Violation> = Vec::new();
        for v in compare(&script, &bare, &run, door) {
            if !classes.iter().any(|c| check::same(c, &v)) {
                classes.push(v);
            }
        }
        for (n, v) in classes.into_iter().enumerate() {
            let first = v.describe();
            if n >= limits.shrunk_per_door {
                report.failures.push(format!(
                    "seed {seed:#x} ({env}), {} steps: {first}: {} (not shrunk)",
                    script.len(),
                    script[v.step].text
                ));
                report.violations.push(v);
                continue;
            }
            let (small, found) =
                check::shrink(&env, &script, (v, bare.clone(), run.clone()), limits.shrink_runs, limits.shrink_seconds);
            report.failures.push(format!(
                "seed {seed:#x} ({env}), {} steps: {first}\nshrunk to {} steps: {}\n{}",
                script.len(),
                small.len(),
                found.0.describe(),
                check::trace(&small, &found)
            ));
            report.violations.push(found.0);
        }
    }
    report.elapsed = start.elapsed();
    report
}
