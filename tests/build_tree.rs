//! The build tree is linkable: after `cargo build --release`, `target/release` holds the
//! SONAME link `libregcheck.so.0.<minor>` (made by the build, not by the tests), and a C program
//! linked `-L target/release -lregcheck`, found at run time through `LD_LIBRARY_PATH` only,
//! starts.

use std::path::Path;
use std::process::Command;

use testkit::Run;

#[test]
fn a_program_linked_against_the_build_tree_starts() {
    let rc = testkit::regcheck(); // cargo build --release
    let major: u32 = env!("CARGO_PKG_VERSION_MAJOR").parse().unwrap();
    let minor = env!("CARGO_PKG_VERSION_MINOR");
    let soname = if major == 0 { format!("libregcheck.so.0.{minor}") } else { format!("libregcheck.so.{major}") };
    let link = rc.lib_dir.join(&soname);
    let meta = std::fs::symlink_metadata(&link).unwrap_or_else(|e| panic!("{} after the build: {e}", link.display()));
    assert!(meta.file_type().is_symlink(), "{} is a symlink", link.display());
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("libregcheck.so"));

    let exe = testkit::target_dir().join("build-tree-test");
    let cc = std::env::var_os("CC").filter(|v| !v.is_empty()).unwrap_or_else(|| "cc".into());
    let st = Command::new(cc)
        .arg("-I")
        .arg(testkit::workspace_root().join("include"))
        .arg(testkit::workspace_root().join("tests/c/build_tree.c"))
        .arg("-L")
        .arg(&rc.lib_dir)
        .arg("-lregcheck")
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("run cc");
    assert!(st.success(), "cc -L {} -lregcheck failed", rc.lib_dir.display());
    let needed = Command::new("objdump").arg("-p").arg(&exe).output().expect("objdump");
    let needed = String::from_utf8_lossy(&needed.stdout);
    assert!(needed.contains(&format!("NEEDED               {soname}")), "the program asks for {soname}:\n{needed}");

    let o = Run::new(&exe).env("LD_LIBRARY_PATH", &rc.lib_dir).env_remove("ACLSIM_TRACE").run();
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    assert!(o.stdout.contains(&format!("regcheck {}", env!("CARGO_PKG_VERSION"))), "{}", o.dump());
    let _ = std::fs::remove_file(&exe);
}
