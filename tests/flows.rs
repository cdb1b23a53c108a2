//! Correct two-process HIXL programs under regcheck: silence. The program is the simulator's
//! two-process test program (sim/tests/hixl_mp.cpp, scenario `flow`): a forked server process
//! registers device and host memory and sends its addresses over a socket of its own; the client
//! registers its own memory before it connects (device memory from aclrtMalloc and from the VMM
//! calls, host memory from aclrtMallocHost), WRITEs and READs across the processes (sync and
//! async), then both release everything in order. Run bare, under
//! `LD_PRELOAD` of libregcheck.so, linked with `-lregcheck` and with libregcheck.a, for each
//! engine form: no finding at any level in either process, REGCHECK_ERROR_EXITCODE never
//! triggered, every transfer forwarded.

use std::sync::OnceLock;
use std::time::Duration;

use testkit::{Mode, Outcome, Program, Run, Scenarios, MODES};

const SRC: &str = "sim/tests/hixl_mp.cpp";
const LIBS: &[&str] = &["cann_hixl", "ascendcl"];
/// Engine forms of hixl_mp.cpp: the comm engine with and without its buffer pool, hixl_cs over
/// HCCS, and the legacy options (`LocalCommRes`, `listen_port`, `BufferPool`).
const FORMS: &[&str] = &["comm", "comm_nopool", "hixl_cs", "legacy"];
const ERROR_EXIT: &str = "3";

fn program() -> &'static Scenarios {
    static S: OnceLock<Scenarios> = OnceLock::new();
    S.get_or_init(|| Scenarios::build(|l| Program::cxx("hixl_mp_flows", &[SRC]).link(l).libs(LIBS)))
}

fn run(r: Run, scenario: &str, form: &str) -> Outcome {
    r.args([scenario, form])
        .env("REGCHECK_LOG", "info")
        .env("REGCHECK_ERROR_EXITCODE", ERROR_EXIT)
        .timeout(Duration::from_secs(120))
        .run()
}

/// regcheck's finding lines (`regcheck: <level>: [RULE-ID] ...`), at any level.
fn findings(o: &Outcome) -> Vec<String> {
    o.messages().into_iter().filter(|l| l.starts_with("regcheck: ") && l.contains(": [")).collect()
}

fn value(o: &Outcome, key: &str) -> Option<i64> {
    o.stdout.lines().find_map(|l| l.strip_prefix("value ")?.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
}

fn assert_clean_flow(o: &Outcome, what: &str) {
    let ctx = || format!("{what}\n{}", o.dump());
    assert_eq!(o.code(), Some(0), "{}", ctx());
    assert!(o.stdout.contains("failures=0"), "{}", ctx());
    assert_eq!(value(o, "server_exit"), Some(0), "{}", ctx());
    // both processes' transfers and registrations reached the simulator
    assert_eq!(o.sim_calls("Hixl::TransferSync"), 3, "{}", ctx());
    assert_eq!(o.sim_calls("Hixl::TransferAsync"), 1, "{}", ctx());
    assert_eq!(o.sim_calls("Hixl::RegisterMem"), 5, "{}", ctx());
    assert_eq!(o.sim_calls("Hixl::DeregisterMem"), 5, "{}", ctx());
    assert!(!o.stderr.contains("internal failure"), "{}", ctx());
}

#[test]
fn correct_two_process_flows_run_bare() {
    for form in FORMS {
        let o = run(program().bare(), "flow", form);
        assert_clean_flow(&o, &format!("bare, form {form}"));
    }
}

#[test]
fn correct_two_process_flows_are_silent_under_regcheck() {
    for mode in MODES {
        for form in FORMS {
            let o = run(program().run(mode), "flow", form);
            let what = format!("mode {mode:?}, form {form}");
            assert_clean_flow(&o, &what);
            // regcheck was there, in both processes (the server is a fork of the client)
            assert!(o.stderr.matches(" active: ").count() >= 1, "regcheck not active: {what}\n{}", o.dump());
            assert_eq!(findings(&o), Vec::<String>::new(), "{what}\n{}", o.dump());
            assert!(!o.stderr.contains("REGCHECK_ERROR_EXITCODE"), "{what}\n{}", o.dump());
        }
    }
}

#[test]
fn findings_of_either_process_are_seen() {
    // The control of the silence above: the `late` scenario leaves registrations behind at
    // Finalize in both processes (the server three, the client one); regcheck names each leak
    // in the process that makes it, and the assertion above would see them.
    for mode in [Mode::Preload, Mode::Shared] {
        let o = run(program().run(mode), "late", "comm_nopool");
        let leaks: Vec<String> = findings(&o).into_iter().filter(|l| l.contains("[HIXL-FINALIZE-LEAK]")).collect();
        assert!(leaks.iter().any(|l| l.contains("with 3 registration(s)")), "mode {mode:?}\n{}", o.dump());
        assert!(leaks.iter().any(|l| l.contains("with 1 registration(s)")), "mode {mode:?}\n{}", o.dump());
    }
}
