//! Where the guide is: `cargo xtask install` and the wheel put README.md and docs/*.md under
//! `share/doc/regcheck`, beside the `bin/` this command runs from. `explain` and `doctor` point
//! there.

use std::path::PathBuf;

/// The installed guide's directory, `<this program's dir>/../share/doc/regcheck`, when it holds
/// `rules.md` (an install or a wheel); `None` in a build tree.
pub fn doc_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?.join("../share/doc/regcheck");
    let dir = dir.canonicalize().ok()?;
    dir.join("docs/rules.md").is_file().then_some(dir)
}

/// Where to read about the rule `name`: its section of the installed rules.md (the heading's
/// anchor), or of the source tree's when nothing is installed.
pub fn rule_page(name: &str) -> String {
    let anchor = name.to_ascii_lowercase();
    match doc_dir() {
        Some(dir) => format!("{}#{anchor}", dir.join("docs/rules.md").display()),
        None => format!("docs/rules.md#{anchor} (in regcheck's source; installed under share/doc/regcheck)"),
    }
}

/// Where to read `page` (e.g. `usage.md`) of the guide, installed or in the source tree.
pub fn page(page: &str) -> String {
    match doc_dir() {
        Some(dir) => dir.join("docs").join(page).display().to_string(),
        None => format!("docs/{page} (in regcheck's source; installed under share/doc/regcheck)"),
    }
}
