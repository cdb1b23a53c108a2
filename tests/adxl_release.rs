//! `adxl::AdxlEngine::ExportToShareableHandle` exists after CANN 9.1.0 only (hicann/hixl 6d1c2b6;
//! absent at tag v9.1.0 and in 9.2.0-beta.1). Mooncake's NPU wheel references it weakly and makes
//! its Ascend shared segment only when the reference is bound, so whether it exists decides the
//! program's path. A symbol cannot vanish at run time: the simulator has an install root per
//! release (`testkit::SIM_RELEASES`; sim/README.md, "Release profiles"), and this file holds that a
//! program of Mooncake's shape (tests/c/adxl_weak_export.cpp) finds the member against the 9.2.0
//! root only, and finds exactly what it finds bare under regcheck: `LD_PRELOAD`, linked with
//! `-lregcheck`, linked with libregcheck.a, and with the `LD_AUDIT` module. regcheck must not make
//! the member appear where the vendor has none (it defines no such symbol: docs/adxl.md, "Not
//! interposed, on purpose").

use std::process::Command;

use testkit::{libs, Outcome, Program, Run, Scenarios, MODES};

const SRC: &str = "tests/c/adxl_weak_export.cpp";

/// The name Mooncake's `libtransfer_engine.so` references (weak), read off the wheel
/// (`nm -D`; /work/shared/adxl-facts.md section 1). The test checks that the simulator's header
/// gives this name (nm of the program built against it), not the other way round.
const MOONCAKE_NAME: &str = "_ZN4adxl10AdxlEngine23ExportToShareableHandleEPvR20aclrtMemFabricHandle";

fn scenarios(release: &str) -> Scenarios {
    Scenarios::build(|l| {
        Program::cxx("adxl_weak_export", &[SRC])
            .link(l)
            .libs(&[libs::LLM_DATADIST, libs::CANN_HIXL, libs::ASCENDCL])
            .flag("-ldl")
            .release(release)
    })
}

/// `nm` of `file` (with `args`), one `(type, name)` per symbol line.
fn nm(args: &[&str], file: &std::path::Path) -> Vec<(String, String)> {
    let out = Command::new("nm").args(args).arg(file).output().expect("nm");
    assert!(out.status.success(), "nm {args:?} {}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 2).then(|| (f[f.len() - 2].to_string(), f[f.len() - 1].to_string()))
        })
        .collect()
}

/// The mangled name the simulator's header gives the member: the program's weak undefined
/// reference, as nm reads it.
fn mangled_name(exe: &std::path::Path) -> String {
    let refs: Vec<(String, String)> =
        nm(&[], exe).into_iter().filter(|(_, n)| n.contains("ExportToShareableHandle")).collect();
    assert_eq!(refs.len(), 1, "one reference to ExportToShareableHandle in {}: {refs:?}", exe.display());
    assert_eq!(refs[0].0, "w", "the reference is weak: {refs:?}");
    refs[0].1.clone()
}

/// The program's two lines: what it found, and the release the root answers as.
fn line(o: &Outcome) -> String {
    assert_eq!(o.code(), Some(0), "{}", o.dump());
    let find = |prefix: &str| {
        o.stdout.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no {prefix} line\n{}", o.dump()))
    };
    format!("{}; {}", find("weak="), find("version="))
}

/// The program against the root of `release` (`ACLSIM_CANN_VERSION` unset: the root's own
/// release): bare, then in every mode of regcheck and under `LD_AUDIT`; each must print `want`.
fn agrees(release: &str, want: &str) {
    let s = scenarios(release);
    let name = mangled_name(s.bare_exe());
    assert_eq!(name, MOONCAKE_NAME, "the simulator's header mangles the member as Mooncake's wheel references it");

    let lib = testkit::sim_lib_dir_release(release).join("libllm_datadist.so");
    let defined = nm(&["-D", "--defined-only"], &lib).iter().any(|(_, n)| *n == name);
    assert_eq!(defined, release != "9.1.0", "{}: defines {name}: {defined}", lib.display());
    let rc = testkit::regcheck();
    for file in [&rc.shared, &rc.static_lib] {
        let ours = nm(&["--defined-only"], file).iter().any(|(_, n)| *n == name);
        assert!(!ours, "{} defines {name}: a program's weak reference would bind to regcheck's", file.display());
    }

    let run = |r: Run| line(&r.arg(&name).env_remove("ACLSIM_CANN_VERSION").run());
    let bare = run(s.bare());
    assert_eq!(bare, want, "bare, against the {release} root");
    for mode in MODES {
        assert_eq!(
            run(s.run(mode)),
            bare,
            "{mode:?} against the {release} root: regcheck changes what the program finds"
        );
    }
    assert_eq!(run(s.run(testkit::Mode::Preload).audit()), bare, "LD_AUDIT against the {release} root");
}

#[test]
fn on_9_1_0_the_member_is_absent_bare_and_under_regcheck() {
    agrees("9.1.0", "weak=0 dlsym=0 code=-; version=9.1.0 (0)");
}

#[test]
fn on_9_2_0_the_member_is_present_bare_and_under_regcheck() {
    // 103900: PARAM_INVALID for a NULL address (hixl fabric_mem_transfer_service.cc)
    agrees("9.2.0", "weak=1 dlsym=1 code=103900; version=9.2.0 (0)");
}
