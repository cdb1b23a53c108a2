//! The driver's host registration called directly: `halHostRegister`, `halHostUnregister`
//! (`libascend_hal.so`; LMCache-Ascend's path on drivers before 25:
//! `halHostRegister(ptr, size, HOST_MEM_MAP_DEV_PCIE_TH, dev, &devPtr)` then `mlock`). Observed,
//! not checked: a successful registration goes into the host registrations, on the device it
//! names, so that a later ACL call on that memory (an overlapping `aclrtHostRegister*`, say) is
//! judged as the driver will judge it; a successful unregistration takes it out.

use std::ffi::c_void;

use super::run;
use crate::state;
use crate::state::registry::{HostReg, HostRegApi};
use crate::vendor::{call_vendor, Library, Symbol};

type HalRegisterFn = unsafe extern "C" fn(*mut c_void, u64, u32, u32, *mut *mut c_void) -> i32;
type HalUnregisterFn = unsafe extern "C" fn(*mut c_void, u32) -> i32;

// Found like the ACL runtime's functions: the next definition after regcheck (the driver's
// libascend_hal.so, which a program that calls these links or has loaded).
static HAL_HOST_REGISTER: Symbol = Symbol::new(Library::Acl, c"halHostRegister");
static HAL_HOST_UNREGISTER: Symbol = Symbol::new(Library::Acl, c"halHostUnregister");

/// `DRV_ERROR_NOT_SUPPORT`: the answer when no driver defines the function.
const DRV_NOT_SUPPORT: i32 = 0xfffe;

/// `drvError_t halHostRegister(void *srcPtr, UINT64 size, UINT32 flag, UINT32 devid, void **dstPtr)`.
///
/// # Safety
/// The driver's contract for this call.
pub unsafe fn hal_host_register(src: *mut c_void, size: u64, flag: u32, devid: u32, dst: *mut *mut c_void) -> i32 {
    run(
        "halHostRegister",
        // where it is made: found before the driver runs (see `acl::check_register`)
        |_| Ok::<usize, i32>(crate::callsite::caller_ip().unwrap_or(0)),
        || call_vendor!(HAL_HOST_REGISTER, HalRegisterFn, DRV_NOT_SUPPORT; src, size, flag, devid, dst),
        |_, site, ret| {
            if *ret != 0 || src.is_null() || size == 0 {
                return;
            }
            let device = devid as i32;
            let base = src as usize;
            // The driver rounds the size up to whole pages.
            let page = crate::platform::page_size() as u64;
            let len = size.div_ceil(page).saturating_mul(page);
            state::with(|s| {
                s.host_unregs.forget(device, base);
                s.host_reg_sites.note(device, base, site);
                s.host_regs.insert(HostReg {
                    device,
                    base,
                    len,
                    flags: flag,
                    api: HostRegApi::Hal,
                    after_reset: false,
                });
            });
        },
    )
}

/// `drvError_t halHostUnregister(void *srcPtr, UINT32 devid)`.
///
/// # Safety
/// The driver's contract for this call.
pub unsafe fn hal_host_unregister(src: *mut c_void, devid: u32) -> i32 {
    run(
        "halHostUnregister",
        |_| Ok::<usize, i32>(crate::callsite::caller_ip().unwrap_or(0)),
        || call_vendor!(HAL_HOST_UNREGISTER, HalUnregisterFn, DRV_NOT_SUPPORT; src, devid),
        |_, site, ret| {
            if *ret != 0 {
                return;
            }
            let (device, base) = (devid as i32, src as usize);
            state::with(|s| {
                if s.host_regs.exact(device, base).is_some_and(|r| r.api == HostRegApi::Hal) {
                    s.host_regs.remove(device, base);
                    s.host_unregs.note(device, base, site);
                }
            });
        },
    )
}
