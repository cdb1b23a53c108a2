//! Findings name the application's call site, `aclGetRecentErrMsg` returns regcheck's message
//! after a rejection, and `REGCHECK_LOG_FORMAT=json` writes one parseable object per line:
//! through a C program compiled with `-g` (tests/c/callsite.c), whose bad call is made from a
//! named function, run under `LD_PRELOAD`, linked with `-lregcheck` and with libregcheck.a.

use std::sync::OnceLock;

use serde_json::Value;
use testkit::{Link, Mode, Outcome, Program, Scenarios, MODES};

const SRC: &str = "tests/c/callsite.c";

fn scenarios() -> &'static Scenarios {
    static S: OnceLock<Scenarios> = OnceLock::new();
    S.get_or_init(|| Scenarios::build(|l: Link| Program::c("callsite", &[SRC]).link(l).libs(&["ascendcl"])))
}

fn run(mode: Mode, scenario: &str, env: &[(&str, &str)]) -> Outcome {
    let mut r = scenarios().run(mode).arg(scenario).env_remove("ACLSIM_TRACE");
    for (k, v) in env {
        r = r.env(k, v);
    }
    r.run()
}

/// The line of `SRC` that carries `CALLSITE:<tag>`.
fn line_of(tag: &str) -> u32 {
    line_of_in(SRC, tag)
}

/// The line of `src` that carries `CALLSITE:<tag>`.
fn line_of_in(src: &str, tag: &str) -> u32 {
    let text = std::fs::read_to_string(testkit::workspace_root().join(src)).unwrap();
    let marker = format!("CALLSITE:{tag} ");
    let n = text.lines().position(|l| l.contains(&marker)).unwrap_or_else(|| panic!("no {marker} in {src}"));
    n as u32 + 1
}

fn stdout_value<'a>(o: &'a Outcome, label: &str) -> &'a str {
    o.stdout
        .lines()
        .find_map(|l| l.strip_prefix(label)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {label} line\n{}", o.dump()))
}

#[test]
fn the_finding_names_the_function_and_line_of_the_bad_call() {
    let at = format!("    at register_buffers (callsite.c:{})", line_of("register"));
    for mode in MODES {
        let o = run(mode, "align", &[]);
        let ctx = || format!("mode {mode:?}\n{}", o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        assert_eq!(stdout_value(&o, "rc register"), "100000", "{}", ctx());
        let lines: Vec<&str> = o.stderr.lines().collect();
        let i = lines.iter().position(|l| l.contains("[ACL-HOSTREG-ALIGN]")).unwrap_or_else(|| panic!("{}", ctx()));
        assert_eq!(lines.get(i + 1).copied(), Some(at.as_str()), "the frame follows the message: {}", ctx());
        assert!(!o.stderr.contains("    by "), "one frame by default: {}", ctx());
    }
}

#[test]
fn regcheck_stack_shows_the_callers() {
    let want = [
        format!("    at register_buffers (callsite.c:{})", line_of("register")),
        format!("    by setup_pool (callsite.c:{})", line_of("setup_pool")),
        format!("    by main (callsite.c:{})", line_of("main")),
    ];
    for mode in MODES {
        let o = run(mode, "align", &[("REGCHECK_STACK", "3")]);
        let lines: Vec<&str> = o.stderr.lines().collect();
        let i = lines.iter().position(|l| l.contains("[ACL-HOSTREG-ALIGN]")).unwrap_or_else(|| panic!("{}", o.dump()));
        assert_eq!(&lines[i + 1..i + 4], &want, "mode {mode:?}\n{}", o.dump());
        let o = run(mode, "align", &[("REGCHECK_STACK", "0")]);
        assert!(!o.stderr.lines().any(|l| l.starts_with("    at ")), "REGCHECK_STACK=0 shows no frame: {}", o.dump());
        assert!(o.stderr.contains("[ACL-HOSTREG-ALIGN]"), "{}", o.dump());
    }
}

#[test]
fn acl_get_recent_err_msg_returns_the_rejection_until_the_next_call() {
    for mode in MODES {
        let o = run(mode, "align", &[]);
        let ctx = || format!("mode {mode:?}\n{}", o.dump());
        let msg = stdout_value(&o, "errmsg");
        assert!(msg.starts_with("regcheck: [ACL-HOSTREG-ALIGN] aclrtHostRegisterV2("), "{}", ctx());
        assert!(msg.contains("`ptr`: 0x") && msg.contains("(rejected with 100000 "), "{}", ctx());
        assert!(msg.contains("Fix: "), "the fix is in the message: {}", ctx());
        assert!(msg.contains("More: regcheck explain ACL-HOSTREG-ALIGN"), "where to read more: {}", ctx());
        // The next ACL call (aclrtMallocHost, aclrtFreeHost: both fine) ends it: the vendor's
        // answer is back (the simulator has had no failure on this thread: NULL).
        assert_eq!(stdout_value(&o, "errmsg-after"), "(null)", "{}", ctx());
    }
}

#[test]
fn acl_get_recent_err_msg_is_per_thread_and_the_vendors_otherwise() {
    for mode in MODES {
        let o = run(mode, "thread", &[]);
        let ctx = || format!("mode {mode:?}\n{}", o.dump());
        assert!(stdout_value(&o, "errmsg").starts_with("regcheck: [ACL-HOSTREG-ALIGN]"), "{}", ctx());
        assert_eq!(stdout_value(&o, "errmsg-main"), "(null)", "the main thread had no rejection: {}", ctx());
        let o = run(mode, "clean", &[]);
        assert_eq!(stdout_value(&o, "errmsg"), "(null)", "{}", o.dump());
    }
    // The vendor's own message passes through untouched: report mode forwards the bad call,
    // the simulated driver refuses it and says why.
    let o = run(Mode::Preload, "align", &[("REGCHECK_MODE", "report")]);
    assert_eq!(stdout_value(&o, "rc register"), "507899", "{}", o.dump());
    let vendor = stdout_value(&o, "errmsg");
    assert!(!vendor.contains("regcheck") && vendor != "(null)", "{}", o.dump());
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}\n{text}")))
        .collect()
}

#[test]
fn json_log_lines_parse_and_carry_the_finding() {
    let line = line_of("register");
    for mode in MODES {
        let o = run(
            mode,
            "align",
            &[
                ("REGCHECK_LOG_FORMAT", "json"),
                ("REGCHECK_SUMMARY", "1"),
                ("REGCHECK_LOG", "info"),
                ("REGCHECK_STACK", "2"),
            ],
        );
        let ctx = || format!("mode {mode:?}\n{}", o.dump());
        let lines = json_lines(&o.stderr);
        let findings: Vec<&Value> = lines.iter().filter(|v| v["type"] == "finding").collect();
        assert_eq!(findings.len(), 1, "{}", ctx());
        let f = findings[0];
        assert_eq!(f["schema"], 1);
        assert_eq!(f["rule"], "ACL-HOSTREG-ALIGN", "{}", ctx());
        assert_eq!(f["action"], "error");
        assert_eq!(f["outcome"], "rejected");
        assert_eq!(f["forwarded"], false);
        assert_eq!(f["returned"], 100000);
        assert_eq!(f["call"]["function"], "aclrtHostRegisterV2");
        assert_eq!(f["call"]["args"]["size"], "4096");
        assert!(f["call"]["args"]["ptr"].as_str().unwrap().starts_with("0x"));
        assert_eq!(f["argument"], "ptr");
        assert!(f["fix"].as_str().unwrap().contains("posix_memalign"), "{}", ctx());
        assert_eq!(f["pid"].as_u64(), f["tid"].as_u64(), "single-threaded: tid == pid");
        assert_eq!(f["call_site"]["function"], "register_buffers", "{}", ctx());
        assert_eq!(f["call_site"]["line"], line);
        assert!(f["call_site"]["file"].as_str().unwrap().ends_with("callsite.c"));
        assert_eq!(f["stack"][1]["function"], "setup_pool", "{}", ctx());
        assert!(lines.iter().any(|v| v["type"] == "message" && v["level"] == "info"), "{}", ctx());
        let summary = lines.iter().find(|v| v["type"] == "summary").unwrap_or_else(|| panic!("{}", ctx()));
        assert_eq!(summary["findings"]["ACL-HOSTREG-ALIGN"], 1, "{}", ctx());
        assert_eq!(summary["errors"], 1);
    }
}

#[test]
fn json_log_goes_to_the_log_file() {
    let path = testkit::target_dir().join("callsite-json-log.jsonl");
    let _ = std::fs::remove_file(&path);
    let o = run(
        Mode::Preload,
        "align",
        &[("REGCHECK_LOG_FORMAT", "json"), ("REGCHECK_LOG_FILE", path.to_str().unwrap()), ("REGCHECK_SUMMARY", "1")],
    );
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    assert!(!o.stderr.contains("ACL-HOSTREG-ALIGN"), "{}", o.dump());
    let text = std::fs::read_to_string(&path).unwrap();
    let lines = json_lines(&text);
    assert_eq!(lines.iter().filter(|v| v["type"] == "finding").count(), 1, "{text}");
    assert_eq!(lines.last().unwrap()["type"], "summary", "{text}");
}

fn compile(args: &[&std::ffi::OsStr]) {
    let cc = std::env::var_os("CC").filter(|c| !c.is_empty()).unwrap_or_else(|| "cc".into());
    let out = std::process::Command::new(&cc).args(args).output().expect("cannot run the C compiler");
    assert!(out.status.success(), "{cc:?} {args:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_stripped_library_is_named_from_its_dynamic_symbols() {
    let dir = testkit::target_dir().join("callsite-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let root = testkit::workspace_root();
    let sim = testkit::sim_lib_dir();
    let inc = testkit::sim_include_dir();
    let lib = dir.join("libkv.so");
    let exe = dir.join("kv_main");
    let os = |s: &std::path::Path| s.as_os_str().to_owned();
    let inc_flag = std::ffi::OsString::from(format!("-I{}", inc.display()));
    let sim_flag = std::ffi::OsString::from(format!("-L{}", sim.display()));
    let dir_flag = std::ffi::OsString::from(format!("-L{}", dir.display()));
    let rpath = std::ffi::OsString::from(format!("-Wl,-rpath,{}:{}", dir.display(), sim.display()));
    let src = os(&root.join("tests/c/callsite_lib.c"));
    let main_src = os(&root.join("tests/c/callsite_lib_main.c"));
    compile(&[
        "-O1".as_ref(),
        "-fPIC".as_ref(),
        "-shared".as_ref(),
        &inc_flag,
        &src,
        &sim_flag,
        "-lascendcl".as_ref(),
        "-o".as_ref(),
        &os(&lib),
    ]);
    // `$STRIP` names the binutils of the target when cross-building (`cargo xtask cross`)
    let strip_tool = std::env::var_os("STRIP").filter(|s| !s.is_empty()).unwrap_or_else(|| "strip".into());
    let strip = std::process::Command::new(strip_tool).arg(&lib).status().expect("cannot run strip");
    assert!(strip.success());
    compile(&[
        "-g".as_ref(),
        &inc_flag,
        &main_src,
        &dir_flag,
        "-lkv".as_ref(),
        &sim_flag,
        &rpath,
        "-lascendcl".as_ref(),
        "-o".as_ref(),
        &os(&exe),
    ]);
    let o = testkit::Run::new(&exe)
        .preload(testkit::regcheck().shared)
        .env("REGCHECK_STACK", "2")
        .env_remove("ACLSIM_TRACE")
        .run();
    assert_eq!(stdout_value(&o, "rc register"), "100000", "{}", o.dump());
    let lines: Vec<&str> = o.stderr.lines().collect();
    let i = lines.iter().position(|l| l.contains("[ACL-HOSTREG-ALIGN]")).unwrap_or_else(|| panic!("{}", o.dump()));
    assert!(lines[i + 1].starts_with("    at kv_register (libkv.so+0x"), "{}", o.dump());
    let main_line =
        format!("    by main (callsite_lib_main.c:{})", line_of_in("tests/c/callsite_lib_main.c", "lib_main"));
    assert_eq!(lines[i + 2], main_line, "{}", o.dump());
}

/// A library `dlopen`ed after a first finding was symbolised (what regcheck knows of the loaded
/// objects was built then) is named by `file:line` all the same.
#[test]
fn a_library_loaded_after_a_finding_is_named_by_file_and_line() {
    let dir = testkit::target_dir().join("callsite-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let root = testkit::workspace_root();
    let sim = testkit::sim_lib_dir();
    let os = |s: &std::path::Path| s.as_os_str().to_owned();
    let inc_flag = std::ffi::OsString::from(format!("-I{}", testkit::sim_include_dir().display()));
    let sim_flag = std::ffi::OsString::from(format!("-L{}", sim.display()));
    let rpath = std::ffi::OsString::from(format!("-Wl,-rpath,{}", sim.display()));
    let lib = dir.join("libkv_late.so");
    let exe = dir.join("kv_late_main");
    let lib_src = "tests/c/callsite_late_lib.c";
    let main_src = "tests/c/callsite_late_main.c";
    compile(&[
        "-g".as_ref(),
        "-fPIC".as_ref(),
        "-shared".as_ref(),
        &inc_flag,
        &os(&root.join(lib_src)),
        &sim_flag,
        "-lascendcl".as_ref(),
        "-o".as_ref(),
        &os(&lib),
    ]);
    compile(&[
        "-g".as_ref(),
        &inc_flag,
        &os(&root.join(main_src)),
        &sim_flag,
        &rpath,
        "-lascendcl".as_ref(),
        "-ldl".as_ref(),
        "-o".as_ref(),
        &os(&exe),
    ]);
    let o = testkit::Run::new(&exe)
        .arg(lib.to_str().unwrap())
        .preload(testkit::regcheck().shared)
        .env_remove("ACLSIM_TRACE")
        .run();
    assert_eq!(stdout_value(&o, "rc first"), "100000", "{}", o.dump());
    assert_eq!(stdout_value(&o, "rc late"), "100000", "{}", o.dump());
    let sites: Vec<&str> = o.stderr.lines().filter(|l| l.starts_with("    at ")).collect();
    let want = [
        format!("    at main (callsite_late_main.c:{})", line_of_in(main_src, "late_main")),
        format!("    at late_register (callsite_late_lib.c:{})", line_of_in(lib_src, "late_lib")),
    ];
    assert_eq!(sites, want, "{}", o.dump());
}

#[test]
fn the_c_api_gives_the_call_site_of_the_last_rejection() {
    let line = line_of("register");
    // Under LD_PRELOAD and -lregcheck the weak references bind to regcheck's functions (a
    // static link pulls them in only if their object is linked anyway).
    for mode in [Mode::Preload, Mode::Shared] {
        let o = run(mode, "align", &[]);
        assert_eq!(stdout_value(&o, "site"), format!("register_buffers (callsite.c:{line})"), "{mode:?}\n{}", o.dump());
        assert_eq!(stdout_value(&o, "site-function"), "register_buffers");
        assert_eq!(stdout_value(&o, "site-line"), line.to_string());
        assert_eq!(stdout_value(&o, "rule"), (regcheck::rules::RuleId::AclHostregAlign as u32).to_string());
    }
}

#[test]
fn a_hixl_member_call_is_named_too() {
    let s = Scenarios::build(|l: Link| {
        Program::cxx("callsite_hixl", &["tests/c/callsite_hixl.cpp"]).link(l).libs(&["cann_hixl", "ascendcl"])
    });
    let at = format!(
        "    at kv::Pool::Add(void*, unsigned long) (callsite_hixl.cpp:{})",
        line_of_in("tests/c/callsite_hixl.cpp", "hixl_add")
    );
    for mode in MODES {
        let o = s.run(mode).env_remove("ACLSIM_TRACE").run();
        let ctx = || format!("mode {mode:?}\n{}", o.dump());
        assert_eq!(stdout_value(&o, "rc register"), "503900", "{}", ctx());
        let lines: Vec<&str> = o.stderr.lines().collect();
        let i = lines.iter().position(|l| l.contains("[HIXL-NOT-INITIALIZED]")).unwrap_or_else(|| panic!("{}", ctx()));
        assert_eq!(lines.get(i + 1).copied(), Some(at.as_str()), "{}", ctx());
        assert!(
            stdout_value(&o, "errmsg").starts_with("regcheck: [HIXL-NOT-INITIALIZED] Hixl::RegisterMem("),
            "{}",
            ctx()
        );
    }
}

/// `tests/c/vendor_internal_lib.c` built as `lib_dir/lib_name` and the program that calls it
/// (`tests/c/vendor_internal_main.c`), linked with it and with the ACL library of `acl_dir`
/// (searched in that order).
fn vendor_internal_programs(
    dir: &std::path::Path,
    lib_dir: &std::path::Path,
    lib_name: &str,
    acl_dir: &std::path::Path,
) -> std::path::PathBuf {
    std::fs::create_dir_all(lib_dir).unwrap();
    let root = testkit::workspace_root();
    let os = |s: &std::path::Path| s.as_os_str().to_owned();
    let inc_flag = std::ffi::OsString::from(format!("-I{}", testkit::sim_include_dir().display()));
    let acl_flag = std::ffi::OsString::from(format!("-L{}", acl_dir.display()));
    let lib_flag = std::ffi::OsString::from(format!("-L{}", lib_dir.display()));
    let rpath = std::ffi::OsString::from(format!("-Wl,-rpath,{}:{}", lib_dir.display(), acl_dir.display()));
    let link_name = std::ffi::OsString::from(format!(
        "-l{}",
        lib_name.strip_prefix("lib").and_then(|n| n.strip_suffix(".so")).expect("libNAME.so")
    ));
    let exe = dir.join("vendor_internal");
    compile(&[
        "-fPIC".as_ref(),
        "-shared".as_ref(),
        &inc_flag,
        &os(&root.join("tests/c/vendor_internal_lib.c")),
        &acl_flag,
        "-lascendcl".as_ref(),
        "-o".as_ref(),
        &os(&lib_dir.join(lib_name)),
    ]);
    compile(&[
        &inc_flag,
        &os(&root.join("tests/c/vendor_internal_main.c")),
        &lib_flag,
        &link_name,
        &acl_flag,
        &rpath,
        "-lascendcl".as_ref(),
        "-o".as_ref(),
        &os(&exe),
    ]);
    exe
}

/// The vendor's objects are told by identity (issue 33, item 7): what regcheck resolved and
/// what those load, never a neighbour by directory. An application's own library installed in
/// the vendor's library directory (here a copy of the simulator's `lib64`, with the
/// application's `libllm_datadist.so` beside it, as a wheel that bundles libraries or a
/// container's `lib/` has) is the application's: its misaligned registration is rejected with
/// the rule (100000), where bare the driver's 507899 reaches the caller. Seen failing before:
/// the directory rule took it for the vendor's (a debug line, and 507899).
/// (Calls the vendor's own libraries make are the vendor's business:
/// tests/decisions.rs::pageable_memory_the_vendor_registers_for_a_ub_endpoint_is_refused_on_an_old_kernel.)
#[test]
fn an_applications_library_beside_the_vendors_is_the_applications() {
    let dir = testkit::target_dir().join("vendor-internal-tests");
    let lib64 = dir.join("lib64");
    std::fs::create_dir_all(&lib64).unwrap();
    let sim = testkit::sim_lib_dir();
    for file in testkit::sim_lib_files() {
        // Replaced atomically: a program of another test run may have the old copy open.
        let tmp = lib64.join(format!(".{file}.{}", std::process::id()));
        std::fs::copy(sim.join(file), &tmp).unwrap();
        std::fs::rename(&tmp, lib64.join(file)).unwrap();
    }
    let exe = vendor_internal_programs(&dir, &lib64, "libllm_datadist.so", &lib64);
    let bare = testkit::Run::new(&exe).run();
    assert_eq!(stdout_value(&bare, "rc vendor_misaligned"), "507899", "{}", bare.dump());
    for audited in [false, true] {
        let mut run = testkit::Run::new(&exe).preload(testkit::regcheck().shared).env("REGCHECK_LOG", "debug");
        if audited {
            run = run.audit();
        }
        let o = run.run();
        let ctx = || format!("audited {audited}\n{}\nbare:\n{}", o.dump(), bare.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        assert_eq!(stdout_value(&o, "rc vendor_misaligned"), "100000", "{}", ctx());
        assert_eq!(stdout_value(&o, "rc app_misaligned"), "100000", "{}", ctx());
        assert_eq!(o.stderr.matches("regcheck: error: [ACL-HOSTREG-ALIGN]").count(), 2, "{}", ctx());
        assert!(!o.stderr.contains("is made by the vendor's own library"), "{}", ctx());
        assert_eq!(stdout_value(&o, "rc vendor_register"), "0", "{}", ctx());
        assert_eq!(stdout_value(&o, "rc vendor_unregister"), "0", "{}", ctx());
    }
}

/// A file name is no identity: the user's own `plugins/libruntime.so` (the name of one of the
/// vendor's libraries) is the application's, and its misaligned registration is rejected with
/// the rule, as the application's own is; bare, the driver's 507899 would reach the caller.
#[test]
fn a_users_library_named_like_the_vendors_is_checked() {
    let dir = testkit::target_dir().join("vendor-lookalike-tests");
    let plugins = dir.join("plugins");
    let exe = vendor_internal_programs(&dir, &plugins, "libruntime.so", &testkit::sim_lib_dir());
    let bare = testkit::Run::new(&exe).run();
    assert_eq!(stdout_value(&bare, "rc vendor_misaligned"), "507899", "{}", bare.dump());
    for audited in [false, true] {
        let mut run = testkit::Run::new(&exe).preload(testkit::regcheck().shared).env("REGCHECK_LOG", "debug");
        if audited {
            run = run.audit();
        }
        let o = run.run();
        let ctx = || format!("audited {audited}\n{}", o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        assert_eq!(stdout_value(&o, "rc vendor_misaligned"), "100000", "{}", ctx());
        assert_eq!(stdout_value(&o, "rc app_misaligned"), "100000", "{}", ctx());
        assert_eq!(o.stderr.matches("regcheck: error: [ACL-HOSTREG-ALIGN]").count(), 2, "{}", ctx());
        assert!(o.stderr.contains("    at vendor_register_misaligned ("), "named at the plugin's call: {}", ctx());
        assert!(!o.stderr.contains("is made by the vendor's own library"), "{}", ctx());
    }
}

/// A library's constructor runs inside `dlopen`, holding the loader's lock: regcheck's work on
/// its calls' findings (is the caller the vendor's? where is the call site?) must never wait
/// for a regcheck lock held by a thread that itself waits for the loader (`dladdr`,
/// `dl_iterate_phdr`). 200 dlopen/dlclose of such a library while 4 threads make misaligned
/// registrations: done in a fraction of a second bare, and under regcheck too (bounded wait:
/// a deadlock fails the test at the timeout instead of hanging it).
#[test]
fn findings_inside_a_constructor_never_deadlock_with_the_loader() {
    let lib = Program::c("libcallsite_ctor.so", &["tests/c/callsite_ctor_lib.c"])
        .link(Link::Bare)
        .libs(&[testkit::libs::ASCENDCL])
        .flag("-shared")
        .flag("-fPIC")
        .build();
    let exe = Program::c("callsite_ctor_main", &["tests/c/callsite_ctor_main.c"])
        .link(Link::Bare)
        .libs(&[testkit::libs::ASCENDCL])
        .flag("-ldl")
        .build();
    let bare = testkit::Run::new(&exe).arg(&lib).env_remove("ACLSIM_TRACE").run();
    assert_eq!(stdout_value(&bare, "loads"), "200", "{}", bare.dump());
    for env in
        [&[][..], &[("REGCHECK_STACK", "3"), ("REGCHECK_MAX_REPEATS", "0"), ("REGCHECK_LOG_FILE", "/dev/null")][..]]
    {
        let mut run = testkit::Run::new(&exe)
            .arg(&lib)
            .preload(testkit::regcheck().shared)
            .env_remove("ACLSIM_TRACE")
            .timeout(std::time::Duration::from_secs(60));
        for (k, v) in env {
            run = run.env(k, v);
        }
        let o = run.run();
        assert_eq!(o.code(), Some(0), "{env:?}: {}", o.dump());
        assert_eq!(stdout_value(&o, "loads"), "200", "{env:?}: {}", o.dump());
        if env.is_empty() {
            assert!(o.stderr.contains("[ACL-HOSTREG-ALIGN]"), "the threads' calls are checked: {}", o.dump());
        }
    }
}
