//! `cargo xtask test`: the README's test command.
//!
//! Checks that the tools the test suite drives are installed (a C and a C++ compiler, cmake,
//! pkg-config, make, binutils' nm and objdump) and says how to install the missing ones; then runs
//! `cargo test --workspace` with the remaining arguments.

use std::process::Command;

use crate::util::{cargo, have_tool, shown, Result};

/// (tool, what uses it, Debian package).
const TOOLS: &[(&str, &str, &str)] = &[
    ("cc", "C test programs and the C demo", "gcc"),
    ("c++", "the simulator and the C++ test programs", "g++"),
    ("cmake", "the CMake consumer project (tests/packaging.rs)", "cmake"),
    ("pkg-config", "the pkg-config consumer (tests/packaging.rs)", "pkg-config"),
    ("make", "the CMake and pkg-config consumers (tests/packaging.rs)", "make"),
    ("nm", "the exported-symbol check", "binutils"),
    ("objdump", "the SONAME check", "binutils"),
];

pub fn run(args: &[String]) -> Result<i32> {
    let missing: Vec<_> = TOOLS.iter().filter(|(tool, _, _)| !have_tool(tool)).collect();
    if !missing.is_empty() {
        eprintln!("xtask: the tests need tools that are not installed:");
        for (tool, why, _) in &missing {
            eprintln!("  {tool:<11} for {why}");
        }
        let mut packages: Vec<&str> = missing.iter().map(|(_, _, pkg)| *pkg).collect();
        packages.dedup();
        eprintln!("install them, e.g. on Debian/Ubuntu:");
        eprintln!("  apt-get install -y {}", packages.join(" "));
        if missing.iter().any(|(tool, _, _)| *tool == "cmake") {
            eprintln!("or, for cmake alone, from PyPI:");
            eprintln!("  python3 -m pip install cmake");
        }
        return Err("missing tools (see above)".into());
    }
    let mut cmd = Command::new(cargo());
    cmd.current_dir(testkit::workspace_root()).args(["test", "--workspace"]).args(args);
    eprintln!("xtask: {}", shown(&cmd));
    let status = cmd.status().map_err(|e| format!("cannot run {}: {e}", shown(&cmd)))?;
    Ok(status.code().unwrap_or(101))
}
