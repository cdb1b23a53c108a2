//! LLM-DataDist's Python face, as the simulator gives one: a Python program
//! (tests/py/datadist_register.py) using the simulator's `llm_datadist` package
//! (sim/python, ctypes over libllm_datadist_py.so, which calls the public
//! `llm_datadist::LlmDataDist` members through the PLT) run bare, with `LD_PRELOAD` of
//! libregcheck.so and under `regcheck run`: the same calls reach the vendor and answer the
//! same, and regcheck's finding names its rule and the user's Python line (not the package's).
//!
//! CANN's own package calls the library's internal `llm::LLMDataDistV2` instead (see
//! docs/llm-datadist.md, "Python"): regcheck sees none of its calls.

use std::path::{Path, PathBuf};

use testkit::{Outcome, Run};

const LLM_PARAM_INVALID: &str = "1343270917"; // 0x5010B005

fn src(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The real interpreter (not a version manager's shell shim).
fn python3() -> PathBuf {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is needed for the Python tests");
    assert!(out.status.success());
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// `run` with the simulator's libraries on `LD_LIBRARY_PATH` and, on `PYTHONPATH`, its
/// `llm_datadist` package and regcheck's Python module (from the source tree).
fn with_paths(run: Run) -> Run {
    let path = std::env::join_paths([testkit::sim_python_dir(), src("python")]).unwrap();
    run.env("LD_LIBRARY_PATH", testkit::sim_lib_dir())
        .env("PYTHONPATH", path)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("PYTHONHOME")
}

fn args() -> [PathBuf; 2] {
    [src("tests/py/datadist_register.py"), testkit::sim_lib_dir().join("libascendcl.so")]
}

fn statuses(o: &Outcome) -> Vec<String> {
    o.stdout.lines().filter(|l| !l.starts_with("finding=") && !l.starts_with("active=")).map(str::to_string).collect()
}

fn mistake_line() -> usize {
    let text = std::fs::read_to_string(src("tests/py/datadist_register.py")).unwrap();
    1 + text.lines().position(|l| l.contains("# the mistake")).expect("the marked line")
}

/// A KV cache whose shape has a zero dimension (its block count computed as 0), registered
/// through the Python package: bare, the vendor fails it (LLM_PARAM_INVALID, raised as
/// `LLMException`); under regcheck (`LD_PRELOAD`, `regcheck run`) the same call reaches the
/// vendor (DATADIST-TENSOR-SIZE is a warning: the vendor takes a cache id first) and answers
/// the same, and the finding names the rule, `LlmDataDist::RegisterKvCache` and the program's
/// line. Seen failing before the regcheck module skipped wrapper modules' frames: the Python
/// site was the package's `register_cache`.
#[test]
fn a_python_registration_through_the_simulators_package_is_checked_and_names_the_users_line() {
    let [script, acl] = args();
    let bare = with_paths(Run::new(python3()).arg(&script).arg(&acl)).run();
    assert_eq!(bare.code(), Some(0), "{}", bare.dump());
    let want = statuses(&bare);
    assert!(want.contains(&format!("register_empty_pool={LLM_PARAM_INVALID}")), "{}", bare.dump());
    // an address 0 is the package's refusal (CANN's Python checks it): the library never sees it
    assert!(want.contains(&format!("register_zero_addr={LLM_PARAM_INVALID}")), "{}", bare.dump());
    for line in ["init=0", "register=0", "unregister=0"] {
        assert!(want.iter().any(|l| l == line), "{line}: {}", bare.dump());
    }
    assert!(bare.stdout.contains("active=False"), "{}", bare.dump());
    assert_eq!(bare.sim_calls("LlmDataDist::RegisterKvCache"), 2, "{}", bare.dump());

    let rc = testkit::regcheck();
    let preloaded = with_paths(Run::new(python3()).arg(&script).arg(&acl).preload(&rc.shared)).run();
    let run = with_paths(Run::new(&rc.cli).arg("run").arg("--").arg(python3()).arg(&script).arg(&acl)).run();
    let site = format!("register_empty_pool ({}:{})", script.display(), mistake_line());
    for (how, o) in [("LD_PRELOAD", &preloaded), ("regcheck run", &run)] {
        let ctx = || format!("{how}\n{}", o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        assert_eq!(statuses(o), want, "every call answers as without regcheck: {}", ctx());
        assert!(o.stdout.contains("active=True"), "{}", ctx());
        // the same vendor calls: both registrations that passed the package's checks, forwarded
        assert_eq!(o.sim_calls("LlmDataDist::RegisterKvCache"), 2, "{}", ctx());
        assert_eq!(o.sim_calls("LlmDataDist::UnregisterKvCache"), 1, "{}", ctx());
        assert!(
            o.messages()
                .iter()
                .any(|l| l.starts_with("regcheck: warning: [DATADIST-TENSOR-SIZE] LlmDataDist::RegisterKvCache(")),
            "{}",
            ctx()
        );
        let findings: Vec<&str> = o.stdout.lines().filter_map(|l| l.strip_prefix("finding=")).collect();
        assert_eq!(
            findings,
            [format!("DATADIST-TENSOR-SIZE|warning|LlmDataDist::RegisterKvCache|{site}")],
            "one finding, at the program's line: {}",
            ctx()
        );
    }
}
