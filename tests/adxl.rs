//! The ADXL front end, through the doors users use: a C++ program (tests/c/adxl_scenarios.cpp)
//! built against the simulator's headers, run against its libllm_datadist.so with `LD_PRELOAD`
//! of libregcheck.so, linked with `-lregcheck` ahead of `-lllm_datadist`, and linked with
//! libregcheck.a. Each case proves the codes returned (the vendor's, as the bare program gets
//! them), whether the vendor saw the call (the simulator's trace), and what the log names.

use std::sync::OnceLock;

use testkit::{libs, Mode, Outcome, Program, Scenarios, MODES};

const SRC: &str = "tests/c/adxl_scenarios.cpp";
const LIBS: &[&str] = &[libs::LLM_DATADIST, libs::CANN_HIXL, libs::ASCENDCL];

fn scenarios() -> &'static Scenarios {
    static S: OnceLock<Scenarios> = OnceLock::new();
    S.get_or_init(|| Scenarios::build(|l| Program::cxx("adxl_scenarios", &[SRC]).link(l).libs(LIBS)))
}

fn run_in(mode: Mode, scenario: &str, env: &[(&str, &str)]) -> Outcome {
    let mut r = scenarios().run(mode).arg(scenario);
    for (k, v) in env {
        r = r.env(k, v);
    }
    r.run()
}

fn bare(scenario: &str) -> Outcome {
    let o = scenarios().bare().arg(scenario).run();
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    o
}

/// regcheck's own log lines.
fn log(o: &Outcome) -> Vec<&str> {
    o.stderr.lines().filter(|l| l.starts_with("regcheck:")).collect()
}

/// The scenario in every mode, compared with the bare program
/// ([`Scenarios::each_mode_env`]).
fn each_mode(scenario: &str, rejected: &[(&str, i64)], env: &[(&str, &str)]) -> Vec<Outcome> {
    scenarios().each_mode_env(&[scenario], rejected, env)
}

fn logged(o: &Outcome, level: &str, rule: &str, call: &str) -> Vec<String> {
    let head = format!("regcheck: {level}: [{rule}] {call}(");
    o.messages().into_iter().filter(|l| l.starts_with(&head)).collect()
}

/// Mooncake's life of two engines (AutoConnect, no Connect, a worker thread with the engine's
/// context, host memory written to device memory and read back): every call forwarded
/// unchanged, nothing found. And the `hixl::Hixl` calls the simulator's ADXL makes into
/// libcann_hixl.so are the vendor's own: regcheck neither checks nor records them (no line
/// of its log, even at debug level, names a `Hixl::` member), while each reaches the vendor.
#[test]
fn mooncakes_calls_are_forwarded_unchanged_and_the_vendors_own_not_checked_again() {
    for o in each_mode("mooncake", &[], &[("REGCHECK_LOG", "debug")]) {
        let ctx = || o.dump();
        assert!(o.stdout.contains("value same 1"), "the data came back: {}", ctx());
        assert!(!o.stderr.contains("regcheck: error:") && !o.stderr.contains("regcheck: warning:"), "{}", ctx());
        for (call, n) in [
            ("AdxlEngine::Initialize", 2),
            ("AdxlEngine::RegisterMem", 3),
            ("AdxlEngine::TransferSync", 2),
            ("AdxlEngine::Disconnect", 1),
            ("AdxlEngine::DeregisterMem", 3),
            ("Hixl::RegisterMem", 3),
            ("Hixl::TransferSync", 2),
        ] {
            assert_eq!(o.sim_calls(call), n, "{call} reached the vendor: {}", ctx());
        }
        assert!(log(&o).iter().any(|l| l.contains("AdxlEngine::Initialize(") && l.contains("hixl_cs")), "{}", ctx());
        let inner: Vec<&str> = log(&o).into_iter().filter(|l| l.contains("Hixl::")).collect();
        assert!(inner.is_empty(), "the vendor's own hixl::Hixl calls were checked: {inner:#?}\n{}", ctx());
    }
}

/// Each rule on an ADXL call rejects with the vendor's own code (what the bare program gets),
/// the vendor not called, and the message names the rule, the call, the argument and the fix.
#[test]
fn each_adxl_rule_rejects_with_the_vendors_code() {
    let not_init = [("register", 503900), ("connect", 503900), ("status", 503900)];
    for o in each_mode("not_initialized", &not_init, &[]) {
        for call in ["AdxlEngine::RegisterMem", "AdxlEngine::Connect", "AdxlEngine::GetTransferStatus"] {
            let l = logged(&o, "error", "HIXL-NOT-INITIALIZED", call);
            assert_eq!(l.len(), 1, "{call}: {}", o.dump());
            assert!(
                l[0].contains("`this`")
                    && l[0].contains("fix: call Initialize")
                    && l[0].contains("rejected with 503900")
            );
            assert_eq!(o.sim_calls(call), 0, "{call} was not forwarded: {}", o.dump());
        }
    }
    let args = [
        ("register_null", 103900),
        ("deregister_null", 103900),
        ("connect_timeout", 103900),
        ("transfer_timeout", 103900),
        ("transfer_null_op", 103900),
        ("status_null", 503900),
        ("disconnect_timeout", 103900),
    ];
    for o in each_mode("arguments", &args, &[]) {
        for (rule, call, arg, n) in [
            ("HIXL-REG-NULL-ADDR", "AdxlEngine::RegisterMem", "`mem.addr`", 1),
            ("HIXL-DEREG-NULL", "AdxlEngine::DeregisterMem", "`mem_handle`", 1),
            ("ADXL-TIMEOUT", "AdxlEngine::Connect", "`timeout_in_millis`: is 0", 1),
            ("ADXL-TIMEOUT", "AdxlEngine::TransferSync", "`timeout_in_millis`: is -1", 1),
            ("ADXL-TIMEOUT", "AdxlEngine::Disconnect", "`timeout_in_millis`: is -5", 1),
            ("HIXL-XFER-EMPTY", "AdxlEngine::TransferSync", "local_addr is 0", 1),
            ("ADXL-STATUS-NULL-REQ", "AdxlEngine::GetTransferStatus", "`req`: is NULL", 1),
        ] {
            let l: Vec<String> = logged(&o, "error", rule, call).into_iter().filter(|l| l.contains(arg)).collect();
            assert_eq!(l.len(), n, "{rule} on {call} ({arg}): {}", o.dump());
            assert!(l[0].contains("\n    fix: ") && l[0].contains("(rejected with "), "{}", l[0]);
        }
        // Only the valid calls reached the vendor.
        for (call, n) in [
            ("AdxlEngine::RegisterMem", 2),
            ("AdxlEngine::DeregisterMem", 2),
            ("AdxlEngine::Connect", 0),
            ("AdxlEngine::TransferSync", 1),
            ("AdxlEngine::Disconnect", 1),
            ("AdxlEngine::GetTransferStatus", 0),
        ] {
            assert_eq!(o.sim_calls(call), n, "{call}: {}", o.dump());
        }
    }
}

/// A second Initialize that fails leaves the engine unusable, as the vendor's AdxlEngine does
/// (it keeps the engine it made): the next call is rejected with FAILED, the vendor's answer,
/// without reaching it.
#[test]
fn a_failed_second_initialize_leaves_the_engine_unusable() {
    let b = bare("reinit_failed");
    assert_eq!(b.rc_lines()[1], ("register".to_string(), 503900), "{}", b.dump());
    for o in each_mode("reinit_failed", &[], &[]) {
        assert_eq!(logged(&o, "error", "HIXL-NOT-INITIALIZED", "AdxlEngine::RegisterMem").len(), 1, "{}", o.dump());
        assert_eq!(o.sim_calls("AdxlEngine::RegisterMem"), 0, "{}", o.dump());
    }
}

/// A transfer from a buffer never registered, once AutoConnect linked the engines: the
/// hixl_cs engine's PARAM_INVALID, given by regcheck with the range and the fix. (The vendor
/// would also have dropped the link after the failed transfer, so the program's later
/// Disconnect, NOT_CONNECTED bare, succeeds under regcheck.)
#[test]
fn an_unregistered_buffer_is_named_with_the_vendors_code() {
    let b = bare("unregistered");
    assert!(b.rc_lines().contains(&("write_unregistered".to_string(), 103900)), "{}", b.dump());
    // The refused transfer drops the AutoConnect link as the vendor's failure does: the
    // Disconnect after it answers as bare (issue 33 item 6).
    for o in each_mode("unregistered", &[("write_unregistered", 103900)], &[]) {
        let l = logged(&o, "error", "HIXL-XFER-LOCAL-UNREGISTERED", "AdxlEngine::TransferSync");
        assert_eq!(l.len(), 1, "{}", o.dump());
        assert!(l[0].contains("the local range [0x") && l[0].contains("hixl_cs") && l[0].contains("fix: RegisterMem"));
        assert_eq!(o.sim_calls("AdxlEngine::TransferSync"), 1, "{}", o.dump());
    }
}

/// Mooncake's hazard: `register_memory` after transfers started. The link AutoConnect made at
/// the first transfer cannot see the new region: a warning, the call forwarded.
#[test]
fn a_registration_after_the_first_auto_connect_warns() {
    for o in each_mode("late", &[], &[]) {
        let l = logged(&o, "warning", "HIXL-REG-AFTER-CONNECT", "AdxlEngine::RegisterMem");
        assert_eq!(l.len(), 1, "{}", o.dump());
        assert!(l[0].contains("already has links to \"127.0.0.1:"), "{}", l[0]);
        assert_eq!(o.sim_calls("AdxlEngine::RegisterMem"), 3, "{}", o.dump());
    }
}

/// A transfer from a worker thread that did not take the engine's context warns
/// (ADXL-XFER-CONTEXT); Mooncake's workers, which do, are quiet (the `mooncake` scenario).
#[test]
fn a_worker_thread_without_the_engines_context_warns() {
    for o in each_mode("context", &[], &[]) {
        let l = logged(&o, "warning", "ADXL-XFER-CONTEXT", "AdxlEngine::TransferSync");
        assert_eq!(l.len(), 1, "{}", o.dump());
        assert!(l[0].contains("(none)") && l[0].contains("aclrtSetCurrentContext"), "{}", l[0]);
    }
}

/// Device memory not on a 2 MiB boundary, no transport named (as Mooncake passes): HCCS
/// between the NPUs of one server wants 2 MiB; a warning (documented only).
#[test]
fn unaligned_device_memory_warns() {
    for o in each_mode("unaligned", &[], &[]) {
        let l = logged(&o, "warning", "HIXL-REG-DEVICE-ALIGN", "AdxlEngine::RegisterMem");
        assert_eq!(l.len(), 1, "{}", o.dump());
        assert!(l[0].contains("4 KiB past a boundary"), "{}", l[0]);
    }
}

/// vllm-ascend #10724: two comm engines of one process register the same KV region and both
/// deregister it at shutdown. The comm engine registers with HCCL's global memory, which keeps
/// one handle, not counted, for identical registrations: both engines hold it, the first
/// deregistration drops it, and the second answers 103900 (HCCL's "memHandle is invalid",
/// HCCL_E_PARA). regcheck does not change that answer, and names the other engine's
/// deregistration of the identical region and where it was made.
#[test]
fn a_second_engines_deregistration_of_a_shared_region_fails_vllm_ascend_10724() {
    let b = bare("shared_region");
    let want = [("register_a", 0), ("register_b", 0), ("deregister_a", 0), ("deregister_b", 103900)];
    let got = b.rc_lines();
    for (label, code) in want {
        assert!(got.contains(&(label.to_string(), code)), "{label} {code}: {}", b.dump());
    }
    assert!(b.stdout.contains("value same_handle 1"), "{}", b.dump());
    assert!(b.stderr.contains("memHandle[") && b.stderr.contains("] is invalid"), "{}", b.dump());
    for o in each_mode("shared_region", &[], &[]) {
        let l = logged(&o, "warning", "HIXL-DEREG-UNKNOWN", "AdxlEngine::DeregisterMem");
        assert_eq!(l.len(), 1, "{}", o.dump());
        assert!(l[0].contains("HCCL") && l[0].contains("adxl_scenarios.cpp:248"), "{}", l[0]);
        assert_eq!(o.sim_calls("HcclDeregisterGlobalMem"), 3, "{}", o.dump());
    }
}

/// With a panic forced in the check or the record phase of every interposed ADXL member, each
/// call still reaches the vendor (with the check's panic, every call: each returns what it
/// returns without regcheck), and the failure is logged naming the member, once per call the
/// vendor received.
#[test]
fn a_panic_in_any_adxl_member_is_caught_and_the_call_forwarded() {
    let members: &[(&str, &[&str])] = &[
        (
            "mooncake",
            &[
                "AdxlEngine::AdxlEngine",
                "AdxlEngine::~AdxlEngine",
                "AdxlEngine::Initialize",
                "AdxlEngine::RegisterMem",
                "AdxlEngine::TransferSync",
                "AdxlEngine::Disconnect",
                "AdxlEngine::DeregisterMem",
                "AdxlEngine::Finalize",
            ],
        ),
        ("async", &["AdxlEngine::Connect", "AdxlEngine::TransferAsync", "AdxlEngine::GetTransferStatus"]),
    ];
    for (scenario, calls) in members {
        let want = bare(scenario).rc_lines();
        for (at, phase) in [("check", "checking"), ("record", "recording the result of")] {
            for mode in MODES {
                let o = run_in(mode, scenario, &[("REGCHECK_TEST_PANIC", at)]);
                let ctx = || format!("{scenario} REGCHECK_TEST_PANIC={at} {mode:?}\n{}", o.dump());
                assert_eq!(o.code(), Some(0), "{}", ctx());
                assert_eq!(o.rc_lines(), want, "forwarded as is: {}", ctx());
                for name in *calls {
                    let logged = format!("internal failure in regcheck while {phase} {name}:");
                    assert!(o.sim_calls(name) > 0, "{name} reached the vendor: {}", ctx());
                    // A transfer without AutoConnect has nothing to record: no record phase.
                    let phases =
                        if at == "record" && (name.ends_with("::TransferSync") || name.ends_with("::TransferAsync")) {
                            0
                        } else {
                            o.sim_calls(name)
                        };
                    assert_eq!(o.stderr.matches(&logged).count(), phases, "`{logged}`: {}", ctx());
                }
            }
        }
    }
    // With the check's panic, a call regcheck would reject reaches the vendor too.
    let want = bare("arguments").rc_lines();
    for mode in MODES {
        let o = run_in(mode, "arguments", &[("REGCHECK_TEST_PANIC", "check")]);
        assert_eq!(o.rc_lines(), want, "{}", o.dump());
        assert_eq!(o.sim_calls("AdxlEngine::GetTransferStatus"), 1, "{}", o.dump());
    }
}
