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

/// The call sites of the findings log: a finding that is logged keeps its site; one beyond
/// `REGCHECK_MAX_REPEATS` keeps it only once the program has read the log (which spares the
/// unwinding to a call that warns every time and nobody asks).
#[test]
fn findings_beyond_the_repeat_limit_keep_their_site_once_the_log_is_read() {
    let exe = Program::c("findings_sites", &["tests/c/findings_sites.c"])
        .link(Link::RegcheckShared)
        .libs(&["ascendcl"])
        .build();
    for (arg, with_site) in [("late", 2), ("early", 5)] {
        let o = Run::new(&exe).arg(arg).env("REGCHECK_MAX_REPEATS", "2").run();
        assert_eq!(o.code(), Some(0), "{}", o.dump());
        let sites: Vec<&str> = o.stdout.lines().filter_map(|l| l.strip_prefix("site ")).collect();
        assert_eq!(sites.len(), 5, "{arg}: {}", o.dump());
        for (i, s) in sites.iter().enumerate() {
            let site = s.split_once(' ').map_or("", |(_, site)| site);
            if i < with_site {
                assert!(site.starts_with("misaligned (findings_sites.c:"), "{arg}: finding {i}: {}", o.dump());
            } else {
                assert_eq!(site, "", "{arg}: finding {i}: {}", o.dump());
            }
        }
        assert_eq!(o.stderr.matches("[ACL-HOSTREG-ALIGN]").count(), 2, "{arg}: {}", o.dump());
    }
}
