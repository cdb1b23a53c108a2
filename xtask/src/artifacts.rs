//! Building what gets installed or demonstrated: regcheck in release mode, the audit module
//! when its package exists, and the simulator of the vendor libraries.

use std::path::PathBuf;
use std::process::Command;

use crate::util::{cargo, run_captured, run_visible, Result};

/// The outputs of [`build_release`].
#[derive(Clone, Debug)]
pub struct Built {
    /// `<target>/release/libregcheck.so`.
    pub shared: PathBuf,
    /// `<target>/release/libregcheck.a`.
    pub static_lib: PathBuf,
    /// `<target>/release/libregcheck_audit.so`, when the `regcheck-audit` package exists.
    pub audit: Option<PathBuf>,
    /// `<target>/release/regcheck-run`, the launcher (an alias of `regcheck run`).
    pub runner: PathBuf,
    /// `<target>/release/regcheck`, the command.
    pub cli: PathBuf,
    /// What `rustc --print native-static-libs` printed for the staticlib, e.g.
    /// `["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl", "-lc"]` (empty when not asked
    /// for).
    pub native_static_libs: Vec<String>,
    /// `<target>/sim/lib`: `libacl_rt.so`, `libascendcl.so`, `libcann_hixl.so`, `libllm_datadist.so`, `libascend_hal.so`, ...
    pub sim_lib_dir: PathBuf,
    /// The simulator's install roots of the other releases (`testkit::SIM_RELEASES` but the
    /// first): `("9.2.0", <target>/sim-9.2.0/lib)`, installed in `lib/regcheck/sim/<release>`.
    pub sim_release_dirs: Vec<(String, PathBuf)>,
}

/// Builds regcheck (release; and `regcheck-audit` when asked and that package exists), captures
/// the staticlib's native link libraries when asked, and builds the simulator.
///
/// The native libraries come from a `cargo rustc --crate-type staticlib -- --print
/// native-static-libs` of the same package: cargo fingerprints that unit apart from the normal
/// build (so neither invalidates the other) and replays the note when the unit is fresh.
pub fn build_release(with_audit: bool, with_native_libs: bool) -> Result<Built> {
    let root = testkit::workspace_root();
    let has_audit = with_audit && workspace_has_package("regcheck-audit")?;

    eprintln!("xtask: building regcheck (release)");
    let mut build = Command::new(cargo());
    build.current_dir(&root).args(["build", "--release", "-p", "regcheck"]);
    if has_audit {
        build.args(["-p", "regcheck-audit"]);
    }
    build.args(["-p", "regcheck-cli"]);
    if let Some(triple) = testkit::cross_target() {
        build.args(["--target", &triple]);
    }
    run_visible(&mut build)?;

    let native_static_libs = if with_native_libs { native_static_libs()? } else { Vec::new() };

    eprintln!("xtask: building the simulator of the vendor libraries");
    let sim_lib_dir = std::panic::catch_unwind(testkit::sim_lib_dir)
        .map_err(|_| "building the simulator failed (see the message above)".to_string())?;
    let mut sim_release_dirs = Vec::new();
    for release in &testkit::SIM_RELEASES[1..] {
        eprintln!("xtask: building the simulator as CANN {release}");
        let dir = std::panic::catch_unwind(|| testkit::sim_lib_dir_release(release))
            .map_err(|_| format!("building the {release} simulator failed (see the message above)"))?;
        sim_release_dirs.push((release.to_string(), dir));
    }

    let release = testkit::release_dir();
    let built = Built {
        shared: release.join("libregcheck.so"),
        static_lib: release.join("libregcheck.a"),
        audit: has_audit.then(|| release.join("libregcheck_audit.so")),
        runner: release.join("regcheck-run"),
        cli: release.join("regcheck"),
        native_static_libs,
        sim_lib_dir,
        sim_release_dirs,
    };
    for file in [&built.shared, &built.static_lib, &built.runner, &built.cli].into_iter().chain(built.audit.as_ref()) {
        if !file.is_file() {
            return Err(format!("the build did not produce {}", file.display()));
        }
    }
    Ok(built)
}

/// The staticlib's native libraries from `cargo rustc --crate-type staticlib -- --print
/// native-static-libs`.
fn native_static_libs() -> Result<Vec<String>> {
    let mut probe = Command::new(cargo());
    probe.current_dir(testkit::workspace_root()).args([
        "rustc",
        "--release",
        "-p",
        "regcheck",
        "--lib",
        "--crate-type",
        "staticlib",
        "--color",
        "never",
    ]);
    if let Some(triple) = testkit::cross_target() {
        probe.args(["--target", &triple]);
    }
    probe.args(["--", "--print", "native-static-libs"]);
    let out = run_captured(&mut probe)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    parse_native_static_libs(&stderr).ok_or_else(|| {
        format!("`cargo rustc ... --print native-static-libs` printed no native-static-libs note:\n{stderr}")
    })
}

/// The flags of rustc's `note: native-static-libs: -lgcc_s -lutil ...` line.
pub fn parse_native_static_libs(text: &str) -> Option<Vec<String>> {
    text.lines().find_map(|line| {
        let (_, flags) = line.split_once("native-static-libs:")?;
        Some(flags.split_whitespace().map(str::to_string).collect())
    })
}

/// Whether the workspace has a package called `name` (from `cargo metadata`).
pub fn workspace_has_package(name: &str) -> Result<bool> {
    let mut cmd = Command::new(cargo());
    cmd.current_dir(testkit::workspace_root()).args(["metadata", "--no-deps", "--format-version", "1"]);
    let out = run_captured(&mut cmd)?;
    Ok(String::from_utf8_lossy(&out.stdout).contains(&format!("\"name\":\"{name}\"")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_native_static_libs_note() {
        let text = "   Compiling regcheck v0.1.0\nnote: Link against the following native artifacts when \
                    linking against this static library. The order and any duplication can be \
                    significant on some platforms.\n\nnote: native-static-libs: -lstdc++ -lgcc_s -lutil -lc\n\n";
        assert_eq!(parse_native_static_libs(text).unwrap(), ["-lstdc++", "-lgcc_s", "-lutil", "-lc"]);
        assert_eq!(parse_native_static_libs("Finished\n"), None);
    }
}
