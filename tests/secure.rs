//! A set-user-ID program linked with regcheck, run by another user with a hostile
//! environment: regcheck loads none of the libraries the caller names (`REGCHECK_ACL_LIB`, a
//! vendor root under `HOME`, `ASCEND_HOME_PATH` or `ASCEND_INSTALL_PATH`), creates no log file
//! (`REGCHECK_LOG_FILE`), does not change its exit status (`REGCHECK_ERROR_EXITCODE`), keeps
//! checking with its defaults (`REGCHECK_MODE=off` and `REGCHECK_RULES=*=off` ignored), and
//! says once what it ignored. The same program without the set-user-ID bit, with each of those
//! variables, does load the library or create the file: the attack is real.
//!
//! Needs root (to give the program to another user and set its set-user-ID bit); without root
//! it fails, unless `REGCHECK_TEST_ALLOW_SKIP` names it. CI runs as root. What the other users
//! run (the program, libregcheck, the attacker's files) is laid out in a directory of its own
//! that every user can enter, outside the checkout: a checkout may sit under a directory only
//! its owner can enter (`mktemp -d`, many a home directory).

use std::ffi::CString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use testkit::{Outcome, Run};

/// The program's owner (the set-user-ID target) and the unprivileged caller.
const OWNER: &str = "daemon";
const CALLER: &str = "nobody";

fn uid_gid(user: &str) -> Option<(u32, u32)> {
    let name = CString::new(user).ok()?;
    // SAFETY: getpwnam returns NULL or a pointer to a static entry, read at once.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    (!pw.is_null()).then(|| unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
}

/// `user`, created with `useradd` when the system lacks it.
fn ensure_user(user: &str) -> (u32, u32) {
    if let Some(ids) = uid_gid(user) {
        return ids;
    }
    let st = Command::new("useradd")
        .args(["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user])
        .status()
        .expect("run useradd");
    assert!(st.success(), "useradd {user} failed");
    uid_gid(user).expect("the user exists after useradd")
}

/// What the other users run, in a directory of its own under the system's temporary directory
/// (0755; never under the checkout, which they may not reach), with `w/` (1777) where they
/// write. Removed at the end, with the set-user-ID program in it.
struct Layout {
    dir: PathBuf,
    writable: PathBuf,
}

impl Layout {
    fn new() -> Layout {
        let tmp = std::env::temp_dir();
        for up in tmp.ancestors() {
            let mode = fs::metadata(up).map(|m| m.permissions().mode()).unwrap_or(0);
            assert!(
                mode & 0o001 != 0,
                "{} is not open to every user (mode {mode:o}): give TMPDIR a directory they can all enter",
                up.display()
            );
        }
        let dir = tmp.join(format!("regcheck-secure-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        let writable = dir.join("w");
        fs::create_dir(&writable).unwrap();
        fs::set_permissions(&writable, fs::Permissions::from_mode(0o1777)).unwrap();
        Layout { dir, writable }
    }
}

impl Drop for Layout {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn cc() -> std::ffi::OsString {
    std::env::var_os("CC").filter(|v| !v.is_empty()).unwrap_or_else(|| "cc".into())
}

/// tests/c/secure_setuid.c linked with `-lregcheck`, into `dir` with a copy of libregcheck
/// found there (its run path is `dir` alone: a set-user-ID program ignores `LD_LIBRARY_PATH`).
fn build_program(dir: &Path) -> PathBuf {
    let lib = testkit::regcheck().shared;
    let name = testkit::soname(&lib);
    fs::copy(&lib, dir.join(&name)).unwrap();
    fs::set_permissions(dir.join(&name), fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(&name, dir.join("libregcheck.so")).unwrap();
    let out = dir.join("secure_setuid");
    let src = testkit::workspace_root().join("tests/c/secure_setuid.c");
    let st = Command::new(cc())
        .args(["-O1", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&out)
        .arg(&src)
        .arg("-L")
        .arg(dir)
        .arg("-lregcheck")
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .status()
        .expect("run cc");
    assert!(st.success(), "building {} failed", src.display());
    out
}

/// The attacker's library, built once into `dir`.
fn build_evil(dir: &Path) -> PathBuf {
    let out = dir.join("libevil.so");
    let src = testkit::workspace_root().join("tests/c/secure_evil.c");
    let st = Command::new(cc())
        .args(["-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&out)
        .arg(&src)
        .arg("-ldl")
        .status()
        .expect("run cc");
    assert!(st.success(), "building {} failed", src.display());
    out
}

/// A fake vendor install root `<root>/lib64/libacl_rt.so` holding the attacker's library.
fn fake_root(root: &Path, evil: &Path) {
    let lib64 = root.join("lib64");
    fs::create_dir_all(&lib64).unwrap();
    fs::copy(evil, lib64.join("libacl_rt.so")).unwrap();
}

fn chmod_tree(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    if path.is_dir() {
        for e in fs::read_dir(path).unwrap().flatten() {
            chmod_tree(&e.path(), if e.path().is_dir() { 0o755 } else { 0o644 });
        }
    }
}

fn rc(o: &Outcome, label: &str) -> Option<i64> {
    o.stdout.lines().find_map(|l| l.strip_prefix(&format!("rc {label} "))?.trim().parse().ok())
}

/// Runs `exe` as `CALLER` (real and effective ids), with `env` on top of a clean environment.
fn run_as_caller(exe: &Path, caller: (u32, u32), env: &[(&str, &Path)]) -> Outcome {
    let mut r = Run::new("setpriv")
        .args([format!("--reuid={}", caller.0), format!("--regid={}", caller.1), "--clear-groups".to_string()])
        .arg("--")
        .arg(exe)
        .env_remove("ACLSIM_TRACE");
    for (k, v) in env {
        r = r.env(k, v);
    }
    r.run()
}

#[test]
fn set_user_id_program_ignores_the_callers_paths_and_keeps_checking() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return testkit::unavailable(
            "set_user_id_program_ignores_the_callers_paths_and_keeps_checking",
            "it needs root (to give a program to another user and set its set-user-ID bit)",
        );
    }
    let owner = ensure_user(OWNER);
    let caller = ensure_user(CALLER);
    let layout = Layout::new();
    let d = &layout.dir;
    let w = &layout.writable;

    let built = build_program(d);
    let evil = build_evil(d);
    let home = d.join("home");
    fake_root(&home.join("Ascend/cann"), &evil);
    let ascend_home = d.join("ascend_home");
    fake_root(&ascend_home, &evil);
    let ascend_install = d.join("ascend_install");
    fake_root(&ascend_install, &evil);
    for dir in [&home, &ascend_home, &ascend_install] {
        chmod_tree(dir, 0o755);
    }
    fs::set_permissions(&evil, fs::Permissions::from_mode(0o755)).unwrap();
    let marker = w.join("marker");
    let log_file = w.join("regcheck.log");
    let nowhere = d.join("nowhere");

    // The same program twice: plain (the caller's own), and set-user-ID to OWNER.
    let plain = d.join("plain");
    fs::copy(&built, &plain).unwrap();
    fs::set_permissions(&plain, fs::Permissions::from_mode(0o755)).unwrap();
    let setuid = d.join("setuid");
    fs::copy(&built, &setuid).unwrap();
    let c = CString::new(setuid.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path; plain system calls.
    assert_eq!(unsafe { libc::chown(c.as_ptr(), owner.0, owner.1) }, 0, "chown");
    fs::set_permissions(&setuid, fs::Permissions::from_mode(0o4755)).unwrap();

    let reset = || {
        let _ = fs::remove_file(&marker);
        let _ = fs::remove_file(&log_file);
    };

    // Control: without the set-user-ID bit each variable takes effect.
    let lib_var = evil.clone();
    let cases: [(&str, &Path, &str); 4] = [
        ("REGCHECK_ACL_LIB", &lib_var, "libevil.so"),
        ("HOME", &home, "home/Ascend/cann/lib64/libacl_rt.so"),
        ("ASCEND_HOME_PATH", &ascend_home, "ascend_home/lib64/libacl_rt.so"),
        ("ASCEND_INSTALL_PATH", &ascend_install, "ascend_install/lib64/libacl_rt.so"),
    ];
    for (var, value, loaded) in cases {
        reset();
        let mut env: Vec<(&str, &Path)> =
            vec![("EVIL_MARKER", &marker), ("HOME", &nowhere), ("REGCHECK_LOG_FILE", &log_file)];
        env.retain(|(k, _)| *k != var);
        env.push((var, value));
        let o = run_as_caller(&plain, caller, &env);
        assert_eq!(o.code(), Some(0), "{var}: {}", o.dump());
        assert!(o.stdout.contains("secure 0 "), "{}", o.dump());
        let marks = fs::read_to_string(&marker).unwrap_or_default();
        assert!(marks.contains(loaded), "without set-user-ID, {var} loads {loaded}: {marks:?}\n{}", o.dump());
        assert_eq!(rc(&o, "good"), Some(4242), "the loaded library was called: {}", o.dump());
        // Opened once and kept, though it lacks the other functions regcheck looks up.
        assert_eq!(marks.lines().count(), 1, "initialised once: {marks:?}");
        assert!(log_file.exists(), "without set-user-ID, REGCHECK_LOG_FILE is created");
    }

    // The attack: every variable at once, and settings that would weaken the checks.
    reset();
    let off = PathBuf::from("off");
    let all_off = PathBuf::from("*=off");
    let three = PathBuf::from("3");
    let env: Vec<(&str, &Path)> = vec![
        ("EVIL_MARKER", &marker),
        ("REGCHECK_ACL_LIB", &evil),
        ("REGCHECK_HIXL_LIB", &evil),
        ("HOME", &home),
        ("ASCEND_HOME_PATH", &ascend_home),
        ("ASCEND_INSTALL_PATH", &ascend_install),
        ("REGCHECK_LOG_FILE", &log_file),
        ("REGCHECK_MODE", &off),
        ("REGCHECK_RULES", &all_off),
        ("REGCHECK_ERROR_EXITCODE", &three),
    ];
    let o = run_as_caller(&setuid, caller, &env);
    let ctx = o.dump();
    assert!(
        o.stdout.contains(&format!("secure 1 uid {} euid {}", caller.0, owner.0)),
        "the program runs set-user-ID: {ctx}"
    );
    assert!(!marker.exists(), "no library of the caller's was loaded: {:?}\n{ctx}", fs::read_to_string(&marker));
    assert!(!log_file.exists(), "REGCHECK_LOG_FILE was not created: {ctx}");
    assert_eq!(o.code(), Some(0), "REGCHECK_ERROR_EXITCODE is ignored: {ctx}");
    assert_eq!(rc(&o, "null"), Some(100000), "checks still run (REGCHECK_MODE=off ignored): {ctx}");
    assert!(o.stderr.contains("[ACL-HOSTREG-NULL]"), "{ctx}");
    assert_eq!(rc(&o, "good"), Some(200001), "no vendor in the fixed roots: {ctx}");
    let warnings: Vec<&str> = o.stderr.lines().filter(|l| l.contains("secure-execution mode")).collect();
    assert_eq!(warnings.len(), 1, "said once: {ctx}");
    for var in [
        "REGCHECK_ACL_LIB",
        "REGCHECK_HIXL_LIB",
        "REGCHECK_LOG_FILE",
        "REGCHECK_MODE",
        "REGCHECK_RULES",
        "REGCHECK_ERROR_EXITCODE",
        "ASCEND_HOME_PATH",
        "ASCEND_INSTALL_PATH",
    ] {
        assert!(warnings[0].contains(var), "the warning names {var}: {ctx}");
    }

    // regcheck-run says that LD_PRELOAD cannot reach a set-user-ID program.
    let runner = testkit::regcheck().runner;
    if runner.exists() {
        let o = Run::new(&runner).arg(&setuid).env_remove("ACLSIM_TRACE").run();
        assert!(o.stderr.contains("is set-user-ID or set-group-ID"), "{}", o.dump());
    }
}
