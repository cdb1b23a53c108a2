//! Per-process state: the lazily created [`Runtime`] (configuration, rule actions, detected
//! environment) and the [`State`] of registrations and allocations behind one reader-writer
//! lock, sharded by thread. The hot look-ups read a [`snapshot`] of it instead, with no lock;
//! containment is answered by [`spans`] indexes in expected O(1), and a clean transfer's
//! ranges first by [`hints`], or by the vendor alone on the instances of [`vendor_first`]. [`rt_tables`] keeps the runtime's own registration tables as the
//! runtime does, on its runtime-table path.
//!
//! Nothing here runs at load time but [`install_fork_handlers`] (see `src/ffi/mod.rs`). The
//! lock is never held while the vendor runs, and a `pthread_atfork` handler makes sure a child
//! process starts with it usable and with the parent's registrations.

pub mod datadist;
pub mod hints;
pub mod hixl;
pub mod hixl_facts;
pub mod queries;
pub mod registry;
pub mod rt_tables;
pub mod snapshot;
pub mod spans;
pub mod vendor_first;

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard, OnceLock, PoisonError};

use crossbeam_utils::sync::{ShardedLock, ShardedLockWriteGuard};

use crate::config::{Config, Mode};
use crate::platform::atfork::AtFork;
use crate::platform::hdk::HdkVersion;
use crate::platform::kernel::{KernelFacts, KernelVersion};
use crate::rules::{Action, RuleId, CATALOGUE};
use registry::{AllocMap, HostRegistry, Unregistered};

/// Registrations and allocations regcheck has seen succeed.
#[derive(Debug, Default)]
pub struct State {
    pub host_regs: HostRegistry,
    /// The runtime's own registration tables, kept on its runtime-table path.
    pub rt_tables: rt_tables::RuntimeTables,
    /// Host registrations seen unregistered (for a double unregistration regcheck saw).
    pub host_unregs: Unregistered,
    /// Where each live host registration was made (for a later overlap's message).
    pub host_reg_sites: registry::Sites,
    /// `aclrtMallocHost` allocations.
    pub host_allocs: AllocMap<()>,
    /// `aclrtMalloc` allocations, with their policy.
    pub dev_allocs: AllocMap<u32>,
    /// `aclrtMallocPhysical` handles, with their properties.
    pub phys: std::collections::HashMap<usize, registry::VmmAttr>,
    /// `aclrtMapMem` mappings (device memory to HIXL), with their physical memory's properties.
    pub vmm_maps: AllocMap<registry::VmmAttr>,
    /// HIXL instances.
    pub hixl: hixl::HixlState,
    /// LLM-DataDist instances and HCCL global-memory registrations.
    pub datadist: datadist::DataDistState,
    /// `aclrtSetDevice` calls not yet matched by `aclrtResetDevice`, per device: the vendor
    /// resets a device (and drops its registrations) when the count reaches 0.
    pub device_refs: std::collections::HashMap<i32, u32>,
}

/// A reader-writer lock sharded by thread: a read locks only the calling thread's shard (its
/// own cache line), so look-ups on hot paths from many threads do not contend; a write locks
/// every shard.
static STATE: LazyLock<ShardedLock<State>> = LazyLock::new(|| ShardedLock::new(State::default()));

/// Run `f` with the state locked for writing. Never call the vendor inside `f`.
pub fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut guard = STATE.write().unwrap_or_else(PoisonError::into_inner);
    // Before `f`: a panic in it may have changed the state all the same.
    snapshot::bump();
    f(&mut guard)
}

/// Run `f` with the state locked for reading (look-ups on hot paths: many threads at once).
/// Never call the vendor inside `f`.
pub fn read<R>(f: impl FnOnce(&State) -> R) -> R {
    let guard = STATE.read().unwrap_or_else(PoisonError::into_inner);
    f(&guard)
}

/// Every lock regcheck's code can hold, taken before `fork()` so that the child does not
/// inherit one held by another thread (the child has only the forking thread).
struct ForkLocks {
    _stderr: std::io::StderrLock<'static>,
    _log_file: Option<MutexGuard<'static, std::fs::File>>,
    _noted: Option<MutexGuard<'static, HashSet<String>>>,
    _init: MutexGuard<'static, ()>,
    _published: MutexGuard<'static, Option<std::sync::Arc<snapshot::Snapshot>>>,
    _state: ShardedLockWriteGuard<'static, State>,
}

/// Held while the [`Runtime`] is created and while a value computed [`once`] is stored, and by
/// the `fork()` handler: a child never inherits a one-time initialisation half done. (A
/// `OnceLock` another thread was initialising when the process forked stays "running" in the
/// child, whose callers then wait forever for a thread the child does not have.)
static INIT: Mutex<()> = Mutex::new(());

/// `cell`'s value, computed by `f` the first time. `f` runs without any lock (it may call
/// the vendor; threads that race may each compute, the first to store wins) and the value is
/// stored under [`INIT`], so a `fork()` never finds the cell half initialised.
pub fn once<T>(cell: &OnceLock<T>, f: impl FnOnce() -> T) -> &T {
    if let Some(v) = cell.get() {
        return v;
    }
    install_fork_handlers();
    let v = f();
    let _init = INIT.lock().unwrap_or_else(PoisonError::into_inner);
    cell.get_or_init(|| v)
}

/// Install the `fork()` handlers, once, before anything they guard is first used; returns
/// only once they are in place (see [`crate::platform::atfork`]).
pub fn install_fork_handlers() {
    static HANDLERS: AtFork = AtFork::new(Some(fork_prepare), Some(fork_parent), Some(fork_child));
    HANDLERS.ensure();
}

thread_local! {
    static FORK_LOCKS: RefCell<Option<ForkLocks>> = const { RefCell::new(None) };
}

/// Live host registrations at the last `fork()`, reported by the child's next call (a fork
/// handler must not log: that takes locks and allocates).
static FORKED_WITH_LIVE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

extern "C" fn fork_prepare() {
    // Always the same order: STATE, the published snapshot, INIT, then the runtime's mutexes, then the log file and
    // stderr (a thread that logs holds only the last two, and takes nothing while holding
    // them; nothing takes STATE while holding INIT).
    let state = STATE.write().unwrap_or_else(PoisonError::into_inner);
    let published = snapshot::lock_published();
    let init = INIT.lock().unwrap_or_else(PoisonError::into_inner);
    let rt = runtime_if_ready();
    let noted = rt.map(|rt| rt.noted.lock().unwrap_or_else(PoisonError::into_inner));
    let log_file = crate::report::lock_log_file();
    let locks = ForkLocks {
        _stderr: std::io::stderr().lock(),
        _log_file: log_file,
        _noted: noted,
        _init: init,
        _published: published,
        _state: state,
    };
    let _ = FORK_LOCKS.try_with(|g| *g.borrow_mut() = Some(locks));
}

extern "C" fn fork_parent() {
    let _ = FORK_LOCKS.try_with(|g| g.borrow_mut().take());
}

extern "C" fn fork_child() {
    let live = FORK_LOCKS
        .try_with(|g| {
            let live = g.borrow().as_ref().map_or(0, |l| l._state.host_regs.len());
            g.borrow_mut().take();
            live
        })
        .unwrap_or(0);
    FORKED_WITH_LIVE.store(live, Ordering::Relaxed);
}

/// Called at the start of each intercepted call: the report a fork handler could not make.
#[inline]
pub fn report_fork() {
    if FORKED_WITH_LIVE.load(Ordering::Relaxed) == 0 {
        return;
    }
    let live = FORKED_WITH_LIVE.swap(0, Ordering::Relaxed);
    if live > 0 {
        log::warn!(
            target: "regcheck",
            "this process was forked with {live} live host registration(s): it inherits regcheck's records, but registered (pinned) pages are shared copy-on-write with the parent; do not use them for DMA in both processes"
        );
    }
}

/// The driver version as regcheck knows it.
#[derive(Debug, Clone)]
pub struct HdkFacts {
    pub text: Option<String>,
    pub version: Option<HdkVersion>,
    /// Where it came from (`REGCHECK_HDK_VERSION`, a version.info path), or why it is unknown.
    pub source: String,
    /// For messages: the version and where it came from, or why it is unknown (made once;
    /// shared by every fact that quotes it, with no copy).
    pub describe: std::sync::Arc<str>,
}

impl HdkFacts {
    fn new(text: Option<String>, source: String) -> HdkFacts {
        let describe = match &text {
            Some(t) => format!("{t} (from {source})"),
            None => source.clone(),
        };
        HdkFacts { version: text.as_deref().and_then(HdkVersion::parse), text, source, describe: describe.into() }
    }
}

/// The driver (HDK) version: `REGCHECK_HDK_VERSION`, else the driver's version.info, else
/// the vendor's `aclsysGetVersionStr("driver")`.
pub fn driver_facts(config: &Config) -> HdkFacts {
    if let Some(t) = &config.hdk_version {
        HdkFacts::new(Some(t.clone()), "REGCHECK_HDK_VERSION".into())
    } else {
        match crate::platform::hdk::read_driver_version() {
            Ok((t, path)) => HdkFacts::new(Some(t), path.display().to_string()),
            // No version.info: the vendor knows (a real installation and the
            // simulator answer the same question).
            Err(e) => match queries::driver_version() {
                Ok(t) => HdkFacts::new(Some(t), "aclsysGetVersionStr(\"driver\")".into()),
                Err(q) => HdkFacts::new(None, format!("{e}; {q}")),
            },
        }
    }
}

/// The CANN release profile: `REGCHECK_CANN_VERSION`, else the vendor's
/// `aclsysGetVersionStr("runtime")`, else the runtime's version.info under the vendor's install
/// roots, else assumed (9.1.0, and no registration path is known from it).
pub fn release_profile(config: &Config) -> crate::platform::release::Profile {
    use crate::platform::release::{read_version_file, version_files, Profile, Source};
    if let Some(p) = config.cann_version.as_deref().and_then(|t| Profile::known(t, Source::Override)) {
        return p;
    }
    let vendor = queries::runtime_version();
    if let Some(p) = vendor.as_deref().ok().and_then(|t| Profile::known(t, Source::Vendor)) {
        return p;
    }
    let files = version_files(&crate::vendor::install_roots());
    if let Some((t, path)) = read_version_file(&files) {
        if let Some(p) = Profile::known(&t, Source::File(path)) {
            return p;
        }
    }
    let why = match vendor {
        Ok(t) => format!("the vendor's runtime version {t:?} is not a release"),
        Err(e) => e.to_string(),
    };
    Profile::assumed(format!(
        "{why}; no {} under the install roots; set REGCHECK_CANN_VERSION",
        crate::platform::release::RUNTIME_VERSION_FILE
    ))
}

/// Configuration and environment, created on the first intercepted call.
pub struct Runtime {
    pub config: Config,
    actions: Vec<AtomicU8>,
    /// Rules whose action was set (REGCHECK_RULES, regcheck_rule_set_action): the setting
    /// wins over a finding's own default.
    set: Vec<AtomicBool>,
    pub page_size: usize,
    pub kernel: KernelFacts,
    /// `REGCHECK_SOC_NAME`, else the vendor's answer once it gave one.
    soc: OnceLock<String>,
    hdk: OnceLock<HdkFacts>,
    profile: OnceLock<crate::platform::release::Profile>,
    /// The driver's pinned-register feature, once asked (see [`Runtime::reg_path`]).
    pin: OnceLock<queries::PinFeature>,
    noted: Mutex<HashSet<String>>,
}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The runtime, created on first use.
#[inline]
pub fn runtime() -> &'static Runtime {
    match RUNTIME.get() {
        Some(rt) => rt,
        None => create_runtime(),
    }
}

#[cold]
#[inline(never)]
fn create_runtime() -> &'static Runtime {
    install_fork_handlers();
    // Created under INIT (it calls no vendor function): a fork waits until it is done.
    let _init = INIT.lock().unwrap_or_else(PoisonError::into_inner);
    RUNTIME.get_or_init(Runtime::init)
}

/// The runtime if it exists already (never creates it).
#[inline]
pub fn runtime_if_ready() -> Option<&'static Runtime> {
    RUNTIME.get()
}

static ERROR_EXITCODE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// `REGCHECK_ERROR_EXITCODE`: runs last at exit (registered first).
extern "C" fn exit_on_errors() {
    let code = ERROR_EXITCODE.load(Ordering::Relaxed);
    let errors = crate::report::error_count();
    if code != 0 && errors > 0 {
        let _ = std::panic::catch_unwind(|| {
            crate::report::write_notice(
                "error",
                &format!(
                    "{errors} error-level finding(s) in this process: exiting with status {code} (REGCHECK_ERROR_EXITCODE)"
                ),
            )
        });
        // SAFETY: ends the process with the status asked for; the other exit handlers ran.
        unsafe { libc::_exit(code) };
    }
}

/// `REGCHECK_SUMMARY=1`: the exit summary even without findings.
static SUMMARY_ALWAYS: AtomicBool = AtomicBool::new(false);

extern "C" fn print_summary() {
    // An exit handler: nothing may unwind out of it, and a closed stderr is not an error.
    let _ = std::panic::catch_unwind(|| {
        if SUMMARY_ALWAYS.load(Ordering::Relaxed) || crate::report::summary_due() {
            crate::report::write_summary(with(|s| s.host_regs.len()))
        }
    });
}

impl Runtime {
    fn init() -> Runtime {
        let (config, warnings) = Config::from_vars_secure(
            std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
            crate::platform::secure::secure_execution(),
        );
        crate::report::init_logger(&config);
        crate::report::set_max_repeats(config.max_repeats);
        for w in &warnings {
            log::warn!(target: "regcheck", "{w}");
        }
        let release =
            config.kernel_release.clone().or_else(crate::platform::kernel::current_release).unwrap_or_default();
        let kernel = KernelFacts {
            version: KernelVersion::parse(&release),
            release: if release.is_empty() { "unknown".into() } else { release },
            pageable_max: config.pageable_kernel_max,
        };
        let actions = config.actions().into_iter().map(|a| AtomicU8::new(a as u8)).collect();
        let set: Vec<AtomicBool> = CATALOGUE.iter().map(|_| AtomicBool::new(false)).collect();
        for (id, _) in &config.rule_overrides {
            set[id.index()].store(true, Ordering::Relaxed);
        }
        let page_size = crate::platform::page_size();
        if config.test_memmap_text {
            crate::platform::memmap::force_text_fallback();
        }
        if let Some(sock_diag) = config.test_peers {
            crate::platform::net::force_way(sock_diag);
        }
        // SAFETY: the exit handlers print and may end the process with the status
        // REGCHECK_ERROR_EXITCODE asks for.
        unsafe {
            if let Some(code) = config.error_exitcode {
                ERROR_EXITCODE.store(code, Ordering::Relaxed);
                libc::atexit(exit_on_errors);
            }
            if config.summary != Some(false) {
                SUMMARY_ALWAYS.store(config.summary == Some(true), Ordering::Relaxed);
                libc::atexit(print_summary);
            }
        }
        let rt = Runtime {
            actions,
            set,
            page_size,
            kernel,
            soc: config.soc_name.clone().map(OnceLock::from).unwrap_or_default(),
            hdk: OnceLock::new(),
            profile: OnceLock::new(),
            pin: OnceLock::new(),
            noted: Mutex::new(HashSet::new()),
            config,
        };
        log::info!(
            target: "regcheck",
            "regcheck {} active: mode={}, log={:?}, rule overrides: {}; kernel {} ({}; pageable memory {} at or below {}), page size {}",
            env!("CARGO_PKG_VERSION"),
            rt.config.mode.as_str(),
            rt.config.log_filter,
            if rt.config.rule_overrides.is_empty() {
                "none".to_string()
            } else {
                rt.config.rule_overrides.iter().map(|(r, a)| format!("{r}={a}")).collect::<Vec<_>>().join(",")
            },
            rt.kernel.release,
            if rt.config.kernel_release.is_some() { "REGCHECK_KERNEL_RELEASE" } else { "uname" },
            if rt.kernel.needs_page_locked() { "is rejected" } else { "is allowed: the kernel is newer than" },
            rt.kernel.threshold_text(),
            rt.page_size
        );
        rt
    }

    /// The mode (`REGCHECK_MODE`).
    pub fn mode(&self) -> Mode {
        self.config.mode
    }

    /// A rule's current action.
    pub fn action(&self, rule: RuleId) -> Action {
        self.actions
            .get(rule.index())
            .and_then(|a| Action::from_u32(a.load(Ordering::Relaxed) as u32))
            .unwrap_or(CATALOGUE[rule.index()].default)
    }

    /// Change a rule's action at run time.
    pub fn set_action(&self, rule: RuleId, action: Action) {
        if let Some(a) = self.actions.get(rule.index()) {
            a.store(action as u8, Ordering::Relaxed);
        }
        if let Some(s) = self.set.get(rule.index()) {
            s.store(true, Ordering::Relaxed);
        }
    }

    /// The action for one finding: the rule's setting when it was set, else the finding's own
    /// default (what the vendor does in its configuration), else the rule's default.
    pub fn action_for(&self, f: &crate::rules::Finding) -> Action {
        let set = self.set.get(f.rule.index()).is_some_and(|s| s.load(Ordering::Relaxed));
        match f.action {
            Some(a) if !set => a,
            _ => self.action(f.rule),
        }
    }

    /// The SoC name: `REGCHECK_SOC_NAME`, else the vendor's `aclrtGetSocName()` (cached once
    /// it answers, so that later calls neither ask the vendor nor allocate; `None` while it
    /// cannot). No lock is held while the vendor runs.
    pub fn soc(&self) -> Option<&str> {
        if let Some(s) = self.soc.get() {
            return Some(s);
        }
        let s = queries::soc_name()?;
        // Stored under INIT, as by `once`, so that a fork never finds the cell half set.
        let first = {
            let _init = INIT.lock().unwrap_or_else(PoisonError::into_inner);
            self.soc.set(s).is_ok()
        };
        if first {
            let s = self.soc.get().map_or("", String::as_str);
            log::info!(target: "regcheck", "SoC {s:?} (from aclrtGetSocName), product family {:?}", crate::rules::products::family(s));
        }
        self.soc.get().map(String::as_str)
    }

    /// The driver (HDK) version: `REGCHECK_HDK_VERSION`, else the driver's version.info, else
    /// the vendor's `aclsysGetVersionStr("driver")`.
    pub fn hdk(&self) -> &HdkFacts {
        once(&self.hdk, || {
            let facts = driver_facts(&self.config);
            log::info!(target: "regcheck", "driver (HDK) version {:?} from {}", facts.text, facts.source);
            facts
        })
    }

    /// The CANN release profile (see [`release_profile`]), found once; the vendor is asked
    /// with no regcheck lock held.
    pub fn profile(&self) -> &crate::platform::release::Profile {
        once(&self.profile, || {
            let p = release_profile(&self.config);
            log::info!(target: "regcheck", "release profile: {}", p.describe());
            p
        })
    }

    /// The host-registration path (`aclrtHostRegisterV2`'s): the release profile's, and on a
    /// release after 9.1 the driver's pinned-register feature, asked on the first need with
    /// the device of that call (`device`, -1 unknown: then not asked, the path stays unknown
    /// for this call), and kept: later calls on other devices reuse the first answer (the
    /// vendor asks per device at device open; devices of one machine share one driver). No
    /// regcheck lock is held while the loader and the driver are asked.
    pub fn reg_path(&self, device: i32) -> crate::platform::release::RegPath {
        let p = self.profile();
        let feature = if p.is_known() && p.release.after_9_1() { self.pin_feature(device) } else { None };
        crate::platform::release::reg_path(p.is_known().then_some(p.release), feature.map(queries::PinFeature::on))
    }

    /// The driver's pinned-register feature: the kept answer, else asked for `device` (not
    /// when it is unknown, nor when the vendor's ACL library cannot be found: `None`, asked
    /// again at the next need).
    fn pin_feature(&self, device: i32) -> Option<queries::PinFeature> {
        if let Some(f) = self.pin.get() {
            return Some(*f);
        }
        let f = queries::pin_register_feature(u32::try_from(device).ok()?)?;
        // Stored under INIT, as by `once`, so that a fork never finds the cell half set.
        let first = {
            let _init = INIT.lock().unwrap_or_else(PoisonError::into_inner);
            self.pin.set(f).is_ok()
        };
        if first {
            log::info!(target: "regcheck", "the driver's pinned-register feature: {}", f.describe());
        }
        self.pin.get().copied()
    }

    /// The driver's pinned-register feature if it was asked already (never asks).
    pub fn pin_feature_asked(&self) -> Option<queries::PinFeature> {
        self.pin.get().copied()
    }

    /// Log `msg` at info level the first time `key` is seen (skipped rules, unknown SoC...).
    pub fn note_once(&self, key: &str, level: log::Level, msg: impl FnOnce() -> String) {
        let first = {
            let mut noted = self.noted.lock().unwrap_or_else(PoisonError::into_inner);
            !noted.contains(key) && noted.insert(key.to_string())
        };
        if first {
            log::log!(target: "regcheck", level, "{}", msg());
        }
    }
}
