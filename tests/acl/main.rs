//! The ACL front end, through the doors users use: a C program (tests/c/acl_scenarios.c)
//! built with the system compiler, run against the simulator with `LD_PRELOAD` of
//! libregcheck.so, linked with `-lregcheck` ahead of the vendor library, and linked with
//! libregcheck.a. Each case proves the code returned, whether the vendor saw the call, and
//! the rule ID in the log.
//!
//! Here: the scenario program and the helpers every part uses. The parts: `rules` (each rule),
//! `settings` (the environment variables), `robustness` (threads, fork, panics, the caller's
//! state), `vendor` (finding the vendor library), `launcher` (`regcheck-run`), `c_api`.

mod annotate;
mod c_api;
mod field;
mod launcher;
mod profiles;
mod robustness;
mod rules;
mod settings;
mod vendor;

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
        self.check_in(&MODES, false)
    }

    /// Checked where regcheck's records are whole (its `LD_AUDIT` module loaded, the library
    /// preloaded or linked: `regcheck run --audit`): for the scenarios whose rejections judge
    /// by records of earlier calls (whole also without the module, preloaded or linked:
    /// `rules::rejections_by_records_need_whole_records`).
    fn check_audited(&self) {
        self.check_in(&[Mode::Preload, Mode::Shared], true)
    }

    fn check_in(&self, modes: &[Mode], audited: bool) {
        for &mode in modes {
            let run = with_args(scenarios().run(mode), self.scenario, &format!("{mode:?}"), self.env);
            let o = if audited { run.audit() } else { run }.run();
            let ctx = || format!("scenario {} in mode {mode:?} (audited: {audited})\n{}", self.scenario, o.dump());
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

/// A scenario whose finding is a warning: under regcheck, in every mode, the calls answer as
/// they do bare (the vendor decides), `rule` is warned about and nothing is rejected.
fn check_warned_as_bare(scenario: &str, env: &[(&str, &str)], rule: &str, call: &str) {
    let b = bare(scenario, env);
    assert_eq!(b.code(), Some(0), "bare: {}", b.dump());
    for mode in MODES {
        let o = run_in(mode, scenario, env);
        let ctx = || format!("scenario {scenario} in mode {mode:?}\n{}\nbare:\n{}", o.dump(), b.dump());
        assert_eq!(codes(&o), codes(&b), "{}", ctx());
        assert_eq!(o.sim_calls(call), b.sim_calls(call), "{}", ctx());
        assert!(o.stderr.contains(&format!("regcheck: warning: [{rule}]")), "{}", ctx());
        assert!(!o.stderr.contains("regcheck: error"), "{}", ctx());
    }
}

const V2: &str = "aclrtHostRegisterV2";
const OLD_KERNEL: &[(&str, &str)] = &[
    ("REGCHECK_KERNEL_RELEASE", "5.10.0-60.18.0.50.oe2203.aarch64"),
    ("ACLSIM_KERNEL_RELEASE", "5.10.0-60.18.0.50.oe2203.aarch64"),
];
