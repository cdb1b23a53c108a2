//! `regcheck doctor [--json]`: what regcheck detects on this machine, with the library's own
//! probes and settings parser, and what follows from it. Problems come with their fix; the
//! exit status is 1 when there is any.

use std::ffi::{c_void, CStr, CString};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use regcheck::config::{Config, Mode, VARIABLES};
use regcheck::platform::hdk::HdkVersion;
use regcheck::platform::kernel::KernelVersion;
use regcheck::platform::release;
use regcheck::platform::{memlock, memmap};
use regcheck::rules::acl::KernelFacts;
use regcheck::rules::products::{self, HostRegSupport};
use regcheck::vendor::{install_roots, lib_dirs, Library};
use serde::Serialize;

#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Do not load the vendor's ACL library to ask it for the SoC name.
    #[arg(long)]
    pub no_vendor: bool,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub regcheck_version: &'static str,
    pub kernel: Kernel,
    pub page_size: usize,
    /// The PROCMAP_QUERY ioctl (Linux 6.11+): one system call per mapping instead of reading
    /// /proc/self/maps.
    pub procmap_query: bool,
    pub memlock: Memlock,
    pub driver: Driver,
    pub profile: Profile,
    pub soc: Soc,
    pub vendor_libraries: Vec<VendorLibrary>,
    pub settings: Settings,
    pub problems: Vec<Problem>,
    pub notes: Vec<String>,
    /// The simulator of the vendor libraries installed with this command (its prefix or wheel).
    pub simulator: Option<Simulator>,
    /// The ACL library regcheck would forward to in a program that links it by name.
    pub acl_in_use: Option<AclInUse>,
    /// The installed guide (README.md, docs/), when this command is installed.
    pub docs: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Simulator {
    pub dir: String,
}

#[derive(Debug, Serialize)]
pub struct AclInUse {
    pub path: String,
    /// How it was found (as in `vendor_libraries`).
    pub how: String,
    /// It is the simulator installed with this command (the same file), not CANN.
    pub simulator: bool,
}

#[derive(Debug, Serialize)]
pub struct Kernel {
    pub release: String,
    /// `uname` or `REGCHECK_KERNEL_RELEASE`.
    pub source: &'static str,
    /// `REGCHECK_PAGEABLE_KERNEL_MAX` (default 5.10).
    pub pageable_kernel_max: String,
    /// Host registration needs page-locked memory (aclrtMallocHost, mlock) on this kernel.
    pub page_locked_required: bool,
}

#[derive(Debug, Serialize)]
pub struct Memlock {
    /// The soft RLIMIT_MEMLOCK in bytes; null when unlimited.
    pub limit_bytes: Option<u64>,
    pub cap_ipc_lock: bool,
    /// VmLck: bytes locked by this process now.
    pub locked_bytes: u64,
}

#[derive(Debug, Serialize)]
pub struct Driver {
    pub version: Option<String>,
    pub known: bool,
    /// `REGCHECK_HDK_VERSION`, the version.info path read, or why it is unknown.
    pub source: String,
}

/// The CANN release profile regcheck keys its release-dependent expectations on.
#[derive(Debug, Serialize)]
pub struct Profile {
    /// The release the expectations follow (`9.1.0`, ...).
    pub release: String,
    /// Read (`true`) or assumed (`false`: nothing answered; 9.1.0, the release users run).
    pub known: bool,
    /// `REGCHECK_CANN_VERSION`, the vendor's `aclsysGetVersionStr("runtime")`, a version file,
    /// or why it is assumed.
    pub source: String,
    /// The host-registration path: `tables`, `driver` or `unknown`.
    pub registration_path: &'static str,
    /// The driver's pinned-register feature (`FEATURE_SVM_MEM_REGISTER_HOST_PINNED`, which a
    /// runtime after 9.1 asks to choose the path): `null` when not asked.
    pub pin_register_feature: Option<bool>,
    /// Where that answer came from: `driver` (halSupportFeature answered), `driver-lacks-query`
    /// (no halSupportFeature: off, as for the runtime) or `not-asked`.
    pub pin_register_from: &'static str,
    /// The same in words: the call made, or why none was.
    pub pin_register_detail: String,
    /// The whole of it in one line, as the library logs it.
    pub describe: String,
}

#[derive(Debug, Serialize)]
pub struct Soc {
    pub name: Option<String>,
    /// `REGCHECK_SOC_NAME`, `aclrtGetSocName()`, or why it is unknown.
    pub source: String,
    pub family: Option<String>,
    /// `supported`, `unsupported`, `conflict` (sources disagree: allowed) or `unknown`.
    pub host_registration: &'static str,
}

#[derive(Debug, Serialize)]
pub struct VendorLibrary {
    /// `acl` or `hixl`.
    pub library: &'static str,
    pub file: String,
    /// Where it is: a path, or null when not found this way.
    pub path: Option<String>,
    /// How it was looked for: `REGCHECK_ACL_LIB`, `dynamic linker`, `install root <dir>`.
    pub how: String,
}

#[derive(Debug, Serialize)]
pub struct Settings {
    pub mode: &'static str,
    /// Every REGCHECK_* variable regcheck reads: its value in the environment (null when
    /// unset) and the value in effect.
    pub variables: Vec<Variable>,
    /// Misspelt names and invalid values (each is also a problem).
    pub warnings: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Variable {
    pub name: &'static str,
    pub set: Option<String>,
    pub effective: String,
}

#[derive(Debug, Serialize)]
pub struct Problem {
    pub what: String,
    pub fix: String,
}

fn effective(c: &Config, name: &str) -> String {
    let opt = |v: &Option<String>, none: &str| v.clone().unwrap_or_else(|| none.to_string());
    match name {
        "REGCHECK_MODE" => c.mode.as_str().into(),
        "REGCHECK_RULES" => {
            if c.rule_overrides.is_empty() {
                "(defaults)".into()
            } else {
                c.rule_overrides.iter().map(|(r, a)| format!("{r}={a}")).collect::<Vec<_>>().join(",")
            }
        }
        "REGCHECK_LOG" => c.log_filter.clone(),
        "REGCHECK_LOG_FILE" => opt(&c.log_file, "(stderr)"),
        "REGCHECK_LOG_FORMAT" => c.log_format.as_str().into(),
        "REGCHECK_STACK" => c.stack.to_string(),
        "REGCHECK_KERNEL_RELEASE" => opt(&c.kernel_release, "(uname)"),
        "REGCHECK_PAGEABLE_KERNEL_MAX" => {
            KernelFacts { release: String::new(), version: None, pageable_max: c.pageable_kernel_max }.threshold_text()
        }
        "REGCHECK_SOC_NAME" => opt(&c.soc_name, "(aclrtGetSocName)"),
        "REGCHECK_HDK_VERSION" => opt(&c.hdk_version, "(version.info)"),
        "REGCHECK_CANN_VERSION" => opt(&c.cann_version, "(the runtime's version)"),
        "REGCHECK_ACL_LIB" => opt(&c.acl_lib, "(search)"),
        "REGCHECK_HIXL_LIB" => opt(&c.hixl_lib, "(search)"),
        "REGCHECK_ADXL_LIB" => opt(&c.adxl_lib, "(search)"),
        "REGCHECK_LARGE_BYTES" => c.large_bytes.to_string(),
        "REGCHECK_HIXL_MAX_REGS" => c.hixl_max_regs.to_string(),
        "REGCHECK_MAX_REPEATS" => c.max_repeats.to_string(),
        "REGCHECK_SUMMARY" => (match c.summary {
            Some(true) => "1",
            Some(false) => "0",
            None => "auto",
        })
        .into(),
        "REGCHECK_ERROR_EXITCODE" => c.error_exitcode.map_or("(off)".into(), |n| n.to_string()),
        "REGCHECK_SUPPRESSIONS" if c.suppressions.is_empty() => "(none)".into(),
        "REGCHECK_SUPPRESSIONS" => c.suppressions.join(":"),
        "REGCHECK_GEN_SUPPRESSIONS" => (if c.gen_suppressions { "1" } else { "0" }).into(),
        _ => "-".into(),
    }
}

/// The path of the object defining `addr`.
fn object_path(addr: *mut c_void) -> Option<String> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr reads the loader's tables; info is a valid out-pointer.
    if addr.is_null() || unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: the loader's NUL-terminated file name.
    Some(unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned())
}

/// `dlopen` a library (by name: the dynamic linker's search; by path: that file) and return
/// the path it came from, found through one of its symbols.
fn open(what: &str, symbol: &CStr, global: bool) -> Result<String, String> {
    let c = CString::new(what).map_err(|e| e.to_string())?;
    let flags = libc::RTLD_NOW | if global { libc::RTLD_GLOBAL } else { libc::RTLD_LOCAL };
    // SAFETY: a NUL-terminated name; the handle is kept for the life of the process.
    let h = unsafe { libc::dlopen(c.as_ptr(), flags) };
    if h.is_null() {
        // SAFETY: dlerror returns NULL or a NUL-terminated message.
        let e = unsafe { libc::dlerror() };
        let msg = if e.is_null() {
            "cannot be loaded".to_string()
        } else {
            unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
        };
        return Err(msg);
    }
    // SAFETY: a valid handle and a NUL-terminated name.
    let f = unsafe { libc::dlsym(h, symbol.as_ptr()) };
    object_path(f).ok_or_else(|| format!("{what} defines no {}", symbol.to_string_lossy()))
}

struct Found {
    libs: Vec<VendorLibrary>,
    /// The first ACL library a check would reach, loaded into this process.
    acl_loaded: bool,
}

fn find_vendor(c: &Config, load: bool, problems: &mut Vec<Problem>, notes: &mut Vec<String>) -> Found {
    let mut libs = Vec::new();
    let mut acl_loaded = false;
    for (lib, key, var, symbol, setting) in [
        (Library::Acl, "acl", "REGCHECK_ACL_LIB", c"aclrtGetSocName", &c.acl_lib),
        (Library::Hixl, "hixl", "REGCHECK_HIXL_LIB", c"HixlCSServerCreate", &c.hixl_lib),
        (Library::Adxl, "adxl", "REGCHECK_ADXL_LIB", c"_ZN4adxl10AdxlEngineC1Ev", &c.adxl_lib),
    ] {
        let before = libs.len();
        for file in lib.file_names() {
            // What a program linked with -l<name> gets: the dynamic linker's search.
            if let Ok(p) = open(file, symbol, false) {
                libs.push(VendorLibrary {
                    library: key,
                    file: file.to_string(),
                    path: Some(p),
                    how: "dynamic linker".into(),
                });
            }
            for root in install_roots() {
                for dir in lib_dirs(&root) {
                    let path = dir.join(file);
                    if path.is_file() {
                        libs.push(VendorLibrary {
                            library: key,
                            file: file.to_string(),
                            path: Some(path.display().to_string()),
                            how: format!("install root {}", root.display()),
                        });
                    }
                }
            }
        }
        if let Some(path) = setting {
            match open(path, symbol, false) {
                Ok(p) => libs.push(VendorLibrary { library: key, file: path.clone(), path: Some(p), how: var.into() }),
                Err(e) => problems.push(Problem {
                    what: format!("{var}={path} cannot be used: {e}"),
                    fix: format!("point {var} at the vendor's {}", lib.file_names().join(" or ")),
                }),
            }
        }
        if lib == Library::Acl && load {
            // Make the first one visible to regcheck's own look-up of aclrtGetSocName.
            acl_loaded = libs[before..].iter().filter_map(|l| l.path.as_deref()).any(|p| open(p, symbol, true).is_ok());
        }
        if libs.len() == before {
            let names = lib.file_names().join(" or ");
            match lib {
                Library::Acl => problems.push(Problem {
                    what: format!(
                        "no vendor ACL runtime ({names}) found: under regcheck every checked ACL call would return 200001 (ACL_ERROR_API_NOT_SUPPORT)"
                    ),
                    fix: format!(
                        "source the CANN set_env.sh (or add its lib64 to LD_LIBRARY_PATH), or set {var}=/path/to/libascendcl.so"
                    ),
                }),
                Library::Hixl => notes.push(format!(
                    "no {names} found (only HIXL applications need it; set {var} if yours is elsewhere)"
                )),
                Library::Adxl => notes.push(format!(
                    "no {names} found (only ADXL applications, such as Mooncake's Ascend transport, need it; set {var} if yours is elsewhere)"
                )),
                // not searched: the doctor's list above names the libraries it looks for
                Library::Hccl => {}
            }
        }
    }
    Found { libs, acl_loaded }
}

/// Gather the report (no output).
pub fn examine(load_vendor: bool) -> Report {
    let vars: Vec<(String, String)> =
        std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect();
    let (config, warnings) = Config::from_vars(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let mut problems: Vec<Problem> = warnings
        .iter()
        .map(|w| Problem {
            what: w.clone(),
            fix: format!(
                "correct the variable or unset it (\"Environment variables\" in {} lists every one)",
                crate::docs::page("usage.md")
            ),
        })
        .collect();
    let mut notes = Vec::new();

    // Kernel
    let (release, source) = match &config.kernel_release {
        Some(r) => (r.clone(), "REGCHECK_KERNEL_RELEASE"),
        None => (regcheck::platform::kernel::current_release().unwrap_or_default(), "uname"),
    };
    let facts = KernelFacts {
        version: KernelVersion::parse(&release),
        release: release.clone(),
        pageable_max: config.pageable_kernel_max,
    };
    if facts.version.is_none() {
        problems.push(Problem {
            what: format!(
                "kernel release {release:?} cannot be read as a version: ACL-HOSTREG-PAGEABLE-OLD-KERNEL cannot judge"
            ),
            fix: "set REGCHECK_KERNEL_RELEASE to the kernel's version (e.g. 5.10.0)".into(),
        });
    } else if facts.needs_page_locked() {
        notes.push(format!(
            "kernel {release} is at or below {}: host memory must be page-locked (aclrtMallocHost, or mlock) before it is registered; regcheck rejects pageable memory (ACL-HOSTREG-PAGEABLE-OLD-KERNEL)",
            facts.threshold_text()
        ));
    }
    let kernel = Kernel {
        release,
        source,
        pageable_kernel_max: facts.threshold_text(),
        page_locked_required: facts.needs_page_locked(),
    };

    // Locked memory
    let ml = memlock::probe();
    if !ml.cap_ipc_lock {
        if let Some(limit) = ml.limit {
            let text = format!(
                "RLIMIT_MEMLOCK is {limit} bytes and the process lacks CAP_IPC_LOCK: ACL_HOST_REG_PINNED registrations (and aclrtMallocHost's locking) beyond it fail"
            );
            if limit < 64 << 20 {
                problems.push(Problem {
                    what: text,
                    fix: "raise the limit (ulimit -l unlimited; in a container --ulimit memlock=-1) or grant CAP_IPC_LOCK".into(),
                });
            } else {
                notes.push(text);
            }
        }
    }
    let memlock = Memlock { limit_bytes: ml.limit, cap_ipc_lock: ml.cap_ipc_lock, locked_bytes: ml.locked_now };

    // Vendor libraries, then the SoC (asked of the vendor's library when one is reachable)
    let found = find_vendor(&config, load_vendor, &mut problems, &mut notes);
    let simulator = simulator_dir();
    let acl_in_use = acl_in_use(&found.libs, simulator.as_deref());
    explain_simulator(simulator.as_deref(), acl_in_use.as_ref(), &mut problems, &mut notes);
    // Driver: the library's own answer (the setting, version.info, else the vendor's
    // aclsysGetVersionStr, which needs the vendor library loaded above)
    let facts = regcheck::state::driver_facts(&config);
    let driver = Driver { known: facts.version.is_some(), version: facts.text, source: facts.source };
    match driver.version.as_deref().and_then(HdkVersion::parse) {
        Some(v) if v < HdkVersion::parse("24.1.rc1").unwrap_or(v) => problems.push(Problem {
            what: format!("driver (HDK) {} is older than 24.1: host registration needs 24.1 or later", driver.version.as_deref().unwrap_or("")),
            fix: "install driver 24.1 or later (25.x recommended)".into(),
        }),
        Some(_) => {}
        None => notes.push(
            "driver (HDK) version unknown: HIXL-REG-HOST-CAP assumes the 20 GiB cap of drivers before 25.5.0; set REGCHECK_HDK_VERSION to override".into(),
        ),
    }

    // The release profile: the library's own answer (the setting, the vendor's
    // aclsysGetVersionStr("runtime"), the runtime's version.info, else assumed)
    let p = regcheck::state::release_profile(&config);
    // The driver's pinned-register feature, asked as the library asks it (device 0 here: the
    // library asks with the device of the first registration that needs it).
    let pin = if !p.is_known() {
        Err("the CANN release is unknown".to_string())
    } else if !p.release.after_9_1() {
        Err(format!("CANN {} never asks the driver (the runtime's tables)", p.release))
    } else if !load_vendor {
        Err("--no-vendor".to_string())
    } else if !found.acl_loaded {
        Err("no vendor ACL library reachable".to_string())
    } else {
        regcheck::state::queries::pin_register_feature(0)
            .ok_or_else(|| "the vendor's ACL library cannot be found".to_string())
    };
    let path = release::reg_path(p.is_known().then_some(p.release), pin.as_ref().ok().map(|f| f.on()));
    let profile = Profile {
        release: p.release.to_string(),
        known: p.is_known(),
        source: match &p.source {
            release::Source::Override => "REGCHECK_CANN_VERSION".into(),
            release::Source::Vendor => "aclsysGetVersionStr(\"runtime\")".into(),
            release::Source::File(f) => f.display().to_string(),
            release::Source::Assumed(why) => format!("assumed: {why}"),
        },
        registration_path: match path {
            release::RegPath::Tables => "tables",
            release::RegPath::Driver => "driver",
            release::RegPath::Unknown => "unknown",
        },
        pin_register_feature: pin.as_ref().ok().map(|f| f.on()),
        pin_register_from: match &pin {
            Ok(regcheck::state::queries::PinFeature::Asked { .. }) => "driver",
            Ok(regcheck::state::queries::PinFeature::NoQuery) => "driver-lacks-query",
            Err(_) => "not-asked",
        },
        pin_register_detail: match &pin {
            Ok(f) => f.describe(),
            Err(why) => format!("not asked: {why}"),
        },
        describe: release::Profile { pin_feature: pin.as_ref().ok().map(|f| f.on()), ..p.clone() }.describe(),
    };
    if !p.is_known() {
        notes.push(format!(
            "the CANN release is unknown: regcheck assumes {} (the release users run) and refuses nothing that depends on the release's registration path; set REGCHECK_CANN_VERSION",
            p.release
        ));
    } else if path == release::RegPath::Unknown {
        notes.push(format!(
            "CANN {} asks the driver for its pinned-register feature, which regcheck could not ask here ({}): what depends on the registration path is only warned",
            p.release,
            pin.as_ref().err().map_or("", String::as_str)
        ));
    }

    let (soc_name, soc_source) = match &config.soc_name {
        Some(s) => (Some(s.clone()), "REGCHECK_SOC_NAME".to_string()),
        None if !load_vendor => (None, "not asked (--no-vendor)".to_string()),
        None if !found.acl_loaded => (None, "no vendor ACL library reachable".to_string()),
        None => match regcheck::state::queries::soc_name() {
            Some(s) => (Some(s), "aclrtGetSocName()".to_string()),
            None => (None, "aclrtGetSocName() gave no name".to_string()),
        },
    };
    if soc_name.is_none() && found.acl_loaded {
        notes.push(format!(
            "the SoC is unknown ({soc_source}): ACL-HOSTREG-PRODUCT and the HIXL product rules are skipped; set REGCHECK_SOC_NAME"
        ));
    }
    let product = soc_name.as_deref().and_then(products::lookup);
    let host_registration = match (&soc_name, product.map(|p| p.host_register)) {
        (None, _) | (Some(_), None) => "unknown",
        (_, Some(HostRegSupport::Supported)) => "supported",
        (_, Some(HostRegSupport::Conflict(_))) => "conflict",
        (_, Some(HostRegSupport::DocumentedUnsupported(_))) => "documented unsupported",
        (_, Some(HostRegSupport::Unsupported)) => "unsupported",
    };
    if let Some(HostRegSupport::DocumentedUnsupported(why)) = product.map(|p| p.host_register) {
        notes.push(format!("ACL-HOSTREG-PRODUCT warns on this SoC: {why}"));
    }
    if host_registration == "unsupported" {
        problems.push(Problem {
            what: format!(
                "SoC {} ({}) does not support host memory registration: every aclrtHostRegister* call is rejected (ACL-HOSTREG-PRODUCT)",
                soc_name.as_deref().unwrap_or(""),
                product.map_or("?", |p| p.display)
            ),
            fix: "run on Atlas A2/A3 or Ascend 950, or copy through aclrtMemcpy instead of registering host memory".into(),
        });
    }
    if let (Some(s), None) = (&soc_name, product) {
        notes.push(format!("SoC {s:?} is not in regcheck's product table: ACL-HOSTREG-PRODUCT allows it"));
    }
    let soc =
        Soc { family: product.map(|p| p.display.to_string()), name: soc_name, source: soc_source, host_registration };

    // Settings
    if config.mode == Mode::Off {
        notes.push("REGCHECK_MODE=off: regcheck checks nothing".into());
    }
    if let Some(path) = &config.log_file {
        if let Err(e) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
            problems.push(Problem {
                what: format!("REGCHECK_LOG_FILE={path} cannot be opened for appending ({e}): the log goes to stderr"),
                fix: "point REGCHECK_LOG_FILE at a writable file".into(),
            });
        }
    }
    let variables = VARIABLES
        .iter()
        .map(|(name, _)| Variable {
            name,
            set: vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
            effective: effective(&config, name),
        })
        .collect();
    let settings = Settings { mode: config.mode.as_str(), variables, warnings };

    Report {
        regcheck_version: env!("CARGO_PKG_VERSION"),
        kernel,
        page_size: regcheck::platform::page_size(),
        procmap_query: memmap::procmap_query_available(),
        memlock,
        driver,
        profile,
        soc,
        vendor_libraries: found.libs,
        settings,
        problems,
        notes,
        simulator: simulator.map(|d| Simulator { dir: d.display().to_string() }),
        acl_in_use,
        docs: crate::docs::doc_dir().map(|d| d.display().to_string()),
    }
}

/// The simulator installed with this command: `<this program's dir>/../lib/regcheck/sim`, as
/// `cargo xtask install` and the wheel lay it out, when it holds the simulated ACL library (the
/// default release's; the other releases' roots are directories in it, e.g. `9.2.0/`).
fn simulator_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?.join("../lib/regcheck/sim").canonicalize().ok()?;
    dir.join("libascendcl.so").is_file().then_some(dir)
}

/// The same file (device and inode), whatever its name or directory.
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The ACL library regcheck would forward to, in its own order: what a program linked by name
/// gets from the dynamic linker, else `REGCHECK_ACL_LIB`, else the vendor's install roots.
fn acl_in_use(libs: &[VendorLibrary], simulator: Option<&Path>) -> Option<AclInUse> {
    let acl = || libs.iter().filter(|l| l.library == "acl" && l.path.is_some());
    let first = acl()
        .find(|l| l.how == "dynamic linker")
        .or_else(|| acl().find(|l| l.how == "REGCHECK_ACL_LIB"))
        .or_else(|| acl().next())?;
    let path = first.path.clone()?;
    // the simulator's directory, and the roots of its other releases in it (`9.2.0/`)
    let files =
        |dir: &Path| std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).collect::<Vec<_>>();
    let is_sim = simulator.is_some_and(|dir| {
        files(dir).iter().any(|f| {
            same_file(f, Path::new(&path)) || (f.is_dir() && files(f).iter().any(|g| same_file(g, Path::new(&path))))
        })
    });
    Some(AclInUse { path, how: first.how.clone(), simulator: is_sim })
}

/// Says what the simulator means here: beside a missing vendor, how to use it or CANN; when it
/// is what regcheck would use, that it is not CANN and how to point regcheck at a real one.
fn explain_simulator(
    simulator: Option<&Path>,
    in_use: Option<&AclInUse>,
    problems: &mut [Problem],
    notes: &mut Vec<String>,
) {
    let Some(dir) = simulator else { return };
    let cann = "on a machine with CANN, source its set_env.sh (or add its lib64 to LD_LIBRARY_PATH), or set \
                REGCHECK_ACL_LIB=<CANN>/lib64/libascendcl.so";
    match in_use {
        None => {
            if let Some(p) = problems.iter_mut().find(|p| p.what.starts_with("no vendor ACL runtime")) {
                p.what.push_str(&format!(
                    "; regcheck's simulator of the vendor libraries is installed beside this command, in {} \
                     (not CANN: for CI and for trying regcheck without an NPU)",
                    dir.display()
                ));
                p.fix = format!(
                    "{cann}; or, to run against the simulator, LD_LIBRARY_PATH={} (or build with pkg-config \
                     regcheck-sim, CMake regcheck::sim)",
                    dir.display()
                );
            }
        }
        Some(acl) if acl.simulator => notes.push(format!(
            "the ACL library regcheck would use is regcheck's simulator ({}), not CANN: fine for CI; to check \
             against a real CANN, {cann}",
            acl.path
        )),
        Some(_) => notes.push(format!("regcheck's simulator is installed too, in {} (unused here)", dir.display())),
    }
}

/// The lines of the text report about the vendor in use, the simulator and the guide.
fn vendor_and_docs_lines(r: &Report) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    out.push((
        "ACL in use",
        match &r.acl_in_use {
            Some(a) if a.simulator => format!("{} ({}; regcheck's simulator, not CANN)", a.path, a.how),
            Some(a) => format!("{} ({})", a.path, a.how),
            None => "none: no ACL library found".into(),
        },
    ));
    if let Some(s) = &r.simulator {
        out.push(("simulator", format!("{} (regcheck's stand-in for CANN)", s.dir)));
    }
    out.push((
        "guide",
        match &r.docs {
            Some(d) => format!("{d} (every rule: {d}/docs/rules.md)"),
            None => "not installed (docs/ in regcheck's source)".into(),
        },
    ));
    out
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// The report as text.
pub fn text(r: &Report) -> String {
    let mut o = String::new();
    let mut line = |k: &str, v: String| o.push_str(&format!("  {k:<18} {v}\n"));
    line("regcheck", r.regcheck_version.to_string());
    line(
        "kernel",
        format!(
            "{} (from {}); pageable memory {} REGCHECK_PAGEABLE_KERNEL_MAX={})",
            r.kernel.release,
            r.kernel.source,
            if r.kernel.page_locked_required { "rejected (at or below" } else { "allowed (newer than" },
            r.kernel.pageable_kernel_max
        ),
    );
    line("page size", format!("{} bytes", r.page_size));
    line(
        "PROCMAP_QUERY",
        if r.procmap_query {
            "available (one ioctl per mapping)".into()
        } else {
            "not available (reads /proc/self/maps)".into()
        },
    );
    line(
        "RLIMIT_MEMLOCK",
        format!(
            "{}; CAP_IPC_LOCK {}; locked now {}",
            r.memlock.limit_bytes.map_or("unlimited".into(), bytes),
            if r.memlock.cap_ipc_lock { "held (no limit applies)" } else { "not held" },
            bytes(r.memlock.locked_bytes)
        ),
    );
    line(
        "driver (HDK)",
        match &r.driver.version {
            Some(v) => format!(
                "{v}{} (from {})",
                if r.driver.known { "" } else { " (not a version regcheck reads)" },
                r.driver.source
            ),
            None => format!("unknown: {}", r.driver.source),
        },
    );
    line(
        "CANN profile",
        format!(
            "{}{} (from {}); host registration path: {}; pinned-register feature: {} ({})",
            r.profile.release,
            if r.profile.known { "" } else { ", assumed" },
            r.profile.source,
            r.profile.registration_path,
            match r.profile.pin_register_feature {
                Some(true) => "on",
                Some(false) => "off",
                None => "unknown",
            },
            r.profile.pin_register_detail
        ),
    );
    line(
        "SoC",
        match &r.soc.name {
            Some(n) => format!(
                "{n} (from {}): {}, host registration {}",
                r.soc.source,
                r.soc.family.as_deref().unwrap_or("not in the product table"),
                r.soc.host_registration
            ),
            None => format!("unknown: {}", r.soc.source),
        },
    );
    if r.vendor_libraries.is_empty() {
        line("vendor libraries", "none found".into());
    }
    for (i, l) in r.vendor_libraries.iter().enumerate() {
        line(
            if i == 0 { "vendor libraries" } else { "" },
            match l.path.as_deref() {
                Some(p) if p == l.file => format!("{p} ({})", l.how),
                p => format!("{} -> {} ({})", l.file, p.unwrap_or("-"), l.how),
            },
        );
    }
    for (k, v) in vendor_and_docs_lines(r) {
        line(k, v);
    }
    line("mode", r.settings.mode.to_string());
    let set: Vec<&Variable> = r.settings.variables.iter().filter(|v| v.set.is_some()).collect();
    if set.is_empty() {
        line("settings", "no REGCHECK_* variable set: defaults".into());
    }
    for (i, v) in set.iter().enumerate() {
        line(
            if i == 0 { "settings" } else { "" },
            format!("{}={:?} -> {}", v.name, v.set.as_deref().unwrap_or(""), v.effective),
        );
    }
    let mut o = format!("regcheck doctor\n\n{o}");
    if !r.notes.is_empty() {
        o.push_str("\nnotes:\n");
        for n in &r.notes {
            o.push_str(&format!("  - {n}\n"));
        }
    }
    if r.problems.is_empty() {
        o.push_str("\nno problems found\n");
    } else {
        o.push_str(&format!("\n{} problem(s):\n", r.problems.len()));
        for p in &r.problems {
            o.push_str(&format!("  - {}\n    fix: {}\n", p.what, p.fix));
        }
    }
    o
}

/// `regcheck doctor`.
pub fn main(a: DoctorArgs) -> ExitCode {
    let r = examine(!a.no_vendor);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
    } else {
        print!("{}", text(&r));
    }
    if r.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
