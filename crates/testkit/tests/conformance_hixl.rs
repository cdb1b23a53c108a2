//! The `## HIXL` and `## ADXL` rows of docs/conformance.md against the simulator: each row is run
//! as its case of sim/tests/conformance_hixl.cpp or sim/tests/conformance_adxl.cpp (one function
//! per row ID, citing the vendor's test), and the simulator must answer what the row says the
//! vendor's test expects.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::OnceLock;

use testkit::{workspace_root, Program, Run};

/// One table row: `| ID | vendor test (file:line) | inputs | vendor expects | simulator | regcheck |`.
#[derive(Debug)]
struct Row {
    id: String,
    vendor_test: String,
    inputs: String,
    expects: String,
    simulator: String,
    regcheck: String,
}

/// One section of the table and its case program.
struct Suite {
    /// `## <heading>` of docs/conformance.md; its rows' IDs start with `<heading>-C`.
    heading: &'static str,
    source: &'static str,
    libs: &'static [&'static str],
    /// At least this many rows.
    rows: usize,
}

const HIXL: Suite =
    Suite { heading: "HIXL", source: "sim/tests/conformance_hixl.cpp", libs: &["cann_hixl", "ascendcl"], rows: 40 };
const ADXL: Suite = Suite {
    heading: "ADXL",
    source: "sim/tests/conformance_adxl.cpp",
    libs: &["llm_datadist", "cann_hixl", "ascendcl"],
    rows: 40,
};
const DATADIST: Suite = Suite {
    heading: "LLM-DataDist",
    source: "sim/tests/conformance_datadist.cpp",
    libs: &["llm_datadist", "cann_hixl", "ascendcl"],
    rows: 5,
};

fn rows(suite: &Suite) -> Vec<Row> {
    let path = workspace_root().join("docs/conformance.md");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let heading = format!("\n## {}\n", suite.heading);
    let start =
        text.find(&heading).unwrap_or_else(|| panic!("docs/conformance.md has a `## {}` section", suite.heading));
    let section = &text[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let prefix = format!("| {}-C", suite.heading);
    section
        .lines()
        .filter(|l| l.starts_with(&prefix))
        .map(|l| {
            let cells = testkit::table_cells(l);
            assert_eq!(cells.len(), 6, "a row has six cells: {l}");
            Row {
                id: cells[0].clone(),
                vendor_test: cells[1].trim_matches('`').to_string(),
                inputs: cells[2].clone(),
                expects: cells[3].clone(),
                simulator: cells[4].clone(),
                regcheck: cells[5].clone(),
            }
        })
        .collect()
}

/// The suite's program, built against the simulator's install root of `release` (a row runs
/// against the root its inputs name: [`testkit::row_release`]).
fn program(suite: &Suite, release: &'static str) -> PathBuf {
    type Exes = std::collections::BTreeMap<(&'static str, &'static str), PathBuf>;
    static EXES: OnceLock<std::sync::Mutex<Exes>> = OnceLock::new();
    let exes = EXES.get_or_init(Default::default);
    let mut exes = exes.lock().unwrap();
    let name = suite.source.rsplit('/').next().unwrap().trim_end_matches(".cpp");
    exes.entry((suite.heading, release))
        .or_insert_with(|| Program::cxx(name, &[suite.source]).libs(suite.libs).release(release).build())
        .clone()
}

/// What the case of `id` returns (`result=<code>`), or why it gave nothing.
fn run_case(suite: &Suite, row: &Row) -> Result<String, String> {
    let exe = program(suite, testkit::row_release(&row.inputs));
    let out = Run::new(exe).arg(&row.id).env_remove("ACLSIM_TRACE").env_remove("ACLSIM_CANN_VERSION").run();
    out.stdout
        .lines()
        .find_map(|l| l.strip_prefix("result="))
        .map(str::to_string)
        .filter(|_| out.status.success())
        .ok_or_else(|| out.dump())
}

fn every_row_has_a_case_and_every_case_a_row(suite: &Suite) {
    let rows = rows(suite);
    assert!(rows.len() >= suite.rows, "only {} {} rows", rows.len(), suite.heading);
    let listed: BTreeSet<String> = rows.iter().map(|r| r.id.clone()).collect();
    assert_eq!(listed.len(), rows.len(), "a row ID appears twice");
    let out = Run::new(program(suite, testkit::SIM_RELEASES[0])).arg("list").run();
    out.assert_success();
    let cases: BTreeSet<String> = out.stdout.lines().map(str::to_string).collect();
    let no_case: Vec<_> = listed.difference(&cases).collect();
    let no_row: Vec<_> = cases.difference(&listed).collect();
    assert!(
        no_case.is_empty() && no_row.is_empty(),
        "rows without a case: {no_case:?}; cases without a row: {no_row:?}"
    );
}

fn each_case_cites_its_rows_vendor_test(suite: &Suite) {
    let src = std::fs::read_to_string(workspace_root().join(suite.source)).expect("the conformance program");
    for r in rows(suite) {
        // `tests/cpp/hixl/cs/hixl_mem_store_basic_ut.cc:60` -> `hixl_mem_store_basic_ut.cc:60`
        let cite = r.vendor_test.rsplit('/').next().unwrap_or_default().to_string();
        assert!(cite.contains(':'), "{}: the vendor test is not file:line ({})", r.id, r.vendor_test);
        let func = format!("uint32_t {}()", r.id.trim_start_matches(&format!("{}-", suite.heading)));
        let at = src.find(&func).unwrap_or_else(|| panic!("{}: no function {func}", r.id));
        // the comment block right above the function names the test
        let before = &src[..at];
        let comment_start = before.rfind("\n\n").unwrap_or(0);
        assert!(
            before[comment_start..].contains(&cite),
            "{}: {} does not cite {cite} above {func}",
            r.id,
            suite.source
        );
        let ok = r.regcheck == "forwards"
            || r.regcheck == "not checked"
            || r.regcheck.starts_with("warns ")
            || r.regcheck.starts_with("rejects ")
            || r.regcheck.starts_with("explains ");
        assert!(ok, "{}: the regcheck cell {:?} is not one of the fixed forms", r.id, r.regcheck);
    }
}

fn the_simulator_answers_as_the_vendor_expects(suite: &Suite) {
    let mut wrong = Vec::new();
    for r in rows(suite) {
        if r.simulator != r.expects {
            wrong.push(format!(
                "{}: the table says the simulator answers {} where the vendor expects {}",
                r.id, r.simulator, r.expects
            ));
            continue;
        }
        match run_case(suite, &r) {
            Ok(got) if got == r.expects => {}
            Ok(got) => wrong.push(format!(
                "{} ({}): the simulator answers {got}, the vendor expects {}",
                r.id, r.vendor_test, r.expects
            )),
            Err(dump) => wrong.push(format!("{}: the case gave no result\n{dump}", r.id)),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn hixl_every_row_has_a_case_and_every_case_a_row() {
    every_row_has_a_case_and_every_case_a_row(&HIXL);
}

#[test]
fn hixl_each_case_cites_its_rows_vendor_test() {
    each_case_cites_its_rows_vendor_test(&HIXL);
}

#[test]
fn hixl_the_simulator_answers_as_the_vendor_expects() {
    the_simulator_answers_as_the_vendor_expects(&HIXL);
}

#[test]
fn adxl_every_row_has_a_case_and_every_case_a_row() {
    every_row_has_a_case_and_every_case_a_row(&ADXL);
}

#[test]
fn adxl_each_case_cites_its_rows_vendor_test() {
    each_case_cites_its_rows_vendor_test(&ADXL);
}

#[test]
fn adxl_the_simulator_answers_as_the_vendor_expects() {
    the_simulator_answers_as_the_vendor_expects(&ADXL);
}

#[test]
fn datadist_every_row_has_a_case_and_every_case_a_row() {
    every_row_has_a_case_and_every_case_a_row(&DATADIST);
}

#[test]
fn datadist_each_case_cites_its_rows_vendor_test() {
    each_case_cites_its_rows_vendor_test(&DATADIST);
}

#[test]
fn datadist_the_simulator_answers_as_the_vendor_expects() {
    the_simulator_answers_as_the_vendor_expects(&DATADIST);
}
