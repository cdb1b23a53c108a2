//! `aclGetRecentErrMsg`, exported under the vendor's name: after regcheck rejects a call on a
//! thread, that thread's `aclGetRecentErrMsg()` returns regcheck's message (rule ID, the call,
//! what is wrong, the fix) until the thread's next ACL or HIXL call; otherwise the call goes to
//! the vendor's, untouched. Kept out of `regcheck.h`: applications take the declaration from
//! `acl/acl.h`.
//!
//! The returned text is regcheck's thread-local buffer: valid for the life of the thread
//! (later messages reuse it), never freed under the caller.
#![allow(non_snake_case)]

use std::ffi::c_char;

use crate::frontend;

/// `const char *aclGetRecentErrMsg(void)`.
#[no_mangle]
pub extern "C" fn aclGetRecentErrMsg() -> *const c_char {
    frontend::errmsg::recent_error_message()
}
