//! `cargo xtask cross aarch64`: regcheck built for and tested on aarch64 (docs/platforms.md).
//!
//! This machine's rustup toolchain has no aarch64 standard library, and its Debian is too old
//! for a matching cross toolchain. Debian's unstable suite has one whose parts match each other
//! (`rustc`, `cargo`, `libstd-rust-dev:arm64` of the same version, `gcc-aarch64-linux-gnu`,
//! `g++-aarch64-linux-gnu` and the arm64 C and C++ libraries) and `qemu-user`. So the task:
//!
//! 1. makes, once, a chroot of that suite with those packages (`debootstrap`; cached in
//!    `target/cross/sid`, remade when the package list here changes) and prints what it has;
//! 2. vendors the locked crates (`cargo vendor`, by this machine's cargo, into
//!    `target/cross/vendor`): the chroot builds offline;
//! 3. inside the chroot (the checkout bind-mounted at its own path, in a mount namespace of its
//!    own, so nothing stays mounted when the task ends), runs `cargo xtask install` for
//!    `aarch64-unknown-linux-gnu` into `target/cross/aarch64/prefix`: `libregcheck.so`/`.a`,
//!    `libregcheck_audit.so`, the `regcheck` command and the simulator's libraries, all aarch64;
//! 4. compares the exported symbols of the aarch64 libraries with the x86_64 ones (`nm -D`);
//! 5. runs `regcheck doctor` under `qemu-aarch64` (which memory-map source runs there), and
//!    packs the aarch64 Python wheel (`cargo xtask wheel --arch aarch64` packs it again);
//! 6. reserves the huge pages the hugetlb test needs (`crate::machine`, saying so), then runs
//!    the test suite for aarch64: the test programs are aarch64 programs run by
//!    `qemu-aarch64` (cargo's runner); every C and C++ program they build comes from the cross
//!    compiler and runs under the emulator too (`testkit::emulator`). The tests that cannot run
//!    under the emulator are listed, each with the reason ([`NOT_HERE`], [`SKIPPED`]).
//!
//! The machine has no `binfmt_misc` registration: an aarch64 program is started through
//! `qemu-aarch64` explicitly. Needs root (debootstrap, chroot, mount).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::util::{cargo, have_tool, is_root, run_captured, run_visible, shown, Result};

/// The architectures this task knows: (name on the command line, Rust target, Debian
/// architecture, GNU triple of the cross compilers, qemu-user program).
struct Arch {
    name: &'static str,
    triple: &'static str,
    debian: &'static str,
    gnu: &'static str,
    qemu: &'static str,
}

const ARCHES: &[Arch] = &[Arch {
    name: "aarch64",
    triple: "aarch64-unknown-linux-gnu",
    debian: "arm64",
    gnu: "aarch64-linux-gnu",
    qemu: "qemu-aarch64",
}];

/// The suite the chroot is made of (see the module's text for why).
const SUITE: &str = "sid";
const DEFAULT_MIRROR: &str = "http://deb.debian.org/debian";

/// The packages of the chroot (for `{arch}` the Debian architecture, for `{gnu}` the GNU
/// triple), each with what it is for.
const PACKAGES: &[(&str, &str)] = &[
    ("rustc", "the Rust compiler (its aarch64 target needs the next package)"),
    ("cargo", "the build"),
    ("libstd-rust-dev:{arch}", "Rust's standard library for the target"),
    ("gcc-{gnu}", "the C cross compiler and linker"),
    ("g++-{gnu}", "the C++ cross compiler (the simulator, the C++ bridge, the test programs)"),
    ("qemu-user", "qemu-user, which runs the target's programs"),
    ("lld", "the linker of libregcheck.so's export list (build.rs)"),
    ("gcc", "build scripts compiled for the build machine"),
    ("g++", "build scripts compiled for the build machine"),
    ("binutils", "nm, objdump and readelf of the tests"),
    ("cmake", "the CMake consumer (tests/packaging)"),
    ("pkg-config", "the pkg-config consumer (tests/packaging)"),
    ("make", "the consumers' builds (tests/packaging)"),
    ("file", "naming the architecture of what was built"),
    ("ca-certificates", "apt over https mirrors"),
];

/// Test targets that run on x86_64 and not under the emulator, with the reason. The command
/// lists their tests.
const NOT_HERE: &[(&str, &str, &str)] = &[
    (
        "regcheck",
        "valgrind",
        "valgrind cannot run inside qemu-user (and has no aarch64 build in the chroot's cross toolchain)",
    ),
    (
        "regcheck",
        "sanitize",
        "AddressSanitizer maps its shadow memory where qemu-user's guest address space cannot hold it",
    ),
    (
        "regcheck",
        "secure",
        "set-user-ID applies to the emulator, not to the program it runs: the kernel's secure-execution mode \
         (AT_SECURE) cannot be given to an emulated program",
    ),
    (
        "regcheck",
        "wheel",
        "installs the wheel into a Python virtual environment and runs Python programs that load it: the chroot's \
         python3 is an x86_64 program (the aarch64 wheel is packed and tagged by this command itself)",
    ),
    (
        "regcheck",
        "readme",
        "checks the promise table of docs/testing.md and the rules docs/audit.md names; nothing architecture-dependent",
    ),
    ("regcheck", "docs", "checks the links and commands of README.md and docs/; nothing architecture-dependent"),
    (
        "regcheck",
        "differential",
        "runs every sequence under `regcheck run --audit`, which execs the program (an emulated exec of an aarch64 \
         program fails without binfmt_misc), and probes each step that may crash in a forked child, which qemu-user \
         does not always survive with threads inside the simulator",
    ),
    (
        "regcheck",
        "datadist_python",
        "runs Python programs whose ctypes loads the simulator's libllm_datadist_py.so and regcheck: the chroot's \
         python3 is an x86_64 program, which cannot load aarch64 libraries",
    ),
    (
        "regcheck",
        "mooncake",
        "runs Mooncake's NPU wheel from PyPI (mooncake-transfer-engine-npu), which exists for x86_64 only \
         (manylinux_2_35_x86_64), in a CPython 3.11 virtual environment",
    ),
];

/// Single tests of the targets that run here but cannot pass under the emulator, with the
/// reason (test name, reason). Each was seen failing there for that reason alone.
const SKIPPED: &[(&str, &str)] = &[
    ("platform::memmap::tests::mlocked_region", SMAPS),
    ("cmake_consumer_builds_the_demos_and_passes_ctest", DEMO_HEAP),
    ("moved_install_still_builds_and_runs_consumers_then_uninstalls", DEMO_HEAP),
    ("pkg_config_consumer_builds_the_c_demo_shared_and_static", DEMO_HEAP),
    ("rules::pageable_memory_on_an_old_kernel", SMAPS),
    ("old_kernel_accepts_page_locked_memory", SMAPS),
    ("fork_keeps_registrations_and_does_not_deadlock", FORK_THREADS),
    ("platform::net::sockdiag::tests::a_fork_child_closes_the_parents_sockets", SOCK_DIAG),
    ("platform::net::sockdiag::tests::a_kept_number_reused_for_a_tcp_stream_is_never_written", SOCK_DIAG),
    ("platform::net::sockdiag::tests::a_socket_closed_behind_regchecks_back_is_replaced_not_closed_again", SOCK_DIAG),
    ("platform::net::tests::another_processs_connections_on_the_same_port_are_not_ours", SOCK_DIAG),
    ("platform::net::tests::counts_the_connections_a_listener_accepted", SOCK_DIAG),
    ("platform::net::tests::ipv6_connections_count_too", SOCK_DIAG),
    ("launcher::every_launcher_option_end_to_end", EXEC),
    ("launcher::the_launcher_runs_a_program_under_regcheck", EXEC),
    ("regcheck_run_is_an_alias_of_regcheck_run", EXEC),
    ("run_names_the_call_site_and_speaks_json", EXEC),
    ("the_demo_shows_the_contrast_per_step", EXEC),
    ("memory::rejections_by_records_are_certain_preloaded_or_linked", EXEC),
    ("a_new_user_silences_one_finding_by_call_site_with_a_generated_entry", EXEC),
    ("every_readme_snippet_runs_as_written", EXEC),
    ("the_regcheck_transcripts_are_the_commands_output", EXEC),
    ("a_python_kv_connector_works_under_regcheck_in_two_processes", PYTHON),
    ("ctypes_calls_are_checked_under_ld_audit", PYTHON),
    ("ctypes_calls_are_checked_under_ld_preload_alone", PYTHON),
    ("ctypes_calls_are_checked_under_regcheck_run_without_audit", PYTHON),
    ("annotate::the_python_module_annotates_a_pool_through_ctypes", PYTHON),
    ("ctypes_on_the_current_library_name_is_checked", PYTHON),
    ("without_regcheck_the_module_says_so_once_and_changes_nothing", PYTHON),
    ("the_installed_sim_python_package_loads_its_library_from_the_install", PYTHON),
];

/// Single cases inside tests that run here, left out under the emulator by the test itself
/// (which checks that it did), with the reason (where, reason).
const CASES_LEFT_OUT: &[(&str, &str)] = &[(
    "sim/tests/acl_codes.c, the file-backed mapping case (crates/testkit/tests/sim.rs: acl_codes_through_libascendcl, \
     acl_codes_through_libacl_rt, trace_only_with_aclsim_trace_1)",
    MAPS_FILE,
)];

const DEMO_HEAP: &str = "runs the installed acl_demo linked with libregcheck.a, whose last step registers a pageable \
                         heap buffer on a simulated 5.10 kernel: linked statically, regcheck's own dlsym is not the \
                         program's, so its records are not whole, and under qemu-user the guest's heap is an unnamed \
                         anonymous mapping (it may be an unseen aclrtMallocHost's): regcheck only warns and the \
                         simulated driver exception ends the demo (the shared and preloaded demos pass here; since \
                         records are whole under LD_PRELOAD, the UB-endpoint heap test runs here too)";
const SMAPS: &str = "qemu-user's emulated /proc/self/smaps shows no page as locked (`Locked: 0 kB`, no `lo` flag): \
                     mlock'ed memory cannot be told from pageable memory";
const MAPS_FILE: &str = "qemu-user's emulated /proc/self/maps shows a shared file mapping as private and anonymous \
                         (no path) in some runs and not in others: the simulator's file-backed-memory check (507899) \
                         cannot always see it";
const FORK_THREADS: &str =
    "forks while another thread is inside the simulator, which qemu-user does not always survive: \
                            the emulated program (bare, without regcheck) hung once in three runs; regcheck's own fork \
                            tests (tests/acl/robustness.rs, tests/concurrency.rs) run here";
const SOCK_DIAG: &str = "qemu-user has no NETLINK_SOCK_DIAG sockets (EPROTONOSUPPORT): the connection counts that use \
                         them cannot run";
const EXEC: &str = "`regcheck run` execs the program: without a binfmt_misc registration an emulated exec of an \
                    aarch64 program fails (the tests start each aarch64 program through qemu-aarch64 themselves)";
const PYTHON: &str = "runs a Python program whose ctypes loads the simulator and regcheck: the chroot's python3 is an \
                      x86_64 program, which cannot load aarch64 libraries (the dlsym caller in C covers LD_AUDIT)";

/// `cargo xtask cross ARCH [--mirror URL] [--no-test]`.
pub fn run(args: &[String]) -> Result<i32> {
    let started = Instant::now();
    let mut arch = None;
    let mut mirror = DEFAULT_MIRROR.to_string();
    let mut test = true;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--mirror" => mirror = it.next().ok_or("--mirror needs a URL")?.clone(),
            "--no-test" => test = false,
            a if a.starts_with('-') => return Err(format!("unknown option `{a}` for `cross`; see `cargo xtask help`")),
            a => {
                let found = ARCHES.iter().find(|x| x.name == a);
                arch = Some(found.ok_or_else(|| {
                    format!(
                        "unknown architecture `{a}` (known: {})",
                        ARCHES.iter().map(|x| x.name).collect::<Vec<_>>().join(", ")
                    )
                })?);
            }
        }
    }
    let arch = arch.ok_or("usage: cargo xtask cross aarch64 [--mirror URL] [--no-test]")?;
    if !is_root() {
        return Err(
            "`cross` needs root: it makes a chroot with debootstrap and bind-mounts the checkout into it".into()
        );
    }
    let root = testkit::workspace_root();
    let cross = testkit::target_dir().join("cross");
    let chroot = cross.join(SUITE);
    let packages = packages(arch);

    let step = Instant::now();
    ensure_chroot(&chroot, &mirror, &packages)?;
    print_versions(&chroot, &packages)?;
    eprintln!("xtask: cross: the chroot is ready ({:.0?})", step.elapsed());

    let step = Instant::now();
    let cargo_home = vendor(&cross)?;
    let target_dir = cross.join(arch.name);
    let prefix = prefix(arch.name)?;
    let env = chroot_env(arch, &cargo_home, &target_dir);
    let mut install =
        in_chroot(&chroot, &root, &env, &["cargo", "run", "--offline", "--locked", "-q", "-p", "xtask", "--"]);
    install.arg("install").arg("--prefix").arg(&prefix);
    run_visible(&mut install)?;
    describe_build(&chroot, &root, &env, &prefix)?;
    eprintln!("xtask: cross: {} built ({:.0?})", arch.name, step.elapsed());

    compare_exports(&prefix)?;
    doctor(arch, &chroot, &root, &env, &prefix)?;
    let wheel = crate::wheel::pack(&crate::wheel::inputs_from_prefix(&prefix, arch.name), &target_dir.join("wheels"))?;
    eprintln!("xtask: cross: the {} wheel: {}", arch.name, wheel.display());

    let mut failed = false;
    if test {
        let step = Instant::now();
        // the emulated tests map huge pages from this kernel's reserve
        crate::machine::ensure_huge_pages("cross", true);
        failed = !run_tests(arch, &chroot, &root, &env)?;
        list_not_here(arch, &chroot, &root, &env)?;
        eprintln!("xtask: cross: the {} tests took {:.0?}", arch.name, step.elapsed());
    }
    eprintln!("xtask: cross {}: {} in {:.0?}", arch.name, if failed { "FAILED" } else { "passed" }, started.elapsed());
    Ok(if failed { 1 } else { 0 })
}

/// Where the cross build of `arch` is installed (`cargo xtask install`'s layout).
pub fn prefix(arch: &str) -> Result<PathBuf> {
    let known = ARCHES.iter().find(|a| a.name == arch).ok_or_else(|| format!("unknown architecture `{arch}`"))?;
    Ok(testkit::target_dir().join("cross").join(known.name).join("prefix"))
}

fn packages(arch: &Arch) -> Vec<(String, &'static str)> {
    PACKAGES.iter().map(|(p, why)| (p.replace("{arch}", arch.debian).replace("{gnu}", arch.gnu), *why)).collect()
}

/// What the chroot was made from: kept in it, compared on every run.
fn recipe(mirror: &str, packages: &[(String, &str)]) -> String {
    let names: Vec<&str> = packages.iter().map(|(p, _)| p.as_str()).collect();
    format!("suite={SUITE} mirror={mirror} packages={}\n", names.join(" "))
}

const STAMP: &str = ".regcheck-chroot";

/// Makes the chroot unless one of the same recipe is there: debootstrap into a new directory,
/// the foreign architecture, the packages; then the directory takes the chroot's name.
fn ensure_chroot(chroot: &Path, mirror: &str, packages: &[(String, &str)]) -> Result<()> {
    let recipe = recipe(mirror, packages);
    if fs::read_to_string(chroot.join(STAMP)).ok().as_deref() == Some(recipe.as_str()) {
        eprintln!("xtask: cross: using the chroot in {}", chroot.display());
        return Ok(());
    }
    if !have_tool_at("debootstrap") {
        eprintln!("xtask: cross: debootstrap is missing; installing it: apt-get install debootstrap (Debian package)");
        let _ = Command::new("apt-get").args(["update", "-qq"]).status();
        let mut apt = Command::new("apt-get");
        apt.env("DEBIAN_FRONTEND", "noninteractive").args(["install", "-y", "-qq", "debootstrap"]);
        run_visible(&mut apt).map_err(|e| format!("cannot install debootstrap: {e}"))?;
    }
    let new = chroot.with_extension("new");
    remove_tree(&new)?;
    remove_tree(chroot)?;
    eprintln!("xtask: cross: making a {SUITE} chroot in {} from {mirror} (debootstrap, a few minutes)", new.display());
    let mut boot = Command::new("debootstrap");
    boot.args(["--variant=minbase", SUITE]).arg(&new).arg(mirror);
    run_quiet(&mut boot, "debootstrap")?;
    // The mirror may serve a snapshot whose Release file is past its Valid-Until date.
    fs::write(new.join("etc/apt/apt.conf.d/99regcheck-cross"), "Acquire::Check-Valid-Until \"false\";\n")
        .map_err(|e| format!("cannot write the chroot's apt settings: {e}"))?;
    fs::copy("/etc/resolv.conf", new.join("etc/resolv.conf"))
        .map_err(|e| format!("cannot copy /etc/resolv.conf: {e}"))?;
    let debian_arch = packages
        .iter()
        .find_map(|(p, _)| p.split_once(':').map(|(_, a)| a.to_string()))
        .ok_or("no foreign architecture in the package list")?;
    run_quiet(
        Command::new("chroot").arg(&new).args(["dpkg", "--add-architecture", &debian_arch]),
        "dpkg --add-architecture",
    )?;
    run_quiet(Command::new("chroot").arg(&new).args(["apt-get", "update", "-q"]), "apt-get update")?;
    let missing: Vec<String> = packages
        .iter()
        .filter(|(p, _)| {
            let out = Command::new("chroot").arg(&new).args(["apt-cache", "show", "--no-all-versions", p]).output();
            !out.map(|o| o.status.success() && !o.stdout.is_empty()).unwrap_or(false)
        })
        .map(|(p, why)| format!("  {p} ({why})"))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the {SUITE} suite at {mirror} lacks packages the cross build needs:\n{}",
            missing.join("\n")
        ));
    }
    let mut apt = Command::new("chroot");
    apt.arg(&new)
        .args(["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-q", "--no-install-recommends"])
        .args(packages.iter().map(|(p, _)| p.as_str()));
    eprintln!("xtask: cross: installing into the chroot: {}", shown(&apt));
    run_quiet(&mut apt, "apt-get install")?;
    let _ = Command::new("chroot").arg(&new).args(["apt-get", "clean"]).status();
    fs::write(new.join(STAMP), &recipe).map_err(|e| format!("cannot write {}: {e}", new.join(STAMP).display()))?;
    fs::rename(&new, chroot).map_err(|e| format!("cannot move {} to {}: {e}", new.display(), chroot.display()))?;
    Ok(())
}

fn have_tool_at(tool: &str) -> bool {
    ["/usr/sbin", "/usr/bin", "/sbin", "/bin"].iter().any(|d| Path::new(d).join(tool).is_file()) || have_tool(tool)
}

/// Removes a directory tree that has no mount point inside (the chroot is only ever mounted
/// into inside a mount namespace of the task's own).
fn remove_tree(dir: &Path) -> Result<()> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("cannot remove {}: {e}", dir.display())),
    }
}

/// Runs `cmd`, showing its output only when it fails.
fn run_quiet(cmd: &mut Command, what: &str) -> Result<()> {
    run_captured(cmd).map(|_| ()).map_err(|e| format!("{what} failed: {e}"))
}

/// Prints the versions of the chroot's packages; a package that is not (fully) installed fails,
/// named.
fn print_versions(chroot: &Path, packages: &[(String, &str)]) -> Result<()> {
    let mut broken = Vec::new();
    eprintln!("xtask: cross: the chroot's toolchain:");
    for (p, why) in packages {
        let out = Command::new("chroot")
            .arg(chroot)
            .args(["dpkg-query", "-W", "-f", "${db:Status-Abbrev} ${Version}", p])
            .output()
            .map_err(|e| format!("cannot run chroot: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        match text.split_once(' ') {
            Some((status, version)) if out.status.success() && status.starts_with("ii") => {
                eprintln!("  {p:<28} {}", version.trim())
            }
            _ => broken.push(format!("  {p} ({why}): {}", if text.is_empty() { "not installed" } else { text.trim() })),
        }
    }
    if !broken.is_empty() {
        return Err(format!(
            "the chroot in {} lacks working packages (remove it to remake it):\n{}",
            chroot.display(),
            broken.join("\n")
        ));
    }
    Ok(())
}

/// Vendors the locked crates for the chroot's offline build (again when `Cargo.lock` changed)
/// and returns the chroot's `CARGO_HOME`, whose config points at them.
fn vendor(cross: &Path) -> Result<PathBuf> {
    let root = testkit::workspace_root();
    let vendor = cross.join("vendor");
    let stamp = cross.join("vendor.lock");
    let lock = fs::read_to_string(root.join("Cargo.lock")).map_err(|e| format!("cannot read Cargo.lock: {e}"))?;
    if fs::read_to_string(&stamp).ok().as_deref() != Some(lock.as_str()) {
        eprintln!("xtask: cross: vendoring the locked crates into {} (cargo vendor)", vendor.display());
        let mut cmd = Command::new(cargo());
        cmd.current_dir(&root).args(["vendor", "--locked", "--quiet"]).arg(&vendor);
        run_quiet(&mut cmd, "cargo vendor")?;
        fs::write(&stamp, &lock).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    }
    let home = cross.join("cargo-home");
    fs::create_dir_all(&home).map_err(|e| format!("cannot create {}: {e}", home.display()))?;
    let config = format!(
        "[source.crates-io]\nreplace-with = \"vendored\"\n\n[source.vendored]\ndirectory = \"{}\"\n",
        vendor.display()
    );
    fs::write(home.join("config.toml"), config).map_err(|e| format!("cannot write the chroot's cargo config: {e}"))?;
    Ok(home)
}

/// The environment of every command in the chroot (nothing else is inherited).
fn chroot_env(arch: &Arch, cargo_home: &Path, target_dir: &Path) -> Vec<(String, String)> {
    let upper = arch.triple.to_uppercase().replace('-', "_");
    let lower = arch.triple.replace('-', "_");
    let emulator = format!("{} -L /usr/{}", arch.qemu, arch.gnu);
    let mut env = vec![
        ("PATH".into(), "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into()),
        ("HOME".into(), "/root".into()),
        ("LANG".into(), "C.UTF-8".into()),
        ("CARGO_HOME".into(), cargo_home.display().to_string()),
        ("CARGO_TARGET_DIR".into(), target_dir.display().to_string()),
        ("CARGO_TERM_COLOR".into(), "never".into()),
        (format!("CARGO_TARGET_{upper}_LINKER"), format!("{}-gcc", arch.gnu)),
        (format!("CARGO_TARGET_{upper}_RUNNER"), emulator.clone()),
        // the `cc` crate: the target's compilers, and the build machine's for build scripts
        (format!("CC_{lower}"), format!("{}-gcc", arch.gnu)),
        (format!("CXX_{lower}"), format!("{}-g++", arch.gnu)),
        ("HOST_CC".into(), "gcc".into()),
        ("HOST_CXX".into(), "g++".into()),
        // testkit: the simulator and the test programs, built for and run on the target
        ("CC".into(), format!("{}-gcc", arch.gnu)),
        ("CXX".into(), format!("{}-g++", arch.gnu)),
        ("TESTKIT_TARGET".into(), arch.triple.into()),
        ("TESTKIT_EMULATOR".into(), emulator),
        // CMake (tests/packaging): runs the consumers' tests under the emulator
        ("CMAKE_CROSSCOMPILING_EMULATOR".into(), format!("/usr/bin/{};-L;/usr/{}", arch.qemu, arch.gnu)),
        // tests/callsite.rs strips a library of the target
        ("STRIP".into(), format!("{}-strip", arch.gnu)),
        // the property test whose every case makes system calls (all emulated here) runs fewer
        // cases; x86_64 runs each test's own count
        ("PROPTEST_CASES".into(), "128".into()),
    ];
    if let Ok(allow) = std::env::var("REGCHECK_TEST_ALLOW_SKIP") {
        env.push(("REGCHECK_TEST_ALLOW_SKIP".into(), allow));
    }
    env
}

/// A command run inside the chroot, in a mount namespace of its own (the bind mounts end with
/// it): the checkout at its own path, `/proc`, `/dev`; the environment is `env` alone and the
/// working directory the checkout.
fn in_chroot(chroot: &Path, root: &Path, env: &[(String, String)], argv: &[&str]) -> Command {
    const SETUP: &str = r#"set -e
R="$1"; W="$2"; shift 2
mkdir -p "$R$W" "$R/proc" "$R/dev"
mount --bind "$W" "$R$W"
mount -t proc proc "$R/proc"
mount --rbind /dev "$R/dev"
exec chroot "$R" "$@""#;
    let mut cmd = Command::new("unshare");
    cmd.args(["--mount", "--propagation", "private", "sh", "-c", SETUP, "sh"]).arg(chroot).arg(root);
    cmd.args(["/usr/bin/env", "-i"]);
    cmd.args(env.iter().map(|(k, v)| format!("{k}={v}")));
    cmd.args(["sh", "-c", r#"cd "$0" && exec "$@""#]).arg(root).args(argv);
    cmd
}

/// Prints what was built (`file`), as proof of the architecture.
fn describe_build(chroot: &Path, root: &Path, env: &[(String, String)], prefix: &Path) -> Result<()> {
    let files = ["lib/libregcheck.so", "lib/libregcheck_audit.so", "bin/regcheck", "lib/regcheck/sim/libcann_hixl.so"];
    let mut argv = vec!["file".to_string(), "-bL".to_string()];
    let mut shown_files = Vec::new();
    for f in files {
        let p = prefix.join(f);
        if p.exists() {
            argv.push(p.display().to_string());
            shown_files.push(f);
        }
    }
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let out = run_captured(&mut in_chroot(chroot, root, env, &argv))?;
    for (f, line) in shown_files.iter().zip(String::from_utf8_lossy(&out.stdout).lines()) {
        let short: String = line.split(", BuildID").next().unwrap_or(line).chars().take(90).collect();
        eprintln!("  {f:<34} {short}");
    }
    Ok(())
}

/// The dynamic symbols a library defines (`nm -D --defined-only`), with their kind.
fn exports(lib: &Path) -> Result<BTreeSet<String>> {
    let out = run_captured(Command::new("nm").args(["-D", "--defined-only"]).arg(lib))?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace().rev();
            let name = w.next()?;
            let kind = w.next()?;
            Some(format!("{kind} {name}"))
        })
        .collect())
}

/// The aarch64 libraries export what the x86_64 ones do (same names, same kinds).
fn compare_exports(prefix: &Path) -> Result<()> {
    let root = testkit::workspace_root();
    let mut build = Command::new(cargo());
    build.current_dir(&root).args(["build", "--release", "-q", "-p", "regcheck", "-p", "regcheck-audit"]);
    run_visible(&mut build)?;
    let host = testkit::target_dir().join("release");
    for lib in ["libregcheck.so", "libregcheck_audit.so"] {
        let (x86, other) = (exports(&host.join(lib))?, exports(&prefix.join("lib").join(lib))?);
        if x86 != other {
            let only_x86: Vec<&String> = x86.difference(&other).collect();
            let only_other: Vec<&String> = other.difference(&x86).collect();
            return Err(format!(
                "{lib}: the exported symbols differ between x86_64 and the cross build\n  only x86_64: {only_x86:?}\n  only cross: {only_other:?}"
            ));
        }
        eprintln!("xtask: cross: {lib} exports the same {} symbols as on x86_64 (nm -D)", x86.len());
    }
    Ok(())
}

/// `regcheck doctor` under the emulator: the memory-map source and the page size it sees.
fn doctor(arch: &Arch, chroot: &Path, root: &Path, env: &[(String, String)], prefix: &Path) -> Result<()> {
    let cli = prefix.join("bin/regcheck").display().to_string();
    let sysroot = format!("/usr/{}", arch.gnu);
    // doctor exits 1 when it finds problems (no vendor library here): its report is what counts
    let out = in_chroot(chroot, root, env, &[arch.qemu, "-L", &sysroot, &cli, "doctor"])
        .output()
        .map_err(|e| format!("cannot run regcheck doctor under {}: {e}", arch.qemu))?;
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("xtask: cross: `regcheck doctor` under {}:", arch.qemu);
    for line in
        text.lines().filter(|l| ["PROCMAP_QUERY", "page size", "kernel"].iter().any(|k| l.trim_start().starts_with(k)))
    {
        eprintln!("  {}", line.trim());
    }
    if text.contains("not available (reads /proc/self/maps)") {
        eprintln!(
            "xtask: cross: {} does not pass the PROCMAP_QUERY ioctl on: regcheck reads /proc/self/maps here (the \
             fallback path); the ioctl path runs on x86_64",
            arch.qemu
        );
    }
    Ok(())
}

/// The workspace's packages with tests: (package, directory under the root).
const PACKAGES_TESTED: &[(&str, &str)] = &[
    ("regcheck", "."),
    ("regcheck-audit", "audit"),
    ("regcheck-cli", "crates/regcheck-cli"),
    ("testkit", "crates/testkit"),
];

/// The test targets of a package, as cargo names them: the library's and binaries' unit tests,
/// and each `tests/NAME.rs` or `tests/NAME/main.rs`.
fn test_targets(root: &Path, package: &str, dir: &str) -> Vec<String> {
    let dir = root.join(dir);
    let mut args = Vec::new();
    if dir.join("src/lib.rs").is_file() {
        args.push("--lib".to_string());
    }
    if dir.join("src/main.rs").is_file() || dir.join("src/bin").is_dir() {
        args.push("--bins".to_string());
    }
    let mut tests: Vec<String> = fs::read_dir(dir.join("tests"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            let name = p.file_stem()?.to_str()?.to_string();
            let is_test = (p.extension().is_some_and(|x| x == "rs") && p.is_file()) || p.join("main.rs").is_file();
            is_test.then_some(name)
        })
        .filter(|name| !NOT_HERE.iter().any(|(pkg, t, _)| *pkg == package && t == name))
        .collect();
    tests.sort();
    for t in tests {
        args.push("--test".into());
        args.push(t);
    }
    args
}

/// The tests under the emulator: each package's test targets less [`NOT_HERE`], single tests less
/// [`SKIPPED`]. Returns whether all passed.
fn run_tests(arch: &Arch, chroot: &Path, root: &Path, env: &[(String, String)]) -> Result<bool> {
    let mut ok = true;
    for (package, dir) in PACKAGES_TESTED {
        let targets = test_targets(root, package, dir);
        if targets.is_empty() {
            continue;
        }
        let mut argv: Vec<String> =
            ["cargo", "test", "--offline", "--locked", "--no-fail-fast", "--target", arch.triple, "-p", package]
                .map(String::from)
                .into();
        argv.extend(targets);
        argv.push("--".into());
        for (test, _) in SKIPPED {
            argv.push("--skip".into());
            argv.push((*test).into());
        }
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        eprintln!("xtask: cross: under {}: {}", arch.qemu, argv.join(" "));
        let status = in_chroot(chroot, root, env, &argv).status().map_err(|e| format!("cannot run the tests: {e}"))?;
        if !status.success() {
            eprintln!("xtask: cross: {package}: tests FAILED ({status})");
            ok = false;
        }
    }
    Ok(ok)
}

/// Lists the tests that ran on x86_64 and not here, with the reason.
fn list_not_here(arch: &Arch, chroot: &Path, root: &Path, env: &[(String, String)]) -> Result<()> {
    eprintln!("xtask: cross: tests that run on x86_64 and not on {} under the emulator:", arch.name);
    for (package, target, why) in NOT_HERE {
        let argv = [
            "cargo",
            "test",
            "--offline",
            "--locked",
            "-q",
            "--target",
            arch.triple,
            "-p",
            package,
            "--test",
            target,
            "--",
            "--list",
            "--format",
            "terse",
        ];
        let out = run_captured(&mut in_chroot(chroot, root, env, &argv))?;
        let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.strip_suffix(": test"))
            .map(String::from)
            .collect();
        eprintln!("  {package} tests/{target}.rs ({} tests): {why}", names.len());
        for n in names {
            eprintln!("    {n}");
        }
    }
    for (test, why) in SKIPPED {
        eprintln!("  {test}: {why}");
    }
    for (case, why) in CASES_LEFT_OUT {
        eprintln!("  {case}: {why}");
    }
    Ok(())
}
