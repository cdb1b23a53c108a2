//! The ACL half of docs/conformance.md, walked row by row: every `ACL-Cnn` row is run through
//! sim/tests/conformance_acl.c (one function per row) against the bare simulator, and its
//! `simulator` column must equal both what the program prints and the `vendor expects` column.

use std::collections::BTreeSet;
use std::path::PathBuf;

use testkit::{workspace_root, Program, Run};

struct Row {
    id: String,
    vendor: String,
    simulator: String,
}

/// The `ACL-Cnn` rows of the `## ACL runtime` section.
fn rows() -> Vec<Row> {
    let text = std::fs::read_to_string(workspace_root().join("docs/conformance.md")).expect("docs/conformance.md");
    let section = text.split("\n## ACL runtime\n").nth(1).expect("a `## ACL runtime` section");
    let section = section.split("\n## ").next().unwrap();
    let rows: Vec<Row> = section
        .lines()
        .filter(|l| l.starts_with("| ACL-C"))
        .map(|l| {
            let c = testkit::table_cells(l);
            assert_eq!(c.len(), 6, "a row has six columns: {l}");
            Row { id: c[0].clone(), vendor: c[3].clone(), simulator: c[4].clone() }
        })
        .collect();
    assert!(!rows.is_empty(), "no ACL-Cnn rows");
    rows
}

fn program() -> PathBuf {
    Program::c("conformance_acl", &["sim/tests/conformance_acl.c"]).libs(&["acl_rt"]).build()
}

fn outcomes(s: &str) -> Vec<String> {
    s.split(',').map(|t| t.trim().to_string()).collect()
}

/// The vendor's expectation holds for the simulator's outcome: equal tokens, or `!0` for any
/// failure code.
fn vendor_holds(vendor: &str, sim: &str) -> bool {
    let (v, s) = (outcomes(vendor), outcomes(sim));
    v.len() == s.len()
        && v.iter().zip(&s).all(|(v, s)| match v.as_str() {
            "!0" => s.parse::<i64>().is_ok_and(|c| c != 0),
            _ => v == s,
        })
}

#[test]
fn every_row_has_a_case_and_every_case_a_row() {
    let listed = Run::new(program()).arg("--list").run();
    listed.assert_success();
    let cases: BTreeSet<String> = listed.stdout.lines().map(str::to_string).collect();
    let ids: Vec<String> = rows().into_iter().map(|r| r.id).collect();
    let unique: BTreeSet<String> = ids.iter().cloned().collect();
    assert_eq!(unique.len(), ids.len(), "duplicate row IDs in docs/conformance.md");
    let without_case: Vec<_> = unique.difference(&cases).collect();
    let without_row: Vec<_> = cases.difference(&unique).collect();
    assert!(without_case.is_empty(), "rows without a case in conformance_acl.c: {without_case:?}");
    assert!(without_row.is_empty(), "cases without a row in docs/conformance.md: {without_row:?}");
}

#[test]
fn the_simulator_answers_as_the_vendor_expects() {
    let exe = program();
    let mut failures = Vec::new();
    for row in rows() {
        if !vendor_holds(&row.vendor, &row.simulator) {
            failures.push(format!(
                "{}: the table's simulator column `{}` is not what the vendor expects `{}`",
                row.id, row.simulator, row.vendor
            ));
        }
        let out = Run::new(&exe).arg(&row.id).run();
        let prefix = format!("{}: ", row.id);
        let got = out.stdout.lines().find_map(|l| l.strip_prefix(&prefix)).map(str::to_string);
        match got {
            Some(got) if out.status.success() && got == row.simulator => {}
            Some(got) => {
                failures.push(format!("{}: the simulator answers `{got}`, the table says `{}`", row.id, row.simulator))
            }
            None => failures.push(format!("{}: no outcome\n{}", row.id, out.dump())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
