//! The annotation API (`regcheck_annotate_*` and the header's weak-symbol macros): a pool carved
//! from one `aclrtMallocHost` block regcheck did not see allocated (tests/c/annotate_pool.c),
//! on a kernel that needs page-locked memory, with the simulator's `aclrtMallocHost` memory not
//! `mlock`ed (`ACLSIM_MLOCK_MAX=0`: the simulated driver still counts it page-locked, as the
//! real one does for its own allocations), so that nothing but regcheck's records can tell.

use testkit::{Link, Mode, Outcome, Program, Run, Scenarios, MODES};

use super::{codes, OLD_KERNEL};

fn program() -> Scenarios {
    Scenarios::build(|l| {
        Program::c("annotate_pool", &["tests/c/annotate_pool.c"]).link(l).libs(&["ascendcl", "acl_rt"])
    })
}

fn with_env(mut r: Run, arg: &str) -> Run {
    r = r.arg(arg).env("ACLSIM_MLOCK_MAX", "0");
    for (k, v) in OLD_KERNEL {
        r = r.env(k, v);
    }
    r
}

const BARE_CODES: &[(&str, i32)] =
    &[("register", 0), ("unregister", 0), ("register_pinned", 0), ("unregister_pinned", 0)];

fn want(c: &[(&str, i32)]) -> Vec<(String, i32)> {
    c.iter().map(|(l, c)| (l.to_string(), *c)).collect()
}

/// Annotated, every registration of the pool's pieces is judged as `aclrtMallocHost` memory:
/// page-locked (no ACL-HOSTREG-PAGEABLE-OLD-KERNEL, no rejection even where the records are
/// whole), and ACL_HOST_REG_PINNED on it is said (ACL-HOSTREG-PINNED-LOCKED). Not annotated,
/// the same pool is taken for pageable memory: rejected where the records are whole (under
/// `LD_AUDIT`), warned about elsewhere. Seen failing with `regcheck_annotate_malloc_host`
/// recording nothing: the annotated run under `LD_AUDIT` was rejected with 100000.
#[test]
fn a_pool_carved_from_an_unseen_malloc_host_block_is_judged_as_malloc_host_memory_once_annotated() {
    let s = program();
    // Bare (the macros do nothing without regcheck): the simulated driver accepts every piece.
    for arg in ["plain", "annotated"] {
        let o = with_env(s.bare(), arg).run();
        assert_eq!(o.code(), Some(0), "{}", o.dump());
        assert_eq!(codes(&o), want(BARE_CODES), "bare {arg}: {}", o.dump());
        assert!(!o.stdout.lines().any(|l| l.starts_with("annotate ") && !l.ends_with(" 0")), "{}", o.dump());
    }
    let runs = |arg: &str| -> Vec<(String, Outcome)> {
        let mut v: Vec<(String, Outcome)> =
            MODES.iter().map(|&m| (format!("{m:?}"), with_env(s.run(m), arg).run())).collect();
        v.push(("Preload+audit".into(), with_env(s.run(Mode::Preload), arg).audit().run()));
        v
    };
    for (how, o) in runs("annotated") {
        let ctx = || format!("annotated, {how}\n{}", o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        assert_eq!(codes(&o), want(BARE_CODES), "{}", ctx());
        for l in ["get1", "put1", "get2", "put2"] {
            assert!(o.stdout.contains(&format!("annotate {l} 0\n")), "{l}: {}", ctx());
        }
        assert!(!o.stderr.contains("[ACL-HOSTREG-PAGEABLE-OLD-KERNEL]"), "{}", ctx());
        assert!(o.stderr.contains("[ACL-HOSTREG-PINNED-LOCKED]"), "{}", ctx());
        assert!(!o.stderr.contains("regcheck: error"), "{}", ctx());
    }
    for (how, o) in runs("plain") {
        let ctx = || format!("plain, {how}\n{}", o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        assert!(o.stderr.contains("[ACL-HOSTREG-PAGEABLE-OLD-KERNEL]"), "{}", ctx());
        assert!(!o.stderr.contains("[ACL-HOSTREG-PINNED-LOCKED]"), "{}", ctx());
        if how == "Preload+audit" {
            assert_eq!(codes(&o)[0], ("register".to_string(), 100000), "{}", ctx());
        }
    }
}

/// The macros need no `-lregcheck`: the program built without regcheck, run with
/// `LD_PRELOAD`, reaches regcheck through its weak references.
#[test]
fn the_annotation_macros_reach_a_preloaded_regcheck_from_a_program_built_without_it() {
    let exe = Program::c("annotate_pool", &["tests/c/annotate_pool.c"]).link(Link::Bare).libs(&["ascendcl", "acl_rt"]);
    let o = with_env(Run::new(exe.build()).preload(testkit::regcheck().shared), "annotated").audit().run();
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    assert_eq!(codes(&o), want(BARE_CODES), "{}", o.dump());
    assert!(!o.stderr.contains("[ACL-HOSTREG-PAGEABLE-OLD-KERNEL]"), "{}", o.dump());
}

/// The Python face (`regcheck.annotate_malloc_host`, `regcheck.annotate_free`, through `ctypes`),
/// with the pool's registrations made through `ctypes` too, under `regcheck run --audit`'s
/// set-up (`LD_PRELOAD` and the `LD_AUDIT` module): annotated, the piece registers; not, it is
/// rejected as pageable memory on an old kernel. Without the layer the functions do nothing and
/// say so (`False`). Seen failing with the module's functions missing (AttributeError).
#[test]
fn the_python_module_annotates_a_pool_through_ctypes() {
    let python = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is needed for the ctypes tests");
    let python = String::from_utf8(python.stdout).unwrap().trim().to_string();
    let root = testkit::workspace_root();
    let run = |arg: &str, layer: bool| {
        let mut r = Run::new(&python)
            .arg(root.join("tests/py/annotate_pool.py"))
            .arg(arg)
            .env("PYTHONPATH", root.join("python"))
            .env("LD_LIBRARY_PATH", testkit::sim_lib_dir())
            .env("ACLSIM_MLOCK_MAX", "0");
        for (k, v) in OLD_KERNEL {
            r = r.env(k, v);
        }
        if layer {
            r = r.preload(testkit::regcheck().shared).audit();
        }
        r.run()
    };
    let o = run("annotated", true);
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    assert_eq!(codes(&o), want(&[("register", 0), ("unregister", 0)]), "{}", o.dump());
    assert!(o.stdout.contains("annotate get True\n"), "{}", o.dump());
    assert!(o.stdout.contains("annotate put True\nannotate put_again False\n"), "{}", o.dump());
    assert!(!o.stderr.contains("[ACL-HOSTREG-PAGEABLE-OLD-KERNEL]"), "{}", o.dump());
    let o = run("plain", true);
    assert_eq!(codes(&o)[0], ("register".to_string(), 100000), "{}", o.dump());
    assert!(o.stderr.contains("[ACL-HOSTREG-PAGEABLE-OLD-KERNEL]"), "{}", o.dump());
    let o = run("annotated", false);
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    assert!(o.stdout.contains("annotate get False\n"), "without the layer: {}", o.dump());
    assert_eq!(codes(&o), want(&[("register", 0), ("unregister", 0)]), "{}", o.dump());
}
