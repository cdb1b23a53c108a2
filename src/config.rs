//! Configuration: the `REGCHECK_*` environment variables, read once, lazily, on the first
//! intercepted call. Parsing is a pure function of the variables, so it is unit-tested.
//! Unknown `REGCHECK_*` names and invalid values produce warnings, never silence.

use crate::platform::kernel::KernelVersion;
use crate::rules::{self, Action, RuleId};

/// What regcheck does with findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Mode {
    /// Error findings reject the call (the default).
    Enforce = 0,
    /// Nothing is rejected; everything is logged and forwarded.
    Report = 1,
    /// Pure pass-through: no checks, no tracking.
    Off = 2,
}

impl Mode {
    pub fn parse(s: &str) -> Option<Mode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "enforce" | "on" => Some(Mode::Enforce),
            "report" | "warn" => Some(Mode::Report),
            "off" | "disabled" => Some(Mode::Off),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Enforce => "enforce",
            Mode::Report => "report",
            Mode::Off => "off",
        }
    }
}

/// The log filter of `REGCHECK_LOG` (`env_logger` syntax), or why it is not one.
pub fn parse_filter(spec: &str) -> Result<env_filter::Filter, env_filter::ParseError> {
    Ok(env_filter::Builder::new().try_parse(spec)?.build())
}

/// How log lines are written (`REGCHECK_LOG_FORMAT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// `regcheck: <level>: <message>` lines (the default).
    Text,
    /// One JSON object per line (schema in docs/json.md).
    Json,
}

impl LogFormat {
    pub fn parse(s: &str) -> Option<LogFormat> {
        match s.trim().to_ascii_lowercase().as_str() {
            "text" | "" => Some(LogFormat::Text),
            "json" | "jsonl" => Some(LogFormat::Json),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            LogFormat::Text => "text",
            LogFormat::Json => "json",
        }
    }
}

/// Frames shown per finding by default (`REGCHECK_STACK`): the application's call site.
pub const DEFAULT_STACK: usize = 1;
/// The most frames `REGCHECK_STACK` may ask for.
pub const MAX_STACK: usize = 64;

/// Where a forced panic is raised (test-only switch `REGCHECK_TEST_PANIC`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestPanic {
    None,
    /// While checking a call.
    Check,
    /// While recording a call's result.
    Record,
}

/// Every variable regcheck reads, with its one-line description (docs/usage.md and warnings).
pub const VARIABLES: &[(&str, &str)] = &[
    ("REGCHECK_MODE", "enforce (default), report, or off"),
    ("REGCHECK_RULES", "comma-separated ID=action (error, warn, info, off); a trailing * matches a prefix"),
    ("REGCHECK_LOG", "log filter in env_logger syntax (default: warn)"),
    ("REGCHECK_LOG_FILE", "append log lines to this file instead of stderr"),
    ("REGCHECK_LOG_FORMAT", "text (default) or json: one JSON object per line (docs/json.md)"),
    ("REGCHECK_STACK", "frames of the application's stack shown per finding (default 1: the call site; 0: none)"),
    ("REGCHECK_KERNEL_RELEASE", "use this kernel release instead of uname's"),
    ("REGCHECK_PAGEABLE_KERNEL_MAX", "newest kernel that needs page-locked memory (default 5.10)"),
    ("REGCHECK_SOC_NAME", "use this SoC name instead of aclrtGetSocName()"),
    ("REGCHECK_HDK_VERSION", "use this driver (HDK) version instead of version.info"),
    ("REGCHECK_CANN_VERSION", "use this CANN release's profile (9.1.0, 9.2.0) instead of the runtime's version"),
    ("REGCHECK_ACL_LIB", "path of the real ACL runtime library"),
    ("REGCHECK_HIXL_LIB", "path of the real libcann_hixl.so"),
    ("REGCHECK_ADXL_LIB", "path of the real libllm_datadist.so (ADXL)"),
    ("REGCHECK_HCCL_LIB", "path of the real libhcomm.so (HCCL's HcclRegisterGlobalMem)"),
    ("REGCHECK_LARGE_BYTES", "size above which one host registration is reported (default 64G)"),
    ("REGCHECK_HIXL_MAX_REGS", "live registrations allowed per HIXL instance (default 4000)"),
    (
        "REGCHECK_MAX_REPEATS",
        "messages logged per rule (default 100; 0: all); later ones are still enforced and counted",
    ),
    (
        "REGCHECK_SUMMARY",
        "the exit summary (totals, then each rule and call site with its count): by default when there were findings; 1: always; 0: never",
    ),
    (
        "REGCHECK_SUPPRESSIONS",
        "suppression files, colon-separated: findings they match are counted as suppressed, not rejected or logged (docs/usage.md)",
    ),
    ("REGCHECK_GEN_SUPPRESSIONS", "1: print a ready suppression entry under each logged finding"),
    ("REGCHECK_ERROR_EXITCODE", "exit with this status at exit when any error-level finding occurred (for CI)"),
    ("REGCHECK_AUDIT_LOG", "1: the LD_AUDIT module logs each binding it redirects"),
    (
        "REGCHECK_PYTHON_SITES",
        "read by the Python module only: 0 stops it naming the Python caller of ctypes calls (docs/python.md)",
    ),
    ("REGCHECK_BLESS", "test suite only: 1 rewrites what is generated from the code (docs/rules.md, doc samples)"),
    ("REGCHECK_TEST_PANIC", "test only: force a panic inside regcheck (check or record)"),
    ("REGCHECK_TEST_ALLOW_SKIP", "test suite only: tests allowed to skip when the machine lacks what they need"),
    ("REGCHECK_TEST_MEMMAP", "test and benchmark only: maps reads /proc/self/maps as on kernels before 6.11"),
    (
        "REGCHECK_TEST_PEERS",
        "test and benchmark only: fd counts HIXL peers through /proc/self/fd (as where sock_diag netlink is unavailable), diag with sock_diag only",
    ),
];

/// The only variables honoured in a secure-execution process (set-user-ID, set-group-ID, file
/// capabilities): they choose how much is printed to the standard error the caller gave the
/// process, and nothing else. Every other `REGCHECK_*` variable is ignored there: it names a
/// library to load or a file to write (`REGCHECK_ACL_LIB`, `REGCHECK_HIXL_LIB`, `REGCHECK_ADXL_LIB`,
/// `REGCHECK_LOG_FILE`), changes the process's exit status (`REGCHECK_ERROR_EXITCODE`), forces
/// a panic (`REGCHECK_TEST_PANIC`), replaces a detected fact (kernel, SoC, driver version) or
/// changes what is checked (`REGCHECK_MODE`, `REGCHECK_RULES`, thresholds): the caller of a
/// privileged program is not the one whose mistakes regcheck checks, and may not weaken,
/// strengthen or redirect those checks. The program itself can still change rule actions
/// through the C API (`regcheck_rule_set_action`).
pub const SECURE_HONORED: &[&str] =
    &["REGCHECK_LOG", "REGCHECK_MAX_REPEATS", "REGCHECK_SUMMARY", "REGCHECK_GEN_SUPPRESSIONS"];

/// The vendor's variables naming install roots, not searched in a secure-execution process
/// (nor `$HOME/Ascend/...`).
pub const VENDOR_ROOT_VARIABLES: &[&str] = &["ASCEND_INSTALL_PATH", "ASCEND_HOME_PATH"];

/// The log filter when `REGCHECK_LOG` is unset or invalid: warnings and errors.
pub const DEFAULT_LOG_FILTER: &str = "warn";

/// Messages logged per rule before regcheck goes quiet about it (`REGCHECK_MAX_REPEATS`).
pub const DEFAULT_MAX_REPEATS: u64 = 100;

/// The effective configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub mode: Mode,
    /// `(rule, action)` overrides from `REGCHECK_RULES`, applied in order.
    pub rule_overrides: Vec<(RuleId, Action)>,
    pub log_filter: String,
    pub log_file: Option<String>,
    pub log_format: LogFormat,
    /// Application frames shown per finding (0: no call site).
    pub stack: usize,
    pub kernel_release: Option<String>,
    pub pageable_kernel_max: KernelVersion,
    pub soc_name: Option<String>,
    pub hdk_version: Option<String>,
    pub cann_version: Option<String>,
    pub acl_lib: Option<String>,
    pub hixl_lib: Option<String>,
    pub adxl_lib: Option<String>,
    pub large_bytes: u64,
    pub hixl_max_regs: u64,
    /// `REGCHECK_SUMMARY`: `None` (unset) writes the exit summary when there were findings,
    /// `Some(true)` always, `Some(false)` never.
    pub summary: Option<bool>,
    /// `REGCHECK_SUPPRESSIONS`: suppression files.
    pub suppressions: Vec<String>,
    /// `REGCHECK_GEN_SUPPRESSIONS=1`: a ready entry under each logged finding.
    pub gen_suppressions: bool,
    /// Messages logged per rule (0: all).
    pub max_repeats: u64,
    /// Exit status to force at exit when error-level findings occurred.
    pub error_exitcode: Option<i32>,
    pub test_panic: TestPanic,
    /// `REGCHECK_TEST_MEMMAP=maps`: never use the `PROCMAP_QUERY` ioctl.
    pub test_memmap_text: bool,
    /// `REGCHECK_TEST_PEERS`: count HIXL peers only through sock_diag netlink (`Some(true)`,
    /// `diag`) or only through `/proc/self/fd` (`Some(false)`, `fd`); `None`: the cheaper way.
    pub test_peers: Option<bool>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mode: Mode::Enforce,
            rule_overrides: Vec::new(),
            log_filter: DEFAULT_LOG_FILTER.into(),
            log_file: None,
            log_format: LogFormat::Text,
            stack: DEFAULT_STACK,
            kernel_release: None,
            pageable_kernel_max: KernelVersion { major: 5, minor: 10, patch: u32::MAX },
            soc_name: None,
            hdk_version: None,
            cann_version: None,
            acl_lib: None,
            hixl_lib: None,
            adxl_lib: None,
            large_bytes: 64 << 30,
            hixl_max_regs: 4000,
            summary: None,
            suppressions: Vec::new(),
            gen_suppressions: false,
            max_repeats: DEFAULT_MAX_REPEATS,
            error_exitcode: None,
            test_panic: TestPanic::None,
            test_memmap_text: false,
            test_peers: None,
        }
    }
}

/// Parse a byte size: `4096`, `64G`, `64GiB`, `512m`, `1T`.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(digits);
    let n: u64 = num.parse().ok()?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return None,
    };
    n.checked_mul(1u64 << shift)
}

/// A kernel threshold: `5.10` means every 5.10.x.
fn parse_kernel_max(s: &str) -> Option<KernelVersion> {
    let v = KernelVersion::parse(s)?;
    let parts = s.trim().split('.').filter(|p| !p.is_empty()).count();
    Some(if parts <= 2 { KernelVersion { patch: u32::MAX, ..v } } else { v })
}

impl Config {
    /// Build the configuration from `(name, value)` pairs (normally `std::env::vars()`).
    /// Returns the configuration and the warnings to log once the logger is up.
    pub fn from_vars<I, K, V>(vars: I) -> (Config, Vec<String>)
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        Config::from_vars_secure(vars, false)
    }

    /// [`Config::from_vars`] for a process that may run in secure-execution mode: when
    /// `secure`, only [`SECURE_HONORED`] variables are read, the others keep their defaults,
    /// and one warning names every variable that was set and ignored, and why.
    pub fn from_vars_secure<I, K, V>(vars: I, secure: bool) -> (Config, Vec<String>)
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut c = Config::default();
        let mut warnings = Vec::new();
        let mut ignored: Vec<String> = Vec::new();
        let nonempty = |v: &str| {
            let v = v.trim();
            (!v.is_empty()).then(|| v.to_string())
        };
        for (k, v) in vars {
            let (k, v) = (k.as_ref(), v.as_ref());
            if secure && VENDOR_ROOT_VARIABLES.contains(&k) && !v.is_empty() {
                ignored.push(k.to_string());
            }
            if !k.starts_with("REGCHECK_") {
                continue;
            }
            let known = VARIABLES.iter().any(|(n, _)| *n == k);
            if secure && known && !SECURE_HONORED.contains(&k) {
                ignored.push(k.to_string());
                continue;
            }
            match k {
                "REGCHECK_MODE" => match Mode::parse(v) {
                    Some(m) => c.mode = m,
                    None => warnings.push(format!("REGCHECK_MODE={v:?} is not enforce, report or off; using enforce")),
                },
                "REGCHECK_RULES" => {
                    for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                        let Some((pat, act)) = item.split_once('=') else {
                            warnings.push(format!("REGCHECK_RULES: {item:?} is not ID=action; ignored"));
                            continue;
                        };
                        let Some(action) = Action::parse(act) else {
                            warnings.push(format!(
                                "REGCHECK_RULES: {act:?} in {item:?} is not an action (error, warn, info, off); ignored"
                            ));
                            continue;
                        };
                        let ids = rules::matching(pat);
                        if ids.is_empty() {
                            warnings.push(format!("REGCHECK_RULES: {pat:?} matches no rule ID; ignored (see docs/rules.md)"));
                        }
                        c.rule_overrides.extend(ids.into_iter().map(|id| (id, action)));
                    }
                }
                "REGCHECK_LOG" => {
                    if let Some(v) = nonempty(v) {
                        match parse_filter(&v) {
                            Ok(_) => c.log_filter = v,
                            Err(e) => warnings.push(format!(
                                "REGCHECK_LOG={v:?} is not a log filter ({e}); using {DEFAULT_LOG_FILTER}"
                            )),
                        }
                    }
                }
                "REGCHECK_LOG_FILE" => c.log_file = nonempty(v),
                "REGCHECK_LOG_FORMAT" => match LogFormat::parse(v) {
                    Some(f) => c.log_format = f,
                    None => warnings.push(format!("REGCHECK_LOG_FORMAT={v:?} is not text or json; using text")),
                },
                "REGCHECK_STACK" => match v.trim().parse::<usize>() {
                    Ok(n) if n <= MAX_STACK => c.stack = n,
                    _ => warnings.push(format!(
                        "REGCHECK_STACK={v:?} is not a number of frames from 0 to {MAX_STACK}; using {DEFAULT_STACK}"
                    )),
                },
                "REGCHECK_KERNEL_RELEASE" => match nonempty(v) {
                    Some(r) if KernelVersion::parse(&r).is_some() => c.kernel_release = Some(r),
                    _ => warnings.push(format!("REGCHECK_KERNEL_RELEASE={v:?} is not a kernel release; using uname")),
                },
                "REGCHECK_PAGEABLE_KERNEL_MAX" => match parse_kernel_max(v) {
                    Some(kv) => c.pageable_kernel_max = kv,
                    None => warnings.push(format!("REGCHECK_PAGEABLE_KERNEL_MAX={v:?} is not a version like 5.10; using 5.10")),
                },
                "REGCHECK_SOC_NAME" => c.soc_name = nonempty(v),
                "REGCHECK_HDK_VERSION" => match nonempty(v) {
                    Some(h) if crate::platform::hdk::HdkVersion::parse(&h).is_some() => c.hdk_version = Some(h),
                    _ => warnings.push(format!(
                        "REGCHECK_HDK_VERSION={v:?} is not a driver version (25.5.0, 25.3.rc1, ...); reading version.info instead"
                    )),
                },
                "REGCHECK_CANN_VERSION" => match nonempty(v) {
                    Some(r) if crate::platform::release::CannRelease::parse(&r).is_some() => c.cann_version = Some(r),
                    _ => warnings.push(format!(
                        "REGCHECK_CANN_VERSION={v:?} is not a CANN release (9.1.0, 9.2.0, ...); reading the runtime's version instead"
                    )),
                },
                "REGCHECK_ACL_LIB" => c.acl_lib = nonempty(v),
                "REGCHECK_HIXL_LIB" => c.hixl_lib = nonempty(v),
                "REGCHECK_ADXL_LIB" => c.adxl_lib = nonempty(v),
                "REGCHECK_LARGE_BYTES" => match parse_bytes(v) {
                    Some(b) if b > 0 => c.large_bytes = b,
                    _ => warnings.push(format!("REGCHECK_LARGE_BYTES={v:?} is not a size like 64G; using 64G")),
                },
                "REGCHECK_HIXL_MAX_REGS" => match v.trim().parse::<u64>() {
                    Ok(n) if n > 0 => c.hixl_max_regs = n,
                    _ => warnings.push(format!("REGCHECK_HIXL_MAX_REGS={v:?} is not a positive number; using 4000")),
                },
                "REGCHECK_MAX_REPEATS" => match v.trim().parse::<u64>() {
                    Ok(n) => c.max_repeats = n,
                    _ => warnings.push(format!(
                        "REGCHECK_MAX_REPEATS={v:?} is not a number (0 for no limit); using {DEFAULT_MAX_REPEATS}"
                    )),
                },
                "REGCHECK_ERROR_EXITCODE" => match v.trim().parse::<i32>() {
                    Ok(n) if (1..=255).contains(&n) => c.error_exitcode = Some(n),
                    _ => warnings.push(format!("REGCHECK_ERROR_EXITCODE={v:?} is not an exit status from 1 to 255; ignored")),
                },
                "REGCHECK_SUMMARY" => match v.trim().to_ascii_lowercase().as_str() {
                    "1" | "true" | "yes" | "on" => c.summary = Some(true),
                    "0" | "false" | "no" | "off" => c.summary = Some(false),
                    "" | "auto" => c.summary = None,
                    _ => warnings.push(format!(
                        "REGCHECK_SUMMARY={v:?} is not 1 or 0; the summary is written when there were findings"
                    )),
                },
                "REGCHECK_SUPPRESSIONS" => {
                    c.suppressions = v.split(':').map(str::trim).filter(|p| !p.is_empty()).map(String::from).collect()
                }
                "REGCHECK_GEN_SUPPRESSIONS" => c.gen_suppressions = matches!(v.trim(), "1" | "true" | "yes" | "on"),
                "REGCHECK_TEST_PANIC" => {
                    c.test_panic = match v.trim() {
                        "check" => TestPanic::Check,
                        "record" => TestPanic::Record,
                        "" | "0" => TestPanic::None,
                        _ => {
                            warnings.push(format!("REGCHECK_TEST_PANIC={v:?} is not check or record; ignored"));
                            TestPanic::None
                        }
                    }
                }
                "REGCHECK_TEST_MEMMAP" => match v.trim() {
                    "maps" => c.test_memmap_text = true,
                    "" | "auto" => c.test_memmap_text = false,
                    _ => warnings.push(format!("REGCHECK_TEST_MEMMAP={v:?} is not maps or auto; ignored")),
                },
                "REGCHECK_TEST_PEERS" => match v.trim() {
                    "fd" => c.test_peers = Some(false),
                    "diag" => c.test_peers = Some(true),
                    "" | "auto" => c.test_peers = None,
                    _ => warnings.push(format!("REGCHECK_TEST_PEERS={v:?} is not fd, diag or auto; ignored")),
                },
                "REGCHECK_AUDIT_LOG" | "REGCHECK_BLESS" | "REGCHECK_TEST_ALLOW_SKIP" | "REGCHECK_PYTHON_SITES" => {}
                other => {
                    let hint = VARIABLES
                        .iter()
                        .map(|(n, _)| *n)
                        .min_by_key(|n| edit_distance(n, other))
                        .filter(|n| edit_distance(n, other) <= 3)
                        .map(|n| format!(" (did you mean {n}?)"))
                        .unwrap_or_default();
                    warnings.push(format!("{other} is not a regcheck variable{hint}; it has no effect"));
                }
            }
        }
        if !ignored.is_empty() {
            ignored.sort();
            warnings.push(secure_warning(&ignored));
        }
        (c, warnings)
    }

    /// The action of every rule after overrides, in catalogue order.
    pub fn actions(&self) -> Vec<Action> {
        let mut actions: Vec<Action> = rules::CATALOGUE.iter().map(|r| r.default).collect();
        for (id, a) in &self.rule_overrides {
            actions[id.index()] = *a;
        }
        actions
    }
}

/// The one warning of a secure-execution process that had settings to ignore.
fn secure_warning(ignored: &[String]) -> String {
    format!(
        "this process runs in secure-execution mode (set-user-ID, set-group-ID or file capabilities): ignored {}. \
         In a privileged process regcheck loads no library and writes no file its caller names, and the caller \
         cannot change its checks: vendor libraries are searched only in the fixed system roots (not \
         ASCEND_INSTALL_PATH, ASCEND_HOME_PATH or $HOME/Ascend), rules and thresholds keep their defaults; \
         only {} apply",
        ignored.join(", "),
        SECURE_HONORED.join(", ")
    )
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push((prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(vars: &[(&str, &str)]) -> (Config, Vec<String>) {
        Config::from_vars(vars.iter().copied())
    }

    #[test]
    fn defaults() {
        let (c, w) = parse(&[("PATH", "/bin"), ("HOME", "/root")]);
        assert!(w.is_empty());
        assert_eq!(c.mode, Mode::Enforce);
        assert_eq!(c.log_filter, "warn");
        assert_eq!(c.large_bytes, 64 << 30);
        assert!(KernelVersion::parse("5.10.250").unwrap() <= c.pageable_kernel_max);
        assert!(KernelVersion::parse("5.11").unwrap() > c.pageable_kernel_max);
        assert_eq!(c.actions()[RuleId::AclHostregSizePages.index()], Action::Warn);
    }

    #[test]
    fn values() {
        let (c, w) = parse(&[
            ("REGCHECK_MODE", "report"),
            ("REGCHECK_RULES", "ACL-HOSTREG-*=warn, ACL-HOSTREG-ALIGN=error,ACL-DEVPTR-FLAG=off"),
            ("REGCHECK_PAGEABLE_KERNEL_MAX", "5.19"),
            ("REGCHECK_LARGE_BYTES", "1G"),
            ("REGCHECK_HDK_VERSION", "25.5.0"),
            ("REGCHECK_CANN_VERSION", "9.2.0"),
            ("REGCHECK_SOC_NAME", "Ascend910B1"),
            ("REGCHECK_TEST_PANIC", "check"),
            ("REGCHECK_TEST_MEMMAP", "maps"),
            ("REGCHECK_TEST_PEERS", "fd"),
        ]);
        assert!(w.is_empty(), "{w:?}");
        assert!(c.test_memmap_text);
        assert_eq!(c.test_peers, Some(false));
        assert_eq!(c.mode, Mode::Report);
        let a = c.actions();
        assert_eq!(a[RuleId::AclHostregNull.index()], Action::Warn);
        assert_eq!(a[RuleId::AclHostregAlign.index()], Action::Error, "later items win");
        assert_eq!(a[RuleId::AclDevptrFlag.index()], Action::Off);
        assert_eq!(a[RuleId::AclDevptrNull.index()], Action::Error);
        assert!(KernelVersion::parse("5.19.17").unwrap() <= c.pageable_kernel_max);
        assert_eq!(c.large_bytes, 1 << 30);
        assert_eq!(c.test_panic, TestPanic::Check);
        assert_eq!(c.cann_version.as_deref(), Some("9.2.0"));
    }

    #[test]
    fn mistakes_are_reported() {
        let (c, w) = parse(&[
            ("REGCHECK_MOD", "report"),
            ("REGCHECK_MODE", "strict"),
            ("REGCHECK_RULES", "ACL-NOPE=warn,ACL-HOSTREG-NULL=loud,junk"),
            ("REGCHECK_LARGE_BYTES", "lots"),
            ("REGCHECK_HDK_VERSION", "banana"),
            ("REGCHECK_CANN_VERSION", "latest"),
        ]);
        assert_eq!(c.mode, Mode::Enforce);
        assert_eq!(w.len(), 8, "{w:#?}");
        assert_eq!(c.cann_version, None);
        assert!(w[0].contains("did you mean REGCHECK_MODE"), "{}", w[0]);
        assert!(c.rule_overrides.is_empty());
    }

    #[test]
    fn secure_execution_ignores_what_loads_writes_or_changes_checks() {
        let hostile = [
            ("REGCHECK_ACL_LIB", "/tmp/evil.so"),
            ("REGCHECK_HIXL_LIB", "/tmp/evil.so"),
            ("REGCHECK_ADXL_LIB", "/tmp/evil.so"),
            ("REGCHECK_LOG_FILE", "/etc/passwd"),
            ("REGCHECK_MODE", "off"),
            ("REGCHECK_RULES", "*=off"),
            ("REGCHECK_ERROR_EXITCODE", "0"),
            ("REGCHECK_KERNEL_RELEASE", "9.9"),
            ("REGCHECK_SOC_NAME", "Ascend310P1"),
            ("REGCHECK_HDK_VERSION", "99.0.0"),
            ("REGCHECK_CANN_VERSION", "9.2.0"),
            ("REGCHECK_LARGE_BYTES", "1"),
            ("REGCHECK_HIXL_MAX_REGS", "1"),
            ("REGCHECK_PAGEABLE_KERNEL_MAX", "99.0"),
            ("REGCHECK_TEST_PANIC", "check"),
            ("REGCHECK_AUDIT_LOG", "1"),
            ("ASCEND_HOME_PATH", "/tmp/fake"),
            ("ASCEND_INSTALL_PATH", "/tmp/fake"),
            ("HOME", "/tmp/fakehome"),
            ("REGCHECK_LOG", "info"),
            ("REGCHECK_MAX_REPEATS", "3"),
            ("REGCHECK_SUMMARY", "1"),
            ("REGCHECK_SUPPRESSIONS", "/etc/shadow"),
        ];
        let (c, w) = Config::from_vars_secure(hostile, true);
        let d = Config::default();
        assert_eq!(c.mode, Mode::Enforce);
        assert!(c.rule_overrides.is_empty());
        assert_eq!((c.acl_lib, c.hixl_lib, c.adxl_lib, c.log_file), (None, None, None, None));
        assert_eq!(c.error_exitcode, None);
        assert_eq!((c.kernel_release, c.soc_name, c.hdk_version, c.cann_version), (None, None, None, None));
        assert_eq!((c.large_bytes, c.hixl_max_regs), (d.large_bytes, d.hixl_max_regs));
        assert_eq!(c.pageable_kernel_max, d.pageable_kernel_max);
        assert_eq!(c.test_panic, TestPanic::None);
        assert!(c.suppressions.is_empty(), "the environment chooses no file to read");
        // what only chooses how much goes to the caller's stderr still applies
        assert_eq!((c.log_filter.as_str(), c.max_repeats, c.summary), ("info", 3, Some(true)));
        assert_eq!(w.len(), 1, "one warning: {w:#?}");
        for name in ["REGCHECK_ACL_LIB", "REGCHECK_LOG_FILE", "REGCHECK_MODE", "ASCEND_HOME_PATH", "REGCHECK_AUDIT_LOG"]
        {
            assert!(w[0].contains(name), "{name} named: {}", w[0]);
        }
        let list = w[0].split("ignored ").nth(1).and_then(|r| r.split(". ").next()).unwrap_or_default();
        assert!(!list.split(", ").any(|n| SECURE_HONORED.contains(&n) || n == "HOME"), "{list}");
        assert!(w[0].contains("secure-execution"), "{}", w[0]);

        // Nothing set, nothing to say; the same variables outside secure execution are read.
        let (_, w) = Config::from_vars_secure([("HOME", "/root")], true);
        assert!(w.is_empty(), "{w:?}");
        let (c, _) = Config::from_vars_secure(hostile, false);
        assert_eq!(c.acl_lib.as_deref(), Some("/tmp/evil.so"));
        assert_eq!(c.mode, Mode::Off);
    }

    #[test]
    fn every_variable_is_either_honoured_or_ignored_in_secure_execution() {
        for name in SECURE_HONORED {
            assert!(VARIABLES.iter().any(|(n, _)| n == name), "{name} is a variable");
        }
        for (name, _) in VARIABLES {
            let (_, w) = Config::from_vars_secure([(*name, "1")], true);
            assert_eq!(w.is_empty(), SECURE_HONORED.contains(name), "{name}: {w:?}");
        }
    }

    #[test]
    fn log_filters() {
        let (c, w) = parse(&[("REGCHECK_LOG", "info,regcheck=debug")]);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.log_filter, "info,regcheck=debug");
        let (c, w) = parse(&[("REGCHECK_LOG", "warn,regcheck=loud")]);
        assert_eq!(c.log_filter, DEFAULT_LOG_FILTER);
        assert!(w.len() == 1 && w[0].contains("is not a log filter"), "{w:?}");
    }

    #[test]
    fn the_guide_documents_every_variable() {
        let usage = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/usage.md")).unwrap();
        for (name, _) in VARIABLES {
            assert!(usage.contains(&format!("| `{name}` |")), "docs/usage.md does not document {name}");
        }
    }

    #[test]
    fn bytes() {
        assert_eq!(parse_bytes("4096"), Some(4096));
        assert_eq!(parse_bytes("64GiB"), Some(64 << 30));
        assert_eq!(parse_bytes("2t"), Some(2 << 40));
        assert_eq!(parse_bytes("x"), None);
        assert_eq!(parse_bytes("1Q"), None);
    }
}
