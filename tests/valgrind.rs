//! regcheck under valgrind's memcheck: the scenario programs, linked with libregcheck.so and
//! with libregcheck.a, make no invalid read or write, no use of uninitialised memory, in
//! regcheck or in what it does to the caller's memory, for good and bad calls alike.

use std::sync::OnceLock;

use testkit::{Link, Program, Run};

fn exe(link: Link) -> std::path::PathBuf {
    static EXES: OnceLock<(std::path::PathBuf, std::path::PathBuf)> = OnceLock::new();
    let (shared, static_) = EXES.get_or_init(|| {
        let build = |l| {
            Program::c("acl_scenarios", &["tests/c/acl_scenarios.c"])
                .link(l)
                .libs(&["ascendcl"])
                .define("REGCHECK_LINKED")
                .build()
        };
        (build(Link::RegcheckShared), build(Link::RegcheckStatic))
    });
    if link == Link::RegcheckStatic {
        static_.clone()
    } else {
        shared.clone()
    }
}

fn memcheck(link: Link, scenario: &str) {
    let file = testkit::target_dir().join(format!("valgrind-file-backed-{}.bin", link.mode()));
    let o = Run::new("valgrind")
        .args(["--quiet", "--error-exitcode=99", "--trace-children=no", "--track-origins=yes"])
        .arg(exe(link))
        .arg(scenario)
        .arg(&file)
        // The scenarios were written for the driver's registration path (a device pointer
        // inside a registration is answered there; the runtime's own tables match the base).
        .env("ACLSIM_PIN_REGISTER", "1")
        .env("ACLSIM_CANN_VERSION", "9.2.0")
        .timeout(std::time::Duration::from_secs(240))
        .run();
    assert_eq!(o.code(), Some(0), "memcheck found errors in scenario {scenario} ({link:?}):\n{}", o.dump());
    // the scenario ran through regcheck to the vendor: calls reached the simulator, none came
    // back "not supported" (200001, what regcheck returns when it cannot find the vendor)
    assert!(!o.stdout.trim().is_empty(), "the scenario printed no result: {}", o.dump());
    assert!(!o.stdout.contains("200001"), "the vendor was not reached in {scenario}: {}", o.dump());
    let codes = o.rc_lines();
    assert!(o.stderr.contains("[aclsim] "), "no call reached the simulator in {scenario}: {}", o.dump());
    if scenario == "good" {
        assert!(codes.iter().all(|(_, c)| *c == 0), "a good call failed under valgrind: {codes:?}\n{}", o.dump());
        o.assert_sim_calls("aclrtHostRegisterV2", 1);
    }
}

#[test]
fn memcheck_clean_on_good_and_bad_calls() {
    let have = std::process::Command::new("valgrind").arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(have, "valgrind is needed for this test (apt-get install valgrind; `cargo xtask test` installs it)");
    for scenario in
        ["good", "align", "file_backed", "devptr", "unregister_interior", "pinned_locked", "device_lifetime"]
    {
        memcheck(Link::RegcheckShared, scenario);
    }
    for scenario in ["good", "overlap", "concurrent"] {
        memcheck(Link::RegcheckStatic, scenario);
    }
}
