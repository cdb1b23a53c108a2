//! The ACL runtime's host-memory functions, exported under the vendor's names and exact
//! prototypes (the vendor's documented interface). Each is one call into [`crate::frontend::acl`].
//! Kept out of `regcheck.h`: applications take these declarations from `acl/acl_rt.h`.
//!
//! Safety: each function has the vendor's contract (the CANN API reference). regcheck never
//! dereferences the caller's buffers; it reads out-pointers only after the vendor succeeded.
#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc)]

use std::ffi::c_void;

use crate::frontend;

/// `aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag)`.
#[no_mangle]
pub unsafe extern "C" fn aclrtHostRegisterV2(ptr: *mut c_void, size: u64, flag: u32) -> i32 {
    frontend::acl::host_register_v2(ptr, size, flag)
}

/// `aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type, void **devPtr)`.
#[no_mangle]
pub unsafe extern "C" fn aclrtHostRegister(ptr: *mut c_void, size: u64, ty: u32, dev_ptr: *mut *mut c_void) -> i32 {
    frontend::acl::host_register(ptr, size, ty, dev_ptr)
}

/// `aclError aclrtHostUnregister(void *ptr)`.
#[no_mangle]
pub unsafe extern "C" fn aclrtHostUnregister(ptr: *mut c_void) -> i32 {
    frontend::acl::host_unregister(ptr)
}

/// `aclError aclrtHostGetDevicePointer(void *pHost, void **pDevice, uint32_t flag)`.
#[no_mangle]
pub unsafe extern "C" fn aclrtHostGetDevicePointer(p_host: *mut c_void, p_device: *mut *mut c_void, flag: u32) -> i32 {
    frontend::acl::host_get_device_pointer(p_host, p_device, flag)
}

/// `aclError aclrtMallocHost(void **hostPtr, size_t size)`.
#[no_mangle]
pub unsafe extern "C" fn aclrtMallocHost(host_ptr: *mut *mut c_void, size: usize) -> i32 {
    frontend::acl::malloc_host(host_ptr, size)
}

/// `aclError aclrtMallocHostWithCfg(void **ptr, uint64_t size, aclrtMallocConfig *cfg)`.
#[no_mangle]
pub unsafe extern "C" fn aclrtMallocHostWithCfg(host_ptr: *mut *mut c_void, size: u64, cfg: *mut c_void) -> i32 {
    frontend::acl::malloc_host_with_cfg(host_ptr, size, cfg)
}

/// `aclError aclrtFreeHostWithDevSync(void *hostPtr)`.
#[no_mangle]
pub unsafe extern "C" fn aclrtFreeHostWithDevSync(host_ptr: *mut c_void) -> i32 {
    frontend::acl::free_host_with_dev_sync(host_ptr)
}

/// `aclError aclrtFreeHost(void *hostPtr)`.
#[no_mangle]
pub unsafe extern "C" fn aclrtFreeHost(host_ptr: *mut c_void) -> i32 {
    frontend::acl::free_host(host_ptr)
}

/// `aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)`.
#[no_mangle]
pub unsafe extern "C" fn aclrtMalloc(dev_ptr: *mut *mut c_void, size: usize, policy: u32) -> i32 {
    frontend::acl::malloc(dev_ptr, size, policy)
}

/// `aclError aclrtFree(void *devPtr)`.
#[no_mangle]
pub unsafe extern "C" fn aclrtFree(dev_ptr: *mut c_void) -> i32 {
    frontend::acl::free(dev_ptr)
}

/// `aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
/// const aclrtPhysicalMemProp *prop, uint64_t flags)`.
#[no_mangle]
pub unsafe extern "C" fn aclrtMallocPhysical(
    handle: *mut *mut c_void,
    size: usize,
    prop: *const frontend::acl::PhysicalMemProp,
    flags: u64,
) -> i32 {
    frontend::acl::malloc_physical(handle, size, prop, flags)
}

/// `aclError aclrtFreePhysical(aclrtDrvMemHandle handle)`.
#[no_mangle]
pub unsafe extern "C" fn aclrtFreePhysical(handle: *mut c_void) -> i32 {
    frontend::acl::free_physical(handle)
}

/// `aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle,
/// uint64_t flags)`.
#[no_mangle]
pub unsafe extern "C" fn aclrtMapMem(
    vir_ptr: *mut c_void,
    size: usize,
    offset: usize,
    handle: *mut c_void,
    flags: u64,
) -> i32 {
    frontend::acl::map_mem(vir_ptr, size, offset, handle, flags)
}

/// `aclError aclrtUnmapMem(void *virPtr)`.
#[no_mangle]
pub unsafe extern "C" fn aclrtUnmapMem(vir_ptr: *mut c_void) -> i32 {
    frontend::acl::unmap_mem(vir_ptr)
}

/// `aclError aclrtSetDevice(int32_t deviceId)`: forwarded, counted (device lifetime).
#[no_mangle]
pub unsafe extern "C" fn aclrtSetDevice(device_id: i32) -> i32 {
    frontend::acl::set_device(device_id)
}

/// `aclError aclrtResetDevice(int32_t deviceId)`: forwarded; the device's registrations are
/// forgotten when the vendor releases the device.
#[no_mangle]
pub unsafe extern "C" fn aclrtResetDevice(device_id: i32) -> i32 {
    frontend::acl::reset_device(device_id)
}

/// `aclError aclrtResetDeviceForce(int32_t deviceId)`: forwarded; the vendor releases the
/// device at once, and its registrations are forgotten as at the last `aclrtResetDevice`.
#[no_mangle]
pub unsafe extern "C" fn aclrtResetDeviceForce(device_id: i32) -> i32 {
    frontend::acl::reset_device_force(device_id)
}

/// `aclError aclFinalize(void)`: forwarded; every registration is forgotten.
#[no_mangle]
pub unsafe extern "C" fn aclFinalize() -> i32 {
    frontend::acl::finalize()
}
