//! Building the simulator and regcheck.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::SystemTime;

use crate::paths::{sim_include_dir, sim_src_dir, target_dir, workspace_root};

/// An exclusive `flock` on a lock file, released when dropped. Serialises builds across
/// threads (each holder opens its own descriptor) and across processes.
pub(crate) struct FileLock {
    _file: File,
}

impl FileLock {
    /// Blocks until the lock on `path` (created if missing) is held.
    pub(crate) fn acquire(path: &Path) -> FileLock {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .unwrap_or_else(|e| panic!("cannot open lock file {}: {e}", path.display()));
        loop {
            // SAFETY: flock on a descriptor we own; no memory is shared with the call.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
            if rc == 0 {
                break;
            }
            let err = std::io::Error::last_os_error();
            if err.kind() != std::io::ErrorKind::Interrupted {
                panic!("flock({}) failed: {err}", path.display());
            }
        }
        FileLock { _file: file }
    }
}

/// Modification time of `path`, or `None` when it does not exist.
pub(crate) fn mtime(path: &Path) -> Option<SystemTime> {
    fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The newest modification time of the files under `path` (recursively), if any.
pub(crate) fn newest_under(path: &Path) -> Option<SystemTime> {
    let meta = fs::metadata(path).ok()?;
    if meta.is_file() {
        return meta.modified().ok();
    }
    let mut newest = None;
    for entry in fs::read_dir(path).ok()?.flatten() {
        let t = newest_under(&entry.path());
        if t > newest {
            newest = t;
        }
    }
    newest
}

/// Runs `cmd`; on failure returns the command line and its output.
pub(crate) fn run_checked(cmd: &mut Command) -> Result<(), String> {
    let shown = format!("{cmd:?}");
    match cmd.output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "command failed ({}): {shown}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )),
        Err(e) => Err(format!("cannot run {shown}: {e}")),
    }
}

/// The C++ compiler: `$CXX` or `c++`.
pub(crate) fn cxx() -> OsString {
    std::env::var_os("CXX").filter(|v| !v.is_empty()).unwrap_or_else(|| "c++".into())
}

/// The C compiler: `$CC` or `cc`.
pub(crate) fn cc() -> OsString {
    std::env::var_os("CC").filter(|v| !v.is_empty()).unwrap_or_else(|| "cc".into())
}

/// Flags every simulator library is compiled with.
const SIM_CXXFLAGS: &[&str] =
    &["-std=c++17", "-fPIC", "-shared", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-pthread"];

/// One simulator library: output name, soname, sources (in sim/src), extra link arguments.
struct SimLib {
    file: &'static str,
    sources: &'static [&'static str],
    link: &'static [&'static str],
}

const SIM_LIBS: &[SimLib] = &[
    // the driver's HAL library: the stand-in exports securec.h's functions, as programs that
    // link -lascend_hal (the vendor's samples do) take them from there, the driver's
    // halHostRegister/halHostUnregister (forwarding to the simulated driver in libacl_rt.so) and
    // halSupportFeature. Built first: as the vendor's runtime links the driver's library,
    // libacl_rt.so links this one (the runtime asks halSupportFeature through it).
    SimLib { file: "libascend_hal.so", sources: &["securec.cpp", "standins/hal_host_reg.cpp"], link: &[] },
    SimLib {
        file: "libacl_rt.so",
        sources: &[
            "acl_common.cpp",
            "acl_rt.cpp",
            "acl_memory.cpp",
            "acl_host_reg.cpp",
            "acl_vmm.cpp",
            "acl_extra.cpp",
            "acl_stream.cpp",
            "acl_share.cpp",
            "acl_impl_aliases.cpp",
        ],
        // like the vendor's: calls inside libacl_rt.so to its own exports are not interposable;
        // the driver's library needed even though it is referenced weakly only
        link: &[
            "-Wl,-Bsymbolic",
            "-Wl,--push-state,--no-as-needed",
            "-lascend_hal",
            "-Wl,--pop-state",
            "-Wl,-rpath,$ORIGIN",
        ],
    },
    SimLib { file: "libascendcl.so", sources: &["ascendcl_stubs.cpp"], link: &["-lacl_rt", "-Wl,-rpath,$ORIGIN"] },
    SimLib {
        file: "libcann_hixl.so",
        sources: &[
            "hixl.cpp",
            "hixl_engine.cpp",
            "hixl_options.cpp",
            "hixl_net.cpp",
            "hixl_common.cpp",
            "hixl_cs.cpp",
            "hixl_host_reg.cpp",
            "hixl_log.cpp",
            "ascend_string.cpp",
            // hixl::FabricMemTransferService::MallocMem/FreeMem, which the vendor's benchmarks call
            "standins/fabric_mem_service.cpp",
        ],
        // -ldl: the comm engine dlopens libhcomm.so (HCCL's global memory), as the vendor's does
        link: &["-lascendcl", "-ldl", "-Wl,-rpath,$ORIGIN"],
    },
    // ADXL: adxl::AdxlEngine, a front end over libcann_hixl.so's engines (as the vendor's links
    // cann_hixl)
    SimLib {
        file: "libllm_datadist.so",
        sources: &["adxl.cpp", "llm_datadist.cpp"],
        link: &["-lcann_hixl", "-lascendcl", "-ldl", "-Wl,-rpath,$ORIGIN"],
    },
    // simulator-only: the C functions the simulator's Python package `llm_datadist`
    // (sim/python) calls with ctypes, each calling a public llm_datadist::LlmDataDist member
    // through the PLT (so an interposer sees them)
    SimLib {
        file: "libllm_datadist_py.so",
        sources: &["llm_datadist_py.cpp"],
        link: &["-lllm_datadist", "-lcann_hixl", "-Wl,-rpath,$ORIGIN"],
    },
    // Stand-ins for the other vendor libraries that programs link beside ACL and HIXL
    // (sim/src/standins; docs/third-party.md): the runtime's rtPointerGetAttributes
    // (runtime/mem.h), HCCL's hccl::MemMappingManager, the log library (dlog_pub.h and
    // base/err_msg.h), and libraries linked by name only (securec's libc_sec.so, metadef's
    // ge::AscendString).
    SimLib { file: "libruntime.so", sources: &["standins/runtime_mem.cpp"], link: &["-lacl_rt", "-Wl,-rpath,$ORIGIN"] },
    SimLib { file: "libhccl.so", sources: &["standins/hccl_mem_mapping.cpp"], link: &[] },
    // HCCL's global-memory registration, which LLM-DataDist's comm backend dlopens
    SimLib {
        file: "libhcomm.so",
        sources: &["standins/hcomm_global_mem.cpp"],
        link: &["-lacl_rt", "-Wl,-rpath,$ORIGIN"],
    },
    SimLib { file: "libascendalog.so", sources: &["standins/alog.cpp"], link: &[] },
    SimLib { file: "libc_sec.so", sources: &["securec.cpp"], link: &[] },
    SimLib { file: "libmetadef.so", sources: &["ascend_string.cpp"], link: &[] },
];

/// The file names of every simulator library, in build order (what `cargo xtask install` ships).
pub fn sim_lib_files() -> Vec<&'static str> {
    SIM_LIBS.iter().map(|lib| lib.file).collect()
}

/// What the sanitizer builds add to every compile and link (the simulator's and the test
/// programs'): AddressSanitizer and UndefinedBehaviorSanitizer, any UB finding fatal.
pub const SANITIZE_FLAGS: &[&str] =
    &["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer"];

/// The AddressSanitizer runtime of the C compiler (`cc -print-file-name=libasan.so`): a
/// program built with [`SANITIZE_FLAGS`] and run with `LD_PRELOAD` must preload it first.
pub fn asan_runtime() -> PathBuf {
    let out = Command::new(cc()).arg("-print-file-name=libasan.so").output().expect("run the C compiler");
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(path.is_absolute() && path.exists(), "the C compiler has no libasan.so ({})", path.display());
    path
}

/// The recipe, recorded beside the outputs so that a change of flags forces a rebuild.
fn sim_recipe(extra: &[&str]) -> String {
    let mut s = format!("cxx={:?} flags={:?} -include portable.h {:?}\n", cxx(), SIM_CXXFLAGS, extra);
    for lib in SIM_LIBS {
        s += &format!("{} {:?} {:?}\n", lib.file, lib.sources, lib.link);
    }
    s
}

/// Builds the simulator libraries (when a source or header is newer than an output, an
/// output is missing, or the recipe changed) into `<target>/sim/lib`, and returns that
/// directory.
///
/// Safe to call from many threads (built once per process) and many processes at once
/// (an `flock` on `<target>/sim/.lock` serialises the builds; outputs are replaced by
/// atomic renames, so a running program never sees a half-written library).
///
/// # Panics
/// When the compiler fails, with its command line and output.
pub fn sim_lib_dir() -> PathBuf {
    // The result (or the failure) is kept, so a failed build is not retried by every caller.
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match DIR.get_or_init(|| build_sim("sim", &[])) {
        Ok(dir) => dir.clone(),
        Err(msg) => panic!("building the simulator failed:\n{msg}"),
    }
}

/// The CANN releases the simulator has an install root for: the default root (what
/// [`sim_lib_dir`] builds, and `cargo xtask install` puts in `lib/regcheck/sim`) is the first,
/// 9.1.0, the release users run; the others are built by [`sim_lib_dir_release`] (installed in
/// `lib/regcheck/sim/<release>`). A root's release is the default of `ACLSIM_CANN_VERSION`, and
/// decides what its libraries export: the 9.1.0 root's `libllm_datadist.so` has no
/// `adxl::AdxlEngine::ExportToShareableHandle` (hicann/hixl 6d1c2b6, after 9.1.0), the 9.2.0
/// root's has (sim/README.md, "Release profiles").
pub const SIM_RELEASES: &[&str] = &["9.1.0", "9.2.0"];

/// What the simulator of a release other than the default is compiled with.
fn release_flags(release: &str) -> &'static [&'static str] {
    match release {
        "9.2.0" => &["-DACLSIM_ROOT_RELEASE_9_2=1"],
        _ => panic!("the simulator has no {release} install root (releases: {SIM_RELEASES:?})"),
    }
}

/// [`sim_lib_dir`] for a release of [`SIM_RELEASES`]: the default root for 9.1.0, else the
/// simulator built as that release in `<target>/sim-<release>/lib`.
///
/// # Panics
/// For a release not in [`SIM_RELEASES`], or when the compiler fails.
pub fn sim_lib_dir_release(release: &str) -> PathBuf {
    if release == SIM_RELEASES[0] {
        return sim_lib_dir();
    }
    static DIRS: OnceLock<std::sync::Mutex<std::collections::BTreeMap<String, Result<PathBuf, String>>>> =
        OnceLock::new();
    let dirs = DIRS.get_or_init(Default::default);
    let mut dirs = dirs.lock().unwrap_or_else(|e| e.into_inner());
    let got = dirs
        .entry(release.to_string())
        .or_insert_with(|| build_sim(&format!("sim-{release}"), release_flags(release)))
        .clone();
    match got {
        Ok(dir) => dir,
        Err(msg) => panic!("building the {release} simulator failed:\n{msg}"),
    }
}

/// [`sim_lib_dir`] for the simulator built with [`SANITIZE_FLAGS`], in `<target>/sim-asan/lib`.
pub fn sim_lib_dir_sanitized() -> PathBuf {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match DIR.get_or_init(|| build_sim("sim-asan", SANITIZE_FLAGS)) {
        Ok(dir) => dir.clone(),
        Err(msg) => panic!("building the sanitized simulator failed:\n{msg}"),
    }
}

fn build_sim(name: &str, extra: &[&str]) -> Result<PathBuf, String> {
    let sim_dir = target_dir().join(name);
    let out = sim_dir.join("lib");
    let _lock = FileLock::acquire(&sim_dir.join(".lock"));
    fs::create_dir_all(&out).unwrap_or_else(|e| panic!("cannot create {}: {e}", out.display()));

    let recipe = sim_recipe(extra);
    let recipe_file = out.join(".recipe");
    let newest_src = newest_under(&sim_src_dir()).max(newest_under(&sim_include_dir()));
    let up_to_date = fs::read_to_string(&recipe_file).ok().as_deref() == Some(recipe.as_str())
        && SIM_LIBS.iter().all(|lib| {
            let t = mtime(&out.join(lib.file));
            t.is_some() && t >= newest_src
        });
    if up_to_date {
        return Ok(out);
    }

    let tmp = sim_dir.join(format!("tmp-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).unwrap_or_else(|e| panic!("cannot create {}: {e}", tmp.display()));
    for lib in SIM_LIBS {
        let mut cmd = Command::new(cxx());
        cmd.args(SIM_CXXFLAGS)
            .args(extra)
            .arg("-include")
            .arg(sim_src_dir().join("portable.h"))
            .arg("-I")
            .arg(sim_include_dir())
            .arg(format!("-Wl,-soname,{}", lib.file))
            .arg("-o")
            .arg(tmp.join(lib.file));
        for src in lib.sources {
            cmd.arg(sim_src_dir().join(src));
        }
        cmd.arg("-L").arg(&tmp).args(lib.link);
        if let Err(msg) = run_checked(&mut cmd) {
            let _ = fs::remove_dir_all(&tmp);
            return Err(msg);
        }
    }
    for lib in SIM_LIBS {
        fs::rename(tmp.join(lib.file), out.join(lib.file))
            .unwrap_or_else(|e| panic!("cannot move {} into {}: {e}", lib.file, out.display()));
    }
    let _ = fs::remove_dir_all(&tmp);
    fs::write(&recipe_file, recipe).unwrap_or_else(|e| panic!("cannot write {}: {e}", recipe_file.display()));
    Ok(out)
}

/// Paths of a release build of regcheck (see [`regcheck`]).
#[derive(Clone, Debug)]
pub struct Regcheck {
    /// `<target>/release`: the directory holding the libraries (for `-L` and rpath).
    pub lib_dir: PathBuf,
    /// `<target>/release/libregcheck.so` (cdylib): for `LD_PRELOAD` or `-lregcheck`.
    pub shared: PathBuf,
    /// `<target>/release/libregcheck.a` (staticlib).
    pub static_lib: PathBuf,
    /// `<target>/release/libregcheck_audit.so`: the LD_AUDIT module (its expected path, even when the
    /// `regcheck-audit` package does not exist yet).
    pub audit: PathBuf,
    /// `<target>/release/regcheck-run`: the launcher (its expected path, even when the
    /// `regcheck-cli` package does not exist).
    pub runner: PathBuf,
    /// `<target>/release/regcheck`: the command (its expected path, even when the
    /// `regcheck-cli` package does not exist).
    pub cli: PathBuf,
}

/// Runs `cargo build --release -p regcheck -p regcheck-audit` once per process (without
/// `-p regcheck-audit` when the workspace has no such package) and returns the paths of the
/// results under `<target>/release`.
///
/// # Panics
/// When cargo fails, with its output.
pub fn regcheck() -> Regcheck {
    static RC: OnceLock<Result<Regcheck, String>> = OnceLock::new();
    match RC.get_or_init(build_regcheck) {
        Ok(rc) => rc.clone(),
        Err(msg) => panic!("building regcheck failed:\n{msg}"),
    }
}

fn cargo() -> OsString {
    std::env::var_os("CARGO").filter(|v| !v.is_empty()).unwrap_or_else(|| "cargo".into())
}

fn workspace_has_package(name: &str) -> bool {
    let out = Command::new(cargo())
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(workspace_root())
        .output();
    match out {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            text.contains(&format!("\"name\":\"{name}\""))
        }
        _ => false,
    }
}

/// Where cargo puts a release build: `<target>/release`, or `<target>/<triple>/release` when
/// cross-building (see [`crate::emulator`]).
pub fn release_dir() -> PathBuf {
    match crate::emulator::cross_target() {
        Some(triple) => target_dir().join(triple).join("release"),
        None => target_dir().join("release"),
    }
}

fn build_regcheck() -> Result<Regcheck, String> {
    let root = workspace_root();
    let mut cmd = Command::new(cargo());
    cmd.current_dir(&root).args(["build", "--release", "-p", "regcheck"]).env("CARGO_TARGET_DIR", target_dir());
    if let Some(triple) = crate::emulator::cross_target() {
        cmd.args(["--target", &triple]);
    }
    for extra in ["regcheck-audit", "regcheck-cli"] {
        if workspace_has_package(extra) {
            cmd.args(["-p", extra]);
        }
    }
    run_checked(&mut cmd)?;
    // The build itself puts the SONAME link (`libregcheck.so.0.<minor>`) beside the library.
    let lib_dir = release_dir();
    Ok(Regcheck {
        shared: lib_dir.join("libregcheck.so"),
        static_lib: lib_dir.join("libregcheck.a"),
        audit: lib_dir.join("libregcheck_audit.so"),
        runner: lib_dir.join("regcheck-run"),
        cli: lib_dir.join("regcheck"),
        lib_dir,
    })
}
