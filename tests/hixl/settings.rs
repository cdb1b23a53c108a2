//! What the user chooses and what is logged of it: the engine each Initialize option form
//! selects, `REGCHECK_MODE`, the rules skipped for want of a fact.

use crate::{codes, run_in, REG};
use testkit::{Mode, Outcome, MODES};

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
    // On an Ascend 950 the default options select hixl_cs after 9.1 (hicann/hixl bb0d0f6,
    // engine_factory.cc's SoC branch) and the comm engine on 9.1.0, whose factory has none; with
    // the release only assumed, the engine is unknown and the rules that need it are skipped.
    for (release, engine) in [("9.2.0", "hixl_cs"), ("9.1.0", "comm")] {
        let env = [("REGCHECK_LOG", "info"), ("ACLSIM_SOC_NAME", "Ascend950PR_9579"), ("ACLSIM_CANN_VERSION", release)];
        let o = run_in(Mode::Preload, "engine_forms", &env);
        let line = format!("Hixl::Initialize(\"{}\"): HIXL selects the {engine} engine", engine_name(&o, "default"));
        assert!(o.stderr.contains(&line), "{release}: {}", o.dump());
        assert!(codes(&o).contains(&("default".to_string(), 0)), "{release}: {}", o.dump());
    }
    let env = [("REGCHECK_LOG", "info"), ("ACLSIM_SOC_NAME", "Ascend950PR_9579"), ("ACLSIM_CANN_VERSION", "")];
    let o = run_in(Mode::Preload, "engine_forms", &env);
    let line = format!("Hixl::Initialize(\"{}\"): the engine is unknown", engine_name(&o, "default"));
    assert!(o.stderr.contains(&line) && o.stderr.contains("REGCHECK_CANN_VERSION"), "{}", o.dump());
    // (fabric memory on an Ascend 950 is refused whatever the release)
    let findings = o.stderr.lines().filter(|l| l.contains("[HIXL-") && !l.contains("[HIXL-INIT-FABRIC-MEM]"));
    assert_eq!(findings.count(), 0, "nothing decided on an assumption: {}", o.dump());
}

#[test]
fn report_and_off_modes_forward_everything() {
    let o = run_in(Mode::Preload, "args", &[("REGCHECK_MODE", "report")]);
    let got: Vec<u32> = codes(&o).into_iter().map(|(_, c)| c).collect();
    // len 0 on the default (comm) engine: HCCL's refusal, the vendor's own answer
    assert_eq!(got, vec![103900, 103900, 103900, 0], "the vendor's own answers: {}", o.dump());
    assert!(o.stderr.contains("[HIXL-REG-LEN-ZERO]") && o.stderr.contains("report mode"), "{}", o.dump());
    let o = run_in(Mode::Static, "args", &[("REGCHECK_MODE", "off")]);
    assert!(!o.stderr.contains("[HIXL-"), "{}", o.dump());
    assert_eq!(o.sim_calls(REG), 4);
    let o = run_in(Mode::Shared, "args", &[("REGCHECK_RULES", "HIXL-REG-LEN-ZERO=off,HIXL-REG-MEMTYPE=warn")]);
    let got: Vec<u32> = codes(&o).into_iter().map(|(_, c)| c).collect();
    assert_eq!(got, vec![103900, 103900, 103900, 0], "{}", o.dump());
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
