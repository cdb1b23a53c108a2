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
