//! The `regcheck` command as users get it: installed with `cargo xtask install` into a
//! temporary prefix, then run as `<prefix>/bin/regcheck`: `--help` everywhere, `rules`,
//! `explain`, `doctor` on this machine and with overridden settings, and `run` on a C program
//! compiled with `-g` whose bad call is made from a named function.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use regcheck::rules::{Action, RuleId, CATALOGUE};
use serde_json::Value;
use testkit::{Link, Program};

/// `<target>/cli-tests/prefix`, installed once per test process.
fn prefix() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let prefix = testkit::target_dir().join("cli-tests").join("prefix");
        let _ = std::fs::remove_dir_all(&prefix);
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let out = Command::new(cargo)
            .current_dir(testkit::workspace_root())
            .args(["run", "--quiet", "--package", "xtask", "--", "install", "--prefix"])
            .arg(&prefix)
            .output()
            .expect("cannot run cargo xtask install");
        assert!(out.status.success(), "cargo xtask install failed:\n{}", text(&out));
        prefix
    })
}

fn text(out: &Output) -> String {
    format!(
        "status {}\n--- stdout ---\n{}--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `<prefix>/bin/regcheck args...` with a clean environment (no REGCHECK_*, ACLSIM_*,
/// LD_PRELOAD or vendor paths) plus `env`.
fn regcheck(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = testkit::command(prefix().join("bin/regcheck"));
    cmd.args(args);
    for (k, _) in std::env::vars_os() {
        let name = k.to_string_lossy();
        if name.starts_with("REGCHECK_")
            || name.starts_with("ACLSIM_")
            || name.starts_with("ASCEND_")
            || name == "LD_PRELOAD"
            || name == "LD_LIBRARY_PATH"
        {
            cmd.env_remove(&k);
        }
    }
    cmd.envs(env.iter().copied());
    cmd.output().expect("cannot run regcheck")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", text(out)))
}

#[test]
fn every_subcommand_has_help() {
    for args in
        [&["--help"][..], &["run", "--help"], &["doctor", "--help"], &["rules", "--help"], &["explain", "--help"]]
    {
        let out = regcheck(args, &[]);
        assert!(out.status.success(), "{args:?}: {}", text(&out));
        assert!(stdout(&out).contains("Usage: regcheck"), "{args:?}: {}", text(&out));
    }
    let out = regcheck(&["--version"], &[]);
    assert_eq!(stdout(&out).trim(), format!("regcheck {}", env!("CARGO_PKG_VERSION")));
    let out = regcheck(&["frobnicate"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn rules_lists_the_catalogue_with_the_actions_in_force() {
    let out = regcheck(&["rules", "--json"], &[("REGCHECK_RULES", "ACL-HOSTREG-*=warn,ACL-HOSTREG-ALIGN=off")]);
    assert!(out.status.success(), "{}", text(&out));
    let doc = json(&out);
    assert_eq!(doc["mode"], "enforce");
    let rules = doc["rules"].as_array().unwrap();
    assert_eq!(rules.len(), CATALOGUE.len());
    for (r, info) in rules.iter().zip(CATALOGUE) {
        assert_eq!(r["name"], info.name);
        assert_eq!(r["id"], info.id as u32);
        assert_eq!(r["default"], info.default.as_str());
        let want = if info.name == "ACL-HOSTREG-ALIGN" {
            Action::Off
        } else if info.name.starts_with("ACL-HOSTREG-") {
            Action::Warn
        } else {
            info.default
        };
        assert_eq!(r["action"], want.as_str(), "{}", info.name);
        assert!(r["example"]["wrong"].is_string() && r["example"]["right"].is_string(), "{}", info.name);
    }
    // the table, with the change marked
    let out = regcheck(&["rules", "--rules", "HIXL-REG-COUNT=error"], &[]);
    let table = stdout(&out);
    let line = table.lines().find(|l| l.starts_with("HIXL-REG-COUNT ")).unwrap_or_else(|| panic!("{table}"));
    assert!(line.contains("error ") || line.contains("error*"), "{line}");
    assert!(table.lines().any(|l| l.starts_with("ACL-HOSTREG-SIZE-PAGES") && l.contains(" warn ")), "{table}");
    // a mistake in the setting is reported, not ignored
    let out = regcheck(&["rules"], &[("REGCHECK_RULES", "ACL-NOPE=warn")]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("matches no rule ID"), "{}", text(&out));
}

#[test]
fn explain_gives_summary_code_fix_source_and_example() {
    let out = regcheck(&["explain", "acl-hostreg-align"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let t = stdout(&out);
    let info = RuleId::AclHostregAlign.info();
    for want in [
        info.name,
        info.summary,
        info.fix,
        "100000 ACL_ERROR_INVALID_PARAM",
        "A1: ",
        "wrong:",
        "right:",
        "posix_memalign",
    ] {
        assert!(t.contains(want), "missing {want:?}:\n{t}");
    }
    let out = regcheck(&["explain", "--json", "ACL-HOSTREG-NULL"], &[("REGCHECK_RULES", "ACL-HOSTREG-NULL=info")]);
    let v = json(&out);
    assert_eq!(v["name"], "ACL-HOSTREG-NULL");
    assert_eq!(v["action"], "info", "the action in force");
    assert_eq!(v["default"], RuleId::AclHostregNull.info().default.as_str());
    assert!(v["example"]["wrong"].as_str().unwrap().contains("NULL"));
    let out = regcheck(&["explain", "ACL-HOSTREG"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean"), "{}", text(&out));
}

fn problems(v: &Value) -> Vec<String> {
    v["problems"].as_array().unwrap().iter().map(|p| p["what"].as_str().unwrap().to_string()).collect()
}

#[test]
fn doctor_on_this_machine() {
    let out = regcheck(&["doctor", "--json"], &[]);
    let v = json(&out);
    let n = v["problems"].as_array().unwrap().len();
    assert_eq!(
        out.status.code(),
        Some(if n == 0 { 0 } else { 1 }),
        "exit status says whether there were problems: {}",
        text(&out)
    );
    let uname = Command::new("uname").arg("-r").output().unwrap();
    assert_eq!(v["kernel"]["release"], String::from_utf8_lossy(&uname.stdout).trim());
    assert_eq!(v["kernel"]["source"], "uname");
    assert_eq!(v["kernel"]["pageable_kernel_max"], "5.10");
    // SAFETY: sysconf has no preconditions.
    assert_eq!(v["page_size"], unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64);
    assert!(v["procmap_query"].is_boolean());
    assert!(v["memlock"]["cap_ipc_lock"].is_boolean());
    assert_eq!(v["settings"]["mode"], "enforce");
    // nothing here is a vendor install: the missing ACL library is a problem, with its fix
    if v["vendor_libraries"].as_array().unwrap().iter().all(|l| l["library"] != "acl") {
        assert!(problems(&v).iter().any(|p| p.contains("no vendor ACL runtime")), "{}", text(&out));
    }
    let out = regcheck(&["doctor"], &[]);
    let t = stdout(&out);
    for want in [
        "kernel",
        "page size",
        "PROCMAP_QUERY",
        "RLIMIT_MEMLOCK",
        "driver (HDK)",
        "SoC",
        "vendor libraries",
        "settings",
    ] {
        assert!(t.contains(want), "{want} missing:\n{t}");
    }
}

#[test]
fn doctor_with_the_simulated_vendor_and_overridden_settings() {
    let sim = prefix().join("lib/regcheck/sim/libascendcl.so");
    let sim = sim.to_str().unwrap();
    // A healthy setup: the vendor library found, asked for the SoC, the driver version given.
    let out = regcheck(
        &["doctor", "--json"],
        &[("REGCHECK_ACL_LIB", sim), ("ACLSIM_SOC_NAME", "Ascend910_9382"), ("REGCHECK_HDK_VERSION", "25.5.0")],
    );
    let v = json(&out);
    assert_eq!(v["soc"]["name"], "Ascend910_9382", "{}", text(&out));
    assert_eq!(v["soc"]["source"], "aclrtGetSocName()");
    assert_eq!(v["soc"]["family"], "Atlas A3");
    assert_eq!(v["soc"]["host_registration"], "supported");
    assert_eq!(v["driver"]["version"], "25.5.0");
    assert_eq!(v["driver"]["source"], "REGCHECK_HDK_VERSION");
    let acl = v["vendor_libraries"].as_array().unwrap().iter().find(|l| l["how"] == "REGCHECK_ACL_LIB").cloned();
    assert!(acl.is_some_and(|l| l["path"].as_str().unwrap().contains("lib/regcheck/sim/")), "{}", text(&out));
    assert!(problems(&v).is_empty(), "{}", text(&out));
    assert_eq!(out.status.code(), Some(0));

    // Every override shows, and every mistake is a problem with a fix.
    let out = regcheck(
        &["doctor", "--json"],
        &[
            ("REGCHECK_ACL_LIB", sim),
            ("REGCHECK_SOC_NAME", "Ascend310P3"),
            ("REGCHECK_KERNEL_RELEASE", "5.10.0-60.18.0.50.oe2203.x86_64"),
            ("REGCHECK_HDK_VERSION", "23.0.rc3"),
            ("REGCHECK_MOD", "report"),
            ("REGCHECK_LARGE_BYTES", "lots"),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let v = json(&out);
    assert_eq!(v["kernel"]["source"], "REGCHECK_KERNEL_RELEASE");
    assert_eq!(v["kernel"]["page_locked_required"], true);
    assert_eq!(v["soc"]["source"], "REGCHECK_SOC_NAME");
    assert_eq!(v["soc"]["host_registration"], "unsupported");
    let p = problems(&v);
    for want in ["did you mean REGCHECK_MODE", "REGCHECK_LARGE_BYTES", "Ascend310P3", "older than 24.1"] {
        assert!(p.iter().any(|x| x.contains(want)), "no problem about {want}: {p:#?}");
    }
    assert!(v["problems"].as_array().unwrap().iter().all(|p| !p["fix"].as_str().unwrap().is_empty()));
    assert!(v["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("page-locked")));
    let vars = v["settings"]["variables"].as_array().unwrap();
    let large = vars.iter().find(|x| x["name"] == "REGCHECK_LARGE_BYTES").unwrap();
    assert_eq!(large["set"], "lots");
    assert_eq!(large["effective"], (64u64 << 30).to_string());
    // the text form says the same
    let out = regcheck(&["doctor"], &[("REGCHECK_SOC_NAME", "Ascend310P3")]);
    let t = stdout(&out);
    assert!(t.contains("problem(s):") && t.contains("Ascend310P3") && t.contains("fix: "), "{t}");
}

/// An install carries the simulator: doctor names it beside the missing vendor, says which
/// ACL library regcheck would forward to (the simulator, when that is what a program finds),
/// how to point it at a real CANN, and where the installed guide is.
#[test]
fn doctor_knows_the_simulator_it_ships_and_says_how_to_use_cann() {
    let sim_dir = prefix().join("lib/regcheck/sim").canonicalize().unwrap();
    let sim_dir = sim_dir.to_str().unwrap();
    let out = regcheck(&["doctor", "--json", "--no-vendor"], &[]);
    let v = json(&out);
    assert_eq!(v["simulator"]["dir"], sim_dir, "{}", text(&out));
    if v["vendor_libraries"].as_array().unwrap().iter().all(|l| l["library"] != "acl") {
        let p = v["problems"].as_array().unwrap();
        let acl =
            p.iter().find(|p| p["what"].as_str().unwrap().contains("no vendor ACL runtime")).expect("the problem");
        let (what, fix) = (acl["what"].as_str().unwrap(), acl["fix"].as_str().unwrap());
        assert!(what.contains(sim_dir) && what.contains("simulator"), "{what}");
        assert!(fix.contains("set_env.sh") && fix.contains(&format!("LD_LIBRARY_PATH={sim_dir}")), "{fix}");
        assert!(v["acl_in_use"].is_null(), "{}", text(&out));
    }
    let docs = prefix().join("share/doc/regcheck").canonicalize().unwrap();
    assert_eq!(v["docs"], docs.to_str().unwrap());

    // a program that finds the simulator: regcheck would forward to it, and doctor says so
    let out = regcheck(&["doctor", "--json", "--no-vendor"], &[("LD_LIBRARY_PATH", sim_dir)]);
    let v = json(&out);
    assert_eq!(v["acl_in_use"]["simulator"], true, "{}", text(&out));
    assert!(v["acl_in_use"]["path"].as_str().unwrap().starts_with(sim_dir), "{}", text(&out));
    assert!(problems(&v).iter().all(|p| !p.contains("no vendor ACL runtime")), "{}", text(&out));
    let notes: Vec<&str> = v["notes"].as_array().unwrap().iter().filter_map(|n| n.as_str()).collect();
    assert!(notes.iter().any(|n| n.contains("simulator") && n.contains("REGCHECK_ACL_LIB")), "{notes:#?}");
    let t = stdout(&regcheck(&["doctor", "--no-vendor"], &[("LD_LIBRARY_PATH", sim_dir)]));
    assert!(t.contains("ACL in use") && t.contains("regcheck's simulator, not CANN"), "{t}");
    assert!(t.contains(&format!("{}", docs.join("docs/rules.md").display())), "{t}");

    // the simulator's other release roots beside it (lib/regcheck/sim/9.2.0) are the simulator too
    let root_920 = format!("{sim_dir}/9.2.0");
    let out = regcheck(&["doctor", "--json", "--no-vendor"], &[("LD_LIBRARY_PATH", &root_920)]);
    let v = json(&out);
    assert!(v["acl_in_use"]["path"].as_str().unwrap().starts_with(&root_920), "{}", text(&out));
    assert_eq!(v["acl_in_use"]["simulator"], true, "{}", text(&out));
}

fn callsite_program() -> PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| Program::c("callsite", &["tests/c/callsite.c"]).link(Link::Bare).libs(&["ascendcl"]).build())
        .clone()
}

#[test]
fn run_names_the_call_site_and_speaks_json() {
    let exe = callsite_program();
    let exe = exe.to_str().unwrap();
    let out = regcheck(&["run", "--stack", "2", "--", exe, "align"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[ACL-HOSTREG-ALIGN]") && err.contains("    at register_buffers (callsite.c:"), "{err}");
    assert!(err.contains("    by setup_pool (callsite.c:"), "{err}");
    assert!(stdout(&out).contains("errmsg regcheck: [ACL-HOSTREG-ALIGN]"), "{}", text(&out));

    let out = regcheck(&["run", "--json", "--summary", "--error-exitcode", "3", exe, "align"], &[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    // every line is JSON, the exit notice of --error-exitcode included
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}\n{}", text(&out))))
        .collect();
    assert!(lines
        .iter()
        .any(|v| v["type"] == "message" && v["message"].as_str().unwrap().contains("exiting with status 3")));
    let f = lines.iter().find(|v| v["type"] == "finding").unwrap_or_else(|| panic!("{}", text(&out)));
    assert_eq!(f["rule"], "ACL-HOSTREG-ALIGN");
    assert_eq!(f["call_site"]["function"], "register_buffers");
    assert!(lines.iter().any(|v| v["type"] == "summary" && v["errors"] == 1), "{}", text(&out));

    let out = regcheck(&["run", "--print-env", "--json", "--stack", "4"], &[]);
    let env = stdout(&out);
    assert!(env.contains("REGCHECK_LOG_FORMAT=json") && env.contains("REGCHECK_STACK=4"), "{env}");
    let lib = prefix().join("lib").canonicalize().unwrap();
    assert!(env.contains(&format!("LD_PRELOAD={}/libregcheck.so", lib.display())), "{env}");
}

#[test]
fn regcheck_run_is_an_alias_of_regcheck_run() {
    let exe = callsite_program();
    let out = testkit::command(prefix().join("bin/regcheck-run"))
        .env_remove("LD_PRELOAD")
        .env("LD_LIBRARY_PATH", testkit::sim_lib_dir())
        .args(["--report", "--"])
        .arg(&exe)
        .arg("align")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout(&out).contains("rc register 507899"), "report mode forwards: {}", text(&out));
    let out = testkit::command(prefix().join("bin/regcheck-run")).arg("--frobnicate").arg(&exe).output().unwrap();
    assert_eq!(out.status.code(), Some(127), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown option --frobnicate"), "{}", text(&out));
}

/// `regcheck doctor` says which CANN release profile it uses and why (issue 35 item 1): the
/// vendor's answer, `REGCHECK_CANN_VERSION`, the runtime's version file, else assumed.
#[test]
fn doctor_shows_the_release_profile_and_why() {
    let sim = prefix().join("lib/regcheck/sim/libascendcl.so");
    let sim = sim.to_str().unwrap();
    let empty = testkit::target_dir().join("no-ascend-here");
    std::fs::create_dir_all(&empty).unwrap();
    let empty = empty.to_str().unwrap();
    let isolated = [("HOME", empty), ("ASCEND_HOME_PATH", empty), ("ASCEND_INSTALL_PATH", empty)];
    let doctor = |extra: &[(&str, &str)], args: &[&str]| {
        let env: Vec<(&str, &str)> = isolated.iter().chain(extra).copied().collect();
        let out = regcheck(&[&["doctor", "--json"], args].concat(), &env);
        (json(&out), text(&out))
    };
    // The simulator answers as the release users run, by default; the newer one when asked.
    let (v, t) = doctor(&[("REGCHECK_ACL_LIB", sim)], &[]);
    assert_eq!(v["profile"]["release"], "9.1.0", "{t}");
    assert_eq!(v["profile"]["known"], true, "{t}");
    assert_eq!(v["profile"]["source"], "aclsysGetVersionStr(\"runtime\")", "{t}");
    assert_eq!(v["profile"]["registration_path"], "tables", "{t}");
    assert_eq!(
        (&v["profile"]["pin_register_feature"], &v["profile"]["pin_register_from"]),
        (&Value::Null, &"not-asked".into()),
        "{t}"
    );
    // After 9.1.0 the path is the driver's pinned-register feature, asked of the driver
    // (halSupportFeature) as the runtime asks it.
    for (pin, on, path) in [("1", true, "driver"), ("0", false, "tables")] {
        let (v, t) =
            doctor(&[("REGCHECK_ACL_LIB", sim), ("ACLSIM_CANN_VERSION", "9.2.0"), ("ACLSIM_PIN_REGISTER", pin)], &[]);
        assert_eq!(
            (&v["profile"]["release"], &v["profile"]["registration_path"]),
            (&"9.2.0".into(), &path.into()),
            "{t}"
        );
        assert_eq!(
            (&v["profile"]["pin_register_feature"], &v["profile"]["pin_register_from"]),
            (&on.into(), &"driver".into()),
            "{t}"
        );
        assert!(
            v["profile"]["pin_register_detail"]
                .as_str()
                .unwrap()
                .contains(&format!("halSupportFeature(0, FEATURE_SVM_MEM_REGISTER_HOST_PINNED) answered {on}")),
            "{t}"
        );
        let out = regcheck(
            &["doctor"],
            &[("REGCHECK_ACL_LIB", sim), ("ACLSIM_CANN_VERSION", "9.2.0"), ("ACLSIM_PIN_REGISTER", pin)],
        );
        let want =
            format!("host registration path: {path}; pinned-register feature: {}", if on { "on" } else { "off" });
        assert!(stdout(&out).contains(&want), "{want}\n{}", text(&out));
    }
    // The override wins.
    let (v, t) = doctor(&[("REGCHECK_ACL_LIB", sim), ("REGCHECK_CANN_VERSION", "9.2.0-beta.2")], &[]);
    assert_eq!(
        (&v["profile"]["release"], &v["profile"]["source"]),
        (&"9.2.0".into(), &"REGCHECK_CANN_VERSION".into()),
        "{t}"
    );
    // Without the vendor: the runtime's version file under an install root, else assumed.
    let (v, t) = doctor(&[], &["--no-vendor"]);
    assert_eq!((&v["profile"]["release"], &v["profile"]["known"]), (&"9.1.0".into(), &false.into()), "{t}");
    assert_eq!(v["profile"]["registration_path"], "unknown", "{t}");
    assert_eq!(
        (&v["profile"]["pin_register_feature"], &v["profile"]["pin_register_from"]),
        (&Value::Null, &"not-asked".into()),
        "{t}"
    );
    assert!(v["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("assumes 9.1.0")), "{t}");
    let root = testkit::target_dir().join("cann-root-9.2.0");
    let file = root.join("share/info/runtime/version.info");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "Version=9.2.0\n").unwrap();
    let (v, t) = doctor(&[("ASCEND_HOME_PATH", root.to_str().unwrap())], &["--no-vendor"]);
    assert_eq!(v["profile"]["release"], "9.2.0", "{t}");
    assert_eq!(v["profile"]["source"], file.to_str().unwrap(), "{t}");
    let out = regcheck(&["doctor"], &[("REGCHECK_CANN_VERSION", "9.1.0")]);
    assert!(
        stdout(&out).contains("CANN profile       9.1.0 (from REGCHECK_CANN_VERSION); host registration path: tables"),
        "{}",
        text(&out)
    );
}
