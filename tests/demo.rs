//! `cargo xtask demo` (the README's first command) shows what its labels say: run as a user
//! runs it, each step returns what its label claims, bare and under regcheck, the mistakes
//! the labels name draw the finding they claim, and the closing summary counts, per demo, the
//! bare codes, the crashes and the findings that named the problem and the fix.

use std::process::Command;
use std::time::Duration;

/// The output of `cargo xtask demo`, run once.
fn demo_output() -> String {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(testkit::workspace_root()).args(["run", "--quiet", "--package", "xtask", "--", "demo"]);
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        if k == "LD_PRELOAD" || k.starts_with("REGCHECK_") || k.starts_with("ACLSIM_") {
            cmd.env_remove(&key);
        }
    }
    let out = testkit::output_within(&mut cmd, Duration::from_secs(20 * 60)).expect("cargo xtask demo");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "cargo xtask demo failed ({}):\n{text}", out.status);
    text
}

/// The text of the run whose banner title contains `title` (up to the next banner).
fn run_of<'a>(all: &'a str, title: &str) -> &'a str {
    let start = all.find(title).unwrap_or_else(|| panic!("no run `{title}` in:\n{all}"));
    let rest = &all[start..];
    // the banner's closing rule, then the run, then the next banner's opening rule
    let body = rest.find("\n====").map(|i| &rest[i + 5..]).unwrap_or(rest);
    let body = body.find('\n').map(|i| &body[i..]).unwrap_or(body);
    body.find("\n====").map(|i| &body[..i]).unwrap_or(body)
}

/// The code the step labelled `label` returned in `run`, and the text since the previous step.
fn step<'a>(run: &'a str, label: &str) -> (u64, &'a str) {
    let at = run.find(label).unwrap_or_else(|| panic!("no step `{label}` in:\n{run}"));
    let line_end = run[at..].find('\n').map_or(run.len(), |e| at + e);
    let line = &run[at..line_end];
    let code = line.rsplit_once(" -> ").and_then(|(_, c)| c.split_whitespace().next()?.parse().ok());
    let code = code.unwrap_or_else(|| panic!("no code on `{line}`"));
    let before = &run[..at];
    let prev = before.rfind(" -> ").and_then(|i| before[i..].find('\n').map(|e| i + e)).unwrap_or(0);
    (code, &run[prev..at])
}

/// The two numbers (without, with regcheck) of a summary row of the demo titled `demo`.
fn summary_row(all: &str, demo: &str, row: &str) -> (u64, u64) {
    let summary = &all[all.find("Summary: what each run told you").expect("the summary")..];
    let part = &summary[summary.find(&format!("\n  {demo}\n")).unwrap_or_else(|| panic!("{demo}: {summary}"))..];
    let line = part.lines().find(|l| l.trim_start().starts_with(row)).unwrap_or_else(|| panic!("{row}: {part}"));
    let nums: Vec<u64> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    assert_eq!(nums.len(), 2, "{line}");
    (nums[0], nums[1])
}

#[test]
fn the_demo_shows_the_contrast_per_step() {
    let all = demo_output();
    let bare = run_of(&all, "ACL host registration demo: WITHOUT regcheck");
    let checked = run_of(&all, "ACL host registration demo: WITH regcheck");
    for run in [bare, checked] {
        assert_eq!(step(run, "register buf (correct)").0, 0, "{run}");
        assert_eq!(step(run, "unregister buf (correct)").0, 0, "{run}");
        assert_eq!(step(run, "(overlaps the first)").0, 507910, "{run}");
        assert_eq!(step(run, "(not the registered base)").0, 507911, "{run}");
    }
    for (label, rule) in [
        ("(overlaps the first)", "[ACL-HOSTREG-OVERLAP]"),
        ("(not the registered base)", "[ACL-HOSTUNREG-NOT-REGISTERED]"),
        ("(not page-aligned)", "[ACL-HOSTREG-ALIGN]"),
        ("with flag 0", "[ACL-HOSTREG-FLAG-INVALID]"),
    ] {
        let (_, before) = step(checked, label);
        assert!(before.contains(rule), "`{label}` under regcheck drew no {rule}:\n{before}");
        let (_, before) = step(bare, label);
        assert!(!before.contains("regcheck:"), "{before}");
    }
    // every step labelled correct is, in every run of every demo
    for line in all.lines().filter(|l| l.contains("(correct)") && l.contains(" -> ")) {
        let code = line.rsplit_once(" -> ").and_then(|(_, c)| c.split_whitespace().next()?.parse::<u64>().ok());
        assert_eq!(code, Some(0), "{line}");
    }

    let acl = "ACL host registration demo";
    assert_eq!(summary_row(&all, acl, "crashes"), (1, 0));
    let (bare_codes, checked_codes) = summary_row(&all, acl, "calls failed with a bare code");
    assert!(bare_codes >= 5 && checked_codes == 0, "{bare_codes} {checked_codes}");
    let (none, named) = summary_row(&all, acl, "findings naming problem and fix");
    assert!(none == 0 && named >= 8, "{none} {named}");
    let (bare_codes, checked_codes) = summary_row(&all, "HIXL demo", "calls failed with a bare code");
    assert!(bare_codes >= 5 && checked_codes == 0, "{bare_codes} {checked_codes}");
    let (none, named) = summary_row(&all, "HIXL two-process demo", "findings naming problem and fix");
    assert!(none == 0 && named >= 1, "{none} {named}");
}
