//! Release profiles (issue 35 item 1, issue 33 item 1): what the host-registration path
//! decides, with the path known from the CANN release (`REGCHECK_CANN_VERSION`, the vendor's
//! `aclsysGetVersionStr("runtime")`), and at most a warning when it is not.

use crate::{bare, codes, scenarios};
use testkit::Mode;

fn want(list: &[(&str, i32)]) -> Vec<(String, i32)> {
    list.iter().map(|(l, c)| (l.to_string(), *c)).collect()
}

/// V1 `aclrtHostRegister` over a PINNED-only registration: on 9.1.0 (the runtime's tables) the
/// vendor accepts it and its unregistration; regcheck, knowing the release from the vendor,
/// agrees. After 9.1.0 with the driver's pin feature the driver refuses it (507910); regcheck,
/// which cannot ask the driver, warns and forwards.
#[test]
fn v1_over_a_pinned_only_registration_follows_the_release() {
    let tables = want(&[("register_pinned", 0), ("register_v1", 0), ("unregister", 0), ("unregister_again", 507911)]);
    let driver =
        want(&[("register_pinned", 0), ("register_v1", 507910), ("unregister", 0), ("unregister_again", 507911)]);
    // 9.1.0 never asks the driver for its feature: the tables even where the driver has it.
    for (env, want, rule) in [
        (&[("ACLSIM_PIN_REGISTER", "1")][..], &tables, None),
        (&[("ACLSIM_PIN_REGISTER", "1"), ("ACLSIM_CANN_VERSION", "9.2.0")][..], &driver, Some("warns")),
        (&[("ACLSIM_PIN_REGISTER", "0"), ("ACLSIM_CANN_VERSION", "9.2.0")][..], &tables, Some("warns")),
    ] {
        assert_eq!(&codes(&bare("v1_over_pinned", env)), want, "the vendor's behaviour, {env:?}");
        for mode in [Mode::Preload, Mode::Shared] {
            let mut r = scenarios().run(mode).arg("v1_over_pinned").audit();
            for (k, v) in env {
                r = r.env(k, v);
            }
            let o = r.run();
            let ctx = || format!("{env:?}, {mode:?}\n{}", o.dump());
            assert_eq!(&codes(&o), want, "{}", ctx());
            assert_eq!(o.sim_calls("aclrtHostRegister"), 1, "forwarded: {}", ctx());
            assert!(!o.stderr.contains("regcheck: error: [ACL-HOSTREG-OVERLAP]"), "{}", ctx());
            match rule {
                None => assert!(!o.stderr.contains("[ACL-HOSTREG-OVERLAP]"), "{}", ctx()),
                Some(_) => assert!(
                    o.stderr.contains("regcheck: warning: [ACL-HOSTREG-OVERLAP]")
                        && o.stderr.contains("REGCHECK_CANN_VERSION"),
                    "unknown path: a warning that says so: {}",
                    ctx()
                ),
            }
        }
    }
    // REGCHECK_CANN_VERSION names the release: the path is known without asking the vendor.
    let o = scenarios()
        .run(Mode::Preload)
        .arg("v1_over_pinned")
        .env("ACLSIM_PIN_REGISTER", "0")
        .env("ACLSIM_CANN_VERSION", "9.2.0")
        .env("REGCHECK_CANN_VERSION", "9.1.0")
        .audit()
        .run();
    assert_eq!(codes(&o), tables, "{}", o.dump());
    assert!(!o.stderr.contains("[ACL-HOSTREG-OVERLAP]"), "{}", o.dump());
}
