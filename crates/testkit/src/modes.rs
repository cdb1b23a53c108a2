//! The three ways regcheck is put in front of the vendor, for scenario programs that are run
//! in each: `LD_PRELOAD` of libregcheck.so, linked with `-lregcheck`, linked with
//! libregcheck.a.

use std::path::PathBuf;

use crate::{Link, Outcome, Program, Run};

/// How a scenario program meets regcheck.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The bare program under `LD_PRELOAD=libregcheck.so`.
    Preload,
    /// Linked with `-lregcheck` ahead of the vendor libraries.
    Shared,
    /// Linked with `libregcheck.a` ahead of the vendor libraries.
    Static,
}

/// Every mode, in the order tests run them.
pub const MODES: [Mode; 3] = [Mode::Preload, Mode::Shared, Mode::Static];

/// One scenario program, built bare (for `LD_PRELOAD` and bare runs) and linked both ways.
#[derive(Debug, Clone)]
pub struct Scenarios {
    bare: PathBuf,
    shared: PathBuf,
    static_: PathBuf,
}

impl Scenarios {
    /// Build the program three ways; `program(link)` describes it for one link mode.
    pub fn build(program: impl Fn(Link) -> Program) -> Scenarios {
        Scenarios {
            bare: program(Link::Bare).build(),
            shared: program(Link::RegcheckShared).build(),
            static_: program(Link::RegcheckStatic).build(),
        }
    }

    /// A run of the program under regcheck in `mode`.
    pub fn run(&self, mode: Mode) -> Run {
        match mode {
            Mode::Preload => Run::new(&self.bare).preload(crate::regcheck().shared),
            Mode::Shared => Run::new(&self.shared),
            Mode::Static => Run::new(&self.static_),
        }
    }

    /// A run of the bare program, without regcheck.
    pub fn bare(&self) -> Run {
        Run::new(&self.bare)
    }

    /// The bare program's path (to run it through something else, e.g. the launcher).
    pub fn bare_exe(&self) -> &std::path::Path {
        &self.bare
    }

    /// The program with `args` bare, then in every mode under regcheck with regcheck's
    /// variables `env`: it exits 0 each time, and under regcheck every vendor call (its
    /// `rc <label> <code>` line) returns what it returns bare but for the rejections `rejected`
    /// lists (label, code); no internal failure. The outcomes under regcheck, in [`MODES`]'
    /// order.
    pub fn each_mode_env(&self, args: &[&str], rejected: &[(&str, i64)], env: &[(&str, &str)]) -> Vec<Outcome> {
        let b = self.bare().args(args).run();
        assert_eq!(b.code(), Some(0), "{args:?} bare\n{}", b.dump());
        let want = b.rc_lines();
        MODES
            .iter()
            .map(|&mode| {
                let mut r = self.run(mode).args(args);
                for (k, v) in env {
                    r = r.env(k, v);
                }
                let o = r.run();
                let ctx = || format!("{args:?} in {mode:?}\n{}", o.dump());
                assert_eq!(o.code(), Some(0), "{}", ctx());
                let got = o.rc_lines();
                assert_eq!(got.len(), want.len(), "{}", ctx());
                for ((label, code), (wl, wc)) in got.iter().zip(&want) {
                    assert_eq!(label, wl, "{}", ctx());
                    match rejected.iter().find(|(l, _)| l == label) {
                        Some((_, c)) => assert_eq!(code, c, "{label}: {}", ctx()),
                        None => assert_eq!(code, wc, "{label} as without regcheck: {}", ctx()),
                    }
                }
                assert!(!o.stderr.contains("internal failure"), "{}", ctx());
                o
            })
            .collect()
    }
}

impl Outcome {
    /// The `rc <label> <code>` lines scenario programs print for each vendor call, in order.
    pub fn rc_lines(&self) -> Vec<(String, i64)> {
        self.stdout
            .lines()
            .filter_map(|l| {
                let mut it = l.split_whitespace();
                (it.next()? == "rc").then_some(())?;
                Some((it.next()?.to_string(), it.next()?.parse().ok()?))
            })
            .collect()
    }
}
