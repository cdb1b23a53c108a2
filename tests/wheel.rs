//! The Python wheel, through the doors Python users use: `cargo xtask wheel`, then `pip install`
//! of the wheel into a fresh virtual environment (with pytest and pybind11 from PyPI), and from
//! there: the `regcheck` command on `PATH` and `python -m regcheck`, a `ctypes` program under
//! `regcheck run --audit` (the finding, its Python caller, `regcheck.findings()`), a pybind11
//! module built against the wheel's simulator, and the pytest plugin. The platform tag is
//! checked against the glibc symbol versions of the installed files (`objdump -T`) and with
//! `auditwheel show`.
//!
//! The wheel is built as on a fresh machine: the packing tools' environment (`<target>/wheel/tools`)
//! is made anew, and `cargo xtask wheel` runs with a `PATH` that has no cmake, ninja or make
//! (every other program of `PATH` is there), so it must install what it needs itself.
//!
//! Needs python3 (with venv and pip), a C++ compiler, objdump, and PyPI: when PyPI cannot be
//! reached the tests fail with that message; they do not skip.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

const BUILD_TIMEOUT: Duration = Duration::from_secs(30 * 60);
const RUN_TIMEOUT: Duration = Duration::from_secs(180);

/// The wheel, installed into a fresh virtual environment (once per test process).
struct Env {
    wheel: PathBuf,
    venv: PathBuf,
    /// What `cargo xtask wheel` printed.
    built: String,
}

impl Env {
    fn bin(&self, name: &str) -> PathBuf {
        self.venv.join("bin").join(name)
    }

    fn python(&self) -> PathBuf {
        self.bin("python")
    }

    /// A command with the environment's `bin/` first on `PATH` (as after `activate`).
    fn cmd(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        clean(&mut cmd);
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![self.venv.join("bin")];
        dirs.extend(std::env::split_paths(&path));
        cmd.env("PATH", std::env::join_paths(dirs).unwrap()).env("PYTHONDONTWRITEBYTECODE", "1");
        cmd
    }

    /// `regcheck run --audit [extra...] -- program args...`, through the installed command.
    fn under_regcheck(&self, extra: &[&str], program: &[&str]) -> Command {
        let mut cmd = self.cmd(self.bin("regcheck"));
        cmd.args(["run", "--audit"]).args(extra).arg("--").args(program);
        cmd
    }

    /// `regcheck run [extra...] -- program args...` without `--audit`: the default way of use.
    fn under_regcheck_plain(&self, extra: &[&str], program: &[&str]) -> Command {
        let mut cmd = self.cmd(self.bin("regcheck"));
        cmd.arg("run").args(extra).arg("--").args(program);
        cmd
    }

    /// A Python value of the installed module, e.g. `regcheck.sim_dir()`.
    fn eval(&self, expr: &str) -> String {
        let out = run(self.cmd(self.python()).args(["-c", &format!("import regcheck; print({expr})")]));
        assert_ok(&out, expr);
        stdout(&out).trim().to_string()
    }
}

/// `cmd` without the variables that would change what the programs do.
fn clean(cmd: &mut Command) -> &mut Command {
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        if k == "LD_PRELOAD"
            || k == "LD_AUDIT"
            || k == "LD_LIBRARY_PATH"
            || k == "VIRTUAL_ENV"
            || k == "PYTHONPATH"
            || k.starts_with("PYTEST_")
            || k.starts_with("REGCHECK_")
            || k.starts_with("ACLSIM_")
        {
            cmd.env_remove(&key);
        }
    }
    cmd
}

fn run_within(cmd: &mut Command, timeout: Duration) -> Output {
    let shown = format!("{cmd:?}");
    testkit::output_within(cmd, timeout).unwrap_or_else(|e| panic!("{shown}: {e}"))
}

fn run(cmd: &mut Command) -> Output {
    run_within(cmd, RUN_TIMEOUT)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn both(out: &Output) -> String {
    format!(
        "status {}\n--- stdout ---\n{}--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn assert_ok(out: &Output, what: &str) {
    assert!(out.status.success(), "{what} failed:\n{}", both(out));
}

/// A scratch directory, emptied first: `<target>/wheel-tests/<name>`.
fn scratch(name: &str) -> PathBuf {
    let dir = testkit::target_dir().join("wheel-tests").join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// The programs a fresh machine lacks (Rust, gcc/g++ and python3 only): CMake's, and the build
/// tools scikit-build-core would drive.
const NOT_ON_A_FRESH_MACHINE: &[&str] =
    &["cmake", "cmake3", "ctest", "cpack", "ccmake", "ninja", "ninja-build", "samu", "make", "gmake"];

/// A `PATH` of one directory holding a link to every program of this `PATH` (the first of each
/// name) but [`NOT_ON_A_FRESH_MACHINE`].
fn path_without_cmake() -> std::ffi::OsString {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("path-without-cmake");
    for from in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
        let Ok(entries) = fs::read_dir(&from) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let link = dir.join(&name);
            let executable =
                fs::metadata(entry.path()).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
            if executable && !NOT_ON_A_FRESH_MACHINE.contains(&&*name.to_string_lossy()) && !link.exists() {
                std::os::unix::fs::symlink(entry.path(), &link)
                    .unwrap_or_else(|e| panic!("cannot link {}: {e}", link.display()));
            }
        }
    }
    for tool in NOT_ON_A_FRESH_MACHINE {
        assert!(!dir.join(tool).exists(), "{tool} is still on the PATH made without it");
    }
    dir.into_os_string()
}

fn setup() -> Env {
    let root = testkit::workspace_root();
    let dist = scratch("dist");
    // The packing tools are installed as on a fresh machine, where their environment is new.
    let tools = testkit::target_dir().join("wheel/tools");
    if tools.exists() {
        fs::remove_dir_all(&tools).unwrap_or_else(|e| panic!("cannot remove {}: {e}", tools.display()));
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(&root)
        .args(["run", "--quiet", "--package", "xtask", "--", "wheel", "--out"])
        .arg(&dist)
        .env("PATH", path_without_cmake());
    let out = run_within(&mut build, BUILD_TIMEOUT);
    assert_ok(&out, "cargo xtask wheel");
    let built = both(&out);
    let wheels: Vec<PathBuf> = fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect();
    assert_eq!(wheels.len(), 1, "cargo xtask wheel made {wheels:?}:\n{}", both(&out));
    let wheel = wheels[0].clone();

    let venv = scratch("venv");
    let out = run(clean(Command::new("python3").args(["-m", "venv"]).arg(&venv)));
    assert_ok(&out, "python3 -m venv (python3 with the venv module is needed)");
    let env = Env { wheel, venv, built };
    let mut pip = env.cmd(env.python());
    pip.args(["-m", "pip", "install", "--disable-pip-version-check", "--quiet"]).arg(&env.wheel).args([
        "pytest",
        "pybind11",
        "auditwheel",
    ]);
    let out = run_within(&mut pip, BUILD_TIMEOUT);
    assert!(
        out.status.success(),
        "pip install of the wheel, pytest, pybind11 and auditwheel failed; these tests need PyPI \
         (https://pypi.org) to be reachable:\n{}",
        both(&out)
    );
    env
}

fn env() -> &'static Env {
    static ENV: OnceLock<Result<Env, String>> = OnceLock::new();
    let result = ENV.get_or_init(|| {
        std::panic::catch_unwind(setup).map_err(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "building or installing the wheel failed".into())
        })
    });
    match result {
        Ok(env) => env,
        Err(msg) => panic!("setting up the wheel's environment failed:\n{msg}"),
    }
}

/// `cargo xtask wheel` needs no cmake, ninja or make of the machine's: with none on `PATH` and
/// no packing tools yet, it installs scikit-build-core, CMake and Ninja from PyPI into the tools'
/// environment, says so, and packs the wheel.
#[test]
fn the_wheel_is_packed_on_a_machine_without_cmake_or_make() {
    let env = env();
    let said = env.built.lines().find(|l| l.contains("installing from PyPI")).unwrap_or_else(|| {
        panic!("cargo xtask wheel did not say what it installed into a new tools environment:\n{}", env.built)
    });
    for package in ["scikit-build-core", "cmake", "ninja"] {
        assert!(said.split_whitespace().any(|w| w == package), "{package} not named in: {said}");
    }
    assert!(env.wheel.is_file());
}

/// The ELF files the wheel installed (the command, the libraries, the simulator's libraries).
fn installed_elf_files(env: &Env) -> Vec<PathBuf> {
    let mut files = vec![
        env.bin("regcheck"),
        env.bin("regcheck-run"),
        env.venv.join("lib/libregcheck.so"),
        env.venv.join("lib").join(testkit::soname(&env.venv.join("lib/libregcheck.so"))),
        env.venv.join("lib/libregcheck_audit.so"),
    ];
    let sim = PathBuf::from(env.eval("regcheck.sim_dir()"));
    for lib in testkit::sim_lib_files() {
        files.push(sim.join(lib));
    }
    for f in &files {
        assert!(f.is_file(), "the wheel did not install {}", f.display());
    }
    files
}

/// A C program linked with `-lregcheck` against the installed wheel runs: the loader finds the
/// library by its SONAME beside `libregcheck.so`, and with the layer preloaded as well the
/// process still holds one regcheck.
#[test]
fn a_program_linked_with_lregcheck_against_the_wheel_runs() {
    let env = env();
    let lib = env.eval("regcheck.lib_dir()");
    let exe = scratch("linked").join("linked_version");
    let mut cc = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()));
    cc.args(["-std=c11", "-Wall", "-Wextra", "-Werror"])
        .arg(format!("-I{}", env.eval("regcheck.include_dir()")))
        .arg(testkit::workspace_root().join("tests/c/linked_version.c"))
        .arg(format!("-L{lib}"))
        .arg("-lregcheck")
        .arg(format!("-Wl,-rpath,{lib}"))
        .arg("-o")
        .arg(&exe);
    assert_ok(&run_within(&mut cc, BUILD_TIMEOUT), "building the program linked with -lregcheck");
    let want = format!("version {} objects 1", env!("CARGO_PKG_VERSION"));
    let out = run(&mut env.cmd(&exe));
    assert_ok(&out, "the program linked with -lregcheck");
    assert!(stdout(&out).contains(&want), "{}", both(&out));
    let out = run(&mut env.under_regcheck(&[], &[exe.to_str().unwrap()]));
    assert_ok(&out, "the program linked with -lregcheck, under regcheck run");
    assert!(stdout(&out).contains(&want), "{}", both(&out));
}

/// The 1-based line of `file` (under tests/py) that contains `marker`.
fn line_of(file: &str, marker: &str) -> usize {
    let text = fs::read_to_string(testkit::workspace_root().join("tests/py").join(file)).unwrap();
    text.lines().position(|l| l.contains(marker)).unwrap_or_else(|| panic!("no `{marker}` in {file}")) + 1
}

fn glibc_versions(text: &str) -> Vec<(u32, u32)> {
    text.match_indices("GLIBC_")
        .filter_map(|(i, _)| {
            let rest = &text[i + 6..];
            let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
            let mut parts = rest[..end].split('.');
            Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
        })
        .collect()
}

#[test]
fn the_platform_tag_covers_the_glibc_the_packed_files_need() {
    let env = env();
    let name = env.wheel.file_name().unwrap().to_string_lossy().into_owned();
    let version = env!("CARGO_PKG_VERSION");
    let arch = std::env::consts::ARCH;
    let prefix = format!("regcheck-{version}-py3-none-manylinux_");
    let rest = name.strip_prefix(&prefix).unwrap_or_else(|| panic!("{name} does not start with {prefix}"));
    let tag_glibc = rest
        .strip_suffix(&format!("_{arch}.whl"))
        .and_then(|v| v.split_once('_'))
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
        .unwrap_or_else(|| panic!("{name}: no manylinux_X_Y_{arch} tag"));

    let mut needed = (0, 0);
    for file in installed_elf_files(env) {
        let out = run(Command::new("objdump").arg("-T").arg(&file));
        assert_ok(&out, "objdump -T");
        if let Some(v) = glibc_versions(&stdout(&out)).into_iter().max() {
            needed = needed.max(v);
        }
    }
    assert!(needed >= (2, 17), "no GLIBC_2.x versions found in the packed files");
    assert!(tag_glibc >= needed, "{name} claims glibc {tag_glibc:?}, the packed files need GLIBC_{needed:?}");

    // auditwheel agrees that the wheel is consistent with its tag.
    let out = run(env.cmd(env.bin("auditwheel")).arg("show").arg(&env.wheel));
    assert_ok(&out, "auditwheel show");
    let text = stdout(&out).split_whitespace().collect::<Vec<_>>().join(" ");
    let tag = format!("manylinux_{}_{}_{arch}", tag_glibc.0, tag_glibc.1);
    assert!(text.contains(&format!("consistent with the following platform tag: \"{tag}\"")), "{text}");
}

#[test]
fn the_command_on_path_is_the_installed_command() {
    let env = env();
    // The same file `cargo xtask install` installs as bin/regcheck: the release build's.
    let release = testkit::target_dir().join("release");
    for name in ["regcheck", "regcheck-run"] {
        let packed = fs::read(env.bin(name)).unwrap();
        assert!(packed == fs::read(release.join(name)).unwrap(), "the wheel's {name} is not the release build's");
    }
    let direct = run(env.cmd("regcheck").arg("--version"));
    assert_ok(&direct, "regcheck --version");
    let module = run(env.cmd(env.python()).args(["-m", "regcheck", "--version"]));
    assert_ok(&module, "python -m regcheck --version");
    assert_eq!(stdout(&direct), stdout(&module));
    assert!(stdout(&direct).contains(env!("CARGO_PKG_VERSION")), "{}", both(&direct));
    assert_eq!(env.eval("regcheck.version()"), env!("CARGO_PKG_VERSION"));

    // It finds the libraries the wheel installed, beside itself.
    let out = run(env.cmd("regcheck").args(["run", "--audit", "--print-env"]));
    assert_ok(&out, "regcheck run --print-env");
    let lib = env.venv.canonicalize().unwrap().join("lib");
    let text = stdout(&out);
    assert!(text.contains(&format!("LD_PRELOAD={}", lib.join("libregcheck.so").display())), "{text}");
    assert!(text.contains(&format!("LD_AUDIT={}", lib.join("libregcheck_audit.so").display())), "{text}");
    assert_eq!(Path::new(&env.eval("regcheck.lib_dir()")).canonicalize().unwrap(), lib);
    assert!(Path::new(&env.eval("regcheck.include_dir()")).join("regcheck.h").is_file());
    assert!(Path::new(&env.eval("regcheck.sim_include_dir()")).join("acl/acl.h").is_file());
}

/// The wheel installs the guide (share/doc/regcheck), and the command points there.
#[test]
fn the_wheel_installs_the_guide_where_explain_and_doctor_point() {
    let env = env();
    let docs = env.venv.canonicalize().unwrap().join("share/doc/regcheck");
    for page in ["README.md", "docs/rules.md", "docs/usage.md", "docs/python.md"] {
        assert!(docs.join(page).is_file(), "the wheel did not install {page}");
    }
    let out = run(env.cmd("regcheck").args(["explain", "ACL-HOSTREG-ALIGN"]));
    assert_ok(&out, "regcheck explain");
    let want = format!("{}#acl-hostreg-align", docs.join("docs/rules.md").display());
    assert!(stdout(&out).contains(&want), "{}", both(&out));
    let out = run(env.cmd("regcheck").args(["doctor", "--json", "--no-vendor"]));
    assert!(stdout(&out).contains(&format!("\"docs\": \"{}\"", docs.display())), "{}", both(&out));
}

#[test]
fn a_ctypes_program_under_regcheck_sees_its_finding_and_python_caller() {
    let env = env();
    let script = testkit::workspace_root().join("tests/py/wheel_ctypes.py");
    let py = env.python();
    let out = run(&mut env.under_regcheck(&[], &[py.to_str().unwrap(), script.to_str().unwrap()]));
    assert_ok(&out, "regcheck run --audit python wheel_ctypes.py");
    let text = stdout(&out);
    assert!(text.contains("active=True"), "{}", both(&out));
    assert!(text.contains("register=100000"), "the misaligned registration was not rejected:\n{}", both(&out));
    let finding = text
        .lines()
        .find_map(|l| l.strip_prefix("finding=ACL-HOSTREG-ALIGN|"))
        .unwrap_or_else(|| panic!("regcheck.findings() has no ACL-HOSTREG-ALIGN:\n{}", both(&out)));
    let fields: Vec<&str> = finding.split('|').collect();
    assert_eq!(&fields[..2], ["error", "aclrtHostRegisterV2"], "{finding}");
    assert!(
        fields[2].starts_with("register_misaligned (")
            && fields[2].ends_with(&format!("wheel_ctypes.py:{})", line_of("wheel_ctypes.py", "# the mistake"))),
        "the Python caller is not named: {finding}"
    );
    assert_eq!(&fields[4..], ["True", "100000"], "{finding}");
    assert!(text.contains("last_rejection=[ACL-HOSTREG-ALIGN] aclrtHostRegisterV2("), "{}", both(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("regcheck: error: [ACL-HOSTREG-ALIGN] aclrtHostRegisterV2("), "{}", both(&out));

    // Without the layer, the module says so and loads nothing.
    let out = run(env.cmd(&py).arg(&script));
    assert_ok(&out, "python wheel_ctypes.py (bare)");
    assert!(stdout(&out).contains("active=False"), "{}", both(&out));
    assert!(!stdout(&out).contains("finding="), "{}", both(&out));
    assert!(stdout(&out).contains("last_rejection=None"), "{}", both(&out));
}

#[test]
fn a_pybind11_module_built_against_the_wheels_simulator_is_checked() {
    let env = env();
    let dir = scratch("pybind11");
    let includes = run(env.cmd(env.python()).args(["-m", "pybind11", "--includes"]));
    assert_ok(&includes, "python -m pybind11 --includes");
    let suffix = env.eval("__import__('sysconfig').get_config_var('EXT_SUFFIX')");
    let sim = env.eval("regcheck.sim_dir()");
    let module = dir.join(format!("wheel_kv{suffix}"));
    let mut cc = Command::new(std::env::var("CXX").unwrap_or_else(|_| "c++".into()));
    cc.args(["-std=c++17", "-g", "-O1", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror"])
        .args(stdout(&includes).split_whitespace())
        .arg(format!("-I{}", env.eval("regcheck.sim_include_dir()")))
        .arg(testkit::workspace_root().join("tests/py/wheel_module.cpp"))
        .arg(format!("-L{sim}"))
        .arg("-lascendcl")
        .arg(format!("-Wl,-rpath,{sim}"))
        .arg("-o")
        .arg(&module);
    let out = run_within(&mut cc, BUILD_TIMEOUT);
    assert_ok(&out, "building the pybind11 module");

    let code = "import regcheck, wheel_kv\n\
                print('codes', wheel_kv.init(), wheel_kv.register_at(64), wheel_kv.register_at(0))\n\
                for f in regcheck.findings(): print('finding', f.rule, f.call_site)\n";
    let py = env.python();
    let mut cmd = env.under_regcheck(&[], &[py.to_str().unwrap(), "-c", code]);
    cmd.env("PYTHONPATH", &dir);
    let out = run(&mut cmd);
    assert_ok(&out, "the pybind11 module under regcheck");
    let text = stdout(&out);
    assert!(text.contains("codes 0 100000 0"), "{}", both(&out));
    let finding = text.lines().find(|l| l.starts_with("finding ACL-HOSTREG-ALIGN ")).unwrap_or("");
    assert!(finding.contains("register_at") && finding.contains("wheel_module.cpp:"), "{}", both(&out));

    // Bare, the simulator takes the misaligned registration (nothing checks it).
    let mut bare = env.cmd(&py);
    bare.args(["-c", code]).env("PYTHONPATH", &dir);
    let out = run(&mut bare);
    assert_ok(&out, "the pybind11 module bare");
    assert!(!stdout(&out).contains("100000"), "{}", both(&out));
}

/// Runs pytest on the plugin's test cases (copied to a scratch directory), under regcheck
/// with `regcheck_args` unless `None`, with the variables `vars`.
fn pytest(
    env: &Env,
    name: &str,
    regcheck_args: Option<&[&str]>,
    vars: &[(&str, &str)],
    pytest_args: &[&str],
) -> Output {
    let dir = scratch(name);
    let cases = dir.join("test_cases.py");
    fs::copy(testkit::workspace_root().join("tests/py/wheel_plugin_cases.py"), &cases).unwrap();
    let py = env.python();
    let mut args: Vec<&str> = vec![py.to_str().unwrap(), "-m", "pytest", "-p", "no:cacheprovider", "-rA"];
    args.extend(pytest_args);
    args.push(cases.to_str().unwrap());
    let mut cmd = match regcheck_args {
        Some(extra) => env.under_regcheck(extra, &args),
        None => {
            let mut c = env.cmd(args[0]);
            c.args(&args[1..]);
            c
        }
    };
    cmd.current_dir(&dir).envs(vars.iter().copied());
    run(&mut cmd)
}

#[test]
fn the_pytest_plugin_fails_exactly_the_test_with_a_mistake() {
    let env = env();
    let out = pytest(env, "pytest-errors", Some(&[]), &[], &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    assert!(text.contains("1 failed, 1 passed"), "{}", both(&out));
    assert!(text.contains("FAILED test_cases.py::test_misaligned_registration"), "{}", both(&out));
    assert!(text.contains("PASSED test_cases.py::test_aligned_registration"), "{}", both(&out));
    assert!(text.contains("regcheck reported 1 finding during call:"), "{}", both(&out));
    assert!(
        text.contains("error: [ACL-HOSTREG-ALIGN] aclrtHostRegisterV2 at test_misaligned_registration ("),
        "{}",
        both(&out)
    );
    let line = line_of("wheel_plugin_cases.py", "# the mistake");
    assert!(
        text.contains(&format!("test_cases.py:{line})")),
        "the failure does not name the Python line:\n{}",
        both(&out)
    );
    assert!(text.contains("regcheck findings per test"), "{}", both(&out));
    assert!(text.contains("regcheck: the layer is loaded"), "{}", both(&out));

    // The same with automatic loading off and `-p regcheck`.
    let out = pytest(env, "pytest-p", Some(&[]), &[("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")], &["-p", "regcheck"]);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    assert!(stdout(&out).contains("1 failed, 1 passed"), "{}", both(&out));
}

/// Issue 32's silent pass: `regcheck run pytest` without `--audit`, a test whose `ctypes` call
/// registers a misaligned pointer. Before regcheck's own `dlsym`, the call went straight to the
/// vendor and the run said "2 passed ... regcheck: no findings"; now the test fails, naming
/// ACL-HOSTREG-ALIGN and the Python line.
#[test]
fn the_pytest_plugin_fails_the_mistake_without_audit_too() {
    let env = env();
    let dir = scratch("pytest-no-audit");
    let cases = dir.join("test_cases.py");
    fs::copy(testkit::workspace_root().join("tests/py/wheel_plugin_cases.py"), &cases).unwrap();
    let py = env.python();
    let args = [py.to_str().unwrap(), "-m", "pytest", "-p", "no:cacheprovider", "-rA", cases.to_str().unwrap()];
    let out = run(env.under_regcheck_plain(&[], &args).current_dir(&dir));
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    assert!(text.contains("1 failed, 1 passed"), "{}", both(&out));
    assert!(!text.contains("regcheck: no findings"), "{}", both(&out));
    assert!(
        text.contains("error: [ACL-HOSTREG-ALIGN] aclrtHostRegisterV2 at test_misaligned_registration ("),
        "{}",
        both(&out)
    );
    let line = line_of("wheel_plugin_cases.py", "# the mistake");
    assert!(text.contains(&format!("test_cases.py:{line})")), "the Python line:\n{}", both(&out));
}

#[test]
fn the_pytest_plugin_honours_suppressions() {
    // The one mistake, silenced by a suppression file: neither failed nor listed.
    let env = env();
    let file = scratch("pytest-suppressions-file").join("known.supp");
    fs::write(&file, "# the suite's known misalignment\n{\n  known\n  regcheck:ACL-HOSTREG-ALIGN\n}\n").unwrap();
    let out = pytest(env, "pytest-suppressed", Some(&["--suppressions", file.to_str().unwrap()]), &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    assert!(stdout(&out).contains("2 passed"), "{}", both(&out));
    assert!(stdout(&out).contains("regcheck: no findings"), "{}", both(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("0 rejected, 0 forwarded, 1 suppressed"), "counted as suppressed: {}", both(&out));
}

#[test]
fn regcheck_warnings_decides_what_a_warning_does() {
    let env = env();
    let warn: &[&str] = &["--rules", "ACL-HOSTREG-ALIGN=warn"];
    let out = pytest(env, "pytest-warn-fail", Some(warn), &[], &["--regcheck-warnings=fail"]);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    assert!(stdout(&out).contains("1 failed, 1 passed"), "{}", both(&out));
    assert!(stdout(&out).contains("warning: [ACL-HOSTREG-ALIGN]"), "{}", both(&out));

    let out = pytest(env, "pytest-warn-report", Some(warn), &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    assert!(stdout(&out).contains("2 passed"), "{}", both(&out));
    assert!(stdout(&out).contains("test_cases.py::test_misaligned_registration: 1 finding"), "{}", both(&out));

    let out = pytest(env, "pytest-warn-ignore", Some(warn), &[], &["--regcheck-warnings=ignore"]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    assert!(stdout(&out).contains("regcheck: no findings"), "{}", both(&out));
}

#[test]
fn without_the_layer_the_plugin_says_so_once_and_does_nothing() {
    let env = env();
    let out = pytest(env, "pytest-bare", None, &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let text = stdout(&out);
    assert!(text.contains("2 passed"), "{}", both(&out));
    assert_eq!(text.matches("the layer is not loaded").count(), 1, "{}", both(&out));
    assert!(text.contains("regcheck run pytest"), "{}", both(&out));
    assert!(!text.contains("regcheck findings"), "{}", both(&out));
}
