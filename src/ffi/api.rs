//! regcheck's own C API (`include/regcheck.h`): version, rule catalogue, run-time rule
//! actions, dry-run checks, the thread's last rejection, and the detected environment.
//!
//! Conventions: every function is safe to call at any time from any thread; pointer
//! arguments are checked for NULL; out-arguments are written only on success; strings
//! returned as `const char *` are static unless documented otherwise.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::OnceLock;

use super::boundary;
use crate::config::Mode;
use crate::rules::acl::{RegArgs, RegCall};
use crate::rules::products;
use crate::rules::{self, Action, RuleId, CATALOGUE};
use crate::state;

/// Status of a `regcheck_*` call.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum regcheck_status {
    /// Success.
    Ok = 0,
    /// A required pointer argument was NULL.
    NullArgument = 1,
    /// An argument had an invalid value.
    InvalidArgument = 2,
    /// No rule (or item) matched.
    NotFound = 3,
    /// regcheck failed internally (logged).
    InternalError = 4,
}

/// What regcheck does when a rule finds something.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum regcheck_action {
    /// Not checked.
    Off = 0,
    /// Logged at info level; the call is forwarded.
    Info = 1,
    /// Logged as a warning; the call is forwarded.
    Warn = 2,
    /// Logged as an error; the call is rejected with the rule's vendor code (enforce mode).
    Error = 3,
}

impl From<Action> for regcheck_action {
    fn from(a: Action) -> Self {
        match a {
            Action::Off => regcheck_action::Off,
            Action::Info => regcheck_action::Info,
            Action::Warn => regcheck_action::Warn,
            Action::Error => regcheck_action::Error,
        }
    }
}

/// The mode set by `REGCHECK_MODE`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum regcheck_mode {
    /// Error findings reject the call.
    Enforce = 0,
    /// Nothing is rejected; findings are logged and calls forwarded.
    Report = 1,
    /// Pass-through: no checks.
    Off = 2,
}

/// Product family of the detected SoC.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum regcheck_product {
    /// No SoC name, or one not in regcheck's table.
    Unknown = 0,
    AtlasA2 = 1,
    AtlasA3 = 2,
    Ascend950pr = 3,
    Ascend950dt = 4,
    Atlas200i500a2 = 5,
    AtlasInference = 6,
    AtlasTraining = 7,
}

impl From<products::Family> for regcheck_product {
    fn from(f: products::Family) -> Self {
        use products::Family as F;
        match f {
            F::Unknown => regcheck_product::Unknown,
            F::AtlasA2 => regcheck_product::AtlasA2,
            F::AtlasA3 => regcheck_product::AtlasA3,
            F::Ascend950PR => regcheck_product::Ascend950pr,
            F::Ascend950DT => regcheck_product::Ascend950dt,
            F::Atlas200I500A2 => regcheck_product::Atlas200i500a2,
            F::AtlasInference => regcheck_product::AtlasInference,
            F::AtlasTraining => regcheck_product::AtlasTraining,
        }
    }
}

/// One rule of the catalogue. Strings are static.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct regcheck_rule_info {
    /// Stable numeric ID (never reused).
    pub id: u32,
    /// Stable textual ID, e.g. "ACL-HOSTREG-ALIGN".
    pub name: *const c_char,
    /// The default action.
    pub default_action: regcheck_action,
    /// The action in force now (after REGCHECK_RULES and regcheck_rule_set_action).
    pub action: regcheck_action,
    /// The vendor code returned on rejection (0 for rules that do not reject by default).
    pub vendor_code: i64,
    /// The calls the rule applies to.
    pub calls: *const c_char,
    /// What the rule checks.
    pub summary: *const c_char,
    /// How to fix what it finds.
    pub fix: *const c_char,
    /// Where the rule comes from.
    pub source: *const c_char,
}

/// One finding of a dry-run check. Strings live as long as the report.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct regcheck_finding {
    /// Numeric rule ID.
    pub rule_id: u32,
    /// Textual rule ID (static).
    pub rule_name: *const c_char,
    /// The action in force for this rule.
    pub action: regcheck_action,
    /// The code the call would be rejected with if this finding rejects it.
    pub vendor_code: i64,
    /// The argument at fault (static).
    pub argument: *const c_char,
    /// The full message: rule, call, argument, what is wrong, the fix.
    pub message: *const c_char,
}

/// The environment regcheck detected. Strings are NUL-terminated, possibly truncated.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct regcheck_environment {
    /// Kernel release in use (REGCHECK_KERNEL_RELEASE or uname).
    pub kernel_release: [c_char; 65],
    pub kernel_major: u32,
    pub kernel_minor: u32,
    pub kernel_patch: u32,
    /// The newest kernel that needs page-locked memory ("5.10" by default).
    pub pageable_kernel_max: [c_char; 32],
    /// True when host registration needs page-locked memory on this kernel.
    pub page_locked_required: bool,
    /// Host page size in bytes.
    pub page_size: u64,
    /// SoC name ("" when unknown).
    pub soc_name: [c_char; 64],
    pub product: regcheck_product,
    /// Driver (HDK) version text ("" when unknown).
    pub hdk_version: [c_char; 64],
    /// Whether the HDK version is known and parsed.
    pub hdk_known: bool,
    pub mode: regcheck_mode,
}

/// Opaque result of a dry-run check.
pub struct regcheck_report {
    findings: Vec<(regcheck_finding, CString)>,
}

struct RuleStrings {
    name: CString,
    calls: CString,
    summary: CString,
    fix: CString,
    source: CString,
}

fn rule_strings() -> &'static [RuleStrings] {
    static STRINGS: OnceLock<Vec<RuleStrings>> = OnceLock::new();
    state::once::<Vec<_>>(&STRINGS, || {
        let c = |s: &str| CString::new(s.replace('\0', " ")).unwrap_or_default();
        CATALOGUE
            .iter()
            .map(|r| RuleStrings {
                name: c(r.name),
                calls: c(r.calls),
                summary: c(r.summary),
                fix: c(r.fix),
                source: c(r.source),
            })
            .collect()
    })
}

fn rule_info(id: RuleId) -> regcheck_rule_info {
    let r = id.info();
    let s = &rule_strings()[id.index()];
    regcheck_rule_info {
        id: id as u32,
        name: s.name.as_ptr(),
        default_action: r.default.into(),
        action: state::runtime().action(id).into(),
        vendor_code: r.code.unwrap_or(0),
        calls: s.calls.as_ptr(),
        summary: s.summary.as_ptr(),
        fix: s.fix.as_ptr(),
        source: s.source.as_ptr(),
    }
}

unsafe fn str_arg<'a>(p: *const c_char) -> Option<&'a str> {
    if p.is_null() {
        None
    } else {
        CStr::from_ptr(p).to_str().ok()
    }
}

/// Copies `s` into `dst`, truncated, NUL-terminated.
pub(crate) fn copy_str(dst: &mut [c_char], s: &str) {
    let n = s.len().min(dst.len().saturating_sub(1));
    for (d, b) in dst.iter_mut().zip(s.as_bytes()[..n].iter()) {
        *d = *b as c_char;
    }
    if let Some(d) = dst.get_mut(n) {
        *d = 0;
    }
}

/// regcheck's version, e.g. "0.1.0" (static string).
#[no_mangle]
pub extern "C" fn regcheck_version() -> *const c_char {
    boundary("regcheck_version", std::ptr::null(), || {
        static V: &CStr = match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(v) => v,
            Err(_) => c"?",
        };
        V.as_ptr()
    })
}

/// A static description of a `regcheck_status` value ("ok", "a required pointer argument
/// was NULL", ...). Takes the value as an integer so that any value is safe to pass.
#[no_mangle]
pub extern "C" fn regcheck_status_str(status: u32) -> *const c_char {
    boundary("regcheck_status_str", c"?".as_ptr(), || {
        match status {
            0 => c"ok",
            1 => c"a required pointer argument was NULL",
            2 => c"an argument had an invalid value",
            3 => c"no rule matched",
            4 => c"internal error in regcheck (see the log)",
            _ => c"unknown regcheck_status",
        }
        .as_ptr()
    })
}

/// The number of rules in the catalogue.
#[no_mangle]
pub extern "C" fn regcheck_rule_count() -> usize {
    boundary("regcheck_rule_count", 0, || CATALOGUE.len())
}

/// The rule at `index` (0 .. regcheck_rule_count() - 1), written to `*out`.
///
/// # Safety
/// `out` must be NULL or point to writable memory for one `regcheck_rule_info`.
#[no_mangle]
pub unsafe extern "C" fn regcheck_rule_get(index: usize, out: *mut regcheck_rule_info) -> regcheck_status {
    boundary("regcheck_rule_get", regcheck_status::InternalError, || {
        if out.is_null() {
            return regcheck_status::NullArgument;
        }
        match RuleId::ALL.get(index) {
            Some(id) => {
                *out = rule_info(*id);
                regcheck_status::Ok
            }
            None => regcheck_status::NotFound,
        }
    })
}

/// The rule whose textual ID is `name` (case-insensitive), written to `*out`.
///
/// # Safety
/// `name` must be NULL or a NUL-terminated string; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn regcheck_rule_find(name: *const c_char, out: *mut regcheck_rule_info) -> regcheck_status {
    boundary("regcheck_rule_find", regcheck_status::InternalError, || {
        if name.is_null() || out.is_null() {
            return regcheck_status::NullArgument;
        }
        match str_arg(name).and_then(RuleId::from_name) {
            Some(id) => {
                *out = rule_info(id);
                regcheck_status::Ok
            }
            None => regcheck_status::NotFound,
        }
    })
}

/// Set the action of the rules matching `pattern` (an ID, or a prefix ending in `*`),
/// for the whole process, from now on. `action` is a `regcheck_action` value (taken as an
/// integer so that an invalid value is reported, not undefined behaviour).
///
/// # Safety
/// `pattern` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn regcheck_rule_set_action(pattern: *const c_char, action: u32) -> regcheck_status {
    boundary("regcheck_rule_set_action", regcheck_status::InternalError, || {
        let Some(p) = str_arg(pattern) else { return regcheck_status::NullArgument };
        let Some(a) = Action::from_u32(action) else { return regcheck_status::InvalidArgument };
        let ids = rules::matching(p);
        if ids.is_empty() {
            return regcheck_status::NotFound;
        }
        let rt = state::runtime();
        for id in ids {
            rt.set_action(id, a);
            log::info!(target: "regcheck", "rule {id} set to {a} by regcheck_rule_set_action");
        }
        regcheck_status::Ok
    })
}

/// The mode in force (REGCHECK_MODE).
#[no_mangle]
pub extern "C" fn regcheck_get_mode() -> regcheck_mode {
    boundary("regcheck_get_mode", regcheck_mode::Enforce, || match state::runtime().mode() {
        Mode::Enforce => regcheck_mode::Enforce,
        Mode::Report => regcheck_mode::Report,
        Mode::Off => regcheck_mode::Off,
    })
}

/// Dry run of `aclrtHostRegisterV2(ptr, size, flag)`: every finding, without logging,
/// without registering and without calling the vendor's registration. The vendor is still
/// asked for the current context, device and SoC. `*out` receives a report to release
/// with `regcheck_report_free` (an empty report means the call would pass).
///
/// # Safety
/// `out` must be NULL or writable. `ptr` is only compared and looked up, never dereferenced.
#[no_mangle]
pub unsafe extern "C" fn regcheck_check_host_register(
    ptr: *const c_void,
    size: u64,
    flag: u32,
    out: *mut *mut regcheck_report,
) -> regcheck_status {
    boundary("regcheck_check_host_register", regcheck_status::InternalError, || {
        if out.is_null() {
            return regcheck_status::NullArgument;
        }
        let rt = state::runtime();
        let a = RegArgs { call: RegCall::V2 { flag }, ptr: ptr as usize, size };
        let (findings, _) = crate::frontend::acl::register_findings(rt, &a);
        let args = format!("ptr=0x{:x}, size={size}, flag=0x{flag:x}", ptr as usize);
        let findings = findings
            .iter()
            .filter(|f| rt.action_for(f) != Action::Off)
            .map(|f| {
                let msg =
                    crate::report::format_finding("aclrtHostRegisterV2", &args, f, crate::report::Outcome::DryRun);
                let msg = CString::new(msg.replace('\0', " ")).unwrap_or_default();
                let s = &rule_strings()[f.rule.index()];
                let arg: &'static CStr = match f.arg {
                    "ptr" => c"ptr",
                    "size" => c"size",
                    "flag" => c"flag",
                    _ => c"(environment)",
                };
                let finding = regcheck_finding {
                    rule_id: f.rule as u32,
                    rule_name: s.name.as_ptr(),
                    action: rt.action_for(f).into(),
                    vendor_code: f.reject_code(),
                    argument: arg.as_ptr(),
                    message: std::ptr::null(),
                };
                (finding, msg)
            })
            .collect();
        *out = Box::into_raw(Box::new(regcheck_report { findings }));
        regcheck_status::Ok
    })
}

/// The number of findings in a report (0 for NULL).
///
/// # Safety
/// `report` must be NULL or a report from `regcheck_check_host_register` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn regcheck_report_count(report: *const regcheck_report) -> usize {
    boundary("regcheck_report_count", 0, || report.as_ref().map_or(0, |r| r.findings.len()))
}

/// Finding `index` of a report, written to `*out`; its strings live as long as the report.
///
/// # Safety
/// `report` must be NULL or a live report; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn regcheck_report_get(
    report: *const regcheck_report,
    index: usize,
    out: *mut regcheck_finding,
) -> regcheck_status {
    boundary("regcheck_report_get", regcheck_status::InternalError, || {
        let (Some(r), false) = (report.as_ref(), out.is_null()) else { return regcheck_status::NullArgument };
        match r.findings.get(index) {
            Some((f, msg)) => {
                *out = regcheck_finding { message: msg.as_ptr(), ..*f };
                regcheck_status::Ok
            }
            None => regcheck_status::NotFound,
        }
    })
}

/// Release a report (NULL is ignored).
///
/// # Safety
/// `report` must be NULL or a report not yet freed.
#[no_mangle]
pub unsafe extern "C" fn regcheck_report_free(report: *mut regcheck_report) {
    boundary("regcheck_report_free", (), || {
        if !report.is_null() {
            drop(Box::from_raw(report));
        }
    })
}

/// Copy the calling thread's last rejection message into `buf` (at most `len` bytes
/// including the NUL; truncated if needed). Returns the message's full length, 0 when this
/// thread has had no rejection. `buf` may be NULL to ask for the length.
///
/// # Safety
/// `buf` must be NULL or writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn regcheck_last_rejection(buf: *mut c_char, len: usize) -> usize {
    boundary("regcheck_last_rejection", 0, || {
        let msg = crate::report::last_rejection();
        if !buf.is_null() && len > 0 {
            copy_str(std::slice::from_raw_parts_mut(buf, len), &msg);
        }
        msg.len()
    })
}

/// The environment regcheck detected (kernel, page size, SoC, driver version, mode).
/// The SoC is asked of the vendor (aclrtGetSocName) unless REGCHECK_SOC_NAME is set.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn regcheck_environment_get(out: *mut regcheck_environment) -> regcheck_status {
    boundary("regcheck_environment_get", regcheck_status::InternalError, || {
        if out.is_null() {
            return regcheck_status::NullArgument;
        }
        let rt = state::runtime();
        let mut env = regcheck_environment {
            kernel_release: [0; 65],
            kernel_major: 0,
            kernel_minor: 0,
            kernel_patch: 0,
            pageable_kernel_max: [0; 32],
            page_locked_required: rt.kernel.needs_page_locked(),
            page_size: rt.page_size as u64,
            soc_name: [0; 64],
            product: regcheck_product::Unknown,
            hdk_version: [0; 64],
            hdk_known: false,
            mode: regcheck_get_mode(),
        };
        copy_str(&mut env.kernel_release, &rt.kernel.release);
        if let Some(v) = rt.kernel.version {
            (env.kernel_major, env.kernel_minor, env.kernel_patch) = (v.major, v.minor, v.patch);
        }
        copy_str(&mut env.pageable_kernel_max, &rt.kernel.threshold_text());
        if let Some(soc) = rt.soc() {
            copy_str(&mut env.soc_name, soc);
            env.product = products::family(soc).into();
        }
        let hdk = rt.hdk();
        if let Some(t) = &hdk.text {
            copy_str(&mut env.hdk_version, t);
        }
        env.hdk_known = hdk.version.is_some();
        *out = env;
        regcheck_status::Ok
    })
}

/// The number of live host registrations regcheck tracks (all devices).
#[no_mangle]
pub extern "C" fn regcheck_live_host_registrations() -> usize {
    boundary("regcheck_live_host_registrations", 0, || state::with(|s| s.host_regs.len()))
}

/// The number of live HIXL registrations regcheck tracks: every `hixl::Hixl` instance's and
/// every `HixlCS` server's and client's.
#[no_mangle]
pub extern "C" fn regcheck_live_hixl_registrations() -> usize {
    boundary("regcheck_live_hixl_registrations", 0, || {
        state::read(|s| {
            let h = &s.hixl;
            h.instances.values().map(|i| i.regs.len()).sum::<usize>()
                + h.servers.values().chain(h.clients.values()).map(|e| e.regs.len()).sum::<usize>()
        })
    })
}

/// One frame of the application's stack (the call site of a rejected call is frame 0).
/// Strings are NUL-terminated, possibly truncated; empty when unknown.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct regcheck_call_site {
    /// The function, demangled ("register_buffers"), or "".
    pub function: [c_char; 256],
    /// The source file from the debug information, or "".
    pub file: [c_char; 512],
    /// The line of the call, 0 when unknown.
    pub line: u32,
    /// The executable or shared library the frame is in.
    pub object: [c_char; 512],
    /// The return address in the frame.
    pub address: usize,
    /// `address` relative to the object's load base.
    pub offset: usize,
    /// Sanitizer style: "register_buffers (kv_pool.cpp:118)".
    pub text: [c_char; 512],
}

/// Frame `index` (0: the call site) of the application's stack at the calling thread's last
/// rejection: the first frame outside regcheck and the vendor libraries, then its callers
/// (as many as REGCHECK_STACK asks, at least 1). `REGCHECK_STATUS_NOT_FOUND` when the thread
/// has no rejection or the stack has no such frame.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn regcheck_last_rejection_site(index: usize, out: *mut regcheck_call_site) -> regcheck_status {
    boundary("regcheck_last_rejection_site", regcheck_status::InternalError, || {
        if out.is_null() {
            return regcheck_status::NullArgument;
        }
        let sites = crate::report::last_rejection_sites();
        let Some(s) = sites.get(index) else { return regcheck_status::NotFound };
        let mut site = regcheck_call_site {
            function: [0; 256],
            file: [0; 512],
            line: s.line.unwrap_or(0),
            object: [0; 512],
            address: s.address,
            offset: s.offset,
            text: [0; 512],
        };
        copy_str(&mut site.function, s.function.as_deref().unwrap_or(""));
        copy_str(&mut site.file, s.file.as_deref().unwrap_or(""));
        copy_str(&mut site.object, s.object.as_deref().unwrap_or(""));
        copy_str(&mut site.text, &s.text());
        *out = site;
        regcheck_status::Ok
    })
}

/// The numeric ID of the rule behind the calling thread's last rejection (0 when none).
#[no_mangle]
pub extern "C" fn regcheck_last_rejection_rule() -> u32 {
    boundary("regcheck_last_rejection_rule", 0, || crate::report::last_rejection_rule().map_or(0, |r| r as u32))
}

/// The minimal wrong and right calls of the rule whose textual ID is `name`
/// (case-insensitive): static strings, C for ACL rules and C++ for HIXL ones.
///
/// # Safety
/// `name` must be NULL or a NUL-terminated string; `wrong` and `right` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn regcheck_rule_example(
    name: *const c_char,
    wrong: *mut *const c_char,
    right: *mut *const c_char,
) -> regcheck_status {
    boundary("regcheck_rule_example", regcheck_status::InternalError, || {
        if name.is_null() || wrong.is_null() || right.is_null() {
            return regcheck_status::NullArgument;
        }
        let Some(id) = str_arg(name).and_then(RuleId::from_name) else { return regcheck_status::NotFound };
        let Some((w, r)) = example_strings().get(id.index()) else { return regcheck_status::NotFound };
        *wrong = w.as_ptr();
        *right = r.as_ptr();
        regcheck_status::Ok
    })
}

fn example_strings() -> &'static [(CString, CString)] {
    static STRINGS: OnceLock<Vec<(CString, CString)>> = OnceLock::new();
    state::once::<Vec<_>>(&STRINGS, || {
        let c = |s: &str| CString::new(s.replace('\0', " ")).unwrap_or_default();
        RuleId::ALL
            .iter()
            .map(|id| match rules::examples::of(*id) {
                Some(e) => (c(e.wrong), c(e.right)),
                None => (CString::default(), CString::default()),
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::MaybeUninit;

    fn info(name: &CStr) -> regcheck_rule_info {
        let mut out = MaybeUninit::uninit();
        // SAFETY: a NUL-terminated name and a writable out-pointer.
        let status = unsafe { regcheck_rule_find(name.as_ptr(), out.as_mut_ptr()) };
        assert_eq!(status, regcheck_status::Ok, "{name:?}");
        // SAFETY: written on Ok.
        unsafe { out.assume_init() }
    }

    /// The findings of a dry run: (rule, vendor code, message).
    fn dry_run(ptr: usize, size: u64, flag: u32) -> Vec<(String, i64, String)> {
        let text = |p: *const c_char| {
            // SAFETY: the report's strings are NUL-terminated and live until it is freed.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        };
        let mut report = std::ptr::null_mut();
        // SAFETY: a writable out-pointer; the pointer is only looked up.
        let status = unsafe { regcheck_check_host_register(ptr as *const c_void, size, flag, &mut report) };
        assert_eq!(status, regcheck_status::Ok);
        let mut found = Vec::new();
        // SAFETY: a live report, indexes below its count, a writable out-pointer.
        unsafe {
            for i in 0..regcheck_report_count(report) {
                let mut f = MaybeUninit::uninit();
                assert_eq!(regcheck_report_get(report, i, f.as_mut_ptr()), regcheck_status::Ok);
                let f = f.assume_init();
                found.push((text(f.rule_name), f.vendor_code, text(f.message)));
            }
            regcheck_report_free(report);
        }
        found
    }

    fn has(found: &[(String, i64, String)], rule: &str) -> bool {
        found.iter().any(|(r, _, _)| r == rule)
    }

    #[test]
    fn the_catalogue_gives_each_rules_rejection_code() {
        assert_eq!(info(c"ACL-HOSTREG-ALIGN").vendor_code, 100000);
        assert_eq!(info(c"ACL-HOSTREG-NO-CONTEXT").vendor_code, 107002);
        assert_eq!(info(c"ACL-HOSTREG-LARGE").vendor_code, 0, "a warning rejects nothing");
    }

    #[test]
    fn every_action_value_set_through_the_c_api_is_in_force() {
        let rule = c"ACL-HOSTREG-PINNED-ONLY";
        let default = info(rule).default_action;
        for action in [regcheck_action::Off, regcheck_action::Info, regcheck_action::Warn, regcheck_action::Error] {
            // SAFETY: a NUL-terminated pattern.
            assert_eq!(unsafe { regcheck_rule_set_action(rule.as_ptr(), action as u32) }, regcheck_status::Ok);
            assert_eq!(info(rule).action, action);
        }
        // SAFETY: as above.
        unsafe {
            assert_eq!(regcheck_rule_set_action(rule.as_ptr(), 4), regcheck_status::InvalidArgument);
            assert_eq!(regcheck_rule_set_action(rule.as_ptr(), default as u32), regcheck_status::Ok);
        }
        assert_eq!(info(rule).action, default);
    }

    #[test]
    fn dry_run_findings_carry_the_code_and_the_fix() {
        let align = crate::platform::page_size().max(4096);
        let buf = vec![0u8; 4 * align];
        let base = (buf.as_ptr() as usize).div_ceil(align) * align;
        let found = dry_run(base + 16, align as u64, 0x2);
        let (_, code, message) = found.iter().find(|(r, _, _)| r == "ACL-HOSTREG-ALIGN").expect("misaligned");
        assert_eq!(*code, 100000);
        assert!(message.contains(&format!("register from the next boundary (0x{:x})", base + align)), "{message}");
        // a real address and a large size do not wrap
        assert!(!has(&dry_run(base, 1 << 20, 0x2), "ACL-HOSTREG-RANGE-OVERFLOW"));
        // a range whose last byte is the last address does not wrap; one byte more does (its
        // end, 2^64, is no address)
        let near_top = usize::MAX - 8191;
        assert!(!has(&dry_run(near_top, 8191, 0x2), "ACL-HOSTREG-RANGE-OVERFLOW"));
        assert!(has(&dry_run(near_top, 8192, 0x2), "ACL-HOSTREG-RANGE-OVERFLOW"));
        // one registration of exactly the large threshold (default 64 GiB) is not reported
        assert!(!has(&dry_run(base, 64 << 30, 0x2), "ACL-HOSTREG-LARGE"));
        assert!(has(&dry_run(base, (64 << 30) + 4096, 0x2), "ACL-HOSTREG-LARGE"));
    }
}
