//! docs/conformance.md's `regcheck` column, checked: each `ACL-Cnn` row's program
//! (sim/tests/conformance_acl.c) run under `LD_PRELOAD` of libregcheck.so must meet regcheck as
//! the column says: `forwards`, `warns RULE-ID`, `rejects RULE-ID (code)` (every rule that fired,
//! in the order seen, joined by `; `), or `not checked` (regcheck interposes none of the calls).
//! (The bare simulator's answers are checked by crates/testkit/tests/conformance_acl.rs.)

use std::collections::BTreeSet;
use std::process::Command;

use testkit::{workspace_root, Outcome, Program, Run};

/// `(id, regcheck column)` of the `## ACL runtime` rows.
fn acl_rows() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(workspace_root().join("docs/conformance.md")).unwrap();
    let section = text.split("\n## ACL runtime\n").nth(1).expect("a `## ACL runtime` section");
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .filter(|l| l.starts_with("| ACL-C"))
        .map(|l| {
            // the last cell never holds an escaped `|`
            let body = l.trim().trim_end_matches('|');
            let id = body.trim_start_matches('|').split('|').next().unwrap().trim().to_string();
            let last = body.rsplit('|').next().unwrap().trim().to_string();
            (id, last)
        })
        .collect()
}

/// The ACL names libregcheck.so defines (the calls it interposes).
fn interposed(lib: &std::path::Path) -> BTreeSet<String> {
    let out = Command::new("nm").args(["-D", "--defined-only"]).arg(lib).output().expect("nm");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .filter(|n| n.starts_with("acl"))
        .map(str::to_string)
        .collect()
}

/// The column regcheck's log gives: rules from `regcheck: error:` lines of rejected calls are
/// `rejects`, the others `warns`.
fn column(under: &Outcome, bare: &Outcome, interposed: &BTreeSet<String>) -> String {
    let mut rejects: Vec<(String, String)> = Vec::new();
    let mut warns: Vec<String> = Vec::new();
    for line in under.stderr.lines() {
        let (kind, rest) = match (line.strip_prefix("regcheck: error: ["), line.strip_prefix("regcheck: warning: [")) {
            (Some(r), _) => ("error", r),
            (_, Some(r)) => ("warning", r),
            _ => continue,
        };
        let Some((rule, tail)) = rest.split_once(']') else { continue };
        let code = tail
            .find("(rejected with ")
            .map(|i| tail[i + "(rejected with ".len()..].chars().take_while(char::is_ascii_digit).collect::<String>());
        let forwarded = tail.contains("(forwarded)");
        match (kind, code) {
            ("error", Some(c)) if !rejects.iter().any(|(r, k)| r == rule && *k == c) => {
                rejects.push((rule.to_string(), c));
            }
            ("error", Some(_)) => {}
            _ if (forwarded || tail.contains("(rejected with ")) && !warns.iter().any(|w| w == rule) => {
                warns.push(rule.to_string());
            }
            _ => {}
        }
    }
    let mut parts: Vec<String> = rejects.iter().map(|(r, c)| format!("rejects {r} ({c})")).collect();
    parts.extend(warns.iter().filter(|w| !rejects.iter().any(|(r, _)| r == *w)).map(|w| format!("warns {w}")));
    if !parts.is_empty() {
        return parts.join("; ");
    }
    // the calls the row made (the bare run's trace), aclrtSetDevice aside (every row sets a device)
    let checked = bare
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("[aclsim] ")?.split('(').next())
        .any(|name| name != "aclrtSetDevice" && interposed.contains(name));
    if checked { "forwards" } else { "not checked" }.to_string()
}

#[test]
fn acl_rows_meet_regcheck_as_the_table_says() {
    let exe = Program::c("conformance_acl", &["sim/tests/conformance_acl.c"]).libs(&["acl_rt"]).build();
    let lib = testkit::regcheck().shared;
    let names = interposed(&lib);
    let mut failures = Vec::new();
    for (id, want) in acl_rows() {
        let bare = Run::new(&exe).arg(&id).run();
        let under = Run::new(&exe).arg(&id).preload(&lib).run();
        let got = column(&under, &bare, &names);
        if got != want {
            failures.push(format!("{id}: regcheck {got}; the table says {want}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
