//! The judge nobody here wrote: Mooncake's NPU wheel from PyPI
//! (`mooncake-transfer-engine-npu==0.3.13.post1`, cp311, unmodified), whose Ascend transport
//! drives `adxl::AdxlEngine` (CANN's `libllm_datadist.so`), on the simulator.
//!
//! The wheel is installed once into a virtual environment cached under
//! `<target>/mooncake/` (PyPI must be reachable the first time; the tests fail, not skip,
//! without it). Our own driver (`tests/py/mooncake_two_process.py`) runs two Python processes
//! on 127.0.0.1 (`P2PHANDSHAKE` metadata, protocol "ascend", the device set through ctypes) that
//! register device and host memory and move a known pattern with `transfer_sync_write` and
//! `transfer_sync_read` through ADXL: bare, under `LD_PRELOAD=libregcheck.so`, and under
//! `regcheck run --audit`. A mistake run transfers from a buffer never registered.
//!
//! Needs python3.11 with venv, and the Debian libraries the wheel loads (libibverbs1, libnuma1,
//! libcurl4, liblzma5: `cargo xtask test` installs them). x86_64 only (the wheel is).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use testkit::{Outcome, Run};

const WHEEL: &str = "mooncake-transfer-engine-npu==0.3.13.post1";
const RUN_TIMEOUT: Duration = Duration::from_secs(120);
const INSTALL_TIMEOUT: Duration = Duration::from_secs(20 * 60);
/// The first `ASCEND_BASE_PORT` of the runs (each run its own 400 ports): above the usual
/// ephemeral range (32768-60999) and above the range `aclsimClaimPort` hands to the other tests'
/// engines (the 16384 ports below the ephemeral range), so nothing else of the suite binds there
/// between Mooncake's probe of a free port and its engine's bind.
const PORTS: u16 = 61000;

/// A CPython 3.11 (the wheel is cp311): `python3.11`, or `python3` when it is 3.11.
fn python311() -> PathBuf {
    for candidate in ["python3.11", "python3"] {
        let out = Command::new(candidate).args(["-c", "import sys; print(sys.version_info[:2] == (3, 11))"]).output();
        if let Ok(out) = out {
            if String::from_utf8_lossy(&out.stdout).trim() == "True" {
                return PathBuf::from(candidate);
            }
        }
    }
    panic!("the Mooncake wheel is cp311: these tests need python3.11 (with the venv module) on PATH");
}

fn shown(out: &std::process::Output) -> String {
    format!(
        "status {}\n--- stdout ---\n{}--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `<target>/mooncake/venv`: the wheel installed with pip, made once (in a scratch directory
/// renamed into place when complete, so a run cut short or a concurrent one leaves no half-made
/// environment behind) and kept across runs.
fn venv() -> &'static Path {
    static VENV: OnceLock<PathBuf> = OnceLock::new();
    VENV.get_or_init(|| {
        let dir = testkit::target_dir().join("mooncake");
        let venv = dir.join("venv");
        let marker = venv.join("regcheck-installed");
        if std::fs::read_to_string(&marker).ok().as_deref() == Some(WHEEL) {
            return venv;
        }
        let scratch = dir.join(format!("venv-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&dir).unwrap();
        let out = testkit::output_within(Command::new(python311()).args(["-m", "venv"]).arg(&scratch), INSTALL_TIMEOUT)
            .unwrap_or_else(|e| panic!("python3.11 -m venv: {e}"));
        assert!(out.status.success(), "python3.11 -m venv failed:\n{}", shown(&out));
        let mut pip = Command::new(scratch.join("bin/python"));
        pip.args(["-m", "pip", "install", "--disable-pip-version-check", "--quiet", WHEEL]);
        for var in ["PYTHONPATH", "VIRTUAL_ENV", "LD_PRELOAD", "LD_LIBRARY_PATH"] {
            pip.env_remove(var);
        }
        let out = testkit::output_within(&mut pip, INSTALL_TIMEOUT).unwrap_or_else(|e| panic!("pip install: {e}"));
        assert!(
            out.status.success(),
            "pip install {WHEEL} failed; these tests need PyPI (https://pypi.org) the first time:\n{}",
            shown(&out)
        );
        std::fs::write(scratch.join("regcheck-installed"), WHEEL).unwrap();
        let _ = std::fs::remove_dir_all(&venv);
        if std::fs::rename(&scratch, &venv).is_err() {
            // another process put its environment in place first: use that one
            let _ = std::fs::remove_dir_all(&scratch);
        }
        assert!(std::fs::read_to_string(&marker).ok().as_deref() == Some(WHEEL), "{} is not complete", venv.display());
        venv
    })
}

fn python() -> PathBuf {
    venv().join("bin/python")
}

/// The wheel's `mooncake/` directory.
fn package_dir() -> PathBuf {
    let lib = venv().join("lib");
    let py = std::fs::read_dir(&lib)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("python3")));
    py.expect("the venv's lib/python3.x").join("site-packages/mooncake")
}

fn driver() -> PathBuf {
    testkit::workspace_root().join("tests/py/mooncake_two_process.py")
}

/// How the two processes are started.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Door {
    Bare,
    Preload,
    RegcheckRunAudit,
}

/// The driver (both peers) through `door`, with `ASCEND_BASE_PORT=base_port` (each run its own
/// range, so runs in parallel do not meet) and `ACLSIM_TRACE=1` (the simulator's answers).
fn two_processes(door: Door, mode: &str, base_port: u16) -> Outcome {
    two_processes_with(door, mode, base_port, &[])
}

/// [`two_processes`] with more environment variables (Mooncake's `ASCEND_*` settings).
fn two_processes_with(door: Door, mode: &str, base_port: u16, env: &[(&str, &str)]) -> Outcome {
    let sim = testkit::sim_lib_dir();
    let acl = sim.join("libascendcl.so");
    let script = driver();
    let program: Vec<std::ffi::OsString> = vec![python().into(), script.into(), acl.into(), mode.into()];
    let run = match door {
        Door::Bare => Run::new(&program[0]).args(&program[1..]),
        Door::Preload => Run::new(&program[0]).args(&program[1..]).preload(testkit::regcheck().shared),
        Door::RegcheckRunAudit => Run::new(testkit::regcheck().cli).args(["run", "--audit", "--"]).args(&program),
    };
    let run = env.iter().fold(run, |r, (k, v)| r.env(k, v));
    run.env("LD_LIBRARY_PATH", &sim)
        .env("ASCEND_BASE_PORT", base_port.to_string())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("PYTHONPATH")
        .env_remove("VIRTUAL_ENV")
        .timeout(RUN_TIMEOUT)
        .run()
}

/// The `<peer> rc <label> <value>` lines whose value is not what a working run prints (0, or
/// 1 for the `same_*` comparisons), but for the labels in `except`.
fn unexpected<'a>(out: &'a Outcome, except: &[&str]) -> Vec<&'a str> {
    out.stdout
        .lines()
        .filter(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            if w.len() != 4 || w[1] != "rc" || except.contains(&w[2]) {
                return false;
            }
            let want = if w[2].starts_with("same_") { "1" } else { "0" };
            w[3] != want
        })
        .collect()
}

/// The simulator's answers to `AdxlEngine::<member>` (its trace lines' results).
fn adxl_results(out: &Outcome, member: &str) -> Vec<String> {
    out.sim_results(&format!("AdxlEngine::{member}"))
}

fn assert_moved(out: &Outcome) {
    assert!(out.stdout.contains("exit 0 0"), "both peers finish cleanly:\n{}", out.dump());
    let bad = unexpected(out, &[]);
    assert!(bad.is_empty(), "every call succeeds and every byte arrives: {bad:?}\n{}", out.dump());
    // the four transfers went through ADXL (another engine: not Mooncake's local copy)
    let xfers = adxl_results(out, "TransferSync");
    assert_eq!(xfers, vec!["0"; 4], "four ADXL transfers, all SUCCESS:\n{}", out.dump());
    for member in ["Initialize", "RegisterMem", "DeregisterMem"] {
        let rcs = adxl_results(out, member);
        assert!(!rcs.is_empty() && rcs.iter().all(|r| r == "0"), "AdxlEngine::{member}: {rcs:?}\n{}", out.dump());
    }
}

fn assert_no_regcheck_error(out: &Outcome) {
    assert!(!out.stderr.contains("regcheck: error"), "no error finding, no rejection:\n{}", out.dump());
}

/// What the wheel imports weakly and CANN 9.1.0 lacks (hicann/hixl 6d1c2b6, after 9.1.0): absent
/// from the simulator's 9.1.0 root, as from a real 9.1.0, defined by its 9.2.0 root.
const AFTER_9_1_0: &[&str] = &["_ZN4adxl10AdxlEngine23ExportToShareableHandleEPvR20aclrtMemFabricHandle"];

/// The wheel loads against the simulator with every symbol resolved: each Ascend name any of its
/// libraries imports (strong or weak: ACL, ADXL, metadef) is defined by a simulator library of
/// the 9.2.0 root, and of the default root (9.1.0) but for the weak imports 9.1.0 lacks
/// ([`AFTER_9_1_0`]); `import mooncake.engine, mooncake.store` binds every symbol at load
/// (`LD_BIND_NOW=1`) against the default root. Without `libllm_datadist.so` the import fails
/// ("libllm_datadist.so: cannot open shared object").
#[test]
fn the_wheel_loads_against_the_simulator_with_every_symbol_resolved() {
    let sim = testkit::sim_lib_dir();
    let nm = |args: &[&str], lib: &Path| -> String {
        let out = Command::new("nm").args(args).arg(lib).output().expect("nm (binutils)");
        assert!(out.status.success(), "nm {}: {}", lib.display(), shown(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let defined_in = |root: &Path| {
        let mut defined = std::collections::BTreeSet::new();
        for lib in testkit::sim_lib_files() {
            for line in nm(&["-D", "--defined-only"], &root.join(lib)).lines() {
                if let Some(name) = line.split_whitespace().last() {
                    defined.insert(name.to_string());
                }
            }
        }
        defined
    };
    let defined = defined_in(&sim);
    let defined_920 = defined_in(&testkit::sim_lib_dir_release("9.2.0"));
    let mut weak = std::collections::BTreeSet::new();
    let ascend = |name: &str| {
        ["acl", "_ZN4adxl", "_ZN4hixl", "_ZN2ge", "_ZNK2ge", "Hccl", "hccl", "hal"].iter().any(|p| name.starts_with(p))
    };
    let mut imported = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(package_dir()).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.contains(".so") {
            continue;
        }
        for line in nm(&["-D", "--undefined-only"], &path).lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if let Some(sym) = words.last().filter(|s| ascend(s)) {
                imported.insert((sym.to_string(), name.clone()));
                if words.len() >= 2 && words[words.len() - 2] == "w" {
                    weak.insert(sym.to_string());
                }
            }
        }
    }
    assert!(
        imported.iter().any(|(s, _)| s.starts_with("_ZN4adxl10AdxlEngine")),
        "the wheel imports ADXL: {imported:?}"
    );
    let missing: Vec<_> = imported.iter().filter(|(s, _)| !defined_920.contains(s)).collect();
    assert!(missing.is_empty(), "imported by the wheel, not defined by the simulator's 9.2.0 root: {missing:?}");
    let missing: Vec<_> =
        imported.iter().filter(|(s, _)| !defined.contains(s) && !AFTER_9_1_0.contains(&s.as_str())).collect();
    assert!(missing.is_empty(), "imported by the wheel, not defined by the simulator: {missing:?}");
    for sym in AFTER_9_1_0 {
        assert!(!defined.contains(*sym), "the 9.1.0 root defines {sym}, which 9.1.0 lacks");
        if imported.iter().any(|(s, _)| s == sym) {
            assert!(weak.contains(*sym), "the wheel imports {sym} strongly: it could not load on 9.1.0");
        }
    }

    let out = Run::new(python())
        .args(["-c", "import mooncake.engine, mooncake.store; print('imported')"])
        .env("LD_LIBRARY_PATH", &sim)
        .env("LD_BIND_NOW", "1")
        .timeout(RUN_TIMEOUT)
        .run();
    assert!(out.status.success() && out.stdout.contains("imported"), "{}", out.dump());
}

/// Two processes move 1 MiB device-to-device and host-to-host with `transfer_sync_write`, and
/// back crosswise with `transfer_sync_read`, every byte checked: through ADXL's hixl_cs engine
/// (Mooncake sees `GetCapability` and asks for it), linked at the first transfer by AutoConnect
/// (Mooncake never calls Connect: without the simulator's AutoConnect every transfer failed
/// NOT_CONNECTED).
#[test]
fn two_mooncake_processes_move_bytes_through_adxl() {
    let out = two_processes(Door::Bare, "ok", PORTS);
    assert_moved(&out);
    // Mooncake disconnects before it deregisters (hixl_cs would refuse otherwise)
    assert!(adxl_results(&out, "Disconnect").iter().all(|r| r == "0"), "{}", out.dump());
}

/// With `ASCEND_USE_ASYNC_TRANSFER=1` Mooncake moves the same bytes with `TransferAsync` and polls
/// `GetTransferStatus`.
#[test]
fn two_mooncake_processes_with_async_transfers() {
    let out = two_processes_with(Door::Bare, "ok", PORTS + 2000, &[("ASCEND_USE_ASYNC_TRANSFER", "1")]);
    assert!(out.stdout.contains("exit 0 0"), "both peers finish cleanly:\n{}", out.dump());
    let bad = unexpected(&out, &[]);
    assert!(bad.is_empty(), "every call succeeds and every byte arrives: {bad:?}\n{}", out.dump());
    assert_eq!(adxl_results(&out, "TransferAsync"), vec!["0"; 4], "{}", out.dump());
    let polls = adxl_results(&out, "GetTransferStatus");
    assert!(!polls.is_empty() && polls.iter().all(|r| r == "0"), "{}", out.dump());
}

/// The same run with `LD_PRELOAD=libregcheck.so`: the same success, no error finding, no
/// rejection (the ctypes allocations are invisible to regcheck there: warnings at most).
#[test]
fn two_mooncake_processes_under_ld_preload() {
    let out = two_processes(Door::Preload, "ok", PORTS + 400);
    assert_moved(&out);
    assert_no_regcheck_error(&out);
}

/// The same run under `regcheck run --audit` (LD_PRELOAD and LD_AUDIT: the records are whole):
/// the same success, no error finding, no rejection.
#[test]
fn two_mooncake_processes_under_regcheck_run_audit() {
    let out = two_processes(Door::RegcheckRunAudit, "ok", PORTS + 800);
    assert_moved(&out);
    assert_no_regcheck_error(&out);
}

/// The initiator writes from a device buffer it allocated but never registered: Mooncake's
/// `transfer_sync_write` answers -1, and ADXL (hixl_cs: the local range is in no registration,
/// `hixl_mem_store.cc`) answers PARAM_INVALID (103900) to each of Mooncake's two attempts; the
/// failed transfer drops the link (AutoConnect), the next transfer links again, and everything
/// else still works; nothing crashes.
#[test]
fn a_transfer_from_an_unregistered_buffer_gets_the_vendor_code_and_nothing_crashes() {
    for (door, port) in [(Door::Bare, PORTS + 1200), (Door::RegcheckRunAudit, PORTS + 1600)] {
        let out = two_processes(door, "mistake", port);
        assert!(out.stdout.contains("exit 0 0"), "{door:?}: both peers finish cleanly:\n{}", out.dump());
        assert!(
            out.stdout.contains("initiator rc write_unregistered -1"),
            "{door:?}: Mooncake answers -1:\n{}",
            out.dump()
        );
        let bad = unexpected(&out, &["write_unregistered"]);
        assert!(bad.is_empty(), "{door:?}: the rest works: {bad:?}\n{}", out.dump());
        if door == Door::Bare {
            let refused: Vec<String> = adxl_results(&out, "TransferSync").into_iter().filter(|r| r != "0").collect();
            assert_eq!(refused, vec!["103900"; 2], "PARAM_INVALID, once per attempt:\n{}", out.dump());
        }
        if door == Door::RegcheckRunAudit {
            // regcheck names the refusal: the rule, the call, the unregistered range, the fix,
            // and the vendor's code (given by regcheck once the engines are linked, by the
            // vendor on a first transfer that has to connect first).
            let named: Vec<String> = out
                .messages()
                .into_iter()
                .filter(|l| l.contains("[HIXL-XFER-LOCAL-UNREGISTERED] AdxlEngine::TransferSync("))
                .collect();
            assert!(!named.is_empty(), "the refusal is named:\n{}", out.dump());
            for l in &named {
                assert!(l.contains("the local range [0x") && l.contains("fix: RegisterMem"), "{l}");
                // A transfer that links first (the first, and the one after a refusal dropped
                // the link, as the vendor's failure does) is warned: the vendor refuses it.
                assert!(
                    l.contains("103900") || l.contains("PARAM_INVALID") || l.starts_with("regcheck: warning:"),
                    "the vendor's code: {l}"
                );
            }
        }
    }
}
