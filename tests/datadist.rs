//! The LLM-DataDist front end (`llm_datadist::LlmDataDist`), through the doors users use: a C++
//! program (tests/c/datadist_scenarios.cpp) built against the simulator's headers, run against
//! its libllm_datadist.so bare, with `LD_PRELOAD` of libregcheck.so, linked with `-lregcheck`
//! and linked with libregcheck.a. And the names regcheck exports, against a build of the
//! simulator's header.

use std::process::Command;
use std::sync::OnceLock;

use testkit::{libs, Mode, Outcome, Program, Scenarios, MODES};

const SRC: &str = "tests/c/datadist_scenarios.cpp";
const LIBS: &[&str] = &[libs::LLM_DATADIST, libs::CANN_HIXL, "hcomm", libs::ASCENDCL];

fn scenarios() -> &'static Scenarios {
    static S: OnceLock<Scenarios> = OnceLock::new();
    S.get_or_init(|| Scenarios::build(|l| Program::cxx("datadist_scenarios", &[SRC]).link(l).libs(LIBS)))
}

fn run_env(mode: Mode, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let mut r = scenarios().run(mode).args(args);
    for (k, v) in env {
        r = r.env(k, v);
    }
    r.run()
}

fn bare(args: &[&str]) -> Outcome {
    let o = scenarios().bare().args(args).run();
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    o
}

fn code(o: &Outcome, label: &str) -> i64 {
    o.rc_lines().into_iter().find(|(l, _)| l == label).unwrap_or_else(|| panic!("no {label}: {}", o.dump())).1
}

const LLM_FAILED: i64 = 0xFFFF_FFFF;
const LLM_PARAM_INVALID: i64 = 0x5010_B005;

/// The scenario in every mode, compared with the bare program
/// ([`Scenarios::each_mode_env`]), without variables.
fn each_mode(args: &[&str], rejected: &[(&str, i64)]) -> Vec<Outcome> {
    scenarios().each_mode_env(args, rejected, &[])
}

/// regcheck's lines of `level` for `rule` at `call`.
fn logged(o: &Outcome, level: &str, rule: &str, call: &str) -> Vec<String> {
    let head = format!("regcheck: {level}: [{rule}] {call}(");
    o.messages().into_iter().filter(|l| l.starts_with(&head)).collect()
}

/// xLLM's shape (jd-opensource/xllm `llm_data_dist_transfer.cpp`): per-layer HUGE_ONLY device
/// buffers, one RegisterKvCache for the K caches and one for the V caches, then every buffer
/// freed with aclrtFree and no UnregisterKvCache. The vendor frees them (every call answers as
/// without regcheck); regcheck warns at each free (HIXL-FREE-REGISTERED), naming the cache, the
/// region, where RegisterKvCache was called and the fix. With both backends.
#[test]
fn xllm_frees_registered_kv_caches_and_each_free_is_named() {
    for backend in ["comm", "hixl"] {
        let bare = bare(&["xllm", backend]);
        for label in ["initialize", "register_k", "register_v", "free_k", "free_v"] {
            assert_eq!(code(&bare, label), 0, "{backend}: {}", bare.dump());
        }
        assert!(bare.stdout.contains("value k_id 1") && bare.stdout.contains("value v_id 2"), "{}", bare.dump());
        // Every finding logged (no collapse of repeats from one call site): one line per free.
        for o in scenarios().each_mode_env(&["xllm", backend], &[], &[("REGCHECK_MAX_REPEATS", "0")]) {
            let ctx = || format!("{backend}: {}", o.dump());
            let frees = logged(&o, "warning", "HIXL-FREE-REGISTERED", "aclrtFree");
            assert_eq!(frees.len(), 8, "one per freed layer buffer: {}", ctx());
            assert!(frees.iter().all(|l| l.contains("LlmDataDist::RegisterKvCache (cache_id ")), "{}", ctx());
            assert!(frees.iter().any(|l| l.contains("cache_id 1,")) && frees.iter().any(|l| l.contains("cache_id 2,")));
            assert!(frees.iter().all(|l| l.contains("+32768)") && l.contains("UnregisterKvCache")), "{}", ctx());
            assert!(
                frees.iter().all(|l| l.contains("registered at ") && l.contains("datadist_scenarios.cpp")),
                "{}",
                ctx()
            );
            assert!(!o.stderr.contains("regcheck: error:"), "{}", ctx());
        }
    }
}

/// Each tensor region counts toward the instance's registrations (HIXL-REG-COUNT, the limit
/// lowered to 6 with `REGCHECK_HIXL_MAX_REGS`): two caches of four layers make eight, the
/// second cache's third and fourth tensors past the limit. With the
/// hixl backend the second cache is rejected with HIXL's code as LlmDataDist returns it
/// (503900 -> LLM_FAILED), before the vendor sees it; with the comm backend (HCCL) it is a
/// warning and the vendor registers it.
#[test]
fn every_tensor_region_counts_toward_the_registration_limit() {
    let env = [("REGCHECK_HIXL_MAX_REGS", "6")];
    for backend in ["hixl", "comm"] {
        let b = bare(&["count", backend]);
        assert_eq!(code(&b, "register_v"), 0, "{}", b.dump());
        for mode in MODES {
            let o = run_env(mode, &["count", backend], &env);
            let ctx = || format!("{backend} in {mode:?}: {}", o.dump());
            assert_eq!(o.code(), Some(0), "{}", ctx());
            assert_eq!(code(&o, "register_k"), 0, "{}", ctx());
            let level = if backend == "hixl" { "error" } else { "warning" };
            let found = logged(&o, level, "HIXL-REG-COUNT", "LlmDataDist::RegisterKvCache");
            assert_eq!(found.len(), 2, "the 7th and 8th regions: {}", ctx());
            assert!(found[0].contains("tensor 2 (addrs[2]") && found[1].contains("tensor 3 (addrs[3]"), "{}", ctx());
            if backend == "hixl" {
                assert_eq!(code(&o, "register_v"), LLM_FAILED, "{}", ctx());
                assert_eq!(o.sim_calls("LlmDataDist::RegisterKvCache"), 1, "{}", ctx());
            } else {
                assert_eq!(code(&o, "register_v"), 0, "{}", ctx());
                assert_eq!(o.sim_calls("LlmDataDist::RegisterKvCache"), 2, "{}", ctx());
            }
        }
    }
}

/// The same mistake through HCCL's `HcclRegisterGlobalMem` (which regcheck observes: exported,
/// forwarded, recorded) and through `hixl::Hixl::RegisterMem`: each free is named, with the
/// holder and the fix.
#[test]
fn device_memory_freed_while_hccl_or_hixl_holds_it_is_named() {
    for o in each_mode(&["others"], &[]) {
        let ctx = || o.dump();
        let frees = logged(&o, "warning", "HIXL-FREE-REGISTERED", "aclrtFree");
        assert_eq!(frees.len(), 2, "{}", ctx());
        assert!(
            frees[0].contains("by HcclRegisterGlobalMem") && frees[0].contains("HcclDeregisterGlobalMem"),
            "{}",
            ctx()
        );
        assert!(
            frees[1].contains("RegisterMem of the HIXL/ADXL engine 127.0.0.1:") && frees[1].contains("DeregisterMem"),
            "{}",
            ctx()
        );
        assert!(frees[1].contains("1 registration(s)"), "the engine's HCCL registration is the engine's: {}", ctx());
        // the comm backend's, the comm engine's two pool buffers, the comm engine's RegisterMem
        assert_eq!(o.sim_calls("HcclRegisterGlobalMem"), 4, "{}", ctx());
    }
}

/// Unregistering before the free: nothing to say.
#[test]
fn a_cache_unregistered_before_its_free_is_not_reported() {
    for o in each_mode(&["clean"], &[]) {
        assert!(logged(&o, "warning", "HIXL-FREE-REGISTERED", "aclrtFree").is_empty(), "{}", o.dump());
        assert!(!o.stderr.contains("regcheck: error:"), "{}", o.dump());
    }
}

/// RegisterKvCache's checks in the vendor's order (hicann/hixl `llm_datadist_impl.cc`,
/// `data_cache_engine.cc`): the bare codes are the vendor's; under regcheck the same codes,
/// each rejection named by its rule before the vendor sees it.
#[test]
fn register_kv_cache_checks_answer_as_the_vendor_and_are_named() {
    let b = bare(&["checks"]);
    let want = [
        ("before_initialize", LLM_FAILED),
        ("unregister_before_initialize", LLM_FAILED),
        ("initialize", 0),
        ("addrs_empty", LLM_PARAM_INVALID),
        ("addrs_count", LLM_PARAM_INVALID),
        ("addr_null", LLM_PARAM_INVALID),
        ("shape_empty", LLM_PARAM_INVALID),
        ("shape_32_dims", LLM_PARAM_INVALID),
        ("shape_zero_dim", LLM_PARAM_INVALID),
        ("data_type_undefined", LLM_PARAM_INVALID),
        ("register", 0),
        ("register_same", 0),
        ("unregister_unknown", 0),
        ("unregister_same", 0),
        ("unregister", 0),
        ("after_finalize", LLM_FAILED),
        ("free", 0),
    ];
    for (label, c) in want {
        assert_eq!(code(&b, label), c, "{label}: {}", b.dump());
    }
    assert!(b.stdout.contains("value id 3"), "the two size failures used ids 1 and 2: {}", b.dump());
    // the tensor-size failures use up a cache id in the vendor: forwarded, so that it fails them itself
    let forwarded = ["shape_zero_dim", "data_type_undefined"];
    let rejected: Vec<(&str, i64)> = want.iter().copied().filter(|(l, c)| *c != 0 && !forwarded.contains(l)).collect();
    for o in each_mode(&["checks"], &rejected) {
        let ctx = || o.dump();
        for (rule, call, n) in [
            ("DATADIST-NOT-INITIALIZED", "LlmDataDist::RegisterKvCache", 2),
            ("DATADIST-NOT-INITIALIZED", "LlmDataDist::UnregisterKvCache", 1),
            ("DATADIST-ADDRS-EMPTY", "LlmDataDist::RegisterKvCache", 1),
            ("DATADIST-ADDRS-COUNT", "LlmDataDist::RegisterKvCache", 1),
            ("DATADIST-ADDR-NULL", "LlmDataDist::RegisterKvCache", 1),
            ("DATADIST-SHAPE", "LlmDataDist::RegisterKvCache", 2),
        ] {
            assert_eq!(logged(&o, "error", rule, call).len(), n, "{rule} at {call}: {}", ctx());
        }
        assert_eq!(logged(&o, "warning", "DATADIST-TENSOR-SIZE", "LlmDataDist::RegisterKvCache").len(), 2, "{}", ctx());
        // rejected before the vendor: only the valid calls and the two it fails itself reach it
        assert_eq!(o.sim_calls("LlmDataDist::RegisterKvCache"), 4, "{}", ctx());
        assert_eq!(o.sim_calls("LlmDataDist::UnregisterKvCache"), 3, "{}", ctx());
        assert!(o.stdout.contains("value id 3"), "the vendor's ids: {}", ctx());
    }
}

/// The `llm_datadist::LlmDataDist` symbols libregcheck.so exports are exactly the ones a build
/// of the simulator's header (`llm_datadist/llm_datadist.h`, as CANN installs it) defines for
/// the members regcheck interposes: compiled here, read with `nm`, not written by hand.
#[test]
fn exported_names_match_a_build_of_the_vendors_header() {
    let dir = testkit::target_dir().join("datadist-names");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("names.cpp");
    std::fs::write(
        &src,
        "#include \"llm_datadist/llm_datadist.h\"\n\
         namespace llm_datadist {\n\
         class LlmDataDist::LlmDataDistImpl {};\n\
         LlmDataDist::LlmDataDist(uint64_t, LlmRole) {}\n\
         LlmDataDist::~LlmDataDist() {}\n\
         Status LlmDataDist::Initialize(const std::map<AscendString, AscendString> &) { return 0; }\n\
         void LlmDataDist::Finalize() {}\n\
         Status LlmDataDist::RegisterKvCache(const CacheDesc &, const std::vector<uint64_t> &, const RegisterCfg &, int64_t &) { return 0; }\n\
         Status LlmDataDist::UnregisterKvCache(int64_t) { return 0; }\n\
         }\n",
    )
    .unwrap();
    let obj = dir.join("names.o");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let st = Command::new(cxx)
        .args(["-std=c++17", "-c", "-I"])
        .arg(testkit::sim_include_dir())
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .status()
        .unwrap();
    assert!(st.success());
    let defined = |path: &std::path::Path, dynamic: bool| -> Vec<String> {
        let mut cmd = Command::new("nm");
        if dynamic {
            cmd.arg("-D");
        }
        let out = cmd.arg("--defined-only").arg(path).output().unwrap();
        assert!(out.status.success());
        let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
            .filter(|n| n.starts_with("_ZN12llm_datadist11LlmDataDist"))
            // the complete-object structors: what programs call (C2/D2 are not interposed)
            .filter(|n| !n.contains("C2E") && !n.contains("D2E"))
            .collect();
        names.sort();
        names.dedup();
        names
    };
    let from_header = defined(&obj, false);
    let exported = defined(&testkit::regcheck().shared, true);
    assert_eq!(from_header.len(), 6, "{from_header:?}");
    assert_eq!(exported, from_header);
}
