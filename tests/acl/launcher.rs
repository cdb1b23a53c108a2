//! `regcheck-run`: a program started under regcheck, and each of the launcher's options.

use crate::{codes, scenarios};
use testkit::{Link, Program, Run};

#[test]
fn the_launcher_runs_a_program_under_regcheck() {
    let rc = testkit::regcheck();
    let bare = scenarios().bare_exe(); // regcheck comes from the launcher
    let o = Run::new(&rc.runner).args(["--report", "--error-exitcode", "3"]).arg(bare).arg("align").run();
    assert_eq!(o.code(), Some(3), "{}", o.dump());
    assert_eq!(codes(&o), vec![("register".to_string(), 507899)], "report mode forwards: {}", o.dump());
    assert!(o.stderr.contains("[ACL-HOSTREG-ALIGN]"), "{}", o.dump());
    let o = Run::new(&rc.runner).arg(bare).arg("align").run();
    assert_eq!(codes(&o), vec![("register".to_string(), 100000)], "{}", o.dump());
    let o = Run::new(&rc.runner).arg("--frobnicate").arg(bare).run();
    assert_eq!(o.code(), Some(127), "{}", o.dump());
    assert!(o.stderr.contains("unknown option --frobnicate"), "{}", o.dump());
}

/// Each of `regcheck-run`'s options, end to end: the program it starts behaves as the
/// option says.
#[test]
fn every_launcher_option_end_to_end() {
    let rc = testkit::regcheck();
    let bare = scenarios().bare_exe();
    let launch = |args: &[&str], scenario: &str| Run::new(&rc.runner).args(args).arg(bare).arg(scenario).run();

    // --off: pass-through; --rules: the rule switched off; both forward the misaligned call
    for args in [&["--off"][..], &["--rules", "ACL-HOSTREG-ALIGN=off"], &["--rules", "ACL-HOSTREG-*=warn"]] {
        let o = launch(args, "align");
        assert_eq!(o.code(), Some(0), "{args:?}: {}", o.dump());
        assert_eq!(codes(&o), vec![("register".to_string(), 507899)], "{args:?}: {}", o.dump());
        assert_eq!(o.stderr.contains("[ACL-HOSTREG-ALIGN]"), args[1..].iter().any(|a| a.ends_with("warn")), "{args:?}");
    }
    // --summary
    let o = launch(&["--summary"], "align");
    assert!(o.stderr.contains("regcheck: summary: 1 error from 1 call site;"), "{}", o.dump());
    // --log
    let o = launch(&["--log", "info"], "good");
    assert!(
        o.stderr.contains("regcheck: info: regcheck ") && o.stderr.contains(" active: mode=enforce"),
        "{}",
        o.dump()
    );
    let o = launch(&["--log", "error"], "size_pages"); // a warning, filtered out
    assert!(!o.stderr.contains("regcheck: "), "{}", o.dump());
    // --log-file
    let log = testkit::target_dir().join("launcher-log-file.txt");
    let _ = std::fs::remove_file(&log);
    let o = launch(&["--log-file", &log.to_string_lossy()], "align");
    assert_eq!(codes(&o), vec![("register".to_string(), 100000)], "{}", o.dump());
    assert!(!o.stderr.contains("[ACL-HOSTREG-ALIGN]"), "{}", o.dump());
    let written = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(written.contains("[ACL-HOSTREG-ALIGN]"), "log file: {written:?}");
    // --lib-dir: a copy of the library elsewhere; an empty directory is an error
    let dir = testkit::target_dir().join("launcher-lib-dir");
    let empty = testkit::target_dir().join("launcher-empty-dir");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::copy(&rc.shared, dir.join("libregcheck.so")).unwrap();
    let o = Run::new(&rc.runner).args(["--lib-dir", &dir.to_string_lossy(), "--print-env"]).run();
    let canonical = dir.canonicalize().unwrap();
    assert!(o.stdout.contains(&format!("LD_PRELOAD={}/libregcheck.so", canonical.display())), "{}", o.dump());
    let o = launch(&["--lib-dir", &dir.to_string_lossy()], "align");
    assert_eq!(codes(&o), vec![("register".to_string(), 100000)], "{}", o.dump());
    let o = launch(&["--lib-dir", &empty.to_string_lossy()], "align");
    assert_eq!(o.code(), Some(127), "{}", o.dump());
    assert!(o.stderr.contains("libregcheck.so does not exist") && codes(&o).is_empty(), "{}", o.dump());
    // a dlsym caller is checked, with or without --audit (regcheck's own dlsym, issue 32)
    let dlsym = Program::c("audit_dlsym", &["tests/c/audit_dlsym.c"]).link(Link::Bare).libs(&[]).flag("-ldl").build();
    for (args, checked) in [(&["--audit"][..], true), (&[][..], true)] {
        let o = Run::new(&rc.runner)
            .args(args)
            .arg(&dlsym)
            .arg("libascendcl.so")
            .env("LD_LIBRARY_PATH", testkit::sim_lib_dir())
            .run();
        assert_eq!(o.code(), Some(0), "{args:?}: {}", o.dump());
        assert_eq!(o.stdout.contains("bad.align=100000"), checked, "{args:?}: {}", o.dump());
    }
    // --print-env with the mode options, --, --version, --help, the exit status passed through
    let o = Run::new(&rc.runner).args(["--report", "--summary", "--error-exitcode", "7", "--print-env"]).run();
    for line in ["REGCHECK_MODE=report", "REGCHECK_SUMMARY=1", "REGCHECK_ERROR_EXITCODE=7"] {
        assert!(o.stdout.lines().any(|l| l == line), "{line}: {}", o.dump());
    }
    let o = Run::new(&rc.runner).args(["--error-exitcode", "7", "--"]).arg(bare).arg("align").run();
    assert_eq!(o.code(), Some(7), "{}", o.dump());
    let o = Run::new(&rc.runner).arg("--version").run();
    assert!(o.status.success() && o.stdout.contains(env!("CARGO_PKG_VERSION")), "{}", o.dump());
    let o = Run::new(&rc.runner).arg("--help").run();
    assert!(o.status.success() && o.stdout.contains("Usage: regcheck-run"), "{}", o.dump());
}
