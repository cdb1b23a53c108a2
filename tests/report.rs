//! What a team acts on, through the doors users use (a C program compiled with `-g`, run under
//! `LD_PRELOAD` and through `regcheck run`; tests/c/report_sites.c): a run with findings ends
//! with a summary grouped by rule and call site without being asked, repeats from one call site
//! collapse in the log, every finding's first line is short with its details indented below,
//! and a new user silences one finding by its call site with a generated suppression entry.

use std::path::PathBuf;
use std::sync::OnceLock;

use testkit::{Link, Outcome, Program, Run};

const SRC: &str = "tests/c/report_sites.c";

fn exe() -> PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| Program::c("report_sites", &[SRC]).link(Link::Bare).libs(&["ascendcl"]).build()).clone()
}

fn preloaded(scenario: &str, env: &[(&str, &str)]) -> Outcome {
    // As a user runs it: nothing set (testkit turns the summary off by default).
    let mut r = Run::new(exe())
        .preload(testkit::regcheck().shared)
        .arg(scenario)
        .env_remove("ACLSIM_TRACE")
        .env_remove("REGCHECK_SUMMARY");
    for (k, v) in env {
        r = r.env(k, v);
    }
    r.run()
}

/// `regcheck run OPTIONS... report_sites SCENARIO`.
fn regcheck_run(options: &[&str], scenario: &str) -> Outcome {
    let rc = testkit::regcheck();
    Run::new(&rc.cli)
        .arg("run")
        .arg("--lib-dir")
        .arg(&rc.lib_dir)
        .args(options)
        .arg("--")
        .arg(exe())
        .arg(scenario)
        .env_remove("ACLSIM_TRACE")
        .env_remove("REGCHECK_SUMMARY")
        .run()
}

/// The line of `SRC` that carries `CALLSITE:<tag>`.
fn line_of(tag: &str) -> usize {
    let text = std::fs::read_to_string(testkit::workspace_root().join(SRC)).unwrap();
    let marker = format!("CALLSITE:{tag} ");
    1 + text.lines().position(|l| l.contains(&marker)).unwrap_or_else(|| panic!("no {marker} in {SRC}"))
}

/// The first lines of findings: `regcheck: <level>: [RULE] ...`, without the prefix.
fn first_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("regcheck: error: ").or_else(|| l.strip_prefix("regcheck: warning: ")))
        .filter(|l| l.starts_with('['))
        .collect()
}

#[test]
fn a_run_with_findings_ends_with_a_grouped_summary_without_being_asked() {
    let o = preloaded("repeats", &[]);
    let ctx = || o.dump();
    assert_eq!(o.code(), Some(0), "{}", ctx());
    let (hot, cold) = (line_of("hot"), line_of("cold"));
    let summary: Vec<&str> = o.stderr.lines().skip_while(|l| !l.starts_with("regcheck: summary: ")).collect();
    assert_eq!(
        summary.first().copied(),
        Some("regcheck: summary: 152 errors from 2 call sites; 152 rejected, 0 forwarded, 0 suppressed"),
        "{}",
        ctx()
    );
    // each (rule, call site) with its count, most frequent first
    assert!(
        summary[1].contains("150  error")
            && summary[1].contains("ACL-HOSTREG-ALIGN")
            && summary[1]
                .contains(&format!("at hot_loop (report_sites.c:{hot}) (3 logged, and 147 more from this call site)")),
        "{}",
        ctx()
    );
    assert!(
        summary[2].contains("2  error") && summary[2].contains(&format!("at cold_path (report_sites.c:{cold})")),
        "{}",
        ctx()
    );
    // Repeats from one call site collapse: 3 messages, one line saying the rest are counted.
    let hot_at = format!("    at hot_loop (report_sites.c:{hot})");
    let lines: Vec<&str> = o.stderr.lines().collect();
    let hot_findings = lines.windows(2).filter(|w| w[0].contains("] aclrtHostRegisterV2(") && w[1] == hot_at).count();
    assert_eq!(hot_findings, 3, "{}", ctx());
    assert!(
        o.stderr.contains("more findings from this call site (after 3 logged) are counted, not logged"),
        "{}",
        ctx()
    );
    let cold_at = format!("    at cold_path (report_sites.c:{cold})");
    assert_eq!(lines.iter().filter(|l| **l == cold_at).count(), 2, "another call site is still logged: {}", ctx());

    // REGCHECK_SUMMARY=0 turns it off; a clean run has none.
    let o = preloaded("repeats", &[("REGCHECK_SUMMARY", "0")]);
    assert!(!o.stderr.contains("regcheck: summary:"), "{}", o.dump());
    let o = preloaded("clean", &[]);
    assert!(!o.stderr.contains("regcheck: summary:"), "{}", o.dump());
    // JSON: the groups with their counts
    let o = preloaded("repeats", &[("REGCHECK_LOG_FORMAT", "json")]);
    let summary = o
        .stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == "summary")
        .unwrap_or_else(|| panic!("{}", o.dump()));
    assert_eq!(summary["headline"], "152 errors from 2 call sites; 152 rejected, 0 forwarded, 0 suppressed");
    assert_eq!(summary["groups"][0]["count"], 150, "{summary}");
    assert_eq!(summary["groups"][0]["call_site"]["function"], "hot_loop", "{summary}");
    assert_eq!(summary["outcomes"]["rejected"], 152, "{summary}");
}

#[test]
fn every_first_line_is_short_and_names_where_to_read_more() {
    let o = preloaded("repeats", &[("REGCHECK_MAX_REPEATS", "0")]);
    let heads = first_lines(&o.stderr);
    assert_eq!(heads.len(), 152, "{}", o.dump());
    for h in &heads {
        assert!(h.chars().count() <= 200, "{} characters: {h}", h.chars().count());
        assert!(h.contains("`ptr`: ") && h.contains("(rejected with 100000 ACL_ERROR_INVALID_PARAM)"), "{h}");
    }
    for want in [
        "    fix: allocate with posix_memalign",
        "    evidence: certain",
        "    more: regcheck explain ACL-HOSTREG-ALIGN; share/doc/regcheck/rules.md#acl-hostreg-align",
    ] {
        assert!(o.stderr.lines().any(|l| l.starts_with(want)), "{want}: {}", o.dump());
    }
}

#[test]
fn a_new_user_silences_one_finding_by_call_site_with_a_generated_entry() {
    let hot = line_of("hot");
    let o = regcheck_run(&["--gen-suppressions"], "repeats");
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    // The entry printed under the hot loop's first finding, copied as it is.
    let lines: Vec<&str> = o.stderr.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim() == "ACL-HOSTREG-ALIGN at hot_loop")
        .and_then(|i| i.checked_sub(1))
        .unwrap_or_else(|| panic!("no generated entry: {}", o.dump()));
    let end = start + lines[start..].iter().position(|l| l.trim() == "}").unwrap();
    let entry = lines[start..=end].join("\n");
    assert!(entry.contains(&format!("src:report_sites.c:{hot}")), "{entry}");
    let dir = testkit::target_dir().join("report-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("hot.supp");
    std::fs::write(&file, format!("# the hot loop's known misalignment\n{entry}\n")).unwrap();

    let o = regcheck_run(&["--suppressions", file.to_str().unwrap()], "repeats");
    let ctx = || o.dump();
    assert_eq!(o.code(), Some(0), "{}", ctx());
    assert!(!o.stderr.lines().any(|l| l.starts_with("    at hot_loop (")), "silenced, not logged: {}", ctx());
    assert!(
        o.stderr
            .lines()
            .any(|l| l.contains("150  suppressed") && l.contains(&format!("at hot_loop (report_sites.c:{hot})"))),
        "counted as suppressed: {}",
        ctx()
    );
    assert!(o.stdout.contains("rc hot 507899"), "not rejected: the vendor answers: {}", ctx());
    assert!(o.stdout.contains("rc cold 100000"), "the other call site is still checked: {}", ctx());
    assert!(
        o.stderr.contains("regcheck: summary: 2 errors from 1 call site; 2 rejected, 0 forwarded, 150 suppressed"),
        "{}",
        ctx()
    );

    // A mistake names the file and line: `regcheck run` refuses to start, the library says so.
    let bad = dir.join("bad.supp");
    std::fs::write(&bad, "{\n  typo\n  regcheck:ACL-HOSTREG-ALIGN\n  fn:hot_loop\n}\n").unwrap();
    let o = regcheck_run(&["--suppressions", bad.to_str().unwrap()], "repeats");
    assert_eq!(o.code(), Some(127), "{}", o.dump());
    assert!(o.stderr.contains(&format!("{}:4: expected fun:, src:, obj: or ...", bad.display())), "{}", o.dump());
    let o = preloaded("repeats", &[("REGCHECK_SUPPRESSIONS", bad.to_str().unwrap())]);
    assert!(
        o.stderr.contains(&format!("regcheck: error: REGCHECK_SUPPRESSIONS: {}:4: ", bad.display())),
        "{}",
        o.dump()
    );
    // An entry that matched nothing is listed in the summary.
    let unused = dir.join("unused.supp");
    std::fs::write(&unused, "{\n  never\n  regcheck:HIXL-*\n}\n").unwrap();
    let o = preloaded("repeats", &[("REGCHECK_SUPPRESSIONS", unused.to_str().unwrap())]);
    assert!(
        o.stderr.contains(&format!("suppression that matched nothing: never ({}:1)", unused.display())),
        "{}",
        o.dump()
    );
}
