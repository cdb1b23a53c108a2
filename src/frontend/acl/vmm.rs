//! The VMM API (`aclrtMallocPhysical`, `aclrtFreePhysical`, `aclrtMapMem`, `aclrtUnmapMem`):
//! memory mapped with `aclrtMapMem` is device memory to HIXL.

use super::*;

/// `aclrtPhysicalMemProp` (32 bytes: handleType, allocationType, memAttr, location {id, type},
/// reserve); only `memAttr` and `location.type` are read.
#[repr(C)]
pub struct PhysicalMemProp {
    pub handle_type: u32,
    pub allocation_type: u32,
    pub mem_attr: u32,
    pub location_id: u32,
    pub location_type: u32,
    pub reserve: u64,
}

/// `ACL_MEM_LOCATION_TYPE_HOST` and `ACL_MEM_LOCATION_TYPE_HOST_NUMA`.
fn location_is_host(t: u32) -> bool {
    t == 0 || t == 4
}

/// `aclrtMallocPhysical(handle, size, prop, flags)`: forwarded; the handle's properties are
/// kept for the mappings made of it.
///
/// # Safety
/// The vendor's contract for this call: `prop` is read before the call, `*handle` only after
/// the vendor succeeded.
pub unsafe fn malloc_physical(handle: *mut *mut c_void, size: usize, prop: *const PhysicalMemProp, flags: u64) -> i32 {
    run(
        "aclrtMallocPhysical",
        |_| {
            // SAFETY: `prop` is the application's `const aclrtPhysicalMemProp *`.
            Ok((!prop.is_null()).then(|| unsafe {
                VmmAttr { mem_attr: (*prop).mem_attr, host: location_is_host((*prop).location_type) }
            }))
        },
        || call_vendor!(MALLOC_PHYSICAL, MallocPhysicalFn, code::API_NOT_SUPPORT; handle, size, prop, flags),
        |_, attr, ret| {
            let (Some(attr), true, false) = (attr, *ret == code::SUCCESS, handle.is_null()) else { return };
            // SAFETY: the vendor succeeded and wrote the handle.
            let h = unsafe { *handle } as usize;
            state::with(|s| s.phys.insert(h, attr));
        },
    )
}

/// `aclrtFreePhysical(handle)`: forwarded; the handle is forgotten.
///
/// # Safety
/// The vendor's contract for this call.
pub unsafe fn free_physical(handle: *mut c_void) -> i32 {
    run(
        "aclrtFreePhysical",
        |_| Ok(()),
        || call_vendor!(FREE_PHYSICAL, PtrFn, code::API_NOT_SUPPORT; handle),
        |_, (), ret| {
            if *ret == code::SUCCESS {
                state::with(|s| s.phys.remove(&(handle as usize)));
            }
        },
    )
}

/// `aclrtMapMem(virPtr, size, offset, handle, flags)`: forwarded; the mapped range becomes
/// device memory with the handle's properties (huge pages, host or device location).
///
/// # Safety
/// The vendor's contract for this call.
pub unsafe fn map_mem(vir: *mut c_void, size: usize, offset: usize, handle: *mut c_void, flags: u64) -> i32 {
    run(
        "aclrtMapMem",
        |_| Ok(()),
        || call_vendor!(MAP_MEM, MapMemFn, code::API_NOT_SUPPORT; vir, size, offset, handle, flags),
        |_, (), ret| {
            if *ret != code::SUCCESS || vir.is_null() || size == 0 {
                return;
            }
            state::with(|s| {
                // A handle allocated before regcheck saw it: device memory of unknown page size.
                let attr =
                    s.phys.get(&(handle as usize)).copied().unwrap_or(VmmAttr { mem_attr: u32::MAX, host: false });
                s.vmm_maps.insert(vir as usize, size, attr);
            });
        },
    )
}

/// `aclrtUnmapMem(virPtr)`: forwarded; the mapping is forgotten.
///
/// # Safety
/// The vendor's contract for this call.
pub unsafe fn unmap_mem(vir: *mut c_void) -> i32 {
    run(
        "aclrtUnmapMem",
        |_| Ok(()),
        || call_vendor!(UNMAP_MEM, PtrFn, code::API_NOT_SUPPORT; vir),
        |_, (), ret| {
            if *ret == code::SUCCESS {
                state::with(|s| s.vmm_maps.remove(vir as usize));
            }
        },
    )
}
