//! The settings a user sets through the environment: the mode, per-rule overrides, the log
//! level and file, the end-of-run summary, the cap on repeated messages, the error exit code.

use crate::{codes, run_in, V2};
use testkit::{Mode, MODES};

#[test]
fn report_mode_logs_and_forwards_everything() {
    for mode in MODES {
        let o = run_in(mode, "align", &[("REGCHECK_MODE", "report")]);
        assert_eq!(codes(&o), vec![("register".to_string(), 507899)], "the vendor's own answer: {}", o.dump());
        assert_eq!(o.sim_calls(V2), 1);
        assert!(o.stderr.contains("[ACL-HOSTREG-ALIGN]") && o.stderr.contains("report mode"), "{}", o.dump());
    }
}

#[test]
fn off_mode_is_pure_pass_through() {
    for mode in MODES {
        let o = run_in(mode, "align", &[("REGCHECK_MODE", "off")]);
        assert_eq!(codes(&o), vec![("register".to_string(), 507899)], "{}", o.dump());
        assert_eq!(o.sim_calls(V2), 1);
        assert!(!o.stderr.contains("regcheck:"), "{}", o.dump());
    }
}

#[test]
fn per_rule_overrides() {
    // Lowered to a warning: logged, forwarded, the vendor answers.
    let o = run_in(Mode::Preload, "align", &[("REGCHECK_RULES", "ACL-HOSTREG-ALIGN=warn")]);
    assert_eq!(codes(&o), vec![("register".to_string(), 507899)], "{}", o.dump());
    assert!(o.stderr.contains("warning: [ACL-HOSTREG-ALIGN]"), "{}", o.dump());
    // Off by prefix: silent.
    let o = run_in(Mode::Shared, "align", &[("REGCHECK_RULES", "ACL-HOSTREG-*=off")]);
    assert_eq!(o.sim_calls(V2), 1);
    assert!(!o.stderr.contains("ACL-HOSTREG-ALIGN"), "{}", o.dump());
    // Raised to an error: a warn rule now rejects, with the family's parameter code.
    let o = run_in(Mode::Static, "size_pages", &[("REGCHECK_RULES", "ACL-HOSTREG-SIZE-PAGES=error")]);
    assert_eq!(codes(&o)[0], ("register".to_string(), 100000), "{}", o.dump());
    assert_eq!(o.sim_calls(V2), 0);
    // A misspelt variable or value is reported, not ignored.
    let o = run_in(Mode::Preload, "good", &[("REGCHECK_MOD", "report"), ("REGCHECK_RULES", "ACL-NOPE=warn")]);
    assert!(o.stderr.contains("REGCHECK_MOD is not a regcheck variable (did you mean REGCHECK_MODE?)"), "{}", o.dump());
    assert!(o.stderr.contains("matches no rule ID"), "{}", o.dump());
}

#[test]
fn info_level_logs_settings_and_environment_once() {
    let o = run_in(Mode::Preload, "good", &[("REGCHECK_LOG", "info")]);
    assert_eq!(o.stderr.matches("regcheck 0.").count(), 1, "{}", o.dump());
    assert!(o.stderr.contains("mode=enforce") && o.stderr.contains("page size"), "{}", o.dump());
    assert!(o.stderr.contains("SoC \"Ascend910B1\""), "{}", o.dump());
}

#[test]
fn log_file() {
    let path = testkit::target_dir().join("acl-log-file.log");
    let _ = std::fs::remove_file(&path);
    let o = run_in(Mode::Preload, "align", &[("REGCHECK_LOG_FILE", path.to_str().unwrap())]);
    assert!(!o.stderr.contains("[ACL-HOSTREG-ALIGN]"), "{}", o.dump());
    let log = std::fs::read_to_string(&path).unwrap();
    assert!(log.contains("[ACL-HOSTREG-ALIGN]"), "{log}");
}

/// The count of a summary line of `rule`'s group (`regcheck:      5  error  RULE  at ...`).
fn group_count(line: &str, rule: &str) -> Option<u64> {
    let rest = line.strip_prefix("regcheck: ")?;
    let mut words = rest.split_whitespace();
    let n = words.next()?.parse().ok()?;
    (words.nth(1)? == rule).then_some(n)
}

#[test]
fn end_of_run_summary() {
    let o = run_in(Mode::Preload, "align", &[("REGCHECK_SUMMARY", "1")]);
    assert!(o.stderr.contains("regcheck: summary: 1 error from 1 call site; 1 rejected"), "{}", o.dump());
    assert!(o.stderr.lines().any(|l| group_count(l, "ACL-HOSTREG-ALIGN") == Some(1)), "{}", o.dump());
    let o = run_in(Mode::Shared, "freehost_registered", &[("REGCHECK_SUMMARY", "1")]);
    assert!(o.stderr.contains("1 host registration(s) never unregistered"), "leaks are reported: {}", o.dump());
}

#[test]
fn repeated_messages_are_capped_but_still_enforced() {
    for mode in MODES {
        let o = run_in(mode, "align_many", &[("REGCHECK_MAX_REPEATS", "3"), ("REGCHECK_SUMMARY", "1")]);
        assert_eq!(codes(&o).iter().filter(|(_, c)| *c == 100000).count(), 5, "{}", o.dump());
        assert_eq!(o.sim_calls(V2), 0);
        assert_eq!(o.stderr.matches("[ACL-HOSTREG-ALIGN]").count(), 3, "{}", o.dump());
        assert_eq!(o.stderr.matches("last report of ACL-HOSTREG-ALIGN").count(), 1, "{}", o.dump());
        // past the cap, each rejection is still the thread's last one ...
        for i in 0..5 {
            assert!(o.stdout.contains(&format!("last_names_call {i} 1\n")), "rejection {i}: {}", o.dump());
        }
        // ... and counted in the summary
        assert!(
            o.stderr.lines().any(|l| group_count(l, "ACL-HOSTREG-ALIGN") == Some(5)),
            "the summary counts all 5: {}",
            o.dump()
        );
        let all = run_in(mode, "align_many", &[("REGCHECK_MAX_REPEATS", "0")]);
        assert_eq!(all.stderr.matches("[ACL-HOSTREG-ALIGN]").count(), 5, "{}", all.dump());
    }
}

#[test]
fn error_exit_code_for_ci() {
    // Report mode: the run goes through, but the exit status says something was wrong.
    let o = run_in(Mode::Preload, "align", &[("REGCHECK_MODE", "report"), ("REGCHECK_ERROR_EXITCODE", "42")]);
    assert_eq!(o.code(), Some(42), "{}", o.dump());
    assert!(o.stderr.contains("exiting with status 42"), "{}", o.dump());
    let o = run_in(Mode::Static, "align", &[("REGCHECK_ERROR_EXITCODE", "42")]);
    assert_eq!(o.code(), Some(42), "{}", o.dump());
    // Warnings alone do not change it; neither does a clean run.
    let o = run_in(Mode::Shared, "size_pages", &[("REGCHECK_ERROR_EXITCODE", "42")]);
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    let o = run_in(Mode::Preload, "good", &[("REGCHECK_ERROR_EXITCODE", "42")]);
    assert_eq!(o.code(), Some(0), "{}", o.dump());
}

/// `REGCHECK_ERROR_EXITCODE` takes 1 to 255; anything else is refused with a warning and the
/// exit status is left alone.
#[test]
fn error_exit_code_range() {
    for (value, status) in [("1", 1), ("255", 255)] {
        let o = run_in(Mode::Preload, "align", &[("REGCHECK_ERROR_EXITCODE", value)]);
        assert_eq!(o.code(), Some(status), "{value}: {}", o.dump());
        assert!(!o.stderr.contains("not an exit status"), "{value}: {}", o.dump());
    }
    for value in ["0", "256", "-1", "junk", ""] {
        let o = run_in(Mode::Preload, "align", &[("REGCHECK_ERROR_EXITCODE", value)]);
        assert_eq!(o.code(), Some(0), "{value:?}: {}", o.dump());
        assert!(o.stderr.contains("[ACL-HOSTREG-ALIGN]"), "{value:?}: {}", o.dump());
        assert!(
            o.stderr
                .contains(&format!("REGCHECK_ERROR_EXITCODE={value:?} is not an exit status from 1 to 255; ignored")),
            "{value:?}: {}",
            o.dump()
        );
    }
}
