//! The HIXL front end, through the doors users use: a C++ program (tests/c/hixl_scenarios.cpp)
//! built with the system compiler against the simulator's headers, run against the
//! simulator's libcann_hixl.so with `LD_PRELOAD` of libregcheck.so, linked with `-lregcheck`
//! ahead of `-lcann_hixl`, and linked with libregcheck.a. Each case proves the code returned,
//! whether the vendor saw the call (the simulator's trace), and the rule ID in the log. The
//! example `examples-c/hixl_demo.cpp` must pass bare and under regcheck.

use std::sync::OnceLock;

use testkit::{Link, Mode, Outcome, Program, Run, Scenarios, MODES};

const SRC: &str = "tests/c/hixl_scenarios.cpp";
const LIBS: &[&str] = &["cann_hixl", "ascendcl"];

fn scenarios() -> &'static Scenarios {
    static S: OnceLock<Scenarios> = OnceLock::new();
    S.get_or_init(|| Scenarios::build(|l| Program::cxx("hixl_scenarios", &[SRC]).link(l).libs(LIBS)))
}

fn with_env(mut r: Run, env: &[(&str, &str)]) -> Run {
    for (k, v) in env {
        r = r.env(k, v);
    }
    r
}

fn run_in(mode: Mode, scenario: &str, env: &[(&str, &str)]) -> Outcome {
    with_env(scenarios().run(mode).arg(scenario), env).run()
}

fn bare(scenario: &str, env: &[(&str, &str)]) -> Outcome {
    with_env(scenarios().bare().arg(scenario), env).run()
}

/// `rc <label> <code>` lines, in order.
fn codes(o: &Outcome) -> Vec<(String, u32)> {
    o.rc_lines().into_iter().map(|(l, c)| (l, c as u32)).collect()
}

fn value(o: &Outcome, key: &str) -> Option<i64> {
    o.stdout.lines().find_map(|l| l.strip_prefix("value ")?.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
}

/// `rule` was logged at warning level (and never as an error) in every outcome.
fn assert_warned(outs: &[Outcome], rule: &str) {
    for o in outs {
        assert!(o.stderr.contains(&format!("regcheck: warning: [{rule}]")), "{rule} not warned: {}", o.dump());
        assert!(!o.stderr.contains(&format!("regcheck: error: [{rule}]")), "{rule} is an error: {}", o.dump());
    }
}

/// One scenario, checked in the three modes.
struct Case<'a> {
    scenario: &'a str,
    env: &'a [(&'a str, &'a str)],
    /// Expected `rc` lines under regcheck.
    codes: &'a [(&'a str, u32)],
    /// Rule IDs that must be logged (`[ID]`).
    rules: &'a [&'a str],
    /// Rule IDs that must not be logged.
    absent: &'a [&'a str],
    /// Simulator calls and how many times each must have been received.
    forwarded: &'a [(&'a str, usize)],
}

impl Case<'_> {
    fn check(&self) -> Vec<Outcome> {
        MODES
            .iter()
            .map(|&mode| {
                let o = run_in(mode, self.scenario, self.env);
                let ctx = || format!("scenario {} in mode {mode:?}\n{}", self.scenario, o.dump());
                assert_eq!(o.code(), Some(0), "{}", ctx());
                let want: Vec<(String, u32)> = self.codes.iter().map(|(l, c)| (l.to_string(), *c)).collect();
                assert_eq!(codes(&o), want, "{}", ctx());
                for rule in self.rules {
                    assert!(o.stderr.contains(&format!("[{rule}]")), "rule {rule} not logged: {}", ctx());
                }
                for rule in self.absent {
                    assert!(!o.stderr.contains(&format!("[{rule}]")), "rule {rule} logged: {}", ctx());
                }
                for (call, n) in self.forwarded {
                    assert_eq!(o.sim_calls(call), *n, "{call} forwarded count: {}", ctx());
                }
                assert!(!o.stderr.contains("internal failure"), "{}", ctx());
                o
            })
            .collect()
    }
}

const REG: &str = "Hixl::RegisterMem";
const DEREG: &str = "Hixl::DeregisterMem";
const XFER: &str = "Hixl::TransferSync";
const A950: &[(&str, &str)] = &[("ACLSIM_SOC_NAME", "Ascend950PR_9579")];

#[test]
fn good_transfers_are_forwarded_unchanged_and_silent() {
    let outs = Case {
        scenario: "good",
        env: &[],
        codes: &[
            ("register_src", 0),
            ("register_dst", 0),
            ("register_dev", 0),
            ("register_identical", 0),
            ("connect", 0),
            ("write", 0),
            ("read", 0),
            ("read_async", 0),
            ("status", 0),
            ("disconnect", 0),
            ("dereg_src", 0),
            ("dereg_dst", 0),
            ("dereg_dev", 0),
        ],
        rules: &[],
        absent: &[],
        forwarded: &[(REG, 4), (XFER, 2), ("Hixl::TransferAsync", 1), (DEREG, 3), ("Hixl::Connect", 1)],
    }
    .check();
    for o in outs {
        assert!(!o.stderr.contains("regcheck: error") && !o.stderr.contains("regcheck: warning"), "{}", o.dump());
        assert_eq!(value(&o, "same_bytes"), Some(1), "{}", o.dump());
        assert_eq!(value(&o, "same_handle"), Some(1), "{}", o.dump());
    }
    assert_eq!(value(&bare("good", &[]), "same_bytes"), Some(1));
}

#[test]
fn not_initialized_and_finalized_instances() {
    Case {
        scenario: "not_initialized",
        env: &[],
        codes: &[
            ("register", 503900),
            ("connect", 503900),
            ("deregister", 503900),
            ("register_after_finalize", 503900),
            ("transfer_after_finalize", 503900),
        ],
        rules: &["HIXL-NOT-INITIALIZED"],
        absent: &[],
        forwarded: &[(REG, 0), ("Hixl::Connect", 0), (DEREG, 0), (XFER, 0)],
    }
    .check();
}

#[test]
fn argument_rules_reject_before_the_vendor() {
    let outs = Case {
        scenario: "args",
        env: &[],
        // len 0: the default (comm) engine records the empty region, so it is only warned.
        codes: &[("null_addr", 103900), ("len_zero", 0), ("overflow", 103900), ("memtype", 103900)],
        rules: &["HIXL-REG-NULL-ADDR", "HIXL-REG-LEN-ZERO", "HIXL-REG-RANGE-OVERFLOW", "HIXL-REG-MEMTYPE"],
        absent: &[],
        forwarded: &[(REG, 1)],
    }
    .check();
    assert!(outs[0].stderr.contains("`mem.len`"), "the argument is named");
    assert_warned(&outs, "HIXL-REG-LEN-ZERO");
    // Bare, the vendor accepts len 0 and type 7 (it treats 7 as host memory).
    let b = bare("args", &[]);
    let got: Vec<u32> = codes(&b).into_iter().map(|(_, c)| c).collect();
    assert_eq!(got, vec![103900, 0, 103900, 0], "{}", b.dump());
}

#[test]
fn overlap_is_rejected_and_identical_returns_the_same_handle() {
    let outs = Case {
        scenario: "overlap",
        env: &[],
        codes: &[("first", 0), ("overlapping", 103900), ("identical", 0), ("adjacent", 0)],
        rules: &["HIXL-REG-OVERLAP", "HIXL-FINALIZE-LEAK"],
        absent: &[],
        forwarded: &[(REG, 3)],
    }
    .check();
    for o in outs {
        assert_eq!(value(&o, "same_handle"), Some(1));
        assert!(o.stderr.contains("DeregisterMem(0x"), "the fix names the handle: {}", o.dump());
    }
}

#[test]
fn the_4001st_registration_is_refused() {
    let outs = Case {
        scenario: "count",
        env: &[],
        codes: &[("reg_4000", 0), ("reg_4001", 203900), ("reg_identical_at_limit", 0)],
        rules: &["HIXL-REG-COUNT", "HIXL-REG-COUNT-NEAR"],
        absent: &[],
        forwarded: &[(REG, 4001)],
    }
    .check();
    for o in &outs {
        assert_eq!(value(o, "failed_before_limit"), Some(0));
        assert_eq!(o.stderr.matches("[HIXL-REG-COUNT-NEAR]").count(), 1, "once per instance");
        assert!(o.stderr.contains("4001"), "{}", o.dump());
    }
    // The limit is settable.
    let o = run_in(Mode::Preload, "count", &[("REGCHECK_HIXL_MAX_REGS", "5000")]);
    assert_eq!(codes(&o)[1], ("reg_4001".to_string(), 0), "{}", o.dump());
}

#[test]
fn host_cap_follows_the_hdk_version() {
    let origin_off: &[(&str, &str)] =
        &[("REGCHECK_RULES", "HIXL-REG-HOST-ORIGIN=off"), ("REGCHECK_HDK_VERSION", "25.3.rc1")];
    let outs = Case {
        scenario: "host_cap",
        env: origin_off,
        codes: &[("first_12g", 0), ("second_12g", 203900)],
        rules: &["HIXL-REG-HOST-CAP"],
        absent: &["HIXL-REG-HOST-ORIGIN"],
        forwarded: &[(REG, 1)],
    }
    .check();
    assert!(outs[0].stderr.contains("20 GiB") && outs[0].stderr.contains("25.3.rc1"), "{}", outs[0].dump());
    Case {
        scenario: "host_cap",
        env: &[("REGCHECK_RULES", "HIXL-REG-HOST-ORIGIN=off"), ("REGCHECK_HDK_VERSION", "25.5.0")],
        codes: &[("first_12g", 0), ("second_12g", 0)],
        rules: &[],
        absent: &["HIXL-REG-HOST-CAP"],
        forwarded: &[(REG, 2)],
    }
    .check();
    // Not an Atlas A2/A3 part: no cap.
    let o = run_in(Mode::Preload, "host_cap", &[origin_off[1], ("ACLSIM_SOC_NAME", "Ascend950PR_9579")]);
    assert_eq!(codes(&o), vec![("first_12g".into(), 0), ("second_12g".into(), 0)], "{}", o.dump());
}

#[test]
fn device_cap_is_50_gib() {
    Case {
        scenario: "device_cap",
        env: &[("REGCHECK_HDK_VERSION", "25.5.0")],
        codes: &[("first_26g", 0), ("second_26g", 203900)],
        rules: &["HIXL-REG-DEVICE-CAP"],
        absent: &["HIXL-REG-DEVICE-ORIGIN"],
        forwarded: &[(REG, 1)],
    }
    .check();
}

#[test]
fn registration_after_connect() {
    let outs = Case {
        scenario: "after_connect",
        env: &[],
        // The vendor accepts the registration; links made before do not see it: warned.
        codes: &[
            ("before", 0),
            ("connect", 0),
            ("after", 0),
            ("peer_late", 0),
            ("disconnect", 0),
            ("after_disconnect", 0),
            ("connect_async", 0),
            ("after_connect_async", 0),
        ],
        rules: &["HIXL-REG-AFTER-CONNECT"],
        absent: &[],
        forwarded: &[(REG, 5)],
    }
    .check();
    assert_warned(&outs, "HIXL-REG-AFTER-CONNECT");
    assert!(outs[0].stderr.contains("Can't find remoteBuffer by key"), "the peer's view: {}", outs[0].dump());
}

#[test]
fn register_mem_from_another_thread_is_accepted_and_warned() {
    // The engines switch to their own ACL context around every call: RegisterMem from a
    // second thread without Initialize's context works. regcheck names the documented
    // constraint at warning level and forwards.
    let outs = Case {
        scenario: "thread",
        env: &[],
        codes: &[
            ("no_context", 0),
            ("set_context", 0),
            ("set_context_dereg", 0),
            ("other_device", 0),
            ("same_thread", 0),
            ("same_thread_dereg", 0),
        ],
        rules: &["HIXL-REG-THREAD"],
        absent: &[],
        forwarded: &[(REG, 4), (DEREG, 4)],
    }
    .check();
    assert_warned(&outs, "HIXL-REG-THREAD");
    assert!(outs[0].stderr.contains("aclrtSetCurrentContext"), "the fix: {}", outs[0].dump());
    // Raised to error by the user, it rejects again.
    let o = run_in(Mode::Preload, "thread", &[("REGCHECK_RULES", "HIXL-REG-THREAD=error")]);
    assert_eq!(codes(&o)[0], ("no_context".to_string(), 503900), "{}", o.dump());
}

#[test]
fn host_memory_origin_by_product() {
    Case {
        scenario: "host_origin",
        env: &[],
        codes: &[("heap", 103900), ("malloc_host", 0)],
        rules: &["HIXL-REG-HOST-ORIGIN"],
        absent: &[],
        forwarded: &[(REG, 1)],
    }
    .check();
    Case {
        scenario: "host_origin",
        env: A950,
        codes: &[("heap", 0), ("malloc_host", 0)],
        rules: &[],
        absent: &["HIXL-REG-HOST-ORIGIN"],
        forwarded: &[(REG, 2)],
    }
    .check();
    // REGCHECK_SOC_NAME overrides what the vendor says.
    let o = run_in(Mode::Preload, "host_origin", &[("REGCHECK_SOC_NAME", "Ascend950DT_9571")]);
    assert_eq!(codes(&o)[0], ("heap".to_string(), 0), "{}", o.dump());
}

#[test]
fn ascend_950_host_roce_refuses_malloc_host_memory() {
    Case {
        scenario: "roce_950",
        env: A950,
        codes: &[("malloc_host", 103900), ("heap", 0)],
        rules: &["HIXL-REG-HOST-ROCE-950"],
        absent: &[],
        forwarded: &[(REG, 1)],
    }
    .check();
    Case {
        scenario: "roce_950_local_comm_res",
        env: A950,
        codes: &[("malloc_host", 103900)],
        rules: &["HIXL-REG-HOST-ROCE-950"],
        absent: &[],
        forwarded: &[(REG, 0)],
    }
    .check();
    // On A2 the same options are fine (and aclrtMallocHost is what A2 wants).
    let o = run_in(Mode::Preload, "roce_950", &[]);
    assert_eq!(codes(&o)[0], ("malloc_host".to_string(), 0), "{}", o.dump());
}

#[test]
fn unmapped_host_memory() {
    Case {
        scenario: "host_unmapped",
        env: A950,
        codes: &[("half_unmapped", 103900), ("mapped_half", 0)],
        rules: &["HIXL-REG-HOST-UNMAPPED"],
        absent: &[],
        forwarded: &[(REG, 1)],
    }
    .check();
}

#[test]
fn device_memory_origin_and_huge_pages() {
    Case {
        scenario: "device_origin",
        env: &[],
        codes: &[("heap_as_device", 0)],
        rules: &["HIXL-REG-DEVICE-ORIGIN"],
        absent: &[],
        forwarded: &[(REG, 1)],
    }
    .check();
    Case {
        scenario: "device_huge",
        env: &[],
        codes: &[("huge_first", 103900), ("huge_only", 0), ("huge_only_offset", 0), ("huge_first_roce", 0)],
        // HUGE_ONLY memory starts on 2 MiB; one page into it, HCCS is warned about.
        rules: &["HIXL-REG-DEVICE-HUGE", "HIXL-REG-DEVICE-ALIGN"],
        absent: &["HIXL-REG-DEVICE-ORIGIN"],
        forwarded: &[(REG, 3)],
    }
    .check();
    Case {
        scenario: "fabric_mem",
        env: A3_HDK_25_5,
        codes: &[("huge_first", 103900)],
        rules: &["HIXL-REG-DEVICE-HUGE"],
        absent: &[],
        forwarded: &[(REG, 0)],
    }
    .check();
}

/// Atlas A3 with HDK 25.5 (the driver version answered by the vendor's aclsysGetVersionStr).
const A3_HDK_25_5: &[(&str, &str)] = &[("ACLSIM_SOC_NAME", "Ascend910_9391"), ("ACLSIM_DRIVER_VERSION", "25.5.0")];

#[test]
fn memory_mapped_with_the_vmm_api_is_device_memory() {
    let outs = Case {
        scenario: "vmm",
        env: &[],
        // Huge-page VMM memory over HCCS: silent. Normal pages: HIXL-REG-DEVICE-HUGE. Once
        // unmapped, the range is no device memory regcheck knows: HIXL-REG-DEVICE-ORIGIN.
        codes: &[("huge", 0), ("normal", 103900), ("dereg", 0), ("unmap", 0), ("after_unmap", 0)],
        rules: &["HIXL-REG-DEVICE-HUGE", "HIXL-REG-DEVICE-ORIGIN"],
        absent: &[],
        forwarded: &[(REG, 2), ("aclrtMapMem", 2), ("aclrtUnmapMem", 1)],
    }
    .check();
    for o in &outs {
        let first = o.stderr.find("[HIXL-REG-DEVICE-ORIGIN]").unwrap();
        assert!(o.stderr[first..].contains("after_unmap") || o.stdout.contains("rc unmap 0"), "{}", o.dump());
        assert!(o.stderr.contains("ACL_HBM_MEM_NORMAL"), "the attribute is named: {}", o.dump());
        assert_eq!(o.stderr.matches("[HIXL-REG-DEVICE-ORIGIN]").count(), 1, "only after the unmap: {}", o.dump());
    }
}

#[test]
fn fabric_memory_needs_atlas_a3_and_hdk_25_5() {
    // Atlas A2 (the simulator's default SoC): Initialize is rejected, named at the call.
    let outs = Case {
        scenario: "fabric_mem_init",
        env: &[],
        codes: &[("init", 503900), ("register_vmm", 503900)],
        rules: &["HIXL-INIT-FABRIC-MEM", "HIXL-NOT-INITIALIZED"],
        absent: &[],
        forwarded: &[("Hixl::Initialize", 0)],
    }
    .check();
    assert!(outs[0].stderr.contains("Atlas A3"), "{}", outs[0].dump());
    // Atlas A3 with the HDK the vendor reports below 25.5: rejected too.
    let o = run_in(
        Mode::Preload,
        "fabric_mem_init",
        &[("ACLSIM_SOC_NAME", "Ascend910_9391"), ("ACLSIM_DRIVER_VERSION", "25.3.rc1")],
    );
    assert_eq!(codes(&o)[0], ("init".to_string(), 503900), "{}", o.dump());
    assert!(o.stderr.contains("[HIXL-INIT-FABRIC-MEM]") && o.stderr.contains("aclsysGetVersionStr"), "{}", o.dump());
    // HDK 25.5: initialised; VMM memory needs HDK 26.0 to be registered.
    let outs = Case {
        scenario: "fabric_mem_init",
        env: A3_HDK_25_5,
        codes: &[("init", 0), ("register_vmm", 503900)],
        rules: &["HIXL-REG-FABRIC-VMM"],
        absent: &["HIXL-INIT-FABRIC-MEM"],
        forwarded: &[("Hixl::Initialize", 1), (REG, 0)],
    }
    .check();
    assert!(outs[0].stderr.contains("26.0"), "{}", outs[0].dump());
    let o = run_in(
        Mode::Preload,
        "fabric_mem_init",
        &[("ACLSIM_SOC_NAME", "Ascend910_9391"), ("ACLSIM_DRIVER_VERSION", "26.0.0")],
    );
    assert_eq!(codes(&o), vec![("init".to_string(), 0), ("register_vmm".to_string(), 0)], "{}", o.dump());
    assert!(!o.stderr.contains("regcheck: error") && !o.stderr.contains("regcheck: warning"), "{}", o.dump());
}

/// The engine name a scenario printed for `label` (`name <label> <ip:port>`).
fn engine_name(o: &Outcome, label: &str) -> String {
    let prefix = format!("name {label} ");
    o.stdout
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no name for {label}: {}", o.dump()))
        .to_string()
}

#[test]
fn the_engine_each_option_form_selects_is_logged() {
    let env = [("REGCHECK_LOG", "info"), ("ACLSIM_SOC_NAME", "Ascend910_9391"), ("ACLSIM_DRIVER_VERSION", "26.0.0")];
    for mode in MODES {
        let o = run_in(mode, "engine_forms", &env);
        let want = [
            ("default", "comm"),
            ("legacy", "comm"),
            ("local_comm_res_1_3", "hixl_cs"),
            ("roce_device", "hixl_cs"),
            ("hccs_device", "hixl_cs"),
            ("ub_ctp", "hixl_cs"),
            ("fabric_mem", "fabric_mem"),
        ];
        for (label, engine) in want {
            assert!(codes(&o).contains(&(label.to_string(), 0)), "{label}: {}", o.dump());
            let name = engine_name(&o, label);
            let line = format!("Hixl::Initialize(\"{name}\"): HIXL selects the {engine} engine");
            assert!(o.stderr.contains(&line), "{line:?} missing in mode {mode:?}: {}", o.dump());
        }
        // The legacy forms parse without a word: no finding at any level.
        assert!(!o.stderr.contains("[HIXL-") && !o.stderr.contains("[ACL-"), "a finding: {}", o.dump());
        assert!(!o.stderr.contains("cannot understand"), "{}", o.dump());
    }
    // On an Ascend 950 the default options select hixl_cs.
    let o = run_in(Mode::Preload, "engine_forms", &[("REGCHECK_LOG", "info"), ("ACLSIM_SOC_NAME", "Ascend950PR_9579")]);
    let line = format!("Hixl::Initialize(\"{}\"): HIXL selects the hixl_cs engine", engine_name(&o, "default"));
    assert!(o.stderr.contains(&line), "{}", o.dump());
}

#[test]
fn unregistered_transfers_are_staged_on_comm_and_refused_on_hixl_cs() {
    // comm engine, default buffer pool: a TransferSync of unregistered memory is staged
    // through the pool (slower, works): warned and forwarded. TransferAsync is not staged,
    // and ops mixing registered device memory with unregistered memory are PARAM_INVALID.
    let outs = Case {
        scenario: "xfer_unregistered_comm",
        env: &[],
        codes: &[
            ("register", 0),
            ("register_dev", 0),
            ("register_b", 0),
            ("connect", 0),
            ("sync", 0),
            ("async", 103900),
            ("mixed", 103900),
            ("disconnect", 0),
        ],
        rules: &["HIXL-XFER-LOCAL-UNREGISTERED"],
        absent: &[],
        forwarded: &[(XFER, 1), ("Hixl::TransferAsync", 0)],
    }
    .check();
    for o in &outs {
        assert!(o.stderr.contains("regcheck: warning: [HIXL-XFER-LOCAL-UNREGISTERED]"), "{}", o.dump());
        assert!(o.stderr.contains("staging buffer pool"), "{}", o.dump());
        assert!(o.stderr.contains("one transfer type"), "the mixed call: {}", o.dump());
    }
    // The pool turned off ("0:0"): nothing stages it; and hixl_cs refuses ranges outside
    // registered memory. Both rejected before the vendor.
    for scenario in ["xfer_unregistered_comm_no_pool", "xfer_unregistered_hixl_cs"] {
        let outs = Case {
            scenario,
            env: &[],
            codes: &[
                ("register", 0),
                ("register_dev", 0),
                ("register_b", 0),
                ("connect", 0),
                ("sync", 103900),
                ("async", 103900),
                ("mixed", 103900),
                ("disconnect", 0),
            ],
            rules: &["HIXL-XFER-LOCAL-UNREGISTERED"],
            absent: &[],
            forwarded: &[(XFER, 0), ("Hixl::TransferAsync", 0)],
        }
        .check();
        if scenario == "xfer_unregistered_hixl_cs" {
            assert!(outs[0].stderr.contains("hixl_cs engine refuses"), "{}", outs[0].dump());
        }
    }
}

#[test]
fn a_peer_region_registered_after_the_link_is_named_at_the_transfer() {
    // hixl_cs: the link carries the peer's registrations of the moment it was made; a read of
    // a region the peer registered later fails: rejected, named, with the fix.
    let outs = Case {
        scenario: "remote_late_hixl_cs",
        env: &[],
        codes: &[
            ("register", 0),
            ("register_b", 0),
            ("connect", 0),
            ("read_seen", 0),
            ("register_b_late", 0),
            ("read_late", 103900),
            ("disconnect", 0),
            ("connect_again", 0),
            ("read_late_relinked", 0),
            ("disconnect_again", 0),
        ],
        rules: &["HIXL-XFER-REMOTE-UNREGISTERED", "HIXL-REG-AFTER-CONNECT"],
        absent: &["HIXL-XFER-LOCAL-UNREGISTERED"],
        forwarded: &[(XFER, 2)],
    }
    .check();
    for o in &outs {
        assert!(o.stderr.contains("after this link was made"), "{}", o.dump());
        assert!(o.stderr.contains("register all its memory before peers connect"), "{}", o.dump());
    }
    // comm: the engine stages it through its buffer pool: warned, forwarded.
    let outs = Case {
        scenario: "remote_late_comm",
        env: &[],
        codes: &[
            ("register", 0),
            ("register_b", 0),
            ("connect", 0),
            ("read_seen", 0),
            ("register_b_late", 0),
            ("read_late", 0),
            ("disconnect", 0),
            ("connect_again", 0),
            ("read_late_relinked", 0),
            ("disconnect_again", 0),
        ],
        rules: &["HIXL-XFER-REMOTE-UNREGISTERED"],
        absent: &[],
        forwarded: &[(XFER, 3)],
    }
    .check();
    assert_warned(&outs, "HIXL-XFER-REMOTE-UNREGISTERED");
}

#[test]
fn deregistration_rules() {
    // The default (comm) engine accepts DeregisterMem while linked: warned and forwarded.
    let outs = Case {
        scenario: "dereg",
        env: &[],
        codes: &[
            ("register", 0),
            ("register_b", 0),
            ("null", 103900),
            ("connect", 0),
            ("connected", 0),
            ("peer_connected", 0),
            ("disconnect", 0),
            ("first", 0),
            ("twice", 0),
            ("other_instance", 0),
        ],
        rules: &["HIXL-DEREG-NULL", "HIXL-DEREG-CONNECTED", "HIXL-DEREG-UNKNOWN"],
        absent: &[],
        // connected, peer_connected, first, twice and other_instance reach the vendor.
        forwarded: &[(DEREG, 5)],
    }
    .check();
    assert_warned(&outs, "HIXL-DEREG-CONNECTED");
    // hixl_cs refuses it while the instance's own clients (its links to peers) exist; a
    // peer's link to it is the usual teardown and raises nothing.
    let outs = Case {
        scenario: "dereg_hixl_cs",
        env: &[],
        codes: &[
            ("register", 0),
            ("register_b", 0),
            ("null", 103900),
            ("connect", 0),
            ("connected", 503900),
            ("peer_connected", 0),
            ("disconnect", 0),
            ("first", 0),
            ("twice", 0),
            ("other_instance", 0),
        ],
        rules: &["HIXL-DEREG-NULL", "HIXL-DEREG-CONNECTED", "HIXL-DEREG-UNKNOWN"],
        absent: &[],
        forwarded: &[(DEREG, 4)],
    }
    .check();
    for o in &outs {
        assert!(o.stderr.contains("regcheck: error: [HIXL-DEREG-CONNECTED]"), "{}", o.dump());
        assert!(!o.stderr.contains("regcheck: warning: [HIXL-DEREG-CONNECTED]"), "{}", o.dump());
    }
}

#[test]
fn transfer_rules() {
    Case {
        scenario: "transfer",
        env: &[],
        codes: &[
            ("register", 0),
            ("register_b", 0),
            ("not_connected", 103902),
            ("connect", 0),
            ("empty", 103900),
            ("len_zero", 103900),
            ("unregistered", 0),
            ("straddling", 0),
            ("many_ok", 0),
            ("async_unregistered", 103900),
            ("unknown_engine", 103902),
            ("disconnect", 0),
        ],
        rules: &["HIXL-XFER-NOT-CONNECTED", "HIXL-XFER-EMPTY", "HIXL-XFER-LOCAL-UNREGISTERED"],
        absent: &[],
        // The default (comm) engine stages the unregistered TransferSyncs: warned, forwarded.
        forwarded: &[(XFER, 3), ("Hixl::TransferAsync", 0)],
    }
    .check();
}

#[test]
fn leaks_are_listed_at_finalize_and_destruction() {
    let outs = Case {
        scenario: "leak",
        env: &[],
        codes: &[("register", 0), ("register_c", 0)],
        rules: &["HIXL-FINALIZE-LEAK"],
        absent: &[],
        forwarded: &[("Hixl::Finalize", 4), ("Hixl::~Hixl", 3)],
    }
    .check();
    for o in outs {
        assert!(o.stderr.contains("Hixl::~Hixl of"), "destruction reported: {}", o.dump());
        assert_eq!(o.stderr.matches("[HIXL-FINALIZE-LEAK]").count(), 2, "once each, not again from ~Hixl's Finalize");
    }
}

#[test]
fn hixl_cs_memory_rules() {
    Case {
        scenario: "cs",
        env: &[],
        codes: &[
            ("server_create", 0),
            ("server_reg", 0),
            ("server_overlap", 103900),
            ("server_listen", 0),
            ("client_create", 0),
            ("client_null_addr", 103900),
            ("client_len_zero", 103900),
            ("client_memtype", 103900),
            ("client_reg", 0),
            ("client_connect", 0),
            ("client_after_connect", 0),
            ("server_after_client_connected", 0),
            ("put", 0),
            ("client_unreg_null", 103900),
            ("client_unreg", 0),
            ("client_unreg_twice", 103900),
            ("client_destroy", 0),
            ("server_unreg", 0),
            ("server_destroy", 0),
        ],
        rules: &[
            "HIXL-REG-OVERLAP",
            "HIXL-REG-NULL-ADDR",
            "HIXL-REG-LEN-ZERO",
            "HIXL-REG-MEMTYPE",
            "HIXL-REG-AFTER-CONNECT",
            "HIXL-DEREG-NULL",
            "HIXL-DEREG-UNKNOWN",
        ],
        absent: &["HIXL-REG-HOST-ORIGIN"],
        // The registrations after the connection are warned and forwarded.
        forwarded: &[("HixlCSServerRegMem", 2), ("HixlCSClientRegMem", 2), ("HixlCSClientUnregMem", 2)],
    }
    .check();
    Case {
        scenario: "cs_roce_950",
        env: A950,
        codes: &[("client_create", 0), ("client_reg_malloc_host", 103900), ("client_destroy", 0)],
        rules: &["HIXL-REG-HOST-ROCE-950"],
        absent: &[],
        forwarded: &[("HixlCSClientRegMem", 0)],
    }
    .check();
}

#[test]
fn report_and_off_modes_forward_everything() {
    let o = run_in(Mode::Preload, "args", &[("REGCHECK_MODE", "report")]);
    let got: Vec<u32> = codes(&o).into_iter().map(|(_, c)| c).collect();
    assert_eq!(got, vec![103900, 0, 103900, 0], "the vendor's own answers: {}", o.dump());
    assert!(o.stderr.contains("[HIXL-REG-LEN-ZERO]") && o.stderr.contains("report mode"), "{}", o.dump());
    let o = run_in(Mode::Static, "args", &[("REGCHECK_MODE", "off")]);
    assert!(!o.stderr.contains("[HIXL-"), "{}", o.dump());
    assert_eq!(o.sim_calls(REG), 4);
    let o = run_in(Mode::Shared, "args", &[("REGCHECK_RULES", "HIXL-REG-LEN-ZERO=off,HIXL-REG-MEMTYPE=warn")]);
    let got: Vec<u32> = codes(&o).into_iter().map(|(_, c)| c).collect();
    assert_eq!(got, vec![103900, 0, 103900, 0], "{}", o.dump());
    assert!(o.stderr.contains("warning: [HIXL-REG-MEMTYPE]"), "{}", o.dump());
}

#[test]
fn skipped_rules_are_logged_once_at_info() {
    let o = run_in(Mode::Preload, "device_huge", &[("REGCHECK_LOG", "info"), ("ACLSIM_SOC_NAME", "")]);
    assert!(o.stderr.contains("transports hccs:device"), "the options were read: {}", o.dump());
    let o = run_in(Mode::Preload, "host_origin", &[("REGCHECK_LOG", "info"), ("ACLSIM_SOC_NAME", "")]);
    assert_eq!(o.stderr.matches("HIXL-REG-HOST-ORIGIN skipped").count(), 1, "{}", o.dump());
    assert_eq!(codes(&o)[0], ("heap".to_string(), 0), "unknown SoC: allowed");
}

#[test]
fn the_demo_passes_bare_and_under_regcheck() {
    let bare = Program::cxx("hixl_demo", &["examples-c/hixl_demo.cpp"]).link(Link::Bare).libs(LIBS).build();
    let linked = Program::cxx("hixl_demo", &["examples-c/hixl_demo.cpp"]).link(Link::RegcheckShared).libs(LIBS).build();
    for r in [Run::new(&bare), Run::new(&bare).preload(testkit::regcheck().shared), Run::new(&linked)] {
        let o = r.run();
        o.assert_success().assert_stdout_contains("identical").assert_stdout_contains("hixl_demo: OK");
        assert!(!o.stderr.contains("regcheck: error") && !o.stderr.contains("regcheck: warning"), "{}", o.dump());
    }
    let o = Run::new(&bare).arg("--mistakes").preload(testkit::regcheck().shared).run();
    o.assert_success();
    for rule in [
        "HIXL-NOT-INITIALIZED",
        "HIXL-REG-NULL-ADDR",
        "HIXL-REG-LEN-ZERO",
        "HIXL-REG-MEMTYPE",
        "HIXL-REG-HOST-ORIGIN",
        "HIXL-REG-OVERLAP",
        "HIXL-REG-DEVICE-HUGE",
        "HIXL-XFER-NOT-CONNECTED",
        "HIXL-REG-AFTER-CONNECT",
        "HIXL-XFER-LOCAL-UNREGISTERED",
        "HIXL-XFER-EMPTY",
        "HIXL-DEREG-CONNECTED",
        "HIXL-DEREG-UNKNOWN",
        "HIXL-DEREG-NULL",
        "HIXL-FINALIZE-LEAK",
    ] {
        assert!(o.stderr.contains(&format!("[{rule}]")), "{rule} missing from the demo: {}", o.dump());
    }
    Run::new(&bare).arg("--mistakes").run().assert_success();
}

#[test]
fn a_c_program_links_libregcheck_a_without_hixl() {
    // A C program using regcheck's own API links libregcheck.a with the ACL library only.
    let dir = testkit::target_dir().join("testkit");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("hixl_no_hixl.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\n#include \"regcheck.h\"\nint main(void) { printf(\"linked %s\\n\", regcheck_version()); return 0; }\n",
    )
    .unwrap();
    let exe = Program::c("hixl_no_hixl", &[&src]).link(Link::RegcheckStatic).libs(&["ascendcl"]).build();
    Run::new(exe).run().assert_success().assert_stdout_contains("linked ");
    // And the options bridge inside it references no symbol at all (no vendor symbol, no
    // libstdc++), so nothing beyond Rust's own native libraries is needed.
    let lib = testkit::regcheck().static_lib;
    let members = std::process::Command::new("ar").arg("t").arg(&lib).output().expect("ar");
    let listing = String::from_utf8_lossy(&members.stdout).into_owned();
    let member =
        listing.lines().find(|m| m.contains("hixl_bridge")).expect("the bridge is in libregcheck.a").to_string();
    let obj = dir.join("hixl_bridge_member.o");
    let bytes = std::process::Command::new("ar").arg("p").arg(&lib).arg(&member).output().expect("ar p").stdout;
    std::fs::write(&obj, bytes).unwrap();
    let undefined = std::process::Command::new("nm").arg("-u").arg(&obj).output().expect("nm");
    assert!(undefined.status.success());
    assert_eq!(String::from_utf8_lossy(&undefined.stdout).trim(), "", "the bridge needs no symbol");
}

#[test]
fn the_two_process_demo_names_the_late_registration_in_the_server() {
    let src = ["examples-c/hixl_two_process.cpp"];
    let bare = Program::cxx("hixl_two_process", &src).link(Link::Bare).libs(LIBS).build();
    let linked = Program::cxx("hixl_two_process", &src).link(Link::RegcheckShared).libs(LIBS).build();
    // Bare: the first read works; the second fails in the client, with a bare code.
    let o = Run::new(&bare).run();
    o.assert_success().assert_stdout_contains("TransferSync(READ the first buffer) -> 0");
    assert!(o.stdout.contains("TransferSync(READ the second buffer) -> 103900"), "{}", o.dump());
    assert!(!o.stderr.contains("regcheck:"), "{}", o.dump());
    // Under regcheck (preloaded, or linked ahead of the vendor): the server's late
    // RegisterMem is named where it happens, with the fix; nothing else is reported. The
    // client's connection is counted the cheaper way, and either way when told
    // (REGCHECK_TEST_PEERS: sock_diag netlink, or /proc/self/fd as where netlink is
    // unavailable): the same answer.
    let preload = || Run::new(&bare).preload(testkit::regcheck().shared);
    let (diag, fd) = (preload().env("REGCHECK_TEST_PEERS", "diag"), preload().env("REGCHECK_TEST_PEERS", "fd"));
    for r in [preload(), Run::new(&linked), diag, fd] {
        let o = r.run();
        o.assert_success();
        assert!(o.stderr.contains("regcheck: warning: [HIXL-REG-AFTER-CONNECT] Hixl::RegisterMem"), "{}", o.dump());
        assert!(o.stderr.contains("from peers in other processes"), "{}", o.dump());
        assert!(o.stderr.contains("Fix: register all local memory before Connect"), "{}", o.dump());
        assert_eq!(o.stderr.matches("regcheck: ").count(), 1, "one finding: {}", o.dump());
    }
}
