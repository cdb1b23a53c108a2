//! Well-known paths of the workspace.

use std::path::PathBuf;

/// The workspace root: two levels above this crate's manifest directory (`crates/testkit`).
pub fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().and_then(|p| p.parent()).map(PathBuf::from).unwrap_or(manifest)
}

/// Cargo's target directory: `$CARGO_TARGET_DIR` (made absolute against the workspace root
/// when relative) or `<root>/target`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                workspace_root().join(dir)
            }
        }
        _ => workspace_root().join("target"),
    }
}

/// The simulator's header directory, `<root>/sim/include` (`acl/acl.h`, `hixl/hixl.h`, ...).
pub fn sim_include_dir() -> PathBuf {
    workspace_root().join("sim").join("include")
}

/// The simulator's Python package directory, `<root>/sim/python`: put it on `PYTHONPATH` to
/// `import llm_datadist` (its ctypes library, `libllm_datadist_py.so`, is in `sim_lib_dir()`,
/// found through `LD_LIBRARY_PATH` from the source tree; `cargo xtask install` puts the package
/// in `<prefix>/lib/regcheck/sim/python`, beside the library).
pub fn sim_python_dir() -> PathBuf {
    workspace_root().join("sim").join("python")
}

/// The simulator's source directory, `<root>/sim/src`.
pub(crate) fn sim_src_dir() -> PathBuf {
    workspace_root().join("sim").join("src")
}
