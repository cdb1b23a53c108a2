//! The findings log in regcheck's C API (`include/regcheck.h`): the process's last findings
//! (up to 1024; older ones are dropped and counted), each with a sequence number, so that a
//! test harness can ask what was found since a point in time (the Python module and its pytest
//! plugin read them with `ctypes`).
#![allow(non_camel_case_types)]

use std::ffi::c_char;

use super::api::{copy_str, regcheck_action, regcheck_status};
use super::boundary;
use crate::report::findings::{self, Entry};

/// One finding of the process's findings log, copied out. Strings are NUL-terminated, possibly
/// truncated (the message at 4095 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct regcheck_logged_finding {
    /// 1 for the process's first finding, then 2, 3, ... (never reused; a gap means findings
    /// were dropped from the log).
    pub seq: u64,
    /// The code regcheck returned (rejected), or would return in enforce mode (report mode);
    /// 0 when the call was forwarded.
    pub code: i64,
    /// The kernel thread ID (gettid) of the thread that made the call.
    pub tid: u64,
    /// Numeric rule ID.
    pub rule_id: u32,
    /// The severity: the rule's action in force when it was found (info, warn or error).
    pub severity: regcheck_action,
    /// Whether regcheck rejected the call (the vendor was not called).
    pub rejected: bool,
    /// Textual rule ID, e.g. "ACL-HOSTREG-ALIGN".
    pub rule_name: [c_char; 64],
    /// The intercepted function, e.g. "aclrtHostRegisterV2".
    pub call: [c_char; 128],
    /// The application's frame that made the call, as in the log ("main (app.c:12)"), or ""
    /// (unknown, or not kept: see `regcheck_findings_last_seq`).
    pub call_site: [c_char; 512],
    /// The message as logged (without the frames): the first line (rule, call, what is wrong,
    /// the outcome), then indented lines (why, the fix, the evidence, where to read more).
    pub message: [c_char; 4096],
}

/// Writes `e` into `out`.
///
/// # Safety
/// `out` must be writable.
unsafe fn write_out(e: &Entry, out: *mut regcheck_logged_finding) {
    let mut f = regcheck_logged_finding {
        seq: e.seq,
        code: e.code,
        tid: e.tid,
        rule_id: e.rule as u32,
        severity: e.action.into(),
        rejected: e.rejected,
        rule_name: [0; 64],
        call: [0; 128],
        call_site: [0; 512],
        message: [0; 4096],
    };
    copy_str(&mut f.rule_name, e.rule.name());
    copy_str(&mut f.call, &e.call);
    copy_str(&mut f.call_site, &e.call_site());
    copy_str(&mut f.message, &e.message);
    out.write(f);
}

/// `sizeof(regcheck_logged_finding)`, for bindings that declare the struct themselves (Python
/// `ctypes`) to check their declaration against the library they run with.
#[no_mangle]
pub extern "C" fn regcheck_logged_finding_size() -> usize {
    boundary("regcheck_logged_finding_size", 0, std::mem::size_of::<regcheck_logged_finding>)
}

/// The sequence number of the process's latest finding (0 before the first). Remember it, and
/// later `regcheck_finding_next` from it gives what came since.
///
/// Reading the log (this function or any below) also makes every later finding keep its call
/// site. Before the first read only the findings that are logged keep it (not those beyond
/// `REGCHECK_MAX_REPEATS` for their rule, nor any when logging is off), which spares a call
/// that warns every time the unwinding of its stack. A harness that reads the log calls this
/// once when it starts.
#[no_mangle]
pub extern "C" fn regcheck_findings_last_seq() -> u64 {
    boundary("regcheck_findings_last_seq", 0, findings::last_seq)
}

/// How many findings the log holds now (at most 1024).
#[no_mangle]
pub extern "C" fn regcheck_findings_count() -> usize {
    boundary("regcheck_findings_count", 0, findings::len)
}

/// How many findings were dropped from the log because it was full (the oldest go first).
#[no_mangle]
pub extern "C" fn regcheck_findings_dropped() -> u64 {
    boundary("regcheck_findings_dropped", 0, findings::dropped)
}

/// The finding at `index` of the log (0: the oldest kept). `REGCHECK_STATUS_NOT_FOUND` past
/// the end.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn regcheck_finding_get(index: usize, out: *mut regcheck_logged_finding) -> regcheck_status {
    boundary("regcheck_finding_get", regcheck_status::InternalError, || {
        if out.is_null() {
            return regcheck_status::NullArgument;
        }
        match findings::get(index) {
            Some(e) => {
                write_out(&e, out);
                regcheck_status::Ok
            }
            None => regcheck_status::NotFound,
        }
    })
}

/// The oldest kept finding whose sequence number is above `after_seq`: loop with
/// `after_seq = f.seq` to read everything since a `regcheck_findings_last_seq()`.
/// `REGCHECK_STATUS_NOT_FOUND` when there is none (yet).
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn regcheck_finding_next(after_seq: u64, out: *mut regcheck_logged_finding) -> regcheck_status {
    boundary("regcheck_finding_next", regcheck_status::InternalError, || {
        if out.is_null() {
            return regcheck_status::NullArgument;
        }
        match findings::next_after(after_seq) {
            Some(e) => {
                write_out(&e, out);
                regcheck_status::Ok
            }
            None => regcheck_status::NotFound,
        }
    })
}
