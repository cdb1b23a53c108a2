//! The simulator's behaviour, proved by C and C++ programs (sim/tests/) run bare against it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use testkit::{output_within, sim_include_dir, sim_lib_dir, Link, Outcome, Program, Run};

/// Runs a tool (compiler, nm, readelf) with a bound.
fn tool(cmd: &mut Command) -> Output {
    let shown = format!("{cmd:?}");
    output_within(cmd, Duration::from_secs(300)).unwrap_or_else(|e| panic!("{shown}: {e}"))
}

const OLD_KERNEL: &str = "5.10.0-60.18.0.50.oe2203.aarch64";

fn acl_codes(libs: &[&str], name: &str) -> PathBuf {
    Program::c(name, &["sim/tests/acl_codes.c"]).libs(libs).build()
}

/// A run of the acl_codes program. Under the emulator its file-backed-mapping case is left out
/// (qemu-user's emulated /proc/self/maps does not always name the file; `cargo xtask cross`
/// lists it): the program says so on its output, and this checks that it did.
fn codes_run(exe: &Path) -> Run {
    let run = Run::new(exe);
    match testkit::emulator() {
        Some(_) => run.env("ACL_CODES_NO_FILE_MAPPING", "1"),
        None => run,
    }
}

/// The acl_codes program passed, and left out its file-backed case exactly under the emulator.
fn codes_checked(out: &Outcome) {
    checked(out);
    let skipped = out.stdout.contains("skipped: the file-backed mapping case");
    assert_eq!(skipped, testkit::emulator().is_some(), "{}", out.dump());
}

fn checked(out: &Outcome) {
    out.assert_success().assert_stdout_contains("failures=0");
}

fn acl_modes() -> PathBuf {
    Program::c("acl_modes", &["sim/tests/acl_modes.c"]).libs(&["ascendcl"]).build()
}

#[test]
fn acl_codes_through_libascendcl() {
    let out = codes_run(&acl_codes(&["ascendcl"], "acl_codes_ascendcl")).run();
    codes_checked(&out);
    // every call reached the simulator and was traced
    out.assert_sim_calls("aclInit", 4);
    assert!(out.sim_calls("aclrtHostRegisterV2") > 20, "{}", out.dump());
    assert_eq!(out.sim_results("aclInit"), ["100003", "0", "100002", "100002"].map(String::from).to_vec());
    assert!(out.stderr.contains("[aclsim] aclInit(NULL) -> 0\n"));
    assert!(out.sim_results("aclrtHostUnregister").contains(&"507911".to_string()));
    assert!(out.sim_results("aclrtHostRegisterV2").contains(&"507910".to_string()));
    assert!(out.sim_results("aclrtHostRegisterV2").contains(&"507899".to_string()));
}

#[test]
fn acl_codes_through_libacl_rt() {
    let out = codes_run(&acl_codes(&["acl_rt"], "acl_codes_acl_rt")).run();
    codes_checked(&out);
    out.assert_sim_calls("aclFinalize", 4);
}

#[test]
fn trace_only_with_aclsim_trace_1() {
    let exe = acl_codes(&["ascendcl"], "acl_codes_ascendcl");
    let out = codes_run(&exe).env_remove("ACLSIM_TRACE").run();
    codes_checked(&out);
    assert!(!out.stderr.contains("[aclsim]"), "{}", out.dump());
    let out = codes_run(&exe).env("ACLSIM_TRACE", "0").run();
    codes_checked(&out);
    assert!(!out.stderr.contains("[aclsim]"), "{}", out.dump());
}

#[test]
fn inherited_aclsim_variables_are_cleared() {
    // Run must not pass on an ACLSIM_* variable of the test process. Rather than setting one
    // here (set_var races with the other test threads), this test runs itself again, alone, in
    // a test process that has one.
    const INHERITED: &str = "Ascend310P3";
    if std::env::var("ACLSIM_SOC_NAME").as_deref() != Ok(INHERITED) {
        let mut cmd = testkit::command(std::env::current_exe().expect("the test binary"));
        cmd.args(["--exact", "inherited_aclsim_variables_are_cleared", "--test-threads=1"])
            .env("ACLSIM_SOC_NAME", INHERITED);
        let out = output_within(&mut cmd, Duration::from_secs(300)).expect("the test binary ran");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "with ACLSIM_SOC_NAME={INHERITED} inherited ({}):\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let exe = acl_modes();
    Run::new(&exe).arg("socname").run().assert_success().assert_stdout_contains("soc=Ascend910B1");
    Run::new(&exe)
        .arg("socname")
        .env("ACLSIM_SOC_NAME", "Ascend910_9391")
        .run()
        .assert_success()
        .assert_stdout_contains("soc=Ascend910_9391");
}

#[test]
fn product_support_by_soc_name() {
    let exe = acl_modes();
    let cases: &[(&str, i32)] = &[
        ("Ascend910B1", 0),
        ("Ascend910B4-1", 0),
        ("Ascend910_9391", 0),
        ("Ascend950PR_9579", 0),
        ("Ascend950DT_9571", 0),
        ("SomeFutureChip", 0),
        // hicann/runtime src/runtime/config/*/dev_info_reg.cc: RT_FEATURE_MEM_HOST_REGISTER is in
        // the cloud chip's table (training series, config/cloud), not in dc (inference) nor
        // mini_v3 (200I/500 A2); the product documentation's "training: unsupported" loses to it
        ("Ascend310B1", 207000),
        ("Ascend310P3", 207000),
        ("Ascend910A", 0),
        ("Ascend910B", 0), // the bare name is the old training part
        ("Ascend910ProB", 0),
    ];
    for (soc, code) in cases {
        for pin in ["0", "1"] {
            let out = Run::new(&exe)
                .args(["soc", &code.to_string()])
                .env("ACLSIM_SOC_NAME", soc)
                .env("ACLSIM_PIN_REGISTER", pin)
                .env("ACLSIM_CANN_VERSION", "9.2.0")
                .run();
            if !out.status.success() {
                panic!("SoC {soc} (ACLSIM_PIN_REGISTER={pin}): expected {code}\n{}", out.dump());
            }
        }
    }
}

#[test]
fn soc_name_from_environment() {
    let exe = acl_modes();
    Run::new(&exe).arg("socname").run().assert_success().assert_stdout_contains("soc=Ascend910B1");
    Run::new(&exe)
        .arg("socname")
        .env("ACLSIM_SOC_NAME", "Ascend310P3")
        .run()
        .assert_success()
        .assert_stdout_contains("soc=Ascend310P3");
    let out = Run::new(&exe).arg("socname").env("ACLSIM_SOC_NAME", "").run();
    out.assert_success().assert_stdout_contains("soc=NULL");
    assert_eq!(out.sim_results("aclrtGetSocName"), vec!["NULL".to_string()]);
}

#[test]
fn versions_from_environment() {
    let exe = acl_modes();
    Run::new(&exe)
        .arg("version")
        .run()
        .assert_success()
        // the release profile users run, by default
        .assert_stdout_contains("cann=9.1.0 90100000 rc=0,0")
        // The vendor's parser (CalculateVersionNum) needs a numeric third part: the HDK's
        // "25.3.rc1" is a version string, not a version number (500000, nothing written).
        .assert_stdout_contains("driver=25.3.rc1 0 rc=0,500000");
    Run::new(&exe)
        .arg("version")
        .env("ACLSIM_CANN_VERSION", "8.0.RC3")
        .env("ACLSIM_DRIVER_VERSION", "25.5.0")
        .run()
        .assert_success()
        .assert_stdout_contains("driver=25.5.0 250500000 rc=0,0");
    Run::new(&exe)
        .arg("version")
        .env("ACLSIM_CANN_VERSION", "")
        .run()
        .assert_success()
        .assert_stdout_contains("rc=100003,");
}

#[test]
fn old_kernel_aborts_on_pageable_memory() {
    let exe = acl_modes();
    // "pinned" reaches the driver only on the driver path: the runtime's own tables record a
    // PINNED-only registration without calling the driver (hicann/runtime
    // src/runtime/api/impl/api_impl.cc ApiImpl::HostRegisterV2)
    for (kind, pin) in [("malloc", "0"), ("malloc", "1"), ("pinned", "1")] {
        let out = Run::new(&exe)
            .args(["register", kind])
            .env("ACLSIM_KERNEL_RELEASE", OLD_KERNEL)
            .env("ACLSIM_PIN_REGISTER", pin)
            .env("ACLSIM_CANN_VERSION", "9.2.0")
            .run();
        out.assert_aborted().assert_stderr_contains(&format!(
            "aclsim: simulated driver exception: kernel {OLD_KERNEL} (<= 5.10) cannot register non-page-locked memory 0x"
        ));
        out.assert_sim_calls("aclrtHostRegisterV2", 0); // no trace line: it never returned
    }
    // The runtime's tables: the driver's feature off, or a 9.1.0 runtime (the default
    // profile), which never asks the driver for it (hicann/runtime v9.1.0 api_impl.cc:2415).
    for (pin, release) in [("0", "9.2.0"), ("1", "9.1.0")] {
        Run::new(&exe)
            .args(["register", "pinned"])
            .env("ACLSIM_KERNEL_RELEASE", OLD_KERNEL)
            .env("ACLSIM_PIN_REGISTER", pin)
            .env("ACLSIM_CANN_VERSION", release)
            .run()
            .assert_success()
            .assert_stdout_contains("rc=0\n");
    }
    let out = Run::new(&exe).args(["register", "malloc"]).env("ACLSIM_KERNEL_RELEASE", "5.4.0").run();
    out.assert_aborted();
}

#[test]
fn old_kernel_accepts_page_locked_memory() {
    let exe = acl_modes();
    for kind in ["mallochost", "mlock"] {
        Run::new(&exe)
            .args(["register", kind])
            .env("ACLSIM_KERNEL_RELEASE", OLD_KERNEL)
            .run()
            .assert_success()
            .assert_stdout_contains("rc=0\n");
    }
}

#[test]
fn newer_kernel_accepts_pageable_memory_and_threshold_is_settable() {
    let exe = acl_modes();
    Run::new(&exe)
        .args(["register", "malloc"])
        .env("ACLSIM_KERNEL_RELEASE", "5.15.0-91-generic")
        .run()
        .assert_success()
        .assert_stdout_contains("rc=0\n");
    Run::new(&exe)
        .args(["register", "malloc"])
        .env("ACLSIM_KERNEL_RELEASE", "5.15.0-91-generic")
        .env("ACLSIM_PAGEABLE_KERNEL_MAX", "5.19")
        .run()
        .assert_aborted()
        .assert_stderr_contains("(<= 5.19)");
    // the machine's own kernel (6.x here) accepts malloc memory by default
    Run::new(&exe).args(["register", "malloc"]).run().assert_success().assert_stdout_contains("rc=0\n");
}

#[test]
fn host_page_size_is_settable() {
    let exe = acl_modes();
    Run::new(&exe).args(["register", "offset4k"]).run().assert_success().assert_stdout_contains("rc=0\n");
    Run::new(&exe)
        .args(["register", "offset4k"])
        .env("ACLSIM_HOST_PAGE_SIZE", "65536")
        .run()
        .assert_success()
        .assert_stdout_contains("rc=507899\n");
}

#[test]
fn malloc_host_offset_and_big_allocations() {
    let exe = acl_modes();
    // the vendor guarantees only 64-byte alignment: the driver then rejects the pointer
    Run::new(&exe)
        .args(["register", "mallochost"])
        .env("ACLSIM_MALLOC_HOST_OFFSET", "64")
        .run()
        .assert_success()
        .assert_stdout_contains("rc=507899\n");
    // a huge aclrtMallocHost is reserved, not locked, and still counts as page-locked
    Run::new(&exe)
        .args(["register", "mallochost_big"])
        .env("ACLSIM_KERNEL_RELEASE", OLD_KERNEL)
        .run()
        .assert_success()
        .assert_stdout_contains("rc=0\n");
}

#[test]
fn both_library_names_share_one_state() {
    for (libs, name) in [(["ascendcl"], "two_libs_ascendcl"), (["acl_rt"], "two_libs_acl_rt")] {
        let exe = Program::c(name, &["sim/tests/two_libs.c"]).libs(&libs).flag("-ldl").build();
        let out = Run::new(exe).run();
        checked(&out);
        out.assert_sim_calls("aclrtHostRegisterV2", 3);
    }
}

#[test]
fn call_counters() {
    Run::new(acl_modes()).arg("count").run().assert_success().assert_stdout_contains("count=3\n");
}

#[test]
fn concurrent_registrations_keep_the_registry_exact() {
    let out = Run::new(acl_modes()).arg("threads").env_remove("ACLSIM_TRACE").run();
    checked(&out);
}

#[test]
fn fork_keeps_registrations_and_does_not_deadlock() {
    let out = Run::new(acl_modes()).arg("fork").env_remove("ACLSIM_TRACE").run();
    checked(&out);
}

#[test]
fn hixl_two_engines_and_client_server() {
    let exe = Program::cxx("hixl_sim", &["sim/tests/hixl_sim.cpp"]).libs(&["cann_hixl", "ascendcl"]).build();
    let out = Run::new(exe).run();
    checked(&out);
    assert!(out.sim_calls("Hixl::TransferSync") >= 10, "{}", out.dump());
    // a refused connection fails at once
    assert!(out.sim_results("Hixl::Connect").contains(&"503900".to_string()), "{}", out.dump());
    // each engine creates its own context through the PLT at Initialize and destroys it again
    assert!(out.sim_calls("aclrtCreateContext") >= 4, "{}", out.dump());
    assert_eq!(out.sim_calls("aclrtCreateContext"), out.sim_calls("aclrtDestroyContext"), "{}", out.dump());
    // destructors finalize
    assert!(out.sim_calls("Hixl::Finalize") >= 5, "{}", out.dump());
}

/// A transfer over memory that is not mapped fails instead of crashing the process, with
/// `process_vm_readv` and where it is refused (the pipe path, which qemu-user takes too).
#[test]
fn hixl_copies_never_crash_on_unmapped_memory() {
    let exe =
        Program::cxx("hixl_safe_copy", &["sim/tests/hixl_safe_copy.cpp"]).libs(&["cann_hixl", "ascendcl"]).build();
    for refused in [false, true] {
        let mut run = Run::new(&exe);
        if refused {
            run = run.env("ACLSIM_NO_PROCESS_VM_READV", "1");
        }
        let out = run.run();
        checked(&out);
        assert!(out.stdout.contains("checks=11 failures=0"), "refused={refused}: {}", out.dump());
    }
}

#[test]
fn hixl_logs_through_acl_by_weak_references() {
    // libcann_hixl.so refers to ACL's log functions weakly, as the vendor's hixl_log.h does: it
    // loads without them (every other test) and uses them when they are there (here: the
    // program's own, exported with -rdynamic)
    let out = tool(Command::new("nm").args(["-D", "--undefined-only"]).arg(sim_lib_dir().join("libcann_hixl.so")));
    let undefined = String::from_utf8_lossy(&out.stdout).into_owned();
    for name in ["acllogCheckDebugLevel", "acllogRecord", "aclsysGetVersionNum"] {
        assert!(
            undefined.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["w", name]),
            "{name}: {undefined}"
        );
    }
    let exe = Program::cxx("hixl_log", &["sim/tests/hixl_log.cpp"])
        .libs(&["cann_hixl", "ascendcl"])
        .flag("-rdynamic")
        .build();
    // errors always reach acllogRecord after acllogCheckDebugLevel; the run log only with a
    // runtime newer than 9.2.0 (aclsysGetVersionNum("runtime") > 90200000)
    for (version, events) in [("8.5.0", 0), ("9.2.0", 0), ("9.3.0", 1)] {
        let out = Run::new(&exe).env("ACLSIM_CANN_VERSION", version).run();
        out.assert_success().assert_stdout_contains(&format!("errors=1 events={events} checks={}", 1 + events));
    }
}

/// The `DT_NEEDED` entries of an executable or library, in order.
fn needed(elf: &Path) -> Vec<String> {
    let out = tool(Command::new("readelf").arg("-d").arg(elf));
    assert!(out.status.success(), "readelf -d {}: {}", elf.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split_once('[').and_then(|(_, r)| r.split_once(']')).map(|(n, _)| n.to_string()))
        .collect()
}

#[test]
fn hixl_programs_link_with_link_bare_explicitly() {
    let p = Program::cxx("hixl_sim", &["sim/tests/hixl_sim.cpp"]).link(Link::Bare).libs(&["cann_hixl", "ascendcl"]);
    assert!(p.output_path().ends_with("testkit/bare/hixl_sim"));
    let exe = p.build();
    let libs = needed(&exe);
    let pos = |name: &str| libs.iter().position(|l| l == name);
    assert!(pos("libregcheck.so").is_none() && !libs.iter().any(|l| l.starts_with("libregcheck")), "{libs:?}");
    assert!(pos("libcann_hixl.so") < pos("libascendcl.so") && pos("libcann_hixl.so").is_some(), "{libs:?}");
    // and it runs against the simulator alone
    checked(&Run::new(&exe).run());

    // linked with regcheck, the same program needs libregcheck ahead of the vendor libraries
    let shared = Program::cxx("hixl_sim", &["sim/tests/hixl_sim.cpp"])
        .link(Link::RegcheckShared)
        .libs(&["cann_hixl", "ascendcl"])
        .build();
    assert!(shared.ends_with("testkit/shared/hixl_sim"));
    let libs = needed(&shared);
    let first = libs.iter().position(|l| l.starts_with("libregcheck.so"));
    assert!(first.is_some() && first < libs.iter().position(|l| l == "libcann_hixl.so"), "{libs:?}");
}

#[test]
fn headers_compile_as_c99_and_cxx() {
    let inc = sim_include_dir();
    let src = testkit::workspace_root().join("sim/tests/headers.c");
    for (compiler, lang) in [("cc", "-std=c99"), ("c++", "-std=c++17")] {
        let mut cmd = Command::new(compiler);
        if compiler == "c++" {
            cmd.args(["-x", "c++"]);
        }
        let out = tool(
            cmd.args([lang, "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only", "-I"]).arg(&inc).arg(&src),
        );
        assert!(out.status.success(), "{compiler} {lang}: {}", String::from_utf8_lossy(&out.stderr));
    }
    // the C++ headers
    let cxx_src = testkit::target_dir().join("testkit").join("cxx_headers.cpp");
    std::fs::create_dir_all(cxx_src.parent().unwrap()).unwrap();
    std::fs::write(
        &cxx_src,
        concat!(
            "#include \"hixl/hixl.h\"\n#include \"cs/hixl_cs.h\"\n#include \"acl/acl.h\"\n",
            "#include \"adxl/adxl_engine.h\"\n#include \"llm_datadist/llm_datadist.h\"\n",
            "#include \"hccl/hccl_mem.h\"\n",
            "static_assert(sizeof(llm_datadist::LlmDataDist) == 8 && sizeof(llm_datadist::CacheDesc) == 168, \"layout\");\n",
            "static_assert(sizeof(hixl::Hixl) == 8 && sizeof(adxl::AdxlEngine) == 8, \"one pointer\");\n",
            "int main() { return 0; }\n",
        ),
    )
    .unwrap();
    let out = tool(
        Command::new("c++")
            .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I"])
            .arg(&inc)
            .arg(&cxx_src),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn dynamic_symbols(lib: &str) -> String {
    dynamic_symbols_in(&sim_lib_dir(), lib)
}

fn dynamic_symbols_in(dir: &std::path::Path, lib: &str) -> String {
    let out = tool(Command::new("nm").args(["-D", "--defined-only"]).arg(dir.join(lib)));
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn exports(symbols: &str, name: &str) -> bool {
    symbols.lines().any(|l| l.split_whitespace().last() == Some(name))
}

const ACL_NAMES: &[&str] = &[
    "aclInit",
    "aclFinalize",
    "aclrtSetDevice",
    "aclrtResetDevice",
    "aclrtGetDevice",
    "aclrtCreateContext",
    "aclrtDestroyContext",
    "aclrtGetCurrentContext",
    "aclrtSetCurrentContext",
    "aclrtGetSocName",
    "aclGetRecentErrMsg",
    "aclsysGetVersionStr",
    "aclsysGetVersionNum",
    "aclrtMallocHost",
    "aclrtFreeHost",
    "aclrtMalloc",
    "aclrtFree",
    "aclrtHostRegisterV2",
    "aclrtHostRegister",
    "aclrtHostUnregister",
    "aclrtHostGetDevicePointer",
    "aclrtHostMemMapCapabilities",
    "aclrtMallocHostWithCfg",
    "aclrtFreeHostWithDevSync",
    "aclrtPointerGetAttributes",
    "aclrtResetDeviceForce",
    "aclrtMemcpy",
    "aclrtMemset",
    "aclrtReserveMemAddress",
    "aclrtReleaseMemAddress",
    "aclrtMallocPhysical",
    "aclrtFreePhysical",
    "aclrtMapMem",
    "aclrtUnmapMem",
    "aclrtMemRetainAllocationHandle",
    "aclrtMemGetAllocationGranularity",
    // what Mooncake's Ascend transport and store import (docs/third-party.md)
    "aclrtCreateStreamWithConfig",
    "aclrtDestroyStream",
    "aclrtMemcpyAsync",
    "aclrtMemcpyBatch",
    "aclrtSynchronizeStreamWithTimeout",
    "aclrtStreamAbort",
    "aclrtGetPhyDevIdByLogicDevId",
    "aclrtGetLogicDevIdByUserDevId",
    "aclrtMemSetAccess",
    "aclrtMemImportFromShareableHandleV2",
    "aclrtMemExportToShareableHandleV2",
    "aclrtReserveMemAddressNoUCMemory",
    "aclrtIpcMemGetExportKey",
    "aclrtIpcMemImportByKey",
    "aclrtIpcMemClose",
    "aclsimGetCallCount",
    "aclsimResetCallCounts",
    "aclsimQueryMemory",
    "aclsimInjectAnswer",
    "aclsimStubAnswer",
    "aclsimClearAnswers",
];

const SECUREC_NAMES: &[&str] = &[
    "memset_s",
    "memcpy_s",
    "memmove_s",
    "strcpy_s",
    "strncpy_s",
    "strcat_s",
    "strncat_s",
    "sprintf_s",
    "vsprintf_s",
    "snprintf_s",
    "vsnprintf_s",
];

#[test]
fn libraries_export_the_vendor_symbols() {
    let rt = dynamic_symbols("libacl_rt.so");
    let legacy = dynamic_symbols("libascendcl.so");
    for name in ACL_NAMES {
        assert!(exports(&rt, name), "libacl_rt.so lacks {name}");
        assert!(exports(&rt, &format!("aclsim_impl_{name}")), "libacl_rt.so lacks aclsim_impl_{name}");
        assert!(exports(&legacy, name), "libascendcl.so lacks {name}");
    }
    // what libcann_hixl.so looks up weakly (hicann/hixl src/hixl/common/hixl_log.h)
    for name in ["acllogCheckDebugLevel", "acllogRecord"] {
        assert!(exports(&rt, name), "libacl_rt.so lacks {name}");
    }
    let hal = dynamic_symbols("libascend_hal.so");
    for name in SECUREC_NAMES {
        assert!(exports(&hal, name), "libascend_hal.so lacks {name}");
        assert!(!exports(&rt, name), "libacl_rt.so should not define {name}");
    }
    // the driver's host registration, called directly by applications (LMCache-Ascend)
    for name in ["halHostRegister", "halHostUnregister", "halSupportFeature"] {
        assert!(exports(&hal, name), "libascend_hal.so lacks {name}");
        assert!(!exports(&rt, name), "libacl_rt.so should not define {name}");
    }
    let hixl = dynamic_symbols("libcann_hixl.so");
    for sym in [
        "_ZN4hixl4HixlC1Ev",
        "_ZN4hixl4HixlC2Ev",
        "_ZN4hixl4HixlD1Ev",
        "_ZN4hixl4HixlD2Ev",
        "_ZN4hixl4Hixl10InitializeERKN2ge12AscendStringERKSt3mapIS2_S2_St4lessIS2_ESaISt4pairIS3_S2_EEE",
        "_ZN4hixl4Hixl8FinalizeEv",
        "_ZN4hixl4Hixl11RegisterMemERKNS_7MemDescENS_7MemTypeERPv",
        "_ZN4hixl4Hixl13DeregisterMemEPv",
        "_ZN4hixl4Hixl7ConnectERKN2ge12AscendStringEi",
        "_ZN4hixl4Hixl10DisconnectERKN2ge12AscendStringEi",
        "_ZN4hixl4Hixl12TransferSyncERKN2ge12AscendStringENS_10TransferOpERKSt6vectorINS_14TransferOpDescESaIS7_EEi",
        "_ZN4hixl4Hixl13TransferAsyncERKN2ge12AscendStringENS_10TransferOpERKSt6vectorINS_14TransferOpDescESaIS7_EERKNS_12TransferArgsERPv",
        "_ZN2ge12AscendStringC1EPKc",
        "_ZNK2ge12AscendString9GetStringEv",
        "_ZNK2ge12AscendString9GetLengthEv",
        "_ZNK2ge12AscendStringltERKS0_",
        "HixlCSServerCreate",
        "HixlCSClientCreate",
        "HixlCSServerRegMem",
        "HixlCSClientRegMem",
        "HixlCSClientBatchPutSync",
        "HixlCSClientBatchGetSync",
    ] {
        assert!(exports(&hixl, sym), "libcann_hixl.so lacks {sym}");
    }
    // the simulator's internals stay hidden
    assert!(!hixl.contains("RegTable"), "internal symbols exported");
    // adxl::AdxlEngine, under the names Mooncake's ascend_transport.so and libtransfer_engine.so
    // import (hicann/hixl include/adxl/adxl_engine.h)
    let adxl = dynamic_symbols("libllm_datadist.so");
    for sym in [
        "_ZN4adxl10AdxlEngineC1Ev",
        "_ZN4adxl10AdxlEngineD1Ev",
        "_ZN4adxl10AdxlEngine10InitializeERKN2ge12AscendStringERKSt3mapIS2_S2_St4lessIS2_ESaISt4pairIS3_S2_EEE",
        "_ZN4adxl10AdxlEngine8FinalizeEv",
        "_ZN4adxl10AdxlEngine11RegisterMemERKNS_7MemDescENS_7MemTypeERPv",
        "_ZN4adxl10AdxlEngine13DeregisterMemEPv",
        "_ZN4adxl10AdxlEngine7ConnectERKN2ge12AscendStringEi",
        "_ZN4adxl10AdxlEngine10DisconnectERKN2ge12AscendStringEi",
        "_ZN4adxl10AdxlEngine12TransferSyncERKN2ge12AscendStringENS_10TransferOpERKSt6vectorINS_14TransferOpDescESaIS7_EEi",
        "_ZN4adxl10AdxlEngine13TransferAsyncERKN2ge12AscendStringENS_10TransferOpERKSt6vectorINS_14TransferOpDescESaIS7_EERKNS_12TransferArgsERPv",
        "_ZN4adxl10AdxlEngine17GetTransferStatusERKPvRNS_14TransferStatusE",
        "_ZN4adxl10AdxlEngine13GetCapabilityENS_11FeatureTypeERi",
        "_ZN4adxl10AdxlEngine9MallocMemENS_7MemTypeEmPPv",
        "_ZN4adxl10AdxlEngine7FreeMemEPv",
    ] {
        assert!(exports(&adxl, sym), "libllm_datadist.so lacks {sym}");
    }
    // after 9.1.0 only (hicann/hixl 6d1c2b6): the default root is 9.1.0, the 9.2.0 root has it
    // (tests/adxl_release.rs checks the name against a build of the header)
    let export = "_ZN4adxl10AdxlEngine23ExportToShareableHandleEPvR20aclrtMemFabricHandle";
    assert!(!exports(&adxl, export), "the 9.1.0 root's libllm_datadist.so exports {export}");
    let adxl_920 = dynamic_symbols_in(&testkit::sim_lib_dir_release("9.2.0"), "libllm_datadist.so");
    assert!(exports(&adxl_920, export), "the 9.2.0 root's libllm_datadist.so lacks {export}");
    assert!(!adxl.contains("AdxlEngineImpl"), "internal symbols exported");
}

#[test]
fn libraries_have_the_vendor_sonames_and_runpath() {
    for (lib, needed) in [
        // as the vendor's runtime links the driver's library, and not the other way round
        ("libascend_hal.so", None),
        ("libacl_rt.so", Some("libascend_hal.so")),
        ("libascendcl.so", Some("libacl_rt.so")),
        ("libcann_hixl.so", Some("libascendcl.so")),
        ("libllm_datadist.so", Some("libcann_hixl.so")),
        ("libllm_datadist_py.so", Some("libllm_datadist.so")),
    ] {
        let out = tool(Command::new("readelf").arg("-d").arg(sim_lib_dir().join(lib)));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&format!("Library soname: [{lib}]")), "{lib}: {text}");
        if let Some(n) = needed {
            assert!(text.contains(&format!("Shared library: [{n}]")), "{lib}: {text}");
            assert!(text.contains("[$ORIGIN]"), "{lib}: {text}");
        }
    }
}

#[test]
fn builds_are_parallel_safe() {
    let handles: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                let dir = sim_lib_dir();
                let exe = Program::c("acl_modes_parallel", &["sim/tests/acl_modes.c"]).build();
                (dir, exe)
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for (dir, exe) in &results {
        assert_eq!(dir, &results[0].0);
        assert!(exe.exists());
    }
    Run::new(&results[0].1).arg("count").run().assert_success().assert_stdout_contains("count=3\n");
}

#[test]
fn memcpy_memset_and_vmm_checks_and_codes() {
    let exe = Program::c("acl_memory", &["sim/tests/acl_memory.c"]).libs(&["acl_rt"]).build();
    let out = Run::new(&exe).run();
    checked(&out);
    assert!(out.sim_results("aclrtMapMem").contains(&"0".to_string()), "{}", out.dump());
}

/// The ACL calls Mooncake imports (streams, asynchronous and batch copies, device-id maps, IPC
/// keys, shareable handles imported by another process, aclrtMemSetAccess, the NoUC reservation):
/// their checks and codes, and the bytes they move.
#[test]
fn streams_batch_copies_and_sharing_checks_and_codes() {
    let exe = Program::c("acl_streams", &["sim/tests/acl_streams.c"]).libs(&["acl_rt"]).build();
    let out = Run::new(&exe).run();
    checked(&out);
    assert!(out.sim_results("aclrtMemImportFromShareableHandleV2").contains(&"0".to_string()), "{}", out.dump());
}

#[test]
fn securec_functions_from_the_hal_stand_in() {
    let exe = Program::c("securec", &["sim/tests/securec.c"]).libs(&["ascend_hal"]).build();
    checked(&Run::new(&exe).run());
}

/// The ports `claim_port` printed before "ready" (its own first, then its child's).
fn claimed_ports(child: &mut std::process::Child) -> Vec<u16> {
    use std::io::BufRead;
    let out = std::io::BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut ports = Vec::new();
    // claim_port never waits before "ready" and exits within 20 s in any case, so this ends
    for line in out.lines() {
        let line = line.expect("claim_port's output");
        if line == "ready" {
            return ports;
        }
        ports.push(line.strip_prefix("port ").and_then(|p| p.parse().ok()).unwrap_or_else(|| panic!("{line}")));
    }
    panic!("claim_port ended before it was ready (claimed {ports:?})");
}

/// Whether a process holds the lock on `port`'s byte of the claim file.
fn port_claimed(lock_file: &Path, port: u16) -> bool {
    use std::os::unix::io::AsRawFd;
    let file = std::fs::File::open(lock_file).unwrap();
    // SAFETY: a zeroed flock is a valid value of a plain C struct
    let mut lk: libc::flock = unsafe { std::mem::zeroed() };
    lk.l_type = libc::F_WRLCK as libc::c_short;
    lk.l_whence = libc::SEEK_SET as libc::c_short;
    lk.l_start = libc::off_t::from(port);
    lk.l_len = 1;
    // SAFETY: F_OFD_GETLK reads and writes `lk`, which lives across the call
    assert_eq!(unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_GETLK, &mut lk) }, 0);
    lk.l_type != libc::F_UNLCK as libc::c_short
}

#[test]
fn claimed_ports_are_distinct_held_and_outside_the_ephemeral_range() {
    use std::process::Stdio;
    let exe = Program::c("claim_port", &["sim/tests/claim_port.c"]).build();
    let tmp = testkit::target_dir().join("testkit").join("claim_port");
    std::fs::create_dir_all(&tmp).unwrap();
    let spawn = || {
        testkit::command(&exe)
            .arg("3")
            .env("TMPDIR", &tmp)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // two processes (each with a child) claiming at the same time
    let (mut a, mut b) = (spawn(), spawn());
    let (from_a, from_b) = (claimed_ports(&mut a), claimed_ports(&mut b));
    let all: std::collections::BTreeSet<u16> = from_a.iter().chain(&from_b).copied().collect();
    assert_eq!(all.len(), 12, "a port was handed out twice: {from_a:?} {from_b:?}");
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap();
    let bounds: Vec<u16> = range.split_whitespace().map(|v| v.parse().unwrap()).collect();
    for &p in &all {
        assert!(p >= 1024 && (p < bounds[0] || p > bounds[1]), "{p} is in the ephemeral range {range}");
    }
    // a's own claims last as long as a does
    // SAFETY: getuid has no preconditions
    let lock_file = tmp.join(format!("aclsim-ports-{}.lock", unsafe { libc::getuid() }));
    assert!(from_a[..3].iter().all(|&p| port_claimed(&lock_file, p)), "{from_a:?} not held");
    for mut child in [a, b] {
        drop(child.stdin.take()); // claim_port ends when its stdin closes
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                child.kill().ok();
                panic!("claim_port did not end within 30 s of its stdin closing");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(status.success(), "claim_port: {status}");
    }
    assert!(!from_a[..3].iter().any(|&p| port_claimed(&lock_file, p)), "{from_a:?} still held after exit");
}
