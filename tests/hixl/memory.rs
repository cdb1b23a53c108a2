//! Where registered memory comes from, by product and engine: host memory (aclrtMallocHost or
//! not, mapped at all), device memory (huge pages, the VMM API), fabric memory; and the
//! `HixlCS*` memory rules.

use crate::{codes, run_in, scenarios, Case, A950, REG};
use testkit::{Mode, MODES};

#[test]
fn host_memory_origin_by_product() {
    Case {
        scenario: "host_origin",
        env: &[],
        // The vendor registers heap memory (its own Python test does): a warning.
        codes: &[("heap", 0), ("malloc_host", 0)],
        rules: &["HIXL-REG-HOST-ORIGIN"],
        absent: &[],
        forwarded: &[(REG, 2)],
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

/// A rejection needs certainty: what judges a call by regcheck's records of C calls (here,
/// which aclrtMalloc policy gave the device memory) rejects only when those records are
/// whole. Preloaded or linked (`-lregcheck`), regcheck's own `dlsym` makes them whole without
/// the `LD_AUDIT` module (issue 32: the HCCS case is 103900 under `regcheck run`, as under
/// `regcheck run --audit`; seen failing before: "regcheck saw this itself", forwarded, 0).
/// Linked with libregcheck.a, regcheck cannot put its `dlsym` in front: a call made through a
/// handle of the caller's own may never have reached it, and the finding is a warning that
/// says so and how to be sure.
#[test]
fn rejections_by_records_are_certain_preloaded_or_linked() {
    let want = |first: u32| {
        vec![
            ("huge_first".to_string(), first),
            ("huge_only".to_string(), 0),
            ("huge_only_offset".to_string(), 0),
            ("huge_first_roce".to_string(), 0),
        ]
    };
    for mode in [Mode::Preload, Mode::Shared] {
        let o = run_in(mode, "device_huge", &[]);
        assert_eq!(codes(&o), want(103900), "{mode:?}: {}", o.dump());
        assert!(o.stderr.contains("regcheck: error: [HIXL-REG-DEVICE-HUGE]"), "{mode:?}: {}", o.dump());
        assert!(!o.stderr.contains("regcheck saw this itself"), "{mode:?}: {}", o.dump());
    }
    // `regcheck run`, without --audit.
    let o = testkit::Run::new(testkit::regcheck().cli.as_path())
        .arg("run")
        .arg("--")
        .arg(scenarios().bare_exe())
        .arg("device_huge")
        .env("LD_LIBRARY_PATH", testkit::sim_lib_dir())
        .run();
    assert_eq!(codes(&o), want(103900), "regcheck run: {}", o.dump());
    // Linked with libregcheck.a: regcheck stays unsure, and says why.
    for audited in [false, true] {
        let run = scenarios().run(Mode::Static).arg("device_huge");
        let o = if audited { run.audit() } else { run }.run();
        assert_eq!(codes(&o), want(0), "{}", o.dump());
        assert!(o.stderr.contains("regcheck saw this itself"), "{}", o.dump());
        assert!(o.stderr.contains("regcheck's own dlsym is not the one this program uses"), "{}", o.dump());
    }
    let o = scenarios().run(Mode::Preload).arg("device_huge").audit().run();
    assert_eq!(codes(&o), want(103900), "{}", o.dump());
    assert!(!o.stderr.contains("regcheck saw this itself"), "{}", o.dump());
}

/// LMCache-Ascend's order: host memory from aclrtMallocHost through ctypes, the registration
/// through its pybind11 module. Under LD_PRELOAD alone regcheck never saw the allocation: it
/// rejected the registration (103900, the vendor not called) and broke a working program.
#[test]
fn host_memory_allocated_through_dlsym_is_never_rejected() {
    for mode in MODES {
        let o = run_in(mode, "host_origin_dlsym", &[]);
        assert_eq!(codes(&o), vec![("dlsym_malloc_host".to_string(), 0), ("heap".to_string(), 0)], "{}", o.dump());
        assert_eq!(o.sim_calls(REG), 2, "{}", o.dump());
        assert!(!o.stderr.contains("regcheck: error"), "{}", o.dump());
    }
    // With the module the allocation is seen: that registration is clean; the heap one is
    // warned about.
    let o = scenarios().run(Mode::Preload).arg("host_origin_dlsym").audit().run();
    assert_eq!(codes(&o), vec![("dlsym_malloc_host".to_string(), 0), ("heap".to_string(), 0)], "{}", o.dump());
    assert_eq!(o.stderr.matches("[HIXL-REG-HOST-ORIGIN]").count(), 1, "only the heap one: {}", o.dump());
    assert!(!o.stderr.contains("regcheck: error"), "{}", o.dump());
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
    .check_audited();
    Case {
        scenario: "roce_950_local_comm_res",
        env: A950,
        codes: &[("malloc_host", 103900)],
        rules: &["HIXL-REG-HOST-ROCE-950"],
        absent: &[],
        forwarded: &[(REG, 0)],
    }
    .check_audited();
    // On A2 the same options are fine (and aclrtMallocHost is what A2 wants).
    let o = run_in(Mode::Preload, "roce_950", &[]);
    assert_eq!(codes(&o)[0], ("malloc_host".to_string(), 0), "{}", o.dump());
}

#[test]
fn unmapped_host_memory() {
    Case {
        scenario: "host_unmapped",
        env: A950,
        // The vendor checks nothing of the memory at registration (HCCL fails later): warned,
        // and the registration stands, so the mapped half overlaps it.
        codes: &[("half_unmapped", 0), ("mapped_half", 103900)],
        rules: &["HIXL-REG-HOST-UNMAPPED", "HIXL-REG-OVERLAP"],
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
    .check_audited();
    Case {
        scenario: "fabric_mem",
        env: A3_HDK_25_5,
        codes: &[("huge_first", 103900)],
        rules: &["HIXL-REG-DEVICE-HUGE"],
        absent: &[],
        forwarded: &[(REG, 0)],
    }
    .check_audited();
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
    .check_audited();
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
    .check_audited();
    assert!(outs[0].stderr.contains("26.0"), "{}", outs[0].dump());
    let o = run_in(
        Mode::Preload,
        "fabric_mem_init",
        &[("ACLSIM_SOC_NAME", "Ascend910_9391"), ("ACLSIM_DRIVER_VERSION", "26.0.0")],
    );
    assert_eq!(codes(&o), vec![("init".to_string(), 0), ("register_vmm".to_string(), 0)], "{}", o.dump());
    assert!(!o.stderr.contains("regcheck: error") && !o.stderr.contains("regcheck: warning"), "{}", o.dump());
}

#[test]
fn hixl_cs_memory_rules() {
    Case {
        scenario: "cs",
        env: &[],
        codes: &[
            ("server_create", 0),
            ("server_reg", 0),
            // The server checks only the memory type (hixl_cs_server.cc): warned, accepted.
            ("server_overlap", 0),
            ("server_listen", 0),
            ("client_create", 0),
            ("client_null_addr", 103900),
            ("client_len_zero", 103900),
            // Type -1: warned, and the vendor records it as host memory.
            ("client_memtype", 0),
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
        // The server's overlap, the client's memory type and the registrations after the
        // connection are warned and forwarded.
        forwarded: &[("HixlCSServerRegMem", 3), ("HixlCSClientRegMem", 3), ("HixlCSClientUnregMem", 2)],
    }
    .check_audited();
    Case {
        scenario: "cs_roce_950",
        env: A950,
        codes: &[("client_create", 0), ("client_reg_malloc_host", 103900), ("client_destroy", 0)],
        rules: &["HIXL-REG-HOST-ROCE-950"],
        absent: &[],
        forwarded: &[("HixlCSClientRegMem", 0)],
    }
    .check_audited();
}

/// `HixlCSServerRegMem` on a server with UB endpoints: host memory with only a device-side UB
/// endpoint, and a type neither host nor device, are refused by the vendor before any endpoint
/// sees them (hicann/hixl `HixlCSServer::RegisterMem`, in CANN 9.1.0 too); regcheck rejects them
/// with its code, naming the argument, and forwards what an endpoint takes.
#[test]
fn hixl_cs_server_refuses_memory_no_endpoint_takes() {
    let outs = Case {
        scenario: "cs_server_ub_endpoints",
        env: &[],
        codes: &[
            ("server_create", 0),
            ("server_reg_host_on_device_ub", 103900),
            ("server_reg_device_on_device_ub", 0),
            ("server_reg_type_5", 103900),
            ("server_unreg_device", 0),
            ("server_destroy", 0),
            ("server2_create", 0),
            ("server2_reg_host", 0),
            ("server2_unreg_host", 0),
            ("server2_destroy", 0),
        ],
        rules: &["HIXL-REG-NO-ENDPOINT"],
        absent: &[],
        forwarded: &[("HixlCSServerRegMem", 2)],
    }
    .check_audited();
    for o in &outs {
        let errors: Vec<&str> =
            o.stderr.lines().filter(|l| l.starts_with("regcheck: error: [HIXL-REG-NO-ENDPOINT]")).collect();
        assert_eq!(errors.len(), 2, "{}", o.dump());
        assert!(errors.iter().all(|l| l.contains("`mem->type`")), "{errors:?}");
        for said in ["its endpoints are UBC_TP on the device", "no endpoint matches mem type", "invalid mem type"] {
            assert!(o.stderr.contains(said), "{said:?} missing: {}", o.dump());
        }
    }
    // the bare simulator answers the same
    let o = crate::bare("cs_server_ub_endpoints", &[]);
    let got: Vec<u32> = crate::codes(&o).into_iter().map(|(_, c)| c).collect();
    assert_eq!(got, vec![0, 103900, 0, 103900, 0, 0, 0, 0, 0, 0], "{}", o.dump());
}

/// `HixlCSServerRegMem` of address 0, or of a range ending exactly at 2^64: the public
/// `HixlCSServer::RegisterMem` checks neither (the memory goes to hcomm), so regcheck warns
/// and forwards (issue 33 item 4).
#[test]
fn hixl_cs_server_takes_what_it_does_not_check() {
    Case {
        scenario: "cs_server_edges",
        env: &[],
        codes: &[
            ("server_create", 0),
            ("server_null_addr", 0),
            ("server_end_at_top", 0),
            ("server_unreg_null_addr", 0),
            ("server_unreg_end_at_top", 0),
            ("server_destroy", 0),
        ],
        rules: &["HIXL-REG-NULL-ADDR", "HIXL-REG-RANGE-OVERFLOW"],
        absent: &[],
        forwarded: &[("HixlCSServerRegMem", 2), ("HixlCSServerUnregMem", 2)],
    }
    .check_audited();
}
