//! The HIXL front end, through the doors users use: a C++ program (tests/c/hixl_scenarios.cpp)
//! built with the system compiler against the simulator's headers, run against the
//! simulator's libcann_hixl.so with `LD_PRELOAD` of libregcheck.so, linked with `-lregcheck`
//! ahead of `-lcann_hixl`, and linked with libregcheck.a. Each case proves the code returned,
//! whether the vendor saw the call (the simulator's trace), and the rule ID in the log. The
//! example `examples-c/hixl_demo.cpp` must pass bare and under regcheck.
//!
//! Here: the scenario program and the helpers every part uses. The parts: `registration`
//! (RegisterMem, DeregisterMem), `memory` (where registered memory comes from), `transfers`,
//! `settings` (the engine, the mode, what is logged), `demos` (whole programs).

mod annotate;
mod demos;
mod memory;
mod registration;
mod settings;
mod transfers;

use std::sync::OnceLock;

use testkit::{Mode, Outcome, Program, Run, Scenarios, MODES};

const SRC: &str = "tests/c/hixl_scenarios.cpp";
const LIBS: &[&str] = &["cann_hixl", "ascendcl"];

fn scenarios() -> &'static Scenarios {
    static S: OnceLock<Scenarios> = OnceLock::new();
    S.get_or_init(|| Scenarios::build(|l| Program::cxx("hixl_scenarios", &[SRC]).link(l).libs(LIBS)))
}

fn with_env(mut r: Run, env: &[(&str, &str)]) -> Run {
    for (k, v) in env {
        r = r.env(k, v);
    }
    r
}

fn run_in(mode: Mode, scenario: &str, env: &[(&str, &str)]) -> Outcome {
    with_env(scenarios().run(mode).arg(scenario), env).run()
}

fn bare(scenario: &str, env: &[(&str, &str)]) -> Outcome {
    with_env(scenarios().bare().arg(scenario), env).run()
}

/// The bare run of `scenario` (the simulator alone) answers `want`: the vendor's behaviour
/// the case under regcheck is held to.
fn assert_bare(scenario: &str, want: &[(&str, u32)]) {
    let b = bare(scenario, &[]);
    let want: Vec<(String, u32)> = want.iter().map(|(l, c)| (l.to_string(), *c)).collect();
    assert_eq!(codes(&b), want, "the vendor's behaviour: {}", b.dump());
}

/// `rc <label> <code>` lines, in order.
fn codes(o: &Outcome) -> Vec<(String, u32)> {
    o.rc_lines().into_iter().map(|(l, c)| (l, c as u32)).collect()
}

/// The line of the scenario program that holds `// SITE:<tag>`.
fn line_of(tag: &str) -> usize {
    let src = std::fs::read_to_string(testkit::workspace_root().join(SRC)).expect("the scenario program");
    let marker = format!("// SITE:{tag}");
    1 + src.lines().position(|l| l.trim_end().ends_with(&marker)).unwrap_or_else(|| panic!("no {marker} in {SRC}"))
}

fn value(o: &Outcome, key: &str) -> Option<i64> {
    o.stdout.lines().find_map(|l| l.strip_prefix("value ")?.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
}

/// `rule` was logged at warning level (and never as an error) in every outcome.
fn assert_warned(outs: &[Outcome], rule: &str) {
    for o in outs {
        assert!(o.stderr.contains(&format!("regcheck: warning: [{rule}]")), "{rule} not warned: {}", o.dump());
        assert!(!o.stderr.contains(&format!("regcheck: error: [{rule}]")), "{rule} is an error: {}", o.dump());
    }
}

/// One scenario, checked in the three modes.
struct Case<'a> {
    scenario: &'a str,
    env: &'a [(&'a str, &'a str)],
    /// Expected `rc` lines under regcheck.
    codes: &'a [(&'a str, u32)],
    /// Rule IDs that must be logged (`[ID]`).
    rules: &'a [&'a str],
    /// Rule IDs that must not be logged.
    absent: &'a [&'a str],
    /// Simulator calls and how many times each must have been received.
    forwarded: &'a [(&'a str, usize)],
}

impl Case<'_> {
    fn check(&self) -> Vec<Outcome> {
        self.check_in(&MODES, false)
    }

    /// Checked where regcheck's records are whole: under its `LD_AUDIT` module, with the
    /// library preloaded or linked (`-lregcheck`), as `regcheck run --audit` runs a program.
    /// For the scenarios whose rejections judge by records of C calls (ACL allocations, the
    /// HixlCS API); whole also without the module, preloaded or linked (tests/hixl/memory.rs,
    /// `rejections_by_records_are_certain_preloaded_or_linked`).
    fn check_audited(&self) -> Vec<Outcome> {
        self.check_in(&[Mode::Preload, Mode::Shared], true)
    }

    fn check_in(&self, modes: &[Mode], audited: bool) -> Vec<Outcome> {
        modes
            .iter()
            .map(|&mode| {
                let run = with_env(scenarios().run(mode).arg(self.scenario), self.env);
                let o = if audited { run.audit() } else { run }.run();
                let ctx = || format!("scenario {} in mode {mode:?} (audited: {audited})\n{}", self.scenario, o.dump());
                assert_eq!(o.code(), Some(0), "{}", ctx());
                let want: Vec<(String, u32)> = self.codes.iter().map(|(l, c)| (l.to_string(), *c)).collect();
                assert_eq!(codes(&o), want, "{}", ctx());
                for rule in self.rules {
                    assert!(o.stderr.contains(&format!("[{rule}]")), "rule {rule} not logged: {}", ctx());
                }
                for rule in self.absent {
                    assert!(!o.stderr.contains(&format!("[{rule}]")), "rule {rule} logged: {}", ctx());
                }
                for (call, n) in self.forwarded {
                    assert_eq!(o.sim_calls(call), *n, "{call} forwarded count: {}", ctx());
                }
                assert!(!o.stderr.contains("internal failure"), "{}", ctx());
                o
            })
            .collect()
    }
}

const REG: &str = "Hixl::RegisterMem";
const DEREG: &str = "Hixl::DeregisterMem";
const XFER: &str = "Hixl::TransferSync";
const A950: &[(&str, &str)] = &[("ACLSIM_SOC_NAME", "Ascend950PR_9579")];
