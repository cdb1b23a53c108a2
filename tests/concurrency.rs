//! Concurrency through the C door (tests/c/concurrency.cpp, linked with libregcheck.so and
//! with libregcheck.a): 16 threads on one shared ACL context churn ACL registrations (good and
//! bad calls), HIXL registrations on two shared engines and transfers over a link, and
//! regcheck's registry, read through its C API, is exact at the end; and `fork()` taken again
//! and again while 16 threads are inside regcheck (holding its locks, logging) gives children
//! that can register at once. Every wait is bounded (the children's by the program, which
//! stops at the first hung child, the runs' by the test's timeout).

use std::time::Duration;

use testkit::{Link, Outcome, Program, Run};

fn exe(link: Link) -> std::path::PathBuf {
    Program::cxx("concurrency", &["tests/c/concurrency.cpp"]).link(link).libs(&["cann_hixl", "ascendcl"]).build()
}

fn run(link: Link, scenario: &str, env: &[(&str, &str)]) -> Outcome {
    let mut r = Run::new(exe(link))
        .arg(scenario)
        .env_remove("ACLSIM_TRACE")
        .env("REGCHECK_KERNEL_RELEASE", "6.6.0")
        .env("ACLSIM_KERNEL_RELEASE", "6.6.0")
        // The program's expected codes are the driver path's (a runtime after 9.1.0 with the
        // driver's pin feature): there the driver refuses a misaligned range before it looks
        // for an overlap; 9.1.0's tables answer the overlap (507910) first.
        .env("ACLSIM_CANN_VERSION", "9.2.0")
        .env("ACLSIM_PIN_REGISTER", "1")
        .timeout(Duration::from_secs(180));
    for (k, v) in env {
        r = r.env(k, v);
    }
    r.run()
}

fn numbers(o: &Outcome, key: &str) -> Vec<u64> {
    let line = o.stdout.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("no {key}: {}", o.dump()));
    line.split_whitespace().filter_map(|w| w.parse().ok()).collect()
}

#[test]
fn sixteen_threads_leave_an_exact_registry() {
    for link in [Link::RegcheckShared, Link::RegcheckStatic] {
        let o = run(link, "churn", &[]);
        assert_eq!(o.code(), Some(0), "{link:?}: {}", o.dump());
        assert_eq!(numbers(&o, "failures"), vec![0], "{link:?}: every call returned its expected code: {}", o.dump());
        let host = numbers(&o, "live_host");
        assert_eq!(host[0], host[1], "{link:?}: live host registrations (regcheck, expected): {}", o.dump());
        assert!(host[1] > 0);
        let hixl = numbers(&o, "live_hixl");
        assert_eq!(hixl[0], hixl[1], "{link:?}: live HIXL registrations (regcheck, expected): {}", o.dump());
        assert!(hixl[1] > 0);
        assert!(!o.stderr.contains("internal failure"), "{}", o.dump());
    }
}

#[test]
fn fork_while_sixteen_threads_are_inside_regcheck() {
    // Logging to stderr, and to a log file with every message logged (the threads hold the
    // file's lock often): neither lock may be inherited held.
    for env in [&[][..], &[("REGCHECK_LOG_FILE", "/dev/null"), ("REGCHECK_MAX_REPEATS", "0")][..]] {
        let o = run(Link::RegcheckShared, "fork", env);
        assert_eq!(o.code(), Some(0), "{env:?}: {}", o.dump());
        // The program stops forking at the first hung child (5 s): a hang fails in seconds.
        let n = numbers(&o, "children");
        assert_eq!(n[1..], [0, 0], "{env:?}: children failed, hung: {}", o.dump());
        assert!(n[0] >= 100, "{}", o.dump());
    }
}
