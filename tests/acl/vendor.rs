//! Finding the real vendor library: loaded late, named by `REGCHECK_ACL_LIB` /
//! `REGCHECK_HIXL_LIB`, in an install root, or nowhere (200001).

use crate::{codes, V2};
use testkit::{Link, Program, Run};

#[test]
fn missing_vendor_returns_api_not_support() {
    let exe = Program::c("acl_novendor", &["tests/c/acl_novendor.c"]).link(Link::RegcheckShared).libs(&[]).build();
    let empty = testkit::target_dir().join("no-ascend-here");
    let o = Run::new(&exe)
        .env("HOME", &empty)
        .env("ASCEND_HOME_PATH", &empty)
        .env_remove("ASCEND_INSTALL_PATH")
        .env("REGCHECK_ACL_LIB", empty.join("libascendcl.so"))
        .run();
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    assert!(o.stdout.contains("rc register 200001"), "{}", o.dump());
    assert!(
        o.stderr.contains("cannot find the vendor's aclrtHostRegisterV2") && o.stderr.contains("RTLD_NEXT"),
        "{}",
        o.dump()
    );
    assert_eq!(
        o.stderr.matches("cannot find the vendor's aclrtHostRegisterV2").count(),
        1,
        "logged once: {}",
        o.dump()
    );
    // What regcheck asks the vendor for itself (SoC, device, context, driver version) is
    // not the application's call: its absence is no error line (an old CANN without
    // aclsysGetVersionStr logged one in every process).
    for probe in ["aclrtGetSocName", "aclrtGetDevice", "aclrtGetCurrentContext", "aclsysGetVersionStr"] {
        assert!(!o.stderr.contains(&format!("cannot find the vendor's {probe}")), "{probe}: {}", o.dump());
    }

    // The vendor loaded late (dlopen, RTLD_LOCAL): found from the next call on.
    let o = Run::new(&exe)
        .arg("late")
        .env("HOME", &empty)
        .env("LD_LIBRARY_PATH", testkit::sim_lib_dir())
        .env_remove("ASCEND_INSTALL_PATH")
        .env("ASCEND_HOME_PATH", &empty)
        .run();
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    assert!(o.stdout.contains("rc register 200001"), "{}", o.dump());
    assert!(o.stdout.contains("rc register_after_dlopen 0") && o.stdout.contains("rc unregister 0"), "{}", o.dump());
    assert_eq!(o.sim_calls(V2), 1, "{}", o.dump());
}

/// A directory with copies of the simulator's libraries, laid out as a vendor install root
/// (`<root>/lib64`), for the install-root search.
fn fake_install_root(name: &str) -> std::path::PathBuf {
    let root = testkit::target_dir().join("fake-ascend-roots").join(name);
    let lib64 = root.join("lib64");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&lib64).unwrap();
    // libascend_hal.so: the driver's library, which the runtime links (found beside it)
    for lib in ["libascend_hal.so", "libacl_rt.so", "libascendcl.so", "libcann_hixl.so"] {
        std::fs::copy(testkit::sim_lib_dir().join(lib), lib64.join(lib)).unwrap();
    }
    root
}

/// The real vendor library, when nothing loaded it: through `REGCHECK_ACL_LIB` /
/// `REGCHECK_HIXL_LIB`, or in an install root (`ASCEND_HOME_PATH`, `ASCEND_INSTALL_PATH`).
#[test]
fn vendor_found_through_the_lib_variables_and_the_install_roots() {
    let acl = Program::c("acl_novendor", &["tests/c/acl_novendor.c"]).link(Link::RegcheckShared).libs(&[]).build();
    let hixl =
        Program::cxx("hixl_novendor", &["tests/c/hixl_novendor.cpp"]).link(Link::RegcheckShared).libs(&[]).build();
    let empty = testkit::target_dir().join("no-ascend-here");
    let root = fake_install_root("home");
    let other_root = fake_install_root("install");
    let base = |exe: &std::path::Path| {
        Run::new(exe).env("HOME", &empty).env("ASCEND_HOME_PATH", &empty).env_remove("ASCEND_INSTALL_PATH")
    };
    let acl_cases = [
        ("REGCHECK_ACL_LIB", testkit::sim_lib_dir().join("libascendcl.so")),
        ("ASCEND_HOME_PATH", root.clone()),
        ("ASCEND_INSTALL_PATH", other_root.clone()),
    ];
    for (var, value) in &acl_cases {
        let o = base(&acl).env(var, value).run();
        let ctx = || format!("{var}={}\n{}", value.display(), o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        // found: regcheck asks the vendor for the context (the program never set a device,
        // so the calls are rejected for that, not with 200001)
        assert_eq!(o.sim_calls("aclrtGetCurrentContext"), 2, "regcheck reached the vendor: {}", ctx());
        assert_eq!(
            codes(&o),
            vec![("register".to_string(), 107002), ("register_again".to_string(), 107002)],
            "{}",
            ctx()
        );
        assert!(o.stderr.contains("[ACL-HOSTREG-NO-CONTEXT]") && !o.stderr.contains("cannot find"), "{}", ctx());
    }
    // without any of them: not supported
    let o = base(&hixl).run();
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    assert!(o.stdout.contains("rc server_create ") && o.sim_calls("HixlCSServerCreate") == 0, "{}", o.dump());
    assert!(o.stderr.contains("cannot find the vendor's HixlCSServerCreate"), "{}", o.dump());
    let hixl_cases = [
        ("REGCHECK_HIXL_LIB", testkit::sim_lib_dir().join("libcann_hixl.so")),
        ("ASCEND_HOME_PATH", root.clone()),
        ("ASCEND_INSTALL_PATH", other_root.clone()),
    ];
    for (var, value) in &hixl_cases {
        let o = base(&hixl).env(var, value).run();
        let ctx = || format!("{var}={}\n{}", value.display(), o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        assert_eq!(codes(&o), vec![("server_create".to_string(), 0), ("server_destroy".to_string(), 0)], "{}", ctx());
        assert_eq!(o.sim_calls("HixlCSServerCreate"), 1, "{}", ctx());
        assert_eq!(o.sim_calls("HixlCSServerDestroy"), 1, "{}", ctx());
    }
}
