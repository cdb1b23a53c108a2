//! Whole programs: the demos (one process and two) bare and under regcheck, and a C program
//! linking libregcheck.a without HIXL.

use crate::LIBS;
use testkit::{Link, Program, Run};

#[test]
fn the_demo_passes_bare_and_under_regcheck() {
    let bare = Program::cxx("hixl_demo", &["examples-c/hixl_demo.cpp"]).link(Link::Bare).libs(LIBS).build();
    let linked = Program::cxx("hixl_demo", &["examples-c/hixl_demo.cpp"]).link(Link::RegcheckShared).libs(LIBS).build();
    for r in [Run::new(&bare), Run::new(&bare).preload(testkit::regcheck().shared), Run::new(&linked)] {
        let o = r.run();
        o.assert_success().assert_stdout_contains("identical").assert_stdout_contains("hixl_demo: OK");
        assert!(!o.stderr.contains("regcheck: error") && !o.stderr.contains("regcheck: warning"), "{}", o.dump());
    }
    let o = Run::new(&bare).arg("--mistakes").preload(testkit::regcheck().shared).run();
    o.assert_success();
    for rule in [
        "HIXL-NOT-INITIALIZED",
        "HIXL-REG-NULL-ADDR",
        "HIXL-REG-LEN-ZERO",
        "HIXL-REG-MEMTYPE",
        "HIXL-REG-HOST-ORIGIN",
        "HIXL-REG-OVERLAP",
        "HIXL-REG-DEVICE-HUGE",
        "HIXL-XFER-NOT-CONNECTED",
        "HIXL-REG-AFTER-CONNECT",
        "HIXL-XFER-LOCAL-UNREGISTERED",
        "HIXL-XFER-EMPTY",
        "HIXL-DEREG-CONNECTED",
        "HIXL-DEREG-UNKNOWN",
        "HIXL-DEREG-NULL",
        "HIXL-FINALIZE-LEAK",
    ] {
        assert!(o.stderr.contains(&format!("[{rule}]")), "{rule} missing from the demo: {}", o.dump());
    }
    Run::new(&bare).arg("--mistakes").run().assert_success();
}

#[test]
fn a_c_program_links_libregcheck_a_without_hixl() {
    // A C program using regcheck's own API links libregcheck.a with the ACL library only.
    let dir = testkit::target_dir().join("testkit");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("hixl_no_hixl.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\n#include \"regcheck.h\"\nint main(void) { printf(\"linked %s\\n\", regcheck_version()); return 0; }\n",
    )
    .unwrap();
    let exe = Program::c("hixl_no_hixl", &[&src]).link(Link::RegcheckStatic).libs(&["ascendcl"]).build();
    Run::new(exe).run().assert_success().assert_stdout_contains("linked ");
    // And the options bridge inside it references no symbol at all (no vendor symbol, no
    // libstdc++), so nothing beyond Rust's own native libraries is needed.
    let lib = testkit::regcheck().static_lib;
    let members = std::process::Command::new("ar").arg("t").arg(&lib).output().expect("ar");
    let listing = String::from_utf8_lossy(&members.stdout).into_owned();
    let member =
        listing.lines().find(|m| m.contains("hixl_bridge")).expect("the bridge is in libregcheck.a").to_string();
    let obj = dir.join("hixl_bridge_member.o");
    let bytes = std::process::Command::new("ar").arg("p").arg(&lib).arg(&member).output().expect("ar p").stdout;
    std::fs::write(&obj, bytes).unwrap();
    let undefined = std::process::Command::new("nm").arg("-u").arg(&obj).output().expect("nm");
    assert!(undefined.status.success());
    assert_eq!(String::from_utf8_lossy(&undefined.stdout).trim(), "", "the bridge needs no symbol");
}

#[test]
fn the_two_process_demo_names_the_late_registration_in_the_server() {
    let src = ["examples-c/hixl_two_process.cpp"];
    let bare = Program::cxx("hixl_two_process", &src).link(Link::Bare).libs(LIBS).build();
    let linked = Program::cxx("hixl_two_process", &src).link(Link::RegcheckShared).libs(LIBS).build();
    // Bare: the first read works; the second fails in the client, with a bare code.
    let o = Run::new(&bare).run();
    o.assert_success().assert_stdout_contains("TransferSync(READ the first buffer) -> 0");
    assert!(o.stdout.contains("TransferSync(READ the second buffer) -> 103900"), "{}", o.dump());
    assert!(!o.stderr.contains("regcheck:"), "{}", o.dump());
    // Under regcheck (preloaded, or linked ahead of the vendor): the server's late
    // RegisterMem is named where it happens, with the fix; nothing else is reported. The
    // client's connection is counted the cheaper way, and either way when told
    // (REGCHECK_TEST_PEERS: sock_diag netlink, or /proc/self/fd as where netlink is
    // unavailable): the same answer.
    let preload = || Run::new(&bare).preload(testkit::regcheck().shared);
    let (diag, fd) = (preload().env("REGCHECK_TEST_PEERS", "diag"), preload().env("REGCHECK_TEST_PEERS", "fd"));
    for r in [preload(), Run::new(&linked), diag, fd] {
        let o = r.run();
        o.assert_success();
        assert!(o.stderr.contains("regcheck: warning: [HIXL-REG-AFTER-CONNECT] Hixl::RegisterMem"), "{}", o.dump());
        assert!(o.stderr.contains("from peers in other processes"), "{}", o.dump());
        assert!(o.stderr.contains("    fix: register all local memory before Connect"), "{}", o.dump());
        assert_eq!(o.messages().len(), 1, "one finding: {}", o.dump());
    }
}
