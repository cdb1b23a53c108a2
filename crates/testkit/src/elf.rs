//! What the tests read of built ELF files.

use std::path::Path;
use std::process::Command;

/// The SONAME of a shared library (`objdump -p`, which reads any architecture's files).
///
/// # Panics
/// When objdump cannot run or the library has none.
pub fn soname(lib: &Path) -> String {
    let out = Command::new("objdump").arg("-p").arg(lib).output().expect("run objdump");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.trim().strip_prefix("SONAME"))
        .map(|n| n.trim().to_string())
        .unwrap_or_else(|| panic!("{} has no SONAME:\n{text}", lib.display()))
}
