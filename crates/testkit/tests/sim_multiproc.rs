//! The simulated HIXL library across processes: two-process programs (sim/tests/hixl_mp.cpp,
//! which forks a server process and drives it over a socket of its own) and the engine selection
//! (sim/tests/hixl_select.cpp), run bare against the simulator.
//!
//! Every engine listens on a port that was free a moment before, so the tests run in parallel;
//! every wait in the programs is bounded, the server process dies with its parent, and the
//! harness kills a run that does not finish in time.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use testkit::{Outcome, Program, Run};

fn hixl_mp() -> PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| Program::cxx("hixl_mp", &["sim/tests/hixl_mp.cpp"]).libs(&["cann_hixl", "ascendcl"]).build())
        .clone()
}

/// Runs `hixl_mp <scenario> <form>`; the client's checks must pass and the server end cleanly.
fn run(scenario: &str, form: &str) -> Outcome {
    let out = Run::new(hixl_mp()).args([scenario, form]).timeout(Duration::from_secs(60)).run();
    out.assert_success().assert_stdout_contains("failures=0");
    if scenario != "kill" {
        assert_eq!(value(&out, "server_exit"), Some(0), "{}", out.dump());
    }
    out
}

fn value(out: &Outcome, key: &str) -> Option<i64> {
    let prefix = format!("value {key} ");
    out.stdout.lines().find_map(|l| l.strip_prefix(&prefix)).and_then(|v| v.trim().parse().ok())
}

const PARAM_INVALID: i64 = 103900;
const TIMEOUT: i64 = 103901;
const UNSUPPORTED: i64 = 103905;
const FAILED: i64 = 503900;

#[test]
fn read_and_write_across_processes_for_each_engine() {
    // form, empty op list, list form of GetTransferStatus, DeregisterMem while this engine has a link
    let cases: &[(&str, i64, i64, i64)] = &[
        ("hixl_cs", PARAM_INVALID, 0, FAILED),
        ("comm", PARAM_INVALID, UNSUPPORTED, 0),
        ("comm_nopool", PARAM_INVALID, UNSUPPORTED, 0),
        ("legacy", PARAM_INVALID, UNSUPPORTED, 0),
    ];
    for &(form, empty, list, dereg) in cases {
        let out = run("rw", form);
        assert_eq!(value(&out, "empty_ops"), Some(empty), "{form}: {}", out.dump());
        assert_eq!(value(&out, "list_status"), Some(list), "{form}: {}", out.dump());
        assert_eq!(value(&out, "dereg_linked"), Some(dereg), "{form}: {}", out.dump());
        // an engine that is only linked to (no client of its own) deregisters on every engine
        assert_eq!(value(&out, "server_dereg_linked"), Some(0), "{form}: {}", out.dump());
        assert!(out.sim_calls("Hixl::TransferSync") >= 3, "{}", out.dump());
    }
}

#[test]
fn programs_built_with_the_old_string_abi_work() {
    // CANN itself is built with _GLIBCXX_USE_CXX11_ABI=0; so are many of its users' programs
    let exe = Program::cxx("hixl_mp_abi0", &["sim/tests/hixl_mp.cpp"])
        .define("_GLIBCXX_USE_CXX11_ABI=0")
        .libs(&["cann_hixl", "ascendcl"])
        .build();
    for scenario in ["rw", "async"] {
        let out = Run::new(&exe).args([scenario, "hixl_cs"]).timeout(Duration::from_secs(60)).run();
        out.assert_success().assert_stdout_contains("failures=0");
    }
}

#[test]
fn memory_registered_after_the_link_is_invisible_to_it() {
    // hixl_cs: the client's copy of the peer's memory refuses the range; comm without a pool:
    // HCCL does not know the remote buffer; comm with its default pool stages the transfer
    for (form, code) in [("hixl_cs", PARAM_INVALID), ("comm_nopool", FAILED), ("comm", 0)] {
        let out = run("late", form);
        assert_eq!(value(&out, "late_write"), Some(code), "{form}: {}", out.dump());
        assert_eq!(value(&out, "relinked_write"), Some(0), "{form}: a new link sees it: {}", out.dump());
        if code == FAILED {
            out.assert_stderr_contains("Can't find remoteBuffer by key");
        }
    }
}

#[test]
fn unregistered_memory_is_staged_on_comm_and_refused_on_hixl_cs() {
    let out = run("unregistered", "comm");
    assert_eq!(value(&out, "unreg_read"), Some(0), "{}", out.dump());
    assert_eq!(value(&out, "unreg_read_bytes"), Some(1), "the bytes arrived: {}", out.dump());
    assert_eq!(value(&out, "mixed_types"), Some(PARAM_INVALID), "{}", out.dump());
    out.assert_stderr_contains("All transfer type need be same in buffer transfer mode");
    assert_eq!(value(&out, "unreg_async"), Some(FAILED), "async transfers are never staged: {}", out.dump());

    let out = run("unregistered", "hixl_cs");
    assert_eq!(value(&out, "unreg_read"), Some(PARAM_INVALID), "{}", out.dump());
    assert_eq!(value(&out, "unreg_read_bytes"), Some(0), "{}", out.dump());
    assert_eq!(value(&out, "unreg_async"), Some(PARAM_INVALID), "{}", out.dump());
}

#[test]
fn async_connect_transfers_and_notifies_across_processes() {
    for form in ["hixl_cs", "comm"] {
        let out = run("async", form);
        assert!(out.sim_calls("Hixl::TransferAsync") == 2, "{}", out.dump());
        assert!(out.sim_calls("Hixl::SendNotify") == 1, "{}", out.dump());
    }
}

#[test]
fn a_peer_that_stops_or_dies_fails_transfers_within_the_timeout() {
    for form in ["hixl_cs", "comm"] {
        let out = run("kill", form);
        let v = |k: &str| value(&out, k).unwrap_or_else(|| panic!("{form}: no {k}: {}", out.dump()));
        // stopped: no answer within the 300 ms asked for
        assert_eq!(v("stopped_read"), TIMEOUT, "{form}: {}", out.dump());
        // (the upper bounds only tell "the timeout" from "a hang" on a loaded machine)
        assert!((290..10_000).contains(&v("stopped_read_ms")), "{form}: {}", out.dump());
        assert_eq!(v("stopped_connect"), TIMEOUT, "{form}: {}", out.dump());
        assert!((290..10_000).contains(&v("stopped_connect_ms")), "{form}: {}", out.dump());
        // dead: the connection is gone, at once (far before the 20 s asked for)
        assert_eq!(v("dead_read"), FAILED, "{form}: {}", out.dump());
        assert!(v("dead_read_ms") < 10_000, "{form}: {}", out.dump());
        assert_eq!(v("dead_write"), FAILED, "{form}: {}", out.dump());
        assert_eq!(v("broken_read"), FAILED, "{form}: {}", out.dump());
        // nobody listens any more: refused, FAILED before the timeout
        assert_eq!(v("dead_connect"), FAILED, "{form}: {}", out.dump());
        assert!(v("dead_connect_ms") < 10_000, "{form}: {}", out.dump());
    }
}

#[test]
fn hixl_cs_client_and_server_across_processes() {
    let out = run("cs", "");
    assert_eq!(value(&out, "cs_late_put"), Some(PARAM_INVALID), "{}", out.dump());
    assert_eq!(value(&out, "cs_remote_mems"), Some(3), "{}", out.dump());
    assert_eq!(value(&out, "cs_late_put_after_get"), Some(0), "{}", out.dump());
}

/// `select <label> <code> <aclrtMalloc calls>` lines, each with the engine named by the
/// simulator's trace of the matching Hixl::Initialize.
fn selections(soc: &str, release: &str) -> Vec<(String, i64, i64, String)> {
    let exe = Program::cxx("hixl_select", &["sim/tests/hixl_select.cpp"]).libs(&["cann_hixl", "ascendcl"]).build();
    let out = Run::new(exe).env("ACLSIM_SOC_NAME", soc).env("ACLSIM_CANN_VERSION", release).run();
    out.assert_success();
    let engines: Vec<String> = out
        .sim_lines("Hixl::Initialize")
        .iter()
        .map(|l| l.split("engine=").nth(1).and_then(|r| r.split(')').next()).unwrap_or("?").to_string())
        .collect();
    let lines: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("select ")).collect();
    assert_eq!(lines.len(), engines.len(), "{}", out.dump());
    lines
        .iter()
        .zip(engines)
        .map(|(l, e)| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[1].to_string(), f[2].parse().unwrap(), f[3].parse().unwrap(), e)
        })
        .collect()
}

#[test]
fn the_engine_follows_the_options_as_the_factory_selects_it() {
    let got = selections("Ascend910B1", "9.1.0");
    let want: &[(&str, i64, i64, &str)] = &[
        ("default", 0, 2, "comm"), // the comm engine's default pool: two 32 MB device pools
        ("hccs_device", 0, 0, "hixl_cs"),
        ("roce_device", 0, 0, "hixl_cs"),
        ("ub_ctp", 0, 0, "hixl_cs"),
        ("legacy", 0, 0, "comm"), // LocalCommRes 1.2 + listen_port + BufferPool 0:0
        ("local_comm_res_1_3", 0, 0, "hixl_cs"),
        ("fabric", 0, 0, "fabric_mem"),
        ("comm_pool_2_1", 0, 2, "comm"),
        ("hixl_cs_with_pool", PARAM_INVALID, 0, "-"),
        ("bad_json", PARAM_INVALID, 0, "-"),
        ("unknown_option", PARAM_INVALID, 0, "-"),
        ("bad_pool", PARAM_INVALID, 0, "-"),
    ];
    let want: Vec<(String, i64, i64, String)> =
        want.iter().map(|&(l, c, m, e)| (l.to_string(), c, m, e.to_string())).collect();
    assert_eq!(got, want);
    // on an Ascend 950 the defaults select hixl_cs after 9.1 (hixl bb0d0f6, engine_factory.cc's
    // SoC branch); tag v9.1.0's factory has none: the comm engine, its default pool
    let got = selections("Ascend950PR_9579", "9.2.0");
    assert_eq!((got[0].0.as_str(), got[0].3.as_str()), ("default", "hixl_cs"));
    assert_eq!(got[0].2, 0, "no buffer pool on hixl_cs");
    let got = selections("Ascend950PR_9579", "9.1.0");
    assert_eq!((got[0].0.as_str(), got[0].3.as_str(), got[0].2), ("default", "comm", 2));
}
