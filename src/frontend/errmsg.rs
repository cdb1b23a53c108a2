//! `aclGetRecentErrMsg`: regcheck's message while regcheck rejected the thread's latest call,
//! else the vendor's answer, unchanged (NULL when no vendor library defines it).

use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::vendor::{call_vendor, Library, Symbol};

type ErrMsgFn = unsafe extern "C" fn() -> *const c_char;

static GET_RECENT_ERR_MSG: Symbol = Symbol::new(Library::Acl, c"aclGetRecentErrMsg");

/// What the application's `aclGetRecentErrMsg()` returns.
pub fn recent_error_message() -> *const c_char {
    let ours = catch_unwind(AssertUnwindSafe(crate::report::recent_error_message)).ok().flatten();
    match ours {
        Some(p) => p,
        None => call_vendor!(GET_RECENT_ERR_MSG, ErrMsgFn, std::ptr::null();),
    }
}
