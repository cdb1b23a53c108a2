//! The `regcheck` command: `regcheck run` (run a program under regcheck), `regcheck doctor`
//! (what regcheck detects on this machine and what follows from it), `regcheck rules` and
//! `regcheck explain` (the rule catalogue). It links the regcheck library itself, so every
//! answer comes from the same probes, settings parser and catalogue the library uses.
//!
//! `regcheck-run` is kept as an alias of `regcheck run`.

pub mod docs;
pub mod doctor;
pub mod rules;
pub mod run;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// regcheck: validation layer for Ascend memory registration (ACL and HIXL).
#[derive(Debug, Parser)]
#[command(name = "regcheck", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run PROGRAM with regcheck loaded (LD_PRELOAD), checking every memory registration it
    /// makes through the Ascend ACL and HIXL APIs.
    #[command(override_usage = "regcheck run [OPTIONS] [--] PROGRAM [ARGS...]")]
    Run(run::RunArgs),
    /// What regcheck detects on this machine and what follows from it; problems with their
    /// fix. Exit status 1 when there are problems.
    Doctor(doctor::DoctorArgs),
    /// The rule catalogue, with each rule's action under the current REGCHECK_RULES.
    Rules(rules::RulesArgs),
    /// One rule: what it checks, the vendor code it returns, the fix, the source, and a
    /// minimal wrong and right call.
    Explain(rules::ExplainArgs),
}

/// `regcheck ...`
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(a) => run::main(a, "regcheck run"),
        Command::Doctor(a) => doctor::main(a),
        Command::Rules(a) => rules::list(a),
        Command::Explain(a) => rules::explain(a),
    }
}
