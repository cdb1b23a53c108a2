//! regcheck's C API (`regcheck.h`), from a C program linked with the shared and the static
//! library.

use testkit::{Link, Program, Run};

#[test]
fn the_c_api() {
    for link in [Link::RegcheckShared, Link::RegcheckStatic] {
        let exe = Program::c("api_test", &["tests/c/api_test.c"]).link(link).libs(&["ascendcl"]).build();
        let o = Run::new(exe).env("REGCHECK_HDK_VERSION", "25.3.rc1").run();
        assert_eq!(o.code(), Some(0), "{}", o.dump());
        assert!(o.stdout.contains("api ok"), "{}", o.dump());
    }
}
