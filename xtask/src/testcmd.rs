//! `cargo xtask test`: the README's test command.
//!
//! Makes sure the tools the test suite drives are installed (a C and a C++ compiler, cmake,
//! pkg-config, make, binutils' nm and objdump, valgrind) and the Debian libraries Mooncake's NPU
//! wheel loads (libibverbs1, libnuma1, libcurl4, liblzma5: tests/mooncake.rs). What is missing is installed, saying so, when
//! that can be done here (as root with apt-get; cmake also from PyPI); with `--no-install`, or
//! when it cannot, it says how and stops. It reserves the huge pages the hugetlb test needs
//! (as root, saying so; otherwise it says how: `crate::machine`). Then it runs
//! `cargo test --workspace` with the remaining arguments.

use std::ffi::OsString;
use std::process::Command;

use crate::util::{cargo, have_tool, is_root, shown, Result};

/// (tool, what uses it, Debian package).
const TOOLS: &[(&str, &str, &str)] = &[
    ("cc", "C test programs and the C demo", "gcc"),
    ("c++", "the simulator and the C++ test programs", "g++"),
    ("cmake", "the CMake consumer project (tests/packaging)", "cmake"),
    ("pkg-config", "the pkg-config consumer (tests/packaging)", "pkg-config"),
    ("make", "the CMake and pkg-config consumers (tests/packaging)", "make"),
    ("nm", "the exported-symbol check", "binutils"),
    ("objdump", "the SONAME check", "binutils"),
    ("valgrind", "the memcheck test (tests/valgrind.rs)", "valgrind"),
];

/// (shared library, what loads it, Debian package): what Mooncake's unmodified wheel NEEDs
/// beside the simulator (tests/mooncake.rs; `engine.so` cannot be imported without libibverbs,
/// though the Ascend transport uses no RDMA).
const LIBS: &[(&str, &str, &str)] = &[
    ("libibverbs.so.1", "Mooncake's wheel (tests/mooncake.rs)", "libibverbs1"),
    ("libnuma.so.1", "Mooncake's wheel (tests/mooncake.rs)", "libnuma1"),
    ("libcurl.so.4", "Mooncake's wheel (tests/mooncake.rs)", "libcurl4"),
    ("liblzma.so.5", "Mooncake's wheel (tests/mooncake.rs)", "liblzma5"),
];

/// The dynamic loader's cache (`ldconfig -p`) knows `soname`.
fn have_lib(soname: &str) -> bool {
    let out =
        Command::new("ldconfig").arg("-p").output().or_else(|_| Command::new("/sbin/ldconfig").arg("-p").output());
    match out {
        Ok(out) => {
            String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim_start().starts_with(&format!("{soname} ")))
        }
        Err(_) => false,
    }
}

type Tool = (&'static str, &'static str, &'static str);

fn missing_tools() -> Vec<&'static Tool> {
    let tools = TOOLS.iter().filter(|(tool, _, _)| !have_tool(tool));
    tools.chain(LIBS.iter().filter(|(lib, _, _)| !have_lib(lib))).collect()
}

fn announce_and_run(cmd: &mut Command) -> bool {
    eprintln!("xtask: installing: {}", shown(cmd));
    cmd.status().map(|s| s.success()).unwrap_or(false)
}

/// Install what is missing, as far as it can be done here. Returns the PATH the tests should
/// run with (pip may put cmake in a directory that is not on PATH yet).
fn install(missing: &[&Tool]) -> Option<OsString> {
    let mut packages: Vec<&str> = missing.iter().map(|(_, _, pkg)| *pkg).collect();
    packages.dedup();
    if is_root() && have_tool("apt-get") {
        let _ = announce_and_run(Command::new("apt-get").args(["update", "-qq"]));
        let mut apt = Command::new("apt-get");
        apt.env("DEBIAN_FRONTEND", "noninteractive").args(["install", "-y", "-qq"]).args(&packages);
        announce_and_run(&mut apt);
    }
    let mut path = std::env::var_os("PATH");
    if !have_tool("cmake") && have_tool("python3") {
        let pip = |extra: &[&str]| {
            let mut c = Command::new("python3");
            c.args(["-m", "pip", "install", "--quiet", "cmake"]).args(extra);
            announce_and_run(&mut c)
        };
        if pip(&[]) || pip(&["--break-system-packages"]) {
            let scripts = Command::new("python3")
                .args(["-c", "import sysconfig; print(sysconfig.get_path('scripts'))"])
                .output()
                .ok()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
            if let Some(dir) = scripts.filter(|d| !d.is_empty()) {
                let mut dirs = vec![std::path::PathBuf::from(dir)];
                dirs.extend(std::env::split_paths(&path.clone().unwrap_or_default()));
                path = std::env::join_paths(dirs).ok();
                if let Some(p) = &path {
                    std::env::set_var("PATH", p);
                }
            }
        }
    }
    path
}

fn explain(missing: &[&Tool]) {
    eprintln!("xtask: the tests need tools that are not installed:");
    for (tool, why, _) in missing {
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
}

pub fn run(args: &[String]) -> Result<i32> {
    let no_install = args.iter().any(|a| a == "--no-install");
    let args: Vec<&String> = args.iter().filter(|a| *a != "--no-install").collect();
    let mut missing = missing_tools();
    let mut path = std::env::var_os("PATH");
    if !missing.is_empty() && !no_install {
        let names: Vec<&str> = missing.iter().map(|(t, _, _)| *t).collect();
        eprintln!("xtask: {} not installed; installing what the tests need", names.join(", "));
        path = install(&missing);
        missing = missing_tools();
    }
    if !missing.is_empty() {
        explain(&missing);
        return Err("missing tools (see above)".into());
    }
    crate::machine::ensure_huge_pages("test", !no_install);
    let mut cmd = Command::new(cargo());
    cmd.current_dir(testkit::workspace_root()).args(["test", "--workspace"]).args(args);
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    eprintln!("xtask: {}", shown(&cmd));
    let status = cmd.status().map_err(|e| format!("cannot run {}: {e}", shown(&cmd)))?;
    Ok(status.code().unwrap_or(101))
}
