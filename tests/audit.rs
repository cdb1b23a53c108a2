//! `LD_AUDIT=libregcheck_audit.so`: callers that look the vendor functions up themselves
//! (`dlopen` + `dlsym`, Python `ctypes`) get the same checks as linked callers.
//!
//! Each program prints `key=value` lines (see `tests/c/audit_dlsym.c`,
//! `tests/py/audit_ctypes.py`): where each looked-up function lives, then each call's code.

use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use testkit::{Link, Outcome, Program, Run};

const ACL_ERROR_INVALID_PARAM: i64 = 100_000;
const NOTICE: &str = "regcheck-audit: no libregcheck.so in the application's namespace; nothing redirected";
const BAD_RULES: [&str; 3] = ["ACL-HOSTREG-NULL", "ACL-HOSTREG-ALIGN", "ACL-HOSTREG-SIZE-ZERO"];

fn src(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// `<target>/release/libregcheck_audit.so`, built by `testkit::regcheck()` with regcheck.
fn audit_lib() -> PathBuf {
    let lib = testkit::regcheck().lib_dir.join("libregcheck_audit.so");
    assert!(lib.exists(), "{} was not built", lib.display());
    lib
}

fn dlsym_program() -> PathBuf {
    Program::c("audit_dlsym", &[src("tests/c/audit_dlsym.c")]).link(Link::Bare).libs(&[]).flag("-ldl").build()
}

fn mixed_program() -> PathBuf {
    Program::c("audit_mixed", &[src("tests/c/audit_mixed.c")])
        .link(Link::Bare)
        .libs(&[testkit::libs::ASCENDCL])
        .flag("-ldl")
        .build()
}

/// How a program is run: with or without each of the two variables.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// `LD_AUDIT` + `LD_PRELOAD`: the documented set-up.
    Both,
    /// `LD_PRELOAD` only: regcheck's own `dlsym` answers look-ups by name.
    PreloadOnly,
    /// `LD_AUDIT` only: nothing to redirect to.
    AuditOnly,
}

fn run(exe: impl AsRef<Path>, args: &[&str], mode: Mode, extra_env: &[(&str, &str)]) -> Outcome {
    let rc = testkit::regcheck();
    let mut r = Run::new(exe.as_ref());
    for a in args {
        r = r.arg(a);
    }
    r = r.env("LD_LIBRARY_PATH", testkit::sim_lib_dir());
    if mode != Mode::PreloadOnly {
        r = r.env("LD_AUDIT", audit_lib());
    }
    if mode != Mode::AuditOnly {
        r = r.preload(&rc.shared);
    }
    for (k, v) in extra_env {
        r = r.env(k, v);
    }
    r.run()
}

fn python(script: &str, args: &[&str], mode: Mode, extra_env: &[(&str, &str)]) -> Outcome {
    let mut all = vec![src(script).to_string_lossy().into_owned()];
    all.extend(args.iter().map(|s| s.to_string()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    run(python3(), &all, mode, extra_env)
}

/// The real interpreter (not a version manager's shell shim, which would run several
/// processes under the variables).
fn python3() -> PathBuf {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is needed for the ctypes tests");
    assert!(out.status.success());
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

fn values(out: &Outcome) -> HashMap<String, String> {
    let stdout = out.stdout.clone();
    stdout.lines().filter_map(|l| l.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn stderr(out: &Outcome) -> String {
    out.stderr.clone()
}

fn code(v: &HashMap<String, String>, key: &str, out: &Outcome) -> i64 {
    v.get(key).unwrap_or_else(|| panic!("no `{key}=` in the output\n{}", describe(out))).parse().unwrap()
}

/// `libregcheck.so`, or its SONAME when the program was linked with `-lregcheck`.
fn is_regcheck(file: &str) -> bool {
    file.starts_with("libregcheck.so")
}

fn describe(out: &Outcome) -> String {
    format!("status: {:?}\n--- stdout\n{}--- stderr\n{}", out.status, out.stdout, out.stderr)
}

fn assert_ok(out: &Outcome) {
    assert!(out.status.success(), "program failed\n{}", describe(out));
}

/// Under both variables: bad calls rejected by regcheck with the rule's code and ID, never
/// reaching the simulator; the good call reaches it once; aclrtGetDevice is not redirected.
fn assert_checked(out: &Outcome, vendor_lib: &str) {
    assert_ok(out);
    let v = values(out);
    let err = stderr(out);
    assert!(is_regcheck(&v["where.aclrtHostRegisterV2"]), "{}", describe(out));
    assert!(is_regcheck(&v["where.aclrtHostUnregister"]), "{}", describe(out));
    assert_eq!(v["where.aclrtGetDevice"], vendor_lib, "not interposed, so not redirected");
    assert_eq!(code(&v, "get_device", out), 0);
    assert_eq!(code(&v, "bad.null", out), ACL_ERROR_INVALID_PARAM);
    assert_eq!(code(&v, "bad.align", out), ACL_ERROR_INVALID_PARAM);
    assert_eq!(code(&v, "bad.size0", out), ACL_ERROR_INVALID_PARAM);
    for rule in BAD_RULES {
        assert!(err.contains(rule), "no {rule} in stderr\n{}", describe(out));
    }
    assert_eq!(code(&v, "good.register", out), 0, "{}", describe(out));
    assert_eq!(code(&v, "good.unregister", out), 0, "{}", describe(out));
    assert_eq!(out.sim_calls("aclrtHostRegisterV2"), 1, "only the good call is forwarded\n{}", describe(out));
    assert_eq!(out.sim_calls("aclrtHostUnregister"), 1, "{}", describe(out));
    assert!(!err.contains(NOTICE));
}

#[test]
fn dlsym_calls_are_checked_under_ld_audit() {
    let out = run(dlsym_program(), &["libascendcl.so"], Mode::Both, &[]);
    assert_checked(&out, "libascendcl.so");
}

/// regcheck's own `dlsym` answers the look-up: no `LD_AUDIT` needed (issue 32).
#[test]
fn dlsym_calls_are_checked_under_ld_preload_alone() {
    let out = run(dlsym_program(), &["libascendcl.so"], Mode::PreloadOnly, &[]);
    assert_checked(&out, "libascendcl.so");
}

#[test]
fn ctypes_calls_are_checked_under_ld_audit() {
    let out = python("tests/py/audit_ctypes.py", &["libascendcl.so"], Mode::Both, &[]);
    assert_checked(&out, "libascendcl.so");
}

#[test]
fn ctypes_calls_are_checked_under_ld_preload_alone() {
    let out = python("tests/py/audit_ctypes.py", &["libascendcl.so"], Mode::PreloadOnly, &[]);
    assert_checked(&out, "libascendcl.so");
}

#[test]
fn ctypes_on_the_current_library_name_is_checked() {
    let out = python("tests/py/audit_ctypes.py", &["libacl_rt.so"], Mode::Both, &[]);
    assert_checked(&out, "libacl_rt.so");
}

#[test]
fn both_vendor_names_loaded_share_one_registry() {
    // Registered through libascendcl.so's handle, released through libacl_rt.so's.
    let out = run(dlsym_program(), &["libascendcl.so", "libacl_rt.so"], Mode::Both, &[]);
    assert_checked(&out, "libascendcl.so");
    let v = values(&out);
    assert_eq!(v["where.aclrtHostUnregister"], "libregcheck.so");
}

#[test]
fn linked_and_dlsym_calls_share_one_registry() {
    for lib in ["libascendcl.so", "libacl_rt.so"] {
        let out = run(mixed_program(), &[lib], Mode::Both, &[]);
        assert_ok(&out);
        let v = values(&out);
        assert_eq!(code(&v, "linked.register", &out), 0, "{}", describe(&out));
        assert_eq!(code(&v, "dlsym.unregister", &out), 0, "{}", describe(&out));
        assert_ne!(code(&v, "dlsym.unregister_again", &out), 0, "{}", describe(&out));
        assert_eq!(code(&v, "dlsym.register", &out), 0, "{}", describe(&out));
        assert_eq!(code(&v, "linked.unregister", &out), 0, "{}", describe(&out));
        assert_ne!(code(&v, "linked.unregister_again", &out), 0, "{}", describe(&out));
        let err = stderr(&out);
        assert!(
            err.matches("ACL-HOSTUNREG-NOT-REGISTERED").count() >= 2,
            "each second unregister is caught by regcheck\n{}",
            describe(&out)
        );
        assert_eq!(out.sim_calls("aclrtHostRegisterV2"), 2, "{}", describe(&out));
        assert_eq!(out.sim_calls("aclrtHostUnregister"), 2, "{}", describe(&out));
    }
}

#[test]
fn without_regcheck_the_module_says_so_once_and_changes_nothing() {
    let out = run(dlsym_program(), &["libascendcl.so", "libacl_rt.so"], Mode::AuditOnly, &[]);
    assert_ok(&out);
    assert_eq!(stderr(&out).matches(NOTICE).count(), 1, "{}", describe(&out));
    let v = values(&out);
    assert_eq!(v["where.aclrtHostRegisterV2"], "libascendcl.so");
    assert_eq!(out.sim_calls("aclrtHostRegisterV2"), 4);

    let out = python("tests/py/audit_ctypes.py", &["libascendcl.so"], Mode::AuditOnly, &[]);
    assert_ok(&out);
    assert_eq!(stderr(&out).matches(NOTICE).count(), 1, "{}", describe(&out));
    assert_eq!(out.sim_calls("aclrtHostRegisterV2"), 4);
}

#[test]
fn a_program_that_never_loads_the_vendor_is_left_alone() {
    let exe = Program::c("audit_novendor", &[src("tests/c/audit_novendor.c")])
        .link(Link::Bare)
        .libs(&[])
        .flag("-ldl")
        .build();
    for mode in [Mode::Both, Mode::AuditOnly] {
        let out = run(&exe, &[], mode, &[("REGCHECK_AUDIT_LOG", "1")]);
        assert_ok(&out);
        assert_eq!(values(&out)["cos0"], "1");
        let err = stderr(&out);
        assert!(!err.contains("regcheck-audit: redirect "), "{}", describe(&out));
        assert!(!err.contains(NOTICE), "{}", describe(&out));
    }
}

#[test]
fn log_variable_reports_each_redirection() {
    let out = run(dlsym_program(), &["libascendcl.so"], Mode::Both, &[("REGCHECK_AUDIT_LOG", "1")]);
    assert_ok(&out);
    let err = stderr(&out);
    assert!(err.contains("regcheck-audit: redirection target "), "{}", describe(&out));
    assert!(
        err.contains("regcheck-audit: redirect aclrtHostRegisterV2 (dlsym) from (main program): libascendcl.so -> libregcheck.so"),
        "{}",
        describe(&out)
    );
    assert!(!err.contains("redirect aclrtGetDevice"), "{}", describe(&out));
    assert!(!err.contains("redirect aclInit"), "{}", describe(&out));

    let out = run(dlsym_program(), &["libascendcl.so"], Mode::Both, &[]);
    assert!(!stderr(&out).contains("regcheck-audit:"), "silent by default\n{}", describe(&out));
}

/// `REGCHECK_LOG` filters the module's lines as it filters the library's (target `regcheck`):
/// a filter that silences regcheck's warnings silences the module too; one that lets them
/// through, or names only regcheck's targets, keeps them.
#[test]
fn the_log_filter_silences_the_modules_lines_too() {
    for (filter, notice) in [
        ("off", false),
        ("regcheck=error", false),
        ("other=debug", false),
        ("warn", true),
        ("info,regcheck=warn", true),
    ] {
        let out = run(dlsym_program(), &["libascendcl.so"], Mode::AuditOnly, &[("REGCHECK_LOG", filter)]);
        assert_ok(&out);
        assert_eq!(stderr(&out).contains(NOTICE), notice, "REGCHECK_LOG={filter}\n{}", describe(&out));
    }
    let out =
        run(dlsym_program(), &["libascendcl.so"], Mode::Both, &[("REGCHECK_AUDIT_LOG", "1"), ("REGCHECK_LOG", "off")]);
    assert_ok(&out);
    assert!(!stderr(&out).contains("regcheck-audit:"), "REGCHECK_LOG=off\n{}", describe(&out));
}

#[test]
fn module_exports_only_the_audit_interface() {
    let out = std::process::Command::new("nm")
        .args(["-D", "--defined-only", "--format=posix"])
        .arg(audit_lib())
        .output()
        .expect("nm");
    assert!(out.status.success());
    let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    for want in ["la_version", "la_objopen", "la_objclose", "la_symbind64"] {
        assert!(names.iter().any(|n| n == want), "{want} missing from {names:?}");
    }
    for n in &names {
        assert!(n.starts_with("la_"), "unexpected export {n}");
    }
}

/// The plugin (a shared library linked against the vendor) and its driver.
fn deepbind_programs() -> (PathBuf, String) {
    let plugin = Program::c("libaudit_plugin.so", &[src("tests/c/audit_plugin.c")])
        .link(Link::Bare)
        .libs(&[testkit::libs::ASCENDCL])
        .flag("-shared")
        .flag("-fPIC")
        .build();
    let exe = Program::c("audit_deepbind", &[src("tests/c/audit_deepbind.c")])
        .link(Link::Bare)
        .libs(&[])
        .flag("-ldl")
        .build();
    (exe, plugin.to_string_lossy().into_owned())
}

#[test]
fn plt_bindings_that_skip_the_global_scope_are_redirected_lazy_and_bind_now() {
    let (exe, plugin) = deepbind_programs();

    // RTLD_DEEPBIND: the plugin's PLT binds to the vendor library ahead of LD_PRELOAD, unless
    // regcheck's own dlopen points its bindings back (issue 32; seen failing before: 3 calls
    // reached the simulator unchecked under LD_PRELOAD alone), or the audit module does.
    for (mode, bind) in
        [(Mode::PreloadOnly, "lazy"), (Mode::PreloadOnly, "now"), (Mode::Both, "lazy"), (Mode::Both, "now")]
    {
        let out = run(&exe, &[&plugin, bind], mode, &[("REGCHECK_AUDIT_LOG", "1")]);
        assert_ok(&out);
        let v = values(&out);
        assert_eq!(code(&v, "init", &out), 0, "{}", describe(&out));
        assert_eq!(code(&v, "bad.null", &out), ACL_ERROR_INVALID_PARAM);
        assert_eq!(code(&v, "bad.size0", &out), ACL_ERROR_INVALID_PARAM);
        assert_eq!(code(&v, "good.register", &out), 0, "{}", describe(&out));
        assert_eq!(code(&v, "good.unregister", &out), 0, "{}", describe(&out));
        assert_ne!(code(&v, "bad.unregister_again", &out), 0);
        for rule in ["ACL-HOSTREG-NULL", "ACL-HOSTREG-SIZE-ZERO", "ACL-HOSTUNREG-NOT-REGISTERED"] {
            assert!(out.stderr.contains(rule), "{bind}: no {rule}\n{}", describe(&out));
        }
        assert_eq!(out.sim_calls("aclrtHostRegisterV2"), 1, "{bind}\n{}", describe(&out));
        assert_eq!(out.sim_calls("aclrtHostUnregister"), 1, "{bind}\n{}", describe(&out));
        assert!(!out.stderr.contains("RTLD_DEEPBIND"), "{bind}\n{}", describe(&out));
        if mode == Mode::PreloadOnly {
            continue;
        }
        assert!(
            out.stderr.contains(
                "regcheck-audit: redirect aclrtHostRegisterV2 (plt) from libaudit_plugin.so: libascendcl.so -> libregcheck.so"
            ),
            "{bind}\n{}",
            describe(&out)
        );
        // aclInit is not interposed: the plugin keeps the vendor's.
        assert!(!out.stderr.contains("redirect aclInit"), "{}", describe(&out));
    }
}

#[test]
fn regcheck_linked_into_the_program_is_found_without_ld_preload() {
    let exe = Program::c("audit_dlsym_linked", &[src("tests/c/audit_dlsym.c")])
        .link(Link::RegcheckShared)
        .libs(&[])
        .flag("-ldl")
        .build();
    let out = run(exe, &["libascendcl.so"], Mode::AuditOnly, &[]);
    assert_checked(&out, "libascendcl.so");
}

/// The HIXL exports are redirected like the ACL ones: a C adapter that `dlsym`s
/// `HixlCSClientRegMem` from `libcann_hixl.so` gets the HIXL rules.
#[test]
fn hixl_cs_functions_looked_up_with_dlsym_are_checked() {
    let exe =
        Program::c("audit_hixl_cs", &[src("tests/c/audit_hixl_cs.c")]).link(Link::Bare).libs(&[]).flag("-ldl").build();
    // With LD_AUDIT, and (regcheck's own dlsym) without.
    for mode in [Mode::Both, Mode::PreloadOnly] {
        let o = run(&exe, &[], mode, &[]);
        assert_eq!(o.code(), Some(0), "{}", o.dump());
        assert!(o.stdout.contains("lib=") && o.stdout.contains("libregcheck.so"), "redirected: {}", o.dump());
        assert!(o.stdout.contains("null_addr=103900"), "{}", o.dump());
        assert!(o.stderr.contains("[HIXL-REG-NULL-ADDR]"), "{}", o.dump());
        assert_eq!(o.sim_calls("HixlCSClientRegMem"), 0, "{}", o.dump());
    }
}

/// A vendor library group of two test-only libraries (no simulator): `libacl_rt.so` forwards
/// aclrtHostRegisterV2 and aclrtHostUnregister to the same names in `libacl_rt_impl.so`
/// (dlsym on its handle). Under both variables, the program's dlsym bindings go to regcheck
/// and each call is checked once; the front's binding into its own group is left alone, so
/// regcheck's forward reaches the implementation once, not regcheck again.
#[test]
fn bindings_inside_one_vendor_group_are_left_alone() {
    let impl_ = Program::c("audit_group_impl.so", &[src("tests/c/audit_group_impl.c")])
        .link(Link::Bare)
        .libs(&[])
        .flag("-shared")
        .flag("-fPIC")
        .flag("-Wl,-soname,libacl_rt_impl.so")
        .build();
    let dir = testkit::target_dir().join("audit-group");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&impl_, dir.join("libacl_rt_impl.so")).unwrap();
    let front = Program::c("audit_group_front.so", &[src("tests/c/audit_group_front.c")])
        .link(Link::Bare)
        .libs(&[])
        .flag("-shared")
        .flag("-fPIC")
        .flag("-Wl,-soname,libacl_rt.so")
        .flag(&format!("-L{}", dir.display()))
        .flag("-l:libacl_rt_impl.so")
        .flag("-ldl")
        .flag("-Wl,-rpath,$ORIGIN")
        .build();
    std::fs::copy(&front, dir.join("libacl_rt.so")).unwrap();

    let rc = testkit::regcheck();
    let out = Run::new(dlsym_program())
        .arg("libacl_rt.so")
        .env("LD_LIBRARY_PATH", &dir)
        .env("LD_AUDIT", audit_lib())
        .env("REGCHECK_AUDIT_LOG", "1")
        .preload(&rc.shared)
        .run();
    assert_ok(&out);
    let v = values(&out);
    assert!(is_regcheck(&v["where.aclrtHostRegisterV2"]), "the program's dlsym is redirected: {}", describe(&out));
    assert_eq!(code(&v, "bad.align", &out), ACL_ERROR_INVALID_PARAM);
    assert_eq!(code(&v, "good.register", &out), 0, "{}", describe(&out));
    assert_eq!(code(&v, "good.unregister", &out), 0, "{}", describe(&out));
    // each good call: through the front, into the implementation, once
    for name in ["aclrtHostRegisterV2", "aclrtHostUnregister"] {
        assert_eq!(out.stderr.matches(&format!("[group] front {name}\n")).count(), 1, "{name}: {}", describe(&out));
        assert_eq!(out.stderr.matches(&format!("[group] impl {name}(")).count(), 1, "{name}: {}", describe(&out));
    }
    assert!(!out.stderr.contains("from libacl_rt.so:"), "a binding of the front was redirected: {}", describe(&out));
    assert!(out.stderr.contains("[ACL-HOSTREG-ALIGN]"), "{}", describe(&out));
    assert_eq!(out.stderr.matches("[ACL-HOSTREG-").count(), 3, "bad calls checked once each: {}", describe(&out));
}

fn namespaces_program() -> PathBuf {
    Program::c("audit_namespaces", &[src("tests/c/audit_namespaces.c")]).link(Link::Bare).libs(&[]).flag("-ldl").build()
}

/// `dlmopen` namespaces are left alone: a vendor library opened in a new namespace keeps its
/// own functions (its calls are not checked), while the application's namespace is redirected
/// as usual; a `libregcheck.so` loaded in another namespace is no redirection target.
#[test]
fn dlmopen_namespaces_are_left_alone() {
    let exe = namespaces_program();
    let out = run(&exe, &["dlmopen"], Mode::Both, &[("REGCHECK_AUDIT_LOG", "1")]);
    assert_ok(&out);
    let v = values(&out);
    assert_eq!(v.get("newlm.where").map(String::as_str), Some("libascendcl.so"), "{}", describe(&out));
    assert_eq!(code(&v, "newlm.misaligned", &out), 507899, "the simulator's answer, unchecked: {}", describe(&out));
    assert_eq!(code(&v, "newlm.register", &out), 0, "{}", describe(&out));
    assert!(is_regcheck(&v["base.where"]), "{}", describe(&out));
    assert_eq!(code(&v, "base.misaligned", &out), ACL_ERROR_INVALID_PARAM, "{}", describe(&out));
    assert_eq!(code(&v, "base.register", &out), 0, "{}", describe(&out));
    assert_eq!(code(&v, "base.unregister", &out), 0, "{}", describe(&out));
    assert_eq!(out.stderr.matches("[ACL-HOSTREG-ALIGN]").count(), 1, "only the base call: {}", describe(&out));

    let rc = testkit::regcheck();
    let out = run(&exe, &["foreign_regcheck", &rc.shared.to_string_lossy()], Mode::AuditOnly, &[]);
    assert_ok(&out);
    let v = values(&out);
    assert_eq!(v.get("base.where").map(String::as_str), Some("libascendcl.so"), "{}", describe(&out));
    assert_eq!(code(&v, "base.misaligned", &out), 507899, "{}", describe(&out));
    assert!(out.stderr.contains(NOTICE), "{}", describe(&out));
}

/// `la_objclose`: once the `libregcheck.so` that bindings were redirected to is unloaded, new
/// look-ups are no longer redirected (they would point into unmapped memory) and work.
#[test]
fn an_unloaded_regcheck_is_no_longer_a_target() {
    let rc = testkit::regcheck();
    let out = run(namespaces_program(), &["objclose", &rc.shared.to_string_lossy()], Mode::AuditOnly, &[]);
    assert_ok(&out);
    let v = values(&out);
    assert!(is_regcheck(&v["before.where"]), "redirected while loaded: {}", describe(&out));
    assert_eq!(v.get("unloaded").map(String::as_str), Some("1"), "dlclose unloads libregcheck.so: {}", describe(&out));
    assert_eq!(v.get("after.where").map(String::as_str), Some("libascendcl.so"), "{}", describe(&out));
    assert_eq!(code(&v, "after.misaligned", &out), 507899, "{}", describe(&out));
    assert_eq!(code(&v, "after.register", &out), 0, "{}", describe(&out));
}

/// The lines regcheck wrote: `text` without the simulator's trace (`[aclsim] ...`).
fn log_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.is_empty() && !l.starts_with("[aclsim] ")).collect()
}

/// `2026-11-30T21:48:30.875Z`: RFC 3339, UTC, milliseconds.
fn is_rfc3339_millis(t: &str) -> bool {
    let pattern = b"dddd-dd-ddTdd:dd:dd.dddZ";
    t.len() == pattern.len()
        && t.bytes().zip(pattern).all(|(c, &p)| if p == b'd' { c.is_ascii_digit() } else { c == p })
}

/// Asserts that `v` has the fields docs/json.md gives every object and those of its `type`.
fn assert_documented(v: &Value, line: &str) {
    let str_of = |key: &str| v[key].as_str().unwrap_or_else(|| panic!("`{key}` is not a string: {line}"));
    assert_eq!(v["schema"], 1, "{line}");
    assert!(matches!(str_of("component"), "regcheck" | "regcheck-audit"), "{line}");
    assert!(is_rfc3339_millis(str_of("time")), "{line}");
    assert!(v["pid"].is_u64(), "{line}");
    match str_of("type") {
        "message" => {
            assert!(v["tid"].is_u64(), "{line}");
            assert!(matches!(str_of("level"), "error" | "warning" | "info" | "debug" | "trace"), "{line}");
            str_of("message");
        }
        "finding" => {
            assert_eq!(str_of("component"), "regcheck", "{line}");
            assert!(v["tid"].is_u64(), "{line}");
            for key in ["rule", "action", "outcome", "argument", "problem", "fix", "message"] {
                str_of(key);
            }
            assert!(v["rule_id"].is_u64() && v["forwarded"].is_boolean() && v["last_report"].is_boolean(), "{line}");
            assert!(v["call"]["function"].is_string() && v["call"]["args"].is_object(), "{line}");
            assert!(v["call"]["text"].is_string() && v["stack"].is_array(), "{line}");
        }
        "summary" => {
            assert_eq!(str_of("component"), "regcheck", "{line}");
            assert!(v["findings"].is_object() && v["errors"].is_u64(), "{line}");
            assert!(v["live_host_registrations"].is_u64(), "{line}");
        }
        other => panic!("unknown type {other:?}: {line}"),
    }
}

/// Every line regcheck wrote in `text`, each parsed as one JSON object with the documented
/// fields.
fn json_log(text: &str) -> Vec<Value> {
    log_lines(text)
        .into_iter()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}\n{text}"));
            assert_documented(&v, l);
            v
        })
        .collect()
}

/// The messages of the audit module's lines (`component` `regcheck-audit`), each checked to
/// be a `message` at `level`.
fn audit_messages(lines: &[Value], level: &str) -> Vec<String> {
    let audit: Vec<&Value> = lines.iter().filter(|v| v["component"] == "regcheck-audit").collect();
    for v in &audit {
        assert_eq!(v["type"], "message", "{v}");
        assert_eq!(v["level"], level, "{v}");
    }
    audit.iter().map(|v| v["message"].as_str().unwrap().to_string()).collect()
}

const REDIRECT_DLSYM: &str =
    "redirect aclrtHostRegisterV2 (dlsym) from (main program): libascendcl.so -> libregcheck.so";

/// `REGCHECK_LOG_FORMAT=json`: every line on stderr but the simulator's is one JSON object
/// with the documented fields, the audit module's (`REGCHECK_AUDIT_LOG=1`) as well as the
/// library's, all from one process.
#[test]
fn json_format_covers_the_audit_modules_lines() {
    let env = [
        ("REGCHECK_LOG_FORMAT", "json"),
        ("REGCHECK_AUDIT_LOG", "1"),
        ("REGCHECK_LOG", "info"),
        ("REGCHECK_SUMMARY", "1"),
    ];
    let out = run(dlsym_program(), &["libascendcl.so"], Mode::Both, &env);
    assert_checked(&out, "libascendcl.so");
    let lines = json_log(&out.stderr);
    let audit = audit_messages(&lines, "info");
    assert!(
        audit.iter().any(|m| m.starts_with("redirection target /") && m.ends_with("/libregcheck.so")),
        "{}",
        describe(&out)
    );
    assert!(audit.iter().any(|m| m == REDIRECT_DLSYM), "{}", describe(&out));
    for rule in BAD_RULES {
        assert!(lines.iter().any(|v| v["type"] == "finding" && v["rule"] == rule), "{rule}: {}", describe(&out));
    }
    assert!(lines.iter().any(|v| v["type"] == "summary"), "{}", describe(&out));
    let pids: HashSet<u64> = lines.iter().map(|v| v["pid"].as_u64().unwrap()).collect();
    assert_eq!(pids.len(), 1, "one process: {}", describe(&out));
    for v in lines.iter().filter(|v| v["component"] == "regcheck-audit") {
        assert_eq!(v["tid"], v["pid"], "bound on the main thread: {v}");
    }
    // One clock: the binding is logged shortly before the call it leads to is checked.
    let time_of = |pred: &dyn Fn(&Value) -> bool| {
        let t = lines.iter().find(|v| pred(v)).unwrap()["time"].as_str().unwrap();
        humantime::parse_rfc3339(t).unwrap_or_else(|e| panic!("{t}: {e}"))
    };
    let bound = time_of(&|v| v["message"] == REDIRECT_DLSYM);
    let checked = time_of(&|v| v["type"] == "finding");
    let gap = checked.duration_since(bound).unwrap_or_else(|_| panic!("logged after the check: {}", describe(&out)));
    assert!(gap < std::time::Duration::from_secs(60), "{gap:?} apart: {}", describe(&out));

    // The module's warning without a libregcheck.so, likewise.
    let out = run(dlsym_program(), &["libascendcl.so"], Mode::AuditOnly, &[("REGCHECK_LOG_FORMAT", "JSON")]);
    assert_ok(&out);
    let lines = json_log(&out.stderr);
    let notice = NOTICE.strip_prefix("regcheck-audit: ").unwrap();
    assert_eq!(lines.len(), 1, "{}", describe(&out));
    let audit = audit_messages(&lines, "warning");
    assert!(audit[0].starts_with(notice), "{}", describe(&out));
}

/// `REGCHECK_LOG_FILE`: the audit module's lines are appended to the library's log file, in
/// either format, and nothing of regcheck's goes to stderr.
#[test]
fn the_audit_modules_lines_go_to_the_log_file() {
    for format in ["json", "text"] {
        let path = testkit::target_dir().join(format!("audit-log-file.{format}"));
        let _ = std::fs::remove_file(&path);
        let file = path.to_str().unwrap();
        let env = [("REGCHECK_LOG_FORMAT", format), ("REGCHECK_LOG_FILE", file), ("REGCHECK_AUDIT_LOG", "1")];
        let out = run(dlsym_program(), &["libascendcl.so"], Mode::Both, &env);
        assert_ok(&out);
        assert_eq!(code(&values(&out), "bad.null", &out), ACL_ERROR_INVALID_PARAM);
        assert_eq!(log_lines(&out.stderr), Vec::<&str>::new(), "{format}: {}", describe(&out));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{format}: {e}\n{}", describe(&out)));
        if format == "json" {
            let lines = json_log(&text);
            assert!(audit_messages(&lines, "info").iter().any(|m| m == REDIRECT_DLSYM), "{text}");
            assert!(lines.iter().any(|v| v["rule"] == "ACL-HOSTREG-NULL"), "{text}");
        } else {
            assert!(text.contains(&format!("regcheck-audit: {REDIRECT_DLSYM}\n")), "{text}");
            assert!(text.contains("regcheck: error: [ACL-HOSTREG-NULL]"), "{text}");
        }
    }

    let path = testkit::target_dir().join("audit-log-file-notice.json");
    let _ = std::fs::remove_file(&path);
    let env = [("REGCHECK_LOG_FORMAT", "json"), ("REGCHECK_LOG_FILE", path.to_str().unwrap())];
    let out = run(dlsym_program(), &["libascendcl.so"], Mode::AuditOnly, &env);
    assert_ok(&out);
    assert_eq!(log_lines(&out.stderr), Vec::<&str>::new(), "{}", describe(&out));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}\n{}", describe(&out)));
    let lines = json_log(&text);
    assert_eq!(lines.len(), 1, "{text}");
    assert!(audit_messages(&lines, "warning")[0].starts_with(NOTICE.strip_prefix("regcheck-audit: ").unwrap()));
}

/// A path may hold any byte but NUL: the module's JSON lines escape quotes, backslashes and
/// control characters and replace bytes that are not UTF-8, so the line stays one JSON
/// object (in valid UTF-8) that gives the path back as `String::from_utf8_lossy` reads it.
#[test]
fn json_lines_escape_what_a_path_may_hold() {
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::OsStr::from_bytes(b"q\"b\\s\tt\nn\x01c\xc3\xa9\xff-x");
    let dir = testkit::target_dir().join("audit-json-path").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("libregcheck.so");
    std::fs::copy(&testkit::regcheck().shared, &lib).unwrap();
    let log = testkit::target_dir().join("audit-json-path.jsonl");
    let _ = std::fs::remove_file(&log);
    let out = Run::new(dlsym_program())
        .arg("libascendcl.so")
        .env("LD_LIBRARY_PATH", testkit::sim_lib_dir())
        .env("LD_AUDIT", audit_lib())
        .env("LD_PRELOAD", &lib)
        .env("REGCHECK_LOG_FORMAT", "json")
        .env("REGCHECK_LOG_FILE", &log)
        .env("REGCHECK_AUDIT_LOG", "1")
        .run();
    assert_ok(&out);
    assert!(is_regcheck(&values(&out)["where.aclrtHostRegisterV2"]), "{}", describe(&out));
    let bytes = std::fs::read(&log).unwrap_or_else(|e| panic!("{e}\n{}", describe(&out)));
    let text = String::from_utf8(bytes).expect("the log is UTF-8");
    let lines = json_log(&text);
    let want = format!("redirection target {}", String::from_utf8_lossy(lib.as_os_str().as_bytes()));
    assert!(audit_messages(&lines, "info").contains(&want), "no {want:?} in\n{text}");
    assert!(lines.iter().any(|v| v["rule"] == "ACL-HOSTREG-ALIGN"), "{text}");
}

/// LMCache-Ascend's shape, from Python, in two processes: ACL through ctypes
/// (aclrtMallocHost, the V1 aclrtHostRegister(MAPPED) and aclrtHostUnregister of its pinned
/// pool, aclrtMalloc), HIXL through a C++ extension module (tests/c/py_kv_module.cpp, as a
/// pybind11 module: its Hixl member calls go through its PLT), both sides registering before
/// both connect, TransferSync READ and TransferAsync WRITE polled with GetTransferStatus
/// (tests/py/kv_two_process.py). Under LD_PRELOAD alone regcheck never sees the ctypes
/// allocation: it used to reject the registration (HIXL-REG-HOST-ORIGIN, 103900, the vendor not
/// called); now the run works in every mode, and under LD_AUDIT too regcheck has nothing to say.
#[test]
fn a_python_kv_connector_works_under_regcheck_in_two_processes() {
    let sim = testkit::sim_lib_dir();
    let module = testkit::target_dir().join("audit-tests").join("libkvmod.so");
    std::fs::create_dir_all(module.parent().unwrap()).unwrap();
    let inc = testkit::sim_include_dir();
    let cxx = std::env::var_os("CXX").filter(|c| !c.is_empty()).unwrap_or_else(|| "c++".into());
    let built = std::process::Command::new(&cxx)
        .args(["-std=c++17", "-fPIC", "-shared"])
        .arg(format!("-I{}", inc.display()))
        .arg(format!("-I{}", inc.join("acl").display()))
        .arg(src("tests/c/py_kv_module.cpp"))
        .arg(format!("-L{}", sim.display()))
        .args(["-lcann_hixl", "-lascendcl"])
        .arg(format!("-Wl,-rpath,{}", sim.display()))
        .arg("-o")
        .arg(&module)
        .output()
        .expect("cannot run the C++ compiler");
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let acl = sim.join("libascendcl.so");
    let args = [acl.to_str().unwrap(), module.to_str().unwrap()];
    let script = src("tests/py/kv_two_process.py");
    let bare = Run::new(python3()).arg(&script).args(args).env("LD_LIBRARY_PATH", &sim).run();
    let want = |o: &Outcome| {
        assert!(o.stdout.contains("exit 0 0"), "both peers finish: {}", describe(o));
        let bad: Vec<&str> = o.stdout.lines().filter(|l| l.contains(" rc ") && !l.ends_with(" 0")).collect();
        assert!(bad.is_empty(), "every call succeeds: {bad:?}\n{}", describe(o));
        assert!(
            o.stdout.contains("client read_byte s") && o.stdout.contains("server device_byte c"),
            "{}",
            describe(o)
        );
    };
    want(&bare);
    for mode in [Mode::PreloadOnly, Mode::Both] {
        let o = run(python3(), &[script.to_str().unwrap(), args[0], args[1]], mode, &[]);
        want(&o);
        assert!(!o.stderr.contains("regcheck: error"), "no rejection, no error: {}", describe(&o));
        // The records are whole either way (regcheck's own dlsym, or the audit module):
        // nothing to say.
        assert!(!o.stderr.contains("regcheck: warning"), "the records are whole: nothing to say: {}", describe(&o));
    }
}

/// Issue 32, item 3: `regcheck run` without `--audit` checks a Python `ctypes` caller (its
/// misaligned registration is rejected, named by rule). Seen failing before: the calls went
/// straight to the vendor.
#[test]
fn ctypes_calls_are_checked_under_regcheck_run_without_audit() {
    let rc = testkit::regcheck();
    let out = Run::new(&rc.cli)
        .arg("run")
        .arg("--")
        .arg(python3())
        .arg(src("tests/py/audit_ctypes.py"))
        .arg("libascendcl.so")
        .env("LD_LIBRARY_PATH", testkit::sim_lib_dir())
        .run();
    assert_checked(&out, "libascendcl.so");
}

/// The application's own tracing layer (tests/c/app_trace.c) defines aclrtHostRegisterV2 and
/// forwards with `dlsym(RTLD_NEXT, ...)`: with regcheck preloaded ahead of it, or after it,
/// each call is checked once and forwarded once (no loop), and `RTLD_NEXT` from the program
/// keeps the C library's answer and `dlerror()` text.
#[test]
fn an_applications_rtld_next_interposer_still_forwards_once() {
    let trace = Program::c("libapp_trace.so", &[src("tests/c/app_trace.c")])
        .link(Link::Bare)
        .libs(&[])
        .flag("-shared")
        .flag("-fPIC")
        .flag("-ldl")
        .build();
    let dir = trace.parent().unwrap().to_path_buf();
    let exe = Program::c("app_trace_main", &[src("tests/c/app_trace_main.c")])
        .link(Link::Bare)
        .libs(&[])
        .flag(&format!("-L{}", dir.display()))
        .flag("-lapp_trace")
        .flag("-lascendcl")
        .flag(&format!("-Wl,-rpath,{}", dir.display()))
        .flag("-ldl")
        .build();
    let rc = testkit::regcheck();
    let bare = Run::new(&exe).env("LD_LIBRARY_PATH", testkit::sim_lib_dir()).run();
    assert_ok(&bare);
    let bare_error = values(&bare)["next.error"].clone();
    let preloads = [rc.shared.to_string_lossy().into_owned(), format!("{}:{}", trace.display(), rc.shared.display())];
    for preload in preloads {
        let out = Run::new(&exe).env("LD_LIBRARY_PATH", testkit::sim_lib_dir()).env("LD_PRELOAD", &preload).run();
        let ctx = || format!("LD_PRELOAD={preload}\n{}", describe(&out));
        assert_ok(&out);
        let v = values(&out);
        assert_eq!(code(&v, "bad.align", &out), ACL_ERROR_INVALID_PARAM, "{}", ctx());
        assert!(out.stderr.contains("[ACL-HOSTREG-ALIGN]"), "{}", ctx());
        assert_eq!(code(&v, "good.register", &out), 0, "{}", ctx());
        assert_eq!(out.sim_calls("aclrtHostRegisterV2"), 1, "forwarded once\n{}", ctx());
        let traced = code(&v, "traced", &out);
        assert!(traced == 1 || traced == 2, "the layer saw the good call once (and the bad one when ahead)\n{}", ctx());
        assert_eq!(out.stderr.matches("[ACL-HOSTREG-ALIGN]").count(), 1, "checked once\n{}", ctx());
        assert_eq!(v["next.none"], "null");
        assert_eq!(v["next.error"], bare_error, "dlerror() is the C library's, for the caller\n{}", ctx());
    }
}

/// Issue 32, item 4: linked with the vendor's library ahead of regcheck (`-lascendcl
/// -lregcheck`), the program's calls go to the vendor unchecked; regcheck says so in one
/// warning line, with the fix. Seen failing before: nothing at all was said.
#[test]
fn the_wrong_link_order_is_said() {
    let rc = testkit::regcheck();
    let exe = Program::c("audit_link_order", &[src("tests/c/link_order.c")])
        .link(Link::Bare)
        .libs(&[testkit::libs::ASCENDCL])
        .flag(&format!("-L{}", rc.lib_dir.display()))
        .flag("-lregcheck")
        .flag("-ldl")
        .build();
    let out = Run::new(&exe).env("LD_LIBRARY_PATH", testkit::sim_lib_dir()).run();
    assert_ok(&out);
    let warnings: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("regcheck: warning:")).collect();
    assert_eq!(warnings.len(), 1, "{}", describe(&out));
    assert!(warnings[0].contains("libascendcl.so") && warnings[0].contains("link order"), "{}", describe(&out));
    assert!(warnings[0].contains("-lregcheck before") && warnings[0].contains("LD_PRELOAD"), "{}", describe(&out));
}

/// What stays unknown (issue 32, item 2): regcheck `dlopen`ed after the program started cannot
/// know what happened before it, so a finding by its records is not enforced, and says why.
#[test]
fn regcheck_loaded_late_says_its_records_may_lack_calls() {
    let exe = Program::c("audit_late_load", &[src("tests/c/late_load.c")])
        .link(Link::Bare)
        .libs(&[testkit::libs::ASCENDCL])
        .flag("-ldl")
        .build();
    let rc = testkit::regcheck();
    let out = Run::new(&exe).arg(&rc.shared).env("LD_LIBRARY_PATH", testkit::sim_lib_dir()).run();
    assert_ok(&out);
    let v = values(&out);
    assert_eq!(code(&v, "register", &out), 0, "{}", describe(&out));
    assert_eq!(code(&v, "unregister", &out), 0, "{}", describe(&out));
    // Seen, forwarded: the vendor's own code.
    assert_ne!(code(&v, "unregister_again", &out), 0, "{}", describe(&out));
    assert_eq!(out.sim_calls("aclrtHostUnregister"), 2, "{}", describe(&out));
    assert!(out.stderr.contains("[ACL-HOSTUNREG-NOT-REGISTERED]"), "{}", describe(&out));
    assert!(out.stderr.contains("regcheck was loaded after the program started"), "{}", describe(&out));
}
