//! Packaging: `cargo xtask install` into a temporary prefix, then what a consumer
//! sees of it: the installed tree and its manifest, the SONAME and the exported symbols, the
//! header against the exports, the CMake package (examples-c built and run under ctest: C and
//! C++, shared and static, preload and link order), the pkg-config consumer, the version file's
//! compatibility rule, a damaged install, and a moved (relocated) install, built against again
//! and uninstalled.
//!
//! These tests need cmake, pkg-config, make, nm and objdump: a missing tool is a failure, not a
//! skip (CI installs them; `cargo xtask test` says how).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

mod exports;

/// The simulated kernel on which the vendor library crashes on pageable memory: a consumer run
/// that exits 0 there had regcheck interposing.
const OLD_KERNEL: &str = "5.10.0-60.18.0.50.oe2203.aarch64";

const VERSION: &str = env!("CARGO_PKG_VERSION");
const VERSION_MAJOR: &str = env!("CARGO_PKG_VERSION_MAJOR");
const VERSION_MINOR: &str = env!("CARGO_PKG_VERSION_MINOR");
const VERSION_PATCH: &str = env!("CARGO_PKG_VERSION_PATCH");

const ACL_EXPORTS: &[&str] = &[
    "aclrtHostRegisterV2",
    "aclrtHostRegister",
    "aclrtHostUnregister",
    "aclrtHostGetDevicePointer",
    "aclrtMallocHost",
    "aclrtFreeHost",
    "aclrtMallocHostWithCfg",
    "aclrtFreeHostWithDevSync",
    "aclrtMalloc",
    "aclrtFree",
    "aclrtMallocPhysical",
    "aclrtFreePhysical",
    "aclrtMapMem",
    "aclrtUnmapMem",
    "aclrtSetDevice",
    "aclrtResetDevice",
    "aclrtResetDeviceForce",
    "aclFinalize",
    "aclGetRecentErrMsg",
    "halHostRegister",
    "halHostUnregister",
];

fn soversion() -> String {
    if VERSION_MAJOR == "0" {
        format!("0.{VERSION_MINOR}")
    } else {
        VERSION_MAJOR.to_string()
    }
}

/// A scratch directory of this test, emptied first: `<target>/packaging-tests/<name>`.
fn scratch(name: &str) -> PathBuf {
    let dir = testkit::target_dir().join("packaging-tests").join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// Panics (fails the test) when `tool` is not installed.
fn require(tool: &str) {
    let ok = testkit::output_within(Command::new(tool).arg("--version"), RUN_TIMEOUT)
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "`{tool}` is not installed, and the packaging tests need it. CI installs it (.ci/run); \
         locally: apt-get install -y cmake pkg-config make binutils (or python3 -m pip install cmake). \
         `cargo xtask test` checks for every tool first."
    );
}

/// `cmd` without the variables that would change what a consumer program does.
fn clean(cmd: &mut Command) -> &mut Command {
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        if k == "LD_PRELOAD" || k == "LD_LIBRARY_PATH" || k.starts_with("REGCHECK_") || k.starts_with("ACLSIM_") {
            cmd.env_remove(&key);
        }
    }
    cmd
}

/// How long a build step (cmake, make, ctest, an install) may take before it is killed.
const BUILD_TIMEOUT: Duration = Duration::from_secs(20 * 60);
/// How long a consumer program or a query (nm, pkg-config, cmake -P) may take.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `cmd`, killing it (and every process it started) after `timeout`.
fn output_within(cmd: &mut Command, timeout: Duration) -> Output {
    let shown = format!("{cmd:?}");
    testkit::output_within(cmd, timeout).unwrap_or_else(|e| panic!("{shown}: {e}"))
}

fn output(cmd: &mut Command) -> Output {
    output_within(cmd, RUN_TIMEOUT)
}

fn text(out: &Output) -> String {
    format!(
        "--- stdout ---\n{}--- stderr ---\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `cmd`, panicking with its output when it fails; returns stdout.
fn run_ok(cmd: &mut Command) -> String {
    build_ok(cmd, RUN_TIMEOUT)
}

/// [`run_ok`] for a build step, with the longer [`BUILD_TIMEOUT`] (or `timeout`).
fn build_ok(cmd: &mut Command, timeout: Duration) -> String {
    let out = output_within(cmd, timeout);
    assert!(out.status.success(), "{cmd:?} failed ({}):\n{}", out.status, text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `cargo xtask <args>` (the alias's command: `cargo run --quiet --package xtask --`).
fn xtask(args: &[&str]) -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(testkit::workspace_root()).args(["run", "--quiet", "--package", "xtask", "--"]).args(args);
    cmd
}

fn install_into(prefix: &Path) {
    build_ok(&mut xtask(&["install", "--prefix", &prefix.to_string_lossy()]), BUILD_TIMEOUT);
}

/// The prefix every read-only test shares (installed once per test process).
fn prefix() -> &'static Path {
    static PREFIX: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let result = PREFIX.get_or_init(|| {
        let prefix = scratch("prefix");
        std::panic::catch_unwind(|| install_into(&prefix)).map(|_| prefix).map_err(|e| {
            e.downcast_ref::<String>().cloned().unwrap_or_else(|| "cargo xtask install failed".to_string())
        })
    });
    match result {
        Ok(prefix) => prefix,
        Err(msg) => panic!("installing into the test prefix failed:\n{msg}"),
    }
}

/// Every file and link under `dir`, relative to it.
fn tree(dir: &Path) -> BTreeSet<String> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        for entry in fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                walk(base, &path, out);
            } else {
                out.insert(path.strip_prefix(base).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}

fn copy_tree(from: &Path, to: &Path) {
    run_ok(Command::new("cp").arg("-a").arg(from).arg(to));
}

#[test]
fn installs_the_documented_tree_and_its_manifest() {
    let prefix = prefix();
    let so = soversion();
    for file in [
        format!("lib/libregcheck.so.{VERSION}"),
        "lib/libregcheck.a".into(),
        "include/regcheck.h".into(),
        "lib/cmake/regcheck/regcheckConfig.cmake".into(),
        "lib/cmake/regcheck/regcheckConfigVersion.cmake".into(),
        "lib/pkgconfig/regcheck.pc".into(),
        "lib/pkgconfig/regcheck-sim.pc".into(),
        "lib/regcheck/sim/libacl_rt.so".into(),
        "lib/regcheck/sim/libascendcl.so".into(),
        "lib/regcheck/sim/libcann_hixl.so".into(),
        "lib/regcheck/sim/libllm_datadist.so".into(),
        "lib/regcheck/sim/libascend_hal.so".into(),
        "lib/regcheck/sim/libllm_datadist_py.so".into(),
        "lib/regcheck/sim/python/llm_datadist/__init__.py".into(),
        "lib/regcheck/sim/9.2.0/libllm_datadist.so".into(),
        "lib/regcheck/sim/9.2.0/libacl_rt.so".into(),
        "include/regcheck/sim/acl/acl.h".into(),
        "include/regcheck/sim/acl/acl_base.h".into(),
        "include/regcheck/sim/acl/error_codes/rt_error_codes.h".into(),
        "include/regcheck/sim/securec.h".into(),
        "include/regcheck/sim/acl/acl_rt.h".into(),
        "include/regcheck/sim/hixl/hixl.h".into(),
        "include/regcheck/sim/adxl/adxl_engine.h".into(),
        "include/regcheck/sim/adxl/adxl_types.h".into(),
        "share/regcheck/install_manifest.txt".into(),
    ] {
        assert!(prefix.join(&file).is_file(), "{file} is not installed");
    }
    let link = |name: &str| fs::read_link(prefix.join("lib").join(name)).map(|t| t.to_string_lossy().into_owned());
    assert_eq!(link(&format!("libregcheck.so.{so}")).unwrap(), format!("libregcheck.so.{VERSION}"));
    assert_eq!(link("libregcheck.so").unwrap(), format!("libregcheck.so.{so}"));
    assert!(prefix.join("lib/libregcheck_audit.so").is_file(), "the LD_AUDIT module is not installed");
    assert!(prefix.join("bin/regcheck-run").is_file(), "the launcher is not installed");
    // the launcher finds the installed library beside it
    let out = run_ok(testkit::command(prefix.join("bin/regcheck-run")).args(["--audit", "--print-env"]));
    let lib = prefix.join("lib").canonicalize().unwrap();
    assert!(out.contains(&format!("LD_PRELOAD={}/libregcheck.so", lib.display())), "{out}");
    assert!(out.contains(&format!("LD_AUDIT={}/libregcheck_audit.so", lib.display())), "{out}");

    // every installed path sits in the sim headers' place as in the source tree
    let sim_headers = tree(&testkit::sim_include_dir());
    let installed_headers = tree(&prefix.join("include/regcheck/sim"));
    assert_eq!(installed_headers, sim_headers);

    // the manifest lists exactly what is there (but itself), relative to the prefix, then the
    // directories the install created (`dir/`)
    let (dirs, manifest): (BTreeSet<String>, BTreeSet<String>) =
        fs::read_to_string(prefix.join("share/regcheck/install_manifest.txt"))
            .unwrap()
            .lines()
            .map(str::to_string)
            .partition(|l| l.ends_with('/'));
    for dir in ["bin/", "include/", "lib/", "lib/cmake/", "lib/pkgconfig/", "share/", "share/regcheck/"] {
        assert!(dirs.contains(dir), "the manifest does not list {dir} as created: {dirs:?}");
    }
    assert!(dirs.iter().all(|d| prefix.join(d).is_dir()), "{dirs:?}");
    let mut present = tree(prefix);
    present.remove("share/regcheck/install_manifest.txt");
    assert_eq!(manifest, present);

    // nothing installed names the prefix: the tree is relocatable
    let needle = prefix.to_string_lossy().into_owned();
    for rel in &present {
        let path = prefix.join(rel);
        if fs::symlink_metadata(&path).unwrap().is_file() {
            let bytes = fs::read(&path).unwrap();
            assert!(
                !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()),
                "{rel} contains the install prefix {needle}"
            );
        }
    }
}

/// The simulator's Python package, installed beside its library: with only `PYTHONPATH` set
/// (no `LD_LIBRARY_PATH`), `import llm_datadist` finds `libllm_datadist_py.so` two directories
/// up, and that library its own (`$ORIGIN`).
#[test]
fn the_installed_sim_python_package_loads_its_library_from_the_install() {
    let sim = prefix().join("lib/regcheck/sim");
    let out = run_ok(
        Command::new("python3")
            .args(["-c", "import llm_datadist; print(llm_datadist._library()._name)"])
            .env("PYTHONPATH", sim.join("python"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env_remove("LD_LIBRARY_PATH"),
    );
    assert_eq!(out.trim(), sim.join("libllm_datadist_py.so").to_string_lossy(), "{out}");
}

/// `cmake -S examples-c -B build` against `prefix`, then the build (of `targets`, or all).
fn build_consumer(prefix: &Path, build: &Path, targets: &[&str]) {
    require("cmake");
    build_ok(
        clean(&mut Command::new("cmake"))
            .arg("-S")
            .arg(testkit::workspace_root().join("examples-c"))
            .arg("-B")
            .arg(build)
            .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display())),
        BUILD_TIMEOUT,
    );
    let mut cmd = Command::new("cmake");
    cmd.arg("--build").arg(build).args(["--parallel", "2"]);
    for t in targets {
        cmd.args(["--target", t]);
    }
    build_ok(&mut cmd, BUILD_TIMEOUT);
}

#[test]
fn cmake_consumer_builds_the_demos_and_passes_ctest() {
    let build = scratch("cmake-consumer");
    build_consumer(prefix(), &build, &[]);
    // ctest's own per-test timeout, and ours for the whole run
    let out = build_ok(
        clean(&mut Command::new("ctest")).current_dir(&build).args(["--output-on-failure", "-j2", "--timeout", "120"]),
        BUILD_TIMEOUT,
    );
    // C shared, static, preloaded, bare; link order; C++
    let expected = [
        "acl_demo_shared",
        "acl_demo_static",
        "acl_demo_preload",
        "acl_demo_bare",
        "acl_demo_bare_old_kernel_crashes",
        "acl_demo_wrong_order_is_not_checked",
        "hixl_demo_shared",
        "hixl_demo_static",
        "hixl_demo_preload",
        "hixl_demo_mistakes_static",
    ];
    for name in expected {
        assert!(out.contains(&format!(" {name} ")), "ctest did not run {name}:\n{out}");
    }
}

/// Runs a consumer program on the old kernel and checks that regcheck rejected the pageable
/// registration instead of letting the process crash.
fn assert_checked_run(exe: &Path) {
    let out = output(
        clean(&mut testkit::command(exe))
            .current_dir(exe.parent().unwrap())
            .env("ACLSIM_KERNEL_RELEASE", OLD_KERNEL)
            .env("REGCHECK_KERNEL_RELEASE", OLD_KERNEL),
    );
    assert!(out.status.success(), "{} failed ({}):\n{}", exe.display(), out.status, text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("[ACL-HOSTREG-PAGEABLE-OLD-KERNEL]"), "{} ran unchecked:\n{}", exe.display(), text(&out));
}

/// `make -C examples-c/pkgconfig` with `PKG_CONFIG_PATH=<prefix>/lib/pkgconfig` only.
fn build_pkg_config_consumer(prefix: &Path, out_dir: &Path) {
    require("pkg-config");
    require("make");
    build_ok(
        clean(&mut Command::new("make"))
            .arg("-C")
            .arg(testkit::workspace_root().join("examples-c/pkgconfig"))
            .arg(format!("O={}", out_dir.display()))
            .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
            .env_remove("PKG_CONFIG_LIBDIR")
            .env_remove("CFLAGS")
            .env_remove("LDFLAGS"),
        BUILD_TIMEOUT,
    );
}

#[test]
fn pkg_config_consumer_builds_the_c_demo_shared_and_static() {
    let prefix = prefix();
    let dir = scratch("pkg-config-consumer");
    build_pkg_config_consumer(prefix, &dir);
    assert_checked_run(&dir.join("acl_demo"));
    assert_checked_run(&dir.join("acl_demo_static"));

    let pc = |args: &[&str]| {
        run_ok(Command::new("pkg-config").args(args).env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig")))
    };
    assert_eq!(pc(&["--modversion", "regcheck"]).trim(), VERSION);
    let private = pc(&["--static", "--libs", "regcheck"]);
    assert!(private.contains("-lregcheck") && private.contains("-lc"), "Libs.private: {private}");
}

/// The vendor samples' compiler flags (their CMakeLists.txt) and link line.
const VENDOR_FLAGS: &[&str] = &["-O2", "-Wall", "-Wextra", "-Werror", "-ftrapv", "-fno-common", "-Wfloat-equal"];
const VENDOR_LIBS: &[&str] = &["-lcann_hixl", "-lacl_rt", "-lpthread", "-lrt", "-lascend_hal"];

#[test]
fn a_program_builds_with_the_vendor_flags_and_link_line_against_the_installed_simulator() {
    require("pkg-config");
    let prefix = prefix();
    let dir = scratch("vendor-link");
    let pc = run_ok(
        clean(&mut Command::new("pkg-config"))
            .args(["--cflags", "--libs", "regcheck-sim"])
            .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
            .env_remove("PKG_CONFIG_LIBDIR"),
    );
    let source = testkit::workspace_root().join("tests/c/vendor_link.cpp");
    // CANN's C++ libraries use the old std::string ABI; programs may be built either way
    for (name, abi) in [("vendor_link_abi0", Some("-D_GLIBCXX_USE_CXX11_ABI=0")), ("vendor_link_abi1", None)] {
        let exe = dir.join(name);
        let mut cxx = Command::new(std::env::var_os("CXX").filter(|c| !c.is_empty()).unwrap_or_else(|| "c++".into()));
        clean(&mut cxx).args(VENDOR_FLAGS).args(abi).arg(&source).arg("-o").arg(&exe);
        cxx.args(pc.split_whitespace()).args(VENDOR_LIBS);
        run_ok(&mut cxx);
        let out = output(clean(&mut testkit::command(&exe)));
        assert!(out.status.success(), "{name} failed ({}):\n{}", out.status, text(&out));
        assert!(text(&out).contains("vendor_link ok"), "{name}:\n{}", text(&out));
        // the securec functions come from the HAL stand-in, which the program needs directly
        let needed = run_ok(Command::new("objdump").arg("-p").arg(&exe));
        assert!(needed.contains("NEEDED               libascend_hal.so"), "{name}:\n{needed}");
    }
}

#[test]
fn the_sim_cmake_target_builds_the_same_program_with_the_vendor_flags() {
    require("cmake");
    let dir = scratch("vendor-link-cmake");
    let project = dir.join("project");
    fs::create_dir_all(&project).unwrap();
    let source = testkit::workspace_root().join("tests/c/vendor_link.cpp");
    fs::write(
        project.join("CMakeLists.txt"),
        format!(
            "cmake_minimum_required(VERSION 3.16)\n\
             project(vendor_link LANGUAGES CXX)\n\
             find_package(regcheck 0.1 CONFIG REQUIRED)\n\
             add_definitions(-D_GLIBCXX_USE_CXX11_ABI=0)\n\
             add_executable(vendor_link \"{}\")\n\
             target_compile_options(vendor_link PRIVATE {})\n\
             target_link_libraries(vendor_link PRIVATE regcheck::sim -lpthread -lrt)\n",
            source.display(),
            VENDOR_FLAGS.join(" ")
        ),
    )
    .unwrap();
    let build = dir.join("build");
    run_ok(
        clean(&mut Command::new("cmake"))
            .arg("-S")
            .arg(&project)
            .arg("-B")
            .arg(&build)
            .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix().display())),
    );
    run_ok(clean(&mut Command::new("cmake")).arg("--build").arg(&build));
    let out = output(clean(&mut testkit::command(build.join("vendor_link"))));
    assert!(out.status.success() && text(&out).contains("vendor_link ok"), "{}", text(&out));
}

/// The version file's answer to `find_package(regcheck <request>)`, from `cmake -P`.
fn version_answer(version_file: &Path, request: &str) -> (bool, bool) {
    let dir = version_file.parent().unwrap();
    let script = dir.join(format!("ask-{}.cmake", request.replace(['.', '<', '>'], "_")));
    let mut s = String::from("set(CMAKE_SIZEOF_VOID_P 8)\n");
    if let Some((min, max)) = request.split_once("...") {
        let (max_kind, max) = match max.strip_prefix('<') {
            Some(m) => ("EXCLUDE", m),
            None => ("INCLUDE", max),
        };
        let parts = |v: &str, name: &str| {
            let p: Vec<&str> = v.split('.').collect();
            format!(
                "set({name} {v})\nset({name}_MAJOR {})\nset({name}_MINOR {})\n",
                p.first().unwrap_or(&"0"),
                p.get(1).unwrap_or(&"0")
            )
        };
        s += &format!(
            "set(PACKAGE_FIND_VERSION_RANGE {request})\nset(PACKAGE_FIND_VERSION_RANGE_MIN INCLUDE)\n\
             set(PACKAGE_FIND_VERSION_RANGE_MAX {max_kind})\n{}{}set(PACKAGE_FIND_VERSION {min})\n",
            parts(min, "PACKAGE_FIND_VERSION_MIN"),
            parts(max, "PACKAGE_FIND_VERSION_MAX")
        );
    } else {
        let p: Vec<&str> = request.split('.').collect();
        s += &format!(
            "set(PACKAGE_FIND_VERSION {request})\nset(PACKAGE_FIND_VERSION_MAJOR {})\nset(PACKAGE_FIND_VERSION_MINOR {})\n",
            p.first().unwrap_or(&"0"),
            p.get(1).unwrap_or(&"0")
        );
    }
    s += &format!(
        "include(\"{}\")\nmessage(\"compatible=${{PACKAGE_VERSION_COMPATIBLE}} exact=${{PACKAGE_VERSION_EXACT}}\")\n",
        version_file.display()
    );
    fs::write(&script, s).unwrap();
    let out = output(Command::new("cmake").arg("-P").arg(&script));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "cmake -P {}:\n{}", script.display(), text(&out));
    let line = stderr.lines().find(|l| l.starts_with("compatible=")).unwrap_or_else(|| panic!("no answer:\n{stderr}"));
    (line.contains("compatible=TRUE"), line.contains("exact=TRUE"))
}

/// Writes the version file for `version` from cmake/regcheckConfigVersion.cmake.in the way
/// `cargo xtask install` does.
fn version_file_for(version: &str, dir: &Path) -> PathBuf {
    let template = fs::read_to_string(testkit::workspace_root().join("cmake/regcheckConfigVersion.cmake.in")).unwrap();
    let parts: Vec<&str> = version.split('.').collect();
    let text = template
        .replace("@REGCHECK_VERSION@", version)
        .replace("@REGCHECK_VERSION_MAJOR@", parts[0])
        .replace("@REGCHECK_VERSION_MINOR@", parts[1])
        .replace("@REGCHECK_SIZEOF_VOID_P@", "8");
    assert!(!text.contains("@REGCHECK_"), "the version template has a variable this test does not know");
    let file = dir.join(format!("v{version}/regcheckConfigVersion.cmake"));
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, text).unwrap();
    file
}

#[test]
fn version_file_follows_the_soname_policy() {
    require("cmake");
    let dir = scratch("version-file");
    // the installed one
    let installed = prefix().join("lib/cmake/regcheck/regcheckConfigVersion.cmake");
    let same_line = format!("{VERSION_MAJOR}.{VERSION_MINOR}");
    assert_eq!(version_answer(&installed, &same_line), (true, false), "find_package(regcheck {same_line})");
    assert_eq!(version_answer(&installed, VERSION), (true, true), "find_package(regcheck {VERSION})");

    // 0.x: same 0.MINOR only (SONAME libregcheck.so.0.MINOR)
    let v0 = version_file_for("0.3.2", &dir);
    for (request, compatible) in [
        ("0.3", true),
        ("0.3.1", true),
        ("0.3.2", true),
        ("0.3.3", false),
        ("0.2", false),
        ("0.4", false),
        ("0", false),
        ("1.0", false),
        ("0.3...0.5", true),
        ("0.2...0.5", false),
        ("0.3...<0.3.2", false),
    ] {
        assert_eq!(version_answer(&v0, request).0, compatible, "0.3.2 asked for {request}");
    }
    // from 1.0: same MAJOR (SONAME libregcheck.so.MAJOR)
    let v1 = version_file_for("1.4.2", &dir);
    for (request, compatible) in [
        ("1", true),
        ("1.0", true),
        ("1.4.2", true),
        ("1.5", false),
        ("0.9", false),
        ("2.0", false),
        ("1.2...2.0", true),
        ("0.9...2.0", false),
    ] {
        assert_eq!(version_answer(&v1, request).0, compatible, "1.4.2 asked for {request}");
    }
}

#[test]
fn config_file_expands_package_init_as_cmake_does() {
    require("cmake");
    let dir = scratch("package-init");
    let prefix = prefix();
    fs::write(dir.join("regcheckConfig.cmake.in"), "@PACKAGE_INIT@\n").unwrap();
    let script = dir.join("configure.cmake");
    fs::write(
        &script,
        format!(
            "include(CMakePackageConfigHelpers)\n\
             configure_package_config_file(\"{0}/regcheckConfig.cmake.in\" \"{0}/out.cmake\"\n\
             \x20 INSTALL_DESTINATION lib/cmake/regcheck INSTALL_PREFIX \"{1}\")\n",
            dir.display(),
            prefix.display()
        ),
    )
    .unwrap();
    run_ok(Command::new("cmake").arg("-P").arg(&script));
    let by_cmake = fs::read_to_string(dir.join("out.cmake")).unwrap();
    let ours = fs::read_to_string(prefix.join("lib/cmake/regcheck/regcheckConfig.cmake")).unwrap();
    assert!(ours.contains(&by_cmake), "the PACKAGE_INIT block differs from CMake's:\n--- CMake ---\n{by_cmake}");
    let without_banner = ours.replace("Expanded from @PACKAGE_INIT@ by", "");
    assert!(!without_banner.contains('@'), "an @VAR@ was left unexpanded:\n{ours}");
}

#[test]
fn damaged_install_fails_naming_the_missing_file() {
    require("cmake");
    let dir = scratch("damaged");
    let damaged = dir.join("prefix");
    copy_tree(prefix(), &damaged);
    fs::remove_file(damaged.join("lib/libregcheck.a")).unwrap();
    let project = dir.join("project");
    fs::create_dir_all(&project).unwrap();
    fs::write(
        project.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.16)\nproject(damaged LANGUAGES NONE)\n\
         find_package(regcheck 0.1 CONFIG REQUIRED)\n",
    )
    .unwrap();
    let out = output(
        Command::new("cmake")
            .arg("-S")
            .arg(&project)
            .arg("-B")
            .arg(dir.join("build"))
            .arg(format!("-DCMAKE_PREFIX_PATH={}", damaged.display())),
    );
    let all = text(&out);
    assert!(!out.status.success(), "configuring against a damaged install succeeded:\n{all}");
    let words = all.split_whitespace().collect::<Vec<_>>().join(" ");
    let missing = damaged.join("lib/libregcheck.a").display().to_string();
    assert!(words.contains("is damaged; this file is missing:") && words.contains(&missing), "unclear message:\n{all}");
}

#[test]
fn moved_install_still_builds_and_runs_consumers_then_uninstalls() {
    require("cmake");
    let dir = scratch("relocation");
    let first = dir.join("first");
    let moved = dir.join("moved");
    // a directory that was there before the install stays, empty or not
    fs::create_dir_all(first.join("share")).unwrap();
    install_into(&first);
    fs::rename(&first, &moved).unwrap();
    assert!(!first.exists());

    let build = dir.join("cmake-build");
    build_consumer(&moved, &build, &["acl_demo_shared", "acl_demo_static"]);
    assert_checked_run(&build.join("acl_demo_shared"));
    assert_checked_run(&build.join("acl_demo_static"));
    let pc_build = dir.join("pkg-config-build");
    fs::create_dir_all(&pc_build).unwrap();
    build_pkg_config_consumer(&moved, &pc_build);
    assert_checked_run(&pc_build.join("acl_demo"));

    // uninstall (from the moved tree's manifest) leaves only what was not ours
    fs::write(moved.join("lib/not-regcheck.txt"), "keep me").unwrap();
    build_ok(&mut xtask(&["uninstall", "--prefix", &moved.to_string_lossy()]), BUILD_TIMEOUT);
    let left = tree(&moved);
    assert_eq!(left, BTreeSet::from(["lib/not-regcheck.txt".to_string()]), "left after uninstall");
    for gone in ["lib/cmake", "lib/pkgconfig", "lib/regcheck", "include", "bin", "share/regcheck"] {
        assert!(!moved.join(gone).exists(), "{gone} is still there after uninstall");
    }
    // what was there before, or still holds something, stays
    assert!(moved.join("share").is_dir() && moved.join("lib").is_dir(), "{:?}", fs::read_dir(&moved).unwrap());
    // an install into a new directory, uninstalled, leaves nothing
    let fresh = dir.join("fresh");
    install_into(&fresh);
    build_ok(&mut xtask(&["uninstall", "--prefix", &fresh.to_string_lossy()]), BUILD_TIMEOUT);
    assert!(!fresh.exists(), "uninstall left {:?}", tree(&fresh));
}
