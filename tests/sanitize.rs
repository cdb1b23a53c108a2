//! The simulator and the C/C++ test programs built with AddressSanitizer and
//! UndefinedBehaviorSanitizer (`-fsanitize=address,undefined`, any UB finding fatal), run
//! under regcheck: with `LD_PRELOAD` (the ASan runtime first, then libregcheck.so) and linked
//! with `-lregcheck`. Every scenario of tests/c/acl_scenarios.c and tests/c/hixl_scenarios.cpp,
//! the random edge calls and the 16-thread churn: no sanitizer report, the usual exit status.
//! (regcheck's own Rust code is not instrumented: what this proves is that nothing regcheck
//! does to its callers' memory, or makes the vendor do, is an error the sanitizers see.)

use std::path::PathBuf;

use testkit::{Link, Outcome, Program, Run};

/// Scenario names of a test program: the string literals it compares its argument with.
fn scenarios(source: &str, prefix: &str) -> Vec<String> {
    let text = std::fs::read_to_string(testkit::workspace_root().join(source)).unwrap();
    let mut names: Vec<String> = text
        .split(prefix)
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .map(str::to_string)
        .collect();
    names.dedup();
    assert!(names.len() >= 5, "{source}: found only {names:?}");
    names
}

struct Built {
    bare: PathBuf,
    linked: PathBuf,
}

fn build(program: impl Fn(Link) -> Program) -> Built {
    let b = Built {
        bare: program(Link::Bare).sanitize().build(),
        linked: program(Link::RegcheckShared).sanitize().build(),
    };
    for exe in [&b.bare, &b.linked, &testkit::sim_lib_dir_sanitized().join("libacl_rt.so")] {
        assert_instrumented(exe);
    }
    b
}

/// The sanitizers are really in: the object needs their runtimes.
fn assert_instrumented(object: &std::path::Path) {
    let out = std::process::Command::new("objdump").arg("-p").arg(object).output().expect("objdump");
    let text = String::from_utf8_lossy(&out.stdout);
    for rt in ["libasan.so", "libubsan.so"] {
        assert!(text.contains(rt), "{} does not need {rt}:\n{text}", object.display());
    }
}

/// Both runs of `args`: preloaded after the ASan runtime, and linked.
fn runs(b: &Built, args: &[String], env: &[(&str, &str)]) -> Vec<(&'static str, Outcome)> {
    let rc = testkit::regcheck();
    let mk = |r: Run| {
        let mut r = r
            .args(args)
            .env_remove("ACLSIM_TRACE")
            .env("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=0:exitcode=86")
            .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1:exitcode=87")
            .timeout(std::time::Duration::from_secs(180));
        for (k, v) in env {
            r = r.env(k, v);
        }
        r.run()
    };
    vec![
        ("preload", mk(Run::new(&b.bare).preload(testkit::asan_runtime()).preload(&rc.shared))),
        ("linked", mk(Run::new(&b.linked))),
    ]
}

fn assert_clean(what: &str, how: &str, o: &Outcome) {
    for marker in ["ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer", "SUMMARY: UndefinedBehavior"] {
        assert!(!o.stderr.contains(marker), "{what} ({how}): {marker}\n{}", o.dump());
    }
    assert_eq!(o.code(), Some(0), "{what} ({how}): {}", o.dump());
}

/// [`assert_clean`] for a scenario that may need an environment of its own (a product, a
/// kernel) to get past its set-up: then it stops with status 3, having run clean so far.
fn assert_clean_or_not_set_up(what: &str, how: &str, o: &Outcome) {
    if o.code() == Some(3) && o.stderr.contains("hixl_scenarios: ") {
        for marker in ["ERROR: AddressSanitizer", "runtime error:", "SUMMARY: UndefinedBehavior"] {
            assert!(!o.stderr.contains(marker), "{what} ({how}): {marker}\n{}", o.dump());
        }
        return;
    }
    assert_clean(what, how, o);
}

const NEW_KERNEL: [(&str, &str); 2] = [("ACLSIM_KERNEL_RELEASE", "6.6.0"), ("REGCHECK_KERNEL_RELEASE", "6.6.0")];

#[test]
fn acl_scenarios_under_asan_and_ubsan() {
    let b = build(|l| {
        let p = Program::c("acl_scenarios", &["tests/c/acl_scenarios.c"]).link(l).libs(&["ascendcl"]);
        if l == Link::Bare {
            p
        } else {
            p.define("REGCHECK_LINKED")
        }
    });
    let file = testkit::target_dir().join("asan-file-backed.bin");
    for s in scenarios("tests/c/acl_scenarios.c", "strcmp(s, \"") {
        if s.starts_with("fork_while") {
            // GCC 12's ASan runtime does not hold its allocator's lock across fork(): a child
            // forked while another thread allocates hangs in malloc, whatever regcheck does.
            // tests/concurrency.rs forks under threads without the sanitizers.
            continue;
        }
        for (how, o) in runs(&b, &[s.clone(), file.display().to_string()], &NEW_KERNEL) {
            assert_clean(&s, how, &o);
        }
    }
}

#[test]
fn hixl_scenarios_under_asan_and_ubsan() {
    let b = build(|l| {
        Program::cxx("hixl_scenarios", &["tests/c/hixl_scenarios.cpp"]).link(l).libs(&["cann_hixl", "ascendcl"])
    });
    let mut ran = 0;
    for s in scenarios("tests/c/hixl_scenarios.cpp", "s == \"") {
        for (how, o) in runs(&b, std::slice::from_ref(&s), &NEW_KERNEL) {
            assert_clean_or_not_set_up(&s, how, &o);
            ran += usize::from(o.code() == Some(0));
        }
    }
    assert!(ran >= 20, "most HIXL scenarios run to the end under the sanitizers: {ran}");
}

#[test]
fn random_edges_and_threads_under_asan_and_ubsan() {
    let b = build(|l| Program::c("acl_edges_random", &["tests/c/acl_edges_random.c"]).link(l).libs(&["ascendcl"]));
    let file = testkit::target_dir().join("asan-edges.bin");
    let args = ["0x5eed0001".to_string(), "600".to_string(), file.display().to_string()];
    for (how, o) in runs(&b, &args, &NEW_KERNEL) {
        assert_clean("acl_edges_random", how, &o);
        assert!(o.stdout.contains("leaks 0"), "({how}) {}", o.dump());
    }
    let c = Program::cxx("concurrency", &["tests/c/concurrency.cpp"])
        .link(Link::RegcheckShared)
        .libs(&["cann_hixl", "ascendcl"])
        .sanitize()
        .build();
    let b = Built { bare: c.clone(), linked: c };
    // The program's codes are the driver path's (tests/concurrency.rs says why).
    let driver_path = [NEW_KERNEL[0], NEW_KERNEL[1], ("ACLSIM_CANN_VERSION", "9.2.0"), ("ACLSIM_PIN_REGISTER", "1")];
    let (how, o) = runs(&b, &["churn".to_string()], &driver_path).remove(1);
    assert_clean("concurrency churn", how, &o);
    assert!(o.stdout.contains("failures 0"), "{}", o.dump());
}
