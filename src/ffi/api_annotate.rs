//! Annotations in regcheck's C API (`include/regcheck.h`): a program, or the pool allocator
//! inside it, tells regcheck what memory it could not see allocated, in the spirit of NVTX's
//! memory API (`nvtxMemRegionsRegister`) and Valgrind's `VALGRIND_MALLOCLIKE_BLOCK`: "this range
//! is page-locked host memory from `aclrtMallocHost`", "this range is device memory from
//! `aclrtMalloc` with this policy", and "forget it". The rules then judge the range as if
//! regcheck had seen the allocation (the allocations of `src/state`).
//!
//! The header's `REGCHECK_MALLOC_HOST_LIKE_BLOCK`, `REGCHECK_DEVICE_MALLOC_LIKE_BLOCK` and
//! `REGCHECK_FREE_LIKE_BLOCK` macros reach these functions through weak references: where
//! regcheck is not loaded they cost one comparison and do nothing.
#![allow(non_camel_case_types)]

use std::ffi::c_void;

use super::api::regcheck_status;
use super::boundary;
use crate::state;

/// The range `[ptr, ptr + size)` as addresses, or the status that refuses it.
fn range(ptr: *const c_void, size: u64) -> Result<(usize, usize), regcheck_status> {
    if ptr.is_null() {
        return Err(regcheck_status::NullArgument);
    }
    let len = usize::try_from(size).map_err(|_| regcheck_status::InvalidArgument)?;
    if len == 0 || (ptr as usize).checked_add(len).is_none() {
        return Err(regcheck_status::InvalidArgument);
    }
    Ok((ptr as usize, len))
}

/// Declare `[ptr, ptr + size)` page-locked host memory from `aclrtMallocHost` (a whole
/// allocation, or a piece of one that a pool hands out), which regcheck did not see allocated
/// (a vendor-internal call, a library that bypassed regcheck). From now on the rules judge it
/// as `aclrtMallocHost` memory: page-locked on an old kernel, no `ACL_HOST_REG_PINNED`, the
/// host origin HIXL and ADXL want on Atlas A2/A3. A range declared at the same `ptr` again
/// replaces the earlier one. `REGCHECK_STATUS_NULL_ARGUMENT` for a NULL `ptr`,
/// `REGCHECK_STATUS_INVALID_ARGUMENT` for a `size` of 0 or a range past the address space.
///
/// # Safety
/// `ptr` is only recorded and compared, never dereferenced.
#[no_mangle]
pub unsafe extern "C" fn regcheck_annotate_malloc_host(ptr: *const c_void, size: u64) -> regcheck_status {
    boundary("regcheck_annotate_malloc_host", regcheck_status::InternalError, || {
        let (base, len) = match range(ptr, size) {
            Ok(r) => r,
            Err(s) => return s,
        };
        state::with(|s| s.host_allocs.insert(base, len, ()));
        log::debug!(target: "regcheck", "regcheck_annotate_malloc_host(0x{base:x}, {len}): recorded as aclrtMallocHost memory");
        regcheck_status::Ok
    })
}

/// Declare `[ptr, ptr + size)` device memory from `aclrtMalloc` with `policy` (its
/// `aclrtMemMallocPolicy`, e.g. `ACL_MEM_MALLOC_HUGE_ONLY` = 2), which regcheck did not see
/// allocated. From now on the rules judge it as that allocation (the device origin and page
/// size HIXL wants over HCCS). A range declared at the same `ptr` again replaces the earlier
/// one. Statuses as `regcheck_annotate_malloc_host`.
///
/// # Safety
/// `ptr` is only recorded and compared, never dereferenced.
#[no_mangle]
pub unsafe extern "C" fn regcheck_annotate_device_malloc(
    ptr: *const c_void,
    size: u64,
    policy: u32,
) -> regcheck_status {
    boundary("regcheck_annotate_device_malloc", regcheck_status::InternalError, || {
        let (base, len) = match range(ptr, size) {
            Ok(r) => r,
            Err(s) => return s,
        };
        state::with(|s| s.dev_allocs.insert(base, len, policy));
        log::debug!(
            target: "regcheck",
            "regcheck_annotate_device_malloc(0x{base:x}, {len}, policy {policy}): recorded as aclrtMalloc memory"
        );
        regcheck_status::Ok
    })
}

/// Retract what is known of the allocation that starts at `ptr` (declared with
/// `regcheck_annotate_*`, or seen allocated): from now on regcheck judges the range as memory
/// of unknown origin. Call it when the pool takes the piece back. `REGCHECK_STATUS_NOT_FOUND`
/// when regcheck knows no allocation starting at `ptr`.
///
/// # Safety
/// `ptr` is only compared, never dereferenced.
#[no_mangle]
pub unsafe extern "C" fn regcheck_annotate_free(ptr: *const c_void) -> regcheck_status {
    boundary("regcheck_annotate_free", regcheck_status::InternalError, || {
        if ptr.is_null() {
            return regcheck_status::NullArgument;
        }
        let base = ptr as usize;
        let found = state::with(|s| s.host_allocs.remove(base).is_some() | s.dev_allocs.remove(base).is_some());
        if found {
            regcheck_status::Ok
        } else {
            regcheck_status::NotFound
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_ranges_are_judged_as_allocations_until_retracted() {
        // an address no test allocates (the records are the process's)
        let base = 0x7e57_0000_0000usize;
        let p = base as *const c_void;
        // SAFETY: the pointers are only recorded and compared.
        unsafe {
            assert_eq!(regcheck_annotate_malloc_host(std::ptr::null(), 4096), regcheck_status::NullArgument);
            assert_eq!(regcheck_annotate_malloc_host(p, 0), regcheck_status::InvalidArgument);
            assert_eq!(regcheck_annotate_malloc_host(usize::MAX as *const c_void, 2), regcheck_status::InvalidArgument);
            assert_eq!(regcheck_annotate_malloc_host(p, 1 << 20), regcheck_status::Ok);
            assert!(state::read(|s| s.host_allocs.containing_range(base + 4096, 8192).is_some()));
            let d = (base + (1 << 30)) as *const c_void;
            assert_eq!(regcheck_annotate_device_malloc(d, 2 << 20, 2), regcheck_status::Ok);
            assert_eq!(state::read(|s| s.dev_allocs.containing_range(d as usize, 4096).map(|a| a.extra)), Some(2));
            assert_eq!(regcheck_annotate_free(p), regcheck_status::Ok);
            assert_eq!(regcheck_annotate_free(d), regcheck_status::Ok);
            assert_eq!(regcheck_annotate_free(p), regcheck_status::NotFound, "retracted already");
            assert_eq!(regcheck_annotate_free(std::ptr::null()), regcheck_status::NullArgument);
            assert!(state::read(|s| s.host_allocs.containing_range(base, 1).is_none()));
        }
    }
}
