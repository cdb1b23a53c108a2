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
/// agrees. After 9.1.0 the runtime asks the driver for its pinned-register feature
/// (`halSupportFeature`), and so does regcheck: with the feature the driver refuses the V1 call
/// (507910) and regcheck refuses it first, with the same code, as an error; without it (the
/// tables) both accept it.
#[test]
fn v1_over_a_pinned_only_registration_follows_the_release() {
    let tables = want(&[("register_pinned", 0), ("register_v1", 0), ("unregister", 0), ("unregister_again", 507911)]);
    let driver =
        want(&[("register_pinned", 0), ("register_v1", 507910), ("unregister", 0), ("unregister_again", 507911)]);
    // 9.1.0 never asks the driver for its feature: the tables even where the driver has it.
    for (env, want, refused) in [
        (&[("ACLSIM_PIN_REGISTER", "1")][..], &tables, false),
        (&[("ACLSIM_PIN_REGISTER", "1"), ("ACLSIM_CANN_VERSION", "9.2.0")][..], &driver, true),
        (&[("ACLSIM_PIN_REGISTER", "0"), ("ACLSIM_CANN_VERSION", "9.2.0")][..], &tables, false),
    ] {
        assert_eq!(&codes(&bare("v1_over_pinned", env)), want, "the vendor's behaviour, {env:?}");
        for mode in [Mode::Preload, Mode::Shared] {
            let mut r = scenarios().run(mode).arg("v1_over_pinned").env("REGCHECK_LOG", "info").audit();
            for (k, v) in env {
                r = r.env(k, v);
            }
            let o = r.run();
            let ctx = || format!("{env:?}, {mode:?}\n{}", o.dump());
            assert_eq!(&codes(&o), want, "{}", ctx());
            assert!(!o.stderr.contains("regcheck: warning: [ACL-HOSTREG-OVERLAP]"), "the path is known: {}", ctx());
            if refused {
                assert_eq!(o.sim_calls("aclrtHostRegister"), 0, "refused by regcheck: {}", ctx());
                assert!(
                    o.stderr.contains("regcheck: error: [ACL-HOSTREG-OVERLAP]")
                        && o.stderr.contains("the driver pins PINNED-only registrations"),
                    "{}",
                    ctx()
                );
                assert!(
                    o.stderr.contains("halSupportFeature(0, FEATURE_SVM_MEM_REGISTER_HOST_PINNED) answered true"),
                    "{}",
                    ctx()
                );
            } else {
                assert_eq!(o.sim_calls("aclrtHostRegister"), 1, "forwarded: {}", ctx());
                assert!(!o.stderr.contains("[ACL-HOSTREG-OVERLAP]"), "{}", ctx());
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
