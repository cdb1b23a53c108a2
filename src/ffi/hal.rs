//! The driver's host-registration functions (`libascend_hal.so`), exported under the driver's
//! names and prototypes (`ascend_hal_base.h`): observed, so that regcheck's records hold
//! registrations made past ACL. Each is one call into [`crate::frontend::hal`]. Kept out of
//! `regcheck.h`.
#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc)]

use std::ffi::c_void;

use crate::frontend;

/// `drvError_t halHostRegister(void *srcPtr, UINT64 size, UINT32 flag, UINT32 devid, void **dstPtr)`.
#[no_mangle]
pub unsafe extern "C" fn halHostRegister(
    src: *mut c_void,
    size: u64,
    flag: u32,
    devid: u32,
    dst: *mut *mut c_void,
) -> i32 {
    frontend::hal::hal_host_register(src, size, flag, devid, dst)
}

/// `drvError_t halHostUnregister(void *srcPtr, UINT32 devid)`.
#[no_mangle]
pub unsafe extern "C" fn halHostUnregister(src: *mut c_void, devid: u32) -> i32 {
    frontend::hal::hal_host_unregister(src, devid)
}
