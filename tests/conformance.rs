//! docs/conformance.md's `regcheck` column, checked: each `ACL-Cnn` row's program
//! (sim/tests/conformance_acl.c) run under `LD_PRELOAD` of libregcheck.so must meet regcheck as
//! the column says: `forwards`, `warns RULE-ID`, `rejects RULE-ID (code)` (every rule that fired,
//! in the order seen, joined by `; `), or `not checked` (regcheck interposes none of the calls).
//! (The bare simulator's answers are checked by crates/testkit/tests/conformance_acl.rs.)

use std::collections::BTreeSet;
use std::process::Command;

use testkit::{workspace_root, Outcome, Program, Run};

/// `(id, inputs, regcheck column)` of the rows of a section (`## ACL runtime` with IDs `ACL-C`,
/// `## HIXL` with `HIXL-C`, `## ADXL` with `ADXL-C`).
fn section_rows(heading: &str, prefix: &str) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(workspace_root().join("docs/conformance.md")).unwrap();
    let section = text.split(&format!("\n## {heading}\n")).nth(1).unwrap_or_else(|| panic!("a `## {heading}` section"));
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .filter(|l| l.starts_with(&format!("| {prefix}")))
        .map(|l| {
            let c = testkit::table_cells(l);
            (c[0].clone(), c[2].clone(), c[c.len() - 1].clone())
        })
        .collect()
}

/// The ACL and HixlCS names libregcheck.so defines (the calls it interposes; the C++ members
/// are told by their trace names, `Hixl::` and `AdxlEngine::`).
fn interposed(lib: &std::path::Path) -> BTreeSet<String> {
    let out = Command::new("nm").args(["-D", "--defined-only"]).arg(lib).output().expect("nm");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .filter(|n| {
            n.starts_with("acl")
                || n.starts_with("Hixl")
                || n.starts_with("_ZN4hixl4Hixl")
                || n.starts_with("_ZN4adxl10AdxlEngine")
                || n.starts_with("_ZN12llm_datadist11LlmDataDist")
        })
        .map(str::to_string)
        .collect()
}

/// The column regcheck's log gives: rules from `regcheck: error:` lines of rejected calls are
/// `rejects`, the others `warns`.
fn column(under: &Outcome, bare: &Outcome, interposed: &BTreeSet<String>) -> String {
    let mut rejects: Vec<(String, String)> = Vec::new();
    let mut warns: Vec<String> = Vec::new();
    let mut explains: Vec<(String, String)> = Vec::new();
    // Every finding of a rejected call says "(rejected with C)"; the one that rejected it is the
    // finding whose rule returns C. A finding regcheck saw (an error it does not enforce) on a
    // call another finding rejected is not a rejection of its own. A code no rule returns (a
    // finding with a code of its own) is its finding's.
    let code_of =
        |rule: &str| regcheck::rules::RuleId::from_name(rule).and_then(|r| r.info().code).map(|c| c.to_string());
    let rejected_codes: Vec<(String, String)> = under
        .stderr
        .lines()
        .filter_map(|l| {
            let (rule, tail) = l.strip_prefix("regcheck: error: [")?.split_once(']')?;
            let i = tail.find("(rejected with ")?;
            Some((
                rule.to_string(),
                tail[i + "(rejected with ".len()..].chars().take_while(char::is_ascii_digit).collect(),
            ))
        })
        .collect();
    let owns = |rule: &str, c: &str| {
        code_of(rule).as_deref() == Some(c)
            || !rejected_codes.iter().any(|(r, k)| k == c && code_of(r).as_deref() == Some(c))
    };
    // Likewise for the refusals regcheck explains.
    const REFUSED: &str = "(forwarded; the vendor refused it with ";
    let refused_of = |tail: &str| {
        tail.find(REFUSED)
            .map(|i| tail[i + REFUSED.len()..].chars().take_while(char::is_ascii_digit).collect::<String>())
    };
    let explained_codes: Vec<(String, String)> = under
        .stderr
        .lines()
        .filter_map(|l| {
            let (rule, tail) = l.strip_prefix("regcheck: error: [")?.split_once(']')?;
            Some((rule.to_string(), refused_of(tail)?))
        })
        .collect();
    let explains_it = |rule: &str, c: &str| {
        code_of(rule).as_deref() == Some(c)
            || !explained_codes.iter().any(|(r, k)| k == c && code_of(r).as_deref() == Some(c))
    };
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
        // A call regcheck left to the vendor, which refused it: the finding explains the refusal.
        let refused = refused_of(tail);
        match (kind, code) {
            ("error", None) if refused.as_deref().is_some_and(|c| explains_it(rule, c)) => {
                let c = refused.unwrap_or_default();
                if !explains.iter().any(|(r, k)| r == rule && *k == c) {
                    explains.push((rule.to_string(), c));
                }
            }
            ("error", Some(c)) if owns(rule, &c) && !rejects.iter().any(|(r, k)| r == rule && *k == c) => {
                rejects.push((rule.to_string(), c));
            }
            ("error", Some(c)) if owns(rule, &c) => {}
            ("error", Some(_)) if !warns.iter().any(|w| w == rule) => warns.push(rule.to_string()),
            ("error", Some(_)) => {}
            _ if (forwarded || refused.is_some() || tail.contains("(rejected with "))
                && !warns.iter().any(|w| w == rule) =>
            {
                warns.push(rule.to_string());
            }
            _ => {}
        }
    }
    let mut parts: Vec<String> = rejects.iter().map(|(r, c)| format!("rejects {r} ({c})")).collect();
    parts.extend(explains.iter().map(|(r, c)| format!("explains {r} ({c})")));
    parts.extend(
        warns.iter().filter(|w| !rejects.iter().chain(&explains).any(|(r, _)| r == *w)).map(|w| format!("warns {w}")),
    );
    if !parts.is_empty() {
        return parts.join("; ");
    }
    // the calls the row made (the bare run's trace), aclrtSetDevice aside (every row sets a device);
    // an ADXL row's own calls are its AdxlEngine members (the simulator's AdxlEngine calls Hixl
    // members in turn: those are the vendor library's, not the row's)
    let adxl_row = bare.stderr.contains("[aclsim] AdxlEngine::");
    // likewise an LLM-DataDist row's are its LlmDataDist members
    if bare.stderr.contains("[aclsim] LlmDataDist::") {
        let interposed_dd = interposed.iter().any(|n| n.starts_with("_ZN12llm_datadist11LlmDataDist"));
        return if interposed_dd { "forwards" } else { "not checked" }.to_string();
    }
    let adxl_interposed = interposed.iter().any(|n| n.starts_with("_ZN4adxl10AdxlEngine"));
    let checked =
        bare.stderr.lines().filter_map(|l| l.strip_prefix("[aclsim] ")?.split('(').next()).any(|name| match adxl_row {
            true => name.starts_with("AdxlEngine::") && adxl_interposed,
            false => name != "aclrtSetDevice" && (interposed.contains(name) || name.starts_with("Hixl")),
        });
    if checked { "forwards" } else { "not checked" }.to_string()
}

#[test]
fn acl_rows_meet_regcheck_as_the_table_says() {
    let exe =
        |r: &str| Program::c("conformance_acl", &["sim/tests/conformance_acl.c"]).libs(&["acl_rt"]).release(r).build();
    rows_meet_regcheck(exe, section_rows("ACL runtime", "ACL-C"));
}

#[test]
fn hixl_rows_meet_regcheck_as_the_table_says() {
    let exe = |r: &str| {
        Program::cxx("conformance_hixl", &["sim/tests/conformance_hixl.cpp"])
            .libs(&["cann_hixl", "ascendcl"])
            .release(r)
            .build()
    };
    rows_meet_regcheck(exe, section_rows("HIXL", "HIXL-C"));
}

#[test]
fn datadist_rows_meet_regcheck_as_the_table_says() {
    let exe = |r: &str| {
        Program::cxx("conformance_datadist", &["sim/tests/conformance_datadist.cpp"])
            .libs(&["llm_datadist", "cann_hixl", "ascendcl"])
            .release(r)
            .build()
    };
    rows_meet_regcheck(exe, section_rows("LLM-DataDist", "LLM-DataDist-C"));
}

#[test]
fn adxl_rows_meet_regcheck_as_the_table_says() {
    let exe = |r: &str| {
        Program::cxx("conformance_adxl", &["sim/tests/conformance_adxl.cpp"])
            .libs(&["llm_datadist", "cann_hixl", "ascendcl"])
            .release(r)
            .build()
    };
    rows_meet_regcheck(exe, section_rows("ADXL", "ADXL-C"));
}

/// Each row's case (`exe(release)`: the section's program built against the simulator's install
/// root the row names, [`testkit::row_release`]) bare and under `LD_PRELOAD`.
fn rows_meet_regcheck(exe: impl Fn(&str) -> std::path::PathBuf, rows: Vec<(String, String, String)>) {
    let lib = testkit::regcheck().shared;
    let names = interposed(&lib);
    let mut failures = Vec::new();
    let mut got_by_id = Vec::new();
    let mut exes = std::collections::BTreeMap::new();
    for (id, inputs, want) in rows {
        let release = testkit::row_release(&inputs);
        let exe = exes.entry(release).or_insert_with(|| exe(release)).clone();
        let bare = Run::new(&exe).arg(&id).env_remove("ACLSIM_CANN_VERSION").run();
        let under = Run::new(&exe).arg(&id).env_remove("ACLSIM_CANN_VERSION").preload(&lib).run();
        let got = column(&under, &bare, &names);
        if got != want {
            failures.push(format!("{id}: regcheck {got}; the table says {want}"));
        }
        got_by_id.push((id, got));
    }
    if std::env::var_os("REGCHECK_BLESS").is_some() && !failures.is_empty() {
        bless(&got_by_id);
        return;
    }
    assert!(failures.is_empty(), "{} (REGCHECK_BLESS=1 rewrites the column)", failures.join("\n"));
}

/// Rewrite the `regcheck` column of the `ACL-Cnn` rows with what regcheck did.
fn bless(got: &[(String, String)]) {
    let path = workspace_root().join("docs/conformance.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let row = got.iter().find(|(id, _)| line.starts_with(&format!("| {id} |")));
        match row {
            Some((_, col)) => {
                let body = line.trim_end().trim_end_matches('|');
                let cut = body.rfind('|').unwrap();
                out.push_str(&format!("{}| {col} |", &body[..cut]));
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    std::fs::write(&path, out).unwrap();
}

/// The rules whose check is below the ACL layer, in the closed driver (the product, the
/// alignment, the memory itself) or the runtime's registration tables (a range registered
/// twice, an unregistration or a device pointer of what was never registered): a row whose
/// vendor test stubs the driver (or the runtime above it) and so succeeds where the real one
/// refuses (field failure A1: 507899 for a misaligned pointer; `rtsHostUnregister` stubbed to
/// 0 for a pointer never registered) may show them rejecting, now that regcheck's records are
/// whole under `LD_PRELOAD`. Every other rejection of a row the vendor expects to succeed is a
/// false one.
const DRIVER_RULES: &[&str] = &[
    "ACL-HOSTUNREG-NOT-REGISTERED",
    "ACL-DEVPTR-NOT-MAPPED",
    "ACL-HOSTREG-OVERLAP",
    "ACL-HOSTREG-ALIGN",
    "ACL-HOSTREG-UNMAPPED",
    "ACL-HOSTREG-STACK",
    "ACL-HOSTREG-FILE-BACKED",
    "ACL-HOSTREG-READONLY-MAPPING",
    "ACL-HOSTREG-RANGE-OVERFLOW",
];

/// Zero rows where the vendor succeeds and regcheck rejects (but for a stubbed driver's check).
#[test]
fn no_row_where_the_vendor_succeeds_is_rejected() {
    let text = std::fs::read_to_string(workspace_root().join("docs/conformance.md")).unwrap();
    let rows: Vec<Vec<String>> = text
        .lines()
        .filter(|l| {
            l.starts_with("| ACL-C")
                || l.starts_with("| HIXL-C")
                || l.starts_with("| ADXL-C")
                || l.starts_with("| LLM-DataDist-C")
        })
        .map(testkit::table_cells)
        .collect();
    // A row "as ACL-Cnn" / "as Cnn, ..." has the setup of that row.
    let stubbed = |inputs: &str| {
        let mut inputs = inputs.to_string();
        for _ in 0..8 {
            if inputs.contains("stubbed") || inputs.contains("answers") {
                return true;
            }
            let Some(base) =
                inputs.strip_prefix("as ").map(|r| r.split([',', ';', ' ']).next().unwrap_or("").to_string())
            else {
                return false;
            };
            let id = if base.contains('-') { base } else { format!("ACL-{base}") };
            match rows.iter().find(|r| r[0] == id) {
                Some(r) => inputs = r[2].clone(),
                None => return false,
            }
        }
        false
    };
    let mut false_rejections = Vec::new();
    for cells in &rows {
        let (id, inputs, expects, regcheck) = (&cells[0], &cells[2], &cells[3], &cells[cells.len() - 1]);
        let vendor_fails =
            expects.split(',').map(str::trim).any(|o| o.starts_with('!') || o.parse::<i64>().is_ok_and(|c| c != 0));
        if vendor_fails {
            continue;
        }
        let stubbed = stubbed(inputs);
        for part in regcheck.split("; ").filter_map(|p| p.strip_prefix("rejects ")) {
            let rule = part.split(' ').next().unwrap_or(part);
            if !(stubbed && DRIVER_RULES.contains(&rule)) {
                let (inputs, expects) = (inputs.as_str(), expects.as_str());
                false_rejections.push(format!("{id}: {part} ({inputs}; the vendor expects {expects})"));
            }
        }
    }
    assert!(
        false_rejections.is_empty(),
        "rows the vendor accepts and regcheck rejects:\n{}",
        false_rejections.join("\n")
    );
}
