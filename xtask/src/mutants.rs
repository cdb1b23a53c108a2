//! `cargo xtask mutants`: mutation testing of the rules and the state with `cargo mutants`.
//!
//! Installs cargo-mutants (`cargo install --locked cargo-mutants`) when it is missing, saying
//! so (`--no-install` only says how), then runs it on the `regcheck` package over `src/rules`
//! and `src/state`, one job at a time, testing each mutant with the library's unit tests
//! (`cargo test --lib`). Other arguments go to `cargo mutants` (e.g. `--file 'src/rules/acl/*.rs'`
//! to narrow the run, `--list` to see the mutants). The results are in `mutants.out/`.

use std::process::Command;

use crate::util::{cargo, run_visible, shown, Result};

/// The files mutated by default.
const FILES: &[&str] = &["src/rules/**/*.rs", "src/state/**/*.rs"];

fn have_cargo_mutants() -> bool {
    Command::new(cargo()).args(["mutants", "--version"]).output().map(|o| o.status.success()).unwrap_or(false)
}

pub fn run(args: &[String]) -> Result<i32> {
    let no_install = args.iter().any(|a| a == "--no-install");
    let args: Vec<&String> = args.iter().filter(|a| *a != "--no-install").collect();
    if !have_cargo_mutants() {
        let mut install = Command::new(cargo());
        install.args(["install", "--locked", "cargo-mutants"]);
        if no_install {
            return Err(format!("cargo-mutants is not installed; install it with: {}", shown(&install)));
        }
        eprintln!("xtask: cargo-mutants is not installed; installing it: {}", shown(&install));
        run_visible(&mut install)?;
    }
    let mut cmd = Command::new(cargo());
    cmd.current_dir(testkit::workspace_root()).args(["mutants", "--package", "regcheck"]);
    if !args.iter().any(|a| a.as_str() == "--in-place") {
        // one copy of the tree at a time (`--in-place` mutates the tree itself, one at a time)
        cmd.args(["--jobs", "1"]);
    }
    if !args.iter().any(|a| a.as_str() == "--file" || a.starts_with("--file=")) {
        for f in FILES {
            cmd.args(["--file", f]);
        }
    }
    cmd.arg("--cargo-test-arg=--lib").args(&args);
    eprintln!("xtask: {}", shown(&cmd));
    let status = cmd.status().map_err(|e| format!("cannot run {}: {e}", shown(&cmd)))?;
    // cargo mutants exits 2 when mutants survived, 3 on time-outs: pass it on
    Ok(status.code().unwrap_or(1))
}
